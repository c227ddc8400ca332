//! The native tier's only `unsafe` code: turning Cranelift's finished machine code into a
//! callable function, calling it with raw pointers to the dispatch's memory, the helpers the
//! compiled code calls with a pointer, and freeing the code.
//!
//! # Soundness
//!
//! The compiled code is Rust-free machine code; what it may do is fixed by
//! [`super::compile`], which is safe code. The argument rests on four rules:
//!
//! * **Memory.** Every load and store the compiled code makes is to `base + offset` of a
//!   [`Region`] of the [`Ctx`] table, after one bounds check of `offset + size <= len` (`len`
//!   in bytes, at most the words' byte size) and a check that the offset is a multiple of 4; a
//!   failed check returns the give-up status before the access. (For an access chain into
//!   a fixed-size part of a buffer, [`super::facts::Bounded`], the check is made once on
//!   entry for the greatest offset its indices can make, each index checked against its
//!   length before the chain's pointer is made; the accesses then add their offset to the
//!   base loaded there, and one whose size passes what was checked takes the plain check.)
//!   The table is built by
//!   [`super::regions`] from [`crate::run::memory::Words`] that outlive the call (the
//!   dispatch's `Shared`, borrowed for the whole run of the workers), each `base` from
//!   `Words::as_ptr`, so every access lies inside a live `Box<[AtomicU32]>`. Besides those, it
//!   reads and writes the fields of the one [`Ctx`] it is given, reads the stop flag (an
//!   `AtomicBool` of the same `Shared`) and the template values (a `Vec` of one value per
//!   register slot, which the caller keeps alive across the call; the code reads it at slots
//!   of the program it was compiled from, all below that length). A region number at or past
//!   `nregions` gives up before any access of the region; the lookup of its table entry is
//!   masked by [`Ctx::region_mask`] and so stays inside the table (a power-of-two length,
//!   empty entries after the regions) even where Cranelift hoists it above that check. Two
//!   more areas: the compiled function's own stack slot (a diverging lockstep group's spilled registers, [`super::lockstep`]),
//!   accessed at constant offsets inside the size it was declared with; and the subgroup
//!   register file [`Ctx::group_regs`], accessed at `(slot * sg + lane) * 8` for slots of the
//!   program and lanes below the subgroup size `sg` of the key it was compiled for, which is
//!   the `slots * sg` values [`super::group::GroupScratch::new`] allocates for a program with
//!   subgroup operations (the only code that touches it; [`compile::Compiled::group_regs`])
//!   and key; a lane index computed at run time (a rotate's or shuffle's source lane,
//!   `lockstep::permute`) is below `sg` by construction or checked before the access. The
//!   tile store [`Ctx::tiles`] is only passed on to [`coopmat_op`], [`coopmat_load`] and
//!   [`coopmat_mul_add`].
//! * **Data races.** The regions are `AtomicU32` words that other workers access at the same
//!   time. The compiled code accesses them only with aligned 32-bit loads and stores (an
//!   8-byte value is two of them, as [`crate::run::memory::Words::write`] does), and the stop
//!   flag with an aligned byte load. On x86-64 and aarch64, the only hosts [`compile`] accepts,
//!   an aligned 32-bit `mov`/`ldr`/`str` is single-copy atomic and is exactly the instruction
//!   a `Relaxed` atomic load or store of an `AtomicU32` compiles to, so these accesses are
//!   relaxed atomic accesses at the machine level: the interleavings they allow are those the
//!   interpreters' `Relaxed` accesses allow. Where two invocations' accesses really conflict,
//!   the race screen gives the dispatch back ([`super`]). A lockstep group's line of words
//!   ([`super::affine`]) moves as 16-byte vector loads and stores at 4-aligned addresses inside
//!   the checked range; these are not single accesses, and under a conflicting access by
//!   another worker they may see each word at a different moment (never a byte of memory
//!   outside the range: the hardware has no undefined behaviour here). Such a conflict is a
//!   race the screen sees: a line of a buffer that stores may write is logged (or is each
//!   invocation's own element, which no other invocation touches, [`super::facts`]), and a
//!   line of a buffer nothing writes has no writer to conflict with; so a value that a vector
//!   access tore is only ever in a dispatch that is given back and rerun.
//! * **Calls.** The function pointer comes from the module that compiled it, with the
//!   signature [`Entry`] it was declared with ([`super::compile`]: three `i64` parameters, one
//!   `i64` result, the host's default calling convention, which is `extern "C"`). Every helper
//!   it calls is an `extern "C" fn` of this crate whose address was taken from a Rust function
//!   item, called with the signature that item has (`u64` parameters and result). Helpers
//!   never unwind: they are plain arithmetic, or the two below, which catch nothing because
//!   nothing in them panics on any input (no indexing without a check).
//! * **Lifetime.** The code lives in the [`Code`]'s `JITModule`, freed only when the `Code`
//!   is dropped; a caller holds the `Code` (by `Arc`) across every call, so no call runs on
//!   freed code.
//!
//! The tests' single-op functions ([`super::compile::compile_op`]) take a `u64` array for
//! the `Ctx` pointer and touch only its first `slots` values, which their caller provides.
//!
//! * **Instructions.** Inline assembly beyond x86-64's baseline (SSE2) — the tile kernels'
//!   AVX2, FMA and F16C ([`mul_add_16_avx2`], [`load_f16_rows`]) — runs only with an
//!   [`Avx2`] in hand, which only [`Avx2::detect`] makes, after `is_x86_feature_detected!`
//!   found every one of those features on the CPU; the AVX-512F kernel
//!   ([`mul_add_16_avx512`]) likewise only with an [`Avx512`], in a function compiled with
//!   that feature. Each such block ends with `vzeroupper` and declares every vector register
//!   it changes.
//!
//! If Cranelift cannot target the host, [`compile`] returns an error and the dispatch takes
//! the interpreters.

use super::group::GroupScratch;
use super::log::LogState;
use super::tiles::Tiles;
use cranelift_jit::JITModule;
use std::sync::Mutex;

/// The compiled function: `(ctx, first invocation, count) -> status` ([`super::Status`]).
pub(crate) type Entry = extern "C" fn(*mut Ctx, u64, u64) -> u64;

/// One memory region as the compiled code sees it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Region {
    /// The first word (`Words::as_ptr`); dangling, with `len` 0, for an empty region.
    pub base: *mut u32,
    /// Bytes.
    pub len: u64,
}

/// What one call of the compiled code reads and writes besides the regions. The compiled code
/// reads its fields at the offsets `std::mem::offset_of!` gives ([`super::compile`]).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Ctx {
    /// The region table, indexed by a pointer's region number.
    pub regions: *const Region,
    /// Entries that are regions (push constants, buffers); the table's entries past them are
    /// empty.
    pub nregions: u64,
    /// The table's length less one: the length is a power of two, so a region number masked
    /// by this indexes the table whatever its value (the compiled code's table loads may be
    /// hoisted out of a loop above the region check, `compile::Emitter::address`).
    pub region_mask: u64,
    /// The dispatch's stop flag (`AtomicBool::as_ptr`).
    pub stop: *const u8,
    /// The race screen's per-site runs, or null when accesses are not logged.
    pub log: *mut LogState,
    /// The register file's template: one value per slot.
    pub template: *const u64,
    /// The most steps one invocation may take before the compiled code gives up.
    pub step_limit: u64,
    /// Out: why the code gave up, or where it stopped ([`super::Status`]).
    pub reason: u64,
    /// Out: instructions executed, summed over invocations.
    pub instructions: u64,
    /// The subgroup operations' state ([`super::group`]), or null for a program without.
    pub group: *mut GroupScratch,
    /// Its register file (`GroupScratch::regs`): `slots * subgroup size` values of the
    /// program and key the code was compiled for.
    pub group_regs: *mut u64,
    /// The cooperative matrices' tile store ([`super::tiles::Tiles`], its lifetime erased),
    /// or null for a program without.
    pub tiles: *mut (),
}

/// Finished machine code and the module that owns it.
pub(crate) struct Code {
    entry: Entry,
    /// Kept for its memory; behind a mutex only so that `Code` is `Sync` (it is never used
    /// again until it is freed).
    module: Mutex<Option<JITModule>>,
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Code")
    }
}

impl Code {
    /// Finalizes `module` and takes its function `id`, declared with the [`Entry`] signature.
    pub(crate) fn new(mut module: JITModule, id: cranelift_module::FuncId) -> Result<Code, String> {
        module
            .finalize_definitions()
            .map_err(|e| format!("finalizing the machine code: {e}"))?;
        let ptr = module.get_finalized_function(id);
        // SAFETY: `ptr` is the finalized code of function `id`, which `compile` declared with
        // the signature of `Entry` (module doc, "Calls"); it stays valid while `module` lives,
        // which `Code` owns.
        #[allow(unsafe_code)]
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(ptr) };
        Ok(Code {
            entry,
            module: Mutex::new(Some(module)),
        })
    }

    /// Runs invocations `first .. first + count` with `ctx` (module doc, "Memory").
    pub(crate) fn call(&self, ctx: &mut Ctx, first: u64, count: u64) -> u64 {
        (self.entry)(ctx, first, count)
    }
}

#[cfg(test)]
impl Code {
    /// Runs a function of [`super::compile::compile_op`] on `regs`, which it reads and writes
    /// at slots below the count it was compiled for; the caller passes at least that many.
    pub(crate) fn call_regs(&self, regs: &mut [u64]) -> u64 {
        (self.entry)(regs.as_mut_ptr().cast(), 0, regs.len() as u64)
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        let module = self.module.get_mut().map(Option::take);
        if let Ok(Some(m)) = module {
            // SAFETY: `Code` is dropped when its last `Arc` is, so no call of its function is
            // running or will run (module doc, "Lifetime").
            #[allow(unsafe_code)]
            unsafe {
                m.free_memory()
            };
        }
    }
}

// The `Entry` pointer is plain machine code that never changes once finalized.
#[allow(unsafe_code)]
unsafe impl Send for Code {}
#[allow(unsafe_code)]
unsafe impl Sync for Code {}

/// Logs one buffer access for the race screen: `state` is the `Ctx::log` of the running
/// call, `len_write` the access's bytes with bit 63 set for a write.
pub(crate) extern "C" fn log_access(
    state: *mut LogState,
    site: u64,
    invocation: u64,
    ptr: u64,
    len_write: u64,
) -> u64 {
    // SAFETY: the compiled code passes `Ctx::log`, which `super::Worker::run` set from a
    // `&mut LogState` it does not touch until the call returns; it is only called when that
    // pointer is not null (logging on).
    #[allow(unsafe_code)]
    let state = unsafe { state.as_mut() };
    if let Some(state) = state {
        state.access(
            site,
            invocation,
            ptr,
            len_write & !(1 << 63),
            len_write >> 63 != 0,
        );
    }
    0
}

/// Logs `count` buffer accesses for the race screen at once: invocations `invocation ..
/// invocation + count`, each `len` bytes after the one before, from `ptr` (a lockstep group's
/// accesses of one site, [`super::lockstep`]); otherwise as [`log_access`].
pub(crate) extern "C" fn log_run(
    state: *mut LogState,
    site: u64,
    invocation: u64,
    ptr: u64,
    len_write: u64,
    count: u64,
) -> u64 {
    // SAFETY: as in `log_access`.
    #[allow(unsafe_code)]
    let state = unsafe { state.as_mut() };
    if let Some(state) = state {
        state.access_run(
            site,
            invocation,
            ptr,
            len_write & !(1 << 63),
            len_write >> 63 != 0,
            count,
        );
    }
    0
}

/// Runs tile op `index` of the compiled program ([`Tiles::run`]) with the group's Pointer
/// and Stride, logging into `log` (a `Ctx::log`, or null where the op is not logged): 0 when
/// it ran without a finding, else 1.
pub(crate) extern "C" fn coopmat_op(
    tiles: *mut (),
    log: *mut LogState,
    index: u64,
    ptr: u64,
    stride: u64,
    first: u64,
) -> u64 {
    // SAFETY: the compiled code passes `Ctx::tiles`, which `super::Worker::run` set from a
    // `&mut Tiles<'s>` (cast to `*mut ()`) that it does not touch until the call returns, so
    // the pointer is valid and unaliased for this call; the lifetime the cast back picks is
    // that of this call only, and nothing borrowed from it outlives the call. `log` as in
    // `log_access`.
    #[allow(unsafe_code)]
    let (tiles, log) = unsafe { (tiles.cast::<Tiles<'_>>().as_mut(), log.as_mut()) };
    let ran = tiles.is_some_and(|t| t.run(index, (ptr, stride), first, log));
    u64::from(!ran)
}

/// Runs load op `index` of the compiled program ([`Tiles::load_op`]: one the race screen does
/// not log) at the group's Pointer and Stride: 0 when it ran without a finding, else 1.
pub(crate) extern "C" fn coopmat_load(tiles: *mut (), index: u64, ptr: u64, stride: u64) -> u64 {
    // SAFETY: as in `coopmat_op`.
    #[allow(unsafe_code)]
    let tiles = unsafe { tiles.cast::<Tiles<'_>>().as_mut() };
    u64::from(!tiles.is_some_and(|t| t.load_op(index, (ptr, stride))))
}

/// Runs MulAdd op `index` of the compiled program ([`Tiles::mul_add_op`]): 0 when it ran
/// without a finding, else 1.
pub(crate) extern "C" fn coopmat_mul_add(tiles: *mut (), index: u64) -> u64 {
    // SAFETY: as in `coopmat_op`.
    #[allow(unsafe_code)]
    let tiles = unsafe { tiles.cast::<Tiles<'_>>().as_mut() };
    u64::from(!tiles.is_some_and(|t| t.mul_add_op(index)))
}

/// Runs subgroup operation `index` of the compiled program on the register file the compiled
/// code filled ([`GroupScratch::run`]): 0 when it ran without a finding, else 1.
pub(crate) extern "C" fn group_op(scratch: *mut GroupScratch, index: u64) -> u64 {
    // SAFETY: the compiled code passes `Ctx::group`, which `super::Worker::run` set from a
    // `&mut GroupScratch` it does not touch until the call returns; the compiled code does not
    // run while this helper does, so nothing else accesses the scratch meanwhile.
    #[allow(unsafe_code)]
    let scratch = unsafe { scratch.as_mut() };
    u64::from(!scratch.is_some_and(|s| s.run(index)))
}

/// Whether `rows` rows of `per_row` words, `pitch` words apart, fit in `len` words (no
/// arithmetic overflow either): the one check [`copy_rows`] and [`load_f16_rows`] make before
/// any access.
fn rows_fit(len: usize, pitch: usize, per_row: usize, rows: usize) -> bool {
    rows == 0
        || (rows - 1)
            .checked_mul(pitch)
            .and_then(|last| last.checked_add(per_row))
            .is_some_and(|end| end <= len)
}

/// Copies rows of a tile between a region's words and a tile's own words ([`super::tiles`]):
/// row `r` is `per_row` words at word `r * pitch` of `words` and at word `r * per_row` of
/// `tile` (`tile.len() / per_row` rows). `into_tile`: from the region into the tile (a load),
/// else from the tile into the region (a store). `false`, with nothing accessed, where a row
/// would leave `words` or `per_row` is 0.
///
/// Soundness (module doc, "Memory" and "Data races"): every row is checked to lie inside
/// `words` before anything is copied, so the raw accesses stay inside the live `&[AtomicU32]`
/// (whose `UnsafeCell`s allow writes through a shared reference) and inside the exclusively
/// borrowed `tile`. Whole 16-byte parts of a row move with SSE2 `movdqu` in inline assembly
/// (the baseline of every x86-64 CPU; one loop over the rows and their parts; the rest of a
/// row word by word with relaxed atomics):
/// machine-level accesses as the compiled code's vector line loads and stores are, which may
/// see (or leave) each word of the part at a different moment under a conflicting access by
/// another worker, never a byte outside the row. Such a conflict is a race the screen sees
/// (a tile store is always logged; a tile load is logged unless nothing may write its buffer,
/// when it has no writer to conflict with), so a torn value is only ever in a dispatch given
/// back and rerun; with the sanitizer off, a racy program's values are not specified anyway.
pub(crate) fn copy_rows(
    words: &[std::sync::atomic::AtomicU32],
    (pitch, per_row): (usize, usize),
    tile: &mut [u32],
    into_tile: bool,
) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    if per_row == 0 || !tile.len().is_multiple_of(per_row) {
        return false;
    }
    let rows = tile.len() / per_row;
    if !rows_fit(words.len(), pitch, per_row, rows) {
        return false;
    }
    let parts = per_row / 4;
    #[cfg(target_arch = "x86_64")]
    if parts > 0 && rows > 0 {
        let (src, dst, src_pitch, dst_pitch) = if into_tile {
            let (s, d) = (words.as_ptr().cast::<u8>(), tile.as_mut_ptr().cast::<u8>());
            (s, d, 4 * pitch, 4 * per_row)
        } else {
            let (s, d) = (tile.as_ptr().cast::<u8>(), words.as_ptr().cast::<u8>());
            (s, d.cast_mut(), 4 * per_row, 4 * pitch)
        };
        // SAFETY: row `r`'s first `16 parts` bytes, at `r * src_pitch` of `src` and
        // `r * dst_pitch` of `dst`, lie inside `words` and `tile` for every `r < rows` (the
        // check above: `(rows - 1) pitch + per_row` words fit, and `tile` is `rows per_row`
        // words); see the function doc for why a racing access is no undefined behaviour.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::asm!(
                "2:",
                "mov {c}, {parts}",
                "mov {s2}, {s}",
                "mov {d2}, {d}",
                "3:",
                "movdqu {x}, [{s2}]",
                "movdqu [{d2}], {x}",
                "add {s2}, 16",
                "add {d2}, 16",
                "dec {c}",
                "jnz 3b",
                "add {s}, {sp}",
                "add {d}, {dp}",
                "dec {rows}",
                "jnz 2b",
                s = inout(reg) src => _,
                d = inout(reg) dst => _,
                rows = inout(reg) rows => _,
                parts = in(reg) parts,
                sp = in(reg) src_pitch,
                dp = in(reg) dst_pitch,
                c = out(reg) _,
                s2 = out(reg) _,
                d2 = out(reg) _,
                x = out(xmm_reg) _,
                options(nostack),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let parts = {
        let _ = parts;
        0
    };
    if 4 * parts < per_row {
        // The words after the 16-byte parts (all of them elsewhere than on x86-64).
        for (r, t) in tile.chunks_exact_mut(per_row).enumerate() {
            let Some(w) = words.get(r * pitch + 4 * parts..r * pitch + per_row) else {
                return false;
            };
            for (t, w) in t.iter_mut().skip(4 * parts).zip(w) {
                if into_tile {
                    *t = w.load(Relaxed);
                } else {
                    w.store(*t, Relaxed);
                }
            }
        }
    }
    true
}

/// A load of `rows` binary16 rows into a tile as [`copy_rows`] makes it, each row's halves
/// widened into `val` with F16C's `vcvtph2ps`, as
/// [`crate::semantics::coopmat_kernel::widen_words`] widens them (exact for every finite value
/// and infinity, a NaN a NaN), straight from the words read; with `packed`, each row's words
/// are also kept there (`val` holds `2 packed.len()` values). `false`, with nothing accessed,
/// where a row is not a whole number of 16-byte parts, or would leave `words`, or `val` (and
/// `packed`) do not hold the rows.
///
/// Soundness: as [`copy_rows`] (the same checks of every row before any access, the same
/// machine-level reads, once each); `cpu` says the CPU has AVX and F16C.
pub(crate) fn load_f16_rows(
    cpu: Avx2,
    words: &[std::sync::atomic::AtomicU32],
    (pitch, per_row, rows): (usize, usize, usize),
    packed: Option<&mut [u32]>,
    val: &mut [f32],
) -> bool {
    let Some(tile_words) = rows.checked_mul(per_row) else {
        return false;
    };
    let packed_fits = packed.as_ref().is_none_or(|p| p.len() == tile_words);
    if !per_row.is_multiple_of(4)
        || Some(val.len()) != tile_words.checked_mul(2)
        || !packed_fits
        || !rows_fit(words.len(), pitch, per_row, rows)
    {
        return false;
    }
    if rows > 0 {
        let src = (words.as_ptr().cast::<u8>(), 4 * pitch);
        let val = val.as_mut_ptr().cast::<u8>();
        let packed = packed.map(|p| p.as_mut_ptr().cast::<u8>());
        // SAFETY: row `r < rows` reads bytes `r * 4 pitch .. + 4 per_row` of `words`, writes
        // `4 per_row` bytes of `packed` (when given) and `8 per_row` of `val` after the previous
        // row's, all inside them (checked above); `cpu` proves AVX and F16C.
        #[allow(unsafe_code)]
        unsafe {
            f16_rows(cpu, src, packed, val, (rows, per_row / 4));
        }
    }
    true
}

/// [`load_f16_rows`]' loops: `rows` rows of `parts` 16-byte parts, `pitch` bytes apart at
/// `src`, each part's eight halves widened to `val` (and the part copied to `packed`, when
/// given). A tile of 16 rows of 16 halves (the 16 × 16 tiles of most profiles) takes straight
/// code, unrolled by the assembler; without `packed`, `vcvtph2ps` reads its part from memory.
///
/// # Safety
/// The caller's: every row's bytes inside `src`'s words, `packed` and `val` (the layout above).
#[allow(unsafe_code)]
unsafe fn f16_rows(
    cpu: Avx2,
    (src, pitch): (*const u8, usize),
    packed: Option<*mut u8>,
    val: *mut u8,
    (rows, parts): (usize, usize),
) {
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, pitch, packed, val, rows, parts);
        match cpu.0 {}
    }
    #[cfg(target_arch = "x86_64")]
    let _ = cpu;
    // Each form ends with `vzeroupper` (the upper halves back to zero: SSE code after it pays
    // no transition), which changes every vector register.
    #[cfg(target_arch = "x86_64")]
    macro_rules! f16_asm {
        ($($line:literal,)* ; $($operands:tt)*) => {
            std::arch::asm!(
                $($line,)*
                "vzeroupper",
                $($operands)*
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                options(nostack),
            )
        };
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's (the ranges it checked).
    unsafe {
        match (packed, rows, parts) {
            (None, 16, 2) => f16_asm!(
                ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
                "vcvtph2ps ymm0, xmmword ptr [{s}]",
                "vcvtph2ps ymm1, xmmword ptr [{s} + 16]",
                "vmovups ymmword ptr [{v} + 64*\\r], ymm0",
                "vmovups ymmword ptr [{v} + 64*\\r + 32], ymm1",
                "add {s}, {sp}",
                ".endr",
                ;
                s = inout(reg) src => _,
                v = in(reg) val,
                sp = in(reg) pitch,
            ),
            (Some(p), 16, 2) => f16_asm!(
                ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
                "vmovdqu xmm0, xmmword ptr [{s}]",
                "vmovdqu xmm1, xmmword ptr [{s} + 16]",
                "vmovdqu xmmword ptr [{p} + 32*\\r], xmm0",
                "vmovdqu xmmword ptr [{p} + 32*\\r + 16], xmm1",
                "vcvtph2ps ymm2, xmm0",
                "vcvtph2ps ymm3, xmm1",
                "vmovups ymmword ptr [{v} + 64*\\r], ymm2",
                "vmovups ymmword ptr [{v} + 64*\\r + 32], ymm3",
                "add {s}, {sp}",
                ".endr",
                ;
                s = inout(reg) src => _,
                p = in(reg) p,
                v = in(reg) val,
                sp = in(reg) pitch,
            ),
            (None, _, _) => f16_asm!(
                "2:",
                "mov {c}, {parts}",
                "mov {s2}, {s}",
                "3:",
                "vcvtph2ps ymm0, xmmword ptr [{s2}]",
                "vmovups ymmword ptr [{v}], ymm0",
                "add {s2}, 16",
                "add {v}, 32",
                "dec {c}",
                "jnz 3b",
                "add {s}, {sp}",
                "dec {rows}",
                "jnz 2b",
                ;
                s = inout(reg) src => _,
                v = inout(reg) val => _,
                rows = inout(reg) rows => _,
                parts = in(reg) parts,
                sp = in(reg) pitch,
                c = out(reg) _,
                s2 = out(reg) _,
            ),
            (Some(p), _, _) => f16_asm!(
                "2:",
                "mov {c}, {parts}",
                "mov {s2}, {s}",
                "3:",
                "vmovdqu xmm0, xmmword ptr [{s2}]",
                "vmovdqu xmmword ptr [{p}], xmm0",
                "vcvtph2ps ymm1, xmm0",
                "vmovups ymmword ptr [{v}], ymm1",
                "add {s2}, 16",
                "add {p}, 16",
                "add {v}, 32",
                "dec {c}",
                "jnz 3b",
                "add {s}, {sp}",
                "dec {rows}",
                "jnz 2b",
                ;
                s = inout(reg) src => _,
                p = inout(reg) p => _,
                v = inout(reg) val => _,
                rows = inout(reg) rows => _,
                parts = in(reg) parts,
                sp = in(reg) pitch,
                c = out(reg) _,
                s2 = out(reg) _,
            ),
        }
    }
}

/// Proof that the CPU running this code has AVX, AVX2, FMA and F16C, made only by
/// [`Avx2::detect`] after `is_x86_feature_detected!` says so: calling a kernel compiled for
/// those features (or inline assembly using them) with one in hand is sound. Elsewhere than on
/// x86-64 none can be made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2(Never);

/// What [`Avx2`] holds: nothing on x86-64, no value at all elsewhere.
#[cfg(target_arch = "x86_64")]
type Never = ();
#[cfg(not(target_arch = "x86_64"))]
#[derive(Debug, Clone, Copy)]
enum Never {}

impl Avx2 {
    /// The proof, where the CPU has the features.
    pub(crate) fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            (has!("avx") && has!("avx2") && has!("fma") && has!("f16c")).then_some(Avx2(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

/// Proof that the CPU running this code has AVX-512F besides [`Avx2`]'s features, made only by
/// [`Avx512::detect`] after `is_x86_feature_detected!` says so (as [`Avx2`] is).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx512(Never);

impl Avx512 {
    /// The proof, where the CPU has AVX-512F (std caches the answer: a load and a test).
    pub(crate) fn detect(_: Avx2) -> Option<Avx512> {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f").then_some(Avx512(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

/// The 16³ MulAdd kernel this CPU runs ([`mul_add_16`]), in words: `tangle bench` prints it,
/// since the cooperative-matrix figures depend on it.
pub fn tile_kernel() -> &'static str {
    match Avx2::detect() {
        Some(cpu) if Avx512::detect(cpu).is_some() => "AVX-512F",
        Some(_) => "AVX2 + FMA",
        None => "SSE2 (the CPU has no AVX2 + FMA + F16C)",
    }
}

/// `acc` += `a` × `b` for 16 × 16 tiles of f32 values held row-major, each element stepping
/// through k in order with one fused multiply-add a step: [`mul_add_16_avx512`] where the CPU
/// has AVX-512F, else [`mul_add_16_avx2`]. The two give the same bits.
pub(crate) fn mul_add_16(cpu: Avx2, a: &[f32; 256], b: &[f32; 256], acc: &mut [f32; 256]) {
    match Avx512::detect(cpu) {
        Some(wide) => mul_add_16_avx512(wide, a, b, acc),
        None => mul_add_16_avx2(cpu, a, b, acc),
    }
}

/// [`mul_add_16_avx2`]'s steps, in the order it makes them, with 512-bit vectors: the whole of
/// `acc` in 16 registers (a row each), B's row k in a 17th, and for each row one
/// `vfmadd231ps` with A's element of column k broadcast from memory: 17 instructions a step of
/// k for 256 multiply-adds, where the AVX2 kernel takes 56 (about 300 a tile against 978).
///
/// Soundness as [`mul_add_16_avx2`]'s, with an [`Avx512`] in hand: the CPU has AVX-512F.
pub(crate) fn mul_add_16_avx512(cpu: Avx512, a: &[f32; 256], b: &[f32; 256], acc: &mut [f32; 256]) {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = cpu;
        // SAFETY: see the function doc; the target feature is the CPU's (the proof).
        #[allow(unsafe_code)]
        unsafe {
            mul_add_16_zmm(a, b, acc);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, b, acc);
        match cpu.0 {}
    }
}

/// The assembly of [`mul_add_16_avx512`], in a function compiled with AVX-512F (which the
/// registers `zmm16` and up need).
///
/// # Safety
/// The CPU must have AVX-512F ([`Avx512`]).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f")]
unsafe fn mul_add_16_zmm(a: &[f32; 256], b: &[f32; 256], acc: &mut [f32; 256]) {
    // SAFETY: the three arrays are 1 KiB each, borrowed (one exclusively) for the call; the
    // assembly reads `a` and `b` and reads and writes `acc` at constant offsets inside them.
    unsafe {
        std::arch::asm!(
            ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
            "vmovups zmm\\r, zmmword ptr [{c} + 64*\\r]",
            ".endr",
            // The 16 steps of k, in order; each row's step is one fused multiply-add.
            ".irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
            "vmovups zmm16, zmmword ptr [{b} + 64*\\k]",
            ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
            "vfmadd231ps zmm\\r, zmm16, dword ptr [{a} + 64*\\r + 4*\\k]{{1to16}}",
            ".endr",
            ".endr",
            ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
            "vmovups zmmword ptr [{c} + 64*\\r], zmm\\r",
            ".endr",
            "vzeroupper",
            a = in(reg) a.as_ptr(),
            b = in(reg) b.as_ptr(),
            c = in(reg) acc.as_mut_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _,
            options(nostack),
        );
    }
}

/// `acc` += `a` × `b` for 16 × 16 tiles of f32 values held row-major, each element of `acc`
/// stepping through k = 0..15 in order with one fused multiply-add a step
/// (`acc ← round_f32(a[i][k] · b[k][j] + acc)`). Where `a` and `b` hold binary16 values widened
/// (the f16 × f16 → f32 MulAdd), their product is exact in f32 (at most 22 significant bits,
/// its exponent far inside f32's range), so the fused step rounds the same exact sum once, as
/// the reference kernel's multiply then add does
/// ([`crate::semantics::coopmat_kernel::f16_products_into_f32`]): the same bits, signed zeros
/// and infinities included; a NaN result is a NaN either way (which one may differ: the tiles
/// make a MulAdd's NaNs canonical when their bits are taken).
///
/// 4 rows × 16 columns of `acc` are 8 vector registers at a time; each step loads B's row k
/// (two registers), broadcasts A's four elements of column k and makes 8 `vfmadd231ps`: 14
/// instructions for 64 multiply-adds.
///
/// Soundness (module doc, "Memory"): the three arrays are 1 KiB each, borrowed (one
/// exclusively) for the call; the assembly reads `a` and `b` and reads and writes `acc` at
/// constant offsets inside them, and the caller holds an [`Avx2`], so the CPU has AVX2 and FMA.
pub(crate) fn mul_add_16_avx2(cpu: Avx2, a: &[f32; 256], b: &[f32; 256], acc: &mut [f32; 256]) {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = cpu;
        // SAFETY: see the function doc.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::asm!(
                // Four blocks of 4 rows: `a` and `acc` move on 256 bytes a block.
                "mov {n}, 4",
                "2:",
                "vmovups ymm0, ymmword ptr [{c}]",
                "vmovups ymm1, ymmword ptr [{c} + 32]",
                "vmovups ymm2, ymmword ptr [{c} + 64]",
                "vmovups ymm3, ymmword ptr [{c} + 96]",
                "vmovups ymm4, ymmword ptr [{c} + 128]",
                "vmovups ymm5, ymmword ptr [{c} + 160]",
                "vmovups ymm6, ymmword ptr [{c} + 192]",
                "vmovups ymm7, ymmword ptr [{c} + 224]",
                // The 16 steps of k, in order, unrolled by the assembler.
                ".irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
                "vmovups ymm8, ymmword ptr [{b} + 64*\\k]",
                "vmovups ymm9, ymmword ptr [{b} + 64*\\k + 32]",
                "vbroadcastss ymm10, dword ptr [{a} + 4*\\k]",
                "vfmadd231ps ymm0, ymm10, ymm8",
                "vfmadd231ps ymm1, ymm10, ymm9",
                "vbroadcastss ymm11, dword ptr [{a} + 64 + 4*\\k]",
                "vfmadd231ps ymm2, ymm11, ymm8",
                "vfmadd231ps ymm3, ymm11, ymm9",
                "vbroadcastss ymm12, dword ptr [{a} + 128 + 4*\\k]",
                "vfmadd231ps ymm4, ymm12, ymm8",
                "vfmadd231ps ymm5, ymm12, ymm9",
                "vbroadcastss ymm13, dword ptr [{a} + 192 + 4*\\k]",
                "vfmadd231ps ymm6, ymm13, ymm8",
                "vfmadd231ps ymm7, ymm13, ymm9",
                ".endr",
                "vmovups ymmword ptr [{c}], ymm0",
                "vmovups ymmword ptr [{c} + 32], ymm1",
                "vmovups ymmword ptr [{c} + 64], ymm2",
                "vmovups ymmword ptr [{c} + 96], ymm3",
                "vmovups ymmword ptr [{c} + 128], ymm4",
                "vmovups ymmword ptr [{c} + 160], ymm5",
                "vmovups ymmword ptr [{c} + 192], ymm6",
                "vmovups ymmword ptr [{c} + 224], ymm7",
                "add {a}, 256",
                "add {c}, 256",
                "dec {n}",
                "jnz 2b",
                "vzeroupper",
                a = inout(reg) a.as_ptr() => _,
                b = in(reg) b.as_ptr(),
                c = inout(reg) acc.as_mut_ptr() => _,
                n = out(reg) _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                options(nostack),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (a, b, acc);
        match cpu.0 {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    use crate::test_rng::xorshift;

    /// Rows copied in and out at random pitches, row lengths (whole 16-byte parts and not)
    /// and row counts, some past the end of the words: exactly the rows a plain loop copies,
    /// or `false` with nothing touched where a row would leave the words.
    #[test]
    fn rows_copy_as_a_plain_loop_does() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..3000 {
            let len = (xorshift(&mut x) % 300) as usize;
            let init: Vec<u32> = (0..len).map(|_| xorshift(&mut x) as u32).collect();
            let words: Vec<AtomicU32> = init.iter().map(|&w| AtomicU32::new(w)).collect();
            let per_row = (xorshift(&mut x) % 13) as usize;
            let pitch = per_row + (xorshift(&mut x) % 9) as usize;
            let rows = (xorshift(&mut x) % 20) as usize;
            let fits = per_row > 0 && (rows == 0 || (rows - 1) * pitch + per_row <= len);
            let into = xorshift(&mut x).is_multiple_of(2);
            let fresh: Vec<u32> = (0..rows * per_row)
                .map(|_| xorshift(&mut x) as u32)
                .collect();
            let mut tile = fresh.clone();
            let ok = copy_rows(&words, (pitch, per_row), &mut tile, into);
            assert_eq!(ok, fits, "{len} {pitch} {per_row} {rows}");
            let now: Vec<u32> = words.iter().map(|w| w.load(Relaxed)).collect();
            let (mut want_words, mut want_tile) = (init.clone(), fresh.clone());
            if fits {
                for r in 0..rows {
                    for c in 0..per_row {
                        if into {
                            want_tile[r * per_row + c] = init[r * pitch + c];
                        } else {
                            want_words[r * pitch + c] = fresh[r * per_row + c];
                        }
                    }
                }
            }
            assert_eq!(now, want_words);
            assert_eq!(tile, want_tile);
        }
    }

    /// The fused binary16 load keeps every row's words bit for bit when asked (NaN payloads,
    /// infinities, subnormals, −0) and widens them as `widen_words` does, in the unrolled
    /// 16-row form and the looped one, with and without the words; where it declines (a row
    /// not of whole parts, out of bounds) it touches nothing. Skipped (said so) without F16C.
    #[test]
    fn f16_rows_keep_their_bits_and_widen_as_the_kernel_does() {
        let Some(cpu) = Avx2::detect() else {
            println!("this CPU has no AVX2 + F16C: the loads were not run");
            return;
        };
        let mut x = 0x0f0f_1616_2b2b_3c3cu64;
        let (mut declined, mut unrolled) = (0, 0);
        for _ in 0..3000 {
            let len = (xorshift(&mut x) % 300) as usize;
            let init: Vec<u32> = (0..len)
                .map(|_| u32::from(edge_bits(&mut x)) | u32::from(edge_bits(&mut x)) << 16)
                .collect();
            let words: Vec<AtomicU32> = init.iter().map(|&w| AtomicU32::new(w)).collect();
            let (per_row, rows) = if xorshift(&mut x).is_multiple_of(3) {
                (8, 16)
            } else {
                let per_row = [4usize, 8, 12, 16, 6][(xorshift(&mut x) % 5) as usize];
                (per_row, (xorshift(&mut x) % 17) as usize)
            };
            let pitch = per_row + (xorshift(&mut x) % 7) as usize;
            let keep = xorshift(&mut x).is_multiple_of(2);
            let mut packed = vec![7u32; rows * per_row];
            let mut val = vec![1.5f32; 2 * rows * per_row];
            let given = keep.then_some(&mut packed[..]);
            if !load_f16_rows(cpu, &words, (pitch, per_row, rows), given, &mut val) {
                declined += 1;
                assert!(packed.iter().all(|&w| w == 7) && val.iter().all(|&v| v == 1.5));
                let fits = rows == 0 || (rows - 1) * pitch + per_row <= len;
                assert!(
                    !fits || !per_row.is_multiple_of(4),
                    "{len} {pitch} {per_row} {rows}"
                );
                continue;
            }
            unrolled += usize::from(rows == 16 && per_row == 8);
            let mut want = Vec::new();
            for r in 0..rows {
                want.extend_from_slice(&init[r * pitch..r * pitch + per_row]);
            }
            if keep {
                assert_eq!(packed, want);
            } else {
                assert!(packed.iter().all(|&w| w == 7));
            }
            let mut widened = vec![0f32; val.len()];
            crate::semantics::coopmat_kernel::widen_words_portable(&want, &mut widened);
            for (v, w) in val.iter().zip(&widened) {
                assert!(v.to_bits() == w.to_bits() || (v.is_nan() && w.is_nan()));
            }
        }
        assert!(declined > 100 && declined < 2500, "{declined}");
        assert!(unrolled > 300, "{unrolled}");
    }

    /// Binary16 bits heavy in signed zeros, subnormals, the largest values, infinities and
    /// NaNs (quiet, signalling, with payloads), else random.
    fn edge_bits(x: &mut u64) -> u16 {
        const SPECIAL: [u16; 12] = [
            0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e01, 0x7c01, 0xfd55,
            0x3c00,
        ];
        let r = xorshift(x);
        if r.is_multiple_of(3) {
            SPECIAL[(r >> 8) as usize % SPECIAL.len()]
        } else {
            (r >> 16) as u16
        }
    }

    /// [`edge_bits`] as f32 values.
    fn edge_half(x: &mut u64) -> f32 {
        half::f16::from_bits(edge_bits(x)).to_f32()
    }

    /// The 16³ kernel against the definition (each element `s + x * y` over k in order, an
    /// f32 multiply then add): the same bits, a NaN for a NaN; accumulators with NaN payloads,
    /// infinities, −0 and random bits. Skipped (said so) where the CPU lacks AVX2 and FMA.
    #[test]
    fn the_16_cubed_kernel_gives_the_plain_loops_bits() {
        let Some(cpu) = Avx2::detect() else {
            println!("this CPU has no AVX2 + FMA: the kernel was not run");
            return;
        };
        let mut x = 0x16c0_ffee_1234_5678u64;
        for round in 0..200 {
            let a: [f32; 256] = std::array::from_fn(|_| edge_half(&mut x));
            let b: [f32; 256] = std::array::from_fn(|_| edge_half(&mut x));
            let c: [f32; 256] = std::array::from_fn(|i| match (i + round) % 6 {
                0 => f32::from_bits(0x7f80_0001 | (xorshift(&mut x) as u32 & 0x3f_0000)),
                1 => -0.0,
                2 => f32::NEG_INFINITY,
                3 => edge_half(&mut x),
                _ => f32::from_bits(xorshift(&mut x) as u32),
            });
            let mut want = c;
            for i in 0..16 {
                for j in 0..16 {
                    let mut s = want[i * 16 + j];
                    for k in 0..16 {
                        s += a[i * 16 + k] * b[k * 16 + j];
                    }
                    want[i * 16 + j] = s;
                }
            }
            let mut kernels: Vec<(&str, [f32; 256])> = vec![("avx2", c)];
            mul_add_16_avx2(cpu, &a, &b, &mut kernels[0].1);
            if let Some(wide) = Avx512::detect(cpu) {
                let mut got = c;
                mul_add_16_avx512(wide, &a, &b, &mut got);
                kernels.push(("avx512", got));
            } else if round == 0 {
                println!("this CPU has no AVX-512F: its kernel was not run");
            }
            for (kernel, got) in &kernels {
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
                    assert!(same, "{kernel}, round {round}, element {i}: {g:e} vs {w:e}");
                }
            }
        }
    }
}
