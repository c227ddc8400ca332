//! GLSL.std.450 instructions that split or build a float from its parts: Modf, ModfStruct, Frexp,
//! FrexpStruct and Ldexp. All results are exact or rounded once.

use super::super::float::{from_f64, to_f64};

/// Modf / ModfStruct: returns `(fractional part, whole number part)`.
///
/// # Spec
/// "Result is the fractional part of x; the whole number part is stored in i. ... Both the
/// result and the output parameter will have the same sign as x."
pub fn modf(bits: u32, x: u64) -> (u64, u64) {
    let v = to_f64(bits, x);
    let whole = v.trunc();
    // x - trunc(x) is exact; an infinity has a zero fraction.
    let fract = if v.is_infinite() { 0.0 } else { v - whole };
    (
        from_f64(bits, fract.copysign(v)),
        from_f64(bits, whole.copysign(v)),
    )
}

/// frexp on f64: `(m, e)` with `x = m * 2^e` and `|m|` in [0.5, 1); zero, infinity and NaN give
/// `(x, 0)`.
fn frexp_f64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let raw = x.to_bits();
    let biased = ((raw >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: scale into the normal range exactly, then correct the exponent.
        let (m, e) = frexp_f64(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((raw & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, biased - 1022)
}

/// Frexp / FrexpStruct: returns `(significand, exponent)`; the exponent is an exact integer for
/// the caller to truncate to its Exp type's width.
///
/// # Spec
/// "Splits x into a floating-point significand in the range [0.5, 1.0) and an integral exponent
/// of two, such that: x = significand * 2^exponent. ... If x is a zero, the exponent and
/// significand are both 0. If x is an infinity or a NaN, the results are undefined." (tangle
/// returns x and 0 then; see [`frexp_is_undefined`].)
pub fn frexp(bits: u32, x: u64) -> (u64, i64) {
    let (m, e) = frexp_f64(to_f64(bits, x));
    (from_f64(bits, m), i64::from(e))
}

/// Whether Frexp is undefined: "If x is an infinity or a NaN, the results are undefined."
pub fn frexp_is_undefined(bits: u32, x: u64) -> bool {
    !to_f64(bits, x).is_finite()
}

/// `x * 2^e` correctly rounded in f64 (gradual underflow rounds once, to nearest even).
fn ldexp_f64(x: f64, e: i64) -> f64 {
    if x == 0.0 || !x.is_finite() || e == 0 {
        return x;
    }
    // Beyond ±4000 every finite double over- or underflows the same way.
    let e = e.clamp(-4000, 4000) as i32;
    let (m, ex) = frexp_f64(x);
    let t = ex + e; // |x * 2^e| = |m| * 2^t with |m| in [0.5, 1)
    let pow2 = |k: i32| f64::from_bits(((k + 1023) as u64) << 52); // 2^k for k in [-1022, 1023]
    if t > 1024 {
        return f64::INFINITY.copysign(x);
    }
    if t >= -1021 {
        // (2m) * 2^(t-1): an exact scaling into the normal range.
        return (m * 2.0) * pow2(t - 1);
    }
    if t + 1074 < -1 {
        // Below half the smallest subnormal: rounds to zero.
        return 0.0f64.copysign(x);
    }
    // Subnormal result: count in units of 2^-1074 and round that integer once.
    let units = (m * 2f64.powi(t + 1074)).round_ties_even();
    (units * f64::from_bits(1)).copysign(x)
}

/// Ldexp: "Builds a floating-point number from x and the corresponding integral exponent of two
/// in exp: significand * 2^exponent". `exp` is the exact (sign-extended) Exp operand. Rounded
/// once: the f64 product is exact for f16 and f32 inputs in their ranges.
pub fn ldexp(bits: u32, x: u64, exp: i64) -> u64 {
    from_f64(bits, ldexp_f64(to_f64(bits, x), exp))
}

/// Whether Ldexp is undefined: "If this product is too large to be represented in the
/// floating-point type, the resulting value is undefined." (tangle returns the infinity.)
pub fn ldexp_is_undefined(bits: u32, x: u64, exp: i64) -> bool {
    to_f64(bits, x).is_finite() && to_f64(bits, ldexp(bits, x, exp)).is_infinite()
}

#[cfg(test)]
mod tests {
    use super::super::super::{proptest_config, truncate};
    use super::super::tests::{fv, same, FLOATS};
    use super::*;
    use half::f16;
    use proptest::prelude::*;

    #[test]
    fn modf_frexp_ldexp() {
        for bits in FLOATS {
            for x in [
                3.75,
                -3.75,
                -2.0,
                0.0,
                -0.0,
                0.25,
                1e4,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ] {
                let (fr, wh) = modf(bits, fv(bits, x));
                let (fr, wh) = (to_f64(bits, fr), to_f64(bits, wh));
                assert_eq!(wh, x.trunc());
                assert_eq!(fr.is_sign_negative(), x.is_sign_negative());
                assert_eq!(wh.is_sign_negative(), x.is_sign_negative());
                if x.is_finite() {
                    assert_eq!(fr + wh, x);
                } else {
                    assert_eq!(fr, 0.0);
                }
            }
            assert_eq!(frexp(bits, fv(bits, 8.0)), (fv(bits, 0.5), 4));
            assert_eq!(frexp(bits, fv(bits, -0.375)), (fv(bits, -0.75), -1));
            assert_eq!(frexp(bits, fv(bits, 0.0)), (fv(bits, 0.0), 0));
            assert!(frexp_is_undefined(bits, fv(bits, f64::NAN)));
            assert_eq!(to_f64(bits, ldexp(bits, fv(bits, 0.75), 3)), 6.0);
            assert!(ldexp_is_undefined(bits, fv(bits, 1.0), 2000));
            assert!(!ldexp_is_undefined(bits, fv(bits, 1.0), 2));
        }
        // Subnormal frexp: f16 0x0001 = 2^-24.
        assert_eq!(frexp(16, 1), (fv(16, 0.5), -23));
        assert_eq!(frexp(64, 1), (fv(64, 0.5), -1073));
        // Gradual underflow rounds once, to nearest even.
        assert_eq!(ldexp(64, fv(64, 1.5), -1074), 2); // 1.5 units → 2 units
        assert_eq!(ldexp(64, fv(64, 1.0), -1075), 0); // 0.5 units → 0 (tie, even)
        assert_eq!(ldexp(64, fv(64, 1.5), -1075), 1); // 0.75 units → 1
        assert_eq!(ldexp(64, fv(64, -1.0), -1080), 1 << 63);
        assert_eq!(ldexp(32, fv(32, 1.5), -149), 2);
        assert_eq!(ldexp(16, fv(16, 1.5), -24), 2);
        assert_eq!(
            to_f64(64, ldexp(64, fv(64, 0.5), 1025)),
            2f64.powi(1023) * 2.0 * 0.5 * 2.0
        );
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn ldexp_random(a: u64, e in -1200i64..1200, w in 0usize..3) {
            let bits = FLOATS[w];
            let x = truncate(bits, a);
            let xf = to_f64(bits, x);
            let got = ldexp(bits, x, e);
            // Reference: frexp then ldexp back is the identity for finite x.
            let (m, ex) = frexp(bits, x);
            if xf.is_finite() {
                prop_assert!(same(bits, ldexp(bits, m, ex), x));
            }
            // Reference: for f16/f32, the exact f64 product rounded by the native conversion;
            // for f64, repeated exact doubling/halving while the result stays normal.
            let want = match bits {
                16 => Some(u64::from(f16::from_f32((xf * 2f64.powi(e as i32)) as f32).to_bits())),
                32 => Some(u64::from(((xf * 2f64.powi(e as i32)) as f32).to_bits())),
                _ => {
                    let r = xf * 2f64.powi(e as i32);
                    (r == 0.0 || r.abs() >= f64::MIN_POSITIVE || !r.is_finite()).then(|| {
                        let mut v = xf;
                        for _ in 0..e.abs() { v = if e > 0 { v * 2.0 } else { v * 0.5 }; }
                        v.to_bits()
                    })
                }
            };
            // f16 from f32 can double round only for values outside f32's range; skip those.
            if let Some(want) = want {
                if bits != 16 || (xf * 2f64.powi(e as i32)).abs() < 1e30 {
                    prop_assert!(same(bits, got, want), "{} * 2^{} = {} vs {}", xf, e, to_f64(bits, got), to_f64(bits, want));
                }
            }
        }
    }
}
