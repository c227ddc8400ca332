//! The fast OpCooperativeMatrixMulAddKHR: `out = A·B + C` over whole row-major matrices of raw
//! component bits, bit-identical to the per-element reference [`super::coopmat::mul_add_element`]
//! for every [`MulAddTypes`] combination.
//!
//! Inputs are widened once per call into typed scratch (f16 → f32, integers → the accumulator
//! width), then every output element accumulates over k in index order — the order the
//! reference defines — with the loops arranged i, k, j so the innermost loop runs along a row of
//! B and a row of the accumulator, which LLVM vectorizes. Larger matrices are blocked over j and
//! k (each block still visits k in increasing order per element) so a block of B stays in cache.
//!
//! Paths, by type combination:
//! * f16 × f16 → f32 (the ML case): f32 multiply then add; the product of two f16 values is
//!   exact in f32, so this is the reference's fused step.
//! * float inputs other than f64 → f64: f64 multiply (exact) then add.
//! * any f64 input → f64: [`f64::mul_add`].
//! * other float combinations: the reference's step ([`fused_step`]) on f64 scratch. With an
//!   f16 or bf16 Result (ggml's `_f16acc` GEMMs) the semantics the reference defines, and this
//!   keeps, is: C rounded once to the Result, then per k in order `acc ← RN(x·y + acc)`, one
//!   round-to-nearest-even to the Result per step: the product is exact in f64, the sum is
//!   rounded to odd in f64 and then to the Result, which acts as one rounding — not f64 → f32
//!   → f16, and not `half::f16::from_f64` (through f32 where the CPU has F16C, a double
//!   rounding). The Result's rounding is chosen once outside the loop nest and works on the
//!   bits ([`super::float::f16_bits_from_f64`], [`widen_f16`]): no `powi`, no `rint`.
//! * integers without SaturatingAccumulation: wrapping arithmetic in u32 (results of ≤ 32 bits)
//!   or u64, which keeps the low N bits exact.
//! * integers with SaturatingAccumulation: exact i128 sums, tracking whether any product or
//!   partial sum leaves the Result's range (the undefined case the sanitizer reports).

use super::coopmat::{float_bits, float_value, fused_step};
use super::coopmat_types::{Component, MulAddTypes};
use super::dot::{range, saturate, widen};
use super::{mask, sign_extend};

/// Columns of B (and of the result) per block.
const BLOCK_N: usize = 256;
/// Rows of B (columns of A) per block.
const BLOCK_K: usize = 128;

/// Why [`mul_add`] could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A slice does not hold the matrix its dimensions describe.
    #[error("matrix {matrix} has {len} components, not {rows}x{cols}")]
    Shape {
        matrix: &'static str,
        len: usize,
        rows: usize,
        cols: usize,
    },
    /// The operands mix float and integer components, which no client API defines.
    #[error("the MulAdd operands mix float and integer components")]
    MixedKinds,
}

/// `out = A·B + C` for an M×K `a`, K×N `b`, M×N `c` and `out`, row-major, components as raw bits
/// (zero-extended). Returns whether any element was undefined (SaturatingAccumulation with an
/// intermediate out of the Result's range), whose value is then the reference's fallback.
// The shape and the four matrices are the instruction's operands, named as the spec names them.
#[allow(clippy::too_many_arguments)]
pub fn mul_add(
    op: &MulAddTypes,
    m: usize,
    n: usize,
    k: usize,
    a: &[u64],
    b: &[u64],
    c: &[u64],
    out: &mut [u64],
) -> Result<bool, KernelError> {
    let shape = |matrix, len: usize, rows: usize, cols: usize| {
        if rows.checked_mul(cols) == Some(len) {
            Ok(())
        } else {
            Err(KernelError::Shape {
                matrix,
                len,
                rows,
                cols,
            })
        }
    };
    shape("A", a.len(), m, k)?;
    shape("B", b.len(), k, n)?;
    shape("C", c.len(), m, n)?;
    shape("Result", out.len(), m, n)?;
    let dims = Dims { m, n, k };
    let is_float = |t: Component| !matches!(t, Component::Int { .. });
    let kinds = [op.a, op.b, op.c, op.result].map(is_float);
    if kinds.iter().all(|&f| f) {
        float(op, dims, a, b, c, out);
        Ok(false)
    } else if kinds.iter().any(|&f| f) {
        Err(KernelError::MixedKinds)
    } else if op.saturating {
        Ok(int_saturating(op, dims, a, b, c, out))
    } else {
        int_wrapping(op, dims, a, b, c, out);
        Ok(false)
    }
}

/// M, N, K.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dims {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
}

/// Accumulators kept in registers across the k loop: a strip of this many columns ...
const STRIP: usize = 16;
/// ... of this many rows at once, so that several independent chains of steps are in flight.
const ROWS: usize = 4;

/// The blocked loop nest: `acc[i][j] = step(acc[i][j], a[i][kk], b[kk][j])` for kk in order.
/// Within a block, [`ROWS`] × [`STRIP`] accumulators stay in fixed-size arrays (vector
/// registers) while kk runs, each step reading one strip of a row of B; `step` is inlined into
/// that loop. Each element still takes its steps in increasing kk, as the reference does.
#[inline(always)]
fn blocked<T: Copy + Default, S: Copy>(
    d: Dims,
    a: &[S],
    b: &[S],
    acc: &mut [T],
    step: impl FnMut(T, S, S) -> T,
) {
    blocked_by::<ROWS, STRIP, T, S>(d, a, b, acc, step);
}

/// [`blocked`] with `R` rows × `W` columns of accumulators held across the k loop: a block
/// that fits the vector registers of the instruction set the caller is compiled for.
#[inline(always)]
pub(super) fn blocked_by<const R: usize, const W: usize, T: Copy + Default, S: Copy>(
    d: Dims,
    a: &[S],
    b: &[S],
    acc: &mut [T],
    mut step: impl FnMut(T, S, S) -> T,
) {
    let Dims { m, n, k } = d;
    for j0 in (0..n).step_by(BLOCK_N) {
        let j1 = (j0 + BLOCK_N).min(n);
        for k0 in (0..k).step_by(BLOCK_K) {
            let k1 = (k0 + BLOCK_K).min(k);
            let mut i = 0;
            while i + R <= m {
                rows::<R, W, T, S>(d, (a, b, &mut *acc), i, (j0, j1), (k0, k1), &mut step);
                i += R;
            }
            for i in i..m {
                rows::<1, W, T, S>(d, (a, b, &mut *acc), i, (j0, j1), (k0, k1), &mut step);
            }
        }
    }
}

/// Rows `i..i + R`, columns `j0..j1`, steps `k0..k1` of [`blocked`].
#[inline(always)]
fn rows<const R: usize, const W: usize, T: Copy + Default, S: Copy>(
    Dims { n, k, .. }: Dims,
    (a, b, acc): (&[S], &[S], &mut [T]),
    i: usize,
    (j0, j1): (usize, usize),
    (k0, k1): (usize, usize),
    step: &mut impl FnMut(T, S, S) -> T,
) {
    let mut j = j0;
    while j + W <= j1 {
        let mut s = [[T::default(); W]; R];
        for (r, s) in s.iter_mut().enumerate() {
            if let Some(from) = acc.get((i + r) * n + j..(i + r) * n + j + W) {
                s.copy_from_slice(from);
            }
        }
        for kk in k0..k1 {
            let Some(y) = b.get(kk * n + j..kk * n + j + W) else {
                continue;
            };
            for (r, s) in s.iter_mut().enumerate() {
                let Some(&x) = a.get((i + r) * k + kk) else {
                    continue;
                };
                for (s, &y) in s.iter_mut().zip(y) {
                    *s = step(*s, x, y);
                }
            }
        }
        for (r, s) in s.iter().enumerate() {
            if let Some(to) = acc.get_mut((i + r) * n + j..(i + r) * n + j + W) {
                to.copy_from_slice(s);
            }
        }
        j += W;
    }
    // The columns past the last whole strip, one element at a time.
    for r in i..i + R {
        for jj in j..j1 {
            let Some(&start) = acc.get(r * n + jj) else {
                continue;
            };
            let mut v = start;
            for kk in k0..k1 {
                if let (Some(&x), Some(&y)) = (a.get(r * k + kk), b.get(kk * n + jj)) {
                    v = step(v, x, y);
                }
            }
            if let Some(o) = acc.get_mut(r * n + jj) {
                *o = v;
            }
        }
    }
}

/// The f16 × f16 → f32 case on widened operands: `acc += a·b`, each element accumulating over k
/// in order with an f32 multiply and add (the product of two f16 values is exact in f32, so
/// this is the reference's fused step). `a` is m×k, `b` k×n, `acc` m×n, row-major. The
/// executor's fast path calls it on operands it widened while gathering them.
pub fn f16_products_into_f32(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], acc: &mut [f32]) {
    if a.len() != m * k || b.len() != k * n || acc.len() != m * n {
        debug_assert!(false, "f16_products_into_f32: shapes");
        return;
    }
    let d = Dims { m, n, k };
    if !super::coopmat_fma::exact_products_f32(d, a, b, acc) {
        exact_products_f32(d, a, b, acc);
    }
}

/// [`f16_products_into_f32`]'s loop for any x86-64 (SSE2: 4 rows × 8 columns of accumulators
/// fill half the 16 vector registers, the rest hold B's strip and A's broadcast value). A
/// product of two f16 values has at most 22 significant bits, so it is exact in f32 (and
/// cannot overflow or underflow it): `s + x * y` rounds once, as the reference's fused step
/// does. Where the CPU has FMA, [`super::coopmat_fma`] runs the same steps as fused
/// multiply-adds, which round the same exact sum once: the same bits.
fn exact_products_f32(d: Dims, a: &[f32], b: &[f32], acc: &mut [f32]) {
    blocked_by::<4, 8, f32, f32>(d, a, b, acc, |s, x, y| s + x * y);
}

/// Every float combination.
fn float(op: &MulAddTypes, d: Dims, a: &[u64], b: &[u64], c: &[u64], out: &mut [u64]) {
    let value = |t: Component, v: u64| float_value(t, v).unwrap_or(0.0);
    let wide = op.a == Component::Float(64) || op.b == Component::Float(64);
    match op.result {
        Component::Float(32) if op.a == Component::Float(16) && op.b == Component::Float(16) => {
            let widen16 = |v: &[u64]| -> Vec<f32> {
                v.iter()
                    .map(|&x| half::f16::from_bits(x as u16).to_f32())
                    .collect()
            };
            let (a, b) = (widen16(a), widen16(b));
            let mut acc: Vec<f32> = c.iter().map(|&v| value(op.c, v) as f32).collect();
            f16_products_into_f32(d.m, d.n, d.k, &a, &b, &mut acc);
            for (o, s) in out.iter_mut().zip(acc) {
                *o = float_bits(op.result, f64::from(s)).unwrap_or(0);
            }
        }
        Component::Float(64) => {
            let a: Vec<f64> = a.iter().map(|&v| value(op.a, v)).collect();
            let b: Vec<f64> = b.iter().map(|&v| value(op.b, v)).collect();
            let mut acc: Vec<f64> = c.iter().map(|&v| value(op.c, v)).collect();
            if wide {
                blocked(d, &a, &b, &mut acc, |s, x, y| x.mul_add(y, s));
            } else {
                blocked(d, &a, &b, &mut acc, |s, x, y| s + x * y);
            }
            for (o, s) in out.iter_mut().zip(acc) {
                *o = float_bits(op.result, s).unwrap_or(0);
            }
        }
        result => {
            let a: Vec<f64> = a.iter().map(|&v| value(op.a, v)).collect();
            let b: Vec<f64> = b.iter().map(|&v| value(op.b, v)).collect();
            // C rounded to the Result, as the reference starts.
            let round = |x: f64| float_bits(result, x).map_or(0.0, |r| value(result, r));
            let mut acc: Vec<f64> = c.iter().map(|&v| round(value(op.c, v))).collect();
            // The step with the Result's rounding chosen once, outside the loop nest: an f16
            // (or bf16) accumulator rounds every step (ggml's `_f16acc` GEMMs).
            match (result, wide) {
                (Component::Float(16), false) => blocked(d, &a, &b, &mut acc, |s, x, y| {
                    fused_step(Component::Float(16), (x, y, s), false)
                }),
                (Component::BFloat16, false) => blocked(d, &a, &b, &mut acc, |s, x, y| {
                    fused_step(Component::BFloat16, (x, y, s), false)
                }),
                _ => blocked(d, &a, &b, &mut acc, |s, x, y| {
                    fused_step(result, (x, y, s), wide)
                }),
            }
            for (o, s) in out.iter_mut().zip(acc) {
                *o = float_bits(result, s).unwrap_or(0);
            }
        }
    }
}

/// An integer component widened per its signedness flag to 64 bits (two's complement).
fn widen64(t: Component, v: u64) -> u64 {
    match t {
        Component::Int { bits, signed: true } => sign_extend(bits, v) as u64,
        Component::Int { bits, .. } => v & mask(bits),
        _ => 0,
    }
}

/// Integers without SaturatingAccumulation: "the resulting value will equal the low-order N
/// bits of the correct result R", so arithmetic modulo 2^32 or 2^64 (at least 2^N) is exact
/// in those bits.
fn int_wrapping(op: &MulAddTypes, d: Dims, a: &[u64], b: &[u64], c: &[u64], out: &mut [u64]) {
    let bits = match op.result {
        Component::Int { bits, .. } => bits,
        _ => 64,
    };
    let wide = |t: Component, v: &[u64]| -> Vec<u64> { v.iter().map(|&x| widen64(t, x)).collect() };
    if bits <= 32 {
        let narrow = |v: Vec<u64>| -> Vec<u32> { v.into_iter().map(|x| x as u32).collect() };
        let (a, b) = (narrow(wide(op.a, a)), narrow(wide(op.b, b)));
        let mut acc = narrow(wide(op.c, c));
        blocked(d, &a, &b, &mut acc, |s, x, y| {
            s.wrapping_add(x.wrapping_mul(y))
        });
        for (o, s) in out.iter_mut().zip(acc) {
            *o = u64::from(s) & mask(bits);
        }
    } else {
        let (a, b) = (wide(op.a, a), wide(op.b, b));
        let mut acc = wide(op.c, c);
        blocked(d, &a, &b, &mut acc, |s, x, y| {
            s.wrapping_add(x.wrapping_mul(y))
        });
        for (o, s) in out.iter_mut().zip(acc) {
            *o = s & mask(bits);
        }
    }
}

/// Integers with SaturatingAccumulation: the exact sum of the products (i128, saturating only
/// where no 64-bit range is left), then C added and the total saturated, as the reference
/// defines; returns whether any product or partial sum left the Result's range.
fn int_saturating(
    op: &MulAddTypes,
    d: Dims,
    a: &[u64],
    b: &[u64],
    c: &[u64],
    out: &mut [u64],
) -> bool {
    let (bits, signed) = match op.result {
        Component::Int { bits, signed } => (bits, signed),
        _ => (64, false),
    };
    let exact = |t: Component, v: &[u64]| -> Vec<i128> {
        match t {
            Component::Int { bits, signed } => v.iter().map(|&x| widen(signed, bits, x)).collect(),
            _ => vec![0; v.len()],
        }
    };
    let (a, b) = (exact(op.a, a), exact(op.b, b));
    let (lo, hi) = range(signed, bits);
    let mut sums = vec![0i128; d.m * d.n];
    let mut undefined = false;
    blocked(d, &a, &b, &mut sums, |s, x, y| {
        let p = x.saturating_mul(y);
        let t = s.saturating_add(p);
        undefined |= p < lo || p > hi || t < lo || t > hi;
        t
    });
    for ((o, s), &cv) in out.iter_mut().zip(sums).zip(&exact(op.c, c)) {
        *o = saturate(signed, bits, s, cv);
    }
    undefined
}

/// `2^112`: binary16's exponent bias is 15, binary32's 127.
const UP: f32 = f32::from_bits((127 + 112) << 23);

/// A binary16 value's bits as a binary32 value: exact for every finite value and infinity (the
/// magnitude's bits shifted into binary32's fields read `2^-112` times the value, undone by one
/// exact multiplication; subnormals become normals), and a NaN stays a NaN: the value
/// [`half::f16::to_f32`] gives (a NaN's payload aside, which no MulAdd result keeps).
pub fn widen_f16(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let mag = u32::from(h & 0x7fff);
    let finite = (f32::from_bits(mag << 13) * UP).to_bits();
    let special = 0x7f80_0000 | (mag & 0x3ff) << 13;
    f32::from_bits(if mag >= 0x7c00 { special } else { finite } | sign)
}

/// The binary16 values of `words` (two a word, the low half first) as binary32 values into
/// `out` (as many as both hold): each finite value and infinity exactly, each NaN a NaN (with
/// F16C's conversion where the CPU has it, else [`widen_f16`]). What a MulAdd reads of them.
pub fn widen_words(words: &[u32], out: &mut [f32]) {
    if !super::coopmat_fma::widen_words_f16c(words, out) {
        widen_words_portable(words, out);
    }
}

/// [`widen_words`]' loop, which the compiler vectorises.
pub(crate) fn widen_words_portable(words: &[u32], out: &mut [f32]) {
    for (pair, &w) in out.chunks_exact_mut(2).zip(words) {
        if let [lo, hi] = pair {
            *lo = widen_f16(w as u16);
            *hi = widen_f16((w >> 16) as u16);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::coopmat::mul_add_element;
    use super::super::{proptest_config, truncate};
    use super::*;
    use proptest::prelude::*;

    /// The kernel against the element reference on one problem.
    fn check(op: &MulAddTypes, (m, n, k): (usize, usize, usize), a: &[u64], b: &[u64], c: &[u64]) {
        let mut out = vec![0; m * n];
        let undefined = mul_add(op, m, n, k, a, b, c, &mut out).expect("shapes match");
        let mut any = false;
        for i in 0..m {
            for j in 0..n {
                let row = &a[i * k..(i + 1) * k];
                let col: Vec<u64> = (0..k).map(|kk| b[kk * n + j]).collect();
                let (want, u) = mul_add_element(op, row, &col, c[i * n + j]).expect("one kind");
                any |= u;
                assert_eq!(out[i * n + j], want, "{op:?} ({i}, {j}) of {m}x{n}x{k}");
            }
        }
        assert_eq!(undefined, any, "{op:?}");
    }

    /// Random bits of a component, sometimes small, sometimes special.
    fn component_bits(t: Component, raw: u64, small: bool) -> u64 {
        match t {
            Component::Int { bits, .. } if small => truncate(bits, raw) >> (bits / 2 + 1),
            Component::Int { bits, .. } => truncate(bits, raw),
            Component::Float(16) | Component::BFloat16 if small => raw & 0x3fff,
            Component::Float(16) | Component::BFloat16 => raw & 0xffff,
            Component::Float(64) if small => raw & 0x3fff_ffff_ffff_ffff,
            Component::Float(64) => raw,
            Component::Float(_) if small => raw & 0x3fff_ffff,
            Component::Float(_) => raw & 0xffff_ffff,
        }
    }

    fn floats() -> impl Strategy<Value = Component> {
        prop_oneof![
            Just(Component::Float(16)),
            Just(Component::Float(32)),
            Just(Component::Float(64)),
            Just(Component::BFloat16),
        ]
    }

    fn ints() -> impl Strategy<Value = Component> {
        ((0usize..4), any::<bool>()).prop_map(|(w, signed)| Component::Int {
            bits: [8, 16, 32, 64][w],
            signed,
        })
    }

    fn problem() -> impl Strategy<Value = ((usize, usize, usize), Vec<u64>, bool)> {
        ((1usize..7, 1usize..7, 1usize..9), any::<bool>()).prop_flat_map(|(dims, small)| {
            let (m, n, k) = dims;
            let len = m * k + k * n + m * n;
            (
                Just(dims),
                proptest::collection::vec(any::<u64>(), len),
                Just(small),
            )
        })
    }

    fn split(
        op: &MulAddTypes,
        (m, n, k): (usize, usize, usize),
        raw: &[u64],
        small: bool,
    ) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let (ra, rest) = raw.split_at(m * k);
        let (rb, rc) = rest.split_at(k * n);
        let f =
            |t, v: &[u64]| -> Vec<u64> { v.iter().map(|&x| component_bits(t, x, small)).collect() };
        (f(op.a, ra), f(op.b, rb), f(op.c, rc))
    }

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn float_combinations_random(
            types in (floats(), floats(), floats(), floats()),
            (dims, raw, small) in problem(),
        ) {
            let op = MulAddTypes { a: types.0, b: types.1, c: types.2, result: types.3, saturating: false };
            let (a, b, c) = split(&op, dims, &raw, small);
            check(&op, dims, &a, &b, &c);
        }

        #[test]
        fn int_combinations_random(
            types in (ints(), ints(), ints(), ints()),
            saturating: bool,
            (dims, raw, small) in problem(),
        ) {
            let op = MulAddTypes { a: types.0, b: types.1, c: types.2, result: types.3, saturating };
            let (a, b, c) = split(&op, dims, &raw, small);
            check(&op, dims, &a, &b, &c);
        }
    }

    #[test]
    fn ml_case_on_blocked_shapes() {
        // Shapes past one block in j and k, f16 inputs in [-2, 2), f32 accumulators.
        let op = MulAddTypes {
            a: Component::Float(16),
            b: Component::Float(16),
            c: Component::Float(32),
            result: Component::Float(32),
            saturating: false,
        };
        let (m, n, k) = (3, BLOCK_N + 5, BLOCK_K + 7);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |mask: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed & mask
        };
        let a: Vec<u64> = (0..m * k).map(|_| next(0xbfff)).collect();
        let b: Vec<u64> = (0..k * n).map(|_| next(0xbfff)).collect();
        let c: Vec<u64> = (0..m * n).map(|_| next(0xbfff_ffff)).collect();
        check(&op, (m, n, k), &a, &b, &c);
        // Saturating int8 → SINT32 across blocks, with overflow provoked.
        let sat = MulAddTypes {
            a: Component::Int {
                bits: 8,
                signed: true,
            },
            b: Component::Int {
                bits: 8,
                signed: true,
            },
            c: Component::Int {
                bits: 32,
                signed: true,
            },
            result: Component::Int {
                bits: 8,
                signed: true,
            },
            saturating: true,
        };
        let a8: Vec<u64> = (0..m * k).map(|_| next(0xff)).collect();
        let b8: Vec<u64> = (0..k * n).map(|_| next(0xff)).collect();
        let c32: Vec<u64> = (0..m * n).map(|_| next(0xffff_ffff)).collect();
        let mut out = vec![0; m * n];
        assert_eq!(mul_add(&sat, m, n, k, &a8, &b8, &c32, &mut out), Ok(true));
        check(&sat, (m, n, k), &a8, &b8, &c32);
    }

    #[test]
    fn row_blocks_and_strips_match_the_reference() {
        // Shapes that take the ROWS × STRIP register blocks, the single rows after them, and
        // the columns past the last strip, for a float and an integer combination of each kind.
        let int = |bits, signed| Component::Int { bits, signed };
        let combos = [
            (
                Component::Float(16),
                Component::Float(16),
                Component::Float(32),
                Component::Float(32),
                false,
            ),
            (
                Component::Float(32),
                Component::Float(32),
                Component::Float(32),
                Component::Float(32),
                false,
            ),
            (
                Component::Float(64),
                Component::Float(16),
                Component::Float(64),
                Component::Float(64),
                false,
            ),
            (
                int(8, true),
                int(8, false),
                int(32, true),
                int(32, true),
                false,
            ),
            (
                int(8, true),
                int(8, true),
                int(32, true),
                int(16, true),
                true,
            ),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (a, b, c, result, saturating) in combos {
            let op = MulAddTypes {
                a,
                b,
                c,
                result,
                saturating,
            };
            for (m, n, k) in [(16, 16, 16), (4, 16, 1), (9, 37, 5), (7, 48, 130)] {
                let small = next() & 1 == 0;
                let mut bits = |t, len| -> Vec<u64> {
                    (0..len).map(|_| component_bits(t, next(), small)).collect()
                };
                let (av, bv, cv) = (bits(a, m * k), bits(b, k * n), bits(c, m * n));
                check(&op, (m, n, k), &av, &bv, &cv);
            }
        }
    }

    #[test]
    fn bad_shapes_and_mixed_kinds_are_errors() {
        let f = Component::Float(32);
        let i = Component::Int {
            bits: 32,
            signed: true,
        };
        let op = MulAddTypes {
            a: f,
            b: f,
            c: f,
            result: f,
            saturating: false,
        };
        let mut out = vec![0; 4];
        assert!(matches!(
            mul_add(&op, 2, 2, 2, &[0; 3], &[0; 4], &[0; 4], &mut out),
            Err(KernelError::Shape { matrix: "A", .. })
        ));
        assert!(matches!(
            mul_add(&op, usize::MAX, 2, 2, &[0; 4], &[0; 4], &[0; 4], &mut out),
            Err(KernelError::Shape { .. })
        ));
        let mixed = MulAddTypes { a: i, ..op };
        assert_eq!(
            mul_add(&mixed, 2, 2, 2, &[0; 4], &[0; 4], &[0; 4], &mut out),
            Err(KernelError::MixedKinds)
        );
    }
}
