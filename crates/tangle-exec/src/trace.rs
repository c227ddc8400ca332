//! The trace of a dispatch: the tangle events of every subgroup (blocks executed, splits,
//! joins), recorded when [`crate::RunOptions::trace`] is set, and their JSON form
//! (`docs/trace-format.md`).

use std::fmt::Write as _;

/// The most events one dispatch records; later ones are counted in [`Trace::dropped`].
pub const MAX_EVENTS: usize = 1 << 20;

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// The tangle `mask` started executing block `block`.
    Block {
        /// The tangle's lanes.
        mask: u128,
    },
    /// The tangle `mask` diverged at the terminator of `block` into `into`: (target label id,
    /// lanes), in the order the tangles were created.
    Split {
        /// The lanes of the tangle that diverged.
        mask: u128,
        /// The new tangles.
        into: Vec<(u32, u128)>,
    },
    /// Tangles at the start of `block` (or after a call in it) rejoined into one.
    Join {
        /// The lanes of the rejoined tangles, in scheduling order.
        from: Vec<u128>,
    },
    /// Watched lane `lane` ([`crate::RunOptions::watch`]) has executed the instruction at word
    /// offset `at` (for an `OpFunctionCall`: the call has returned; 0: the block has just
    /// started, its `OpPhi`s done); `set` holds the values (by id, scalars in component order)
    /// of its function that changed since the lane's previous `Values` event.
    Values {
        /// The lane.
        lane: u32,
        /// The instruction's word offset in the module (0: the block's start).
        at: usize,
        /// The changed values: (id, scalars; a boolean as 0 or 1).
        set: Vec<(u32, Vec<u64>)>,
    },
}

/// One event of one subgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The workgroup's `WorkgroupId`.
    pub workgroup: [u32; 3],
    /// The subgroup's index in the workgroup.
    pub subgroup: u32,
    /// The result id of the function.
    pub function: u32,
    /// The label id of the block.
    pub block: u32,
    /// What happened.
    pub kind: EventKind,
}

/// The events of a dispatch, ordered by workgroup (linear index), then as they happened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trace {
    /// The policy the dispatch ran under.
    pub policy: String,
    /// The subgroup size.
    pub subgroup_size: u32,
    /// The events.
    pub events: Vec<Event>,
    /// Events not recorded because the trace was full.
    pub dropped: u64,
}

/// Gathers the events of a dispatch's workgroups, which finish in any order, into a trace that
/// does not depend on that order: the first [`MAX_EVENTS`] events by workgroup index.
#[derive(Debug, Default)]
pub struct Collector {
    groups: Vec<(u64, Vec<Event>)>,
    held: usize,
    produced: u64,
}

impl Collector {
    /// Adds the events of workgroup `index`; `produced` counts those it could not keep too.
    pub fn add(&mut self, index: u64, events: Vec<Event>, produced: u64) {
        self.produced += produced;
        self.held += events.len();
        self.groups.push((index, events));
        if self.held > 4 * MAX_EVENTS {
            self.keep_first();
        }
    }

    /// Keeps the first [`MAX_EVENTS`] events by workgroup index. Later workgroups only add
    /// events after these, so what is dropped here would be dropped at the end too.
    fn keep_first(&mut self) {
        self.groups.sort_by_key(|(i, _)| *i);
        let mut room = MAX_EVENTS;
        for (_, e) in &mut self.groups {
            e.truncate(room);
            room -= e.len();
        }
        self.groups.retain(|(_, e)| !e.is_empty());
        self.held = MAX_EVENTS.min(self.held);
    }

    /// The trace.
    pub fn finish(mut self, policy: String, subgroup_size: u32) -> Trace {
        self.keep_first();
        let events: Vec<Event> = self.groups.into_iter().flat_map(|(_, e)| e).collect();
        Trace {
            policy,
            subgroup_size,
            dropped: self.produced.saturating_sub(events.len() as u64),
            events,
        }
    }
}

fn mask_json(m: u128) -> String {
    format!("\"{m:#x}\"")
}

impl Trace {
    /// The JSON object of this dispatch (`docs/trace-format.md`).
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\"policy\":\"{}\",\"subgroup_size\":{},\"dropped\":{},\"events\":[",
            self.policy.escape_default(),
            self.subgroup_size,
            self.dropped
        );
        for (i, e) in self.events.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let [x, y, z] = e.workgroup;
            let _ = write!(
                s,
                "\n{{\"workgroup\":[{x},{y},{z}],\"subgroup\":{},\"function\":{},\"block\":{},",
                e.subgroup, e.function, e.block
            );
            match &e.kind {
                EventKind::Block { mask } => {
                    let _ = write!(s, "\"kind\":\"block\",\"mask\":{}}}", mask_json(*mask));
                }
                EventKind::Split { mask, into } => {
                    let into: Vec<String> = into
                        .iter()
                        .map(|(b, m)| format!("{{\"block\":{b},\"mask\":{}}}", mask_json(*m)))
                        .collect();
                    let _ = write!(
                        s,
                        "\"kind\":\"split\",\"mask\":{},\"into\":[{}]}}",
                        mask_json(*mask),
                        into.join(",")
                    );
                }
                EventKind::Join { from } => {
                    let union = from.iter().fold(0, |a, m| a | m);
                    let from: Vec<String> = from.iter().map(|m| mask_json(*m)).collect();
                    let _ = write!(
                        s,
                        "\"kind\":\"join\",\"mask\":{},\"from\":[{}]}}",
                        mask_json(union),
                        from.join(",")
                    );
                }
                EventKind::Values { lane, at, set } => {
                    let set: Vec<String> = set
                        .iter()
                        .map(|(id, v)| {
                            let v: Vec<String> = v.iter().map(|x| format!("\"{x:#x}\"")).collect();
                            format!("{{\"id\":{id},\"value\":[{}]}}", v.join(","))
                        })
                        .collect();
                    let _ = write!(
                        s,
                        "\"kind\":\"values\",\"lane\":{lane},\"at\":{at},\"set\":[{}]}}",
                        set.join(",")
                    );
                }
            }
        }
        s.push_str("]}");
        s
    }
}

/// The trace file of a run of several dispatches: `{"version":1,"dispatches":[...]}`.
pub fn file_json(traces: &[Trace]) -> String {
    let parts: Vec<String> = traces.iter().map(Trace::to_json).collect();
    format!("{{\"version\":1,\"dispatches\":[{}]}}\n", parts.join(",\n"))
}

/// Invocations per dispatch whose values a picture (`tangle run --view`, the driver's
/// `TANGLE_VIEW`) shows on hover, the first ones ([`first_invocations`]): enough for a few
/// subgroups, few enough that their `values` events leave room in the trace for the tangle
/// events of the rest.
pub const VIEW_WATCHED: usize = 64;

/// The `GlobalInvocationId`s of the first `n` invocations of a dispatch: by workgroup (x
/// fastest), then by `LocalInvocationIndex`.
pub fn first_invocations(groups: [u32; 3], local: [u32; 3], n: usize) -> Vec<[u32; 3]> {
    let per_group = local.iter().map(|&l| l as usize).product::<usize>();
    let count = groups.iter().map(|&g| g as usize).product::<usize>() * per_group;
    (0..n.min(count))
        .map(|i| {
            let (wg, li) = (i / per_group.max(1), i % per_group.max(1));
            let w = [
                wg % groups[0] as usize,
                wg / groups[0] as usize % groups[1] as usize,
                wg / (groups[0] as usize * groups[1] as usize),
            ];
            let l = [
                li % local[0] as usize,
                li / local[0] as usize % local[1] as usize,
                li / (local[0] as usize * local[1] as usize),
            ];
            [0, 1, 2].map(|k| (w[k] * local[k] as usize + l[k]) as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collector_keeps_the_first_events_by_workgroup() {
        let ev = |w: u32| Event {
            workgroup: [w, 0, 0],
            subgroup: 0,
            function: 1,
            block: 2,
            kind: EventKind::Block { mask: 1 },
        };
        let mut c = Collector::default();
        c.add(2, vec![ev(2); 3], 3);
        c.add(0, vec![ev(0); 2], 2);
        c.add(1, vec![ev(1)], 5);
        let t = c.finish("p".into(), 4);
        let order: Vec<u32> = t.events.iter().map(|e| e.workgroup[0]).collect();
        assert_eq!(order, vec![0, 0, 1, 2, 2, 2]);
        assert_eq!(t.dropped, 4);
    }

    #[test]
    fn json_has_every_field() {
        let ev = |kind| Event {
            workgroup: [1, 0, 0],
            subgroup: 2,
            function: 4,
            block: 9,
            kind,
        };
        let t = Trace {
            policy: "maximal,true-first,by-case".into(),
            subgroup_size: 4,
            events: vec![
                ev(EventKind::Block { mask: 0xf }),
                ev(EventKind::Split {
                    mask: 0xf,
                    into: vec![(10, 3), (11, 12)],
                }),
                ev(EventKind::Join { from: vec![3, 12] }),
                ev(EventKind::Values {
                    lane: 1,
                    at: 40,
                    set: vec![(7, vec![10, 0xff])],
                }),
            ],
            dropped: 0,
        };
        let j = file_json(&[t]);
        assert!(j.starts_with(
            "{\"version\":1,\"dispatches\":[{\"policy\":\"maximal,true-first,by-case\""
        ));
        assert!(j.contains("\"kind\":\"split\",\"mask\":\"0xf\",\"into\":[{\"block\":10,\"mask\":\"0x3\"},{\"block\":11,\"mask\":\"0xc\"}]"));
        assert!(j.contains("\"kind\":\"join\",\"mask\":\"0xf\",\"from\":[\"0x3\",\"0xc\"]"));
        assert!(j.contains(
            "\"kind\":\"values\",\"lane\":1,\"at\":40,\"set\":[{\"id\":7,\"value\":[\"0xa\",\"0xff\"]}]"
        ));
        assert!(j.contains(
            "{\"workgroup\":[1,0,0],\"subgroup\":2,\"function\":4,\"block\":9,\"kind\":\"block\""
        ));
    }
}
