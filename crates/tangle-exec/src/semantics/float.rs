//! Core SPIR-V floating-point instructions (SPIR-V spec 3.52.13 "Arithmetic Instructions" and
//! 3.52.15 "Relational and Logical Instructions") for f16, f32 and f64.
//!
//! Values are IEEE bit patterns in the low bits of a `u64` (see [`super`]). f16 and f32
//! arithmetic is computed in f64 and rounded once to the result width: f64 carries more than
//! 2·p + 2 significand bits for p = 11 and p = 24, so one rounding of the f64 result of an add,
//! subtract, multiply, divide or square root gives the correctly rounded narrow result
//! (Figueroa, "When is double rounding innocuous?"). Widths other than 16 and 64 are read as
//! 32 (lowering only produces the three IEEE widths). bfloat16, a storage, conversion and
//! cooperative-matrix component format with no arithmetic (SPV_KHR_bfloat16), has its two
//! conversions ([`bf16_to_f64`], [`bf16_bits_from_f64`]), which [`to_f64`] and [`from_f64`]
//! reach through the format code [`BFLOAT16`].

use half::f16;

/// The format code of bfloat16 in the `bits` argument of float operations: above every width, so
/// no IEEE width is taken for it (its storage width, 16, is the low byte).
pub const BFLOAT16: u32 = 0x100 | 16;

/// The value of a float bit pattern of format `bits` (a width, or [`BFLOAT16`]), widened exactly
/// to f64.
#[inline]
pub fn to_f64(bits: u32, v: u64) -> f64 {
    match bits {
        16 => f16::from_bits(v as u16).to_f64(),
        BFLOAT16 => bf16_to_f64(v),
        64 => f64::from_bits(v),
        _ => f64::from(f32::from_bits(v as u32)),
    }
}

/// The bit pattern of `x` rounded once (to nearest, ties to even) to format `bits` (a width, or
/// [`BFLOAT16`]).
#[inline]
pub fn from_f64(bits: u32, x: f64) -> u64 {
    match bits {
        16 => u64::from(f16_bits_from_f64(x)),
        BFLOAT16 => u64::from(bf16_bits_from_f64(x)),
        64 => x.to_bits(),
        _ => u64::from((x as f32).to_bits()),
    }
}

/// `x` rounded once, to nearest with ties to even, to f16 bits.
///
/// `half::f16::from_f64` is not used: it rounds through f32 where the CPU has F16C (a double
/// rounding) and otherwise drops the low 32 bits of the significand before rounding (losing the
/// sticky bit), so `1 + 2^-11 + 2^-40` would become 1.0 instead of `1 + 2^-10`.
#[inline]
pub fn f16_bits_from_f64(x: f64) -> u16 {
    small_float_bits(x, 10, -14)
}

/// The value of a bfloat16 bit pattern (`OpTypeFloat 16 BFloat16KHR`): the high half of an
/// f32, so widening is exact.
pub fn bf16_to_f64(v: u64) -> f64 {
    f64::from(f32::from_bits((v as u32 & 0xffff) << 16))
}

/// `x` rounded once, to nearest with ties to even, to bfloat16 bits (8 significand bits, the
/// exponent range of f32), for results computed wider (the cooperative-matrix MulAdd). The
/// conversion instructions reach it through binary32 first, as SPV_KHR_bfloat16 defines them
/// ([`super::convert::fconvert`]).
#[inline]
pub fn bf16_bits_from_f64(x: f64) -> u16 {
    small_float_bits(x, 7, -126)
}

/// `x` rounded once (to nearest, ties to even) to a 16-bit IEEE-style format with `frac`
/// stored significand bits and smallest normal exponent `emin` (f16: 10, -14; bf16: 7, -126).
///
/// On the bits alone (no `powi`, no `rint`: the cooperative-matrix MulAdd rounds every step of
/// an f16 accumulator through here): `|x| = m·2^(e-52)` with the 53-bit significand `m`; the
/// result counts units of `2^(max(e, emin) - frac)` (the format's spacing at `x`, subnormals
/// included), so the `d` low bits of `m` are dropped and rounded once, on the exact
/// remainder (every bit of `x` is in `m`: no sticky bit is lost).
#[inline]
fn small_float_bits(x: f64, frac: u32, emin: i32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exponent_field = ((1u16 << (15 - frac)) - 1) << frac;
    if x.is_nan() {
        // A quiet NaN keeping the top payload bits.
        let payload = ((bits >> (52 - frac)) as u16) & ((1 << (frac - 1)) - 1);
        return sign | exponent_field | (1 << (frac - 1)) | payload;
    }
    let magnitude = bits & !(1 << 63);
    // The unbiased exponent (f64 subnormals read -1023: far below every case but zero).
    let e = (magnitude >> 52) as i32 - 1023;
    if e > 1 - emin {
        // At least 2^(emax+1), infinity included.
        return sign | exponent_field;
    }
    if e < emin - frac as i32 - 1 {
        // Below half the smallest subnormal (zero and f64 subnormals included): rounds to zero.
        return sign;
    }
    let m = (magnitude & ((1 << 52) - 1)) | (1 << 52);
    // Bits to drop: 52 - frac for a normal result, more below emin; at most 53 (the early
    // return above bounds emin - e by frac + 1), so the shifts stay below 64.
    let d = 52 - frac + (emin - e).max(0) as u32;
    let kept = m >> d;
    let rest = m & ((1 << d) - 1);
    let half = 1 << (d - 1);
    let up = rest > half || (rest == half && kept & 1 == 1);
    let units = kept + u64::from(up);
    // A normal result's units are in [2^frac, 2^(frac+1)]: adding them to the exponent field
    // below moves the implicit bit, and a carry to 2^(frac+1), into the exponent (up to
    // infinity's pattern from the largest binade); a subnormal's are the fraction itself, a
    // carry to 2^frac being the smallest normal's pattern.
    let biased = ((e.max(emin) - emin) as u64) << frac;
    sign | (biased + units) as u16
}

/// [`small_float_bits`] as it was before it worked on the bits (scalings by `powi` and
/// `round_ties_even`, which the cooperative-matrix MulAdd with an f16 accumulator spent 6% of
/// a llama.cpp run in): the model the bit-level rounding must match bit for bit.
#[cfg(test)]
pub(crate) fn powi_model(x: f64, frac: u32, emin: i32) -> u16 {
    let sign = ((x.to_bits() >> 48) & 0x8000) as u16;
    let exponent_field = ((1u16 << (15 - frac)) - 1) << frac;
    if x.is_nan() {
        // A quiet NaN keeping the top payload bits.
        let payload = ((x.to_bits() >> (52 - frac)) as u16) & ((1 << (frac - 1)) - 1);
        return sign | exponent_field | (1 << (frac - 1)) | payload;
    }
    let a = x.abs();
    let emax = 1 - emin;
    // Halfway between the largest finite value (odd significand) and 2^(emax+1): ties to even
    // go up, to infinity (65520 for f16).
    if a >= (2.0 - 2f64.powi(-(frac as i32) - 1)) * 2f64.powi(emax) {
        return sign | exponent_field;
    }
    if a < 2f64.powi(emin) {
        // Subnormal range: count units of the smallest subnormal (an exact scaling) and round
        // that once. A result of 2^frac units is the smallest normal, whose bit pattern is
        // exactly 1 << frac.
        return sign | (a * 2f64.powi(frac as i32 - emin)).round_ties_even() as u16;
    }
    // Normal range: scale the significand to [2^frac, 2^(frac+1)) exactly and round once. A
    // carry to 2^(frac+1) moves into the exponent field by plain addition.
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let q = (a * 2f64.powi(frac as i32 - e)).round_ties_even() as u16;
    sign | ((((e - emin + 1) as u16) << frac) + (q - (1 << frac)))
}

/// Applies an f64 function to one operand and rounds once to `bits`.
pub fn map1(bits: u32, a: u64, f: impl Fn(f64) -> f64) -> u64 {
    from_f64(bits, f(to_f64(bits, a)))
}

/// Applies an f64 function to two operands and rounds once to `bits`.
#[inline]
pub fn map2(bits: u32, a: u64, b: u64, f: impl Fn(f64, f64) -> f64) -> u64 {
    from_f64(bits, f(to_f64(bits, a), to_f64(bits, b)))
}

/// Applies an f64 function to three operands and rounds once to `bits`.
#[inline]
pub fn map3(bits: u32, a: u64, b: u64, c: u64, f: impl Fn(f64, f64, f64) -> f64) -> u64 {
    from_f64(bits, f(to_f64(bits, a), to_f64(bits, b), to_f64(bits, c)))
}

/// The sign bit of a float of width `bits`.
fn sign_bit(bits: u32) -> u64 {
    match bits {
        16 => 1 << 15,
        64 => 1 << 63,
        _ => 1 << 31,
    }
}

/// OpFAdd: "Floating-point addition of Operand 1 and Operand 2."
#[inline]
pub fn fadd(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| x + y)
}

/// OpFSub: "Floating-point subtraction of Operand 2 from Operand 1."
#[inline]
pub fn fsub(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| x - y)
}

/// OpFMul: "Floating-point multiplication of Operand 1 and Operand 2."
#[inline]
pub fn fmul(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| x * y)
}

/// OpFDiv: "Floating-point division of Operand 1 divided by Operand 2." Division by zero gives
/// the IEEE infinity or NaN.
#[inline]
pub fn fdiv(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| x / y)
}

/// OpFRem: "The floating-point remainder whose sign matches the sign of Operand 1." This is the
/// truncated remainder (C `fmod`), which is exact; a zero divisor gives NaN (see
/// [`fremainder_is_undefined`]).
pub fn frem(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| x % y)
}

/// OpFMod: "The floating-point remainder whose sign matches the sign of Operand 2."
///
/// Computed as the truncated remainder r, then r + Operand 2 when r is non-zero with the wrong
/// sign (one rounding); a zero remainder takes the sign of Operand 2, as the SPIRV-LLVM
/// translator lowers it. A zero divisor gives NaN.
pub fn fmod(bits: u32, a: u64, b: u64) -> u64 {
    map2(bits, a, b, |x, y| {
        let r = x % y;
        if r == 0.0 {
            r.copysign(y)
        } else if r.is_sign_negative() != y.is_sign_negative() {
            r + y
        } else {
            r
        }
    })
}

/// Whether OpFRem / OpFMod is undefined.
///
/// # Spec
/// "Behavior is undefined if Operand 2 is 0."
pub fn fremainder_is_undefined(bits: u32, b: u64) -> bool {
    to_f64(bits, b) == 0.0
}

/// OpFNegate: "Inverts the sign bit of Operand." Exact, also for NaN and zero.
pub fn fnegate(bits: u32, a: u64) -> u64 {
    a ^ sign_bit(bits)
}

/// OpDot: "Dot product of Vector 1 and Vector 2." The products and the sum are computed in f64
/// and rounded once (within Vulkan's "inherited from OpFMul and OpFAdd" precision).
pub fn fdot(bits: u32, a: &[u64], b: &[u64]) -> u64 {
    if bits == 64 {
        // f64 has no wider type: accumulate with one fused step per component.
        let sum = a.iter().zip(b).fold(0.0f64, |acc, (&x, &y)| {
            f64::from_bits(x).mul_add(f64::from_bits(y), acc)
        });
        return sum.to_bits();
    }
    let sum: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| to_f64(bits, x) * to_f64(bits, y))
        .sum();
    from_f64(bits, sum)
}

/// A float comparison: `ordered` gives the result when either operand is NaN inverted
/// (ordered comparisons are false on NaN, unordered ones true).
fn compare(bits: u32, a: u64, b: u64, ordered: bool, f: impl Fn(f64, f64) -> bool) -> u64 {
    let (x, y) = (to_f64(bits, a), to_f64(bits, b));
    if x.is_nan() || y.is_nan() {
        return u64::from(!ordered);
    }
    u64::from(f(x, y))
}

/// OpFOrdEqual: "Floating-point comparison for being ordered and equal."
pub fn ford_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x == y)
}

/// OpFUnordEqual: "Floating-point comparison for being unordered or equal."
pub fn funord_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x == y)
}

/// OpFOrdNotEqual: "Floating-point comparison for being ordered and not equal."
pub fn ford_not_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x != y)
}

/// OpFUnordNotEqual: "Floating-point comparison for being unordered or not equal."
pub fn funord_not_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x != y)
}

/// OpFOrdLessThan: "Floating-point comparison if operands are ordered and Operand 1 is less than
/// Operand 2."
pub fn ford_less_than(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x < y)
}

/// OpFUnordLessThan: "Floating-point comparison if operands are unordered or Operand 1 is less
/// than Operand 2."
pub fn funord_less_than(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x < y)
}

/// OpFOrdGreaterThan.
pub fn ford_greater_than(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x > y)
}

/// OpFUnordGreaterThan.
pub fn funord_greater_than(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x > y)
}

/// OpFOrdLessThanEqual.
pub fn ford_less_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x <= y)
}

/// OpFUnordLessThanEqual.
pub fn funord_less_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x <= y)
}

/// OpFOrdGreaterThanEqual.
pub fn ford_greater_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, true, |x, y| x >= y)
}

/// OpFUnordGreaterThanEqual.
pub fn funord_greater_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    compare(bits, a, b, false, |x, y| x >= y)
}

/// OpIsNan: "Result is true if x is a NaN for the floating-point encoding used by the type of x."
pub fn is_nan(bits: u32, a: u64) -> u64 {
    u64::from(to_f64(bits, a).is_nan())
}

/// OpIsInf: "Result is true if x is an IEEE Inf, otherwise result is false"
pub fn is_inf(bits: u32, a: u64) -> u64 {
    u64::from(to_f64(bits, a).is_infinite())
}

/// OpQuantizeToF16 on an f32 bit pattern: "Quantize a floating-point value to what is expressible
/// by a 16-bit floating-point value."
///
/// # Spec
/// "If Value is an infinity, the result is the same infinity. If Value is a NaN, the result is a
/// NaN, but not necessarily the same NaN. If Value is positive with a magnitude too large to
/// represent as a 16-bit floating-point value, the result is positive infinity. If Value is
/// negative with a magnitude too large to represent as a 16-bit floating-point value, the result
/// is negative infinity. If the magnitude of Value is too small to represent as a normalized
/// 16-bit floating-point value, the result may be either +0 or -0."
///
/// Rounding is to nearest even; a result below the f16 normal range becomes a zero of the same
/// sign.
pub fn quantize_to_f16(a: u64) -> u64 {
    let x = f32::from_bits(a as u32);
    let h = f16::from_f32(x);
    // Subnormal: finite, non-zero and not normal.
    let h = if h.is_finite() && !h.is_normal() {
        f16::ZERO.copysign(h)
    } else {
        h
    };
    u64::from(h.to_f32().to_bits())
}

#[cfg(test)]
mod tests {
    use super::super::proptest_config;
    use super::*;
    use proptest::prelude::*;

    const WIDTHS: [u32; 3] = [16, 32, 64];

    fn interesting(bits: u32) -> Vec<u64> {
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            -2.5,
            3.0,
            1e-5,
            65504.0,
            -65504.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            6.0e-8,
            1e30,
            -7.0e-40,
        ]
        .iter()
        .map(|&x| from_f64(bits, x))
        .chain(match bits {
            16 => vec![0x0001, 0x03ff, 0x0400, 0x7bff, 0x8001],
            32 => vec![0x0000_0001, 0x007f_ffff, 0x0080_0000, 0x7f7f_ffff],
            _ => vec![1, 0x000f_ffff_ffff_ffff, 0x7fef_ffff_ffff_ffff],
        })
        .collect()
    }

    fn same(bits: u32, got: u64, want: u64) -> bool {
        let (g, w) = (to_f64(bits, got), to_f64(bits, want));
        (g.is_nan() && w.is_nan()) || got == want
    }

    /// Independent reference: each width's own native arithmetic (`half` computes f16 in f32 and
    /// rounds once, a different route from the f64 one under test).
    fn reference(bits: u32, op: &str, a: u64, b: u64) -> u64 {
        match bits {
            16 => {
                let (x, y) = (f16::from_bits(a as u16), f16::from_bits(b as u16));
                let r = match op {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "div" => x / y,
                    _ => x % y,
                };
                u64::from(r.to_bits())
            }
            32 => {
                let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
                let r = match op {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "div" => x / y,
                    _ => x % y,
                };
                u64::from(r.to_bits())
            }
            _ => {
                let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                let r = match op {
                    "add" => x + y,
                    "sub" => x - y,
                    "mul" => x * y,
                    "div" => x / y,
                    _ => x % y,
                };
                r.to_bits()
            }
        }
    }

    fn check_pair(bits: u32, a: u64, b: u64) {
        for (op, got) in [
            ("add", fadd(bits, a, b)),
            ("sub", fsub(bits, a, b)),
            ("mul", fmul(bits, a, b)),
            ("div", fdiv(bits, a, b)),
            ("rem", frem(bits, a, b)),
        ] {
            let want = reference(bits, op, a, b);
            assert!(
                same(bits, got, want),
                "{op} {bits} {a:#x} {b:#x}: {got:#x} vs {want:#x}"
            );
        }
        let (x, y) = (to_f64(bits, a), to_f64(bits, b));
        // FMod reference: the native remainder, moved to y's sign by one native addition.
        let r = reference(bits, "rem", a, b);
        let rf = to_f64(bits, r);
        let want = if rf != 0.0 && !rf.is_nan() && rf.is_sign_negative() != y.is_sign_negative() {
            reference(bits, "add", r, b)
        } else if rf == 0.0 {
            from_f64(bits, rf.copysign(y))
        } else {
            r
        };
        let got = fmod(bits, a, b);
        assert!(
            same(bits, got, want),
            "fmod {bits} {x} {y}: {got:#x} vs {want:#x}"
        );
        // FMod: the result has Operand 2's sign and differs from FRem by a multiple of y.
        let m = to_f64(bits, got);
        if x.is_finite() && y.is_finite() && y != 0.0 {
            assert!(!m.is_nan());
            assert_eq!(
                m.is_sign_negative(),
                y.is_sign_negative(),
                "fmod sign {x} {y} = {m}"
            );
            assert!(m.abs() <= y.abs());
        }
        assert_eq!(fremainder_is_undefined(bits, b), y == 0.0);
        let nan = x.is_nan() || y.is_nan();
        let cases = [
            (
                ford_equal(bits, a, b),
                !nan && x == y,
                nan || x == y,
                funord_equal(bits, a, b),
            ),
            (
                ford_not_equal(bits, a, b),
                !nan && x != y,
                nan || x != y,
                funord_not_equal(bits, a, b),
            ),
            (
                ford_less_than(bits, a, b),
                !nan && x < y,
                nan || x < y,
                funord_less_than(bits, a, b),
            ),
            (
                ford_less_than_equal(bits, a, b),
                !nan && x <= y,
                nan || x <= y,
                funord_less_than_equal(bits, a, b),
            ),
            (
                ford_greater_than(bits, a, b),
                !nan && x > y,
                nan || x > y,
                funord_greater_than(bits, a, b),
            ),
            (
                ford_greater_than_equal(bits, a, b),
                !nan && x >= y,
                nan || x >= y,
                funord_greater_than_equal(bits, a, b),
            ),
        ];
        for (ord, ord_want, unord_want, unord) in cases {
            assert_eq!(ord, u64::from(ord_want));
            assert_eq!(unord, u64::from(unord_want));
        }
        assert_eq!(is_nan(bits, a), u64::from(x.is_nan()));
        assert_eq!(is_inf(bits, a), u64::from(x.is_infinite()));
        let n = to_f64(bits, fnegate(bits, a));
        assert!(
            (n.is_nan() && x.is_nan()) || (n == -x && n.is_sign_negative() != x.is_sign_negative())
        );
    }

    #[test]
    fn float_edges() {
        for bits in WIDTHS {
            for &a in &interesting(bits) {
                for &b in &interesting(bits) {
                    check_pair(bits, a, b);
                }
            }
        }
        // Correct rounding of f16: 1 + 2^-11 is a tie and rounds to even (1.0).
        let one = from_f64(16, 1.0);
        assert_eq!(fadd(16, one, from_f64(16, 2f64.powi(-11))), one);
        assert_eq!(
            to_f64(16, fmod(16, from_f64(16, -7.0), from_f64(16, 3.0))),
            2.0
        );
        assert_eq!(
            to_f64(32, fmod(32, from_f64(32, 7.0), from_f64(32, -3.0))),
            -2.0
        );
        assert_eq!(
            to_f64(32, frem(32, from_f64(32, -7.0), from_f64(32, 3.0))),
            -1.0
        );
    }

    /// The two 16-bit formats' (stored significand bits, smallest normal exponent).
    const SMALL_FORMATS: [(u32, i32); 2] = [(10, -14), (7, -126)];

    /// Every binade from below half the smallest subnormal to past the overflow threshold, the
    /// bits below each format's rounding point at zero, one, just under, at and just over
    /// the halfway point (ties), and all ones, both signs, random bits above: the bit-level
    /// rounding gives the model's bits for each, and for the special values.
    #[test]
    fn bit_level_rounding_matches_the_model() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_3210_0000_0000),
            f64::MAX,
            -f64::MAX,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            -f64::from_bits(0x000f_ffff_ffff_ffff),
            65504.0,
            65519.999,
            65520.0,
            -65520.0,
            2f64.powi(-25),
            2f64.powi(-25) + 2f64.powi(-70),
            3.0 * 2f64.powi(-25),
            2f64.powi(-14) - 2f64.powi(-25),
            3.4e38,
            -2f64.powi(-134),
            2f64.powi(-134) + 2f64.powi(-200),
        ];
        let mut checked = 0;
        for (frac, emin) in SMALL_FORMATS {
            for &x in &specials {
                assert_eq!(
                    small_float_bits(x, frac, emin),
                    powi_model(x, frac, emin),
                    "{x:e}"
                );
            }
            for e in (emin - frac as i32 - 3)..=(3 - emin) {
                let d = (52 - frac as i32 + (emin - e).max(0)).min(52) as u32;
                let low = (1u64 << d) - 1;
                let half = 1u64 << (d - 1);
                for tail in [0, 1, half - 1, half, half + 1, low, next()] {
                    for _ in 0..4 {
                        let f = (next() & !low | tail & low) & ((1 << 52) - 1);
                        let sign = next() & (1 << 63);
                        let x = f64::from_bits(sign | (((e + 1023) as u64) << 52) | f);
                        let (got, want) =
                            (small_float_bits(x, frac, emin), powi_model(x, frac, emin));
                        assert_eq!(
                            got,
                            want,
                            "{x:e} ({:#x}), format ({frac}, {emin})",
                            x.to_bits()
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 8_000, "{checked}");
    }

    #[test]
    fn f16_rounding_keeps_the_sticky_bit() {
        let r = |x: f64| f16::from_bits(f16_bits_from_f64(x)).to_f64();
        assert_eq!(
            r(1.0 + 2f64.powi(-11) + 2f64.powi(-40)),
            1.0 + 2f64.powi(-10)
        );
        assert_eq!(r(1.0 + 2f64.powi(-11)), 1.0);
        assert_eq!(r(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2f64.powi(-9));
        assert_eq!(r(2f64.powi(-25) + 2f64.powi(-60)), 2f64.powi(-24));
        assert_eq!(r(2f64.powi(-25)), 0.0);
        assert_eq!(r(3.0 * 2f64.powi(-25)), 2f64.powi(-23));
        assert_eq!(r(2f64.powi(-14) - 2f64.powi(-26)), 2f64.powi(-14));
        assert_eq!(r(65519.99), 65504.0);
        assert_eq!(r(65520.0), f64::INFINITY);
        assert_eq!(r(-1e300), f64::NEG_INFINITY);
        // bf16: 1 + 2^-8 + 2^-40 is above the midpoint; through f32 it would tie down to 1.0.
        assert_eq!(
            bf16_bits_from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
            0x3f81
        );
        assert_eq!(bf16_bits_from_f64(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(bf16_bits_from_f64(f64::INFINITY), 0x7f80);
        assert_eq!(bf16_bits_from_f64(3.4e38), 0x7f80);
        assert_eq!(bf16_bits_from_f64(-2f64.powi(-133)), 0x8001);
        assert_eq!(bf16_to_f64(0x3f80), 1.0);
        assert_eq!(f16_bits_from_f64(-0.0), 0x8000);
        assert_eq!(f16_bits_from_f64(-1e-300), 0x8000);
        assert!(r(f64::NAN).is_nan());
        // f16 addition whose exact sum has a bit below the 21st: 1 + (2^-11 + 2^-21).
        let b = from_f64(16, 2f64.powi(-11) + 2f64.powi(-21));
        assert_eq!(to_f64(16, b), 2f64.powi(-11) + 2f64.powi(-21));
        assert_eq!(
            to_f64(16, fadd(16, from_f64(16, 1.0), b)),
            1.0 + 2f64.powi(-10)
        );
    }

    #[test]
    fn quantize_edges() {
        let q = |x: f32| f32::from_bits(quantize_to_f16(u64::from(x.to_bits())) as u32);
        assert_eq!(q(1.0), 1.0);
        assert_eq!(q(65504.0), 65504.0);
        assert_eq!(q(65519.0), 65504.0);
        assert_eq!(q(65520.0), f32::INFINITY);
        assert_eq!(q(-1e10), f32::NEG_INFINITY);
        assert_eq!(q(f32::INFINITY), f32::INFINITY);
        assert!(q(f32::NAN).is_nan());
        // 2^-15 is an f16 denormal: flushed to a zero keeping the sign.
        assert_eq!(q(2f32.powi(-15)).to_bits(), 0);
        assert_eq!(q(-(2f32.powi(-15))).to_bits(), 0x8000_0000);
        assert_eq!(q(2f32.powi(-14)), 2f32.powi(-14));
        // 1 + 2^-12 rounds to 1 (f16 has 10 fraction bits).
        assert_eq!(q(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(q(1.0 + 3.0 * 2f32.powi(-11)), 1.0 + 2f32.powi(-9));
    }

    #[test]
    fn dot_products() {
        let v = |bits, xs: &[f64]| xs.iter().map(|&x| from_f64(bits, x)).collect::<Vec<_>>();
        for bits in WIDTHS {
            let got = fdot(
                bits,
                &v(bits, &[1.0, 2.0, 3.0]),
                &v(bits, &[4.0, -5.0, 6.0]),
            );
            assert_eq!(to_f64(bits, got), 12.0);
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn float_random(a: u64, b: u64, small in -30i32..30, w in 0usize..3) {
            let bits = WIDTHS[w];
            let (a, b) = (super::super::truncate(bits, a), super::super::truncate(bits, b));
            check_pair(bits, a, b);
            // Also near-equal magnitudes, where rounding matters most.
            let c = from_f64(bits, to_f64(bits, a) * 2f64.powi(small));
            check_pair(bits, a, c);
        }

        #[test]
        fn f16_rounding_random(a: u32, m: u64, e in -30i32..17) {
            // Values that are f32 numbers: f32 → f16 (F16C or half's full-mantissa fallback)
            // is a single rounding, an independent reference.
            let x = f32::from_bits(a);
            let want = f16::from_f32(x);
            let got = f16_bits_from_f64(f64::from(x));
            prop_assert!(got == want.to_bits() || (x.is_nan() && f16::from_bits(got).is_nan()));
            // Any f64 in the normal f16 range: the result is the nearer of the two f16
            // neighbours (differences are exact by Sterbenz's lemma), ties to even.
            let y = f64::from_bits((m & 0x000f_ffff_ffff_ffff) | (1023u64 << 52)) * 2f64.powi(e);
            if (2f64.powi(-14)..65504.0).contains(&y) {
                let got = f16::from_bits(f16_bits_from_f64(y));
                let (lo, hi) = if got.to_f64() <= y {
                    (got, f16::from_bits(got.to_bits() + 1))
                } else {
                    (f16::from_bits(got.to_bits() - 1), got)
                };
                prop_assert!(lo.to_f64() <= y && y <= hi.to_f64());
                let (dl, dh) = (y - lo.to_f64(), hi.to_f64() - y);
                let want = if dl < dh || (dl == dh && lo.to_bits() % 2 == 0) { lo } else { hi };
                prop_assert_eq!(got.to_bits(), want.to_bits(), "{}", y);
            }
        }

        #[test]
        fn bit_level_rounding_random(raw: u64, e in -160i32..140, w in 0usize..2) {
            // Any significand and sign, exponents over both formats' ranges and past them.
            let (frac, emin) = SMALL_FORMATS[w];
            let x = f64::from_bits(raw & 0x800f_ffff_ffff_ffff | (((e + 1023) as u64) << 52));
            prop_assert_eq!(small_float_bits(x, frac, emin), powi_model(x, frac, emin), "{:e}", x);
            let y = f64::from_bits(raw);
            prop_assert_eq!(small_float_bits(y, frac, emin), powi_model(y, frac, emin), "{:e}", y);
        }

        #[test]
        fn bf16_rounding_random(a: u32, m: u64, e in -140i32..130) {
            // f32 inputs: the classic integer rounding of the low 16 bits is a single rounding.
            let x = f32::from_bits(a);
            let got = bf16_bits_from_f64(f64::from(x));
            if x.is_nan() {
                prop_assert!(bf16_to_f64(u64::from(got)).is_nan());
            } else {
                let want = ((a + 0x7fff + ((a >> 16) & 1)) >> 16) as u16;
                prop_assert_eq!(got, want, "{:#x}", a);
                prop_assert_eq!(bf16_to_f64(u64::from(want)).to_bits() >> 63, u64::from(a >> 31));
            }
            // Any f64: the nearer bf16 neighbour, ties to even (finite normal range).
            let y = f64::from_bits((m & 0x000f_ffff_ffff_ffff) | (1023u64 << 52)) * 2f64.powi(e);
            if (2f64.powi(-126)..3.3e38).contains(&y) {
                let g = bf16_bits_from_f64(y);
                let v = |b: u16| bf16_to_f64(u64::from(b));
                let (lo, hi) = if v(g) <= y { (g, g + 1) } else { (g - 1, g) };
                prop_assert!(v(lo) <= y && y <= v(hi));
                let (dl, dh) = (y - v(lo), v(hi) - y);
                let want = if dl < dh || (dl == dh && lo % 2 == 0) { lo } else { hi };
                prop_assert_eq!(g, want, "{}", y);
            }
        }

        #[test]
        fn quantize_random(a: u32) {
            let x = f32::from_bits(a);
            let got = f32::from_bits(quantize_to_f16(u64::from(a)) as u32);
            // Independent reference: round through f64 with explicit range handling.
            let h = f16::from_f32(x);
            if x.is_nan() {
                prop_assert!(got.is_nan());
            } else if h.is_infinite() {
                prop_assert_eq!(got, if x > 0.0 { f32::INFINITY } else { f32::NEG_INFINITY });
            } else if f64::from(h).abs() < 2f64.powi(-14) {
                prop_assert_eq!(got, 0.0);
                prop_assert_eq!(got.is_sign_negative(), x.is_sign_negative());
            } else {
                prop_assert_eq!(got, f32::from(h));
            }
        }
    }
}
