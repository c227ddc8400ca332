//! The Vulkan side of the driver-overhead benchmark (`tangle bench driver`): one small compute
//! pipeline over one storage buffer, timed as a 1-workgroup dispatch per submission (record,
//! submit, execute, fence wait) and as one command buffer of many dispatches with a barrier
//! between each two (submit to fence). A child of [`super`], the crate's one `unsafe` module,
//! under its soundness rules: every object lives in an [`Objects`] guard that destroys it after
//! the last fence wait, and nothing is submitted while an earlier submission may still run.

use super::{api, memory_type, Gpu, Instance, Objects};
use crate::error::VulkanError;
use ash::vk;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one device measured.
#[derive(Debug, Clone)]
pub struct Overhead {
    /// One dispatch per submission, recorded, submitted and waited for: the mean over the
    /// fastest of the rounds.
    pub single: Duration,
    /// One submission of a command buffer of the batch's dispatches, submit to fence: the
    /// fastest of the rounds.
    pub batch: Duration,
    /// The buffer's bytes after every dispatch ran.
    pub bytes: Vec<u8>,
    /// Dispatches run in all (warm-up included), for checking `bytes`.
    pub dispatches: usize,
}

/// How much to run.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Submissions of one dispatch per round.
    pub singles: usize,
    /// Dispatches in the batch's command buffer.
    pub batch: usize,
    /// Rounds of each, the fastest counted.
    pub rounds: usize,
    /// The longest one fence wait may take.
    pub timeout: Duration,
}

/// Runs `spirv`'s `main` (one storage buffer at set 0 binding 0, holding `input`; no push or
/// specialization constants) on `physical` as `shape` says.
pub fn measure(
    instance: Arc<Instance>,
    physical: vk::PhysicalDevice,
    spirv: &[u32],
    input: &[u8],
    shape: Shape,
) -> Result<Overhead, VulkanError> {
    if input.is_empty() {
        return Err(VulkanError::Invalid("an empty buffer".into()));
    }
    let mut gpu = Gpu::open(instance, physical, &BTreeSet::new(), &BTreeSet::new())?;
    let (result, broken) = {
        let mut o = Objects::new(&gpu.device);
        let result = run(&gpu, &mut o, spirv, input, shape);
        // A timed-out or lost submission may still use the objects: leaked, never freed
        // under it, and the device with them (`Gpu`'s Drop).
        o.leak = matches!(
            result,
            Err(VulkanError::Timeout(_)) | Err(VulkanError::DeviceLost(_))
        );
        (result, o.leak)
    };
    gpu.broken = broken;
    result
}

/// Creates the objects into `o` and times the two shapes.
fn run(
    gpu: &Gpu,
    o: &mut Objects<'_>,
    spirv: &[u32],
    input: &[u8],
    shape: Shape,
) -> Result<Overhead, VulkanError> {
    let d = &gpu.device;
    let size = input.len() as u64;
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: `info` is a live local; the size is not zero.
    let buffer = unsafe { d.create_buffer(&info, None) }.map_err(api("vkCreateBuffer"))?;
    // SAFETY: `buffer` was just created on `d`.
    let needs = unsafe { d.get_buffer_memory_requirements(buffer) };
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let Some(type_index) = memory_type(&gpu.memory, needs.memory_type_bits, wanted) else {
        // SAFETY: the buffer is unused and destroyed once.
        unsafe { d.destroy_buffer(buffer, None) };
        return Err(VulkanError::Unsupported(
            "no host-visible, coherent memory type".into(),
        ));
    };
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(needs.size)
        .memory_type_index(type_index);
    // SAFETY: `alloc` is a live local.
    let memory = match unsafe { d.allocate_memory(&alloc, None) } {
        Ok(m) => m,
        Err(r) => {
            // SAFETY: the buffer is unused and destroyed once.
            unsafe { d.destroy_buffer(buffer, None) };
            return Err(api("vkAllocateMemory")(r));
        }
    };
    o.buffers
        .push((buffer, memory, std::ptr::null_mut(), input.len()));
    // SAFETY: a fresh buffer and memory of a type its requirements allow, offset 0.
    unsafe { d.bind_buffer_memory(buffer, memory, 0) }.map_err(api("vkBindBufferMemory"))?;
    // SAFETY: host-visible memory, mapped once, whole (unmapped when freed).
    let ptr = unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
        .map_err(api("vkMapMemory"))?
        .cast::<u8>();
    // SAFETY: the mapping covers at least `needs.size` >= `input.len()` bytes, does not overlap
    // `input`, and no submission uses the memory yet.
    unsafe { std::ptr::copy_nonoverlapping(input.as_ptr(), ptr, input.len()) };
    let bindings = [vk::DescriptorSetLayoutBinding::default()
        .binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)];
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    // SAFETY: `info` and `bindings` are live locals.
    let layout = unsafe { d.create_descriptor_set_layout(&info, None) }
        .map_err(api("vkCreateDescriptorSetLayout"))?;
    o.set_layouts.push(layout);
    let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&o.set_layouts);
    // SAFETY: the set layout is alive in `o`; `info` is a live local.
    o.pipeline_layout =
        unsafe { d.create_pipeline_layout(&info, None) }.map_err(api("vkCreatePipelineLayout"))?;
    let sizes = [vk::DescriptorPoolSize::default()
        .ty(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)];
    let info = vk::DescriptorPoolCreateInfo::default()
        .max_sets(1)
        .pool_sizes(&sizes);
    // SAFETY: `info` and `sizes` are live locals.
    o.descriptor_pool =
        unsafe { d.create_descriptor_pool(&info, None) }.map_err(api("vkCreateDescriptorPool"))?;
    let info = vk::DescriptorSetAllocateInfo::default()
        .descriptor_pool(o.descriptor_pool)
        .set_layouts(&o.set_layouts);
    // SAFETY: the pool holds one set of one storage buffer.
    let sets =
        unsafe { d.allocate_descriptor_sets(&info) }.map_err(api("vkAllocateDescriptorSets"))?;
    let set = sets
        .first()
        .copied()
        .ok_or_else(|| VulkanError::Invalid("no descriptor set".into()))?;
    let buffer_info = [vk::DescriptorBufferInfo::default()
        .buffer(buffer)
        .offset(0)
        .range(size)];
    let writes = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&buffer_info)];
    // SAFETY: the write names the set's one storage-buffer binding and a live buffer.
    unsafe { d.update_descriptor_sets(&writes, &[]) };
    let info = vk::ShaderModuleCreateInfo::default().code(spirv);
    // SAFETY: `spirv` is a live word slice.
    o.shader = unsafe { d.create_shader_module(&info, None) }.map_err(|r| {
        VulkanError::Invalid(format!("vkCreateShaderModule refused the module: {r:?}"))
    })?;
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(o.shader)
        .name(c"main");
    let infos = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(o.pipeline_layout)];
    // SAFETY: the stage and its entry name are live; the module and layout are alive in `o`.
    o.pipeline =
        match unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &infos, None) } {
            Ok(p) => p.first().copied().unwrap_or_default(),
            Err((p, r)) => {
                o.pipeline = p.first().copied().unwrap_or_default();
                return Err(VulkanError::Invalid(format!(
                    "vkCreateComputePipelines refused the pipeline: {r:?}"
                )));
            }
        };
    let info = vk::CommandPoolCreateInfo::default()
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
        .queue_family_index(gpu.family);
    // SAFETY: `info` is a live local.
    o.command_pool =
        unsafe { d.create_command_pool(&info, None) }.map_err(api("vkCreateCommandPool"))?;
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(o.command_pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(2);
    // SAFETY: the pool is alive; the buffers are freed with it.
    let cmds =
        unsafe { d.allocate_command_buffers(&info) }.map_err(api("vkAllocateCommandBuffers"))?;
    let &[single, batch] = cmds.as_slice() else {
        return Err(VulkanError::Invalid("not two command buffers".into()));
    };
    // SAFETY: a fresh, unsignalled fence.
    o.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
        .map_err(api("vkCreateFence"))?;
    let nanos = u64::try_from(shape.timeout.as_nanos()).unwrap_or(u64::MAX);
    let fence = o.fence;
    // Submits `cmd` and waits for it; the fence is reset for the next one.
    let submit = |cmd: vk::CommandBuffer| -> Result<(), VulkanError> {
        let cmds = [cmd];
        let info = [vk::SubmitInfo::default().command_buffers(&cmds)];
        // SAFETY: `cmd` is fully recorded and not pending (every submission is waited for
        // before the next); the fence is unsignalled.
        unsafe { d.queue_submit(gpu.queue, &info, fence) }.map_err(api("vkQueueSubmit"))?;
        // SAFETY: the fence belongs to `d`.
        match unsafe { d.wait_for_fences(&[fence], true, nanos) } {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                return Err(VulkanError::Timeout(shape.timeout.as_secs_f64()))
            }
            Err(r) => return Err(api("vkWaitForFences")(r)),
        }
        // SAFETY: the fence is signalled and no submission uses it.
        unsafe { d.reset_fences(&[fence]) }.map_err(api("vkResetFences"))
    };
    // Each dispatch's writes made visible to the next dispatch's reads and writes, and the
    // last one's to the host's read at the end.
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
    let to_host = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // Records `count` dispatches into `cmd` (reset by its begin: the pool allows it).
    let record = |cmd: vk::CommandBuffer, count: usize| -> Result<(), VulkanError> {
        let begin = vk::CommandBufferBeginInfo::default();
        // SAFETY: `cmd` is not pending (every submission was waited for); the pipeline, its
        // layout and the set are alive and compatible (one layout made them).
        unsafe {
            d.begin_command_buffer(cmd, &begin)
                .map_err(api("vkBeginCommandBuffer"))?;
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, o.pipeline);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                o.pipeline_layout,
                0,
                &sets,
                &[],
            );
            for i in 0..count {
                if i > 0 {
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::DependencyFlags::empty(),
                        &barrier,
                        &[],
                        &[],
                    );
                }
                d.cmd_dispatch(cmd, 1, 1, 1);
            }
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &to_host,
                &[],
                &[],
            );
            d.end_command_buffer(cmd).map_err(api("vkEndCommandBuffer"))
        }
    };
    let mut dispatches = 0;
    // Warm-up: the first dispatch compiles what a driver compiles lazily.
    record(single, 1)?;
    submit(single)?;
    dispatches += 1;
    let mut single_best = Duration::MAX;
    for _ in 0..shape.rounds {
        let start = Instant::now();
        for _ in 0..shape.singles {
            record(single, 1)?;
            submit(single)?;
        }
        single_best = single_best.min(start.elapsed());
        dispatches += shape.singles;
    }
    record(batch, shape.batch)?;
    let mut batch_best = Duration::MAX;
    for _ in 0..shape.rounds {
        let start = Instant::now();
        submit(batch)?;
        batch_best = batch_best.min(start.elapsed());
        dispatches += shape.batch;
    }
    // SAFETY: every submission was waited for, and each ends with a barrier making its writes
    // visible to the host (coherent memory). The mapping holds `input.len()` initialised bytes.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, input.len()) }.to_vec();
    Ok(Overhead {
        single: single_best / u32::try_from(shape.singles.max(1)).unwrap_or(u32::MAX),
        batch: batch_best,
        bytes,
        dispatches,
    })
}
