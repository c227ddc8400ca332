//! Memory operands: the MemoryAccess mask, and the literal and scopes that follow it, of
//! OpLoad, OpStore, OpCopyMemory, OpCopyMemorySized and the cooperative matrix loads and stores
//! (SPIR-V 3.26 "Memory Operands"; SPIRV-Tools `CheckMemoryAccess`).
//!
//! A load may not make its pointer available, a store may not make it visible;
//! MakePointerAvailable/Visible need NonPrivatePointer, which needs a pointer to shared memory;
//! their scopes are memory scopes; PhysicalStorageBuffer accesses are Aligned (VUID 04708); and
//! OpCopyMemory takes a second mask (for its Source) from SPIR-V 1.4.

use super::MemoryError;
use crate::diag::ValidationError;
use crate::rules::{scope, Ctx};
use spirv::{Op, StorageClass};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction, Operand};

const ALIGNED: u32 = 0x2;
const AVAILABLE: u32 = 0x8;
const VISIBLE: u32 = 0x10;
const NON_PRIVATE: u32 = 0x20;

/// What a memory instruction does through its pointers.
#[derive(Clone, Copy, PartialEq)]
enum Access {
    /// OpLoad, OpCooperativeMatrixLoadKHR.
    Read,
    /// OpStore, OpCooperativeMatrixStoreKHR.
    Write,
    /// OpCopyMemory, OpCopyMemorySized: writes Target, reads Source.
    Copy,
}

/// What `inst` does to memory through how many pointers, and whether it is a cooperative
/// matrix access; `None` for instructions without memory operands.
fn kind(inst: &Instruction) -> Option<(Access, usize, bool)> {
    Some(match inst.op()? {
        Op::Load => (Access::Read, 1, false),
        Op::Store => (Access::Write, 1, false),
        Op::CooperativeMatrixLoadKHR => (Access::Read, 1, true),
        Op::CooperativeMatrixStoreKHR => (Access::Write, 1, true),
        Op::CopyMemory | Op::CopyMemorySized => (Access::Copy, 2, false),
        _ => return None,
    })
}

/// Whether `inst` may have memory operands.
pub fn accesses_memory(inst: &Instruction) -> bool {
    kind(inst).is_some()
}

/// The MakePointerAvailable/Visible scopes of every mask of `inst`.
pub fn scopes(inst: &Instruction) -> Vec<Id> {
    let mut found = Vec::new();
    for (at, operand) in inst.operands.iter().enumerate() {
        let Operand::Enum(OperandKind::MemoryAccess, mask) = operand else {
            continue;
        };
        let aligned = usize::from(mask & ALIGNED != 0);
        let available = usize::from(mask & AVAILABLE != 0);
        let visible = usize::from(mask & VISIBLE != 0);
        for skip in aligned..aligned + available + visible {
            found.extend(inst.operands.get(at + 1 + skip).and_then(Operand::id));
        }
    }
    found
}

/// Checks the memory operands of a memory instruction (nothing for other instructions).
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), ValidationError> {
    let Some((access, pointers, cooperative)) = kind(inst) else {
        return Ok(());
    };
    let storage: Vec<u32> = inst
        .operands
        .iter()
        .take(pointers)
        .filter_map(|o| o.id().and_then(|p| pointer_storage(cx, p)))
        .collect();
    let psb = storage.contains(&(StorageClass::PhysicalStorageBuffer as u32));
    let masks: Vec<(usize, u32)> = inst
        .operands
        .iter()
        .enumerate()
        .filter_map(|(at, o)| match o {
            Operand::Enum(OperandKind::MemoryAccess, mask) => Some((at, *mask)),
            _ => None,
        })
        .collect();
    let Some(&(first_at, first)) = masks.first() else {
        // "all instructions that support memory access operands and that use a physical pointer
        // must include the Aligned operand". SPIRV-Tools checks cooperative matrix accesses
        // only when they have a memory operand; tangle checks them in Vulkan too.
        if psb && (!cooperative || cx.vulkan()) {
            return Err(MemoryError::PhysicalStorageBufferNotAligned.into());
        }
        return Ok(());
    };
    mask(cx, inst, access, first_at, first, &storage)?;
    if let Some(&(second_at, second)) = masks.get(1) {
        if cx.module.header.version < (1, 4) {
            return Err(MemoryError::TwoMemoryAccessesNeedSpirv14 { op: inst.name() }.into());
        }
        mask(cx, inst, access, second_at, second, &storage)?;
        // "the first [operand] applies to Target and cannot include MakePointerVisible, the
        // second applies to Source and cannot include MakePointerAvailable".
        if first & VISIBLE != 0 {
            return Err(not_allowed(
                "MakePointerVisible",
                "the Target access of",
                inst,
            ));
        }
        if second & AVAILABLE != 0 {
            return Err(not_allowed(
                "MakePointerAvailable",
                "the Source access of",
                inst,
            ));
        }
    }
    Ok(())
}

/// One mask at operand `at` (SPIRV-Tools `CheckMemoryAccess`, in its order).
fn mask(
    cx: &Ctx,
    inst: &Instruction,
    access: Access,
    at: usize,
    mask: u32,
    storage: &[u32],
) -> Result<(), ValidationError> {
    // The operands after the mask, in the order of its bits: Aligned's literal, then the
    // MakePointerAvailable scope, then the MakePointerVisible scope.
    let after = |skip: usize| inst.operands.get(at + 1 + skip).and_then(Operand::id);
    let aligned = usize::from(mask & ALIGNED != 0);
    let available = usize::from(mask & AVAILABLE != 0);
    if mask & ALIGNED != 0 {
        // Aligned: "Literal ... must be a power of two".
        let alignment = inst.operands.get(at + 1).and_then(Operand::literal);
        if alignment.is_some_and(|a| !a.is_power_of_two()) {
            return Err(MemoryError::AlignmentNotPowerOfTwo.into());
        }
    }
    if mask & AVAILABLE != 0 {
        if access == Access::Read {
            return Err(not_allowed("MakePointerAvailable", "", inst));
        }
        needs_non_private(mask, "MakePointerAvailable")?;
        scope(cx, inst, after(aligned))?;
    }
    if mask & VISIBLE != 0 {
        if access == Access::Write {
            return Err(not_allowed("MakePointerVisible", "", inst));
        }
        needs_non_private(mask, "MakePointerVisible")?;
        scope(cx, inst, after(aligned + available))?;
    }
    if mask & NON_PRIVATE != 0 && !storage.iter().all(|s| shared_storage(*s)) {
        return Err(MemoryError::NonPrivatePointerStorage.into());
    }
    if mask & ALIGNED == 0 && storage.contains(&(StorageClass::PhysicalStorageBuffer as u32)) {
        return Err(MemoryError::PhysicalStorageBufferNotAligned.into());
    }
    Ok(())
}

fn not_allowed(flag: &'static str, part: &'static str, inst: &Instruction) -> ValidationError {
    let access = if part.is_empty() {
        inst.name()
    } else {
        format!("{part} {}", inst.name())
    };
    MemoryError::MemoryAccessNotAllowed { flag, access }.into()
}

/// "NonPrivatePointer: ... must be specified if MakePointerAvailable or MakePointerVisible
/// are specified."
fn needs_non_private(mask: u32, flag: &'static str) -> Result<(), ValidationError> {
    if mask & NON_PRIVATE == 0 {
        return Err(MemoryError::MemoryAccessNeedsNonPrivate { flag }.into());
    }
    Ok(())
}

/// The scope of MakePointerAvailable/Visible is a memory scope.
fn scope(cx: &Ctx, inst: &Instruction, id: Option<Id>) -> Result<(), ValidationError> {
    scope::memory_scope(cx, inst, id).map_err(ValidationError::from)
}

/// The storage classes NonPrivatePointer may be used with (SPIRV-Tools' list; the memory model
/// calls the rest "private").
fn shared_storage(storage: u32) -> bool {
    use StorageClass as S;
    [
        S::Uniform,
        S::Workgroup,
        S::CrossWorkgroup,
        S::Generic,
        S::Image,
        S::StorageBuffer,
        S::PhysicalStorageBuffer,
    ]
    .iter()
    .any(|s| *s as u32 == storage)
}

/// The storage class of a pointer value's type.
fn pointer_storage(cx: &Ctx, pointer: Id) -> Option<u32> {
    match cx.facts.value_type(pointer)? {
        crate::facts::Type::Pointer { storage, .. }
        | crate::facts::Type::UntypedPointer { storage } => Some(*storage),
        _ => None,
    }
}
