//! Sampled images: `OpImageSampleExplicitLod` with nearest and linear filtering under every
//! address mode, through combined image samplers and separate samplers, `OpImageGather`, and
//! the refusal of implicit LODs; against a plain-Rust model of the Vulkan texel coordinate,
//! wrapping and filtering formulas on random coordinates.

mod common;

use common::{compile, Rng};
use tangle_exec::semantics::sampler::{AddressMode, BorderColor, Filter, Sampler};
use tangle_exec::semantics::texel::TexelFormat;
use tangle_exec::{Device, ExecError, Image, Profile, Resources, RunOptions};

const W: usize = 5;
const H: usize = 3;

/// The reference wrap, written from the spec's table independently of the executor's.
fn wrap(mode: AddressMode, i: i64, size: i64) -> Option<i64> {
    match mode {
        AddressMode::Repeat => Some(((i % size) + size) % size),
        AddressMode::MirroredRepeat => {
            let t = ((i % (2 * size)) + 2 * size) % (2 * size);
            Some(if t < size { t } else { 2 * size - 1 - t })
        }
        AddressMode::ClampToEdge => Some(i.max(0).min(size - 1)),
        AddressMode::ClampToBorder => (0..size).contains(&i).then_some(i),
        AddressMode::MirrorClampToEdge => Some(if i < 0 { -1 - i } else { i }.min(size - 1)),
    }
}

/// The reference sample of a W x H single-channel float image.
fn reference(s: &Sampler, filter: Filter, texels: &[f32], u: f64, v: f64) -> f32 {
    let border = s.border_value();
    let at = |i: Option<i64>, j: Option<i64>| match (i, j) {
        (Some(i), Some(j)) => f64::from(texels[j as usize * W + i as usize]),
        _ => border,
    };
    let (x, y) = (u * W as f64, v * H as f64);
    match filter {
        Filter::Nearest => at(
            wrap(s.address[0], x.floor() as i64, W as i64),
            wrap(s.address[1], y.floor() as i64, H as i64),
        ) as f32,
        Filter::Linear => {
            let (x, y) = (x - 0.5, y - 0.5);
            let (i0, j0) = (x.floor() as i64, y.floor() as i64);
            let (a, b) = (x - x.floor(), y - y.floor());
            let w = |i| wrap(s.address[0], i, W as i64);
            let h = |j| wrap(s.address[1], j, H as i64);
            ((1.0 - a) * (1.0 - b) * at(w(i0), h(j0))
                + a * (1.0 - b) * at(w(i0 + 1), h(j0))
                + (1.0 - a) * b * at(w(i0), h(j0 + 1))
                + a * b * at(w(i0 + 1), h(j0 + 1))) as f32
        }
    }
}

trait Border {
    fn border_value(&self) -> f64;
}
impl Border for Sampler {
    fn border_value(&self) -> f64 {
        match self.border {
            BorderColor::FloatOpaqueWhite | BorderColor::IntOpaqueWhite => 1.0,
            _ => 0.0,
        }
    }
}

/// Invocation i samples at (coords[2i], coords[2i + 1]) with LOD lods[i].
const SAMPLE: &str = r#"
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) buffer In { vec2 coords[64]; float lods[64]; };
layout(set = 0, binding = 2) buffer Out { float o[64]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i] = textureLod(tex, coords[i], lods[i]).x;
}
"#;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn explicit_lod_samples_match_the_reference_under_every_address_mode() {
    let module = compile(SAMPLE);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    let mut rng = Rng(77);
    let modes = [
        AddressMode::Repeat,
        AddressMode::MirroredRepeat,
        AddressMode::ClampToEdge,
        AddressMode::ClampToBorder,
        AddressMode::MirrorClampToEdge,
    ];
    for round in 0..25usize {
        let sampler = Sampler {
            mag_filter: if round % 2 == 0 {
                Filter::Linear
            } else {
                Filter::Nearest
            },
            min_filter: if round % 3 == 0 {
                Filter::Linear
            } else {
                Filter::Nearest
            },
            address: [
                modes[round % 5],
                modes[(round / 5) % 5],
                AddressMode::Repeat,
            ],
            border: if round % 4 == 0 {
                BorderColor::FloatOpaqueWhite
            } else {
                BorderColor::FloatTransparentBlack
            },
            min_lod: 0.0,
            max_lod: 2.0,
            normalized: true,
        };
        let texels: Vec<f32> = (0..W * H).map(|_| rng.f32()).collect();
        let coords: Vec<f32> = (0..128)
            .map(|_| ((rng.next() % 4001) as f32 - 1500.0) / 1000.0)
            .collect();
        let lods: Vec<f32> = (0..64)
            .map(|_| [-1.0, 0.0, 0.5, 3.0][(rng.next() % 4) as usize])
            .collect();
        let mut input = f32_bytes(&coords);
        input.extend(f32_bytes(&lods));
        let mut res = Resources::default();
        res.images.insert(
            (0, 0),
            Image {
                format: TexelFormat::by_name("R32_SFLOAT").expect("format"),
                extent: [W as u32, H as u32, 1],
                texels: f32_bytes(&texels),
            },
        );
        res.samplers.insert((0, 0), sampler);
        res.buffers.insert((0, 1), input);
        res.buffers.insert((0, 2), vec![0; 256]);
        let report = pipeline
            .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
            .expect("dispatch");
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        let out: Vec<f32> = res.buffers[&(0, 2)]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for i in 0..64 {
            let lod = f64::from(lods[i]).clamp(0.0, 2.0);
            let filter = if lod <= 0.0 {
                sampler.mag_filter
            } else {
                sampler.min_filter
            };
            let want = reference(
                &sampler,
                filter,
                &texels,
                f64::from(coords[2 * i]),
                f64::from(coords[2 * i + 1]),
            );
            assert_eq!(out[i], want, "round {round} lane {i}: {sampler:?}");
        }
    }
}

#[test]
fn separate_samplers_gather_and_integer_formats() {
    let src = r#"
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform utexture2D img;
layout(set = 0, binding = 1) uniform sampler smp;
layout(set = 0, binding = 2) buffer Out { uvec4 nearest; uvec4 gathered; uvec4 fetched; };
void main() {
  nearest = textureLod(usampler2D(img, smp), vec2(0.6, 0.2), 0.0);
  gathered = textureGather(usampler2D(img, smp), vec2(0.5, 0.5), 1);
  fetched = texelFetch(usampler2D(img, smp), ivec2(1, 1), 0);
}
"#;
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    // A 2x2 R8G8_UINT image: texel (x, y) = (10x + y, 100 + 10x + y).
    let texels: Vec<u8> = [(0, 0), (1, 0), (0, 1), (1, 1)]
        .iter()
        .flat_map(|&(x, y)| [10 * x + y, 100 + 10 * x + y])
        .collect();
    let mut res = Resources::default();
    res.images.insert(
        (0, 0),
        Image {
            format: TexelFormat::by_name("R8G8_UINT").expect("format"),
            extent: [2, 2, 1],
            texels,
        },
    );
    res.samplers.insert((0, 1), Sampler::default());
    res.buffers.insert((0, 2), vec![0; 48]);
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .expect("dispatch");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let out = common::to_u32s(&res.buffers[&(0, 2)]);
    // (0.6 * 2, 0.2 * 2) = (1.2, 0.4): texel (1, 0); B and A read 0 and 1.
    assert_eq!(&out[..4], &[10, 110, 0, 1]);
    // Gather at the centre: i0 = j0 = 0; order (i0,j1), (i1,j1), (i1,j0), (i0,j0), component G.
    assert_eq!(&out[4..8], &[101, 111, 110, 100]);
    assert_eq!(&out[8..], &[11, 111, 0, 1]);
}

#[test]
fn implicit_lod_in_compute_is_refused() {
    let src = r#"
#version 450
#extension GL_NV_compute_shader_derivatives : require
layout(local_size_x = 2, local_size_y = 2) in;
layout(derivative_group_quadsNV) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) buffer Out { vec4 o; };
void main() { o = texture(tex, vec2(0.5)); }
"#;
    let err = Device::new(Profile::default())
        .compute_pipeline(&compile(src), "main", &Default::default())
        .expect_err("refused");
    assert!(matches!(err, ExecError::Unsupported { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("implicit level of detail needs derivative groups"),
        "{err}"
    );
}

#[test]
fn sampled_image_queries() {
    let src = r#"
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler3D tex;
layout(set = 0, binding = 1) buffer Out { ivec3 size; int levels; };
void main() {
  size = textureSize(tex, 0);
  levels = textureQueryLevels(tex);
}
"#;
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    let mut res = Resources::default();
    res.images.insert(
        (0, 0),
        Image {
            format: TexelFormat::by_name("R16_SFLOAT").expect("format"),
            extent: [3, 2, 5],
            texels: vec![0; 60],
        },
    );
    res.samplers.insert((0, 0), Sampler::default());
    res.buffers.insert((0, 1), vec![0; 16]);
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .expect("dispatch");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(common::to_u32s(&res.buffers[&(0, 1)]), vec![3, 2, 5, 1]);
}
