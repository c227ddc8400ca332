//! Control flow: branch targets and merge declarations, the order of blocks and the dominance
//! of definitions over uses (SPIR-V 2.16.1 "Universal Validation Rules"), the structured
//! control-flow rules of SPIR-V 2.11 "Structured Control Flow" (back edges, selection, loop,
//! continue and case constructs, and their exits), and the SPV_KHR_maximal_reconvergence
//! restrictions. Mirrors SPIRV-Tools 2025.5 `validate_cfg.cpp` (`PerformCfgChecks`,
//! `StructuredControlFlowChecks`, `StructuredSwitchChecks`, `ValidateStructuredSelections`,
//! `MaximalReconvergenceChecks`) and `construct.cpp`.
//!
//! One file per rule family:
//! * `targets` — branch and merge operands (targets are blocks of the function, the entry block
//!   is never targeted, merge blocks are not shared, `OpLoopMerge` operands);
//! * `dominance` — blocks appear after their dominators, definitions dominate their uses, and
//!   control flow nests at most 1023 deep;
//! * `constructs` — back edges, and the selection, loop and continue constructs with their
//!   structured exits;
//! * `switch` — `OpSwitch` case constructs and fallthrough;
//! * `selections` — every divergence is structured (`OpSelectionMerge` where needed);
//! * `maximal` — SPV_KHR_maximal_reconvergence.
//!
//! The structured rules (constructs, switch, selections) apply only to modules with the
//! `Shader` capability, as in SPIRV-Tools, and only to functions within the nesting limit (the
//! reference stops there too). Every walk is linear in the blocks of the function, or, for the
//! construct and case walks, in the blocks times the nesting depth, which the limit bounds. They run on [`Structure`], SPIRV-Tools' augmented CFG: branch
//! edges plus merge and continue edges, with a pseudo-entry and a pseudo-exit, on which
//! "structural" dominance and post-dominance are defined.

mod constructs;
mod dominance;
mod exits;
mod maximal;
mod selections;
mod switch;
mod targets;

use super::{Ctx, Sink};
use crate::cfg_facts::{Block, Function, Merge, Structure};
use crate::facts::IdMap;
use spirv::Op;
use tangle_spirv::Id;

/// Which kind of construct a rule speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstructKind {
    Selection,
    Loop,
    Continue,
}

impl std::fmt::Display for ConstructKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ConstructKind::Selection => "selection",
            ConstructKind::Loop => "loop",
            ConstructKind::Continue => "continue",
        })
    }
}

/// A control-flow rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CfgError {
    /// `OpKill`, `OpTerminateInvocation`, `OpDemoteToHelperInvocation` and
    /// `OpIsHelperInvocationEXT` are "only valid in the Fragment Execution Model" (SPIRV-Tools:
    /// "OpKill requires Fragment execution model", for every entry point whose call tree holds
    /// one).
    #[error("{op} is used in a function called from a {model} entry point; it needs the Fragment execution model")]
    FragmentOnly { op: String, model: String },
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
    /// OpBranchConditional: "Starting with version 1.6, True Label and False Label must not be
    /// the same `<id>`."
    #[error(
        "in SPIR-V 1.6 and later, OpBranchConditional must have different True and False labels"
    )]
    BranchTargetsEqual,
    /// SPIRV-Tools `ValidateLoopMerge`: the Merge Block of an `OpLoopMerge` is not its own block.
    #[error("the merge block of the loop headed by %{header} is the header itself")]
    LoopMergeIsHeader { header: Id },
    /// SPIRV-Tools `ValidateLoopMerge`: the Merge Block and the Continue Target differ.
    #[error("the loop's merge block and continue target are the same block %{label}")]
    LoopMergeIsContinue { label: Id },
    /// Loop Control: "DontUnroll ... Unroll ... only one of these two may be specified"; PeelCount
    /// and PartialCount ask for unrolling too (SPIRV-Tools `ValidateLoopMerge`).
    #[error("loop controls {first} and {second} must not both be given")]
    LoopControlConflict {
        first: &'static str,
        second: &'static str,
    },
    /// Loop Control IterationMultiple: "The value must be greater than 0."
    #[error("the IterationMultiple loop control value must be greater than 0")]
    IterationMultipleZero,
    /// 2.16.1: "The order of blocks in a function must satisfy the rule that blocks appear before
    /// all blocks they dominate."
    #[error("block %{block} appears before its dominator %{dominator}")]
    BlockBeforeDominator { block: Id, dominator: Id },
    /// 2.17 "Universal Limits": "Control-flow nesting depth ... 1023" (SPIRV-Tools measures it
    /// along the dominator tree).
    #[error("block %{block} is nested {depth} deep; control flow nests at most 1023 deep")]
    NestingTooDeep { block: Id, depth: usize },
    /// 2.16.1: "each `<id>` ... must be defined in a block that dominates the use" (OpPhi: the parent).
    #[error("%{id} is used in a block its definition does not dominate")]
    DefinitionDoesNotDominateUse { id: Id },
    /// 2.11: "a back edge ... must branch to a loop header" (SPIRV-Tools: an edge to a block on
    /// the current path of a depth-first walk of the structural graph).
    #[error("block %{from} branches back to %{to}, which is not a loop header")]
    BackEdgeNotToLoopHeader { from: Id, to: Id },
    /// 2.11: a loop header "is the target of ... exactly one back edge".
    #[error("loop header %{header} is the target of {count} back edges; it must have exactly one")]
    LoopHeaderBackEdges { header: Id, count: usize },
    /// A reachable continue target whose loop has no back edge (SPIRV-Tools reports it as an
    /// internal error: its continue construct has no back-edge block).
    #[error("the continue construct at %{target} has no back-edge block")]
    ContinueWithoutBackEdge { target: Id },
    /// 2.11: "a selection/loop header must structurally dominate its merge block".
    #[error("the {kind} header %{header} does not structurally dominate its merge block %{merge}")]
    HeaderDoesNotDominateMerge {
        kind: ConstructKind,
        header: Id,
        merge: Id,
    },
    /// 2.11: the merge block is another block than its header (it is *strictly* dominated).
    #[error("the {kind} header %{header} is its own merge block")]
    HeaderIsOwnMerge { kind: ConstructKind, header: Id },
    /// 2.11: the continue construct is "the set of blocks structurally dominated by an
    /// OpLoopMerge's Continue Target", which must dominate the back-edge block.
    #[error("the continue target %{target} does not structurally dominate the back-edge block %{back_edge}")]
    ContinueDoesNotDominateBackEdge { target: Id, back_edge: Id },
    /// 2.11: the back-edge block "must structurally post dominate the Continue Target".
    #[error("the back-edge block %{back_edge} does not structurally post-dominate the continue target %{target}")]
    BackEdgeDoesNotPostDominate { target: Id, back_edge: Id },
    /// 2.11 "Structured control-flow rules": branches leave a construct only through its
    /// structured exits (SPIRV-Tools `Construct::IsStructuredExit`).
    #[error("block %{block} exits the {kind} construct headed by %{header}, but not through a structured exit")]
    ConstructExitNotStructured {
        kind: ConstructKind,
        block: Id,
        header: Id,
    },
    /// 2.11: a construct is entered only through its header.
    #[error("block %{from} branches into the {kind} construct headed by %{header}, but not to its header")]
    ConstructEnteredNotAtHeader {
        kind: ConstructKind,
        from: Id,
        header: Id,
    },
    /// 2.11: "if a construct contains another header block, it also contains that header's
    /// corresponding merge block if that merge block is reachable".
    #[error("header %{inner} is in the {kind} construct headed by %{header}, but its merge block %{merge} is not")]
    NestedMergeOutside {
        kind: ConstructKind,
        inner: Id,
        header: Id,
        merge: Id,
    },
    /// 2.11: the continue construct is entered only from inside its loop construct (or by a back
    /// edge to the continue target).
    #[error("block %{from} branches to the continue target %{target} of the loop headed by %{header}, but is not in that loop construct")]
    ContinueEnteredFromOutsideLoop { from: Id, target: Id, header: Id },
    /// 2.11: "an OpSwitch block dominates all its defined case constructs".
    #[error("switch header %{header} does not structurally dominate its case %{target}")]
    SwitchDoesNotDominateCase { header: Id, target: Id },
    /// 2.11: a case construct branches only to its switch's merge, another case construct, or a
    /// structured exit of the switch.
    #[error("the case construct at %{case} branches to %{target}, which is not another case, the switch's merge block or a structured exit")]
    CaseInvalidBranch { case: Id, target: Id },
    /// 2.11: "each case construct is branched to by at most one other case construct" and
    /// branches to at most one.
    #[error("the case construct at %{case} branches to two other case constructs, %{first} and %{second}")]
    CaseFallsThroughToSeveral { case: Id, first: Id, second: Id },
    /// 2.11: "if Target T1 branches to Target T2 ..., then T1 must immediately precede T2 in the
    /// list of OpSwitch Target operands".
    #[error("the case construct at %{case} falls through to %{next}, which does not follow it in the OpSwitch target list")]
    FallthroughNotToNext { case: Id, next: Id },
    /// 2.11: "each case construct is branched to by at most one other case construct".
    #[error("several case constructs fall through to the case construct at %{case}")]
    CaseTargetedBySeveral { case: Id },
    /// 2.11: an `OpSwitch` is a selection header, so it "must be preceded by an OpSelectionMerge"
    /// (SPIRV-Tools `ValidateStructuredSelections`).
    #[error("OpSwitch must be preceded by an OpSelectionMerge instruction")]
    SwitchWithoutMerge,
    /// 2.11: a conditional branch to two blocks, neither of which is a merge block, continue
    /// target or an earlier divergence's target, must be a selection header ("Selection must be
    /// structured" in SPIRV-Tools `ValidateStructuredSelections`).
    #[error("OpBranchConditional to %{true_label} and %{false_label} must be preceded by an OpSelectionMerge (selection must be structured)")]
    SelectionNotStructured { true_label: Id, false_label: Id },
    /// SPV_KHR_maximal_reconvergence: "True Label and False Label must be different labels".
    #[error("with MaximallyReconvergesKHR, OpBranchConditional must have different True and False labels")]
    MaximalSameBranchTargets,
    /// SPV_KHR_maximal_reconvergence: a block with several predecessors must be a merge block,
    /// a continue target, a loop header or a switch target.
    #[error("with MaximallyReconvergesKHR, block %{label} has several predecessors but is not a merge block, continue target, loop header or switch target")]
    MaximalEarlyReconvergence { label: Id },
}

/// The Fragment-only instructions (the `OpKill` class) in the call tree of an entry point whose
/// execution model is not Fragment.
pub fn check_models(cx: &Ctx, sink: &mut Sink) {
    cx.visit_with_models(|index, inst, models| {
        let fragment_only = matches!(
            inst.op(),
            Some(
                Op::Kill
                    | Op::TerminateInvocation
                    | Op::DemoteToHelperInvocation
                    | Op::IsHelperInvocationEXT
            )
        );
        if !fragment_only {
            return;
        }
        if let Some(model) = models
            .iter()
            .find(|m| **m != spirv::ExecutionModel::Fragment as u32)
        {
            let e = CfgError::FragmentOnly {
                op: inst.name().to_string(),
                model: super::model_name(*model),
            };
            sink.error(Some(index), e);
        }
    });
}

/// Runs the control-flow rules on every function.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let maximal = maximal::functions(cx);
    // SPIRV-Tools: "Structured control flow checks are only required for shader capabilities".
    let shader = cx.facts.has_capability(spirv::Capability::Shader);
    for function in &cx.cfg.functions {
        if function.blocks.is_empty() {
            continue;
        }
        targets::branches(cx, function, sink);
        if !targets::targets(function, sink) {
            continue;
        }
        targets::merges(function, sink);
        let flow = Flow::new(cx, function);
        dominance::block_order(&flow, sink);
        dominance::definitions_dominate_uses(cx, function, sink);
        // SPIRV-Tools stops at the nesting limit too; past it, the construct walks below would
        // cost the square of the depth on a module that is already refused.
        if shader && dominance::nesting_depth(&flow, sink) {
            constructs::back_edges(&flow, sink);
            constructs::check(&flow, sink);
            selections::check(&flow, sink);
        }
        if maximal.contains(&function.id) {
            maximal::check(cx, function, sink);
        }
    }
}

/// One function as the structured rules read it: its blocks, the augmented CFG and its trees,
/// and which header names each block as its merge block.
struct Flow<'a> {
    cx: &'a Ctx<'a>,
    function: &'a Function,
    /// Block index by label.
    index: IdMap<usize>,
    s: Structure,
    /// For each block, the headers whose merge instruction names it as Merge Block, in module
    /// order.
    merge_headers: Vec<Vec<usize>>,
    /// The structured-exit climb, precomputed.
    climb: exits::Climb,
}

impl<'a> Flow<'a> {
    fn new(cx: &'a Ctx<'a>, function: &'a Function) -> Flow<'a> {
        let index = function.block_index();
        let s = Structure::build(function);
        let mut merge_headers = vec![Vec::new(); function.blocks.len()];
        for (h, block) in function.blocks.iter().enumerate() {
            if let Some((merge, _)) = block.merge {
                if let Some(list) = index
                    .get(&merge.merge_block())
                    .and_then(|&m| merge_headers.get_mut(m))
                {
                    list.push(h);
                }
            }
        }
        let mut flow = Flow {
            cx,
            function,
            index,
            s,
            merge_headers,
            climb: exits::Climb::default(),
        };
        flow.climb = exits::Climb::new(&flow);
        flow
    }

    fn block(&self, b: usize) -> Option<&'a Block> {
        self.function.blocks.get(b)
    }

    /// The label of block `b` (0 for the pseudo nodes).
    fn label(&self, b: usize) -> Id {
        self.block(b).map_or(0, |block| block.label)
    }

    /// The merge instruction of block `b`.
    fn merge(&self, b: usize) -> Option<Merge> {
        self.block(b).and_then(|block| block.merge).map(|(m, _)| m)
    }

    /// The index of the merge instruction of block `b`, else of its terminator.
    fn merge_at(&self, b: usize) -> Option<usize> {
        let block = self.block(b)?;
        Some(block.merge.map_or(block.end, |(_, at)| at))
    }

    /// The merge block of header `b`, by index.
    fn merge_block(&self, b: usize) -> Option<usize> {
        self.merge(b)
            .and_then(|m| self.index.get(&m.merge_block()).copied())
    }

    /// The continue target of loop header `b`, by index.
    fn continue_target(&self, b: usize) -> Option<usize> {
        match self.merge(b) {
            Some(Merge::Loop {
                continue_target, ..
            }) => self.index.get(&continue_target).copied(),
            _ => None,
        }
    }

    /// The terminator opcode of block `b`.
    fn terminator(&self, b: usize) -> Option<Op> {
        self.block(b)
            .and_then(|block| self.cx.module.instructions.get(block.end))
            .and_then(|t| t.op())
    }
}
