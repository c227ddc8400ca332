//! Memory instructions: loads, stores, access chains (with the layout of the path taken),
//! `OpCopyMemory`, `OpArrayLength`, pointer/integer conversions and atomics.

use super::{Lowerer, Out, Value};
use crate::error::ExecError;
use crate::program::{AtomicOp, Conv, Op, RegionKind, Step, Type, TypeIdx};
use spirv::Op as SpvOp;
use tangle_spirv::module::Instruction;

/// Rounds `v` up to a multiple of `a` (a power of two or any positive number; 0 leaves `v`).
pub fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a).saturating_mul(a)
    }
}

/// The pointer value of `offset` in a region that is known at lowering time.
pub fn pointer_value(region: RegionKind, offset: u64) -> u64 {
    use crate::run::memory as m;
    let r = match region {
        RegionKind::Invocation => m::REGION_INVOCATION,
        RegionKind::Workgroup => m::REGION_WORKGROUP,
        RegionKind::PushConstant => m::REGION_PUSH,
        RegionKind::Buffer { .. }
        | RegionKind::DescriptorArray { .. }
        | RegionKind::Image { .. }
        | RegionKind::Sampler { .. } => 0,
    };
    m::make_pointer(r, offset)
}

impl<'m> Lowerer<'m> {
    /// The pointee type of a pointer value: the layout-aware type recorded by the access chain
    /// or variable that made it, else the pointer type's pointee.
    pub fn pointee_of_value(&self, id: Option<u32>) -> Result<TypeIdx, ExecError> {
        if let Some(t) = id.and_then(|id| self.pointees.get(&id)) {
            return Ok(*t);
        }
        let v = self.value(id)?;
        self.pointee_of(v.ty)
    }

    /// Lowers a memory instruction.
    pub fn lower_memory(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        if self.promoted_access(inst, op, out)? {
            return Ok(());
        }
        if matches!(op, SpvOp::AccessChain | SpvOp::InBoundsAccessChain)
            && self.image_element(inst, out)?
        {
            return Ok(());
        }
        match op {
            SpvOp::Load => {
                let ptr = self.operand(inst, 0)?;
                let ty = self.pointee_of_value(inst.id_operand(0))?;
                let dst = self.value(inst.result_id)?;
                if self.handle_types.contains(&ty) {
                    // Loading an image variable gives its handle, which the variable's slot
                    // already holds.
                    let dim = inst
                        .id_operand(0)
                        .and_then(|p| self.image_dims.get(&p).copied());
                    if let (Some(id), Some(dim)) = (inst.result_id, dim) {
                        self.image_dims.insert(id, dim);
                    }
                    self.emit(
                        out,
                        Op::Copy {
                            dst: dst.slot,
                            src: ptr.slot,
                        },
                    );
                    return Ok(());
                }
                let region = self
                    .const_value(ptr.slot)
                    .map(|p| crate::run::memory::split_pointer(p).0);
                let uniform = matches!(
                    region,
                    Some(crate::run::memory::REGION_PUSH)
                        | Some(crate::run::memory::REGION_WORKGROUP)
                );
                if uniform {
                    self.emit(
                        out,
                        Op::LoadUniform {
                            dst: dst.slot,
                            ptr: ptr.slot,
                            ty,
                        },
                    );
                } else {
                    self.emit(
                        out,
                        Op::Load {
                            dst: dst.slot,
                            ptr: ptr.slot,
                            ty,
                        },
                    );
                }
            }
            SpvOp::Store => {
                let ptr = self.operand(inst, 0)?;
                let ty = self.pointee_of_value(inst.id_operand(0))?;
                let src = self.operand(inst, 1)?;
                self.emit(
                    out,
                    Op::Store {
                        ptr: ptr.slot,
                        src: src.slot,
                        ty,
                    },
                );
            }
            SpvOp::AccessChain
            | SpvOp::InBoundsAccessChain
            | SpvOp::PtrAccessChain
            | SpvOp::InBoundsPtrAccessChain => {
                self.access_chain(
                    inst,
                    matches!(op, SpvOp::PtrAccessChain | SpvOp::InBoundsPtrAccessChain),
                    out,
                )?;
            }
            SpvOp::CopyMemory => {
                // Through registers, so source and target layouts may differ.
                let dst = self.operand(inst, 0)?;
                let src = self.operand(inst, 1)?;
                let dty = self.pointee_of_value(inst.id_operand(0))?;
                let sty = self.pointee_of_value(inst.id_operand(1))?;
                let tmp = self.alloc(self.program.ty(sty).slots)?;
                self.emit(
                    out,
                    Op::Load {
                        dst: tmp,
                        ptr: src.slot,
                        ty: sty,
                    },
                );
                self.emit(
                    out,
                    Op::Store {
                        ptr: dst.slot,
                        src: tmp,
                        ty: dty,
                    },
                );
            }
            SpvOp::ArrayLength => {
                let ptr = self.operand(inst, 0)?;
                let sty = self.pointee_of_value(inst.id_operand(0))?;
                let member = inst.literal_operand(1).unwrap_or(0) as usize;
                let (offset, stride) = match &self.program.ty(sty).ty {
                    Type::Struct { members } => match members.get(member) {
                        Some((t, off)) => match self.program.ty(*t).ty {
                            Type::RuntimeArray { stride, .. } => {
                                (u64::from(*off), u64::from(stride))
                            }
                            _ => {
                                return Err(
                                    self.malformed("OpArrayLength member is not a runtime array")
                                )
                            }
                        },
                        None => return Err(self.malformed("OpArrayLength member out of range")),
                    },
                    _ => return Err(self.malformed("OpArrayLength of a non-struct")),
                };
                let dst = self.value(inst.result_id)?;
                self.emit(
                    out,
                    Op::ArrayLength {
                        dst: dst.slot,
                        ptr: ptr.slot,
                        offset,
                        stride,
                    },
                );
            }
            SpvOp::ConvertUToPtr => {
                let a = self.operand(inst, 0)?;
                let dst = self.value(inst.result_id)?;
                let bits = self.scalar(a.ty).map_or(64, |s| s.bits);
                self.emit(
                    out,
                    Op::Convert {
                        op: Conv::UConvert,
                        from: bits,
                        to: 64,
                        dst: dst.slot,
                        a: a.slot,
                    },
                );
            }
            SpvOp::ConvertPtrToU => {
                let a = self.operand(inst, 0)?;
                let dst = self.value(inst.result_id)?;
                let bits = self.scalar(dst.ty).map_or(64, |s| s.bits);
                self.emit(
                    out,
                    Op::Convert {
                        op: Conv::UConvert,
                        from: 64,
                        to: bits,
                        dst: dst.slot,
                        a: a.slot,
                    },
                );
            }
            _ => self.atomic(inst, op, out)?,
        }
        Ok(())
    }

    /// Loads, stores and constant access chains on register-promoted variables
    /// ([`super::promote`]); returns whether `inst` was one.
    fn promoted_access(
        &mut self,
        inst: &Instruction,
        op: SpvOp,
        out: &mut Out,
    ) -> Result<bool, ExecError> {
        let Some(&(slot, ty)) = inst.id_operand(0).and_then(|id| self.reg_ptrs.get(&id)) else {
            return Ok(false);
        };
        let n = self.program.ty(ty).slots;
        match op {
            SpvOp::Load => {
                let dst = self.value(inst.result_id)?;
                if let Some(id) = inst.result_id.filter(|id| self.alias_loads.contains(id)) {
                    self.values.insert(id, Value { slot, ty: dst.ty });
                    return Ok(true);
                }
                for i in 0..n {
                    self.emit(
                        out,
                        Op::Copy {
                            dst: dst.slot + i,
                            src: slot + i,
                        },
                    );
                }
            }
            SpvOp::Store => {
                let src = self.operand(inst, 1)?;
                // A one-slot value computed by the op just emitted and used only here: let that
                // op write the variable directly.
                // (Not for an aliased load: its slot is another variable's, and the last op may
                // be a store folded into that variable.)
                let single = inst.id_operand(1).is_some_and(|id| {
                    self.single_use.contains(&id) && !self.alias_loads.contains(&id)
                });
                if n == 1 && single {
                    if let Some(d) = out
                        .ops
                        .last_mut()
                        .and_then(Op::simple_dst_mut)
                        .filter(|d| **d == src.slot)
                    {
                        *d = slot;
                        return Ok(true);
                    }
                }
                for i in (0..n).filter(|&i| slot + i != src.slot + i) {
                    self.emit(
                        out,
                        Op::Copy {
                            dst: slot + i,
                            src: src.slot + i,
                        },
                    );
                }
            }
            SpvOp::AccessChain | SpvOp::InBoundsAccessChain => {
                let mut lits = Vec::new();
                for o in inst.operands.iter().skip(1) {
                    let v = self.value(o.id())?;
                    lits.push(
                        self.const_value(v.slot).ok_or_else(|| {
                            self.malformed("promoted variable indexed dynamically")
                        })?,
                    );
                }
                let (off, t) = self.composite_offset_and_type(ty, &lits)?;
                if let Some(id) = inst.result_id {
                    self.reg_ptrs.insert(id, (slot + off, t));
                }
            }
            _ => {
                return Err(
                    self.malformed("register-promoted variable used by a memory instruction")
                )
            }
        }
        Ok(true)
    }

    fn access_chain(
        &mut self,
        inst: &Instruction,
        ptr_chain: bool,
        out: &mut Out,
    ) -> Result<(), ExecError> {
        let base = self.operand(inst, 0)?;
        let mut ty = self.pointee_of_value(inst.id_operand(0))?;
        let dst = self.value(inst.result_id)?;
        let mut steps = Vec::new();
        let mut indices = inst.operands.iter().skip(1);
        let mut base_slot = base.slot;
        if let Some(&array) = inst
            .id_operand(0)
            .and_then(|b| self.descriptor_vars.get(&b))
        {
            // The first index picks the descriptor; the rest index into its block.
            if ptr_chain {
                return Err(self.unsupported("OpPtrAccessChain on a descriptor array"));
            }
            let Some(index) = indices.next() else {
                return Err(self.unsupported("a pointer to a whole descriptor array"));
            };
            let v = self.value(index.id())?;
            let s = self
                .scalar(v.ty)
                .ok_or_else(|| self.malformed("index is not an integer"))?;
            ty = match self.program.ty(ty).ty {
                Type::Array { elem, .. } | Type::RuntimeArray { elem, .. } => elem,
                _ => return Err(self.malformed("descriptor array of a non-array type")),
            };
            base_slot = self.alloc(1)?;
            self.emit(
                out,
                Op::Descriptor {
                    dst: base_slot,
                    array,
                    index: v.slot,
                    bits: s.bits,
                    signed: s.signed,
                },
            );
        }
        if ptr_chain {
            let element = indices.next().and_then(|o| o.id());
            // "Element is used to do an initial dereference of Base: Base is treated as the
            // address of an element in an array, and a new element address is computed from
            // Base and Element." The array's stride is the pointer type's ArrayStride.
            let ptr_ty_id = self
                .module
                .instructions
                .iter()
                .find(|i| i.result_id == inst.id_operand(0))
                .and_then(|i| i.result_type);
            let stride = ptr_ty_id
                .and_then(|t| self.decoration(t, spirv::Decoration::ArrayStride))
                .and_then(|p| p.first().copied())
                .unwrap_or(self.program.ty(ty).size);
            self.index_step(element, stride, 0, &mut steps)?;
        }
        for idx in indices {
            let id = idx.id();
            let (next, stride, count) = match self.program.ty(ty).ty.clone() {
                Type::Struct { members } => {
                    let v = self.value(id)?;
                    let m = self
                        .const_value(v.slot)
                        .ok_or_else(|| self.malformed("struct index is not a constant"))?;
                    let (t, off) = *members
                        .get(m as usize)
                        .ok_or_else(|| self.malformed("struct index out of range"))?;
                    steps.push(Step::Const(u64::from(off)));
                    ty = t;
                    continue;
                }
                Type::Array {
                    elem,
                    stride,
                    count,
                } => (elem, u64::from(stride), count),
                Type::RuntimeArray { elem, stride } => (elem, u64::from(stride), 0),
                Type::Vector {
                    elem,
                    stride,
                    count,
                } => (elem, u64::from(stride), count),
                Type::CoopMatrix { elem, .. } => (elem, self.program.ty(elem).size, 0),
                Type::Matrix {
                    column,
                    stride,
                    count,
                } => (column, u64::from(stride), count),
                _ => return Err(self.malformed("access chain indexes into a scalar")),
            };
            self.index_step(id, stride, count, &mut steps)?;
            ty = next;
        }
        // Merge adjacent constant steps.
        let mut merged: Vec<Step> = Vec::new();
        for s in steps {
            match (merged.last_mut(), s) {
                (Some(Step::Const(a)), Step::Const(b)) => *a = a.wrapping_add(b),
                _ => merged.push(s),
            }
        }
        if let Some(id) = inst.result_id {
            self.pointees.insert(id, ty);
        }
        // A constant base with constant steps is a constant pointer: fold it into the slot.
        if let Some(b) = self.const_value(base_slot) {
            let step = match merged.as_slice() {
                [] => Some(0),
                [Step::Const(o)] => Some(*o),
                _ => None,
            };
            if let Some(step) = step {
                let (region, boff) = crate::run::memory::split_pointer(b);
                let v = crate::run::memory::make_pointer(region, boff.wrapping_add(step));
                self.program.constants.push((dst.slot, v));
                self.const_values.insert(dst.slot, v);
                return Ok(());
            }
        }
        self.emit(
            out,
            Op::AccessChain {
                dst: dst.slot,
                base: base_slot,
                steps: merged.into_boxed_slice(),
            },
        );
        Ok(())
    }

    /// One array-like index step into `count` elements (0: unbounded): constant indices fold
    /// to a byte offset.
    fn index_step(
        &mut self,
        id: Option<u32>,
        stride: u64,
        count: u32,
        steps: &mut Vec<Step>,
    ) -> Result<(), ExecError> {
        let v: Value = self.value(id)?;
        let s = self
            .scalar(v.ty)
            .ok_or_else(|| self.malformed("index is not an integer"))?;
        match self.const_value(v.slot) {
            Some(c) => {
                let c = if s.signed { sign_extend(c, s.bits) } else { c };
                steps.push(Step::Const(c.wrapping_mul(stride)));
            }
            None => steps.push(Step::Dyn {
                index: v.slot,
                bits: s.bits,
                signed: s.signed,
                stride,
                count,
            }),
        }
        Ok(())
    }

    fn atomic(&mut self, inst: &Instruction, op: SpvOp, out: &mut Out) -> Result<(), ExecError> {
        let aop = match op {
            SpvOp::AtomicLoad => AtomicOp::Load,
            SpvOp::AtomicStore => AtomicOp::Store,
            SpvOp::AtomicExchange => AtomicOp::Exchange,
            SpvOp::AtomicCompareExchange => AtomicOp::CompareExchange,
            SpvOp::AtomicIIncrement => AtomicOp::IIncrement,
            SpvOp::AtomicIDecrement => AtomicOp::IDecrement,
            SpvOp::AtomicIAdd => AtomicOp::IAdd,
            SpvOp::AtomicISub => AtomicOp::ISub,
            SpvOp::AtomicSMin => AtomicOp::SMin,
            SpvOp::AtomicUMin => AtomicOp::UMin,
            SpvOp::AtomicSMax => AtomicOp::SMax,
            SpvOp::AtomicUMax => AtomicOp::UMax,
            SpvOp::AtomicAnd => AtomicOp::And,
            SpvOp::AtomicOr => AtomicOp::Or,
            SpvOp::AtomicXor => AtomicOp::Xor,
            SpvOp::AtomicFAddEXT => AtomicOp::FAdd,
            SpvOp::AtomicFMinEXT => AtomicOp::FMin,
            _ => AtomicOp::FMax,
        };
        let ptr = self.operand(inst, 0)?;
        let ty = self.pointee_of_value(inst.id_operand(0))?;
        let s = self
            .scalar(ty)
            .ok_or_else(|| self.malformed("atomic on a non-scalar"))?;
        let zero = self.constant(0)?;
        let (value, comparator) = match aop {
            AtomicOp::Load | AtomicOp::IIncrement | AtomicOp::IDecrement => (zero, zero),
            AtomicOp::CompareExchange => (self.operand(inst, 5)?.slot, self.operand(inst, 6)?.slot),
            _ => (self.operand(inst, 3)?.slot, zero),
        };
        let dst = match inst.result_id {
            Some(_) => self.value(inst.result_id)?.slot,
            None => self.alloc(1)?,
        };
        // Operands: Pointer, Memory scope, Semantics (Equal), [Unequal]; a scope or semantics
        // that is not a constant is taken as relaxed (the race check then orders less).
        let cst = |this: &Self, i: usize| {
            this.operand(inst, i)
                .ok()
                .and_then(|v| this.const_value(v.slot))
        };
        let scope = cst(self, 1).unwrap_or(u64::MAX);
        let semantics = cst(self, 2).unwrap_or(0) as u32;
        let unequal = match aop {
            AtomicOp::CompareExchange => cst(self, 3).unwrap_or(0) as u32,
            _ => semantics,
        };
        let sync = crate::check::sync::sync_of(scope, semantics, unequal);
        self.emit(
            out,
            Op::Atomic {
                op: aop,
                bits: s.bits,
                float: s.float,
                sync,
                dst,
                ptr: ptr.slot,
                value,
                comparator,
            },
        );
        Ok(())
    }
}

/// Sign-extends the low `bits` of `v` to 64 bits.
pub fn sign_extend(v: u64, bits: u32) -> u64 {
    if bits == 0 || bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (((v << s) as i64) >> s) as u64
    }
}
