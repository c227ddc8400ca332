//! Explicit layout of blocks (Vulkan "Offset and Stride Assignment": std140 for Uniform blocks,
//! std430 for StorageBuffer, PushConstant and PhysicalStorageBuffer blocks, relaxed block layout
//! as core in Vulkan 1.1, and the spirv-val options `--relax-block-layout`,
//! `--uniform-buffer-standard-layout`, `--scalar-block-layout`, `--workgroup-scalar-block-layout`
//! and `--skip-block-layout`).
//!
//! Mirrors SPIRV-Tools 2025.5 `validate_decorations.cpp` (`CheckDecorationsOfBuffers`,
//! `checkLayout`, `getBaseAlignment`, `getScalarAlignment`, `getSize`):
//! * every block of a Uniform, PushConstant, StorageBuffer, PhysicalStorageBuffer (or, with
//!   `WorkgroupMemoryExplicitLayoutKHR`, Workgroup) variable has its matrix members (and arrays
//!   of matrices) decorated with MatrixStride and RowMajor or ColMajor, in every environment;
//! * in Vulkan, each member's Offset is aligned for its type under the rule set in force, members
//!   do not overlap (nor sit in the padding of a preceding array or struct), vectors do not
//!   straddle improperly under relaxed layout, matrix and array strides are aligned, arrays
//!   strides cover their elements, and a runtime array is the last member;
//! * the pointee of every PhysicalStorageBuffer pointer value is laid out by the same rules.
//!
//! Matrices inherit RowMajor/ColMajor and MatrixStride from the struct member that holds them
//! (through arrays). Nested structs are checked at their absolute offset, as the reference does,
//! because relaxed layout's straddle rule depends on it.

use super::{Ctx, Sink};
use crate::facts::{Facts, IdMap, IdSet, Type};
use crate::vuid::Vuid;
use spirv::{Capability as C, Decoration as D, Op, StorageClass as SC};
use tangle_spirv::{Id, Operand};

mod decorations;
mod offsets;
mod placement;
mod sizes;

/// A block layout rule failed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum BlockLayoutError {
    /// "The Offset decoration of a member must be a multiple of its base alignment" (or, for a
    /// vector under relaxed layout, of its component's size).
    #[error("member {member} of block %{block} at offset {offset} is not aligned to {alignment}")]
    MisalignedMember {
        block: Id,
        member: usize,
        offset: u64,
        alignment: u64,
    },
    /// Members must not overlap, nor start in the padding at the end of an array or struct.
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
    /// An ArrayStride of 0 in a block (SPIRV-Tools `checkLayout`: "contains an array with stride 0").
    #[error("array %{array} in a block has ArrayStride 0")]
    ArrayStrideZero { array: Id },
    /// A member of a block (or of a struct laid out in one) has no Offset.
    #[error("member {member} of struct %{block} laid out in a block has no Offset decoration")]
    MissingOffset { block: Id, member: usize },
    /// SPIRV-Tools `CheckDecorationsOfBuffers`: arrays in blocks (and in structs nested in them)
    /// "must be explicitly laid out with ArrayStride decorations".
    #[error("array member {member} of struct %{block} laid out in a block has no ArrayStride decoration")]
    MissingArrayStride { block: Id, member: usize },
    /// SPIRV-Tools `CheckDecorationsOfBuffers`: matrices in blocks "must be explicitly laid out
    /// with MatrixStride decorations" (on the member holding the matrix or array of matrices).
    #[error("matrix member {member} of struct %{block} laid out in a block has no MatrixStride decoration")]
    MissingMatrixStride { block: Id, member: usize },
    /// SPIRV-Tools `CheckDecorationsOfBuffers`: matrices in blocks "must be explicitly laid out
    /// with RowMajor or ColMajor decorations".
    #[error("matrix member {member} of struct %{block} laid out in a block has neither RowMajor nor ColMajor")]
    MissingMatrixOrder { block: Id, member: usize },
    /// "The MatrixStride must be a multiple of the base alignment of the matrix" (SPIRV-Tools:
    /// "is a matrix with stride ... not satisfying alignment").
    #[error("member {member} of block %{block} is a matrix with MatrixStride {stride}, which is not a multiple of {alignment}")]
    MisalignedMatrixStride {
        block: Id,
        member: usize,
        stride: u64,
        alignment: u64,
    },
    /// Relaxed layout: "a vector [of at most 16 bytes must not] have Offset decorations placing
    /// its first byte at F and its last byte at L, where floor(F / 16) != floor(L / 16)", and a
    /// larger vector must start at a multiple of 16.
    #[error("member {member} of block %{block} is a vector at offset {offset} that straddles a 16-byte boundary improperly")]
    ImproperStraddle {
        block: Id,
        member: usize,
        offset: u64,
    },
    /// VUID-StandaloneSpirv-OpTypeRuntimeArray-04680: a runtime array must be the last member of
    /// a block (SPIRV-Tools: "has a runtime array at offset ..., but other members at larger offsets").
    #[error("struct %{block} has a runtime array (member {member}) at offset {offset}, but other members at larger offsets")]
    RuntimeArrayNotLast {
        block: Id,
        member: usize,
        offset: u64,
    },
    /// VUID-StandaloneSpirv-None-10684: a variable in a storage class that does not allow
    /// explicit layout (Function, Private, and Workgroup without WorkgroupMemoryExplicitLayoutKHR)
    /// must not have a type with explicit layout decorations (SPIRV-Tools: "Invalid explicit
    /// layout decorations on type").
    #[error("variable in storage class {} has a type with explicit layout: %{ty} is decorated with {}", enumerant_name(tangle_spirv::grammar::OperandKind::StorageClass, *storage), enumerant_name(tangle_spirv::grammar::OperandKind::Decoration, *decoration))]
    ExplicitLayoutInStorageClass {
        storage: u32,
        ty: Id,
        decoration: u32,
    },
}

impl BlockLayoutError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            BlockLayoutError::RuntimeArrayNotLast { .. } => {
                Some(Vuid("VUID-StandaloneSpirv-OpTypeRuntimeArray-04680"))
            }
            BlockLayoutError::ExplicitLayoutInStorageClass { .. } => {
                Some(Vuid("VUID-StandaloneSpirv-None-10684"))
            }
            _ => None,
        }
    }
}

/// The grammar's name of an enumerant (its number when unknown).
fn enumerant_name(kind: tangle_spirv::grammar::OperandKind, value: u32) -> String {
    kind.enumerant(value)
        .map_or_else(|| value.to_string(), |e| e.name.to_string())
}

/// Which rule set applies to one block.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Rules {
    /// std140: arrays, structs and matrices round their alignment up to 16.
    block_rules: bool,
    /// Scalar block layout: every type is aligned to its scalar components.
    scalar: bool,
    /// Relaxed block layout (VK_KHR_relaxed_block_layout).
    relaxed: bool,
}

impl Rules {
    fn key(self) -> u8 {
        u8::from(self.block_rules) | u8::from(self.scalar) << 1 | u8::from(self.relaxed) << 2
    }
}

/// RowMajor/ColMajor and MatrixStride of a struct member, inherited by the matrices in it.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Constraint {
    row_major: bool,
    matrix_stride: u64,
}

/// Deeper type nesting than this is not laid out (malformed modules can make types cyclic).
const MAX_DEPTH: u32 = 64;

/// Every alignment a laid-out type can have (scalars of 8 to 64 bits, vectors of up to four of
/// them, rounded to 16) divides this, so a struct checked at one offset modulo it is checked
/// at every such offset.
const OFFSET_PERIOD: u64 = 64;

/// Checks every block reachable from a buffer variable or a PhysicalStorageBuffer pointer once.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    let vulkan_relaxed =
        matches!(cx.env, tangle_spirv::TargetEnv::Vulkan { api, .. } if api.minor > 0);
    let mut layout = Layout {
        cx,
        relaxed: vulkan_relaxed || cx.options.relax_block_layout,
        checked: Default::default(),
        alignments: Default::default(),
        scalar_alignments: Default::default(),
        reported: Vec::new(),
        seen: Default::default(),
        required: Default::default(),
    };
    for inst in &cx.module.instructions {
        if inst.op() == Some(Op::Variable) {
            if let Some((block, storage, workgroup)) = buffer_variable_block(cx, inst) {
                variable(&mut layout, block, storage, workgroup);
            }
        } else if let Some(Type::Pointer { storage, pointee }) =
            inst.result_type.and_then(|t| f.ty(t))
        {
            // Any other value of PhysicalStorageBuffer pointer type: its pointee is laid out
            // by the storage buffer rules, in every environment.
            if *storage == SC::PhysicalStorageBuffer as u32 && !cx.options.skip_block_layout {
                let rules = Rules {
                    block_rules: false,
                    scalar: cx.options.scalar_block_layout,
                    relaxed: layout.relaxed,
                };
                layout.struct_layout(*pointee, rules, 0, 0);
            }
        }
    }
    for (at, error) in layout.reported {
        sink.error(at, error);
    }
    placement::check(cx, sink);
}

/// For an `OpVariable` whose memory is laid out explicitly (Uniform, PushConstant,
/// StorageBuffer, PhysicalStorageBuffer, or Workgroup with `WorkgroupMemoryExplicitLayoutKHR`):
/// the type its layout rules apply to (the pointee, through one level of descriptor arraying
/// except for Workgroup), its storage class, and whether it is Workgroup memory. Layout rules
/// apply only to these types, as SPIRV-Tools' `CheckDecorationsOfBuffers` visits variables: a
/// Block struct no variable uses needs no layout.
pub(crate) fn buffer_variable_block(
    cx: &Ctx,
    inst: &tangle_spirv::Instruction,
) -> Option<(Id, u32, bool)> {
    let f = cx.facts;
    let storage = inst.literal_operand(0).map(|s| s as u32)?;
    let Some(Type::Pointer { pointee, .. }) = inst.result_type.and_then(|t| f.ty(t)) else {
        return None;
    };
    let workgroup =
        storage == SC::Workgroup as u32 && f.has_capability(C::WorkgroupMemoryExplicitLayoutKHR);
    let buffer = [
        SC::Uniform as u32,
        SC::PushConstant as u32,
        SC::StorageBuffer as u32,
        SC::PhysicalStorageBuffer as u32,
    ];
    if !(workgroup || buffer.contains(&storage)) {
        return None;
    }
    // One level of arraying (descriptor arrays), except for Workgroup blocks.
    let mut block = *pointee;
    if !workgroup {
        if let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) = f.ty(block) {
            block = *element;
        }
    }
    Some((block, storage, workgroup))
}

/// The checks of one buffer variable whose block (after descriptor arraying) is `block`.
fn variable(layout: &mut Layout, block: Id, storage: u32, workgroup: bool) {
    let cx = layout.cx;
    let f = cx.facts;
    if !matches!(f.ty(block), Some(Type::Struct { .. })) {
        return;
    }
    let uniform = storage == SC::Uniform as u32;
    // The reference applies the rules once per Block/BufferBlock decoration of the struct.
    for decoration in [D::Block, D::BufferBlock] {
        if !f.has_decoration(block, decoration) {
            continue;
        }
        let block_rules = uniform && decoration == D::Block;
        let buffer_rules =
            (uniform && decoration == D::BufferBlock) || (!uniform && decoration == D::Block);
        if !(block_rules || buffer_rules) {
            continue;
        }
        if !layout.required_decorations(block) || !cx.vulkan() || cx.options.skip_block_layout {
            continue;
        }
        let rules = Rules {
            // `--uniform-buffer-standard-layout`: Uniform blocks use the storage buffer rules.
            block_rules: block_rules && !cx.options.uniform_buffer_standard_layout,
            scalar: if workgroup {
                cx.options.workgroup_scalar_block_layout
            } else {
                cx.options.scalar_block_layout
            },
            relaxed: layout.relaxed,
        };
        layout.struct_layout(block, rules, 0, 0);
    }
}

/// The layout pass: memos and the findings so far.
struct Layout<'a> {
    cx: &'a Ctx<'a>,
    relaxed: bool,
    /// (struct, offset modulo [`OFFSET_PERIOD`], rules) already checked.
    checked: std::collections::HashSet<(Id, u64, u8)>,
    /// Base alignment of structs, by (struct, std140 rounding).
    alignments: std::collections::HashMap<(Id, bool), Option<u64>>,
    scalar_alignments: IdMap<Option<u64>>,
    reported: Vec<(Option<usize>, BlockLayoutError)>,
    /// The findings so far, to report each once (a struct is checked at several offsets).
    seen: std::collections::HashSet<(Option<usize>, BlockLayoutError)>,
    /// Whether a block's required decorations are all there, by block.
    required: IdMap<bool>,
}

impl Layout<'_> {
    fn report(&mut self, at: Id, error: BlockLayoutError) {
        let index = self.cx.facts.defs.get(&at).copied();
        if self.seen.insert((index, error.clone())) {
            self.reported.push((index, error));
        }
    }
}

/// Whether `offset` is a multiple of `alignment` (an alignment of 0 allows only offset 0).
fn aligned(offset: u64, alignment: u64) -> bool {
    offset.is_multiple_of(alignment)
}

/// Rounds up to a power-of-two alignment, as the reference's `align` does.
fn align_up(v: u64, to: u64) -> u64 {
    v.wrapping_add(to).wrapping_sub(1) & !to.wrapping_sub(1)
}

/// Relaxed layout's straddle rule for a vector of `size` bytes at `offset`.
fn improper_straddle(offset: u64, size: u64) -> bool {
    let last = offset.saturating_add(size).saturating_sub(1);
    if size <= 16 {
        offset / 16 != last / 16
    } else {
        !offset.is_multiple_of(16)
    }
}

/// The size of a scalar (or pointer: 64-bit addressing) in bytes.
fn scalar_size(f: &Facts, ty: Id) -> Option<u64> {
    match f.ty(ty)? {
        Type::Int { width, .. } | Type::Float { width, .. } => Some(u64::from(*width) / 8),
        Type::Pointer { .. } => Some(8),
        _ => None,
    }
}

/// The literal values of every `OpDecorate id decoration value` (in module order).
fn decoration_values(f: &Facts, id: Id, d: D) -> Vec<u64> {
    f.decorations
        .get(&id)
        .map(|ds| {
            ds.iter()
                .filter(|x| x.member.is_none() && x.decoration == d as u32)
                .filter_map(|x| x.params.first().and_then(Operand::literal))
                .collect()
        })
        .unwrap_or_default()
}

/// The value of the last `OpMemberDecorate st member decoration` (0 for decorations without one).
fn member_decoration(f: &Facts, st: Id, member: usize, d: D) -> Option<u64> {
    f.decorations
        .get(&st)?
        .iter()
        .filter(|x| x.member == Some(member as u32) && x.decoration == d as u32)
        .map(|x| x.params.first().and_then(Operand::literal).unwrap_or(0))
        .next_back()
}

/// The matrix layout a struct member gives the matrices in it (column-major, stride 0 unless
/// decorated; the last decoration wins, as in the reference).
fn member_constraint(f: &Facts, st: Id, member: usize) -> Constraint {
    let mut c = Constraint::default();
    for x in f.decorations.get(&st).into_iter().flatten() {
        if x.member != Some(member as u32) {
            continue;
        }
        match x.decoration {
            d if d == D::RowMajor as u32 => c.row_major = true,
            d if d == D::ColMajor as u32 => c.row_major = false,
            d if d == D::MatrixStride as u32 => {
                c.matrix_stride = x.params.first().and_then(Operand::literal).unwrap_or(0)
            }
            _ => {}
        }
    }
    c
}

/// SPIRV-Tools `isMissingOffsetInStruct`: the first (struct, member) without an Offset in
/// `ty` or the structs in it (through arrays). An Offset of 0xffffffff counts as missing.
fn missing_offset(f: &Facts, ty: Id) -> Option<(Id, usize)> {
    let mut stack = vec![ty];
    let mut seen = IdSet::default();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        match f.ty(t) {
            Some(Type::Struct { members }) => {
                for i in 0..members.len() {
                    if matches!(
                        member_decoration(f, t, i, D::Offset),
                        None | Some(0xffff_ffff)
                    ) {
                        return Some((t, i));
                    }
                }
                // Depth-first in member order, like the reference's recursion.
                stack.extend(members.iter().rev().copied());
            }
            Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => {
                stack.push(*element)
            }
            _ => {}
        }
    }
    None
}
