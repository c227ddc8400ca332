//! Relational and logical instructions and OpSelect (SPIR-V 3.x "Relational and Logical
//! Instructions"; SPIRV-Tools `validate_logicals.cpp`): boolean results with the operands'
//! component count, operands of the kind the opcode compares, and OpSelect's object types.

use super::Ctx;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// A relational or logical rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LogicalError {
    /// "Result Type must be a scalar or vector of Boolean type."
    #[error("{op} Result Type must be a boolean scalar or vector")]
    ResultNotBool { op: String },
    /// Operands have the Result Type's component count and the compared kind (and for integer
    /// comparisons, the same width).
    #[error("{op} operands must be {kind} with the Result Type's component count")]
    OperandMismatch { op: String, kind: &'static str },
    /// OpSelect: "Condition must be a scalar or vector of Boolean type" with the objects' count;
    /// "Object 1 and Object 2 must have the same type as Result Type".
    #[error("OpSelect {what}")]
    Select { what: &'static str },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
}

/// Checks relational, logical and select instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), LogicalError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let kind = match op {
        Op::LogicalEqual
        | Op::LogicalNotEqual
        | Op::LogicalOr
        | Op::LogicalAnd
        | Op::LogicalNot => Kind::Bool,
        Op::IEqual
        | Op::INotEqual
        | Op::UGreaterThan
        | Op::SGreaterThan
        | Op::UGreaterThanEqual
        | Op::SGreaterThanEqual
        | Op::ULessThan
        | Op::SLessThan
        | Op::ULessThanEqual
        | Op::SLessThanEqual => Kind::Int,
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
        | Op::IsNan
        | Op::IsInf => Kind::Float,
        Op::Select => return select(cx, inst),
        _ => return Ok(()),
    };
    compare(cx, inst, kind)
}

fn compare(cx: &Ctx, inst: &Instruction, kind: Kind) -> Result<(), LogicalError> {
    let f = cx.facts;
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    if !f
        .scalar_or_vector_component(result)
        .is_some_and(|c| f.is_bool_scalar(c))
    {
        return Err(LogicalError::ResultNotBool { op: inst.name() });
    }
    let count = f.component_count(result);
    let mut width = None;
    for v in inst.operands.iter().filter_map(Operand::id) {
        let t = f.type_of(v);
        let component = t.and_then(|t| f.scalar_or_vector_component(t));
        let ok_kind = component.is_some_and(|c| match kind {
            Kind::Bool => f.is_bool_scalar(c),
            Kind::Int => f.is_int_scalar(c),
            Kind::Float => f.is_float_scalar(c),
        });
        let this_width = t.and_then(|t| f.bit_width(t));
        let same_width = kind != Kind::Int || width.is_none() || width == this_width;
        width = this_width;
        if !ok_kind || t.and_then(|t| f.component_count(t)) != count || !same_width {
            let kind = match kind {
                Kind::Bool => "booleans",
                Kind::Int => "integers of one width",
                Kind::Float => "floats",
            };
            return Err(LogicalError::OperandMismatch {
                op: inst.name(),
                kind,
            });
        }
    }
    Ok(())
}

fn select(cx: &Ctx, inst: &Instruction) -> Result<(), LogicalError> {
    let f = cx.facts;
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let ty = |i: usize| -> Option<Id> { inst.id_operand(i).and_then(|v| f.type_of(v)) };
    let condition = ty(0);
    if !condition
        .and_then(|c| f.scalar_or_vector_component(c))
        .is_some_and(|c| f.is_bool_scalar(c))
    {
        return Err(LogicalError::Select {
            what: "Condition must be a boolean scalar or vector",
        });
    }
    if ty(1) != Some(result) || ty(2) != Some(result) {
        return Err(LogicalError::Select {
            what: "objects must have the Result Type",
        });
    }
    let condition_count = condition.and_then(|c| f.component_count(c));
    if condition_count != Some(1) && condition_count != f.component_count(result) {
        return Err(LogicalError::Select {
            what: "a vector Condition must have the objects' component count",
        });
    }
    Ok(())
}
