//! The benchmark shaders (`bench/`) at small sizes, against plain Rust.

mod common;
use common::*;

const ALU: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/alu_hash.comp"
));
const SAXPY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/saxpy.comp"
));

fn alu_reference(i: u32, iters: u32) -> u32 {
    let mut x = i.wrapping_mul(2654435761).wrapping_add(1);
    for k in 0..iters {
        x ^= x >> 13;
        x = x.wrapping_mul(0x5bd1e995);
        x ^= x << 7;
        x = x.wrapping_add(k);
    }
    x
}

#[test]
fn alu_hash_matches_rust() {
    let groups = 8u32;
    let n = (groups * 64) as usize;
    let mut job = Job::new(vec![vec![0; n * 4]], [groups, 1, 1]);
    job.push = u32s(&[37]);
    let (out, report) = run_glsl(ALU, &job);
    let got = to_u32s(&out[0]);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, alu_reference(i as u32, 37), "invocation {i}");
    }
    assert!(report.diagnostics.is_empty());
    assert_eq!(report.stats.invocations, n as u64);
}

#[test]
fn saxpy_matches_rust_with_partial_last_group() {
    let mut rng = Rng(7);
    let n = 1000u32; // 4 groups of 256; the last one partly idle
    let x: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let a = 1.75f32;
    let mut job = Job::new(vec![f32s(&x), f32s(&y)], [4, 1, 1]);
    let mut push = f32s(&[a]);
    push.extend(u32s(&[n]));
    job.push = push;
    let (out, report) = run_glsl(SAXPY, &job);
    let got = to_f32s(&out[1]);
    for i in 0..n as usize {
        assert_eq!(got[i].to_bits(), (a * x[i] + y[i]).to_bits(), "element {i}");
    }
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}
