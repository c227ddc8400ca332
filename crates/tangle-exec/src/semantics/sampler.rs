//! Sampler state and the texel footprint of one sample (Vulkan "Texel Coordinate Operations":
//! normalized to unnormalized coordinates, the level-of-detail choice between the
//! magnification and minification filters, "Wrapping Operation", and the nearest and linear
//! "Texel Filtering" weights) for images of one mip level.
//!
//! Precision: Vulkan lets a device quantize the linear weights to `subTexelPrecisionBits` (at
//! least 4) bits and filter in reduced precision. tangle uses the exact weights, computes the
//! filtered value in f64 and rounds once to the result width, so a script comparing with a
//! device needs the tolerance the device's precision implies.

/// `VkFilter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// The texel containing the coordinate.
    Nearest,
    /// The weighted 2x2 (or 2, or 2x2x2) texels around it.
    Linear,
}

/// `VkSamplerAddressMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
    ClampToBorder,
    MirrorClampToEdge,
}

/// `VkBorderColor`: the value of a border texel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BorderColor {
    FloatTransparentBlack,
    IntTransparentBlack,
    FloatOpaqueBlack,
    IntOpaqueBlack,
    FloatOpaqueWhite,
    IntOpaqueWhite,
}

impl BorderColor {
    /// The border texel as (R, G, B, A) in [0, 1] (the integer colors hold 0 or 1 too).
    pub fn rgba(self) -> [f64; 4] {
        match self {
            BorderColor::FloatTransparentBlack | BorderColor::IntTransparentBlack => [0.0; 4],
            BorderColor::FloatOpaqueBlack | BorderColor::IntOpaqueBlack => [0.0, 0.0, 0.0, 1.0],
            BorderColor::FloatOpaqueWhite | BorderColor::IntOpaqueWhite => [1.0; 4],
        }
    }

    /// Whether this is one of the `INT_` colors (for integer formats).
    pub fn is_int(self) -> bool {
        matches!(
            self,
            BorderColor::IntTransparentBlack
                | BorderColor::IntOpaqueBlack
                | BorderColor::IntOpaqueWhite
        )
    }
}

/// A sampler (`VkSamplerCreateInfo`, the parts that matter for one-level images).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    pub mag_filter: Filter,
    pub min_filter: Filter,
    /// U, V, W.
    pub address: [AddressMode; 3],
    pub border: BorderColor,
    pub min_lod: f32,
    pub max_lod: f32,
    /// `unnormalizedCoordinates` is false.
    pub normalized: bool,
}

impl Default for Sampler {
    /// Amber's defaults: nearest, repeat, float transparent black, LOD 0 to 1, normalized.
    fn default() -> Self {
        Sampler {
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            address: [AddressMode::Repeat; 3],
            border: BorderColor::FloatTransparentBlack,
            min_lod: 0.0,
            max_lod: 1.0,
            normalized: true,
        }
    }
}

impl Eq for Sampler {}

/// VUID-VkSamplerCreateInfo-unnormalizedCoordinates-01072 to 01075: a sampler with
/// unnormalized coordinates has one filter, nearest mipmaps (`mipmap_nearest`), LODs of zero
/// and clamping address modes in U and V. Any other is invalid on every device.
pub fn check_unnormalized(s: &Sampler, mipmap_nearest: bool) -> Result<(), String> {
    let clamps =
        |a: AddressMode| matches!(a, AddressMode::ClampToEdge | AddressMode::ClampToBorder);
    if !s.normalized
        && (s.min_filter != s.mag_filter
            || !mipmap_nearest
            || s.min_lod != 0.0
            || s.max_lod != 0.0
            || !s.address.iter().take(2).all(|a| clamps(*a)))
    {
        return Err("a sampler with UNNORMALIZED_COORDS needs MIN_FILTER = MAG_FILTER, MIPMAP_MODE nearest, MIN_LOD = MAX_LOD = 0 and clamp_to_edge or clamp_to_border in U and V (VUID-VkSamplerCreateInfo-unnormalizedCoordinates-01072 to 01075)".to_string());
    }
    Ok(())
}

/// One texel of a footprint: its coordinates, or `None` for a border texel, and its weight.
pub type Tap = (Option<[i64; 3]>, f64);

/// "Wrapping Operation": the texel index `i` along an axis of `size` texels, or `None` when it
/// is a border texel (`ClampToBorder` outside the image).
pub fn wrap(mode: AddressMode, i: i64, size: i64) -> Option<i64> {
    let size = size.max(1);
    // mirror(a) = a if a >= 0, else -(1 + a)
    let mirror = |a: i64| if a >= 0 { a } else { -(1 + a) };
    Some(match mode {
        AddressMode::Repeat => i.rem_euclid(size),
        AddressMode::MirroredRepeat => (size - 1) - mirror(i.rem_euclid(2 * size) - size),
        AddressMode::ClampToEdge => i.clamp(0, size - 1),
        AddressMode::ClampToBorder => {
            if i < 0 || i >= size {
                return None;
            }
            i
        }
        AddressMode::MirrorClampToEdge => mirror(i).clamp(0, size - 1),
    })
}

/// The filter a sample uses: "If λ is less than or equal to zero, the texture is said to be
/// magnified, and the filter mode within a mip level is selected by the magFilter ... Otherwise
/// ... minFilter", with λ the explicit level of detail clamped to [minLod, maxLod].
pub fn filter_for(sampler: &Sampler, lod: f64) -> Filter {
    let lambda = if lod.is_nan() {
        f64::from(sampler.min_lod)
    } else {
        lod.clamp(
            f64::from(sampler.min_lod),
            f64::from(sampler.max_lod).max(f64::from(sampler.min_lod)),
        )
    };
    if lambda <= 0.0 {
        sampler.mag_filter
    } else {
        sampler.min_filter
    }
}

/// The texels one sample at coordinates `coords` (1 to 3 of them: s, t, r) reads from an image
/// of `extent`, with their weights (summing to 1).
///
/// "u = s × width" for normalized coordinates (unnormalized ones are used as they are); nearest:
/// "i = ⌊u⌋"; linear: "i0 = ⌊u − 0.5⌋, i1 = i0 + 1, α = frac(u − 0.5)" and the weights
/// (1 − α) and α per axis. Each index is then wrapped with its axis's address mode.
pub fn footprint(sampler: &Sampler, filter: Filter, coords: &[f64], extent: [u32; 3]) -> Vec<Tap> {
    let axes = coords.len().min(3);
    // Per axis: one or two (index, weight) pairs.
    let mut per_axis: Vec<Vec<(Option<i64>, f64)>> = Vec::with_capacity(3);
    for (axis, &s) in coords.iter().enumerate().take(axes) {
        let size = i64::from(extent.get(axis).copied().unwrap_or(1));
        let u = if sampler.normalized {
            s * size as f64
        } else {
            s
        };
        let mode = sampler
            .address
            .get(axis)
            .copied()
            .unwrap_or(AddressMode::Repeat);
        // Indices far outside the image wrap the same as their value modulo a large multiple of
        // the size; clamping to ±2^40 keeps the float-to-int conversion in range.
        let clamp = |x: f64| {
            if x.is_nan() {
                0
            } else {
                x.clamp(-1e12, 1e12) as i64
            }
        };
        let taps = match filter {
            Filter::Nearest => vec![(wrap(mode, clamp(u.floor()), size), 1.0)],
            Filter::Linear => {
                let x = u - 0.5;
                let i0 = clamp(x.floor());
                let alpha = if x.is_finite() { x - x.floor() } else { 0.0 };
                vec![
                    (wrap(mode, i0, size), 1.0 - alpha),
                    (wrap(mode, i0 + 1, size), alpha),
                ]
            }
        };
        per_axis.push(taps);
    }
    let mut out: Vec<Tap> = vec![(Some([0, 0, 0]), 1.0)];
    for (axis, taps) in per_axis.iter().enumerate() {
        let mut next = Vec::with_capacity(out.len() * taps.len());
        for (at, w) in &out {
            for (i, wi) in taps {
                let at = match (at, i) {
                    (Some(c), Some(i)) => {
                        let mut c = *c;
                        if let Some(slot) = c.get_mut(axis) {
                            *slot = *i;
                        }
                        Some(c)
                    }
                    _ => None,
                };
                next.push((at, w * wi));
            }
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_follows_the_spec_formulas() {
        use AddressMode::*;
        let size = 4;
        let cases: [(AddressMode, [Option<i64>; 10]); 5] = [
            // i = -5 ..= 4
            (Repeat, [3, 0, 1, 2, 3, 0, 1, 2, 3, 0].map(Some)),
            (MirroredRepeat, [3, 3, 2, 1, 0, 0, 1, 2, 3, 3].map(Some)),
            (ClampToEdge, [0, 0, 0, 0, 0, 0, 1, 2, 3, 3].map(Some)),
            (
                ClampToBorder,
                [
                    None,
                    None,
                    None,
                    None,
                    None,
                    Some(0),
                    Some(1),
                    Some(2),
                    Some(3),
                    None,
                ],
            ),
            (MirrorClampToEdge, [3, 3, 2, 1, 0, 0, 1, 2, 3, 3].map(Some)),
        ];
        for (mode, want) in cases {
            let got: Vec<Option<i64>> = (-5..=4).map(|i| wrap(mode, i, size)).collect();
            assert_eq!(got, want, "{mode:?}");
        }
    }

    #[test]
    fn linear_weights_split_between_neighbours() {
        let s = Sampler {
            address: [AddressMode::ClampToEdge; 3],
            ..Sampler::default()
        };
        // u = 0.375 * 4 = 1.5: exactly texel 1's centre.
        let taps = footprint(&s, Filter::Linear, &[0.375], [4, 1, 1]);
        assert_eq!(taps, vec![(Some([1, 0, 0]), 1.0), (Some([2, 0, 0]), 0.0)]);
        // u = 1.75: a quarter of the way from texel 1 to texel 2.
        let taps = footprint(&s, Filter::Linear, &[1.75 / 4.0, 0.5 / 2.0], [4, 2, 1]);
        let weights: Vec<f64> = taps.iter().map(|t| t.1).collect();
        assert_eq!(weights, vec![0.75, 0.0, 0.25, 0.0]);
        assert_eq!(taps[2].0, Some([2, 0, 0]));
        // Nearest: floor(u).
        assert_eq!(
            footprint(&s, Filter::Nearest, &[0.999, 0.0], [4, 2, 1]),
            vec![(Some([3, 0, 0]), 1.0)]
        );
    }

    #[test]
    fn the_lod_picks_the_filter() {
        let s = Sampler {
            mag_filter: Filter::Linear,
            min_filter: Filter::Nearest,
            min_lod: 0.0,
            max_lod: 4.0,
            ..Sampler::default()
        };
        assert_eq!(filter_for(&s, 0.0), Filter::Linear);
        assert_eq!(filter_for(&s, -3.0), Filter::Linear);
        assert_eq!(filter_for(&s, 0.5), Filter::Nearest);
        let clamped = Sampler { max_lod: 0.0, ..s };
        assert_eq!(filter_for(&clamped, 2.0), Filter::Linear);
    }
}
