//! Resident memory (`Resident`, `Pipeline::dispatch_resident`): dispatches on memory kept in
//! the executor's form give the bytes and findings of `Pipeline::dispatch` over the resources
//! as the last dispatch left them, including a dispatch whose fast path gives up after an
//! earlier one wrote (it must restart from its own inputs, not the first dispatch's); only
//! what the program may write is read back, and a write through a `PhysicalStorageBuffer`
//! pointer counts for every buffer; images stay resident too.

mod common;

use common::arrays::r32ui;
use common::{compile, to_u32s, u32s, u64s, Rng};
use tangle_exec::{
    Device, Pipeline, Profile, Report, Resident, Resources, RunOptions, SpecConstants,
};

fn pipeline(src: &str) -> Pipeline {
    Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &SpecConstants::new())
        .unwrap_or_else(|e| panic!("pipeline: {e}"))
}

fn options() -> RunOptions {
    RunOptions {
        threads: 2,
        ..RunOptions::default()
    }
}

/// `rounds` dispatches of `groups` over `res`, once through `Pipeline::dispatch` each time and
/// once on one `Resident`; asserts the reports (findings, summaries, counters) and the final
/// resources are the same, and returns the resident's reports. `Pipeline::dispatch` makes a
/// fresh `Resident` per dispatch, so this checks what one kept across dispatches adds (stale
/// regions, their refresh); each test also checks the bytes against values computed by hand.
fn same_as_dispatch(p: &Pipeline, res: &Resources, groups: [u32; 3], rounds: usize) -> Vec<Report> {
    let mut plain = res.clone();
    let want: Vec<Report> = (0..rounds)
        .map(|_| {
            p.dispatch(&mut plain, groups, &options())
                .expect("dispatch")
        })
        .collect();
    let mut resident = Resident::new(res.clone());
    let got: Vec<Report> = (0..rounds)
        .map(|_| {
            p.dispatch_resident(&mut resident, groups, &options())
                .expect("resident dispatch")
        })
        .collect();
    assert_eq!(got, want, "reports");
    assert_eq!(resident.resources(), &plain, "bytes");
    // Read back twice (nothing written between): the same.
    assert_eq!(resident.into_resources(), plain, "bytes again");
    got
}

/// Accumulates into `b` from a read-only `a`, on random inputs: two dispatches in a row, and
/// a read-back between them, agree with two dispatches through the bytes.
#[test]
fn resident_dispatches_in_a_row_equal_plain_dispatches() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1, std430) buffer B { uint b[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    b[i] = b[i] * 3u + a[i] + (a[i] >> 7);
}";
    let p = pipeline(src);
    let mut rng = Rng(0x5eed_0001);
    let n = 64 * 5;
    let mut res = Resources::default();
    res.buffers.insert(
        (0, 0),
        u32s(&(0..n).map(|_| rng.next() as u32).collect::<Vec<_>>()),
    );
    res.buffers.insert(
        (0, 1),
        u32s(&(0..n).map(|_| rng.next() as u32).collect::<Vec<_>>()),
    );
    let reports = same_as_dispatch(&p, &res, [5, 1, 1], 3);
    assert!(reports.iter().all(|r| r.stats.jit_invocations == n as u64));
    // By hand: b = ((b * 3 + k) * 3 + k) * 3 + k, k = a + a >> 7.
    let mut resident = Resident::new(res.clone());
    for _ in 0..2 {
        p.dispatch_resident(&mut resident, [5, 1, 1], &options())
            .expect("dispatch");
    }
    // A read-back between dispatches changes nothing.
    let between = to_u32s(&resident.resources().buffers[&(0, 1)]);
    p.dispatch_resident(&mut resident, [5, 1, 1], &options())
        .expect("dispatch");
    let (a, b0) = (
        to_u32s(&res.buffers[&(0, 0)]),
        to_u32s(&res.buffers[&(0, 1)]),
    );
    let step = |b: u32, a: u32| b.wrapping_mul(3).wrapping_add(a).wrapping_add(a >> 7);
    let want2: Vec<u32> = b0
        .iter()
        .zip(&a)
        .map(|(&b, &a)| step(step(b, a), a))
        .collect();
    assert_eq!(between, want2);
    let want3: Vec<u32> = want2.iter().zip(&a).map(|(&b, &a)| step(b, a)).collect();
    let out = resident.into_resources();
    assert_eq!(to_u32s(&out.buffers[&(0, 1)]), want3);
    assert_eq!(out.buffers[&(0, 0)], res.buffers[&(0, 0)]);
    // The read-only buffer is never read back, the written one is.
    assert!(!p.may_write(0, 0));
    assert!(p.may_write(0, 1));
}

/// The first dispatch runs as native code and writes `o`; the second divides by what the
/// first wrote, which is zero: the native tier gives that dispatch up and the reference path
/// restarts it, from the second dispatch's inputs (`o` as the first left it), not the first's.
#[test]
fn a_give_up_after_an_earlier_write_restarts_from_its_own_inputs() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
layout(set = 0, binding = 1, std430) buffer D { uint d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = o[i];
    o[i] = v + 1u;
    d[i] = 1000u / (v - 1u);
}";
    let p = pipeline(src);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[0; 128]));
    res.buffers.insert((0, 1), u32s(&[7; 128]));
    let reports = same_as_dispatch(&p, &res, [2, 1, 1], 3);
    // The first ran natively; the second gave up and found the divisions by zero.
    assert_eq!(reports[0].stats.jit_invocations, 128);
    assert!(reports[0].diagnostics.is_empty());
    assert_eq!(reports[1].stats.jit_invocations, 0);
    assert!(!reports[1].diagnostics.is_empty());
    let mut resident = Resident::new(res);
    for _ in 0..3 {
        p.dispatch_resident(&mut resident, [2, 1, 1], &options())
            .expect("dispatch");
    }
    let out = resident.into_resources();
    assert_eq!(to_u32s(&out.buffers[&(0, 0)]), [3; 128]);
    // 1000 / (1 - 1) is undefined: tangle's fallback value, whatever it is, then 1000 / 1.
    assert_eq!(to_u32s(&out.buffers[&(0, 1)]), [1000; 128]);
}

/// A shader that writes a buffer it names only by its device address
/// (`PhysicalStorageBuffer`): every buffer may be written, and the resident dispatches
/// read it back.
#[test]
fn a_write_through_a_device_address_is_read_back() {
    let src = "#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(buffer_reference, std430) buffer Data { uint v[]; };
layout(std430, binding = 0) readonly buffer Addr { uint64_t addr; };
void main() {
  Data d = Data(addr);
  uint i = gl_GlobalInvocationID.x;
  d.v[i] = d.v[i] * 2u + i;
}";
    let p = pipeline(src);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 8]);
    res.buffers
        .insert((0, 5), u32s(&(0..16).collect::<Vec<u32>>()));
    let addr = res.device_address(0, 5).expect("address");
    res.buffers.insert((0, 0), u64s(&[addr]));
    assert!(p.may_write(0, 0) && p.may_write(0, 5));
    same_as_dispatch(&p, &res, [1, 1, 1], 2);
    let mut resident = Resident::new(res);
    for _ in 0..2 {
        p.dispatch_resident(&mut resident, [1, 1, 1], &options())
            .expect("dispatch");
    }
    let v = to_u32s(&resident.into_resources().buffers[&(0, 5)]);
    assert_eq!(v, (0..16).map(|i| i * 7).collect::<Vec<u32>>());
}

/// A storage image incremented by every dispatch, and a read-only one read into a buffer:
/// images stay resident across dispatches as buffers do.
#[test]
fn images_stay_resident() {
    let src = "#version 450
layout(local_size_x = 4, local_size_y = 2) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D img;
layout(set = 0, binding = 1, r32ui) readonly uniform uimage2D src;
layout(set = 0, binding = 7) buffer Out { uint o[8]; };
void main() {
  ivec2 q = ivec2(gl_LocalInvocationID.xy);
  uint v = imageLoad(img, q).x;
  imageStore(img, q, uvec4(v * 2u + imageLoad(src, q).x));
  o[q.y * 4 + q.x] += v;
}";
    let p = pipeline(src);
    let mut res = Resources::default();
    res.images
        .insert((0, 0), r32ui([4, 2, 1], &[1, 2, 3, 4, 5, 6, 7, 8]));
    res.images
        .insert((0, 1), r32ui([4, 2, 1], &[10, 20, 30, 40, 50, 60, 70, 80]));
    res.buffers.insert((0, 7), u32s(&[0; 8]));
    same_as_dispatch(&p, &res, [1, 1, 1], 3);
    let mut resident = Resident::new(res.clone());
    for _ in 0..2 {
        p.dispatch_resident(&mut resident, [1, 1, 1], &options())
            .expect("dispatch");
    }
    let out = resident.into_resources();
    let img: Vec<u32> = (1..=8u32).map(|v| (v * 2 + 10 * v) * 2 + 10 * v).collect();
    assert_eq!(to_u32s(&out.images[&(0, 0)].texels), img);
    assert_eq!(out.images[&(0, 1)], res.images[&(0, 1)]);
    let o: Vec<u32> = (1..=8u32).map(|v| v + v * 2 + 10 * v).collect();
    assert_eq!(to_u32s(&out.buffers[&(0, 7)]), o);
}

/// A failed `Pipeline::dispatch` leaves its resources as they were.
#[test]
fn a_failed_dispatch_leaves_the_resources() {
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = 5u;
    for (uint k = 0u; k < o[i]; ++k) { o[i] += 1u; }
}";
    let p = pipeline(src);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[1; 64]));
    let before = res.clone();
    let limited = RunOptions {
        step_limit: 20,
        ..options()
    };
    let e = p
        .dispatch(&mut res, [1, 1, 1], &limited)
        .expect_err("the step limit");
    assert!(e.to_string().contains("step"), "{e}");
    assert_eq!(res, before);
}

/// Pointers chosen at run time (`OpSelect` and `OpPhi` of buffer pointers, variable pointers):
/// both buffers they may point into may be written, the buffer only loaded from may not, and
/// the resident dispatches agree with plain ones.
#[test]
fn pointers_chosen_at_run_time_count_every_buffer_they_may_reach() {
    let src = r#"
               OpCapability Shader
               OpCapability VariablePointers
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %a %b %c
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arr ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %a DescriptorSet 0
               OpDecorate %a Binding 0
               OpDecorate %b DescriptorSet 0
               OpDecorate %b Binding 1
               OpDecorate %c DescriptorSet 0
               OpDecorate %c Binding 2
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %v3u = OpTypeVector %uint 3
        %arr = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %arr
      %ptr_b = OpTypePointer StorageBuffer %Buf
      %ptr_u = OpTypePointer StorageBuffer %uint
     %ptr_in = OpTypePointer Input %v3u
        %gid = OpVariable %ptr_in Input
          %a = OpVariable %ptr_b StorageBuffer
          %b = OpVariable %ptr_b StorageBuffer
          %c = OpVariable %ptr_b StorageBuffer
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %v3u %gid
          %x = OpCompositeExtract %uint %id 0
         %pc = OpAccessChain %ptr_u %c %uint_0 %x
          %v = OpLoad %uint %pc
         %pa = OpAccessChain %ptr_u %a %uint_0 %x
         %pb = OpAccessChain %ptr_u %b %uint_0 %x
         %lo = OpULessThan %bool %x %uint_3
          %p = OpSelect %ptr_u %lo %pa %pb
               OpStore %p %v
         %bit = OpBitwiseAnd %uint %x %uint_1
         %odd = OpIEqual %bool %bit %uint_1
               OpSelectionMerge %merge None
               OpBranchConditional %odd %then %merge
       %then = OpLabel
               OpBranch %merge
      %merge = OpLabel
          %q = OpPhi %ptr_u %pb %entry %pa %then
          %w = OpIAdd %uint %v %uint_1
               OpStore %q %w
               OpReturn
               OpFunctionEnd
"#;
    let assemble = tangle_spirv::text::AssembleOptions {
        target_env: tangle_spirv::TargetEnv::parse(common::ENV).expect("known environment"),
    };
    let module = tangle_spirv::text::assemble(src, &assemble)
        .map(|(m, _)| m)
        .unwrap_or_else(|e| panic!("assemble: {e:?}"));
    let p = Device::new(Profile::default())
        .compute_pipeline(&common::validated(module), "main", &SpecConstants::new())
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    assert!(p.may_write(0, 0) && p.may_write(0, 1));
    assert!(!p.may_write(0, 2));
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[0; 8]));
    res.buffers.insert((0, 1), u32s(&[0; 8]));
    res.buffers
        .insert((0, 2), u32s(&[10, 11, 12, 13, 14, 15, 16, 17]));
    same_as_dispatch(&p, &res, [1, 1, 1], 2);
    let mut resident = Resident::new(res);
    p.dispatch_resident(&mut resident, [1, 1, 1], &options())
        .expect("dispatch");
    let out = resident.into_resources();
    // a: x < 3 stores v, odd x stores v + 1 (after); b: the rest.
    let a: Vec<u32> = (0..8u32)
        .map(|x| match (x < 3, x % 2 == 1) {
            (_, true) => 11 + x,
            (true, false) => 10 + x,
            _ => 0,
        })
        .collect();
    let b: Vec<u32> = (0..8u32)
        .map(|x| match (x < 3, x % 2 == 1) {
            (_, false) => 11 + x,
            (false, true) => 10 + x,
            _ => 0,
        })
        .collect();
    assert_eq!(to_u32s(&out.buffers[&(0, 0)]), a);
    assert_eq!(to_u32s(&out.buffers[&(0, 1)]), b);
}

/// A store through a constant device address (the first buffer's, 4 << 48, as
/// `Resources::device_address` gives it): that buffer is written and read back, by value
/// (the plain dispatch goes through resident memory too, so it is no independent reference).
#[test]
fn a_write_through_a_constant_address_is_read_back() {
    let src = "#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(buffer_reference, std430) buffer Data { uint v[]; };
layout(std430, binding = 1) readonly buffer In { uint x[]; };
void main() {
  Data d = Data(0x0004000000000000UL);
  uint i = gl_GlobalInvocationID.x;
  d.v[i] = d.v[i] + x[i];
}";
    let p = pipeline(src);
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[1; 16]));
    res.buffers
        .insert((0, 1), u32s(&(0..16).collect::<Vec<u32>>()));
    assert_eq!(res.device_address(0, 0), Some(0x0004_0000_0000_0000));
    let mut resident = Resident::new(res.clone());
    for _ in 0..2 {
        let r = p
            .dispatch_resident(&mut resident, [1, 1, 1], &options())
            .expect("dispatch");
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    }
    let out = resident.into_resources();
    assert_eq!(
        to_u32s(&out.buffers[&(0, 0)]),
        (0..16).map(|i| 1 + 2 * i).collect::<Vec<u32>>()
    );
    assert_eq!(out.buffers[&(0, 1)], res.buffers[&(0, 1)]);
}
