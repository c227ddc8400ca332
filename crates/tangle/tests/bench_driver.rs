//! `tangle bench driver --quick` through the real loader: the executor alone, the installed
//! driver (lavapipe in CI) and tangle's own driver each run the benchmark's 3,061 dispatches,
//! their buffers checked against plain Rust before any time is printed (exit 1 otherwise).
//! Ignored where no Vulkan loader and driver are installed (`cfg(vulkan_driver)`).

use std::process::Command;

#[test]
#[cfg_attr(not(vulkan_driver), ignore = "no Vulkan loader installed")]
fn the_driver_benchmark_times_tangle_and_the_installed_driver() {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .args(["bench", "--quick", "driver"])
        .env_remove("VK_DRIVER_FILES")
        .env_remove("VK_ICD_FILENAMES")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env_remove("TANGLE_PROFILE")
        .env_remove("TANGLE_REPORT")
        .output()
        .expect("the tangle binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // A row with a time is one whose buffer matched plain Rust's.
    let timed = |name: &str| {
        text.lines()
            .any(|l| l.contains(name) && l.contains('x') && !l.contains("not measured"))
    };
    assert!(timed("Pipeline::dispatch (no driver)"), "{text}");
    assert!(timed(": tangle tangle "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains(": tangle tangle ") && l.contains(" against device ")),
        "no other device to compare with:\n{text}"
    );
    // tangle's driver ran every dispatch with its checks on, and found nothing.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("dispatch(es)") && stderr.contains("no undefined behaviour found"),
        "{stderr}"
    );
}
