//! VK_EXT_robustness2's `nullDescriptor` through the driver (`tangle_exec::check::null`): with
//! the feature enabled at `vkCreateDevice`, a storage buffer written with `VK_NULL_HANDLE`
//! reads zero, its store and atomic change nothing (the atomic returns zero) and its
//! `OpArrayLength` is 0, with no finding; without the feature `vkUpdateDescriptorSets`
//! refuses the null buffer (VUID-VkDescriptorBufferInfo-buffer-02998).

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
