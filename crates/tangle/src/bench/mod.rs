//! `tangle bench`: the workloads tangle's speed is judged on (`bench/README.md`), each run
//! through the executor and as plain Rust in the same process, the result checked against plain
//! Rust before any time is printed.
//!
//! Per workload it measures, separately: the GLSL compile (glslang), validation, lowering (the
//! pipeline), the native tier's compile (its first dispatch's, [`tangle_exec::jit`]), and the
//! dispatch without it; and the plain-Rust baseline ([`workloads::Baseline`]: warm, in place,
//! invocations side by side where one is a dependent chain), on a rayon pool of the same
//! number of threads as the executor (best of three; tangle's dispatch and the driver's too,
//! [`ROUNDS`]), its result checked against the reference first. The ratio printed is tangle's
//! rate over the baseline's.
//!
//! The dispatch is timed as the Vulkan driver's is (`tangle-vulkan`'s `raw.rs`: submit to
//! fence, the buffers already in device memory): on resident memory
//! ([`tangle_exec::Resident`]), the buffers converted into the executor's memory before the
//! clock starts and read back after it stops; the result checked is the read-back. Its host
//! share is the dispatch's own work outside its worker threads (setup, the race screen's
//! sweep, the findings), not the conversions.

pub mod overhead;
pub mod workloads;

/// Dispatches timed per measurement, the fastest counted, on tangle and on the driver alike
/// (the baseline is the best of three too): on the 2-core CI-class machine a single dispatch
/// swung twofold from one run to the next, the second core sometimes not there.
const ROUNDS: usize = 3;

use std::time::{Duration, Instant};
use tangle_amber::backend::{BindingKind, SubgroupControl};
use tangle_amber::{Backend, ComputeJob, JobBinding};
use tangle_exec::{Device, Profile, Resident, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use workloads::{Case, Check, Part, Workload};

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Threads for the executor and the baseline alike.
    pub threads: usize,
    /// Let the executor take its wide path ([`tangle_exec::wide`]); off measures the reference
    /// path alone.
    pub wide: bool,
    /// Let the wide path try the native tier first ([`tangle_exec::jit`]).
    pub jit: bool,
}

/// The time limit of a benchmark dispatch (an hour).
const BENCH_TIME_LIMIT: Duration = Duration::from_secs(3600);

/// One workload's figures.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The workload.
    pub name: &'static str,
    /// Its size, in words.
    pub size: String,
    /// The rate's unit.
    pub unit: &'static str,
    /// glslang's compile.
    pub compile: Duration,
    /// Validation.
    pub validate: Duration,
    /// Lowering (pipeline creation).
    pub lower: Duration,
    /// Compiling native code, in the first dispatch (zero when the native tier is off or did
    /// not take the program).
    pub native: Duration,
    /// The dispatch through tangle, on resident memory (the conversions in and out untimed).
    pub tangle: Duration,
    /// Of it, the host's own work outside the worker threads ([`tangle_exec::Timing::host`],
    /// the native compile left out as from `tangle`): issue 14 asks for at most 10%.
    pub host: Duration,
    /// The same dispatch without the sanitizer's checks (`--no-checks`).
    pub unchecked: Duration,
    /// The same SPIR-V on a Vulkan driver: its dispatch time (the fastest of [`ROUNDS`] runs
    /// after the one that compiles the pipeline), or why it did not run.
    pub driver: Option<Result<Duration, String>>,
    /// The plain-Rust baseline (best of three, warm).
    pub rust: Duration,
    /// Rates in the unit.
    pub tangle_rate: f64,
    pub rust_rate: f64,
}

/// A Vulkan driver to run the workloads on too.
pub struct Driver<'a> {
    /// The backend.
    pub backend: &'a mut dyn Backend,
    /// Its device's `maxComputeWorkGroupCount`: a case past it runs cut into pieces
    /// ([`Case::split`]).
    pub max_groups: [u32; 3],
}

/// Runs one workload at one size, `case` (from [`Workload::case`] or [`Workload::large`]), and
/// on `driver` when given; `Err` says why it could not run or why its result is wrong.
pub fn measure(
    w: &Workload,
    case: &Case,
    options: &Options,
    driver: Option<Driver<'_>>,
) -> Result<Measured, String> {
    let env = TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3 environment")?;
    let (words, compile) = timed(|| tangle_amber::compile::glsl(w.shader, env));
    let words = words.map_err(|e| format!("GLSL: {e}"))?;
    let (module, validate) = timed(|| {
        let module = Module::from_words(&words).map_err(|e| e.to_string())?;
        tangle_validate::validate(&module, env, &Default::default())
            .map(tangle_validate::Validated::into_owned)
            .map_err(|found| format!("the shader is not valid ({} findings)", found.len()))
    });
    let module = module?;
    let profile = Profile::by_name(w.profile).ok_or("no such profile")?;
    let spec: SpecConstants = case.spec.iter().copied().collect();
    let (pipeline, lower) = timed(|| Device::new(profile).compute_pipeline(&module, "main", &spec));
    let pipeline = pipeline.map_err(|e| e.to_string())?;
    let fresh = || Resources {
        buffers: (0u32..)
            .zip(case.buffers.iter().cloned())
            .map(|(i, b)| ((0, i), b))
            .collect(),
        push_constants: case.push.clone(),
        ..Resources::default()
    };
    let run = RunOptions {
        threads: options.threads,
        wide: options.wide,
        jit: options.jit,
        // A measurement, not a guard against runaway shaders: the 2048³ GEMM takes minutes on
        // two cores, past the default minute.
        time_limit: BENCH_TIME_LIMIT,
        ..RunOptions::default()
    };
    // As the driver's dispatch is timed: on memory already the executor's, the read-back
    // after the clock stops.
    let dispatch = |run: &RunOptions| {
        let mut resident = Resident::new(fresh());
        let (report, time) = timed(|| pipeline.dispatch_resident(&mut resident, case.groups, run));
        report.map(|r| (r, time, resident.into_resources()))
    };
    // The fastest of ROUNDS dispatches on fresh memory (the first one's result is checked).
    let again = |run: &RunOptions, first: Duration| {
        (1..ROUNDS).try_fold(first, |best, _| {
            dispatch(run)
                .map(|(_, t, _)| best.min(t))
                .map_err(|e| e.to_string())
        })
    };
    let (report, tangle, resources) = dispatch(&run).map_err(|e| e.to_string())?;
    // The native compile happens once per pipeline and dispatch shape, before the workers
    // start: its own column.
    let native = pipeline.native_compile_time();
    let tangle = again(&run, tangle.saturating_sub(native))?;
    let host = report.timing.host().saturating_sub(native).min(tangle);
    if let Some(d) = report.diagnostics.first() {
        return Err(format!("the sanitizer reported: {d}"));
    }
    // The sanitizer's cost: the same dispatch with its checks off.
    let unchecked_run = RunOptions {
        checks: false,
        ..run.clone()
    };
    let (_, unchecked, unchecked_resources) =
        dispatch(&unchecked_run).map_err(|e| e.to_string())?;
    let unchecked = unchecked.saturating_sub(pipeline.native_compile_time().saturating_sub(native));
    let unchecked = again(&unchecked_run, unchecked)?;
    if unchecked_resources.buffers != resources.buffers {
        return Err("the run without checks gives other results".into());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| e.to_string())?;
    let want = pool.install(|| (case.reference)());
    // The baseline, made once (warm), checked after its first run, then timed in place.
    let baseline = (case.baseline)();
    pool.install(|| (baseline.run)());
    if (baseline.output)() != want {
        return Err("the plain-Rust baseline differs from the reference".into());
    }
    let rust = (0..3)
        .map(|_| timed(|| pool.install(|| (baseline.run)())).1)
        .min()
        .unwrap_or_default();
    let got = resources
        .buffers
        .get(&(0, case.output as u32))
        .ok_or("no output buffer")?;
    let want = want.to_bytes();
    check(case.check, got, &want)?;
    let driver = driver.map(|d| on_driver(d, case, words.clone(), &want));
    let rate = |t: Duration| case.work / t.as_secs_f64().max(1e-9) / w.unit_scale;
    Ok(Measured {
        name: w.name,
        size: case.size.clone(),
        unit: w.unit,
        compile,
        validate,
        lower,
        native,
        tangle,
        host,
        unchecked,
        driver,
        rust,
        tangle_rate: rate(tangle),
        rust_rate: rate(rust),
    })
}

/// Runs the case's SPIR-V on a driver ([`on_driver_once`]: the first run compiles the
/// pipeline, the fastest of the next [`ROUNDS`] is timed) and checks the result: integers
/// exactly, floats within a relative Frobenius error of 1e-5 (a driver may fuse a multiply and
/// an add, which SPIR-V allows without NoContraction).
///
/// A case with more workgroups than the device's `maxComputeWorkGroupCount` runs as the
/// fewest pieces that fit ([`Case::split`]), each so, their times added. Not
/// one dispatch with `vkCmdDispatchBase`: its base and count together must stay within the
/// limit too ("groupCountX must be less than or equal to
/// VkPhysicalDeviceLimits::maxComputeWorkGroupCount[0] minus baseGroupX",
/// VUID-vkCmdDispatchBase-groupCountX-00424).
fn on_driver(
    driver: Driver<'_>,
    case: &Case,
    spirv: Vec<u32>,
    want: &[u8],
) -> Result<Duration, String> {
    let pieces = case
        .groups
        .iter()
        .zip(driver.max_groups)
        .map(|(&g, max)| g.div_ceil(max.max(1)))
        .max()
        .unwrap_or(1);
    let parts = match (pieces, case.split) {
        (0 | 1, _) => vec![Part {
            buffers: case.buffers.clone(),
            push: case.push.clone(),
            groups: case.groups,
        }],
        (_, Some(split)) => split(case, pieces),
        (_, None) => {
            return Err(format!(
                "{:?} workgroups: the device allows {:?} (maxComputeWorkGroupCount)",
                case.groups, driver.max_groups
            ))
        }
    };
    let mut time = Duration::ZERO;
    let mut got = Vec::with_capacity(want.len());
    for part in &parts {
        let (bytes, t) = on_driver_once(&mut *driver.backend, case, part, spirv.clone())?;
        got.extend_from_slice(&bytes);
        time += t;
    }
    let how = match case.check {
        Check::Exact if case.float_output => Check::Frobenius(1e-5),
        other => other,
    };
    check(how, &got, want).map_err(|e| format!("the driver's result: {e}"))?;
    Ok(time)
}

/// Runs one dispatch of `case` (`part` of it) on a driver: once to compile the pipeline, then
/// [`ROUNDS`] times: the first of those runs' output buffer and the fastest one's time.
fn on_driver_once(
    driver: &mut dyn Backend,
    case: &Case,
    part: &Part,
    spirv: Vec<u32>,
) -> Result<(Vec<u8>, Duration), String> {
    let job = ComputeJob {
        spirv,
        target_env: TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3 environment")?,
        entry_point: "main".into(),
        spec_constants: case.spec.iter().map(|&(id, v)| (id, v as u32)).collect(),
        bindings: (0u32..)
            .zip(&part.buffers)
            .map(|(i, bytes)| JobBinding {
                set: 0,
                binding: i,
                kind: BindingKind::Storage,
                element: 0,
                bytes: bytes.clone(),
                buffer: i as usize,
                offset: 0,
                image: None,
                sampler: None,
            })
            .collect(),
        push_constants: part.push.clone(),
        groups: part.groups,
        subgroup: SubgroupControl::default(),
        line: 0,
        debug: Vec::new(),
        robustness: Default::default(),
        image_robustness: false,
        coopmat_robustness: false,
        null_descriptor: false,
    };
    driver.run_compute(&job).map_err(|e| e.to_string())?;
    let mut out = driver.run_compute(&job).map_err(|e| e.to_string())?;
    let mut time = out
        .dispatch_time
        .ok_or_else(|| "the driver gave no time".to_string())?;
    for _ in 1..ROUNDS {
        let again = driver.run_compute(&job).map_err(|e| e.to_string())?;
        time = time.min(again.dispatch_time.unwrap_or(time));
    }
    if case.output >= out.bindings.len() {
        return Err("no output buffer".into());
    }
    Ok((out.bindings.swap_remove(case.output), time))
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

/// Compares a result with the baseline's.
fn check(how: Check, got: &[u8], want: &[u8]) -> Result<(), String> {
    match how {
        Check::Exact => match got.iter().zip(want).position(|(g, w)| g != w) {
            None if got.len() == want.len() => Ok(()),
            None => Err(format!("{} bytes, the baseline {}", got.len(), want.len())),
            Some(i) => Err(format!("the result differs from plain Rust at byte {i}")),
        },
        Check::Frobenius(bound) => {
            let f = |b: &[u8]| -> Vec<f64> {
                b.chunks_exact(4)
                    .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect()
            };
            let (g, w) = (f(got), f(want));
            let diff: f64 = g.iter().zip(&w).map(|(a, b)| (a - b).powi(2)).sum();
            let norm: f64 = w.iter().map(|b| b * b).sum();
            let err = (diff / norm.max(f64::MIN_POSITIVE)).sqrt();
            if g.len() == w.len() && err <= bound {
                Ok(())
            } else {
                Err(format!("relative error {err:.2e} above {bound:.0e}"))
            }
        }
    }
}

/// The native compile of one generated program.
#[derive(Debug, Clone)]
pub struct CompileRow {
    /// Its top-level statements ([`tangle_oracle::group_ops::program`]).
    pub statements: u32,
    /// Its lowered ops.
    pub ops: usize,
    /// The compile budget's measure ([`tangle_exec::jit::budget`]).
    pub measure: u64,
    /// The compile's time.
    pub time: Duration,
}

/// Subgroups of the generated programs' compile rows: lockstep groups of 16 lanes, so that
/// programs of up to 2 k ops are taken (the native tier's lockstep copy holds at most 32 k ops
/// times lanes).
const COMPILE_SUBGROUP: u32 = 16;

/// The native tier's compile against program size: generated programs of subgroup operations
/// under divergence ([`tangle_oracle::group_ops`]; issue 28's shader, whose compile once took
/// minutes, is of their shape) of `sizes` top-level statements, subgroups of 16, each compiled
/// by its first dispatch. Every tier must give the same results, else `Err`.
pub fn compile_scaling(sizes: &[u32]) -> Result<Vec<CompileRow>, String> {
    use tangle_oracle::group_ops;
    sizes
        .iter()
        .map(|&statements| {
            let src = group_ops::program(28, statements, COMPILE_SUBGROUP);
            let tiers = group_ops::run_tiers(&src, COMPILE_SUBGROUP)?;
            if tiers.runs.windows(2).any(|w| w[0].outcome != w[1].outcome) {
                return Err(format!(
                    "the tiers disagree on the program of {statements} statements"
                ));
            }
            Ok(CompileRow {
                statements,
                ops: tiers.ops,
                measure: tiers.compiles.measure,
                time: tiers.compiles.longest,
            })
        })
        .collect()
}

/// The compile rows' header.
pub const COMPILE_HEADER: &str = "native compile against program size (generated divergent subgroup programs, subgroups of 16):\n  statements      ops    measure  compile ms  µs per op";

/// One compile row.
pub fn compile_row(r: &CompileRow) -> String {
    let ms = r.time.as_secs_f64() * 1e3;
    if r.measure == 0 {
        return format!(
            "  {:>10} {:>8}  not compiled (too large for the native tier)",
            r.statements, r.ops
        );
    }
    format!(
        "  {:>10} {:>8} {:>10} {:>11.1} {:>10.2}",
        r.statements,
        r.ops,
        r.measure,
        ms,
        ms * 1e3 / (r.ops.max(1) as f64)
    )
}

/// Peak resident memory of this process (`VmHWM`), where the OS says.
pub fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_string())
}

/// `x` with four significant digits.
fn significant(x: f64) -> String {
    let digits = if x.abs() >= 1000.0 {
        0
    } else {
        (3 - x.abs().max(1e-9).log10().floor() as i32).clamp(0, 6) as usize
    };
    format!("{x:.digits$}")
}

/// The table row of one workload.
pub fn row(m: &Measured) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    let driver = match &m.driver {
        None => String::new(),
        Some(Ok(t)) => format!(
            "  driver {:.1} ms, tangle/driver {:.3}x",
            ms(*t),
            ratio(m.tangle, *t)
        ),
        Some(Err(why)) => format!("  driver: not run ({why})"),
    };
    format!(
        "{:<13} {:>12} {:>12}  {:>7.3}x  {:>8.1} {:>8.1} {:>8.1} {:>6.1} {:>9.1} {:>5.1} {:>3.0}% {:>9.1} {:>6.2}x  {} ({}){driver}",
        m.name,
        significant(m.tangle_rate),
        significant(m.rust_rate),
        m.tangle_rate / m.rust_rate.max(f64::MIN_POSITIVE),
        ms(m.compile),
        ms(m.validate),
        ms(m.lower),
        ms(m.native),
        ms(m.tangle),
        ms(m.host),
        100.0 * m.host.as_secs_f64() / m.tangle.as_secs_f64().max(1e-9),
        ms(m.unchecked),
        ratio(m.unchecked, m.tangle),
        m.unit,
        m.size
    )
}

/// The table's header.
pub const HEADER: &str = "workload            tangle   plain Rust  tangle/Rust  compile  validate  lower native  dispatch  host share  no-checks  sanitizer  (ms; rates in the unit named; dispatch: on resident memory, upload and read-back untimed as the driver's; host: its work outside its worker threads)";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload runs through tangle and matches its plain-Rust baseline, at 1/256 of its
    /// size (the timings are not looked at).
    #[test]
    fn every_workload_matches_plain_rust_small() {
        let options = Options {
            threads: 2,
            wide: true,
            jit: true,
        };
        for w in workloads::all() {
            let m = measure(&w, &(w.case)(256), &options, None)
                .unwrap_or_else(|e| panic!("{}: {e}", w.name));
            assert!(m.tangle_rate > 0.0 && m.rust_rate > 0.0, "{}", w.name);
            assert!(
                m.unchecked > Duration::ZERO && m.driver.is_none(),
                "{}",
                w.name
            );
        }
    }

    /// The compile rows run generated programs of growing size on every tier alike, and
    /// their measure grows with them.
    #[test]
    fn compile_rows_grow_with_the_program() {
        let rows = compile_scaling(&[2, 8]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows.len(), 2);
        assert!(rows[0].ops < rows[1].ops, "{rows:?}");
        assert!(
            rows[0].measure > 0 && rows[0].measure < rows[1].measure,
            "{rows:?}"
        );
        assert!(compile_row(&rows[1]).contains(&rows[1].ops.to_string()));
    }

    /// A case past the driver's `maxComputeWorkGroupCount` runs in pieces whose outputs make
    /// the whole one: here on the CPU backend standing in for a driver whose limit is 100
    /// workgroups (saxpy's 256 groups as 3 pieces of 86, 86 and 84), checked against plain
    /// Rust; a workload that cannot be cut is refused by name.
    #[test]
    fn a_driver_runs_saxpy_in_pieces_within_its_limit() {
        let all = workloads::all();
        let saxpy = all.iter().find(|w| w.name == "saxpy").expect("saxpy");
        let case = (saxpy.case)(256);
        let split = case.split.expect("saxpy can be cut");
        let parts = split(&case, 3);
        assert_eq!(
            parts.iter().map(|p| p.groups[0]).collect::<Vec<_>>(),
            [86, 86, 84]
        );
        let mut cpu = crate::cpu_backend::CpuBackend::new(
            Profile::by_name("default").expect("profile"),
            RunOptions::default(),
        );
        let env = TargetEnv::parse("vulkan1.3").expect("env");
        let words = tangle_amber::compile::glsl(saxpy.shader, env).expect("compiles");
        let want = (case.reference)().to_bytes();
        let driver = Driver {
            backend: &mut cpu,
            max_groups: [100, 65535, 65535],
        };
        on_driver(driver, &case, words.clone(), &want).expect("the pieces give the result");
        // A wrong result is caught: the pieces' outputs against another want.
        let mut wrong = want.clone();
        wrong[4 * 200 + 3] ^= 0x40;
        let driver = Driver {
            backend: &mut cpu,
            max_groups: [100, 65535, 65535],
        };
        assert!(on_driver(driver, &case, words.clone(), &wrong).is_err());
        let alu = all.iter().find(|w| w.name == "alu_hash").expect("alu_hash");
        let case = (alu.case)(256);
        let driver = Driver {
            backend: &mut cpu,
            max_groups: [10, 65535, 65535],
        };
        let e = on_driver(driver, &case, words, &want).expect_err("alu_hash cannot be cut");
        assert!(e.contains("maxComputeWorkGroupCount"), "{e}");
    }

    /// `--large` adds the GEMM at 2048³ (128 × 128 tiles of 16×16, one workgroup each),
    /// and only the GEMM; the case is built, not run (its dispatch is minutes in a debug build).
    #[test]
    fn large_size_is_the_2048_gemm() {
        let large: Vec<_> = workloads::all()
            .into_iter()
            .filter_map(|w| w.large.map(|f| (w.name, f)))
            .collect();
        assert_eq!(large.len(), 1);
        let (name, case) = large[0];
        assert_eq!(name, "coopmat_gemm");
        let case = case();
        let n = 2048usize;
        assert_eq!(case.groups, [(n / 16 * n / 16) as u32, 1, 1]);
        assert_eq!(
            case.buffers.iter().map(Vec::len).collect::<Vec<_>>(),
            [2 * n * n, 2 * n * n, 4 * n * n]
        );
        assert_eq!(case.work, 2.0 * (n as f64).powi(3));
        assert!(case.size.starts_with("2048^3"), "{}", case.size);
    }

    /// The comparison finds a difference.
    #[test]
    fn check_finds_differences() {
        assert!(check(Check::Exact, &[1, 2, 3], &[1, 2, 3]).is_ok());
        assert!(check(Check::Exact, &[1, 2, 4], &[1, 2, 3]).is_err());
        assert!(check(Check::Exact, &[1, 2], &[1, 2, 3]).is_err());
        let f = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let want = f(&[1.0, 2.0, 3.0]);
        assert!(check(Check::Frobenius(1e-2), &f(&[1.001, 2.0, 3.0]), &want).is_ok());
        assert!(check(Check::Frobenius(1e-2), &f(&[1.5, 2.0, 3.0]), &want).is_err());
    }
}
