//! `tangle exec -- PROGRAM`: an unmodified Vulkan program on tangle's driver. The program is
//! tangle's own Vulkan backend (`tangle run --backend vulkan SCRIPT`), a real Vulkan program
//! through the loader: a script with a data race, a clean one, one whose findings are
//! warnings, and one that passes only with subgroups of 8; plus `sh` for the exit statuses of
//! a program's own code, a signal and a program that cannot start. Ignored where no Vulkan
//! loader is installed (`cfg(vulkan_driver)`).
#![cfg_attr(not(vulkan_driver), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A script of `tests/amber/`.
fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber")
        .join(name)
        .display()
        .to_string()
}

/// A scratch path for this test process.
fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tangle_exec_{}_{name}", std::process::id()))
}

/// `tangle exec OPTIONS -- PROGRAM...`: (exit code, stdout, stderr).
fn exec(options: &[&str], program: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("exec")
        .args(options)
        .arg("--")
        .args(program)
        .env_remove("TANGLE_PROFILE")
        .env_remove("TANGLE_REPORT")
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tangle exec OPTIONS -- tangle run --backend vulkan SCRIPT`.
fn exec_script(options: &[&str], name: &str) -> (i32, String, String) {
    let tangle = env!("CARGO_BIN_EXE_tangle");
    exec(
        options,
        &[tangle, "run", "--backend", "vulkan", &script(name)],
    )
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_racy_program_is_reported_and_fails_with_the_error_exitcode() {
    let report = scratch("race.json");
    let path = report.to_str().expect("a UTF-8 path");
    let racy = "sanitizer/race_buffer_invocations.bad.amber";
    let (code, out, err) = exec_script(&["--report", path], racy);
    // The program's own status: the script has no expectation to fail.
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ran on Vulkan device 0: tangle (default profile)"),
        "{out}"
    );
    assert!(
        err.contains("1 cause(s) of findings, 1 of them undefined behaviour"),
        "{err}"
    );
    assert!(
        err.contains("error[race]: data race on buffer (set 0, binding 0)"),
        "{err}"
    );
    // Printed once, by tangle exec (the driver's own summary is off under it).
    assert_eq!(err.matches("error[race]").count(), 1, "{err}");
    let text = std::fs::read_to_string(&report).expect("--report written");
    let _ = std::fs::remove_file(&report);
    let json: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(json["devices"], 1);
    assert_eq!(json["dispatches"], 1);
    assert_eq!(json["findings"][0]["kind"], "race");
    assert_eq!(json["findings"][0]["severity"], "error");
    // --error-exitcode: N when undefined behaviour was found.
    let (code, _, err) = exec_script(&["--error-exitcode", "9"], racy);
    assert_eq!(code, 9, "{err}");
    // --allow race: not looked for, so none found and the program's status.
    let (code, _, err) = exec_script(&["--allow", "race", "--error-exitcode", "9"], racy);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no undefined behaviour found"), "{err}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn a_clean_program_keeps_its_status() {
    let clean = "sanitizer/race_same_words.ok.amber";
    let (code, out, err) = exec_script(&["--error-exitcode", "9"], clean);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    assert!(
        err.contains("1 dispatch(es) in 1 submission(s): no undefined behaviour found"),
        "{err}"
    );
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn deny_makes_warnings_undefined_behaviour() {
    let warnings = "sanitizer/domain.bad.amber";
    let (code, _, err) = exec_script(&["--error-exitcode", "9"], warnings);
    assert_eq!(code, 0, "warnings only: {err}");
    assert!(err.contains("warning[domain]"), "{err}");
    assert!(err.contains("0 of them undefined behaviour"), "{err}");
    let (code, _, err) = exec_script(&["--deny", "domain", "--error-exitcode", "9"], warnings);
    assert_eq!(code, 9, "{err}");
    assert!(err.contains("error[domain]"), "{err}");
    // A kind named by both lists, or an unknown one, is a usage error before the program runs.
    let (code, out, err) = exec_script(&["--allow", "domain", "--deny", "domain"], warnings);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "the program did not run: {out}");
    let (code, _, err) = exec_script(&["--allow", "nope"], warnings);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown finding kind 'nope'"), "{err}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_subgroup_size_reaches_the_shader() {
    // The script expects gl_SubgroupSize 8: it fails on the default profile's 16.
    let eight = "cli/subgroup_size_8.amber";
    let (code, out, err) = exec_script(&[], eight);
    assert_eq!(code, 1, "{out}{err}");
    let (code, out, err) = exec_script(&["--subgroup-size", "8"], eight);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    let (code, _, err) = exec_script(&["--subgroup-size", "12"], eight);
    assert_eq!(code, 2, "{err}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_view_shows_the_first_lanes_values_on_hover() {
    // As `tangle run --view`: the rotate's values for the watched (first) invocations.
    let dir = scratch("view-values");
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.to_str().expect("a UTF-8 path");
    let (code, _, err) = exec_script(&["--view", path], "group/rotate_divergent.amber");
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(dir.join("pipeline-1.html")).expect("a page");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        page.contains("OpGroupNonUniformRotateKHR"),
        "the rotate is marked"
    );
    let values = page.find("\"values\":[").expect("values on the page");
    assert!(
        page[values..].starts_with("\"values\":[{"),
        "no lane's values recorded"
    );
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_coopmat_layout_reaches_the_shader() {
    // The script expects the elements each invocation holds under the column-striped layout:
    // it fails under the default (row-striped) one.
    let held = "cli/coopmat_column_striped.amber";
    let (code, out, err) = exec_script(&[], held);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("expected EQ 128, actual 8"), "{out}");
    let (code, out, err) = exec_script(&["--coopmat-layout", "column-striped"], held);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    let (code, _, err) = exec_script(&["--coopmat-layout", "diagonal"], held);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--coopmat-layout diagonal"), "{err}");
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_view_has_a_page_per_pipeline_and_an_index() {
    let dir = scratch("view");
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.to_str().expect("a UTF-8 path");
    let (code, _, err) = exec_script(&["--view", path], "maximal_reconvergence.amber");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 picture(s)"), "{err}");
    let index = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    for n in 1..=2 {
        let file = format!("pipeline-{n}.html");
        assert!(index.contains(&format!("href=\"{file}\"")), "{index}");
        let page = std::fs::read_to_string(dir.join(&file)).expect("a page");
        // The page `tangle run --view` writes: its data and its drawing script.
        assert!(page.starts_with("<!DOCTYPE html>"), "{file}");
        assert!(page.contains(&format!("'main' (pipeline {n})")), "{file}");
        assert!(page.contains("\"subgroup_size\":"), "{file}");
        assert!(page.contains("\"splits\""), "{file} draws no splits");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn exit_statuses_follow_the_program() {
    let (code, _, err) = exec(&[], &["sh", "-c", "exit 7"]);
    assert_eq!(code, 7);
    assert!(err.contains("left no report on the tangle driver"), "{err}");
    let (code, _, err) = exec(&[], &["sh", "-c", "kill -SEGV $$"]);
    assert_eq!(code, 128 + 11, "{err}");
    assert!(err.contains("killed by signal 11"), "{err}");
    let (code, _, err) = exec(&[], &["/nonexistent/program"]);
    assert_eq!(code, 127, "{err}");
    assert!(err.contains("cannot run /nonexistent/program"), "{err}");
}
