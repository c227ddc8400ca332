//! Release/acquire synchronisation between workgroups through atomics, for the race check
//! ([`crate::check::race`]): which accesses of one workgroup happen before which of another.
//!
//! # Spec
//! Vulkan memory model: "A release sequence headed by A ... is the maximal contiguous
//! sub-sequence of atomic operations in M's modification order that begins with A, where every
//! subsequent operation is an atomic read-modify-write"; "an atomic operation A that is a
//! release operation synchronizes-with an atomic operation B that is an acquire operation if
//! ... B reads a value written by a side effect in the release sequence headed by A", in scope
//! of each other; happens-before includes program order before the release and after the
//! acquire. An atomic orders buffer memory when its semantics name UniformMemory and its scope
//! holds both workgroups (Device, QueueFamily or CrossDevice).
//!
//! # Model (exact for the execution that ran, one hop)
//! Every atomic on buffer memory runs under one lock with this bookkeeping, so the location
//! order seen is the one that happened. Each location keeps the heads of its current release
//! sequence; an acquire that reads it gets an edge from each head (of another workgroup). A
//! position is (workgroup, invocation, phase, event): the phase counts the workgroup's barriers
//! that order buffer memory, the event counts the invocation's release/acquire atomics. An
//! access is before a release if an earlier phase, or the same invocation and no later event;
//! after an acquire if a later phase, or the same invocation and a later event.
//!
//! Not modelled, so reported as races (never a false "ordered"): chains through a third
//! workgroup (happens-before is transitive; only one edge is followed), fences (`OpMemoryBarrier`
//! with a relaxed atomic), and release/acquire between invocations of one workgroup.

use super::race::{Access, CutShort};
use std::collections::HashMap;

/// The atomic releases when it writes.
pub const RELEASE: u8 = 1;
/// The atomic acquires when it reads (a compare-exchange: when it writes too).
pub const ACQUIRE: u8 = 2;
/// A compare-exchange acquires when the comparison fails (its Unequal semantics).
pub const ACQUIRE_UNEQUAL: u8 = 4;

/// Memory Semantics bits.
const ACQUIRE_BIT: u32 = 0x2;
const RELEASE_BIT: u32 = 0x4;
const ACQ_REL_BIT: u32 = 0x8;
const SEQ_CST_BIT: u32 = 0x10;
const UNIFORM_MEMORY: u32 = 0x40;

/// The [`RELEASE`]/[`ACQUIRE`]/[`ACQUIRE_UNEQUAL`] flags of an atomic with Memory Scope
/// `scope` and semantics `semantics` (`unequal`: a compare-exchange's failure semantics).
pub fn sync_of(scope: u64, semantics: u32, unequal: u32) -> u8 {
    // CrossDevice 0, Device 1, QueueFamily 5 hold every workgroup of the dispatch.
    if !matches!(scope, 0 | 1 | 5) {
        return 0;
    }
    let orders =
        |s: u32, bits: u32| s & UNIFORM_MEMORY != 0 && s & (bits | ACQ_REL_BIT | SEQ_CST_BIT) != 0;
    let mut f = 0;
    if orders(semantics, RELEASE_BIT) {
        f |= RELEASE;
    }
    if orders(semantics, ACQUIRE_BIT) {
        f |= ACQUIRE;
    }
    if orders(unequal, ACQUIRE_BIT) {
        f |= ACQUIRE_UNEQUAL;
    }
    f
}

/// The `ev` of an access whose invocation and event do not matter (no release or acquire in
/// its workgroup's phase): ordered by its phase alone.
pub const COLLAPSED: u32 = u32::MAX;

/// Where a release or acquire happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Workgroup number.
    pub wg: u64,
    /// `LocalInvocationIndex`.
    pub inv: u32,
    /// Barriers ordering buffer memory its workgroup had passed.
    pub phase: u32,
    /// Releases and acquires its invocation had done before it.
    pub ev: u32,
}

/// Whether access `a` happens before release `r` of its workgroup.
fn before(a: &Access, r: &Pos) -> bool {
    a.phase < r.phase || (a.phase == r.phase && a.ev != COLLAPSED && a.inv == r.inv && a.ev <= r.ev)
}

/// Whether access `b` happens after acquire `q` of its workgroup.
fn after(q: &Pos, b: &Access) -> bool {
    b.phase > q.phase || (b.phase == q.phase && b.ev != COLLAPSED && b.inv == q.inv && b.ev > q.ev)
}

/// The dispatch's release sequences and synchronizes-with edges.
#[derive(Debug, Default)]
pub struct SyncState {
    /// The heads of each atomic location's current release sequence, by pointer.
    heads: HashMap<u64, Vec<Pos>>,
    /// Edges (release, acquire) by (release's workgroup, acquire's workgroup).
    edges: HashMap<(u64, u64), Vec<(Pos, Pos)>>,
    count: usize,
    limit: usize,
    /// Set when the edges or heads reached the limit: the check between workgroups is then
    /// skipped (an ordering may be missing, and no race is reported for want of it).
    pub overflow: Option<CutShort>,
}

impl SyncState {
    /// An empty state keeping at most `limit` edges and heads.
    pub fn new(limit: usize) -> Self {
        SyncState {
            limit,
            ..SyncState::default()
        }
    }

    /// An atomic at pointer `ptr` done at `at` (instruction `loc`): whether it wrote, whether
    /// it read the old value too (a read-modify-write), and whether it released or acquired.
    pub fn atomic(&mut self, ptr: u64, at: Pos, loc: u32, write: (bool, bool), sync: (bool, bool)) {
        let ((wrote, rmw), (release, acquire)) = (write, sync);
        if acquire {
            let heads = self.heads.get(&ptr).map(Vec::as_slice).unwrap_or_default();
            for r in heads.iter().filter(|r| r.wg != at.wg) {
                let list = self.edges.entry((r.wg, at.wg)).or_default();
                // An edge from a later release of the same invocation to an earlier acquire of
                // the same invocation orders everything this one would.
                let covered = list.iter().any(|(r2, q2)| {
                    r2.inv == r.inv
                        && q2.inv == at.inv
                        && (r2.phase, r2.ev) >= (r.phase, r.ev)
                        && (q2.phase, q2.ev) <= (at.phase, at.ev)
                });
                if covered {
                    continue;
                }
                if self.count >= self.limit {
                    self.overflow.get_or_insert(CutShort {
                        wg: at.wg,
                        loc: Some(loc),
                    });
                    break;
                }
                list.push((*r, at));
                self.count += 1;
            }
        }
        if wrote {
            let heads = self.heads.entry(ptr).or_default();
            if !rmw {
                heads.clear();
            }
            if release {
                // A later release of the same invocation orders more than its earlier one.
                heads.retain(|h| (h.wg, h.inv) != (at.wg, at.inv));
                if heads.len() >= self.limit {
                    self.overflow.get_or_insert(CutShort {
                        wg: at.wg,
                        loc: Some(loc),
                    });
                } else {
                    heads.push(at);
                }
            }
            if heads.is_empty() {
                self.heads.remove(&ptr);
            }
        }
    }

    /// Whether accesses `a` and `b` (of different workgroups) are ordered one way or the other
    /// by an edge.
    pub fn ordered(&self, a: &Access, b: &Access) -> bool {
        let hb = |x: &Access, y: &Access| {
            self.edges
                .get(&(x.wg, y.wg))
                .is_some_and(|l| l.iter().any(|(r, q)| before(x, r) && after(q, y)))
        };
        hb(a, b) || hb(b, a)
    }

    /// Whether no edge exists (the check between workgroups then needs no lookups).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(wg: u64, inv: u32, phase: u32, ev: u32) -> Pos {
        Pos { wg, inv, phase, ev }
    }

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

    #[test]
    fn semantics_and_scope() {
        assert_eq!(sync_of(1, 0x44, 0x44), RELEASE);
        assert_eq!(sync_of(1, 0x42, 0x42), ACQUIRE | ACQUIRE_UNEQUAL);
        assert_eq!(sync_of(1, 0x48, 0x40), RELEASE | ACQUIRE);
        // Relaxed, no storage class, or Workgroup scope: nothing between workgroups.
        assert_eq!(sync_of(1, 0x40, 0x40), 0);
        assert_eq!(sync_of(1, 0x8, 0x8), 0);
        assert_eq!(sync_of(2, 0x48, 0x48), 0);
    }

    /// Message passing: the data written before the release is ordered before the data read
    /// after an acquire that read it; not before the release nor after the acquire, no order.
    #[test]
    fn one_edge_orders_before_and_after() {
        let mut s = SyncState::new(100);
        let flag = 0x1000;
        // Workgroup 0, invocation 3: writes data (ev 0), releases (ev 0).
        s.atomic(flag, pos(0, 3, 0, 0), 1, (true, false), (true, false));
        // Workgroup 1, invocation 5: acquires (ev 0), reads data (ev 1).
        s.atomic(flag, pos(1, 5, 0, 0), 2, (false, false), (false, true));
        let w = acc(0, 3, 0, 0);
        assert!(s.ordered(&w, &acc(1, 5, 0, 1)));
        assert!(s.ordered(&acc(1, 5, 0, 1), &w), "either order");
        // A read before the acquire, by another invocation, or a write after the release.
        assert!(!s.ordered(&w, &acc(1, 5, 0, 0)));
        assert!(!s.ordered(&w, &acc(1, 6, 0, 1)));
        assert!(!s.ordered(&acc(0, 3, 0, 1), &acc(1, 5, 0, 1)));
        // Through barriers: any invocation of an earlier phase, any of a later one.
        let mut s = SyncState::new(100);
        s.atomic(flag, pos(0, 3, 1, 0), 1, (true, false), (true, false));
        s.atomic(flag, pos(1, 5, 0, 0), 2, (false, false), (false, true));
        assert!(s.ordered(&acc(0, 9, 0, COLLAPSED), &acc(1, 9, 1, COLLAPSED)));
        assert!(!s.ordered(&acc(0, 9, 1, COLLAPSED), &acc(1, 9, 1, COLLAPSED)));
        assert!(!s.ordered(&acc(0, 9, 0, COLLAPSED), &acc(1, 9, 0, COLLAPSED)));
        // A plain store breaks the release sequence: a later acquire gets no edge.
        let mut s = SyncState::new(100);
        s.atomic(flag, pos(0, 3, 0, 0), 1, (true, false), (true, false));
        s.atomic(flag, pos(2, 0, 0, 0), 1, (true, false), (false, false));
        s.atomic(flag, pos(1, 5, 0, 0), 2, (false, false), (false, true));
        assert!(s.is_empty());
        // A read-modify-write continues it.
        let mut s = SyncState::new(100);
        s.atomic(flag, pos(0, 3, 0, 0), 1, (true, false), (true, false));
        s.atomic(flag, pos(2, 0, 0, 0), 1, (true, true), (false, false));
        s.atomic(flag, pos(1, 5, 0, 0), 2, (false, false), (false, true));
        assert!(s.ordered(&acc(0, 3, 0, 0), &acc(1, 5, 0, 1)));
    }

    #[test]
    fn overflow_is_marked() {
        let mut s = SyncState::new(1);
        s.atomic(8, pos(0, 0, 0, 0), 1, (true, true), (true, false));
        s.atomic(8, pos(1, 0, 0, 0), 1, (true, true), (true, false));
        assert!(s.overflow.is_some());
    }
}
