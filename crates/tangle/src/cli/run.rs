//! `tangle run SCRIPT.amber [--profile P] [--subgroup-size N] [--threads N] [--step-limit N]
//! [--time-limit S] [--json] [--policy P|all] [--trace FILE.json] [--no-checks]`: runs an Amber script's
//! compute tests on the CPU executor.
//!
//! Exit codes: 0 every `EXPECT` held; 1 one failed (or the shader is invalid, or undefined
//! behaviour was found); 2 the script could not be used; 77 it needs something the profile lacks.

use super::{io, Exit};
use tangle::cpu_backend::{run_options, CpuBackend};
use tangle_amber::{RunReport, Status};
use tangle_exec::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// The Amber script, or - for standard input.
    input: String,
    /// Device profile (default, lavapipe, nvidia, amd, intel).
    #[arg(long, default_value = "default")]
    profile: String,
    /// Subgroup size to run with (a power of two up to 128), instead of the profile's.
    #[arg(long = "subgroup-size")]
    subgroup_size: Option<u32>,
    /// Worker threads for the workgroups of a dispatch; 0 uses every core.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// The most instructions one invocation may execute.
    #[arg(long = "step-limit")]
    step_limit: Option<u64>,
    /// The most seconds one dispatch may take.
    #[arg(long = "time-limit")]
    time_limit: Option<f64>,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// Scheduling policy: comma-separated maximal|weak|random:SEED, true-first|false-first|
    /// random:SEED, by-case|by-selector; or `all` to run under every policy of a set and report
    /// a script whose results depend on the policy.
    #[arg(long)]
    policy: Option<String>,
    /// Write the tangle events of every dispatch to FILE as JSON (docs/trace-format.md).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Turn the sanitizer's undefined-behaviour findings off (out-of-bounds accesses are still
    /// reported).
    #[arg(long = "no-checks")]
    no_checks: bool,
}

/// The profile the options ask for, or why there is none.
fn profile(args: &Args) -> Result<Profile, String> {
    let names = || {
        Profile::all()
            .into_iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let profile = Profile::by_name(&args.profile)
        .ok_or_else(|| format!("unknown profile '{}' (known: {})", args.profile, names()))?;
    match args.subgroup_size {
        None => Ok(profile),
        Some(n) => profile
            .with_subgroup_size(n)
            .ok_or_else(|| format!("--subgroup-size {n}: must be a power of two from 1 to 128")),
    }
}

pub fn run(args: &Args) -> Exit {
    let name = io::display_name(&args.input);
    let profile = match profile(args) {
        Ok(p) => p,
        Err(e) => {
            io::report(&e);
            return Exit::Unusable;
        }
    };
    let text = match io::read_input(&args.input).map(String::from_utf8) {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => {
            io::report(&format!("{name}: the script is not UTF-8 text"));
            return Exit::Unusable;
        }
        Err(e) => {
            io::report(&e);
            return Exit::Unusable;
        }
    };
    let script = match tangle_amber::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            io::report(&format!("{name}:{e}"));
            return Exit::Unusable;
        }
    };
    let mut options = run_options(args.threads, args.step_limit, args.time_limit);
    options.checks = !args.no_checks;
    match args.policy.as_deref() {
        Some("all") if args.trace.is_some() => {
            io::report("--trace records one run: name one policy instead of --policy all");
            return Exit::Unusable;
        }
        Some("all") => {
            return super::policies::run_all(name, &script, &profile, &options, args.json)
        }
        Some(p) => match p.parse() {
            Ok(policy) => options.policy = policy,
            Err(e) => {
                io::report(&format!("--policy {p}: {e}"));
                return Exit::Unusable;
            }
        },
        None => {}
    }
    options.trace = args.trace.is_some();
    let mut backend = CpuBackend::new(profile, options);
    let report = tangle_amber::run(&script, &mut backend);
    if let Some(path) = &args.trace {
        let json = tangle_exec::trace::file_json(&backend.take_traces());
        if let Err(e) = std::fs::write(path, json) {
            io::report(&format!("cannot write the trace to {path}: {e}"));
            return Exit::Unusable;
        }
    }
    if args.json {
        print_json(name, &report);
    } else {
        print_text(name, &report);
    }
    match report.status {
        Status::Pass => Exit::Success,
        Status::Fail => Exit::No,
        Status::Unsupported => Exit::Unsupported,
        Status::Error => Exit::Unusable,
    }
}

fn print_json(name: &str, report: &RunReport) {
    let value = serde_json::json!({ "script": name, "report": report });
    match serde_json::to_string_pretty(&value) {
        Ok(s) => println!("{s}"),
        Err(e) => io::report(&format!("cannot print the report: {e}")),
    }
}

fn print_text(name: &str, report: &RunReport) {
    for e in report.expects.iter().filter(|e| !e.passed) {
        println!("{name}:{}: EXPECT failed: {}", e.line, e.message);
        for m in &e.mismatches {
            println!(
                "  element {} component {} (byte {}): expected {}, actual {}",
                m.element, m.component, m.byte_offset, m.expected, m.actual
            );
        }
        if e.mismatch_count > e.mismatches.len() {
            println!("  ... and {} more", e.mismatch_count - e.mismatches.len());
        }
    }
    for ub in &report.undefined_behaviour {
        println!("{name}: undefined behaviour: {ub}");
    }
    for note in &report.notes {
        println!("{name}: note: {note}");
    }
    let passed = report.expects.iter().filter(|e| e.passed).count();
    let verdict = match report.status {
        Status::Pass => "PASS",
        Status::Fail => "FAIL",
        Status::Unsupported => "UNSUPPORTED",
        Status::Error => "ERROR",
    };
    let why = report
        .message
        .as_deref()
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    println!(
        "{verdict} {name}: {passed}/{} expectations held, {} dispatches{why}",
        report.expects.len(),
        report.runs
    );
}
