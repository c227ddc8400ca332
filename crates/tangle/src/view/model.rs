//! The picture's data, made from a dispatch's trace (`docs/trace-format.md`, "The picture"):
//! per subgroup, its steps (one per `block` event, plus one where tangles rejoined after a call
//! in the middle of a block), the splits and joins between them, the values the watched lanes'
//! marked instructions produced, and the sanitizer's findings placed at a step and lane.
//! Bounded: [`MAX_SUBGROUPS`] subgroups per dispatch and [`MAX_STEPS`] steps per subgroup.

use super::module::Blocks;
use super::values::{Value, Watcher};
use crate::cpu_backend::TracedRun;
use serde::{Serialize, Serializer};
use std::collections::HashMap;
use tangle_exec::trace::EventKind;

/// The most steps recorded for one subgroup; later ones are counted in [`Subgroup::cut`].
pub const MAX_STEPS: usize = 2000;
/// The most subgroups recorded per dispatch (the first by workgroup, then by index); the rest
/// are counted in [`PolicyRun::subgroups_cut`].
pub const MAX_SUBGROUPS: usize = 64;
/// The most findings placed per subgroup.
const MAX_FINDINGS: usize = 256;

/// A lane mask, written as a hexadecimal string (up to 128 bits: more than a JSON number holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mask(pub u128);

impl Serialize for Mask {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:#x}", self.0))
    }
}

/// One column of the picture: a tangle executing a block.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The block's label id.
    pub block: u32,
    /// The tangle's lanes.
    pub mask: Mask,
    /// The tangle resumed in the middle of the block (rejoined after a call), not at its start.
    pub resume: bool,
    /// With two policies: this (block, tangle) did not run (as often) under the other policy.
    pub differs: bool,
}

/// A tangle that diverged at the terminator of its step's block.
#[derive(Debug, Clone, Serialize)]
pub struct Split {
    /// The step whose terminator diverged.
    pub step: usize,
    /// The lanes that diverged.
    pub mask: Mask,
    /// The new tangles: (block, lanes).
    pub into: Vec<(u32, Mask)>,
}

/// Tangles that rejoined before a step.
#[derive(Debug, Clone, Serialize)]
pub struct Join {
    /// The step the rejoined tangle starts.
    pub step: usize,
    /// The rejoined tangles' lanes.
    pub from: Vec<Mask>,
}

/// A sanitizer finding, placed.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The first step of the lane that runs the finding's instruction (a loop may run it
    /// again later); `None` when no recorded step does.
    pub step: Option<usize>,
    /// The lane.
    pub lane: u32,
    /// The kind (`race`, `uninit`, ...).
    pub kind: String,
    /// The finding in words.
    pub message: String,
}

/// One subgroup's picture.
#[derive(Debug, Clone, Serialize)]
pub struct Subgroup {
    /// The `WorkgroupId`.
    pub workgroup: [u32; 3],
    /// The subgroup's index in the workgroup.
    pub subgroup: u32,
    /// The columns.
    pub steps: Vec<Step>,
    /// The splits.
    pub splits: Vec<Split>,
    /// The joins.
    pub joins: Vec<Join>,
    /// `block` events past [`MAX_STEPS`], not drawn.
    pub cut: usize,
    /// Values of marked instructions, for the watched lanes.
    pub values: Vec<Value>,
    /// Findings of this subgroup.
    pub findings: Vec<Finding>,
}

/// A dispatch under one policy.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyRun {
    /// The policy, in `--policy` syntax.
    pub policy: String,
    /// Trace events the executor did not record (the trace's own cap).
    pub dropped: u64,
    /// The subgroups drawn.
    pub subgroups: Vec<Subgroup>,
    /// Subgroups past [`MAX_SUBGROUPS`], not drawn.
    pub subgroups_cut: usize,
}

type Key = ([u32; 3], u32);

impl PolicyRun {
    /// The picture of `run`'s trace.
    pub fn of(run: &TracedRun, blocks: &Blocks) -> PolicyRun {
        let trace = &run.trace;
        let mut order: Vec<Key> = Vec::new();
        let mut events: HashMap<Key, Vec<&tangle_exec::trace::Event>> = HashMap::new();
        for e in &trace.events {
            let key = (e.workgroup, e.subgroup);
            let list = events.entry(key).or_default();
            if list.is_empty() {
                order.push(key);
            }
            list.push(e);
        }
        let subgroups_cut = order.len().saturating_sub(MAX_SUBGROUPS);
        let mut subgroups: Vec<Subgroup> = order
            .iter()
            .take(MAX_SUBGROUPS)
            .map(|key| subgroup(*key, &events[key], blocks))
            .collect();
        place_findings(&mut subgroups, run, blocks);
        PolicyRun {
            policy: trace.policy.clone(),
            dropped: trace.dropped,
            subgroups,
            subgroups_cut,
        }
    }
}

/// The picture of one subgroup's events.
fn subgroup(key: Key, events: &[&tangle_exec::trace::Event], blocks: &Blocks) -> Subgroup {
    let mut watcher = Watcher::new(blocks);
    let mut s = Subgroup {
        workgroup: key.0,
        subgroup: key.1,
        steps: Vec::new(),
        splits: Vec::new(),
        joins: Vec::new(),
        cut: 0,
        values: Vec::new(),
        findings: Vec::new(),
    };
    // The last step of each (block, tangle), where its terminator's split is drawn.
    let mut last_of: HashMap<(u32, u128), usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let full = s.steps.len() >= MAX_STEPS;
        match &e.kind {
            EventKind::Block { .. } | EventKind::Join { .. } if full => {
                s.cut += usize::from(matches!(e.kind, EventKind::Block { .. }));
            }
            EventKind::Block { mask } => {
                last_of.insert((e.block, *mask), s.steps.len());
                for l in lanes(*mask) {
                    watcher.enter(l, s.steps.len(), e.block, false);
                }
                s.steps.push(Step {
                    block: e.block,
                    mask: Mask(*mask),
                    resume: false,
                    differs: false,
                });
            }
            EventKind::Join { from } => {
                let union = from.iter().fold(0, |a, m| a | m);
                s.joins.push(Join {
                    step: s.steps.len(),
                    from: from.iter().map(|m| Mask(*m)).collect(),
                });
                // A join at a block's start precedes that block's event; one after a call
                // resumes the block in the middle: a step of its own.
                let next = events[i + 1..]
                    .iter()
                    .find(|n| !matches!(n.kind, EventKind::Values { .. }));
                let starts = matches!(next, Some(n) if n.block == e.block
                    && n.kind == EventKind::Block { mask: union });
                if !starts {
                    last_of.insert((e.block, union), s.steps.len());
                    for l in lanes(union) {
                        watcher.enter(l, s.steps.len(), e.block, true);
                    }
                    s.steps.push(Step {
                        block: e.block,
                        mask: Mask(union),
                        resume: true,
                        differs: false,
                    });
                }
            }
            EventKind::Split { mask, into } => {
                if let Some(&step) = last_of.get(&(e.block, *mask)) {
                    s.splits.push(Split {
                        step,
                        mask: Mask(*mask),
                        into: into.iter().map(|(b, m)| (*b, Mask(*m))).collect(),
                    });
                }
            }
            EventKind::Values { lane, at, set } => watcher.values(*lane, *at, set),
        }
    }
    s.values = watcher.finish();
    s
}

/// The lanes of a mask.
pub fn lanes(mask: u128) -> impl Iterator<Item = u32> {
    (0..128).filter(move |l| mask >> l & 1 == 1)
}

/// Places each finding the run kept one by one at the first step of its lane whose block holds
/// the finding's instruction.
fn place_findings(subgroups: &mut [Subgroup], run: &TracedRun, blocks: &Blocks) {
    let local_size = run.local_size.map(u64::from);
    let [sx, sy, _] = local_size;
    let size = u64::from(run.trace.subgroup_size.max(1));
    for summary in &run.findings {
        let holder = blocks
            .blocks
            .iter()
            .find(|b| (b.words.0..b.words.1).contains(&summary.word))
            .map(|b| b.id);
        for f in &summary.findings {
            let local = [0, 1, 2].map(|k| {
                let base = u64::from(f.workgroup[k]) * local_size[k];
                u64::from(f.invocation[k]).saturating_sub(base)
            });
            let index = local[0] + local[1] * sx + local[2] * sx * sy;
            let (sg, lane) = ((index / size) as u32, (index % size) as u32);
            let Some(s) = subgroups
                .iter_mut()
                .find(|s| s.workgroup == f.workgroup && s.subgroup == sg)
            else {
                continue;
            };
            if s.findings.len() >= MAX_FINDINGS {
                continue;
            }
            let step = s
                .steps
                .iter()
                .position(|st| Some(st.block) == holder && st.mask.0 >> lane & 1 == 1);
            s.findings.push(Finding {
                step,
                lane,
                kind: summary.kind.clone(),
                message: f.message.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tangle_exec::trace::{Event, Trace};

    fn run(kinds: Vec<(u32, EventKind)>) -> TracedRun {
        let events = kinds
            .into_iter()
            .map(|(block, kind)| Event {
                workgroup: [0, 0, 0],
                subgroup: 0,
                function: 1,
                block,
                kind,
            })
            .collect();
        TracedRun {
            trace: Trace {
                policy: "maximal,true-first,by-case".into(),
                subgroup_size: 4,
                events,
                dropped: 0,
            },
            spirv: Vec::new(),
            line: 1,
            groups: [1, 1, 1],
            local_size: [4, 1, 1],
            bindings: Vec::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn steps_splits_joins_and_resumed_blocks() {
        let r = run(vec![
            (5, EventKind::Block { mask: 0xf }),
            (
                5,
                EventKind::Split {
                    mask: 0xf,
                    into: vec![(6, 0x3), (7, 0xc)],
                },
            ),
            (6, EventKind::Block { mask: 0x3 }),
            (7, EventKind::Block { mask: 0xc }),
            // Rejoined at the start of block 8: no step of its own.
            (
                8,
                EventKind::Join {
                    from: vec![0x3, 0xc],
                },
            ),
            (8, EventKind::Block { mask: 0xf }),
            // Rejoined after a call in block 8: a resumed step.
            (
                8,
                EventKind::Join {
                    from: vec![0x1, 0xe],
                },
            ),
        ]);
        let p = PolicyRun::of(&r, &Blocks::default());
        let s = &p.subgroups[0];
        let steps: Vec<(u32, u128, bool)> = s
            .steps
            .iter()
            .map(|t| (t.block, t.mask.0, t.resume))
            .collect();
        assert_eq!(
            steps,
            vec![
                (5, 0xf, false),
                (6, 0x3, false),
                (7, 0xc, false),
                (8, 0xf, false),
                (8, 0xf, true)
            ]
        );
        assert_eq!(s.splits.len(), 1);
        assert_eq!(s.splits[0].step, 0);
        let joins: Vec<usize> = s.joins.iter().map(|j| j.step).collect();
        assert_eq!(joins, vec![3, 4]);
    }

    #[test]
    fn steps_past_the_cap_are_counted_not_drawn() {
        let r = run((0..MAX_STEPS + 5)
            .map(|_| (5, EventKind::Block { mask: 1 }))
            .collect());
        let p = PolicyRun::of(&r, &Blocks::default());
        assert_eq!(p.subgroups[0].steps.len(), MAX_STEPS);
        assert_eq!(p.subgroups[0].cut, 5);
    }
}
