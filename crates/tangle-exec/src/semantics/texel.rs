//! Texel formats and their conversions (Vulkan "Format Conversion" and "Fixed-Point Data
//! Conversion", and the SPIR-V Image Format table of "Compatibility Between SPIR-V Image
//! Formats and Vulkan Formats"): one table from Vulkan format names and SPIR-V `ImageFormat`
//! values to a component layout, and the pure decode (image read, texel fetch) and encode
//! (image write) of one texel.
//!
//! A texel is read as a little-endian integer of [`TexelFormat::bytes`] bytes; component `i` of
//! [`TexelFormat::layout`] holds the bits from the sum of the earlier widths up. That one rule
//! covers byte-aligned formats (R8G8B8A8: R is byte 0) and packed ones (A2B10G10R10_PACK32: R is
//! bits 0..10 of the word).
//!
//! Rounding choices where Vulkan allows more than one result (documented, so a test can expect
//! exact values):
//! - float to UNORM/SNORM: "convertFloatToUint(r, b) returns one of the two unsigned binary
//!   integer values with exactly b bits which are closest to the floating-point value r.
//!   Implementations should round to nearest." tangle rounds to nearest, ties to even, after
//!   clamping to [0, 1] (UNORM) or [-1, 1] (SNORM); NaN becomes 0.
//! - float to a narrower float (R16 SFLOAT): round to nearest, ties to even.
//! - integer to a narrower integer component: "The converted value of any integer that cannot
//!   be represented in the target format is undefined"; tangle keeps the low bits (what
//!   hardware stores), and [`encode_is_undefined`] tells the sanitizer.
//! - UNORM/SNORM to float: `c / (2^b - 1)` and `max(c / (2^(b-1) - 1), -1)`, computed exactly
//!   and rounded once to the result width.

use super::float;

/// How a format's components are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeric {
    /// Unsigned normalized: `c / (2^b - 1)` in [0, 1].
    Unorm,
    /// Signed normalized: `c / (2^(b-1) - 1)` clamped to [-1, 1].
    Snorm,
    /// Unsigned integer.
    Uint,
    /// Signed integer (two's complement).
    Sint,
    /// IEEE float (16, 32 or 64 bits).
    Sfloat,
}

impl Numeric {
    /// Whether shaders see the components as floats.
    pub fn is_float(self) -> bool {
        matches!(self, Numeric::Unorm | Numeric::Snorm | Numeric::Sfloat)
    }
}

/// A texel format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TexelFormat {
    /// The Vulkan name without `VK_FORMAT_` (`R8G8B8A8_UNORM`).
    pub name: &'static str,
    /// The SPIR-V `ImageFormat` that maps to it, if one does.
    pub spirv: Option<u32>,
    /// Components in bit order from the least significant: channel (0 R, 1 G, 2 B, 3 A) and
    /// width in bits.
    pub layout: &'static [(u8, u8)],
    /// Interpretation of every component.
    pub numeric: Numeric,
}

impl TexelFormat {
    /// Bytes per texel.
    pub fn bytes(&self) -> u32 {
        self.layout.iter().map(|(_, w)| u32::from(*w)).sum::<u32>() / 8
    }

    /// The format with this Vulkan name (with or without `VK_FORMAT_`).
    pub fn by_name(name: &str) -> Option<&'static TexelFormat> {
        let name = name.strip_prefix("VK_FORMAT_").unwrap_or(name);
        FORMATS.iter().find(|f| f.name == name)
    }

    /// The format a SPIR-V `ImageFormat` value names (`None` for Unknown and for formats tangle
    /// does not implement, such as R11fG11fB10f).
    pub fn by_spirv(format: u32) -> Option<&'static TexelFormat> {
        FORMATS.iter().find(|f| f.spirv == Some(format))
    }
}

const R: u8 = 0;
const G: u8 = 1;
const B: u8 = 2;
const A: u8 = 3;

macro_rules! formats {
    ($($name:literal, $spirv:expr, $numeric:ident, [$(($c:expr, $w:literal)),+];)*) => {
        /// Every texel format tangle implements.
        pub const FORMATS: &[TexelFormat] = &[$(TexelFormat {
            name: $name,
            spirv: $spirv,
            layout: &[$(($c, $w)),+],
            numeric: Numeric::$numeric,
        }),*];
    };
}

// SPIR-V ImageFormat values: Rgba32f 1, Rgba16f 2, R32f 3, Rgba8 4, Rgba8Snorm 5, Rg32f 6,
// Rg16f 7, R16f 9, Rgba16 10, Rgb10A2 11, Rg16 12, Rg8 13, R16 14, R8 15, Rgba16Snorm 16,
// Rg16Snorm 17, Rg8Snorm 18, R16Snorm 19, R8Snorm 20, Rgba32i 21, Rgba16i 22, Rgba8i 23, R32i 24,
// Rg32i 25, Rg16i 26, Rg8i 27, R16i 28, R8i 29, Rgba32ui 30, Rgba16ui 31, Rgba8ui 32, R32ui 33,
// Rgb10a2ui 34, Rg32ui 35, Rg16ui 36, Rg8ui 37, R16ui 38, R8ui 39, R64ui 40, R64i 41.
// (R11fG11fB10f, 8, is not implemented: its 10/11-bit unsigned floats have no encoder here.)
formats! {
    "R32G32B32A32_SFLOAT", Some(1), Sfloat, [(R, 32), (G, 32), (B, 32), (A, 32)];
    "R16G16B16A16_SFLOAT", Some(2), Sfloat, [(R, 16), (G, 16), (B, 16), (A, 16)];
    "R32_SFLOAT", Some(3), Sfloat, [(R, 32)];
    "R8G8B8A8_UNORM", Some(4), Unorm, [(R, 8), (G, 8), (B, 8), (A, 8)];
    "R8G8B8A8_SNORM", Some(5), Snorm, [(R, 8), (G, 8), (B, 8), (A, 8)];
    "R32G32_SFLOAT", Some(6), Sfloat, [(R, 32), (G, 32)];
    "R16G16_SFLOAT", Some(7), Sfloat, [(R, 16), (G, 16)];
    "R16_SFLOAT", Some(9), Sfloat, [(R, 16)];
    "R16G16B16A16_UNORM", Some(10), Unorm, [(R, 16), (G, 16), (B, 16), (A, 16)];
    "A2B10G10R10_UNORM_PACK32", Some(11), Unorm, [(R, 10), (G, 10), (B, 10), (A, 2)];
    "R16G16_UNORM", Some(12), Unorm, [(R, 16), (G, 16)];
    "R8G8_UNORM", Some(13), Unorm, [(R, 8), (G, 8)];
    "R16_UNORM", Some(14), Unorm, [(R, 16)];
    "R8_UNORM", Some(15), Unorm, [(R, 8)];
    "R16G16B16A16_SNORM", Some(16), Snorm, [(R, 16), (G, 16), (B, 16), (A, 16)];
    "R16G16_SNORM", Some(17), Snorm, [(R, 16), (G, 16)];
    "R8G8_SNORM", Some(18), Snorm, [(R, 8), (G, 8)];
    "R16_SNORM", Some(19), Snorm, [(R, 16)];
    "R8_SNORM", Some(20), Snorm, [(R, 8)];
    "R32G32B32A32_SINT", Some(21), Sint, [(R, 32), (G, 32), (B, 32), (A, 32)];
    "R16G16B16A16_SINT", Some(22), Sint, [(R, 16), (G, 16), (B, 16), (A, 16)];
    "R8G8B8A8_SINT", Some(23), Sint, [(R, 8), (G, 8), (B, 8), (A, 8)];
    "R32_SINT", Some(24), Sint, [(R, 32)];
    "R32G32_SINT", Some(25), Sint, [(R, 32), (G, 32)];
    "R16G16_SINT", Some(26), Sint, [(R, 16), (G, 16)];
    "R8G8_SINT", Some(27), Sint, [(R, 8), (G, 8)];
    "R16_SINT", Some(28), Sint, [(R, 16)];
    "R8_SINT", Some(29), Sint, [(R, 8)];
    "R32G32B32A32_UINT", Some(30), Uint, [(R, 32), (G, 32), (B, 32), (A, 32)];
    "R16G16B16A16_UINT", Some(31), Uint, [(R, 16), (G, 16), (B, 16), (A, 16)];
    "R8G8B8A8_UINT", Some(32), Uint, [(R, 8), (G, 8), (B, 8), (A, 8)];
    "R32_UINT", Some(33), Uint, [(R, 32)];
    "A2B10G10R10_UINT_PACK32", Some(34), Uint, [(R, 10), (G, 10), (B, 10), (A, 2)];
    "R32G32_UINT", Some(35), Uint, [(R, 32), (G, 32)];
    "R16G16_UINT", Some(36), Uint, [(R, 16), (G, 16)];
    "R8G8_UINT", Some(37), Uint, [(R, 8), (G, 8)];
    "R16_UINT", Some(38), Uint, [(R, 16)];
    "R8_UINT", Some(39), Uint, [(R, 8)];
    "R64_UINT", Some(40), Uint, [(R, 64)];
    "R64_SINT", Some(41), Sint, [(R, 64)];
    // Formats without a SPIR-V ImageFormat: bound to Unknown-format images and texel buffers.
    "B8G8R8A8_UNORM", None, Unorm, [(B, 8), (G, 8), (R, 8), (A, 8)];
    "R32G32B32_SFLOAT", None, Sfloat, [(R, 32), (G, 32), (B, 32)];
    "R32G32B32_UINT", None, Uint, [(R, 32), (G, 32), (B, 32)];
    "R32G32B32_SINT", None, Sint, [(R, 32), (G, 32), (B, 32)];
    "R64G64B64A64_SFLOAT", None, Sfloat, [(R, 64), (G, 64), (B, 64), (A, 64)];
}

/// A texel's four components (R, G, B, A) as the shader sees them: for a float format each is
/// an f64 value's bits (exact: every component fits f64), for an integer format the integer's
/// 64-bit two's-complement pattern (sign-extended for SINT).
pub type Components = [u64; 4];

/// Decodes the texel in `raw` (its bytes as a little-endian integer). Missing components read
/// as (0, 0, 0, 1): Vulkan "Conversion to RGBA": "If the format does not have a G, B or A
/// component, ... replaced by 0, 0 and 1".
pub fn decode(format: &TexelFormat, raw: u128) -> Components {
    let one = if format.numeric.is_float() {
        1f64.to_bits()
    } else {
        1
    };
    let mut out = [0, 0, 0, one];
    let mut shift = 0u32;
    for &(channel, width) in format.layout {
        let w = u32::from(width);
        let c = ((raw >> shift) & ((1u128 << w) - 1)) as u64;
        shift += w;
        if let Some(slot) = out.get_mut(usize::from(channel)) {
            *slot = decode_component(format.numeric, w, c);
        }
    }
    out
}

/// One component of `w` bits.
fn decode_component(numeric: Numeric, w: u32, c: u64) -> u64 {
    match numeric {
        Numeric::Uint => c,
        Numeric::Sint => super::sign_extend(w, c) as u64,
        Numeric::Sfloat => float::to_f64(w, c).to_bits(),
        // "f = c / (2^b - 1)"
        Numeric::Unorm => (c as f64 / ((1u64 << w) - 1) as f64).to_bits(),
        // "f = max(c / (2^(b-1) - 1), -1.0)"
        Numeric::Snorm => {
            let s = super::sign_extend(w, c) as f64;
            (s / ((1u64 << (w - 1)) - 1) as f64).max(-1.0).to_bits()
        }
    }
}

/// Encodes the shader's texel components: floats as f64 bits, integers as 64-bit patterns (the
/// same as [`Components`]); components the format lacks are dropped ("If the number of
/// components in the texel data is larger than the number of components in the format,
/// additional components are discarded").
pub fn encode(format: &TexelFormat, texel: &Components) -> u128 {
    let mut raw = 0u128;
    let mut shift = 0u32;
    for &(channel, width) in format.layout {
        let w = u32::from(width);
        let v = texel.get(usize::from(channel)).copied().unwrap_or(0);
        let c = encode_component(format.numeric, w, v) & super::mask(w);
        raw |= u128::from(c) << shift;
        shift += w;
    }
    raw
}

/// One component to `w` bits.
fn encode_component(numeric: Numeric, w: u32, v: u64) -> u64 {
    let x = f64::from_bits(v);
    match numeric {
        Numeric::Uint | Numeric::Sint => v,
        Numeric::Sfloat => float::from_f64(w, x),
        Numeric::Unorm => {
            let max = ((1u64 << w) - 1) as f64;
            if x.is_nan() {
                0
            } else {
                (x.clamp(0.0, 1.0) * max).round_ties_even() as u64
            }
        }
        Numeric::Snorm => {
            let max = ((1u64 << (w - 1)) - 1) as f64;
            if x.is_nan() {
                0
            } else {
                (x.clamp(-1.0, 1.0) * max).round_ties_even() as i64 as u64
            }
        }
    }
}

/// Whether an integer component of `texel` cannot be represented in `format` (its converted
/// value is undefined); never for float formats.
pub fn encode_is_undefined(format: &TexelFormat, texel: &Components) -> bool {
    format.layout.iter().any(|&(channel, width)| {
        let v = texel.get(usize::from(channel)).copied().unwrap_or(0);
        let w = u32::from(width);
        match format.numeric {
            Numeric::Uint => w < 64 && v >> w != 0,
            Numeric::Sint => w < 64 && super::sign_extend(w, v & super::mask(w)) != v as i64,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> u64 {
        x.to_bits()
    }

    #[test]
    fn the_table_is_consistent() {
        for fmt in FORMATS {
            let bits: u32 = fmt.layout.iter().map(|(_, w)| u32::from(*w)).sum();
            assert_eq!(bits % 8, 0, "{}", fmt.name);
            assert!(fmt.bytes() <= 32, "{}", fmt.name);
            assert_eq!(TexelFormat::by_name(fmt.name), Some(fmt));
            if let Some(s) = fmt.spirv {
                assert_eq!(TexelFormat::by_spirv(s), Some(fmt), "{}", fmt.name);
            }
        }
        assert_eq!(
            TexelFormat::by_name("VK_FORMAT_R8_UNORM").map(|f| f.bytes()),
            Some(1)
        );
        assert!(TexelFormat::by_spirv(8).is_none());
        assert!(TexelFormat::by_spirv(0).is_none());
    }

    #[test]
    fn unorm_and_snorm_follow_the_fixed_point_rules() {
        let rgba8 = TexelFormat::by_name("R8G8B8A8_UNORM").expect("format");
        // 0x80 = 128/255; stored little-endian R first.
        assert_eq!(
            decode(rgba8, 0xff00_8000),
            [f(0.0), f(128.0 / 255.0), f(0.0), f(1.0)]
        );
        // 0.5 * 255 = 127.5 rounds to even: 128; out-of-range values clamp; NaN is 0.
        let raw = encode(rgba8, &[f(0.5), f(-3.0), f(7.0), f(f64::NAN)]);
        assert_eq!(raw, 0x00ff_0080);
        let snorm = TexelFormat::by_name("R8_SNORM").expect("format");
        // -128 and -127 both read as -1.0.
        assert_eq!(decode(snorm, 0x80)[0], f(-1.0));
        assert_eq!(decode(snorm, 0x81)[0], f(-1.0));
        assert_eq!(encode(snorm, &[f(-1.0), 0, 0, 0]), 0x81);
        assert_eq!(decode(snorm, 0x7f)[..], [f(1.0), 0, 0, f(1.0)]);
    }

    #[test]
    fn packed_formats_put_red_in_the_low_bits() {
        let p = TexelFormat::by_name("A2B10G10R10_UINT_PACK32").expect("format");
        let raw = (3u128 << 30) | (5 << 20) | (6 << 10) | 7;
        assert_eq!(decode(p, raw), [7, 6, 5, 3]);
        assert_eq!(encode(p, &[7, 6, 5, 3]), raw);
        let bgra = TexelFormat::by_name("B8G8R8A8_UNORM").expect("format");
        assert_eq!(decode(bgra, 0xff_00_00_ff)[0], f(0.0));
        assert_eq!(decode(bgra, 0xff_00_00_ff)[2], f(1.0));
    }

    #[test]
    fn integers_that_do_not_fit_are_undefined_and_keep_their_low_bits() {
        let u8f = TexelFormat::by_name("R8_UINT").expect("format");
        assert_eq!(encode(u8f, &[300, 0, 0, 0]), 300 & 0xff);
        assert!(encode_is_undefined(u8f, &[300, 0, 0, 0]));
        assert!(!encode_is_undefined(u8f, &[255, 0, 0, 0]));
        let i8f = TexelFormat::by_name("R8_SINT").expect("format");
        assert!(!encode_is_undefined(i8f, &[(-128i64) as u64, 0, 0, 0]));
        assert!(encode_is_undefined(i8f, &[(-129i64) as u64, 0, 0, 0]));
        assert_eq!(decode(i8f, 0x80)[0], (-128i64) as u64);
    }

    /// A plain reference for UNORM/SNORM encode of random floats and decode of every code:
    /// integer arithmetic on the exact rational `c / m`, without the module's code path.
    #[test]
    fn normalized_conversions_match_a_rational_reference() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (name, w, signed) in [
            ("R8_UNORM", 8u32, false),
            ("R16_UNORM", 16, false),
            ("R8_SNORM", 8, true),
            ("R16_SNORM", 16, true),
        ] {
            let fmt = TexelFormat::by_name(name).expect("format");
            let m: i64 = if signed {
                (1 << (w - 1)) - 1
            } else {
                (1 << w) - 1
            };
            for _ in 0..2000 {
                let x = (next() % 3_000_001) as f64 / 1_000_000.0 - 1.5;
                let clamped = x.clamp(if signed { -1.0 } else { 0.0 }, 1.0);
                // Nearest integer to clamped * m, ties to even, by comparing the two
                // candidates' distances exactly in f64 (m < 2^16, so products are exact).
                let lo = (clamped * m as f64).floor() as i64;
                let (dlo, dhi) = (
                    clamped * m as f64 - lo as f64,
                    (lo + 1) as f64 - clamped * m as f64,
                );
                let want = if dlo < dhi || (dlo == dhi && lo % 2 == 0) {
                    lo
                } else {
                    lo + 1
                };
                let got = encode(fmt, &[f(x), 0, 0, 0]) as u64;
                assert_eq!(got, (want as u64) & ((1 << w) - 1), "{name} {x}");
            }
            for code in 0..(1u64 << w) {
                let c = if signed {
                    super::super::sign_extend(w, code)
                } else {
                    code as i64
                };
                let want = (c as f64 / m as f64).max(-1.0);
                assert_eq!(decode(fmt, u128::from(code))[0], f(want), "{name} {code}");
            }
        }
    }

    #[test]
    fn half_floats_round_to_nearest_even() {
        let h = TexelFormat::by_name("R16_SFLOAT").expect("format");
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.0 (0x3c00).
        assert_eq!(encode(h, &[f(1.0 + 2f64.powi(-11)), 0, 0, 0]), 0x3c00);
        assert_eq!(encode(h, &[f(1.0 + 3.0 * 2f64.powi(-11)), 0, 0, 0]), 0x3c02);
        assert_eq!(decode(h, 0x3c01)[0], f(1.0 + 2f64.powi(-10)));
    }
}
