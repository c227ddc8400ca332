//! The byte store of one device-memory allocation: zeroed heap memory at a fixed address for
//! its whole life, which `vkMapMemory` hands to the program and dispatches copy from and to.
//!
//! Soundness (the module's fourth rule): the store is only ever touched through raw pointers
//! (`ptr::copy_nonoverlapping`, `write_bytes`), bounds-checked against its length, so no Rust
//! reference to its bytes exists while the program writes them through its mapping.

use std::alloc::Layout;

/// One allocation's bytes.
#[derive(Debug)]
pub struct Bytes {
    ptr: *mut u8,
    len: u64,
    layout: Layout,
}

// SAFETY: `Bytes` owns its allocation (like a `Box<[u8]>`) and every access is a raw copy; two
// threads copying the same bytes at once are the program's data race (Vulkan requires host and
// queue accesses to be synchronized), and the allocation lives until the last `Arc<Memory>`
// drops.
unsafe impl Send for Bytes {}
// SAFETY: as for `Send`: shared access only copies bytes through raw pointers.
unsafe impl Sync for Bytes {}

/// The alignment of every allocation: at least `minMemoryMapAlignment` and any buffer's.
const ALIGN: usize = 64;

impl Bytes {
    /// `len` zero bytes, or `None` when the host cannot give them.
    pub fn zeroed(len: u64) -> Option<Bytes> {
        let size = usize::try_from(len).ok()?.max(1);
        let layout = Layout::from_size_align(size, ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(Bytes { ptr, len, layout })
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
        let at = usize::try_from(offset)
            .ok()
            .filter(|o| *o as u64 <= self.len)?;
        // SAFETY: `at <= len`: inside the allocation or one past its end.
        Some(unsafe { self.ptr.add(at) })
    }

    /// `at .. at + len` as a `usize` range inside the store.
    fn range(&self, at: u64, len: u64) -> Result<(usize, usize), String> {
        match at.checked_add(len) {
            Some(end) if end <= self.len => Ok((at as usize, len as usize)),
            _ => Err(format!(
                "bytes {at}..{} lie outside the allocation's {} bytes",
                at.saturating_add(len),
                self.len
            )),
        }
    }

    /// A copy of bytes `at .. at + len`.
    pub fn read(&self, at: u64, len: u64) -> Result<Vec<u8>, String> {
        let (at, len) = self.range(at, len)?;
        let mut out = vec![0u8; len];
        // SAFETY: `at + len <= self.len` (checked), and `out` is a fresh buffer of `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), out.as_mut_ptr(), len) };
        Ok(out)
    }

    /// Writes `bytes` at `at`.
    pub fn write(&self, at: u64, bytes: &[u8]) -> Result<(), String> {
        let (at, len) = self.range(at, bytes.len() as u64)?;
        // SAFETY: `at + len <= self.len` (checked); `bytes` is a Rust slice, which cannot be
        // the store itself (no reference to the store exists).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(at), len) };
        Ok(())
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
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
    }
}
