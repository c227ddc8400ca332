//! Rules for the integer dot product instructions of SPV_KHR_integer_dot_product (SPIR-V 1.6
//! core): `OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms — operand types, signedness,
//! widths, the packed 4x8-bit form, and which `DotProductInput*` capability each shape needs.
//!
//! Order follows SPIRV-Tools `validate_dot_product.cpp` (all of it newer than v2025.5).

use super::Ctx;
use crate::facts::Type;
use spirv::{Capability as C, Op};
use tangle_spirv::{Id, Instruction, Operand};

/// An integer dot product rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DotError {
    /// "Result Type must be an integer type whose Width must be greater than or equal to ..."
    #[error("the dot product result must be an integer scalar")]
    ResultNotIntScalar,
    /// AccSat: "The type of Accumulator must be the same as Result Type."
    #[error("the Accumulator must have the Result Type")]
    AccumulatorTypeMismatch,
    /// UDot: "Result Type must be an integer type with Signedness of 0."
    #[error("the unsigned dot product result must be an unsigned integer scalar")]
    ResultNotUnsigned,
    /// "Vector 1 and Vector 2 must have the same type."
    #[error("Vector 1 and Vector 2 must both be 32-bit integer scalars or both be vectors")]
    OperandShapesDiffer,
    /// Packed form: "... it requires the DotProductInput4x8BitPacked capability."
    #[error("32-bit scalar (packed) operands need the DotProductInput4x8BitPacked capability")]
    PackedNeedsCapability,
    /// Packed form: the result must be at least 8 bits wide.
    #[error("the result width ({width}) must be at least the packed component width of 8")]
    PackedResultTooNarrow { width: u32 },
    /// "If Vector 1 and Vector 2 are scalar integers ..., Packed Vector Format must be specified."
    #[error("packed 32-bit scalar operands need a Packed Vector Format operand")]
    PackedFormatMissing,
    /// "Vector 1 and Vector 2 must be vectors of integer type" (or 32-bit scalars).
    #[error("Vector {which} must be an integer scalar or vector")]
    NotIntVector { which: u8 },
    /// "... must have the same number of components."
    #[error("Vector 1 has {a} components but Vector 2 has {b}")]
    ComponentCountsDiffer { a: u32, b: u32 },
    /// "... components must be integers" (checked per operand).
    #[error("Vector {which} must be a vector of integers")]
    ComponentsNotInt { which: u8 },
    /// "... same component width."
    #[error("Vector 1 components are {a}-bit but Vector 2 components are {b}-bit")]
    ComponentWidthsDiffer { a: u32, b: u32 },
    /// "Result Type ... Width must be greater than or equal to that of the components of Vector 1 and 2."
    #[error("the result width ({result}) must be at least the component width ({component})")]
    ResultNarrowerThanComponents { result: u32, component: u32 },
    /// 4-component 8-bit vectors need DotProductInput4x8Bit or DotProductInputAll.
    #[error("4-component vectors of 8-bit integers need the DotProductInput4x8Bit or DotProductInputAll capability")]
    Vector4x8NeedsCapability,
    /// Any other vector shape needs DotProductInputAll.
    #[error("vector operands of this shape need the DotProductInputAll capability")]
    VectorNeedsInputAll,
    /// UDot: "Vector 1 and Vector 2 must have a Signedness of 0" ; SUDot: Vector 2 must.
    #[error("Vector {which} must be a vector of unsigned integers")]
    ComponentsNotUnsigned { which: u8 },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Signs {
    /// SDot: any signedness.
    Any,
    /// UDot: both unsigned.
    Unsigned,
    /// SUDot: Vector 2 unsigned.
    Mixed,
}

/// Checks an instruction if it is an integer dot product.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), DotError> {
    let (signs, acc) = match inst.op() {
        Some(Op::SDot) => (Signs::Any, false),
        Some(Op::UDot) => (Signs::Unsigned, false),
        Some(Op::SUDot) => (Signs::Mixed, false),
        Some(Op::SDotAccSat) => (Signs::Any, true),
        Some(Op::UDotAccSat) => (Signs::Unsigned, true),
        Some(Op::SUDotAccSat) => (Signs::Mixed, true),
        _ => return Ok(()),
    };
    same_signed_dot(cx, inst, signs, acc)
}

/// The whole rule set, in SPIRV-Tools' order.
fn same_signed_dot(cx: &Ctx, inst: &Instruction, signs: Signs, acc: bool) -> Result<(), DotError> {
    let f = cx.facts;
    let (Some(result), Some(v1), Some(v2)) =
        (inst.result_type, inst.id_operand(0), inst.id_operand(1))
    else {
        return Ok(());
    };
    let Some((result_width, result_signed)) = f.int_scalar(result) else {
        return Err(DotError::ResultNotIntScalar);
    };
    if acc && inst.id_operand(2).and_then(|a| f.type_of(a)) != Some(result) {
        return Err(DotError::AccumulatorTypeMismatch);
    }
    if signs == Signs::Unsigned && result_signed {
        return Err(DotError::ResultNotUnsigned);
    }
    let (Some(t1), Some(t2)) = (f.type_of(v1), f.type_of(v2)) else {
        return Ok(());
    };
    let packed1 = f.is_int32_scalar(t1);
    let packed2 = f.is_int32_scalar(t2);
    if packed1 != packed2 {
        return Err(DotError::OperandShapesDiffer);
    }
    if packed1 {
        if !f.has_capability(C::DotProductInput4x8BitPacked) {
            return Err(DotError::PackedNeedsCapability);
        }
        if result_width < 8 {
            return Err(DotError::PackedResultTooNarrow {
                width: result_width,
            });
        }
        let format_at = if acc { 3 } else { 2 };
        if !matches!(
            inst.operands.get(format_at),
            Some(Operand::Enum(..) | Operand::Int(_))
        ) {
            return Err(DotError::PackedFormatMissing);
        }
        return Ok(());
    }
    let (c1, n1) = vector(cx, t1).ok_or(DotError::NotIntVector { which: 1 })?;
    let (c2, n2) = vector(cx, t2).ok_or(DotError::NotIntVector { which: 2 })?;
    if n1 != n2 {
        return Err(DotError::ComponentCountsDiffer { a: n1, b: n2 });
    }
    let (w1, s1) = f
        .int_scalar(c1)
        .ok_or(DotError::ComponentsNotInt { which: 1 })?;
    let (w2, s2) = f
        .int_scalar(c2)
        .ok_or(DotError::ComponentsNotInt { which: 2 })?;
    if w1 != w2 {
        return Err(DotError::ComponentWidthsDiffer { a: w1, b: w2 });
    }
    if result_width < w1 {
        return Err(DotError::ResultNarrowerThanComponents {
            result: result_width,
            component: w1,
        });
    }
    if !f.has_capability(C::DotProductInputAll) {
        if n1 == 4 && w1 == 8 {
            if !f.has_capability(C::DotProductInput4x8Bit) {
                return Err(DotError::Vector4x8NeedsCapability);
            }
        } else {
            return Err(DotError::VectorNeedsInputAll);
        }
    }
    match signs {
        Signs::Unsigned if s1 => Err(DotError::ComponentsNotUnsigned { which: 1 }),
        Signs::Unsigned | Signs::Mixed if s2 => Err(DotError::ComponentsNotUnsigned { which: 2 }),
        _ => Ok(()),
    }
}

/// `(component type, count)` of a vector type.
fn vector(cx: &Ctx, ty: Id) -> Option<(Id, u32)> {
    match cx.facts.ty(ty)? {
        Type::Vector { component, count } => Some((*component, *count)),
        _ => None,
    }
}
