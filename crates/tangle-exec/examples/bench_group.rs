//! Benchmark: the subgroup-heavy `rotate_conv.comp` (clustered rotate, 16 taps) and the packed
//! int8 GEMV `dot_gemv.comp` (dotPacked4x8AccSatEXT) from `bench/` at their standard
//! sizes (1,048,576 invocations; 16384 rows × 4096 int8), each against the same computation in
//! plain Rust measured in the same run. Results are checked before any time is printed.
//!
//! `cargo run --release -p tangle-exec --example bench_group [-- --threads N] [--quick]`
//! (`--quick` runs 1/16 of the standard sizes).

use std::time::{Duration, Instant};
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

const ROTATE_CONV: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/rotate_conv.comp"
));
const DOT_GEMV: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/dot_gemv.comp"
));

fn compile(src: &str) -> tangle_validate::Validated<'static> {
    // The project's one GLSL front end (glslang, Vulkan 1.3), shared with the Amber runner.
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3").expect("known environment");
    let words = tangle_amber::compile::glsl(src, env).unwrap_or_else(|e| panic!("GLSL: {e}"));
    let module = tangle_spirv::binary::read(&words).expect("read");
    tangle_validate::validate(&module, env, &Default::default())
        .map(tangle_validate::Validated::into_owned)
        .unwrap_or_else(|e| panic!("invalid benchmark shader: {e:?}"))
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

/// xorshift32 from a fixed seed.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

fn bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

/// `rotate_conv.comp` in plain Rust: lane L of a cluster of 8 reads lane (L + t) mod 8.
fn rotate_conv_rust(x: &[f32], w: &[f32; 16]) -> Vec<f32> {
    x.chunks_exact(8)
        .flat_map(|c| {
            (0..8).map(move |l| {
                let mut acc = 0.0f32;
                for (t, wt) in w.iter().enumerate() {
                    acc += wt * c[(l + t) % 8];
                }
                acc
            })
        })
        .collect()
}

/// `dot_gemv.comp` in plain Rust: signed 4x8 dot products, saturating accumulation.
fn dot_gemv_rust(a: &[u32], x: &[u32], words: usize) -> Vec<i32> {
    a.chunks_exact(words)
        .map(|row| {
            row.iter().zip(x).fold(0i32, |acc, (&r, &v)| {
                let d: i32 = (0..4)
                    .map(|k| i32::from((r >> (8 * k)) as i8) * i32::from((v >> (8 * k)) as i8))
                    .sum();
                acc.saturating_add(d)
            })
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1usize);
    let scale = if args.iter().any(|a| a == "--quick") {
        16
    } else {
        1
    };
    let device = Device::new(Profile::default());
    let options = RunOptions {
        threads,
        ..RunOptions::default()
    };
    println!("tangle-exec group/dot bench: subgroup size 32, {threads} thread(s)");
    let mut rng = Rng(0x2545_f491);

    // Subgroup-heavy: 1,048,576 invocations (16384 groups of 64), 16 clustered rotates each.
    let groups = 16384 / scale;
    let n = (groups * 64) as usize;
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 2001) as f32 / 100.0 - 10.0 + 0.005)
        .collect();
    let mut w = [0f32; 16];
    for wt in &mut w {
        *wt = (rng.next() % 201) as f32 / 50.0 - 2.0 + 0.01;
    }
    let pipeline = device
        .compute_pipeline(&compile(ROTATE_CONV), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes(&x, f32::to_le_bytes));
    res.buffers.insert((0, 1), bytes(&w, f32::to_le_bytes));
    res.buffers.insert((0, 2), vec![0u8; n * 4]);
    let (report, t_exec) = time(|| {
        pipeline
            .dispatch(&mut res, [groups, 1, 1], &options)
            .expect("dispatch")
    });
    let (expect, t_rust) = time(|| rotate_conv_rust(&x, &w));
    let got: Vec<f32> = res.buffers[&(0, 2)]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(
        got.iter()
            .zip(&expect)
            .all(|(g, e)| g.to_bits() == e.to_bits()),
        "rotate_conv result differs from plain Rust"
    );
    assert!(
        report.diagnostics.is_empty(),
        "{:?}",
        report.diagnostics.first()
    );
    println!(
        "rotate_conv n={n}: tangle {:.3} s ({:.1} M multiply-adds/s), plain Rust {:.4} s; ratio {:.4}x",
        t_exec.as_secs_f64(),
        16.0 * n as f64 / t_exec.as_secs_f64() / 1e6,
        t_rust.as_secs_f64(),
        t_rust.as_secs_f64() / t_exec.as_secs_f64()
    );

    // int8 GEMV: rows = 16384, words = 1024 (K = 4096 int8).
    let rows = 16384 / scale;
    let words = 1024u32;
    let a: Vec<u32> = (0..rows * words)
        .map(|_| rng.next() | 0x0101_0101)
        .collect();
    let xv: Vec<u32> = (0..words).map(|_| rng.next() | 0x0101_0101).collect();
    let pipeline = device
        .compute_pipeline(&compile(DOT_GEMV), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), bytes(&a, u32::to_le_bytes));
    res.buffers.insert((0, 1), bytes(&xv, u32::to_le_bytes));
    res.buffers.insert((0, 2), vec![0u8; rows as usize * 4]);
    res.push_constants = [rows, words].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (report, t_exec) = time(|| {
        pipeline
            .dispatch(&mut res, [rows.div_ceil(64), 1, 1], &options)
            .expect("dispatch")
    });
    let (expect, t_rust) = time(|| dot_gemv_rust(&a, &xv, words as usize));
    let got: Vec<i32> = res.buffers[&(0, 2)]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, expect, "dot_gemv result differs from plain Rust");
    assert!(
        report.diagnostics.is_empty(),
        "{:?}",
        report.diagnostics.first()
    );
    let macs = f64::from(rows) * 4.0 * f64::from(words);
    println!(
        "dot_gemv  rows={rows} K={}: tangle {:.3} s ({:.1} M multiply-adds/s), plain Rust {:.4} s; ratio {:.4}x",
        4 * words,
        t_exec.as_secs_f64(),
        macs / t_exec.as_secs_f64() / 1e6,
        t_rust.as_secs_f64(),
        t_rust.as_secs_f64() / t_exec.as_secs_f64()
    );
}
