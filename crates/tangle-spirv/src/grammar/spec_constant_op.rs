//! The opcodes `OpSpecConstantOp` may wrap, and the capability each one needs.
//!
//! The JSON grammar does not list them, so this is the one list the assembler, the binary reader,
//! the validator and the executor share.
//!
//! # Spec
//! SPIR-V, `OpSpecConstantOp`: "Opcode is an unsigned 32-bit integer. It must equal one of the
//! following opcodes." Then: "If the Shader capability was declared, the following opcodes can be
//! used: …", "If the Kernel capability was declared, the following opcodes can be used: …".
//! SPIRV-Tools 2025.5 reads the same list (its binary parser and assembler refuse any other
//! opcode: "Invalid OpSpecConstantOp opcode: N") plus `CooperativeMatrixLengthNV`/`KHR`.

use spirv::Op;

/// Which capability a spec-constant opcode needs (SPIRV-Tools' `ValidateSpecConstantOp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecConstantOpNeeds {
    /// In both the Shader and the Kernel list.
    Either,
    /// Only in the Shader list (`OpQuantizeToF16`).
    Shader,
    /// Only in the Kernel list.
    Kernel,
    /// `OpUConvert`: in the Shader list from SPIR-V 1.4 on, in the Kernel list always.
    KernelBefore1_4,
}

/// The opcodes `OpSpecConstantOp` accepts, with what each needs.
const OPS: &[(Op, SpecConstantOpNeeds)] = {
    use SpecConstantOpNeeds::{Either as E, Kernel as K, KernelBefore1_4, Shader as S};
    &[
        (Op::SConvert, E),
        (Op::FConvert, E),
        (Op::ConvertFToS, K),
        (Op::ConvertSToF, K),
        (Op::ConvertFToU, K),
        (Op::ConvertUToF, K),
        (Op::UConvert, KernelBefore1_4),
        (Op::ConvertPtrToU, K),
        (Op::ConvertUToPtr, K),
        (Op::GenericCastToPtr, K),
        (Op::PtrCastToGeneric, K),
        (Op::Bitcast, K),
        (Op::QuantizeToF16, S),
        (Op::SNegate, E),
        (Op::Not, E),
        (Op::IAdd, E),
        (Op::ISub, E),
        (Op::IMul, E),
        (Op::UDiv, E),
        (Op::SDiv, E),
        (Op::UMod, E),
        (Op::SRem, E),
        (Op::SMod, E),
        (Op::ShiftRightLogical, E),
        (Op::ShiftRightArithmetic, E),
        (Op::ShiftLeftLogical, E),
        (Op::BitwiseOr, E),
        (Op::BitwiseAnd, E),
        (Op::BitwiseXor, E),
        (Op::FNegate, K),
        (Op::FAdd, K),
        (Op::FSub, K),
        (Op::FMul, K),
        (Op::FDiv, K),
        (Op::FRem, K),
        (Op::FMod, K),
        (Op::VectorShuffle, E),
        (Op::CompositeExtract, E),
        (Op::CompositeInsert, E),
        (Op::LogicalOr, E),
        (Op::LogicalAnd, E),
        (Op::LogicalNot, E),
        (Op::LogicalEqual, E),
        (Op::LogicalNotEqual, E),
        (Op::Select, E),
        (Op::IEqual, E),
        (Op::INotEqual, E),
        (Op::ULessThan, E),
        (Op::SLessThan, E),
        (Op::UGreaterThan, E),
        (Op::SGreaterThan, E),
        (Op::ULessThanEqual, E),
        (Op::SLessThanEqual, E),
        (Op::UGreaterThanEqual, E),
        (Op::SGreaterThanEqual, E),
        (Op::AccessChain, K),
        (Op::InBoundsAccessChain, K),
        (Op::PtrAccessChain, K),
        (Op::InBoundsPtrAccessChain, K),
        (Op::CooperativeMatrixLengthNV, E),
        (Op::CooperativeMatrixLengthKHR, E),
    ]
};

/// What `opcode` needs inside `OpSpecConstantOp`, or `None` when `OpSpecConstantOp` may not wrap it.
pub fn spec_constant_op(opcode: u32) -> Option<SpecConstantOpNeeds> {
    OPS.iter()
        .find(|(op, _)| *op as u32 == opcode)
        .map(|(_, needs)| *needs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_holds_each_opcode_once_and_every_one_is_in_the_grammar() {
        for (i, (op, _)) in OPS.iter().enumerate() {
            assert!(super::super::instruction(*op as u16).is_some(), "{op:?}");
            assert!(OPS[..i].iter().all(|(o, _)| o != op), "{op:?} twice");
        }
        assert_eq!(OPS.len(), 61);
    }

    #[test]
    fn opcodes_outside_the_list_are_refused() {
        assert_eq!(spec_constant_op(0), None, "OpNop");
        assert_eq!(spec_constant_op(Op::Load as u32), None);
        assert_eq!(spec_constant_op(Op::SpecConstantOp as u32), None);
        assert_eq!(spec_constant_op(Op::IAdd as u32 | 0x1_0000), None);
        assert_eq!(
            spec_constant_op(Op::IAdd as u32),
            Some(SpecConstantOpNeeds::Either)
        );
        assert_eq!(
            spec_constant_op(Op::FAdd as u32),
            Some(SpecConstantOpNeeds::Kernel)
        );
    }
}
