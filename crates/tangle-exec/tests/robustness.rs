//! The executor never panics: every GLCompute entry point of the recorded SPIRV-Tools
//! conformance cases is lowered (valid module or not: the lowerer must be defensive even though
//! the public API feeds it only validated modules), and every one of a valid module is
//! dispatched once over zero-filled buffers with small limits. Errors are fine; panics are not.

use std::time::Duration;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/spirv-val"
);

#[test]
#[cfg_attr(
    not(conformance),
    ignore = "needs ../shared/conformance beside the checkout"
)]
fn conformance_modules_never_panic() {
    let mut entries: Vec<_> = std::fs::read_dir(CASES)
        .expect("conformance cases")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    let device = Device::new(Profile::default().with_subgroup_size(8).expect("profile"));
    let options = RunOptions {
        threads: 1,
        step_limit: 5_000,
        time_limit: Duration::from_secs(2),
        ..RunOptions::default()
    };
    let (mut lowered, mut dispatched) = (0, 0);
    for path in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "spvasm"))
    {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok((module, _)) = tangle_spirv::text::assemble(&text, &Default::default()) else {
            continue;
        };
        let names: Vec<String> = module
            .instructions
            .iter()
            .filter(|i| i.op() == Some(spirv::Op::EntryPoint) && i.literal_operand(0) == Some(5))
            .filter_map(|i| i.string_operand(2).map(str::to_string))
            .collect();
        // The texts were assembled for the default environment, SPIR-V 1.6.
        let valid = TargetEnv::parse("spv1.6")
            .and_then(|env| validate(&module, env, &ValidateOptions::default()).ok());
        for name in names {
            if tangle_exec::lower::lower(
                &module,
                &name,
                &SpecConstants::new(),
                &tangle_exec::Profile::default(),
            )
            .is_ok()
            {
                lowered += 1;
            }
            let Some(valid) = valid.as_ref() else {
                continue;
            };
            let Ok(pipeline) = device.compute_pipeline(valid, &name, &SpecConstants::new()) else {
                continue;
            };
            let mut res = Resources {
                push_constants: vec![0; 128],
                ..Resources::default()
            };
            for b in pipeline.bindings() {
                res.buffers.insert(b, vec![0; 256]);
            }
            if pipeline.dispatch(&mut res, [1, 1, 1], &options).is_ok() {
                dispatched += 1;
            }
        }
    }
    eprintln!("lowered {lowered} entry points, dispatched {dispatched}");
    // The recorded cases include compute shaders the executor runs.
    assert!(
        lowered > 10 && dispatched > 10,
        "lowered {lowered}, dispatched {dispatched}"
    );
}
