//! Where each pipeline's dispatches ran and where their time went, for speed work
//! (docs/executor.md): per pipeline, the invocations the executor's native tier, wide
//! interpreter and reference path ran, why the faster paths left dispatches to slower ones
//! (the executor's [`tangle_exec::PathNotes`]), and the time in the executor against the
//! driver's own work around it (the buffers' windows in and out). Written to `TANGLE_REPORT`
//! under `pipelines`, and, for programs that never destroy their device (ggml leaves its
//! devices to the end of the process), to `TANGLE_TIERS` as they run.

use std::collections::BTreeMap;
use std::time::Duration;
use tangle_exec::Report;

/// One pipeline's dispatches.
#[derive(Debug, Default)]
struct PipelineTiers {
    dispatches: u64,
    invocations: u64,
    native: u64,
    wide: u64,
    /// The whole dispatch in the driver (`run_dispatch`), the executor included.
    driver: Duration,
    /// In the executor ([`tangle_exec::Timing::total`]).
    exec: Duration,
    /// Of that, in its worker pools ([`tangle_exec::Timing::workers`]).
    workers: Duration,
    /// Each reason a faster path gave, with how many dispatches gave it.
    why: BTreeMap<String, u64>,
}

/// Every pipeline's dispatches so far, by pipeline name.
#[derive(Debug, Default)]
pub struct Tiers {
    pipelines: BTreeMap<String, PipelineTiers>,
}

/// The variable naming the file [`Tiers::write_as_asked`] keeps up to date.
pub const TIERS: &str = "TANGLE_TIERS";

/// The note for a dispatch that no fast path tried: the executor runs those on the reference
/// path alone (a dispatch base, or a cooperative matrix met by plain accesses with the race
/// check on).
const REFERENCE_ONLY: &str = "reference: no fast path tried";

impl Tiers {
    /// Adds one dispatch of `pipeline`: the executor's report, and the time the driver spent
    /// on it in all.
    pub fn add(&mut self, pipeline: &str, report: &Report, driver: Duration) {
        let p = self.pipelines.entry(pipeline.to_string()).or_default();
        let s = &report.stats;
        p.dispatches += 1;
        p.invocations += s.invocations;
        p.native += s.jit_invocations;
        // The executor counts the native tier's invocations among the wide path's too
        // (`Stats::wide_invocations`: the fast paths'); here each tier has its own.
        p.wide += s.wide_invocations.saturating_sub(s.jit_invocations);
        p.driver += driver;
        p.exec += report.timing.total;
        p.workers += report.timing.workers;
        for why in &report.paths.0 {
            *p.why.entry(why.clone()).or_default() += 1;
        }
        if report.paths.0.is_empty() && s.jit_invocations == 0 && s.wide_invocations == 0 {
            *p.why.entry(REFERENCE_ONLY.to_string()).or_default() += 1;
        }
    }

    /// Rewrites the file `TANGLE_TIERS` names, if any, with [`Tiers::json`] (at the end of
    /// every submission: a diagnostic, not for timing runs); a write that fails is said on
    /// stderr.
    pub fn write_as_asked(&self) {
        static PATH: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
        let Some(path) = PATH.get_or_init(|| {
            std::env::var_os(TIERS)
                .filter(|v| !v.is_empty())
                .map(Into::into)
        }) else {
            return;
        };
        let text = serde_json::to_string_pretty(&self.json()).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            crate::config::say(&format!("{TIERS}={}: {e}", path.display()));
        }
    }

    /// The JSON list, the pipelines taking the most time first.
    pub fn json(&self) -> serde_json::Value {
        let mut rows: Vec<_> = self.pipelines.iter().collect();
        rows.sort_by(|a, b| b.1.driver.cmp(&a.1.driver).then(a.0.cmp(b.0)));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let rows: Vec<serde_json::Value> = rows
            .into_iter()
            .map(|(name, p)| {
                serde_json::json!({
                    "pipeline": name,
                    "dispatches": p.dispatches,
                    "invocations": p.invocations,
                    "native_invocations": p.native,
                    "wide_invocations": p.wide,
                    "driver_ms": ms(p.driver),
                    "exec_ms": ms(p.exec),
                    "workers_ms": ms(p.workers),
                    "why": p.why,
                })
            })
            .collect();
        serde_json::Value::Array(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tangle_exec::{PathNotes, Stats};

    #[test]
    fn dispatches_add_up_per_pipeline_with_their_reasons() {
        let mut t = Tiers::default();
        let native = Report {
            stats: Stats {
                invocations: 64,
                wide_invocations: 64,
                jit_invocations: 64,
                ..Stats::default()
            },
            ..Report::default()
        };
        let reference = Report {
            stats: Stats {
                invocations: 32,
                ..Stats::default()
            },
            paths: PathNotes(vec!["native: gave up: x".into(), "wide: gave up: y".into()]),
            ..Report::default()
        };
        t.add("a", &native, Duration::from_millis(1));
        t.add("a", &native, Duration::from_millis(1));
        t.add("b", &reference, Duration::from_millis(5));
        t.add("b", &Report::default(), Duration::from_millis(1));
        let j = t.json();
        // The slowest pipeline first.
        assert_eq!(j[0]["pipeline"], "b");
        assert_eq!(j[0]["dispatches"], 2);
        assert_eq!(j[0]["native_invocations"], 0);
        assert_eq!(j[0]["why"]["native: gave up: x"], 1);
        assert_eq!(j[0]["why"][REFERENCE_ONLY], 1);
        assert_eq!(j[1]["pipeline"], "a");
        assert_eq!(j[1]["invocations"], 128);
        assert_eq!(j[1]["native_invocations"], 128);
        // Not counted twice: none on the wide interpreter, none on the reference path.
        assert_eq!(j[1]["wide_invocations"], 0);
        assert_eq!(j[1]["why"], serde_json::json!({}));
    }
}
