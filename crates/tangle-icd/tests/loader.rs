//! The driver through the real Vulkan loader (`ash`, `VK_DRIVER_FILES` naming a manifest for the
//! `libtangle_icd.so` cargo built for this test): negotiation and enumeration, the properties a
//! profile gives, an exact dispatch with push and specialization constants, mapped-memory
//! coherence, buffers aliasing one allocation, a race in the `TANGLE_REPORT` JSON, and invalid
//! use answered with the right errors; and `vulkaninfo --summary` listing the device.
//!
//! Tests that need another environment (`TANGLE_PROFILE`, `TANGLE_REPORT`) run themselves again
//! as a child process ([`child`]): the driver reads them from the process environment. Without
//! a Vulkan loader installed the tests are ignored (`cfg(vulkan_driver)`, see tangle-reference).
#![cfg_attr(not(vulkan_driver), allow(dead_code, unused_imports))]

mod common;

use ash::vk;
use common::{assemble, child, entry, in_child, manifest, set_word, word};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;
use tangle_exec::Profile;
use tangle_icd::caps::Caps;

/// An instance and its tangle device, with a device created with `features` enabled.
struct Gpu {
    entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    pool: vk::CommandPool,
}

/// An instance on the tangle driver and its one physical device.
fn instance() -> (ash::Entry, ash::Instance, vk::PhysicalDevice) {
    let entry = entry();
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    // The loader implements VK_EXT_debug_utils and passes object names down to the driver.
    let extensions = [ash::ext::debug_utils::NAME.as_ptr()];
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&extensions);
    // SAFETY: a valid create-info; the instance is destroyed by its owner.
    let instance = unsafe { entry.create_instance(&info, None) }.expect("an instance");
    // SAFETY: a live instance.
    let devices = unsafe { instance.enumerate_physical_devices() }.expect("enumeration");
    assert_eq!(devices.len(), 1, "the manifest names tangle's driver alone");
    (entry, instance, devices[0])
}

/// `vkCreateDevice` with one queue and `features` (a `VkPhysicalDeviceFeatures2` chain).
fn create_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    features: &mut vk::PhysicalDeviceFeatures2,
    extensions: &[*const std::ffi::c_char],
) -> Result<ash::Device, vk::Result> {
    let priorities = [1.0];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&priorities)];
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(extensions)
        .push_next(features);
    // SAFETY: a valid create-info chain that outlives the call.
    unsafe { instance.create_device(physical, &info, None) }
}

impl Gpu {
    fn new() -> Gpu {
        Gpu::with_robustness(0)
    }

    /// A device with no robustness (`level` 0), `robustBufferAccess` (1), or also
    /// VK_EXT_robustness2's `robustBufferAccess2` (2).
    fn with_robustness(level: u8) -> Gpu {
        let (entry, instance, physical) = instance();
        let mut robust2 =
            vk::PhysicalDeviceRobustness2FeaturesEXT::default().robust_buffer_access2(true);
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .features(vk::PhysicalDeviceFeatures::default().robust_buffer_access(level >= 1));
        let mut extensions = Vec::new();
        if level >= 2 {
            features = features.push_next(&mut robust2);
            extensions.push(vk::EXT_ROBUSTNESS2_NAME.as_ptr());
        }
        let device =
            create_device(&instance, physical, &mut features, &extensions).expect("a device");
        // SAFETY: a live device with one queue in family 0.
        let queue = unsafe { device.get_device_queue(0, 0) };
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(0);
        // SAFETY: as above.
        let pool = unsafe { device.create_command_pool(&info, None) }.expect("a command pool");
        Gpu {
            entry,
            instance,
            physical,
            device,
            queue,
            pool,
        }
    }

    /// A mapped allocation of `size` bytes: its handle and its words.
    fn memory(&self, size: u64) -> (vk::DeviceMemory, *mut u32) {
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(0);
        // SAFETY: a valid allocate-info; memory type 0 exists.
        let memory = unsafe { self.device.allocate_memory(&info, None) }.expect("memory");
        // SAFETY: the whole allocation, mapped once.
        let ptr = unsafe {
            self.device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
        }
        .expect("mapped");
        (memory, ptr.cast())
    }

    /// A storage buffer of `size` bytes bound to `memory` at `offset`.
    fn buffer(&self, memory: vk::DeviceMemory, offset: u64, size: u64) -> vk::Buffer {
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        // SAFETY: valid create-info; the memory is live and large enough.
        unsafe {
            let buffer = self.device.create_buffer(&info, None).expect("a buffer");
            self.device
                .bind_buffer_memory(buffer, memory, offset)
                .expect("bound");
            buffer
        }
    }

    /// The `saxpy` kernel of `source` with specialization constant 7 set to `off`: set 0 holds
    /// `x` (binding 0, a storage buffer) and `y` (binding 1, a dynamic storage buffer), push
    /// constants `a, n`.
    fn kernel(&self, source: &str, off: u32) -> Kernel {
        self.kernel_with(source, off, None)
    }

    /// [`Gpu::kernel`] with `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo`.
    fn kernel_with(&self, source: &str, off: u32, subgroup_size: Option<u32>) -> Kernel {
        let d = &self.device;
        let words = assemble(source);
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER_DYNAMIC)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        ];
        let sizes = [
            vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(4),
            vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER_DYNAMIC)
                .descriptor_count(4),
        ];
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(8)];
        let entries = [vk::SpecializationMapEntry::default()
            .constant_id(7)
            .offset(0)
            .size(4)];
        let data = off.to_le_bytes();
        let spec = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
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
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .expect("a pipeline layout");
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
                .expect("a valid module");
            let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
                .required_subgroup_size(subgroup_size.unwrap_or(0));
            let mut stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main")
                .specialization_info(&spec);
            if subgroup_size.is_some() {
                stage = stage.push_next(&mut required);
            }
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout);
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .expect("a pipeline")[0];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(2)
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
            Kernel {
                layout,
                pipeline,
                set,
            }
        }
    }

    /// Points the kernel's `x` and `y` at `(buffer, offset, range)` views.
    fn bind(&self, k: &Kernel, x: (vk::Buffer, u64, u64), y: (vk::Buffer, u64, u64)) {
        let xi = [vk::DescriptorBufferInfo::default()
            .buffer(x.0)
            .offset(x.1)
            .range(x.2)];
        let yi = [vk::DescriptorBufferInfo::default()
            .buffer(y.0)
            .offset(y.1)
            .range(y.2)];
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(k.set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&xi),
            vk::WriteDescriptorSet::default()
                .dst_set(k.set)
                .dst_binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER_DYNAMIC)
                .buffer_info(&yi),
        ];
        // SAFETY: valid writes into a live set.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }

    /// Records the kernel over `n` elements with push constant `a` and `y`'s dynamic offset.
    fn record(&self, k: &Kernel, a: u32, n: u32, dynamic: u32) -> vk::CommandBuffer {
        let d = &self.device;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .command_buffer_count(1);
        let mut push = a.to_le_bytes().to_vec();
        push.extend(n.to_le_bytes());
        // SAFETY: a live pool, pipeline, layout and set; the buffer is recorded once.
        unsafe {
            let cb = d.allocate_command_buffers(&info).expect("a command buffer")[0];
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .expect("begun");
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, k.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                k.layout,
                0,
                &[k.set],
                &[dynamic],
            );
            d.cmd_push_constants(cb, k.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cb, n.div_ceil(64), 1, 1);
            d.end_command_buffer(cb).expect("ended");
            cb
        }
    }

    /// Submits `cb` and waits for its fence.
    fn submit(&self, cb: vk::CommandBuffer) {
        let d = &self.device;
        let cbs = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
        // SAFETY: a live queue, command buffer and fence.
        unsafe {
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("a fence");
            d.queue_submit(self.queue, &submit, fence)
                .expect("submitted");
            d.wait_for_fences(&[fence], true, u64::MAX).expect("done");
            assert_eq!(d.get_fence_status(fence), Ok(true));
            d.destroy_fence(fence, None);
        }
    }
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

/// A pipeline with its layout and descriptor set.
struct Kernel {
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    set: vk::DescriptorSet,
}

/// `y[i] = a * x[i] + y[i] + OFF` for `i < n` (push constants `a, n`; `OFF` is specialization
/// constant 7), 64 invocations a workgroup.
const SAXPY: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %x %y %pc
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %x DescriptorSet 0
               OpDecorate %x Binding 0
               OpDecorate %y DescriptorSet 0
               OpDecorate %y Binding 1
               OpMemberDecorate %pcs 0 Offset 0
               OpMemberDecorate %pcs 1 Offset 4
               OpDecorate %pcs Block
               OpDecorate %off SpecId 7
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
          %x = OpVariable %pbuf StorageBuffer
          %y = OpVariable %pbuf StorageBuffer
        %pcs = OpTypeStruct %u32 %u32
        %ppc = OpTypePointer PushConstant %pcs
         %pc = OpVariable %ppc PushConstant
         %pu = OpTypePointer StorageBuffer %u32
        %ppu = OpTypePointer PushConstant %u32
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
        %off = OpSpecConstant %u32 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %pn = OpAccessChain %ppu %pc %c1
          %n = OpLoad %u32 %pn
         %in = OpULessThan %bool %i %n
               OpSelectionMerge %end None
               OpBranchConditional %in %body %end
       %body = OpLabel
         %pa = OpAccessChain %ppu %pc %c0
          %a = OpLoad %u32 %pa
         %px = OpAccessChain %pu %x %c0 %i
         %vx = OpLoad %u32 %px
         %py = OpAccessChain %pu %y %c0 %i
         %vy = OpLoad %u32 %py
          %m = OpIMul %u32 %a %vx
          %s = OpIAdd %u32 %m %vy
          %r = OpIAdd %u32 %s %off
               OpStore %py %r
               OpBranch %end
        %end = OpLabel
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_loader_lists_the_device_with_the_default_profile() {
    let gpu = Gpu::new();
    let caps = Caps::new(Profile::default());
    check_properties(&gpu, &caps);
    // Features come through the chain; only what the executor runs is on.
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v12);
    // SAFETY: a live physical device and a valid chain.
    unsafe {
        gpu.instance
            .get_physical_device_features2(gpu.physical, &mut f2)
    };
    assert_eq!(f2.features.shader_int64, vk::TRUE);
    assert_eq!(f2.features.geometry_shader, vk::FALSE);
    assert_eq!(v12.shader_float16, vk::TRUE);
    assert_eq!(v12.buffer_device_address, vk::FALSE);
    // The memory type satisfies every request.
    // SAFETY: a live physical device.
    let memory = unsafe {
        gpu.instance
            .get_physical_device_memory_properties(gpu.physical)
    };
    assert_eq!(memory.memory_type_count, 1);
    assert!(memory.memory_types[0].property_flags.contains(
        vk::MemoryPropertyFlags::DEVICE_LOCAL
            | vk::MemoryPropertyFlags::HOST_VISIBLE
            | vk::MemoryPropertyFlags::HOST_COHERENT
            | vk::MemoryPropertyFlags::HOST_CACHED
    ));
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn tangle_profile_sets_the_properties() {
    if in_child() {
        let expected = std::env::var("TANGLE_ICD_TEST_EXPECT").expect("the expected profile");
        let gpu = Gpu::new();
        check_properties(
            &gpu,
            &Caps::new(Profile::by_name(&expected).expect("built in")),
        );
        return;
    }
    // A built-in profile by name, and one from a profile file, as `tangle run --profile`.
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_lavapipe_{}.toml", std::process::id()));
    let text = Profile::by_name("lavapipe")
        .expect("built in")
        .to_toml(None);
    std::fs::write(&file, text).expect("a profile file");
    for (profile, expected) in [
        (OsStr::new("nvidia"), "nvidia"),
        (file.as_os_str(), "lavapipe"),
    ] {
        child(
            "tangle_profile_sets_the_properties",
            &[
                ("TANGLE_PROFILE", profile),
                ("TANGLE_ICD_TEST_EXPECT", OsStr::new(expected)),
            ],
        );
    }
    let _ = std::fs::remove_file(&file);
}

/// The device's properties, subgroup properties and cooperative-matrix list are `caps`'.
fn check_properties(gpu: &Gpu, caps: &Caps) {
    let profile = &caps.profile;
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut subgroup)
        .push_next(&mut v13);
    // SAFETY: a live physical device and a valid chain.
    unsafe {
        gpu.instance
            .get_physical_device_properties2(gpu.physical, &mut p2)
    };
    let p = p2.properties;
    assert_eq!(
        p.device_name_as_c_str().ok().and_then(|n| n.to_str().ok()),
        Some(format!("tangle ({} profile)", profile.name).as_str())
    );
    assert_eq!(p.device_type, vk::PhysicalDeviceType::CPU);
    assert_eq!(vk::api_version_minor(p.api_version), 3);
    let l = p.limits;
    assert_eq!(l.max_compute_shared_memory_size, profile.max_shared_memory);
    assert_eq!(l.max_compute_work_group_count, profile.max_workgroup_count);
    assert_eq!(l.max_compute_work_group_size, profile.max_workgroup_size);
    assert_eq!(subgroup.subgroup_size, profile.subgroup_size);
    assert_eq!(
        subgroup.supported_operations.as_raw(),
        profile.subgroup_operations
    );
    let range = (v13.min_subgroup_size, v13.max_subgroup_size);
    assert_eq!(range, caps.subgroup_size_range());
    assert!(range.0 <= profile.subgroup_size && profile.subgroup_size <= range.1);
    // The cooperative-matrix query reaches the driver through vk_icdGetPhysicalDeviceProcAddr
    // (Debian 12's loader does not know it).
    let coopmat = ash::khr::cooperative_matrix::Instance::new(&gpu.entry, &gpu.instance);
    // SAFETY: a live physical device.
    let list = unsafe { coopmat.get_physical_device_cooperative_matrix_properties(gpu.physical) }
        .expect("the cooperative-matrix list");
    let want = caps.coopmat();
    assert_eq!(list.len(), want.len());
    assert!(!list.is_empty());
    for (got, want) in list.iter().zip(&want) {
        assert_eq!(
            (
                got.m_size,
                got.n_size,
                got.k_size,
                got.a_type,
                got.result_type
            ),
            (
                want.m_size,
                want.n_size,
                want.k_size,
                want.a_type,
                want.result_type
            )
        );
    }
    // SAFETY: a live physical device.
    let extensions = unsafe {
        gpu.instance
            .enumerate_device_extension_properties(gpu.physical)
    }
    .expect("the extension list");
    let names: Vec<String> = extensions
        .iter()
        .filter_map(|e| e.extension_name_as_c_str().ok())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n == "VK_KHR_cooperative_matrix"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "VK_KHR_16bit_storage"),
        "{names:?}"
    );
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn saxpy_with_push_and_specialization_constants_is_exact() {
    let gpu = Gpu::new();
    let n = 1000u32;
    let bytes = u64::from(n) * 4;
    let (memory, ptr) = gpu.memory(2 * bytes);
    let x = gpu.buffer(memory, 0, bytes);
    let y = gpu.buffer(memory, bytes, bytes);
    for i in 0..n as usize {
        set_word(ptr, i, i as u32);
        set_word(ptr, n as usize + i, 3 * i as u32 + 1);
    }
    let k = gpu.kernel(SAXPY, 5);
    gpu.bind(&k, (x, 0, vk::WHOLE_SIZE), (y, 0, bytes));
    let cb = gpu.record(&k, 7, n, 0);
    gpu.submit(cb);
    for i in 0..n as usize {
        assert_eq!(
            word(ptr, n as usize + i),
            7 * i as u32 + 3 * i as u32 + 1 + 5,
            "y[{i}]"
        );
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn mapped_memory_is_coherent_both_ways() {
    let gpu = Gpu::new();
    let (memory, ptr) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let k = gpu.kernel(SAXPY, 0);
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    let cb = gpu.record(&k, 2, 64, 0);
    gpu.submit(cb);
    assert_eq!(word(ptr, 64 + 10), 0, "x and y start zeroed");
    // Host writes through the mapping, with no flush, are what the next submission reads; its
    // writes are in the mapping with no invalidate.
    for round in 1..=2u32 {
        for i in 0..64 {
            set_word(ptr, i, round * 100 + i as u32);
            set_word(ptr, 64 + i, 1);
        }
        gpu.submit(cb);
        for i in 0..64 {
            assert_eq!(
                word(ptr, 64 + i),
                2 * (round * 100 + i as u32) + 1,
                "round {round}, y[{i}]"
            );
        }
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn buffers_aliasing_one_allocation_see_each_others_writes() {
    let gpu = Gpu::new();
    // One allocation of 4 x 256 bytes; `whole` views all of it, `tail` its second half.
    let (memory, ptr) = gpu.memory(1024);
    let whole = gpu.buffer(memory, 0, 1024);
    let tail = gpu.buffer(memory, 512, 512);
    // Bytes 0..512 hold 1, 2, 3, ...; bytes 512..1024 stay zero.
    for i in 0..128 {
        set_word(ptr, i, i as u32 + 1);
    }
    let k = gpu.kernel(SAXPY, 0);
    // Dispatch 1: x = bytes 0..256, y = bytes 512.. (a dynamic offset of 512 into `whole`, to
    // its end: VK_WHOLE_SIZE counts from the dynamic offset).
    gpu.bind(&k, (whole, 0, 256), (whole, 0, vk::WHOLE_SIZE));
    let first = gpu.record(&k, 3, 64, 512);
    // Dispatch 2: x = `tail` at 0, the same bytes 512..768 through another buffer; y = bytes
    // 768..1024 (descriptor offset 256 into `tail`).
    gpu.submit(first);
    let k2 = gpu.kernel(SAXPY, 0);
    gpu.bind(&k2, (tail, 0, 256), (tail, 256, 256));
    let second = gpu.record(&k2, 5, 64, 0);
    gpu.submit(second);
    for i in 0..64 {
        let x = i as u32 + 1;
        let y0 = word(ptr, 64 + i); // untouched: bytes 256..512
        assert_eq!(y0, 65 + i as u32);
        let y1 = 3 * x; // dispatch 1 over zeroed y
        assert_eq!(word(ptr, 128 + i), y1, "dispatch 1, element {i}");
        assert_eq!(word(ptr, 192 + i), 5 * y1, "dispatch 2, element {i}");
    }
}

/// With `x` and `y` views of the same words: `y[i] = i + 7`, then `y[i + 64] = 2 x[i] +
/// y[i + 128]`, each invocation loading through `x` the word it stored through `y`.
const THROUGH_X_AND_Y: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %x %y
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %x DescriptorSet 0
               OpDecorate %x Binding 0
               OpDecorate %y DescriptorSet 0
               OpDecorate %y Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
          %x = OpVariable %pbuf StorageBuffer
          %y = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
         %c2 = OpConstant %u32 2
         %c7 = OpConstant %u32 7
        %c64 = OpConstant %u32 64
       %c128 = OpConstant %u32 128
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %py = OpAccessChain %pu %y %c0 %i
         %i7 = OpIAdd %u32 %i %c7
               OpStore %py %i7
         %px = OpAccessChain %pu %x %c0 %i
         %vx = OpLoad %u32 %px
         %v2 = OpIMul %u32 %vx %c2
       %i128 = OpIAdd %u32 %i %c128
       %ph = OpAccessChain %pu %y %c0 %i128
         %vh = OpLoad %u32 %ph
         %sum = OpIAdd %u32 %v2 %vh
        %i64 = OpIAdd %u32 %i %c64
        %po = OpAccessChain %pu %y %c0 %i64
               OpStore %po %sum
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn two_descriptors_of_one_allocation_alias_within_a_dispatch() {
    let gpu = Gpu::new();
    // x: words 0..64 through one buffer; y: words 0..256 through another (dynamic offset 0),
    // both on the one allocation.
    let (memory, ptr) = gpu.memory(1024);
    let x = gpu.buffer(memory, 0, 256);
    let all = gpu.buffer(memory, 0, 1024);
    let k = gpu.kernel(THROUGH_X_AND_Y, 0);
    gpu.bind(&k, (x, 0, 256), (all, 0, vk::WHOLE_SIZE));
    let cb = gpu.record(&k, 0, 64, 0);
    for round in 1..=2u32 {
        // Host writes through the mapping, with no flush: what this submission reads.
        for i in 0..64 {
            set_word(ptr, i, 5);
            set_word(ptr, 128 + i, round * 1000 + i as u32);
        }
        gpu.submit(cb);
        for i in 0..64u32 {
            let at = i as usize;
            assert_eq!(word(ptr, at), i + 7, "round {round}, y[{i}]");
            // The load through x saw the store through y of the same dispatch (a copy per
            // descriptor would have read the 5 the host wrote).
            assert_eq!(
                word(ptr, 64 + at),
                2 * (i + 7) + round * 1000 + i,
                "round {round}, y[{}]",
                64 + i
            );
        }
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn transfer_commands_and_indirect_dispatches_run_in_order() {
    let gpu = Gpu::new();
    // x: bytes 0..256, y: 256..512, a copy of x: 512..768, dispatch arguments: 768..780.
    let (memory, ptr) = gpu.memory(1024);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let copy = gpu.buffer(memory, 512, 256);
    let args = gpu.buffer(memory, 768, 12);
    for (i, v) in [1u32, 1, 1].into_iter().enumerate() {
        set_word(ptr, 192 + i, v);
    }
    let k = gpu.kernel(SAXPY, 0);
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    let data: Vec<u8> = (0..64u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let d = &gpu.device;
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(gpu.pool)
        .command_buffer_count(1);
    let mut push = 2u32.to_le_bytes().to_vec();
    push.extend(64u32.to_le_bytes());
    // SAFETY: live objects; every region lies inside its buffer.
    unsafe {
        let cb = d.allocate_command_buffers(&info).expect("a command buffer")[0];
        d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
            .expect("begun");
        d.cmd_fill_buffer(cb, y, 0, vk::WHOLE_SIZE, 1);
        d.cmd_update_buffer(cb, x, 0, &data);
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default());
        d.cmd_copy_buffer(
            cb,
            x,
            copy,
            &[vk::BufferCopy::default()
                .src_offset(4)
                .dst_offset(0)
                .size(252)],
        );
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, k.pipeline);
        d.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            k.layout,
            0,
            &[k.set],
            &[0],
        );
        d.cmd_push_constants(cb, k.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        d.cmd_dispatch_indirect(cb, args, 0);
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &[],
        );
        d.cmd_dispatch_base(cb, 0, 0, 0, 1, 1, 1);
        d.end_command_buffer(cb).expect("ended");
        let infos = [vk::CommandBufferSubmitInfo::default().command_buffer(cb)];
        let submit = [vk::SubmitInfo2::default().command_buffer_infos(&infos)];
        let fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .expect("a fence");
        d.queue_submit2(gpu.queue, &submit, fence)
            .expect("submitted");
        d.wait_for_fences(&[fence], true, u64::MAX).expect("done");
        d.queue_wait_idle(gpu.queue).expect("idle");
        d.destroy_fence(fence, None);
    }
    for i in 0..64usize {
        let xi = 3 * i as u32;
        assert_eq!(word(ptr, i), xi, "x[{i}] from vkCmdUpdateBuffer");
        // Two dispatches of y = 2x + y over y filled with 1.
        assert_eq!(word(ptr, 64 + i), 4 * xi + 1, "y[{i}]");
        if i < 63 {
            assert_eq!(word(ptr, 128 + i), xi + 3, "the copy of x[{}]", i + 1);
        }
    }
    assert_eq!(word(ptr, 128 + 63), 0, "the copy's last word is untouched");
}

/// [`SAXPY`] storing the `SubgroupSize` built-in into `y[i]`.
fn subgroup_size_kernel() -> String {
    SAXPY
        .replace(
            "OpCapability Shader\n",
            "OpCapability Shader\n               OpCapability GroupNonUniform\n",
        )
        .replace("%gid %x %y %pc", "%gid %sgs %x %y %pc")
        .replace(
            "OpDecorate %gid BuiltIn GlobalInvocationId\n",
            "OpDecorate %gid BuiltIn GlobalInvocationId\n               OpDecorate %sgs BuiltIn SubgroupSize\n",
        )
        .replace(
            "%gid = OpVariable %pin Input\n",
            "%gid = OpVariable %pin Input\n        %psg = OpTypePointer Input %u32\n        %sgs = OpVariable %psg Input\n",
        )
        .replace("%r = OpIAdd %u32 %s %off", "%r = OpLoad %u32 %sgs")
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_required_subgroup_size_is_the_one_the_shader_sees() {
    let gpu = Gpu::new();
    let (memory, ptr) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    // The profile's size without a requirement; any power of two the default profile offers
    // (1 to 128) when one is required.
    for (required, seen) in [(None, 32), (Some(32), 32), (Some(4), 4), (Some(128), 128)] {
        let k = gpu.kernel_with(&subgroup_size_kernel(), 0, required);
        gpu.bind(&k, (x, 0, 256), (y, 0, 256));
        gpu.submit(gpu.record(&k, 1, 64, 0));
        assert!((0..64).all(|i| word(ptr, 64 + i) == seen), "{required:?}");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn devices_on_several_threads_run_at_once() {
    let threads: Vec<_> = (1..=4u32)
        .map(|t| {
            std::thread::spawn(move || {
                let gpu = Gpu::new();
                let (memory, ptr) = gpu.memory(512);
                let x = gpu.buffer(memory, 0, 256);
                let y = gpu.buffer(memory, 256, 256);
                for i in 0..64 {
                    set_word(ptr, i, i as u32);
                }
                let k = gpu.kernel(SAXPY, t);
                gpu.bind(&k, (x, 0, 256), (y, 0, 256));
                let cb = gpu.record(&k, t, 64, 0);
                for _ in 0..3 {
                    gpu.submit(cb);
                }
                (0..64).all(|i| word(ptr, 64 + i) == 3 * (t * i as u32 + t))
            })
        })
        .collect();
    for (t, h) in threads.into_iter().enumerate() {
        assert!(h.join().expect("the thread finishes"), "thread {t}");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_submission_waits_for_its_timeline_value_and_events_follow_commands() {
    let gpu = Gpu::new();
    let d = &gpu.device;
    let (memory, ptr) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    set_word(ptr, 0, 10);
    let k = gpu.kernel(SAXPY, 0);
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    let cb = gpu.record(&k, 3, 64, 0);
    // SAFETY: live objects; the submission's arrays outlive the call.
    unsafe {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        let sem = d
            .create_semaphore(&info, None)
            .expect("a timeline semaphore");
        let fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .expect("a fence");
        let (sems, cbs, stages) = ([sem], [cb], [vk::PipelineStageFlags::COMPUTE_SHADER]);
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&[1])
            .signal_semaphore_values(&[2]);
        let submit = [vk::SubmitInfo::default()
            .wait_semaphores(&sems)
            .wait_dst_stage_mask(&stages)
            .command_buffers(&cbs)
            .signal_semaphores(&sems)
            .push_next(&mut values)];
        d.queue_submit(gpu.queue, &submit, fence)
            .expect("submitted");
        // Waiting for value 1: nothing ran yet.
        assert_eq!(d.get_fence_status(fence), Ok(false));
        assert_eq!(word(ptr, 64), 0);
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&[2]);
        assert_eq!(
            d.wait_semaphores(&wait, 1_000_000),
            Err(vk::Result::TIMEOUT)
        );
        d.signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(sem).value(1))
            .expect("signalled");
        d.wait_semaphores(&wait, u64::MAX).expect("value 2 reached");
        assert_eq!(d.get_semaphore_counter_value(sem), Ok(2));
        assert_eq!(d.get_fence_status(fence), Ok(true));
        assert_eq!(word(ptr, 64), 30);
        // An event the host sets, a command resets.
        let event = d
            .create_event(&vk::EventCreateInfo::default(), None)
            .expect("an event");
        d.set_event(event).expect("set");
        assert_eq!(d.get_event_status(event), Ok(true));
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(gpu.pool)
            .command_buffer_count(1);
        let reset = d.allocate_command_buffers(&info).expect("a command buffer")[0];
        d.begin_command_buffer(reset, &vk::CommandBufferBeginInfo::default())
            .expect("begun");
        d.cmd_wait_events(
            reset,
            &[event],
            vk::PipelineStageFlags::HOST,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            &[],
            &[],
            &[],
        );
        d.cmd_reset_event(reset, event, vk::PipelineStageFlags::COMPUTE_SHADER);
        d.end_command_buffer(reset).expect("ended");
        gpu.submit(reset);
        assert_eq!(d.get_event_status(event), Ok(false));
        d.destroy_event(event, None);
        d.destroy_fence(fence, None);
        d.destroy_semaphore(sem, None);
    }
}

/// [`SAXPY`] with every invocation adding into `y[0]`: a data race.
fn racy() -> String {
    SAXPY.replace(
        "%py = OpAccessChain %pu %y %c0 %i",
        "%py = OpAccessChain %pu %y %c0 %c0",
    )
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_race_is_in_the_report_and_on_stderr() {
    if in_child() {
        let gpu = Gpu::new();
        let (memory, _) = gpu.memory(512);
        let x = gpu.buffer(memory, 0, 256);
        let y = gpu.buffer(memory, 256, 256);
        let k = gpu.kernel(&racy(), 0);
        // The loader passes the program's name for the pipeline down to the driver.
        let utils = ash::ext::debug_utils::Device::new(&gpu.instance, &gpu.device);
        let name = vk::DebugUtilsObjectNameInfoEXT::default()
            .object_handle(k.pipeline)
            .object_name(c"racy add");
        // SAFETY: a live pipeline of this device.
        unsafe { utils.set_debug_utils_object_name(&name) }.expect("named");
        gpu.bind(&k, (x, 0, 256), (y, 0, 256));
        let cb = gpu.record(&k, 1, 64, 0);
        gpu.submit(cb);
        gpu.submit(cb);
        return;
    }
    let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_race_{}.json", std::process::id()));
    let out = child(
        "a_race_is_in_the_report_and_on_stderr",
        &[("TANGLE_REPORT", report.as_os_str())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[race]"), "{stderr}");
    assert!(
        stderr.contains("2 dispatch(es) in 2 submission(s)"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(json["dispatches"], 2);
    let findings = json["findings"].as_array().expect("a findings list");
    let race = findings
        .iter()
        .find(|f| f["kind"] == "race")
        .unwrap_or_else(|| panic!("no race in {text}"));
    assert_eq!(race["severity"], "error");
    assert_eq!(
        race["dispatches"], 2,
        "one cause over both dispatches: {text}"
    );
    assert_eq!(race["first"]["submission"], 1);
    assert_eq!(race["first"]["dispatch"], 0);
    let pipeline = race["pipeline"].as_str().unwrap_or_default();
    assert!(
        pipeline.starts_with("'racy add' = 'main' (pipeline "),
        "{pipeline}"
    );
}

/// A program that never destroys its device (ggml keeps its device until the process exits)
/// still leaves a complete `TANGLE_REPORT`: the driver rewrites it after every submission.
#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_device_never_destroyed_still_leaves_its_report() {
    if in_child() {
        let gpu = Gpu::new();
        let (memory, _) = gpu.memory(512);
        let x = gpu.buffer(memory, 0, 256);
        let y = gpu.buffer(memory, 256, 256);
        let k = gpu.kernel(&racy(), 0);
        gpu.bind(&k, (x, 0, 256), (y, 0, 256));
        let cb = gpu.record(&k, 1, 64, 0);
        gpu.submit(cb);
        gpu.submit(cb);
        gpu.submit(gpu.record(&k, 1, 64, 0));
        // No vkDestroyDevice, no vkDestroyInstance: the process just ends.
        std::mem::forget(gpu);
        return;
    }
    let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_kept_{}.json", std::process::id()));
    let out = child(
        "a_device_never_destroyed_still_leaves_its_report",
        &[("TANGLE_REPORT", report.as_os_str())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("tangle-icd: "),
        "the device was destroyed: {stderr}"
    );
    let text =
        std::fs::read_to_string(&report).expect("TANGLE_REPORT written without vkDestroyDevice");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(
        (json["submissions"].as_u64(), json["dispatches"].as_u64()),
        (Some(3), Some(3)),
        "{text}"
    );
    let findings = json["findings"].as_array().expect("a findings list");
    let race = findings
        .iter()
        .find(|f| f["kind"] == "race")
        .unwrap_or_else(|| panic!("no race in {text}"));
    assert_eq!(race["dispatches"], 3, "{text}");
}

/// A dispatch whose `y` window (32 words) is shorter than the dispatch (64 invocations): with
/// `robustBufferAccess2` (VK_EXT_robustness2) enabled at `vkCreateDevice` the accesses past it
/// are defined (no finding); with `robustBufferAccess`, the loads past it read zero and its stores
/// are dropped, a `robust-access` warning (`tangle_exec::check::robust`); without it, the same
/// accesses are `out-of-bounds` errors. Either way the words after the window are untouched.
#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn robust_buffer_access_follows_the_device_feature() {
    if in_child() {
        let level = match std::env::var("TANGLE_TEST_ROBUST").as_deref() {
            Ok("2") => 2,
            Ok("1") => 1,
            _ => 0,
        };
        let gpu = Gpu::with_robustness(level);
        let (memory, ptr) = gpu.memory(512);
        for i in 0..64 {
            set_word(ptr, i, i as u32 + 1);
            set_word(ptr, 64 + i, 1000 + i as u32);
        }
        let x = gpu.buffer(memory, 0, 256);
        let y = gpu.buffer(memory, 256, 128);
        let k = gpu.kernel(SAXPY, 0);
        gpu.bind(&k, (x, 0, 256), (y, 0, 128));
        gpu.submit(gpu.record(&k, 2, 64, 0));
        for i in 0..64 {
            let want = match i < 32 {
                true => 2 * (i as u32 + 1) + 1000 + i as u32,
                false => 1000 + i as u32,
            };
            assert_eq!(word(ptr, 64 + i), want, "y word {i}");
        }
        return;
    }
    // robustBufferAccess2: zero loads and dropped stores are defined, so no finding at all.
    for (robust, kind, severity) in [
        ("2", "", ""),
        ("1", "robust-access", "warning"),
        ("0", "out-of-bounds", "error"),
    ] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_robust_{robust}_{}.json",
            std::process::id()
        ));
        let out = child(
            "robust_buffer_access_follows_the_device_feature",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_ROBUST", OsStr::new(robust)),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
        let _ = std::fs::remove_file(&report);
        let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
        let findings = json["findings"].as_array().expect("a findings list");
        assert_eq!(findings.is_empty(), kind.is_empty(), "{text}");
        for f in findings {
            assert_eq!(
                (f["kind"].as_str(), f["severity"].as_str()),
                (Some(kind), Some(severity)),
                "{text}"
            );
        }
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_race_free_run_reports_no_findings() {
    if in_child() {
        let gpu = Gpu::new();
        let (memory, _) = gpu.memory(512);
        let x = gpu.buffer(memory, 0, 256);
        let y = gpu.buffer(memory, 256, 256);
        let k = gpu.kernel(SAXPY, 0);
        gpu.bind(&k, (x, 0, 256), (y, 0, 256));
        gpu.submit(gpu.record(&k, 1, 64, 0));
        return;
    }
    let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_clean_{}.json", std::process::id()));
    let out = child(
        "a_race_free_run_reports_no_findings",
        &[("TANGLE_REPORT", report.as_os_str())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no undefined behaviour found"), "{stderr}");
    let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(json["findings"].as_array().map(Vec::len), Some(0), "{text}");
    assert_eq!(json["dispatches"], 1);
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn invalid_use_is_answered_with_the_right_error() {
    let gpu = Gpu::new();
    // A module that parses but does not validate (no OpMemoryModel, no entry point).
    let invalid = [0x0723_0203, 0x0001_0600, 0, 1, 0];
    let info = vk::ShaderModuleCreateInfo::default().code(&invalid);
    // SAFETY: a valid create-info.
    let made = unsafe { gpu.device.create_shader_module(&info, None) };
    assert_eq!(made, Err(vk::Result::ERROR_INVALID_SHADER_NV));
    // A graphics feature, and a Vulkan 1.2 feature the driver does not claim.
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .features(vk::PhysicalDeviceFeatures::default().geometry_shader(true));
    let refused = create_device(&gpu.instance, gpu.physical, &mut f2, &[]);
    assert_eq!(refused.err(), Some(vk::Result::ERROR_FEATURE_NOT_PRESENT));
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true);
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v12);
    let refused = create_device(&gpu.instance, gpu.physical, &mut f2, &[]);
    assert_eq!(refused.err(), Some(vk::Result::ERROR_FEATURE_NOT_PRESENT));
    // What the device claims is accepted.
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default().shader_float16(true);
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v12);
    let extensions = [c"VK_KHR_16bit_storage".as_ptr()];
    let device = create_device(&gpu.instance, gpu.physical, &mut f2, &extensions)
        .expect("claimed features and extensions");
    // SAFETY: a live device, unused.
    unsafe { device.destroy_device(None) };
    // An extension the device does not list.
    let mut f2 = vk::PhysicalDeviceFeatures2::default();
    let refused = create_device(
        &gpu.instance,
        gpu.physical,
        &mut f2,
        &[c"VK_KHR_ray_query".as_ptr()],
    );
    assert_eq!(refused.err(), Some(vk::Result::ERROR_EXTENSION_NOT_PRESENT));
    // A fence that was never created.
    // SAFETY: the driver answers an unknown handle without following it.
    let status = unsafe {
        gpu.device
            .get_fence_status(vk::Handle::from_raw(0xdead_beef))
    };
    assert_eq!(status, Err(vk::Result::ERROR_VALIDATION_FAILED_EXT));
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn vulkaninfo_lists_the_device() {
    let Ok(out) = Command::new("vulkaninfo")
        .arg("--summary")
        .env("VK_DRIVER_FILES", manifest())
        .env_remove("TANGLE_PROFILE")
        .output()
    else {
        eprintln!("skipped: vulkaninfo is not installed (Debian: apt-get install vulkan-tools)");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("deviceName         = tangle (default profile)"),
        "{stdout}"
    );
    assert!(stdout.contains("PHYSICAL_DEVICE_TYPE_CPU"), "{stdout}");
    assert!(stdout.contains("driverName         = tangle"), "{stdout}");
}

/// What a debug-utils messenger received: severity, `pMessageIdName`, `pMessage`, and the
/// objects' handles and names.
#[derive(Debug, Clone)]
struct Got {
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    id: String,
    text: String,
    objects: Vec<(u64, String)>,
}

/// The messenger callback: appends the message to the `Mutex<Vec<Got>>` its user data points to.
unsafe extern "system" fn collect(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    let text = |p: *const std::ffi::c_char| match p.is_null() {
        true => String::new(),
        // SAFETY: the driver passes valid strings for the call.
        false => unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned(),
    };
    // SAFETY: the callback data is valid for the call; `user` is the listener's list, which
    // outlives its messenger.
    let (d, list) = unsafe { (&*data, &*(user as *const std::sync::Mutex<Vec<Got>>)) };
    let objects = (0..d.object_count as usize)
        .map(|i| {
            // SAFETY: `object_count` structs.
            let o = unsafe { &*d.p_objects.add(i) };
            (o.object_handle, text(o.p_object_name))
        })
        .collect();
    list.lock().expect("the list").push(Got {
        severity,
        id: text(d.p_message_id_name),
        text: text(d.p_message),
        objects,
    });
    vk::FALSE
}

/// The create-info of a messenger taking errors and warnings of every type into `list`.
fn listening(list: &std::sync::Mutex<Vec<Got>>) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    let mut info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION,
        )
        .pfn_user_callback(Some(collect));
    info.p_user_data = list as *const _ as *mut std::ffi::c_void;
    info
}

/// A messenger on a device's instance (dropped before the device).
struct Listener {
    utils: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    got: Box<std::sync::Mutex<Vec<Got>>>,
}

impl Listener {
    fn new(gpu: &Gpu) -> Listener {
        let got = Box::new(std::sync::Mutex::new(Vec::new()));
        let utils = ash::ext::debug_utils::Instance::new(&gpu.entry, &gpu.instance);
        // SAFETY: a valid create-info whose user data (boxed) outlives the messenger.
        let messenger = unsafe { utils.create_debug_utils_messenger(&listening(&got), None) }
            .expect("a messenger");
        Listener {
            utils,
            messenger,
            got,
        }
    }

    /// The messages so far, taken.
    fn take(&self) -> Vec<Got> {
        std::mem::take(&mut *self.got.lock().expect("the list"))
    }

    /// The hazards between dispatches among `got`.
    fn hazards(got: &[Got]) -> Vec<&Got> {
        got.iter()
            .filter(|g| g.id == "race" && g.text.contains("earlier dispatch"))
            .collect()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // SAFETY: the messenger of a live instance, destroyed once.
        unsafe {
            self.utils
                .destroy_debug_utils_messenger(self.messenger, None)
        };
    }
}

/// A step of [`Gpu::steps`].
#[derive(Clone, Copy)]
enum Step {
    /// The kernel over `n` elements with `y`'s dynamic offset.
    Dispatch { n: u32, dynamic: u32 },
    /// A compute-to-compute pipeline barrier, with a memory barrier from shader writes to
    /// shader reads and writes or without one.
    Barrier { memory: bool },
}

impl Gpu {
    /// A command buffer running `steps` of kernel `k` (push constant `a` = 1).
    fn steps(&self, k: &Kernel, steps: &[Step]) -> vk::CommandBuffer {
        let d = &self.device;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .command_buffer_count(1);
        // SAFETY: a live pool, pipeline, layout and set; the buffer is recorded once.
        unsafe {
            let cb = d.allocate_command_buffers(&info).expect("a command buffer")[0];
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .expect("begun");
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, k.pipeline);
            for step in steps {
                match *step {
                    Step::Dispatch { n, dynamic } => {
                        let c = vk::PipelineBindPoint::COMPUTE;
                        d.cmd_bind_descriptor_sets(cb, c, k.layout, 0, &[k.set], &[dynamic]);
                        let mut push = 1u32.to_le_bytes().to_vec();
                        push.extend(n.to_le_bytes());
                        let stage = vk::ShaderStageFlags::COMPUTE;
                        d.cmd_push_constants(cb, k.layout, stage, 0, &push);
                        d.cmd_dispatch(cb, n.div_ceil(64), 1, 1);
                    }
                    Step::Barrier { memory } => {
                        let barrier = vk::MemoryBarrier::default()
                            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                            .dst_access_mask(
                                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                            );
                        let barriers = if memory { vec![barrier] } else { Vec::new() };
                        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
                        let flags = vk::DependencyFlags::empty();
                        d.cmd_pipeline_barrier(cb, compute, compute, flags, &barriers, &[], &[]);
                    }
                }
            }
            d.end_command_buffer(cb).expect("ended");
            cb
        }
    }
}

/// A device with a listener, and the saxpy kernel over `x` (bytes 0..256) and `y` (256..512)
/// of one allocation, named `name`.
fn hazard_setup(name: &std::ffi::CStr) -> (Gpu, Kernel) {
    let gpu = Gpu::new();
    let (memory, _) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let k = gpu.kernel(SAXPY, 0);
    let utils = ash::ext::debug_utils::Device::new(&gpu.instance, &gpu.device);
    let info = vk::DebugUtilsObjectNameInfoEXT::default()
        .object_handle(k.pipeline)
        .object_name(name);
    // SAFETY: a live pipeline of this device.
    unsafe { utils.set_debug_utils_object_name(&info) }.expect("named");
    gpu.bind(&k, (x, 0, 256), (y, 0, 128));
    (gpu, k)
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn messengers_receive_findings_once_and_invalid_use() {
    let gpu = Gpu::new();
    let listener = Listener::new(&gpu);
    let (memory, _) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let k = gpu.kernel(&racy(), 0);
    let utils = ash::ext::debug_utils::Device::new(&gpu.instance, &gpu.device);
    let name = vk::DebugUtilsObjectNameInfoEXT::default()
        .object_handle(k.pipeline)
        .object_name(c"racy add");
    // SAFETY: a live pipeline of this device.
    unsafe { utils.set_debug_utils_object_name(&name) }.expect("named");
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    let cb = gpu.record(&k, 1, 64, 0);
    gpu.submit(cb);
    let got = listener.take();
    let races: Vec<&Got> = got.iter().filter(|g| g.id == "race").collect();
    // Two causes: the loads of y[0] and its stores.
    assert_eq!(races.len(), 2, "one message per cause: {got:#?}");
    let race = races[0];
    assert_eq!(race.severity, vk::DebugUtilsMessageSeverityFlagsEXT::ERROR);
    assert!(
        race.text.starts_with("error[race]: data race"),
        "{}",
        race.text
    );
    use vk::Handle;
    assert_eq!(
        race.objects,
        vec![(k.pipeline.as_raw(), "racy add".to_string())]
    );
    // The same causes again, after a fence wait (no hazard): not delivered twice.
    gpu.submit(cb);
    let again = listener.take();
    assert!(again.iter().all(|g| g.id != "race"), "{again:#?}");
    // An unknown handle: the error code, and the message naming the entry point.
    // SAFETY: the driver answers an unknown handle without following it.
    let status = unsafe {
        gpu.device
            .get_fence_status(vk::Fence::from_raw(0xdead_beef))
    };
    assert_eq!(status, Err(vk::Result::ERROR_VALIDATION_FAILED_EXT));
    let got = listener.take();
    let invalid = got
        .iter()
        .find(|g| g.id == "tangle-invalid-use" && g.text.starts_with("vkGetFenceStatus"))
        .unwrap_or_else(|| panic!("no invalid-use message in {got:#?}"));
    assert_eq!(
        invalid.severity,
        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
    );
    assert!(
        invalid.text.contains("0xdeadbeef is not a live VkFence"),
        "{}",
        invalid.text
    );
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_messenger_chained_at_instance_creation_hears_why_it_failed() {
    if !in_child() {
        child(
            "a_messenger_chained_at_instance_creation_hears_why_it_failed",
            &[("TANGLE_PROFILE", OsStr::new("no-such-profile"))],
        );
        return;
    }
    let entry = entry();
    let list = std::sync::Mutex::new(Vec::new());
    let mut chained = listening(&list);
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    let extensions = [ash::ext::debug_utils::NAME.as_ptr()];
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&extensions)
        .push_next(&mut chained);
    // SAFETY: a valid create-info chain; no instance results.
    let made = unsafe { entry.create_instance(&info, None) };
    assert!(
        made.is_err(),
        "an unknown TANGLE_PROFILE fails vkCreateInstance"
    );
    let got = list.lock().expect("the list").clone();
    let ours = got
        .iter()
        .find(|g| g.id == "tangle-invalid-use")
        .unwrap_or_else(|| panic!("no message from the driver in {got:#?}"));
    assert!(
        ours.text.contains("TANGLE_PROFILE=no-such-profile"),
        "{}",
        ours.text
    );
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn hazards_between_dispatches_of_one_command_buffer_follow_barriers() {
    let (gpu, k) = hazard_setup(c"twice");
    let listener = Listener::new(&gpu);
    let d = Step::Dispatch { n: 32, dynamic: 0 };
    // The second dispatch reads and writes the bytes the first wrote: without a barrier a
    // hazard naming both dispatches and the bytes of y (256 + 32 words = 256..384).
    gpu.submit(gpu.steps(&k, &[d, d]));
    let got = listener.take();
    let hazards = Listener::hazards(&got);
    assert_eq!(hazards.len(), 1, "{got:#?}");
    let h = hazards[0];
    assert_eq!(h.severity, vk::DebugUtilsMessageSeverityFlagsEXT::ERROR);
    assert!(h.text.contains("allocation bytes 256..384"), "{}", h.text);
    assert!(
        h.text.contains("'twice' = 'main' (pipeline") && h.text.contains("dispatch 0"),
        "{}",
        h.text
    );
    // An execution dependency alone does not make the writes visible.
    gpu.submit(gpu.steps(&k, &[d, Step::Barrier { memory: false }, d]));
    assert_eq!(
        Listener::hazards(&listener.take()).len(),
        0,
        "one message per cause"
    );
    // With a memory barrier from shader writes to shader reads and writes: none.
    let (gpu2, k2) = hazard_setup(c"barrier");
    let listener2 = Listener::new(&gpu2);
    gpu2.submit(gpu2.steps(&k2, &[d, Step::Barrier { memory: true }, d]));
    let got = listener2.take();
    assert!(Listener::hazards(&got).is_empty(), "{got:#?}");
    // Disjoint bytes of one buffer (y's words 0..32 and 32..64), no barrier: none.
    let far = Step::Dispatch {
        n: 32,
        dynamic: 128,
    };
    gpu2.submit(gpu2.steps(&k2, &[d, far]));
    let got = listener2.take();
    assert!(Listener::hazards(&got).is_empty(), "{got:#?}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn hazards_across_submissions_follow_semaphores() {
    for ordered in [false, true] {
        let (gpu, k) = hazard_setup(c"two submissions");
        let listener = Listener::new(&gpu);
        let d = Step::Dispatch { n: 32, dynamic: 0 };
        let (first, second) = ([gpu.steps(&k, &[d])], [gpu.steps(&k, &[d])]);
        let dev = &gpu.device;
        // SAFETY: live objects; both batches end before the fence is waited for.
        unsafe {
            let sem = dev
                .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                .expect("a semaphore");
            let sems = [sem];
            let stages = [vk::PipelineStageFlags::COMPUTE_SHADER];
            let mut a = vk::SubmitInfo::default().command_buffers(&first);
            let mut b = vk::SubmitInfo::default().command_buffers(&second);
            if ordered {
                a = a.signal_semaphores(&sems);
                b = b.wait_semaphores(&sems).wait_dst_stage_mask(&stages);
            }
            let fence = dev
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("a fence");
            // Two submissions, no host wait between them.
            dev.queue_submit(gpu.queue, &[a], vk::Fence::null())
                .expect("submitted");
            dev.queue_submit(gpu.queue, &[b], fence).expect("submitted");
            dev.wait_for_fences(&[fence], true, u64::MAX).expect("done");
            dev.destroy_fence(fence, None);
            dev.destroy_semaphore(sem, None);
        }
        let got = listener.take();
        let hazards = Listener::hazards(&got);
        assert_eq!(
            hazards.len(),
            usize::from(!ordered),
            "ordered {ordered}: {got:#?}"
        );
        if let Some(h) = hazards.first() {
            assert!(h.text.contains("submission 1 dispatch 0"), "{}", h.text);
        }
    }
}

/// What [`wait_idle_in_callback`] needs: the queue and the device's `vkQueueWaitIdle`.
struct Reenter {
    queue: vk::Queue,
    wait_idle: vk::PFN_vkQueueWaitIdle,
    calls: std::sync::atomic::AtomicU32,
}

/// A messenger callback calling the driver: `vkQueueWaitIdle` on the queue whose submission
/// found the cause.
unsafe extern "system" fn wait_idle_in_callback(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    _data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    // SAFETY: `user` is the test's `Reenter`, which outlives the messenger.
    let r = unsafe { &*(user as *const Reenter) };
    // SAFETY: a live queue; the driver's entry point.
    let result = unsafe { (r.wait_idle)(r.queue) };
    if result == vk::Result::SUCCESS {
        r.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    vk::FALSE
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_messenger_callback_may_call_the_driver() {
    let gpu = Gpu::new();
    let reenter = Box::new(Reenter {
        queue: gpu.queue,
        wait_idle: gpu.device.fp_v1_0().queue_wait_idle,
        calls: std::sync::atomic::AtomicU32::new(0),
    });
    let mut info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        .message_type(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        .pfn_user_callback(Some(wait_idle_in_callback));
    info.p_user_data = &*reenter as *const Reenter as *mut std::ffi::c_void;
    let utils = ash::ext::debug_utils::Instance::new(&gpu.entry, &gpu.instance);
    // SAFETY: a valid create-info whose user data outlives the messenger.
    let messenger = unsafe { utils.create_debug_utils_messenger(&info, None) }.expect("made");
    let (memory, _) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let k = gpu.kernel(&racy(), 0);
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    // The causes reach the callback inside vkQueueSubmit, after the driver let the queue go:
    // its vkQueueWaitIdle returns instead of waiting for the submission it is called from.
    gpu.submit(gpu.record(&k, 1, 64, 0));
    assert_eq!(reenter.calls.load(std::sync::atomic::Ordering::Relaxed), 2);
    // SAFETY: the messenger of a live instance.
    unsafe { utils.destroy_debug_utils_messenger(messenger, None) };
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn under_tangle_exec_a_device_never_destroyed_is_still_reported() {
    if in_child() {
        let gpu = Gpu::new();
        let (memory, _) = gpu.memory(512);
        let x = gpu.buffer(memory, 0, 256);
        let y = gpu.buffer(memory, 256, 256);
        let k = gpu.kernel(&racy(), 0);
        gpu.bind(&k, (x, 0, 256), (y, 0, 256));
        gpu.submit(gpu.record(&k, 1, 64, 0));
        // The program ends without vkDestroyDevice.
        std::mem::forget(gpu);
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_exec_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let out = child(
        "under_tangle_exec_a_device_never_destroyed_is_still_reported",
        &[("TANGLE_EXEC", dir.as_os_str())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("error[race]"),
        "tangle exec prints it: {stderr}"
    );
    let reports: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let text = std::fs::read_to_string(&reports[0]).expect("a report");
    let _ = std::fs::remove_dir_all(&dir);
    let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(json["findings"][0]["kind"], "race", "{text}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn tangle_subgroup_size_is_the_devices_and_the_shaders() {
    if !in_child() {
        child(
            "tangle_subgroup_size_is_the_devices_and_the_shaders",
            &[("TANGLE_SUBGROUP_SIZE", OsStr::new("8"))],
        );
        return;
    }
    let gpu = Gpu::new();
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
    // SAFETY: a live physical device and a valid chain.
    unsafe {
        gpu.instance
            .get_physical_device_properties2(gpu.physical, &mut props)
    };
    assert_eq!(subgroup.subgroup_size, 8, "the reported size");
    let (memory, ptr) = gpu.memory(512);
    let x = gpu.buffer(memory, 0, 256);
    let y = gpu.buffer(memory, 256, 256);
    let k = gpu.kernel_with(&subgroup_size_kernel(), 0, None);
    gpu.bind(&k, (x, 0, 256), (y, 0, 256));
    gpu.submit(gpu.record(&k, 1, 64, 0));
    assert!(
        (0..64).all(|i| word(ptr, 64 + i) == 8),
        "the size pipelines run with"
    );
}
