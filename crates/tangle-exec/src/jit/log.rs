//! The native tier's race log: each memory op site's accesses as runs over consecutive
//! invocations, in the shape the wide path logs a batch's ([`crate::wide::races::Access`]), so
//! the same sweep ([`crate::wide::races::may_race`]) screens them.
//!
//! The compiled code runs one invocation after the other, so a site sees invocation `g`'s
//! access, then `g + 1`'s, ... An access that continues the site's open run (the next
//! invocation, the next scalar or the same one, the same size and direction) extends it in
//! O(1); anything else closes the run into the log and opens a new one. An invocation repeating the bytes it
//! just accessed (a loop reading one element) adds nothing: an invocation never races with
//! itself, and a write already logged covers a later read of the same bytes.

use crate::run::memory::{split_pointer, FIRST_BUFFER};
use crate::wide::races::Access;

/// The open run of every site, and the closed ones.
#[derive(Debug, Default)]
pub(crate) struct LogState {
    open: Vec<Option<Access>>,
    /// Closed runs, for the sweep.
    pub(crate) log: Vec<Access>,
    /// Whole tiles' stores ([`crate::wide::rows`]), for the screen.
    pub(crate) rows: Vec<crate::wide::rows::Rows>,
}

impl LogState {
    /// A state for `sites` memory op sites.
    pub(crate) fn new(sites: usize) -> LogState {
        LogState {
            open: vec![None; sites],
            log: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Invocation `g`'s access of `len` bytes at `ptr` from site `site`.
    pub(crate) fn access(&mut self, site: u64, g: u64, ptr: u64, len: u64, write: bool) {
        // Only buffers are shared between invocations (push constants are read-only).
        if split_pointer(ptr).0 < FIRST_BUFFER {
            return;
        }
        let Some(open) = usize::try_from(site)
            .ok()
            .and_then(|s| self.open.get_mut(s))
        else {
            return;
        };
        if let Some(a) = open {
            if extend(a, g, ptr, len, write) {
                return;
            }
            self.log.push(*a);
        }
        *open = Some(Access {
            ptr,
            len,
            step: len,
            count: 1,
            first: g,
            write,
        });
    }

    /// `count` invocations' accesses from site `site`: invocation `g + k` accesses `len` bytes
    /// at `ptr + k * len` — what `count` calls of [`LogState::access`] log, in O(1) once the
    /// first two have set the run's stride.
    pub(crate) fn access_run(
        &mut self,
        site: u64,
        g: u64,
        ptr: u64,
        len: u64,
        write: bool,
        count: u64,
    ) {
        let at = |k: u64| ptr.wrapping_add(k.wrapping_mul(len));
        // The common case first: the open run already has this stride and ends just before.
        if count > 0 && len > 0 {
            let end = at(count - 1);
            let same_region = split_pointer(end).0 == split_pointer(ptr).0;
            let open = usize::try_from(site)
                .ok()
                .and_then(|s| self.open.get_mut(s))
                .and_then(Option::as_mut);
            // The same invocations accessing the bytes the open run already says they did
            // (a loop storing to each invocation's own word): nothing new. An invocation
            // never races with itself, and a write logged covers a later read.
            if let Some(a) = open.as_deref() {
                let inside = g >= a.first
                    && g.checked_add(count)
                        .is_some_and(|e| e <= a.first.saturating_add(a.count));
                let stride = count == 1 || a.step == len;
                let from = a
                    .ptr
                    .wrapping_add(g.wrapping_sub(a.first).wrapping_mul(a.step));
                if inside && stride && a.len == len && from == ptr && (a.write || !write) {
                    return;
                }
            }
            if let Some(a) =
                open.filter(|a| a.count >= 2 && a.len == len && a.step == len && a.write == write)
            {
                let last = a.first.saturating_add(a.count - 1);
                let next = a.ptr.wrapping_add(a.step.wrapping_mul(a.count));
                if last.checked_add(1) == Some(g) && next == ptr && end > ptr && same_region {
                    a.count += count;
                    return;
                }
            }
        }
        let mut k = 0;
        while k < count.min(2) {
            self.access(site, g + k, at(k), len, write);
            k += 1;
        }
        if count > 2 && split_pointer(ptr).0 >= FIRST_BUFFER {
            let open = usize::try_from(site)
                .ok()
                .and_then(|s| self.open.get_mut(s))
                .and_then(Option::as_mut);
            if let Some(a) = open {
                let last = a.first.saturating_add(a.count - 1);
                let last_ptr = a.ptr.wrapping_add(a.step.wrapping_mul(a.count - 1));
                if last == g + 1 && a.step == len && last_ptr == at(1) && a.write == write {
                    // The rest continue the run (invocation and address one step on each),
                    // inside the same region.
                    let end = at(count - 1);
                    if end > ptr && split_pointer(end).0 == split_pointer(ptr).0 {
                        a.count += count - 2;
                        return;
                    }
                }
            }
        }
        while k < count {
            self.access(site, g + k, at(k), len, write);
            k += 1;
        }
    }

    /// Closes every open run into the log (at the end of a call: the next call's invocations
    /// need not follow on).
    pub(crate) fn close(&mut self) {
        for a in self.open.iter_mut().filter_map(Option::take) {
            self.log.push(a);
        }
    }
}

/// Whether the access continues run `a` (then `a` now covers it).
fn extend(a: &mut Access, g: u64, ptr: u64, len: u64, write: bool) -> bool {
    // The common case first, in a few compares: the next invocation's access of the next
    // scalar of a run of at least two (`y[i]` in a loop over `i`), in the run's region. It
    // is the last branch below taken early: `g` is `last + 1`, the size and direction agree,
    // and `ptr` is `a.ptr + step * count`, so not below `a.ptr`.
    if a.count > 1
        && Some(g) == a.first.checked_add(a.count)
        && write == a.write
        && len == a.len
        && Some(ptr)
            == a.step
                .checked_mul(a.count)
                .and_then(|d| a.ptr.checked_add(d))
        && split_pointer(ptr).0 == split_pointer(a.ptr).0
    {
        a.count += 1;
        return true;
    }
    if len != a.len || split_pointer(ptr).0 != split_pointer(a.ptr).0 {
        return false;
    }
    let last = a.first.saturating_add(a.count - 1);
    let last_ptr = a
        .ptr
        .saturating_add(a.step.saturating_mul(a.count.saturating_sub(1)));
    if g == last && ptr == last_ptr && (write == a.write || !write) {
        return true;
    }
    if g != last.saturating_add(1) || write != a.write || ptr < a.ptr {
        return false;
    }
    if a.count == 1 {
        // The second invocation sets the stride: one address for all, or the next scalar.
        // Only these two: the sweep compares runs of different strides conservatively, and a
        // stride two invocations happen to make (the last access of one, the first of the
        // next) would cover every byte between.
        let step = ptr - a.ptr;
        if step != 0 && step != len {
            return false;
        }
        a.step = step;
        a.count = 2;
        return true;
    }
    let next = a
        .step
        .checked_mul(a.count)
        .and_then(|d| a.ptr.checked_add(d));
    if next == Some(ptr) {
        a.count += 1;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::memory::buffer_address;

    /// Runs merge over consecutive invocations at one stride, and the sweep sees what a byte
    /// map sees: a race exactly where two invocations touch one byte, one of them writing.
    #[test]
    fn runs_screen_as_bytes_do() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..300 {
            let mut state = LogState::new(2);
            let mut bytes: std::collections::HashMap<u64, Vec<(u64, bool)>> = Default::default();
            let mut race = false;
            let stride = [0u64, 4, 8, 2][(x % 4) as usize];
            let offset = (x >> 8) % 12;
            let writes = [(x >> 16) & 1 == 0, (x >> 17) & 1 == 0];
            for g in 0..6u64 {
                for site in 0..2u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly strided, sometimes an odd address.
                    let off = if x.is_multiple_of(5) {
                        x % 32
                    } else {
                        offset + site * 4 + g * stride
                    };
                    let write = writes[site as usize];
                    state.access(site, g, buffer_address(0) + off, 4, write);
                    for b in off..off + 4 {
                        let seen = bytes.entry(b).or_default();
                        race |= seen.iter().any(|&(h, w)| h != g && (w || write));
                        seen.push((g, write));
                    }
                }
            }
            state.close();
            let found = crate::wide::races::may_race(&mut state.log);
            // The screen may over-report, never miss.
            assert!(found || !race, "a missed race: {:?}", state.log);
        }
    }

    /// A group's run logs what one access per invocation logs, whatever came before it.
    #[test]
    fn a_group_run_logs_as_its_accesses_do() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..500 {
            let (mut runs, mut single) = (LogState::new(1), LogState::new(1));
            let mut g = next() % 4;
            for _ in 0..4 {
                let len = [4u64, 8][(next() % 2) as usize];
                let count = 1 + next() % 9;
                let base = buffer_address((next() % 2) as usize) + (next() % 5) * 4;
                let write = next() % 3 == 0;
                // Sometimes the next group does not start where the last one ended.
                g += next() % 2;
                runs.access_run(0, g, base, len, write, count);
                for k in 0..count {
                    single.access(0, g + k, base + k * len, len, write);
                }
                g += count;
            }
            runs.close();
            single.close();
            assert_eq!(runs.log, single.log);
        }
    }

    /// A group repeating what the open run says it accessed adds nothing, and the screen
    /// still sees every race a byte map sees.
    #[test]
    fn groups_repeating_their_bytes_add_nothing_and_races_are_still_seen() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // A loop of 8 iterations writing each invocation's own word, 4 groups of 16: one run.
        let mut state = LogState::new(1);
        for group in 0..4u64 {
            for _ in 0..8 {
                let base = buffer_address(0) + group * 64;
                state.access_run(0, group * 16, base, 4, true, 16);
            }
        }
        state.close();
        assert_eq!(state.log.len(), 1, "{:?}", state.log);
        for _ in 0..300 {
            let mut state = LogState::new(2);
            let mut bytes: std::collections::HashMap<u64, Vec<(u64, bool)>> = Default::default();
            let mut race = false;
            for group in 0..4u64 {
                for _ in 0..3 {
                    for site in 0..2u64 {
                        let write = next() % 2 == 0;
                        // Mostly each invocation's own word, sometimes a shifted one.
                        let shift = if next() % 6 == 0 { next() % 3 } else { 0 };
                        let g = group * 4;
                        let base = buffer_address(0) + (g + shift) * 4;
                        state.access_run(site, g, base, 4, write, 4);
                        for k in 0..4 {
                            for b in 0..4 {
                                let at = (g + shift + k) * 4 + b;
                                let seen = bytes.entry(at).or_default();
                                race |= seen.iter().any(|&(h, w)| h != g + k && (w || write));
                                seen.push((g + k, write));
                            }
                        }
                    }
                }
            }
            state.close();
            let found = crate::wide::races::may_race(&mut state.log);
            assert!(found || !race, "a missed race: {:?}", state.log);
        }
    }
}
