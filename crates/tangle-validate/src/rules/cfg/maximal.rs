//! SPV_KHR_maximal_reconvergence (SPIRV-Tools `MaximalReconvergenceChecks`): in every function
//! reachable from an entry point that declares `MaximallyReconvergesKHR`, conditional branches
//! have two different targets, and only merge blocks, continue targets, loop headers and switch
//! targets join paths.

use super::CfgError;
use crate::cfg_facts::{Function, Merge};
use crate::facts::IdSet;
use crate::rules::{Ctx, Sink};
use spirv::Op;
use tangle_spirv::Id;

/// Entry points with `MaximallyReconvergesKHR` and every function they call, transitively.
pub(super) fn functions(cx: &Ctx) -> IdSet {
    let roots: Vec<Id> = cx
        .facts
        .entry_points
        .iter()
        .map(|e| e.function)
        .filter(|f| {
            cx.facts.execution_modes.get(f).is_some_and(|modes| {
                modes
                    .iter()
                    .any(|m| m.mode == spirv::ExecutionMode::MaximallyReconvergesKHR as u32)
            })
        })
        .collect();
    if roots.is_empty() {
        return IdSet::default();
    }
    cx.cfg.reachable_functions(&roots)
}

/// The two SPV_KHR_maximal_reconvergence rules on one affected function.
pub(super) fn check(cx: &Ctx, function: &Function, sink: &mut Sink) {
    // Blocks that may legitimately join paths: merge blocks, continue targets, switch targets.
    let mut joins = IdSet::default();
    for block in &function.blocks {
        if let Some((merge, _)) = block.merge {
            joins.insert(merge.merge_block());
            if let Merge::Loop {
                continue_target, ..
            } = merge
            {
                joins.insert(continue_target);
            }
        }
        let terminator = cx.module.instructions.get(block.end).and_then(|t| t.op());
        if terminator == Some(Op::Switch) {
            joins.extend(block.successors.iter().copied());
        }
        if terminator == Some(Op::BranchConditional) {
            if let [t, f] = block.successors.as_slice() {
                if t == f {
                    sink.error(Some(block.end), CfgError::MaximalSameBranchTargets);
                }
            }
        }
    }
    let preds = function.predecessors();
    for (b, block) in function.blocks.iter().enumerate() {
        let many = preds.get(b).is_some_and(|p| p.len() >= 2);
        let loop_header = matches!(block.merge, Some((Merge::Loop { .. }, _)));
        if many && !loop_header && !joins.contains(&block.label) {
            sink.error(
                Some(block.start),
                CfgError::MaximalEarlyReconvergence { label: block.label },
            );
        }
    }
}
