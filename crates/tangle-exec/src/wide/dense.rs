//! Cooperative matrices held once per subgroup in dense form on the wide path.
//!
//! A matrix value lives in `L` register slots of every lane (`run/coopmat.rs`), which is what
//! composite access, copies and element-wise ops read. Loads, stores and MulAdds read and write
//! the value as a whole, so between them the wide path keeps it in its *dense form* instead
//! ([`crate::run::coopmat_dense`]: the subgroup's elements in row-major order), one tile per
//! register range and subgroup of the batch, and fills the registers only when another op
//! reads them. A tiled GEMM's loop then loads tiles straight into dense form, multiplies them
//! there and stores the result from there.
//!
//! [`DensePlan`] decides, once per dispatch, what the batch does around each op: the register
//! ranges are those the load, store and MulAdd operands name; an op that touches a range
//! through its registers first has them filled ([`Action::Lanes`]); a run of `Copy` ops that
//! moves one range whole to another (how a matrix variable is assigned) is one
//! [`Action::Copy`] of the dense form. [`Tiles`] holds, per range and subgroup, which of the
//! two forms holds the value: both may, at least one does.
//!
//! Exactness: a form is only ever a copy of the value. The dense form is made only by an op of
//! the whole subgroup (a load or MulAdd by every invocation, a copy by every invocation), so
//! the value it stands for is the subgroup's in every lane, and filling the registers from it
//! writes what the op would have written there, positions holding no element being 0 (as a
//! load or MulAdd leaves them). Anything else (a partial subgroup, a non-uniform pointer, a
//! row out of bounds, an undefined saturating element) runs the op as before on registers
//! filled first, so findings and give-backs are the lane path's.

use super::plan::slots_of;
use super::WIDTH;
use crate::program::{Op, Program, Slot, Terminator};
use crate::run::alu::full_mask;
use crate::run::coopmat::Layouts;

/// No range.
const NONE: u32 = u32::MAX;

/// A register range holding matrix values: slots `first..first + length` of every lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    first: Slot,
    length: u32,
    rows: u32,
    cols: u32,
}

/// What a batch does around one op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// The op touches no range: the op alone.
    Plain,
    /// The op touches `ranges` through their registers: they are filled first, and those it
    /// writes (`writes`) lose their dense form after.
    Lanes { ranges: Vec<u32>, writes: Vec<u32> },
    /// The first of the `Copy` ops that move range `src` whole to range `dst` (one per slot,
    /// in order): done at once, in whichever forms hold the source.
    Copy { dst: u32, src: u32 },
    /// A `Copy` that the [`Action::Copy`] before it did.
    Folded,
    /// A load, store or MulAdd whose matrix operands are all ranges: on the dense form.
    Coopmat,
}

/// The phi copies of one edge that touch ranges: (predecessor, the ranges they touch, those
/// they write).
type PhiEdge = (u32, Vec<u32>, Vec<u32>);

/// The ranges and the action around each op of a program, for one dispatch.
#[derive(Debug, Clone, Default)]
pub(crate) struct DensePlan {
    ranges: Vec<Range>,
    /// Per block, per op; empty when no value is held densely.
    actions: Vec<Vec<Action>>,
    /// Per block, its edges whose phi copies touch ranges.
    phis: Vec<Vec<PhiEdge>>,
    /// Invocations per subgroup and subgroups per batch.
    sg: usize,
    per_batch: usize,
}

impl DensePlan {
    /// The plan of `prog` for subgroups of `sg` invocations: no range at all (every op
    /// [`Action::Plain`]) where anything is not as expected.
    pub(crate) fn new(prog: &Program, layouts: &Layouts, sg: usize) -> DensePlan {
        plan(prog, layouts, sg).unwrap_or_default()
    }

    /// The action around op `j` of block `b`.
    pub(crate) fn action(&self, b: u32, j: usize) -> &Action {
        self.actions
            .get(b as usize)
            .and_then(|ops| ops.get(j))
            .unwrap_or(&Action::Plain)
    }

    /// The ranges the phi copies of the edge `from` → `to` touch, and those they write.
    pub(crate) fn phis(&self, to: u32, from: u32) -> Option<(&[u32], &[u32])> {
        let edges = self.phis.get(to as usize)?;
        let (_, touched, writes) = edges.iter().find(|(p, _, _)| *p == from)?;
        Some((touched, writes))
    }

    /// The range whose first slot is `slot`.
    pub(crate) fn range_at(&self, slot: Slot) -> Option<u32> {
        self.ranges
            .iter()
            .position(|r| r.first == slot)
            .map(|i| i as u32)
    }

    /// Elements of a batch's tile store.
    fn tile_elements(&self) -> usize {
        self.ranges
            .iter()
            .map(|r| r.rows as usize * r.cols as usize * self.per_batch)
            .sum()
    }
}

/// [`DensePlan::new`]; `None`: no range.
fn plan(prog: &Program, layouts: &Layouts, sg: usize) -> Option<DensePlan> {
    if sg == 0 || !WIDTH.is_multiple_of(sg) {
        return None;
    }
    let func = prog.functions.get(prog.entry as usize)?;
    // The candidates: every matrix operand of a load, store or MulAdd, with its map's length.
    let mut ranges: Vec<Range> = Vec::new();
    for op in func.blocks.iter().flat_map(|b| &b.ops) {
        let Op::Coopmat(c) = op else { continue };
        for (first, rows, cols, length) in c.matrix_operands() {
            let map = layouts.get(rows, cols)?;
            // The op's own count of slots is the map's (both ⌈rows × cols / sg⌉).
            if length == 0 || length != map.length() {
                return None;
            }
            ranges.push(Range {
                first,
                length,
                rows,
                cols,
            });
        }
    }
    ranges.sort_by_key(|r| (r.first, r.length, r.rows, r.cols));
    ranges.dedup();
    // Two candidates that share a slot are left to the registers, both (never expected:
    // lowering gives every matrix value and variable slots of its own).
    let mut conflict = vec![false; ranges.len()];
    for i in 1..ranges.len() {
        let (p, r) = (ranges[i - 1], ranges[i]);
        if p.first.saturating_add(p.length) > r.first {
            conflict[i - 1] = true;
            conflict[i] = true;
        }
    }
    let ranges: Vec<Range> = ranges
        .into_iter()
        .zip(conflict)
        .filter(|&(_, c)| !c)
        .map(|(r, _)| r)
        .collect();
    if ranges.is_empty() {
        return None;
    }
    let mut range_of = vec![NONE; prog.slots as usize];
    for (i, r) in ranges.iter().enumerate() {
        for s in r.first..r.first.saturating_add(r.length) {
            *range_of.get_mut(s as usize)? = i as u32;
        }
    }
    let of = |s: Slot| range_of.get(s as usize).copied().filter(|&r| r != NONE);
    let first_of = |s: Slot| of(s).filter(|&r| ranges.get(r as usize).map(|r| r.first) == Some(s));
    let mut actions = Vec::with_capacity(func.blocks.len());
    let mut phis = Vec::with_capacity(func.blocks.len());
    for block in &func.blocks {
        let mut acts = Vec::with_capacity(block.ops.len());
        let mut j = 0;
        while let Some(op) = block.ops.get(j) {
            // A run of copies moving one range whole to another of the same shape.
            if let Op::Copy { dst, src } = *op {
                if let (Some(d), Some(s)) = (first_of(dst), first_of(src)) {
                    let (rd, rs) = (ranges.get(d as usize)?, ranges.get(s as usize)?);
                    let same = (rd.length, rd.rows, rd.cols) == (rs.length, rs.rows, rs.cols);
                    let whole = (0..rd.length).all(|i| {
                        block.ops.get(j + i as usize)
                            == Some(&Op::Copy {
                                dst: dst + i,
                                src: src + i,
                            })
                    });
                    if same && whole && d != s {
                        acts.push(Action::Copy { dst: d, src: s });
                        acts.extend((1..rd.length).map(|_| Action::Folded));
                        j += rd.length as usize;
                        continue;
                    }
                }
            }
            acts.push(action(op, &of)?);
            j += 1;
        }
        actions.push(acts);
        let mut edges = Vec::new();
        for (pred, copies) in &block.phis {
            let mut touched: Vec<u32> = copies
                .iter()
                .flat_map(|&(d, s)| [of(d), of(s)])
                .flatten()
                .collect();
            let mut writes: Vec<u32> = copies.iter().filter_map(|&(d, _)| of(d)).collect();
            for v in [&mut touched, &mut writes] {
                v.sort_unstable();
                v.dedup();
            }
            if !touched.is_empty() {
                edges.push((*pred, touched, writes));
            }
        }
        phis.push(edges);
        // A terminator reads a scalar; one reading a matrix's slot is not expected.
        let read = match block.terminator {
            Terminator::BranchConditional { cond, .. } => Some(cond),
            Terminator::Switch { selector, .. } => Some(selector),
            _ => None,
        };
        if read.and_then(of).is_some() {
            return None;
        }
    }
    Some(DensePlan {
        ranges,
        actions,
        phis,
        sg,
        per_batch: WIDTH / sg,
    })
}

/// The action around `op`, which is no whole-range copy; `None` for an op outside the wide
/// subset (the plan takes none).
fn action(op: &Op, of: &dyn Fn(Slot) -> Option<u32>) -> Option<Action> {
    let (mut writes, reads) = slots_of(op)?;
    if let Op::InsertDynamic { dst, count, .. } = *op {
        // It writes one component of `dst`, keeping the others.
        writes.extend(dst..dst.saturating_add(count));
    }
    if let Op::Coopmat(c) = op {
        // Its matrix operands are ranges, each from its first slot, and no other slot it
        // touches (Pointer, Stride) lies in one.
        let operands: Vec<Option<u32>> = c.matrix_operands().iter().map(|&(s, ..)| of(s)).collect();
        let all_ranges = !operands.is_empty() && operands.iter().all(Option::is_some);
        let others_free = writes
            .iter()
            .chain(&reads)
            .filter_map(|&s| of(s))
            .all(|r| operands.contains(&Some(r)));
        if all_ranges && others_free {
            return Some(Action::Coopmat);
        }
    }
    let mut touched: Vec<u32> = writes.iter().chain(&reads).filter_map(|&s| of(s)).collect();
    let mut written: Vec<u32> = writes.iter().filter_map(|&s| of(s)).collect();
    if touched.is_empty() {
        return Some(Action::Plain);
    }
    for v in [&mut touched, &mut written] {
        v.sort_unstable();
        v.dedup();
    }
    Some(Action::Lanes {
        ranges: touched,
        writes: written,
    })
}

/// One batch's dense forms: per range and subgroup, a tile and which forms hold the value.
#[derive(Debug, Default)]
pub(crate) struct Tiles {
    data: Vec<u64>,
    /// Where each range's tiles start in `data` (subgroup `k`'s at `+ k × elements`).
    bases: Vec<usize>,
    /// Per (range × subgroups per batch + subgroup): the registers hold the value.
    lanes_ok: Vec<bool>,
    /// The same: the tile holds it.
    dense_ok: Vec<bool>,
    /// A MulAdd's result, before it becomes a tile.
    out: Vec<u64>,
    pub(crate) scratch: crate::run::coopmat_dense::Scratch,
}

impl Tiles {
    pub(crate) fn new(p: &DensePlan) -> Tiles {
        let mut bases = Vec::with_capacity(p.ranges.len());
        let mut at = 0;
        for r in &p.ranges {
            bases.push(at);
            at += r.rows as usize * r.cols as usize * p.per_batch;
        }
        let flags = p.ranges.len() * p.per_batch;
        Tiles {
            data: vec![0; p.tile_elements()],
            bases,
            lanes_ok: vec![true; flags],
            dense_ok: vec![false; flags],
            out: Vec::new(),
            scratch: Default::default(),
        }
    }

    /// Bytes a batch's tiles take under `p`.
    pub(crate) fn bytes(p: &DensePlan) -> u64 {
        p.tile_elements() as u64 * 8
    }

    /// A new batch: its registers hold every value (none is read before it is written).
    pub(crate) fn reset(&mut self) {
        self.lanes_ok.fill(true);
        self.dense_ok.fill(false);
    }

    /// The tile of range `r` for subgroup `k`.
    fn tile_range(&self, p: &DensePlan, r: u32, k: usize) -> Option<std::ops::Range<usize>> {
        let range = p.ranges.get(r as usize)?;
        let elems = range.rows as usize * range.cols as usize;
        let start = self.bases.get(r as usize)? + k * elems;
        Some(start..start + elems)
    }

    fn flag(p: &DensePlan, r: u32, k: usize) -> usize {
        r as usize * p.per_batch + k
    }

    /// Fills the registers of `ranges` for every subgroup with lanes in `mask` (the batch's
    /// register file `regs`) where only the tile holds the value.
    pub(crate) fn fill_lanes(
        &mut self,
        p: &DensePlan,
        layouts: &Layouts,
        ranges: &[u32],
        mask: u128,
        regs: &mut [u64],
    ) {
        for &r in ranges {
            for k in subgroups(p, mask) {
                let f = Self::flag(p, r, k);
                if self.lanes_ok.get(f) == Some(&false) {
                    self.scatter(p, layouts, r, k, regs);
                    if let Some(x) = self.lanes_ok.get_mut(f) {
                        *x = true;
                    }
                }
            }
        }
    }

    /// Marks `ranges` written through their registers by the lanes of `mask`: their tiles no
    /// longer hold the value.
    pub(crate) fn written(&mut self, p: &DensePlan, ranges: &[u32], mask: u128) {
        for &r in ranges {
            for k in subgroups(p, mask) {
                if let Some(x) = self.dense_ok.get_mut(Self::flag(p, r, k)) {
                    *x = false;
                }
            }
        }
    }

    /// Makes the tile of range `r`, subgroup `k` hold the value (gathered from the registers if
    /// it does not yet); its element range in [`Tiles::data`].
    fn dense(
        &mut self,
        p: &DensePlan,
        layouts: &Layouts,
        r: u32,
        k: usize,
        regs: &[u64],
    ) -> Option<std::ops::Range<usize>> {
        let f = Self::flag(p, r, k);
        let at = self.tile_range(p, r, k)?;
        if self.dense_ok.get(f) == Some(&false) {
            let range = p.ranges.get(r as usize)?;
            let map = layouts.get(range.rows, range.cols)?;
            let tile = self.data.get_mut(at.clone())?;
            for (t, &reg) in tile.iter_mut().zip(map.regs()) {
                *t = regs.get(wide_reg(p, range, k, reg)).copied().unwrap_or(0);
            }
            *self.dense_ok.get_mut(f)? = true;
        }
        Some(at)
    }

    /// Writes the tile of range `r`, subgroup `k` into its registers, 0 at the positions that
    /// hold no element.
    fn scatter(&self, p: &DensePlan, layouts: &Layouts, r: u32, k: usize, regs: &mut [u64]) {
        let (Some(range), Some(at)) = (p.ranges.get(r as usize), self.tile_range(p, r, k)) else {
            return;
        };
        let (Some(map), Some(tile)) = (layouts.get(range.rows, range.cols), self.data.get(at))
        else {
            return;
        };
        for (&reg, &v) in map.regs().iter().zip(tile) {
            if let Some(x) = regs.get_mut(wide_reg(p, range, k, reg)) {
                *x = v;
            }
        }
        for &reg in map.unowned_regs() {
            if let Some(x) = regs.get_mut(wide_reg(p, range, k, reg)) {
                *x = 0;
            }
        }
    }

    /// The whole-range copy `dst` ← `src` by the lanes of `mask`: for a subgroup whose every
    /// invocation copies, in each form that holds the source; for part of a subgroup, through
    /// the registers, lane by lane, as the `Copy` ops would.
    pub(crate) fn copy(
        &mut self,
        p: &DensePlan,
        layouts: &Layouts,
        (dst, src): (u32, u32),
        mask: u128,
        regs: &mut [u64],
    ) {
        let (Some(&rd), Some(&rs)) = (p.ranges.get(dst as usize), p.ranges.get(src as usize))
        else {
            return;
        };
        for k in subgroups(p, mask) {
            let lanes = (mask >> (k * p.sg)) & full_mask(p.sg);
            let (fd, fs) = (Self::flag(p, dst, k), Self::flag(p, src, k));
            let whole = lanes == full_mask(p.sg);
            if !whole {
                self.fill_lanes(p, layouts, &[src, dst], lanes << (k * p.sg), regs);
            }
            let (lanes_ok, dense_ok) = (
                self.lanes_ok.get(fs).copied().unwrap_or(true),
                self.dense_ok.get(fs).copied().unwrap_or(false),
            );
            if lanes_ok {
                for i in 0..rs.length {
                    let (from, to) = (
                        (rs.first + i) as usize * WIDTH + k * p.sg,
                        (rd.first + i) as usize * WIDTH + k * p.sg,
                    );
                    for l in 0..p.sg {
                        if lanes >> l & 1 != 0 {
                            if let Some(&v) = regs.get(from + l) {
                                if let Some(x) = regs.get_mut(to + l) {
                                    *x = v;
                                }
                            }
                        }
                    }
                }
            }
            if whole && dense_ok {
                if let (Some(from), Some(to)) =
                    (self.tile_range(p, src, k), self.tile_range(p, dst, k))
                {
                    self.data.copy_within(from, to.start);
                }
            }
            if let (Some(l), Some(d)) = (self.lanes_ok.get_mut(fd), self.dense_ok.get_mut(fd)) {
                *l = lanes_ok || !whole;
                *d = whole && dense_ok;
            }
        }
    }

    /// The tile of range `r`, subgroup `k`, for a load to write whole; the value is then held
    /// by the tile alone (call [`Tiles::loaded`] once it is written).
    pub(crate) fn tile_mut(&mut self, p: &DensePlan, r: u32, k: usize) -> Option<&mut [u64]> {
        let at = self.tile_range(p, r, k)?;
        self.data.get_mut(at)
    }

    /// Range `r`, subgroup `k` is now held by its tile alone.
    pub(crate) fn loaded(&mut self, p: &DensePlan, r: u32, k: usize) {
        let f = Self::flag(p, r, k);
        if let (Some(l), Some(d)) = (self.lanes_ok.get_mut(f), self.dense_ok.get_mut(f)) {
            *l = false;
            *d = true;
        }
    }

    /// The dense form of range `r`, subgroup `k` (gathered first if only the registers hold it).
    pub(crate) fn read(
        &mut self,
        p: &DensePlan,
        layouts: &Layouts,
        r: u32,
        k: usize,
        regs: &[u64],
    ) -> Option<&[u64]> {
        let at = self.dense(p, layouts, r, k, regs)?;
        self.data.get(at)
    }

    /// `dst` = the MulAdd `types` of ranges `a`, `b`, `c` for subgroup `k` on their dense
    /// forms; `false` (nothing changed) where the element path must run it (an undefined
    /// saturating element, which it reports).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn mul_add(
        &mut self,
        p: &DensePlan,
        layouts: &Layouts,
        types: &crate::semantics::coopmat_types::MulAddTypes,
        (m, n, kk): (usize, usize, usize),
        [dst, a, b, c]: [u32; 4],
        k: usize,
        regs: &[u64],
    ) -> bool {
        let (Some(ra), Some(rb), Some(rc)) = (
            self.dense(p, layouts, a, k, regs),
            self.dense(p, layouts, b, k, regs),
            self.dense(p, layouts, c, k, regs),
        ) else {
            return false;
        };
        let Some(to) = self.tile_range(p, dst, k) else {
            return false;
        };
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        out.resize(m * n, 0);
        let ok = match (self.data.get(ra), self.data.get(rb), self.data.get(rc)) {
            (Some(ta), Some(tb), Some(tc)) => crate::run::coopmat_dense::mul_add(
                types,
                (m, n, kk),
                [ta, tb, tc],
                &mut out,
                &mut self.scratch,
            ),
            _ => false,
        };
        if ok {
            if let Some(t) = self.data.get_mut(to) {
                if t.len() == out.len() {
                    t.copy_from_slice(&out);
                    self.loaded(p, dst, k);
                } else {
                    self.out = out;
                    return false;
                }
            }
        }
        self.out = out;
        ok
    }
}

/// The subgroups of a batch with lanes in `mask`.
pub(crate) fn subgroups(p: &DensePlan, mask: u128) -> impl Iterator<Item = usize> + '_ {
    (0..p.per_batch).filter(move |k| (mask >> (k * p.sg)) & full_mask(p.sg) != 0)
}

/// The index in the batch's register file of register `reg` (a map's, relative to the value's
/// first slot in a subgroup-wide file) of range `r`, subgroup `k`.
fn wide_reg(p: &DensePlan, r: &Range, k: usize, reg: u32) -> usize {
    let (index, lane) = (reg as usize / p.sg, reg as usize % p.sg);
    (r.first as usize + index) * WIDTH + k * p.sg + lane
}
