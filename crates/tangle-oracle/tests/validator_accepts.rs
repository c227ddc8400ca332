//! The validator never rejects glslang output: the oracle's random GLSL compute programs (structured
//! control flow, subgroup operations), compiled by glslang for Vulkan 1.3, all validate; every
//! ninth is also given to `spirv-val`, which must accept it too.

use tangle_oracle::{case_config, case_program, compile, glsl};
use tangle_spirv::env::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// Seeds checked; each program is a fresh random structured-control-flow shape.
const SEEDS: u64 = 900;

#[test]
fn glslang_programs_validate() {
    let env = TargetEnv::parse("vulkan1.3").expect("a known environment");
    let mut checked = 0;
    let mut rejected = Vec::new();
    for seed in 0..SEEDS {
        let (depth, sg, wg) = case_config(seed);
        let Ok((program, _)) = case_program(seed, depth, sg, wg) else {
            continue;
        };
        let src = glsl::emit(&program, wg);
        let module = match compile(&src) {
            Ok(m) => m,
            Err(e) => panic!("seed {seed}: glslang failed: {e:?}"),
        };
        checked += 1;
        if let Err(diags) = validate(&module, env, &ValidateOptions::default()) {
            rejected.push(format!("seed {seed}: {diags:?}"));
        }
        if seed % 9 == 0 {
            if let Err(e) = tangle_reference::spirv_val(&module.to_words(), "vulkan1.3", &[]) {
                rejected.push(format!("seed {seed}: spirv-val rejects it: {e}"));
            }
        }
    }
    assert!(
        checked >= SEEDS * 9 / 10,
        "only {checked} programs compiled"
    );
    assert!(rejected.is_empty(), "{}", rejected.join("\n"));
}
