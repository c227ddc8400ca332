//! A cooperative matrix in *dense form*: one subgroup's value as the raw bits of its elements in
//! row-major order (`row * cols + col`), one `u64` each, and `OpCooperativeMatrixMulAddKHR`
//! on that form. The wide path holds matrices this way between the ops that load, multiply and
//! store them (`wide/dense.rs`), so a tiled GEMM's steady state moves no element through the
//! per-lane registers; the reference path's whole-subgroup f16 MulAdd gathers its operands
//! into this form too ([`gather`], [`scatter`]). Loads and stores of the form are
//! [`super::coopmat::load_dense`] and [`super::coopmat::store_dense`].
//!
//! Exactness: the form is the composite view read through the run's layout map, so
//! [`gather`] then [`scatter`] gives the registers back, except at positions that hold no
//! element, which [`scatter`] sets to 0 as a load or MulAdd does.

use super::coopmat::Map;
use crate::semantics::coopmat_kernel as kernel;
use crate::semantics::coopmat_types::{Component, MulAddTypes};
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};

/// The ML case: f16 × f16 + f32 → f32, no signedness, no saturation.
pub const F16_F32: MulAddTypes = MulAddTypes {
    a: Component::Float(16),
    b: Component::Float(16),
    c: Component::Float(32),
    result: Component::Float(32),
    saturating: false,
};

/// Reused buffers of [`mul_add`].
#[derive(Debug, Default)]
pub struct Scratch {
    /// The f16 path's operand halves (bits), widened operands and accumulator.
    halves: Vec<u16>,
    fa: Vec<f32>,
    fb: Vec<f32>,
    facc: Vec<f32>,
    /// The other paths' result.
    out: Vec<u64>,
}

/// Reads a value's dense form out of its registers `regs` (`length` slots of the map's
/// subgroup width, from the value's first slot) into `tile`.
pub fn gather(map: &Map, regs: &[u64], tile: &mut Vec<u64>) {
    tile.clear();
    tile.extend(
        map.regs()
            .iter()
            .map(|&r| regs.get(r as usize).copied().unwrap_or(0)),
    );
}

/// Writes the dense form `tile` into a value's registers `regs` (as [`gather`] reads them), with
/// 0 at the positions that hold no element, as a load or a MulAdd leaves them.
pub fn scatter(map: &Map, tile: &[u64], regs: &mut [u64]) {
    for (&r, &v) in map.regs().iter().zip(tile) {
        if let Some(x) = regs.get_mut(r as usize) {
            *x = v;
        }
    }
    for &r in map.unowned_regs() {
        if let Some(x) = regs.get_mut(r as usize) {
            *x = 0;
        }
    }
}

/// `out` = `a` (m×k) × `b` (k×n) + `c` (m×n) on dense forms, bit for bit what
/// [`super::coopmat::mul_add`] gives. Returns `false` (and `out` unspecified) when a
/// saturating element is undefined: the caller then runs the element path, which reports it.
pub fn mul_add(
    types: &MulAddTypes,
    (m, n, k): (usize, usize, usize),
    [a, b, c]: [&[u64]; 3],
    out: &mut [u64],
    scratch: &mut Scratch,
) -> bool {
    if *types == F16_F32 {
        f16_f32((m, n, k), [a, b, c], out, scratch);
        return true;
    }
    scratch.out.clear();
    scratch.out.resize(out.len(), 0);
    let undefined = super::coopmat::mul_add(types, m, n, k, a, b, c, &mut scratch.out);
    out.copy_from_slice(&scratch.out);
    !undefined
}

/// [`F16_F32`]: the halves widened once per operand (in bulk, with the CPU's conversion
/// instructions where it has them), the accumulator taken as f32, then the kernel's
/// [`kernel::f16_products_into_f32`] — the same arithmetic as the general kernel, so the same
/// bits — and every NaN result made the canonical one, as `float_bits` makes it.
fn f16_f32(
    (m, n, k): (usize, usize, usize),
    [a, b, c]: [&[u64]; 3],
    out: &mut [u64],
    s: &mut Scratch,
) {
    // Buffers sized once, then plain passes the compiler vectorises; the halves are widened
    // in bulk (with the CPU's conversion instructions where it has them).
    for (buf, len) in [
        (&mut s.fa, a.len()),
        (&mut s.fb, b.len()),
        (&mut s.facc, c.len()),
    ] {
        buf.resize(len, 0.0);
    }
    s.halves.resize(a.len().max(b.len()), 0);
    let widen = |v: &[u64], halves: &mut [u16], out: &mut [f32]| {
        // (Equal lengths, as the conversion requires: the buffers were sized for `v`.)
        let len = v.len().min(halves.len()).min(out.len());
        let (Some(halves), Some(out)) = (halves.get_mut(..len), out.get_mut(..len)) else {
            return;
        };
        for (h, &x) in halves.iter_mut().zip(v) {
            *h = x as u16;
        }
        halves
            .reinterpret_cast::<half::f16>()
            .convert_to_f32_slice(out);
    };
    widen(a, &mut s.halves, &mut s.fa);
    widen(b, &mut s.halves, &mut s.fb);
    for (x, &v) in s.facc.iter_mut().zip(c) {
        *x = f32::from_bits(v as u32);
    }
    kernel::f16_products_into_f32(m, n, k, &s.fa, &s.fb, &mut s.facc);
    for (o, &v) in out.iter_mut().zip(&s.facc) {
        // The canonical NaN, as `float_bits` gives every NaN result.
        let bits = v.to_bits();
        *o = u64::from(if v.is_nan() { 0x7fc0_0000 } else { bits });
    }
}
