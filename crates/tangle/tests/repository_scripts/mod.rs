//! Every Amber script of the repository (`examples/`, `tests/amber/**`), the set the tests that
//! walk them all share (`diff_scripts.rs` on the installed driver, `self_hosting.rs` on tangle's
//! own).

use std::path::{Path, PathBuf};

/// Every `.amber` file under `examples/` and `tests/amber/`, recursively, sorted.
pub fn all() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut scripts = Vec::new();
    amber_files(&root.join("examples"), &mut scripts);
    amber_files(&root.join("tests/amber"), &mut scripts);
    scripts.sort();
    scripts
}

/// The script's path from the repository root (`tests/amber/atomics.amber`), for messages.
pub fn name(script: &Path) -> String {
    let path = script.display().to_string();
    path.rsplit("/../").next().unwrap_or(&path).to_string()
}

/// Every `.amber` file under `dir`, recursively.
fn amber_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            amber_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "amber") {
            out.push(path);
        }
    }
}
