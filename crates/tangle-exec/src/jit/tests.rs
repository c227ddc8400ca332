//! Each op the native compiler knows, compiled alone and run on random inputs (with the edge
//! values of every integer width and float format: 0, -0, extremes, NaNs quiet and
//! signalling with payloads, infinities, denormals) against the interpreters' lane kernel on
//! a one-lane register file: every result bit for bit, and a give-up exactly where the
//! sanitizer's check finds something.

use super::compile::compile_op;
use super::helpers::code;
use crate::program::ops::WideOp;
use crate::program::{Conv, IntBin, IntCmp, IntTern, IntUn, Op};
use crate::run::alu;
use crate::run::dot::DotInst;
use crate::semantics::dot::DotKind;
use crate::semantics::mask;

/// Inputs in slots 0..4, the result in 4 (and 5), the interpreter's scratch slot last.
const SLOTS: u32 = 7;
const ROUNDS: usize = 600;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Edge values of an integer of `bits`.
fn int_edges(bits: u32) -> Vec<u64> {
    let m = mask(bits);
    let min = 1u64 << (bits.max(1) - 1);
    [
        0,
        1,
        2,
        3,
        7,
        m,
        m - 1,
        min,
        min - 1,
        min + 1,
        u64::from(bits) - 1,
        u64::from(bits),
        u64::from(bits) + 1,
        31,
        32,
        63,
        64,
    ]
    .iter()
    .map(|v| v & m)
    .collect()
}

/// Edge values of a float format.
fn float_edges(bits: u32) -> Vec<u64> {
    match bits {
        16 => vec![
            0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0xfe3f, 0x7c01, 0xfd55, 1, 0x83ff, 0x0400,
            0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3555,
        ],
        64 => vec![
            0,
            1 << 63,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff8_0000_0000_0001,
            0xfff8_1234_5678_9abc,
            0x7ff0_0000_0000_0001,
            0xfff4_0000_0000_0000,
            1,
            0x800f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x41e0_0000_0000_0000,
            0xc3e0_0000_0000_0000,
        ],
        _ => vec![
            0,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7fc0_0001,
            0xffc1_2345,
            0x7f80_0001,
            0xff81_2345,
            1,
            0x807f_ffff,
            0x0080_0000,
            0x7f7f_ffff,
            0x3f80_0000,
            0xbf80_0000,
            0x4f00_0000,
            0xcf00_0000,
        ],
    }
}

/// A random input: an edge value half the time, else random bits of the width.
fn input(rng: &mut Rng, edges: &[u64], bits: u32) -> u64 {
    let r = rng.next();
    if r & 1 == 0 {
        edges[(r >> 8) as usize % edges.len()]
    } else {
        rng.next() & mask(bits)
    }
}

/// Compiles `op` and runs it against the lane kernel; `widths[i]`/`floats[i]` describe input
/// slot `i`. Returns how many inputs gave up.
fn check(op: Op, widths: [u32; 4], floats: [bool; 4], checks: bool) -> usize {
    check_with(op, widths, floats, checks, &[])
}

/// [`check`] with slots the compiler knows as constants (slot 5 and up).
fn check_with(
    op: Op,
    widths: [u32; 4],
    floats: [bool; 4],
    checks: bool,
    constants: &[(u32, u64)],
) -> usize {
    let code = compile_op(&op, SLOTS, checks, constants).unwrap_or_else(|e| panic!("{op:?}: {e}"));
    let edges: Vec<Vec<u64>> = (0..4)
        .map(|i| {
            if floats[i] {
                float_edges(widths[i])
            } else {
                int_edges(widths[i])
            }
        })
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(widths[0]));
    let mut gave_up = 0;
    for _ in 0..ROUNDS {
        let mut want = vec![0u64; SLOTS as usize];
        for i in 0..4 {
            want[i] = input(&mut rng, &edges[i], widths[i]);
        }
        want[4] = rng.next();
        for &(slot, v) in constants {
            want[slot as usize] = v;
        }
        let mut got = want.clone();
        let mut found = Vec::new();
        let pure = alu::exec_pure(&op, &mut want, 1, 1)
            || crate::check::arith::exec_check(&op, &want, 1, 1, &mut found)
            || crate::run::dot::exec_dot(&op, &mut want, 1, 1, &mut found);
        assert!(pure, "{op:?} has no lane kernel");
        let status = code.call_regs(&mut got);
        // The interpreter's scratch slot is its own.
        want[SLOTS as usize - 1] = 0;
        got[SLOTS as usize - 1] = 0;
        let expect_give_up = checks && !found.is_empty();
        let dot_overflow = matches!(op, Op::Dot(_)) && !found.is_empty();
        if expect_give_up || dot_overflow {
            assert_eq!(status, 1, "{op:?} on {got:x?} should give up");
            gave_up += 1;
            continue;
        }
        assert_eq!(status, 0, "{op:?} gave up on {want:x?}");
        assert_eq!(got, want, "{op:?} on inputs {:x?}", &want[..4]);
    }
    gave_up
}

const INTS: [u32; 5] = [1, 8, 16, 32, 64];

#[test]
fn integer_ops_match_the_lane_kernels() {
    use IntBin::*;
    for bits in INTS {
        let w = [bits; 4];
        for op in [
            Add,
            Sub,
            Mul,
            UDiv,
            SDiv,
            UMod,
            SRem,
            SMod,
            ShiftLeft,
            ShiftRightLogical,
            ShiftRightArithmetic,
            Or,
            Xor,
            And,
        ] {
            let op = Op::IntBin {
                op,
                bits,
                dst: 4,
                a: 0,
                b: 1,
            };
            check(op, w, [false; 4], true);
        }
        for op in [
            IntUn::Negate,
            IntUn::Not,
            IntUn::BitReverse,
            IntUn::BitCount,
        ] {
            check(
                Op::IntUn {
                    op,
                    bits,
                    dst: 4,
                    a: 0,
                },
                w,
                [false; 4],
                true,
            );
        }
        for op in [
            IntCmp::Eq,
            IntCmp::Ne,
            IntCmp::UGt,
            IntCmp::UGe,
            IntCmp::ULt,
            IntCmp::ULe,
            IntCmp::SGt,
            IntCmp::SGe,
            IntCmp::SLt,
            IntCmp::SLe,
        ] {
            let op = Op::IntCmp {
                op,
                bits,
                dst: 4,
                a: 0,
                b: 1,
            };
            check(op, w, [false; 4], true);
        }
        for op in [IntTern::BitFieldUExtract, IntTern::BitFieldSExtract] {
            let op = Op::IntTern {
                op,
                bits,
                dst: 4,
                a: 0,
                b: 1,
                c: 2,
            };
            check(op, [bits, 8, 8, 8], [false; 4], true);
        }
        let op = Op::BitFieldInsert {
            bits,
            dst: 4,
            base: 0,
            insert: 1,
            offset: 2,
            count: 3,
        };
        check(op, [bits, bits, 8, 8], [false; 4], true);
        let select = Op::Select {
            dst: 4,
            cond: 0,
            a: 1,
            b: 2,
        };
        check(select, [1, bits, bits, bits], [false; 4], true);
        check(Op::Copy { dst: 4, src: 1 }, w, [false; 4], true);
        for to in INTS {
            for op in [Conv::UConvert, Conv::SConvert] {
                let op = Op::Convert {
                    op,
                    from: bits,
                    to,
                    dst: 4,
                    a: 0,
                };
                check(op, w, [false; 4], true);
            }
        }
    }
}

#[test]
fn ops_with_a_constant_operand_match_the_lane_kernels() {
    use IntBin::*;
    for bits in INTS {
        for c in [
            0,
            1,
            7,
            13,
            u64::from(bits) - 1,
            u64::from(bits),
            40,
            64,
            65,
        ] {
            let c = c & mask(bits);
            for op in [
                ShiftLeft,
                ShiftRightLogical,
                ShiftRightArithmetic,
                Add,
                Mul,
                UDiv,
            ] {
                let op = Op::IntBin {
                    op,
                    bits,
                    dst: 4,
                    a: 0,
                    b: 5,
                };
                check_with(op, [bits; 4], [false; 4], true, &[(5, c)]);
            }
            let shift = Op::CheckShift { bits, shift: 5 };
            check_with(shift, [bits; 4], [false; 4], true, &[(5, c)]);
            for signed in [false, true] {
                let op = Op::CheckDivision {
                    bits,
                    signed,
                    a: 0,
                    b: 5,
                };
                check_with(op, [bits; 4], [false; 4], true, &[(5, c)]);
            }
        }
    }
}

#[test]
fn an_op_reading_its_own_destination_reads_the_old_value() {
    for op in [IntBin::Add, IntBin::Xor, IntBin::ShiftLeft] {
        let op = Op::IntBin {
            op,
            bits: 32,
            dst: 0,
            a: 0,
            b: 1,
        };
        check(op, [32; 4], [false; 4], true);
    }
}

#[test]
fn checks_give_up_exactly_where_the_sanitizer_finds() {
    for bits in [8, 32, 64] {
        for signed in [false, true] {
            let op = Op::CheckDivision {
                bits,
                signed,
                a: 0,
                b: 1,
            };
            assert!(check(op.clone(), [bits; 4], [false; 4], true) > 0);
            // Checks off: nothing to give up on.
            assert_eq!(check(op, [bits; 4], [false; 4], false), 0);
        }
        let op = Op::CheckShift { bits, shift: 1 };
        assert!(check(op, [bits; 4], [false; 4], true) > 0);
    }
}

#[test]
fn float_ops_match_the_lane_kernels() {
    for bits in [16, 32, 64] {
        let w = [bits; 4];
        for op in code::FLOAT_BIN {
            let op = Op::FloatBin {
                op,
                bits,
                dst: 4,
                a: 0,
                b: 1,
            };
            check(op, w, [true; 4], true);
        }
        check(Op::FNegate { bits, dst: 4, a: 0 }, w, [true; 4], true);
        for op in code::FLOAT_CMP {
            let op = Op::FloatCmp {
                op,
                bits,
                dst: 4,
                a: 0,
                b: 1,
            };
            check(op, w, [true; 4], true);
        }
        for other in [16, 32, 64] {
            let fconvert = Op::Convert {
                op: Conv::FConvert,
                from: bits,
                to: other,
                dst: 4,
                a: 0,
            };
            check(fconvert, w, [true; 4], true);
        }
        for int in [8, 16, 32, 64] {
            for op in [Conv::FToU, Conv::FToS] {
                let op = Op::Convert {
                    op,
                    from: bits,
                    to: int,
                    dst: 4,
                    a: 0,
                };
                check(op, w, [true; 4], true);
            }
            for op in [Conv::UToF, Conv::SToF] {
                let op = Op::Convert {
                    op,
                    from: int,
                    to: bits,
                    dst: 4,
                    a: 0,
                };
                check(op, [int; 4], [false; 4], true);
            }
        }
        // GLSL.std.450 FMin, FMax, FClamp, Fma, Sqrt, Floor.
        for (inst, argc) in [(37, 2), (40, 2), (43, 3), (50, 3), (31, 1), (8, 1)] {
            let op = Op::Glsl {
                inst,
                bits,
                dst: 4,
                args: [0, 1, 2],
                argc,
            };
            check(op, w, [true; 4], true);
        }
    }
}

#[test]
fn packed_dot_products_match_the_lane_kernel() {
    for kind in [DotKind::Signed, DotKind::Unsigned, DotKind::Mixed] {
        for (acc, result_bits) in [
            (None, 32),
            (None, 8),
            (None, 16),
            (None, 64),
            (Some(2), 32),
            (Some(2), 8),
            (Some(2), 16),
        ] {
            let op = Op::Dot(Box::new(DotInst {
                kind,
                comp_bits: 8,
                result_bits,
                count: 4,
                packed: true,
                dst: 4,
                a: 0,
                b: 1,
                acc,
            }));
            check(op, [32, 32, result_bits, 8], [false; 4], true);
        }
    }
}

#[test]
fn ops_without_native_code_are_refused() {
    let op = Op::Wide {
        op: WideOp::IAddCarry,
        bits: 32,
        lo: 4,
        hi: 5,
        a: 0,
        b: 1,
    };
    let err = compile_op(&op, SLOTS, true, &[]).err();
    assert!(err.is_some_and(|e| e.contains("Wide")));
}

#[test]
fn units_of_work_grow_with_the_dispatch_and_hold_whole_groups() {
    use super::batch;
    // saxpy on 16 workers: units of 16384; alu_hash: 1024; a small dispatch: the least.
    assert_eq!(batch(1 << 24, 16), 16384);
    assert_eq!(batch(1 << 20, 16), 1024);
    assert_eq!(batch(100, 2), 256);
    assert_eq!(batch(u64::MAX, 1), 16384);
    for (n, t) in [(12_345u64, 3usize), (1 << 30, 7), (0, 0), (999_999, 64)] {
        let b = batch(n, t);
        // A multiple of every lockstep group's size (at most 64 invocations).
        assert!(
            b.is_power_of_two() && (256..=16384).contains(&b) && b.is_multiple_of(64),
            "{n} {t}: {b}"
        );
    }
}
