//! SPV_KHR_integer_dot_product: OpSDotKHR, OpUDotKHR, OpSUDotKHR and their saturating
//! accumulating forms (`shared/spec/SPV_KHR_integer_dot_product.txt`).
//!
//! Vector operands are slices of canonical component values of `comp_bits` each; the packed
//! form (PackedVectorFormat4x8BitKHR) is turned into such a slice by [`unpack_4x8`], after
//! which the component width is 8. Sums are computed exactly (i128, saturating far outside any
//! N-bit range) and then wrapped or saturated to the result width `result_bits`.

use super::{from_signed, mask, sign_extend, signed_max, signed_min};

/// One side of a dot product: components of `bits` each, read as signed (sign-extended) or
/// unsigned (zero-extended). Shared with [`super::coopmat`], whose A and B are such operands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Factors<'a> {
    /// Component width.
    pub bits: u32,
    /// "sign-extended to the bit width of the result's type" when true, else "zero-extended".
    pub signed: bool,
    /// Canonical component values.
    pub values: &'a [u64],
}

/// The exact value of a component of `bits`, signed or not.
pub(super) fn widen(signed: bool, bits: u32, v: u64) -> i128 {
    if signed {
        i128::from(sign_extend(bits, v))
    } else {
        i128::from(v & mask(bits))
    }
}

/// The widened component pairs, in component order.
fn pairs<'a>(a: Factors<'a>, b: Factors<'a>) -> impl Iterator<Item = (i128, i128)> + 'a {
    a.values
        .iter()
        .zip(b.values)
        .map(move |(&x, &y)| (widen(a.signed, a.bits, x), widen(b.signed, b.bits, y)))
}

/// The exact products, saturated to i128: only two zero-extended 64-bit factors can leave i128,
/// and such a product overflows every result width (an undefined case wherever it matters).
fn products<'a>(a: Factors<'a>, b: Factors<'a>) -> impl Iterator<Item = i128> + 'a {
    pairs(a, b).map(|(x, y)| x.saturating_mul(y))
}

/// The low 128 bits of the exact dot product (products and sums modulo 2^128), hence its exact
/// low N bits for any result width N ≤ 64.
#[inline(always)]
pub(super) fn wrapped_dot(a: Factors, b: Factors) -> u128 {
    if let Some(exact) = small_dot(a, b) {
        // Exact, so its two's complement is the sum modulo 2^128.
        return i128::from(exact) as u128;
    }
    pairs(a, b).fold(0u128, |acc, (x, y)| {
        acc.wrapping_add((x as u128).wrapping_mul(y as u128))
    })
}

/// The exact dot product, saturated to i128 (exact whenever it fits any 64-bit range).
#[inline(always)]
pub(super) fn exact_dot(a: Factors, b: Factors) -> i128 {
    if let Some(exact) = small_dot(a, b) {
        return i128::from(exact);
    }
    products(a, b).fold(0i128, i128::saturating_add)
}

/// The exact dot product computed in i64 where that is exact: components of at most 16 bits
/// (products below 2^32 in magnitude) and at most 16 of them (sums below 2^36). The same value
/// as the i128 sum, several times faster: the packed 4x8 forms of ML kernels are the hot case.
#[inline(always)]
fn small_dot(a: Factors, b: Factors) -> Option<i64> {
    if a.bits > 16 || b.bits > 16 || a.values.len() > 16 {
        return None;
    }
    let widen = |f: Factors, v: u64| {
        if f.signed {
            sign_extend(f.bits, v)
        } else {
            (v & mask(f.bits)) as i64
        }
    };
    Some(
        a.values
            .iter()
            .zip(b.values)
            .map(|(&x, &y)| widen(a, x) * widen(b, y))
            .sum(),
    )
}

/// Whether any product or partial sum (in component order) leaves `[lo, hi]`.
pub(super) fn dot_overflows(a: Factors, b: Factors, (lo, hi): (i128, i128)) -> bool {
    let mut sum = 0i128;
    for p in products(a, b) {
        sum = sum.saturating_add(p);
        if p < lo || p > hi || sum < lo || sum > hi {
            return true;
        }
    }
    false
}

/// The range of an N-bit integer of the given signedness.
#[inline(always)]
pub(super) fn range(signed: bool, bits: u32) -> (i128, i128) {
    if signed {
        (i128::from(signed_min(bits)), i128::from(signed_max(bits)))
    } else {
        (0, i128::from(mask(bits)))
    }
}

/// `exact + acc` saturated into the N-bit range of the given signedness, as a canonical value.
#[inline(always)]
pub(super) fn saturate(signed: bool, bits: u32, exact: i128, acc: i128) -> u64 {
    let (lo, hi) = range(signed, bits);
    from_signed(bits, exact.saturating_add(acc).clamp(lo, hi) as i64)
}

/// The dot product without accumulation: "The resulting value will equal the low-order N bits of
/// the correct result R, where N is the result width and R is computed with enough precision to
/// avoid overflow and underflow."
#[inline(always)]
fn dot(result_bits: u32, a: Factors, b: Factors) -> u64 {
    (wrapped_dot(a, b) as u64) & mask(result_bits)
}

/// The dot product with saturating accumulation: "Finally, the resulting sum is added to the
/// input accumulator. This final addition is saturating." The accumulator has the result's
/// type and `signed` is the saturation's signedness.
///
/// When an intermediate step overflows (undefined, see [`dot_acc_sat_is_undefined`]) the
/// fallback is the exact sum plus the accumulator, saturated.
#[inline(always)]
fn dot_acc_sat(result_bits: u32, a: Factors, b: Factors, acc: u64, signed: bool) -> u64 {
    let acc = widen(signed, result_bits, acc);
    saturate(signed, result_bits, exact_dot(a, b), acc)
}

/// Vector operands of component width `bits`: `signed` for Vector 1 and Vector 2.
#[inline]
fn operands<'a>(
    bits: u32,
    (sa, a): (bool, &'a [u64]),
    (sb, b): (bool, &'a [u64]),
) -> (Factors<'a>, Factors<'a>) {
    (
        Factors {
            bits,
            signed: sa,
            values: a,
        },
        Factors {
            bits,
            signed: sb,
            values: b,
        },
    )
}

/// OpSDotKHR: "All components of the input vectors are sign-extended to the bit width of the
/// result's type. The sign-extended input vectors are then multiplied component-wise and all
/// components of the vector resulting from the component-wise multiplication are added
/// together."
#[inline]
pub fn sdot(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64]) -> u64 {
    let (a, b) = operands(comp_bits, (true, a), (true, b));
    dot(result_bits, a, b)
}

/// OpUDotKHR: as [`sdot`] with "All components of the input vectors are zero-extended".
#[inline]
pub fn udot(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64]) -> u64 {
    let (a, b) = operands(comp_bits, (false, a), (false, b));
    dot(result_bits, a, b)
}

/// OpSUDotKHR: "All components of Vector 1 are sign-extended to the bit width of the result's
/// type. All components of Vector 2 are zero-extended to the bit width of the result's type."
#[inline]
pub fn sudot(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64]) -> u64 {
    let (a, b) = operands(comp_bits, (true, a), (false, b));
    dot(result_bits, a, b)
}

/// OpSDotAccSatKHR: "Signed integer dot product of Vector 1 and Vector 2 and signed saturating
/// addition of the result with Accumulator."
#[inline]
pub fn sdot_acc_sat(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64], acc: u64) -> u64 {
    let (a, b) = operands(comp_bits, (true, a), (true, b));
    dot_acc_sat(result_bits, a, b, acc, true)
}

/// OpUDotAccSatKHR: "Unsigned integer dot product of Vector 1 and Vector 2 and unsigned
/// saturating addition of the result with Accumulator."
#[inline]
pub fn udot_acc_sat(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64], acc: u64) -> u64 {
    let (a, b) = operands(comp_bits, (false, a), (false, b));
    dot_acc_sat(result_bits, a, b, acc, false)
}

/// OpSUDotAccSatKHR: "Mixed-signedness integer dot product of Vector 1 and Vector 2 and signed
/// saturating addition of the result with Accumulator."
#[inline]
pub fn sudot_acc_sat(comp_bits: u32, result_bits: u32, a: &[u64], b: &[u64], acc: u64) -> u64 {
    let (a, b) = operands(comp_bits, (true, a), (false, b));
    dot_acc_sat(result_bits, a, b, acc, true)
}

/// Which of the three AccSat instructions a check is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotKind {
    /// OpSDotAccSatKHR: both vectors signed, signed result range.
    Signed,
    /// OpUDotAccSatKHR: both vectors unsigned, unsigned result range.
    Unsigned,
    /// OpSUDotAccSatKHR: Vector 1 signed, Vector 2 unsigned, signed result range.
    Mixed,
}

/// Whether an AccSat dot product is undefined: some product or partial sum, taken in component
/// order, leaves the N-bit range of the result's signedness.
///
/// The spec does not fix the order of the additions; checking them in component order (the
/// order the spec describes) is tangle's choice.
///
/// # Spec
/// "If any of the multiplications or additions, with the exception of the final accumulation,
/// overflow or underflow, the result of the instruction is undefined."
pub fn dot_acc_sat_is_undefined(
    kind: DotKind,
    comp_bits: u32,
    result_bits: u32,
    a: &[u64],
    b: &[u64],
) -> bool {
    let (sa, sb, signed) = match kind {
        DotKind::Signed => (true, true, true),
        DotKind::Unsigned => (false, false, false),
        DotKind::Mixed => (true, false, true),
    };
    let (a, b) = operands(comp_bits, (sa, a), (sb, b));
    dot_overflows(a, b, range(signed, result_bits))
}

/// Unpacks a PackedVectorFormat4x8BitKHR operand into four 8-bit components.
///
/// # Spec
/// "Interpret 32-bit scalar integer operands as vectors of four 8-bit components. Vector
/// components follow byte significance order with the lowest-numbered component stored in the
/// least significant byte."
#[inline]
pub fn unpack_4x8(word: u64) -> [u64; 4] {
    [
        word & 0xff,
        (word >> 8) & 0xff,
        (word >> 16) & 0xff,
        (word >> 24) & 0xff,
    ]
}

#[cfg(test)]
mod tests {
    use super::super::from_signed;
    use super::super::{proptest_config, truncate};
    use super::*;
    use proptest::prelude::*;

    /// Reference in plain i128 loops with the widening written out per instruction; u128
    /// accumulation (mod 2^128) for the wrapped forms.
    fn reference(
        kind: DotKind,
        cb: u32,
        rb: u32,
        a: &[u64],
        b: &[u64],
        acc: Option<u64>,
    ) -> (u64, bool) {
        let sx = |v: u64| -> i128 {
            let v = i128::from(v);
            if v >= 1i128 << (cb - 1) {
                v - (1i128 << cb)
            } else {
                v
            }
        };
        let zx = |v: u64| i128::from(v);
        let mut wrapped: u128 = 0;
        let mut exact: i128 = 0;
        let mut undefined = false;
        let (lo, hi) = match kind {
            DotKind::Unsigned => (0i128, (1i128 << rb) - 1),
            _ => (-(1i128 << (rb - 1)), (1i128 << (rb - 1)) - 1),
        };
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = match kind {
                DotKind::Signed => (sx(x), sx(y)),
                DotKind::Unsigned => (zx(x), zx(y)),
                DotKind::Mixed => (sx(x), zx(y)),
            };
            // Products of ≤64-bit factors; the unsigned 64x64 case is reduced mod 2^128.
            let p = (x as u128).wrapping_mul(y as u128);
            wrapped = wrapped.wrapping_add(p);
            let pe = x.checked_mul(y);
            match pe {
                Some(pe) if pe >= lo && pe <= hi => {
                    exact += pe;
                    undefined |= exact < lo || exact > hi;
                }
                _ => undefined = true,
            }
        }
        let wrapped = (wrapped % (1u128 << rb)) as u64;
        match acc {
            None => (wrapped, undefined),
            Some(acc) => {
                let acc = match kind {
                    DotKind::Unsigned => zx(acc),
                    _ => {
                        let v = i128::from(acc);
                        if v >= 1i128 << (rb - 1) {
                            v - (1i128 << rb)
                        } else {
                            v
                        }
                    }
                };
                let t = (exact + acc).clamp(lo, hi);
                (t.rem_euclid(1i128 << rb) as u64, undefined)
            }
        }
    }

    fn check(cb: u32, rb: u32, a: &[u64], b: &[u64], acc: u64) {
        for kind in [DotKind::Signed, DotKind::Unsigned, DotKind::Mixed] {
            let (plain, acc_sat) = match kind {
                DotKind::Signed => (sdot(cb, rb, a, b), sdot_acc_sat(cb, rb, a, b, acc)),
                DotKind::Unsigned => (udot(cb, rb, a, b), udot_acc_sat(cb, rb, a, b, acc)),
                DotKind::Mixed => (sudot(cb, rb, a, b), sudot_acc_sat(cb, rb, a, b, acc)),
            };
            let (want_plain, _) = reference(kind, cb, rb, a, b, None);
            assert_eq!(plain, want_plain, "{kind:?} {cb}->{rb} {a:x?} {b:x?}");
            let (want_sat, undefined) = reference(kind, cb, rb, a, b, Some(acc));
            assert_eq!(
                dot_acc_sat_is_undefined(kind, cb, rb, a, b),
                undefined,
                "{kind:?} {cb}->{rb} {a:x?} {b:x?}"
            );
            if !undefined {
                assert_eq!(
                    acc_sat, want_sat,
                    "{kind:?} {cb}->{rb} {a:x?} {b:x?} acc {acc:#x}"
                );
            }
            assert_eq!(acc_sat & !mask(rb), 0);
        }
    }

    #[test]
    fn dot_edges() {
        // The classic int8 case: 4 × (-128 × -128) = 65536 overflows 16 bits but not 32.
        let m = [0x80u64; 4];
        assert_eq!(sdot(8, 32, &m, &m), 65536);
        assert_eq!(sdot(8, 16, &m, &m), 0);
        assert!(dot_acc_sat_is_undefined(DotKind::Signed, 8, 16, &m, &m));
        assert_eq!(sdot_acc_sat(8, 32, &m, &m, 0x7fff_0000), 0x7fff_ffff);
        assert_eq!(udot(8, 32, &m, &m), 65536);
        assert_eq!(
            sudot(8, 32, &m, &[0xff; 4]),
            from_signed(32, -128 * 255 * 4)
        );
        assert_eq!(udot_acc_sat(8, 8, &[1, 0, 0, 0], &[1, 0, 0, 0], 0xff), 0xff);
        assert_eq!(
            sdot_acc_sat(8, 8, &[1, 0, 0, 0], &[0xff, 0, 0, 0], 0x80),
            0x80
        );
        // Packed: bytes in significance order.
        assert_eq!(unpack_4x8(0x0403_0201), [1, 2, 3, 4]);
        assert_eq!(
            sdot(8, 32, &unpack_4x8(0xff02_0301), &unpack_4x8(0x0101_0101)),
            5
        );
        for (cb, rb) in [
            (8, 8),
            (8, 16),
            (8, 32),
            (16, 32),
            (32, 64),
            (64, 64),
            (16, 16),
        ] {
            let edges = [0, 1, mask(cb), mask(cb) >> 1, (mask(cb) >> 1) + 1];
            for &x in &edges {
                for &y in &edges {
                    for &acc in &[0, 1, mask(rb), mask(rb) >> 1, (mask(rb) >> 1) + 1] {
                        check(cb, rb, &[x, y, x], &[y, y, x], acc);
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn dot_random(pairs in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..17),
                      acc: u64, c in 0usize..4, r in 0usize..4, small: bool) {
            let widths = [8u32, 16, 32, 64];
            let cb = widths[c];
            let rb = widths[r.max(c)];
            // Small magnitudes exercise the defined AccSat cases.
            let shrink = |v: u64| if small { from_signed(cb, sign_extend(cb, v) >> (cb / 2 + 1)) } else { truncate(cb, v) };
            let a: Vec<u64> = pairs.iter().map(|p| shrink(p.0)).collect();
            let b: Vec<u64> = pairs.iter().map(|p| shrink(p.1)).collect();
            check(cb, rb, &a, &b, truncate(rb, acc));
        }
    }
}
