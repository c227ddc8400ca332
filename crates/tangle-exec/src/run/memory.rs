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
//! ([`crate::Resources::elements`]) follow, in map order, then the views of shared allocations
//! ([`crate::Resources::views`]), the null descriptors ([`crate::Resources::null_buffers`],
//! regions of no bytes) and the images, and [`REGION_UNBOUND`] marks a pointer from a
//! descriptor array element that has no buffer. A buffer region is a [`View`] of an
//! allocation's words: its offsets count from the view's start.

use rayon::prelude::*;
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

/// The sampler handle [`crate::program::Op::Descriptor`] makes from element `index` of the
/// descriptor array of samplers `array` when that element has no sampler. A sampler handle sits
/// in the offset bits of a combined image's handle, so it cannot be an [`unbound_pointer`]; it
/// is that pointer's offset for array `array + 1`, at least 2^33, which no bound sampler's
/// handle (its index plus 1) reaches.
pub fn unbound_sampler(array: u32, index: i64) -> u64 {
    split_pointer(unbound_pointer(array.saturating_add(1), index)).1
}

/// The (descriptor array, index) of an [`unbound_sampler`] handle; `None` for other handles.
pub fn unbound_sampler_of(handle: u64) -> Option<(u32, i64)> {
    let (array, index) = unbound_of(make_pointer(REGION_UNBOUND, handle))?;
    Some((array.checked_sub(1)?, index))
}

/// The device address of the `index`-th buffer.
pub fn buffer_address(index: usize) -> u64 {
    make_pointer(FIRST_BUFFER + index as u64, 0)
}

/// Locks for 64-bit and float atomics, striped by word address.
pub static LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

/// Regions at least this large are converted from and to bytes in parallel.
const PARALLEL_BYTES: usize = 1 << 20;

/// Words one task of a parallel conversion takes (64 KiB): rayon splitting a region word by
/// word paid its bookkeeping per few words.
const BLOCK: usize = 1 << 14;

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

    /// A zeroed region of `len` bytes, or `None` where the host cannot allocate it.
    pub fn try_new(len: u64) -> Option<Self> {
        let n = usize::try_from(len.div_ceil(4)).ok()?;
        let mut words = Vec::new();
        words.try_reserve_exact(n).ok()?;
        words.extend(std::iter::repeat_with(|| AtomicU32::new(0)).take(n));
        Some(Words {
            words: words.into_boxed_slice(),
            len,
        })
    }

    /// A region holding `bytes`. Large regions are converted on every core (rayon), straight
    /// into the region's memory: the copy in and out of a dispatch is serial host work
    /// otherwise. Whole words are taken four bytes at a time (a copy of a slice of unknown
    /// length was a `memcpy` call per word, 0.45 s for saxpy's 128 MB), the last partial word
    /// apart.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let word = |c: &[u8]| AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let whole = bytes.chunks_exact(4);
        let last = whole.remainder();
        let last = (!last.is_empty()).then(|| {
            let mut w = [0u8; 4];
            for (w, b) in w.iter_mut().zip(last) {
                *w = *b;
            }
            AtomicU32::new(u32::from_le_bytes(w))
        });
        let mut words = Vec::with_capacity(bytes.len().div_ceil(4));
        if bytes.len() >= PARALLEL_BYTES {
            // An indexed parallel extend writes each block in place, into the capacity.
            words.par_extend(bytes.par_chunks_exact(4).with_min_len(BLOCK).map(word));
        } else {
            words.extend(whole.map(word));
        }
        words.extend(last);
        Words {
            words: words.into_boxed_slice(),
            len: bytes.len() as u64,
        }
    }

    /// The region's bytes (converted on every core when large, as [`Words::from_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; usize::try_from(self.len).unwrap_or(usize::MAX)];
        self.write_into(&mut out);
        out
    }

    /// Writes the region's bytes over `out` (as many as both hold), in place: the dispatch's
    /// write-back into the buffers it was made from, which are in memory already, where a new
    /// `Vec` costs a page fault per 4 KiB and the old one's unmapping. Large regions are
    /// written on every core, in blocks of [`BLOCK`] words.
    pub fn write_into(&self, out: &mut [u8]) {
        // Not the padding of a last partial word.
        let n = out
            .len()
            .min(usize::try_from(self.len).unwrap_or(usize::MAX));
        let out = &mut out[..n];
        let copy = |(o, w): (&mut [u8], &[AtomicU32])| {
            let whole = o.len() / 4;
            let mut body = o.chunks_exact_mut(4);
            for (c, w) in (&mut body).zip(w) {
                c.copy_from_slice(&w.load(Relaxed).to_le_bytes());
            }
            let rest = body.into_remainder();
            if let Some(w) = w.get(whole) {
                let b = w.load(Relaxed).to_le_bytes();
                for (r, b) in rest.iter_mut().zip(b) {
                    *r = b;
                }
            }
        };
        if out.len() >= PARALLEL_BYTES {
            out.par_chunks_mut(4 * BLOCK)
                .zip(self.words.par_chunks(BLOCK))
                .for_each(copy);
        } else {
            copy((out, &self.words));
        }
    }

    /// Makes the region hold `bytes` again (as many as both hold), in place: what
    /// [`Words::from_bytes`] of them would hold, without a new allocation. Resident memory
    /// restarts a dispatch a fast path gave up from its inputs so ([`super::resident`]).
    pub fn load_from(&self, bytes: &[u8]) {
        let n = bytes
            .len()
            .min(usize::try_from(self.len).unwrap_or(usize::MAX));
        let copy = |(b, w): (&[u8], &[AtomicU32])| {
            let mut whole = b.chunks_exact(4);
            for (c, w) in (&mut whole).zip(w) {
                w.store(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), Relaxed);
            }
            let last = whole.remainder();
            if let (false, Some(w)) = (last.is_empty(), w.get(b.len() / 4)) {
                // The padding of a last partial word is 0, as `from_bytes` leaves it.
                let mut x = [0u8; 4];
                for (x, b) in x.iter_mut().zip(last) {
                    *x = *b;
                }
                w.store(u32::from_le_bytes(x), Relaxed);
            }
        };
        let bytes = &bytes[..n];
        if n >= PARALLEL_BYTES {
            bytes
                .par_chunks(4 * BLOCK)
                .zip(self.words.par_chunks(BLOCK))
                .for_each(copy);
        } else {
            copy((bytes, &self.words));
        }
    }

    /// Copies bytes `at .. at + out.len()` into `out` (the caller checked bounds; bytes of
    /// `out` past the region are left as they are): a window of an allocation ([`View`]), whole words four bytes at a
    /// time from the first word boundary, on every core when large.
    pub fn read_at(&self, at: u64, out: &mut [u8]) {
        let head = usize::try_from((4 - at % 4) % 4)
            .unwrap_or(0)
            .min(out.len());
        let (first, body) = out.split_at_mut(head);
        for (i, b) in (0u64..).zip(first.iter_mut()) {
            *b = self.read(at + i, 1) as u8;
        }
        let start = usize::try_from((at + head as u64) / 4).unwrap_or(usize::MAX);
        let words = Words::window_of(&self.words, start);
        let copy = |(o, w): (&mut [u8], &[AtomicU32])| {
            for (c, w) in o.chunks_mut(4).zip(w) {
                let b = w.load(Relaxed).to_le_bytes();
                c.copy_from_slice(&b[..c.len()]);
            }
        };
        if body.len() >= PARALLEL_BYTES {
            body.par_chunks_mut(4 * BLOCK)
                .zip(words.par_chunks(BLOCK))
                .for_each(copy);
        } else {
            copy((body, words));
        }
    }

    /// Writes `bytes` at `at` (the caller checked bounds), changing no other byte: whole
    /// words are stored four bytes at a time, on every core when large, and the bytes of a
    /// first or last partial word alone, as [`Words::write`] does, so the neighbours of a
    /// window of an allocation keep theirs.
    pub fn write_at(&self, at: u64, bytes: &[u8]) {
        let head = usize::try_from((4 - at % 4) % 4)
            .unwrap_or(0)
            .min(bytes.len());
        let (first, body) = bytes.split_at(head);
        for (i, &b) in (0u64..).zip(first) {
            self.write(at + i, 1, u64::from(b));
        }
        let body_at = at + head as u64;
        let whole = body.len() / 4 * 4;
        let (body, tail) = body.split_at(whole);
        let start = usize::try_from(body_at / 4).unwrap_or(usize::MAX);
        let words = Words::window_of(&self.words, start);
        let copy = |(b, w): (&[u8], &[AtomicU32])| {
            for (c, w) in b.chunks_exact(4).zip(w) {
                w.store(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), Relaxed);
            }
        };
        if body.len() >= PARALLEL_BYTES {
            body.par_chunks(4 * BLOCK)
                .zip(words.par_chunks(BLOCK))
                .for_each(copy);
        } else {
            copy((body, words));
        }
        for (i, &b) in (0u64..).zip(tail) {
            self.write(body_at + whole as u64 + i, 1, u64::from(b));
        }
    }

    /// The words from index `start` on (none past the end).
    fn window_of(words: &[AtomicU32], start: usize) -> &[AtomicU32] {
        words.get(start..).unwrap_or(&[])
    }

    /// The first word, for the native tier's compiled code ([`crate::jit`]), which accesses
    /// the words through it as its `//!` soundness argument says.
    pub(crate) fn as_ptr(&self) -> *mut u32 {
        self.words.as_ptr().cast_mut().cast()
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
    /// Each word the bytes lie in is loaded once (one to three words).
    pub fn read(&self, off: u64, len: u32) -> u64 {
        let len = u64::from(len.clamp(1, 8));
        let first = off / 4;
        if off.is_multiple_of(4) && len == 4 {
            return u64::from(self.word(first).map_or(0, |w| w.load(Relaxed)));
        }
        let spanned = (off % 4 + len).div_ceil(4);
        let mut bits = 0u128;
        for i in 0..spanned {
            let w = self.word(first + i).map_or(0, |w| w.load(Relaxed));
            bits |= u128::from(w) << (32 * i);
        }
        let v = (bits >> ((off % 4) * 8)) as u64;
        if len == 8 {
            v
        } else {
            v & ((1u64 << (8 * len)) - 1)
        }
    }

    /// The words holding bytes `off..off + len`, when they lie inside the region: for a
    /// kernel that takes a run of small values apart itself (a matrix row).
    pub fn span(&self, off: u64, len: u64) -> Option<&[AtomicU32]> {
        let end = off.checked_add(len).filter(|&e| e <= self.len)?;
        let first = usize::try_from(off / 4).ok()?;
        let last = usize::try_from(end.div_ceil(4)).ok()?;
        self.words.get(first..last)
    }

    /// Reads `count` consecutive values of `bytes` (1..=8) bytes each from `off`, handing value
    /// `i` to `f(i, value)`: what [`Words::read`] of each would give, with each word loaded
    /// once when the values are 1, 2 or 4 bytes aligned to their size (a row of a matrix).
    pub fn read_run(&self, off: u64, bytes: u32, count: u32, mut f: impl FnMut(u32, u64)) {
        let b = u64::from(bytes);
        if !(matches!(bytes, 1 | 2 | 4) && off.is_multiple_of(b)) {
            for i in 0..count {
                f(i, self.read(off + u64::from(i) * b, bytes));
            }
            return;
        }
        // Straight over the words the run covers: each loaded once, its values taken in order
        // (the first word from the run's start within it); values past the region read 0.
        let mask = (1u64 << (8 * b)) - 1;
        let per = (4 / b) as u32;
        let first = usize::try_from(off / 4).unwrap_or(usize::MAX);
        let mut skip = ((off % 4) / b) as u32;
        let mut i = 0u32;
        for w in self.words.get(first..).unwrap_or(&[]) {
            if i >= count {
                return;
            }
            let w = u64::from(w.load(Relaxed));
            let take = (per - skip).min(count - i);
            for s in skip..skip + take {
                f(i, (w >> (u64::from(s) * 8 * b)) & mask);
                i += 1;
            }
            skip = 0;
        }
        for i in i..count {
            f(i, 0);
        }
    }

    /// Appends to `out` the words holding bytes `[off, off + len)` (the caller checked bounds;
    /// words outside the region read 0). A first pass of plain loads over several rows lets
    /// the CPU fetch them all at once, before any is taken apart.
    pub fn words_into(&self, off: u64, len: u64, out: &mut Vec<u32>) {
        let (first, end) = (off / 4, (off + len).div_ceil(4));
        let count = usize::try_from(end.saturating_sub(first)).unwrap_or(0);
        let start = usize::try_from(first).unwrap_or(usize::MAX);
        let have = self.words.get(start..).unwrap_or(&[]);
        out.extend(have.iter().take(count).map(|w| w.load(Relaxed)));
        out.resize(out.len() + count.saturating_sub(have.len()), 0);
    }

    /// Writes `count` consecutive values of `bytes` (1..=8) bytes each from `off`, value `i`
    /// being `value(i)`: what [`Words::write`] of each would do, with whole words stored at once
    /// when the values are 1, 2 or 4 bytes aligned to their size.
    pub fn write_run(&self, off: u64, bytes: u32, count: u32, value: impl Fn(u32) -> u64) {
        let b = u64::from(bytes);
        if !(matches!(bytes, 1 | 2 | 4) && off.is_multiple_of(b)) {
            for i in 0..count {
                self.write(off + u64::from(i) * b, bytes, value(i));
            }
            return;
        }
        // (word index, bits, which bits are this run's) of the word being filled.
        let mut pending: Option<(u64, u32, u32)> = None;
        let flush = |p: Option<(u64, u32, u32)>| {
            if let Some((index, bits, m)) = p {
                if let Some(w) = self.word(index) {
                    if m == u32::MAX {
                        w.store(bits, Relaxed);
                    } else {
                        // Only this run's bytes change (as in `write`).
                        w.fetch_and(!m, Relaxed);
                        w.fetch_or(bits & m, Relaxed);
                    }
                }
            }
        };
        let field = ((1u64 << (8 * b)) - 1) as u32;
        for i in 0..count {
            let at = off + u64::from(i) * b;
            let shift = (at % 4) * 8;
            let v = (value(i) as u32 & field) << shift;
            let m = field << shift;
            pending = match pending {
                Some((index, bits, mm)) if index == at / 4 => Some((index, bits | v, mm | m)),
                other => {
                    flush(other);
                    Some((at / 4, v, m))
                }
            };
        }
        flush(pending);
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

/// A region a dispatch binds: bytes `base .. base + len` of an allocation's words, which
/// other regions of the dispatch (and the front end that made the allocation) may share.
/// Accesses through the view are offsets from `base`, checked against `len`
/// ([`super::access::Mem::resolve`]), so two views of the same bytes alias exactly.
#[derive(Debug, Clone)]
pub struct View {
    /// The allocation.
    pub words: std::sync::Arc<Words>,
    /// The first byte of the view in the allocation.
    pub base: u64,
    /// Bytes.
    pub len: u64,
    /// Where the race check logs this view's bytes when another region of the dispatch
    /// overlaps them: `(region, delta)`, byte `o` of the view being byte `o + delta` of
    /// `region`, the overlapping views' region with the lowest `base`
    /// ([`super::resident`]). `None`: no other region shares its bytes.
    pub alias: Option<(u64, u64)>,
    /// Whether the region is a null descriptor ([`crate::Resources::null_buffers`]): no bytes,
    /// and an access through it does what [`crate::check::null`] says instead.
    pub null: bool,
}

impl View {
    /// A view of all of `words`, which no other region shares.
    pub fn whole(words: Words) -> View {
        let len = words.len();
        View {
            words: std::sync::Arc::new(words),
            base: 0,
            len,
            alias: None,
            null: false,
        }
    }

    /// The region of a null descriptor: no bytes.
    pub fn null() -> View {
        View {
            null: true,
            ..View::whole(Words::new(0))
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the view has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// [`Words::read`] at offset `off` of the view.
    pub fn read(&self, off: u64, len: u32) -> u64 {
        self.words.read(self.base + off, len)
    }

    /// [`Words::write`] at offset `off` of the view.
    pub fn write(&self, off: u64, len: u32, v: u64) {
        self.words.write(self.base + off, len, v)
    }

    /// [`Words::span`] of bytes `off .. off + len` of the view, when they lie inside it.
    pub fn span(&self, off: u64, len: u64) -> Option<&[AtomicU32]> {
        let end = off.checked_add(len).filter(|&e| e <= self.len)?;
        self.words.span(self.base + off, end - off)
    }

    /// The view's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; usize::try_from(self.len).unwrap_or(0)];
        self.words.read_at(self.base, &mut out);
        out
    }

    /// The view's first word, for the native tier ([`Words::as_ptr`]); `None` where the view
    /// starts inside a word, which the compiled code's word accesses cannot express.
    pub(crate) fn as_ptr(&self) -> Option<*mut u32> {
        let first = usize::try_from(self.base / 4).ok()?;
        let inside = first <= self.words.words.len();
        (self.base.is_multiple_of(4) && inside).then(|| self.words.as_ptr().wrapping_add(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows read and written at every alignment agree with a plain byte array and leave
    /// their neighbours alone.
    #[test]
    fn windows_change_only_their_bytes() {
        for len in [0usize, 1, 5, 13, PARALLEL_BYTES + 9] {
            for at in [0u64, 1, 2, 3, 4, 7] {
                let total = len + at as usize + 5;
                let mut bytes: Vec<u8> = (0..total).map(|i| (i * 31 + 7) as u8).collect();
                let words = Words::from_bytes(&bytes);
                let new: Vec<u8> = (0..len).map(|i| (i * 3 + 1) as u8).collect();
                words.write_at(at, &new);
                bytes[at as usize..at as usize + len].copy_from_slice(&new);
                assert_eq!(words.to_bytes(), bytes, "{len} {at}");
                let mut out = vec![0x5a; len + 2];
                words.read_at(at, &mut out);
                assert_eq!(out, bytes[at as usize..at as usize + len + 2], "{len} {at}");
            }
        }
    }

    /// Bytes survive the trip into a region and back, on the serial and the parallel path, with
    /// a length that is not a whole number of words.
    #[test]
    fn bytes_round_trip() {
        for len in [0usize, 3, 4097, PARALLEL_BYTES + 3] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let words = Words::from_bytes(&bytes);
            assert_eq!(words.len(), len as u64);
            assert_eq!(words.to_bytes(), bytes, "{len}");
        }
    }

    /// Writing a region back over a buffer in place leaves what a fresh conversion gives,
    /// whatever the buffer held, including the bytes of a last partial word and lengths that
    /// are no whole number of blocks; a shorter or longer buffer takes the bytes both hold.
    #[test]
    fn write_into_overwrites_in_place() {
        for len in [0usize, 1, 6, 4 * BLOCK + 5, PARALLEL_BYTES + 4 * BLOCK + 2] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 13 + i / 509) as u8).collect();
            let words = Words::from_bytes(&bytes);
            // Words stored after the conversion, as a dispatch writes them.
            for i in (0..len as u64).step_by(4093) {
                words.write(i, 1, 0xa5);
            }
            let want = words.to_bytes();
            let mut out = vec![0x5a; len];
            words.write_into(&mut out);
            assert_eq!(out, want, "{len}");
            // And back: the region holds the original bytes again, in place.
            words.load_from(&bytes);
            assert_eq!(words.to_bytes(), bytes, "{len}");
            words.load_from(&want);
            let mut short = vec![0x5a; len / 2];
            words.write_into(&mut short);
            assert_eq!(short, want[..len / 2], "{len}");
            let mut long = vec![0x5a; len + 3];
            words.write_into(&mut long);
            assert_eq!(long[..len], want[..], "{len}");
            assert!(long[len..].iter().all(|&b| b == 0x5a), "{len}");
        }
    }

    /// Reads and writes of every width at every alignment agree with a plain byte array.
    #[test]
    fn words_match_a_byte_array() {
        let len = 37u64;
        let words = Words::new(len);
        let mut bytes = vec![0u8; len as usize];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let width = 1 + (x % 8) as u32;
            let off = (x >> 8) % (len - u64::from(width) + 1);
            let range = off as usize..(off + u64::from(width)) as usize;
            if (x >> 40) & 3 == 0 {
                let v = x.rotate_left(23);
                words.write(off, width, v);
                bytes[range].copy_from_slice(&v.to_le_bytes()[..width as usize]);
            } else if (x >> 40) & 3 == 1 {
                // A run of values of 1, 2, 4 or 8 bytes, aligned or not.
                let size = [1u32, 2, 4, 8][((x >> 50) % 4) as usize];
                let start = (x >> 20) % len;
                let count = ((len - start) / u64::from(size)).min(7) as u32;
                let value = |i: u32| x.rotate_left(7 * i + 1);
                if (x >> 43) & 1 == 0 {
                    words.write_run(start, size, count, value);
                    for i in 0..count {
                        let at = (start + u64::from(i * size)) as usize;
                        let v = value(i).to_le_bytes();
                        bytes[at..at + size as usize].copy_from_slice(&v[..size as usize]);
                    }
                } else {
                    words.read_run(start, size, count, |i, got| {
                        let at = (start + u64::from(i * size)) as usize;
                        let mut want = [0u8; 8];
                        want[..size as usize].copy_from_slice(&bytes[at..at + size as usize]);
                        assert_eq!(got, u64::from_le_bytes(want), "run {start} {size} {i}");
                    });
                }
            } else {
                let mut want = [0u8; 8];
                want[..width as usize].copy_from_slice(&bytes[range]);
                assert_eq!(
                    words.read(off, width),
                    u64::from_le_bytes(want),
                    "{off} {width}"
                );
            }
        }
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
        // Sampler handles: beyond every bound sampler's, and their own array and index.
        for (array, index) in [(0, 0), (3, 7), (0, -1), (12, 1 << 31)] {
            let h = unbound_sampler(array, index);
            assert!((1 << 33..1 << OFFSET_BITS).contains(&h), "{h:#x}");
            assert_eq!(unbound_sampler_of(h), Some((array, index)));
        }
        assert_eq!(unbound_sampler_of(1), None);
        assert_eq!(unbound_sampler_of(0), None);
    }
}
