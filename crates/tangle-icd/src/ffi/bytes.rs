//! The byte store of one device-memory allocation: a [`tangle_exec::Allocation`], the
//! executor's own memory, so a `VkDeviceMemory` *is* the memory dispatches run on. The
//! address `vkMapMemory` hands the program is the allocation's first byte on a 64-byte
//! boundary (`minMemoryMapAlignment`); dispatches bind views `(allocation, offset, range)` of
//! it ([`Bytes::view`]) and copy, fill and update commands write it, all in place.
//!
//! # Soundness of host access through the mapping
//! The allocation is a boxed slice of `AtomicU32` that never moves or shrinks while any
//! `Arc` of it lives, and [`crate::objects::Memory`] keeps one until `vkFreeMemory`, after
//! which the program may not use the mapping. The program reads and writes it through a
//! `*mut u8` with plain (non-atomic) accesses of any size and alignment, while the executor
//! holds `&AtomicU32`s to the same words. That is sound because:
//! * `AtomicU32` has the size, alignment and bit validity of `u32` (std's documentation
//!   guarantees it), so the bytes are plain bytes to the program: every bit pattern is a
//!   valid word, and the words are little-endian as the executor reads them;
//! * an atomic type is an `UnsafeCell`, so writes through a raw pointer while shared
//!   references to it exist are permitted (Rust's aliasing rules exempt interior mutability);
//! * the only thing left is a data race between the program's plain accesses and the
//!   driver's atomic ones (mixed-size or not), and Vulkan makes the absence of that the
//!   application's duty: "the application must ensure that [host access to device memory]
//!   does not overlap with device access" (Vulkan, "Host Access to Device Memory Objects";
//!   host writes are made available to the device by `vkQueueSubmit`, device writes to the
//!   host by a fence or semaphore wait). A submission runs on the thread that submits it
//!   (or that signals what it waits for), so its accesses happen before the fence's signal
//!   and the program's accesses after the wait. A program that breaks the rule races with
//!   the driver as it would with a GPU: the values it sees are garbage, but the driver holds
//!   no Rust reference whose validity such a race could break beyond that (the words are
//!   atomics, never `&u32` or `&[u8]`).
//!
//! No `unsafe` is needed here: the address is made with `wrapping_add`, and the program's
//! dereferences are its own.

use tangle_exec::{Allocation, BufferView};

/// The alignment of every allocation's mapped address: at least `minMemoryMapAlignment` and
/// any buffer's.
const ALIGN: u64 = 64;

/// One allocation's bytes.
#[derive(Debug)]
pub struct Bytes {
    /// The executor's allocation: `start + len` bytes and up to `ALIGN - 4` more.
    memory: Allocation,
    /// The allocation's byte that byte 0 of the device memory is: the first on an `ALIGN`
    /// boundary (a multiple of 4, so views of word-aligned offsets start on words).
    start: u64,
    len: u64,
}

impl Bytes {
    /// `len` zero bytes, or `None` when the host cannot give them.
    pub fn zeroed(len: u64) -> Option<Bytes> {
        let memory = Allocation::try_zeroed(len.checked_add(ALIGN - 4)?)?;
        let address = memory.as_mut_ptr() as usize as u64;
        let start = (ALIGN - address % ALIGN) % ALIGN;
        Some(Bytes { memory, start, len })
    }

    /// The length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the allocation has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of byte `offset` for the program's mapping.
    pub fn address(&self, offset: u64) -> Option<*mut u8> {
        let at = usize::try_from(
            self.start
                .checked_add(offset)
                .filter(|_| offset <= self.len)?,
        );
        Some(self.memory.as_mut_ptr().wrapping_add(at.ok()?))
    }

    /// Checks `at .. at + len` against the store.
    fn range(&self, at: u64, len: u64) -> Result<u64, String> {
        match at.checked_add(len) {
            Some(end) if end <= self.len => Ok(self.start + at),
            _ => Err(format!(
                "bytes {at}..{} lie outside the allocation's {} bytes",
                at.saturating_add(len),
                self.len
            )),
        }
    }

    /// A copy of bytes `at .. at + len`.
    pub fn read(&self, at: u64, len: u64) -> Result<Vec<u8>, String> {
        let from = self.range(at, len)?;
        self.memory
            .read(from, len)
            .ok_or_else(|| "the read does not fit the host".to_string())
    }

    /// Writes `bytes` at `at`.
    pub fn write(&self, at: u64, bytes: &[u8]) -> Result<(), String> {
        let to = self.range(at, bytes.len() as u64)?;
        self.memory
            .write(to, bytes)
            .ok_or_else(|| "the write lies outside the allocation".to_string())
    }

    /// The view of bytes `at .. at + len` a dispatch binds: the allocation itself, not a copy.
    pub fn view(&self, at: u64, len: u64) -> Result<BufferView, String> {
        let offset = self.range(at, len)?;
        Ok(BufferView {
            memory: self.memory.clone(),
            offset,
            range: len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_are_bounded() {
        let b = Bytes::zeroed(8).expect("8 bytes");
        assert_eq!(b.read(0, 8), Ok(vec![0; 8]));
        b.write(6, &[1, 2]).expect("in bounds");
        assert_eq!(b.read(5, 3), Ok(vec![0, 1, 2]));
        assert!(b.write(7, &[1, 2]).is_err());
        assert!(b.read(u64::MAX, 2).is_err());
        assert!(b.address(9).is_none());
        assert!(b.view(4, 5).is_err());
    }

    /// The mapped address is 64-byte aligned, and a dispatch's view is the mapped bytes
    /// themselves: what the program writes through the mapping is in the view, and what is
    /// written through the view is at the mapped address, with nothing copied between.
    #[test]
    fn the_mapping_and_the_views_are_the_same_bytes() {
        for len in [1u64, 64, 1000] {
            let b = Bytes::zeroed(len).expect("bytes");
            let base = b.address(0).expect("mapped");
            assert_eq!(base as usize % 64, 0, "{len}");
            let view = b.view(0, len).expect("in bounds");
            assert_eq!(
                view.memory.as_mut_ptr().wrapping_add(view.offset as usize),
                base,
                "{len}"
            );
            view.memory.write(view.offset, &[7]).expect("in bounds");
            assert_eq!(b.read(0, 1), Ok(vec![7]));
        }
    }
}
