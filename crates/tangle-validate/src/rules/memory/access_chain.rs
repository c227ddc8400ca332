//! Access chains (SPIRV-Tools `ValidateAccessChain`, `ValidatePtrAccessChain`): the indexes
//! walk the base's pointee type to the Result Type's pointee; OpPtrAccessChain's Element and the
//! storage classes and capabilities it needs.

use super::MemoryError;
use crate::facts::Type;
use crate::rules::Ctx;
use spirv::{AddressingModel, Capability, Op, StorageClass};
use tangle_spirv::{Id, Instruction, Operand};

/// `OpPtrAccessChain %ptr_ty %base %element %indexes...` (SPIRV-Tools `ValidatePtrAccessChain`).
pub(super) fn ptr_access_chain(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let f = cx.facts;
    let logical = f.addressing_model == Some(AddressingModel::Logical as u32);
    // VariablePointers implies VariablePointersStorageBuffer.
    let variable_pointers = f.has_capability(Capability::VariablePointersStorageBuffer);
    if logical && inst.op() == Some(Op::PtrAccessChain) && !variable_pointers {
        return Err(MemoryError::PtrAccessChainNeedsVariablePointers);
    }
    access_chain(cx, inst, 2)?;
    if !inst
        .id_operand(1)
        .and_then(|e| f.type_of(e))
        .is_some_and(|t| f.is_int_scalar(t))
    {
        return Err(MemoryError::ElementNotInt);
    }
    let block = inst
        .id_operand(0)
        .and_then(|b| f.type_of(b))
        .and_then(|t| f.pointer_info(t))
        .is_some_and(|(pointee, _)| {
            f.has_decoration(pointee, spirv::Decoration::Block)
                || f.has_decoration(pointee, spirv::Decoration::BufferBlock)
        });
    // A specialization constant is not evaluated.
    if block
        && inst
            .id_operand(1)
            .and_then(|e| f.eval_int(e))
            .is_some_and(|e| e != 0)
    {
        return Err(MemoryError::BlockElementNotZero);
    }
    let Some(base_type) = inst.id_operand(0).and_then(|b| f.type_of(b)) else {
        return Ok(());
    };
    let Some((_, storage)) = f.pointer_info(base_type) else {
        return Ok(());
    };
    let is = |sc: StorageClass| storage == sc as u32;
    let explicit_layout = is(StorageClass::Uniform)
        || is(StorageClass::StorageBuffer)
        || is(StorageClass::PhysicalStorageBuffer)
        || is(StorageClass::PushConstant)
        || (f.has_capability(Capability::WorkgroupMemoryExplicitLayoutKHR)
            && is(StorageClass::Workgroup));
    if f.has_capability(Capability::Shader)
        && explicit_layout
        && !f.has_decoration(base_type, spirv::Decoration::ArrayStride)
    {
        return Err(MemoryError::PtrAccessChainArrayStride);
    }
    if cx.vulkan() {
        let why = if is(StorageClass::Workgroup) {
            (!f.has_capability(Capability::VariablePointers))
                .then_some("a Workgroup Base needs the VariablePointers capability")
        } else if is(StorageClass::StorageBuffer) {
            (!variable_pointers).then_some(
                "a StorageBuffer Base needs the VariablePointers or VariablePointersStorageBuffer capability",
            )
        } else if !is(StorageClass::PhysicalStorageBuffer) {
            Some("the Base must point to Workgroup, StorageBuffer or PhysicalStorageBuffer memory")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(MemoryError::VulkanPtrAccessChain { why });
        }
    }
    Ok(())
}

/// `OpAccessChain %ptr_ty %base %indexes...`: walking the base's pointee type with the integer
/// indexes from operand `first` reaches the Result Type's pointee, in the same storage class.
pub(super) fn access_chain(cx: &Ctx, inst: &Instruction, first: usize) -> Result<(), MemoryError> {
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
    // Storage classes agree (Vulkan's only exception is none for logical access chains).
    if rs != storage {
        return Err(err());
    }
    let mut current = *pointee;
    for (n, index) in inst
        .operands
        .iter()
        .skip(first)
        .filter_map(Operand::id)
        .enumerate()
    {
        if !f.type_of(index).is_some_and(|t| f.is_int_scalar(t)) {
            return Err(MemoryError::IndexNotInt { op: inst.name() });
        }
        if negative_constant(f, index) {
            return Err(MemoryError::NegativeIndex {
                op: inst.name(),
                index: n,
            });
        }
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
    if *rp != current {
        return Err(err());
    }
    Ok(())
}

/// Whether `id` is an `OpConstant` of a signed integer type whose value is negative.
fn negative_constant(f: &crate::facts::Facts, id: Id) -> bool {
    let Some(crate::facts::Constant {
        ty,
        value: crate::facts::ConstValue::Scalar(bits),
    }) = f.constants.get(&id)
    else {
        return false;
    };
    match f.int_scalar(*ty) {
        Some((width, true)) if (1..=64).contains(&width) => (bits >> (width - 1)) & 1 == 1,
        _ => false,
    }
}
