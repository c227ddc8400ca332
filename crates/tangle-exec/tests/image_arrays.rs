//! Descriptor arrays of images (`uimage2D imgs[4]`): each element is its own image, picked per
//! invocation by a run-time (non-uniform) index, against a plain-Rust model on random indices
//! and texels; unbound elements and indices past the array are findings, never another image.

mod common;

use common::{compile, Rng};
use tangle_exec::semantics::texel::TexelFormat;
use tangle_exec::{Device, Finding, Image, Profile, Resources, RunOptions};

const N: usize = 32;

#[test]
fn run_time_indices_pick_their_own_image_or_a_finding() {
    // Invocation i reads texel i of imgs[idx[i]] and writes i + 1000 to texel i of
    // imgs[idx[i] ^ 1]; elements 0..3 are bound, element 3 is not, indices 4.. lie past the end.
    let src = r#"
#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D imgs[4];
layout(set = 0, binding = 7) buffer Io { uint idx[32]; uint got[32]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  uint k = idx[i];
  got[i] = imageLoad(imgs[nonuniformEXT(k)], ivec2(i, 0)).x;
  imageStore(imgs[nonuniformEXT(k ^ 1u)], ivec2(i, 1), uvec4(i + 1000u));
}
"#;
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    for seed in 1..6 {
        let mut rng = Rng(seed);
        let idx: Vec<u32> = (0..N).map(|_| (rng.next() % 6) as u32).collect();
        let texels: Vec<Vec<u32>> = (0..3)
            .map(|_| (0..2 * N).map(|_| rng.next() as u32).collect())
            .collect();
        let mut res = Resources::default();
        let format = TexelFormat::by_name("R32_UINT").expect("format");
        for (e, t) in texels.iter().enumerate() {
            let image = Image {
                format,
                extent: [N as u32, 2, 1],
                texels: t.iter().flat_map(|v| v.to_le_bytes()).collect(),
            };
            // Element 0 as the binding's plain image, the others as array elements.
            match e {
                0 => res.images.insert((0, 0), image),
                e => res.image_elements.insert((0, 0, e as u32), image),
            };
        }
        let mut io: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
        io.resize(8 * N, 0);
        res.buffers.insert((0, 7), io);
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
            .unwrap_or_else(|e| panic!("dispatch: {e}"));
        let io = &res.buffers[&(0, 7)];
        let got: Vec<u32> = io[4 * N..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let image = |e: usize| -> Vec<u32> {
            let bytes = match e {
                0 => &res.images[&(0, 0)].texels,
                e => &res.image_elements[&(0, 0, e as u32)].texels,
            };
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let mut bad = 0;
        let mut want_images = texels.clone();
        for i in 0..N {
            let k = idx[i] as usize;
            // The model: a bound element reads its texel; anything else reads 0, a finding.
            match texels.get(k) {
                Some(t) => assert_eq!(got[i], t[i], "seed {seed} lane {i} reads imgs[{k}]"),
                None => {
                    assert_eq!(got[i], 0, "seed {seed} lane {i}");
                    bad += 1;
                }
            }
            match want_images.get_mut(k ^ 1) {
                Some(t) => t[N + i] = i as u32 + 1000,
                None => bad += 1,
            }
        }
        for (e, want) in want_images.iter().enumerate() {
            assert_eq!(&image(e), want, "seed {seed} image {e}");
        }
        let findings = report
            .diagnostics
            .iter()
            .filter(|d| matches!(d.finding, Finding::BadPointer { .. }))
            .count();
        assert_eq!(findings, bad, "seed {seed}: {:?}", report.diagnostics);
        assert_eq!(
            findings,
            report.diagnostics.len(),
            "{:?}",
            report.diagnostics
        );
    }
}
