//! `TANGLE_VIEW=DIR`: the pictures of how each pipeline's invocations diverged and
//! reconverged (issue 32), one per pipeline: its first dispatch, traced.
//!
//! The renderer (`tangle::view`, the page `tangle run --view` writes) lives in the `tangle`
//! crate, which depends on this one (`tangle driver`, `tangle exec`): the driver cannot call it
//! without a dependency cycle, and moving it into a crate of its own would bring its HTML
//! templates and the Amber backend's types into the driver library that every program loads.
//! So the layering is: the driver dumps what a page needs — the dispatch's trace
//! (`docs/trace-format.md`), the module's words, the grid and the findings — as
//! `DIR/pipeline-N.json`, and `tangle exec --view DIR` renders each into `DIR/pipeline-N.html`
//! with an `index.html` linking them when the program ends (`crates/tangle/src/cli/exec.rs`).
//! At most [`MAX_PIPELINES`] pipelines are drawn, the first ones dispatched.

use crate::config::Settings;
use crate::findings::Place;
use crate::objects::{lock, Pipeline};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// The most pipelines drawn in one program run.
pub const MAX_PIPELINES: usize = 32;

/// The pipelines drawn so far, by name (`'main' (pipeline N)`, unique in the process).
fn drawn() -> &'static Mutex<HashSet<String>> {
    static DRAWN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    DRAWN.get_or_init(Default::default)
}

/// Whether the dispatch of `pipeline` about to run should be traced: a view was asked for and
/// the pipeline has no picture yet (and the cap is not reached).
pub fn wanted(settings: &Settings, pipeline: &Pipeline) -> bool {
    if settings.view.is_none() {
        return false;
    }
    let d = lock(drawn());
    !d.contains(&pipeline.name) && d.len() < MAX_PIPELINES
}

/// After a dispatch: dumps its trace, if it has one, as the pipeline's picture data.
pub fn dispatched(
    settings: &Settings,
    pipeline: &Pipeline,
    (place, groups): (Place, [u32; 3]),
    report: &tangle_exec::Report,
) {
    let (Some(dir), Some(trace)) = (&settings.view, &report.trace) else {
        return;
    };
    let n = {
        let mut d = lock(drawn());
        if !d.insert(pipeline.name.clone()) {
            return;
        }
        d.len()
    };
    let findings: Vec<serde_json::Value> = report
        .summaries
        .iter()
        .filter_map(|s| {
            let first = s.first()?;
            // The first findings one by one, to place them at their lanes.
            let instances: Vec<serde_json::Value> = report
                .diagnostics
                .iter()
                .filter(|d| d.finding.kind() == s.kind && d.at.offset == first.at.offset)
                .take(16)
                .map(|d| {
                    serde_json::json!({
                        "invocation": d.invocation,
                        "workgroup": d.workgroup,
                        "message": d.finding.to_string(),
                    })
                })
                .collect();
            Some(serde_json::json!({
                "instances": instances,
                "kind": s.kind.name(),
                "severity": tangle_exec::check::kind::severity(s.kind, settings.deny).name(),
                "message": first.finding.to_string(),
                "instruction": first.at.name,
                "word": first.at.offset,
                "count": s.count,
            }))
        })
        .collect();
    let trace: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap_or_default();
    let dump = serde_json::json!({
        "pipeline": pipeline.label(),
        "submission": place.submission,
        "dispatch": place.dispatch,
        "spirv": pipeline.module.module.to_words(),
        "local_size": pipeline.exec.local_size(),
        "groups": groups,
        "findings": findings,
        "trace": trace,
    });
    let path = dir.join(format!("pipeline-{n}.json"));
    let text = serde_json::to_string(&dump).unwrap_or_default();
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text)) {
        crate::config::say(&format!("{}={}: {e}", crate::config::VIEW, dir.display()));
    }
}
