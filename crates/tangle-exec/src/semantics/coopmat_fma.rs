//! The f16 × f16 → f32 MulAdd kernel's steps as fused multiply-adds on 256-bit vectors, for
//! CPUs with AVX2 and FMA, and the widening of binary16 tiles for AVX2, chosen at run time:
//! the `unsafe` calls of the semantics.
//!
//! # Exactness
//! The kernel ([`super::coopmat_kernel`]) steps `acc ← round_f32(acc + x·y)` with `x`, `y`
//! f16 values widened to f32; their product has at most 22 significant bits and an exponent
//! far inside f32's range, so it is exact, and `fma(x, y, acc)` rounds the same exact sum
//! once: the same bits, signed zeros included (NaN results are made canonical afterwards
//! either way). The loop nest is the kernel's own ([`super::coopmat_kernel::blocked_by`]),
//! each element still stepping through k in increasing order.
//!
//! # Soundness
//! The only `unsafe` is calling [`fma_products`], a function compiled with
//! `#[target_feature(enable = "avx2,fma")]`, and [`widen_f16c`] (the binary16 widening of
//! tiles the native tier loads), compiled with `avx,f16c`. Calling such a function is sound
//! exactly when the CPU running it has those features, which `is_x86_feature_detected!` checks
//! right before the call. [`widen_f16c`] also reinterprets a `__m256` as `[f32; 8]` (same size,
//! plain data). The function itself is safe Rust (bounds-checked slices), so nothing else can go
//! wrong. On other architectures nothing here is compiled and the caller runs the portable loop.

use super::coopmat_kernel::{blocked_by, Dims};

/// `acc += a·b` as [`super::coopmat_kernel::f16_products_into_f32`] defines it, on operands it
/// widened from f16; `false` (nothing done) where the CPU lacks AVX2 or FMA.
pub(super) fn exact_products_f32(d: Dims, a: &[f32], b: &[f32], acc: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked just above), the one requirement of
            // calling a function compiled for them.
            unsafe { fma_products(d, a, b, acc) };
            return true;
        }
    }
    let _ = (d, a, b, acc);
    false
}

/// The kernel's steps compiled for AVX2 + FMA: 4 rows × 16 columns of accumulators are 8 of
/// the 16 vector registers, and each step is one `vfmadd`. A 16 × 16 × 16 tile takes the native
/// tier's kernel ([`crate::jit::native::mul_add_16`]); other shapes of whole 4 × 16 blocks a
/// loop of their own, A's rows sliced once so the steps carry no bounds checks; others the
/// kernel's general loop nest with the same steps. Each element steps
/// through k in increasing order either way.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_products(d: Dims, a: &[f32], b: &[f32], acc: &mut [f32]) {
    const R: usize = 4;
    const W: usize = 16;
    let Dims { m, n, k } = d;
    if let (16, 16, 16, Ok(a), Ok(b), Ok(acc), Some(cpu)) = (
        m,
        n,
        k,
        <&[f32; 256]>::try_from(a),
        <&[f32; 256]>::try_from(b),
        <&mut [f32; 256]>::try_from(&mut *acc),
        crate::jit::native::Avx2::detect(),
    ) {
        // The native tier's 16³ kernel (the same steps, in assembly).
        crate::jit::native::mul_add_16(cpu, a, b, acc);
        return;
    }
    if !(m.is_multiple_of(R) && n.is_multiple_of(W)) || a.len() != m * k || b.len() != k * n {
        blocked_by::<R, W, f32, f32>(d, a, b, acc, |s, x, y| x.mul_add(y, s));
        return;
    }
    for (i, rows) in a.chunks_exact(R * k.max(1)).enumerate() {
        let (r0, rest) = rows.split_at(k);
        let (r1, rest) = rest.split_at(k);
        let (r2, r3) = rest.split_at(k);
        for j in (0..n).step_by(W) {
            let mut s = [[0f32; W]; R];
            for (r, s) in s.iter_mut().enumerate() {
                let at = (i * R + r) * n + j;
                if let Some(from) = acc.get(at..at + W) {
                    s.copy_from_slice(from);
                }
            }
            for (kk, ((&x0, &x1), (&x2, &x3))) in
                r0.iter().zip(r1).zip(r2.iter().zip(r3)).enumerate()
            {
                let Some(y) = b.get(kk * n + j..kk * n + j + W) else {
                    continue;
                };
                for (r, x) in [x0, x1, x2, x3].into_iter().enumerate() {
                    for (s, &y) in s[r].iter_mut().zip(y) {
                        *s = x.mul_add(y, *s);
                    }
                }
            }
            for (r, s) in s.iter().enumerate() {
                let at = (i * R + r) * n + j;
                if let Some(to) = acc.get_mut(at..at + W) {
                    to.copy_from_slice(s);
                }
            }
        }
    }
}

/// [`super::coopmat_kernel::widen_words`] with F16C's `vcvtph2ps` (eight halves an
/// instruction); `false` (nothing done) where the CPU lacks AVX or F16C. The conversion is
/// exact for every finite value and infinity; a NaN stays a NaN (a signalling one may come out
/// quiet), which is all a MulAdd reads of it.
pub(super) fn widen_words_f16c(words: &[u32], out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("f16c")
        {
            // SAFETY: the CPU has AVX and F16C (checked just above), the one requirement of
            // calling a function compiled for them.
            unsafe { widen_f16c(words, out) };
            return true;
        }
    }
    let _ = (words, out);
    false
}

/// Eight halves (four words) at a time, the rest by the portable loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
fn widen_f16c(words: &[u32], out: &mut [f32]) {
    use std::arch::x86_64::{_mm256_cvtph_ps, _mm_set_epi32};
    let (mut outs, mut ins) = (out.chunks_exact_mut(8), words.chunks_exact(4));
    for (o, w) in (&mut outs).zip(&mut ins) {
        let [w0, w1, w2, w3] = [0, 1, 2, 3].map(|i| w.get(i).map_or(0, |&x| x as i32));
        let v = _mm256_cvtph_ps(_mm_set_epi32(w3, w2, w1, w0));
        // SAFETY: `__m256` and `[f32; 8]` are both 32 bytes of plain data, every bit pattern
        // valid in either.
        let v: [f32; 8] = unsafe { std::mem::transmute(v) };
        o.copy_from_slice(&v);
    }
    super::coopmat_kernel::widen_words_portable(ins.remainder(), outs.into_remainder());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both widenings of every binary16 value (F16C's where the CPU has it, the portable
    /// loop) against `half`'s: the same bits for every non-NaN value, a NaN for every NaN.
    #[test]
    fn widening_gives_halfs_values() {
        let words: Vec<u32> = (0..=u16::MAX)
            .step_by(2)
            .map(|h| u32::from(h) | u32::from(h + 1) << 16)
            .collect();
        let mut fast = vec![0f32; 1 << 16];
        let mut portable = vec![0f32; 1 << 16];
        if !widen_words_f16c(&words, &mut fast) {
            println!("this CPU has no F16C: the F16C path was not run");
            super::super::coopmat_kernel::widen_words(&words, &mut fast);
        }
        super::super::coopmat_kernel::widen_words_portable(&words, &mut portable);
        for (h, (&f, &p)) in fast.iter().zip(&portable).enumerate() {
            let want = half::f16::from_bits(h as u16).to_f32();
            for got in [f, p] {
                let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
                assert!(same, "{h:#06x}: {got:e} vs {want:e}");
            }
        }
    }

    /// The fused steps against the portable loop (`s + x * y`), on f16 values heavy in edge
    /// cases: signed zeros, subnormals, the largest finite values, infinities, NaNs.
    #[test]
    fn fused_steps_give_the_portable_loops_bits() {
        let specials: [u16; 10] = [
            0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x3c00,
        ];
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (m, n, k) in [(16, 16, 16), (5, 19, 7), (8, 40, 33)] {
            let d = Dims { m, n, k };
            let mut half = || {
                let r = next();
                let bits = if r % 4 == 0 {
                    specials[(r >> 8) as usize % specials.len()]
                } else {
                    (r >> 16) as u16
                };
                half::f16::from_bits(bits).to_f32()
            };
            let a: Vec<f32> = (0..m * k).map(|_| half()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| half()).collect();
            let c: Vec<f32> = (0..m * n).map(|_| f32::from_bits(next() as u32)).collect();
            let mut portable = c.clone();
            blocked_by::<4, 8, f32, f32>(d, &a, &b, &mut portable, |s, x, y| s + x * y);
            let mut fused = c.clone();
            if !exact_products_f32(d, &a, &b, &mut fused) {
                // No AVX2 + FMA here: nothing to compare (printed, not counted as a pass).
                println!("this CPU has no AVX2 + FMA: the fused path was not run");
                return;
            }
            for (i, (p, f)) in portable.iter().zip(&fused).enumerate() {
                let same = p.to_bits() == f.to_bits() || (p.is_nan() && f.is_nan());
                assert!(same, "{m}x{n}x{k} element {i}: {p:e} vs {f:e}");
            }
        }
    }
}
