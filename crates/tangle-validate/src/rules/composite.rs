//! Composite and conversion instructions on scalars, vectors, matrices, arrays and structs
//! (SPIR-V 3.x "Composite Instructions" and "Conversion Instructions"; SPIRV-Tools
//! `validate_composites.cpp`, `validate_conversion.cpp`). Cooperative matrix forms are
//! `rules::coopmat`'s.

use super::Ctx;
use crate::facts::Type;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// A composite or conversion rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompositeError {
    /// OpCompositeExtract/Insert: at least one index, and the indexes walk the composite's type
    /// (within the bounds of vectors, matrices, sized arrays and structs) to the Result/Object
    /// type.
    #[error("{op}: the indexes do not walk the composite to the Result/Object type")]
    IndexWalk { op: String },
    /// OpCompositeInsert: "Result Type must be the same type as Composite."
    #[error("OpCompositeInsert Result Type must be the type of Composite")]
    InsertResultType,
    /// OpCompositeConstruct: constituents fill the result (vectors take at least two scalars
    /// and sub-vectors of the component type).
    #[error("OpCompositeConstruct constituents do not match the Result Type")]
    ConstructMismatch,
    /// OpVectorShuffle: result component type and count; each component literal selects a
    /// component of the two vectors (or is 0xFFFFFFFF).
    #[error("OpVectorShuffle {what}")]
    Shuffle { what: &'static str },
    /// OpVectorExtractDynamic / OpVectorInsertDynamic: vector, component and integer index types.
    #[error("{op}: {what}")]
    Dynamic { op: String, what: &'static str },
    /// OpCopyObject: "Result Type can be any type except OpTypeVoid. ... Operand ... must have
    /// the same type as Result Type."
    #[error("OpCopyObject {what}")]
    CopyObject { what: &'static str },
    /// OpTranspose: "Result Type must be an OpTypeMatrix. Matrix must be an object of type
    /// OpTypeMatrix. The number of columns and the column size of Matrix must be the reverse of
    /// those in Result Type. The types of the scalar components in Matrix and Result Type must
    /// be the same type."
    #[error("OpTranspose {what}")]
    Transpose { what: &'static str },
    /// Conversions: result and input kinds (float/signed/unsigned) per the opcode, same component
    /// count; UConvert/SConvert change the width, FConvert the component type; OpQuantizeToF16
    /// works on 32-bit floats; OpBitcast converts pointers only to pointers or integers.
    #[error("{op}: {what}")]
    Conversion { op: String, what: &'static str },
    /// OpBitcast: "must have the same number of total bits" (pointers aside).
    #[error("OpBitcast must keep the total bit count")]
    BitcastSize,
    /// With the Shader capability, 8- and 16-bit types that only a storage capability declares
    /// (no Int8, Int16 or Float16) are not composed, decomposed, shuffled or transposed, and
    /// are converted only by width (OpUConvert, OpSConvert, OpFConvert).
    #[error(
        "{op} cannot work on 8- or 16-bit types without the Int8, Int16 or Float16 capability"
    )]
    SmallType { op: String },
}

/// Checks composite and conversion instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), CompositeError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let f = cx.facts;
    if f.coopmat(result).is_some() {
        return Ok(());
    }
    composite_or_conversion(cx, inst, op, result)?;
    // Kept after the type rules, in SPIRV-Tools' order.
    let restricted = |t: Option<Id>| {
        f.has_capability(spirv::Capability::Shader) && t.is_some_and(|t| f.contains_limited_use(t))
    };
    let small = match op {
        Op::CompositeExtract
        | Op::CompositeInsert
        | Op::CompositeConstruct
        | Op::VectorShuffle
        | Op::VectorExtractDynamic
        | Op::VectorInsertDynamic
        | Op::Transpose
        | Op::CopyLogical => restricted(Some(result)),
        Op::ConvertFToU | Op::ConvertFToS | Op::ConvertSToF | Op::ConvertUToF | Op::Bitcast => {
            restricted(Some(result)) || restricted(operand_type(cx, inst, 0))
        }
        _ => false,
    };
    if small {
        return Err(CompositeError::SmallType { op: inst.name() });
    }
    Ok(())
}

fn composite_or_conversion(
    cx: &Ctx,
    inst: &Instruction,
    op: Op,
    result: Id,
) -> Result<(), CompositeError> {
    let f = cx.facts;
    match op {
        Op::CompositeExtract => {
            let reached = walk(cx, inst, 0, 1)?;
            if reached != result {
                return Err(CompositeError::IndexWalk { op: inst.name() });
            }
            Ok(())
        }
        Op::CompositeInsert => {
            if operand_type(cx, inst, 1) != Some(result) {
                return Err(CompositeError::InsertResultType);
            }
            let reached = walk(cx, inst, 1, 2)?;
            if operand_type(cx, inst, 0) != Some(reached) {
                return Err(CompositeError::IndexWalk { op: inst.name() });
            }
            Ok(())
        }
        Op::CompositeConstruct => construct(cx, inst, result),
        Op::VectorShuffle => shuffle(cx, inst, result),
        Op::VectorExtractDynamic | Op::VectorInsertDynamic => dynamic(cx, inst, op, result),
        Op::CopyObject => {
            if operand_type(cx, inst, 0) != Some(result) {
                return Err(CompositeError::CopyObject {
                    what: "Operand must have the Result Type",
                });
            }
            if matches!(f.ty(result), Some(Type::Void)) {
                return Err(CompositeError::CopyObject {
                    what: "Result Type cannot be void",
                });
            }
            Ok(())
        }
        Op::Transpose => transpose(cx, inst, result),
        Op::ConvertFToU
        | Op::ConvertFToS
        | Op::ConvertSToF
        | Op::ConvertUToF
        | Op::UConvert
        | Op::SConvert
        | Op::FConvert
        | Op::QuantizeToF16
        | Op::Bitcast => {
            // A cooperative matrix input is rules::coopmat's.
            if operand_type(cx, inst, 0).is_some_and(|t| f.coopmat(t).is_some()) {
                return Ok(());
            }
            if op == Op::Bitcast {
                bitcast(cx, inst, result)
            } else {
                conversion(cx, inst, op, result)
            }
        }
        _ => Ok(()),
    }
}

fn operand_type(cx: &Ctx, inst: &Instruction, i: usize) -> Option<Id> {
    inst.id_operand(i).and_then(|v| cx.facts.type_of(v))
}

/// SPIRV-Tools `GetExtractInsertValueType`: walks the type of operand `composite` by the
/// literal indexes from operand `first` and returns the type reached.
fn walk(
    cx: &Ctx,
    inst: &Instruction,
    composite: usize,
    first: usize,
) -> Result<Id, CompositeError> {
    let f = cx.facts;
    let err = || CompositeError::IndexWalk { op: inst.name() };
    let indexes: Vec<u64> = inst
        .operands
        .iter()
        .skip(first)
        .filter_map(Operand::literal)
        .collect();
    if indexes.is_empty() || indexes.len() > 255 {
        return Err(err());
    }
    let mut current = operand_type(cx, inst, composite).ok_or_else(err)?;
    for index in indexes {
        current = match f.ty(current) {
            Some(Type::Vector { component, count }) if index < u64::from(*count) => *component,
            Some(Type::Matrix { column, count }) if index < u64::from(*count) => *column,
            Some(Type::Array { element, length }) => {
                // A specialization-constant length cannot be checked.
                if f.eval_int(*length).is_some_and(|n| index >= n) {
                    return Err(err());
                }
                *element
            }
            Some(Type::RuntimeArray { element }) => *element,
            Some(Type::CoopMat { component, .. }) => *component,
            Some(Type::Struct { members }) => {
                match usize::try_from(index).ok().and_then(|i| members.get(i)) {
                    Some(m) => *m,
                    None => return Err(err()),
                }
            }
            _ => return Err(err()),
        };
    }
    Ok(current)
}

fn construct(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let parts: Vec<Option<Id>> = inst
        .operands
        .iter()
        .map(|o| o.id().and_then(|v| f.type_of(v)))
        .collect();
    let ok = match f.ty(result) {
        // Vectors take at least two scalars and vectors of the component type, totalling the
        // count.
        Some(Type::Vector { component, count }) => {
            let mut total: u64 = 0;
            let mut ok = parts.len() >= 2;
            for p in &parts {
                match p.and_then(|t| f.ty(t)) {
                    _ if *p == Some(*component) => total += 1,
                    Some(Type::Vector {
                        component: c,
                        count: n,
                    }) if c == component => total += u64::from(*n),
                    _ => ok = false,
                }
            }
            ok && total == u64::from(*count)
        }
        Some(Type::Matrix { column, count }) => {
            parts.len() == *count as usize && parts.iter().all(|p| *p == Some(*column))
        }
        Some(Type::Array { element, length }) => {
            let spec = matches!(
                f.constants.get(length).map(|c| &c.value),
                Some(crate::facts::ConstValue::Spec)
            );
            spec || (f.eval_int(*length) == Some(parts.len() as u64)
                && parts.iter().all(|p| *p == Some(*element)))
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
    let err = |what| Err(CompositeError::Shuffle { what });
    let vector = |t: Option<Id>| match t.and_then(|t| f.ty(t)) {
        Some(Type::Vector { component, count }) => Some((*component, *count)),
        _ => None,
    };
    let Some((component, count)) = vector(Some(result)) else {
        return err("Result Type must be a vector");
    };
    let selectors: Vec<u64> = inst
        .operands
        .iter()
        .skip(2)
        .filter_map(Operand::literal)
        .collect();
    if selectors.len() != count as usize {
        return err("needs one component literal per result component");
    }
    let (Some((c1, n1)), Some((c2, n2))) = (
        vector(operand_type(cx, inst, 0)),
        vector(operand_type(cx, inst, 1)),
    ) else {
        return err("Vector 1 and Vector 2 must be vectors");
    };
    if c1 != component || c2 != component {
        return err("vectors must have the Result Type's component type");
    }
    if selectors
        .iter()
        .any(|s| *s != 0xFFFF_FFFF && *s >= u64::from(n1) + u64::from(n2))
    {
        return err("component literal is out of range");
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
    let vector_type = operand_type(cx, inst, 0);
    let index_at = if op == Op::VectorExtractDynamic {
        if !matches!(
            f.ty(result),
            Some(Type::Bool | Type::Int { .. } | Type::Float { .. })
        ) {
            return err("Result Type must be a scalar");
        }
        let Some(Type::Vector { component, .. }) = vector_type.and_then(|t| f.ty(t)) else {
            return err("Vector must be a vector");
        };
        if *component != result {
            return err("the vector's component type must be the Result Type");
        }
        1
    } else {
        let Some(Type::Vector { component, .. }) = f.ty(result) else {
            return err("Result Type must be a vector");
        };
        if vector_type != Some(result) {
            return err("Vector must have the Result Type");
        }
        if operand_type(cx, inst, 1) != Some(*component) {
            return err("Component must have the vector's component type");
        }
        2
    };
    if !operand_type(cx, inst, index_at).is_some_and(|t| f.is_int_scalar(t)) {
        return err("Index must be an integer scalar");
    }
    Ok(())
}

fn transpose(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let err = |what| Err(CompositeError::Transpose { what });
    let Some((rows, cols, _, component)) = f.matrix_info(result) else {
        return err("Result Type must be a matrix");
    };
    let Some((m_rows, m_cols, _, m_component)) =
        operand_type(cx, inst, 0).and_then(|t| f.matrix_info(t))
    else {
        return err("Matrix must be a matrix");
    };
    if component != m_component {
        return err("Matrix must have the Result Type's component type");
    }
    if rows != m_cols || cols != m_rows {
        return err("Matrix must have the Result Type's rows as columns and columns as rows");
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Unsigned,
    AnyInt,
}

/// SPIRV-Tools `ValidateConvert*`, `ValidateUConvert`, `ValidateSConvert`, `ValidateFConvert`
/// and `ValidateQuantizeToF16`.
fn conversion(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let err = |what| {
        Err(CompositeError::Conversion {
            op: inst.name(),
            what,
        })
    };
    let input = operand_type(cx, inst, 0);
    if op == Op::QuantizeToF16 {
        if !f.is_float_scalar_or_vector(result) || f.width(result) != 32 {
            return err("Result Type must be a 32-bit float scalar or vector");
        }
        if input != Some(result) {
            return err("the input must have the Result Type");
        }
        return Ok(());
    }
    let (want_result, want_input) = match op {
        Op::ConvertFToU => (Kind::Unsigned, Kind::Float),
        // Both integer signednesses are accepted as results and inputs where the opcode's
        // signedness is about interpretation, as SPIRV-Tools does.
        Op::ConvertFToS => (Kind::AnyInt, Kind::Float),
        Op::ConvertSToF | Op::ConvertUToF => (Kind::Float, Kind::AnyInt),
        Op::UConvert => (Kind::Unsigned, Kind::AnyInt),
        Op::SConvert => (Kind::AnyInt, Kind::AnyInt),
        _ => (Kind::Float, Kind::Float),
    };
    let fits = |t: Id, k: Kind| match k {
        Kind::Float => f.is_float_scalar_or_vector(t),
        Kind::Unsigned => f.is_unsigned_int_scalar_or_vector(t),
        Kind::AnyInt => f.is_int_scalar_or_vector(t),
    };
    if !fits(result, want_result) {
        return err("the Result Type has the wrong component kind");
    }
    let Some(input) = input.filter(|t| fits(*t, want_input)) else {
        return err("the input has the wrong component kind");
    };
    if f.dimension(input) != f.dimension(result) {
        return err("the input must have the Result Type's component count");
    }
    match op {
        Op::UConvert | Op::SConvert if f.width(input) == f.width(result) => {
            err("the conversion must change the component width")
        }
        Op::FConvert if f.component_type(input) == f.component_type(result) => {
            err("the conversion must change the component type")
        }
        _ => Ok(()),
    }
}

/// SPIRV-Tools `ValidateBitcast` for everything but cooperative matrices.
fn bitcast(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), CompositeError> {
    let f = cx.facts;
    let err = |what| {
        Err(CompositeError::Conversion {
            op: inst.name(),
            what,
        })
    };
    let Some(input) = operand_type(cx, inst, 0) else {
        return err("the input must have a type");
    };
    let pointer = |t: Id| {
        matches!(
            f.ty(t),
            Some(Type::Pointer { .. } | Type::UntypedPointer { .. })
        )
    };
    let numeric = |t: Id| {
        f.is_int_scalar(t) || f.is_int_vector(t) || f.is_float_scalar(t) || f.is_float_vector(t)
    };
    let (result_ptr, input_ptr) = (pointer(result), pointer(input));
    if !result_ptr && !numeric(result) {
        return err("Result Type must be a pointer or a numeric scalar or vector");
    }
    if !input_ptr && !numeric(input) {
        return err("the input must be a pointer or a numeric scalar or vector");
    }
    // From SPIR-V 1.5 (or with SPV_KHR_physical_storage_buffer), 32-bit integer vectors may
    // hold pointers too.
    let int_vectors_hold_pointers =
        cx.module.header.version >= (1, 5) || f.has_extension("SPV_KHR_physical_storage_buffer");
    let holds_pointer = |t: Id| {
        f.is_int_scalar(t) || (int_vectors_hold_pointers && f.is_int_vector(t) && f.width(t) == 32)
    };
    if result_ptr && !input_ptr && !holds_pointer(input) {
        return err("a pointer can be made only from a pointer or an integer");
    }
    if input_ptr && !result_ptr && !holds_pointer(result) {
        return err("a pointer can be converted only to a pointer or an integer");
    }
    if !result_ptr && !input_ptr {
        let bits = |t: Id| u64::from(f.width(t)) * u64::from(f.dimension(t));
        if bits(result) != bits(input) {
            return Err(CompositeError::BitcastSize);
        }
    }
    Ok(())
}
