//! Each sanitizer finding of the group instructions, provoked by a shader and absent from a
//! correct twin: a rotate reading an inactive invocation, Delta / Broadcast Id / QuadBroadcast
//! Index that are not dynamically uniform, and a ClusterSize above the subgroup size. Each
//! finding names the instruction, an invocation and the values; the results are poison.

mod common;

use common::{run_glsl, to_u32s, u32s, Job};
use tangle_exec::{Finding, Report};

const POISON: u32 = 0xdead_beef;

/// A shader over 32 invocations: `v = data[i]`, `d = data2[i]`, writing `EXPR` (a uint) to
/// `o[i]` from inside `if (COND)`.
fn shader(cond: &str, expr: &str) -> String {
    format!(
        "#version 450
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_quad : enable
#extension GL_KHR_shader_subgroup_rotate : enable
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, std430) readonly buffer D {{ uint data[]; }};
layout(set = 0, binding = 1, std430) readonly buffer D2 {{ uint data2[]; }};
layout(set = 0, binding = 2, std430) buffer O {{ uint o[]; }};
void main() {{
    uint i = gl_LocalInvocationIndex;
    uint v = data[i];
    uint d = data2[i];
    if ({cond}) {{
        o[i] = {expr};
    }}
}}
"
    )
}

/// Runs with `data[i] = 100 + i`, the given `data2`, at subgroup size `s`.
fn run(cond: &str, expr: &str, data2: &[u32], s: u32) -> (Vec<u32>, Report) {
    let data: Vec<u32> = (0..32).map(|i| 100 + i).collect();
    let mut job = Job::new(vec![u32s(&data), u32s(data2), vec![0u8; 128]], [1, 1, 1]);
    job.subgroup = s;
    let (bufs, report) = run_glsl(&shader(cond, expr), &job);
    (to_u32s(&bufs[2]), report)
}

fn the_finding(report: &Report) -> String {
    assert_eq!(
        report.diagnostics.len(),
        1,
        "{:?}",
        report
            .diagnostics
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    let d = &report.diagnostics[0];
    assert!(matches!(d.finding, Finding::Group(_)), "{d}");
    d.to_string()
}

#[test]
fn rotate_reading_an_inactive_invocation() {
    // Only even invocations are active: rotating by 1 reads odd (inactive) ones, by 2 even ones.
    let (out, report) = run("(i & 1u) == 0u", "subgroupRotate(v, 1u)", &[0; 32], 32);
    let text = the_finding(&report);
    assert!(
        text.contains("OpGroupNonUniformRotateKHR")
            && text.contains("invocation 0 reads inactive invocation 1"),
        "{text}"
    );
    assert!(out.iter().step_by(2).all(|&x| x == POISON), "{out:?}");
    let (out, report) = run("(i & 1u) == 0u", "subgroupRotate(v, 2u)", &[0; 32], 32);
    assert!(report.diagnostics.is_empty());
    let want: Vec<u32> = (0..32)
        .map(|i| if i % 2 == 0 { 100 + (i + 2) % 32 } else { 0 })
        .collect();
    assert_eq!(out, want);
}

#[test]
fn rotate_past_a_partial_subgroup_reads_a_nonexistent_invocation() {
    // 32 invocations in a subgroup of 64: lane 31 rotating by 1 reads lane 32, which does not
    // exist. A cluster of 32 stays inside the invocations that exist.
    let (out, report) = run("true", "subgroupRotate(v, 1u)", &[0; 32], 64);
    let text = the_finding(&report);
    assert!(
        text.contains("invocation 31 reads nonexistent invocation 32"),
        "{text}"
    );
    assert_eq!(out[31], POISON);
    assert_eq!(out[0], 101);
    let (out, report) = run("true", "subgroupClusteredRotate(v, 1u, 32u)", &[0; 32], 64);
    assert!(report.diagnostics.is_empty());
    assert_eq!(out[31], 100);
}

#[test]
fn delta_not_dynamically_uniform() {
    let varying: Vec<u32> = (0..32).map(|i| i % 3).collect();
    let (out, report) = run("true", "subgroupRotate(v, d)", &varying, 32);
    let text = the_finding(&report);
    assert!(
        text.contains("Delta is not dynamically uniform") && text.contains("invocation 1: 1"),
        "{text}"
    );
    assert!(out.iter().all(|&x| x == POISON));
    // The twin: the same per-invocation reads, but every invocation holds the same delta.
    let (out, report) = run("true", "subgroupRotate(v, d)", &[3; 32], 32);
    assert!(report.diagnostics.is_empty());
    assert_eq!(out, (0..32).map(|i| 100 + (i + 3) % 32).collect::<Vec<_>>());
}

#[test]
fn broadcast_id_and_quad_index_not_dynamically_uniform() {
    let varying: Vec<u32> = (0..32).map(|i| i % 2).collect();
    let (_, report) = run("true", "subgroupBroadcast(v, d)", &varying, 32);
    assert!(the_finding(&report).contains("Id is not dynamically uniform"));
    let (out, report) = run("true", "subgroupBroadcast(v, d)", &[5; 32], 32);
    assert!(report.diagnostics.is_empty());
    assert!(out.iter().all(|&x| x == 105));
    let (_, report) = run("true", "subgroupQuadBroadcast(v, d)", &varying, 32);
    assert!(the_finding(&report).contains("Index is not dynamically uniform"));
    let (out, report) = run("true", "subgroupQuadBroadcast(v, d)", &[3; 32], 32);
    assert!(report.diagnostics.is_empty());
    assert_eq!(out, (0..32).map(|i| 100 + (i & !3) + 3).collect::<Vec<_>>());
}

#[test]
fn broadcast_of_an_inactive_invocation() {
    let (out, report) = run("i >= 4u", "subgroupBroadcast(v, 2u)", &[0; 32], 32);
    assert!(the_finding(&report).contains("reads inactive invocation 2"));
    assert!(out[4..].iter().all(|&x| x == POISON));
    let (out, report) = run("i >= 4u", "subgroupBroadcast(v, 6u)", &[0; 32], 32);
    assert!(report.diagnostics.is_empty());
    assert!(out[4..].iter().all(|&x| x == 106));
}

#[test]
fn cluster_size_above_the_subgroup_size() {
    for expr in [
        "subgroupClusteredRotate(v, 1u, 16u)",
        "subgroupClusteredAdd(v, 16u)",
    ] {
        // Four subgroups of 8: one finding each.
        let (out, report) = run("true", expr, &[0; 32], 8);
        assert_eq!(report.diagnostics.len(), 4, "{expr}");
        let text = report.diagnostics[0].to_string();
        assert!(
            text.contains("ClusterSize 16") && text.contains("subgroup size 8"),
            "{expr}: {text}"
        );
        assert!(out.iter().all(|&x| x == POISON), "{expr}");
        let (out, report) = run("true", expr, &[0; 32], 16);
        assert!(report.diagnostics.is_empty(), "{expr}");
        assert!(out.iter().all(|&x| x != POISON), "{expr}");
    }
}

#[test]
fn a_profile_without_the_category_refuses_the_pipeline() {
    use tangle_exec::profile::subgroup_ops as ops;
    use tangle_exec::{Device, ExecError, Profile, SpecConstants};
    let rotate = common::compile(&shader("true", "subgroupClusteredRotate(v, 1u, 4u)"));
    let quad = common::compile(&shader("true", "subgroupQuadSwapDiagonal(v)"));
    let without = |bits: u32| {
        Device::new(Profile {
            subgroup_operations: ops::ALL & !bits,
            ..Profile::default()
        })
    };
    let spec = SpecConstants::new();
    for (module, bits, ok_without) in [
        (&rotate, ops::ROTATE_CLUSTERED, ops::QUAD),
        (&quad, ops::QUAD, ops::ROTATE),
    ] {
        match without(bits).compute_pipeline(module, "main", &spec) {
            Err(ExecError::Unsupported { at, what }) => {
                assert!(what.contains("profile lacks"), "{at}: {what}")
            }
            other => panic!("expected Unsupported, got {:?}", other.map(|_| ())),
        }
        assert!(without(ok_without)
            .compute_pipeline(module, "main", &spec)
            .is_ok());
    }
}
