//! Every Vulkan object the driver holds, and the registry that maps handles to them.
//!
//! A handle is a key of one process-wide table, never a pointer the driver follows: an unknown
//! or stale handle, or one of the wrong type, is found by a lookup and answered with
//! `VK_ERROR_VALIDATION_FAILED_EXT` ("a command failed because invalid usage was detected by
//! the implementation"), where the command returns a result. Dispatchable handles are the
//! addresses of the small loader-visible blocks [`crate::ffi`] allocates (8-byte aligned, so
//! even); non-dispatchable ones are odd counters, so the two never meet.
//!
//! Objects are shared with `Arc`: a command buffer holds the pipelines and buffers it recorded,
//! so destroying a handle removes it from the table without freeing what a pending command still
//! uses (the program's use after destroy is its own error; the driver stays memory-safe).

use crate::caps::Caps;
use crate::findings::Findings;
pub use crate::image::{BufferView, Image, ImageView, Sampler};
pub use crate::query::QueryPool;
use ash::vk;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

pub use crate::ffi::Bytes;

/// The error of an unknown handle, a null pointer or another misuse the driver detects.
pub const MISUSE: vk::Result = vk::Result::ERROR_VALIDATION_FAILED_EXT;

/// A result of the driver's own functions.
pub type VkResult<T> = Result<T, vk::Result>;

/// Locks a mutex, also after a panic elsewhere poisoned it: every entry point catches panics
/// ([`crate::ffi`]), so a poisoned table still holds consistent entries (each update is one
/// insert or remove).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An instance: its one physical device.
#[derive(Debug)]
pub struct Instance {
    /// The physical device's handle.
    pub physical: u64,
}

/// The physical device.
#[derive(Debug)]
pub struct Physical {
    /// What it claims.
    pub caps: Arc<Caps>,
    /// Its instance's handle (the messengers findings go to, [`crate::messages`]).
    pub instance: u64,
    /// What the environment asked of its devices.
    pub settings: Arc<crate::config::Settings>,
}

/// A logical device.
#[derive(Debug)]
pub struct Device {
    /// What its physical device claims.
    pub caps: Arc<Caps>,
    /// Its one queue's handle.
    pub queue: u64,
    /// The sanitizer's findings of every dispatch so far.
    pub findings: Mutex<Findings>,
    /// The buffer robustness the program enabled (`robustBufferAccess`, or VK_EXT_robustness2's
    /// `robustBufferAccess2`, at `vkCreateDevice`):
    /// what its dispatches' accesses outside a buffer do ([`tangle_exec::check::robust`]).
    pub robustness: tangle_exec::check::robust::Robustness,
    /// Whether the program enabled VK_EXT_robustness2's `robustImageAccess2`: image accesses
    /// outside the image are defined (`tangle_exec::run::image`).
    pub image_robustness: bool,
    /// Whether the program enabled VK_EXT_robustness2's `nullDescriptor`: descriptor writes
    /// may hold `VK_NULL_HANDLE` buffers, and accesses through them are defined
    /// (`tangle_exec::check::null`).
    pub null_descriptor: bool,
    /// Whether the program enabled VK_KHR_cooperative_matrix's
    /// `cooperativeMatrixRobustBufferAccess`: cooperative-matrix accesses outside a buffer
    /// follow [`Device::robustness`].
    pub coopmat_robustness: bool,
    /// Whether the program enabled `pipelineRobustness` (VK_EXT_pipeline_robustness), which a
    /// pipeline's own robustness needs.
    pub pipeline_robustness: bool,
    /// Its instance's handle.
    pub instance: u64,
    /// What the environment asked of it.
    pub settings: Arc<crate::config::Settings>,
    /// The last accesses of its dispatches to each allocation ([`crate::hazards`]).
    pub hazards: Mutex<crate::hazards::Hazards>,
    /// Set when a dispatch was stopped at the time limit, as a GPU's watchdog loses the device
    /// ([`crate::exec`]): nothing more runs, and submissions and waits answer
    /// `VK_ERROR_DEVICE_LOST`.
    pub lost: std::sync::atomic::AtomicBool,
}

impl Device {
    /// Whether the device is lost ([`Device::lost`]).
    pub fn is_lost(&self) -> bool {
        self.lost.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// The device's queue: submissions run one at a time, in submission order, on a thread that
/// submits or signals a semaphore; one waiting for a timeline value not yet reached stays
/// pending, with every later one ([`crate::exec::drain`]).
#[derive(Debug)]
pub struct Queue {
    /// The device.
    pub device: Arc<Device>,
    /// Held while submissions run.
    pub busy: Mutex<()>,
    /// Submissions not run yet, oldest first.
    pub pending: Mutex<std::collections::VecDeque<crate::exec::Submission>>,
}

/// Device memory: one byte store, mapped at a fixed address for its lifetime.
#[derive(Debug)]
pub struct Memory {
    /// The bytes.
    pub bytes: Bytes,
}

/// A buffer: a view `(memory, offset, size)` once bound.
#[derive(Debug)]
pub struct Buffer {
    /// `VkBufferCreateInfo::size`.
    pub size: u64,
    /// The memory and offset `vkBindBufferMemory` gave it.
    pub bound: Mutex<Option<(Arc<Memory>, u64)>>,
}

impl Buffer {
    /// The memory and the absolute byte range `offset .. offset + len` of this buffer's bytes
    /// `[start, start + len)`, checked against the buffer and the memory.
    pub fn window(&self, start: u64, len: u64) -> Result<(Arc<Memory>, u64), String> {
        let (memory, base) = lock(&self.bound)
            .clone()
            .ok_or("the buffer has no memory bound (vkBindBufferMemory)")?;
        let end = start
            .checked_add(len)
            .filter(|e| *e <= self.size)
            .ok_or_else(|| {
                format!(
                    "bytes {start}..{} lie outside the buffer's {} bytes",
                    start.saturating_add(len),
                    self.size
                )
            })?;
        let at = base.checked_add(start).ok_or("offset overflow")?;
        if base.saturating_add(end) > memory.bytes.len() {
            return Err("the buffer lies past the end of its memory".into());
        }
        Ok((memory, at))
    }
}

/// A shader module: validated at creation, kept as a module.
#[derive(Debug)]
pub struct ShaderModule {
    /// The module.
    pub module: tangle_spirv::Module,
}

/// One binding of a descriptor set layout.
#[derive(Debug, Clone, Copy)]
pub struct LayoutBinding {
    /// Its descriptor type.
    pub kind: vk::DescriptorType,
    /// Its descriptor count.
    pub count: u32,
}

impl LayoutBinding {
    /// Whether its descriptors take dynamic offsets.
    pub fn dynamic(&self) -> bool {
        matches!(
            self.kind,
            vk::DescriptorType::STORAGE_BUFFER_DYNAMIC | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
        )
    }
}

/// A descriptor set layout: bindings by number.
#[derive(Debug, Clone)]
pub struct SetLayout {
    /// The bindings.
    pub bindings: BTreeMap<u32, LayoutBinding>,
    /// The immutable samplers of sampler and combined image sampler bindings, by `(binding,
    /// element)`: they are the sets' samplers whatever a write says.
    pub immutable: BTreeMap<(u32, u32), Arc<Sampler>>,
    /// The binding created with `VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT`: its
    /// count is an upper bound, each set's own given at allocation.
    pub variable: Option<u32>,
}

/// One descriptor written into a set.
#[derive(Debug, Clone)]
pub enum Descriptor {
    /// A storage or uniform buffer view: `(buffer, offset, range)`; `range` may be
    /// `VK_WHOLE_SIZE`.
    Buffer {
        buffer: Arc<Buffer>,
        offset: u64,
        range: u64,
    },
    /// A descriptor written with a `VK_NULL_HANDLE` buffer, image view or buffer view
    /// (`nullDescriptor`): bound to nothing.
    Null,
    /// A storage or sampled image (`view`), a combined image sampler (both), or a sampler
    /// alone's image part left empty; `storage` for `STORAGE_IMAGE`, which the shader may write.
    Image {
        view: Option<Arc<ImageView>>,
        sampler: Option<Arc<Sampler>>,
        storage: bool,
    },
    /// A sampler (`SAMPLER`).
    Sampler(Arc<Sampler>),
    /// A uniform or storage texel buffer (`storage`).
    TexelBuffer {
        view: Arc<BufferView>,
        storage: bool,
    },
    /// A descriptor of a type the driver does not run (input attachments, inline uniform
    /// blocks, acceleration structures).
    Unsupported(vk::DescriptorType),
}

/// A descriptor set: its layout and the descriptors written by `(binding, array element)`.
#[derive(Debug)]
pub struct DescriptorSet {
    /// The layout.
    pub layout: Arc<SetLayout>,
    /// The pool's handle.
    pub pool: u64,
    /// The descriptors written so far.
    pub slots: Mutex<BTreeMap<(u32, u32), Descriptor>>,
}

/// A descriptor pool: the handles of its sets.
#[derive(Debug)]
pub struct DescriptorPool {
    /// `maxSets`.
    pub max_sets: u32,
    /// Whether `vkFreeDescriptorSets` may be used (`FREE_DESCRIPTOR_SET`).
    pub free_allowed: bool,
    /// The live sets.
    pub sets: Mutex<Vec<u64>>,
}

/// A pipeline layout.
#[derive(Debug)]
pub struct PipelineLayout {
    /// The set layouts by set number.
    pub sets: Vec<Arc<SetLayout>>,
    /// The end of the highest push-constant range.
    pub push_size: u32,
}

/// A compute pipeline: one entry point, lowered and specialized.
#[derive(Debug)]
pub struct Pipeline {
    /// The executor's pipeline.
    pub exec: tangle_exec::Pipeline,
    /// Its layout.
    pub layout: Arc<PipelineLayout>,
    /// How findings name it: `'ENTRY' (pipeline N)`.
    pub name: String,
    /// The name the program gave it (`vkSetDebugUtilsObjectNameEXT`).
    pub debug_name: Mutex<Option<String>>,
    /// The module, to show the instructions of findings.
    pub module: Arc<ShaderModule>,
    /// Its buffer robustness (`VkPipelineRobustnessCreateInfoEXT`).
    pub robustness: crate::robustness::PipelineRobustness,
}

impl Pipeline {
    /// How findings name it: the program's name for it first, when it gave one.
    pub fn label(&self) -> String {
        match &*lock(&self.debug_name) {
            Some(n) => format!("'{n}' = {}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A command pool: the handles of its command buffers.
#[derive(Debug, Default)]
pub struct CommandPool {
    /// The live command buffers.
    pub buffers: Mutex<Vec<u64>>,
}

/// A command buffer's recording.
#[derive(Debug)]
pub struct CommandBuffer {
    /// The device.
    pub device: Arc<Device>,
    /// The pool's handle.
    pub pool: u64,
    /// The commands recorded since the last begin.
    pub commands: Mutex<Vec<crate::exec::Command>>,
}

/// A fence: signalled when its submission has run.
#[derive(Debug, Default)]
pub struct Fence {
    /// Whether it is signalled.
    pub signalled: Mutex<bool>,
    /// Woken when it is signalled.
    pub changed: Condvar,
}

impl Fence {
    /// Signals the fence and wakes its waiters.
    pub fn signal(&self) {
        *lock(&self.signalled) = true;
        self.changed.notify_all();
    }
}

/// A semaphore: binary, or timeline with its counter.
#[derive(Debug, Default)]
pub struct Semaphore {
    /// Whether it is a timeline semaphore.
    pub timeline: bool,
    /// The timeline's value.
    pub value: Mutex<u64>,
    /// Woken when the value changes.
    pub changed: Condvar,
}

impl Semaphore {
    /// Raises the timeline's value to `value` and wakes its waiters.
    pub fn signal(&self, value: u64) {
        let mut v = lock(&self.value);
        *v = (*v).max(value);
        self.changed.notify_all();
    }

    /// Whether a wait for `value` is satisfied: always for a binary semaphore (its signal was
    /// submitted earlier to the one queue, which runs in order).
    pub fn reached(&self, value: u64) -> bool {
        !self.timeline || *lock(&self.value) >= value
    }
}

/// An event: set or reset by the host or by commands.
#[derive(Debug, Default)]
pub struct Event {
    /// Whether it is set.
    pub set: Mutex<bool>,
}

/// A pipeline cache: tangle lowers pipelines when they are created and keeps no cache across
/// runs, so its data is empty.
#[derive(Debug, Default)]
pub struct PipelineCache;

/// Any object the registry holds.
#[derive(Debug, Clone)]
pub enum Object {
    Instance(Arc<Instance>),
    Physical(Arc<Physical>),
    Device(Arc<Device>),
    Queue(Arc<Queue>),
    Memory(Arc<Memory>),
    Buffer(Arc<Buffer>),
    ShaderModule(Arc<ShaderModule>),
    SetLayout(Arc<SetLayout>),
    DescriptorPool(Arc<DescriptorPool>),
    DescriptorSet(Arc<DescriptorSet>),
    PipelineLayout(Arc<PipelineLayout>),
    Pipeline(Arc<Pipeline>),
    PipelineCache(Arc<PipelineCache>),
    CommandPool(Arc<CommandPool>),
    CommandBuffer(Arc<CommandBuffer>),
    Fence(Arc<Fence>),
    Semaphore(Arc<Semaphore>),
    Event(Arc<Event>),
    Image(Arc<Image>),
    ImageView(Arc<ImageView>),
    BufferView(Arc<BufferView>),
    Sampler(Arc<Sampler>),
    QueryPool(Arc<QueryPool>),
}

/// An object type the registry holds, with its Vulkan type name for messages.
pub trait Kind: Sized {
    /// `VkBuffer`, ...
    const NAME: &'static str;
    /// The registry entry of `it`.
    fn wrap(it: Arc<Self>) -> Object;
    /// The object of an entry of this type.
    fn unwrap(o: &Object) -> Option<Arc<Self>>;
}

macro_rules! kinds {
    ($($variant:ident => $name:literal),* $(,)?) => {$(
        impl Kind for $variant {
            const NAME: &'static str = $name;
            fn wrap(it: Arc<Self>) -> Object {
                Object::$variant(it)
            }
            fn unwrap(o: &Object) -> Option<Arc<Self>> {
                match o {
                    Object::$variant(it) => Some(it.clone()),
                    _ => None,
                }
            }
        }
    )*};
}

kinds! {
    Instance => "VkInstance",
    Physical => "VkPhysicalDevice",
    Device => "VkDevice",
    Queue => "VkQueue",
    Memory => "VkDeviceMemory",
    Buffer => "VkBuffer",
    ShaderModule => "VkShaderModule",
    SetLayout => "VkDescriptorSetLayout",
    DescriptorPool => "VkDescriptorPool",
    DescriptorSet => "VkDescriptorSet",
    PipelineLayout => "VkPipelineLayout",
    Pipeline => "VkPipeline",
    PipelineCache => "VkPipelineCache",
    CommandPool => "VkCommandPool",
    CommandBuffer => "VkCommandBuffer",
    Fence => "VkFence",
    Semaphore => "VkSemaphore",
    Event => "VkEvent",
    Image => "VkImage",
    ImageView => "VkImageView",
    BufferView => "VkBufferView",
    Sampler => "VkSampler",
    QueryPool => "VkQueryPool",
}

fn table() -> &'static Mutex<HashMap<u64, Object>> {
    static TABLE: OnceLock<Mutex<HashMap<u64, Object>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// Registers `it` under a new non-dispatchable handle (odd, never 0).
pub fn insert<T: Kind>(it: Arc<T>) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let handle = NEXT.fetch_add(1, Ordering::Relaxed) << 1 | 1;
    lock(table()).insert(handle, T::wrap(it));
    handle
}

/// Registers `it` under `handle`: a dispatchable handle's address ([`crate::ffi`]).
pub fn insert_at<T: Kind>(handle: u64, it: Arc<T>) {
    lock(table()).insert(handle, T::wrap(it));
}

/// The object of type `T` a handle names; the error names what was wrong.
pub fn get<T: Kind>(handle: u64) -> Result<Arc<T>, String> {
    match lock(table()).get(&handle) {
        Some(o) => T::unwrap(o).ok_or_else(|| format!("{handle:#x} is not a {}", T::NAME)),
        None if handle == 0 => Err(format!("a null {}", T::NAME)),
        None => Err(format!("{handle:#x} is not a live {}", T::NAME)),
    }
}

/// The handle of a live object (a scan of the table: for the rare message that names it).
pub fn handle_of<T: Kind>(it: &Arc<T>) -> Option<u64> {
    lock(table())
        .iter()
        .find(|(_, o)| T::unwrap(o).is_some_and(|x| Arc::ptr_eq(&x, it)))
        .map(|(h, _)| *h)
}

/// Removes the object of type `T` a handle names and returns it.
pub fn remove<T: Kind>(handle: u64) -> Result<Arc<T>, String> {
    let mut table = lock(table());
    match table.get(&handle).and_then(T::unwrap) {
        Some(it) => {
            table.remove(&handle);
            Ok(it)
        }
        None => Err(format!("{handle:#x} is not a live {}", T::NAME)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_typed_and_die_once() {
        let h = insert(Arc::new(PipelineCache));
        assert_eq!(h & 1, 1);
        assert!(get::<PipelineCache>(h).is_ok());
        let wrong = get::<Buffer>(h).expect_err("wrong type");
        assert!(wrong.contains("is not a VkBuffer"), "{wrong}");
        assert!(remove::<PipelineCache>(h).is_ok());
        assert!(get::<PipelineCache>(h).is_err());
        assert!(remove::<PipelineCache>(h).is_err());
        assert!(get::<Fence>(0).expect_err("null").contains("null VkFence"));
    }
}
