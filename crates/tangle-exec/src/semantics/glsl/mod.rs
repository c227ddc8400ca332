//! The GLSL.std.450 extended instruction set (GLSL.std.450 spec, version 1.00 revision 9), minus
//! the fragment-only Interpolate* instructions and the removed IMix.
//!
//! Component-wise instructions go through one dispatcher, [`eval_componentwise`], with the
//! domain rules in [`componentwise_is_undefined`]. Instructions with two results (Modf, Frexp),
//! with operands of a second width (Ldexp) or over whole vectors and matrices (Length, Cross,
//! Determinant, packing, …) are named functions taking slices of component bit patterns.
//!
//! Accuracy: everything is computed in f64 and rounded once to the result width, which is at
//! least as accurate as Vulkan requires; results the spec defines exactly (Round, Floor, Fract,
//! Modf, Frexp, Ldexp, min/max/clamp, packing) are exact.
//!
//! | file        | covers |
//! |-------------|--------|
//! | `mod.rs`    | [`eval_componentwise`], [`componentwise_is_undefined`] |
//! | [`parts`]   | Modf, ModfStruct, Frexp, FrexpStruct, Ldexp |
//! | [`pack`]    | Pack*/Unpack* (Snorm4x8, Unorm4x8, Snorm2x16, Unorm2x16, Half2x16, Double2x32) |
//! | [`vector`]  | Length, Distance, Cross, Normalize, FaceForward, Reflect, Refract |
//! | [`matrix`]  | Determinant, MatrixInverse |

pub mod matrix;
pub mod pack;
pub mod parts;
pub mod vector;

pub use matrix::{determinant, matrix_inverse, matrix_inverse_is_undefined};
pub use pack::{
    pack_double_2x32, pack_half_2x16, pack_snorm_2x16, pack_snorm_4x8, pack_unorm_2x16,
    pack_unorm_4x8, unpack_double_2x32, unpack_half_2x16, unpack_snorm_2x16, unpack_snorm_4x8,
    unpack_unorm_2x16, unpack_unorm_4x8,
};
pub use parts::{frexp, frexp_is_undefined, ldexp, ldexp_is_undefined, modf};
pub use vector::{cross, distance, face_forward, length, normalize, reflect, refract};

use spirv::GlslStd450Op as Op;

use super::float::{map1, map2, map3, to_f64};
use super::{from_signed, sign_extend, truncate};

/// Evaluates a component-wise GLSL.std.450 instruction on one component.
///
/// `op` is the GLSL.std.450 instruction number, `bits` the component width of the operands (and
/// of the result), `args` the operands' canonical component values in operand order. Returns
/// `None` for instructions that are not component-wise (Modf, ModfStruct, Frexp, FrexpStruct,
/// Ldexp, Determinant, MatrixInverse, Pack*, Unpack*, Length, Distance, Cross, Normalize,
/// FaceForward, Reflect, Refract, Interpolate*, IMix) or when `args` has the wrong count.
pub fn eval_componentwise(op: u32, bits: u32, args: &[u64]) -> Option<u64> {
    let op = Op::from_u32(op)?;
    let r = match (op, args) {
        (Op::Round, &[x]) => map1(bits, x, f64::round),
        (Op::RoundEven, &[x]) => map1(bits, x, f64::round_ties_even),
        (Op::Trunc, &[x]) => map1(bits, x, f64::trunc),
        // Clearing the sign bit is exact, also for NaN.
        (Op::FAbs, &[x]) => x & !super::float::fnegate(bits, 0),
        (Op::SAbs, &[x]) => from_signed(bits, sign_extend(bits, x).wrapping_abs()),
        (Op::FSign, &[x]) => map1(bits, x, fsign),
        (Op::SSign, &[x]) => from_signed(bits, sign_extend(bits, x).signum()),
        (Op::Floor, &[x]) => map1(bits, x, f64::floor),
        (Op::Ceil, &[x]) => map1(bits, x, f64::ceil),
        // "Result is x - floor x."
        (Op::Fract, &[x]) => map1(bits, x, |x| x - x.floor()),
        (Op::Radians, &[x]) => map1(bits, x, f64::to_radians),
        (Op::Degrees, &[x]) => map1(bits, x, f64::to_degrees),
        (Op::Sin, &[x]) => map1(bits, x, f64::sin),
        (Op::Cos, &[x]) => map1(bits, x, f64::cos),
        (Op::Tan, &[x]) => map1(bits, x, f64::tan),
        (Op::Asin, &[x]) => map1(bits, x, f64::asin),
        (Op::Acos, &[x]) => map1(bits, x, f64::acos),
        (Op::Atan, &[x]) => map1(bits, x, f64::atan),
        (Op::Sinh, &[x]) => map1(bits, x, f64::sinh),
        (Op::Cosh, &[x]) => map1(bits, x, f64::cosh),
        (Op::Tanh, &[x]) => map1(bits, x, f64::tanh),
        (Op::Asinh, &[x]) => map1(bits, x, f64::asinh),
        (Op::Acosh, &[x]) => map1(bits, x, f64::acosh),
        (Op::Atanh, &[x]) => map1(bits, x, f64::atanh),
        // Atan2 y x: "Arc tangent. Result is an angle, in radians, whose tangent is y / x."
        (Op::Atan2, &[y, x]) => map2(bits, y, x, f64::atan2),
        (Op::Pow, &[x, y]) => map2(bits, x, y, f64::powf),
        (Op::Exp, &[x]) => map1(bits, x, f64::exp),
        (Op::Log, &[x]) => map1(bits, x, f64::ln),
        (Op::Exp2, &[x]) => map1(bits, x, f64::exp2),
        (Op::Log2, &[x]) => map1(bits, x, f64::log2),
        (Op::Sqrt, &[x]) => map1(bits, x, f64::sqrt),
        (Op::InverseSqrt, &[x]) => map1(bits, x, |x| 1.0 / x.sqrt()),
        (Op::FMin, &[x, y]) => fmin(bits, x, y),
        (Op::FMax, &[x, y]) => fmax(bits, x, y),
        (Op::UMin, &[x, y]) => x.min(y),
        (Op::UMax, &[x, y]) => x.max(y),
        (Op::SMin, &[x, y]) => smin(bits, x, y),
        (Op::SMax, &[x, y]) => smax(bits, x, y),
        // "Result is min(max(x, minVal), maxVal)."
        (Op::FClamp, &[x, lo, hi]) => fmin(bits, fmax(bits, x, lo), hi),
        (Op::UClamp, &[x, lo, hi]) => x.max(lo).min(hi),
        (Op::SClamp, &[x, lo, hi]) => smin(bits, smax(bits, x, lo), hi),
        (Op::NClamp, &[x, lo, hi]) => nmin(bits, nmax(bits, x, lo), hi),
        // "Result is the linear blend of x and y, i.e., x * (1 - a) + y * a."
        (Op::FMix, &[x, y, a]) => map3(bits, x, y, a, |x, y, a| x * (1.0 - a) + y * a),
        // Step edge x: "Result is 0.0 if x < edge; otherwise result is 1.0."
        (Op::Step, &[edge, x]) => map2(bits, edge, x, |e, x| if x < e { 0.0 } else { 1.0 }),
        (Op::SmoothStep, &[e0, e1, x]) => map3(bits, e0, e1, x, smooth_step),
        (Op::Fma, &[a, b, c]) => fma(bits, a, b, c),
        (Op::FindILsb, &[x]) => find_lsb(bits, x),
        (Op::FindSMsb, &[x]) => {
            // "For negative numbers, the result will be the bit number of the most significant
            // 0-bit": the msb of the complement.
            let v = truncate(bits, x);
            let v = if sign_extend(bits, v) < 0 {
                truncate(bits, !v)
            } else {
                v
            };
            find_msb(bits, v)
        }
        (Op::FindUMsb, &[x]) => find_msb(bits, x),
        (Op::NMin, &[x, y]) => nmin(bits, x, y),
        (Op::NMax, &[x, y]) => nmax(bits, x, y),
        _ => return None,
    };
    Some(r)
}

/// Whether a component-wise instruction's result is undefined for these operands (same
/// arguments as [`eval_componentwise`]; `false` for anything it does not evaluate).
///
/// # Spec
/// Asin / Acos: "Result is undefined if abs x > 1." Acosh: "Result is undefined if x < 1."
/// Atanh: "Result is undefined if abs x ≥ 1." Atan2: "Result is undefined if x and y are both
/// 0." Pow: "Result is undefined if x < 0. Result is undefined if x = 0 and y ≤ 0." Log, Log2:
/// "Result is undefined if x ≤ 0." Sqrt: "Result is undefined if x < 0." InverseSqrt: "Result is
/// undefined if x ≤ 0." FMin / FMax: "Which operand is the result is undefined if one of the
/// operands is a NaN." F/U/S/NClamp: "Result is undefined if minVal > maxVal." SmoothStep:
/// "Results are undefined if edge0 ≥ edge1."
pub fn componentwise_is_undefined(op: u32, bits: u32, args: &[u64]) -> bool {
    let Some(op) = Op::from_u32(op) else {
        return false;
    };
    let f = |v: u64| to_f64(bits, v);
    match (op, args) {
        (Op::Asin | Op::Acos, &[x]) => f(x).abs() > 1.0,
        (Op::Acosh, &[x]) => f(x) < 1.0,
        (Op::Atanh, &[x]) => f(x).abs() >= 1.0,
        (Op::Atan2, &[y, x]) => f(y) == 0.0 && f(x) == 0.0,
        (Op::Pow, &[x, y]) => f(x) < 0.0 || (f(x) == 0.0 && f(y) <= 0.0),
        (Op::Log | Op::Log2 | Op::InverseSqrt, &[x]) => f(x) <= 0.0,
        (Op::Sqrt, &[x]) => f(x) < 0.0,
        (Op::FMin | Op::FMax, &[x, y]) => f(x).is_nan() || f(y).is_nan(),
        (Op::FClamp | Op::NClamp, &[_, lo, hi]) => f(lo) > f(hi),
        (Op::UClamp, &[_, lo, hi]) => lo > hi,
        (Op::SClamp, &[_, lo, hi]) => sign_extend(bits, lo) > sign_extend(bits, hi),
        (Op::SmoothStep, &[e0, e1, _]) => f(e0) >= f(e1),
        _ => false,
    }
}

/// FSign: "Result is 1.0 if x > 0, 0.0 if x = 0, or -1.0 if x < 0." (A zero or NaN is returned
/// as is.)
fn fsign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// FMin: "Result is y if y < x; otherwise result is x."
fn fmin(bits: u32, x: u64, y: u64) -> u64 {
    if to_f64(bits, y) < to_f64(bits, x) {
        y
    } else {
        x
    }
}

/// FMax: "Result is y if x < y; otherwise result is x."
fn fmax(bits: u32, x: u64, y: u64) -> u64 {
    if to_f64(bits, x) < to_f64(bits, y) {
        y
    } else {
        x
    }
}

/// NMin: "Result is y if y < x; otherwise result is x. If one operand is a NaN, the other
/// operand is the result. If both operands are NaN, the result is a NaN."
fn nmin(bits: u32, x: u64, y: u64) -> u64 {
    if to_f64(bits, x).is_nan() {
        y
    } else {
        fmin(bits, x, y)
    }
}

/// NMax: "Result is y if x < y; otherwise result is x. If one operand is a NaN, the other
/// operand is the result."
fn nmax(bits: u32, x: u64, y: u64) -> u64 {
    if to_f64(bits, x).is_nan() {
        y
    } else {
        fmax(bits, x, y)
    }
}

/// SMin: "Result is y if y < x; otherwise result is x, where x and y are interpreted as signed
/// integers."
fn smin(bits: u32, x: u64, y: u64) -> u64 {
    if sign_extend(bits, y) < sign_extend(bits, x) {
        y
    } else {
        x
    }
}

/// SMax: "Result is y if x < y; otherwise result is x, where x and y are interpreted as signed
/// integers."
fn smax(bits: u32, x: u64, y: u64) -> u64 {
    if sign_extend(bits, x) < sign_extend(bits, y) {
        y
    } else {
        x
    }
}

/// SmoothStep: "Result is 0.0 if x ≤ edge0 and 1.0 if x ≥ edge1 and performs smooth Hermite
/// interpolation between 0 and 1 when edge0 < x < edge1. This is equivalent to: t * t * (3 - 2 *
/// t), where t = clamp ((x - edge0) / (edge1 - edge0), 0, 1)".
fn smooth_step(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Fma: "Computes a * b + c." Rounded once (fused) at every width.
///
/// f16 is fused in f64 and then rounded to f16, which is still one rounding: the product of two
/// f16 has at most 22 significant bits, so when the f64 sum is inexact the two addends lie more
/// than 30 binades apart, and the f64 error is then far smaller than the distance from the sum
/// to any f16 rounding boundary (the brute-force test `componentwise_random` checks this).
fn fma(bits: u32, a: u64, b: u64, c: u64) -> u64 {
    match bits {
        16 => map3(bits, a, b, c, f64::mul_add),
        64 => f64::from_bits(a)
            .mul_add(f64::from_bits(b), f64::from_bits(c))
            .to_bits(),
        _ => {
            let f = |v: u64| f32::from_bits(v as u32);
            u64::from(f(a).mul_add(f(b), f(c)).to_bits())
        }
    }
}

/// FindILsb: "Integer least-significant bit. Results in the bit number of the least-significant
/// 1-bit in the binary representation of Value. If Value is 0, the result is -1."
fn find_lsb(bits: u32, x: u64) -> u64 {
    let v = truncate(bits, x);
    if v == 0 {
        from_signed(bits, -1)
    } else {
        u64::from(v.trailing_zeros())
    }
}

/// FindUMsb: "Unsigned-integer most-significant bit. Results in the bit number of the
/// most-significant 1-bit in the binary representation of Value. If Value is 0, the result is
/// -1."
fn find_msb(bits: u32, x: u64) -> u64 {
    let v = truncate(bits, x);
    if v == 0 {
        from_signed(bits, -1)
    } else {
        u64::from(63 - v.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::super::float::from_f64;
    use super::super::{mask, proptest_config};
    use super::*;
    use half::f16;
    use proptest::prelude::*;

    pub(super) const FLOATS: [u32; 3] = [16, 32, 64];

    pub(super) fn ev(op: Op, bits: u32, args: &[u64]) -> u64 {
        match eval_componentwise(op as u32, bits, args) {
            Some(v) => v,
            None => panic!("{op:?} not component-wise"),
        }
    }
    pub(super) fn fv(bits: u32, x: f64) -> u64 {
        from_f64(bits, x)
    }
    pub(super) fn same(bits: u32, got: u64, want: u64) -> bool {
        got == want || (to_f64(bits, got).is_nan() && to_f64(bits, want).is_nan())
    }

    /// Exact operations against each width's native methods (f16 through f32, where these
    /// results are representable and so exact).
    fn check_exact(bits: u32, a: u64, b: u64, c: u64) {
        let native1 = |f32op: fn(f32) -> f32, f64op: fn(f64) -> f64| -> u64 {
            match bits {
                16 => u64::from(f16::from_f32(f32op(f16::from_bits(a as u16).to_f32())).to_bits()),
                32 => u64::from(f32op(f32::from_bits(a as u32)).to_bits()),
                _ => f64op(f64::from_bits(a)).to_bits(),
            }
        };
        let cases: [(Op, u64); 6] = [
            (Op::Round, native1(f32::round, f64::round)),
            (
                Op::RoundEven,
                native1(f32::round_ties_even, f64::round_ties_even),
            ),
            (Op::Trunc, native1(f32::trunc, f64::trunc)),
            (Op::FAbs, native1(f32::abs, f64::abs)),
            (Op::Floor, native1(f32::floor, f64::floor)),
            (Op::Ceil, native1(f32::ceil, f64::ceil)),
        ];
        for (op, want) in cases {
            assert!(same(bits, ev(op, bits, &[a]), want), "{op:?} {bits} {a:#x}");
        }
        let (x, y, z) = (to_f64(bits, a), to_f64(bits, b), to_f64(bits, c));
        let sign = to_f64(bits, ev(Op::FSign, bits, &[a]));
        if x.is_nan() {
            assert!(sign.is_nan());
        } else {
            assert_eq!(
                sign,
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            );
        }
        // Fract: in [0, 1] and x - fract is a whole number (when x is finite and modest).
        if x.is_finite() && x.abs() < 1e6 {
            let fr = to_f64(bits, ev(Op::Fract, bits, &[a]));
            assert!((0.0..=1.0).contains(&fr), "fract {x} = {fr}");
            assert_eq!(to_f64(bits, fv(bits, x - x.floor())), fr);
        }
        let pick = |v: u64| v;
        let fmin_want = if y < x { pick(b) } else { pick(a) };
        let fmax_want = if x < y { pick(b) } else { pick(a) };
        if !x.is_nan() && !y.is_nan() {
            assert_eq!(ev(Op::FMin, bits, &[a, b]), fmin_want);
            assert_eq!(ev(Op::FMax, bits, &[a, b]), fmax_want);
            assert_eq!(ev(Op::NMin, bits, &[a, b]), fmin_want);
            assert_eq!(ev(Op::NMax, bits, &[a, b]), fmax_want);
        } else {
            assert!(componentwise_is_undefined(Op::FMin as u32, bits, &[a, b]));
            let n = to_f64(bits, ev(Op::NMin, bits, &[a, b]));
            let want = if x.is_nan() { y } else { x };
            assert!((n.is_nan() && want.is_nan()) || n == want);
        }
        let clamp = to_f64(bits, ev(Op::FClamp, bits, &[a, b, c]));
        if !x.is_nan() && !y.is_nan() && !z.is_nan() && y <= z {
            assert_eq!(clamp, x.max(y).min(z));
            assert_eq!(
                to_f64(bits, ev(Op::NClamp, bits, &[a, b, c])),
                x.max(y).min(z)
            );
        }
        assert_eq!(
            componentwise_is_undefined(Op::FClamp as u32, bits, &[a, b, c]),
            y > z
        );
        let step = to_f64(bits, ev(Op::Step, bits, &[a, b]));
        if !x.is_nan() && !y.is_nan() {
            assert_eq!(step, if y < x { 0.0 } else { 1.0 });
        }
    }

    fn check_ints(bits: u32, a: u64, b: u64, c: u64) {
        let (sa, sb, sc) = (
            sign_extend(bits, a),
            sign_extend(bits, b),
            sign_extend(bits, c),
        );
        let s = |v: i128| v.rem_euclid(1i128 << bits) as u64;
        assert_eq!(ev(Op::SAbs, bits, &[a]), s(i128::from(sa).abs()));
        assert_eq!(ev(Op::SSign, bits, &[a]), s(i128::from(sa.signum())));
        assert_eq!(ev(Op::UMin, bits, &[a, b]), a.min(b));
        assert_eq!(ev(Op::UMax, bits, &[a, b]), a.max(b));
        assert_eq!(ev(Op::SMin, bits, &[a, b]), s(i128::from(sa.min(sb))));
        assert_eq!(ev(Op::SMax, bits, &[a, b]), s(i128::from(sa.max(sb))));
        if b <= c {
            assert_eq!(ev(Op::UClamp, bits, &[a, b, c]), a.clamp(b, c));
        }
        if sb <= sc {
            assert_eq!(
                ev(Op::SClamp, bits, &[a, b, c]),
                s(i128::from(sa.clamp(sb, sc)))
            );
        }
        assert_eq!(
            componentwise_is_undefined(Op::UClamp as u32, bits, &[a, b, c]),
            b > c
        );
        assert_eq!(
            componentwise_is_undefined(Op::SClamp as u32, bits, &[a, b, c]),
            sb > sc
        );
        // Bit searches by scanning the bits one by one.
        let bit = |v: u64, i: u32| (v >> i) & 1 == 1;
        let minus1 = mask(bits);
        let lsb = (0..bits).find(|&i| bit(a, i)).map_or(minus1, u64::from);
        let umsb = (0..bits)
            .rev()
            .find(|&i| bit(a, i))
            .map_or(minus1, u64::from);
        let sign = bit(a, bits - 1);
        let smsb = (0..bits)
            .rev()
            .find(|&i| bit(a, i) != sign)
            .map_or(minus1, u64::from);
        assert_eq!(ev(Op::FindILsb, bits, &[a]), lsb);
        assert_eq!(ev(Op::FindUMsb, bits, &[a]), umsb);
        assert_eq!(ev(Op::FindSMsb, bits, &[a]), smsb);
    }

    /// Distance in units in the last place of the result width.
    fn ulps(bits: u32, got: u64, want: u64) -> u64 {
        let key = |v: u64| -> i128 {
            let sign = v >> (bits - 1) & 1 == 1;
            let mag = i128::from(v & (mask(bits) >> 1));
            if sign {
                -mag
            } else {
                mag
            }
        };
        key(got).abs_diff(key(want)) as u64
    }

    type Unary = fn(f32) -> f32;
    type Binary = fn(f32, f32) -> f32;

    /// Transcendentals: f32 against f32's own libm within 2 ulp, f16 against an f32 computation
    /// rounded to f16 within 1 ulp.
    fn check_transcendental(bits: u32, a: u64, b: u64) {
        let unary: [(Op, Unary); 17] = [
            (Op::Sin, f32::sin),
            (Op::Cos, f32::cos),
            (Op::Tan, f32::tan),
            (Op::Asin, f32::asin),
            (Op::Acos, f32::acos),
            (Op::Atan, f32::atan),
            (Op::Sinh, f32::sinh),
            (Op::Cosh, f32::cosh),
            (Op::Tanh, f32::tanh),
            (Op::Asinh, f32::asinh),
            (Op::Acosh, f32::acosh),
            (Op::Atanh, f32::atanh),
            (Op::Exp, f32::exp),
            (Op::Log, f32::ln),
            (Op::Exp2, f32::exp2),
            (Op::Log2, f32::log2),
            (Op::Sqrt, f32::sqrt),
        ];
        let as32 = |v: u64| to_f64(bits, v) as f32;
        let back = |x: f32| fv(bits, f64::from(x));
        let tol = if bits == 16 { 1 } else { 2 };
        for (op, f) in unary {
            let got = ev(op, bits, &[a]);
            let want = back(f(as32(a)));
            let g = to_f64(bits, got);
            if g.is_nan() || to_f64(bits, want).is_nan() {
                assert!(
                    g.is_nan() && to_f64(bits, want).is_nan(),
                    "{op:?} {bits} {}",
                    to_f64(bits, a)
                );
            } else {
                assert!(
                    ulps(bits, got, want) <= tol,
                    "{op:?} {bits} {} = {g} vs {}",
                    to_f64(bits, a),
                    to_f64(bits, want)
                );
            }
        }
        let binary: [(Op, Binary); 2] = [(Op::Pow, f32::powf), (Op::Atan2, f32::atan2)];
        for (op, f) in binary {
            let got = ev(op, bits, &[a, b]);
            let want = back(f(as32(a), as32(b)));
            if !to_f64(bits, want).is_nan() && to_f64(bits, want).is_finite() {
                assert!(ulps(bits, got, want) <= tol + 1, "{op:?} {bits}");
            }
        }
    }

    #[test]
    fn componentwise_edges() {
        let xs = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.7,
            -1.2,
            3.0,
            100.25,
            -7.75,
            1e-3,
            65504.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-7,
        ];
        for bits in FLOATS {
            for &x in &xs {
                for &y in &xs[..8] {
                    check_exact(bits, fv(bits, x), fv(bits, y), fv(bits, 1.0));
                    check_exact(bits, fv(bits, y), fv(bits, x), fv(bits, -1.0));
                }
            }
        }
        for bits in [8u32, 16, 32, 64] {
            let m = mask(bits);
            for a in [0, 1, m, m >> 1, (m >> 1) + 1, 6, m - 6] {
                check_ints(bits, a, 5, m >> 2);
                check_ints(bits, a, m, 0);
            }
        }
        // Round: halves go away from zero; RoundEven: to even.
        assert_eq!(to_f64(32, ev(Op::Round, 32, &[fv(32, 2.5)])), 3.0);
        assert_eq!(to_f64(32, ev(Op::RoundEven, 32, &[fv(32, 2.5)])), 2.0);
        assert_eq!(
            to_f64(
                32,
                ev(Op::SmoothStep, 32, &[fv(32, 0.0), fv(32, 2.0), fv(32, 1.0)])
            ),
            0.5
        );
        assert_eq!(
            to_f64(
                32,
                ev(Op::FMix, 32, &[fv(32, 2.0), fv(32, 4.0), fv(32, 0.25)])
            ),
            2.5
        );
        assert_eq!(
            to_f64(
                64,
                ev(Op::Fma, 64, &[fv(64, 3.0), fv(64, 4.0), fv(64, 5.0)])
            ),
            17.0
        );
        assert_eq!(
            to_f64(32, ev(Op::Radians, 32, &[fv(32, 180.0)])),
            std::f32::consts::PI as f64
        );
        assert_eq!(to_f64(32, ev(Op::InverseSqrt, 32, &[fv(32, 4.0)])), 0.5);
        assert!(componentwise_is_undefined(
            Op::Pow as u32,
            32,
            &[fv(32, -1.0), fv(32, 2.0)]
        ));
        assert!(componentwise_is_undefined(
            Op::Pow as u32,
            32,
            &[fv(32, 0.0), fv(32, 0.0)]
        ));
        assert!(!componentwise_is_undefined(
            Op::Pow as u32,
            32,
            &[fv(32, 0.0), fv(32, 1.0)]
        ));
        assert!(componentwise_is_undefined(
            Op::Log as u32,
            16,
            &[fv(16, 0.0)]
        ));
        assert!(componentwise_is_undefined(
            Op::Asin as u32,
            64,
            &[fv(64, 1.5)]
        ));
        assert!(componentwise_is_undefined(Op::Atan2 as u32, 32, &[0, 0]));
        assert!(componentwise_is_undefined(
            Op::SmoothStep as u32,
            32,
            &[fv(32, 1.0), fv(32, 1.0), 0]
        ));
        assert_eq!(eval_componentwise(Op::Length as u32, 32, &[0]), None);
        assert_eq!(eval_componentwise(Op::Sin as u32, 32, &[0, 0]), None);
        assert_eq!(eval_componentwise(0, 32, &[0]), None);
        assert_eq!(eval_componentwise(999, 32, &[0]), None);
    }

    /// Brute-force f16 fma reference: the exact sum in units of 2^-48, compared with every
    /// finite f16 near the f64 estimate; the nearest wins, ties to the even bit pattern.
    fn fma_f16_reference(a: u64, b: u64, c: u64) -> u64 {
        // Every finite f16 is an integer count of 2^-24 below 2^40; products count 2^-48.
        let u24 = |v: u64| (to_f64(16, v) * 2f64.powi(24)) as i128;
        let units = |v: u64| u24(v) << 24;
        let exact = u24(a) * u24(b) + units(c);
        let guess = from_f64(16, to_f64(16, a).mul_add(to_f64(16, b), to_f64(16, c)));
        let guess = guess as i64;
        let mut best: Option<(i128, u64)> = None;
        for d in -3i64..=3 {
            // Walk the bit patterns of the same sign; cross zero through both zeros.
            let cand = (guess + d).rem_euclid(1 << 16) as u64;
            let cf = to_f64(16, cand);
            if !cf.is_finite() || (cf == 0.0 && cand != 0) {
                continue;
            }
            let dist = (exact - units(cand)).abs();
            let better = match best {
                None => true,
                Some((bd, bc)) => dist < bd || (dist == bd && cand & 1 == 0 && bc & 1 == 1),
            };
            if better {
                best = Some((dist, cand));
            }
        }
        // Overflow: the nearest is past the largest finite f16.
        let limit = 65520i128 << 48;
        if exact >= limit {
            return 0x7c00;
        }
        if exact <= -limit {
            return 0xfc00;
        }
        best.map_or(0, |(_, c)| c)
    }

    #[test]
    fn fma_f16_near_ties() {
        // Products of significands near 1 plus addends that cancel most of them: the sums that
        // land closest to f16 rounding boundaries.
        let near_one: Vec<u64> = (0..24)
            .map(|k| fv(16, 1.0 + f64::from(k) * 2f64.powi(-10)))
            .collect();
        let addends: Vec<u64> = (0..24)
            .flat_map(|k| {
                let x = 1.0 + f64::from(k) * 2f64.powi(-10);
                [
                    fv(16, -x),
                    fv(16, x * 2f64.powi(-12)),
                    fv(16, -x * 2f64.powi(-20)),
                ]
            })
            .collect();
        for &a in &near_one {
            for &b in &near_one {
                for &c in &addends {
                    let got = ev(Op::Fma, 16, &[a, b, c]);
                    if to_f64(16, got) != 0.0 {
                        assert_eq!(got, fma_f16_reference(a, b, c));
                    }
                }
            }
        }
    }

    #[test]
    fn fma_rounds_once() {
        // f32: (1 + 2^-23) * (1 - 2^-23) + -1 = -2^-46 exactly; a separate multiply loses it.
        let a = 1.0 + f32::EPSILON;
        let b = 1.0 - f32::EPSILON;
        let got = ev(
            Op::Fma,
            32,
            &[
                u64::from(a.to_bits()),
                u64::from(b.to_bits()),
                u64::from((-1.0f32).to_bits()),
            ],
        );
        assert_eq!(f32::from_bits(got as u32), -(2f32.powi(-46)));
    }
    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn componentwise_random(a: u64, b: u64, c: u64, w in 0usize..3, iw in 0usize..4) {
            let bits = FLOATS[w];
            let t = |v: u64| truncate(bits, v);
            check_exact(bits, t(a), t(b), t(c));
            let ib = [8u32, 16, 32, 64][iw];
            check_ints(ib, truncate(ib, a), truncate(ib, b), truncate(ib, c));
            // f16 fma against the brute-force reference (finite, non-zero results).
            let (ha, hb, hc) = (a & 0xffff, b & 0xffff, c & 0xffff);
            let got = ev(Op::Fma, 16, &[ha, hb, hc]);
            if [ha, hb, hc].iter().all(|&v| to_f64(16, v).is_finite()) && to_f64(16, got) != 0.0 {
                prop_assert_eq!(got, fma_f16_reference(ha, hb, hc), "{} {} {}", to_f64(16, ha), to_f64(16, hb), to_f64(16, hc));
            }
            // Transcendentals on values of moderate size (f32 and f16 only, see the helper).
            if bits != 64 {
                let x = fv(bits, (sign_extend(64, a) as f64 / 2f64.powi(63)) * 4.0);
                let y = fv(bits, (sign_extend(64, b) as f64 / 2f64.powi(63)) * 4.0);
                check_transcendental(bits, x, y);
            }
        }
    }
}
