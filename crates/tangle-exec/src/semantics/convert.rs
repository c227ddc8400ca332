//! SPIR-V conversion instructions (SPIR-V spec 3.52.11 "Conversion Instructions"):
//! ConvertFToU, ConvertFToS, ConvertSToF, ConvertUToF, UConvert, SConvert, FConvert and the
//! component regrouping of OpBitcast.
//!
//! Every pair of widths is supported (integers 8/16/32/64, floats 16/32/64 and bfloat16, whose
//! format code is [`BFLOAT16`]). Float results are rounded to nearest, ties to even, once;
//! conversions to bfloat16 from f64 and integers round twice, through binary32, as
//! SPV_KHR_bfloat16 defines them.

use super::float::{from_f64, to_f64, BFLOAT16};
use super::{from_signed, mask, sign_extend, signed_max, signed_min, truncate};

/// `x` truncated toward zero, NaN and out-of-range values saturated into `[lo, hi]` (NaN → 0).
fn saturate_toward_zero(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        return 0.0;
    }
    x.trunc().clamp(lo, hi)
}

/// OpConvertFToU: "Convert value numerically from floating point to unsigned integer, with round
/// toward 0.0."
///
/// Fallback when undefined (see [`convert_f_to_u_is_undefined`]): saturation to `[0, MAX]`, NaN
/// gives 0.
pub fn convert_f_to_u(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    let x = to_f64(src_bits, v);
    // `as` saturates, and 2^64 - 1 is not an f64, so clamp in the integer domain.
    let t = saturate_toward_zero(x, 0.0, f64::INFINITY) as u64;
    t.min(mask(dst_bits))
}

/// Whether OpConvertFToU is undefined.
///
/// # Spec
/// "Behavior is undefined if Result Type is not wide enough to hold the converted value." (A NaN
/// or infinity has no converted value.)
pub fn convert_f_to_u_is_undefined(src_bits: u32, dst_bits: u32, v: u64) -> bool {
    let t = to_f64(src_bits, v).trunc();
    // 2^dst_bits is exact in f64; values in (-1, 0) truncate to -0.0, which compares >= 0 and
    // fits; NaN fails both comparisons.
    !(t >= 0.0 && t < 2f64.powi(dst_bits.min(64) as i32))
}

/// OpConvertFToS: "Convert value numerically from floating point to signed integer, with round
/// toward 0.0."
///
/// Fallback when undefined (see [`convert_f_to_s_is_undefined`]): saturation to `[MIN, MAX]`,
/// NaN gives 0.
pub fn convert_f_to_s(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    let x = to_f64(src_bits, v);
    let t = saturate_toward_zero(x, f64::NEG_INFINITY, f64::INFINITY) as i64;
    from_signed(
        dst_bits,
        t.clamp(signed_min(dst_bits), signed_max(dst_bits)),
    )
}

/// Whether OpConvertFToS is undefined.
///
/// # Spec
/// "Behavior is undefined if Result Type is not wide enough to hold the converted value."
pub fn convert_f_to_s_is_undefined(src_bits: u32, dst_bits: u32, v: u64) -> bool {
    let t = to_f64(src_bits, v).trunc();
    let half = 2f64.powi(dst_bits.clamp(1, 64) as i32 - 1);
    !(t >= -half && t < half)
}

/// Rounds an exact integer to float format `bits` (a width, or [`BFLOAT16`]).
///
/// An f64 result is rounded by `as` (round to nearest even). For f32 the `as` conversion from
/// the integer is also a single rounding. For f16 the integer goes through f64 first: that is
/// exact below 2^53, and anything at or above 2^53 (even after f64 rounding) is beyond the f16
/// range and becomes infinity either way, so the result is still rounded once. bfloat16 goes
/// through binary32, as SPV_KHR_bfloat16 defines it (see [`to_binary32_first`]): two roundings.
fn int_to_float(bits: u32, exact_i: Option<i64>, exact_u: u64) -> u64 {
    match (bits, exact_i) {
        (BFLOAT16, _) => from_f64(BFLOAT16, to_f64(32, int_to_float(32, exact_i, exact_u))),
        (16, Some(i)) => from_f64(16, i as f64),
        (16, None) => from_f64(16, exact_u as f64),
        (64, Some(i)) => (i as f64).to_bits(),
        (64, None) => (exact_u as f64).to_bits(),
        (_, Some(i)) => u64::from((i as f32).to_bits()),
        (_, None) => u64::from((exact_u as f32).to_bits()),
    }
}

/// `x` as the binary32 value a conversion to bfloat16 starts from: rounded to nearest even to
/// f32 (exact for f16, f32 and bfloat16 sources; an f64 rounds here, then again to bfloat16).
///
/// # Spec
/// SPV_KHR_bfloat16, added to OpFConvert, OpConvertFToU, OpConvertFToS, OpConvertSToF and
/// OpConvertUToF: "Conversions to or from floating-point values with the `BFloat16KHR` encoding
/// first convert the source value to IEEE754 binary32, and then from IEEE754 binary32 to the
/// target format." (From bfloat16 the first step is exact, "producing the exact same value", so
/// only conversions *to* bfloat16 from wider sources round twice.)
fn to_binary32_first(x: f64) -> f64 {
    f64::from(x as f32)
}

/// OpConvertSToF: "Convert value numerically from signed integer to floating point." Rounds to
/// nearest, ties to even.
pub fn convert_s_to_f(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    int_to_float(dst_bits, Some(sign_extend(src_bits, v)), 0)
}

/// OpConvertUToF: "Convert value numerically from unsigned integer to floating point." Rounds to
/// nearest, ties to even.
pub fn convert_u_to_f(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    int_to_float(dst_bits, None, truncate(src_bits, v))
}

/// OpUConvert: "Convert unsigned width. This is either a truncate or a zero extend."
pub fn uconvert(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    truncate(dst_bits, truncate(src_bits, v))
}

/// OpSConvert: "Convert signed width. This is either a truncate or a sign extend."
pub fn sconvert(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    from_signed(dst_bits, sign_extend(src_bits, v))
}

/// OpFConvert: "Convert value numerically from one floating-point width to another width."
/// Widening is exact; narrowing rounds once to nearest even (f32 and f16 values widen exactly to
/// f64, and f64 → f16 rounds once in [`super::float::f16_bits_from_f64`]), except to bfloat16,
/// which goes through binary32 ([`to_binary32_first`]).
pub fn fconvert(src_bits: u32, dst_bits: u32, v: u64) -> u64 {
    let x = to_f64(src_bits, v);
    if dst_bits == BFLOAT16 {
        return from_f64(BFLOAT16, to_binary32_first(x));
    }
    from_f64(dst_bits, x)
}

/// OpBitcast between types with different component counts: regroups the bits of `src`
/// (components of `src_bits` each) into components of `dst_bits` each. A same-width scalar
/// bitcast is the identity on canonical values. Returns `None` when the total sizes differ.
///
/// # Spec
/// "The first component (that is, the only or lowest-numbered component) of S maps to the first
/// components of L, and so on, up to the last component of S mapping to the last components of
/// L. Within this mapping, any single component of S (mapping to multiple components of L) maps
/// its lower-ordered bits to the lower-numbered components of L."
pub fn bitcast_components(src_bits: u32, src: &[u64], dst_bits: u32) -> Option<Vec<u64>> {
    let total = u64::from(src_bits) * src.len() as u64;
    if src_bits == 0 || dst_bits == 0 || dst_bits > 64 || src_bits > 64 {
        return None;
    }
    if !total.is_multiple_of(u64::from(dst_bits)) {
        return None;
    }
    // Little-endian bit stream: component i occupies bits [i*w, (i+1)*w).
    let bit = |i: u64| -> u64 {
        let c = (i / u64::from(src_bits)) as usize;
        let off = i % u64::from(src_bits);
        src.get(c).map_or(0, |&v| (v >> off) & 1)
    };
    let count = total / u64::from(dst_bits);
    let out = (0..count)
        .map(|j| {
            let base = j * u64::from(dst_bits);
            (0..u64::from(dst_bits)).fold(0u64, |acc, k| acc | (bit(base + k) << k))
        })
        .collect();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::proptest_config;
    use super::*;
    use half::f16;
    use proptest::prelude::*;

    const INTS: [u32; 4] = [8, 16, 32, 64];
    const FLOATS: [u32; 4] = [16, 32, 64, BFLOAT16];

    /// The storage width of a float format code.
    fn width(format: u32) -> u32 {
        format & 0xff
    }

    fn check_f_to_i(fb: u32, ib: u32, v: u64) {
        let x = to_f64(fb, v);
        let t = x.trunc();
        // Reference in i128: exact for every finite f16/f32 value and for f64 below 2^127.
        let u_fits = !x.is_nan() && t > -1.0 && t < 2f64.powi(ib as i32);
        let s_fits =
            !x.is_nan() && t >= -(2f64.powi(ib as i32 - 1)) && t < 2f64.powi(ib as i32 - 1);
        assert_eq!(
            convert_f_to_u_is_undefined(fb, ib, v),
            !u_fits,
            "{fb} {ib} {x}"
        );
        assert_eq!(
            convert_f_to_s_is_undefined(fb, ib, v),
            !s_fits,
            "{fb} {ib} {x}"
        );
        let u = convert_f_to_u(fb, ib, v);
        let s = convert_f_to_s(fb, ib, v);
        assert_eq!(u & !mask(ib), 0);
        assert_eq!(s & !mask(ib), 0);
        if u_fits {
            assert_eq!(u as f64, t.abs());
        } else if x.is_nan() || t < 0.0 {
            assert_eq!(u, 0);
        } else {
            assert_eq!(u, mask(ib));
        }
        if s_fits {
            assert_eq!(sign_extend(ib, s) as f64, t);
        } else if x.is_nan() {
            assert_eq!(s, 0);
        } else if t < 0.0 {
            assert_eq!(s, 1 << (ib - 1));
        } else {
            assert_eq!(s, mask(ib) >> 1);
        }
    }

    /// Reference int → float: round the i128 value to nearest even by hand, counting the bits
    /// that do not fit in the significand.
    fn round_int(fb: u32, v: i128) -> f64 {
        let (p, max_exp) = match fb {
            16 => (11, 15),
            BFLOAT16 => (8, 127),
            32 => (24, 127),
            _ => (53, 1023),
        };
        let neg = v < 0;
        let mut m = v.unsigned_abs();
        if m == 0 {
            return 0.0;
        }
        let len = 128 - m.leading_zeros();
        let mut e = 0i32;
        if len > p {
            let drop = len - p;
            let rem = m & ((1u128 << drop) - 1);
            let half = 1u128 << (drop - 1);
            m >>= drop;
            e = drop as i32;
            if rem > half || (rem == half && m & 1 == 1) {
                m += 1;
            }
        }
        let r = m as f64 * 2f64.powi(e);
        let r = if r >= 2f64.powi(max_exp + 1) {
            f64::INFINITY
        } else {
            r
        };
        if neg {
            -r
        } else {
            r
        }
    }

    /// Reference int → float format `fb`; to bfloat16 through binary32 first (SPV_KHR_bfloat16).
    fn int_reference(fb: u32, v: i128) -> f64 {
        if fb == BFLOAT16 {
            // The f32 result is an integer below 2^64: exact as i128.
            round_int(BFLOAT16, round_int(32, v) as i128)
        } else {
            round_int(fb, v)
        }
    }

    fn check_i_to_f(ib: u32, fb: u32, v: u64) {
        let s = to_f64(fb, convert_s_to_f(ib, fb, v));
        assert_eq!(
            s,
            int_reference(fb, i128::from(sign_extend(ib, v))),
            "s {ib}->{fb} {v:#x}"
        );
        let u = to_f64(fb, convert_u_to_f(ib, fb, v));
        assert_eq!(u, int_reference(fb, i128::from(v)), "u {ib}->{fb} {v:#x}");
    }

    fn check_int_widths(a: u32, b: u32, v: u64) {
        let s = i128::from(sign_extend(a, v));
        assert_eq!(uconvert(a, b, v), (u128::from(v) % (1u128 << b)) as u64);
        assert_eq!(sconvert(a, b, v), s.rem_euclid(1i128 << b) as u64);
    }

    fn check_fconvert(a: u32, b: u32, v: u64) {
        let got = fconvert(a, b, v);
        let x = to_f64(a, v);
        // Reference: through the native types, → f16 by half's f32 path where x is an f32
        // number (f64 → f16 rounding of other values is checked in `float`).
        let exact_f32 = f64::from(x as f32) == x;
        let want = match (a, b) {
            (_, 64) => Some(x.to_bits()),
            (_, 32) => Some(u64::from((x as f32).to_bits())),
            _ if a == b => Some(v),
            // To binary32 first (SPV_KHR_bfloat16), then, bfloat16 being the high half of an
            // f32, its low 16 bits rounded to nearest even.
            (_, BFLOAT16) => {
                let bits = (x as f32).to_bits();
                Some(u64::from((bits + 0x7fff + ((bits >> 16) & 1)) >> 16))
            }
            _ => exact_f32.then(|| u64::from(f16::from_f32(x as f32).to_bits())),
        };
        if x.is_nan() {
            assert!(to_f64(b, got).is_nan());
        } else if let Some(want) = want {
            assert_eq!(got, want, "{a}->{b} {x}");
        }
    }

    #[test]
    fn conversion_edges() {
        let floats = [
            0.0,
            -0.0,
            0.5,
            -0.99,
            1.0,
            -1.0,
            127.9,
            128.0,
            -128.0,
            -128.5,
            -129.0,
            255.5,
            256.0,
            65535.0,
            65536.0,
            2147483647.0,
            2147483648.0,
            -2147483648.0,
            -2147483649.0,
            1.8446744073709552e19,
            9.223372036854776e18,
            -9.223372036854776e18,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e300,
            5e-324,
        ];
        for fb in FLOATS {
            for &x in &floats {
                let v = from_f64(fb, x);
                for ib in INTS {
                    check_f_to_i(fb, ib, v);
                }
                for b in FLOATS {
                    check_fconvert(fb, b, v);
                }
            }
        }
        for ib in INTS {
            let m = mask(ib);
            for v in [
                0,
                1,
                m,
                m >> 1,
                (m >> 1) + 1,
                2049,
                4097,
                16_777_217,
                (1 << 53) + 1,
                (1 << 60) + (1 << 52) + 1,
                0xffef,
            ] {
                let v = v & m;
                for fb in FLOATS {
                    check_i_to_f(ib, fb, v);
                }
                for b in INTS {
                    check_int_widths(ib, b, v);
                }
            }
        }
        // Ties to even: 2049 is halfway between f16's 2048 and 2050.
        assert_eq!(to_f64(16, convert_u_to_f(32, 16, 2049)), 2048.0);
        assert_eq!(to_f64(16, convert_u_to_f(32, 16, 2051)), 2052.0);
        assert_eq!(to_f64(16, convert_u_to_f(32, 16, 65520)), f64::INFINITY);
        assert_eq!(convert_f_to_s(32, 8, from_f64(32, -200.0)), 0x80);
        // bfloat16 through binary32: 2^60 + 2^52 + 1 is just above a bfloat16 tie, but binary32
        // rounds it to 2^60 + 2^52, a tie, which goes to even: 2^60 (rounded once it would be
        // 2^60 + 2^53). Likewise 2^24 + 2^16 + 1 → 2^24 + 2^16 → 2^24.
        let above_tie = (1u64 << 60) + (1 << 52) + 1;
        assert_eq!(
            to_f64(BFLOAT16, convert_u_to_f(64, BFLOAT16, above_tie)),
            2f64.powi(60)
        );
        let small = (1u64 << 24) + (1 << 16) + 1;
        assert_eq!(
            to_f64(BFLOAT16, convert_s_to_f(32, BFLOAT16, small)),
            2f64.powi(24)
        );
        // And f64 → bfloat16: 1 + 2^-8 + 2^-40 becomes the tie 1 + 2^-8 in binary32, then 1.
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(to_f64(BFLOAT16, fconvert(64, BFLOAT16, x.to_bits())), 1.0);
        assert_eq!(
            to_f64(BFLOAT16, fconvert(64, BFLOAT16, (-x).to_bits())),
            -1.0
        );
        assert_eq!(to_f64(BFLOAT16, convert_u_to_f(32, BFLOAT16, 257)), 256.0);
        assert_eq!(to_f64(BFLOAT16, convert_u_to_f(32, BFLOAT16, 259)), 260.0);
    }

    #[test]
    fn bitcast_regroups() {
        assert_eq!(
            bitcast_components(32, &[0x1122_3344, 0x5566_7788], 64),
            Some(vec![0x5566_7788_1122_3344])
        );
        assert_eq!(
            bitcast_components(64, &[0x5566_7788_1122_3344], 16),
            Some(vec![0x3344, 0x1122, 0x7788, 0x5566])
        );
        assert_eq!(
            bitcast_components(8, &[1, 2, 3, 4], 32),
            Some(vec![0x0403_0201])
        );
        assert_eq!(bitcast_components(32, &[7], 32), Some(vec![7]));
        assert_eq!(bitcast_components(32, &[7, 8, 9], 64), None);
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn conversion_random(v: u64, a in 0usize..4, b in 0usize..4, fa in 0usize..4, fb in 0usize..4, scale in -70i32..70) {
            let (ia, ib, f1, f2) = (INTS[a], INTS[b], FLOATS[fa], FLOATS[fb]);
            check_int_widths(ia, ib, truncate(ia, v));
            check_i_to_f(ia, f1, truncate(ia, v));
            check_fconvert(f1, f2, truncate(width(f1), v));
            // Float inputs around the integer ranges.
            let x = from_f64(f1, (sign_extend(64, v) as f64 / 2f64.powi(63)) * 2f64.powi(scale));
            check_f_to_i(f1, ia, x);
            check_f_to_i(f1, ia, truncate(width(f1), v));
        }

        #[test]
        fn bitcast_round_trips(words in proptest::collection::vec(any::<u64>(), 1..5), a in 0usize..4, b in 0usize..4) {
            let (wa, wb) = (INTS[a], INTS[b]);
            let src: Vec<u64> = words.iter().map(|&w| truncate(wa, w)).collect();
            if let Some(mid) = bitcast_components(wa, &src, wb) {
                prop_assert!(mid.iter().all(|&m| m & !mask(wb) == 0));
                prop_assert_eq!(bitcast_components(wb, &mid, wa), Some(src));
            } else {
                prop_assert!(!(wa as usize * src.len()).is_multiple_of(wb as usize));
            }
        }
    }
}
