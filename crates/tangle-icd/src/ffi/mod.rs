//! The C boundary, and so the crate's only `unsafe` code: the three `vk_icd*` exports, every
//! `extern "system"` entry point the loader reaches through them, the loader-visible blocks of
//! dispatchable handles, and the byte store of device memory ([`Bytes`]). Each entry point
//! reads the program's structs into Rust values, calls the safe modules ([`crate::objects`],
//! [`crate::caps`], [`crate::exec`]) and writes the answers back.
//!
//! # Soundness
//! The argument rests on four rules, kept by every function here and repeated where they apply:
//! * **Pointers are the program's promise.** A pointer the Vulkan spec requires to be valid
//!   (a create-info, an output array of the length the program gave, a `pNext` chain whose
//!   structs match their `sType`) is trusted for that length and type, as every driver must; a
//!   null one is checked and refused ([`read`], [`slice`], [`write`]). Nothing a pointer
//!   points to is kept past the call: everything is copied into owned Rust values first.
//! * **Handles are never followed.** A handle is a key of [`crate::objects`]' table; a
//!   dispatchable handle is the address of a [`LoaderBlock`] this module allocated, but the
//!   driver only compares it, and frees it once: only an address in the set of live blocks
//!   ([`free_dispatchable`]).
//! * **No unwinding crosses the boundary.** Every entry point runs its body in [`guard`] or
//!   [`guard_void`], which catch panics and answer `VK_ERROR_UNKNOWN` (since Rust 1.81 a panic
//!   leaving an `extern "system"` function aborts the program).
//! * **Mapped memory is atomic words.** [`Bytes`] hands the program a pointer to the
//!   executor's allocation, whose words are `AtomicU32`s (`u32`'s layout, inside
//!   `UnsafeCell`), which the driver and the executor only ever access atomically;
//!   concurrent host accesses and device accesses of the same bytes are the program's data
//!   race, which the Vulkan spec forbids (host access to memory in use by a queue must be
//!   synchronized with fences). `bytes.rs` gives the argument in full.

mod bytes;
mod commands;
mod debug;
mod device;
mod exports;
mod images;
mod instance;
mod pipelines;
mod queries;
mod sync;

pub use bytes::Bytes;
pub use debug::causes as deliver_causes;

use crate::config::say;
use crate::objects::MISUSE;
use ash::vk;
use std::cell::UnsafeCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The loader's "magic" first word of a dispatchable object before it writes its dispatch
/// table there (`vk_icd.h`: `ICD_LOADER_MAGIC`).
pub const ICD_LOADER_MAGIC: usize = 0x01CD_C0DE;

/// What a dispatchable handle points to: the word the loader owns. The driver never reads it
/// after creating it; `UnsafeCell` because the loader writes it behind the driver's back.
#[repr(C)]
struct LoaderBlock {
    loader_data: UnsafeCell<usize>,
}

/// The addresses of the loader blocks allocated and not freed yet.
fn blocks() -> &'static std::sync::Mutex<std::collections::HashSet<u64>> {
    static BLOCKS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<u64>>> =
        std::sync::OnceLock::new();
    BLOCKS.get_or_init(Default::default)
}

/// Allocates a loader block and returns its address: a new dispatchable handle.
fn new_dispatchable() -> u64 {
    let block = Box::new(LoaderBlock {
        loader_data: UnsafeCell::new(ICD_LOADER_MAGIC),
    });
    let handle = Box::into_raw(block) as usize as u64;
    crate::objects::lock(blocks()).insert(handle);
    handle
}

/// Frees the loader block of a dispatchable handle, once: a handle that is not a live block
/// (never allocated here, or already freed) is left alone.
fn free_dispatchable(handle: u64) {
    if !crate::objects::lock(blocks()).remove(&handle) {
        return;
    }
    // SAFETY: `handle` is the address `Box::into_raw` returned in `new_dispatchable` (the set
    // holds only those) and was still in the set, so it is freed exactly once; the loader stops
    // using the block when the object is destroyed.
    drop(unsafe { Box::from_raw(handle as usize as *mut LoaderBlock) });
}

/// Why an entry point failed: the result code and a message for stderr.
#[derive(Debug)]
pub struct Fail(pub vk::Result, pub String);

impl From<String> for Fail {
    /// A misuse the driver detected (unknown handle, null pointer, ...).
    fn from(message: String) -> Self {
        Fail(MISUSE, message)
    }
}

impl From<&str> for Fail {
    fn from(message: &str) -> Self {
        Fail(MISUSE, message.to_string())
    }
}

/// Runs an entry point's body: its result, or its failure's code after printing why, or
/// `VK_ERROR_UNKNOWN` after a panic (which never unwinds into the program).
fn guard(name: &str, body: impl FnOnce() -> Result<vk::Result, Fail>) -> vk::Result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(r)) => r,
        Ok(Err(Fail(code, message))) => {
            say(&format!("{name}: {message}"));
            // After the body: no lock of the driver's is held while a callback runs.
            debug::invalid_use(name, &message);
            code
        }
        Err(_) => {
            say(&format!("{name}: internal error (a panic, caught)"));
            vk::Result::ERROR_UNKNOWN
        }
    }
}

/// [`guard`] for an entry point returning nothing: a failure is only printed.
fn guard_void(name: &str, body: impl FnOnce() -> Result<(), Fail>) {
    let _ = guard(name, || body().map(|()| vk::Result::SUCCESS));
}

/// The struct a non-null pointer points to.
///
/// # Safety
/// `p` is null or points to a valid `T` for `'a` (the Vulkan valid-usage promise).
unsafe fn read<'a, T>(p: *const T, what: &str) -> Result<&'a T, Fail> {
    // SAFETY: the caller's promise; null is refused.
    unsafe { p.as_ref() }.ok_or_else(|| Fail::from(format!("{what} is NULL")))
}

/// The `n` structs an array pointer points to (null allowed when `n` is 0).
///
/// # Safety
/// `p` is null or points to `n` valid `T`s for `'a`.
unsafe fn slice<'a, T>(p: *const T, n: u32, what: &str) -> Result<&'a [T], Fail> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(format!("{what} is NULL with a count of {n}").into());
    }
    // SAFETY: the caller's promise, for `n` elements; not null.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

/// Writes `value` through a non-null output pointer.
///
/// # Safety
/// `p` is null or valid for a write of `T`.
unsafe fn write<T>(p: *mut T, value: T, what: &str) -> Result<(), Fail> {
    if p.is_null() {
        return Err(format!("{what} is NULL").into());
    }
    // SAFETY: the caller's promise; not null. `write` drops nothing the program owns.
    unsafe { p.write(value) };
    Ok(())
}

/// A NUL-terminated string the program passed.
///
/// # Safety
/// `p` is null or a valid NUL-terminated string for `'a`.
unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a CStr, Fail> {
    if p.is_null() {
        return Err(format!("{what} is NULL").into());
    }
    // SAFETY: the caller's promise; not null.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// The two-call enumeration idiom: with a null `out`, the count; else up to `*count` items and
/// `VK_INCOMPLETE` when there were more.
///
/// # Safety
/// `count` is valid for reads and writes; `out` is null or valid for `*count` writes.
unsafe fn enumerate<T: Copy>(
    count: *mut u32,
    out: *mut T,
    items: &[T],
) -> Result<vk::Result, Fail> {
    if count.is_null() {
        return Err("the count pointer is NULL".into());
    }
    let total = u32::try_from(items.len()).unwrap_or(u32::MAX);
    if out.is_null() {
        // SAFETY: `count` is valid (the caller's promise; not null).
        unsafe { count.write(total) };
        return Ok(vk::Result::SUCCESS);
    }
    // SAFETY: as above.
    let room = unsafe { count.read() };
    let n = room.min(total);
    for (i, item) in items.iter().take(n as usize).enumerate() {
        // SAFETY: `out` is valid for `room >= n > i` writes.
        unsafe { out.add(i).write(*item) };
    }
    // SAFETY: as above.
    unsafe { count.write(n) };
    Ok(if n < total {
        vk::Result::INCOMPLETE
    } else {
        vk::Result::SUCCESS
    })
}

/// The structs of a `pNext` chain: `(sType, address)`, at most 64 (a cycle would loop).
///
/// # Safety
/// `p` is null or the head of a valid chain of Vulkan structs.
unsafe fn chain(
    p: *const std::ffi::c_void,
) -> Vec<(vk::StructureType, *mut vk::BaseOutStructure<'static>)> {
    let mut out = Vec::new();
    let mut at = p as *mut vk::BaseOutStructure<'static>;
    while !at.is_null() && out.len() < 64 {
        // SAFETY: every struct of a valid chain starts with `sType` and `pNext`.
        let s = unsafe { &*at };
        out.push((s.s_type, at));
        at = s.p_next;
    }
    out
}

/// Overwrites the chained struct at `at` with `value`, keeping its `pNext`.
///
/// # Safety
/// `at` points to a valid, writable `T` (its `sType` is `T`'s).
unsafe fn put<T: Copy>(at: *mut vk::BaseOutStructure<'static>, value: T) {
    // SAFETY: the caller's promise; `T` starts with `sType` and `pNext` like
    // `VkBaseOutStructure`, and `value`'s `sType` is the one it replaces.
    unsafe {
        let next = (*at).p_next;
        at.cast::<T>().write(value);
        (*at).p_next = next;
    }
}

/// The `n` `VkBool32` words after a feature struct's header (`header` bytes: 16 with `sType`
/// and `pNext`, 0 for `VkPhysicalDeviceFeatures`).
///
/// # Safety
/// `at` points to a valid struct of `header + 4 n` bytes or more.
unsafe fn bool_words(at: *const u8, header: usize, n: usize) -> Vec<u32> {
    // SAFETY: the caller's promise: the words lie inside the struct; Vulkan structs are
    // 4-byte aligned at least, and `read_unaligned` needs no alignment anyway.
    (0..n)
        .map(|i| unsafe { at.add(header + 4 * i).cast::<u32>().read_unaligned() })
        .collect()
}

/// Writes [`bool_words`]' words.
///
/// # Safety
/// As for [`bool_words`], and writable.
unsafe fn set_bool_words(at: *mut u8, header: usize, words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        // SAFETY: the caller's promise, as in `bool_words`.
        unsafe { at.add(header + 4 * i).cast::<u32>().write_unaligned(*w) };
    }
}

// Shared by `commands.rs` and `device.rs` (waits and submissions answer a lost device alike),
// here so that neither imports the other.

/// Waits until the queue has run every submission: one running on another thread, and those
/// pending on a timeline value (which only another thread can signal now).
fn wait_idle(q: &crate::objects::Queue) {
    use crate::objects::lock;
    while !lock(&q.pending).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    drop(lock(&q.busy));
}

/// `VK_ERROR_DEVICE_LOST` once `device` is lost ([`crate::objects::Device::lost`]), else
/// `result`.
fn lost_or(device: &crate::objects::Device, result: vk::Result) -> vk::Result {
    match device.is_lost() {
        true => vk::Result::ERROR_DEVICE_LOST,
        false => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(h: u64) -> bool {
        crate::objects::lock(blocks()).contains(&h)
    }

    #[test]
    fn loader_blocks_are_freed_once() {
        let h = new_dispatchable();
        assert_eq!(h % 2, 0, "dispatchable handles are even");
        assert!(live(h));
        free_dispatchable(h);
        assert!(!live(h));
        // A second free, or a handle never allocated, is left alone.
        free_dispatchable(h);
        free_dispatchable(12_345_678);
    }
}
