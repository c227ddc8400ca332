//! Atomic and barrier instructions (SPIR-V 3.x "Atomic Instructions" and "Barrier
//! Instructions", 2.16.2 scope rules; SPIRV-Tools `validate_atomics.cpp`, `validate_barriers.cpp`,
//! `validate_scopes.cpp`): result and pointer types, scopes that are constants naming a Scope,
//! the limits on scopes (everywhere, and in Vulkan), and the execution models each scope is
//! allowed in. The Memory Semantics rules live in [`super::memory_semantics`] and report in this
//! family.

use super::memory_semantics::{semantics, Operand as SemanticsOperand};
use super::{Ctx, Sink};
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{Capability as C, ExecutionModel as M, Op, Scope};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction};

/// An atomic or barrier rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AtomicError {
    /// "Result Type must be an integer type scalar" (floats for load/store/exchange and the float atomics).
    #[error("{op} Result Type must be an integer scalar (or a float scalar for load, store and exchange)")]
    ResultType { op: String },
    /// "Pointer is a pointer to" the Result Type (OpAtomicStore: an integer or float scalar).
    #[error("{op} Pointer must point to the Result Type (or, for a store, to an integer or float scalar)")]
    PointerType { op: String },
    /// "The type of Value must be the same as Result Type" (OpAtomicStore: as the pointee);
    /// "The type of Comparator must be the same as Result Type."
    #[error("{op}: the Value (and Comparator) must have the Result Type")]
    ValueType { op: String },
    /// 64-bit integer atomics need the Int64Atomics capability.
    #[error("{op}: 64-bit integer atomics need the Int64Atomics capability")]
    Int64NeedsCapability { op: String },
    /// 2.16.1: atomic pointers are in Uniform, StorageBuffer, Workgroup, CrossWorkgroup,
    /// Generic, AtomicCounter, Image, Function, PhysicalStorageBuffer or
    /// TaskPayloadWorkgroupEXT memory, and not Function memory when the Shader capability is
    /// declared.
    #[error("{op}: atomics cannot access this storage class{why}")]
    StorageClassForbidden { op: String, why: &'static str },
    /// Vulkan: atomics access only Uniform, Workgroup, Image, StorageBuffer,
    /// PhysicalStorageBuffer or TaskPayloadWorkgroupEXT memory.
    #[error("{op}: in Vulkan atomics access only Uniform, Workgroup, Image, StorageBuffer, PhysicalStorageBuffer or TaskPayloadWorkgroupEXT memory")]
    VulkanStorageClass { op: String },
    /// The float atomics need the capability of their width (AtomicFloat32AddEXT ...).
    #[error("{op}: {width}-bit float atomics need the {capability} capability")]
    FloatAtomicNeedsCapability {
        op: String,
        width: u32,
        capability: &'static str,
    },
    /// Scope and Memory Semantics ids are 32-bit integers, and constants (OpConstant under
    /// Shader; any constant instruction with CooperativeMatrixNV).
    #[error("{op} {what} must be a 32-bit integer OpConstant")]
    NotConstant { op: String, what: &'static str },
    /// The scope constant must name a Scope.
    #[error("{op} uses invalid scope value {value}")]
    ScopeInvalid { op: String, value: u32 },
    /// Vulkan: memory scopes are Device, QueueFamily, Workgroup, Subgroup, Invocation or ShaderCallKHR.
    #[error("{op}: in Vulkan the Memory scope cannot be CrossDevice")]
    VulkanMemoryScope { op: String },
    /// Device memory scope with the VulkanMemoryModel capability needs VulkanMemoryModelDeviceScope.
    #[error("{op}: Device memory scope with the Vulkan memory model needs the VulkanMemoryModelDeviceScope capability")]
    DeviceScopeNeedsCapability { op: String },
    /// SPIRV-Tools `ValidateMemoryScope`: "Memory Scope QueueFamilyKHR requires capability
    /// VulkanMemoryModelKHR".
    #[error("{op}: QueueFamily memory scope needs the VulkanMemoryModel capability")]
    QueueFamilyScopeNeedsCapability { op: String },
    /// Vulkan 1.0: Subgroup memory scope needs SubgroupBallotKHR or SubgroupVoteKHR.
    #[error("{op}: in Vulkan 1.0 the Memory scope can be Subgroup only with the SubgroupBallotKHR or SubgroupVoteKHR capability")]
    Vulkan10SubgroupMemoryScope { op: String },
    /// Vulkan: execution scopes are Workgroup or Subgroup.
    #[error("{op}: in Vulkan the Execution scope is limited to Workgroup and Subgroup")]
    VulkanExecutionScope { op: String },
    /// Vulkan: "Workgroup execution scope is only for TaskNV, MeshNV, TaskEXT, MeshEXT,
    /// TessellationControl, and GLCompute execution models" (for every entry point whose call
    /// tree holds the instruction).
    #[error(
        "{op}: in Vulkan a Workgroup Execution scope is not allowed in the {model} execution model"
    )]
    WorkgroupExecutionScopeModel { op: String, model: String },
    /// Vulkan: "OpControlBarrier execution scope must be Subgroup for Fragment, Vertex, Geometry,
    /// TessellationEvaluation, RayGeneration, Intersection, AnyHit, ClosestHit, and Miss".
    #[error("OpControlBarrier: in Vulkan the {model} execution model allows only a Subgroup Execution scope")]
    ControlBarrierScopeModel { model: String },
    /// "In SPIR-V 1.2 or earlier, OpControlBarrier requires one of the following Execution
    /// Models: TessellationControl, GLCompute, Kernel, MeshNV or TaskNV".
    #[error("OpControlBarrier before SPIR-V 1.3 is not allowed in the {model} execution model")]
    ControlBarrierModel { model: String },
    /// Vulkan: "Workgroup Memory Scope is limited to MeshNV, TaskNV, MeshEXT, TaskEXT,
    /// TessellationControl, and GLCompute", and not TessellationControl with the GLSL450
    /// memory model.
    #[error("{op}: in Vulkan a Workgroup Memory scope is not allowed in the {model} execution model{why}")]
    WorkgroupMemoryScopeModel {
        op: String,
        model: String,
        why: &'static str,
    },
    /// Vulkan: "ShaderCallKHR Memory Scope requires a ray tracing execution model".
    #[error("{op}: a ShaderCallKHR Memory scope is not allowed in the {model} execution model")]
    ShaderCallScopeModel { op: String, model: String },
    /// Memory Semantics: "at most one of Acquire, Release, AcquireRelease, or SequentiallyConsistent".
    #[error("{op} Memory Semantics set more than one ordering bit")]
    SemanticsOrdering { op: String },
    /// "OpAtomicStore ... must not use Acquire or AcquireRelease"; OpAtomicLoad (and the
    /// Unequal semantics of OpAtomicCompareExchange) must not use Release or AcquireRelease.
    #[error("{op} Memory Semantics use an ordering this access cannot have")]
    SemanticsForbiddenOrder { op: String },
    /// "UniformMemory ... requires capability Shader".
    #[error("{op}: UniformMemory semantics need the Shader capability")]
    SemanticsUniformNeedsShader { op: String },
    /// OutputMemory, MakeAvailable, MakeVisible and Volatile semantics need the
    /// VulkanMemoryModel capability.
    #[error("{op}: {bit} semantics need the VulkanMemoryModel capability")]
    SemanticsNeedVulkanMemoryModel { op: String, bit: &'static str },
    /// Vulkan API or Vulkan memory model: SequentiallyConsistent "must not be used".
    #[error("{op}: SequentiallyConsistent semantics cannot be used with Vulkan")]
    SemanticsSequentiallyConsistent { op: String },
    /// Vulkan: OpMemoryBarrier "must not use Relaxed memory order".
    #[error("OpMemoryBarrier: with Vulkan the Memory Semantics cannot be Relaxed")]
    BarrierRelaxed,
    /// Vulkan: an ordering needs a UniformMemory, WorkgroupMemory, ImageMemory or OutputMemory bit.
    #[error("{op}: with Vulkan, Memory Semantics with an ordering must name a storage class (Uniform, Workgroup, Image or Output memory)")]
    SemanticsOrderWithoutStorage { op: String },
    /// Vulkan: storage class bits need Acquire, Release or AcquireRelease.
    #[error("{op}: with Vulkan, Memory Semantics naming a storage class need Acquire, Release or AcquireRelease")]
    SemanticsStorageWithoutOrder { op: String },
    /// "Memory Semantics with MakeAvailable bit set must use Release or AcquireRelease".
    #[error("{op}: MakeAvailable semantics need Release or AcquireRelease")]
    MakeAvailableNeedsRelease { op: String },
    /// "Memory Semantics with MakeVisible bit set must use Acquire or AcquireRelease".
    #[error("{op}: MakeVisible semantics need Acquire or AcquireRelease")]
    MakeVisibleNeedsAcquire { op: String },
    /// "Memory Semantics with Volatile bit set must not be used with barrier instructions".
    #[error("{op}: Volatile semantics are for atomic instructions only")]
    VolatileOnBarrier { op: String },
    /// "Unequal Memory Semantics must not use a stronger memory order than the corresponding
    /// Equal Memory Semantics".
    #[error("{op}: the Unequal semantics order more strongly than the Equal semantics")]
    UnequalStronger { op: String },
    /// Vulkan: Unequal storage class bits, MakeVisible and Volatile must match the Equal semantics.
    #[error("{op}: with Vulkan the Unequal semantics' {what} must also be in the Equal semantics")]
    UnequalNotInEqual { op: String, what: &'static str },
    /// Vulkan: "Memory Semantics to be Relaxed if used with Invocation Memory Scope".
    #[error("{op}: with Vulkan an Invocation Memory scope allows only Relaxed semantics")]
    InvocationScopeNotRelaxed { op: String },
}

impl AtomicError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        use AtomicError as E;
        Some(match self {
            E::VulkanMemoryScope { .. } => Vuid::MEMORY_SCOPE,
            E::VulkanExecutionScope { .. } => Vuid::EXECUTION_SCOPE_WORKGROUP_OR_SUBGROUP,
            E::Vulkan10SubgroupMemoryScope { .. } => {
                Vuid("VUID-StandaloneSpirv-SubgroupVoteKHR-07951")
            }
            E::WorkgroupExecutionScopeModel { .. } => Vuid::WORKGROUP_EXECUTION_SCOPE_MODEL,
            E::ControlBarrierScopeModel { .. } => {
                Vuid("VUID-StandaloneSpirv-OpControlBarrier-04682")
            }
            E::WorkgroupMemoryScopeModel { why: "", .. } => Vuid("VUID-StandaloneSpirv-None-07321"),
            E::WorkgroupMemoryScopeModel { .. } => {
                Vuid("VUID-StandaloneSpirv-ExecutionModel-07320")
            }
            E::ShaderCallScopeModel { .. } => Vuid("VUID-StandaloneSpirv-None-04640"),
            E::SemanticsOrdering { .. } => Vuid("VUID-StandaloneSpirv-MemorySemantics-10865"),
            E::SemanticsSequentiallyConsistent { .. } => {
                Vuid("VUID-StandaloneSpirv-MemorySemantics-10866")
            }
            E::BarrierRelaxed => Vuid("VUID-StandaloneSpirv-MemorySemantics-10869"),
            E::SemanticsOrderWithoutStorage { .. } => {
                Vuid("VUID-StandaloneSpirv-MemorySemantics-10870")
            }
            E::SemanticsStorageWithoutOrder { .. } => {
                Vuid("VUID-StandaloneSpirv-MemorySemantics-10871")
            }
            E::MakeAvailableNeedsRelease { .. } => {
                Vuid("VUID-StandaloneSpirv-MemorySemantics-10872")
            }
            E::MakeVisibleNeedsAcquire { .. } => Vuid("VUID-StandaloneSpirv-MemorySemantics-10873"),
            E::VolatileOnBarrier { .. } => Vuid("VUID-StandaloneSpirv-MemorySemantics-10874"),
            E::UnequalStronger { .. } => Vuid("VUID-StandaloneSpirv-UnequalMemorySemantics-10876"),
            E::InvocationScopeNotRelaxed { .. } => Vuid("VUID-StandaloneSpirv-None-04641"),
            E::VulkanStorageClass { .. } => Vuid("VUID-StandaloneSpirv-None-04686"),
            _ => return None,
        })
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

/// The value of a scope id: it must be a 32-bit integer, and a constant (an OpConstant under
/// Shader, any constant instruction when CooperativeMatrixNV is declared too); without Shader
/// any 32-bit integer is accepted. `Ok(None)` when its value is not known.
pub(super) fn constant(
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
    if !is_int32 {
        return Err(err());
    }
    if value.is_none() && f.has_capability(C::Shader) {
        let cooperative_nv = f.has_capability(C::CooperativeMatrixNV);
        if !cooperative_nv || !f.is_constant_instruction(id) {
            return Err(err());
        }
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

/// SPIRV-Tools `ValidateMemoryScope` (the execution-model limits are in [`check_models`]).
pub(crate) fn memory_scope(
    cx: &Ctx,
    inst: &Instruction,
    id: Option<Id>,
) -> Result<(), AtomicError> {
    let Some(value) = valid_scope(cx, inst, id, "Memory scope")? else {
        return Ok(());
    };
    let f = cx.facts;
    let op = || inst.name();
    if value == Scope::QueueFamily as u32 && !f.has_capability(C::VulkanMemoryModel) {
        return Err(AtomicError::QueueFamilyScopeNeedsCapability { op: op() });
    }
    if value == Scope::Device as u32
        && f.has_capability(C::VulkanMemoryModel)
        && !f.has_capability(C::VulkanMemoryModelDeviceScope)
    {
        return Err(AtomicError::DeviceScopeNeedsCapability { op: op() });
    }
    if cx.vulkan() {
        if value == Scope::CrossDevice as u32 {
            return Err(AtomicError::VulkanMemoryScope { op: op() });
        }
        let vulkan_1_0 =
            matches!(cx.env, tangle_spirv::TargetEnv::Vulkan { api, .. } if api.minor == 0);
        if vulkan_1_0
            && value == Scope::Subgroup as u32
            && !f.has_capability(C::SubgroupBallotKHR)
            && !f.has_capability(C::SubgroupVoteKHR)
        {
            return Err(AtomicError::Vulkan10SubgroupMemoryScope { op: op() });
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
