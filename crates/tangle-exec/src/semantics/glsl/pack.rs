//! GLSL.std.450 packing instructions: Pack/Unpack Snorm4x8, Unorm4x8, Snorm2x16, Unorm2x16,
//! Half2x16 and Double2x32. Float vectors are f32 bit patterns; packed values are 32-bit (64-bit
//! for the double) integers.

use super::super::convert::fconvert;
use super::super::float::from_f64;
use super::super::{sign_extend, truncate};

/// The f32 value of a canonical f32 bit pattern, as f64.
fn f32_of(v: u64) -> f64 {
    f64::from(f32::from_bits(v as u32))
}

/// Packs fixed-point fields, first component in the least significant bits.
fn pack_fields(v: &[u64], width: u32, f: impl Fn(f64) -> i64) -> u64 {
    v.iter().enumerate().fold(0u64, |acc, (i, &c)| {
        acc | (truncate(width, f(f32_of(c)) as u64) << (i as u32 * width))
    })
}

/// PackSnorm4x8: "the conversion for component c of v to fixed point is done as follows:
/// round(clamp(c, -1, +1) * 127.0). The first component of the vector will be written to the
/// least significant bits of the output; the last component will be written to the most
/// significant bits." `round` rounds ties to even here. Input: four f32 bit patterns.
pub fn pack_snorm_4x8(v: &[u64]) -> u64 {
    pack_fields(v, 8, |c| {
        (c.clamp(-1.0, 1.0) * 127.0).round_ties_even() as i64
    })
}

/// PackUnorm4x8: "round(clamp(c, 0, +1) * 255.0)".
pub fn pack_unorm_4x8(v: &[u64]) -> u64 {
    pack_fields(v, 8, |c| {
        (c.clamp(0.0, 1.0) * 255.0).round_ties_even() as i64
    })
}

/// PackSnorm2x16: "round(clamp(c, -1, +1) * 32767.0)".
pub fn pack_snorm_2x16(v: &[u64]) -> u64 {
    pack_fields(v, 16, |c| {
        (c.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i64
    })
}

/// PackUnorm2x16: "round(clamp(c, 0, +1) * 65535.0)".
pub fn pack_unorm_2x16(v: &[u64]) -> u64 {
    pack_fields(v, 16, |c| {
        (c.clamp(0.0, 1.0) * 65535.0).round_ties_even() as i64
    })
}

/// PackHalf2x16: "Result is the unsigned integer obtained by converting the components of a
/// two-component floating-point vector to the 16-bit OpTypeFloat, and then packing these two
/// 16-bit integers into a 32-bit unsigned integer. The first vector component specifies the 16
/// least-significant bits of the result".
pub fn pack_half_2x16(v: &[u64]) -> u64 {
    v.iter().take(2).enumerate().fold(0u64, |acc, (i, &c)| {
        acc | (fconvert(32, 16, c) << (16 * i as u32))
    })
}

/// PackDouble2x32: "Result is the double-precision value obtained by packing the components of
/// v into a 64-bit value. ... The first vector component specifies the 32 least significant
/// bits".
pub fn pack_double_2x32(v: &[u64]) -> u64 {
    v.iter().take(2).enumerate().fold(0u64, |acc, (i, &c)| {
        acc | (truncate(32, c) << (32 * i as u32))
    })
}

/// Unpacks `n` fixed-point fields of `width` bits into f32 bit patterns.
fn unpack_fields<const N: usize>(p: u64, width: u32, f: impl Fn(u64) -> f64) -> [u64; N] {
    std::array::from_fn(|i| {
        let field = truncate(width, p >> (i as u32 * width));
        from_f64(32, f(field))
    })
}

/// UnpackSnorm4x8: "The conversion for unpacked fixed-point value f to floating point is done as
/// follows: clamp(f / 127.0, -1, +1). The first component of the result will be extracted from
/// the least significant bits of the input". Returns four f32 bit patterns.
pub fn unpack_snorm_4x8(p: u64) -> [u64; 4] {
    unpack_fields(p, 8, |f| {
        (sign_extend(8, f) as f64 / 127.0).clamp(-1.0, 1.0)
    })
}

/// UnpackUnorm4x8: "f / 255.0".
pub fn unpack_unorm_4x8(p: u64) -> [u64; 4] {
    unpack_fields(p, 8, |f| f as f64 / 255.0)
}

/// UnpackSnorm2x16: "clamp(f / 32767.0, -1, +1)".
pub fn unpack_snorm_2x16(p: u64) -> [u64; 2] {
    unpack_fields(p, 16, |f| {
        (sign_extend(16, f) as f64 / 32767.0).clamp(-1.0, 1.0)
    })
}

/// UnpackUnorm2x16: "f / 65535.0".
pub fn unpack_unorm_2x16(p: u64) -> [u64; 2] {
    unpack_fields(p, 16, |f| f as f64 / 65535.0)
}

/// UnpackHalf2x16: "interpreting a 32-bit unsigned integer as a pair of 16-bit floating-point
/// values, and converting them to 32-bit floating-point values. ... The first component of the
/// vector is obtained from the 16 least-significant bits of v".
pub fn unpack_half_2x16(p: u64) -> [u64; 2] {
    [0, 1].map(|i| fconvert(16, 32, truncate(16, p >> (16 * i))))
}

/// UnpackDouble2x32: "Result is the two-component unsigned-integer vector representation of v.
/// ... The first component of the vector contains the 32 least significant bits of the double".
pub fn unpack_double_2x32(p: u64) -> [u64; 2] {
    [truncate(32, p), p >> 32]
}

#[cfg(test)]
mod tests {
    use super::super::super::float::to_f64;
    use super::super::super::{mask, proptest_config};
    use super::*;
    use proptest::prelude::*;

    /// Reference pack with integer arithmetic: round(c * scale) with ties to even, done on the
    /// exact rational c * scale via f64 (exact for f32 inputs times ≤ 16-bit scales).
    fn ref_pack(v: &[f32], width: u32, lo: f32, scale: f64) -> u64 {
        let mut out = 0u64;
        for (i, &c) in v.iter().enumerate() {
            let c = if c.is_nan() { c } else { c.max(lo).min(1.0) };
            let t = f64::from(c) * scale;
            let fl = t.floor();
            let r = if t - fl > 0.5 || (t - fl == 0.5 && fl % 2.0 != 0.0) {
                fl + 1.0
            } else {
                fl
            };
            out |= ((r as i64 as u64) & mask(width)) << (width * i as u32);
        }
        out
    }

    #[test]
    fn packing_edges() {
        let bits32 = |v: &[f32]| v.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>();
        assert_eq!(pack_unorm_4x8(&bits32(&[0.0, 1.0, 0.5, 2.0])), 0xff80_ff00);
        assert_eq!(
            pack_snorm_4x8(&bits32(&[-1.0, 1.0, 0.0, -2.0])),
            0x8100_7f81
        );
        assert_eq!(pack_snorm_2x16(&bits32(&[1.0, -1.0])), 0x8001_7fff);
        assert_eq!(pack_unorm_2x16(&bits32(&[1.0, 0.0])), 0x0000_ffff);
        assert_eq!(pack_half_2x16(&bits32(&[1.0, -2.0])), 0xc000_3c00);
        assert_eq!(
            unpack_half_2x16(0xc000_3c00),
            [u64::from(1f32.to_bits()), u64::from((-2f32).to_bits())]
        );
        assert_eq!(
            pack_double_2x32(&[0x1122_3344, 0x5566_7788]),
            0x5566_7788_1122_3344
        );
        assert_eq!(
            unpack_double_2x32(0x5566_7788_1122_3344),
            [0x1122_3344, 0x5566_7788]
        );
        assert_eq!(
            unpack_snorm_4x8(0x8100_7f80).map(|v| f32::from_bits(v as u32)),
            [-1.0, 1.0, 0.0, -1.0]
        );
        assert_eq!(
            unpack_unorm_4x8(0xff00_00ff).map(|v| f32::from_bits(v as u32)),
            [1.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(
            unpack_snorm_2x16(0x8001_7fff).map(|v| f32::from_bits(v as u32)),
            [1.0, -1.0]
        );
        assert_eq!(
            unpack_unorm_2x16(0xffff_0000).map(|v| f32::from_bits(v as u32)),
            [0.0, 1.0]
        );
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn pack_random(v in proptest::collection::vec(any::<u32>(), 4), small in proptest::collection::vec(-1.5f32..1.5, 4)) {
            let raw: Vec<u64> = v.iter().map(|&x| u64::from(x)).collect();
            let sm: Vec<u64> = small.iter().map(|x| u64::from(x.to_bits())).collect();
            for (vals, floats) in [(&raw, v.iter().map(|&x| f32::from_bits(x)).collect::<Vec<_>>()), (&sm, small.clone())] {
                if floats.iter().all(|f| !f.is_nan()) {
                    prop_assert_eq!(pack_snorm_4x8(vals), ref_pack(&floats, 8, -1.0, 127.0));
                    prop_assert_eq!(pack_unorm_4x8(vals), ref_pack(&floats, 8, 0.0, 255.0));
                    prop_assert_eq!(pack_snorm_2x16(&vals[..2]), ref_pack(&floats[..2], 16, -1.0, 32767.0));
                    prop_assert_eq!(pack_unorm_2x16(&vals[..2]), ref_pack(&floats[..2], 16, 0.0, 65535.0));
                }
            }
            // Unpack then pack is the identity on the unorm codes, and on snorm codes except -128/-32768.
            let p = u64::from(v[0]);
            prop_assert_eq!(pack_unorm_4x8(&unpack_unorm_4x8(p)), p);
            prop_assert_eq!(pack_unorm_2x16(&unpack_unorm_2x16(p)), p);
            let snorm8 = unpack_snorm_4x8(p);
            let expect8 = (0..4).fold(0u64, |acc, i| {
                let b = (p >> (8 * i)) & 0xff;
                acc | (if b == 0x80 { 0x81 } else { b } << (8 * i))
            });
            prop_assert_eq!(pack_snorm_4x8(&snorm8), expect8);
            let h = unpack_half_2x16(p);
            let hs = h.map(|x| to_f64(32, x));
            if hs.iter().all(|x| !x.is_nan()) {
                prop_assert_eq!(pack_half_2x16(&h), p);
            }
        }
    }
}
