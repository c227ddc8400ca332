//! Bad input never panics: every case module, with words replaced at random (a fixed-seed
//! generator, so the run is deterministic), either fails to decode or validates to some verdict.

mod common;

use common::{assemble_text, case_files};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn mutated_modules_never_panic() {
    let mut rng = Rng(0x7461_6e67_6c65);
    let mut decoded = 0;
    let mut rejected = 0;
    for case in case_files() {
        let Ok(module) = assemble_text(&case.text, &case.env) else {
            continue;
        };
        let env = TargetEnv::parse(&case.env).expect("case env");
        let words = module.to_words();
        for _ in 0..60 {
            let mut w = words.clone();
            for _ in 0..1 + rng.next() % 3 {
                let at = 5 + (rng.next() as usize) % (w.len() - 5);
                // Small values hit ids, opcodes and enumerants more often than random words.
                w[at] = match rng.next() % 3 {
                    0 => (rng.next() % 64) as u32,
                    1 => w[at] ^ (1 << (rng.next() % 32)),
                    _ => rng.next() as u32,
                };
            }
            let Ok(m) = Module::from_words(&w) else {
                continue;
            };
            decoded += 1;
            if validate(&m, env, &ValidateOptions::default()).is_err() {
                rejected += 1;
            }
        }
    }
    eprintln!("{decoded} mutated modules decoded, {rejected} rejected by the validator");
    assert!(
        decoded > 100,
        "too few mutants decoded ({decoded}) to exercise the validator"
    );
}
