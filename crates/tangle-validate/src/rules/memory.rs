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
    /// OpCopyMemory: "The type of Source and Target must be the same" (and not void).
    #[error("OpCopyMemory Target and Source must point to the same (non-void) type")]
    CopyMemoryType,
    /// Access chains: "Each index must be a scalar integer type."
    #[error("{op} indexes must be integer scalars")]
    IndexNotInt { op: String },
    /// OpPtrAccessChain in the Logical addressing model generates a variable pointer: it needs
    /// the VariablePointers or VariablePointersStorageBuffer capability.
    #[error("OpPtrAccessChain in the Logical addressing model needs the VariablePointers or VariablePointersStorageBuffer capability")]
    PtrAccessChainNeedsVariablePointers,
    /// With the Shader capability, the Base of OpPtrAccessChain into Uniform, StorageBuffer,
    /// PhysicalStorageBuffer or PushConstant memory (and Workgroup memory with explicit layout)
    /// has a pointer type decorated with ArrayStride.
    #[error("OpPtrAccessChain Base must have a pointer type decorated with ArrayStride")]
    PtrAccessChainArrayStride,
    /// Vulkan: OpPtrAccessChain's Base points to Workgroup memory (with VariablePointers),
    /// StorageBuffer memory (with variable pointers) or PhysicalStorageBuffer memory.
    #[error("OpPtrAccessChain in Vulkan: {why}")]
    VulkanPtrAccessChain { why: &'static str },
    /// OpPtrAccessChain: "Element must be an OpConstant" ... of integer type; SPIRV-Tools
    /// checks that it is an integer scalar.
    #[error("OpPtrAccessChain Element must be an integer scalar")]
    ElementNotInt,
    /// OpPtrAccessChain on a pointer to a Block- or BufferBlock-decorated struct: a constant
    /// Element must be 0 (SPIRV-Tools 2025.5; there is no array of blocks to step through).
    #[error(
        "OpPtrAccessChain into a Block or BufferBlock struct must have a constant Element of 0"
    )]
    BlockElementNotZero,
    /// Access chains: an index that is a signed integer OpConstant must not be negative
    /// (SPIRV-Tools 2025.5: "Index at word N may not have a negative value").
    #[error("{op} index {index} is a negative constant")]
    NegativeIndex { op: String, index: usize },
    /// 2.16.1, Logical addressing: only some instructions take logical pointer operands; the
    /// variable-pointer ones (OpSelect, OpPhi, OpPtrAccessChain, OpPtrEqual ...) only pointers
    /// to StorageBuffer memory (with VariablePointersStorageBuffer) or Workgroup memory (with
    /// VariablePointers).
    #[error("in Logical addressing {why}")]
    LogicalPointerOperand { why: &'static str },
    /// 2.16.1, Logical addressing: only some instructions return logical pointers; the
    /// variable-pointer ones (OpSelect, OpPhi, OpPtrAccessChain, OpLoad, OpFunctionCall,
    /// OpConstantNull) only pointers to StorageBuffer memory (with
    /// VariablePointersStorageBuffer) or Workgroup memory (with VariablePointers).
    #[error("in Logical addressing {why}")]
    LogicalPointerResult { why: &'static str },
    /// 2.16.1: "A variable pointer ... must not ... point to an object that is or contains an
    /// OpTypeMatrix" (a pointer that is, or flows into, OpSelect, OpPhi, OpPtrAccessChain ...).
    #[error("a variable pointer cannot point to a matrix or an object containing one")]
    VariablePointerToMatrix,
    /// With the Shader capability, a variable holding an 8-bit integer without Int8 (a 16-bit
    /// integer without Int16, a 16-bit float without Float16) must be in memory a storage
    /// capability covers: StorageBuffer/PhysicalStorageBuffer (StorageBuffer8BitAccess /
    /// StorageBuffer16BitAccess), Uniform, PushConstant, Input/Output (16-bit) or Workgroup
    /// (with explicit layout).
    #[error("a variable holding {bits}-bit values {why}")]
    SmallTypeVariable { bits: u32, why: &'static str },
    /// With the Shader capability, loads of restricted 8- or 16-bit types are of scalars,
    /// vectors or matrices, and OpCopyMemory does not copy them.
    #[error("{op} cannot {what} 8- or 16-bit types without the Int8, Int16 or Float16 capability")]
    SmallTypeAccess { op: String, what: &'static str },
    /// 2.16.1: "A variable pointer ... must not ... point to a column, or a column-element, of
    /// an object of type OpTypeMatrix."
    #[error("a variable pointer cannot point to a column of a matrix or a component of one")]
    VariablePointerIntoMatrix,
}

impl MemoryError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            MemoryError::VulkanAddressingModel => Some(Vuid::ADDRESSING_MODEL),
            MemoryError::VulkanPtrAccessChain { why } => {
                Some(Vuid(if why.starts_with("a Workgroup") {
                    "VUID-StandaloneSpirv-OpPtrAccessChain-07651"
                } else if why.starts_with("a StorageBuffer") {
                    "VUID-StandaloneSpirv-OpPtrAccessChain-07652"
                } else {
                    "VUID-StandaloneSpirv-OpPtrAccessChain-07650"
                }))
            }
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
            small_type_variable(cx, *storage, *pointee)?;
        }
        Some(Op::Load) => {
            let Some((_, pointee)) = pointer(inst.id_operand(0)) else {
                return Err(MemoryError::NotPointer { op: inst.name() });
            };
            if inst.result_type != Some(pointee) {
                return Err(MemoryError::LoadType);
            }
            let aggregate = !matches!(
                f.ty(pointee),
                Some(
                    Type::Int { .. }
                        | Type::Float { .. }
                        | Type::Vector { .. }
                        | Type::Matrix { .. }
                        | Type::Pointer { .. }
                )
            );
            if aggregate && f.has_capability(Capability::Shader) && f.contains_limited_use(pointee)
            {
                return Err(MemoryError::SmallTypeAccess {
                    op: inst.name(),
                    what: "load aggregates holding",
                });
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
        Some(Op::AccessChain | Op::InBoundsAccessChain) => access_chain(cx, inst, 1)?,
        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => ptr_access_chain(cx, inst)?,
        Some(Op::CopyMemory) => {
            let target = pointer(inst.id_operand(0)).map(|(_, p)| p);
            let source = pointer(inst.id_operand(1)).map(|(_, p)| p);
            let is_pointer = |id: Option<Id>| {
                matches!(
                    id.and_then(|p| f.value_type(p)),
                    Some(Type::Pointer { .. } | Type::UntypedPointer { .. })
                )
            };
            if !is_pointer(inst.id_operand(0)) || !is_pointer(inst.id_operand(1)) {
                return Err(MemoryError::NotPointer { op: inst.name() });
            }
            let void = |t: Option<Id>| matches!(t.and_then(|t| f.ty(t)), Some(Type::Void));
            if void(target) || void(source) {
                return Err(MemoryError::CopyMemoryType);
            }
            if let (Some(t), Some(s)) = (target, source) {
                if t != s {
                    return Err(MemoryError::CopyMemoryType);
                }
            }
            if target.is_some_and(|t| f.contains_limited_use(t))
                && f.has_capability(Capability::Shader)
            {
                return Err(MemoryError::SmallTypeAccess {
                    op: inst.name(),
                    what: "copy",
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// `OpPtrAccessChain %ptr_ty %base %element %indexes...` (SPIRV-Tools `ValidatePtrAccessChain`).
fn ptr_access_chain(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
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

/// SPIRV-Tools `ValidateVariable`'s 16- and 8-bit rules (under the Shader capability): the
/// storage class (of the innermost pointer, for a variable holding pointers) must be one a
/// storage capability covers, and that capability declared.
fn small_type_variable(cx: &Ctx, storage: u32, pointee: Id) -> Result<(), MemoryError> {
    let f = cx.facts;
    if !f.has_capability(Capability::Shader) {
        return Ok(());
    }
    // A variable holding pointers: the storage class of the innermost one.
    let mut storage = storage;
    let mut underlying = pointee;
    let mut depth = 0;
    while let Some((inner, sc)) = f.pointer_info(underlying) {
        storage = sc;
        underlying = inner;
        depth += 1;
        if depth > 64 {
            break;
        }
    }
    let sixteen = (!f.has_capability(Capability::Int16) && f.contains_sized(pointee, false, 16))
        || (!f.has_capability(Capability::Float16) && f.contains_sized(pointee, true, 16));
    let eight = !f.has_capability(Capability::Int8) && f.contains_sized(pointee, false, 8);
    for (bits, restricted) in [(16, sixteen), (8, eight)] {
        if !restricted {
            continue;
        }
        let has = |c: Capability| f.has_capability(c);
        let (storage_buffer, uniform, push_constant, workgroup) = if bits == 16 {
            (
                Capability::StorageBuffer16BitAccess,
                Capability::UniformAndStorageBuffer16BitAccess,
                Capability::StoragePushConstant16,
                Capability::WorkgroupMemoryExplicitLayout16BitAccessKHR,
            )
        } else {
            (
                Capability::StorageBuffer8BitAccess,
                Capability::UniformAndStorageBuffer8BitAccess,
                Capability::StoragePushConstant8,
                Capability::WorkgroupMemoryExplicitLayout8BitAccessKHR,
            )
        };
        let is = |sc: StorageClass| storage == sc as u32;
        let ok = if is(StorageClass::StorageBuffer) || is(StorageClass::PhysicalStorageBuffer) {
            has(storage_buffer)
        } else if is(StorageClass::Uniform) {
            // A BufferBlock (or array of them) with the storage-buffer capability will do.
            let block = match f.ty(underlying) {
                Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => *element,
                _ => underlying,
            };
            has(uniform)
                || (has(storage_buffer) && f.has_decoration(block, spirv::Decoration::BufferBlock))
        } else if is(StorageClass::PushConstant) {
            has(push_constant)
        } else if bits == 16 && (is(StorageClass::Input) || is(StorageClass::Output)) {
            has(Capability::StorageInputOutput16)
        } else if is(StorageClass::Workgroup) {
            has(workgroup)
        } else {
            return Err(MemoryError::SmallTypeVariable {
                bits,
                why: "cannot be in this storage class",
            });
        };
        if !ok {
            return Err(MemoryError::SmallTypeVariable {
                bits,
                why: "needs the storage capability of its storage class",
            });
        }
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

/// `OpAccessChain %ptr_ty %base %indexes...`: walking the base's pointee type with the integer
/// indexes from operand `first` reaches the Result Type's pointee, in the same storage class.
fn access_chain(cx: &Ctx, inst: &Instruction, first: usize) -> Result<(), MemoryError> {
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

/// The logical-pointer rules of the Logical and PhysicalStorageBuffer64 addressing models
/// (SPIRV-Tools `ValidateLogicalPointers`, after the instruction passes): which instructions
/// take and return logical pointers (pointers other than PhysicalStorageBuffer ones), and what
/// variable pointers may point to. `--relax-logical-pointer` lifts them.
pub fn check_logical_pointers(cx: &Ctx, sink: &mut super::Sink) {
    let f = cx.facts;
    let model = f.addressing_model;
    let logical_model = model == Some(AddressingModel::Logical as u32)
        || model == Some(AddressingModel::PhysicalStorageBuffer64 as u32);
    if !logical_model || cx.options.relax_logical_pointer {
        return;
    }
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        if let Err(e) = pointer_operands(cx, inst).and_then(|()| pointer_result(cx, inst)) {
            sink.error(Some(index), e);
        }
    }
    variable_pointers(cx, sink);
}

/// The storage class of a logical pointer type (`None` for other types and for
/// PhysicalStorageBuffer pointers).
fn logical_pointer_storage(cx: &Ctx, ty: Option<Id>) -> Option<u32> {
    let storage = match ty.and_then(|t| cx.facts.ty(t))? {
        Type::Pointer { storage, .. } | Type::UntypedPointer { storage } => *storage,
        _ => return None,
    };
    (storage != StorageClass::PhysicalStorageBuffer as u32).then_some(storage)
}

/// Variable pointers live in StorageBuffer memory (with VariablePointersStorageBuffer, which
/// VariablePointers implies) or Workgroup memory (with VariablePointers).
fn variable_pointer_storage_ok(cx: &Ctx, storage: u32) -> bool {
    let f = cx.facts;
    (storage == StorageClass::StorageBuffer as u32
        && f.has_capability(Capability::VariablePointersStorageBuffer))
        || (storage == StorageClass::Workgroup as u32
            && f.has_capability(Capability::VariablePointers))
}

/// SPIRV-Tools `ValidateLogicalPointerOperands` (instructions with a result type only; the
/// storage class is the first logical pointer operand's).
fn pointer_operands(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    if inst.result_type.is_none() {
        return Ok(());
    }
    let Some(storage) = inst
        .operands
        .iter()
        .filter_map(Operand::id)
        .find_map(|v| logical_pointer_storage(cx, cx.facts.type_of(v)))
    else {
        return Ok(());
    };
    let Some(op) = inst.op() else { return Ok(()) };
    let is_atomic = inst.desc().is_some_and(|d| d.class == "Atomic");
    match op {
        Op::Load
        | Op::Store
        | Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::FunctionCall
        | Op::ImageTexelPointer
        | Op::CopyMemory
        | Op::CopyMemorySized
        | Op::CopyObject
        | Op::ArrayLength
        | Op::ExtInst
        | Op::Decorate
        | Op::DecorateId
        | Op::EntryPoint
        | Op::UntypedArrayLengthKHR
        | Op::UntypedAccessChainKHR
        | Op::UntypedInBoundsAccessChainKHR
        | Op::CooperativeMatrixLoadKHR
        | Op::CooperativeMatrixStoreKHR
        | Op::CooperativeMatrixLoadNV
        | Op::CooperativeMatrixStoreNV => Ok(()),
        _ if is_atomic => Ok(()),
        Op::ReturnValue
        | Op::PtrAccessChain
        | Op::PtrEqual
        | Op::PtrNotEqual
        | Op::PtrDiff
        | Op::Select
        | Op::Phi
        | Op::Variable
        | Op::UntypedPtrAccessChainKHR => {
            if variable_pointer_storage_ok(cx, storage) {
                Ok(())
            } else {
                Err(MemoryError::LogicalPointerOperand {
                    why: "this instruction takes pointers only to StorageBuffer or Workgroup memory, with the variable pointers capability for it",
                })
            }
        }
        // Instructions of other extensions SPIRV-Tools lists are not in tangle's scope; the
        // rest take no logical pointers.
        _ if inst.name().contains("RayQuery") || inst.name().contains("HitObject") => Ok(()),
        _ => Err(MemoryError::LogicalPointerOperand {
            why: "this instruction cannot take a pointer operand",
        }),
    }
}

/// SPIRV-Tools `ValidateLogicalPointerReturns`.
fn pointer_result(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let Some(storage) = logical_pointer_storage(cx, inst.result_type) else {
        return Ok(());
    };
    let Some(op) = inst.op() else { return Ok(()) };
    match op {
        Op::Variable
        | Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::FunctionParameter
        | Op::ImageTexelPointer
        | Op::CopyObject
        | Op::Undef
        | Op::UntypedAccessChainKHR
        | Op::UntypedInBoundsAccessChainKHR
        | Op::UntypedVariableKHR => Ok(()),
        Op::Select
        | Op::Phi
        | Op::FunctionCall
        | Op::PtrAccessChain
        | Op::Load
        | Op::ConstantNull
        | Op::Function
        | Op::UntypedPtrAccessChainKHR => {
            if variable_pointer_storage_ok(cx, storage) {
                Ok(())
            } else {
                Err(MemoryError::LogicalPointerResult {
                    why: "this instruction returns pointers only to StorageBuffer or Workgroup memory, with the variable pointers capability for it",
                })
            }
        }
        _ => Err(MemoryError::LogicalPointerResult {
            why: "this instruction cannot return a pointer",
        }),
    }
}

/// The variable pointers: the logical pointers OpSelect, OpPhi, OpPtrAccessChain, OpLoad,
/// OpFunctionCall and OpConstantNull return, the pointers OpSelect and OpPhi choose from and
/// OpPtrAccessChain starts from, and (back through access chains and copies) the pointers they
/// are derived from, variables aside. Each must not point to (an object containing) a matrix,
/// nor into a matrix (as SPIRV-Tools 2025.5 finds them).
fn variable_pointers(cx: &Ctx, sink: &mut super::Sink) {
    let f = cx.facts;
    let logical = |v: Id| logical_pointer_storage(cx, f.type_of(v)).is_some();
    let mut variable = crate::facts::IdSet::default();
    let mut work: Vec<Id> = Vec::new();
    for inst in &cx.module.instructions {
        let Some(op) = inst.op() else { continue };
        let seed = matches!(
            op,
            Op::Select
                | Op::Phi
                | Op::PtrAccessChain
                | Op::Load
                | Op::FunctionCall
                | Op::ConstantNull
        );
        if !seed {
            continue;
        }
        work.extend(inst.result_id.filter(|r| logical(*r)));
        let chosen: Vec<Id> = match op {
            Op::Select => inst
                .operands
                .iter()
                .skip(1)
                .filter_map(Operand::id)
                .collect(),
            Op::Phi => inst
                .operands
                .iter()
                .step_by(2)
                .filter_map(Operand::id)
                .collect(),
            Op::PtrAccessChain => inst.id_operand(0).into_iter().collect(),
            _ => Vec::new(),
        };
        work.extend(chosen.into_iter().filter(|v| logical(*v)));
    }
    while let Some(p) = work.pop() {
        if !variable.insert(p) {
            continue;
        }
        let Some(def) = cx.def(p) else { continue };
        let derived_from = match def.op() {
            Some(
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::CopyObject,
            ) => def.id_operand(0),
            _ => None,
        };
        work.extend(derived_from.filter(|b| logical(*b)));
    }
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        let Some(result) = inst.result_id else {
            continue;
        };
        if !variable.contains(&result) || inst.op() == Some(Op::Variable) {
            continue;
        }
        let pointee = inst
            .result_type
            .and_then(|t| f.pointer_info(t))
            .map(|p| p.0);
        if pointee.is_some_and(|p| contains_matrix(f, p)) {
            sink.error(Some(index), MemoryError::VariablePointerToMatrix);
        } else if walks_through_matrix(cx, inst) {
            sink.error(Some(index), MemoryError::VariablePointerIntoMatrix);
        }
    }
}

/// Whether the type is, or contains (through arrays and structs), a matrix.
fn contains_matrix(f: &crate::facts::Facts, ty: Id) -> bool {
    let mut stack = vec![ty];
    let mut seen = crate::facts::IdSet::default();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        match f.ty(t) {
            Some(Type::Matrix { .. }) => return true,
            Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => {
                stack.push(*element)
            }
            Some(Type::Struct { members }) => stack.extend(members.iter().copied()),
            _ => {}
        }
    }
    false
}

/// Whether an access chain's indexes step into a matrix (to a column or a component of one).
fn walks_through_matrix(cx: &Ctx, inst: &Instruction) -> bool {
    let f = cx.facts;
    let first = match inst.op() {
        Some(Op::AccessChain | Op::InBoundsAccessChain) => 1,
        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => 2,
        _ => return false,
    };
    let Some((mut current, _)) = inst
        .id_operand(0)
        .and_then(|b| f.type_of(b))
        .and_then(|t| f.pointer_info(t))
    else {
        return false;
    };
    for index in inst.operands.iter().skip(first).filter_map(Operand::id) {
        current = match f.ty(current) {
            Some(Type::Matrix { .. }) => return true,
            Some(
                Type::Vector { component: e, .. }
                | Type::Array { element: e, .. }
                | Type::RuntimeArray { element: e },
            ) => *e,
            Some(Type::Struct { members }) => {
                let member = f.eval_int(index).and_then(|i| usize::try_from(i).ok());
                match member.and_then(|i| members.get(i)) {
                    Some(m) => *m,
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    false
}
