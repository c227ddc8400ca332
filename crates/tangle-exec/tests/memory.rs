//! Memory: workgroup memory with barriers, atomics (32/64-bit, storage and workgroup),
//! explicit layouts (std140 matrices, row-major), function-variable arrays, physical storage
//! buffer pointers, spec constants, and the guards (out-of-bounds, step limit, time limit).

mod common;
use common::*;
use std::time::Duration;
use tangle_exec::{
    Device, ExecError, Finding, Profile, Resources, RunOptions, SpecConstants, Trap,
};

#[test]
fn barrier_reduction_in_workgroup_memory() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
shared uint s[64];
void main() {
  uint l = gl_LocalInvocationID.x;
  s[l] = a[gl_GlobalInvocationID.x];
  barrier();
  uint rev = s[63u - l];
  for (uint stride = 32u; stride > 0u; stride >>= 1) {
    barrier();
    if (l < stride) s[l] += s[l + stride];
  }
  barrier();
  r[gl_GlobalInvocationID.x] = rev + (l == 0u ? s[0] : 0u);
}";
    let mut rng = Rng(3);
    let a: Vec<u32> = (0..256).map(|_| rng.next() as u32 % 1000).collect();
    let module = compile(src);
    for sg in [4u32, 8, 32, 64] {
        let mut job = Job::new(vec![u32s(&a), vec![0; 256 * 4]], [4, 1, 1]);
        job.subgroup = sg;
        let (out, _) = run_module(&module, &job);
        let r = to_u32s(&out[1]);
        for g in 0..4 {
            let sum: u32 = a[g * 64..g * 64 + 64].iter().sum();
            for l in 0..64 {
                let e = a[g * 64 + 63 - l] + if l == 0 { sum } else { 0 };
                assert_eq!(r[g * 64 + l], e, "group {g} lane {l} sg {sg}");
            }
        }
    }
}

#[test]
fn atomics_storage_and_workgroup_32_and_64_bit() {
    let src = "#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer C { uint sum; uint mx; uint mn; uint ticket; uint64_t big; uint per_group[]; };
shared uint count;
void main() {
  if (gl_LocalInvocationIndex == 0u) count = 0u;
  barrier();
  uint x = a[gl_GlobalInvocationID.x];
  atomicAdd(sum, x);
  atomicMax(mx, x);
  atomicMin(mn, x);
  atomicAdd(big, uint64_t(x) << 20);
  atomicAdd(ticket, 1u);
  if ((x & 1u) == 1u) atomicAdd(count, 1u);
  barrier();
  if (gl_LocalInvocationIndex == 0u) per_group[gl_WorkGroupID.x] = count;
}";
    let groups = 64usize;
    let n = groups * 32;
    let mut rng = Rng(8);
    let a: Vec<u32> = (0..n).map(|_| rng.next() as u32 % 100_000).collect();
    let mut c = u32s(&[0, 0, u32::MAX, 0]);
    c.extend(u64s(&[0]));
    c.extend(vec![0; groups * 4]);
    let module = compile(src);
    let mut results = Vec::new();
    for threads in [1, 4] {
        let mut job = Job::new(vec![u32s(&a), c.clone()], [groups as u32, 1, 1]);
        job.threads = threads;
        let (out, _) = run_module(&module, &job);
        let w = to_u32s(&out[1]);
        assert_eq!(w[0], a.iter().sum::<u32>());
        assert_eq!(w[1], *a.iter().max().unwrap_or(&0));
        assert_eq!(w[2], *a.iter().min().unwrap_or(&0));
        assert_eq!(w[3], n as u32);
        assert_eq!(
            u64::from(w[4]) | (u64::from(w[5]) << 32),
            a.iter().map(|&x| u64::from(x) << 20).sum::<u64>()
        );
        for g in 0..groups {
            assert_eq!(
                w[6 + g],
                a[g * 32..g * 32 + 32]
                    .iter()
                    .filter(|&&x| x & 1 == 1)
                    .count() as u32
            );
        }
        results.push(out);
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn std140_matrices_and_row_major() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(std140, binding = 0) uniform U { mat3 m; layout(row_major) mat2x3 rm; vec3 v; } u;
layout(std430, binding = 1) buffer R { float r[]; };
void main() {
  vec3 a = u.m * u.v;
  vec3 b = u.rm * vec2(u.v.x, u.v.y);
  r[0] = a.x; r[1] = a.y; r[2] = a.z; r[3] = b.x; r[4] = b.y; r[5] = b.z;
  r[6] = u.rm[1][2];
}";
    // std140: mat3 = 3 columns of vec3 at stride 16 (48 bytes); row_major mat2x3 (2 columns,
    // 3 rows) is stored as 3 rows of vec2 at stride 16 (48 bytes) at offset 48; v at 96.
    let m = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]; // columns
    let rm = [[1.5f32, -2.0], [0.5, 3.0], [2.0, 1.0]]; // rows: rm[row][col]
    let v = [0.5f32, -1.0, 2.0];
    let mut ubo = vec![0f32; 28];
    for c in 0..3 {
        for r in 0..3 {
            ubo[c * 4 + r] = m[c][r];
        }
    }
    for r in 0..3 {
        for c in 0..2 {
            ubo[12 + r * 4 + c] = rm[r][c];
        }
    }
    ubo[24..27].copy_from_slice(&v);
    let job = Job::new(vec![f32s(&ubo), vec![0; 7 * 4]], [1, 1, 1]);
    let (out, report) = run_glsl(src, &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let r = to_f32s(&out[1]);
    for row in 0..3 {
        let a = m[0][row] * v[0] + m[1][row] * v[1] + m[2][row] * v[2];
        assert_eq!(r[row], a, "m * v row {row}");
        let b = rm[row][0] * v[0] + rm[row][1] * v[1];
        assert_eq!(r[3 + row], b, "rm * v row {row}");
    }
    assert_eq!(r[6], rm[2][1]);
}

#[test]
fn physical_storage_buffer_pointers() {
    let src = "#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(buffer_reference, std430) buffer Data { uint v[]; };
layout(std430, binding = 0) buffer Addr { uint64_t addr; };
void main() {
  Data d = Data(addr);
  uint i = gl_GlobalInvocationID.x;
  d.v[i] = d.v[i] * 2u + i;
}";
    let module = compile(src);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 8]);
    res.buffers
        .insert((0, 5), u32s(&(0..16).collect::<Vec<u32>>()));
    let addr = res.device_address(0, 5).expect("address");
    res.buffers.insert((0, 0), u64s(&[addr]));
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .expect("dispatch");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let v = to_u32s(&res.buffers[&(0, 5)]);
    assert_eq!(v, (0..16).map(|i| i * 3).collect::<Vec<u32>>());
}

#[test]
fn spec_constants_and_local_size_id() {
    let src = "#version 450
layout(local_size_x_id = 1) in;
layout(constant_id = 3) const uint K = 2u;
const uint K2 = K * 2u + 1u;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { r[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * K2 + gl_WorkGroupSize.x; }";
    let module = compile(src);
    let device = Device::new(Profile::default());
    let spec: SpecConstants = [(1, 16), (3, 10)].into_iter().collect();
    let pipeline = device
        .compute_pipeline(&module, "main", &spec)
        .expect("pipeline");
    assert_eq!(pipeline.local_size(), [16, 1, 1]);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 32 * 4]);
    pipeline
        .dispatch(&mut res, [2, 1, 1], &RunOptions::default())
        .expect("dispatch");
    assert_eq!(
        to_u32s(&res.buffers[&(0, 0)]),
        (0..32).map(|i| i * 21 + 16).collect::<Vec<u32>>()
    );
    // Defaults when nothing is specialized.
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    assert_eq!(pipeline.local_size(), [1, 1, 1]);
}

#[test]
fn out_of_bounds_is_reported_and_harmless() {
    let src = "#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { uint i = gl_GlobalInvocationID.x; r[i * 4u] = r[i * 4u + 1u] + 7u; }";
    // 10 words: invocations 0..2 are in bounds (index 8 reads 9), 3.. write out of bounds.
    let job = Job::new(vec![u32s(&[1; 10])], [1, 1, 1]);
    let (out, report) = run_glsl(src, &job);
    let r = to_u32s(&out[0]);
    assert_eq!(r.len(), 10);
    assert_eq!(r[0], 8);
    assert_eq!(r[4], 8);
    assert_eq!(r[8], 8);
    assert_eq!(r[9], 1);
    let oob: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.finding, Finding::OutOfBounds { .. }))
        .collect();
    // Invocations 3..7 read and write out of bounds (2 findings each).
    assert_eq!(oob.len(), 10, "{:?}", report.diagnostics);
    assert!(oob.iter().any(|d| d.invocation == [3, 0, 0]));
    let text = oob[0].to_string();
    assert!(
        text.contains("OpLoad") || text.contains("OpStore"),
        "{text}"
    );
    assert!(text.contains("buffer (set 0, binding 0)"), "{text}");
}

/// Loads and stores whose lanes are evenly spaced by more than the scalar (a row per
/// invocation) take one bounds check for the span; the values must be the lane-by-lane ones,
/// on both executor paths (the wide path takes 256 invocations, subgroup sizes vary), and a
/// span that leaves the buffer still reports exactly its out-of-bounds lanes.
#[test]
fn strided_loads_and_stores_match_a_plain_rust_gather() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
layout(push_constant) uniform P { uint rows; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  r[i * 3u + 1u] = a[i * 5u + 2u] * 3u + a[i * 7u];
}";
    let module = compile(src);
    let mut rng = Rng(11);
    let n = 256usize;
    let a: Vec<u32> = (0..n * 7).map(|_| rng.next() as u32).collect();
    let mut expected = vec![0u32; n * 3];
    for i in 0..n {
        expected[i * 3 + 1] = a[i * 5 + 2].wrapping_mul(3).wrapping_add(a[i * 7]);
    }
    for sg in [4u32, 32, 64] {
        let mut job = Job::new(vec![u32s(&a), vec![0; n * 3 * 4]], [4, 1, 1]);
        job.subgroup = sg;
        let (out, report) = run_module(&module, &job);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        assert_eq!(to_u32s(&out[1]), expected, "subgroup size {sg}");
    }
    // The input ends just before `a[255 * 7]`: only invocation 255 reads past it.
    let mut job = Job::new(vec![u32s(&a[..n * 7 - 7]), vec![0; n * 3 * 4]], [4, 1, 1]);
    job.subgroup = 64;
    let (_, report) = run_module(&module, &job);
    let oob: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.finding, Finding::OutOfBounds { .. }))
        .map(|d| d.invocation)
        .collect();
    assert_eq!(oob, vec![[255, 0, 0]], "{:?}", report.diagnostics);
}

#[test]
fn runaway_loop_hits_step_limit_naming_the_instruction() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer R { uint r[]; };
void main() { uint k = 0u; while (r[0] != 12345u) { k++; } r[1] = k; }";
    let module = compile(src);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 8]);
    let options = RunOptions {
        step_limit: 10_000,
        ..RunOptions::default()
    };
    match pipeline.dispatch(&mut res, [1, 1, 1], &options) {
        Err(ExecError::Trap(Trap::StepLimit { limit, at, .. })) => {
            assert_eq!(limit, 10_000);
            assert!(at.name.starts_with("Op"), "{at}");
        }
        other => panic!("expected a step-limit trap, got {other:?}"),
    }
    let options = RunOptions {
        step_limit: u64::MAX,
        time_limit: Duration::from_millis(100),
        threads: 1,
        ..RunOptions::default()
    };
    match pipeline.dispatch(&mut res, [1, 1, 1], &options) {
        Err(ExecError::Trap(Trap::TimeLimit { .. })) => {}
        other => panic!("expected a time-limit trap, got {other:?}"),
    }
}

#[test]
fn missing_buffer_is_a_resource_error() {
    let module = compile("#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 2) buffer R { uint r[]; };\nvoid main() { r[0] = 1u; }");
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let err = pipeline.dispatch(&mut Resources::default(), [1, 1, 1], &RunOptions::default());
    assert!(matches!(err, Err(ExecError::Resource(_))), "{err:?}");
    let err =
        Device::new(Profile::default()).compute_pipeline(&module, "nope", &SpecConstants::new());
    assert!(matches!(err, Err(ExecError::NoEntryPoint(_))));
}

#[test]
fn array_length_of_runtime_arrays() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer A { uint head; uvec2 a[]; };
layout(std430, binding = 1) buffer R { uint r[]; };
void main() { r[0] = uint(a.length()); r[1] = uint(r.length()); }";
    // 4 + 12 * 8 bytes, plus 4 stray bytes that make no whole element.
    let job = Job::new(vec![vec![0; 4 + 12 * 8 + 4], vec![0; 20]], [1, 1, 1]);
    let (out, _) = run_glsl(src, &job);
    assert_eq!(&to_u32s(&out[1])[..2], &[12, 5]);
}

#[test]
fn unsupported_instructions_are_named() {
    let src = "#version 450
layout(local_size_x = 1) in;
layout(binding = 0, r32ui) uniform uimage2DArray img;
layout(std430, binding = 1) buffer R { uint r[]; };
void main() { r[0] = imageLoad(img, ivec3(0)).x; }";
    let module = compile(src);
    let err =
        Device::new(Profile::default()).compute_pipeline(&module, "main", &SpecConstants::new());
    match err {
        Err(e @ ExecError::Unsupported { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("is not supported by tangle's executor"),
                "{text}"
            );
            assert!(text.contains("OpLoad"), "{text}");
            assert!(text.contains("an arrayed image"), "{text}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn division_by_zero_and_oversized_shifts_are_reported() {
    let src = "#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer A { int a[]; };
layout(std430, binding = 1) buffer R { int r[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  r[i] = (a[i] / a[i + 4u]) + (a[i] << a[i + 8u]) + (a[i] >> 3);
}";
    // Lane 1 divides by zero, lane 2 divides MIN by -1, lane 3 shifts by 40.
    let a = [10, i32::MIN, i32::MIN, 7, 2, 0, -1, 1, 1, 1, 1, 40];
    let job = Job::new(
        vec![
            a.iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0; 16],
        ],
        [1, 1, 1],
    );
    let (_, report) = run_glsl(src, &job);
    let found: Vec<(Finding, [u32; 3])> = report
        .diagnostics
        .iter()
        .map(|d| (d.finding.clone(), d.invocation))
        .collect();
    assert_eq!(
        found,
        vec![
            (Finding::DivisionByZero, [1, 0, 0]),
            (Finding::DivisionOverflow, [2, 0, 0]),
            (
                Finding::ShiftTooLarge {
                    shift: 40,
                    bits: 32
                },
                [3, 0, 0]
            ),
        ]
    );
}

#[test]
fn oversized_memory_is_a_limit_error() {
    let module = compile("#version 450\nlayout(local_size_x = 1) in;\nshared uint s[1 << 24];\nlayout(std430, binding = 0) buffer R { uint r[]; };\nvoid main() { s[0] = 1u; r[0] = s[0]; }");
    let err =
        Device::new(Profile::default()).compute_pipeline(&module, "main", &SpecConstants::new());
    assert!(matches!(err, Err(ExecError::Limit(_))), "{err:?}");
}

#[test]
fn a_zero_workgroup_dimension_is_invalid_on_every_device_not_a_limit() {
    // local_size_y_id = 1: glslang (Vulkan 1.3) makes the y operand of LocalSizeId SpecId 1,
    // default 1.
    let module = compile("#version 450\nlayout(local_size_x = 4, local_size_y_id = 1) in;\nlayout(std430, binding = 0) buffer R { uint r[]; };\nvoid main() { r[gl_LocalInvocationIndex] = 1u; }");
    let device = Device::new(Profile::default());
    let zero: SpecConstants = [(1, 0)].into_iter().collect();
    match device.compute_pipeline(&module, "main", &zero) {
        Err(ExecError::InvalidEverywhere(message)) => {
            assert!(message.contains("4x0x1"), "{message}");
            assert!(message.contains("y comes from"), "{message}");
            assert!(message.contains("(SpecId 1)"), "{message}");
            assert!(message.contains("LocalSizeId"), "{message}");
        }
        other => panic!("expected InvalidEverywhere, got {other:?}"),
    }
    let default = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .map(|p| p.local_size());
    assert_eq!(default, Ok([4, 1, 1]));
}

/// A 64-bit `LocalSizeId` constant past `u32::MAX` (spirv-val accepts it) is a size no device
/// offers, never wrapped to a small one that runs (2^32 + 1 used to become 1).
#[test]
fn a_64_bit_workgroup_dimension_is_not_wrapped() {
    let text = "OpCapability Shader\nOpCapability Int64\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\nOpExecutionModeId %main LocalSizeId %big %one %one\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%ulong = OpTypeInt 64 0\n%uint = OpTypeInt 32 0\n%big = OpConstant %ulong 4294967297\n%one = OpConstant %uint 1\n%main = OpFunction %void None %fn\n%entry = OpLabel\nOpReturn\nOpFunctionEnd\n";
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3").expect("known environment");
    let options = tangle_spirv::text::AssembleOptions { target_env: env };
    let (module, _) = tangle_spirv::text::assemble(text, &options).expect("assembles");
    let valid = tangle_validate::validate(&module, env, &Default::default()).expect("valid");
    let device = Device::new(Profile::default());
    match device.compute_pipeline(&valid, "main", &SpecConstants::new()) {
        Err(ExecError::Limit(message)) => assert!(message.contains("4294967295x1x1"), "{message}"),
        other => panic!("expected a limit error, got {other:?}"),
    }
}
