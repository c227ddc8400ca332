//! Conformance: every SPIRV-Tools validator case recorded in `shared/conformance/spirv-val`
//! whose `scope` is `four` must get the recorded verdict, and an invalid one must be rejected by
//! the rule family that owns the recorded message. The `extra` cases (vendor extensions tangle
//! does not implement) are run and counted, and only those needing nothing but the four
//! extensions' rules (`vendor_features` other than `used`) are required to agree.

mod common;

use common::{assemble_text, conformance_dir, rows, Row};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// The family whose rule the reference message names (loosely, by phrases in it).
fn expected_family(message: &str) -> Option<&'static str> {
    let has = |s: &str| message.contains(s);
    if has("requires one of these capabilities")
        || has("requires one of these extensions")
        || has("is not allowed by Vulkan")
        || has("requires SPIR-V version")
    {
        return Some("Capability");
    }
    if has("MaximallyReconvergesKHR") {
        return Some("Cfg");
    }
    if has("Delta")
        || has("ClusterSize")
        || has("Execution scope")
        || has("type of Value")
        || has("floating-point, integer or boolean")
    {
        return Some("Group");
    }
    if has("'Vector 1'")
        || has("'Vector 2'")
        || has("DotProduct")
        || has("Result must be")
        || has("Result width")
    {
        return Some("Dot");
    }
    // The memory operand rules are shared by OpLoad/OpStore and the cooperative matrix
    // loads and stores.
    if has("MakePointer") || has("NonPrivatePointer") || has("must use Aligned") {
        return Some("Memory");
    }
    if has("ooperative")
        || has("MemoryLayout")
        || has("Stride")
        || has("Matrix")
        || has("component type")
        || has("Constituent")
    {
        return Some("Coopmat");
    }
    None
}

struct Outcome {
    name: String,
    expected: String,
    got: String,
    family_ok: bool,
}

fn run_case(row: &Row) -> Outcome {
    let name = row.get("name").to_string();
    let expected = row.get("expected").to_string();
    let path = conformance_dir().join(row.get("file"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let asm_env = if row.get("asm_target_env").is_empty() {
        row.get("target_env")
    } else {
        row.get("asm_target_env")
    };
    // No recorded case uses assembler flags (`asm_flags` is empty throughout).
    let module = match assemble_text(&text, asm_env) {
        Ok(m) => m,
        Err(e) => {
            return Outcome {
                name,
                expected,
                got: format!("assembly failed: {}", e.trim()),
                family_ok: false,
            };
        }
    };
    let env = TargetEnv::parse(row.get("target_env")).unwrap_or_else(|| panic!("{name}: bad env"));
    let options = ValidateOptions::from_flags(row.get("val_flags").split_whitespace())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    match validate(&module, env, &options) {
        Ok(_) => Outcome {
            name,
            expected,
            got: "valid".into(),
            family_ok: true,
        },
        Err(diags) => {
            let family = expected_family(row.get("expected_error_substring"));
            let family_ok = family.is_none_or(|fam| diags.iter().any(|d| d.error.family() == fam));
            let first = diags
                .first()
                .map(|d| format!("{} ({})", d.error.rule(), d.error))
                .unwrap_or_default();
            Outcome {
                name,
                expected,
                got: format!("invalid: {first}"),
                family_ok,
            }
        }
    }
}

fn agrees(o: &Outcome) -> bool {
    o.got.starts_with(&o.expected) && o.family_ok
}

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn four_extension_cases_match_recorded_verdicts() {
    let rows = rows();
    let four: Vec<&Row> = rows.iter().filter(|r| r.get("scope") == "four").collect();
    assert!(
        four.len() > 100,
        "expected the recorded corpus, found {} rows",
        four.len()
    );
    let outcomes: Vec<Outcome> = four.iter().map(|r| run_case(r)).collect();
    let bad: Vec<&Outcome> = outcomes.iter().filter(|o| !agrees(o)).collect();
    for o in &bad {
        eprintln!(
            "MISMATCH {:<90} expected {:<8} got {} (family ok: {})",
            o.name, o.expected, o.got, o.family_ok
        );
    }
    eprintln!(
        "scope=four: {}/{} agree",
        outcomes.len() - bad.len(),
        outcomes.len()
    );
    assert!(
        bad.is_empty(),
        "{} of {} scope=four cases disagree (table above)",
        bad.len(),
        outcomes.len()
    );
}

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn extra_cases_needing_only_the_four_extensions() {
    let rows = rows();
    let extra: Vec<&Row> = rows.iter().filter(|r| r.get("scope") == "extra").collect();
    let outcomes: Vec<(bool, Outcome)> = extra
        .iter()
        .map(|r| (r.get("vendor_features") != "used", run_case(r)))
        .collect();
    let all_agree = outcomes.iter().filter(|(_, o)| agrees(o)).count();
    let required: Vec<&Outcome> = outcomes
        .iter()
        .filter(|(req, _)| *req)
        .map(|(_, o)| o)
        .collect();
    let bad: Vec<&&Outcome> = required.iter().filter(|o| !agrees(o)).collect();
    for (_, o) in outcomes.iter().filter(|(req, o)| !req && !agrees(o)) {
        eprintln!(
            "vendor   {:<90} expected {:<8} got {}",
            o.name, o.expected, o.got
        );
    }
    for o in &bad {
        eprintln!(
            "MISMATCH {:<90} expected {:<8} got {} (family ok: {})",
            o.name, o.expected, o.got, o.family_ok
        );
    }
    eprintln!(
        "scope=extra: {all_agree}/{} agree overall; {}/{} of those needing only the four extensions' rules",
        outcomes.len(),
        required.len() - bad.len(),
        required.len()
    );
    assert!(
        bad.is_empty(),
        "{} extra cases needing only the four extensions disagree",
        bad.len()
    );
}
