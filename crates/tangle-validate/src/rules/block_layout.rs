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
}

impl BlockLayoutError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            BlockLayoutError::RuntimeArrayNotLast { .. } => {
                Some(Vuid("VUID-StandaloneSpirv-OpTypeRuntimeArray-04680"))
            }
            _ => None,
        }
    }
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
    let workgroup_layout = f.has_capability(C::WorkgroupMemoryExplicitLayoutKHR);
    for inst in &cx.module.instructions {
        if inst.op() == Some(Op::Variable) {
            let storage = inst.literal_operand(0).map(|s| s as u32);
            let Some(Type::Pointer { pointee, .. }) = inst.result_type.and_then(|t| f.ty(t)) else {
                continue;
            };
            let workgroup = storage == Some(SC::Workgroup as u32) && workgroup_layout;
            let buffer = [
                SC::Uniform as u32,
                SC::PushConstant as u32,
                SC::StorageBuffer as u32,
                SC::PhysicalStorageBuffer as u32,
            ];
            if !(workgroup || storage.is_some_and(|s| buffer.contains(&s))) {
                continue;
            }
            // One level of arraying (descriptor arrays), except for Workgroup blocks.
            let mut block = *pointee;
            if !workgroup {
                if let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) =
                    f.ty(block)
                {
                    block = *element;
                }
            }
            variable(&mut layout, block, storage.unwrap_or(0), workgroup);
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

    /// SPIRV-Tools' checks that run before the layout: Offset on every member of the block and
    /// of structs in it (through arrays), ArrayStride on array members and MatrixStride and
    /// RowMajor/ColMajor on matrix members (of the block and of structs directly in it). Returns
    /// whether they all hold. Offsets and ArrayStrides on the block's own members are the
    /// `vulkan` family's findings in Vulkan environments; they are not reported twice.
    fn required_decorations(&mut self, block: Id) -> bool {
        if let Some(known) = self.required.get(&block) {
            return *known;
        }
        let ok = self.check_required_decorations(block);
        self.required.insert(block, ok);
        ok
    }

    fn check_required_decorations(&mut self, block: Id) -> bool {
        let f = self.cx.facts;
        let own_members_reported_elsewhere = self.cx.vulkan();
        if let Some((st, member)) = missing_offset(f, block) {
            if !(own_members_reported_elsewhere && st == block) {
                self.report(st, BlockLayoutError::MissingOffset { block: st, member });
            }
            return false;
        }
        let mut ok = true;
        let mut stack = vec![(block, 0u32)];
        let mut seen = IdSet::default();
        while let Some((st, depth)) = stack.pop() {
            if depth > MAX_DEPTH || !seen.insert(st) {
                continue;
            }
            let Some(Type::Struct { members }) = f.ty(st) else {
                continue;
            };
            for (member, ty) in members.iter().enumerate() {
                let has = |d: D| {
                    f.has_decoration(*ty, d) || member_decoration(f, st, member, d).is_some()
                };
                if matches!(
                    f.ty(*ty),
                    Some(Type::Array { .. } | Type::RuntimeArray { .. })
                ) && !has(D::ArrayStride)
                {
                    ok = false;
                    if !(own_members_reported_elsewhere && st == block) {
                        self.report(
                            st,
                            BlockLayoutError::MissingArrayStride { block: st, member },
                        );
                    }
                }
                // Matrix decorations also apply to arrays of matrices.
                let mut inner = *ty;
                let mut levels = 0;
                while let Some(Type::Array { element, .. } | Type::RuntimeArray { element }) =
                    f.ty(inner)
                {
                    inner = *element;
                    levels += 1;
                    if levels > MAX_DEPTH {
                        break;
                    }
                }
                if matches!(f.ty(inner), Some(Type::Matrix { .. })) {
                    let has = |d: D| {
                        f.has_decoration(inner, d) || member_decoration(f, st, member, d).is_some()
                    };
                    if !has(D::MatrixStride) {
                        ok = false;
                        self.report(
                            st,
                            BlockLayoutError::MissingMatrixStride { block: st, member },
                        );
                    } else if !has(D::RowMajor) && !has(D::ColMajor) {
                        ok = false;
                        self.report(
                            st,
                            BlockLayoutError::MissingMatrixOrder { block: st, member },
                        );
                    }
                }
                // Only structs that are members themselves (not array elements) are searched.
                if matches!(f.ty(*ty), Some(Type::Struct { .. })) {
                    stack.push((*ty, depth + 1));
                }
            }
        }
        ok
    }

    /// SPIRV-Tools `checkLayout`: the members of `st` placed at `incoming` bytes into the block
    /// (a type that is not a struct is laid out as a struct's only member at offset 0).
    fn struct_layout(&mut self, st: Id, rules: Rules, incoming: u64, depth: u32) {
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
    fn matrix_stride(&mut self, st: Id, member: usize, constraint: Constraint, alignment: u64) {
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
    fn arrays(
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

    /// SPIRV-Tools `getBaseAlignment`: the base alignment under std430 rules, or std140's
    /// extended alignment when `round_up`.
    fn base_alignment(
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
    fn scalar_alignment(&mut self, ty: Id, depth: u32) -> Option<u64> {
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
    fn size(&mut self, ty: Id, inherited: Constraint, depth: u32) -> Option<u64> {
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
