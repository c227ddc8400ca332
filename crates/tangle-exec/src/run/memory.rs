//! Memory: byte-addressed regions stored as `AtomicU32` words, pointers, bounds checks and
//! atomics.
//!
//! Design (safe, no `unsafe`): every region — storage/uniform buffers, push constants, workgroup
//! memory and per-invocation memory — is a `Box<[AtomicU32]>`. Workgroups run on several threads
//! and may write different bytes of one word at the same time, so plain stores of a whole
//! aligned word are `store`s and narrower stores change only their own bytes (`fetch_and` then
//! `fetch_or`). 32-bit atomics are the native atomic operations on a word; 64-bit atomics (and
//! float atomics) take one of [`LOCKS`] striped by address, then read-modify-write both words.
//!
//! A pointer is a `u64`: the region in bits 48..64 and the byte offset in bits 0..48. Regions
//! are [`REGION_INVOCATION`] (per-lane memory: the offset is relative to the lane's area),
//! [`REGION_WORKGROUP`], [`REGION_PUSH`], and `FIRST_BUFFER + i` for the i-th buffer of
//! [`crate::Resources::buffers`] in map order, which doubles as the buffer's device address
//! for `PhysicalStorageBuffer` pointers; the elements of descriptor arrays
//! ([`crate::Resources::elements`]) follow, in map order, and [`REGION_UNBOUND`] marks a pointer
//! from a descriptor array element that has no buffer.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Mutex;

/// Per-invocation memory (Function, Private and built-in Input variables).
pub const REGION_INVOCATION: u64 = 1;
/// Workgroup memory.
pub const REGION_WORKGROUP: u64 = 2;
/// Push constants.
pub const REGION_PUSH: u64 = 3;
/// The first buffer.
pub const FIRST_BUFFER: u64 = 4;
/// Pointers from unbound descriptors ([`unbound_pointer`]).
pub const REGION_UNBOUND: u64 = 0xffff;
/// Bits of a pointer that hold the offset.
pub const OFFSET_BITS: u32 = 48;

/// A pointer value.
pub fn make_pointer(region: u64, offset: u64) -> u64 {
    (region << OFFSET_BITS) | (offset & ((1 << OFFSET_BITS) - 1))
}

/// Splits a pointer into (region, offset).
pub fn split_pointer(p: u64) -> (u64, u64) {
    (p >> OFFSET_BITS, p & ((1 << OFFSET_BITS) - 1))
}

/// Bits of an [`unbound_pointer`]'s offset that hold the element index (signed).
const UNBOUND_INDEX_BITS: u32 = 33;

/// The pointer an access chain makes from element `index` of descriptor array `array` when that
/// element has no buffer: the array and index stay in the offset bits (access chains leave the
/// pointer as it is), so every access through it is a finding naming them. Indices beyond
/// ±2^32 are clamped (still past every array).
pub fn unbound_pointer(array: u32, index: i64) -> u64 {
    let limit = 1i64 << (UNBOUND_INDEX_BITS - 1);
    let index = (index.clamp(-limit, limit - 1) as u64) & ((1 << UNBOUND_INDEX_BITS) - 1);
    let array = u64::from(array) & ((1 << (OFFSET_BITS - UNBOUND_INDEX_BITS)) - 1);
    make_pointer(REGION_UNBOUND, (array << UNBOUND_INDEX_BITS) | index)
}

/// The (descriptor array, index) of an [`unbound_pointer`]; `None` for other pointers.
pub fn unbound_of(p: u64) -> Option<(u32, i64)> {
    let (region, off) = split_pointer(p);
    let shift = 64 - UNBOUND_INDEX_BITS;
    let index = ((off << shift) as i64) >> shift;
    (region == REGION_UNBOUND).then_some(((off >> UNBOUND_INDEX_BITS) as u32, index))
}

/// The device address of the `index`-th buffer.
pub fn buffer_address(index: usize) -> u64 {
    make_pointer(FIRST_BUFFER + index as u64, 0)
}

/// Locks for 64-bit and float atomics, striped by word address.
pub static LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

/// A byte-addressed memory region.
#[derive(Debug, Default)]
pub struct Words {
    words: Box<[AtomicU32]>,
    len: u64,
}

impl Words {
    /// A zeroed region of `len` bytes.
    pub fn new(len: u64) -> Self {
        let n = len.div_ceil(4) as usize;
        Words {
            words: (0..n).map(|_| AtomicU32::new(0)).collect(),
            len,
        }
    }

    /// A region holding `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut words: Vec<AtomicU32> = Vec::with_capacity(bytes.len().div_ceil(4));
        let mut chunks = bytes.chunks_exact(4);
        words.extend(
            chunks
                .by_ref()
                .map(|c| AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
        );
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 4];
            w[..rest.len()].copy_from_slice(rest);
            words.push(AtomicU32::new(u32::from_le_bytes(w)));
        }
        let words = words.into_boxed_slice();
        Words {
            words,
            len: bytes.len() as u64,
        }
    }

    /// The region's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::with_capacity(self.words.len() * 4);
        for w in self.words.iter() {
            out.extend_from_slice(&w.load(Relaxed).to_le_bytes());
        }
        out.truncate(self.len as usize);
        out
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the region has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets every byte to zero.
    pub fn zero(&self) {
        for w in self.words.iter() {
            w.store(0, Relaxed);
        }
    }

    /// Whether `[off, off + len)` lies inside the region.
    pub fn contains(&self, off: u64, len: u64) -> bool {
        off.checked_add(len).is_some_and(|e| e <= self.len)
    }

    fn word(&self, i: u64) -> Option<&AtomicU32> {
        self.words.get(usize::try_from(i).ok()?)
    }

    /// Reads `len` (1..=8) bytes little-endian; the caller checked bounds (outside bytes read 0).
    pub fn read(&self, off: u64, len: u32) -> u64 {
        if off.is_multiple_of(4) {
            let lo = self.word(off / 4).map_or(0, |w| w.load(Relaxed));
            match len {
                4 => return u64::from(lo),
                8 => {
                    return u64::from(lo)
                        | (u64::from(self.word(off / 4 + 1).map_or(0, |w| w.load(Relaxed))) << 32)
                }
                _ => {}
            }
        }
        let mut v = 0u64;
        for i in 0..u64::from(len.min(8)) {
            let b = off + i;
            let w = self.word(b / 4).map_or(0, |w| w.load(Relaxed));
            v |= u64::from((w >> ((b % 4) * 8)) & 0xff) << (8 * i);
        }
        v
    }

    /// Writes the low `len` (1..=8) bytes of `v` little-endian; the caller checked bounds.
    pub fn write(&self, off: u64, len: u32, v: u64) {
        if off.is_multiple_of(4) && (len == 4 || len == 8) {
            if let Some(w) = self.word(off / 4) {
                w.store(v as u32, Relaxed);
            }
            if len == 8 {
                if let Some(w) = self.word(off / 4 + 1) {
                    w.store((v >> 32) as u32, Relaxed);
                }
            }
            return;
        }
        // Byte-granular: only this access's bytes of each word change, so concurrent writers
        // of the other bytes of a word are not lost.
        let mut i = 0u64;
        let len = u64::from(len.min(8));
        while i < len {
            let b = off + i;
            let shift = (b % 4) * 8;
            let take = (4 - b % 4).min(len - i);
            let m = if take == 4 {
                u32::MAX
            } else {
                ((1u32 << (take * 8)) - 1) << shift
            };
            let val = (((v >> (8 * i)) as u32) << shift) & m;
            if let Some(w) = self.word(b / 4) {
                w.fetch_and(!m, Relaxed);
                w.fetch_or(val, Relaxed);
            }
            i += take;
        }
    }

    /// Atomically replaces the 32-bit word at `off` (4-aligned) with `f(old)`; returns `old`.
    pub fn rmw32(&self, off: u64, f: impl Fn(u32) -> u32) -> u32 {
        match self.word(off / 4) {
            Some(w) => match w.fetch_update(Relaxed, Relaxed, |x| Some(f(x))) {
                Ok(v) | Err(v) => v,
            },
            None => 0,
        }
    }

    /// Atomically replaces the `len`-byte value at `off` with `f(old)` under an address lock;
    /// returns `old`.
    pub fn rmw_locked(&self, off: u64, len: u32, f: impl Fn(u64) -> u64) -> u64 {
        let lock = LOCKS
            .get(((off / 8) % 64) as usize)
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
        let old = self.read(off, len);
        self.write(off, len, f(old));
        drop(lock);
        old
    }
}

#[cfg(test)]
mod unbound_tests {
    use super::*;

    #[test]
    fn unbound_pointers_keep_their_array_and_signed_index() {
        for (array, index) in [
            (0, 0),
            (3, 7),
            (65_535, -1),
            (12, -(1 << 31)),
            (1, (1 << 32) - 1),
        ] {
            let p = unbound_pointer(array, index);
            assert_eq!(
                unbound_of(p),
                Some((array & 0x7fff, index)),
                "{array} {index}"
            );
        }
        // Far indices clamp to ±2^32, still past every array.
        assert_eq!(
            unbound_of(unbound_pointer(2, i64::MAX)),
            Some((2, (1 << 32) - 1))
        );
        assert_eq!(
            unbound_of(unbound_pointer(2, i64::MIN)),
            Some((2, -(1 << 32)))
        );
        assert_eq!(unbound_of(buffer_address(3)), None);
    }
}
