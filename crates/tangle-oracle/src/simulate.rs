//! An independent, deliberately simple simulator of a [`Program`] under maximal reconvergence,
//! written from `SPV_KHR_maximal_reconvergence` (not from the executor).
//!
//! Subgroups never interact (the programs have no barriers and no shared memory), so each one is
//! simulated alone. A statement runs once for a *tangle*, a lane mask, and the simulator walks the
//! structured program recursively:
//!
//! * an `if` splits the tangle by its condition (an `OpBranchConditional`); both halves rejoin at
//!   the merge block: "T(L) will include all non-escaping invocations in T(M)" for the
//!   `OpSelectionMerge` M;
//! * a loop runs its iterations in lockstep: the invocations still in iteration k that reach the
//!   continue target (by falling through or by `continue`) form one tangle, "T(L) will include all
//!   non-escaping invocations in T(M)" for the continue target and the header instance M of that
//!   iteration; at the loop merge every invocation that entered the loop together and did not
//!   return rejoins (the rule for the merge block and the first header instance);
//! * `break`, `continue` and `return` are the escapes ("branch to the Merge Block or Continue
//!   Target for a merge instruction instance that strictly dominates I", and `OpReturn`, which
//!   "only affects relations in the current function"); a broken-out invocation rejoins at the
//!   loop (or switch) merge, a returning one after the `OpFunctionCall`, or ends in `main`;
//! * a switch splits by selector value, one tangle per case construct (each case has one literal);
//! * `subgroupElect()` is true in the lowest lane of the tangle ("the active invocation with the
//!   lowest id").
//!
//! Lane `l` of subgroup `s` is the invocation with `gl_LocalInvocationIndex = s * S + l`; the last
//! subgroup of a workgroup whose size is not a multiple of S has fewer lanes.

use crate::program::{Case, Cond, LoopKind, Program, Selector, Stmt};

/// One output slot: a ballot (`uvec4` of lane bits) or a stored constant `(v, 0, 0, 0)`.
pub type Slot = [u32; 4];

/// The expected outputs: for each invocation (by local index), its slots in order.
pub type Expected = Vec<Vec<Slot>>;

/// Why a simulation stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A loop ran more iterations than the budget (a generator bug).
    #[error("loop ran more than {0} iterations")]
    LoopBudget(u64),
    /// The program writes more slots than the budget.
    #[error("program writes more than {0} slots")]
    SlotBudget(usize),
    /// A condition names a loop that does not enclose it (a generator bug).
    #[error("condition names loop {0}, which does not enclose it")]
    NoSuchLoop(u32),
    /// A call names a function that does not exist (a generator bug).
    #[error("call of missing function {0}")]
    NoSuchFunction(usize),
}

/// The most iterations of one loop instance.
const LOOP_BUDGET: u64 = 10_000;

/// Simulates `program` on a workgroup of `invocations` invocations with subgroups of
/// `subgroup_size` lanes (a power of two up to 128); fails if more than `slot_budget` slots
/// would be written in all.
pub fn simulate(
    program: &Program,
    subgroup_size: u32,
    invocations: u32,
    slot_budget: usize,
) -> Result<Expected, SimError> {
    let s = subgroup_size.clamp(1, 128);
    let mut out: Expected = vec![Vec::new(); invocations as usize];
    let mut written = 0usize;
    let mut base = 0u32;
    while base < invocations {
        let lanes = (invocations - base).min(s);
        let all = if lanes == 128 {
            u128::MAX
        } else {
            (1u128 << lanes) - 1
        };
        let mut sim = Sim {
            program,
            base,
            out: &mut out,
            loops: Vec::new(),
            written,
            slot_budget,
        };
        sim.block(&program.main, all)?;
        written = sim.written;
        base += s;
    }
    Ok(out)
}

/// Where the invocations of a tangle go after a statement.
#[derive(Debug, Default, Clone, Copy)]
struct Flow {
    /// Reach the next statement.
    fall: u128,
    /// Broke out of the innermost loop or switch.
    brk: u128,
    /// Continue the innermost loop.
    cont: u128,
    /// Returned from the current function.
    ret: u128,
}

struct Sim<'a> {
    program: &'a Program,
    /// Local index of lane 0.
    base: u32,
    out: &'a mut Expected,
    /// Iteration counter of each enclosing loop of the current function.
    loops: Vec<u32>,
    written: usize,
    slot_budget: usize,
}

fn lanes(mask: u128) -> impl Iterator<Item = u32> {
    (0..128u32).filter(move |l| mask >> l & 1 == 1)
}

/// The `uvec4` a ballot of `mask` returns.
pub fn ballot_value(mask: u128) -> Slot {
    [
        mask as u32,
        (mask >> 32) as u32,
        (mask >> 64) as u32,
        (mask >> 96) as u32,
    ]
}

impl Sim<'_> {
    fn record(&mut self, mask: u128, value: Slot) -> Result<(), SimError> {
        for l in lanes(mask) {
            self.written += 1;
            if self.written > self.slot_budget {
                return Err(SimError::SlotBudget(self.slot_budget));
            }
            if let Some(v) = self.out.get_mut((self.base + l) as usize) {
                v.push(value);
            }
        }
        Ok(())
    }

    /// The lanes of `mask` for which `f(lane)` holds.
    fn filter(mask: u128, f: impl Fn(u32) -> bool) -> u128 {
        lanes(mask).filter(|l| f(*l)).fold(0, |m, l| m | 1u128 << l)
    }

    fn block(&mut self, stmts: &[Stmt], mut cur: u128) -> Result<Flow, SimError> {
        let mut flow = Flow::default();
        for s in stmts {
            if cur == 0 {
                break;
            }
            let f = self.stmt(s, cur)?;
            cur = f.fall;
            flow.brk |= f.brk;
            flow.cont |= f.cont;
            flow.ret |= f.ret;
        }
        flow.fall = cur;
        Ok(flow)
    }

    fn stmt(&mut self, s: &Stmt, cur: u128) -> Result<Flow, SimError> {
        let none = Flow::default();
        Ok(match s {
            Stmt::Ballot => {
                self.record(cur, ballot_value(cur))?;
                Flow { fall: cur, ..none }
            }
            Stmt::Store(v) => {
                self.record(cur, [*v, 0, 0, 0])?;
                Flow { fall: cur, ..none }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(cond, cur)?;
                let t = self.block(then, cur & c)?;
                let e = match otherwise {
                    Some(o) => self.block(o, cur & !c)?,
                    None => Flow {
                        fall: cur & !c,
                        ..none
                    },
                };
                // Selection merge: all non-escaping invocations of the header's tangle rejoin.
                Flow {
                    fall: t.fall | e.fall,
                    brk: t.brk | e.brk,
                    cont: t.cont | e.cont,
                    ret: t.ret | e.ret,
                }
            }
            Stmt::Loop { kind, body } => self.looped(*kind, body, cur)?,
            Stmt::Break => Flow { brk: cur, ..none },
            Stmt::Continue => Flow { cont: cur, ..none },
            Stmt::Return => Flow { ret: cur, ..none },
            Stmt::Switch { selector, cases } => self.switch(selector, cases, cur)?,
            Stmt::ElectSpin => {
                // Every iteration the lowest lane of the looping tangle leaves; all meet again
                // at the loop merge, so the statement only passes the tangle on.
                Flow { fall: cur, ..none }
            }
            Stmt::Call(i) => {
                let body = self
                    .program
                    .funcs
                    .get(*i)
                    .ok_or(SimError::NoSuchFunction(*i))?;
                let saved = std::mem::take(&mut self.loops);
                let r = self.block(body, cur)?;
                self.loops = saved;
                // After OpFunctionCall every invocation that did not terminate rejoins:
                // returning escapes only relations in the callee.
                Flow {
                    fall: r.fall | r.ret,
                    ..none
                }
            }
        })
    }

    fn cond(&self, c: &Cond, cur: u128) -> Result<u128, SimError> {
        Ok(match *c {
            Cond::LaneMask(m) => m,
            Cond::Uniform { index, value } => {
                if index == value {
                    u128::MAX
                } else {
                    0
                }
            }
            Cond::LocalIndexAtLeast(b) => Self::filter(cur, |l| self.base + l >= b),
            Cond::LoopCount { depth, modulus } => {
                let k = *self
                    .loops
                    .get(depth as usize)
                    .ok_or(SimError::NoSuchLoop(depth))?;
                let m = modulus.max(1);
                Self::filter(cur, |l| l % m == k % m)
            }
            Cond::Elect => cur & cur.wrapping_neg(),
            Cond::Pair { a, b, and } => {
                let (a, b) = (self.cond(&a.into(), cur)?, self.cond(&b.into(), cur)?);
                if and {
                    a & b
                } else {
                    a | b
                }
            }
        })
    }

    fn looped(&mut self, kind: LoopKind, body: &[Stmt], cur: u128) -> Result<Flow, SimError> {
        let depth = self.loops.len();
        self.loops.push(0);
        let mut flow = Flow::default();
        let mut live = cur;
        let mut k = 0u32;
        loop {
            if let Some(slot) = self.loops.get_mut(depth) {
                *slot = k;
            }
            // The test of a `for` loop sits at the top of each iteration and is run by every
            // invocation of the iteration, also those that then leave.
            let enter = match kind {
                LoopKind::ForUniform { count, test_ballot } => {
                    self.test_ballot(test_ballot, live)?;
                    if k < count {
                        live
                    } else {
                        0
                    }
                }
                LoopKind::ForVarying {
                    offset,
                    test_ballot,
                } => {
                    self.test_ballot(test_ballot, live)?;
                    Self::filter(live, |l| (l + offset) % 5 > k)
                }
                LoopKind::ForLane { test_ballot } => {
                    self.test_ballot(test_ballot, live)?;
                    Self::filter(live, |l| l + 1 > k)
                }
                _ => live,
            };
            flow.fall |= live & !enter;
            if enter == 0 {
                break;
            }
            let r = self.block(body, enter)?;
            flow.ret |= r.ret;
            // Break blocks rejoin at the loop merge.
            flow.fall |= r.brk;
            // The continue target: this iteration's invocations that did not escape.
            let at_continue = r.fall | r.cont;
            k += 1;
            if u64::from(k) > LOOP_BUDGET {
                return Err(SimError::LoopBudget(LOOP_BUDGET));
            }
            live = match kind {
                LoopKind::ForInfinite { continue_ballot } => {
                    if continue_ballot && at_continue != 0 {
                        self.record(at_continue, ballot_value(at_continue))?;
                    }
                    at_continue
                }
                LoopKind::DoWhileUniform { count, test_ballot } => {
                    self.test_ballot(test_ballot, at_continue)?;
                    if k < count {
                        at_continue
                    } else {
                        flow.fall |= at_continue;
                        0
                    }
                }
                _ => at_continue,
            };
        }
        self.loops.truncate(depth);
        // Loop merge: everything that entered together and did not return.
        Ok(Flow {
            fall: flow.fall,
            ret: flow.ret,
            ..Flow::default()
        })
    }

    /// A ballot in a loop test, run by `mask` (when it is not empty).
    fn test_ballot(&mut self, on: bool, mask: u128) -> Result<(), SimError> {
        if on && mask != 0 {
            self.record(mask, ballot_value(mask))?;
        }
        Ok(())
    }

    fn switch(&mut self, selector: &Selector, cases: &[Case], cur: u128) -> Result<Flow, SimError> {
        let selector_of = |l: u32| -> Result<u32, SimError> {
            Ok(match *selector {
                Selector::Uniform { index } => index,
                Selector::Lane { modulus } => l % modulus.max(1),
                Selector::LoopCount { depth } => *self
                    .loops
                    .get(depth as usize)
                    .ok_or(SimError::NoSuchLoop(depth))?,
            })
        };
        let mut groups = Vec::with_capacity(cases.len());
        let mut matched = 0u128;
        for c in cases {
            let mut m = 0u128;
            if let Some(v) = c.value {
                for l in lanes(cur) {
                    if selector_of(l)? == v {
                        m |= 1 << l;
                    }
                }
            }
            matched |= m;
            groups.push(m);
        }
        let unmatched = cur & !matched;
        let mut flow = Flow::default();
        let mut has_default = false;
        for (c, m) in cases.iter().zip(groups) {
            let m = if c.value.is_none() {
                has_default = true;
                unmatched
            } else {
                m
            };
            let r = self.block(&c.body, m)?;
            // A case ends in `break`: it and the breaks inside reach the switch merge.
            flow.fall |= r.fall | r.brk;
            flow.cont |= r.cont;
            flow.ret |= r.ret;
        }
        if !has_default {
            flow.fall |= unmatched;
        }
        Ok(flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Stmt::*;

    fn run(main: Vec<Stmt>, funcs: Vec<Vec<Stmt>>, s: u32, n: u32) -> Expected {
        simulate(&Program { main, funcs }, s, n, 100_000).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The masks lane `l` reads, in order.
    fn lane(e: &Expected, l: usize) -> Vec<u32> {
        e[l].iter().map(|s| s[0]).collect()
    }

    #[test]
    fn if_splits_and_merge_rejoins() {
        let p = vec![
            Ballot,
            If {
                cond: Cond::LaneMask(0b0011),
                then: vec![Ballot],
                otherwise: Some(vec![Ballot]),
            },
            Ballot,
        ];
        let e = run(p, vec![], 4, 4);
        assert_eq!(lane(&e, 0), [0xf, 0x3, 0xf]);
        assert_eq!(lane(&e, 3), [0xf, 0xc, 0xf]);
    }

    #[test]
    fn partial_last_subgroup() {
        let e = run(vec![Ballot], vec![], 4, 6);
        assert_eq!(lane(&e, 0), [0xf]);
        assert_eq!(lane(&e, 5), [0x3]);
        assert_eq!(e.len(), 6);
    }

    #[test]
    fn varying_loop_in_lockstep_and_break_per_iteration() {
        // Lane l runs (l + 0) % 5 iterations; lane 2 breaks in iteration 1.
        let body = vec![
            Ballot,
            If {
                cond: Cond::LoopCount {
                    depth: 0,
                    modulus: 4,
                },
                then: vec![If {
                    cond: Cond::LaneMask(0b0100),
                    then: vec![Break],
                    otherwise: None,
                }],
                otherwise: None,
            },
        ];
        let p = vec![
            Loop {
                kind: LoopKind::ForVarying {
                    offset: 0,
                    test_ballot: false,
                },
                body,
            },
            Ballot,
        ];
        let e = run(p, vec![], 4, 4);
        assert_eq!(lane(&e, 0), [0xf]); // no iterations: only the merge ballot
        assert_eq!(lane(&e, 1), [0xe, 0xf]);
        assert_eq!(lane(&e, 2), [0xe, 0xc, 0xf]);
        assert_eq!(lane(&e, 3), [0xe, 0xc, 0x8, 0xf]);
    }

    #[test]
    fn infinite_loop_elect_and_continue_ballot() {
        let body = vec![If {
            cond: Cond::Elect,
            then: vec![Store(7), Break],
            otherwise: None,
        }];
        let p = vec![Loop {
            kind: LoopKind::ForInfinite {
                continue_ballot: true,
            },
            body,
        }];
        let e = run(p, vec![], 4, 3);
        assert_eq!(lane(&e, 0), [7]);
        assert_eq!(lane(&e, 1), [0x6, 7]);
        assert_eq!(lane(&e, 2), [0x6, 0x4, 7]);
    }

    #[test]
    fn return_in_call_rejoins_after_call_and_ends_main() {
        let f = vec![
            If {
                cond: Cond::LaneMask(0b0001),
                then: vec![Return],
                otherwise: None,
            },
            Ballot,
        ];
        let p = vec![
            Call(0),
            Ballot,
            If {
                cond: Cond::LaneMask(0b1000),
                then: vec![Return],
                otherwise: None,
            },
            Ballot,
        ];
        let e = run(p, vec![f], 4, 4);
        assert_eq!(lane(&e, 0), [0xf, 0x7]);
        assert_eq!(lane(&e, 1), [0xe, 0xf, 0x7]);
        assert_eq!(lane(&e, 3), [0xe, 0xf]);
    }

    #[test]
    fn switch_groups_by_selector_and_default() {
        let cases = vec![
            Case {
                value: Some(1),
                body: vec![Ballot],
            },
            Case {
                value: None,
                body: vec![Ballot, Break, Ballot],
            },
        ];
        let p = vec![
            Switch {
                selector: Selector::Lane { modulus: 3 },
                cases,
            },
            Ballot,
        ];
        let e = run(p, vec![], 8, 8);
        assert_eq!(lane(&e, 1), [0x92, 0xff]); // lanes 1, 4, 7
        assert_eq!(lane(&e, 0), [0x6d, 0xff]); // lanes 0, 2, 3, 5, 6
    }

    #[test]
    fn runaway_programs_are_refused() {
        let p = Program {
            main: vec![Loop {
                kind: LoopKind::DoWhileInfinite,
                body: vec![Ballot],
            }],
            funcs: vec![],
        };
        assert_eq!(simulate(&p, 4, 4, 1000), Err(SimError::SlotBudget(1000)));
    }
}
