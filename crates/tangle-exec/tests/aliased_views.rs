//! Dispatches whose written bindings share bytes with others (issue 31: ggml binds activations,
//! destination and scratch as ranges of one `VkBuffer` that all run to its end): the wide
//! interpreter runs them, its race screen keying bytes by the run of overlapping views as the
//! reference path's race check does (`View::alias`), so disjoint accesses through overlapping
//! ranges stay on it, a real race between two bindings gives the dispatch back to the
//! reference path, which reports it, and a give-up puts the shared bytes back first. The native
//! tier refuses such dispatches by name. Every case's bytes and findings are the reference
//! path's.

mod common;
use common::*;
use tangle_exec::{Allocation, BufferView, Device, Profile, Report, Resources, RunOptions};

/// Words of each binding's part: one per invocation (16 workgroups of 64).
const N: u64 = 1024;

fn pipeline(src: &str) -> tangle_exec::Pipeline {
    Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &Default::default())
        .expect("pipeline")
}

/// Bytes `offset ..` of `memory`, to its end, as ggml binds its descriptors.
fn to_end(memory: &Allocation, offset: u64) -> BufferView {
    BufferView {
        memory: memory.clone(),
        offset,
        range: memory.len() - offset,
    }
}

/// Runs `src` over one allocation of `words` words (word `k` holding `k * 7 + 3`), binding `b`
/// being the allocation from byte `starts[b]` to its end: the report and the allocation's
/// words after.
fn run(src: &str, words: u64, starts: &[u64], options: &RunOptions) -> (Report, Vec<u32>) {
    let init: Vec<u32> = (0..words as u32).map(|k| k * 7 + 3).collect();
    let memory = Allocation::from_bytes(&u32s(&init));
    let mut res = Resources::default();
    for (b, &start) in starts.iter().enumerate() {
        res.views.insert((0, b as u32, 0), to_end(&memory, start));
    }
    let report = pipeline(src)
        .dispatch(&mut res, [(N / 64) as u32, 1, 1], options)
        .expect("dispatch");
    let bytes = memory.read(0, words * 4).expect("in bounds");
    (report, to_u32s(&bytes))
}

fn reference() -> RunOptions {
    RunOptions {
        wide: false,
        ..RunOptions::default()
    }
}

/// The note the native tier leaves on such a dispatch.
const REFUSED: &str = "native: not taken: a region it may write shares bytes with another";

/// Runs `src` on the reference path and with every tier on: the same bytes and findings;
/// the fast run's report.
fn same_as_reference(src: &str, words: u64, starts: &[u64]) -> Report {
    let (want, want_bytes) = run(src, words, starts, &reference());
    assert_eq!(want.stats.wide_invocations + want.stats.jit_invocations, 0);
    let (got, bytes) = run(src, words, starts, &RunOptions::default());
    let first_diff = bytes.iter().zip(&want_bytes).position(|(a, b)| a != b);
    assert_eq!(
        first_diff, None,
        "the first word unlike the reference's; {:?}",
        got.paths
    );
    assert_eq!(
        format!("{:?}", got.diagnostics),
        format!("{:?}", want.diagnostics)
    );
    assert!(got.paths.0.iter().any(|n| n == REFUSED), "{:?}", got.paths);
    assert_eq!(got.stats.jit_invocations, 0);
    got
}

/// ggml's shape: a source, a destination and a second source, each bound from its own offset
/// to the allocation's end, accessed in disjoint parts.
const GGML: &str = "#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer D { uint d[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  d[i] = a[i] * 3u + b[i];
}";

#[test]
fn disjoint_accesses_through_overlapping_ranges_run_on_the_wide_path() {
    let r = same_as_reference(GGML, 3 * N, &[0, 4 * N, 8 * N]);
    assert_eq!(r.stats.wide_invocations, N, "{:?}", r.paths);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    // The bytes themselves, once: d[i] (word N + i) is a[i] * 3 + b[i] (words i, 2N + i).
    let (_, words) = run(GGML, 3 * N, &[0, 4 * N, 8 * N], &RunOptions::default());
    let init = |k: u64| (k * 7 + 3) as u32;
    for i in [0, 1, N - 1] {
        let want = init(i).wrapping_mul(3).wrapping_add(init(2 * N + i));
        assert_eq!(words[(N + i) as usize], want, "d[{i}]");
    }
}

/// Each invocation stores word `N + i` through binding 0 and loads it back through binding 1
/// (which starts N words lower), in program order: no race, and it sees its own store.
const OWN_STORE: &str = "#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) buffer C { uint c[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  a[i] = i + 100u;
  c[i] = b[1024u + i] * 2u;
}";

#[test]
fn a_store_through_one_binding_is_read_back_through_another() {
    let r = same_as_reference(OWN_STORE, 3 * N, &[4 * N, 0, 8 * N]);
    assert_eq!(r.stats.wide_invocations, N, "{:?}", r.paths);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let (_, words) = run(OWN_STORE, 3 * N, &[4 * N, 0, 8 * N], &RunOptions::default());
    assert_eq!(words[(2 * N + 7) as usize], (7 + 100) * 2);
}

/// Invocation 5 loads, through binding 1, the word invocation `partner` stores through binding
/// 0: the same bytes, nothing ordering the two (in one workgroup or in two).
fn cross(partner: u32) -> String {
    format!(
        "#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer A {{ uint a[]; }};
layout(std430, set = 0, binding = 1) buffer B {{ uint b[]; }};
layout(std430, set = 0, binding = 2) buffer C {{ uint c[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  a[i] = i + 100u;
  uint j = i == 5u ? {partner}u : i;
  c[i] = b[1024u + j] * 2u;
}}"
    )
}

#[test]
fn a_race_between_two_bindings_is_the_reference_paths_finding() {
    // In invocation 5's workgroup, and in the next one.
    for partner in [6, 70] {
        let r = same_as_reference(&cross(partner), 3 * N, &[4 * N, 0, 8 * N]);
        assert!(
            r.paths
                .0
                .iter()
                .any(|n| n == "wide: gave up: a possible data race"),
            "{partner}: {:?}",
            r.paths
        );
        assert_eq!(r.stats.wide_invocations, 0);
        let races: Vec<_> = r
            .diagnostics
            .iter()
            .filter_map(|d| match &d.finding {
                tangle_exec::Finding::Race(f) => Some(f),
                _ => None,
            })
            .collect();
        let [race] = races[..] else {
            panic!("{partner}: one race, got {:?}", r.diagnostics);
        };
        assert_eq!(race.across_workgroups, partner >= 64, "{partner}");
    }
}

/// Every invocation adds 1 to word `N + i` (loaded through binding 1, stored through binding
/// 0) and all store word 0 through binding 2: a race, found after the wide path's writes, so
/// the reference path must start again from the shared bytes as they were (each word added to
/// once, not twice).
const GIVE_UP: &str = "#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) buffer D { uint d[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  a[i] = b[1024u + i] + 1u;
  d[0] = 9u;
}";

#[test]
fn a_give_up_restores_the_shared_bytes() {
    let r = same_as_reference(GIVE_UP, 2 * N, &[4 * N, 0, 0]);
    assert!(
        r.paths
            .0
            .iter()
            .any(|n| n == "wide: gave up: a possible data race"),
        "{:?}",
        r.paths
    );
    let (_, words) = run(GIVE_UP, 2 * N, &[4 * N, 0, 0], &RunOptions::default());
    let init = |k: u64| (k * 7 + 3) as u32;
    assert_eq!(words[(N + 3) as usize], init(N + 3) + 1);
}
