//! Fuzz target: arbitrary UTF-8 → `text::assemble`; every module that assembles must
//! disassemble without panicking, and the raw-id disassembly must assemble again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tangle_spirv::text::{assemble, disassemble, AssembleOptions, DisassembleOptions};
use tangle_spirv::Module;

fuzz_target!(|source: &str| {
    let options = AssembleOptions::default();
    let Ok((assembled, _)) = assemble(source, &options) else {
        return;
    };
    // Print what a binary reader sees: spirv-as writes some binaries (extra `!N` words after an
    // extended instruction's operands) that spirv-dis, and tangle's reader, refuse.
    let Ok(module) = Module::from_words(&assembled.to_words()) else {
        return;
    };
    let _ = disassemble(&module, &DisassembleOptions::default());
    let raw = disassemble(
        &module,
        &DisassembleOptions {
            raw_id: true,
            header: false,
            indent: false,
        },
    );
    // What tangle prints, tangle reads.
    let (again, _) =
        assemble(&raw, &options).unwrap_or_else(|e| panic!("own disassembly rejected: {e}\n{raw}"));
    // After one assembly the ids are numbered in order of first appearance, so the raw-id text
    // assembles to the same words; except where the source wrote raw words (`!75`) into id
    // slots, which bypass that numbering.
    if !source.contains('!') {
        assert_eq!(again.to_words(), module.to_words());
    }
});
