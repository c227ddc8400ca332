//! Fuzz target: arbitrary bytes → `Module::from_bytes`; every module that decodes must
//! disassemble (in every mode) without panicking and re-encode to the words it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tangle_spirv::binary::{words_from_bytes, words_to_bytes};
use tangle_spirv::text::{disassemble, DisassembleOptions};
use tangle_spirv::Module;

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = Module::from_bytes(bytes) else {
        return;
    };
    for raw_id in [false, true] {
        let text = disassemble(
            &module,
            &DisassembleOptions {
                raw_id,
                header: true,
                indent: true,
            },
        );
        assert!(text.starts_with("; SPIR-V\n"));
    }
    // Decoding keeps every word: writing gives back the input (in tangle's little-endian order).
    let words = words_from_bytes(bytes).expect("decoded input is whole words");
    assert_eq!(module.to_words(), words, "re-encoding changed the module");
    assert_eq!(
        Module::from_bytes(&words_to_bytes(&words)).as_ref(),
        Ok(&module)
    );
});
