//! Hand-written programs for each related-instance rule and each escape kind of
//! SPV_KHR_maximal_reconvergence, with the expected ballots derived by hand from the spec text
//! (quoted in the comments), not from the simulator.
//!
//! `B` records `subgroupBallot(true)` in the invocation's next slot; `LANE` is
//! `gl_SubgroupInvocationID`. Each test lists the ballots in an order consistent with every
//! invocation's program order, as masks over `gl_LocalInvocationIndex`; a mask is split per
//! subgroup into the values each of its invocations must read.

use tangle_oracle::simulate::{ballot_value, Expected};
use tangle_oracle::{compile, diff, execute, glsl};

/// Runs `src` (functions and `main`) on one workgroup of `wg` invocations with subgroups of `sg`
/// and checks every slot and slot count against `masks`.
fn check(src: &str, sg: u32, wg: u32, masks: &[u128]) {
    let text = format!(
        "{}#define LANE gl_SubgroupInvocationID\n#define B outputB.b[outputC.loc[gl_LocalInvocationIndex]++ * {wg}u + gl_LocalInvocationIndex] = subgroupBallot(true)\n{src}",
        glsl::prelude(wg)
    );
    let mut expected: Expected = vec![Vec::new(); wg as usize];
    for &m in masks {
        for first in (0..wg).step_by(sg as usize) {
            let lanes = (wg - first).min(sg);
            let sub = (m >> first) & ((1u128 << lanes) - 1);
            for l in 0..lanes {
                if sub >> l & 1 == 1 {
                    expected[(first + l) as usize].push(ballot_value(sub));
                }
            }
        }
    }
    let module = compile(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let rows = expected.iter().map(Vec::len).max().unwrap_or(0) + 1;
    let (counts, slots) = execute(&module, sg, wg, rows).unwrap_or_else(|e| panic!("{e:?}"));
    if let Some(f) = diff(&expected, &counts, &slots, rows) {
        panic!("{f:?}\n{text}");
    }
}

/// Initial state: "T(F) will be converged". OpBranchConditional: "All the invocations in T(I) for
/// whom Condition evaluates to true are members of the tangle that executes True Label and the
/// rest are in the tangle that executes False Label." Selection merge: "T(L) will include all
/// non-escaping invocations in T(M)", also for a nested selection inside the else part (0xf8,
/// not 0xff).
#[test]
fn selection_merge() {
    let src = "void main() [[maximally_reconverges]] {
        B;                                      // 0xff
        if (LANE < 3u) { B; }                   // 0x07
        else { B; if (LANE == 7u) { B; } B; }   // 0xf8, 0x80, 0xf8
        B;                                      // 0xff
    }";
    check(src, 8, 8, &[0xff, 0x07, 0xf8, 0x80, 0xf8, 0xff]);
}

/// A `break` is an escape ("branch to the Merge Block ... for a merge instruction instance that
/// strictly dominates I"): lane 0 is not in the tangle of the inner selection merge, but rejoins
/// at the loop merge.
#[test]
fn selection_merge_minus_break_escape() {
    let src = "void main() [[maximally_reconverges]] {
        for (int i = 0; i < 2; i++) {
            if (LANE < 4u) {
                B;                              // 0x0f, then 0x0e
                if (LANE == 0u) { break; }
                B;                              // 0x0e
            }
            B;                                  // 0xfe: lane 0 escaped
        }
        B;                                      // 0xff: loop merge
    }";
    check(src, 8, 8, &[0x0f, 0x0e, 0xfe, 0x0e, 0x0e, 0xfe, 0xff]);
}

/// Loop merge: "M is the last execution of the OpLoopMerge where i did not enter the basic block
/// via the loop backedge", "T(L) will include all non-escaping invocations in T(M)": the lanes
/// that entered the loop together (0x3f) rejoin after their different trip counts, and lanes 6
/// and 7, which never entered it, do not join them there.
#[test]
fn loop_merge_for_invocations_that_entered_together() {
    let src = "void main() [[maximally_reconverges]] {
        if (LANE < 6u) {
            for (int i = 0; i < int(LANE % 3u) + 1; i++) { B; }   // 0x3f, 0x36, 0x24
            B;                                                     // 0x3f
        } else {
            B;                                                     // 0xc0
        }
        B;                                                         // 0xff
    }";
    check(src, 8, 8, &[0x3f, 0x36, 0x24, 0x3f, 0xc0, 0xff]);
}

/// Two instances of the inner loop, entered in different outer iterations, are different loop
/// merge relations: the even lanes and the odd lanes never share a tangle inside the outer loop.
#[test]
fn loop_merge_per_loop_instance() {
    let src = "void main() [[maximally_reconverges]] {
        for (int j = 0; j < 2; j++) {
            if (LANE % 2u == uint(j)) {
                for (int i = 0; i < 2; i++) { B; }   // j = 0: 0x55 twice; j = 1: 0xaa twice
                B;                                    // 0x55 / 0xaa
            }
        }
        B;                                            // 0xff
    }";
    check(src, 8, 8, &[0x55, 0x55, 0x55, 0xaa, 0xaa, 0xaa, 0xff]);
}

/// Continue target: "M is the last execution of the OpLoopMerge before executing L",
/// "T(L) will include all non-escaping invocations in T(M)": lanes that `continue` and lanes
/// that fall through rejoin in the continue construct of the same iteration (the ballot after
/// `i++`); lane 0, which breaks in iteration 1, escapes it.
#[test]
fn continue_target_for_the_same_iteration() {
    let src = "void main() [[maximally_reconverges]] {
        for (int i = 0; i < 3; i++, B) {             // continue construct: 0xff, 0xfe, 0xfe
            if (LANE % 2u == 1u) { B; continue; }    // 0xaa
            B;                                       // 0x55, 0x55, 0x54
            if (i == 1) { if (LANE == 0u) { break; } }
        }
        B;                                           // 0xff
    }";
    check(
        src,
        8,
        8,
        &[0xaa, 0x55, 0xff, 0xaa, 0x55, 0xfe, 0xaa, 0x54, 0xfe, 0xff],
    );
}

/// `continue` in a do-while goes to the continue target (the condition); the lanes rejoin there,
/// so the next iteration starts converged ("at the beginning of each iteration of the loop,
/// invocations that entered the loop together and are continuing to the execute the loop will
/// be converged").
#[test]
fn do_while_continue_reconverges() {
    let src = "void main() [[maximally_reconverges]] {
        int i = 0;
        do {
            B;                                       // 0xff
            if (LANE < 4u) { B; continue; }          // 0x0f
            B;                                       // 0xf0
        } while (++i < 2);
        B;                                           // 0xff
    }";
    check(src, 8, 8, &[0xff, 0x0f, 0xf0, 0xff, 0x0f, 0xf0, 0xff]);
}

/// "The instructions in a break block will execute as if they were still diverged according to
/// the loop iteration": lanes that break in different iterations run the break block apart.
#[test]
fn break_blocks_diverged_per_iteration() {
    let src = "void main() [[maximally_reconverges]] {
        for (int i = 0; i < 4; i++) {
            if ((LANE & 3u) == uint(i)) { B; break; }   // 0x11 << i
        }
        B;                                               // 0xff
    }";
    check(src, 8, 8, &[0x11, 0x22, 0x44, 0x88, 0xff]);
}

/// An infinite loop with an elect-guarded exit: OpGroupNonUniformElect is true in "the active
/// invocation with the lowest id"; one lane leaves per iteration, the others stay tangled.
#[test]
fn infinite_loop_with_elect_exit() {
    let src = "void main() [[maximally_reconverges]] {
        for (;;) {
            B;                                   // 0xff << k
            if (subgroupElect()) { B; break; }   // 1 << k
        }
        B;                                       // 0xff
    }";
    let mut masks: Vec<u128> = (0..8).flat_map(|k| [(0xff << k) & 0xff, 1 << k]).collect();
    masks.push(0xff);
    check(src, 8, 8, &masks);
}

/// OpSwitch: "Invocations in T(I) with the same Selector value will be partitioned into the same
/// tangle, executing the associated case construct"; the switch merge is a selection merge.
#[test]
fn switch_targets_by_selector() {
    let src = "void main() [[maximally_reconverges]] {
        switch (LANE % 3u) {
            case 0u: { B; break; }   // 0x49
            case 1u: { B; break; }   // 0x92
            default: { B; break; }   // 0x24
        }
        B;                           // 0xff
    }";
    check(src, 8, 8, &[0x49, 0x92, 0x24, 0xff]);
}

/// A uniform switch keeps the tangle whole; a `break` inside a nested `if` of a case escapes the
/// nested selection merge and rejoins at the switch merge.
#[test]
fn switch_break_escape() {
    let src = "void main() [[maximally_reconverges]] {
        switch (inputA.a[2]) {
            case 1u: { B; break; }
            case 2u: { B; if (LANE < 2u) { B; break; } B; break; }   // 0xff, 0x03, 0xfc
        }
        B;                                                            // 0xff
    }";
    check(src, 8, 8, &[0xff, 0x03, 0xfc, 0xff]);
}

/// After OpFunctionCall: "T(I) will include all non-escaping invocations in T(FC)"; returning
/// "only affects relations in the current function", so lanes 0 and 1 rejoin after the call.
#[test]
fn function_call_return_rejoins_after_call() {
    let src = "void f() {
        B;                                  // 0x3f: the caller's tangle
        if (LANE < 2u) { B; return; }       // 0x03
        B;                                  // 0x3c
    }
    void main() [[maximally_reconverges]] {
        if (LANE < 6u) { f(); B; }          // 0x3f
        else { B; }                         // 0xc0
        B;                                  // 0xff
    }";
    check(src, 8, 8, &[0x3f, 0x03, 0x3c, 0x3f, 0xc0, 0xff]);
}

/// A return inside a loop of the callee escapes the loop merge (a relation in the current
/// function) but not the call's.
#[test]
fn return_inside_loop_escapes_loop_merge() {
    let src = "void g() {
        for (int i = 0; i < 3; i++) {
            B;                                   // 0xff, 0xfe, 0xfc
            if (LANE == uint(i)) { return; }
        }
        B;                                       // 0xf8
    }
    void main() [[maximally_reconverges]] {
        g();
        B;                                       // 0xff
    }";
    check(src, 8, 8, &[0xff, 0xfe, 0xfc, 0xf8, 0xff]);
}

/// An elect-guarded return from an infinite loop in a callee: one lane of the caller's tangle
/// returns per iteration; all rejoin after the call.
#[test]
fn elect_guarded_return_from_infinite_loop() {
    let src = "void h() {
        for (;;) {
            if (subgroupElect()) { B; return; }   // 0x10, 0x20, 0x40, 0x80
        }
    }
    void main() [[maximally_reconverges]] {
        if (LANE >= 4u) { h(); B; }               // 0xf0
        B;                                        // 0xff
    }";
    check(src, 8, 8, &[0x10, 0x20, 0x40, 0x80, 0xf0, 0xff]);
}

/// A return from `main` ends the invocation: it is in no later tangle.
#[test]
fn return_from_main() {
    let src = "void main() [[maximally_reconverges]] {
        B;                                // 0xff
        if (LANE >= 5u) { B; return; }    // 0xe0
        B;                                // 0x1f
    }";
    check(src, 8, 8, &[0xff, 0xe0, 0x1f]);
}

/// Inner `break` and `continue` rejoin at the inner loop merge, and the outer loop's next
/// iteration starts converged.
#[test]
fn nested_loops_break_and_continue() {
    let src = "void main() [[maximally_reconverges]] {
        for (int j = 0; j < 2; j++) {
            B;                                         // 0xff
            for (int i = 0; i < 2; i++) {
                if (LANE < 2u) { break; }
                if (LANE >= 6u) { continue; }
                B;                                     // 0x3c
            }
            B;                                         // 0xff
        }
        B;                                             // 0xff
    }";
    check(
        src,
        8,
        8,
        &[0xff, 0x3c, 0x3c, 0xff, 0xff, 0x3c, 0x3c, 0xff, 0xff],
    );
}

/// A workgroup of 13 with subgroups of 8: the second subgroup has 5 lanes; ballots never show
/// lanes that do not exist, and subgroups never share a tangle.
#[test]
fn partial_subgroup() {
    let src = "void main() [[maximally_reconverges]] {
        B;                                                   // 0xff | 0x1f
        if (gl_LocalInvocationIndex % 2u == 0u) { B; }       // 0x55 | 0x15
        B;                                                   // 0xff | 0x1f
    }";
    check(src, 8, 13, &[0x1fff, 0x1555, 0x1fff]);
}
