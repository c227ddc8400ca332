//! Descriptor arrays of buffers, sized and runtime-sized: every element is its own descriptor.
//! Random element indices
//! (bound, unbound, past the end, negative) against a plain-Rust model of which buffer each
//! invocation reaches; an unbound element is a finding naming the binding and index, never an
//! alias of another buffer.

mod common;

use common::{compile, to_u32s, u32s, Rng};
use tangle_exec::{Device, Finding, Profile, Resources, RunOptions};

/// Invocation `i` reads `b[idx[i]].v[i % 4]` into `out[i]`; `decl` is the array's declarator
/// (`[5]`, or `[]`: runtime-sized, as long as what is bound).
fn shader(decl: &str) -> String {
    format!(
        r#"
#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B {{ uint v[4]; }} b{decl};
layout(set = 0, binding = 1) buffer Idx {{ int idx[64]; }};
layout(set = 0, binding = 2) buffer Out {{ uint o[64]; }};
void main() {{
  uint i = gl_LocalInvocationID.x;
  o[i] = b[nonuniformEXT(idx[i])].v[i % 4u];
}}
"#
    )
}

/// [`shader`]`("[5]")` indexed without `nonuniformEXT` (dynamically uniform indexing).
const SHADER: &str = r#"
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { uint v[4]; } b[5];
layout(set = 0, binding = 1) buffer Idx { int idx[64]; };
layout(set = 0, binding = 2) buffer Out { uint o[64]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i] = b[idx[i]].v[i % 4u];
}
"#;

#[test]
fn elements_are_separate_buffers_and_unbound_ones_are_findings() {
    run(&shader("[5]"), Some(5));
    run(SHADER, Some(5));
}

#[test]
fn a_runtime_sized_array_of_buffers_is_as_long_as_what_is_bound() {
    run(&shader("[]"), None);
}

/// Elements of `b` among 0..5 bound at random, indices from -2 to 7 drawn.
fn run(src: &str, count: Option<u32>) {
    let module = compile(src);
    let device = Device::new(Profile::default());
    let pipeline = device
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    assert_eq!(pipeline.descriptor_arrays().len(), 1);
    assert_eq!(pipeline.descriptor_arrays()[0].count, count);
    let mut rng = Rng(16);
    for round in 0..20u32 {
        // Which of the 5 elements are bound (element 0 sometimes as a plain buffer).
        let bound: Vec<bool> = (0..5).map(|_| !rng.next().is_multiple_of(3)).collect();
        let contents: Vec<Vec<u32>> = (0..5)
            .map(|_| (0..4).map(|_| rng.u32()).collect())
            .collect();
        let idx: Vec<i32> = (0..64)
            .map(|_| match rng.next() % 8 {
                0 => 5 + (rng.next() % 3) as i32,
                1 => -1 - (rng.next() % 2) as i32,
                _ => (rng.next() % 5) as i32,
            })
            .collect();
        let mut res = Resources::default();
        for (e, &is_bound) in bound.iter().enumerate() {
            if !is_bound {
                continue;
            }
            let bytes = u32s(&contents[e]);
            if e == 0 && round.is_multiple_of(2) {
                res.buffers.insert((0, 0), bytes);
            } else {
                res.elements.insert((0, 0, e as u32), bytes);
            }
        }
        if !bound.iter().any(|b| *b) {
            continue;
        }
        let idx_words: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
        res.buffers.insert((0, 1), u32s(&idx_words));
        res.buffers.insert((0, 2), u32s(&[0xdead_beef; 64]));
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
            .expect("dispatch");
        let out = to_u32s(&res.buffers[&(0, 2)]);
        let mut expected_findings = Vec::new();
        for (i, &k) in idx.iter().enumerate() {
            let reached = usize::try_from(k).ok().filter(|&k| k < 5 && bound[k]);
            match reached {
                Some(k) => assert_eq!(out[i], contents[k][i % 4], "round {round} lane {i}"),
                None => {
                    // The load returned 0, and the finding names the element.
                    assert_eq!(out[i], 0, "round {round} lane {i}");
                    expected_findings.push((i as u32, k));
                }
            }
        }
        let found: Vec<(u32, i32)> = report
            .diagnostics
            .iter()
            .map(|d| match &d.finding {
                Finding::UnboundDescriptor {
                    set: 0,
                    binding: 0,
                    index,
                    count: c,
                } if *c == count => (d.invocation[0], *index as i32),
                other => panic!("unexpected finding {other}"),
            })
            .collect();
        assert_eq!(found, expected_findings, "round {round}");
        // Bound elements are unchanged (the shader only reads them).
        for (e, &is_bound) in bound.iter().enumerate() {
            let bytes = if e == 0 && round.is_multiple_of(2) {
                res.buffers.get(&(0, 0))
            } else {
                res.elements.get(&(0, 0, e as u32))
            };
            assert_eq!(bytes.cloned(), is_bound.then(|| u32s(&contents[e])));
        }
    }
}

#[test]
fn binding_mistakes_are_resource_errors() {
    let module = compile(SHADER);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    let base = || {
        let mut res = Resources::default();
        res.buffers.insert((0, 1), vec![0; 256]);
        res.buffers.insert((0, 2), vec![0; 256]);
        res
    };
    let run = |mut res: Resources| {
        pipeline
            .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
            .expect_err("refused")
            .to_string()
    };
    let err = run(base());
    assert!(err.contains("none of its elements is bound"), "{err}");
    let mut twice = base();
    twice.buffers.insert((0, 0), vec![0; 16]);
    twice.elements.insert((0, 0, 0), vec![0; 16]);
    let err = run(twice);
    assert!(
        err.contains("element 0 of the descriptor array at set 0, binding 0 is bound twice"),
        "{err}"
    );
    let mut past = base();
    past.elements.insert((0, 0, 5), vec![0; 16]);
    let err = run(past);
    assert!(
        err.contains(
            "element 5 is bound, but the descriptor array at set 0, binding 0 has 5 elements"
        ),
        "{err}"
    );
}
