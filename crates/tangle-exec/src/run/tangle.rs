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

//! The [`crate::policy::Policy`] of a dispatch changes three things here: the block ranks (the
//! order in which the two sides of a branch run), whether tangles at equal positions merge
//! (always under `maximal`; only in uniform control flow, when they hold every invocation of
//! the subgroup still running, under `weak`; by a seeded coin otherwise), and, under
//! `by-selector`, tangles of one `OpSwitch` with different selector values stay apart until
//! they leave the switch construct.

use crate::policy::{Policy, Reconvergence, Rng};
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

/// A mark keeping a tangle apart from the tangles of other selector values of the same
/// `OpSwitch` (switch grouping `by-selector`) until it leaves the switch construct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Apart {
    /// Call-stack depth of the switch's frame (1 for the entry point).
    pub depth: u32,
    /// The switch construct's merge block.
    pub merge: u32,
    /// The selector value.
    pub value: u64,
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
    /// Switch constructs it is kept apart in, innermost last.
    pub apart: Vec<Apart>,
}

/// What scheduling a dispatch's subgroups needs: the program, the policy, and the block ranks
/// under the policy's branch order.
#[derive(Debug, Clone)]
pub struct Schedule<'a> {
    /// The program.
    pub prog: &'a Program,
    /// The policy.
    pub policy: Policy,
    /// Block ranks per function ([`crate::policy::ranks`]).
    pub ranks: Vec<Vec<u32>>,
}

impl<'a> Schedule<'a> {
    /// The schedule of `prog` under `policy`. An entry point that declares
    /// `MaximallyReconvergesKHR` always gets maximal reconvergence ("Invocations in the entry
    /// point will obey the rules in Maximal Reconvergence"); the policy's other choices stay.
    pub fn new(prog: &'a Program, mut policy: Policy) -> Self {
        if prog.maximally_reconverges {
            policy.reconvergence = Reconvergence::Maximal;
        }
        Schedule {
            prog,
            policy,
            ranks: crate::policy::ranks(prog, policy.branch_order),
        }
    }

    fn rank(&self, func: u32, block: u32) -> u32 {
        self.ranks
            .get(func as usize)
            .and_then(|f| f.get(block as usize))
            .copied()
            .unwrap_or(u32::MAX)
    }
}

/// Orders two tangles by position.
pub fn position_cmp(s: &Schedule<'_>, a: &Tangle, b: &Tangle) -> Ordering {
    for (x, y) in a.stack.iter().zip(&b.stack) {
        let o =
            (x.func, s.rank(x.func, x.block), x.op).cmp(&(y.func, s.rank(y.func, y.block), y.op));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.stack.len().cmp(&b.stack.len())
}

/// Drops the [`Apart`] marks of switch constructs `t` has left: its frame returned, or it is
/// at a block ranking at or after the merge block (every block of a construct ranks before
/// the merge block, and a construct is left only to its merge block or to an enclosing
/// construct's merge block or continue target, which rank later still).
fn leave_switches(s: &Schedule<'_>, t: &mut Tangle) {
    let stack = &t.stack;
    t.apart.retain(|a| {
        let Some(f) = (a.depth as usize).checked_sub(1).and_then(|d| stack.get(d)) else {
            return false;
        };
        a.depth as usize != stack.len() || s.rank(f.func, f.block) < s.rank(f.func, a.merge)
    });
}

/// Picks the tangle to run next: the unblocked tangle at the lowest position, after merging
/// the unblocked tangles at the same position into it as the policy allows. `joined` receives
/// the masks of the tangles merged (empty when none were). `None` when every tangle is
/// blocked or none is left.
pub fn pick(
    s: &Schedule<'_>,
    tangles: &mut Vec<Tangle>,
    rng: &mut Rng,
    stats: &mut Stats,
    joined: &mut Vec<u128>,
) -> Option<usize> {
    joined.clear();
    let mut best: Option<usize> = None;
    for i in 0..tangles.len() {
        let Some(t) = tangles.get_mut(i) else {
            continue;
        };
        if !t.apart.is_empty() {
            leave_switches(s, t);
        }
        if t.blocked {
            continue;
        }
        best = match best {
            Some(b)
                if tangles
                    .get(b)
                    .zip(tangles.get(i))
                    .is_some_and(|(bt, t)| position_cmp(s, bt, t) != Ordering::Greater) =>
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
    let first = tangles.get(b)?.clone();
    let same = |t: &Tangle| !t.blocked && t.stack == first.stack && t.apart == first.apart;
    let live = tangles.iter().fold(0u128, |m, t| m | t.mask);
    let candidates = tangles
        .iter()
        .filter(|t| same(t))
        .fold(0u128, |m, t| m | t.mask);
    if candidates == first.mask {
        return Some(b);
    }
    // Uniform control flow: every invocation still running is here, as one dynamic instance
    // (SPIR-V 2.2.5), so every policy runs them together.
    let uniform = candidates == live;
    let mut take: Vec<bool> = tangles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            i == b
                || (same(t)
                    && match s.policy.reconvergence {
                        Reconvergence::Maximal => true,
                        Reconvergence::Weak => uniform,
                        Reconvergence::Random(_) => uniform || rng.coin(),
                    })
        })
        .collect();
    if take.iter().filter(|x| **x).count() == 1 {
        return Some(b);
    }
    let (mut mask, mut steps) = (0u128, 0u64);
    let mut k = 0;
    tangles.retain(|t| {
        let keep = !take.get(k).copied().unwrap_or(false);
        k += 1;
        if !keep {
            mask |= t.mask;
            steps = steps.max(t.steps);
            joined.push(t.mask);
        }
        keep
    });
    take.clear();
    stats.joins += joined.len().saturating_sub(1) as u64;
    tangles.push(Tangle {
        mask,
        stack: first.stack,
        blocked: false,
        steps,
        apart: first.apart,
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
            apart: Vec::new(),
        }
    }

    #[test]
    fn lowest_runs_first_and_equal_positions_merge() {
        let p = prog();
        let s = Schedule::new(&p, Policy::default());
        let (mut rng, mut joined) = (Rng::new(0, &[]), Vec::new());
        let mut stats = Stats::default();
        let mut ts = vec![t(0b0011, 3), t(0b0100, 1), t(0b1000, 3)];
        let i = pick(&s, &mut ts, &mut rng, &mut stats, &mut joined).unwrap_or(99);
        assert_eq!(ts[i].mask, 0b0100);
        ts.remove(i);
        let i = pick(&s, &mut ts, &mut rng, &mut stats, &mut joined).unwrap_or(99);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[i].mask, 0b1011);
        assert_eq!(stats.joins, 1);
    }

    #[test]
    fn blocked_tangles_are_skipped() {
        let p = prog();
        let s = Schedule::new(&p, Policy::default());
        let (mut rng, mut joined) = (Rng::new(0, &[]), Vec::new());
        let mut stats = Stats::default();
        let mut ts = vec![t(1, 0), t(2, 2)];
        ts[0].blocked = true;
        assert_eq!(
            pick(&s, &mut ts, &mut rng, &mut stats, &mut joined),
            Some(1)
        );
        ts[1].blocked = true;
        assert_eq!(pick(&s, &mut ts, &mut rng, &mut stats, &mut joined), None);
    }
}
