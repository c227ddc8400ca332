//! The translation of one Amber [`ComputeJob`] into what the Vulkan calls need
//! ([`DispatchPlan`]): descriptor-set layouts, the push-constant range, the specialization map,
//! the shader stage's subgroup-size controls, and the features and extensions the device must
//! enable. Everything the device cannot do is refused here, naming it, before any Vulkan object
//! exists; no driver is needed, so the translation is unit-tested.

use crate::device::DeviceInfo;
use crate::error::VulkanError;
use crate::facts::{self, ModuleFacts};
use crate::features::Feature;
use std::collections::BTreeSet;
use tangle_amber::backend::{BindingKind, RequiredSize};
use tangle_amber::ComputeJob;
use tangle_exec::profile::file::operation_names as subgroup_operation_names;
use tangle_exec::semantics::texel::TexelFormat;

/// One binding of a set: a descriptor, or an array of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedBinding {
    /// `binding` number.
    pub binding: u32,
    /// The descriptor type.
    pub kind: BindingKind,
    /// By element (`descriptorCount` of them): the index into [`ComputeJob::bindings`] bound
    /// there (the bytes, and where the results go back).
    pub elements: Vec<usize>,
}

/// Where one job binding lives on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In `VkBuffer` number `memory` of [`DispatchPlan::memories`], from `offset`; a texel
    /// buffer is a view of it in `format`.
    Buffer {
        memory: usize,
        offset: u64,
        format: Option<ash::vk::Format>,
    },
    /// An image of its own, its texels copied in before the dispatch and out after it.
    Image {
        format: ash::vk::Format,
        dimensions: u8,
        extent: [u32; 3],
    },
    /// A sampler alone: no bytes.
    Sampler,
}

/// One `VkBuffer`: the bytes of a run of bindings that share bytes of one script buffer
/// ([`tangle_amber::backend::shared_runs`]), so a write through one descriptor is seen through
/// the others, as a script's buffer is on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMemory {
    /// Its size in bytes.
    pub size: u64,
    /// Its bindings (indices into [`ComputeJob::bindings`]).
    pub members: Vec<usize>,
}

/// One `VkSpecializationMapEntry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecEntry {
    /// `constantID`.
    pub id: u32,
    /// `offset` into the data.
    pub offset: u32,
    /// `size`: the constant's own byte size.
    pub size: u32,
}

/// Everything the Vulkan calls of one dispatch need, besides the job's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchPlan {
    /// Descriptor sets 0..=highest, each with its bindings in binding order; a set no binding
    /// uses is empty (pipeline layouts cannot skip set numbers).
    pub sets: Vec<Vec<PlannedBinding>>,
    /// For each of [`ComputeJob::bindings`]: where it lives.
    pub placements: Vec<Placement>,
    /// The buffers the bindings' bytes live in.
    pub memories: Vec<PlannedMemory>,
    /// The push-constant range's size (a multiple of 4; 0 for none).
    pub push_constant_size: u32,
    /// The specialization map.
    pub spec_entries: Vec<SpecEntry>,
    /// The specialization data the entries point into.
    pub spec_data: Vec<u8>,
    /// `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo::requiredSubgroupSize`.
    pub required_subgroup_size: Option<u32>,
    /// `VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT`.
    pub full_subgroups: bool,
    /// `VK_PIPELINE_SHADER_STAGE_CREATE_ALLOW_VARYING_SUBGROUP_SIZE_BIT`.
    pub varying_subgroup_size: bool,
    /// The subgroup size invocations get (what a CPU run must use to match).
    pub subgroup_size: u32,
    /// Features to enable on the logical device.
    pub features: BTreeSet<Feature>,
    /// Device extensions to enable.
    pub extensions: BTreeSet<String>,
}

/// Plans `job` on `device`; `script_features` and `script_extensions` are what the script's
/// `DEVICE_FEATURE`/`DEVICE_EXTENSION` lines asked for (enabled too, as amber does).
pub fn plan(
    job: &ComputeJob,
    device: &DeviceInfo,
    script_features: &BTreeSet<Feature>,
    script_extensions: &BTreeSet<String>,
) -> Result<DispatchPlan, VulkanError> {
    device.usable().map_err(VulkanError::Unsupported)?;
    let facts = facts::scan(&job.spirv, &job.entry_point).map_err(VulkanError::Invalid)?;
    let mut features: BTreeSet<Feature> = script_features.clone();
    features.extend(facts.features.iter().copied());
    let (required_subgroup_size, subgroup_size) = subgroup_size(job, device)?;
    if required_subgroup_size.is_some() || job.subgroup.varying_size {
        features.insert(Feature::SubgroupSizeControl);
    }
    if job.subgroup.fully_populated {
        features.insert(Feature::ComputeFullSubgroups);
    }
    check_module(&facts, device)?;
    check_interface(job, &facts)?;
    check_workgroup(job, &facts, device, required_subgroup_size)?;
    let sets = sets(job, &facts, device)?;
    let (placements, memories) = placements(job, device)?;
    if let Some(f) = features.iter().find(|f| !device.features.contains(f)) {
        return Err(VulkanError::Unsupported(format!(
            "DEVICE_FEATURE {}: '{}' does not offer it",
            f.amber_name(),
            device.name
        )));
    }
    let mut extensions: BTreeSet<String> = features
        .iter()
        .filter_map(|f| f.extension())
        .map(str::to_string)
        .collect();
    // A script's extension that is core in 1.3 needs no enabling (and may not be listed).
    extensions.extend(
        script_extensions
            .iter()
            .filter(|e| device.extensions.contains(*e))
            .cloned(),
    );
    if let Some(e) = extensions.iter().find(|e| !device.extensions.contains(*e)) {
        return Err(VulkanError::Unsupported(format!(
            "DEVICE_EXTENSION {e}: '{}' does not offer it",
            device.name
        )));
    }
    let (spec_entries, spec_data) = specialization(job, &facts);
    Ok(DispatchPlan {
        sets,
        placements,
        memories,
        push_constant_size: push_constant_size(job, device)?,
        spec_entries,
        spec_data,
        required_subgroup_size,
        full_subgroups: job.subgroup.fully_populated,
        varying_subgroup_size: job.subgroup.varying_size,
        subgroup_size,
        features,
        extensions,
    })
}

/// The required subgroup size (if the pipeline sets one) and the size invocations get.
fn subgroup_size(job: &ComputeJob, device: &DeviceInfo) -> Result<(Option<u32>, u32), VulkanError> {
    let s = &device.subgroup;
    let required = match job.subgroup.required_size {
        None => return Ok((None, s.size)),
        Some(RequiredSize::Size(n)) => n,
        Some(RequiredSize::Min) => s.min_size,
        Some(RequiredSize::Max) => s.max_size,
    };
    // VUID-VkPipelineShaderStageRequiredSubgroupSizeCreateInfo-requiredSubgroupSize-02760..02762:
    // a power of two within [minSubgroupSize, maxSubgroupSize], for a stage in
    // requiredSubgroupSizeStages.
    if !required.is_power_of_two() || required < s.min_size || required > s.max_size {
        return Err(VulkanError::Unsupported(format!(
            "subgroup size {required}: '{}' offers {}..{}",
            device.name, s.min_size, s.max_size
        )));
    }
    if !s.required_size_compute {
        return Err(VulkanError::Unsupported(format!(
            "a required subgroup size: '{}' does not allow one for compute shaders",
            device.name
        )));
    }
    Ok((Some(required), required))
}

/// The module's version and subgroup operations against the device.
fn check_module(facts: &ModuleFacts, device: &DeviceInfo) -> Result<(), VulkanError> {
    // Vulkan 1.3 consumes SPIR-V up to 1.6.
    if facts.version > (1, 6) {
        return Err(VulkanError::Unsupported(format!(
            "SPIR-V {}.{}: Vulkan 1.3 devices consume up to 1.6",
            facts.version.0, facts.version.1
        )));
    }
    let missing = facts.subgroup_operations & !device.subgroup.operations;
    if missing != 0 {
        return Err(VulkanError::Unsupported(format!(
            "subgroup operations {}: '{}' does not offer them",
            subgroup_operation_names(missing).join(", "),
            device.name
        )));
    }
    if facts.subgroup_operations != 0 && !device.subgroup.compute {
        return Err(VulkanError::Unsupported(format!(
            "subgroup operations in compute shaders: '{}' does not offer them",
            device.name
        )));
    }
    Ok(())
}

/// Every buffer the shader declares is bound with its descriptor type, and push constants are
/// given when it declares them: a pipeline layout that lacks what the shader uses is invalid
/// usage (VUID-VkComputePipelineCreateInfo-layout-07988, -07990, -10069), which a driver need
/// not catch. The CPU executor refuses an unbound buffer the same way.
fn check_interface(job: &ComputeJob, facts: &ModuleFacts) -> Result<(), VulkanError> {
    for (set, binding) in &facts.resources {
        if !job
            .bindings
            .iter()
            .any(|b| b.set == *set && b.binding == *binding)
        {
            return Err(VulkanError::Invalid(format!(
                "the shader uses an image or sampler at set {set}, binding {binding}, but none is bound"
            )));
        }
    }
    for (set, binding, kind) in &facts.buffers {
        let bound = job
            .bindings
            .iter()
            .find(|b| b.set == *set && b.binding == *binding);
        match bound {
            None => {
                return Err(VulkanError::Invalid(format!(
                    "the shader uses a buffer at set {set}, binding {binding}, but none is bound"
                )))
            }
            Some(b) if b.kind != *kind => {
                return Err(VulkanError::Invalid(format!(
                    "set {set}, binding {binding} is a {kind:?} buffer in the shader but is bound as {:?}",
                    b.kind
                )))
            }
            Some(_) => {}
        }
    }
    if facts.push_constants && job.push_constants.is_empty() {
        return Err(VulkanError::Invalid(
            "the shader declares push constants, but the pipeline binds none".into(),
        ));
    }
    Ok(())
}

/// The workgroup size and count against the device's limits, and the full-subgroups rule.
fn check_workgroup(
    job: &ComputeJob,
    facts: &ModuleFacts,
    device: &DeviceInfo,
    required: Option<u32>,
) -> Result<(), VulkanError> {
    let limits = &device.limits;
    for (axis, (n, max)) in job
        .groups
        .iter()
        .zip(limits.max_workgroup_count)
        .enumerate()
    {
        if *n > max {
            return Err(VulkanError::Unsupported(format!(
                "{n} workgroups in {}: '{}' allows {max} (maxComputeWorkGroupCount)",
                ["x", "y", "z"].get(axis).copied().unwrap_or("?"),
                device.name
            )));
        }
    }
    let Some(size) = facts.local_size(&job.spec_constants) else {
        return Ok(());
    };
    if size.contains(&0) {
        return Err(VulkanError::Invalid(format!(
            "workgroup size {size:?} has a zero dimension"
        )));
    }
    let invocations = size.iter().map(|n| u64::from(*n)).product::<u64>();
    let over = size
        .iter()
        .zip(limits.max_workgroup_size)
        .any(|(n, max)| *n > max);
    if over || invocations > u64::from(limits.max_workgroup_invocations) {
        return Err(VulkanError::Unsupported(format!(
            "workgroup size {}x{}x{}: '{}' allows {:?} and {} invocations",
            size[0],
            size[1],
            size[2],
            device.name,
            limits.max_workgroup_size,
            limits.max_workgroup_invocations
        )));
    }
    if job.subgroup.fully_populated {
        // VUID-VkPipelineShaderStageCreateInfo-flags-02758/02759: with full subgroups, the local
        // size in x must be a multiple of the required subgroup size, or of maxSubgroupSize
        // when none is required (and the size may not vary).
        let multiple = match required {
            Some(n) => n,
            None if !job.subgroup.varying_size => device.subgroup.max_size,
            None => 1,
        };
        if size[0].checked_rem(multiple) != Some(0) {
            return Err(VulkanError::Unsupported(format!(
                "FULLY_POPULATED needs the local size in x ({}) to be a multiple of the subgroup size {multiple}",
                size[0]
            )));
        }
    }
    Ok(())
}

/// The specialization map: each constant at its own size, little-endian, wider types
/// zero-extended from the 32-bit pattern as the CPU backend does.
fn specialization(job: &ComputeJob, facts: &ModuleFacts) -> (Vec<SpecEntry>, Vec<u8>) {
    let mut entries: Vec<SpecEntry> = Vec::new();
    let mut data = Vec::new();
    // A later SPECIALIZE of the same id wins.
    let mut seen = BTreeSet::new();
    let latest: Vec<(u32, u32)> = job
        .spec_constants
        .iter()
        .rev()
        .filter(|(id, _)| seen.insert(*id))
        .copied()
        .collect();
    for (id, bits) in latest.into_iter().rev() {
        // An id the module does not declare affects nothing; 4 bytes is as good as any.
        let size = facts.spec_sizes.get(&id).copied().unwrap_or(4).clamp(1, 8);
        let offset = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let bytes = u64::from(bits).to_le_bytes();
        data.extend_from_slice(bytes.get(..size as usize).unwrap_or(&bytes));
        entries.push(SpecEntry { id, offset, size });
    }
    (entries, data)
}

/// The push-constant range: the job's bytes rounded up to 4 (ranges are whole words).
fn push_constant_size(job: &ComputeJob, device: &DeviceInfo) -> Result<u32, VulkanError> {
    let size = job.push_constants.len().div_ceil(4).saturating_mul(4);
    let size = u32::try_from(size).unwrap_or(u32::MAX);
    if size > device.limits.max_push_constants {
        return Err(VulkanError::Unsupported(format!(
            "{size} bytes of push constants: '{}' allows {} (maxPushConstantsSize)",
            device.name, device.limits.max_push_constants
        )));
    }
    Ok(size)
}

/// The descriptor sets: each binding with its elements, refusing duplicate elements, arrays
/// with elements left unbound, empty buffers and ranges past the limits.
fn sets(
    job: &ComputeJob,
    facts: &ModuleFacts,
    device: &DeviceInfo,
) -> Result<Vec<Vec<PlannedBinding>>, VulkanError> {
    let limits = &device.limits;
    let mut sets: Vec<Vec<PlannedBinding>> = Vec::new();
    for (job_index, b) in job.bindings.iter().enumerate() {
        let at = format!("set {} binding {}", b.set, b.binding);
        if b.set >= limits.max_bound_sets {
            return Err(VulkanError::Unsupported(format!(
                "DESCRIPTOR_SET {}: '{}' binds {} sets (maxBoundDescriptorSets)",
                b.set, device.name, limits.max_bound_sets
            )));
        }
        let range = match b.kind {
            BindingKind::Storage => Some((limits.max_storage_range, "maxStorageBufferRange")),
            BindingKind::Uniform => Some((limits.max_uniform_range, "maxUniformBufferRange")),
            _ => None,
        };
        if b.bytes.is_empty() && b.kind != BindingKind::Sampler {
            // VkDescriptorBufferInfo: "If range is not equal to VK_WHOLE_SIZE, range must be
            // greater than 0", and a VkBuffer cannot be empty either.
            return Err(VulkanError::Unsupported(format!(
                "an empty buffer at {at}: Vulkan has no empty buffers"
            )));
        }
        if let Some((max, what)) = range {
            if u64::try_from(b.bytes.len()).unwrap_or(u64::MAX) > u64::from(max) {
                return Err(VulkanError::Unsupported(format!(
                    "{} bytes at {at}: '{}' allows {max} ({what})",
                    b.bytes.len(),
                    device.name
                )));
            }
        }
        let set = b.set as usize;
        if sets.len() <= set {
            sets.resize_with(set + 1, Vec::new);
        }
        let Some(slot) = sets.get_mut(set) else {
            continue;
        };
        let element = b.element as usize;
        match slot.iter_mut().find(|p| p.binding == b.binding) {
            Some(p) if p.kind != b.kind => {
                return Err(VulkanError::Invalid(format!(
                    "{at} is bound as {:?} and as {:?}",
                    p.kind, b.kind
                )))
            }
            Some(p) => {
                if p.elements.len() <= element {
                    p.elements.resize(element + 1, usize::MAX);
                }
                match p.elements.get_mut(element) {
                    Some(e) if *e == usize::MAX => *e = job_index,
                    _ => {
                        return Err(VulkanError::Invalid(format!(
                            "{at} element {element} is bound twice"
                        )))
                    }
                }
            }
            None => {
                let mut elements = vec![usize::MAX; element + 1];
                if let Some(e) = elements.get_mut(element) {
                    *e = job_index;
                }
                slot.push(PlannedBinding {
                    binding: b.binding,
                    kind: b.kind,
                    elements,
                });
            }
        }
    }
    for (set, slot) in sets.iter_mut().enumerate() {
        slot.sort_by_key(|p| p.binding);
        for p in slot.iter() {
            // A shader's array of N needs a binding of at least N descriptors
            // (VUID-VkComputePipelineCreateInfo-layout-07991), and without
            // descriptorBindingPartiallyBound every one of them must be valid; a driver may crash
            // on an unbound one (lavapipe 26 did, `resources/fail/descriptor_array_one_buffer`),
            // where tangle's CPU executor reports the access.
            let declared = facts
                .arrays
                .iter()
                .find(|(s, b, _)| *s as usize == set && *b == p.binding)
                .and_then(|(_, _, n)| *n)
                .unwrap_or(0) as usize;
            let unbound = p.elements.contains(&usize::MAX) || declared > p.elements.len();
            if unbound {
                return Err(VulkanError::Unsupported(format!(
                    "a partially bound descriptor array at set {set} binding {} ({} of {} elements \
                     bound): tangle's Vulkan backend binds every element",
                    p.binding,
                    p.elements.iter().filter(|e| **e != usize::MAX).count(),
                    declared.max(p.elements.len())
                )));
            }
        }
    }
    Ok(sets)
}

/// A format binding's image description and `VkFormat`.
fn format(
    b: &tangle_amber::JobBinding,
) -> Result<(&tangle_amber::JobImage, ash::vk::Format), VulkanError> {
    let image = b.image.as_ref().ok_or_else(|| {
        VulkanError::Invalid(format!("set {} binding {} has no format", b.set, b.binding))
    })?;
    let format = crate::resources::vk_format(&image.format)
        .ok_or_else(|| VulkanError::Unsupported(format!("images of format {}", image.format)))?;
    Ok((image, format))
}

/// Where each binding lives: images and samplers alone, buffers and texel buffers in one
/// `VkBuffer` per run of bindings sharing bytes, each at its offset from the run's start
/// rounded down to the alignment its descriptor types need.
fn placements(
    job: &ComputeJob,
    device: &DeviceInfo,
) -> Result<(Vec<Placement>, Vec<PlannedMemory>), VulkanError> {
    let limits = &device.limits;
    let mut placements = vec![Placement::Sampler; job.bindings.len()];
    let mut memories = Vec::new();

    for run in tangle_amber::backend::shared_runs(&job.bindings) {
        let kinds = || {
            run.iter()
                .filter_map(|&i| job.bindings.get(i))
                .map(|b| b.kind)
        };
        if let [i] = run[..] {
            let Some(b) = job.bindings.get(i) else {
                continue;
            };
            let image = matches!(
                b.kind,
                BindingKind::StorageImage
                    | BindingKind::SampledImage
                    | BindingKind::CombinedImageSampler
            );
            if image {
                let (image, format) = format(b)?;
                let texel = TexelFormat::by_name(&image.format).map_or(0, |f| f.bytes());
                let texels = image.extent.iter().map(|n| u64::from(*n)).product::<u64>();
                if texels.saturating_mul(u64::from(texel)) != b.bytes.len() as u64 {
                    return Err(VulkanError::Invalid(format!(
                        "set {} binding {}: {} bytes for {texels} texels of {}",
                        b.set,
                        b.binding,
                        b.bytes.len(),
                        image.format
                    )));
                }
                placements[i] = Placement::Image {
                    format,
                    dimensions: image.dimensions,
                    extent: image.extent,
                };
                continue;
            }
        } else if let Some(b) = run.iter().filter_map(|&i| job.bindings.get(i)).find(|b| {
            !matches!(
                b.kind,
                BindingKind::Storage
                    | BindingKind::Uniform
                    | BindingKind::StorageTexelBuffer
                    | BindingKind::UniformTexelBuffer
            )
        }) {
            return Err(VulkanError::Unsupported(format!(
                "the image at set {} binding {} shares bytes with another binding (tangle binds an image's texels as a copy)",
                b.set, b.binding
            )));
        }
        let align = |k: BindingKind| {
            match k {
                BindingKind::Storage => limits.offset_alignment[0],
                BindingKind::Uniform => limits.offset_alignment[1],
                _ => limits.offset_alignment[2],
            }
            .max(1)
        };
        let start = run
            .first()
            .and_then(|&i| job.bindings.get(i))
            .map_or(0, |b| b.offset as u64);
        let base = match run.len() {
            1 => start,
            _ => start - start % kinds().map(align).max().unwrap_or(1),
        };
        let mut size = 0u64;
        for &i in &run {
            let Some(b) = job.bindings.get(i) else {
                continue;
            };
            let offset = b.offset as u64 - base;
            if !offset.is_multiple_of(align(b.kind)) {
                // VUID-VkWriteDescriptorSet-descriptorType-00327/00328, VUID-VkBufferViewCreateInfo-offset-02749.
                return Err(VulkanError::Unsupported(format!(
                    "the descriptor at set {} binding {} starts {offset} bytes into a buffer shared with another: '{}' needs a multiple of {}",
                    b.set,
                    b.binding,
                    device.name,
                    align(b.kind)
                )));
            }
            let texel_format = match b.kind {
                BindingKind::StorageTexelBuffer | BindingKind::UniformTexelBuffer => {
                    let (image, format) = format(b)?;
                    let texel = TexelFormat::by_name(&image.format).map_or(1, |f| f.bytes());
                    let texels = b.bytes.len() as u64 / u64::from(texel.max(1));
                    if !(b.bytes.len() as u64).is_multiple_of(u64::from(texel.max(1)))
                        || texels > u64::from(limits.max_texel_buffer_elements)
                    {
                        return Err(VulkanError::Unsupported(format!(
                            "a texel buffer of {} bytes at set {} binding {}: '{}' allows {} texels of {} bytes (maxTexelBufferElements)",
                            b.bytes.len(),
                            b.set,
                            b.binding,
                            device.name,
                            limits.max_texel_buffer_elements,
                            texel
                        )));
                    }
                    Some(format)
                }
                _ => None,
            };
            size = size.max(offset + b.bytes.len() as u64);
            placements[i] = Placement::Buffer {
                memory: memories.len(),
                offset,
                format: texel_format,
            };
        }
        memories.push(PlannedMemory { size, members: run });
    }
    Ok((placements, memories))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tests::lavapipe_like;
    use tangle_amber::backend::{JobBinding, JobImage, SubgroupControl};
    use tangle_spirv::TargetEnv;

    use crate::facts::tests::{words as assemble, ARRAY_OF_BLOCKS};

    fn module(extra_caps: &str, local_size: &str) -> Vec<u32> {
        assemble(&format!(
            r#"OpCapability Shader
{extra_caps}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize {local_size}
OpDecorate %s SpecId 4
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u16 = OpTypeInt 16 0
%s = OpSpecConstant %u16 3
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#
        ))
    }

    fn job(spirv: Vec<u32>) -> ComputeJob {
        let binding = |set, binding, kind, len| JobBinding {
            set,
            binding,
            kind,
            bytes: vec![0; len],
            buffer: 0,
            offset: 0,
            element: 0,
            image: None,
            sampler: None,
        };
        ComputeJob {
            spirv,
            target_env: TargetEnv::parse("spv1.3").expect("env"),
            entry_point: "main".into(),
            spec_constants: vec![(4, 0x1_2345), (9, 7)],
            bindings: vec![
                binding(2, 1, BindingKind::Storage, 16),
                binding(0, 3, BindingKind::Uniform, 16),
                binding(2, 0, BindingKind::Storage, 4),
            ],
            push_constants: vec![1, 2, 3, 4, 5],
            groups: [2, 1, 1],
            subgroup: SubgroupControl::default(),
            line: 1,
            debug: Vec::new(),
            robustness: Default::default(),
            image_robustness: false,
            coopmat_robustness: false,
            null_descriptor: false,
        }
    }

    #[test]
    fn layouts_push_constants_and_specialization() {
        let p = plan(
            &job(module("OpCapability Int16", "8 1 1")),
            &lavapipe_like(),
            &BTreeSet::new(),
            &BTreeSet::new(),
        )
        .expect("plans");
        let numbers: Vec<Vec<(u32, Vec<usize>)>> = p
            .sets
            .iter()
            .map(|s| s.iter().map(|b| (b.binding, b.elements.clone())).collect())
            .collect();
        assert_eq!(
            numbers,
            vec![vec![(3, vec![1])], vec![], vec![(0, vec![2]), (1, vec![0])]]
        );
        // Three script buffers (all `buffer: 0` at offset 0 here, so they share bytes: one
        // VkBuffer, each descriptor at offset 0).
        assert_eq!(p.memories.len(), 1);
        assert!(p.placements.iter().all(|pl| matches!(
            pl,
            Placement::Buffer {
                memory: 0,
                offset: 0,
                format: None
            }
        )));
        assert_eq!(p.sets[0][0].kind, BindingKind::Uniform);
        assert_eq!(p.push_constant_size, 8);
        // SpecId 4 is a 16-bit constant: 2 bytes, truncated like the CPU backend's pattern;
        // SpecId 9 is not in the module: 4 bytes.
        assert_eq!(
            p.spec_entries,
            vec![
                SpecEntry {
                    id: 4,
                    offset: 0,
                    size: 2
                },
                SpecEntry {
                    id: 9,
                    offset: 2,
                    size: 4
                }
            ]
        );
        assert_eq!(p.spec_data, vec![0x45, 0x23, 7, 0, 0, 0]);
        assert_eq!(p.features, BTreeSet::from([Feature::ShaderInt16]));
        assert!(p.extensions.is_empty());
        assert_eq!((p.required_subgroup_size, p.subgroup_size), (None, 8));
    }

    #[test]
    fn subgroup_controls_enable_their_features() {
        let mut j = job(module("", "16 1 1"));
        j.subgroup = SubgroupControl {
            required_size: Some(RequiredSize::Max),
            fully_populated: true,
            varying_size: false,
        };
        let p = plan(&j, &lavapipe_like(), &BTreeSet::new(), &BTreeSet::new()).expect("plans");
        assert_eq!(p.required_subgroup_size, Some(8));
        assert!(p.full_subgroups);
        assert!(p.features.contains(&Feature::SubgroupSizeControl));
        assert!(p.features.contains(&Feature::ComputeFullSubgroups));
        // A size outside the device's range, and a local size that is no multiple of it.
        j.subgroup.required_size = Some(RequiredSize::Size(32));
        let e = plan(&j, &lavapipe_like(), &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("subgroup size 32")),
            "{e:?}"
        );
        let mut j = job(module("", "12 1 1"));
        j.subgroup.fully_populated = true;
        let e = plan(&j, &lavapipe_like(), &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("FULLY_POPULATED")),
            "{e:?}"
        );
    }

    #[test]
    fn what_the_device_lacks_is_named() {
        let d = lavapipe_like();
        let rotate = module(
            "OpCapability GroupNonUniformRotateKHR\nOpExtension \"SPV_KHR_subgroup_rotate\"",
            "8 1 1",
        );
        let e = plan(&job(rotate), &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("rotate")),
            "{e:?}"
        );
        let e = plan(
            &job(module("", "2000 1 1")),
            &d,
            &BTreeSet::new(),
            &BTreeSet::new(),
        );
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("workgroup size")),
            "{e:?}"
        );
        let mut j = job(module("", "1 1 1"));
        j.groups = [70000, 1, 1];
        let e = plan(&j, &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("maxComputeWorkGroupCount")),
            "{e:?}"
        );
        let mut j = job(module("", "1 1 1"));
        j.bindings[1].set = 0;
        j.bindings[1].binding = 3;
        j.bindings[0] = j.bindings[1].clone();
        let e = plan(&j, &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Invalid(ref m)) if m.contains("twice")),
            "{e:?}"
        );
        let mut j = job(module("", "1 1 1"));
        j.bindings[0].bytes.clear();
        assert!(plan(&j, &d, &BTreeSet::new(), &BTreeSet::new()).is_err());
        let script = BTreeSet::from([Feature::CooperativeMatrix]);
        let e = plan(&job(module("", "1 1 1")), &d, &script, &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("cooperativeMatrix")),
            "{e:?}"
        );
    }

    /// Images get placements of their own with their Vulkan format; texel buffers and buffers
    /// sharing bytes of one script buffer are descriptors of one VkBuffer at their offsets; a
    /// descriptor array's elements are listed by element.
    #[test]
    fn images_texel_buffers_arrays_and_shared_bytes_are_placed() {
        let mut j = job(module("OpCapability Int16", "8 1 1"));
        let image = |format: &str, extent| JobImage {
            format: format.into(),
            dimensions: 2,
            extent,
        };
        j.bindings = vec![
            JobBinding {
                set: 0,
                binding: 0,
                kind: BindingKind::StorageImage,
                bytes: vec![0; 16],
                buffer: 0,
                offset: 0,
                element: 0,
                image: Some(image("R8G8B8A8_UNORM", [2, 2, 1])),
                sampler: None,
            },
            JobBinding {
                set: 0,
                binding: 1,
                kind: BindingKind::Storage,
                bytes: vec![0; 32],
                buffer: 1,
                offset: 16,
                element: 0,
                image: None,
                sampler: None,
            },
            JobBinding {
                set: 0,
                binding: 1,
                kind: BindingKind::Storage,
                bytes: vec![0; 16],
                buffer: 1,
                offset: 32,
                element: 1,
                image: None,
                sampler: None,
            },
            JobBinding {
                set: 0,
                binding: 2,
                kind: BindingKind::UniformTexelBuffer,
                bytes: vec![0; 32],
                buffer: 1,
                offset: 0,
                element: 0,
                image: Some(image("R32_UINT", [8, 1, 1])),
                sampler: None,
            },
        ];
        let d = lavapipe_like();
        let p = plan(&j, &d, &BTreeSet::new(), &BTreeSet::new()).expect("plans");
        assert_eq!(p.sets[0][1].elements, vec![1, 2]);
        assert_eq!(p.sets[0][2].kind, BindingKind::UniformTexelBuffer);
        assert_eq!(
            p.placements,
            vec![
                Placement::Image {
                    format: ash::vk::Format::R8G8B8A8_UNORM,
                    dimensions: 2,
                    extent: [2, 2, 1]
                },
                Placement::Buffer {
                    memory: 0,
                    offset: 16,
                    format: None
                },
                Placement::Buffer {
                    memory: 0,
                    offset: 32,
                    format: None
                },
                Placement::Buffer {
                    memory: 0,
                    offset: 0,
                    format: Some(ash::vk::Format::R32_UINT)
                },
            ]
        );
        assert_eq!(
            p.memories,
            vec![PlannedMemory {
                size: 48,
                members: vec![3, 1, 2]
            }]
        );
        // A shared buffer's descriptor at an offset the device's alignment does not allow.
        let mut k = j.clone();
        k.bindings[2].offset = 20;
        let e = plan(&k, &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("multiple of 16")),
            "{e:?}"
        );
        // An image overlapping another binding's bytes is a copy on the CPU too: refused.
        let mut k = j.clone();
        k.bindings[0].buffer = 1;
        let e = plan(&k, &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("shares bytes")),
            "{e:?}"
        );
        // An image whose bytes do not fill its extent, and a format tangle does not implement.
        let mut k = j.clone();
        k.bindings[0].bytes.pop();
        assert!(matches!(
            plan(&k, &d, &BTreeSet::new(), &BTreeSet::new()),
            Err(VulkanError::Invalid(_))
        ));
        let mut k = j.clone();
        k.bindings[0].image = Some(image("B10G11R11_UFLOAT_PACK32", [2, 2, 1]));
        assert!(matches!(
            plan(&k, &d, &BTreeSet::new(), &BTreeSet::new()),
            Err(VulkanError::Unsupported(_))
        ));
        // An array with an element left unbound.
        let mut k = j.clone();
        k.bindings[2].element = 2;
        let e = plan(&k, &d, &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("partially bound")),
            "{e:?}"
        );
    }

    #[test]
    fn the_shader_interface_must_be_bound() {
        let spirv = assemble(
            r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpDecorate %s DescriptorSet 0
OpDecorate %s Binding 0
OpDecorate %P Block
OpMemberDecorate %P 0 Offset 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%S = OpTypeStruct %u32
%P = OpTypeStruct %u32
%ps = OpTypePointer StorageBuffer %S
%pp = OpTypePointer PushConstant %P
%s = OpVariable %ps StorageBuffer
%p = OpVariable %pp PushConstant
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"#,
        );
        let d = lavapipe_like();
        let none = BTreeSet::new();
        let mut j = job(spirv);
        j.bindings.clear();
        let e = plan(&j, &d, &none, &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Invalid(ref m)) if m.contains("none is bound")),
            "{e:?}"
        );
        j.bindings.push(JobBinding {
            set: 0,
            binding: 0,
            kind: BindingKind::Uniform,
            bytes: vec![0; 4],
            buffer: 0,
            offset: 0,
            element: 0,
            image: None,
            sampler: None,
        });
        let e = plan(&j, &d, &none, &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Invalid(ref m)) if m.contains("bound as Uniform")),
            "{e:?}"
        );
        j.bindings[0].kind = BindingKind::Storage;
        assert!(plan(&j, &d, &none, &BTreeSet::new()).is_ok());
        j.push_constants.clear();
        let e = plan(&j, &d, &none, &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Invalid(ref m)) if m.contains("push constants")),
            "{e:?}"
        );
    }

    /// A shader's array of two blocks bound with one plain buffer (`BIND BUFFER`, not
    /// `BUFFER_ARRAY`) would leave element 1 unbound: refused; with both bound it plans.
    #[test]
    fn a_shader_array_longer_than_what_is_bound_is_refused() {
        let spirv = assemble(ARRAY_OF_BLOCKS);
        let mut j = job(spirv);
        j.bindings.truncate(2);
        (j.bindings[0].set, j.bindings[0].binding) = (0, 0);
        (j.bindings[1].set, j.bindings[1].binding) = (1, 2);
        j.bindings[1].kind = BindingKind::Storage;
        j.push_constants.clear();
        let e = plan(&j, &lavapipe_like(), &BTreeSet::new(), &BTreeSet::new());
        assert!(
            matches!(e, Err(VulkanError::Unsupported(ref m)) if m.contains("1 of 2 elements bound")),
            "{e:?}"
        );
        let mut second = j.bindings[0].clone();
        second.element = 1;
        j.bindings.push(second);
        let p = plan(&j, &lavapipe_like(), &BTreeSet::new(), &BTreeSet::new()).expect("plans");
        assert_eq!(p.sets[0][0].elements, vec![0, 2]);
    }

    #[test]
    fn extensions_come_from_features_and_the_script() {
        let mut d = lavapipe_like();
        d.features.insert(Feature::ShaderMaximalReconvergence);
        d.extensions
            .insert("VK_KHR_shader_maximal_reconvergence".into());
        let script_ext = BTreeSet::from([
            "VK_KHR_16bit_storage".to_string(),
            "VK_KHR_workgroup_memory_explicit_layout".to_string(),
        ]);
        let script = BTreeSet::from([Feature::ShaderMaximalReconvergence]);
        let p = plan(&job(module("", "1 1 1")), &d, &script, &script_ext).expect("plans");
        assert_eq!(
            p.extensions,
            BTreeSet::from([
                "VK_KHR_shader_maximal_reconvergence".to_string(),
                "VK_KHR_workgroup_memory_explicit_layout".to_string()
            ])
        );
    }
}
