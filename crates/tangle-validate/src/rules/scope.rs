//! The atomic and barrier family's error ([`AtomicError`]) and the rules of their Scope operands
//! (SPIR-V 2.16.2, "Scope"; SPIRV-Tools `validate_scopes.cpp`): a scope is a 32-bit integer
//! constant naming a Scope, and the limits on memory and execution scopes, everywhere and in
//! Vulkan. Below [`super::atomic`], [`super::memory_semantics`] and the memory operands'
//! checks (`memory/operands.rs`), which all report scopes through it, so imports run one way.

use super::Ctx;
use crate::vuid::Vuid;
use spirv::{Capability as C, Scope};
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

/// SPIRV-Tools `ValidateMemoryScope` (the execution-model limits are in
/// [`super::atomic::check_models`]).
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

pub(super) fn execution_scope(
    cx: &Ctx,
    inst: &Instruction,
    id: Option<Id>,
) -> Result<(), AtomicError> {
    let Some(value) = valid_scope(cx, inst, id, "Execution scope")? else {
        return Ok(());
    };
    if cx.vulkan() && value != Scope::Workgroup as u32 && value != Scope::Subgroup as u32 {
        return Err(AtomicError::VulkanExecutionScope { op: inst.name() });
    }
    Ok(())
}
