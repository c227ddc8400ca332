//! Helpers of the driver's tests through the real Vulkan loader (`ash`, `VK_DRIVER_FILES`
//! naming a manifest for the `libtangle_icd.so` cargo built): the loader set up for tangle's
//! driver alone, a device with a queue and command pool, memory, buffers, images, a compute
//! pipeline over a list of descriptor types, one-shot command buffers, and child processes for
//! tests that need another environment (the driver reads `TANGLE_*` from the process).
#![allow(dead_code)]

use ash::vk;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The driver library cargo built beside this test executable (`target/debug/deps`).
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable's folder");
    [deps.to_path_buf(), deps.join("..")]
        .iter()
        .find_map(|d| tangle_icd::manifest::find_library(d))
        .expect("cargo builds libtangle_icd.so before the crate's tests")
}

/// The manifest for [`library`], written once per test process.
pub fn manifest() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        let name = exe
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("tangle_icd_{name}_{}.json", std::process::id()));
        std::fs::write(&path, tangle_icd::manifest::json(&library())).expect("manifest written");
        path
    })
}

/// Set in a child test process.
pub const CHILD: &str = "TANGLE_ICD_TEST_CHILD";

/// Whether this process is a child run by [`child`].
pub fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// The loader, reading only tangle's manifest; the in-process tests see the default profile
/// and identity, children set their own.
pub fn entry() -> ash::Entry {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        std::env::set_var("VK_DRIVER_FILES", manifest());
        std::env::set_var("VK_ICD_FILENAMES", manifest());
        if !in_child() {
            for v in ["TANGLE_PROFILE", "TANGLE_REPORT", "TANGLE_IDENTITY"] {
                std::env::remove_var(v);
            }
        }
    });
    // SAFETY: loading the system's Vulkan loader runs its initialisers, which have no
    // preconditions.
    unsafe { ash::Entry::load() }.expect("the Vulkan loader (libvulkan.so.1) loads")
}

/// Runs test `name` of this executable again, alone, with `env` added; it must pass.
pub fn child(name: &str, env: &[(&str, &OsStr)]) -> Output {
    let exe = std::env::current_exe().expect("the test executable's path");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("VK_DRIVER_FILES", manifest())
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .output()
        .expect("the test executable runs");
    assert!(
        out.status.success(),
        "child {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// SPIR-V words of assembly text.
pub fn assemble(source: &str) -> Vec<u32> {
    let options = tangle_spirv::text::AssembleOptions::default();
    let (module, _) = tangle_spirv::text::assemble(source, &options).expect("the test's assembly");
    module.to_words()
}

/// Reads word `i` of a mapping.
pub fn word(ptr: *mut u32, i: usize) -> u32 {
    // SAFETY: the tests read inside allocations they sized, through the driver's mapping.
    unsafe { ptr.add(i).read_volatile() }
}

/// Writes word `i` of a mapping.
pub fn set_word(ptr: *mut u32, i: usize, v: u32) {
    // SAFETY: as for `word`.
    unsafe { ptr.add(i).write_volatile(v) }
}

/// An instance and its tangle device with one queue and a command pool.
pub struct Gpu {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub pool: vk::CommandPool,
}

/// A pipeline with its layout and one descriptor set.
pub struct Kernel {
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pub set: vk::DescriptorSet,
}

impl Gpu {
    /// A device with `robustBufferAccess` on or off, and `pipelineRobustness` on.
    pub fn new(robust_buffer_access: bool) -> Gpu {
        Gpu::with_features(robust_buffer_access, true)
    }

    /// A device with `robustBufferAccess` and `pipelineRobustness` on or off.
    pub fn with_features(robust_buffer_access: bool, pipeline_robustness: bool) -> Gpu {
        Gpu::with_null_descriptor(robust_buffer_access, pipeline_robustness, false)
    }

    /// A device with `robustBufferAccess`, `pipelineRobustness` and VK_EXT_robustness2's
    /// `nullDescriptor` on or off.
    pub fn with_null_descriptor(
        robust_buffer_access: bool,
        pipeline_robustness: bool,
        null_descriptor: bool,
    ) -> Gpu {
        let entry = entry();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: a valid create-info; everything is destroyed in `drop`.
        unsafe {
            let instance = entry.create_instance(&info, None).expect("an instance");
            let physical = instance.enumerate_physical_devices().expect("enumeration")[0];
            let priorities = [1.0];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(0)
                .queue_priorities(&priorities)];
            let mut pipeline_robustness =
                vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default()
                    .pipeline_robustness(pipeline_robustness);
            let mut robustness2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default()
                .null_descriptor(null_descriptor);
            let mut features = vk::PhysicalDeviceFeatures2::default()
                .features(
                    vk::PhysicalDeviceFeatures::default()
                        .robust_buffer_access(robust_buffer_access)
                        .shader_storage_image_write_without_format(true),
                )
                .push_next(&mut pipeline_robustness)
                .push_next(&mut robustness2);
            let extensions = [
                vk::EXT_PIPELINE_ROBUSTNESS_NAME.as_ptr(),
                vk::EXT_ROBUSTNESS2_NAME.as_ptr(),
            ];
            let info = vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .enabled_extension_names(&extensions)
                .push_next(&mut features);
            let device = instance
                .create_device(physical, &info, None)
                .expect("a device");
            let queue = device.get_device_queue(0, 0);
            let pool = device
                .create_command_pool(&vk::CommandPoolCreateInfo::default(), None)
                .expect("a command pool");
            Gpu {
                entry,
                instance,
                physical,
                device,
                queue,
                pool,
            }
        }
    }

    /// A mapped allocation of `size` bytes: its handle and its words.
    pub fn memory(&self, size: u64) -> (vk::DeviceMemory, *mut u32) {
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(0);
        // SAFETY: a valid allocate-info; the whole allocation, mapped once.
        unsafe {
            let memory = self.device.allocate_memory(&info, None).expect("memory");
            let ptr = self
                .device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .expect("mapped");
            (memory, ptr.cast())
        }
    }

    /// A buffer of `size` bytes bound to `memory` at `offset`.
    pub fn buffer(&self, memory: vk::DeviceMemory, offset: u64, size: u64) -> vk::Buffer {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
            | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER;
        let info = vk::BufferCreateInfo::default().size(size).usage(usage);
        // SAFETY: a valid create-info; the memory is live and large enough.
        unsafe {
            let buffer = self.device.create_buffer(&info, None).expect("a buffer");
            self.device
                .bind_buffer_memory(buffer, memory, offset)
                .expect("bound");
            buffer
        }
    }

    /// A 2D image of `format` and `extent` with its own memory, and a view of it.
    pub fn image(&self, format: vk::Format, width: u32, height: u32) -> (vk::Image, vk::ImageView) {
        let d = &self.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width,
                height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(
                vk::ImageUsageFlags::STORAGE
                    | vk::ImageUsageFlags::SAMPLED
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST,
            );
        // SAFETY: valid create-infos; the memory is as large as the image asks.
        unsafe {
            let image = d.create_image(&info, None).expect("an image");
            let req = d.get_image_memory_requirements(image);
            let memory = d
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(0),
                    None,
                )
                .expect("memory");
            d.bind_image_memory(image, memory, 0).expect("bound");
            let view = d
                .create_image_view(
                    &vk::ImageViewCreateInfo::default()
                        .image(image)
                        .view_type(vk::ImageViewType::TYPE_2D)
                        .format(format)
                        .subresource_range(color_range()),
                    None,
                )
                .expect("a view");
            (image, view)
        }
    }

    /// A compute pipeline of `source` whose set 0 has bindings 0.. of `types` (one descriptor
    /// each), with `robustness` in the pipeline's chain when given.
    pub fn kernel(
        &self,
        source: &str,
        types: &[vk::DescriptorType],
        robustness: Option<vk::PipelineRobustnessCreateInfoEXT<'_>>,
    ) -> Kernel {
        self.kernel_with(source, types, robustness, &[])
    }

    /// [`Gpu::kernel`] with the immutable sampler `immutable[i].1` at binding `immutable[i].0`.
    pub fn kernel_with(
        &self,
        source: &str,
        types: &[vk::DescriptorType],
        robustness: Option<vk::PipelineRobustnessCreateInfoEXT<'_>>,
        immutable: &[(u32, vk::Sampler)],
    ) -> Kernel {
        self.try_kernel(source, types, robustness, immutable)
            .expect("a pipeline")
    }

    /// [`Gpu::kernel_with`], or `vkCreateComputePipelines`' error.
    pub fn try_kernel(
        &self,
        source: &str,
        types: &[vk::DescriptorType],
        robustness: Option<vk::PipelineRobustnessCreateInfoEXT<'_>>,
        immutable: &[(u32, vk::Sampler)],
    ) -> Result<Kernel, vk::Result> {
        let d = &self.device;
        let words = assemble(source);
        let bindings: Vec<_> = types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let b = vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(*t)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE);
                match immutable.iter().find(|(at, _)| *at == i as u32) {
                    Some((_, s)) => b.immutable_samplers(std::slice::from_ref(s)),
                    None => b,
                }
            })
            .collect();
        let sizes: Vec<_> = types
            .iter()
            .map(|t| vk::DescriptorPoolSize::default().ty(*t).descriptor_count(1))
            .collect();
        // SAFETY: valid create-infos whose arrays outlive each call.
        unsafe {
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .expect("a set layout");
            let layouts = [set_layout];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                    None,
                )
                .expect("a pipeline layout");
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
                .expect("a valid module");
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let mut robust = robustness.unwrap_or_default();
            let mut info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)
                .flags(vk::PipelineCreateFlags::DISPATCH_BASE);
            if robustness.is_some() {
                info = info.push_next(&mut robust);
            }
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)?[0];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .expect("a descriptor pool");
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
                .expect("a set")[0];
            Ok(Kernel {
                layout,
                pipeline,
                set,
            })
        }
    }

    /// Records `record` into a new command buffer, submits it and waits for it.
    pub fn run(&self, record: impl FnOnce(&ash::Device, vk::CommandBuffer)) {
        let d = &self.device;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .command_buffer_count(1);
        // SAFETY: live objects; the command buffer is recorded once and waited for.
        unsafe {
            let cb = d.allocate_command_buffers(&info).expect("a command buffer")[0];
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .expect("begun");
            record(d, cb);
            d.end_command_buffer(cb).expect("ended");
            let cbs = [cb];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("a fence");
            d.queue_submit(self.queue, &submit, fence)
                .expect("submitted");
            d.wait_for_fences(&[fence], true, u64::MAX).expect("done");
            d.destroy_fence(fence, None);
        }
    }

    /// Binds `k`'s pipeline and set and dispatches `groups` from `base`.
    pub fn dispatch(
        &self,
        d: &ash::Device,
        cb: vk::CommandBuffer,
        k: &Kernel,
        base: [u32; 3],
        groups: [u32; 3],
    ) {
        // SAFETY: a command buffer being recorded, a live pipeline, layout and set.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, k.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                k.layout,
                0,
                &[k.set],
                &[],
            );
            d.cmd_dispatch_base(
                cb, base[0], base[1], base[2], groups[0], groups[1], groups[2],
            );
        }
    }

    /// Writes one descriptor of `kind` at `binding` of `k`'s set.
    pub fn write(&self, k: &Kernel, binding: u32, kind: vk::DescriptorType, what: Bind) {
        let write = vk::WriteDescriptorSet::default()
            .dst_set(k.set)
            .dst_binding(binding)
            .descriptor_type(kind);
        // SAFETY: a valid write into a live set; the arrays outlive the call.
        unsafe {
            match what {
                Bind::Buffer(buffer, offset, range) => {
                    let info = [vk::DescriptorBufferInfo::default()
                        .buffer(buffer)
                        .offset(offset)
                        .range(range)];
                    self.device
                        .update_descriptor_sets(&[write.buffer_info(&info)], &[]);
                }
                Bind::Image(view, sampler) => {
                    let info = [vk::DescriptorImageInfo::default()
                        .image_view(view)
                        .sampler(sampler)
                        .image_layout(vk::ImageLayout::GENERAL)];
                    self.device
                        .update_descriptor_sets(&[write.image_info(&info)], &[]);
                }
                Bind::Texel(view) => {
                    let views = [view];
                    self.device
                        .update_descriptor_sets(&[write.texel_buffer_view(&views)], &[]);
                }
            }
        }
    }
}

/// What a descriptor points to.
pub enum Bind {
    /// A buffer, offset and range.
    Buffer(vk::Buffer, u64, u64),
    /// An image view and a sampler (null where the type has none).
    Image(vk::ImageView, vk::Sampler),
    /// A buffer view.
    Texel(vk::BufferView),
}

/// The color aspect of level 0, layer 0.
pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(vk::ImageAspectFlags::COLOR)
        .level_count(1)
        .layer_count(1)
}

/// The color aspect's one level and layer, for copies.
pub fn color_layers() -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers::default()
        .aspect_mask(vk::ImageAspectFlags::COLOR)
        .layer_count(1)
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: nothing runs on the device any more; children die with it in the driver.
        unsafe {
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
