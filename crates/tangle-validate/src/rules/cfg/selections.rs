//! Every divergence is structured (SPIR-V 2.11: a block ending in `OpBranchConditional` or
//! `OpSwitch` is a header, unless it only branches to blocks that already have a structured
//! role), exactly as SPIRV-Tools `ValidateStructuredSelections` decides it.
//!
//! The reference walks the structurally reachable blocks in reverse post-order of the
//! structural traversal ([`Structure::postorder`](crate::cfg_facts::Structure)), keeping a
//! "seen" set of labels: merge blocks and continue targets as their headers are passed, and the
//! targets of every conditional branch and switch. A conditional branch without an
//! `OpSelectionMerge` (or with an `OpLoopMerge`) is accepted when at least one of its targets
//! was seen before it; an `OpSwitch` always needs an `OpSelectionMerge`.

use super::{CfgError, Flow};
use crate::cfg_facts::Merge;
use crate::facts::IdSet;
use crate::rules::Sink;
use spirv::Op;

/// Checks the divergences of one function in the reference's order.
pub(super) fn check(flow: &Flow, sink: &mut Sink) {
    let mut seen = IdSet::default();
    for &b in flow.s.postorder.iter().rev() {
        let Some(block) = flow.block(b) else {
            continue;
        };
        let merge = flow.merge(b);
        match merge {
            Some(Merge::Selection { merge }) => {
                seen.insert(merge);
            }
            Some(Merge::Loop {
                merge,
                continue_target,
            }) => {
                seen.insert(merge);
                seen.insert(continue_target);
            }
            None => {}
        }
        if !flow.s.is_reachable(b) {
            continue;
        }
        match flow.terminator(b) {
            Some(Op::BranchConditional) => {
                let [t, f] = block.successors.as_slice() else {
                    continue;
                };
                let t_new = seen.insert(*t);
                let f_new = seen.insert(*f);
                let selection = matches!(merge, Some(Merge::Selection { .. }));
                if !selection && t_new && f_new {
                    sink.error(
                        Some(block.end),
                        CfgError::SelectionNotStructured {
                            true_label: *t,
                            false_label: *f,
                        },
                    );
                }
            }
            Some(Op::Switch) => {
                if merge.is_none() {
                    sink.error(Some(block.end), CfgError::SwitchWithoutMerge);
                }
                seen.extend(block.successors.iter().copied());
            }
            _ => {}
        }
    }
}
