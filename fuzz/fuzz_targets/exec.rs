//! Fuzz target: arbitrary bytes → decoder → validator → for every valid module, lower its
//! entry point "main" and dispatch one workgroup with zeroed buffers under a small step and time
//! limit. Nothing the shader does may panic the host.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = Module::from_bytes(bytes) else {
        return;
    };
    let Some(env) = TargetEnv::parse("vulkan1.3") else {
        return;
    };
    let Ok(valid) = validate(&module, env, &ValidateOptions::default()) else {
        return;
    };
    let Some(profile) = Profile::default().with_subgroup_size(8) else {
        return;
    };
    let device = Device::new(profile);
    let Ok(pipeline) = device.compute_pipeline(&valid, "main", &SpecConstants::new()) else {
        return;
    };
    let mut resources = Resources::default();
    for binding in pipeline.bindings() {
        resources.buffers.insert(binding, vec![0u8; 256]);
    }
    resources.push_constants = vec![0u8; 128];
    let options = RunOptions {
        threads: 1,
        step_limit: 10_000,
        time_limit: Duration::from_millis(200),
        memory_limit: 64 << 20,
        ..RunOptions::default()
    };
    let _ = pipeline.dispatch(&mut resources, [1, 1, 1], &options);
});
