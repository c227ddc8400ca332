//! The five workloads of `bench/README.md` at their standard sizes: the shader, its inputs
//! (random from a fixed seed, never zeros), the same computation in plain Rust twice — a simple
//! reference that checks every result, and the baseline the rate is compared with — and how a
//! result is checked. Each baseline ([`Baseline`]) is written as a Rust programmer would write it
//! for speed: its buffers made once and kept warm, the output written in place (as the shader
//! writes its buffer), spread over the same threads as tangle (rayon), and, where one invocation
//! is a chain of dependent steps, invocations side by side so that LLVM vectorises them.

use half::f16;
use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// A workload's plain-Rust baseline: one run over buffers it keeps (warm and in place), and
/// the output its runs left (after one run, the workload's result).
pub struct Baseline {
    /// One run.
    pub run: Box<dyn Fn() + Sync>,
    /// The output buffer's values now.
    pub output: Box<dyn Fn() -> Values + Sync>,
}

impl Baseline {
    /// A baseline whose output is `state`'s vector, computed in place by `step`.
    fn in_place<T: Clone + Send + 'static>(
        state: Vec<T>,
        step: impl Fn(&mut [T]) + Sync + 'static,
        values: fn(Vec<T>) -> Values,
    ) -> Baseline {
        let state = std::sync::Arc::new(std::sync::Mutex::new(state));
        let kept = state.clone();
        Baseline {
            run: Box::new(move || {
                let mut v = state.lock().unwrap_or_else(|e| e.into_inner());
                step(&mut v);
            }),
            output: Box::new(move || {
                values(kept.lock().unwrap_or_else(|e| e.into_inner()).clone())
            }),
        }
    }
}

/// One workload at one size, ready to run.
pub struct Case {
    /// Bound buffers, set 0, bindings 0.. .
    pub buffers: Vec<Vec<u8>>,
    /// Push-constant bytes.
    pub push: Vec<u8>,
    /// Specialization constants (SpecId, value).
    pub spec: Vec<(u32, u64)>,
    /// Workgroup counts.
    pub groups: [u32; 3],
    /// The binding whose bytes are the result.
    pub output: usize,
    /// The units of work done (see [`Workload::unit`]).
    pub work: f64,
    /// A words-of-size description for the table.
    pub size: String,
    /// The plain-Rust computation of the output buffer's values (not turned into bytes, which
    /// would flatter tangle: its time is the computation's alone).
    pub reference: Box<dyn Fn() -> Values + Sync>,
    /// Makes the baseline the rate is compared with ([`Baseline`]).
    pub baseline: Box<dyn Fn() -> Baseline + Sync>,
    /// How the output is compared with the reference.
    pub check: Check,
    /// Whether the output holds f32 values (a driver's may differ in the last bits).
    pub float_output: bool,
    /// How a driver whose `maxComputeWorkGroupCount` is below [`Case::groups`] runs the case
    /// instead: as `pieces` dispatches of the same SPIR-V over consecutive slices of the
    /// buffers, whose output buffers, concatenated, are the case's output. `None`: the
    /// workload cannot be cut so, and such a driver does not run it.
    pub split: Option<fn(&Case, pieces: u32) -> Vec<Part>>,
}

/// One dispatch of a case cut into pieces ([`Case::split`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Its buffers, bindings as the case's.
    pub buffers: Vec<Vec<u8>>,
    /// Its push constants.
    pub push: Vec<u8>,
    /// Its workgroup counts.
    pub groups: [u32; 3],
}

/// The values of a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    U32(Vec<u32>),
    F32(Vec<f32>),
}

impl Values {
    /// Little-endian bytes, as a buffer holds them.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Values::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Values::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

/// How a result is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// Byte for byte.
    Exact,
    /// f32 values, relative Frobenius error at most this (the f16 GEMM's bound).
    Frobenius(f64),
}

/// A benchmark workload.
pub struct Workload {
    /// Its name (`bench/NAME.comp`).
    pub name: &'static str,
    /// The GLSL source.
    pub shader: &'static str,
    /// The device profile it runs on.
    pub profile: &'static str,
    /// What [`Case::work`] counts, per second.
    pub unit: &'static str,
    /// Scale of [`Case::work`] in the printed rate (1e6 for "M…/s").
    pub unit_scale: f64,
    /// The case at the standard size divided by `divisor` (1; 16 for `--quick`).
    pub case: fn(divisor: u32) -> Case,
    /// The case at the larger size the benchmark brief also names, where it names one
    /// (`tangle bench --large`: the GEMM at 2048³).
    pub large: Option<fn() -> Case>,
}

/// The workloads, in `bench/README.md` order.
pub fn all() -> Vec<Workload> {
    vec![
        Workload {
            name: "alu_hash",
            shader: include_str!("../../../../bench/alu_hash.comp"),
            profile: "default",
            unit: "M loop bodies/s",
            unit_scale: 1e6,
            case: alu_hash,
            large: None,
        },
        Workload {
            name: "saxpy",
            shader: include_str!("../../../../bench/saxpy.comp"),
            profile: "default",
            unit: "GB/s",
            unit_scale: 1e9,
            case: saxpy,
            large: None,
        },
        Workload {
            name: "rotate_conv",
            shader: include_str!("../../../../bench/rotate_conv.comp"),
            profile: "default",
            unit: "M multiply-adds/s",
            unit_scale: 1e6,
            case: rotate_conv,
            large: None,
        },
        Workload {
            name: "dot_gemv",
            shader: include_str!("../../../../bench/dot_gemv.comp"),
            profile: "default",
            unit: "M int8 multiply-adds/s",
            unit_scale: 1e6,
            case: dot_gemv,
            large: None,
        },
        Workload {
            name: "coopmat_gemm",
            shader: include_str!("../../../../bench/coopmat_gemm.comp"),
            profile: "nvidia",
            unit: "GFLOP/s",
            unit_scale: 1e9,
            case: coopmat_gemm,
            large: Some(coopmat_gemm_large),
        },
    ]
}

/// xorshift64 from a fixed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A float in ±[0.5, 100), never zero.
    fn f32(&mut self) -> f32 {
        let x = (self.next() % 19_950) as f32 / 100.0 + 0.5;
        if self.next() & 1 == 0 {
            x
        } else {
            -x
        }
    }
}

fn u32_bytes(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `alu_hash.comp`: 16384 groups of 64, 256 iterations of the hash.
fn alu_hash(divisor: u32) -> Case {
    let groups = 16384 / divisor;
    let n = groups * 64;
    let iters = 256u32;
    let reference = move || {
        let out: Vec<u32> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut x = i.wrapping_mul(2_654_435_761).wrapping_add(1);
                for k in 0..iters {
                    x ^= x >> 13;
                    x = x.wrapping_mul(0x5bd1_e995);
                    x ^= x << 7;
                    x = x.wrapping_add(k);
                }
                x
            })
            .collect();
        Values::U32(out)
    };
    // Sixteen invocations side by side: each step of the hash is one vector instruction over
    // them, where one invocation alone is a chain of dependent multiplies.
    let baseline = move || {
        Baseline::in_place(
            vec![0u32; n as usize],
            move |out: &mut [u32]| {
                out.par_chunks_mut(1024).enumerate().for_each(|(c, chunk)| {
                    for (b, lanes) in chunk.chunks_mut(16).enumerate() {
                        let first = (c * 1024 + b * 16) as u32;
                        let mut x = [0u32; 16];
                        for (l, v) in x.iter_mut().enumerate() {
                            *v = (first + l as u32)
                                .wrapping_mul(2_654_435_761)
                                .wrapping_add(1);
                        }
                        for k in 0..iters {
                            for v in x.iter_mut() {
                                *v ^= *v >> 13;
                                *v = v.wrapping_mul(0x5bd1_e995);
                                *v ^= *v << 7;
                                *v = v.wrapping_add(k);
                            }
                        }
                        lanes.copy_from_slice(&x[..lanes.len()]);
                    }
                });
            },
            Values::U32,
        )
    };
    Case {
        buffers: vec![vec![0; n as usize * 4]],
        push: iters.to_le_bytes().to_vec(),
        spec: Vec::new(),
        groups: [groups, 1, 1],
        output: 0,
        work: f64::from(n) * f64::from(iters),
        size: format!("{n} invocations x {iters} iterations"),
        reference: Box::new(reference),
        baseline: Box::new(baseline),
        check: Check::Exact,
        float_output: false,
        split: None,
    }
}

/// `saxpy.comp`: 16M floats in groups of 256; 12 bytes moved per element.
fn saxpy(divisor: u32) -> Case {
    let groups = 65536 / divisor;
    let n = groups * 256;
    let a = 1.5f32;
    let mut rng = Rng(0x5a5a_1234);
    let x: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let buffers = vec![f32_bytes(&x), f32_bytes(&y)];
    let (xb, yb) = (x.clone(), y.clone());
    let reference = move || Values::F32(x.par_iter().zip(&y).map(|(x, y)| a * x + y).collect());
    // `y` updated in place, as the shader does, on memory already resident.
    let baseline = move || {
        let x = xb.clone();
        Baseline::in_place(
            yb.clone(),
            move |y: &mut [f32]| {
                y.par_chunks_mut(1 << 16)
                    .zip(x.par_chunks(1 << 16))
                    .for_each(|(y, x)| y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x));
            },
            Values::F32,
        )
    };
    Case {
        buffers,
        push: [a.to_le_bytes(), n.to_le_bytes()].concat(),
        spec: Vec::new(),
        groups: [groups, 1, 1],
        output: 1,
        work: 12.0 * f64::from(n),
        size: format!("n = {n}"),
        reference: Box::new(reference),
        baseline: Box::new(baseline),
        check: Check::Exact,
        float_output: true,
        split: Some(saxpy_split),
    }
}

/// `saxpy` in `pieces` dispatches: each takes a run of whole workgroups, its slices of `x` and
/// `y` and its element count as `n` (invocation `i` of a piece is element `i` of its slices,
/// and the bound check is against the piece's count), so the pieces' `y`, concatenated, is the
/// whole dispatch's.
fn saxpy_split(case: &Case, pieces: u32) -> Vec<Part> {
    let (groups, a) = (case.groups[0], case.push.get(..4).unwrap_or(&[0; 4]));
    let per = groups.div_ceil(pieces.max(1)).max(1);
    (0..groups)
        .step_by(per as usize)
        .map(|first| {
            let count = per.min(groups - first);
            let bytes = |b: &Vec<u8>| {
                let start = (first as usize * 256 * 4).min(b.len());
                let end = ((first + count) as usize * 256 * 4).min(b.len());
                b[start..end].to_vec()
            };
            let n = u32::try_from(bytes(&case.buffers[0]).len() / 4).unwrap_or(u32::MAX);
            Part {
                buffers: case.buffers.iter().map(bytes).collect(),
                push: [a, &n.to_le_bytes()].concat(),
                groups: [count, 1, 1],
            }
        })
        .collect()
}

/// `rotate_conv.comp`: 1M invocations, a 16-tap convolution inside each cluster of 8.
fn rotate_conv(divisor: u32) -> Case {
    let n = (1u32 << 20) / divisor;
    let mut rng = Rng(0x7077_a7e0);
    let x: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let w: Vec<f32> = (0..16).map(|_| rng.f32() / 100.0).collect();
    let buffers = vec![f32_bytes(&x), f32_bytes(&w), vec![0; n as usize * 4]];
    let (xb, wb) = (x.clone(), w.clone());
    let baseline = move || {
        let (x, w) = (xb.clone(), wb.clone());
        Baseline::in_place(
            vec![0f32; n as usize],
            move |out: &mut [f32]| {
                out.par_chunks_mut(8)
                    .zip(x.par_chunks(8))
                    .for_each(|(o, c)| {
                        for (i, o) in o.iter_mut().enumerate() {
                            *o = (0..16).fold(0.0f32, |acc, t| acc + w[t] * c[(i + t) % 8]);
                        }
                    });
            },
            Values::F32,
        )
    };
    let reference = move || {
        // Clusters of 8 consecutive invocations (workgroups and subgroups are multiples of 8):
        // tap t of invocation i is the value of the invocation t places further round its
        // cluster, accumulated in tap order.
        let out: Vec<f32> = (0..n as usize)
            .into_par_iter()
            .map(|i| {
                let base = i & !7;
                (0..16).fold(0.0f32, |acc, t| acc + w[t] * x[base + (i + t) % 8])
            })
            .collect();
        Values::F32(out)
    };
    Case {
        buffers,
        push: Vec::new(),
        spec: Vec::new(),
        groups: [n / 64, 1, 1],
        output: 2,
        work: 16.0 * f64::from(n),
        size: format!("{n} invocations x 16 taps"),
        reference: Box::new(reference),
        baseline: Box::new(baseline),
        check: Check::Exact,
        float_output: true,
        split: None,
    }
}

/// `dot_gemv.comp`: 16384 rows of 1024 packed words (K = 4096 int8), saturating accumulation.
fn dot_gemv(divisor: u32) -> Case {
    let rows = 16384 / divisor;
    let words = 1024u32;
    let mut rng = Rng(0xd07_9e37);
    let a: Vec<u32> = (0..rows * words).map(|_| rng.next() as u32).collect();
    let x: Vec<u32> = (0..words).map(|_| rng.next() as u32).collect();
    let buffers = vec![
        u32_bytes(a.iter().copied()),
        u32_bytes(x.iter().copied()),
        vec![0; rows as usize * 4],
    ];
    let (ab, xb) = (a.clone(), x.clone());
    let baseline = move || {
        let (a, x) = (ab.clone(), xb.clone());
        Baseline::in_place(
            vec![0u32; rows as usize],
            move |out: &mut [u32]| {
                out.par_iter_mut()
                    .zip(a.par_chunks(words as usize))
                    .for_each(|(o, row)| {
                        // Saturation after each packed step, as OpSDotAccSat accumulates.
                        let mut acc = 0i32;
                        for (&p, &q) in row.iter().zip(&x) {
                            let d: i32 = (0..4)
                                .map(|b| {
                                    i32::from((p >> (8 * b)) as i8)
                                        * i32::from((q >> (8 * b)) as i8)
                                })
                                .sum();
                            acc = acc.saturating_add(d);
                        }
                        *o = acc as u32;
                    });
            },
            Values::U32,
        )
    };
    let reference = move || {
        let dot4 = |p: u32, q: u32| -> i64 {
            (0..4)
                .map(|b| i64::from((p >> (8 * b)) as i8) * i64::from((q >> (8 * b)) as i8))
                .sum()
        };
        let out: Vec<u32> = a
            .par_chunks(words as usize)
            .map(|row| {
                // OpSDotAccSat: the exact dot product added to the accumulator, saturated.
                row.iter().zip(&x).fold(0i32, |acc, (&p, &q)| {
                    (i64::from(acc) + dot4(p, q)).clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                        as i32
                }) as u32
            })
            .collect();
        Values::U32(out)
    };
    Case {
        buffers,
        push: u32_bytes([rows, words]),
        spec: Vec::new(),
        groups: [rows.div_ceil(64), 1, 1],
        output: 2,
        work: f64::from(rows) * f64::from(words) * 4.0,
        size: format!("{rows} rows x {} int8", words * 4),
        reference: Box::new(reference),
        baseline: Box::new(baseline),
        check: Check::Exact,
        float_output: false,
        split: None,
    }
}

/// `coopmat_gemm.comp` at M = N = K = 1024 (256 with `--quick`, 64 at 1/256).
fn coopmat_gemm(divisor: u32) -> Case {
    coopmat_gemm_of(match divisor {
        1 => 1024,
        2..=255 => 256,
        _ => 64,
    })
}

/// `coopmat_gemm.comp` at M = N = K = 2048, the brief's second size.
fn coopmat_gemm_large() -> Case {
    coopmat_gemm_of(2048)
}

/// `coopmat_gemm.comp` on the `nvidia` profile at M = N = K = `n` (a multiple of 64), 16×16×16
/// tiles, against an f32 GEMM (ndarray's, on `matrixmultiply`) over row bands on every thread.
fn coopmat_gemm_of(n: usize) -> Case {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // f16 values in ±[0.5, 2).
    let mut half = || {
        let r = rng.next();
        let sign = ((r >> 20) & 1) as u16;
        f16::from_bits((sign << 15) | ((14 + ((r >> 11) & 1) as u16) << 10) | (r & 0x3ff) as u16)
    };
    let a: Vec<f16> = (0..n * n).map(|_| half()).collect();
    let b: Vec<f16> = (0..n * n).map(|_| half()).collect();
    let bytes = |v: &[f16]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let buffers = vec![bytes(&a), bytes(&b), vec![0; n * n * 4]];
    let widen = |v: &[f16]| -> Option<Array2<f32>> {
        Array2::from_shape_vec((n, n), v.iter().map(|x| x.to_f32()).collect()).ok()
    };
    let (af, bf) = (widen(&a), widen(&b));
    let (ab, bb) = (af.clone(), bf.clone());
    // The same banded GEMM into an output kept from run to run.
    let baseline = move || {
        let (af, bf) = (ab.clone(), bb.clone());
        Baseline::in_place(
            vec![0f32; n * n],
            move |c: &mut [f32]| {
                let (Some(af), Some(bf)) = (&af, &bf) else {
                    return;
                };
                c.par_chunks_mut(64 * n).enumerate().for_each(|(i, band)| {
                    let rows = band.len() / n;
                    let Ok(mut band) = ndarray::ArrayViewMut2::from_shape((rows, n), band) else {
                        return;
                    };
                    let a_band: ArrayView2<f32> = af.slice(s![i * 64..i * 64 + rows, ..]);
                    ndarray::linalg::general_mat_mul(1.0, &a_band, bf, 0.0, &mut band);
                });
            },
            Values::F32,
        )
    };
    let reference = move || {
        let (Some(af), Some(bf)) = (&af, &bf) else {
            return Values::F32(Vec::new());
        };
        let mut c = Array2::<f32>::zeros((n, n));
        c.axis_chunks_iter_mut(Axis(0), 64)
            .into_par_iter()
            .enumerate()
            .for_each(|(i, mut band)| {
                let rows = band.nrows();
                let a_band: ArrayView2<f32> = af.slice(s![i * 64..i * 64 + rows, ..]);
                ndarray::linalg::general_mat_mul(1.0, &a_band, bf, 0.0, &mut band);
            });
        Values::F32(c.into_raw_vec_and_offset().0)
    };
    let t = 16u64;
    let tiles = (n / 16) as u32;
    Case {
        buffers,
        push: u32_bytes([n as u32; 3]),
        // Tile shape, and the workgroup as one subgroup (the `nvidia` profile's 32).
        spec: vec![(0, t), (1, t), (2, t), (3, 32)],
        groups: [tiles * tiles, 1, 1],
        output: 2,
        work: 2.0 * (n * n * n) as f64,
        size: format!("{n}^3, 16x16x16 tiles"),
        reference: Box::new(reference),
        baseline: Box::new(baseline),
        check: Check::Frobenius(1e-2),
        float_output: true,
        split: None,
    }
}
