//! The sanitizer's findings over a whole program run: one cause per (pipeline, kind,
//! instruction), counted across every dispatch, with the first submission and dispatch that
//! found it; hazards between dispatches ([`crate::hazards`]), one cause per pair of
//! pipelines; and the driver's own errors at execution (a dispatch it could not run). Shown on
//! stderr when the device is destroyed (or by `tangle exec`, from the JSON: [`text`] renders
//! both) and written to `TANGLE_REPORT` as JSON.

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
    /// The last dispatch that found it (a dispatch is counted once in `dispatches`).
    pub last: Place,
    /// For a hazard between dispatches: the earlier dispatch's pipeline and place, and the
    /// allocation's bytes of the first hazard found.
    pub between: Option<Between>,
}

/// The earlier side of a hazard between two dispatches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Between {
    /// Its pipeline's label.
    pub pipeline: String,
    /// Where it ran.
    pub place: Place,
    /// The bytes of the allocation both touched: `[start, end)`.
    pub bytes: (u64, u64),
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
    /// Where each pipeline's dispatches ran, and their time.
    pub tiers: crate::tiers::Tiers,
}

impl Findings {
    /// Adds a dispatch's summaries, with the severity `deny` gives their kinds
    /// (`TANGLE_DENY`); returns the indices of the causes found for the first time.
    pub fn add(
        &mut self,
        pipeline: &str,
        place: Place,
        summaries: &[Summary],
        deny: tangle_exec::check::kind::KindSet,
    ) -> Vec<usize> {
        let mut new = Vec::new();
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
                    c.last = place;
                }
                None => {
                    new.push(self.causes.len());
                    self.causes.push(Cause {
                        kind,
                        warning: tangle_exec::check::kind::severity(s.kind, deny)
                            == tangle_exec::check::kind::Severity::Warning,
                        message: first.finding.to_string(),
                        pipeline: pipeline.to_string(),
                        at: first.at.clone(),
                        count: s.count,
                        dispatches: 1,
                        first: place,
                        last: place,
                        between: None,
                    })
                }
            }
        }
        new
    }

    /// Adds a hazard between an earlier dispatch and the one at `place` (a `race`, grouped by
    /// the two pipelines); returns the cause's index when it is found for the first time.
    pub fn add_hazard(
        &mut self,
        pipeline: &str,
        place: Place,
        message: String,
        earlier: Between,
    ) -> Option<usize> {
        let found = self.causes.iter_mut().find(|c| {
            c.pipeline == pipeline
                && c.between
                    .as_ref()
                    .is_some_and(|b| b.pipeline == earlier.pipeline)
        });
        if let Some(c) = found {
            c.count += 1;
            if c.last != place {
                c.dispatches += 1;
                c.last = place;
            }
            return None;
        }
        self.causes.push(Cause {
            kind: tangle_exec::check::kind::Kind::Race.name().to_string(),
            warning: false,
            message,
            pipeline: pipeline.to_string(),
            at: InstRef {
                name: "vkCmdDispatch".into(),
                result_id: None,
                offset: 0,
                source: None,
            },
            count: 1,
            dispatches: 1,
            first: place,
            last: place,
            between: Some(earlier),
        });
        Some(self.causes.len() - 1)
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
                let earlier = c.between.as_ref().map(|b| {
                    serde_json::json!({
                        "pipeline": b.pipeline,
                        "submission": b.place.submission,
                        "dispatch": b.place.dispatch,
                        "bytes": [b.bytes.0, b.bytes.1],
                    })
                });
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
                    "earlier": earlier,
                })
            })
            .collect();
        serde_json::json!({
            "profile": profile,
            "submissions": self.submissions,
            "dispatches": self.dispatches,
            "findings": causes,
            "errors": self.errors,
            "pipelines": self.tiers.json(),
        })
    }
}

/// The summary of a JSON report ([`Findings::json`]): what the driver prints on stderr when a
/// device is destroyed, and `tangle exec` when the program ends. Empty when the device ran
/// nothing.
pub fn text(report: &serde_json::Value) -> String {
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let empty = Vec::new();
    let causes = report["findings"].as_array().unwrap_or(&empty);
    let errors = report["errors"].as_array().unwrap_or(&empty);
    if n(&report["dispatches"]) == 0 && errors.is_empty() && causes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "tangle-icd: {} dispatch(es) in {} submission(s): ",
        n(&report["dispatches"]),
        n(&report["submissions"])
    );
    let ub = causes.iter().filter(|c| c["severity"] == "error").count();
    match causes.len() {
        0 => out.push_str("no undefined behaviour found\n"),
        k => out.push_str(&format!(
            "{k} cause(s) of findings, {ub} of them undefined behaviour\n"
        )),
    }
    for c in causes {
        out.push_str(&format!(
            "{}[{}]: {}\n",
            s(&c["severity"]),
            s(&c["kind"]),
            s(&c["message"])
        ));
        let at = match (&c["source"], &c["earlier"]) {
            (_, e) if e.is_object() => format!(
                "after {} (submission {} dispatch {}), bytes {}..{} of the allocation,",
                s(&e["pipeline"]),
                n(&e["submission"]),
                n(&e["dispatch"]),
                n(&e["bytes"][0]),
                n(&e["bytes"][1])
            ),
            (src, _) if src.is_object() => match n(&src["column"]) {
                0 => format!("{}:{}", s(&src["file"]), n(&src["line"])),
                col => format!("{}:{}:{col}", s(&src["file"]), n(&src["line"])),
            },
            _ => format!("{} at word {}", s(&c["instruction"]), n(&c["word"])),
        };
        out.push_str(&format!("  --> {at} in {}\n", s(&c["pipeline"])));
        out.push_str(&format!(
            "  = {} finding(s) in {} dispatch(es), first in submission {} dispatch {}\n",
            n(&c["count"]),
            n(&c["dispatches"]),
            n(&c["first"]["submission"]),
            n(&c["first"]["dispatch"])
        ));
    }
    for e in errors {
        out.push_str(&format!("error[driver]: {}\n", s(e)));
    }
    out
}

/// At `vkDestroyDevice`: the summary on stderr (unless `tangle exec` prints it, `TANGLE_EXEC`),
/// the JSON report to `TANGLE_REPORT`, and under `tangle exec` to its folder ([`exec_report`]).
pub fn report(device: &crate::objects::Device) {
    let json = crate::objects::lock(&device.findings).json(&device.caps.profile.name);
    match &device.settings.exec {
        Some(_) => exec_report(device, true),
        None => eprint!("{}", self::text(&json)),
    }
    write_report(device, json, true);
}

/// When the device is lost ([`crate::objects::Device::lost`]): the reports written at once, as
/// at `vkDestroyDevice` but for the summary, since a program whose device is lost may never
/// destroy it (tangle's own Vulkan backend leaves a lost device alone, as a GPU may still run
/// its work).
pub fn lost(device: &crate::objects::Device) {
    progress(device);
}

/// After every submission: the reports rewritten with what the device found so far (a program
/// that never destroys its device, as ggml, still leaves them).
pub fn progress(device: &crate::objects::Device) {
    if device.settings.exec.is_none() && crate::config::report_path().is_none() {
        return;
    }
    let json = crate::objects::lock(&device.findings).json(&device.caps.profile.name);
    exec_report(device, false);
    write_report(device, json, false);
}

/// `TANGLE_REPORT`, when set: the whole run's report with `json` as `device`'s
/// ([`run_so_far`]); `last` at `vkDestroyDevice`.
fn write_report(device: &crate::objects::Device, json: serde_json::Value, last: bool) {
    if let Some(path) = crate::config::report_path() {
        let address = device as *const crate::objects::Device as usize;
        let run = run_so_far(address, json, last);
        let text = serde_json::to_string_pretty(&run).unwrap_or_default() + "\n";
        if let Err(e) = std::fs::write(&path, &text) {
            crate::config::say(&format!("{}: {e}", path.display()));
        }
    }
}

/// The report of the whole program run so far: every device whose report was written in this
/// process (at its loss or its `vkDestroyDevice`), with `json` now the report of the device at
/// `address` (a live device's report is replaced when written again; `last`: the device is
/// destroyed, and an address reused later is another device). Kept in the process (rather than
/// read back from the file and merged) so that a file left by an earlier run, or written by
/// another process naming the same path, is never taken for this run's: the first report
/// replaces the file, and each later one rewrites it with every device so far.
///
/// Counts are summed; each finding and error says which device (numbered from 0 in the order
/// their reports were first written) found it, since submissions are counted per device;
/// `devices` counts them.
fn run_so_far(address: usize, json: serde_json::Value, last: bool) -> serde_json::Value {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    /// Each device's report, and the live devices' places in it by address.
    type Run = (Vec<serde_json::Value>, HashMap<usize, usize>);
    static RUN: OnceLock<Mutex<Run>> = OnceLock::new();
    let mut run = crate::objects::lock(RUN.get_or_init(Default::default));
    let (devices, live) = &mut *run;
    let at = *live.entry(address).or_insert(devices.len());
    match devices.get_mut(at) {
        Some(d) => *d = json,
        None => devices.push(json),
    }
    if last {
        live.remove(&address);
    }
    devices
        .iter()
        .fold(None, |acc, d| Some(merge(acc, d.clone())))
        .unwrap_or_default()
}

/// `device`'s report added to the run's (`None` before the first device).
fn merge(run: Option<serde_json::Value>, mut device: serde_json::Value) -> serde_json::Value {
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let k = run.as_ref().map_or(0, |r| n(&r["devices"]));
    let take = |v: &mut serde_json::Value, key: &str| match v[key].take() {
        serde_json::Value::Array(a) => a,
        _ => Vec::new(),
    };
    let mut findings = take(&mut device, "findings");
    for f in &mut findings {
        f["device"] = k.into();
    }
    let errors = take(&mut device, "errors")
        .into_iter()
        .map(|e| format!("device {k}, {}", e.as_str().unwrap_or_default()).into());
    let Some(mut run) = run else {
        device["devices"] = 1.into();
        device["findings"] = findings.into();
        device["errors"] = errors.collect::<Vec<_>>().into();
        return device;
    };
    for key in ["submissions", "dispatches"] {
        run[key] = (n(&run[key]) + n(&device[key])).into();
    }
    run["devices"] = (k + 1).into();
    let mut all = take(&mut run, "findings");
    all.extend(findings);
    run["findings"] = all.into();
    let mut all = take(&mut run, "errors");
    all.extend(errors);
    run["errors"] = all.into();
    run
}

/// Under `tangle exec`: the device's JSON report in its folder, one file per device
/// (`device-PID-N.json`, N counting the process's devices: a program may create several, and
/// run child programs). Written at `vkDestroyDevice` (`last`), and also whenever a submission
/// found a new cause ([`crate::exec::drain`]), so that a program that never destroys its device
/// (or is killed) still has its causes reported.
pub fn exec_report(device: &crate::objects::Device, last: bool) {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // The live devices' numbers by address (an address is reused once a device is destroyed).
    static NUMBERS: OnceLock<Mutex<HashMap<usize, u64>>> = OnceLock::new();
    let Some(dir) = &device.settings.exec else {
        return;
    };
    let address = device as *const crate::objects::Device as usize;
    let n = {
        let mut numbers = crate::objects::lock(NUMBERS.get_or_init(Default::default));
        let n = *numbers
            .entry(address)
            .or_insert_with(|| NEXT.fetch_add(1, Ordering::Relaxed));
        if last {
            numbers.remove(&address);
        }
        n
    };
    let json = crate::objects::lock(&device.findings).json(&device.caps.profile.name);
    let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
    let path = dir.join(format!("device-{}-{n}.json", std::process::id()));
    if let Err(e) = std::fs::write(&path, text) {
        crate::config::say(&format!("{}: {e}", path.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(dispatch: u64) -> Place {
        Place {
            submission: 1,
            dispatch,
        }
    }

    fn earlier(pipeline: &str) -> Between {
        Between {
            pipeline: pipeline.into(),
            place: at(0),
            bytes: (0, 4),
        }
    }

    #[test]
    fn a_run_of_two_devices_reports_both() {
        let device = |dispatches: u64, error: &str| {
            let mut f = Findings::default();
            f.add_hazard("'b'", at(1), "m".into(), earlier("'a'"));
            f.dispatches = dispatches;
            f.submissions = 1;
            f.errors.push(error.into());
            f.json("default")
        };
        let one = merge(None, device(2, "first"));
        assert_eq!(
            (one["devices"].as_u64(), one["dispatches"].as_u64()),
            (Some(1), Some(2))
        );
        let two = merge(Some(one), device(3, "second"));
        assert_eq!(two["devices"], 2);
        assert_eq!(
            (two["dispatches"].as_u64(), two["submissions"].as_u64()),
            (Some(5), Some(2))
        );
        let findings = two["findings"].as_array().expect("findings");
        let devices: Vec<_> = findings.iter().map(|f| f["device"].as_u64()).collect();
        assert_eq!(devices, [Some(0), Some(1)]);
        assert_eq!(
            two["errors"],
            serde_json::json!(["device 0, first", "device 1, second"])
        );
        assert_eq!(two["profile"], "default");
    }

    #[test]
    fn hazards_group_per_pair_of_pipelines_and_render() {
        let mut f = Findings::default();
        assert_eq!(
            f.add_hazard("'b'", at(1), "m".into(), earlier("'a'")),
            Some(0)
        );
        // The same pair again, in the same dispatch and in a later one.
        assert_eq!(f.add_hazard("'b'", at(1), "m".into(), earlier("'a'")), None);
        assert_eq!(f.add_hazard("'b'", at(2), "m".into(), earlier("'a'")), None);
        assert_eq!((f.causes[0].count, f.causes[0].dispatches), (3, 2));
        // Another earlier pipeline: another cause.
        assert_eq!(
            f.add_hazard("'b'", at(2), "m".into(), earlier("'c'")),
            Some(1)
        );
        f.dispatches = 3;
        f.submissions = 1;
        let text = text(&f.json("default"));
        assert!(
            text.contains("2 cause(s) of findings, 2 of them undefined behaviour"),
            "{text}"
        );
        assert!(
            text.contains(
                "  --> after 'a' (submission 1 dispatch 0), bytes 0..4 of the allocation, in 'b'"
            ),
            "{text}"
        );
        assert!(
            text.contains("= 3 finding(s) in 2 dispatch(es), first in submission 1 dispatch 1"),
            "{text}"
        );
    }
}
