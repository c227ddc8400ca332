//! Command pools and buffers, the recorded commands, and the queue: `vkQueueSubmit(2)` queues
//! its batches and runs what can run at once, in order ([`crate::exec::drain`]: a batch waiting
//! for a timeline value stays pending until a signal reaches it), signalling semaphores and the
//! fence as each batch ends.

use super::*;
use crate::exec::{Command, Submission};
use crate::objects::{
    self, lock, Buffer, CommandBuffer, CommandPool, DescriptorSet, Device, Event, Fence,
    PipelineLayout, Queue, Semaphore,
};
use ash::vk::Handle;
use std::sync::Arc;

pub unsafe extern "system" fn create_command_pool(
    device: vk::Device,
    _info: *const vk::CommandPoolCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::CommandPool,
) -> vk::Result {
    guard("vkCreateCommandPool", || {
        objects::get::<Device>(device.as_raw())?;
        let handle = objects::insert(Arc::new(CommandPool::default()));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::CommandPool::from_raw(handle), "pCommandPool")? };
        Ok(vk::Result::SUCCESS)
    })
}

/// Frees a command buffer's handle once the table gave it up.
fn free_command_buffer(handle: u64) {
    if objects::remove::<CommandBuffer>(handle).is_ok() {
        free_dispatchable(handle);
    }
}

pub unsafe extern "system" fn destroy_command_pool(
    _device: vk::Device,
    pool: vk::CommandPool,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyCommandPool", || {
        if pool != vk::CommandPool::null() {
            let pool = objects::remove::<CommandPool>(pool.as_raw())?;
            for cb in lock(&pool.buffers).drain(..) {
                free_command_buffer(cb);
            }
        }
        Ok(())
    })
}

pub unsafe extern "system" fn reset_command_pool(
    _device: vk::Device,
    pool: vk::CommandPool,
    _flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    guard("vkResetCommandPool", || {
        let pool = objects::get::<CommandPool>(pool.as_raw())?;
        for cb in lock(&pool.buffers).iter() {
            if let Ok(cb) = objects::get::<CommandBuffer>(*cb) {
                lock(&cb.commands).clear();
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo<'_>,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    guard("vkAllocateCommandBuffers", || {
        let device = objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pAllocateInfo")? };
        let pool = objects::get::<CommandPool>(info.command_pool.as_raw())?;
        if out.is_null() {
            return Err("pCommandBuffers is NULL".into());
        }
        for i in 0..info.command_buffer_count as usize {
            let handle = new_dispatchable();
            objects::insert_at(
                handle,
                Arc::new(CommandBuffer {
                    device: device.clone(),
                    pool: info.command_pool.as_raw(),
                    commands: Default::default(),
                }),
            );
            lock(&pool.buffers).push(handle);
            // SAFETY: `out` holds `commandBufferCount` handles (rule 1).
            unsafe { out.add(i).write(vk::CommandBuffer::from_raw(handle)) };
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn free_command_buffers(
    _device: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    buffers: *const vk::CommandBuffer,
) {
    guard_void("vkFreeCommandBuffers", || {
        let pool = objects::get::<CommandPool>(pool.as_raw())?;
        // SAFETY: the program's array (rule 1).
        for cb in unsafe { slice(buffers, count, "pCommandBuffers")? } {
            if *cb != vk::CommandBuffer::null() {
                lock(&pool.buffers).retain(|h| *h != cb.as_raw());
                free_command_buffer(cb.as_raw());
            }
        }
        Ok(())
    })
}

/// The command buffer a handle names.
pub(super) fn cb(handle: vk::CommandBuffer) -> Result<Arc<CommandBuffer>, Fail> {
    Ok(objects::get::<CommandBuffer>(handle.as_raw())?)
}

pub unsafe extern "system" fn begin_command_buffer(
    buffer: vk::CommandBuffer,
    _info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    guard("vkBeginCommandBuffer", || {
        lock(&cb(buffer)?.commands).clear();
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn end_command_buffer(buffer: vk::CommandBuffer) -> vk::Result {
    guard("vkEndCommandBuffer", || {
        cb(buffer)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn reset_command_buffer(
    buffer: vk::CommandBuffer,
    _flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    guard("vkResetCommandBuffer", || {
        lock(&cb(buffer)?.commands).clear();
        Ok(vk::Result::SUCCESS)
    })
}

/// Records `command` into `buffer`.
pub(super) fn record(buffer: vk::CommandBuffer, command: Command) -> Result<(), Fail> {
    lock(&cb(buffer)?.commands).push(command);
    Ok(())
}

pub unsafe extern "system" fn cmd_bind_pipeline(
    buffer: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
) {
    guard_void("vkCmdBindPipeline", || {
        if bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(format!("bind point {bind_point:?}: the device runs compute only").into());
        }
        let p = objects::get::<objects::Pipeline>(pipeline.as_raw())?;
        record(buffer, Command::BindPipeline(p))
    })
}

pub unsafe extern "system" fn cmd_bind_descriptor_sets(
    buffer: vk::CommandBuffer,
    _bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    first: u32,
    count: u32,
    sets: *const vk::DescriptorSet,
    dynamic_count: u32,
    dynamic: *const u32,
) {
    guard_void("vkCmdBindDescriptorSets", || {
        let layout = objects::get::<PipelineLayout>(layout.as_raw())?;
        // SAFETY: the program's arrays (rule 1).
        let sets = unsafe { slice(sets, count, "pDescriptorSets")? }
            .iter()
            .map(|s| objects::get::<DescriptorSet>(s.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        let dynamic = unsafe { slice(dynamic, dynamic_count, "pDynamicOffsets")? }.to_vec();
        record(
            buffer,
            Command::BindSets {
                layout,
                first,
                sets,
                dynamic,
            },
        )
    })
}

pub unsafe extern "system" fn cmd_push_constants(
    buffer: vk::CommandBuffer,
    _layout: vk::PipelineLayout,
    _stages: vk::ShaderStageFlags,
    offset: u32,
    size: u32,
    values: *const std::ffi::c_void,
) {
    guard_void("vkCmdPushConstants", || {
        // SAFETY: the program's `size` bytes (rule 1).
        let bytes = unsafe { slice(values.cast::<u8>(), size, "pValues")? }.to_vec();
        record(buffer, Command::PushConstants { offset, bytes })
    })
}

pub unsafe extern "system" fn cmd_dispatch(buffer: vk::CommandBuffer, x: u32, y: u32, z: u32) {
    guard_void("vkCmdDispatch", || {
        record(
            buffer,
            Command::Dispatch {
                base: [0; 3],
                groups: [x, y, z],
            },
        )
    })
}

pub unsafe extern "system" fn cmd_dispatch_base(
    buffer: vk::CommandBuffer,
    bx: u32,
    by: u32,
    bz: u32,
    x: u32,
    y: u32,
    z: u32,
) {
    guard_void("vkCmdDispatchBase", || {
        record(
            buffer,
            Command::Dispatch {
                base: [bx, by, bz],
                groups: [x, y, z],
            },
        )
    })
}

pub unsafe extern "system" fn cmd_dispatch_indirect(
    buffer: vk::CommandBuffer,
    args: vk::Buffer,
    offset: u64,
) {
    guard_void("vkCmdDispatchIndirect", || {
        let args = objects::get::<Buffer>(args.as_raw())?;
        record(
            buffer,
            Command::DispatchIndirect {
                buffer: args,
                offset,
            },
        )
    })
}

pub unsafe extern "system" fn cmd_copy_buffer(
    buffer: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    count: u32,
    regions: *const vk::BufferCopy,
) {
    guard_void("vkCmdCopyBuffer", || {
        let src = objects::get::<Buffer>(src.as_raw())?;
        let dst = objects::get::<Buffer>(dst.as_raw())?;
        // SAFETY: the program's array (rule 1).
        let regions = unsafe { slice(regions, count, "pRegions")? }
            .iter()
            .map(|r| (r.src_offset, r.dst_offset, r.size))
            .collect();
        record(buffer, Command::CopyBuffer { src, dst, regions })
    })
}

pub unsafe extern "system" fn cmd_fill_buffer(
    buffer: vk::CommandBuffer,
    dst: vk::Buffer,
    offset: u64,
    size: u64,
    data: u32,
) {
    guard_void("vkCmdFillBuffer", || {
        let dst = objects::get::<Buffer>(dst.as_raw())?;
        // VK_WHOLE_SIZE fills to the end, rounded down to a multiple of 4.
        let size = match size {
            vk::WHOLE_SIZE => dst.size.saturating_sub(offset) / 4 * 4,
            s => s,
        };
        record(
            buffer,
            Command::FillBuffer {
                dst,
                offset,
                size,
                data,
            },
        )
    })
}

pub unsafe extern "system" fn cmd_update_buffer(
    buffer: vk::CommandBuffer,
    dst: vk::Buffer,
    offset: u64,
    size: u64,
    data: *const std::ffi::c_void,
) {
    guard_void("vkCmdUpdateBuffer", || {
        let dst = objects::get::<Buffer>(dst.as_raw())?;
        let size = u32::try_from(size).map_err(|_| "dataSize is over 65536")?;
        // SAFETY: the program's `dataSize` bytes (rule 1); copied now, as the spec requires.
        let bytes = unsafe { slice(data.cast::<u8>(), size, "pData")? }.to_vec();
        record(buffer, Command::UpdateBuffer { dst, offset, bytes })
    })
}

pub unsafe extern "system" fn cmd_pipeline_barrier(
    buffer: vk::CommandBuffer,
    src: vk::PipelineStageFlags,
    dst: vk::PipelineStageFlags,
    _dependency: vk::DependencyFlags,
    memory_count: u32,
    memory: *const vk::MemoryBarrier<'_>,
    buffer_count: u32,
    buffers: *const vk::BufferMemoryBarrier<'_>,
    _image_count: u32,
    _images: *const vk::ImageMemoryBarrier<'_>,
) {
    guard_void("vkCmdPipelineBarrier", || {
        // SAFETY: the program's arrays (rule 1).
        let orders =
            unsafe { orders1((src, dst), (memory_count, memory), (buffer_count, buffers))? };
        record(buffer, Command::Barrier(orders))
    })
}

pub unsafe extern "system" fn cmd_pipeline_barrier2(
    buffer: vk::CommandBuffer,
    info: *const vk::DependencyInfo<'_>,
) {
    guard_void("vkCmdPipelineBarrier2", || {
        // SAFETY: the program's dependency info (rule 1).
        let orders = unsafe { orders2(std::slice::from_ref(read(info, "pDependencyInfo")?))? };
        record(buffer, Command::Barrier(orders))
    })
}

/// What a `vkCmdPipelineBarrier` or `vkCmdWaitEvents` orders between dispatches
/// ([`crate::hazards::barrier_orders`]): its stages, and the accesses of its global and buffer
/// memory barriers (a buffer barrier is taken as covering every byte: never a hazard invented).
///
/// # Safety
/// The arrays are the program's, of the lengths given.
unsafe fn orders1(
    (src, dst): (vk::PipelineStageFlags, vk::PipelineStageFlags),
    (memory_count, memory): (u32, *const vk::MemoryBarrier<'_>),
    (buffer_count, buffers): (u32, *const vk::BufferMemoryBarrier<'_>),
) -> Result<crate::hazards::Orders, Fail> {
    // SAFETY: the caller's promise.
    let memory = unsafe { slice(memory, memory_count, "pMemoryBarriers")? };
    // SAFETY: as above.
    let buffers = unsafe { slice(buffers, buffer_count, "pBufferMemoryBarriers")? };
    let accesses: Vec<(u64, u64)> = memory
        .iter()
        .map(|m| (m.src_access_mask, m.dst_access_mask))
        .chain(
            buffers
                .iter()
                .map(|b| (b.src_access_mask, b.dst_access_mask)),
        )
        .map(|(s, d)| (u64::from(s.as_raw()), u64::from(d.as_raw())))
        .collect();
    Ok(crate::hazards::barrier_orders(
        u64::from(src.as_raw()),
        u64::from(dst.as_raw()),
        &accesses,
    ))
}

/// What `VkDependencyInfo`s order: each memory and buffer barrier carries its own stages.
///
/// # Safety
/// The infos' arrays are the program's, of the lengths given.
unsafe fn orders2(infos: &[vk::DependencyInfo<'_>]) -> Result<crate::hazards::Orders, Fail> {
    let mut barriers = Vec::new();
    for info in infos {
        // SAFETY: the caller's promise.
        let memory = unsafe {
            slice(
                info.p_memory_barriers,
                info.memory_barrier_count,
                "pMemoryBarriers",
            )?
        };
        // SAFETY: as above.
        let buffers = unsafe {
            slice(
                info.p_buffer_memory_barriers,
                info.buffer_memory_barrier_count,
                "pBufferMemoryBarriers",
            )?
        };
        barriers.extend(memory.iter().map(|m| {
            (
                m.src_stage_mask.as_raw(),
                m.src_access_mask.as_raw(),
                m.dst_stage_mask.as_raw(),
                m.dst_access_mask.as_raw(),
            )
        }));
        barriers.extend(buffers.iter().map(|m| {
            (
                m.src_stage_mask.as_raw(),
                m.src_access_mask.as_raw(),
                m.dst_stage_mask.as_raw(),
                m.dst_access_mask.as_raw(),
            )
        }));
    }
    Ok(crate::hazards::barrier2_orders(&barriers))
}

pub unsafe extern "system" fn cmd_set_event(
    buffer: vk::CommandBuffer,
    event: vk::Event,
    _stages: vk::PipelineStageFlags,
) {
    guard_void("vkCmdSetEvent", || {
        record(
            buffer,
            Command::SetEvent(objects::get::<Event>(event.as_raw())?, true),
        )
    })
}

pub unsafe extern "system" fn cmd_set_event2(
    buffer: vk::CommandBuffer,
    event: vk::Event,
    _info: *const vk::DependencyInfo<'_>,
) {
    guard_void("vkCmdSetEvent2", || {
        record(
            buffer,
            Command::SetEvent(objects::get::<Event>(event.as_raw())?, true),
        )
    })
}

/// `vkCmdResetEvent` and `vkCmdResetEvent2` (whose stage mask is 64-bit: the last argument is
/// not read).
pub unsafe extern "system" fn cmd_reset_event(
    buffer: vk::CommandBuffer,
    event: vk::Event,
    _stages: u64,
) {
    guard_void("vkCmdResetEvent", || {
        record(
            buffer,
            Command::SetEvent(objects::get::<Event>(event.as_raw())?, false),
        )
    })
}

pub unsafe extern "system" fn cmd_wait_events(
    buffer: vk::CommandBuffer,
    count: u32,
    events: *const vk::Event,
    src: vk::PipelineStageFlags,
    dst: vk::PipelineStageFlags,
    memory_count: u32,
    memory: *const vk::MemoryBarrier<'_>,
    buffer_count: u32,
    buffers: *const vk::BufferMemoryBarrier<'_>,
    _image_count: u32,
    _images: *const vk::ImageMemoryBarrier<'_>,
) {
    guard_void("vkCmdWaitEvents", || {
        // SAFETY: the program's arrays (rule 1).
        let orders =
            unsafe { orders1((src, dst), (memory_count, memory), (buffer_count, buffers))? };
        wait_events(buffer, count, events, orders)
    })
}

pub unsafe extern "system" fn cmd_wait_events2(
    buffer: vk::CommandBuffer,
    count: u32,
    events: *const vk::Event,
    infos: *const vk::DependencyInfo<'_>,
) {
    guard_void("vkCmdWaitEvents2", || {
        // SAFETY: the program's array, one info per event (rule 1).
        let orders = unsafe { orders2(slice(infos, count, "pDependencyInfos")?)? };
        wait_events(buffer, count, events, orders)
    })
}

/// Checks the events and records a barrier: commands run in order, so an event a command
/// waits for was set before it runs (or is the host's to set, which would block a GPU too).
/// The dependency is taken as starting at the wait ([`crate::hazards`]: over-ordering, never
/// a hazard invented).
fn wait_events(
    buffer: vk::CommandBuffer,
    count: u32,
    events: *const vk::Event,
    orders: crate::hazards::Orders,
) -> Result<(), Fail> {
    // SAFETY: the program's array (rule 1).
    for e in unsafe { slice(events, count, "pEvents")? } {
        objects::get::<Event>(e.as_raw())?;
    }
    record(buffer, Command::Barrier(orders))
}

/// The semaphores and values of a wait or signal list.
fn semaphores(
    handles: &[vk::Semaphore],
    values: &[u64],
) -> Result<Vec<(Arc<Semaphore>, u64)>, Fail> {
    handles
        .iter()
        .enumerate()
        .map(|(i, h)| {
            Ok((
                objects::get::<Semaphore>(h.as_raw())?,
                values.get(i).copied().unwrap_or(0),
            ))
        })
        .collect()
}

/// Queues the batches on `queue` (the fence with the last) and runs what can run.
fn submit(
    queue: vk::Queue,
    mut batches: Vec<Submission>,
    fence: vk::Fence,
) -> Result<vk::Result, Fail> {
    let q = objects::get::<Queue>(queue.as_raw())?;
    if q.device.is_lost() {
        return Ok(vk::Result::ERROR_DEVICE_LOST);
    }
    if fence != vk::Fence::null() {
        let f = objects::get::<Fence>(fence.as_raw())?;
        match batches.last_mut() {
            Some(last) => last.fence = Some(f),
            // No batch: the fence is signalled once what was submitted before has run.
            None => batches.push(Submission {
                fence: Some(f),
                ..Submission::default()
            }),
        }
    }
    lock(&q.pending).extend(batches);
    crate::exec::drain(&q);
    Ok(lost_or(&q.device, vk::Result::SUCCESS))
}

/// The commands recorded in a command buffer, copied.
fn commands(h: vk::CommandBuffer) -> Result<Vec<Command>, Fail> {
    Ok(lock(&cb(h)?.commands).clone())
}

pub unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    guard("vkQueueSubmit", || {
        let mut batches = Vec::new();
        // SAFETY: the program's arrays and chains (rule 1).
        for s in unsafe { slice(submits, count, "pSubmits")? } {
            let buffers = unsafe {
                slice(
                    s.p_command_buffers,
                    s.command_buffer_count,
                    "pCommandBuffers",
                )?
            };
            let waits = unsafe {
                slice(
                    s.p_wait_semaphores,
                    s.wait_semaphore_count,
                    "pWaitSemaphores",
                )?
            };
            let signals = unsafe {
                slice(
                    s.p_signal_semaphores,
                    s.signal_semaphore_count,
                    "pSignalSemaphores",
                )?
            };
            let (mut wait_values, mut signal_values): (&[u64], &[u64]) = (&[], &[]);
            for (s_type, at) in unsafe { chain(s.p_next) } {
                if s_type == vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO {
                    // SAFETY: the struct its `sType` names, with its arrays.
                    let t = unsafe { &*at.cast::<vk::TimelineSemaphoreSubmitInfo>() };
                    wait_values = unsafe {
                        slice(
                            t.p_wait_semaphore_values,
                            t.wait_semaphore_value_count,
                            "pWaitSemaphoreValues",
                        )?
                    };
                    signal_values = unsafe {
                        slice(
                            t.p_signal_semaphore_values,
                            t.signal_semaphore_value_count,
                            "pSignalSemaphoreValues",
                        )?
                    };
                }
            }
            batches.push(Submission {
                waits: semaphores(waits, wait_values)?,
                buffers: buffers
                    .iter()
                    .map(|b| commands(*b))
                    .collect::<Result<_, _>>()?,
                signals: semaphores(signals, signal_values)?,
                fence: None,
            });
        }
        submit(queue, batches, fence)
    })
}

pub unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    guard("vkQueueSubmit2", || {
        let mut batches = Vec::new();
        // SAFETY: the program's arrays (rule 1).
        for s in unsafe { slice(submits, count, "pSubmits")? } {
            let infos = unsafe {
                slice(
                    s.p_command_buffer_infos,
                    s.command_buffer_info_count,
                    "pCommandBufferInfos",
                )?
            };
            let waits = unsafe {
                slice(
                    s.p_wait_semaphore_infos,
                    s.wait_semaphore_info_count,
                    "pWaitSemaphoreInfos",
                )?
            };
            let signals = unsafe {
                slice(
                    s.p_signal_semaphore_infos,
                    s.signal_semaphore_info_count,
                    "pSignalSemaphoreInfos",
                )?
            };
            let list = |infos: &[vk::SemaphoreSubmitInfo]| {
                infos
                    .iter()
                    .map(|i| Ok((objects::get::<Semaphore>(i.semaphore.as_raw())?, i.value)))
                    .collect::<Result<Vec<_>, Fail>>()
            };
            batches.push(Submission {
                waits: list(waits)?,
                buffers: infos
                    .iter()
                    .map(|i| commands(i.command_buffer))
                    .collect::<Result<_, _>>()?,
                signals: list(signals)?,
                fence: None,
            });
        }
        submit(queue, batches, fence)
    })
}

pub unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    guard("vkQueueWaitIdle", || {
        let q = objects::get::<Queue>(queue.as_raw())?;
        super::wait_idle(&q);
        crate::exec::host_waited(&q.device, None);
        Ok(lost_or(&q.device, vk::Result::SUCCESS))
    })
}
