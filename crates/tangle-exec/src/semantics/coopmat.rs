//! SPV_KHR_cooperative_matrix: the value of one element of OpCooperativeMatrixMulAddKHR
//! (`shared/spec/SPV_KHR_cooperative_matrix.txt`, 3.42.13 "Arithmetic Instructions").
//!
//! Element (i, j) of the result is row i of A times column j of B, plus C(i, j). How elements
//! are distributed over invocations (the layout policy) is the executor's business; this file
//! only gives each element its value ([`mul_add_element`]), the reference the blocked kernel
//! ([`super::coopmat_kernel`]) is checked against bit for bit. Floats accumulate at the Result's
//! precision, one rounding per step in index order ([`float_element`]).

use super::coopmat_kernel::widen_f16;
use super::coopmat_types::{Component, MulAddTypes};
use super::dot::{dot_overflows, exact_dot, range, saturate, widen, wrapped_dot, Factors};
use super::float::{bf16_bits_from_f64, bf16_to_f64, f16_bits_from_f64, from_f64, to_f64};
use super::mask;

/// The integer component types of an OpCooperativeMatrixMulAddKHR and its SaturatingAccumulation
/// operand.
///
/// # Spec
/// "If the Component Type of any matrix operand is an integer type, then its components are
/// treated as signed if the Matrix{A,B,C,Result}SignedComponentsKHR Cooperative Matrix Operand is
/// present and are treated as unsigned otherwise."
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntMulAdd {
    /// Component width of A.
    pub a_bits: u32,
    /// MatrixASignedComponentsKHR.
    pub a_signed: bool,
    /// Component width of B.
    pub b_bits: u32,
    /// MatrixBSignedComponentsKHR.
    pub b_signed: bool,
    /// Component width of C.
    pub c_bits: u32,
    /// MatrixCSignedComponentsKHR.
    pub c_signed: bool,
    /// Component width of Result Type.
    pub result_bits: u32,
    /// MatrixResultSignedComponentsKHR: the signedness of the saturation.
    pub result_signed: bool,
    /// SaturatingAccumulationKHR.
    pub saturating: bool,
}

impl IntMulAdd {
    /// A and B as dot-product operands.
    fn factors<'a>(&self, a_row: &'a [u64], b_col: &'a [u64]) -> (Factors<'a>, Factors<'a>) {
        (
            Factors {
                bits: self.a_bits,
                signed: self.a_signed,
                values: a_row,
            },
            Factors {
                bits: self.b_bits,
                signed: self.b_signed,
                values: b_col,
            },
        )
    }

    /// One result element from row i of A, column j of B and C(i, j).
    ///
    /// # Spec
    /// "elements of the coresponding matrix operands are sign-extended to the precision of
    /// Result Type, otherwise they are zero-extended. Integer operations used in the
    /// multiplication of A by B are performed at the precision of the Result Type ... Integer
    /// additions of the elements of that intermediate result with those of C are performed at
    /// the precision of Result Type, are exact, and are saturating if the SaturatingAccumulation
    /// Cooperative Matrix Operand is present, with the signedness of the saturation being that
    /// of the components of Result Type. If the SaturatingAccumulation Cooperative Matrix Operand
    /// is not present then the resulting value will equal the low-order N bits of the correct
    /// result R".
    ///
    /// When the saturating form is undefined (see [`IntMulAdd::element_is_undefined`]) the
    /// fallback is the exact sum plus C, saturated.
    pub fn element(&self, a_row: &[u64], b_col: &[u64], c: u64) -> u64 {
        let (a, b) = self.factors(a_row, b_col);
        let c = widen(self.c_signed, self.c_bits, c);
        if self.saturating {
            saturate(self.result_signed, self.result_bits, exact_dot(a, b), c)
        } else {
            (wrapped_dot(a, b).wrapping_add(c as u128) as u64) & mask(self.result_bits)
        }
    }

    /// Whether the element is undefined: with SaturatingAccumulation, a product or partial sum of
    /// A × B (in index order) leaves the Result Type's range.
    ///
    /// # Spec
    /// "If the SaturatingAccumulation Cooperative Matrix Operand is present and overflow or
    /// underflow occurs as part of calculating that intermediate result, the result of the
    /// instruction is undefined."
    pub fn element_is_undefined(&self, a_row: &[u64], b_col: &[u64]) -> bool {
        let (a, b) = self.factors(a_row, b_col);
        self.saturating && dot_overflows(a, b, range(self.result_signed, self.result_bits))
    }
}

/// The exact value of a float component (f16, bf16, f32 or f64 bits) as f64; `None` for an
/// integer component.
pub fn float_value(component: Component, v: u64) -> Option<f64> {
    match component {
        Component::BFloat16 => Some(bf16_to_f64(v)),
        Component::Float(bits) => Some(to_f64(bits, v)),
        Component::Int { .. } => None,
    }
}

/// `x` rounded once (to nearest, ties to even) to a float component, as bits; a NaN becomes the
/// format's canonical quiet NaN (see [`float_element`]). `None` for an integer component.
pub fn float_bits(component: Component, x: f64) -> Option<u64> {
    let canonical = x.is_nan();
    Some(match component {
        Component::BFloat16 if canonical => 0x7fc0,
        Component::BFloat16 => u64::from(bf16_bits_from_f64(x)),
        Component::Float(16) if canonical => 0x7e00,
        Component::Float(64) if canonical => 0x7ff8_0000_0000_0000,
        Component::Float(_) if canonical => 0x7fc0_0000,
        Component::Float(bits) => from_f64(bits, x),
        Component::Int { .. } => return None,
    })
}

/// `x` rounded to the Result component and read back: the accumulator after one step. Every
/// conversion here works on the bits (the f16 accumulator of ggml's `_f16acc` GEMMs rounds
/// every step through it); a NaN stays a NaN, made canonical when the Result's bits are taken
/// ([`float_bits`]).
#[inline]
fn round_to(result: Component, x: f64) -> f64 {
    match result {
        Component::Float(64) => x,
        Component::Float(16) => f64::from(widen_f16(f16_bits_from_f64(x))),
        Component::BFloat16 => bf16_to_f64(u64::from(bf16_bits_from_f64(x))),
        Component::Float(_) => f64::from(x as f32),
        Component::Int { .. } => x,
    }
}

/// `p + acc` rounded to odd in f64: the exact sum when f64 holds it, else whichever of its two
/// f64 neighbours has an odd significand. Rounding that once more to a format of at most 51
/// significand bits gives the correctly rounded sum (Boldo and Melquiond, "When double rounding
/// is odd", 2005), so the two roundings act as one.
#[inline]
pub fn add_round_to_odd(p: f64, acc: f64) -> f64 {
    let s = p + acc;
    // TwoSum (Knuth): the exact error of the rounded sum, for finite operands.
    let t = s - p;
    let err = (p - (s - t)) + (acc - t);
    if !s.is_finite() || err == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // s is even and inexact (never zero: the exact sum is not 0): move one unit toward the
    // exact sum, the other neighbour.
    let bits = if (err > 0.0) == (s > 0.0) {
        s.to_bits() + 1
    } else {
        s.to_bits() - 1
    };
    f64::from_bits(bits)
}

/// One accumulation step `acc ← x·y + acc`, rounded once to the Result component (a fused
/// multiply-add at the Result's precision); `x`, `y` are the exact input values and `acc` the
/// exact value of a Result-typed accumulator. `wide_inputs` says that an input is f64.
///
/// * Result f64: `x·y + acc` with one rounding (the product of narrower inputs is exact in
///   f64; for f64 inputs, [`f64::mul_add`]).
/// * Result f32, f16 or bf16, inputs f16, bf16 or f32: the product (at most 48 significand bits,
///   exponent within f64's normal range) is exact in f64, the sum is rounded to odd
///   ([`add_round_to_odd`]) and then to the Result: one correct rounding overall.
/// * Result narrower than f64 with an f64 input — a combination no profile lists: one f64
///   fused multiply-add, then rounded to the Result. This is the one double rounding: it
///   differs from a single rounding (by one unit in the last place) exactly when the f64 result
///   lies halfway between two Result values while the exact value does not.
#[inline]
pub fn fused_step(result: Component, (x, y, acc): (f64, f64, f64), wide_inputs: bool) -> f64 {
    match (result, wide_inputs) {
        (Component::Float(64), false) => x * y + acc,
        (Component::Float(64), true) => x.mul_add(y, acc),
        (_, false) => round_to(result, add_round_to_odd(x * y, acc)),
        (_, true) => round_to(result, x.mul_add(y, acc)),
    }
}

/// One floating-point result element from row i of A, column j of B and C(i, j), as the
/// Result's bits; `None` unless every component is a float (f16, bf16, f32, f64).
///
/// # Spec
/// "The internal precision of floating-point operations is defined by the client API." Vulkan
/// leaves it to the device; tangle defines it as accumulation at the Result's precision: the
/// accumulator starts as C rounded to the Result type, then for k = 0, 1, … in index order,
/// `acc ← round(A(i,k)·B(k,j) + acc)`, one rounding per step ([`fused_step`]). For f16 (or
/// bf16) inputs with an f32 Result, the ML case, the f16 product is exact in f32, so a fused
/// step and a separate multiply then add agree. A NaN result is the Result format's canonical
/// quiet NaN: Rust and the hardware leave NaN payloads unspecified, and Vulkan does not
/// preserve them through arithmetic, so fixing one keeps every evaluation order bit-identical.
pub fn float_element(
    (a, a_row): (Component, &[u64]),
    (b, b_col): (Component, &[u64]),
    (c, c_value): (Component, u64),
    result: Component,
) -> Option<u64> {
    let wide = a == Component::Float(64) || b == Component::Float(64);
    let mut acc = round_to(result, float_value(c, c_value)?);
    for (&x, &y) in a_row.iter().zip(b_col) {
        let (x, y) = (float_value(a, x)?, float_value(b, y)?);
        acc = fused_step(result, (x, y, acc), wide);
    }
    float_bits(result, acc)
}

/// [`float_element`] for IEEE components given by width (16, 32, 64).
pub fn mul_add_float_element(
    (a_bits, a_row): (u32, &[u64]),
    (b_bits, b_col): (u32, &[u64]),
    (c_bits, c): (u32, u64),
    result_bits: u32,
) -> u64 {
    float_element(
        (Component::Float(a_bits), a_row),
        (Component::Float(b_bits), b_col),
        (Component::Float(c_bits), c),
        Component::Float(result_bits),
    )
    .unwrap_or(0)
}

/// One result element of any MulAdd: `(value, undefined)` from row i of A, column j of B and
/// C(i, j), `undefined` being [`IntMulAdd::element_is_undefined`] (always false for floats).
/// `None` when the operands mix float and integer components (no client API defines that).
pub fn mul_add_element(
    op: &MulAddTypes,
    a_row: &[u64],
    b_col: &[u64],
    c: u64,
) -> Option<(u64, bool)> {
    match (op.a, op.b, op.c, op.result) {
        (
            Component::Int {
                bits: a_bits,
                signed: a_signed,
            },
            Component::Int {
                bits: b_bits,
                signed: b_signed,
            },
            Component::Int {
                bits: c_bits,
                signed: c_signed,
            },
            Component::Int {
                bits: result_bits,
                signed: result_signed,
            },
        ) => {
            let m = IntMulAdd {
                a_bits,
                a_signed,
                b_bits,
                b_signed,
                c_bits,
                c_signed,
                result_bits,
                result_signed,
                saturating: op.saturating,
            };
            Some((
                m.element(a_row, b_col, c),
                m.element_is_undefined(a_row, b_col),
            ))
        }
        _ => float_element((op.a, a_row), (op.b, b_col), (op.c, c), op.result).map(|v| (v, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{proptest_config, truncate};
    use super::*;
    use proptest::prelude::*;

    /// Naive reference: explicit two's-complement reading, i128 (or mod 2^128) arithmetic.
    fn reference(m: &IntMulAdd, a: &[u64], b: &[u64], c: u64) -> (u64, bool) {
        let read = |signed: bool, bits: u32, v: u64| -> i128 {
            let v = i128::from(v);
            if signed && v >= 1i128 << (bits - 1) {
                v - (1i128 << bits)
            } else {
                v
            }
        };
        let n = m.result_bits;
        let (lo, hi) = if m.result_signed {
            (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
        } else {
            (0, (1i128 << n) - 1)
        };
        let (mut wrapped, mut exact, mut undefined) = (0u128, 0i128, false);
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (read(m.a_signed, m.a_bits, x), read(m.b_signed, m.b_bits, y));
            wrapped = wrapped.wrapping_add((x as u128).wrapping_mul(y as u128));
            match x.checked_mul(y) {
                Some(p) if (lo..=hi).contains(&p) => {
                    exact += p;
                    undefined |= !(lo..=hi).contains(&exact);
                }
                _ => undefined = true,
            }
        }
        let cv = read(m.c_signed, m.c_bits, c);
        if m.saturating {
            let t = (exact + cv).clamp(lo, hi);
            (t.rem_euclid(1i128 << n) as u64, undefined)
        } else {
            let w = wrapped.wrapping_add(cv as u128) % (1u128 << n);
            (w as u64, false)
        }
    }

    fn check(m: &IntMulAdd, a: &[u64], b: &[u64], c: u64) {
        let (want, undefined) = reference(m, a, b, c);
        assert_eq!(
            m.element_is_undefined(a, b),
            undefined,
            "{m:?} {a:x?} {b:x?}"
        );
        let got = m.element(a, b, c);
        if !undefined {
            assert_eq!(got, want, "{m:?} {a:x?} {b:x?} {c:#x}");
        }
        assert_eq!(got & !mask(m.result_bits), 0);
    }

    #[test]
    fn int8_gemm_element() {
        let s8 = |v: i64| truncate(8, v as u64);
        let m = IntMulAdd {
            a_bits: 8,
            a_signed: true,
            b_bits: 8,
            b_signed: true,
            c_bits: 32,
            c_signed: true,
            result_bits: 32,
            result_signed: true,
            saturating: false,
        };
        let a: Vec<u64> = [-128, 127, -1, 5].iter().map(|&v| s8(v)).collect();
        let b: Vec<u64> = [-128, -128, 7, 3].iter().map(|&v| s8(v)).collect();
        // 16384 - 16256 - 7 + 15 = 136, plus C = -36 → 100
        assert_eq!(m.element(&a, &b, truncate(32, (-36i64) as u64)), 100);
        // Unsigned A reads 0x80 as 128.
        let u = IntMulAdd {
            a_signed: false,
            ..m
        };
        assert_eq!(
            u.element(&a, &b, 0),
            truncate(32, (128 * -128 + 127 * -128 + 255 * 7 + 5 * 3) as u64)
        );
        // Saturating with an unsigned 8-bit result.
        let sat = IntMulAdd {
            a_signed: false,
            b_signed: false,
            c_bits: 8,
            c_signed: false,
            result_bits: 8,
            result_signed: false,
            saturating: true,
            ..m
        };
        assert_eq!(sat.element(&[10, 10], &[10, 10], 100), 0xff);
        assert!(!sat.element_is_undefined(&[10, 10], &[10, 10]));
        assert!(sat.element_is_undefined(&[20, 0], &[20, 0]));
    }

    #[test]
    fn float_element_examples() {
        let f = |bits, x: f64| from_f64(bits, x);
        let a: Vec<u64> = [1.5, -2.0, 0.25].iter().map(|&x| f(16, x)).collect();
        let b: Vec<u64> = [4.0, 0.5, 8.0].iter().map(|&x| f(16, x)).collect();
        // 6 - 1 + 2 + 0.5 = 7.5
        let r = mul_add_float_element((16, &a), (16, &b), (32, f(32, 0.5)), 32);
        assert_eq!(to_f64(32, r), 7.5);
        let r = mul_add_float_element((16, &a), (16, &b), (16, f(16, 0.5)), 16);
        assert_eq!(to_f64(16, r), 7.5);
        // f64 steps are fused: (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104 survives.
        let e = f64::EPSILON;
        let r = mul_add_float_element(
            (64, &[f(64, 1.0 + e)]),
            (64, &[f(64, 1.0 - e)]),
            (64, f(64, -1.0)),
            64,
        );
        assert_eq!(to_f64(64, r), -(e * e));
        // f32 products are exact in f64: the same cancellation at f32.
        let e = f64::from(f32::EPSILON);
        let r = mul_add_float_element(
            (32, &[f(32, 1.0 + e)]),
            (32, &[f(32, 1.0 - e)]),
            (32, f(32, -1.0)),
            32,
        );
        assert_eq!(to_f64(32, r), -(e * e));
    }

    #[test]
    fn floats_accumulate_at_the_result_precision() {
        let h = |x: f64| from_f64(16, x);
        // Each step rounds to f16: 1 + 2^-11 ties back to 1 twice; summing in f64 first and
        // rounding once would give 1 + 2^-10.
        let half_ulp = h(2f64.powi(-11));
        let r = mul_add_float_element((16, &[half_ulp; 2]), (16, &[h(1.0); 2]), (16, h(1.0)), 16);
        assert_eq!(to_f64(16, r), 1.0);
        // The same at f32 keeps both halves.
        let r = mul_add_float_element((16, &[half_ulp; 2]), (16, &[h(1.0); 2]), (16, h(1.0)), 32);
        assert_eq!(to_f64(32, r), 1.0 + 2f64.powi(-10));
        // One rounding per fused step, never two: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is halfway
        // between two f32 values, and C = 2^-149 puts the exact sum just above it. A plain f64
        // sum would round to the midpoint and then tie down to even.
        let f = |x: f64| from_f64(32, x);
        let x = f(1.0 + 2f64.powi(-12));
        let r = mul_add_float_element((32, &[x]), (32, &[x]), (32, f(2f64.powi(-149))), 32);
        assert_eq!(to_f64(32, r), 1.0 + 2f64.powi(-11) + 2f64.powi(-23));
        let r = mul_add_float_element((32, &[x]), (32, &[x]), (32, 0), 32);
        assert_eq!(to_f64(32, r), 1.0 + 2f64.powi(-11));
        // NaN results are canonical quiet NaNs.
        let r = mul_add_float_element((32, &[f(f64::INFINITY)]), (32, &[0]), (32, 0), 32);
        assert_eq!(r, 0x7fc0_0000);
        let r = mul_add_float_element((16, &[0xfe01]), (16, &[h(1.0)]), (16, 0), 16);
        assert_eq!(r, 0x7e00);
        // bfloat16 components.
        let bf = |x: f64| u64::from(bf16_bits_from_f64(x));
        let r = float_element(
            (Component::BFloat16, &[bf(1.5), bf(-2.0)]),
            (Component::BFloat16, &[bf(4.0), bf(0.5)]),
            (Component::Float(32), f(0.25)),
            Component::Float(32),
        );
        assert_eq!(r.map(|r| to_f64(32, r)), Some(5.25));
        let r = float_element(
            (Component::BFloat16, &[bf(1.0); 2]),
            (Component::BFloat16, &[bf(2f64.powi(-8)); 2]),
            (Component::BFloat16, bf(1.0)),
            Component::BFloat16,
        );
        assert_eq!(r.map(bf16_to_f64), Some(1.0), "ties to even each step");
        let int = Component::Int {
            bits: 8,
            signed: true,
        };
        assert_eq!(float_element((int, &[1]), (int, &[1]), (int, 0), int), None);
    }

    /// Every finite f16 value times 2^48 (an exact integer), ascending.
    fn f16_scaled() -> Vec<(i128, u64)> {
        let mut v: Vec<(i128, u64)> = (0u64..0x7c00)
            .flat_map(|b| [b, b | 0x8000])
            .map(|b| ((to_f64(16, b) * 2f64.powi(48)) as i128, b))
            .collect();
        v.sort();
        v.dedup_by_key(|p| p.0);
        v
    }

    /// An exact value N·2^-48 rounded to f16 (nearest, ties to even), by search: an
    /// independent reference for the f16 accumulator.
    /// `negative_zero` gives the sign of an exact zero (IEEE's rules for x·y + acc).
    fn round_scaled_f16(table: &[(i128, u64)], n: i128, negative_zero: bool) -> u64 {
        let max = table[table.len() - 1].0;
        let top = 65520i128 << 48;
        if n >= top {
            return 0x7c00;
        }
        if n <= -top {
            return 0xfc00;
        }
        let i = table.partition_point(|p| p.0 < n);
        let hi = table.get(i).copied().unwrap_or((max, 0x7bff));
        if n == 0 {
            return if negative_zero { 0x8000 } else { 0 };
        }
        if hi.0 == n {
            return hi.1;
        }
        let lo = table[i - 1];
        let (dl, dh) = (n - lo.0, hi.0 - n);
        let pick = if dl < dh || (dl == dh && lo.1 & 1 == 0) {
            lo
        } else {
            hi
        };
        if pick.0 == 0 {
            // A result rounding to zero keeps the sign of the exact value.
            return if n < 0 { 0x8000 } else { 0 };
        }
        pick.1
    }

    /// The MulAdd's float element as it was computed before the 16-bit roundings worked on the
    /// bits ([`super::super::float::powi_model`], f16 read back through `half`): the model the
    /// kernel and [`float_element`] must match bit for bit.
    fn old_float_element(op: &MulAddTypes, a_row: &[u64], b_col: &[u64], c: u64) -> u64 {
        use super::super::float::powi_model;
        let old_bits = |t: Component, x: f64| -> u64 {
            match t {
                Component::Float(16) if x.is_nan() => 0x7e00,
                Component::BFloat16 if x.is_nan() => 0x7fc0,
                Component::Float(16) => u64::from(powi_model(x, 10, -14)),
                Component::BFloat16 => u64::from(powi_model(x, 7, -126)),
                _ => float_bits(t, x).unwrap_or(0),
            }
        };
        let old_round = |t: Component, x: f64| -> f64 {
            match t {
                Component::Float(64) => x,
                Component::Float(32) => f64::from(x as f32),
                Component::Float(16) => half::f16::from_bits(old_bits(t, x) as u16).to_f64(),
                _ => bf16_to_f64(old_bits(t, x)),
            }
        };
        let value = |t: Component, v: u64| float_value(t, v).unwrap_or(0.0);
        let wide = op.a == Component::Float(64) || op.b == Component::Float(64);
        let mut acc = old_round(op.result, value(op.c, c));
        for (&x, &y) in a_row.iter().zip(b_col) {
            let (x, y) = (value(op.a, x), value(op.b, y));
            acc = match (op.result, wide) {
                (Component::Float(64), false) => x * y + acc,
                (Component::Float(64), true) => x.mul_add(y, acc),
                (r, false) => old_round(r, add_round_to_odd(x * y, acc)),
                (r, true) => old_round(r, x.mul_add(y, acc)),
            };
        }
        old_bits(op.result, acc)
    }

    /// Bits of a float component: random, or one of the values where rounding has its cases
    /// (zeros, the smallest and largest subnormals, the largest finite value, infinities,
    /// NaNs, one and its neighbours, whose products and sums make ties).
    fn edgy_bits(t: Component, raw: u64) -> u64 {
        let pick = (raw >> 56) as usize;
        let special: &[u64] = match t {
            Component::Float(16) => &[
                0, 0x8000, 1, 0x3ff, 0x400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0x3c01,
                0x3bff, 0x1400, 0x0c00,
            ],
            Component::BFloat16 => &[
                0, 0x8000, 1, 0x7f, 0x80, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x3f80, 0x3f81,
                0x3f7f, 0x3b80,
            ],
            Component::Float(32) => &[
                0,
                0x8000_0000,
                1,
                0x7f_ffff,
                0x80_0000,
                0x7f7f_ffff,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x3f80_0000,
                0x3f80_0001,
                0x3f7f_ffff,
                0x3300_0000,
                0x477f_e000,
            ],
            _ => &[
                0,
                1 << 63,
                1,
                0x7ff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x3ff0_0000_0000_0000,
                0x3ff0_0000_0000_0001,
                0x3ca0_0000_0000_0000,
            ],
        };
        match special.get(pick % (special.len() * 2)) {
            Some(&v) => v,
            None => match t {
                Component::Float(16) | Component::BFloat16 => raw & 0xffff,
                Component::Float(32) => raw & 0xffff_ffff,
                _ => raw,
            },
        }
    }

    /// Every float combination (f16, bf16, f32, f64 for A, B, C and the accumulator) on
    /// random and special inputs: the blocked kernel and the element reference give the old
    /// model's bits.
    #[test]
    fn bit_level_roundings_keep_the_old_bits() {
        let types = [
            Component::Float(16),
            Component::BFloat16,
            Component::Float(32),
            Component::Float(64),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (m, n, k) = (3, 5, 6);
        for round in 0..16 {
            for &a in &types {
                for &b in &types {
                    for &c in &types {
                        for &result in &types {
                            let op = MulAddTypes {
                                a,
                                b,
                                c,
                                result,
                                saturating: false,
                            };
                            // Half the rounds small magnitudes, where sums stay finite and
                            // f16's ties and subnormals are common.
                            let small = |t: Component, v: u64| match t {
                                Component::Float(16) | Component::BFloat16 if round % 2 == 0 => {
                                    v & 0xbfff
                                }
                                _ => v,
                            };
                            let mut bits = |t: Component, len: usize| -> Vec<u64> {
                                (0..len).map(|_| small(t, edgy_bits(t, next()))).collect()
                            };
                            let (av, bv, cv) = (bits(a, m * k), bits(b, k * n), bits(c, m * n));
                            let mut out = vec![0; m * n];
                            let undefined = super::super::coopmat_kernel::mul_add(
                                &op, m, n, k, &av, &bv, &cv, &mut out,
                            );
                            assert_eq!(undefined, Ok(false));
                            for i in 0..m {
                                for j in 0..n {
                                    let row = &av[i * k..(i + 1) * k];
                                    let col: Vec<u64> = (0..k).map(|kk| bv[kk * n + j]).collect();
                                    let want = old_float_element(&op, row, &col, cv[i * n + j]);
                                    let element = float_element(
                                        (a, row),
                                        (b, &col),
                                        (c, cv[i * n + j]),
                                        result,
                                    );
                                    assert_eq!(element, Some(want), "{op:?} {row:x?} {col:x?}");
                                    assert_eq!(out[i * n + j], want, "{op:?} ({i}, {j})");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn f16_accumulation_random(
            pairs in proptest::collection::vec((0u64..0x7c00, 0u64..0x7c00, any::<bool>()), 1..17),
            c in 0u64..0x7c00,
            scale in 0u64..3,
        ) {
            // Finite inputs of moderate size (the exponent field capped) so no step overflows.
            let cap = |v: u64| (v & 0x83ff) | ((v & 0x7c00).min((12 + scale * 2) << 10));
            let a: Vec<u64> = pairs.iter().map(|p| cap(p.0) | if p.2 { 0x8000 } else { 0 }).collect();
            let b: Vec<u64> = pairs.iter().map(|p| cap(p.1)).collect();
            let c = cap(c);
            // f16 → f32: a plain f32 multiply and add is exact-product, one rounding per step.
            let mut acc = f32::from_bits(from_f64(32, to_f64(16, c)) as u32);
            for (&x, &y) in a.iter().zip(&b) {
                acc += (to_f64(16, x) as f32) * (to_f64(16, y) as f32);
            }
            let got = mul_add_float_element((16, &a), (16, &b), (16, c), 32);
            prop_assert_eq!(got, u64::from(acc.to_bits()));
            // f16 → f16: exact integer arithmetic in units of 2^-48, rounded by search.
            let table = f16_scaled();
            let scaled = |v: u64| (to_f64(16, v) * 2f64.powi(24)) as i128;
            let mut acc = c;
            for (&x, &y) in a.iter().zip(&b) {
                let exact = scaled(x) * scaled(y) + (to_f64(16, acc) * 2f64.powi(48)) as i128;
                // The sign of an exact zero: f64 holds these products and sums exactly.
                let zero = to_f64(16, x) * to_f64(16, y) + to_f64(16, acc);
                acc = round_scaled_f16(&table, exact, zero.is_sign_negative());
            }
            let got = mul_add_float_element((16, &a), (16, &b), (16, c), 16);
            prop_assert_eq!(got, acc, "{:x?} {:x?} {:#x}", a, b, c);
        }

        #[test]
        fn int_elements_random(
            pairs in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..17),
            c: u64,
            widths in (0usize..4, 0usize..4, 0usize..4, 0usize..4),
            signs in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
            saturating: bool,
            small: bool,
        ) {
            let w = [8u32, 16, 32, 64];
            let (wa, wb, wc, wr) = widths;
            // Result is at least as wide as every operand.
            let result_bits = w[wr.max(wa).max(wb).max(wc)];
            let m = IntMulAdd {
                a_bits: w[wa],
                a_signed: signs.0,
                b_bits: w[wb],
                b_signed: signs.1,
                c_bits: w[wc],
                c_signed: signs.2,
                result_bits,
                result_signed: signs.3,
                saturating,
            };
            let shrink = |bits: u32, v: u64| if small { truncate(bits, v) >> (bits / 2 + 1) } else { truncate(bits, v) };
            let a: Vec<u64> = pairs.iter().map(|p| shrink(m.a_bits, p.0)).collect();
            let b: Vec<u64> = pairs.iter().map(|p| shrink(m.b_bits, p.1)).collect();
            check(&m, &a, &b, truncate(m.c_bits, c));
        }
    }
}
