//! Benchmark: the ALU-bound `alu_hash.comp` and the memory-bound `saxpy.comp` from
//! `bench/` at their standard sizes, each against the same computation in plain Rust
//! measured in the same run. Results are checked before any time is printed.
//!
//! Each shader also runs with the sanitizer off (`RunOptions::checks`, `--no-checks`), and the
//! sanitizer's overhead (time with checks / time without) is printed.
//!
//! `cargo run --release -p tangle-exec --example bench [-- --threads N] [--quick]`
//! (`--quick` runs 1/16 of the standard sizes). Shaders are compiled with `glslang`.

use std::time::{Duration, Instant};
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

const ALU: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/alu_hash.comp"
));
const SAXPY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../bench/saxpy.comp"
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

/// Peak resident set size in KiB (Linux `VmHWM`), if known.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

/// Prints the sanitizer's cost on one shader: time with the checks over time without.
fn sanitizer(name: &str, on: Duration, off: Duration) {
    println!(
        "  {name} sanitizer (races, uninitialised values, barriers, arithmetic): checks on {:.3} s, off {:.3} s; overhead {:.2}x",
        on.as_secs_f64(),
        off.as_secs_f64(),
        on.as_secs_f64() / off.as_secs_f64().max(1e-9)
    );
}

fn alu_rust(n: u32, iters: u32) -> Vec<u32> {
    (0..n)
        .map(|i| {
            let mut x = i.wrapping_mul(2654435761).wrapping_add(1);
            for k in 0..iters {
                x ^= x >> 13;
                x = x.wrapping_mul(0x5bd1e995);
                x ^= x << 7;
                x = x.wrapping_add(k);
            }
            x
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
    println!("tangle-exec bench: subgroup size 32, {threads} thread(s)");

    // ALU-bound: 16384 groups of 64, iters = 256.
    let groups = 16384 / scale;
    let n = groups * 64;
    let iters = 256u32;
    let pipeline = device
        .compute_pipeline(&compile(ALU), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers.insert((0, 0), vec![0u8; n as usize * 4]);
    res.push_constants = iters.to_le_bytes().to_vec();
    let (report, t_exec) = time(|| {
        pipeline
            .dispatch(&mut res, [groups, 1, 1], &options)
            .expect("dispatch")
    });
    let (expect, t_rust) = time(|| alu_rust(n, iters));
    let got: Vec<u32> = res.buffers[&(0, 0)]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, expect, "alu_hash result differs from plain Rust");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let off = RunOptions {
        checks: false,
        ..options.clone()
    };
    let (_, t_off) = time(|| {
        pipeline
            .dispatch(&mut res, [groups, 1, 1], &off)
            .expect("dispatch")
    });
    let bodies = f64::from(n) * f64::from(iters);
    println!(
        "alu_hash  n={n} iters={iters}: tangle {:.3} s ({:.1} M loop bodies/s, {} instructions), plain Rust {:.3} s; ratio {:.3}x",
        t_exec.as_secs_f64(),
        bodies / t_exec.as_secs_f64() / 1e6,
        report.stats.instructions,
        t_rust.as_secs_f64(),
        t_rust.as_secs_f64() / t_exec.as_secs_f64()
    );
    sanitizer("alu_hash", t_exec, t_off);

    // Memory-bound: n = 16M floats, 65536 groups of 256.
    let groups = 65536 / scale;
    let n = groups * 256;
    let a = 1.5f32;
    let mut seed = 0x1234_5678u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed % 20001) as f32 / 100.0 - 100.0
    };
    let x: Vec<f32> = (0..n).map(|_| rnd()).collect();
    let y: Vec<f32> = (0..n).map(|_| rnd()).collect();
    let pipeline = device
        .compute_pipeline(&compile(SAXPY), "main", &SpecConstants::new())
        .expect("pipeline");
    let mut res = Resources::default();
    res.buffers
        .insert((0, 0), x.iter().flat_map(|v| v.to_le_bytes()).collect());
    res.buffers
        .insert((0, 1), y.iter().flat_map(|v| v.to_le_bytes()).collect());
    res.push_constants = a
        .to_le_bytes()
        .iter()
        .chain(n.to_le_bytes().iter())
        .copied()
        .collect();
    let (report, t_exec) = time(|| {
        pipeline
            .dispatch(&mut res, [groups, 1, 1], &options)
            .expect("dispatch")
    });
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let mut yr = y.clone();
    let (_, t_rust) = time(|| {
        for (yv, xv) in yr.iter_mut().zip(&x) {
            *yv += a * *xv;
        }
    });
    let got: Vec<f32> = res.buffers[&(0, 1)]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(
        got.iter().zip(&yr).all(|(g, e)| g.to_bits() == e.to_bits()),
        "saxpy result differs from plain Rust"
    );
    let bytes = 12.0 * f64::from(n);
    println!(
        "saxpy     n={n}: tangle {:.3} s ({:.2} GB/s), plain Rust {:.4} s ({:.2} GB/s); ratio {:.4}x",
        t_exec.as_secs_f64(),
        bytes / t_exec.as_secs_f64() / 1e9,
        t_rust.as_secs_f64(),
        bytes / t_rust.as_secs_f64() / 1e9,
        t_rust.as_secs_f64() / t_exec.as_secs_f64()
    );
    // Again without the checks (y changes again; it was checked above).
    let (_, t_off) = time(|| {
        pipeline
            .dispatch(&mut res, [groups, 1, 1], &off)
            .expect("dispatch")
    });
    sanitizer("saxpy", t_exec, t_off);
    if let Some(kib) = peak_rss_kib() {
        println!(
            "peak memory (VmHWM): {:.1} MiB (inputs and outputs included)",
            kib as f64 / 1024.0
        );
    }
}
