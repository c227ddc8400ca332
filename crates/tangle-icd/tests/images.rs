//! The driver's images, samplers, texel buffers, format queries, timestamp queries,
//! `vkCmdDispatchBase` with a base, `TANGLE_IDENTITY` and VK_EXT_pipeline_robustness, through
//! the real Vulkan loader (helpers in `common`). Without a Vulkan loader installed the tests are
//! ignored (`cfg(vulkan_driver)`).
#![cfg_attr(not(vulkan_driver), allow(dead_code, unused_imports))]

mod common;

use ash::vk;
use common::{child, color_layers, color_range, in_child, set_word, word, Bind, Gpu};
use std::ffi::OsStr;
use std::path::PathBuf;

/// Writes `x + 10 y + 7` into texel (x, y) of a 2D R32ui storage image, 4x4 invocations.
const STORE_IMAGE: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %img
               OpExecutionMode %main LocalSize 4 4 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %img DescriptorSet 0
               OpDecorate %img Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %i32 = OpTypeInt 32 1
         %v3 = OpTypeVector %u32 3
        %v2u = OpTypeVector %u32 2
        %v2i = OpTypeVector %i32 2
        %v4u = OpTypeVector %u32 4
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
      %imgty = OpTypeImage %u32 2D 0 0 0 2 R32ui
       %pimg = OpTypePointer UniformConstant %imgty
        %img = OpVariable %pimg UniformConstant
        %c10 = OpConstant %u32 10
         %c7 = OpConstant %u32 7
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %x = OpCompositeExtract %u32 %g 0
          %y = OpCompositeExtract %u32 %g 1
         %xy = OpCompositeConstruct %v2u %x %y
      %coord = OpBitcast %v2i %xy
         %ty = OpIMul %u32 %y %c10
          %v = OpIAdd %u32 %x %ty
         %v7 = OpIAdd %u32 %v %c7
      %texel = OpCompositeConstruct %v4u %v7 %v7 %v7 %v7
          %i = OpLoad %imgty %img
               OpImageWrite %i %coord %texel
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_storage_image_written_by_a_shader_is_copied_out_exactly() {
    let gpu = Gpu::new(false);
    let (image, view) = gpu.image(vk::Format::R32_UINT, 8, 4);
    let (memory, ptr) = gpu.memory(256);
    let out = gpu.buffer(memory, 0, 128);
    let k = gpu.kernel(STORE_IMAGE, &[vk::DescriptorType::STORAGE_IMAGE], None);
    gpu.write(
        &k,
        0,
        vk::DescriptorType::STORAGE_IMAGE,
        Bind::Image(view, vk::Sampler::null()),
    );
    gpu.run(|d, cb| {
        let to_general = vk::ImageMemoryBarrier::default()
            .image(image)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .subresource_range(color_range());
        // SAFETY: a command buffer being recorded and live objects.
        unsafe {
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_general],
            );
            let five = vk::ClearColorValue {
                uint32: [5, 0, 0, 0],
            };
            d.cmd_clear_color_image(cb, image, vk::ImageLayout::GENERAL, &five, &[color_range()]);
        }
        gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]);
        let region = vk::BufferImageCopy::default()
            .image_subresource(color_layers())
            .image_extent(vk::Extent3D {
                width: 8,
                height: 4,
                depth: 1,
            });
        // SAFETY: as above; the region lies inside the image and the buffer.
        unsafe {
            d.cmd_copy_image_to_buffer(cb, image, vk::ImageLayout::GENERAL, out, &[region]);
        }
    });
    for y in 0..4 {
        for x in 0..8 {
            let want = if x < 4 { x + 10 * y + 7 } else { 5 };
            assert_eq!(word(ptr, (y * 8 + x) as usize), want, "texel ({x}, {y})");
        }
    }
    // SAFETY: a live image.
    let layout = unsafe {
        gpu.device.get_image_subresource_layout(
            image,
            vk::ImageSubresource::default().aspect_mask(vk::ImageAspectFlags::COLOR),
        )
    };
    assert_eq!((layout.row_pitch, layout.size), (32, 128));
}

/// `out[y * 4 + x]` = the red component of the 4x4 combined image sampler at binding 0,
/// sampled at the centre of texel (x, y) with an explicit LOD of 0.
const SAMPLE: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %tex %out
               OpExecutionMode %main LocalSize 4 4 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %tex DescriptorSet 0
               OpDecorate %tex Binding 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %f32 = OpTypeFloat 32
         %v3 = OpTypeVector %u32 3
        %v2f = OpTypeVector %f32 2
        %v4f = OpTypeVector %f32 4
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
      %imgty = OpTypeImage %f32 2D 0 0 0 1 Unknown
       %sity = OpTypeSampledImage %imgty
        %psi = OpTypePointer UniformConstant %sity
        %tex = OpVariable %psi UniformConstant
        %arr = OpTypeRuntimeArray %f32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
        %out = OpVariable %pbuf StorageBuffer
         %pf = OpTypePointer StorageBuffer %f32
         %c0 = OpConstant %u32 0
         %c4 = OpConstant %u32 4
       %half = OpConstant %f32 0.5
    %quarter = OpConstant %f32 0.25
       %zero = OpConstant %f32 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %x = OpCompositeExtract %u32 %g 0
          %y = OpCompositeExtract %u32 %g 1
         %fx = OpConvertUToF %f32 %x
         %fy = OpConvertUToF %f32 %y
         %hx = OpFAdd %f32 %fx %half
         %hy = OpFAdd %f32 %fy %half
          %u = OpFMul %f32 %hx %quarter
          %v = OpFMul %f32 %hy %quarter
         %uv = OpCompositeConstruct %v2f %u %v
          %s = OpLoad %sity %tex
          %c = OpImageSampleExplicitLod %v4f %s %uv Lod %zero
          %r = OpCompositeExtract %f32 %c 0
         %y4 = OpIMul %u32 %y %c4
          %i = OpIAdd %u32 %y4 %x
          %p = OpAccessChain %pf %out %c0 %i
               OpStore %p %r
               OpReturn
               OpFunctionEnd
"#;

/// The value of texel (x, y) of the 4x4 image [`sampled`] fills.
fn texel(x: u32, y: u32) -> f32 {
    (y * 4 + x) as f32 * 0.25 + 1.0
}

/// A clamp-to-edge sampler with `filter`.
fn sampler(gpu: &Gpu, filter: vk::Filter) -> vk::Sampler {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(filter)
        .min_filter(filter)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
    // SAFETY: a valid create-info.
    unsafe { gpu.device.create_sampler(&info, None) }.expect("a sampler")
}

/// Runs `k` (binding 0 the 4x4 R32 float image of [`texel`], filled from a padded staging
/// buffer, with `sampler` when `combined`; binding 1 the output) and returns the 16 floats it
/// wrote.
fn sampled(gpu: &Gpu, k: &common::Kernel, sampler: vk::Sampler, combined: bool) -> Vec<f32> {
    let (image, view) = gpu.image(vk::Format::R32_SFLOAT, 4, 4);
    // Staging rows of 8 texels from byte 64 (bufferRowLength 8), then the output at 256.
    let (memory, ptr) = gpu.memory(512);
    let staging = gpu.buffer(memory, 0, 256);
    let out = gpu.buffer(memory, 256, 64);
    for y in 0..4 {
        for x in 0..4 {
            set_word(ptr, (16 + y * 8 + x) as usize, texel(x, y).to_bits());
        }
    }
    let kind = match combined {
        true => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        false => vk::DescriptorType::SAMPLED_IMAGE,
    };
    gpu.write(k, 0, kind, Bind::Image(view, sampler));
    gpu.write(
        k,
        1,
        vk::DescriptorType::STORAGE_BUFFER,
        Bind::Buffer(out, 0, 64),
    );
    gpu.run(|d, cb| {
        let region = vk::BufferImageCopy::default()
            .buffer_offset(64)
            .buffer_row_length(8)
            .image_subresource(color_layers())
            .image_extent(vk::Extent3D {
                width: 4,
                height: 4,
                depth: 1,
            });
        // SAFETY: a command buffer being recorded; the region lies inside both.
        unsafe {
            d.cmd_copy_buffer_to_image(cb, staging, image, vk::ImageLayout::GENERAL, &[region]);
        }
        gpu.dispatch(d, cb, k, [0; 3], [1, 1, 1]);
    });
    (0..16).map(|i| f32::from_bits(word(ptr, 64 + i))).collect()
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_sampled_image_is_read_through_a_nearest_sampler_exactly() {
    let gpu = Gpu::new(false);
    let nearest = sampler(&gpu, vk::Filter::NEAREST);
    let types = [
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let k = gpu.kernel(SAMPLE, &types, None);
    let got = sampled(&gpu, &k, nearest, true);
    for y in 0..4 {
        for x in 0..4 {
            let i = (y * 4 + x) as usize;
            assert_eq!(got[i], texel(x, y), "sample at texel ({x}, {y})");
        }
    }
}

/// [`SAMPLE`] with a sampled image at binding 0 and a separate sampler at binding 2, sampled at
/// the right edge of texel (x, y): u = (x + 1) / 4.
const SAMPLE_SEPARATE: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %tex %out %smp
               OpExecutionMode %main LocalSize 4 4 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %tex DescriptorSet 0
               OpDecorate %tex Binding 0
               OpDecorate %smp DescriptorSet 0
               OpDecorate %smp Binding 2
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %f32 = OpTypeFloat 32
         %v3 = OpTypeVector %u32 3
        %v2f = OpTypeVector %f32 2
        %v4f = OpTypeVector %f32 4
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
      %imgty = OpTypeImage %f32 2D 0 0 0 1 Unknown
      %smpty = OpTypeSampler
       %sity = OpTypeSampledImage %imgty
        %pim = OpTypePointer UniformConstant %imgty
       %psmp = OpTypePointer UniformConstant %smpty
        %tex = OpVariable %pim UniformConstant
        %smp = OpVariable %psmp UniformConstant
        %arr = OpTypeRuntimeArray %f32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
        %out = OpVariable %pbuf StorageBuffer
         %pf = OpTypePointer StorageBuffer %f32
         %c0 = OpConstant %u32 0
         %c4 = OpConstant %u32 4
        %one = OpConstant %f32 1
       %half = OpConstant %f32 0.5
    %quarter = OpConstant %f32 0.25
       %zero = OpConstant %f32 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %x = OpCompositeExtract %u32 %g 0
          %y = OpCompositeExtract %u32 %g 1
         %fx = OpConvertUToF %f32 %x
         %fy = OpConvertUToF %f32 %y
         %hx = OpFAdd %f32 %fx %one
         %hy = OpFAdd %f32 %fy %half
          %u = OpFMul %f32 %hx %quarter
          %v = OpFMul %f32 %hy %quarter
         %uv = OpCompositeConstruct %v2f %u %v
         %ti = OpLoad %imgty %tex
         %sm = OpLoad %smpty %smp
          %s = OpSampledImage %sity %ti %sm
          %c = OpImageSampleExplicitLod %v4f %s %uv Lod %zero
          %r = OpCompositeExtract %f32 %c 0
         %y4 = OpIMul %u32 %y %c4
          %i = OpIAdd %u32 %y4 %x
          %p = OpAccessChain %pf %out %c0 %i
               OpStore %p %r
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn an_immutable_linear_sampler_filters_between_texels() {
    let gpu = Gpu::new(false);
    let linear = sampler(&gpu, vk::Filter::LINEAR);
    let types = [
        vk::DescriptorType::SAMPLED_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::SAMPLER,
    ];
    // Binding 2's sampler is the layout's: the set is never written there.
    let k = gpu.kernel_with(SAMPLE_SEPARATE, &types, None, &[(2, linear)]);
    let got = sampled(&gpu, &k, vk::Sampler::null(), false);
    for y in 0..4 {
        for x in 0..4 {
            // Halfway between texels x and x + 1 (clamped at the edge): their mean, exactly.
            let want = (texel(x, y) + texel((x + 1).min(3), y)) / 2.0;
            let i = (y * 4 + x) as usize;
            assert_eq!(got[i], want, "sample right of texel ({x}, {y})");
        }
    }
}

/// `dst[i] = 3 src[i] + 1` over 8 invocations: a uniform texel buffer fetched, a storage texel
/// buffer written.
const TEXEL: &str = r#"
               OpCapability Shader
               OpCapability SampledBuffer
               OpCapability ImageBuffer
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %src %dst
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %src DescriptorSet 0
               OpDecorate %src Binding 0
               OpDecorate %dst DescriptorSet 0
               OpDecorate %dst Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %i32 = OpTypeInt 32 1
         %v3 = OpTypeVector %u32 3
        %v4u = OpTypeVector %u32 4
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %uty = OpTypeImage %u32 Buffer 0 0 0 1 R32ui
        %sty = OpTypeImage %u32 Buffer 0 0 0 2 R32ui
         %pu = OpTypePointer UniformConstant %uty
         %ps = OpTypePointer UniformConstant %sty
        %src = OpVariable %pu UniformConstant
        %dst = OpVariable %ps UniformConstant
         %c3 = OpConstant %u32 3
         %c1 = OpConstant %u32 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %x = OpCompositeExtract %u32 %g 0
          %i = OpBitcast %i32 %x
          %s = OpLoad %uty %src
          %t = OpImageFetch %v4u %s %i
          %v = OpCompositeExtract %u32 %t 0
          %m = OpIMul %u32 %v %c3
          %r = OpIAdd %u32 %m %c1
         %rv = OpCompositeConstruct %v4u %r %r %r %r
          %d = OpLoad %sty %dst
               OpImageWrite %d %i %rv
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn texel_buffers_are_fetched_and_written() {
    let gpu = Gpu::new(false);
    // src: 8 texels from byte 16 of the first buffer; dst: 8 texels of the second.
    let (memory, ptr) = gpu.memory(256);
    let src = gpu.buffer(memory, 0, 64);
    let dst = gpu.buffer(memory, 128, 32);
    for i in 0..8 {
        set_word(ptr, 4 + i, 10 + i as u32);
        set_word(ptr, 32 + i, 99);
    }
    let view = |buffer, offset, range| {
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer)
            .format(vk::Format::R32_UINT)
            .offset(offset)
            .range(range);
        // SAFETY: a valid create-info over a live buffer.
        unsafe { gpu.device.create_buffer_view(&info, None) }.expect("a buffer view")
    };
    let k = gpu.kernel(
        TEXEL,
        &[
            vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
            vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        ],
        None,
    );
    gpu.write(
        &k,
        0,
        vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        Bind::Texel(view(src, 16, 32)),
    );
    gpu.write(
        &k,
        1,
        vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        Bind::Texel(view(dst, 0, vk::WHOLE_SIZE)),
    );
    gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
    for i in 0..8 {
        assert_eq!(word(ptr, 32 + i), 3 * (10 + i as u32) + 1, "dst[{i}]");
        assert_eq!(word(ptr, 4 + i), 10 + i as u32, "src[{i}] is only read");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn format_queries_answer_for_the_executor_formats_only() {
    let gpu = Gpu::new(false);
    let i = &gpu.instance;
    // SAFETY: a live physical device.
    let props = |f| unsafe { i.get_physical_device_format_properties(gpu.physical, f) };
    let rgba8 = props(vk::Format::R8G8B8A8_UNORM);
    assert!(rgba8.optimal_tiling_features.contains(
        vk::FormatFeatureFlags::STORAGE_IMAGE
            | vk::FormatFeatureFlags::SAMPLED_IMAGE
            | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
    ));
    assert!(rgba8
        .buffer_features
        .contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER));
    assert!(!rgba8
        .optimal_tiling_features
        .contains(vk::FormatFeatureFlags::COLOR_ATTACHMENT));
    assert!(props(vk::Format::R32_UINT)
        .optimal_tiling_features
        .contains(vk::FormatFeatureFlags::STORAGE_IMAGE_ATOMIC));
    // Formats the executor has no conversions for support nothing.
    for f in [
        vk::Format::D32_SFLOAT,
        vk::Format::BC1_RGB_UNORM_BLOCK,
        vk::Format::B10G11R11_UFLOAT_PACK32,
    ] {
        let p = props(f);
        let none = vk::FormatFeatureFlags::empty();
        assert_eq!(
            (
                p.linear_tiling_features,
                p.optimal_tiling_features,
                p.buffer_features
            ),
            (none, none, none),
            "{f:?}"
        );
    }
    let mut three = vk::FormatProperties3::default();
    let mut two = vk::FormatProperties2::default().push_next(&mut three);
    // SAFETY: a live physical device and a valid chain.
    unsafe {
        i.get_physical_device_format_properties2(gpu.physical, vk::Format::R32_SFLOAT, &mut two)
    };
    assert!(three
        .optimal_tiling_features
        .contains(vk::FormatFeatureFlags2::STORAGE_READ_WITHOUT_FORMAT));
    let image_props = |usage| {
        // SAFETY: a live physical device.
        unsafe {
            i.get_physical_device_image_format_properties(
                gpu.physical,
                vk::Format::R32_UINT,
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                vk::ImageCreateFlags::empty(),
            )
        }
    };
    let storage = image_props(vk::ImageUsageFlags::STORAGE).expect("a storage image");
    assert_eq!(
        (
            storage.max_mip_levels,
            storage.max_array_layers,
            storage.sample_counts
        ),
        (1, 1, vk::SampleCountFlags::TYPE_1)
    );
    assert_eq!(
        image_props(vk::ImageUsageFlags::COLOR_ATTACHMENT).err(),
        Some(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)
    );
    // An image the executor cannot represent is refused, by name on stderr.
    let info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R32_UINT)
        .extent(vk::Extent3D {
            width: 4,
            height: 4,
            depth: 1,
        })
        .mip_levels(2)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .usage(vk::ImageUsageFlags::STORAGE);
    // SAFETY: a valid create-info (its mip count past what the device reports).
    let refused = unsafe { gpu.device.create_image(&info, None) };
    assert_eq!(refused, Err(vk::Result::ERROR_VALIDATION_FAILED_EXT));
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn timestamps_are_64_bit_nanoseconds_monotonic_in_submission_order() {
    let gpu = Gpu::new(false);
    let i = &gpu.instance;
    // SAFETY: a live physical device.
    let (family, limits) = unsafe {
        (
            i.get_physical_device_queue_family_properties(gpu.physical)[0],
            i.get_physical_device_properties(gpu.physical).limits,
        )
    };
    assert_eq!(family.timestamp_valid_bits, 64);
    assert_eq!(limits.timestamp_period, 1.0);
    let d = &gpu.device;
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(4);
    // SAFETY: valid create-infos; the pool outlives its uses.
    let pool = unsafe { d.create_query_pool(&info, None) }.expect("a query pool");
    let occlusion = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::OCCLUSION)
        .query_count(1);
    // SAFETY: as above.
    assert_eq!(
        unsafe { d.create_query_pool(&occlusion, None) }.err(),
        Some(vk::Result::ERROR_FEATURE_NOT_PRESENT)
    );
    // SAFETY: a live pool (host reset: hostQueryReset is claimed).
    unsafe { d.reset_query_pool(pool, 0, 4) };
    let mut results = [[0u64; 2]; 4];
    let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY;
    // SAFETY: a live pool and an array of 4 (value, availability) pairs.
    let not_yet = unsafe { d.get_query_pool_results(pool, 0, &mut results, flags) };
    assert_eq!(not_yet, Err(vk::Result::NOT_READY));
    assert!(results.iter().all(|[_, available]| *available == 0));
    let (memory, ptr) = gpu.memory(64);
    let copy = gpu.buffer(memory, 0, 64);
    for first in [0, 2] {
        gpu.run(|d, cb| {
            // SAFETY: a command buffer being recorded, a live pool and buffer.
            unsafe {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, first);
                d.cmd_write_timestamp2(cb, vk::PipelineStageFlags2::ALL_COMMANDS, pool, first + 1);
                if first == 2 {
                    d.cmd_copy_query_pool_results(cb, pool, 0, 4, copy, 0, 16, flags);
                }
            }
        });
    }
    // SAFETY: as above.
    unsafe { d.get_query_pool_results(pool, 0, &mut results, flags | vk::QueryResultFlags::WAIT) }
        .expect("every query written");
    let stamps: Vec<u64> = results.iter().map(|[t, _]| *t).collect();
    assert!(results.iter().all(|[_, available]| *available == 1));
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    assert!(stamps[0] > 0);
    // The copy saw the queries as they stood: all four written, the same values.
    for (q, t) in stamps.iter().enumerate() {
        let at = q * 4;
        let copied = u64::from(word(ptr, at)) | u64::from(word(ptr, at + 1)) << 32;
        assert_eq!((copied, word(ptr, at + 2)), (*t, 1), "query {q}");
    }
    // 32-bit results are the low words.
    let mut low = [0u32; 4];
    // SAFETY: as above.
    unsafe { d.get_query_pool_results(pool, 0, &mut low, vk::QueryResultFlags::empty()) }
        .expect("available");
    assert_eq!(low[3], stamps[3] as u32);
    // SAFETY: a live pool, destroyed once.
    unsafe { d.destroy_query_pool(pool, None) };
}

/// `out[GlobalInvocationId.x] = 1000 WorkgroupId.x + GlobalInvocationId.x`, 4 invocations a
/// workgroup.
const BASE: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %wid %out
               OpExecutionMode %main LocalSize 4 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %wid BuiltIn WorkgroupId
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %wid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
        %out = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
      %c1000 = OpConstant %u32 1000
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %x = OpCompositeExtract %u32 %g 0
          %w = OpLoad %v3 %wid
         %wx = OpCompositeExtract %u32 %w 0
          %m = OpIMul %u32 %wx %c1000
          %v = OpIAdd %u32 %m %x
          %p = OpAccessChain %pu %out %c0 %x
               OpStore %p %v
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn dispatch_base_starts_the_workgroup_ids_at_the_base() {
    let gpu = Gpu::new(false);
    let (memory, ptr) = gpu.memory(64);
    let out = gpu.buffer(memory, 0, 64);
    for i in 0..16 {
        set_word(ptr, i, 77);
    }
    let k = gpu.kernel(BASE, &[vk::DescriptorType::STORAGE_BUFFER], None);
    gpu.write(
        &k,
        0,
        vk::DescriptorType::STORAGE_BUFFER,
        Bind::Buffer(out, 0, 64),
    );
    // Workgroups 2 and 3: invocations 8..16.
    gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [2, 0, 0], [2, 1, 1]));
    for i in 0..16u32 {
        let want = if i < 8 { 77 } else { 1000 * (i / 4) + i };
        assert_eq!(word(ptr, i as usize), want, "out[{i}]");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn tangle_identity_reports_the_profiles_device() {
    let gpu = Gpu::new(false);
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: a live physical device and a valid chain.
    unsafe {
        gpu.instance
            .get_physical_device_properties2(gpu.physical, &mut props)
    };
    let p = props.properties;
    let name = p
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned());
    if in_child() {
        // TANGLE_PROFILE=nvidia TANGLE_IDENTITY=profile: the device the profile was read from.
        assert_eq!((p.vendor_id, p.device_id), (0x10de, 0x2335));
        assert_eq!(driver.driver_id, vk::DriverId::NVIDIA_PROPRIETARY);
        assert_eq!(name.as_deref(), Ok("NVIDIA H200"));
        return;
    }
    assert_eq!(p.vendor_id, tangle_icd::caps::VENDOR_ID);
    assert_eq!(name.as_deref(), Ok("tangle (default profile)"));
    child(
        "tangle_identity_reports_the_profiles_device",
        &[
            ("TANGLE_PROFILE", OsStr::new("nvidia")),
            ("TANGLE_IDENTITY", OsStr::new("profile")),
        ],
    );
}

/// `out[i] = in[i] + 1` for 64 invocations, `in` at binding 0 and `out` at binding 1.
const COPY_PLUS_ONE: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %in %out
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %in DescriptorSet 0
               OpDecorate %in Binding 0
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
         %in = OpVariable %pbuf StorageBuffer
        %out = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %pi = OpAccessChain %pu %in %c0 %i
          %v = OpLoad %u32 %pi
          %r = OpIAdd %u32 %v %c1
         %po = OpAccessChain %pu %out %c0 %i
               OpStore %po %r
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn pipeline_robustness_overrides_the_device_default() {
    if in_child() {
        // The device has robustBufferAccess; the pipeline asks for TANGLE_TEST_PIPELINE.
        use vk::PipelineRobustnessBufferBehaviorEXT as B;
        let storage = match std::env::var("TANGLE_TEST_PIPELINE").as_deref() {
            Ok("disabled") => Some(B::DISABLED),
            Ok("robust2") => Some(B::ROBUST_BUFFER_ACCESS_2),
            _ => None,
        };
        let gpu = Gpu::new(true);
        let (memory, ptr) = gpu.memory(512);
        for i in 0..64 {
            set_word(ptr, i, i as u32);
            set_word(ptr, 64 + i, 5000);
        }
        let input = gpu.buffer(memory, 0, 256);
        let output = gpu.buffer(memory, 256, 256);
        let robustness =
            storage.map(|s| vk::PipelineRobustnessCreateInfoEXT::default().storage_buffers(s));
        let types = [vk::DescriptorType::STORAGE_BUFFER; 2];
        let k = gpu.kernel(COPY_PLUS_ONE, &types, robustness);
        gpu.write(&k, 0, types[0], Bind::Buffer(input, 0, 256));
        // `out` holds 32 words: invocations 32.. store out of bounds.
        gpu.write(&k, 1, types[1], Bind::Buffer(output, 0, 128));
        gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
        for i in 0..32 {
            assert_eq!(word(ptr, 64 + i), i as u32 + 1, "out[{i}]");
        }
        if storage == Some(B::ROBUST_BUFFER_ACCESS_2) {
            // robustBufferAccess2: out-of-bounds stores are discarded.
            assert!((32..64).all(|i| word(ptr, 64 + i) == 5000));
        }
        return;
    }
    for (pipeline, kind, severity) in [
        ("default", "robust-access", "warning"),
        ("disabled", "out-of-bounds", "error"),
        ("robust2", "", ""),
    ] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_pipeline_robust_{pipeline}_{}.json",
            std::process::id()
        ));
        child(
            "pipeline_robustness_overrides_the_device_default",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_PIPELINE", OsStr::new(pipeline)),
            ],
        );
        let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
        let _ = std::fs::remove_file(&report);
        let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
        let findings = json["findings"].as_array().expect("a findings list");
        assert_eq!(findings.is_empty(), kind.is_empty(), "{pipeline}: {text}");
        for f in findings {
            assert_eq!(
                (f["kind"].as_str(), f["severity"].as_str()),
                (Some(kind), Some(severity)),
                "{pipeline}: {text}"
            );
        }
        assert_eq!(json["errors"].as_array().map(Vec::len), Some(0), "{text}");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn pipeline_robustness_needs_the_feature() {
    let gpu = Gpu::with_features(true, false);
    let types = [vk::DescriptorType::STORAGE_BUFFER; 2];
    let disabled = vk::PipelineRobustnessCreateInfoEXT::default()
        .storage_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED);
    let refused = gpu.try_kernel(COPY_PLUS_ONE, &types, Some(disabled), &[]);
    assert_eq!(refused.err(), Some(vk::Result::ERROR_VALIDATION_FAILED_EXT));
    // DEVICE_DEFAULT everywhere asks nothing of the feature.
    let default = vk::PipelineRobustnessCreateInfoEXT::default();
    assert!(gpu
        .try_kernel(COPY_PLUS_ONE, &types, Some(default), &[])
        .is_ok());
}
