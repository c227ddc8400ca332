//! Fuzz target: `as → dis → as` must give back the same words. Arbitrary UTF-8 is assembled; a
//! module that assembles is disassembled in every mode (raw ids or friendly names, with or without
//! header and indentation), and each text must assemble again to exactly the first words: the
//! disassembler prints only what the assembler reads back, and the two agree on every operand.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tangle_spirv::text::{assemble, disassemble, AssembleOptions, DisassembleOptions};
use tangle_spirv::Module;

fuzz_target!(|source: &str| {
    let options = AssembleOptions::default();
    let Ok((module, _)) = assemble(source, &options) else {
        return;
    };
    let words = module.to_words();
    // What a binary reader accepts decodes to the same module. (spirv-as writes some binaries,
    // extra `!N` words after an extended instruction's operands, that spirv-dis and tangle's
    // reader refuse: those have no disassembly to compare.)
    let Ok(decoded) = Module::from_words(&words) else {
        return;
    };
    assert_eq!(decoded, module, "the binary decodes to another module");
    for raw_id in [true, false] {
        for (header, indent) in [(true, true), (false, false)] {
            let modes = DisassembleOptions {
                raw_id,
                header,
                indent,
            };
            let text = disassemble(&module, &modes);
            let (again, _) = assemble(&text, &options)
                .unwrap_or_else(|e| panic!("own disassembly rejected ({modes:?}): {e}\n{text}"));
            // Ids are numbered in order of first appearance, and the disassembly keeps the
            // instruction order, so the words match; except where the source wrote raw words
            // (`!75`) into id slots, which bypass that numbering.
            if !source.contains('!') {
                assert_eq!(
                    again.to_words(),
                    words,
                    "round trip changed the words ({modes:?})"
                );
            }
        }
    }
});
