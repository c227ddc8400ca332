//! Dominance rules of SPIR-V 2.16.1 "Universal Validation Rules": blocks appear after their
//! dominators (SPIRV-Tools `PerformCfgChecks`), every id is defined in a block that dominates
//! its uses (SPIRV-Tools `CheckIdDefinitionDominateUse`); and the control-flow nesting depth
//! limit of 2.17 "Universal Limits", measured along the dominator tree as SPIRV-Tools'
//! `Function::GetBlockDepth` measures it.

use super::{CfgError, Flow};
use crate::cfg_facts::{DomTree, Function};
use crate::facts::IdMap;
use crate::rules::{Ctx, Sink};
use spirv::Op;
use tangle_spirv::Operand;

/// "Blocks appear before all blocks they dominate", with dominators taken on SPIRV-Tools'
/// augmented CFG from the entry block.
pub(super) fn block_order(flow: &Flow, sink: &mut Sink) {
    let n = flow.function.blocks.len();
    for b in 1..n {
        let Some(d) = flow.s.idom.get(b).copied().flatten() else {
            continue;
        };
        if d > b && d < n {
            sink.error(
                flow.block(b).map(|block| block.start),
                CfgError::BlockBeforeDominator {
                    block: flow.label(b),
                    dominator: flow.label(d),
                },
            );
        }
    }
}

/// 2.17 "Universal Limits": the control-flow nesting depth is at most 1023 (SPIRV-Tools
/// `--max-control-flow-nesting-depth`, default 1023).
const MAX_NESTING_DEPTH: usize = 1023;

/// No block is nested more deeply than [`MAX_NESTING_DEPTH`]. A block's depth is that of its
/// immediate dominator, plus one when that is a header; a merge block has its header's depth;
/// a continue target is one deeper than its loop header (SPIRV-Tools `GetBlockDepth`).
///
/// Linear in the number of blocks: each depth is computed once, and the walk stops at the first
/// block past the limit, which it reports. Returns false then.
pub(super) fn nesting_depth(flow: &Flow, sink: &mut Sink) -> bool {
    let n = flow.function.blocks.len();
    // The last header naming each block as merge block or continue target (SPIRV-Tools' maps
    // keep the last registration).
    let mut merge_of = vec![None; n];
    let mut continue_of = vec![None; n];
    for h in 0..n {
        if let Some(slot) = flow.merge_block(h).and_then(|m| merge_of.get_mut(m)) {
            *slot = Some(h);
        }
        if let Some(slot) = flow.continue_target(h).and_then(|c| continue_of.get_mut(c)) {
            *slot = Some(h);
        }
    }
    // Each depth is one other block's depth plus 0 or 1. Memoized, and a block whose depth is
    // being computed counts 0 when met again (the reference's guard against cycles).
    let mut memo: Vec<Option<usize>> = vec![None; n];
    for b in 0..n {
        let mut chain: Vec<(usize, usize)> = Vec::new();
        let mut cur = b;
        let mut value = loop {
            match memo.get(cur).copied() {
                Some(Some(d)) => break d,
                Some(None) => {}
                None => break 0,
            }
            if let Some(slot) = memo.get_mut(cur) {
                *slot = Some(0);
            }
            let Some(dom) = flow
                .s
                .idom
                .get(cur)
                .copied()
                .flatten()
                .filter(|&d| d != cur)
            else {
                break 0;
            };
            let step = match (
                continue_of.get(cur).copied().flatten(),
                merge_of.get(cur).copied().flatten(),
            ) {
                (Some(header), _) if header == cur => (dom, 1),
                (Some(header), _) => (header, 1),
                (None, Some(header)) => (header, 0),
                (None, None) => (dom, usize::from(flow.merge(dom).is_some())),
            };
            chain.push((cur, step.1));
            cur = step.0;
        };
        for (block, add) in chain.into_iter().rev() {
            value += add;
            if let Some(slot) = memo.get_mut(block) {
                *slot = Some(value);
            }
        }
        let depth = memo.get(b).copied().flatten().unwrap_or(0);
        if depth > MAX_NESTING_DEPTH {
            sink.error(
                flow.block(b).map(|block| block.start),
                CfgError::NestingTooDeep {
                    block: flow.label(b),
                    depth,
                },
            );
            return false;
        }
    }
    true
}

/// Every id defined in a block of the function is used only where its block dominates.
pub(super) fn definitions_dominate_uses(cx: &Ctx, function: &Function, sink: &mut Sink) {
    let idom = function.immediate_dominators();
    // Numbered once, so each use is checked in constant time, however deep the tree.
    let tree = DomTree::new(&idom);
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
                    if parent_reachable && !tree.dominates(db, pb) {
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
                    tree.dominates(db, b)
                };
                if !ok {
                    sink.error(Some(i), CfgError::DefinitionDoesNotDominateUse { id });
                }
            }
        }
    }
}
