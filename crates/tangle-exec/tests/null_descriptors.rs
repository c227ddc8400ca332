//! Null buffer descriptors (VK_EXT_robustness2 `nullDescriptor`, `tangle_exec::check::null`):
//! with the feature, loads through a storage or uniform buffer written with `VK_NULL_HANDLE`
//! give zero, stores and atomics change nothing (an atomic returns zero), `OpArrayLength` is
//! 0, on every tier and under every buffer robustness, with no finding; without it, each
//! access is a `descriptor` error naming the binding.

mod common;

use common::{compile, to_u32s};
use tangle_exec::check::kind::Kind;
use tangle_exec::check::robust::{RobustChoice, Robustness};
use tangle_exec::{Device, Finding, Profile, Report, Resources, RunOptions, SpecConstants};

/// Binding 0 and 2 are null (a storage and a uniform buffer), binding 1 the output: each
/// invocation writes what the null buffers gave it.
const SHADER: &str = r#"#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer N { uint v[]; } nul;
layout(set = 0, binding = 1) buffer O { uint o[]; } res;
layout(set = 0, binding = 2) uniform U { uint u; } uni;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint loaded = nul.v[i];
    nul.v[i] = 7u;
    uint old = atomicAdd(nul.v[i], 5u);
    res.o[i * 4u + 0u] = loaded + 100u;
    res.o[i * 4u + 1u] = old + 200u;
    res.o[i * 4u + 2u] = uint(nul.v.length()) + 300u;
    res.o[i * 4u + 3u] = uni.u + 400u;
}
"#;

/// The output buffer and the report of one dispatch of 2 workgroups.
fn run(options: &RunOptions) -> (Vec<u32>, Report) {
    let module = compile(SHADER);
    let device = Device::new(Profile::default().with_subgroup_size(4).expect("profile"));
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 1), vec![0xee; 16 * 16]);
    res.null_buffers.insert((0, 0, 0));
    res.null_buffers.insert((0, 2, 0));
    let report = pipeline
        .dispatch(&mut res, [2, 1, 1], options)
        .expect("dispatch");
    (to_u32s(&res.buffers[&(0, 1)]), report)
}

#[test]
fn null_buffers_read_zero_and_discard_writes_with_the_feature() {
    let expected: Vec<u32> = (0..16).flat_map(|_| [100, 200, 300, 400]).collect();
    let tiers = [(true, true), (true, false), (false, false)];
    let robustness = [
        (Robustness::Off, RobustChoice::Zero),
        (Robustness::Buffer, RobustChoice::InRange),
        (Robustness::Buffer2, RobustChoice::Zero),
    ];
    for (wide, jit) in tiers {
        for (r, choice) in robustness {
            let mut options = RunOptions {
                null_descriptor: true,
                robustness: r,
                wide,
                jit,
                threads: 1,
                ..RunOptions::default()
            };
            options.policy.robust = choice;
            let (out, report) = run(&options);
            assert_eq!(out, expected, "wide {wide}, jit {jit}, {r} {choice:?}");
            assert!(
                report.diagnostics.is_empty(),
                "wide {wide}, jit {jit}, {r}: {:?}",
                report.diagnostics
            );
        }
    }
}

#[test]
fn null_buffers_are_errors_without_the_feature() {
    let (out, report) = run(&RunOptions {
        threads: 1,
        ..RunOptions::default()
    });
    // The accesses still read zero and drop their writes.
    let expected: Vec<u32> = (0..16).flat_map(|_| [100, 200, 300, 400]).collect();
    assert_eq!(out, expected);
    assert!(!report.diagnostics.is_empty());
    let mut bindings = std::collections::BTreeSet::new();
    for d in &report.diagnostics {
        assert_eq!(d.finding.kind(), Kind::Descriptor, "{}", d.finding);
        let Finding::NullDescriptor { set, binding, .. } = d.finding else {
            panic!("not a null-descriptor finding: {}", d.finding);
        };
        bindings.insert((set, binding));
    }
    assert_eq!(bindings, [(0, 0), (0, 2)].into_iter().collect());
}

#[test]
fn a_binding_given_twice_is_refused() {
    let module = compile(SHADER);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0; 64]);
    res.buffers.insert((0, 1), vec![0; 64]);
    res.null_buffers.insert((0, 0, 0));
    res.null_buffers.insert((0, 2, 0));
    let e = pipeline
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .expect_err("refused");
    assert!(e.to_string().contains("null descriptor"), "{e}");
}

/// A null storage image (binding 0) and a null storage texel buffer (binding 1): loads, a
/// store, an image atomic and size queries, written to binding 2.
const IMAGES: &str = r#"#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D img;
layout(set = 0, binding = 1, r32ui) uniform uimageBuffer tb;
layout(set = 0, binding = 2) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uvec4 v = imageLoad(img, ivec2(i, 0));
    imageStore(img, ivec2(i, 0), uvec4(9u));
    uint old = imageAtomicAdd(img, ivec2(i, 0), 5u);
    ivec2 sz = imageSize(img);
    uvec4 t = imageLoad(tb, int(i));
    imageStore(tb, int(i), uvec4(3u));
    o[i * 8u + 0u] = v.x + 100u;
    o[i * 8u + 1u] = v.w + 200u;
    o[i * 8u + 2u] = old + 300u;
    o[i * 8u + 3u] = uint(sz.x) + 400u;
    o[i * 8u + 4u] = uint(sz.y) + 500u;
    o[i * 8u + 5u] = t.x + 600u;
    o[i * 8u + 6u] = t.w + 700u;
    o[i * 8u + 7u] = uint(imageSize(tb)) + 800u;
}
"#;

/// The output and report of [`IMAGES`] with both images null.
fn run_images(options: &RunOptions) -> (Vec<u32>, Report) {
    let module = compile(IMAGES);
    let device = Device::new(Profile::default().with_subgroup_size(4).expect("profile"));
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 2), vec![0xee; 4 * 32]);
    res.null_images.insert((0, 0, 0));
    res.null_images.insert((0, 1, 0));
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], options)
        .expect("dispatch");
    (to_u32s(&res.buffers[&(0, 2)]), report)
}

/// The alpha of an R32ui storage image or texel buffer read through a null descriptor is 0
/// or 1 (the format has no alpha, the SPIR-V format is explicit): the policy picks it, and a
/// `robust-access` warning names it where it is stored; every other component is zero.
#[test]
fn null_images_and_texel_buffers_read_zero_have_size_0_and_discard_writes() {
    for (choice, alpha) in [(RobustChoice::Zero, 0), (RobustChoice::InRange, 1)] {
        let expected: Vec<u32> = (0..4)
            .flat_map(|_| [100, 200 + alpha, 300, 400, 500, 600, 700 + alpha, 800])
            .collect();
        for (wide, image_robustness) in [(true, false), (false, true)] {
            let mut options = RunOptions {
                null_descriptor: true,
                image_robustness,
                wide,
                threads: 1,
                ..RunOptions::default()
            };
            options.policy.robust = choice;
            let (out, report) = run_images(&options);
            assert_eq!(out, expected, "wide {wide}, {choice:?}");
            // The two alphas, each stored by 4 invocations.
            assert_eq!(report.diagnostics.len(), 8, "{:?}", report.diagnostics);
            for d in &report.diagnostics {
                assert_eq!(d.finding.kind(), Kind::RobustAccess, "{}", d.finding);
                let text = d.finding.to_string();
                let said = format!("a load through a null descriptor returned an alpha of {alpha}");
                assert!(text.contains(&said), "{text}");
            }
        }
    }
    let (_, report) = run_images(&RunOptions {
        threads: 1,
        ..RunOptions::default()
    });
    let mut bindings = std::collections::BTreeSet::new();
    for d in &report.diagnostics {
        let Finding::NullDescriptor { set, binding, .. } = d.finding else {
            panic!("not a null-descriptor finding: {}", d.finding);
        };
        bindings.insert((set, binding));
    }
    assert_eq!(bindings, [(0, 0), (0, 1)].into_iter().collect());
}

/// The alpha a null R32ui storage image may read as 1 is followed to where it is used: a
/// shader that keeps only the red component has no finding.
#[test]
fn a_null_images_chosen_alpha_dropped_is_no_finding() {
    let module = compile(
        r#"#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D img;
layout(set = 0, binding = 1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = imageLoad(img, ivec2(i, 0)).x + 1u;
}
"#,
    );
    let device = Device::new(Profile::default().with_subgroup_size(4).expect("profile"));
    let pipeline = device
        .compute_pipeline(&module, "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 1), vec![0xee; 16]);
    res.null_images.insert((0, 0, 0));
    let options = RunOptions {
        null_descriptor: true,
        threads: 1,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &options)
        .expect("dispatch");
    assert_eq!(to_u32s(&res.buffers[&(0, 1)]), vec![1; 4]);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}
