//! The wide path's own lane kernels for the commonest ops on 32-bit values with every lane
//! active: one straight loop per operation over the 128 lanes, the operation chosen once per op
//! and the width fixed, so rustc vectorises them. Everything else (other widths, a partial
//! mask) goes to the reference path's kernels ([`crate::run::alu::exec_pure`]).
//!
//! Each calls the same scalar function of [`crate::semantics`] the reference path calls, with the
//! width a constant, so the results are the reference's by construction; only the loop around it
//! differs (no mask test, no width dispatch per lane).

use super::WIDTH;
use crate::program::{FloatBin, IntBin, IntCmp, Op, Slot};
use crate::run::dot::DotInst;
use crate::semantics::dot::{self as sd, DotKind};
use crate::semantics::{float, int};

/// An operand: a slot's lanes, or one value for every lane (a constant's slot, which no op
/// writes, so the shift or multiplier of `x >> 13` is a scalar and the loop vectorises).
#[derive(Clone, Copy)]
enum Src {
    Lanes(Slot),
    Value(u64),
}

/// Runs `op` on every lane when it is one of the ops here; `false` otherwise (nothing done).
/// `constant[slot]` says which slots hold constants.
pub fn exec_fast(op: &Op, regs: &mut [u64], constant: &[bool]) -> bool {
    let src = |s: Slot| match constant.get(s as usize) {
        Some(true) => Src::Value(regs.get(s as usize * WIDTH).copied().unwrap_or(0)),
        _ => Src::Lanes(s),
    };
    match *op {
        Op::IntBin {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => int_bin(op, regs, dst, src(a), src(b)),
        Op::IntCmp {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => int_cmp(op, regs, dst, src(a), src(b)),
        Op::FloatBin {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => float_bin(op, regs, dst, src(a), src(b)),
        Op::Copy { dst, src: from } => binary(regs, dst, src(from), Src::Value(0), |x, _| x),
        Op::Select { dst, cond, a, b } => {
            let Some(c) = lanes(regs, cond) else {
                return false;
            };
            let c: [u64; WIDTH] = *c;
            select(regs, dst, a, b, &c)
        }
        Op::Dot(ref d) => dot_packed(d, regs),
        _ => false,
    }
}

/// The packed 4x8-bit dot products (`dotPacked4x8EXT` and its AccSat form) when no lane can
/// overflow (so there is nothing to report): [`sd`]'s functions lane by lane, without the
/// reference kernel's per-lane gather and dispatch.
fn dot_packed(d: &DotInst, regs: &mut [u64]) -> bool {
    if !d.packed || d.comp_bits != 8 || d.acc.is_some_and(|_| d.may_overflow()) {
        return false;
    }
    let (Some(a), Some(b)) = (lanes(regs, d.a), lanes(regs, d.b)) else {
        return false;
    };
    let (a, b): ([u64; WIDTH], [u64; WIDTH]) = (*a, *b);
    let acc: [u64; WIDTH] = match d.acc.map(|s| lanes(regs, s)) {
        Some(Some(acc)) => *acc,
        Some(None) => return false,
        None => [0; WIDTH],
    };
    let rb = d.result_bits;
    let at = d.dst as usize * WIDTH;
    let Some(out) = regs.get_mut(at..at + WIDTH) else {
        return false;
    };
    // Matched once, so each arm is its own loop with the function inlined.
    let lanes = (&a, &b, &acc);
    match (d.kind, d.acc.is_some()) {
        (DotKind::Signed, false) => each_dot(out, lanes, |x, y, _| sd::sdot(8, rb, x, y)),
        (DotKind::Unsigned, false) => each_dot(out, lanes, |x, y, _| sd::udot(8, rb, x, y)),
        (DotKind::Mixed, false) => each_dot(out, lanes, |x, y, _| sd::sudot(8, rb, x, y)),
        (DotKind::Signed, true) => each_dot(out, lanes, |x, y, c| sd::sdot_acc_sat(8, rb, x, y, c)),
        (DotKind::Unsigned, true) => {
            each_dot(out, lanes, |x, y, c| sd::udot_acc_sat(8, rb, x, y, c))
        }
        (DotKind::Mixed, true) => each_dot(out, lanes, |x, y, c| sd::sudot_acc_sat(8, rb, x, y, c)),
    }
    true
}

/// `out = f(unpacked a, unpacked b, acc)` on every lane.
#[inline(always)]
fn each_dot(
    out: &mut [u64],
    (a, b, acc): (&[u64; WIDTH], &[u64; WIDTH], &[u64; WIDTH]),
    f: impl Fn(&[u64], &[u64], u64) -> u64,
) {
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(&sd::unpack_4x8(a[l]), &sd::unpack_4x8(b[l]), acc[l]);
    }
}

/// The 32-bit integer binary operations: the reference's own functions ([`int`]) with the
/// width fixed, matched once so each arm is its own loop (a `match` inside the lane loop is not
/// hoisted by rustc). Division and remainders keep the reference's kernels (`false`).
fn int_bin(op: IntBin, regs: &mut [u64], dst: Slot, a: Src, b: Src) -> bool {
    const W: u32 = 32;
    match op {
        IntBin::Add => binary(regs, dst, a, b, |x, y| int::iadd(W, x, y)),
        IntBin::Sub => binary(regs, dst, a, b, |x, y| int::isub(W, x, y)),
        IntBin::Mul => binary(regs, dst, a, b, |x, y| int::imul(W, x, y)),
        IntBin::And => binary(regs, dst, a, b, int::bitwise_and),
        IntBin::Or => binary(regs, dst, a, b, int::bitwise_or),
        IntBin::Xor => binary(regs, dst, a, b, int::bitwise_xor),
        IntBin::ShiftLeft => binary(regs, dst, a, b, |x, y| int::shift_left_logical(W, x, y)),
        IntBin::ShiftRightLogical => {
            binary(regs, dst, a, b, |x, y| int::shift_right_logical(W, x, y))
        }
        IntBin::ShiftRightArithmetic => {
            binary(regs, dst, a, b, |x, y| int::shift_right_arithmetic(W, x, y))
        }
        IntBin::UDiv | IntBin::SDiv | IntBin::UMod | IntBin::SRem | IntBin::SMod => false,
    }
}

/// The 32-bit integer comparisons, one loop per comparison ([`int`]'s functions).
fn int_cmp(op: IntCmp, regs: &mut [u64], dst: Slot, a: Src, b: Src) -> bool {
    const W: u32 = 32;
    match op {
        IntCmp::Eq => binary(regs, dst, a, b, int::iequal),
        IntCmp::Ne => binary(regs, dst, a, b, int::inot_equal),
        IntCmp::UGt => binary(regs, dst, a, b, int::ugreater_than),
        IntCmp::UGe => binary(regs, dst, a, b, int::ugreater_than_equal),
        IntCmp::ULt => binary(regs, dst, a, b, int::uless_than),
        IntCmp::ULe => binary(regs, dst, a, b, int::uless_than_equal),
        IntCmp::SGt => binary(regs, dst, a, b, |x, y| int::sgreater_than(W, x, y)),
        IntCmp::SGe => binary(regs, dst, a, b, |x, y| int::sgreater_than_equal(W, x, y)),
        IntCmp::SLt => binary(regs, dst, a, b, |x, y| int::sless_than(W, x, y)),
        IntCmp::SLe => binary(regs, dst, a, b, |x, y| int::sless_than_equal(W, x, y)),
    }
}

/// The 32-bit float arithmetic ([`float`]'s functions: through f64, rounded once).
fn float_bin(op: FloatBin, regs: &mut [u64], dst: Slot, a: Src, b: Src) -> bool {
    const W: u32 = 32;
    match op {
        FloatBin::Add => binary(regs, dst, a, b, |x, y| float::fadd(W, x, y)),
        FloatBin::Sub => binary(regs, dst, a, b, |x, y| float::fsub(W, x, y)),
        FloatBin::Mul => binary(regs, dst, a, b, |x, y| float::fmul(W, x, y)),
        FloatBin::Div => binary(regs, dst, a, b, |x, y| float::fdiv(W, x, y)),
        FloatBin::Rem | FloatBin::Mod => false,
    }
}

/// The lanes of `slot`.
fn lanes(regs: &[u64], slot: Slot) -> Option<&[u64; WIDTH]> {
    let at = slot as usize * WIDTH;
    regs.get(at..at + WIDTH)?.try_into().ok()
}

/// `dst = f(a, b)` on every lane.
#[inline(always)]
fn binary(regs: &mut [u64], dst: Slot, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) -> bool {
    match (a, b) {
        (Src::Lanes(a), Src::Lanes(b)) => lanes2(regs, dst, a, b, f),
        (Src::Lanes(a), Src::Value(y)) => lanes1(regs, dst, a, |x| f(x, y)),
        (Src::Value(x), Src::Lanes(b)) => lanes1(regs, dst, b, |y| f(x, y)),
        (Src::Value(x), Src::Value(y)) => {
            let at = dst as usize * WIDTH;
            let Some(d) = regs.get_mut(at..at + WIDTH) else {
                return false;
            };
            d.fill(f(x, y));
            true
        }
    }
}

fn range(s: Slot) -> std::ops::Range<usize> {
    s as usize * WIDTH..(s as usize + 1) * WIDTH
}

/// `dst = g(a)` on every lane, in place when `a` is the destination.
#[inline(always)]
fn lanes1(regs: &mut [u64], dst: Slot, a: Slot, g: impl Fn(u64) -> u64) -> bool {
    if dst == a {
        let Some(d) = regs.get_mut(range(dst)) else {
            return false;
        };
        d.iter_mut().for_each(|d| *d = g(*d));
    } else {
        let Ok([d, x]) = regs.get_disjoint_mut([range(dst), range(a)]) else {
            return false;
        };
        d.iter_mut().zip(x.iter()).for_each(|(d, x)| *d = g(*x));
    }
    true
}

/// `dst = f(a, b)` on every lane, with no copy whichever operands are the destination (each
/// lane reads its own old values before writing, so updating in place is exact).
#[inline(always)]
fn lanes2(regs: &mut [u64], dst: Slot, a: Slot, b: Slot, f: impl Fn(u64, u64) -> u64) -> bool {
    match (dst == a, dst == b, a == b) {
        (true, true, _) => lanes1(regs, dst, a, |x| f(x, x)),
        (true, false, _) => {
            let Ok([d, y]) = regs.get_disjoint_mut([range(dst), range(b)]) else {
                return false;
            };
            d.iter_mut().zip(y.iter()).for_each(|(d, y)| *d = f(*d, *y));
            true
        }
        (false, true, _) => {
            let Ok([d, x]) = regs.get_disjoint_mut([range(dst), range(a)]) else {
                return false;
            };
            d.iter_mut().zip(x.iter()).for_each(|(d, x)| *d = f(*x, *d));
            true
        }
        (false, false, true) => lanes1(regs, dst, a, |x| f(x, x)),
        (false, false, false) => {
            let Ok([d, x, y]) = regs.get_disjoint_mut([range(dst), range(a), range(b)]) else {
                return false;
            };
            for ((d, x), y) in d.iter_mut().zip(x.iter()).zip(y.iter()) {
                *d = f(*x, *y);
            }
            true
        }
    }
}

/// `dst = cond ? a : b` on every lane (`c`, a copy of the condition, holds booleans: 0 or 1).
fn select(regs: &mut [u64], dst: Slot, a: Slot, b: Slot, c: &[u64; WIDTH]) -> bool {
    let (Some(x), Some(y)) = (lanes(regs, a), lanes(regs, b)) else {
        return false;
    };
    let (x, y): ([u64; WIDTH], [u64; WIDTH]) = (*x, *y);
    let at = dst as usize * WIDTH;
    let Some(d) = regs.get_mut(at..at + WIDTH) else {
        return false;
    };
    for (((d, x), y), c) in d.iter_mut().zip(&x).zip(&y).zip(c) {
        *d = if *c & 1 != 0 { *x } else { *y };
    }
    true
}
