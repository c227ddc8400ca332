//! The sanitizer's findings over a whole program run: one cause per (pipeline, kind,
//! instruction), counted across every dispatch, with the first submission and dispatch that
//! found it; and the driver's own errors at execution (a dispatch it could not run). Shown on
//! stderr when the device is destroyed and written to `TANGLE_REPORT` as JSON.

use tangle_exec::check::summary::Summary;
use tangle_exec::InstRef;

/// Where a dispatch is in the program run: its submission (counted from 1 per device) and its
/// dispatch number within that submission (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The submission.
    pub submission: u64,
    /// The dispatch within it.
    pub dispatch: u64,
}

/// Every finding of one kind at one instruction of one pipeline.
#[derive(Debug, Clone)]
pub struct Cause {
    /// The finding kind (`race`, `out-of-bounds`, ...).
    pub kind: String,
    /// Whether the kind is a warning rather than undefined behaviour.
    pub warning: bool,
    /// The first finding's text.
    pub message: String,
    /// The pipeline ([`crate::objects::Pipeline::name`]).
    pub pipeline: String,
    /// The instruction.
    pub at: InstRef,
    /// Findings in all.
    pub count: u64,
    /// Dispatches that found it.
    pub dispatches: u64,
    /// The first dispatch that found it.
    pub first: Place,
}

/// The findings of a device so far.
#[derive(Debug, Default)]
pub struct Findings {
    /// The causes, in the order first found.
    pub causes: Vec<Cause>,
    /// Dispatches run.
    pub dispatches: u64,
    /// Submissions run.
    pub submissions: u64,
    /// Commands the driver could not run, with why.
    pub errors: Vec<String>,
}

impl Findings {
    /// Adds a dispatch's summaries.
    pub fn add(&mut self, pipeline: &str, place: Place, summaries: &[Summary]) {
        for s in summaries {
            let Some(first) = s.first() else { continue };
            let kind = s.kind.to_string();
            let found = self.causes.iter_mut().find(|c| {
                c.pipeline == pipeline && c.kind == kind && c.at.offset == first.at.offset
            });
            match found {
                Some(c) => {
                    c.count += s.count;
                    c.dispatches += 1;
                }
                None => self.causes.push(Cause {
                    kind,
                    warning: s.kind.severity() == tangle_exec::check::kind::Severity::Warning,
                    message: first.finding.to_string(),
                    pipeline: pipeline.to_string(),
                    at: first.at.clone(),
                    count: s.count,
                    dispatches: 1,
                    first: place,
                }),
            }
        }
    }

    /// The summary printed on stderr when the device is destroyed; empty when the device ran
    /// nothing.
    pub fn text(&self) -> String {
        if self.dispatches == 0 && self.errors.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "tangle-icd: {} dispatch(es) in {} submission(s): ",
            self.dispatches, self.submissions
        );
        let ub = self.causes.iter().filter(|c| !c.warning).count();
        match self.causes.len() {
            0 => out.push_str("no undefined behaviour found\n"),
            n => out.push_str(&format!(
                "{n} cause(s) of findings, {ub} of them undefined behaviour\n"
            )),
        }
        for c in &self.causes {
            let severity = if c.warning { "warning" } else { "error" };
            out.push_str(&format!("{severity}[{}]: {}\n", c.kind, c.message));
            out.push_str(&format!("  --> {} in {}\n", place(&c.at), c.pipeline));
            out.push_str(&format!(
                "  = {} finding(s) in {} dispatch(es), first in submission {} dispatch {}\n",
                c.count, c.dispatches, c.first.submission, c.first.dispatch
            ));
        }
        for e in &self.errors {
            out.push_str(&format!("error[driver]: {e}\n"));
        }
        out
    }

    /// Writes the JSON report to `TANGLE_REPORT`, if set; a failure is said on stderr.
    pub fn write_report(&self, profile: &str) {
        if let Some(path) = crate::config::report_path() {
            let text = serde_json::to_string_pretty(&self.json(profile)).unwrap_or_default();
            if let Err(e) = std::fs::write(&path, text + "\n") {
                crate::config::say(&format!(
                    "{}={}: {e}",
                    crate::config::REPORT,
                    path.display()
                ));
            }
        }
    }

    /// The JSON report (`TANGLE_REPORT`).
    pub fn json(&self, profile: &str) -> serde_json::Value {
        let causes: Vec<serde_json::Value> = self
            .causes
            .iter()
            .map(|c| {
                let source = c.at.source.as_ref().map(
                    |s| serde_json::json!({ "file": s.file, "line": s.line, "column": s.column }),
                );
                serde_json::json!({
                    "kind": c.kind,
                    "severity": if c.warning { "warning" } else { "error" },
                    "message": c.message,
                    "pipeline": c.pipeline,
                    "instruction": c.at.name,
                    "word": c.at.offset,
                    "source": source,
                    "count": c.count,
                    "dispatches": c.dispatches,
                    "first": { "submission": c.first.submission, "dispatch": c.first.dispatch },
                })
            })
            .collect();
        serde_json::json!({
            "profile": profile,
            "submissions": self.submissions,
            "dispatches": self.dispatches,
            "findings": causes,
            "errors": self.errors,
        })
    }
}

/// Where an instruction is: its `OpLine` place, else its word offset.
fn place(at: &InstRef) -> String {
    match &at.source {
        Some(s) => s.to_string(),
        None => format!("{} at word {}", at.name, at.offset),
    }
}
