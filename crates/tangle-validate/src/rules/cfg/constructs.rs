//! Back edges and the selection, loop and continue constructs of SPIR-V 2.11 "Structured
//! Control Flow", as SPIRV-Tools 2025.5 computes and checks them (`StructuredControlFlowChecks`,
//! `Construct::blocks`, `Construct::IsStructuredExit`): every construct is the set of blocks its
//! header structurally dominates up to its merge block (continue constructs: up to the
//! back-edge block), it is entered only at its header, left only through structured exits, and
//! it holds the merge block of every header inside it.

use super::{switch, CfgError, ConstructKind, Flow};
use crate::cfg_facts::Merge;
use crate::facts::IdSet;
use crate::rules::Sink;
use spirv::Op;

/// One construct: its kind, header (for a continue construct, the continue target) and exit
/// (merge block, or for a continue construct the back-edge block, if there is one).
#[derive(Debug, Clone, Copy)]
pub(super) struct Construct {
    pub kind: ConstructKind,
    pub header: usize,
    pub exit: Option<usize>,
    /// The loop header a continue construct belongs to (the header itself otherwise).
    pub loop_header: usize,
}

/// Back edges go to loop headers, and each structurally reachable loop header has exactly one
/// back-edge block.
pub(super) fn back_edges(flow: &Flow, sink: &mut Sink) {
    let is_loop = |b: usize| matches!(flow.merge(b), Some(Merge::Loop { .. }));
    let mut latches: Vec<IdSet<usize>> = vec![IdSet::default(); flow.function.blocks.len()];
    let mut reported = IdSet::<(usize, usize)>::default();
    for &(from, to) in &flow.s.back_edges {
        if !is_loop(to) {
            if reported.insert((from, to)) {
                sink.error(
                    flow.block(from).map(|b| b.end),
                    CfgError::BackEdgeNotToLoopHeader {
                        from: flow.label(from),
                        to: flow.label(to),
                    },
                );
            }
        } else if let Some(set) = latches.get_mut(to) {
            set.insert(from);
        }
    }
    for (h, set) in latches.iter().enumerate() {
        if flow.s.is_reachable(h) && is_loop(h) && set.len() != 1 {
            sink.error(
                flow.merge_at(h),
                CfgError::LoopHeaderBackEdges {
                    header: flow.label(h),
                    count: set.len(),
                },
            );
        }
    }
}

/// The constructs in module order: one per selection header, a loop and a continue construct
/// per loop header. A continue construct's exit is the source of the last back edge found to
/// its loop header.
pub(super) fn constructs(flow: &Flow) -> Vec<Construct> {
    // The last back edge into each header wins, as in SPIRV-Tools.
    let mut latch: Vec<Option<usize>> = vec![None; flow.function.blocks.len()];
    for &(from, to) in &flow.s.back_edges {
        if let Some(slot) = latch.get_mut(to) {
            *slot = Some(from);
        }
    }
    let mut out = Vec::new();
    for h in 0..flow.function.blocks.len() {
        let Some(merge) = flow.merge(h) else {
            continue;
        };
        let exit = flow.merge_block(h);
        match merge {
            Merge::Selection { .. } => out.push(Construct {
                kind: ConstructKind::Selection,
                header: h,
                exit,
                loop_header: h,
            }),
            Merge::Loop { .. } => {
                out.push(Construct {
                    kind: ConstructKind::Loop,
                    header: h,
                    exit,
                    loop_header: h,
                });
                if let Some(c) = flow.continue_target(h) {
                    out.push(Construct {
                        kind: ConstructKind::Continue,
                        header: c,
                        exit: latch.get(h).copied().flatten(),
                        loop_header: h,
                    });
                }
            }
        }
    }
    out
}

/// The construct rules, on every construct whose header is structurally reachable.
pub(super) fn check(flow: &Flow, sink: &mut Sink) {
    let back_edges: IdSet<(usize, usize)> = flow.s.back_edges.iter().copied().collect();
    // Membership marks, one stamp per construct: no set to build or clear per construct.
    let mut marks = Members {
        stamp: vec![0; flow.function.blocks.len()],
        current: 0,
    };
    for c in constructs(flow) {
        if !flow.s.is_reachable(c.header) {
            continue;
        }
        if let Err((at, e)) = construct(flow, &c, &back_edges, &mut marks) {
            sink.error(at, e);
        }
    }
}

/// The blocks of the construct being checked, as marks on a per-function array.
struct Members {
    stamp: Vec<u32>,
    current: u32,
}

impl Members {
    /// Starts a new (empty) construct.
    fn clear(&mut self) {
        self.current += 1;
    }

    /// Adds `b`; false when it was already in.
    fn insert(&mut self, b: usize) -> bool {
        match self.stamp.get_mut(b) {
            Some(s) if *s != self.current => {
                *s = self.current;
                true
            }
            _ => false,
        }
    }

    fn contains(&self, b: usize) -> bool {
        self.stamp.get(b) == Some(&self.current)
    }
}

/// Where a finding points, and what it is.
type Finding = (Option<usize>, CfgError);

/// The rules of one construct; the first finding ends its checks.
fn construct(
    flow: &Flow,
    c: &Construct,
    back_edges: &IdSet<(usize, usize)>,
    members: &mut Members,
) -> Result<(), Finding> {
    let s = &flow.s;
    let (h, label) = (c.header, |b: usize| flow.label(b));
    let at_label = |b: usize| flow.block(b).map(|block| block.start);
    let at_end = |b: usize| flow.block(b).map(|block| block.end);
    let Some(exit) = c.exit else {
        return Err((
            at_label(h),
            CfgError::ContinueWithoutBackEdge { target: label(h) },
        ));
    };
    if !s.dominates(h, exit) {
        let e = match c.kind {
            ConstructKind::Continue => CfgError::ContinueDoesNotDominateBackEdge {
                target: label(h),
                back_edge: label(exit),
            },
            kind => CfgError::HeaderDoesNotDominateMerge {
                kind,
                header: label(h),
                merge: label(exit),
            },
        };
        return Err((flow.merge_at(c.loop_header), e));
    }
    if c.kind != ConstructKind::Continue && h == exit {
        return Err((
            flow.merge_at(h),
            CfgError::HeaderIsOwnMerge {
                kind: c.kind,
                header: label(h),
            },
        ));
    }
    if c.kind == ConstructKind::Continue && !s.postdominates(exit, h) {
        return Err((
            at_end(exit),
            CfgError::BackEdgeDoesNotPostDominate {
                target: label(h),
                back_edge: label(exit),
            },
        ));
    }
    let order = blocks(flow, c, exit, members);
    for &b in &order {
        for &t in s.succ.get(b).into_iter().flatten() {
            if !members.contains(t) && !structured_exit(flow, c, t) {
                return Err((
                    at_end(b),
                    CfgError::ConstructExitNotStructured {
                        kind: c.kind,
                        block: label(b),
                        header: label(h),
                    },
                ));
            }
        }
        if b == h {
            continue;
        }
        for &p in s.pred.get(b).into_iter().flatten() {
            if s.is_reachable(p) && !members.contains(p) {
                return Err((
                    at_end(p),
                    CfgError::ConstructEnteredNotAtHeader {
                        kind: c.kind,
                        from: label(p),
                        header: label(h),
                    },
                ));
            }
        }
        if let Some(m) = flow.merge_block(b) {
            if s.is_reachable(m) && !members.contains(m) {
                return Err((
                    flow.merge_at(b),
                    CfgError::NestedMergeOutside {
                        kind: c.kind,
                        inner: label(b),
                        header: label(h),
                        merge: label(m),
                    },
                ));
            }
        }
    }
    if c.kind == ConstructKind::Loop {
        if let Some(ct) = flow.continue_target(h).filter(|&ct| ct != h) {
            for &p in s.pred.get(ct).into_iter().flatten() {
                if s.is_reachable(p) && !back_edges.contains(&(p, ct)) && !members.contains(p) {
                    return Err((
                        at_end(p),
                        CfgError::ContinueEnteredFromOutsideLoop {
                            from: label(p),
                            target: label(ct),
                            header: label(h),
                        },
                    ));
                }
            }
        }
    }
    if c.kind == ConstructKind::Selection && flow.terminator(h) == Some(Op::Switch) {
        switch::check(flow, c, exit)?;
    }
    Ok(())
}

/// The blocks of a construct (SPIRV-Tools `Construct::blocks`): those reached from the header
/// through structural edges that the header structurally dominates and, for selections and
/// loops, that the merge block does not (loops: nor the continue target); for continue
/// constructs, also those the back-edge block post-dominates.
fn blocks(flow: &Flow, c: &Construct, exit: usize, members: &mut Members) -> Vec<usize> {
    let s = &flow.s;
    let continue_header = match c.kind {
        ConstructKind::Loop => flow.continue_target(c.header),
        _ => None,
    };
    members.clear();
    let mut order = Vec::new();
    let mut stack = vec![c.header];
    while let Some(b) = stack.pop() {
        if !s.dominates(c.header, b) {
            continue;
        }
        let include = if c.kind == ConstructKind::Continue && s.postdominates(exit, b) {
            true
        } else {
            !s.dominates(exit, b) && !continue_header.is_some_and(|ch| s.dominates(ch, b))
        };
        if include && members.insert(b) {
            order.push(b);
            stack.extend(s.ssucc.get(b).into_iter().flatten().copied());
        }
    }
    order
}

/// Whether a branch from inside construct `c` to `dest` is one of its structured exits
/// (SPIRV-Tools `Construct::IsStructuredExit`): a loop's merge block or continue target; a
/// continue construct's loop header or loop merge block; a selection's merge block, or the
/// merge block or continue target of the nearest enclosing loop, or the merge block of the
/// nearest enclosing switch (for a selection that is not itself a switch) when no switch lies
/// between.
pub(super) fn structured_exit(flow: &Flow, c: &Construct, dest: usize) -> bool {
    match c.kind {
        ConstructKind::Loop => {
            Some(dest) == flow.merge_block(c.header) || Some(dest) == flow.continue_target(c.header)
        }
        ConstructKind::Continue => {
            dest == c.loop_header || Some(dest) == flow.merge_block(c.loop_header)
        }
        ConstructKind::Selection => {
            if Some(dest) == c.exit {
                return true;
            }
            let s = &flow.s;
            let header = c.header;
            let header_is_switch = flow.terminator(header) == Some(Op::Switch);
            let climb = &flow.climb;
            // The reference climbs block by block; only loop headers and (for a selection that
            // is not a switch, until the first open one) switch headers can answer, so the
            // climb jumps from one to the next. After a switch only loops can answer.
            let next = |b: usize, seen_switch: bool| {
                if header_is_switch || seen_switch {
                    climb.loops.get(b).copied().flatten()
                } else {
                    climb.loops_and_switches.get(b).copied().flatten()
                }
            };
            let mut seen_switch = false;
            let mut block = next(header, false);
            // Each step climbs the dominator tree; the bound only guards malformed trees.
            let mut steps = 0;
            while let Some(b) = block {
                steps += 1;
                if steps > flow.function.blocks.len() + 2 {
                    break;
                }
                let is_loop = matches!(flow.merge(b), Some(Merge::Loop { .. }));
                let is_switch = flow.terminator(b) == Some(Op::Switch);
                let merge = flow.merge_block(b);
                // A construct whose merge block dominates the header was left before it.
                if !merge.is_some_and(|m| s.dominates(m, header)) {
                    let breaks = (!seen_switch || is_loop) && Some(dest) == merge;
                    if breaks || (is_loop && Some(dest) == flow.continue_target(b)) {
                        return true;
                    }
                    if is_switch {
                        seen_switch = true;
                    }
                    if is_loop {
                        return false;
                    }
                }
                block = next(b, seen_switch);
            }
            false
        }
    }
}

/// The climb of [`structured_exit`] precomputed for a function, so that each question costs the
/// number of enclosing loops and switches it passes rather than the depth of the dominator tree
/// (which grows with every construct in sequence).
///
/// The reference (`Construct::IsStructuredExit`) climbs from a selection header with
/// `NextBlock`: to the header that names the block as its merge block and dominates it, else to
/// the block's immediate structural dominator. A header reached from its own merge block has
/// been left (its merge block dominates where the climb started), so it can never answer; the
/// climb here passes straight through such chains of headers, and through every block that is
/// neither a loop header nor a switch header.
#[derive(Debug, Clone, Default)]
pub(super) struct Climb {
    /// For each block, the next loop header on its climb.
    loops: Vec<Option<usize>>,
    /// For each block, the next loop header or switch header (with `OpSelectionMerge`).
    loops_and_switches: Vec<Option<usize>>,
}

impl Climb {
    pub(super) fn new(flow: &Flow) -> Climb {
        let n = flow.s.sidom.len().max(flow.function.blocks.len());
        // jump[b]: after looking at b, the next block the reference climb looks at that is not
        // a header it reached from that header's merge block.
        let jump = resolve(n, |b| match named_header(flow, b) {
            Some(h) => Step::Same(h),
            None => Step::Done(flow.s.sidom.get(b).copied().flatten()),
        });
        let is_loop = |b: usize| matches!(flow.merge(b), Some(Merge::Loop { .. }));
        let is_switch = |b: usize| {
            matches!(flow.merge(b), Some(Merge::Selection { .. }))
                && flow.terminator(b) == Some(Op::Switch)
        };
        let first = |wanted: &dyn Fn(usize) -> bool| {
            resolve(n, |b| match jump.get(b).copied().flatten() {
                Some(j) if wanted(j) => Step::Done(Some(j)),
                Some(j) => Step::Same(j),
                None => Step::Done(None),
            })
        };
        Climb {
            loops: first(&is_loop),
            loops_and_switches: first(&|b| is_loop(b) || is_switch(b)),
        }
    }
}

/// The header that names `b` as its merge block and structurally dominates it, if any (the
/// first one, as SPIRV-Tools' `NextBlock` finds it).
fn named_header(flow: &Flow, b: usize) -> Option<usize> {
    flow.merge_headers
        .get(b)
        .into_iter()
        .flatten()
        .copied()
        .find(|&h| h != b && flow.s.dominates(h, b))
}

/// One step of a chain [`resolve`] follows.
enum Step {
    /// The answer.
    Done(Option<usize>),
    /// The answer is that of this other node.
    Same(usize),
}

/// For each of `n` nodes, the answer `step` leads to, each node's chain followed once: O(n).
/// The chains climb the dominator tree, so they end; a chain that returns to a node (possible
/// only on a malformed tree) answers `None`.
fn resolve(n: usize, step: impl Fn(usize) -> Step) -> Vec<Option<usize>> {
    let mut answer: Vec<Option<Option<usize>>> = vec![None; n];
    let mut on_chain = vec![false; n];
    for start in 0..n {
        let mut chain = Vec::new();
        let mut node = start;
        let value = loop {
            match answer.get(node) {
                Some(Some(known)) => break *known,
                Some(None) if !on_chain[node] => {}
                _ => break None,
            }
            on_chain[node] = true;
            chain.push(node);
            match step(node) {
                Step::Done(v) => break v,
                Step::Same(next) => node = next,
            }
        };
        for b in chain {
            on_chain[b] = false;
            answer[b] = Some(value);
        }
    }
    answer.into_iter().map(Option::flatten).collect()
}
