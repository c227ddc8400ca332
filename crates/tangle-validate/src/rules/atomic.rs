//! Atomic and barrier instructions (SPIR-V 3.x "Atomic Instructions" and "Barrier
//! Instructions", 2.16.2 scope rules; SPIRV-Tools `validate_atomics.cpp`, `validate_barriers.cpp`,
//! `validate_scopes.cpp`, `validate_memory_semantics.cpp`): result and pointer types, memory
//! scopes and semantics that are constants, and the Vulkan limits on scopes.

use super::Ctx;
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{Capability as C, Op, Scope};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction};

/// An atomic or barrier rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AtomicError {
    /// "Result Type must be an integer type scalar" (floats for load/store/exchange and the float atomics).
    #[error("{op} Result Type must be an integer scalar (or a float scalar for load, store and exchange)")]
    ResultType { op: String },
    /// "The type of Value must be the same as Result Type" / "Pointer ... pointee ... same as Result Type".
    #[error("{op} Pointer must point to the Result Type (or the Value's type)")]
    PointerType { op: String },
    /// Scope and Memory Semantics ids are 32-bit integer constants (OpConstant under Shader).
    #[error("{op} {what} must be a 32-bit integer OpConstant")]
    NotConstant { op: String, what: &'static str },
    /// The scope constant must name a Scope.
    #[error("{op} uses invalid scope value {value}")]
    ScopeInvalid { op: String, value: u32 },
    /// Vulkan: memory scopes are Device, QueueFamily, Workgroup, Subgroup, Invocation or ShaderCallKHR.
    #[error("{op}: in Vulkan the Memory scope cannot be CrossDevice")]
    VulkanMemoryScope { op: String },
    /// Vulkan: Device memory scope with the Vulkan memory model needs VulkanMemoryModelDeviceScope.
    #[error("{op}: Device memory scope with the Vulkan memory model needs the VulkanMemoryModelDeviceScope capability")]
    DeviceScopeNeedsCapability { op: String },
    /// Vulkan: execution scopes are Workgroup or Subgroup.
    #[error("{op}: in Vulkan the Execution scope is limited to Workgroup and Subgroup")]
    VulkanExecutionScope { op: String },
    /// Memory Semantics: "at most one of Acquire, Release, AcquireRelease, or SequentiallyConsistent".
    #[error("{op} Memory Semantics set more than one ordering bit")]
    SemanticsOrdering { op: String },
    /// "OpAtomicStore ... must not use Acquire or AcquireRelease"; OpAtomicLoad (and the
    /// Unequal semantics of OpAtomicCompareExchange) must not use Release or AcquireRelease.
    #[error("{op} Memory Semantics use an ordering this access cannot have")]
    SemanticsForbiddenOrder { op: String },
}

impl AtomicError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            AtomicError::VulkanMemoryScope { .. } => Some(Vuid::MEMORY_SCOPE),
            AtomicError::VulkanExecutionScope { .. } => {
                Some(Vuid::EXECUTION_SCOPE_WORKGROUP_OR_SUBGROUP)
            }
            _ => None,
        }
    }
}

/// Where an atomic's operands are: (pointer, memory scope, semantics list, value).
struct Shape {
    scope: usize,
    semantics: &'static [usize],
    value: Option<usize>,
    /// Whether float results are allowed.
    float_ok: bool,
    /// Whether there is a result (OpAtomicStore has none).
    has_result: bool,
}

fn shape(op: Op) -> Option<Shape> {
    let s = |scope, semantics, value, float_ok, has_result| {
        Some(Shape {
            scope,
            semantics,
            value,
            float_ok,
            has_result,
        })
    };
    match op {
        Op::AtomicLoad => s(1, &[2], None, true, true),
        Op::AtomicStore => s(1, &[2], Some(3), true, false),
        Op::AtomicExchange => s(1, &[2], Some(3), true, true),
        Op::AtomicCompareExchange => s(1, &[2, 3], Some(4), false, true),
        Op::AtomicIIncrement | Op::AtomicIDecrement => s(1, &[2], None, false, true),
        Op::AtomicIAdd
        | Op::AtomicISub
        | Op::AtomicSMin
        | Op::AtomicUMin
        | Op::AtomicSMax
        | Op::AtomicUMax
        | Op::AtomicAnd
        | Op::AtomicOr
        | Op::AtomicXor => s(1, &[2], Some(3), false, true),
        Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT => {
            s(1, &[2], Some(3), true, true)
        }
        _ => None,
    }
}

/// Checks atomics and barriers.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), AtomicError> {
    let Some(op) = inst.op() else { return Ok(()) };
    match op {
        Op::ControlBarrier => {
            execution_scope(cx, inst, inst.id_operand(0))?;
            memory_scope(cx, inst, inst.id_operand(1))?;
            semantics(cx, inst, inst.id_operand(2)).map(drop)
        }
        Op::MemoryBarrier => {
            memory_scope(cx, inst, inst.id_operand(0))?;
            semantics(cx, inst, inst.id_operand(1)).map(drop)
        }
        _ => match shape(op) {
            Some(s) => atomic(cx, inst, &s),
            None => Ok(()),
        },
    }
}

fn atomic(cx: &Ctx, inst: &Instruction, s: &Shape) -> Result<(), AtomicError> {
    let f = cx.facts;
    let op = || inst.name();
    let data_type = if s.has_result {
        inst.result_type
    } else {
        s.value
            .and_then(|v| inst.id_operand(v))
            .and_then(|v| f.type_of(v))
    };
    let Some(data_type) = data_type else {
        return Ok(());
    };
    let ok = f.is_int_scalar(data_type) || (s.float_ok && f.is_float_scalar(data_type));
    if !ok {
        return Err(AtomicError::ResultType { op: op() });
    }
    let pointee = match inst.id_operand(0).and_then(|p| f.value_type(p)) {
        Some(Type::Pointer { pointee, .. }) => Some(*pointee),
        Some(Type::UntypedPointer { .. }) => None,
        _ => return Err(AtomicError::PointerType { op: op() }),
    };
    let value_type = s
        .value
        .and_then(|v| inst.id_operand(v))
        .and_then(|v| f.type_of(v));
    if pointee.is_some_and(|p| p != data_type)
        || (s.value.is_some() && value_type != Some(data_type))
    {
        return Err(AtomicError::PointerType { op: op() });
    }
    memory_scope(cx, inst, inst.id_operand(s.scope))?;
    for (n, at) in s.semantics.iter().enumerate() {
        let bits = semantics(cx, inst, inst.id_operand(*at))?;
        // Acquire 0x2, Release 0x4, AcquireRelease 0x8.
        let forbidden = match inst.op() {
            Some(Op::AtomicStore) => 0x2 | 0x8,
            Some(Op::AtomicLoad) => 0x4 | 0x8,
            Some(Op::AtomicCompareExchange) if n == 1 => 0x4 | 0x8,
            _ => 0,
        };
        if bits.is_some_and(|b| b & forbidden != 0) {
            return Err(AtomicError::SemanticsForbiddenOrder { op: op() });
        }
    }
    Ok(())
}

/// The value of a scope or semantics id: it must be a 32-bit integer constant, a non-spec one
/// when the Shader capability is declared. `Ok(None)` when it is a specialization constant.
fn constant(
    cx: &Ctx,
    inst: &Instruction,
    id: Option<Id>,
    what: &'static str,
) -> Result<Option<u32>, AtomicError> {
    let f = cx.facts;
    let err = || AtomicError::NotConstant {
        op: inst.name(),
        what,
    };
    let Some(id) = id else { return Ok(None) };
    let (is_int32, value) = f.int32_if_const(id);
    if !is_int32 || !f.is_constant_instruction(id) {
        return Err(err());
    }
    if value.is_none() && f.has_capability(C::Shader) && !f.has_capability(C::CooperativeMatrixNV) {
        return Err(err());
    }
    Ok(value)
}

fn valid_scope(
    cx: &Ctx,
    inst: &Instruction,
    id: Option<Id>,
    what: &'static str,
) -> Result<Option<u32>, AtomicError> {
    let value = constant(cx, inst, id, what)?;
    if let Some(v) = value {
        if OperandKind::Scope.enumerant(v).is_none() {
            return Err(AtomicError::ScopeInvalid {
                op: inst.name(),
                value: v,
            });
        }
    }
    Ok(value)
}

fn memory_scope(cx: &Ctx, inst: &Instruction, id: Option<Id>) -> Result<(), AtomicError> {
    let Some(value) = valid_scope(cx, inst, id, "Memory scope")? else {
        return Ok(());
    };
    if cx.vulkan() {
        if value == Scope::CrossDevice as u32 {
            return Err(AtomicError::VulkanMemoryScope { op: inst.name() });
        }
        let vulkan_model = cx.facts.memory_model == Some(spirv::MemoryModel::Vulkan as u32);
        if value == Scope::Device as u32
            && vulkan_model
            && !cx.facts.has_capability(C::VulkanMemoryModelDeviceScope)
        {
            return Err(AtomicError::DeviceScopeNeedsCapability { op: inst.name() });
        }
    }
    Ok(())
}

fn execution_scope(cx: &Ctx, inst: &Instruction, id: Option<Id>) -> Result<(), AtomicError> {
    let Some(value) = valid_scope(cx, inst, id, "Execution scope")? else {
        return Ok(());
    };
    if cx.vulkan() && value != Scope::Workgroup as u32 && value != Scope::Subgroup as u32 {
        return Err(AtomicError::VulkanExecutionScope { op: inst.name() });
    }
    Ok(())
}

/// Checks a semantics id and returns its bits when known.
fn semantics(cx: &Ctx, inst: &Instruction, id: Option<Id>) -> Result<Option<u32>, AtomicError> {
    let Some(bits) = constant(cx, inst, id, "Memory Semantics")? else {
        return Ok(None);
    };
    // Acquire 0x2, Release 0x4, AcquireRelease 0x8, SequentiallyConsistent 0x10.
    if (bits & 0x1e).count_ones() > 1 {
        return Err(AtomicError::SemanticsOrdering { op: inst.name() });
    }
    Ok(Some(bits))
}
