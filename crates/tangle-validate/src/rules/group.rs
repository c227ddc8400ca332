//! Rules for `OpGroupNonUniform*` (SPIR-V 3.52.24 "Non-Uniform Instructions"): the Execution
//! scope shared by all of them, and the operand rules of `OpGroupNonUniformRotateKHR`
//! (SPV_KHR_subgroup_rotate, "Validation Rules" and the instruction's description).
//!
//! Order follows SPIRV-Tools: the execution scope first (`validate_scopes.cpp`), then the
//! instruction's own checks (`validate_non_uniform.cpp`), then the invalid-type pass.

use super::Ctx;
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{Op, Scope};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction};

/// A non-uniform group rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GroupError {
    /// "Execution is a `Scope <id>`": its type must be a 32-bit integer.
    #[error("{op}: the Execution scope must be a 32-bit integer")]
    ScopeNotInt32 { op: String },
    /// With the Shader capability, scopes must be constants (2.16.1, "`Scope <id>` ... must be the
    /// `<id>` of a constant instruction" for shaders).
    #[error("scope ids must come from OpConstant when the Shader capability is declared")]
    ScopeNotConstant,
    /// The constant must name a Scope enumerant.
    #[error("invalid scope value {value}")]
    ScopeInvalid { value: u32 },
    /// Vulkan (not 1.0): non-uniform group operations must use Subgroup execution scope.
    #[error("{op}: in Vulkan the Execution scope of non-uniform group operations is limited to Subgroup")]
    VulkanScopeNotSubgroup { op: String },
    /// Vulkan: execution scopes are limited to Workgroup and Subgroup.
    #[error("{op}: in Vulkan the Execution scope is limited to Workgroup and Subgroup")]
    VulkanScopeNotWorkgroupOrSubgroup { op: String },
    /// Vulkan: "Workgroup execution scope is only for TaskNV, MeshNV, TaskEXT, MeshEXT,
    /// TessellationControl, and GLCompute execution models", for every entry point whose call
    /// tree holds the instruction (SPIRV-Tools' execution-model limitation, spirv-val-rules R5).
    #[error(
        "{op}: in Vulkan a Workgroup Execution scope is not allowed in the {model} execution model"
    )]
    VulkanWorkgroupScopeModel { op: String, model: String },
    /// SPV_KHR_subgroup_rotate: "Execution ... must be either Workgroup or Subgroup."
    #[error("rotate Execution scope must be Subgroup or Workgroup")]
    RotateScopeNotSubgroupOrWorkgroup,
    /// Non-uniform operations other than rotate are limited to Subgroup [post-2025.5, SPIRV-Tools #6811].
    #[error("{op}: the Execution scope is limited to Subgroup")]
    ScopeNotSubgroup { op: String },
    /// "Result Type must be a scalar or vector of floating-point type, integer type, or Boolean type."
    #[error("rotate Result Type must be a scalar or vector of float, integer or boolean type")]
    RotateResultNotScalarOrVector,
    /// "The type of Value must be the same as Result Type."
    #[error("rotate Value must have the Result Type")]
    RotateValueTypeMismatch,
    /// "Delta must be a scalar of integer type, whose Signedness operand is 0."
    #[error("rotate Delta must be an unsigned integer scalar")]
    RotateDeltaNotUnsigned,
    /// "ClusterSize ... must be a scalar of integer type, whose Signedness operand is 0."
    #[error("rotate ClusterSize must be an unsigned integer scalar")]
    RotateClusterSizeNotUnsigned,
    /// "ClusterSize must come from a constant instruction."
    #[error("rotate ClusterSize must come from a constant instruction")]
    RotateClusterSizeNotConstant,
    /// "Behavior is undefined unless ClusterSize is at least 1 and a power of 2." (a warning in SPIRV-Tools)
    #[error("rotate ClusterSize must be at least 1 and a power of 2")]
    ClusterSizeNotPowerOfTwo,
    /// The invalid-type pass: no BFloat16 / FP8 / microscaling values in rotate.
    #[error("{op} does not support floating-point types with an FP encoding (BFloat16, FP8)")]
    EncodedFloatNotSupported { op: String },
    /// The Result Type each non-uniform operation is defined with: a boolean scalar (Elect,
    /// All, Any, AllEqual, InverseBallot, BallotBitExtract), a 4-component unsigned integer
    /// vector (Ballot), an unsigned integer scalar (BallotBitCount, BallotFind*), or a scalar or
    /// vector of the kind the operation works on.
    #[error("{op} Result Type must be {expected}")]
    ResultType { op: String, expected: &'static str },
    /// "The type of Value must be the same as Result Type" (AllEqual: a scalar or vector of
    /// integer, floating-point or Boolean type).
    #[error("{op}: the type of Value must match the Result Type")]
    ValueType { op: String },
    /// "Predicate must be a Boolean type."
    #[error("{op}: Predicate must be a boolean scalar")]
    PredicateNotBool { op: String },
    /// "Value must be a vector of four components of integer type scalar, whose Signedness
    /// operand is 0."
    #[error("{op}: Value must be a 4-component unsigned integer vector")]
    BallotNotUvec4 { op: String },
    /// Id, Mask, Delta, Index, Direction: "must be a scalar of integer type, whose Signedness
    /// operand is 0."
    #[error("{op}: {operand} must be an unsigned integer scalar")]
    OperandNotUnsigned { op: String, operand: &'static str },
    /// QuadSwap's Direction (and, before SPIR-V 1.5, Broadcast's Id and QuadBroadcast's Index)
    /// "must come from a constant instruction".
    #[error("{op}: {operand} must come from a constant instruction")]
    OperandNotConstant { op: String, operand: &'static str },
    /// Vulkan: "The OpGroupNonUniformBallotBitCount group operation must be only: Reduce,
    /// InclusiveScan, or ExclusiveScan."
    #[error("OpGroupNonUniformBallotBitCount: in Vulkan the group operation must be Reduce, InclusiveScan or ExclusiveScan")]
    BallotBitCountOperation,
    /// Arithmetic operations: "ClusterSize ... must be present when Operation is
    /// ClusteredReduce", "must be a scalar of integer type, whose Signedness operand is 0",
    /// and "must come from a constant instruction".
    #[error("{op}: ClusterSize {what}")]
    ClusterSize { op: String, what: &'static str },
}

impl GroupError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            GroupError::VulkanScopeNotSubgroup { .. } => Some(Vuid::EXECUTION_SCOPE_SUBGROUP),
            GroupError::VulkanScopeNotWorkgroupOrSubgroup { .. } => {
                Some(Vuid::EXECUTION_SCOPE_WORKGROUP_OR_SUBGROUP)
            }
            GroupError::VulkanWorkgroupScopeModel { .. } => {
                Some(Vuid::WORKGROUP_EXECUTION_SCOPE_MODEL)
            }
            GroupError::BallotBitCountOperation => Some(Vuid(
                "VUID-StandaloneSpirv-OpGroupNonUniformBallotBitCount-04685",
            )),
            _ => None,
        }
    }
}

/// Checks an instruction if it is a non-uniform group operation.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), GroupError> {
    if !is_non_uniform_with_scope(inst) {
        return Ok(());
    }
    if let Some(scope) = inst.id_operand(0) {
        execution_scope(cx, inst, scope)?;
    }
    if inst.op() == Some(Op::GroupNonUniformRotateKHR) {
        rotate(cx, inst)?;
    } else {
        operation(cx, inst)?;
    }
    Ok(())
}

/// R5: in Vulkan, a constant Workgroup execution scope is checked against the execution model
/// of every entry point whose call tree holds the instruction (reported at the instruction).
pub fn check_models(cx: &Ctx, sink: &mut super::Sink) {
    if !cx.vulkan() {
        return;
    }
    cx.visit_with_models(|index, inst, models| {
        if !is_non_uniform_with_scope(inst) {
            return;
        }
        let scope = inst
            .id_operand(0)
            .and_then(|s| cx.facts.int32_if_const(s).1);
        if scope != Some(Scope::Workgroup as u32) {
            return;
        }
        if let Some(model) = models
            .iter()
            .find(|m| !super::workgroup_execution_model(**m))
        {
            let e = GroupError::VulkanWorkgroupScopeModel {
                op: inst.name().trim_start_matches("Op").to_string(),
                model: super::model_name(*model),
            };
            sink.error(Some(index), e);
        }
    });
}

/// Whether the instruction is an `OpGroupNonUniform*` operation (the grammar files rotate under
/// class "Group", the others under "Non-Uniform") that starts with an Execution scope.
fn is_non_uniform_with_scope(inst: &Instruction) -> bool {
    inst.desc().is_some_and(|d| {
        d.name.starts_with("OpGroupNonUniform")
            && d.operands
                .get(2)
                .is_some_and(|o| o.kind == OperandKind::IdScope)
    })
}

/// The execution-scope rules shared by all non-uniform operations (SPIRV-Tools `ValidateExecutionScope`).
fn execution_scope(cx: &Ctx, inst: &Instruction, scope: Id) -> Result<(), GroupError> {
    let op = || inst.name().trim_start_matches("Op").to_string();
    let (is_int32, value) = cx.facts.int32_if_const(scope);
    if !is_int32 {
        return Err(GroupError::ScopeNotInt32 { op: op() });
    }
    let Some(value) = value else {
        // With CooperativeMatrixNV a specialization constant will do, but still a constant.
        let f = cx.facts;
        if f.has_capability(spirv::Capability::Shader)
            && (!f.has_capability(spirv::Capability::CooperativeMatrixNV)
                || !f.is_constant_instruction(scope))
        {
            return Err(GroupError::ScopeNotConstant);
        }
        return Ok(());
    };
    if OperandKind::Scope.enumerant(value).is_none() {
        return Err(GroupError::ScopeInvalid { value });
    }
    let subgroup = value == Scope::Subgroup as u32;
    let workgroup = value == Scope::Workgroup as u32;
    if let tangle_spirv::TargetEnv::Vulkan { api, .. } = cx.env {
        if api.minor >= 1 && !subgroup {
            return Err(GroupError::VulkanScopeNotSubgroup { op: op() });
        }
        if !subgroup && !workgroup {
            return Err(GroupError::VulkanScopeNotWorkgroupOrSubgroup { op: op() });
        }
    }
    if inst.op() == Some(Op::GroupNonUniformRotateKHR) {
        if !subgroup && !workgroup {
            return Err(GroupError::RotateScopeNotSubgroupOrWorkgroup);
        }
    } else if !subgroup {
        return Err(GroupError::ScopeNotSubgroup { op: op() });
    }
    Ok(())
}

/// The operand rules of the non-uniform operations other than rotate (SPIRV-Tools
/// `validate_non_uniform.cpp`), after the execution scope.
fn operation(cx: &Ctx, inst: &Instruction) -> Result<(), GroupError> {
    let f = cx.facts;
    let (Some(op), Some(result)) = (inst.op(), inst.result_type) else {
        return Ok(());
    };
    let name = || inst.name();
    let ty = |i: usize| inst.id_operand(i).and_then(|v| f.type_of(v));
    let result_err = |expected| {
        Err(GroupError::ResultType {
            op: name(),
            expected,
        })
    };
    let uvec4 =
        |t: Option<Id>| t.is_some_and(|t| f.is_unsigned_int_vector(t) && f.dimension(t) == 4);
    let scalar_or_vector = |t: Id| {
        f.is_float_scalar_or_vector(t)
            || f.is_int_scalar_or_vector(t)
            || f.is_bool_scalar_or_vector(t)
    };
    match op {
        Op::GroupNonUniformElect if !f.is_bool_scalar(result) => result_err("a boolean scalar"),
        Op::GroupNonUniformAny | Op::GroupNonUniformAll => {
            if !f.is_bool_scalar(result) {
                return result_err("a boolean scalar");
            }
            if !ty(1).is_some_and(|t| f.is_bool_scalar(t)) {
                return Err(GroupError::PredicateNotBool { op: name() });
            }
            Ok(())
        }
        Op::GroupNonUniformAllEqual => {
            if !f.is_bool_scalar(result) {
                return result_err("a boolean scalar");
            }
            if !ty(1).is_some_and(scalar_or_vector) {
                return Err(GroupError::ValueType { op: name() });
            }
            Ok(())
        }
        Op::GroupNonUniformBroadcast
        | Op::GroupNonUniformShuffle
        | Op::GroupNonUniformShuffleXor
        | Op::GroupNonUniformShuffleUp
        | Op::GroupNonUniformShuffleDown
        | Op::GroupNonUniformQuadBroadcast
        | Op::GroupNonUniformQuadSwap => {
            if !scalar_or_vector(result) {
                return result_err("a scalar or vector of integer, float or boolean type");
            }
            if ty(1) != Some(result) {
                return Err(GroupError::ValueType { op: name() });
            }
            let operand = match op {
                Op::GroupNonUniformBroadcast | Op::GroupNonUniformShuffle => "Id",
                Op::GroupNonUniformShuffleXor => "Mask",
                Op::GroupNonUniformQuadBroadcast => "Index",
                Op::GroupNonUniformQuadSwap => "Direction",
                _ => "Delta",
            };
            if !ty(2).is_some_and(|t| f.is_unsigned_int_scalar(t)) {
                return Err(GroupError::OperandNotUnsigned {
                    op: name(),
                    operand,
                });
            }
            let before_1_5 = cx.module.header.version < (1, 5);
            let constant = op == Op::GroupNonUniformQuadSwap
                || (before_1_5
                    && matches!(
                        op,
                        Op::GroupNonUniformBroadcast | Op::GroupNonUniformQuadBroadcast
                    ));
            if constant
                && !inst
                    .id_operand(2)
                    .is_some_and(|v| f.is_constant_instruction(v))
            {
                return Err(GroupError::OperandNotConstant {
                    op: name(),
                    operand,
                });
            }
            Ok(())
        }
        Op::GroupNonUniformBroadcastFirst => {
            if !scalar_or_vector(result) {
                return result_err("a scalar or vector of integer, float or boolean type");
            }
            if ty(1) != Some(result) {
                return Err(GroupError::ValueType { op: name() });
            }
            Ok(())
        }
        Op::GroupNonUniformBallot => {
            if !uvec4(Some(result)) {
                return result_err("a 4-component unsigned integer vector");
            }
            if !ty(1).is_some_and(|t| f.is_bool_scalar(t)) {
                return Err(GroupError::PredicateNotBool { op: name() });
            }
            Ok(())
        }
        Op::GroupNonUniformInverseBallot | Op::GroupNonUniformBallotBitExtract => {
            if !f.is_bool_scalar(result) {
                return result_err("a boolean scalar");
            }
            if !uvec4(ty(1)) {
                return Err(GroupError::BallotNotUvec4 { op: name() });
            }
            if op == Op::GroupNonUniformBallotBitExtract
                && !ty(2).is_some_and(|t| f.is_unsigned_int_scalar(t))
            {
                return Err(GroupError::OperandNotUnsigned {
                    op: name(),
                    operand: "Id",
                });
            }
            Ok(())
        }
        Op::GroupNonUniformBallotBitCount => {
            if !f.is_unsigned_int_scalar(result) {
                return result_err("an unsigned integer scalar");
            }
            if !uvec4(ty(2)) {
                return Err(GroupError::BallotNotUvec4 { op: name() });
            }
            let operation = inst.literal_operand(1).map(|v| v as u32);
            let scan = [
                spirv::GroupOperation::Reduce as u32,
                spirv::GroupOperation::InclusiveScan as u32,
                spirv::GroupOperation::ExclusiveScan as u32,
            ];
            if cx.vulkan() && !operation.is_some_and(|o| scan.contains(&o)) {
                return Err(GroupError::BallotBitCountOperation);
            }
            Ok(())
        }
        Op::GroupNonUniformBallotFindLSB | Op::GroupNonUniformBallotFindMSB => {
            if !f.is_unsigned_int_scalar(result) {
                return result_err("an unsigned integer scalar");
            }
            if !uvec4(ty(1)) {
                return Err(GroupError::BallotNotUvec4 { op: name() });
            }
            Ok(())
        }
        Op::GroupNonUniformIAdd
        | Op::GroupNonUniformFAdd
        | Op::GroupNonUniformIMul
        | Op::GroupNonUniformFMul
        | Op::GroupNonUniformSMin
        | Op::GroupNonUniformUMin
        | Op::GroupNonUniformFMin
        | Op::GroupNonUniformSMax
        | Op::GroupNonUniformUMax
        | Op::GroupNonUniformFMax
        | Op::GroupNonUniformBitwiseAnd
        | Op::GroupNonUniformBitwiseOr
        | Op::GroupNonUniformBitwiseXor
        | Op::GroupNonUniformLogicalAnd
        | Op::GroupNonUniformLogicalOr
        | Op::GroupNonUniformLogicalXor => arithmetic(cx, inst, op, result),
        _ => Ok(()),
    }
}

/// The reductions and scans: the Result Type of the operation's kind, Value of the Result
/// Type, and a constant unsigned ClusterSize exactly when the operation is ClusteredReduce.
fn arithmetic(cx: &Ctx, inst: &Instruction, op: Op, result: Id) -> Result<(), GroupError> {
    let f = cx.facts;
    let name = || inst.name();
    let (ok, expected) = match op {
        Op::GroupNonUniformFAdd
        | Op::GroupNonUniformFMul
        | Op::GroupNonUniformFMin
        | Op::GroupNonUniformFMax => (
            f.is_float_scalar_or_vector(result),
            "a float scalar or vector",
        ),
        Op::GroupNonUniformLogicalAnd
        | Op::GroupNonUniformLogicalOr
        | Op::GroupNonUniformLogicalXor => (
            f.is_bool_scalar_or_vector(result),
            "a boolean scalar or vector",
        ),
        Op::GroupNonUniformUMin | Op::GroupNonUniformUMax => (
            f.is_unsigned_int_scalar_or_vector(result),
            "an unsigned integer scalar or vector",
        ),
        _ => (
            f.is_int_scalar_or_vector(result),
            "an integer scalar or vector",
        ),
    };
    if !ok {
        return Err(GroupError::ResultType {
            op: name(),
            expected,
        });
    }
    if inst.id_operand(2).and_then(|v| f.type_of(v)) != Some(result) {
        return Err(GroupError::ValueType { op: name() });
    }
    let clustered = inst.literal_operand(1) == Some(spirv::GroupOperation::ClusteredReduce as u64);
    let partitioned = inst.literal_operand(1).is_some_and(|o| {
        [
            spirv::GroupOperation::PartitionedReduceNV as u64,
            spirv::GroupOperation::PartitionedInclusiveScanNV as u64,
            spirv::GroupOperation::PartitionedExclusiveScanNV as u64,
        ]
        .contains(&o)
    });
    let err = |what| Err(GroupError::ClusterSize { op: name(), what });
    match inst.operands.get(3) {
        None if clustered => err("must be present for ClusteredReduce"),
        None => Ok(()),
        // The NV partitioned operations take a ballot there (not checked here).
        Some(_) if partitioned => Ok(()),
        Some(operand) => {
            let id = operand.id();
            if !id
                .and_then(|v| f.type_of(v))
                .is_some_and(|t| f.is_unsigned_int_scalar(t))
            {
                return err("must be an unsigned integer scalar");
            }
            if !id.is_some_and(|v| f.is_constant_instruction(v)) {
                return err("must come from a constant instruction");
            }
            Ok(())
        }
    }
}

/// `OpGroupNonUniformRotateKHR %ty %scope %value %delta [%cluster]`.
fn rotate(cx: &Ctx, inst: &Instruction) -> Result<(), GroupError> {
    let f = cx.facts;
    let Some(result_type) = inst.result_type else {
        return Ok(());
    };
    if f.scalar_or_vector_component(result_type).is_none() {
        return Err(GroupError::RotateResultNotScalarOrVector);
    }
    if let Some(value) = inst.id_operand(1) {
        if f.type_of(value) != Some(result_type) {
            return Err(GroupError::RotateValueTypeMismatch);
        }
    }
    if let Some(delta) = inst.id_operand(2) {
        if !f
            .type_of(delta)
            .is_some_and(|t| f.is_unsigned_int_scalar(t))
        {
            return Err(GroupError::RotateDeltaNotUnsigned);
        }
    }
    if let Some(cluster) = inst.id_operand(3) {
        if !f
            .type_of(cluster)
            .is_some_and(|t| f.is_unsigned_int_scalar(t))
        {
            return Err(GroupError::RotateClusterSizeNotUnsigned);
        }
        if !f.is_constant_instruction(cluster) {
            return Err(GroupError::RotateClusterSizeNotConstant);
        }
        // Specialization constants are not evaluated.
        if let Some(size) = f.eval_int(cluster) {
            if !size.is_power_of_two() {
                return Err(GroupError::ClusterSizeNotPowerOfTwo);
            }
        }
    }
    let component = f.scalar_or_vector_component(result_type);
    if let Some(Type::Float {
        encoding: Some(_), ..
    }) = component.and_then(|c| f.ty(c))
    {
        return Err(GroupError::EncodedFloatNotSupported { op: inst.name() });
    }
    Ok(())
}
