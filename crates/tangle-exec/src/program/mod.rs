//! The lowered, executable form of one entry point: resolved types with memory layouts, dense
//! register slots, folded constants, functions of blocks of [`Op`]s and per-block structured facts.

pub mod array;
pub mod ops;
pub mod writes;

pub use ops::{
    AtomicOp, Conv, FloatBin, FloatCmp, IntBin, IntCmp, IntTern, IntUn, Op, Step, Terminator,
    WideOp,
};

use crate::error::InstRef;

/// Index into [`Program::types`].
pub type TypeIdx = u32;
/// A register slot: one scalar component of an SSA value, held for every lane.
pub type Slot = u32;
/// Index into [`Program::functions`].
pub type FuncIdx = u32;
/// Index into a function's blocks.
pub type BlockIdx = u32;

/// A resolved type. Aggregates carry their memory layout (explicit where the module decorates
/// it, tangle's internal layout otherwise); register slot counts do not depend on the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `OpTypeVoid`.
    Void,
    /// `OpTypeBool` (4 bytes in internal memory).
    Bool,
    /// `OpTypeInt`.
    Int { bits: u32, signed: bool },
    /// `OpTypeFloat`; `bf16` for the BFloat16KHR encoding (SPV_KHR_bfloat16), a 16-bit storage,
    /// conversion and cooperative-matrix format with no arithmetic of its own.
    Float { bits: u32, bf16: bool },
    /// `OpTypeVector`; `stride` is the byte distance of components in memory (larger than the
    /// component size for a column of a row-major matrix).
    Vector {
        elem: TypeIdx,
        count: u32,
        stride: u32,
    },
    /// `OpTypeMatrix`: `count` columns `stride` bytes apart.
    Matrix {
        column: TypeIdx,
        count: u32,
        stride: u32,
    },
    /// `OpTypeArray`.
    Array {
        elem: TypeIdx,
        count: u32,
        stride: u32,
    },
    /// `OpTypeRuntimeArray`.
    RuntimeArray { elem: TypeIdx, stride: u32 },
    /// `OpTypeStruct`: members with their byte offsets.
    Struct { members: Vec<(TypeIdx, u32)> },
    /// `OpTypePointer` / `OpTypeForwardPointer`d pointers (8 bytes in memory).
    Pointer { class: u32, pointee: TypeIdx },
    /// `OpTypeCooperativeMatrixKHR` of Subgroup scope, held as its composite view: `length`
    /// (`OpCooperativeMatrixLengthKHR`) components per invocation, like a vector of `elem`;
    /// the run's [`crate::policy::CoopmatLayout`] says which (row, column) each (invocation,
    /// index) holds ([`crate::run::coopmat`]).
    CoopMatrix {
        elem: TypeIdx,
        rows: u32,
        cols: u32,
        /// Cooperative Matrix Use (0 A, 1 B, 2 Accumulator).
        usage: u32,
        length: u32,
    },
    /// Types the executor holds no values of (functions, opaque types).
    Opaque,
}

/// A type with its derived sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeInfo {
    /// The type.
    pub ty: Type,
    /// Register slots a value takes.
    pub slots: u32,
    /// Bytes a value takes in memory (for a runtime array: 0).
    pub size: u64,
}

/// A memory region kind a variable lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    /// Per invocation: Function, Private and built-in Input variables.
    Invocation,
    /// Per workgroup.
    Workgroup,
    /// The push-constant block.
    PushConstant,
    /// A buffer bound at `(set, binding)`.
    Buffer { set: u32, binding: u32 },
    /// An array of descriptors at `(set, binding)`: entry `index` of
    /// [`Program::descriptor_arrays`]. The variable's own pointer points into no memory; an
    /// access chain's first index picks a descriptor ([`Op::Descriptor`]).
    DescriptorArray { index: u32 },
    /// An image or texel buffer: entry `index` of [`Program::images`]. The variable's slot
    /// holds the image's handle (a pointer to its texels) for the whole dispatch.
    Image { index: u32 },
    /// A sampler at `(set, binding)`: its slot holds the sampler's handle (arrays of samplers
    /// are [`RegionKind::DescriptorArray`]s).
    Sampler { set: u32, binding: u32 },
}

/// An image variable (`OpTypeImage` in UniformConstant): storage images (`Sampled` 2), sampled
/// images read with `OpImageFetch` (`Sampled` 1), and texel buffers (`Dim` Buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageBinding {
    /// `DescriptorSet`.
    pub set: u32,
    /// `Binding`.
    pub binding: u32,
    /// SPIR-V `Dim` (0 1D, 1 2D, 2 3D, 5 Buffer).
    pub dim: u32,
    /// `Sampled`: 1 with a sampler (or fetch), 2 storage.
    pub sampled: u32,
    /// The `Image Format` (0 Unknown: the bound image's format is used).
    pub format: u32,
    /// The `Sampled Type` is a float (else an integer).
    pub float: bool,
    /// A combined image sampler (`OpTypeSampledImage`): the sampler at the same binding (and
    /// array element) goes with the image.
    pub combined: bool,
    /// The element of a descriptor array of images (`image2D imgs[4]`) a bound image is checked
    /// as, `None` for a plain image (and in an array's [`DescriptorKind::Image`]).
    pub element: Option<u32>,
}

/// An array of descriptors (`buffer B { .. } b[2];`, `uniform texture2D t[];`, `sampler s[4];`):
/// each element is a separate descriptor, bound separately, picked by [`Op::Descriptor`] from
/// the table the dispatch builds of what is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorArray {
    /// `DescriptorSet`.
    pub set: u32,
    /// `Binding`.
    pub binding: u32,
    /// The array's length; `None` for a runtime-sized array (its length is what is bound).
    pub count: Option<u32>,
    /// What each element is.
    pub kind: DescriptorKind,
}

/// The descriptors of a [`DescriptorArray`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescriptorKind {
    /// Storage or uniform buffers: an element is a pointer to the start of its buffer.
    Buffer,
    /// Images, texel buffers or combined image samplers, each as this binding (its `element`
    /// `None`) declares: an element is an image handle.
    Image(ImageBinding),
    /// Samplers: an element is a sampler handle.
    Sampler,
}

/// A module-scope or function variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The register slot holding its pointer.
    pub slot: Slot,
    /// Where it lives.
    pub region: RegionKind,
    /// Byte offset in its region (Invocation/Workgroup regions).
    pub offset: u64,
    /// Its pointee type.
    pub ty: TypeIdx,
    /// A built-in it holds (`spirv::BuiltIn` value), written at invocation start.
    pub builtin: Option<u32>,
    /// Initial value (constant slots), written at invocation start (Private) or function entry.
    pub init: Option<Slot>,
}

/// One block of a function.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Block {
    /// The block's label id.
    pub label: u32,
    /// Position in the structured order (constructs before their merge blocks); tangles are
    /// scheduled and rejoined by it.
    pub rank: u32,
    /// `OpSelectionMerge`/`OpLoopMerge` merge block, if this block is a header.
    pub merge: Option<BlockIdx>,
    /// `OpLoopMerge` continue target, if this block is a loop header.
    pub continue_target: Option<BlockIdx>,
    /// `OpPhi` copies per predecessor: `(predecessor, [(dst, src)])`.
    pub phis: Vec<(BlockIdx, Vec<(Slot, Slot)>)>,
    /// The ops.
    pub ops: Vec<Op>,
    /// Instruction locations of `ops` (same length), for diagnostics.
    pub locs: Vec<u32>,
    /// The terminator.
    pub terminator: Terminator,
    /// Location of the terminator.
    pub term_loc: u32,
}

/// Where one id's value is held, per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In register slots from `slot`: a value of type `ty` (an SSA result, a parameter held by
    /// value, or a variable promoted to registers).
    Slots { slot: Slot, ty: TypeIdx },
    /// In memory, at the pointer `slot` holds: a value of type `ty` (a variable, or a parameter
    /// passed by pointer).
    Pointee { slot: Slot, ty: TypeIdx },
}

/// A lowered function.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Function {
    /// The function's id.
    pub id: u32,
    /// Parameter slots (first slot and slot count per parameter).
    pub params: Vec<(Slot, u32)>,
    /// Where the function's parameters, variables and results are held, by id (what `DEBUG`
    /// shows of a watched invocation, [`crate::RunOptions::watch`]).
    pub places: Vec<(u32, Place)>,
    /// Blocks; the entry block is first.
    pub blocks: Vec<Block>,
}

/// The executable program for one entry point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// Types.
    pub types: Vec<TypeInfo>,
    /// Functions; see [`Program::entry`].
    pub functions: Vec<Function>,
    /// The entry point function.
    pub entry: FuncIdx,
    /// Register slots in total.
    pub slots: u32,
    /// Constant slots with their values, written once per register file.
    pub constants: Vec<(Slot, u64)>,
    /// Variables (module scope and function scope).
    pub variables: Vec<Variable>,
    /// Bytes of per-invocation memory.
    pub invocation_bytes: u64,
    /// Bytes of workgroup memory.
    pub workgroup_bytes: u64,
    /// Workgroup size.
    pub local_size: [u32; 3],
    /// The entry point declares `MaximallyReconvergesKHR`: every dispatch follows
    /// SPV_KHR_maximal_reconvergence whatever the policy's reconvergence choice.
    pub maximally_reconverges: bool,
    /// Instruction locations, indexed by the `locs` of blocks.
    pub locations: Vec<InstRef>,
    /// The memory image of each type: its scalars in slot order.
    pub leaves: Vec<Vec<Leaf>>,
    /// The bytes a load or store of each type touches ([`Program::spans_of`]).
    pub spans: Vec<Vec<Span>>,
    /// Descriptor arrays (of buffers, images or samplers), indexed by
    /// [`RegionKind::DescriptorArray`].
    pub descriptor_arrays: Vec<DescriptorArray>,
    /// Image variables, indexed by [`RegionKind::Image`].
    pub images: Vec<ImageBinding>,
    /// Module-scope `OpUndef`s: first slot, slot count and location (for the
    /// uninitialised-value check, [`crate::check::uninit`]).
    pub undefs: Vec<(Slot, u32, u32)>,
    /// `Private` variables without initializer: offset and size in invocation memory, and
    /// location (their bytes start undefined, [`crate::check::uninit`]).
    pub undef_memory: Vec<(u64, u64, u32)>,
}

/// One scalar of a type's memory image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    /// Byte offset from the start of the value.
    pub offset: u64,
    /// Bytes (1, 2, 4 or 8).
    pub bytes: u32,
    /// A boolean (stored as a 32-bit 0 or 1).
    pub boolean: bool,
}

/// Types with more scalars than this get no memory image (loading them whole is an error).
pub const MAX_LEAVES: u32 = 1 << 16;

/// A run of bytes a value occupies, from the start of the value: `(offset, length)`.
pub type Span = (u64, u64);

/// The runs of bytes `leaves` cover, in address order (adjacent and overlapping runs merged);
/// a type without a memory image (too many scalars, [`MAX_LEAVES`]) covers its `size` bytes.
fn spans(leaves: &[Leaf], size: u64) -> Vec<Span> {
    if leaves.is_empty() {
        return if size == 0 {
            Vec::new()
        } else {
            vec![(0, size)]
        };
    }
    let mut bytes: Vec<Span> = leaves
        .iter()
        .map(|l| (l.offset, u64::from(l.bytes)))
        .collect();
    bytes.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(bytes.len());
    for (o, l) in bytes {
        match out.last_mut() {
            Some((a, n)) if o <= a.saturating_add(*n) => {
                *n = (*n).max(o.saturating_add(l) - *a);
            }
            _ => out.push((o, l)),
        }
    }
    out
}

impl Program {
    /// The type info of `t` (a placeholder for an index lowering never produced).
    pub fn ty(&self, t: TypeIdx) -> &TypeInfo {
        static OPAQUE: TypeInfo = TypeInfo {
            ty: Type::Opaque,
            slots: 0,
            size: 0,
        };
        self.types.get(t as usize).unwrap_or(&OPAQUE)
    }

    /// The buffers the program declares, sorted.
    pub fn bindings(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self
            .variables
            .iter()
            .filter_map(|v| match v.region {
                RegionKind::Buffer { set, binding } => Some((set, binding)),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Computes [`Program::leaves`] for every type.
    pub fn compute_leaves(&mut self) {
        let leaves = (0..self.types.len() as TypeIdx)
            .map(|t| {
                let mut out = Vec::new();
                if self.ty(t).slots <= MAX_LEAVES {
                    self.push_leaves(t, 0, &mut out);
                }
                out
            })
            .collect();
        self.leaves = leaves;
        self.spans = (0..self.types.len() as TypeIdx)
            .map(|t| spans(self.leaves_of(t), self.ty(t).size))
            .collect();
    }

    fn push_leaves(&self, t: TypeIdx, base: u64, out: &mut Vec<Leaf>) {
        let info = self.ty(t);
        match &info.ty {
            Type::Bool => out.push(Leaf {
                offset: base,
                bytes: 4,
                boolean: true,
            }),
            Type::Int { .. } | Type::Float { .. } | Type::Pointer { .. } => out.push(Leaf {
                offset: base,
                bytes: info.size as u32,
                boolean: false,
            }),
            Type::CoopMatrix {
                elem,
                length: count,
                ..
            } => {
                let stride = self.ty(*elem).size;
                for i in 0..u64::from(*count) {
                    self.push_leaves(*elem, base + i * stride, out);
                }
            }
            Type::Vector {
                elem,
                count,
                stride,
            }
            | Type::Matrix {
                column: elem,
                count,
                stride,
            }
            | Type::Array {
                elem,
                count,
                stride,
            } => {
                for i in 0..u64::from(*count) {
                    self.push_leaves(*elem, base + i * u64::from(*stride), out);
                }
            }
            Type::Struct { members } => {
                for (m, off) in members {
                    self.push_leaves(*m, base + u64::from(*off), out);
                }
            }
            Type::RuntimeArray { .. } | Type::Void | Type::Opaque => {}
        }
    }

    /// The memory image of type `t`.
    pub fn leaves_of(&self, t: TypeIdx) -> &[Leaf] {
        self.leaves.get(t as usize).map_or(&[], Vec::as_slice)
    }

    /// The bytes a load or store of a whole `t` touches: its scalars' bytes, merged into runs
    /// in address order. Padding — between the columns of a matrix (`MatrixStride` past the
    /// column), between struct members (`Offset`), between array elements (`ArrayStride`) and
    /// after the last of them — is in none: it is never accessed, so it is never out of
    /// bounds, never races and is never written.
    ///
    /// # Spec
    /// SPIR-V 2.18.1 "Memory Layout": "Offset, MatrixStride, and ArrayStride Decorations
    /// partially define how a memory buffer is laid out": they place a composite's members,
    /// and a composite is its members — nothing is stored in the bytes between or after them.
    /// So a `mat2x3` of `MatrixStride` 16 occupies bytes 0..12 and 16..28, and loads whole
    /// from a 28-byte buffer (upstream Amber's `compute_mat2x3float.vkscript`).
    pub fn spans_of(&self, t: TypeIdx) -> &[Span] {
        self.spans.get(t as usize).map_or(&[], Vec::as_slice)
    }

    /// The end of the last byte a load or store of a whole `t` touches ([`Program::spans_of`]),
    /// from the start of the value: what a bounds check covers.
    pub fn extent_of(&self, t: TypeIdx) -> u64 {
        self.spans_of(t)
            .last()
            .map_or(0, |&(o, l)| o.saturating_add(l))
    }

    /// The location with index `i`.
    pub fn location(&self, i: u32) -> InstRef {
        self.locations.get(i as usize).cloned().unwrap_or_default()
    }
}
