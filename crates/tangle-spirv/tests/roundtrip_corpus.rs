//! `tangle dis` → `tangle as` reproduces the binary: every module of
//! `shared/conformance/spirv-val/` that tangle assembles is disassembled in every mode (friendly
//! names and raw ids, with and without header and indentation) and assembled again; the words
//! must be identical. Tangle numbers ids in order of first appearance, and the disassembler
//! prints in that order, so the numbering survives the round trip.

use tangle_spirv::text::{assemble, disassemble, AssembleOptions, DisassembleOptions};
use tangle_spirv::TargetEnv;

const VAL_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/spirv-val"
);

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn disassembly_assembles_back_to_the_same_words() {
    let table = std::fs::read_to_string(format!("{VAL_DIR}/cases.tsv"))
        .expect("shared/conformance/spirv-val/cases.tsv");
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (file, asm_env, env) = (
        column("file"),
        column("asm_target_env"),
        column("target_env"),
    );
    let modes = [
        DisassembleOptions {
            raw_id: false,
            header: true,
            indent: true,
        },
        DisassembleOptions {
            raw_id: true,
            header: false,
            indent: false,
        },
        DisassembleOptions {
            raw_id: false,
            header: false,
            indent: false,
        },
    ];
    let (mut checked, mut failures) = (0, Vec::new());
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let env_name = fields
            .get(asm_env)
            .filter(|e| !e.is_empty())
            .or(fields.get(env))
            .copied()
            .unwrap_or("spv1.6");
        let target_env = TargetEnv::parse(env_name).unwrap_or(TargetEnv::DEFAULT);
        let options = AssembleOptions { target_env };
        let path = format!(
            "{VAL_DIR}/{}",
            fields.get(file).copied().unwrap_or_default()
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let Ok((module, _)) = assemble(&text, &options) else {
            continue;
        };
        checked += 1;
        for mode in &modes {
            let printed = disassemble(&module, mode);
            match assemble(&printed, &options) {
                Ok((again, _)) if again.to_words() == module.to_words() => {}
                Ok(_) => failures.push(format!("{path} ({mode:?}): different words")),
                Err(e) => failures.push(format!("{path} ({mode:?}): {e}")),
            }
        }
    }
    assert!(checked >= 200, "only {checked} corpus modules assembled");
    assert!(
        failures.is_empty(),
        "{} round trips failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
