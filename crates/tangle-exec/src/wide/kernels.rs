//! The wide path's own lane kernels for the commonest ops on 32-bit values with every lane
//! active: one straight loop per operation over the 128 lanes, the operation chosen once per op
//! and the width fixed, so rustc vectorises them. Everything else (other widths, a partial
//! mask) goes to the reference path's kernels ([`crate::run::alu::exec_pure`]).
//!
//! They compute what [`crate::semantics::int`] computes for 32-bit
//! operands (registers hold a value's bits zero-extended to 64): the low 32 bits of a wrapping
//! result, and a shift by 32 or more giving 0, the fallback the reference takes (with checks on,
//! such a shift sends the dispatch back to the reference path before it runs anyway).

use super::WIDTH;
use crate::program::{IntBin, IntCmp, Op, Slot};

/// Runs `op` on every lane when it is one of the ops here; `false` otherwise (nothing done).
pub fn exec_fast(op: &Op, regs: &mut [u64]) -> bool {
    match *op {
        Op::IntBin {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => int_bin(op, regs, dst, a, b),
        Op::IntCmp {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => int_cmp(op, regs, dst, a, b),
        Op::Copy { dst, src } => binary(regs, dst, src, src, |x, _| x),
        Op::Select { dst, cond, a, b } => {
            let Some(c) = lanes(regs, cond) else {
                return false;
            };
            let c: [u64; WIDTH] = *c;
            select(regs, dst, a, b, &c)
        }
        _ => false,
    }
}

/// The 32-bit integer binary operations, on zero-extended operands: the operation is matched
/// once and each arm is its own loop (a `match` inside the lane loop is not hoisted by rustc).
/// Division and remainders keep the reference's kernels and fallbacks (`false`).
fn int_bin(op: IntBin, regs: &mut [u64], dst: Slot, a: Slot, b: Slot) -> bool {
    let lo = |v: u64| v as u32;
    let f = |v: u32| u64::from(v);
    match op {
        IntBin::Add => binary(regs, dst, a, b, |x, y| f(lo(x).wrapping_add(lo(y)))),
        IntBin::Sub => binary(regs, dst, a, b, |x, y| f(lo(x).wrapping_sub(lo(y)))),
        IntBin::Mul => binary(regs, dst, a, b, |x, y| f(lo(x).wrapping_mul(lo(y)))),
        IntBin::And => binary(regs, dst, a, b, |x, y| f(lo(x) & lo(y))),
        IntBin::Or => binary(regs, dst, a, b, |x, y| f(lo(x) | lo(y))),
        IntBin::Xor => binary(regs, dst, a, b, |x, y| f(lo(x) ^ lo(y))),
        IntBin::ShiftLeft => binary(regs, dst, a, b, |x, y| {
            f(if lo(y) >= 32 { 0 } else { lo(x) << lo(y) })
        }),
        IntBin::ShiftRightLogical => binary(regs, dst, a, b, |x, y| {
            f(if lo(y) >= 32 { 0 } else { lo(x) >> lo(y) })
        }),
        IntBin::ShiftRightArithmetic => binary(regs, dst, a, b, |x, y| {
            f(((lo(x) as i32) >> lo(y).min(31)) as u32)
        }),
        IntBin::UDiv | IntBin::SDiv | IntBin::UMod | IntBin::SRem | IntBin::SMod => false,
    }
}

/// The 32-bit integer comparisons, one loop per comparison (0 or 1 per lane).
fn int_cmp(op: IntCmp, regs: &mut [u64], dst: Slot, a: Slot, b: Slot) -> bool {
    let u = |v: u64| v as u32;
    let s = |v: u64| v as u32 as i32;
    let f = |c: bool| u64::from(c);
    match op {
        IntCmp::Eq => binary(regs, dst, a, b, |x, y| f(u(x) == u(y))),
        IntCmp::Ne => binary(regs, dst, a, b, |x, y| f(u(x) != u(y))),
        IntCmp::UGt => binary(regs, dst, a, b, |x, y| f(u(x) > u(y))),
        IntCmp::UGe => binary(regs, dst, a, b, |x, y| f(u(x) >= u(y))),
        IntCmp::ULt => binary(regs, dst, a, b, |x, y| f(u(x) < u(y))),
        IntCmp::ULe => binary(regs, dst, a, b, |x, y| f(u(x) <= u(y))),
        IntCmp::SGt => binary(regs, dst, a, b, |x, y| f(s(x) > s(y))),
        IntCmp::SGe => binary(regs, dst, a, b, |x, y| f(s(x) >= s(y))),
        IntCmp::SLt => binary(regs, dst, a, b, |x, y| f(s(x) < s(y))),
        IntCmp::SLe => binary(regs, dst, a, b, |x, y| f(s(x) <= s(y))),
    }
}

/// The lanes of `slot`.
fn lanes(regs: &[u64], slot: Slot) -> Option<&[u64; WIDTH]> {
    let at = slot as usize * WIDTH;
    regs.get(at..at + WIDTH)?.try_into().ok()
}

/// `dst = f(a, b)` on every lane. Distinct slots are borrowed side by side; when an operand is
/// the destination it is copied out first, so each lane reads its old value.
#[inline(always)]
fn binary(regs: &mut [u64], dst: Slot, a: Slot, b: Slot, f: impl Fn(u64, u64) -> u64) -> bool {
    let range = |s: Slot| s as usize * WIDTH..(s as usize + 1) * WIDTH;
    if dst != a && dst != b {
        if a == b {
            if let Ok([d, x]) = regs.get_disjoint_mut([range(dst), range(a)]) {
                for (d, x) in d.iter_mut().zip(x.iter()) {
                    *d = f(*x, *x);
                }
                return true;
            }
        } else if let Ok([d, x, y]) = regs.get_disjoint_mut([range(dst), range(a), range(b)]) {
            for ((d, x), y) in d.iter_mut().zip(x.iter()).zip(y.iter()) {
                *d = f(*x, *y);
            }
            return true;
        }
    }
    let (Some(x), Some(y)) = (lanes(regs, a), lanes(regs, b)) else {
        return false;
    };
    let (x, y): ([u64; WIDTH], [u64; WIDTH]) = (*x, *y);
    let Some(d) = regs.get_mut(range(dst)) else {
        return false;
    };
    for ((d, x), y) in d.iter_mut().zip(&x).zip(&y) {
        *d = f(*x, *y);
    }
    true
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
