//! Group instructions as pure functions: the source lane of SPV_KHR_subgroup_rotate
//! (`shared/spec/SPV_KHR_subgroup_rotate.txt`) and of the shuffle and quad instructions (SPIR-V
//! spec 3.52.25 "Non-Uniform Instructions"), and the reduction / scan operators of
//! OpGroupNonUniform{IAdd, FAdd, …, LogicalXor} with their identities.
//!
//! Lanes are ids within the scope (`SubgroupLocalInvocationId`, or `LocalInvocationIndex` for
//! Workgroup scope). Whether a source lane is active is the executor's business; these
//! functions only say which lane is meant, and `None` where the spec makes the result undefined
//! whatever the activity.

use super::float;
use super::{from_signed, mask, sign_extend, signed_max, signed_min};

/// OpGroupNonUniformRotateKHR: the invocation whose Value is returned.
///
/// `group_size` is the RotationGroupSize: ClusterSize when present, otherwise the subgroup
/// size. Delta is taken at full width (it "is treated as unsigned"); only its low bits matter.
///
/// # Spec
/// "Invocation ID = ( (LocalId + Delta) & (RotationGroupSize - 1) ) + (LocalId &
/// ~(RotationGroupSize - 1))"
pub fn rotate_source_lane(lane: u32, delta: u64, group_size: u32) -> u32 {
    let size_mask = u64::from(group_size.wrapping_sub(1));
    let lane = u64::from(lane);
    // Wrapping is exact: the sum is reduced modulo a power of two not above 2^32.
    (((lane.wrapping_add(delta)) & size_mask) + (lane & !size_mask)) as u32
}

/// Whether a rotate's ClusterSize is undefined.
///
/// # Spec
/// "Behavior is undefined unless ClusterSize is at least 1 and a power of 2. If ClusterSize is
/// greater than the declared SubGroupSize, executing this instruction results in undefined
/// behavior."
pub fn rotate_cluster_is_undefined(cluster_size: u64, subgroup_size: u32) -> bool {
    !cluster_size.is_power_of_two() || cluster_size > u64::from(subgroup_size)
}

/// OpGroupNonUniformShuffleXor: "Return the Value of the invocation identified by the current
/// invocation's id within the group xor'ed with Mask." `None` when that id "is greater than or
/// equal to the size of the group".
pub fn shuffle_xor_source_lane(lane: u32, mask_value: u64, group_size: u32) -> Option<u32> {
    let src = u64::from(lane) ^ mask_value;
    (src < u64::from(group_size)).then_some(src as u32)
}

/// OpGroupNonUniformShuffle: "Return the Value of the invocation identified by the id Id." `None`
/// when Id is outside the group (undefined like an inactive invocation).
pub fn shuffle_source_lane(id: u64, group_size: u32) -> Option<u32> {
    (id < u64::from(group_size)).then_some(id as u32)
}

/// OpGroupNonUniformShuffleUp: "Return the Value of the invocation identified by the current
/// invocation's id within the group - Delta." `None` when "Delta is greater than the current
/// invocation's id within the group".
pub fn shuffle_up_source_lane(lane: u32, delta: u64) -> Option<u32> {
    u64::from(lane).checked_sub(delta).map(|src| src as u32)
}

/// OpGroupNonUniformShuffleDown: "Return the Value of the invocation identified by the current
/// invocation's id within the group + Delta." `None` when "Delta is greater than or equal to the
/// size of the group, or if the current invocation's id within the group + Delta is ... greater
/// than or equal to the size of the group."
pub fn shuffle_down_source_lane(lane: u32, delta: u64, group_size: u32) -> Option<u32> {
    let src = u64::from(lane).checked_add(delta)?;
    (src < u64::from(group_size)).then_some(src as u32)
}

/// OpGroupNonUniformQuadBroadcast: "Return the Value of the invocation within the quad with a
/// quad index equal to Index." `None` when Index is not below 4 (the quad has no such member).
pub fn quad_broadcast_source_lane(lane: u32, index: u64) -> Option<u32> {
    (index < 4).then_some((lane & !3) | index as u32)
}

/// OpGroupNonUniformQuadSwap: "Swap the Value of the invocation within the quad with another
/// invocation in the quad using Direction." Direction 0 swaps horizontally (quad index ^ 1), 1
/// vertically (^ 2) and 2 diagonally (^ 3); other directions give `None`.
pub fn quad_swap_source_lane(lane: u32, direction: u64) -> Option<u32> {
    match direction {
        0 => Some(lane ^ 1),
        1 => Some(lane ^ 2),
        2 => Some(lane ^ 3),
        _ => None,
    }
}

/// The four 32-bit components of a ballot (a `uvec4`) holding `mask`.
///
/// # Spec
/// OpGroupNonUniformBallot: "The result is a bitfield value combining the Predicate value from
/// all invocations in the group that execute the same dynamic instance of this instruction. The
/// bit is set to one if the corresponding invocation is active and the Predicate for that
/// invocation evaluated to true; otherwise, it is set to zero." Bit 0 of component 0 is
/// invocation 0.
pub fn ballot_words(mask_bits: u128) -> [u64; 4] {
    [0u32, 1, 2, 3].map(|i| ((mask_bits >> (32 * i)) as u64) & 0xffff_ffff)
}

/// The invocation mask held by a ballot's components (the inverse of [`ballot_words`]); extra
/// components are ignored.
pub fn ballot_from_words(words: &[u64]) -> u128 {
    words
        .iter()
        .take(4)
        .enumerate()
        .fold(0u128, |acc, (i, &w)| {
            acc | (u128::from(w & 0xffff_ffff) << (32 * i))
        })
}

/// The ballot bits that stand for invocations of a group of `group_size` (BallotBitCount,
/// FindLSB and FindMSB consider "only the bits in Value required to represent all bits of the
/// group's invocations").
fn group_bits(mask_bits: u128, group_size: u32) -> u128 {
    if group_size >= 128 {
        mask_bits
    } else {
        mask_bits & ((1u128 << group_size) - 1)
    }
}

/// OpGroupNonUniformBallotBitCount with Reduce: the number of set bits of the group.
pub fn ballot_bit_count(mask_bits: u128, group_size: u32) -> u64 {
    u64::from(group_bits(mask_bits, group_size).count_ones())
}

/// OpGroupNonUniformBallotBitCount with InclusiveScan: the set bits with index ≤ `lane`.
pub fn ballot_inclusive_bit_count(mask_bits: u128, group_size: u32, lane: u32) -> u64 {
    let below_or_at = if lane >= 127 {
        u128::MAX
    } else {
        (1u128 << (lane + 1)) - 1
    };
    u64::from((group_bits(mask_bits, group_size) & below_or_at).count_ones())
}

/// OpGroupNonUniformBallotBitCount with ExclusiveScan: the set bits with index < `lane`.
pub fn ballot_exclusive_bit_count(mask_bits: u128, group_size: u32, lane: u32) -> u64 {
    let below = if lane >= 128 {
        u128::MAX
    } else {
        (1u128 << lane) - 1
    };
    u64::from((group_bits(mask_bits, group_size) & below).count_ones())
}

/// OpGroupNonUniformBallotFindLSB: "Find the least significant bit set to 1 in Value,
/// considering only the bits in Value required to represent all bits of the group's
/// invocations. If none of the considered bits is set to 1, the resulting value is undefined."
/// `None` in that undefined case.
pub fn ballot_find_lsb(mask_bits: u128, group_size: u32) -> Option<u32> {
    let m = group_bits(mask_bits, group_size);
    (m != 0).then(|| m.trailing_zeros())
}

/// OpGroupNonUniformBallotFindMSB: "Find the most significant bit set to 1 in Value,
/// considering only the bits in Value required to represent all bits of the group's
/// invocations. If none of the considered bits is set to 1, the resulting value is undefined."
/// `None` in that undefined case.
pub fn ballot_find_msb(mask_bits: u128, group_size: u32) -> Option<u32> {
    let m = group_bits(mask_bits, group_size);
    (m != 0).then(|| 127 - m.leading_zeros())
}

/// OpGroupNonUniformBallotBitExtract: "Evaluates to true if the bit in Value at position Index
/// is set to 1." An Index beyond the ballot's 128 bits gives false.
pub fn ballot_bit_extract(mask_bits: u128, index: u64) -> u64 {
    if index >= 128 {
        return 0;
    }
    ((mask_bits >> index) & 1) as u64
}

/// The operator of a group reduction or scan (`OpGroupNonUniform<Op>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupOp {
    /// OpGroupNonUniformIAdd: "The identity I for Operation is 0."
    IAdd,
    /// OpGroupNonUniformFAdd: "The identity I for Operation is 0."
    FAdd,
    /// OpGroupNonUniformIMul: "The identity I for Operation is 1."
    IMul,
    /// OpGroupNonUniformFMul: "The identity I for Operation is 1."
    FMul,
    /// OpGroupNonUniformSMin: "The identity I for Operation is INT_MAX."
    SMin,
    /// OpGroupNonUniformUMin: "The identity I for Operation is UINT_MAX."
    UMin,
    /// OpGroupNonUniformFMin: "The identity I for Operation is +INF."
    FMin,
    /// OpGroupNonUniformSMax: "The identity I for Operation is INT_MIN."
    SMax,
    /// OpGroupNonUniformUMax: "The identity I for Operation is 0."
    UMax,
    /// OpGroupNonUniformFMax: "The identity I for Operation is -INF."
    FMax,
    /// OpGroupNonUniformBitwiseAnd: "The identity I for Operation is ~0."
    BitwiseAnd,
    /// OpGroupNonUniformBitwiseOr: "The identity I for Operation is 0."
    BitwiseOr,
    /// OpGroupNonUniformBitwiseXor: "The identity I for Operation is 0."
    BitwiseXor,
    /// OpGroupNonUniformLogicalAnd: "The identity I for Operation is ~0." (true)
    LogicalAnd,
    /// OpGroupNonUniformLogicalOr: "The identity I for Operation is 0." (false)
    LogicalOr,
    /// OpGroupNonUniformLogicalXor: "The identity I for Operation is 0." (false)
    LogicalXor,
}

/// A float with a NaN operand for FMin/FMax: "if for any two Values one of them is a NaN, the
/// other is chosen" (Rust's `f64::min`/`max` do exactly that).
fn float_min_max(bits: u32, a: u64, b: u64, max: bool) -> u64 {
    let (x, y) = (float::to_f64(bits, a), float::to_f64(bits, b));
    let pick_a = if x.is_nan() {
        false
    } else if y.is_nan() {
        true
    } else if x == y {
        // -0 and +0 compare equal; keep the first so the result is one of the operands.
        true
    } else {
        (x > y) == max
    };
    if pick_a {
        a
    } else {
        b
    }
}

impl GroupOp {
    /// The operator of an `OpGroupNonUniform<Op>` instruction, by opcode.
    pub fn from_opcode(opcode: u16) -> Option<GroupOp> {
        use spirv::Op as O;
        const TABLE: [(O, GroupOp); 16] = [
            (O::GroupNonUniformIAdd, GroupOp::IAdd),
            (O::GroupNonUniformFAdd, GroupOp::FAdd),
            (O::GroupNonUniformIMul, GroupOp::IMul),
            (O::GroupNonUniformFMul, GroupOp::FMul),
            (O::GroupNonUniformSMin, GroupOp::SMin),
            (O::GroupNonUniformUMin, GroupOp::UMin),
            (O::GroupNonUniformFMin, GroupOp::FMin),
            (O::GroupNonUniformSMax, GroupOp::SMax),
            (O::GroupNonUniformUMax, GroupOp::UMax),
            (O::GroupNonUniformFMax, GroupOp::FMax),
            (O::GroupNonUniformBitwiseAnd, GroupOp::BitwiseAnd),
            (O::GroupNonUniformBitwiseOr, GroupOp::BitwiseOr),
            (O::GroupNonUniformBitwiseXor, GroupOp::BitwiseXor),
            (O::GroupNonUniformLogicalAnd, GroupOp::LogicalAnd),
            (O::GroupNonUniformLogicalOr, GroupOp::LogicalOr),
            (O::GroupNonUniformLogicalXor, GroupOp::LogicalXor),
        ];
        TABLE
            .iter()
            .find(|(o, _)| *o as u32 == u32::from(opcode))
            .map(|&(_, g)| g)
    }

    /// The identity element at component width `bits` (a canonical bit pattern).
    pub fn identity(self, bits: u32) -> u64 {
        match self {
            GroupOp::IAdd | GroupOp::UMax | GroupOp::BitwiseOr | GroupOp::BitwiseXor => 0,
            GroupOp::LogicalOr | GroupOp::LogicalXor => 0,
            GroupOp::LogicalAnd => 1,
            GroupOp::IMul => 1,
            GroupOp::UMin | GroupOp::BitwiseAnd => mask(bits),
            GroupOp::SMin => from_signed(bits, signed_max(bits)),
            GroupOp::SMax => from_signed(bits, signed_min(bits)),
            GroupOp::FAdd => float::from_f64(bits, 0.0),
            GroupOp::FMul => float::from_f64(bits, 1.0),
            GroupOp::FMin => float::from_f64(bits, f64::INFINITY),
            GroupOp::FMax => float::from_f64(bits, f64::NEG_INFINITY),
        }
    }

    /// Combines two values with the operator, at component width `bits`. Float operators round
    /// once per step like the arithmetic instruction they are named after.
    pub fn combine(self, bits: u32, a: u64, b: u64) -> u64 {
        match self {
            GroupOp::IAdd => super::int::iadd(bits, a, b),
            GroupOp::IMul => super::int::imul(bits, a, b),
            GroupOp::FAdd => float::fadd(bits, a, b),
            GroupOp::FMul => float::fmul(bits, a, b),
            GroupOp::SMin => {
                if sign_extend(bits, a) <= sign_extend(bits, b) {
                    a
                } else {
                    b
                }
            }
            GroupOp::SMax => {
                if sign_extend(bits, a) >= sign_extend(bits, b) {
                    a
                } else {
                    b
                }
            }
            GroupOp::UMin => a.min(b),
            GroupOp::UMax => a.max(b),
            GroupOp::FMin => float_min_max(bits, a, b, false),
            GroupOp::FMax => float_min_max(bits, a, b, true),
            GroupOp::BitwiseAnd => a & b,
            GroupOp::BitwiseOr => a | b,
            GroupOp::BitwiseXor => a ^ b,
            GroupOp::LogicalAnd => u64::from(a != 0 && b != 0),
            GroupOp::LogicalOr => u64::from(a != 0 || b != 0),
            GroupOp::LogicalXor => u64::from((a != 0) != (b != 0)),
        }
    }

    /// Reduce: the operator folded over `values` in lane order, starting from the identity.
    pub fn reduce(self, bits: u32, values: &[u64]) -> u64 {
        values
            .iter()
            .fold(self.identity(bits), |acc, &v| self.combine(bits, acc, v))
    }

    /// InclusiveScan: element i is the fold of `values[..=i]` in lane order.
    pub fn inclusive_scan(self, bits: u32, values: &[u64]) -> Vec<u64> {
        let mut acc = self.identity(bits);
        values
            .iter()
            .map(|&v| {
                acc = self.combine(bits, acc, v);
                acc
            })
            .collect()
    }

    /// ExclusiveScan: element i is the fold of `values[..i]` (the identity for the first).
    pub fn exclusive_scan(self, bits: u32, values: &[u64]) -> Vec<u64> {
        let mut acc = self.identity(bits);
        values
            .iter()
            .map(|&v| {
                let before = acc;
                acc = self.combine(bits, acc, v);
                before
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{proptest_config, truncate};
    use super::*;
    use proptest::prelude::*;

    const ALL: [GroupOp; 16] = [
        GroupOp::IAdd,
        GroupOp::FAdd,
        GroupOp::IMul,
        GroupOp::FMul,
        GroupOp::SMin,
        GroupOp::UMin,
        GroupOp::FMin,
        GroupOp::SMax,
        GroupOp::UMax,
        GroupOp::FMax,
        GroupOp::BitwiseAnd,
        GroupOp::BitwiseOr,
        GroupOp::BitwiseXor,
        GroupOp::LogicalAnd,
        GroupOp::LogicalOr,
        GroupOp::LogicalXor,
    ];

    /// Naive rotate: walk `delta` steps forward inside the lane's cluster.
    fn naive_rotate(lane: u32, delta: u64, size: u32) -> u32 {
        let base = lane - lane % size;
        base + ((u64::from(lane % size) + delta % u64::from(size)) % u64::from(size)) as u32
    }

    #[test]
    fn rotate_examples() {
        // Subgroup of 8, delta 1: each invocation reads its right neighbour, wrapping.
        let got: Vec<u32> = (0..8).map(|l| rotate_source_lane(l, 1, 8)).collect();
        assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 0]);
        // Clusters of 4.
        let got: Vec<u32> = (0..8).map(|l| rotate_source_lane(l, 3, 4)).collect();
        assert_eq!(got, [3, 0, 1, 2, 7, 4, 5, 6]);
        assert_eq!(rotate_source_lane(5, u64::MAX, 8), 4);
        assert!(rotate_cluster_is_undefined(3, 32));
        assert!(rotate_cluster_is_undefined(0, 32));
        assert!(rotate_cluster_is_undefined(64, 32));
        assert!(!rotate_cluster_is_undefined(32, 32));
    }

    #[test]
    fn shuffle_and_quad_lanes() {
        assert_eq!(shuffle_xor_source_lane(5, 3, 8), Some(6));
        assert_eq!(shuffle_xor_source_lane(5, 8, 8), None);
        assert_eq!(shuffle_source_lane(7, 8), Some(7));
        assert_eq!(shuffle_source_lane(8, 8), None);
        assert_eq!(shuffle_up_source_lane(5, 2), Some(3));
        assert_eq!(shuffle_up_source_lane(1, 2), None);
        assert_eq!(shuffle_down_source_lane(5, 2, 8), Some(7));
        assert_eq!(shuffle_down_source_lane(5, 3, 8), None);
        assert_eq!(shuffle_down_source_lane(5, u64::MAX, 8), None);
        assert_eq!(quad_broadcast_source_lane(6, 1), Some(5));
        assert_eq!(quad_broadcast_source_lane(6, 4), None);
        let swaps: Vec<_> = (0..3).map(|d| quad_swap_source_lane(4, d)).collect();
        assert_eq!(swaps, [Some(5), Some(6), Some(7)]);
        assert_eq!(quad_swap_source_lane(4, 3), None);
    }

    #[test]
    fn opcodes_map_to_operators() {
        for op in ALL {
            let name = format!("GroupNonUniform{op:?}");
            let desc = tangle_spirv::grammar::instruction_by_name(&format!("Op{name}"));
            let opcode = desc.map(|d| d.opcode);
            assert!(opcode.is_some(), "{name}");
            assert_eq!(opcode.and_then(GroupOp::from_opcode), Some(op));
        }
        assert_eq!(
            GroupOp::from_opcode(spirv::Op::GroupNonUniformBallot as u16),
            None
        );
    }

    /// Naive ballot references: bit by bit over the lanes.
    fn check_ballot(mask_bits: u128, size: u32, lane: u32) {
        let bit = |i: u32| (mask_bits >> i) & 1 == 1;
        let set: Vec<u32> = (0..size).filter(|&i| bit(i)).collect();
        assert_eq!(ballot_from_words(&ballot_words(mask_bits)), mask_bits);
        assert_eq!(ballot_bit_count(mask_bits, size), set.len() as u64);
        let upto = set.iter().filter(|&&i| i <= lane).count() as u64;
        let before = set.iter().filter(|&&i| i < lane).count() as u64;
        assert_eq!(ballot_inclusive_bit_count(mask_bits, size, lane), upto);
        assert_eq!(ballot_exclusive_bit_count(mask_bits, size, lane), before);
        assert_eq!(ballot_find_lsb(mask_bits, size), set.first().copied());
        assert_eq!(ballot_find_msb(mask_bits, size), set.last().copied());
        assert_eq!(
            ballot_bit_extract(mask_bits, u64::from(lane)),
            u64::from(lane < 128 && bit(lane))
        );
    }

    #[test]
    fn ballot_edges() {
        assert_eq!(
            ballot_words(1 | (1 << 33) | (1 << 127)),
            [1, 2, 0, 0x8000_0000]
        );
        for m in [0u128, 1, u128::MAX, 1 << 127, 0xf0] {
            for size in [1u32, 4, 32, 64, 128] {
                for lane in [0u32, 3, 31, 32, 127] {
                    check_ballot(m, size, lane.min(size - 1));
                }
            }
        }
        assert_eq!(ballot_bit_extract(u128::MAX, 128), 0);
    }

    #[test]
    fn identities_are_neutral() {
        let f32v = |x: f32| u64::from(x.to_bits());
        for op in ALL {
            for bits in [8u32, 16, 32, 64] {
                let float = matches!(
                    op,
                    GroupOp::FAdd | GroupOp::FMul | GroupOp::FMin | GroupOp::FMax
                );
                let logical = matches!(
                    op,
                    GroupOp::LogicalAnd | GroupOp::LogicalOr | GroupOp::LogicalXor
                );
                if float && bits == 8 {
                    continue;
                }
                let samples: Vec<u64> = if logical {
                    vec![0, 1]
                } else if float {
                    [1.5f64, -3.0, 0.25, 1e4]
                        .iter()
                        .map(|&x| float::from_f64(bits, x))
                        .collect()
                } else {
                    vec![0, 1, mask(bits), mask(bits) >> 1, 0x5a & mask(bits)]
                };
                for v in samples {
                    let i = op.identity(bits);
                    assert_eq!(op.combine(bits, i, v), v, "{op:?} {bits} {v:#x}");
                    assert_eq!(op.combine(bits, v, i), v, "{op:?} {bits} {v:#x}");
                }
            }
        }
        assert_eq!(GroupOp::FAdd.identity(32), f32v(0.0));
        assert_eq!(GroupOp::FMin.identity(32), f32v(f32::INFINITY));
        assert_eq!(GroupOp::FMax.identity(16), 0xfc00);
        assert_eq!(GroupOp::SMin.identity(8), 0x7f);
        assert_eq!(GroupOp::SMax.identity(8), 0x80);
        // NaN is skipped by FMin / FMax.
        let nan = f32v(f32::NAN);
        assert_eq!(
            GroupOp::FMin.reduce(32, &[nan, f32v(2.0), f32v(-1.0)]),
            f32v(-1.0)
        );
        assert_eq!(GroupOp::FMax.reduce(32, &[f32v(2.0), nan]), f32v(2.0));
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn ballot_random(mask_bits: u128, log in 0u32..8, lane in 0u32..128) {
            let size = 1u32 << log;
            check_ballot(mask_bits, size, lane % size);
        }

        #[test]
        fn rotate_random(lane in 0u32..128, delta: u64, log in 0u32..8) {
            let size = 1u32 << log;
            prop_assert_eq!(rotate_source_lane(lane, delta, size), naive_rotate(lane, delta, size));
        }

        #[test]
        fn scans_random(values in proptest::collection::vec(any::<u64>(), 0..40), w in 0usize..4) {
            let bits = [8u32, 16, 32, 64][w];
            let vals: Vec<u64> = values.iter().map(|&v| truncate(bits, v)).collect();
            let bools: Vec<u64> = values.iter().map(|&v| v & 1).collect();
            let signed = |v: u64| sign_extend(bits, v);
            // Integer references over i128 / iterators.
            let sum: i128 = vals.iter().map(|&v| i128::from(v)).sum();
            prop_assert_eq!(GroupOp::IAdd.reduce(bits, &vals), (sum % (1i128 << bits)) as u64);
            let prod = vals.iter().fold(1u128, |a, &v| a.wrapping_mul(u128::from(v)));
            prop_assert_eq!(GroupOp::IMul.reduce(bits, &vals), (prod % (1u128 << bits)) as u64);
            prop_assert_eq!(GroupOp::UMin.reduce(bits, &vals), vals.iter().copied().min().unwrap_or(mask(bits)));
            prop_assert_eq!(GroupOp::UMax.reduce(bits, &vals), vals.iter().copied().max().unwrap_or(0));
            let smin = vals.iter().map(|&v| signed(v)).min().unwrap_or(signed_max(bits));
            prop_assert_eq!(GroupOp::SMin.reduce(bits, &vals), from_signed(bits, smin));
            let smax = vals.iter().map(|&v| signed(v)).max().unwrap_or(signed_min(bits));
            prop_assert_eq!(GroupOp::SMax.reduce(bits, &vals), from_signed(bits, smax));
            prop_assert_eq!(GroupOp::BitwiseAnd.reduce(bits, &vals), vals.iter().fold(mask(bits), |a, v| a & v));
            prop_assert_eq!(GroupOp::BitwiseOr.reduce(bits, &vals), vals.iter().fold(0, |a, v| a | v));
            prop_assert_eq!(GroupOp::BitwiseXor.reduce(bits, &vals), vals.iter().fold(0, |a, v| a ^ v));
            prop_assert_eq!(GroupOp::LogicalAnd.reduce(1, &bools), u64::from(bools.iter().all(|&b| b == 1)));
            prop_assert_eq!(GroupOp::LogicalOr.reduce(1, &bools), u64::from(bools.contains(&1)));
            prop_assert_eq!(GroupOp::LogicalXor.reduce(1, &bools), bools.iter().sum::<u64>() % 2);
            // Scans against prefix reductions.
            for op in ALL {
                let vs = if matches!(op, GroupOp::LogicalAnd | GroupOp::LogicalOr | GroupOp::LogicalXor) { &bools } else { &vals };
                let b = if matches!(op, GroupOp::FAdd | GroupOp::FMul | GroupOp::FMin | GroupOp::FMax) { 32 } else { bits };
                let vs: Vec<u64> = vs.iter().map(|&v| truncate(b, v)).collect();
                let inc = op.inclusive_scan(b, &vs);
                let exc = op.exclusive_scan(b, &vs);
                for i in 0..vs.len() {
                    prop_assert_eq!(inc[i], op.reduce(b, &vs[..=i]));
                    prop_assert_eq!(exc[i], op.reduce(b, &vs[..i]));
                }
            }
            // Float sums in lane order, f32 rounded each step.
            let fl: Vec<u64> = vals.iter().map(|&v| u64::from((v as u16 as f32 / 7.0).to_bits())).collect();
            let want = fl.iter().fold(0.0f32, |a, &v| a + f32::from_bits(v as u32));
            prop_assert_eq!(GroupOp::FAdd.reduce(32, &fl), u64::from(want.to_bits()));
        }
    }
}
