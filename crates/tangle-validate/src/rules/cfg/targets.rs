//! Branch and merge operands (SPIR-V 3.x "Control-Flow Instructions" and 2.16.1; SPIRV-Tools
//! `CfgPass`, `ValidateBranchConditional`, `ValidateLoopMerge`, `MergeBlockAssert`,
//! `FirstBlockAssert`): targets are blocks of the same function, the entry block is never a
//! target, a block is the merge block of one header only, and the `OpLoopMerge` operands agree.

use super::CfgError;
use crate::cfg_facts::{Function, Merge};
use crate::facts::IdSet;
use crate::rules::{Ctx, Sink};
use spirv::Op;
use tangle_spirv::{Instruction, Operand};

/// The per-instruction branch rules: `OpBranchConditional` labels differ (SPIR-V 1.6 and
/// later) and each `OpLoopMerge` is consistent.
pub(super) fn branches(cx: &Ctx, function: &Function, sink: &mut Sink) {
    let mut label = None;
    let end = function
        .end
        .min(cx.module.instructions.len().saturating_sub(1));
    for i in function.start..=end {
        let Some(inst) = cx.module.instructions.get(i) else {
            continue;
        };
        match inst.op() {
            Some(Op::Label) => label = inst.result_id,
            Some(Op::BranchConditional)
                if cx.module.header.version >= (1, 6)
                    && inst.id_operand(1).is_some()
                    && inst.id_operand(1) == inst.id_operand(2) =>
            {
                sink.error(Some(i), CfgError::BranchTargetsEqual);
            }
            Some(Op::LoopMerge) => loop_merge(inst, label, i, sink),
            _ => {}
        }
    }
}

/// `OpLoopMerge`: the merge block is neither the header nor the continue target, and the loop
/// controls do not contradict each other.
fn loop_merge(inst: &Instruction, block: Option<u32>, at: usize, sink: &mut Sink) {
    let (merge, continue_target) = (inst.id_operand(0), inst.id_operand(1));
    if let (Some(m), Some(header)) = (merge, block) {
        if m == header {
            sink.error(Some(at), CfgError::LoopMergeIsHeader { header });
        }
    }
    if let (Some(m), Some(c)) = (merge, continue_target) {
        if m == c {
            sink.error(Some(at), CfgError::LoopMergeIsContinue { label: m });
        }
    }
    let control = match inst.operands.get(2) {
        Some(Operand::Enum(_, v) | Operand::Int(v)) => *v,
        _ => return,
    };
    let has = |bit: spirv::LoopControl| control & bit.bits() != 0;
    use spirv::LoopControl as L;
    for (other, name) in [
        (L::UNROLL, "Unroll"),
        (L::PEEL_COUNT, "PeelCount"),
        (L::PARTIAL_COUNT, "PartialCount"),
    ] {
        if has(L::DONT_UNROLL) && has(other) {
            sink.error(
                Some(at),
                CfgError::LoopControlConflict {
                    first: name,
                    second: "DontUnroll",
                },
            );
        }
    }
    if has(L::ITERATION_MULTIPLE) {
        // The IterationMultiple value follows the DependencyLength, MinIterations and
        // MaxIterations values that are present.
        let before = [L::DEPENDENCY_LENGTH, L::MIN_ITERATIONS, L::MAX_ITERATIONS]
            .into_iter()
            .filter(|&b| has(b))
            .count();
        let value = inst
            .operands
            .get(3 + before)
            .and_then(Operand::literal)
            .unwrap_or(0);
        if value == 0 {
            sink.error(Some(at), CfgError::IterationMultipleZero);
        }
    }
}

/// Branch, merge and continue targets are blocks of the function, and the entry block is never
/// targeted. Returns false when the function's edges are unusable.
pub(super) fn targets(function: &Function, sink: &mut Sink) -> bool {
    let index = function.block_index();
    let mut ok = true;
    let entry = function.blocks.first().map(|b| b.label);
    for block in &function.blocks {
        for target in &block.successors {
            if !index.contains_key(target) {
                sink.error(
                    Some(block.end),
                    CfgError::TargetNotBlock { target: *target },
                );
                ok = false;
            } else if Some(*target) == entry {
                sink.error(
                    Some(block.end),
                    CfgError::EntryBlockTargeted { label: *target },
                );
            }
        }
        if let Some((merge, at)) = block.merge {
            let mut ids = vec![merge.merge_block()];
            if let Merge::Loop {
                continue_target, ..
            } = merge
            {
                ids.push(continue_target);
            }
            for id in ids.into_iter().filter(|id| !index.contains_key(id)) {
                sink.error(Some(at), CfgError::MergeTargetNotBlock { target: id });
                ok = false;
            }
        }
    }
    ok
}

/// A block is the merge block of at most one header.
pub(super) fn merges(function: &Function, sink: &mut Sink) {
    let mut seen = IdSet::default();
    for block in &function.blocks {
        let Some((merge, at)) = block.merge else {
            continue;
        };
        let m = merge.merge_block();
        if !seen.insert(m) {
            sink.error(Some(at), CfgError::MergeBlockShared { merge: m });
        }
    }
}
