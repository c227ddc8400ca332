//! Hazards between dispatches: a dispatch reading or writing bytes of an allocation that an
//! earlier dispatch wrote (or writing bytes an earlier one read) with nothing ordering the two
//! is a `race` finding naming both dispatches and the bytes.
//!
//! # Spec
//! Vulkan "Queue Operation": "Unless otherwise specified, and without explicit
//! synchronization, the various commands submitted to a queue via command buffers may execute
//! in arbitrary order relative to each other, and/or concurrently. Also, the memory
//! side-effects of those commands may not be directly visible to other commands without
//! explicit memory dependencies. This is true within a command buffer, and across command
//! buffers submitted to a given queue." So two dispatches of one command buffer, or of two
//! submissions to the one queue, are not ordered by being recorded or submitted one after the
//! other: only a dependency orders them. In one queue every dependency
//! is global in submission order: a pipeline barrier's "first synchronization scope includes
//! all commands that occur earlier in submission order" and its second all that occur later;
//! a semaphore signal's first scope includes "all commands that occur earlier in submission
//! order" than it and a wait's second scope those after the wait; a fence's signal likewise,
//! and a host wait for it (or `vkQueueWaitIdle`, `vkDeviceWaitIdle`) completes them before the
//! next submission. An execution dependency orders a write after a read (WAR); a write before
//! a read or a write (RAW, WAW) also needs a memory dependency making it available and visible
//! (Vulkan "Memory Dependencies"). Two reads never conflict.
//!
//! # Model
//! Every dispatch of a device gets a number in submission order. Each dependency moves a
//! watermark: dispatches numbered below [`Hazards::exec`] are execution-ordered before every
//! later command, those below [`Hazards::memory`] also have their writes visible. A barrier
//! moves both to the current number (or `exec` alone without a memory barrier covering shader
//! writes and reads); a semaphore wait moves them to the number its signal had; a fence wait to
//! the number its submission ended at. Over-ordering is allowed, inventing a hazard is not: an
//! event wait counts as a barrier where it is waited (the dispatches between the set and the
//! wait are taken as ordered too), a buffer memory barrier as covering every byte, past
//! [`Hazards::LIMIT`] spans of one allocation the oldest are forgotten, and a binding whose
//! accesses scatter into more than [`Hazards::MAX_INTERVALS`] intervals is not followed.
//!
//! Each allocation keeps the spans the recent dispatches read and wrote (from the executor's
//! record of the bytes each binding touched, `tangle_exec::report::Touched`), dropped once a
//! watermark orders them before everything to come.

use crate::findings::{Between, Place};
use crate::objects::Memory;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// How a dispatch used bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Plain loads.
    Read,
    /// Plain stores.
    Write,
    /// Atomics: a write for the ordering it needs, but two atomic accesses never race (Vulkan
    /// Memory Model: a data race needs two accesses "not both atomic").
    Atomic,
}

/// One dispatch's access to bytes `[start, end)` of an allocation.
#[derive(Debug, Clone)]
struct Span {
    start: u64,
    end: u64,
    how: Use,
    /// The dispatch's number.
    seq: u64,
    /// Its pipeline's label.
    pipeline: Arc<str>,
    place: Place,
}

/// The spans of one allocation, while it lives.
#[derive(Debug)]
struct Allocation {
    memory: Weak<Memory>,
    spans: Vec<Span>,
}

/// A device's ordering so far and the recent accesses of its dispatches.
#[derive(Debug, Default)]
pub struct Hazards {
    /// The next dispatch's number.
    next: u64,
    /// Dispatches numbered below it are execution-ordered before every later command.
    pub exec: u64,
    /// Dispatches numbered below it also have their writes visible to every later command.
    pub memory: u64,
    /// Spans by the allocation's address.
    allocations: HashMap<usize, Allocation>,
    /// The [`Hazards::mark`] of the last signal of each semaphore and fence by a submission,
    /// by the object's address.
    signals: HashMap<usize, u64>,
}

/// What a barrier orders between compute dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orders {
    /// Nothing (its stages leave compute shaders out).
    Nothing,
    /// Execution only: a later write after an earlier read.
    Execution,
    /// Execution and memory: any access after an earlier write too.
    Memory,
}

/// One access of a dispatch: the allocation, the absolute bytes `[start, end)` and how.
pub type Access = (Arc<Memory>, u64, u64, Use);

/// A hazard found: the earlier dispatch and the bytes, and the message.
#[derive(Debug, Clone)]
pub struct Hazard {
    /// The earlier side.
    pub earlier: Between,
    /// What it is, with the spec sentence.
    pub message: String,
}

impl Hazards {
    /// The most spans kept per allocation: the oldest are forgotten past it (hazards with them
    /// may be missed, none is invented).
    pub const LIMIT: usize = 1 << 12;

    /// The most intervals of one binding's reads (writes, atomics) a dispatch's record may
    /// have to be followed ([`crate::exec`]): past it they are left out.
    pub const MAX_INTERVALS: usize = 1 << 12;

    /// The number the next dispatch will get: a semaphore's or fence's signal notes it.
    pub fn mark(&self) -> u64 {
        self.next
    }

    /// A dependency whose first scope holds every dispatch numbered below `mark` and whose
    /// second scope every later command.
    pub fn order(&mut self, mark: u64, orders: Orders) {
        if orders == Orders::Nothing {
            return;
        }
        self.exec = self.exec.max(mark);
        if orders == Orders::Memory {
            self.memory = self.memory.max(mark);
        }
    }

    /// A submission signalled the semaphore or fence at `key` (its address) here.
    pub fn signalled(&mut self, key: usize) {
        self.signals.insert(key, self.next);
    }

    /// A submission waits for the semaphore at `key`, or the host waited for the fence at `key`:
    /// what came before its signal is ordered before what comes now (a signal by the host
    /// orders no dispatch).
    pub fn waited(&mut self, key: usize) {
        if let Some(&mark) = self.signals.get(&key) {
            self.order(mark, Orders::Memory);
        }
    }

    /// A barrier here (`vkCmdPipelineBarrier`, `vkCmdWaitEvents`).
    pub fn barrier(&mut self, orders: Orders) {
        self.order(self.next, orders);
    }

    /// A dispatch at `place` of `pipeline` made `accesses`: the hazards with earlier ones (the
    /// first per earlier dispatch), then its spans are kept.
    pub fn dispatch(&mut self, pipeline: &str, place: Place, accesses: &[Access]) -> Vec<Hazard> {
        let seq = self.next;
        self.next += 1;
        let (exec, memory) = (self.exec, self.memory);
        let label: Arc<str> = Arc::from(pipeline);
        let mut found: Vec<Hazard> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for (mem, start, end, how) in accesses {
            let key = Arc::as_ptr(mem) as usize;
            let a = self.allocations.entry(key).or_insert_with(|| Allocation {
                memory: Arc::downgrade(mem),
                spans: Vec::new(),
            });
            if !a.memory.upgrade().is_some_and(|m| Arc::ptr_eq(&m, mem)) {
                // The address is a new allocation's: the freed one's spans are gone with it.
                *a = Allocation {
                    memory: Arc::downgrade(mem),
                    spans: Vec::new(),
                };
            }
            a.spans.retain(|s| match s.how {
                Use::Read => s.seq >= exec,
                Use::Write | Use::Atomic => s.seq >= memory,
            });
            for s in &a.spans {
                if s.seq == seq || seen.contains(&s.seq) || s.end <= *start || *end <= s.start {
                    continue;
                }
                let what = match (s.how, *how) {
                    (Use::Read, Use::Read) | (Use::Atomic, Use::Atomic) => continue,
                    (Use::Read, _) => "writes bytes an earlier dispatch read",
                    (_, Use::Read) => "reads bytes an earlier dispatch wrote",
                    _ => "writes bytes an earlier dispatch wrote",
                };
                seen.push(s.seq);
                let bytes = (s.start.max(*start), s.end.min(*end));
                found.push(Hazard {
                    earlier: Between {
                        pipeline: s.pipeline.to_string(),
                        place: s.place,
                        bytes,
                    },
                    message: format!(
                        "this dispatch {what} (allocation bytes {}..{}: {} in submission {} dispatch {}) with no barrier, event, semaphore or fence wait ordering the two (Vulkan Queue Operation: \"without explicit synchronization, the various commands submitted to a queue via command buffers may execute in arbitrary order relative to each other, and/or concurrently\")",
                        bytes.0, bytes.1, s.pipeline, s.place.submission, s.place.dispatch
                    ),
                });
            }
        }
        for (mem, start, end, how) in accesses {
            let key = Arc::as_ptr(mem) as usize;
            if let Some(a) = self.allocations.get_mut(&key) {
                if a.spans.len() >= Self::LIMIT {
                    a.spans.remove(0);
                }
                a.spans.push(Span {
                    start: *start,
                    end: *end,
                    how: *how,
                    seq,
                    pipeline: label.clone(),
                    place,
                });
            }
        }
        found
    }
}

/// Pipeline stage bits (`VkPipelineStageFlags2`, whose low bits are `VkPipelineStageFlags`'):
/// top and bottom of pipe, compute shader, all commands.
const TOP: u64 = 0x1;
const COMPUTE: u64 = 0x800;
const BOTTOM: u64 = 0x2000;
const ALL: u64 = 0x10000;
/// Access bits (`VkAccessFlags2`): those that write what a shader wrote, and those a later
/// shader reads or writes through.
const WRITES: u64 = 0x40 | 0x10000 | (1 << 34);
const USES: u64 = 0x1 | 0x8 | 0x20 | 0x40 | 0x8000 | 0x10000 | (1 << 32) | (1 << 33) | (1 << 34);

/// What a barrier with stages `src → dst` and memory barriers of accesses `(src, dst)` (global
/// or buffer ones) orders between compute dispatches. Bottom of pipe in the first scope and
/// top of pipe in the second are all commands without accesses ("equivalent to
/// VK_PIPELINE_STAGE_ALL_COMMANDS_BIT with VkAccessFlags set to 0").
pub fn barrier_orders(src: u64, dst: u64, memory: &[(u64, u64)]) -> Orders {
    let executes = src & (COMPUTE | ALL | BOTTOM) != 0 && dst & (COMPUTE | ALL | TOP) != 0;
    if !executes {
        return Orders::Nothing;
    }
    let stages = src & (COMPUTE | ALL) != 0 && dst & (COMPUTE | ALL) != 0;
    if stages && memory.iter().any(|(s, d)| s & WRITES != 0 && d & USES != 0) {
        Orders::Memory
    } else {
        Orders::Execution
    }
}

/// `vkCmdPipelineBarrier2`'s orders: each barrier of the dependency carries its own stages
/// (`(src stages, src access, dst stages, dst access)`); the strongest counts.
pub fn barrier2_orders(barriers: &[(u64, u64, u64, u64)]) -> Orders {
    let mut best = Orders::Nothing;
    for &(ss, sa, ds, da) in barriers {
        match barrier_orders(ss, ds, &[(sa, da)]) {
            Orders::Memory => return Orders::Memory,
            Orders::Execution => best = Orders::Execution,
            Orders::Nothing => {}
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Arc<Memory> {
        Arc::new(Memory {
            bytes: crate::ffi::Bytes::zeroed(64).expect("64 bytes"),
        })
    }

    fn place(d: u64) -> Place {
        Place {
            submission: 1,
            dispatch: d,
        }
    }

    #[test]
    fn unordered_conflicts_are_hazards_and_dependencies_order_them() {
        let m = memory();
        let mut h = Hazards::default();
        assert!(h
            .dispatch("a", place(0), &[(m.clone(), 0, 16, Use::Write)])
            .is_empty());
        // Read after write, no barrier: a hazard on the shared bytes.
        let found = h.dispatch("b", place(1), &[(m.clone(), 8, 32, Use::Read)]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].earlier.bytes, (8, 16));
        assert_eq!(found[0].earlier.pipeline, "a");
        // Disjoint bytes and read after read: none.
        assert!(h
            .dispatch("c", place(2), &[(m.clone(), 16, 32, Use::Read)])
            .is_empty());
        assert!(h
            .dispatch("d", place(3), &[(m.clone(), 32, 48, Use::Write)])
            .is_empty());
        // An execution-only barrier orders a write after reads, not a read after a write.
        h.barrier(Orders::Execution);
        assert!(h
            .dispatch("e", place(4), &[(m.clone(), 16, 32, Use::Write)])
            .is_empty());
        let found = h.dispatch("f", place(5), &[(m.clone(), 40, 44, Use::Read)]);
        assert_eq!(found.len(), 1, "d's write is not visible yet");
        h.barrier(Orders::Memory);
        assert!(h
            .dispatch("g", place(6), &[(m.clone(), 0, 64, Use::Atomic)])
            .is_empty());
        // Atomics against atomics never race; against a plain read they do.
        assert!(h
            .dispatch("h", place(7), &[(m.clone(), 0, 4, Use::Atomic)])
            .is_empty());
        assert_eq!(
            h.dispatch("i", place(8), &[(m.clone(), 0, 4, Use::Read)])
                .len(),
            2
        );
        // A semaphore signalled after "i" and waited for orders everything up to it.
        h.signalled(1);
        h.waited(1);
        assert!(h
            .dispatch("j", place(9), &[(m, 0, 64, Use::Write)])
            .is_empty());
    }

    #[test]
    fn barriers_order_by_their_stages_and_accesses() {
        assert_eq!(barrier_orders(COMPUTE, COMPUTE, &[]), Orders::Execution);
        assert_eq!(
            barrier_orders(COMPUTE, COMPUTE, &[(0x40, 0x20)]),
            Orders::Memory
        );
        assert_eq!(
            barrier_orders(BOTTOM, TOP, &[(0x40, 0x20)]),
            Orders::Execution
        );
        // Transfer to host: no compute stage in the second scope.
        assert_eq!(
            barrier_orders(COMPUTE, 0x4000, &[(0x40, 0x2000)]),
            Orders::Nothing
        );
        assert_eq!(
            barrier2_orders(&[(COMPUTE, 0x40, COMPUTE, 0x20), (0, 0, 0, 0)]),
            Orders::Memory
        );
    }
}
