//! Which buffers and images a program may write: the regions a dispatch must write back to
//! the caller's bytes, and the ones whose backup a fast path that gives up must restart from
//! ([`crate::run::resident`]). The same analysis follows other kinds of access
//! ([`Accesses`]): whether cooperative-matrix and plain accesses may meet in one buffer
//! ([`matrix_meets_plain`]).
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

/// Whether a cooperative-matrix store and a plain access, or a cooperative-matrix load and a
/// plain write, may touch the same buffer. Which invocation holds which element of a matrix is
/// implementation-defined, so the race check counts a matrix access as made by any invocation
/// of its subgroup ([`crate::check::race::MATRIX`]); the fast paths' race screens know each
/// element's owner under the run's layout only, so a dispatch of such a program with the race
/// check on runs on the reference path ([`crate::run::dispatch`]).
pub fn matrix_meets_plain(prog: &Program) -> bool {
    let has_matrix = prog.functions.iter().any(|f| {
        f.blocks
            .iter()
            .any(|b| b.ops.iter().any(|op| matches!(op, Op::Coopmat(_))))
    });
    if !has_matrix {
        return false;
    }
    let reach = |which| Writes::reached(prog, which);
    reach(Accesses::MatrixStores).meets(&reach(Accesses::Plain))
        || reach(Accesses::Matrix).meets(&reach(Accesses::PlainWrites))
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

/// Which accesses' pointers an analysis follows ([`Writes::reached`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accesses {
    /// Every write (stores, copies' destinations, atomics other than loads, cooperative-matrix
    /// stores): the regions a dispatch must write back.
    Writes,
    /// Cooperative-matrix stores.
    MatrixStores,
    /// Cooperative-matrix loads and stores.
    Matrix,
    /// Writes other than cooperative-matrix stores.
    PlainWrites,
    /// Reads and writes other than cooperative-matrix ones.
    Plain,
}

/// The kind of one access an op makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Made {
    PlainRead,
    PlainWrite,
    MatrixRead,
    MatrixWrite,
}

impl Accesses {
    fn takes(self, made: Made) -> bool {
        match self {
            Accesses::Writes => matches!(made, Made::PlainWrite | Made::MatrixWrite),
            Accesses::MatrixStores => made == Made::MatrixWrite,
            Accesses::Matrix => matches!(made, Made::MatrixRead | Made::MatrixWrite),
            Accesses::PlainWrites => made == Made::PlainWrite,
            Accesses::Plain => matches!(made, Made::PlainRead | Made::PlainWrite),
        }
    }
}

impl Writes {
    /// The regions `prog` may write.
    pub fn of(prog: &Program) -> Writes {
        Writes::reached(prog, Accesses::Writes)
    }

    /// The regions the accesses `which` of `prog` may reach (a [`Writes`] of those accesses).
    pub fn reached(prog: &Program, which: Accesses) -> Writes {
        let mut defs = Defs::default();
        let mut roots: Vec<Slot> = Vec::new();
        let mut w = Writes::default();
        for func in &prog.functions {
            for block in &func.blocks {
                for &(dst, src) in block.phis.iter().flat_map(|(_, c)| c) {
                    defs.from.entry(dst).or_default().push(src);
                }
                for op in &block.ops {
                    if !w.op(prog, op, &mut defs, &mut |made, ptr| {
                        if which.takes(made) {
                            roots.push(ptr)
                        }
                    }) {
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
    fn op(
        &mut self,
        prog: &Program,
        op: &Op,
        defs: &mut Defs,
        access: &mut dyn FnMut(Made, Slot),
    ) -> bool {
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
            Op::Store { ptr, .. } => access(Made::PlainWrite, ptr),
            Op::CopyMemory { dst, src, .. } => {
                access(Made::PlainWrite, dst);
                access(Made::PlainRead, src);
            }
            Op::Atomic { op, dst, ptr, .. } => {
                if op == super::AtomicOp::Load {
                    access(Made::PlainRead, ptr);
                } else {
                    access(Made::PlainWrite, ptr);
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
                match **c {
                    CoopmatInst::Store { ref at, .. } => access(Made::MatrixWrite, at.ptr),
                    CoopmatInst::Load { ref at, .. } => access(Made::MatrixRead, at.ptr),
                    _ => {}
                }
                defs.opaque.extend(c.slots().0);
            }
            Op::Load { dst, ty, ptr } | Op::LoadUniform { dst, ty, ptr } => {
                access(Made::PlainRead, ptr);
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

    /// Whether a region may be both in `self` and in `other` (conservative: a pointer the
    /// analysis cannot follow, or a constant pointer, may meet anything of the other's).
    pub fn meets(&self, other: &Writes) -> bool {
        let empty = |w: &Writes| w.bindings.is_empty() && w.regions.is_empty() && !w.images;
        if empty(self) && !self.any || empty(other) && !other.any {
            return false;
        }
        self.any
            || other.any
            || (self.images && other.images)
            || self.bindings.intersection(&other.bindings).next().is_some()
            || !self.regions.is_empty()
            || !other.regions.is_empty()
    }

    /// Whether the program may write every region (it writes through a pointer the analysis
    /// cannot follow, such as a `PhysicalStorageBuffer` pointer).
    pub fn any(&self) -> bool {
        self.any
    }
}
