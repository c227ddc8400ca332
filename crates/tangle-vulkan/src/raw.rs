//! Every Vulkan call of the crate, and so its only `unsafe` code: loading the loader, querying
//! physical devices into [`DeviceInfo`], creating a logical device with exactly the features a
//! plan needs, and running one dispatch (buffers, descriptor sets, pipeline, command buffer,
//! fence with a timeout, read-back); the images, texel-buffer views and samplers of its bindings
//! are `resources`'s.
//!
//! Soundness rests on three rules kept throughout, repeated at each block:
//! * every create-info and its `p_next` chain is built from locals that outlive the call (ash's
//!   builders tie their lifetimes), and every slice handed to Vulkan is valid for its length;
//! * every object is destroyed exactly once, by the guard that created it, after the work that
//!   uses it has finished (a fence wait that succeeded), and children before their parents
//!   ([`Objects`] before [`Gpu`] before [`Instance`], which the `Arc`s enforce);
//! * when the GPU may still be using an object (a timeout, a lost device) nothing is destroyed:
//!   the objects are leaked, which is safe, rather than freed under the GPU; so are the device,
//!   the instance and the loaded driver library under them, since destroying the instance or
//!   unloading the driver under a running dispatch crashes the process (lavapipe did, in CI).

pub mod overhead;
mod resources;

use crate::device::{DeviceInfo, Limits, SubgroupInfo, MIN_API};
use crate::error::VulkanError;
use crate::features::Feature;
use crate::plan::DispatchPlan;
use ash::vk;
use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::Duration;
use tangle_amber::backend::BindingKind;
use tangle_amber::ComputeJob;
use tangle_exec::profile::{ComponentType, CooperativeMatrixProperties, MatrixScope};

/// Set once a dispatch timed out or lost its device: the driver may still be running it.
static DEVICE_LEFT_RUNNING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether some dispatch of this process timed out or lost its device, so the driver may still
/// be running it (then [`exit_now`] must end the process).
pub fn device_left_running() -> bool {
    DEVICE_LEFT_RUNNING.load(std::sync::atomic::Ordering::SeqCst)
}

/// Ends the process with `code` without running exit handlers or static destructors. After a
/// timed-out dispatch the driver's threads may still be running the shader, and a normal exit
/// destroys the driver's state under them: lavapipe then aborts the process ("pure virtual
/// method called") and the exit code is lost. The caller flushes its output first.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes any status and never returns; it runs no user code, so no Rust
    // invariant can be observed broken afterwards.
    unsafe { libc::_exit(code) }
}

/// A loaded Vulkan loader and an instance on it.
pub struct Instance {
    entry: ash::Entry,
    instance: ash::Instance,
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: every child (Gpu) holds an Arc<Instance>, so none is alive here; the instance
        // is destroyed once.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// A `VkResult` as an error of `call`.
fn api(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |result| match result {
        vk::Result::ERROR_DEVICE_LOST => VulkanError::DeviceLost(call.to_string()),
        _ => VulkanError::Api {
            call,
            result: format!("{result:?}"),
        },
    }
}

/// A C string from a fixed-size Vulkan char array, lossily.
fn text(s: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    s.map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Instance {
    /// Opens the loader (`libvulkan.so.1`, or the library `loader` names) and creates a Vulkan
    /// 1.3 instance.
    pub fn new(loader: Option<&std::ffi::OsStr>) -> Result<Arc<Instance>, VulkanError> {
        // SAFETY: loading a shared library runs its initialisers; the Vulkan loader's are the
        // documented way to use it, and the library stays loaded as long as `entry` lives.
        let entry = unsafe {
            match loader {
                Some(path) => ash::Entry::load_from(path),
                None => ash::Entry::load(),
            }
        }
        .map_err(|e| VulkanError::NoLoader(e.to_string()))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"tangle")
            .api_version(vk::make_api_version(0, MIN_API.0, MIN_API.1, 0));
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and `app` are live locals; no layers or extensions are named.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(|r| match r {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER => VulkanError::NoDriver(
                "the loader found no driver (VK_ERROR_INCOMPATIBLE_DRIVER)".into(),
            ),
            r => VulkanError::NoDriver(format!("vkCreateInstance failed: {r:?}")),
        })?;
        Ok(Arc::new(Instance { entry, instance }))
    }

    /// Every physical device with what it reports.
    pub fn devices(&self) -> Result<Vec<(vk::PhysicalDevice, DeviceInfo)>, VulkanError> {
        // SAFETY: the instance is alive for the call.
        let physical = unsafe { self.instance.enumerate_physical_devices() }
            .map_err(api("vkEnumeratePhysicalDevices"))?;
        physical
            .into_iter()
            .enumerate()
            .map(|(index, pd)| Ok((pd, self.describe(index, pd)?)))
            .collect()
    }

    /// Queries one physical device.
    fn describe(&self, index: usize, pd: vk::PhysicalDevice) -> Result<DeviceInfo, VulkanError> {
        let i = &self.instance;
        // SAFETY: `pd` came from this instance's enumeration.
        let props = unsafe { i.get_physical_device_properties(pd) };
        // SAFETY: as above.
        let extensions: BTreeSet<String> = unsafe { i.enumerate_device_extension_properties(pd) }
            .map_err(api("vkEnumerateDeviceExtensionProperties"))?
            .iter()
            .map(|e| text(e.extension_name_as_c_str()))
            .collect();
        let v = props.api_version;
        let mut info = DeviceInfo {
            index,
            name: text(props.device_name_as_c_str()),
            kind: match props.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
                vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
                vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
                vk::PhysicalDeviceType::CPU => "CPU",
                _ => "other",
            }
            .to_string(),
            api: (
                vk::api_version_major(v),
                vk::api_version_minor(v),
                vk::api_version_patch(v),
            ),
            ids: (props.vendor_id, props.device_id),
            extensions,
            ..DeviceInfo::default()
        };
        let l = &props.limits;
        info.limits = Limits {
            max_workgroup_size: l.max_compute_work_group_size,
            max_workgroup_invocations: l.max_compute_work_group_invocations,
            max_workgroup_count: l.max_compute_work_group_count,
            max_shared_memory: l.max_compute_shared_memory_size,
            max_push_constants: l.max_push_constants_size,
            max_storage_range: l.max_storage_buffer_range,
            max_uniform_range: l.max_uniform_buffer_range,
            max_bound_sets: l.max_bound_descriptor_sets,
            offset_alignment: [
                l.min_storage_buffer_offset_alignment,
                l.min_uniform_buffer_offset_alignment,
                l.min_texel_buffer_offset_alignment,
            ],
            max_texel_buffer_elements: l.max_texel_buffer_elements,
        };
        if info.usable().is_err() {
            // The 1.2/1.3 structures below may not be chained on an older device.
            return Ok(info);
        }
        self.describe_properties(pd, &mut info);
        self.describe_features(pd, &mut info);
        if info.extensions.contains("VK_KHR_cooperative_matrix") {
            info.cooperative_matrix = self.cooperative_matrix(pd)?;
        }
        Ok(info)
    }

    /// Subgroup, driver, float-controls and integer-dot-product properties.
    fn describe_properties(&self, pd: vk::PhysicalDevice, info: &mut DeviceInfo) {
        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut size_control = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut dot = vk::PhysicalDeviceShaderIntegerDotProductProperties::default();
        {
            let mut props = vk::PhysicalDeviceProperties2::default()
                .push_next(&mut subgroup)
                .push_next(&mut size_control)
                .push_next(&mut v12)
                .push_next(&mut dot);
            // SAFETY: every chained structure is core in Vulkan 1.3, which `usable` checked,
            // and lives until the end of this block.
            unsafe {
                self.instance
                    .get_physical_device_properties2(pd, &mut props)
            };
        }
        let compute = vk::ShaderStageFlags::COMPUTE;
        info.subgroup = SubgroupInfo {
            size: subgroup.subgroup_size,
            min_size: size_control.min_subgroup_size,
            max_size: size_control.max_subgroup_size,
            operations: subgroup.supported_operations.as_raw(),
            compute: subgroup.supported_stages.contains(compute),
            required_size_compute: size_control.required_subgroup_size_stages.contains(compute),
        };
        info.driver_id = v12.driver_id.as_raw() as u32;
        info.driver = format!(
            "{} {}",
            text(v12.driver_name_as_c_str()),
            text(v12.driver_info_as_c_str())
        )
        .trim()
        .to_string();
        let b = |x: vk::Bool32| x == vk::TRUE;
        info.float_controls = [
            (
                "shaderDenormPreserveFloat16",
                v12.shader_denorm_preserve_float16,
            ),
            (
                "shaderDenormPreserveFloat32",
                v12.shader_denorm_preserve_float32,
            ),
            (
                "shaderDenormPreserveFloat64",
                v12.shader_denorm_preserve_float64,
            ),
            (
                "shaderDenormFlushToZeroFloat16",
                v12.shader_denorm_flush_to_zero_float16,
            ),
            (
                "shaderDenormFlushToZeroFloat32",
                v12.shader_denorm_flush_to_zero_float32,
            ),
            (
                "shaderDenormFlushToZeroFloat64",
                v12.shader_denorm_flush_to_zero_float64,
            ),
            (
                "shaderRoundingModeRTEFloat16",
                v12.shader_rounding_mode_rte_float16,
            ),
            (
                "shaderRoundingModeRTEFloat32",
                v12.shader_rounding_mode_rte_float32,
            ),
            (
                "shaderRoundingModeRTEFloat64",
                v12.shader_rounding_mode_rte_float64,
            ),
            (
                "shaderRoundingModeRTZFloat16",
                v12.shader_rounding_mode_rtz_float16,
            ),
            (
                "shaderRoundingModeRTZFloat32",
                v12.shader_rounding_mode_rtz_float32,
            ),
            (
                "shaderRoundingModeRTZFloat64",
                v12.shader_rounding_mode_rtz_float64,
            ),
            (
                "shaderSignedZeroInfNanPreserveFloat16",
                v12.shader_signed_zero_inf_nan_preserve_float16,
            ),
            (
                "shaderSignedZeroInfNanPreserveFloat32",
                v12.shader_signed_zero_inf_nan_preserve_float32,
            ),
            (
                "shaderSignedZeroInfNanPreserveFloat64",
                v12.shader_signed_zero_inf_nan_preserve_float64,
            ),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), b(v)))
        .collect();
        info.dot_product = [
            (
                "integerDotProduct8BitUnsignedAccelerated",
                dot.integer_dot_product8_bit_unsigned_accelerated,
            ),
            (
                "integerDotProduct8BitSignedAccelerated",
                dot.integer_dot_product8_bit_signed_accelerated,
            ),
            (
                "integerDotProduct8BitMixedSignednessAccelerated",
                dot.integer_dot_product8_bit_mixed_signedness_accelerated,
            ),
            (
                "integerDotProduct4x8BitPackedUnsignedAccelerated",
                dot.integer_dot_product4x8_bit_packed_unsigned_accelerated,
            ),
            (
                "integerDotProduct4x8BitPackedSignedAccelerated",
                dot.integer_dot_product4x8_bit_packed_signed_accelerated,
            ),
            (
                "integerDotProduct4x8BitPackedMixedSignednessAccelerated",
                dot.integer_dot_product4x8_bit_packed_mixed_signedness_accelerated,
            ),
            (
                "integerDotProduct16BitUnsignedAccelerated",
                dot.integer_dot_product16_bit_unsigned_accelerated,
            ),
            (
                "integerDotProduct16BitSignedAccelerated",
                dot.integer_dot_product16_bit_signed_accelerated,
            ),
            (
                "integerDotProduct32BitUnsignedAccelerated",
                dot.integer_dot_product32_bit_unsigned_accelerated,
            ),
            (
                "integerDotProduct32BitSignedAccelerated",
                dot.integer_dot_product32_bit_signed_accelerated,
            ),
            (
                "integerDotProduct64BitUnsignedAccelerated",
                dot.integer_dot_product64_bit_unsigned_accelerated,
            ),
            (
                "integerDotProduct64BitSignedAccelerated",
                dot.integer_dot_product64_bit_signed_accelerated,
            ),
            (
                "integerDotProductAccumulatingSaturating8BitSignedAccelerated",
                dot.integer_dot_product_accumulating_saturating8_bit_signed_accelerated,
            ),
            (
                "integerDotProductAccumulatingSaturating4x8BitPackedSignedAccelerated",
                dot.integer_dot_product_accumulating_saturating4x8_bit_packed_signed_accelerated,
            ),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), b(v)))
        .collect();
    }

    /// The features tangle knows, as the device reports them.
    fn describe_features(&self, pd: vk::PhysicalDevice, info: &mut DeviceInfo) {
        let has = |e: &str| info.extensions.contains(e);
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut rotate = vk::PhysicalDeviceShaderSubgroupRotateFeaturesKHR::default();
        let mut reconv = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default();
        let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
        let mut wg = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default();
        let mut robust2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        let core = {
            let mut f = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut v11)
                .push_next(&mut v12)
                .push_next(&mut v13);
            // An extension's structure is chained only when the device lists the extension.
            if has("VK_KHR_shader_subgroup_rotate") {
                f = f.push_next(&mut rotate);
            }
            if has("VK_KHR_shader_maximal_reconvergence") {
                f = f.push_next(&mut reconv);
            }
            if has("VK_KHR_cooperative_matrix") {
                f = f.push_next(&mut coop);
            }
            if has("VK_KHR_workgroup_memory_explicit_layout") {
                f = f.push_next(&mut wg);
            }
            if has("VK_EXT_robustness2") {
                f = f.push_next(&mut robust2);
            }
            // SAFETY: the chain holds core 1.3 structures (the device is 1.3, `usable`) and
            // structures of extensions the device lists, all alive until the end of this block.
            unsafe { self.instance.get_physical_device_features2(pd, &mut f) };
            f.features
        };
        let on = |x: vk::Bool32| x == vk::TRUE;
        info.features = Feature::ALL
            .iter()
            .copied()
            .filter(|f| {
                on(match f {
                    Feature::ShaderInt64 => core.shader_int64,
                    Feature::ShaderInt16 => core.shader_int16,
                    Feature::ShaderFloat64 => core.shader_float64,
                    Feature::RobustBufferAccess => core.robust_buffer_access,
                    Feature::RobustBufferAccess2 => robust2.robust_buffer_access2,
                    Feature::RobustImageAccess2 => robust2.robust_image_access2,
                    Feature::NullDescriptor => robust2.null_descriptor,
                    Feature::ShaderFloat16 => v12.shader_float16,
                    Feature::ShaderInt8 => v12.shader_int8,
                    Feature::StorageBuffer8BitAccess => v12.storage_buffer8_bit_access,
                    Feature::UniformAndStorageBuffer8BitAccess => {
                        v12.uniform_and_storage_buffer8_bit_access
                    }
                    Feature::StoragePushConstant8 => v12.storage_push_constant8,
                    Feature::StorageBuffer16BitAccess => v11.storage_buffer16_bit_access,
                    Feature::UniformAndStorageBuffer16BitAccess => {
                        v11.uniform_and_storage_buffer16_bit_access
                    }
                    Feature::StoragePushConstant16 => v11.storage_push_constant16,
                    Feature::VariablePointersStorageBuffer => v11.variable_pointers_storage_buffer,
                    Feature::VariablePointers => v11.variable_pointers,
                    Feature::ShaderSubgroupExtendedTypes => v12.shader_subgroup_extended_types,
                    Feature::VulkanMemoryModel => v12.vulkan_memory_model,
                    Feature::VulkanMemoryModelDeviceScope => v12.vulkan_memory_model_device_scope,
                    Feature::BufferDeviceAddress => v12.buffer_device_address,
                    Feature::ShaderZeroInitializeWorkgroupMemory => {
                        v13.shader_zero_initialize_workgroup_memory
                    }
                    Feature::SubgroupSizeControl => v13.subgroup_size_control,
                    Feature::ComputeFullSubgroups => v13.compute_full_subgroups,
                    Feature::ShaderIntegerDotProduct => v13.shader_integer_dot_product,
                    Feature::ShaderMaximalReconvergence => reconv.shader_maximal_reconvergence,
                    Feature::ShaderSubgroupRotate => rotate.shader_subgroup_rotate,
                    Feature::ShaderSubgroupRotateClustered => {
                        rotate.shader_subgroup_rotate_clustered
                    }
                    Feature::CooperativeMatrix => coop.cooperative_matrix,
                    Feature::WorkgroupMemoryExplicitLayout => wg.workgroup_memory_explicit_layout,
                    Feature::WorkgroupMemoryExplicitLayout8BitAccess => {
                        wg.workgroup_memory_explicit_layout8_bit_access
                    }
                    Feature::WorkgroupMemoryExplicitLayout16BitAccess => {
                        wg.workgroup_memory_explicit_layout16_bit_access
                    }
                    Feature::ShaderStorageImageExtendedFormats => {
                        core.shader_storage_image_extended_formats
                    }
                    Feature::ShaderStorageImageReadWithoutFormat => {
                        core.shader_storage_image_read_without_format
                    }
                    Feature::ShaderStorageImageWriteWithoutFormat => {
                        core.shader_storage_image_write_without_format
                    }
                    Feature::ShaderUniformBufferArrayDynamicIndexing => {
                        core.shader_uniform_buffer_array_dynamic_indexing
                    }
                    Feature::ShaderSampledImageArrayDynamicIndexing => {
                        core.shader_sampled_image_array_dynamic_indexing
                    }
                    Feature::ShaderStorageBufferArrayDynamicIndexing => {
                        core.shader_storage_buffer_array_dynamic_indexing
                    }
                    Feature::ShaderStorageImageArrayDynamicIndexing => {
                        core.shader_storage_image_array_dynamic_indexing
                    }
                    Feature::ShaderUniformTexelBufferArrayDynamicIndexing => {
                        v12.shader_uniform_texel_buffer_array_dynamic_indexing
                    }
                    Feature::ShaderStorageTexelBufferArrayDynamicIndexing => {
                        v12.shader_storage_texel_buffer_array_dynamic_indexing
                    }
                    Feature::ShaderUniformBufferArrayNonUniformIndexing => {
                        v12.shader_uniform_buffer_array_non_uniform_indexing
                    }
                    Feature::ShaderSampledImageArrayNonUniformIndexing => {
                        v12.shader_sampled_image_array_non_uniform_indexing
                    }
                    Feature::ShaderStorageBufferArrayNonUniformIndexing => {
                        v12.shader_storage_buffer_array_non_uniform_indexing
                    }
                    Feature::ShaderStorageImageArrayNonUniformIndexing => {
                        v12.shader_storage_image_array_non_uniform_indexing
                    }
                    Feature::ShaderUniformTexelBufferArrayNonUniformIndexing => {
                        v12.shader_uniform_texel_buffer_array_non_uniform_indexing
                    }
                    Feature::ShaderStorageTexelBufferArrayNonUniformIndexing => {
                        v12.shader_storage_texel_buffer_array_non_uniform_indexing
                    }
                    Feature::DescriptorBindingPartiallyBound => {
                        v12.descriptor_binding_partially_bound
                    }
                    Feature::RuntimeDescriptorArray => v12.runtime_descriptor_array,
                })
            })
            .collect();
    }

    /// `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`, in driver order; entries of
    /// component types or scopes tangle does not know are left out.
    fn cooperative_matrix(
        &self,
        pd: vk::PhysicalDevice,
    ) -> Result<Vec<CooperativeMatrixProperties>, VulkanError> {
        let ext = ash::khr::cooperative_matrix::Instance::new(&self.entry, &self.instance);
        // SAFETY: the device lists VK_KHR_cooperative_matrix (the caller checked), so the
        // instance-level command exists; `pd` belongs to this instance.
        let list = unsafe { ext.get_physical_device_cooperative_matrix_properties(pd) }
            .map_err(api("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"))?;
        Ok(list
            .iter()
            .filter_map(|p| {
                Some(CooperativeMatrixProperties {
                    m: p.m_size,
                    n: p.n_size,
                    k: p.k_size,
                    a: component_type(p.a_type)?,
                    b: component_type(p.b_type)?,
                    c: component_type(p.c_type)?,
                    result: component_type(p.result_type)?,
                    saturating: p.saturating_accumulation == vk::TRUE,
                    scope: match p.scope {
                        vk::ScopeKHR::SUBGROUP => MatrixScope::Subgroup,
                        vk::ScopeKHR::WORKGROUP => MatrixScope::Workgroup,
                        _ => return None,
                    },
                })
            })
            .collect())
    }
}

/// `VkComponentTypeKHR` → tangle's component type.
fn component_type(t: vk::ComponentTypeKHR) -> Option<ComponentType> {
    use vk::ComponentTypeKHR as C;
    Some(match t {
        C::FLOAT16 => ComponentType::Float16,
        C::FLOAT32 => ComponentType::Float32,
        C::FLOAT64 => ComponentType::Float64,
        C::SINT8 => ComponentType::Sint(8),
        C::SINT16 => ComponentType::Sint(16),
        C::SINT32 => ComponentType::Sint(32),
        C::SINT64 => ComponentType::Sint(64),
        C::UINT8 => ComponentType::Uint(8),
        C::UINT16 => ComponentType::Uint(16),
        C::UINT32 => ComponentType::Uint(32),
        C::UINT64 => ComponentType::Uint(64),
        // VK_COMPONENT_TYPE_BFLOAT16_KHR (VK_KHR_shader_bfloat16), newer than ash's headers.
        t if t.as_raw() == 1_000_141_000 => ComponentType::BFloat16,
        _ => return None,
    })
}

/// A logical device with one compute queue, and the features and extensions it was created with.
pub struct Gpu {
    /// Held, never read: the instance must outlive the device (`Drop` destroys the device
    /// first, then this field drops).
    _instance: Arc<Instance>,
    /// The physical device (its format properties are read per dispatch).
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The features enabled at creation.
    pub features: BTreeSet<Feature>,
    /// The extensions enabled at creation.
    pub extensions: BTreeSet<String>,
    /// Set once a dispatch timed out or the device was lost: the device is then leaked, never
    /// destroyed, since the GPU may still use its objects.
    broken: bool,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if self.broken {
            // The GPU may still run this device's work, so the instance under it and the
            // loader library must stay too: dropping the Arc would destroy the instance and
            // unload the driver's code under a running dispatch (lavapipe then crashes the
            // process). One reference is leaked on purpose, so neither ever goes.
            std::mem::forget(Arc::clone(&self._instance));
            return;
        }
        // SAFETY: every dispatch waited for its fence and destroyed its objects, so the device
        // is idle and has no children; it is destroyed once, before the instance (Arc).
        unsafe { self.device.destroy_device(None) };
    }
}

impl Gpu {
    /// Creates a logical device on `pd` enabling exactly `features` and `extensions`.
    pub fn open(
        instance: Arc<Instance>,
        pd: vk::PhysicalDevice,
        features: &BTreeSet<Feature>,
        extensions: &BTreeSet<String>,
    ) -> Result<Gpu, VulkanError> {
        let i = &instance.instance;
        // SAFETY: `pd` belongs to this instance.
        let families = unsafe { i.get_physical_device_queue_family_properties(pd) };
        let family = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .and_then(|f| u32::try_from(f).ok())
            .ok_or_else(|| VulkanError::NoDevice("the device has no compute queue".into()))?;
        // SAFETY: as above.
        let memory = unsafe { i.get_physical_device_memory_properties(pd) };
        let on = |f: Feature| features.contains(&f);
        let core = vk::PhysicalDeviceFeatures::default()
            .shader_int64(on(Feature::ShaderInt64))
            .shader_int16(on(Feature::ShaderInt16))
            .shader_float64(on(Feature::ShaderFloat64))
            .robust_buffer_access(on(Feature::RobustBufferAccess))
            .shader_storage_image_extended_formats(on(Feature::ShaderStorageImageExtendedFormats))
            .shader_storage_image_read_without_format(on(
                Feature::ShaderStorageImageReadWithoutFormat,
            ))
            .shader_storage_image_write_without_format(on(
                Feature::ShaderStorageImageWriteWithoutFormat,
            ))
            .shader_uniform_buffer_array_dynamic_indexing(on(
                Feature::ShaderUniformBufferArrayDynamicIndexing,
            ))
            .shader_sampled_image_array_dynamic_indexing(on(
                Feature::ShaderSampledImageArrayDynamicIndexing,
            ))
            .shader_storage_buffer_array_dynamic_indexing(on(
                Feature::ShaderStorageBufferArrayDynamicIndexing,
            ))
            .shader_storage_image_array_dynamic_indexing(on(
                Feature::ShaderStorageImageArrayDynamicIndexing,
            ));
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(on(Feature::StorageBuffer16BitAccess))
            .uniform_and_storage_buffer16_bit_access(on(
                Feature::UniformAndStorageBuffer16BitAccess,
            ))
            .storage_push_constant16(on(Feature::StoragePushConstant16))
            .variable_pointers_storage_buffer(on(Feature::VariablePointersStorageBuffer))
            .variable_pointers(on(Feature::VariablePointers));
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_float16(on(Feature::ShaderFloat16))
            .shader_int8(on(Feature::ShaderInt8))
            .storage_buffer8_bit_access(on(Feature::StorageBuffer8BitAccess))
            .uniform_and_storage_buffer8_bit_access(on(Feature::UniformAndStorageBuffer8BitAccess))
            .storage_push_constant8(on(Feature::StoragePushConstant8))
            .shader_subgroup_extended_types(on(Feature::ShaderSubgroupExtendedTypes))
            .vulkan_memory_model(on(Feature::VulkanMemoryModel))
            .vulkan_memory_model_device_scope(on(Feature::VulkanMemoryModelDeviceScope))
            .buffer_device_address(on(Feature::BufferDeviceAddress))
            .shader_uniform_texel_buffer_array_dynamic_indexing(on(
                Feature::ShaderUniformTexelBufferArrayDynamicIndexing,
            ))
            .shader_storage_texel_buffer_array_dynamic_indexing(on(
                Feature::ShaderStorageTexelBufferArrayDynamicIndexing,
            ))
            .shader_uniform_buffer_array_non_uniform_indexing(on(
                Feature::ShaderUniformBufferArrayNonUniformIndexing,
            ))
            .shader_sampled_image_array_non_uniform_indexing(on(
                Feature::ShaderSampledImageArrayNonUniformIndexing,
            ))
            .shader_storage_buffer_array_non_uniform_indexing(on(
                Feature::ShaderStorageBufferArrayNonUniformIndexing,
            ))
            .shader_storage_image_array_non_uniform_indexing(on(
                Feature::ShaderStorageImageArrayNonUniformIndexing,
            ))
            .shader_uniform_texel_buffer_array_non_uniform_indexing(on(
                Feature::ShaderUniformTexelBufferArrayNonUniformIndexing,
            ))
            .shader_storage_texel_buffer_array_non_uniform_indexing(on(
                Feature::ShaderStorageTexelBufferArrayNonUniformIndexing,
            ))
            .descriptor_binding_partially_bound(on(Feature::DescriptorBindingPartiallyBound))
            .runtime_descriptor_array(on(Feature::RuntimeDescriptorArray));
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
            .shader_zero_initialize_workgroup_memory(on(
                Feature::ShaderZeroInitializeWorkgroupMemory,
            ))
            .subgroup_size_control(on(Feature::SubgroupSizeControl))
            .compute_full_subgroups(on(Feature::ComputeFullSubgroups))
            .shader_integer_dot_product(on(Feature::ShaderIntegerDotProduct));
        let mut rotate = vk::PhysicalDeviceShaderSubgroupRotateFeaturesKHR::default()
            .shader_subgroup_rotate(on(Feature::ShaderSubgroupRotate))
            .shader_subgroup_rotate_clustered(on(Feature::ShaderSubgroupRotateClustered));
        let mut reconv = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default()
            .shader_maximal_reconvergence(on(Feature::ShaderMaximalReconvergence));
        let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default()
            .cooperative_matrix(on(Feature::CooperativeMatrix));
        let mut wg = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default()
            .workgroup_memory_explicit_layout(on(Feature::WorkgroupMemoryExplicitLayout))
            .workgroup_memory_explicit_layout8_bit_access(on(
                Feature::WorkgroupMemoryExplicitLayout8BitAccess,
            ))
            .workgroup_memory_explicit_layout16_bit_access(on(
                Feature::WorkgroupMemoryExplicitLayout16BitAccess,
            ));
        let mut robust2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default()
            .robust_buffer_access2(on(Feature::RobustBufferAccess2))
            .robust_image_access2(on(Feature::RobustImageAccess2))
            .null_descriptor(on(Feature::NullDescriptor));
        let names: Vec<CString> = extensions
            .iter()
            .map(|e| CString::new(e.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| VulkanError::Invalid("an extension name holds a NUL".into()))?;
        let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let has = |e: &str| extensions.contains(e);
        let mut features2 = vk::PhysicalDeviceFeatures2::default()
            .features(core)
            .push_next(&mut v11)
            .push_next(&mut v12)
            .push_next(&mut v13);
        // VUID-VkDeviceCreateInfo-pNext-pNext: an extension's structure only with the extension.
        if has("VK_KHR_shader_subgroup_rotate") {
            features2 = features2.push_next(&mut rotate);
        }
        if has("VK_KHR_shader_maximal_reconvergence") {
            features2 = features2.push_next(&mut reconv);
        }
        if has("VK_KHR_cooperative_matrix") {
            features2 = features2.push_next(&mut coop);
        }
        if has("VK_KHR_workgroup_memory_explicit_layout") {
            features2 = features2.push_next(&mut wg);
        }
        if has("VK_EXT_robustness2") {
            features2 = features2.push_next(&mut robust2);
        }
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&name_ptrs)
            .push_next(&mut features2);
        // SAFETY: `info`, its feature chain, the queue infos and the extension name pointers
        // (into `names`) are live locals; the plan enabled only features the device reports.
        let device = unsafe { i.create_device(pd, &info, None) }.map_err(|r| match r {
            vk::Result::ERROR_FEATURE_NOT_PRESENT | vk::Result::ERROR_EXTENSION_NOT_PRESENT => {
                VulkanError::Unsupported(format!("vkCreateDevice: {r:?}"))
            }
            r => api("vkCreateDevice")(r),
        })?;
        // SAFETY: queue 0 of `family` was requested above.
        let queue = unsafe { device.get_device_queue(family, 0) };
        Ok(Gpu {
            _instance: Arc::clone(&instance),
            physical: pd,
            device,
            queue,
            family,
            memory,
            features: features.clone(),
            extensions: extensions.clone(),
            broken: false,
        })
    }

    /// Whether a dispatch broke the device (timeout or loss); it must not be used again.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Runs `job` as `plan` says; the bytes of every binding afterwards, in job order, and the
    /// time from submission to the fence.
    pub fn dispatch(
        &mut self,
        job: &ComputeJob,
        plan: &DispatchPlan,
        timeout: Duration,
    ) -> Result<(Vec<Vec<u8>>, Duration), VulkanError> {
        let breaks = |r: &Result<(Vec<Vec<u8>>, Duration), VulkanError>| {
            matches!(
                r,
                Err(VulkanError::Timeout(_)) | Err(VulkanError::DeviceLost(_))
            )
        };
        let result = {
            let mut objects = Objects::new(&self.device);
            let result = run(self, &mut objects, job, plan, timeout);
            objects.leak = breaks(&result);
            result
        };
        if breaks(&result) {
            self.broken = true;
            DEVICE_LEFT_RUNNING.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        result
    }
}

/// The objects of one dispatch, destroyed (children first) when dropped unless leaked.
struct Objects<'d> {
    device: &'d ash::Device,
    buffers: Vec<(vk::Buffer, vk::DeviceMemory, *mut u8, usize)>,
    images: Vec<(vk::Image, vk::DeviceMemory)>,
    image_views: Vec<vk::ImageView>,
    buffer_views: Vec<vk::BufferView>,
    samplers: Vec<vk::Sampler>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pipeline_layout: vk::PipelineLayout,
    descriptor_pool: vk::DescriptorPool,
    shader: vk::ShaderModule,
    pipeline: vk::Pipeline,
    command_pool: vk::CommandPool,
    fence: vk::Fence,
    leak: bool,
}

impl<'d> Objects<'d> {
    fn new(device: &'d ash::Device) -> Objects<'d> {
        Objects {
            device,
            buffers: Vec::new(),
            images: Vec::new(),
            image_views: Vec::new(),
            buffer_views: Vec::new(),
            samplers: Vec::new(),
            set_layouts: Vec::new(),
            pipeline_layout: vk::PipelineLayout::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            shader: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
            command_pool: vk::CommandPool::null(),
            fence: vk::Fence::null(),
            leak: false,
        }
    }
}

impl Drop for Objects<'_> {
    fn drop(&mut self) {
        if self.leak {
            return;
        }
        let d = self.device;
        // SAFETY: not leaked means the submitted work finished (its fence signalled) or was
        // never submitted, so no object is in use; each handle is destroyed once, children
        // (command buffers with their pool, sets with theirs) before what they reference, and
        // destroying a null handle is a no-op. Freeing memory unmaps it.
        unsafe {
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.command_pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.shader, None);
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_pipeline_layout(self.pipeline_layout, None);
            for layout in &self.set_layouts {
                d.destroy_descriptor_set_layout(*layout, None);
            }
            for view in &self.image_views {
                d.destroy_image_view(*view, None);
            }
            for view in &self.buffer_views {
                d.destroy_buffer_view(*view, None);
            }
            for sampler in &self.samplers {
                d.destroy_sampler(*sampler, None);
            }
            for (image, memory) in &self.images {
                d.destroy_image(*image, None);
                d.free_memory(*memory, None);
            }
            for (buffer, memory, _, _) in &self.buffers {
                d.destroy_buffer(*buffer, None);
                d.free_memory(*memory, None);
            }
        }
    }
}

/// The index of a memory type in `type_bits` that has all of `wanted`.
fn memory_type(
    memory: &vk::PhysicalDeviceMemoryProperties,
    type_bits: u32,
    wanted: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let count = (memory.memory_type_count as usize).min(memory.memory_types.len());
    memory
        .memory_types
        .get(..count)?
        .iter()
        .enumerate()
        .find_map(|(i, t)| {
            let i = u32::try_from(i).ok()?;
            let allowed = type_bits.checked_shr(i).is_some_and(|b| b & 1 == 1);
            (allowed && t.property_flags.contains(wanted)).then_some(i)
        })
}

/// The dispatch proper; every object goes into `o` as soon as it exists.
fn run(
    gpu: &Gpu,
    o: &mut Objects<'_>,
    job: &ComputeJob,
    plan: &DispatchPlan,
    timeout: Duration,
) -> Result<(Vec<Vec<u8>>, Duration), VulkanError> {
    let d = &gpu.device;
    // Buffers (host-visible, coherent, filled with the job's bytes), images with their
    // staging buffers, views and samplers.
    let bound = resources::create(gpu, o, job, plan)?;
    // Descriptor set layouts, one per set number.
    for set in &plan.sets {
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = set
            .iter()
            .map(|p| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(p.binding)
                    .descriptor_type(descriptor_type(p.kind))
                    .descriptor_count(p.elements.len() as u32)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        // SAFETY: `info` and `bindings` are live locals.
        let layout = unsafe { d.create_descriptor_set_layout(&info, None) }
            .map_err(api("vkCreateDescriptorSetLayout"))?;
        o.set_layouts.push(layout);
    }
    let ranges = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .offset(0)
        .size(plan.push_constant_size)];
    let ranges: &[vk::PushConstantRange] = if plan.push_constant_size > 0 {
        &ranges
    } else {
        &[]
    };
    let info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(&o.set_layouts)
        .push_constant_ranges(ranges);
    // SAFETY: the set layouts are alive (in `o`); `info` is a live local.
    o.pipeline_layout =
        unsafe { d.create_pipeline_layout(&info, None) }.map_err(api("vkCreatePipelineLayout"))?;
    // Descriptor pool and sets.
    let count = |kind| {
        plan.sets
            .iter()
            .flatten()
            .filter(|p| p.kind == kind)
            .map(|p| p.elements.len() as u32)
            .sum::<u32>()
    };
    let sizes: Vec<vk::DescriptorPoolSize> = resources::KINDS
        .into_iter()
        .filter(|k| count(*k) > 0)
        .map(|k| {
            vk::DescriptorPoolSize::default()
                .ty(descriptor_type(k))
                .descriptor_count(count(k))
        })
        .collect();
    let mut sets = Vec::new();
    if !plan.sets.is_empty() {
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(plan.sets.len() as u32)
            .pool_sizes(&sizes);
        // SAFETY: `info` and `sizes` are live locals.
        o.descriptor_pool = unsafe { d.create_descriptor_pool(&info, None) }
            .map_err(api("vkCreateDescriptorPool"))?;
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(o.descriptor_pool)
            .set_layouts(&o.set_layouts);
        // SAFETY: the pool holds one set per layout and enough descriptors of each type.
        sets = unsafe { d.allocate_descriptor_sets(&info) }
            .map_err(api("vkAllocateDescriptorSets"))?;
        resources::write_sets(d, plan, &sets, &bound);
    }
    // Shader module and pipeline.
    let info = vk::ShaderModuleCreateInfo::default().code(&job.spirv);
    // SAFETY: `job.spirv` is a live word slice; the driver reads the words.
    o.shader = unsafe { d.create_shader_module(&info, None) }.map_err(|r| {
        VulkanError::Invalid(format!("vkCreateShaderModule refused the module: {r:?}"))
    })?;
    let entry = CString::new(job.entry_point.as_str())
        .map_err(|_| VulkanError::Invalid("the entry point's name holds a NUL".into()))?;
    let map: Vec<vk::SpecializationMapEntry> = plan
        .spec_entries
        .iter()
        .map(|e| {
            vk::SpecializationMapEntry::default()
                .constant_id(e.id)
                .offset(e.offset)
                .size(e.size as usize)
        })
        .collect();
    let spec = vk::SpecializationInfo::default()
        .map_entries(&map)
        .data(&plan.spec_data);
    let mut flags = vk::PipelineShaderStageCreateFlags::empty();
    if plan.full_subgroups {
        flags |= vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS;
    }
    if plan.varying_subgroup_size {
        flags |= vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE;
    }
    let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
        .required_subgroup_size(plan.required_subgroup_size.unwrap_or(0));
    let mut stage = vk::PipelineShaderStageCreateInfo::default()
        .flags(flags)
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(o.shader)
        .name(&entry)
        .specialization_info(&spec);
    if plan.required_subgroup_size.is_some() {
        stage = stage.push_next(&mut required);
    }
    let infos = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(o.pipeline_layout)];
    // SAFETY: the stage, its specialization data, entry name and subgroup-size chain are live
    // locals; the module and layout are alive in `o`; the plan checked the flags' features.
    let pipelines = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &infos, None) };
    o.pipeline = match pipelines {
        Ok(p) => p.first().copied().unwrap_or_default(),
        Err((p, r)) => {
            o.pipeline = p.first().copied().unwrap_or_default();
            return Err(match r {
                vk::Result::ERROR_DEVICE_LOST => {
                    VulkanError::DeviceLost("vkCreateComputePipelines".into())
                }
                r => VulkanError::Invalid(format!(
                    "vkCreateComputePipelines refused the pipeline: {r:?}"
                )),
            });
        }
    };
    // Command buffer.
    let info = vk::CommandPoolCreateInfo::default().queue_family_index(gpu.family);
    // SAFETY: `info` is a live local.
    o.command_pool =
        unsafe { d.create_command_pool(&info, None) }.map_err(api("vkCreateCommandPool"))?;
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(o.command_pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: the pool is alive; the buffer is freed with it.
    let cmd = unsafe { d.allocate_command_buffers(&info) }
        .map_err(api("vkAllocateCommandBuffers"))?
        .first()
        .copied()
        .ok_or_else(|| VulkanError::Invalid("no command buffer".into()))?;
    let begin =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    let mut push = job.push_constants.clone();
    push.resize(plan.push_constant_size as usize, 0);
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::TRANSFER_READ)];
    let [x, y, z] = job.groups;
    // SAFETY: recording into a fresh primary command buffer of a live pool; the pipeline,
    // layout and sets are alive and compatible (one layout made them); the push range matches
    // the layout's.
    unsafe {
        d.begin_command_buffer(cmd, &begin)
            .map_err(api("vkBeginCommandBuffer"))?;
        d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, o.pipeline);
        if !sets.is_empty() {
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                o.pipeline_layout,
                0,
                &sets,
                &[],
            );
        }
        if !push.is_empty() {
            d.cmd_push_constants(
                cmd,
                o.pipeline_layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &push,
            );
        }
        resources::record_uploads(d, cmd, o, &bound);
        d.cmd_dispatch(cmd, x, y, z);
        // The shader's writes made visible to the host reads below, and to the copies of the
        // images into their staging buffers.
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::HOST | vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        );
        resources::record_downloads(d, cmd, o, &bound);
        d.end_command_buffer(cmd)
            .map_err(api("vkEndCommandBuffer"))?;
    }
    // SAFETY: a fresh, unsignalled fence.
    o.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
        .map_err(api("vkCreateFence"))?;
    let cmds = [cmd];
    let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
    let submitted = std::time::Instant::now();
    // SAFETY: the command buffer is fully recorded and submitted once, on the device's queue.
    unsafe { d.queue_submit(gpu.queue, &submit, o.fence) }.map_err(api("vkQueueSubmit"))?;
    let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: the fence belongs to `d`.
    match unsafe { d.wait_for_fences(&[o.fence], true, nanos) } {
        Ok(()) => {}
        Err(vk::Result::TIMEOUT) => return Err(VulkanError::Timeout(timeout.as_secs_f64())),
        Err(r) => return Err(api("vkWaitForFences")(r)),
    }
    let elapsed = submitted.elapsed();
    // SAFETY (in `read_back`): the fence signalled after the barriers, so the shader's writes
    // and the images' copies are visible in the coherent mappings.
    let bytes = resources::read_back(job, plan, o, &bound);
    Ok((bytes, elapsed))
}

/// The descriptor type of a binding kind.
fn descriptor_type(kind: BindingKind) -> vk::DescriptorType {
    match kind {
        BindingKind::Storage => vk::DescriptorType::STORAGE_BUFFER,
        BindingKind::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
        BindingKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
        BindingKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
        BindingKind::UniformTexelBuffer => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        BindingKind::StorageTexelBuffer => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        BindingKind::CombinedImageSampler => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        BindingKind::Sampler => vk::DescriptorType::SAMPLER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_type_takes_the_first_allowed_match() {
        let mut memory = vk::PhysicalDeviceMemoryProperties {
            memory_type_count: 3,
            ..Default::default()
        };
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        memory.memory_types[0].property_flags = vk::MemoryPropertyFlags::DEVICE_LOCAL;
        memory.memory_types[1].property_flags = host;
        memory.memory_types[2].property_flags = host | vk::MemoryPropertyFlags::HOST_CACHED;
        assert_eq!(memory_type(&memory, 0b111, host), Some(1));
        assert_eq!(memory_type(&memory, 0b101, host), Some(2));
        assert_eq!(memory_type(&memory, 0b001, host), None);
        // Types past memory_type_count are not looked at.
        memory.memory_type_count = 1;
        assert_eq!(memory_type(&memory, 0b111, host), None);
    }

    #[test]
    fn component_types_map_or_are_left_out() {
        assert_eq!(
            component_type(vk::ComponentTypeKHR::SINT8),
            Some(ComponentType::Sint(8))
        );
        assert_eq!(
            component_type(vk::ComponentTypeKHR::from_raw(1_000_141_000)),
            Some(ComponentType::BFloat16)
        );
        assert_eq!(component_type(vk::ComponentTypeKHR::from_raw(12345)), None);
    }
}
