//! The bytes a dispatch touched, per buffer binding ([`crate::RunOptions::touched`]): what the
//! Vulkan driver needs to find hazards *between* dispatches (a dispatch reading bytes an
//! earlier one wrote with nothing ordering the two), which no check inside one dispatch sees.
//!
//! Made at one point, after the workers, from the race log of the tier that ran the
//! dispatch, where every access is resolved to a byte range of its region: the reference
//! path's runs of every workgroup's buffer accesses ([`crate::check::race::merge_runs`]: every
//! load, store and atomic), or the log of runs of the wide path or the native tier
//! ([`crate::wide::races::Gather`]; they run no atomics), which, when the record is asked for,
//! also keep the accesses their race screens leave out (loads of read-only buffers, buffers
//! each invocation touches at its own element alone). Coalesced here into sorted, disjoint
//! intervals per binding and class, relative to the binding's start.

use crate::check::race::{Access, ATOMIC, WRITE};
use crate::run::access::BufferKey;
use crate::run::memory::{split_pointer, FIRST_BUFFER};

/// The bytes one binding's accesses touched, as sorted disjoint `[start, end)` intervals
/// relative to the start of the binding's range.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Touched {
    /// The binding: `(set, binding)` and the element of a descriptor array.
    pub key: BufferKey,
    /// Bytes read by plain loads.
    pub reads: Vec<(u64, u64)>,
    /// Bytes written by plain stores.
    pub writes: Vec<(u64, u64)>,
    /// Bytes accessed by atomics (read or written: an atomic access never races with another
    /// atomic one).
    pub atomics: Vec<(u64, u64)>,
}

/// The most intervals a fast path's log may expand to ([`crate::wide::races::Gather::touched`]:
/// a strided run is one per lane); past it the record is unknown.
pub const CAP: usize = 1 << 20;

/// The bindings' touched bytes of the reference path's `runs` (pointers into the regions
/// `regions` names, in region order), bindings in region order, untouched ones left out.
pub fn from_runs<W>(runs: &[Access], regions: &[(W, BufferKey)]) -> Vec<Touched> {
    let spans = runs.iter().map(|a| {
        let class = if a.class & ATOMIC != 0 {
            Class::Atomic
        } else if a.class & WRITE != 0 {
            Class::Write
        } else {
            Class::Read
        };
        (a.start, a.end, class)
    });
    collect(spans, regions)
}

/// The bindings' touched bytes of the wide path's spans `(first pointer, end pointer, write)`.
pub fn from_spans<W>(spans: &[(u64, u64, bool)], regions: &[(W, BufferKey)]) -> Vec<Touched> {
    let spans = spans
        .iter()
        .map(|&(s, e, write)| (s, e, if write { Class::Write } else { Class::Read }));
    collect(spans, regions)
}

/// An access's class.
#[derive(Clone, Copy)]
enum Class {
    Read,
    Write,
    Atomic,
}

/// Sorts pointer ranges into their bindings' lists and coalesces them.
fn collect<W>(
    spans: impl Iterator<Item = (u64, u64, Class)>,
    regions: &[(W, BufferKey)],
) -> Vec<Touched> {
    let mut out: Vec<Touched> = regions
        .iter()
        .map(|(_, k)| Touched {
            key: *k,
            ..Touched::default()
        })
        .collect();
    for (from, to, class) in spans {
        let (region, start) = split_pointer(from);
        let end = start.saturating_add(to.saturating_sub(from));
        let Some(t) = region
            .checked_sub(FIRST_BUFFER)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| out.get_mut(i))
        else {
            continue;
        };
        let list = match class {
            Class::Atomic => &mut t.atomics,
            Class::Write => &mut t.writes,
            Class::Read => &mut t.reads,
        };
        list.push((start, end));
    }
    for t in &mut out {
        for list in [&mut t.reads, &mut t.writes, &mut t.atomics] {
            coalesce(list);
        }
    }
    out.retain(|t| !(t.reads.is_empty() && t.writes.is_empty() && t.atomics.is_empty()));
    out
}

/// Sorts intervals and merges those that overlap or touch.
pub fn coalesce(list: &mut Vec<(u64, u64)>) {
    list.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(list.len());
    for &(s, e) in list.iter() {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    *list = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::race::READ;
    use crate::run::memory::make_pointer;

    fn run(region: u64, start: u64, end: u64, class: u8) -> Access {
        Access {
            start: make_pointer(region, start),
            end: make_pointer(region, end),
            wg: 0,
            inv: 0,
            class,
            loc: 0,
            sg_epoch: 0,
            phase: 0,
            ev: 0,
        }
    }

    #[test]
    fn runs_coalesce_per_binding_and_class() {
        let keys = [
            ((), (0, 0, None)),
            ((), (0, 1, None)),
            ((), (0, 2, Some(3))),
        ];
        let runs = [
            run(FIRST_BUFFER, 8, 12, READ),
            run(FIRST_BUFFER, 0, 8, READ),
            run(FIRST_BUFFER, 16, 20, READ),
            run(FIRST_BUFFER + 2, 4, 8, WRITE),
            run(FIRST_BUFFER + 2, 0, 4, WRITE | ATOMIC),
        ];
        let t = from_runs(&runs, &keys);
        assert_eq!(t.len(), 2, "binding 1 touched nothing: {t:?}");
        assert_eq!(t[0].key, (0, 0, None));
        assert_eq!(t[0].reads, vec![(0, 12), (16, 20)]);
        assert!(t[0].writes.is_empty());
        assert_eq!(t[1].key, (0, 2, Some(3)));
        assert_eq!(t[1].writes, vec![(4, 8)]);
        assert_eq!(t[1].atomics, vec![(0, 4)]);
        // The wide path's spans: pointers and a write flag.
        let spans = [
            (
                make_pointer(FIRST_BUFFER + 1, 4),
                make_pointer(FIRST_BUFFER + 1, 8),
                true,
            ),
            (
                make_pointer(FIRST_BUFFER + 1, 0),
                make_pointer(FIRST_BUFFER + 1, 4),
                true,
            ),
        ];
        let t = from_spans(&spans, &keys);
        assert_eq!(t.len(), 1);
        assert_eq!(
            (t[0].key, t[0].writes.clone()),
            ((0, 1, None), vec![(0, 8)])
        );
    }
}
