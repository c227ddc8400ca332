//! Reconvergence does not depend on the binary order of blocks: SPIR-V assembly (not glslang
//! output) whose merge blocks and continue constructs are listed before the blocks of the
//! construct they close. Each ballot site writes `b[row * 8 + gl_LocalInvocationIndex]`; the
//! expected rows are derived from the spec text in the comments. Subgroup size 8, one workgroup
//! of 8.

use tangle_oracle::execute;
use tangle_oracle::simulate::Slot;
use tangle_spirv::env::TargetEnv;
use tangle_spirv::text::{assemble, AssembleOptions};

/// Assembles `cases/<name>`, runs it and returns `rows` rows of 8 slots.
fn run(name: &str, rows: usize) -> Vec<Slot> {
    let path = format!("{}/tests/cases/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let target_env = TargetEnv::parse("vulkan1.3").unwrap_or(TargetEnv::DEFAULT);
    let options = AssembleOptions { target_env };
    let (module, _) = assemble(&text, &options).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    let (_, slots) = execute(&module, 8, 8, rows).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    slots
}

/// The expected rows: `rows[r][lane]` is the low word of the ballot (the others are 0).
fn check(slots: &[Slot], rows: &[[u32; 8]]) {
    for (r, row) in rows.iter().enumerate() {
        for (lane, &want) in row.iter().enumerate() {
            assert_eq!(
                slots.get(r * 8 + lane).copied(),
                Some([want, 0, 0, 0]),
                "row {r} lane {lane}"
            );
        }
    }
}

/// The merge block comes first in binary order, then the False Label, then the True Label.
/// "T(L) will include all non-escaping invocations in T(M)" at the merge (row 3); the branches
/// hold lanes 0-2 (row 1) and 3-7 (row 2).
#[test]
fn selection_merge_listed_first() {
    let slots = run("selection_merge_listed_first.spvasm", 4);
    let f = 0xff;
    check(
        &slots,
        &[
            [f; 8],
            [7, 7, 7, 0, 0, 0, 0, 0],
            [0, 0, 0, 0xf8, 0xf8, 0xf8, 0xf8, 0xf8],
            [f; 8],
        ],
    );
}

/// Loop of two iterations: the body ballots into row 1 + i, lanes 0 and 1 then break (their
/// break block is listed last); the continue construct holds a selection whose True Label
/// (listed after its merge) ballots the odd lanes into row 3 + i; the loop merge (listed right
/// after the header) ballots into row 5. Iteration 1 runs without lanes 0 and 1 (0xfc); the odd
/// lanes still looping are 3, 5, 7 (0xa8) in both iterations, the continue target holding "all
/// non-escaping invocations in T(M)"; all rejoin at the loop merge.
#[test]
fn loop_blocks_out_of_order() {
    let slots = run("loop_blocks_out_of_order.spvasm", 6);
    let (f, c, a) = (0xff, 0xfc, 0xa8);
    check(
        &slots,
        &[
            [0; 8],
            [f; 8],
            [0, 0, c, c, c, c, c, c],
            [0, 0, 0, a, 0, a, 0, a],
            [0, 0, 0, a, 0, a, 0, a],
            [f; 8],
        ],
    );
}
