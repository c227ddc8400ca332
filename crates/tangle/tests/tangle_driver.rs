//! tangle's own Vulkan backend on tangle's driver (`tangle-icd`): the examples through
//! `tangle run --backend vulkan` and `tangle diff` with `VK_DRIVER_FILES` naming the manifest
//! `tangle driver --manifest` writes, so the device is tangle itself. The first step of issue
//! 29's self-hosting gate; ignored where no Vulkan loader is installed (`cfg(vulkan_driver)`).
#![cfg_attr(not(vulkan_driver), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The manifest for the driver library built beside the binary, written once.
fn manifest() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("tangle_driver_{}.json", std::process::id()));
        let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
            .args(["driver", "--manifest"])
            .arg(&path)
            .output()
            .expect("the tangle binary runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path
    })
}

/// `tangle ARGS...` on the tangle driver with the default profile: (exit code, stdout).
fn on_driver(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(args)
        .env("VK_DRIVER_FILES", manifest())
        .env_remove("TANGLE_PROFILE")
        .env_remove("TANGLE_REPORT")
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The example scripts.
fn examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut scripts: Vec<String> = std::fs::read_dir(&dir)
        .expect("the examples folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "amber"))
        .map(|p| p.display().to_string())
        .collect();
    scripts.sort();
    scripts
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_examples_pass_on_the_tangle_driver() {
    let scripts = examples();
    assert!(scripts.len() >= 4, "{scripts:?}");
    for script in &scripts {
        let (code, out) = on_driver(&["run", "--backend", "vulkan", script]);
        assert_eq!(code, 0, "{script}:\n{out}");
        assert!(
            out.contains("ran on Vulkan device 0: tangle (default profile)"),
            "{out}"
        );
        assert!(out.contains("PASS"), "{out}");
    }
}

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_tangle_driver_agrees_with_the_cpu_backend() {
    for script in examples() {
        let (code, out) = on_driver(&["diff", &script]);
        assert_eq!(code, 0, "{script}:\n{out}");
        assert!(out.contains("AGREE"), "{out}");
    }
}
