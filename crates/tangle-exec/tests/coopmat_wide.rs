//! Cooperative matrices on the executor's wide path (`docs/executor.md`): a program with
//! cooperative-matrix ops and no Workgroup memory runs there, its matrix ops one subgroup at a
//! time. Each program here runs on both paths, under every layout policy, with the sanitizer on
//! and off, and must give the same bytes and the same findings; the wide path must really have
//! taken the well-defined ones, and must have given the others (a race, a non-uniform access,
//! an overflowing saturating MulAdd) back to the reference path, which reports them.

mod common;

use common::{compile, f32s, run_module, Job, Rng};
use tangle_exec::{CoopmatLayout, Report, SpecConstants};
use tangle_validate::Validated;

/// The benchmark's tiled GEMM (`bench/coopmat_gemm.comp`): one subgroup per tile, no shared
/// memory.
const GEMM: &str = include_str!("../../../bench/coopmat_gemm.comp");

/// Runs `module` with the job `make` builds on the reference path, the wide interpreter and
/// the native tier, every layout, checks on and off; asserts they agree, that the wide
/// interpreter took every dispatch (`wide`, with checks on and off) or gave it back, and that
/// the native tier ran every dispatch (`native`) or left it (not taken, or given back). Returns
/// the outputs and report of the default layout with checks on.
fn run_both(
    label: &str,
    module: &Validated<'_>,
    make: &dyn Fn() -> Job,
    wide: [bool; 2],
    native: [bool; 2],
) -> (Vec<Vec<u8>>, Report) {
    let mut kept = None;
    for ((checks, wide), native) in [true, false].into_iter().zip(wide).zip(native) {
        for layout in CoopmatLayout::all() {
            let what = format!("{label}: {layout}, checks {checks}");
            let job = |on, jit| Job {
                wide: on,
                jit,
                checks,
                coopmat_layout: layout,
                ..make()
            };
            let (ref_out, ref_report) = run_module(module, &job(false, false));
            assert_eq!(ref_report.stats.wide_invocations, 0, "{what}");
            for jit in [false, true] {
                let what = format!("{what}, native tier {jit}");
                let (out, report) = run_module(module, &job(true, jit));
                assert!(out == ref_out, "{what}: the paths' buffers differ");
                assert_eq!(report.diagnostics, ref_report.diagnostics, "{what}");
                assert_eq!(report.summaries, ref_report.summaries, "{what}");
                let all = |n: u64| n == report.stats.invocations;
                let (took, expected) = if jit {
                    (all(report.stats.jit_invocations), native)
                } else {
                    assert_eq!(report.stats.jit_invocations, 0, "{what}");
                    (all(report.stats.wide_invocations), wide)
                };
                assert_eq!(took, expected, "{what}: the tier's share");
                // Where the wide interpreter or the native tier took the dispatch, its matrix
                // ops ran on dense forms or tiles.
                let fast = all(report.stats.wide_invocations);
                assert_eq!(
                    report.stats.dense_matrix_ops > 0,
                    fast,
                    "{what}: dense matrices"
                );
                assert!(report.stats.invocations > 0, "{what}");
                if checks && layout == CoopmatLayout::default() && jit {
                    kept = Some((out, report));
                }
            }
        }
    }
    kept.expect("the default layout ran")
}

/// An integer in `-r..=r` from `rng`.
fn small(rng: &mut Rng, r: i64) -> i64 {
    (rng.next() % (2 * r as u64 + 1)) as i64 - r
}

fn halves(v: &[i64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| half::f16::from_f32(x as f32).to_le_bytes())
        .collect()
}

#[test]
fn the_benchmark_gemm_matches_a_plain_product_on_both_paths() {
    let module = compile(GEMM);
    // (subgroup size, tile): lavapipe-like 8x8x8 tiles on 8 and 16 invocations, NVIDIA-like
    // 16x16x16 on 32 and 64.
    for (sg, t) in [(8u32, 8usize), (16, 8), (32, 16), (64, 16)] {
        let (m, n, k) = (4 * t, 3 * t, 2 * t);
        let mut rng = Rng(u64::from(sg));
        // Small integers: every product and sum is exact in f16 and f32.
        let a: Vec<i64> = (0..m * k).map(|_| small(&mut rng, 4)).collect();
        let b: Vec<i64> = (0..k * n).map(|_| small(&mut rng, 4)).collect();
        let want: Vec<f32> = (0..m * n)
            .map(|x| {
                (0..k)
                    .map(|p| a[x / n * k + p] * b[p * n + x % n])
                    .sum::<i64>() as f32
            })
            .collect();
        let make = || {
            let mut job = Job::new(
                vec![halves(&a), halves(&b), vec![0; m * n * 4]],
                [((m / t) * (n / t)) as u32, 1, 1],
            );
            job.subgroup = sg;
            job.push = [m, n, k]
                .iter()
                .flat_map(|&x| (x as u32).to_le_bytes())
                .collect();
            let mut spec = SpecConstants::new();
            for (id, v) in [
                (0, t as u64),
                (1, t as u64),
                (2, t as u64),
                (3, u64::from(sg)),
            ] {
                spec.insert(id, v);
            }
            job.spec = spec;
            job.threads = 2;
            job
        };
        let (out, report) = run_both(
            &format!("subgroup {sg}"),
            &module,
            &make,
            [true; 2],
            [true; 2],
        );
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        assert_eq!(out[2], f32s(&want), "subgroup {sg}: C");
    }
}

/// Integer and float matrices through every kind of op the wide path runs: loads with odd
/// strides, column-major and through `uvec4` pointers, MulAdd (mixed signedness, saturating),
/// element-wise arithmetic, composite access, conversions and stores; each workgroup
/// into its own part of the outputs. (No function: the wide path takes no calls.)
const ZOO: &str = r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A8 { int8_t a8[]; };
layout(set = 0, binding = 1) readonly buffer B8 { uint8_t b8[]; };
layout(set = 0, binding = 2) readonly buffer C32 { int c32[]; };
layout(set = 0, binding = 3) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 4) readonly buffer V { uvec4 v[]; };
layout(set = 0, binding = 5) buffer OI { int oi[]; };
layout(set = 0, binding = 6) buffer OF { float16_t of[]; };
layout(set = 0, binding = 7) buffer OV { uvec4 ov[]; };
#define RM gl_CooperativeMatrixLayoutRowMajor
#define CM gl_CooperativeMatrixLayoutColumnMajor
#define AI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BI coopmat<uint8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define FH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define FF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
  uint g = gl_WorkGroupID.x;
  AI a; BI b; CI c;
  coopMatLoad(a, a8, g * 16 * 19 + 3, 19, RM);
  coopMatLoad(b, b8, g * 16 * 17, 17, CM);
  coopMatLoad(c, c32, g * 256, 16, RM);
  CI r = coopMatMulAdd(a, b, c);
  CI s = coopMatMulAdd(a, b, c, gl_MatrixOperandsSaturatingAccumulation);
  coopMatStore(r, oi, g * 1280, 16, RM);
  coopMatStore(s, oi, g * 1280 + 256, 16, CM);
  coopMatStore(r + r - s * CI(3), oi, g * 1280 + 512, 16, RM);
  r[0] = r[0] * 3 + 1;
  r[1] = r[1] - r[0];
  coopMatStore(r, oi, g * 1280 + 768, 16, CM);
  FH x;
  coopMatLoad(x, h, g * 256, 16, RM);
  FH y = x * float16_t(0.5) + x / FH(float16_t(3.0)) - x * x;
  coopMatStore(-y, of, g * 512, 16, RM);
  FF yf = FF(y);
  CI yi = CI(yf * 4.0);
  coopMatStore(yi, oi, g * 1280 + 1024, 16, RM);
  FH z;
  coopMatLoad(z, v, g * 48 + 1, 3, RM);
  coopMatStore(z + y, of, g * 512 + 256, 16, CM);
  coopMatStore(z, ov, g * 48, 3, CM);
}
"#;

#[test]
fn integer_and_float_matrices_agree_on_both_paths() {
    let module = compile(ZOO);
    for sg in [8u32, 16, 32, 64] {
        let groups = 6usize;
        let mut rng = Rng(0x5eed + u64::from(sg));
        let mut bytes = |n: usize, f: &mut dyn FnMut(&mut Rng) -> Vec<u8>| -> Vec<u8> {
            (0..n).flat_map(|_| f(&mut rng)).collect()
        };
        let a8 = bytes(groups * 16 * 19 + 16, &mut |r| vec![r.next() as u8]);
        let b8 = bytes(groups * 16 * 17, &mut |r| vec![r.next() as u8]);
        let c32 = bytes(groups * 256, &mut |r| {
            (small(r, 1 << 20) as i32).to_le_bytes().to_vec()
        });
        // Halves in ±[1/4, 4): no overflow in the arithmetic, and NaN-free.
        let mut half = |r: &mut Rng| {
            let bits = ((r.next() & 1) << 15) | ((13 + r.next() % 4) << 10) | (r.next() & 0x3ff);
            (bits as u16).to_le_bytes().to_vec()
        };
        let h = bytes(groups * 256, &mut half);
        let v = bytes(groups * 48 * 8 + 64, &mut half);
        let buffers = vec![
            a8,
            b8,
            c32,
            h,
            v,
            vec![0; groups * 1280 * 4],
            vec![0; groups * 512 * 2],
            vec![0; groups * 48 * 16],
        ];
        let make = || {
            let mut job = Job::new(buffers.clone(), [groups as u32, 1, 1]);
            job.subgroup = sg;
            let mut spec = SpecConstants::new();
            spec.insert(0, u64::from(sg));
            job.spec = spec;
            job.threads = 2;
            job
        };
        let (out, report) = run_both(
            &format!("subgroup {sg}"),
            &module,
            &make,
            [sg * groups as u32 >= 32; 2],
            // Element-wise ops and composite access: not on the native tier.
            [false; 2],
        );
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        // Something was computed: the MulAdd region is not all zeros.
        assert!(out[5].iter().any(|&x| x != 0), "subgroup {sg}");
    }
}

/// `body` in a shader with an `int` accumulator `c` loaded from the workgroup's tile of `inp`
/// and an output `out` of 16 tiles.
fn tile_shader(body: &str) -> String {
    format!(
        r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer I {{ int inp[]; }};
layout(set = 0, binding = 1) buffer O {{ int out_[]; }};
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define AI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
void main() {{
  uint g = gl_WorkGroupID.x;
  CI c;
  coopMatLoad(c, inp, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
{body}
}}
"#
    )
}

fn tile_job(inp: &[i32]) -> Job {
    let words: Vec<u8> = inp.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut job = Job::new(vec![words, vec![0; 16 * 256 * 4]], [4, 1, 1]);
    job.threads = 2;
    job
}

#[test]
fn races_and_undefined_matrix_ops_go_back_to_the_reference_path() {
    let inp: Vec<i32> = (0..4 * 256).map(|i| i * 7 - 3000).collect();
    // (what, body, reported, the wide path takes it with checks on and off)
    let cases = [
        // Every workgroup stores the same tile (the same values, so that the bytes do not
        // depend on the order): a race between workgroups.
        (
            "same tile",
            "  CI five = CI(5);\n  coopMatStore(five, out_, 0, 16, gl_CooperativeMatrixLayoutRowMajor);",
            true,
            [false, true],
        ),
        // A store in divergent control flow: not every invocation of the subgroup is active
        // (reported without checks too).
        (
            "divergent store",
            "  if (gl_SubgroupInvocationID < 16) {\n    coopMatStore(c, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);\n  }",
            true,
            [false, false],
        ),
        // A stride that differs between invocations (reported without checks too; each
        // workgroup in its own 1024 ints, so that the bytes do not depend on the order).
        (
            "non-uniform stride",
            "  coopMatStore(c, out_, g * 1024, 16 + gl_SubgroupInvocationID % 2, gl_CooperativeMatrixLayoutRowMajor);",
            true,
            [false, false],
        ),
        // A saturating MulAdd whose addition of C clamps (defined: only an overflow of A x B
        // is undefined, which 8-bit components at K = 16 cannot reach).
        (
            "saturating clamp",
            "  AI a = AI(int8_t(100)); BI b = BI(int8_t(100));\n  CI big = CI(2147400000) + c;\n  CI r = coopMatMulAdd(a, b, big, gl_MatrixOperandsSaturatingAccumulation);\n  coopMatStore(r, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);",
            false,
            [true, true],
        ),
        // Each subgroup reads and rewrites its own tile in place: no race, but a load the
        // race screen takes as a span read by several invocations, so it gives up.
        (
            "in place",
            "  coopMatStore(c, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);\n  CI d;\n  coopMatLoad(d, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);\n  coopMatStore(d + c, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);",
            false,
            [false, true],
        ),
    ];
    for (what, body, reported, wide) in cases {
        let module = compile(&tile_shader(body));
        let job = || tile_job(&inp);
        // The native tier takes whole-matrix programs only: a splat stored (a race its screen
        // sees with checks on); the others parted, are not uniform or have element-wise ops.
        let native = match what {
            "same tile" => [false, true],
            _ => [false; 2],
        };
        let (out, report) = run_both(what, &module, &job, wide, native);
        assert_eq!(
            !report.diagnostics.is_empty(),
            reported,
            "{what}: {:?}",
            report.diagnostics.first()
        );
        if what == "saturating clamp" {
            // 2147400000 + C + 16 x 100 x 100 passes the int maximum for every element.
            let max = i32::MAX.to_le_bytes();
            assert!(out[1][..4 * 256 * 4].chunks(4).all(|x| x == max), "{what}");
        }
    }
}

/// Matrices the wide path holds in dense form (`wide/dense.rs`) meeting every other kind of
/// use: read by composite access after a MulAdd, written element by element and multiplied
/// again, copied, chosen under uniform control flow, carried around a loop and changed in it,
/// in int8, f16 → f16 and f16 → f32 MulAdds. (Assigning a matrix under divergent control flow
/// is a finding, `coopmat_sanitizer.rs`.)
const DENSE_MEETS_LANES: &str = r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A8 { int8_t a8[]; };
layout(set = 0, binding = 1) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 2) buffer OI { int oi[]; };
layout(set = 0, binding = 3) buffer OF { float of[]; };
layout(set = 0, binding = 4) buffer OH { float16_t oh[]; };
layout(push_constant) uniform P { uint pick; uint rounds; } p;
#define RM gl_CooperativeMatrixLayoutRowMajor
#define CM gl_CooperativeMatrixLayoutColumnMajor
#define AI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define AH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define CF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
  uint g = gl_WorkGroupID.x;
  uint lane = gl_SubgroupInvocationID;
  uint o = g * 2048;
  AI a; BI b;
  coopMatLoad(a, a8, g * 512, 16, RM);
  coopMatLoad(b, a8, g * 512 + 256, 16, CM);
  CI r = coopMatMulAdd(a, b, CI(7));
  // Composite access after a MulAdd (constant indices: a dynamic one makes glslang copy the
  // matrix to a Function variable, which the wide path does not take). Every subgroup size
  // here holds at least 4 components per invocation.
  oi[o + 1024 + lane * 4] = r[0];
  oi[o + 1024 + lane * 4 + 1] = r[1];
  oi[o + 1024 + lane * 4 + 2] = r[2] - r[3];
  // Written element by element, then multiplied again.
  r[0] = r[0] * 3 + 1;
  CI t = r;
  CI u = coopMatMulAdd(a, b, t);
  coopMatStore(u, oi, o + 256, 16, RM);
  // A uniform choice (OpSelect takes no matrix), and part of the subgroup assigning.
  CI s = t;
  if (p.pick != 0u) {
    s = u;
  }
  coopMatStore(s, oi, o + 512, 16, CM);
  CI m = u;
  m[1] = m[2];
  coopMatStore(m, oi, o + 768, 16, RM);
  // Carried around a loop, in f16 and f32.
  AH x; BH y;
  coopMatLoad(x, h, g * 512, 16, RM);
  coopMatLoad(y, h, g * 512 + 256, 16, RM);
  CH acc = CH(float16_t(0.0));
  CF accf = CF(0.5);
  for (uint k = 0u; k < p.rounds; k++) {
    acc = coopMatMulAdd(x, y, acc);
    accf = coopMatMulAdd(x, y, accf);
    if (k == 1u) {
      accf[1] = accf[0];
    }
  }
  coopMatStore(acc, oh, g * 256, 16, RM);
  coopMatStore(accf, of, g * 256, 16, CM);
}
"#;

#[test]
fn dense_matrices_meet_composite_access_copies_and_divergence() {
    let module = compile(DENSE_MEETS_LANES);
    for sg in [8u32, 16, 32, 64] {
        for pick in [0u32, 1] {
            let groups = 4usize;
            let mut rng = Rng(0xd0_0d + u64::from(sg) + u64::from(pick));
            let a8: Vec<u8> = (0..groups * 512).map(|_| rng.next() as u8).collect();
            // Halves in ±[1/8, 1/2): sums of a few rounds stay far from overflow.
            let h: Vec<u8> = (0..groups * 512)
                .flat_map(|_| {
                    let bits = ((rng.next() & 1) << 15)
                        | ((12 + rng.next() % 2) << 10)
                        | (rng.next() & 0x3ff);
                    (bits as u16).to_le_bytes()
                })
                .collect();
            let buffers = vec![
                a8,
                h,
                vec![0; groups * 2048 * 4],
                vec![0; groups * 256 * 4],
                vec![0; groups * 256 * 2],
            ];
            let make = || {
                let mut job = Job::new(buffers.clone(), [groups as u32, 1, 1]);
                job.subgroup = sg;
                let mut spec = SpecConstants::new();
                spec.insert(0, u64::from(sg));
                job.spec = spec;
                job.push = [pick, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
                job.threads = 2;
                job
            };
            let what = format!("subgroup {sg}, pick {pick}");
            // With the race check on, the reference path runs it: matrix stores and plain
            // stores meet in `oi` (`program::writes::matrix_meets_plain`).
            let wide = [false, sg * groups as u32 >= 32];
            let (out, report) = run_both(&what, &module, &make, wide, [false; 2]);
            assert!(
                report.diagnostics.is_empty(),
                "{what}: {:?}",
                report.diagnostics
            );
            // The int8 product, checked against plain Rust: A row-major, B column-major.
            let (a, b) = (&buffers[0], &buffers[0]);
            let ints: Vec<i32> = out[2]
                .chunks(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            for gi in 0..groups {
                let prod = |i: usize, j: usize| -> i32 {
                    (0..16)
                        .map(|kk| {
                            i32::from(a[gi * 512 + i * 16 + kk] as i8)
                                * i32::from(b[gi * 512 + 256 + j * 16 + kk] as i8)
                        })
                        .sum()
                };
                // u = A·B + t, t = A·B + 7 with element 0 of each invocation changed, so the
                // elements no invocation's index 0 holds are 2·A·B + 7.
                let u = &ints[gi * 2048 + 256..gi * 2048 + 512];
                let changed = u
                    .iter()
                    .enumerate()
                    .filter(|&(e, &v)| v != 2 * prod(e / 16, e % 16) + 7)
                    .count();
                assert!(
                    changed <= sg as usize,
                    "{what}: {changed} elements differ from 2AB + 7"
                );
                assert!(changed > 0, "{what}: r[0] was written");
            }
        }
    }
}

/// SPIR-V that glslang does not write: an `OpPhi` of matrices under divergent control flow
/// (part of each subgroup takes each edge, so the phi copies run for part of a subgroup while
/// its sources are held in dense form) and `OpCopyObject` of a MulAdd's result fed to another
/// MulAdd. The stored result mixes `c` (invocations below 3) and `r` per invocation.
const PHI_AND_COPY: &str = r#"
OpCapability Shader
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpCapability Int8
OpCapability StorageBuffer8BitAccess
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "main" %in8 %in32 %out %sid %wg
OpExecutionMode %main LocalSize 32 1 1
OpDecorate %sid BuiltIn LocalInvocationIndex
OpDecorate %wg BuiltIn WorkgroupId
OpDecorate %rt8 ArrayStride 1
OpDecorate %rt32 ArrayStride 4
OpDecorate %blk8 Block
OpMemberDecorate %blk8 0 Offset 0
OpDecorate %blk32 Block
OpMemberDecorate %blk32 0 Offset 0
OpDecorate %in8 DescriptorSet 0
OpDecorate %in8 Binding 0
OpDecorate %in32 DescriptorSet 0
OpDecorate %in32 Binding 1
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 2
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%i8 = OpTypeInt 8 1
%v3u32 = OpTypeVector %u32 3
%c0 = OpConstant %u32 0
%c2 = OpConstant %u32 2
%c3 = OpConstant %u32 3
%c1 = OpConstant %u32 1
%c16 = OpConstant %u32 16
%c256 = OpConstant %u32 256
%c512 = OpConstant %u32 512
%rt8 = OpTypeRuntimeArray %i8
%blk8 = OpTypeStruct %rt8
%p8 = OpTypePointer StorageBuffer %blk8
%e8 = OpTypePointer StorageBuffer %i8
%rt32 = OpTypeRuntimeArray %i32
%blk32 = OpTypeStruct %rt32
%p32 = OpTypePointer StorageBuffer %blk32
%e32 = OpTypePointer StorageBuffer %i32
%pu = OpTypePointer Input %u32
%pv = OpTypePointer Input %v3u32
%mA = OpTypeCooperativeMatrixKHR %i8 %c3 %c16 %c16 %c0
%mB = OpTypeCooperativeMatrixKHR %i8 %c3 %c16 %c16 %c1
%mC = OpTypeCooperativeMatrixKHR %i32 %c3 %c16 %c16 %c2
%in8 = OpVariable %p8 StorageBuffer
%in32 = OpVariable %p32 StorageBuffer
%out = OpVariable %p32 StorageBuffer
%sid = OpVariable %pu Input
%wg = OpVariable %pv Input
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %wg
%gx = OpCompositeExtract %u32 %g 0
%lane = OpLoad %u32 %sid
%o8 = OpIMul %u32 %gx %c512
%o8b = OpIAdd %u32 %o8 %c256
%o32 = OpIMul %u32 %gx %c256
%oo = OpIMul %u32 %gx %c512
%oo2 = OpIAdd %u32 %oo %c256
%pa = OpAccessChain %e8 %in8 %c0 %o8
%pb = OpAccessChain %e8 %in8 %c0 %o8b
%pc = OpAccessChain %e32 %in32 %c0 %o32
%a = OpCooperativeMatrixLoadKHR %mA %pa %c0 %c16
%b = OpCooperativeMatrixLoadKHR %mB %pb %c1 %c16
%c = OpCooperativeMatrixLoadKHR %mC %pc %c0 %c16
%r = OpCooperativeMatrixMulAddKHR %mC %a %b %c MatrixASignedComponentsKHR|MatrixBSignedComponentsKHR|MatrixCSignedComponentsKHR|MatrixResultSignedComponentsKHR
%rc = OpCopyObject %mC %r
%low = OpULessThan %bool %lane %c3
OpSelectionMerge %merge None
OpBranchConditional %low %then %else
%then = OpLabel
OpBranch %merge
%else = OpLabel
OpBranch %merge
%merge = OpLabel
%v = OpPhi %mC %c %then %rc %else
%s = OpCooperativeMatrixMulAddKHR %mC %a %b %rc MatrixASignedComponentsKHR|MatrixBSignedComponentsKHR|MatrixCSignedComponentsKHR|MatrixResultSignedComponentsKHR
%po = OpAccessChain %e32 %out %c0 %oo
OpCooperativeMatrixStoreKHR %po %v %c0 %c16
%po2 = OpAccessChain %e32 %out %c0 %oo2
OpCooperativeMatrixStoreKHR %po2 %s %c1 %c16
OpReturn
OpFunctionEnd
"#;

#[test]
fn a_divergent_phi_and_a_copy_of_dense_matrices_agree_on_both_paths() {
    use tangle_spirv::text::{assemble, AssembleOptions};
    let (module, _) = assemble(PHI_AND_COPY, &AssembleOptions::default()).expect("assembles");
    let module = common::validated(module);
    let groups = 4usize;
    let mut rng = Rng(0x0f1d);
    let in8: Vec<u8> = (0..groups * 512).map(|_| rng.next() as u8).collect();
    let in32: Vec<u8> = (0..groups * 256)
        .flat_map(|_| (small(&mut rng, 1000) as i32).to_le_bytes())
        .collect();
    let make = || {
        let mut job = Job::new(
            vec![in8.clone(), in32.clone(), vec![0; groups * 512 * 4]],
            [groups as u32, 1, 1],
        );
        job.threads = 2;
        job
    };
    let (out, report) = run_both("phi and copy", &module, &make, [true; 2], [false; 2]);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let ints: Vec<i32> = out[2]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let c = |g: usize, e: usize| {
        let at = (g * 256 + e) * 4;
        i32::from_le_bytes([in32[at], in32[at + 1], in32[at + 2], in32[at + 3]])
    };
    for g in 0..groups {
        let ab = |i: usize, j: usize| -> i32 {
            (0..16)
                .map(|k| {
                    i32::from(in8[g * 512 + i * 16 + k] as i8)
                        * i32::from(in8[g * 512 + 256 + j * 16 + k] as i8)
                })
                .sum()
        };
        // `s` = A·B + (A·B + C), stored column-major.
        for e in 0..256 {
            let (i, j) = (e / 16, e % 16);
            assert_eq!(
                ints[g * 512 + 256 + j * 16 + i],
                2 * ab(i, j) + c(g, e),
                "s ({i}, {j})"
            );
        }
        // `v` holds C where the invocation holding the element took the first edge, else
        // A·B + C: each element is one of the two, and both kinds occur.
        let (mut from_c, mut from_r) = (0, 0);
        for e in 0..256 {
            let v = ints[g * 512 + e];
            let (i, j) = (e / 16, e % 16);
            if v == c(g, e) {
                from_c += 1;
            } else {
                assert_eq!(v, ab(i, j) + c(g, e), "v ({i}, {j})");
                from_r += 1;
            }
        }
        assert!(
            from_c > 0 && from_r > 0,
            "{from_c} from C, {from_r} from A·B + C"
        );
    }
}

/// Whole-matrix ops only, every kind the native tier runs as tiles: loads with odd strides,
/// column-major, unaligned, through `uvec4` pointers; integer MulAdds (mixed signedness,
/// saturating), f16 → f16 and f16 → f32 MulAdds on halves and f32 bits heavy in edge cases
/// (NaN payloads, infinities, subnormals, −0), constant operands, and stores of loaded tiles
/// (their bits back, NaN payloads included).
const TILES: &str = r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer A8 { int8_t a8[]; };
layout(set = 0, binding = 1) readonly buffer B8 { uint8_t b8[]; };
layout(set = 0, binding = 2) readonly buffer C32 { int c32[]; };
layout(set = 0, binding = 3) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 4) readonly buffer F { float f[]; };
layout(set = 0, binding = 5) readonly buffer V { uvec4 v[]; };
layout(set = 0, binding = 6) buffer OI { int oi[]; };
layout(set = 0, binding = 7) buffer OH { float16_t oh[]; };
layout(set = 0, binding = 8) buffer OF { float of[]; };
layout(set = 0, binding = 9) buffer OV { uvec4 ov[]; };
#define RM gl_CooperativeMatrixLayoutRowMajor
#define CM gl_CooperativeMatrixLayoutColumnMajor
#define AI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BI coopmat<uint8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define AH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define CF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
  uint g = gl_WorkGroupID.x;
  AI a; BI b; CI c;
  coopMatLoad(a, a8, g * 16 * 19 + 3, 19, RM);
  coopMatLoad(b, b8, g * 16 * 17, 17, CM);
  coopMatLoad(c, c32, g * 256, 16, RM);
  CI r = coopMatMulAdd(a, b, c);
  CI s = coopMatMulAdd(a, b, c, gl_MatrixOperandsSaturatingAccumulation);
  CI t = coopMatMulAdd(a, b, CI(-7));
  coopMatStore(r, oi, g * 768, 16, RM);
  coopMatStore(s, oi, g * 768 + 256, 16, CM);
  coopMatStore(t, oi, g * 768 + 512, 16, RM);
  AH x; BH y; CH z; CF w;
  coopMatLoad(x, h, g * 768 + 1, 17, RM);
  coopMatLoad(y, h, g * 768 + 288, 16, RM);
  coopMatLoad(z, h, g * 768 + 544, 16, CM);
  CH zz = coopMatMulAdd(x, y, z);
  coopMatStore(zz, oh, g * 768, 16, RM);
  coopMatStore(y, oh, g * 768 + 256, 16, CM);
  coopMatLoad(w, f, g * 256, 16, RM);
  CF ww = coopMatMulAdd(x, y, w);
  CF w0 = coopMatMulAdd(x, y, CF(0.0));
  coopMatStore(ww, of, g * 768, 16, RM);
  coopMatStore(w, of, g * 768 + 256, 16, CM);
  coopMatStore(w0, of, g * 768 + 512, 16, RM);
  AH q;
  coopMatLoad(q, v, g * 48 + 1, 3, RM);
  coopMatStore(q, ov, g * 48, 3, CM);
  coopMatStore(x, oh, g * 768 + 512, 16, RM);
}
"#;

/// Halves heavy in signed zeros, subnormals, the largest values, infinities and NaNs (quiet
/// and signalling), else random.
fn edge_halves(rng: &mut Rng, n: usize) -> Vec<u8> {
    const SPECIALS: [u16; 10] = [
        0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e01, 0x7c01,
    ];
    (0..n)
        .flat_map(|_| {
            let r = rng.next();
            let h = if r.is_multiple_of(4) {
                SPECIALS[(r >> 8) as usize % SPECIALS.len()]
            } else {
                (r >> 16) as u16
            };
            h.to_le_bytes()
        })
        .collect()
}

#[test]
fn whole_matrix_programs_run_as_tiles_on_the_native_tier() {
    let module = compile(TILES);
    for sg in [8u32, 16, 32, 64] {
        let groups = 5usize;
        let mut rng = Rng(0x711e + u64::from(sg));
        let mut bytes = |n: usize| -> Vec<u8> { (0..n).map(|_| rng.next() as u8).collect() };
        let (a8, b8, c32) = (
            bytes(groups * 16 * 19 + 16),
            bytes(groups * 16 * 17),
            bytes(groups * 256 * 4),
        );
        let mut rng = Rng(0xf16 + u64::from(sg));
        let h = edge_halves(&mut rng, groups * 768 + 64);
        let v = edge_halves(&mut rng, groups * 48 * 8 + 64);
        // f32 bits: random, with NaN payloads (signalling and quiet), infinities and −0.
        let f: Vec<u8> = (0..groups * 256)
            .flat_map(|i| {
                let r = rng.next() as u32;
                let bits = match i % 7 {
                    0 => 0x7f80_0001 | (r & 0x3f_0000),
                    1 => 0xffc0_0123,
                    2 => 0x8000_0000,
                    3 => 0xff80_0000,
                    _ => r,
                };
                bits.to_le_bytes()
            })
            .collect();
        let buffers = vec![
            a8,
            b8,
            c32,
            h,
            f,
            v,
            vec![0; groups * 768 * 4],
            vec![0; groups * 768 * 2],
            vec![0; groups * 768 * 4],
            vec![0; groups * 48 * 16],
        ];
        let make = || {
            let mut job = Job::new(buffers.clone(), [groups as u32, 1, 1]);
            job.subgroup = sg;
            let mut spec = SpecConstants::new();
            spec.insert(0, u64::from(sg));
            job.spec = spec;
            job.threads = 2;
            job
        };
        let wide = [sg * groups as u32 >= 32; 2];
        let (out, report) = run_both(&format!("subgroup {sg}"), &module, &make, wide, [true; 2]);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        // Loaded f32 bits stored back unchanged (signalling NaN payloads too).
        let (w_in, w_out) = (&buffers[4], &out[8]);
        let tile = |b: &[u8], at: usize, i: usize| {
            u32::from_le_bytes([
                b[at + 4 * i],
                b[at + 4 * i + 1],
                b[at + 4 * i + 2],
                b[at + 4 * i + 3],
            ])
        };
        for g in 0..groups {
            for r in 0..16 {
                for c in 0..16 {
                    // Stored column-major: element (r, c) at c * 16 + r.
                    let stored = tile(w_out, (g * 768 + 256) * 4, c * 16 + r);
                    assert_eq!(stored, tile(w_in, g * 256 * 4, r * 16 + c), "subgroup {sg}");
                }
            }
        }
    }
}

#[test]
fn the_native_tier_gives_back_what_the_reference_path_reports() {
    let inp: Vec<i32> = (0..4 * 256).map(|i| i * 5 - 1000).collect();
    // (what, body, reported, the native tier runs it with checks on and off): each give-back
    // beside a twin without its bug, which the native tier must run.
    let store = |to: &str| {
        format!("  coopMatStore(c, out_, {to}, 16, gl_CooperativeMatrixLayoutRowMajor);")
    };
    let cases = [
        ("own tile", store("g * 256"), false, [true, true]),
        // Rows past the end of `inp` for the last workgroups.
        (
            "load out of bounds",
            "  CI d;\n  coopMatLoad(d, inp, g * 256 + 512, 16, gl_CooperativeMatrixLayoutRowMajor);\n  coopMatStore(d, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);".to_string(),
            true,
            [false, false],
        ),
        (
            "load in bounds",
            "  CI d;\n  coopMatLoad(d, inp, g * 256 / 2, 16, gl_CooperativeMatrixLayoutRowMajor);\n  coopMatStore(d, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);".to_string(),
            false,
            [true, true],
        ),
        // A Pointer that differs between invocations (each workgroup in its own 1024 ints).
        ("non-uniform pointer", store("g * 1024 + gl_SubgroupInvocationID % 2"), true, [false, false]),
        ("uniform pointer", store("g * 1024 + gl_SubgroupSize % 2"), false, [true, true]),
        // Some invocations leave before the store: the group parts, the op is given back.
        (
            "early return",
            format!("  if (g == 1u && gl_SubgroupInvocationID == 3u) {{ return; }}\n{}", store("g * 256")),
            true,
            [false, false],
        ),
        (
            "no return",
            format!("  if (g == 9u && gl_SubgroupInvocationID == 3u) {{ return; }}\n{}", store("g * 256")),
            false,
            [true, true],
        ),
    ];
    for (what, body, reported, native) in cases {
        let module = compile(&tile_shader(&body));
        let job = || tile_job(&inp);
        // The wide interpreter takes (and gives back) what the native tier does.
        let (_, report) = run_both(what, &module, &job, native, native);
        assert_eq!(
            !report.diagnostics.is_empty(),
            reported,
            "{what}: {:?}",
            report.diagnostics.first()
        );
    }
}

/// Every workgroup reads buffer `y`'s first tile (racy-looking: every invocation reads the
/// same bytes), then runs `body` with `x` and `r`.
fn read_only_shader(body: &str) -> String {
    format!(
        r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Y {{ int y[]; }};
layout(set = 0, binding = 1) buffer X {{ int x[]; }};
layout(set = 0, binding = 2) buffer R {{ int r[]; }};
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define RM gl_CooperativeMatrixLayoutRowMajor
void main() {{
  uint g = gl_WorkGroupID.x;
  uint l = gl_SubgroupInvocationID;
  CI t;
  coopMatLoad(t, y, 0, 16, RM);
{body}
}}
"#
    )
}

/// A store whose runs join the entry before it in the race log (the previous workgroup's tile,
/// right before it in memory, stored by another instruction) keeps all its runs for the next
/// stores of its instruction, which log what the first one made: the last workgroup's tile,
/// which only its first row makes race with the tile before it, is seen to race.
#[test]
fn a_store_joined_to_the_entry_before_it_keeps_its_runs_for_the_next_ones() {
    let inp: Vec<i32> = (0..8 * 256).collect();
    let body = "  CI five = CI(5);\n  if (g % 2 == 0) {\n    coopMatStore(five, out_, g * 256, 16, gl_CooperativeMatrixLayoutRowMajor);\n  } else {\n    coopMatStore(five, out_, g * 256 - (g == 7 ? 16 : 0), 16, gl_CooperativeMatrixLayoutRowMajor);\n  }";
    let module = compile(&tile_shader(body));
    // Eight workgroups: one unit of the native tier's, run by one worker in order.
    let job = || {
        let words: Vec<u8> = inp.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut job = Job::new(vec![words, vec![0; 16 * 256 * 4]], [8, 1, 1]);
        job.threads = 2;
        job
    };
    let (_, report) = run_both("joined store", &module, &job, [false, true], [false, true]);
    assert!(!report.diagnostics.is_empty(), "the race was not reported");
}

/// A race needs a write (SPIR-V memory model): loads of a buffer no invocation may write are
/// not logged by the fast paths, and nothing is reported for them; a buffer that *is* written
/// (by a cooperative-matrix store here, read by scalar loads of other invocations) still is,
/// on every path, layout, subgroup size, sanitizer on and off.
#[test]
fn loads_of_buffers_nothing_writes_never_race_and_written_ones_still_do() {
    let tile: Vec<i32> = (0..256).map(|i| i * 3 - 100).collect();
    let words = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // `x` starts as four copies of `y`'s first tile, so the racy reads' values do not depend
    // on the order the workgroups ran in (the bytes must agree between the paths).
    let x0: Vec<i32> = tile.iter().copied().cycle().take(4 * 256).collect();
    let cases = [
        // Every workgroup stores the same tile at 0: a race on `x`; `y`, read by all, none.
        ("x raced, y read", "  coopMatStore(t, x, 0, 16, RM);"),
        // Each workgroup stores its own tile of `x` and reads the next workgroup's with
        // scalar loads: `x` is written by another invocation, so its reads race.
        (
            "x stored, read by another workgroup",
            "  coopMatStore(t, x, g * 256, 16, RM);\n  r[g * 64 + l] = x[((g + 1) % 4) * 256 + l];",
        ),
    ];
    for (what, body) in cases {
        let module = compile(&read_only_shader(body));
        for sg in [8u32, 16, 32, 64] {
            let make = || {
                let mut job = Job::new(
                    vec![words(&tile), words(&x0), vec![0; 4 * 64 * 4]],
                    [4, 1, 1],
                );
                job.subgroup = sg;
                let mut spec = SpecConstants::new();
                spec.insert(0, u64::from(sg));
                job.spec = spec;
                job.threads = 2;
                job
            };
            let label = format!("{what}, subgroup {sg}");
            // With checks on, the fast paths give the race back; off, they run it.
            let (_, report) = run_both(&label, &module, &make, [false, true], [false, true]);
            assert!(!report.diagnostics.is_empty(), "{label}: no race reported");
            for d in &report.diagnostics {
                let text = d.to_string();
                assert!(text.contains("race"), "{label}: {text}");
                assert!(text.contains("binding 1"), "{label}: {text}");
                assert!(!text.contains("binding 0"), "{label}: {text}");
            }
        }
    }
}

/// An f16 × f16 + f32 → f32 MulAdd whose A and B tiles are loaded at a Pointer and Stride from
/// push constants (the typed loads of the native tier take word-aligned rows in bounds, the
/// others go the reference path's way), the result stored with another Stride, and A stored
/// back as f16 (its loaded bits, NaN payloads included).
const F16_LOADS: &str = r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 1) readonly buffer F { float f[]; };
layout(set = 0, binding = 2) buffer OF { float of[]; };
layout(set = 0, binding = 3) buffer OH { float16_t oh[]; };
layout(push_constant) uniform P { uint off; uint stride; uint ostride; } p;
#define RM gl_CooperativeMatrixLayoutRowMajor
#define AH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
  uint g = gl_WorkGroupID.x;
  AH x; BH y; CF w;
  coopMatLoad(x, h, p.off + g * 16 * p.stride, p.stride, RM);
  coopMatLoad(y, h, g * 256 + 8, 16, RM);
  coopMatLoad(w, f, g * 256, 16, RM);
  CF r = coopMatMulAdd(x, y, w);
  coopMatStore(r, of, g * 16 * p.ostride, p.ostride, RM);
  coopMatStore(x, oh, g * 256, 16, RM);
}
"#;

/// The native tier's typed tile loads and stores against the reference path: word-aligned
/// rows at several pitches, an odd Pointer, an odd Stride (both taken the reference path's
/// way), rows partly past the end of the buffer (reported, given back); every layout, subgroups
/// 8–64, sanitizer on and off. Where it runs, the f16 tile stored back holds the loaded bits
/// exactly (NaN payloads, infinities, subnormals, −0).
#[test]
fn typed_tile_loads_and_stores_agree_with_the_reference_path() {
    let module = compile(F16_LOADS);
    let groups = 5usize;
    let halves_len = 16 * 24 * groups + 64;
    // (what, Pointer offset, Stride, result Stride, out of bounds)
    let cases = [
        ("aligned", 0u32, 16u32, 16u32, false),
        ("word offset, wide pitch", 2, 24, 20, false),
        ("pitch of 9 words", 4, 18, 17, false),
        ("odd offset", 1, 16, 16, false),
        ("odd stride", 0, 17, 16, false),
        // The last workgroup's rows from 16 * 24 * 4 + 200: past the end from its ninth row.
        ("rows partly out of bounds", 200, 24, 16, true),
    ];
    for (what, off, stride, ostride, oob) in cases {
        for sg in [8u32, 16, 32, 64] {
            let mut rng = Rng(0xf16f + u64::from(sg) + u64::from(off));
            let h = edge_halves(&mut rng, halves_len);
            let f: Vec<u8> = (0..groups * 256)
                .flat_map(|i| {
                    let bits = match i % 9 {
                        0 => 0x7f80_0001,
                        1 => 0x8000_0000,
                        _ => (rng.next() as u32 & 0x3fff_ffff) | 0x3000_0000,
                    };
                    bits.to_le_bytes()
                })
                .collect();
            let push: Vec<u8> = [off, stride, ostride]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            let buffers = vec![
                h.clone(),
                f,
                vec![0; groups * 16 * 20 * 4],
                vec![0; groups * 256 * 2],
            ];
            let make = || {
                let mut job = Job::new(buffers.clone(), [groups as u32, 1, 1]);
                job.push = push.clone();
                job.subgroup = sg;
                let mut spec = SpecConstants::new();
                spec.insert(0, u64::from(sg));
                job.spec = spec;
                job.threads = 2;
                job
            };
            let label = format!("{what}, subgroup {sg}");
            let native = [!oob; 2];
            let (out, report) = run_both(&label, &module, &make, native, native);
            assert_eq!(!report.diagnostics.is_empty(), oob, "{label}");
            if oob {
                let text = report.diagnostics[0].to_string();
                assert!(text.contains("out-of-bounds"), "{label}: {text}");
                continue;
            }
            // A's loaded halves, stored back row-major at g * 256: the input's bits exactly.
            let half = |b: &[u8], i: usize| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
            for g in 0..groups {
                for r in 0..16 {
                    for c in 0..16 {
                        let src = off as usize + (g * 16 + r) * stride as usize + c;
                        let got = half(&out[3], g * 256 + r * 16 + c);
                        assert_eq!(got, half(&h, src), "{label}: ({g}, {r}, {c})");
                    }
                }
            }
        }
    }
}

/// Accumulators that stay in their tiles across the steps of a loop, as a GEMM's do (the
/// native tier folds `acc = coopMatMulAdd(x, y, acc)`'s copy into the MulAdd, which then
/// accumulates in `acc`'s own tile, and each load's copy into the load): an f16 × f16 + f32
/// accumulator loaded from f32 bits heavy in edge cases and one from a zero fill, both fed
/// halves heavy in edge cases (NaN payloads, infinities, subnormals, −0: NaN results, whose
/// bits must be the reference path's canonical ones, and infinities); an integer accumulator;
/// and an assignment the fold must leave alone, where the old value is stored between the
/// MulAdd and the assignment.
const ACCUMULATE: &str = r#"
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer H { float16_t h[]; };
layout(set = 0, binding = 1) readonly buffer F { float f[]; };
layout(set = 0, binding = 2) readonly buffer A8 { int8_t a8[]; };
layout(set = 0, binding = 3) buffer OF { float of[]; };
layout(set = 0, binding = 4) buffer OI { int oi[]; };
layout(push_constant) uniform P { uint steps; } p;
#define RM gl_CooperativeMatrixLayoutRowMajor
#define AH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BH coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CF coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define AI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BI coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define CI coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
  uint g = gl_WorkGroupID.x;
  CF acc;
  coopMatLoad(acc, f, g * 256, 16, RM);
  CF zero = CF(0.0);
  CI iacc = CI(3);
  for (uint s = 0u; s < p.steps; s++) {
    AH x;
    BH y;
    coopMatLoad(x, h, (g * p.steps + s) * 512, 16, RM);
    coopMatLoad(y, h, (g * p.steps + s) * 512 + 256, 16, RM);
    acc = coopMatMulAdd(x, y, acc);
    zero = coopMatMulAdd(x, y, zero);
    AI xi;
    BI yi;
    coopMatLoad(xi, a8, (g * p.steps + s) * 512, 16, RM);
    coopMatLoad(yi, a8, (g * p.steps + s) * 512 + 256, 16, RM);
    iacc = coopMatMulAdd(xi, yi, iacc);
  }
  coopMatStore(acc, of, g * 1024, 16, RM);
  coopMatStore(zero, of, g * 1024 + 256, 16, RM);
  coopMatStore(iacc, oi, g * 256, 16, RM);
  AH x;
  BH y;
  coopMatLoad(x, h, g * 512, 16, RM);
  coopMatLoad(y, h, g * 512 + 256, 16, RM);
  CF r = coopMatMulAdd(x, y, acc);
  coopMatStore(acc, of, g * 1024 + 512, 16, RM);
  acc = r;
  coopMatStore(acc, of, g * 1024 + 768, 16, RM);
}
"#;

/// [`ACCUMULATE`] on the reference path, the wide interpreter and the native tier (every
/// layout, subgroups 8–64, sanitizer on and off): the same bytes, the native tier running
/// every dispatch.
#[test]
fn accumulators_kept_in_their_tiles_agree_with_the_reference_path() {
    let module = compile(ACCUMULATE);
    let (groups, steps) = (5usize, 3usize);
    for sg in [8u32, 16, 32, 64] {
        let mut rng = Rng(0xacc + u64::from(sg));
        let h = sparse_edge_halves(&mut rng, groups * steps * 512);
        // f32 bits: NaN payloads (signalling and quiet), infinities, −0, else random.
        let f: Vec<u8> = (0..groups * 256)
            .flat_map(|i| {
                let r = rng.next() as u32;
                let bits = match i % 7 {
                    0 => 0x7f80_0001 | (r & 0x3f_0000),
                    1 => 0xffc0_0123,
                    2 => 0x8000_0000,
                    3 => 0xff80_0000,
                    _ => r,
                };
                bits.to_le_bytes()
            })
            .collect();
        let a8: Vec<u8> = (0..groups * steps * 512)
            .map(|_| rng.next() as u8)
            .collect();
        let buffers = vec![
            h,
            f,
            a8,
            vec![0; groups * 1024 * 4],
            vec![0; groups * 256 * 4],
        ];
        let make = || {
            let mut job = Job::new(buffers.clone(), [groups as u32, 1, 1]);
            job.push = (steps as u32).to_le_bytes().to_vec();
            job.subgroup = sg;
            let mut spec = SpecConstants::new();
            spec.insert(0, u64::from(sg));
            job.spec = spec;
            job.threads = 2;
            job
        };
        let wide = [sg * groups as u32 >= 32; 2];
        let label = format!("subgroup {sg}");
        let (out, report) = run_both(&label, &module, &make, wide, [true; 2]);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        // Edge cases reached the stores: NaN results (canonical on every path) beside numbers.
        let floats = f32s_of(&out[3]);
        let nans = floats.iter().filter(|v| v.is_nan()).count();
        assert!(
            nans > 0 && nans < floats.len() * 3 / 4,
            "{label}: {nans} NaN results"
        );
    }
}

/// Halves of moderate magnitude (finite, both signs), with one in 128 an edge case: signed
/// zeros, subnormals, the largest values, infinities and NaNs (quiet and signalling). Enough
/// edge cases that NaN and infinite results occur, few enough that a sum of 16 products a
/// step is mostly a number (an infinity or NaN in a row of A or a column of B reaches a whole
/// row or column of the result).
fn sparse_edge_halves(rng: &mut Rng, n: usize) -> Vec<u8> {
    const SPECIALS: [u16; 10] = [
        0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e01, 0x7c01,
    ];
    (0..n)
        .flat_map(|_| {
            let r = rng.next();
            let h = if r.is_multiple_of(128) {
                SPECIALS[(r >> 8) as usize % SPECIALS.len()]
            } else {
                // Exponent fields 8..=20: magnitudes from 2^-7 to about 2^6.
                let sign = (r >> 8) as u16 & 0x8000;
                let exponent = 8 + (r >> 24) as u16 % 13;
                sign | exponent << 10 | (r >> 40) as u16 & 0x3ff
            };
            h.to_le_bytes()
        })
        .collect()
}

/// Little-endian f32 values of `bytes`.
fn f32s_of(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A matrix stored and read back element by element with plain loads, no barrier between
/// (issue 34): each invocation reads the elements the row-striped layout gave it, so the race
/// holds only because another legal layout gives them to other invocations. With the race
/// check on, the fast paths leave such a program to the reference path
/// (`program::writes::matrix_meets_plain`), which reports the race under every layout; with it
/// off, they run it.
#[test]
fn a_matrix_read_back_by_plain_loads_races_under_every_layout() {
    let tile: Vec<i32> = (0..256).map(|i| i * 5 - 300).collect();
    let words = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let body = "  coopMatStore(t, x, g * 256, 16, RM);\n  uint per = 256u / gl_SubgroupSize;\n  for (uint i = 0u; i < per; i++) {\n    r[g * 256 + l * per + i] = x[g * 256 + l * per + i];\n  }";
    let module = compile(&read_only_shader(body));
    for sg in [8u32, 16, 32, 64] {
        let make = || {
            let mut job = Job::new(
                vec![words(&tile), vec![0; 4 * 256 * 4], vec![0; 4 * 256 * 4]],
                [4, 1, 1],
            );
            job.subgroup = sg;
            let mut spec = SpecConstants::new();
            spec.insert(0, u64::from(sg));
            job.spec = spec;
            job.threads = 2;
            job
        };
        let label = format!("read back, subgroup {sg}");
        let (out, report) = run_both(&label, &module, &make, [false, true], [false, true]);
        assert!(!report.diagnostics.is_empty(), "{label}: no race reported");
        for d in &report.diagnostics {
            assert!(d.to_string().contains("race"), "{label}: {d}");
        }
        // The values are the tile's whatever the layout: every element was stored before the
        // (racy) reads on this executor.
        assert_eq!(out[2], words(&tile.repeat(4)), "{label}");
    }
}
