//! Benchmark of the cooperative-matrix MulAdd kernel (`semantics::coopmat_kernel::mul_add`) in
//! the ML case, f16 × f16 → f32, against an f32 GEMM by `matrixmultiply` (through ndarray) on the same data, all
//! measured in the same run:
//!
//! 1. one 16×16×16 tile (the `nvidia` profile's shape), one core; then the same tile with an
//!    f16 accumulator (A, B, C and Result f16: ggml's `_f16acc` pipelines, every step rounded
//!    to f16) and with f32 × f32 → f32;
//! 2. full M = N = K = 1024 and 2048 products done tile by tile with the kernel, on all cores
//!    (rayon);
//! 3. the baseline: `matrixmultiply`'s sgemm (through ndarray) on the f16 inputs widened to f32, split into row
//!    bands over all cores;
//! 4. `bench/coopmat_gemm.comp` through tangle on the `nvidia` profile, once the executor lowers
//!    cooperative matrices (otherwise "not run: <reason>").
//!
//! Results are checked (relative Frobenius error ≤ 1e-2, the brief's bound for f16 inputs)
//! before any time is printed. `cargo bench -p tangle-exec --bench coopmat_gemm [-- --quick]`
//! (`--quick`: 256³ and fewer tile repetitions; otherwise 1024³ and 2048³; `--tiles`: step 1
//! alone).

use rayon::prelude::*;
use std::time::{Duration, Instant};
use tangle_exec::semantics::coopmat_kernel::mul_add;
use tangle_exec::semantics::coopmat_types::{Component, MulAddTypes};
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

const SHADER: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/coopmat_gemm.comp"
));

/// The tile shape: the `nvidia` profile's 16x16x16 f16 → f32 entry.
const T: usize = 16;

const ML: MulAddTypes = MulAddTypes {
    a: Component::Float(16),
    b: Component::Float(16),
    c: Component::Float(32),
    result: Component::Float(32),
    saturating: false,
};

/// xorshift64 from a fixed seed; f16 values in ±[0.5, 2) (never zero).
struct Rng(u64);

impl Rng {
    fn f16(&mut self) -> u16 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let sign = ((self.0 >> 20) & 1) as u16;
        // Exponent 14 or 15 (0.5 .. 2), any significand.
        (sign << 15) | ((14 + ((self.0 >> 11) & 1) as u16) << 10) | (self.0 & 0x3ff) as u16
    }
}

fn gflops(flops: f64, t: Duration) -> f64 {
    flops / t.as_secs_f64() / 1e9
}

/// The best of `reps` timings of `f`.
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// `c = a·b` (n×n, f32 bits out) tile by tile with the kernel: each rayon task owns one band of
/// 16 rows and walks its tiles, carrying the accumulator tile through k.
fn tiled(n: usize, a: &[u16], b: &[u16]) -> Vec<f32> {
    let mut c = vec![0f32; n * n];
    c.par_chunks_mut(T * n).enumerate().for_each(|(ti, band)| {
        let mut at = vec![0u64; T * T];
        let mut bt = vec![0u64; T * T];
        let mut acc = vec![0u64; T * T];
        let mut next = vec![0u64; T * T];
        for tj in 0..n / T {
            acc.iter_mut().for_each(|x| *x = 0);
            for tk in 0..n / T {
                for r in 0..T {
                    for q in 0..T {
                        at[r * T + q] = u64::from(a[(ti * T + r) * n + tk * T + q]);
                        bt[r * T + q] = u64::from(b[(tk * T + r) * n + tj * T + q]);
                    }
                }
                // The shapes are right by construction; an error would be a kernel bug.
                if let Err(e) = mul_add(&ML, T, T, T, &at, &bt, &acc, &mut next) {
                    panic!("kernel: {e}");
                }
                std::mem::swap(&mut acc, &mut next);
            }
            for r in 0..T {
                for q in 0..T {
                    band[r * n + tj * T + q] = f32::from_bits(acc[r * T + q] as u32);
                }
            }
        }
    });
    c
}

/// The baseline: `matrixmultiply`'s sgemm over row bands of 64, one band per rayon task.
fn sgemm(n: usize, a: &[f32], b: &[f32]) -> Vec<f32> {
    let band = 64;
    let mut c = vec![0f32; n * n];
    c.par_chunks_mut(band * n).enumerate().for_each(|(i, out)| {
        let rows = out.len() / n;
        let a_band = &a[i * band * n..(i * band + rows) * n];
        sgemm_band(rows, n, a_band, b, out);
    });
    c
}

/// One band `out = a_band·b` (rows×n times n×n), through ndarray's safe front of
/// `matrixmultiply` (its raw-pointer API would be `unsafe` outside the project's one module).
fn sgemm_band(rows: usize, n: usize, a: &[f32], b: &[f32], out: &mut [f32]) {
    let a = ndarray::ArrayView2::from_shape((rows, n), a).expect("a band of rows x n");
    let b = ndarray::ArrayView2::from_shape((n, n), b).expect("an n x n matrix");
    let mut c = ndarray::ArrayViewMut2::from_shape((rows, n), out).expect("rows x n out");
    ndarray::linalg::general_mat_mul(1.0, &a, &b, 0.0, &mut c);
}

/// Relative Frobenius error of `got` against `want`.
fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    let (mut d, mut w) = (0.0f64, 0.0f64);
    for (&g, &x) in got.iter().zip(want) {
        d += (f64::from(g) - f64::from(x)).powi(2);
        w += f64::from(x).powi(2);
    }
    (d / w).sqrt()
}

/// Peak resident memory of this process (`VmHWM`), if the OS says.
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// `bench/coopmat_gemm.comp` through tangle on the `nvidia` profile: `Ok((c, time))`, or why
/// it cannot run yet.
fn shader(n: usize, a: &[u16], b: &[u16]) -> Result<(Vec<f32>, Duration), String> {
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3 target")?;
    let words = tangle_amber::compile::glsl(SHADER, env).map_err(|e| format!("GLSL: {e}"))?;
    let module = tangle_spirv::binary::read(&words).map_err(|e| e.to_string())?;
    let module = tangle_validate::validate(&module, env, &Default::default())
        .map_err(|d| format!("the shader does not validate ({} findings)", d.len()))?;
    let profile = Profile::by_name("nvidia").ok_or("no nvidia profile")?;
    let sub = u64::from(profile.subgroup_size);
    let spec: SpecConstants = [(0, T as u64), (1, T as u64), (2, T as u64), (3, sub)].into();
    let pipeline = Device::new(profile)
        .compute_pipeline(&module, "main", &spec)
        .map_err(|e| e.to_string())?;
    let le16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut res = Resources::default();
    res.buffers.insert((0, 0), le16(a));
    res.buffers.insert((0, 1), le16(b));
    res.buffers.insert((0, 2), vec![0; n * n * 4]);
    res.push_constants = [n as u32; 3].iter().flat_map(|x| x.to_le_bytes()).collect();
    let groups = ((n / T) * (n / T)) as u32;
    let t = Instant::now();
    let report = pipeline
        .dispatch(&mut res, [groups, 1, 1], &RunOptions::default())
        .map_err(|e| e.to_string())?;
    let elapsed = t.elapsed();
    if !report.diagnostics.is_empty() {
        return Err(format!("the sanitizer reported {}", report.diagnostics[0]));
    }
    let c = res.buffers.get(&(0, 2)).ok_or("no C buffer")?;
    let c = c
        .chunks_exact(4)
        .map(|q| f32::from_le_bytes([q[0], q[1], q[2], q[3]]))
        .collect();
    Ok((c, elapsed))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick { &[256] } else { &[1024, 2048] };
    let threads = rayon::current_num_threads();
    println!("coopmat_gemm, f16 x f16 -> f32, {threads} threads");

    // 1. One tile, one core.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let at: Vec<u64> = (0..T * T).map(|_| u64::from(rng.f16())).collect();
    let bt: Vec<u64> = (0..T * T).map(|_| u64::from(rng.f16())).collect();
    let c0 = vec![0u64; T * T];
    let mut out = vec![0u64; T * T];
    let reps = if quick { 2_000 } else { 20_000 };
    let t_tile = best(5, || {
        for _ in 0..reps {
            if let Err(e) = mul_add(&ML, T, T, T, &at, &bt, &c0, &mut out) {
                panic!("kernel: {e}");
            }
        }
    });
    let tile_flops = 2.0 * (T * T * T) as f64 * reps as f64;
    println!(
        "  kernel, one 16x16x16 tile, 1 core:        {:8.2} GFLOP/s",
        gflops(tile_flops, t_tile)
    );
    // The same tile at the other accumulators' precisions: every step rounded to f16 (C zero,
    // so the sums stay in f16's range), and f32 inputs (f16 values, exact in f32).
    let f16acc = MulAddTypes {
        c: Component::Float(16),
        result: Component::Float(16),
        ..ML
    };
    let f32s = MulAddTypes {
        a: Component::Float(32),
        b: Component::Float(32),
        ..ML
    };
    let to_f32 = |v: &[u64]| -> Vec<u64> {
        v.iter()
            .map(|&x| u64::from(half::f16::from_bits(x as u16).to_f32().to_bits()))
            .collect()
    };
    for (name, op, a, b) in [
        ("f16 accumulator", f16acc, at.clone(), bt.clone()),
        ("f32 x f32 -> f32", f32s, to_f32(&at), to_f32(&bt)),
    ] {
        let t = best(5, || {
            for _ in 0..reps {
                if let Err(e) = mul_add(&op, T, T, T, &a, &b, &c0, &mut out) {
                    panic!("kernel: {e}");
                }
            }
        });
        println!(
            "  kernel, one tile, {name:>16}, 1 core: {:8.3} GFLOP/s",
            gflops(tile_flops, t)
        );
    }
    if std::env::args().any(|a| a == "--tiles") {
        return;
    }
    for &n in sizes {
        product(n, &mut rng);
    }
    println!("  peak memory: {}", peak_memory());
}

/// 2 to 4 for one n×n×n product: the tiled kernel and sgemm (each checked, best of 3), and the
/// shader through tangle (checked, one run).
fn product(n: usize, rng: &mut Rng) {
    let a: Vec<u16> = (0..n * n).map(|_| rng.f16()).collect();
    let b: Vec<u16> = (0..n * n).map(|_| rng.f16()).collect();
    let widen = |v: &[u16]| -> Vec<f32> {
        v.iter()
            .map(|&x| half::f16::from_bits(x).to_f32())
            .collect()
    };
    let (af, bf) = (widen(&a), widen(&b));
    let want = sgemm(n, &af, &bf);
    let got = tiled(n, &a, &b);
    let err = rel_error(&got, &want);
    assert!(
        err <= 1e-2,
        "tiled kernel result differs: relative error {err}"
    );
    let flops = 2.0 * (n * n * n) as f64;
    let t_tiled = best(3, || {
        std::hint::black_box(tiled(n, &a, &b));
    });
    let t_gemm = best(3, || {
        std::hint::black_box(sgemm(n, &af, &bf));
    });
    let (g_tiled, g_gemm) = (gflops(flops, t_tiled), gflops(flops, t_gemm));
    println!("  {n}^3 (relative error of the kernel {err:.1e}):");
    println!(
        "    kernel tile by tile, all cores:   {g_tiled:8.2} GFLOP/s ({:.1} ms)",
        t_tiled.as_secs_f64() * 1e3
    );
    println!(
        "    matrixmultiply sgemm, all cores:  {g_gemm:8.2} GFLOP/s ({:.1} ms)",
        t_gemm.as_secs_f64() * 1e3
    );
    println!(
        "    ratio kernel / sgemm:             {:8.3}",
        g_tiled / g_gemm
    );
    // 4. The shader through tangle.
    match shader(n, &a, &b) {
        Ok((c, t)) => {
            let err = rel_error(&c, &want);
            assert!(err <= 1e-2, "shader result differs: relative error {err}");
            let g = gflops(flops, t);
            println!(
                "    coopmat_gemm.comp through tangle (nvidia): {g:8.2} GFLOP/s ({:.1} ms), ratio to sgemm {:.3}",
                t.as_secs_f64() * 1e3,
                g / g_gemm
            );
        }
        Err(why) => println!("    coopmat_gemm.comp through tangle: not run: {why}"),
    }
}
