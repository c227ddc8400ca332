//! Device entry points: devices and their queue, memory (allocate, map, flush, invalidate),
//! buffers and their memory, shader modules (validated here), and fences.

use super::*;
use crate::objects::{self, lock, Buffer, Device, Fence, Memory, Physical, Queue, ShaderModule};
use ash::vk::Handle;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Device,
) -> vk::Result {
    guard("vkCreateDevice", || {
        let physical = objects::get::<Physical>(physical.as_raw())?;
        let caps = physical.caps.clone();
        // SAFETY: the program's create-info, its arrays and its chain (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let queues = unsafe {
            slice(
                info.p_queue_create_infos,
                info.queue_create_info_count,
                "pQueueCreateInfos",
            )?
        };
        for q in queues {
            if q.queue_family_index != 0 || q.queue_count > 1 {
                return Err(Fail(
                    vk::Result::ERROR_INITIALIZATION_FAILED,
                    format!(
                        "{} queue(s) of family {} asked for; the device has one queue in family 0",
                        q.queue_count, q.queue_family_index
                    ),
                ));
            }
        }
        let names = unsafe {
            slice(
                info.pp_enabled_extension_names,
                info.enabled_extension_count,
                "ppEnabledExtensionNames",
            )?
        };
        let listed = caps.extensions();
        for &name in names {
            // SAFETY: each name is a valid string (rule 1).
            let name = unsafe { c_str(name, "an extension name")? };
            if !listed.iter().any(|(n, _)| *n == name) {
                return Err(Fail(
                    vk::Result::ERROR_EXTENSION_NOT_PRESENT,
                    format!("the device does not offer {}", name.to_string_lossy()),
                ));
            }
        }
        // SAFETY: `pEnabledFeatures` and the chain are the program's (rule 1).
        if let Some(m) =
            unsafe { instance::missing_feature(&caps, info.p_enabled_features, info.p_next) }
        {
            return Err(Fail(
                vk::Result::ERROR_FEATURE_NOT_PRESENT,
                format!(
                    "the device does not offer the feature {m} ('{}' profile)",
                    caps.profile.name
                ),
            ));
        }
        // SAFETY: as above.
        let robust =
            unsafe { instance::robust_buffer_access(info.p_enabled_features, info.p_next) };
        // SAFETY: as above.
        let robustness2 = unsafe { instance::robustness2(info.p_next) };
        // SAFETY: as above.
        let coopmat_robustness = unsafe { instance::coopmat_robust_buffer_access(info.p_next) };
        // SAFETY: as above.
        let pipeline_robustness = unsafe { instance::pipeline_robustness(info.p_next) };
        let queue = new_dispatchable();
        let device = Arc::new(Device {
            pipeline_robustness,
            image_robustness: robustness2.image2,
            null_descriptor: robustness2.null_descriptor,
            coopmat_robustness,
            caps,
            queue,
            findings: Mutex::default(),
            robustness: match (robustness2.buffer2, robust) {
                (true, _) => tangle_exec::check::robust::Robustness::Buffer2,
                (false, true) => tangle_exec::check::robust::Robustness::Buffer,
                (false, false) => tangle_exec::check::robust::Robustness::Off,
            },
            instance: physical.instance,
            settings: physical.settings.clone(),
            hazards: Mutex::default(),
            lost: Default::default(),
        });
        objects::insert_at(
            queue,
            Arc::new(Queue {
                device: device.clone(),
                busy: Mutex::new(()),
                pending: Mutex::default(),
            }),
        );
        let handle = new_dispatchable();
        objects::insert_at(handle, device);
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Device::from_raw(handle), "pDevice")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_device(
    device: vk::Device,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyDevice", || {
        if device == vk::Device::null() {
            return Ok(());
        }
        let it = objects::remove::<Device>(device.as_raw())?;
        free_dispatchable(device.as_raw());
        if objects::remove::<Queue>(it.queue).is_ok() {
            free_dispatchable(it.queue);
        }
        crate::findings::report(&it);
        Ok(())
    })
}

pub unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    out: *mut vk::Queue,
) {
    guard_void("vkGetDeviceQueue", || {
        let d = objects::get::<Device>(device.as_raw())?;
        if family != 0 || index != 0 {
            return Err(format!("no queue {index} in family {family}").into());
        }
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Queue::from_raw(d.queue), "pQueue") }
    })
}

pub unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    info: *const vk::DeviceQueueInfo2<'_>,
    out: *mut vk::Queue,
) {
    guard_void("vkGetDeviceQueue2", || {
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pQueueInfo")? };
        // SAFETY: as for vkGetDeviceQueue.
        unsafe { get_device_queue(device, info.queue_family_index, info.queue_index, out) };
        Ok(())
    })
}

pub unsafe extern "system" fn device_wait_idle(device: vk::Device) -> vk::Result {
    guard("vkDeviceWaitIdle", || {
        let d = objects::get::<Device>(device.as_raw())?;
        wait_idle(&*objects::get::<Queue>(d.queue)?);
        crate::exec::host_waited(&d, None);
        Ok(super::lost_or(&d, vk::Result::SUCCESS))
    })
}

pub unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    guard("vkAllocateMemory", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pAllocateInfo")? };
        if info.memory_type_index != 0 {
            return Err(format!(
                "memory type {} does not exist (there is one, 0)",
                info.memory_type_index
            )
            .into());
        }
        if info.allocation_size > crate::caps::MAX_ALLOCATION {
            return Err(Fail(
                vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                format!(
                    "{} bytes exceed maxMemoryAllocationSize",
                    info.allocation_size
                ),
            ));
        }
        let bytes = Bytes::zeroed(info.allocation_size).ok_or(Fail(
            vk::Result::ERROR_OUT_OF_HOST_MEMORY,
            format!("the host has no {} bytes", info.allocation_size),
        ))?;
        let handle = objects::insert(Arc::new(Memory { bytes }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::DeviceMemory::from_raw(handle), "pMemory")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn free_memory(
    _device: vk::Device,
    memory: vk::DeviceMemory,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkFreeMemory", || {
        if memory != vk::DeviceMemory::null() {
            objects::remove::<Memory>(memory.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn map_memory(
    _device: vk::Device,
    memory: vk::DeviceMemory,
    offset: u64,
    _size: u64,
    _flags: vk::MemoryMapFlags,
    out: *mut *mut std::ffi::c_void,
) -> vk::Result {
    guard("vkMapMemory", || {
        let m = objects::get::<Memory>(memory.as_raw())?;
        let at = m.bytes.address(offset).ok_or_else(|| {
            format!(
                "offset {offset} is past the allocation's {} bytes",
                m.bytes.len()
            )
        })?;
        // SAFETY: the program's output pointer (rule 1). The address stays valid until the
        // memory is freed (rule 4).
        unsafe { write(out, at.cast(), "ppData")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn unmap_memory(_device: vk::Device, memory: vk::DeviceMemory) {
    guard_void("vkUnmapMemory", || {
        objects::get::<Memory>(memory.as_raw())?;
        Ok(())
    })
}

/// `vkFlushMappedMemoryRanges` and `vkInvalidateMappedMemoryRanges`: the one memory type is
/// coherent, so both only check their ranges.
pub unsafe extern "system" fn flush_ranges(
    _device: vk::Device,
    count: u32,
    ranges: *const vk::MappedMemoryRange<'_>,
) -> vk::Result {
    guard("vkFlushMappedMemoryRanges", || {
        // SAFETY: the program's array (rule 1).
        for r in unsafe { slice(ranges, count, "pMemoryRanges")? } {
            objects::get::<Memory>(r.memory.as_raw())?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn create_buffer(
    device: vk::Device,
    info: *const vk::BufferCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Buffer,
) -> vk::Result {
    guard("vkCreateBuffer", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let handle = objects::insert(Arc::new(Buffer {
            size: info.size,
            bound: Mutex::new(None),
        }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Buffer::from_raw(handle), "pBuffer")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_buffer(
    _device: vk::Device,
    buffer: vk::Buffer,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyBuffer", || {
        if buffer != vk::Buffer::null() {
            objects::remove::<Buffer>(buffer.as_raw())?;
        }
        Ok(())
    })
}

/// A buffer's memory requirements: its size rounded up to the alignment, the one type.
fn requirements(buffer: vk::Buffer) -> Result<vk::MemoryRequirements, Fail> {
    let b = objects::get::<Buffer>(buffer.as_raw())?;
    let align = crate::caps::BUFFER_ALIGNMENT;
    Ok(vk::MemoryRequirements {
        size: b.size.div_ceil(align).saturating_mul(align),
        alignment: align,
        memory_type_bits: 1,
    })
}

pub unsafe extern "system" fn get_buffer_memory_requirements(
    _device: vk::Device,
    buffer: vk::Buffer,
    out: *mut vk::MemoryRequirements,
) {
    guard_void("vkGetBufferMemoryRequirements", || {
        let r = requirements(buffer)?;
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, r, "pMemoryRequirements") }
    })
}

pub unsafe extern "system" fn get_buffer_memory_requirements2(
    _device: vk::Device,
    info: *const vk::BufferMemoryRequirementsInfo2<'_>,
    out: *mut vk::MemoryRequirements2<'_>,
) {
    guard_void("vkGetBufferMemoryRequirements2", || {
        // SAFETY: the program's structs and chain (rule 1); only `memoryRequirements` and the
        // dedicated-allocation struct's answers are written.
        unsafe { answer_requirements2(out, requirements(read(info, "pInfo")?.buffer)?) }
    })
}

/// Writes `r` into the program's `VkMemoryRequirements2` and answers its dedicated-allocation
/// struct, if chained (no dedicated allocation preferred or required): shared by buffers and
/// images.
///
/// # Safety
/// `out` is the program's output struct with a valid `pNext` chain (rule 1).
pub(super) unsafe fn answer_requirements2(
    out: *mut vk::MemoryRequirements2<'_>,
    r: vk::MemoryRequirements,
) -> Result<(), Fail> {
    // SAFETY: the caller's promise; only `memoryRequirements` and the dedicated-allocation
    // struct's answers are written.
    unsafe {
        let next = read(out, "pMemoryRequirements")?.p_next;
        (*out).memory_requirements = r;
        for (s_type, at) in chain(next) {
            if s_type == vk::StructureType::MEMORY_DEDICATED_REQUIREMENTS {
                let d = at.cast::<vk::MemoryDedicatedRequirements>();
                (*d).prefers_dedicated_allocation = vk::FALSE;
                (*d).requires_dedicated_allocation = vk::FALSE;
            }
        }
    }
    Ok(())
}

/// Binds `memory` at `offset` to `buffer`.
fn bind(buffer: vk::Buffer, memory: vk::DeviceMemory, offset: u64) -> Result<(), Fail> {
    let b = objects::get::<Buffer>(buffer.as_raw())?;
    let m = objects::get::<Memory>(memory.as_raw())?;
    if offset
        .checked_add(b.size)
        .is_none_or(|end| end > m.bytes.len())
    {
        return Err(format!(
            "a buffer of {} bytes at offset {offset} does not fit the allocation's {} bytes",
            b.size,
            m.bytes.len()
        )
        .into());
    }
    *lock(&b.bound) = Some((m, offset));
    Ok(())
}

pub unsafe extern "system" fn bind_buffer_memory(
    _device: vk::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    offset: u64,
) -> vk::Result {
    guard("vkBindBufferMemory", || {
        bind(buffer, memory, offset).map(|()| vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn bind_buffer_memory2(
    _device: vk::Device,
    count: u32,
    infos: *const vk::BindBufferMemoryInfo<'_>,
) -> vk::Result {
    guard("vkBindBufferMemory2", || {
        // SAFETY: the program's array (rule 1).
        for i in unsafe { slice(infos, count, "pBindInfos")? } {
            bind(i.buffer, i.memory, i.memory_offset)?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn create_shader_module(
    device: vk::Device,
    info: *const vk::ShaderModuleCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::ShaderModule,
) -> vk::Result {
    guard("vkCreateShaderModule", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct and its code, `codeSize` bytes (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let words = unsafe { slice(info.p_code, (info.code_size / 4) as u32, "pCode")? };
        let module = crate::pipeline::shader_module(words)
            .map_err(|e| Fail(vk::Result::ERROR_INVALID_SHADER_NV, e))?;
        let handle = objects::insert(Arc::new(ShaderModule { module }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::ShaderModule::from_raw(handle), "pShaderModule")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_shader_module(
    _device: vk::Device,
    module: vk::ShaderModule,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyShaderModule", || {
        if module != vk::ShaderModule::null() {
            objects::remove::<ShaderModule>(module.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn create_fence(
    device: vk::Device,
    info: *const vk::FenceCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Fence,
) -> vk::Result {
    guard("vkCreateFence", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let fence = Fence::default();
        *lock(&fence.signalled) = info.flags.contains(vk::FenceCreateFlags::SIGNALED);
        let handle = objects::insert(Arc::new(fence));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::Fence::from_raw(handle), "pFence")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_fence(
    _device: vk::Device,
    fence: vk::Fence,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyFence", || {
        if fence != vk::Fence::null() {
            objects::remove::<Fence>(fence.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn reset_fences(
    _device: vk::Device,
    count: u32,
    fences: *const vk::Fence,
) -> vk::Result {
    guard("vkResetFences", || {
        // SAFETY: the program's array (rule 1).
        for f in unsafe { slice(fences, count, "pFences")? } {
            *lock(&objects::get::<Fence>(f.as_raw())?.signalled) = false;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_fence_status(device: vk::Device, fence: vk::Fence) -> vk::Result {
    guard("vkGetFenceStatus", || {
        let d = objects::get::<Device>(device.as_raw())?;
        let f = objects::get::<Fence>(fence.as_raw())?;
        let signalled = *lock(&f.signalled);
        let status = match signalled {
            true => vk::Result::SUCCESS,
            false => vk::Result::NOT_READY,
        };
        Ok(super::lost_or(&d, status))
    })
}

pub unsafe extern "system" fn wait_for_fences(
    device: vk::Device,
    count: u32,
    fences: *const vk::Fence,
    wait_all: vk::Bool32,
    timeout: u64,
) -> vk::Result {
    guard("vkWaitForFences", || {
        // SAFETY: the program's array (rule 1).
        let handles = unsafe { slice(fences, count, "pFences")? };
        let fences = handles
            .iter()
            .map(|f| objects::get::<Fence>(f.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        let d = objects::get::<Device>(device.as_raw())?;
        let deadline = Instant::now().checked_add(Duration::from_nanos(timeout));
        loop {
            // Vulkan "Lost Device": a wait returns in finite time, with success or this.
            if d.is_lost() {
                return Ok(vk::Result::ERROR_DEVICE_LOST);
            }
            let states: Vec<bool> = fences.iter().map(|f| *lock(&f.signalled)).collect();
            let done = match wait_all {
                vk::FALSE => states.iter().any(|s| *s),
                _ => states.iter().all(|s| *s),
            };
            if done {
                for (f, _) in fences.iter().zip(&states).filter(|(_, s)| **s) {
                    crate::exec::host_waited(&d, Some(f));
                }
                return Ok(vk::Result::SUCCESS);
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            let Some(f) = states.iter().position(|s| !s).and_then(|i| fences.get(i)) else {
                return Ok(vk::Result::TIMEOUT);
            };
            if left.is_zero() {
                return Ok(vk::Result::TIMEOUT);
            }
            // A short wait on one unsignalled fence, then every fence is looked at again.
            let held = lock(&f.signalled);
            if !*held {
                let _ = f
                    .changed
                    .wait_timeout(held, left.min(Duration::from_millis(10)));
            }
        }
    })
}
