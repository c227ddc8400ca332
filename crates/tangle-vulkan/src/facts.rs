//! What a job's SPIR-V module asks of a Vulkan device: its version, the features its
//! capabilities need, the subgroup operations it uses, the byte size of each specialization
//! constant (a `VkSpecializationMapEntry` must give the constant's own size), and the entry
//! point's workgroup size (checked against the device's limits and the full-subgroups rule
//! before the driver sees the pipeline).
//!
//! The module is read with `tangle-spirv`; nothing here validates it (the CPU backend and the
//! driver do that), so whatever does not parse is reported as an invalid shader.

use crate::features::Feature;
use spirv::{Capability, Decoration, ExecutionMode, Op, StorageClass};
use std::collections::{BTreeMap, BTreeSet};
use tangle_amber::backend::BindingKind;
use tangle_exec::profile::subgroup_ops;
use tangle_spirv::Module;

/// The facts of one module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleFacts {
    /// The SPIR-V version (major, minor).
    pub version: (u8, u8),
    /// Features the module's capabilities and execution modes need.
    pub features: BTreeSet<Feature>,
    /// Subgroup operation classes it uses (`VkSubgroupFeatureFlagBits`).
    pub subgroup_operations: u32,
    /// SpecId → the byte size of that specialization constant (`VkBool32` is 4 bytes).
    pub spec_sizes: BTreeMap<u32, u32>,
    /// Every buffer the module declares: (set, binding, descriptor kind), in module order.
    pub buffers: Vec<(u32, u32, BindingKind)>,
    /// Every image, sampler and texel buffer the module declares (`UniformConstant`
    /// variables): (set, binding).
    pub resources: Vec<(u32, u32)>,
    /// The (set, binding) of each buffer or resource declared as an array (a descriptor array),
    /// with its length (`None`: runtime-sized).
    pub arrays: Vec<(u32, u32, Option<u32>)>,
    /// Whether the module declares a push-constant block.
    pub push_constants: bool,
    /// Integer constants by id: (SpecId when it is a specialization constant, its value).
    constants: BTreeMap<u32, (Option<u32>, u64)>,
    /// The entry point's `LocalSize x y z` execution mode.
    local_size_mode: Option<[u32; 3]>,
    /// The entry point's `LocalSizeId x y z` operands (constant ids).
    local_size_ids: Option<Vec<u32>>,
    /// The constituents of the composite decorated `BuiltIn WorkgroupSize`.
    workgroup_size_builtin: Option<Vec<u32>>,
}

impl ModuleFacts {
    /// The entry point's workgroup size under the job's specialization, when the module states it
    /// with `LocalSize`, `LocalSizeId` or a `WorkgroupSize` composite of (specialization)
    /// constants; `None` when a size is no integer constant tangle reads (an
    /// `OpSpecConstantOp`), which the driver checks alone.
    ///
    /// # Spec
    /// "If an object is decorated with the WorkgroupSize decoration, this takes precedence over
    /// any LocalSize or LocalSizeId execution mode." (SPIR-V, BuiltIn WorkgroupSize)
    pub fn local_size(&self, spec: &[(u32, u32)]) -> Option<[u32; 3]> {
        let ids = match (&self.workgroup_size_builtin, &self.local_size_ids) {
            (Some(ids), _) | (None, Some(ids)) => ids,
            (None, None) => return self.local_size_mode,
        };
        let mut size = [0u32; 3];
        for (slot, id) in size.iter_mut().zip(ids) {
            let (spec_id, default) = *self.constants.get(id)?;
            // A later SPECIALIZE of the same id wins, as in the runner.
            let value = spec_id
                .and_then(|s| spec.iter().rev().find(|(i, _)| *i == s))
                .map_or(default, |(_, bits)| u64::from(*bits));
            *slot = u32::try_from(value).ok()?;
        }
        (ids.len() == 3).then_some(size)
    }
}

/// Reads the facts of `words`, for the entry point named `entry`.
pub fn scan(words: &[u32], entry: &str) -> Result<ModuleFacts, String> {
    let module = Module::from_words(words).map_err(|e| e.to_string())?;
    let mut facts = ModuleFacts {
        version: module.header.version,
        ..ModuleFacts::default()
    };
    // Byte sizes of scalar types, and SpecId decorations, by id.
    let mut sizes: BTreeMap<u32, u32> = BTreeMap::new();
    let mut spec_ids: BTreeMap<u32, u32> = BTreeMap::new();
    let mut caps: BTreeSet<u32> = BTreeSet::new();
    let mut rotate_clustered = false;
    let mut builtin_size_id = None;
    // For the buffers: DescriptorSet and Binding by variable, Block/BufferBlock structs, array
    // element types, pointer pointees, and the buffer variables (id, storage class, pointer).
    let mut sets: BTreeMap<u32, u32> = BTreeMap::new();
    let mut bindings: BTreeMap<u32, u32> = BTreeMap::new();
    let mut blocks: BTreeMap<u32, bool> = BTreeMap::new();
    // Array types: element type, and the length's constant id (`None`: runtime array).
    let mut elements: BTreeMap<u32, (u32, Option<u32>)> = BTreeMap::new();
    let mut pointees: BTreeMap<u32, u32> = BTreeMap::new();
    let mut variables: Vec<(u32, u64, u32)> = Vec::new();
    let entry_id = module.instructions.iter().find_map(|inst| {
        (inst.op() == Some(Op::EntryPoint) && inst.string_operand(2) == Some(entry))
            .then(|| inst.id_operand(1))
            .flatten()
    });
    for inst in &module.instructions {
        let Some(op) = inst.op() else { continue };
        let lit = |i: usize| inst.literal_operand(i);
        match op {
            Op::Capability => caps.extend(lit(0).and_then(|c| u32::try_from(c).ok())),
            Op::TypeBool => {
                if let Some(id) = inst.result_id {
                    sizes.insert(id, 4);
                }
            }
            Op::TypeInt | Op::TypeFloat => {
                if let (Some(id), Some(width)) = (inst.result_id, lit(0)) {
                    sizes.insert(id, u32::try_from(width / 8).unwrap_or(0));
                }
            }
            Op::Decorate if lit(1) == Some(Decoration::SpecId as u64) => {
                if let (Some(target), Some(spec)) = (inst.id_operand(0), lit(2)) {
                    spec_ids.insert(target, u32::try_from(spec).unwrap_or(u32::MAX));
                }
            }
            Op::Decorate if lit(1) == Some(Decoration::DescriptorSet as u64) => {
                if let (Some(target), Some(set)) = (inst.id_operand(0), lit(2)) {
                    sets.insert(target, u32::try_from(set).unwrap_or(u32::MAX));
                }
            }
            Op::Decorate if lit(1) == Some(Decoration::Binding as u64) => {
                if let (Some(target), Some(binding)) = (inst.id_operand(0), lit(2)) {
                    bindings.insert(target, u32::try_from(binding).unwrap_or(u32::MAX));
                }
            }
            Op::Decorate
                if lit(1) == Some(Decoration::Block as u64)
                    || lit(1) == Some(Decoration::BufferBlock as u64) =>
            {
                if let Some(target) = inst.id_operand(0) {
                    blocks.insert(target, lit(1) == Some(Decoration::BufferBlock as u64));
                }
            }
            Op::TypeArray | Op::TypeRuntimeArray => {
                if let (Some(id), Some(element)) = (inst.result_id, inst.id_operand(0)) {
                    let length = (op == Op::TypeArray).then(|| inst.id_operand(1)).flatten();
                    elements.insert(id, (element, length));
                }
            }
            Op::TypePointer => {
                if let (Some(id), Some(pointee)) = (inst.result_id, inst.id_operand(1)) {
                    pointees.insert(id, pointee);
                }
            }
            Op::Decorate
                if lit(1) == Some(Decoration::BuiltIn as u64)
                    && lit(2) == Some(spirv::BuiltIn::WorkgroupSize as u64) =>
            {
                builtin_size_id = inst.id_operand(0);
            }
            Op::Constant | Op::SpecConstant => {
                let spec = inst.result_id.and_then(|id| spec_ids.get(&id)).copied();
                if let Some(id) = inst.result_id {
                    facts.constants.insert(id, (spec, lit(0).unwrap_or(0)));
                }
                if op == Op::SpecConstant {
                    let size = inst.result_type.and_then(|t| sizes.get(&t)).copied();
                    if let (Some(spec), Some(size)) = (spec, size) {
                        facts.spec_sizes.insert(spec, size);
                    }
                }
            }
            Op::SpecConstantTrue | Op::SpecConstantFalse => {
                if let Some(spec) = inst.result_id.and_then(|id| spec_ids.get(&id)) {
                    facts.spec_sizes.insert(*spec, 4);
                }
            }
            Op::ConstantComposite | Op::SpecConstantComposite
                if inst.result_id.is_some() && inst.result_id == builtin_size_id =>
            {
                facts.workgroup_size_builtin =
                    Some(inst.operands.iter().filter_map(|o| o.id()).collect());
            }
            Op::ExecutionModeId
                if lit(1) == Some(ExecutionMode::LocalSizeId as u64)
                    && inst.id_operand(0).is_some()
                    && inst.id_operand(0) == entry_id =>
            {
                facts.local_size_ids = Some((2..5).filter_map(|i| inst.id_operand(i)).collect());
            }
            Op::ExecutionMode
                if lit(1) == Some(ExecutionMode::LocalSize as u64)
                    && inst.id_operand(0).is_some()
                    && inst.id_operand(0) == entry_id =>
            {
                if let (Some(x), Some(y), Some(z)) = (lit(2), lit(3), lit(4)) {
                    let c = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
                    facts.local_size_mode = Some([c(x), c(y), c(z)]);
                }
            }
            Op::ExecutionMode if lit(1) == Some(ExecutionMode::MaximallyReconvergesKHR as u64) => {
                facts.features.insert(Feature::ShaderMaximalReconvergence);
            }
            // `OpGroupNonUniformRotateKHR %ty %scope %value %delta [%cluster]`: the optional
            // ClusterSize needs shaderSubgroupRotateClustered.
            Op::GroupNonUniformRotateKHR if inst.operands.len() >= 4 => rotate_clustered = true,
            Op::Variable
                if [
                    StorageClass::StorageBuffer,
                    StorageClass::Uniform,
                    StorageClass::PushConstant,
                    StorageClass::UniformConstant,
                ]
                .iter()
                .any(|c| lit(0) == Some(*c as u64)) =>
            {
                if let (Some(id), Some(class), Some(ty)) =
                    (inst.result_id, lit(0), inst.result_type)
                {
                    variables.push((id, class, ty));
                }
            }
            Op::Variable
                if lit(0) == Some(StorageClass::Workgroup as u64) && inst.operands.len() >= 2 =>
            {
                // VUID-RuntimeSpirv-shaderZeroInitializeWorkgroupMemory-06372: a Workgroup
                // variable with an initializer needs the feature.
                facts
                    .features
                    .insert(Feature::ShaderZeroInitializeWorkgroupMemory);
            }
            _ => {}
        }
    }
    for (id, class, pointer) in variables {
        if class == StorageClass::PushConstant as u64 {
            facts.push_constants = true;
            continue;
        }
        let (Some(set), Some(binding)) = (sets.get(&id), bindings.get(&id)) else {
            continue;
        };
        // The pointee is the block or resource, or an array of them (a descriptor array).
        let mut ty = pointees.get(&pointer).copied();
        if let Some((element, length)) = ty.and_then(|t| elements.get(&t)) {
            ty = Some(*element);
            let length = length.map(|c| {
                let n = facts.constants.get(&c).map_or(0, |(_, v)| *v);
                u32::try_from(n).unwrap_or(u32::MAX)
            });
            facts.arrays.push((*set, *binding, length));
        }
        if class == StorageClass::UniformConstant as u64 {
            facts.resources.push((*set, *binding));
            continue;
        }
        let buffer_block = ty.and_then(|t| blocks.get(&t)).copied().unwrap_or(false);
        // VUID-StandaloneSpirv-Uniform-06676 family: StorageBuffer, or Uniform with BufferBlock,
        // is a storage buffer; Uniform with Block is a uniform buffer.
        let kind = if class == StorageClass::StorageBuffer as u64 || buffer_block {
            BindingKind::Storage
        } else {
            BindingKind::Uniform
        };
        facts.buffers.push((*set, *binding, kind));
    }
    for cap in &caps {
        let (feature, ops) = capability_needs(*cap);
        facts.features.extend(feature);
        facts.subgroup_operations |= ops;
    }
    if rotate_clustered {
        facts
            .features
            .insert(Feature::ShaderSubgroupRotateClustered);
        facts.subgroup_operations |= subgroup_ops::ROTATE_CLUSTERED;
    }
    // Group operations on 8/16/64-bit values need shaderSubgroupExtendedTypes
    // (VUID-RuntimeSpirv-None-06275); without a cheap type walk, a module that has both group
    // operations and narrow or wide types asks for it.
    let narrow = [
        Capability::Int8,
        Capability::Int16,
        Capability::Int64,
        Capability::Float16,
    ]
    .iter()
    .any(|c| caps.contains(&(*c as u32)));
    if narrow && facts.subgroup_operations & !subgroup_ops::BASIC != 0 {
        facts.features.insert(Feature::ShaderSubgroupExtendedTypes);
    }
    Ok(facts)
}

/// The feature and the subgroup-operation bits one capability needs (the Vulkan spec's
/// "SPIR-V Environment" table of capabilities and the features that enable them).
fn capability_needs(cap: u32) -> (Option<Feature>, u32) {
    use Capability as C;
    let is = |c: C| cap == c as u32;
    let feature = match () {
        _ if is(C::Int64) => Some(Feature::ShaderInt64),
        _ if is(C::Int16) => Some(Feature::ShaderInt16),
        _ if is(C::Float64) => Some(Feature::ShaderFloat64),
        _ if is(C::Float16) => Some(Feature::ShaderFloat16),
        _ if is(C::Int8) => Some(Feature::ShaderInt8),
        _ if is(C::StorageBuffer8BitAccess) => Some(Feature::StorageBuffer8BitAccess),
        _ if is(C::UniformAndStorageBuffer8BitAccess) => {
            Some(Feature::UniformAndStorageBuffer8BitAccess)
        }
        _ if is(C::StoragePushConstant8) => Some(Feature::StoragePushConstant8),
        _ if is(C::StorageBuffer16BitAccess) => Some(Feature::StorageBuffer16BitAccess),
        _ if is(C::UniformAndStorageBuffer16BitAccess) => {
            Some(Feature::UniformAndStorageBuffer16BitAccess)
        }
        _ if is(C::StoragePushConstant16) => Some(Feature::StoragePushConstant16),
        _ if is(C::VariablePointersStorageBuffer) => Some(Feature::VariablePointersStorageBuffer),
        _ if is(C::VariablePointers) => Some(Feature::VariablePointers),
        _ if is(C::VulkanMemoryModel) => Some(Feature::VulkanMemoryModel),
        _ if is(C::VulkanMemoryModelDeviceScope) => Some(Feature::VulkanMemoryModelDeviceScope),
        _ if is(C::PhysicalStorageBufferAddresses) => Some(Feature::BufferDeviceAddress),
        _ if is(C::DotProduct)
            || is(C::DotProductInputAll)
            || is(C::DotProductInput4x8Bit)
            || is(C::DotProductInput4x8BitPacked) =>
        {
            Some(Feature::ShaderIntegerDotProduct)
        }
        _ if is(C::GroupNonUniformRotateKHR) => Some(Feature::ShaderSubgroupRotate),
        _ if is(C::CooperativeMatrixKHR) => Some(Feature::CooperativeMatrix),
        _ if is(C::WorkgroupMemoryExplicitLayoutKHR) => {
            Some(Feature::WorkgroupMemoryExplicitLayout)
        }
        _ if is(C::WorkgroupMemoryExplicitLayout8BitAccessKHR) => {
            Some(Feature::WorkgroupMemoryExplicitLayout8BitAccess)
        }
        _ if is(C::WorkgroupMemoryExplicitLayout16BitAccessKHR) => {
            Some(Feature::WorkgroupMemoryExplicitLayout16BitAccess)
        }
        _ if is(C::StorageImageExtendedFormats) => Some(Feature::ShaderStorageImageExtendedFormats),
        _ if is(C::StorageImageReadWithoutFormat) => {
            Some(Feature::ShaderStorageImageReadWithoutFormat)
        }
        _ if is(C::StorageImageWriteWithoutFormat) => {
            Some(Feature::ShaderStorageImageWriteWithoutFormat)
        }
        _ if is(C::UniformBufferArrayDynamicIndexing) => {
            Some(Feature::ShaderUniformBufferArrayDynamicIndexing)
        }
        _ if is(C::SampledImageArrayDynamicIndexing) => {
            Some(Feature::ShaderSampledImageArrayDynamicIndexing)
        }
        _ if is(C::StorageBufferArrayDynamicIndexing) => {
            Some(Feature::ShaderStorageBufferArrayDynamicIndexing)
        }
        _ if is(C::StorageImageArrayDynamicIndexing) => {
            Some(Feature::ShaderStorageImageArrayDynamicIndexing)
        }
        _ if is(C::UniformTexelBufferArrayDynamicIndexing) => {
            Some(Feature::ShaderUniformTexelBufferArrayDynamicIndexing)
        }
        _ if is(C::StorageTexelBufferArrayDynamicIndexing) => {
            Some(Feature::ShaderStorageTexelBufferArrayDynamicIndexing)
        }
        _ if is(C::UniformBufferArrayNonUniformIndexing) => {
            Some(Feature::ShaderUniformBufferArrayNonUniformIndexing)
        }
        _ if is(C::SampledImageArrayNonUniformIndexing) => {
            Some(Feature::ShaderSampledImageArrayNonUniformIndexing)
        }
        _ if is(C::StorageBufferArrayNonUniformIndexing) => {
            Some(Feature::ShaderStorageBufferArrayNonUniformIndexing)
        }
        _ if is(C::StorageImageArrayNonUniformIndexing) => {
            Some(Feature::ShaderStorageImageArrayNonUniformIndexing)
        }
        _ if is(C::UniformTexelBufferArrayNonUniformIndexing) => {
            Some(Feature::ShaderUniformTexelBufferArrayNonUniformIndexing)
        }
        _ if is(C::StorageTexelBufferArrayNonUniformIndexing) => {
            Some(Feature::ShaderStorageTexelBufferArrayNonUniformIndexing)
        }
        _ if is(C::RuntimeDescriptorArray) => Some(Feature::RuntimeDescriptorArray),
        _ => None,
    };
    let ops = match () {
        _ if is(C::GroupNonUniform) => subgroup_ops::BASIC,
        _ if is(C::GroupNonUniformVote) => subgroup_ops::VOTE,
        _ if is(C::GroupNonUniformArithmetic) => subgroup_ops::ARITHMETIC,
        _ if is(C::GroupNonUniformBallot) => subgroup_ops::BALLOT,
        _ if is(C::GroupNonUniformShuffle) => subgroup_ops::SHUFFLE,
        _ if is(C::GroupNonUniformShuffleRelative) => subgroup_ops::SHUFFLE_RELATIVE,
        _ if is(C::GroupNonUniformClustered) => subgroup_ops::CLUSTERED,
        _ if is(C::GroupNonUniformQuad) => subgroup_ops::QUAD,
        _ if is(C::GroupNonUniformRotateKHR) => subgroup_ops::ROTATE,
        _ => 0,
    };
    (feature, ops)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A module with an array of two blocks at set 0 binding 0 and one block at set 1
    /// binding 2 (the Vulkan plan's tests use it too).
    pub(crate) const ARRAY_OF_BLOCKS: &str = r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpDecorate %a DescriptorSet 0
OpDecorate %a Binding 0
OpDecorate %s DescriptorSet 1
OpDecorate %s Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%two = OpConstant %u32 2
%S = OpTypeStruct %u32
%A = OpTypeArray %S %two
%pa = OpTypePointer StorageBuffer %A
%ps = OpTypePointer StorageBuffer %S
%a = OpVariable %pa StorageBuffer
%s = OpVariable %ps StorageBuffer
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#;

    pub(crate) fn words(text: &str) -> Vec<u32> {
        tangle_spirv::text::assemble(text, &Default::default())
            .map(|(m, _)| m.to_words())
            .unwrap_or_else(|e| panic!("assembles: {e:?}"))
    }

    #[test]
    fn capabilities_spec_sizes_and_modes() {
        let w = words(
            r#"OpCapability Shader
OpCapability Int64
OpCapability Float16
OpCapability GroupNonUniformBallot
OpCapability GroupNonUniformRotateKHR
OpExtension "SPV_KHR_subgroup_rotate"
OpExtension "SPV_KHR_maximal_reconvergence"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpExecutionMode %main MaximallyReconvergesKHR
OpDecorate %a SpecId 3
OpDecorate %b SpecId 7
OpDecorate %c SpecId 9
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u64 = OpTypeInt 64 0
%f16 = OpTypeFloat 16
%a = OpSpecConstant %u64 5
%b = OpSpecConstantTrue %bool
%c = OpSpecConstant %f16 1
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#,
        );
        let f = scan(&w, "main").expect("scans");
        assert_eq!(f.local_size(&[]), Some([1, 1, 1]));
        assert_eq!(f.spec_sizes, BTreeMap::from([(3, 8), (7, 4), (9, 2)]));
        for needed in [
            Feature::ShaderInt64,
            Feature::ShaderFloat16,
            Feature::ShaderSubgroupRotate,
            Feature::ShaderMaximalReconvergence,
            Feature::ShaderSubgroupExtendedTypes,
        ] {
            assert!(
                f.features.contains(&needed),
                "{needed:?} in {:?}",
                f.features
            );
        }
        assert!(!f.features.contains(&Feature::ShaderSubgroupRotateClustered));
        assert_eq!(
            f.subgroup_operations,
            subgroup_ops::BALLOT | subgroup_ops::ROTATE
        );
    }

    #[test]
    fn workgroup_size_builtin_wins_and_follows_specialization() {
        let w = words(
            r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %x SpecId 0
OpDecorate %size BuiltIn WorkgroupSize
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%v3 = OpTypeVector %u32 3
%x = OpSpecConstant %u32 64
%one = OpConstant %u32 1
%two = OpConstant %u32 2
%size = OpSpecConstantComposite %v3 %x %one %two
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#,
        );
        let f = scan(&w, "main").expect("scans");
        assert_eq!(f.local_size(&[]), Some([64, 1, 2]));
        assert_eq!(f.local_size(&[(0, 7), (0, 16)]), Some([16, 1, 2]));
        assert_eq!(f.spec_sizes, BTreeMap::from([(0, 4)]));
    }

    #[test]
    fn buffers_and_push_constants_are_read() {
        let w = words(
            r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpDecorate %U Block
OpDecorate %B BufferBlock
OpMemberDecorate %S 0 Offset 0
OpMemberDecorate %U 0 Offset 0
OpMemberDecorate %B 0 Offset 0
OpDecorate %s DescriptorSet 0
OpDecorate %s Binding 1
OpDecorate %u DescriptorSet 2
OpDecorate %u Binding 0
OpDecorate %b DescriptorSet 0
OpDecorate %b Binding 3
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%S = OpTypeStruct %u32
%U = OpTypeStruct %u32
%B = OpTypeStruct %u32
%ps = OpTypePointer StorageBuffer %S
%pu = OpTypePointer Uniform %U
%pb = OpTypePointer Uniform %B
%s = OpVariable %ps StorageBuffer
%u = OpVariable %pu Uniform
%b = OpVariable %pb Uniform
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#,
        );
        let f = scan(&w, "main").expect("scans");
        assert_eq!(
            f.buffers,
            vec![
                (0, 1, BindingKind::Storage),
                (2, 0, BindingKind::Uniform),
                (0, 3, BindingKind::Storage)
            ]
        );
        assert!(!f.push_constants);
        assert!(f.arrays.is_empty());
    }

    #[test]
    fn descriptor_arrays_are_told_apart() {
        let w = words(ARRAY_OF_BLOCKS);
        let f = scan(&w, "main").expect("scans");
        assert_eq!(
            f.buffers,
            vec![(0, 0, BindingKind::Storage), (1, 2, BindingKind::Storage)]
        );
        assert_eq!(f.arrays, vec![(0, 0, Some(2))]);
    }

    /// Images and samplers are resources to bind; a runtime array of them is a descriptor array
    /// of no length, and its capability asks for `runtimeDescriptorArray`.
    #[test]
    fn image_arrays_and_their_capabilities() {
        let w = words(
            r#"OpCapability Shader
OpCapability RuntimeDescriptorArray
OpCapability StorageImageReadWithoutFormat
OpExtension "SPV_EXT_descriptor_indexing"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %imgs DescriptorSet 0
OpDecorate %imgs Binding 3
OpDecorate %smp DescriptorSet 1
OpDecorate %smp Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%f32 = OpTypeFloat 32
%img = OpTypeImage %f32 2D 0 0 0 2 Unknown
%arr = OpTypeRuntimeArray %img
%parr = OpTypePointer UniformConstant %arr
%imgs = OpVariable %parr UniformConstant
%sampler = OpTypeSampler
%psmp = OpTypePointer UniformConstant %sampler
%smp = OpVariable %psmp UniformConstant
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#,
        );
        let f = scan(&w, "main").expect("scans");
        assert_eq!(f.resources, vec![(0, 3), (1, 0)]);
        assert_eq!(f.arrays, vec![(0, 3, None)]);
        assert!(f.buffers.is_empty());
        assert!(f.features.contains(&Feature::RuntimeDescriptorArray));
        assert!(f
            .features
            .contains(&Feature::ShaderStorageImageReadWithoutFormat));
    }

    #[test]
    fn not_a_module_is_an_error() {
        assert!(scan(&[1, 2, 3], "main").is_err());
    }
}
