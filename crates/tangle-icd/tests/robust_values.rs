//! Robust buffer access through the driver (issue 34): with `robustBufferAccess` enabled at
//! `vkCreateDevice`, a load past a buffer's range returns the implementation's choice, and the
//! report warns (`robust-access`) only where that value reaches the output
//! (`tangle_exec::check::robust`): a kernel that drops it has no finding, one that stores it
//! has the warning.

mod common;

use ash::vk;
use common::{child, in_child, set_word, word, Bind, Gpu};
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
