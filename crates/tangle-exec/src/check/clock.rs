//! Vector clocks of the race check's happens-before ([`crate::check::sync`]): what an
//! invocation knows happened before it, per workgroup, and each workgroup's history of that
//! knowledge for the sweeps of [`crate::check::race`].
//!
//! # Spec
//! Vulkan memory model, "Inter-Thread-Happens-Before": for a set of storage classes SC, "A
//! inter-thread-happens-before<SC> some X and X inter-thread-happens-before<SC> B" implies A
//! inter-thread-happens-before<SC> B — the relation is transitive per storage class, so a
//! clock is kept per class ([`CLASSES`]) and joined along every synchronizes-with.
//!
//! # Representation
//! Clocks exist only at synchronising operations (never per access). Within one workgroup,
//! accesses are placed by (phase, invocation, event): the phase counts the workgroup's
//! barriers that order buffer memory, the event counts the invocation's synchronising
//! operations ([`crate::check::race::Access`]). Everything a release makes known of one
//! workgroup is therefore "every access of an earlier phase, and of this phase those of some
//! invocations up to some event" — a [`Frontier`]; a [`Clock`] maps workgroups to frontiers.

use super::race::Access;
use std::collections::{BTreeMap, HashMap};

/// Storage classes with a clock of their own: buffer memory (UniformMemory semantics) and
/// Workgroup memory (WorkgroupMemory semantics).
pub const CLASSES: usize = 2;
/// Clock index of buffer memory.
pub const BUFFER: usize = 0;
/// Clock index of Workgroup memory.
pub const SHARED: usize = 1;

/// The `ev` of an access whose invocation and event do not matter (no synchronising operation
/// in its workgroup's phase): ordered by its phase alone.
pub const COLLAPSED: u32 = u32::MAX;

/// What is known of one workgroup: every access of a phase before `phase`, and of `phase` the
/// accesses of invocation `inv` with event at most `ev`, for each `(inv, ev)` of `invs`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    /// Phases before this one are known whole.
    pub phase: u32,
    /// `(invocation, last event known)`, sorted by invocation.
    pub invs: Vec<(u32, u32)>,
}

impl Frontier {
    fn covers(&self, a: &Access) -> bool {
        if a.phase != self.phase {
            return a.phase < self.phase;
        }
        a.ev != COLLAPSED
            && self
                .invs
                .binary_search_by_key(&a.inv, |x| x.0)
                .is_ok_and(|i| self.invs.get(i).is_some_and(|x| a.ev <= x.1))
    }

    /// Joins `o` in; whether anything changed.
    fn join(&mut self, o: &Frontier) -> bool {
        if o.phase < self.phase {
            return false;
        }
        if o.phase > self.phase {
            *self = o.clone();
            return true;
        }
        let mut changed = false;
        for &(inv, ev) in &o.invs {
            match self.invs.binary_search_by_key(&inv, |x| x.0) {
                Ok(i) => {
                    if let Some(x) = self.invs.get_mut(i).filter(|x| x.1 < ev) {
                        x.1 = ev;
                        changed = true;
                    }
                }
                Err(i) => {
                    self.invs.insert(i, (inv, ev));
                    changed = true;
                }
            }
        }
        changed
    }
}

/// What is known to happen before a point, by workgroup number (ordered, so that every walk
/// over it is deterministic).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clock(BTreeMap<u64, Frontier>);

/// A clock per storage class ([`BUFFER`], [`SHARED`]).
pub type Clocks = [Clock; CLASSES];

impl Clock {
    /// Workgroup `wg`'s accesses before phase `phase`, and (`at`) those of one invocation of
    /// that phase up to an event.
    pub fn own(wg: u64, phase: u32, at: Option<(u32, u32)>) -> Clock {
        let mut m = BTreeMap::new();
        m.insert(
            wg,
            Frontier {
                phase,
                invs: at.into_iter().collect(),
            },
        );
        Clock(m)
    }

    /// Whether access `a` is known to happen before.
    pub fn covers(&self, a: &Access) -> bool {
        self.0.get(&a.wg).is_some_and(|f| f.covers(a))
    }

    /// Joins `o` in; whether anything changed.
    pub fn join(&mut self, o: &Clock) -> bool {
        let mut changed = false;
        for (wg, f) in &o.0 {
            match self.0.get_mut(wg) {
                Some(mine) => changed |= mine.join(f),
                None => {
                    self.0.insert(*wg, f.clone());
                    changed = true;
                }
            }
        }
        changed
    }

    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Entries held (workgroups and invocations): what bounds the check's memory.
    pub fn size(&self) -> usize {
        self.0.values().map(|f| 1 + f.invs.len()).sum()
    }
}

/// Joins clocks `o` of the classes in `mask` (bit `1 << class`) into `into`; whether any changed.
pub fn join_classes(into: &mut Clocks, o: &Clocks, mask: u8) -> bool {
    let mut changed = false;
    for (c, (a, b)) in into.iter_mut().zip(o).enumerate() {
        if mask & (1 << c) != 0 {
            changed |= a.join(b);
        }
    }
    changed
}

/// Clocks by `(invocation, phase)`: `(first event, clock)`, in event order.
type InvClocks = HashMap<(u32, u32), Vec<(u32, Clock)>>;

/// One workgroup's knowledge over its run, kept only where it changed: the knowledge every
/// invocation shares from a phase on, and each invocation's own from an event on.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Per class: `(first phase, clock)`, in phase order.
    phases: [Vec<(u32, Clock)>; CLASSES],
    /// Per class and `(invocation, phase)`: `(first event, clock)`, in event order.
    invs: [InvClocks; CLASSES],
    /// Entries held, for the memory bound.
    pub size: usize,
}

impl History {
    /// From phase `phase` on, every invocation knows `clock` (of class `c`).
    pub fn phase(&mut self, c: usize, phase: u32, clock: &Clock) {
        self.size += clock.size();
        if let Some(l) = self.phases.get_mut(c) {
            l.push((phase, clock.clone()));
        }
    }

    /// From event `ev` of `phase` on, invocation `inv` knows `clock` (of class `c`) besides
    /// what its phase knows.
    pub fn invocation(&mut self, c: usize, (inv, phase, ev): (u32, u32, u32), clock: &Clock) {
        self.size += clock.size();
        if let Some(m) = self.invs.get_mut(c) {
            m.entry((inv, phase)).or_default().push((ev, clock.clone()));
        }
    }

    /// Whether access `a` (of any workgroup) is known to happen before access `x` of this
    /// history's workgroup, for class `c`.
    pub fn knows(&self, c: usize, x: &Access, a: &Access) -> bool {
        let phase = self.phases.get(c).and_then(|l| {
            let i = l.partition_point(|(p, _)| *p <= x.phase);
            i.checked_sub(1).and_then(|i| l.get(i))
        });
        if phase.is_some_and(|(_, k)| k.covers(a)) {
            return true;
        }
        if x.ev == COLLAPSED {
            return false;
        }
        let own = self
            .invs
            .get(c)
            .and_then(|m| m.get(&(x.inv, x.phase)))
            .and_then(|l| {
                let i = l.partition_point(|(e, _)| *e <= x.ev);
                i.checked_sub(1).and_then(|i| l.get(i))
            });
        own.is_some_and(|(_, k)| k.covers(a))
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(wg: u64, inv: u32, phase: u32, ev: u32) -> Access {
        Access {
            start: 0,
            end: 4,
            wg,
            inv,
            class: super::super::race::WRITE,
            loc: 0,
            sg_epoch: 0,
            phase,
            ev,
        }
    }

    /// Against a plain reference: a frontier is the set of (phase, inv, ev) positions it
    /// covers, and a join is their union (the frontier of the later phase wins whole).
    #[test]
    fn join_is_union_of_covered_positions() {
        let mut seed = 99u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..500 {
            let mk = |n: &mut dyn FnMut(u64) -> u64| {
                let mut c = Clock::default();
                for _ in 0..n(3) {
                    let wg = n(2);
                    let at = (n(2) == 0).then(|| (n(3) as u32, n(3) as u32));
                    c.join(&Clock::own(wg, n(3) as u32, at));
                }
                c
            };
            let a = mk(&mut next);
            let b = mk(&mut next);
            let mut j = a.clone();
            j.join(&b);
            for wg in 0..2 {
                for phase in 0..4 {
                    for inv in 0..3 {
                        for ev in [0, 1, 2, 3, COLLAPSED] {
                            let x = acc(wg, inv, phase, ev);
                            // Frontiers of different phases: the later one covers the whole
                            // earlier phase, so the union is the later frontier's set.
                            assert_eq!(
                                j.covers(&x),
                                a.covers(&x) || b.covers(&x),
                                "{a:?} {b:?} {x:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn history_looks_up_the_latest_before() {
        let mut h = History::default();
        h.phase(BUFFER, 1, &Clock::own(7, 2, None));
        h.invocation(BUFFER, (3, 0, 2), &Clock::own(8, 0, Some((5, 1))));
        let w7 = acc(7, 0, 1, COLLAPSED);
        let w8 = acc(8, 5, 0, 1);
        assert!(
            !h.knows(BUFFER, &acc(1, 0, 0, COLLAPSED), &w7),
            "phase 0 knows nothing"
        );
        assert!(h.knows(BUFFER, &acc(1, 0, 1, COLLAPSED), &w7));
        assert!(
            !h.knows(SHARED, &acc(1, 0, 1, COLLAPSED), &w7),
            "another class"
        );
        assert!(
            !h.knows(BUFFER, &acc(1, 3, 0, 1), &w8),
            "before the acquire"
        );
        assert!(h.knows(BUFFER, &acc(1, 3, 0, 2), &w8));
        assert!(
            !h.knows(BUFFER, &acc(1, 4, 0, 2), &w8),
            "another invocation"
        );
        assert!(
            !h.knows(BUFFER, &acc(1, 3, 0, 2), &acc(8, 5, 0, 2)),
            "after the release"
        );
    }
}
