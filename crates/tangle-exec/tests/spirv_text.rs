//! Shaders written as SPIR-V assembly (instructions glslang does not emit), assembled with
//! `tangle_spirv::text::assemble`.

mod common;
use common::*;

/// Assembles for Vulkan 1.3 and validates (tangle and spirv-val).
fn assemble(src: &str) -> tangle_validate::Validated<'static> {
    let options = tangle_spirv::text::AssembleOptions {
        target_env: tangle_spirv::TargetEnv::parse(ENV).expect("known environment"),
    };
    let module = tangle_spirv::text::assemble(src, &options)
        .map(|(m, _)| m)
        .unwrap_or_else(|e| panic!("assemble: {e:?}"));
    validated(module)
}

#[test]
fn ptr_access_chain_copy_memory_and_64_bit_switch() {
    let src = include_str!("cases/memory/ptr_chain_copy_switch64.spvasm");
    let module = assemble(src);
    let job = Job::new(vec![u32s(&[10, 11, 12, 13, 0, 0, 0, 0])], [1, 1, 1]);
    let (out, report) = run_module(&module, &job);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    // dst = src + 4 elements; add 1 for x = 2 and 100 for x = 3.
    assert_eq!(to_u32s(&out[0]), vec![10, 11, 12, 13, 10, 11, 13, 113]);
}
