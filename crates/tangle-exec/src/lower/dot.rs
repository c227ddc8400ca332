//! Lowering of SPV_KHR_integer_dot_product (`OpSDot`, `OpUDot`, `OpSUDot` and their AccSat
//! forms) to one [`Op::Dot`] each; [`crate::run::dot`] executes them.

use super::{Lowerer, Out};
use crate::error::ExecError;
use crate::program::Op;
use crate::run::dot::DotInst;
use crate::semantics::dot::DotKind;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// The kind of a dot product opcode and whether it accumulates.
pub fn dot_kind(op: SpvOp) -> Option<(DotKind, bool)> {
    use SpvOp as S;
    Some(match op {
        S::SDot => (DotKind::Signed, false),
        S::UDot => (DotKind::Unsigned, false),
        S::SUDot => (DotKind::Mixed, false),
        S::SDotAccSat => (DotKind::Signed, true),
        S::UDotAccSat => (DotKind::Unsigned, true),
        S::SUDotAccSat => (DotKind::Mixed, true),
        _ => return None,
    })
}

/// The most components a vector operand may have.
const MAX_COMPONENTS: u32 = 16;

impl<'m> Lowerer<'m> {
    /// Lowers one dot product instruction.
    pub fn lower_dot(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        let (kind, accumulates) = dot_kind(op).ok_or_else(|| self.unsupported(inst.name()))?;
        let (a, b) = (self.operand(inst, 0)?, self.operand(inst, 1)?);
        let acc = if accumulates {
            Some(self.operand(inst, 2)?.slot)
        } else {
            None
        };
        let d = self.value(inst.result_id)?;
        let result_bits = self
            .scalar(d.ty)
            .ok_or_else(|| self.malformed("the result must be an integer"))?
            .bits;
        let comp = self
            .scalar(a.ty)
            .ok_or_else(|| self.malformed("Vector 1 must be an integer vector"))?;
        let count = self.program.ty(a.ty).slots;
        // "PackedVectorFormat4x8Bit: Interpret 32-bit scalar integer operands as vectors of four
        // 8-bit components."
        let format = inst.literal_operand(if accumulates { 3 } else { 2 });
        let packed = count == 1;
        if packed && (format != Some(0) || comp.bits != 32) {
            return Err(self.malformed(
                "a scalar dot product operand needs PackedVectorFormat4x8Bit and 32 bits",
            ));
        }
        if !packed && !(2..=MAX_COMPONENTS).contains(&count) {
            return Err(self.unsupported(format!("dot product of {count}-component vectors")));
        }
        let (comp_bits, count) = if packed { (8, 4) } else { (comp.bits, count) };
        let g = DotInst {
            kind,
            comp_bits,
            result_bits,
            count,
            packed,
            dst: d.slot,
            a: a.slot,
            b: b.slot,
            acc,
        };
        self.emit(out, Op::Dot(Box::new(g)));
        Ok(())
    }
}
