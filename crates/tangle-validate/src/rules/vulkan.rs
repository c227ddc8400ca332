//! Vulkan environment rules for compute modules (Vulkan "SPIR-V Environment" appendix,
//! "Standalone SPIR-V Validation" and "Built-In Variables"; SPIRV-Tools `validate_decorations.cpp`,
//! `validate_builtins.cpp`): only Vulkan storage classes; resource variables are Block structs
//! (UniformConstant ones opaque handles) with descriptor bindings, block
//! members carry offsets, and compute built-ins have their declared types and storage classes.

use super::{Ctx, Sink};
use crate::facts::Type;
use crate::vuid::Vuid;
use spirv::{BuiltIn, Decoration as D, Op, StorageClass as SC};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction, Operand};

/// A Vulkan environment rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VulkanError {
    /// Uniform, StorageBuffer and PushConstant variables are (arrays of) structs decorated
    /// Block (or BufferBlock for Uniform).
    #[error("variable %{variable} in {storage} storage must be a struct decorated Block")]
    NotABlock { variable: Id, storage: &'static str },
    /// Resource variables need DescriptorSet and Binding.
    #[error("resource variable %{variable} needs DescriptorSet and Binding decorations")]
    MissingBinding { variable: Id },
    /// Every member of a Block struct has an Offset (and arrays in it an ArrayStride).
    #[error("member {member} of block struct %{block} has no Offset decoration")]
    MissingOffset { block: Id, member: usize },
    /// Arrays inside blocks need ArrayStride.
    #[error("array type %{array} used in a block has no ArrayStride decoration")]
    MissingArrayStride { array: Id },
    /// Vulkan: "GLCompute execution model entry points require either the LocalSize or
    /// LocalSizeId execution mode or an object decorated with WorkgroupSize".
    #[error(
        "GLCompute entry point %{entry} needs LocalSize, LocalSizeId or a WorkgroupSize built-in"
    )]
    ComputeWithoutLocalSize { entry: Id },
    /// LocalSizeId needs Vulkan 1.3 (maintenance4) or `--allow-localsizeid` (SPIRV-Tools
    /// `ValidateExecutionMode`: "LocalSizeId mode is not allowed by the current environment").
    #[error("the LocalSizeId execution mode needs Vulkan 1.3 (or the maintenance4 feature)")]
    LocalSizeIdNotAllowed,
    /// Vulkan (VUID 04655): UniformConstant variables are handles to opaque resources: "typed as
    /// OpTypeImage, OpTypeSampler, OpTypeSampledImage, OpTypeAccelerationStructureKHR, or an
    /// array of one of these types".
    #[error("UniformConstant variable %{variable} must be an image, sampler, sampled image or acceleration structure (or an array of them)")]
    UniformConstantType { variable: Id },
    /// Vulkan (VUID 04643): pointers and variables use only the storage classes Vulkan has
    /// (not CrossWorkgroup, Generic, AtomicCounter, CodeSectionINTEL ...).
    #[error("storage class {storage} does not exist in Vulkan")]
    StorageClass { storage: String },
    /// Vulkan (VUID 04677): "Variables decorated with Invariant ... must only be identified with
    /// the Input or Output storage class" (also through the members of its struct type).
    #[error("only Input and Output variables may be decorated Invariant (%{variable})")]
    InvariantStorage { variable: Id },
    /// Compute built-ins are Input variables of the type the built-in declares.
    #[error("built-in {builtin} must be declared as {expected}")]
    BuiltInType {
        builtin: &'static str,
        expected: &'static str,
        /// The VUID of the broken half: "must be declared using the Input Storage Class", or
        /// the type.
        vuid: &'static str,
    },
}

impl VulkanError {
    /// The Vulkan VUID of the rule, where the Vulkan specification names one.
    pub fn vuid(&self) -> Option<Vuid> {
        Some(Vuid(match self {
            VulkanError::NotABlock {
                storage: "PushConstant",
                ..
            } => "VUID-StandaloneSpirv-PushConstant-06808",
            VulkanError::NotABlock { .. } => "VUID-StandaloneSpirv-Uniform-06807",
            VulkanError::MissingBinding { .. } => "VUID-StandaloneSpirv-UniformConstant-06677",
            VulkanError::UniformConstantType { .. } => "VUID-StandaloneSpirv-UniformConstant-04655",
            VulkanError::ComputeWithoutLocalSize { .. } => "VUID-StandaloneSpirv-None-10685",
            VulkanError::BuiltInType { vuid, .. } => vuid,
            VulkanError::StorageClass { .. } => "VUID-StandaloneSpirv-None-04643",
            VulkanError::InvariantStorage { .. } => "VUID-StandaloneSpirv-Invariant-04677",
            _ => return None,
        }))
    }
}

/// Runs the Vulkan environment rules (nothing outside Vulkan environments).
pub fn check(cx: &Ctx, sink: &mut Sink) {
    if !cx.vulkan() {
        return;
    }
    local_size(cx, sink);
    // `--before-hlsl-legalization`: resource variables no entry point uses need no bindings.
    let used = cx.options.before_hlsl_legalization.then(|| {
        let roots: Vec<Id> = cx.facts.entry_points.iter().map(|e| e.function).collect();
        cx.ids_used_by(&roots)
            .into_iter()
            .collect::<crate::facts::IdSet>()
    });
    // The structs buffer variables lay out: the only ones whose members need Offset/ArrayStride.
    let laid_out: crate::facts::IdSet = cx
        .module
        .instructions
        .iter()
        .filter(|i| i.op() == Some(Op::Variable))
        .filter_map(|i| super::block_layout::buffer_variable_block(cx, i))
        .map(|(block, ..)| block)
        .collect();
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        match inst.op() {
            Some(Op::Variable) => {
                let unused = inst
                    .result_id
                    .zip(used.as_ref())
                    .is_some_and(|(v, used)| !used.contains(&v));
                if !unused {
                    sink.check(index, resource(cx, inst));
                }
                sink.check(index, invariant(cx, inst));
            }
            Some(Op::TypeStruct) if inst.result_id.is_some_and(|s| laid_out.contains(&s)) => {
                sink.check(index, block_offsets(cx, inst))
            }
            _ => {}
        }
        sink.check(index, storage_class(inst));
        if let Some(id) = inst.result_id {
            sink.check(index, builtin(cx, id, inst));
        }
    }
}

/// Every GLCompute entry point has a workgroup size; LocalSizeId only where the environment
/// allows it.
fn local_size(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    let local_size_id_allowed = cx.options.allow_localsizeid
        || !matches!(cx.env, tangle_spirv::TargetEnv::Vulkan { api, .. } if api.minor < 3);
    if !local_size_id_allowed {
        for mode in f.execution_modes.values().flatten() {
            if mode.mode == spirv::ExecutionMode::LocalSizeId as u32 {
                sink.error(Some(mode.index), VulkanError::LocalSizeIdNotAllowed);
            }
        }
    }
    let workgroup_size_builtin = f.decorations.values().flatten().any(|d| {
        d.decoration == D::BuiltIn as u32
            && d.params.first().and_then(Operand::literal) == Some(BuiltIn::WorkgroupSize as u64)
    });
    if workgroup_size_builtin {
        return;
    }
    for entry in f
        .entry_points
        .iter()
        .filter(|e| e.model == spirv::ExecutionModel::GLCompute as u32)
    {
        let sized = f.execution_modes.get(&entry.function).is_some_and(|modes| {
            modes.iter().any(|m| {
                m.mode == spirv::ExecutionMode::LocalSize as u32
                    || m.mode == spirv::ExecutionMode::LocalSizeId as u32
            })
        });
        if !sized {
            sink.error(
                Some(entry.index),
                VulkanError::ComputeWithoutLocalSize {
                    entry: entry.function,
                },
            );
        }
    }
}

/// The pointee of a variable's pointer type, and its storage class.
fn pointer_of(cx: &Ctx, inst: &Instruction) -> Option<(u32, Id)> {
    match cx.facts.ty(inst.result_type?)? {
        Type::Pointer { storage, pointee } => Some((*storage, *pointee)),
        _ => None,
    }
}

/// The storage class operand of a pointer type or variable is one Vulkan has (SPIRV-Tools
/// `IsValidStorageClass`).
fn storage_class(inst: &Instruction) -> Result<(), VulkanError> {
    use SC as S;
    const VULKAN: [SC; 19] = [
        S::UniformConstant,
        S::Uniform,
        S::StorageBuffer,
        S::Input,
        S::Output,
        S::Image,
        S::Workgroup,
        S::Private,
        S::Function,
        S::PushConstant,
        S::PhysicalStorageBuffer,
        S::RayPayloadKHR,
        S::IncomingRayPayloadKHR,
        S::HitAttributeKHR,
        S::CallableDataKHR,
        S::IncomingCallableDataKHR,
        S::ShaderRecordBufferKHR,
        S::TaskPayloadWorkgroupEXT,
        S::HitObjectAttributeNV,
    ];
    for operand in &inst.operands {
        if let Operand::Enum(OperandKind::StorageClass, value) = operand {
            if !VULKAN.iter().any(|s| *s as u32 == *value) {
                let storage = OperandKind::StorageClass
                    .enumerant(*value)
                    .map_or_else(|| value.to_string(), |e| e.name.to_string());
                return Err(VulkanError::StorageClass { storage });
            }
        }
    }
    Ok(())
}

/// Only Input and Output variables (or the members of their struct types) are Invariant.
fn invariant(cx: &Ctx, inst: &Instruction) -> Result<(), VulkanError> {
    let (Some(variable), Some((storage, pointee))) = (inst.result_id, pointer_of(cx, inst)) else {
        return Ok(());
    };
    if storage == SC::Input as u32 || storage == SC::Output as u32 {
        return Ok(());
    }
    let invariant = |id: Id| cx.facts.has_decoration_or_member(id, D::Invariant);
    let member_invariant =
        matches!(cx.facts.ty(pointee), Some(Type::Struct { .. })) && invariant(pointee);
    if invariant(variable) || member_invariant {
        return Err(VulkanError::InvariantStorage { variable });
    }
    Ok(())
}

/// Resource variables: Block structs with DescriptorSet and Binding.
fn resource(cx: &Ctx, inst: &Instruction) -> Result<(), VulkanError> {
    let f = cx.facts;
    let (Some(variable), Some((storage, pointee))) = (inst.result_id, pointer_of(cx, inst)) else {
        return Ok(());
    };
    let name = match storage {
        s if s == SC::Uniform as u32 => "Uniform",
        s if s == SC::StorageBuffer as u32 => "StorageBuffer",
        s if s == SC::PushConstant as u32 => "PushConstant",
        s if s == SC::UniformConstant as u32 => "UniformConstant",
        _ => return Ok(()),
    };
    // Arrays of resources are allowed; the block is their element.
    let mut element = pointee;
    while let Some(Type::Array { element: e, .. } | Type::RuntimeArray { element: e }) =
        f.ty(element)
    {
        element = *e;
    }
    if name == "UniformConstant" {
        let opaque = [
            Op::TypeImage,
            Op::TypeSampler,
            Op::TypeSampledImage,
            Op::TypeAccelerationStructureKHR,
        ];
        if !matches!(f.ty(element), Some(Type::Other(op)) if opaque.iter().any(|o| *o as u16 == *op))
        {
            return Err(VulkanError::UniformConstantType { variable });
        }
    } else {
        let block = f.has_decoration(element, D::Block)
            || (name == "Uniform" && f.has_decoration(element, D::BufferBlock));
        if !matches!(f.ty(element), Some(Type::Struct { .. })) || !block {
            return Err(VulkanError::NotABlock {
                variable,
                storage: name,
            });
        }
    }
    if name != "PushConstant"
        && !(f.has_decoration(variable, D::DescriptorSet) && f.has_decoration(variable, D::Binding))
    {
        return Err(VulkanError::MissingBinding { variable });
    }
    Ok(())
}

/// Members of Block/BufferBlock structs that buffer variables use have offsets; arrays directly
/// in them have strides (SPIRV-Tools `CheckDecorationsOfBuffers`, which visits variables: a
/// struct no variable uses is not checked).
fn block_offsets(cx: &Ctx, inst: &Instruction) -> Result<(), VulkanError> {
    let f = cx.facts;
    let Some(block) = inst.result_id else {
        return Ok(());
    };
    if !(f.has_decoration(block, D::Block) || f.has_decoration(block, D::BufferBlock)) {
        return Ok(());
    }
    let decorations = f.decorations.get(&block);
    for (member, ty) in inst.operands.iter().filter_map(Operand::id).enumerate() {
        let has_offset = decorations.is_some_and(|ds| {
            ds.iter()
                .any(|d| d.member == Some(member as u32) && d.decoration == D::Offset as u32)
        });
        if !has_offset {
            return Err(VulkanError::MissingOffset { block, member });
        }
        if matches!(
            f.ty(ty),
            Some(Type::Array { .. } | Type::RuntimeArray { .. })
        ) && !f.has_decoration(ty, D::ArrayStride)
        {
            return Err(VulkanError::MissingArrayStride { array: ty });
        }
    }
    Ok(())
}

/// The compute built-ins' declared types.
fn builtin(cx: &Ctx, id: Id, inst: &Instruction) -> Result<(), VulkanError> {
    let f = cx.facts;
    let Some(decorations) = f.decorations.get(&id) else {
        return Ok(());
    };
    let Some(value) = decorations
        .iter()
        .find(|d| d.member.is_none() && d.decoration == D::BuiltIn as u32)
    else {
        return Ok(());
    };
    let Some(b) = value
        .params
        .first()
        .and_then(Operand::literal)
        .and_then(|v| BuiltIn::from_u32(v as u32))
    else {
        return Ok(());
    };
    // The Vulkan VUIDs of each built-in's Input storage class and type rules.
    let (name, vector3, input_vuid, type_vuid) = match b {
        BuiltIn::GlobalInvocationId => (
            "GlobalInvocationId",
            true,
            "VUID-GlobalInvocationId-GlobalInvocationId-04237",
            "VUID-GlobalInvocationId-GlobalInvocationId-04238",
        ),
        BuiltIn::LocalInvocationId => (
            "LocalInvocationId",
            true,
            "VUID-LocalInvocationId-LocalInvocationId-04282",
            "VUID-LocalInvocationId-LocalInvocationId-04283",
        ),
        BuiltIn::WorkgroupId => (
            "WorkgroupId",
            true,
            "VUID-WorkgroupId-WorkgroupId-04423",
            "VUID-WorkgroupId-WorkgroupId-04424",
        ),
        BuiltIn::NumWorkgroups => (
            "NumWorkgroups",
            true,
            "VUID-NumWorkgroups-NumWorkgroups-04297",
            "VUID-NumWorkgroups-NumWorkgroups-04298",
        ),
        BuiltIn::WorkgroupSize => (
            "WorkgroupSize",
            true,
            // 04426: "must be a specialization constant or a constant" (an Input variable
            // decorated WorkgroupSize is still accepted, as before).
            "VUID-WorkgroupSize-WorkgroupSize-04426",
            "VUID-WorkgroupSize-WorkgroupSize-04427",
        ),
        BuiltIn::LocalInvocationIndex => (
            "LocalInvocationIndex",
            false,
            "VUID-LocalInvocationIndex-LocalInvocationIndex-04285",
            "VUID-LocalInvocationIndex-LocalInvocationIndex-04286",
        ),
        BuiltIn::SubgroupSize => (
            "SubgroupSize",
            false,
            "VUID-SubgroupSize-SubgroupSize-04382",
            "VUID-SubgroupSize-SubgroupSize-04383",
        ),
        BuiltIn::SubgroupLocalInvocationId => (
            "SubgroupLocalInvocationId",
            false,
            "VUID-SubgroupLocalInvocationId-SubgroupLocalInvocationId-04380",
            "VUID-SubgroupLocalInvocationId-SubgroupLocalInvocationId-04381",
        ),
        BuiltIn::NumSubgroups => (
            "NumSubgroups",
            false,
            "VUID-NumSubgroups-NumSubgroups-04294",
            "VUID-NumSubgroups-NumSubgroups-04295",
        ),
        BuiltIn::SubgroupId => (
            "SubgroupId",
            false,
            "VUID-SubgroupId-SubgroupId-04368",
            "VUID-SubgroupId-SubgroupId-04369",
        ),
        _ => return Ok(()),
    };
    let is_int32 = |t: Id| matches!(f.int_scalar(t), Some((32, _)));
    let type_ok = |t: Id| match f.ty(t) {
        Some(Type::Vector {
            component,
            count: 3,
        }) if vector3 => is_int32(*component),
        _ => !vector3 && is_int32(t),
    };
    let expected = if vector3 {
        "a 3-component vector of 32-bit integers"
    } else {
        "a 32-bit integer scalar"
    };
    let err = |vuid| VulkanError::BuiltInType {
        builtin: name,
        expected: if vuid == input_vuid {
            "an Input variable"
        } else {
            expected
        },
        vuid,
    };
    if b == BuiltIn::WorkgroupSize && inst.op() != Some(Op::Variable) {
        // WorkgroupSize decorates a constant.
        return if inst.result_type.is_some_and(type_ok) {
            Ok(())
        } else {
            Err(err(type_vuid))
        };
    }
    match pointer_of(cx, inst) {
        Some((storage, _)) if storage != SC::Input as u32 => Err(err(input_vuid)),
        Some((_, pointee)) if !type_ok(pointee) => Err(err(type_vuid)),
        Some(_) => Ok(()),
        None if inst.op() == Some(Op::Variable) => Err(err(type_vuid)),
        None => Ok(()),
    }
}
