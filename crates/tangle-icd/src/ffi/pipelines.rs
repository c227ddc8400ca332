//! Descriptor set layouts, pools and sets (allocate, free, update, copy), pipeline layouts,
//! compute pipelines with specialization constants and required subgroup sizes, and the
//! (empty) pipeline cache.

use super::*;
use crate::objects::{
    self, lock, Buffer, Descriptor, DescriptorPool, DescriptorSet, Device, LayoutBinding,
    PipelineCache, PipelineLayout, SetLayout, ShaderModule,
};
use crate::pipeline::PipelineRequest;
use ash::vk::Handle;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub unsafe extern "system" fn create_set_layout(
    device: vk::Device,
    info: *const vk::DescriptorSetLayoutCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DescriptorSetLayout,
) -> vk::Result {
    guard("vkCreateDescriptorSetLayout", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct and array (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let bindings = unsafe { slice(info.p_bindings, info.binding_count, "pBindings")? };
        let raw: Vec<u32> = bindings.iter().map(|b| b.binding).collect();
        // SAFETY: each binding's `pImmutableSamplers` is null or holds `descriptorCount`
        // samplers (rule 1).
        let immutable = unsafe { super::images::immutable_samplers(bindings)? };
        let bindings: BTreeMap<u32, LayoutBinding> = bindings
            .iter()
            .map(|b| {
                (
                    b.binding,
                    LayoutBinding {
                        kind: b.descriptor_type,
                        count: b.descriptor_count,
                    },
                )
            })
            .collect();
        // SAFETY: the program's chain and its flags array (rule 1).
        let variable = unsafe { variable_binding(info.p_next, &raw)? };
        let handle = objects::insert(Arc::new(SetLayout {
            bindings,
            immutable,
            variable,
        }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::DescriptorSetLayout::from_raw(handle), "pSetLayout")? };
        Ok(vk::Result::SUCCESS)
    })
}

/// The binding whose flags in a `VkDescriptorSetLayoutBindingFlagsCreateInfo` of the chain
/// `next` hold `VARIABLE_DESCRIPTOR_COUNT` (`bindings`: the layout's binding numbers, in the
/// order of the flags). Update-after-bind and the other flags change nothing here: descriptors
/// are read when a dispatch runs ([`crate::exec`]).
///
/// # Safety
/// `next` is a valid chain; a flags struct's array holds `bindingCount` flags.
unsafe fn variable_binding(
    next: *const std::ffi::c_void,
    bindings: &[u32],
) -> Result<Option<u32>, Fail> {
    for (s_type, at) in unsafe { chain(next) } {
        if s_type != vk::StructureType::DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO {
            continue;
        }
        // SAFETY: the struct its `sType` names, and its array (the caller's promise).
        let info = unsafe { &*at.cast::<vk::DescriptorSetLayoutBindingFlagsCreateInfo>() };
        let flags = unsafe { slice(info.p_binding_flags, info.binding_count, "pBindingFlags")? };
        let variable = flags
            .iter()
            .zip(bindings)
            .find(|(f, _)| f.contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT))
            .map(|(_, b)| *b);
        return Ok(variable);
    }
    Ok(None)
}

pub unsafe extern "system" fn destroy_set_layout(
    _device: vk::Device,
    layout: vk::DescriptorSetLayout,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyDescriptorSetLayout", || {
        if layout != vk::DescriptorSetLayout::null() {
            objects::remove::<SetLayout>(layout.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn create_descriptor_pool(
    device: vk::Device,
    info: *const vk::DescriptorPoolCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::DescriptorPool,
) -> vk::Result {
    guard("vkCreateDescriptorPool", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let handle = objects::insert(Arc::new(DescriptorPool {
            max_sets: info.max_sets,
            free_allowed: info
                .flags
                .contains(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET),
            sets: Mutex::default(),
        }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::DescriptorPool::from_raw(handle), "pDescriptorPool")? };
        Ok(vk::Result::SUCCESS)
    })
}

/// Removes every set of a pool.
fn empty_pool(pool: &DescriptorPool) {
    for set in lock(&pool.sets).drain(..) {
        let _ = objects::remove::<DescriptorSet>(set);
    }
}

pub unsafe extern "system" fn destroy_descriptor_pool(
    _device: vk::Device,
    pool: vk::DescriptorPool,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyDescriptorPool", || {
        if pool != vk::DescriptorPool::null() {
            empty_pool(&*objects::remove::<DescriptorPool>(pool.as_raw())?);
        }
        Ok(())
    })
}

pub unsafe extern "system" fn reset_descriptor_pool(
    _device: vk::Device,
    pool: vk::DescriptorPool,
    _flags: vk::DescriptorPoolResetFlags,
) -> vk::Result {
    guard("vkResetDescriptorPool", || {
        empty_pool(&*objects::get::<DescriptorPool>(pool.as_raw())?);
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn allocate_descriptor_sets(
    _device: vk::Device,
    info: *const vk::DescriptorSetAllocateInfo<'_>,
    out: *mut vk::DescriptorSet,
) -> vk::Result {
    guard("vkAllocateDescriptorSets", || {
        // SAFETY: the program's struct and array (rule 1).
        let info = unsafe { read(info, "pAllocateInfo")? };
        let layouts =
            unsafe { slice(info.p_set_layouts, info.descriptor_set_count, "pSetLayouts")? };
        let pool = objects::get::<DescriptorPool>(info.descriptor_pool.as_raw())?;
        let layouts = layouts
            .iter()
            .map(|l| objects::get::<SetLayout>(l.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        // SAFETY: the program's chain and its counts array (rule 1).
        let counts = unsafe { variable_counts(info.p_next)? };
        let mut sets = lock(&pool.sets);
        if sets.len() + layouts.len() > pool.max_sets as usize {
            return Ok(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
        }
        for (i, layout) in layouts.into_iter().enumerate() {
            // The variable binding holds the count given for this set (zero when none is:
            // Vulkan, VkDescriptorSetVariableDescriptorCountAllocateInfo), so that its
            // elements past it are as absent as those past any binding's count.
            let layout = match layout.variable {
                Some(b) => {
                    let mut mine = SetLayout::clone(&layout);
                    if let Some(l) = mine.bindings.get_mut(&b) {
                        l.count = l.count.min(counts.get(i).copied().unwrap_or(0));
                    }
                    Arc::new(mine)
                }
                None => layout,
            };
            // A sampler binding's immutable samplers are its descriptors from the start.
            let slots = layout
                .immutable
                .iter()
                .filter(|((b, _), _)| {
                    layout.bindings.get(b).map(|l| l.kind) == Some(vk::DescriptorType::SAMPLER)
                })
                .map(|(k, s)| (*k, Descriptor::Sampler(s.clone())))
                .collect();
            let handle = objects::insert(Arc::new(DescriptorSet {
                layout,
                pool: info.descriptor_pool.as_raw(),
                slots: Mutex::new(slots),
            }));
            sets.push(handle);
            // SAFETY: `out` holds `descriptorSetCount` handles (rule 1).
            unsafe { out.add(i).write(vk::DescriptorSet::from_raw(handle)) };
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// The counts of a `VkDescriptorSetVariableDescriptorCountAllocateInfo` in the chain `next`
/// (empty when there is none).
///
/// # Safety
/// `next` is a valid chain; the struct's array holds `descriptorSetCount` counts.
unsafe fn variable_counts(next: *const std::ffi::c_void) -> Result<Vec<u32>, Fail> {
    for (s_type, at) in unsafe { chain(next) } {
        if s_type == vk::StructureType::DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_ALLOCATE_INFO {
            // SAFETY: the struct its `sType` names, and its array (the caller's promise).
            let info =
                unsafe { &*at.cast::<vk::DescriptorSetVariableDescriptorCountAllocateInfo>() };
            let counts = unsafe {
                slice(
                    info.p_descriptor_counts,
                    info.descriptor_set_count,
                    "pDescriptorCounts",
                )?
            };
            return Ok(counts.to_vec());
        }
    }
    Ok(Vec::new())
}

pub unsafe extern "system" fn free_descriptor_sets(
    _device: vk::Device,
    pool: vk::DescriptorPool,
    count: u32,
    sets: *const vk::DescriptorSet,
) -> vk::Result {
    guard("vkFreeDescriptorSets", || {
        let pool = objects::get::<DescriptorPool>(pool.as_raw())?;
        if !pool.free_allowed {
            return Err("the pool was created without FREE_DESCRIPTOR_SET".into());
        }
        // SAFETY: the program's array (rule 1).
        for s in unsafe { slice(sets, count, "pDescriptorSets")? } {
            if *s != vk::DescriptorSet::null() {
                objects::remove::<DescriptorSet>(s.as_raw())?;
                lock(&pool.sets).retain(|h| *h != s.as_raw());
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// The `(binding, element)` slots `count` descriptors starting at `(binding, element)` fill:
/// past a binding's last element they continue in the next binding (Vulkan "Descriptor Set
/// Updates": consecutive binding updates).
fn slots(
    layout: &SetLayout,
    binding: u32,
    element: u32,
    count: u32,
) -> Result<Vec<(u32, u32)>, String> {
    let mut out = Vec::new();
    let mut bindings = layout.bindings.range(binding..);
    let (mut b, mut lb) = bindings
        .next()
        .filter(|(b, _)| **b == binding)
        .ok_or_else(|| format!("the set layout has no binding {binding}"))?;
    let mut e = element;
    while out.len() < count as usize {
        if e < lb.count {
            out.push((*b, e));
            e += 1;
        } else {
            (b, lb) = bindings.next().ok_or_else(|| {
                format!("{count} descriptors from binding {binding} run past the layout")
            })?;
            e = 0;
        }
    }
    Ok(out)
}

/// The descriptor a `VkDescriptorBufferInfo` writes: a buffer, or with `nullDescriptor`
/// (`null_ok`) a `VK_NULL_HANDLE` buffer, which is bound to nothing.
fn buffer_descriptor(i: &vk::DescriptorBufferInfo, null_ok: bool) -> Result<Descriptor, Fail> {
    if i.buffer != vk::Buffer::null() {
        return Ok(Descriptor::Buffer {
            buffer: objects::get::<Buffer>(i.buffer.as_raw())?,
            offset: i.offset,
            range: i.range,
        });
    }
    if !null_ok {
        return Err(
            "VUID-VkDescriptorBufferInfo-buffer-02998: \"If the nullDescriptor feature is not enabled, buffer must not be VK_NULL_HANDLE\"".into(),
        );
    }
    if i.offset != 0 || i.range != vk::WHOLE_SIZE {
        return Err(format!(
            "VUID-VkDescriptorBufferInfo-buffer-02999: \"If buffer is VK_NULL_HANDLE, offset must be zero and range must be VK_WHOLE_SIZE\" (offset {}, range {})",
            i.offset, i.range
        )
        .into());
    }
    Ok(Descriptor::Null)
}

pub unsafe extern "system" fn update_descriptor_sets(
    device: vk::Device,
    write_count: u32,
    writes: *const vk::WriteDescriptorSet<'_>,
    copy_count: u32,
    copies: *const vk::CopyDescriptorSet<'_>,
) {
    guard_void("vkUpdateDescriptorSets", || {
        let null_ok = objects::get::<Device>(device.as_raw())?.null_descriptor;
        // SAFETY: the program's arrays (rule 1).
        for w in unsafe { slice(writes, write_count, "pDescriptorWrites")? } {
            let set = objects::get::<DescriptorSet>(w.dst_set.as_raw())?;
            let targets = slots(
                &set.layout,
                w.dst_binding,
                w.dst_array_element,
                w.descriptor_count,
            )?;
            let buffer_kind = matches!(
                w.descriptor_type,
                vk::DescriptorType::STORAGE_BUFFER
                    | vk::DescriptorType::UNIFORM_BUFFER
                    | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                    | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
            );
            // SAFETY: the write's arrays for its descriptor type (rule 1).
            let images = unsafe { super::images::descriptors(w, null_ok)? };
            let descriptors: Vec<Descriptor> = if let Some(images) = images {
                images
            } else if buffer_kind {
                // SAFETY: a buffer descriptor write holds `descriptorCount` buffer infos.
                unsafe { slice(w.p_buffer_info, w.descriptor_count, "pBufferInfo")? }
                    .iter()
                    .map(|i| buffer_descriptor(i, null_ok))
                    .collect::<Result<_, Fail>>()?
            } else {
                vec![Descriptor::Unsupported(w.descriptor_type); targets.len()]
            };
            let mut slots = lock(&set.slots);
            for (slot, d) in targets.into_iter().zip(descriptors) {
                slots.insert(slot, super::images::with_immutable(&set.layout, slot, d));
            }
        }
        // SAFETY: the program's array (rule 1).
        for c in unsafe { slice(copies, copy_count, "pDescriptorCopies")? } {
            let src = objects::get::<DescriptorSet>(c.src_set.as_raw())?;
            let dst = objects::get::<DescriptorSet>(c.dst_set.as_raw())?;
            let from = slots(
                &src.layout,
                c.src_binding,
                c.src_array_element,
                c.descriptor_count,
            )?;
            let to = slots(
                &dst.layout,
                c.dst_binding,
                c.dst_array_element,
                c.descriptor_count,
            )?;
            let values: Vec<Option<Descriptor>> = {
                let s = lock(&src.slots);
                from.iter().map(|k| s.get(k).cloned()).collect()
            };
            let mut d = lock(&dst.slots);
            for (k, v) in to.into_iter().zip(values) {
                match v {
                    Some(v) => d.insert(k, v),
                    None => d.remove(&k),
                };
            }
        }
        Ok(())
    })
}

pub unsafe extern "system" fn create_pipeline_layout(
    device: vk::Device,
    info: *const vk::PipelineLayoutCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::PipelineLayout,
) -> vk::Result {
    guard("vkCreatePipelineLayout", || {
        objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's struct and arrays (rule 1).
        let info = unsafe { read(info, "pCreateInfo")? };
        let sets = unsafe { slice(info.p_set_layouts, info.set_layout_count, "pSetLayouts")? };
        let ranges = unsafe {
            slice(
                info.p_push_constant_ranges,
                info.push_constant_range_count,
                "pPushConstantRanges",
            )?
        };
        let sets = sets
            .iter()
            .map(|l| objects::get::<SetLayout>(l.as_raw()))
            .collect::<Result<Vec<_>, _>>()?;
        let push_size = ranges
            .iter()
            .map(|r| r.offset.saturating_add(r.size))
            .max()
            .unwrap_or(0);
        if push_size > crate::caps::MAX_PUSH_CONSTANTS {
            return Err(format!(
                "push constants end at byte {push_size}, past maxPushConstantsSize"
            )
            .into());
        }
        let handle = objects::insert(Arc::new(PipelineLayout { sets, push_size }));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::PipelineLayout::from_raw(handle), "pPipelineLayout")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_pipeline_layout(
    _device: vk::Device,
    layout: vk::PipelineLayout,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyPipelineLayout", || {
        if layout != vk::PipelineLayout::null() {
            objects::remove::<PipelineLayout>(layout.as_raw())?;
        }
        Ok(())
    })
}

/// Reads one pipeline's create-info into a request.
///
/// # Safety
/// `info` is a valid create-info with a valid stage, name, specialization and chain.
unsafe fn request(info: &vk::ComputePipelineCreateInfo<'_>) -> Result<PipelineRequest, Fail> {
    let stage = &info.stage;
    let module = objects::get::<ShaderModule>(stage.module.as_raw())?;
    // SAFETY: the caller's promise for every pointer below (rule 1).
    let entry = unsafe { c_str(stage.p_name, "pName")? }
        .to_string_lossy()
        .into_owned();
    let mut spec = tangle_exec::SpecConstants::new();
    if let Some(s) = unsafe { stage.p_specialization_info.as_ref() } {
        let entries = unsafe { slice(s.p_map_entries, s.map_entry_count, "pMapEntries")? };
        let data = unsafe { slice(s.p_data.cast::<u8>(), s.data_size as u32, "pData")? };
        for e in entries {
            let bytes = data
                .get(e.offset as usize..(e.offset as usize).saturating_add(e.size))
                .filter(|b| matches!(b.len(), 1 | 2 | 4 | 8))
                .ok_or_else(|| {
                    format!(
                        "specialization constant {} lies outside pData or has size {}",
                        e.constant_id, e.size
                    )
                })?;
            let mut word = [0u8; 8];
            word[..bytes.len()].copy_from_slice(bytes);
            spec.insert(e.constant_id, u64::from_le_bytes(word));
        }
    }
    let mut subgroup_size = None;
    // The stage's structure overrides the pipeline's ("Pipeline Robustness").
    let mut robustness = crate::robustness::PipelineRobustness::default();
    for next in [info.p_next, stage.p_next] {
        for (s_type, at) in unsafe { chain(next) } {
            if s_type == vk::StructureType::PIPELINE_ROBUSTNESS_CREATE_INFO_EXT {
                // SAFETY: the struct its `sType` names.
                let r = unsafe { &*at.cast::<vk::PipelineRobustnessCreateInfoEXT>() };
                robustness = crate::robustness::PipelineRobustness::from_info(r)?;
            }
        }
    }
    for (s_type, at) in unsafe { chain(stage.p_next) } {
        if s_type == vk::StructureType::PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO {
            // SAFETY: the struct its `sType` names.
            let r = unsafe { &*at.cast::<vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo>() };
            subgroup_size = Some(r.required_subgroup_size);
        }
    }
    Ok(PipelineRequest {
        module,
        entry,
        spec,
        subgroup_size,
        full_subgroups: stage
            .flags
            .contains(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS),
        layout: objects::get::<PipelineLayout>(info.layout.as_raw())?,
        robustness,
    })
}

pub unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    _cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::ComputePipelineCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Pipeline,
) -> vk::Result {
    guard("vkCreateComputePipelines", || {
        let d = objects::get::<Device>(device.as_raw())?;
        // SAFETY: the program's array (rule 1).
        let infos = unsafe { slice(infos, count, "pCreateInfos")? };
        if out.is_null() && count > 0 {
            return Err("pPipelines is NULL".into());
        }
        let mut result = vk::Result::SUCCESS;
        for (i, info) in infos.iter().enumerate() {
            // SAFETY: each create-info is valid (rule 1).
            let made = unsafe { request(info) }.and_then(|r| {
                if r.robustness != Default::default() && !d.pipeline_robustness {
                    return Err(Fail::from(
                        "VkPipelineRobustnessCreateInfoEXT asks for a buffer behaviour other than DEVICE_DEFAULT, but the device was created without pipelineRobustness (VUID-VkPipelineRobustnessCreateInfo-pipelineRobustness-06926)",
                    ));
                }
                crate::pipeline::compute_pipeline(&d.caps, r)
                    .map_err(|e| Fail(vk::Result::ERROR_INVALID_SHADER_NV, e))
            });
            let handle = match made {
                Ok(p) => objects::insert(Arc::new(p)),
                Err(Fail(code, message)) => {
                    crate::config::say(&format!(
                        "vkCreateComputePipelines: pipeline {i}: {message}"
                    ));
                    result = code;
                    0
                }
            };
            // SAFETY: `out` holds `createInfoCount` handles (rule 1); a failed one is null.
            unsafe { out.add(i).write(vk::Pipeline::from_raw(handle)) };
        }
        Ok(result)
    })
}

pub unsafe extern "system" fn destroy_pipeline(
    _device: vk::Device,
    pipeline: vk::Pipeline,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyPipeline", || {
        if pipeline != vk::Pipeline::null() {
            objects::remove::<objects::Pipeline>(pipeline.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn create_pipeline_cache(
    device: vk::Device,
    _info: *const vk::PipelineCacheCreateInfo<'_>,
    _allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::PipelineCache,
) -> vk::Result {
    guard("vkCreatePipelineCache", || {
        objects::get::<Device>(device.as_raw())?;
        let handle = objects::insert(Arc::new(PipelineCache));
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(out, vk::PipelineCache::from_raw(handle), "pPipelineCache")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_pipeline_cache(
    _device: vk::Device,
    cache: vk::PipelineCache,
    _allocator: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyPipelineCache", || {
        if cache != vk::PipelineCache::null() {
            objects::remove::<PipelineCache>(cache.as_raw())?;
        }
        Ok(())
    })
}

pub unsafe extern "system" fn get_pipeline_cache_data(
    _device: vk::Device,
    cache: vk::PipelineCache,
    size: *mut usize,
    _data: *mut std::ffi::c_void,
) -> vk::Result {
    guard("vkGetPipelineCacheData", || {
        objects::get::<PipelineCache>(cache.as_raw())?;
        // The cache holds nothing: zero bytes of data.
        // SAFETY: the program's output pointer (rule 1).
        unsafe { write(size, 0, "pDataSize")? };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn merge_pipeline_caches(
    _device: vk::Device,
    _dst: vk::PipelineCache,
    _count: u32,
    _src: *const vk::PipelineCache,
) -> vk::Result {
    vk::Result::SUCCESS
}

pub unsafe extern "system" fn set_debug_utils_object_name(
    _device: vk::Device,
    info: *const vk::DebugUtilsObjectNameInfoEXT<'_>,
) -> vk::Result {
    guard("vkSetDebugUtilsObjectNameEXT", || {
        // SAFETY: the program's struct and its name string (rule 1).
        let info = unsafe { read(info, "pNameInfo")? };
        // Findings name pipelines; other objects' names are not shown anywhere yet.
        if info.object_type == vk::ObjectType::PIPELINE {
            let p = objects::get::<objects::Pipeline>(info.object_handle)?;
            let name = match info.p_object_name.is_null() {
                true => None,
                // SAFETY: a non-null name is a valid string (rule 1).
                false => Some(
                    unsafe { c_str(info.p_object_name, "pObjectName")? }
                        .to_string_lossy()
                        .into_owned(),
                ),
            };
            *lock(&p.debug_name) = name;
        }
        Ok(vk::Result::SUCCESS)
    })
}
