//! Device memory shared between a front end and its dispatches: an [`Allocation`] is one byte
//! store (the executor's [`Words`]) for its whole life, and a [`BufferView`] is a binding's
//! window `(allocation, offset, range)` of it, as Vulkan's `VkDeviceMemory` and buffer
//! descriptors are. A dispatch over views ([`crate::Resources::views`]) runs on the
//! allocation's bytes in place: views of the same bytes alias exactly within the dispatch, and
//! what it wrote is in the allocation when it returns, with nothing copied in or out.

use crate::run::memory::Words;
use std::sync::Arc;

/// One allocation of device memory, shared by reference: clones are the same bytes.
#[derive(Debug, Clone)]
pub struct Allocation(pub(crate) Arc<Words>);

impl PartialEq for Allocation {
    /// The same allocation (not equal bytes): what aliasing is about.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Allocation {}

impl Allocation {
    /// `len` zero bytes.
    pub fn zeroed(len: u64) -> Allocation {
        Allocation(Arc::new(Words::new(len)))
    }

    /// `len` zero bytes, or `None` where the host cannot give them (a front end answers
    /// that as an out-of-memory error instead of aborting).
    pub fn try_zeroed(len: u64) -> Option<Allocation> {
        Words::try_new(len).map(|w| Allocation(Arc::new(w)))
    }

    /// An allocation holding `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Allocation {
        Allocation(Arc::new(Words::from_bytes(bytes)))
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `at .. at + len` lies inside.
    fn holds(&self, at: u64, len: u64) -> bool {
        self.0.contains(at, len)
    }

    /// A copy of bytes `at .. at + len`; `None` outside the allocation.
    pub fn read(&self, at: u64, len: u64) -> Option<Vec<u8>> {
        if !self.holds(at, len) {
            return None;
        }
        let mut out = vec![0u8; usize::try_from(len).ok()?];
        self.0.read_at(at, &mut out);
        Some(out)
    }

    /// Writes `bytes` at `at`, changing no other byte; `None` (nothing written) outside the
    /// allocation.
    pub fn write(&self, at: u64, bytes: &[u8]) -> Option<()> {
        self.holds(at, bytes.len() as u64)
            .then(|| self.0.write_at(at, bytes))
    }

    /// The address of the first byte, for a front end that hands the memory to a program
    /// (the driver's `vkMapMemory`). The bytes stay at this address for the allocation's
    /// whole life (a boxed slice never moves). They are `AtomicU32` words, which have
    /// `u32`'s size and alignment, little-endian as the executor reads them; a program may
    /// read and write them through this pointer only while no dispatch, copy or other
    /// thread accesses them (the front end's synchronization), which is what makes such
    /// plain accesses sound. Dereferencing it is the caller's `unsafe`.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.0.as_ptr().cast()
    }
}

/// A buffer binding: bytes `offset .. offset + range` of an allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferView {
    /// The allocation.
    pub memory: Allocation,
    /// The view's first byte in the allocation.
    pub offset: u64,
    /// Its length in bytes.
    pub range: u64,
}

impl BufferView {
    /// A view of all of `memory`.
    pub fn whole(memory: Allocation) -> BufferView {
        let range = memory.len();
        BufferView {
            memory,
            offset: 0,
            range,
        }
    }

    /// The view's bytes (a copy); `None` where it lies outside its allocation.
    pub fn read(&self) -> Option<Vec<u8>> {
        self.memory.read(self.offset, self.range)
    }
}

/// A texel buffer bound as a view of an allocation: its texels are the view's bytes, tightly
/// packed, `texels` of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TexelView {
    /// The texel format of the buffer view.
    pub format: &'static crate::semantics::texel::TexelFormat,
    /// The texels, as a view of an allocation (`range` is `texels` times the texel size).
    pub view: BufferView,
}

/// Refuses views that lie outside their allocations, and bindings given both as bytes and as
/// a view, before a dispatch allocates anything.
pub(crate) fn check_views(res: &crate::Resources) -> Result<(), crate::ExecError> {
    let at = |(set, binding, e): (u32, u32, u32)| match e {
        0 => format!("set {set}, binding {binding}"),
        e => format!("set {set}, binding {binding}, array element {e}"),
    };
    let views = res.views.iter().map(|(&k, v)| (k, v));
    let texels = res.texel_views.iter().map(|(&k, t)| (k, &t.view));
    for (k, v) in views.chain(texels) {
        if !v.memory.holds(v.offset, v.range) {
            return Err(crate::ExecError::Resource(format!(
                "the view at {} (bytes {}..{}) lies outside its allocation of {} bytes",
                at(k),
                v.offset,
                v.offset.saturating_add(v.range),
                v.memory.len()
            )));
        }
    }
    let (s, b) = (|k: &(u32, u32, u32)| k.0, |k: &(u32, u32, u32)| k.1);
    let twice = res.views.keys().find(|k| match k.2 {
        0 => res.buffers.contains_key(&(s(k), b(k))),
        _ => res.elements.contains_key(k),
    });
    let twice_image = res.texel_views.keys().find(|k| match k.2 {
        0 => res.images.contains_key(&(s(k), b(k))),
        _ => res.image_elements.contains_key(k),
    });
    if let Some(&k) = twice.or(twice_image) {
        return Err(crate::ExecError::Resource(format!(
            "the binding at {} is given both as bytes and as a view",
            at(k)
        )));
    }
    let bound = |k: &(u32, u32, u32)| {
        res.views.contains_key(k)
            || match k.2 {
                0 => res.buffers.contains_key(&(s(k), b(k))),
                _ => res.elements.contains_key(k),
            }
    };
    let image = |k: &(u32, u32, u32)| {
        res.texel_views.contains_key(k)
            || match k.2 {
                0 => res.images.contains_key(&(s(k), b(k))),
                _ => res.image_elements.contains_key(k),
            }
    };
    let twice_null = res.null_buffers.iter().find(|k| bound(k));
    let twice_null_image = res.null_images.iter().find(|k| image(k));
    match twice_null.or(twice_null_image) {
        Some(&k) => Err(crate::ExecError::Resource(format!(
            "the binding at {} is given both as a resource and as a null descriptor",
            at(k)
        ))),
        None => Ok(()),
    }
}
