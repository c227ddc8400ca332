//! The cooperative-matrix sanitizer findings, each provoked by a shader and absent from its
//! correct twin: an instruction on a matrix in non-uniform control flow, a non-uniform Stride,
//! a saturating MulAdd whose A × B overflows, a composite read of an index that holds no
//! element, and out-of-bounds loads and stores (which touch no memory). Also: a shader that
//! assumes one element layout gives different results under another, and what tangle refuses
//! (Workgroup scope, partial subgroups).

mod common;

use common::compile;
use tangle_exec::check::coopmat::CoopmatFinding;
use tangle_exec::{
    CoopmatLayout, Device, ExecError, Finding, Profile, Report, Resources, RunOptions,
    SpecConstants,
};

const HEADER: &str = "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
";

fn pipeline(src: &str, subgroup: u32) -> Result<tangle_exec::Pipeline, ExecError> {
    let module = compile(src);
    Device::new(common::coopmat_profile(subgroup)).compute_pipeline(
        &module,
        "main",
        &SpecConstants::new(),
    )
}

fn run(
    src: &str,
    subgroup: u32,
    buffers: &[Vec<u8>],
    layout: CoopmatLayout,
) -> (Vec<Vec<u8>>, Report) {
    let p = pipeline(src, subgroup).unwrap_or_else(|e| panic!("pipeline: {e}"));
    let mut res = Resources::default();
    for (i, b) in buffers.iter().enumerate() {
        res.buffers.insert((0, i as u32), b.clone());
    }
    let options = RunOptions {
        threads: 1,
        coopmat_layout: layout,
        ..RunOptions::default()
    };
    let report = p
        .dispatch(&mut res, [1, 1, 1], &options)
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    (res.buffers.into_values().collect(), report)
}

/// The cooperative-matrix findings of a report; panics on any other finding.
fn coopmat_findings(report: &Report) -> Vec<CoopmatFinding> {
    report
        .diagnostics
        .iter()
        .map(|d| match &d.finding {
            Finding::Coopmat(c) => c.clone(),
            other => panic!("unexpected finding {other}"),
        })
        .collect()
}

/// A 16x16 float matrix loaded from binding 0 and stored to binding 1 under `guard`, loaded
/// with stride `stride`.
fn copy_shader(guard: &str, stride: &str) -> String {
    format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
layout(set = 0, binding = 1) buffer O {{ float o[]; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 0, {stride}, gl_CooperativeMatrixLayoutRowMajor);
  if ({guard}) {{
    coopMatStore(m + m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  }}
}}
"
    )
}

fn floats(n: usize) -> Vec<u8> {
    common::f32s(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
}

#[test]
fn matrix_instruction_in_non_uniform_control_flow() {
    let bad = copy_shader("gl_SubgroupInvocationID < 16u", "16");
    let (_, report) = run(&bad, 32, &[floats(256), floats(256)], Default::default());
    let found = coopmat_findings(&report);
    assert!(!found.is_empty());
    assert!(found.iter().all(|f| *f
        == CoopmatFinding::NotAllActive {
            active: 16,
            invocations: 32
        }));
    // Uniform control flow: the whole subgroup takes the branch.
    let good = copy_shader("gl_WorkGroupID.x == 0u", "16");
    let (out, report) = run(&good, 32, &[floats(256), floats(256)], Default::default());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(common::to_f32s(&out[1])[5], 10.0);
}

#[test]
fn non_uniform_stride() {
    let bad = copy_shader("true", "16u + (gl_SubgroupInvocationID & 1u)");
    let (_, report) = run(&bad, 32, &[floats(512), floats(256)], Default::default());
    let found = coopmat_findings(&report);
    // The 16 odd invocations differ from invocation 0.
    assert_eq!(found.len(), 16, "{found:?}");
    assert!(found
        .iter()
        .all(|f| *f == CoopmatFinding::NotUniform { operand: "Stride" }));
    let good = copy_shader("true", "16u + (gl_WorkGroupID.x & 1u)");
    let (_, report) = run(&good, 32, &[floats(512), floats(256)], Default::default());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}

#[test]
fn saturating_mul_add_overflow() {
    let src = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer A {{ int8_t a[]; }};
layout(set = 0, binding = 1) buffer O {{ int8_t o[]; }};
void main() {{
  coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
  coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mb, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc =
      coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(int8_t(100));
  mc = coopMatMulAdd(ma, mb, mc, gl_MatrixOperandsSaturatingAccumulation);
  coopMatStore(mc, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    // 1 everywhere: A x B = 16 per element, plus 100 stays below 127: no finding.
    let (out, report) = run(&src, 32, &[vec![1; 256], vec![0; 256]], Default::default());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert!(out[1].iter().all(|&v| v == 116));
    // 3 everywhere: A x B = 144 overflows int8 before C is added: every element is undefined.
    let (_, report) = run(&src, 32, &[vec![3; 256], vec![0; 256]], Default::default());
    let found = coopmat_findings(&report);
    assert_eq!(found.len() + report.stats.dropped_diagnostics as usize, 256);
    assert!(matches!(
        found.first(),
        Some(CoopmatFinding::SaturatingOverflow { row: 0, col: 0 })
    ));
    // 2 everywhere: 64 + 100 saturates to 127, which is defined.
    let (out, report) = run(&src, 32, &[vec![2; 256], vec![0; 256]], Default::default());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert!(out[1].iter().all(|&v| v == 127));
}

/// Each invocation writes composite index 0 of a `rows`x8 matrix (128 invocations).
fn index_shader(rows: u32) -> String {
    format!(
        "{HEADER}
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
layout(set = 0, binding = 1) buffer O {{ float o[]; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, {rows}, 8, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
  o[gl_LocalInvocationIndex] = m[0];
}}
"
    )
}

#[test]
fn reading_an_index_that_holds_no_element() {
    // 8x8 = 64 elements over 128 invocations: half of them hold none.
    for layout in CoopmatLayout::all() {
        let (_, report) = run(&index_shader(8), 128, &[floats(64), floats(128)], layout);
        let found = coopmat_findings(&report);
        assert_eq!(found.len(), 64, "{layout}");
        assert!(found
            .iter()
            .all(|f| *f == CoopmatFinding::UnownedElement { index: 0 }));
        // 16x8 = 128: every invocation holds one.
        let (out, report) = run(&index_shader(16), 128, &[floats(128), floats(128)], layout);
        assert!(report.diagnostics.is_empty(), "{layout}");
        let mut got = common::to_f32s(&out[1]);
        got.sort_by(f32::total_cmp);
        assert_eq!(
            got,
            (0..128).map(|i| i as f32).collect::<Vec<_>>(),
            "{layout}"
        );
    }
}

#[test]
fn out_of_bounds_loads_and_stores_touch_no_memory() {
    let src = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
layout(set = 0, binding = 1) buffer O {{ float o[]; }};
layout(set = 0, binding = 2) buffer P {{ float p[]; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 200, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, p, 100, 16, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    let bufs = [floats(256), vec![0xee; 1024], vec![0xee; 1024]];
    let (out, report) = run(&src, 32, &bufs, Default::default());
    let oob = report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.finding, Finding::OutOfBounds { .. }))
        .count();
    assert_eq!(oob, report.diagnostics.len());
    // Row-striped: lanes 7..31 hold rows past element 256 - 200 = 56 of x, and lanes 20..31
    // rows past p's 256 floats: at least one report each.
    assert!(oob >= 2, "{:?}", report.diagnostics);
    let o = common::to_f32s(&out[1]);
    // Elements read in bounds came through; the rest read 0.
    assert_eq!(o[0], 200.0);
    assert_eq!(o[55], 255.0);
    assert_eq!(o[56], 0.0);
    // p keeps its bytes below element 100 and gets the in-bounds part of the store.
    let p = common::to_f32s(&out[2]);
    assert_eq!(p[99].to_bits(), 0xeeee_eeee);
    assert_eq!(p[100], 200.0);
    assert_eq!(out[2].len(), 1024);
}

#[test]
fn a_shader_assuming_one_layout_is_caught_by_another() {
    // Writes index i of invocation l to o[l * L + i]: the row-major matrix only if the layout
    // is row-striped.
    let assuming = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
layout(set = 0, binding = 1) buffer O {{ float o[]; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  uint l = gl_SubgroupInvocationID;
  for (int i = 0; i < m.length(); ++i) {{ o[l * uint(m.length()) + uint(i)] = m[i]; }}
}}
"
    );
    let correct = copy_shader("true", "16");
    let results = |src: &str| -> Vec<Vec<f32>> {
        CoopmatLayout::all()
            .into_iter()
            .map(|layout| {
                let (out, report) = run(src, 32, &[floats(256), floats(256)], layout);
                assert!(report.diagnostics.is_empty());
                common::to_f32s(&out[1])
            })
            .collect()
    };
    let a = results(&assuming);
    assert_eq!(a[0], (0..256).map(|i| i as f32).collect::<Vec<_>>());
    assert!(
        a[1..].iter().all(|r| *r != a[0]),
        "every other layout differs"
    );
    let c = results(&correct);
    assert!(c.iter().all(|r| *r == c[0]), "the correct shader agrees");
}

#[test]
fn workgroup_scope_and_partial_subgroups_are_refused() {
    let workgroup = format!(
        "{HEADER}
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ float x[]; }};
void main() {{
  coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    // A profile without workgroup-scope entries refuses it at pipeline creation (VUID 10164)...
    match pipeline(&workgroup, 32) {
        Err(e @ ExecError::ProfileLacks { .. }) => {
            assert!(
                e.to_string().contains("cooperativeMatrixWorkgroupScope"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
    // ...and one that lists it still does not run it: tangle holds matrices per subgroup.
    let mut profile = common::coopmat_profile(32);
    let mut entry = *profile
        .cooperative_matrix
        .iter()
        .find(|e| (e.m, e.n, e.result) == (16, 16, tangle_exec::profile::ComponentType::Float32))
        .expect("a 16x16 f32 accumulator entry");
    entry.scope = tangle_exec::profile::MatrixScope::Workgroup;
    profile.cooperative_matrix.push(entry);
    let module = compile(&workgroup);
    match Device::new(profile).compute_pipeline(&module, "main", &SpecConstants::new()) {
        Err(ExecError::Unsupported { what, .. }) => assert!(what.contains("scope 2"), "{what}"),
        other => panic!("{other:?}"),
    }
    let partial = copy_shader("true", "16").replace("local_size_x = 32", "local_size_x = 48");
    match pipeline(&partial, 32) {
        Err(e @ ExecError::ProfileLacks { .. }) => {
            assert!(
                e.to_string()
                    .contains("not a multiple of its subgroup size"),
                "{e}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn division_by_zero_is_found_in_elements_only() {
    // 8x8 over 128 invocations: half the positions hold no element (and zeros); only a zero
    // element of the divisor is a finding.
    let src = format!(
        "{HEADER}
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer X {{ int x[]; }};
layout(set = 0, binding = 1) buffer Y {{ int y[]; }};
layout(set = 0, binding = 2) buffer O {{ int o[]; }};
void main() {{
  coopmat<int, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> a;
  coopmat<int, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> b;
  coopMatLoad(a, x, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, y, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(a / b, o, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    let x: Vec<u32> = (0..64).map(|i| (i * 7) as u32).collect();
    for layout in CoopmatLayout::all() {
        let mut y: Vec<u32> = (0..64).map(|i| (i % 5 + 1) as u32).collect();
        let bufs = [common::u32s(&x), common::u32s(&y), vec![0; 256]];
        let (out, report) = run(&src, 128, &bufs, layout);
        assert!(
            report.diagnostics.is_empty(),
            "{layout}: {:?}",
            report.diagnostics
        );
        let o = common::to_u32s(&out[2]);
        assert!((0..64).all(|i| o[i] == x[i] / y[i]), "{layout}");
        y[13] = 0;
        let bufs = [common::u32s(&x), common::u32s(&y), vec![0; 256]];
        let (_, report) = run(&src, 128, &bufs, layout);
        let found: Vec<&Finding> = report.diagnostics.iter().map(|d| &d.finding).collect();
        assert_eq!(found, vec![&Finding::DivisionByZero], "{layout}");
    }
}

#[test]
fn huge_load_stride_and_zero_store_stride() {
    let src = format!(
        "{HEADER}
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer X {{ int load_stride; uint store_stride; float x[]; }};
layout(set = 0, binding = 1) buffer O {{ float o[]; }};
void main() {{
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
  coopMatLoad(m, x, 240, load_stride, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(m, o, 0, store_stride, gl_CooperativeMatrixLayoutRowMajor);
}}
"
    );
    let words = |load: i32, store: u32| -> Vec<u8> {
        let mut v = load.to_le_bytes().to_vec();
        v.extend(store.to_le_bytes());
        v.extend(floats(256));
        v
    };
    // GLSL passes Stride as a uint: -16 reads as 2^32 - 16, far out of bounds, never wrapped
    // back into the buffer. (A signed Stride type makes it a negative Stride: `BadStride`.)
    let (out, report) = run(&src, 32, &[words(-16, 16), floats(256)], Default::default());
    assert!(!report.diagnostics.is_empty());
    assert!(report
        .diagnostics
        .iter()
        .all(|d| matches!(d.finding, Finding::OutOfBounds { .. })));
    // Row 0 is in bounds; row 1 is not and reads 0.
    let o = common::to_f32s(&out[1]);
    assert_eq!((o[0], o[16]), (240.0, 0.0));
    let (_, report) = run(&src, 32, &[words(16, 0), floats(256)], Default::default());
    let found: Vec<CoopmatFinding> = report
        .diagnostics
        .iter()
        .filter_map(|d| match &d.finding {
            Finding::Coopmat(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 32);
    assert!(found.iter().all(|f| *f
        == CoopmatFinding::BadStride {
            stride: 0,
            store: true
        }));
    let (_, report) = run(&src, 32, &[words(0, 16), vec![0; 1024]], Default::default());
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}

/// A load whose Stride has a signed type and a negative value: reported, and the rows are read
/// backwards from Pointer (in bounds here).
const NEGATIVE_STRIDE: &str = "OpCapability Shader
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpExtension \"SPV_KHR_cooperative_matrix\"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main \"main\" %bx %bo
OpExecutionMode %main LocalSize 32 1 1
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %bx DescriptorSet 0
OpDecorate %bx Binding 0
OpDecorate %bo DescriptorSet 0
OpDecorate %bo Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%c0 = OpConstant %u32 0
%c2 = OpConstant %u32 2
%c3 = OpConstant %u32 3
%c16 = OpConstant %u32 16
%c240 = OpConstant %u32 240
%stride = OpConstant %i32 -16
%mat = OpTypeCooperativeMatrixKHR %u32 %c3 %c16 %c16 %c2
%arr = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu32 = OpTypePointer StorageBuffer %u32
%bx = OpVariable %pblk StorageBuffer
%bo = OpVariable %pblk StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
%px = OpAccessChain %pu32 %bx %c0 %c240
%m = OpCooperativeMatrixLoadKHR %mat %px %c0 %stride
%po = OpAccessChain %pu32 %bo %c0 %c0
OpCooperativeMatrixStoreKHR %po %m %c0 %c16
OpReturn
OpFunctionEnd
";

#[test]
fn negative_signed_load_stride() {
    use tangle_spirv::text::{assemble, AssembleOptions};
    let (module, _) = assemble(NEGATIVE_STRIDE, &AssembleOptions::default()).expect("assembles");
    let module = common::validated(module);
    let p = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    let mut res = Resources::default();
    res.buffers.insert((0, 0), floats(256));
    res.buffers.insert((0, 1), vec![0; 1024]);
    let report = p
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    let found = coopmat_findings(&report);
    assert_eq!(found.len(), 32);
    assert!(found.iter().all(|f| *f
        == CoopmatFinding::BadStride {
            stride: -16,
            store: false
        }));
    let o = common::to_u32s(&res.buffers[&(0, 1)]);
    // Row r from word 240 - 16 r: 240, then 224, ...
    assert_eq!(
        (o[0], o[16], o[255]),
        (240f32.to_bits(), 224f32.to_bits(), 15f32.to_bits())
    );
}
