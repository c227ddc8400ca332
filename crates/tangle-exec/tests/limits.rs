//! The dispatch's guards: the time limit stops a huge dispatch with bounded work left over,
//! whatever remains and wherever its workgroups are (loops, barriers); the memory limit refuses
//! before allocating or runs on fewer threads; thread counts are capped; the step limit names
//! the source line from `OpLine`; the progress hook counts up to the total.

mod common;
use common::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tangle_exec::{Device, ExecError, Profile, Progress, Resources, RunOptions, Trap};

/// A pipeline of `src` on the default profile (subgroup size 32).
fn pipeline(src: &str) -> tangle_exec::Pipeline {
    Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &Default::default())
        .expect("pipeline")
}

fn one_buffer(bytes: Vec<u8>) -> Resources {
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes);
    res
}

/// Every (done, total) a progress hook was called with.
type Calls = Arc<Mutex<Vec<(u64, u64)>>>;

/// A progress hook recording every call.
fn recorder() -> (Progress, Calls) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&calls);
    let hook = Progress::new(move |done, total| log.lock().expect("log").push((done, total)));
    (hook, calls)
}

const SPIN: &str = "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { uint k = 0u; for (uint i = 0u; i < 200u; i++) { k += i * r[0]; } atomicAdd(r[1], k); }";

#[test]
fn a_huge_dispatch_stops_at_the_time_limit_with_bounded_work() {
    // 65535 x 65535 workgroups: far more than can run, and than can be iterated after a stop.
    let p = pipeline(SPIN);
    let mut res = one_buffer(u32s(&[1, 0]));
    let (hook, calls) = recorder();
    let limit = Duration::from_millis(300);
    let options = RunOptions {
        threads: 2,
        time_limit: limit,
        progress: Some(hook),
        ..RunOptions::default()
    };
    let start = Instant::now();
    let result = p.dispatch(&mut res, [65535, 65535, 1], &options);
    let took = start.elapsed();
    match result {
        Err(ExecError::Trap(Trap::TimeLimit { limit_ms, .. })) => assert_eq!(limit_ms, 300),
        other => panic!("expected the time limit, got {other:?}"),
    }
    let calls = calls.lock().expect("log");
    let done = calls.last().map_or(0, |c| c.0);
    println!(
        "time limit 300 ms: stopped after {took:?} (overshoot {:?}), {done} workgroups done",
        took.saturating_sub(limit)
    );
    // A hang guard, not a speed claim: the old executor went on for minutes.
    assert!(took < limit + Duration::from_secs(10), "{took:?}");
    assert!(done < 65535 * 65535);
}

#[test]
fn workgroups_looping_at_barriers_stop_at_the_time_limit() {
    // Two subgroups that wait for each other at a barrier forever.
    let p = pipeline(
        "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { while (r[0] != 12345u) { barrier(); } }",
    );
    for threads in [1, 2] {
        let mut res = one_buffer(u32s(&[0]));
        let options = RunOptions {
            threads,
            step_limit: u64::MAX,
            time_limit: Duration::from_millis(200),
            ..RunOptions::default()
        };
        let start = Instant::now();
        match p.dispatch(&mut res, [4, 1, 1], &options) {
            // The instruction is named when a workgroup notices the deadline; under load the
            // dispatch's clock check can stop it first, between instructions.
            Err(ExecError::Trap(Trap::TimeLimit { at, .. })) => {
                if let Some(at) = at {
                    assert!(at.name.starts_with("Op"), "{at}");
                }
            }
            other => panic!("expected the time limit, got {other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(10), "hang guard");
    }
}

#[test]
fn a_runaway_loop_stops_at_the_time_limit_on_every_tier_on_the_calling_thread() {
    // One workgroup on one worker: the calling thread runs it, and only the process's timer
    // can stop it (no thread watches the clock).
    let p = pipeline(
        "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { uint i = 0u; while (r[0] != 12345u) { i++; } r[1 + gl_LocalInvocationIndex] = i; }",
    );
    // The native tier, the wide interpreter, the reference path.
    for (wide, jit) in [(true, true), (true, false), (false, false)] {
        for threads in [1, 0] {
            let mut res = one_buffer(vec![0; 4 * 65]);
            let limit = Duration::from_millis(150);
            let options = RunOptions {
                threads,
                wide,
                jit,
                step_limit: u64::MAX,
                time_limit: limit,
                ..RunOptions::default()
            };
            let start = Instant::now();
            let result = p.dispatch(&mut res, [1, 1, 1], &options);
            let took = start.elapsed();
            match result {
                Err(ExecError::Trap(Trap::TimeLimit { limit_ms, .. })) => {
                    assert_eq!(limit_ms, 150)
                }
                other => panic!("wide {wide}, jit {jit}: expected the time limit, got {other:?}"),
            }
            assert!(
                took >= limit,
                "wide {wide}, jit {jit}: stopped early, {took:?}"
            );
            assert!(took < Duration::from_secs(10), "hang guard: {took:?}");
            // A stopped dispatch leaves the memory as it was.
            assert!(res.buffers[&(0, 0)].iter().all(|&b| b == 0));
        }
    }
}

#[test]
fn a_time_limit_too_large_for_the_clock_means_no_limit() {
    let p = pipeline(SPIN);
    let mut res = one_buffer(u32s(&[1, 0]));
    let options = RunOptions {
        time_limit: Duration::MAX,
        ..RunOptions::default()
    };
    p.dispatch(&mut res, [2, 1, 1], &options)
        .expect("runs without a deadline");
    // Each invocation adds sum(0..200) = 19900.
    assert_eq!(to_u32s(&res.buffers[&(0, 0)])[1], 19900 * 128);
}

#[test]
fn progress_counts_up_to_the_total() {
    let p = pipeline(SPIN);
    let mut res = one_buffer(u32s(&[1, 0]));
    let (hook, calls) = recorder();
    let options = RunOptions {
        threads: 2,
        progress: Some(hook),
        ..RunOptions::default()
    };
    p.dispatch(&mut res, [300, 1, 1], &options)
        .expect("dispatch");
    let calls = calls.lock().expect("log");
    assert_eq!(calls.first(), Some(&(0, 300)), "{calls:?}");
    assert_eq!(calls.last(), Some(&(300, 300)), "{calls:?}");
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0), "{calls:?}");
    assert!(calls.iter().all(|c| c.1 == 300));
    assert_eq!(
        to_u32s(&res.buffers[&(0, 0)])[1],
        19900u32.wrapping_mul(64 * 300)
    );
}

#[test]
fn thread_counts_past_the_machine_are_capped() {
    let p = pipeline(SPIN);
    let mut res = one_buffer(u32s(&[1, 0]));
    let options = RunOptions {
        threads: 1_000_000,
        ..RunOptions::default()
    };
    p.dispatch(&mut res, [16, 1, 1], &options)
        .expect("a million threads asked, the cores used");
    assert_eq!(to_u32s(&res.buffers[&(0, 0)])[1], 19900 * 64 * 16);
}

const SHARED: &str = "#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer R { uint r[]; };
shared uint s[4096];
void main() {
    for (uint i = gl_LocalInvocationIndex; i < 4096u; i += 32u) { s[i] = i; }
    barrier();
    if (gl_LocalInvocationIndex == 0u) { atomicAdd(r[0], s[4095] + gl_WorkGroupID.x); }
}";

#[test]
fn the_memory_limit_refuses_before_allocating() {
    let p = pipeline(SHARED);
    // 1 MiB of buffer under a 512 KiB limit.
    let mut res = one_buffer(vec![0; 1 << 20]);
    let options = RunOptions {
        memory_limit: 512 << 10,
        ..RunOptions::default()
    };
    match p.dispatch(&mut res, [1, 1, 1], &options) {
        Err(ExecError::Trap(Trap::MemoryLimit { limit, needed, .. })) => {
            assert_eq!(limit, 512 << 10);
            assert!(needed > 1 << 20, "{needed}");
        }
        other => panic!("expected the memory limit, got {other:?}"),
    }
    assert!(res.buffers[&(0, 0)].iter().all(|&b| b == 0));
    // The buffer fits, but not one worker's 16 KiB of workgroup memory.
    let mut res = one_buffer(u32s(&[0]));
    let options = RunOptions {
        memory_limit: 8 << 10,
        ..RunOptions::default()
    };
    let e = p
        .dispatch(&mut res, [1, 1, 1], &options)
        .expect_err("too small");
    assert!(e.to_string().contains("memory limit of 8192 bytes"), "{e}");
}

#[test]
fn a_tight_memory_limit_runs_on_fewer_threads() {
    let p = pipeline(SHARED);
    // Room for the buffer, the register template and one and a half workers (one subgroup's
    // registers and Function memory, 16 KiB of workgroup memory), as `RunOptions` counts them.
    let prog = p.program();
    let regs = u64::from(prog.slots) * 32 * 8;
    let worker = regs + prog.invocation_bytes * 32 + prog.workgroup_bytes;
    assert_eq!(prog.workgroup_bytes, 16 << 10);
    let mut res = one_buffer(u32s(&[0]));
    let options = RunOptions {
        threads: 2,
        memory_limit: 4 + regs + worker + worker / 2,
        ..RunOptions::default()
    };
    p.dispatch(&mut res, [8, 1, 1], &options)
        .expect("one worker fits");
    assert_eq!(
        to_u32s(&res.buffers[&(0, 0)])[0],
        8 * 4095 + (0..8).sum::<u32>()
    );
}

/// An endless loop whose blocks carry `OpLine`s of `loop.comp`.
const LOOP_WITH_LINES: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
       %file = OpString "loop.comp"
               OpSource GLSL 450 %file
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %true = OpConstantTrue %bool
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpLine %file 3 1
               OpBranch %header
     %header = OpLabel
               OpLine %file 7 5
               OpLoopMerge %merge %body None
               OpBranch %body
       %body = OpLabel
               OpLine %file 8 9
               OpBranchConditional %true %header %merge
      %merge = OpLabel
               OpNoLine
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn the_step_limit_names_the_source_line() {
    let options = tangle_spirv::text::AssembleOptions {
        target_env: tangle_spirv::TargetEnv::parse(ENV).expect("known environment"),
    };
    let (module, _) = tangle_spirv::text::assemble(LOOP_WITH_LINES, &options).expect("assemble");
    let module = validated(module);
    let p = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    let options = RunOptions {
        step_limit: 10,
        ..RunOptions::default()
    };
    match p.dispatch(&mut Resources::default(), [1, 1, 1], &options) {
        Err(e @ ExecError::Trap(Trap::StepLimit { .. })) => {
            let ExecError::Trap(Trap::StepLimit { at, .. }) = &e else {
                unreachable!()
            };
            let source = at.source.clone().expect("OpLine's place");
            assert_eq!(source.file, "loop.comp");
            assert!(
                [(7, 5), (8, 9)].contains(&(source.line, source.column)),
                "{source}"
            );
            assert!(at.name.starts_with("OpBranch"), "{at}");
            let text = e.to_string();
            assert!(
                text.contains(&format!("loop.comp:{}:", source.line)),
                "{text}"
            );
        }
        other => panic!("expected the step limit, got {other:?}"),
    }
}

/// A module of 1024 invocations a workgroup whose entry point keeps `values` sums of
/// `gl_LocalInvocationIndex` alive: a register file of about `values` × 1024 values.
fn many_registers(values: usize) -> String {
    let mut text = String::from(
        r#"OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %lii
OpExecutionMode %main LocalSize 1024 1 1
OpDecorate %lii BuiltIn LocalInvocationIndex
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%ptr = OpTypePointer Input %uint
%lii = OpVariable %ptr Input
%main = OpFunction %void None %fn
%entry = OpLabel
%v0 = OpLoad %uint %lii
"#,
    );
    for k in 1..values {
        text.push_str(&format!("%v{k} = OpIAdd %uint %v{} %v0\n", k - 1));
    }
    text.push_str("OpReturn\nOpFunctionEnd\n");
    text
}

#[test]
fn a_register_file_past_the_memory_limit_is_the_memory_limit() {
    // 40000 values × 1024 invocations: more than the 2^25-value register file tangle once refused
    // with a cap of its own (exit 77); the memory limit the user set bounds it like any other
    // memory of the dispatch (exit 1), whichever path would run it.
    let options = tangle_spirv::text::AssembleOptions {
        target_env: tangle_spirv::TargetEnv::parse(ENV).expect("known environment"),
    };
    let (module, _) =
        tangle_spirv::text::assemble(&many_registers(40_000), &options).expect("assemble");
    let p = Device::new(Profile::default())
        .compute_pipeline(&validated(module), "main", &Default::default())
        .expect("pipeline");
    let slots = u64::from(p.program().slots);
    assert!(slots * 1024 > 1 << 25, "{slots} slots");
    for reference in [false, true] {
        let options = RunOptions {
            memory_limit: 64 << 20,
            wide: !reference,
            ..RunOptions::default()
        };
        match p.dispatch(&mut Resources::default(), [4, 1, 1], &options) {
            Err(ExecError::Trap(Trap::MemoryLimit { limit, needed, .. })) => {
                assert_eq!(limit, 64 << 20);
                assert!(needed >= slots * 1024 * 8, "{needed}");
            }
            other => panic!("expected the memory limit, got {other:?}"),
        }
    }
}
