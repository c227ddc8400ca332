//! tangle-oracle: a random-program oracle for SPV_KHR_maximal_reconvergence.
//!
//! [`generate`] builds a seeded random structured [`program::Program`], [`glsl`] prints it as a
//! compute shader with `[[maximally_reconverges]]`, glslang compiles it, tangle-exec runs it, and
//! [`simulate`] computes the expected per-invocation slots independently. [`run_case`] diffs the
//! two. The design follows the Vulkan CTS `reconvergence.maximal` tests
//! (`shared/notes/cts-tests.md` §1). [`group_ops`] generates programs of subgroup operations
//! under divergence and runs them on every tier of the executor.

pub mod generate;
pub mod glsl;
pub mod group_ops;
pub mod program;
pub mod simulate;

use simulate::Slot;
use std::fmt;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

/// The most slots a case may write (all invocations together); bigger programs are regenerated.
const SLOT_BUDGET: usize = 24_000;

/// Entries of the input buffer `inputA.a[i] = i`.
const INPUT_LEN: u32 = 16;

/// Why a case failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// glslang rejected the program (a generator or emitter bug).
    Compile(String),
    /// The module did not parse.
    Read(String),
    /// tangle's validator rejected the module glslang produced.
    Invalid(String),
    /// tangle-exec refused the pipeline or the dispatch.
    Exec(String),
    /// The simulator failed (a generator bug).
    Simulate(String),
    /// An invocation wrote a different number of slots than expected.
    Count {
        invocation: u32,
        expected: usize,
        actual: u32,
    },
    /// A slot differs.
    Slot {
        invocation: u32,
        slot: usize,
        expected: Slot,
        actual: Slot,
    },
}

/// A failed case: the configuration, the program and the first difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The seed.
    pub seed: u64,
    /// The nesting depth.
    pub depth: u32,
    /// The subgroup size.
    pub subgroup_size: u32,
    /// The workgroup size.
    pub workgroup_size: u32,
    /// The GLSL source of the program.
    pub glsl: String,
    /// The first difference.
    pub failure: Failure,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "seed {} depth {} subgroup size {} workgroup size {}: {:?}",
            self.seed, self.depth, self.subgroup_size, self.workgroup_size, self.failure
        )?;
        write!(f, "{}", self.glsl)
    }
}

impl std::error::Error for Mismatch {}

/// The program of a case: the generated program for `seed`, regenerated from derived seeds while
/// it would write more than the slot budget. Returns it with its expected slots.
pub fn case_program(
    seed: u64,
    depth: u32,
    subgroup_size: u32,
    workgroup_size: u32,
) -> Result<(program::Program, simulate::Expected), String> {
    let mut last = String::new();
    for attempt in 0..64u64 {
        let p = generate::generate(
            seed.wrapping_add(attempt.wrapping_mul(0x1_0000_0000)),
            depth,
        );
        match simulate::simulate(&p, subgroup_size, workgroup_size, SLOT_BUDGET) {
            Ok(e) => return Ok((p, e)),
            Err(simulate::SimError::SlotBudget(_)) => last = "slot budget".to_string(),
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!("no program within budget ({last})"))
}

/// Compiles GLSL compute source to a module (Vulkan 1.3, SPIR-V 1.6).
pub fn compile(src: &str) -> Result<tangle_spirv::Module, Failure> {
    // The project's one GLSL front end (glslang), shared with the Amber runner.
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3")
        .ok_or_else(|| Failure::Compile("unknown environment".to_string()))?;
    let words = tangle_amber::compile::glsl(src, env).map_err(Failure::Compile)?;
    tangle_spirv::binary::read(&words).map_err(|e| Failure::Compile(e.to_string()))
}

/// Runs a compiled program on one workgroup of `workgroup_size` invocations with subgroups of
/// `subgroup_size`; returns the slot counters and the slots of `rows` rows.
pub fn execute(
    module: &tangle_spirv::Module,
    subgroup_size: u32,
    workgroup_size: u32,
    rows: usize,
) -> Result<(Vec<u32>, Vec<Slot>), Failure> {
    execute_on(module, subgroup_size, workgroup_size, rows, Path::Native).map(|(c, s, _)| (c, s))
}

/// Which of the executor's paths a dispatch may take (`docs/executor.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// The reference path alone.
    Reference,
    /// The wide interpreter, else the reference path.
    Wide,
    /// The native tier, else the wide interpreter, else the reference path (the default).
    Native,
}

/// [`execute`] on the given `path`; also returns how many invocations ran on that path (the
/// wide interpreter's, or the native tier's; 0 for the reference path).
pub fn execute_on(
    module: &tangle_spirv::Module,
    subgroup_size: u32,
    workgroup_size: u32,
    rows: usize,
    path: Path,
) -> Result<(Vec<u32>, Vec<Slot>, u64), Failure> {
    let profile = Profile::default()
        .with_subgroup_size(subgroup_size)
        .ok_or_else(|| Failure::Exec("subgroup size".to_string()))?;
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3")
        .ok_or_else(|| Failure::Invalid("unknown environment".to_string()))?;
    let valid = tangle_validate::validate(module, env, &Default::default()).map_err(|found| {
        let text: Vec<String> = found
            .iter()
            .map(|d| d.render(module, "<oracle>", None))
            .collect();
        Failure::Invalid(text.join("\n"))
    })?;
    let pipeline = Device::new(profile)
        .compute_pipeline(&valid, "main", &SpecConstants::new())
        .map_err(|e| Failure::Exec(e.to_string()))?;
    let n = workgroup_size as usize;
    let mut res = Resources::default();
    res.buffers
        .insert((0, 0), (0..INPUT_LEN).flat_map(u32::to_le_bytes).collect());
    res.buffers.insert((0, 1), vec![0; rows * n * 16]);
    res.buffers.insert((0, 2), vec![0; n * 4]);
    let options = RunOptions {
        threads: 1,
        step_limit: 10_000_000,
        wide: path != Path::Reference,
        jit: path == Path::Native,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &options)
        .map_err(|e| Failure::Exec(e.to_string()))?;
    // The programs are free of undefined behaviour: a finding is a false positive of the
    // sanitizer (races, uninitialised values, barriers).
    if let Some(d) = report.diagnostics.first() {
        return Err(Failure::Exec(format!("sanitizer finding: {d}")));
    }
    let words = |b: Option<&Vec<u8>>| -> Vec<u32> {
        b.map(|b| {
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default()
    };
    let counts = words(res.buffers.get(&(0, 2)));
    let slots = words(res.buffers.get(&(0, 1)))
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let taken = match path {
        Path::Reference => 0,
        Path::Wide => report.stats.wide_invocations,
        Path::Native => report.stats.jit_invocations,
    };
    Ok((counts, slots, taken))
}

/// The first difference between the expected slots and what the executor wrote.
pub fn diff(
    expected: &simulate::Expected,
    counts: &[u32],
    slots: &[Slot],
    rows: usize,
) -> Option<Failure> {
    let n = expected.len();
    for row in 0..rows {
        for (id, exp) in expected.iter().enumerate() {
            let want = exp.get(row).copied().unwrap_or([0; 4]);
            let got = slots.get(row * n + id).copied().unwrap_or([!0; 4]);
            if want != got {
                return Some(Failure::Slot {
                    invocation: id as u32,
                    slot: row,
                    expected: want,
                    actual: got,
                });
            }
        }
    }
    for (id, exp) in expected.iter().enumerate() {
        let got = counts.get(id).copied().unwrap_or(u32::MAX);
        if got as usize != exp.len() {
            return Some(Failure::Count {
                invocation: id as u32,
                expected: exp.len(),
                actual: got,
            });
        }
    }
    None
}

/// Generates the program of `seed`, runs it through tangle-exec on one workgroup of
/// `workgroup_size` invocations with subgroups of `subgroup_size`, and compares every slot with
/// the simulator's.
pub fn run_case(
    seed: u64,
    depth: u32,
    subgroup_size: u32,
    workgroup_size: u32,
) -> Result<(), Mismatch> {
    let fail = |glsl: String, failure| Mismatch {
        seed,
        depth,
        subgroup_size,
        workgroup_size,
        glsl,
        failure,
    };
    let (program, expected) = case_program(seed, depth, subgroup_size, workgroup_size)
        .map_err(|e| fail(String::new(), Failure::Simulate(e)))?;
    let glsl = glsl::emit(&program, workgroup_size);
    let module = compile(&glsl).map_err(|e| fail(glsl.clone(), e))?;
    // One extra row catches writes past the expected ones.
    let rows = expected.iter().map(Vec::len).max().unwrap_or(0) + 1;
    let (counts, slots) =
        execute(&module, subgroup_size, workgroup_size, rows).map_err(|e| fail(glsl.clone(), e))?;
    match diff(&expected, &counts, &slots, rows) {
        None => Ok(()),
        Some(f) => Err(fail(glsl, f)),
    }
}

/// The configuration of case number `seed` in the CI and long runs: depth 2..=6, subgroup size
/// 4..=128 and a workgroup size that leaves the last subgroup partial (at most 2.5 subgroups,
/// at most 200 invocations).
pub fn case_config(seed: u64) -> (u32, u32, u32) {
    let depth = 2 + (seed % 5) as u32;
    let sg = 4u32 << ((seed / 5) % 6);
    (depth, sg, partial_workgroup(seed, sg))
}

/// A workgroup size in 1..=min(2.5 subgroups, 200) that is not a multiple of `subgroup_size`,
/// drawn from `seed`: the last subgroup is partial.
pub fn partial_workgroup(seed: u64, subgroup_size: u32) -> u32 {
    let mut r = generate::Rng::new(seed.wrapping_mul(31).wrapping_add(7));
    let max = (subgroup_size * 5 / 2).min(200);
    let wg = 1 + r.below(max);
    if wg.is_multiple_of(subgroup_size) {
        wg - 1
    } else {
        wg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_finds_the_first_difference() {
        let expected = vec![vec![[1, 0, 0, 0], [3, 0, 0, 0]], vec![[1, 0, 0, 0]]];
        // Row-major: b[row * 2 + id].
        let good = [
            [1, 0, 0, 0],
            [1, 0, 0, 0],
            [3, 0, 0, 0],
            [0; 4],
            [0; 4],
            [0; 4],
        ];
        assert_eq!(diff(&expected, &[2, 1], &good, 3), None);
        let mut bad = good;
        bad[2][1] = 1;
        assert_eq!(
            diff(&expected, &[2, 1], &bad, 3),
            Some(Failure::Slot {
                invocation: 0,
                slot: 1,
                expected: [3, 0, 0, 0],
                actual: [3, 1, 0, 0]
            })
        );
        let mut extra = good;
        extra[3] = [9, 0, 0, 0];
        assert!(matches!(
            diff(&expected, &[2, 2], &extra, 3),
            Some(Failure::Slot {
                invocation: 1,
                slot: 1,
                ..
            })
        ));
        assert_eq!(
            diff(&expected, &[2, 2], &good, 3),
            Some(Failure::Count {
                invocation: 1,
                expected: 1,
                actual: 2
            })
        );
    }

    #[test]
    fn generation_is_deterministic_and_configs_leave_partial_subgroups() {
        assert_eq!(generate::generate(42, 4), generate::generate(42, 4));
        assert_ne!(generate::generate(42, 4), generate::generate(43, 4));
        for seed in 0..600 {
            let (depth, sg, wg) = case_config(seed);
            assert!((2..=6).contains(&depth) && sg.is_power_of_two() && (4..=128).contains(&sg));
            assert!(
                (1..=200).contains(&wg) && !wg.is_multiple_of(sg),
                "{seed}: {wg} {sg}"
            );
        }
    }
}
