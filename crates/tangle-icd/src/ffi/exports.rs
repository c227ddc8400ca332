//! The library's three exported symbols (Vulkan-Loader `docs/LoaderDriverInterface.md`,
//! "Loader and Driver Interface Negotiation"), and the name tables behind them.
//!
//! Only these three are `#[no_mangle]`: the official `vk*` names are reached through the tables,
//! so the driver never shadows the loader's own symbols in the program.

use super::commands::*;
use super::debug::*;
use super::device::*;
use super::images::*;
use super::instance::*;
use super::pipelines::*;
use super::queries::*;
use super::sync::*;
use super::*;
use crate::objects::{self, Device, Instance};
use ash::vk::Handle;

/// The newest loader–driver interface the driver speaks: 7, where the loader also asks
/// `vk_icdGetInstanceProcAddr` for the two other `vk_icd*` functions.
pub const INTERFACE_VERSION: u32 = 7;
/// The oldest it accepts: 5, where the loader checks `apiVersion` itself.
pub const MIN_INTERFACE_VERSION: u32 = 5;

/// A function as the loader's untyped pointer.
macro_rules! pfn {
    ($f:expr) => {
        // SAFETY: the loader casts the pointer back to the prototype of the name it asked for,
        // which is `$f`'s (each table maps a name to the function implementing it).
        Some(unsafe {
            std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ())
        })
    };
}

#[no_mangle]
pub unsafe extern "system" fn vk_icdNegotiateLoaderICDInterfaceVersion(
    version: *mut u32,
) -> vk::Result {
    guard("vk_icdNegotiateLoaderICDInterfaceVersion", || {
        // SAFETY: the loader's in-out pointer.
        let offered = unsafe { *read(version, "pSupportedVersion")? };
        if offered < MIN_INTERFACE_VERSION {
            return Ok(vk::Result::ERROR_INCOMPATIBLE_DRIVER);
        }
        // SAFETY: as above.
        unsafe { write(version, offered.min(INTERFACE_VERSION), "pSupportedVersion")? };
        Ok(vk::Result::SUCCESS)
    })
}

#[no_mangle]
pub unsafe extern "system" fn vk_icdGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    lookup(name, |n| {
        let global = global_fn(n);
        if instance == vk::Instance::null() || global.is_some() {
            return global;
        }
        objects::get::<Instance>(instance.as_raw()).ok()?;
        instance_fn(n)
            .or_else(|| physical_fn(n))
            .or_else(|| device_fn(n))
    })
}

#[no_mangle]
pub unsafe extern "system" fn vk_icdGetPhysicalDeviceProcAddr(
    _instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    lookup(name, physical_fn)
}

/// `vkGetDeviceProcAddr`: the device's functions only (NULL for others, as the spec asks).
unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    lookup(name, |n| {
        objects::get::<Device>(device.as_raw()).ok()?;
        device_fn(n)
    })
}

/// Looks a name up with `find`, never unwinding, NULL for a null name.
fn lookup(
    name: *const c_char,
    find: impl FnOnce(&[u8]) -> vk::PFN_vkVoidFunction,
) -> vk::PFN_vkVoidFunction {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the loader's or program's name string (rule 1).
        let name = unsafe { c_str(name, "pName") }.ok()?;
        find(name.to_bytes())
    }))
    .ok()
    .flatten()
}

/// Functions with no instance: creation and the instance-level enumerations, and the other
/// `vk_icd*` functions (interface 7).
fn global_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkCreateInstance" => pfn!(create_instance),
        b"vkEnumerateInstanceVersion" => pfn!(enumerate_instance_version),
        b"vkEnumerateInstanceExtensionProperties" => pfn!(enumerate_instance_extension_properties),
        b"vkGetInstanceProcAddr" => pfn!(vk_icdGetInstanceProcAddr),
        b"vk_icdNegotiateLoaderICDInterfaceVersion" => {
            pfn!(vk_icdNegotiateLoaderICDInterfaceVersion)
        }
        b"vk_icdGetPhysicalDeviceProcAddr" => pfn!(vk_icdGetPhysicalDeviceProcAddr),
        _ => None,
    }
}

/// Instance functions that do not take a physical device.
fn instance_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkDestroyInstance" => pfn!(destroy_instance),
        b"vkCreateDebugUtilsMessengerEXT" => pfn!(create_debug_utils_messenger),
        b"vkDestroyDebugUtilsMessengerEXT" => pfn!(destroy_debug_utils_messenger),
        b"vkSubmitDebugUtilsMessageEXT" => pfn!(submit_debug_utils_message),
        b"vkEnumeratePhysicalDevices" => pfn!(enumerate_physical_devices),
        b"vkGetDeviceProcAddr" => pfn!(get_device_proc_addr),
        _ => None,
    }
}

/// Functions whose first parameter is a `VkPhysicalDevice` (what
/// `vk_icdGetPhysicalDeviceProcAddr` answers: the loader learns the extension queries it does
/// not know, the cooperative-matrix one on Debian 12's loader, from here).
fn physical_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkGetPhysicalDeviceProperties" => pfn!(get_physical_device_properties),
        b"vkGetPhysicalDeviceProperties2" | b"vkGetPhysicalDeviceProperties2KHR" => {
            pfn!(get_physical_device_properties2)
        }
        b"vkGetPhysicalDeviceFeatures" => pfn!(get_physical_device_features),
        b"vkGetPhysicalDeviceFeatures2" | b"vkGetPhysicalDeviceFeatures2KHR" => {
            pfn!(get_physical_device_features2)
        }
        b"vkGetPhysicalDeviceQueueFamilyProperties" => {
            pfn!(get_physical_device_queue_family_properties)
        }
        b"vkGetPhysicalDeviceQueueFamilyProperties2"
        | b"vkGetPhysicalDeviceQueueFamilyProperties2KHR" => {
            pfn!(get_physical_device_queue_family_properties2)
        }
        b"vkGetPhysicalDeviceMemoryProperties" => pfn!(get_physical_device_memory_properties),
        b"vkGetPhysicalDeviceMemoryProperties2" | b"vkGetPhysicalDeviceMemoryProperties2KHR" => {
            pfn!(get_physical_device_memory_properties2)
        }
        b"vkGetPhysicalDeviceFormatProperties" => pfn!(get_physical_device_format_properties),
        b"vkGetPhysicalDeviceFormatProperties2" | b"vkGetPhysicalDeviceFormatProperties2KHR" => {
            pfn!(get_physical_device_format_properties2)
        }
        b"vkGetPhysicalDeviceImageFormatProperties" => {
            pfn!(get_physical_device_image_format_properties)
        }
        b"vkGetPhysicalDeviceImageFormatProperties2"
        | b"vkGetPhysicalDeviceImageFormatProperties2KHR" => {
            pfn!(get_physical_device_image_format_properties2)
        }
        b"vkGetPhysicalDeviceSparseImageFormatProperties2"
        | b"vkGetPhysicalDeviceSparseImageFormatProperties2KHR" => {
            pfn!(get_physical_device_sparse_image_format_properties2)
        }
        b"vkGetPhysicalDeviceSparseImageFormatProperties" => {
            pfn!(get_physical_device_sparse_image_format_properties)
        }
        b"vkEnumerateDeviceExtensionProperties" => pfn!(enumerate_device_extension_properties),
        b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR" => {
            pfn!(get_physical_device_cooperative_matrix_properties)
        }
        b"vkCreateDevice" => pfn!(create_device),
        _ => None,
    }
}

/// Device-level functions (a device, queue or command buffer first).
fn device_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkGetDeviceProcAddr" => pfn!(get_device_proc_addr),
        b"vkDestroyDevice" => pfn!(destroy_device),
        b"vkGetDeviceQueue" => pfn!(get_device_queue),
        b"vkGetDeviceQueue2" => pfn!(get_device_queue2),
        b"vkDeviceWaitIdle" => pfn!(device_wait_idle),
        b"vkQueueWaitIdle" => pfn!(queue_wait_idle),
        b"vkQueueSubmit" => pfn!(queue_submit),
        b"vkQueueSubmit2" | b"vkQueueSubmit2KHR" => pfn!(queue_submit2),
        b"vkAllocateMemory" => pfn!(allocate_memory),
        b"vkFreeMemory" => pfn!(free_memory),
        b"vkMapMemory" => pfn!(map_memory),
        b"vkUnmapMemory" => pfn!(unmap_memory),
        b"vkFlushMappedMemoryRanges" | b"vkInvalidateMappedMemoryRanges" => pfn!(flush_ranges),
        b"vkCreateBuffer" => pfn!(create_buffer),
        b"vkDestroyBuffer" => pfn!(destroy_buffer),
        b"vkGetBufferMemoryRequirements" => pfn!(get_buffer_memory_requirements),
        b"vkGetBufferMemoryRequirements2" | b"vkGetBufferMemoryRequirements2KHR" => {
            pfn!(get_buffer_memory_requirements2)
        }
        b"vkBindBufferMemory" => pfn!(bind_buffer_memory),
        b"vkBindBufferMemory2" | b"vkBindBufferMemory2KHR" => pfn!(bind_buffer_memory2),
        b"vkCreateShaderModule" => pfn!(create_shader_module),
        b"vkDestroyShaderModule" => pfn!(destroy_shader_module),
        b"vkCreateDescriptorSetLayout" => pfn!(create_set_layout),
        b"vkDestroyDescriptorSetLayout" => pfn!(destroy_set_layout),
        b"vkCreateDescriptorPool" => pfn!(create_descriptor_pool),
        b"vkDestroyDescriptorPool" => pfn!(destroy_descriptor_pool),
        b"vkResetDescriptorPool" => pfn!(reset_descriptor_pool),
        b"vkAllocateDescriptorSets" => pfn!(allocate_descriptor_sets),
        b"vkFreeDescriptorSets" => pfn!(free_descriptor_sets),
        b"vkUpdateDescriptorSets" => pfn!(update_descriptor_sets),
        b"vkCreatePipelineLayout" => pfn!(create_pipeline_layout),
        b"vkDestroyPipelineLayout" => pfn!(destroy_pipeline_layout),
        b"vkCreateComputePipelines" => pfn!(create_compute_pipelines),
        b"vkDestroyPipeline" => pfn!(destroy_pipeline),
        b"vkSetDebugUtilsObjectNameEXT" => pfn!(set_debug_utils_object_name),
        b"vkCreatePipelineCache" => pfn!(create_pipeline_cache),
        b"vkDestroyPipelineCache" => pfn!(destroy_pipeline_cache),
        b"vkGetPipelineCacheData" => pfn!(get_pipeline_cache_data),
        b"vkMergePipelineCaches" => pfn!(merge_pipeline_caches),
        b"vkCreateCommandPool" => pfn!(create_command_pool),
        b"vkDestroyCommandPool" => pfn!(destroy_command_pool),
        b"vkResetCommandPool" => pfn!(reset_command_pool),
        b"vkAllocateCommandBuffers" => pfn!(allocate_command_buffers),
        b"vkFreeCommandBuffers" => pfn!(free_command_buffers),
        b"vkBeginCommandBuffer" => pfn!(begin_command_buffer),
        b"vkEndCommandBuffer" => pfn!(end_command_buffer),
        b"vkResetCommandBuffer" => pfn!(reset_command_buffer),
        b"vkCmdBindPipeline" => pfn!(cmd_bind_pipeline),
        b"vkCmdBindDescriptorSets" => pfn!(cmd_bind_descriptor_sets),
        b"vkCmdPushConstants" => pfn!(cmd_push_constants),
        b"vkCmdDispatch" => pfn!(cmd_dispatch),
        b"vkCmdDispatchBase" | b"vkCmdDispatchBaseKHR" => pfn!(cmd_dispatch_base),
        b"vkCmdDispatchIndirect" => pfn!(cmd_dispatch_indirect),
        b"vkCmdCopyBuffer" => pfn!(cmd_copy_buffer),
        b"vkCmdFillBuffer" => pfn!(cmd_fill_buffer),
        b"vkCmdUpdateBuffer" => pfn!(cmd_update_buffer),
        b"vkCmdPipelineBarrier" => pfn!(cmd_pipeline_barrier),
        b"vkCmdPipelineBarrier2" | b"vkCmdPipelineBarrier2KHR" => pfn!(cmd_pipeline_barrier2),
        b"vkCreateFence" => pfn!(create_fence),
        b"vkDestroyFence" => pfn!(destroy_fence),
        b"vkResetFences" => pfn!(reset_fences),
        b"vkGetFenceStatus" => pfn!(get_fence_status),
        b"vkWaitForFences" => pfn!(wait_for_fences),
        b"vkCreateSemaphore" => pfn!(create_semaphore),
        b"vkDestroySemaphore" => pfn!(destroy_semaphore),
        b"vkGetSemaphoreCounterValue" | b"vkGetSemaphoreCounterValueKHR" => {
            pfn!(get_semaphore_counter_value)
        }
        b"vkSignalSemaphore" | b"vkSignalSemaphoreKHR" => pfn!(signal_semaphore),
        b"vkWaitSemaphores" | b"vkWaitSemaphoresKHR" => pfn!(wait_semaphores),
        b"vkCreateEvent" => pfn!(create_event),
        b"vkDestroyEvent" => pfn!(destroy_event),
        b"vkGetEventStatus" => pfn!(get_event_status),
        b"vkSetEvent" => pfn!(set_event),
        b"vkResetEvent" => pfn!(reset_event),
        b"vkCmdSetEvent" => pfn!(cmd_set_event),
        b"vkCmdSetEvent2" | b"vkCmdSetEvent2KHR" => pfn!(cmd_set_event2),
        b"vkCmdResetEvent" | b"vkCmdResetEvent2" | b"vkCmdResetEvent2KHR" => pfn!(cmd_reset_event),
        b"vkCmdWaitEvents" => pfn!(cmd_wait_events),
        b"vkCmdWaitEvents2" | b"vkCmdWaitEvents2KHR" => pfn!(cmd_wait_events2),
        _ => image_fn(name).or_else(|| query_fn(name)),
    }
}

/// Images, views, samplers, buffer views and their commands.
fn image_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkCreateImage" => pfn!(create_image),
        b"vkDestroyImage" => pfn!(destroy_image),
        b"vkGetImageMemoryRequirements" => pfn!(get_image_memory_requirements),
        b"vkGetImageMemoryRequirements2" | b"vkGetImageMemoryRequirements2KHR" => {
            pfn!(get_image_memory_requirements2)
        }
        b"vkBindImageMemory" => pfn!(bind_image_memory),
        b"vkBindImageMemory2" | b"vkBindImageMemory2KHR" => pfn!(bind_image_memory2),
        b"vkGetImageSubresourceLayout" => pfn!(get_image_subresource_layout),
        b"vkCreateImageView" => pfn!(create_image_view),
        b"vkDestroyImageView" => pfn!(destroy_image_view),
        b"vkCreateBufferView" => pfn!(create_buffer_view),
        b"vkDestroyBufferView" => pfn!(destroy_buffer_view),
        b"vkCreateSampler" => pfn!(create_sampler),
        b"vkDestroySampler" => pfn!(destroy_sampler),
        b"vkCmdCopyBufferToImage" => pfn!(cmd_copy_buffer_to_image),
        b"vkCmdCopyImageToBuffer" => pfn!(cmd_copy_image_to_buffer),
        b"vkCmdCopyImage" => pfn!(cmd_copy_image),
        b"vkCmdClearColorImage" => pfn!(cmd_clear_color_image),
        _ => None,
    }
}

/// Query pools and the device-group functions of one device.
fn query_fn(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkCreateQueryPool" => pfn!(create_query_pool),
        b"vkDestroyQueryPool" => pfn!(destroy_query_pool),
        b"vkResetQueryPool" | b"vkResetQueryPoolEXT" => pfn!(reset_query_pool),
        b"vkGetQueryPoolResults" => pfn!(get_query_pool_results),
        b"vkCmdResetQueryPool" => pfn!(cmd_reset_query_pool),
        b"vkCmdWriteTimestamp" | b"vkCmdWriteTimestamp2" | b"vkCmdWriteTimestamp2KHR" => {
            pfn!(cmd_write_timestamp)
        }
        b"vkCmdCopyQueryPoolResults" => pfn!(cmd_copy_query_pool_results),
        b"vkCmdSetDeviceMask" | b"vkCmdSetDeviceMaskKHR" => pfn!(cmd_set_device_mask),
        b"vkGetDeviceGroupPeerMemoryFeatures" | b"vkGetDeviceGroupPeerMemoryFeaturesKHR" => {
            pfn!(get_device_group_peer_memory_features)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_answer_by_level() {
        assert!(global_fn(b"vkCreateInstance").is_some());
        assert!(global_fn(b"vkCreateBuffer").is_none());
        assert!(physical_fn(b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR").is_some());
        assert!(physical_fn(b"vkQueueSubmit").is_none());
        assert!(device_fn(b"vkCmdDispatch").is_some());
        assert!(device_fn(b"vkCmdDraw").is_none());
        let mut v = 9;
        // SAFETY: a valid in-out pointer.
        assert_eq!(
            unsafe { vk_icdNegotiateLoaderICDInterfaceVersion(&mut v) },
            vk::Result::SUCCESS
        );
        assert_eq!(v, INTERFACE_VERSION);
        let mut old = 4;
        // SAFETY: as above.
        assert_eq!(
            unsafe { vk_icdNegotiateLoaderICDInterfaceVersion(&mut old) },
            vk::Result::ERROR_INCOMPATIBLE_DRIVER
        );
    }
}
