//! Relational and logical instructions and OpSelect (SPIR-V 3.x "Relational and Logical
//! Instructions"; SPIRV-Tools `validate_logicals.cpp`): boolean results with the operands'
//! component count, operands of the kind the opcode compares, and OpSelect's object types.

use super::Ctx;
use crate::facts::Type;
use spirv::{AddressingModel, Capability, Op};
use tangle_spirv::{Id, Instruction};

/// A relational or logical rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LogicalError {
    /// "Result Type must be a scalar or vector of Boolean type" (a Boolean scalar for OpAny and
    /// OpAll).
    #[error("{op} Result Type must be a boolean scalar or vector")]
    ResultNotBool { op: String },
    /// The operands are of the kind the opcode compares, with the Result Type's component count:
    /// integers of one width, floats of one type, or booleans of the Result Type (a boolean
    /// vector for OpAny and OpAll).
    #[error("{op} operands must be {kind} with the Result Type's component count")]
    OperandMismatch { op: String, kind: &'static str },
    /// OpSelect: the Result Type is a scalar, vector, pointer (with variable pointers) or, from
    /// SPIR-V 1.4, a composite; "Condition must be a scalar or vector of Boolean type" with the
    /// Result Type's component count when it is a vector; "Object 1 and Object 2 must have the
    /// same type as Result Type".
    #[error("OpSelect {what}")]
    Select { what: &'static str },
    /// SPV_KHR_bfloat16: "Variables with a type that is or includes a floating-point type with
    /// the BFloat16KHR encoding must only be used with the following instructions", which name
    /// no relational instruction (SPIRV-Tools' invalid-type pass: FP8 likewise).
    #[error("{op} does not support floating-point types with an FP encoding (BFloat16, FP8)")]
    EncodedFloatNotSupported { op: String },
}

/// Checks relational, logical and select instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), LogicalError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    match op {
        Op::Any | Op::All => any_all(cx, inst, result),
        Op::IsNan | Op::IsInf | Op::IsFinite | Op::IsNormal | Op::SignBitSet => {
            float_test(cx, inst, result)
        }
        Op::FOrdEqual
        | Op::FUnordEqual
        | Op::FOrdNotEqual
        | Op::FUnordNotEqual
        | Op::FOrdLessThan
        | Op::FUnordLessThan
        | Op::FOrdGreaterThan
        | Op::FUnordGreaterThan
        | Op::FOrdLessThanEqual
        | Op::FUnordLessThanEqual
        | Op::FOrdGreaterThanEqual
        | Op::FUnordGreaterThanEqual
        | Op::LessOrGreater
        | Op::Ordered
        | Op::Unordered => float_compare(cx, inst, result),
        Op::LogicalEqual
        | Op::LogicalNotEqual
        | Op::LogicalOr
        | Op::LogicalAnd
        | Op::LogicalNot => logical(cx, inst, result),
        Op::IEqual
        | Op::INotEqual
        | Op::UGreaterThan
        | Op::SGreaterThan
        | Op::UGreaterThanEqual
        | Op::SGreaterThanEqual
        | Op::ULessThan
        | Op::SLessThan
        | Op::ULessThanEqual
        | Op::SLessThanEqual => int_compare(cx, inst, result),
        Op::Select => select(cx, inst, result),
        _ => Ok(()),
    }
}

fn operand_type(cx: &Ctx, inst: &Instruction, i: usize) -> Option<Id> {
    inst.id_operand(i).and_then(|v| cx.facts.type_of(v))
}

fn bool_result(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    if cx.facts.is_bool_scalar_or_vector(result) {
        Ok(())
    } else {
        Err(LogicalError::ResultNotBool { op: inst.name() })
    }
}

fn mismatch(inst: &Instruction, kind: &'static str) -> Result<(), LogicalError> {
    Err(LogicalError::OperandMismatch {
        op: inst.name(),
        kind,
    })
}

/// OpAny / OpAll: a boolean scalar from a boolean vector.
fn any_all(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    let f = cx.facts;
    if !f.is_bool_scalar(result) {
        return Err(LogicalError::ResultNotBool { op: inst.name() });
    }
    if !operand_type(cx, inst, 0).is_some_and(|t| f.is_bool_vector(t)) {
        return mismatch(inst, "a boolean vector");
    }
    Ok(())
}

/// A float test or comparison of bfloat16 or FP8 values.
fn encoded_float_operand(cx: &Ctx, inst: &Instruction) -> Result<(), LogicalError> {
    if operand_type(cx, inst, 0).is_some_and(|t| cx.facts.is_encoded_float(t)) {
        return Err(LogicalError::EncodedFloatNotSupported { op: inst.name() });
    }
    Ok(())
}

/// OpIsNan, OpIsInf and friends: a float scalar or vector of the Result Type's count.
fn float_test(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    let f = cx.facts;
    bool_result(cx, inst, result)?;
    encoded_float_operand(cx, inst)?;
    let ok = operand_type(cx, inst, 0)
        .is_some_and(|t| f.is_float_scalar_or_vector(t) && f.dimension(t) == f.dimension(result));
    if !ok {
        return mismatch(inst, "floats");
    }
    Ok(())
}

/// Float comparisons: the left operand a float scalar or vector of the Result Type's count,
/// the right one of the same type.
fn float_compare(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    let f = cx.facts;
    bool_result(cx, inst, result)?;
    encoded_float_operand(cx, inst)?;
    let left = operand_type(cx, inst, 0);
    let ok = left
        .is_some_and(|t| f.is_float_scalar_or_vector(t) && f.dimension(t) == f.dimension(result));
    if !ok || left != operand_type(cx, inst, 1) {
        return mismatch(inst, "floats of one type");
    }
    Ok(())
}

/// OpLogicalEqual / NotEqual / Or / And / Not: every operand has the Result Type.
fn logical(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    bool_result(cx, inst, result)?;
    let arity = if inst.op() == Some(Op::LogicalNot) {
        1
    } else {
        2
    };
    if (0..arity).any(|i| operand_type(cx, inst, i) != Some(result)) {
        return mismatch(inst, "booleans of the Result Type");
    }
    Ok(())
}

/// Integer comparisons: integer scalars or vectors of the Result Type's count and one width.
fn int_compare(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    let f = cx.facts;
    bool_result(cx, inst, result)?;
    let int_of_count = |t: Option<Id>| {
        t.filter(|t| f.is_int_scalar_or_vector(*t) && f.dimension(*t) == f.dimension(result))
    };
    let (Some(left), Some(right)) = (
        int_of_count(operand_type(cx, inst, 0)),
        int_of_count(operand_type(cx, inst, 1)),
    ) else {
        return mismatch(inst, "integers");
    };
    if f.width(left) != f.width(right) {
        return mismatch(inst, "integers of one width");
    }
    Ok(())
}

/// `OpSelect %ty %condition %object1 %object2`.
fn select(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), LogicalError> {
    let f = cx.facts;
    let err = |what| Err(LogicalError::Select { what });
    // SPIR-V 1.4 allows composites, and a scalar condition for vector objects.
    let composites = cx.module.header.version >= (1, 4);
    let dimension = match f.ty(result) {
        Some(Type::Pointer { .. } | Type::UntypedPointer { .. }) => {
            let logical = f.addressing_model == Some(AddressingModel::Logical as u32);
            // VariablePointers implies VariablePointersStorageBuffer.
            if logical && !f.has_capability(Capability::VariablePointersStorageBuffer) {
                return err("on pointers needs the VariablePointers or VariablePointersStorageBuffer capability");
            }
            1
        }
        Some(Type::Vector { count, .. }) => *count,
        Some(Type::Bool | Type::Int { .. } | Type::Float { .. }) => 1,
        Some(Type::Array { .. } | Type::Matrix { .. } | Type::Struct { .. }) if composites => 1,
        _ => {
            return err(if composites {
                "Result Type must be a scalar, vector, pointer or composite"
            } else {
                "Result Type must be a scalar, vector or pointer"
            })
        }
    };
    let condition = operand_type(cx, inst, 0);
    let Some(condition) = condition.filter(|c| f.is_bool_scalar_or_vector(*c)) else {
        return err("Condition must be a boolean scalar or vector");
    };
    if f.dimension(condition) != dimension && (!composites || f.is_bool_vector(condition)) {
        return err("a vector Condition must have the Result Type's component count");
    }
    if operand_type(cx, inst, 1) != Some(result) || operand_type(cx, inst, 2) != Some(result) {
        return err("objects must have the Result Type");
    }
    Ok(())
}
