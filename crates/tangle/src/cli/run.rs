//! `tangle run SCRIPT.amber [--profile P] [--subgroup-size N] [--threads N] [--step-limit N]
//! [--time-limit S] [--memory-limit BYTES] [--json] [--policy P|all] [--trace FILE.json]
//! [--view FILE.html [--view-policies A,B]]
//! [--no-checks] [--allow KIND,KIND] [--deny KIND,KIND|all] [--max-findings N] [--coopmat-layout L] [--reference] [--no-jit]
//! [--backend cpu|vulkan] [--device N]`: runs an Amber script's compute tests on the CPU executor, with a progress bar on
//! a terminal for long dispatches and `REPEAT`s ([`super::progress`]), or on a Vulkan driver
//! (`--backend vulkan`, [`super::vulkan`]).
//!
//! Exit codes: 0 every `EXPECT` held; 1 one failed (or the shader is invalid, or undefined
//! behaviour was found, or a warning of a kind `--deny` names); 2 the script could not be used (including a script with no `RUN` and no
//! `EXPECT`); 77 it needs something the profile lacks.
//!
//! With `--json`, standard output holds exactly one JSON object whatever happens, with the
//! script's name and a `status` (`Pass`, `Fail`, `Unsupported`, `Error`): a run's `report`, or,
//! when the script could not be used before it ran, an `error` (`docs/cli.md`, "JSON reports").

use super::input::{self, Content, TextKind};
use super::limits::Limits;
use super::progress::Bars;
use super::report::{finish, print_json_error};
use super::unusable::{Kind, Unusable};
use super::{io, Exit};
use tangle::cpu_backend::CpuBackend;
use tangle_amber::{RunReport, Status};
use tangle_exec::check::kind::KindSet;
use tangle_exec::check::robust::Robustness;
use tangle_exec::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// The Amber script, or - for standard input.
    input: String,
    /// Device profile: a name (default, lavapipe, nvidia, amd, intel) or a profile file
    /// (FILE.toml, as `tangle profiles --from-device -o FILE.toml` writes).
    #[arg(long, default_value = "default")]
    profile: String,
    /// Subgroup size to run with (a power of two up to 128), instead of the profile's.
    #[arg(long = "subgroup-size")]
    subgroup_size: Option<u32>,
    /// Worker threads for the workgroups of a dispatch: auto or 0 uses every core; more than the
    /// machine's cores (or than the memory limit holds) are capped to those.
    #[arg(long, value_name = "N|auto", allow_negative_numbers = true)]
    threads: Option<String>,
    /// The most instructions one invocation may execute (a whole number, at least 1; default
    /// 100000000). Exceeding it names the instruction, and its source line when the module has
    /// OpLine debug information.
    #[arg(long = "step-limit", value_name = "N", allow_negative_numbers = true)]
    step_limit: Option<String>,
    /// The most seconds one dispatch may take (greater than 0, at most 4294967295; default 60).
    /// The dispatch stops within about a tenth of a second past it.
    #[arg(long = "time-limit", value_name = "S", allow_negative_numbers = true)]
    time_limit: Option<String>,
    /// The most memory the script's buffers may take together, and one dispatch (its buffers
    /// plus each worker thread's registers and shader memory): bytes, or with K, M, G or T
    /// (powers of 1024); default 4G.
    #[arg(
        long = "memory-limit",
        value_name = "BYTES",
        allow_negative_numbers = true
    )]
    memory_limit: Option<String>,
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
    /// Write a self-contained HTML page to FILE that draws how each subgroup's invocations
    /// diverged and reconverged in every dispatch (lanes × steps, splits, joins, subgroup
    /// operations, the control-flow graph, findings; docs/trace-format.md, "The picture").
    #[arg(long, value_name = "FILE.html")]
    view: Option<String>,
    /// With --view: draw two policies side by side, `A,B` (maximal,weak) or two whole policies
    /// joined by `;`, and the stored values that differ between them.
    #[arg(long = "view-policies", value_name = "A,B")]
    view_policies: Option<String>,
    /// Turn the sanitizer's undefined-behaviour findings off (out-of-bounds accesses are still
    /// reported).
    #[arg(long = "no-checks")]
    no_checks: bool,
    /// Run every dispatch on the executor's reference path alone, never on the wide path
    /// (docs/executor.md); the results are the same, only slower.
    #[arg(long)]
    reference: bool,
    /// Leave the executor's native tier off (docs/executor.md): the wide interpreter runs what
    /// it would have compiled; the results are the same.
    #[arg(long = "no-jit")]
    no_jit: bool,
    /// Which invocation holds which cooperative-matrix element: row-striped (the default),
    /// column-striped or shuffled:SEED. A shader that assumes one layout fails under another.
    #[arg(long = "coopmat-layout", value_name = "LAYOUT")]
    coopmat_layout: Option<String>,
    /// Finding kinds not to report, comma-separated (race,uninit,barrier,...; docs/sanitizer.md,
    /// "Findings"); the race and uninitialised-value checks then do no work either.
    #[arg(long, value_name = "KIND,KIND")]
    allow: Option<String>,
    /// Warning kinds to fail the run for, as for undefined behaviour, comma-separated
    /// (uninit,domain,...), or `all` for the strictest reading (every kind not allowed).
    #[arg(long, value_name = "KIND,KIND|all")]
    deny: Option<String>,
    /// The most findings kept one by one (for --json) per dispatch; every finding is still
    /// counted in its cause's summary. Default 100.
    #[arg(long = "max-findings", value_name = "N", allow_negative_numbers = true)]
    max_findings: Option<String>,
    /// The buffer robustness every dispatch runs with, instead of what the script's
    /// DEVICE_FEATUREs enable: none (an access outside a buffer is undefined behaviour),
    /// buffer (robustBufferAccess) or buffer2 (robustBufferAccess2).
    #[arg(long, value_name = "none|buffer|buffer2")]
    robustness: Option<String>,
    /// Where the script runs: cpu (tangle's executor) or vulkan (a Vulkan driver, through the
    /// system loader; `--time-limit` bounds each dispatch's fence wait).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "vulkan"])]
    backend: String,
    /// The Vulkan physical device to run on (`tangle profiles --devices` lists them).
    #[arg(long, value_name = "N")]
    device: Option<usize>,
}

impl Args {
    /// The options given that only tangle's CPU executor reads, by flag name.
    fn cpu_only(&self) -> Vec<&'static str> {
        [
            (self.profile != "default", "--profile"),
            (self.subgroup_size.is_some(), "--subgroup-size"),
            (self.threads.is_some(), "--threads"),
            (self.step_limit.is_some(), "--step-limit"),
            (self.policy.is_some(), "--policy"),
            (self.trace.is_some(), "--trace"),
            (self.view.is_some(), "--view"),
            (self.view_policies.is_some(), "--view-policies"),
            (self.no_checks, "--no-checks"),
            (self.reference, "--reference"),
            (self.no_jit, "--no-jit"),
            (self.allow.is_some(), "--allow"),
            (self.deny.is_some(), "--deny"),
            (self.max_findings.is_some(), "--max-findings"),
            (self.coopmat_layout.is_some(), "--coopmat-layout"),
            (self.robustness.is_some(), "--robustness"),
        ]
        .into_iter()
        .filter(|(given, _)| *given)
        .map(|(_, flag)| flag)
        .collect()
    }
}

/// The kinds `--allow` turns off and those `--deny` fails the run for. `--deny all` denies
/// every kind `--allow` leaves on; a kind named by both is a usage error (off and failing at
/// once means nothing).
fn allow_and_deny(args: &Args) -> Result<(KindSet, KindSet), Unusable> {
    tangle_exec::check::kind::allow_and_deny(
        args.allow.as_deref(),
        args.deny.as_deref(),
        ("--allow", "--deny"),
    )
    .map_err(|e| Unusable::new(Kind::Usage, e))
}

/// The profile the options ask for, or why there is none.
fn profile(args: &Args) -> Result<Profile, Unusable> {
    let names = || {
        Profile::all()
            .into_iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let usage = |message: String| Unusable::new(Kind::Usage, message);
    let profile = match Profile::by_name(&args.profile) {
        Some(p) => p,
        None if std::path::Path::new(&args.profile).is_file() => {
            let text = std::fs::read_to_string(&args.profile)
                .map_err(|e| Unusable::new(Kind::Io, format!("--profile {}: {e}", args.profile)))?;
            Profile::from_toml(&text)
                .map_err(|e| usage(format!("--profile {}: {e}", args.profile)))?
        }
        None => {
            return Err(usage(format!(
                "unknown profile '{}' (known: {}; or a profile file)",
                args.profile,
                names()
            )))
        }
    };
    match args.subgroup_size {
        None => Ok(profile),
        Some(n) => profile.with_subgroup_size(n).ok_or_else(|| {
            usage(format!(
                "--subgroup-size {n}: must be a power of two from 1 to 128"
            ))
        }),
    }
}

/// The script's text, or what the input is instead. An empty file is an empty script, which
/// the runner reports as running and checking nothing.
pub fn script_text<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, Unusable> {
    const SCRIPT: &str = "an Amber script";
    let what = match input::identify(bytes) {
        Content::Text(text) => return Ok(text),
        Content::Other(_) if bytes.is_empty() => return Ok(""),
        Content::Binary(_) => {
            input::instead_of("a SPIR-V binary", SCRIPT, Some(input::BINARY_HINT))
        }
        Content::Other(what) => input::instead_of(&what, SCRIPT, None),
    };
    Err(Unusable::in_file(Kind::Content, name, what))
}

/// Parses the script (AmberScript or VkScript), its buffers held to `buffer_limit` bytes and its
/// `FILE` paths relative to its directory (none for standard input). A script outside tangle's
/// subset is `Err(Ok(report))`, an `Unsupported` report naming what it needs; an error on SPIR-V
/// assembly or GLSL says what the text is instead.
pub fn parse(
    input: &str,
    name: &str,
    text: &str,
    buffer_limit: u64,
) -> Result<tangle_amber::Script, Result<Box<RunReport>, Unusable>> {
    let base_dir = (input != "-").then(|| {
        std::path::Path::new(input)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    });
    let options = tangle_amber::ParseOptions {
        buffer_limit,
        base_dir,
    };
    tangle_amber::parse_with(text, &options).map_err(|e| match TextKind::of(text) {
        _ if e.is_unsupported() => {
            let mut report = RunReport::new();
            report.set(Status::Unsupported, format!("line {}: {}", e.at, e.message));
            Ok(Box::new(report))
        }
        kind @ (TextKind::Assembly | TextKind::Glsl) => Err(Unusable::in_file(
            Kind::Content,
            name,
            kind.instead_of("an Amber script"),
        )),
        TextKind::Amber | TextKind::Other => {
            Err(Unusable::parse(name, e.at.line, e.at.col, e.message))
        }
    })
}

/// Runs the script; with `--json`, an error is also printed as the JSON report on stdout.
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let name = io::display_name(&args.input);
    let result = execute(args, name);
    if let (true, Err(e)) = (args.json, &result) {
        print_json_error(name, e);
    }
    result
}

/// Runs the script and prints its report; an error is the caller's to print.
fn execute(args: &Args, name: &str) -> Result<Exit, Unusable> {
    let profile = profile(args)?;
    let mut options = Limits {
        threads: args.threads.as_deref(),
        step_limit: args.step_limit.as_deref(),
        time_limit: args.time_limit.as_deref(),
        memory_limit: args.memory_limit.as_deref(),
    }
    .options()?;
    let bytes = io::read_input(&args.input)?;
    let script = match parse(
        &args.input,
        name,
        script_text(name, &bytes)?,
        options.memory_limit,
    ) {
        Ok(script) => script,
        Err(Ok(report)) => return Ok(finish(name, &report, args.json)),
        Err(Err(e)) => return Err(e),
    };
    if args.backend == "vulkan" {
        let cpu_only = args.cpu_only();
        if !cpu_only.is_empty() {
            return Err(Unusable::new(
                Kind::Usage,
                format!(
                    "{} only apply to tangle's CPU executor, not to --backend vulkan",
                    cpu_only.join(", ")
                ),
            ));
        }
        let vulkan = super::vulkan::options(args.device, options.time_limit);
        let report = super::vulkan::run(&script, &vulkan);
        return Ok(finish(name, &report, args.json));
    }
    if args.device.is_some() {
        return Err(Unusable::new(
            Kind::Usage,
            "--device picks a Vulkan device: it needs --backend vulkan",
        ));
    }
    options.checks = !args.no_checks;
    options.wide = !args.reference;
    options.jit = !args.no_jit;
    (options.allow, options.deny) = allow_and_deny(args)?;
    if let Some(n) = args.max_findings.as_deref() {
        options.max_findings = n.parse().map_err(|_| {
            Unusable::new(
                Kind::Usage,
                format!("--max-findings {n}: must be a whole number"),
            )
        })?;
    }
    if let Some(l) = args.coopmat_layout.as_deref() {
        options.coopmat_layout = l
            .parse()
            .map_err(|e| Unusable::new(Kind::Usage, format!("--coopmat-layout {l}: {e}")))?;
    }
    let robustness = match args.robustness.as_deref() {
        Some(r) => Some(
            r.parse::<Robustness>()
                .map_err(|e| Unusable::new(Kind::Usage, format!("--robustness {r}: {e}")))?,
        ),
        None => None,
    };
    match args.policy.as_deref() {
        Some("all") if args.trace.is_some() || args.view.is_some() => {
            return Err(Unusable::new(
                Kind::Usage,
                "--trace and --view record one run: name one policy instead of --policy all (--view-policies compares two)",
            ));
        }
        Some("all") => {
            return Ok(super::policies::run_all(
                name,
                &script,
                (&profile, &options, robustness),
                args.json,
            ))
        }
        Some(p) => {
            options.policy = p
                .parse()
                .map_err(|e| Unusable::new(Kind::Usage, format!("--policy {p}: {e}")))?;
        }
        None => {}
    }
    if let Some(path) = &args.view {
        let policies = match args.view_policies.as_deref() {
            Some(list) => super::view::policies(list)?.to_vec(),
            None => vec![options.policy],
        };
        let (report, traced) = super::view::write(
            name,
            &script,
            (&profile, &options, robustness),
            &policies,
            path,
        )?;
        if let Some(path) = &args.trace {
            let traces: Vec<_> = traced.into_iter().map(|r| r.trace).collect();
            write_trace(path, &traces)?;
        }
        return Ok(finish(name, &report, args.json));
    }
    if args.view_policies.is_some() {
        return Err(Unusable::new(
            Kind::Usage,
            "--view-policies chooses what --view draws: it needs --view FILE.html",
        ));
    }
    options.trace = args.trace.is_some();
    let bars = Bars::for_stderr(args.json);
    options.progress = bars.as_ref().map(|b| b.dispatch_hook());
    let mut backend = CpuBackend::new(profile, options);
    if let Some(r) = robustness {
        backend = backend.with_robustness(r);
    }
    let report = match &bars {
        Some(b) => tangle_amber::run_observed(&script, &mut backend, &mut |done, total| {
            b.repeat(done, total)
        }),
        None => tangle_amber::run(&script, &mut backend),
    };
    if let Some(b) = &bars {
        b.clear();
    }
    if let Some(path) = &args.trace {
        write_trace(path, &backend.take_traces())?;
    }
    Ok(finish(name, &report, args.json))
}

/// Writes the trace file (`--trace`).
fn write_trace(path: &str, traces: &[tangle_exec::Trace]) -> Result<(), Unusable> {
    let json = tangle_exec::trace::file_json(traces);
    std::fs::write(path, json)
        .map_err(|e| Unusable::new(Kind::Io, format!("cannot write the trace to {path}: {e}")))
}
