//! GLSL compiled with glslang's debug information (`-g`, as the Amber runner compiles it):
//! tangle's validator and `spirv-val` accept the debug instructions (`OpString`, `OpSource` with
//! the text, `OpLine`, `OpModuleProcessed`), lowering turns none of them into executed ops (the
//! same ops, block for block, as without `-g`), and the dispatch computes the same bytes. The
//! time of both dispatches is printed, not asserted.

mod common;
use common::*;
use std::time::Instant;
use tangle_spirv::{Module, TargetEnv};

/// The benchmark shaders (`bench/`) that lower without specialization (coopmat_gemm's
/// workgroup size is a specialization constant).
const SHADERS: [(&str, &str); 4] = [
    (
        "alu_hash.comp",
        include_str!("../../../bench/alu_hash.comp"),
    ),
    ("saxpy.comp", include_str!("../../../bench/saxpy.comp")),
    (
        "dot_gemv.comp",
        include_str!("../../../bench/dot_gemv.comp"),
    ),
    (
        "rotate_conv.comp",
        include_str!("../../../bench/rotate_conv.comp"),
    ),
];

fn compiled(src: &str, file: Option<&str>) -> Module {
    let env = TargetEnv::parse(ENV).expect("known environment");
    let words = tangle_amber::compile::glsl_with(src, env, &[], file)
        .unwrap_or_else(|e| panic!("GLSL does not compile: {e}"));
    Module::from_words(&words).expect("reads")
}

fn count(m: &Module, op: spirv::Op) -> usize {
    m.instructions.iter().filter(|i| i.op() == Some(op)).count()
}

/// Each block's ops, as their kinds (ids and slots differ: the debug strings take ids).
fn shape(
    p: &tangle_exec::program::Program,
) -> Vec<Vec<Vec<std::mem::Discriminant<tangle_exec::program::Op>>>> {
    p.functions
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .map(|b| b.ops.iter().map(std::mem::discriminant).collect())
                .collect()
        })
        .collect()
}

#[test]
fn debug_information_is_accepted_and_never_executed() {
    let profile = tangle_exec::Profile::default();
    for (name, src) in SHADERS {
        let plain = compiled(src, None);
        let debug = compiled(src, Some(name));
        assert_eq!(count(&plain, spirv::Op::Line), 0, "{name}");
        assert!(count(&debug, spirv::Op::Line) > 0, "{name}");
        assert_eq!(count(&debug, spirv::Op::String), 1, "{name}");
        assert!(count(&debug, spirv::Op::ModuleProcessed) > 0, "{name}");
        let (plain, debug) = (validated(plain), validated(debug));
        let lower = |m: &Module| {
            tangle_exec::lower::lower(m, "main", &Default::default(), &profile)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        let (p, d) = (lower(plain.module()), lower(debug.module()));
        assert_eq!(shape(&p), shape(&d), "{name}: -g changed the executed ops");
    }
}

#[test]
fn debug_information_leaves_results_and_speed_alone() {
    let (name, src) = SHADERS[0];
    let groups = 64u32;
    let mut job = Job::new(vec![vec![0; (groups * 64 * 4) as usize]], [groups, 1, 1]);
    job.push = u32s(&[200]);
    let modules = [None, Some(name)].map(|file| validated(compiled(src, file)));
    // The fastest of three alternating runs of each, so that warm-up does not count.
    let mut best = [std::time::Duration::MAX; 2];
    let mut outputs = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (i, module) in modules.iter().enumerate() {
            let start = Instant::now();
            let (out, report) = run_module(module, &job);
            best[i] = best[i].min(start.elapsed());
            assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
            outputs[i] = out;
        }
    }
    println!(
        "{name}, {} invocations: {:?} without -g, {:?} with -g (ratio {:.2})",
        groups * 64,
        best[0],
        best[1],
        best[1].as_secs_f64() / best[0].as_secs_f64()
    );
    assert_eq!(outputs[0], outputs[1]);
}
