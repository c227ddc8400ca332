//! VK_EXT_robustness2's `nullDescriptor` through the driver (`tangle_exec::check::null`): with
//! the feature enabled at `vkCreateDevice`, a storage buffer written with `VK_NULL_HANDLE`
//! reads zero, its store and atomic change nothing (the atomic returns zero) and its
//! `OpArrayLength` is 0, with no finding; without the feature `vkUpdateDescriptorSets`
//! refuses the null buffer (VUID-VkDescriptorBufferInfo-buffer-02998). Likewise a null storage
//! image and storage texel buffer: reads zero, writes and atomics discarded, size 0, or without
//! the feature refused (VUID-VkWriteDescriptorSet-descriptorType-02997 and -02995).

mod common;

use ash::vk;
use common::{child, in_child, set_word, word, Bind, Gpu};
use std::ffi::OsStr;
use std::path::PathBuf;

/// For 8 invocations: `v = nul[i]; nul[i] = 7; old = atomicAdd(nul[i], 5)`, then
/// `out[3i..3i+3] = (v + 100, old + 200, nul.length() + 300)`.
const KERNEL: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %nul %out
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %nul DescriptorSet 0
               OpDecorate %nul Binding 0
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
        %nul = OpVariable %pbuf StorageBuffer
        %out = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
         %c2 = OpConstant %u32 2
         %c3 = OpConstant %u32 3
         %c5 = OpConstant %u32 5
         %c7 = OpConstant %u32 7
       %c100 = OpConstant %u32 100
       %c200 = OpConstant %u32 200
       %c300 = OpConstant %u32 300
     %device = OpConstant %u32 1
    %relaxed = OpConstant %u32 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %pn = OpAccessChain %pu %nul %c0 %i
          %v = OpLoad %u32 %pn
               OpStore %pn %c7
        %old = OpAtomicIAdd %u32 %pn %device %relaxed %c5
        %len = OpArrayLength %u32 %nul 0
         %o0 = OpIMul %u32 %i %c3
         %o1 = OpIAdd %u32 %o0 %c1
         %o2 = OpIAdd %u32 %o0 %c2
         %p0 = OpAccessChain %pu %out %c0 %o0
         %p1 = OpAccessChain %pu %out %c0 %o1
         %p2 = OpAccessChain %pu %out %c0 %o2
         %r0 = OpIAdd %u32 %v %c100
         %r1 = OpIAdd %u32 %old %c200
         %r2 = OpIAdd %u32 %len %c300
               OpStore %p0 %r0
               OpStore %p1 %r1
               OpStore %p2 %r2
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_null_buffer_reads_zero_and_drops_writes_only_with_the_feature() {
    if in_child() {
        let enabled = std::env::var("TANGLE_TEST_NULL").as_deref() == Ok("on");
        let gpu = Gpu::with_null_descriptor(false, true, enabled);
        // The device advertises the feature.
        let mut robustness2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        {
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut robustness2);
            // SAFETY: a valid chain of live structs.
            unsafe {
                gpu.instance
                    .get_physical_device_features2(gpu.physical, &mut features)
            };
        }
        assert_eq!(robustness2.null_descriptor, vk::TRUE);
        let (memory, ptr) = gpu.memory(128);
        for i in 0..24 {
            set_word(ptr, i, 0xdead);
        }
        let output = gpu.buffer(memory, 0, 96);
        let types = [vk::DescriptorType::STORAGE_BUFFER; 2];
        let k = gpu.kernel(KERNEL, &types, None);
        gpu.write(
            &k,
            0,
            types[0],
            Bind::Buffer(vk::Buffer::null(), 0, vk::WHOLE_SIZE),
        );
        if !enabled {
            // Refused: nothing is bound at binding 0, so there is nothing to dispatch.
            return;
        }
        gpu.write(&k, 1, types[1], Bind::Buffer(output, 0, 96));
        gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
        for i in 0..8 {
            let got = [word(ptr, 3 * i), word(ptr, 3 * i + 1), word(ptr, 3 * i + 2)];
            assert_eq!(got, [100, 200, 300], "invocation {i}");
        }
        return;
    }
    for null in ["on", "off"] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_null_descriptor_{null}_{}.json",
            std::process::id()
        ));
        let out = child(
            "a_null_buffer_reads_zero_and_drops_writes_only_with_the_feature",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_NULL", OsStr::new(null)),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let refused = stderr.contains("VUID-VkDescriptorBufferInfo-buffer-02998");
        assert_eq!(refused, null == "off", "{null}: {stderr}");
        if null == "on" {
            let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
            let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
            let findings = json["findings"].as_array().expect("a findings list");
            assert!(findings.is_empty(), "{text}");
            assert_eq!(json["errors"].as_array().map(Vec::len), Some(0), "{text}");
        }
        let _ = std::fs::remove_file(&report);
    }
}

/// For 4 invocations, a null 2D R32ui storage image `img` and a null R32ui storage texel buffer
/// `tb`: `out[5i..5i+5] = (img[i,0].x + 100, atomicAdd(img[i,0], 5) + 300, size(img).x + 400,
/// tb[i].x + 600, size(tb) + 800)`, after writing 9 to both.
const IMAGES: &str = r#"
               OpCapability Shader
               OpCapability ImageBuffer
               OpCapability ImageQuery
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %img %tb %out
               OpExecutionMode %main LocalSize 4 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %img DescriptorSet 0
               OpDecorate %img Binding 0
               OpDecorate %tb DescriptorSet 0
               OpDecorate %tb Binding 1
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 2
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
        %i32 = OpTypeInt 32 1
         %v3 = OpTypeVector %u32 3
        %v2i = OpTypeVector %i32 2
        %v4u = OpTypeVector %u32 4
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
      %imgty = OpTypeImage %u32 2D 0 0 0 2 R32ui
       %pimg = OpTypePointer UniformConstant %imgty
        %img = OpVariable %pimg UniformConstant
       %tbty = OpTypeImage %u32 Buffer 0 0 0 2 R32ui
        %ptb = OpTypePointer UniformConstant %tbty
         %tb = OpVariable %ptb UniformConstant
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
        %out = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %pt = OpTypePointer Image %u32
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
         %c2 = OpConstant %u32 2
         %c3 = OpConstant %u32 3
         %c4 = OpConstant %u32 4
         %c5 = OpConstant %u32 5
         %c9 = OpConstant %u32 9
       %i0 = OpConstant %i32 0
       %c100 = OpConstant %u32 100
       %c300 = OpConstant %u32 300
       %c400 = OpConstant %u32 400
       %c600 = OpConstant %u32 600
       %c800 = OpConstant %u32 800
     %device = OpConstant %u32 1
    %relaxed = OpConstant %u32 0
       %nine = OpConstantComposite %v4u %c9 %c9 %c9 %c9
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
         %ii = OpBitcast %i32 %i
         %xy = OpCompositeConstruct %v2i %ii %i0
         %im = OpLoad %imgty %img
          %v = OpImageRead %v4u %im %xy
         %vx = OpCompositeExtract %u32 %v 0
               OpImageWrite %im %xy %nine
         %tp = OpImageTexelPointer %pt %img %xy %c0
        %old = OpAtomicIAdd %u32 %tp %device %relaxed %c5
         %sz = OpImageQuerySize %v2i %im
        %szx = OpCompositeExtract %i32 %sz 0
       %szxu = OpBitcast %u32 %szx
         %tt = OpLoad %tbty %tb
          %t = OpImageRead %v4u %tt %ii
         %tx = OpCompositeExtract %u32 %t 0
               OpImageWrite %tt %ii %nine
        %tsz = OpImageQuerySize %i32 %tt
       %tszu = OpBitcast %u32 %tsz
         %o0 = OpIMul %u32 %i %c5
         %o1 = OpIAdd %u32 %o0 %c1
         %o2 = OpIAdd %u32 %o0 %c2
         %o3 = OpIAdd %u32 %o0 %c3
         %o4 = OpIAdd %u32 %o0 %c4
         %p0 = OpAccessChain %pu %out %c0 %o0
         %p1 = OpAccessChain %pu %out %c0 %o1
         %p2 = OpAccessChain %pu %out %c0 %o2
         %p3 = OpAccessChain %pu %out %c0 %o3
         %p4 = OpAccessChain %pu %out %c0 %o4
         %r0 = OpIAdd %u32 %vx %c100
         %r1 = OpIAdd %u32 %old %c300
         %r2 = OpIAdd %u32 %szxu %c400
         %r3 = OpIAdd %u32 %tx %c600
         %r4 = OpIAdd %u32 %tszu %c800
               OpStore %p0 %r0
               OpStore %p1 %r1
               OpStore %p2 %r2
               OpStore %p3 %r3
               OpStore %p4 %r4
               OpReturn
               OpFunctionEnd
"#;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn null_images_and_texel_buffers_read_zero_and_have_size_0_only_with_the_feature() {
    if in_child() {
        let enabled = std::env::var("TANGLE_TEST_NULL").as_deref() == Ok("on");
        let gpu = Gpu::with_null_descriptor(false, true, enabled);
        let (memory, ptr) = gpu.memory(128);
        for i in 0..20 {
            set_word(ptr, i, 0xdead);
        }
        let output = gpu.buffer(memory, 0, 80);
        let types = [
            vk::DescriptorType::STORAGE_IMAGE,
            vk::DescriptorType::STORAGE_TEXEL_BUFFER,
            vk::DescriptorType::STORAGE_BUFFER,
        ];
        let k = gpu.kernel(IMAGES, &types, None);
        let null_image = Bind::Image(vk::ImageView::null(), vk::Sampler::null());
        gpu.write(&k, 0, types[0], null_image);
        gpu.write(&k, 1, types[1], Bind::Texel(vk::BufferView::null()));
        if !enabled {
            return;
        }
        gpu.write(&k, 2, types[2], Bind::Buffer(output, 0, 80));
        gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
        for i in 0..4 {
            let got: Vec<u32> = (0..5).map(|k| word(ptr, 5 * i + k)).collect();
            assert_eq!(got, [100, 300, 400, 600, 800], "invocation {i}");
        }
        return;
    }
    for null in ["on", "off"] {
        let report = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tangle_icd_null_images_{null}_{}.json",
            std::process::id()
        ));
        let out = child(
            "null_images_and_texel_buffers_read_zero_and_have_size_0_only_with_the_feature",
            &[
                ("TANGLE_REPORT", report.as_os_str()),
                ("TANGLE_TEST_NULL", OsStr::new(null)),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        for vuid in ["02997", "02995"] {
            let refused =
                stderr.contains(&format!("VUID-VkWriteDescriptorSet-descriptorType-{vuid}"));
            assert_eq!(refused, null == "off", "{null} {vuid}: {stderr}");
        }
        if null == "on" {
            // No error. The reads' alphas are the implementation's choice (R32ui has no alpha:
            // 0 or 1), and the conservative rule warns where such a value is still held when
            // a later image instruction runs (`robust-access`, docs/sanitizer.md).
            let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
            let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
            let findings = json["findings"].as_array().expect("a findings list");
            for f in findings {
                assert_eq!(
                    (f["kind"].as_str(), f["severity"].as_str()),
                    (Some("robust-access"), Some("warning")),
                    "{text}"
                );
            }
            assert_eq!(json["errors"].as_array().map(Vec::len), Some(0), "{text}");
        }
        let _ = std::fs::remove_file(&report);
    }
}
