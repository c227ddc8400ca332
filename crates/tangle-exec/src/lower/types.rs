//! Type lowering: SPIR-V type ids to [`Type`]s with register slot counts and memory layouts.
//!
//! Explicit layouts come from `Offset`, `ArrayStride`, `MatrixStride` and `RowMajor`; types
//! without them get tangle's internal layout (members in order, each aligned to its largest
//! scalar). A matrix inside a struct member is lowered once per (stride, majorness), so the
//! column of a row-major matrix is a vector whose components are `MatrixStride` bytes apart.

use super::{Lowerer, TypeIdx};
use crate::error::ExecError;
use crate::program::{Type, TypeInfo};
use spirv::Decoration as D;
use spirv::Op as SpvOp;

impl<'m> Lowerer<'m> {
    /// Lowers a type id (no matrix layout override).
    pub fn lower_type(&mut self, id: Option<u32>) -> Result<TypeIdx, ExecError> {
        let id = id.ok_or_else(|| self.malformed("missing type"))?;
        self.lower_type_with(id, None)
    }

    /// Pushes a type and returns its index.
    pub fn push_type(&mut self, ty: Type) -> TypeIdx {
        let (slots, size) = self.measure(&ty);
        self.program.types.push(TypeInfo { ty, slots, size });
        (self.program.types.len() - 1) as TypeIdx
    }

    /// Slot count and memory size of a type whose parts are lowered.
    fn measure(&self, ty: &Type) -> (u32, u64) {
        let p = &self.program;
        match ty {
            Type::Void | Type::Opaque => (0, 0),
            Type::Bool => (1, 4),
            Type::Int { bits, .. } | Type::Float { bits, .. } => (1, u64::from(*bits / 8).max(1)),
            Type::Pointer { .. } => (1, 8),
            Type::Vector {
                elem,
                count,
                stride,
            } => {
                let e = p.ty(*elem);
                (
                    count.saturating_mul(e.slots),
                    (u64::from(count.saturating_sub(1)) * u64::from(*stride))
                        .saturating_add(e.size),
                )
            }
            Type::Matrix {
                column,
                count,
                stride,
            }
            | Type::Array {
                elem: column,
                count,
                stride,
            } => {
                let c = p.ty(*column);
                let size = if *count == 0 {
                    0
                } else {
                    (u64::from(count - 1) * u64::from(*stride)).saturating_add(c.size)
                };
                let size = size.max(u64::from(*count) * u64::from(*stride));
                (count.saturating_mul(c.slots), size)
            }
            Type::RuntimeArray { .. } => (0, 0),
            Type::CoopMatrix { elem, length, .. } => {
                let e = p.ty(*elem);
                (*length, u64::from(*length).saturating_mul(e.size))
            }
            Type::Struct { members } => {
                let slots = members
                    .iter()
                    .fold(0u32, |a, (t, _)| a.saturating_add(p.ty(*t).slots));
                let end = members
                    .iter()
                    .map(|(t, o)| u64::from(*o).saturating_add(p.ty(*t).size))
                    .max()
                    .unwrap_or(0);
                (
                    slots,
                    super::memory::align_up(end, self.alignment_of_members(members)),
                )
            }
        }
    }

    /// The internal-layout alignment of a type: its largest scalar.
    pub fn alignment(&self, t: TypeIdx) -> u64 {
        match &self.program.ty(t).ty {
            Type::Bool => 4,
            Type::Int { bits, .. } | Type::Float { bits, .. } => u64::from(*bits / 8).max(1),
            Type::Pointer { .. } => 8,
            Type::Vector { elem, .. } | Type::CoopMatrix { elem, .. } => self.alignment(*elem),
            Type::Matrix { column, .. } => self.alignment(*column),
            Type::Array { elem, .. } | Type::RuntimeArray { elem, .. } => self.alignment(*elem),
            Type::Struct { members } => self.alignment_of_members(members),
            Type::Void | Type::Opaque => 1,
        }
    }

    fn alignment_of_members(&self, members: &[(TypeIdx, u32)]) -> u64 {
        members
            .iter()
            .map(|(t, _)| self.alignment(*t))
            .max()
            .unwrap_or(1)
    }

    /// Lowers a type id; `matrix` overrides the layout of matrices (stride, row-major) for types
    /// reached through a struct member.
    fn lower_type_with(
        &mut self,
        id: u32,
        matrix: Option<(u32, bool)>,
    ) -> Result<TypeIdx, ExecError> {
        if let Some(&t) = self.type_memo.get(&(id, matrix)) {
            return Ok(t);
        }
        let inst = *self
            .type_insts
            .get(&id)
            .ok_or_else(|| self.malformed(format!("%{id} is not a type")))?;
        let lit = |i: usize| inst.literal_operand(i).unwrap_or(0) as u32;
        let ty = match inst.op() {
            Some(SpvOp::TypeVoid) => Type::Void,
            Some(SpvOp::TypeBool) => Type::Bool,
            Some(SpvOp::TypeInt) => {
                let bits = lit(0);
                if ![8, 16, 32, 64].contains(&bits) {
                    return Err(self.unsupported(format!("{bits}-bit integers")));
                }
                Type::Int {
                    bits,
                    signed: lit(1) != 0,
                }
            }
            Some(SpvOp::TypeFloat) => {
                let bits = lit(0);
                // FP Encoding 0 is BFloat16KHR (SPV_KHR_bfloat16): "equivalent to the IEEE754
                // binary32 type with the 16 least significant bits of the significand removed".
                let bf16 = match (bits, inst.literal_operand(1)) {
                    (16 | 32 | 64, None) => false,
                    (16, Some(0)) => true,
                    (_, encoding) => {
                        return Err(self.unsupported(format!(
                            "{bits}-bit float with encoding operand {encoding:?}"
                        )))
                    }
                };
                Type::Float { bits, bf16 }
            }
            Some(SpvOp::TypeVector) => {
                let elem = self.lower_type(inst.id_operand(0))?;
                let stride = match matrix {
                    Some((stride, true)) => stride,
                    _ => self.program.ty(elem).size as u32,
                };
                Type::Vector {
                    elem,
                    count: lit(1),
                    stride,
                }
            }
            Some(SpvOp::TypeMatrix) => {
                let col_id = inst
                    .id_operand(0)
                    .ok_or_else(|| self.malformed("matrix without column type"))?;
                let count = lit(1);
                match matrix {
                    Some((stride, true)) => {
                        let column = self.lower_type_with(col_id, Some((stride, true)))?;
                        let elem_size = match &self.program.ty(column).ty {
                            Type::Vector { elem, .. } => self.program.ty(*elem).size as u32,
                            _ => 0,
                        };
                        Type::Matrix {
                            column,
                            count,
                            stride: elem_size,
                        }
                    }
                    Some((stride, false)) => {
                        let column = self.lower_type_with(col_id, None)?;
                        Type::Matrix {
                            column,
                            count,
                            stride,
                        }
                    }
                    None => {
                        let column = self.lower_type_with(col_id, None)?;
                        Type::Matrix {
                            column,
                            count,
                            stride: self.program.ty(column).size as u32,
                        }
                    }
                }
            }
            Some(SpvOp::TypeArray) => {
                let elem_id = inst
                    .id_operand(0)
                    .ok_or_else(|| self.malformed("array without element type"))?;
                let elem = self.lower_type_with(elem_id, matrix)?;
                let len = self.operand(inst, 1)?;
                let count = self
                    .const_value(len.slot)
                    .ok_or_else(|| self.malformed("array length is not a constant"))?;
                let count = u32::try_from(count)
                    .map_err(|_| ExecError::Limit(format!("array of {count} elements")))?;
                Type::Array {
                    elem,
                    count,
                    stride: self.array_stride(id, elem),
                }
            }
            Some(SpvOp::TypeRuntimeArray) => {
                let elem_id = inst
                    .id_operand(0)
                    .ok_or_else(|| self.malformed("array without element type"))?;
                let elem = self.lower_type_with(elem_id, matrix)?;
                Type::RuntimeArray {
                    elem,
                    stride: self.array_stride(id, elem),
                }
            }
            Some(SpvOp::TypeStruct) => {
                let mut members = Vec::new();
                let mut offset = 0u64;
                for (i, m) in inst.operands.iter().enumerate() {
                    let mid = m
                        .id()
                        .ok_or_else(|| self.malformed("struct member is not an id"))?;
                    let i = i as u32;
                    let stride = self
                        .member_decoration(id, i, D::MatrixStride)
                        .and_then(|p| p.first().copied());
                    let row_major = self.member_decoration(id, i, D::RowMajor).is_some();
                    let layout = stride.map(|s| (s as u32, row_major));
                    let t = self.lower_type_with(mid, layout)?;
                    let off = match self
                        .member_decoration(id, i, D::Offset)
                        .and_then(|p| p.first().copied())
                    {
                        Some(o) => o,
                        None => super::memory::align_up(offset, self.alignment(t)),
                    };
                    offset = off.saturating_add(self.program.ty(t).size);
                    members.push((t, off as u32));
                }
                Type::Struct { members }
            }
            Some(SpvOp::TypePointer) => {
                // Reserve the index first: a pointee may point back here (PhysicalStorageBuffer).
                let idx = self.push_type(Type::Pointer {
                    class: lit(0),
                    pointee: 0,
                });
                self.type_memo.insert((id, matrix), idx);
                let pointee = self.lower_type(inst.id_operand(1))?;
                if let Some(t) = self.program.types.get_mut(idx as usize) {
                    t.ty = Type::Pointer {
                        class: lit(0),
                        pointee,
                    };
                }
                return Ok(idx);
            }
            Some(SpvOp::TypeCooperativeMatrixKHR) => self.coopmat_type(inst)?,
            Some(SpvOp::TypeImage) | Some(SpvOp::TypeSampledImage) | Some(SpvOp::TypeSampler) => {
                // An image value is a handle: one slot holding the pointer to its texels
                // ([`crate::run::image`]); a sampler's is its index, which a sampled image
                // keeps in the offset bits of its image's pointer.
                let opaque = self.push_type(Type::Opaque);
                let idx = self.push_type(Type::Pointer {
                    class: spirv::StorageClass::UniformConstant as u32,
                    pointee: opaque,
                });
                self.handle_types.insert(idx);
                self.type_memo.insert((id, matrix), idx);
                return Ok(idx);
            }
            Some(SpvOp::TypeForwardPointer) => {
                return Err(self.malformed("forward pointer used as a type"))
            }
            _ => Type::Opaque,
        };
        let idx = self.push_type(ty);
        self.type_memo.insert((id, matrix), idx);
        Ok(idx)
    }

    /// An array type's stride: `ArrayStride`, or the element size rounded to its alignment.
    fn array_stride(&self, id: u32, elem: TypeIdx) -> u32 {
        match self.decoration(id, D::ArrayStride).and_then(|p| p.first()) {
            Some(&s) => s as u32,
            None => {
                super::memory::align_up(self.program.ty(elem).size, self.alignment(elem)) as u32
            }
        }
    }

    /// The pointee of a pointer type.
    pub fn pointee_of(&self, t: TypeIdx) -> Result<TypeIdx, ExecError> {
        match self.program.ty(t).ty {
            Type::Pointer { pointee, .. } => Ok(pointee),
            _ => Err(self.malformed("expected a pointer type")),
        }
    }

    /// The scalar kind of a type (for vectors: the component): `(bits, signed, float, bool)`.
    pub fn scalar(&self, t: TypeIdx) -> Option<Scalar> {
        match &self.program.ty(t).ty {
            Type::Bool => Some(Scalar {
                bits: 1,
                signed: false,
                float: false,
                bf16: false,
            }),
            Type::Int { bits, signed } => Some(Scalar {
                bits: *bits,
                signed: *signed,
                float: false,
                bf16: false,
            }),
            Type::Float { bits, bf16 } => Some(Scalar {
                bits: *bits,
                signed: true,
                float: true,
                bf16: *bf16,
            }),
            Type::Pointer { .. } => Some(Scalar {
                bits: 64,
                signed: false,
                float: false,
                bf16: false,
            }),
            Type::Vector { elem, .. } | Type::CoopMatrix { elem, .. } => self.scalar(*elem),
            Type::Matrix { column, .. } => self.scalar(*column),
            _ => None,
        }
    }
}

/// The scalar component kind of a numeric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scalar {
    /// Bit width (1 for booleans).
    pub bits: u32,
    /// Signed integer (or float).
    pub signed: bool,
    /// Float.
    pub float: bool,
    /// bfloat16 (a float of 16 bits with the BFloat16KHR encoding).
    pub bf16: bool,
}

impl Scalar {
    /// The format code float operations carry: the width for the IEEE formats,
    /// [`crate::semantics::float::BFLOAT16`] for bfloat16.
    pub fn float_format(self) -> u32 {
        if self.bf16 {
            crate::semantics::float::BFLOAT16
        } else {
            self.bits
        }
    }
}
