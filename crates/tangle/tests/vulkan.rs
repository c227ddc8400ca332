//! `tangle run --backend vulkan` and `tangle profiles --devices` through the binary: the paths
//! that need no driver (no loader, no driver, CPU-only options) always run; the scripts on a
//! real driver (lavapipe in CI) run when `build.rs` found a loader and a driver manifest, and are
//! reported as ignored otherwise (`TANGLE_REQUIRE_VULKAN=1`, set by `.ci/run`, makes that a build
//! failure instead).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `tangle ARGS...` with `env` set: (exit code, stdout, stderr).
fn tangle(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tangle"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// A loader library name that cannot exist, so the binary runs as on a machine with none.
const NO_LOADER: (&str, &str) = (
    "TANGLE_VULKAN_LOADER",
    "libtangle-no-such-vulkan-loader.so.1",
);

#[test]
fn no_loader_is_unsupported_naming_it() {
    let saxpy = repo("examples/saxpy.amber");
    let (code, stdout, _) = tangle(&["run", "--backend", "vulkan", &saxpy], &[NO_LOADER]);
    assert_eq!(code, 77, "{stdout}");
    assert!(
        stdout.contains("UNSUPPORTED") && stdout.contains("no Vulkan loader"),
        "{stdout}"
    );
    assert!(stdout.contains("2 not reached"), "{stdout}");
    let (code, stdout, _) = tangle(
        &["run", "--backend", "vulkan", "--json", &saxpy],
        &[NO_LOADER],
    );
    assert_eq!(code, 77);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON report");
    assert_eq!(json["status"], "Unsupported");
    let (code, stdout, stderr) = tangle(&["profiles", "--devices"], &[NO_LOADER]);
    assert_eq!((code, stdout.as_str()), (77, ""));
    assert!(stderr.contains("no Vulkan loader"), "{stderr}");
}

#[test]
fn cpu_only_options_and_a_stray_device_are_usage_errors() {
    let saxpy = repo("examples/saxpy.amber");
    for flags in [
        &["--policy", "weak"][..],
        &["--subgroup-size", "4"],
        &["--profile", "nvidia"],
        &["--no-checks"],
    ] {
        let mut args = vec!["run", "--backend", "vulkan", saxpy.as_str()];
        args.extend_from_slice(flags);
        let (code, _, stderr) = tangle(&args, &[NO_LOADER]);
        assert_eq!(code, 2, "{flags:?}: {stderr}");
        assert!(stderr.contains(flags[0]), "{stderr}");
    }
    let (code, _, stderr) = tangle(&["run", &saxpy, "--device", "0"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--backend vulkan"), "{stderr}");
}

/// The `.amber` files directly inside `tests/amber/SUB`, sorted.
fn scripts(sub: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber")
        .join(sub);
    let mut list: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "amber"))
        .collect();
    list.sort();
    list
}

const NEEDS_DRIVER: &str =
    "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)";

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn a_device_is_listed() {
    let (code, stdout, stderr) = tangle(&["profiles", "--devices"], &[]);
    assert_eq!(code, 0, "{NEEDS_DRIVER}: {stdout}{stderr}");
    assert!(stdout.starts_with("0: "), "{stdout}");
    assert!(stdout.contains("subgroup size"), "{stdout}");
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn no_driver_and_no_device_are_unsupported() {
    let saxpy = repo("examples/saxpy.amber");
    // An empty driver search path: the loader is there, but finds no driver.
    let no_icd = [
        ("VK_DRIVER_FILES", "/nonexistent/tangle.json"),
        ("VK_ICD_FILENAMES", "/nonexistent/tangle.json"),
    ];
    let (code, stdout, _) = tangle(&["run", "--backend", "vulkan", &saxpy], &no_icd);
    assert_eq!(code, 77, "{stdout}");
    assert!(stdout.contains("no Vulkan driver"), "{stdout}");
    let (code, stdout, _) = tangle(
        &["run", "--backend", "vulkan", "--device", "999", &saxpy],
        &[],
    );
    assert_eq!(code, 77, "{stdout}");
    assert!(
        stdout.contains("no Vulkan device: no device 999"),
        "{stdout}"
    );
}

/// Runs every script of `sub` on the driver; each must exit `code`, or 77 naming what the
/// device lacks; a failing script (`code` 1) may pass on the driver only when tangle's CPU
/// executor fails it for undefined behaviour, which a driver does not detect. Returns how many
/// ran and how many were unsupported.
fn on_driver(sub: &str, code: i32) -> (usize, usize) {
    let (mut ran, mut skipped) = (0, 0);
    let mut wrong = Vec::new();
    for script in scripts(sub) {
        let path = script.display().to_string();
        let (got, stdout, stderr) = tangle(&["run", "--backend", "vulkan", &path], &[]);
        match got {
            77 if stdout.contains("does not offer") || stdout.contains("offers") => {
                println!("skipped {path}: {}", stdout.lines().last().unwrap_or(""));
                skipped += 1;
            }
            g if g == code => ran += 1,
            0 if code == 1 && cpu_finds_undefined_behaviour(&path) => {
                println!("{path}: passes on the driver, undefined behaviour on the CPU");
                ran += 1;
            }
            _ => wrong.push(format!(
                "{path}: exit {got}, expected {code}\n{stdout}{stderr}"
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    println!("tests/amber/{sub}: {ran} ran, {skipped} unsupported on this device");
    (ran, skipped)
}

/// Whether `tangle run PATH` on the CPU fails for undefined behaviour.
fn cpu_finds_undefined_behaviour(path: &str) -> bool {
    let (code, stdout, _) = tangle(&["run", path], &[]);
    code == 1 && stdout.contains("undefined behaviour")
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn scripts_on_the_driver() {
    let (passed, _) = on_driver("", 0);
    // Lavapipe runs most of them (it lacks rotate, maximal reconvergence and sizes other than 8).
    assert!(passed >= 10, "only {passed} passing scripts ran");
    on_driver("dot", 0);
    on_driver("group", 0);
    let (failed, _) = on_driver("fail", 1);
    assert!(failed >= 1, "no failing script ran");
    on_driver("group/fail", 1);
    for script in scripts("unsupported") {
        let path = script.display().to_string();
        let (code, stdout, _) = tangle(&["run", "--backend", "vulkan", &path], &[]);
        assert_eq!(code, 77, "{path}: {stdout}");
    }
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn a_dispatch_past_the_time_limit_is_an_error_naming_the_run() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vulkan/slow_loop.amber")
        .display()
        .to_string();
    // Several times: the process used to crash at exit about every other run (the instance
    // was destroyed under lavapipe's still-running dispatch), so one run proved little.
    for _ in 0..8 {
        let (code, stdout, stderr) = tangle(
            &[
                "run",
                "--backend",
                "vulkan",
                "--time-limit",
                "0.000000001",
                &script,
            ],
            &[],
        );
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(stdout.contains("ERROR"), "{stdout}");
        assert!(stdout.contains("RUN p: device failure"), "{stdout}");
        assert!(stdout.contains("fence wait timed out"), "{stdout}");
    }
}

#[test]
fn a_profile_file_runs_like_the_named_profile() {
    let file = repo("crates/tangle-exec/profiles/lavapipe.toml");
    let script = repo("tests/amber/cli/subgroup_size_8.amber");
    let by_name = tangle(
        &["run", "--profile", "lavapipe", "--threads", "2", &script],
        &[],
    );
    let by_file = tangle(&["run", "--profile", &file, "--threads", "2", &script], &[]);
    assert_eq!(by_name.0, 0, "{}", by_name.1);
    assert_eq!((by_file.0, by_file.1), (by_name.0, by_name.1));
    // A file that is not a profile is a usage error naming the problem.
    let (code, _, stderr) = tangle(&["run", "--profile", &script, &script], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--profile"), "{stderr}");
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn a_device_profile_file_emulates_the_device() {
    let (code, text, stderr) = tangle(
        &["profiles", "--from-device", "--device", "0", "-o", "-"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        text.contains("subgroup_size = ") && text.contains("[device]"),
        "{text}"
    );
    let dir = std::env::temp_dir().join(format!("tangle-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("device.toml").display().to_string();
    let (code, _, stderr) = tangle(&["profiles", "--from-device", "-o", &file], &[]);
    assert_eq!(code, 0, "{stderr}");
    // The CPU executor runs a script under the device's profile.
    let saxpy = repo("examples/saxpy.amber");
    let (code, stdout, stderr) = tangle(&["run", "--profile", &file, &saxpy], &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
