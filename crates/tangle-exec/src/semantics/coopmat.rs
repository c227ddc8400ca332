//! SPV_KHR_cooperative_matrix: the value of one element of OpCooperativeMatrixMulAddKHR
//! (`shared/spec/SPV_KHR_cooperative_matrix.txt`, 3.42.13 "Arithmetic Instructions").
//!
//! Element (i, j) of the result is row i of A times column j of B, plus C(i, j). How elements
//! are distributed over invocations (the layout policy) is the executor's business; this file
//! only gives each element its value, so a blocked GEMM kernel can be checked against it.

use super::dot::{dot_overflows, exact_dot, range, saturate, widen, wrapped_dot, Factors};
use super::float::{from_f64, to_f64};
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

/// One floating-point result element: row i of A (`a_bits` floats), column j of B, C(i, j),
/// rounded to `result_bits`.
///
/// "The internal precision of floating-point operations is defined by the client API": tangle
/// sums the exact f64 products of f16/f32 inputs in index order in f64 and rounds once at the
/// end; f64 inputs accumulate with one fused multiply-add per step, starting from C.
pub fn mul_add_float_element(
    (a_bits, a_row): (u32, &[u64]),
    (b_bits, b_col): (u32, &[u64]),
    (c_bits, c): (u32, u64),
    result_bits: u32,
) -> u64 {
    let c = to_f64(c_bits, c);
    let sum = a_row.iter().zip(b_col).fold(c, |acc, (&x, &y)| {
        to_f64(a_bits, x).mul_add(to_f64(b_bits, y), acc)
    });
    from_f64(result_bits, sum)
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
    fn float_element() {
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

    proptest! {
        #![proptest_config(proptest_config())]
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
