//! Grammar-driven capability, extension and version checks for every instruction and every enum
//! operand (SPIR-V 2.16 "Validation Rules", 3.31 "Capability"; SPIRV-Tools
//! `validate_instruction.cpp`), and the Vulkan capability allow-lists (`validate_capability.cpp`).
//!
//! A capability counts as declared when an `OpCapability` names it or one that implicitly declares
//! it (the grammar's `capabilities` list on each Capability enumerant, closed transitively in
//! [`crate::facts::implied_closure`]).

use super::{Ctx, Sink};
use crate::vuid::Vuid;
use spirv::{Capability as C, Op};
use tangle_spirv::grammar::{self, Category, OperandKind, Version};
use tangle_spirv::{Instruction, Operand};

/// A capability, extension or version rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapabilityError {
    /// 2.16.1: "... any instruction or operand that requires a capability must have it declared".
    #[error("opcode {op} requires one of these capabilities: {caps}")]
    OpcodeNeedsCapability { op: String, caps: String },
    /// The same for an enumerant operand.
    #[error("operand {operand} of {op} ({name}) requires one of these capabilities: {caps}")]
    OperandNeedsCapability {
        op: String,
        operand: usize,
        name: String,
        caps: String,
    },
    /// An enumerant that came from an extension needs the extension, unless the module's SPIR-V
    /// version has it in core.
    #[error("operand {operand} of {op}: {name}({value}) requires one of these extensions: {exts}")]
    OperandNeedsExtension {
        op: String,
        operand: usize,
        name: String,
        value: u32,
        exts: String,
    },
    /// An enumerant added to core SPIR-V after the module's version.
    #[error("operand {operand} of {op}: {name} requires SPIR-V version {version} or later")]
    OperandNeedsVersion {
        op: String,
        operand: usize,
        name: String,
        version: Version,
    },
    /// An instruction that exists only through an extension.
    #[error("{op} requires one of these extensions: {exts}")]
    OpcodeNeedsExtension { op: String, exts: String },
    /// An instruction added to core SPIR-V after the module's version.
    #[error("{op} requires SPIR-V version {version} or later")]
    OpcodeNeedsVersion { op: String, version: Version },
    /// Vulkan's "SPIR-V Environment" appendix lists the capabilities each version allows.
    #[error(
        "capability {cap} is not allowed by Vulkan {api} (and no declared extension enables it)"
    )]
    NotAllowedByVulkan { cap: String, api: Version },
}

impl CapabilityError {
    /// No capability rule has a VUID of its own.
    pub fn vuid(&self) -> Option<Vuid> {
        None
    }
}

/// Runs the per-instruction grammar checks and the Vulkan allow-list.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let version = Version {
        major: cx.module.header.version.0,
        minor: cx.module.header.version.1,
    };
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        sink.check(index, opcode(cx, inst, version));
        sink.check(index, operands(cx, inst, version));
        if inst.op() == Some(Op::Capability) {
            sink.check(index, vulkan_allowed(cx, inst));
        }
    }
}

fn names(caps: &[u32]) -> String {
    caps.iter()
        .map(|c| grammar::capability_name(*c))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The instruction's own capability, extension and version requirements (SPIRV-Tools
/// `CapabilityCheck` then `VersionCheck`).
fn opcode(cx: &Ctx, inst: &Instruction, version: Version) -> Result<(), CapabilityError> {
    let Some(desc) = inst.desc() else {
        return Ok(());
    };
    if !desc.capabilities.is_empty() {
        if desc
            .capabilities
            .iter()
            .any(|c| cx.facts.capabilities.contains(c))
        {
            // Once the capability is there its own extension check does the gating.
            return Ok(());
        }
        return Err(CapabilityError::OpcodeNeedsCapability {
            op: op_name(inst),
            caps: names(desc.capabilities),
        });
    }
    let core = desc.version.is_some_and(|v| v <= version);
    if core {
        return Ok(());
    }
    if desc.extensions.is_empty() {
        return match desc.version {
            Some(v) => Err(CapabilityError::OpcodeNeedsVersion {
                op: op_name(inst),
                version: v,
            }),
            None => Ok(()),
        };
    }
    if desc.extensions.iter().any(|e| cx.facts.has_extension(e)) {
        Ok(())
    } else {
        Err(CapabilityError::OpcodeNeedsExtension {
            op: op_name(inst),
            exts: desc.extensions.join(" "),
        })
    }
}

/// The opcode's name without `Op`, as SPIRV-Tools prints it.
fn op_name(inst: &Instruction) -> String {
    let name = inst.name();
    name.strip_prefix("Op").map(str::to_string).unwrap_or(name)
}

/// Every enumerant operand's capability, extension and version requirements.
fn operands(cx: &Ctx, inst: &Instruction, version: Version) -> Result<(), CapabilityError> {
    // Operand numbers count the result type and id, 1-based, as SPIRV-Tools prints them.
    let first = 1 + usize::from(inst.result_type.is_some()) + usize::from(inst.result_id.is_some());
    for (position, operand) in inst.operands.iter().enumerate() {
        let Operand::Enum(kind, value) = operand else {
            continue;
        };
        let n = first + position;
        match kind.desc().category {
            Category::BitEnum => {
                for bit in (0..32).map(|b| 1u32 << b).filter(|b| value & b != 0) {
                    enumerant(cx, inst, *kind, bit, n, version)?;
                }
            }
            _ => enumerant(cx, inst, *kind, *value, n, version)?,
        }
    }
    Ok(())
}

fn enumerant(
    cx: &Ctx,
    inst: &Instruction,
    kind: OperandKind,
    value: u32,
    n: usize,
    version: Version,
) -> Result<(), CapabilityError> {
    let Some(e) = kind.enumerant(value) else {
        return Ok(());
    };
    // The capabilities listed on a Capability enumerant are the ones it implies, not requirements;
    // a BuiltIn decoration that merely names PointSize/ClipDistance/CullDistance needs nothing.
    let exempt = kind == OperandKind::Capability
        || (kind == OperandKind::BuiltIn && matches!(value, 1 | 3 | 4));
    if !exempt
        && !e.capabilities.is_empty()
        && !e
            .capabilities
            .iter()
            .any(|c| cx.facts.capabilities.contains(c))
    {
        return Err(CapabilityError::OperandNeedsCapability {
            op: op_name(inst),
            operand: n,
            name: e.name.to_string(),
            caps: names(e.capabilities),
        });
    }
    if e.version.is_some_and(|v| v <= version) {
        return Ok(());
    }
    if e.extensions.is_empty() {
        return match e.version {
            Some(v) => Err(CapabilityError::OperandNeedsVersion {
                op: op_name(inst),
                operand: n,
                name: e.name.to_string(),
                version: v,
            }),
            None => Ok(()),
        };
    }
    if e.extensions.iter().any(|x| cx.facts.has_extension(x)) {
        return Ok(());
    }
    Err(CapabilityError::OperandNeedsExtension {
        op: op_name(inst),
        operand: n,
        name: e.name.to_string(),
        value,
        exts: e.extensions.join(" "),
    })
}

/// Vulkan: a declared capability must be guaranteed or optional in the environment's Vulkan
/// version, or enabled by a declared extension.
fn vulkan_allowed(cx: &Ctx, inst: &Instruction) -> Result<(), CapabilityError> {
    let tangle_spirv::TargetEnv::Vulkan { api, .. } = cx.env else {
        return Ok(());
    };
    let Some(cap) = inst.literal_operand(0).map(|v| v as u32) else {
        return Ok(());
    };
    if allowed_by_vulkan(cap, api.minor) {
        return Ok(());
    }
    let by_extension = OperandKind::Capability
        .enumerant(cap)
        .is_some_and(|e| e.extensions.iter().any(|x| cx.facts.has_extension(x)));
    if by_extension {
        return Ok(());
    }
    Err(CapabilityError::NotAllowedByVulkan {
        cap: grammar::capability_name(cap).to_string(),
        api,
    })
}

/// Capabilities each Vulkan 1.x guarantees or lets devices support, cumulative (the Vulkan
/// spec's "SPIR-V Environment" appendix, as SPIRV-Tools encodes it in `validate_capability.cpp`).
fn allowed_by_vulkan(cap: u32, minor: u8) -> bool {
    const V1_0: &[C] = &[
        C::Matrix,
        C::Shader,
        C::InputAttachment,
        C::Sampled1D,
        C::Image1D,
        C::SampledBuffer,
        C::ImageBuffer,
        C::ImageQuery,
        C::DerivativeControl,
        C::Geometry,
        C::Tessellation,
        C::Float64,
        C::Int64,
        C::Int64Atomics,
        C::Int16,
        C::TessellationPointSize,
        C::GeometryPointSize,
        C::ImageGatherExtended,
        C::StorageImageMultisample,
        C::UniformBufferArrayDynamicIndexing,
        C::SampledImageArrayDynamicIndexing,
        C::StorageBufferArrayDynamicIndexing,
        C::StorageImageArrayDynamicIndexing,
        C::ClipDistance,
        C::CullDistance,
        C::ImageCubeArray,
        C::SampleRateShading,
        C::SparseResidency,
        C::MinLod,
        C::SampledCubeArray,
        C::ImageMSArray,
        C::StorageImageExtendedFormats,
        C::InterpolationFunction,
        C::StorageImageReadWithoutFormat,
        C::StorageImageWriteWithoutFormat,
        C::MultiViewport,
        C::TransformFeedback,
        C::GeometryStreams,
        C::Float16,
        C::Int8,
    ];
    const V1_1: &[C] = &[
        C::DeviceGroup,
        C::MultiView,
        C::GroupNonUniform,
        C::StorageBuffer16BitAccess,
        C::UniformAndStorageBuffer16BitAccess,
        C::StoragePushConstant16,
        C::StorageInputOutput16,
        C::DrawParameters,
        C::VariablePointersStorageBuffer,
        C::VariablePointers,
        C::GroupNonUniformVote,
        C::GroupNonUniformArithmetic,
        C::GroupNonUniformBallot,
        C::GroupNonUniformShuffle,
        C::GroupNonUniformShuffleRelative,
        C::GroupNonUniformClustered,
        C::GroupNonUniformQuad,
    ];
    const V1_2: &[C] = &[
        C::ShaderNonUniform,
        C::DenormPreserve,
        C::DenormFlushToZero,
        C::SignedZeroInfNanPreserve,
        C::RoundingModeRTE,
        C::RoundingModeRTZ,
        C::VulkanMemoryModel,
        C::VulkanMemoryModelDeviceScope,
        C::StorageBuffer8BitAccess,
        C::UniformAndStorageBuffer8BitAccess,
        C::StoragePushConstant8,
        C::ShaderViewportIndex,
        C::ShaderLayer,
        C::PhysicalStorageBufferAddresses,
        C::RuntimeDescriptorArray,
        C::UniformTexelBufferArrayDynamicIndexing,
        C::StorageTexelBufferArrayDynamicIndexing,
        C::UniformBufferArrayNonUniformIndexing,
        C::SampledImageArrayNonUniformIndexing,
        C::StorageBufferArrayNonUniformIndexing,
        C::StorageImageArrayNonUniformIndexing,
        C::InputAttachmentArrayNonUniformIndexing,
        C::UniformTexelBufferArrayNonUniformIndexing,
        C::StorageTexelBufferArrayNonUniformIndexing,
        C::InputAttachmentArrayDynamicIndexing,
    ];
    const V1_3: &[C] = &[
        C::DotProduct,
        C::DotProductInputAll,
        C::DotProductInput4x8Bit,
        C::DotProductInput4x8BitPacked,
        C::DemoteToHelperInvocation,
    ];
    const V1_4: &[C] = &[
        C::GroupNonUniformRotateKHR,
        C::ExpectAssumeKHR,
        C::FloatControls2,
    ];
    let lists: [&[C]; 5] = [V1_0, V1_1, V1_2, V1_3, V1_4];
    lists
        .iter()
        .take(usize::from(minor) + 1)
        .any(|list| list.iter().any(|c| *c as u32 == cap))
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{compute, module};
    use tangle_spirv::TargetEnv;

    #[test]
    fn instruction_newer_than_the_module_version() {
        // OpCopyLogical is SPIR-V 1.4; the assembler refuses it for 1.3, so lower the header.
        let decls = "%v2 = OpTypeVector %u32 2\n%c = OpConstantComposite %v2 %u32_1 %u32_1";
        let mut m = module(&compute("", decls, "%x = OpCopyLogical %v2 %c"), "spv1.4");
        m.header.version = (1, 3);
        let env = TargetEnv::parse("spv1.3").expect("env");
        let diags =
            crate::validate(&m, env, &crate::ValidateOptions::default()).expect_err("invalid");
        let rules: Vec<String> = diags.iter().map(|d| d.error.rule()).collect();
        assert_eq!(rules, ["Capability::OpcodeNeedsVersion"]);
    }

    #[test]
    fn vulkan_lists_are_cumulative() {
        use spirv::Capability as C;
        assert!(super::allowed_by_vulkan(C::Shader as u32, 0));
        assert!(!super::allowed_by_vulkan(C::GroupNonUniform as u32, 0));
        assert!(super::allowed_by_vulkan(C::GroupNonUniform as u32, 3));
        assert!(!super::allowed_by_vulkan(C::DotProduct as u32, 2));
        assert!(super::allowed_by_vulkan(C::DotProduct as u32, 4));
        assert!(!super::allowed_by_vulkan(C::Kernel as u32, 4));
    }
}
