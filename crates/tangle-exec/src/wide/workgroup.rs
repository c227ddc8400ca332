//! Workgroup memory and barriers on the wide path: batches aligned to workgroups, a barrier as
//! a step of the whole workgroup, and the screens that send a dispatch back to the reference
//! path wherever it would report something about Workgroup memory.
//!
//! **Batches.** A program with Workgroup memory or a barriers ([`super::plan`]) runs one
//! workgroup per unit of work: a batch of its invocations when it has at most [`WIDTH`], else
//! several batches (*parts*, `WIDTH` invocations each, the last one shorter) run in step. Each
//! workgroup has its own Workgroup memory ([`Memory`]), zeroed and with its variables'
//! initializers written at its start, as the reference path's (`run::Workgroup::run`).
//!
//! **Barriers.** A tangle that reaches an `OpControlBarrier` waits after it
//! ([`super::Batch::parked`]); the other tangles of the part run on (lowest structured rank
//! first, as before), then the other parts. When no lane of any part can run, the barrier is
//! released if every lane of the workgroup waits at one position (one barrier instruction) —
//! what the reference path checks (`run::Workgroup::divergent_barrier`), which runs each
//! subgroup until its tangles wait or finish in the same order as the wide path restricted to
//! that subgroup (under the default policy, which [`Shape::new`] requires, for barriers as for
//! subgroup operations: `Wide::new`'s `group_batches`). Anything else — lanes at two barriers,
//! some finished while others wait — is barrier divergence, undefined behaviour that the
//! reference path reports: the dispatch is given back. A subgroup-scope barrier must be
//! executed by its whole subgroup, else the dispatch is given back too.
//!
//! **Screens.** The wide path reports nothing itself ([`super`]). Each access of Workgroup
//! memory (by `OpLoad` and `OpStore`, the only ops of the wide subset that reach it; the plan
//! refuses cooperative matrices with Workgroup memory) is screened per scalar, as the
//! reference path logs it (`Mem::resolve_value`):
//!
//! - *Undefined bytes.* Workgroup memory without an initializer is undefined until written
//!   (`check::uninit`'s [`crate::check::uninit::Shadow`]); a load of a byte no store of the
//!   workgroup wrote gives the dispatch back, whatever the checks, so the reference path's
//!   undefined-value findings (and its zeroed bytes with the checks off) are its own.
//! - *Races.* Within one barrier interval (the reference path's race check sweeps and forgets
//!   Workgroup accesses at every workgroup barrier, whatever its semantics: `RaceLog::barrier`),
//!   two accesses of a byte by different invocations, one a write, may race: the dispatch is
//!   given back. Each byte keeps its interval's writer and reader (one invocation, or several),
//!   stamped with the interval's number, so an interval starts without clearing anything. The
//!   screen runs with the checks off too: a racy program's bytes then are the reference path's
//!   as well. Orderings the reference path also knows (subgroup barriers, memory barriers,
//!   atomics) can only make it report less: a give-back it did not need costs time, not
//!   exactness.
//!
//! Buffers keep the dispatch-wide race screen ([`super::races`]), which knows no barrier: a
//! buffer written by one invocation and read by another of its workgroup after a barrier is
//! given back (the reference path orders them). For these programs it too runs with the checks
//! off (`Wide::new`), so that a racy program is the reference path's to run whatever the
//! checks (`tests/amber/sanitizer/race_buffer_workgroups.bad.amber`, whose Workgroup variable
//! is never used, has workgroups race on one word: its last writer is the reference path's).

use super::{Batch, GaveUp, Wide, WIDTH};
use crate::error::ExecError;
use crate::program::{Op, Program, RegionKind};
use crate::run::alu::{bits_of, full_mask, lanes_of};
use crate::run::memory::{split_pointer, Words, REGION_WORKGROUP};
use crate::run::Shared;
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// A tangle that waits at a barrier, or resumes after one: (block, index of the op after the
/// barrier, mask, steps).
pub(super) type Parked = (u32, usize, u128, u64);

/// The most parts of a workgroup (Vulkan's `maxComputeWorkGroupInvocations` is 1024 or less on
/// the devices tangle models).
const MAX_PARTS: usize = 16;

/// The most Workgroup memory the screens take (16 bytes of stamps a byte, per worker).
const MAX_BYTES: u64 = 1 << 20;

/// The shape of a dispatch's workgroup-aligned batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Invocations per workgroup.
    pub(super) per_group: u64,
    /// Batches per workgroup, run in step.
    pub(super) parts: usize,
}

impl Shape {
    /// The shape for dispatch `s`, or why the wide path does not take it.
    pub(super) fn new(s: &Shared<'_>) -> Result<Shape, GaveUp> {
        let per_group: u64 = s.fast.local_size.iter().map(|&x| u64::from(x)).product();
        let parts = per_group.div_ceil(WIDTH as u64);
        if per_group == 0 || parts > MAX_PARTS as u64 {
            return Err(GaveUp(format!(
                "barriers or Workgroup memory in a workgroup of {per_group} invocations (at most {})",
                MAX_PARTS * WIDTH
            )));
        }
        if s.fast.workgroup_bytes > MAX_BYTES {
            return Err(GaveUp(format!(
                "more than {MAX_BYTES} bytes of Workgroup memory"
            )));
        }
        if s.options.policy != crate::policy::Policy::default() {
            return Err(GaveUp(
                "barriers or Workgroup memory under a policy other than the default".into(),
            ));
        }
        Ok(Shape {
            per_group,
            parts: parts as usize,
        })
    }

    /// Invocations of part `j`.
    fn count(&self, j: usize) -> usize {
        let before = (j * WIDTH) as u64;
        self.per_group.saturating_sub(before).min(WIDTH as u64) as usize
    }
}

/// Merges tangle `t` into the tangles waiting at barriers: lanes at the same position wait as
/// one tangle (the larger step count kept, as a join keeps it).
pub(super) fn park(parked: &mut Vec<Parked>, t: Parked) {
    match parked
        .iter_mut()
        .find(|(b, op, _, _)| (*b, *op) == (t.0, t.1))
    {
        Some((_, _, mask, steps)) => {
            *mask |= t.2;
            *steps = (*steps).max(t.3);
        }
        None => parked.push(t),
    }
}

/// Part `j` of the workgroup batch `b` (part 0 is `b` itself).
fn part(b: &mut Batch, j: usize) -> Option<&mut Batch> {
    match j.checked_sub(1) {
        None => Some(b),
        Some(k) => b.parts.get_mut(k),
    }
}

/// Runs workgroup `i` on batch `b` and its parts, barrier interval by barrier interval.
pub(super) fn run(b: &mut Batch, w: &Wide<'_>, i: u64) -> Result<(), ExecError> {
    let Some(shape) = w.workgroup else {
        return Ok(());
    };
    let s = w.shared;
    b.wgm
        .get_or_insert_with(|| Box::new(Memory::new(s.fast)))
        .start();
    while b.parts.len() + 1 < shape.parts {
        b.parts.push(Batch::new(w));
    }
    let first = i.saturating_mul(shape.per_group);
    let mut resume: Vec<Vec<Parked>> = Vec::with_capacity(shape.parts);
    for j in 0..shape.parts {
        let count = shape.count(j);
        if let Some(p) = part(b, j) {
            p.begin(first + (j * WIDTH) as u64, count);
        }
        resume.push(vec![(0, 0, full_mask(count), 0)]);
    }
    loop {
        for (j, r) in resume.iter_mut().enumerate() {
            if let Some(m) = b.wgm.as_deref_mut() {
                m.local0 = (j * WIDTH) as u32;
            }
            // The memory goes with the part that runs.
            match j.checked_sub(1) {
                None => b.advance(w, std::mem::take(r))?,
                Some(k) => {
                    let Some(p) = b.parts.get_mut(k) else {
                        continue;
                    };
                    std::mem::swap(&mut b.wgm, &mut p.wgm);
                    let ran = p.advance(w, std::mem::take(r));
                    std::mem::swap(&mut b.wgm, &mut p.wgm);
                    ran?;
                }
            }
            if s.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
        // No lane can run: each has finished or waits at a barrier.
        let (mut position, mut waiting, mut finished) = (None, false, false);
        for j in 0..shape.parts {
            let Some(p) = part(b, j) else {
                continue;
            };
            match *p.parked.as_slice() {
                [] => finished = true,
                [(block, op, mask, _)]
                    if mask == full_mask(shape.count(j))
                        && position.is_none_or(|at| at == (block, op)) =>
                {
                    position = Some((block, op));
                    waiting = true;
                }
                _ => {
                    // Lanes at two positions, or some of the part's lanes missing.
                    waiting = true;
                    finished = true;
                }
            }
        }
        if !waiting {
            return Ok(());
        }
        if finished {
            w.give_up("a barrier not reached by the whole workgroup (barrier divergence)".into());
            return Ok(());
        }
        if let Some(m) = b.wgm.as_deref_mut() {
            m.barrier();
        }
        for (j, r) in resume.iter_mut().enumerate() {
            if let Some(p) = part(b, j) {
                *r = std::mem::take(&mut p.parked);
            }
        }
    }
}

/// Runs a barrier op other than a workgroup barrier's wait (which [`Batch::advance`] makes)
/// for `mask`; `Err` says why the wide path gives up.
pub(super) fn barrier_op(w: &Wide<'_>, op: &Op, mask: u128) -> Result<(), String> {
    match op {
        // It orders memory for the race check, which can only make it report less.
        Op::Fence { .. } => Ok(()),
        Op::SubgroupBarrier { .. } => {
            let sg = w.shared.sg;
            if w.workgroup.is_none() || sg == 0 || !WIDTH.is_multiple_of(sg) {
                return Err(
                    "a subgroup barrier where a batch does not hold whole subgroups".into(),
                );
            }
            let whole = (0..WIDTH / sg).all(|k| {
                let lanes = (mask >> (k * sg)) & full_mask(sg);
                lanes == 0 || lanes == full_mask(sg)
            });
            if whole {
                Ok(())
            } else {
                Err("a subgroup barrier not executed by its whole subgroup".into())
            }
        }
        _ => Err("a workgroup barrier outside a workgroup-aligned batch".into()),
    }
}

/// One workgroup's memory, with the screens' state of its bytes.
pub(super) struct Memory {
    /// The bytes.
    pub(super) words: Words,
    /// A bit per byte: written since the workgroup started (an initializer counts).
    written: Vec<u64>,
    /// Per byte: the interval's writer (`interval << 32 | invocation + 1`; an older interval:
    /// none).
    writer: Vec<u64>,
    /// Per byte: the interval's reader, as `writer`, with [`SEVERAL`] for more than one.
    reader: Vec<u64>,
    /// The current barrier interval's number (every workgroup's intervals count on).
    interval: u64,
    /// `LocalInvocationIndex` of lane 0 of the part running.
    local0: u32,
    /// The variables' initializers: (offset, bytes, value) of each scalar.
    inits: Vec<(u64, u32, u64)>,
}

/// A byte's reader stamp when several invocations read it in the interval.
const SEVERAL: u64 = 0xffff_ffff;

impl Memory {
    fn new(prog: &Program) -> Memory {
        let bytes = prog.workgroup_bytes;
        let consts: HashMap<u32, u64> = prog.constants.iter().copied().collect();
        let mut inits = Vec::new();
        for var in &prog.variables {
            if let (RegionKind::Workgroup, Some(init)) = (var.region, var.init) {
                for (k, leaf) in prog.leaves_of(var.ty).iter().enumerate() {
                    let v = consts.get(&(init + k as u32)).copied().unwrap_or(0);
                    inits.push((var.offset + leaf.offset, leaf.bytes, v));
                }
            }
        }
        let n = usize::try_from(bytes).unwrap_or(0);
        Memory {
            words: Words::new(bytes),
            written: vec![0; n.div_ceil(64)],
            writer: vec![0; n],
            reader: vec![0; n],
            interval: 0,
            local0: 0,
            inits,
        }
    }

    /// A new workgroup: zeroed, initializers written, nothing else written.
    fn start(&mut self) {
        self.words.zero();
        self.written.fill(0);
        for &(off, bytes, v) in &self.inits {
            if self.words.contains(off, u64::from(bytes)) {
                self.words.write(off, bytes, v);
                mark(&mut self.written, off, u64::from(bytes));
            }
        }
        self.barrier();
    }

    /// A workgroup barrier: a new interval.
    fn barrier(&mut self) {
        // Stamps hold the interval's low 32 bits: before they wrap, every stamp is cleared.
        if self.interval >= u64::from(u32::MAX) {
            self.writer.fill(0);
            self.reader.fill(0);
            self.interval = 0;
        }
        self.interval += 1;
    }

    /// Screens the Workgroup accesses of `op` (a load or store; anything else passes) by the
    /// lanes `mask` of a batch with registers `regs`: `Err` says why the wide path gives up.
    pub(super) fn access(
        &mut self,
        prog: &Program,
        op: &Op,
        regs: &[u64],
        mask: u128,
    ) -> Result<(), String> {
        let (ptr, ty, write, uniform) = match *op {
            Op::Load { ptr, ty, .. } => (ptr, ty, false, false),
            Op::LoadUniform { ptr, ty, .. } => (ptr, ty, false, true),
            Op::Store { ptr, ty, .. } => (ptr, ty, true, false),
            _ => return Ok(()),
        };
        let lanes = lanes_of(regs, WIDTH, ptr);
        let l0 = mask.trailing_zeros() as usize;
        let leaves = prog.leaves_of(ty);
        for l in bits_of(mask, WIDTH) {
            // A uniform load reads the first active lane's address for every lane.
            let p = lanes
                .get(if uniform { l0 } else { l })
                .copied()
                .unwrap_or(0);
            let (region, off) = split_pointer(p);
            if region != REGION_WORKGROUP {
                continue;
            }
            let inv = self.local0 + l as u32;
            for leaf in leaves {
                let at = off.wrapping_add(leaf.offset);
                let len = u64::from(leaf.bytes);
                if at.checked_add(len).is_none_or(|end| end > self.words.len()) {
                    return Err("a Workgroup access out of bounds".into());
                }
                if write {
                    mark(&mut self.written, at, len);
                } else if !(at..at + len).all(|b| bit(&self.written, b)) {
                    return Err("a load of Workgroup memory no invocation wrote".into());
                }
                self.screen(at, len, inv, write)?;
            }
        }
        Ok(())
    }

    /// The race screen of `len` bytes at `at` accessed by invocation `inv`.
    fn screen(&mut self, at: u64, len: u64, inv: u32, write: bool) -> Result<(), String> {
        let now = self.interval << 32;
        let me = now | (u64::from(inv) + 1);
        let race = || Err("a possible data race on Workgroup memory".to_string());
        for b in at..at + len {
            let b = b as usize;
            let (Some(wr), Some(rd)) = (self.writer.get(b).copied(), self.reader.get(b).copied())
            else {
                return race();
            };
            let live = |stamp: u64| stamp >> 32 == self.interval && stamp & SEVERAL != 0;
            if live(wr) && wr != me {
                return race();
            }
            if write {
                if live(rd) && rd != me {
                    return race();
                }
                if let Some(x) = self.writer.get_mut(b) {
                    *x = me;
                }
            } else if let Some(x) = self.reader.get_mut(b) {
                *x = if !live(rd) || rd == me {
                    me
                } else {
                    now | SEVERAL
                };
            }
        }
        Ok(())
    }
}

/// Marks bytes `[off, off + len)` in the bit set `bits`.
fn mark(bits: &mut [u64], off: u64, len: u64) {
    for b in off..off.saturating_add(len) {
        if let Some(w) = bits.get_mut((b / 64) as usize) {
            *w |= 1 << (b % 64);
        }
    }
}

/// Whether byte `b` is marked in `bits`.
fn bit(bits: &[u64], b: u64) -> bool {
    bits.get((b / 64) as usize)
        .is_some_and(|w| w >> (b % 64) & 1 != 0)
}
