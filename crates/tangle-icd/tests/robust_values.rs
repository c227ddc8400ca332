//! Robust buffer access through the driver (issue 34): with `robustBufferAccess` enabled at
//! `vkCreateDevice`, a load past a buffer's range returns the implementation's choice, and the
//! report warns (`robust-access`) only where that value reaches the output
//! (`tangle_exec::check::robust`): a kernel that drops it has no finding, one that stores it
//! has the warning. And image writes outside the image, whatever the pipeline's
//! `VkPipelineRobustnessCreateInfoEXT` asks for (VK_EXT_robustness2's `robustImageAccess2`,
//! disabled, the device's default): "If the texel fails integer texel coordinate validation,
//! then the write has no effect" — they change nothing and are no finding.

mod common;

use ash::vk;
use common::{child, color_layers, color_range, in_child, set_word, word, Bind, Gpu};
use std::ffi::OsStr;
use std::path::PathBuf;

/// `v = in[i]` for 64 invocations; `out[i] = v + 1` where `i < LIMIT` (specialised below by
/// text: 32 drops the values loaded past a 32-word `in`, 64 stores them).
fn kernel(limit: u32) -> String {
    format!(
        r#"
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
       %bool = OpTypeBool
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
      %limit = OpConstant %u32 {limit}
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %pi = OpAccessChain %pu %in %c0 %i
          %v = OpLoad %u32 %pi
          %r = OpIAdd %u32 %v %c1
         %ok = OpULessThan %bool %i %limit
               OpSelectionMerge %end None
               OpBranchConditional %ok %store %end
      %store = OpLabel
         %po = OpAccessChain %pu %out %c0 %i
               OpStore %po %r
               OpBranch %end
        %end = OpLabel
               OpReturn
               OpFunctionEnd
"#
    )
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_value_loaded_past_the_range_warns_only_where_it_is_stored() {
    if in_child() {
        let limit = match std::env::var("TANGLE_TEST_LIMIT").as_deref() {
            Ok("64") => 64,
            _ => 32,
        };
        let gpu = Gpu::new(true);
        let (memory, ptr) = gpu.memory(512);
        for i in 0..64 {
            set_word(ptr, i, i as u32);
            set_word(ptr, 64 + i, 5000);
        }
        let input = gpu.buffer(memory, 0, 256);
        let output = gpu.buffer(memory, 256, 256);
        let types = [vk::DescriptorType::STORAGE_BUFFER; 2];
        let k = gpu.kernel(&kernel(limit), &types, None);
        // `in` holds 32 words: invocations 32.. load past its range.
        gpu.write(&k, 0, types[0], Bind::Buffer(input, 0, 128));
        gpu.write(&k, 1, types[1], Bind::Buffer(output, 0, 256));
        gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
        for i in 0..32 {
            assert_eq!(word(ptr, 64 + i), i as u32 + 1, "out[{i}]");
        }
        if limit == 32 {
            assert!((32..64).all(|i| word(ptr, 64 + i) == 5000));
        }
        return;
    }
    for (limit, warns) in [("32", false), ("64", true)] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_robust_values_{limit}_{}.json",
            std::process::id()
        ));
        child(
            "a_value_loaded_past_the_range_warns_only_where_it_is_stored",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_LIMIT", OsStr::new(limit)),
            ],
        );
        let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
        let _ = std::fs::remove_file(&report);
        let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
        let findings = json["findings"].as_array().expect("a findings list");
        assert_eq!(!findings.is_empty(), warns, "limit {limit}: {text}");
        for f in findings {
            assert_eq!(
                (f["kind"].as_str(), f["severity"].as_str()),
                (Some("robust-access"), Some("warning")),
                "{text}"
            );
        }
        assert_eq!(json["errors"].as_array().map(Vec::len), Some(0), "{text}");
    }
}

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
fn image_writes_outside_the_image_have_no_effect() {
    if in_child() {
        use vk::PipelineRobustnessImageBehaviorEXT as I;
        let images = match std::env::var("TANGLE_TEST_IMAGES").as_deref() {
            Ok("robust2") => I::ROBUST_IMAGE_ACCESS_2,
            Ok("disabled") => I::DISABLED,
            _ => I::DEVICE_DEFAULT,
        };
        let gpu = Gpu::new(false);
        // 2 texels wide: invocations x = 2, 3 write outside.
        let (image, view) = gpu.image(vk::Format::R32_UINT, 2, 4);
        let (memory, ptr) = gpu.memory(256);
        let out = gpu.buffer(memory, 0, 32);
        let robustness = vk::PipelineRobustnessCreateInfoEXT::default().images(images);
        let kind = vk::DescriptorType::STORAGE_IMAGE;
        let k = gpu.kernel(STORE_IMAGE, &[kind], Some(robustness));
        gpu.write(&k, 0, kind, Bind::Image(view, vk::Sampler::null()));
        gpu.run(|d, cb| {
            let to_general = vk::ImageMemoryBarrier::default()
                .image(image)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::GENERAL)
                .subresource_range(color_range());
            let region = vk::BufferImageCopy::default()
                .image_subresource(color_layers())
                .image_extent(vk::Extent3D {
                    width: 2,
                    height: 4,
                    depth: 1,
                });
            // SAFETY: a command buffer being recorded and live objects; the copy's region
            // lies inside the image and the buffer.
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
                gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]);
                d.cmd_copy_image_to_buffer(cb, image, vk::ImageLayout::GENERAL, out, &[region]);
            }
        });
        for y in 0..4u32 {
            for x in 0..2u32 {
                assert_eq!(
                    word(ptr, (y * 2 + x) as usize),
                    x + 10 * y + 7,
                    "({x}, {y})"
                );
            }
        }
        return;
    }
    // The device enables no image robustness: its default is none. A write outside has no
    // effect with or without it.
    for (images, kind) in [("robust2", ""), ("disabled", ""), ("default", "")] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_robust_images_{images}_{}.json",
            std::process::id()
        ));
        child(
            "image_writes_outside_the_image_have_no_effect",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_IMAGES", OsStr::new(images)),
            ],
        );
        let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
        let _ = std::fs::remove_file(&report);
        let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
        let findings = json["findings"].as_array().expect("a findings list");
        assert_eq!(findings.is_empty(), kind.is_empty(), "{images}: {text}");
        for f in findings {
            assert_eq!(f["kind"].as_str(), Some(kind), "{text}");
        }
    }
}
