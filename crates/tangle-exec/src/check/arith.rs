//! Sanitizer checks of integer arithmetic: division by zero, signed division overflow,
//! oversized shifts, wraparound of NoSignedWrap/NoUnsignedWrap operations (and, through [`crate::check::domain`], GLSL.std.450 domains). Lowering emits a check op before an operation only where the second
//! operand is not a constant that makes it defined ([`crate::lower::arith`]).

use crate::program::{IntBin, Op};
use crate::report::Finding;
use crate::run::access::LaneFinding;
use crate::run::alu::{bits_of, rd};
use crate::semantics::int;

/// Runs a check op for the lanes in `mask`, recording findings; `false` for other ops.
pub fn exec_check(
    op: &Op,
    regs: &[u64],
    n: usize,
    mask: u128,
    found: &mut Vec<LaneFinding>,
) -> bool {
    match *op {
        Op::CheckDivision { bits, signed, a, b } => {
            for l in bits_of(mask, n) {
                let (x, y) = (rd(regs, n, a, l), rd(regs, n, b, l));
                if int::unsigned_division_is_undefined(y) {
                    found.push((l, Finding::DivisionByZero));
                } else if signed && int::signed_division_is_undefined(bits, x, y) {
                    found.push((l, Finding::DivisionOverflow));
                }
            }
        }
        Op::CheckShift { bits, shift } => {
            for l in bits_of(mask, n) {
                let s = rd(regs, n, shift, l);
                if int::shift_is_undefined(bits, s) {
                    found.push((l, Finding::ShiftTooLarge { shift: s, bits }));
                }
            }
        }
        Op::CheckRemainderSign { bits, a, b } => {
            for l in bits_of(mask, n) {
                let x = crate::semantics::sign_extend(bits, rd(regs, n, a, l));
                let y = crate::semantics::sign_extend(bits, rd(regs, n, b, l));
                // A zero divisor is the division check's finding.
                if (x < 0 || y < 0) && y != 0 {
                    found.push((l, Finding::NegativeRemainder { a: x, b: y }));
                }
            }
        }
        Op::CheckWrap {
            op: o,
            bits,
            a,
            b,
            signed,
            unsigned,
        } => {
            for l in bits_of(mask, n) {
                let (x, y) = (rd(regs, n, a, l), rd(regs, n, b, l));
                let w = match o {
                    IntBin::Add => int::iadd_wraps(bits, x, y),
                    IntBin::Sub => int::isub_wraps(bits, x, y),
                    IntBin::Mul => int::imul_wraps(bits, x, y),
                    IntBin::ShiftLeft => int::shift_left_logical_wraps(bits, x, y),
                    _ => int::Wraps::default(),
                };
                let (ws, wu) = (signed && w.signed, unsigned && w.unsigned);
                if ws || wu {
                    found.push((
                        l,
                        Finding::Wrap {
                            signed: ws,
                            bits,
                            a: x,
                            b: y,
                        },
                    ));
                }
            }
        }
        _ => return crate::check::domain::exec_check(op, regs, n, mask, found),
    }
    true
}
