//! Descriptor arrays of images, sized (`uimage2D imgs[4]`) and runtime-sized (`uimage2D
//! imgs[]`, GL_EXT_nonuniform_qualifier, as long as what is bound): each element is its own
//! image, picked per invocation by a run-time (non-uniform) index, against a plain-Rust model on
//! random indices and texels; unbound elements and indices past the array are findings naming
//! the binding and index, never another image.

mod common;

use common::arrays::{assert_unbound, bind_image, dispatch, pipeline, r32ui, texels};
use common::Rng;
use tangle_exec::Resources;

const N: usize = 32;

/// Invocation i reads texel i of imgs[idx[i]] and writes i + 1000 to texel (i, 1) of
/// imgs[idx[i] ^ 1]; `decl` is the array's declarator (`[4]` or `[]`).
fn shader(decl: &str) -> String {
    format!(
        r#"
#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D imgs{decl};
layout(set = 0, binding = 7) buffer Io {{ uint idx[32]; uint got[32]; }};
void main() {{
  uint i = gl_LocalInvocationID.x;
  uint k = idx[i];
  got[i] = imageLoad(imgs[nonuniformEXT(k)], ivec2(i, 0)).x;
  imageStore(imgs[nonuniformEXT(k ^ 1u)], ivec2(i, 1), uvec4(i + 1000u));
}}
"#
    )
}

/// Elements `0..bound` are bound, indices up to 5 are drawn: the rest are unbound (or past a
/// sized array's end).
fn run(decl: &str, count: Option<u32>, bound: usize) {
    let pipeline = pipeline(&shader(decl));
    for seed in 1..6 {
        let mut rng = Rng(seed);
        let idx: Vec<u32> = (0..N).map(|_| (rng.next() % 6) as u32).collect();
        let images: Vec<Vec<u32>> = (0..bound)
            .map(|_| (0..2 * N).map(|_| rng.next() as u32).collect())
            .collect();
        let mut res = Resources::default();
        for (e, t) in images.iter().enumerate() {
            bind_image(&mut res, (0, 0), e as u32, r32ui([N as u32, 2, 1], t));
        }
        let mut io = common::u32s(&idx);
        io.resize(8 * N, 0);
        res.buffers.insert((0, 7), io);
        let report = dispatch(&pipeline, &mut res);
        let got = common::to_u32s(&res.buffers[&(0, 7)][4 * N..]);
        // The model: a bound element reads its texel and takes the write; anything else reads
        // 0 and is a finding naming the element.
        let mut unbound = Vec::new();
        let mut want_images = images.clone();
        for i in 0..N {
            let k = idx[i] as usize;
            match images.get(k) {
                Some(t) => assert_eq!(got[i], t[i], "{decl} seed {seed} lane {i} reads imgs[{k}]"),
                None => {
                    assert_eq!(got[i], 0, "{decl} seed {seed} lane {i}");
                    unbound.push((i as u32, (0, 0, k as i64, count)));
                }
            }
            match want_images.get_mut(k ^ 1) {
                Some(t) => t[N + i] = i as u32 + 1000,
                None => unbound.push((i as u32, (0, 0, (k ^ 1) as i64, count))),
            }
        }
        for (e, want) in want_images.iter().enumerate() {
            assert_eq!(
                &texels(&res, (0, 0), e as u32),
                want,
                "{decl} seed {seed} image {e}"
            );
        }
        assert_unbound(&report, &unbound);
    }
}

#[test]
fn run_time_indices_pick_their_own_image_or_a_finding() {
    // Element 3 of imgs[4] is unbound, indices 4 and 5 lie past the end.
    run("[4]", Some(4), 3);
}

#[test]
fn a_runtime_sized_array_is_as_long_as_what_is_bound() {
    for bound in [1, 3, 6] {
        run("[]", None, bound);
    }
}
