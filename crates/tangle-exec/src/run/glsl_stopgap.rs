//! Stopgap per-value GLSL.std.450 functions, used until `semantics::glsl` provides them (it was
//! still being written when the executor was). Floats are computed in f64 and rounded once.

use crate::program::{FloatBin, FloatTern, FloatUn, PackOp};
use crate::semantics::float::{from_f64, map1, map2, map3, to_f64};
use crate::semantics::{from_signed, mask, sign_extend};

/// `SAbs`: |x| (the most negative value stays itself).
pub fn sabs(bits: u32, x: u64) -> u64 {
    from_signed(bits, sign_extend(bits, x).wrapping_abs())
}

/// `SSign`: -1, 0 or 1.
pub fn ssign(bits: u32, x: u64) -> u64 {
    from_signed(bits, sign_extend(bits, x).signum())
}

/// `FindILsb`: the lowest set bit, or -1.
pub fn find_ilsb(bits: u32, x: u64) -> u64 {
    let x = x & mask(bits);
    if x == 0 {
        mask(bits)
    } else {
        u64::from(x.trailing_zeros())
    }
}

/// `FindUMsb`: the highest set bit, or -1.
pub fn find_umsb(bits: u32, x: u64) -> u64 {
    let x = x & mask(bits);
    if x == 0 {
        mask(bits)
    } else {
        u64::from(63 - x.leading_zeros())
    }
}

/// `FindSMsb`: "For positive numbers, this will be the bit number of the most significant 1-bit.
/// For negative numbers, this will be the bit number of the most significant 0-bit. For a Value
/// of 0 or -1, -1 is returned."
pub fn find_smsb(bits: u32, x: u64) -> u64 {
    let v = sign_extend(bits, x);
    let v = if v < 0 { !v } else { v } as u64;
    find_umsb(bits, v)
}

/// The one-operand float functions.
pub fn float_un(op: FloatUn, bits: u32, x: u64) -> u64 {
    let sign = |v: f64| if v > 0.0 { 1.0 } else if v < 0.0 { -1.0 } else { v };
    let f: fn(f64) -> f64 = match op {
        FloatUn::Negate => |v| -v,
        FloatUn::Abs => f64::abs,
        FloatUn::Sign => return map1(bits, x, sign),
        FloatUn::Floor => f64::floor,
        FloatUn::Ceil => f64::ceil,
        FloatUn::Trunc => f64::trunc,
        FloatUn::Round => f64::round,
        FloatUn::RoundEven => f64::round_ties_even,
        FloatUn::Fract => |v| v - v.floor(),
        FloatUn::Sqrt => f64::sqrt,
        FloatUn::InverseSqrt => |v| 1.0 / v.sqrt(),
        FloatUn::Exp => f64::exp,
        FloatUn::Exp2 => f64::exp2,
        FloatUn::Log => f64::ln,
        FloatUn::Log2 => f64::log2,
        FloatUn::Sin => f64::sin,
        FloatUn::Cos => f64::cos,
        FloatUn::Tan => f64::tan,
        FloatUn::Asin => f64::asin,
        FloatUn::Acos => f64::acos,
        FloatUn::Atan => f64::atan,
        FloatUn::Sinh => f64::sinh,
        FloatUn::Cosh => f64::cosh,
        FloatUn::Tanh => f64::tanh,
        FloatUn::Asinh => f64::asinh,
        FloatUn::Acosh => f64::acosh,
        FloatUn::Atanh => f64::atanh,
        FloatUn::Radians => f64::to_radians,
        FloatUn::Degrees => f64::to_degrees,
    };
    if op == FloatUn::Abs {
        // Exact on the bit pattern (also for NaN payloads).
        let sign_bit = match bits {
            16 => 1u64 << 15,
            64 => 1 << 63,
            _ => 1 << 31,
        };
        return x & !sign_bit;
    }
    map1(bits, x, f)
}

/// The two-operand GLSL float functions.
pub fn float_bin(op: FloatBin, bits: u32, x: u64, y: u64) -> u64 {
    match op {
        // "Result is y if y < x; otherwise result is x."
        FloatBin::Min => map2(bits, x, y, |a, b| if b < a { b } else { a }),
        // "Result is y if x < y; otherwise result is x."
        FloatBin::Max => map2(bits, x, y, |a, b| if a < b { b } else { a }),
        // NMin/NMax: "If one operand is a NaN, the other operand is the result."
        FloatBin::NMin => map2(bits, x, y, f64::min),
        FloatBin::NMax => map2(bits, x, y, f64::max),
        FloatBin::Pow => map2(bits, x, y, f64::powf),
        FloatBin::Atan2 => map2(bits, x, y, f64::atan2),
        // "Result is 0.0 if x < edge; otherwise result is 1.0." (edge is the first operand)
        FloatBin::Step => map2(bits, x, y, |edge, v| if v < edge { 0.0 } else { 1.0 }),
        FloatBin::Add => map2(bits, x, y, |a, b| a + b),
        FloatBin::Sub => map2(bits, x, y, |a, b| a - b),
        FloatBin::Mul => map2(bits, x, y, |a, b| a * b),
        FloatBin::Div => map2(bits, x, y, |a, b| a / b),
        FloatBin::Rem | FloatBin::Mod => map2(bits, x, y, |a, b| a - b * (a / b).floor()),
    }
}

/// The three-operand GLSL float functions.
pub fn float_tern(op: FloatTern, bits: u32, x: u64, y: u64, z: u64) -> u64 {
    match op {
        FloatTern::Fma => map3(bits, x, y, z, f64::mul_add),
        FloatTern::Clamp => map3(bits, x, y, z, |v, lo, hi| {
            let m = if lo < v { v } else { lo };
            if hi < m {
                hi
            } else {
                m
            }
        }),
        FloatTern::NClamp => map3(bits, x, y, z, |v, lo, hi| v.max(lo).min(hi)),
        FloatTern::Mix => map3(bits, x, y, z, |a, b, t| a * (1.0 - t) + b * t),
        FloatTern::SmoothStep => map3(bits, x, y, z, |e0, e1, v| {
            let t = ((v - e0) / (e1 - e0)).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }),
    }
}

/// `Ldexp`: x × 2^exp.
pub fn ldexp(bits: u32, x: u64, exp: i64) -> u64 {
    let v = to_f64(bits, x);
    let e = exp.clamp(-2200, 2200) as i32;
    // Two steps so that 2^e itself never overflows for large |e|.
    let half = e / 2;
    from_f64(bits, v * 2f64.powi(half) * 2f64.powi(e - half))
}

/// `Frexp`: (mantissa in [0.5, 1), exponent).
pub fn frexp(bits: u32, x: u64) -> (u64, i64) {
    let v = to_f64(bits, x);
    if v == 0.0 || !v.is_finite() {
        return (x, 0);
    }
    let mut e = v.abs().log2().floor() as i64 + 1;
    let mut m = v / 2f64.powi(e as i32);
    if m.abs() >= 1.0 {
        m /= 2.0;
        e += 1;
    } else if m.abs() < 0.5 {
        m *= 2.0;
        e -= 1;
    }
    (from_f64(bits, m), e)
}

/// `Pack*`: components (f32 bit patterns) to a 32-bit word.
pub fn pack(op: PackOp, c: &[u64; 4]) -> u64 {
    let f = |i: usize| to_f64(32, c[i]);
    let snorm = |v: f64, max: f64| (v.clamp(-1.0, 1.0) * max).round_ties_even() as i64;
    let unorm = |v: f64, max: f64| (v.clamp(0.0, 1.0) * max).round_ties_even() as u64;
    match op {
        PackOp::Snorm4x8 => (0..4).fold(0, |w, i| w | ((snorm(f(i), 127.0) as u64 & 0xff) << (8 * i))),
        PackOp::Unorm4x8 => (0..4).fold(0, |w, i| w | ((unorm(f(i), 255.0) & 0xff) << (8 * i))),
        PackOp::Snorm2x16 => (0..2).fold(0, |w, i| w | ((snorm(f(i), 32767.0) as u64 & 0xffff) << (16 * i))),
        PackOp::Unorm2x16 => (0..2).fold(0, |w, i| w | ((unorm(f(i), 65535.0) & 0xffff) << (16 * i))),
        PackOp::Half2x16 => (0..2).fold(0, |w, i| w | (from_f64(16, f(i)) << (16 * i))),
    }
}

/// `Unpack*`: a 32-bit word to components (f32 bit patterns).
pub fn unpack(op: PackOp, w: u64) -> [u64; 4] {
    let f = |v: f64| from_f64(32, v);
    match op {
        PackOp::Snorm4x8 => std::array::from_fn(|i| f((((w >> (8 * i)) as u8 as i8) as f64 / 127.0).clamp(-1.0, 1.0))),
        PackOp::Unorm4x8 => std::array::from_fn(|i| f(((w >> (8 * i)) as u8) as f64 / 255.0)),
        PackOp::Snorm2x16 => {
            let v = |i: usize| f((((w >> (16 * i)) as u16 as i16) as f64 / 32767.0).clamp(-1.0, 1.0));
            [v(0), v(1), 0, 0]
        }
        PackOp::Unorm2x16 => {
            let v = |i: usize| f(((w >> (16 * i)) as u16) as f64 / 65535.0);
            [v(0), v(1), 0, 0]
        }
        PackOp::Half2x16 => {
            let v = |i: usize| f(to_f64(16, (w >> (16 * i)) & 0xffff));
            [v(0), v(1), 0, 0]
        }
    }
}
