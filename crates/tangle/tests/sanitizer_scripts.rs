//! The sanitizer's findings, provoked and absent: every `tests/amber/sanitizer/NAME.bad.amber`
//! names in its header (`# expect: KIND ...`) the kind it must be reported for, under every
//! subgroup size and thread count tried (`# expect: KIND warning ...`: reported as a warning,
//! and the script passes; `# expect: KIND always ...`: reported even with `--no-checks`), and
//! its corrected twin `NAME.ok.amber` must pass with no finding. `--allow KIND` and `--no-checks` silence the bad one; `--max-findings` bounds
//! the findings listed one by one but not their count; `--deny` makes a warning fail the run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/amber/sanitizer")
}

/// `tangle run SCRIPT ARGS... --json`: (status, kinds found, the report).
fn run(script: &Path, args: &[&str]) -> (String, Vec<String>, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(args)
        .arg("--json")
        .output()
        .expect("the tangle binary runs");
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("run --json prints one JSON object");
    let status = json["status"].as_str().unwrap_or_default().to_string();
    let mut kinds: Vec<String> = json["report"]["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["kind"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    kinds.sort();
    kinds.dedup();
    (status, kinds, json)
}

/// The pairs: (bad script, its expected kind, whether a warning, the corrected twin).
fn pairs() -> Vec<(PathBuf, String, bool, PathBuf)> {
    let mut bad: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/amber/sanitizer")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".bad.amber"))
        .collect();
    bad.sort();
    assert!(bad.len() >= 7, "{bad:?}");
    bad.into_iter()
        .map(|b| {
            let text = std::fs::read_to_string(&b).expect("readable");
            let header: Vec<&str> = text
                .lines()
                .find_map(|l| l.strip_prefix("# expect: "))
                .expect("an expect header")
                .split_whitespace()
                .collect();
            let kind = header.first().expect("a kind").to_string();
            let warning = header.get(1) == Some(&"warning");
            let ok = PathBuf::from(b.to_string_lossy().replace(".bad.amber", ".ok.amber"));
            assert!(ok.exists(), "{} has no twin", b.display());
            (b, kind, warning, ok)
        })
        .collect()
}

#[test]
fn each_finding_is_provoked_and_absent_in_its_twin() {
    let mut wrong = Vec::new();
    for (bad, kind, warning, ok) in pairs() {
        for sg in ["4", "32", "64"] {
            for threads in ["1", "3"] {
                let args = ["--subgroup-size", sg, "--threads", threads];
                let (status, kinds, json) = run(&bad, &args);
                // A warning is listed with its severity and does not fail the run.
                let (verdict, severity) = if warning {
                    ("Pass", "warning")
                } else {
                    ("Fail", "error")
                };
                let severities_right = json["report"]["findings"].as_array().is_some_and(|a| {
                    a.iter()
                        .all(|f| f["kind"] != kind.as_str() || f["severity"] == severity)
                });
                if status != verdict || !kinds.contains(&kind) || !severities_right {
                    wrong.push(format!("{} {args:?}: {status} {kinds:?}", bad.display()));
                }
                let (status, kinds, _) = run(&ok, &args);
                if status != "Pass" || !kinds.is_empty() {
                    wrong.push(format!("{} {args:?}: {status} {kinds:?}", ok.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn allow_and_no_checks_silence_a_kind() {
    for (bad, kind, _, _) in pairs() {
        let text = std::fs::read_to_string(&bad).expect("readable");
        let always = text
            .lines()
            .any(|l| l.starts_with(&format!("# expect: {kind} always")));
        // A workgroup race also reads memory no invocation wrote yet, depending on the order.
        let allow = match kind.as_str() {
            "uninit" | "uninit-index" => "uninit,uninit-index".to_string(),
            _ => format!("{kind},uninit,uninit-index"),
        };
        let (status, kinds, _) = run(&bad, &["--allow", &allow, "--subgroup-size", "64"]);
        assert!(
            status == "Pass" && kinds.is_empty(),
            "{}: {status} {kinds:?}",
            bad.display()
        );
        let (status, kinds, _) = run(&bad, &["--no-checks"]);
        if always {
            assert_eq!(status, "Fail", "{}", bad.display());
            assert_eq!(kinds, vec![kind.clone()], "{}", bad.display());
        } else {
            assert_eq!(status, "Pass", "{}", bad.display());
            assert!(kinds.is_empty(), "{}: {kinds:?}", bad.display());
        }
    }
    let (status, _, json) = run(&dir().join("race_workgroup.ok.amber"), &["--allow", "nope"]);
    assert_eq!(status, "Error");
    assert_eq!(json["error"]["kind"], "usage");
}

#[test]
fn one_diagnostic_per_cause_with_its_count() {
    let script = dir().join("race_workgroup.bad.amber");
    let (_, _, json) = run(&script, &["--subgroup-size", "64"]);
    let findings = json["report"]["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(f["kind"], "race");
    // Each of the 64 invocations reads the element its neighbour wrote.
    assert_eq!(f["count"], 64);
    assert_eq!(f["invocations"], serde_json::json!([[0, 0, 0], [63, 0, 0]]));
    assert_eq!(f["findings"].as_array().map(Vec::len), Some(64));
    assert_eq!(
        json["report"]["undefined_behaviour"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    // --max-findings bounds the list and the race check's work.
    let (_, _, json) = run(&script, &["--subgroup-size", "64", "--max-findings", "5"]);
    let f = &json["report"]["findings"][0];
    assert_eq!(f["findings"].as_array().map(Vec::len), Some(5));
    assert_eq!(f["count"], 5);
    // The text names the kind, the instruction's place and the count, once.
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(["run", "--subgroup-size", "64"])
        .arg(&script)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().filter(|l| l.contains("  --> ")).count(),
        1,
        "{text}"
    );
    assert!(text.contains("64 times"), "{text}");
    // The GLSL is compiled with glslang -g: the read is shown at its GLSL line, and the write
    // it races with is named by its line too.
    assert!(text.contains("  --> embedded-shaders/s:11"), "{text}");
    assert!(text.contains("11 | o[i] = s[i];"), "{text}");
    assert!(
        text.contains("OpStore (word") && text.contains("embedded-shaders/s:10)"),
        "{text}"
    );
}

/// A warning is printed and listed but leaves the verdict and the exit code alone.
#[test]
fn warnings_do_not_fail_the_run() {
    let script = dir().join("domain.bad.amber");
    let (status, _, json) = run(&script, &["--subgroup-size", "32"]);
    assert_eq!(status, "Pass");
    assert_eq!(
        json["report"]["undefined_behaviour"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
    let warnings = json["report"]["warnings"].as_array().map_or(0, Vec::len);
    assert_eq!(warnings, 7, "{}", json["report"]["warnings"]);
    let sqrt = &json["report"]["findings"][0];
    assert_eq!(sqrt["kind"], "domain");
    assert_eq!(sqrt["severity"], "warning");
    // x[i] - 1.5 < 0 for x[i] = i / 64 < 1.5: invocations 0..=95.
    assert_eq!(sqrt["count"], 96);
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(&script)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning[domain]: GLSL.std.450 Sqrt(-1.5)"),
        "{text}"
    );
    assert!(text.contains("PASS"), "{text}");
}

/// `tangle run SCRIPT`'s text report.
fn text_report(script: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .output()
        .expect("runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// With `OpLine` and the source in `OpSource` (glslang `-g`), a finding is shown at its GLSL
/// file, line and column, with the line's text; `--json` gives the place as `source`.
#[test]
fn findings_show_the_glsl_source_line() {
    let script = dir().join("division_source_line.bad.amber");
    let text = text_report(&script);
    assert!(text.contains("  --> div.comp:6:3"), "{text}");
    assert!(text.contains("   6 | o[i] = 12u / o[i];"), "{text}");
    let (_, _, json) = run(&script, &[]);
    assert_eq!(json["report"]["findings"][0]["source"], "div.comp:6:3");
}

/// GLSL is compiled with glslang `-g`: a finding in a GLSL script is shown at the GLSL line,
/// in the file upstream Amber names a script's shader (`embedded-shaders/NAME`), with its text.
#[test]
fn findings_in_glsl_scripts_show_the_glsl_line() {
    let script = dir().join("division_glsl_line.bad.amber");
    let text = text_report(&script);
    assert!(text.contains("  --> embedded-shaders/div:6"), "{text}");
    assert!(text.contains("   6 | o[i] = 12u / o[i];"), "{text}");
    let (_, kinds, json) = run(&script, &[]);
    assert_eq!(kinds, ["division"]);
    assert_eq!(
        json["report"]["findings"][0]["source"],
        "embedded-shaders/div:6"
    );
}

/// `tangle run SCRIPT ARGS...`'s exit code.
fn exit_code(script: &Path, args: &[&str]) -> Option<i32> {
    Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(args)
        .output()
        .expect("runs")
        .status
        .code()
}

/// GraphicsFuzz's `uint d; if (d != 0u)`: an undefined value deciding a branch is a warning
/// (SPIR-V leaves the value undefined, not the behaviour), so the script passes, exit 0, with
/// the finding reported with its severity and spec sentence; `--deny uninit` and `--deny all`
/// fail it. `--deny` of an unknown kind, or of one `--allow` names too, is a usage error.
#[test]
fn an_undefined_branch_condition_warns_and_deny_fails_it() {
    let script = dir().join("uninit_loops.bad.amber");
    let (status, kinds, json) = run(&script, &[]);
    assert_eq!(
        (status.as_str(), kinds.clone()),
        ("Pass", vec!["uninit".to_string()])
    );
    let report = &json["report"];
    assert_eq!(
        report["undefined_behaviour"].as_array().map(Vec::len),
        Some(0)
    );
    assert!(report["warnings"].as_array().is_some_and(|w| !w.is_empty()));
    for f in report["findings"].as_array().into_iter().flatten() {
        assert_eq!(f["severity"], "warning", "{f}");
        assert_eq!(f["default_severity"], "warning", "{f}");
        assert!(
            f["spec"].as_str().is_some_and(|s| s.contains("OpUndef")),
            "{f}"
        );
        assert!(
            f["message"]
                .as_str()
                .is_some_and(|m| m.contains("branch condition")),
            "{f}"
        );
    }
    assert_eq!(exit_code(&script, &[]), Some(0));
    assert!(text_report(&script).contains("warning[uninit]"));
    for deny in ["uninit", "all", "domain, uninit"] {
        let (status, _, json) = run(&script, &["--deny", deny]);
        assert_eq!(status, "Fail", "--deny {deny}");
        let f = &json["report"]["findings"][0];
        assert_eq!(f["severity"], "error", "--deny {deny}: {f}");
        assert_eq!(f["default_severity"], "warning", "--deny {deny}: {f}");
        assert_eq!(exit_code(&script, &["--deny", deny]), Some(1));
    }
    // Denying other kinds leaves it a warning; allowing it with `--deny all` turns it off.
    assert_eq!(run(&script, &["--deny", "domain,race"]).0, "Pass");
    let (status, kinds, _) = run(&script, &["--allow", "uninit", "--deny", "all"]);
    assert_eq!((status.as_str(), kinds), ("Pass", Vec::<String>::new()));
    for args in [
        &["--deny", "nope"][..],
        &["--deny", "uninit,nope"],
        &["--allow", "uninit", "--deny", "uninit"],
        &["--allow", "race,domain", "--deny", "domain"],
    ] {
        let (status, _, json) = run(&script, args);
        assert_eq!(status, "Error", "{args:?}");
        assert_eq!(json["error"]["kind"], "usage", "{args:?}");
        assert_eq!(exit_code(&script, args), Some(2), "{args:?}");
    }
}

/// Undefined behaviour stays an error: a race of workgroups storing the same words, an index
/// from an undefined value, stores past a buffer shorter than its block; `--deny all` changes
/// nothing there.
#[test]
fn undefined_behaviour_stays_an_error() {
    let fail = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/amber/fail");
    for (script, kind) in [
        (dir().join("race_same_words.bad.amber"), "race"),
        (dir().join("uninit_index.bad.amber"), "uninit-index"),
        (
            fail.join("blocks_longer_than_buffers.amber"),
            "out-of-bounds",
        ),
    ] {
        for args in [&[][..], &["--deny", "all"]] {
            let (status, kinds, json) = run(&script, args);
            assert_eq!(status, "Fail", "{} {args:?}", script.display());
            assert!(kinds.contains(&kind.to_string()), "{kinds:?}");
            let f = json["report"]["findings"]
                .as_array()
                .and_then(|a| a.iter().find(|f| f["kind"] == kind))
                .cloned()
                .unwrap_or_default();
            assert_eq!(f["severity"], "error", "{f}");
            assert_eq!(f["default_severity"], "error", "{f}");
            assert!(
                f["spec"].as_str().is_some_and(|s| s.contains("must")),
                "{f}"
            );
        }
    }
}
