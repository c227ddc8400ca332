//! `tangle run SCRIPT --view FILE.html [--view-policies P,Q]`: runs the script with its trace
//! on (under one policy, or under each of two) and writes the page of [`tangle::view`].

use super::unusable::{Kind, Unusable};
use tangle::cpu_backend::{CpuBackend, TracedRun};
use tangle_amber::{RunReport, Script};
use tangle_exec::check::robust::Robustness;
use tangle_exec::{Policy, Profile, RunOptions};

/// Invocations per dispatch whose values the page shows on hover.
const WATCHED: usize = tangle_exec::trace::VIEW_WATCHED;

/// The two policies `--view-policies` names: `A,B`, each one part of a policy
/// (`maximal,weak`, `true-first,false-first`), or, since a policy's own parts are
/// comma-separated, two whole policies joined by `;` (`maximal,true-first;weak,false-first`).
pub fn policies(list: &str) -> Result<[Policy; 2], Unusable> {
    let usage = |m: String| Unusable::new(Kind::Usage, format!("--view-policies {list}: {m}"));
    let parts: Vec<&str> = match list.contains(';') {
        true => list.split(';').collect(),
        false => list.split(',').collect(),
    };
    let [a, b] = parts.as_slice() else {
        return Err(usage("name two policies".into()));
    };
    let parse = |p: &str| {
        p.trim()
            .parse::<Policy>()
            .map_err(|e| usage(format!("{p}: {e}")))
    };
    Ok([parse(a)?, parse(b)?])
}

/// Runs `script` under each of `policies` with its trace on, writes the page to `path`, and
/// returns the report of the first run (what `tangle run` prints) with its traced dispatches.
pub fn write(
    name: &str,
    script: &Script,
    (profile, options, robustness): (&Profile, &RunOptions, Option<Robustness>),
    policies: &[Policy],
    path: &str,
) -> Result<(RunReport, Vec<TracedRun>), Unusable> {
    let mut reports = Vec::new();
    let mut traced = Vec::new();
    for policy in policies {
        let options = RunOptions {
            policy: *policy,
            trace: true,
            ..options.clone()
        };
        let mut backend = CpuBackend::new(profile.clone(), options).watching_first(WATCHED);
        if let Some(r) = robustness {
            backend = backend.with_robustness(r);
        }
        reports.push(tangle_amber::run(script, &mut backend));
        traced.push(backend.take_traced());
    }
    let names: Vec<String> = policies.iter().map(Policy::to_string).collect();
    let html = tangle::view::Page::new(name, &names, &traced).html();
    std::fs::write(path, html)
        .map_err(|e| Unusable::new(Kind::Io, format!("cannot write the view to {path}: {e}")))?;
    let report = reports.into_iter().next().unwrap_or_else(RunReport::new);
    Ok((report, traced.into_iter().next().unwrap_or_default()))
}
