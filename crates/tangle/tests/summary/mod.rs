//! The lines a test prints for the record (how many scripts it covered, what it skipped and
//! why): printed, and where `TANGLE_TEST_SUMMARY` names a file, appended to it, so that `.ci/run`
//! shows them from the README's `cargo test` run instead of running the tests a second time with
//! `--nocapture`.

use std::io::Write;

/// Prints `line` and appends it to the summary file, if any.
pub fn say(line: &str) {
    println!("{line}");
    let Some(path) = std::env::var_os("TANGLE_TEST_SUMMARY") else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path);
    match file {
        Ok(mut f) => {
            if let Err(e) = writeln!(f, "{line}") {
                panic!("cannot append to {}: {e}", path.to_string_lossy());
            }
        }
        Err(e) => panic!("cannot open {}: {e}", path.to_string_lossy()),
    }
}
