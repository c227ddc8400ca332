//! Which buffers and images a program may write: the regions a dispatch must write back to
//! the caller's bytes, and the ones whose backup a fast path that gives up must restart from
//! ([`crate::run::resident`]).
//!
//! Conservative by construction. Every op that writes memory names a pointer slot (a store, a
//! copy's destination, an atomic other than a load, a cooperative-matrix store); the regions
//! that slot may point into are found by following its definitions backwards through the ops
//! that only move or offset a pointer (copies, selects, phis, access chains, call arguments),
//! down to the register template's values (a buffer variable's address, a constant whose value
//! names a region) and to [`Op::Descriptor`]s (every element of their array). A pointer from
//! anything else (a load, `OpConvertUToPtr` of a computed integer, a subgroup operation, a
//! call's result, an op this file does not know) may be any buffer's device address, as a
//! `PhysicalStorageBuffer` pointer may: then every region may be written.

use super::{Op, Program, RegionKind, Slot};
use crate::run::coopmat::CoopmatInst;
use crate::run::image::ImageInst;
use crate::run::memory::{split_pointer, FIRST_BUFFER};
use std::collections::{BTreeSet, HashMap};

/// The regions a program may write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// Some write goes through a pointer the analysis cannot follow: every region.
    any: bool,
    /// Buffers written through their binding's variable or descriptor array: `(set, binding)`.
    bindings: BTreeSet<(u32, u32)>,
    /// Regions written through constant pointers: the region's number in the pointer
    /// ([`crate::run::memory::make_pointer`]).
    regions: BTreeSet<u64>,
    /// Some image write or texel pointer: every image (images are few and small; not told apart).
    images: bool,
}

/// Where a slot's pointer value may come from, one definition at a time.
#[derive(Default)]
struct Defs {
    /// Slot → slots whose value it may take unchanged or offset.
    from: HashMap<Slot, Vec<Slot>>,
    /// Slot → descriptor arrays an [`Op::Descriptor`] picks its value from.
    arrays: HashMap<Slot, Vec<u32>>,
    /// Slots some other op writes: any value.
    opaque: BTreeSet<Slot>,
}

impl Writes {
    /// The regions `prog` may write.
    pub fn of(prog: &Program) -> Writes {
        let mut defs = Defs::default();
        let mut roots: Vec<Slot> = Vec::new();
        let mut w = Writes::default();
        for func in &prog.functions {
            for block in &func.blocks {
                for &(dst, src) in block.phis.iter().flat_map(|(_, c)| c) {
                    defs.from.entry(dst).or_default().push(src);
                }
                for op in &block.ops {
                    if !w.op(prog, op, &mut defs, &mut roots) {
                        w.any = true;
                        return w;
                    }
                }
            }
        }
        w.follow(prog, &defs, roots);
        w
    }

    /// Records what `op` defines and, if it writes memory, the pointer it writes through.
    /// `false` for an op whose slots this file does not know.
    fn op(&mut self, prog: &Program, op: &Op, defs: &mut Defs, roots: &mut Vec<Slot>) -> bool {
        let mut derive = |dst: Slot, from: &[Slot]| defs.from.entry(dst).or_default().extend(from);
        match *op {
            Op::Copy { dst, src } => derive(dst, &[src]),
            // The condition is no pointer.
            Op::Select { dst, a, b, .. } => derive(dst, &[a, b]),
            Op::AccessChain { dst, base, .. } => derive(dst, &[base]),
            Op::Call {
                ref args,
                dst,
                count,
                ..
            } => {
                for &(param, src) in args.iter() {
                    derive(param, &[src]);
                }
                defs.opaque.extend(dst..dst.saturating_add(count));
            }
            Op::Descriptor { dst, array, .. } => defs.arrays.entry(dst).or_default().push(array),
            Op::Store { ptr, .. } => roots.push(ptr),
            Op::CopyMemory { dst, .. } => roots.push(dst),
            Op::Atomic { op, dst, ptr, .. } => {
                if op != super::AtomicOp::Load {
                    roots.push(ptr);
                }
                defs.opaque.insert(dst);
            }
            Op::ArrayLength { dst, .. } => {
                defs.opaque.insert(dst);
            }
            Op::UndefMemory { .. }
            | Op::Undef { .. }
            | Op::CheckDivision { .. }
            | Op::CheckShift { .. }
            | Op::CheckRemainderSign { .. }
            | Op::CheckWrap { .. }
            | Op::CheckDomain { .. }
            | Op::ControlBarrier { .. }
            | Op::Fence { .. }
            | Op::SubgroupBarrier { .. } => {}
            Op::Image(ref i) => {
                let (dst, count) = match **i {
                    ImageInst::Write { .. } => {
                        self.images = true;
                        (0, 0)
                    }
                    ImageInst::TexelPointer { dst, .. } => {
                        // Atomics through it write the image; its value is followed no further.
                        self.images = true;
                        (dst, 1)
                    }
                    ImageInst::Read { dst, count, .. }
                    | ImageInst::Sample { dst, count, .. }
                    | ImageInst::QuerySize { dst, count, .. } => (dst, count),
                    ImageInst::Combine { dst, .. } => (dst, 1),
                };
                defs.opaque.extend(dst..dst.saturating_add(count));
            }
            Op::Coopmat(ref c) => {
                if let CoopmatInst::Store { ref at, .. } = **c {
                    roots.push(at.ptr);
                }
                defs.opaque.extend(c.slots().0);
            }
            Op::Load { dst, ty, .. } | Op::LoadUniform { dst, ty, .. } => {
                // A pointer loaded from memory may be any address.
                let n = prog.leaves_of(ty).len().max(1) as u32;
                defs.opaque.extend(dst..dst.saturating_add(n));
            }
            Op::InsertDynamic { dst, count, .. } => {
                defs.opaque.extend(dst..dst.saturating_add(count));
            }
            // Every other op computes values: whatever it writes may be any pointer.
            _ => match crate::wide::slots_of(op) {
                Some((writes, _)) => defs.opaque.extend(writes),
                None => return false,
            },
        }
        true
    }

    /// Adds the regions the written-through pointers `roots` may reach.
    fn follow(&mut self, prog: &Program, defs: &Defs, roots: Vec<Slot>) {
        // The template's value of each slot (what a slot holds before any op writes it).
        let mut template: HashMap<Slot, Vec<u64>> = HashMap::new();
        for &(slot, v) in &prog.constants {
            template.entry(slot).or_default().push(v);
        }
        let mut variables: HashMap<Slot, Vec<RegionKind>> = HashMap::new();
        for var in &prog.variables {
            variables.entry(var.slot).or_default().push(var.region);
        }
        let mut seen: BTreeSet<Slot> = BTreeSet::new();
        let mut stack = roots;
        while let Some(s) = stack.pop() {
            if !seen.insert(s) {
                continue;
            }
            if defs.opaque.contains(&s) {
                self.any = true;
                return;
            }
            for &v in template.get(&s).into_iter().flatten() {
                // A constant's value names its region exactly; one below the buffers (invocation,
                // workgroup, push constants) or past them is no buffer.
                let region = split_pointer(v).0;
                if region >= FIRST_BUFFER {
                    self.regions.insert(region);
                }
            }
            for region in variables.get(&s).into_iter().flatten() {
                match *region {
                    RegionKind::Buffer { set, binding } => {
                        self.bindings.insert((set, binding));
                    }
                    RegionKind::Image { .. } | RegionKind::Sampler { .. } => self.images = true,
                    // Their slots hold constants (above) or point into no memory.
                    RegionKind::Invocation
                    | RegionKind::Workgroup
                    | RegionKind::PushConstant
                    | RegionKind::DescriptorArray { .. } => {}
                }
            }
            for &a in defs.arrays.get(&s).into_iter().flatten() {
                match prog.descriptor_arrays.get(a as usize) {
                    Some(d) => {
                        self.bindings.insert((d.set, d.binding));
                        if !matches!(d.kind, super::DescriptorKind::Buffer) {
                            self.images = true;
                        }
                    }
                    None => {
                        self.any = true;
                        return;
                    }
                }
            }
            stack.extend(defs.from.get(&s).into_iter().flatten().copied());
        }
    }

    /// Whether the program may write the dispatch's region `index` (its place among the
    /// regions, [`crate::run::memory::FIRST_BUFFER`] `+ index` in a pointer), bound at
    /// `(set, binding)`, an image or not.
    pub fn region(&self, index: usize, (set, binding): (u32, u32), image: bool) -> bool {
        self.any
            || (image && self.images)
            || self.bindings.contains(&(set, binding))
            || self.regions.contains(&(FIRST_BUFFER + index as u64))
    }

    /// Whether the program may write the buffer at `(set, binding)`, whatever region it is
    /// (a constant pointer into some region counts for every buffer).
    pub fn binding(&self, set: u32, binding: u32) -> bool {
        self.any || !self.regions.is_empty() || self.bindings.contains(&(set, binding))
    }

    /// Whether the program may write every region (it writes through a pointer the analysis
    /// cannot follow, such as a `PhysicalStorageBuffer` pointer).
    pub fn any(&self) -> bool {
        self.any
    }
}
