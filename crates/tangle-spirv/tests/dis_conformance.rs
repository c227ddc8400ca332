//! The disassembler on SPIRV-Tools' own round-trip cases (`shared/conformance/spirv-asm/`).
//!
//! Each case gives instruction words (after the header) and the exact text the reference
//! disassembler prints for them with `--raw-id --no-header --no-indent`. The fragments may use
//! ids they never define, so the header's bound is set above every word that could be an id.

use tangle_reference::conformance_rows;
use tangle_spirv::text::{disassemble, DisassembleOptions};
use tangle_spirv::{Module, TargetEnv};

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn every_round_trip_case_prints_the_reference_text() {
    let cases = conformance_rows("spirv-asm");
    assert!(
        cases.len() >= 100,
        "expected the 112 recorded cases, found {}",
        cases.len()
    );
    let options = DisassembleOptions {
        raw_id: true,
        header: false,
        indent: false,
    };
    let mut failures = Vec::new();
    for case in &cases {
        let name = &case["name"];
        let env = TargetEnv::parse(&case["target_env"])
            .unwrap_or_else(|| panic!("{name}: bad target_env"));
        let version = env.spirv_version();
        let body: Vec<u32> = case["expected_words_hex"]
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).unwrap_or_else(|e| panic!("{name}: {w}: {e}")))
            .collect();
        let version_word = (u32::from(version.major) << 16) | (u32::from(version.minor) << 8);
        let mut words = vec![tangle_spirv::module::MAGIC, version_word, 0, 1 << 20, 0];
        words.extend(&body);
        let module = match Module::from_words(&words) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: cannot decode: {e}"));
                continue;
            }
        };
        let text = disassemble(&module, &options);
        if text != case["roundtrip_expected"] {
            failures.push(format!(
                "{name}:\n  tangle:    {text:?}\n  reference: {:?}",
                case["roundtrip_expected"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
