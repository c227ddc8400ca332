//! `tangle run --policy all`: runs a script under every policy of [`Policy::all`] and reports
//! which fail. A script that passes under some policies and fails under others relies on
//! implementation-defined behaviour (where tangles rejoin, which side of a branch runs first,
//! how a switch groups invocations), so it fails as a whole.

use super::{io, Exit};
use tangle::cpu_backend::CpuBackend;
use tangle_amber::{RunReport, Script, Status};
use tangle_exec::{Policy, Profile, Reconvergence, RunOptions};

/// The outcome of the script under one policy.
struct Outcome {
    policy: Policy,
    report: RunReport,
}

/// Runs `script` under every policy; prints one line per policy and a verdict.
pub fn run_all(
    name: &str,
    script: &Script,
    profile: &Profile,
    options: &RunOptions,
    json: bool,
) -> Exit {
    let outcomes: Vec<Outcome> = Policy::all()
        .into_iter()
        .map(|policy| {
            let mut backend = CpuBackend::new(
                profile.clone(),
                RunOptions {
                    policy,
                    trace: false,
                    ..options.clone()
                },
            );
            Outcome {
                policy,
                report: tangle_amber::run(script, &mut backend),
            }
        })
        .collect();
    let (exit, verdict) = verdict(&outcomes);
    if json {
        let runs: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| serde_json::json!({ "policy": o.policy.to_string(), "report": o.report }))
            .collect();
        let value = serde_json::json!({
            "script": name,
            "policies": runs,
            "policy_dependent": exit == Exit::No && outcomes.iter().any(|o| o.report.status == Status::Pass),
            "verdict": verdict,
        });
        match serde_json::to_string_pretty(&value) {
            Ok(s) => println!("{s}"),
            Err(e) => io::report(&format!("cannot print the report: {e}")),
        }
    } else {
        for o in &outcomes {
            let held = o.report.expects.iter().filter(|e| e.passed).count();
            let status = match o.report.status {
                Status::Pass => "PASS",
                Status::Fail => "FAIL",
                Status::Unsupported => "UNSUPPORTED",
                Status::Error => "ERROR",
            };
            println!(
                "{status} {name} under --policy {}: {held}/{} expectations held",
                o.policy,
                o.report.expects.len()
            );
            for e in o.report.expects.iter().filter(|e| !e.passed) {
                println!("  {name}:{}: EXPECT failed: {}", e.line, e.message);
            }
            for ub in &o.report.undefined_behaviour {
                println!("  {name}: undefined behaviour: {ub}");
            }
            if let (Some(m), Status::Error | Status::Unsupported) =
                (&o.report.message, o.report.status)
            {
                println!("  {name}: {m}");
            }
        }
        println!("{name}: {verdict}");
    }
    exit
}

/// The exit code and verdict line of a run under every policy.
fn verdict(outcomes: &[Outcome]) -> (Exit, String) {
    let with = |s: Status| -> Vec<String> {
        outcomes
            .iter()
            .filter(|o| o.report.status == s)
            .map(|o| o.policy.to_string())
            .collect()
    };
    let (pass, fail) = (with(Status::Pass), with(Status::Fail));
    if !with(Status::Error).is_empty() {
        return (Exit::Unusable, "ERROR: the script could not be run".into());
    }
    if !with(Status::Unsupported).is_empty() {
        return (
            Exit::Unsupported,
            "UNSUPPORTED: the script needs something the profile lacks".into(),
        );
    }
    match (pass.is_empty(), fail.is_empty()) {
        (_, true) => (
            Exit::Success,
            format!("PASS under all {} policies", outcomes.len()),
        ),
        (true, false) => (Exit::No, "FAIL under every policy".into()),
        (false, false) => {
            // Every maximal policy passes: what differs is only where tangles rejoin.
            let reconvergence = outcomes.iter().all(|o| {
                o.report.status == Status::Pass || o.policy.reconvergence != Reconvergence::Maximal
            });
            let why = if reconvergence {
                "it relies on maximal reconvergence without declaring MaximallyReconvergesKHR"
            } else {
                "it relies on the order of divergent branches or the grouping of switch cases"
            };
            (
                Exit::No,
                format!(
                    "FAIL: the results depend on the scheduling policy (pass under {}; fail under \
                     {}): the shader relies on implementation-defined behaviour: {why}",
                    pass.join(" "),
                    fail.join(" ")
                ),
            )
        }
    }
}
