//! Dominance rules of SPIR-V 2.16.1 "Universal Validation Rules": blocks appear after their
//! dominators (SPIRV-Tools `PerformCfgChecks`), and every id is defined in a block that
//! dominates its uses (SPIRV-Tools `CheckIdDefinitionDominateUse`).

use super::{CfgError, Flow};
use crate::cfg_facts::{dominates, Function};
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

/// Every id defined in a block of the function is used only where its block dominates.
pub(super) fn definitions_dominate_uses(cx: &Ctx, function: &Function, sink: &mut Sink) {
    let idom = function.immediate_dominators();
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
                    if parent_reachable && !dominates(&idom, db, pb) {
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
                    dominates(&idom, db, b)
                };
                if !ok {
                    sink.error(Some(i), CfgError::DefinitionDoesNotDominateUse { id });
                }
            }
        }
    }
}
