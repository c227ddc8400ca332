//! Lowering of the group instructions (`OpGroupNonUniform*` of the Vulkan subgroup categories
//! and OpGroupNonUniformRotateKHR) to one [`Op::Group`] each; [`crate::run::group`] executes
//! them. Execution scope is Subgroup, and Workgroup for rotate (see [`Lowerer::lower_group`]).

use super::{Lowerer, Out};
use crate::error::ExecError;
use crate::program::Op;
use crate::run::group::{GroupInst, GroupKind, Scan};
use crate::semantics::group::GroupOp;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// Whether `op` is a group instruction [`Lowerer::lower_group`] handles.
pub fn is_group(op: SpvOp) -> bool {
    use SpvOp as S;
    matches!(
        op,
        S::GroupNonUniformElect
            | S::GroupNonUniformAll
            | S::GroupNonUniformAny
            | S::GroupNonUniformAllEqual
            | S::GroupNonUniformBroadcast
            | S::GroupNonUniformBroadcastFirst
            | S::GroupNonUniformBallot
            | S::GroupNonUniformInverseBallot
            | S::GroupNonUniformBallotBitExtract
            | S::GroupNonUniformBallotBitCount
            | S::GroupNonUniformBallotFindLSB
            | S::GroupNonUniformBallotFindMSB
            | S::GroupNonUniformShuffle
            | S::GroupNonUniformShuffleXor
            | S::GroupNonUniformShuffleUp
            | S::GroupNonUniformShuffleDown
            | S::GroupNonUniformQuadBroadcast
            | S::GroupNonUniformQuadSwap
            | S::GroupNonUniformRotateKHR
    ) || GroupOp::from_opcode(op as u16).is_some()
}

/// `spirv::Scope::Subgroup`.
const SUBGROUP: u64 = 3;
/// `spirv::Scope::Workgroup`.
const WORKGROUP: u64 = 2;

impl<'m> Lowerer<'m> {
    /// A constant operand's value.
    fn group_constant(&self, inst: &Instruction, i: usize, what: &str) -> Result<u64, ExecError> {
        let v = self.operand(inst, i)?;
        self.const_value(v.slot)
            .ok_or_else(|| self.unsupported(format!("a {what} that is not a constant")))
    }

    /// The GroupOperation operand at `i` and, for ClusteredReduce, the ClusterSize after it.
    fn group_operation(
        &self,
        inst: &Instruction,
        i: usize,
    ) -> Result<(Scan, Option<u64>), ExecError> {
        match inst.literal_operand(i) {
            Some(0) => Ok((Scan::Reduce, None)),
            Some(1) => Ok((Scan::Inclusive, None)),
            Some(2) => Ok((Scan::Exclusive, None)),
            Some(3) => Ok((
                Scan::Reduce,
                Some(self.group_constant(inst, i + 2, "ClusterSize")?),
            )),
            other => Err(self.unsupported(format!("GroupOperation {other:?}"))),
        }
    }

    /// Lowers one group instruction.
    pub fn lower_group(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        use SpvOp as S;
        let scope = self.group_constant(inst, 0, "Execution scope")?;
        // Rotate with Workgroup scope: "LocalId = ... LocalInvocationId if Execution is
        // Workgroup", but RotationGroupSize is still ClusterSize or the SubgroupSize. tangle reads
        // LocalId as LocalInvocationIndex, and its subgroups are the runs of SubgroupSize
        // consecutive LocalInvocationIndex values starting at multiples of SubgroupSize; so every
        // rotation group lies inside one subgroup at the same lanes, and the Subgroup-scope
        // execution gives the Workgroup-scope result (inactive and nonexistent sources included).
        let workgroup_rotate = scope == WORKGROUP && op == S::GroupNonUniformRotateKHR;
        if scope != SUBGROUP && !workgroup_rotate {
            return Err(self.unsupported(format!(
                "{} with an Execution scope other than Subgroup",
                inst.name()
            )));
        }
        let dst = self.value(inst.result_id)?.slot;
        if op == S::GroupNonUniformElect {
            let g = GroupInst {
                kind: GroupKind::Elect,
                dst,
                value: dst,
                count: 1,
                bits: 1,
                float: false,
            };
            self.emit(out, Op::Group(Box::new(g)));
            return Ok(());
        }
        // Value (or Predicate) is operand 1, after a GroupOperation operand 2.
        let with_operation =
            op == S::GroupNonUniformBallotBitCount || GroupOp::from_opcode(op as u16).is_some();
        let value = self.operand(inst, if with_operation { 2 } else { 1 })?;
        let scalar = self
            .scalar(value.ty)
            .ok_or_else(|| self.malformed("Value must be a scalar or vector"))?;
        let slot_of = |this: &Self, i: usize| this.operand(inst, i).map(|v| v.slot);
        let kind = match op {
            S::GroupNonUniformAll => GroupKind::All,
            S::GroupNonUniformAny => GroupKind::Any,
            S::GroupNonUniformAllEqual => GroupKind::AllEqual,
            S::GroupNonUniformBroadcast => GroupKind::Broadcast {
                id: slot_of(self, 2)?,
            },
            S::GroupNonUniformBroadcastFirst => GroupKind::BroadcastFirst,
            S::GroupNonUniformBallot => GroupKind::Ballot,
            S::GroupNonUniformInverseBallot => GroupKind::InverseBallot,
            S::GroupNonUniformBallotBitExtract => GroupKind::BallotBitExtract {
                index: slot_of(self, 2)?,
            },
            S::GroupNonUniformBallotBitCount => match self.group_operation(inst, 1)? {
                (scan, None) => GroupKind::BallotBitCount { scan },
                (_, Some(_)) => {
                    return Err(self.malformed("BallotBitCount takes no ClusteredReduce"))
                }
            },
            S::GroupNonUniformBallotFindLSB => GroupKind::BallotFindLsb,
            S::GroupNonUniformBallotFindMSB => GroupKind::BallotFindMsb,
            S::GroupNonUniformShuffle => GroupKind::Shuffle {
                id: slot_of(self, 2)?,
            },
            S::GroupNonUniformShuffleXor => GroupKind::ShuffleXor {
                mask: slot_of(self, 2)?,
            },
            S::GroupNonUniformShuffleUp => GroupKind::ShuffleUp {
                delta: slot_of(self, 2)?,
            },
            S::GroupNonUniformShuffleDown => GroupKind::ShuffleDown {
                delta: slot_of(self, 2)?,
            },
            S::GroupNonUniformQuadBroadcast => GroupKind::QuadBroadcast {
                index: slot_of(self, 2)?,
            },
            S::GroupNonUniformQuadSwap => GroupKind::QuadSwap {
                direction: self.group_constant(inst, 2, "Direction")?,
            },
            S::GroupNonUniformRotateKHR => {
                let cluster = match inst.id_operand(3) {
                    Some(_) => Some(self.group_constant(inst, 3, "ClusterSize")?),
                    None => None,
                };
                GroupKind::Rotate {
                    delta: slot_of(self, 2)?,
                    cluster,
                }
            }
            _ => match GroupOp::from_opcode(op as u16) {
                Some(gop) => {
                    let (scan, cluster) = self.group_operation(inst, 1)?;
                    GroupKind::Arith {
                        op: gop,
                        scan,
                        cluster,
                    }
                }
                None => return Err(self.unsupported(inst.name())),
            },
        };
        let count = self.program.ty(value.ty).slots;
        let g = GroupInst {
            kind,
            dst,
            value: value.slot,
            count,
            bits: scalar.bits,
            float: scalar.float,
        };
        self.emit(out, Op::Group(Box::new(g)));
        Ok(())
    }
}
