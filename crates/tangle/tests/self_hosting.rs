//! Issue 29's self-hosting gate: every Amber script of the repository (the set
//! `diff_scripts.rs` walks) through tangle's Vulkan backend with tangle's own driver
//! (`tangle-icd`) as the only device: `VK_DRIVER_FILES` names the manifest `tangle driver
//! --manifest` writes for the `libtangle_icd.so` cargo built beside the binary.
//!
//! Each script runs twice, as separate processes: `tangle run --backend vulkan --json` with
//! `TANGLE_REPORT` (the driver's findings as JSON), and `tangle diff --json` (the CPU backend
//! against the driver after every `RUN`, the CPU's own report included). The driver runs every
//! dispatch through the same executor as the CPU backend, so a script agrees only when
//!
//! * the bytes are the same: `tangle diff` finds no difference, except in a run with a data
//!   race (its last writer depends on the thread schedule, on either side), whose differences
//!   the race must explain, reported alike on both sides (below);
//! * every `EXPECT` has the same outcome on the driver as on the CPU, after as many dispatches;
//! * the driver ran every dispatch (its report has no `errors`) and found the same findings as
//!   the CPU backend ([`Findings`]).
//!
//! Anything else fails the test unless it is a named case: a script either side reports
//! unsupported (exit 77: partially bound descriptor arrays, which tangle's Vulkan backend does
//! not bind, descriptor offsets finer than the device's alignment, `DEBUG`, which needs the CPU
//! executor, features the driver does not claim, graphics),
//! counted with its reason; an `unusable/` script both refuse (exit 2); or a `RUN` the CPU
//! executor refuses as invalid on every device, which the driver run refuses too, or stops at
//! the time limit, where the driver stops it at the same limit. The counts go to the test summary ([`summary::say`]).
//!
//! Ignored where no Vulkan loader is installed (`cfg(vulkan_driver)`); CI sets
//! `TANGLE_REQUIRE_VULKAN`, so there a missing loader fails the build instead.
#![cfg_attr(not(vulkan_driver), allow(dead_code))]

mod repository_scripts;
mod summary;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use summary::say;

/// The seconds one dispatch may take, on the CPU (`--time-limit`) and in the driver
/// (`TANGLE_TIME_LIMIT`): `tests/amber/cli/runaway_loop.amber` never ends.
const TIME_LIMIT: &str = "5";

/// The manifest for the driver library built beside the binary.
fn manifest(dir: &Path) -> PathBuf {
    let path = dir.join("tangle_icd.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(["driver", "--manifest"])
        .arg(&path)
        .output()
        .expect("the tangle binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// `tangle ARGS...` with tangle's driver as the only Vulkan device and the driver's report, if
/// asked, in `report`: the exit code, stdout parsed as JSON (`Null` when it is not), and
/// stdout and stderr as text for messages.
fn tangle(manifest: &Path, args: &[&str], report: Option<&Path>) -> (i32, Value, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tangle"));
    command
        .args(args)
        .env("VK_DRIVER_FILES", manifest)
        .env_remove("VK_ICD_FILENAMES")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env_remove("TANGLE_PROFILE")
        .env_remove("TANGLE_REPORT")
        .env("TANGLE_TIME_LIMIT", TIME_LIMIT);
    if let Some(path) = report {
        command.env("TANGLE_REPORT", path);
    }
    let out = command.output().expect("the tangle binary runs");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), json, text)
}

/// One cause of findings, at the granularity both sides can be compared at: the driver groups
/// per (pipeline, kind, instruction) over the program run, the CPU backend per `RUN` and cause,
/// and tangle's Vulkan backend creates one pipeline per `RUN`, so the pipeline adds nothing. A
/// cause is the kind, its severity, the instruction (opcode and word offset in the module,
/// which the backend hands to the driver unchanged) and its `OpLine` place. The first finding's
/// message is left out: which invocation is found first depends on the worker threads.
type Cause = (String, String, String, u64, Option<String>);

/// Per cause: findings in all, and dispatches that found it. The executor is exact, so both
/// are the same numbers on both sides.
type Findings = BTreeMap<Cause, (u64, u64)>;

/// The CPU backend's findings (`tangle run --json`'s `report.findings`, one entry per `RUN`
/// and cause).
fn cpu_findings(report: &Value) -> Findings {
    let mut out = Findings::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        let instruction = f["instruction"].as_str().unwrap_or("");
        // `%12 = OpLoad` on the CPU, `OpLoad` in the driver's report.
        let opcode = instruction.rsplit("= ").next().unwrap_or(instruction);
        let cause = (
            text(&f["kind"]),
            text(&f["severity"]),
            opcode.to_string(),
            f["word"].as_u64().unwrap_or(0),
            f["source"].as_str().map(str::to_string),
        );
        let entry = out.entry(cause).or_default();
        entry.0 += f["count"].as_u64().unwrap_or(0);
        entry.1 += 1;
    }
    out
}

/// The driver's findings (`TANGLE_REPORT`'s `findings`, one entry per pipeline and cause).
fn driver_findings(report: &Value) -> Findings {
    let mut out = Findings::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        // `file:line[:column]`, as the CPU backend writes an `OpLine` place (column 0: none).
        let source = f["source"].as_object().map(|s| {
            let mut place = format!("{}:{}", text(&s["file"]), s["line"]);
            if s["column"].as_u64().is_some_and(|c| c > 0) {
                place.push_str(&format!(":{}", s["column"]));
            }
            place
        });
        let cause = (
            text(&f["kind"]),
            text(&f["severity"]),
            text(&f["instruction"]),
            f["word"].as_u64().unwrap_or(0),
            source,
        );
        let entry = out.entry(cause).or_default();
        entry.0 += f["count"].as_u64().unwrap_or(0);
        entry.1 += f["dispatches"].as_u64().unwrap_or(0);
    }
    out
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// Every `EXPECT`'s line and outcome, in order.
fn expects(report: &Value) -> Vec<(u64, bool)> {
    report["expects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| (e["line"].as_u64().unwrap_or(0), e["passed"] == true))
        .collect()
}

/// What became of one script.
enum Verdict {
    /// Same bytes, same `EXPECT` outcomes, same findings.
    Agree,
    /// Unsupported by the driver or tangle's Vulkan backend (exit 77), with the reason.
    Skipped(String),
    /// An `unusable/` script both commands refuse.
    Unusable,
    /// A `RUN` the CPU executor refuses or stops, refused or stopped on the driver too.
    Stopped(String),
    /// Anything else: why.
    Wrong(String),
}

/// The first line of a reason, without `tangle diff`'s `UNSUPPORTED NAME: ` lead.
fn reason(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    match line.split_once(".amber: ") {
        Some((_, rest)) if line.starts_with("UNSUPPORTED ") => rest.to_string(),
        _ => line.to_string(),
    }
}

/// The kind of a skip's reason, for the summary's counts (each skip is listed with its own
/// reason too).
fn skip_kind(why: &str) -> &'static str {
    const KINDS: [(&str, &str); 4] = [
        (
            "partially bound descriptor array",
            "partially bound descriptor arrays, which tangle's Vulkan backend does not bind (a \
             driver may crash on the unbound element)",
        ),
        ("DEBUG", "DEBUG, which needs the CPU executor"),
        (
            "needs a multiple of",
            "descriptors of one buffer at offsets the device's minimum offset alignment does not allow",
        ),
        (
            "does not offer it",
            "a feature or extension the driver does not claim",
        ),
    ];
    KINDS
        .iter()
        .find(|(phrase, _)| why.contains(phrase))
        .map_or(
            "outside what tangle runs on any backend or device",
            |(_, kind)| *kind,
        )
}

/// Runs `script` both ways on the driver and judges it; `report` is a fresh file for the
/// driver's JSON.
fn judge(manifest: &Path, script: &Path, report: &Path) -> Verdict {
    let path = script.display().to_string();
    let _ = std::fs::remove_file(report);
    let (run_code, run, run_text) = tangle(
        manifest,
        &["run", "--json", "--backend", "vulkan", &path],
        Some(report),
    );
    let (diff_code, diff, diff_text) = tangle(
        manifest,
        &[
            "diff",
            "--json",
            "--time-limit",
            TIME_LIMIT,
            "--threads",
            "2",
            &path,
        ],
        None,
    );
    let both =
        || format!("run (exit {run_code}):\n{run_text}\ndiff (exit {diff_code}):\n{diff_text}");
    if run_code == 77 || diff_code == 77 {
        let why = if run_code == 77 {
            run["report"]["message"].as_str().unwrap_or("")
        } else {
            diff["verdict"].as_str().unwrap_or("")
        };
        return match reason(why) {
            why if why.is_empty() => Verdict::Wrong(format!("skipped with no reason\n{}", both())),
            why => Verdict::Skipped(why),
        };
    }
    if path.contains("/unusable/") {
        return match (run_code, diff_code) {
            (2, 2) => Verdict::Unusable,
            _ => Verdict::Wrong(format!("an unusable script was used\n{}", both())),
        };
    }
    let cpu = &diff["policies"][0]["report"];
    let device = diff["device"].as_str().unwrap_or("");
    let noted = run["report"]["notes"].as_array().into_iter().flatten();
    if !device.contains("tangle (default profile)")
        || !noted
            .filter_map(Value::as_str)
            .any(|n| n.contains("tangle (default profile)"))
    {
        return Verdict::Wrong(format!("not on tangle's driver\n{}", both()));
    }
    // The driver's report: none when the script never created a device (no dispatch).
    let driver = match std::fs::read_to_string(report) {
        Ok(t) => match serde_json::from_str::<Value>(&t) {
            Ok(v) => v,
            Err(e) => return Verdict::Wrong(format!("TANGLE_REPORT is not JSON: {e}\n{t}")),
        },
        Err(_) => serde_json::json!({ "dispatches": 0, "findings": [], "errors": [] }),
    };
    let errors: Vec<&str> = driver["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let verdict = diff["verdict"].as_str().unwrap_or("");
    if diff_code == 1 && verdict.contains("a RUN did not complete") {
        // Refused or stopped by the CPU executor on its own: the driver must not have run it
        // either, for the same reason (refused before the driver as invalid, or stopped by
        // its own time limit, `TANGLE_TIME_LIMIT`).
        let why = cpu["message"].as_str().unwrap_or("");
        let refused = why.contains("invalid")
            && run["report"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("invalid"));
        // The same limit on both sides (the driver's own minute would stop it too, later).
        let limit = format!("time limit of {TIME_LIMIT}000 ms");
        let stopped = why.contains(&limit) && errors.iter().any(|e| e.contains(&limit));
        return if refused || stopped {
            Verdict::Stopped(reason(why))
        } else {
            Verdict::Wrong(format!(
                "only one side stopped, or not for the same reason\n{}",
                both()
            ))
        };
    }
    let mut wrong = Vec::new();
    // A racy script's bytes depend on which workgroup the scheduler runs last, on the CPU as
    // on the driver: a difference is allowed only in a run with a data race, which both sides
    // must report alike (the findings check below). Other undefined behaviour is no excuse: the
    // same executor gives the same undefined values on both sides.
    let (cpu_found, driver_found) = (cpu_findings(cpu), driver_findings(&driver));
    let policy = &diff["policies"][0];
    let racy = cpu_found.keys().any(|cause| cause.0 == "race");
    let allowed = if racy {
        &policy["explained"]
    } else {
        &Value::from(0)
    };
    if diff_code != 0 || &policy["differences"] != allowed {
        wrong.push("the bytes differ".to_string());
    }
    let (on_cpu, on_driver) = (expects(cpu), expects(&run["report"]));
    if on_cpu != on_driver {
        wrong.push(format!(
            "EXPECT outcomes (line, held): CPU {on_cpu:?}, driver {on_driver:?}"
        ));
    }
    let runs = cpu["runs"].as_u64();
    if runs != run["report"]["runs"].as_u64() || runs != driver["dispatches"].as_u64() {
        wrong.push(format!(
            "dispatches: CPU {runs:?}, tangle run {:?}, the driver's report {:?}",
            run["report"]["runs"].as_u64(),
            driver["dispatches"].as_u64()
        ));
    }
    if !errors.is_empty() {
        wrong.push(format!("the driver could not run: {errors:?}"));
    }
    if cpu_found != driver_found {
        wrong.push(format!(
            "findings (kind, severity, instruction, word, source) -> (count, dispatches):\n  CPU    {cpu_found:?}\n  driver {driver_found:?}"
        ));
    }
    if wrong.is_empty() {
        Verdict::Agree
    } else {
        Verdict::Wrong(format!("{}\n{}", wrong.join("\n"), both()))
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn every_script_agrees_on_the_tangle_driver() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("self_hosting_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let manifest = manifest(&dir);
    let scripts = repository_scripts::all();
    assert!(scripts.len() >= 100, "only {} scripts found", scripts.len());
    // Two scripts at a time: most of a script's time is two processes starting, compiling
    // GLSL and creating a device, which one core does while the other runs a dispatch.
    let next = AtomicUsize::new(0);
    let verdicts: Mutex<Vec<Option<Verdict>>> =
        Mutex::new((0..scripts.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (next, verdicts, scripts, manifest, dir) =
                (&next, &verdicts, &scripts, &manifest, &dir);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(script) = scripts.get(i) else { break };
                let report = dir.join(format!("report_{worker}.json"));
                let v = judge(manifest, script, &report);
                verdicts.lock().expect("no worker panicked")[i] = Some(v);
            });
        }
    });
    let verdicts = verdicts.into_inner().expect("no worker panicked");
    let (mut agree, mut unusable, mut stopped) = (0, 0, 0);
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (script, verdict) in scripts.iter().zip(verdicts) {
        let name = repository_scripts::name(script);
        match verdict {
            Some(Verdict::Agree) => agree += 1,
            Some(Verdict::Skipped(why)) => {
                say(&format!("skipped on the tangle driver {name}: {why}"));
                *skipped.entry(skip_kind(&why)).or_default() += 1;
            }
            Some(Verdict::Unusable) => unusable += 1,
            Some(Verdict::Stopped(why)) => {
                say(&format!("not compared on the tangle driver {name}: {why}"));
                stopped += 1;
            }
            Some(Verdict::Wrong(why)) => wrong.push(format!("{name}: {why}")),
            None => wrong.push(format!("{name}: not run")),
        }
    }
    let kinds: Vec<String> = skipped.iter().map(|(k, n)| format!("{n} {k}")).collect();
    say(&format!(
        "tangle diff on the tangle driver over {} scripts: {agree} agree (same bytes, EXPECT \
         outcomes and findings as the CPU backend), {} skipped ({}), {stopped} not compared \
         (refused or stopped by the CPU executor and on the driver alike), {unusable} \
         unusable, {} wrong",
        scripts.len(),
        skipped.values().sum::<usize>(),
        kinds.join(", "),
        wrong.len()
    ));
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(agree >= 175, "only {agree} scripts agree");
}
