//! Arithmetic and bit instructions on scalars, vectors and matrices (SPIR-V 3.x "Arithmetic
//! Instructions" and "Bit Instructions"; SPIRV-Tools `validate_arithmetics.cpp` and
//! `validate_bitwise.cpp`): result and operand types of the float and integer operations, the
//! linear-algebra products, the extended (carry, borrow, wide multiply) forms, shifts, bitwise
//! operations and the bit-field instructions. Cooperative matrix forms are checked by
//! `rules::coopmat`.

use super::Ctx;
use crate::vuid::Vuid;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// An arithmetic or bit rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArithError {
    /// OpF*: "Result Type must be a scalar or vector of floating-point type."
    #[error("{op} Result Type must be a float scalar or vector")]
    ResultNotFloat { op: String },
    /// OpI*/OpS*: "Result Type must be a scalar or vector of integer type."
    #[error("{op} Result Type must be an integer scalar or vector")]
    ResultNotInt { op: String },
    /// OpUDiv/OpUMod: "Result Type must be a scalar or vector of integer type, whose Signedness
    /// operand is 0."
    #[error("{op} Result Type must be an unsigned integer scalar or vector")]
    ResultNotUnsigned { op: String },
    /// Float ops, OpUDiv, OpUMod: "The types of ... operands must be the same as Result Type."
    #[error("{op} operand {index} must have the Result Type")]
    OperandTypeMismatch { op: String, index: usize },
    /// SPIRV-Tools' invalid-type pass: BFloat16 and FP8 values are storage formats; arithmetic
    /// on them is not defined (their extensions allow only conversions, loads and stores, and
    /// cooperative matrix multiplication).
    #[error("{op} does not support floating-point types with an FP encoding (BFloat16, FP8)")]
    EncodedFloatNotSupported { op: String },
    /// SPV_KHR_bfloat16: "If the Result Type (and the component types of Vector 1 and Vector 2)
    /// has a BFloat16KHR encoding then BFloat16DotProductKHR must be declared."
    #[error("OpDot on bfloat16 needs the BFloat16DotProductKHR capability")]
    DotBFloat16NeedsCapability,
    /// Integer ops: "... must be a scalar or vector of integer type. It must have the same number
    /// of components as Result Type. The component width must equal the component width in
    /// Result Type."
    #[error("{op} operand {index} must be an integer scalar or vector with the Result Type's width and component count")]
    IntOperandMismatch { op: String, index: usize },
    /// OpDot, OpVectorTimesScalar, OpMatrixTimesScalar, OpVectorTimesMatrix,
    /// OpMatrixTimesVector, OpMatrixTimesMatrix, OpOuterProduct: the shapes of the operands and
    /// the result (SPIRV-Tools checks them in this order).
    #[error("{op}: {what}")]
    LinearAlgebra { op: String, what: &'static str },
    /// OpIAddCarry, OpISubBorrow, OpUMulExtended, OpSMulExtended: "Result Type must be from
    /// OpTypeStruct. The struct must have two members, and the two members must be the same
    /// type. The member type must be a scalar or vector of integer type" (unsigned but for
    /// OpSMulExtended), and both operands have the member type.
    #[error("{op}: {what}")]
    Extended { op: String, what: &'static str },
    /// Shifts, bitwise operations, bit-field instructions, OpBitReverse and OpBitCount: integer
    /// scalars or vectors with the Result Type's component count (and width, where the
    /// instruction says so).
    #[error("{op}: {what}")]
    Bitwise { op: String, what: &'static str },
    /// Vulkan: the Base of the bit-field instructions, OpBitReverse and OpBitCount must be a
    /// 32-bit integer (unless the maintenance9 feature is enabled, which `spirv-val` does not
    /// assume).
    #[error("{op}: in Vulkan the Base operand must be a 32-bit integer scalar or vector")]
    VulkanBitwiseBase32 { op: String },
}

impl ArithError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            ArithError::VulkanBitwiseBase32 { .. } => Some(Vuid("VUID-RuntimeSpirv-None-10824")),
            _ => None,
        }
    }
}

/// Checks arithmetic and bit instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), ArithError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    // The float arithmetic SPIRV-Tools' invalid-type pass names; SPV_KHR_bfloat16: "Variables
    // with a type that is or includes a floating-point type with the BFloat16KHR encoding must
    // only be used with the following instructions" (conversions, composites, memory, OpDot,
    // the cooperative-matrix MulAdd and Length, OpSelect, OpPhi, ... no arithmetic).
    let is_float_op = matches!(
        op,
        Op::FAdd
            | Op::FSub
            | Op::FMul
            | Op::FDiv
            | Op::FRem
            | Op::FMod
            | Op::FNegate
            | Op::VectorTimesScalar
            | Op::MatrixTimesScalar
            | Op::VectorTimesMatrix
            | Op::MatrixTimesVector
            | Op::MatrixTimesMatrix
            | Op::OuterProduct
    );
    if is_float_op && cx.facts.is_encoded_float(result) {
        return Err(ArithError::EncodedFloatNotSupported { op: inst.name() });
    }
    // The cooperative matrix forms SPIRV-Tools accepts belong to rules::coopmat.
    let coopmat_form = matches!(
        op,
        Op::FAdd
            | Op::FSub
            | Op::FMul
            | Op::FDiv
            | Op::FNegate
            | Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::SDiv
            | Op::SNegate
            | Op::UDiv
            | Op::MatrixTimesScalar
    );
    if coopmat_form && cx.facts.coopmat(result).is_some() {
        return Ok(());
    }
    match op {
        Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod | Op::FNegate => {
            float(cx, inst, result)
        }
        Op::UDiv | Op::UMod => unsigned(cx, inst, result),
        Op::IAdd | Op::ISub | Op::IMul | Op::SDiv | Op::SRem | Op::SMod | Op::SNegate => {
            int(cx, inst, result)
        }
        Op::Dot => dot(cx, inst, result),
        Op::VectorTimesScalar | Op::MatrixTimesScalar => times_scalar(cx, inst, op, result),
        Op::VectorTimesMatrix => vector_times_matrix(cx, inst, result),
        Op::MatrixTimesVector => matrix_times_vector(cx, inst, result),
        Op::MatrixTimesMatrix => matrix_times_matrix(cx, inst, result),
        Op::OuterProduct => outer_product(cx, inst, result),
        Op::IAddCarry | Op::ISubBorrow | Op::UMulExtended | Op::SMulExtended => {
            extended(cx, inst, op, result)
        }
        Op::ShiftRightLogical | Op::ShiftRightArithmetic | Op::ShiftLeftLogical => {
            shift(cx, inst, result)
        }
        Op::BitwiseOr | Op::BitwiseXor | Op::BitwiseAnd | Op::Not => bitwise(cx, inst, result),
        Op::BitFieldInsert
        | Op::BitFieldSExtract
        | Op::BitFieldUExtract
        | Op::BitReverse
        | Op::BitCount => bit_field(cx, inst, op, result),
        _ => Ok(()),
    }
}

/// The type of the `i`-th operand (after the result type and id), as SPIRV-Tools'
/// `GetOperandTypeId` (`None` for an operand that is not a value).
fn operand_type(cx: &Ctx, inst: &Instruction, i: usize) -> Option<Id> {
    inst.id_operand(i).and_then(|v| cx.facts.type_of(v))
}

fn operands(inst: &Instruction) -> impl Iterator<Item = (usize, Id)> + '_ {
    inst.operands.iter().filter_map(Operand::id).enumerate()
}

fn float(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    if !f.is_float_scalar_or_vector(result) {
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

fn unsigned(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    if !f.is_unsigned_int_scalar_or_vector(result) {
        return Err(ArithError::ResultNotUnsigned { op: inst.name() });
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
    if !f.is_int_scalar_or_vector(result) {
        return Err(ArithError::ResultNotInt { op: inst.name() });
    }
    for (index, v) in operands(inst) {
        let ok = f.type_of(v).is_some_and(|t| {
            f.is_int_scalar_or_vector(t)
                && f.dimension(t) == f.dimension(result)
                && f.width(t) == f.width(result)
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

/// `OpDot %float %v1 %v2`: float vectors of one component count whose components have the
/// Result Type.
fn dot(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    if !f.is_float_scalar(result) {
        return err("Result Type must be a float scalar");
    }
    // SPV_KHR_bfloat16: "If the Result Type (and the component types of Vector 1 and Vector 2)
    // has a BFloat16KHR encoding then BFloat16DotProductKHR must be declared."
    if f.is_bfloat16(result) && !f.has_capability(spirv::Capability::BFloat16DotProductKHR) {
        return Err(ArithError::DotBFloat16NeedsCapability);
    }
    let mut first = None;
    for (_, v) in operands(inst) {
        let Some(t) = f.type_of(v).filter(|t| f.is_float_vector(*t)) else {
            return err("the operands must be float vectors");
        };
        if f.component_type(t) != Some(result) {
            return err("the operands' component type must be the Result Type");
        }
        if *first.get_or_insert(f.dimension(t)) != f.dimension(t) {
            return err("the operands must have the same number of components");
        }
    }
    Ok(())
}

/// `OpVectorTimesScalar` / `OpMatrixTimesScalar`: the first operand has the Result Type (a
/// float vector or matrix) and the scalar its component type.
fn times_scalar(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    let result_ok = if op == Op::VectorTimesScalar {
        f.is_float_vector(result)
    } else {
        f.is_float_matrix(result)
    };
    if !result_ok {
        return err("Result Type must be a float vector (or matrix)");
    }
    let composite = operand_type(cx, inst, 0);
    if composite != Some(result) {
        return err("the vector (or matrix) operand must have the Result Type");
    }
    if operand_type(cx, inst, 1) != f.component_type(result) {
        return err("the scalar operand must have the component type of the Result Type");
    }
    Ok(())
}

/// `OpVectorTimesMatrix %vecN %vecM %matMxN`.
fn vector_times_matrix(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    let (vector, matrix) = (operand_type(cx, inst, 0), operand_type(cx, inst, 1));
    if !f.is_float_vector(result) {
        return err("Result Type must be a float vector");
    }
    let component = f.component_type(result);
    let Some(vector) = vector.filter(|v| f.is_float_vector(*v)) else {
        return err("the left operand must be a float vector");
    };
    if f.component_type(vector) != component {
        return err("the vector's component type must be the Result Type's");
    }
    let Some((rows, cols, _, matrix_component)) = matrix.and_then(|m| f.matrix_info(m)) else {
        return err("the right operand must be a float matrix");
    };
    if Some(matrix_component) != component {
        return err("the matrix's component type must be the Result Type's");
    }
    if cols != f.dimension(result) {
        return err("the matrix must have as many columns as the Result Type has components");
    }
    if rows != f.dimension(vector) {
        return err("the matrix must have as many rows as the vector has components");
    }
    Ok(())
}

/// `OpMatrixTimesVector %vecM %matMxN %vecN`.
fn matrix_times_vector(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    let (matrix, vector) = (operand_type(cx, inst, 0), operand_type(cx, inst, 1));
    if !f.is_float_vector(result) {
        return err("Result Type must be a float vector");
    }
    let Some((_, cols, column, component)) = matrix.and_then(|m| f.matrix_info(m)) else {
        return err("the left operand must be a float matrix");
    };
    if column != result {
        return err("the matrix's column type must be the Result Type");
    }
    let Some(vector) = vector.filter(|v| f.is_float_vector(*v)) else {
        return err("the right operand must be a float vector");
    };
    if f.component_type(vector) != Some(component) {
        return err("the operands' component types must be equal");
    }
    if cols != f.dimension(vector) {
        return err("the matrix must have as many columns as the vector has components");
    }
    Ok(())
}

/// `OpMatrixTimesMatrix %matMxN %matMxK %matKxN`.
fn matrix_times_matrix(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    let info = |t: Option<Id>| t.and_then(|t| f.matrix_info(t));
    let Some((_, res_cols, res_column, res_component)) = f.matrix_info(result) else {
        return err("Result Type must be a float matrix");
    };
    let Some((_, left_cols, left_column, _)) = info(operand_type(cx, inst, 0)) else {
        return err("the left operand must be a float matrix");
    };
    let Some((right_rows, right_cols, _, right_component)) = info(operand_type(cx, inst, 1)) else {
        return err("the right operand must be a float matrix");
    };
    if !f.is_float_scalar(res_component) {
        return err("Result Type must be a float matrix");
    }
    if res_column != left_column {
        return err("the left matrix's column type must be the Result Type's");
    }
    if res_component != right_component {
        return err("the right matrix's component type must be the Result Type's");
    }
    if res_cols != right_cols {
        return err("the right matrix must have the Result Type's column count");
    }
    if left_cols != right_rows {
        return err("the left matrix's column count must be the right matrix's row count");
    }
    Ok(())
}

/// `OpOuterProduct %matMxN %vecM %vecN`.
fn outer_product(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::LinearAlgebra {
            op: inst.name(),
            what,
        })
    };
    let Some((_, cols, column, component)) = f.matrix_info(result) else {
        return err("Result Type must be a float matrix");
    };
    if operand_type(cx, inst, 0) != Some(column) {
        return err("the left operand must have the Result Type's column type");
    }
    let Some(right) = operand_type(cx, inst, 1).filter(|r| f.is_float_vector(*r)) else {
        return err("the right operand must be a float vector");
    };
    if f.component_type(right) != Some(component) {
        return err("the operands' component types must be equal");
    }
    if cols != f.dimension(right) {
        return err(
            "the Result Type must have as many columns as the right operand has components",
        );
    }
    Ok(())
}

/// OpIAddCarry, OpISubBorrow, OpUMulExtended and OpSMulExtended.
fn extended(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::Extended {
            op: inst.name(),
            what,
        })
    };
    let Some(members) = f.struct_members(result) else {
        return err("Result Type must be a struct");
    };
    let [first, second] = members else {
        return err("Result Type must be a struct of two members");
    };
    if op == Op::SMulExtended {
        if !f.is_int_scalar_or_vector(*first) {
            return err("the Result Type's members must be integer scalars or vectors");
        }
    } else if !f.is_unsigned_int_scalar_or_vector(*first) {
        return err("the Result Type's members must be unsigned integer scalars or vectors");
    }
    if first != second {
        return err("the Result Type's two members must have the same type");
    }
    if operand_type(cx, inst, 0) != Some(*first) || operand_type(cx, inst, 1) != Some(*first) {
        return err("both operands must have the Result Type's member type");
    }
    Ok(())
}

/// Shifts: "Base must be a scalar or vector of integer type. It must have the same number of
/// components as Result Type. The component width must equal the component width in Result
/// Type. Shift must be a scalar or vector of integer type. It must have the same number of
/// components as Result Type."
fn shift(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::Bitwise {
            op: inst.name(),
            what,
        })
    };
    if !f.is_int_scalar_or_vector(result) {
        return err("Result Type must be an integer scalar or vector");
    }
    let Some(base) = operand_type(cx, inst, 0).filter(|b| f.is_int_scalar_or_vector(*b)) else {
        return err("Base must be an integer scalar or vector");
    };
    if f.dimension(base) != f.dimension(result) {
        return err("Base must have the Result Type's component count");
    }
    if f.width(base) != f.width(result) {
        return err("Base must have the Result Type's component width");
    }
    let Some(amount) = operand_type(cx, inst, 1).filter(|s| f.is_int_scalar_or_vector(*s)) else {
        return err("Shift must be an integer scalar or vector");
    };
    if f.dimension(amount) != f.dimension(result) {
        return err("Shift must have the Result Type's component count");
    }
    Ok(())
}

/// OpBitwiseOr/Xor/And and OpNot: every operand an integer scalar or vector with the Result
/// Type's component count and width.
fn bitwise(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::Bitwise {
            op: inst.name(),
            what,
        })
    };
    if !f.is_int_scalar_or_vector(result) {
        return err("Result Type must be an integer scalar or vector");
    }
    for (_, v) in operands(inst) {
        let Some(t) = f.type_of(v).filter(|t| f.is_int_scalar_or_vector(*t)) else {
            return err("the operands must be integer scalars or vectors");
        };
        if f.dimension(t) != f.dimension(result) {
            return err("the operands must have the Result Type's component count");
        }
        if f.width(t) != f.width(result) {
            return err("the operands must have the Result Type's component width");
        }
    }
    Ok(())
}

/// OpBitFieldInsert, OpBitFieldSExtract, OpBitFieldUExtract, OpBitReverse and OpBitCount.
fn bit_field(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), ArithError> {
    let f = cx.facts;
    let err = |what| {
        Err(ArithError::Bitwise {
            op: inst.name(),
            what,
        })
    };
    if op == Op::BitCount && !f.is_int_scalar_or_vector(result) {
        return err("Result Type must be an integer scalar or vector");
    }
    // SPIRV-Tools `ValidateBaseType`.
    let Some(base) = operand_type(cx, inst, 0).filter(|b| f.is_int_scalar_or_vector(*b)) else {
        return err("Base must be an integer scalar or vector");
    };
    if cx.vulkan() && f.width(base) != 32 {
        return Err(ArithError::VulkanBitwiseBase32 { op: inst.name() });
    }
    if op == Op::BitCount {
        if f.dimension(base) != f.dimension(result) {
            return err("Base must have the Result Type's component count");
        }
        return Ok(());
    }
    if base != result {
        return err("Base must have the Result Type");
    }
    let (offset_at, count_at) = match op {
        Op::BitFieldInsert => {
            if operand_type(cx, inst, 1) != Some(result) {
                return err("Insert must have the Result Type");
            }
            (2, 3)
        }
        Op::BitFieldSExtract | Op::BitFieldUExtract => (1, 2),
        _ => return Ok(()),
    };
    let int_scalar = |i| operand_type(cx, inst, i).is_some_and(|t| f.is_int_scalar(t));
    if !int_scalar(offset_at) {
        return err("Offset must be an integer scalar");
    }
    if !int_scalar(count_at) {
        return err("Count must be an integer scalar");
    }
    Ok(())
}
