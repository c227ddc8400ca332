//! Control-flow facts: each function's blocks, their terminators, merge instructions, successors
//! and predecessors, dominators, and the call graph.
//!
//! Built tolerantly from the instruction list: a function or block that is malformed (a missing
//! terminator, an instruction outside a block) is cut where it breaks; `rules::layout` reports why.

use crate::facts::{IdMap, IdSet};
use spirv::Op;
use tangle_spirv::{Id, Module, Operand};

/// A structured-control-flow merge declaration (`OpSelectionMerge` / `OpLoopMerge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    Selection { merge: Id },
    Loop { merge: Id, continue_target: Id },
}

impl Merge {
    /// The merge block.
    pub fn merge_block(self) -> Id {
        match self {
            Merge::Selection { merge } | Merge::Loop { merge, .. } => merge,
        }
    }
}

/// One basic block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub label: Id,
    /// Index of the `OpLabel`.
    pub start: usize,
    /// Index of the terminator.
    pub end: usize,
    /// The merge instruction right before the terminator, and its index.
    pub merge: Option<(Merge, usize)>,
    /// Branch targets of the terminator, in operand order (duplicates kept).
    pub successors: Vec<Id>,
}

/// One function definition or declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub id: Id,
    /// Index of the `OpFunction`.
    pub start: usize,
    /// Index of the `OpFunctionEnd` (or the last instruction when it is missing).
    pub end: usize,
    pub blocks: Vec<Block>,
    /// Functions called with `OpFunctionCall`.
    pub callees: Vec<Id>,
}

impl Function {
    /// Block index by label.
    pub fn block_index(&self) -> IdMap<usize> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.label, i))
            .collect()
    }

    /// The unique predecessors of each block (by block index), counting only edges to labels
    /// inside this function.
    pub fn predecessors(&self) -> Vec<Vec<usize>> {
        let index = self.block_index();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); self.blocks.len()];
        for (from, block) in self.blocks.iter().enumerate() {
            for succ in &block.successors {
                if let Some(list) = index.get(succ).and_then(|&to| preds.get_mut(to)) {
                    if !list.contains(&from) {
                        list.push(from);
                    }
                }
            }
        }
        preds
    }

    /// Immediate dominators by block index (the entry block is its own; unreachable blocks
    /// `None`), by the iterative algorithm of Cooper, Harvey and Kennedy.
    pub fn immediate_dominators(&self) -> Vec<Option<usize>> {
        let n = self.blocks.len();
        let index = self.block_index();
        // Reverse post-order from the entry block.
        let mut order = Vec::with_capacity(n);
        let mut visited = vec![false; n];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        if n > 0 {
            visited[0] = true;
            stack.push((0, 0));
        }
        while let Some((b, next)) = stack.pop() {
            let succs = &self.blocks[b].successors;
            if let Some(s) = succs.get(next) {
                stack.push((b, next + 1));
                if let Some(&t) = index.get(s) {
                    if !visited[t] {
                        visited[t] = true;
                        stack.push((t, 0));
                    }
                }
            } else {
                order.push(b);
            }
        }
        order.reverse();
        let mut rpo_number = vec![usize::MAX; n];
        for (i, &b) in order.iter().enumerate() {
            rpo_number[b] = i;
        }
        let preds = self.predecessors();
        let mut idom: Vec<Option<usize>> = vec![None; n];
        if n == 0 {
            return idom;
        }
        idom[0] = Some(0);
        let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| {
            while a != b {
                while rpo_number[a] > rpo_number[b] {
                    a = idom[a].unwrap_or(0);
                }
                while rpo_number[b] > rpo_number[a] {
                    b = idom[b].unwrap_or(0);
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new_idom: Option<usize> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(cur) => intersect(&idom, p, cur),
                    });
                }
                if new_idom.is_some() && idom[b] != new_idom {
                    idom[b] = new_idom;
                    changed = true;
                }
            }
        }
        idom
    }
}

/// Whether block `a` dominates block `b`, given immediate dominators.
pub fn dominates(idom: &[Option<usize>], a: usize, b: usize) -> bool {
    let mut cur = b;
    loop {
        if cur == a {
            return true;
        }
        match idom.get(cur).copied().flatten() {
            Some(next) if next != cur => cur = next,
            _ => return false,
        }
    }
}

/// All functions of a module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CfgFacts {
    pub functions: Vec<Function>,
}

impl CfgFacts {
    /// Splits the module's functions into blocks.
    pub fn build(module: &Module) -> CfgFacts {
        let mut functions = Vec::new();
        let mut current: Option<Function> = None;
        let mut open_block: Option<(Id, usize)> = None;
        let mut pending_merge: Option<(Merge, usize)> = None;
        for (i, inst) in module.instructions.iter().enumerate() {
            let op = inst.op();
            match op {
                Some(Op::Function) => {
                    if let Some(f) = current.take() {
                        functions.push(f);
                    }
                    let id = inst.result_id.unwrap_or(0);
                    current = Some(Function {
                        id,
                        start: i,
                        end: i,
                        blocks: Vec::new(),
                        callees: Vec::new(),
                    });
                    open_block = None;
                }
                Some(Op::FunctionEnd) => {
                    if let Some(mut f) = current.take() {
                        f.end = i;
                        functions.push(f);
                    }
                    open_block = None;
                }
                Some(Op::Label) => {
                    open_block = inst.result_id.map(|l| (l, i));
                    pending_merge = None;
                }
                Some(Op::SelectionMerge) => {
                    pending_merge = inst
                        .id_operand(0)
                        .map(|merge| (Merge::Selection { merge }, i));
                }
                Some(Op::LoopMerge) => {
                    pending_merge = match (inst.id_operand(0), inst.id_operand(1)) {
                        (Some(merge), Some(continue_target)) => Some((
                            Merge::Loop {
                                merge,
                                continue_target,
                            },
                            i,
                        )),
                        _ => None,
                    };
                }
                Some(Op::FunctionCall) => {
                    if let (Some(f), Some(callee)) = (current.as_mut(), inst.id_operand(0)) {
                        f.callees.push(callee);
                    }
                }
                _ => {}
            }
            if let (Some(o), Some(f)) = (op, current.as_mut()) {
                if is_terminator(o) {
                    if let Some((label, start)) = open_block.take() {
                        let successors = successors(o, &inst.operands);
                        let merge = pending_merge.take().filter(|(_, at)| at + 1 == i);
                        f.blocks.push(Block {
                            label,
                            start,
                            end: i,
                            merge,
                            successors,
                        });
                    }
                    f.end = i;
                }
            }
        }
        if let Some(f) = current.take() {
            functions.push(f);
        }
        CfgFacts { functions }
    }

    /// The function with this id.
    pub fn function(&self, id: Id) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// The functions reachable from `roots` through calls (roots included).
    pub fn reachable_functions(&self, roots: &[Id]) -> IdSet {
        let by_id: IdMap<&Function> = self.functions.iter().map(|f| (f.id, f)).collect();
        let mut seen = IdSet::default();
        let mut stack = roots.to_vec();
        while let Some(f) = stack.pop() {
            if seen.insert(f) {
                if let Some(func) = by_id.get(&f) {
                    stack.extend(func.callees.iter().copied());
                }
            }
        }
        seen
    }
}

/// Whether the opcode ends a block.
pub fn is_terminator(op: Op) -> bool {
    matches!(
        op,
        Op::Branch
            | Op::BranchConditional
            | Op::Switch
            | Op::Return
            | Op::ReturnValue
            | Op::Kill
            | Op::Unreachable
            | Op::TerminateInvocation
            | Op::IgnoreIntersectionKHR
            | Op::TerminateRayKHR
            | Op::EmitMeshTasksEXT
    )
}

/// The branch targets of a terminator.
fn successors(op: Op, operands: &[Operand]) -> Vec<Id> {
    let id = |i: usize| operands.get(i).and_then(Operand::id);
    match op {
        Op::Branch => id(0).into_iter().collect(),
        Op::BranchConditional => id(1).into_iter().chain(id(2)).collect(),
        // OpSwitch: selector, default, then (literal, label) pairs; labels are the ids after the selector.
        Op::Switch => operands.iter().skip(1).filter_map(Operand::id).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::{compute, module};

    #[test]
    fn diamond_dominators_and_predecessors() {
        let body = "%c = OpIEqual %bool %u32_1 %u32_1\nOpSelectionMerge %m None\nOpBranchConditional %c %t %f\n\
                    %t = OpLabel\nOpBranch %m\n%f = OpLabel\nOpBranch %m\n%m = OpLabel";
        let m = module(&compute("", "%bool = OpTypeBool", body), "vulkan1.3");
        let cfg = CfgFacts::build(&m);
        let f = cfg.functions.first().expect("one function");
        assert_eq!(f.blocks.len(), 4);
        assert_eq!(f.predecessors(), vec![vec![], vec![0], vec![0], vec![1, 2]]);
        let idom = f.immediate_dominators();
        assert_eq!(idom, vec![Some(0), Some(0), Some(0), Some(0)]);
        assert!(dominates(&idom, 0, 3));
        assert!(!dominates(&idom, 1, 3));
        assert!(matches!(
            f.blocks.first().and_then(|b| b.merge),
            Some((Merge::Selection { .. }, _))
        ));
    }
}
