//! SPV_KHR_cooperative_matrix lowering: `OpTypeCooperativeMatrixKHR` (Subgroup scope, held as
//! `OpCooperativeMatrixLengthKHR` components per invocation, see [`crate::run::coopmat`]),
//! `OpCooperativeMatrixLoadKHR`/`StoreKHR`/`MulAddKHR`/`LengthKHR`, the matrix forms of
//! `OpCompositeConstruct` (a splat) and `OpMatrixTimesScalar`, and the scope checks every
//! instruction on a matrix object gets. Everything else a matrix takes part in (copies, phis,
//! selects, calls, element-wise arithmetic, conversions, composite access, variables) is the
//! ordinary per-component lowering.

use super::{Lowerer, Out, Value};
use crate::error::ExecError;
use crate::program::{FloatBin, IntBin, Op, Type, TypeIdx};
use crate::run::coopmat::{Access, CoopmatInst, Shape, Stride};
use crate::semantics::coopmat_types::{Component, MulAddTypes};
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// The largest number of rows or columns tangle holds.
const MAX_DIMENSION: u64 = 1024;
/// The largest number of elements tangle holds in one matrix.
const MAX_ELEMENTS: u64 = 1 << 16;
/// Scope Subgroup.
const SUBGROUP: u64 = 3;

/// Cooperative Matrix Operands bits of OpCooperativeMatrixMulAddKHR.
const A_SIGNED: u64 = 0x1;
const B_SIGNED: u64 = 0x2;
const C_SIGNED: u64 = 0x4;
const RESULT_SIGNED: u64 = 0x8;
const SATURATING: u64 = 0x10;

fn coop(inst: CoopmatInst) -> Op {
    Op::Coopmat(Box::new(inst))
}

impl<'m> Lowerer<'m> {
    /// `OpTypeCooperativeMatrixKHR %component %scope %rows %cols %use`; scope, rows, columns and
    /// use may be specialization constants ("the dimensions of the cooperative types can be
    /// specialized via specialization constants"), folded by now.
    pub fn coopmat_type(&mut self, inst: &Instruction) -> Result<Type, ExecError> {
        let elem = self.lower_type(inst.id_operand(0))?;
        let lit = |i: usize| -> Result<u64, ExecError> {
            let v = self.operand(inst, i)?;
            self.const_value(v.slot)
                .ok_or_else(|| self.malformed("cooperative matrix operand is not a constant"))
        };
        let (scope, rows, cols, usage) = (lit(1)?, lit(2)?, lit(3)?, lit(4)?);
        if scope != SUBGROUP {
            // Workgroup scope needs a matrix shared by several register files; no device
            // profile tangle models lists it.
            return Err(self.unsupported(format!(
                "cooperative matrices of scope {scope} (tangle runs Subgroup scope, 3)"
            )));
        }
        if !matches!(
            self.program.ty(elem).ty,
            Type::Int { .. } | Type::Float { .. }
        ) {
            return Err(self.unsupported("cooperative matrices of this component type"));
        }
        if rows > MAX_DIMENSION || cols > MAX_DIMENSION || rows * cols > MAX_ELEMENTS {
            return Err(ExecError::Limit(format!(
                "a {rows}x{cols} cooperative matrix (tangle holds at most {MAX_ELEMENTS} elements, {MAX_DIMENSION} per side)"
            )));
        }
        let lanes = u64::from(self.subgroup_size.max(1));
        Ok(Type::CoopMatrix {
            elem,
            rows: rows as u32,
            cols: cols as u32,
            usage: usage as u32,
            length: (rows * cols).div_ceil(lanes) as u32,
        })
    }

    fn is_coopmat(&self, t: TypeIdx) -> bool {
        matches!(self.program.ty(t).ty, Type::CoopMatrix { .. })
    }

    /// The shape of a matrix type.
    fn shape(&self, t: TypeIdx) -> Result<Shape, ExecError> {
        match self.program.ty(t).ty {
            Type::CoopMatrix {
                elem,
                rows,
                cols,
                length,
                ..
            } => Ok(Shape {
                rows,
                cols,
                length,
                bytes: self.program.ty(elem).size as u32,
            }),
            _ => Err(self.malformed("expected a cooperative matrix")),
        }
    }

    /// Whether `inst` has an operand or result that is a matrix object (not a pointer to one).
    fn has_coopmat_object(&self, inst: &Instruction) -> bool {
        let of = |id: u32| self.values.get(&id).is_some_and(|v| self.is_coopmat(v.ty));
        inst.result_id.is_some_and(of) || inst.operands.iter().filter_map(|o| o.id()).any(of)
    }

    /// Lowers `inst` if it is a cooperative-matrix instruction or operates on a matrix object;
    /// returns whether it did. An instruction on a matrix object first checks that its whole
    /// subgroup runs it (3.42.6: "all the invocations in the Scope instance are active or none
    /// of them are").
    pub fn lower_coopmat(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<bool, ExecError> {
        if op == SpvOp::CooperativeMatrixLengthKHR {
            let ty = self.lower_type(inst.id_operand(0))?;
            let length = self.shape(ty)?.length;
            let (dst, src) = (
                self.value(inst.result_id)?,
                self.constant(u64::from(length))?,
            );
            self.emit(out, Op::Copy { dst: dst.slot, src });
            return Ok(true);
        }
        match op {
            SpvOp::AccessChain | SpvOp::InBoundsAccessChain => {
                self.note_element_pointer(inst)?;
                return Ok(false);
            }
            SpvOp::Load => {
                let element = inst
                    .id_operand(0)
                    .and_then(|p| self.coopmat_elements.get(&p).copied());
                if let Some((rows, cols, length, index)) = element {
                    let owned = CoopmatInst::Owned {
                        rows,
                        cols,
                        length,
                        index,
                    };
                    self.emit(out, coop(owned));
                }
            }
            _ => {}
        }
        if !self.has_coopmat_object(inst) {
            return Ok(false);
        }
        self.emit(out, coop(CoopmatInst::Active));
        match op {
            SpvOp::CooperativeMatrixLoadKHR => self.coopmat_load(inst, out)?,
            SpvOp::CooperativeMatrixStoreKHR => self.coopmat_store(inst, out)?,
            SpvOp::CooperativeMatrixMulAddKHR => self.coopmat_mul_add(inst, out)?,
            SpvOp::CompositeConstruct
                if inst
                    .result_type
                    .and_then(|t| self.type_memo.get(&(t, None)))
                    .is_some_and(|&t| self.is_coopmat(t)) =>
            {
                // "there must be only one Constituent and it is used to initialize all members.
                // The Constituent must be dynamically uniform within the Scope".
                let (d, v) = (self.value(inst.result_id)?, self.operand(inst, 0)?);
                self.uniform(out, v, "Constituent");
                for i in 0..self.shape(d.ty)?.length {
                    self.emit(
                        out,
                        Op::Copy {
                            dst: d.slot + i,
                            src: v.slot,
                        },
                    );
                }
            }
            SpvOp::SDiv | SpvOp::UDiv => {
                let (a, b, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                let Some(s) = self.has_padding(d.ty) else {
                    return Ok(false);
                };
                let bits = self.scalar(d.ty).map_or(32, |s| s.bits);
                let (signed, op) = if op == SpvOp::SDiv {
                    (true, IntBin::SDiv)
                } else {
                    (false, IntBin::UDiv)
                };
                for i in 0..s.length {
                    let (a, b, dst) = (a.slot + i, b.slot + i, d.slot + i);
                    let check = CoopmatInst::CheckDivision {
                        rows: s.rows,
                        cols: s.cols,
                        index: i,
                        bits,
                        signed,
                        a,
                        b,
                    };
                    self.emit(out, coop(check));
                    self.emit(
                        out,
                        Op::IntBin {
                            op,
                            bits,
                            dst,
                            a,
                            b,
                        },
                    );
                }
            }
            SpvOp::MatrixTimesScalar => {
                let (a, s, d) = (
                    self.operand(inst, 0)?,
                    self.operand(inst, 1)?,
                    self.value(inst.result_id)?,
                );
                self.uniform(out, s, "Scalar");
                let scalar = self
                    .scalar(d.ty)
                    .ok_or_else(|| self.malformed("matrix of no numeric type"))?;
                for i in 0..self.shape(d.ty)?.length {
                    let (dst, a, b, bits) = (d.slot + i, a.slot + i, s.slot, scalar.bits);
                    let op = if scalar.float {
                        Op::FloatBin {
                            op: FloatBin::Mul,
                            bits,
                            dst,
                            a,
                            b,
                        }
                    } else {
                        Op::IntBin {
                            op: IntBin::Mul,
                            bits,
                            dst,
                            a,
                            b,
                        }
                    };
                    self.emit(out, op);
                }
            }
            SpvOp::CompositeExtract => {
                let c = self.operand(inst, 0)?;
                if let Some(index) = inst.literal_operand(1) {
                    let index = self.constant(index)?;
                    self.owned(c.ty, index, out)?;
                }
                return Ok(false);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether a matrix of type `t` has positions that hold no element.
    fn has_padding(&self, t: TypeIdx) -> Option<Shape> {
        let s = self.shape(t).ok()?;
        (u64::from(s.rows) * u64::from(s.cols)
            < u64::from(s.length) * u64::from(self.subgroup_size))
        .then_some(s)
    }

    /// The ownership check of a read of composite index `index` (a slot) of a matrix of type
    /// `t`, where some positions hold no element.
    fn owned(&mut self, t: TypeIdx, index: u32, out: &mut Out) -> Result<(), ExecError> {
        if let Some(s) = self.has_padding(t) {
            let owned = CoopmatInst::Owned {
                rows: s.rows,
                cols: s.cols,
                length: s.length,
                index,
            };
            self.emit(out, coop(owned));
        }
        Ok(())
    }

    /// Records an access chain that selects one component of a matrix held in a variable
    /// (`m[i]` on a local matrix in GLSL), so a load through it gets the ownership check.
    fn note_element_pointer(&mut self, inst: &Instruction) -> Result<(), ExecError> {
        let (Some(id), [_, index]) = (inst.result_id, inst.operands.as_slice()) else {
            return Ok(());
        };
        let Ok(base) = self.pointee_of_value(inst.id_operand(0)) else {
            return Ok(());
        };
        if let (Some(s), Ok(index)) = (self.has_padding(base), self.value(index.id())) {
            self.coopmat_elements
                .insert(id, (s.rows, s.cols, s.length, index.slot));
        }
        Ok(())
    }

    /// A check that `v` is the same in every active invocation, unless it is a constant.
    fn uniform(&mut self, out: &mut Out, v: Value, operand: &'static str) {
        if self.const_value(v.slot).is_none() {
            self.emit(
                out,
                coop(CoopmatInst::Uniform {
                    slot: v.slot,
                    operand,
                }),
            );
        }
    }

    /// The Pointer, MemoryLayout and Stride operands of a load (`first` = 0) or store (0 with
    /// the layout at 2), with their uniformity checks. Memory operands (Aligned,
    /// MakePointerAvailable/Visible, NonPrivatePointer, Volatile, Nontemporal) change nothing:
    /// tangle's memory is coherent, and alignment is not observable in it.
    fn coopmat_access(
        &mut self,
        inst: &Instruction,
        layout_at: usize,
        shape: Shape,
        out: &mut Out,
    ) -> Result<Access, ExecError> {
        let ptr = self.operand(inst, 0)?;
        let pointee = self.pointee_of_value(inst.id_operand(0))?;
        let pointee = self.program.ty(pointee).size;
        let layout = self.operand(inst, layout_at)?;
        let column_major = match self.const_value(layout.slot) {
            Some(0) => false,
            Some(1) => true,
            other => {
                return Err(self.unsupported(format!(
                    "{} with MemoryLayout {other:?} (tangle runs RowMajorKHR and ColumnMajorKHR)",
                    inst.name()
                )))
            }
        };
        let stride = self.operand(inst, layout_at + 1).map_err(|_| {
            self.malformed("a RowMajorKHR or ColumnMajorKHR load or store needs a Stride")
        })?;
        let s = self
            .scalar(stride.ty)
            .ok_or_else(|| self.malformed("Stride is not an integer"))?;
        self.uniform(out, ptr, "Pointer");
        self.uniform(out, stride, "Stride");
        Ok(Access {
            ptr: ptr.slot,
            stride: Stride {
                slot: stride.slot,
                bits: s.bits,
                signed: s.signed,
            },
            column_major,
            pointee,
            shape,
        })
    }

    fn coopmat_load(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let dst = self.value(inst.result_id)?;
        let at = self.coopmat_access(inst, 1, self.shape(dst.ty)?, out)?;
        self.emit(out, coop(CoopmatInst::Load { dst: dst.slot, at }));
        Ok(())
    }

    fn coopmat_store(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let src = self.operand(inst, 1)?;
        let at = self.coopmat_access(inst, 2, self.shape(src.ty)?, out)?;
        self.emit(out, coop(CoopmatInst::Store { src: src.slot, at }));
        Ok(())
    }

    /// The MulAdd view of a matrix's component type with its SignedComponents flag.
    fn component(&self, t: TypeIdx, signed_flag: bool) -> Result<Component, ExecError> {
        let elem = match self.program.ty(t).ty {
            Type::CoopMatrix { elem, .. } => elem,
            _ => return Err(self.malformed("MulAdd operand is not a cooperative matrix")),
        };
        match self.program.ty(elem).ty {
            Type::Int { bits, .. } => Ok(Component::Int {
                bits,
                signed: signed_flag,
            }),
            Type::Float { bf16: true, .. } => Ok(Component::BFloat16),
            Type::Float { bits, .. } => Ok(Component::Float(bits)),
            _ => Err(self.unsupported("a MulAdd of this component type")),
        }
    }

    fn coopmat_mul_add(&mut self, inst: &Instruction, out: &mut Out) -> Result<(), ExecError> {
        let (a, b, c, d) = (
            self.operand(inst, 0)?,
            self.operand(inst, 1)?,
            self.operand(inst, 2)?,
            self.value(inst.result_id)?,
        );
        let flags = inst.literal_operand(3).unwrap_or(0);
        let types = MulAddTypes {
            a: self.component(a.ty, flags & A_SIGNED != 0)?,
            b: self.component(b.ty, flags & B_SIGNED != 0)?,
            c: self.component(c.ty, flags & C_SIGNED != 0)?,
            result: self.component(d.ty, flags & RESULT_SIGNED != 0)?,
            saturating: flags & SATURATING != 0,
        };
        let ints = [types.a, types.b, types.c, types.result]
            .iter()
            .filter(|c| matches!(c, Component::Int { .. }))
            .count();
        if ints != 0 && ints != 4 {
            return Err(self.unsupported("a MulAdd mixing integer and float matrices"));
        }
        let (sa, sb, sc) = (self.shape(a.ty)?, self.shape(b.ty)?, self.shape(c.ty)?);
        self.emit(
            out,
            coop(CoopmatInst::MulAdd {
                dst: d.slot,
                a: a.slot,
                b: b.slot,
                c: c.slot,
                types,
                m: sa.rows,
                n: sb.cols,
                k: sa.cols,
                lengths: [sa.length, sb.length, sc.length],
            }),
        );
        Ok(())
    }
}
