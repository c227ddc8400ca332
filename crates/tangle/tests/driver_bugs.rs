//! Driver bugs `tangle diff` found, kept as regression checks against the drivers that have
//! them (`docs/findings.md`, "Driver bugs"): each reproducer in `tests/amber/drivers/` must
//! DIFFER on the broken driver, naming the words it gets wrong, and AGREE on a driver without
//! the bug.
//!
//! lavapipe 26 (Debian unstable) cannot be loaded by a Debian 12 process, so its checks run
//! `tangle diff` inside the chroot that `tools/lavapipe-sid.sh` makes, named by
//! `TANGLE_LAVAPIPE_SID`. Without it they are skipped with the reason (kept in the test
//! summary); `TANGLE_REQUIRE_LAVAPIPE_SID=1` (set by `.ci/run`) makes its absence a failure.

mod summary;

use std::path::{Path, PathBuf};
use std::process::Command;
use summary::say;

/// The reproducer of lavapipe 26's lost stores after `subgroupBarrier()`.
const SUBGROUP_BARRIER: &str = "tests/amber/drivers/lavapipe26_subgroup_barrier.amber";

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

/// Exit code and stdout + stderr of `cmd`.
fn output(cmd: &mut Command) -> (i32, String) {
    let out = cmd.output().expect("the command runs");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// The lavapipe 26 chroot, or `None` (said in the summary) when there is none.
fn sid_chroot() -> Option<PathBuf> {
    let required = std::env::var_os("TANGLE_REQUIRE_LAVAPIPE_SID").is_some_and(|v| v == "1");
    let reason = match std::env::var_os("TANGLE_LAVAPIPE_SID") {
        None => "TANGLE_LAVAPIPE_SID is not set (tools/lavapipe-sid.sh makes the chroot)".into(),
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.join("tangle-ready").exists() {
                return Some(dir);
            }
            format!(
                "{} is not a finished chroot of tools/lavapipe-sid.sh",
                dir.display()
            )
        }
    };
    assert!(!required, "TANGLE_REQUIRE_LAVAPIPE_SID=1 but {reason}");
    say(&format!("skipped driver_bugs on lavapipe 26: {reason}"));
    None
}

/// Runs `tangle diff SCRIPT` inside the chroot at `root`, with the binary and the script
/// copied into its `/tmp`.
fn diff_in_chroot(root: &Path, script: &str) -> (i32, String) {
    let work = root.join("tmp/tangle-driver-bugs");
    std::fs::create_dir_all(&work).expect("a folder in the chroot");
    std::fs::copy(env!("CARGO_BIN_EXE_tangle"), work.join("tangle")).expect("tangle copied");
    std::fs::copy(repo_path(script), work.join("script.amber")).expect("script copied");
    output(Command::new("chroot").arg(root).args([
        "/tmp/tangle-driver-bugs/tangle",
        "diff",
        "--threads",
        "2",
        "/tmp/tangle-driver-bugs/script.amber",
    ]))
}

#[test]
fn lavapipe_26_loses_the_third_store_after_a_subgroup_barrier() {
    let Some(root) = sid_chroot() else {
        return;
    };
    let (code, out) = diff_in_chroot(&root, SUBGROUP_BARRIER);
    assert!(out.contains("llvmpipe"), "not run on lavapipe:\n{out}");
    assert_eq!(code, 1, "lavapipe 26 should DIFFER:\n{out}");
    assert!(
        out.lines().last().is_some_and(|l| l.starts_with("DIFFER")),
        "{out}"
    );
    // The third word of each invocation of subgroup 0 (elements 2, 5, ..., 23) is lost: tangle
    // has 3, the device 0. No other word differs.
    let differing: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("buffer 'words' element"))
        .collect();
    for element in (2..24).step_by(3) {
        assert!(
            differing
                .iter()
                .any(|l| l.contains(&format!("element {element} component 0: CPU 3, device 0"))),
            "element {element} not named as lost:\n{out}"
        );
    }
    assert_eq!(differing.len(), 8, "only the 8 third stores differ:\n{out}");
    say("driver bug reproduced: lavapipe 26 loses the stores after subgroupBarrier()");
}

#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "needs a Vulkan loader and driver (apt-get install mesa-vulkan-drivers libvulkan1)"
)]
fn the_system_lavapipe_keeps_the_stores_after_a_subgroup_barrier() {
    let (code, out) = output(
        Command::new(env!("CARGO_BIN_EXE_tangle"))
            .args(["diff", "--threads", "2"])
            .arg(repo_path(SUBGROUP_BARRIER)),
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().last().is_some_and(|l| l.starts_with("AGREE")),
        "{out}"
    );
}
