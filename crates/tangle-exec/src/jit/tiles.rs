//! The native tier's tile store ([`super::coopmat`]): one worker's tiles, one per matrix
//! register range of the compiled program, and the tile ops the compiled code calls
//! ([`super::native::coopmat_op`] → [`Tiles::run`]): loads, stores, MulAdds, copies, moves
//! and splats of whole matrices held once per lockstep group (one subgroup). An op with a
//! fast form ([`super::coopmat::Fast`]: an unlogged row-major f16 load, the 16³
//! f16 × f16 + f32 MulAdd accumulating in C's tile) has an entry of its own
//! ([`Tiles::load_op`], [`Tiles::mul_add_op`]) that runs it without the general dispatch and
//! the forms' conversions, and hands it to [`Tiles::run`] where a check fails.
//!
//! A tile holds its elements row-major as raw bits (`u64`, what the reference path's dense
//! form holds, [`crate::run::coopmat_dense`]), as `f32` values (binary32 components as
//! themselves, binary16 components widened, [`crate::semantics::coopmat_kernel::widen_words`],
//! with the loaded words kept so that a store writes their exact bits back), or both. The
//! f16 × f16 + f32 → f32 MulAdd runs the reference path's kernel on typed tiles; every other
//! combination, and every load or store the typed paths do not cover, runs the reference
//! path's dense-form functions on raw bits. `false` from an op gives the dispatch back, and the
//! reference path reports what it found.

use super::coopmat::{Fast, TileOp, TileProgram, Val};
use super::log::LogState;
use super::native::Avx2;
use crate::run::coopmat::{Access, CoopmatInst};
use crate::run::coopmat_dense::F16_F32;
use crate::run::memory::{split_pointer, Words, FIRST_BUFFER, REGION_UNBOUND};
use crate::semantics::coopmat_kernel::widen_f16;
use crate::semantics::coopmat_types::MulAddTypes;

/// One range's tile: raw bits, typed values, or both (at least one of `raw` and `packed`, or
/// f32 values, holds the value's bits).
#[derive(Debug, Default, Clone)]
struct Tile {
    raw: Vec<u64>,
    val: Vec<f32>,
    /// A binary16 tile's bits as loaded, two a word, row-major.
    packed: Vec<u32>,
    raw_ok: bool,
    packed_ok: bool,
    val_kind: Option<Val>,
    /// The f32 values are a MulAdd's result, whose every NaN reads as the canonical one
    /// (`float_bits`): made so when their bits are taken ([`f32_bits`]), not per MulAdd (a
    /// NaN fed to another MulAdd gives a NaN either way).
    canonical: bool,
}

impl Tile {
    fn new(elements: usize) -> Tile {
        Tile {
            raw: vec![0; elements],
            val: vec![0.0; elements],
            packed: Vec::with_capacity(elements.div_ceil(2)),
            raw_ok: true,
            packed_ok: false,
            val_kind: None,
            canonical: false,
        }
    }

    /// The bits of this tile's f32 values into `out` (a MulAdd's NaNs as the canonical one): a
    /// plain loop, which the compiler makes a compare and a select a vector.
    fn f32_bits_into(&self, out: &mut [u32]) {
        let canonical = self.canonical;
        for (o, &v) in out.iter_mut().zip(&self.val) {
            *o = f32_bits(canonical, v);
        }
    }

    /// Makes the raw bits hold the value.
    fn ensure_raw(&mut self) {
        if self.raw_ok {
            return;
        }
        if self.packed_ok {
            for (pair, &w) in self.raw.chunks_mut(2).zip(&self.packed) {
                for (i, r) in pair.iter_mut().enumerate() {
                    *r = u64::from(w >> (16 * i) & 0xffff);
                }
            }
        } else if self.val_kind == Some(Val::F32) {
            let canonical = self.canonical;
            for (r, &v) in self.raw.iter_mut().zip(&self.val) {
                *r = u64::from(f32_bits(canonical, v));
            }
        } else if self.val_kind == Some(Val::F16) {
            // A tile loaded without its words ([`Fast::F16Rows`]) is only read by f16 MulAdds
            // (the plan checks it): never here. Its values narrowed back are its bits but for
            // a NaN's payload.
            debug_assert!(false, "the bits of an f16 tile loaded without its words");
            for (r, &v) in self.raw.iter_mut().zip(&self.val) {
                *r = u64::from(half::f16::from_f32(v).to_bits());
            }
        }
        self.raw_ok = true;
    }

    /// Makes the typed values of `kind` hold the value (from the raw bits, as the reference
    /// path reads a component of that type: the low 32 or 16 bits).
    fn ensure_val(&mut self, kind: Val) {
        if self.val_kind == Some(kind) {
            return;
        }
        self.ensure_raw();
        match kind {
            Val::F32 => {
                for (v, &r) in self.val.iter_mut().zip(&self.raw) {
                    *v = f32::from_bits(r as u32);
                }
            }
            Val::F16 => {
                for (v, &r) in self.val.iter_mut().zip(&self.raw) {
                    *v = widen_f16(r as u16);
                }
            }
        }
        // Read from exact bits.
        self.val_kind = Some(kind);
        self.canonical = false;
    }

    /// The raw bits now hold the value, alone.
    fn raw_written(&mut self) {
        (self.raw_ok, self.packed_ok, self.val_kind) = (true, false, None);
        self.canonical = false;
    }

    /// The f32 values now hold the value, alone: a MulAdd's result when `canonical`.
    fn f32_written(&mut self, canonical: bool) {
        (self.raw_ok, self.packed_ok, self.val_kind) = (false, false, Some(Val::F32));
        self.canonical = canonical;
    }

    /// The widened binary16 values now hold the value, with the packed words when `words`.
    fn f16_written(&mut self, words: bool) {
        (self.raw_ok, self.packed_ok, self.val_kind) = (false, words, Some(Val::F16));
        self.canonical = false;
    }
}

/// The bits of an f32 value of a tile, `canonical` where the tile is a MulAdd's result (whose
/// every NaN reads as the canonical one, as the reference path makes it).
fn f32_bits(canonical: bool, v: f32) -> u32 {
    if canonical && v.is_nan() {
        0x7fc0_0000
    } else {
        v.to_bits()
    }
}

/// A store op's race-log entries for one Stride, and how far past the Pointer the last one
/// ends.
#[derive(Debug, Clone)]
struct StoreLog {
    stride: u64,
    entries: Vec<StoreRun>,
    extent: u64,
    /// The entries as one run repeated on rows (the first, the pitch, the rows), where they
    /// are: logged as one entry of whole tiles ([`crate::wide::rows`]).
    rows: Option<(StoreRun, u64, u64)>,
}

impl StoreLog {
    /// Where `entries` are one run repeated on rows a pitch apart by the invocations after
    /// the row before's (a row-striped layout's rows): the first, the pitch and the rows.
    fn as_rows(entries: &[StoreRun]) -> Option<(StoreRun, u64, u64)> {
        let (a, b) = (entries.first()?, entries.get(1)?);
        let pitch = b.rel.checked_sub(a.rel)?;
        let row = |(r, e): (usize, &StoreRun)| {
            let r = r as u64;
            e.len == a.len
                && e.count == a.count
                && Some(e.rel) == r.checked_mul(pitch).and_then(|d| d.checked_add(a.rel))
                && Some(e.lane) == r.checked_mul(a.count).and_then(|d| d.checked_add(a.lane))
        };
        let wide_enough = a.len.checked_mul(a.count).is_some_and(|w| w <= pitch);
        (wide_enough && entries.iter().enumerate().all(row)).then_some((
            *a,
            pitch,
            entries.len() as u64,
        ))
    }

    /// Logs the store of the group whose first invocation is `first` at `ptr`.
    fn log_at(&self, ptr: u64, first: u64, log: &mut LogState) {
        match self.rows {
            Some((row, pitch, rows)) => log.rows.push(crate::wide::rows::Rows {
                row: row.access(ptr, first),
                pitch,
                rows,
            }),
            None => log
                .log
                .extend(self.entries.iter().map(|r| r.access(ptr, first))),
        }
    }
}

/// Consecutive invocations' accesses of one store, each `len` bytes right after the one
/// before (a run of the race log, [`crate::wide::races::Access`]): from invocation `lane`
/// after the group's first, at `rel` bytes after the Pointer, `count` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StoreRun {
    lane: u64,
    rel: u64,
    len: u64,
    count: u64,
}

impl StoreRun {
    /// Its log entry for a group whose first invocation is `first`, storing at `ptr`.
    fn access(&self, ptr: u64, first: u64) -> crate::wide::races::Access {
        crate::wide::races::Access {
            ptr: ptr + self.rel,
            len: self.len,
            step: self.len,
            count: self.count,
            first: first + self.lane,
            write: true,
        }
    }
}

/// One worker's tile store for a compiled program with matrices: a tile per range (a worker
/// runs one group at a time, and a group's tiles are written before they are read: the wide
/// plan refuses a program that may read an undefined value), and what the ops need of the
/// dispatch.
pub(crate) struct Tiles<'s> {
    prog: std::sync::Arc<TileProgram>,
    s: &'s crate::run::Shared<'s>,
    no_memory: Words,
    tiles: Vec<Tile>,
    /// A register file of two slots for the reference path's functions: the Pointer in slot
    /// 0 and the Stride in slot 1 of every lane.
    regs: Vec<u64>,
    /// A MulAdd's raw result, before it becomes the destination's tile.
    raw_out: Vec<u64>,
    /// The words of an f32 tile on their way to or from memory.
    words: Vec<u32>,
    /// Each store op's race-log entries, by op ([`Tiles::log_store`]).
    store_logs: Vec<Option<StoreLog>>,
    scratch: crate::run::coopmat_dense::Scratch,
    /// Tile ops run, for [`crate::report::Stats::dense_matrix_ops`].
    pub(crate) ops_run: u64,
    /// The CPU's AVX2, FMA and F16C, for the fast entries' kernels.
    cpu: Option<Avx2>,
}

impl std::fmt::Debug for Tiles<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tiles")
    }
}

impl<'s> Tiles<'s> {
    pub(crate) fn new(prog: std::sync::Arc<TileProgram>, s: &'s crate::run::Shared<'s>) -> Self {
        let mut tiles: Vec<Tile> = prog.sizes.iter().map(|&n| Tile::new(n)).collect();
        for &(r, bits) in &prog.splats {
            if let Some(t) = tiles.get_mut(r) {
                t.raw.fill(bits);
            }
        }
        let cpu = Avx2::detect();
        Tiles {
            prog,
            s,
            no_memory: Words::default(),
            tiles,
            regs: Vec::new(),
            raw_out: Vec::new(),
            words: Vec::new(),
            store_logs: Vec::new(),
            scratch: Default::default(),
            ops_run: 0,
            cpu,
        }
    }

    /// Runs load op `index` (one the race screen does not log) at the group's Pointer and
    /// Stride: its fast form ([`Fast::F16Rows`]) where it applies and every check holds, else
    /// [`Tiles::run`]. `false` as there.
    pub(crate) fn load_op(&mut self, index: u64, uniform: (u64, u64)) -> bool {
        if self.load_f16_rows(index, uniform).is_some() {
            self.ops_run += 1;
            return true;
        }
        self.run_unlogged(index, uniform)
    }

    /// [`Tiles::run`] of an op its fast entry did not take, unlogged: kept out of the fast
    /// entries' code (a call, not their frame's size).
    #[cold]
    #[inline(never)]
    fn run_unlogged(&mut self, index: u64, uniform: (u64, u64)) -> bool {
        self.run(index, uniform, 0, None)
    }

    /// [`Fast::F16Rows`]: the rows, all in one buffer, widened straight into the tile's values
    /// (its words kept where the plan says something may read its bits). `None` (nothing
    /// changed) where it does not apply.
    fn load_f16_rows(&mut self, index: u64, (ptr, stride): (u64, u64)) -> Option<()> {
        let cpu = self.cpu?;
        let i = usize::try_from(index).ok()?;
        let (Some(&Fast::F16Rows { dst, words }), Some(TileOp::Load { at, .. })) =
            (self.prog.fast.get(i), self.prog.ops.get(i))
        else {
            return None;
        };
        let (rows, cols, pitch, block) = buffer_rows(self.s, at, (ptr, stride))?;
        let tile = self.tiles.get_mut(dst)?;
        let per_row = cols / 2;
        if tile.val.len() != rows * cols || !cols.is_multiple_of(2) {
            return None;
        }
        let pitch = (pitch / 4) as usize;
        let packed = if words {
            tile.packed.resize(rows * per_row, 0);
            Some(&mut tile.packed[..])
        } else {
            None
        };
        let shape = (pitch, per_row, rows);
        if !super::native::load_f16_rows(cpu, block, shape, packed, &mut tile.val) {
            return None;
        }
        tile.f16_written(words);
        Some(())
    }

    /// Runs MulAdd op `index`: its fast form ([`Fast::MulAdd16`]) where it applies (A and B
    /// held as f16 values, C as f32 values, the CPU with AVX2 and FMA), else [`Tiles::run`].
    /// `false` as there.
    pub(crate) fn mul_add_op(&mut self, index: u64) -> bool {
        if self.mul_add_16(index).is_some() {
            self.ops_run += 1;
            return true;
        }
        self.run_unlogged(index, (0, 0))
    }

    /// [`Fast::MulAdd16`]: the 16³ kernel on the tiles' values, accumulating in C's tile.
    fn mul_add_16(&mut self, index: u64) -> Option<()> {
        let cpu = self.cpu?;
        let &Fast::MulAdd16 { acc, a, b } = self.prog.fast.get(usize::try_from(index).ok()?)?
        else {
            return None;
        };
        let [ta, tb, tc] = self.tiles.get_disjoint_mut([a, b, acc]).ok()?;
        let typed = (ta.val_kind, tb.val_kind, tc.val_kind);
        if typed != (Some(Val::F16), Some(Val::F16), Some(Val::F32)) {
            return None;
        }
        let av = <&[f32; 256]>::try_from(&ta.val[..]).ok()?;
        let bv = <&[f32; 256]>::try_from(&tb.val[..]).ok()?;
        let cv = <&mut [f32; 256]>::try_from(&mut tc.val[..]).ok()?;
        super::native::mul_add_16(cpu, av, bv, cv);
        // Its NaNs read as the canonical one, as the reference path makes every NaN result.
        tc.f32_written(true);
        Some(())
    }

    /// Runs tile op `index` for the group whose first invocation is `first`, with the group's
    /// Pointer and Stride (for a load or store); logs into `log` when it is given. `false`
    /// where the reference path must run the dispatch (it reports what this found).
    pub(crate) fn run(
        &mut self,
        index: u64,
        (ptr, stride): (u64, u64),
        first: u64,
        log: Option<&mut LogState>,
    ) -> bool {
        let Some(&op) = usize::try_from(index)
            .ok()
            .and_then(|i| self.prog.ops.get(i))
        else {
            return false;
        };
        self.ops_run += 1;
        match op {
            TileOp::Load { dst, ref at } => {
                self.load(dst, at, (ptr, stride), first, log.map(|l| &mut l.log))
            }
            TileOp::Store { src, ref at } => {
                let op = (index as usize, src);
                self.store(op, at, (ptr, stride), first, log)
            }
            TileOp::MulAdd {
                dst,
                a,
                b,
                c,
                ref types,
                dims,
            } => self.mul_add(types, dims, [dst, a, b, c]),
            TileOp::Copy { dst, src } => self.copy(dst, src),
            TileOp::Move { dst, src } => {
                if dst >= self.tiles.len() || src >= self.tiles.len() {
                    return false;
                }
                self.tiles.swap(dst, src);
                true
            }
            TileOp::Splat { dst, bits } => self.splat(dst, bits),
        }
    }

    /// Every element of range `dst` ← `bits`: as f32 values where a MulAdd reads the range as
    /// f32 (an accumulator's zero fill) and the bits are a 32-bit value's (whose bits the
    /// values then give back), else as raw bits.
    fn splat(&mut self, dst: usize, bits: u64) -> bool {
        let typed = self.prog.hints.get(dst) == Some(&Some(Val::F32)) && bits >> 32 == 0;
        let Some(t) = self.tiles.get_mut(dst) else {
            return false;
        };
        if typed {
            t.val.fill(f32::from_bits(bits as u32));
            t.f32_written(false);
        } else {
            t.raw.fill(bits);
            t.raw_written();
        }
        true
    }

    /// Range `dst` ← range `src` (of the same shape), in the forms that hold it.
    fn copy(&mut self, dst: usize, src: usize) -> bool {
        if dst == src {
            return true;
        }
        let (lo, hi) = (dst.min(src), dst.max(src));
        let Some((head, tail)) = (hi < self.tiles.len()).then(|| self.tiles.split_at_mut(hi))
        else {
            return false;
        };
        let (Some(a), Some(b)) = (head.get_mut(lo), tail.first_mut()) else {
            return false;
        };
        let (to, from) = if dst < src { (a, b) } else { (b, a) };
        if from.raw_ok {
            to.raw.copy_from_slice(&from.raw);
        }
        if from.val_kind.is_some() {
            to.val.copy_from_slice(&from.val);
        }
        if from.packed_ok {
            to.packed.clone_from(&from.packed);
        }
        (to.raw_ok, to.packed_ok, to.val_kind) = (from.raw_ok, from.packed_ok, from.val_kind);
        to.canonical = from.canonical;
        true
    }

    /// The rows a row-major load or store of `at` at (Pointer, Stride) touches, when all are in
    /// bounds, each starts on a word and holds whole words, and the Stride is positive: (rows,
    /// columns, the pitch in bytes, the words from the first row's start to the last row's
    /// end). The typed load and store take these; anything else goes the reference path's
    /// dense-form way.
    fn rows<'a>(
        s: &'a crate::run::Shared<'_>,
        no_memory: &'a Words,
        at: &Access,
        (ptr, stride): (u64, u64),
    ) -> Option<(usize, usize, u64, &'a [std::sync::atomic::AtomicU32])> {
        let positive = i128::from(stride_of(at, stride)?);
        let full = || {
            let mem = Self::mem(s, no_memory);
            let cx = crate::run::coopmat::Ctx {
                layouts: &s.layouts,
                mem: &mem,
                lanes: s.sg,
            };
            let (words, off0, pitch) =
                crate::run::coopmat::rows_in_bounds(at, (ptr, positive), &cx)?;
            let (rows, cols, block) = whole_words(at, off0, pitch, words)?;
            Some((rows, cols, pitch, block))
        };
        let region = split_pointer(ptr).0;
        if at.column_major || region < FIRST_BUFFER || crate::run::memory::unbound_of(ptr).is_some()
        {
            return full();
        }
        let fast = buffer_rows(s, at, (ptr, stride));
        debug_assert_eq!(
            fast.map(|(r, c, p, b)| (r, c, p, b.as_ptr(), b.len())),
            full().map(|(r, c, p, b)| (r, c, p, b.as_ptr(), b.len())),
            "the typed path's rows and rows_in_bounds disagree"
        );
        fast
    }

    /// The dispatch's memory as the reference path's access code sees it (no Workgroup or
    /// invocation memory: the programs taken have none).
    fn mem<'a>(s: &'a crate::run::Shared<'_>, no_memory: &'a Words) -> crate::run::access::Mem<'a> {
        crate::run::access::Mem {
            buffers: s.buffers,
            descriptors: &s.descriptors,
            images: s.images,
            samplers: &s.samplers,
            push: s.push,
            workgroup: no_memory,
            invocation: no_memory,
            invocation_bytes: s.fast.invocation_bytes,
            races: None,
            written: None,
            robust: (s.options.robustness, s.options.policy.robust),
            image_robust: s.options.image_robustness,
            coopmat_robust: s.options.coopmat_robustness,
            null_descriptor: s.options.null_descriptor,
        }
    }

    /// `at` reading its Pointer from slot 0 and its Stride from slot 1 of [`Tiles::regs`],
    /// which now hold `ptr` and `stride` in every lane: the reference path's functions then
    /// see the group's uniform operands.
    fn uniform_regs(&mut self, at: &Access, (ptr, stride): (u64, u64)) -> Access {
        let sg = self.s.sg;
        self.regs.clear();
        self.regs.resize(sg, ptr);
        self.regs.resize(2 * sg, stride);
        let mut a = *at;
        a.ptr = 0;
        a.stride.slot = 1;
        a
    }

    /// Logs a load or store as the wide path does; `false` where it cannot (not uniform).
    fn log(
        &mut self,
        at: &Access,
        first: u64,
        log: Option<&mut Vec<crate::wide::races::Access>>,
        write: bool,
    ) -> bool {
        let Some(log) = log else { return true };
        let sg = self.s.sg;
        let inst = if write {
            CoopmatInst::Store { src: 2, at: *at }
        } else {
            CoopmatInst::Load { dst: 2, at: *at }
        };
        let mask = crate::run::alu::full_mask(sg);
        crate::wide::log_coopmat(&inst, &self.regs, sg, mask, self.s, first, log).is_ok()
    }

    fn load(
        &mut self,
        dst: usize,
        at: &Access,
        uniform: (u64, u64),
        first: u64,
        log: Option<&mut Vec<crate::wide::races::Access>>,
    ) -> bool {
        if log.is_some() {
            let at = self.uniform_regs(at, uniform);
            if !self.log(&at, first, log, false) {
                return false;
            }
        }
        if let Some(kind) = self.prog_hint(dst, at) {
            if self.load_typed(dst, at, uniform, kind) {
                return true;
            }
        }
        let at = self.uniform_regs(at, uniform);
        let sg = self.s.sg;
        let mask = crate::run::alu::full_mask(sg);
        let mem = Self::mem(self.s, &self.no_memory);
        let cx = crate::run::coopmat::Ctx {
            layouts: &self.s.layouts,
            mem: &mem,
            lanes: sg,
        };
        let Some(tile) = self.tiles.get_mut(dst) else {
            return false;
        };
        let ok = crate::run::coopmat::load_dense(&at, &self.regs, sg, mask, &cx, &mut tile.raw);
        tile.raw_written();
        ok
    }

    /// The typed form a load into range `dst` decodes into, if any: by the element's size.
    fn prog_hint(&self, dst: usize, at: &Access) -> Option<Val> {
        let hint = self.prog.hints.get(dst).copied().flatten()?;
        match (hint, at.shape.bytes) {
            (Val::F16, 2) | (Val::F32, 4) => Some(hint),
            _ => None,
        }
    }

    /// A row-major load of f16 or f32 elements, every row inside one buffer and aligned to its
    /// element: decoded straight into the typed form. `false` (nothing changed) otherwise.
    fn load_typed(
        &mut self,
        dst: usize,
        at: &Access,
        (ptr, stride): (u64, u64),
        kind: Val,
    ) -> bool {
        if at.column_major || split_pointer(ptr).0 < FIRST_BUFFER {
            return false;
        }
        let Some((rows, cols, pitch, block)) =
            Self::rows(self.s, &self.no_memory, at, (ptr, stride))
        else {
            return false;
        };
        let Some(tile) = self.tiles.get_mut(dst) else {
            return false;
        };
        if tile.val.len() != rows * cols {
            return false;
        }
        let per_row = cols * at.shape.bytes as usize / 4;
        let pitch = (pitch / 4) as usize;
        match kind {
            Val::F32 => {
                // The rows' words, then their values.
                self.words.resize(rows * per_row, 0);
                if !super::native::copy_rows(block, (pitch, per_row), &mut self.words, true) {
                    return false;
                }
                for (v, &w) in tile.val.iter_mut().zip(&self.words) {
                    *v = f32::from_bits(w);
                }
                tile.f32_written(false);
            }
            Val::F16 => {
                // The rows' words, kept, then widened in one pass.
                tile.packed.resize(rows * per_row, 0);
                let fused = self.cpu.is_some_and(|cpu| {
                    let packed = Some(&mut tile.packed[..]);
                    let shape = (pitch, per_row, rows);
                    super::native::load_f16_rows(cpu, block, shape, packed, &mut tile.val)
                });
                if !fused {
                    if !super::native::copy_rows(block, (pitch, per_row), &mut tile.packed, true) {
                        return false;
                    }
                    crate::semantics::coopmat_kernel::widen_words(&tile.packed, &mut tile.val);
                }
                tile.f16_written(true);
            }
        }
        true
    }

    fn store(
        &mut self,
        (index, src): (usize, usize),
        at: &Access,
        uniform: (u64, u64),
        first: u64,
        log: Option<&mut LogState>,
    ) -> bool {
        if let Some(log) = log {
            if !self.log_store(index, at, uniform, first, log) {
                return false;
            }
        }
        if self.store_f32(src, at, uniform) {
            return true;
        }
        let at = self.uniform_regs(at, uniform);
        let sg = self.s.sg;
        let mask = crate::run::alu::full_mask(sg);
        let Some(tile) = self.tiles.get_mut(src) else {
            return false;
        };
        tile.ensure_raw();
        let mem = Self::mem(self.s, &self.no_memory);
        let cx = crate::run::coopmat::Ctx {
            layouts: &self.s.layouts,
            mem: &mem,
            lanes: sg,
        };
        let tile = self.tiles.get(src).map_or(&[][..], |t| &t.raw);
        crate::run::coopmat::store_dense(&at, &self.regs, sg, mask, &cx, tile)
    }

    /// Logs store op `index` of the group whose first invocation is `first` as [`Tiles::log`]
    /// does. Its entries are the same offsets from the Pointer every time the op runs with the
    /// same Stride (the layout's runs of each invocation, `run::coopmat::touched`), unless an
    /// address was clamped at the end of the offsets' range: the first store computes them,
    /// the next ones with that Stride add them to their Pointer (32 pushes where the layout
    /// walk cost 7 k instructions).
    fn log_store(
        &mut self,
        index: usize,
        at: &Access,
        (ptr, stride): (u64, u64),
        first: u64,
        log: &mut LogState,
    ) -> bool {
        use crate::run::memory::{unbound_of, OFFSET_BITS};
        // Every address strictly inside the offsets' range: none was clamped.
        let (region, off) = split_pointer(ptr);
        let plain = region >= FIRST_BUFFER && unbound_of(ptr).is_none();
        let unclamped = |extent: u64| {
            off.checked_add(extent)
                .is_some_and(|e| e < 1 << OFFSET_BITS)
        };
        if let Some(Some(c)) = self.store_logs.get(index) {
            if c.stride == stride && plain && unclamped(c.extent) {
                c.log_at(ptr, first, log);
                return true;
            }
        }
        // Logged apart first: in the log itself its first run could join the entry before
        // it ([`crate::wide::races::push_run`]), and the entries kept for the next stores
        // would lack that run.
        let mut made: Vec<crate::wide::races::Access> = Vec::new();
        let regs_at = self.uniform_regs(at, (ptr, stride));
        if !self.log(&regs_at, first, Some(&mut made), true) {
            return false;
        }
        let entries: Option<Vec<StoreRun>> = made
            .iter()
            .map(|a| {
                // Runs of consecutive invocations as the log joined them
                // ([`crate::wide::races::push_run`]: a row-striped 16-column f32 tile's row is
                // two or four invocations' runs at subgroups of 32 or 64).
                let same = split_pointer(a.ptr).0 == region && a.ptr >= ptr && a.step == a.len;
                same.then(|| StoreRun {
                    lane: a.first.wrapping_sub(first),
                    rel: a.ptr - ptr,
                    len: a.len,
                    count: a.count,
                })
            })
            .collect();
        let extent = made.iter().map(|a| a.end() - ptr).max().unwrap_or(0);
        if let (Some(entries), true) = (entries, plain && unclamped(extent)) {
            if self.store_logs.len() <= index {
                self.store_logs.resize(index + 1, None);
            }
            if let Some(slot) = self.store_logs.get_mut(index) {
                let c = StoreLog {
                    stride,
                    rows: StoreLog::as_rows(&entries),
                    entries,
                    extent,
                };
                // This store's entries as the next ones will be logged.
                c.log_at(ptr, first, log);
                *slot = Some(c);
                return true;
            }
        }
        log.log.append(&mut made);
        true
    }

    /// A row-major store of an f32 tile held typed into 4-byte elements of one buffer, every
    /// row in bounds (checked before any is written). `false` (nothing written) otherwise.
    fn store_f32(&mut self, src: usize, at: &Access, (ptr, stride): (u64, u64)) -> bool {
        let Some(tile) = self.tiles.get(src) else {
            return false;
        };
        if tile.val_kind != Some(Val::F32)
            || at.shape.bytes != 4
            || at.column_major
            || split_pointer(ptr).0 < FIRST_BUFFER
        {
            return false;
        }
        let Some((rows, cols, pitch, block)) =
            Self::rows(self.s, &self.no_memory, at, (ptr, stride))
        else {
            return false;
        };
        if tile.val.len() != cols * rows {
            return false;
        }
        let pitch = (pitch / 4) as usize;
        // The bits (a MulAdd's NaNs canonical), then the rows.
        self.words.resize(tile.val.len(), 0);
        tile.f32_bits_into(&mut self.words);
        super::native::copy_rows(block, (pitch, cols), &mut self.words, false)
    }

    /// `dst` = `a` × `b` + `c`: the f16 × f16 + f32 → f32 case on typed tiles, any other on
    /// raw bits with the reference path's dense-form function.
    fn mul_add(
        &mut self,
        types: &MulAddTypes,
        (m, n, k): (usize, usize, usize),
        [dst, a, b, c]: [usize; 4],
    ) -> bool {
        let sizes_ok = [(a, m * k), (b, k * n), (c, m * n), (dst, m * n)]
            .iter()
            .all(|&(r, len)| self.tiles.get(r).is_some_and(|t| t.raw.len() == len));
        if !sizes_ok {
            return false;
        }
        if *types == F16_F32 {
            return self.mul_add_f16_f32((m, n, k), [dst, a, b, c]);
        }
        for r in [a, b, c] {
            if let Some(t) = self.tiles.get_mut(r) {
                t.ensure_raw();
            }
        }
        // Into a spare buffer: the destination may be C (a folded move, [`super::coopmat`]).
        let mut out = std::mem::take(&mut self.raw_out);
        out.clear();
        out.resize(m * n, 0);
        let ok = match (self.tiles.get(a), self.tiles.get(b), self.tiles.get(c)) {
            (Some(ta), Some(tb), Some(tc)) => crate::run::coopmat_dense::mul_add(
                types,
                (m, n, k),
                [&ta.raw, &tb.raw, &tc.raw],
                &mut out,
                &mut self.scratch,
            ),
            _ => false,
        };
        if let Some(t) = self.tiles.get_mut(dst) {
            self.raw_out = std::mem::replace(&mut t.raw, out);
            t.raw_written();
        }
        ok
    }

    /// The f16 × f16 + f32 → f32 MulAdd on typed tiles: A and B as widened f16 values, C as
    /// f32 values, the result accumulated in the destination's own values (C's copied there
    /// first unless C is the destination, as a GEMM's folded `acc = coopMatMulAdd(a, b, acc)`
    /// is: [`super::coopmat`]'s folds). Its NaNs read as the canonical one, as the reference
    /// path makes every NaN result. A destination that is A or B (which no plan makes: a
    /// MulAdd's result is a value of its own, and a fold never gives it A's or B's range) is
    /// given back.
    fn mul_add_f16_f32(&mut self, dims: (usize, usize, usize), [dst, a, b, c]: [usize; 4]) -> bool {
        if dst == a || dst == b {
            return false;
        }
        for (r, kind) in [(a, Val::F16), (b, Val::F16), (c, Val::F32)] {
            if let Some(t) = self.tiles.get_mut(r) {
                t.ensure_val(kind);
            }
        }
        // The destination's values, taken out while A, B and C are read.
        let Some(mut acc) = self.tiles.get_mut(dst).map(|t| std::mem::take(&mut t.val)) else {
            return false;
        };
        if dst != c {
            acc.clear();
            acc.extend_from_slice(self.tiles.get(c).map_or(&[][..], |t| &t.val));
        }
        if let (Some(ta), Some(tb)) = (self.tiles.get(a), self.tiles.get(b)) {
            f16_f32_into(&ta.val, &tb.val, dims, &mut acc);
        }
        let Some(t) = self.tiles.get_mut(dst) else {
            return false;
        };
        t.val = acc;
        t.f32_written(true);
        true
    }
}

/// `acc` += `a` × `b` on f16 values widened (A m × k, B k × n, `acc` m × n f32 values): the
/// reference path's kernel (its NaN results are made canonical when the bits are taken,
/// [`f32_bits`]).
fn f16_f32_into(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize), acc: &mut [f32]) {
    crate::semantics::coopmat_kernel::f16_products_into_f32(m, n, k, a, b, acc);
}

/// [`Tiles::rows`] of a row-major load or store of a buffer: what
/// [`crate::run::coopmat::rows_in_bounds`] checks comes down to the span of whole words, from
/// the Pointer's offset over `rows - 1` pitches and a row, lying inside the buffer's words,
/// which [`whole_words`] checks (the span inside the buffer is inside the offsets' range, so
/// no address was clamped); in a third of the instructions. `None` for anything else
/// (column-major, another region, a Stride not positive, a row out of bounds or off its words).
#[inline]
fn buffer_rows<'a>(
    s: &'a crate::run::Shared<'_>,
    at: &Access,
    (ptr, stride): (u64, u64),
) -> Option<(usize, usize, u64, &'a [std::sync::atomic::AtomicU32])> {
    let stride = stride_of(at, stride)?;
    let (region, off0) = split_pointer(ptr);
    if at.column_major || region == REGION_UNBOUND {
        return None;
    }
    let buffer = usize::try_from(region.checked_sub(FIRST_BUFFER)?).ok()?;
    let view = &s.buffers.get(buffer)?.0;
    let pitch = stride.checked_mul(at.pointee)?;
    // Offsets in the view, words of the allocation: the view's start keeps rows on words
    // only when it starts on one itself.
    if !view.base.is_multiple_of(4) {
        return None;
    }
    let (words, off) = (&*view.words, view.base.checked_add(off0)?);
    let within = |span: u64| off0.checked_add(span).is_some_and(|e| e <= view.len);
    whole_words(at, off, pitch, words)
        .filter(|&(r, _, _)| {
            within(pitch * (r as u64 - 1) + at.shape.cols as u64 * u64::from(at.shape.bytes))
        })
        .map(|(r, c, b)| (r, c, pitch, b))
}

/// The rows of a row-major load or store whose rows each start on a word and hold whole words,
/// from `off0` every `pitch` bytes (all in bounds: [`crate::run::coopmat::rows_in_bounds`]):
/// (rows, columns, the words from the first row's to the last row's end).
fn whole_words<'w>(
    at: &Access,
    off0: u64,
    pitch: u64,
    words: &'w Words,
) -> Option<(usize, usize, &'w [std::sync::atomic::AtomicU32])> {
    let (rows, cols) = (at.shape.rows as usize, at.shape.cols as usize);
    let row_bytes = cols as u64 * u64::from(at.shape.bytes);
    if !(off0 | pitch | row_bytes).is_multiple_of(4) || rows == 0 {
        return None;
    }
    let span = pitch.checked_mul(rows as u64 - 1)?.checked_add(row_bytes)?;
    Some((rows, cols, words.span(off0, span)?))
}

/// A load's or store's Stride as the reference path reads it (its width, signed or not), when
/// it is positive: the typed paths' condition.
fn stride_of(at: &Access, stride: u64) -> Option<u64> {
    let v = stride & crate::semantics::mask(at.stride.bits);
    // Signed and its sign bit set: negative.
    let sign = at.stride.bits.checked_sub(1).and_then(|b| v.checked_shr(b));
    let negative = at.stride.signed && sign.is_some_and(|s| s & 1 == 1);
    (v > 0 && !negative).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::coopmat_dense::F16_F32;

    use crate::test_rng::xorshift;

    /// Halves heavy in signed zeros, subnormals, the largest values, infinities and NaNs.
    fn half_bits(seed: &mut u64) -> u16 {
        const SPECIALS: [u16; 10] = [
            0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e01, 0x7c01,
        ];
        let r = xorshift(seed);
        if r.is_multiple_of(3) {
            SPECIALS[(r >> 8) as usize % SPECIALS.len()]
        } else {
            (r >> 16) as u16
        }
    }

    /// The typed path of the f16 × f16 + f32 → f32 MulAdd (A widened from loaded words, B
    /// from raw bits, C from raw f32 bits, the result's bits taken from its f32 values) against
    /// the reference path's MulAdd on raw bits, bit for bit, on inputs heavy in edge cases.
    #[test]
    fn typed_f16_f32_tiles_give_the_reference_bits() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        for (m, n, k) in [(16, 16, 16), (8, 8, 8), (16, 8, 32)] {
            for _ in 0..20 {
                let ha: Vec<u16> = (0..m * k).map(|_| half_bits(&mut seed)).collect();
                let hb: Vec<u16> = (0..k * n).map(|_| half_bits(&mut seed)).collect();
                let c: Vec<u64> = (0..m * n)
                    .map(|i| match i % 5 {
                        0 => 0x7f80_0001, // a signalling NaN
                        1 => 0x8000_0000,
                        _ => xorshift(&mut seed) & 0xffff_ffff,
                    })
                    .collect();
                let raw = |h: &[u16]| h.iter().map(|&x| u64::from(x)).collect::<Vec<u64>>();
                let mut want = vec![0u64; m * n];
                let undefined = crate::run::coopmat::mul_add(
                    &F16_F32,
                    m,
                    n,
                    k,
                    &raw(&ha),
                    &raw(&hb),
                    &c,
                    &mut want,
                );
                assert!(!undefined);

                let mut ta = Tile::new(m * k);
                ta.packed = ha
                    .chunks(2)
                    .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
                    .collect();
                crate::semantics::coopmat_kernel::widen_words(&ta.packed, &mut ta.val);
                ta.f16_written(true);
                let mut tb = Tile::new(k * n);
                tb.raw = raw(&hb);
                tb.raw_written();
                tb.ensure_val(Val::F16);
                let mut tc = Tile::new(m * n);
                tc.raw.clone_from(&c);
                tc.raw_written();
                tc.ensure_val(Val::F32);
                let mut out = tc.val.clone();
                f16_f32_into(&ta.val, &tb.val, (m, n, k), &mut out);
                let mut td = Tile::new(m * n);
                td.val = out;
                td.f32_written(true);
                td.ensure_raw();
                assert_eq!(td.raw, want, "{m}x{n}x{k}");
                // A's raw bits come back from its words exactly (NaN payloads included).
                ta.ensure_raw();
                assert_eq!(ta.raw, raw(&ha));
            }
        }
    }

    /// Bits in and out of the typed forms: an f32 tile read from bits gives them back (NaN
    /// payloads too) unless it is a MulAdd's result; a tile copied keeps its forms.
    #[test]
    fn typed_forms_keep_the_bits() {
        let mut seed = 0x5151_5151u64;
        let bits: Vec<u64> = (0..64)
            .map(|i| {
                if i % 4 == 0 {
                    0x7f80_0001
                } else {
                    xorshift(&mut seed) & 0xffff_ffff
                }
            })
            .collect();
        let mut t = Tile::new(64);
        t.raw.clone_from(&bits);
        t.raw_written();
        t.ensure_val(Val::F32);
        t.raw.fill(0);
        t.raw_ok = false;
        t.ensure_raw();
        assert_eq!(t.raw, bits);
        t.f32_written(true);
        t.ensure_raw();
        for (r, b) in t.raw.iter().zip(&bits) {
            let nan = f32::from_bits(*b as u32).is_nan();
            assert_eq!(*r, if nan { 0x7fc0_0000 } else { *b });
        }
        // Widening from raw f16 bits: every value as `half` reads it (NaN a NaN).
        let halves: Vec<u64> = (0..=u16::MAX).map(u64::from).collect();
        let mut h = Tile::new(halves.len());
        h.raw.clone_from(&halves);
        h.raw_written();
        h.ensure_val(Val::F16);
        for (&v, &x) in h.val.iter().zip(&halves) {
            let want = half::f16::from_bits(x as u16).to_f32();
            assert!(
                v.to_bits() == want.to_bits() || (v.is_nan() && want.is_nan()),
                "{x:#x}"
            );
        }
    }

    /// A 16 × 16 tile store's entries for `lanes` invocations, each holding `256 / lanes`
    /// elements of `bytes` bytes in the order `order` gives the invocations, one entry per
    /// row part: the shape a layout walk logs ([`Tiles::log_store`]).
    fn store_entries(lanes: u64, order: &[u64], bytes: u64, pitch: u64) -> Vec<StoreRun> {
        let per_lane = 256 / lanes;
        let mut entries = Vec::new();
        for (slot, &lane) in order.iter().enumerate() {
            let mut e = slot as u64 * per_lane;
            while e < (slot as u64 + 1) * per_lane {
                let (row, col) = (e / 16, e % 16);
                let count = (16 - col).min((slot as u64 + 1) * per_lane - e);
                entries.push(StoreRun {
                    lane,
                    rel: row * pitch + col * bytes,
                    len: count * bytes,
                    count: 1,
                });
                e += count;
            }
        }
        entries
    }

    /// `single` joined as the race log joins consecutive invocations' runs
    /// ([`crate::wide::races::push_run`]).
    fn joined(single: &[StoreRun]) -> Vec<StoreRun> {
        let base = crate::run::memory::make_pointer(FIRST_BUFFER, 0);
        let mut log = Vec::new();
        for r in single {
            crate::wide::races::push_run(&mut log, r.access(base, 0));
        }
        log.iter()
            .map(|a| StoreRun {
                lane: a.first,
                rel: a.ptr - base,
                len: a.len,
                count: a.count,
            })
            .collect()
    }

    /// Joined store entries stand for the same bytes of the same invocations, and the race
    /// screen gives the same answer for them as for the single entries: logs of two or three
    /// groups' stores at random Pointers (overlapping or not), lanes in order or shuffled,
    /// subgroups of 8 to 64.
    #[test]
    fn coalesced_store_runs_screen_as_their_single_entries() {
        use crate::wide::races::{may_race, Access};
        let mut seed = 0xc0a1_e5ce_0000_0001u64;
        let (mut merged_some, mut raced, mut as_rows) = (0, 0, 0);
        for round in 0..400 {
            let lanes = [8u64, 16, 32, 64][round % 4];
            let mut order: Vec<u64> = (0..lanes).collect();
            if xorshift(&mut seed).is_multiple_of(3) {
                for i in (1..order.len()).rev() {
                    order.swap(i, (xorshift(&mut seed) % (i as u64 + 1)) as usize);
                }
            }
            let bytes = [2u64, 4][(xorshift(&mut seed) % 2) as usize];
            let pitch = 16 * bytes + 4 * (xorshift(&mut seed) % 3);
            let single = store_entries(lanes, &order, bytes, pitch);
            let runs = joined(&single);
            merged_some += usize::from(runs.len() < single.len());
            let groups = 2 + xorshift(&mut seed) % 2;
            let ptrs: Vec<u64> = (0..groups)
                .map(|_| {
                    let off = 4 * (xorshift(&mut seed) % (64 * pitch / 4));
                    crate::run::memory::make_pointer(FIRST_BUFFER, off)
                })
                .collect();
            let log = |entries: &[StoreRun]| -> Vec<Access> {
                (0..groups)
                    .flat_map(|g| {
                        let (ptr, first) = (ptrs[g as usize], g * lanes);
                        entries.iter().map(move |r| r.access(ptr, first))
                    })
                    .collect()
            };
            // The same (invocation, byte) pairs.
            let pairs = |log: &[Access]| {
                let mut v: Vec<(u64, u64)> = log
                    .iter()
                    .flat_map(|a| {
                        (0..a.count).flat_map(move |i| {
                            (0..a.len).map(move |b| (a.first + i, a.ptr + i * a.step + b))
                        })
                    })
                    .collect();
                v.sort_unstable();
                v
            };
            let (mut one, mut coalesced) = (log(&single), log(&runs));
            assert_eq!(pairs(&one), pairs(&coalesced), "round {round}");
            let answer = may_race(&mut one);
            assert_eq!(answer, may_race(&mut coalesced), "round {round}");
            raced += usize::from(answer);
            // As whole tiles where the runs are rows (lanes in order, a row a run): the same
            // pairs, and the same answer through the screen that takes them.
            if let Some((row, pitch, rows)) = StoreLog::as_rows(&runs) {
                as_rows += 1;
                let gather = crate::wide::races::Gather::default();
                let tiles: Vec<crate::wide::rows::Rows> = (0..groups)
                    .map(|g| crate::wide::rows::Rows {
                        row: row.access(ptrs[g as usize], g * lanes),
                        pitch,
                        rows,
                    })
                    .collect();
                let cut: Vec<Access> = tiles
                    .iter()
                    .flat_map(|t| (0..t.rows).map(|r| t.at(r)))
                    .collect();
                assert_eq!(pairs(&cut), pairs(&coalesced), "round {round}");
                gather.hand_in_rows(tiles);
                assert_eq!(gather.may_race(), answer, "round {round}");
            }
        }
        assert!(as_rows > 50, "{as_rows}");
        assert!(merged_some > 100, "{merged_some}");
        assert!(raced > 50 && raced < 350, "{raced}");
    }

    /// The typed paths' Stride is the reference path's reading of it (its width, signed or
    /// not, sign-extended), where that is positive.
    #[test]
    fn strides_read_as_the_reference_path_reads_them() {
        use crate::run::coopmat::{Shape, Stride};
        let mut seed = 0x5717_de00_0000_0001u64;
        for _ in 0..4000 {
            let bits = [8u32, 16, 32, 64][(xorshift(&mut seed) % 4) as usize];
            let signed = xorshift(&mut seed).is_multiple_of(2);
            let raw = match xorshift(&mut seed) % 4 {
                0 => xorshift(&mut seed) % 4,
                1 => u64::MAX - xorshift(&mut seed) % 4,
                _ => xorshift(&mut seed),
            };
            let at = Access {
                ptr: 0,
                stride: Stride {
                    slot: 1,
                    bits,
                    signed,
                },
                column_major: false,
                pointee: 4,
                shape: Shape {
                    rows: 16,
                    cols: 16,
                    length: 8,
                    bytes: 4,
                },
            };
            let v = raw & crate::semantics::mask(bits);
            let read = if signed {
                i128::from(crate::semantics::sign_extend(bits, v))
            } else {
                i128::from(v)
            };
            let want = (read > 0).then_some(read as u64);
            assert_eq!(
                stride_of(&at, raw),
                want,
                "{raw:#x}, {bits} bits, signed {signed}"
            );
        }
    }
}
