//! Control flow: branch targets, merge declarations, dominance of definitions over uses
//! (SPIR-V 2.16.1 "Universal Validation Rules" and 2.11 "Structured Control Flow"), and the
//! SPV_KHR_maximal_reconvergence restrictions on every function reachable from an entry point
//! that declares `MaximallyReconvergesKHR` (SPIRV-Tools `validate_cfg.cpp`,
//! `MaximalReconvergenceChecks`).

use super::{Ctx, Sink};
use crate::cfg_facts::{dominates, Function, Merge};
use crate::facts::{IdMap, IdSet};
use spirv::Op;
use tangle_spirv::{Id, Operand};

/// A control-flow rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CfgError {
    /// Branch targets "must be the Result `<id>` of an OpLabel" in the same function.
    #[error("branch target %{target} is not a block of this function")]
    TargetNotBlock { target: Id },
    /// 2.16.1: "The first block in a function definition ... must not be the target of any branch."
    #[error("the entry block %{label} of a function must not be a branch target")]
    EntryBlockTargeted { label: Id },
    /// Merge and continue targets must be blocks of the function.
    #[error("merge or continue target %{target} is not a block of this function")]
    MergeTargetNotBlock { target: Id },
    /// 2.11: each header has its own merge block.
    #[error("block %{merge} is the merge block of more than one header")]
    MergeBlockShared { merge: Id },
    /// 2.11: "a header block must dominate its merge block" (when the merge block is reachable).
    #[error("header %{header} does not dominate its merge block %{merge}")]
    HeaderDoesNotDominateMerge { header: Id, merge: Id },
    /// 2.11: "a back edge ... must branch to a loop header".
    #[error("block %{from} branches back to %{to}, which is not a loop header")]
    BackEdgeNotToLoopHeader { from: Id, to: Id },
    /// 2.11: a loop header is the target of exactly one back edge.
    #[error("loop header %{header} is the target of {count} back edges; it must have exactly one")]
    LoopHeaderBackEdges { header: Id, count: usize },
    /// 2.11: "a loop header must dominate ... its continue target" (when that is reachable).
    #[error("loop header %{header} does not dominate its continue target %{target}")]
    HeaderDoesNotDominateContinue { header: Id, target: Id },
    /// 2.16.1: "each `<id>` ... must be defined in a block that dominates the use" (OpPhi: the parent).
    #[error("%{id} is used in a block its definition does not dominate")]
    DefinitionDoesNotDominateUse { id: Id },
    /// SPV_KHR_maximal_reconvergence: "True Label and False Label must be different labels".
    #[error("with MaximallyReconvergesKHR, OpBranchConditional must have different True and False labels")]
    MaximalSameBranchTargets,
    /// SPV_KHR_maximal_reconvergence: a block with several predecessors must be a merge block,
    /// a continue target, a loop header or a switch target.
    #[error("with MaximallyReconvergesKHR, block %{label} has several predecessors but is not a merge block, continue target, loop header or switch target")]
    MaximalEarlyReconvergence { label: Id },
    /// 2.11: an `OpSwitch` is a selection header, so it "must be preceded by an OpSelectionMerge"
    /// (SPIRV-Tools `ValidateStructuredSelections`).
    #[error("OpSwitch must be preceded by an OpSelectionMerge instruction")]
    SwitchWithoutMerge,
    /// 2.11: a conditional branch to two blocks, neither of which is a merge block, continue
    /// target or other structured target, must be a selection header ("Selection must be
    /// structured" in SPIRV-Tools `ValidateStructuredSelections`).
    #[error("OpBranchConditional to %{true_label} and %{false_label} must be preceded by an OpSelectionMerge (selection must be structured)")]
    SelectionNotStructured { true_label: Id, false_label: Id },
}

/// Runs the control-flow rules on every function.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let maximal = maximally_reconverging_functions(cx);
    for function in &cx.cfg.functions {
        if function.blocks.is_empty() {
            continue;
        }
        if !targets(function, sink) {
            continue;
        }
        let idom = function.immediate_dominators();
        merges(function, &idom, sink);
        back_edges(function, &idom, sink);
        definitions_dominate_uses(cx, function, &idom, sink);
        structured_selections(cx, function, sink);
        if maximal.contains(&function.id) {
            maximal_reconvergence(cx, function, sink);
        }
    }
}

/// Branch, merge and continue targets are blocks of the function, and the entry block is never
/// targeted. Returns false when the function's edges are unusable.
fn targets(function: &Function, sink: &mut Sink) -> bool {
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

/// Merge blocks are not shared and are dominated by their header.
fn merges(function: &Function, idom: &[Option<usize>], sink: &mut Sink) {
    let index = function.block_index();
    let mut seen = IdSet::default();
    for (h, block) in function.blocks.iter().enumerate() {
        let Some((merge, at)) = block.merge else {
            continue;
        };
        let m = merge.merge_block();
        if !seen.insert(m) {
            sink.error(Some(at), CfgError::MergeBlockShared { merge: m });
            continue;
        }
        if let Some(&mi) = index.get(&m) {
            let reachable = idom.get(mi).copied().flatten().is_some();
            if reachable && !dominates(idom, h, mi) {
                sink.error(
                    Some(at),
                    CfgError::HeaderDoesNotDominateMerge {
                        header: block.label,
                        merge: m,
                    },
                );
            }
        }
    }
}

/// Back edges (to a block that dominates the source) go to loop headers, one per header, and
/// headers dominate their continue targets.
fn back_edges(function: &Function, idom: &[Option<usize>], sink: &mut Sink) {
    let index = function.block_index();
    let reachable = |b: usize| idom.get(b).copied().flatten().is_some();
    let mut counts = vec![0usize; function.blocks.len()];
    let is_loop_header = |t: usize| {
        matches!(
            function.blocks.get(t).and_then(|h| h.merge),
            Some((Merge::Loop { .. }, _))
        )
    };
    for (b, block) in function.blocks.iter().enumerate() {
        let mut targets: Vec<usize> = block
            .successors
            .iter()
            .filter_map(|s| index.get(s).copied())
            .collect();
        targets.dedup();
        for t in targets {
            if !reachable(b) {
                // An unreachable block has no dominators. Like SPIRV-Tools, which walks the CFG
                // augmented with unreachable blocks, count its edges into loop headers as back
                // edges: an unreachable continue construct still closes its loop.
                if is_loop_header(t) {
                    if let Some(c) = counts.get_mut(t) {
                        *c += 1;
                    }
                }
                continue;
            }
            if !dominates(idom, t, b) {
                continue;
            }
            if !is_loop_header(t) {
                let to = function.blocks.get(t).map_or(0, |h| h.label);
                sink.error(
                    Some(block.end),
                    CfgError::BackEdgeNotToLoopHeader {
                        from: block.label,
                        to,
                    },
                );
            } else if let Some(c) = counts.get_mut(t) {
                *c += 1;
            }
        }
    }
    for (h, block) in function
        .blocks
        .iter()
        .enumerate()
        .filter(|(h, _)| reachable(*h))
    {
        let Some((
            Merge::Loop {
                continue_target, ..
            },
            at,
        )) = block.merge
        else {
            continue;
        };
        let count = counts.get(h).copied().unwrap_or(0);
        if count != 1 {
            sink.error(
                Some(at),
                CfgError::LoopHeaderBackEdges {
                    header: block.label,
                    count,
                },
            );
        }
        if let Some(&c) = index.get(&continue_target) {
            if reachable(c) && !dominates(idom, h, c) {
                sink.error(
                    Some(at),
                    CfgError::HeaderDoesNotDominateContinue {
                        header: block.label,
                        target: continue_target,
                    },
                );
            }
        }
    }
}

/// Every id defined in a block of the function is used only where its block dominates.
fn definitions_dominate_uses(
    cx: &Ctx,
    function: &Function,
    idom: &[Option<usize>],
    sink: &mut Sink,
) {
    // id → (block index, instruction index) of definitions inside blocks.
    let mut def_block: IdMap<(usize, usize)> = IdMap::default();
    for (b, block) in function.blocks.iter().enumerate() {
        for i in block.start..=block.end {
            if let Some(id) = cx
                .module
                .instructions
                .get(i)
                .and_then(|inst| inst.result_id)
            {
                def_block.insert(id, (b, i));
            }
        }
    }
    let index = function.block_index();
    for (b, block) in function.blocks.iter().enumerate() {
        // Uses in unreachable blocks are not constrained.
        if idom.get(b).copied().flatten().is_none() {
            continue;
        }
        for i in block.start..=block.end {
            let Some(inst) = cx.module.instructions.get(i) else {
                continue;
            };
            if inst.op() == Some(Op::Phi) {
                // (value, parent) pairs: the value's block must dominate the parent block.
                for pair in inst.operands.chunks(2) {
                    let (Some(value), Some(parent)) = (
                        pair.first().and_then(Operand::id),
                        pair.get(1).and_then(Operand::id),
                    ) else {
                        continue;
                    };
                    let (Some(&(db, _)), Some(&pb)) = (def_block.get(&value), index.get(&parent))
                    else {
                        continue;
                    };
                    let parent_reachable = idom.get(pb).copied().flatten().is_some();
                    if parent_reachable && !dominates(idom, db, pb) {
                        sink.error(
                            Some(i),
                            CfgError::DefinitionDoesNotDominateUse { id: value },
                        );
                    }
                }
                continue;
            }
            for id in inst.operands.iter().filter_map(Operand::id) {
                // Labels are not values; branches name them freely.
                if index.contains_key(&id) {
                    continue;
                }
                let Some(&(db, di)) = def_block.get(&id) else {
                    continue;
                };
                let ok = if db == b {
                    di < i
                } else {
                    dominates(idom, db, b)
                };
                if !ok {
                    sink.error(Some(i), CfgError::DefinitionDoesNotDominateUse { id });
                }
            }
        }
    }
}

/// Entry points with `MaximallyReconvergesKHR` and every function they call, transitively.
fn maximally_reconverging_functions(cx: &Ctx) -> IdSet {
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
fn maximal_reconvergence(cx: &Ctx, function: &Function, sink: &mut Sink) {
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

/// Blocks reachable from the entry block through branch edges and merge/continue declarations
/// (SPIRV-Tools' "structurally reachable"), by block index.
fn structurally_reachable(function: &Function) -> Vec<bool> {
    let index = function.block_index();
    let mut seen = vec![false; function.blocks.len()];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        match seen.get_mut(b) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        let Some(block) = function.blocks.get(b) else {
            continue;
        };
        let mut next = block.successors.clone();
        if let Some((merge, _)) = block.merge {
            next.push(merge.merge_block());
            if let Merge::Loop {
                continue_target, ..
            } = merge
            {
                next.push(continue_target);
            }
        }
        stack.extend(next.iter().filter_map(|id| index.get(id).copied()));
    }
    seen
}

/// Selections are structured: an `OpSwitch` has an `OpSelectionMerge`, and an
/// `OpBranchConditional` without one (or with only an `OpLoopMerge`) targets at least one block
/// that is already a structured target.
///
/// SPIRV-Tools walks the blocks in structural reverse post-order, accepting a merge-less
/// conditional branch when either target was already "seen" (a merge block, continue target, or
/// target of an earlier conditional branch or switch). This check uses every such target in the
/// function instead of only earlier ones, so it reports a subset of what spirv-val reports and
/// never rejects a module spirv-val accepts.
fn structured_selections(cx: &Ctx, function: &Function, sink: &mut Sink) {
    let reachable = structurally_reachable(function);
    let op = |b: &crate::cfg_facts::Block| cx.module.instructions.get(b.end).and_then(|t| t.op());
    let mut structured = IdSet::default();
    for block in &function.blocks {
        if let Some((merge, _)) = block.merge {
            structured.insert(merge.merge_block());
            if let Merge::Loop {
                continue_target, ..
            } = merge
            {
                structured.insert(continue_target);
            }
        }
    }
    for (b, block) in function.blocks.iter().enumerate() {
        if !reachable.get(b).copied().unwrap_or(false) {
            continue;
        }
        match op(block) {
            Some(Op::Switch) if block.merge.is_none() => {
                sink.error(Some(block.end), CfgError::SwitchWithoutMerge);
            }
            Some(Op::BranchConditional) => {
                let selection = matches!(block.merge, Some((Merge::Selection { .. }, _)));
                let [t, f] = block.successors.as_slice() else {
                    continue;
                };
                // A target shared with another conditional branch or switch may be "seen" first.
                let shared = |id: &Id| {
                    function.blocks.iter().enumerate().any(|(o, other)| {
                        o != b
                            && matches!(op(other), Some(Op::BranchConditional | Op::Switch))
                            && other.successors.contains(id)
                    })
                };
                let known = |id: &Id| structured.contains(id) || shared(id);
                if !selection && t != f && !known(t) && !known(f) {
                    sink.error(
                        Some(block.end),
                        CfgError::SelectionNotStructured {
                            true_label: *t,
                            false_label: *f,
                        },
                    );
                }
            }
            _ => {}
        }
    }
}
