//! Data races: two accesses to the same bytes, at least one a write, not both atomic, by
//! different invocations, that the Vulkan memory model does not order.
//!
//! # Spec
//! Vulkan memory model (Vulkan spec, "Memory Model", Data Race): "For a given memory location,
//! if there is a write and a read or write from different invocations that are not ordered by
//! happens-before, then there is a data race" and "...a data race... results in undefined
//! behavior" — except when both are atomic ("Two memory accesses are said to be potentially
//! concurrent ... and are not both atomic"). Within one workgroup, an `OpControlBarrier` with
//! Workgroup execution scope orders the accesses of every invocation before it with those after
//! it, for the storage classes its semantics (or an `OpMemoryBarrier` just before it) name:
//! WorkgroupMemory for Workgroup variables, UniformMemory for storage buffers. Release/acquire
//! atomics and memory barriers order accesses further, within a workgroup and between
//! workgroups ([`crate::check::sync`], transitively through [`crate::check::clock`]); a pair
//! is looked up there only when nothing cheaper orders it.
//!
//! # Algorithm (bounded, deterministic)
//! Every access to Workgroup memory or a buffer is logged as a byte range with its invocation,
//! class (read, write, atomic) and instruction. At a barrier that orders a storage class (and at
//! the end of the workgroup), the log of that class is sorted by address and swept once: each
//! access is compared with the earlier accesses still overlapping it, reads only with writes, so
//! a crowd of readers costs nothing. A workgroup's buffer accesses are then merged into runs of
//! bytes per class and kept; after the dispatch the runs of every workgroup are swept the same
//! way, so a race between two workgroups is found whatever threads ran them and in whatever
//! order. Every list is sorted before it is swept, so the findings do not depend on scheduling.
//! Repeated identical accesses are dropped as they are logged, and the logs and the number of
//! findings are bounded ([`RaceLog::LIMIT`], `--max-findings`); past a bound, races may go
//! unreported but none is invented.

use super::clock::{self, COLLAPSED};
use super::sync::{self, SyncState, WgSync};
use std::fmt;
use std::sync::{Arc, Mutex};

/// A read.
pub const READ: u8 = 1;
/// A write.
pub const WRITE: u8 = 2;
/// An atomic access.
pub const ATOMIC: u8 = 4;
/// A cooperative-matrix load's or store's access to one element: logged with the invocation
/// the run's layout gives the element, but the spec leaves the owner to the implementation
/// (SPV_KHR_cooperative_matrix: "The mapping of components to invocations and indexes is
/// implementation-dependent."), so against a plain access of its own subgroup it counts as
/// made by any invocation of the subgroup: a race under some layout is a race under all.
pub const MATRIX: u8 = 8;

/// One logged access, or (across workgroups) one run of accesses of one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Access {
    /// First byte, as a pointer (region in the high bits, see [`crate::run::memory`]).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Workgroup number.
    pub wg: u64,
    /// `LocalInvocationIndex`.
    pub inv: u32,
    /// [`READ`] or [`WRITE`], with [`ATOMIC`].
    pub class: u8,
    /// The instruction's location index.
    pub loc: u32,
    /// Subgroup-scope barriers its subgroup had passed (subgroup index in the high bits).
    pub sg_epoch: u64,
    /// Barriers ordering buffer memory its workgroup had passed ([`crate::check::sync`]).
    pub phase: u32,
    /// Synchronising operations its invocation had done before it ([`COLLAPSED`]: none in
    /// its workgroup's phase, so they do not matter).
    pub ev: u32,
}

impl Access {
    fn atomic(&self) -> bool {
        self.class & ATOMIC != 0
    }
    fn write(&self) -> bool {
        self.class & WRITE != 0
    }
    fn matrix(&self) -> bool {
        self.class & MATRIX != 0
    }
}

/// A race found: `this` conflicts with `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Race {
    /// The access reported (the read, when one of the two is a read).
    pub this: Access,
    /// The access it races with.
    pub other: Access,
}

/// Whether two overlapping accesses race: across workgroups (`across`), any two of different
/// workgroups; within one, two of different invocations (a matrix element's and a plain
/// access of its subgroup always count as such) not ordered by a subgroup barrier of
/// their subgroup — unless `order` (release/acquire, [`crate::check::sync`]) orders them.
fn conflict(
    a: &Access,
    b: &Access,
    across: bool,
    order: &dyn Fn(&Access, &Access) -> bool,
) -> bool {
    if !(a.write() || b.write()) || (a.atomic() && b.atomic()) {
        return false;
    }
    let unordered = if across {
        a.wg != b.wg
    } else {
        let same_subgroup = a.sg_epoch >> 32 == b.sg_epoch >> 32;
        // A matrix element's owner is unknown ([`MATRIX`]): any invocation of the subgroup.
        let owners_differ = a.inv != b.inv || (same_subgroup && a.matrix() != b.matrix());
        owners_differ && !(same_subgroup && a.sg_epoch != b.sg_epoch)
    };
    unordered && !order(a, b)
}

/// Whether release/acquire orders two accesses ([`crate::check::sync`]).
pub type Order<'a> = &'a dyn Fn(&Access, &Access) -> bool;

/// Never ordered beyond barriers.
pub fn unordered(_: &Access, _: &Access) -> bool {
    false
}

/// The clock ([`clock::BUFFER`], [`clock::SHARED`]) of an access at `ptr`.
pub fn class_of(ptr: u64) -> usize {
    match crate::run::memory::split_pointer(ptr).0 {
        crate::run::memory::REGION_WORKGROUP => clock::SHARED,
        _ => clock::BUFFER,
    }
}

/// Sweeps `log` (sorted here) and reports each access that races with an earlier overlapping
/// one, at most `cap` in all.
pub fn sweep(
    log: &mut [Access],
    (across, order): (bool, Order<'_>),
    cap: usize,
    out: &mut Vec<Race>,
) {
    sort(log);
    let mut writes: Vec<Access> = Vec::new();
    let mut reads: Vec<Access> = Vec::new();
    for r in log.iter() {
        if out.len() >= cap {
            return;
        }
        writes.retain(|a| a.end > r.start);
        let hit = writes
            .iter()
            .find(|a| conflict(a, r, across, order))
            .copied();
        let hit = match hit {
            Some(h) => Some(h),
            None if r.write() => {
                reads.retain(|a| a.end > r.start);
                reads
                    .iter()
                    .find(|a| conflict(a, r, across, order))
                    .copied()
            }
            None => None,
        };
        if let Some(other) = hit {
            // Reported at the read when there is one: the read sees the racy value.
            let (this, other) = if r.write() && !other.write() {
                (other, *r)
            } else {
                (*r, other)
            };
            out.push(Race { this, other });
        }
        if r.write() {
            writes.push(*r);
        } else {
            reads.push(*r);
        }
    }
}

/// Sorts `log` by [`Access`]'s order: by first byte in an array of (first byte, index), the
/// whole accesses compared only where first bytes tie, then moved once. The result is the one
/// order (accesses equal in every field are the same), at a third of the bytes moved per
/// comparison and swap of sorting the accesses themselves.
fn sort(log: &mut [Access]) {
    let mut order: Vec<(u64, usize)> = log.iter().map(|a| a.start).zip(0..).collect();
    order.sort_unstable_by(|x, y| x.0.cmp(&y.0).then_with(|| log.get(x.1).cmp(&log.get(y.1))));
    let sorted: Vec<Access> = order
        .iter()
        .filter_map(|&(_, i)| log.get(i).copied())
        .collect();
    if let Some(log) = log.get_mut(..sorted.len()) {
        log.copy_from_slice(&sorted);
    }
}

/// What a run keeps apart: its class and its place among releases and acquires (the
/// invocation only where that place depends on it).
fn run_key(a: &Access) -> (u8, u32, u32, u32) {
    let inv = if a.ev == COLLAPSED { 0 } else { a.inv };
    (a.class, a.phase, a.ev, inv)
}

/// Merges a workgroup's buffer accesses into runs of contiguous or overlapping bytes per class
/// and place among releases and acquires (each keeps its first access's invocation and
/// instruction): what the check across workgroups needs.
pub fn merge_runs(log: &mut Vec<Access>) {
    // Stable, so the runs kept from earlier barriers (sorted already) cost one pass; accesses
    // with equal keys differ only in `sg_epoch`, which the runs drop.
    log.sort_by_key(|a| (run_key(a), a.start, a.end, a.inv, a.loc));
    let mut out: Vec<Access> = Vec::with_capacity(log.len());
    for a in log.drain(..) {
        match out.last_mut() {
            Some(l) if run_key(l) == run_key(&a) && a.start <= l.end => l.end = l.end.max(a.end),
            _ => out.push(Access { sg_epoch: 0, ..a }),
        }
    }
    *log = out;
}

/// Where the race check was cut short: the first access it could not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutShort {
    /// Workgroup number.
    pub wg: u64,
    /// The instruction's location index; `None` when the check between workgroups dropped
    /// the workgroup's accesses as a whole.
    pub loc: Option<u32>,
}

/// The accesses of one workgroup being run.
#[derive(Debug)]
pub struct RaceLog {
    /// Whether accesses are logged (checks on, races not allowed).
    pub on: bool,
    /// The location of the op being executed.
    pub loc: u32,
    /// `LocalInvocationIndex` of lane 0 of the subgroup being run.
    pub first: u32,
    /// The running subgroup's index (high 32 bits) and subgroup-barrier count (low bits).
    pub sg_epoch: u64,
    /// The workgroup's number.
    pub wg: u64,
    /// Workgroup-memory accesses since the last barrier.
    pub shared: Vec<Access>,
    /// Buffer accesses since the last barrier that orders them.
    pub storage: Vec<Access>,
    /// This workgroup's buffer accesses as runs ([`merge_runs`]).
    pub runs: Vec<Access>,
    /// The most accesses a log holds ([`RaceLog::LIMIT`] unless the run's options say less).
    pub limit: usize,
    /// The first access dropped because a log was full, in the workgroup being run.
    pub truncated: Option<CutShort>,
    /// Barriers ordering buffer memory passed in the workgroup being run.
    pub phase: u32,
    /// Whether an invocation synchronised in the current phase, and in the workgroup.
    pub synced: (bool, bool),
    /// Synchronising operations done so far, by `LocalInvocationIndex`.
    pub events: Vec<u32>,
    /// The dispatch's release sequences ([`crate::check::sync`]).
    pub sync: Option<Arc<Mutex<SyncState>>>,
    /// The workgroup's synchronisation state.
    pub wg_sync: WgSync,
    /// Whether its clocks passed the memory bound ([`RaceLog::limit`]).
    pub sync_lost: bool,
}

impl Default for RaceLog {
    fn default() -> Self {
        RaceLog {
            on: false,
            loc: 0,
            first: 0,
            sg_epoch: 0,
            wg: 0,
            shared: Vec::new(),
            storage: Vec::new(),
            runs: Vec::new(),
            limit: RaceLog::LIMIT,
            truncated: None,
            phase: 0,
            synced: (false, false),
            events: Vec::new(),
            sync: None,
            wg_sync: WgSync::default(),
            sync_lost: false,
        }
    }
}

impl RaceLog {
    /// The most accesses a log holds by default; past it, accesses are dropped (races may be
    /// missed, and the report says so).
    pub const LIMIT: usize = 1 << 22;

    /// Logs an access of `len` bytes at pointer `ptr` by `lane` of the running subgroup.
    pub fn access(&mut self, lane: usize, ptr: u64, len: u64, class: u8) {
        let (region, _) = crate::run::memory::split_pointer(ptr);
        let log = match region {
            crate::run::memory::REGION_WORKGROUP => &mut self.shared,
            r if r >= crate::run::memory::FIRST_BUFFER => &mut self.storage,
            _ => return,
        };
        let inv = self.first + lane as u32;
        let a = Access {
            start: ptr,
            end: ptr.saturating_add(len),
            wg: self.wg,
            inv,
            class,
            loc: self.loc,
            sg_epoch: self.sg_epoch,
            phase: self.phase,
            ev: self.events.get(inv as usize).copied().unwrap_or(0),
        };
        // A loop repeating the same access adds nothing.
        if log.last() == Some(&a) {
            return;
        }
        if log.len() >= self.limit {
            if self.truncated.is_none() {
                self.truncated = Some(CutShort {
                    wg: self.wg,
                    loc: Some(self.loc),
                });
            }
            return;
        }
        log.push(a);
    }

    /// At a workgroup barrier (`storage`: it orders buffer accesses too; `flags`: its
    /// [`sync`] flags) or the end of the workgroup: checks the accesses it orders and forgets
    /// them.
    pub fn barrier(&mut self, storage: bool, flags: u8, cap: usize, out: &mut Vec<Race>) {
        let lost = self.sync_lost;
        let h = &self.wg_sync.history;
        let order = |a: &Access, b: &Access| {
            let c = class_of(a.start);
            lost || h.knows(c, b, a) || h.knows(c, a, b)
        };
        sweep(&mut self.shared, (false, &order), cap, out);
        self.shared.clear();
        if storage {
            sweep(&mut self.storage, (false, &order), cap, out);
            // Without a synchronising operation in this phase, an access is placed by its
            // phase alone; without any so far, every earlier phase is before all later events.
            if !self.synced.0 {
                self.storage.iter_mut().for_each(|a| a.ev = COLLAPSED);
            }
            self.runs.append(&mut self.storage);
            if !self.synced.1 {
                self.runs.iter_mut().for_each(|a| a.phase = 0);
            }
            merge_runs(&mut self.runs);
            self.phase += 1;
            self.synced.0 = false;
        }
        // A barrier's own release counts only once a relaxed write publishes it (`atomic`).
        self.wg_sync.barrier(storage, self.phase, flags);
    }

    /// Counts a synchronising operation of invocation `inv`.
    fn event(&mut self, inv: u32) {
        if self.events.len() <= inv as usize {
            self.events.resize(inv as usize + 1, 0);
        }
        if let Some(e) = self.events.get_mut(inv as usize) {
            *e += 1;
        }
        self.synced = (true, true);
    }

    /// Where `lane` of the running subgroup is: (`LocalInvocationIndex`, phase, event).
    fn at(&self, lane: usize) -> sync::At {
        let inv = self.first + lane as u32;
        (
            inv,
            self.phase,
            self.events.get(inv as usize).copied().unwrap_or(0),
        )
    }

    /// Stops ordering by clocks past the memory bound: this workgroup's races are no longer
    /// reported (and the check between workgroups is skipped), none invented.
    fn bound(&mut self) {
        if !self.sync_lost && self.wg_sync.size() > self.limit {
            self.sync_lost = true;
            self.truncated.get_or_insert(CutShort {
                wg: self.wg,
                loc: Some(self.loc),
            });
        }
    }

    /// `OpMemoryBarrier` with [`sync`] flags `flags` by `lane`.
    pub fn fence(&mut self, lane: usize, flags: u8) {
        let at = self.at(lane);
        if !self.sync_lost && self.wg_sync.fence(at, flags) {
            self.event(at.0);
            self.bound();
        }
    }

    /// Runs atomic `op` (`f`, returning the old value) by `lane` at `ptr`, with the release
    /// sequences' bookkeeping (under the dispatch's lock when it is on buffer memory).
    /// `flags` are the op's [`sync`] flags, `c` its comparator.
    pub fn atomic(
        &mut self,
        lane: usize,
        ptr: u64,
        op: crate::program::AtomicOp,
        flags: u8,
        c: u64,
        f: impl FnOnce() -> u64,
    ) -> u64 {
        use crate::program::AtomicOp;
        let (region, _) = crate::run::memory::split_pointer(ptr);
        let k = class_of(ptr);
        let at = self.at(lane);
        let did = |old: u64| {
            let wrote = match op {
                AtomicOp::Load => false,
                AtomicOp::CompareExchange => old == c,
                _ => true,
            };
            let acquire = if op == AtomicOp::CompareExchange && !wrote {
                sync::ACQUIRE_UNEQUAL
            } else {
                sync::ACQUIRE
            };
            sync::AtomicDid {
                read: op != AtomicOp::Store,
                wrote,
                rmw: !matches!(op, AtomicOp::Load | AtomicOp::Store),
                acquires: flags & acquire != 0,
            }
        };
        // Past the memory bound the check is cut short: no more bookkeeping.
        if self.sync_lost {
            return f();
        }
        let event = if region == crate::run::memory::REGION_WORKGROUP {
            let old = f();
            let mut locs = std::mem::take(&mut self.wg_sync.shared_locs);
            let event = self
                .wg_sync
                .atomic(&mut locs, (ptr, k), at, flags, did(old));
            self.wg_sync.shared_locs = locs;
            (old, event)
        } else {
            let Some(state) = self
                .sync
                .clone()
                .filter(|_| region >= crate::run::memory::FIRST_BUFFER)
            else {
                return f();
            };
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            let old = f();
            if st.overflow.is_some() {
                // Orderings are no longer followed: none of this workgroup's races is
                // reported either.
                self.sync_lost = true;
                return old;
            }
            let event = self
                .wg_sync
                .atomic(&mut st.locs, (ptr, k), at, flags, did(old));
            let cut = CutShort {
                wg: self.wg,
                loc: Some(self.loc),
            };
            st.within_limit(0, cut);
            (old, event)
        };
        let (old, (event, published)) = event;
        if event {
            self.event(at.0);
            self.bound();
        }
        // Its release barriers name phases of this workgroup: they are kept from now on
        // (those before were all before them).
        self.synced.1 |= published;
        old
    }

    /// Starts workgroup `wg`.
    pub fn start(&mut self, wg: u64) {
        self.wg = wg;
        self.shared.clear();
        self.storage.clear();
        self.runs.clear();
        self.truncated = None;
        self.phase = 0;
        self.synced = (false, false);
        self.events.clear();
        self.wg_sync.start(wg);
        self.sync_lost = false;
    }

    /// At the end of the workgroup: hands its history to the check between workgroups.
    pub fn keep_history(&mut self) {
        let h = std::mem::take(&mut self.wg_sync.history);
        if h.is_empty() && !self.sync_lost {
            return;
        }
        if let Some(state) = &self.sync {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            if self.sync_lost {
                st.overflow.get_or_insert(CutShort {
                    wg: self.wg,
                    loc: None,
                });
            } else {
                st.keep(self.wg, h);
            }
        }
    }
}

/// A data race, as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceFinding {
    /// The memory (`workgroup memory`, `buffer (set 0, binding 1)`).
    pub region: String,
    /// First and one-past-last byte offset both accesses touch.
    pub bytes: (u64, u64),
    /// Whether the reported access writes.
    pub write: bool,
    /// The other access: its instruction, invocation (`GlobalInvocationId`), whether it writes.
    pub other: crate::error::InstRef,
    /// The other invocation.
    pub other_invocation: [u32; 3],
    /// Whether the other access writes.
    pub other_write: bool,
    /// Whether the two invocations are in different workgroups.
    pub across_workgroups: bool,
}

impl fmt::Display for RaceFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = |w: bool| if w { "write" } else { "read" };
        let [x, y, z] = self.other_invocation;
        let (scope, order) = if self.across_workgroups {
            (" of another workgroup", "a release and an acquire")
        } else {
            ("", "a barrier or a release and an acquire")
        };
        write!(
            f,
            "data race on {} bytes {}..{}: this {} and a {} by invocation ({x}, {y}, {z}){scope} at {} are not ordered by {order}",
            self.region,
            self.bytes.0,
            self.bytes.1,
            verb(self.write),
            verb(self.other_write),
            self.other
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(start: u64, len: u64, inv: u32, class: u8) -> Access {
        Access {
            start,
            end: start + len,
            wg: 0,
            inv,
            class,
            loc: 0,
            sg_epoch: 0,
            phase: 0,
            ev: 0,
        }
    }

    /// The log's sort by first byte and index gives the order of sorting the accesses, on logs
    /// with many ties in the first byte (lanes reading one address) and in later fields.
    #[test]
    fn sort_by_first_byte_keeps_the_order() {
        let mut x = 0x1357_9bdf_u64;
        let mut next = |m: u64| crate::test_rng::xorshift(&mut x) % m;
        for len in [0usize, 1, 2, 7, 33, 500, 3000] {
            let mut log: Vec<Access> = (0..len)
                .map(|_| Access {
                    start: next(24),
                    end: next(28),
                    wg: next(2),
                    inv: next(40) as u32,
                    class: [READ, WRITE, READ | ATOMIC][next(3) as usize],
                    loc: next(5) as u32,
                    sg_epoch: next(3),
                    phase: next(2) as u32,
                    ev: next(3) as u32,
                })
                .collect();
            let mut want = log.clone();
            want.sort_unstable();
            sort(&mut log);
            assert_eq!(log, want, "{len}");
        }
    }

    /// Against a plain reference: every pair of accesses.
    #[test]
    fn sweep_finds_what_pairs_find() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for _ in 0..300 {
            let n = (next() % 12) as usize + 1;
            let mut log: Vec<Access> = (0..n)
                .map(|_| {
                    let class = [READ, WRITE, READ | ATOMIC, WRITE | ATOMIC][(next() % 4) as usize];
                    a(next() % 16, next() % 4 + 1, (next() % 3) as u32, class)
                })
                .collect();
            let racy_reference = log.iter().enumerate().any(|(i, x)| {
                log.iter().skip(i + 1).any(|y| {
                    x.start < y.end && y.start < x.end && conflict(x, y, false, &unordered)
                })
            });
            let mut out = Vec::new();
            sweep(&mut log, (false, &unordered), usize::MAX, &mut out);
            assert_eq!(!out.is_empty(), racy_reference, "{log:?}");
            for r in &out {
                assert!(r.this.start < r.other.end && r.other.start < r.this.end);
                assert!(conflict(&r.this, &r.other, false, &unordered));
            }
        }
    }

    #[test]
    fn atomics_and_one_invocation_do_not_race() {
        let mut out = Vec::new();
        let mut log = vec![
            a(0, 4, 0, WRITE | ATOMIC),
            a(0, 4, 1, WRITE | ATOMIC),
            a(8, 4, 2, WRITE),
            a(8, 4, 2, READ),
            a(16, 4, 0, READ),
            a(16, 4, 1, READ),
        ];
        sweep(&mut log, (false, &unordered), 10, &mut out);
        assert!(out.is_empty(), "{out:?}");
        let mut log = vec![a(0, 4, 0, WRITE), a(2, 4, 1, READ)];
        sweep(&mut log, (false, &unordered), 10, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].this.inv, 1);
    }
}
