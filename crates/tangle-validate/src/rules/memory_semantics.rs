//! Memory Semantics operands of atomics and barriers (SPIR-V 3.x "Memory Semantics <id>", the
//! Vulkan memory model, and the Vulkan "Standalone SPIR-V Validation" rules
//! VUID-StandaloneSpirv-MemorySemantics-10865 ... 10874, UnequalMemorySemantics-10875 ... 10879
//! and None-04641). Mirrors SPIRV-Tools 2025.5 `ValidateMemorySemantics`
//! (`validate_memory_semantics.cpp`), check for check and in its order; the findings are
//! [`AtomicError`]s.
//!
//! "With Vulkan" below means a Vulkan environment or the Vulkan memory model.

use super::scope::{constant, AtomicError};
use super::Ctx;
use spirv::{Capability as C, MemoryModel, MemorySemantics as S, Op, Scope};
use tangle_spirv::{Id, Instruction};

/// One Memory Semantics operand and what its rules depend on.
pub struct Operand {
    /// The semantics id.
    pub id: Option<Id>,
    /// The instruction's memory scope id.
    pub memory_scope: Option<Id>,
    /// For the Unequal semantics of a compare-exchange: the Equal semantics id.
    pub unequal_of: Option<Option<Id>>,
}

const ORDER: u32 = S::ACQUIRE.bits()
    | S::RELEASE.bits()
    | S::ACQUIRE_RELEASE.bits()
    | S::SEQUENTIALLY_CONSISTENT.bits();

/// The storage class bits Vulkan supports.
const VULKAN_STORAGE: u32 = S::UNIFORM_MEMORY.bits()
    | S::WORKGROUP_MEMORY.bits()
    | S::IMAGE_MEMORY.bits()
    | S::OUTPUT_MEMORY.bits();

/// Checks a semantics operand and returns its bits when they are known (not a specialization
/// constant).
pub fn semantics(
    cx: &Ctx,
    inst: &Instruction,
    operand: &Operand,
) -> Result<Option<u32>, AtomicError> {
    let Some(value) = constant(cx, inst, operand.id, "Memory Semantics")? else {
        return Ok(None);
    };
    let f = cx.facts;
    let op = || inst.name();
    let has = |bits: S| value & bits.bits() != 0;
    let vulkan = cx.vulkan() || f.memory_model == Some(MemoryModel::Vulkan as u32);
    let memory_model_capability = f.has_capability(C::VulkanMemoryModel);
    let needs_model = |bit| AtomicError::SemanticsNeedVulkanMemoryModel { op: op(), bit };
    if has(S::UNIFORM_MEMORY) && !f.has_capability(C::Shader) {
        return Err(AtomicError::SemanticsUniformNeedsShader { op: op() });
    }
    if has(S::OUTPUT_MEMORY) && !memory_model_capability {
        return Err(needs_model("OutputMemory"));
    }
    let orders = (value & ORDER).count_ones();
    if orders > 1 {
        return Err(AtomicError::SemanticsOrdering { op: op() });
    }
    if vulkan && has(S::SEQUENTIALLY_CONSISTENT) {
        return Err(AtomicError::SemanticsSequentiallyConsistent { op: op() });
    }
    let opcode = inst.op();
    let acquire = S::ACQUIRE | S::ACQUIRE_RELEASE;
    let release = S::RELEASE | S::ACQUIRE_RELEASE;
    if matches!(opcode, Some(Op::AtomicStore | Op::AtomicFlagClear)) && has(acquire)
        || opcode == Some(Op::AtomicLoad) && has(release)
    {
        return Err(AtomicError::SemanticsForbiddenOrder { op: op() });
    }
    if vulkan && opcode == Some(Op::MemoryBarrier) && orders == 0 {
        return Err(AtomicError::BarrierRelaxed);
    }
    if vulkan {
        let storage = value & VULKAN_STORAGE != 0;
        if orders > 0 && !storage {
            return Err(AtomicError::SemanticsOrderWithoutStorage { op: op() });
        }
        if orders == 0 && storage {
            return Err(AtomicError::SemanticsStorageWithoutOrder { op: op() });
        }
    }
    if has(S::MAKE_AVAILABLE) {
        if !memory_model_capability {
            return Err(needs_model("MakeAvailable"));
        }
        if !has(release) {
            return Err(AtomicError::MakeAvailableNeedsRelease { op: op() });
        }
    }
    if has(S::MAKE_VISIBLE) {
        if !memory_model_capability {
            return Err(needs_model("MakeVisible"));
        }
        if !has(acquire) {
            return Err(AtomicError::MakeVisibleNeedsAcquire { op: op() });
        }
    }
    if has(S::VOLATILE) {
        if !memory_model_capability {
            return Err(needs_model("Volatile"));
        }
        if matches!(opcode, Some(Op::ControlBarrier | Op::MemoryBarrier)) {
            return Err(AtomicError::VolatileOnBarrier { op: op() });
        }
    }
    if let Some(equal) = operand.unequal_of {
        unequal(cx, inst, value, equal, vulkan)?;
    }
    if vulkan && orders > 0 {
        let (_, scope) = operand
            .memory_scope
            .map_or((false, None), |s| f.int32_if_const(s));
        if scope == Some(Scope::Invocation as u32) {
            return Err(AtomicError::InvocationScopeNotRelaxed { op: op() });
        }
    }
    Ok(Some(value))
}

/// The Unequal semantics of a compare-exchange against its Equal semantics (an Equal operand
/// whose value is unknown counts as 0, as in the reference).
fn unequal(
    cx: &Ctx,
    inst: &Instruction,
    value: u32,
    equal: Option<Id>,
    vulkan: bool,
) -> Result<(), AtomicError> {
    let op = || inst.name();
    if value & (S::RELEASE | S::ACQUIRE_RELEASE).bits() != 0 {
        return Err(AtomicError::SemanticsForbiddenOrder { op: op() });
    }
    let equal = equal
        .and_then(|e| cx.facts.int32_if_const(e).1)
        .unwrap_or(0);
    let seq_cst = S::SEQUENTIALLY_CONSISTENT.bits();
    // An Equal Release with an Unequal Acquire is allowed (the C standard does not forbid it).
    let at_least_acquire = ORDER;
    if value & seq_cst != 0 && equal & seq_cst == 0
        || value & S::ACQUIRE.bits() != 0 && equal & at_least_acquire == 0
    {
        return Err(AtomicError::UnequalStronger { op: op() });
    }
    if vulkan {
        let extra = value & !equal;
        let what = if extra & VULKAN_STORAGE != 0 {
            "storage class bits"
        } else if extra & S::MAKE_VISIBLE.bits() != 0 {
            "MakeVisible bit"
        } else if (value ^ equal) & S::VOLATILE.bits() != 0 {
            // Volatile must be in both or neither.
            "Volatile bit (and the other way round)"
        } else {
            return Ok(());
        };
        return Err(AtomicError::UnequalNotInEqual { op: op(), what });
    }
    Ok(())
}
