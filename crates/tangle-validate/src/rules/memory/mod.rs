//! Memory instructions (SPIR-V 3.x "Memory Instructions"; SPIRV-Tools `validate_memory.cpp`):
//! loads, stores and copies have pointer operands whose pointee types match, and do not store to
//! read-only memory; in Vulkan, the addressing model is Logical or PhysicalStorageBuffer64.
//! `--relax-struct-store` relaxes the store rule as in spirv-val. The other memory rules live
//! beside this file: `variable` (OpVariable), `access_chain`, `operands` (memory operands) and
//! `logical_pointers` (the module-wide Logical addressing rules).

mod access_chain;
mod logical_pointers;
pub mod operands;
mod variable;

pub use logical_pointers::check_logical_pointers;

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
    /// OpVariable: "Initializer must be an <id> from a constant instruction or a global (module
    /// scope) OpVariable instruction."
    #[error("OpVariable initializer must be a constant or a module-scope variable")]
    InitializerNotConstant,
    /// Vulkan: "Variable declarations that include initializers must have one of the following
    /// storage classes: Output, Private, Function or Workgroup".
    #[error(
        "in Vulkan only Output, Private, Function and Workgroup variables may have an initializer"
    )]
    VulkanInitializerStorage,
    /// Vulkan: a Workgroup variable's initializer "must be OpConstantNull".
    #[error("in Vulkan a Workgroup variable's initializer must be OpConstantNull")]
    WorkgroupInitializerNotNull,
    /// Input variables are written by the pipeline, not initialized (SPIRV-Tools
    /// `ValidateVariable`).
    #[error("an Input variable cannot have an initializer")]
    InputInitializer,
    /// PhysicalStorageBuffer memory is reached through pointers converted from addresses, never
    /// declared: "PhysicalStorageBuffer must not be used with OpVariable".
    #[error("OpVariable cannot be in PhysicalStorageBuffer storage")]
    PhysicalStorageBufferVariable,
    /// 2.16.1: OpTypeBool is only for memory that is not externally visible.
    #[error("a variable holding a boolean must be in Workgroup, CrossWorkgroup, Private, Function or UniformConstant storage (or be a built-in Input/Output variable)")]
    BoolInExternalStorage,
    /// Vulkan/SPIRV-Tools: an Input or Output variable holding a boolean must be a built-in.
    #[error("an Input or Output variable holding a boolean must be decorated BuiltIn")]
    BoolInterfaceNotBuiltIn,
    /// OpLoad of (a composite holding) a runtime array: its size is not known
    /// (`--before-hlsl-legalization` allows it).
    #[error("OpLoad cannot load a runtime-sized array")]
    LoadRuntimeArray,
    /// OpStore through a pointer to read-only memory.
    #[error("OpStore Pointer points to read-only {storage:?} memory")]
    StoreReadOnly { storage: StorageClass },
    /// Vulkan: "cannot store to Uniform Blocks" (uniform buffers are read-only).
    #[error("in Vulkan, OpStore cannot write to a Uniform Block")]
    StoreToUniformBlock,
    /// Memory operands: MakePointerAvailable is "Not valid with OpLoad", MakePointerVisible
    /// "Not valid with OpStore" (and likewise for the cooperative matrix load and store and the
    /// two accesses of OpCopyMemory).
    #[error("{flag} cannot be used with {access}")]
    MemoryAccessNotAllowed { flag: &'static str, access: String },
    /// Memory operands: NonPrivatePointer "must be specified if MakePointerAvailable or
    /// MakePointerVisible are specified".
    #[error("NonPrivatePointer must be given with {flag}")]
    MemoryAccessNeedsNonPrivate { flag: &'static str },
    /// NonPrivatePointer needs a pointer to memory other invocations can see.
    #[error("NonPrivatePointer needs a pointer in Uniform, Workgroup, CrossWorkgroup, Generic, Image, StorageBuffer or PhysicalStorageBuffer storage")]
    NonPrivatePointerStorage,
    /// Vulkan (VUID 04708, also checked elsewhere by SPIRV-Tools): "all instructions that
    /// support memory access operands and that use a physical pointer must include the Aligned
    /// operand".
    #[error("memory accesses through PhysicalStorageBuffer pointers must have the Aligned memory operand")]
    PhysicalStorageBufferNotAligned,
    /// Memory operands: Aligned's literal "must be a power of two".
    #[error("the Aligned memory operand must be a power of two")]
    AlignmentNotPowerOfTwo,
    /// OpCopyMemory/OpCopyMemorySized: the second memory operand (for Source) is SPIR-V 1.4.
    #[error("{op} with two memory operands needs SPIR-V 1.4")]
    TwoMemoryAccessesNeedSpirv14 { op: String },
}

impl MemoryError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            MemoryError::VulkanAddressingModel => Some(Vuid::ADDRESSING_MODEL),
            MemoryError::VulkanInitializerStorage => {
                Some(Vuid("VUID-StandaloneSpirv-OpVariable-04651"))
            }
            MemoryError::WorkgroupInitializerNotNull => {
                Some(Vuid("VUID-StandaloneSpirv-OpVariable-04734"))
            }
            MemoryError::BoolInterfaceNotBuiltIn => Some(Vuid("VUID-StandaloneSpirv-Input-07290")),
            MemoryError::StoreToUniformBlock => Some(Vuid("VUID-StandaloneSpirv-Uniform-06925")),
            MemoryError::PhysicalStorageBufferNotAligned => {
                Some(Vuid::PHYSICAL_STORAGE_BUFFER_ALIGNED)
            }
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
        Some(Op::Variable) => variable::check(cx, inst)?,
        Some(Op::Load) => {
            let Some((_, pointee)) = pointer(inst.id_operand(0)) else {
                return Err(MemoryError::NotPointer { op: inst.name() });
            };
            if inst.result_type != Some(pointee) {
                return Err(MemoryError::LoadType);
            }
            let runtime_array = |_: Id, t: &Type| matches!(t, Type::RuntimeArray { .. });
            if !cx.options.before_hlsl_legalization && f.contains(pointee, runtime_array) {
                return Err(MemoryError::LoadRuntimeArray);
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
            let Some((storage, pointee)) = pointer(inst.id_operand(0)) else {
                return Err(MemoryError::NotPointer { op: inst.name() });
            };
            store_target(cx, inst, storage)?;
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
        Some(Op::AccessChain | Op::InBoundsAccessChain) => access_chain::access_chain(cx, inst, 1)?,
        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => {
            access_chain::ptr_access_chain(cx, inst)?
        }
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

/// OpStore's Pointer is writable: not UniformConstant, Input, PushConstant or ShaderRecordBuffer
/// memory, and in Vulkan not a Uniform Block (VUID 06925: those are read-only; BufferBlock
/// ones are storage buffers).
fn store_target(cx: &Ctx, inst: &Instruction, storage: u32) -> Result<(), MemoryError> {
    use StorageClass as S;
    let read_only = [
        S::UniformConstant,
        S::Input,
        S::PushConstant,
        S::ShaderRecordBufferKHR,
    ];
    if let Some(s) = read_only.iter().find(|s| **s as u32 == storage) {
        return Err(MemoryError::StoreReadOnly { storage: *s });
    }
    if cx.vulkan() && storage == S::Uniform as u32 {
        let f = cx.facts;
        let block = inst
            .id_operand(0)
            .and_then(|p| base_variable(cx, p))
            .and_then(|v| v.result_type)
            .and_then(|t| f.pointer_info(t))
            .map(|(pointee, _)| match f.ty(pointee) {
                Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => *element,
                _ => pointee,
            })
            .is_some_and(|t| f.has_decoration(t, spirv::Decoration::Block));
        if block {
            return Err(MemoryError::StoreToUniformBlock);
        }
    }
    Ok(())
}

/// The OpVariable a pointer is derived from through access chains and copies (SPIRV-Tools
/// `TracePointer`), if any.
fn base_variable<'m>(cx: &'m Ctx, pointer: Id) -> Option<&'m Instruction> {
    let mut current = pointer;
    // Each step goes to an earlier definition; the bound only guards malformed input.
    for _ in 0..cx.module.instructions.len() {
        let def = cx.def(current)?;
        match def.op()? {
            Op::Variable => return Some(def),
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain
            | Op::CopyObject => current = def.id_operand(0)?,
            _ => return None,
        }
    }
    None
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
