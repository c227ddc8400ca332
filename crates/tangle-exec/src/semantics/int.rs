//! Core SPIR-V integer instructions (SPIR-V spec 3.52.13 "Arithmetic Instructions", 3.52.14
//! "Bit Instructions", 3.52.15 "Relational and Logical Instructions").
//!
//! Inputs and outputs are canonical N-bit values (see [`super`]). Results wrap: "the resulting
//! value will equal the low-order N bits of the correct result R". Where the spec leaves a result
//! undefined the function returns the documented fallback and a `…_is_undefined` predicate
//! reports the case. Comparisons return a Bool (0 or 1).

use super::{from_signed, mask, sign_extend, signed_max, signed_min, truncate};

/// OpIAdd: "Integer addition of Operand 1 and Operand 2."
pub fn iadd(bits: u32, a: u64, b: u64) -> u64 {
    truncate(bits, a.wrapping_add(b))
}

/// OpISub: "Integer subtraction of Operand 2 from Operand 1."
pub fn isub(bits: u32, a: u64, b: u64) -> u64 {
    truncate(bits, a.wrapping_sub(b))
}

/// OpIMul: "Integer multiplication of Operand 1 and Operand 2."
pub fn imul(bits: u32, a: u64, b: u64) -> u64 {
    truncate(bits, a.wrapping_mul(b))
}

/// OpSNegate: "Signed-integer subtract of Operand from zero."
pub fn snegate(bits: u32, a: u64) -> u64 {
    truncate(bits, a.wrapping_neg())
}

/// OpUDiv: "Unsigned-integer division of Operand 1 divided by Operand 2."
///
/// Undefined when Operand 2 is 0 (see [`unsigned_division_is_undefined`]); the fallback is all
/// ones, as RISC-V defines it.
pub fn udiv(bits: u32, a: u64, b: u64) -> u64 {
    a.checked_div(b).unwrap_or(mask(bits))
}

/// OpUMod: "Unsigned modulo operation of Operand 1 modulo Operand 2."
///
/// Undefined when Operand 2 is 0 (see [`unsigned_division_is_undefined`]); the fallback is
/// Operand 1.
pub fn umod(a: u64, b: u64) -> u64 {
    a.checked_rem(b).unwrap_or(a)
}

/// Whether OpUDiv / OpUMod is undefined.
///
/// # Spec
/// "Behavior is undefined if Operand 2 is 0."
pub fn unsigned_division_is_undefined(b: u64) -> bool {
    b == 0
}

/// OpSDiv: "Signed-integer division of Operand 1 divided by Operand 2."
///
/// Fallbacks (see [`signed_division_is_undefined`]): division by 0 gives -1; MIN / -1 gives MIN
/// (the wrapped result).
pub fn sdiv(bits: u32, a: u64, b: u64) -> u64 {
    let (x, y) = (sign_extend(bits, a), sign_extend(bits, b));
    if y == 0 {
        return mask(bits);
    }
    from_signed(bits, x.wrapping_div(y))
}

/// OpSRem: "Signed remainder operation for the remainder whose sign matches the sign of
/// Operand 1."
///
/// Fallbacks (see [`signed_division_is_undefined`]): remainder by 0 gives Operand 1; MIN rem -1
/// gives 0.
pub fn srem(bits: u32, a: u64, b: u64) -> u64 {
    let (x, y) = (sign_extend(bits, a), sign_extend(bits, b));
    if y == 0 {
        return a;
    }
    from_signed(bits, x.wrapping_rem(y))
}

/// OpSMod: "Signed remainder operation for the remainder whose sign matches the sign of
/// Operand 2."
///
/// Fallbacks as for [`srem`].
pub fn smod(bits: u32, a: u64, b: u64) -> u64 {
    let (x, y) = (sign_extend(bits, a), sign_extend(bits, b));
    if y == 0 {
        return a;
    }
    let r = x.wrapping_rem(y);
    // A non-zero remainder with the dividend's sign moves to the divisor's sign by adding the
    // divisor once; |r| < |y| so the sum cannot overflow.
    let r = if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    };
    from_signed(bits, r)
}

/// Whether OpSDiv / OpSRem / OpSMod is undefined.
///
/// # Spec
/// "Behavior is undefined if Operand 2 is 0. Behavior is undefined if Operand 2 is -1 and
/// Operand 1 is the minimum representable value for the operands' type, causing signed
/// overflow."
pub fn signed_division_is_undefined(bits: u32, a: u64, b: u64) -> bool {
    let (x, y) = (sign_extend(bits, a), sign_extend(bits, b));
    y == 0 || (y == -1 && x == signed_min(bits))
}

/// The extra Vulkan rule for OpSRem / OpSMod.
///
/// # Spec
/// Vulkan, "Precision and Operation of SPIR-V Instructions": "for the OpSRem and OpSMod
/// instructions, if either operand is negative the result is undefined."
pub fn vulkan_signed_remainder_is_undefined(bits: u32, a: u64, b: u64) -> bool {
    sign_extend(bits, a) < 0 || sign_extend(bits, b) < 0
}

/// OpNot: "Complement the bits of Operand."
pub fn not(bits: u32, a: u64) -> u64 {
    truncate(bits, !a)
}

/// OpBitwiseAnd.
pub fn bitwise_and(a: u64, b: u64) -> u64 {
    a & b
}

/// OpBitwiseOr.
pub fn bitwise_or(a: u64, b: u64) -> u64 {
    a | b
}

/// OpBitwiseXor.
pub fn bitwise_xor(a: u64, b: u64) -> u64 {
    a ^ b
}

/// OpShiftLeftLogical: "Shift the bits in Base left by the number of bits specified in Shift.
/// The least-significant bits are zero filled."
///
/// `shift` is the canonical value of the Shift operand (its width may differ from Base's; it
/// "is consumed as an unsigned integer"). Fallback for shift ≥ width: 0.
pub fn shift_left_logical(bits: u32, base: u64, shift: u64) -> u64 {
    if shift >= u64::from(bits) {
        return 0;
    }
    truncate(bits, base << shift)
}

/// OpShiftRightLogical: "The most-significant bits are zero filled." Fallback for shift ≥
/// width: 0.
pub fn shift_right_logical(bits: u32, base: u64, shift: u64) -> u64 {
    if shift >= u64::from(bits) {
        return 0;
    }
    base >> shift
}

/// OpShiftRightArithmetic: "The most-significant bits are filled with the sign bit from Base."
/// Fallback for shift ≥ width: every bit is the sign bit.
pub fn shift_right_arithmetic(bits: u32, base: u64, shift: u64) -> u64 {
    let shift = shift.min(63) as u32;
    from_signed(bits, sign_extend(bits, base) >> shift)
}

/// Whether a shift is undefined.
///
/// # Spec
/// "The resulting value is undefined if Shift is greater than or equal to the bit width of the
/// components of Base."
pub fn shift_is_undefined(bits: u32, shift: u64) -> bool {
    shift >= u64::from(bits)
}

/// Offset and Count clamped into the width, the fallback for undefined bit fields.
fn clamp_field(bits: u32, offset: u64, count: u64) -> (u32, u32) {
    let offset = offset.min(u64::from(bits)) as u32;
    let count = count.min(u64::from(bits - offset)) as u32;
    (offset, count)
}

/// OpBitFieldInsert: "Make a copy of an object, with a modified bit field that comes from
/// another object." Bits `[Offset, Offset + Count - 1]` come from Insert, the rest from Base;
/// "If Count is 0, the result is a copy of Base."
///
/// `offset` and `count` are canonical unsigned values of their own widths. Fallback when
/// undefined: Offset is clamped to the width, then Count to what is left.
pub fn bit_field_insert(bits: u32, base: u64, insert: u64, offset: u64, count: u64) -> u64 {
    let (offset, count) = clamp_field(bits, offset, count);
    if count == 0 {
        return base;
    }
    let field = mask(count) << offset;
    (base & !field) | ((insert << offset) & field)
}

/// OpBitFieldSExtract: "Extract a bit field from an object, with sign extension." The field
/// `[Offset, Offset + Count - 1]` is sign-extended from its top bit; "If Count is 0, the result
/// is 0." Fallback as for [`bit_field_insert`].
pub fn bit_field_sextract(bits: u32, base: u64, offset: u64, count: u64) -> u64 {
    let (offset, count) = clamp_field(bits, offset, count);
    if count == 0 {
        return 0;
    }
    from_signed(bits, sign_extend(count, base >> offset))
}

/// OpBitFieldUExtract: "Extract a bit field from an object, without sign extension." "If Count
/// is 0, the result is 0." Fallback as for [`bit_field_insert`].
pub fn bit_field_uextract(bits: u32, base: u64, offset: u64, count: u64) -> u64 {
    let (offset, count) = clamp_field(bits, offset, count);
    if count == 0 {
        return 0;
    }
    (base >> offset) & mask(count)
}

/// Whether OpBitFieldInsert / SExtract / UExtract is undefined.
///
/// # Spec
/// "The resulting value is undefined if Count or Offset or their sum is greater than the number
/// of bits in the result."
pub fn bit_field_is_undefined(bits: u32, offset: u64, count: u64) -> bool {
    u128::from(offset) + u128::from(count) > u128::from(bits)
}

/// OpBitReverse: "Reverse the bits in an object."
pub fn bit_reverse(bits: u32, a: u64) -> u64 {
    if bits == 0 {
        return 0;
    }
    a.reverse_bits() >> (64 - bits.min(64))
}

/// OpBitCount: "Count the number of set bits in an object." The count is returned as a value;
/// "The components must be wide enough to hold the unsigned Width of Base".
pub fn bit_count(a: u64) -> u64 {
    u64::from(a.count_ones())
}

/// OpIAddCarry: "Result Type must be from OpTypeStruct. The struct must have two members ...
/// Member 0 of the result gets the low-order bits (full component width) of the addition.
/// Member 1 of the result gets the high-order (carry) bit of the result of the addition."
/// Returns `(low bits, carry)`.
pub fn iadd_carry(bits: u32, a: u64, b: u64) -> (u64, u64) {
    let sum = u128::from(a) + u128::from(b);
    (
        truncate(bits, sum as u64),
        ((sum >> bits.min(64)) & 1) as u64,
    )
}

/// OpISubBorrow: "Member 0 of the result gets the low-order bits (full component width) of the
/// subtraction. That is, if Operand 1 is larger than Operand 2, member 0 gets the full value of
/// the subtraction; if Operand 2 is larger than Operand 1, member 0 gets 2^w + Operand 1 -
/// Operand 2, where w is the component width. Member 1 of the result gets 0 if Operand 1 ≥
/// Operand 2, and gets 1 otherwise." Returns `(difference, borrow)`.
pub fn isub_borrow(bits: u32, a: u64, b: u64) -> (u64, u64) {
    (isub(bits, a, b), u64::from(a < b))
}

/// OpUMulExtended: "Member 0 of the result gets the low-order bits of the multiplication.
/// Member 1 of the result gets the high-order bits of the multiplication." Returns `(low, high)`.
pub fn umul_extended(bits: u32, a: u64, b: u64) -> (u64, u64) {
    let p = u128::from(a) * u128::from(b);
    (
        truncate(bits, p as u64),
        truncate(bits, (p >> bits.min(64)) as u64),
    )
}

/// OpSMulExtended: signed version of [`umul_extended`]. Returns `(low, high)`.
pub fn smul_extended(bits: u32, a: u64, b: u64) -> (u64, u64) {
    let p = i128::from(sign_extend(bits, a)) * i128::from(sign_extend(bits, b));
    (
        truncate(bits, p as u64),
        truncate(bits, (p >> bits.min(64)) as u64),
    )
}

/// Which no-wrap decorations an integer operation would violate.
///
/// # Spec
/// SPV_KHR_no_integer_wrap_decoration, NoSignedWrap / NoUnsignedWrap: "Apply to an instruction to
/// indicate that it doesn't cause signed integer wrapping to occur, in the form of overflow or
/// underflow. If the instruction decorated with NoSignedWrap does overflow or underflow, the
/// behavior is undefined."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wraps {
    /// The exact signed result is outside the N-bit signed range.
    pub signed: bool,
    /// The exact unsigned result is outside the N-bit unsigned range.
    pub unsigned: bool,
}

/// Wraps of an exact signed and an exact unsigned result.
fn wraps(bits: u32, exact_signed: i128, exact_unsigned: i128) -> Wraps {
    Wraps {
        signed: exact_signed < i128::from(signed_min(bits))
            || exact_signed > i128::from(signed_max(bits)),
        unsigned: exact_unsigned < 0 || exact_unsigned > i128::from(mask(bits)),
    }
}

/// The no-wrap check for OpIAdd.
pub fn iadd_wraps(bits: u32, a: u64, b: u64) -> Wraps {
    let s = i128::from(sign_extend(bits, a)) + i128::from(sign_extend(bits, b));
    wraps(bits, s, i128::from(a) + i128::from(b))
}

/// The no-wrap check for OpISub.
pub fn isub_wraps(bits: u32, a: u64, b: u64) -> Wraps {
    let s = i128::from(sign_extend(bits, a)) - i128::from(sign_extend(bits, b));
    wraps(bits, s, i128::from(a) - i128::from(b))
}

/// The no-wrap check for OpIMul.
pub fn imul_wraps(bits: u32, a: u64, b: u64) -> Wraps {
    let s = i128::from(sign_extend(bits, a)) * i128::from(sign_extend(bits, b));
    let u = u128::from(a) * u128::from(b);
    Wraps {
        signed: wraps(bits, s, 0).signed,
        unsigned: u > u128::from(mask(bits)),
    }
}

/// The no-wrap check for OpSNegate (only NoSignedWrap applies to a signed negation; the
/// unsigned flag reports a non-zero operand, whose unsigned negation wraps).
pub fn snegate_wraps(bits: u32, a: u64) -> Wraps {
    wraps(bits, -i128::from(sign_extend(bits, a)), -i128::from(a))
}

/// The no-wrap check for OpShiftLeftLogical (a shift ≥ width is reported by
/// [`shift_is_undefined`] instead and gives no wrap here).
pub fn shift_left_logical_wraps(bits: u32, base: u64, shift: u64) -> Wraps {
    if shift_is_undefined(bits, shift) {
        return Wraps::default();
    }
    let shift = shift as u32;
    let s = i128::from(sign_extend(bits, base)) << shift;
    let u = i128::from(base) << shift;
    wraps(bits, s, u)
}

/// OpIEqual.
pub fn iequal(a: u64, b: u64) -> u64 {
    u64::from(a == b)
}

/// OpINotEqual.
pub fn inot_equal(a: u64, b: u64) -> u64 {
    u64::from(a != b)
}

/// OpULessThan: "Unsigned-integer comparison if Operand 1 is less than Operand 2."
pub fn uless_than(a: u64, b: u64) -> u64 {
    u64::from(a < b)
}

/// OpULessThanEqual.
pub fn uless_than_equal(a: u64, b: u64) -> u64 {
    u64::from(a <= b)
}

/// OpUGreaterThan.
pub fn ugreater_than(a: u64, b: u64) -> u64 {
    u64::from(a > b)
}

/// OpUGreaterThanEqual.
pub fn ugreater_than_equal(a: u64, b: u64) -> u64 {
    u64::from(a >= b)
}

/// OpSLessThan: "Signed-integer comparison if Operand 1 is less than Operand 2."
pub fn sless_than(bits: u32, a: u64, b: u64) -> u64 {
    u64::from(sign_extend(bits, a) < sign_extend(bits, b))
}

/// OpSLessThanEqual.
pub fn sless_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    u64::from(sign_extend(bits, a) <= sign_extend(bits, b))
}

/// OpSGreaterThan.
pub fn sgreater_than(bits: u32, a: u64, b: u64) -> u64 {
    u64::from(sign_extend(bits, a) > sign_extend(bits, b))
}

/// OpSGreaterThanEqual.
pub fn sgreater_than_equal(bits: u32, a: u64, b: u64) -> u64 {
    u64::from(sign_extend(bits, a) >= sign_extend(bits, b))
}

#[cfg(test)]
mod tests {
    use super::super::proptest_config;
    use super::*;
    use proptest::prelude::*;

    const WIDTHS: [u32; 4] = [8, 16, 32, 64];

    /// Independent reference: the N-bit value of an i128, wrapped by Euclidean modulo.
    fn wrap(bits: u32, v: i128) -> u64 {
        v.rem_euclid(1i128 << bits) as u64
    }
    /// Independent reference for signed reading: via i128 and a subtraction of 2^N.
    fn signed(bits: u32, v: u64) -> i128 {
        let v = i128::from(v);
        if v >= 1i128 << (bits - 1) {
            v - (1i128 << bits)
        } else {
            v
        }
    }

    fn edges(bits: u32) -> Vec<u64> {
        let m = mask(bits);
        vec![
            0,
            1,
            2,
            3,
            m,
            m - 1,
            m >> 1,
            (m >> 1) + 1,
            (m >> 1) + 2,
            7,
            m / 3,
        ]
    }

    fn check_binary(bits: u32, a: u64, b: u64) {
        let (sa, sb) = (signed(bits, a), signed(bits, b));
        let (ua, ub) = (i128::from(a), i128::from(b));
        assert_eq!(iadd(bits, a, b), wrap(bits, ua + ub));
        assert_eq!(isub(bits, a, b), wrap(bits, ua - ub));
        assert_eq!(imul(bits, a, b), wrap(bits, sa * sb));
        assert_eq!(snegate(bits, a), wrap(bits, -sa));
        assert_eq!(not(bits, a), wrap(bits, -ua - 1));
        assert_eq!(unsigned_division_is_undefined(b), ub == 0);
        if ub != 0 {
            assert_eq!(udiv(bits, a, b), (ua / ub) as u64);
            assert_eq!(umod(a, b), (ua % ub) as u64);
        } else {
            assert_eq!(udiv(bits, a, b), mask(bits));
            assert_eq!(umod(a, b), a);
        }
        let sundef = sb == 0 || (sb == -1 && sa == -(1i128 << (bits - 1)));
        assert_eq!(signed_division_is_undefined(bits, a, b), sundef);
        if !sundef {
            // Truncating division: the quotient rounds toward zero.
            let q = sa.abs() / sb.abs() * if (sa < 0) == (sb < 0) { 1 } else { -1 };
            assert_eq!(sdiv(bits, a, b), wrap(bits, q));
            let r = sa - q * sb;
            assert_eq!(srem(bits, a, b), wrap(bits, r));
            let m = sa.rem_euclid(sb.abs());
            let m = if sb < 0 && m != 0 { m + sb } else { m };
            assert_eq!(smod(bits, a, b), wrap(bits, m));
        } else {
            let _ = (sdiv(bits, a, b), srem(bits, a, b), smod(bits, a, b));
        }
        assert_eq!(
            vulkan_signed_remainder_is_undefined(bits, a, b),
            sa < 0 || sb < 0
        );
        assert_eq!(
            iadd_carry(bits, a, b),
            (wrap(bits, ua + ub), u64::from(ua + ub >= 1i128 << bits))
        );
        assert_eq!(
            isub_borrow(bits, a, b),
            (wrap(bits, ua - ub), u64::from(ua < ub))
        );
        // The unsigned 64x64 product needs all 128 bits.
        let up = u128::from(a) * u128::from(b);
        let uwrap = |v: u128| (v % (1u128 << bits)) as u64;
        assert_eq!(umul_extended(bits, a, b), (uwrap(up), uwrap(up >> bits)));
        let sp = sa * sb;
        assert_eq!(
            smul_extended(bits, a, b),
            (wrap(bits, sp), wrap(bits, sp.div_euclid(1i128 << bits)))
        );
        let in_s = |v: i128| v >= -(1i128 << (bits - 1)) && v < 1i128 << (bits - 1);
        let in_u = |v: i128| v >= 0 && v < 1i128 << bits;
        assert_eq!(
            iadd_wraps(bits, a, b),
            Wraps {
                signed: !in_s(sa + sb),
                unsigned: !in_u(ua + ub)
            }
        );
        assert_eq!(
            isub_wraps(bits, a, b),
            Wraps {
                signed: !in_s(sa - sb),
                unsigned: !in_u(ua - ub)
            }
        );
        assert_eq!(
            imul_wraps(bits, a, b),
            Wraps {
                signed: !in_s(sp),
                unsigned: up >= 1u128 << bits
            }
        );
        assert_eq!(snegate_wraps(bits, a).signed, !in_s(-sa));
        assert_eq!(iequal(a, b), u64::from(a == b));
        assert_eq!(inot_equal(a, b), u64::from(a != b));
        assert_eq!(uless_than(a, b), u64::from(ua < ub));
        assert_eq!(uless_than_equal(a, b), u64::from(ua <= ub));
        assert_eq!(ugreater_than(a, b), u64::from(ua > ub));
        assert_eq!(ugreater_than_equal(a, b), u64::from(ua >= ub));
        assert_eq!(sless_than(bits, a, b), u64::from(sa < sb));
        assert_eq!(sless_than_equal(bits, a, b), u64::from(sa <= sb));
        assert_eq!(sgreater_than(bits, a, b), u64::from(sa > sb));
        assert_eq!(sgreater_than_equal(bits, a, b), u64::from(sa >= sb));
        assert_eq!(bitwise_and(a, b), wrap(bits, ua & ub));
        assert_eq!(bitwise_or(a, b), wrap(bits, ua | ub));
        assert_eq!(bitwise_xor(a, b), wrap(bits, ua ^ ub));
    }

    /// Bit-by-bit references for shifts and bit fields.
    fn check_bits(bits: u32, a: u64, b: u64, shift: u64, offset: u64, count: u64) {
        let bit = |v: u64, i: u32| (v >> i) & 1;
        let sign = bit(a, bits - 1);
        let (mut shl, mut shr, mut sar) = (0u64, 0u64, 0u64);
        for i in 0..bits {
            let i64_ = u64::from(i);
            if i64_ >= shift {
                shl |= bit(a, (i64_ - shift) as u32) << i;
            }
            let src = i64_.saturating_add(shift);
            if src < u64::from(bits) {
                shr |= bit(a, src as u32) << i;
                sar |= bit(a, src as u32) << i;
            } else {
                sar |= sign << i;
            }
        }
        assert_eq!(shift_is_undefined(bits, shift), shift >= u64::from(bits));
        assert_eq!(shift_left_logical(bits, a, shift), shl);
        assert_eq!(shift_right_logical(bits, a, shift), shr);
        assert_eq!(shift_right_arithmetic(bits, a, shift), sar);
        if shift < u64::from(bits) {
            let exact_s = signed(bits, a) * (1i128 << shift);
            let exact_u = i128::from(a) * (1i128 << shift);
            let w = shift_left_logical_wraps(bits, a, shift);
            assert_eq!(w.signed, signed(bits, shl) != exact_s);
            assert_eq!(w.unsigned, exact_u != i128::from(shl));
        }

        let undefined = u128::from(offset) + u128::from(count) > u128::from(bits);
        assert_eq!(bit_field_is_undefined(bits, offset, count), undefined);
        if !undefined {
            let (o, c) = (offset as u32, count as u32);
            let (mut ins, mut ux) = (0u64, 0u64);
            for i in 0..bits {
                let from_insert = i >= o && i < o + c;
                ins |= if from_insert {
                    bit(b, i - o)
                } else {
                    bit(a, i)
                } << i;
                if i < c {
                    ux |= bit(a, o + i) << i;
                }
            }
            let mut sx = ux;
            if c > 0 && bit(a, o + c - 1) == 1 {
                for i in c..bits {
                    sx |= 1 << i;
                }
            }
            assert_eq!(bit_field_insert(bits, a, b, offset, count), ins);
            assert_eq!(bit_field_uextract(bits, a, offset, count), ux);
            assert_eq!(bit_field_sextract(bits, a, offset, count), sx);
        } else {
            // The fallback stays canonical.
            assert_eq!(bit_field_insert(bits, a, b, offset, count) & !mask(bits), 0);
            assert_eq!(bit_field_sextract(bits, a, offset, count) & !mask(bits), 0);
            assert_eq!(bit_field_uextract(bits, a, offset, count) & !mask(bits), 0);
        }
        let mut rev = 0u64;
        let mut ones = 0u64;
        for i in 0..bits {
            rev |= bit(a, i) << (bits - 1 - i);
            ones += bit(a, i);
        }
        assert_eq!(bit_reverse(bits, a), rev);
        assert_eq!(bit_count(a), ones);
    }

    #[test]
    fn integer_edges() {
        for bits in WIDTHS {
            for &a in &edges(bits) {
                for &b in &edges(bits) {
                    check_binary(bits, a, b);
                }
                for shift in [0, 1, u64::from(bits) - 1, u64::from(bits), 200, u64::MAX] {
                    check_bits(bits, a, !a & mask(bits), shift, 0, 0);
                }
                for (o, c) in [
                    (0, u64::from(bits)),
                    (u64::from(bits), 0),
                    (1, u64::from(bits)),
                    (3, 5),
                    (u64::MAX, 2),
                ] {
                    check_bits(bits, a, 0x5555_5555_5555_5555 & mask(bits), 1, o, c);
                }
            }
        }
        assert_eq!(sdiv(32, 0x8000_0000, 0xffff_ffff), 0x8000_0000);
        assert_eq!(srem(32, 0x8000_0000, 0xffff_ffff), 0);
        assert_eq!(smod(8, from_signed(8, -7), 3), 2);
        assert_eq!(smod(8, 7, from_signed(8, -3)), from_signed(8, -2));
        assert_eq!(srem(8, from_signed(8, -7), 3), from_signed(8, -1));
    }

    proptest! {
        #![proptest_config(proptest_config())]
        #[test]
        fn integer_random(w in 0usize..4, a: u64, b: u64, shift in 0u64..80, offset in 0u64..70, count in 0u64..70) {
            let bits = WIDTHS[w];
            let (a, b) = (truncate(bits, a), truncate(bits, b));
            check_binary(bits, a, b);
            check_bits(bits, a, b, shift, offset, count);
        }
    }
}
