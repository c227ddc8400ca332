//! `tangle run --policy` and `--trace` on the scripts of `tests/amber/policy/`: the scripts
//! directly there use subgroup operations only in subgroup-uniform control flow and pass under
//! every policy; those in `relies/` pass under the default policy but depend on it, which
//! `--policy all` reports (exit 1).

use std::path::{Path, PathBuf};
use std::process::Command;

fn policy_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber/policy")
        .join(sub)
}

/// The `.amber` files directly inside `tests/amber/policy/SUB`, sorted.
fn scripts(sub: &str) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = std::fs::read_dir(policy_dir(sub))
        .unwrap_or_else(|e| panic!("tests/amber/policy/{sub}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "amber"))
        .collect();
    list.sort();
    assert!(!list.is_empty(), "no scripts in tests/amber/policy/{sub}");
    list
}

/// Runs `tangle run SCRIPT ARGS...`: (exit code, stdout + stderr).
fn tangle_run(script: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(args)
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn uniform_control_flow_scripts_pass_under_every_policy() {
    for script in scripts("") {
        let (code, out) = tangle_run(&script, &["--policy", "all", "--threads", "2"]);
        assert_eq!(code, 0, "{}:\n{out}", script.display());
        let n = tangle_exec::Policy::all().len();
        assert!(
            out.contains(&format!("PASS under all {n} policies")),
            "{out}"
        );
        assert_eq!(
            out.matches("\nPASS ").count() + usize::from(out.starts_with("PASS ")),
            n,
            "{out}"
        );
    }
}

#[test]
fn scripts_relying_on_a_policy_are_reported() {
    for script in scripts("relies") {
        let (code, out) = tangle_run(&script, &["--threads", "2"]);
        assert_eq!(code, 0, "default policy: {}:\n{out}", script.display());
        let (code, out) = tangle_run(&script, &["--policy", "all", "--threads", "2"]);
        assert_eq!(code, 1, "{}:\n{out}", script.display());
        assert!(
            out.contains("the results depend on the scheduling policy"),
            "{out}"
        );
        assert!(out.contains("implementation-defined behaviour"), "{out}");
        assert!(out.contains("FAIL ") && out.contains("PASS "), "{out}");
    }
}

#[test]
fn single_policies_pick_the_behaviour() {
    let maximal = policy_dir("relies").join("relies_on_maximal_reconvergence.amber");
    for (policy, want) in [
        ("maximal", 0),
        ("maximal,false-first,by-selector", 0),
        ("weak", 1),
        ("weak,false-first", 1),
    ] {
        let (code, out) = tangle_run(&maximal, &["--policy", policy]);
        assert_eq!(code, want, "--policy {policy}:\n{out}");
    }
    let order = policy_dir("relies").join("relies_on_branch_order.amber");
    for (policy, want) in [("true-first", 0), ("weak", 0), ("false-first", 1)] {
        let (code, out) = tangle_run(&order, &["--policy", policy]);
        assert_eq!(code, want, "--policy {policy}:\n{out}");
    }
    let (code, out) = tangle_run(&order, &["--policy", "all", "--trace", "unused.json"]);
    assert_eq!(code, 2, "--policy all --trace:\n{out}");
    for bad in ["fastest", "random:x", ""] {
        let (code, out) = tangle_run(&order, &["--policy", bad]);
        assert_eq!(code, 2, "--policy '{bad}':\n{out}");
    }
}

/// A hex mask string of the trace.
fn mask(v: &serde_json::Value) -> u128 {
    let s = v.as_str().expect("a mask string");
    u128::from_str_radix(s.trim_start_matches("0x"), 16).expect("a hex mask")
}

#[test]
fn trace_file_holds_the_splits_and_joins() {
    let script = policy_dir("relies").join("relies_on_maximal_reconvergence.amber");
    let file = std::env::temp_dir().join(format!("tangle-trace-{}.json", std::process::id()));
    let path = file.to_string_lossy().into_owned();
    let (code, out) = tangle_run(&script, &["--trace", &path, "--threads", "2"]);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("the trace is JSON");
    assert_eq!(v["version"], 1);
    let dispatches = v["dispatches"].as_array().expect("dispatches");
    assert_eq!(dispatches.len(), 1);
    let d = &dispatches[0];
    assert_eq!(d["policy"], "maximal,true-first,by-case");
    assert_eq!(d["subgroup_size"], 8);
    assert_eq!(d["dropped"], 0);
    let events = d["events"].as_array().expect("events");
    for sg in 0..2u64 {
        let mine: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e["subgroup"] == sg && e["workgroup"] == serde_json::json!([0, 0, 0]))
            .collect();
        assert_eq!(
            mine.first().map(|e| (&e["kind"], mask(&e["mask"]))),
            Some((&"block".into(), 0xff))
        );
        let of = |kind: &str, list: &str| -> Vec<(u128, Vec<u128>)> {
            mine.iter()
                .filter(|e| e["kind"] == kind)
                .map(|e| {
                    let parts = e[list].as_array().expect("parts");
                    let parts = parts
                        .iter()
                        .map(|p| {
                            if kind == "split" {
                                mask(&p["mask"])
                            } else {
                                mask(p)
                            }
                        })
                        .collect();
                    (mask(&e["mask"]), parts)
                })
                .collect()
        };
        // The outer branch on lane < 4, the inner one on lane < 2; the inner merge rejoins
        // lanes 0-3, the outer merge all eight.
        assert_eq!(
            of("split", "into"),
            vec![(0xff, vec![0x0f, 0xf0]), (0x0f, vec![0x3, 0xc])]
        );
        assert_eq!(
            of("join", "from"),
            vec![(0x0f, vec![0x3, 0xc]), (0xff, vec![0x0f, 0xf0])]
        );
        let split_block = mine
            .iter()
            .find(|e| e["kind"] == "split")
            .map(|e| e["block"].clone());
        assert!(split_block.is_some_and(|b| b.as_u64().is_some_and(|b| b > 0)));
    }
}
