//! Buffer bindings as views of shared allocations ([`tangle_exec::Resources::views`]): two
//! views of the same bytes alias exactly within a dispatch on every tier, a window of an
//! allocation leaves the bytes around it alone, the dispatch runs on the allocation in place,
//! and the race check keys bytes by allocation, naming both bindings.

mod common;
use common::*;
use tangle_exec::{Allocation, BufferView, Device, Finding, Profile, Resources, RunOptions};

fn pipeline(src: &str) -> tangle_exec::Pipeline {
    Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &Default::default())
        .expect("pipeline")
}

fn view(memory: &Allocation, offset: u64, range: u64) -> BufferView {
    BufferView {
        memory: memory.clone(),
        offset,
        range,
    }
}

/// The tiers a test runs on: the reference path, the wide interpreter, the native tier.
fn tiers() -> [(&'static str, RunOptions); 3] {
    let reference = RunOptions {
        wide: false,
        ..RunOptions::default()
    };
    let wide = RunOptions {
        jit: false,
        ..RunOptions::default()
    };
    [
        ("reference", reference),
        ("wide", wide),
        ("native", RunOptions::default()),
    ]
}

/// Each invocation stores through binding 0 (bytes 8..24 of the allocation) and loads the
/// same bytes back through binding 1 (all of it): it sees its own store, in program order.
const THROUGH_TWO_VIEWS: &str = "#version 450
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) buffer C { uint c[]; };
void main() {
  uint i = gl_LocalInvocationIndex;
  a[i] = i + 100u;
  c[i] = b[i + 2u] * 2u;
}";

#[test]
fn overlapping_views_alias_exactly_on_every_tier() {
    let p = pipeline(THROUGH_TWO_VIEWS);
    for (tier, options) in tiers() {
        let memory = Allocation::from_bytes(&u32s(&[0, 1, 2, 3, 4, 5, 6, 7]));
        let out = Allocation::zeroed(16);
        let mut res = Resources::default();
        res.views.insert((0, 0, 0), view(&memory, 8, 16));
        res.views.insert((0, 1, 0), view(&memory, 0, 32));
        res.views.insert((0, 2, 0), BufferView::whole(out.clone()));
        let report = p.dispatch(&mut res, [1, 1, 1], &options).expect(tier);
        assert!(
            report.diagnostics.is_empty(),
            "{tier}: {:?}",
            report.diagnostics
        );
        // Four invocations, too few for the wide interpreter (and the native tier refuses
        // written views sharing bytes): the reference path ran it. `aliased_views.rs` has
        // grids the wide interpreter takes.
        assert_eq!(
            report.stats.wide_invocations + report.stats.jit_invocations,
            0
        );
        // In the allocations the front end holds: nothing is copied back.
        let all = memory.read(0, 32).expect("in bounds");
        assert_eq!(to_u32s(&all), [0, 1, 100, 101, 102, 103, 6, 7], "{tier}");
        let c = out.read(0, 16).expect("in bounds");
        assert_eq!(to_u32s(&c), [200, 202, 204, 206], "{tier}");
    }
}

const TRIPLE: &str = "#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer A { uint a[]; };
void main() { uint i = gl_GlobalInvocationID.x; a[i] = a[i] * 3u + i; }";

#[test]
fn a_window_changes_only_its_bytes_on_every_tier() {
    let p = pipeline(TRIPLE);
    // 1024 invocations (the wide interpreter leaves small grids to the reference path), in
    // a window starting on a word (every tier) and inside one (no native tier: the wide
    // interpreter).
    let (len, window) = (4200usize, 4096usize);
    for offset in [12u64, 6] {
        for (tier, options) in tiers() {
            let bytes: Vec<u8> = (0..len as u32).map(|i| (i * 7 + 3) as u8).collect();
            let memory = Allocation::from_bytes(&bytes);
            let mut res = Resources::default();
            res.views
                .insert((0, 0, 0), view(&memory, offset, window as u64));
            let report = p.dispatch(&mut res, [128, 1, 1], &options).expect(tier);
            // The tier named ran it: the native one only where the view starts on a word.
            let (wide, native) = (report.stats.wide_invocations, report.stats.jit_invocations);
            match (tier, offset % 4) {
                ("reference", _) => assert_eq!((wide, native), (0, 0), "{tier} at {offset}"),
                ("native", 0) => assert_eq!(native, 1024, "{tier} at {offset}"),
                _ => assert_eq!((wide, native), (1024, 0), "{tier} at {offset}"),
            }
            let mut want = bytes.clone();
            let at = offset as usize;
            let old = to_u32s(&bytes[at..at + window]);
            let new: Vec<u32> = (0u32..)
                .zip(old)
                .map(|(i, v)| v.wrapping_mul(3).wrapping_add(i))
                .collect();
            want[at..at + window].copy_from_slice(&u32s(&new));
            assert_eq!(memory.read(0, len as u64), Some(want), "{tier} at {offset}");
        }
    }
}

/// Invocation 0 writes word 0 of binding 0; invocation 1 writes word 2 of binding 1, which
/// starts 8 bytes before it in the same allocation: the same bytes, with nothing ordering the
/// two stores.
const TWO_WRITERS: &str = "#version 450
layout(local_size_x = 2) in;
layout(std430, set = 0, binding = 0) buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) buffer B { uint b[]; };
void main() {
  if (gl_LocalInvocationIndex == 0u) { a[0] = 1u; }
  if (gl_LocalInvocationIndex == 1u) { b[2] = 2u; }
}";

#[test]
fn writes_of_the_same_bytes_through_two_views_race() {
    let p = pipeline(TWO_WRITERS);
    for (tier, options) in tiers() {
        let memory = Allocation::zeroed(32);
        let mut res = Resources::default();
        res.views.insert((0, 0, 0), view(&memory, 8, 8));
        res.views.insert((0, 1, 0), view(&memory, 0, 32));
        let report = p.dispatch(&mut res, [1, 1, 1], &options).expect(tier);
        let races: Vec<_> = report
            .diagnostics
            .iter()
            .filter_map(|d| match &d.finding {
                Finding::Race(r) => Some(r),
                _ => None,
            })
            .collect();
        let [race] = races[..] else {
            panic!("{tier}: one race, got {:?}", report.diagnostics);
        };
        // Counted from the view that starts lowest, naming the other binding too.
        assert_eq!(race.bytes, (8, 12), "{tier}");
        assert_eq!(
            race.region,
            "buffer (set 0, binding 1) (bytes from its start; the same memory as buffer (set 0, binding 0))",
            "{tier}"
        );
        assert!(race.write && race.other_write, "{tier}");
        // Separate allocations: the same offsets, no race.
        let mut apart = Resources::default();
        apart
            .views
            .insert((0, 0, 0), view(&Allocation::zeroed(32), 8, 8));
        apart
            .views
            .insert((0, 1, 0), view(&Allocation::zeroed(32), 0, 32));
        let report = p.dispatch(&mut apart, [1, 1, 1], &options).expect(tier);
        assert!(
            report.diagnostics.is_empty(),
            "{tier}: {:?}",
            report.diagnostics
        );
    }
}

#[test]
fn views_past_their_allocation_or_bound_twice_are_refused() {
    let p = pipeline(TRIPLE);
    let memory = Allocation::zeroed(64);
    let mut res = Resources::default();
    res.views.insert((0, 0, 0), view(&memory, 8, 64));
    let e = p.dispatch(&mut res, [1, 1, 1], &RunOptions::default());
    assert!(
        e.as_ref()
            .is_err_and(|e| e.to_string().contains("outside its allocation")),
        "{e:?}"
    );
    let mut res = Resources::default();
    res.views.insert((0, 0, 0), view(&memory, 0, 64));
    res.buffers.insert((0, 0), vec![0; 64]);
    let e = p.dispatch(&mut res, [1, 1, 1], &RunOptions::default());
    assert!(
        e.as_ref()
            .is_err_and(|e| e.to_string().contains("both as bytes and as a view")),
        "{e:?}"
    );
}
