//! Fuzz target: arbitrary bytes → binary decoder → validator, for a Vulkan and a universal
//! environment. Whatever decodes must validate or be rejected without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = Module::from_bytes(bytes) else {
        return;
    };
    for env in ["vulkan1.3", "spv1.6"] {
        if let Some(env) = TargetEnv::parse(env) {
            let _ = validate(&module, env, &ValidateOptions::default());
        }
    }
});
