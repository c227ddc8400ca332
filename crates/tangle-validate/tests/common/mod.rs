//! Helpers shared by the integration tests: the conformance TSV rows, assembling text with
//! tangle's assembler, and the reference tools (`spirv-as`, `spirv-val`) through
//! `tangle-reference`.

#![allow(dead_code)]

pub mod shapes;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::{Module, TargetEnv};

/// The validator corpus directory, `shared/conformance/spirv-val`.
pub fn conformance_dir() -> PathBuf {
    Path::new(tangle_reference::CONFORMANCE).join("spirv-val")
}

/// One row of the corpus's `cases.tsv`, by column name.
pub struct Row {
    pub fields: HashMap<String, String>,
}

impl Row {
    /// A column's value ("" when the column is absent).
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

/// The validator corpus's cases.
pub fn rows() -> Vec<Row> {
    tangle_reference::conformance_rows("spirv-val")
        .into_iter()
        .map(|fields| Row { fields })
        .collect()
}

/// Assembles text for an environment with `spirv-as`.
pub fn spirv_as(text: &str, env: &str, flags: &[&str]) -> Result<Module, String> {
    let words = tangle_reference::spirv_as(text, env, flags)?;
    Module::from_words(&words).map_err(|e| e.to_string())
}

/// Assembles text for an environment with tangle's assembler.
pub fn assemble_text(text: &str, env: &str) -> Result<Module, String> {
    let target_env = TargetEnv::parse(env).ok_or_else(|| format!("unknown env {env}"))?;
    assemble(text, &AssembleOptions { target_env })
        .map(|(m, _)| m)
        .map_err(|e| e.to_string())
}

/// Runs `spirv-val` on a module; `true` when it accepts it. Panics when the tool is missing.
pub fn spirv_val(module: &Module, env: &str, flags: &[&str]) -> bool {
    tangle_reference::spirv_val(&module.to_words(), env, flags).is_ok()
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
