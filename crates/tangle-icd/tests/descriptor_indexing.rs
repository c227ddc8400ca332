//! `VK_EXT_descriptor_indexing` through the real loader: listed by name, its feature and
//! property structs the same as Vulkan 1.2's, a device enabling it by name, a descriptor
//! updated after it was bound (the dispatch sees the update: descriptors are read when it
//! runs), and a variable-count binding whose set holds fewer descriptors than its layout (a
//! write past the set's count is refused, its element stays absent). Ignored without a
//! Vulkan loader (`cfg(vulkan_driver)`).
#![cfg_attr(not(vulkan_driver), allow(dead_code, unused_imports))]

mod common;

use ash::vk;
use common::{assemble, entry, word};

/// Workgroup `w` stores `w + 1` into word 0 of element `w` of a runtime array of buffers.
const ARRAY: &str = r#"
               OpCapability Shader
               OpCapability RuntimeDescriptorArray
               OpCapability StorageBufferArrayDynamicIndexing
               OpExtension "SPV_EXT_descriptor_indexing"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %wid %bufs
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %wid BuiltIn WorkgroupId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %bufs DescriptorSet 0
               OpDecorate %bufs Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %wid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
     %bufarr = OpTypeRuntimeArray %buf
      %pbufs = OpTypePointer StorageBuffer %bufarr
       %bufs = OpVariable %pbufs StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %w = OpLoad %v3 %wid
          %i = OpCompositeExtract %u32 %w 0
          %p = OpAccessChain %pu %bufs %i %c0 %c0
          %v = OpIAdd %u32 %i %c1
               OpStore %p %v
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn descriptor_indexing_is_listed_enabled_by_name_and_honoured() {
    let entry = entry();
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
    // SAFETY: valid create-infos whose arrays outlive each call; everything is destroyed at
    // the end.
    unsafe {
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .expect("an instance");
        let physical = instance.enumerate_physical_devices().expect("devices")[0];
        let listed = instance
            .enumerate_device_extension_properties(physical)
            .expect("extensions")
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(vk::EXT_DESCRIPTOR_INDEXING_NAME));
        assert!(listed, "VK_EXT_descriptor_indexing is not listed");

        // The extension's structs hold the Vulkan 1.2 structs' values.
        let mut di = vk::PhysicalDeviceDescriptorIndexingFeatures::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut di)
            .push_next(&mut v12);
        instance.get_physical_device_features2(physical, &mut f2);
        let pairs = [
            (di.runtime_descriptor_array, v12.runtime_descriptor_array),
            (
                di.descriptor_binding_partially_bound,
                v12.descriptor_binding_partially_bound,
            ),
            (
                di.descriptor_binding_variable_descriptor_count,
                v12.descriptor_binding_variable_descriptor_count,
            ),
            (
                di.descriptor_binding_storage_buffer_update_after_bind,
                v12.descriptor_binding_storage_buffer_update_after_bind,
            ),
            (
                di.descriptor_binding_update_unused_while_pending,
                v12.descriptor_binding_update_unused_while_pending,
            ),
        ];
        for (a, b) in pairs {
            assert_eq!((a, b), (vk::TRUE, vk::TRUE));
        }
        let mut dp = vk::PhysicalDeviceDescriptorIndexingProperties::default();
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut dp)
            .push_next(&mut p12);
        instance.get_physical_device_properties2(physical, &mut p2);
        assert!(dp.max_per_stage_descriptor_update_after_bind_storage_buffers > 0);
        assert_eq!(
            dp.max_per_stage_descriptor_update_after_bind_storage_buffers,
            p12.max_per_stage_descriptor_update_after_bind_storage_buffers
        );
        assert_eq!(
            dp.max_update_after_bind_descriptors_in_all_pools,
            p12.max_update_after_bind_descriptors_in_all_pools
        );

        // A device enabling the extension by name, with its features struct.
        let mut want = vk::PhysicalDeviceDescriptorIndexingFeatures::default()
            .runtime_descriptor_array(true)
            .descriptor_binding_partially_bound(true)
            .descriptor_binding_variable_descriptor_count(true)
            .descriptor_binding_storage_buffer_update_after_bind(true);
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&priorities)];
        let extensions = [vk::EXT_DESCRIPTOR_INDEXING_NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut want);
        let d = instance
            .create_device(physical, &info, None)
            .expect("a device with VK_EXT_descriptor_indexing");
        let queue = d.get_device_queue(0, 0);

        // Three 16-byte buffers in one allocation.
        let memory = d
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(48)
                    .memory_type_index(0),
                None,
            )
            .expect("memory");
        let words: *mut u32 = d
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .expect("mapped")
            .cast();
        let buffers: Vec<vk::Buffer> = (0..3)
            .map(|i| {
                let b = d
                    .create_buffer(
                        &vk::BufferCreateInfo::default()
                            .size(16)
                            .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                        None,
                    )
                    .expect("a buffer");
                d.bind_buffer_memory(b, memory, 16 * i).expect("bound");
                b
            })
            .collect();

        // Binding 0: up to 4 buffers, variable count, partially bound, update after bind.
        let flags = [vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT
            | vk::DescriptorBindingFlags::PARTIALLY_BOUND
            | vk::DescriptorBindingFlags::UPDATE_AFTER_BIND];
        let mut binding_flags =
            vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(4)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let set_layout = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default()
                    .flags(vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL)
                    .bindings(&bindings)
                    .push_next(&mut binding_flags),
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
        let code = assemble(ARRAY);
        let module = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
            .expect("a module");
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let pipeline = d
            .create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(layout)],
                None,
            )
            .map_err(|(_, e)| e)
            .expect("a pipeline")[0];
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(4)];
        let pool = d
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .flags(vk::DescriptorPoolCreateFlags::UPDATE_AFTER_BIND)
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
            .expect("a pool");
        // This set holds 2 of the binding's 4.
        let counts = [2];
        let mut variable = vk::DescriptorSetVariableDescriptorCountAllocateInfo::default()
            .descriptor_counts(&counts);
        let set = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts)
                    .push_next(&mut variable),
            )
            .expect("a set")[0];
        let write = |element: u32, buffer: vk::Buffer| {
            let info = [vk::DescriptorBufferInfo::default()
                .buffer(buffer)
                .range(vk::WHOLE_SIZE)];
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .dst_array_element(element)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&info);
            d.update_descriptor_sets(&[w], &[]);
        };
        write(0, buffers[0]);
        write(1, buffers[2]);
        // Past the set's count (2): refused, so element 2 stays absent.
        write(2, buffers[2]);

        let cb = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(
                        d.create_command_pool(&vk::CommandPoolCreateInfo::default(), None)
                            .expect("a command pool"),
                    )
                    .command_buffer_count(1),
            )
            .expect("a command buffer")[0];
        d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
            .expect("begun");
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        // Workgroup 2 reaches element 2: absent, a finding, nothing stored.
        d.cmd_dispatch(cb, 3, 1, 1);
        d.end_command_buffer(cb).expect("ended");
        // Updated after the set was bound (UPDATE_AFTER_BIND): the dispatch sees buffer 1.
        write(1, buffers[1]);
        let cbs = [cb];
        d.queue_submit(
            queue,
            &[vk::SubmitInfo::default().command_buffers(&cbs)],
            vk::Fence::null(),
        )
        .expect("submitted");
        d.queue_wait_idle(queue).expect("idle");
        // Buffer 0 from workgroup 0, buffer 1 from workgroup 1 (the update after binding),
        // buffer 2 neither through element 1 (the descriptor replaced) nor element 2 (past
        // the set's count).
        let got = (word(words, 0), word(words, 4), word(words, 8));
        d.destroy_device(None);
        instance.destroy_instance(None);
        assert_eq!(got, (1, 2, 0));
    }
}
