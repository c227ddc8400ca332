//! The race check's bounds: past `RunOptions::race_log_limit` accesses it is cut short, and the
//! report says where instead of passing silently as if every access had been checked.

mod common;

use common::{compile, u32s};
use tangle_exec::{Device, Profile, Report, Resources, RunOptions, SpecConstants};

/// Runs `src` over `groups` workgroups with a 256-word buffer and the given race-log limit, on
/// the reference path: the wide path logs whole runs of a batch, so these programs fit its log
/// and are checked in full there (see `the_wide_path_checks_them_in_full`).
fn run(src: &str, groups: u32, limit: usize, threads: usize) -> Report {
    run_on(src, groups, limit, threads, false)
}

fn run_on(src: &str, groups: u32, limit: usize, threads: usize, wide: bool) -> Report {
    let module = compile(src);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), u32s(&[0; 256]));
    let options = RunOptions {
        threads,
        race_log_limit: limit,
        wide,
        ..RunOptions::default()
    };
    pipeline
        .dispatch(&mut res, [groups, 1, 1], &options)
        .expect("dispatch")
}

/// Each invocation writes its own word 8 times: no race, 64 × 8 distinct logged accesses.
const BUSY: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    for (uint k = 0; k < 8; k++) {
        o[i] = k;
        o[i] += 1;
    }
}
";

#[test]
fn a_full_log_is_reported_where_it_filled() {
    for threads in [1, 3] {
        let r = run(BUSY, 2, 100, threads);
        let cut = r.race_cut_short.as_ref().expect("the check was cut short");
        assert_eq!(
            cut.workgroup,
            [0, 0, 0],
            "the earliest workgroup, whatever the threads"
        );
        assert_eq!(cut.limit, 100);
        let at = cut.at.as_ref().expect("an instruction");
        assert!(at.name.starts_with("Op"), "{at:?}");
        let text = cut.to_string();
        assert!(
            text.contains("cut short") && text.contains("(0, 0, 0)"),
            "{text}"
        );
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    }
    // Under the default limit nothing is cut.
    let r = run(BUSY, 2, RunOptions::default().race_log_limit, 1);
    assert_eq!(r.race_cut_short, None);
}

#[test]
fn the_check_between_workgroups_says_when_it_stops() {
    // Each workgroup's accesses merge into runs; 40 workgroups of distinct words exceed a
    // limit of 10 runs between workgroups while no single log does.
    let src = "#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void main() { o[gl_WorkGroupID.x * 4] = 1; }
";
    let r = run(src, 40, 10, 1);
    let cut = r.race_cut_short.expect("cut short between workgroups");
    assert_eq!(cut.at, None);
    assert!(cut.to_string().contains("between workgroups"));
}

#[test]
fn the_wide_path_checks_them_in_full() {
    // One log entry per batch and store: far under the limit, so nothing is cut short.
    let r = run_on(BUSY, 2, 100, 1, true);
    assert_eq!(r.stats.wide_invocations, 128);
    assert_eq!(r.race_cut_short, None);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}
