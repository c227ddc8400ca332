//! Running a script the test wrote as text: saved under the temporary folder (named by a hash
//! of its text, so that tests running at once never share a file) and given to the `tangle`
//! binary, for the tests that generate their scripts (`coopmat_ownership.rs`, `robustness.rs`).

use std::path::PathBuf;
use std::process::Command;

/// `text` saved as an Amber script in a folder of `label`'s.
pub fn save(label: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tangle-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    // FNV-1a: names only need to differ.
    let name = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let path = dir.join(format!("{name:016x}.amber"));
    std::fs::write(&path, text).expect("script written");
    path
}

/// `tangle run --json` of `text` with `args`: the exit code, the findings' (kind, severity)
/// pairs sorted and deduplicated, and the JSON printed.
pub fn run_json(label: &str, text: &str, args: &[&str]) -> (i32, Vec<(String, String)>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(save(label, text))
        .args(args)
        .arg("--json")
        .output()
        .expect("the tangle binary runs");
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("run --json prints one JSON object");
    let mut kinds: Vec<(String, String)> = json["report"]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("severity"))
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), kinds, printed)
}
