//! OpGroupNonUniformRotateKHR through the GLSL built-ins `subgroupRotate` and
//! `subgroupClusteredRotate`, following the CTS design (`shared/notes/cts-tests.md` §2): the
//! shader checks itself against `data1[id]` for the source lane the proposal's formula names,
//! for every type {int8..uint64, float16, float, double, bool} × {scalar, vec2, vec3, vec4},
//! a constant delta (5) and dynamically uniform deltas in [0, 2·S), every cluster size, subgroup
//! sizes 4..128 and workgroup sizes that leave partial subgroups. Rotates that read past the end
//! of a partial subgroup are undefined; the sanitizer must report exactly those executions.

mod common;

use common::{compile, run_module, to_u32s, Job, Rng};
use tangle_exec::{Finding, Report};

/// GLSL scalar types with their byte size.
const SCALARS: [(&str, &str, u32); 12] = [
    ("int8_t", "i8vec", 1),
    ("uint8_t", "u8vec", 1),
    ("int16_t", "i16vec", 2),
    ("uint16_t", "u16vec", 2),
    ("int", "ivec", 4),
    ("uint", "uvec", 4),
    ("int64_t", "i64vec", 8),
    ("uint64_t", "u64vec", 8),
    ("float16_t", "f16vec", 2),
    ("float", "vec", 4),
    ("double", "dvec", 8),
    ("bool", "bvec", 4),
];

/// Workgroups per dispatch (the CTS uses 4×2×2; two dimensions suffice to test the indexing).
const GROUPS: [u32; 3] = [2, 2, 1];

fn shader(ty: &str, dynamic: bool, clustered: bool) -> String {
    let delta = if dynamic {
        "data2 & (gl_SubgroupSize * 2 - 1)"
    } else {
        "5"
    };
    let body = if clustered {
        let cases: String = (0..8)
            .map(|k| format!("case {c}: op = subgroupClusteredRotate(data1[gl_SubgroupInvocationID], id_in, {c}); break;\n", c = 1 << k))
            .collect();
        format!(
            "tempRes = 1;
    for (uint cs = 1; cs <= gl_SubgroupSize; cs *= 2) {{
        {ty} op;
        switch (cs) {{
        {cases}
        }}
        uint id = ((gl_SubgroupInvocationID + id_in) & (cs - 1)) | (gl_SubgroupInvocationID & ~(cs - 1));
        tempRes &= (id < gl_SubgroupSize && subgroupBallotBitExtract(mask, id)) ? (op == data1[id] ? 1 : 0) : 1;
    }}"
        )
    } else {
        format!(
            "{ty} op = subgroupRotate(data1[gl_SubgroupInvocationID], id_in);
    uint id = (gl_SubgroupInvocationID + id_in) & (gl_SubgroupSize - 1);
    tempRes = (id < gl_SubgroupSize && subgroupBallotBitExtract(mask, id)) ? (op == data1[id] ? 1 : 0) : 1;"
        )
    };
    format!(
        "#version 450
#extension GL_KHR_shader_subgroup_rotate : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_subgroup_extended_types_int8 : enable
#extension GL_EXT_shader_subgroup_extended_types_int16 : enable
#extension GL_EXT_shader_subgroup_extended_types_int64 : enable
#extension GL_EXT_shader_subgroup_extended_types_float16 : enable
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0, std430) buffer Result {{ uint result[]; }};
layout(set = 0, binding = 1, std430) readonly buffer Data1 {{ {ty} data1[]; }};
layout(set = 0, binding = 2, std430) readonly buffer Data2 {{ uint data2; }};
void main() {{
    uvec3 size = gl_NumWorkGroups * gl_WorkGroupSize;
    uint index = (gl_GlobalInvocationID.z * size.y + gl_GlobalInvocationID.y) * size.x + gl_GlobalInvocationID.x;
    uvec4 mask = subgroupBallot(true);
    uint id_in = {delta};
    uint tempRes;
    {body}
    result[index] = tempRes;
}}
"
    )
}

/// Bytes of `data1`: 128 elements of the type, std430 (vec3 padded to vec4).
fn data1(rng: &mut Rng, scalar: &str, size: u32, width: u32) -> Vec<u8> {
    let stride = size * if width == 3 { 4 } else { width };
    let mut out = vec![0u8; (128 * stride) as usize];
    for e in 0..128 {
        for c in 0..width {
            let at = (e * stride + c * size) as usize;
            let r = rng.next();
            // Finite floats (the self-check compares with ==), bools as the CTS stores them.
            let bits: u64 = match scalar {
                "float16_t" => {
                    u64::from(half::f16::from_f32((r % 2001) as f32 / 8.0 - 125.0).to_bits())
                }
                "float" => u64::from(((r % 200_001) as f32 / 64.0 - 1500.0).to_bits()),
                "double" => ((r % 2_000_001) as f64 / 1024.0 - 900.0).to_bits(),
                "bool" => {
                    if r & 1 == 1 {
                        r & 0xffff_ffff
                    } else {
                        0
                    }
                }
                _ => r,
            };
            out[at..at + size as usize].copy_from_slice(&bits.to_le_bytes()[..size as usize]);
        }
    }
    out
}

/// The rotate executions (per subgroup of one workgroup) that read past the end of a partial
/// subgroup: the findings the sanitizer must report.
fn expected_findings(s: u32, invocations: u32, delta: u64, clustered: bool) -> u64 {
    let mut count = 0;
    for first in (0..invocations).step_by(s as usize) {
        let lanes = (invocations - first).min(s);
        let sizes: Vec<u32> = if clustered {
            (0..8).map(|k| 1 << k).filter(|&c| c <= s).collect()
        } else {
            vec![s]
        };
        for c in sizes {
            let bad = (0..lanes).any(|l| {
                let src = ((u64::from(l) + delta) & u64::from(c - 1)) + u64::from(l & !(c - 1));
                src >= u64::from(lanes)
            });
            count += u64::from(bad);
        }
    }
    count * u64::from(GROUPS.iter().product::<u32>())
}

fn check_report(report: &Report, expected: u64, what: &str) {
    let found = report.diagnostics.len() as u64 + report.stats.dropped_diagnostics;
    assert_eq!(
        found,
        expected,
        "{what}: findings {:?}",
        report.diagnostics.first().map(ToString::to_string)
    );
    for d in &report.diagnostics {
        assert!(d.at.name.contains("Rotate"), "{what}: {d}");
        match &d.finding {
            Finding::Group(g) => assert!(
                g.to_string().contains("nonexistent invocation"),
                "{what}: {d}"
            ),
            other => panic!("{what}: unexpected finding {other}"),
        }
    }
}

/// The CTS's local sizes, less those that give the same subgroups as another one ({1,S,1} and
/// {1,1,S} as {S,1,1}; {1,4,32} as {32,4,1}): the executor forms subgroups by
/// LocalInvocationIndex. {3,5,7} and {32,4,1} leave partial subgroups for large S.
fn local_sizes(s: u32) -> [[u32; 3]; 4] {
    [[1, 1, 1], [s, 1, 1], [32, 4, 1], [3, 5, 7]]
}

fn run_variant(
    rng: &mut Rng,
    (scalar, vec, size): (&str, &str, u32),
    width: u32,
    dynamic: bool,
    clustered: bool,
) -> usize {
    let ty = if width == 1 {
        scalar.to_string()
    } else {
        format!("{vec}{width}")
    };
    let module = compile(&shader(&ty, dynamic, clustered));
    let data = data1(rng, scalar, size, width);
    let mut runs = 0;
    for s in [4u32, 8, 16, 32, 64, 128] {
        let s64 = u64::from(s);
        let deltas: Vec<u64> = if dynamic {
            vec![rng.next() % (2 * s64), s64 + 3, 2 * s64 - 1]
        } else {
            vec![5]
        };
        for local in local_sizes(s) {
            for &delta in &deltas {
                let invocations: u32 = local.iter().product();
                let total = (invocations * GROUPS.iter().product::<u32>()) as usize;
                // data2 holds a value whose low bits are the delta (the shader masks it).
                let d2 = (delta | (u64::from(s) * 2 * (rng.next() % 4))) as u32;
                let mut job = Job::new(
                    vec![
                        vec![0u8; total * 4],
                        data.clone(),
                        d2.to_le_bytes().to_vec(),
                    ],
                    GROUPS,
                );
                job.subgroup = s;
                job.spec = [
                    (0, u64::from(local[0])),
                    (1, u64::from(local[1])),
                    (2, u64::from(local[2])),
                ]
                .into_iter()
                .collect();
                let (bufs, report) = run_module(&module, &job);
                let what = format!("{ty} dynamic={dynamic} clustered={clustered} S={s} local={local:?} delta={delta}");
                let results = to_u32s(&bufs[0]);
                assert!(
                    results.iter().all(|&r| r == 1),
                    "{what}: {:?}",
                    results.iter().position(|&r| r != 1)
                );
                check_report(
                    &report,
                    expected_findings(s, invocations, delta, clustered),
                    &what,
                );
                runs += 1;
            }
        }
    }
    runs
}

#[test]
fn rotate_every_type_constant_delta() {
    let mut rng = Rng(0x0070_7a7e);
    let mut runs = 0;
    for t in SCALARS {
        for width in 1..=4 {
            runs += run_variant(&mut rng, t, width, false, false);
        }
    }
    assert_eq!(runs, 12 * 4 * 6 * 4);
}

#[test]
fn rotate_every_type_dynamic_delta() {
    let mut rng = Rng(0x000d_1a7e);
    let mut runs = 0;
    for t in SCALARS {
        runs += run_variant(&mut rng, t, 1, true, false);
    }
    for t in [SCALARS[1], SCALARS[8], SCALARS[11]] {
        runs += run_variant(&mut rng, t, 3, true, false);
    }
    assert_eq!(runs, 15 * 6 * 4 * 3);
}

#[test]
fn clustered_rotate_every_type() {
    let mut rng = Rng(0x000c_1a7e);
    let mut runs = 0;
    for t in SCALARS {
        runs += run_variant(&mut rng, t, 1, false, true);
    }
    for t in [SCALARS[0], SCALARS[7], SCALARS[9], SCALARS[11]] {
        runs += run_variant(&mut rng, t, 2, true, true);
    }
    assert_eq!(runs, 12 * 6 * 4 + 4 * 6 * 4 * 3);
}

/// A rotate with Workgroup execution scope in SPIR-V assembly: `o[i] = rotate(100 + i, delta)`
/// for `LocalInvocationIndex` i, with an optional ClusterSize.
fn workgroup_shader(cluster: Option<u32>) -> String {
    let (cluster_const, cluster_operand) = match cluster {
        Some(c) => (format!("%cs = OpConstant %u32 {c}\n"), " %cs"),
        None => (String::new(), ""),
    };
    format!(
        "OpCapability Shader
OpCapability GroupNonUniform
OpCapability GroupNonUniformRotateKHR
OpExtension \"SPV_KHR_subgroup_rotate\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %idx %buf
OpExecutionMode %main LocalSize 96 1 1
OpDecorate %idx BuiltIn LocalInvocationIndex
OpDecorate %arr ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%pin = OpTypePointer Input %u32
%idx = OpVariable %pin Input
%arr = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %arr
%pbuf = OpTypePointer StorageBuffer %blk
%buf = OpVariable %pbuf StorageBuffer
%pu = OpTypePointer StorageBuffer %u32
%c0 = OpConstant %u32 0
%c96 = OpConstant %u32 96
%c100 = OpConstant %u32 100
%workgroup = OpConstant %u32 2
{cluster_const}%main = OpFunction %void None %fn
%entry = OpLabel
%i = OpLoad %u32 %idx
%pd = OpAccessChain %pu %buf %c0 %c96
%delta = OpLoad %u32 %pd
%v = OpIAdd %u32 %i %c100
%r = OpGroupNonUniformRotateKHR %u32 %workgroup %v %delta{cluster_operand}
%po = OpAccessChain %pu %buf %c0 %i
OpStore %po %r
OpReturn
OpFunctionEnd
"
    )
}

#[test]
fn workgroup_scope_rotate_follows_local_invocation_index() {
    use tangle_spirv::text::{assemble, AssembleOptions};
    for cluster in [None, Some(8u32)] {
        let (module, _) =
            assemble(&workgroup_shader(cluster), &AssembleOptions::default()).expect("assembles");
        // Vulkan allows only Subgroup scope for rotates: validate for SPIR-V 1.6.
        let module = common::validated_in(module, "spv1.6");
        for s in [4u32, 32, 64] {
            for delta in [3u32, 37] {
                let mut words = vec![0u32; 97];
                words[96] = delta;
                let mut job = Job::new(vec![common::u32s(&words)], [1, 1, 1]);
                job.subgroup = s;
                let (bufs, report) = run_module(&module, &job);
                let out = to_u32s(&bufs[0]);
                let g = cluster.unwrap_or(s);
                if g > s {
                    // ClusterSize above the subgroup size: undefined, once per subgroup.
                    assert!(out[..96].iter().all(|&x| x == 0xdead_beef));
                    assert_eq!(report.diagnostics.len(), (96 / s) as usize);
                    continue;
                }
                let mut bad = 0;
                for i in 0..96u32 {
                    // "Invocation ID = ((LocalId + Delta) & (RotationGroupSize - 1)) + (LocalId &
                    // ~(RotationGroupSize - 1))", LocalId = LocalInvocationIndex.
                    let src = ((i + delta) & (g - 1)) + (i & !(g - 1));
                    if src < 96 {
                        assert_eq!(
                            out[i as usize],
                            100 + src,
                            "S={s} delta={delta} cluster={cluster:?} i={i}"
                        );
                    } else {
                        assert_eq!(out[i as usize], 0xdead_beef);
                        bad += 1;
                    }
                }
                // Only the partial subgroup of 32 invocations at S = 64 reads past the end.
                let partial = s == 64 && cluster.is_none();
                assert_eq!(bad > 0, partial, "S={s} delta={delta} cluster={cluster:?}");
                assert_eq!(report.diagnostics.len(), usize::from(partial));
            }
        }
    }
}

/// `bench/rotate_conv.comp` (16 clustered rotates per invocation) at a small size against
/// plain Rust: lane L of each cluster of 8 reads lane (L + t) mod 8.
#[test]
fn bench_rotate_conv_matches_rust() {
    let src = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/rotate_conv.comp"
    ));
    let mut rng = Rng(0x0c0f_fee5);
    let n = 256;
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let w: Vec<f32> = (0..16)
        .map(|_| (rng.next() % 201) as f32 / 50.0 - 2.0)
        .collect();
    for s in [8u32, 32, 64] {
        let mut job = Job::new(
            vec![common::f32s(&x), common::f32s(&w), vec![0u8; n * 4]],
            [4, 1, 1],
        );
        job.subgroup = s;
        let (bufs, report) = common::run_glsl(src, &job);
        let got = common::to_f32s(&bufs[2]);
        for (i, g) in got.iter().enumerate() {
            let (base, l) = (i / 8 * 8, i % 8);
            let want = w
                .iter()
                .enumerate()
                .fold(0.0f32, |acc, (t, wt)| acc + wt * x[base + (l + t) % 8]);
            assert_eq!(g.to_bits(), want.to_bits(), "S={s} i={i}");
        }
        assert!(report.diagnostics.is_empty());
    }
}
