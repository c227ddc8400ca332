//! `tangle diff SCRIPT.amber [--device N] [--policy P|all] [--time-limit S] [--threads N]
//! [--memory-limit BYTES] [--json]`: runs the script on a Vulkan device and on tangle's CPU
//! executor with the device's profile (its subgroup size and operations, limits and
//! cooperative-matrix entries), comparing every buffer after every `RUN` ([`tangle::diff`]).
//!
//! Exit codes: 0 the two agree (differences, if any, are all explained by undefined behaviour
//! the CPU executor found); 1 an unexplained difference, or a `RUN` one side could not run
//! (the driver refused a pipeline the CPU accepted, say); 2 the script could not be used, or the
//! device failed (lost, timed out); 77 either side lacks what the script needs. With
//! `--policy all`, the CPU side runs under every policy and the verdict names those that
//! reproduce the device's values (exit 0 when one does).

use super::limits::Limits;
use super::report::{exit_for, finish, print_json};
use super::run::{parse, script_text};
use super::unusable::{Kind, Unusable};
use super::{io, Exit};
use tangle::cpu_backend::CpuBackend;
use tangle::diff::{DiffBackend, Summary};
use tangle_amber::{RunReport, Script, Status};
use tangle_exec::{Policy, RunOptions};
use tangle_vulkan::VulkanBackend;

#[derive(clap::Args)]
pub struct Args {
    /// The Amber script, or - for standard input.
    input: String,
    /// The Vulkan physical device (`tangle profiles --devices` lists them).
    #[arg(long, value_name = "N")]
    device: Option<usize>,
    /// The CPU executor's scheduling policy (as `tangle run --policy`), or `all` to find which
    /// policies reproduce the device's values.
    #[arg(long)]
    policy: Option<String>,
    /// Worker threads of the CPU executor (auto or 0: every core).
    #[arg(long, value_name = "N|auto", allow_negative_numbers = true)]
    threads: Option<String>,
    /// The most seconds one dispatch may take, on either side (default 60).
    #[arg(long = "time-limit", value_name = "S", allow_negative_numbers = true)]
    time_limit: Option<String>,
    /// The most memory the script's buffers may take (as `tangle run`; default 4G).
    #[arg(
        long = "memory-limit",
        value_name = "BYTES",
        allow_negative_numbers = true
    )]
    memory_limit: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The diff under one CPU policy.
struct Outcome {
    policy: Policy,
    report: RunReport,
    summary: Summary,
}

/// Runs the diff and prints it.
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let name = io::display_name(&args.input);
    let options = Limits {
        threads: args.threads.as_deref(),
        step_limit: None,
        time_limit: args.time_limit.as_deref(),
        memory_limit: args.memory_limit.as_deref(),
    }
    .options()?;
    let policies = match args.policy.as_deref() {
        None => vec![options.policy],
        Some("all") => Policy::all(),
        Some(p) => vec![p
            .parse()
            .map_err(|e| Unusable::new(Kind::Usage, format!("--policy {p}: {e}")))?],
    };
    let bytes = io::read_input(&args.input)?;
    let script = match parse(
        &args.input,
        name,
        script_text(name, &bytes)?,
        options.memory_limit,
    ) {
        Ok(script) => script,
        // Outside tangle's subset (graphics, VkScript's graphics parts...): the run's report.
        Err(Ok(report)) => return Ok(finish(name, &report, args.json)),
        Err(Err(e)) => return Err(e),
    };
    let vulkan = super::vulkan::options(args.device, options.time_limit);
    let mut device = match VulkanBackend::new(&vulkan) {
        Ok(d) => d,
        Err(e) => {
            let report = super::vulkan::unsupported(&script, &e);
            return Ok(print(
                name,
                &script,
                None,
                &[Outcome {
                    policy: options.policy,
                    report,
                    summary: Summary::default(),
                }],
                args.json,
            ));
        }
    };
    let info = device.device().clone();
    let profile = info.profile();
    let range = (info.subgroup.min_size, info.subgroup.max_size);
    let outcomes: Vec<Outcome> = policies
        .into_iter()
        .map(|policy| {
            let mut cpu = CpuBackend::new(
                profile.clone(),
                RunOptions {
                    policy,
                    ..options.clone()
                },
            );
            let mut diff = DiffBackend::new(&script, &mut cpu, &mut device, range);
            let report = tangle_amber::run(&script, &mut diff);
            Outcome {
                policy,
                report,
                summary: diff.summary,
            }
        })
        .collect();
    let header = format!(
        "device {}: {} ({}); CPU profile with subgroup size {}",
        info.index, info.name, info.driver, profile.subgroup_size
    );
    Ok(print(name, &script, Some(&header), &outcomes, args.json))
}

/// The verdict of one outcome: its status and a line saying it.
fn verdict(name: &str, script: &Script, o: &Outcome) -> (Status, String) {
    let s = &o.summary;
    let why = o.report.message.as_deref().unwrap_or("");
    let stopped = tangle_amber::run::tally(&script.commands).0 > o.report.runs;
    match o.report.status {
        Status::Unsupported => return (Status::Unsupported, format!("UNSUPPORTED {name}: {why}")),
        Status::Error => return (Status::Error, format!("ERROR {name}: {why}")),
        Status::Fail if stopped => {
            return (
                Status::Fail,
                format!("FAIL {name}: a RUN did not complete: {why}"),
            )
        }
        _ => {}
    }
    let counts = format!(
        "{} dispatches compared, {} differences ({} explained by undefined behaviour)",
        s.runs, s.total, s.explained
    );
    if s.unexplained() > 0 {
        (Status::Fail, format!("DIFFER {name}: {counts}"))
    } else {
        (Status::Pass, format!("AGREE {name}: {counts}"))
    }
}

/// Prints every outcome and the verdict; the exit code.
fn print(
    name: &str,
    script: &Script,
    header: Option<&str>,
    outcomes: &[Outcome],
    json: bool,
) -> Exit {
    let verdicts: Vec<(Status, String)> =
        outcomes.iter().map(|o| verdict(name, script, o)).collect();
    let several = outcomes.len() > 1;
    let reproducing: Vec<String> = outcomes
        .iter()
        .zip(&verdicts)
        .filter(|(_, (s, _))| *s == Status::Pass)
        .map(|(o, _)| o.policy.to_string())
        .collect();
    // One policy: its verdict. Several: a failure to run decides; else whether any reproduces.
    let status = match verdicts
        .iter()
        .map(|(s, _)| *s)
        .find(|s| matches!(s, Status::Error | Status::Unsupported))
    {
        Some(s) => s,
        None if several => {
            if reproducing.is_empty() {
                Status::Fail
            } else {
                Status::Pass
            }
        }
        None => verdicts.first().map_or(Status::Error, |(s, _)| *s),
    };
    let summary_line = if several {
        match reproducing.len() {
            0 => format!("{name}: no policy reproduces the device's values"),
            _ => format!(
                "{name}: the device's values are reproduced under --policy {}",
                reproducing.join(", ")
            ),
        }
    } else {
        verdicts.first().map(|(_, l)| l.clone()).unwrap_or_default()
    };
    if json {
        let runs: Vec<serde_json::Value> = outcomes
            .iter()
            .zip(&verdicts)
            .map(|(o, (s, line))| {
                serde_json::json!({
                    "policy": o.policy.to_string(), "status": s, "verdict": line,
                    "runs": o.summary.runs, "differences": o.summary.total,
                    "explained": o.summary.explained, "kept": o.summary.kept,
                    "report": o.report,
                })
            })
            .collect();
        print_json(&serde_json::json!({
            "script": name, "status": status, "device": header,
            "policies": runs, "verdict": summary_line,
        }));
        return exit_for(status);
    }
    if let Some(h) = header {
        println!("{name}: {h}");
    }
    for (o, (_, line)) in outcomes.iter().zip(&verdicts) {
        let prefix = if several {
            format!("  under --policy {}: ", o.policy)
        } else {
            String::new()
        };
        for d in &o.summary.kept {
            let explained = d
                .explained
                .as_deref()
                .map(|e| format!(" (explained: {e})"))
                .unwrap_or_default();
            println!(
                "{prefix}{name}:{}: RUN: buffer '{}' element {} component {}: CPU {}, device {}{explained}",
                d.line, d.buffer, d.element, d.component, d.cpu, d.device
            );
        }
        if o.summary.total > o.summary.kept.len() {
            println!(
                "{prefix}... and {} more differences",
                o.summary.total - o.summary.kept.len()
            );
        }
        if several {
            println!("{prefix}{line}");
        }
    }
    println!("{summary_line}");
    exit_for(status)
}
