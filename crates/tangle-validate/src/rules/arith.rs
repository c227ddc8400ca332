//! Arithmetic operand and result types (SPIR-V 3.x "Arithmetic Instructions"; SPIRV-Tools
//! `validate_arithmetics.cpp`) for the scalar and vector forms; cooperative matrix forms are
//! checked by `rules::coopmat`.

use super::Ctx;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// An arithmetic rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArithError {
    /// OpF*: "Result Type must be a scalar or vector of floating-point type."
    #[error("{op} Result Type must be a float scalar or vector")]
    ResultNotFloat { op: String },
    /// OpI*/OpS*/OpU*: "Result Type must be a scalar or vector of integer type."
    #[error("{op} Result Type must be an integer scalar or vector")]
    ResultNotInt { op: String },
    /// Float ops: "The types of the operands must be the same as Result Type."
    #[error("{op} operand {index} must have the Result Type")]
    OperandTypeMismatch { op: String, index: usize },
    /// SPIRV-Tools' invalid-type pass: BFloat16 and FP8 values are storage formats; arithmetic
    /// on them is not defined (their extensions allow only conversions, loads and stores, and
    /// cooperative matrix multiplication).
    #[error("{op} does not support floating-point types with an FP encoding (BFloat16, FP8)")]
    EncodedFloatNotSupported { op: String },
    /// Integer ops: operands are integer scalars/vectors with the Result Type's component count
    /// and width.
    #[error("{op} operand {index} must be an integer scalar or vector with the Result Type's width and component count")]
    IntOperandMismatch { op: String, index: usize },
}

/// Checks arithmetic instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), ArithError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let is_float_op = matches!(
        op,
        Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod | Op::FNegate
    );
    if is_float_op && encoded_float(cx, result) {
        return Err(ArithError::EncodedFloatNotSupported { op: inst.name() });
    }
    // Cooperative matrix forms belong to rules::coopmat.
    if cx.facts.coopmat(result).is_some() {
        return Ok(());
    }
    match op {
        Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod | Op::FNegate => {
            float(cx, inst, result)
        }
        Op::IAdd
        | Op::ISub
        | Op::IMul
        | Op::SDiv
        | Op::UDiv
        | Op::SRem
        | Op::SMod
        | Op::UMod
        | Op::SNegate => int(cx, inst, result),
        _ => Ok(()),
    }
}

/// Whether the type is (a vector or cooperative matrix of) an encoded float.
fn encoded_float(cx: &Ctx, ty: Id) -> bool {
    let f = cx.facts;
    let scalar = f
        .coopmat(ty)
        .map(|m| m.component)
        .or_else(|| f.scalar_or_vector_component(ty));
    matches!(
        scalar.and_then(|s| f.ty(s)),
        Some(crate::facts::Type::Float {
            encoding: Some(_),
            ..
        })
    )
}

fn operands(inst: &Instruction) -> impl Iterator<Item = (usize, Id)> + '_ {
    inst.operands.iter().filter_map(Operand::id).enumerate()
}

fn float(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    if !f
        .scalar_or_vector_component(result)
        .is_some_and(|c| f.is_float_scalar(c))
    {
        return Err(ArithError::ResultNotFloat { op: inst.name() });
    }
    for (index, v) in operands(inst) {
        if f.type_of(v) != Some(result) {
            return Err(ArithError::OperandTypeMismatch {
                op: inst.name(),
                index,
            });
        }
    }
    Ok(())
}

fn int(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    if !f
        .scalar_or_vector_component(result)
        .is_some_and(|c| f.is_int_scalar(c))
    {
        return Err(ArithError::ResultNotInt { op: inst.name() });
    }
    let shape = |t: Id| (f.component_count(t), f.bit_width(t));
    for (index, v) in operands(inst) {
        let ok = f.type_of(v).is_some_and(|t| {
            f.scalar_or_vector_component(t)
                .is_some_and(|c| f.is_int_scalar(c))
                && shape(t) == shape(result)
        });
        if !ok {
            return Err(ArithError::IntOperandMismatch {
                op: inst.name(),
                index,
            });
        }
    }
    Ok(())
}
