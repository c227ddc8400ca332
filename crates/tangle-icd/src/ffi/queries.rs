//! Query pools of timestamps and their commands ([`crate::query`]), and the device-group entry
//! points of one device (`vkCmdSetDeviceMask`, `vkGetDeviceGroupPeerMemoryFeatures`, core in
//! Vulkan 1.1).

use super::*;
use crate::exec::Command;
use crate::objects::{self, Buffer, Device, Queue};
use crate::query::{QueryCommand, QueryPool};
use ash::vk::Handle;
use std::sync::Arc;

pub unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::QueryPool,
) -> vk::Result {
    guard("vkCreateQueryPool", || {
        let d = objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        if info.query_type != vk::QueryType::TIMESTAMP {
            return Err(Fail(
                vk::Result::ERROR_FEATURE_NOT_PRESENT,
                format!(
                    "query type {:?}: only TIMESTAMP queries are supported",
                    info.query_type
                ),
            ));
        }
        let queue = objects::get::<Queue>(d.queue)?;
        let handle = objects::insert(Arc::new(QueryPool::new(info.query_count, queue)));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::QueryPool::from_raw(handle), "pQueryPool")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_query_pool(
    _device: vk::Device,
    pool: vk::QueryPool,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyQueryPool", || {
        if pool != vk::QueryPool::null() {
            objects::remove::<QueryPool>(pool.as_raw())?;
        }
        Ok(())
    })
}

/// The pool a handle names.
fn pool(h: vk::QueryPool) -> Result<Arc<QueryPool>, Fail> {
    Ok(objects::get::<QueryPool>(h.as_raw())?)
}

/// `vkResetQueryPool` (core 1.2, `hostQueryReset`).
pub unsafe extern "system" fn reset_query_pool(
    _device: vk::Device,
    p: vk::QueryPool,
    first: u32,
    count: u32,
) {
    guard_void("vkResetQueryPool", || Ok(pool(p)?.reset(first, count)?))
}

pub unsafe extern "system" fn get_query_pool_results(
    _device: vk::Device,
    p: vk::QueryPool,
    first: u32,
    count: u32,
    size: usize,
    data: *mut std::ffi::c_void,
    stride: u64,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    guard("vkGetQueryPoolResults", || {
        let (writes, all) = pool(p)?.results((first, count), stride, flags, false)?;
        let base = data.cast::<u8>();
        if base.is_null() && !writes.is_empty() {
            return Err("pData is NULL".into());
        }
        for (at, bytes) in writes {
            let end = at.saturating_add(bytes.len() as u64);
            if end > size as u64 {
                return Err(format!("results end at byte {end}, past dataSize {size}").into());
            }
            // SAFETY: `pData` holds `dataSize` bytes (rule 1) and `at + len <= dataSize`.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at as usize), bytes.len())
            };
        }
        Ok(if all {
            vk::Result::SUCCESS
        } else {
            vk::Result::NOT_READY
        })
    })
}

/// Records a query command.
fn record_query(buffer: vk::CommandBuffer, c: QueryCommand) -> Result<(), Fail> {
    super::commands::record(buffer, Command::Query(c))
}

pub unsafe extern "system" fn cmd_reset_query_pool(
    buffer: vk::CommandBuffer,
    p: vk::QueryPool,
    first: u32,
    count: u32,
) {
    guard_void("vkCmdResetQueryPool", || {
        let pool = pool(p)?;
        record_query(buffer, QueryCommand::Reset { pool, first, count })
    })
}

/// `vkCmdWriteTimestamp` and `vkCmdWriteTimestamp2` (whose stage is 64-bit: the stage is
/// not read, as for `vkCmdResetEvent`).
pub unsafe extern "system" fn cmd_write_timestamp(
    buffer: vk::CommandBuffer,
    _stage: u64,
    p: vk::QueryPool,
    query: u32,
) {
    guard_void("vkCmdWriteTimestamp", || {
        let pool = pool(p)?;
        record_query(buffer, QueryCommand::Timestamp { pool, query })
    })
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn cmd_copy_query_pool_results(
    buffer: vk::CommandBuffer,
    p: vk::QueryPool,
    first: u32,
    count: u32,
    dst: vk::Buffer,
    offset: u64,
    stride: u64,
    flags: vk::QueryResultFlags,
) {
    guard_void("vkCmdCopyQueryPoolResults", || {
        let c = QueryCommand::Copy {
            pool: pool(p)?,
            first,
            count,
            dst: objects::get::<Buffer>(dst.as_raw())?,
            offset,
            stride,
            flags,
        };
        record_query(buffer, c)
    })
}

/// `vkCmdSetDeviceMask`: one device, so the mask is 1.
pub unsafe extern "system" fn cmd_set_device_mask(buffer: vk::CommandBuffer, mask: u32) {
    guard_void("vkCmdSetDeviceMask", || {
        super::commands::cb(buffer)?;
        if mask != 1 {
            return Err(
                format!("device mask {mask:#x}: the device group has one device (mask 1)").into(),
            );
        }
        Ok(())
    })
}

/// `vkGetDeviceGroupPeerMemoryFeatures`: one device, whose memory is all its own.
pub unsafe extern "system" fn get_device_group_peer_memory_features(
    device: vk::Device,
    _heap: u32,
    _local: u32,
    _remote: u32,
    out: *mut vk::PeerMemoryFeatureFlags,
) {
    guard_void("vkGetDeviceGroupPeerMemoryFeatures", || {
        objects::get::<Device>(device.as_raw())?;
        let all = vk::PeerMemoryFeatureFlags::COPY_SRC
            | vk::PeerMemoryFeatureFlags::COPY_DST
            | vk::PeerMemoryFeatureFlags::GENERIC_SRC
            | vk::PeerMemoryFeatureFlags::GENERIC_DST;
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, all, "pPeerMemoryFeatures") }
    })
}
