//! Inputs the `exec` fuzz target once crashed on (`fuzz/regressions/exec/`), run through the same
//! steps as the target: decode, validate, lower, dispatch one workgroup under small limits. Errors
//! are fine; panics are not.

use std::path::PathBuf;
use std::time::Duration;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

#[test]
fn exec_inputs_never_panic() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/exec"
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fuzz/regressions/exec")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    let env = TargetEnv::parse("vulkan1.3").expect("known environment");
    let device = Device::new(Profile::default().with_subgroup_size(8).expect("profile"));
    let mut dispatched = 0;
    for path in &files {
        let bytes = std::fs::read(path).expect("regression input");
        let Ok(module) = Module::from_bytes(&bytes) else {
            continue;
        };
        let Ok(valid) = validate(&module, env, &ValidateOptions::default()) else {
            continue;
        };
        let Ok(pipeline) = device.compute_pipeline(&valid, "main", &SpecConstants::new()) else {
            continue;
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
            ..RunOptions::default()
        };
        let _ = pipeline.dispatch(&mut resources, [1, 1, 1], &options);
        dispatched += 1;
    }
    println!("{} regression inputs, {dispatched} dispatched", files.len());
}

/// `LocalSize 2130706433 4294967295 15859711`: the invocation count overflowed u64 while the
/// pipeline checked it against the device's limit. It is now a limit error.
#[test]
fn a_local_size_whose_product_overflows_is_a_limit_error() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/exec/local-size-product-overflow.spv"
    ))
    .expect("regression input");
    let module = Module::from_bytes(&bytes).expect("decodes");
    let env = TargetEnv::parse("vulkan1.3").expect("known environment");
    let valid = validate(&module, env, &ValidateOptions::default()).expect("valid module");
    let device = Device::new(Profile::default());
    let err = device
        .compute_pipeline(&valid, "main", &SpecConstants::new())
        .expect_err("no device runs that workgroup size");
    assert!(err.to_string().contains("workgroup size"), "{err}");
}
