//! The native tier (`tangle_exec::jit`) end to end: a program it takes runs as native code and
//! gives the reference path's buffers; and it gives a dispatch back, for the reference path to
//! report exactly, for each reason it has: an access out of bounds, a division the sanitizer
//! flags, the step bound, and a possible data race. Each case is compared with the reference
//! path alone (`wide: false`): same buffers, same findings, same error. Invocations run in
//! lockstep groups that part where their branches differ: programs whose lanes part at loops,
//! switches and early returns, over dispatches that end inside a group.

mod common;

use common::{compile, to_u32s, u32s, Rng};
use tangle_exec::{Device, ExecError, Profile, Report, Resources, RunOptions, SpecConstants};

/// Runs GLSL `src` with one buffer at binding 0 over `groups` workgroups; `fast` tries the
/// native tier (then the wide interpreter), else the reference path alone.
fn run(
    src: &str,
    buffer: &[u32],
    groups: u32,
    fast: bool,
    tweak: impl Fn(&mut RunOptions),
) -> (Vec<u32>, Result<Report, ExecError>) {
    run_sg(src, buffer, groups, fast, 32, tweak)
}

/// [`run`] with subgroups of `sg`.
fn run_sg(
    src: &str,
    buffer: &[u32],
    groups: u32,
    fast: bool,
    sg: u32,
    tweak: impl Fn(&mut RunOptions),
) -> (Vec<u32>, Result<Report, ExecError>) {
    let module = compile(src);
    let profile = Profile::default()
        .with_subgroup_size(sg)
        .expect("a subgroup size the profile takes");
    let pipeline = Device::new(profile)
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(buffer));
    let mut options = RunOptions {
        threads: 2,
        wide: fast,
        jit: fast,
        ..RunOptions::default()
    };
    tweak(&mut options);
    let report = pipeline.dispatch(&mut res, [groups, 1, 1], &options);
    (to_u32s(&res.buffers[&(0, 0)]), report)
}

/// Runs `src` on both and checks they agree; returns the native tier's report (or error).
fn agree(
    src: &str,
    buffer: &[u32],
    groups: u32,
    tweak: impl Fn(&mut RunOptions) + Copy,
) -> Result<Report, ExecError> {
    agree_sg(src, buffer, groups, 32, tweak)
}

/// [`agree`] with subgroups of `sg`.
fn agree_sg(
    src: &str,
    buffer: &[u32],
    groups: u32,
    sg: u32,
    tweak: impl Fn(&mut RunOptions) + Copy,
) -> Result<Report, ExecError> {
    let (fast, r) = run_sg(src, buffer, groups, true, sg, tweak);
    let (reference, want) = run_sg(src, buffer, groups, false, sg, tweak);
    assert_eq!(fast, reference, "buffers differ");
    match (&r, &want) {
        (Ok(r), Ok(w)) => {
            assert_eq!(r.diagnostics, w.diagnostics);
            assert_eq!(r.summaries, w.summaries);
        }
        (Err(e), Err(w)) => assert_eq!(e.to_string(), w.to_string()),
        _ => panic!("one failed: {r:?} / {want:?}"),
    }
    r
}

const HASH: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = i * 2654435761u + 1u;
    for (uint k = 0u; k < 20u + (i & 7u); ++k) {
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x << 7;
        x += k;
    }
    if ((x & 1u) == 0u) { o[i] = x; } else { o[i] = x / (i + 1u); }
}
";

#[test]
fn a_clean_program_runs_as_native_code() {
    let r = agree(HASH, &[0; 256], 4, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 256);
    assert!(r.diagnostics.is_empty());
    // Turned off, the wide interpreter runs it.
    let (_, r) = run(HASH, &[0; 256], 4, true, |o| o.jit = false);
    let r = r.expect("dispatch");
    assert_eq!(
        (r.stats.jit_invocations, r.stats.wide_invocations),
        (0, 256)
    );
}

#[test]
fn an_access_out_of_bounds_is_given_back() {
    // The last invocation writes one word past the buffer.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i + i / 127u] = i; }
";
    let r = agree(src, &[7; 128], 2, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
}

#[test]
fn a_flagged_division_is_given_back_and_an_unchecked_one_is_not() {
    // Invocation 5 divides by zero.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i] = 1000u / (i ^ 5u); }
";
    let r = agree(src, &[0; 64], 1, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    assert!(!r.diagnostics.is_empty());
    // With the sanitizer off the division's fallback value is the result, as on the
    // reference path.
    let r = agree(src, &[0; 64], 1, |o| o.checks = false).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 64);
}

#[test]
fn the_step_bound_gives_back_before_the_limit() {
    // Far under the limit: native code. Near it (more than limit / subgroup size steps for
    // one invocation): given back, and the reference path decides.
    let r = agree(HASH, &[0; 64], 1, |o| o.step_limit = 1_000_000).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 64);
    let r = agree(HASH, &[0; 64], 1, |o| o.step_limit = 2_000).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    // Over it: the reference path's error.
    let e = agree(HASH, &[0; 64], 1, |o| o.step_limit = 50).expect_err("the step limit");
    assert!(e.to_string().contains("step"), "{e}");
}

#[test]
fn a_possible_race_is_given_back() {
    // Invocations 2k and 2k + 1 write the same word.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i / 2u] = 1u; }
";
    let r = agree(src, &[0; 64], 1, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    assert!(!r.diagnostics.is_empty(), "the race is reported");
    // Neighbours reading what others write, and disjoint writes, are no race.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i] = o[i] + o[i + 64u]; }
";
    let r = agree(src, &[3; 192], 1, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 64);
    // Over two workgroups, invocation i reads o[i + 64], which invocation i + 64 writes: what
    // it reads depends on the order the workgroups run in, so one thread runs them (in order).
    let r = agree(src, &[3; 256], 2, |o| o.threads = 1).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
}

/// Programs whose invocations take different paths: a group in lockstep parts at a loop's
/// exit, a switch, an early return, a `break` on data, a branch on a value held once for the
/// group; workgroups of a size that is no multiple of the group's, so groups span two.
const PARTING: [&str; 6] = [
    "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = o[i];
    uint acc = 0u;
    switch (v % 4u) {
        case 0u: acc = v * 3u; break;
        case 1u: acc = v ^ 0x55u;
        case 2u: acc += v >> 3; break;
        default: for (uint k = 0u; k < (v & 15u); ++k) { acc = acc * 31u + k; }
    }
    o[i] = acc;
}",
    "#version 450
layout(local_size_x = 12) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (o[i] % 5u == 0u) { return; }
    uint x = o[i] + gl_WorkGroupID.x * 7u + gl_LocalInvocationID.x;
    for (uint k = 0u; k < 40u; ++k) {
        if ((x & 63u) == 17u) { break; }
        x = x * 1103515245u + 12345u;
        if ((x & 3u) == 0u) { continue; }
        x ^= k;
    }
    o[i] = x;
}",
    "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint a = o[i];
    uint b = 1u;
    uint n = gl_NumWorkGroups.x * 3u;
    for (uint k = 0u; k < n; ++k) {
        uint t = (k & 1u) == 0u ? a + b : a ^ b;
        a = b;
        b = t;
        if (k == 5u && (a & 1u) == 1u) { b += 9u; }
    }
    o[i] = a + (i < 70u ? b : 0u);
}",
    "#version 450
layout(local_size_x = 8, local_size_y = 3) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 24u;
    uint v = o[i];
    while (v > 1u && v < 0x40000000u) { v = (v & 1u) == 1u ? 3u * v + 1u : v / 2u; }
    o[i] = v + gl_LocalInvocationID.y;
}",
    "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint s = 0u;
    for (uint r = 0u; r < 4u; ++r) {
        for (uint c = 0u; c < 4u + r; ++c) {
            s += (o[i] >> (c + r)) & 1u;
        }
    }
    if (s > 6u) { o[i] = s; }
}",
    // Packed dot products of every signedness, plain and saturating (accumulators from the
    // data, near the limits now and then), in a loop whose trip count varies.
    "#version 450
#extension GL_EXT_integer_dot_product : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint a = o[i];
    uint b = a * 2654435761u ^ (a >> 7);
    // Accumulators near the signed and unsigned limits, with no branch (a group that
    // parted here would run the dot products lane by lane).
    uint sel = a % 3u;
    uint c = uint(sel == 0u) * (0x7ffff000u + (a >> 20)) + uint(sel == 1u) * (0x80000fffu - (a >> 20))
        + uint(sel == 2u) * (0xfffff000u + (a >> 20));
    int s = int(c);
    uint u = c;
    int m = int(c);
    int p = 0;
    for (uint k = 0u; k < 3u + (a & 7u); ++k) {
        s = dotPacked4x8AccSatEXT(int(a), int(b), s);
        u = dotPacked4x8AccSatEXT(a, b, u);
        m = dotPacked4x8AccSatEXT(int(a), b, m);
        p += dotPacked4x8EXT(int(a), int(b)) + int(dotPacked4x8EXT(a, b)) + dotPacked4x8EXT(int(b), a);
        a = a * 747796405u + 2891336453u;
    }
    o[i] = uint(s) ^ (u * 3u) ^ (uint(m) * 5u) ^ (uint(p) * 7u);
}",
];

#[test]
fn groups_in_lockstep_part_and_agree_with_the_reference_path() {
    let mut rng = Rng(14);
    for (n, src) in PARTING.iter().enumerate() {
        for groups in [1, 3, 5] {
            // Random words, some small (long Collatz-style runs are cut by the bound).
            let data: Vec<u32> = (0..(groups * 64) as usize)
                .map(|k| {
                    let v = rng.u32();
                    if k % 3 == 0 {
                        v % 1000
                    } else {
                        v
                    }
                })
                .collect();
            let r = agree(src, &data, groups, |_| {})
                .unwrap_or_else(|e| panic!("program {n}, {groups} groups: {e}"));
            assert!(r.diagnostics.is_empty(), "program {n}: {:?}", r.diagnostics);
            assert_eq!(
                r.stats.jit_invocations, r.stats.invocations,
                "program {n}, {groups} groups: all of it as native code"
            );
            agree(src, &data, groups, |o| o.checks = false)
                .unwrap_or_else(|e| panic!("program {n} unchecked: {e}"));
        }
    }
}

/// Subgroup operations of every family, each group in lockstep being one subgroup.
const SUBGROUP_OPS: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_rotate : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = o[i];
    uint h = subgroupAdd(x) ^ subgroupMin(x) * 3u ^ subgroupMax(x) * 5u;
    h ^= subgroupInclusiveAdd(x) * 7u ^ subgroupExclusiveMul(x | 1u) * 11u;
    h ^= subgroupAnd(x) ^ subgroupOr(x) * 13u ^ subgroupXor(x) * 17u;
    h ^= subgroupClusteredAdd(x, 4u) * 19u ^ subgroupClusteredMax(x, 2u) * 23u;
    h ^= uint(subgroupElect()) * 29u ^ subgroupBallot((x & 1u) == 1u).x * 31u;
    h ^= subgroupBroadcast(x, 3u) * 37u ^ subgroupBroadcastFirst(x) * 41u;
    h ^= subgroupShuffle(x, (gl_SubgroupInvocationID * 5u) & (gl_SubgroupSize - 1u)) * 43u;
    h ^= subgroupShuffleXor(x, 1u) * 47u ^ subgroupShuffleXor(x, gl_SubgroupSize - 1u) * 53u;
    h ^= uint(subgroupAll(x != 7u)) * 59u ^ uint(subgroupAny(x == 7u)) * 61u ^ uint(subgroupAllEqual(x & 0u));
    float f = subgroupAdd(float(x & 0xffffu) * 0.37) + subgroupInclusiveMul(1.0 + float(x & 7u) * 0.125);
    h ^= floatBitsToUint(f);
    uint acc = 0u;
    for (uint t = 0u; t < 8u; ++t) {
        acc = acc * 3u + subgroupClusteredRotate(x, t, 4u) + subgroupRotate(x ^ t, t);
    }
    o[i] = h ^ acc;
}";

#[test]
fn subgroup_operations_run_in_lockstep_groups_of_one_subgroup() {
    let mut rng = Rng(21);
    for sg in [4, 8, 16, 32, 64] {
        let data: Vec<u32> = (0..128).map(|_| rng.u32() % 4096).collect();
        let r = agree_sg(SUBGROUP_OPS, &data, 2, sg, |_| {})
            .unwrap_or_else(|e| panic!("subgroups of {sg}: {e}"));
        assert!(r.diagnostics.is_empty(), "{sg}: {:?}", r.diagnostics);
        assert_eq!(r.stats.jit_invocations, 128, "subgroups of {sg}");
    }
    // Not under another policy (as on the wide path): the interpreters run it, alike.
    let r = agree_sg(SUBGROUP_OPS, &[5; 128], 2, 16, |o| {
        o.policy = "false-first".parse().expect("a policy");
    })
    .expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
}

#[test]
fn subgroup_operations_after_lanes_part_or_with_findings_are_given_back() {
    // Lanes part before the reduction: the native tier gives the dispatch back (the
    // reduction sees part of the subgroup) ...
    let parted = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = o[i];
    if ((x & 1u) == 0u) { x = subgroupAdd(x); }
    o[i] = x;
}";
    let data: Vec<u32> = (0..64u32).map(|k| k * 7 + 1).collect();
    let r = agree_sg(parted, &data, 1, 16, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    // ... to the wide interpreter, which follows parted lanes.
    assert_eq!(r.stats.wide_invocations, 64);
    // Every lane even: no parting, native code.
    let even: Vec<u32> = (0..64u32).map(|k| k * 2).collect();
    let r = agree_sg(parted, &even, 1, 16, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 64);
    // A broadcast whose Id is not uniform: the reference path's finding.
    let id = "#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = subgroupBroadcast(o[i], gl_SubgroupInvocationID & 1u);
}";
    let r = agree_sg(id, &data, 1, 8, |_| {}).expect("dispatch");
    assert_eq!(r.stats.jit_invocations, 0);
    assert!(!r.diagnostics.is_empty(), "the finding is reported");
}

/// Float bit patterns the vector forms must treat as the reference does: NaNs (quiet and
/// signalling, both signs, payloads), infinities, zeros of both signs, denormals, extremes.
const SPECIAL_F32: [u32; 14] = [
    0x7fc0_0000,
    0xffc0_0001,
    0x7f80_0001,
    0xff80_1234,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x7f7f_ffff,
    0x3f80_0000,
    0x0080_0000,
    0xc2f6_e979,
];

/// Random words, a third of them special floats.
fn float_words(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| match rng.u32() % 3 {
            0 => SPECIAL_F32[rng.u32() as usize % SPECIAL_F32.len()],
            1 => rng.u32(),
            _ => rng.f32().to_bits(),
        })
        .collect()
}

/// Programs whose accesses run along lines (`o[i + c]` of the invocation index `i`): each
/// lockstep group's words move as one checked vector load or store, f32 arithmetic runs as
/// vectors; lines of other steps (`o[2i]`, `o[63 - i]`) and a loop's induction variable
/// started from `i`.
const LINES: [&str; 4] = [
    "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = uintBitsToFloat(o[i]);
    float b = uintBitsToFloat(o[i + 512u]);
    float c = uintBitsToFloat(o[i + 1024u]);
    o[i] = floatBitsToUint(a * b + c);
    o[i + 1536u] = floatBitsToUint((a - c) / b);
}
",
    "#version 450
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 32u;
    uint v = o[2u * i] * 3u + o[2u * i + 1u];
    o[2u * i + 1u] = v ^ (v >> 7);
    o[1023u - i] += 1u;
}
",
    "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    for (uint j = gl_GlobalInvocationID.x; j < 2048u; j += 512u) {
        o[j] = o[j] * 2654435761u + j;
    }
}
",
    "#version 450
layout(local_size_x = 16, local_size_y = 4) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 64u;
    o[i + 1024u] = o[i] + gl_LocalInvocationID.y * 7u + gl_GlobalInvocationID.x;
}
",
];

#[test]
fn words_along_lines_agree_with_the_reference_path() {
    for (k, src) in LINES.iter().enumerate() {
        for seed in 0..3 {
            let words = float_words(2048, 77 + seed + 10 * k as u64);
            for checks in [true, false] {
                let r = agree(src, &words, 8, |o| o.checks = checks)
                    .unwrap_or_else(|e| panic!("program {k}: {e}"));
                assert!(r.diagnostics.is_empty(), "program {k}: {:?}", r.diagnostics);
                let invocations = if k == 1 { 256 } else { 512 };
                assert_eq!(
                    r.stats.jit_invocations, invocations,
                    "program {k} ran natively"
                );
            }
        }
    }
}

#[test]
fn races_along_lines_and_beside_own_elements_are_still_seen() {
    // Each invocation writes its neighbour's word, which the neighbour reads.
    let shifted = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i + 1u] = o[i] + 1u; }
";
    // Own elements, but invocation 5 also writes invocation 6's.
    let beside = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = o[i] + 1u;
    if (i == 5u) { o[6] = 9u; }
}
";
    // gl_GlobalInvocationID.x repeats down the workgroup's rows: the same word written by four.
    let rows = "#version 450
layout(local_size_x = 16, local_size_y = 4) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { o[gl_GlobalInvocationID.x] = gl_LocalInvocationID.y; }
";
    for src in [shifted, beside, rows] {
        let r = agree(src, &[1; 512], 2, |o| o.threads = 1).expect("dispatch");
        assert!(!r.diagnostics.is_empty(), "the race is reported: {src}");
        assert_eq!(r.stats.jit_invocations, 0);
    }
}

/// A program whose only subgroup operations are permutations, which the compiled code does
/// itself (no kernel call): rotates (whole and clustered, deltas held once), a shuffle, a
/// shuffle xor, shuffles up and down, a broadcast — over float data as `rotate_conv` does.
const PERMUTATIONS: &str = "#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_rotate : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float v = uintBitsToFloat(o[i]);
    float acc = 0.0;
    for (uint t = 0u; t < 6u; ++t) {
        acc += float(t + 1u) * subgroupClusteredRotate(v, t, 4u);
        acc -= subgroupRotate(v, t * 3u);
        // Deltas past the cluster, every remainder mod 4 (register rotates by 4q + r); only
        // in subgroups of 16 or more (the test drops lines ending in `// 16+`).
        acc += 0.5 * subgroupClusteredRotate(v, t * 5u, 8u); // 16+
        acc -= 0.25 * subgroupClusteredRotate(v, t * 7u + 1u, 16u); // 16+
    }
    uint u = o[i + 128u];
    uint id = gl_SubgroupInvocationID;
    uint s = subgroupShuffle(u, (id * 5u + 3u) % gl_SubgroupSize)
           + subgroupShuffleXor(u, 1u)
           + subgroupShuffleUp(u, id > 0u ? 1u : 0u)
           + subgroupShuffleDown(u, id + 2u < gl_SubgroupSize ? 2u : 0u)
           + subgroupBroadcast(u, 2u);
    o[i] = floatBitsToUint(acc);
    o[i + 256u] = s;
}
";

#[test]
fn permutations_run_as_compiled_code_at_every_subgroup_size() {
    for sg in [4, 8, 16, 32, 64] {
        let mut data = float_words(128, 5 + u64::from(sg));
        data.extend((0..256u32).map(|k| k.wrapping_mul(2654435761)));
        // Clusters of 8 and 16 are undefined in smaller subgroups.
        let src: String = PERMUTATIONS
            .lines()
            .filter(|l| sg >= 16 || !l.ends_with("// 16+"))
            .map(|l| format!("{l}\n"))
            .collect();
        let r = agree_sg(&src, &data, 2, sg, |_| {})
            .unwrap_or_else(|e| panic!("subgroups of {sg}: {e}"));
        assert!(r.diagnostics.is_empty(), "{sg}: {:?}", r.diagnostics);
        assert_eq!(r.stats.jit_invocations, 128, "subgroups of {sg}");
    }
}

/// Runs `src` with a read-only matrix at binding 0, an output at binding 1 and push constants
/// `push`, natively or on the reference path alone: the output and the report.
fn run_matrix(
    src: &str,
    matrix: &[u32],
    push: &[u32],
    groups: u32,
    fast: bool,
) -> (Vec<u32>, Result<Report, ExecError>) {
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(matrix));
    res.buffers
        .insert((0, 1), u32s(&vec![0; 64 * groups as usize]));
    res.push_constants = u32s(push);
    let options = RunOptions {
        threads: 2,
        wide: fast,
        jit: fast,
        ..RunOptions::default()
    };
    let report = pipeline.dispatch(&mut res, [groups, 1, 1], &options);
    (to_u32s(&res.buffers[&(0, 1)]), report)
}

#[test]
fn columns_with_steps_known_at_run_time_agree_with_the_reference_path() {
    // `dot_gemv`'s access: row r's word k at a[r * words + k], `words` a push constant, so
    // each lane's address is a run-time step from its neighbour's; also a negative step and
    // one whose rows overlap (words = 0).
    let src = "#version 450
#extension GL_EXT_integer_dot_product : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer A { int a[]; };
layout(set = 0, binding = 1, std430) buffer Y { int y[]; };
layout(push_constant) uniform P { uint words; uint back; } p;
void main() {
    uint r = gl_GlobalInvocationID.x;
    int acc = 0;
    for (uint k = 0u; k < 3u; ++k) {
        acc = dotPacked4x8AccSatEXT(a[r * p.words + k], a[k * 7u + 1u], acc);
        acc += a[p.back - r * p.words];
    }
    y[r] = acc;
}
";
    let mut rng = Rng(9);
    let matrix: Vec<u32> = (0..4096).map(|_| rng.u32()).collect();
    for push in [[7u32, 4000], [16, 4095], [0, 100], [5, 3000]] {
        let (fast, r) = run_matrix(src, &matrix, &push, 4, true);
        let (want, w) = run_matrix(src, &matrix, &push, 4, false);
        assert_eq!(fast, want, "push constants {push:?}");
        let (r, w) = (r.expect("dispatch"), w.expect("dispatch"));
        assert_eq!(r.diagnostics, w.diagnostics);
        assert!(r.diagnostics.is_empty());
        assert_eq!(r.stats.jit_invocations, 256, "push constants {push:?}");
    }
    // Rows past the matrix, and a row length past the run-time step bound (2^24, given back
    // before any access): given back, and reported as the reference path reports.
    for push in [[64u32, 4095], [1 << 25, 0]] {
        let (fast, r) = run_matrix(src, &matrix, &push, 4, true);
        let (want, w) = run_matrix(src, &matrix, &push, 4, false);
        assert_eq!(fast, want, "push constants {push:?}");
        let (r, w) = (r.expect("dispatch"), w.expect("dispatch"));
        assert_eq!(r.diagnostics, w.diagnostics);
        assert!(!r.diagnostics.is_empty());
        assert_eq!(r.stats.jit_invocations, 0);
    }
}

/// Runs [`FIXED_ARRAYS`] with `taps` (a push constant) over a tap buffer of `words` words;
/// returns the output and the small buffer, and the report.
fn run_fixed(
    words: usize,
    taps: u32,
    fast: bool,
    checks: bool,
) -> ((Vec<u32>, Vec<u32>), Result<Report, ExecError>) {
    let module = compile(FIXED_ARRAYS);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut rng = Rng(17);
    let mut res = Resources::default();
    res.buffers.insert(
        (0, 0),
        u32s(&(0..words).map(|_| rng.u32()).collect::<Vec<_>>()),
    );
    res.buffers.insert((0, 1), u32s(&[0; 256]));
    res.buffers.insert((0, 2), u32s(&[5; 4]));
    res.push_constants = u32s(&[taps]);
    let options = RunOptions {
        threads: 2,
        wide: fast,
        jit: fast,
        checks,
        ..RunOptions::default()
    };
    let report = pipeline.dispatch(&mut res, [4, 1, 1], &options);
    let out = (
        to_u32s(&res.buffers[&(0, 1)]),
        to_u32s(&res.buffers[&(0, 2)]),
    );
    (out, report)
}

/// Loads and stores through fixed-size arrays of buffers (`wb.w[t]`, `s[i]`), whose reach the
/// native tier checks once on entry instead of at each access.
const FIXED_ARRAYS: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer W { uint head; uint w[16]; } wb;
layout(set = 0, binding = 1, std430) buffer Y { uint y[]; };
layout(set = 0, binding = 2, std430) buffer S { uint s[4]; };
layout(push_constant) uniform P { uint taps; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = i;
    for (uint t = 0u; t < p.taps; ++t) {
        acc = acc * 31u + wb.w[t] + wb.head;
    }
    y[i] = acc;
    if (i < 4u) {
        s[i] = acc;
    }
}
";

#[test]
fn fixed_size_arrays_checked_on_entry_agree_with_the_reference_path() {
    // (tap buffer words, taps, checks, native tier runs it, findings)
    let cases = [
        // The arrays fit their buffers: run natively, with checks and without.
        (17, 16, true, true, false),
        (17, 16, false, true, false),
        (40, 3, true, true, false),
        // The buffer is shorter than the array but the loop stays inside it: given back on
        // entry (the reach is checked for every index), and nothing to report.
        (9, 8, true, false, false),
        // The loop leaves the buffer: reported as the reference path reports it.
        (9, 12, true, false, true),
        // The last word of the array one past the buffer.
        (16, 16, true, false, true),
        // An index past the array (w[16]) inside the buffer: the index finding.
        (40, 18, true, false, true),
    ];
    for (words, taps, checks, native, found) in cases {
        let (fast, r) = run_fixed(words, taps, true, checks);
        let (want, w) = run_fixed(words, taps, false, checks);
        let case = format!("{words} words, {taps} taps, checks {checks}");
        assert_eq!(fast, want, "{case}");
        let (r, w) = (r.expect("dispatch"), w.expect("dispatch"));
        assert_eq!(r.diagnostics, w.diagnostics, "{case}");
        assert_eq!(r.summaries, w.summaries, "{case}");
        assert_eq!(
            !r.diagnostics.is_empty(),
            found,
            "{case}: {:?}",
            r.diagnostics
        );
        assert_eq!(
            r.stats.jit_invocations,
            if native { 256 } else { 0 },
            "{case}"
        );
    }
}
