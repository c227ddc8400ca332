//! The functions compiled code calls for what Cranelift has no bit-identical instruction for:
//! each is an `extern "C"` wrapper of the very [`crate::semantics`] function the lane kernels
//! ([`crate::run::alu`], [`crate::run::dot`]) call, so its result is the interpreters' by
//! construction. Operands and results are canonical `u64` lane values; small enum operands
//! travel as codes ([`code`]).

use crate::program::{Conv, FloatBin, FloatCmp, IntBin, IntTern};
use crate::run::dot::DotInst;
use crate::semantics::dot::DotKind;
use crate::semantics::{convert, float, glsl, int};

/// Numbering of the enum operands the helpers take: the same function codes each side, so
/// the two can never disagree.
pub(crate) mod code {
    use super::*;

    /// The integer binary ops a helper computes (division and remainder).
    pub(crate) const INT_BIN: [IntBin; 5] = [
        IntBin::UDiv,
        IntBin::SDiv,
        IntBin::UMod,
        IntBin::SRem,
        IntBin::SMod,
    ];
    /// Float binary ops.
    pub(crate) const FLOAT_BIN: [FloatBin; 6] = [
        FloatBin::Add,
        FloatBin::Sub,
        FloatBin::Mul,
        FloatBin::Div,
        FloatBin::Rem,
        FloatBin::Mod,
    ];
    /// Float comparisons.
    pub(crate) const FLOAT_CMP: [FloatCmp; 14] = [
        FloatCmp::OrdEq,
        FloatCmp::OrdNe,
        FloatCmp::OrdLt,
        FloatCmp::OrdGt,
        FloatCmp::OrdLe,
        FloatCmp::OrdGe,
        FloatCmp::UnordEq,
        FloatCmp::UnordNe,
        FloatCmp::UnordLt,
        FloatCmp::UnordGt,
        FloatCmp::UnordLe,
        FloatCmp::UnordGe,
        FloatCmp::IsNan,
        FloatCmp::IsInf,
    ];
    /// Conversions.
    pub(crate) const CONV: [Conv; 7] = [
        Conv::UConvert,
        Conv::SConvert,
        Conv::FConvert,
        Conv::FToU,
        Conv::FToS,
        Conv::UToF,
        Conv::SToF,
    ];

    /// The code of `x` in `table`.
    pub(crate) fn of<T: PartialEq>(table: &[T], x: &T) -> Option<u64> {
        table.iter().position(|t| t == x).map(|i| i as u64)
    }

    /// The item with code `c`.
    pub(crate) fn get<T: Copy>(table: &[T], c: u64) -> Option<T> {
        usize::try_from(c).ok().and_then(|i| table.get(i)).copied()
    }

    /// A packed 4x8-bit dot product's kind, accumulator, component and result widths.
    pub(crate) fn dot(d: &DotInst) -> u64 {
        let kind = match d.kind {
            DotKind::Signed => 0,
            DotKind::Unsigned => 1,
            DotKind::Mixed => 2,
        };
        kind | u64::from(d.acc.is_some()) << 2 | u64::from(d.result_bits) << 8
    }

    /// The packed 4x8-bit dot product [`dot`] describes (its slots are not used).
    pub(crate) fn dot_inst(c: u64) -> DotInst {
        DotInst {
            kind: match c & 3 {
                0 => DotKind::Signed,
                1 => DotKind::Unsigned,
                _ => DotKind::Mixed,
            },
            comp_bits: 8,
            result_bits: ((c >> 8) & 0xff) as u32,
            count: 4,
            packed: true,
            dst: 0,
            a: 0,
            b: 0,
            acc: (c >> 2 & 1 != 0).then_some(0),
        }
    }
}

/// Bits as the `u32` width the semantics take (the compiler passes only real widths).
fn w(bits: u64) -> u32 {
    u32::try_from(bits).unwrap_or(u32::MAX)
}

/// Integer division and remainder ([`code::INT_BIN`]), with the semantics' fallbacks.
pub(crate) extern "C" fn int_bin(op: u64, bits: u64, a: u64, b: u64) -> u64 {
    let bits = w(bits);
    match code::get(&code::INT_BIN, op) {
        Some(IntBin::UDiv) => int::udiv(bits, a, b),
        Some(IntBin::SDiv) => int::sdiv(bits, a, b),
        Some(IntBin::UMod) => int::umod(a, b),
        Some(IntBin::SRem) => int::srem(bits, a, b),
        Some(IntBin::SMod) => int::smod(bits, a, b),
        _ => 0,
    }
}

/// 1 when the division of `a` by `b` is undefined (the sanitizer's `CheckDivision`).
pub(crate) extern "C" fn division_undefined(bits: u64, signed: u64, a: u64, b: u64) -> u64 {
    let bits = w(bits);
    u64::from(
        int::unsigned_division_is_undefined(b)
            || (signed != 0 && int::signed_division_is_undefined(bits, a, b)),
    )
}

/// `OpBitFieldUExtract`/`OpBitFieldSExtract` (`op` 0/1) and `OpBitFieldInsert` (`op` 2, with
/// `d` the count).
pub(crate) extern "C" fn bit_field(op: u64, bits: u64, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let bits = w(bits);
    match op {
        0 => int::bit_field_uextract(bits, a, b, c),
        1 => int::bit_field_sextract(bits, a, b, c),
        _ => int::bit_field_insert(bits, a, b, c, d),
    }
}

/// The code of an [`IntTern`] for [`bit_field`].
pub(crate) fn bit_field_code(op: IntTern) -> u64 {
    match op {
        IntTern::BitFieldUExtract => 0,
        IntTern::BitFieldSExtract => 1,
    }
}

/// Float binary ops ([`code::FLOAT_BIN`]) of any width.
pub(crate) extern "C" fn float_bin(op: u64, bits: u64, a: u64, b: u64) -> u64 {
    let bits = w(bits);
    match code::get(&code::FLOAT_BIN, op) {
        Some(FloatBin::Add) => float::fadd(bits, a, b),
        Some(FloatBin::Sub) => float::fsub(bits, a, b),
        Some(FloatBin::Mul) => float::fmul(bits, a, b),
        Some(FloatBin::Div) => float::fdiv(bits, a, b),
        Some(FloatBin::Rem) => float::frem(bits, a, b),
        Some(FloatBin::Mod) => float::fmod(bits, a, b),
        None => 0,
    }
}

/// Float comparisons ([`code::FLOAT_CMP`]) of any width.
pub(crate) extern "C" fn float_cmp(op: u64, bits: u64, a: u64, b: u64) -> u64 {
    let bits = w(bits);
    let f: fn(u32, u64, u64) -> u64 = match code::get(&code::FLOAT_CMP, op) {
        Some(FloatCmp::OrdEq) => float::ford_equal,
        Some(FloatCmp::OrdNe) => float::ford_not_equal,
        Some(FloatCmp::OrdLt) => float::ford_less_than,
        Some(FloatCmp::OrdGt) => float::ford_greater_than,
        Some(FloatCmp::OrdLe) => float::ford_less_than_equal,
        Some(FloatCmp::OrdGe) => float::ford_greater_than_equal,
        Some(FloatCmp::UnordEq) => float::funord_equal,
        Some(FloatCmp::UnordNe) => float::funord_not_equal,
        Some(FloatCmp::UnordLt) => float::funord_less_than,
        Some(FloatCmp::UnordGt) => float::funord_greater_than,
        Some(FloatCmp::UnordLe) => float::funord_less_than_equal,
        Some(FloatCmp::UnordGe) => float::funord_greater_than_equal,
        Some(FloatCmp::IsNan) => |bits, a, _| float::is_nan(bits, a),
        Some(FloatCmp::IsInf) => |bits, a, _| float::is_inf(bits, a),
        None => return 0,
    };
    f(bits, a, b)
}

/// Conversions ([`code::CONV`]) from `from` to `to` bits.
pub(crate) extern "C" fn convert(op: u64, from: u64, to: u64, a: u64) -> u64 {
    let (from, to) = (w(from), w(to));
    match code::get(&code::CONV, op) {
        Some(Conv::UConvert) => convert::uconvert(from, to, a),
        Some(Conv::SConvert) => convert::sconvert(from, to, a),
        Some(Conv::FConvert) => convert::fconvert(from, to, a),
        Some(Conv::FToU) => convert::convert_f_to_u(from, to, a),
        Some(Conv::FToS) => convert::convert_f_to_s(from, to, a),
        Some(Conv::UToF) => convert::convert_u_to_f(from, to, a),
        Some(Conv::SToF) => convert::convert_s_to_f(from, to, a),
        None => 0,
    }
}

/// A component-wise GLSL.std.450 instruction on `argc` operands, as [`crate::run::alu`] runs
/// it (an instruction it does not know gives 0 there too).
pub(crate) extern "C" fn glsl(inst: u64, bits_argc: u64, a: u64, b: u64, c: u64) -> u64 {
    let (bits, argc) = (
        w(bits_argc & 0xffff_ffff),
        (bits_argc >> 32).min(3) as usize,
    );
    let all = [a, b, c];
    glsl::eval_componentwise(w(inst), bits, all.get(..argc).unwrap_or(&[])).unwrap_or(0)
}

/// A packed 4x8-bit dot product ([`code::dot`]); `u64::MAX` (no canonical value of a result
/// narrower than 64 bits) when its AccSat steps overflow, which the compiled code gives up on.
pub(crate) extern "C" fn dot_packed(c: u64, a: u64, b: u64, acc: u64) -> u64 {
    let d = code::dot_inst(c);
    let (va, vb) = (
        crate::semantics::dot::unpack_4x8(a),
        crate::semantics::dot::unpack_4x8(b),
    );
    d.value(&va, &vb, acc, d.may_overflow()).unwrap_or(u64::MAX)
}
