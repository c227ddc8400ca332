//! Type and constant well-formedness (SPIR-V 2.16.1 "Universal Validation Rules", 3.x
//! "Type-Declaration Instructions" and "Constant-Creation Instructions"; SPIRV-Tools
//! `validate_type.cpp`, `validate_constants.cpp`): scalar widths and the capabilities they need,
//! vector sizes, array lengths, and constants whose value fits their type.

use super::Ctx;
use crate::facts::Type;
use spirv::{Capability as C, Op};
use tangle_spirv::{Id, Instruction, Operand};

/// A type or constant rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TypeError {
    /// OpTypeInt Width: 8, 16, 32 or 64 (each but 32 behind a capability).
    #[error(
        "integer width {width} is not supported here (needs 32, or 8/16/64 with their capability)"
    )]
    IntWidth { width: u32 },
    /// OpTypeFloat Width: 16, 32 or 64 (each but 32 behind a capability; 8 only with an encoding).
    #[error(
        "float width {width} is not supported here (needs 32, or 16/64 with their capability)"
    )]
    FloatWidth { width: u32 },
    /// OpTypeVector: "Component Type must be a scalar type"; "Component Count must be at least 2".
    #[error("vector components must be numeric or boolean scalars")]
    VectorComponent,
    /// Component Count 2, 3 or 4 (8 and 16 with Vector16).
    #[error("vector component count {count} is not 2, 3 or 4 (8 or 16 with Vector16)")]
    VectorCount { count: u32 },
    /// OpTypeMatrix: columns are float vectors, 2 to 4 of them.
    #[error("matrix columns must be 2 to 4 float vectors")]
    MatrixColumns,
    /// OpTypeArray: "Length must be an OpConstant ... of scalar integer type", at least 1.
    #[error("array Length must be a constant integer scalar of at least 1")]
    ArrayLength,
    /// Element, member, pointee and parameter operands must be types.
    #[error("operand %{id} must be a type")]
    NotAType { id: Id },
    /// Elements of arrays cannot be void.
    #[error("an array, vector or struct cannot hold void")]
    VoidElement,
    /// OpConstant: "Result Type must be a scalar integer type or floating-point type."
    #[error("{op} Result Type must be a {expected}")]
    ConstantType { op: String, expected: &'static str },
    /// Composite constants: one constituent per member, each of the member's type.
    #[error("{op} constituents do not match the Result Type's members")]
    ConstituentsMismatch { op: String },
    /// OpTypeInt: "Signedness ... 0 indicates unsigned, or no signedness semantics"; with the
    /// Kernel capability (declared or implied, e.g. by Vector16) integer types carry no
    /// signedness (SPIRV-Tools `ValidateTypeInt`).
    #[error("with the Kernel capability, OpTypeInt Signedness must be 0")]
    SignedIntWithKernel,
    /// With the Shader capability, constants cannot have (or contain) an 8- or 16-bit type that
    /// only a storage capability declares (an 8-bit integer without Int8, a 16-bit integer
    /// without Int16, a 16-bit float without Float16; SPIRV-Tools `ValidateConstant`).
    #[error("{op}: constants of 8- or 16-bit types need the Int8, Int16 or Float16 capability")]
    SmallTypeConstant { op: String },
    /// With the Shader capability, OpUndef cannot have (or contain) such a type either
    /// (SPIRV-Tools `ValidateUndef`).
    #[error("OpUndef of 8- or 16-bit types needs the Int8, Int16 or Float16 capability")]
    SmallTypeUndef,
    /// With the Shader capability, a value of (or containing) an 8- or 16-bit type that only a
    /// storage capability declares can only be stored, copied (OpCopyObject), decorated or
    /// converted to another width (OpUConvert, OpSConvert, OpFConvert) (SPIRV-Tools
    /// `ValidateSmallTypeUses`).
    #[error("{op} cannot use the 8- or 16-bit value %{value} (it can only be stored, copied, decorated or converted to another width)")]
    SmallTypeUse { op: String, value: Id },
    /// 2.8 "Types": non-aggregate types (all but structs, arrays and pointers) are declared once
    /// for each distinct set of operands (SPIRV-Tools `ValidateUniqueness`).
    #[error("%{id} declares the same non-aggregate type as %{first}; declare each once")]
    DuplicateType { id: Id, first: Id },
    /// OpSpecConstantOp: "Opcode ... must equal one of the following opcodes" (the reader
    /// refuses the others, so only a module built in code reaches this).
    #[error("OpSpecConstantOp cannot wrap opcode {opcode}")]
    SpecConstantOpOpcode { opcode: u64 },
    /// OpSpecConstantOp: "If the Shader capability was declared, the following opcodes can be
    /// used: …" / "If the Kernel capability was declared, …" (SPIRV-Tools `ValidateSpecConstantOp`).
    #[error("OpSpecConstantOp {op} needs the {capability} capability")]
    SpecConstantOpCapability {
        op: &'static str,
        capability: &'static str,
    },
    /// OpUConvert joined the Shader list in SPIR-V 1.4 (SPIRV-Tools also takes
    /// SPV_AMD_gpu_shader_int16 for it).
    #[error("before SPIR-V 1.4, OpSpecConstantOp UConvert needs the Kernel capability")]
    SpecConstantOpUConvertBefore1_4,
}

/// Capabilities that allow 16-bit types in storage (and so declare the types).
const SIXTEEN_BIT_STORAGE: [C; 4] = [
    C::StorageBuffer16BitAccess,
    C::UniformAndStorageBuffer16BitAccess,
    C::StoragePushConstant16,
    C::StorageInputOutput16,
];

/// Reports every non-aggregate type declared twice with the same operands. Structs, arrays and
/// pointers may repeat (their decorations or storage tell them apart).
pub fn unique(cx: &Ctx, sink: &mut super::Sink) {
    let mut first: std::collections::HashMap<(u16, &[Operand]), Id> = Default::default();
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        let Some(op) = inst.op() else { continue };
        let declares_type = tangle_spirv::grammar::instruction(inst.opcode)
            .is_some_and(|d| d.class == "Type-Declaration");
        let repeatable = matches!(
            op,
            Op::TypeArray
                | Op::TypeRuntimeArray
                | Op::TypeStruct
                | Op::TypePointer
                | Op::TypeUntypedPointerKHR
                | Op::TypeForwardPointer
                | Op::TypeNodePayloadArrayAMDX
        );
        if repeatable || !declares_type {
            continue;
        }
        let Some(id) = inst.result_id else { continue };
        match first.entry((inst.opcode, inst.operands.as_slice())) {
            std::collections::hash_map::Entry::Occupied(e) => sink.error(
                Some(index),
                TypeError::DuplicateType {
                    id,
                    first: *e.get(),
                },
            ),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(id);
            }
        }
    }
}

/// Checks type declarations and constants, and the uses of 8- and 16-bit values.
pub fn check(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    declaration(cx, inst)?;
    small_type_constant(cx, inst)?;
    small_type_use(cx, inst)
}

/// Whether the module restricts 8- and 16-bit values ([`crate::facts::Facts::contains_limited_use`]
/// of a non-pointer type, under the Shader capability).
fn limited_value_type(cx: &Ctx, ty: Id) -> bool {
    let f = cx.facts;
    f.has_capability(C::Shader)
        && !matches!(
            f.ty(ty),
            Some(Type::Pointer { .. } | Type::UntypedPointer { .. })
        )
        && f.contains_limited_use(ty)
}

/// SPIRV-Tools `ValidateConstant`'s last rule and `ValidateUndef`: no constants or undefined
/// values of restricted 8- or 16-bit types.
fn small_type_constant(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    let (Some(result), Some(ty)) = (inst.result_id, inst.result_type) else {
        return Ok(());
    };
    if !limited_value_type(cx, ty) {
        return Ok(());
    }
    if cx.facts.is_constant_instruction(result) {
        return Err(TypeError::SmallTypeConstant { op: inst.name() });
    }
    if inst.op() == Some(Op::Undef) {
        return Err(TypeError::SmallTypeUndef);
    }
    Ok(())
}

/// SPIRV-Tools `ValidateSmallTypeUses`, seen from the user: an instruction other than
/// OpDecorate, OpDecorateId, OpCopyObject, OpStore, OpFConvert, OpUConvert and OpSConvert that
/// takes a value of a restricted 8- or 16-bit type (debug instructions such as OpName count).
fn small_type_use(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    let allowed = matches!(
        inst.op(),
        Some(
            Op::Decorate
                | Op::DecorateId
                | Op::CopyObject
                | Op::Store
                | Op::FConvert
                | Op::UConvert
                | Op::SConvert
        )
    );
    if allowed || !cx.facts.has_capability(C::Shader) {
        return Ok(());
    }
    for value in inst.operands.iter().filter_map(Operand::id) {
        if cx
            .facts
            .type_of(value)
            .is_some_and(|t| limited_value_type(cx, t))
        {
            return Err(TypeError::SmallTypeUse {
                op: inst.name(),
                value,
            });
        }
    }
    Ok(())
}

/// Checks type declarations and constants.
fn declaration(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    let f = cx.facts;
    let Some(op) = inst.op() else { return Ok(()) };
    let lit = |i: usize| inst.literal_operand(i).map(|v| v as u32);
    let is_type = |id: Id| f.ty(id).is_some();
    match op {
        Op::TypeInt => {
            let width = lit(0).unwrap_or(0);
            let ok = match width {
                32 => true,
                // 8- and 16-bit storage capabilities declare the types too (SPIRV-Tools
                // `declare_int8_type`/`declare_int16_type`), as do the AMD extensions.
                8 => [
                    C::Int8,
                    C::StorageBuffer8BitAccess,
                    C::UniformAndStorageBuffer8BitAccess,
                    C::StoragePushConstant8,
                ]
                .into_iter()
                .any(|c| f.has_capability(c)),
                16 => {
                    f.has_extension("SPV_AMD_gpu_shader_int16")
                        || SIXTEEN_BIT_STORAGE
                            .iter()
                            .chain([&C::Int16])
                            .any(|c| f.has_capability(*c))
                }
                64 => f.has_capability(C::Int64),
                _ => false,
            };
            if !ok {
                return Err(TypeError::IntWidth { width });
            }
            if lit(1).unwrap_or(0) != 0 && f.has_capability(C::Kernel) {
                return Err(TypeError::SignedIntWithKernel);
            }
        }
        Op::TypeFloat => {
            let width = lit(0).unwrap_or(0);
            let encoded = lit(1).is_some();
            let ok = match width {
                32 => true,
                16 => {
                    encoded
                        || f.has_extension("SPV_AMD_gpu_shader_half_float")
                        || SIXTEEN_BIT_STORAGE
                            .iter()
                            .chain([&C::Float16, &C::Float16Buffer])
                            .any(|c| f.has_capability(*c))
                }
                64 => f.has_capability(C::Float64),
                8 => encoded,
                _ => false,
            };
            if !ok {
                return Err(TypeError::FloatWidth { width });
            }
        }
        Op::TypeVector => {
            let component = inst.id_operand(0).unwrap_or(0);
            if !matches!(
                f.ty(component),
                Some(Type::Int { .. } | Type::Float { .. } | Type::Bool)
            ) {
                return Err(TypeError::VectorComponent);
            }
            let count = lit(1).unwrap_or(0);
            let long = matches!(count, 8 | 16) && f.has_capability(C::Vector16);
            if !(matches!(count, 2..=4) || long) {
                return Err(TypeError::VectorCount { count });
            }
        }
        Op::TypeMatrix => {
            let column = inst.id_operand(0).unwrap_or(0);
            let float_vector = matches!(f.ty(column), Some(Type::Vector { component, .. }) if f.is_float_scalar(*component));
            if !float_vector || !matches!(lit(1), Some(2..=4)) {
                return Err(TypeError::MatrixColumns);
            }
        }
        Op::TypeArray | Op::TypeRuntimeArray => {
            let element = inst.id_operand(0).unwrap_or(0);
            if !is_type(element) {
                return Err(TypeError::NotAType { id: element });
            }
            if f.ty(element) == Some(&Type::Void) {
                return Err(TypeError::VoidElement);
            }
            if op == Op::TypeArray {
                let length = inst.id_operand(1).unwrap_or(0);
                let int_constant = f.is_constant_instruction(length)
                    && f.type_of(length).is_some_and(|t| f.is_int_scalar(t));
                if !int_constant || f.eval_int(length) == Some(0) {
                    return Err(TypeError::ArrayLength);
                }
            }
        }
        Op::TypeStruct => {
            for member in inst.operands.iter().filter_map(Operand::id) {
                if !is_type(member) && !f.forward_pointers.contains(&member) {
                    return Err(TypeError::NotAType { id: member });
                }
                if f.ty(member) == Some(&Type::Void) {
                    return Err(TypeError::VoidElement);
                }
            }
        }
        Op::TypePointer => {
            let pointee = inst.id_operand(1).unwrap_or(0);
            if !is_type(pointee) && !f.forward_pointers.contains(&pointee) {
                return Err(TypeError::NotAType { id: pointee });
            }
        }
        Op::TypeFunction => {
            for id in inst.operands.iter().filter_map(Operand::id) {
                if !is_type(id) {
                    return Err(TypeError::NotAType { id });
                }
            }
        }
        Op::Constant | Op::SpecConstant => {
            let ty = inst.result_type.unwrap_or(0);
            if !matches!(f.ty(ty), Some(Type::Int { .. } | Type::Float { .. })) {
                return Err(TypeError::ConstantType {
                    op: inst.name(),
                    expected: "numeric scalar",
                });
            }
        }
        Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse
            if !inst.result_type.is_some_and(|t| f.is_bool_scalar(t)) =>
        {
            return Err(TypeError::ConstantType {
                op: inst.name(),
                expected: "boolean",
            });
        }
        Op::ConstantComposite | Op::SpecConstantComposite => composite_constant(cx, inst)?,
        Op::SpecConstantOp => spec_constant_op(cx, inst)?,
        _ => {}
    }
    Ok(())
}

/// The opcode an OpSpecConstantOp wraps is on the spec's list, under the capability it needs.
fn spec_constant_op(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    use tangle_spirv::grammar::{self, SpecConstantOpNeeds as Needs};
    let Some(opcode) = inst.literal_operand(0) else {
        return Ok(());
    };
    let needs = u32::try_from(opcode)
        .ok()
        .and_then(grammar::spec_constant_op)
        .ok_or(TypeError::SpecConstantOpOpcode { opcode })?;
    let name = u16::try_from(opcode)
        .ok()
        .and_then(grammar::instruction)
        .map_or("", |d| d.name.strip_prefix("Op").unwrap_or(d.name));
    let f = cx.facts;
    let missing = |capability: &'static str| TypeError::SpecConstantOpCapability {
        op: name,
        capability,
    };
    match needs {
        Needs::Either => Ok(()),
        Needs::Shader if !f.has_capability(C::Shader) => Err(missing("Shader")),
        Needs::Kernel if !f.has_capability(C::Kernel) => Err(missing("Kernel")),
        Needs::KernelBefore1_4
            if cx.module.header.version < (1, 4)
                && !f.has_capability(C::Kernel)
                && !f.has_extension("SPV_AMD_gpu_shader_int16") =>
        {
            Err(TypeError::SpecConstantOpUConvertBefore1_4)
        }
        Needs::Shader | Needs::Kernel | Needs::KernelBefore1_4 => Ok(()),
    }
}

/// A composite constant has one constituent of the right type per member (cooperative matrices
/// are `rules::coopmat`'s).
fn composite_constant(cx: &Ctx, inst: &Instruction) -> Result<(), TypeError> {
    let f = cx.facts;
    let Some(ty) = inst.result_type else {
        return Ok(());
    };
    let parts: Vec<Option<Id>> = inst
        .operands
        .iter()
        .filter_map(Operand::id)
        .map(|c| f.type_of(c))
        .collect();
    // Never allocate by a count read from the input: compare the count, then each part.
    let uniform = |element: Id, count: u64| {
        parts.len() as u64 == count && parts.iter().all(|p| *p == Some(element))
    };
    let matches = match f.ty(ty) {
        Some(Type::Vector { component, count }) => uniform(*component, u64::from(*count)),
        Some(Type::Matrix { column, count }) => uniform(*column, u64::from(*count)),
        Some(Type::Array { element, length }) => match f.eval_int(*length) {
            Some(n) => uniform(*element, n),
            None => return Ok(()),
        },
        Some(Type::Struct { members }) => {
            members.len() == parts.len() && members.iter().zip(&parts).all(|(m, p)| Some(*m) == *p)
        }
        Some(Type::CoopMat { .. }) => return Ok(()),
        _ => {
            return Err(TypeError::ConstantType {
                op: inst.name(),
                expected: "composite type",
            })
        }
    };
    if !matches {
        return Err(TypeError::ConstituentsMismatch { op: inst.name() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{compute, module};
    use tangle_spirv::{Operand, TargetEnv};

    /// The reader refuses an OpSpecConstantOp opcode outside the spec's list, so only a module
    /// built in code can hold one; the validator refuses it too, so the executor never sees it.
    #[test]
    fn spec_constant_op_opcode_outside_the_list() {
        let decls = "%s = OpSpecConstant %u32 1\n%x = OpSpecConstantOp %u32 IAdd %s %s";
        let mut m = module(&compute("", decls, ""), "vulkan1.3");
        let env = TargetEnv::parse("vulkan1.3").expect("env");
        let rules = |m: &tangle_spirv::Module| match crate::validate(m, env, &Default::default()) {
            Ok(_) => Vec::new(),
            Err(found) => found.iter().map(|d| d.error.rule()).collect(),
        };
        assert_eq!(rules(&m), Vec::<String>::new());
        let at = m
            .instructions
            .iter()
            .position(|i| i.op() == Some(spirv::Op::SpecConstantOp))
            .expect("the OpSpecConstantOp");
        for opcode in [0, spirv::Op::Load as u32, spirv::Op::IAdd as u32 | 0x1_0000] {
            m.instructions[at].operands = vec![Operand::Int(opcode)];
            assert_eq!(rules(&m), ["Types::SpecConstantOpOpcode"], "{opcode}");
        }
    }
}
