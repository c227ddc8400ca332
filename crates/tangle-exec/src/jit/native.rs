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
//!   failed check returns the give-up status before the access. The table is built by
//!   [`super::regions`] from [`crate::run::memory::Words`] that outlive the call (the
//!   dispatch's `Shared`, borrowed for the whole run of the workers), each `base` from
//!   `Words::as_ptr`, so every access lies inside a live `Box<[AtomicU32]>`. Besides those, it
//!   reads and writes the fields of the one [`Ctx`] it is given, reads the stop flag (an
//!   `AtomicBool` of the same `Shared`) and the template values (a `Vec` of one value per
//!   register slot, which the caller keeps alive across the call; the code reads it at slots
//!   of the program it was compiled from, all below that length). A region number at or past
//!   `nregions` gives up before any access of the region; the lookup of its table entry is
//!   masked by [`Ctx::region_mask`] and so stays inside the table (a power-of-two length,
//!   empty entries after the regions) even where Cranelift hoists it above that check. Two more areas: the compiled function's
//!   own stack slot (a diverging lockstep group's spilled registers, [`super::lockstep`]),
//!   accessed at constant offsets inside the size it was declared with; and the subgroup
//!   register file [`Ctx::group_regs`], accessed at `(slot * sg + lane) * 8` for slots of the
//!   program and lanes below the subgroup size `sg` of the key it was compiled for, which is
//!   the `slots * sg` values [`super::group::GroupScratch::new`] allocates for a program with
//!   subgroup operations (the only code that touches it; [`compile::Compiled::group_regs`])
//!   and key; a lane index computed at run time (a rotate's or shuffle's source lane,
//!   `lockstep::permute`) is below `sg` by construction or checked before the access. The
//!   tile store [`Ctx::tiles`] is only passed on to [`coopmat_op`].
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
    let ran = tiles.is_some_and(|t| t.run(index, (ptr, stride), first, log.map(|l| &mut l.log)));
    u64::from(!ran)
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
