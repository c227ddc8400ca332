//! Executing SPV_KHR_cooperative_matrix ops over a subgroup: the layout maps (which invocation
//! holds which element under the run's [`CoopmatLayout`]), `OpCooperativeMatrixLoadKHR` and
//! `StoreKHR` through the bounds-checked access code, `OpCooperativeMatrixMulAddKHR`, and the
//! sanitizer checks of [`crate::check::coopmat`].
//!
//! # Representation
//! A matrix value is held once per subgroup, spread over its invocations as the composite view
//! the spec describes: an SSA value of matrix type takes `L` = `OpCooperativeMatrixLengthKHR`
//! register slots, and position (lane, index) = slot `index` of `lane`. Everything that treats a
//! matrix as a composite (copies, `OpPhi`, `OpSelect`, calls, element-wise arithmetic,
//! conversions, variables) is then the ordinary per-lane code; only the ops here need the map
//! between positions and (row, column), which depends on the run, not on the program.

use super::access::{LaneFinding, Mem};
use super::alu::{bits_of, full_mask, rd, wr};
use super::coopmat_dense::{self as dense, F16_F32};
use super::memory::{make_pointer, split_pointer, Words, OFFSET_BITS, REGION_INVOCATION};
use crate::check::coopmat::CoopmatFinding as CF;
use crate::check::group::poison;
use crate::check::race;
use crate::check::robust;
use crate::policy::{CoopmatLayout, Rng};
use crate::program::{Op, Program, Slot, Type};
use crate::report::Finding;
use crate::semantics::coopmat::IntMulAdd;
use crate::semantics::coopmat_kernel as kernel;
use crate::semantics::coopmat_types::{Component, MulAddTypes};
use crate::semantics::{int, mask as mask_of, sign_extend};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// A position that holds no element, or an element at no position.
const NONE: u32 = u32::MAX;

/// The shape of one matrix operand as an op sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Components per invocation (`OpCooperativeMatrixLengthKHR`).
    pub length: u32,
    /// Bytes of one component.
    pub bytes: u32,
}

/// The Stride operand of a load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stride {
    /// Its slot.
    pub slot: Slot,
    /// Its integer width.
    pub bits: u32,
    /// Its integer type's signedness.
    pub signed: bool,
}

impl Stride {
    fn read(&self, regs: &[u64], n: usize, l: usize) -> i128 {
        let v = rd(regs, n, self.slot, l) & mask_of(self.bits);
        if self.signed {
            i128::from(sign_extend(self.bits, v))
        } else {
            i128::from(v)
        }
    }
}

/// Where a load or store finds its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// The Pointer operand.
    pub ptr: Slot,
    /// The Stride operand.
    pub stride: Stride,
    /// ColumnMajorKHR (else RowMajorKHR).
    pub column_major: bool,
    /// Bytes of the pointer's pointee type: the unit of Stride ("Stride is in elements of the
    /// pointee type (which can be different than the matrix component type)").
    pub pointee: u64,
    /// The matrix.
    pub shape: Shape,
}

/// One lowered cooperative-matrix op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoopmatInst {
    /// `OpCooperativeMatrixLoadKHR` into `dst`.
    Load { dst: Slot, at: Access },
    /// `OpCooperativeMatrixStoreKHR` of `src`.
    Store { src: Slot, at: Access },
    /// `OpCooperativeMatrixMulAddKHR`: `dst` = `a` (m×k) × `b` (k×n) + `c` (m×n).
    MulAdd {
        dst: Slot,
        a: Slot,
        b: Slot,
        c: Slot,
        types: MulAddTypes,
        m: u32,
        n: u32,
        k: u32,
        /// `OpCooperativeMatrixLengthKHR` of A, B and C (= Result): the slots each takes.
        lengths: [u32; 3],
    },
    /// Check: every invocation of the subgroup executes this instruction.
    Active,
    /// Check: `slot` holds the same value in every active invocation.
    Uniform { slot: Slot, operand: &'static str },
    /// Check of `OpSDiv`/`OpUDiv` component `index` (slots `a`, `b`) where some positions hold
    /// no element: only the invocations holding one are checked, so the zeros at the others
    /// are no division by zero.
    CheckDivision {
        rows: u32,
        cols: u32,
        index: u32,
        bits: u32,
        signed: bool,
        a: Slot,
        b: Slot,
    },
    /// Check: the composite index in slot `index` of a `rows`×`cols` matrix holds an element
    /// in each active invocation.
    Owned {
        rows: u32,
        cols: u32,
        length: u32,
        index: Slot,
    },
}

impl CoopmatInst {
    /// The matrix operands of a load, store or MulAdd: (first slot, rows, columns, slots),
    /// the written one first; none for other ops. The wide path's dense forms and the native
    /// tier's tiles are made of these ranges.
    pub(crate) fn matrix_operands(&self) -> Vec<(Slot, u32, u32, u32)> {
        match *self {
            CoopmatInst::Load { dst: s, ref at } | CoopmatInst::Store { src: s, ref at } => {
                vec![(s, at.shape.rows, at.shape.cols, at.shape.length)]
            }
            CoopmatInst::MulAdd {
                dst,
                a,
                b,
                c,
                m,
                n,
                k,
                lengths: [la, lb, lc],
                ..
            } => vec![(dst, m, n, lc), (a, m, k, la), (b, k, n, lb), (c, m, n, lc)],
            _ => Vec::new(),
        }
    }

    /// The slots the op writes whole, and those it reads (for the wide path, which runs it on
    /// a copy of one subgroup's slots).
    pub fn slots(&self) -> (Vec<Slot>, Vec<Slot>) {
        let range = |first: Slot, count: u32| (first..first.saturating_add(count)).collect();
        match *self {
            CoopmatInst::Load { dst, ref at } => {
                (range(dst, at.shape.length), vec![at.ptr, at.stride.slot])
            }
            CoopmatInst::Store { src, ref at } => {
                let mut reads: Vec<Slot> = range(src, at.shape.length);
                reads.extend([at.ptr, at.stride.slot]);
                (Vec::new(), reads)
            }
            CoopmatInst::MulAdd {
                dst,
                a,
                b,
                c,
                lengths: [la, lb, lc],
                ..
            } => (
                range(dst, lc),
                [range(a, la), range(b, lb), range(c, lc)].concat(),
            ),
            CoopmatInst::Active => (Vec::new(), Vec::new()),
            CoopmatInst::Uniform { slot, .. } => (Vec::new(), vec![slot]),
            CoopmatInst::CheckDivision { a, b, .. } => (Vec::new(), vec![a, b]),
            CoopmatInst::Owned { index, .. } => (Vec::new(), vec![index]),
        }
    }
}

/// The positions of one matrix shape's elements under a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    rows: u32,
    cols: u32,
    length: u32,
    /// Position (`lane * length + index`) → element (`row * cols + col`), [`NONE`] if unowned.
    elem_at: Vec<u32>,
    /// Element → position.
    pos_of: Vec<u32>,
    /// Invocations the map was made for (the register file's row width).
    lanes: u32,
    /// Element → its register, `index × lanes + lane`, relative to the value's first slot.
    reg_of: Vec<u32>,
    /// [`Map::reg_of`] in column-major element order (`col * rows + row`), so that a column,
    /// like a row in `reg_of`, is a contiguous slice.
    reg_of_cm: Vec<u32>,
    /// The registers of the positions that hold no element (relative, as `reg_of`).
    unowned_regs: Vec<u32>,
    /// Element indices `0..rows × cols`: a row of a dense value ([`super::coopmat_dense`]) is a
    /// contiguous slice of it, as a row of registers is of `reg_of`.
    dense_rm: Vec<u32>,
    /// The element index (`row * cols + col`) of each element in column-major order, so that
    /// a column of a dense value is a contiguous slice, as in `reg_of_cm`.
    dense_cm: Vec<u32>,
}

impl Map {
    /// The map of a `rows`×`cols` matrix over `lanes` invocations.
    pub fn new(rows: u32, cols: u32, lanes: u32, layout: CoopmatLayout) -> Map {
        let elems = rows.saturating_mul(cols);
        let length = elems.div_ceil(lanes.max(1));
        let positions = length.saturating_mul(lanes.max(1));
        let pos_of: Vec<u32> = match layout {
            CoopmatLayout::RowStriped => (0..elems).collect(),
            CoopmatLayout::ColumnStriped => {
                (0..elems).map(|e| (e % cols) * rows + e / cols).collect()
            }
            CoopmatLayout::Shuffled(seed) => {
                let mut perm: Vec<u32> = (0..positions).collect();
                let mut rng = Rng::new(seed, &[u64::from(rows), u64::from(cols)]);
                for i in (1..perm.len()).rev() {
                    perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
                }
                perm.truncate(elems as usize);
                perm
            }
        };
        let mut elem_at = vec![NONE; positions as usize];
        for (e, &p) in pos_of.iter().enumerate() {
            if let Some(slot) = elem_at.get_mut(p as usize) {
                *slot = e as u32;
            }
        }
        let lanes = lanes.max(1);
        let reg = |p: u32| (p % length.max(1)) * lanes + p / length.max(1);
        let reg_of: Vec<u32> = pos_of.iter().map(|&p| reg(p)).collect();
        let reg_of_cm = (0..elems)
            .map(|e| {
                let (col, row) = (e / rows.max(1), e % rows.max(1));
                reg_of
                    .get((row * cols + col) as usize)
                    .copied()
                    .unwrap_or(0)
            })
            .collect();
        let unowned_regs = (0..positions)
            .filter(|&p| elem_at.get(p as usize) == Some(&NONE))
            .map(reg)
            .collect();
        let dense_cm = (0..elems)
            .map(|e| (e % rows.max(1)) * cols + e / rows.max(1))
            .collect();
        Map {
            dense_rm: (0..elems).collect(),
            dense_cm,
            rows,
            cols,
            length,
            elem_at,
            pos_of,
            lanes,
            reg_of,
            reg_of_cm,
            unowned_regs,
        }
    }

    /// The registers of row `major` (column for ColumnMajorKHR) in element order.
    fn row_regs(&self, column_major: bool, major: u32) -> &[u32] {
        let (regs, len) = if column_major {
            (&self.reg_of_cm, self.rows)
        } else {
            (&self.reg_of, self.cols)
        };
        let start = major as usize * len as usize;
        regs.get(start..start + len as usize).unwrap_or(&[])
    }

    /// The element indices of row `major` (column for ColumnMajorKHR) in element order: where
    /// its elements sit in a dense value.
    fn dense_row(&self, column_major: bool, major: u32) -> &[u32] {
        let (order, len) = if column_major {
            (&self.dense_cm, self.rows)
        } else {
            (&self.dense_rm, self.cols)
        };
        let start = major as usize * len as usize;
        order.get(start..start + len as usize).unwrap_or(&[])
    }

    /// Where a row's elements go in `out`: the value's registers, or its dense form.
    fn row_targets(&self, dense: bool, column_major: bool, major: u32) -> &[u32] {
        if dense {
            self.dense_row(column_major, major)
        } else {
            self.row_regs(column_major, major)
        }
    }

    /// Elements (rows × columns).
    pub fn elements(&self) -> usize {
        self.rows as usize * self.cols as usize
    }

    /// Components per invocation (`OpCooperativeMatrixLengthKHR`).
    pub fn length(&self) -> u32 {
        self.length
    }

    /// Each element's register (row-major element order), `index × lanes + lane` relative to
    /// the value's first slot in a register file of the map's subgroup width.
    pub fn regs(&self) -> &[u32] {
        &self.reg_of
    }

    /// The registers (relative, as [`Map::regs`]) of the positions holding no element.
    pub fn unowned_regs(&self) -> &[u32] {
        &self.unowned_regs
    }

    /// Whether the fast paths may address registers through `reg_of`: the whole subgroup is
    /// active and the register file is as wide as the map's subgroup.
    fn whole(&self, n: usize, mask: u128) -> bool {
        n == self.lanes as usize && mask == full_mask(n)
    }

    /// The element at (lane, index), if any.
    fn elem(&self, lane: usize, index: u32) -> Option<u32> {
        let p = lane * self.length as usize + index as usize;
        self.elem_at.get(p).copied().filter(|&e| e != NONE)
    }

    /// The (lane, index) of element `e`.
    fn position(&self, e: usize) -> (usize, u32) {
        let p = self.pos_of.get(e).copied().unwrap_or(0);
        let len = self.length.max(1);
        ((p / len) as usize, p % len)
    }

    /// Reads the matrix in `first..` into `out` in row-major order.
    fn gather(&self, regs: &[u64], n: usize, first: Slot, out: &mut Vec<u64>) {
        out.clear();
        out.extend((0..self.pos_of.len()).map(|e| {
            let (l, i) = self.position(e);
            rd(regs, n, first + i, l)
        }));
    }
}

/// The layout maps of every matrix shape a program uses, for one dispatch.
#[derive(Debug, Clone, Default)]
pub struct Layouts {
    maps: Vec<Map>,
}

impl Layouts {
    /// The maps of `prog`'s matrix types for subgroups of `lanes` under `layout`.
    pub fn new(prog: &Program, lanes: usize, layout: CoopmatLayout) -> Layouts {
        let mut maps: Vec<Map> = Vec::new();
        for t in &prog.types {
            if let Type::CoopMatrix { rows, cols, .. } = t.ty {
                if !maps.iter().any(|m| (m.rows, m.cols) == (rows, cols)) {
                    maps.push(Map::new(rows, cols, lanes as u32, layout));
                }
            }
        }
        Layouts { maps }
    }

    /// The map of `rows`×`cols` matrices.
    pub fn get(&self, rows: u32, cols: u32) -> Option<&Map> {
        self.maps.iter().find(|m| (m.rows, m.cols) == (rows, cols))
    }
}

/// Reused buffers of MulAdd.
#[derive(Debug, Default)]
pub struct Scratch {
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
    out: Vec<u64>,
    /// The dense MulAdd's own.
    dense: dense::Scratch,
}

/// What a cooperative-matrix op sees besides the registers.
pub struct Ctx<'a, 'm> {
    /// The dispatch's layout maps.
    pub layouts: &'a Layouts,
    /// The subgroup's memory.
    pub mem: &'a Mem<'m>,
    /// Invocations in the subgroup.
    pub lanes: usize,
}

/// Executes a cooperative-matrix op for the lanes in `mask`. Returns `false` for other ops.
pub fn exec_coopmat(
    op: &Op,
    regs: &mut [u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    scratch: &mut Scratch,
    found: &mut Vec<LaneFinding>,
) -> bool {
    let Op::Coopmat(inst) = op else {
        return false;
    };
    let first = mask.trailing_zeros() as usize;
    match &**inst {
        CoopmatInst::Active => {
            let all = full_mask(cx.lanes);
            if mask & all != all {
                let finding = CF::NotAllActive {
                    active: (mask & all).count_ones(),
                    invocations: cx.lanes as u32,
                };
                found.push((first, Finding::Coopmat(finding)));
            }
        }
        CoopmatInst::Uniform { slot, operand } => {
            let v0 = rd(regs, n, *slot, first);
            for l in bits_of(mask, n).filter(|&l| rd(regs, n, *slot, l) != v0) {
                found.push((l, Finding::Coopmat(CF::NotUniform { operand })));
            }
        }
        CoopmatInst::Owned {
            rows,
            cols,
            length,
            index,
        } => {
            if let Some(map) = cx.layouts.get(*rows, *cols) {
                for l in bits_of(mask, n) {
                    let i = rd(regs, n, *index, l);
                    let i = u32::try_from(i).unwrap_or(u32::MAX);
                    // An index past the length is the access code's out-of-bounds case.
                    if i < *length && map.elem(l, i).is_none() {
                        let finding = CF::UnownedElement { index: i };
                        found.push((l, Finding::Coopmat(finding)));
                    }
                }
            }
        }
        CoopmatInst::CheckDivision {
            rows,
            cols,
            index,
            bits,
            signed,
            a,
            b,
        } => {
            let Some(map) = cx.layouts.get(*rows, *cols) else {
                return true;
            };
            for l in bits_of(mask, n).filter(|&l| map.elem(l, *index).is_some()) {
                let (x, y) = (rd(regs, n, *a, l), rd(regs, n, *b, l));
                if int::unsigned_division_is_undefined(y) {
                    found.push((l, Finding::DivisionByZero));
                } else if *signed && int::signed_division_is_undefined(*bits, x, y) {
                    found.push((l, Finding::DivisionOverflow));
                }
            }
        }
        CoopmatInst::Load { dst, at } => load(*dst, at, regs, n, mask, cx, found),
        CoopmatInst::Store { src, at } => store(*src, at, regs, n, mask, cx, found),
        CoopmatInst::MulAdd {
            dst,
            a,
            b,
            c,
            types,
            m,
            n: cols,
            k,
            ..
        } => {
            let (Some(ma), Some(mb), Some(mc)) = (
                cx.layouts.get(*m, *k),
                cx.layouts.get(*k, *cols),
                cx.layouts.get(*m, *cols),
            ) else {
                return true;
            };
            let (m, nn, k) = (*m as usize, *cols as usize, *k as usize);
            if *types == F16_F32 && [ma, mb, mc].iter().all(|map| map.whole(n, mask)) {
                // The whole subgroup: through the dense form, as the wide path holds it.
                let value = |slot: Slot, map: &Map| {
                    let at = slot as usize * n;
                    regs.get(at..at + map.length as usize * n).unwrap_or(&[])
                };
                dense::gather(ma, value(*a, ma), &mut scratch.a);
                dense::gather(mb, value(*b, mb), &mut scratch.b);
                dense::gather(mc, value(*c, mc), &mut scratch.c);
                scratch.out.clear();
                scratch.out.resize(m * nn, 0);
                let operands = [&scratch.a[..], &scratch.b[..], &scratch.c[..]];
                dense::mul_add(
                    types,
                    (m, nn, k),
                    operands,
                    &mut scratch.out,
                    &mut scratch.dense,
                );
                let at = *dst as usize * n;
                if let Some(out) = regs.get_mut(at..at + mc.length as usize * n) {
                    dense::scatter(mc, &scratch.out, out);
                }
                return true;
            }
            ma.gather(regs, n, *a, &mut scratch.a);
            mb.gather(regs, n, *b, &mut scratch.b);
            mc.gather(regs, n, *c, &mut scratch.c);
            scratch.out.clear();
            scratch.out.resize(m * nn, 0);
            let undefined = mul_add(
                types,
                m,
                nn,
                k,
                &scratch.a,
                &scratch.b,
                &scratch.c,
                &mut scratch.out,
            );
            if let Some(im) = int_mul_add(types).filter(|im| undefined && im.saturating) {
                for e in undefined_elements(&im, m, nn, k, &scratch.a, &scratch.b) {
                    if let Some(v) = scratch.out.get_mut(e) {
                        *v = poison(im.result_bits);
                    }
                    let (row, col) = ((e / nn) as u32, (e % nn) as u32);
                    let finding = CF::SaturatingOverflow { row, col };
                    found.push((mc.position(e).0, Finding::Coopmat(finding)));
                }
            }
            for l in bits_of(mask, n) {
                for i in 0..mc.length {
                    let v = mc
                        .elem(l, i)
                        .and_then(|e| scratch.out.get(e as usize).copied())
                        .unwrap_or(0);
                    wr(regs, n, dst + i, l, v);
                }
            }
        }
    }
    true
}

/// The address of element `e` of a load or store by lane `l`, or the finding if it lies outside
/// every addressable offset.
fn element_address(at: &Access, regs: &[u64], n: usize, l: usize, e: u32) -> u64 {
    let s = at.shape;
    let (row, col) = (e / s.cols.max(1), e % s.cols.max(1));
    // RowMajorKHR: "Elements (row,*) ... are taken in order from contiguous locations starting
    // at Pointer[row*Stride]"; ColumnMajorKHR the same with (*,col) and Pointer[col*Stride].
    let (major, minor) = if at.column_major {
        (col, row)
    } else {
        (row, col)
    };
    let stride = at.stride.read(regs, n, l);
    address_of(at, rd(regs, n, at.ptr, l), stride, (major, minor))
}

/// The address of (major, minor) from `ptr` with Stride `stride`: see [`element_address`].
fn address_of(at: &Access, ptr: u64, stride: i128, (major, minor): (u32, u32)) -> u64 {
    let (region, off) = split_pointer(ptr);
    let byte = i128::from(off)
        + i128::from(major) * stride * i128::from(at.pointee)
        + i128::from(minor) * i128::from(at.shape.bytes);
    // An offset outside the pointer's range is out of bounds of any region: the last
    // addressable byte stands for it, so the access code reports it and touches nothing.
    let last = (1i128 << OFFSET_BITS) - 1;
    make_pointer(region, byte.clamp(0, last) as u64)
}

fn load(
    dst: Slot,
    at: &Access,
    regs: &mut [u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    found: &mut Vec<LaneFinding>,
) {
    let Some(map) = cx.layouts.get(at.shape.rows, at.shape.cols) else {
        return;
    };
    if load_rows(dst, at, regs, n, mask, cx, map) {
        return;
    }
    for l in bits_of(mask, n) {
        let mut reported = false;
        let stride = at.stride.read(regs, n, l);
        if stride < 0 {
            let finding = CF::BadStride {
                stride,
                store: false,
            };
            found.push((l, Finding::Coopmat(finding)));
        }
        for i in 0..at.shape.length {
            let v = match map.elem(l, i) {
                Some(e) => {
                    let ptr = element_address(at, regs, n, l, e);
                    let bytes = u64::from(at.shape.bytes);
                    let place = robust_element(cx, (ptr, l, bytes), robust::Access::Load);
                    match place {
                        Ok((Some((w, off, ptr)), _)) => {
                            cx.mem.log(l, ptr, bytes, race::READ | race::MATRIX);
                            w.read(off, at.shape.bytes)
                        }
                        Ok((None, f)) | Err(f) => {
                            if let (false, Some(f)) = (reported, f) {
                                found.push((l, f));
                                reported = true;
                            }
                            0
                        }
                    }
                }
                None => 0,
            };
            wr(regs, n, dst + i, l, v);
        }
    }
}

fn store(
    src: Slot,
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    found: &mut Vec<LaneFinding>,
) {
    let Some(map) = cx.layouts.get(at.shape.rows, at.shape.cols) else {
        return;
    };
    if store_rows(src, at, regs, n, mask, cx, map) {
        return;
    }
    for l in bits_of(mask, n) {
        let mut reported = false;
        let stride = at.stride.read(regs, n, l);
        if stride <= 0 {
            let finding = CF::BadStride {
                stride,
                store: true,
            };
            found.push((l, Finding::Coopmat(finding)));
        }
        for i in 0..at.shape.length {
            let Some(e) = map.elem(l, i) else {
                continue;
            };
            let ptr = element_address(at, regs, n, l, e);
            let bytes = u64::from(at.shape.bytes);
            match robust_element(cx, (ptr, l, bytes), robust::Access::Store) {
                Ok((Some((w, off, ptr)), f)) => {
                    cx.mem.log(l, ptr, bytes, race::WRITE | race::MATRIX);
                    w.write(off, at.shape.bytes, rd(regs, n, src + i, l));
                    if let (false, Some(f)) = (reported, f) {
                        found.push((l, f));
                        reported = true;
                    }
                }
                Ok((None, f)) | Err(f) => {
                    if let (false, Some(f)) = (reported, f) {
                        found.push((l, f));
                        reported = true;
                    }
                }
            }
        }
    }
}

/// Where one element of a cooperative-matrix load or store (`bytes` at `ptr` by lane `l`) goes:
/// in bounds, its own bytes; outside its buffer with `cooperativeMatrixRobustBufferAccess`
/// ([`Mem::coopmat_robust`]: "robust buffer access for SPIR-V OpCooperativeMatrixLoadKHR and
/// OpCooperativeMatrixStoreKHR instructions"), what the buffer robustness makes of it, as a
/// plain access's ([`Mem::out_of_range`]): the bytes it uses (with the pointer to log) or none,
/// and the `robust-access` warning if any; otherwise the `out-of-bounds` finding (`Err`).
#[allow(clippy::type_complexity)]
fn robust_element<'a>(
    cx: &Ctx<'_, 'a>,
    (ptr, l, bytes): (u64, usize, u64),
    access: robust::Access,
) -> Result<(Option<(&'a Words, u64, u64)>, Option<Finding>), Option<Finding>> {
    match cx.mem.resolve(ptr, l, bytes) {
        Ok((w, off)) => Ok((Some((w, off, ptr)), None)),
        // A null descriptor's loads are zero and its stores dropped whatever the robustness.
        Err(f) if cx.mem.coopmat_robust || cx.mem.null_key(ptr).is_some() => {
            match cx.mem.out_of_range(ptr, bytes, access, f) {
                Ok(r) => Ok((r.at, r.warning)),
                Err(f) => Err(Some(f)),
            }
        }
        Err(f) => Err(Some(f)),
    }
}

/// The pointer and stride of a load or store that the whole subgroup makes together, as the
/// spec requires ("Pointer ... Stride ... must be dynamically uniform" — the Uniform checks
/// report otherwise), into memory the invocations share; `None` sends the op down the
/// element-by-element path.
fn uniform_access(
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    map: &Map,
) -> Option<(u64, i128)> {
    if !map.whole(n, mask) {
        return None;
    }
    let ptr = rd(regs, n, at.ptr, 0);
    let stride = at.stride.read(regs, n, 0);
    let same =
        (1..n).all(|l| rd(regs, n, at.ptr, l) == ptr && at.stride.read(regs, n, l) == stride);
    let (region, _) = split_pointer(ptr);
    (same && region != REGION_INVOCATION && stride > 0).then_some((ptr, stride))
}

/// Rows (columns for ColumnMajorKHR) and their length.
fn majors_and_minors(at: &Access) -> (u32, u32) {
    if at.column_major {
        (at.shape.cols, at.shape.rows)
    } else {
        (at.shape.rows, at.shape.cols)
    }
}

/// A load by the whole subgroup with a uniform pointer and stride: one bounds check per row
/// (the elements of a row are contiguous), elements read straight into their registers, each
/// word once. Returns `false` where that does not apply or a row is out of bounds, so that the
/// element-by-element path (which rewrites every register of the value) reports it.
fn load_rows(
    dst: Slot,
    at: &Access,
    regs: &mut [u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    map: &Map,
) -> bool {
    let Some(from) = uniform_access(at, regs, n, mask, map) else {
        return false;
    };
    let base = dst as usize * n;
    // The value's registers: every register of the map lies below `length × n`.
    let Some(out) = regs.get_mut(base..base + map.length as usize * n) else {
        return false;
    };
    if !read_rows(at, from, cx, map, (out, false)) {
        return false;
    }
    for &r in &map.unowned_regs {
        if let Some(x) = out.get_mut(r as usize) {
            *x = 0;
        }
    }
    true
}

/// [`load_rows`] into the dense form `tile` (every element's bits in row-major order) of a
/// value held once for the subgroup, as the wide path holds it (`wide/dense.rs`); `regs` (`n`
/// lanes) holds the Pointer and Stride. `false` (and `tile` unspecified) where the fast path
/// does not apply: the caller then runs the element-by-element path, which reports.
pub fn load_dense(
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    tile: &mut [u64],
) -> bool {
    let Some(map) = cx.layouts.get(at.shape.rows, at.shape.cols) else {
        return false;
    };
    let Some(from) = uniform_access(at, regs, n, mask, map) else {
        return false;
    };
    tile.len() == map.elements() && read_rows(at, from, cx, map, (tile, true))
}

/// Reads every row (column for ColumnMajorKHR) of a load from `ptr0` with Stride `stride`
/// into `out`: the value's registers (`dense` false: [`Map::row_regs`]) or its dense form
/// ([`Map::dense_row`]). `false` at the first row out of bounds.
fn read_rows(
    at: &Access,
    (ptr0, stride): (u64, i128),
    cx: &Ctx<'_, '_>,
    map: &Map,
    (out, dense): (&mut [u64], bool),
) -> bool {
    let (majors, minors) = majors_and_minors(at);
    let bytes = at.shape.bytes;
    let len = u64::from(minors) * u64::from(bytes);
    let span = rows_in_bounds(at, (ptr0, stride), cx);
    for major in 0..majors {
        let (w, off) = match span {
            Some((w, first, pitch)) => (w, first + u64::from(major) * pitch),
            None => match cx
                .mem
                .resolve(address_of(at, ptr0, stride, (major, 0)), 0, len)
            {
                Ok(found) => found,
                Err(_) => return false,
            },
        };
        if cx.mem.logging() {
            let ptr = address_of(at, ptr0, stride, (major, 0));
            log_row(
                at,
                map,
                cx,
                (ptr, major),
                map.lanes as usize,
                race::READ | race::MATRIX,
            );
        }
        let row = map.row_targets(dense, at.column_major, major);
        let aligned = off.is_multiple_of(u64::from(bytes));
        if dense && !at.column_major && aligned {
            // A row of the dense form is contiguous: decoded straight into it.
            let start = major as usize * minors as usize;
            if let (Some(to), Some(words)) = (
                out.get_mut(start..start + minors as usize),
                w.span(off, len),
            ) {
                let skip = (off % 4) as usize;
                match bytes {
                    1 => decode_contiguous::<1>(words, skip, to),
                    2 => decode_contiguous::<2>(words, skip, to),
                    4 => decode_contiguous::<4>(words, skip, to),
                    _ => w.read_run(off, bytes, minors, |minor, v| {
                        if let Some(x) = to.get_mut(minor as usize) {
                            *x = v;
                        }
                    }),
                }
                continue;
            }
        }
        match (bytes, w.span(off, len)) {
            (1, Some(words)) => decode_row::<1>(words, (off % 4) as usize, row, out),
            (2, Some(words)) if aligned => decode_row::<2>(words, (off % 4) as usize, row, out),
            (4, Some(words)) if aligned => decode_row::<4>(words, 0, row, out),
            _ => w.read_run(off, bytes, minors, |minor, v| {
                if let Some(x) = row
                    .get(minor as usize)
                    .and_then(|&r| out.get_mut(r as usize))
                {
                    *x = v;
                }
            }),
        }
    }
    true
}

/// Where the rows (columns for ColumnMajorKHR) of a load or store from `ptr0` with Stride
/// `stride` (> 0, as [`uniform_access`] gives it) lie, when one bounds check shows every one in
/// bounds: the span from the first row's first byte to the last row's last lies inside the
/// region. `(words, offset of row 0, bytes from one row to the next)`; `None` where that span
/// does not fit (a row may still be out of bounds, each is checked alone) or an address was
/// clamped.
pub(crate) fn rows_in_bounds<'m>(
    at: &Access,
    (ptr0, stride): (u64, i128),
    cx: &Ctx<'_, 'm>,
) -> Option<(&'m Words, u64, u64)> {
    let (majors, minors) = majors_and_minors(at);
    let len = u64::from(minors) * u64::from(at.shape.bytes);
    let first = address_of(at, ptr0, stride, (0, 0));
    let last = address_of(at, ptr0, stride, (majors.checked_sub(1)?, 0));
    let pitch = u64::try_from(stride.checked_mul(i128::from(at.pointee))?).ok()?;
    let (f, l) = (split_pointer(first).1, split_pointer(last).1);
    // Every row's address is row 0's plus a whole number of pitches: none was clamped.
    if l.checked_sub(f)? != pitch.checked_mul(u64::from(majors - 1))? {
        return None;
    }
    let (words, off) = cx.mem.resolve(first, 0, (l - f).checked_add(len)?).ok()?;
    Some((words, off, pitch))
}

/// Takes the `B`-byte values (1, 2 or 4 bytes, aligned to their size) of one row apart into
/// their registers (`row`: the register of each value in order, relative to `out`): the row's
/// first value starts at byte `skip` of `words`. What [`Words::read_run`] does, with the
/// value size known at compile time (a third of its cost in a GEMM's tile loads).
fn decode_row<const B: usize>(words: &[AtomicU32], skip: usize, row: &[u32], out: &mut [u64]) {
    let per = 4 / B;
    let mask = (1u64 << (8 * B)) - 1;
    let mut regs = row.iter();
    let mut first = skip / B;
    for w in words {
        let w = u64::from(w.load(Relaxed));
        for s in first..per {
            let Some(&r) = regs.next() else {
                return;
            };
            if let Some(x) = out.get_mut(r as usize) {
                *x = (w >> (8 * B * s)) & mask;
            }
        }
        first = 0;
    }
}

/// [`decode_row`] into consecutive values `out` (a row of a dense form): the values of `B`
/// bytes (1, 2 or 4, aligned to their size) from byte `skip` of `words`, in order.
fn decode_contiguous<const B: usize>(words: &[AtomicU32], skip: usize, out: &mut [u64]) {
    let per = 4 / B;
    let mask = (1u64 << (8 * B)) - 1;
    if skip == 0 && words.len() * per == out.len() {
        // Whole words (a row starting on a word boundary): a fixed count per word.
        for (values, w) in out.chunks_exact_mut(per).zip(words) {
            let w = u64::from(w.load(Relaxed));
            for (s, x) in values.iter_mut().enumerate() {
                *x = (w >> (8 * B * s)) & mask;
            }
        }
        return;
    }
    let mut values = out.iter_mut();
    let mut first = skip / B;
    for w in words {
        let w = u64::from(w.load(Relaxed));
        for s in first..per {
            let Some(x) = values.next() else {
                return;
            };
            *x = (w >> (8 * B * s)) & mask;
        }
        first = 0;
    }
}

/// Logs, when the race or uninitialised-value check is on, one row (at `ptr`) as accesses by the
/// invocations holding its elements, as the element-by-element path does.
fn log_row(
    at: &Access,
    map: &Map,
    cx: &Ctx<'_, '_>,
    (ptr, major): (u64, u32),
    n: usize,
    class: u8,
) {
    if cx.mem.logging() {
        row_runs(at, map, (ptr, major), n, |lane, at, len| {
            cx.mem.log(lane, at, len, class)
        });
    }
}

/// The runs of consecutive elements of one row (at `ptr`) that one invocation holds, as
/// `f(lane, address, bytes)`: a run is one access (the logs merge byte ranges anyway).
fn row_runs(
    at: &Access,
    map: &Map,
    (ptr, major): (u64, u32),
    n: usize,
    mut f: impl FnMut(usize, u64, u64),
) {
    let bytes = u64::from(at.shape.bytes);
    let row = map.row_regs(at.column_major, major);
    let lane_of = |r: u32| r as usize % n.max(1);
    let mut start = 0;
    for run in row.chunk_by(|&x, &y| lane_of(x) == lane_of(y)) {
        if let Some(&r) = run.first() {
            f(
                lane_of(r),
                ptr + start as u64 * bytes,
                run.len() as u64 * bytes,
            );
        }
        start += run.len();
    }
}

/// What a load or store by the whole subgroup (`mask` = every invocation) touches, for the wide
/// path's race screen, when its Pointer and Stride are uniform: the span from its first byte to
/// its last, and, through `runs`, each run of consecutive elements one invocation holds, as
/// `runs(lane, address, bytes)`. `None` (and no call) for any other access.
pub fn touched(
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    layouts: &Layouts,
    runs: Option<&mut dyn FnMut(usize, u64, u64)>,
) -> Option<(u64, u64)> {
    let map = layouts.get(at.shape.rows, at.shape.cols)?;
    let (ptr0, stride) = uniform_access(at, regs, n, mask, map)?;
    let (majors, minors) = majors_and_minors(at);
    let len = u64::from(minors) * u64::from(at.shape.bytes);
    let first = address_of(at, ptr0, stride, (0, 0));
    let last = address_of(at, ptr0, stride, (majors.saturating_sub(1), 0));
    if let Some(f) = runs {
        for major in 0..majors {
            row_runs(
                at,
                map,
                (address_of(at, ptr0, stride, (major, 0)), major),
                n,
                &mut *f,
            );
        }
    }
    Some((first, (last - first).saturating_add(len)))
}

/// The store twin of [`load_rows`]: every row is checked before any byte is written.
fn store_rows(
    src: Slot,
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    map: &Map,
) -> bool {
    let Some(from) = uniform_access(at, regs, n, mask, map) else {
        return false;
    };
    let base = src as usize * n;
    let values = regs
        .get(base..base + map.length as usize * n)
        .unwrap_or(&[]);
    write_rows(at, from, cx, map, (values, false))
}

/// The store twin of [`load_dense`]: `tile` is the value's dense form.
pub fn store_dense(
    at: &Access,
    regs: &[u64],
    n: usize,
    mask: u128,
    cx: &Ctx<'_, '_>,
    tile: &[u64],
) -> bool {
    let Some(map) = cx.layouts.get(at.shape.rows, at.shape.cols) else {
        return false;
    };
    let Some(from) = uniform_access(at, regs, n, mask, map) else {
        return false;
    };
    tile.len() == map.elements() && write_rows(at, from, cx, map, (tile, true))
}

/// Writes every row of a store to `ptr0` with Stride `stride` from `values`, the value's
/// registers or (`dense`) its dense form, as [`read_rows`] reads them; every row is checked
/// before any byte is written (`false`: one is out of bounds, nothing written).
fn write_rows(
    at: &Access,
    (ptr0, stride): (u64, i128),
    cx: &Ctx<'_, '_>,
    map: &Map,
    (values, dense): (&[u64], bool),
) -> bool {
    let (majors, minors) = majors_and_minors(at);
    let bytes = at.shape.bytes;
    let len = u64::from(minors) * u64::from(bytes);
    let row_ptr = |major: u32| address_of(at, ptr0, stride, (major, 0));
    let span = rows_in_bounds(at, (ptr0, stride), cx);
    if span.is_none() && (0..majors).any(|major| cx.mem.resolve(row_ptr(major), 0, len).is_err()) {
        return false;
    }
    for major in 0..majors {
        let ptr = row_ptr(major);
        let (w, off) = match span {
            Some((w, first, pitch)) => (w, first + u64::from(major) * pitch),
            None => match cx.mem.resolve(ptr, 0, len) {
                Ok(found) => found,
                Err(_) => return false,
            },
        };
        log_row(
            at,
            map,
            cx,
            (ptr, major),
            map.lanes as usize,
            race::WRITE | race::MATRIX,
        );
        let row = map.row_targets(dense, at.column_major, major);
        w.write_run(off, bytes, minors, |minor| {
            row.get(minor as usize)
                .and_then(|&r| values.get(r as usize))
                .copied()
                .unwrap_or(0)
        });
    }
    true
}

/// The integer form of a MulAdd's types, when every operand is an integer matrix.
fn int_mul_add(t: &MulAddTypes) -> Option<IntMulAdd> {
    let int = |c: Component| match c {
        Component::Int { bits, signed } => Some((bits, signed)),
        _ => None,
    };
    let ((a_bits, a_signed), (b_bits, b_signed)) = (int(t.a)?, int(t.b)?);
    let ((c_bits, c_signed), (result_bits, result_signed)) = (int(t.c)?, int(t.result)?);
    Some(IntMulAdd {
        a_bits,
        a_signed,
        b_bits,
        b_signed,
        c_bits,
        c_signed,
        result_bits,
        result_signed,
        saturating: t.saturating,
    })
}

/// B's columns as rows (`bt[j * k + p]` = `b[p * n + j]`).
fn transpose(b: &[u64], k: usize, n: usize) -> Vec<u64> {
    let mut bt = vec![0; k * n];
    for (p, row) in b.chunks(n.max(1)).enumerate().take(k) {
        for (j, &v) in row.iter().enumerate() {
            if let Some(t) = bt.get_mut(j * k + p) {
                *t = v;
            }
        }
    }
    bt
}

/// `out` = `a` (m×k) × `b` (k×n) + `c` (m×n), row-major raw component bits, by the blocked kernel
/// ([`crate::semantics::coopmat_kernel`], bit-identical to the element reference). Returns whether
/// a saturating element was undefined. The gathers size every matrix and lowering refuses
/// operands that mix float and integer components, so the kernel's errors cannot happen here; if
/// one did, the result is all zeros rather than stale values.
#[allow(clippy::too_many_arguments)]
pub fn mul_add(
    op: &MulAddTypes,
    m: usize,
    n: usize,
    k: usize,
    a: &[u64],
    b: &[u64],
    c: &[u64],
    out: &mut [u64],
) -> bool {
    kernel::mul_add(op, m, n, k, a, b, c, out).unwrap_or_else(|e| {
        debug_assert!(false, "MulAdd kernel: {e}");
        out.fill(0);
        false
    })
}

/// The result elements of a saturating integer MulAdd that the spec leaves undefined.
fn undefined_elements(
    im: &IntMulAdd,
    m: usize,
    n: usize,
    k: usize,
    a: &[u64],
    b: &[u64],
) -> Vec<usize> {
    let bt = transpose(b, k, n);
    (0..m * n)
        .filter(|&e| {
            let (i, j) = (e / n, e % n);
            match (a.get(i * k..i * k + k), bt.get(j * k..j * k + k)) {
                (Some(row), Some(col)) => im.element_is_undefined(row, col),
                _ => false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_bijections_onto_their_positions() {
        for layout in CoopmatLayout::all() {
            for (rows, cols, lanes) in [(16, 16, 32), (8, 8, 128), (16, 8, 64), (3, 5, 4)] {
                let map = Map::new(rows, cols, lanes, layout);
                let elems = (rows * cols) as usize;
                assert_eq!(map.length, (rows * cols).div_ceil(lanes));
                let mut seen = vec![false; elems];
                for l in 0..lanes as usize {
                    for i in 0..map.length {
                        if let Some(e) = map.elem(l, i) {
                            assert!(!seen[e as usize], "{layout} element {e} twice");
                            seen[e as usize] = true;
                            assert_eq!(map.position(e as usize), (l, i));
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "{layout} {rows}x{cols}/{lanes}");
            }
        }
    }

    #[test]
    fn striped_layouts_put_a_run_of_a_row_or_column_in_one_invocation() {
        let row = Map::new(4, 4, 2, CoopmatLayout::RowStriped);
        // Lane 0 holds rows 0 and 1, lane 1 rows 2 and 3.
        assert_eq!(row.elem(0, 5), Some(5));
        assert_eq!(row.elem(1, 0), Some(8));
        let col = Map::new(4, 4, 2, CoopmatLayout::ColumnStriped);
        // Lane 0 index 1 is (row 1, column 0): element 4.
        assert_eq!(col.elem(0, 1), Some(4));
        assert_eq!(col.elem(1, 0), Some(2));
        assert_ne!(
            Map::new(16, 16, 32, CoopmatLayout::Shuffled(1)),
            Map::new(16, 16, 32, CoopmatLayout::Shuffled(2))
        );
    }

    #[test]
    fn mul_add_matches_a_plain_product() {
        let t = MulAddTypes {
            a: Component::Int {
                bits: 8,
                signed: true,
            },
            b: Component::Int {
                bits: 8,
                signed: false,
            },
            c: Component::Int {
                bits: 32,
                signed: true,
            },
            result: Component::Int {
                bits: 32,
                signed: true,
            },
            saturating: false,
        };
        // A = [[-1, 2], [3, 4]] (signed 8-bit), B = [[255, 0], [1, 2]] (unsigned), C = 1.
        let a = [0xff, 2, 3, 4];
        let b = [255, 0, 1, 2];
        let c = [1, 1, 1, 1];
        let mut out = [0; 4];
        mul_add(&t, 2, 2, 2, &a, &b, &c, &mut out);
        let want: Vec<u64> = [-255 + 2 + 1, 4 + 1, 765 + 4 + 1, 8 + 1]
            .iter()
            .map(|&v: &i64| (v as u64) & 0xffff_ffff)
            .collect();
        assert_eq!(out.to_vec(), want);
    }
}
