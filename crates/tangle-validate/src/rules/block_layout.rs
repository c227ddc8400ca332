//! Explicit layout of Vulkan blocks (Vulkan "Offset and Stride Assignment", the std430 rules for
//! StorageBuffer and PushConstant blocks and std140 for Uniform blocks, relaxed block layout as
//! core in Vulkan 1.1, and the spirv-val options `--scalar-block-layout`,
//! `--uniform-buffer-standard-layout`, `--skip-block-layout`; SPIRV-Tools `validate_decorations.cpp`
//! `checkLayout`): each member's Offset is aligned for its type, members do not overlap, and array
//! strides are aligned and at least the element size.

use super::{Ctx, Sink};
use crate::facts::{Facts, Type};
use spirv::{Decoration as D, Op, StorageClass as SC};
use tangle_spirv::{Id, Operand};

/// A block layout rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockLayoutError {
    /// "The Offset decoration of a member must be a multiple of its base alignment."
    #[error("member {member} of block %{block} at offset {offset} is not aligned to {alignment}")]
    MisalignedMember {
        block: Id,
        member: usize,
        offset: u64,
        alignment: u64,
    },
    /// Members must not overlap.
    #[error("member {member} of block %{block} at offset {offset} overlaps the member before it (which ends at {end})")]
    Overlap {
        block: Id,
        member: usize,
        offset: u64,
        end: u64,
    },
    /// "The ArrayStride must be a multiple of the element's base alignment" and cover the element.
    #[error("array %{array} has ArrayStride {stride}, which is not a multiple of {alignment} or is smaller than its element ({size} bytes)")]
    BadArrayStride {
        array: Id,
        stride: u64,
        alignment: u64,
        size: u64,
    },
}

/// Memoized per-type facts: every type is laid out and checked once, so nested types shared
/// by many members cost linear time (malformed inputs could otherwise blow up exponentially).
#[derive(Default)]
struct Memo {
    checked: crate::facts::IdSet,
    alignment: crate::facts::IdMap<Option<u64>>,
    size: crate::facts::IdMap<Option<u64>>,
}

/// Which rule set applies.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Rules {
    std140: bool,
    scalar: bool,
    relaxed: bool,
}

/// Checks every block reachable from a Vulkan resource variable once.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    if !cx.vulkan() || cx.options.skip_block_layout {
        return;
    }
    let f = cx.facts;
    let relaxed = cx.options.relax_block_layout
        || !matches!(cx.env, tangle_spirv::TargetEnv::Vulkan { api, .. } if api.minor == 0);
    // One memo per rule set (std140 and std430 lay the same type out differently).
    let mut memos: [Memo; 2] = Default::default();
    for inst in &cx.module.instructions {
        if inst.op() != Some(Op::Variable) {
            continue;
        }
        let Some(Type::Pointer { storage, pointee }) = inst.result_type.and_then(|t| f.ty(t))
        else {
            continue;
        };
        let mut block = *pointee;
        while let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) = f.ty(block) {
            block = *element;
        }
        // Uniform Block uses std140; a BufferBlock in Uniform storage is a storage buffer (std430).
        let std140 = *storage == SC::Uniform as u32
            && !f.has_decoration(block, D::BufferBlock)
            && !cx.options.uniform_buffer_standard_layout;
        let known = [
            SC::Uniform as u32,
            SC::StorageBuffer as u32,
            SC::PushConstant as u32,
            SC::PhysicalStorageBuffer as u32,
        ];
        if !known.contains(storage) {
            continue;
        }
        let rules = Rules {
            std140,
            scalar: cx.options.scalar_block_layout,
            relaxed,
        };
        let memo = &mut memos[usize::from(std140)];
        structure(cx, block, rules, sink, memo, 0);
    }
}

/// Checks one struct (and the structs and arrays inside it).
fn structure(cx: &Ctx, id: Id, rules: Rules, sink: &mut Sink, memo: &mut Memo, depth: u32) {
    // Malformed modules can make types refer to themselves (through forward pointers).
    if depth > 64 || !memo.checked.insert(id) {
        return;
    }
    let f = cx.facts;
    let Some(Type::Struct { members }) = f.ty(id) else {
        return;
    };
    let at = f.defs.get(&id).copied();
    let mut placed: Vec<(u64, u64, usize)> = Vec::new();
    for (member, ty) in members.iter().enumerate() {
        let Some(offset) = member_offset(f, id, member) else {
            continue;
        };
        let (Some(alignment), Some(size)) = (alignment(f, *ty, rules, memo), size(f, *ty, memo))
        else {
            continue;
        };
        let aligned = match f.ty(*ty) {
            // Relaxed layout: a vector needs only its component alignment, if it does not
            // straddle a 16-byte boundary it would not otherwise need to cross.
            Some(Type::Vector { component, .. }) if rules.relaxed && !rules.scalar => {
                let c = scalar_size(f, *component).unwrap_or(1);
                let straddles = size <= 16
                    && offset / 16 != offset.saturating_add(size).saturating_sub(1) / 16
                    || size > 16 && offset % 16 != 0;
                offset % c == 0 && !straddles
            }
            _ => offset % alignment == 0,
        };
        if !aligned {
            sink.error(
                at,
                BlockLayoutError::MisalignedMember {
                    block: id,
                    member,
                    offset,
                    alignment,
                },
            );
        }
        placed.push((offset, size, member));
        if matches!(f.ty(*ty), Some(Type::Struct { .. })) {
            structure(cx, *ty, rules, sink, memo, depth + 1);
        }
        array_stride(cx, *ty, rules, sink, memo, depth + 1);
    }
    placed.sort_unstable();
    for pair in placed.windows(2) {
        if let [(o1, s1, _), (o2, _, m2)] = pair {
            if *o2 < o1.saturating_add(*s1) {
                sink.error(
                    at,
                    BlockLayoutError::Overlap {
                        block: id,
                        member: *m2,
                        offset: *o2,
                        end: o1.saturating_add(*s1),
                    },
                );
            }
        }
    }
}

/// Checks the ArrayStride of an array type (and arrays/structs in its element).
fn array_stride(cx: &Ctx, ty: Id, rules: Rules, sink: &mut Sink, memo: &mut Memo, depth: u32) {
    if depth > 64
        || !matches!(
            cx.facts.ty(ty),
            Some(Type::Array { .. } | Type::RuntimeArray { .. })
        )
        || !memo.checked.insert(ty)
    {
        return;
    }
    let f = cx.facts;
    let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) = f.ty(ty) else {
        return;
    };
    if let (Some(stride), Some(alignment), Some(size)) = (
        decoration_value(f, ty, D::ArrayStride),
        alignment(f, ty, rules, memo),
        size(f, *element, memo),
    ) {
        if stride % alignment != 0 || stride < size {
            sink.error(
                f.defs.get(&ty).copied(),
                BlockLayoutError::BadArrayStride {
                    array: ty,
                    stride,
                    alignment,
                    size,
                },
            );
        }
    }
    if matches!(f.ty(*element), Some(Type::Struct { .. })) {
        structure(cx, *element, rules, sink, memo, depth + 1);
    }
    array_stride(cx, *element, rules, sink, memo, depth + 1);
}

fn decoration_value(f: &Facts, id: Id, d: D) -> Option<u64> {
    f.decorations
        .get(&id)?
        .iter()
        .find(|x| x.member.is_none() && x.decoration == d as u32)?
        .params
        .first()?
        .literal()
}

fn member_offset(f: &Facts, id: Id, member: usize) -> Option<u64> {
    let ds = f.decorations.get(&id)?;
    let d = ds
        .iter()
        .find(|d| d.member == Some(member as u32) && d.decoration == D::Offset as u32)?;
    d.params.first().and_then(Operand::literal)
}

fn scalar_size(f: &Facts, ty: Id) -> Option<u64> {
    match f.ty(ty)? {
        Type::Int { width, .. } | Type::Float { width, .. } => {
            Some(u64::from(*width) / 8).filter(|b| *b > 0)
        }
        Type::Pointer { .. } => Some(8),
        _ => None,
    }
}

fn round_up(v: u64, to: u64) -> u64 {
    if to == 0 {
        v
    } else {
        v.div_ceil(to).saturating_mul(to)
    }
}

/// Base alignment under the rule set (`None` when the type is not laid out here).
fn alignment(f: &Facts, ty: Id, rules: Rules, memo: &mut Memo) -> Option<u64> {
    alignment_at(f, ty, rules, memo, 0)
}

fn alignment_at(f: &Facts, ty: Id, rules: Rules, memo: &mut Memo, depth: u32) -> Option<u64> {
    if depth > 64 {
        return None;
    }
    if let Some(known) = memo.alignment.get(&ty) {
        return *known;
    }
    let a = alignment_uncached(f, ty, rules, memo, depth);
    memo.alignment.insert(ty, a);
    a
}

fn alignment_uncached(f: &Facts, ty: Id, rules: Rules, memo: &mut Memo, depth: u32) -> Option<u64> {
    let a = match f.ty(ty)? {
        Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => scalar_size(f, ty)?,
        Type::Vector { component, count } => {
            let c = scalar_size(f, *component)?;
            if rules.scalar {
                c
            } else if *count == 2 {
                2 * c
            } else {
                4 * c
            }
        }
        Type::Matrix { column, .. } => alignment_at(f, *column, rules, memo, depth + 1)?,
        Type::Array { element, .. } | Type::RuntimeArray { element } => {
            let e = alignment_at(f, *element, rules, memo, depth + 1)?;
            if rules.std140 && !rules.scalar {
                round_up(e, 16)
            } else {
                e
            }
        }
        Type::Struct { members } => {
            let mut m = 1;
            for member in members {
                m = m.max(alignment_at(f, *member, rules, memo, depth + 1)?);
            }
            if rules.std140 && !rules.scalar {
                round_up(m, 16)
            } else {
                m
            }
        }
        _ => return None,
    };
    Some(a)
}

/// Size in bytes (arrays by their ArrayStride, structs to the end of their last member).
fn size(f: &Facts, ty: Id, memo: &mut Memo) -> Option<u64> {
    size_at(f, ty, memo, 0)
}

fn size_at(f: &Facts, ty: Id, memo: &mut Memo, depth: u32) -> Option<u64> {
    if depth > 64 {
        return None;
    }
    if let Some(known) = memo.size.get(&ty) {
        return *known;
    }
    let s = size_uncached(f, ty, memo, depth);
    memo.size.insert(ty, s);
    s
}

fn size_uncached(f: &Facts, ty: Id, memo: &mut Memo, depth: u32) -> Option<u64> {
    match f.ty(ty)? {
        Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => scalar_size(f, ty),
        Type::Vector { component, count } => {
            scalar_size(f, *component).map(|c| c.saturating_mul(u64::from(*count)))
        }
        // The MatrixStride is a decoration of the struct member, not of the type, so a matrix
        // counts only the bytes its columns certainly cover (never more than it occupies):
        // overlaps are then never reported falsely.
        Type::Matrix { column, count } => {
            size_at(f, *column, memo, depth + 1).map(|c| c.saturating_mul(u64::from(*count)))
        }
        // Likewise an array spans (n - 1) strides plus one element.
        Type::Array { length, element } => {
            let n = f.eval_int(*length)?;
            let element_size = size_at(f, *element, memo, depth + 1)?;
            let stride = decoration_value(f, ty, D::ArrayStride).unwrap_or(element_size);
            Some(
                stride
                    .saturating_mul(n.saturating_sub(1))
                    .saturating_add(element_size),
            )
        }
        Type::RuntimeArray { .. } => Some(0),
        Type::Struct { members } => {
            let mut end = 0;
            for (i, m) in members.iter().enumerate() {
                let offset = member_offset(f, ty, i).unwrap_or(0);
                end = end.max(offset.saturating_add(size_at(f, *m, memo, depth + 1)?));
            }
            Some(end)
        }
        _ => None,
    }
}
