//! Tangles: which invocations of a subgroup execute together, and where they rejoin.
//!
//! A tangle is an active-lane mask plus a position: a call stack of (function, block, op). The
//! scheduler always runs the tangle at the *lowest* position, comparing call stacks frame by
//! frame by (block rank, op index), and merges tangles at equal positions before running them.
//! Block ranks follow the structured order ([`crate::lower::cfg`]): every block of a construct
//! ranks before the construct's continue target and merge block. So invocations that reach a
//! merge block, a continue target, or the instruction after an `OpFunctionCall` wait there
//! until every invocation still inside the construct has arrived, and then continue as one
//! tangle: the reconvergence points SPV_KHR_maximal_reconvergence lists. Invocations that leave
//! a construct early (break, continue, return) simply are no longer inside it. Every "where do
//! tangles rejoin" decision is in this file.

use crate::program::Program;
use crate::report::Stats;
use std::cmp::Ordering;

/// One call-stack frame of a tangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Function index.
    pub func: u32,
    /// Block index in the function.
    pub block: u32,
    /// Index of the next op in the block (for a caller frame: the `OpFunctionCall`).
    pub op: u32,
}

/// A set of invocations executing together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tangle {
    /// Active lanes.
    pub mask: u128,
    /// Call stack, innermost last.
    pub stack: Vec<Frame>,
    /// Waiting at a workgroup barrier.
    pub blocked: bool,
    /// Most instructions executed by any of its invocations.
    pub steps: u64,
}

fn rank(p: &Program, f: &Frame) -> u32 {
    p.functions
        .get(f.func as usize)
        .and_then(|func| func.blocks.get(f.block as usize))
        .map_or(u32::MAX, |b| b.rank)
}

/// Orders two tangles by position.
pub fn position_cmp(p: &Program, a: &Tangle, b: &Tangle) -> Ordering {
    for (x, y) in a.stack.iter().zip(&b.stack) {
        let o = (x.func, rank(p, x), x.op).cmp(&(y.func, rank(p, y), y.op));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.stack.len().cmp(&b.stack.len())
}

/// Picks the tangle to run next: the unblocked tangle at the lowest position, after merging
/// every unblocked tangle at the same position into it. `None` when every tangle is blocked
/// or none is left.
pub fn pick(p: &Program, tangles: &mut Vec<Tangle>, stats: &mut Stats) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, t) in tangles.iter().enumerate() {
        if t.blocked {
            continue;
        }
        best = match best {
            Some(b)
                if tangles
                    .get(b)
                    .is_some_and(|bt| position_cmp(p, bt, t) != Ordering::Greater) =>
            {
                Some(b)
            }
            _ => Some(i),
        };
    }
    let b = best?;
    if tangles.len() == 1 {
        return Some(b);
    }
    let stack = tangles.get(b)?.stack.clone();
    let (mut mask, mut steps, mut count) = (0u128, 0u64, 0u64);
    tangles.retain(|t| {
        if !t.blocked && t.stack == stack {
            mask |= t.mask;
            steps = steps.max(t.steps);
            count += 1;
            false
        } else {
            true
        }
    });
    stats.joins += count.saturating_sub(1);
    tangles.push(Tangle {
        mask,
        stack,
        blocked: false,
        steps,
    });
    Some(tangles.len() - 1)
}

/// Releases every tangle waiting at a barrier.
pub fn release(tangles: &mut [Tangle]) {
    for t in tangles {
        t.blocked = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Block, Function};

    fn prog() -> Program {
        let blocks = (0..4)
            .map(|i| Block {
                rank: i,
                ..Block::default()
            })
            .collect();
        Program {
            functions: vec![Function {
                blocks,
                ..Function::default()
            }],
            ..Program::default()
        }
    }

    fn t(mask: u128, block: u32) -> Tangle {
        Tangle {
            mask,
            stack: vec![Frame {
                func: 0,
                block,
                op: 0,
            }],
            blocked: false,
            steps: 0,
        }
    }

    #[test]
    fn lowest_runs_first_and_equal_positions_merge() {
        let p = prog();
        let mut stats = Stats::default();
        let mut ts = vec![t(0b0011, 3), t(0b0100, 1), t(0b1000, 3)];
        let i = pick(&p, &mut ts, &mut stats).unwrap_or(99);
        assert_eq!(ts[i].mask, 0b0100);
        ts.remove(i);
        let i = pick(&p, &mut ts, &mut stats).unwrap_or(99);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[i].mask, 0b1011);
        assert_eq!(stats.joins, 1);
    }

    #[test]
    fn blocked_tangles_are_skipped() {
        let p = prog();
        let mut stats = Stats::default();
        let mut ts = vec![t(1, 0), t(2, 2)];
        ts[0].blocked = true;
        assert_eq!(pick(&p, &mut ts, &mut stats), Some(1));
        ts[1].blocked = true;
        assert_eq!(pick(&p, &mut ts, &mut stats), None);
    }
}
