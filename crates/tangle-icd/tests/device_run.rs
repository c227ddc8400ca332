//! A program run through the real loader beyond one dispatch's findings: the `TANGLE_REPORT`
//! of a program that creates devices one after another (it covers them all), and a dispatch
//! stopped at the time limit (`TANGLE_TIME_LIMIT`), which loses the device as a GPU's
//! watchdog does: `VK_ERROR_DEVICE_LOST` from the submission and every wait after it, named
//! on stderr and in the report's `errors`. Each runs as a child process with its environment
//! ([`common::child`]); ignored without a Vulkan loader (`cfg(vulkan_driver)`).
#![cfg_attr(not(vulkan_driver), allow(dead_code, unused_imports))]

mod common;

use ash::vk;
use common::{child, in_child, Bind, Gpu};
use std::path::PathBuf;

/// Every invocation stores its index into word 0: a data race in any dispatch of 64.
const RACY: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %data
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %data DescriptorSet 0
               OpDecorate %data Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pin = OpTypePointer Input %v3
        %gid = OpVariable %pin Input
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
       %data = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3 %gid
          %i = OpCompositeExtract %u32 %g 0
          %p = OpAccessChain %pu %data %c0 %c0
               OpStore %p %i
               OpReturn
               OpFunctionEnd
"#;

/// Spins while word 0 is not 12345 (the program never writes it): never ends.
const RUNAWAY: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %data
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %data DescriptorSet 0
               OpDecorate %data Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
        %u32 = OpTypeInt 32 0
        %arr = OpTypeRuntimeArray %u32
        %buf = OpTypeStruct %arr
       %pbuf = OpTypePointer StorageBuffer %buf
       %data = OpVariable %pbuf StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %c0 = OpConstant %u32 0
     %c12345 = OpConstant %u32 12345
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpBranch %head
       %head = OpLabel
               OpLoopMerge %end %cont None
               OpBranch %body
       %body = OpLabel
          %p = OpAccessChain %pu %data %c0 %c0
          %v = OpLoad %u32 %p
       %more = OpINotEqual %bool %v %c12345
               OpBranchConditional %more %cont %end
       %cont = OpLabel
               OpBranch %head
        %end = OpLabel
               OpReturn
               OpFunctionEnd
"#;

/// A device on `source` with its one storage buffer (256 bytes) bound: the device, the
/// kernel, the buffer and its words.
fn device_with(source: &str) -> (Gpu, common::Kernel, vk::Buffer, *mut u32) {
    let gpu = Gpu::new(false);
    let (memory, words) = gpu.memory(256);
    let buffer = gpu.buffer(memory, 0, 256);
    let k = gpu.kernel(source, &[vk::DescriptorType::STORAGE_BUFFER], None);
    gpu.write(
        &k,
        0,
        vk::DescriptorType::STORAGE_BUFFER,
        Bind::Buffer(buffer, 0, 256),
    );
    (gpu, k, buffer, words)
}

/// A report path of this test process.
fn report_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_icd_{name}_{}.json", std::process::id()))
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_report_covers_every_device_of_the_run() {
    if in_child() {
        // Two devices in turn, each destroyed before the next is made, each with a race.
        for _ in 0..2 {
            let (gpu, k, ..) = device_with(RACY);
            gpu.run(|d, cb| gpu.dispatch(d, cb, &k, [0; 3], [1, 1, 1]));
        }
        return;
    }
    let report = report_path("two_devices");
    // A report left by an earlier run is replaced, not merged into.
    std::fs::write(
        &report,
        r#"{"devices": 7, "dispatches": 9, "findings": [], "errors": ["old"]}"#,
    )
    .expect("an old report");
    let out = child(
        "the_report_covers_every_device_of_the_run",
        &[("TANGLE_REPORT", report.as_os_str())],
    );
    let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(json["devices"], 2, "{text}");
    assert_eq!(json["dispatches"], 2, "{text}");
    assert_eq!(json["submissions"], 2, "{text}");
    assert_eq!(json["errors"], serde_json::json!([]), "{text}");
    let races: Vec<_> = json["findings"]
        .as_array()
        .expect("a findings list")
        .iter()
        .filter(|f| f["kind"] == "race")
        .map(|f| f["device"].as_u64())
        .collect();
    assert_eq!(
        races,
        [Some(0), Some(1)],
        "one race from each device: {text}"
    );
    // Each device's own summary still goes to stderr when it is destroyed.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("error[race]").count(), 2, "{stderr}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_dispatch_stopped_at_the_time_limit_loses_the_device() {
    if in_child() {
        let (gpu, k, buffer, words) = device_with(RUNAWAY);
        let d = &gpu.device;
        // SAFETY: live objects; each command buffer is recorded once.
        unsafe {
            let info = vk::CommandBufferAllocateInfo::default()
                .command_pool(gpu.pool)
                .command_buffer_count(2);
            let cbs = d.allocate_command_buffers(&info).expect("command buffers");
            for &cb in &cbs {
                d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                    .expect("begun");
            }
            gpu.dispatch(d, cbs[0], &k, [0; 3], [1, 1, 1]);
            // After the runaway dispatch in the same command buffer, and in a later
            // submission: neither may run on the lost device.
            d.cmd_fill_buffer(cbs[0], buffer, 4, 4, 7);
            d.cmd_update_buffer(cbs[1], buffer, 8, &[9; 4]);
            for &cb in &cbs {
                d.end_command_buffer(cb).expect("ended");
            }
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .expect("a fence");
            let first = [cbs[0]];
            let submit = [vk::SubmitInfo::default().command_buffers(&first)];
            let start = std::time::Instant::now();
            assert_eq!(
                d.queue_submit(gpu.queue, &submit, fence),
                Err(vk::Result::ERROR_DEVICE_LOST)
            );
            let took = start.elapsed();
            // The report is written at the loss: a program may never destroy a lost device.
            let path = std::env::var_os("TANGLE_REPORT").expect("TANGLE_REPORT set");
            let now = std::fs::read_to_string(path).expect("written at the loss");
            assert!(now.contains("VK_ERROR_DEVICE_LOST"), "{now}");
            assert!(
                took >= std::time::Duration::from_millis(300),
                "stopped early: {took:?}"
            );
            assert_eq!(
                d.wait_for_fences(&[fence], true, u64::MAX),
                Err(vk::Result::ERROR_DEVICE_LOST)
            );
            assert_eq!(
                d.get_fence_status(fence),
                Err(vk::Result::ERROR_DEVICE_LOST)
            );
            assert_eq!(
                d.queue_wait_idle(gpu.queue),
                Err(vk::Result::ERROR_DEVICE_LOST)
            );
            assert_eq!(d.device_wait_idle(), Err(vk::Result::ERROR_DEVICE_LOST));
            // Lost for further submissions: nothing is run.
            let second = [cbs[1]];
            let submit = [vk::SubmitInfo::default().command_buffers(&second)];
            assert_eq!(
                d.queue_submit(gpu.queue, &submit, vk::Fence::null()),
                Err(vk::Result::ERROR_DEVICE_LOST)
            );
            assert_eq!((common::word(words, 1), common::word(words, 2)), (0, 0));
            d.destroy_fence(fence, None);
        }
        return;
    }
    let report = report_path("device_lost");
    let out = child(
        "a_dispatch_stopped_at_the_time_limit_loses_the_device",
        &[
            ("TANGLE_REPORT", report.as_os_str()),
            ("TANGLE_TIME_LIMIT", "0.3".as_ref()),
        ],
    );
    let text = std::fs::read_to_string(&report).expect("TANGLE_REPORT written");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    let errors = json["errors"].as_array().expect("an errors list");
    // The runaway dispatch alone: the commands after it never ran (they would be errors).
    assert_eq!(errors.len(), 1, "{text}");
    let error = errors[0].as_str().unwrap_or_default();
    assert!(
        error.contains("time limit of 300 ms") && error.contains("VK_ERROR_DEVICE_LOST"),
        "{error}"
    );
    // Named on stderr when it happens, not only in the summary at vkDestroyDevice.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("tangle-icd: submission 1, dispatch 0:")
                && l.contains("VK_ERROR_DEVICE_LOST")),
        "{stderr}"
    );
}
