//! CI run of the random-program oracle: 1,200 programs (200 per subgroup size 4, 8, 16, 32, 64
//! and 128, nesting depths 2..=6 in turn, workgroups that leave the last subgroup partial), each
//! run through glslang and tangle-exec and compared slot by slot with the independent simulator.
//! A mismatch prints the seed, the program and the first differing slot. The long run is
//! `cargo run -p tangle-oracle --release --bin oracle` (100,000 programs).

use tangle_oracle::{case_program, partial_workgroup, run_case};

const PER_SIZE: u64 = 200;

/// Runs the cases of one subgroup size; checks that they exercise divergence.
fn run_size(subgroup_size: u32) {
    let mut failures = Vec::new();
    let (mut ballots, mut partial) = (0usize, 0usize);
    for i in 0..PER_SIZE {
        let seed = u64::from(subgroup_size) * 1_000_000 + i;
        let depth = 2 + (i % 5) as u32;
        let wg = partial_workgroup(seed, subgroup_size);
        assert!(
            !wg.is_multiple_of(subgroup_size),
            "workgroup {wg} fills its subgroups"
        );
        if let Ok((_, expected)) = case_program(seed, depth, subgroup_size, wg) {
            for slot in expected.iter().flatten() {
                if slot[0] < 0x10000 {
                    ballots += 1;
                    let bits: u32 = slot.iter().map(|w| w.count_ones()).sum();
                    partial += usize::from(bits < subgroup_size.min(wg));
                }
            }
        }
        if let Err(m) = run_case(seed, depth, subgroup_size, wg) {
            if failures.is_empty() {
                eprintln!("{m}");
            }
            failures.push((seed, depth, wg));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {PER_SIZE} programs differ (seed, depth, workgroup): {failures:?}",
        failures.len()
    );
    // The programs must actually diverge: most recorded ballots are of split tangles.
    assert!(
        ballots > 1000 && partial * 3 > ballots,
        "{partial} partial ballots of {ballots}"
    );
}

#[test]
fn subgroup_4() {
    run_size(4);
}

#[test]
fn subgroup_8() {
    run_size(8);
}

#[test]
fn subgroup_16() {
    run_size(16);
}

#[test]
fn subgroup_32() {
    run_size(32);
}

#[test]
fn subgroup_64() {
    run_size(64);
}

#[test]
fn subgroup_128() {
    run_size(128);
}
