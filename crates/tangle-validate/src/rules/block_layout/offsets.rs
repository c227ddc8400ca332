//! Member placement (SPIRV-Tools `checkLayout`): each member's Offset is aligned for its type
//! under the rules in force, members do not overlap or sit in padding, vectors do not straddle,
//! and matrix and array strides are aligned and cover their elements.

use super::*;

impl Layout<'_> {
    /// SPIRV-Tools `checkLayout`: the members of `st` placed at `incoming` bytes into the block
    /// (a type that is not a struct is laid out as a struct's only member at offset 0).
    pub(super) fn struct_layout(&mut self, st: Id, rules: Rules, incoming: u64, depth: u32) {
        if depth > MAX_DEPTH
            || !self
                .checked
                .insert((st, incoming % OFFSET_PERIOD, rules.key()))
        {
            return;
        }
        let f = self.cx.facts;
        // (member index, member type, absolute offset)
        let mut members: Vec<(usize, Id, Option<u64>)> = match f.ty(st) {
            Some(Type::Struct { members }) => members
                .iter()
                .enumerate()
                .map(|(i, ty)| {
                    let offset =
                        member_decoration(f, st, i, D::Offset).map(|o| incoming.saturating_add(o));
                    (i, *ty, offset)
                })
                .collect(),
            Some(_) => vec![(0, st, Some(0))],
            None => return,
        };
        // In offset order; members without an Offset come last.
        members.sort_by_key(|(_, _, offset)| offset.unwrap_or(u64::MAX));
        let count = members.len();
        let mut next_valid = 0u64;
        for (position, (member, ty, offset)) in members.into_iter().enumerate() {
            let constraint = member_constraint(f, st, member);
            let alignment = if rules.scalar {
                self.scalar_alignment(ty, 0)
            } else {
                self.base_alignment(ty, rules.block_rules, constraint, 0)
            };
            let (Some(alignment), Some(size)) = (alignment, self.size(ty, constraint, 0)) else {
                continue;
            };
            let Some(offset) = offset else {
                self.report(st, BlockLayoutError::MissingOffset { block: st, member });
                continue;
            };
            let ty_kind = f.ty(ty);
            if matches!(ty_kind, Some(Type::RuntimeArray { .. })) && position + 1 != count {
                self.report(
                    st,
                    BlockLayoutError::RuntimeArrayNotLast {
                        block: st,
                        member,
                        offset,
                    },
                );
            }
            let relaxed_vector = !rules.scalar && rules.relaxed;
            match ty_kind {
                // Relaxed layout: a vector needs only its component's alignment...
                Some(Type::Vector { component, .. }) if relaxed_vector => {
                    let scalar = self.scalar_alignment(*component, 0).unwrap_or(1);
                    if !aligned(offset, scalar) {
                        self.report(
                            st,
                            BlockLayoutError::MisalignedMember {
                                block: st,
                                member,
                                offset,
                                alignment: scalar,
                            },
                        );
                    }
                }
                _ if !aligned(offset, alignment) => self.report(
                    st,
                    BlockLayoutError::MisalignedMember {
                        block: st,
                        member,
                        offset,
                        alignment,
                    },
                ),
                _ => {}
            }
            if offset < next_valid {
                self.report(
                    st,
                    BlockLayoutError::Overlap {
                        block: st,
                        member,
                        offset,
                        end: next_valid,
                    },
                );
            }
            // ... if it does not straddle a 16-byte boundary it would not otherwise cross.
            if relaxed_vector
                && matches!(ty_kind, Some(Type::Vector { .. }))
                && improper_straddle(offset, size)
            {
                self.report(
                    st,
                    BlockLayoutError::ImproperStraddle {
                        block: st,
                        member,
                        offset,
                    },
                );
            }
            match ty_kind {
                Some(Type::Struct { .. }) => self.struct_layout(ty, rules, offset, depth + 1),
                Some(Type::Matrix { .. }) => {
                    self.matrix_stride(st, member, constraint, alignment);
                }
                _ => {}
            }
            self.arrays(st, member, ty, rules, constraint, offset, alignment, depth);
            next_valid = offset.saturating_add(size);
            if !rules.scalar && matches!(ty_kind, Some(Type::Array { .. } | Type::Struct { .. })) {
                // Nothing may sit in the padding at the end of an array or struct.
                next_valid = align_up(next_valid, alignment);
            }
        }
    }

    /// The MatrixStride a member gives its matrices must be a multiple of `alignment`.
    pub(super) fn matrix_stride(
        &mut self,
        st: Id,
        member: usize,
        constraint: Constraint,
        alignment: u64,
    ) {
        let stride = constraint.matrix_stride;
        if !aligned(stride, alignment) {
            self.report(
                st,
                BlockLayoutError::MisalignedMatrixStride {
                    block: st,
                    member,
                    stride,
                    alignment,
                },
            );
        }
    }

    /// The arrays (and arrays of arrays) a member holds: stride alignment and size, and the
    /// structs and matrices in their elements.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn arrays(
        &mut self,
        st: Id,
        member: usize,
        ty: Id,
        rules: Rules,
        constraint: Constraint,
        offset: u64,
        alignment: u64,
        depth: u32,
    ) {
        let f = self.cx.facts;
        let mut array = ty;
        let mut array_alignment = alignment;
        let mut levels = 0;
        while let Some(kind @ (Type::Array { element, .. } | Type::RuntimeArray { element })) =
            f.ty(array)
        {
            levels += 1;
            if levels > MAX_DEPTH {
                return;
            }
            let element = *element;
            let this_array = array;
            let element_size = self.size(element, constraint, 0).unwrap_or(0);
            // Without an ArrayStride the stride counts as 0 (only nested arrays can lack one
            // here: the reference requires it on array members before laying them out).
            let mut stride = 0;
            let mut stride_ok = true;
            for value in decoration_values(f, this_array, D::ArrayStride) {
                stride = value;
                if value == 0 {
                    stride_ok = false;
                    self.report(st, BlockLayoutError::ArrayStrideZero { array: this_array });
                } else if !aligned(value, array_alignment) {
                    stride_ok = false;
                    self.report(
                        st,
                        BlockLayoutError::BadArrayStride {
                            array: this_array,
                            stride: value,
                            alignment: array_alignment,
                            size: element_size,
                        },
                    );
                }
            }
            let length = match kind {
                Type::Array { length, .. } => f.int32_if_const(*length).1.unwrap_or(0),
                _ => 0,
            };
            match f.ty(element) {
                // Each element's struct at its own offset, while offsets modulo 16 are new
                // (a specialization-constant or runtime length checks one element).
                Some(Type::Struct { .. }) => {
                    let mut seen = [false; 16];
                    for i in 0..u64::from(length.max(1)) {
                        let at = i.saturating_mul(stride).saturating_add(offset);
                        let slot = (at % 16) as usize;
                        if seen.get(slot).copied().unwrap_or(true) {
                            break;
                        }
                        self.struct_layout(element, rules, at, depth + 1);
                        if let Some(s) = seen.get_mut(slot) {
                            *s = true;
                        }
                    }
                }
                // The MatrixStride is on the member holding the array.
                Some(Type::Matrix { .. }) => self.matrix_stride(st, member, constraint, alignment),
                _ => {}
            }
            array = element;
            array_alignment = if rules.scalar {
                self.scalar_alignment(element, 0)
            } else {
                self.base_alignment(element, rules.block_rules, constraint, 0)
            }
            .unwrap_or(1);
            if stride_ok && element_size > stride {
                self.report(
                    st,
                    BlockLayoutError::BadArrayStride {
                        array: this_array,
                        stride,
                        alignment: array_alignment,
                        size: element_size,
                    },
                );
            }
        }
    }
}
