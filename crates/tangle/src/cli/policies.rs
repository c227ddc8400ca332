//! `tangle run --policy all`: runs a script under every policy of [`Policy::all`] and reports
//! which fail. A script that passes under some policies and fails under others relies on
//! implementation-defined behaviour (where tangles rejoin, which side of a branch runs first,
//! how a switch groups invocations), so it fails as a whole.

use super::report::{exit_for, expectations, print_json};
use super::Exit;
use tangle::cpu_backend::CpuBackend;
use tangle_amber::{RunReport, Script, Status};
use tangle_exec::check::robust::Robustness;
use tangle_exec::{Policy, Profile, Reconvergence, RobustChoice, RunOptions};

/// The outcome of the script under one policy.
struct Outcome {
    policy: Policy,
    report: RunReport,
}

/// Runs `script` under every policy; prints one line per policy and a verdict.
pub fn run_all(
    name: &str,
    script: &Script,
    (profile, options, robustness): (&Profile, &RunOptions, Option<Robustness>),
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
            if let Some(r) = robustness {
                backend = backend.with_robustness(r);
            }
            Outcome {
                policy,
                report: tangle_amber::run(script, &mut backend),
            }
        })
        .collect();
    let (status, verdict) = verdict(&outcomes);
    let exit = exit_for(status);
    if json {
        let runs: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| serde_json::json!({ "policy": o.policy.to_string(), "report": o.report }))
            .collect();
        print_json(&serde_json::json!({
            "script": name,
            "status": status,
            "policies": runs,
            "policy_dependent": status == Status::Fail && outcomes.iter().any(|o| o.report.status == Status::Pass),
            "verdict": verdict,
        }));
    } else {
        for o in &outcomes {
            println!(
                "{} {name} under --policy {}: {}",
                o.report.status.word(),
                o.policy,
                expectations(&o.report)
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

/// The status and verdict line of a run under every policy.
fn verdict(outcomes: &[Outcome]) -> (Status, String) {
    let with = |s: Status| -> Vec<String> {
        outcomes
            .iter()
            .filter(|o| o.report.status == s)
            .map(|o| o.policy.to_string())
            .collect()
    };
    let (pass, fail) = (with(Status::Pass), with(Status::Fail));
    if !with(Status::Error).is_empty() {
        return (Status::Error, "ERROR: the script could not be run".into());
    }
    if !with(Status::Unsupported).is_empty() {
        return (
            Status::Unsupported,
            "UNSUPPORTED: the script needs something the profile lacks".into(),
        );
    }
    match (pass.is_empty(), fail.is_empty()) {
        (_, true) => (
            Status::Pass,
            format!("PASS under all {} policies", outcomes.len()),
        ),
        (true, false) => (Status::Fail, "FAIL under every policy".into()),
        (false, false) => {
            // Every maximal policy passes: what differs is only where tangles rejoin.
            let reconvergence = outcomes.iter().all(|o| {
                o.report.status == Status::Pass || o.policy.reconvergence != Reconvergence::Maximal
            });
            // Only the robust choice fails: what differs is the value of an access outside a
            // buffer, which robustBufferAccess leaves to the implementation.
            let robust = outcomes
                .iter()
                .all(|o| o.report.status == Status::Pass || o.policy.robust != RobustChoice::Zero);
            let why = if robust {
                "it relies on what an access outside a buffer gives under robustBufferAccess \
                 (zero, or values from within the bound range)"
            } else if reconvergence {
                "it relies on maximal reconvergence without declaring MaximallyReconvergesKHR"
            } else {
                "it relies on the order of divergent branches or the grouping of switch cases"
            };
            (
                Status::Fail,
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
