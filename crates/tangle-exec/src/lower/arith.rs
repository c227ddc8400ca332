//! Arithmetic, logical, relational, conversion and composite instructions, and GLSL.std.450,
//! lowered to one op per component. Matrix products and geometric functions are expanded into
//! multiply/add chains over fresh slots, in the order the spec's formulas give.

use super::types::Scalar;
use super::{Lowerer, Out, Value};
use crate::error::ExecError;
use crate::program::ops::WideOp;
use crate::program::{
    Conv, FloatBin, FloatCmp, IntBin, IntCmp, IntTern, IntUn, Op, Slot, Type, TypeIdx,
};
use crate::semantics::glsl;
use spirv::GlslStd450Op as G;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

impl<'m> Lowerer<'m> {
    fn slots_of(&self, v: Value) -> u32 {
        self.program.ty(v.ty).slots
    }

    fn scalar_of(&self, v: Value) -> Result<Scalar, ExecError> {
        self.scalar(v.ty)
            .ok_or_else(|| self.malformed("expected a numeric or boolean operand"))
    }

    /// Whether `inst` reads or makes a bfloat16 value (a scalar, vector or matrix of it).
    fn touches_bf16(&self, inst: &Instruction) -> bool {
        inst.result_id
            .into_iter()
            .chain(inst.operands.iter().filter_map(|o| o.id()))
            .filter_map(|id| self.values.get(&id))
            .any(|v| self.scalar(v.ty).is_some_and(|s| s.bf16))
    }

    /// Emits `f(i)` for every component of the result.
    fn each(&mut self, out: &mut Out, n: u32, mut f: impl FnMut(u32) -> Op) {
        for i in 0..n {
            let op = f(i);
            self.emit(out, op);
        }
    }

    /// Lowers a non-memory, non-control instruction.
    pub fn lower_arith(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        use SpvOp as S;
        let ib = |o: S| -> Option<IntBin> {
            Some(match o {
                S::IAdd => IntBin::Add,
                S::ISub => IntBin::Sub,
                S::IMul => IntBin::Mul,
                S::UDiv => IntBin::UDiv,
                S::SDiv => IntBin::SDiv,
                S::UMod => IntBin::UMod,
                S::SRem => IntBin::SRem,
                S::SMod => IntBin::SMod,
                S::ShiftLeftLogical => IntBin::ShiftLeft,
                S::ShiftRightLogical => IntBin::ShiftRightLogical,
                S::ShiftRightArithmetic => IntBin::ShiftRightArithmetic,
                S::BitwiseOr | S::LogicalOr => IntBin::Or,
                S::BitwiseXor => IntBin::Xor,
                S::BitwiseAnd | S::LogicalAnd => IntBin::And,
                _ => return None,
            })
        };
        let ic = |o: S| -> Option<IntCmp> {
            Some(match o {
                S::IEqual | S::LogicalEqual => IntCmp::Eq,
                S::INotEqual | S::LogicalNotEqual => IntCmp::Ne,
                S::UGreaterThan => IntCmp::UGt,
                S::UGreaterThanEqual => IntCmp::UGe,
                S::ULessThan => IntCmp::ULt,
                S::ULessThanEqual => IntCmp::ULe,
                S::SGreaterThan => IntCmp::SGt,
                S::SGreaterThanEqual => IntCmp::SGe,
                S::SLessThan => IntCmp::SLt,
                S::SLessThanEqual => IntCmp::SLe,
                _ => return None,
            })
        };
        let fb = |o: S| -> Option<FloatBin> {
            Some(match o {
                S::FAdd => FloatBin::Add,
                S::FSub => FloatBin::Sub,
                S::FMul => FloatBin::Mul,
                S::FDiv => FloatBin::Div,
                S::FRem => FloatBin::Rem,
                S::FMod => FloatBin::Mod,
                _ => return None,
            })
        };
        let fc = |o: S| -> Option<FloatCmp> {
            Some(match o {
                S::FOrdEqual => FloatCmp::OrdEq,
                S::FOrdNotEqual => FloatCmp::OrdNe,
                S::FOrdLessThan => FloatCmp::OrdLt,
                S::FOrdGreaterThan => FloatCmp::OrdGt,
                S::FOrdLessThanEqual => FloatCmp::OrdLe,
                S::FOrdGreaterThanEqual => FloatCmp::OrdGe,
                S::FUnordEqual => FloatCmp::UnordEq,
                S::FUnordNotEqual => FloatCmp::UnordNe,
                S::FUnordLessThan => FloatCmp::UnordLt,
                S::FUnordGreaterThan => FloatCmp::UnordGt,
                S::FUnordLessThanEqual => FloatCmp::UnordLe,
                S::FUnordGreaterThanEqual => FloatCmp::UnordGe,
                _ => return None,
            })
        };
        let conv = |o: S| -> Option<Conv> {
            Some(match o {
                S::UConvert => Conv::UConvert,
                S::SConvert => Conv::SConvert,
                S::FConvert => Conv::FConvert,
                S::ConvertFToU => Conv::FToU,
                S::ConvertFToS => Conv::FToS,
                S::ConvertUToF => Conv::UToF,
                S::ConvertSToF => Conv::SToF,
                _ => return None,
            })
        };
        let moves_bits = matches!(
            op,
            S::Bitcast
                | S::Select
                | S::CopyObject
                | S::CopyLogical
                | S::CompositeConstruct
                | S::CompositeExtract
                | S::CompositeInsert
                | S::VectorShuffle
                | S::VectorExtractDynamic
                | S::VectorInsertDynamic
                | S::Undef
        );
        if !moves_bits && conv(op).is_none() && self.touches_bf16(inst) {
            // SPV_KHR_bfloat16 gives bfloat16 conversions, dot products and cooperative
            // matrices, not arithmetic; refused here rather than computed as f16.
            return Err(self.unsupported(format!("bfloat16 operands of Op{op:?}")));
        }
        if let Some(o) = ib(op) {
            let (a, b, d) = (
                self.operand(inst, 0)?,
                self.operand(inst, 1)?,
                self.value(inst.result_id)?,
            );
            let bits = self.scalar_of(d)?.bits;
            let n = self.slots_of(d);
            self.check_int_bin(out, o, bits, a, b, n);
            self.check_wrap(inst, out, o, bits, (a.slot, b.slot), n)?;
            self.each(out, n, |i| Op::IntBin {
                op: o,
                bits,
                dst: d.slot + i,
                a: a.slot + i,
                b: b.slot + i,
            });
            return Ok(());
        }
        if let Some(o) = ic(op) {
            let (a, b, d) = (
                self.operand(inst, 0)?,
                self.operand(inst, 1)?,
                self.value(inst.result_id)?,
            );
            let bits = self.scalar_of(a)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::IntCmp {
                op: o,
                bits,
                dst: d.slot + i,
                a: a.slot + i,
                b: b.slot + i,
            });
            return Ok(());
        }
        if let Some(o) = fb(op) {
            let (a, b, d) = (
                self.operand(inst, 0)?,
                self.operand(inst, 1)?,
                self.value(inst.result_id)?,
            );
            let bits = self.scalar_of(d)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::FloatBin {
                op: o,
                bits,
                dst: d.slot + i,
                a: a.slot + i,
                b: b.slot + i,
            });
            return Ok(());
        }
        if let Some(o) = fc(op) {
            let (a, b, d) = (
                self.operand(inst, 0)?,
                self.operand(inst, 1)?,
                self.value(inst.result_id)?,
            );
            let bits = self.scalar_of(a)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::FloatCmp {
                op: o,
                bits,
                dst: d.slot + i,
                a: a.slot + i,
                b: b.slot + i,
            });
            return Ok(());
        }
        if let Some(o) = conv(op) {
            let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
            // Float formats by code, so a bfloat16 side converts as bfloat16.
            let from = self.scalar_of(a)?.float_format();
            let to = self.scalar_of(d)?.float_format();
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::Convert {
                op: o,
                from,
                to,
                dst: d.slot + i,
                a: a.slot + i,
            });
            return Ok(());
        }
        match op {
            S::SNegate | S::Not | S::BitReverse | S::BitCount | S::LogicalNot => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(a)?.bits;
                let o = match op {
                    S::SNegate => IntUn::Negate,
                    S::BitReverse => IntUn::BitReverse,
                    S::BitCount => IntUn::BitCount,
                    _ => IntUn::Not,
                };
                let n = self.slots_of(d);
                if op == S::SNegate {
                    // A negation wraps exactly when 0 - a does.
                    let zero = self.constant(0)?;
                    for i in 0..n {
                        self.check_wrap(inst, out, IntBin::Sub, bits, (zero, a.slot + i), 1)?;
                    }
                }
                self.each(out, n, |i| Op::IntUn {
                    op: o,
                    bits,
                    dst: d.slot + i,
                    a: a.slot + i,
                });
            }
            S::FNegate => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FNegate {
                    bits,
                    dst: d.slot + i,
                    a: a.slot + i,
                });
            }
            S::IsNan | S::IsInf => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(a)?.bits;
                let o = if op == S::IsNan {
                    FloatCmp::IsNan
                } else {
                    FloatCmp::IsInf
                };
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FloatCmp {
                    op: o,
                    bits,
                    dst: d.slot + i,
                    a: a.slot + i,
                    b: a.slot + i,
                });
            }
            S::QuantizeToF16 => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let n = self.slots_of(d);
                let tmp = self.alloc(n)?;
                self.each(out, n, |i| Op::Convert {
                    op: Conv::FConvert,
                    from: 32,
                    to: 16,
                    dst: tmp + i,
                    a: a.slot + i,
                });
                self.each(out, n, |i| Op::Convert {
                    op: Conv::FConvert,
                    from: 16,
                    to: 32,
                    dst: d.slot + i,
                    a: tmp + i,
                });
            }
            S::Bitcast => self.bitcast(inst, out)?,
            S::Select => {
                let (c, a, b, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.operand(inst, 2)?,
                    self.value(inst.result_id)?,
                );
                let n = self.slots_of(d);
                let vector_cond = self.slots_of(c) > 1;
                self.each(out, n, |i| Op::Select {
                    dst: d.slot + i,
                    cond: if vector_cond { c.slot + i } else { c.slot },
                    a: a.slot + i,
                    b: b.slot + i,
                });
            }
            S::CopyObject | S::CopyLogical => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::Copy {
                    dst: d.slot + i,
                    src: a.slot + i,
                });
                if let Some(p) = inst
                    .id_operand(0)
                    .and_then(|id| self.pointees.get(&id).copied())
                {
                    if let Some(id) = inst.result_id {
                        self.pointees.insert(id, p);
                    }
                }
            }
            S::CompositeConstruct => {
                let d = self.value(inst.result_id)?;
                let mut k = 0;
                for o in &inst.operands {
                    let v = self.value(o.id())?;
                    let n = self.slots_of(v);
                    self.each(out, n, |i| Op::Copy {
                        dst: d.slot + k + i,
                        src: v.slot + i,
                    });
                    k += n;
                }
            }
            S::CompositeExtract => {
                let (c, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let lits: Vec<u64> = inst
                    .operands
                    .iter()
                    .skip(1)
                    .filter_map(|o| o.literal())
                    .collect();
                let off = self.composite_offset(c.ty, &lits)?;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::Copy {
                    dst: d.slot + i,
                    src: c.slot + off + i,
                });
            }
            S::CompositeInsert => {
                let (obj, c, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let lits: Vec<u64> = inst
                    .operands
                    .iter()
                    .skip(2)
                    .filter_map(|o| o.literal())
                    .collect();
                let off = self.composite_offset(c.ty, &lits)?;
                let n = self.slots_of(d);
                let m = self.slots_of(obj);
                self.each(out, n, |i| {
                    if i >= off && i < off + m {
                        Op::Copy {
                            dst: d.slot + i,
                            src: obj.slot + i - off,
                        }
                    } else {
                        Op::Copy {
                            dst: d.slot + i,
                            src: c.slot + i,
                        }
                    }
                });
            }
            S::VectorShuffle => {
                let (a, b, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let na = self.slots_of(a);
                let zero = self.constant(0)?;
                let comps: Vec<u64> = inst
                    .operands
                    .iter()
                    .skip(2)
                    .filter_map(|o| o.literal())
                    .collect();
                for (i, &c) in comps.iter().enumerate() {
                    let c = c as u32;
                    // "A Component literal may also be FFFFFFFF, which means the corresponding
                    // result component has no source and is undefined."
                    let src = if c == u32::MAX {
                        zero
                    } else if c < na {
                        a.slot + c
                    } else if c - na < self.slots_of(b) {
                        b.slot + c - na
                    } else {
                        return Err(self.malformed("shuffle component out of range"));
                    };
                    self.emit(
                        out,
                        Op::Copy {
                            dst: d.slot + i as u32,
                            src,
                        },
                    );
                }
            }
            S::VectorExtractDynamic => {
                let (v, idx, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let index_bits = self.scalar_of(idx)?.bits;
                let count = self.slots_of(v);
                self.emit(
                    out,
                    Op::ExtractDynamic {
                        dst: d.slot,
                        base: v.slot,
                        count,
                        index: idx.slot,
                        index_bits,
                    },
                );
            }
            S::VectorInsertDynamic => {
                let (v, c, idx, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.operand(inst, 2)?,
                    self.value(inst.result_id)?,
                );
                let index_bits = self.scalar_of(idx)?.bits;
                let count = self.slots_of(v);
                self.each(out, count, |i| Op::Copy {
                    dst: d.slot + i,
                    src: v.slot + i,
                });
                self.emit(
                    out,
                    Op::InsertDynamic {
                        dst: d.slot,
                        count,
                        value: c.slot,
                        index: idx.slot,
                        index_bits,
                    },
                );
            }
            S::Any | S::All => {
                let (v, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let o = if op == S::Any {
                    IntBin::Or
                } else {
                    IntBin::And
                };
                let acc = self.reduce(out, v, o)?;
                self.emit(
                    out,
                    Op::Copy {
                        dst: d.slot,
                        src: acc,
                    },
                );
            }
            S::Dot => {
                let (a, b, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(a);
                let r = self.dot(
                    out,
                    bits,
                    (0..n).map(|i| (a.slot + i, b.slot + i)).collect(),
                )?;
                self.emit(
                    out,
                    Op::Copy {
                        dst: d.slot,
                        src: r,
                    },
                );
            }
            S::VectorTimesScalar | S::MatrixTimesScalar => {
                let (a, s, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FloatBin {
                    op: FloatBin::Mul,
                    bits,
                    dst: d.slot + i,
                    a: a.slot + i,
                    b: s.slot,
                });
            }
            S::MatrixTimesVector
            | S::VectorTimesMatrix
            | S::MatrixTimesMatrix
            | S::OuterProduct
            | S::Transpose => {
                self.matrix(inst, op, out)?;
            }
            S::IAddCarry | S::ISubBorrow | S::UMulExtended | S::SMulExtended => {
                let (a, b, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let bits = self.scalar_of(a)?.bits;
                let n = self.slots_of(a);
                let o = match op {
                    S::IAddCarry => WideOp::IAddCarry,
                    S::ISubBorrow => WideOp::ISubBorrow,
                    S::UMulExtended => WideOp::UMulExtended,
                    _ => WideOp::SMulExtended,
                };
                // The result struct's members are two vectors: lows first, then highs.
                self.each(out, n, |i| Op::Wide {
                    op: o,
                    bits,
                    lo: d.slot + i,
                    hi: d.slot + n + i,
                    a: a.slot + i,
                    b: b.slot + i,
                });
            }
            S::BitFieldInsert => {
                let d = self.value(inst.result_id)?;
                let (base, ins, off, cnt) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.operand(inst, 2)?,
                    self.operand(inst, 3)?,
                );
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::BitFieldInsert {
                    bits,
                    dst: d.slot + i,
                    base: base.slot + i,
                    insert: ins.slot + i,
                    offset: off.slot,
                    count: cnt.slot,
                });
            }
            S::BitFieldSExtract | S::BitFieldUExtract => {
                let d = self.value(inst.result_id)?;
                let (base, off, cnt) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.operand(inst, 2)?,
                );
                let bits = self.scalar_of(d)?.bits;
                let o = if op == S::BitFieldSExtract {
                    IntTern::BitFieldSExtract
                } else {
                    IntTern::BitFieldUExtract
                };
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::IntTern {
                    op: o,
                    bits,
                    dst: d.slot + i,
                    a: base.slot + i,
                    b: off.slot,
                    c: cnt.slot,
                });
            }
            S::Undef => {}
            S::ExtInst => self.ext_inst(inst, out)?,
            _ => return Err(self.unsupported(inst.name())),
        }
        Ok(())
    }

    /// Emits the no-wrap check of an integer operation decorated NoSignedWrap or NoUnsignedWrap
    /// (SPV_KHR_no_integer_wrap_decoration, SPIR-V 1.4: "If the instruction decorated with
    /// NoSignedWrap does overflow or underflow, the behavior is undefined"), on slots `a + i`, `b + i` (a constant 0 `a` stays).
    fn check_wrap(
        &mut self,
        inst: &Instruction,
        out: &mut Out,
        o: IntBin,
        bits: u32,
        (a, b): (Slot, Slot),
        n: u32,
    ) -> Result<(), ExecError> {
        let Some(id) = inst.result_id else {
            return Ok(());
        };
        let signed = self
            .decoration(id, spirv::Decoration::NoSignedWrap)
            .is_some();
        let unsigned = self
            .decoration(id, spirv::Decoration::NoUnsignedWrap)
            .is_some();
        if !(signed || unsigned)
            || !matches!(
                o,
                IntBin::Add | IntBin::Sub | IntBin::Mul | IntBin::ShiftLeft
            )
        {
            return Ok(());
        }
        let zero = self.constant(0)?;
        for i in 0..n {
            let a = if a == zero { a } else { a + i };
            let check = Op::CheckWrap {
                op: o,
                bits,
                a,
                b: b + i,
                signed,
                unsigned,
            };
            self.emit(out, check);
        }
        Ok(())
    }

    /// Emits the sanitizer checks an integer operation needs: none where the second operand is
    /// a constant that makes the operation defined.
    fn check_int_bin(&mut self, out: &mut Out, o: IntBin, bits: u32, a: Value, b: Value, n: u32) {
        let division = matches!(
            o,
            IntBin::UDiv | IntBin::SDiv | IntBin::UMod | IntBin::SRem | IntBin::SMod
        );
        let shift = matches!(
            o,
            IntBin::ShiftLeft | IntBin::ShiftRightLogical | IntBin::ShiftRightArithmetic
        );
        let signed = matches!(o, IntBin::SDiv | IntBin::SRem | IntBin::SMod);
        for i in 0..n {
            let bs = b.slot + i;
            let c = self.const_value(bs);
            if matches!(o, IntBin::SRem | IntBin::SMod) {
                // Vulkan, "Precision and Operation of SPIR-V Instructions": "For the OpSRem
                // and OpSMod instructions, if either operand is negative the result is
                // undefined."
                let negative =
                    |v: Option<u64>| v.is_none_or(|v| crate::semantics::sign_extend(bits, v) < 0);
                if negative(self.const_value(a.slot + i)) || negative(c) {
                    let check = Op::CheckRemainderSign {
                        bits,
                        a: a.slot + i,
                        b: bs,
                    };
                    self.emit(out, check);
                }
            }
            if division {
                let fine =
                    c.is_some_and(|c| c != 0 && (!signed || c != crate::semantics::mask(bits)));
                if !fine {
                    self.emit(
                        out,
                        Op::CheckDivision {
                            bits,
                            signed,
                            a: a.slot + i,
                            b: bs,
                        },
                    );
                }
            } else if shift && c.is_none_or(|c| c >= u64::from(bits)) {
                self.emit(out, Op::CheckShift { bits, shift: bs });
            }
        }
    }

    /// The slot offset of the component `lits` selects inside a composite of type `t`.
    fn composite_offset(&self, t: TypeIdx, lits: &[u64]) -> Result<u32, ExecError> {
        self.composite_offset_and_type(t, lits).map(|(o, _)| o)
    }

    /// The slot offset and type of the component `lits` selects inside a composite of type `t`.
    pub(crate) fn composite_offset_and_type(
        &self,
        mut t: TypeIdx,
        lits: &[u64],
    ) -> Result<(u32, TypeIdx), ExecError> {
        let mut off = 0u32;
        for &l in lits {
            let l = l as u32;
            let (next, before) = match &self.program.ty(t).ty {
                Type::Vector { elem, count, .. }
                | Type::Array { elem, count, .. }
                | Type::Matrix {
                    column: elem,
                    count,
                    ..
                } => {
                    if l >= *count {
                        return Err(self.malformed("composite index out of range"));
                    }
                    (*elem, l * self.program.ty(*elem).slots)
                }
                Type::CoopMatrix { elem, length, .. } => {
                    if l >= *length {
                        return Err(self.malformed(format!(
                            "index {l} into a cooperative matrix of {length} components per \
                             invocation (OpCooperativeMatrixLengthKHR)"
                        )));
                    }
                    (*elem, l)
                }
                Type::Struct { members } => {
                    let m = members
                        .get(l as usize)
                        .ok_or_else(|| self.malformed("composite index out of range"))?;
                    let before = members
                        .iter()
                        .take(l as usize)
                        .map(|(t, _)| self.program.ty(*t).slots)
                        .sum();
                    (m.0, before)
                }
                _ => return Err(self.malformed("composite index into a scalar")),
            };
            off += before;
            t = next;
        }
        Ok((off, t))
    }

    /// Folds the components of `v` with `o`; returns the slot of the result.
    fn reduce(&mut self, out: &mut Out, v: Value, o: IntBin) -> Result<Slot, ExecError> {
        let n = self.slots_of(v);
        let mut acc = v.slot;
        for i in 1..n {
            let t = self.alloc(1)?;
            self.emit(
                out,
                Op::IntBin {
                    op: o,
                    bits: 1,
                    dst: t,
                    a: acc,
                    b: v.slot + i,
                },
            );
            acc = t;
        }
        Ok(acc)
    }

    /// `Σ a_i × b_i` (`OpDot` semantics) into a fresh slot; returns the slot.
    fn dot(
        &mut self,
        out: &mut Out,
        bits: u32,
        pairs: Vec<(Slot, Slot)>,
    ) -> Result<Slot, ExecError> {
        let t = self.alloc(1)?;
        let (a, b): (Vec<Slot>, Vec<Slot>) = pairs.into_iter().unzip();
        self.emit(
            out,
            Op::FDot {
                bits,
                dst: t,
                a: a.into_boxed_slice(),
                b: b.into_boxed_slice(),
            },
        );
        Ok(t)
    }

    /// (columns, rows) of a matrix type.
    fn matrix_shape(&self, t: TypeIdx) -> Result<(u32, u32), ExecError> {
        match &self.program.ty(t).ty {
            Type::Matrix { column, count, .. } => Ok((*count, self.program.ty(*column).slots)),
            _ => Err(self.malformed("expected a matrix")),
        }
    }

    fn matrix(&mut self, inst: &Instruction, op: SpvOp, out: &mut Out) -> Result<(), ExecError> {
        let d = self.value(inst.result_id)?;
        let a = self.operand(inst, 0)?;
        let bits = self.scalar_of(d)?.bits;
        match op {
            SpvOp::Transpose => {
                let (cols, rows) = self.matrix_shape(a.ty)?;
                for c in 0..cols {
                    for r in 0..rows {
                        self.emit(
                            out,
                            Op::Copy {
                                dst: d.slot + r * cols + c,
                                src: a.slot + c * rows + r,
                            },
                        );
                    }
                }
            }
            SpvOp::MatrixTimesVector => {
                let v = self.operand(inst, 1)?;
                let (cols, rows) = self.matrix_shape(a.ty)?;
                for r in 0..rows {
                    let s = self.dot(
                        out,
                        bits,
                        (0..cols)
                            .map(|c| (a.slot + c * rows + r, v.slot + c))
                            .collect(),
                    )?;
                    self.emit(
                        out,
                        Op::Copy {
                            dst: d.slot + r,
                            src: s,
                        },
                    );
                }
            }
            SpvOp::VectorTimesMatrix => {
                let m = self.operand(inst, 1)?;
                let (cols, rows) = self.matrix_shape(m.ty)?;
                for c in 0..cols {
                    let s = self.dot(
                        out,
                        bits,
                        (0..rows)
                            .map(|r| (a.slot + r, m.slot + c * rows + r))
                            .collect(),
                    )?;
                    self.emit(
                        out,
                        Op::Copy {
                            dst: d.slot + c,
                            src: s,
                        },
                    );
                }
            }
            SpvOp::MatrixTimesMatrix => {
                let b = self.operand(inst, 1)?;
                let (acols, arows) = self.matrix_shape(a.ty)?;
                let (bcols, _) = self.matrix_shape(b.ty)?;
                for c in 0..bcols {
                    for r in 0..arows {
                        let pairs = (0..acols)
                            .map(|k| (a.slot + k * arows + r, b.slot + c * acols + k))
                            .collect();
                        let s = self.dot(out, bits, pairs)?;
                        self.emit(
                            out,
                            Op::Copy {
                                dst: d.slot + c * arows + r,
                                src: s,
                            },
                        );
                    }
                }
            }
            _ => {
                // OuterProduct: column c is a × b[c].
                let b = self.operand(inst, 1)?;
                let rows = self.slots_of(a);
                let cols = self.slots_of(b);
                for c in 0..cols {
                    for r in 0..rows {
                        self.emit(
                            out,
                            Op::FloatBin {
                                op: FloatBin::Mul,
                                bits,
                                dst: d.slot + c * rows + r,
                                a: a.slot + r,
                                b: b.slot + c,
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }

    fn bitcast(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
        let (na, nd) = (self.slots_of(a), self.slots_of(d));
        let ba = self.scalar(a.ty).map_or(64, |s| s.bits);
        let bd = self.scalar(d.ty).map_or(64, |s| s.bits);
        if na == nd && ba == bd {
            self.each(out, nd, |i| Op::Copy {
                dst: d.slot + i,
                src: a.slot + i,
            });
        } else if ba == 64 && na == 1 && bd == 64 {
            self.emit(
                out,
                Op::Copy {
                    dst: d.slot,
                    src: a.slot,
                },
            );
        } else {
            self.emit(
                out,
                Op::Bitcast {
                    dst: d.slot,
                    dst_count: nd,
                    dst_bits: bd,
                    src: a.slot,
                    src_count: na,
                    src_bits: ba,
                },
            );
        }
        if let Type::Pointer { pointee, .. } = self.program.ty(d.ty).ty {
            if let Some(id) = inst.result_id {
                self.pointees.insert(id, pointee);
            }
        }
        Ok(())
    }

    fn ext_inst(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let set = inst.id_operand(0);
        if set.is_none() || set != self.glsl {
            // Non-semantic sets (debug info, printf) have no effect on execution.
            return Ok(());
        }
        let num = inst.literal_operand(1).unwrap_or(u64::MAX) as u32;
        let g = G::from_u32(num)
            .ok_or_else(|| self.unsupported(format!("GLSL.std.450 instruction {num}")))?;
        let d = self.value(inst.result_id)?;
        let n = self.slots_of(d);
        let mut args = Vec::new();
        for i in 2..inst.operands.len() {
            args.push(self.operand(inst, i)?);
        }
        let arg_bits = match args.first() {
            Some(a) => self.scalar(a.ty).map_or(32, |s| s.bits),
            None => 32,
        };
        let argc = args.len();
        if argc <= 3 && glsl::eval_componentwise(num, arg_bits, &[0, 0, 0][..argc]).is_some() {
            // Component-wise: scalar operands (Step's edge, Mix's a, ...) apply to every component.
            let slot = |this: &Self, k: usize, i: u32| {
                args.get(k).map_or(0, |a| {
                    if this.slots_of(*a) > 1 {
                        a.slot + i
                    } else {
                        a.slot
                    }
                })
            };
            let domain = crate::check::domain::has_domain(num);
            for i in 0..n {
                let args = [slot(self, 0, i), slot(self, 1, i), slot(self, 2, i)];
                if domain {
                    let check = Op::CheckDomain {
                        inst: num,
                        bits: arg_bits,
                        args,
                        argc: argc as u32,
                    };
                    self.emit(out, check);
                }
                let op = Op::Glsl {
                    inst: num,
                    bits: arg_bits,
                    dst: d.slot + i,
                    args,
                    argc: argc as u32,
                };
                self.emit(out, op);
            }
            return Ok(());
        }
        let bits = self.scalar(d.ty).map_or(32, |s| s.bits);
        match g {
            G::Ldexp => {
                let (a, e) = (self.arg(&args, 0)?, self.arg(&args, 1)?);
                let exp_bits = self.scalar_of(e)?.bits;
                let se = self.slots_of(e) > 1;
                self.each(out, n, |i| Op::Ldexp {
                    bits,
                    dst: d.slot + i,
                    a: a.slot + i,
                    exp: if se { e.slot + i } else { e.slot },
                    exp_bits,
                });
            }
            G::Modf | G::Frexp => {
                let (a, p) = (self.arg(&args, 0)?, self.arg(&args, 1)?);
                let pty = self.pointee_of_value(inst.id_operand(3))?;
                let tmp = self.alloc(n)?;
                let exp_bits = self.scalar(pty).map_or(32, |s| s.bits);
                if g == G::Modf {
                    self.each(out, n, |i| Op::Modf {
                        bits,
                        dst: d.slot + i,
                        whole: tmp + i,
                        a: a.slot + i,
                    });
                } else {
                    self.each(out, n, |i| Op::Frexp {
                        bits,
                        dst: d.slot + i,
                        exp: tmp + i,
                        exp_bits,
                        a: a.slot + i,
                    });
                }
                self.emit(
                    out,
                    Op::Store {
                        ptr: p.slot,
                        src: tmp,
                        ty: pty,
                    },
                );
            }
            G::ModfStruct | G::FrexpStruct => {
                let a = self.arg(&args, 0)?;
                let m = self.slots_of(a);
                let exp_bits = match &self.program.ty(d.ty).ty {
                    Type::Struct { members } => members
                        .get(1)
                        .and_then(|(t, _)| self.scalar(*t))
                        .map_or(32, |s| s.bits),
                    _ => 32,
                };
                if g == G::ModfStruct {
                    self.each(out, m, |i| Op::Modf {
                        bits: arg_bits,
                        dst: d.slot + i,
                        whole: d.slot + m + i,
                        a: a.slot + i,
                    });
                } else {
                    self.each(out, m, |i| Op::Frexp {
                        bits: arg_bits,
                        dst: d.slot + i,
                        exp: d.slot + m + i,
                        exp_bits,
                        a: a.slot + i,
                    });
                }
            }
            G::Length
            | G::Distance
            | G::Cross
            | G::Normalize
            | G::FaceForward
            | G::Reflect
            | G::Refract
            | G::Determinant
            | G::MatrixInverse
            | G::PackSnorm4x8
            | G::PackUnorm4x8
            | G::PackSnorm2x16
            | G::PackUnorm2x16
            | G::PackHalf2x16
            | G::PackDouble2x32
            | G::UnpackSnorm4x8
            | G::UnpackUnorm4x8
            | G::UnpackSnorm2x16
            | G::UnpackUnorm2x16
            | G::UnpackHalf2x16
            | G::UnpackDouble2x32 => {
                let eta_bits = match args.get(2) {
                    Some(e) => self.scalar(e.ty).map_or(32, |s| s.bits),
                    None => 32,
                };
                let list: Vec<(Slot, u32)> =
                    args.iter().map(|a| (a.slot, self.slots_of(*a))).collect();
                // Unpack* produce components of the result's width; the rest work in the operands'.
                let unpack = matches!(
                    g,
                    G::UnpackSnorm4x8
                        | G::UnpackUnorm4x8
                        | G::UnpackSnorm2x16
                        | G::UnpackUnorm2x16
                        | G::UnpackHalf2x16
                        | G::UnpackDouble2x32
                );
                let vbits = if unpack { bits } else { arg_bits };
                self.emit(
                    out,
                    Op::GlslVector {
                        inst: num,
                        bits: vbits,
                        dst: d.slot,
                        dst_count: n,
                        args: list.into_boxed_slice(),
                        eta_bits,
                    },
                );
            }
            _ => return Err(self.unsupported(format!("GLSL.std.450 {g:?}"))),
        }
        Ok(())
    }

    fn arg(&self, args: &[Value], i: usize) -> Result<Value, ExecError> {
        args.get(i)
            .copied()
            .ok_or_else(|| self.malformed("missing extended-instruction operand"))
    }
}
