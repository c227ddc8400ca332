//! The assembler against the SPIRV-Tools assembler cases in `shared/conformance/spirv-asm/`:
//! every fragment, assembled for its `target_env`, gives exactly `expected_words_hex` after the
//! five header words.

use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/spirv-asm"
);

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn spirv_asm_cases_assemble_to_the_recorded_words() {
    let table = std::fs::read_to_string(format!("{DIR}/cases.tsv"))
        .expect("shared/conformance/spirv-asm/cases.tsv");
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("a header row").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    };
    let (file, env, words) = (col("file"), col("target_env"), col("expected_words_hex"));
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let row: Vec<&str> = line.split('\t').collect();
        let text = std::fs::read_to_string(format!("{DIR}/{}", row[file])).expect("case file");
        let target_env =
            TargetEnv::parse(row[env]).unwrap_or_else(|| panic!("target env {}", row[env]));
        let want: Vec<u32> = row[words]
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).expect("hex word"))
            .collect();
        match assemble(&text, &AssembleOptions { target_env }) {
            Ok((module, map)) => {
                let got = module.to_words();
                let version = target_env.spirv_version();
                let header_ok = got.get(1)
                    == Some(&((u32::from(version.major) << 16) | (u32::from(version.minor) << 8)));
                if got.get(5..) != Some(&want[..]) || !header_ok {
                    failures.push(format!(
                        "{}: got {:08x?}, want {want:08x?}",
                        row[file],
                        got.get(5..)
                    ));
                }
                assert_eq!(map.positions.len(), module.instructions.len());
            }
            Err(e) => failures.push(format!("{}: {e}", row[file])),
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} cases found");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
