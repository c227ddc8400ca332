//! The values the marked instructions (subgroup operations, ...) gave each watched lane, from
//! the trace's `values` events. An event lists only the values that changed since the lane's
//! previous one (the first lists them all), so each lane's values are kept up to date here; a
//! marked instruction's result is SSA, written by that instruction alone, so when the lane
//! leaves a step its value is the one the instruction gave in that step, provided the lane got
//! that far in the block: it did if it had an event at or past the instruction's word offset,
//! or if no `OpFunctionCall` lies between where the step started (the block's start, or after
//! its last call for a step resumed after a call) and the instruction. A lane that entered a
//! call before the instruction ran it in a later step.

use super::module::{Block, Blocks};
use serde::Serialize;
use std::collections::HashMap;

/// What a marked instruction produced for one lane.
#[derive(Debug, Clone, Serialize)]
pub struct Value {
    /// The step.
    pub step: usize,
    /// The lane.
    pub lane: u32,
    /// The instruction's word offset.
    pub at: usize,
    /// The scalars, as hexadecimal.
    pub value: Vec<String>,
}

/// One watched lane.
#[derive(Debug, Default)]
struct Lane {
    /// Its values, by id.
    now: HashMap<u32, Vec<u64>>,
    /// Its current step, that step's block and whether the step resumed after a call.
    step: Option<(usize, u32, bool)>,
    /// The furthest word offset it executed in the current step.
    reached: Option<usize>,
}

/// Follows the watched lanes of one subgroup.
pub struct Watcher<'a> {
    marked: HashMap<u32, &'a Block>,
    lanes: HashMap<u32, Lane>,
    out: Vec<Value>,
}

impl<'a> Watcher<'a> {
    /// A watcher over the marked instructions of `blocks`.
    pub fn new(blocks: &'a Blocks) -> Self {
        Watcher {
            marked: blocks
                .blocks
                .iter()
                .filter(|b| !b.marked.is_empty())
                .map(|b| (b.id, b))
                .collect(),
            lanes: HashMap::new(),
            out: Vec::new(),
        }
    }

    /// Lane `lane` starts step `step`, in `block` (`resume`: after a call in it).
    pub fn enter(&mut self, lane: u32, step: usize, block: u32, resume: bool) {
        let l = self.lanes.entry(lane).or_default();
        Self::flush(&self.marked, lane, l, &mut self.out);
        l.step = Some((step, block, resume));
        l.reached = None;
    }

    /// A `values` event of `lane`: it executed the instruction at `at`, and `set` changed.
    pub fn values(&mut self, lane: u32, at: usize, set: &[(u32, Vec<u64>)]) {
        let l = self.lanes.entry(lane).or_default();
        for (id, v) in set {
            l.now.insert(*id, v.clone());
        }
        l.reached = l.reached.max(Some(at));
    }

    /// The values, once every event is in.
    pub fn finish(mut self) -> Vec<Value> {
        let mut keys: Vec<u32> = self.lanes.keys().copied().collect();
        keys.sort_unstable();
        for lane in keys {
            if let Some(l) = self.lanes.get_mut(&lane) {
                Self::flush(&self.marked, lane, l, &mut self.out);
            }
        }
        self.out
    }

    /// Records the values the marked instructions of the lane's current step gave it.
    fn flush(marked: &HashMap<u32, &Block>, lane: u32, l: &mut Lane, out: &mut Vec<Value>) {
        let (Some((step, block, resume)), Some(reached)) = (l.step, l.reached.take()) else {
            return;
        };
        let Some(b) = marked.get(&block) else { return };
        let start = match resume {
            true => b.calls.last().copied().unwrap_or(0),
            false => 0,
        };
        for m in &b.marked {
            let ran = m.at <= reached || !b.calls.iter().any(|&c| c > start && c < m.at);
            let Some(v) = l.now.get(&m.id).filter(|_| m.id != 0 && ran) else {
                continue;
            };
            out.push(Value {
                step,
                lane,
                at: m.at,
                value: v.iter().map(|x| format!("{x:#x}")).collect(),
            });
        }
    }
}
