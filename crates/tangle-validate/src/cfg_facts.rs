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
                    // Sources come in increasing order, so a repeated edge repeats the last
                    // entry: checking it keeps a block with many predecessors linear.
                    if list.last() != Some(&from) {
                        list.push(from);
                    }
                }
            }
        }
        preds
    }

    /// Immediate dominators by block index (the entry block is its own; unreachable blocks
    /// `None`), by [`immediate_dominators`] over the branch edges from the entry block.
    pub fn immediate_dominators(&self) -> Vec<Option<usize>> {
        let n = self.blocks.len();
        if n == 0 {
            return Vec::new();
        }
        let index = self.block_index();
        let succ: Vec<Vec<usize>> = self
            .blocks
            .iter()
            .map(|b| {
                b.successors
                    .iter()
                    .filter_map(|s| index.get(s).copied())
                    .collect()
            })
            .collect();
        let pred = reverse_edges(&succ);
        let order = depth_first(&succ, 0, |_, _| {});
        let mut idom = immediate_dominators(n, &order, &pred);
        if let Some(entry) = idom.first_mut() {
            *entry = Some(0);
        }
        idom
    }
}

/// The edges of `succ` turned around: for each node, the nodes with an edge to it, in the order
/// of the source nodes (one entry per edge, duplicates kept).
pub fn reverse_edges(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut pred = vec![Vec::new(); succ.len()];
    for (from, targets) in succ.iter().enumerate() {
        for &to in targets {
            if let Some(list) = pred.get_mut(to) {
                list.push(from);
            }
        }
    }
    pred
}

/// Depth-first traversal of the graph `next` (adjacency lists by node index) from `entry`, in
/// SPIRV-Tools' order (`CFA::DepthFirstTraversal`): neighbours in list order, each node entered
/// once. Returns the nodes in post-order; `back_edge(from, to)` is called for every list entry
/// that leads to a node on the current path (the entry itself included), before that entry is
/// otherwise considered.
///
/// Run over successors it computes dominators' order; over predecessors, post-dominators'.
pub fn depth_first(
    next: &[Vec<usize>],
    entry: usize,
    back_edge: impl FnMut(usize, usize),
) -> Vec<usize> {
    let mut entered = vec![false; next.len()];
    let mut on_path = vec![false; next.len()];
    depth_first_from(next, entry, &mut entered, &mut on_path, back_edge)
}

/// [`depth_first`] that skips (and marks) nodes already `entered`, so that traversals from
/// several roots cost one pass in all; `on_path` is scratch space, all false before and after.
fn depth_first_from(
    next: &[Vec<usize>],
    entry: usize,
    entered: &mut [bool],
    on_path: &mut [bool],
    mut back_edge: impl FnMut(usize, usize),
) -> Vec<usize> {
    let n = next.len().min(entered.len()).min(on_path.len());
    let mut order = Vec::new();
    if entry >= n || entered[entry] {
        return order;
    }
    let mut stack: Vec<(usize, usize)> = vec![(entry, 0)];
    entered[entry] = true;
    on_path[entry] = true;
    while let Some(top) = stack.last_mut() {
        let (node, i) = *top;
        let child = next.get(node).and_then(|list| list.get(i)).copied();
        match child {
            None => {
                order.push(node);
                on_path[node] = false;
                stack.pop();
            }
            Some(child) => {
                top.1 += 1;
                if child >= n {
                    continue;
                }
                if on_path[child] {
                    back_edge(node, child);
                }
                if !entered[child] {
                    entered[child] = true;
                    on_path[child] = true;
                    stack.push((child, 0));
                }
            }
        }
    }
    order
}

/// Immediate dominators of the `n` nodes of a graph, by the iterative algorithm of Cooper,
/// Harvey and Kennedy, run as SPIRV-Tools runs it (`CFA::CalculateDominators`): `postorder` is
/// a [`depth_first`] order (its root last) and `pred` the edges into each node, in the same
/// direction as the traversal. Post-dominators are the same computation on the reversed graph
/// (a traversal over predecessors, with successors as `pred`).
///
/// `None` for the root, for nodes the traversal did not reach, and for reached nodes whose
/// dominator never settled (SPIRV-Tools makes those their own dominator).
pub fn immediate_dominators(
    n: usize,
    postorder: &[usize],
    pred: &[Vec<usize>],
) -> Vec<Option<usize>> {
    let mut result = vec![None; n];
    let len = postorder.len();
    let Some(&root) = postorder.last() else {
        return result;
    };
    let undefined = len;
    let mut number = vec![usize::MAX; n];
    for (i, &b) in postorder.iter().enumerate() {
        if let Some(slot) = number.get_mut(b) {
            *slot = i;
        }
    }
    let known = |b: usize| number.get(b).copied().filter(|&i| i != usize::MAX);
    // dom[i]: the post-order number of the dominator of the node numbered i.
    let mut dom = vec![undefined; len];
    if let Some(d) = dom.last_mut() {
        *d = len - 1;
    }
    let _ = root;
    // Converges in a few passes on any graph a traversal produced; the bound only guards
    // against predecessor lists that disagree with the traversal.
    let mut passes = 0;
    let mut changed = true;
    while changed && passes <= len + 2 {
        changed = false;
        passes += 1;
        for (bi, &b) in postorder.iter().enumerate().rev().skip(1) {
            let preds = pred.get(b).map_or(&[][..], Vec::as_slice);
            let Some(first) = preds
                .iter()
                .copied()
                .find(|&p| known(p).is_some_and(|pi| dom.get(pi) != Some(&undefined)))
            else {
                continue;
            };
            let Some(mut idom) = known(first) else {
                continue;
            };
            for &p in preds {
                if p == first {
                    continue;
                }
                let Some(pi) = known(p) else { continue };
                if dom.get(pi) == Some(&undefined) {
                    continue;
                }
                idom = intersect(&dom, pi, idom);
            }
            if let Some(slot) = dom.get_mut(bi) {
                if *slot != idom {
                    *slot = idom;
                    changed = true;
                }
            }
        }
    }
    for (i, &b) in postorder.iter().enumerate() {
        let d = dom.get(i).copied().unwrap_or(undefined);
        if d != undefined && d != i {
            if let (Some(slot), Some(&db)) = (result.get_mut(b), postorder.get(d)) {
                *slot = Some(db);
            }
        }
    }
    result
}

/// The two-finger walk of Cooper, Harvey and Kennedy over post-order numbers. A finger that
/// stops climbing (only possible when the predecessor lists disagree with the traversal) ends
/// the walk where it is.
fn intersect(dom: &[usize], a: usize, b: usize) -> usize {
    let (mut f1, mut f2) = (a, b);
    while f1 != f2 {
        while f1 < f2 {
            match dom.get(f1) {
                Some(&next) if next > f1 && next < dom.len() => f1 = next,
                _ => return f2,
            }
        }
        while f2 < f1 {
            match dom.get(f2) {
                Some(&next) if next > f2 && next < dom.len() => f2 = next,
                _ => return f1,
            }
        }
    }
    f1
}

/// A dominator tree numbered for constant-time queries: `a` dominates `b` when `b`'s interval
/// lies in `a`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomTree {
    /// Entry and exit numbers of each node in a traversal of the tree (`u32::MAX` when the
    /// node is in no tree: only when the immediate dominators form a cycle).
    enter: Vec<u32>,
    exit: Vec<u32>,
}

impl DomTree {
    /// Numbers the forest given by immediate dominators (`None` marks a root).
    pub fn new(idom: &[Option<usize>]) -> DomTree {
        let n = idom.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (b, d) in idom.iter().enumerate() {
            match d {
                Some(d) if *d != b && *d < n => children[*d].push(b),
                _ => roots.push(b),
            }
        }
        let mut enter = vec![u32::MAX; n];
        let mut exit = vec![u32::MAX; n];
        let mut clock: u32 = 0;
        for root in roots {
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            enter[root] = clock;
            clock += 1;
            while let Some(top) = stack.last_mut() {
                let (node, i) = *top;
                match children[node].get(i).copied() {
                    Some(child) => {
                        top.1 += 1;
                        enter[child] = clock;
                        clock += 1;
                        stack.push((child, 0));
                    }
                    None => {
                        exit[node] = clock;
                        clock += 1;
                        stack.pop();
                    }
                }
            }
        }
        DomTree { enter, exit }
    }

    /// Whether `a` dominates `b` (every node dominates itself).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if a == b {
            return true;
        }
        match (
            self.enter.get(a),
            self.exit.get(a),
            self.enter.get(b),
            self.exit.get(b),
        ) {
            (Some(&ea), Some(&xa), Some(&eb), Some(&xb)) => {
                ea != u32::MAX && eb != u32::MAX && ea <= eb && xb <= xa
            }
            _ => false,
        }
    }
}

/// One function's CFG as SPIRV-Tools' structured checks see it (`Function::ComputeAugmentedCFG`
/// and `PerformCfgChecks`): the branch edges, the *structural* edges (branch edges plus an edge
/// from each header to its merge block and continue target), a pseudo-entry node before every
/// source and a pseudo-exit node after every sink of the structural graph, and the dominator
/// and post-dominator trees, reachability and back edges computed on it.
///
/// Nodes are block indices; [`Structure::entry`] and [`Structure::exit`] are the pseudo nodes.
/// Edges to labels that are not blocks of the function are left out.
#[derive(Debug, Clone, Default)]
pub struct Structure {
    /// Branch successors of each node (one entry per terminator operand, duplicates kept).
    pub succ: Vec<Vec<usize>>,
    /// Branch predecessors (one entry per edge).
    pub pred: Vec<Vec<usize>>,
    /// Structural successors: merge block and continue target first, then the branch targets.
    pub ssucc: Vec<Vec<usize>>,
    /// Structural predecessors.
    pub spred: Vec<Vec<usize>>,
    /// Blocks reachable from the entry block through structural edges.
    pub structurally_reachable: Vec<bool>,
    /// Immediate dominators on the augmented branch graph (for the block-order and nesting-depth
    /// rules).
    pub idom: Vec<Option<usize>>,
    /// Immediate structural dominators.
    pub sidom: Vec<Option<usize>>,
    /// The structural dominator tree.
    pub sdom: DomTree,
    /// The structural post-dominator tree.
    pub spdom: DomTree,
    /// Post-order of the structural traversal from the entry block (pseudo-exit included).
    pub postorder: Vec<usize>,
    /// Back edges `(from, to)` of a traversal from the pseudo-entry: structural-graph edges to
    /// a node on the current path that are also branch edges, once per branch operand, in the
    /// order found.
    pub back_edges: Vec<(usize, usize)>,
}

impl Structure {
    /// Builds the augmented graphs and every tree over them.
    pub fn build(function: &Function) -> Structure {
        let n = function.blocks.len();
        let index = function.block_index();
        let (entry, exit) = (n, n + 1);
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n + 2];
        let mut ssucc: Vec<Vec<usize>> = vec![Vec::new(); n + 2];
        for (b, block) in function.blocks.iter().enumerate() {
            let targets: Vec<usize> = block
                .successors
                .iter()
                .filter_map(|s| index.get(s).copied())
                .collect();
            let mut structural = Vec::new();
            if let Some((merge, _)) = block.merge {
                structural.extend(index.get(&merge.merge_block()).copied());
                if let Merge::Loop {
                    continue_target, ..
                } = merge
                {
                    structural.extend(index.get(&continue_target).copied());
                }
            }
            structural.extend(targets.iter().copied());
            succ[b] = targets;
            ssucc[b] = structural;
        }
        let pred = reverse_edges(&succ);
        let spred = reverse_edges(&ssucc);

        // SPIRV-Tools' TraversalRoots: sources are the blocks without structural predecessors,
        // then (in block order) one block of each cycle no source reaches; sinks likewise
        // backwards, in reverse block order.
        let roots = |next: &[Vec<usize>], prev: &[Vec<usize>], order: &[usize]| {
            let mut seen = vec![false; n + 2];
            let mut path = vec![false; n + 2];
            let mut roots = Vec::new();
            for &b in order {
                if prev.get(b).is_some_and(Vec::is_empty) && !seen[b] {
                    roots.push(b);
                    depth_first_from(next, b, &mut seen, &mut path, |_, _| {});
                }
            }
            for &b in order {
                if !seen[b] {
                    roots.push(b);
                    depth_first_from(next, b, &mut seen, &mut path, |_, _| {});
                }
            }
            roots
        };
        let forward: Vec<usize> = (0..n).collect();
        let backward: Vec<usize> = (0..n).rev().collect();
        let sources = roots(&ssucc, &spred, &forward);
        let sinks = roots(&spred, &ssucc, &backward);

        // The augmented lists replace a node's own lists where SPIRV-Tools' maps have an entry.
        let mut aug_succ: Vec<Option<Vec<usize>>> = vec![None; n + 2];
        let mut aug_pred: Vec<Option<Vec<usize>>> = vec![None; n + 2];
        aug_succ[entry] = Some(sources.clone());
        for &s in &sources {
            let mut list = vec![entry];
            list.extend(spred[s].iter().copied());
            aug_pred[s] = Some(list);
        }
        aug_pred[exit] = Some(sinks.clone());
        for &s in &sinks {
            let mut list = vec![exit];
            list.extend(ssucc[s].iter().copied());
            aug_succ[s] = Some(list);
        }
        let with = |aug: &[Option<Vec<usize>>], own: &[Vec<usize>]| -> Vec<Vec<usize>> {
            aug.iter()
                .zip(own)
                .map(|(a, o)| a.clone().unwrap_or_else(|| o.clone()))
                .collect()
        };
        let (aug_ssucc, aug_spred) = (with(&aug_succ, &ssucc), with(&aug_pred, &spred));
        let (aug_bsucc, aug_bpred) = (with(&aug_succ, &succ), with(&aug_pred, &pred));

        // Dominators of the augmented branch graph, from the entry block.
        let order = depth_first(&aug_bsucc, 0, |_, _| {});
        let idom = immediate_dominators(n + 2, &order, &aug_bpred);
        // Structural dominators, from the entry block.
        let postorder = depth_first(&aug_ssucc, 0, |_, _| {});
        let sidom = immediate_dominators(n + 2, &postorder, &aug_spred);
        // Structural post-dominators: the same algorithm from the pseudo-exit, edges reversed.
        let porder = depth_first(&aug_spred, exit, |_, _| {});
        let spidom = immediate_dominators(n + 2, &porder, &aug_ssucc);
        // Back edges, from the pseudo-entry; only branch edges count.
        let mut back_edges = Vec::new();
        depth_first(&aug_ssucc, entry, |from, to| {
            if let Some(list) = succ.get(from) {
                back_edges.extend(list.iter().filter(|&&s| s == to).map(|_| (from, to)));
            }
        });
        Structure {
            structurally_reachable: reached(n + 2, &postorder),
            sdom: DomTree::new(&sidom),
            spdom: DomTree::new(&spidom),
            succ,
            pred,
            ssucc,
            spred,
            idom,
            sidom,
            postorder,
            back_edges,
        }
    }

    /// The pseudo-entry node.
    pub fn entry(&self) -> usize {
        self.succ.len().saturating_sub(2)
    }

    /// The pseudo-exit node.
    pub fn exit(&self) -> usize {
        self.succ.len().saturating_sub(1)
    }

    /// Whether `a` structurally dominates `b`.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        self.sdom.dominates(a, b)
    }

    /// Whether `a` structurally post-dominates `b`.
    pub fn postdominates(&self, a: usize, b: usize) -> bool {
        self.spdom.dominates(a, b)
    }

    /// Whether block `b` is structurally reachable.
    pub fn is_reachable(&self, b: usize) -> bool {
        self.structurally_reachable.get(b).copied().unwrap_or(false)
    }
}

/// Marks the nodes listed in `order`.
fn reached(n: usize, order: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; n];
    for &b in order {
        if let Some(s) = seen.get_mut(b) {
            *s = true;
        }
    }
    seen
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

    /// The call graph by function index: the callees of each function that are functions of
    /// the module, one entry per call.
    pub fn call_graph(&self) -> Vec<Vec<usize>> {
        let by_id: IdMap<usize> = self
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id, i))
            .collect();
        self.functions
            .iter()
            .map(|f| {
                f.callees
                    .iter()
                    .filter_map(|c| by_id.get(c).copied())
                    .collect()
            })
            .collect()
    }

    /// The functions from which a cycle of calls can be reached (those on a cycle included),
    /// in O(functions + calls): Tarjan's strongly connected components, which come out callees
    /// first, so each component learns from the components it calls, already finished.
    /// Calls to ids that are not functions of the module are left out.
    pub fn reaching_recursion(&self) -> IdSet {
        let calls = self.call_graph();
        let components = strongly_connected(&calls);
        let n = calls.len();
        let mut component_of = vec![usize::MAX; n];
        for (k, members) in components.iter().enumerate() {
            for &f in members {
                component_of[f] = k;
            }
        }
        let mut reaches = vec![false; components.len()];
        for (k, members) in components.iter().enumerate() {
            let cyclic = members.len() > 1 || members.iter().any(|&f| calls[f].contains(&f));
            reaches[k] = cyclic
                || members.iter().any(|&f| {
                    calls[f]
                        .iter()
                        .any(|&g| reaches.get(component_of[g]).copied().unwrap_or(false))
                });
        }
        self.functions
            .iter()
            .enumerate()
            .filter(|(i, _)| reaches.get(component_of[*i]).copied().unwrap_or(false))
            .map(|(_, f)| f.id)
            .collect()
    }
}

/// The strongly connected components of a graph (adjacency lists by node index), by Tarjan's
/// algorithm without recursion; each component comes after every component it has edges to.
pub fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let unvisited = usize::MAX;
    let mut number = vec![unvisited; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut clock = 0;
    for root in 0..n {
        if number[root] != unvisited {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        number[root] = clock;
        low[root] = clock;
        clock += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = path.last_mut() {
            let (node, i) = *top;
            match next[node].get(i).copied().filter(|&c| c < n) {
                Some(child) => {
                    top.1 += 1;
                    if number[child] == unvisited {
                        number[child] = clock;
                        low[child] = clock;
                        clock += 1;
                        stack.push(child);
                        on_stack[child] = true;
                        path.push((child, 0));
                    } else if on_stack[child] {
                        low[node] = low[node].min(number[child]);
                    }
                }
                None if i < next[node].len() => top.1 += 1,
                None => {
                    path.pop();
                    if let Some(&(parent, _)) = path.last() {
                        low[parent] = low[parent].min(low[node]);
                    }
                    if low[node] == number[node] {
                        let mut members = Vec::new();
                        while let Some(m) = stack.pop() {
                            on_stack[m] = false;
                            members.push(m);
                            if m == node {
                                break;
                            }
                        }
                        components.push(members);
                    }
                }
            }
        }
    }
    components
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

    /// entry → h; h: loop (merge m, continue c) → body | m; body → c; c → h; m: return.
    fn loop_function() -> Function {
        let body =
            "OpBranch %h\n%h = OpLabel\nOpLoopMerge %m %c None\nOpBranchConditional %t %body %m\n\
                    %body = OpLabel\nOpBranch %c\n%c = OpLabel\nOpBranch %h\n%m = OpLabel";
        let decls = "%bool = OpTypeBool\n%t = OpConstantTrue %bool";
        let m = module(&compute("", decls, body), "vulkan1.3");
        let cfg = CfgFacts::build(&m);
        cfg.functions.into_iter().next().expect("one function")
    }

    #[test]
    fn structural_dominators_post_dominators_and_back_edges() {
        let f = loop_function();
        // Blocks: 0 entry, 1 h, 2 body, 3 c, 4 m; pseudo-entry 5, pseudo-exit 6.
        let s = Structure::build(&f);
        assert_eq!((s.entry(), s.exit()), (5, 6));
        assert_eq!(
            s.ssucc[1],
            vec![4, 3, 2, 4],
            "merge, continue, then branch targets"
        );
        assert_eq!(s.back_edges, vec![(3, 1)]);
        assert!(s.dominates(1, 3) && s.dominates(1, 4) && !s.dominates(2, 3));
        // The continue edge makes c reachable around the body, so only h dominates it.
        assert_eq!(s.sidom[3], Some(1));
        assert!(s.postdominates(3, 2) && s.postdominates(4, 1) && !s.postdominates(3, 1));
        assert!(s.postdominates(s.exit(), 0));
        assert_eq!(s.postorder.last(), Some(&0), "the entry block is the root");
        assert!((0..5).all(|b| s.is_reachable(b)));
    }

    #[test]
    fn one_algorithm_both_directions() {
        // a → b, a → c, b → d, c → d: a dominates everything, d post-dominates everything.
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        let pred = reverse_edges(&succ);
        let idom = immediate_dominators(4, &depth_first(&succ, 0, |_, _| {}), &pred);
        assert_eq!(idom, vec![None, Some(0), Some(0), Some(0)]);
        let ipdom = immediate_dominators(4, &depth_first(&pred, 3, |_, _| {}), &succ);
        assert_eq!(ipdom, vec![Some(3), Some(3), Some(3), None]);
        let tree = DomTree::new(&ipdom);
        assert!(tree.dominates(3, 0) && !tree.dominates(1, 0) && tree.dominates(1, 1));
    }

    #[test]
    fn components_come_callees_first() {
        // 0 → 1 → 2 → 1, 0 → 3, 3 → 3, 4 alone.
        let next = vec![vec![1, 3], vec![2], vec![1], vec![3], vec![]];
        let mut c = strongly_connected(&next);
        for members in &mut c {
            members.sort_unstable();
        }
        let at = |m: &[usize]| c.iter().position(|x| x == m).expect("component");
        assert_eq!(c.len(), 4);
        assert!(at(&[1, 2]) < at(&[0]) && at(&[3]) < at(&[0]));
        assert!(c.contains(&vec![4]));
    }

    #[test]
    fn recursion_is_found_from_every_caller() {
        let m = module(
            "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
             OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
             %main = OpFunction %void None %fn\n%e = OpLabel\n%1 = OpFunctionCall %void %a\nOpReturn\nOpFunctionEnd\n\
             %a = OpFunction %void None %fn\n%ae = OpLabel\n%2 = OpFunctionCall %void %b\nOpReturn\nOpFunctionEnd\n\
             %b = OpFunction %void None %fn\n%be = OpLabel\n%3 = OpFunctionCall %void %b\nOpReturn\nOpFunctionEnd\n\
             %leaf = OpFunction %void None %fn\n%le = OpLabel\nOpReturn\nOpFunctionEnd\n",
            "spv1.6",
        );
        let cfg = CfgFacts::build(&m);
        let ids = |name: usize| cfg.functions[name].id;
        let found = cfg.reaching_recursion();
        assert!(found.contains(&ids(0)) && found.contains(&ids(1)) && found.contains(&ids(2)));
        assert!(!found.contains(&ids(3)));
    }

    #[test]
    fn back_edges_follow_the_current_path() {
        // 0 → 1 → 2 → 1 and 2 → 2: both edges into the path are reported, in order.
        let succ = vec![vec![1], vec![2], vec![1, 2]];
        let mut found = Vec::new();
        let order = depth_first(&succ, 0, |a, b| found.push((a, b)));
        assert_eq!(order, vec![2, 1, 0]);
        assert_eq!(found, vec![(2, 1), (2, 2)]);
    }

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
        let tree = DomTree::new(&idom);
        assert!(tree.dominates(0, 3));
        assert!(!tree.dominates(1, 3));
        assert!(matches!(
            f.blocks.first().and_then(|b| b.merge),
            Some((Merge::Selection { .. }, _))
        ));
    }
}
