//! Release/acquire synchronisation for the race check ([`crate::check::race`]): atomics with
//! release/acquire semantics, memory barriers (fences) with relaxed atomics, and control
//! barriers acting as fences, within a workgroup and between workgroups, with happens-before
//! carried transitively by vector clocks ([`crate::check::clock`]).
//!
//! # Spec
//! Vulkan memory model (appendix "Memory Model"):
//! - "Release Sequence": "the release sequence headed by A is the longest continuous
//!   subsequence of A's scoped modification order that consists of: the atomic operation A as
//!   its first element; atomic read-modify-write operations on M by any agent".
//! - "Synchronizes-With": a release atomic A synchronizes-with an acquire atomic B when "B
//!   reads a value written by A or by an operation in the release sequence headed by A"; "If A
//!   is a release barrier and B is an atomic operation that performs an acquire operation ...
//!   there exists an atomic write X (with any memory semantics); A is program-ordered before X
//!   ... If X is relaxed, it is still considered to head a hypothetical release sequence ...
//!   X's storage class is in A's semantics"; symmetrically for an atomic read Y
//!   "program-ordered before" an acquire barrier B, and for barrier to barrier; "A and B are in
//!   the instance of each other's memory scopes".
//! - "Inter-Thread-Happens-Before": per set of storage classes SC, through synchronizes-with
//!   where "both A and B have all of SC in their semantics", program order before a release
//!   and after an acquire, and transitively ("A inter-thread-happens-before<SC> some X and X
//!   inter-thread-happens-before<SC> B").
//!
//! # Model (exact for the execution that ran)
//! Every atomic on buffer memory runs under the dispatch's lock with this bookkeeping, so the
//! modification order seen is the one that happened; Workgroup-memory atomics keep theirs in
//! the workgroup's [`WgSync`]. Each location keeps, per releasing workgroup and scope, the
//! joined clocks of its current release sequences ([`Locations`]). An acquire joins them into
//! its invocation's clock; a relaxed read keeps them pending until an acquire barrier of the
//! same invocation. A release (atomic, or relaxed write after a release barrier) publishes its
//! invocation's clock plus its own position. A control barrier ordering buffer memory starts a
//! phase: the clocks of every invocation are merged into the phase's, and it acts as a release
//! and acquire barrier of every invocation when its semantics say so.
//!
//! Approximations, each of which can only hide a race, never invent one: `OpMemoryBarrier`s
//! right before an `OpControlBarrier` lend it their semantics and scope (the GLSL idiom
//! `memoryBarrierBuffer(); barrier();`, as if it were `controlBarrier` with those semantics;
//! strictly the acquire side needs a barrier after it); a compare-exchange's two semantics
//! share their storage classes; release barriers an invocation passed are joined with one
//! scope; release/acquire at Subgroup scope is taken at Workgroup scope (it also orders
//! different subgroups of the workgroup).

use super::clock::{join_classes, Clock, Clocks, History, BUFFER, CLASSES};
use super::race::CutShort;
use std::collections::HashMap;

/// The operation releases (an atomic when it writes).
pub const RELEASE: u8 = 1;
/// The operation acquires (an atomic when it reads; a compare-exchange: when it writes too).
pub const ACQUIRE: u8 = 2;
/// A compare-exchange acquires when the comparison fails (its Unequal semantics).
pub const ACQUIRE_UNEQUAL: u8 = 4;
/// The memory scope holds every workgroup of the dispatch (Device, QueueFamily, CrossDevice);
/// without it, Workgroup scope.
pub const DEVICE: u8 = 8;
/// The semantics name UniformMemory (buffer memory): bit `1 << BUFFER` of [`classes`].
pub const UNIFORM_SEM: u8 = 16;
/// The semantics name WorkgroupMemory: bit `1 << SHARED` of [`classes`].
pub const WORKGROUP_SEM: u8 = 32;

/// Memory Semantics bits.
const ACQUIRE_BIT: u32 = 0x2;
const RELEASE_BIT: u32 = 0x4;
const ACQ_REL_BIT: u32 = 0x8;
const SEQ_CST_BIT: u32 = 0x10;
const UNIFORM_MEMORY: u32 = 0x40;
const WORKGROUP_MEMORY: u32 = 0x100;

/// The flags of an atomic or barrier with Memory Scope `scope` and semantics `semantics`
/// (`unequal`: a compare-exchange's failure semantics; `semantics` otherwise): [`DEVICE`] for
/// its scope (a relaxed atomic too: its scope decides which release barriers it can carry),
/// and its release/acquire part with the storage classes it orders, if any.
pub fn sync_of(scope: u64, semantics: u32, unequal: u32) -> u8 {
    // CrossDevice 0, Device 1, QueueFamily 5 hold every workgroup; Workgroup 2 its own.
    // Subgroup 3 is taken as Workgroup: it then also orders invocations of different subgroups
    // of the workgroup, which the model does not, so it can only hide a race there, while
    // inside one subgroup it orders what the model orders. Invocation 4 orders no other
    // invocation.
    let device = matches!(scope, 0 | 1 | 5);
    if !device && !matches!(scope, 2 | 3) {
        return 0;
    }
    let scope_flag = if device { DEVICE } else { 0 };
    let both = semantics | unequal;
    let mut classes = 0;
    if both & UNIFORM_MEMORY != 0 {
        classes |= UNIFORM_SEM;
    }
    if both & WORKGROUP_MEMORY != 0 {
        classes |= WORKGROUP_SEM;
    }
    let has = |s: u32, bits: u32| s & (bits | ACQ_REL_BIT | SEQ_CST_BIT) != 0;
    let mut f = 0;
    if has(semantics, RELEASE_BIT) {
        f |= RELEASE;
    }
    if has(semantics, ACQUIRE_BIT) {
        f |= ACQUIRE;
    }
    if has(unequal, ACQUIRE_BIT) {
        f |= ACQUIRE_UNEQUAL;
    }
    if f == 0 || classes == 0 {
        return scope_flag;
    }
    f | classes | scope_flag
}

/// The storage classes flags name, as a mask of `1 << class`.
pub fn classes(flags: u8) -> u8 {
    (flags >> 4) & 3
}

/// The current release sequences of one location, joined: per releasing workgroup (any
/// scope), and over every workgroup for those at Device scope. A read then costs one join of
/// each, however many workgroups released there.
#[derive(Debug, Clone, Default)]
struct Heads {
    by_wg: HashMap<u64, Clocks>,
    device: Clocks,
}

fn clocks_size(c: &Clocks) -> usize {
    c.iter().map(Clock::size).sum()
}

impl Heads {
    fn size(&self) -> usize {
        self.by_wg.values().map(clocks_size).sum::<usize>() + clocks_size(&self.device)
    }
}

/// The current release sequences of atomic locations, by pointer.
#[derive(Debug, Default)]
pub struct Locations {
    heads: HashMap<u64, Heads>,
    /// Clock entries held, for the memory bound.
    pub size: usize,
}

impl Locations {
    /// What an atomic read at `ptr` by workgroup `wg` reads from the release sequences there:
    /// (those of its own workgroup, and those at Device scope of every workgroup — when
    /// `device`, so that both are in the instance of each other's scope; its own workgroup's
    /// are in the first already).
    fn read(&self, ptr: u64, wg: u64, device: bool) -> (Option<&Clocks>, Option<&Clocks>) {
        let Some(h) = self.heads.get(&ptr) else {
            return (None, None);
        };
        (h.by_wg.get(&wg), device.then_some(&h.device))
    }

    /// An atomic write at `ptr` by workgroup `wg`: a read-modify-write continues the release
    /// sequences, any other write ends them; `released`: the sequence it heads (Device scope,
    /// clocks).
    fn write(&mut self, ptr: u64, wg: u64, rmw: bool, released: Option<(bool, Clocks)>) {
        if !rmw {
            if let Some(old) = self.heads.remove(&ptr) {
                self.size = self.size.saturating_sub(old.size());
            }
        }
        let Some((device, clocks)) = released else {
            return;
        };
        let h = self.heads.entry(ptr).or_default();
        let before = h.size();
        join_classes(h.by_wg.entry(wg).or_default(), &clocks, 3);
        if device {
            join_classes(&mut h.device, &clocks, 3);
        }
        self.size = self.size.saturating_sub(before) + h.size();
    }
}

/// The release barriers an invocation passed, joined: a relaxed atomic write after them
/// releases what each of them does ("A is program-ordered before X": every such A, so the join
/// is exact; one at Device scope lends its scope to the join, which can only order more).
#[derive(Debug, Clone, Default)]
struct Fence {
    device: bool,
    classes: u8,
    clocks: Clocks,
}

impl Fence {
    fn join(&mut self, o: &Fence) {
        join_classes(&mut self.clocks, &o.clocks, o.classes);
        self.classes |= o.classes;
        self.device |= o.device;
    }
}

/// One invocation's synchronisation state within its workgroup's current phase.
#[derive(Debug, Default, Clone)]
struct InvSync {
    /// Known beyond the phase's clocks.
    know: Clocks,
    /// The release barriers it passed.
    fence: Option<Fence>,
    /// What its relaxed atomic reads read, by the read's storage class: (own workgroup's,
    /// others'), for a later acquire barrier.
    pending: [(Clocks, Clocks); CLASSES],
}

/// Where a synchronising operation happens: (`LocalInvocationIndex`, phase, the invocation's
/// synchronising operations before it).
pub type At = (u32, u32, u32);

/// What one atomic did: whether it read, wrote, whether a read-modify-write, and whether its
/// read acquires (its semantics for the outcome: a failed compare-exchange's Unequal ones).
#[derive(Debug, Clone, Copy)]
pub struct AtomicDid {
    pub read: bool,
    pub wrote: bool,
    pub rmw: bool,
    pub acquires: bool,
}

/// The synchronisation state of the workgroup being run.
#[derive(Debug, Default)]
pub struct WgSync {
    wg: u64,
    /// Known to every invocation in the current phase.
    phase_clock: Clocks,
    invs: Vec<InvSync>,
    /// The release barriers every invocation passed (control barriers' semantics).
    barrier_fence: Option<Fence>,
    /// Workgroup-memory atomics' release sequences.
    pub shared_locs: Locations,
    /// The knowledge over the run, for the sweeps.
    pub history: History,
}

impl WgSync {
    /// Starts workgroup `wg`.
    pub fn start(&mut self, wg: u64) {
        *self = WgSync {
            wg,
            ..WgSync::default()
        };
    }

    fn inv_mut(&mut self, inv: u32) -> Option<&mut InvSync> {
        let i = inv as usize;
        if self.invs.len() <= i {
            self.invs.resize(i + 1, InvSync::default());
        }
        self.invs.get_mut(i)
    }

    /// Clock entries held in this workgroup, for the memory bound.
    pub fn size(&self) -> usize {
        self.history.size + self.shared_locs.size
    }

    /// What a release at `at` publishes for `classes`: everything its invocation knows and
    /// its own accesses up to it.
    fn released(&self, at: At, classes: u8) -> Clocks {
        let (inv, phase, ev) = at;
        let mut out = Clocks::default();
        let own = Clock::own(self.wg, phase, Some((inv, ev)));
        for (c, k) in out.iter_mut().enumerate() {
            if classes & (1 << c) == 0 {
                continue;
            }
            if let Some(p) = self.phase_clock.get(c) {
                k.join(p);
            }
            if let Some(i) = self.invs.get(inv as usize).and_then(|i| i.know.get(c)) {
                k.join(i);
            }
            k.join(&own);
        }
        out
    }

    /// Joins `got` (of `classes`) into invocation `at.0`'s knowledge, keeping the history.
    fn acquire(&mut self, at: At, got: &Clocks, classes: u8) {
        let (inv, phase, ev) = at;
        let Some(st) = self.inv_mut(inv) else {
            return;
        };
        let mut changed = [false; CLASSES];
        for (c, ch) in changed.iter_mut().enumerate() {
            if classes & (1 << c) != 0 {
                if let (Some(k), Some(g)) = (st.know.get_mut(c), got.get(c)) {
                    *ch = k.join(g);
                }
            }
        }
        let know = st.know.clone();
        for (c, k) in know.iter().enumerate() {
            if changed.get(c) == Some(&true) {
                self.history.invocation(c, (inv, phase, ev + 1), k);
            }
        }
    }

    /// The release barriers invocation `inv` passed: its own and the workgroup's.
    fn fence_of(&self, inv: u32) -> Option<Fence> {
        let own = self.invs.get(inv as usize).and_then(|i| i.fence.as_ref());
        match (own, &self.barrier_fence) {
            (Some(a), Some(b)) => {
                let mut f = a.clone();
                f.join(b);
                Some(f)
            }
            (a, b) => a.or(b.as_ref()).cloned(),
        }
    }

    /// An atomic at `ptr` in `locs` of storage class `k` at `at`, with `flags`: whether it
    /// is a synchronising operation of its invocation (a release or acquire), and whether it
    /// published release barriers naming buffer memory (the workgroup's phases then matter).
    pub fn atomic(
        &mut self,
        locs: &mut Locations,
        (ptr, k): (u64, usize),
        at: At,
        flags: u8,
        did: AtomicDid,
    ) -> (bool, bool) {
        let device = flags & DEVICE != 0;
        let classes = classes(flags);
        let (mut event, mut published) = (false, false);
        if did.read {
            let (local, remote) = locs.read(ptr, self.wg, device);
            if did.acquires && classes != 0 {
                for got in [local, remote].into_iter().flatten() {
                    self.acquire(at, got, classes);
                }
                event = true;
            } else if let Some(p) = self.inv_mut(at.0).and_then(|s| s.pending.get_mut(k)) {
                if let Some(l) = local {
                    join_classes(&mut p.0, l, 3);
                }
                if let Some(r) = remote {
                    join_classes(&mut p.1, r, 3);
                }
            }
        }
        if did.wrote {
            let released = if flags & RELEASE != 0 && classes != 0 {
                event = true;
                Some((device, self.released(at, classes)))
            } else {
                // A relaxed write after a release barrier naming its storage class.
                let f = self.fence_of(at.0).filter(|f| f.classes & (1 << k) != 0);
                // Phases matter to buffer accesses only (Workgroup memory is swept at every
                // barrier).
                published = f.as_ref().is_some_and(|f| f.classes & (1 << BUFFER) != 0);
                f.map(|f| (f.device && device, f.clocks))
            };
            locs.write(ptr, self.wg, did.rmw, released);
        }
        (event, published)
    }

    /// `OpMemoryBarrier` with `flags` by the invocation at `at`: whether it synchronises.
    pub fn fence(&mut self, at: At, flags: u8) -> bool {
        let classes = classes(flags);
        if classes == 0 || flags & (RELEASE | ACQUIRE) == 0 {
            return false;
        }
        let device = flags & DEVICE != 0;
        if flags & ACQUIRE != 0 {
            // Relaxed reads before it, of a storage class it names.
            let mut got = Clocks::default();
            if let Some(st) = self.invs.get(at.0 as usize) {
                for (k, (local, remote)) in st.pending.iter().enumerate() {
                    if classes & (1 << k) != 0 {
                        join_classes(&mut got, local, classes);
                        if device {
                            join_classes(&mut got, remote, classes);
                        }
                    }
                }
            }
            self.acquire(at, &got, classes);
        }
        if flags & RELEASE != 0 {
            let clocks = self.released(at, classes);
            let f = Fence {
                device,
                classes,
                clocks,
            };
            if let Some(st) = self.inv_mut(at.0) {
                st.fence.get_or_insert_with(Fence::default).join(&f);
            }
        }
        true
    }

    /// A workgroup barrier with `flags` (its semantics and those of the memory barriers it
    /// took in) was passed; `storage`: it orders buffer memory and starts phase `phase`.
    pub fn barrier(&mut self, storage: bool, phase: u32, flags: u8) {
        let classes = classes(flags);
        let device = flags & DEVICE != 0;
        if storage {
            // Every invocation's knowledge before it, and (an acquire barrier) what its
            // relaxed reads read, is known after it to all (Vulkan: a release barrier
            // program-ordered before a control barrier synchronizes-with an acquire barrier
            // after it in another invocation).
            let acquires = flags & ACQUIRE != 0 && classes & (1 << BUFFER) != 0;
            let mut changed = false;
            for st in &mut self.invs {
                if let (Some(p), Some(k)) = (self.phase_clock.get_mut(BUFFER), st.know.get(BUFFER))
                {
                    changed |= p.join(k);
                }
                if acquires {
                    for (k, (local, remote)) in st.pending.iter().enumerate() {
                        if classes & (1 << k) == 0 {
                            continue;
                        }
                        if let (Some(p), Some(l), Some(r)) = (
                            self.phase_clock.get_mut(BUFFER),
                            local.get(BUFFER),
                            remote.get(BUFFER),
                        ) {
                            changed |= p.join(l);
                            if device {
                                changed |= p.join(r);
                            }
                        }
                    }
                }
                if let Some(k) = st.know.get_mut(BUFFER) {
                    *k = Clock::default();
                }
            }
            if changed {
                if let Some(p) = self.phase_clock.get(BUFFER) {
                    self.history.phase(BUFFER, phase, p);
                }
            }
        }
        if flags & RELEASE != 0 && classes != 0 {
            let mut clocks = Clocks::default();
            let own = Clock::own(self.wg, phase, None);
            for (c, k) in clocks.iter_mut().enumerate() {
                if classes & (1 << c) != 0 {
                    if let Some(p) = self.phase_clock.get(c) {
                        k.join(p);
                    }
                    k.join(&own);
                }
            }
            let f = Fence {
                device,
                classes,
                clocks,
            };
            self.barrier_fence
                .get_or_insert_with(Fence::default)
                .join(&f);
        }
    }
}

/// The dispatch's buffer atomics and the workgroups' histories.
#[derive(Debug, Default)]
pub struct SyncState {
    /// Buffer atomics' release sequences.
    pub locs: Locations,
    /// The histories of workgroups that synchronised, by number.
    histories: HashMap<u64, History>,
    size: usize,
    limit: usize,
    /// Set when the clocks reached the limit: the check between workgroups is then skipped
    /// (an ordering may be missing, and no race is reported for want of it).
    pub overflow: Option<CutShort>,
}

impl SyncState {
    /// An empty state keeping at most `limit` clock entries.
    pub fn new(limit: usize) -> Self {
        SyncState {
            limit,
            ..SyncState::default()
        }
    }

    /// Whether the clocks held are within the limit; marks the overflow at `at` if not.
    pub fn within_limit(&mut self, extra: usize, at: CutShort) -> bool {
        if self.size + self.locs.size + extra > self.limit {
            self.overflow.get_or_insert(at);
            return false;
        }
        true
    }

    /// Keeps workgroup `wg`'s history for the check between workgroups.
    pub fn keep(&mut self, wg: u64, h: History) {
        if h.is_empty() {
            return;
        }
        if !self.within_limit(h.size, CutShort { wg, loc: None }) {
            return;
        }
        self.size += h.size;
        self.histories.insert(wg, h);
    }

    /// The history of workgroup `wg`, if it synchronised.
    pub fn history(&self, wg: u64) -> Option<&History> {
        self.histories.get(&wg)
    }

    /// Whether no workgroup synchronised (the check between workgroups needs no lookups).
    pub fn is_empty(&self) -> bool {
        self.histories.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semantics_and_scope() {
        let dev_buf = DEVICE | UNIFORM_SEM;
        assert_eq!(sync_of(1, 0x44, 0x44), RELEASE | dev_buf);
        assert_eq!(sync_of(1, 0x42, 0x42), ACQUIRE | ACQUIRE_UNEQUAL | dev_buf);
        assert_eq!(sync_of(1, 0x48, 0x40), RELEASE | ACQUIRE | dev_buf);
        assert_eq!(
            sync_of(2, 0x108, 0x108),
            RELEASE | ACQUIRE | ACQUIRE_UNEQUAL | WORKGROUP_SEM
        );
        assert_eq!(classes(sync_of(1, 0x148, 0x148)), 3);
        // Relaxed or no storage class: its scope only; Subgroup scope as Workgroup scope;
        // Invocation scope: nothing.
        assert_eq!(sync_of(1, 0x40, 0x40), DEVICE);
        assert_eq!(sync_of(1, 0x8, 0x8), DEVICE);
        assert_eq!(sync_of(2, 0x0, 0x0), 0);
        assert_eq!(
            sync_of(3, 0x48, 0x48),
            RELEASE | ACQUIRE | ACQUIRE_UNEQUAL | UNIFORM_SEM
        );
        assert_eq!(sync_of(4, 0x48, 0x48), 0);
    }

    fn acc(wg: u64, inv: u32, phase: u32, ev: u32) -> super::super::race::Access {
        super::super::race::Access {
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

    const RMW: AtomicDid = AtomicDid {
        read: true,
        wrote: true,
        rmw: true,
        acquires: false,
    };

    /// Split reduction: a control barrier with release semantics before a relaxed
    /// read-modify-write releases every invocation's writes; one with acquire semantics after
    /// the other workgroup's relaxed read-modify-write passes them on to all its invocations.
    #[test]
    fn control_barriers_act_as_fences() {
        let fence = RELEASE | ACQUIRE | UNIFORM_SEM | DEVICE;
        for acquire_barrier in [true, false] {
            let mut locs = Locations::default();
            let mut a = WgSync::default();
            a.start(0);
            a.barrier(true, 1, fence);
            a.atomic(&mut locs, (0x1000, BUFFER), (0, 1, 0), DEVICE, RMW);
            let mut b = WgSync::default();
            b.start(1);
            b.atomic(&mut locs, (0x1000, BUFFER), (0, 0, 0), DEVICE, RMW);
            let flags = if acquire_barrier {
                fence
            } else {
                WORKGROUP_SEM | RELEASE
            };
            b.barrier(true, 1, flags);
            // Invocation 1 of workgroup 0 wrote in phase 0; invocation 1 of workgroup 1 reads
            // in phase 1.
            let known = b.history.knows(BUFFER, &acc(1, 1, 1, 0), &acc(0, 1, 0, 0));
            assert_eq!(known, acquire_barrier);
            assert!(
                !b.history.knows(BUFFER, &acc(1, 1, 1, 0), &acc(0, 1, 1, 0)),
                "after the barrier"
            );
        }
    }

    #[test]
    fn the_memory_bound_is_marked() {
        let mut st = SyncState::new(3);
        let mut g = WgSync::default();
        g.start(0);
        let store = AtomicDid {
            read: false,
            wrote: true,
            rmw: false,
            acquires: false,
        };
        for i in 0..10u32 {
            let flags = RELEASE | UNIFORM_SEM | DEVICE;
            g.atomic(
                &mut st.locs,
                (0x1000 + 4 * u64::from(i), BUFFER),
                (0, 0, i),
                flags,
                store,
            );
            st.within_limit(0, CutShort { wg: 0, loc: None });
        }
        assert!(st.overflow.is_some());
    }

    /// Against a plain reference on random executions: happens-before built from the spec's
    /// rules (program order; release atomic or release barrier before any atomic write,
    /// synchronizing-with an acquire atomic, or any atomic read before an acquire barrier,
    /// reading from the release sequence it heads) and closed transitively, compared with the
    /// clocks' answer for every pair of plain accesses of different invocations.
    #[test]
    fn clocks_agree_with_transitive_closure() {
        use super::super::race::{Access, WRITE};
        #[derive(Clone, Copy, PartialEq, Debug)]
        enum K {
            Access,
            Store(bool),
            Load(bool),
            Rmw(bool),
            FenceRel,
            FenceAcq,
            // Barriers naming Workgroup memory only: they order no buffer atomic.
            SharedRel,
            SharedAcq,
        }
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let buf = UNIFORM_SEM | DEVICE;
        let mut seen = [0usize; 2];
        for _ in 0..400 {
            // Three workgroups of two invocations; thread t = wg * 2 + inv.
            let (threads, len) = (6usize, 7usize);
            let progs: Vec<Vec<(K, u64)>> = (0..threads)
                .map(|_| {
                    (0..len)
                        .map(|_| {
                            let k = match next(11) {
                                0 | 1 => K::Access,
                                2 => K::Store(next(2) == 0),
                                3 | 4 => K::Load(next(2) == 0),
                                5 => K::Rmw(next(2) == 0),
                                6 => K::FenceRel,
                                7 => K::FenceAcq,
                                8 => K::SharedRel,
                                9 => K::SharedAcq,
                                _ => K::Store(true),
                            };
                            (k, 0x1000 + 4 * next(2))
                        })
                        .collect()
                })
                .collect();
            let mut wgs: Vec<WgSync> = (0..3).map(|_| WgSync::default()).collect();
            for (w, g) in wgs.iter_mut().enumerate() {
                g.start(w as u64);
            }
            let mut locs = Locations::default();
            let mut events = vec![0u32; threads];
            let mut pc = vec![0usize; threads];
            // Execution order of (thread, index); for each atomic write its node; for each
            // read, the write it read (by execution order: the last one).
            let mut order: Vec<(usize, usize)> = Vec::new();
            let mut last_write: std::collections::HashMap<u64, (usize, usize)> = Default::default();
            let mut writes: Vec<((usize, usize), u64, bool)> = Vec::new(); // (node, loc, rmw)
            let mut read_from: Vec<((usize, usize), (usize, usize))> = Vec::new();
            let mut accesses: Vec<((usize, usize), Access)> = Vec::new();
            while pc.iter().zip(&progs).any(|(p, q)| *p < q.len()) {
                let t = next(threads as u64) as usize;
                let j = pc[t];
                let Some(&(k, loc)) = progs[t].get(j) else {
                    continue;
                };
                pc[t] += 1;
                order.push((t, j));
                let (w, inv) = (t / 2, (t % 2) as u32);
                let at = (inv, 0, events[t]);
                let g = &mut wgs[w];
                let atomic = |rel: bool, acq: bool| {
                    let mut f = DEVICE;
                    if rel || acq {
                        f |= buf;
                    }
                    if rel {
                        f |= RELEASE;
                    }
                    if acq {
                        f |= ACQUIRE | ACQUIRE_UNEQUAL;
                    }
                    f
                };
                let (read, wrote, flags) = match k {
                    K::Access => {
                        let a = Access {
                            start: 0,
                            end: 4,
                            wg: w as u64,
                            inv,
                            class: WRITE,
                            loc: 0,
                            sg_epoch: 0,
                            phase: 0,
                            ev: events[t],
                        };
                        accesses.push(((t, j), a));
                        continue;
                    }
                    K::FenceRel | K::FenceAcq | K::SharedRel | K::SharedAcq => {
                        let f = match k {
                            K::FenceRel => RELEASE | buf,
                            K::FenceAcq => ACQUIRE | buf,
                            K::SharedRel => RELEASE | WORKGROUP_SEM | DEVICE,
                            _ => ACQUIRE | WORKGROUP_SEM | DEVICE,
                        };
                        if g.fence(at, f) {
                            events[t] += 1;
                        }
                        continue;
                    }
                    K::Store(rel) => (false, true, atomic(rel, false)),
                    K::Load(acq) => (true, false, atomic(false, acq)),
                    K::Rmw(ar) => (true, true, atomic(ar, ar)),
                };
                if read {
                    if let Some(wn) = last_write.get(&loc) {
                        read_from.push(((t, j), *wn));
                    }
                }
                if wrote {
                    writes.push(((t, j), loc, read));
                    last_write.insert(loc, (t, j));
                }
                let did = AtomicDid {
                    read,
                    wrote,
                    rmw: read && wrote,
                    acquires: flags & ACQUIRE != 0,
                };
                if g.atomic(&mut locs, (loc, BUFFER), at, flags, did).0 {
                    events[t] += 1;
                }
            }
            // The reference: nodes (thread, index), program order and synchronizes-with.
            let n = threads * len;
            let id = |(t, j): (usize, usize)| t * len + j;
            let mut hb = vec![vec![false; n]; n];
            for t in 0..threads {
                for a in 0..len {
                    for b in a + 1..len {
                        hb[id((t, a))][id((t, b))] = true;
                    }
                }
            }
            let kind = |(t, j): (usize, usize)| progs[t][j].0;
            for &(r, x0) in &read_from {
                // Every write X whose (hypothetical) release sequence holds the write read.
                let pos = |node| writes.iter().position(|(w, _, _)| *w == node);
                let (Some(end), loc) = (pos(x0), writes.iter().find(|w| w.0 == x0).map(|w| w.1))
                else {
                    continue;
                };
                let mut heads = Vec::new();
                let mut i = end;
                loop {
                    let (node, l, rmw) = writes[i];
                    if Some(l) == loc {
                        heads.push(node);
                        if !rmw {
                            break;
                        }
                    }
                    if i == 0 {
                        break;
                    }
                    i -= 1;
                }
                for x in heads {
                    // Release side: X itself if a release atomic; any release barrier before it.
                    let mut rel = Vec::new();
                    if matches!(kind(x), K::Store(true) | K::Rmw(true)) {
                        rel.push(x);
                    }
                    rel.extend(
                        (0..x.1)
                            .map(|j| (x.0, j))
                            .filter(|&y| kind(y) == K::FenceRel),
                    );
                    let mut acq = Vec::new();
                    if matches!(kind(r), K::Load(true) | K::Rmw(true)) {
                        acq.push(r);
                    }
                    acq.extend(
                        (r.1 + 1..len)
                            .map(|j| (r.0, j))
                            .filter(|&y| kind(y) == K::FenceAcq),
                    );
                    for &a in &rel {
                        for &b in &acq {
                            hb[id(a)][id(b)] = true;
                        }
                    }
                }
            }
            for k in 0..n {
                let via = hb[k].clone();
                for row in hb.iter_mut() {
                    if row[k] {
                        for (x, &v) in row.iter_mut().zip(&via) {
                            *x |= v;
                        }
                    }
                }
            }
            for (na, a) in &accesses {
                for (nb, b) in &accesses {
                    if na.0 == nb.0 {
                        continue;
                    }
                    let reference = hb[id(*na)][id(*nb)];
                    let clocks = wgs[b.wg as usize].history.knows(BUFFER, b, a);
                    assert_eq!(clocks, reference, "{a:?} before {b:?}: {progs:?} {order:?}");
                    seen[usize::from(reference)] += 1;
                }
            }
        }
        // Both answers are common (the check is not vacuous).
        assert!(seen[0] > 1000 && seen[1] > 300, "{seen:?}");
    }
}
