//! Workgroup memory and barriers on the wide path (`wide/workgroup.rs`): reductions through
//! shared memory (plain and after subgroup operations) and a tiled GEMM run there, in batches of
//! one workgroup or several batches of one workgroup in step, with the reference path's bytes;
//! barrier divergence, races on Workgroup memory and reads of unwritten Workgroup memory are
//! given back to the reference path, which reports them exactly as it does alone.

mod common;

use common::{f32s, run_glsl, to_u32s, u32s, Job, Rng};
use tangle_exec::Report;

/// Runs `src` on the reference path and on the wide path (the native tier on: it must hand such
/// programs to the wide interpreter) with `buffers` over `groups` workgroups at subgroup size
/// `sg`, checks that both leave the same bytes and report the same findings, and returns the
/// reports (reference, wide).
fn both(src: &str, buffers: &[Vec<u8>], groups: u32, sg: u32) -> (Report, Report) {
    let job = |wide: bool| Job {
        subgroup: sg,
        threads: 2,
        wide,
        jit: wide,
        ..Job::new(buffers.to_vec(), [groups, 1, 1])
    };
    let (want, reference) = run_glsl(src, &job(false));
    let (got, wide) = run_glsl(src, &job(true));
    assert_eq!(got, want, "bytes (subgroup size {sg})\n{src}");
    assert_eq!(wide.diagnostics, reference.diagnostics, "findings\n{src}");
    assert_eq!(reference.stats.wide_invocations, 0);
    (reference, wide)
}

/// Whether the wide path ran the whole dispatch of `n` invocations (and the native tier said
/// why it did not).
fn ran_wide(wide: &Report, n: u64) {
    assert_eq!(wide.stats.wide_invocations, n, "{:?}", wide.paths);
    assert_eq!(wide.stats.jit_invocations, 0);
    assert!(
        wide.paths
            .0
            .iter()
            .any(|p| p.contains("native: not taken: Workgroup memory or barriers")),
        "{:?}",
        wide.paths
    );
    assert!(wide.diagnostics.is_empty(), "{:?}", wide.diagnostics);
}

/// An rms_norm-like row normalisation, one workgroup a row of `COLS` floats: each invocation
/// sums the squares of a strided slice, a tree reduction through shared memory with a barrier a
/// step, then every invocation scales its slice by the shared result.
fn rms_norm(local: u32) -> String {
    format!(
        "#version 450
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0, std430) buffer X {{ float x[]; }};
layout(set = 0, binding = 1, std430) buffer Y {{ float y[]; }};
const uint COLS = 1024u;
shared float sum[{local}];
void main() {{
    uint row = gl_WorkGroupID.x;
    uint l = gl_LocalInvocationID.x;
    float acc = 0.0;
    for (uint c = l; c < COLS; c += {local}u) {{
        float v = x[row * COLS + c];
        acc += v * v;
    }}
    sum[l] = acc;
    barrier();
    for (uint s = {local}u / 2u; s > 0u; s >>= 1) {{
        if (l < s) {{ sum[l] += sum[l + s]; }}
        barrier();
    }}
    float scale = inversesqrt(sum[0] / float(COLS) + 1e-6);
    for (uint c = l; c < COLS; c += {local}u) {{
        y[row * COLS + c] = x[row * COLS + c] * scale;
    }}
}}
"
    )
}

fn random_floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.f32() / 500.0).collect()
}

#[test]
fn a_workgroup_reduction_runs_wide_with_the_reference_bytes() {
    let rows = 3u32;
    let x = f32s(&random_floats(rows as usize * 1024, 7));
    let y = f32s(&vec![0.0; rows as usize * 1024]);
    // One batch of a workgroup (32..128), and 2 and 4 batches of one in step (256, 512).
    for (local, sg) in [(32, 32), (64, 8), (128, 64), (256, 16), (512, 32)] {
        let (_, wide) = both(&rms_norm(local), &[x.clone(), y.clone()], rows, sg);
        ran_wide(&wide, u64::from(rows * local));
    }
}

#[test]
fn a_reduction_through_subgroups_and_shared_memory_runs_wide() {
    // ggml's reductions: a subgroupAdd per subgroup, one partial per subgroup in shared memory,
    // then the first subgroup adds the partials.
    let src = |local: u32| {
        format!(
            "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0, std430) buffer X {{ uint x[]; }};
layout(set = 0, binding = 1, std430) buffer S {{ uint sums[]; }};
shared uint part[{local}];
void main() {{
    uint l = gl_LocalInvocationID.x;
    uint v = subgroupAdd(x[gl_GlobalInvocationID.x] * 3u + l);
    if (subgroupElect()) {{ part[gl_SubgroupID] = v; }}
    barrier();
    if (gl_SubgroupID == 0u) {{
        uint t = 0u;
        for (uint k = gl_SubgroupInvocationID; k < gl_NumSubgroups; k += gl_SubgroupSize) {{
            t += part[k];
        }}
        t = subgroupAdd(t);
        if (subgroupElect()) {{ sums[gl_WorkGroupID.x] = t; }}
    }}
}}
"
        )
    };
    let groups = 4u32;
    for (local, sg) in [(64, 8), (128, 32), (256, 64), (512, 16)] {
        let x = u32s(&(0..groups * local).map(|i| i * 7 + 1).collect::<Vec<_>>());
        let sums = u32s(&vec![0; groups as usize]);
        let (_, wide) = both(&src(local), &[x, sums], groups, sg);
        ran_wide(&wide, u64::from(groups * local));
    }
}

/// C = A × B for `N`×`N` floats with `T`×`T` tiles staged in shared memory (two barriers a
/// step), one workgroup of `T`×`T` invocations a tile of C.
fn tiled_gemm(t: u32) -> String {
    format!(
        "#version 450
layout(local_size_x = {t}, local_size_y = {t}) in;
layout(set = 0, binding = 0, std430) buffer A {{ float a[]; }};
layout(set = 0, binding = 1, std430) buffer B {{ float b[]; }};
layout(set = 0, binding = 2, std430) buffer C {{ float c[]; }};
const uint N = 32u;
const uint T = {t}u;
shared float ta[T][T];
shared float tb[T][T];
void main() {{
    uint tiles = N / T;
    uint ti = gl_WorkGroupID.x / tiles;
    uint tj = gl_WorkGroupID.x % tiles;
    uint i = gl_LocalInvocationID.y;
    uint j = gl_LocalInvocationID.x;
    float acc = 0.0;
    for (uint k0 = 0u; k0 < N; k0 += T) {{
        ta[i][j] = a[(ti * T + i) * N + k0 + j];
        tb[i][j] = b[(k0 + i) * N + tj * T + j];
        barrier();
        for (uint k = 0u; k < T; k++) {{
            acc += ta[i][k] * tb[k][j];
        }}
        barrier();
    }}
    c[(ti * T + i) * N + tj * T + j] = acc;
}}
"
    )
}

#[test]
fn a_shared_memory_tiled_gemm_runs_wide_with_the_reference_bytes() {
    let a = f32s(&random_floats(32 * 32, 11));
    let b = f32s(&random_floats(32 * 32, 12));
    let c = f32s(&vec![0.0; 32 * 32]);
    // 64 invocations a workgroup (one batch) and 256 (two in step).
    for (t, sg) in [(8, 32), (16, 16), (16, 64)] {
        let groups = (32 / t) * (32 / t);
        let (_, wide) = both(
            &tiled_gemm(t),
            &[a.clone(), b.clone(), c.clone()],
            groups,
            sg,
        );
        ran_wide(&wide, 32 * 32);
    }
}

/// Whether the wide path gave the dispatch back for a reason containing `why`.
fn gave_up(wide: &Report, why: &str) {
    assert!(
        wide.paths
            .0
            .iter()
            .any(|p| p.starts_with("wide: gave up:") && p.contains(why)),
        "{:?}",
        wide.paths
    );
}

#[test]
fn barrier_divergence_is_given_back_and_reported_as_alone() {
    // A barrier inside a branch half the workgroup takes; and one some invocations never reach
    // because they returned. Both undefined behaviour, reported by the reference path.
    let body = [
        "if (l < 16u) { s[l] = l; barrier(); o[g] = s[l]; } else { o[g] = 7u; }",
        "if (l >= 200u) { return; } s[l] = l; barrier(); o[g] = s[l];",
    ];
    for (local, sg) in [(64u32, 32u32), (256, 16)] {
        for b in body {
            let src = format!(
                "#version 450
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0, std430) buffer O {{ uint o[]; }};
shared uint s[{local}];
void main() {{
    uint l = gl_LocalInvocationID.x;
    uint g = gl_GlobalInvocationID.x;
    {b}
}}
"
            );
            let o = u32s(&vec![0; 2 * local as usize]);
            let (reference, wide) = both(&src, &[o], 2, sg);
            if b.contains("return") && local <= 200 {
                // Every invocation reaches the barrier: no divergence.
                ran_wide(&wide, u64::from(2 * local));
                continue;
            }
            assert!(
                reference
                    .diagnostics
                    .iter()
                    .any(|d| d.to_string().contains("OpControlBarrier")),
                "{:?}",
                reference.diagnostics
            );
            gave_up(&wide, "barrier divergence");
        }
    }
}

#[test]
fn a_race_on_workgroup_memory_is_given_back_and_reported_as_alone() {
    // Invocations 2k and 2k + 1 store to the same shared word in one barrier interval; then a
    // read of a neighbour's word with no barrier between.
    let bodies = [
        "s[l / 2u] = l; barrier(); o[g] = s[l / 2u];",
        "s[l] = l * 3u; o[g] = s[(l + 1u) % 128u];",
    ];
    for (local, sg) in [(128u32, 32u32), (128, 8)] {
        for b in bodies {
            let src = format!(
                "#version 450
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0, std430) buffer O {{ uint o[]; }};
shared uint s[128];
void main() {{
    uint l = gl_LocalInvocationID.x;
    uint g = gl_GlobalInvocationID.x;
    {b}
}}
"
            );
            let o = u32s(&vec![0; 2 * local as usize]);
            let (reference, wide) = both(&src, &[o], 2, sg);
            assert!(
                reference
                    .diagnostics
                    .iter()
                    .any(|d| d.to_string().to_lowercase().contains("race")),
                "{:?}",
                reference.diagnostics
            );
            gave_up(&wide, "data race on Workgroup memory");
        }
    }
    // The same accesses with a barrier between them race with nothing: taken.
    let src = "#version 450
layout(local_size_x = 128) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
shared uint s[128];
void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = l * 3u;
    barrier();
    o[gl_GlobalInvocationID.x] = s[(l + 1u) % 128u];
}
";
    let (_, wide) = both(src, &[u32s(&[0; 256])], 2, 32);
    ran_wide(&wide, 256);
    assert_eq!(
        to_u32s(&run_glsl(src, &Job::new(vec![u32s(&[0; 256])], [2, 1, 1])).0[0])[5],
        18
    );
}

#[test]
fn a_read_of_unwritten_workgroup_memory_is_given_back_and_reported_as_alone() {
    // Only the first half of `s` is written; the second half's words are read and used.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
shared uint s[64];
void main() {
    uint l = gl_LocalInvocationID.x;
    if (l < 32u) { s[l] = l; }
    barrier();
    uint v = s[63u - l];
    if (v > 5u) { o[gl_GlobalInvocationID.x] = v; }
}
";
    for checks in [true, false] {
        let job = |wide: bool| Job {
            threads: 2,
            wide,
            jit: wide,
            checks,
            ..Job::new(vec![u32s(&[9; 128])], [2, 1, 1])
        };
        let (want, reference) = run_glsl(src, &job(false));
        let (got, wide) = run_glsl(src, &job(true));
        assert_eq!(got, want);
        assert_eq!(wide.diagnostics, reference.diagnostics);
        if checks {
            assert!(
                reference
                    .diagnostics
                    .iter()
                    .any(|d| d.to_string().contains("undefined value")),
                "{:?}",
                reference.diagnostics
            );
        }
        gave_up(&wide, "no invocation wrote");
    }
}

/// A random program of shared-memory rounds: each round writes `s` at an index of the
/// invocation's (all of them or some), maybe waits at a barrier (maybe inside a branch), and
/// reads `s` at another index. Index maps that are not permutations race, reads of words no
/// invocation wrote are undefined, a barrier in a branch diverges: each is the reference
/// path's to report.
fn random_rounds(rng: &mut Rng, local: u32) -> String {
    let mut body = String::new();
    for round in 0..1 + rng.next() % 3 {
        // Mostly a factor prime to every workgroup size here (a permutation), else any.
        let mut factor = || match rng.next() % 8 {
            0 => rng.next() % 8,
            k => [1, 5, 7, 11, 13, 1, 1, 1][k as usize],
        };
        let (a, c) = (factor(), factor());
        let (b, d) = (rng.next() % u64::from(local), rng.next() % u64::from(local));
        let store = format!("s[(l * {a}u + {b}u) % {local}u] = v + {round}u;");
        let store = match rng.next() % 8 {
            0 => format!("if (l % 3u != 0u) {{ {store} }}"),
            _ => store,
        };
        let barrier = match rng.next() % 16 {
            0 => "",
            1 => "if (l < 32u) { barrier(); }",
            _ => "barrier();",
        };
        body += &format!(
            "    {store}\n    {barrier}\n    v = v * 31u + s[(l * {c}u + {d}u) % {local}u];\n    barrier();\n"
        );
    }
    format!(
        "#version 450
layout(local_size_x = {local}) in;
layout(set = 0, binding = 0, std430) buffer O {{ uint o[]; }};
shared uint s[{local}];
void main() {{
    uint l = gl_LocalInvocationID.x;
    uint v = o[gl_GlobalInvocationID.x];
{body}    o[gl_GlobalInvocationID.x] = v;
}}
"
    )
}

#[test]
fn random_shared_memory_rounds_give_the_reference_bytes_and_findings() {
    let mut rng = Rng(0x5eed_0031);
    let (mut taken, mut given_back) = (0, 0);
    for _ in 0..24 {
        let local = [32, 64, 96, 128, 192, 256, 512][(rng.next() % 7) as usize];
        let sg = [8, 16, 32, 64][(rng.next() % 4) as usize];
        let src = random_rounds(&mut rng, local);
        let o = u32s(
            &(0..2 * local)
                .map(|i: u32| i.wrapping_mul(2654435761))
                .collect::<Vec<_>>(),
        );
        let (reference, wide) = both(&src, &[o], 2, sg);
        if wide.stats.wide_invocations > 0 {
            taken += 1;
            assert!(reference.diagnostics.is_empty(), "{src}");
        } else {
            given_back += 1;
        }
    }
    // Both kinds occur (a check that the generator still makes both).
    assert!(
        taken >= 4 && given_back >= 4,
        "{taken} taken, {given_back} given back"
    );
}
