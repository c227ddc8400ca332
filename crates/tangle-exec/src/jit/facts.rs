//! What the native compiler needs to know of a program before it emits code: which slots ops
//! write, which pointers are known at compile time (the built-in inputs a load names), and
//! which memory op sites the race screen must log.

use crate::program::writes::Writes;
use crate::program::{Function, Op, Program, RegionKind, Slot, Step};
use crate::run::memory::{make_pointer, split_pointer, REGION_INVOCATION};
use std::collections::HashMap;

/// Facts of the entry function.
pub(crate) struct Facts {
    /// Slots some op or phi copy writes; the others hold their template value throughout.
    pub written: Vec<bool>,
    /// Pointers known at compile time: constants, and access chains of constant steps from
    /// them that are the only write of their slot.
    pub known: HashMap<Slot, u64>,
    /// Access chains into a fixed-size part of a buffer ([`Bounded`]), by the slot they
    /// write (their only write).
    pub bounded: HashMap<Slot, Bounded>,
    /// Each 4-byte component of a built-in input, by the pointer a load names it with:
    /// (`spirv::BuiltIn` number, component).
    pub builtins: HashMap<u64, (u32, usize)>,
    /// The variable (buffer or push-constant block) each pointer slot is derived from, where
    /// the chain of defining access chains says so.
    origin: HashMap<Slot, RegionKind>,
    /// The regions the program may write ([`Writes`]: stores, cooperative-matrix stores,
    /// copies and atomics alike), the one rule every path's race log follows.
    writes: Writes,
    /// The buffers every invocation accesses only at its own element ([`own_elements`]).
    own: Vec<RegionKind>,
    /// Every buffer access is logged, those that cannot race included: the bytes each binding
    /// touched are recorded from the log ([`crate::RunOptions::touched`]).
    pub log_all: bool,
}

/// An access chain straight from a buffer variable whose every dynamic index has a length to
/// be checked against (`w[t]` of `float w[16]`): with the indices checked, its pointer is the
/// variable's plus at most `last` bytes, a multiple of 4. One check on entry that an access
/// `last` bytes past the variable's pointer lies inside its buffer then covers every access
/// through the chain, where each access was checked ([`super::compile`]'s
/// `bounded_extents`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounded {
    /// The buffer variable's slot (never written: it holds the buffer's pointer).
    pub var: Slot,
    /// The most bytes past the variable's pointer the chain's pointer may be.
    pub last: u64,
}

/// The [`Bounded`] form of a chain of `steps` from buffer variable `var`, if it has one.
fn bounded(var: Slot, steps: &[Step]) -> Option<Bounded> {
    let mut last = 0u64;
    let mut aligned = true;
    for s in steps {
        let (add, multiple) = match *s {
            Step::Const(c) => (c, c),
            Step::Dyn { count: 0, .. } => return None,
            Step::Dyn { stride, count, .. } => (stride.checked_mul(u64::from(count) - 1)?, stride),
        };
        last = last.checked_add(add)?;
        aligned &= multiple % 4 == 0;
    }
    (aligned && last < 1 << crate::run::memory::OFFSET_BITS).then_some(Bounded { var, last })
}

/// Every slot an op writes (loads of several leaves and dynamic inserts included) and every
/// slot it reads, for the programs the native tier takes ([`crate::wide::slots_of`], whose
/// load and insert name only their first slot); `None` for an op outside them.
pub(crate) fn op_slots(prog: &Program, op: &Op) -> Option<(Vec<Slot>, Vec<Slot>)> {
    let (mut writes, mut reads) = crate::wide::slots_of(op)?;
    match *op {
        Op::Load { dst, ty, .. } | Op::LoadUniform { dst, ty, .. } => {
            let n = prog.leaves_of(ty).len().max(1) as u32;
            writes = (dst..dst.saturating_add(n)).collect();
        }
        Op::InsertDynamic { dst, count, .. } => {
            // One lane's component at its own index: the whole vector is written, and read.
            writes = (dst..dst.saturating_add(count)).collect();
            reads.extend(dst..dst.saturating_add(count));
        }
        _ => {}
    }
    Some((writes, reads))
}

impl Facts {
    /// The facts of `func`, the entry function of `prog`.
    pub(crate) fn of(prog: &Program, func: &Function, groups: [u32; 3]) -> Facts {
        let slots = prog.slots as usize;
        let mut written = vec![false; slots];
        let mut defs: HashMap<Slot, usize> = HashMap::new();
        let mark = |s: Slot, written: &mut Vec<bool>, defs: &mut HashMap<Slot, usize>| {
            if let Some(w) = written.get_mut(s as usize) {
                *w = true;
            }
            *defs.entry(s).or_default() += 1;
        };
        for block in &func.blocks {
            for op in &block.ops {
                for d in op_slots(prog, op).map(|(w, _)| w).unwrap_or_default() {
                    mark(d, &mut written, &mut defs);
                }
            }
            for (_, copies) in &block.phis {
                for &(dst, _) in copies {
                    mark(dst, &mut written, &mut defs);
                }
            }
        }
        let is_written = |s: Slot| written.get(s as usize).copied().unwrap_or(true);
        let mut known: HashMap<Slot, u64> = prog
            .constants
            .iter()
            .filter(|(s, _)| !is_written(*s))
            .copied()
            .collect();
        let mut origin: HashMap<Slot, RegionKind> = prog
            .variables
            .iter()
            .filter(|v| !is_written(v.slot))
            .filter(|v| {
                matches!(
                    v.region,
                    RegionKind::Buffer { .. } | RegionKind::PushConstant
                )
            })
            .map(|v| (v.slot, v.region))
            .collect();
        // Access chains in any order: repeat until nothing new is learnt (each round learns
        // at least one slot, so at most one round per chain).
        let chains: Vec<(Slot, Slot, &[Step])> = func
            .blocks
            .iter()
            .flat_map(|b| &b.ops)
            .filter_map(|op| match op {
                Op::AccessChain { dst, base, steps } if defs.get(dst) == Some(&1) => {
                    Some((*dst, *base, &steps[..]))
                }
                _ => None,
            })
            .collect();
        for _ in 0..=chains.len() {
            let mut learnt = false;
            for &(dst, base, steps) in &chains {
                if !origin.contains_key(&dst) {
                    if let Some(&r) = origin.get(&base) {
                        origin.insert(dst, r);
                        learnt = true;
                    }
                }
                if known.contains_key(&dst) {
                    continue;
                }
                let Some(&p) = known.get(&base) else { continue };
                let mut delta = 0u64;
                for s in steps {
                    match *s {
                        Step::Const(c) => delta = delta.wrapping_add(c),
                        Step::Dyn { .. } => {
                            delta = u64::MAX;
                            break;
                        }
                    }
                }
                if delta != u64::MAX && crate::run::memory::unbound_of(p).is_none() {
                    let (region, off) = split_pointer(p);
                    known.insert(dst, make_pointer(region, off.wrapping_add(delta)));
                    learnt = true;
                }
            }
            if !learnt {
                break;
            }
        }
        let buffer_var = |s: Slot| {
            !is_written(s)
                && prog
                    .variables
                    .iter()
                    .any(|v| v.slot == s && matches!(v.region, RegionKind::Buffer { .. }))
        };
        let bounded = chains
            .iter()
            .filter(|&&(_, base, _)| buffer_var(base))
            .filter_map(|&(dst, base, steps)| Some((dst, bounded(base, steps)?)))
            .collect();
        let mut builtins = HashMap::new();
        for var in &prog.variables {
            if let (RegionKind::Invocation, Some(b)) = (var.region, var.builtin) {
                let size = prog.ty(var.ty).size;
                for (c, at) in (0..size).step_by(4).enumerate() {
                    let ptr = make_pointer(REGION_INVOCATION, var.offset.wrapping_add(at));
                    builtins.insert(ptr, (b, c));
                }
            }
        }
        let writes = Writes::of(prog);
        let own = own_elements(prog, func, groups, &defs, &known, &builtins, &origin);
        Facts {
            written,
            known,
            bounded,
            builtins,
            origin,
            writes,
            own,
            log_all: false,
        }
    }

    /// Whether `ptr` points into a buffer the program never writes ([`Writes`]), or push
    /// constants: what it reads is the same for every invocation and throughout the dispatch.
    pub(crate) fn read_only(&self, ptr: Slot) -> bool {
        match self.origin.get(&ptr) {
            Some(RegionKind::PushConstant) => true,
            Some(&RegionKind::Buffer { set, binding }) => !self.writes.binding(set, binding),
            _ => false,
        }
    }

    /// Whether the race screen must see the accesses of a load or store through `ptr`: every
    /// store, and every load that may read a buffer some store may write (a read of a buffer
    /// nothing writes races with nothing), except in a buffer whose every access is the
    /// invocation's own element (no two invocations touch a byte in common: no race).
    pub(crate) fn logged(&self, ptr: Slot, write: bool) -> bool {
        // A pointer known at compile time into push constants (a loop bound read every
        // iteration) is no buffer.
        if let Some(&p) = self.known.get(&ptr) {
            if split_pointer(p).0 < crate::run::memory::FIRST_BUFFER {
                return false;
            }
        }
        if self.log_all {
            return true;
        }
        if self.origin.get(&ptr).is_some_and(|r| self.own.contains(r)) {
            return false;
        }
        // A race needs a write (SPIR-V "Memory Model", data race: two accesses, "at least one
        // of which is a write"): a load of memory nothing writes races with nothing.
        write || !self.read_only(ptr)
    }
}

/// The buffers in which no two invocations of a dispatch of `groups` touch a byte in common,
/// so that their accesses cannot race: every access of the buffer is a load or store through
/// `buffer + C + gl_GlobalInvocationID.x × S` (one stride `S` for the buffer, the accesses'
/// bytes `[C, C + size)` all inside one window of `S` bytes) in a dispatch whose invocations
/// all have different `x` (one row of invocations: `y` and `z` of the workgroup size and of
/// the dispatch are 1, and `x` does not wrap at 32 bits). Such a buffer's accesses need no
/// race log (`saxpy`'s `y[i] = a * x[i] + y[i]`). Where any access's buffer is unknown, or an
/// op touches memory otherwise (atomics, copies, images, matrices, calls), none.
#[allow(clippy::too_many_arguments)]
fn own_elements(
    prog: &Program,
    func: &Function,
    groups: [u32; 3],
    defs: &HashMap<Slot, usize>,
    known: &HashMap<Slot, u64>,
    builtins: &HashMap<u64, (u32, usize)>,
    origin: &HashMap<Slot, RegionKind>,
) -> Vec<RegionKind> {
    let size = prog.local_size.map(u64::from);
    if size[1] != 1 || size[2] != 1 || groups[1] != 1 || groups[2] != 1 {
        return Vec::new();
    }
    if u64::from(groups[0]) * size[0] > 1 << 32 {
        return Vec::new();
    }
    let ops = || func.blocks.iter().flat_map(|b| &b.ops);
    let once = |s: Slot| defs.get(&s) == Some(&1);
    // Slots holding gl_GlobalInvocationID.x: written once, by the load of it or a copy of one.
    let mut gid: Vec<Slot> = Vec::new();
    for op in ops() {
        if let Op::Load { dst, ptr, .. } = *op {
            let is_x = known.get(&ptr).and_then(|p| builtins.get(p))
                == Some(&(spirv::BuiltIn::GlobalInvocationId as u32, 0));
            if is_x && once(dst) {
                gid.push(dst);
            }
        }
    }
    for _ in 0..=defs.len() {
        let before = gid.len();
        for op in ops() {
            if let Op::Copy { dst, src } = *op {
                if gid.contains(&src) && once(dst) && !gid.contains(&dst) {
                    gid.push(dst);
                }
            }
        }
        if gid.len() == before {
            break;
        }
    }
    // Per access chain defined once: (buffer, constant bytes, stride) when it is of that form.
    let mut chains: HashMap<Slot, (RegionKind, u64, u64)> = HashMap::new();
    for op in ops() {
        let Op::AccessChain {
            dst,
            base,
            ref steps,
        } = *op
        else {
            continue;
        };
        let Some(&region @ RegionKind::Buffer { .. }) = origin.get(&base) else {
            continue;
        };
        let is_var = prog.variables.iter().any(|v| v.slot == base) && !defs.contains_key(&base);
        if !once(dst) || !is_var {
            continue;
        }
        let (mut c, mut stride) = (0u64, None);
        for step in steps.iter() {
            match *step {
                Step::Const(k) => c = c.wrapping_add(k),
                Step::Dyn {
                    index,
                    bits: 32,
                    stride: s,
                    ..
                } if gid.contains(&index) && stride.is_none() && s > 0 && s < 1 << 16 => {
                    stride = Some(s)
                }
                _ => stride = Some(0),
            }
        }
        if let Some(s) = stride.filter(|&s| s > 0) {
            chains.insert(dst, (region, c, s));
        }
    }
    // Per buffer: its stride and the lowest and highest byte its accesses touch in a window.
    // (stride, lowest byte, past the highest byte) of one buffer's accesses so far.
    type Window = Option<(u64, u64, u64)>;
    let mut seen: Vec<(RegionKind, Window)> = Vec::new();
    let mut note = |r: RegionKind, access: Option<(u64, u64, u64)>| match seen
        .iter_mut()
        .find(|(x, _)| *x == r)
    {
        Some((_, a)) => {
            *a = match (*a, access) {
                (Some((s, lo, hi)), Some((s2, lo2, hi2))) if s == s2 => {
                    Some((s, lo.min(lo2), hi.max(hi2)))
                }
                _ => None,
            }
        }
        None => seen.push((r, access)),
    };
    for op in ops() {
        let (ptr, ty) = match *op {
            Op::Load { ptr, ty, .. }
            | Op::LoadUniform { ptr, ty, .. }
            | Op::Store { ptr, ty, .. } => (ptr, ty),
            Op::CopyMemory { .. }
            | Op::Atomic { .. }
            | Op::UndefMemory { .. }
            | Op::Image(_)
            | Op::Coopmat(_)
            | Op::Call { .. } => return Vec::new(),
            _ => continue,
        };
        if let Some(&p) = known.get(&ptr) {
            if split_pointer(p).0 < crate::run::memory::FIRST_BUFFER {
                continue;
            }
        }
        let Some(&region) = origin.get(&ptr) else {
            return Vec::new();
        };
        let bytes = prog.ty(ty).size;
        let access = chains
            .get(&ptr)
            .filter(|&&(r, _, _)| r == region)
            .and_then(|&(_, c, s)| Some((s, c, c.checked_add(bytes)?)));
        note(region, access);
    }
    seen.into_iter()
        .filter_map(|(r, a)| a.filter(|&(s, lo, hi)| hi - lo <= s).map(|_| r))
        .collect()
}
