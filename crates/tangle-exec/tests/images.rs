//! Storage images, texel buffers and sampled images read by `OpImageFetch`: reads, writes and
//! atomics through every format family against a plain-Rust model of the texel bytes, size
//! queries, out-of-bounds findings and binding mismatches.

mod common;

use common::{compile, to_u32s, u32s, Rng};
use tangle_exec::semantics::texel::TexelFormat;
use tangle_exec::{Device, Finding, Image, Profile, Report, Resources, RunOptions};

fn image(format: &str, extent: [u32; 3], texels: Vec<u8>) -> Image {
    Image {
        format: TexelFormat::by_name(format).expect("known format"),
        extent,
        texels,
    }
}

/// Runs GLSL with `images` at set 0 (by binding) and one output buffer at binding 7.
fn run(src: &str, images: Vec<(u32, Image)>, out: usize) -> (Resources, Report) {
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    let mut res = Resources::default();
    for (b, i) in images {
        res.images.insert((0, b), i);
    }
    res.buffers.insert((0, 7), vec![0; out]);
    let report = pipeline
        .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    (res, report)
}

#[test]
fn rgba8_unorm_reads_and_writes_convert_per_the_spec() {
    // Each invocation reads texel (x, y), writes 1 - value back, and stores what it read.
    let src = r#"
#version 450
layout(local_size_x = 4, local_size_y = 3) in;
layout(set = 0, binding = 0, rgba8) uniform image2D img;
layout(set = 0, binding = 7) buffer Out { vec4 o[12]; };
void main() {
  ivec2 p = ivec2(gl_LocalInvocationID.xy);
  vec4 v = imageLoad(img, p);
  o[p.y * 4 + p.x] = v;
  imageStore(img, p, vec4(1.0) - v);
}
"#;
    let mut rng = Rng(3);
    let texels: Vec<u8> = (0..48).map(|_| rng.next() as u8).collect();
    let (res, report) = run(
        src,
        vec![(0, image("R8G8B8A8_UNORM", [4, 3, 1], texels.clone()))],
        192,
    );
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let out: Vec<f32> = res.buffers[&(0, 7)]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (i, &t) in texels.iter().enumerate() {
        // Reference: c / 255 rounded once to f32; 1 - that, times 255, rounds back to 255 - c.
        assert_eq!(out[i], (f64::from(t) / 255.0) as f32, "component {i}");
        let written = res.images[&(0, 0)].texels[i];
        let back = ((1.0 - f64::from((f64::from(t) / 255.0) as f32)) as f32 as f64 * 255.0)
            .round_ties_even();
        assert_eq!(written, back as u8, "component {i}");
    }
}

#[test]
fn integer_texel_buffers_and_atomics() {
    // A uniform texel buffer read with texelFetch, a storage texel buffer written, and an
    // r32ui storage image incremented atomically by every invocation.
    let src = r#"
#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform isamplerBuffer src;
layout(set = 0, binding = 1, r16ui) uniform uimageBuffer dst;
layout(set = 0, binding = 2, r32ui) uniform uimage2D counter;
layout(set = 0, binding = 7) buffer Out { int size; int o[16]; };
void main() {
  int i = int(gl_LocalInvocationID.x);
  o[i] = texelFetch(src, i).x;
  imageStore(dst, i, uvec4(uint(i * 1000 + 7)));
  imageAtomicAdd(counter, ivec2(i % 2, 0), uint(i));
  if (i == 0) size = textureSize(src);
}
"#;
    let mut rng = Rng(11);
    let values: Vec<i32> = (0..16).map(|_| rng.next() as i32).collect();
    let src_bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let (res, report) = run(
        src,
        vec![
            (0, image("R32_SINT", [16, 1, 1], src_bytes)),
            (1, image("R16_UINT", [16, 1, 1], vec![0; 32])),
            (2, image("R32_UINT", [2, 1, 1], u32s(&[100, 200]))),
        ],
        68,
    );
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let out = to_u32s(&res.buffers[&(0, 7)]);
    assert_eq!(out[0], 16);
    assert_eq!(
        &out[1..],
        &values.iter().map(|&v| v as u32).collect::<Vec<_>>()[..]
    );
    let written: Vec<u16> = res.images[&(0, 1)]
        .texels
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let expected: Vec<u16> = (0..16).map(|i| (i * 1000 + 7) as u16).collect();
    assert_eq!(written, expected);
    // Even invocations add 0+2+...+14 = 56, odd ones 1+3+...+15 = 64.
    assert_eq!(to_u32s(&res.images[&(0, 2)].texels), vec![156, 264]);
}

#[test]
fn coordinates_outside_read_an_undefined_value_write_nothing_and_integer_overflow_is_undefined() {
    let src = r#"
#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0, r8ui) uniform uimage2D img;
layout(set = 0, binding = 7) buffer Out { uint o[4]; ivec2 size; };
void main() {
  int i = int(gl_LocalInvocationID.x);
  // Invocation 3 reads and writes column 3 of a 3-wide image.
  o[i] = imageLoad(img, ivec2(i, 1)).x + 1u;
  imageStore(img, ivec2(i, 0), uvec4(i == 2 ? 300u : uint(i)));
  // One writer: every invocation writing it would be a data race (the sanitizer says so).
  if (i == 0) size = imageSize(img);
}
"#;
    let (res, report) = run(
        src,
        vec![(0, image("R8_UINT", [3, 2, 1], vec![9, 9, 9, 4, 5, 6]))],
        24,
    );
    let out = to_u32s(&res.buffers[&(0, 7)]);
    assert_eq!(&out[..4], &[5, 6, 7, 1]);
    assert_eq!(&out[4..], &[3, 2]);
    // 300 keeps its low byte (44); the value is undefined, so it is a finding.
    assert_eq!(res.images[&(0, 0)].texels, vec![0, 1, 44, 4, 5, 6]);
    let found: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| d.finding.to_string())
        .collect();
    // The read outside is an invalid texel (an undefined value, read as zero); the write
    // outside "has no effect" and is no finding.
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|f| f.contains("image read at [3, 1], outside the image at set 0, binding 0 (3x2x1): the value of an invalid texel is undefined")), "{found:?}");
    assert!(!found.iter().any(|f| f.contains("at [3, 0]")), "{found:?}");
    assert!(
        found.iter().any(|f| f.contains(
            "R8_UINT image at set 0, binding 0 has a component the format cannot represent"
        )),
        "{found:?}"
    );
    assert!(report
        .diagnostics
        .iter()
        .all(|d| !d.finding.is_memory_error()
            && d.finding.kind() == tangle_exec::check::kind::Kind::ImageValue));
    assert!(matches!(report.diagnostics[0].finding, Finding::Image(_)));
}

#[test]
fn binding_mismatches_are_resource_errors() {
    let src = r#"
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, r32f) uniform image2D img;
layout(set = 0, binding = 7) buffer Out { float o; };
void main() { o = imageLoad(img, ivec2(0)).x; }
"#;
    let module = compile(src);
    let pipeline = Device::new(Profile::default())
        .compute_pipeline(&module, "main", &Default::default())
        .expect("pipeline");
    let attempt = |img: Option<Image>| {
        let mut res = Resources::default();
        res.buffers.insert((0, 7), vec![0; 4]);
        if let Some(img) = img {
            res.images.insert((0, 0), img);
        }
        pipeline
            .dispatch(&mut res, [1, 1, 1], &RunOptions::default())
            .expect_err("refused")
            .to_string()
    };
    let e = attempt(None);
    assert!(
        e.contains("uses an image at set 0, binding 0, but none is bound"),
        "{e}"
    );
    let e = attempt(Some(image("R32_UINT", [1, 1, 1], vec![0; 4])));
    assert!(
        e.contains("R32_UINT [1, 1, 1], but the shader declares Image Format 3 (R32_SFLOAT)"),
        "{e}"
    );
    let e = attempt(Some(image("R32_SFLOAT", [1, 1, 2], vec![0; 8])));
    assert!(e.contains("declares a 2D image"), "{e}");
    let e = attempt(Some(image("R32_SFLOAT", [2, 1, 1], vec![0; 4])));
    assert!(e.contains("has 4 bytes"), "{e}");
}
