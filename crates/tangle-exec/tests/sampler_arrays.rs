//! Descriptor arrays of samplers (`sampler ss[5]`, `sampler ss[]`) and of combined image
//! samplers (`usampler2D combined[3]`, `combined[]`): each element is its own descriptor, picked
//! per invocation by a run-time (non-uniform) index, against a plain-Rust model of nearest
//! sampling and the four address modes on random coordinates; unbound elements and indices past
//! the array are findings naming the binding and index, never another sampler or image. A
//! runtime-sized array is as long as what is bound.

mod common;

use common::arrays::{assert_unbound, bind_image, bind_sampler, dispatch, pipeline, r32ui};
use common::Rng;
use tangle_exec::semantics::sampler::{AddressMode, BorderColor, Sampler};
use tangle_exec::Resources;

const N: usize = 32;
/// The images' width.
const W: i64 = 4;
/// The address modes of the bound samplers, element by element.
const MODES: [AddressMode; 4] = [
    AddressMode::Repeat,
    AddressMode::ClampToEdge,
    AddressMode::MirroredRepeat,
    AddressMode::ClampToBorder,
];

/// The model: texel column `k` wrapped with `mode` over `W` texels (Vulkan "Wrapping
/// Operation"), or `None` for the border; written apart from `semantics::sampler`.
fn model_wrap(mode: AddressMode, k: i64) -> Option<usize> {
    let i = match mode {
        AddressMode::Repeat => k.rem_euclid(W),
        AddressMode::ClampToEdge => k.clamp(0, W - 1),
        AddressMode::MirroredRepeat => {
            let t = k.rem_euclid(2 * W);
            if t < W {
                t
            } else {
                2 * W - 1 - t
            }
        }
        _ => {
            if !(0..W).contains(&k) {
                return None;
            }
            k
        }
    };
    Some(i as usize)
}

fn sampler(mode: AddressMode) -> Sampler {
    Sampler {
        address: [mode; 3],
        border: BorderColor::IntOpaqueWhite,
        ..Sampler::default()
    }
}

fn image(texels: &[u32]) -> tangle_exec::Image {
    r32ui([W as u32, 1, 1], texels)
}

/// Invocation i samples `tex` with ss[sidx[i]] and combined[cidx[i]] at (u[i], 0.5); `ss` and
/// `combined` are the arrays' declarators. ss: elements 0..4 bound, 4.. unbound (or past the
/// end); combined: elements 0 and 1 bound (element e with the image texels[e + 1] and the
/// sampler of MODES[e + 1]), 2.. unbound (or past the end).
fn run(ss: &str, combined: &str, counts: (Option<u32>, Option<u32>)) {
    let src = format!(
        r#"
#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) uniform utexture2D tex;
layout(set = 0, binding = 1) uniform sampler ss{ss};
layout(set = 0, binding = 2) uniform usampler2D combined{combined};
layout(set = 0, binding = 3) buffer Io {{ uint sidx[32]; uint cidx[32]; float u[32]; uint got[32]; uint got2[32]; }};
void main() {{
  uint i = gl_LocalInvocationID.x;
  got[i] = textureLod(usampler2D(tex, ss[nonuniformEXT(sidx[i])]), vec2(u[i], 0.5), 0.0).x;
  got2[i] = textureLod(combined[nonuniformEXT(cidx[i])], vec2(u[i], 0.5), 0.0).x;
}}
"#
    );
    let pipeline = pipeline(&src);
    for seed in 1..8 {
        let mut rng = Rng(seed);
        let sidx: Vec<u32> = (0..N).map(|_| (rng.next() % 6) as u32).collect();
        let cidx: Vec<u32> = (0..N).map(|_| (rng.next() % 4) as u32).collect();
        // Texel column k (from -2W to 2W): u = (k + 0.5) / W, exact in f32.
        let cols: Vec<i64> = (0..N)
            .map(|_| (rng.next() % (4 * W as u64)) as i64 - 2 * W)
            .collect();
        let u: Vec<f32> = cols.iter().map(|&k| (k as f32 + 0.5) / W as f32).collect();
        let texels: Vec<Vec<u32>> = (0..3)
            .map(|_| (0..W).map(|_| rng.next() as u32 | 2).collect())
            .collect();
        let mut res = Resources::default();
        res.images.insert((0, 0), image(&texels[0]));
        for (e, mode) in MODES.iter().enumerate() {
            bind_sampler(&mut res, (0, 1), e as u32, sampler(*mode));
        }
        for e in 0..2 {
            bind_image(&mut res, (0, 2), e, image(&texels[e as usize + 1]));
            bind_sampler(&mut res, (0, 2), e, sampler(MODES[e as usize + 1]));
        }
        let mut io = common::u32s(&sidx);
        io.extend(common::u32s(&cidx));
        io.extend(common::f32s(&u));
        io.resize(20 * N, 0);
        res.buffers.insert((0, 3), io);
        let report = dispatch(&pipeline, &mut res);
        let out = common::to_u32s(&res.buffers[&(0, 3)]);
        let (got, got2) = (&out[3 * N..4 * N], &out[4 * N..]);
        let sample = |texels: &[u32], mode: AddressMode, k: i64| match model_wrap(mode, k) {
            Some(i) => texels[i],
            // INT_OPAQUE_WHITE: (1, 1, 1, 1).
            None => 1,
        };
        let mut unbound = Vec::new();
        for i in 0..N {
            let want = MODES
                .get(sidx[i] as usize)
                .map(|&m| sample(&texels[0], m, cols[i]));
            let want2 = match cidx[i] {
                c @ (0 | 1) => Some(sample(
                    &texels[c as usize + 1],
                    MODES[c as usize + 1],
                    cols[i],
                )),
                _ => None,
            };
            if want.is_none() {
                unbound.push((i as u32, (0, 1, i64::from(sidx[i]), counts.0)));
            }
            if want2.is_none() {
                unbound.push((i as u32, (0, 2, i64::from(cidx[i]), counts.1)));
            }
            assert_eq!(
                got[i],
                want.unwrap_or(0),
                "seed {seed} lane {i} ss[{}]",
                sidx[i]
            );
            assert_eq!(
                got2[i],
                want2.unwrap_or(0),
                "seed {seed} lane {i} combined[{}]",
                cidx[i]
            );
        }
        assert_unbound(&report, &unbound);
    }
}

#[test]
fn run_time_indices_pick_their_own_sampler_or_a_finding() {
    run("[5]", "[3]", (Some(5), Some(3)));
}

#[test]
fn runtime_sized_arrays_of_samplers_are_as_long_as_what_is_bound() {
    run("[]", "[]", (None, None));
}
