//! The device features a job can need, by their AmberScript names (`DEVICE_FEATURE
//! Float16Int8Features.shaderFloat16`), the Vulkan structure that holds each one, and the device
//! extension that must be enabled with it.
//!
//! The backend enables only what a job needs: the features its script names plus those its
//! module's capabilities imply ([`crate::facts`]). Core Vulkan 1.3 is required of every device, so
//! the 1.1–1.3 features need no extension; the four extensions tangle is built around (and the
//! workgroup explicit-layout one) do.

use tangle_amber::backend::BufferRobustness;

/// One enableable feature bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feature {
    /// `VkPhysicalDeviceFeatures::shaderInt64`.
    ShaderInt64,
    /// `VkPhysicalDeviceFeatures::shaderInt16`.
    ShaderInt16,
    /// `VkPhysicalDeviceFeatures::shaderFloat64`.
    ShaderFloat64,
    /// `VkPhysicalDeviceFeatures::robustBufferAccess`.
    RobustBufferAccess,
    /// `VkPhysicalDeviceRobustness2FeaturesEXT::robustBufferAccess2` (VK_EXT_robustness2).
    RobustBufferAccess2,
    /// `VkPhysicalDeviceRobustness2FeaturesEXT::robustImageAccess2` (VK_EXT_robustness2).
    RobustImageAccess2,
    /// `VkPhysicalDeviceRobustness2FeaturesEXT::nullDescriptor` (VK_EXT_robustness2).
    NullDescriptor,
    /// `VkPhysicalDeviceVulkan12Features::shaderFloat16`.
    ShaderFloat16,
    /// `VkPhysicalDeviceVulkan12Features::shaderInt8`.
    ShaderInt8,
    /// `VkPhysicalDeviceVulkan12Features::storageBuffer8BitAccess`.
    StorageBuffer8BitAccess,
    /// `VkPhysicalDeviceVulkan12Features::uniformAndStorageBuffer8BitAccess`.
    UniformAndStorageBuffer8BitAccess,
    /// `VkPhysicalDeviceVulkan12Features::storagePushConstant8`.
    StoragePushConstant8,
    /// `VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess`.
    StorageBuffer16BitAccess,
    /// `VkPhysicalDeviceVulkan11Features::uniformAndStorageBuffer16BitAccess`.
    UniformAndStorageBuffer16BitAccess,
    /// `VkPhysicalDeviceVulkan11Features::storagePushConstant16`.
    StoragePushConstant16,
    /// `VkPhysicalDeviceVulkan11Features::variablePointersStorageBuffer`.
    VariablePointersStorageBuffer,
    /// `VkPhysicalDeviceVulkan11Features::variablePointers`.
    VariablePointers,
    /// `VkPhysicalDeviceVulkan12Features::shaderSubgroupExtendedTypes`.
    ShaderSubgroupExtendedTypes,
    /// `VkPhysicalDeviceVulkan12Features::vulkanMemoryModel`.
    VulkanMemoryModel,
    /// `VkPhysicalDeviceVulkan12Features::vulkanMemoryModelDeviceScope`.
    VulkanMemoryModelDeviceScope,
    /// `VkPhysicalDeviceVulkan12Features::bufferDeviceAddress`.
    BufferDeviceAddress,
    /// `VkPhysicalDeviceVulkan13Features::shaderZeroInitializeWorkgroupMemory`.
    ShaderZeroInitializeWorkgroupMemory,
    /// `VkPhysicalDeviceVulkan13Features::subgroupSizeControl`.
    SubgroupSizeControl,
    /// `VkPhysicalDeviceVulkan13Features::computeFullSubgroups`.
    ComputeFullSubgroups,
    /// `VkPhysicalDeviceVulkan13Features::shaderIntegerDotProduct`.
    ShaderIntegerDotProduct,
    /// `VkPhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::shaderMaximalReconvergence`.
    ShaderMaximalReconvergence,
    /// `VkPhysicalDeviceShaderSubgroupRotateFeaturesKHR::shaderSubgroupRotate`.
    ShaderSubgroupRotate,
    /// `VkPhysicalDeviceShaderSubgroupRotateFeaturesKHR::shaderSubgroupRotateClustered`.
    ShaderSubgroupRotateClustered,
    /// `VkPhysicalDeviceCooperativeMatrixFeaturesKHR::cooperativeMatrix`.
    CooperativeMatrix,
    /// `VkPhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::workgroupMemoryExplicitLayout`.
    WorkgroupMemoryExplicitLayout,
    /// `...::workgroupMemoryExplicitLayout8BitAccess`.
    WorkgroupMemoryExplicitLayout8BitAccess,
    /// `...::workgroupMemoryExplicitLayout16BitAccess`.
    WorkgroupMemoryExplicitLayout16BitAccess,
    /// `VkPhysicalDeviceFeatures::shaderStorageImageExtendedFormats`.
    ShaderStorageImageExtendedFormats,
    /// `VkPhysicalDeviceFeatures::shaderStorageImageReadWithoutFormat`.
    ShaderStorageImageReadWithoutFormat,
    /// `VkPhysicalDeviceFeatures::shaderStorageImageWriteWithoutFormat`.
    ShaderStorageImageWriteWithoutFormat,
    /// `VkPhysicalDeviceFeatures::shaderUniformBufferArrayDynamicIndexing`.
    ShaderUniformBufferArrayDynamicIndexing,
    /// `VkPhysicalDeviceFeatures::shaderSampledImageArrayDynamicIndexing`.
    ShaderSampledImageArrayDynamicIndexing,
    /// `VkPhysicalDeviceFeatures::shaderStorageBufferArrayDynamicIndexing`.
    ShaderStorageBufferArrayDynamicIndexing,
    /// `VkPhysicalDeviceFeatures::shaderStorageImageArrayDynamicIndexing`.
    ShaderStorageImageArrayDynamicIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderUniformTexelBufferArrayDynamicIndexing`.
    ShaderUniformTexelBufferArrayDynamicIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderStorageTexelBufferArrayDynamicIndexing`.
    ShaderStorageTexelBufferArrayDynamicIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderUniformBufferArrayNonUniformIndexing`.
    ShaderUniformBufferArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderSampledImageArrayNonUniformIndexing`.
    ShaderSampledImageArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderStorageBufferArrayNonUniformIndexing`.
    ShaderStorageBufferArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderStorageImageArrayNonUniformIndexing`.
    ShaderStorageImageArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderUniformTexelBufferArrayNonUniformIndexing`.
    ShaderUniformTexelBufferArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::shaderStorageTexelBufferArrayNonUniformIndexing`.
    ShaderStorageTexelBufferArrayNonUniformIndexing,
    /// `VkPhysicalDeviceVulkan12Features::descriptorBindingPartiallyBound`.
    DescriptorBindingPartiallyBound,
    /// `VkPhysicalDeviceVulkan12Features::runtimeDescriptorArray`.
    RuntimeDescriptorArray,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: &'static [Feature] = &[
        Feature::ShaderInt64,
        Feature::RobustBufferAccess,
        Feature::RobustBufferAccess2,
        Feature::RobustImageAccess2,
        Feature::NullDescriptor,
        Feature::ShaderInt16,
        Feature::ShaderFloat64,
        Feature::ShaderFloat16,
        Feature::ShaderInt8,
        Feature::StorageBuffer8BitAccess,
        Feature::UniformAndStorageBuffer8BitAccess,
        Feature::StoragePushConstant8,
        Feature::StorageBuffer16BitAccess,
        Feature::UniformAndStorageBuffer16BitAccess,
        Feature::StoragePushConstant16,
        Feature::VariablePointersStorageBuffer,
        Feature::VariablePointers,
        Feature::ShaderSubgroupExtendedTypes,
        Feature::VulkanMemoryModel,
        Feature::VulkanMemoryModelDeviceScope,
        Feature::BufferDeviceAddress,
        Feature::ShaderZeroInitializeWorkgroupMemory,
        Feature::SubgroupSizeControl,
        Feature::ComputeFullSubgroups,
        Feature::ShaderIntegerDotProduct,
        Feature::ShaderMaximalReconvergence,
        Feature::ShaderSubgroupRotate,
        Feature::ShaderSubgroupRotateClustered,
        Feature::CooperativeMatrix,
        Feature::WorkgroupMemoryExplicitLayout,
        Feature::WorkgroupMemoryExplicitLayout8BitAccess,
        Feature::WorkgroupMemoryExplicitLayout16BitAccess,
        Feature::ShaderStorageImageExtendedFormats,
        Feature::ShaderStorageImageReadWithoutFormat,
        Feature::ShaderStorageImageWriteWithoutFormat,
        Feature::ShaderUniformBufferArrayDynamicIndexing,
        Feature::ShaderSampledImageArrayDynamicIndexing,
        Feature::ShaderStorageBufferArrayDynamicIndexing,
        Feature::ShaderStorageImageArrayDynamicIndexing,
        Feature::ShaderUniformTexelBufferArrayDynamicIndexing,
        Feature::ShaderStorageTexelBufferArrayDynamicIndexing,
        Feature::ShaderUniformBufferArrayNonUniformIndexing,
        Feature::ShaderSampledImageArrayNonUniformIndexing,
        Feature::ShaderStorageBufferArrayNonUniformIndexing,
        Feature::ShaderStorageImageArrayNonUniformIndexing,
        Feature::ShaderUniformTexelBufferArrayNonUniformIndexing,
        Feature::ShaderStorageTexelBufferArrayNonUniformIndexing,
        Feature::DescriptorBindingPartiallyBound,
        Feature::RuntimeDescriptorArray,
    ];

    /// The name a script's `DEVICE_FEATURE` uses (amber's spelling: structure nickname, a dot,
    /// the member; plain member names for `VkPhysicalDeviceFeatures`).
    pub fn amber_name(self) -> &'static str {
        match self {
            Feature::ShaderInt64 => "shaderInt64",
            Feature::RobustBufferAccess => BufferRobustness::BUFFER_FEATURE,
            Feature::RobustBufferAccess2 => BufferRobustness::BUFFER2_FEATURE,
            Feature::RobustImageAccess2 => BufferRobustness::IMAGE2_FEATURE,
            Feature::NullDescriptor => BufferRobustness::NULL_FEATURE,
            Feature::ShaderInt16 => "shaderInt16",
            Feature::ShaderFloat64 => "shaderFloat64",
            Feature::ShaderFloat16 => "Float16Int8Features.shaderFloat16",
            Feature::ShaderInt8 => "Float16Int8Features.shaderInt8",
            Feature::StorageBuffer8BitAccess => "Storage8BitFeatures.storageBuffer8BitAccess",
            Feature::UniformAndStorageBuffer8BitAccess => {
                "Storage8BitFeatures.uniformAndStorageBuffer8BitAccess"
            }
            Feature::StoragePushConstant8 => "Storage8BitFeatures.storagePushConstant8",
            Feature::StorageBuffer16BitAccess => "Storage16BitFeatures.storageBuffer16BitAccess",
            Feature::UniformAndStorageBuffer16BitAccess => {
                "Storage16BitFeatures.uniformAndStorageBuffer16BitAccess"
            }
            Feature::StoragePushConstant16 => "Storage16BitFeatures.storagePushConstant16",
            Feature::VariablePointersStorageBuffer => {
                "VariablePointerFeatures.variablePointersStorageBuffer"
            }
            Feature::VariablePointers => "VariablePointerFeatures.variablePointers",
            Feature::ShaderSubgroupExtendedTypes => {
                "ShaderSubgroupExtendedTypesFeatures.shaderSubgroupExtendedTypes"
            }
            Feature::VulkanMemoryModel => "VulkanMemoryModelFeatures.vulkanMemoryModel",
            Feature::VulkanMemoryModelDeviceScope => {
                "VulkanMemoryModelFeatures.vulkanMemoryModelDeviceScope"
            }
            Feature::BufferDeviceAddress => "BufferDeviceAddressFeatures.bufferDeviceAddress",
            Feature::ShaderZeroInitializeWorkgroupMemory => {
                "ZeroInitializeWorkgroupMemoryFeatures.shaderZeroInitializeWorkgroupMemory"
            }
            Feature::SubgroupSizeControl => "SubgroupSizeControl.subgroupSizeControl",
            Feature::ComputeFullSubgroups => "SubgroupSizeControl.computeFullSubgroups",
            Feature::ShaderIntegerDotProduct => {
                "ShaderIntegerDotProductFeatures.shaderIntegerDotProduct"
            }
            Feature::ShaderMaximalReconvergence => {
                "ShaderMaximalReconvergenceFeatures.shaderMaximalReconvergence"
            }
            Feature::ShaderSubgroupRotate => "ShaderSubgroupRotateFeatures.shaderSubgroupRotate",
            Feature::ShaderSubgroupRotateClustered => {
                "ShaderSubgroupRotateFeatures.shaderSubgroupRotateClustered"
            }
            Feature::CooperativeMatrix => "CooperativeMatrixFeaturesKHR.cooperativeMatrix",
            Feature::WorkgroupMemoryExplicitLayout => {
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout"
            }
            Feature::WorkgroupMemoryExplicitLayout8BitAccess => {
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout8BitAccess"
            }
            Feature::WorkgroupMemoryExplicitLayout16BitAccess => {
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout16BitAccess"
            }
            Feature::ShaderStorageImageExtendedFormats => "shaderStorageImageExtendedFormats",
            Feature::ShaderStorageImageReadWithoutFormat => "shaderStorageImageReadWithoutFormat",
            Feature::ShaderStorageImageWriteWithoutFormat => "shaderStorageImageWriteWithoutFormat",
            Feature::ShaderUniformBufferArrayDynamicIndexing => {
                "shaderUniformBufferArrayDynamicIndexing"
            }
            Feature::ShaderSampledImageArrayDynamicIndexing => {
                "shaderSampledImageArrayDynamicIndexing"
            }
            Feature::ShaderStorageBufferArrayDynamicIndexing => {
                "shaderStorageBufferArrayDynamicIndexing"
            }
            Feature::ShaderStorageImageArrayDynamicIndexing => {
                "shaderStorageImageArrayDynamicIndexing"
            }
            Feature::ShaderUniformTexelBufferArrayDynamicIndexing => {
                "DescriptorIndexingFeatures.shaderUniformTexelBufferArrayDynamicIndexing"
            }
            Feature::ShaderStorageTexelBufferArrayDynamicIndexing => {
                "DescriptorIndexingFeatures.shaderStorageTexelBufferArrayDynamicIndexing"
            }
            Feature::ShaderUniformBufferArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderUniformBufferArrayNonUniformIndexing"
            }
            Feature::ShaderSampledImageArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderSampledImageArrayNonUniformIndexing"
            }
            Feature::ShaderStorageBufferArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderStorageBufferArrayNonUniformIndexing"
            }
            Feature::ShaderStorageImageArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderStorageImageArrayNonUniformIndexing"
            }
            Feature::ShaderUniformTexelBufferArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderUniformTexelBufferArrayNonUniformIndexing"
            }
            Feature::ShaderStorageTexelBufferArrayNonUniformIndexing => {
                "DescriptorIndexingFeatures.shaderStorageTexelBufferArrayNonUniformIndexing"
            }
            Feature::DescriptorBindingPartiallyBound => {
                "DescriptorIndexingFeatures.descriptorBindingPartiallyBound"
            }
            Feature::RuntimeDescriptorArray => "DescriptorIndexingFeatures.runtimeDescriptorArray",
        }
    }

    /// The feature a `DEVICE_FEATURE` name means, if tangle knows it.
    pub fn from_amber(name: &str) -> Option<Feature> {
        Feature::ALL
            .iter()
            .copied()
            .find(|f| f.amber_name() == name)
    }

    /// The device extension that must be enabled for this feature, beyond core Vulkan 1.3.
    pub fn extension(self) -> Option<&'static str> {
        match self {
            Feature::ShaderMaximalReconvergence => Some("VK_KHR_shader_maximal_reconvergence"),
            Feature::ShaderSubgroupRotate | Feature::ShaderSubgroupRotateClustered => {
                Some("VK_KHR_shader_subgroup_rotate")
            }
            Feature::CooperativeMatrix => Some("VK_KHR_cooperative_matrix"),
            Feature::RobustBufferAccess2
            | Feature::RobustImageAccess2
            | Feature::NullDescriptor => Some("VK_EXT_robustness2"),
            Feature::WorkgroupMemoryExplicitLayout
            | Feature::WorkgroupMemoryExplicitLayout8BitAccess
            | Feature::WorkgroupMemoryExplicitLayout16BitAccess => {
                Some("VK_KHR_workgroup_memory_explicit_layout")
            }
            _ => None,
        }
    }
}

/// Device extensions promoted to core Vulkan 1.1–1.3: a `DEVICE_EXTENSION` naming one is met by
/// every Vulkan 1.3 device, listed or not, and is not enabled separately.
pub const CORE_1_3_EXTENSIONS: &[&str] = &[
    "VK_KHR_16bit_storage",
    "VK_KHR_8bit_storage",
    "VK_KHR_storage_buffer_storage_class",
    "VK_KHR_variable_pointers",
    "VK_KHR_shader_float16_int8",
    "VK_KHR_shader_subgroup_extended_types",
    "VK_KHR_vulkan_memory_model",
    "VK_KHR_buffer_device_address",
    "VK_KHR_spirv_1_4",
    "VK_KHR_shader_float_controls",
    "VK_KHR_shader_atomic_int64",
    "VK_KHR_shader_integer_dot_product",
    "VK_KHR_zero_initialize_workgroup_memory",
    "VK_KHR_shader_non_semantic_info",
    "VK_KHR_shader_terminate_invocation",
    "VK_EXT_subgroup_size_control",
    "VK_KHR_maintenance1",
    "VK_KHR_maintenance2",
    "VK_KHR_maintenance3",
    "VK_KHR_maintenance4",
    "VK_KHR_synchronization2",
    "VK_KHR_get_memory_requirements2",
    "VK_KHR_dedicated_allocation",
    "VK_KHR_timeline_semaphore",
    // Core in 1.2 with its features optional: a script's DEVICE_FEATURE lines ask for those.
    "VK_EXT_descriptor_indexing",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        let mut names = std::collections::BTreeSet::new();
        for f in Feature::ALL {
            assert_eq!(Feature::from_amber(f.amber_name()), Some(*f));
            assert!(names.insert(f.amber_name()), "{f:?}");
        }
        assert_eq!(Feature::from_amber("geometryShader"), None);
        // The spelling the CPU backend and tests/amber/resources/workgroup_explicit_layout.amber
        // use (the structure's KHR name, as for CooperativeMatrixFeaturesKHR).
        assert_eq!(
            Feature::from_amber(
                "WorkgroupMemoryExplicitLayoutFeaturesKHR.workgroupMemoryExplicitLayout8BitAccess"
            ),
            Some(Feature::WorkgroupMemoryExplicitLayout8BitAccess)
        );
    }
}
