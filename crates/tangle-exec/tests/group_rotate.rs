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

const GROUPS: [u32; 3] = [4, 2, 2];

fn shader(ty: &str, dynamic: bool, clustered: bool) -> String {
    let delta = if dynamic { "data2 & (gl_SubgroupSize * 2 - 1)" } else { "5" };
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
                "float16_t" => u64::from(half::f16::from_f32((r % 2001) as f32 / 8.0 - 125.0).to_bits()),
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
        let sizes: Vec<u32> = if clustered { (0..8).map(|k| 1 << k).filter(|&c| c <= s).collect() } else { vec![s] };
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
    assert_eq!(found, expected, "{what}: findings {:?}", report.diagnostics.first().map(ToString::to_string));
    for d in &report.diagnostics {
        assert!(d.at.name.contains("Rotate"), "{what}: {d}");
        match &d.finding {
            Finding::Group(g) => assert!(g.to_string().contains("nonexistent invocation"), "{what}: {d}"),
            other => panic!("{what}: unexpected finding {other}"),
        }
    }
}

fn local_sizes(s: u32) -> Vec<[u32; 3]> {
    let all = [[1, 1, 1], [s, 1, 1], [1, s, 1], [1, 1, s], [32, 4, 1], [1, 4, 32], [3, 5, 7]];
    // The default profile allows z up to 64.
    all.into_iter().filter(|l| l[2] <= 64).collect()
}

fn run_variant(rng: &mut Rng, (scalar, vec, size): (&str, &str, u32), width: u32, dynamic: bool, clustered: bool) -> usize {
    let ty = if width == 1 { scalar.to_string() } else { format!("{vec}{width}") };
    let module = compile(&shader(&ty, dynamic, clustered));
    let data = data1(rng, scalar, size, width);
    let mut runs = 0;
    for s in [4u32, 8, 16, 32, 64, 128] {
        let deltas: Vec<u64> = if dynamic { vec![0, 1, u64::from(s) - 1, u64::from(s) + 3, 2 * u64::from(s) - 1] } else { vec![5] };
        for local in local_sizes(s) {
            for &delta in &deltas {
                let invocations: u32 = local.iter().product();
                let total = (invocations * GROUPS.iter().product::<u32>()) as usize;
                // data2 holds a value whose low bits are the delta (the shader masks it).
                let d2 = (delta | (u64::from(s) * 2 * (rng.next() % 4))) as u32;
                let mut job = Job::new(vec![vec![0u8; total * 4], data.clone(), d2.to_le_bytes().to_vec()], GROUPS);
                job.subgroup = s;
                job.spec = [(0, u64::from(local[0])), (1, u64::from(local[1])), (2, u64::from(local[2]))].into_iter().collect();
                let (bufs, report) = run_module(&module, &job);
                let what = format!("{ty} dynamic={dynamic} clustered={clustered} S={s} local={local:?} delta={delta}");
                let results = to_u32s(&bufs[0]);
                assert!(results.iter().all(|&r| r == 1), "{what}: {:?}", results.iter().position(|&r| r != 1));
                check_report(&report, expected_findings(s, invocations, delta, clustered), &what);
                runs += 1;
            }
        }
    }
    runs
}

#[test]
fn rotate_every_type_constant_delta() {
    let mut rng = Rng(0x0707_a7e);
    let mut runs = 0;
    for t in SCALARS {
        for width in 1..=4 {
            runs += run_variant(&mut rng, t, width, false, false);
        }
    }
    assert_eq!(runs, 12 * 4 * (6 * 7 - 1));
}

#[test]
fn rotate_every_type_dynamic_delta() {
    let mut rng = Rng(0xd1_a7e);
    let mut runs = 0;
    for t in SCALARS {
        for width in [1, 3] {
            runs += run_variant(&mut rng, t, width, true, false);
        }
    }
    assert_eq!(runs, 12 * 2 * (6 * 7 - 1) * 5);
}

#[test]
fn clustered_rotate_every_type() {
    let mut rng = Rng(0xc1_a7e);
    let mut runs = 0;
    for t in SCALARS {
        for (width, dynamic) in [(1, false), (2, true), (4, false)] {
            runs += run_variant(&mut rng, t, width, dynamic, true);
        }
    }
    assert!(runs > 0);
}
