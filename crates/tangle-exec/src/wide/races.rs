//! The wide path's race screen: a log of buffer accesses as runs, and a sweep that says whether
//! any two of them *might* race.
//!
//! The wide path runs only programs without atomics or barriers ([`super::plan`]), so nothing
//! orders accesses of different invocations: any two that touch the same byte, one of them a
//! write, are a data race (issue 15's rule, as [`crate::check::race`] applies it). The screen
//! must never miss one; it may over-report, since a conflict only sends the dispatch back to the
//! reference path, which then reports the race exactly (or finds none). So each access is
//! logged in the shape the batch made it — a run of consecutive scalars, one address for every
//! lane, or one lane's scalar — rather than byte by byte, and the sweep compares shapes.

use crate::run::access::BufferKey;
use crate::run::memory::View;
use rayon::slice::ParallelSliceMut;

/// One logged access by the lanes of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    /// The pointer (region and offset) of the first lane's bytes.
    pub ptr: u64,
    /// Bytes each lane accesses.
    pub len: u64,
    /// Bytes between consecutive lanes' accesses: `len` for a run, 0 when every lane
    /// accesses the same bytes, more for a strided run (`a[i * 16 + k]`).
    pub step: u64,
    /// Lanes in the access.
    pub count: u64,
    /// The global invocation index of the first lane; lane `l` is invocation `first + l`.
    pub first: u64,
    /// Whether it writes.
    pub write: bool,
}

impl Access {
    /// The end of the bytes it covers (exclusive).
    pub(crate) fn end(&self) -> u64 {
        self.ptr
            .saturating_add(self.step.saturating_mul(self.count.saturating_sub(1)))
            .saturating_add(self.len)
    }

    /// Whether `next`, one lane's run, is the lane after `self`'s last one, with the same
    /// shape, right after its bytes: `self` with one more lane.
    pub(crate) fn extends_to(&self, next: &Access) -> bool {
        next.count == 1
            && self.write == next.write
            && self.len == next.len
            && self.step == self.len
            && next.step == next.len
            && self.first.checked_add(self.count) == Some(next.first)
            && self.ptr.checked_add(self.step.saturating_mul(self.count)) == Some(next.ptr)
    }

    /// Whether the lanes of one access race with each other: several lanes writing the same
    /// bytes.
    fn races_itself(&self) -> bool {
        self.write && self.count > 1 && self.step < self.len
    }

    /// Whether `self` and `o` (which overlap) might race: exact for two runs of one scalar size
    /// and one stride, where each address belongs to one invocation in each, and conservative
    /// otherwise.
    fn may_race(&self, o: &Access) -> bool {
        if !(self.write || o.write) {
            return false;
        }
        let one_invocation = |a: &Access| a.count == 1;
        if one_invocation(self) && one_invocation(o) {
            return self.first != o.first;
        }
        // A single lane has any stride; give it the other's.
        let step = |a: &Access, b: &Access| if a.count == 1 { b.step } else { a.step };
        let (s1, s2) = (step(self, o), step(o, self));
        if s1 == s2 && s1 >= self.len && self.len == o.len {
            // On lattices shifted by `d` bytes the scalars share no byte at all.
            let d = (o.ptr % s1 + s1 - self.ptr % s1) % s1;
            if d >= self.len && s1 - d >= self.len {
                return false;
            }
            // Address `p` is invocation `first + (p - ptr) / step` in each; they agree on every
            // shared address when both map the same address to the same invocation, which is
            // when `ptr - first * step` is equal (the lanes' scalars then lie on one lattice).
            let origin = |a: &Access| a.ptr.wrapping_sub(a.first.wrapping_mul(s1));
            return origin(self) != origin(o);
        }
        true
    }
}

/// Whether an access at `ptr` (a buffer's) needs its place in the race log: a write, or a
/// read of a region the program may write (`writable`, by the region's place among the
/// buffers, [`crate::run::Shared::writable`]).
///
/// # Spec
/// SPIR-V "Memory Model": a data race is two conflicting accesses, and "two memory accesses
/// conflict if ... at least one of which is a write"; a load of memory no invocation writes
/// conflicts with nothing.
pub(crate) fn logged(writable: &[bool], ptr: u64, write: bool) -> bool {
    let (region, _) = crate::run::memory::split_pointer(ptr);
    let Some(i) = region.checked_sub(crate::run::memory::FIRST_BUFFER) else {
        return false;
    };
    // A region the table does not know is taken as written (never a race missed).
    write || usize::try_from(i).map_or(true, |i| writable.get(i).copied().unwrap_or(true))
}

/// Whether some two accesses of `log` might race (see the module doc); sorts `log`.
pub fn may_race(log: &mut Vec<Access>) -> bool {
    leave_out_unwritten(std::slice::from_mut(log));
    // The sort is the one serial step after the workers: on every core.
    log.par_sort_unstable();
    sorted_may_race(log)
}

/// Logs one lane's run `a`: where it is the next invocation's run right after the last
/// entry's, with the same shape (the two halves of a row of a matrix under the row-striped
/// layout), that entry takes one more lane. The same accesses in fewer entries, which the
/// screen sorts.
pub(crate) fn push_run(log: &mut Vec<Access>, a: Access) {
    match log.last_mut() {
        Some(last) if last.extends_to(&a) => last.count += 1,
        _ => log.push(a),
    }
}

/// Only regions written at all can race: the others' reads are dropped first (a read-only
/// matrix read by every batch would keep thousands of long runs open in the sweep, and its
/// entries are most of the log to sort). Over every part of a log at once.
fn leave_out_unwritten(parts: &mut [Vec<Access>]) {
    use rayon::prelude::*;
    // A run of one region's entries gives it once (a sorted part gives each region once).
    let mut written: Vec<u64> = parts
        .par_iter()
        .flat_map_iter(|p| {
            let mut regions: Vec<u64> = p
                .iter()
                .filter(|a| a.write)
                .map(|a| region(a.ptr))
                .collect();
            regions.dedup();
            regions
        })
        .collect();
    written.sort_unstable();
    written.dedup();
    parts
        .par_iter_mut()
        .for_each(|log| log.retain(|a| written.binary_search(&region(a.ptr)).is_ok()));
}

/// Entries below which a sorted log is screened on one core.
const PARALLEL_SCREEN: usize = 1 << 15;

/// Entries below which a dispatch's log is screened on the calling thread, without waking the
/// worker pool (which costs more than sorting them there).
pub(crate) const POOLED_SCREEN: usize = 1 << 12;

/// [`may_race`] of a log already sorted; on every core when it is long
/// ([`screen_parts`]).
fn sorted_may_race(log: &mut Vec<Access>) -> bool {
    if log.len() >= PARALLEL_SCREEN && rayon::current_num_threads() > 1 {
        return screen_parts(std::slice::from_ref(log), rayon::current_num_threads() * 4);
    }
    log.dedup();
    merge_shared_reads(log);
    if log.iter().any(Access::races_itself) {
        return true;
    }
    sweep(Vec::new(), Vec::new(), log)
}

/// Whether some two accesses of `parts` (each sorted) might race, screened in about `pieces`
/// pieces: the address space cut at pointers sampled from the parts, each piece's entries
/// taken from every part (a binary search a cut), sorted, folded (`dedup`,
/// [`merge_shared_reads`]) and swept on their own core ([`screen_pieces`]). All entries of one
/// pointer fall in one piece, so the folding stays exact; the answer is the one sweep's over
/// all the entries.
fn screen_parts(parts: &[Vec<Access>], pieces: usize) -> bool {
    use rayon::prelude::*;
    let total: usize = parts.iter().map(Vec::len).sum();
    // Cuts: evenly spaced pointers of every part, their quantiles.
    let mut samples: Vec<u64> = parts
        .iter()
        .flat_map(|p| {
            let k = (p.len() * pieces).div_ceil(total.max(1)).max(1);
            (0..k).filter_map(move |i| p.get(i * p.len() / k).map(|a| a.ptr))
        })
        .collect();
    samples.sort_unstable();
    let mut cuts: Vec<u64> = (1..pieces)
        .filter_map(|i| samples.get(i * samples.len() / pieces).copied())
        .collect();
    cuts.dedup();
    let bounds: Vec<(u64, u64)> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .zip(cuts.iter().copied().chain(std::iter::once(u64::MAX)))
        .collect();
    let folded: Vec<Vec<Access>> = bounds
        .par_iter()
        .enumerate()
        .map(|(k, &(lo, hi))| {
            let last = k + 1 == bounds.len();
            let runs: Vec<&[Access]> = parts
                .iter()
                .map(|p| {
                    let from = p.partition_point(|a| a.ptr < lo);
                    let to = if last {
                        p.len()
                    } else {
                        p.partition_point(|a| a.ptr < hi)
                    };
                    p.get(from..to).unwrap_or(&[])
                })
                .collect();
            let mut piece: Vec<Access> = Vec::with_capacity(runs.iter().map(|r| r.len()).sum());
            for r in runs {
                piece.extend_from_slice(r);
            }
            // The piece is a run from each sorted part: a stable sort merges them.
            piece.sort();
            piece.dedup();
            merge_shared_reads(&mut piece);
            piece
        })
        .collect();
    screen_pieces(&folded)
}

/// Whether some two accesses of the folded pieces of a sorted log (in order) might race, each
/// piece swept on its own core, starting with the accesses of the pieces before it still open
/// at its first address (those whose end passes it: no access starting more than the longest
/// access's span before it can be), which is what one sweep over the whole log has open there.
fn screen_pieces(folded: &[Vec<Access>]) -> bool {
    use rayon::prelude::*;
    if folded
        .par_iter()
        .any(|p| p.iter().any(Access::races_itself))
    {
        return true;
    }
    let span = folded
        .par_iter()
        .flat_map_iter(|p| p.iter().map(|a| a.end() - a.ptr))
        .max()
        .unwrap_or(0);
    (0..folded.len()).into_par_iter().any(|k| {
        let Some(start) = folded[k].first().map(|a| a.ptr) else {
            return false;
        };
        let (mut open_reads, mut open_writes) = (Vec::new(), Vec::new());
        'back: for piece in folded[..k].iter().rev() {
            for o in piece.iter().rev() {
                if o.ptr.saturating_add(span) <= start {
                    break 'back;
                }
                if o.end() > start {
                    if o.write {
                        open_writes.push(*o);
                    } else {
                        open_reads.push(*o);
                    }
                }
            }
        }
        sweep(open_reads, open_writes, &folded[k])
    })
}

/// Whether an access of `log` (sorted, folded) might race with one before it or with one of
/// the open accesses it starts with. A sweep by start address: the accesses still open at
/// each start are those that may overlap it. Reads are compared with open writes only, and
/// writes with everything.
fn sweep(mut open_reads: Vec<Access>, mut open_writes: Vec<Access>, log: &[Access]) -> bool {
    for a in log.iter() {
        open_reads.retain(|o| o.end() > a.ptr);
        open_writes.retain(|o| o.end() > a.ptr);
        if open_writes.iter().any(|o| o.may_race(a)) {
            return true;
        }
        if a.write {
            if open_reads.iter().any(|o| o.may_race(a)) {
                return true;
            }
            open_writes.push(*a);
        } else {
            open_reads.push(*a);
        }
    }
    false
}

/// A dispatch's race log as its workers hand it in: each worker sorts its own entries in its
/// own thread when it ends ([`Gather::hand_in`]), so that the screen after the dispatch only
/// merges a few sorted parts ([`Gather::may_race`]) where it sorted the whole log.
/// The answer is [`may_race`]'s of all the entries together, whatever the threads.
#[derive(Debug, Default)]
pub(crate) struct Gather {
    /// Entries counted so far, against the log's bound.
    entries: std::sync::atomic::AtomicUsize,
    /// Each worker's entries, sorted.
    parts: std::sync::Mutex<Vec<Vec<Access>>>,
    /// The workers' entries of whole tiles ([`super::rows`]), in any order.
    rows: std::sync::Mutex<Vec<super::rows::Rows>>,
}

impl Gather {
    /// Counts `n` more entries of a worker: `false` when the log then passes `limit` entries
    /// (the screen's memory bound: the fast path gives the dispatch up).
    pub(crate) fn count(&self, n: usize, limit: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let before = self.entries.fetch_add(n, Relaxed);
        before.saturating_add(n) <= limit
    }

    /// A worker's entries, sorted here, in its thread.
    pub(crate) fn hand_in(&self, mut log: Vec<Access>) {
        if log.is_empty() {
            return;
        }
        // A stable sort merges the runs already in order (each op's entries come sorted):
        // equal entries are identical, so it orders as an unstable one would, in fewer moves.
        log.sort();
        log.dedup();
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        parts.push(log);
    }

    /// A worker's entries of whole tiles.
    pub(crate) fn hand_in_rows(&self, mut rows: Vec<super::rows::Rows>) {
        if rows.is_empty() {
            return;
        }
        let mut all = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        all.append(&mut rows);
    }

    /// The byte ranges every entry handed in covers, as `(first pointer, end pointer, write)`
    /// ([`crate::check::touched`]); `None` past `cap` ranges (a strided run is one range per
    /// lane), the record then unknown.
    pub(crate) fn touched(&self, cap: usize) -> Option<Vec<(u64, u64, bool)>> {
        let parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        let push = |a: &Access, out: &mut Vec<(u64, u64, bool)>| {
            if a.step <= a.len || a.count <= 1 {
                out.push((a.ptr, a.end(), a.write));
            } else {
                let lanes = usize::try_from(a.count).unwrap_or(usize::MAX);
                if lanes > cap.saturating_sub(out.len()) {
                    return false;
                }
                out.extend((0..a.count).map(|l| {
                    let at = a.ptr.saturating_add(l.saturating_mul(a.step));
                    (at, at.saturating_add(a.len), a.write)
                }));
            }
            out.len() <= cap
        };
        for a in parts.iter().flatten() {
            if !push(a, &mut out) {
                return None;
            }
        }
        for r in rows.iter() {
            for k in 0..r.rows {
                if !push(&r.at(k), &mut out) {
                    return None;
                }
            }
        }
        Some(out)
    }

    /// Keys every entry handed in by `key` (a pointer to the one the race check keys its bytes
    /// by, [`crate::run::access::race_key`]): regions sharing bytes then log the same bytes at
    /// the same pointers, so the screen sees two views' accesses of one byte meet, and
    /// disjoint accesses through overlapping views stay apart. The key moves a region's
    /// pointers by one distance, so a run stays a run and a tile's rows a pitch apart; each
    /// part is sorted again.
    pub(crate) fn rekey(&mut self, key: impl Fn(u64) -> u64) {
        let parts = self.parts.get_mut().unwrap_or_else(|e| e.into_inner());
        for part in parts.iter_mut() {
            for a in part.iter_mut() {
                a.ptr = key(a.ptr);
            }
            part.sort();
            part.dedup();
        }
        let rows = self.rows.get_mut().unwrap_or_else(|e| e.into_inner());
        for r in rows.iter_mut() {
            r.row.ptr = key(r.row.ptr);
        }
    }

    /// [`Gather::may_race`] with the bytes keyed as the race check keys them
    /// ([`Gather::rekey`]) where regions of the dispatch (`buffers`) share bytes.
    pub(crate) fn may_race_over(mut self, buffers: &[(View, BufferKey)]) -> bool {
        if buffers.iter().any(|(v, _)| v.alias.is_some()) {
            self.rekey(|p| crate::run::access::race_key(buffers, p));
        }
        self.may_race()
    }

    /// [`may_race`] of every entry handed in.
    pub(crate) fn may_race(self) -> bool {
        let n = self.entries.load(std::sync::atomic::Ordering::Relaxed);
        if n < POOLED_SCREEN {
            return self.may_race_in(1);
        }
        crate::run::workers::install(|| {
            let pieces = if n >= PARALLEL_SCREEN {
                rayon::current_num_threads() * 4
            } else {
                1
            };
            self.may_race_in(pieces)
        })
    }

    /// [`Gather::may_race`] in about `pieces` pieces ([`screen_parts`] of the workers'
    /// sorted parts: no merge of the whole log, the one serial step that was left after the
    /// workers); one piece merges them and sweeps once.
    fn may_race_in(self, pieces: usize) -> bool {
        let mut parts = self.parts.into_inner().unwrap_or_else(|e| e.into_inner());
        let rows = self.rows.into_inner().unwrap_or_else(|e| e.into_inner());
        if !rows.is_empty() && super::rows::screen(rows, &mut parts) {
            return true;
        }
        leave_out_unwritten(&mut parts);
        let total: usize = parts.iter().map(Vec::len).sum();
        if pieces <= 1 || total == 0 {
            // The parts in one: rayon's stable sort finds the sorted runs in its chunks and
            // merges them, and equal entries are identical, so the order is a full sort's.
            let mut log: Vec<Access> = parts.concat();
            log.par_sort();
            return sorted_may_race(&mut log);
        }
        screen_parts(&parts, pieces)
    }
}

/// The memory region of a pointer ([`crate::run::memory::split_pointer`]).
pub(crate) fn region(ptr: u64) -> u64 {
    crate::run::memory::split_pointer(ptr).0
}

/// Merges the reads of one scalar by several invocations (a uniform read in every batch) into
/// one read by "several invocations" (every lane the same bytes, two lanes, no first), which any
/// overlapping write races with: without it the sweep keeps one open read per batch, and is
/// quadratic in the batches.
fn merge_shared_reads(log: &mut Vec<Access>) {
    let shared = |a: &Access| !a.write && (a.step == 0 || a.count == 1);
    log.dedup_by(|later, kept| {
        let same = shared(later) && shared(kept) && later.ptr == kept.ptr && later.len == kept.len;
        if same {
            *kept = Access {
                step: 0,
                count: 2,
                first: u64::MAX,
                ..*kept
            };
        }
        same
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::xorshift;

    fn run(ptr: u64, count: u64, first: u64, write: bool) -> Access {
        Access {
            ptr,
            len: 4,
            step: 4,
            count,
            first,
            write,
        }
    }

    #[test]
    fn each_invocation_reading_and_writing_its_own_element_is_no_race() {
        // y[i] = a * x[i] + y[i], two batches of 128.
        let mut log = vec![
            run(0, 128, 0, false),
            run(0, 128, 0, true),
            run(512, 128, 128, false),
            run(512, 128, 128, true),
        ];
        assert!(!may_race(&mut log));
    }

    #[test]
    fn a_neighbour_s_element_is_a_race() {
        // Invocation i writes element i + 1 while invocation i + 1 reads its own element.
        let mut log = vec![run(4, 128, 0, true), run(4, 128, 1, false)];
        assert!(may_race(&mut log));
    }

    #[test]
    fn every_lane_writing_one_address_is_a_race_and_reading_it_is_not() {
        let same = |write| Access {
            ptr: 64,
            len: 4,
            step: 0,
            count: 8,
            first: 0,
            write,
        };
        assert!(may_race(&mut vec![same(true)]));
        assert!(!may_race(&mut vec![same(false), same(false)]));
    }

    #[test]
    fn single_lanes_race_only_between_invocations() {
        let one = |first, write| Access {
            ptr: 8,
            len: 4,
            step: 4,
            count: 1,
            first,
            write,
        };
        assert!(!may_race(&mut vec![one(3, true), one(3, false)]));
        assert!(may_race(&mut vec![one(3, true), one(4, false)]));
        assert!(!may_race(&mut vec![one(3, false), one(4, false)]));
    }

    #[test]
    fn strided_runs_race_only_when_their_invocations_differ() {
        let strided = |ptr, first, write| Access {
            ptr,
            len: 4,
            step: 64,
            count: 8,
            first,
            write,
        };
        // Row i of a 16-wide matrix, column 0, read then written by invocation i.
        assert!(!may_race(&mut vec![
            strided(0, 0, false),
            strided(0, 0, true)
        ]));
        // Invocation i writing row i + 1's element while invocation i + 1 reads it.
        assert!(may_race(&mut vec![
            strided(64, 0, true),
            strided(64, 1, false)
        ]));
        // Columns 0 and 1: interleaved but never the same bytes.
        assert!(!may_race(&mut vec![
            strided(0, 0, true),
            strided(4, 0, true)
        ]));
    }

    #[test]
    fn read_only_regions_are_left_out() {
        let region = |r: u64| r << 48;
        let mut log: Vec<Access> = (0..1000)
            .map(|i| Access {
                ptr: region(5) + i * 4,
                len: 4,
                step: 4096,
                count: 128,
                first: i,
                write: false,
            })
            .collect();
        log.push(run(region(6), 128, 0, true));
        assert!(!may_race(&mut log));
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn a_span_read_by_several_invocations_races_with_any_write_inside_it() {
        // A cooperative-matrix load logged as its span (`Batch::coopmat`).
        let span = Access {
            ptr: 64,
            len: 256,
            step: 0,
            count: 2,
            first: u64::MAX,
            write: false,
        };
        let one = |ptr, first| Access {
            ptr,
            len: 4,
            step: 4,
            count: 1,
            first,
            write: true,
        };
        assert!(may_race(&mut vec![span, one(128, 0)]));
        assert!(may_race(&mut vec![span, run(256, 16, 3, true)]));
        assert!(!may_race(&mut vec![span, one(320, 0)]));
        assert!(!may_race(&mut vec![span, one(60, 0)]));
    }

    #[test]
    fn disjoint_ranges_never_race() {
        let mut log = vec![
            run(0, 16, 0, true),
            run(64, 16, 0, true),
            run(128, 16, 7, true),
        ];
        assert!(!may_race(&mut log));
    }

    /// Entries handed in by several workers (each part sorted in its thread) screen as the
    /// whole log does, on random logs of runs, single lanes and shared reads in a few regions.
    #[test]
    fn a_gathered_log_screens_as_the_whole_log() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut raced, mut clean) = (0, 0);
        for _ in 0..2000 {
            let n = 1 + xorshift(&mut x) % 24;
            let all: Vec<Access> = (0..n)
                .map(|_| Access {
                    ptr: ((5 + xorshift(&mut x) % 2) << 48) | ((xorshift(&mut x) % 64) * 4),
                    len: [4, 8][(xorshift(&mut x) % 2) as usize],
                    step: [0, 4, 8, 64][(xorshift(&mut x) % 4) as usize],
                    count: 1 + xorshift(&mut x) % 4,
                    first: xorshift(&mut x) % 16,
                    write: xorshift(&mut x).is_multiple_of(4),
                })
                .collect();
            let mut sizes = Vec::new();
            let mut left = all.len();
            while left > 0 {
                let k = (1 + xorshift(&mut x) % 5).min(left as u64) as usize;
                sizes.push(k);
                left -= k;
            }
            let gathered = || {
                let gather = Gather::default();
                let mut rest = &all[..];
                for &k in &sizes {
                    assert!(gather.count(k, usize::MAX));
                    gather.hand_in(rest[..k].to_vec());
                    rest = &rest[k..];
                }
                gather
            };
            let want = may_race(&mut all.clone());
            assert_eq!(gathered().may_race(), want, "{all:?}");
            // In pieces cut at sampled pointers, as a long log is screened.
            for pieces in [2, 3, 5, 9] {
                assert_eq!(gathered().may_race_in(pieces), want, "{pieces}: {all:?}");
            }
            if want {
                raced += 1;
            } else {
                clean += 1;
            }
        }
        // Both answers were seen.
        assert!(raced > 100 && clean > 100, "{raced} {clean}");
        // The bound: past `limit` entries, `count` says so.
        let g = Gather::default();
        assert!(g.count(3, 4));
        assert!(!g.count(2, 4));
    }

    /// Lanes' runs logged through [`push_run`] (consecutive invocations' adjacent runs in one
    /// entry) screen as the same runs logged one by one, and both as a byte-by-byte
    /// reference: every pair of invocations touching one byte, one of them writing, is a race.
    #[test]
    fn runs_joined_by_push_run_screen_as_the_bytes_they_touch() {
        let mut x = 0x853c_49e6_748f_ea9bu64;
        let (mut raced, mut clean, mut joined, mut over) = (0, 0, 0, 0);
        for _ in 0..3000 {
            // One run length per log: the sweep is exact for runs of one shape.
            let len = [4, 8, 32][(xorshift(&mut x) % 3) as usize];
            let mut single = Vec::new();
            let mut log = Vec::new();
            // Stores of several lanes each, lane after lane, often adjacent (as a matrix row's
            // halves are), sometimes not, sometimes of another region.
            for _ in 0..1 + xorshift(&mut x) % 6 {
                let mut first = xorshift(&mut x) % 12;
                let mut ptr = ((5 + xorshift(&mut x) % 2) << 48) | ((xorshift(&mut x) % 24) * 4);
                let write = !xorshift(&mut x).is_multiple_of(3);
                for _ in 0..1 + xorshift(&mut x) % 4 {
                    let a = Access {
                        ptr,
                        len,
                        step: len,
                        count: 1,
                        first,
                        write,
                    };
                    single.push(a);
                    push_run(&mut log, a);
                    // Mostly the next invocation's run right after this one's.
                    first += [1, 1, 1, 2, 0][(xorshift(&mut x) % 5) as usize];
                    ptr += [len, len, len, 4, len * 2][(xorshift(&mut x) % 5) as usize];
                }
            }
            joined += single.len() - log.len();
            let mut touched: Vec<(u64, u64, bool)> = Vec::new();
            for a in &single {
                touched.extend((a.ptr..a.ptr + a.len).map(|b| (b, a.first, a.write)));
            }
            let want = touched.iter().any(|&(b, i, w)| {
                touched
                    .iter()
                    .any(|&(c, j, v)| b == c && i != j && (w || v))
            });
            // Single lanes are screened exactly; a joined entry never hides a race, and
            // over-reports (the screen may: the reference path then decides) only where
            // runs of other invocations overlap it off its lattice.
            assert_eq!(may_race(&mut single.clone()), want, "{single:?}");
            let got = may_race(&mut log.clone());
            assert!(got || !want, "{log:?}");
            if want {
                raced += 1;
            } else {
                clean += 1;
                over += usize::from(got);
            }
        }
        assert!(
            raced > 300 && clean > 300 && joined > 1000,
            "{raced} {clean} {joined}"
        );
        assert!(over * 10 < clean, "{over} of {clean}");
    }

    /// The log cut into pieces screened on their own cores answers as the one sweep does,
    /// whatever the number of pieces: random sorted logs with duplicates, shared reads to
    /// fold, strided runs and long accesses that stay open across cuts.
    #[test]
    fn pieces_screen_as_the_one_sweep() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut raced, mut clean) = (0, 0);
        for _ in 0..3000 {
            let n = 1 + xorshift(&mut x) % 60;
            let spread = [64, 256, 4096][(xorshift(&mut x) % 3) as usize];
            let mut log: Vec<Access> = (0..n)
                .map(|_| {
                    let count = [1, 1, 2, 4, 16][(xorshift(&mut x) % 5) as usize];
                    let len = [4, 8][(xorshift(&mut x) % 2) as usize];
                    Access {
                        ptr: (5 << 48) | ((xorshift(&mut x) % spread) * 4),
                        len,
                        step: [0, len, 16, 64][(xorshift(&mut x) % 4) as usize],
                        count,
                        first: if count == 1 {
                            xorshift(&mut x) % 8
                        } else {
                            (xorshift(&mut x) % 4) * count
                        },
                        write: xorshift(&mut x).is_multiple_of(5),
                    }
                })
                .collect();
            // Duplicates and shared reads of one scalar by several invocations.
            for k in 0..log.len() / 4 {
                let a = log[k];
                log.push(a);
                log.push(Access {
                    first: a.first + 1,
                    count: 1,
                    write: false,
                    ..a
                });
            }
            log.sort_unstable();
            let want = sorted_may_race(&mut log.clone());
            for pieces in 1..=9 {
                assert_eq!(
                    screen_parts(std::slice::from_ref(&log), pieces),
                    want,
                    "{pieces} pieces: {log:?}"
                );
            }
            if want {
                raced += 1;
            } else {
                clean += 1;
            }
        }
        assert!(raced > 300 && clean > 300, "{raced} {clean}");
    }
}
