//! OpVariable (SPIRV-Tools `ValidateVariable`): the pointer type and storage class, the
//! initializer, what a variable may hold in each storage class (pointers in Logical addressing,
//! booleans, 8- and 16-bit types), PhysicalStorageBuffer (never a variable) and the Vulkan
//! limits on initializers. Runtime arrays and explicit layouts are `block_layout`'s.

use super::MemoryError;
use crate::facts::Type;
use crate::rules::Ctx;
use spirv::{AddressingModel, Capability, Op, StorageClass};
use tangle_spirv::{Id, Instruction};

/// Checks an OpVariable, in SPIRV-Tools' order.
pub(super) fn check(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let f = cx.facts;
    let Some(Type::Pointer { storage, pointee }) = inst.result_type.and_then(|t| f.ty(t)) else {
        return Err(MemoryError::VariableNotPointer);
    };
    let (storage, pointee) = (*storage, *pointee);
    if let Some(init) = inst.id_operand(1) {
        initializer(cx, init, pointee)?;
    }
    boolean(cx, inst, storage, pointee)?;
    if inst.literal_operand(0) != Some(u64::from(storage)) {
        return Err(MemoryError::VariableStorageMismatch);
    }
    pointer_variable(cx, storage, pointee)?;
    if let Some(init) = inst.id_operand(1) {
        initializer_storage(cx, init, storage)?;
    }
    if storage == StorageClass::PhysicalStorageBuffer as u32 {
        return Err(MemoryError::PhysicalStorageBufferVariable);
    }
    small_type_variable(cx, storage, pointee)
}

/// OpVariable: "Initializer must be an <id> from a constant instruction or a global (module
/// scope) OpVariable instruction", of the variable's pointee type (SPIRV-Tools compares the
/// initializer's own type, so a global variable as initializer never matches).
fn initializer(cx: &Ctx, init: Id, pointee: Id) -> Result<(), MemoryError> {
    let f = cx.facts;
    let global_variable = cx.def(init).is_some_and(|d| {
        d.op() == Some(Op::Variable)
            && d.literal_operand(0) != Some(u64::from(StorageClass::Function as u32))
    });
    if !f.is_constant_instruction(init) && !global_variable {
        return Err(MemoryError::InitializerNotConstant);
    }
    if f.type_of(init) != Some(pointee) {
        return Err(MemoryError::InitializerType);
    }
    Ok(())
}

/// The storage classes an initializer may be given in: Vulkan allows Output, Private,
/// Function, and Workgroup with OpConstantNull (VUIDs 04651, 04734); Input variables never
/// have one.
fn initializer_storage(cx: &Ctx, init: Id, storage: u32) -> Result<(), MemoryError> {
    let is = |sc: StorageClass| storage == sc as u32;
    if cx.vulkan()
        && !(is(StorageClass::Output) || is(StorageClass::Private) || is(StorageClass::Function))
    {
        if !is(StorageClass::Workgroup) {
            return Err(MemoryError::VulkanInitializerStorage);
        }
        if cx.def(init).and_then(Instruction::op) != Some(Op::ConstantNull) {
            return Err(MemoryError::WorkgroupInitializerNotNull);
        }
    }
    if is(StorageClass::Input) {
        return Err(MemoryError::InputInitializer);
    }
    Ok(())
}

/// SPIR-V 2.16.1: "OpTypeBool ... may only be used with non-externally visible storage
/// classes" (SPIRV-Tools `ContainsInvalidBool`): a variable holding a boolean is in Workgroup,
/// CrossWorkgroup, Private, Function or UniformConstant memory (or a ray-tracing, task or node
/// payload class), or is a built-in Input/Output variable.
fn boolean(cx: &Ctx, inst: &Instruction, storage: u32, pointee: Id) -> Result<(), MemoryError> {
    use StorageClass as S;
    let f = cx.facts;
    let internal = [
        S::Workgroup,
        S::CrossWorkgroup,
        S::Private,
        S::Function,
        S::UniformConstant,
        S::RayPayloadKHR,
        S::IncomingRayPayloadKHR,
        S::HitAttributeKHR,
        S::CallableDataKHR,
        S::IncomingCallableDataKHR,
        S::TaskPayloadWorkgroupEXT,
        S::HitObjectAttributeNV,
        S::NodePayloadAMDX,
    ];
    if internal.iter().any(|s| *s as u32 == storage) {
        return Ok(());
    }
    let interface = storage == S::Input as u32 || storage == S::Output as u32;
    let builtin = |id: Id| f.has_decoration_or_member(id, spirv::Decoration::BuiltIn);
    if interface && inst.result_id.is_some_and(builtin) {
        return Ok(());
    }
    // Input/Output: a type decorated BuiltIn (a gl_PerVertex-like struct) is not a user bool.
    let builtin_type = interface && f.contains(pointee, |id, _| builtin(id));
    if !builtin_type && f.contains(pointee, |_, t| matches!(t, Type::Bool)) {
        return Err(if interface {
            MemoryError::BoolInterfaceNotBuiltIn
        } else {
            MemoryError::BoolInExternalStorage
        });
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
    // A bfloat16 is not restricted: SPV_KHR_bfloat16's BFloat16TypeKHR declares it for use
    // (as in `Facts::contains_limited_use`; spirv-val 2025.5 accepts bf16 buffers without the
    // 16-bit storage capabilities).
    let sixteen = (!f.has_capability(Capability::Int16) && f.contains_sized(pointee, false, 16))
        || (!f.has_capability(Capability::Float16) && f.contains_sized_ieee_float(pointee, 16));
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
