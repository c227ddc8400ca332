//! Global, instance and physical-device entry points: instance creation, enumeration, every
//! property, feature, memory and queue query (with their `…2` forms and `pNext` chains), and
//! the cooperative-matrix list.

use super::*;
use crate::caps::Caps;
use crate::objects::{self, Instance, Physical};
use ash::vk::Handle;
use std::sync::Arc;

/// The physical device's claims.
fn caps(physical: vk::PhysicalDevice) -> Result<Arc<Caps>, Fail> {
    Ok(objects::get::<Physical>(physical.as_raw())?.caps.clone())
}

pub unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Instance,
) -> vk::Result {
    guard("vkCreateInstance", || {
        let (caps, settings) = match crate::config::settings()
            .and_then(|(profile, settings)| Ok((crate::config::caps(profile)?, settings)))
        {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: the program's create-info and its chain (rule 1).
                if let Ok(info) = unsafe { read(info, "pCreateInfo") } {
                    // SAFETY: as above.
                    unsafe { super::debug::instance_creation_failed(info.p_next, &e) };
                }
                return Err(Fail(vk::Result::ERROR_INITIALIZATION_FAILED, e));
            }
        };
        let instance = new_dispatchable();
        let physical = new_dispatchable();
        objects::insert_at(
            physical,
            Arc::new(Physical {
                caps: Arc::new(caps),
                instance,
                settings: Arc::new(settings),
            }),
        );
        objects::insert_at(instance, Arc::new(Instance { physical }));
        // SAFETY: `out` is the program's output pointer (rule 1).
        unsafe { write(out, vk::Instance::from_raw(instance), "pInstance")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyInstance", || {
        if instance == vk::Instance::null() {
            return Ok(());
        }
        let it = objects::remove::<Instance>(instance.as_raw())?;
        crate::messages::remove_instance(instance.as_raw());
        free_dispatchable(instance.as_raw());
        if objects::remove::<Physical>(it.physical).is_ok() {
            free_dispatchable(it.physical);
        }
        Ok(())
    })
}

pub unsafe extern "system" fn enumerate_instance_version(out: *mut u32) -> vk::Result {
    guard("vkEnumerateInstanceVersion", || {
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, crate::caps::API_VERSION, "pApiVersion")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn enumerate_instance_extension_properties(
    layer: *const c_char,
    count: *mut u32,
    out: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard("vkEnumerateInstanceExtensionProperties", || {
        if !layer.is_null() {
            return Ok(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        // Amber uses the `…2KHR` queries only when this extension is listed; with
        // VK_EXT_debug_utils listed the loader calls the driver's messenger functions.
        let list = [
            extension(
                vk::KHR_GET_PHYSICAL_DEVICE_PROPERTIES2_NAME,
                vk::KHR_GET_PHYSICAL_DEVICE_PROPERTIES2_SPEC_VERSION,
            ),
            extension(vk::EXT_DEBUG_UTILS_NAME, vk::EXT_DEBUG_UTILS_SPEC_VERSION),
        ];
        // SAFETY: the program's count and array (rule 1).
        unsafe { enumerate(count, out, &list) }
    })
}

/// A `VkExtensionProperties`.
pub fn extension(name: &CStr, spec_version: u32) -> vk::ExtensionProperties {
    let mut p = vk::ExtensionProperties {
        spec_version,
        ..Default::default()
    };
    for (o, byte) in p.extension_name.iter_mut().zip(name.to_bytes()) {
        *o = *byte as c_char;
    }
    p
}

pub unsafe extern "system" fn enumerate_physical_devices(
    instance: vk::Instance,
    count: *mut u32,
    out: *mut vk::PhysicalDevice,
) -> vk::Result {
    guard("vkEnumeratePhysicalDevices", || {
        let it = objects::get::<Instance>(instance.as_raw())?;
        // SAFETY: the program's count and array (rule 1).
        unsafe { enumerate(count, out, &[vk::PhysicalDevice::from_raw(it.physical)]) }
    })
}

pub unsafe extern "system" fn enumerate_device_extension_properties(
    physical: vk::PhysicalDevice,
    layer: *const c_char,
    count: *mut u32,
    out: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard("vkEnumerateDeviceExtensionProperties", || {
        if !layer.is_null() {
            return Ok(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        let list: Vec<_> = caps(physical)?
            .extensions()
            .into_iter()
            .map(|(n, v)| extension(n, v))
            .collect();
        // SAFETY: the program's count and array (rule 1).
        unsafe { enumerate(count, out, &list) }
    })
}

pub unsafe extern "system" fn get_physical_device_properties(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceProperties,
) {
    guard_void("vkGetPhysicalDeviceProperties", || {
        let p = caps(physical)?.properties();
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, p, "pProperties") }
    })
}

pub unsafe extern "system" fn get_physical_device_properties2(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceProperties2", || {
        let caps = caps(physical)?;
        // SAFETY: the program's output struct and its chain (rule 1); each chained struct is
        // written as the type its `sType` names.
        unsafe {
            let head = read(out, "pProperties")?;
            let next = head.p_next;
            (*out).properties = caps.properties();
            for (s_type, at) in chain(next) {
                fill_property(&caps, s_type, at);
            }
        }
        Ok(())
    })
}

/// Writes the property struct of type `s_type` at `at`; other types are skipped.
///
/// # Safety
/// `at` points to a valid, writable struct of type `s_type`.
unsafe fn fill_property(
    caps: &Caps,
    s_type: vk::StructureType,
    at: *mut vk::BaseOutStructure<'static>,
) {
    macro_rules! props {
        ($($t:ty => $f:ident),* $(,)?) => {
            match s_type {
                // SAFETY: `at`'s `sType` is `$t`'s (the caller's promise).
                $(<$t as vk::TaggedStructure>::STRUCTURE_TYPE => unsafe { put(at, caps.$f()) },)*
                _ => {}
            }
        };
    }
    props! {
        vk::PhysicalDeviceSubgroupProperties => subgroup,
        vk::PhysicalDeviceSubgroupSizeControlProperties => subgroup_size_control,
        vk::PhysicalDeviceDriverProperties => driver,
        vk::PhysicalDeviceIDProperties => id,
        vk::PhysicalDeviceFloatControlsProperties => float_controls,
        vk::PhysicalDeviceShaderIntegerDotProductProperties => integer_dot,
        vk::PhysicalDeviceMaintenance3Properties => maintenance3,
        vk::PhysicalDeviceTimelineSemaphoreProperties => timeline,
        vk::PhysicalDeviceCooperativeMatrixPropertiesKHR => coopmat_properties,
        vk::PhysicalDeviceRobustness2PropertiesEXT => robustness2_properties,
        vk::PhysicalDevicePipelineRobustnessPropertiesEXT => pipeline_robustness_properties,
        vk::PhysicalDeviceDescriptorIndexingProperties => descriptor_indexing,
        vk::PhysicalDeviceVulkan11Properties => vulkan11_properties,
        vk::PhysicalDeviceVulkan12Properties => vulkan12_properties,
        vk::PhysicalDeviceVulkan13Properties => vulkan13_properties,
    }
}

/// The feature structs the driver knows, for queries and device creation: calls `$m!(T)` with
/// each.
macro_rules! feature_structs {
    ($m:ident) => {
        $m!(vk::PhysicalDeviceVulkan11Features);
        $m!(vk::PhysicalDeviceVulkan12Features);
        $m!(vk::PhysicalDeviceVulkan13Features);
        $m!(vk::PhysicalDevice16BitStorageFeatures);
        $m!(vk::PhysicalDevice8BitStorageFeatures);
        $m!(vk::PhysicalDeviceShaderFloat16Int8Features);
        $m!(vk::PhysicalDeviceVariablePointersFeatures);
        $m!(vk::PhysicalDeviceSubgroupSizeControlFeatures);
        $m!(vk::PhysicalDeviceShaderIntegerDotProductFeatures);
        $m!(vk::PhysicalDeviceSynchronization2Features);
        $m!(vk::PhysicalDeviceVulkanMemoryModelFeatures);
        $m!(vk::PhysicalDeviceShaderSubgroupExtendedTypesFeatures);
        $m!(vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures);
        $m!(vk::PhysicalDeviceShaderTerminateInvocationFeatures);
        $m!(vk::PhysicalDeviceShaderAtomicInt64Features);
        $m!(vk::PhysicalDeviceCooperativeMatrixFeaturesKHR);
        $m!(vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR);
        $m!(vk::PhysicalDeviceShaderSubgroupRotateFeaturesKHR);
        $m!(vk::PhysicalDeviceRobustness2FeaturesEXT);
        $m!(vk::PhysicalDevicePipelineRobustnessFeaturesEXT);
        $m!(vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR);
        $m!(vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR);
        $m!(vk::PhysicalDeviceTimelineSemaphoreFeatures);
        $m!(vk::PhysicalDeviceBufferDeviceAddressFeatures);
        $m!(vk::PhysicalDeviceMaintenance4Features);
        $m!(vk::PhysicalDeviceDescriptorIndexingFeatures);
        $m!(vk::PhysicalDeviceScalarBlockLayoutFeatures);
        $m!(vk::PhysicalDeviceHostQueryResetFeatures);
        $m!(vk::PhysicalDeviceUniformBufferStandardLayoutFeatures);
    };
}

/// The field names of a feature struct type, and whether its words fit in it.
fn names_of<T: Default + std::fmt::Debug>(header: usize) -> Option<Vec<(String, u32)>> {
    let names = crate::features::fields(&T::default());
    (header + 4 * names.len() <= std::mem::size_of::<T>()).then_some(names)
}

pub unsafe extern "system" fn get_physical_device_features(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceFeatures,
) {
    guard_void("vkGetPhysicalDeviceFeatures", || {
        let f = caps(physical)?.features();
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, f, "pFeatures") }
    })
}

pub unsafe extern "system" fn get_physical_device_features2(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceFeatures2<'_>,
) {
    guard_void("vkGetPhysicalDeviceFeatures2", || {
        let caps = caps(physical)?;
        let supported = crate::features::supported(&caps);
        // SAFETY: the program's output struct and its chain (rule 1); each chained struct is
        // written as the type its `sType` names, only the words its field names count.
        unsafe {
            let next = read(out, "pFeatures")?.p_next;
            (*out).features = caps.features();
            for (s_type, at) in chain(next) {
                macro_rules! fill {
                    ($t:ty) => {
                        if s_type == <$t as vk::TaggedStructure>::STRUCTURE_TYPE {
                            if let Some(names) = names_of::<$t>(16) {
                                let words = crate::features::words(&names, &supported);
                                set_bool_words(at.cast(), 16, &words);
                            }
                        }
                    };
                }
                feature_structs!(fill);
            }
        }
        Ok(())
    })
}

/// The first feature the `pEnabledFeatures` struct or the `pNext` chain of a device create-info
/// asks for that the device lacks.
///
/// # Safety
/// `base` is null or a valid `VkPhysicalDeviceFeatures`; `next` is a valid chain.
/// The VK_EXT_robustness2 features a device create-info's chain enables.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Robustness2 {
    /// `robustBufferAccess2`.
    pub buffer2: bool,
    /// `robustImageAccess2`.
    pub image2: bool,
    /// `nullDescriptor`.
    pub null_descriptor: bool,
}

/// The VK_EXT_robustness2 features enabled in the `VkPhysicalDeviceRobustness2FeaturesEXT`s of
/// the create-info's chain (`next`).
///
/// # Safety
/// `next` is a valid chain.
pub(super) unsafe fn robustness2(next: *const std::ffi::c_void) -> Robustness2 {
    let mut on = Robustness2::default();
    // SAFETY: the caller's chain; each struct is read as the type its `sType` names.
    for (s_type, at) in unsafe { chain(next) } {
        if s_type == vk::StructureType::PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT {
            // SAFETY: a `VkPhysicalDeviceRobustness2FeaturesEXT`.
            let f = unsafe { &*at.cast::<vk::PhysicalDeviceRobustness2FeaturesEXT>() };
            on.buffer2 |= f.robust_buffer_access2 == vk::TRUE;
            on.image2 |= f.robust_image_access2 == vk::TRUE;
            on.null_descriptor |= f.null_descriptor == vk::TRUE;
        }
    }
    on
}

/// Whether VK_KHR_cooperative_matrix's `cooperativeMatrixRobustBufferAccess` is enabled in the
/// create-info's chain (`next`).
///
/// # Safety
/// `next` is a valid chain.
pub(super) unsafe fn coopmat_robust_buffer_access(next: *const std::ffi::c_void) -> bool {
    // SAFETY: the caller's chain; each struct is read as the type its `sType` names.
    unsafe { chain(next) }.into_iter().any(|(s_type, at)| {
        s_type == vk::StructureType::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR
            // SAFETY: a `VkPhysicalDeviceCooperativeMatrixFeaturesKHR`.
            && unsafe { (*at.cast::<vk::PhysicalDeviceCooperativeMatrixFeaturesKHR>()).cooperative_matrix_robust_buffer_access }
                == vk::TRUE
    })
}

/// Whether VK_EXT_pipeline_robustness's `pipelineRobustness` is enabled in the create-info's
/// chain (`next`).
///
/// # Safety
/// `next` is a valid chain.
pub(super) unsafe fn pipeline_robustness(next: *const std::ffi::c_void) -> bool {
    // SAFETY: the caller's chain; each struct is read as the type its `sType` names.
    unsafe { chain(next) }.into_iter().any(|(s_type, at)| {
        s_type == vk::StructureType::PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT
            // SAFETY: a `VkPhysicalDevicePipelineRobustnessFeaturesEXT`.
            && unsafe { (*at.cast::<vk::PhysicalDevicePipelineRobustnessFeaturesEXT>()).pipeline_robustness }
                == vk::TRUE
    })
}

/// Whether `robustBufferAccess` is enabled in `pEnabledFeatures` (`base`) or in a
/// `VkPhysicalDeviceFeatures2` of the create-info's chain (`next`).
///
/// # Safety
/// As [`missing_feature`]: `base` is null or a valid `VkPhysicalDeviceFeatures`, and `next` a
/// valid chain.
pub(super) unsafe fn robust_buffer_access(
    base: *const vk::PhysicalDeviceFeatures,
    next: *const std::ffi::c_void,
) -> bool {
    // SAFETY: the caller's promise for `base`.
    let in_base = !base.is_null() && unsafe { (*base).robust_buffer_access } == vk::TRUE;
    // SAFETY: the caller's chain; each struct is read as the type its `sType` names.
    in_base
        || unsafe { chain(next) }.into_iter().any(|(s_type, at)| {
            s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2
                // SAFETY: a `VkPhysicalDeviceFeatures2`: its `features` member is valid.
                && unsafe { (*at.cast::<vk::PhysicalDeviceFeatures2>()).features.robust_buffer_access }
                    == vk::TRUE
        })
}

pub(super) unsafe fn missing_feature(
    caps: &Caps,
    base: *const vk::PhysicalDeviceFeatures,
    next: *const std::ffi::c_void,
) -> Option<String> {
    let supported = crate::features::supported(caps);
    let check_base = |p: *const vk::PhysicalDeviceFeatures| {
        let names = names_of::<vk::PhysicalDeviceFeatures>(0)?;
        // SAFETY: `p` is a valid `VkPhysicalDeviceFeatures` of 55 words (the caller's promise).
        let words = unsafe { bool_words(p.cast(), 0, names.len()) };
        crate::features::missing("VkPhysicalDeviceFeatures", &names, &words, &supported)
    };
    if !base.is_null() {
        if let Some(m) = check_base(base) {
            return Some(m);
        }
    }
    // SAFETY: the caller's chain; each struct is read as the type its `sType` names.
    for (s_type, at) in unsafe { chain(next) } {
        if s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
            // SAFETY: a `VkPhysicalDeviceFeatures2`: its `features` member is valid.
            let inner = unsafe { &(*at.cast::<vk::PhysicalDeviceFeatures2>()).features };
            if let Some(m) = check_base(inner) {
                return Some(m);
            }
        }
        macro_rules! check {
            ($t:ty) => {
                if s_type == <$t as vk::TaggedStructure>::STRUCTURE_TYPE {
                    if let Some(names) = names_of::<$t>(16) {
                        // SAFETY: `at` is a valid `$t`, whose words `names_of` counted.
                        let words = unsafe { bool_words(at.cast(), 16, names.len()) };
                        let name = crate::features::struct_name(&<$t>::default());
                        if let Some(m) = crate::features::missing(&name, &names, &words, &supported)
                        {
                            return Some(m);
                        }
                    }
                }
            };
        }
        feature_structs!(check);
    }
    None
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties(
    physical: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::QueueFamilyProperties,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties", || {
        let family = caps(physical)?.queue_family();
        // SAFETY: the program's count and array (rule 1).
        let _ = unsafe { enumerate(count, out, &[family])? };
        Ok(())
    })
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties2(
    physical: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::QueueFamilyProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties2", || {
        let family = caps(physical)?.queue_family();
        if count.is_null() {
            return Err("pQueueFamilyPropertyCount is NULL".into());
        }
        // SAFETY: the program's count and array (rule 1); only the `queueFamilyProperties`
        // member is written, so the program's `sType` and `pNext` stay.
        unsafe {
            if out.is_null() {
                count.write(1);
            } else if count.read() >= 1 {
                (*out).queue_family_properties = family;
                count.write(1);
            }
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_physical_device_memory_properties(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceMemoryProperties,
) {
    guard_void("vkGetPhysicalDeviceMemoryProperties", || {
        let m = caps(physical)?.memory();
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, m, "pMemoryProperties") }
    })
}

pub unsafe extern "system" fn get_physical_device_memory_properties2(
    physical: vk::PhysicalDevice,
    out: *mut vk::PhysicalDeviceMemoryProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceMemoryProperties2", || {
        let m = caps(physical)?.memory();
        // SAFETY: the program's output struct (rule 1); its `sType` and `pNext` stay.
        unsafe {
            read(out, "pMemoryProperties")?;
            (*out).memory_properties = m;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_physical_device_cooperative_matrix_properties(
    physical: vk::PhysicalDevice,
    count: *mut u32,
    out: *mut vk::CooperativeMatrixPropertiesKHR<'_>,
) -> vk::Result {
    guard("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", || {
        let list = caps(physical)?.coopmat();
        if count.is_null() {
            return Err("pPropertyCount is NULL".into());
        }
        // SAFETY: the program's count and array (rule 1); each element's `pNext` is kept.
        unsafe {
            if out.is_null() {
                count.write(list.len() as u32);
                return Ok(vk::Result::SUCCESS);
            }
            let room = count.read() as usize;
            for (i, e) in list.iter().take(room).enumerate() {
                put(out.add(i).cast(), *e);
            }
            count.write(room.min(list.len()) as u32);
        }
        Ok(if room_short(count, list.len()) {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        })
    })
}

/// Whether the count written back is below the list's length.
fn room_short(count: *mut u32, len: usize) -> bool {
    // SAFETY: `count` was checked non-null and is the program's valid count pointer.
    (unsafe { count.read() } as usize) < len
}

pub unsafe extern "system" fn get_physical_device_sparse_image_format_properties(
    physical: vk::PhysicalDevice,
    _format: vk::Format,
    _kind: vk::ImageType,
    _samples: vk::SampleCountFlags,
    _usage: vk::ImageUsageFlags,
    _tiling: vk::ImageTiling,
    count: *mut u32,
    out: *mut vk::SparseImageFormatProperties,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties", || {
        caps(physical)?;
        // No sparse images (the loader requires the function): an empty list.
        // SAFETY: the program's count and array (rule 1).
        let _ = unsafe { enumerate(count, out, &[])? };
        Ok(())
    })
}
