//! Programs of subgroup operations under divergence (`tangle_oracle::group_ops`: rotates,
//! clustered rotates, shuffles, broadcasts, ballots, votes, reductions and scans in nested and
//! sequential branches and loops) of growing size, at subgroup sizes 4 to 128, on every tier
//! of the executor: the reference path, the wide interpreter and the native tier must leave the
//! same bytes and report the same findings; and the native compile's budget measure
//! (`tangle_exec::jit::budget`, a count, not a timer) stays under its bound and grows
//! linearly with the program (issue 28: it grew as the cube, and the compile took minutes).

use tangle_exec::jit::budget::BUDGET;
use tangle_oracle::group_ops::{program, run_tiers, TIERS};

#[test]
fn divergent_subgroup_programs_agree_on_every_tier_at_every_subgroup_size() {
    let mut differences = Vec::new();
    let (mut native, mut wide, mut undefined, mut runs) = (0, 0, 0, 0);
    for (k, sg) in [4u32, 8, 16, 32, 64, 128].into_iter().enumerate() {
        for (j, size) in [3u32, 8, 16].into_iter().enumerate() {
            let seed = (k * 3 + j) as u64;
            let src = program(seed, size, sg);
            let tiers = run_tiers(&src, sg).unwrap_or_else(|e| panic!("{e}\n{src}"));
            runs += 1;
            let reference = &tiers.runs[0].outcome;
            for (run, (name, _, _)) in tiers.runs.iter().zip(TIERS).skip(1) {
                if &run.outcome != reference {
                    differences.push(format!(
                        "seed {seed}, size {size}, subgroups of {sg}: {name} differs: {:?} / reference {:?}\n{src}",
                        run.outcome.findings, reference.findings
                    ));
                }
            }
            native += usize::from(tiers.runs[2].native_invocations > 0);
            wide += usize::from(tiers.runs[1].wide_invocations > 0);
            undefined += usize::from(reference.findings.as_ref().is_ok_and(|f| !f.0.is_empty()));
            assert!(
                tiers.compiles.measure <= BUDGET,
                "seed {seed}, size {size}, subgroups of {sg}: measure {}",
                tiers.compiles.measure
            );
        }
    }
    println!(
        "{runs} programs: {wide} on the wide interpreter, {native} as native code, \
         {undefined} with findings"
    );
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    // The fast tiers must really run some (the native tier takes a program whose groups
    // never part before a subgroup operation), and some programs must have findings.
    assert!(
        wide >= 6,
        "only {wide} of {runs} ran on the wide interpreter"
    );
    assert!(native >= 2, "only {native} of {runs} ran as native code");
    assert!(undefined >= 1, "no program had a finding");
}

/// The measure of a program of `n` statements and of one four times as long that starts with
/// the same statements (the generator's statements come one after the other from its seed).
/// Per lowered op it may grow (later statements nest deeper, and the measure is an upper
/// bound of the SSA construction's steps: 2.2× at most on these), but not as the code before
/// issue 28's fix made it: there the shorter program alone measured 994 k (37.5 k now) and the
/// longer one passed the bound.
#[test]
fn the_compile_measure_grows_linearly_with_the_program() {
    // (The native tier takes a program of up to 32 k ops times lanes: at subgroups of 64, about
    // 500 ops.)
    for (seed, sg) in [(28u64, 32u32), (5, 16), (9, 8)] {
        let measure = |n: u32| {
            let src = program(seed, n, sg);
            let tiers = run_tiers(&src, sg).unwrap_or_else(|e| panic!("{e}\n{src}"));
            (tiers.compiles.measure, tiers.ops)
        };
        let (small, small_ops) = measure(10);
        let (large, large_ops) = measure(40);
        println!(
            "seed {seed}, subgroups of {sg}: {small_ops} ops measure {small}, \
             {large_ops} ops measure {large}"
        );
        assert!(small > 0 && large > 0 && large <= BUDGET, "{small} {large}");
        // Per op: the larger program may cost at most three times as much per op as the
        // smaller.
        let per = |m: u64, ops: usize| m as f64 / ops.max(1) as f64;
        assert!(
            per(large, large_ops) <= 3.0 * per(small, small_ops),
            "seed {seed}: {} per op at {large_ops} ops, {} at {small_ops}",
            per(large, large_ops),
            per(small, small_ops)
        );
    }
}
