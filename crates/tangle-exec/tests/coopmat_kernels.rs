//! Cooperative-matrix kernels written the way ML back ends write them, run under every layout
//! policy and checked against plain-Rust results: a tiled GEMM staging A and B tiles through
//! shared memory with four subgroups per workgroup and a zero-filled accumulator, and an
//! attention block (QKᵀ with coopmat, element-wise scale, row softmax through shared memory,
//! f32→f16 conversion of the probabilities, ·V with coopmat).

mod common;

use common::{compile, Rng};
use half::f16;
use tangle_exec::{CoopmatLayout, Report};
use tangle_validate::Validated;

/// Runs `module` with two threads on the `default` profile under `layout`.
fn run(
    module: &Validated<'_>,
    buffers: &[Vec<u8>],
    groups: [u32; 3],
    layout: CoopmatLayout,
) -> (Vec<Vec<u8>>, Report) {
    let job = common::Job {
        threads: 2,
        coopmat_layout: layout,
        ..common::Job::new(buffers.to_vec(), groups)
    };
    common::run_module(module, &job)
}

fn halves(rng: &mut Rng, n: usize) -> Vec<f16> {
    (0..n)
        .map(|_| f16::from_f64(((rng.next() % 2001) as f64 - 1000.0) / 500.0))
        .collect()
}

fn half_bytes(v: &[f16]) -> Vec<u8> {
    v.iter().flat_map(|h| h.to_bits().to_le_bytes()).collect()
}

const GEMM: &str = "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// C (MxN, f32) = A (MxK, f16) x B (KxN, f16). A workgroup of 4 subgroups computes a 32x32 tile
// of C, each subgroup a 16x16 quarter; A and B tiles are staged through shared memory.
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 48;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
shared float16_t sa[32 * 16];
shared float16_t sb[16 * 32];
void main() {
  uint wm = gl_WorkGroupID.y * 32u;
  uint wn = gl_WorkGroupID.x * 32u;
  uint sm = (gl_SubgroupID / 2u) * 16u;
  uint sn = (gl_SubgroupID % 2u) * 16u;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  for (uint k = 0u; k < K; k += 16u) {
    for (uint i = gl_LocalInvocationIndex; i < 512u; i += 128u) {
      sa[i] = a[(wm + i / 16u) * K + k + i % 16u];
      sb[i] = b[(k + i / 32u) * N + wn + i % 32u];
    }
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, sa, sm * 16u, 16u, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, sb, sn, 32u, gl_CooperativeMatrixLayoutRowMajor);
    acc = coopMatMulAdd(ma, mb, acc);
    barrier();
  }
  coopMatStore(acc, c, (wm + sm) * N + wn + sn, N, gl_CooperativeMatrixLayoutRowMajor);
}
";

#[test]
fn tiled_gemm_with_shared_memory_staging() {
    let (m, n, k) = (64usize, 64usize, 48usize);
    let module = compile(GEMM);
    let mut rng = Rng(21);
    let a = halves(&mut rng, m * k);
    let b = halves(&mut rng, k * n);
    let want: Vec<f64> = (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..k)
                .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
                .sum()
        })
        .collect();
    for layout in CoopmatLayout::all() {
        let bufs = vec![half_bytes(&a), half_bytes(&b), vec![0xff; m * n * 4]];
        let (out, report) = run(&module, &bufs, [2, 2, 1], layout);
        assert!(
            report.diagnostics.is_empty(),
            "{layout}: {:?}",
            report.diagnostics
        );
        let c = common::to_f32s(&out[2]);
        for (e, w) in want.iter().enumerate() {
            assert!(
                (f64::from(c[e]) - w).abs() <= 1e-3,
                "{layout}: C[{e}] = {} want {w}",
                c[e]
            );
        }
    }
}

const ATTENTION: &str = "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// One attention block: O = softmax(Q Kt * scale) V for 16 queries, 16 keys, head size 16.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer Q { float16_t q[]; };
layout(set = 0, binding = 1) readonly buffer Kb { float16_t kk[]; };
layout(set = 0, binding = 2) readonly buffer V { float16_t v[]; };
layout(set = 0, binding = 3) writeonly buffer O { float o[]; };
shared float s[16 * 16];
shared float16_t p[16 * 16];
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> mq;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mkt;
  coopMatLoad(mq, q, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  // K is stored row-major (key, dim): read column-major, it is Kt.
  coopMatLoad(mkt, kk, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ms =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  ms = coopMatMulAdd(mq, mkt, ms);
  ms = ms * 0.25;
  coopMatStore(ms, s, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  uint r = gl_LocalInvocationIndex;
  if (r < 16u) {
    float mx = s[r * 16u];
    for (uint j = 1u; j < 16u; ++j) { mx = max(mx, s[r * 16u + j]); }
    float sum = 0.0;
    for (uint j = 0u; j < 16u; ++j) { float e = exp(s[r * 16u + j] - mx); s[r * 16u + j] = e; sum += e; }
    for (uint j = 0u; j < 16u; ++j) { s[r * 16u + j] /= sum; }
  }
  barrier();
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mp;
  coopMatLoad(mp, s, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mp16 =
      coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(mp);
  coopMatStore(mp16, p, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  barrier();
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mv;
  coopMatLoad(ma, p, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(mv, v, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mo =
      coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  mo = coopMatMulAdd(ma, mv, mo);
  coopMatStore(mo, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
";

#[test]
fn attention_block_qkt_softmax_v() {
    let module = compile(ATTENTION);
    let mut rng = Rng(33);
    let (q, k, v) = (
        halves(&mut rng, 256),
        halves(&mut rng, 256),
        halves(&mut rng, 256),
    );
    // Plain Rust: scores in f64, softmax per row, probabilities rounded to f16 as the kernel
    // does, then P·V.
    let mut want = vec![0f64; 256];
    for i in 0..16 {
        let scores: Vec<f64> = (0..16)
            .map(|j| {
                (0..16)
                    .map(|d| q[i * 16 + d].to_f64() * k[j * 16 + d].to_f64())
                    .sum::<f64>()
                    * 0.25
            })
            .collect();
        let mx = scores.iter().cloned().fold(f64::MIN, f64::max);
        let exps: Vec<f64> = scores.iter().map(|s| (s - mx).exp()).collect();
        let sum: f64 = exps.iter().sum();
        let p: Vec<f64> = exps
            .iter()
            .map(|e| f16::from_f64(e / sum).to_f64())
            .collect();
        for d in 0..16 {
            want[i * 16 + d] = (0..16).map(|j| p[j] * v[j * 16 + d].to_f64()).sum();
        }
    }
    for layout in CoopmatLayout::all() {
        let bufs = vec![
            half_bytes(&q),
            half_bytes(&k),
            half_bytes(&v),
            vec![0; 1024],
        ];
        let (out, report) = run(&module, &bufs, [1, 1, 1], layout);
        assert!(
            report.diagnostics.is_empty(),
            "{layout}: {:?}",
            report.diagnostics
        );
        let o = common::to_f32s(&out[3]);
        for e in 0..256 {
            // f32 softmax against f64 may move a probability by one f16 step (2^-11 relative).
            assert!(
                (f64::from(o[e]) - want[e]).abs() <= 4e-3,
                "{layout}: O[{e}] = {} want {}",
                o[e],
                want[e]
            );
        }
    }
}
