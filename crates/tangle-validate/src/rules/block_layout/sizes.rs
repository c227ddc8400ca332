//! The layout arithmetic (SPIRV-Tools `getBaseAlignment`, `getScalarAlignment`, `getSize`):
//! base (std430), extended (std140) and scalar alignments and the sizes of types, honouring
//! RowMajor/ColMajor and MatrixStride inherited from the member that holds a matrix.

use super::*;

impl Layout<'_> {
    /// SPIRV-Tools `getBaseAlignment`: the base alignment under std430 rules, or std140's
    /// extended alignment when `round_up`.
    pub(super) fn base_alignment(
        &mut self,
        ty: Id,
        round_up: bool,
        inherited: Constraint,
        depth: u32,
    ) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let f = self.cx.facts;
        let vector = |component: u64, count: u32| {
            component.saturating_mul(if count == 3 || count > 4 {
                4
            } else {
                u64::from(count)
            })
        };
        let a = match f.ty(ty)? {
            Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => scalar_size(f, ty)?,
            Type::Vector { component, count } => vector(
                self.base_alignment(*component, round_up, inherited, depth + 1)?,
                *count,
            ),
            Type::Matrix { column, count } => {
                let a = if inherited.row_major {
                    // A row-major matrix of C columns aligns like a vector of C components.
                    let Some(Type::Vector { component, .. }) = f.ty(*column) else {
                        return None;
                    };
                    let c = self.base_alignment(*component, round_up, inherited, depth + 1)?;
                    c.saturating_mul(if *count == 3 { 4 } else { u64::from(*count) })
                } else {
                    self.base_alignment(*column, round_up, inherited, depth + 1)?
                };
                if round_up {
                    align_up(a, 16)
                } else {
                    a
                }
            }
            Type::Array { element, .. } | Type::RuntimeArray { element } => {
                let a = self.base_alignment(*element, round_up, inherited, depth + 1)?;
                if round_up {
                    align_up(a, 16)
                } else {
                    a
                }
            }
            Type::Struct { members } => {
                if let Some(known) = self.alignments.get(&(ty, round_up)) {
                    return *known;
                }
                let mut a = Some(1u64);
                for (i, m) in members.iter().enumerate() {
                    let c = member_constraint(f, ty, i);
                    a = match (a, self.base_alignment(*m, round_up, c, depth + 1)) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                let a = a.map(|a| if round_up { align_up(a, 16) } else { a });
                self.alignments.insert((ty, round_up), a);
                return a;
            }
            _ => return None,
        };
        Some(a)
    }

    /// SPIRV-Tools `getScalarAlignment`: the alignment under scalar block layout.
    pub(super) fn scalar_alignment(&mut self, ty: Id, depth: u32) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let f = self.cx.facts;
        match f.ty(ty)? {
            Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => scalar_size(f, ty),
            Type::Vector {
                component: inner, ..
            }
            | Type::Matrix { column: inner, .. }
            | Type::Array { element: inner, .. }
            | Type::RuntimeArray { element: inner } => self.scalar_alignment(*inner, depth + 1),
            Type::Struct { members } => {
                if let Some(known) = self.scalar_alignments.get(&ty) {
                    return *known;
                }
                let mut a = Some(1u64);
                for m in members {
                    a = match (a, self.scalar_alignment(*m, depth + 1)) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                self.scalar_alignments.insert(ty, a);
                a
            }
            _ => None,
        }
    }

    /// SPIRV-Tools `getSize`: the bytes a member covers, without padding at the end of a struct
    /// or array (arrays of a specialization-constant length and runtime arrays count 0).
    pub(super) fn size(&mut self, ty: Id, inherited: Constraint, depth: u32) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let f = self.cx.facts;
        match f.ty(ty)? {
            Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => scalar_size(f, ty),
            Type::Vector { component, count } => self
                .size(*component, inherited, depth + 1)
                .map(|c| c.saturating_mul(u64::from(*count))),
            Type::Array { element, length } => {
                let Some(n) = f.eval_int(*length) else {
                    // A specialization-constant length.
                    return Some(0);
                };
                let element_size = self.size(*element, inherited, depth + 1)?;
                let stride = decoration_values(f, ty, D::ArrayStride)
                    .last()
                    .copied()
                    .unwrap_or(0);
                Some(
                    n.saturating_sub(1)
                        .saturating_mul(stride)
                        .saturating_add(element_size),
                )
            }
            Type::RuntimeArray { .. } => Some(0),
            Type::Matrix { column, count } => {
                if inherited.row_major {
                    let Some(Type::Vector {
                        component,
                        count: rows,
                    }) = f.ty(*column)
                    else {
                        return None;
                    };
                    let element = self.size(*component, inherited, depth + 1)?;
                    Some(
                        u64::from(rows.saturating_sub(1))
                            .saturating_mul(inherited.matrix_stride)
                            .saturating_add(u64::from(*count).saturating_mul(element)),
                    )
                } else {
                    Some(u64::from(*count).saturating_mul(inherited.matrix_stride))
                }
            }
            Type::Struct { members } => {
                let Some((last, last_ty)) = members.iter().enumerate().next_back() else {
                    return Some(0);
                };
                let offset = member_decoration(f, ty, last, D::Offset)?;
                // The reference looks the last member's constraint up under (member type,
                // index) rather than (struct, index): a matrix as the last member of a nested
                // struct counts with the default (column-major, stride 0) constraint.
                let constraint = member_constraint(f, *last_ty, last);
                Some(offset.saturating_add(self.size(*last_ty, constraint, depth + 1)?))
            }
            _ => None,
        }
    }
}
