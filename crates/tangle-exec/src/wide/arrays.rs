//! Per-invocation arrays held in register slots on the wide path: the loads, stores and
//! `UndefMemory` of a Function variable that is indexed dynamically (ggml's accumulators,
//! `temp[NUM_COLS][NUM_ROWS]` indexed by loop counters), which
//! [`crate::lower::promote_inlined`] gives a run of slots, one an element, in the fast program.
//!
//! The access chain that makes the pointer is the reference path's own op, kept as it is (its
//! sanitizer check reports each index outside its array, and the wide path gives up on a
//! finding). An [`ArrayOp`] reads that pointer at run time: its offset from the variable's
//! start, over the element size, picks the slot. An offset outside the variable or between
//! elements gives the dispatch back to the reference path, which reports the access (SPIR-V
//! `OpAccessChain`: an index out of bounds is undefined), never runs it here. Each element
//! has a bit of "stored since the variable's last `UndefMemory`" in the slots after the
//! elements; a load of an element without it gives the dispatch back too (the reference path
//! reports or carries the undefined value), so no undefined value is read here. The bits start
//! undefined ([`crate::program::Program::undefs`]): the wide path's definite-assignment check
//! takes the program only where the variable's `UndefMemory` (at its function's entry) comes
//! before every access.

use crate::program::array::{ArrayKind, ArrayOp};
use crate::run::alu::{bits_of, rd, wr};

/// Runs `op` for the lanes of `mask` in `regs` (`n` lanes a slot); `Err` says why the wide
/// path gives the dispatch back.
pub fn exec(op: &ArrayOp, regs: &mut [u64], n: usize, mask: u128) -> Result<(), String> {
    if op.kind == ArrayKind::Undef {
        for s in op.stored_slots() {
            for l in bits_of(mask, n) {
                wr(regs, n, s, l, 0);
            }
        }
        return Ok(());
    }
    if op.kind == ArrayKind::Copy {
        let words = op.count + op.count.div_ceil(64);
        for i in 0..words {
            for l in bits_of(mask, n) {
                let v = rd(regs, n, op.base + i, l);
                wr(regs, n, op.value + i, l, v);
            }
        }
        return Ok(());
    }
    for l in bits_of(mask, n) {
        let off = rd(regs, n, op.ptr, l).wrapping_sub(op.origin);
        let k = off / op.unit.max(1);
        if !off.is_multiple_of(op.unit.max(1)) || k >= u64::from(op.count) {
            return Err("an access outside a per-invocation array".into());
        }
        let k = k as u32;
        let bit_slot = op.base + op.count + k / 64;
        let bit = 1u64 << (k % 64);
        let bits = rd(regs, n, bit_slot, l);
        match op.kind {
            ArrayKind::Load => {
                if bits & bit == 0 {
                    return Err("a load of an array element never stored".into());
                }
                let v = rd(regs, n, op.base + k, l);
                wr(regs, n, op.value, l, v);
            }
            _ => {
                let v = rd(regs, n, op.value, l);
                wr(regs, n, op.base + k, l, v);
                wr(regs, n, bit_slot, l, bits | bit);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_by_pointer_with_their_stored_bits() {
        let n = 2;
        // Slots: 0 pointer, 1 value, 2..5 elements, 5 stored bits.
        let op = |kind| ArrayOp {
            kind,
            value: 1,
            ptr: 0,
            origin: 1000,
            unit: 4,
            base: 2,
            count: 3,
        };
        let mut regs = vec![0u64; 6 * n];
        exec(&op(ArrayKind::Undef), &mut regs, n, 0b11).expect("undef");
        // Lane 0 stores 7 at element 2, lane 1 stores 9 at element 0.
        wr(&mut regs, n, 0, 0, 1008);
        wr(&mut regs, n, 0, 1, 1000);
        wr(&mut regs, n, 1, 0, 7);
        wr(&mut regs, n, 1, 1, 9);
        exec(&op(ArrayKind::Store), &mut regs, n, 0b11).expect("store");
        wr(&mut regs, n, 1, 0, 0);
        wr(&mut regs, n, 1, 1, 0);
        exec(&op(ArrayKind::Load), &mut regs, n, 0b11).expect("load");
        assert_eq!((rd(&regs, n, 1, 0), rd(&regs, n, 1, 1)), (7, 9));
        // Element 1 was never stored: given back.
        wr(&mut regs, n, 0, 0, 1004);
        let why = exec(&op(ArrayKind::Load), &mut regs, n, 0b01).unwrap_err();
        assert!(why.contains("never stored"), "{why}");
        // Past the end, between elements, before the start: given back.
        for p in [1012, 1002, 996] {
            wr(&mut regs, n, 0, 0, p);
            let why = exec(&op(ArrayKind::Store), &mut regs, n, 0b01).unwrap_err();
            assert!(why.contains("outside"), "{why}");
        }
        // An inactive lane's pointer is not looked at.
        exec(&op(ArrayKind::Store), &mut regs, n, 0b10).expect("lane 1 only");
    }
}
