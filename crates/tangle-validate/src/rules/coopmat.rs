//! Rules for SPV_KHR_cooperative_matrix: the `OpTypeCooperativeMatrixKHR` operands, where
//! matrices may live, `OpCooperativeMatrixLoadKHR`/`StoreKHR` (pointer, layout, stride, memory
//! operands), `OpCooperativeMatrixMulAddKHR` (use, scope and M/N/K shapes), `LengthKHR`,
//! element-wise arithmetic and conversions on matrices, one-constituent composites, and the
//! VulkanMemoryModel requirement (spec "2.16 Validation Rules" and the instruction descriptions;
//! SPIRV-Tools `validate_type.cpp`, `validate_memory.cpp`, `validate_arithmetics.cpp`,
//! `validate_conversion.cpp`, `validate_composites.cpp`, `validate_constants.cpp`).
//!
//! Scope, rows, columns and use are compared only when both sides are known constants:
//! specialization constants are skipped, as the spec allows sizes to be specialized.

use super::{Ctx, Sink};
use crate::facts::{CoopMatType, Type};
use crate::vuid::Vuid;
use spirv::{Capability as C, Op, Scope, StorageClass as SC};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction, Operand};

/// A cooperative matrix rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoopmatError {
    /// 2.16.2: "If the CooperativeMatrixKHR capability is declared then the VulkanMemoryModel
    /// capability must be declared as well."
    #[error(
        "the CooperativeMatrixKHR capability with Shader requires the VulkanMemoryModel capability"
    )]
    NeedsVulkanMemoryModel,
    /// "Component Type must be a scalar numerical type."
    #[error("the cooperative matrix Component Type must be an integer or float scalar type")]
    ComponentNotNumeric,
    /// A BFloat16 / FP8 component needs its cooperative-matrix capability.
    #[error("a cooperative matrix of {encoding} components needs the {capability} capability")]
    EncodedComponentNeedsCapability {
        encoding: &'static str,
        capability: &'static str,
    },
    /// "Scope/Rows/Columns/Use must be a constant instruction with scalar 32-bit integer type."
    #[error(
        "the cooperative matrix {operand} must be a constant instruction of integer scalar type"
    )]
    TypeOperandNotConstant { operand: &'static str },
    /// A Workgroup-scope matrix needs the workgroup size of every entry point.
    #[error("a Workgroup-scope cooperative matrix needs LocalSize or LocalSizeId on entry point %{entry}")]
    WorkgroupScopeNeedsLocalSize { entry: Id },
    /// ... and LocalSizeId constants defined before the type.
    #[error(
        "a Workgroup-scope cooperative matrix is declared before its LocalSizeId constant %{id}"
    )]
    WorkgroupScopeBeforeLocalSizeId { id: Id },
    /// [post-2025.5] Vulkan VUID 12243 / SPIRV-Tools #6442: the scope is Workgroup or Subgroup.
    #[error("the cooperative matrix Scope must be Workgroup or Subgroup")]
    ScopeNotWorkgroupOrSubgroup,
    /// Cooperative matrices are allocated only in Function or Private storage.
    #[error("variables of (or containing) cooperative matrix type must be in the Function or Private storage class")]
    VariableStorageClass,
    /// Load: "Result Type ... must be a cooperative matrix type"; Store: "Object ... must be".
    #[error("{what} must be a cooperative matrix type")]
    NotCoopMat { what: &'static str },
    /// "Pointer is a pointer. Its type must be an OpTypePointer ..."
    #[error("the Pointer operand must have a pointer type")]
    PointerNotPointer,
    /// Vulkan: load/store pointers are Workgroup, StorageBuffer or PhysicalStorageBuffer.
    #[error("cooperative matrix load/store pointers must be in Workgroup, StorageBuffer or PhysicalStorageBuffer storage")]
    PointerStorageClass,
    /// "... whose Type operand is a scalar or vector type."
    #[error("the Pointer must point to a numeric scalar or vector")]
    PointeeNotScalarOrVector,
    /// "MemoryLayout ... must come from a 32-bit integer constant instruction."
    #[error("MemoryLayout must be a 32-bit integer constant instruction")]
    LayoutNotConstant,
    /// The ARM blocked-interleaved layouts need CooperativeMatrixLayoutsARM.
    #[error("the blocked-interleaved ARM memory layouts need the CooperativeMatrixLayoutsARM capability")]
    ArmLayoutNeedsCapability,
    /// "Stride ... must be a scalar integer type."
    #[error("Stride must be an integer scalar")]
    StrideNotInt,
    /// RowMajorKHR/ColumnMajorKHR: the stride "must be provided".
    #[error("MemoryLayout {layout} requires a Stride")]
    StrideMissing { layout: u32 },
    /// ARM layouts: the stride is a constant 1, 2 or 4 and the matrix is a multiple of the block.
    #[error("MemoryLayout {layout} requires a constant Stride of 1, 2 or 4")]
    ArmStrideInvalid { layout: u32 },
    /// ARM layouts: the blocked dimension must be a multiple of 4 × Stride.
    #[error("MemoryLayout {layout} with Stride {stride} requires the {dimension} to be a multiple of {multiple}")]
    ArmShapeNotMultiple {
        layout: u32,
        stride: u32,
        dimension: &'static str,
        multiple: u32,
    },
    /// Length: "Result Type must be an OpTypeInt with 32-bit Width and 0 Signedness."
    #[error("the result of OpCooperativeMatrixLengthKHR must be a 32-bit unsigned integer")]
    LengthResultNotU32,
    /// Length: "Type is a cooperative matrix type."
    #[error("the Type operand of OpCooperativeMatrixLengthKHR must be a cooperative matrix type")]
    LengthTypeNotCoopMat,
    /// MulAdd: the operand's Use must be MatrixAKHR / MatrixBKHR / MatrixAccumulatorKHR.
    #[error("MulAdd operand {operand} must be a cooperative matrix with Use {usage}")]
    MulAddWrongUse {
        operand: &'static str,
        usage: &'static str,
    },
    /// MulAdd: "Result Type must be a cooperative matrix type".
    #[error("MulAdd Result Type must be a cooperative matrix type")]
    MulAddResultNotCoopMat,
    /// MulAdd: "A, B, C, and Result Type must have the same scope".
    #[error("MulAdd A, B, C and Result Type must have the same scope")]
    MulAddScopeMismatch,
    /// MulAdd: M, N and K must be consistent.
    #[error("MulAdd '{dimension}' dimensions disagree")]
    MulAddShapeMismatch { dimension: char },
    /// 2.16.1 (as amended by SPV_KHR_cooperative_matrix): "The Matrix{A,B,C,Result}SignedComponentsKHR
    /// Cooperative Matrix Operand can only be used when the type of the corresponding matrix is an
    /// integer type." (SPIRV-Tools 2025.5 does not check it.)
    #[error("MulAdd operand {flag} is given but that matrix has float components")]
    MulAddSignedFlagOnFloat { flag: &'static str },
    /// Arithmetic/conversion: both sides must be cooperative matrices of the same kind.
    #[error("{op}: expected cooperative matrix operands of the Result Type's kind")]
    OperandNotCoopMat { op: String },
    /// "... the same Scope, number of Rows, number of Columns, and Use."
    #[error("{op}: the matrices' {what} differ")]
    ShapeMismatch { op: String, what: &'static str },
    /// Arithmetic: the component kind must fit the opcode (OpF on floats, OpI/S/U on integers).
    #[error("{op} is not valid on cooperative matrices of this component type")]
    ComponentKindMismatch { op: String },
    /// OpBitcast: a matrix is cast only to or from another matrix.
    #[error("a cooperative matrix can only be bitcast to another cooperative matrix")]
    BitcastNotCoopMat,
    /// OpMatrixTimesScalar: the matrix has the Result Type and the scalar is its component type.
    #[error("OpMatrixTimesScalar: {what}")]
    MatrixTimesScalar { what: &'static str },
    /// OpCompositeConstruct/OpConstantComposite: "there must be only one Constituent".
    #[error("a cooperative matrix composite must have exactly one constituent")]
    ConstituentCount,
    /// ... "and it is used to initialize all members": it has the component type.
    #[error("the constituent of a cooperative matrix composite must have the component type")]
    ConstituentType,
}

impl CoopmatError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            CoopmatError::PointerStorageClass => Some(Vuid::COOPMAT_POINTER_STORAGE),
            CoopmatError::ScopeNotWorkgroupOrSubgroup => Some(Vuid::COOPMAT_SCOPE),
            _ => None,
        }
    }
}

/// Module-wide: the VulkanMemoryModel requirement.
pub fn check_module(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    if f.has_capability(C::Shader)
        && f.has_capability(C::CooperativeMatrixKHR)
        && !f.has_capability(C::VulkanMemoryModel)
    {
        let at = cx.module.instructions.iter().position(|i| {
            i.op() == Some(Op::Capability)
                && i.literal_operand(0) == Some(C::CooperativeMatrixKHR as u64)
        });
        sink.error(at, CoopmatError::NeedsVulkanMemoryModel);
    }
}

fn capability_value(name: &str) -> Option<u32> {
    OperandKind::Capability
        .enumerant_by_name(name)
        .map(|e| e.value)
}

/// `OpTypeCooperativeMatrixKHR %component %scope %rows %cols %use`.
pub fn check_type(cx: &Ctx, inst: &Instruction) -> Result<(), CoopmatError> {
    if inst.op() != Some(Op::TypeCooperativeMatrixKHR) {
        return Ok(());
    }
    let f = cx.facts;
    let Some(component) = inst.id_operand(0) else {
        return Ok(());
    };
    match f.ty(component) {
        Some(Type::Int { .. }) => {}
        Some(Type::Float { encoding, .. }) => {
            // FPEncoding 0 is BFloat16KHR; 4214/4215 are Float8E4M3EXT/Float8E5M2EXT.
            let needs = match encoding {
                Some(0) => Some(("BFloat16", "BFloat16CooperativeMatrixKHR")),
                Some(4214 | 4215) => Some(("FP8", "Float8CooperativeMatrixEXT")),
                _ => None,
            };
            if let Some((encoding, capability)) = needs {
                if !capability_value(capability).is_some_and(|c| f.capabilities.contains(&c)) {
                    return Err(CoopmatError::EncodedComponentNeedsCapability {
                        encoding,
                        capability,
                    });
                }
            }
        }
        _ => return Err(CoopmatError::ComponentNotNumeric),
    }
    for (position, operand) in [(1, "Scope"), (2, "Rows"), (3, "Columns"), (4, "Use")] {
        let ok = inst.id_operand(position).is_some_and(|id| {
            f.is_constant_instruction(id) && f.type_of(id).is_some_and(|t| f.is_int_scalar(t))
        });
        if !ok {
            return Err(CoopmatError::TypeOperandNotConstant { operand });
        }
    }
    let Some(scope) = inst.id_operand(1).and_then(|s| f.eval_u32(s)) else {
        return Ok(());
    };
    if scope == Scope::Workgroup as u32 {
        workgroup_scope(cx, inst)?;
    }
    if scope != Scope::Workgroup as u32 && scope != Scope::Subgroup as u32 {
        return Err(CoopmatError::ScopeNotWorkgroupOrSubgroup);
    }
    Ok(())
}

/// A Workgroup-scope type needs every entry point's workgroup size, defined before the type.
fn workgroup_scope(cx: &Ctx, inst: &Instruction) -> Result<(), CoopmatError> {
    let here = inst
        .result_id
        .and_then(|r| cx.facts.defs.get(&r).copied())
        .unwrap_or(usize::MAX);
    for entry in &cx.facts.entry_points {
        let modes = cx.facts.execution_modes.get(&entry.function);
        let size = modes.and_then(|ms| {
            ms.iter().find(|m| {
                m.mode == spirv::ExecutionMode::LocalSize as u32
                    || m.mode == spirv::ExecutionMode::LocalSizeId as u32
            })
        });
        let Some(size) = size else {
            return Err(CoopmatError::WorkgroupScopeNeedsLocalSize {
                entry: entry.function,
            });
        };
        if size.mode == spirv::ExecutionMode::LocalSizeId as u32 {
            for id in size.params.iter().filter_map(Operand::id) {
                if cx.facts.defs.get(&id).is_none_or(|&d| d > here) {
                    return Err(CoopmatError::WorkgroupScopeBeforeLocalSizeId { id });
                }
            }
        }
    }
    Ok(())
}

/// Constant composites of matrix type, and `OpSpecConstantOp CooperativeMatrixLengthKHR`.
pub fn check_constant(cx: &Ctx, inst: &Instruction) -> Result<(), CoopmatError> {
    match inst.op() {
        Some(Op::ConstantComposite | Op::SpecConstantComposite) => {
            let Some(m) = inst.result_type.and_then(|t| cx.facts.coopmat(t)) else {
                return Ok(());
            };
            single_constituent(cx, &m, &inst.operands)
        }
        Some(Op::SpecConstantOp)
            if inst.literal_operand(0) == Some(Op::CooperativeMatrixLengthKHR as u64) =>
        {
            length(cx, inst.result_type, inst.id_operand(1))
        }
        _ => Ok(()),
    }
}

/// One constituent, of the component type.
fn single_constituent(cx: &Ctx, m: &CoopMatType, operands: &[Operand]) -> Result<(), CoopmatError> {
    let [Operand::Id(value)] = operands else {
        return Err(CoopmatError::ConstituentCount);
    };
    if cx.facts.type_of(*value) != Some(m.component) {
        return Err(CoopmatError::ConstituentType);
    }
    Ok(())
}

/// `OpCooperativeMatrixLengthKHR %u32 %type`.
fn length(cx: &Ctx, result: Option<Id>, ty: Option<Id>) -> Result<(), CoopmatError> {
    if result.is_none_or(|r| cx.facts.int_scalar(r) != Some((32, false))) {
        return Err(CoopmatError::LengthResultNotU32);
    }
    if ty.is_none_or(|t| cx.facts.coopmat(t).is_none()) {
        return Err(CoopmatError::LengthTypeNotCoopMat);
    }
    Ok(())
}

/// Variables, loads, stores and length.
pub fn check_memory(cx: &Ctx, inst: &Instruction) -> Result<(), CoopmatError> {
    match inst.op() {
        Some(Op::Variable) => {
            let pointee = inst.result_type.and_then(|t| match cx.facts.ty(t) {
                Some(Type::Pointer { pointee, .. }) => Some(*pointee),
                _ => None,
            });
            let storage = inst.literal_operand(0).map(|s| s as u32);
            let allowed = [SC::Function as u32, SC::Private as u32];
            if pointee.is_some_and(|p| {
                cx.facts
                    .contains(p, |_, t| matches!(t, crate::facts::Type::CoopMat { .. }))
            }) && !storage.is_some_and(|s| allowed.contains(&s))
            {
                return Err(CoopmatError::VariableStorageClass);
            }
            Ok(())
        }
        Some(Op::CooperativeMatrixLoadKHR) => {
            if inst
                .result_type
                .is_none_or(|t| cx.facts.coopmat(t).is_none())
            {
                return Err(CoopmatError::NotCoopMat {
                    what: "the Result Type of OpCooperativeMatrixLoadKHR",
                });
            }
            let m = inst.result_type.and_then(|t| cx.facts.coopmat(t));
            load_store(cx, inst, 0, 1, m)
        }
        Some(Op::CooperativeMatrixStoreKHR) => {
            let m = inst
                .id_operand(1)
                .and_then(|o| cx.facts.type_of(o))
                .and_then(|t| cx.facts.coopmat(t));
            if m.is_none() {
                return Err(CoopmatError::NotCoopMat {
                    what: "the Object of OpCooperativeMatrixStoreKHR",
                });
            }
            load_store(cx, inst, 0, 2, m)
        }
        Some(Op::CooperativeMatrixLengthKHR) => length(cx, inst.result_type, inst.id_operand(0)),
        _ => Ok(()),
    }
}

/// The pointer, layout, stride and memory operand of a load (`pointer_at`=0, `layout_at`=1)
/// or store (0, 2).
fn load_store(
    cx: &Ctx,
    inst: &Instruction,
    pointer_at: usize,
    layout_at: usize,
    m: Option<CoopMatType>,
) -> Result<(), CoopmatError> {
    let f = cx.facts;
    let pointer_type = inst.id_operand(pointer_at).and_then(|p| f.value_type(p));
    let (storage, pointee) = match pointer_type {
        Some(Type::Pointer { storage, pointee }) => (*storage, Some(*pointee)),
        Some(Type::UntypedPointer { storage }) => (*storage, None),
        _ => return Err(CoopmatError::PointerNotPointer),
    };
    let psb = SC::PhysicalStorageBuffer as u32;
    if cx.vulkan() && ![SC::Workgroup as u32, SC::StorageBuffer as u32, psb].contains(&storage) {
        return Err(CoopmatError::PointerStorageClass);
    }
    if let Some(p) = pointee {
        let numeric = f
            .scalar_or_vector_component(p)
            .is_some_and(|c| f.is_int_scalar(c) || f.is_float_scalar(c));
        if !numeric {
            return Err(CoopmatError::PointeeNotScalarOrVector);
        }
    }
    let layout = inst.id_operand(layout_at);
    let layout_ok = layout.is_some_and(|l| {
        f.is_constant_instruction(l) && f.type_of(l).is_some_and(|t| f.is_int_scalar(t))
    });
    if !layout_ok {
        return Err(CoopmatError::LayoutNotConstant);
    }
    let layout_value = layout.and_then(|l| f.eval_u32(l));
    let arm = matches!(layout_value, Some(4202 | 4203));
    if arm
        && !capability_value("CooperativeMatrixLayoutsARM")
            .is_some_and(|c| f.capabilities.contains(&c))
    {
        return Err(CoopmatError::ArmLayoutNeedsCapability);
    }
    let stride = inst.id_operand(layout_at + 1);
    if let Some(s) = stride {
        if !f.type_of(s).is_some_and(|t| f.is_int_scalar(t)) {
            return Err(CoopmatError::StrideNotInt);
        }
    }
    if let Some(layout) = layout_value.filter(|l| matches!(l, 0 | 1 | 4202 | 4203)) {
        let Some(s) = stride else {
            return Err(CoopmatError::StrideMissing { layout });
        };
        if arm {
            arm_layout(cx, layout, s, m)?;
        }
    }
    // The memory operands are checked with OpLoad's and OpStore's (`memory::operands`).
    Ok(())
}

/// The ARM blocked-interleaved layouts: Stride 1, 2 or 4, and a blocked dimension that is a
/// multiple of 4 × Stride.
fn arm_layout(
    cx: &Ctx,
    layout: u32,
    stride: Id,
    m: Option<CoopMatType>,
) -> Result<(), CoopmatError> {
    if !cx.facts.is_constant_instruction(stride) {
        return Err(CoopmatError::ArmStrideInvalid { layout });
    }
    let Some(s) = cx.facts.eval_u32(stride) else {
        return Ok(());
    };
    if !matches!(s, 1 | 2 | 4) {
        return Err(CoopmatError::ArmStrideInvalid { layout });
    }
    let Some(m) = m else { return Ok(()) };
    let (dimension, id) = if layout == 4202 {
        ("number of columns", m.cols)
    } else {
        ("number of rows", m.rows)
    };
    let multiple = 4 * s;
    match cx.facts.eval_u32(id) {
        Some(n) if n % multiple != 0 => Err(CoopmatError::ArmShapeNotMultiple {
            layout,
            stride: s,
            dimension,
            multiple,
        }),
        _ => Ok(()),
    }
}

/// Element-wise arithmetic, conversions, bitcasts, MulAdd, MatrixTimesScalar and
/// OpCompositeConstruct on cooperative matrices.
pub fn check_arith(cx: &Ctx, inst: &Instruction) -> Result<(), CoopmatError> {
    let Some(op) = inst.op() else { return Ok(()) };
    let Some(result) = inst.result_type else {
        return Ok(());
    };
    let rm = cx.facts.coopmat(result);
    match op {
        Op::CooperativeMatrixMulAddKHR => mul_add(cx, inst, rm),
        Op::CompositeConstruct => match rm {
            Some(m) => single_constituent(cx, &m, &inst.operands),
            None => Ok(()),
        },
        Op::MatrixTimesScalar => match rm {
            Some(m) => matrix_times_scalar(cx, inst, result, &m),
            None => Ok(()),
        },
        Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FNegate => {
            elementwise(cx, inst, rm, Kind::Float)
        }
        Op::IAdd | Op::ISub | Op::IMul | Op::SDiv | Op::SNegate => {
            elementwise(cx, inst, rm, Kind::Int)
        }
        Op::UDiv => elementwise(cx, inst, rm, Kind::Unsigned),
        Op::ConvertFToU
        | Op::ConvertFToS
        | Op::ConvertSToF
        | Op::ConvertUToF
        | Op::UConvert
        | Op::SConvert
        | Op::FConvert
        | Op::Bitcast => conversion(cx, inst, rm),
        _ => Ok(()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Int,
    Unsigned,
}

fn component_kind(cx: &Ctx, m: &CoopMatType) -> Option<Kind> {
    match cx.facts.ty(m.component)? {
        Type::Float { .. } => Some(Kind::Float),
        Type::Int { signed: false, .. } => Some(Kind::Unsigned),
        Type::Int { signed: true, .. } => Some(Kind::Int),
        _ => None,
    }
}

/// Whether two known constants differ (unknown values never differ).
fn differ(cx: &Ctx, a: Id, b: Id) -> bool {
    match (cx.facts.eval_u32(a), cx.facts.eval_u32(b)) {
        (Some(x), Some(y)) => x != y,
        _ => false,
    }
}

/// The matrices agree in scope, rows and columns (and use when `with_use`).
fn shapes_match(
    cx: &Ctx,
    op: &str,
    a: &CoopMatType,
    b: &CoopMatType,
    with_use: bool,
) -> Result<(), CoopmatError> {
    let err = |what| {
        Err(CoopmatError::ShapeMismatch {
            op: op.to_string(),
            what,
        })
    };
    if differ(cx, a.scope, b.scope) {
        return err("scopes");
    }
    if differ(cx, a.rows, b.rows) {
        return err("rows");
    }
    if differ(cx, a.cols, b.cols) {
        return err("columns");
    }
    if with_use && differ(cx, a.usage, b.usage) {
        return err("uses");
    }
    Ok(())
}

/// OpF* on float matrices, OpI*/OpS* on integer matrices, OpUDiv on unsigned ones; every
/// operand a matrix of the same shape.
fn elementwise(
    cx: &Ctx,
    inst: &Instruction,
    rm: Option<CoopMatType>,
    kind: Kind,
) -> Result<(), CoopmatError> {
    let op = inst.name();
    let operand_mats: Vec<Option<CoopMatType>> = inst
        .operands
        .iter()
        .filter_map(Operand::id)
        .map(|v| cx.facts.type_of(v).and_then(|t| cx.facts.coopmat(t)))
        .collect();
    let Some(m) = rm else {
        if operand_mats.iter().any(Option::is_some) {
            return Err(CoopmatError::OperandNotCoopMat { op });
        }
        return Ok(());
    };
    let fits = matches!(
        (kind, component_kind(cx, &m)),
        (Kind::Float, Some(Kind::Float))
            | (Kind::Int, Some(Kind::Int | Kind::Unsigned))
            | (Kind::Unsigned, Some(Kind::Unsigned))
    );
    if !fits {
        return Err(CoopmatError::ComponentKindMismatch { op });
    }
    for om in operand_mats {
        let Some(om) = om else {
            return Err(CoopmatError::OperandNotCoopMat { op });
        };
        if component_kind(cx, &om).map(|k| k == Kind::Float) != Some(kind == Kind::Float) {
            return Err(CoopmatError::OperandNotCoopMat { op });
        }
        shapes_match(cx, &op, &m, &om, false)?;
    }
    Ok(())
}

/// Conversions keep scope, rows, columns and use; a bitcast matrix stays a matrix.
fn conversion(cx: &Ctx, inst: &Instruction, rm: Option<CoopMatType>) -> Result<(), CoopmatError> {
    let input = inst
        .id_operand(0)
        .and_then(|v| cx.facts.type_of(v))
        .and_then(|t| cx.facts.coopmat(t));
    let op = inst.name();
    match (rm, input) {
        (None, None) => Ok(()),
        (Some(_), None) | (None, Some(_)) => {
            if inst.op() == Some(Op::Bitcast) {
                Err(CoopmatError::BitcastNotCoopMat)
            } else {
                Err(CoopmatError::OperandNotCoopMat { op })
            }
        }
        (Some(r), Some(i)) => shapes_match(cx, &op, &r, &i, true),
    }
}

/// `OpMatrixTimesScalar` on a matrix: the matrix has the Result Type, the scalar its component type.
fn matrix_times_scalar(
    cx: &Ctx,
    inst: &Instruction,
    result: Id,
    m: &CoopMatType,
) -> Result<(), CoopmatError> {
    if inst.id_operand(0).and_then(|v| cx.facts.type_of(v)) != Some(result) {
        return Err(CoopmatError::MatrixTimesScalar {
            what: "the matrix operand must have the Result Type",
        });
    }
    if inst.id_operand(1).and_then(|v| cx.facts.type_of(v)) != Some(m.component) {
        return Err(CoopmatError::MatrixTimesScalar {
            what: "the scalar must have the matrix's component type",
        });
    }
    Ok(())
}

/// `OpCooperativeMatrixMulAddKHR %result %a %b %c [operands]`.
fn mul_add(cx: &Ctx, inst: &Instruction, rm: Option<CoopMatType>) -> Result<(), CoopmatError> {
    let mat = |i: usize| {
        inst.id_operand(i)
            .and_then(|v| cx.facts.type_of(v))
            .and_then(|t| cx.facts.coopmat(t))
    };
    let has_use = |m: &Option<CoopMatType>, usage: u32| {
        m.is_some_and(|m| cx.facts.eval_u32(m.usage).is_none_or(|u| u == usage))
    };
    let (a, b, c) = (mat(0), mat(1), mat(2));
    if !has_use(&a, 0) {
        return Err(CoopmatError::MulAddWrongUse {
            operand: "A",
            usage: "MatrixAKHR",
        });
    }
    if !has_use(&b, 1) {
        return Err(CoopmatError::MulAddWrongUse {
            operand: "B",
            usage: "MatrixBKHR",
        });
    }
    if !has_use(&c, 2) {
        return Err(CoopmatError::MulAddWrongUse {
            operand: "C",
            usage: "MatrixAccumulatorKHR",
        });
    }
    let (Some(r), Some(a), Some(b), Some(c)) = (rm, a, b, c) else {
        return Err(CoopmatError::MulAddResultNotCoopMat);
    };
    if differ(cx, r.scope, a.scope) || differ(cx, r.scope, b.scope) || differ(cx, r.scope, c.scope)
    {
        return Err(CoopmatError::MulAddScopeMismatch);
    }
    if differ(cx, a.rows, c.rows) || differ(cx, a.rows, r.rows) {
        return Err(CoopmatError::MulAddShapeMismatch { dimension: 'M' });
    }
    if differ(cx, b.cols, c.cols) || differ(cx, b.cols, r.cols) {
        return Err(CoopmatError::MulAddShapeMismatch { dimension: 'N' });
    }
    if differ(cx, a.cols, b.rows) {
        return Err(CoopmatError::MulAddShapeMismatch { dimension: 'K' });
    }
    // Universal rule of the extension's 2.16.1 amendment: "The Matrix{A,B,C,Result}SignedComponentsKHR
    // Cooperative Matrix Operand can only be used when the type of the corresponding matrix is an
    // integer type."
    let flags = match inst.operands.get(3) {
        Some(Operand::Enum(_, v)) => *v,
        _ => 0,
    };
    for (bit, flag, m) in [
        (1, "MatrixASignedComponentsKHR", a),
        (2, "MatrixBSignedComponentsKHR", b),
        (4, "MatrixCSignedComponentsKHR", c),
        (8, "MatrixResultSignedComponentsKHR", r),
    ] {
        if flags & bit != 0 && component_kind(cx, &m) == Some(Kind::Float) {
            return Err(CoopmatError::MulAddSignedFlagOnFloat { flag });
        }
    }
    Ok(())
}
