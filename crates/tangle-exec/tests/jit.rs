//! The native tier (`tangle_exec::jit`) end to end: a program it takes runs as native code and
//! gives the reference path's buffers; and it gives a dispatch back, for the reference path to
//! report exactly, for each reason it has: an access out of bounds, a division the sanitizer
//! flags, the step bound, and a possible data race. Each case is compared with the reference
//! path alone (`wide: false`): same buffers, same findings, same error.

mod common;

use common::{compile, to_u32s, u32s};
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
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
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
    let (fast, r) = run(src, buffer, groups, true, tweak);
    let (reference, want) = run(src, buffer, groups, false, tweak);
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
