//! `SHADER_OPTIMIZATION`: the passes run by SPIRV-Tools' optimizer, through the `spirv-opt`
//! binary on `PATH` (the tools the tests install). Nothing is skipped: without `spirv-opt`, or
//! with a pass it does not know, the script is refused naming the pass(es), as unsupported.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use tangle_spirv::TargetEnv;

/// Why the passes did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptimizeError {
    /// `spirv-opt` is missing, or does not know a pass: the script is outside what this
    /// installation runs (exit 77).
    Unsupported(String),
    /// `spirv-opt` ran and failed (an invalid module, a bad pass argument).
    Failed(String),
}

/// The optimizer program: `TANGLE_SPIRV_OPT` when set (tests point it at a missing path to
/// check the refusal), else `spirv-opt` from `PATH`.
fn program() -> String {
    std::env::var("TANGLE_SPIRV_OPT").unwrap_or_else(|_| "spirv-opt".to_string())
}

/// `spirv-opt` options that are not passes: amber hands the names to SPIRV-Tools'
/// `RegisterPassesFromFlags`, which knows only passes, so a script naming one of these is refused
/// rather than letting it steer the `spirv-opt` process (read a config file, change the output).
const NOT_PASSES: &[&str] = &[
    "--config-file",
    "--print-all",
    "--time-report",
    "--target-env",
    "--skip-validation",
    "--relax-block-layout",
    "--relax-logical-pointer",
    "--relax-struct-store",
    "--scalar-block-layout",
    "--skip-block-layout",
    "--workgroup-scalar-block-layout",
    "--uniform-buffer-standard-layout",
    "--before-hlsl-legalization",
    "--allow-localsizeid",
    "--preserve-bindings",
    "--preserve-interface",
    "--preserve-spec-constants",
    "--max-id-bound",
    "--help",
    "--version",
];

/// Whether `pass` has the form of an optimizer pass flag, `--name[=args]` (lowercase letters,
/// digits, `-` and `_` in the name; no whitespace), and is not one of [`NOT_PASSES`].
fn is_pass_flag(pass: &str) -> bool {
    let (name, args) = pass.split_once('=').unwrap_or((pass, ""));
    let well_formed = name.len() > 2
        && name.starts_with("--")
        && name[2..]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !name[2..].starts_with('-')
        && !args.contains(char::is_whitespace);
    well_formed && !NOT_PASSES.contains(&name)
}

/// Runs `passes` (`--name[=args]`, in order) over `words` for `env`.
pub fn optimize(
    words: &[u32],
    passes: &[String],
    env: TargetEnv,
) -> Result<Vec<u32>, OptimizeError> {
    let named = passes.join(" ");
    let not_passes: Vec<&str> = passes
        .iter()
        .map(String::as_str)
        .filter(|p| !is_pass_flag(p))
        .collect();
    if !not_passes.is_empty() {
        return Err(OptimizeError::Unsupported(format!(
            "SHADER_OPTIMIZATION: {} is not an optimizer pass",
            not_passes.join(" ")
        )));
    }
    let mut child = Command::new(program())
        .arg(format!("--target-env={env}"))
        // tangle validates the result itself, with the options the job runs under.
        .arg("--skip-validation")
        .args(passes)
        .args(["-o", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            OptimizeError::Unsupported(format!(
                "SHADER_OPTIMIZATION {named}: SPIRV-Tools' spirv-opt is needed to run the passes ({e})"
            ))
        })?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    // Feed stdin from a thread while stdout is drained here, so neither pipe fills up.
    let mut stdin = child.stdin.take();
    let feeder = std::thread::spawn(move || {
        if let Some(pipe) = stdin.as_mut() {
            let _ = pipe.write_all(&bytes);
        }
    });
    let mut out = Vec::new();
    let mut err = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_end(&mut out);
    }
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut err);
    }
    let _ = feeder.join();
    let status = child
        .wait()
        .map_err(|e| OptimizeError::Failed(format!("spirv-opt: {e}")))?;
    if !status.success() {
        let err = err.trim();
        // spirv-opt's words for a flag it does not know ("Unknown flag '--x'", "... is not a
        // valid flag").
        let unknown: Vec<&String> = passes
            .iter()
            .filter(|p| err.contains(p.split('=').next().unwrap_or(p)))
            .collect();
        if err.contains("Unknown flag") || err.contains("not a valid flag") {
            let names: Vec<&str> = unknown.iter().map(|p| p.as_str()).collect();
            return Err(OptimizeError::Unsupported(format!(
                "SHADER_OPTIMIZATION: spirv-opt does not know the pass(es) {}: {err}",
                if names.is_empty() {
                    named.clone()
                } else {
                    names.join(" ")
                }
            )));
        }
        return Err(OptimizeError::Failed(format!(
            "SHADER_OPTIMIZATION {named}: spirv-opt failed: {err}"
        )));
    }
    if out.len() % 4 != 0 || out.len() < 20 {
        return Err(OptimizeError::Failed(format!(
            "SHADER_OPTIMIZATION {named}: spirv-opt returned {} bytes, not a module",
            out.len()
        )));
    }
    Ok(out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module() -> Vec<u32> {
        crate::compile::glsl(
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0) buffer B { uint v[]; };\nvoid main() { uint x = 2u; if (false) { x = 3u; } v[0] = x; }\n",
            crate::compile::DEFAULT_TARGET_ENV,
        )
        .unwrap()
    }

    #[test]
    fn only_pass_flags_reach_spirv_opt() {
        for good in [
            "--eliminate-dead-branches",
            "--scalar-replacement=100",
            "--loop-unroll",
        ] {
            assert!(is_pass_flag(good), "{good}");
        }
        for bad in [
            "--config-file=/etc/passwd",
            "--print-all",
            "--target-env=vulkan1.3",
            "-o",
            "--",
            "---x",
            "--Upper",
            "--x=a b",
            "--help",
        ] {
            assert!(!is_pass_flag(bad), "{bad}");
        }
        let words = module();
        let env = crate::compile::DEFAULT_TARGET_ENV;
        match optimize(&words, &["--config-file=x".into()], env) {
            Err(OptimizeError::Unsupported(why)) => {
                assert!(
                    why.contains("--config-file=x is not an optimizer pass"),
                    "{why}"
                )
            }
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn passes_run_or_are_refused_by_name() {
        let words = module();
        let env = crate::compile::DEFAULT_TARGET_ENV;
        match optimize(&words, &["--eliminate-dead-branches".into()], env) {
            Ok(out) => {
                assert_eq!(out.first(), Some(&0x0723_0203));
                assert_ne!(out, words, "the dead branch is gone");
            }
            // Without spirv-opt the refusal names the pass; never a silent skip.
            Err(OptimizeError::Unsupported(why)) => {
                assert!(why.contains("--eliminate-dead-branches"), "{why}")
            }
            Err(e) => panic!("{e:?}"),
        }
        if let Err(e) = optimize(&words, &["--no-such-pass".into()], env) {
            match e {
                OptimizeError::Unsupported(why) => assert!(why.contains("--no-such-pass"), "{why}"),
                e => panic!("{e:?}"),
            }
        } else {
            panic!("an unknown pass ran");
        }
    }
}
