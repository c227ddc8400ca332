//! Back edges and the selection, loop and continue constructs of SPIR-V 2.11 "Structured
//! Control Flow", as SPIRV-Tools 2025.5 computes and checks them (`StructuredControlFlowChecks`,
//! `Construct::blocks`, `Construct::IsStructuredExit`): every construct is the set of blocks its
//! header structurally dominates up to its merge block (continue constructs: up to the
//! back-edge block), it is entered only at its header, left only through structured exits, and
//! it holds the merge block of every header inside it.

use super::exits::{structured_exit, Construct};
use super::{switch, CfgError, ConstructKind, Flow};
use crate::cfg_facts::Merge;
use crate::facts::IdSet;
use crate::rules::Sink;
use spirv::Op;

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
