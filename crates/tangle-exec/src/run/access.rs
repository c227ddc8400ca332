//! Executing memory ops over a tangle's lanes: pointer resolution with bounds checks (and,
//! under a robustness feature, what an access outside a buffer does instead:
//! [`crate::check::robust`]; through a null descriptor: [`crate::check::null`]), loads and stores through a type's memory image, access chains,
//! `OpArrayLength` and atomics.

use super::alu::{bits_of, full_mask, lanes_of, rd, wr};
use super::memory::{self as m, split_pointer, View, Words};
use crate::check::race;
use crate::check::robust::{self, RobustChoice, Robustness};
use crate::program::{
    AtomicOp, DescriptorArray, DescriptorKind, Leaf, Op, Program, Slot, Span, Step, TypeIdx,
};
use crate::report::Finding;
use crate::semantics::{float, mask as mask_of, sign_extend};

/// Which descriptor a buffer region is: `(set, binding)`, and the element of a descriptor array.
pub type BufferKey = (u32, u32, Option<u32>);

/// A descriptor array with the pointers (image or sampler handles) of its bound elements,
/// sorted by element.
pub type DescriptorTable = (DescriptorArray, Vec<(u32, u64)>);

/// The memory one subgroup sees.
pub struct Mem<'a> {
    /// The dispatch's regions ([`super::resident::Resident`]): buffers in `Resources::buffers`
    /// order, then the elements of descriptor arrays in `Resources::elements` order, the
    /// views of shared allocations, then images.
    pub buffers: &'a [(View, BufferKey)],
    /// The descriptor arrays of the program, as [`crate::program::Program::descriptor_arrays`]
    /// orders them, each with its bound elements' pointers sorted by element.
    pub descriptors: &'a [DescriptorTable],
    /// For each region of `buffers` that holds an image's texels, what the image is.
    pub images: &'a [Option<super::image::ImageView>],
    /// The dispatch's samplers; a sampler's handle is its index plus 1.
    pub samplers: &'a [crate::semantics::sampler::Sampler],
    /// Push constants.
    pub push: &'a Words,
    /// This workgroup's memory.
    pub workgroup: &'a Words,
    /// This subgroup's per-invocation memory (`lanes × invocation_bytes`).
    pub invocation: &'a Words,
    /// Bytes per invocation.
    pub invocation_bytes: u64,
    /// The race check's log, when it is on.
    pub races: Option<&'a std::cell::RefCell<crate::check::race::RaceLog>>,
    /// The workgroup memory written so far, when the uninitialised-value check is on.
    pub written: Option<&'a std::cell::RefCell<crate::check::uninit::Shadow>>,
    /// The buffer robustness in force and the outcome the policy picks where it leaves a
    /// choice ([`crate::check::robust`]).
    pub robust: (Robustness, RobustChoice),
    /// `robustImageAccess2`: an image access outside the image is defined
    /// ([`super::image`]).
    pub image_robust: bool,
    /// `cooperativeMatrixRobustBufferAccess`: cooperative-matrix loads and stores outside a
    /// buffer follow [`Mem::robust`] ([`super::coopmat`]).
    pub coopmat_robust: bool,
    /// `nullDescriptor`: an access through a null descriptor is defined
    /// ([`crate::check::null`]).
    pub null_descriptor: bool,
}

/// Where an access outside its buffer goes under robustness ([`Mem::out_of_range`]).
pub struct Robust<'a> {
    /// The bytes in the range it uses instead (region words, offset, the pointer to them);
    /// `None`: a load gives zero, a store or atomic changes nothing.
    pub at: Option<(&'a Words, u64, u64)>,
    /// A `robust-access` warning, where the outcome is the implementation's choice.
    pub warning: Option<Finding>,
}

/// A finding for one lane.
pub type LaneFinding = (usize, Finding);

/// The name of a memory region in findings (`buffer (set 0, binding 1)`, `image (set 0,
/// binding 2)`, `buffer (set 0, binding 0, array element 3)`).
pub fn region_name(
    buffers: &[(View, BufferKey)],
    images: &[Option<super::image::ImageView>],
    region: u64,
) -> String {
    match region {
        m::REGION_INVOCATION => "invocation memory".to_string(),
        m::REGION_WORKGROUP => "workgroup memory".to_string(),
        m::REGION_PUSH => "push constants".to_string(),
        r => {
            let i = r.wrapping_sub(m::FIRST_BUFFER) as usize;
            let image = images.get(i).is_some_and(Option::is_some);
            match buffers.get(i) {
                Some((_, (s, b, None))) if image => format!("image (set {s}, binding {b})"),
                Some((_, (s, b, Some(e)))) if image => {
                    format!("image (set {s}, binding {b}, array element {e})")
                }
                Some((_, (s, b, None))) => format!("buffer (set {s}, binding {b})"),
                Some((_, (s, b, Some(e)))) => {
                    format!("buffer (set {s}, binding {b}, array element {e})")
                }
                None => "no memory".to_string(),
            }
        }
    }
}

/// The pointer the race checks key `ptr`'s bytes by, `buffers` being the dispatch's regions:
/// where its region shares bytes with another region, byte `o` of it is byte `o + delta` of
/// the run's first region ([`View::alias`]), so the same bytes through either view are the
/// same key, on the reference path ([`Mem::race_key`]) and in the fast paths' race screens
/// ([`crate::wide::races::Gather::rekey`]) alike.
pub(crate) fn race_key(buffers: &[(View, BufferKey)], ptr: u64) -> u64 {
    let (region, off) = split_pointer(ptr);
    let alias = region
        .checked_sub(m::FIRST_BUFFER)
        .and_then(|i| buffers.get(usize::try_from(i).ok()?))
        .and_then(|(v, _)| v.alias);
    match alias {
        Some((canonical, delta)) => m::make_pointer(canonical, off.wrapping_add(delta)),
        None => ptr,
    }
}

impl<'a> Mem<'a> {
    fn region_name(&self, region: u64) -> String {
        region_name(self.buffers, self.images, region)
    }

    /// Whether [`Mem::log`] records anything (the race or uninitialised-value check is on): the
    /// fast paths then log each lane's access as the lane-by-lane path does.
    pub fn logging(&self) -> bool {
        self.races.is_some() || self.written.is_some()
    }

    /// The pointer the race check keys `ptr`'s bytes by: where the region shares bytes with
    /// another region of the dispatch, the same bytes through either are the same key
    /// ([`View::alias`]), so two views of one allocation race as one buffer would.
    pub fn race_key(&self, ptr: u64) -> u64 {
        race_key(self.buffers, ptr)
    }

    /// Logs an access for the race check ([`crate::check::race`]) and a write for the
    /// uninitialised-value check ([`crate::check::uninit`]) when they are on.
    pub fn log(&self, lane: usize, ptr: u64, len: u64, class: u8) {
        // Only Workgroup memory and buffers are logged: invocation memory and push constants
        // are no one else's to race with, nor Workgroup memory to leave unwritten.
        let region = split_pointer(ptr).0;
        if region != m::REGION_WORKGROUP && region < m::FIRST_BUFFER {
            return;
        }
        if let Some(r) = self.races {
            r.borrow_mut().access(lane, self.race_key(ptr), len, class);
        }
        if let (Some(w), true) = (self.written, class & race::WRITE != 0) {
            let (region, off) = split_pointer(ptr);
            if region == m::REGION_WORKGROUP {
                w.borrow_mut().write(off, len);
            }
        }
    }

    /// The finding of an access through element `index` of descriptor array `array`, which
    /// has nothing bound (or lies outside the array).
    pub fn unbound(&self, array: u32, index: i64, address: u64) -> Finding {
        match self.descriptors.get(array as usize) {
            Some((a, _)) => Finding::UnboundDescriptor {
                set: a.set,
                binding: a.binding,
                index,
                count: a.count,
            },
            None => Finding::BadPointer { address },
        }
    }

    /// The finding of using `handle`, a pointer or image handle into no memory: an unbound
    /// element of a descriptor array ([`m::unbound_pointer`]) is named with its binding and
    /// index.
    pub fn no_memory(&self, handle: u64) -> Finding {
        match m::unbound_of(handle) {
            Some((array, index)) => self.unbound(array, index, handle),
            None => Finding::BadPointer { address: handle },
        }
    }

    /// The region and absolute offset of an access of `len` bytes at `ptr` by `lane`.
    pub fn resolve(&self, ptr: u64, lane: usize, len: u64) -> Result<(&'a Words, u64), Finding> {
        if m::unbound_of(ptr).is_some() {
            return Err(self.no_memory(ptr));
        }
        let (region, off) = split_pointer(ptr);
        let (words, base, size) = match region {
            m::REGION_INVOCATION => (
                self.invocation,
                lane as u64 * self.invocation_bytes,
                self.invocation_bytes,
            ),
            m::REGION_WORKGROUP => (self.workgroup, 0, self.workgroup.len()),
            m::REGION_PUSH => (self.push, 0, self.push.len()),
            r => match self.buffers.get((r.wrapping_sub(m::FIRST_BUFFER)) as usize) {
                Some((v, _)) => (&*v.words, v.base, v.len),
                None => return Err(Finding::BadPointer { address: ptr }),
            },
        };
        if off.checked_add(len).is_some_and(|e| e <= size) {
            Ok((words, base + off))
        } else {
            Err(Finding::OutOfBounds {
                region: self.region_name(region),
                offset: off,
                len,
                size,
            })
        }
    }

    /// The region and absolute offset of a whole value of type `ty` at `ptr` by `lane`: only
    /// the bytes of its scalars ([`Program::spans_of`]) need lie inside the region, not the
    /// padding between and after them. Where some lie outside, the access is dropped whole and
    /// the finding names the bytes from the first scalar outside to the end of the last one.
    pub fn resolve_value(
        &self,
        ptr: u64,
        lane: usize,
        (p, ty): (&Program, TypeIdx),
    ) -> Result<(&'a Words, u64), Finding> {
        let spans = p.spans_of(ty);
        let end = spans.last().map_or(0, |&(o, l)| o.saturating_add(l));
        match self.resolve(ptr, lane, end) {
            Err(Finding::OutOfBounds {
                region,
                offset,
                len,
                size,
            }) => {
                let mut parts: Vec<Span> = p
                    .leaves_of(ty)
                    .iter()
                    .map(|l| (l.offset, u64::from(l.bytes)))
                    .collect();
                if parts.is_empty() {
                    parts = spans.to_vec();
                }
                let outside = parts
                    .iter()
                    .filter(|&&(o, l)| offset.saturating_add(o).saturating_add(l) > size);
                let first = outside.clone().map(|&(o, _)| o).min().unwrap_or(0);
                let last = outside
                    .map(|&(o, l)| o.saturating_add(l))
                    .max()
                    .unwrap_or(len);
                Err(Finding::OutOfBounds {
                    region,
                    offset: offset.saturating_add(first),
                    len: last.saturating_sub(first),
                    size,
                })
            }
            r => r,
        }
    }

    /// An access of `len` bytes at `ptr` that [`Mem::resolve`] or [`Mem::resolve_value`] found
    /// outside its region (`f`): under a robustness feature, on a storage or uniform buffer,
    /// what it does instead and the warning to report, if any; otherwise `f` (undefined
    /// behaviour).
    pub fn out_of_range(
        &self,
        ptr: u64,
        len: u64,
        access: robust::Access,
        f: Finding,
    ) -> Result<Robust<'a>, Finding> {
        let (region, off) = split_pointer(ptr);
        let i = region.wrapping_sub(m::FIRST_BUFFER) as usize;
        if let Some(key) = self.null_key(ptr) {
            // Bound to nothing: zero, or nothing changed, whatever the robustness.
            crate::check::null::access(self.null_descriptor, key)?;
            return Ok(Robust {
                at: None,
                warning: None,
            });
        }
        let image = self.images.get(i).is_some_and(Option::is_some);
        if region >= m::FIRST_BUFFER && image && self.image_robust {
            // An image atomic outside the image (`OpImageTexelPointer`): robustImageAccess2's
            // "atomic operations from images will return zero values" and change nothing.
            return Ok(Robust {
                at: None,
                warning: None,
            });
        }
        let buffer = region >= m::FIRST_BUFFER && !image;
        let (Some((view, _)), true) = (self.buffers.get(i), buffer) else {
            return Err(f);
        };
        let (robustness, choice) = self.robust;
        let Some(o) = robust::outcome(robustness, choice, access, off, len, view.len) else {
            return Err(f);
        };
        let warning = match (o.warning, f) {
            (
                Some(reason),
                Finding::OutOfBounds {
                    region,
                    offset,
                    len,
                    size,
                },
            ) => Some(Finding::RobustAccess {
                region,
                offset,
                len,
                size,
                what: robust::describe(access, &o, reason),
            }),
            _ => None,
        };
        Ok(Robust {
            at: o
                .at
                .map(|at| (&*view.words, view.base + at, m::make_pointer(region, at))),
            warning,
        })
    }

    /// The descriptor `ptr` points through when that is a null descriptor
    /// ([`crate::Resources::null_buffers`]).
    pub fn null_key(&self, ptr: u64) -> Option<BufferKey> {
        let (region, _) = split_pointer(ptr);
        let i = usize::try_from(region.checked_sub(m::FIRST_BUFFER)?).ok()?;
        let (view, key) = self.buffers.get(i)?;
        view.null.then_some(*key)
    }

    /// The bytes a load or store (`access`) of a whole value of type `ty` at `ptr` by `lane`
    /// uses, logged for the race and uninitialised-value checks: in bounds, the range's bytes
    /// robustness substitutes, or `None` (a load gives zero, a store does nothing), with any
    /// finding pushed to `found`.
    pub fn place(
        &self,
        ptr: u64,
        lane: usize,
        (p, ty): (&Program, TypeIdx),
        access: robust::Access,
        found: &mut Vec<LaneFinding>,
    ) -> Option<(&'a Words, u64)> {
        let spans = p.spans_of(ty);
        let class = match access {
            robust::Access::Load => race::READ,
            _ => race::WRITE,
        };
        match self.resolve_value(ptr, lane, (p, ty)) {
            Ok(at) => {
                self.log_value(lane, ptr, spans, class);
                Some(at)
            }
            Err(f) => {
                let len = spans.last().map_or(0, |&(o, l)| o.saturating_add(l));
                match self.out_of_range(ptr, len, access, f) {
                    Ok(r) => {
                        if let Some(w) = r.warning {
                            found.push((lane, w));
                        }
                        let (words, off, at) = r.at?;
                        self.log_value(lane, at, spans, class);
                        Some((words, off))
                    }
                    Err(f) => {
                        found.push((lane, f));
                        None
                    }
                }
            }
        }
    }

    /// [`Mem::log`] of a whole value's bytes (`spans`) at `ptr`, which
    /// [`Mem::resolve_value`] found in bounds: padding is neither read nor written.
    pub fn log_value(&self, lane: usize, ptr: u64, spans: &[Span], class: u8) {
        if self.logging() {
            for &(o, l) in spans {
                self.log(lane, ptr.wrapping_add(o), l, class);
            }
        }
    }

    /// The size of the region `ptr` points into, minus its offset.
    fn remaining(&self, ptr: u64) -> u64 {
        let (region, off) = split_pointer(ptr);
        let size = match region {
            m::REGION_INVOCATION => self.invocation_bytes,
            m::REGION_WORKGROUP => self.workgroup.len(),
            m::REGION_PUSH => self.push.len(),
            r => self
                .buffers
                .get((r.wrapping_sub(m::FIRST_BUFFER)) as usize)
                .map_or(0, |(v, _)| v.len),
        };
        size.saturating_sub(off)
    }
}

/// The byte offset one access-chain step adds, `index` giving a lane's value of a slot: a
/// constant, or the index (sign-extended when signed, the offset wrapping) times the stride.
#[inline(always)]
pub fn step_delta(step: &Step, index: impl Fn(Slot) -> u64) -> u64 {
    match *step {
        Step::Const(c) => c,
        Step::Dyn {
            index: slot,
            bits,
            signed,
            stride,
            ..
        } => {
            let i = index(slot) & mask_of(bits);
            let i = if signed {
                sign_extend(bits, i) as u64
            } else {
                i
            };
            i.wrapping_mul(stride)
        }
    }
}

/// Executes a memory op for the lanes in `mask`; findings go to `found`. Returns `false` for ops
/// that are not memory ops.
pub fn exec_memory(
    p: &Program,
    op: &Op,
    regs: &mut [u64],
    n: usize,
    mask: u128,
    mem: &Mem<'_>,
    found: &mut Vec<LaneFinding>,
) -> bool {
    // (`p` is each lane's pointer below.)
    let prog = p;
    match op {
        Op::Load { dst, ptr, ty } => {
            let leaves = p.leaves_of(*ty);
            if let Some(off) = invocation_at(regs, n, mask, *ptr, (prog, *ty), mem) {
                for (i, leaf) in leaves.iter().enumerate() {
                    for l in bits_of(mask, n) {
                        let at = l as u64 * mem.invocation_bytes + off + leaf.offset;
                        let v = mem.invocation.read(at, leaf.bytes);
                        let v = if leaf.boolean { u64::from(v != 0) } else { v };
                        wr(regs, n, dst + i as u32, l, v);
                    }
                }
                return true;
            }
            if let [leaf] = leaves {
                if load_run(regs, n, mask, (*dst, *ptr), leaf, mem) {
                    return true;
                }
                // One scalar: the common case, without the per-component loop.
                for l in bits_of(mask, n) {
                    let p = rd(regs, n, *ptr, l);
                    let v = match mem.place(p, l, (prog, *ty), robust::Access::Load, found) {
                        Some((w, off)) => {
                            let v = w.read(off + leaf.offset, leaf.bytes);
                            if leaf.boolean {
                                u64::from(v != 0)
                            } else {
                                v
                            }
                        }
                        None => 0,
                    };
                    wr(regs, n, *dst, l, v);
                }
                return true;
            }
            for l in bits_of(mask, n) {
                let p = rd(regs, n, *ptr, l);
                match mem.place(p, l, (prog, *ty), robust::Access::Load, found) {
                    Some((w, off)) => {
                        for (i, leaf) in leaves.iter().enumerate() {
                            let mut v = w.read(off + leaf.offset, leaf.bytes);
                            if leaf.boolean {
                                v = u64::from(v != 0);
                            }
                            wr(regs, n, dst + i as u32, l, v);
                        }
                    }
                    None => {
                        for i in 0..leaves.len() {
                            wr(regs, n, dst + i as u32, l, 0);
                        }
                    }
                }
            }
        }
        Op::LoadUniform { dst, ptr, ty } => {
            let leaves = p.leaves_of(*ty);
            let Some(l0) = bits_of(mask, n).next() else {
                return true;
            };
            let spans = p.spans_of(*ty);
            match mem.resolve_value(rd(regs, n, *ptr, l0), l0, (prog, *ty)) {
                Ok((w, off)) => {
                    if mem.races.is_some() {
                        for l in bits_of(mask, n) {
                            mem.log_value(l, rd(regs, n, *ptr, l), spans, race::READ);
                        }
                    }
                    for (i, leaf) in leaves.iter().enumerate() {
                        let mut v = w.read(off + leaf.offset, leaf.bytes);
                        if leaf.boolean {
                            v = u64::from(v != 0);
                        }
                        for l in bits_of(mask, n) {
                            wr(regs, n, dst + i as u32, l, v);
                        }
                    }
                }
                // Each lane as a load of its own: reported, or what robustness makes of it.
                Err(_) => {
                    for l in bits_of(mask, n) {
                        let p = rd(regs, n, *ptr, l);
                        let at = mem.place(p, l, (prog, *ty), robust::Access::Load, found);
                        for (i, leaf) in leaves.iter().enumerate() {
                            let v = at.map_or(0, |(w, off)| w.read(off + leaf.offset, leaf.bytes));
                            let v = if leaf.boolean { u64::from(v != 0) } else { v };
                            wr(regs, n, dst + i as u32, l, v);
                        }
                    }
                }
            }
        }
        Op::Store { ptr, src, ty } => {
            let leaves = p.leaves_of(*ty);
            if let Some(off) = invocation_at(regs, n, mask, *ptr, (prog, *ty), mem) {
                for l in bits_of(mask, n) {
                    let base = l as u64 * mem.invocation_bytes + off;
                    for (i, leaf) in leaves.iter().enumerate() {
                        let v = rd(regs, n, src + i as u32, l);
                        mem.invocation.write(base + leaf.offset, leaf.bytes, v);
                    }
                }
                return true;
            }
            if let [leaf] = leaves {
                if store_run(regs, n, mask, (*src, *ptr), leaf, mem) {
                    return true;
                }
            }
            for l in bits_of(mask, n) {
                let p = rd(regs, n, *ptr, l);
                if let Some((w, off)) = mem.place(p, l, (prog, *ty), robust::Access::Store, found) {
                    for (i, leaf) in leaves.iter().enumerate() {
                        w.write(
                            off + leaf.offset,
                            leaf.bytes,
                            rd(regs, n, src + i as u32, l),
                        );
                    }
                }
            }
        }
        Op::Descriptor {
            dst,
            array,
            index,
            bits,
            signed,
        } => {
            let table = mem.descriptors.get(*array as usize);
            for l in bits_of(mask, n) {
                let raw = rd(regs, n, *index, l) & mask_of(*bits);
                // A signed index keeps its sign: a negative one is unbound, and named as it is.
                let i = if *signed {
                    sign_extend(*bits, raw)
                } else {
                    i64::try_from(raw).unwrap_or(i64::MAX)
                };
                let p = table
                    .and_then(|(_, elements)| {
                        let i = u32::try_from(i).ok()?;
                        let at = elements.binary_search_by_key(&i, |(e, _)| *e).ok()?;
                        elements.get(at).map(|(_, p)| *p)
                    })
                    .unwrap_or_else(|| match table.map(|(a, _)| a.kind) {
                        Some(DescriptorKind::Sampler) => m::unbound_sampler(*array, i),
                        _ => m::unbound_pointer(*array, i),
                    });
                wr(regs, n, *dst, l, p);
            }
        }
        Op::AccessChain { dst, base, steps } => {
            for l in bits_of(mask, n) {
                let mut p = rd(regs, n, *base, l);
                if m::unbound_of(p).is_some() {
                    // Keeps the array and index it names for the finding of its first access.
                    wr(regs, n, *dst, l, p);
                    continue;
                }
                for s in steps.iter() {
                    let delta = step_delta(s, |index| rd(regs, n, index, l));
                    // The offset wraps inside its 48 bits; the region never changes.
                    let (region, off) = split_pointer(p);
                    p = m::make_pointer(region, off.wrapping_add(delta));
                }
                wr(regs, n, *dst, l, p);
            }
        }
        // Nothing to run: the uninitialised-value check marks the bytes.
        Op::UndefMemory { .. } => {}
        Op::ArrayLength {
            dst,
            ptr,
            offset,
            stride,
        } => {
            for l in bits_of(mask, n) {
                let rem = mem.remaining(rd(regs, n, *ptr, l)).saturating_sub(*offset);
                wr(regs, n, *dst, l, rem.checked_div(*stride).unwrap_or(0));
            }
        }
        Op::Atomic {
            op,
            bits,
            float: is_float,
            sync,
            dst,
            ptr,
            value,
            comparator,
        } => {
            let bytes = u64::from(*bits / 8).max(1);
            // Lanes in lane order: the order among invocations of one subgroup is unspecified.
            for l in bits_of(mask, n) {
                let (v, c) = (rd(regs, n, *value, l), rd(regs, n, *comparator, l));
                let p = rd(regs, n, *ptr, l);
                let place = match mem.resolve(p, l, bytes) {
                    Ok((w, off)) => Some((w, off, p)),
                    Err(f) => match mem.out_of_range(p, bytes, robust::Access::Atomic, f) {
                        Ok(r) => {
                            found.extend(r.warning.map(|w| (l, w)));
                            r.at
                        }
                        Err(f) => {
                            found.push((l, f));
                            None
                        }
                    },
                };
                let Some((w, off, p)) = place else {
                    wr(regs, n, *dst, l, 0);
                    continue;
                };
                let class = if *op == AtomicOp::Load {
                    race::READ
                } else {
                    race::WRITE
                };
                mem.log(l, p, bytes, class | race::ATOMIC);
                let run = || atomic(w, off, *op, *bits, *is_float, v, c);
                let old = match mem.races {
                    Some(r) => r
                        .borrow_mut()
                        .atomic(l, mem.race_key(p), *op, *sync, c, run),
                    None => run(),
                };
                wr(regs, n, *dst, l, old);
            }
        }
        _ => return false,
    }
    true
}

/// The new value of an atomic read-modify-write.
fn combine(op: AtomicOp, bits: u32, is_float: bool, old: u64, v: u64, c: u64) -> u64 {
    let mk = mask_of(bits);
    let s = |x: u64| sign_extend(bits, x);
    match op {
        AtomicOp::Load => old,
        AtomicOp::Store | AtomicOp::Exchange => v,
        AtomicOp::CompareExchange => {
            if old == c {
                v
            } else {
                old
            }
        }
        AtomicOp::IIncrement => old.wrapping_add(1) & mk,
        AtomicOp::IDecrement => old.wrapping_sub(1) & mk,
        AtomicOp::IAdd if !is_float => old.wrapping_add(v) & mk,
        AtomicOp::ISub => old.wrapping_sub(v) & mk,
        AtomicOp::SMin => {
            if s(v) < s(old) {
                v
            } else {
                old
            }
        }
        AtomicOp::SMax => {
            if s(v) > s(old) {
                v
            } else {
                old
            }
        }
        AtomicOp::UMin => old.min(v),
        AtomicOp::UMax => old.max(v),
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => old ^ v,
        AtomicOp::FAdd | AtomicOp::IAdd => float::fadd(bits, old, v),
        AtomicOp::FMin => float::map2(bits, old, v, f64::min),
        AtomicOp::FMax => float::map2(bits, old, v, f64::max),
    }
}

/// Performs one atomic on `w` at `off`; returns the original value.
fn atomic(w: &Words, off: u64, op: AtomicOp, bits: u32, is_float: bool, v: u64, c: u64) -> u64 {
    match op {
        AtomicOp::Load => return w.read(off, bits / 8),
        AtomicOp::Store if bits == 32 && off.is_multiple_of(4) => {
            w.rmw32(off, |_| v as u32);
            return 0;
        }
        _ => {}
    }
    if bits == 32 && off.is_multiple_of(4) {
        u64::from(w.rmw32(off, |old| {
            combine(op, 32, is_float, u64::from(old), v, c) as u32
        }))
    } else {
        w.rmw_locked(off, bits / 8, |old| combine(op, bits, is_float, old, v, c))
    }
}

/// Where every lane of `mask` accesses a whole value of type `ty` through the same pointer into
/// invocation memory (a Function variable, or an array element every lane indexes alike): the
/// offset of the value in each lane's area, checked once for all, as [`Mem::place`] would
/// find it for each (nothing is logged for invocation memory: [`Mem::log`]). `None` where it
/// does not apply or the value lies outside, and the lane-by-lane path reports each lane.
fn invocation_at(
    regs: &[u64],
    n: usize,
    mask: u128,
    ptr: Slot,
    (p, ty): (&Program, TypeIdx),
    mem: &Mem<'_>,
) -> Option<u64> {
    let mut lanes = bits_of(mask, n);
    let p0 = rd(regs, n, ptr, lanes.next()?);
    if split_pointer(p0).0 != m::REGION_INVOCATION || !lanes.all(|l| rd(regs, n, ptr, l) == p0) {
        return None;
    }
    // Lane 0's area starts at 0, so its offset is the value's in every lane's area.
    mem.resolve_value(p0, 0, (p, ty)).ok().map(|(_, off)| off)
}

/// How the lanes of a whole subgroup address one scalar each.
#[derive(Clone, Copy)]
enum Run {
    /// Every lane the same address (a push constant, a uniform index).
    Same(u64),
    /// Lane `l` at the first lane's address + `l` × `stride`, with `stride` at least the
    /// scalar's size, so no two lanes overlap: `a[gl_GlobalInvocationID]` (stride = size), or a
    /// row per invocation (`a[r * words + k]`).
    Strided { first: u64, stride: u64 },
}

impl Run {
    /// Lane `l`'s address.
    fn address(self, l: u64) -> u64 {
        match self {
            Run::Same(p) => p,
            Run::Strided { first, stride } => first + l * stride,
        }
    }

    /// The bytes from the first lane's address to the end of the last lane's scalar.
    fn span(self, n: usize, size: u64) -> u64 {
        match self {
            Run::Same(_) => size,
            Run::Strided { stride, .. } => stride * (n as u64 - 1) + size,
        }
    }
}

/// The [`Run`] of the pointers in `ptr` when every lane of the subgroup is active, the memory is
/// shared (not per-invocation) and the scalar is its type's only leaf at offset 0; `None`
/// otherwise, and the op takes the lane-by-lane path (which also reports out-of-bounds lanes).
fn run_of(regs: &[u64], n: usize, mask: u128, ptr: Slot, leaf: &Leaf) -> Option<Run> {
    let size = u64::from(leaf.bytes);
    if n < 2 || mask != full_mask(n) || leaf.offset != 0 {
        return None;
    }
    let lanes = lanes_of(regs, n, ptr);
    let first = *lanes.first()?;
    if split_pointer(first).0 == m::REGION_INVOCATION {
        return None;
    }
    let stride = lanes.get(1)?.wrapping_sub(first);
    if stride == 0 && lanes.iter().all(|&p| p == first) {
        return Some(Run::Same(first));
    }
    if stride < size {
        return None;
    }
    // The offsets must not wrap into the region bits.
    let (_, off) = split_pointer(first);
    let fits = stride
        .checked_mul(n as u64 - 1)
        .and_then(|s| s.checked_add(size))
        .and_then(|s| s.checked_add(off))
        .is_some_and(|e| e < 1u64 << m::OFFSET_BITS);
    let strided = fits
        && lanes
            .iter()
            .zip(0u64..)
            .all(|(&p, l)| p.wrapping_sub(first) == l * stride);
    strided.then_some(Run::Strided { first, stride })
}

/// A scalar load by the whole subgroup from one address or evenly spaced addresses: one bounds
/// check for the span and each word read once. `false` (nothing done) where it does not apply or
/// the span is out of bounds, which the lane-by-lane path then reports.
fn load_run(
    regs: &mut [u64],
    n: usize,
    mask: u128,
    (dst, ptr): (Slot, Slot),
    leaf: &Leaf,
    mem: &Mem<'_>,
) -> bool {
    let Some(run) = run_of(regs, n, mask, ptr, leaf) else {
        return false;
    };
    let size = u64::from(leaf.bytes);
    let fix = |v: u64| if leaf.boolean { u64::from(v != 0) } else { v };
    let Some(out) = regs.get_mut(dst as usize * n..(dst as usize + 1) * n) else {
        return false;
    };
    let Ok((w, off)) = mem.resolve(run.address(0), 0, run.span(n, size)) else {
        return false;
    };
    if mem.logging() {
        for l in 0..n {
            mem.log(l, run.address(l as u64), size, race::READ);
        }
    }
    match run {
        Run::Same(_) => out.fill(fix(w.read(off, leaf.bytes))),
        Run::Strided { stride, .. } if stride == size => {
            w.read_run(off, leaf.bytes, n as u32, |l, v| {
                if let Some(x) = out.get_mut(l as usize) {
                    *x = fix(v);
                }
            });
        }
        Run::Strided { stride, .. } => {
            for (l, x) in (0u64..).zip(out.iter_mut()) {
                *x = fix(w.read(off + l * stride, leaf.bytes));
            }
        }
    }
    true
}

/// The store twin of [`load_run`], for evenly spaced addresses (lanes storing to one address
/// race, which the lane-by-lane path leaves to the last lane as before).
fn store_run(
    regs: &[u64],
    n: usize,
    mask: u128,
    (src, ptr): (Slot, Slot),
    leaf: &Leaf,
    mem: &Mem<'_>,
) -> bool {
    let Some(run @ Run::Strided { stride, .. }) = run_of(regs, n, mask, ptr, leaf) else {
        return false;
    };
    let size = u64::from(leaf.bytes);
    let Ok((w, off)) = mem.resolve(run.address(0), 0, run.span(n, size)) else {
        return false;
    };
    if mem.logging() {
        for l in 0..n {
            mem.log(l, run.address(l as u64), size, race::WRITE);
        }
    }
    let values = lanes_of(regs, n, src);
    if stride == size {
        w.write_run(off, leaf.bytes, n as u32, |l| {
            values.get(l as usize).copied().unwrap_or(0)
        });
    } else {
        for (l, &v) in (0u64..).zip(values) {
            w.write(off + l * stride, leaf.bytes, v);
        }
    }
    true
}
