//! The executor's fast paths against its reference path (`docs/executor.md`): every Amber
//! script of the repository (`tests/amber/**` but `pending/`, and `examples/`) runs on the
//! reference path and on the wide path, once with the wide interpreter alone and once with the
//! native tier in front of it, with the sanitizer on and off, and every `RUN` must give the same
//! bytes in every bound buffer, the same findings and the same errors (a job the fast path does
//! not take, or gives back, runs on the reference path already and is run once). The fast paths
//! must also really run: the invocations each took are printed and checked against a floor, so a
//! change that quietly sends everything to the reference path fails here.

use std::path::{Path, PathBuf};
use tangle::cpu_backend::CpuBackend;
use tangle::{Profile, RunOptions};
use tangle_amber::backend::Requirement;
use tangle_amber::{Backend, BackendError, ComputeJob, JobOutput};

/// Runs each job on both paths and records where they differ.
struct Twin {
    wide: CpuBackend,
    reference: CpuBackend,
    differences: Vec<String>,
    jobs: usize,
}

impl Twin {
    fn new(checks: bool, jit: bool) -> Twin {
        let options = |wide| RunOptions {
            threads: 2,
            checks,
            wide,
            jit,
            // Bounds `cli/runaway_loop.amber` (both paths must give the same error for it).
            step_limit: 5_000_000,
            ..RunOptions::default()
        };
        let profile = || Profile::by_name("default").expect("the default profile");
        Twin {
            wide: CpuBackend::new(profile(), options(true)),
            reference: CpuBackend::new(profile(), options(false)),
            differences: Vec::new(),
            jobs: 0,
        }
    }
}

impl Backend for Twin {
    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        self.reference.supports(requirement)
    }

    fn aliases_bindings(&self) -> bool {
        self.reference.aliases_bindings()
    }

    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
        self.jobs += 1;
        let before = self.wide.wide_invocations();
        let wide = self.wide.run_compute(job);
        if self.wide.wide_invocations() == before {
            // The wide path did not take the job (or gave it back): its result is the
            // reference path's already.
            return wide;
        }
        let reference = self.reference.run_compute(job);
        let what = match (&wide, &reference) {
            (Ok(w), Ok(r)) => {
                let buffers = w
                    .bindings
                    .iter()
                    .zip(&r.bindings)
                    .position(|(a, b)| a != b)
                    .map(|i| format!("binding {i} differs"));
                let findings = (w.undefined_behaviour != r.undefined_behaviour).then(|| {
                    format!(
                        "findings differ: {:?} / {:?}",
                        w.undefined_behaviour, r.undefined_behaviour
                    )
                });
                buffers.or(findings)
            }
            (Err(w), Err(r)) => (w != r).then(|| format!("errors differ: {w} / {r}")),
            (w, r) => Some(format!(
                "one failed: wide {:?} / reference {:?}",
                w.as_ref().err(),
                r.as_ref().err()
            )),
        };
        if let Some(what) = what {
            self.differences
                .push(format!("job {} ({}): {what}", self.jobs, job.entry_point));
        }
        reference
    }
}

/// Every script of the repository that the runner takes, sorted.
fn scripts() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    let mut dirs = vec![root.join("tests/amber"), root.join("examples")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with("pending") {
                dirs.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "amber" || x == "vkscript")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs every script on both paths; the differences, the wide path's invocations, the native
/// tier's and the dispatches.
fn compare(checks: bool, jit: bool) -> (Vec<String>, u64, u64, usize) {
    let mut differences = Vec::new();
    let (mut wide, mut native, mut jobs) = (0, 0, 0);
    for path in scripts() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let options = tangle_amber::ParseOptions {
            buffer_limit: tangle_amber::DEFAULT_BUFFER_LIMIT,
            base_dir: path.parent().map(Path::to_path_buf),
        };
        // Scripts that do not parse (the `unusable/` ones) have nothing to run.
        let Ok(script) = tangle_amber::parse_with(&text, &options) else {
            continue;
        };
        let mut twin = Twin::new(checks, jit);
        tangle_amber::run(&script, &mut twin);
        differences.extend(
            twin.differences
                .iter()
                .map(|d| format!("{}: {d}", path.display())),
        );
        wide += twin.wide.wide_invocations();
        native += twin.wide.jit_invocations();
        jobs += twin.jobs;
    }
    (differences, wide, native, jobs)
}

#[test]
fn every_script_gives_the_same_results_on_both_paths() {
    for checks in [true, false] {
        let (differences, wide, native, jobs) = compare(checks, false);
        println!("checks {checks}: {jobs} dispatches, {wide} invocations on the wide path");
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        assert!(jobs > 100, "only {jobs} dispatches ran");
        assert_eq!(native, 0, "the native tier ran although it was off");
        // The scripts written for the wide path (tests/amber/wide/) alone run 2496.
        assert!(wide >= 2496, "only {wide} invocations took the wide path");
    }
}

#[test]
fn every_script_gives_the_same_results_with_the_native_tier() {
    for checks in [true, false] {
        let (differences, wide, native, jobs) = compare(checks, true);
        println!(
            "checks {checks}: {jobs} dispatches, {wide} invocations on the wide path, \
             {native} of them as native code"
        );
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        assert!(jobs > 100, "only {jobs} dispatches ran");
        // 3827 (checks on) and 3906 (off) when this was written.
        assert!(
            native >= 3500,
            "only {native} invocations ran as native code"
        );
    }
}
