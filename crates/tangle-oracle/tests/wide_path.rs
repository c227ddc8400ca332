//! The executor's fast paths (`docs/executor.md`) on the oracle's random structured programs:
//! loops, breaks, continues, switches and selections nested to depth 6, with every lane taking
//! its own way.
//! * Against the reference path, in workgroups with a partial last subgroup (where the wide
//!   path takes no subgroup operation), each slot recording the invocation instead of a ballot:
//!   every byte the wide interpreter, the native tier and the reference path leave in the
//!   buffers is compared.
//! * With the ballots, in workgroups of whole subgroups (where the wide path runs them):
//!   against the independent simulator, slot by slot.

use tangle_oracle::{case_program, compile, diff, execute_on, glsl, partial_workgroup, Path};

#[test]
fn random_programs_give_the_same_buffers_on_every_path() {
    let (mut taken, mut native, mut runs) = (0, 0, 0);
    let mut differences = Vec::new();
    for seed in 0..120u64 {
        let depth = 2 + (seed % 5) as u32;
        // Up to 200 invocations: two batches of the wide path, the second partial.
        let wg = partial_workgroup(seed, 128).max(130);
        let Ok((program, expected)) = case_program(seed, depth, 32, wg) else {
            continue;
        };
        let text = glsl::emit(&program, wg).replace(
            "subgroupBallot(true)",
            "uvec4(gl_LocalInvocationIndex, 1u, 2u, 3u)",
        );
        let module = compile(&text).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{text}"));
        let rows = expected.iter().map(Vec::len).max().unwrap_or(0) + 1;
        let reference = execute_on(&module, 32, wg, rows, Path::Reference);
        runs += 1;
        for path in [Path::Wide, Path::Native] {
            match (execute_on(&module, 32, wg, rows, path), &reference) {
                (Ok((c1, s1, n)), Ok((c2, s2, _))) => {
                    match path {
                        Path::Native => native += usize::from(n > 0),
                        _ => taken += usize::from(n > 0),
                    }
                    if &c1 != c2 || &s1 != s2 {
                        differences.push(format!("seed {seed}: {path:?}: buffers differ\n{text}"));
                    }
                }
                (w, r) => differences.push(format!(
                    "seed {seed}: {path:?} {:?} / reference {:?}",
                    w.err(),
                    r.as_ref().err()
                )),
            }
        }
    }
    println!("{runs} programs, {taken} on the wide interpreter, {native} as native code");
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    assert!(runs >= 100, "only {runs} programs ran");
    // Programs calling `testBit` (glslang passes its parameters as pointers of Function
    // variables) or with `subgroupElect` conditions stay on the reference path; the others,
    // 19 of these 120 (15 before calls were inlined, `lower/inline.rs`), take the wide one.
    assert!(taken >= 16, "only {taken} of {runs} took the wide path");
    // The native tier takes what the wide interpreter takes here (no subgroup operations).
    assert!(
        native >= taken,
        "only {native} of {runs} ran as native code"
    );
}

/// The oracle's programs with their ballots (and `subgroupElect` conditions), in workgroups of
/// whole subgroups, so the wide path takes them with their subgroup operations: every slot must
/// be the independent simulator's, at subgroup sizes 4 to 128 (calls of the programs' own
/// functions are inlined for the fast tiers, `lower/inline.rs`, so their reconvergence after
/// calls is checked here too; those calling `testBit`, whose parameters glslang passes as
/// pointers, stay on the reference path).
#[test]
fn random_programs_with_ballots_match_the_simulator_on_the_wide_path() {
    let (mut taken, mut runs) = (0, 0);
    let mut differences = Vec::new();
    for seed in 0..96u64 {
        let depth = 2 + (seed % 5) as u32;
        let sg = 4u32 << (seed % 6);
        // Whole subgroups, at least 32 invocations (the wide path's floor), at most 256.
        let wg = (sg * (1 + (seed / 6 % 4) as u32)).clamp(32.max(sg), 256);
        let Ok((program, expected)) = case_program(seed, depth, sg, wg) else {
            continue;
        };
        let text = glsl::emit(&program, wg);
        let module = compile(&text).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{text}"));
        let rows = expected.iter().map(Vec::len).max().unwrap_or(0) + 1;
        runs += 1;
        match execute_on(&module, sg, wg, rows, Path::Wide) {
            Ok((counts, slots, n)) => {
                taken += usize::from(n > 0);
                if let Some(f) = diff(&expected, &counts, &slots, rows) {
                    differences.push(format!("seed {seed} (sg {sg}, wg {wg}): {f:?}\n{text}"));
                }
            }
            Err(e) => differences.push(format!("seed {seed} (sg {sg}, wg {wg}): {e:?}")),
        }
    }
    println!("{runs} programs with ballots, {taken} on the wide path");
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    assert!(runs >= 80, "only {runs} programs ran");
    // Every program records ballots, so each one taken ran subgroup operations on the wide
    // path: 22 of these 96 (16 before calls were inlined).
    assert!(taken >= 18, "only {taken} of {runs} took the wide path");
}
