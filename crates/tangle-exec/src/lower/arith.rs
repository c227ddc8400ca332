//! Arithmetic, logical, relational, conversion and composite instructions, and GLSL.std.450,
//! lowered to one op per component. Matrix products and geometric functions are expanded into
//! multiply/add chains over fresh slots, in the order the spec's formulas give.

use super::types::Scalar;
use super::{Lowerer, Out, Value};
use crate::error::ExecError;
use crate::program::{Conv, FloatBin, FloatCmp, FloatTern, FloatUn, IntBin, IntCmp, IntTern, IntUn, Op, PackOp, Slot, Type, TypeIdx};
use crate::program::ops::WideOp;
use spirv::GlslStd450Op as G;
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

impl<'m> Lowerer<'m> {
    fn slots_of(&self, v: Value) -> u32 {
        self.program.ty(v.ty).slots
    }

    fn scalar_of(&self, v: Value) -> Result<Scalar, ExecError> {
        self.scalar(v.ty).ok_or_else(|| self.malformed("expected a numeric or boolean operand"))
    }

    /// Emits `f(i)` for every component of the result.
    fn each(&mut self, out: &mut Out, n: u32, mut f: impl FnMut(u32) -> Op) {
        for i in 0..n {
            let op = f(i);
            self.emit(out, op);
        }
    }

    /// Lowers a non-memory, non-control instruction.
    pub fn lower_arith(&mut self, inst: &Instruction, op: SpvOp, out: &mut Out) -> Result<(), ExecError> {
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
        if let Some(o) = ib(op) {
            let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
            let bits = self.scalar_of(d)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::IntBin { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i });
            return Ok(());
        }
        if let Some(o) = ic(op) {
            let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
            let bits = self.scalar_of(a)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::IntCmp { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i });
            return Ok(());
        }
        if let Some(o) = fb(op) {
            let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
            let bits = self.scalar_of(d)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::FloatBin { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i });
            return Ok(());
        }
        if let Some(o) = fc(op) {
            let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
            let bits = self.scalar_of(a)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::FloatCmp { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i });
            return Ok(());
        }
        if let Some(o) = conv(op) {
            let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
            let from = self.scalar_of(a)?.bits;
            let to = self.scalar_of(d)?.bits;
            let n = self.slots_of(d);
            self.each(out, n, |i| Op::Convert { op: o, from, to, dst: d.slot + i, a: a.slot + i });
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
                self.each(out, n, |i| Op::IntUn { op: o, bits, dst: d.slot + i, a: a.slot + i });
            }
            S::FNegate => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FloatUn { op: FloatUn::Negate, bits, dst: d.slot + i, a: a.slot + i });
            }
            S::IsNan | S::IsInf => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(a)?.bits;
                let o = if op == S::IsNan { FloatCmp::IsNan } else { FloatCmp::IsInf };
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FloatCmp { op: o, bits, dst: d.slot + i, a: a.slot + i, b: a.slot + i });
            }
            S::QuantizeToF16 => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let n = self.slots_of(d);
                let tmp = self.alloc(n)?;
                self.each(out, n, |i| Op::Convert { op: Conv::FConvert, from: 32, to: 16, dst: tmp + i, a: a.slot + i });
                self.each(out, n, |i| Op::Convert { op: Conv::FConvert, from: 16, to: 32, dst: d.slot + i, a: tmp + i });
            }
            S::Bitcast => self.bitcast(inst, out)?,
            S::Select => {
                let (c, a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.operand(inst, 2)?, self.value(inst.result_id)?);
                let n = self.slots_of(d);
                let vector_cond = self.slots_of(c) > 1;
                self.each(out, n, |i| Op::Select { dst: d.slot + i, cond: if vector_cond { c.slot + i } else { c.slot }, a: a.slot + i, b: b.slot + i });
            }
            S::CopyObject | S::CopyLogical => {
                let (a, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::Copy { dst: d.slot + i, src: a.slot + i });
                if let Some(p) = inst.id_operand(0).and_then(|id| self.pointees.get(&id).copied()) {
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
                    self.each(out, n, |i| Op::Copy { dst: d.slot + k + i, src: v.slot + i });
                    k += n;
                }
            }
            S::CompositeExtract => {
                let (c, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let lits: Vec<u64> = inst.operands.iter().skip(1).filter_map(|o| o.literal()).collect();
                let off = self.composite_offset(c.ty, &lits)?;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::Copy { dst: d.slot + i, src: c.slot + off + i });
            }
            S::CompositeInsert => {
                let (obj, c, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let lits: Vec<u64> = inst.operands.iter().skip(2).filter_map(|o| o.literal()).collect();
                let off = self.composite_offset(c.ty, &lits)?;
                let n = self.slots_of(d);
                let m = self.slots_of(obj);
                self.each(out, n, |i| {
                    if i >= off && i < off + m {
                        Op::Copy { dst: d.slot + i, src: obj.slot + i - off }
                    } else {
                        Op::Copy { dst: d.slot + i, src: c.slot + i }
                    }
                });
            }
            S::VectorShuffle => {
                let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let na = self.slots_of(a);
                let zero = self.constant(0)?;
                let comps: Vec<u64> = inst.operands.iter().skip(2).filter_map(|o| o.literal()).collect();
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
                    self.emit(out, Op::Copy { dst: d.slot + i as u32, src });
                }
            }
            S::VectorExtractDynamic => {
                let (v, idx, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let index_bits = self.scalar_of(idx)?.bits;
                let count = self.slots_of(v);
                self.emit(out, Op::ExtractDynamic { dst: d.slot, base: v.slot, count, index: idx.slot, index_bits });
            }
            S::VectorInsertDynamic => {
                let (v, c, idx, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.operand(inst, 2)?, self.value(inst.result_id)?);
                let index_bits = self.scalar_of(idx)?.bits;
                let count = self.slots_of(v);
                self.each(out, count, |i| Op::Copy { dst: d.slot + i, src: v.slot + i });
                self.emit(out, Op::InsertDynamic { dst: d.slot, count, value: c.slot, index: idx.slot, index_bits });
            }
            S::Any | S::All => {
                let (v, d) = (self.operand(inst, 0)?, self.value(inst.result_id)?);
                let o = if op == S::Any { IntBin::Or } else { IntBin::And };
                let acc = self.reduce(out, v, o)?;
                self.emit(out, Op::Copy { dst: d.slot, src: acc });
            }
            S::Dot => {
                let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(a);
                let r = self.dot(out, bits, (0..n).map(|i| (a.slot + i, b.slot + i)).collect())?;
                self.emit(out, Op::Copy { dst: d.slot, src: r });
            }
            S::VectorTimesScalar | S::MatrixTimesScalar => {
                let (a, s, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::FloatBin { op: FloatBin::Mul, bits, dst: d.slot + i, a: a.slot + i, b: s.slot });
            }
            S::MatrixTimesVector | S::VectorTimesMatrix | S::MatrixTimesMatrix | S::OuterProduct | S::Transpose => {
                self.matrix(inst, op, out)?;
            }
            S::IAddCarry | S::ISubBorrow | S::UMulExtended | S::SMulExtended => {
                let (a, b, d) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.value(inst.result_id)?);
                let bits = self.scalar_of(a)?.bits;
                let n = self.slots_of(a);
                let o = match op {
                    S::IAddCarry => WideOp::IAddCarry,
                    S::ISubBorrow => WideOp::ISubBorrow,
                    S::UMulExtended => WideOp::UMulExtended,
                    _ => WideOp::SMulExtended,
                };
                // The result struct's members are two vectors: lows first, then highs.
                self.each(out, n, |i| Op::Wide { op: o, bits, lo: d.slot + i, hi: d.slot + n + i, a: a.slot + i, b: b.slot + i });
            }
            S::BitFieldInsert => {
                let d = self.value(inst.result_id)?;
                let (base, ins, off, cnt) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.operand(inst, 2)?, self.operand(inst, 3)?);
                let bits = self.scalar_of(d)?.bits;
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::BitFieldInsert { bits, dst: d.slot + i, base: base.slot + i, insert: ins.slot + i, offset: off.slot, count: cnt.slot });
            }
            S::BitFieldSExtract | S::BitFieldUExtract => {
                let d = self.value(inst.result_id)?;
                let (base, off, cnt) = (self.operand(inst, 0)?, self.operand(inst, 1)?, self.operand(inst, 2)?);
                let bits = self.scalar_of(d)?.bits;
                let o = if op == S::BitFieldSExtract { IntTern::BitFieldSExtract } else { IntTern::BitFieldUExtract };
                let n = self.slots_of(d);
                self.each(out, n, |i| Op::IntTern { op: o, bits, dst: d.slot + i, a: base.slot + i, b: off.slot, c: cnt.slot });
            }
            S::Undef => {}
            S::ExtInst => self.ext_inst(inst, out)?,
            _ => return Err(self.unsupported(inst.name())),
        }
        Ok(())
    }

    /// The slot offset of the component `lits` selects inside a composite of type `t`.
    fn composite_offset(&self, mut t: TypeIdx, lits: &[u64]) -> Result<u32, ExecError> {
        let mut off = 0u32;
        for &l in lits {
            let l = l as u32;
            let (next, before) = match &self.program.ty(t).ty {
                Type::Vector { elem, count, .. } | Type::Array { elem, count, .. } | Type::Matrix { column: elem, count, .. } => {
                    if l >= *count {
                        return Err(self.malformed("composite index out of range"));
                    }
                    (*elem, l * self.program.ty(*elem).slots)
                }
                Type::Struct { members } => {
                    let m = members.get(l as usize).ok_or_else(|| self.malformed("composite index out of range"))?;
                    let before = members.iter().take(l as usize).map(|(t, _)| self.program.ty(*t).slots).sum();
                    (m.0, before)
                }
                _ => return Err(self.malformed("composite index into a scalar")),
            };
            off += before;
            t = next;
        }
        Ok(off)
    }

    /// Folds the components of `v` with `o`; returns the slot of the result.
    fn reduce(&mut self, out: &mut Out, v: Value, o: IntBin) -> Result<Slot, ExecError> {
        let n = self.slots_of(v);
        let mut acc = v.slot;
        for i in 1..n {
            let t = self.alloc(1)?;
            self.emit(out, Op::IntBin { op: o, bits: 1, dst: t, a: acc, b: v.slot + i });
            acc = t;
        }
        Ok(acc)
    }

    /// `Σ a_i × b_i` in order over fresh slots; returns the result slot.
    fn dot(&mut self, out: &mut Out, bits: u32, pairs: Vec<(Slot, Slot)>) -> Result<Slot, ExecError> {
        let mut acc: Option<Slot> = None;
        for (a, b) in pairs {
            let p = self.alloc(1)?;
            self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: p, a, b });
            acc = Some(match acc {
                None => p,
                Some(s) => {
                    let t = self.alloc(1)?;
                    self.emit(out, Op::FloatBin { op: FloatBin::Add, bits, dst: t, a: s, b: p });
                    t
                }
            });
        }
        match acc {
            Some(a) => Ok(a),
            None => self.constant(0),
        }
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
                        self.emit(out, Op::Copy { dst: d.slot + r * cols + c, src: a.slot + c * rows + r });
                    }
                }
            }
            SpvOp::MatrixTimesVector => {
                let v = self.operand(inst, 1)?;
                let (cols, rows) = self.matrix_shape(a.ty)?;
                for r in 0..rows {
                    let s = self.dot(out, bits, (0..cols).map(|c| (a.slot + c * rows + r, v.slot + c)).collect())?;
                    self.emit(out, Op::Copy { dst: d.slot + r, src: s });
                }
            }
            SpvOp::VectorTimesMatrix => {
                let m = self.operand(inst, 1)?;
                let (cols, rows) = self.matrix_shape(m.ty)?;
                for c in 0..cols {
                    let s = self.dot(out, bits, (0..rows).map(|r| (a.slot + r, m.slot + c * rows + r)).collect())?;
                    self.emit(out, Op::Copy { dst: d.slot + c, src: s });
                }
            }
            SpvOp::MatrixTimesMatrix => {
                let b = self.operand(inst, 1)?;
                let (acols, arows) = self.matrix_shape(a.ty)?;
                let (bcols, _) = self.matrix_shape(b.ty)?;
                for c in 0..bcols {
                    for r in 0..arows {
                        let pairs = (0..acols).map(|k| (a.slot + k * arows + r, b.slot + c * acols + k)).collect();
                        let s = self.dot(out, bits, pairs)?;
                        self.emit(out, Op::Copy { dst: d.slot + c * arows + r, src: s });
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
                        self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: d.slot + c * rows + r, a: a.slot + r, b: b.slot + c });
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
            self.each(out, nd, |i| Op::Copy { dst: d.slot + i, src: a.slot + i });
        } else if ba == 64 && na == 1 && bd == 64 {
            self.emit(out, Op::Copy { dst: d.slot, src: a.slot });
        } else {
            self.emit(out, Op::Bitcast { dst: d.slot, dst_count: nd, dst_bits: bd, src: a.slot, src_count: na, src_bits: ba });
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
        let g = G::from_u32(num).ok_or_else(|| self.unsupported(format!("GLSL.std.450 instruction {num}")))?;
        let d = self.value(inst.result_id)?;
        let n = self.slots_of(d);
        let s = self.scalar(d.ty);
        let bits = s.map_or(32, |s| s.bits);
        let arg = |this: &Self, i: usize| this.operand(inst, 2 + i);
        let fun = |g: G| -> Option<FloatUn> {
            Some(match g {
                G::Round => FloatUn::Round,
                G::RoundEven => FloatUn::RoundEven,
                G::Trunc => FloatUn::Trunc,
                G::FAbs => FloatUn::Abs,
                G::FSign => FloatUn::Sign,
                G::Floor => FloatUn::Floor,
                G::Ceil => FloatUn::Ceil,
                G::Fract => FloatUn::Fract,
                G::Radians => FloatUn::Radians,
                G::Degrees => FloatUn::Degrees,
                G::Sin => FloatUn::Sin,
                G::Cos => FloatUn::Cos,
                G::Tan => FloatUn::Tan,
                G::Asin => FloatUn::Asin,
                G::Acos => FloatUn::Acos,
                G::Atan => FloatUn::Atan,
                G::Sinh => FloatUn::Sinh,
                G::Cosh => FloatUn::Cosh,
                G::Tanh => FloatUn::Tanh,
                G::Asinh => FloatUn::Asinh,
                G::Acosh => FloatUn::Acosh,
                G::Atanh => FloatUn::Atanh,
                G::Exp => FloatUn::Exp,
                G::Log => FloatUn::Log,
                G::Exp2 => FloatUn::Exp2,
                G::Log2 => FloatUn::Log2,
                G::Sqrt => FloatUn::Sqrt,
                G::InverseSqrt => FloatUn::InverseSqrt,
                _ => return None,
            })
        };
        let fbin = |g: G| -> Option<FloatBin> {
            Some(match g {
                G::Atan2 => FloatBin::Atan2,
                G::Pow => FloatBin::Pow,
                G::FMin => FloatBin::Min,
                G::FMax => FloatBin::Max,
                G::NMin => FloatBin::NMin,
                G::NMax => FloatBin::NMax,
                G::Step => FloatBin::Step,
                _ => return None,
            })
        };
        let iun = |g: G| -> Option<IntUn> {
            Some(match g {
                G::SAbs => IntUn::SAbs,
                G::SSign => IntUn::SSign,
                G::FindILsb => IntUn::FindILsb,
                G::FindSMsb => IntUn::FindSMsb,
                G::FindUMsb => IntUn::FindUMsb,
                _ => return None,
            })
        };
        let ibin = |g: G| -> Option<IntBin> {
            Some(match g {
                G::UMin => IntBin::UMin,
                G::UMax => IntBin::UMax,
                G::SMin => IntBin::SMin,
                G::SMax => IntBin::SMax,
                _ => return None,
            })
        };
        let fter = |g: G| -> Option<FloatTern> {
            Some(match g {
                G::Fma => FloatTern::Fma,
                G::FClamp => FloatTern::Clamp,
                G::NClamp => FloatTern::NClamp,
                G::FMix => FloatTern::Mix,
                G::SmoothStep => FloatTern::SmoothStep,
                _ => return None,
            })
        };
        if let Some(o) = fun(g) {
            let a = arg(self, 0)?;
            self.each(out, n, |i| Op::FloatUn { op: o, bits, dst: d.slot + i, a: a.slot + i });
        } else if let Some(o) = fbin(g) {
            let (a, b) = (arg(self, 0)?, arg(self, 1)?);
            let (sa, sb) = (self.slots_of(a) > 1, self.slots_of(b) > 1);
            self.each(out, n, |i| Op::FloatBin { op: o, bits, dst: d.slot + i, a: if sa { a.slot + i } else { a.slot }, b: if sb { b.slot + i } else { b.slot } });
        } else if let Some(o) = iun(g) {
            let a = arg(self, 0)?;
            let abits = self.scalar_of(a)?.bits;
            self.each(out, n, |i| Op::IntUn { op: o, bits: abits, dst: d.slot + i, a: a.slot + i });
        } else if let Some(o) = ibin(g) {
            let (a, b) = (arg(self, 0)?, arg(self, 1)?);
            self.each(out, n, |i| Op::IntBin { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i });
        } else if let Some(o) = fter(g) {
            let (a, b, c) = (arg(self, 0)?, arg(self, 1)?, arg(self, 2)?);
            let (sa, sb, sc) = (self.slots_of(a) > 1, self.slots_of(b) > 1, self.slots_of(c) > 1);
            self.each(out, n, |i| Op::FloatTern {
                op: o,
                bits,
                dst: d.slot + i,
                a: if sa { a.slot + i } else { a.slot },
                b: if sb { b.slot + i } else { b.slot },
                c: if sc { c.slot + i } else { c.slot },
            });
        } else {
            self.ext_other(g, inst, d, bits, out)?;
        }
        Ok(())
    }

    /// GLSL.std.450 instructions that are not one op per component.
    fn ext_other(&mut self, g: G, inst: &Instruction, d: Value, bits: u32, out: &mut Out) -> Result<(), ExecError> {
        let arg = |this: &Self, i: usize| this.operand(inst, 2 + i);
        let n = self.slots_of(d);
        match g {
            G::UClamp | G::SClamp => {
                let (a, b, c) = (arg(self, 0)?, arg(self, 1)?, arg(self, 2)?);
                let o = if g == G::UClamp { IntTern::UClamp } else { IntTern::SClamp };
                self.each(out, n, |i| Op::IntTern { op: o, bits, dst: d.slot + i, a: a.slot + i, b: b.slot + i, c: c.slot + i });
            }
            G::Ldexp => {
                let (a, e) = (arg(self, 0)?, arg(self, 1)?);
                let exp_bits = self.scalar_of(e)?.bits;
                let se = self.slots_of(e) > 1;
                self.each(out, n, |i| Op::Ldexp { bits, dst: d.slot + i, a: a.slot + i, exp: if se { e.slot + i } else { e.slot }, exp_bits });
            }
            G::Modf | G::Frexp => {
                let (a, p) = (arg(self, 0)?, arg(self, 1)?);
                let pty = self.pointee_of_value(inst.id_operand(3))?;
                let tmp = self.alloc(n)?;
                let exp_bits = self.scalar(pty).map_or(32, |s| s.bits);
                if g == G::Modf {
                    self.each(out, n, |i| Op::Modf { bits, dst: d.slot + i, whole: tmp + i, a: a.slot + i });
                } else {
                    self.each(out, n, |i| Op::Frexp { bits, dst: d.slot + i, exp: tmp + i, exp_bits, a: a.slot + i });
                }
                self.emit(out, Op::Store { ptr: p.slot, src: tmp, ty: pty });
            }
            G::ModfStruct | G::FrexpStruct => {
                let a = arg(self, 0)?;
                let m = self.slots_of(a);
                let exp_bits = match &self.program.ty(d.ty).ty {
                    Type::Struct { members } => members.get(1).and_then(|(t, _)| self.scalar(*t)).map_or(32, |s| s.bits),
                    _ => 32,
                };
                let fbits = self.scalar_of(a)?.bits;
                if g == G::ModfStruct {
                    self.each(out, m, |i| Op::Modf { bits: fbits, dst: d.slot + i, whole: d.slot + m + i, a: a.slot + i });
                } else {
                    self.each(out, m, |i| Op::Frexp { bits: fbits, dst: d.slot + i, exp: d.slot + m + i, exp_bits, a: a.slot + i });
                }
            }
            G::PackSnorm4x8 | G::PackUnorm4x8 | G::PackSnorm2x16 | G::PackUnorm2x16 | G::PackHalf2x16 => {
                let a = arg(self, 0)?;
                self.emit(out, Op::Pack { op: pack_op(g), dst: d.slot, src: a.slot });
            }
            G::UnpackSnorm4x8 | G::UnpackUnorm4x8 | G::UnpackSnorm2x16 | G::UnpackUnorm2x16 | G::UnpackHalf2x16 => {
                let a = arg(self, 0)?;
                self.emit(out, Op::Unpack { op: pack_op(g), dst: d.slot, src: a.slot });
            }
            G::PackDouble2x32 | G::UnpackDouble2x32 => {
                let a = arg(self, 0)?;
                let (na, ba) = (self.slots_of(a), self.scalar_of(a)?.bits);
                let bd = self.scalar_of(d)?.bits;
                self.emit(out, Op::Bitcast { dst: d.slot, dst_count: n, dst_bits: bd, src: a.slot, src_count: na, src_bits: ba });
            }
            G::Length => {
                let a = arg(self, 0)?;
                let m = self.slots_of(a);
                let s = self.dot(out, bits, (0..m).map(|i| (a.slot + i, a.slot + i)).collect())?;
                self.emit(out, Op::FloatUn { op: FloatUn::Sqrt, bits, dst: d.slot, a: s });
            }
            G::Distance => {
                let (a, b) = (arg(self, 0)?, arg(self, 1)?);
                let m = self.slots_of(a);
                let t = self.alloc(m)?;
                self.each(out, m, |i| Op::FloatBin { op: FloatBin::Sub, bits, dst: t + i, a: a.slot + i, b: b.slot + i });
                let s = self.dot(out, bits, (0..m).map(|i| (t + i, t + i)).collect())?;
                self.emit(out, Op::FloatUn { op: FloatUn::Sqrt, bits, dst: d.slot, a: s });
            }
            G::Normalize => {
                let a = arg(self, 0)?;
                let s = self.dot(out, bits, (0..n).map(|i| (a.slot + i, a.slot + i)).collect())?;
                let l = self.alloc(1)?;
                self.emit(out, Op::FloatUn { op: FloatUn::Sqrt, bits, dst: l, a: s });
                self.each(out, n, |i| Op::FloatBin { op: FloatBin::Div, bits, dst: d.slot + i, a: a.slot + i, b: l });
            }
            G::Cross => {
                let (a, b) = (arg(self, 0)?, arg(self, 1)?);
                let t = self.alloc(6)?;
                for i in 0..3u32 {
                    let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                    self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: t + 2 * i, a: a.slot + j, b: b.slot + k });
                    self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: t + 2 * i + 1, a: b.slot + j, b: a.slot + k });
                    self.emit(out, Op::FloatBin { op: FloatBin::Sub, bits, dst: d.slot + i, a: t + 2 * i, b: t + 2 * i + 1 });
                }
            }
            G::Reflect => {
                // I - 2 * dot(N, I) * N
                let (i_, n_) = (arg(self, 0)?, arg(self, 1)?);
                let dt = self.dot(out, bits, (0..n).map(|k| (n_.slot + k, i_.slot + k)).collect())?;
                let two = self.constant(crate::run::alu::float_const(2.0, bits))?;
                let t = self.alloc(1 + 2 * n)?;
                self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: t, a: dt, b: two });
                for k in 0..n {
                    self.emit(out, Op::FloatBin { op: FloatBin::Mul, bits, dst: t + 1 + k, a: t, b: n_.slot + k });
                    self.emit(out, Op::FloatBin { op: FloatBin::Sub, bits, dst: d.slot + k, a: i_.slot + k, b: t + 1 + k });
                }
            }
            G::FaceForward => {
                // dot(Nref, I) < 0 ? N : -N
                let (n_, i_, r_) = (arg(self, 0)?, arg(self, 1)?, arg(self, 2)?);
                let dt = self.dot(out, bits, (0..n).map(|k| (r_.slot + k, i_.slot + k)).collect())?;
                let zero = self.constant(0)?;
                let c = self.alloc(1 + n)?;
                self.emit(out, Op::FloatCmp { op: FloatCmp::OrdLt, bits, dst: c, a: dt, b: zero });
                for k in 0..n {
                    self.emit(out, Op::FloatUn { op: FloatUn::Negate, bits, dst: c + 1 + k, a: n_.slot + k });
                    self.emit(out, Op::Select { dst: d.slot + k, cond: c, a: n_.slot + k, b: c + 1 + k });
                }
            }
            _ => return Err(self.unsupported(format!("GLSL.std.450 {g:?}"))),
        }
        Ok(())
    }
}

fn pack_op(g: G) -> PackOp {
    match g {
        G::PackSnorm4x8 | G::UnpackSnorm4x8 => PackOp::Snorm4x8,
        G::PackUnorm4x8 | G::UnpackUnorm4x8 => PackOp::Unorm4x8,
        G::PackSnorm2x16 | G::UnpackSnorm2x16 => PackOp::Snorm2x16,
        G::PackUnorm2x16 | G::UnpackUnorm2x16 => PackOp::Unorm2x16,
        _ => PackOp::Half2x16,
    }
}
