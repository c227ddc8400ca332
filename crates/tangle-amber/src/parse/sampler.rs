//! `SAMPLER name [MAG_FILTER f] [MIN_FILTER f] [MIPMAP_MODE f] [ADDRESS_MODE_U m]
//! [ADDRESS_MODE_V m] [ADDRESS_MODE_W m] [BORDER_COLOR c] [MIN_LOD v] [MAX_LOD v]
//! [NORMALIZED_COORDS | UNNORMALIZED_COORDS] [COMPARE on|off] [COMPARE_OP op]` (upstream's
//! amber_script.md "Samplers").

use super::command::parse_on_off;
use super::cursor::Tok;
use super::{declare, number, Parser};
use crate::error::{AmberError, Location};
use crate::script::{AddressMode, BorderColor, Filter, Sampler, SamplerState};

fn filter(tok: Tok<'_>) -> Result<Filter, AmberError> {
    match tok.text {
        "nearest" => Ok(Filter::Nearest),
        "linear" => Ok(Filter::Linear),
        t => Err(AmberError::new(tok.at, format!("unknown filter '{t}'"))),
    }
}

fn address_mode(tok: Tok<'_>) -> Result<AddressMode, AmberError> {
    Ok(match tok.text {
        "repeat" => AddressMode::Repeat,
        "mirrored_repeat" => AddressMode::MirroredRepeat,
        "clamp_to_edge" => AddressMode::ClampToEdge,
        "clamp_to_border" => AddressMode::ClampToBorder,
        "mirror_clamp_to_edge" => AddressMode::MirrorClampToEdge,
        t => {
            return Err(AmberError::new(
                tok.at,
                format!("unknown address mode '{t}'"),
            ))
        }
    })
}

fn border_color(tok: Tok<'_>) -> Result<BorderColor, AmberError> {
    Ok(match tok.text {
        "float_transparent_black" => BorderColor::FloatTransparentBlack,
        "int_transparent_black" => BorderColor::IntTransparentBlack,
        "float_opaque_black" => BorderColor::FloatOpaqueBlack,
        "int_opaque_black" => BorderColor::IntOpaqueBlack,
        "float_opaque_white" => BorderColor::FloatOpaqueWhite,
        "int_opaque_white" => BorderColor::IntOpaqueWhite,
        t => {
            return Err(AmberError::new(
                tok.at,
                format!("unknown border color '{t}'"),
            ))
        }
    })
}

impl Parser<'_> {
    pub(super) fn sampler(&mut self, at: Location) -> Result<(), AmberError> {
        let name = self.cursor.expect("a sampler name")?;
        let mut s = SamplerState::default();
        while let Some(tok) = self.cursor.next() {
            let value = |p: &mut Self| p.cursor.expect("a value");
            match tok.text {
                "MAG_FILTER" => s.mag_filter = filter(value(self)?)?,
                "MIN_FILTER" => s.min_filter = filter(value(self)?)?,
                "MIPMAP_MODE" => s.mipmap_mode = filter(value(self)?)?,
                "ADDRESS_MODE_U" => s.address[0] = address_mode(value(self)?)?,
                "ADDRESS_MODE_V" => s.address[1] = address_mode(value(self)?)?,
                "ADDRESS_MODE_W" => s.address[2] = address_mode(value(self)?)?,
                "BORDER_COLOR" => s.border = border_color(value(self)?)?,
                "MIN_LOD" => s.min_lod = number(value(self)?)?.as_f64() as f32,
                "MAX_LOD" => s.max_lod = number(value(self)?)?.as_f64() as f32,
                "NORMALIZED_COORDS" => s.normalized = true,
                "UNNORMALIZED_COORDS" => s.normalized = false,
                "COMPARE" => s.compare = parse_on_off(value(self)?)?,
                "COMPARE_OP" => {
                    value(self)?;
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unexpected '{t}' in SAMPLER"),
                    ))
                }
            }
        }
        if s.max_lod < s.min_lod {
            return Err(AmberError::new(at, "MAX_LOD is less than MIN_LOD"));
        }
        declare(
            &mut self.names.samplers,
            name,
            "sampler",
            self.script.samplers.len(),
        )?;
        self.script.samplers.push(Sampler {
            name: name.text.to_string(),
            state: s,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse;
    use crate::script::{AddressMode, BorderColor, Filter, SamplerState};

    #[test]
    fn samplers_take_upstream_defaults_and_every_option() {
        let s = parse(
            "SAMPLER a\nSAMPLER b MAG_FILTER linear MIN_FILTER linear ADDRESS_MODE_U clamp_to_border \
ADDRESS_MODE_V mirrored_repeat ADDRESS_MODE_W mirror_clamp_to_edge BORDER_COLOR int_opaque_white \
MIN_LOD 0.5 MAX_LOD 2 UNNORMALIZED_COORDS",
        )
        .expect("parses");
        assert_eq!(s.samplers[0].state, SamplerState::default());
        let b = s.samplers[1].state;
        assert_eq!(
            (b.mag_filter, b.min_filter),
            (Filter::Linear, Filter::Linear)
        );
        assert_eq!(
            b.address,
            [
                AddressMode::ClampToBorder,
                AddressMode::MirroredRepeat,
                AddressMode::MirrorClampToEdge
            ]
        );
        assert_eq!(b.border, BorderColor::IntOpaqueWhite);
        assert_eq!((b.min_lod, b.max_lod, b.normalized), (0.5, 2.0, false));
        for (text, words) in [
            ("SAMPLER a MAG_FILTER cubic", "unknown filter"),
            ("SAMPLER a ADDRESS_MODE_U wrap", "unknown address mode"),
            (
                "SAMPLER a MIN_LOD 2 MAX_LOD 1",
                "MAX_LOD is less than MIN_LOD",
            ),
            ("SAMPLER a\nSAMPLER a", "a"),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.message.contains(words), "{text}: {}", e.message);
        }
    }
}
