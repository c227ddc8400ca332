//! One summary per cause: findings grouped by (instruction, kind) with their exact count, the
//! ranges of invocations and workgroups involved and the first few findings, so that one bug
//! in a 64-wide workgroup is one diagnostic, not 64.
//!
//! Workgroups run in parallel, so every summary is built from order-independent parts: counts
//! add up, ranges are component-wise minima and maxima, and the examples kept are the smallest
//! by (workgroup number, order found in it), whatever thread ran which workgroup first.

use super::kind::Kind;
use crate::report::Diagnostic;
use std::collections::HashMap;

/// How many findings a summary keeps as examples.
pub const EXAMPLES: usize = 4;

/// The sort key of a finding: (workgroup number, order found in that workgroup).
pub type Key = (u64, u64);

/// Every finding of one kind at one instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The kind.
    pub kind: Kind,
    /// Findings in all.
    pub count: u64,
    /// Component-wise smallest and largest `GlobalInvocationId` involved.
    pub invocations: ([u32; 3], [u32; 3]),
    /// Component-wise smallest and largest `WorkgroupId` involved.
    pub workgroups: ([u32; 3], [u32; 3]),
    /// The first findings (at most [`EXAMPLES`]), earliest first; never empty.
    pub examples: Vec<Diagnostic>,
    keys: Vec<Key>,
}

fn widen(range: &mut ([u32; 3], [u32; 3]), v: [u32; 3]) {
    for (i, x) in v.into_iter().enumerate() {
        range.0[i] = range.0[i].min(x);
        range.1[i] = range.1[i].max(x);
    }
}

impl Summary {
    fn new(kind: Kind, key: Key, d: Diagnostic) -> Self {
        Summary {
            kind,
            count: 1,
            invocations: (d.invocation, d.invocation),
            workgroups: (d.workgroup, d.workgroup),
            examples: vec![d],
            keys: vec![key],
        }
    }

    fn add(&mut self, key: Key, d: Diagnostic) {
        self.count += 1;
        widen(&mut self.invocations, d.invocation);
        widen(&mut self.workgroups, d.workgroup);
        self.keep(key, d);
    }

    /// Keeps `d` if it is among the [`EXAMPLES`] earliest.
    fn keep(&mut self, key: Key, d: Diagnostic) {
        let at = self.keys.partition_point(|k| *k < key);
        if at >= EXAMPLES {
            return;
        }
        self.keys.insert(at, key);
        self.examples.insert(at, d);
        self.keys.truncate(EXAMPLES);
        self.examples.truncate(EXAMPLES);
    }

    fn merge(&mut self, o: Summary) {
        self.count += o.count;
        widen(&mut self.invocations, o.invocations.0);
        widen(&mut self.invocations, o.invocations.1);
        widen(&mut self.workgroups, o.workgroups.0);
        widen(&mut self.workgroups, o.workgroups.1);
        for (k, d) in o.keys.into_iter().zip(o.examples) {
            self.keep(k, d);
        }
    }

    /// The earliest finding.
    pub fn first(&self) -> Option<&Diagnostic> {
        self.examples.first()
    }

    fn first_key(&self) -> Key {
        self.keys.first().copied().unwrap_or((u64::MAX, u64::MAX))
    }
}

/// Summaries being collected, by (instruction location, kind).
#[derive(Debug, Clone, Default)]
pub struct Summaries(HashMap<(u32, Kind), Summary>);

impl Summaries {
    /// Counts one finding of `kind` at location `loc`.
    pub fn add(&mut self, loc: u32, kind: Kind, key: Key, d: Diagnostic) {
        match self.0.get_mut(&(loc, kind)) {
            Some(s) => s.add(key, d),
            None => {
                self.0.insert((loc, kind), Summary::new(kind, key, d));
            }
        }
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds another collection (another workgroup's) to this one.
    pub fn merge(&mut self, o: Summaries) {
        for (k, s) in o.0 {
            match self.0.get_mut(&k) {
                Some(mine) => mine.merge(s),
                None => {
                    self.0.insert(k, s);
                }
            }
        }
    }

    /// The summaries, by their earliest finding.
    pub fn finish(self) -> Vec<Summary> {
        let mut v: Vec<Summary> = self.0.into_values().collect();
        v.sort_by_key(|s| (s.first_key(), s.kind));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Finding;

    fn d(x: u32, wg: u32) -> Diagnostic {
        Diagnostic {
            finding: Finding::DivisionByZero,
            at: crate::InstRef::default(),
            invocation: [x, 0, 0],
            workgroup: [wg, 0, 0],
        }
    }

    /// Any order of adding and merging gives the same summary.
    #[test]
    fn order_independent() {
        let all: Vec<(Key, Diagnostic)> = (0..20u32)
            .map(|i| ((u64::from(i / 4), u64::from(i % 4)), d(i, i / 4)))
            .collect();
        let mut a = Summaries::default();
        for (k, x) in &all {
            a.add(7, Kind::Division, *k, x.clone());
        }
        let (mut b, mut c) = (Summaries::default(), Summaries::default());
        for (i, (k, x)) in all.iter().enumerate().rev() {
            let to = if i % 3 == 0 { &mut b } else { &mut c };
            to.add(7, Kind::Division, *k, x.clone());
        }
        c.merge(b);
        let (a, c) = (a.finish(), c.finish());
        assert_eq!(a, c);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].count, 20);
        assert_eq!(a[0].invocations, ([0, 0, 0], [19, 0, 0]));
        assert_eq!(a[0].workgroups, ([0, 0, 0], [4, 0, 0]));
        let firsts: Vec<u32> = a[0].examples.iter().map(|e| e.invocation[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2, 3]);
    }
}
