//! The executor's wide path (`docs/executor.md`) against its reference path on 120 of the oracle's
//! random structured programs: loops, breaks, continues, switches and selections nested to depth
//! 6, with every lane taking its own way. The oracle's ballots would keep the wide path out (it
//! takes no subgroup operation), so each slot records the invocation instead; what is compared
//! is every byte both paths leave in the buffers: which slots each invocation wrote, in which
//! order, and its slot count.

use tangle_oracle::{case_program, compile, execute_on, glsl, partial_workgroup};

#[test]
fn random_programs_give_the_same_buffers_on_both_paths() {
    let (mut taken, mut runs) = (0, 0);
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
        let wide = execute_on(&module, 32, wg, rows, true);
        let reference = execute_on(&module, 32, wg, rows, false);
        runs += 1;
        match (wide, reference) {
            (Ok((c1, s1, n)), Ok((c2, s2, _))) => {
                taken += usize::from(n > 0);
                if c1 != c2 || s1 != s2 {
                    differences.push(format!("seed {seed}: buffers differ\n{text}"));
                }
            }
            (w, r) => differences.push(format!(
                "seed {seed}: wide {:?} / reference {:?}",
                w.err(),
                r.err()
            )),
        }
    }
    println!("{runs} programs, {taken} on the wide path");
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
    assert!(runs >= 100, "only {runs} programs ran");
    // Programs with function calls or `subgroupElect` conditions stay on the reference path
    // (about seven in eight); the others, 15 of these 120, must take the wide one.
    assert!(taken >= 12, "only {taken} of {runs} took the wide path");
}
