//! A construct (its kind, header and exit) and its structured exits (SPIR-V 2.11 "Structured
//! Control Flow"; SPIRV-Tools `Construct::IsStructuredExit`), with the climb that answers them
//! per function: shared by the construct checks (`constructs.rs`) and the case constructs'
//! (`switch.rs`), below both, so that neither imports the other's file.

use super::{ConstructKind, Flow};
use crate::cfg_facts::Merge;
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
