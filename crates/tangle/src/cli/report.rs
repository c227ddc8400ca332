//! How a run's report is shown and what it means as an exit code: the text report (failed
//! `EXPECT`s, findings, notes, the verdict line) or one JSON object (`docs/cli.md`, "JSON
//! reports"), errors included. Shared by `tangle run`, `--policy all` (`policies.rs`) and
//! `tangle diff`, below all three.

use super::unusable::{Kind, Unusable};
use super::{io, Exit};
use tangle_amber::{RunReport, Status};

/// What the script's verdict means as an exit code.
pub fn exit_for(status: Status) -> Exit {
    match status {
        Status::Pass => Exit::Success,
        Status::Fail => Exit::No,
        Status::Unsupported => Exit::Unsupported,
        Status::Error => Exit::Unusable,
    }
}

/// Prints the report (as JSON with `json`) and says what it means as an exit code.
pub fn finish(name: &str, report: &RunReport, json: bool) -> Exit {
    if json {
        print_json(
            &serde_json::json!({ "script": name, "status": report.status, "report": report }),
        );
    } else {
        print_text(name, report);
    }
    exit_for(report.status)
}

/// Prints a JSON value on standard output.
pub fn print_json(value: &serde_json::Value) {
    use std::io::Write;
    match serde_json::to_string_pretty(value) {
        // A reader that stops early (`| head`) closes the pipe: not an error worth a panic.
        Ok(s) => {
            let _ = writeln!(std::io::stdout().lock(), "{s}");
        }
        Err(e) => io::report(&format!("cannot print the report: {e}")),
    }
}

/// The JSON report of a script that could not be used: `status` is `Error`, and `error` says why.
pub fn print_json_error(name: &str, e: &Unusable) {
    print_json(&serde_json::json!({ "script": name, "status": Status::Error, "error": e.json() }));
}

/// For `tangle run … --json` whose command line clap rejected (an unknown flag, a value that is
/// not a number): the JSON error report, so that stdout still holds one. The script is `null`,
/// since the words cannot be told apart reliably once the command line does not parse.
pub fn print_command_line_error(words: &[String], e: &clap::Error) {
    let is_run = words
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str)
        == Some("run");
    if !is_run || !words.iter().any(|w| w == "--json") {
        return;
    }
    // clap's first paragraph is the error; the rest is usage help.
    let rendered = e.render().to_string();
    let paragraph: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let text = paragraph.join(" ");
    let message = text.strip_prefix("error: ").unwrap_or(&text);
    let error = Unusable::new(Kind::Usage, message).json();
    print_json(&serde_json::json!({ "script": null, "status": Status::Error, "error": error }));
}

/// How many `EXPECT`s held, of how many, and how many the run stopped before reaching:
/// "1/3 expectations held, 2 not reached".
pub fn expectations(report: &RunReport) -> String {
    let held = report.expects.iter().filter(|e| e.passed).count();
    let total = report.expects.len().saturating_add(report.unreached);
    match report.unreached {
        0 => format!("{held}/{total} expectations held"),
        n => format!("{held}/{total} expectations held, {n} not reached"),
    }
}

/// Prints the report on stdout: failed `EXPECT`s with their first mismatches, findings, notes,
/// and the verdict line.
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
    for w in &report.warnings {
        println!("{name}: {w}");
    }
    for note in &report.notes {
        println!("{name}: note: {note}");
    }
    let why = report
        .message
        .as_deref()
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    println!(
        "{} {name}: {}, {} dispatches{why}",
        report.status.word(),
        expectations(report),
        report.runs
    );
}
