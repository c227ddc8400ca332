//! The Vulkan objects of a dispatch's bindings ([`crate::plan::Placement`]): one host-visible
//! `VkBuffer` per run of bindings sharing bytes (descriptors at their offsets, texel buffers as
//! buffer views), an image per image binding with a staging buffer its texels are copied in
//! from before the dispatch and out to after it (`vkCmdCopyBufferToImage`,
//! `vkCmdCopyImageToBuffer`, the image in `VK_IMAGE_LAYOUT_GENERAL` for the shader), samplers,
//! the descriptor writes, and the bytes read back. The soundness rules are [`super`]'s.

use super::{api, descriptor_type, memory_type, Gpu, Objects};
use crate::error::VulkanError;
use crate::features::Feature;
use crate::plan::{DispatchPlan, Placement};
use ash::vk;
use tangle_amber::backend::BindingKind;
use tangle_amber::ComputeJob;

/// Every binding kind, for the descriptor pool's sizes.
pub(super) const KINDS: [BindingKind; 8] = [
    BindingKind::Storage,
    BindingKind::Uniform,
    BindingKind::StorageImage,
    BindingKind::SampledImage,
    BindingKind::UniformTexelBuffer,
    BindingKind::StorageTexelBuffer,
    BindingKind::CombinedImageSampler,
    BindingKind::Sampler,
];

/// What each job binding became.
#[derive(Default)]
pub(super) struct Bound {
    /// By job binding: the descriptor's buffer, image and sampler parts.
    descriptors: Vec<Descriptor>,
    /// The images: (index into `Objects::images`, its staging buffer's index into
    /// `Objects::buffers`, extent).
    images: Vec<(usize, usize, [u32; 3])>,
    /// The index in `Objects::buffers` of the plan's first memory.
    first_memory: usize,
}

/// One descriptor's objects.
#[derive(Default, Clone, Copy)]
struct Descriptor {
    buffer: Option<(vk::Buffer, u64, u64)>,
    buffer_view: Option<vk::BufferView>,
    /// The view, and the image's index in [`Bound::images`].
    image: Option<(vk::ImageView, usize)>,
    sampler: Option<vk::Sampler>,
}

/// A host-visible, coherent buffer of `size` bytes, mapped and zeroed; its index in
/// `o.buffers`.
fn host_buffer(
    gpu: &Gpu,
    o: &mut Objects<'_>,
    size: u64,
    mut usage: vk::BufferUsageFlags,
    bda: bool,
) -> Result<usize, VulkanError> {
    let d = &gpu.device;
    if bda {
        usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    }
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: `info` is a live local; the plan refused empty buffers (size > 0).
    let buffer = unsafe { d.create_buffer(&info, None) }.map_err(api("vkCreateBuffer"))?;
    // SAFETY: `buffer` was just created on `d`.
    let needs = unsafe { d.get_buffer_memory_requirements(buffer) };
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let Some(type_index) = memory_type(&gpu.memory, needs.memory_type_bits, wanted) else {
        // SAFETY: the buffer is unused and destroyed once.
        unsafe { d.destroy_buffer(buffer, None) };
        return Err(VulkanError::Unsupported(
            "no host-visible, coherent memory type for a buffer".into(),
        ));
    };
    let mut flags =
        vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let mut alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(needs.size)
        .memory_type_index(type_index);
    if bda {
        alloc = alloc.push_next(&mut flags);
    }
    // SAFETY: `alloc` and its chain are live locals.
    let memory = match unsafe { d.allocate_memory(&alloc, None) } {
        Ok(m) => m,
        Err(r) => {
            // SAFETY: the buffer is unused and destroyed once.
            unsafe { d.destroy_buffer(buffer, None) };
            return Err(api("vkAllocateMemory")(r));
        }
    };
    let len =
        usize::try_from(size).map_err(|_| VulkanError::Unsupported("a huge buffer".into()))?;
    o.buffers.push((buffer, memory, std::ptr::null_mut(), len));
    // SAFETY: fresh buffer and memory of a type its requirements allow, offset 0.
    unsafe { d.bind_buffer_memory(buffer, memory, 0) }.map_err(api("vkBindBufferMemory"))?;
    // SAFETY: host-visible memory, mapped once, whole.
    let ptr = unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
        .map_err(api("vkMapMemory"))?
        .cast::<u8>();
    // SAFETY: the mapping covers at least `needs.size` >= `len` bytes; the GPU does not use the
    // memory yet.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    let index = o.buffers.len() - 1;
    if let Some(last) = o.buffers.get_mut(index) {
        last.2 = ptr;
    }
    Ok(index)
}

/// Copies `bytes` into buffer `index` of `o` at `offset`.
fn fill(o: &Objects<'_>, index: usize, offset: u64, bytes: &[u8]) {
    let Some((_, _, ptr, len)) = o.buffers.get(index) else {
        return;
    };
    let Ok(offset) = usize::try_from(offset) else {
        return;
    };
    if offset
        .checked_add(bytes.len())
        .is_some_and(|end| end <= *len)
    {
        // SAFETY: the mapping holds `len` bytes and the range lies inside it; the job's vector
        // does not overlap it; the GPU does not use the memory yet.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.add(offset), bytes.len()) };
    }
}

/// The format features the device must offer for a binding of `kind`.
fn format_features(kind: BindingKind, linear: bool) -> vk::FormatFeatureFlags {
    use vk::FormatFeatureFlags as F;
    match kind {
        BindingKind::StorageImage => F::STORAGE_IMAGE,
        BindingKind::SampledImage => F::SAMPLED_IMAGE,
        BindingKind::CombinedImageSampler if linear => {
            F::SAMPLED_IMAGE | F::SAMPLED_IMAGE_FILTER_LINEAR
        }
        BindingKind::CombinedImageSampler => F::SAMPLED_IMAGE,
        BindingKind::UniformTexelBuffer => F::UNIFORM_TEXEL_BUFFER,
        BindingKind::StorageTexelBuffer => F::STORAGE_TEXEL_BUFFER,
        _ => F::empty(),
    }
}

/// Refuses a format the device does not offer for `kind` (exit 77, naming both).
fn check_format(
    gpu: &Gpu,
    format: vk::Format,
    kind: BindingKind,
    linear: bool,
) -> Result<(), VulkanError> {
    // SAFETY: the physical device belongs to the Gpu's instance, which is alive.
    let props = unsafe {
        gpu._instance
            .instance
            .get_physical_device_format_properties(gpu.physical, format)
    };
    let texel = matches!(
        kind,
        BindingKind::UniformTexelBuffer | BindingKind::StorageTexelBuffer
    );
    let has = if texel {
        props.buffer_features
    } else {
        props.optimal_tiling_features
    };
    let wanted = format_features(kind, linear);
    if !has.contains(wanted) {
        return Err(VulkanError::Unsupported(format!(
            "{format:?} for a {kind:?} binding: the device does not offer {wanted:?}"
        )));
    }
    Ok(())
}

/// Creates the objects of every binding.
pub(super) fn create(
    gpu: &Gpu,
    o: &mut Objects<'_>,
    job: &ComputeJob,
    plan: &DispatchPlan,
) -> Result<Bound, VulkanError> {
    let d = &gpu.device;
    let bda = plan.features.contains(&Feature::BufferDeviceAddress);
    let first = o.buffers.len();
    let mut bound = Bound {
        descriptors: vec![Descriptor::default(); job.bindings.len()],
        images: Vec::new(),
        first_memory: first,
    };
    // The shared buffers, each with the usage of all its descriptors.
    for memory in &plan.memories {
        let usage = memory
            .members
            .iter()
            .filter_map(|&i| job.bindings.get(i))
            .fold(vk::BufferUsageFlags::empty(), |u, b| {
                u | match b.kind {
                    BindingKind::Uniform => vk::BufferUsageFlags::UNIFORM_BUFFER,
                    BindingKind::UniformTexelBuffer => vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
                    BindingKind::StorageTexelBuffer => vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
                    _ => vk::BufferUsageFlags::STORAGE_BUFFER,
                }
            });
        host_buffer(gpu, o, memory.size, usage, bda)?;
    }
    for (i, (b, place)) in job.bindings.iter().zip(&plan.placements).enumerate() {
        let mut descriptor = Descriptor::default();
        match *place {
            Placement::Buffer {
                memory,
                offset,
                format,
            } => {
                let Some(&(buffer, ..)) = o.buffers.get(first + memory) else {
                    continue;
                };
                fill(o, first + memory, offset, &b.bytes);
                let range = b.bytes.len() as u64;
                descriptor.buffer = Some((buffer, offset, range));
                if let Some(format) = format {
                    check_format(gpu, format, b.kind, false)?;
                    let info = vk::BufferViewCreateInfo::default()
                        .buffer(buffer)
                        .format(format)
                        .offset(offset)
                        .range(range);
                    // SAFETY: `info` is a live local naming a live buffer with the texel usage;
                    // the plan checked the offset's alignment and the range's texel count.
                    let view = unsafe { d.create_buffer_view(&info, None) }
                        .map_err(api("vkCreateBufferView"))?;
                    o.buffer_views.push(view);
                    descriptor.buffer_view = Some(view);
                }
            }
            Placement::Image {
                format,
                dimensions,
                extent,
            } => {
                let linear = b.sampler.is_some_and(|s| {
                    s.mag_filter == tangle_amber::backend::Filter::Linear
                        || s.min_filter == tangle_amber::backend::Filter::Linear
                });
                check_format(gpu, format, b.kind, linear)?;
                let (image_type, view_type) = match dimensions {
                    1 => (vk::ImageType::TYPE_1D, vk::ImageViewType::TYPE_1D),
                    3 => (vk::ImageType::TYPE_3D, vk::ImageViewType::TYPE_3D),
                    _ => (vk::ImageType::TYPE_2D, vk::ImageViewType::TYPE_2D),
                };
                let usage = vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST
                    | match b.kind {
                        BindingKind::StorageImage => vk::ImageUsageFlags::STORAGE,
                        _ => vk::ImageUsageFlags::SAMPLED,
                    };
                let info = vk::ImageCreateInfo::default()
                    .image_type(image_type)
                    .format(format)
                    .extent(vk::Extent3D {
                        width: extent[0],
                        height: extent[1],
                        depth: extent[2],
                    })
                    .mip_levels(1)
                    .array_layers(1)
                    .samples(vk::SampleCountFlags::TYPE_1)
                    .tiling(vk::ImageTiling::OPTIMAL)
                    .usage(usage)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE)
                    .initial_layout(vk::ImageLayout::UNDEFINED);
                // SAFETY: `info` is a live local; the format offers the usage (checked above).
                let image = unsafe { d.create_image(&info, None) }.map_err(api("vkCreateImage"))?;
                // SAFETY: `image` was just created on `d`.
                let needs = unsafe { d.get_image_memory_requirements(image) };
                let type_index = memory_type(
                    &gpu.memory,
                    needs.memory_type_bits,
                    vk::MemoryPropertyFlags::DEVICE_LOCAL,
                )
                .or_else(|| {
                    memory_type(
                        &gpu.memory,
                        needs.memory_type_bits,
                        vk::MemoryPropertyFlags::empty(),
                    )
                });
                let alloc = vk::MemoryAllocateInfo::default()
                    .allocation_size(needs.size)
                    .memory_type_index(type_index.unwrap_or(0));
                // SAFETY: `alloc` is a live local.
                let memory = match unsafe { d.allocate_memory(&alloc, None) } {
                    Ok(m) if type_index.is_some() => m,
                    Ok(m) => {
                        // SAFETY: unused, freed once.
                        unsafe { d.free_memory(m, None) };
                        // SAFETY: the image is unused and destroyed once.
                        unsafe { d.destroy_image(image, None) };
                        return Err(VulkanError::Unsupported(
                            "no memory type for an image".into(),
                        ));
                    }
                    Err(r) => {
                        // SAFETY: the image is unused and destroyed once.
                        unsafe { d.destroy_image(image, None) };
                        return Err(api("vkAllocateMemory")(r));
                    }
                };
                o.images.push((image, memory));
                // SAFETY: fresh image and memory of a type its requirements allow, offset 0.
                unsafe { d.bind_image_memory(image, memory, 0) }
                    .map_err(api("vkBindImageMemory"))?;
                let range = vk::ImageSubresourceRange::default()
                    .aspect_mask(vk::ImageAspectFlags::COLOR)
                    .level_count(1)
                    .layer_count(1);
                let info = vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(view_type)
                    .format(format)
                    .subresource_range(range);
                // SAFETY: `info` is a live local naming a live, bound image.
                let view = unsafe { d.create_image_view(&info, None) }
                    .map_err(api("vkCreateImageView"))?;
                o.image_views.push(view);
                let staging = host_buffer(
                    gpu,
                    o,
                    b.bytes.len() as u64,
                    vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                    false,
                )?;
                fill(o, staging, 0, &b.bytes);
                bound.images.push((o.images.len() - 1, staging, extent));
                descriptor.image = Some((view, bound.images.len() - 1));
            }
            Placement::Sampler => {}
        }
        if let Some(state) = &b.sampler {
            let info = crate::resources::sampler_info(state).map_err(VulkanError::Unsupported)?;
            // SAFETY: `info` is a live local with no chain.
            let sampler = unsafe { d.create_sampler(&info, None) }.map_err(|r| match r {
                vk::Result::ERROR_OUT_OF_HOST_MEMORY
                | vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
                | vk::Result::ERROR_DEVICE_LOST => api("vkCreateSampler")(r),
                // A driver that checks the create-info refuses a sampler no device can make
                // (tangle's refuses unnormalized coordinates with repeat, as the CPU backend
                // does): the script is invalid.
                r => VulkanError::Invalid(format!("vkCreateSampler refused the sampler: {r:?}")),
            })?;
            o.samplers.push(sampler);
            descriptor.sampler = Some(sampler);
        }
        if let Some(slot) = bound.descriptors.get_mut(i) {
            *slot = descriptor;
        }
    }
    Ok(bound)
}

/// Writes every element of every binding into its set.
pub(super) fn write_sets(
    d: &ash::Device,
    plan: &DispatchPlan,
    sets: &[vk::DescriptorSet],
    bound: &Bound,
) {
    // The infos first, so the writes can borrow them.
    let mut buffers = Vec::new();
    let mut images = Vec::new();
    let mut views = Vec::new();
    let mut targets = Vec::new();
    for (set, handle) in plan.sets.iter().zip(sets) {
        for p in set {
            for (element, &job_index) in p.elements.iter().enumerate() {
                let Some(desc) = bound.descriptors.get(job_index) else {
                    continue;
                };
                targets.push((*handle, p.binding, element as u32, p.kind));
                buffers.push([desc.buffer.map_or_else(Default::default, |(b, o, r)| {
                    vk::DescriptorBufferInfo::default()
                        .buffer(b)
                        .offset(o)
                        .range(r)
                })]);
                let mut info = vk::DescriptorImageInfo::default();
                if let Some((view, _)) = desc.image {
                    info = info.image_view(view).image_layout(vk::ImageLayout::GENERAL);
                }
                if let Some(sampler) = desc.sampler {
                    info = info.sampler(sampler);
                }
                images.push([info]);
                views.push([desc.buffer_view.unwrap_or_default()]);
            }
        }
    }
    let writes: Vec<vk::WriteDescriptorSet> = targets
        .iter()
        .zip(buffers.iter().zip(images.iter().zip(&views)))
        .map(
            |(&(set, binding, element, kind), (buffer, (image, view)))| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(binding)
                    .dst_array_element(element)
                    .descriptor_type(descriptor_type(kind));
                match kind {
                    BindingKind::Storage | BindingKind::Uniform => w.buffer_info(buffer),
                    BindingKind::UniformTexelBuffer | BindingKind::StorageTexelBuffer => {
                        w.texel_buffer_view(view)
                    }
                    _ => w.image_info(image),
                }
            },
        )
        .collect();
    // SAFETY: every write names a set, binding, element and type of its layout and live
    // buffers, views and samplers; the infos outlive the call.
    unsafe { d.update_descriptor_sets(&writes, &[]) };
}

/// The region of a whole image's one level and layer, tightly packed in its staging buffer.
fn region(extent: [u32; 3]) -> [vk::BufferImageCopy; 1] {
    [vk::BufferImageCopy::default()
        .image_subresource(
            vk::ImageSubresourceLayers::default()
                .aspect_mask(vk::ImageAspectFlags::COLOR)
                .layer_count(1),
        )
        .image_extent(vk::Extent3D {
            width: extent[0],
            height: extent[1],
            depth: extent[2],
        })]
}

/// An image's layout transition, with the accesses it orders.
fn transition(
    image: vk::Image,
    from: (vk::ImageLayout, vk::AccessFlags),
    to: (vk::ImageLayout, vk::AccessFlags),
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .old_layout(from.0)
        .src_access_mask(from.1)
        .new_layout(to.0)
        .dst_access_mask(to.1)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(
            vk::ImageSubresourceRange::default()
                .aspect_mask(vk::ImageAspectFlags::COLOR)
                .level_count(1)
                .layer_count(1),
        )
}

/// Records the images' uploads: to `TRANSFER_DST_OPTIMAL`, the staging bytes copied in, then
/// to `GENERAL` for the shader. The host's writes to the staging buffers are visible to the
/// device at submission.
pub(super) fn record_uploads(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    o: &Objects<'_>,
    bound: &Bound,
) {
    let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    let shader = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
    for &(image, staging, extent) in &bound.images {
        let (Some(&(image, _)), Some(&(staging, ..))) =
            (o.images.get(image), o.buffers.get(staging))
        else {
            continue;
        };
        let before = [transition(
            image,
            (vk::ImageLayout::UNDEFINED, vk::AccessFlags::empty()),
            (dst, vk::AccessFlags::TRANSFER_WRITE),
        )];
        let after = [transition(
            image,
            (dst, vk::AccessFlags::TRANSFER_WRITE),
            (vk::ImageLayout::GENERAL, shader),
        )];
        // SAFETY: recording into the dispatch's command buffer; the image and staging buffer
        // are alive, the region lies in both (the plan checked the texel count).
        unsafe {
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &before,
            );
            d.cmd_copy_buffer_to_image(cmd, staging, image, dst, &region(extent));
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &after,
            );
        }
    }
}

/// Records the images' downloads into their staging buffers (after the barrier that made the
/// shader's writes visible to transfers), and the barrier making those visible to the host.
pub(super) fn record_downloads(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    o: &Objects<'_>,
    bound: &Bound,
) {
    if bound.images.is_empty() {
        return;
    }
    for &(image, staging, extent) in &bound.images {
        let (Some(&(image, _)), Some(&(staging, ..))) =
            (o.images.get(image), o.buffers.get(staging))
        else {
            continue;
        };
        // SAFETY: as in `record_uploads`; GENERAL is a valid source layout for a copy.
        unsafe {
            d.cmd_copy_image_to_buffer(
                cmd,
                image,
                vk::ImageLayout::GENERAL,
                staging,
                &region(extent),
            )
        };
    }
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // SAFETY: recording into the dispatch's command buffer.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// The bytes of every binding after the dispatch, in job order (a sampler's: none). Called
/// only after the dispatch's fence signalled.
pub(super) fn read_back(
    job: &ComputeJob,
    plan: &DispatchPlan,
    o: &Objects<'_>,
    bound: &Bound,
) -> Vec<Vec<u8>> {
    let first_memory = bound.first_memory;
    let read = |index: usize, offset: u64, len: usize| -> Option<Vec<u8>> {
        let (_, _, ptr, size) = o.buffers.get(index)?;
        let offset = usize::try_from(offset).ok()?;
        (offset.checked_add(len)? <= *size).then(|| {
            // SAFETY: the fence signalled after the barriers that made the shader's writes and
            // the images' copies visible to the host; the coherent mapping holds `size`
            // initialised bytes and the range lies inside it.
            unsafe { std::slice::from_raw_parts(ptr.add(offset), len) }.to_vec()
        })
    };
    job.bindings
        .iter()
        .zip(&plan.placements)
        .enumerate()
        .map(|(i, (b, place))| {
            let got = match *place {
                Placement::Buffer { memory, offset, .. } => {
                    read(first_memory + memory, offset, b.bytes.len())
                }
                Placement::Image { .. } => bound
                    .descriptors
                    .get(i)
                    .and_then(|d| d.image)
                    .and_then(|(_, k)| bound.images.get(k))
                    .and_then(|&(_, staging, _)| read(staging, 0, b.bytes.len())),
                Placement::Sampler => Some(Vec::new()),
            };
            got.unwrap_or_else(|| b.bytes.clone())
        })
        .collect()
}
