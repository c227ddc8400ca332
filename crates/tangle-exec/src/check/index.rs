//! Dynamic indices out of range: of a vector (`OpVectorExtractDynamic`), and of an array,
//! vector or matrix an access chain walks.
//!
//! # Spec
//! SPIR-V `OpVectorExtractDynamic`/`OpVectorInsertDynamic`: "Behavior is undefined if Index's
//! value is less than zero or greater than or equal to the number of components in Vector."
//! The executor reads 0 / writes nothing there ([`crate::run::alu`]); this check reports it.
//! An access chain's index outside its array addresses memory outside the object the shader
//! named (a neighbouring variable or member, which a memory bounds check cannot tell from a
//! legal access): undefined in Vulkan without robustness features, and reported here whether
//! or not the address stays inside the memory region.

use crate::program::Op;
use crate::report::Finding;
use crate::run::access::LaneFinding;
use crate::run::alu::{bits_of, full_mask, lanes_of, rd};
use crate::semantics::mask;

/// Reports the lanes in `lanes` whose dynamic vector index is out of range, for the ops that
/// take one.
pub fn check(op: &Op, regs: &[u64], n: usize, lanes: u128, found: &mut Vec<LaneFinding>) {
    if let Op::AccessChain { steps, .. } = op {
        for s in steps.iter() {
            if let crate::program::Step::Dyn {
                index,
                bits,
                signed,
                count,
                ..
            } = *s
            {
                if count == 0 {
                    continue;
                }
                let index_of = |raw: u64| {
                    let raw = raw & mask(bits);
                    if signed {
                        crate::semantics::sign_extend(bits, raw)
                    } else {
                        i64::try_from(raw).unwrap_or(i64::MAX)
                    }
                };
                let outside = |i: i64| i < 0 || i >= i64::from(count);
                // Every lane active and in range (the usual case): one pass over the row.
                if lanes == full_mask(n)
                    && !lanes_of(regs, n, index)
                        .iter()
                        .any(|&v| outside(index_of(v)))
                {
                    continue;
                }
                for l in bits_of(lanes, n) {
                    let i = index_of(rd(regs, n, index, l));
                    if outside(i) {
                        found.push((l, Finding::ChainIndexOutOfRange { index: i, count }));
                    }
                }
            }
        }
        return;
    }
    let (count, index, bits) = match *op {
        Op::ExtractDynamic {
            count,
            index,
            index_bits,
            ..
        }
        | Op::InsertDynamic {
            count,
            index,
            index_bits,
            ..
        } => (count, index, index_bits),
        _ => return,
    };
    for l in bits_of(lanes, n) {
        let i = rd(regs, n, index, l) & mask(bits);
        if i >= u64::from(count) {
            let index = crate::semantics::sign_extend(bits, i);
            found.push((l, Finding::IndexOutOfRange { index, count }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_outside_the_vector_are_reported() {
        let n = 4;
        // Slot 0 holds the index of each lane: 0, 3, 4, -1 (32-bit).
        let regs = vec![0, 3, 4, 0xffff_ffff];
        let op = Op::ExtractDynamic {
            dst: 1,
            base: 2,
            count: 4,
            index: 0,
            index_bits: 32,
        };
        let mut found = Vec::new();
        check(&op, &regs, n, 0b1111, &mut found);
        let lanes: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
        assert_eq!(lanes, vec![2, 3]);
        assert_eq!(
            found[1].1,
            Finding::IndexOutOfRange {
                index: -1,
                count: 4
            }
        );
        found.clear();
        check(&op, &regs, n, 0b0011, &mut found);
        assert!(found.is_empty());
    }
}
