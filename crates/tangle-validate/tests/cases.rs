//! Data-driven validator cases: each `tests/cases/<family>/*.spvasm` names its expectation in a
//! header (`; expect: valid` or `; expect: Group::RotateDeltaNotUnsigned`, `; env: vulkan1.3`,
//! and optionally `; flags: --scalar-block-layout` for spirv-val's relaxation options).
//! A valid case must validate; an invalid one must produce a diagnostic of exactly that rule.
//! Filter with `TANGLE_CASE=substring`.

mod common;

use common::{assemble_text, case_files};
use std::collections::BTreeMap;
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

#[test]
fn every_case_gets_its_expected_rule() {
    let cases = case_files();
    assert!(!cases.is_empty(), "no case files found");
    let mut failures = Vec::new();
    let mut per_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in &cases {
        let family = case
            .path
            .parent()
            .and_then(|p| p.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let counts = per_family.entry(family).or_default();
        if case.expect == "valid" {
            counts.0 += 1
        } else {
            counts.1 += 1
        }
        let name = case
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let env =
            TargetEnv::parse(&case.env).unwrap_or_else(|| panic!("{name}: bad env {}", case.env));
        let module = match assemble_text(&case.text, &case.env) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: does not assemble: {}", e.trim()));
                continue;
            }
        };
        let options = match ValidateOptions::from_flags(case.flags.iter().map(String::as_str)) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let got = match validate(&module, env, &options) {
            Ok(_) => vec!["valid".to_string()],
            Err(diags) => diags.iter().map(|d| d.error.rule()).collect(),
        };
        if !got.contains(&case.expect) {
            failures.push(format!(
                "{name}: expected {}, got {}",
                case.expect,
                got.join(", ")
            ));
        }
    }
    for (family, (valid, invalid)) in &per_family {
        eprintln!("{family:<14} {valid} valid, {invalid} invalid cases");
        assert!(
            *valid > 0 && *invalid > 0,
            "family {family} needs valid and invalid cases"
        );
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed (listed above)",
        failures.len(),
        cases.len()
    );
}
