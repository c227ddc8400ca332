//! Memory instructions (SPIR-V 3.x "Memory Instructions"; SPIRV-Tools `validate_memory.cpp`):
//! variables, loads, stores and access chains have pointer operands whose pointee types match;
//! in Vulkan, the addressing model is Logical or PhysicalStorageBuffer64.

use super::Ctx;
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{AddressingModel, Op};
use tangle_spirv::{Id, Instruction, Operand};

/// A memory rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    /// OpVariable: "Result Type must be an OpTypePointer."
    #[error("OpVariable Result Type must be a pointer type")]
    VariableNotPointer,
    /// OpVariable: "Its Type operand ... Storage Class ... must be the same as the Storage Class operand."
    #[error("OpVariable storage class differs from its pointer type's")]
    VariableStorageMismatch,
    /// OpVariable: "Initializer must be an `<id>` from a constant instruction or a global OpVariable"
    /// of the pointee type.
    #[error("OpVariable initializer must have the pointee type")]
    InitializerType,
    /// OpLoad/OpStore/OpAccessChain: the Pointer operand's type must be a pointer.
    #[error("{op} Pointer must have a pointer type")]
    NotPointer { op: String },
    /// OpLoad: "Result Type is the type of the loaded object" = the pointee.
    #[error("OpLoad Result Type must be the pointee type of Pointer")]
    LoadType,
    /// OpStore: "The type of Object must be the same as the type pointed to by Pointer."
    #[error("OpStore Object must have the pointee type of Pointer")]
    StoreType,
    /// OpAccessChain: indexes walk the pointee type and the result points to what they reach.
    #[error("{op} indexes do not walk the base type to the Result Type's pointee")]
    AccessChainType { op: String },
    /// Vulkan: "the addressing model must be Logical or PhysicalStorageBuffer64".
    #[error("in Vulkan the addressing model must be Logical or PhysicalStorageBuffer64")]
    VulkanAddressingModel,
}

impl MemoryError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            MemoryError::VulkanAddressingModel => Some(Vuid::ADDRESSING_MODEL),
            _ => None,
        }
    }
}

/// Checks memory instructions.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let f = cx.facts;
    let pointer = |id: Option<Id>| match id.and_then(|p| f.value_type(p)) {
        Some(Type::Pointer { storage, pointee }) => Some((*storage, *pointee)),
        _ => None,
    };
    match inst.op() {
        Some(Op::MemoryModel) if cx.vulkan() => {
            let model = inst.literal_operand(0).map(|v| v as u32);
            let ok = [
                AddressingModel::Logical as u32,
                AddressingModel::PhysicalStorageBuffer64 as u32,
            ];
            if !model.is_some_and(|m| ok.contains(&m)) {
                return Err(MemoryError::VulkanAddressingModel);
            }
        }
        Some(Op::Variable) => {
            let Some(Type::Pointer { storage, pointee }) = inst.result_type.and_then(|t| f.ty(t))
            else {
                return Err(MemoryError::VariableNotPointer);
            };
            if inst.literal_operand(0) != Some(u64::from(*storage)) {
                return Err(MemoryError::VariableStorageMismatch);
            }
            if let Some(init) = inst.id_operand(1) {
                if f.type_of(init) != Some(*pointee) {
                    return Err(MemoryError::InitializerType);
                }
            }
        }
        Some(Op::Load) => {
            let Some((_, pointee)) = pointer(inst.id_operand(0)) else {
                return Err(MemoryError::NotPointer { op: inst.name() });
            };
            if inst.result_type != Some(pointee) {
                return Err(MemoryError::LoadType);
            }
        }
        Some(Op::Store) => {
            let Some((_, pointee)) = pointer(inst.id_operand(0)) else {
                return Err(MemoryError::NotPointer { op: inst.name() });
            };
            if inst.id_operand(1).and_then(|o| f.type_of(o)) != Some(pointee) {
                return Err(MemoryError::StoreType);
            }
        }
        Some(Op::AccessChain | Op::InBoundsAccessChain) => access_chain(cx, inst)?,
        _ => {}
    }
    Ok(())
}

/// `OpAccessChain %ptr_ty %base %indexes...`: walking the base's pointee type with the indexes
/// reaches the Result Type's pointee, in the same storage class.
fn access_chain(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let f = cx.facts;
    let err = || MemoryError::AccessChainType { op: inst.name() };
    let Some(Type::Pointer { storage, pointee }) = inst.id_operand(0).and_then(|b| f.value_type(b))
    else {
        return Err(MemoryError::NotPointer { op: inst.name() });
    };
    let Some(Type::Pointer {
        storage: rs,
        pointee: rp,
    }) = inst.result_type.and_then(|t| f.ty(t))
    else {
        return Err(err());
    };
    let mut current = *pointee;
    for index in inst.operands.iter().skip(1).filter_map(Operand::id) {
        current = match f.ty(current) {
            Some(Type::Vector { component, .. }) => *component,
            Some(Type::Matrix { column, .. }) => *column,
            Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => *element,
            Some(Type::CoopMat { component, .. }) => *component,
            // "Each id ... into a structure ... must be an OpConstant".
            Some(Type::Struct { members }) => {
                let member = f.eval_int(index).and_then(|i| usize::try_from(i).ok());
                match member.and_then(|i| members.get(i)) {
                    Some(m) => *m,
                    None => return Err(err()),
                }
            }
            _ => return Err(err()),
        };
    }
    // Storage classes agree (Vulkan's only exception is none for logical access chains).
    if rs != storage || *rp != current {
        return Err(err());
    }
    Ok(())
}
