//! What the driver's one physical device claims: properties, limits, features, extensions,
//! memory types, its queue family and cooperative-matrix list, all from a tangle [`Profile`]
//! (`TANGLE_PROFILE`, [`crate::config`]) and from what the executor runs.
//!
//! The rule (issue 29, "honestly reported"): a feature or extension is claimed only when the
//! executor executes it exactly and the driver implements its entry points; graphics features
//! are false. Every `…2` struct is built here as a value; [`crate::ffi`] only copies it into the
//! program's `pNext` chain.

use ash::vk;
use std::ffi::CStr;
use tangle_exec::profile::{subgroup_ops, ComponentType, MatrixScope};
use tangle_exec::Profile;

/// tangle's own `vendorID`: above 0xFFFF, so no PCI vendor's, and none of the Khronos-assigned
/// `VkVendorId` values (0x10001..=0x10007).
pub const VENDOR_ID: u32 = 0x1_7A6E;
/// tangle's `deviceID`.
pub const DEVICE_ID: u32 = 0x0001;
/// tangle's `driverID`: no registered `VkDriverId` is tangle's, so a value none of them uses
/// (programs compare it with known drivers to pick workarounds; an unknown one takes the
/// generic path).
pub const DRIVER_ID: i32 = 0x7A6E;
/// The Vulkan version the driver reports: 1.3 at the header version of `ash`'s registry.
pub const API_VERSION: u32 = vk::make_api_version(0, 1, 3, vk::HEADER_VERSION);
/// `maxPushConstantsSize` (lavapipe's value; ggml's fused `multi_add` needs 212).
pub const MAX_PUSH_CONSTANTS: u32 = 256;
/// `minStorageBufferOffsetAlignment` and `minUniformBufferOffsetAlignment`, and the alignment
/// of every buffer's memory requirements.
pub const BUFFER_ALIGNMENT: u64 = 16;
/// `maxMemoryAllocationSize` and `maxBufferSize`: the executor's default memory limit per
/// dispatch ([`tangle_exec::device::DEFAULT_MEMORY_LIMIT`]).
pub const MAX_ALLOCATION: u64 = tangle_exec::device::DEFAULT_MEMORY_LIMIT;
/// `maxStorageBufferRange`: the largest window a descriptor may give a shader.
pub const MAX_STORAGE_RANGE: u32 = 1 << 31;
/// Descriptor sets a pipeline layout may hold (`maxBoundDescriptorSets`).
pub const MAX_SETS: u32 = 8;

/// The physical device's claims, built once per instance.
#[derive(Debug, Clone)]
pub struct Caps {
    /// The profile the device follows.
    pub profile: Profile,
    /// The identity reported: the profile's (`TANGLE_IDENTITY=profile`), else tangle's own.
    pub identity: Option<tangle_exec::profile::Identity>,
}

/// One device extension the driver lists: its name and spec version.
pub type Extension = (&'static CStr, u32);

/// Device extensions listed whatever the profile: each is executed by tangle-exec and needs no
/// entry point the driver lacks. Several are core in 1.3 and listed by name all the same,
/// because programs (ggml) enable them by name.
const EXTENSIONS: &[Extension] = &[
    (vk::EXT_ROBUSTNESS2_NAME, vk::EXT_ROBUSTNESS2_SPEC_VERSION),
    (
        vk::EXT_PIPELINE_ROBUSTNESS_NAME,
        vk::EXT_PIPELINE_ROBUSTNESS_SPEC_VERSION,
    ),
    (vk::KHR_DEVICE_GROUP_NAME, vk::KHR_DEVICE_GROUP_SPEC_VERSION),
    (
        vk::KHR_16BIT_STORAGE_NAME,
        vk::KHR_16BIT_STORAGE_SPEC_VERSION,
    ),
    (vk::KHR_8BIT_STORAGE_NAME, vk::KHR_8BIT_STORAGE_SPEC_VERSION),
    (
        vk::KHR_SHADER_FLOAT16_INT8_NAME,
        vk::KHR_SHADER_FLOAT16_INT8_SPEC_VERSION,
    ),
    (
        vk::KHR_STORAGE_BUFFER_STORAGE_CLASS_NAME,
        vk::KHR_STORAGE_BUFFER_STORAGE_CLASS_SPEC_VERSION,
    ),
    (
        vk::KHR_VARIABLE_POINTERS_NAME,
        vk::KHR_VARIABLE_POINTERS_SPEC_VERSION,
    ),
    (
        vk::EXT_SUBGROUP_SIZE_CONTROL_NAME,
        vk::EXT_SUBGROUP_SIZE_CONTROL_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_SUBGROUP_EXTENDED_TYPES_NAME,
        vk::KHR_SHADER_SUBGROUP_EXTENDED_TYPES_SPEC_VERSION,
    ),
    (
        vk::KHR_VULKAN_MEMORY_MODEL_NAME,
        vk::KHR_VULKAN_MEMORY_MODEL_SPEC_VERSION,
    ),
    (vk::KHR_SPIRV_1_4_NAME, vk::KHR_SPIRV_1_4_SPEC_VERSION),
    (
        vk::KHR_SHADER_FLOAT_CONTROLS_NAME,
        vk::KHR_SHADER_FLOAT_CONTROLS_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_NON_SEMANTIC_INFO_NAME,
        vk::KHR_SHADER_NON_SEMANTIC_INFO_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_TERMINATE_INVOCATION_NAME,
        vk::KHR_SHADER_TERMINATE_INVOCATION_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_INTEGER_DOT_PRODUCT_NAME,
        vk::KHR_SHADER_INTEGER_DOT_PRODUCT_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_MAXIMAL_RECONVERGENCE_NAME,
        vk::KHR_SHADER_MAXIMAL_RECONVERGENCE_SPEC_VERSION,
    ),
    (
        vk::KHR_ZERO_INITIALIZE_WORKGROUP_MEMORY_NAME,
        vk::KHR_ZERO_INITIALIZE_WORKGROUP_MEMORY_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_NAME,
        vk::KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_SPEC_VERSION,
    ),
    (
        vk::KHR_SHADER_ATOMIC_INT64_NAME,
        vk::KHR_SHADER_ATOMIC_INT64_SPEC_VERSION,
    ),
    (
        vk::KHR_TIMELINE_SEMAPHORE_NAME,
        vk::KHR_TIMELINE_SEMAPHORE_SPEC_VERSION,
    ),
    (
        vk::KHR_SYNCHRONIZATION2_NAME,
        vk::KHR_SYNCHRONIZATION2_SPEC_VERSION,
    ),
    // Core in 1.2; listed for programs and Amber scripts that enable it by name. Its features
    // are the Vulkan 1.2 struct's (`vulkan12`), its properties `descriptor_indexing`.
    (
        vk::EXT_DESCRIPTOR_INDEXING_NAME,
        vk::EXT_DESCRIPTOR_INDEXING_SPEC_VERSION,
    ),
];

fn b(x: bool) -> vk::Bool32 {
    vk::Bool32::from(x)
}

/// Copies `text` into a fixed C string field, cut to fit with its NUL.
fn c_chars<const N: usize>(text: &str) -> [std::ffi::c_char; N] {
    let mut out = [0; N];
    for (o, byte) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *o = byte as std::ffi::c_char;
    }
    out
}

/// A UUID made of `tag` and the crate version, so caches keyed on it change with the driver.
fn uuid(tag: &str) -> [u8; vk::UUID_SIZE] {
    let mut out = [0u8; vk::UUID_SIZE];
    let text = format!("tangle {} {tag}", env!("CARGO_PKG_VERSION"));
    for (i, byte) in text.bytes().enumerate() {
        out[i % vk::UUID_SIZE] ^= byte;
    }
    out
}

/// The `VkComponentTypeKHR` of a profile's component type; `None` for bfloat16, which needs
/// VK_KHR_shader_bfloat16 (not in `ash` 0.38's registry, so not listed).
fn component(t: ComponentType) -> Option<vk::ComponentTypeKHR> {
    Some(match t {
        ComponentType::Float16 => vk::ComponentTypeKHR::FLOAT16,
        ComponentType::Float32 => vk::ComponentTypeKHR::FLOAT32,
        ComponentType::Float64 => vk::ComponentTypeKHR::FLOAT64,
        ComponentType::BFloat16 => return None,
        ComponentType::Sint(8) => vk::ComponentTypeKHR::SINT8,
        ComponentType::Sint(16) => vk::ComponentTypeKHR::SINT16,
        ComponentType::Sint(32) => vk::ComponentTypeKHR::SINT32,
        ComponentType::Sint(64) => vk::ComponentTypeKHR::SINT64,
        ComponentType::Uint(8) => vk::ComponentTypeKHR::UINT8,
        ComponentType::Uint(16) => vk::ComponentTypeKHR::UINT16,
        ComponentType::Uint(32) => vk::ComponentTypeKHR::UINT32,
        ComponentType::Uint(64) => vk::ComponentTypeKHR::UINT64,
        _ => return None,
    })
}

impl Caps {
    /// The claims of a device following `profile`.
    pub fn new(profile: Profile) -> Self {
        Caps {
            profile,
            identity: None,
        }
    }

    /// These claims with the profile's identity instead of tangle's (`TANGLE_IDENTITY=profile`);
    /// the error names a profile that carries none.
    pub fn with_profile_identity(self) -> Result<Caps, String> {
        let identity = self.profile.identity.clone().ok_or_else(|| {
            format!(
                "the '{}' profile carries no [identity] (vendor and device ID) to report",
                self.profile.name
            )
        })?;
        Ok(Caps {
            identity: Some(identity),
            ..self
        })
    }

    /// The `deviceName`: `tangle (PROFILE profile)`, or the profile's device's.
    pub fn device_name(&self) -> String {
        match &self.identity {
            Some(i) => i.device_name.clone(),
            None => format!("tangle ({} profile)", self.profile.name),
        }
    }

    /// Whether the profile's subgroups rotate (VK_KHR_shader_subgroup_rotate).
    fn rotate(&self) -> bool {
        self.profile.subgroup_operations & subgroup_ops::ROTATE != 0
    }

    /// The device extensions, in the order listed.
    pub fn extensions(&self) -> Vec<Extension> {
        let mut out = EXTENSIONS.to_vec();
        if !self.coopmat().is_empty() {
            out.push((
                vk::KHR_COOPERATIVE_MATRIX_NAME,
                vk::KHR_COOPERATIVE_MATRIX_SPEC_VERSION,
            ));
        }
        if self.rotate() {
            out.push((
                vk::KHR_SHADER_SUBGROUP_ROTATE_NAME,
                vk::KHR_SHADER_SUBGROUP_ROTATE_SPEC_VERSION,
            ));
        }
        if self.profile.workgroup_memory_explicit_layout {
            out.push((
                vk::KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_NAME,
                vk::KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_SPEC_VERSION,
            ));
        }
        out
    }

    /// `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`: the profile's list in its order,
    /// without the bfloat16 entries ([`component`]).
    pub fn coopmat(&self) -> Vec<vk::CooperativeMatrixPropertiesKHR<'static>> {
        self.profile
            .cooperative_matrix
            .iter()
            .filter_map(|e| {
                Some(vk::CooperativeMatrixPropertiesKHR {
                    m_size: e.m,
                    n_size: e.n,
                    k_size: e.k,
                    a_type: component(e.a)?,
                    b_type: component(e.b)?,
                    c_type: component(e.c)?,
                    result_type: component(e.result)?,
                    saturating_accumulation: b(e.saturating),
                    scope: match e.scope {
                        MatrixScope::Subgroup => vk::ScopeKHR::SUBGROUP,
                        MatrixScope::Workgroup => vk::ScopeKHR::WORKGROUP,
                    },
                    ..Default::default()
                })
            })
            .collect()
    }

    /// `VkPhysicalDeviceLimits`: the compute limits from the profile, the rest what the driver
    /// accepts; graphics limits are zero.
    pub fn limits(&self) -> vk::PhysicalDeviceLimits {
        let p = &self.profile;
        vk::PhysicalDeviceLimits {
            max_memory_allocation_count: 1 << 20,
            max_bound_descriptor_sets: MAX_SETS,
            max_per_stage_descriptor_storage_buffers: 1 << 20,
            max_per_stage_descriptor_uniform_buffers: 1 << 20,
            max_per_stage_resources: 1 << 20,
            max_descriptor_set_storage_buffers: 1 << 20,
            max_descriptor_set_uniform_buffers: 1 << 20,
            max_descriptor_set_storage_buffers_dynamic: 64,
            max_descriptor_set_uniform_buffers_dynamic: 64,
            max_uniform_buffer_range: 65536,
            max_storage_buffer_range: MAX_STORAGE_RANGE,
            max_push_constants_size: MAX_PUSH_CONSTANTS,
            max_compute_shared_memory_size: p.max_shared_memory,
            max_compute_work_group_count: p.max_workgroup_count,
            max_compute_work_group_invocations: p.max_workgroup_invocations,
            max_compute_work_group_size: p.max_workgroup_size,
            buffer_image_granularity: 1,
            min_memory_map_alignment: 64,
            min_storage_buffer_offset_alignment: BUFFER_ALIGNMENT,
            min_uniform_buffer_offset_alignment: BUFFER_ALIGNMENT,
            min_texel_buffer_offset_alignment: BUFFER_ALIGNMENT,
            optimal_buffer_copy_offset_alignment: 1,
            optimal_buffer_copy_row_pitch_alignment: 1,
            non_coherent_atom_size: 1,
            // Timestamps count nanoseconds of the host's monotonic clock (crate::query).
            timestamp_period: 1.0,
            timestamp_compute_and_graphics: vk::TRUE,
            // Images as crate::image represents them: one level, one layer, one sample.
            max_image_dimension1_d: crate::image::MAX_DIMENSION,
            max_image_dimension2_d: crate::image::MAX_DIMENSION,
            max_image_dimension3_d: crate::image::MAX_DIMENSION_3D,
            max_image_array_layers: 1,
            max_texel_buffer_elements: crate::image::MAX_TEXEL_ELEMENTS,
            max_sampler_allocation_count: 1 << 20,
            max_per_stage_descriptor_samplers: 1 << 20,
            max_per_stage_descriptor_sampled_images: 1 << 20,
            max_per_stage_descriptor_storage_images: 1 << 20,
            max_descriptor_set_samplers: 1 << 20,
            max_descriptor_set_sampled_images: 1 << 20,
            max_descriptor_set_storage_images: 1 << 20,
            max_sampler_anisotropy: 1.0,
            // Exact weights and coordinates, rounded once (tangle_exec::semantics::sampler).
            sub_texel_precision_bits: 8,
            mipmap_precision_bits: 8,
            sampled_image_color_sample_counts: vk::SampleCountFlags::TYPE_1,
            sampled_image_integer_sample_counts: vk::SampleCountFlags::TYPE_1,
            storage_image_sample_counts: vk::SampleCountFlags::TYPE_1,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceProperties`.
    pub fn properties(&self) -> vk::PhysicalDeviceProperties {
        let version = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|n| n.parse::<u32>().unwrap_or(0))
            .collect::<Vec<_>>();
        let at = |i: usize| version.get(i).copied().unwrap_or(0);
        vk::PhysicalDeviceProperties {
            api_version: API_VERSION,
            driver_version: vk::make_api_version(0, at(0), at(1), at(2)),
            vendor_id: self.identity.as_ref().map_or(VENDOR_ID, |i| i.vendor_id),
            device_id: self.identity.as_ref().map_or(DEVICE_ID, |i| i.device_id),
            device_type: vk::PhysicalDeviceType::CPU,
            device_name: c_chars(&self.device_name()),
            pipeline_cache_uuid: uuid("pipeline cache"),
            limits: self.limits(),
            sparse_properties: Default::default(),
        }
    }

    /// `VkPhysicalDeviceSubgroupProperties` values: (size, stages, operations).
    fn subgroups(&self) -> (u32, vk::ShaderStageFlags, vk::SubgroupFeatureFlags) {
        (
            self.profile.subgroup_size,
            vk::ShaderStageFlags::COMPUTE,
            // tangle's bit set is Vulkan's VkSubgroupFeatureFlagBits.
            vk::SubgroupFeatureFlags::from_raw(self.profile.subgroup_operations),
        )
    }

    /// `VkPhysicalDeviceSubgroupProperties`.
    pub fn subgroup(&self) -> vk::PhysicalDeviceSubgroupProperties<'static> {
        let (size, stages, ops) = self.subgroups();
        vk::PhysicalDeviceSubgroupProperties {
            subgroup_size: size,
            supported_stages: stages,
            supported_operations: ops,
            quad_operations_in_all_stages: vk::FALSE,
            ..Default::default()
        }
    }

    /// The range of subgroup sizes a pipeline may require: every power of two the executor runs
    /// (1 to 128) for the `default` profile, tangle's own device; for a profile describing
    /// another device, that device's range where its file gives one (`[device]
    /// subgroup_size_range`: Intel Xe2 16 to 32, AMD RDNA 32 to 64), else its one size.
    pub fn subgroup_size_range(&self) -> (u32, u32) {
        let p = &self.profile;
        match (p.name.as_str(), p.subgroup_size_range) {
            ("default", _) => (1, 128),
            // `TANGLE_SUBGROUP_SIZE` outside the device's range: that size alone.
            (_, Some([min, max])) if (min..=max).contains(&p.subgroup_size) => (min, max),
            _ => (p.subgroup_size, p.subgroup_size),
        }
    }

    /// `VkPhysicalDeviceSubgroupSizeControlProperties`.
    pub fn subgroup_size_control(
        &self,
    ) -> vk::PhysicalDeviceSubgroupSizeControlProperties<'static> {
        let p = &self.profile;
        let (min, max) = self.subgroup_size_range();
        vk::PhysicalDeviceSubgroupSizeControlProperties {
            min_subgroup_size: min,
            max_subgroup_size: max,
            max_compute_workgroup_subgroups: p.max_workgroup_invocations / min.max(1),
            required_subgroup_size_stages: vk::ShaderStageFlags::COMPUTE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceDriverProperties`.
    pub fn driver(&self) -> vk::PhysicalDeviceDriverProperties<'static> {
        vk::PhysicalDeviceDriverProperties {
            driver_id: vk::DriverId::from_raw(
                self.identity
                    .as_ref()
                    .map_or(DRIVER_ID, |i| i.driver_id as i32),
            ),
            driver_name: c_chars("tangle"),
            driver_info: c_chars(&format!(
                "tangle {}: the exact SPIR-V executor with its sanitizer, {} profile",
                env!("CARGO_PKG_VERSION"),
                self.profile.name
            )),
            conformance_version: vk::ConformanceVersion::default(),
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceIDProperties`.
    pub fn id(&self) -> vk::PhysicalDeviceIDProperties<'static> {
        vk::PhysicalDeviceIDProperties {
            device_uuid: uuid(&self.profile.name),
            driver_uuid: uuid("driver"),
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceFloatControlsProperties`: the executor is exact IEEE: denormals kept,
    /// round to nearest even, signed zeros, infinities and NaNs preserved, at every width.
    pub fn float_controls(&self) -> vk::PhysicalDeviceFloatControlsProperties<'static> {
        let t = vk::TRUE;
        vk::PhysicalDeviceFloatControlsProperties {
            denorm_behavior_independence: vk::ShaderFloatControlsIndependence::ALL,
            rounding_mode_independence: vk::ShaderFloatControlsIndependence::ALL,
            shader_signed_zero_inf_nan_preserve_float16: t,
            shader_signed_zero_inf_nan_preserve_float32: t,
            shader_signed_zero_inf_nan_preserve_float64: t,
            shader_denorm_preserve_float16: t,
            shader_denorm_preserve_float32: t,
            shader_denorm_preserve_float64: t,
            shader_rounding_mode_rte_float16: t,
            shader_rounding_mode_rte_float32: t,
            shader_rounding_mode_rte_float64: t,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceShaderIntegerDotProductProperties`. "Accelerated" is a performance
    /// hint; the packed 4x8-bit forms are claimed as the GPUs of the named profiles claim them
    /// (ggml takes its integer-dot paths only then), and nothing for `lavapipe`, as lavapipe.
    pub fn integer_dot(&self) -> vk::PhysicalDeviceShaderIntegerDotProductProperties<'static> {
        let packed = b(self.profile.name != "lavapipe");
        vk::PhysicalDeviceShaderIntegerDotProductProperties {
            integer_dot_product4x8_bit_packed_unsigned_accelerated: packed,
            integer_dot_product4x8_bit_packed_signed_accelerated: packed,
            integer_dot_product4x8_bit_packed_mixed_signedness_accelerated: packed,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceTimelineSemaphoreProperties`: any difference of values.
    pub fn timeline(&self) -> vk::PhysicalDeviceTimelineSemaphoreProperties<'static> {
        vk::PhysicalDeviceTimelineSemaphoreProperties {
            max_timeline_semaphore_value_difference: u64::MAX,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceMaintenance3Properties`.
    pub fn maintenance3(&self) -> vk::PhysicalDeviceMaintenance3Properties<'static> {
        vk::PhysicalDeviceMaintenance3Properties {
            max_per_set_descriptors: 1 << 20,
            max_memory_allocation_size: MAX_ALLOCATION,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceCooperativeMatrixPropertiesKHR`.
    pub fn coopmat_properties(&self) -> vk::PhysicalDeviceCooperativeMatrixPropertiesKHR<'static> {
        vk::PhysicalDeviceCooperativeMatrixPropertiesKHR {
            cooperative_matrix_supported_stages: vk::ShaderStageFlags::COMPUTE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan11Properties`, from the structs above.
    pub fn vulkan11_properties(&self) -> vk::PhysicalDeviceVulkan11Properties<'static> {
        let (size, stages, ops) = self.subgroups();
        let id = self.id();
        let m3 = self.maintenance3();
        vk::PhysicalDeviceVulkan11Properties {
            device_uuid: id.device_uuid,
            driver_uuid: id.driver_uuid,
            subgroup_size: size,
            subgroup_supported_stages: stages,
            subgroup_supported_operations: ops,
            point_clipping_behavior: vk::PointClippingBehavior::ALL_CLIP_PLANES,
            max_per_set_descriptors: m3.max_per_set_descriptors,
            max_memory_allocation_size: m3.max_memory_allocation_size,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan12Properties`, from the structs above.
    pub fn vulkan12_properties(&self) -> vk::PhysicalDeviceVulkan12Properties<'static> {
        let d = self.driver();
        let f = self.float_controls();
        let i = self.descriptor_indexing();
        vk::PhysicalDeviceVulkan12Properties {
            driver_id: d.driver_id,
            driver_name: d.driver_name,
            driver_info: d.driver_info,
            conformance_version: d.conformance_version,
            denorm_behavior_independence: f.denorm_behavior_independence,
            rounding_mode_independence: f.rounding_mode_independence,
            shader_signed_zero_inf_nan_preserve_float16: f
                .shader_signed_zero_inf_nan_preserve_float16,
            shader_signed_zero_inf_nan_preserve_float32: f
                .shader_signed_zero_inf_nan_preserve_float32,
            shader_signed_zero_inf_nan_preserve_float64: f
                .shader_signed_zero_inf_nan_preserve_float64,
            shader_denorm_preserve_float16: f.shader_denorm_preserve_float16,
            shader_denorm_preserve_float32: f.shader_denorm_preserve_float32,
            shader_denorm_preserve_float64: f.shader_denorm_preserve_float64,
            shader_rounding_mode_rte_float16: f.shader_rounding_mode_rte_float16,
            shader_rounding_mode_rte_float32: f.shader_rounding_mode_rte_float32,
            shader_rounding_mode_rte_float64: f.shader_rounding_mode_rte_float64,
            max_timeline_semaphore_value_difference: u64::MAX,
            max_update_after_bind_descriptors_in_all_pools: i
                .max_update_after_bind_descriptors_in_all_pools,
            robust_buffer_access_update_after_bind: i.robust_buffer_access_update_after_bind,
            max_per_stage_descriptor_update_after_bind_samplers: i
                .max_per_stage_descriptor_update_after_bind_samplers,
            max_per_stage_descriptor_update_after_bind_uniform_buffers: i
                .max_per_stage_descriptor_update_after_bind_uniform_buffers,
            max_per_stage_descriptor_update_after_bind_storage_buffers: i
                .max_per_stage_descriptor_update_after_bind_storage_buffers,
            max_per_stage_descriptor_update_after_bind_sampled_images: i
                .max_per_stage_descriptor_update_after_bind_sampled_images,
            max_per_stage_descriptor_update_after_bind_storage_images: i
                .max_per_stage_descriptor_update_after_bind_storage_images,
            max_per_stage_update_after_bind_resources: i.max_per_stage_update_after_bind_resources,
            max_descriptor_set_update_after_bind_samplers: i
                .max_descriptor_set_update_after_bind_samplers,
            max_descriptor_set_update_after_bind_uniform_buffers: i
                .max_descriptor_set_update_after_bind_uniform_buffers,
            max_descriptor_set_update_after_bind_uniform_buffers_dynamic: i
                .max_descriptor_set_update_after_bind_uniform_buffers_dynamic,
            max_descriptor_set_update_after_bind_storage_buffers: i
                .max_descriptor_set_update_after_bind_storage_buffers,
            max_descriptor_set_update_after_bind_storage_buffers_dynamic: i
                .max_descriptor_set_update_after_bind_storage_buffers_dynamic,
            max_descriptor_set_update_after_bind_sampled_images: i
                .max_descriptor_set_update_after_bind_sampled_images,
            max_descriptor_set_update_after_bind_storage_images: i
                .max_descriptor_set_update_after_bind_storage_images,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceDescriptorIndexingProperties`: an update-after-bind set has the same
    /// limits as any other (descriptors are read when a dispatch runs, whatever the flags); no
    /// non-uniform indexing is claimed native.
    pub fn descriptor_indexing(&self) -> vk::PhysicalDeviceDescriptorIndexingProperties<'static> {
        let l = self.limits();
        vk::PhysicalDeviceDescriptorIndexingProperties {
            max_update_after_bind_descriptors_in_all_pools: 1 << 20,
            robust_buffer_access_update_after_bind: vk::TRUE,
            max_per_stage_descriptor_update_after_bind_samplers: l
                .max_per_stage_descriptor_samplers,
            max_per_stage_descriptor_update_after_bind_uniform_buffers: l
                .max_per_stage_descriptor_uniform_buffers,
            max_per_stage_descriptor_update_after_bind_storage_buffers: l
                .max_per_stage_descriptor_storage_buffers,
            max_per_stage_descriptor_update_after_bind_sampled_images: l
                .max_per_stage_descriptor_sampled_images,
            max_per_stage_descriptor_update_after_bind_storage_images: l
                .max_per_stage_descriptor_storage_images,
            max_per_stage_update_after_bind_resources: l.max_per_stage_resources,
            max_descriptor_set_update_after_bind_samplers: l.max_descriptor_set_samplers,
            max_descriptor_set_update_after_bind_uniform_buffers: l
                .max_descriptor_set_uniform_buffers,
            max_descriptor_set_update_after_bind_uniform_buffers_dynamic: l
                .max_descriptor_set_uniform_buffers_dynamic,
            max_descriptor_set_update_after_bind_storage_buffers: l
                .max_descriptor_set_storage_buffers,
            max_descriptor_set_update_after_bind_storage_buffers_dynamic: l
                .max_descriptor_set_storage_buffers_dynamic,
            max_descriptor_set_update_after_bind_sampled_images: l
                .max_descriptor_set_sampled_images,
            max_descriptor_set_update_after_bind_storage_images: l
                .max_descriptor_set_storage_images,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan13Properties`, from the structs above.
    pub fn vulkan13_properties(&self) -> vk::PhysicalDeviceVulkan13Properties<'static> {
        let s = self.subgroup_size_control();
        let d = self.integer_dot();
        vk::PhysicalDeviceVulkan13Properties {
            min_subgroup_size: s.min_subgroup_size,
            max_subgroup_size: s.max_subgroup_size,
            max_compute_workgroup_subgroups: s.max_compute_workgroup_subgroups,
            required_subgroup_size_stages: s.required_subgroup_size_stages,
            integer_dot_product4x8_bit_packed_unsigned_accelerated: d
                .integer_dot_product4x8_bit_packed_unsigned_accelerated,
            integer_dot_product4x8_bit_packed_signed_accelerated: d
                .integer_dot_product4x8_bit_packed_signed_accelerated,
            integer_dot_product4x8_bit_packed_mixed_signedness_accelerated: d
                .integer_dot_product4x8_bit_packed_mixed_signedness_accelerated,
            storage_texel_buffer_offset_alignment_bytes: BUFFER_ALIGNMENT,
            uniform_texel_buffer_offset_alignment_bytes: BUFFER_ALIGNMENT,
            max_buffer_size: MAX_ALLOCATION,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceFeatures`: the shader capabilities the executor runs; no graphics.
    pub fn features(&self) -> vk::PhysicalDeviceFeatures {
        let t = vk::TRUE;
        vk::PhysicalDeviceFeatures {
            // Out-of-range buffer accesses as tangle_exec::check::robust defines them.
            robust_buffer_access: t,
            shader_int64: t,
            shader_int16: t,
            shader_float64: t,
            shader_storage_buffer_array_dynamic_indexing: t,
            shader_uniform_buffer_array_dynamic_indexing: t,
            // Storage images and texel buffers of every executor format, declared or not
            // (tangle_exec::semantics::texel), in arrays indexed dynamically.
            shader_storage_image_extended_formats: t,
            shader_storage_image_read_without_format: t,
            shader_storage_image_write_without_format: t,
            shader_sampled_image_array_dynamic_indexing: t,
            shader_storage_image_array_dynamic_indexing: t,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan11Features`.
    pub fn vulkan11(&self) -> vk::PhysicalDeviceVulkan11Features<'static> {
        let t = vk::TRUE;
        vk::PhysicalDeviceVulkan11Features {
            storage_buffer16_bit_access: t,
            uniform_and_storage_buffer16_bit_access: t,
            storage_push_constant16: t,
            variable_pointers_storage_buffer: t,
            variable_pointers: t,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan12Features`.
    pub fn vulkan12(&self) -> vk::PhysicalDeviceVulkan12Features<'static> {
        let t = vk::TRUE;
        vk::PhysicalDeviceVulkan12Features {
            storage_buffer8_bit_access: t,
            uniform_and_storage_buffer8_bit_access: t,
            storage_push_constant8: t,
            shader_buffer_int64_atomics: t,
            shader_shared_int64_atomics: t,
            shader_float16: t,
            shader_int8: t,
            runtime_descriptor_array: t,
            shader_storage_buffer_array_non_uniform_indexing: t,
            shader_uniform_buffer_array_non_uniform_indexing: t,
            descriptor_binding_partially_bound: t,
            // Descriptors are read when a dispatch runs (at submit, `crate::exec`), never when
            // they are bound: an update after binding, or of a descriptor a pending submission
            // does not use, is what that dispatch sees.
            descriptor_binding_uniform_buffer_update_after_bind: t,
            descriptor_binding_storage_buffer_update_after_bind: t,
            descriptor_binding_sampled_image_update_after_bind: t,
            descriptor_binding_storage_image_update_after_bind: t,
            descriptor_binding_uniform_texel_buffer_update_after_bind: t,
            descriptor_binding_storage_texel_buffer_update_after_bind: t,
            descriptor_binding_update_unused_while_pending: t,
            // The set's count of its variable binding at allocation (`vkAllocateDescriptorSets`).
            descriptor_binding_variable_descriptor_count: t,
            shader_subgroup_extended_types: t,
            vulkan_memory_model: t,
            vulkan_memory_model_device_scope: t,
            timeline_semaphore: t,
            host_query_reset: t,
            sampler_mirror_clamp_to_edge: t,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceVulkan13Features`.
    pub fn vulkan13(&self) -> vk::PhysicalDeviceVulkan13Features<'static> {
        let t = vk::TRUE;
        vk::PhysicalDeviceVulkan13Features {
            subgroup_size_control: t,
            compute_full_subgroups: t,
            synchronization2: t,
            shader_integer_dot_product: t,
            shader_zero_initialize_workgroup_memory: t,
            shader_terminate_invocation: t,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceCooperativeMatrixFeaturesKHR`: with a non-empty list, and
    /// `cooperativeMatrixRobustBufferAccess` with it (loads and stores outside a buffer follow
    /// the buffer robustness element by element: `tangle_exec::run::coopmat`).
    pub fn coopmat_features(&self) -> vk::PhysicalDeviceCooperativeMatrixFeaturesKHR<'static> {
        vk::PhysicalDeviceCooperativeMatrixFeaturesKHR {
            cooperative_matrix: b(!self.coopmat().is_empty()),
            cooperative_matrix_robust_buffer_access: b(!self.coopmat().is_empty()),
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceRobustness2FeaturesEXT`: `robustBufferAccess2`
    /// (`tangle_exec::check::robust`), `robustImageAccess2` (`tangle_exec::run::image`) and
    /// `nullDescriptor` (`tangle_exec::check::null`).
    pub fn robustness2(&self) -> vk::PhysicalDeviceRobustness2FeaturesEXT<'static> {
        vk::PhysicalDeviceRobustness2FeaturesEXT {
            robust_buffer_access2: vk::TRUE,
            robust_image_access2: vk::TRUE,
            null_descriptor: vk::TRUE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceRobustness2PropertiesEXT`: accesses are checked against the
    /// descriptor's own range, rounded up to nothing.
    pub fn robustness2_properties(&self) -> vk::PhysicalDeviceRobustness2PropertiesEXT<'static> {
        vk::PhysicalDeviceRobustness2PropertiesEXT {
            robust_storage_buffer_access_size_alignment: 1,
            robust_uniform_buffer_access_size_alignment: 1,
            ..Default::default()
        }
    }

    /// `VkPhysicalDevicePipelineRobustnessFeaturesEXT` ([`crate::robustness`]).
    pub fn pipeline_robustness(&self) -> vk::PhysicalDevicePipelineRobustnessFeaturesEXT<'static> {
        vk::PhysicalDevicePipelineRobustnessFeaturesEXT {
            pipeline_robustness: vk::TRUE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDevicePipelineRobustnessPropertiesEXT`: with no robustness feature enabled,
    /// an access out of bounds is undefined behaviour (an `out-of-bounds` error), images too.
    pub fn pipeline_robustness_properties(
        &self,
    ) -> vk::PhysicalDevicePipelineRobustnessPropertiesEXT<'static> {
        use vk::PipelineRobustnessBufferBehaviorEXT as B;
        vk::PhysicalDevicePipelineRobustnessPropertiesEXT {
            default_robustness_storage_buffers: B::DISABLED,
            default_robustness_uniform_buffers: B::DISABLED,
            default_robustness_vertex_inputs: B::DISABLED,
            default_robustness_images: vk::PipelineRobustnessImageBehaviorEXT::DISABLED,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceShaderSubgroupRotateFeaturesKHR`: as the profile's operations say.
    pub fn rotate_features(&self) -> vk::PhysicalDeviceShaderSubgroupRotateFeaturesKHR<'static> {
        let ops = self.profile.subgroup_operations;
        vk::PhysicalDeviceShaderSubgroupRotateFeaturesKHR {
            shader_subgroup_rotate: b(ops & subgroup_ops::ROTATE != 0),
            shader_subgroup_rotate_clustered: b(ops & subgroup_ops::ROTATE_CLUSTERED != 0),
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR`: all four or none.
    pub fn workgroup_layout(
        &self,
    ) -> vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR<'static> {
        let on = b(self.profile.workgroup_memory_explicit_layout);
        vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR {
            workgroup_memory_explicit_layout: on,
            workgroup_memory_explicit_layout_scalar_block_layout: on,
            workgroup_memory_explicit_layout8_bit_access: on,
            workgroup_memory_explicit_layout16_bit_access: on,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceShaderMaximalReconvergenceFeaturesKHR`: the executor's default policy.
    pub fn maximal_reconvergence(
        &self,
    ) -> vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR<'static> {
        vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR {
            shader_maximal_reconvergence: vk::TRUE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR`.
    pub fn uniform_control_flow(
        &self,
    ) -> vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR<'static> {
        vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR {
            shader_subgroup_uniform_control_flow: vk::TRUE,
            ..Default::default()
        }
    }

    /// `VkPhysicalDeviceMemoryProperties`: one heap, one type with all four flags, so every
    /// request a program makes finds it (ggml asks for DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT
    /// and for HOST_CACHED staging memory).
    pub fn memory(&self) -> vk::PhysicalDeviceMemoryProperties {
        let mut m = vk::PhysicalDeviceMemoryProperties {
            memory_type_count: 1,
            memory_heap_count: 1,
            ..Default::default()
        };
        m.memory_types[0] = vk::MemoryType {
            property_flags: vk::MemoryPropertyFlags::DEVICE_LOCAL
                | vk::MemoryPropertyFlags::HOST_VISIBLE
                | vk::MemoryPropertyFlags::HOST_COHERENT
                | vk::MemoryPropertyFlags::HOST_CACHED,
            heap_index: 0,
        };
        m.memory_heaps[0] = vk::MemoryHeap {
            size: heap_size(),
            flags: vk::MemoryHeapFlags::DEVICE_LOCAL,
        };
        m
    }

    /// The one queue family: one queue, compute and transfer, 64-bit timestamps.
    pub fn queue_family(&self) -> vk::QueueFamilyProperties {
        vk::QueueFamilyProperties {
            queue_flags: vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            queue_count: 1,
            timestamp_valid_bits: 64,
            min_image_transfer_granularity: vk::Extent3D {
                width: 1,
                height: 1,
                depth: 1,
            },
        }
    }
}

/// The heap's size: the host's memory (`/proc/meminfo`), else 8 GiB.
fn heap_size() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(8 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_follow_the_profile() {
        for p in Profile::all() {
            let caps = Caps::new(p.clone());
            let props = caps.properties();
            assert_eq!(props.device_type, vk::PhysicalDeviceType::CPU);
            assert_eq!(
                props.limits.max_compute_shared_memory_size,
                p.max_shared_memory
            );
            assert_eq!(caps.subgroup().subgroup_size, p.subgroup_size);
            let has = |n: &CStr| caps.extensions().iter().any(|(e, _)| *e == n);
            assert_eq!(
                has(vk::KHR_COOPERATIVE_MATRIX_NAME),
                !caps.coopmat().is_empty()
            );
            assert!(has(vk::KHR_16BIT_STORAGE_NAME));
            assert_eq!(
                props
                    .device_name_as_c_str()
                    .ok()
                    .and_then(|n| n.to_str().ok()),
                Some(caps.device_name().as_str())
            );
        }
        assert_eq!(
            Caps::new(Profile::default()).subgroup_size_range(),
            (1, 128)
        );
        let lavapipe = Caps::new(Profile::by_name("lavapipe").expect("built in"));
        assert_eq!(lavapipe.subgroup_size_range(), (8, 8));
        // The named GPUs' own ranges (ggml-vulkan tells Intel Xe2 by its minimum of 16).
        for (name, range) in [("nvidia", (32, 32)), ("amd", (32, 64)), ("intel", (16, 32))] {
            let caps = Caps::new(Profile::by_name(name).expect("built in"));
            assert_eq!(caps.subgroup_size_range(), range, "{name}");
        }
        // A size set outside the range (TANGLE_SUBGROUP_SIZE) is the range.
        let intel = Profile::by_name("intel").and_then(|p| p.with_subgroup_size(64));
        let caps = Caps::new(intel.expect("built in"));
        assert_eq!(caps.subgroup_size_range(), (64, 64));
        assert_eq!(lavapipe.coopmat().len(), 4);
        assert_eq!(
            lavapipe
                .integer_dot()
                .integer_dot_product4x8_bit_packed_signed_accelerated,
            0
        );
    }
}
