//! Fuzz target: arbitrary UTF-8 → the AmberScript parser. Every input is parsed or rejected
//! with a located error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = tangle_amber::parse(text);
});
