//! Atomic and barrier instructions (SPIR-V 3.x "Atomic Instructions" and "Barrier
//! Instructions", 2.16.2 scope rules; SPIRV-Tools `validate_atomics.cpp`, `validate_barriers.cpp`,
//! `validate_scopes.cpp`): result and pointer types, scopes that are constants naming a Scope,
//! the limits on scopes (everywhere, and in Vulkan), and the execution models each scope is
//! allowed in. The family's error and the Scope operands' rules live in [`super::scope`], the
//! Memory Semantics rules in [`super::memory_semantics`]; both report in this family.

use super::memory_semantics::{semantics, Operand as SemanticsOperand};
use super::scope::{execution_scope, memory_scope, AtomicError};
use super::{Ctx, Sink};
use crate::facts::Type;
use spirv::{Capability as C, ExecutionModel as M, Op, Scope};
use tangle_spirv::{Id, Instruction};

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
        Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
            s(1, &[2, 3], Some(4), false, true)
        }
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
            let s = SemanticsOperand {
                id: inst.id_operand(2),
                memory_scope: inst.id_operand(1),
                unequal_of: None,
            };
            semantics(cx, inst, &s).map(drop)
        }
        Op::MemoryBarrier => {
            memory_scope(cx, inst, inst.id_operand(0))?;
            let s = SemanticsOperand {
                id: inst.id_operand(1),
                memory_scope: inst.id_operand(0),
                unequal_of: None,
            };
            semantics(cx, inst, &s).map(drop)
        }
        _ => match shape(op) {
            Some(s) => atomic(cx, inst, &s),
            None => Ok(()),
        },
    }
}

/// SPIRV-Tools `AtomicsPass`, in its order: the Result Type, the Pointer (its type, 64-bit
/// capability and storage class), the pointee, the memory scope and semantics, then the Value
/// and Comparator.
fn atomic(cx: &Ctx, inst: &Instruction, s: &Shape) -> Result<(), AtomicError> {
    let f = cx.facts;
    let op = || inst.name();
    let float_only = matches!(
        inst.op(),
        Some(Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT)
    );
    let result = if s.has_result {
        let Some(result) = inst.result_type else {
            return Ok(());
        };
        let ok = if float_only {
            f.is_float_scalar(result)
        } else {
            f.is_int_scalar(result) || (s.float_ok && f.is_float_scalar(result))
        };
        if !ok {
            return Err(AtomicError::ResultType { op: op() });
        }
        Some(result)
    } else {
        None
    };
    // Untyped pointers have no pointee to compare.
    let (pointee, storage) = match inst.id_operand(0).and_then(|p| f.value_type(p)) {
        Some(Type::Pointer { pointee, storage }) => (Some(*pointee), *storage),
        Some(Type::UntypedPointer { storage }) => (None, *storage),
        _ => return Err(AtomicError::PointerType { op: op() }),
    };
    if pointee.is_some_and(|p| f.is_int_scalar(p) && f.width(p) == 64)
        && !f.has_capability(C::Int64Atomics)
    {
        return Err(AtomicError::Int64NeedsCapability { op: op() });
    }
    storage_class(cx, inst, storage)?;
    if let (true, Some(result)) = (float_only, result) {
        float_capability(cx, inst, result)?;
    }
    match (result, pointee) {
        (None, Some(p)) if !f.is_int_scalar(p) && !f.is_float_scalar(p) => {
            return Err(AtomicError::PointerType { op: op() });
        }
        (Some(r), Some(p)) if r != p => return Err(AtomicError::PointerType { op: op() }),
        _ => {}
    }
    let scope = inst.id_operand(s.scope);
    memory_scope(cx, inst, scope)?;
    let equal = s.semantics.first().and_then(|at| inst.id_operand(*at));
    for (n, at) in s.semantics.iter().enumerate() {
        let operand = SemanticsOperand {
            id: inst.id_operand(*at),
            memory_scope: scope,
            // The second semantics of a compare-exchange are the Unequal ones.
            unequal_of: (n == 1).then_some(equal),
        };
        semantics(cx, inst, &operand)?;
    }
    // The Value (the pointee's type for a store), then a compare-exchange's Comparator.
    let data = result.or(pointee);
    let value_at = s.value.into_iter();
    let comparator_at = s.value.filter(|_| s.semantics.len() == 2).map(|v| v + 1);
    for at in value_at.chain(comparator_at) {
        let ty = inst.id_operand(at).and_then(|v| f.type_of(v));
        if data.is_some() && ty != data {
            return Err(AtomicError::ValueType { op: op() });
        }
    }
    Ok(())
}

/// The storage classes atomics may access: the universal list, then the Shader rules (Vulkan's
/// list, or no Function memory).
fn storage_class(cx: &Ctx, inst: &Instruction, storage: u32) -> Result<(), AtomicError> {
    use spirv::StorageClass as S;
    let is = |list: &[S]| list.iter().any(|sc| *sc as u32 == storage);
    let universal = [
        S::Uniform,
        S::StorageBuffer,
        S::Workgroup,
        S::CrossWorkgroup,
        S::Generic,
        S::AtomicCounter,
        S::Image,
        S::Function,
        S::PhysicalStorageBuffer,
        S::TaskPayloadWorkgroupEXT,
    ];
    if !is(&universal) {
        return Err(AtomicError::StorageClassForbidden {
            op: inst.name(),
            why: "",
        });
    }
    if !cx.facts.has_capability(C::Shader) {
        return Ok(());
    }
    if cx.vulkan() {
        let vulkan = [
            S::Uniform,
            S::StorageBuffer,
            S::Workgroup,
            S::Image,
            S::PhysicalStorageBuffer,
            S::TaskPayloadWorkgroupEXT,
        ];
        if !is(&vulkan) {
            return Err(AtomicError::VulkanStorageClass { op: inst.name() });
        }
    } else if storage == S::Function as u32 {
        return Err(AtomicError::StorageClassForbidden {
            op: inst.name(),
            why: " (Function memory, with the Shader capability)",
        });
    }
    Ok(())
}

/// The float atomics (with the Shader capability) need the capability of their width.
fn float_capability(cx: &Ctx, inst: &Instruction, result: Id) -> Result<(), AtomicError> {
    let f = cx.facts;
    if !f.has_capability(C::Shader) {
        return Ok(());
    }
    let width = f.width(result);
    let add = inst.op() == Some(Op::AtomicFAddEXT);
    let (capability, name) = match (add, width) {
        (true, 16) => (C::AtomicFloat16AddEXT, "AtomicFloat16AddEXT"),
        (true, 32) => (C::AtomicFloat32AddEXT, "AtomicFloat32AddEXT"),
        (true, 64) => (C::AtomicFloat64AddEXT, "AtomicFloat64AddEXT"),
        (false, 16) => (C::AtomicFloat16MinMaxEXT, "AtomicFloat16MinMaxEXT"),
        (false, 32) => (C::AtomicFloat32MinMaxEXT, "AtomicFloat32MinMaxEXT"),
        (false, 64) => (C::AtomicFloat64MinMaxEXT, "AtomicFloat64MinMaxEXT"),
        _ => return Ok(()),
    };
    if !f.has_capability(capability) {
        return Err(AtomicError::FloatAtomicNeedsCapability {
            op: inst.name(),
            width,
            capability: name,
        });
    }
    Ok(())
}

/// The execution-model limits of scopes and barriers (SPIRV-Tools registers them as the
/// function's execution-model limitations): checked for every entry point whose call tree
/// holds the instruction, and reported at the instruction.
pub fn check_models(cx: &Ctx, sink: &mut Sink) {
    cx.visit_with_models(|index, inst, models| {
        if let Some(e) = models.iter().find_map(|m| model_limits(cx, inst, *m)) {
            sink.error(Some(index), e);
        }
    });
}

/// The first execution-model limit `inst` breaks in an entry point of `model`.
fn model_limits(cx: &Ctx, inst: &Instruction, model: u32) -> Option<AtomicError> {
    let (execution, memory) = match inst.op()? {
        Op::ControlBarrier => (inst.id_operand(0), inst.id_operand(1)),
        Op::MemoryBarrier => (None, inst.id_operand(0)),
        // The scopes of MakePointerAvailable/Visible on loads, stores and copies.
        _ if super::memory::operands::accesses_memory(inst) => {
            return super::memory::operands::scopes(inst)
                .into_iter()
                .find_map(|scope| memory_scope_limits(cx, inst, model, scope));
        }
        op => (None, inst.id_operand(shape(op)?.scope)),
    };
    let name = || super::model_name(model);
    let is = |m: M| model == m as u32;
    let version = cx.module.header.version;
    if inst.op() == Some(Op::ControlBarrier)
        && version < (1, 3)
        && ![
            M::TessellationControl,
            M::GLCompute,
            M::Kernel,
            M::TaskNV,
            M::MeshNV,
        ]
        .into_iter()
        .any(is)
    {
        return Some(AtomicError::ControlBarrierModel { model: name() });
    }
    if !cx.vulkan() {
        return None;
    }
    let constant = |id: Option<Id>| id.and_then(|i| cx.facts.int32_if_const(i).1);
    if let Some(scope) = constant(execution) {
        if scope != Scope::Subgroup as u32
            && [
                M::Fragment,
                M::Vertex,
                M::Geometry,
                M::TessellationEvaluation,
                M::RayGenerationKHR,
                M::IntersectionKHR,
                M::AnyHitKHR,
                M::ClosestHitKHR,
                M::MissKHR,
            ]
            .into_iter()
            .any(is)
        {
            return Some(AtomicError::ControlBarrierScopeModel { model: name() });
        }
        if scope == Scope::Workgroup as u32 && !super::workgroup_execution_model(model) {
            return Some(AtomicError::WorkgroupExecutionScopeModel {
                op: inst.name(),
                model: name(),
            });
        }
    }
    memory_scope_limits(cx, inst, model, memory?)
}

/// The Vulkan execution-model limits of a memory scope (SPIRV-Tools `ValidateMemoryScope`).
fn memory_scope_limits(
    cx: &Ctx,
    inst: &Instruction,
    model: u32,
    memory: Id,
) -> Option<AtomicError> {
    if !cx.vulkan() {
        return None;
    }
    let name = || super::model_name(model);
    let is = |m: M| model == m as u32;
    let scope = cx.facts.int32_if_const(memory).1?;
    if scope == Scope::ShaderCallKHR as u32
        && ![
            M::RayGenerationKHR,
            M::IntersectionKHR,
            M::AnyHitKHR,
            M::ClosestHitKHR,
            M::MissKHR,
            M::CallableKHR,
        ]
        .into_iter()
        .any(is)
    {
        return Some(AtomicError::ShaderCallScopeModel {
            op: inst.name(),
            model: name(),
        });
    }
    if scope == Scope::Workgroup as u32 {
        let glsl450 = cx.facts.memory_model == Some(spirv::MemoryModel::GLSL450 as u32);
        let why = if !super::workgroup_execution_model(model) {
            ""
        } else if is(M::TessellationControl) && glsl450 {
            " with the GLSL450 memory model"
        } else {
            return None;
        };
        return Some(AtomicError::WorkgroupMemoryScopeModel {
            op: inst.name(),
            model: name(),
            why,
        });
    }
    None
}
