//! `Report::paths`: why the executor's faster paths left a dispatch to a slower one, in their
//! own words, for speed work (the driver's `TANGLE_TIERS`). A program the native tier runs has
//! no note; one with Workgroup memory has the native tier's refusal (the wide interpreter runs
//! it); a dispatch the native tier
//! gives back at a possible race has its reason; notes never make two reports differ.

mod common;

use common::{compile, u32s};
use tangle_exec::{Device, PathNotes, Profile, Report, Resources, RunOptions, SpecConstants};

/// Runs GLSL `src` with one buffer of `words` zero words at binding 0 over `groups`
/// workgroups, every tier on.
fn run(src: &str, words: usize, groups: u32) -> Report {
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&vec![0; words]));
    let options = RunOptions {
        threads: 2,
        ..RunOptions::default()
    };
    pipeline
        .dispatch(&mut res, [groups, 1, 1], &options)
        .expect("dispatch")
}

#[test]
fn a_program_the_native_tier_runs_has_no_note() {
    let r = run(
        "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i] = i * 3u; }
",
        128,
        2,
    );
    assert_eq!(r.stats.jit_invocations, 128);
    assert!(r.paths.0.is_empty(), "{:?}", r.paths);
}

#[test]
fn workgroup_memory_is_the_native_tiers_reason() {
    let r = run(
        "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
shared uint s[64];
void main() {
    uint i = gl_LocalInvocationID.x;
    s[i] = i;
    barrier();
    o[gl_GlobalInvocationID.x] = s[63u - i];
}
",
        128,
        2,
    );
    assert_eq!(
        (r.stats.jit_invocations, r.stats.wide_invocations),
        (0, 128)
    );
    assert_eq!(
        r.paths.0,
        ["native: not taken: Workgroup memory or barriers (the wide path runs them)"]
    );
}

#[test]
fn a_dispatch_given_back_says_why_and_notes_never_differ_reports() {
    // Invocations 2k and 2k + 1 write the same word.
    let r = run(
        "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { uint i = gl_GlobalInvocationID.x; o[i / 2u] = 1u; }
",
        64,
        1,
    );
    assert_eq!(r.stats.jit_invocations, 0);
    assert!(!r.diagnostics.is_empty(), "the race is reported");
    assert_eq!(r.paths.0, ["native: gave up: a possible data race"]);
    let other = Report {
        paths: PathNotes(vec!["anything".into()]),
        ..r.clone()
    };
    assert_eq!(other, r);
}
