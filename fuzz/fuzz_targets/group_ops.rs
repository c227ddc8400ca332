//! Fuzz target: programs of subgroup operations under divergence on every tier of the executor
//! (issue 28). The bytes choose a seed, a size (1 to 48 top-level statements) and a subgroup
//! size (4 to 128) for `tangle_oracle::group_ops::program` — rotates, clustered rotates,
//! shuffles, broadcasts, ballots, votes, reductions and scans in nested and sequential
//! branches and loops on uniform, cluster-uniform and data-dependent conditions — which runs on
//! the reference path, the wide interpreter and the native tier
//! (`tangle_oracle::group_ops::run_tiers`): the bound buffers, the findings and the errors must
//! be the same, and the native compile's budget measure (`tangle_exec::jit::budget`) at most
//! its bound. A program that does not compile or validate is a generator bug: it fails too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU64, Ordering};
use tangle_exec::jit::budget::BUDGET;
use tangle_oracle::group_ops::{program, run_tiers, TIERS};

/// Programs run, and of those how many ran as native code (printed now and then).
static RUNS: AtomicU64 = AtomicU64::new(0);
static NATIVE: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let seed = (0..8).fold(0u64, |s, i| s << 8 | u64::from(byte(i)));
    let size = 1 + u32::from(byte(8)) % 48;
    let sg = 4u32 << (byte(9) % 6);
    let src = program(seed, size, sg);
    let tiers = run_tiers(&src, sg).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let reference = &tiers.runs[0].outcome;
    for (run, (name, _, _)) in tiers.runs.iter().zip(TIERS).skip(1) {
        assert_eq!(
            &run.outcome, reference,
            "{name} differs from the reference path (subgroups of {sg})\n{src}"
        );
    }
    assert!(
        tiers.compiles.measure <= BUDGET,
        "compile measure {} past {BUDGET}\n{src}",
        tiers.compiles.measure
    );
    if tiers.runs[2].native_invocations > 0 {
        NATIVE.fetch_add(1, Ordering::Relaxed);
    }
    let runs = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
    if runs.is_power_of_two() && runs >= 64 {
        eprintln!(
            "group_ops: {runs} programs compared, {} run as native code, longest compile {:?}",
            NATIVE.load(Ordering::Relaxed),
            tiers.compiles.longest
        );
    }
});
