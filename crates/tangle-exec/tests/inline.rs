//! Calls inlined for the fast tiers (`lower/inline.rs`): kernels whose helpers glslang leaves as
//! `OpFunctionCall`s run on the native tier and the wide interpreter, with the reference path's
//! bytes and findings (a race inside a helper found at the helper's instruction, subgroup
//! operations after calls in divergent control flow joined where the reference path joins).

mod common;

use common::{compile, to_u32s, u32s};
use tangle_exec::{Device, Profile, Report, Resources, RunOptions, SpecConstants};

/// Which tiers a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    Reference,
    Wide,
    Native,
}

/// Runs GLSL `src` over `groups` workgroups with buffer 0 of `words` words (word `i` = `i`),
/// on `tier`: the buffer and the report.
fn run(src: &str, words: u32, groups: u32, tier: Tier) -> (Vec<u32>, Report) {
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers
        .insert((0, 0), u32s(&(0..words).collect::<Vec<_>>()));
    let options = RunOptions {
        threads: 2,
        wide: tier != Tier::Reference,
        jit: tier == Tier::Native,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, [groups, 1, 1], &options)
        .expect("dispatch");
    (to_u32s(&res.buffers[&(0, 0)]), report)
}

/// Runs `src` on every tier: each must give the reference path's bytes and findings.
fn same_everywhere(src: &str, words: u32, groups: u32) -> [Report; 3] {
    let (want, reference) = run(src, words, groups, Tier::Reference);
    let (wide_bytes, wide) = run(src, words, groups, Tier::Wide);
    let (native_bytes, native) = run(src, words, groups, Tier::Native);
    assert_eq!(wide_bytes, want, "wide interpreter");
    assert_eq!(native_bytes, want, "native tier");
    assert_eq!(wide.diagnostics, reference.diagnostics);
    assert_eq!(native.diagnostics, reference.diagnostics);
    [reference, wide, native]
}

/// Helpers with a return value, a nested call, calls in a loop and in divergent control
/// flow. (glslang passes every parameter as the pointer of a Function variable, which the fast
/// tiers do not take yet: these helpers read built-ins and buffers instead.)
const HELPERS: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint id() { return gl_GlobalInvocationID.x; }
uint mix3() { return o[id()] * 3u + (id() ^ 5u); }
uint twice() { return mix3() + mix3() * 7u; }
uint pick() {
    if ((id() & 1u) != 0u) { return twice(); }
    return id() + 7u;
}
void main() {
    uint i = id();
    uint acc = o[i];
    for (uint k = 0u; k < (i & 7u); k++) { acc = acc * 5u + mix3(); }
    if ((i % 3u) == 0u) { acc += pick(); } else { acc += twice(); }
    o[i] = acc;
}
";

#[test]
fn helpers_run_on_the_native_tier_with_the_reference_results() {
    let [reference, wide, native] = same_everywhere(HELPERS, 256, 4);
    assert_eq!(reference.stats.wide_invocations, 0);
    assert_eq!(wide.stats.wide_invocations, 256, "{:?}", wide.paths);
    assert_eq!(wide.stats.jit_invocations, 0);
    assert_eq!(native.stats.jit_invocations, 256, "{:?}", native.paths);
    assert!(native.paths.0.is_empty(), "{:?}", native.paths);
}

#[test]
fn a_pointer_parameter_gives_the_reference_results() {
    // `inout` passes a Function variable's pointer: the helper writes through it.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void bump(inout uint x, uint by) { x = x * 5u + by; }
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = o[i];
    bump(v, i);
    if ((i & 2u) != 0u) { bump(v, 3u); }
    o[i] = v;
}
";
    // The `param` temporaries glslang passes live in invocation memory; after inlining their
    // pointers are known at every access, so they go to registers
    // (`lower/promote_inlined.rs`) and the kernel runs on the native tier.
    let [_, _, native] = same_everywhere(src, 128, 2);
    assert_eq!(native.stats.jit_invocations, 128, "{:?}", native.paths);
}

/// ggml's element-wise shape: a Private global offset, helpers taking their parameters as
/// `param` temporaries, `out` parameters, a vector parameter and return.
const GGML_SHAPED: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint p_offset;
uint src_idx(uint idx) { return p_offset + idx; }
float op_mul(float a, float b) { return a * b; }
void rope_yarn(float theta, uint i0, out float c, out float s) {
    c = theta * 0.5;
    s = theta + float(i0);
}
vec2 pair(vec2 v, uint k) { return v * float(k & 7u); }
void main() {
    uint i = gl_GlobalInvocationID.x;
    p_offset = i & 3u;
    float c;
    float s;
    rope_yarn(float(o[i]), i, c, s);
    vec2 v = pair(vec2(c, s), src_idx(i));
    if ((i & 1u) != 0u) { v = pair(v, 3u); }
    o[i] = floatBitsToUint(op_mul(v.x, v.y)) ^ src_idx(i);
}
";

#[test]
fn param_temporaries_and_private_globals_run_on_the_native_tier() {
    let [reference, wide, native] = same_everywhere(GGML_SHAPED, 256, 4);
    assert!(
        reference.diagnostics.is_empty(),
        "{:?}",
        reference.diagnostics
    );
    assert_eq!(wide.stats.wide_invocations, 256, "{:?}", wide.paths);
    assert_eq!(native.stats.jit_invocations, 256, "{:?}", native.paths);
}

#[test]
fn a_variable_that_may_be_read_undefined_stays_on_the_reference_path() {
    // A Private global and a helper's local, each stored on some lanes only before a read:
    // the reference path reports or carries the undefined value; the fast tiers do not take
    // the program (a definite-assignment check over the promoted slots) and say why.
    for src in [
        "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint g;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if ((i & 1u) == 0u) { g = i; }
    o[i] = g + 1u;
}
",
        "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint pick(uint x) {
    uint t;
    if (x > 3u) { t = x * 3u; }
    return t;
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = pick(o[i]) + 1u;
}
",
    ] {
        let [reference, wide, native] = same_everywhere(src, 128, 2);
        assert!(
            !reference.diagnostics.is_empty(),
            "the undefined value is reported"
        );
        assert_eq!(wide.stats.wide_invocations, 0);
        assert_eq!(native.stats.jit_invocations, 0);
        let why = format!("{:?}", native.paths);
        assert!(why.contains("an OpUndef value that may be read"), "{why}");
    }
}

#[test]
fn a_race_inside_a_helper_is_found_at_the_helper() {
    // Invocations 2k and 2k + 1 store to the same word inside `put`.
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
void put() { o[gl_GlobalInvocationID.x / 2u] = 1u; }
void main() { put(); }
";
    let [reference, _, native] = same_everywhere(src, 64, 1);
    assert!(!reference.diagnostics.is_empty(), "the race is reported");
    assert_eq!(native.stats.jit_invocations, 0);
    assert_eq!(native.paths.0, ["native: gave up: a possible data race"]);
}

#[test]
fn subgroup_operations_after_divergent_calls_join_as_the_reference_path_does() {
    // Lanes return from `early` at two different returns, then meet at a ballot: on the
    // reference path they rejoin after the call, so the ballot sees every lane.
    let src = "#version 450
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint early() {
    uint a = o[gl_GlobalInvocationID.x];
    if ((a & 3u) == 1u) { return a * 9u; }
    for (uint k = 0u; k < (a & 3u); k++) { a = a * 7u + k; }
    return a;
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = early();
    if ((i & 4u) != 0u) { v += early(); }
    uvec4 b = subgroupBallot((v & 1u) != 0u);
    o[i] = v + b.x + subgroupAdd(v);
}
";
    let [_, wide, _] = same_everywhere(src, 256, 4);
    assert_eq!(wide.stats.wide_invocations, 256, "{:?}", wide.paths);
}

/// ggml's mat-vec shape (`mul_mat_vecq.comp`, `mul_mat_vec_base.glsl`): Private offsets set
/// through `out` parameters, an accumulator `temp[NUM_COLS][NUM_ROWS]` zeroed and summed into
/// by loop counters (not unrolled), passed `inout` to helpers (glslang copies it to a `param`
/// array and back), reduced with `subgroupAdd`; the last workgroups use fewer rows than
/// NUM_ROWS, so some elements are never stored (and copied undefined, never read); the
/// function holding it is called from two places. `EXTRA` is spliced in after the reduction:
/// the cases below read out of range or an
/// element never stored there.
const MAT_VEC: &str = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
#define NUM_COLS 2
#define NUM_ROWS 3
uint a_offset, d_offset;
void get_offsets(out uint a, out uint d) {
    a = gl_WorkGroupID.x * 5u;
    d = 512u + gl_WorkGroupID.x * NUM_COLS * NUM_ROWS;
}
void iter(inout float temp[NUM_COLS][NUM_ROWS], const uint num_rows, const uint col) {
    for (uint j = 0u; j < NUM_COLS; ++j) {
        for (uint n = 0u; n < num_rows; ++n) {
            temp[j][n] += float(o[(col + j * 7u + n * 3u + a_offset) & 255u] & 1023u);
        }
    }
}
void reduce_result(inout float temp[NUM_COLS][NUM_ROWS], const uint num_rows, const uint tid) {
    for (uint j = 0u; j < NUM_COLS; ++j) {
        for (uint n = 0u; n < num_rows; ++n) {
            temp[j][n] = subgroupAdd(temp[j][n]);
        }
    }
    if (tid == 0u) {
        for (uint j = 0u; j < NUM_COLS; ++j) {
            for (uint n = 0u; n < num_rows; ++n) {
                o[d_offset + j * NUM_ROWS + n] = floatBitsToUint(temp[j][n]);
            }
        }
    }
}
void compute_outputs(const uint tid, const uint num_rows) {
    float temp[NUM_COLS][NUM_ROWS];
    for (uint j = 0u; j < NUM_COLS; ++j) {
        for (uint n = 0u; n < num_rows; ++n) {
            temp[j][n] = 0.0;
        }
    }
    uint col = tid * 4u;
    for (uint k = 0u; k < 1u + (gl_WorkGroupID.x & 1u); ++k) {
        iter(temp, num_rows, col);
        col += 128u;
    }
    reduce_result(temp, num_rows, tid);
    EXTRA
}
void main() {
    const uint tid = gl_LocalInvocationID.x;
    get_offsets(a_offset, d_offset);
    // Two calls, as ggml's tail: the helper and its copies inlined twice, in the same slots.
    if (gl_WorkGroupID.x == 5u) {
        compute_outputs(tid, 1u);
    } else {
        compute_outputs(tid, min(NUM_ROWS, 1u + gl_WorkGroupID.x % 3u));
    }
}
";

#[test]
fn accumulator_arrays_indexed_by_loop_counters_run_on_the_wide_path() {
    let src = MAT_VEC.replace("EXTRA", "");
    let [reference, wide, native] = same_everywhere(&src, 640, 6);
    assert!(
        reference.diagnostics.is_empty(),
        "{:?}",
        reference.diagnostics
    );
    assert_eq!(wide.stats.wide_invocations, 192, "{:?}", wide.paths);
    // The native tier has no code for the arrays' ops: it gives them to the wide path.
    assert_eq!(native.stats.wide_invocations, 192, "{:?}", native.paths);
    let why = format!("{:?}", native.paths);
    assert!(why.contains("no native code for Array"), "{why}");
}

#[test]
fn an_array_index_out_of_range_or_an_element_never_stored_is_given_back() {
    // The workgroups index differently, so which give-up a batch meets first depends on the
    // thread schedule: the out-of-range case may also stop at an element of another workgroup
    // that was never stored; the reference path's finding names the index either way.
    for (extra, what, reasons, finding) in [
        // Row NUM_ROWS of one column: out of range (temp[0][3] is inside the variable).
        (
            "if (tid == 5u) { o[600u + gl_WorkGroupID.x] = floatBitsToUint(temp[0][num_rows + 2u - gl_WorkGroupID.x % 3u]); }",
            "out of range",
            &[
                "access chain index 3 is outside the 3 elements",
                "a load of an array element never stored",
            ][..],
            "ChainIndexOutOfRange",
        ),
        // Row 2 of a workgroup with one row: never stored.
        (
            "if (tid == 5u) { uint r = 2u; o[600u + gl_WorkGroupID.x] = floatBitsToUint(temp[1][r]); }",
            "never stored",
            &["a load of an array element never stored"][..],
            "",
        ),
    ] {
        let src = MAT_VEC.replace("EXTRA", extra);
        let [reference, wide, native] = same_everywhere(&src, 640, 6);
        assert!(!reference.diagnostics.is_empty(), "{what}: reported");
        let found = format!("{:?}", reference.diagnostics);
        assert!(found.contains(finding), "{what}: {found}");
        assert_eq!(wide.stats.wide_invocations, 0, "{what}: {:?}", wide.paths);
        assert_eq!(native.stats.wide_invocations, 0, "{what}: {:?}", native.paths);
        let why = format!("{:?}", wide.paths);
        assert!(reasons.iter().any(|r| why.contains(r)), "{what}: {why}");
    }
}

/// ggml's rope shape: a struct of parameters passed by value through two helpers (glslang
/// copies it whole into each `param`), one of its arrays indexed at run time, and `pow`
/// (whose domain the sanitizer checks: `Op::CheckDomain`, which the wide path now runs).
const ROPE: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
struct params { uint n; float base; float corr[2]; int sections[4]; };
float ramp(const float low, const float high, const uint i0) {
    return 1.0 - min(1.0, max(0.0, (float(i0 / 2u) - low) / max(0.001, high - low)));
}
float yarn(const float theta, const uint i0, params p) {
    return pow(p.base, theta) * ramp(p.corr[0], p.corr[1], i0);
}
uint rope(const uint i, params p) {
    return floatBitsToUint(yarn(float(o[i] & 7u) * 0.5, i, p)) + uint(p.sections[i & 3u]);
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    params p;
    p.n = i;
    p.base = BASE;
    p.corr[0] = 1.5;
    p.corr[1] = 9.0;
    for (uint k = 0u; k < 4u; k++) { p.sections[k] = int(k * 3u) - 2; }
    o[i] = rope(i, p);
}
";

#[test]
fn a_struct_passed_by_value_and_domain_checks_run_on_the_wide_path() {
    let src = ROPE.replace("BASE", "2.0");
    let [reference, wide, _] = same_everywhere(&src, 256, 4);
    assert!(
        reference.diagnostics.is_empty(),
        "{:?}",
        reference.diagnostics
    );
    assert_eq!(wide.stats.wide_invocations, 256, "{:?}", wide.paths);
    // `pow` of a negative base on odd lanes: the reference path's warning, given back.
    let src = ROPE.replace("BASE", "((i & 1u) == 0u ? 2.0 : -2.0)");
    let [reference, wide, _] = same_everywhere(&src, 256, 4);
    assert!(!reference.diagnostics.is_empty());
    assert_eq!(wide.stats.wide_invocations, 0);
    let why = format!("{:?}", wide.paths);
    assert!(why.contains("gave up: a finding"), "{why}");
}

#[test]
fn a_helper_ending_in_op_unreachable_runs_on_the_wide_path() {
    // Every case returns: glslang ends the function with an `OpUnreachable` block, never
    // reached (ggml's `set_rows` has one).
    let src = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) buffer O { uint o[]; };
uint pick(uint x) {
    switch (x & 3u) {
        case 0u: return x * 3u;
        case 1u: return x + 7u;
        default: return x ^ 5u;
    }
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = pick(o[i]);
}
";
    let module = compile(src);
    let unreachable = module.module().instructions.iter();
    assert!(
        unreachable
            .filter(|i| i.op() == Some(spirv::Op::Unreachable))
            .count()
            > 0,
        "an OpUnreachable"
    );
    let [_, wide, _] = same_everywhere(src, 128, 2);
    assert_eq!(wide.stats.wide_invocations, 128, "{:?}", wide.paths);
}
