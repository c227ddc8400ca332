//! Memory instructions (SPIR-V 3.x "Memory Instructions"; SPIRV-Tools `validate_memory.cpp`):
//! variables, loads, stores and access chains have pointer operands whose pointee types match;
//! in Vulkan, the addressing model is Logical or PhysicalStorageBuffer64; in Logical addressing,
//! variables hold pointers only where variable pointers allow it. `--relax-struct-store` and
//! `--relax-logical-pointer` relax the store and variable rules as in spirv-val.

use super::Ctx;
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{AddressingModel, Capability, Op, StorageClass};
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
    /// Logical addressing: a variable may hold a pointer only to StorageBuffer (with
    /// VariablePointersStorageBuffer) or Workgroup (with VariablePointers) memory, and only in
    /// Function or Private storage (SPIRV-Tools `ValidateVariable`; `--relax-logical-pointer`
    /// lifts it).
    #[error("in Logical addressing {why}")]
    LogicalPointerVariable { why: &'static str },
    /// `--relax-struct-store`: an OpStore of one struct type through a pointer to another needs
    /// the same members (or layout-compatible structs) at the same Offsets.
    #[error("OpStore Object's struct type is not layout-compatible with the pointee")]
    StoreLayoutMismatch,
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
            pointer_variable(cx, *storage, *pointee)?;
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
            let Some(object) = inst.id_operand(1).and_then(|o| f.type_of(o)) else {
                return Err(MemoryError::StoreType);
            };
            if object != pointee {
                // `--relax-struct-store`: structs of the same layout may be stored.
                let structs = matches!(f.ty(object), Some(Type::Struct { .. }))
                    && matches!(f.ty(pointee), Some(Type::Struct { .. }));
                if !cx.options.relax_struct_store || !structs {
                    return Err(MemoryError::StoreType);
                }
                if !layout_compatible(f, pointee, object, 0) {
                    return Err(MemoryError::StoreLayoutMismatch);
                }
            }
        }
        Some(Op::AccessChain | Op::InBoundsAccessChain) => access_chain(cx, inst)?,
        _ => {}
    }
    Ok(())
}

/// A variable that holds a pointer, in the Logical addressing model (unless
/// `--relax-logical-pointer`).
fn pointer_variable(cx: &Ctx, storage: u32, pointee: Id) -> Result<(), MemoryError> {
    let f = cx.facts;
    let logical = f.addressing_model == Some(AddressingModel::Logical as u32);
    let Some(Type::Pointer { storage: held, .. }) = f.ty(pointee) else {
        return Ok(());
    };
    if !logical || cx.options.relax_logical_pointer {
        return Ok(());
    }
    let why = if *held == StorageClass::StorageBuffer as u32 {
        // VariablePointers implies VariablePointersStorageBuffer.
        (!f.has_capability(Capability::VariablePointersStorageBuffer)).then_some(
            "a variable can hold a StorageBuffer pointer only with the VariablePointersStorageBuffer capability",
        )
    } else if *held == StorageClass::Workgroup as u32 {
        (!f.has_capability(Capability::VariablePointers)).then_some(
            "a variable can hold a Workgroup pointer only with the VariablePointers capability",
        )
    } else {
        Some("a variable can hold only a pointer to StorageBuffer or Workgroup memory")
    };
    if let Some(why) = why {
        return Err(MemoryError::LogicalPointerVariable { why });
    }
    if storage != StorageClass::Function as u32 && storage != StorageClass::Private as u32 {
        return Err(MemoryError::LogicalPointerVariable {
            why: "a variable holding a pointer must be in Function or Private storage",
        });
    }
    Ok(())
}

/// SPIRV-Tools `AreLayoutCompatibleStructs`: two structs with as many members, each the same
/// type or layout-compatible structs, and no member Offset of `a` contradicted by one of `b`.
fn layout_compatible(f: &crate::facts::Facts, a: Id, b: Id, depth: u32) -> bool {
    let (Some(Type::Struct { members: ma }), Some(Type::Struct { members: mb })) =
        (f.ty(a), f.ty(b))
    else {
        return false;
    };
    if depth > 64 || ma.len() != mb.len() {
        return false;
    }
    if !ma
        .iter()
        .zip(mb)
        .all(|(x, y)| x == y || layout_compatible(f, *x, *y, depth + 1))
    {
        return false;
    }
    let offsets = |id: Id| {
        f.decorations
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|d| d.decoration == spirv::Decoration::Offset as u32 && d.member.is_some())
            .map(|d| (d.member, d.params.first().and_then(Operand::literal)))
            .collect::<Vec<_>>()
    };
    let ob = offsets(b);
    offsets(a).iter().all(|(member, value)| {
        ob.iter()
            .find(|(m, _)| m == member)
            .is_none_or(|(_, v)| v == value)
    })
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
