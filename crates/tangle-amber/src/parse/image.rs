//! `IMAGE name (FORMAT fmt | DATA_TYPE type) [MIP_LEVELS 1] [SAMPLES 1] (DIM_1D | DIM_2D |
//! DIM_3D) WIDTH w [HEIGHT h [DEPTH d]] [TILING optimal|linear] [initializer]` (upstream's
//! amber_script.md "Images"): a buffer whose bytes are the texels, x fastest, then y, then z,
//! in the format's layout. The initializer is `FILL v`, `SERIES_FROM s INC_BY i` or
//! `DATA ... END`; without one the texels are zero.

use super::{declare, uint, Parser};
use crate::error::{AmberError, Location};
use crate::layout::{ElementLayout, Layout};
use crate::script::{Buffer, ImageShape};
use crate::types::{DataType, Scalar};

/// The Vulkan format name of a `DATA_TYPE` used for an image (`vec4<float>` is
/// `R32G32B32A32_SFLOAT`), as upstream derives it; matrices have none.
pub fn format_of_data_type(ty: &DataType) -> Option<String> {
    if ty.is_matrix() {
        return None;
    }
    let bits = ty.scalar.size() * 8;
    let numeric = match ty.scalar {
        s if s.is_float() => "SFLOAT",
        s if s.is_signed_int() => "SINT",
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => "UINT",
        _ => return None,
    };
    let channels: String = ["R", "G", "B", "A"]
        .iter()
        .take(usize::from(ty.rows))
        .map(|c| format!("{c}{bits}"))
        .collect();
    Some(format!("{channels}_{numeric}"))
}

impl Parser<'_> {
    pub(super) fn image(&mut self, at: Location) -> Result<(), AmberError> {
        let name = self.cursor.expect("an image name")?;
        let kind = self.cursor.expect("FORMAT or DATA_TYPE")?;
        let type_tok = self.cursor.expect("a format or type")?;
        let (data_type, format) = match kind.text {
            // The format table of buffers (`crate::format`) gives the texels' element type.
            "FORMAT" => match crate::format::buffer_type(type_tok.text) {
                Some(Ok(ty)) => (Some(ty), Some(type_tok.text.to_string())),
                Some(Err(why)) => return Err(AmberError::unsupported(type_tok.at, why)),
                None => (None, None),
            },
            "DATA_TYPE" => {
                let ty = DataType::parse(type_tok.text);
                (ty, ty.as_ref().and_then(format_of_data_type))
            }
            t => {
                return Err(AmberError::new(
                    kind.at,
                    format!("expected FORMAT or DATA_TYPE, found '{t}'"),
                ))
            }
        };
        let (Some(data_type), Some(format)) = (data_type, format) else {
            return Err(AmberError::new(
                type_tok.at,
                format!("unknown or unsupported image format '{}'", type_tok.text),
            ));
        };
        // Texels are tightly packed: the format's layout, never std140/std430 padding.
        let data_type = DataType {
            packed: true,
            ..data_type
        };
        let element = ElementLayout::new(&data_type, Layout::Std430);
        let mut dimensions = 0u8;
        let mut extent = [1u32; 3];
        let mut sizes = [false; 3];
        let bytes = loop {
            let Some(tok) = self.cursor.peek() else {
                break None;
            };
            if ["DATA", "FILL", "SERIES_FROM"].contains(&tok.text) {
                break Some(tok);
            }
            self.cursor.next();
            match tok.text {
                "MIP_LEVELS" | "SAMPLES" => {
                    let n: u32 = uint(self.cursor.expect("a count")?, tok.text)?;
                    if n != 1 {
                        // Valid upstream, outside tangle's subset: exit 77.
                        return Err(AmberError::unsupported(
                            tok.at,
                            format!("{} {n} is not supported (only 1)", tok.text),
                        ));
                    }
                }
                "TILING" => {
                    self.cursor.expect("optimal or linear")?;
                }
                "DIM_1D" | "DIM_2D" | "DIM_3D" => {
                    dimensions = tok.text.as_bytes().get(4).map_or(0, |d| d - b'0');
                }
                "WIDTH" | "HEIGHT" | "DEPTH" => {
                    let axis = ["WIDTH", "HEIGHT", "DEPTH"]
                        .iter()
                        .position(|a| *a == tok.text)
                        .unwrap_or(0);
                    let v: u32 = uint(self.cursor.expect("a size")?, tok.text)?;
                    if v == 0 {
                        return Err(AmberError::new(tok.at, format!("{} 0", tok.text)));
                    }
                    extent[axis] = v;
                    sizes[axis] = true;
                }
                t => {
                    return Err(AmberError::new(
                        tok.at,
                        format!("unexpected '{t}' in IMAGE"),
                    ))
                }
            }
        };
        if dimensions == 0 || !sizes[0] || sizes.iter().skip(usize::from(dimensions)).any(|s| *s) {
            return Err(AmberError::new(
                at,
                "IMAGE needs DIM_1D, DIM_2D or DIM_3D and a WIDTH (HEIGHT from 2D, DEPTH for 3D)",
            ));
        }
        let count = extent
            .iter()
            .try_fold(1usize, |a, &e| a.checked_mul(e as usize))
            .ok_or_else(|| AmberError::new(at, "the image is too large"))?;
        let bytes = match bytes {
            None => vec![0u8; self.checked_size(&element, count, at)?],
            Some(tok) if tok.text == "DATA" => {
                self.cursor.next();
                let mut b = self.data(&element, tok.at)?;
                let size = count.saturating_mul(element.stride);
                if b.len() > size {
                    return Err(AmberError::new(
                        tok.at,
                        format!("DATA has more than the image's {count} texels"),
                    ));
                }
                b.resize(size, 0);
                b
            }
            Some(_) => self.initialized(&element, count, at)?,
        };
        self.cursor.end_of_statement()?;
        declare(
            &mut self.names.buffers,
            name,
            "buffer",
            self.script.buffers.len(),
        )?;
        self.script.buffers.push(Buffer {
            name: name.text.to_string(),
            data_type: Some(data_type),
            layout: Layout::Std430,
            element,
            bytes,
            at,
            format: Some(format),
            image: Some(ImageShape { dimensions, extent }),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse;
    use crate::script::ImageShape;

    #[test]
    fn images_parse_with_their_shape_format_and_texels() {
        let s = parse("IMAGE a FORMAT R32_UINT DIM_2D WIDTH 3 HEIGHT 2 SERIES_FROM 1 INC_BY 2\n\
IMAGE b DATA_TYPE vec4<float> DIM_1D WIDTH 2 FILL 0.5\nIMAGE c FORMAT R8G8B8A8_UINT DIM_3D WIDTH 1 HEIGHT 1 DEPTH 2 DATA 1 2 3 4 END\n\
IMAGE d FORMAT R16_SINT MIP_LEVELS 1 DIM_1D WIDTH 4")
        .expect("parses");
        let a = &s.buffers[0];
        assert_eq!(a.format.as_deref(), Some("R32_UINT"));
        assert_eq!(
            a.image,
            Some(ImageShape {
                dimensions: 2,
                extent: [3, 2, 1]
            })
        );
        let words: Vec<u32> = a
            .bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(words, vec![1, 3, 5, 7, 9, 11]);
        let b = &s.buffers[1];
        assert_eq!(b.format.as_deref(), Some("R32G32B32A32_SFLOAT"));
        assert_eq!(b.bytes.len(), 32);
        assert_eq!(&b.bytes[28..], &0.5f32.to_le_bytes());
        assert_eq!(s.buffers[2].bytes, vec![1, 2, 3, 4, 0, 0, 0, 0]);
        assert_eq!(s.buffers[3].bytes, vec![0; 8]);
    }

    #[test]
    fn image_mistakes_are_errors() {
        for (text, words) in [
            ("IMAGE a FORMAT R32_UINT WIDTH 3", "needs DIM_1D"),
            (
                "IMAGE a FORMAT R32_UINT DIM_1D WIDTH 3 HEIGHT 2",
                "needs DIM_1D",
            ),
            (
                "IMAGE a FORMAT R32_UINT DIM_2D WIDTH 1 HEIGHT 1 SAMPLES 4",
                "SAMPLES 4",
            ),
            (
                "IMAGE a FORMAT R9_UINT DIM_1D WIDTH 1",
                "unknown or unsupported image format",
            ),
            (
                "IMAGE a FORMAT R32_UINT DIM_1D WIDTH 1 DATA 1 2 END",
                "more than the image's 1 texels",
            ),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.message.contains(words), "{text}: {}", e.message);
        }
    }
}
