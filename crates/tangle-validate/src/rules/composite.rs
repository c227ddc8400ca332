//! Composite and conversion instructions on scalars and vectors (SPIR-V 3.x "Composite
//! Instructions" and "Conversion Instructions"; SPIRV-Tools `validate_composites.cpp`,
//! `validate_conversion.cpp`). Cooperative matrix forms are `rules::coopmat`'s.

use super::Ctx;
use crate::facts::Type;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// A composite or conversion rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompositeError {
    /// OpCompositeExtract/Insert: the indexes walk the composite's type to the object type.
    #[error("{op}: the indexes do not walk the composite to the Result/Object type")]
    IndexWalk { op: String },
    /// OpCompositeInsert: "Result Type must be the same type as Composite."
    #[error("OpCompositeInsert Result Type must be the type of Composite")]
    InsertResultType,
    /// OpCompositeConstruct: constituents fill the result (vectors may take sub-vectors).
    #[error("OpCompositeConstruct constituents do not match the Result Type")]
    ConstructMismatch,
    /// OpVectorShuffle: result component type and count; each component literal selects a
    /// component of the two vectors (or is 0xFFFFFFFF).
    #[error("OpVectorShuffle {what}")]
    Shuffle { what: &'static str },
    /// OpVectorExtractDynamic / OpVectorInsertDynamic: vector, component and integer index types.
    #[error("{op}: {what}")]
    Dynamic { op: String, what: &'static str },
    /// Conversions: result and input kinds (float/signed/unsigned) per the opcode, same component
    /// count; UConvert/SConvert/FConvert change the width.
    #[error("{op}: {what}")]
    Conversion { op: String, what: &'static str },
    /// OpBitcast: "must have the same number of total bits" (pointers aside).
    #[error("OpBitcast must keep the total bit count")]
    BitcastSize,
}

/// Checks composite and conversion instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), CompositeError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    if cx.facts.coopmat(result).is_some() {
        return Ok(());
    }
    match op {
        Op::CompositeExtract => {
            let composite = inst.id_operand(0).and_then(|c| cx.facts.type_of(c));
            walk(cx, inst, composite, 1, result)
        }
        Op::CompositeInsert => {
            let composite = inst.id_operand(1).and_then(|c| cx.facts.type_of(c));
            if composite != Some(result) {
                return Err(CompositeError::InsertResultType);
            }
            let object = inst
                .id_operand(0)
                .and_then(|o| cx.facts.type_of(o))
                .unwrap_or(0);
            walk(cx, inst, composite, 2, object)
        }
        Op::CompositeConstruct => construct(cx, inst, result),
        Op::VectorShuffle => shuffle(cx, inst, result),
        Op::VectorExtractDynamic | Op::VectorInsertDynamic => dynamic(cx, inst, op, result),
        Op::ConvertFToU
        | Op::ConvertFToS
        | Op::ConvertSToF
        | Op::ConvertUToF
        | Op::UConvert
        | Op::SConvert
        | Op::FConvert => conversion(cx, inst, op, result),
        Op::Bitcast => bitcast(cx, inst, result),
        _ => Ok(()),
    }
}

/// Walks `ty` by the literal indexes from operand `first` and compares with `expected`.
fn walk(
    cx: &Ctx,
    inst: &Instruction,
    ty: Option<Id>,
    first: usize,
    expected: Id,
) -> Result<(), CompositeError> {
    let f = cx.facts;
    let err = || CompositeError::IndexWalk { op: inst.name() };
    let Some(mut current) = ty else {
        return Err(err());
    };
    for index in inst
        .operands
        .iter()
        .skip(first)
        .filter_map(Operand::literal)
    {
        current = match f.ty(current) {
            Some(Type::Vector { component, count }) if index < u64::from(*count) => *component,
            Some(Type::Matrix { column, count }) if index < u64::from(*count) => *column,
            Some(Type::Array { element, length }) => {
                if f.eval_int(*length).is_some_and(|n| index >= n) {
                    return Err(err());
                }
                *element
            }
            Some(Type::RuntimeArray { element }) => *element,
            Some(Type::Struct { members }) => {
                match usize::try_from(index).ok().and_then(|i| members.get(i)) {
                    Some(m) => *m,
                    None => return Err(err()),
                }
            }
            _ => return Err(err()),
        };
    }
    if current != expected {
        return Err(err());
    }
    Ok(())
}

fn construct(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let parts: Vec<Option<Id>> = inst
        .operands
        .iter()
        .filter_map(Operand::id)
        .map(|v| f.type_of(v))
        .collect();
    let ok = match f.ty(result) {
        // Vectors take scalars and vectors of the component type, totalling the count.
        Some(Type::Vector { component, count }) => {
            let mut total: u64 = 0;
            let mut ok = true;
            for p in &parts {
                match p.and_then(|t| f.ty(t)) {
                    Some(Type::Vector {
                        component: c,
                        count: n,
                    }) if c == component => total += u64::from(*n),
                    _ if *p == Some(*component) => total += 1,
                    _ => ok = false,
                }
            }
            ok && total == u64::from(*count)
        }
        Some(Type::Matrix { column, count }) => {
            parts.len() == *count as usize && parts.iter().all(|p| *p == Some(*column))
        }
        Some(Type::Array { element, length }) => {
            f.eval_int(*length).is_none_or(|n| n == parts.len() as u64)
                && parts.iter().all(|p| *p == Some(*element))
        }
        Some(Type::Struct { members }) => {
            parts.len() == members.len() && members.iter().zip(&parts).all(|(m, p)| Some(*m) == *p)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(CompositeError::ConstructMismatch)
    }
}

fn shuffle(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let vector = |i: usize| match inst.id_operand(i).and_then(|v| f.value_type(v)) {
        Some(Type::Vector { component, count }) => Some((*component, *count)),
        _ => None,
    };
    let (Some((c1, n1)), Some((c2, n2)), Some(Type::Vector { component, count })) =
        (vector(0), vector(1), f.ty(result))
    else {
        return Err(CompositeError::Shuffle {
            what: "operands and Result Type must be vectors",
        });
    };
    if c1 != *component || c2 != *component {
        return Err(CompositeError::Shuffle {
            what: "vectors must have the Result Type's component type",
        });
    }
    let selectors: Vec<u64> = inst
        .operands
        .iter()
        .skip(2)
        .filter_map(Operand::literal)
        .collect();
    if selectors.len() != *count as usize {
        return Err(CompositeError::Shuffle {
            what: "needs one component literal per result component",
        });
    }
    if selectors
        .iter()
        .any(|s| *s != 0xFFFF_FFFF && *s >= u64::from(n1) + u64::from(n2))
    {
        return Err(CompositeError::Shuffle {
            what: "component literal is out of range",
        });
    }
    Ok(())
}

fn dynamic(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let err = |what| {
        Err(CompositeError::Dynamic {
            op: inst.name(),
            what,
        })
    };
    let vector_type = inst.id_operand(0).and_then(|v| f.type_of(v));
    let Some(Type::Vector { component, .. }) = vector_type.and_then(|t| f.ty(t)) else {
        return err("Vector must be a vector");
    };
    let (expected_result, index_at) = if op == Op::VectorExtractDynamic {
        (*component, 1)
    } else {
        (vector_type.unwrap_or(0), 2)
    };
    if result != expected_result {
        return err(
            "Result Type must be the vector's component type (extract) or the vector type (insert)",
        );
    }
    if op == Op::VectorInsertDynamic
        && inst.id_operand(1).and_then(|v| f.type_of(v)) != Some(*component)
    {
        return err("Component must have the vector's component type");
    }
    if !inst
        .id_operand(index_at)
        .and_then(|i| f.type_of(i))
        .is_some_and(|t| f.is_int_scalar(t))
    {
        return err("Index must be an integer scalar");
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Signed,
    Unsigned,
    AnyInt,
}

fn conversion(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let (want_result, want_input, width_changes) = match op {
        Op::ConvertFToU => (Kind::Unsigned, Kind::Float, false),
        // Both integer signednesses are accepted as results and inputs where the opcode's
        // signedness is about interpretation, as SPIRV-Tools does.
        Op::ConvertFToS => (Kind::AnyInt, Kind::Float, false),
        Op::ConvertSToF | Op::ConvertUToF => (Kind::Float, Kind::AnyInt, false),
        Op::UConvert => (Kind::Unsigned, Kind::AnyInt, true),
        Op::SConvert => (Kind::AnyInt, Kind::AnyInt, true),
        _ => (Kind::Float, Kind::Float, true),
    };
    let fits = |t: Id, k: Kind| {
        let c = f.scalar_or_vector_component(t);
        match c.and_then(|c| f.ty(c)) {
            Some(Type::Float { .. }) => k == Kind::Float,
            Some(Type::Int { signed, .. }) => {
                k == Kind::AnyInt
                    || k == if *signed {
                        Kind::Signed
                    } else {
                        Kind::Unsigned
                    }
            }
            _ => false,
        }
    };
    let err = |what| {
        Err(CompositeError::Conversion {
            op: inst.name(),
            what,
        })
    };
    if !fits(result, want_result) {
        return err("the Result Type has the wrong component kind");
    }
    let Some(input) = inst.id_operand(0).and_then(|v| f.type_of(v)) else {
        return Ok(());
    };
    if !fits(input, want_input) {
        return err("the input has the wrong component kind");
    }
    if f.component_count(input) != f.component_count(result) {
        return err("the input must have the Result Type's component count");
    }
    if width_changes && f.bit_width(input) == f.bit_width(result) {
        return err("the conversion must change the component width");
    }
    Ok(())
}

fn bitcast(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let Some(input) = inst.id_operand(0).and_then(|v| f.type_of(v)) else {
        return Ok(());
    };
    let bits = |t: Id| match (f.component_count(t), f.bit_width(t)) {
        (Some(n), Some(w))
            if !f
                .scalar_or_vector_component(t)
                .is_some_and(|c| f.is_bool_scalar(c)) =>
        {
            Some(u64::from(n) * u64::from(w))
        }
        _ => None,
    };
    // Pointer casts and cooperative matrices have their own rules.
    match (bits(input), bits(result)) {
        (Some(a), Some(b)) if a != b => Err(CompositeError::BitcastSize),
        _ => Ok(()),
    }
}
