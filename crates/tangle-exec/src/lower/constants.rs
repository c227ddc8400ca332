//! Constants and specialization constants, folded into constant slots.
//!
//! `OpSpecConstantOp` is folded by lowering the wrapped instruction like any other and running
//! its ops once on a one-lane register file ([`crate::run::alu::exec_pure`]), so folding shares
//! the executor's exact semantics.

use super::{Lowerer, Out, Value};
use crate::error::ExecError;
use crate::program::TypeIdx;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// Whether `op` defines a constant or specialization constant.
pub fn is_constant(op: SpvOp) -> bool {
    matches!(
        op,
        SpvOp::ConstantTrue
            | SpvOp::ConstantFalse
            | SpvOp::Constant
            | SpvOp::ConstantComposite
            | SpvOp::ConstantNull
            | SpvOp::SpecConstantTrue
            | SpvOp::SpecConstantFalse
            | SpvOp::SpecConstant
            | SpvOp::SpecConstantComposite
            | SpvOp::SpecConstantOp
    )
}

/// Masks a value to `bits` (1 for booleans).
pub fn mask_bits(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

impl<'m> Lowerer<'m> {
    /// Lowers one constant instruction.
    pub fn lower_constant(&mut self, inst: &Instruction, op: SpvOp) -> Result<(), ExecError> {
        let ty = self.lower_type(inst.result_type)?;
        let id = inst.result_id;
        let spec_id = id
            .and_then(|id| self.decoration(id, spirv::Decoration::SpecId))
            .and_then(|p| p.first().copied());
        let spec_value = spec_id.and_then(|s| self.spec.get(&(s as u32)).copied());
        let bits = self.scalar(ty).map_or(32, |s| s.bits);
        let values = match op {
            SpvOp::ConstantTrue => vec![1],
            SpvOp::ConstantFalse => vec![0],
            SpvOp::SpecConstantTrue => vec![spec_value.map_or(1, |v| u64::from(v != 0))],
            SpvOp::SpecConstantFalse => vec![spec_value.map_or(0, |v| u64::from(v != 0))],
            SpvOp::Constant | SpvOp::SpecConstant => {
                let lit = inst
                    .literal_operand(0)
                    .ok_or_else(|| self.malformed("constant without a value"))?;
                let v = if op == SpvOp::SpecConstant {
                    spec_value.unwrap_or(lit)
                } else {
                    lit
                };
                vec![mask_bits(v, bits)]
            }
            SpvOp::ConstantNull => return self.const_composite(id, ty, None),
            SpvOp::ConstantComposite | SpvOp::SpecConstantComposite
                if matches!(
                    self.program.ty(ty).ty,
                    crate::program::Type::CoopMatrix { .. }
                ) =>
            {
                // "If the Result Type is a cooperative matrix type, then there must be only one
                // Constituent and it is used to initialize all members."
                let v = self.value(inst.id_operand(0))?;
                let c = self
                    .const_value(v.slot)
                    .ok_or_else(|| self.malformed("constituent is not a constant"))?;
                vec![c; self.program.ty(ty).slots as usize]
            }
            SpvOp::ConstantComposite | SpvOp::SpecConstantComposite => {
                let mut vals = Vec::new();
                for o in &inst.operands {
                    let v = self.value(o.id())?;
                    for i in 0..self.program.ty(v.ty).slots {
                        vals.push(
                            self.const_value(v.slot + i)
                                .ok_or_else(|| self.malformed("constituent is not a constant"))?,
                        );
                    }
                }
                vals
            }
            SpvOp::SpecConstantOp => return self.spec_constant_op(inst, ty),
            _ => return Err(self.unsupported(inst.name())),
        };
        self.const_composite(id, ty, Some(values))
    }

    /// Binds `id` to fresh constant slots of type `ty` holding `values` (zeros when `None`).
    pub fn const_composite(
        &mut self,
        id: Option<u32>,
        ty: TypeIdx,
        values: Option<Vec<u64>>,
    ) -> Result<(), ExecError> {
        let n = self.program.ty(ty).slots;
        let values = values.unwrap_or_else(|| vec![0; n as usize]);
        if values.len() != n as usize {
            return Err(self.malformed("constant has the wrong number of components"));
        }
        let slot = self.alloc(n)?;
        for (i, v) in values.into_iter().enumerate() {
            self.program.constants.push((slot + i as u32, v));
            self.const_values.insert(slot + i as u32, v);
        }
        if let Some(id) = id {
            self.values.insert(id, Value { slot, ty });
        }
        Ok(())
    }

    /// Folds `OpSpecConstantOp` by lowering and running the wrapped instruction.
    fn spec_constant_op(&mut self, inst: &Instruction, ty: TypeIdx) -> Result<(), ExecError> {
        let opcode = inst
            .literal_operand(0)
            .ok_or_else(|| self.malformed("OpSpecConstantOp without an opcode"))?;
        // The validator refuses opcodes outside the spec's list; were one to get here, running
        // it (OpNop folds to nothing, leaving a zero) would be silently wrong.
        let opcode = u32::try_from(opcode)
            .ok()
            .filter(|&op| tangle_spirv::grammar::spec_constant_op(op).is_some())
            .and_then(|op| u16::try_from(op).ok())
            .ok_or_else(|| self.malformed(format!("OpSpecConstantOp opcode {opcode}")))?;
        let inner = Instruction {
            opcode,
            result_type: inst.result_type,
            result_id: inst.result_id,
            operands: inst.operands.iter().skip(1).cloned().collect(),
            offset: inst.offset,
        };
        let n = self.program.ty(ty).slots;
        let slot = self.alloc(n)?;
        if let Some(id) = inst.result_id {
            self.values.insert(id, Value { slot, ty });
        }
        // The operands' slots, to carry undefined values through the fold (below).
        let operand_slots: Vec<Vec<u32>> = inst
            .operands
            .iter()
            .skip(1)
            .filter_map(|o| self.values.get(&o.id()?).copied())
            .map(|v| (v.slot..v.slot + self.program.ty(v.ty).slots).collect())
            .collect();
        let mut out = Out::default();
        self.lower_inst(&inner, &mut out)?;
        let mut regs = vec![0u64; self.program.slots as usize];
        for (s, v) in &self.program.constants {
            if let Some(r) = regs.get_mut(*s as usize) {
                *r = *v;
            }
        }
        let mut undefined_result = false;
        for op in &out.ops {
            if crate::run::alu::exec_pure(op, &mut regs, 1, 1) {
                continue;
            }
            // The sanitizer's checks before a division, a shift or a remainder whose operand is
            // a specialization constant (lowering leaves them where the operand is not known
            // to make the operation defined), run on the folded values. A finding makes the
            // constant's value undefined rather than refusing the pipeline: glslang folds a
            // GLSL `c ? 0 : a / c` of specialization constants into an eager `UDiv` under a
            // `Select` (ggml-vulkan's flash attention with `SubGroupSize` 0), where GLSL
            // evaluates only the chosen operand; the value is poisoned like an `OpUndef`'s, so
            // a use reaching the program is reported there by the undefined-value check, and
            // a `Select` that discards it reports nothing.
            let mut found = Vec::new();
            if !crate::check::arith::exec_check(op, &regs, 1, 1, &mut found) {
                return Err(self.unsupported(format!("opcode {opcode} in OpSpecConstantOp")));
            }
            undefined_result |= !found.is_empty();
        }
        let undefined = |s: &u32| self.undef_consts.contains(s);
        let is_select = u32::from(opcode) == SpvOp::Select as u32;
        let undefined_parts: Vec<bool> = (0..n as usize)
            .map(|i| {
                if undefined_result {
                    return true;
                }
                match operand_slots.as_slice() {
                    // Per component, the condition and the chosen object only (a scalar
                    // condition chooses whole composites).
                    [cond, a, b] if is_select => {
                        let c = cond.get(i).or(cond.first());
                        let chosen = match c.and_then(|c| regs.get(*c as usize)) {
                            Some(&v) if v != 0 => a,
                            _ => b,
                        };
                        c.is_some_and(undefined) || chosen.get(i).is_some_and(undefined)
                    }
                    _ => operand_slots.iter().flatten().any(undefined),
                }
            })
            .collect();
        if undefined_parts.contains(&true) {
            let loc = self.location();
            for (i, _) in undefined_parts.iter().enumerate().filter(|(_, u)| **u) {
                self.undef_consts.insert(slot + i as u32);
                self.program.undefs.push((slot + i as u32, 1, loc));
            }
        }
        for i in 0..n {
            let v = regs.get((slot + i) as usize).copied().unwrap_or(0);
            self.program.constants.push((slot + i, v));
            self.const_values.insert(slot + i, v);
        }
        Ok(())
    }
}
