//! Runs every Amber script (AmberScript `*.amber` and VkScript `*.vkscript`) under `tests/amber/`
//! through the `tangle` binary and checks the exit codes: the top level, `group/`, `dot/`,
//! `vkscript/`, `layout/` (matrices and structs whose padding lies past their buffer's end),
//! `robust/` (accesses past a buffer under a robustness feature), `drivers/` (reproducers of
//! driver bugs, correct on the CPU), `wide/` (the executor's wide path) and `debug/` (`DEBUG`,
//! which only the CPU executor follows) pass (0), `fail/`, `group/fail/` and
//! `debug/fail/` fail (1), `unsupported/` need a missing feature or something
//! outside tangle's subset (77), `unusable/` cannot be used (2). `pending/` holds scripts waiting
//! on executor features and is not run.

mod summary;

use std::path::{Path, PathBuf};
use std::process::Command;
use summary::say;

fn amber_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber")
        .join(sub)
}

/// The `.amber` and `.vkscript` files directly inside `dir`, sorted.
fn scripts(sub: &str) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = std::fs::read_dir(amber_dir(sub))
        .unwrap_or_else(|e| panic!("tests/amber/{sub}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "amber" || x == "vkscript")
        })
        .collect();
    list.sort();
    assert!(!list.is_empty(), "no scripts in tests/amber/{sub}");
    list
}

/// Runs `tangle run SCRIPT ARGS...`: (exit code, stdout, stderr).
fn tangle_run(script: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(args)
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Checks that every script in `sub` exits with `code`, reporting all that do not.
fn expect_exit(sub: &str, code: i32) -> Vec<(PathBuf, String, String)> {
    let mut wrong = Vec::new();
    let mut outputs = Vec::new();
    for script in scripts(sub) {
        let (got, stdout, stderr) = tangle_run(&script, &["--threads", "2"]);
        if got != code {
            wrong.push(format!(
                "{}: exit {got}, expected {code}\n{stdout}{stderr}",
                script.display()
            ));
        }
        outputs.push((script, stdout, stderr));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    outputs
}

/// The script folders whose scripts pass, and those that fail.
const PASSING: [&str; 9] = [
    "", "group", "dot", "vkscript", "layout", "robust", "drivers", "wide", "debug",
];
const FAILING: [&str; 3] = ["fail", "group/fail", "debug/fail"];

/// The examples every run checks.
const EXAMPLES: [&str; 4] = [
    "saxpy.amber",
    "rotate.amber",
    "dot.amber",
    "coopmat_gemm.amber",
];

#[test]
fn script_count() {
    // Printed, and kept for `.ci/run` to show, so a run shows how many scripts it covers.
    let mut total = EXAMPLES.len();
    say(&format!("examples: {}", EXAMPLES.len()));
    for sub in PASSING
        .iter()
        .chain(&FAILING)
        .chain(&["unsupported", "unusable"])
    {
        let n = scripts(sub).len();
        total += n;
        say(&format!(
            "{}: {n} scripts",
            Path::new("tests/amber").join(sub).display()
        ));
    }
    say(&format!("example and test scripts run: {total}"));
    assert!(total > EXAMPLES.len());
}

#[test]
fn passing_scripts_exit_0() {
    for sub in PASSING {
        for (script, stdout, _) in expect_exit(sub, 0) {
            assert!(stdout.contains("PASS"), "{}: {stdout}", script.display());
        }
    }
}

#[test]
fn failing_scripts_exit_1() {
    for sub in FAILING {
        for (script, stdout, _) in expect_exit(sub, 1) {
            assert!(stdout.contains("FAIL"), "{}: {stdout}", script.display());
        }
    }
}

#[test]
fn examples_pass() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for name in EXAMPLES {
        let (code, stdout, stderr) = tangle_run(&examples.join(name), &[]);
        assert_eq!(code, 0, "examples/{name}: {stdout}{stderr}");
    }
}

#[test]
fn the_coopmat_example_passes_under_every_element_layout_and_a_bad_layout_is_a_usage_error() {
    let gemm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/coopmat_gemm.amber");
    for layout in ["row-striped", "column-striped", "shuffled:7"] {
        let (code, stdout, stderr) = tangle_run(&gemm, &["--coopmat-layout", layout]);
        assert_eq!(code, 0, "{layout}: {stdout}{stderr}");
    }
    let (code, _, stderr) = tangle_run(&gemm, &["--coopmat-layout", "diagonal"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--coopmat-layout diagonal"), "{stderr}");
    // A script that reads back the elements an invocation holds passes under one layout only.
    let held = amber_dir("cli/coopmat_column_striped.amber");
    assert_eq!(tangle_run(&held, &[]).0, 1);
    assert_eq!(
        tangle_run(&held, &["--coopmat-layout", "column-striped"]).0,
        0
    );
}

#[test]
fn a_failed_expect_prints_index_expected_and_actual() {
    let (code, stdout, _) = tangle_run(&amber_dir("fail/expect_mismatch.amber"), &[]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("expect_mismatch.amber:19: EXPECT failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("element 2 component 0 (byte 8): expected EQ 7, actual 6"),
        "{stdout}"
    );
}

#[test]
fn unsupported_scripts_exit_77_and_name_the_requirement() {
    // What each script's report must name.
    let reasons = [
        ("missing_feature.amber", "DEVICE_FEATURE geometryShader"),
        ("missing_extension.amber", "DEVICE_EXTENSION"),
        ("graphics_pipeline.amber", "vertex shaders"),
        ("opencl_c.amber", "OPENCL-C"),
        ("clear.amber", "CLEAR"),
        ("debug.amber", "OpLine"),
        ("debug_local.amber", "no local of A is named 'q'"),
        (
            "debug_callstack.amber",
            "EXPECT CALLSTACK with a frame's column: upstream Amber's stack frames (debug::StackFrame) hold a function name, a file and a line, no column",
        ),
        ("debug_vertex_thread.amber", "VERTEX_INDEX"),
        ("depth_stencil_format.amber", "D24_UNORM_S8_UINT"),
        ("compressed_format.amber", "BC1_RGB_UNORM_BLOCK"),
        ("image_probe.amber", "image probes"),
        ("unknown_optimization_pass.amber", "--no-such-pass"),
        ("compile_option.amber", "'-O'"),
        ("vkscript_graphics.vkscript", "[vertex shader passthrough]"),
    ];
    for (script, stdout, _) in expect_exit("unsupported", 77) {
        let name = script
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let reason = reasons
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("{name}: add what its report must name to the list"));
        assert!(
            stdout.contains("UNSUPPORTED") && stdout.contains(reason),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn shader_optimization_without_spirv_opt_is_refused_naming_the_pass() {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(amber_dir("shader_optimization.amber"))
        .env("TANGLE_SPIRV_OPT", "/no/such/spirv-opt")
        .output()
        .expect("the tangle binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(77), "{stdout}");
    assert!(
        stdout.contains("--graphics-robust-access") && stdout.contains("spirv-opt"),
        "{stdout}"
    );
}

#[test]
fn file_inputs_are_relative_to_the_script_not_the_working_directory() {
    let script = amber_dir("files.amber");
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(&script)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the tangle binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // From standard input there is no directory to read files from: unusable, said so.
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(["run", "-"])
        .stdin(std::fs::File::open(&script).expect("files.amber"))
        .output()
        .expect("the tangle binary runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot name files"));
}

#[test]
fn unusable_scripts_exit_2() {
    let outputs = expect_exit("unusable", 2);
    let (_, _, stderr) = outputs
        .iter()
        .find(|(p, ..)| p.ends_with("parse_error.amber"))
        .expect("parse_error.amber");
    assert!(
        stderr.contains("parse_error.amber:3:23: unknown or unsupported type 'uint33'"),
        "{stderr}"
    );
    let (_, stdout, _) = outputs
        .iter()
        .find(|(p, ..)| p.ends_with("compile_error.amber"))
        .expect("compile_error.amber");
    assert!(stdout.contains("line 6: 'undeclared_variable'"), "{stdout}");
    let (_, stdout, _) = outputs
        .iter()
        .find(|(p, ..)| p.ends_with("nothing_to_run.amber"))
        .expect("nothing_to_run.amber");
    assert!(
        stdout.contains("ERROR") && stdout.contains("no RUN and no EXPECT"),
        "{stdout}"
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    for script in scripts("") {
        let (c1, one, _) = tangle_run(&script, &["--threads", "1", "--json"]);
        let (c4, four, _) = tangle_run(&script, &["--threads", "4", "--json"]);
        assert_eq!((c1, &one), (c4, &four), "{}", script.display());
    }
}

#[test]
fn json_reports_every_expectation() {
    let (code, stdout, _) = tangle_run(&amber_dir("fail/expect_mismatch.amber"), &["--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let report = &v["report"];
    assert_eq!(report["status"], "Fail");
    assert_eq!(report["runs"], 1);
    let expects = report["expects"].as_array().expect("an expects array");
    assert_eq!(expects.len(), 2);
    assert_eq!(expects[0]["passed"], true);
    assert_eq!(expects[1]["passed"], false);
    assert_eq!(expects[1]["mismatches"][0]["byte_offset"], 8);
    assert_eq!(expects[1]["mismatches"][0]["actual"], "6");
}

#[test]
fn limits_and_options_are_passed_through() {
    let script = amber_dir("control_flow.amber");
    assert_eq!(tangle_run(&script, &["--profile", "lavapipe"]).0, 0);
    assert_eq!(tangle_run(&script, &["--subgroup-size", "4"]).0, 0);
    assert_eq!(tangle_run(&script, &["--subgroup-size", "3"]).0, 2);
    assert_eq!(tangle_run(&script, &["--profile", "no-such-device"]).0, 2);
    assert_eq!(tangle_run(&amber_dir("no-such-script.amber"), &[]).0, 2);
}

#[test]
fn subgroup_size_flags_reach_the_shader() {
    let script = amber_dir("cli/subgroup_size_8.amber");
    assert_eq!(tangle_run(&script, &["--subgroup-size", "8"]).0, 0);
    assert_eq!(tangle_run(&script, &["--profile", "lavapipe"]).0, 0);
    let (code, stdout, _) = tangle_run(&script, &["--subgroup-size", "16"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("expected EQ 8, actual 16"), "{stdout}");
}

#[test]
fn scripts_can_come_from_standard_input() {
    use std::io::Write;
    let text = std::fs::read(amber_dir("double.amber")).expect("double.amber");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(["run", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the tangle binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&text)
        .expect("write the script");
    let out = child.wait_with_output().expect("tangle finishes");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("PASS <stdin>"));
}

#[test]
fn step_and_time_limits_stop_runaway_loops() {
    let script = amber_dir("cli/runaway_loop.amber");
    let (code, stdout, _) = tangle_run(&script, &["--step-limit", "10000"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("step limit of 10000 instructions"),
        "{stdout}"
    );
    let (code, stdout, _) = tangle_run(
        &script,
        &["--step-limit", "100000000000", "--time-limit", "0.3"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("time limit of 300 ms"), "{stdout}");
}

#[test]
fn no_checks_turns_undefined_behaviour_findings_off() {
    // This script fails only because the sanitizer finds undefined behaviour; its EXPECTs hold.
    let path = amber_dir("fail/division_by_zero.amber");
    let (with_checks, _, _) = tangle_run(&path, &[]);
    assert_eq!(with_checks, 1, "division_by_zero with checks");
    let (without, stdout, stderr) = tangle_run(&path, &["--no-checks"]);
    assert_eq!(without, 0, "division_by_zero --no-checks: {stdout}{stderr}");
    // Out-of-bounds accesses are memory errors and stay reported.
    let (code, _, _) = tangle_run(&amber_dir("fail/out_of_bounds.amber"), &["--no-checks"]);
    assert_eq!(code, 1);
}

/// An undefined result (a rotate reading an inactive invocation, an AccSat dot product whose
/// product overflows) is a warning: reported, the script passes; `--deny` fails it, and
/// `--no-checks` silences it even then.
#[test]
fn undefined_results_warn_and_deny_fails_them() {
    for (script, kind) in [
        ("group/rotate_inactive_source.amber", "group-value"),
        ("dot/acc_sat_overflow.amber", "dot-overflow"),
    ] {
        let path = amber_dir(script);
        let (code, stdout, _) = tangle_run(&path, &[]);
        assert_eq!(code, 0, "{script}: {stdout}");
        assert!(
            stdout.contains(&format!("warning[{kind}]")),
            "{script}: {stdout}"
        );
        for deny in [kind, "all"] {
            let (code, stdout, _) = tangle_run(&path, &["--deny", deny]);
            assert_eq!(code, 1, "{script} --deny {deny}: {stdout}");
            assert!(
                stdout.contains(&format!("error[{kind}]")),
                "{script}: {stdout}"
            );
        }
        let (code, stdout, _) = tangle_run(&path, &["--deny", "all", "--no-checks"]);
        assert_eq!(code, 0, "{script} --deny all --no-checks: {stdout}");
    }
}
