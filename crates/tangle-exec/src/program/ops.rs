//! The executor's op list: what one lowered instruction does to register slots and memory.
//!
//! Ops work on scalar slots; lowering expands vector, matrix and composite instructions into one
//! op per component (decoding is paid per tangle, so this costs little and keeps every op a tight
//! loop over lanes).

use super::{BlockIdx, FuncIdx, Slot, TypeIdx};

/// Integer binary operations (also the boolean `OpLogical*`, as 1-bit integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntBin {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    ShiftLeft,
    ShiftRightLogical,
    ShiftRightArithmetic,
    Or,
    Xor,
    And,
}

/// Integer unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntUn {
    Negate,
    Not,
    BitReverse,
    BitCount,
}

/// Integer (and boolean) comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntCmp {
    Eq,
    Ne,
    UGt,
    UGe,
    ULt,
    ULe,
    SGt,
    SGe,
    SLt,
    SLe,
}

/// Core float binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatBin {
    Add,
    Sub,
    Mul,
    Div,
    /// `OpFRem`: the sign of the result follows the dividend.
    Rem,
    /// `OpFMod`: the sign of the result follows the divisor.
    Mod,
}

/// `OpBitFieldUExtract` / `OpBitFieldSExtract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntTern {
    BitFieldUExtract,
    BitFieldSExtract,
}

/// Float comparisons and classification (`Ord*` are false when either side is NaN, `Unord*` true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatCmp {
    OrdEq,
    OrdNe,
    OrdLt,
    OrdGt,
    OrdLe,
    OrdGe,
    UnordEq,
    UnordNe,
    UnordLt,
    UnordGt,
    UnordLe,
    UnordGe,
    IsNan,
    IsInf,
}

/// Numeric conversions between scalar kinds and widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conv {
    /// `OpUConvert`: zero-extend or truncate.
    UConvert,
    /// `OpSConvert`: sign-extend or truncate.
    SConvert,
    /// `OpFConvert`.
    FConvert,
    /// `OpConvertFToU` (round toward zero; out-of-range saturates).
    FToU,
    /// `OpConvertFToS`.
    FToS,
    /// `OpConvertUToF`.
    UToF,
    /// `OpConvertSToF`.
    SToF,
}

/// The two-result integer operations (result struct of two members).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WideOp {
    IAddCarry,
    ISubBorrow,
    UMulExtended,
    SMulExtended,
}

/// Atomic read-modify-write operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    IIncrement,
    IDecrement,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FAdd,
    FMin,
    FMax,
}

/// One step of an access chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A constant byte offset.
    Const(u64),
    /// `index × stride` bytes, the index read from a slot as a `bits`-wide integer; `count`
    /// is the length of the array, vector or matrix it indexes (0: unbounded, a runtime array
    /// or a pointer's element), which the sanitizer checks it against ([`crate::check::index`]).
    Dyn {
        index: Slot,
        bits: u32,
        signed: bool,
        stride: u64,
        count: u32,
    },
}

/// One lowered instruction (or one component of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `dst = src` (composite construction, extraction, shuffles, `OpCopyObject`, ...).
    Copy { dst: Slot, src: Slot },
    /// Integer binary operation on `bits`-wide values.
    IntBin {
        op: IntBin,
        bits: u32,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    /// Integer unary operation.
    IntUn {
        op: IntUn,
        bits: u32,
        dst: Slot,
        a: Slot,
    },
    /// Integer comparison, result 0 or 1.
    IntCmp {
        op: IntCmp,
        bits: u32,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    /// Integer ternary operation.
    IntTern {
        op: IntTern,
        bits: u32,
        dst: Slot,
        a: Slot,
        b: Slot,
        c: Slot,
    },
    /// `OpBitFieldInsert`.
    BitFieldInsert {
        bits: u32,
        dst: Slot,
        base: Slot,
        insert: Slot,
        offset: Slot,
        count: Slot,
    },
    /// Two-result integer operation: `lo`, `hi` (or result and carry/borrow).
    Wide {
        op: WideOp,
        bits: u32,
        lo: Slot,
        hi: Slot,
        a: Slot,
        b: Slot,
    },
    /// Float binary operation.
    FloatBin {
        op: FloatBin,
        bits: u32,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    /// `OpFNegate`.
    FNegate { bits: u32, dst: Slot, a: Slot },
    /// `OpDot` (and one entry of a matrix product): `Σ a[i] × b[i]`.
    FDot {
        bits: u32,
        dst: Slot,
        a: Box<[Slot]>,
        b: Box<[Slot]>,
    },
    /// A component-wise GLSL.std.450 instruction (number `inst`) on `argc` operands.
    Glsl {
        inst: u32,
        bits: u32,
        dst: Slot,
        args: [Slot; 3],
        argc: u32,
    },
    /// A GLSL.std.450 instruction over whole vectors or matrices (Length, Cross, Pack*, ...):
    /// operands as (first slot, components); `eta_bits` is Refract's eta width.
    GlslVector {
        inst: u32,
        bits: u32,
        dst: Slot,
        dst_count: u32,
        args: Box<[(Slot, u32)]>,
        eta_bits: u32,
    },
    /// Float comparison, result 0 or 1.
    FloatCmp {
        op: FloatCmp,
        bits: u32,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    /// `GLSL.std.450 Ldexp`.
    Ldexp {
        bits: u32,
        dst: Slot,
        a: Slot,
        exp: Slot,
        exp_bits: u32,
    },
    /// `GLSL.std.450 Frexp`/`FrexpStruct`: mantissa to `dst`, exponent to `exp`.
    Frexp {
        bits: u32,
        dst: Slot,
        exp: Slot,
        exp_bits: u32,
        a: Slot,
    },
    /// `GLSL.std.450 Modf`/`ModfStruct`: fraction to `dst`, whole part to `whole`.
    Modf {
        bits: u32,
        dst: Slot,
        whole: Slot,
        a: Slot,
    },
    /// Conversion from `from` bits to `to` bits.
    Convert {
        op: Conv,
        from: u32,
        to: u32,
        dst: Slot,
        a: Slot,
    },
    /// `dst = cond ? a : b`.
    Select {
        dst: Slot,
        cond: Slot,
        a: Slot,
        b: Slot,
    },
    /// `OpBitcast` between values of equal size but different component counts.
    Bitcast {
        dst: Slot,
        dst_count: u32,
        dst_bits: u32,
        src: Slot,
        src_count: u32,
        src_bits: u32,
    },
    /// `OpVectorExtractDynamic`: `dst = base[index]` (out of range: 0).
    ExtractDynamic {
        dst: Slot,
        base: Slot,
        count: u32,
        index: Slot,
        index_bits: u32,
    },
    /// `OpVectorInsertDynamic` after `dst` was copied from the vector: `dst[index] = value`.
    InsertDynamic {
        dst: Slot,
        count: u32,
        value: Slot,
        index: Slot,
        index_bits: u32,
    },
    /// Load a value of type `ty` through the pointer in `ptr`.
    Load { dst: Slot, ptr: Slot, ty: TypeIdx },
    /// Load through a pointer every lane holds alike (a constant pointer into push constants or
    /// workgroup memory): one read, broadcast to the active lanes.
    LoadUniform { dst: Slot, ptr: Slot, ty: TypeIdx },
    /// Store the value in `src..` of type `ty` through the pointer in `ptr`.
    Store { ptr: Slot, src: Slot, ty: TypeIdx },
    /// `dst = base + steps` (byte offsets).
    AccessChain {
        dst: Slot,
        base: Slot,
        steps: Box<[Step]>,
    },
    /// The first index of an access chain into a descriptor array: `dst` = a pointer to the
    /// start of element `index` (a `bits`-wide integer) of [`super::Program::descriptor_arrays`]
    /// entry `array` (for images and samplers, the element's handle); an unbound or
    /// out-of-range element gives a pointer (handle) whose every use is a finding naming the
    /// binding and index ([`crate::run::memory::unbound_pointer`],
    /// [`crate::run::memory::unbound_sampler`]).
    Descriptor {
        dst: Slot,
        array: u32,
        index: Slot,
        bits: u32,
        signed: bool,
    },
    /// Copy `size` bytes from `*src` to `*dst` (`OpCopyMemory`).
    CopyMemory { dst: Slot, src: Slot, size: u64 },
    /// `OpArrayLength`: elements of the runtime array at `offset` in the block `ptr` points to.
    ArrayLength {
        dst: Slot,
        ptr: Slot,
        offset: u64,
        stride: u64,
    },
    /// Atomic operation on a `bits`-wide integer (or float for `FAdd`/`FMin`/`FMax`).
    /// `sync`: whether it releases or acquires buffer memory at device scope, for the race
    /// check ([`crate::check::sync::sync_of`]).
    Atomic {
        op: AtomicOp,
        bits: u32,
        float: bool,
        sync: u8,
        dst: Slot,
        ptr: Slot,
        value: Slot,
        comparator: Slot,
    },
    /// A `Function` variable kept in memory, without initializer, comes into scope: its `bytes`
    /// bytes at `ptr` are undefined. Nothing runs; the uninitialised-value check marks them
    /// ([`crate::check::uninit`]).
    UndefMemory { ptr: Slot, bytes: u64 },
    /// Sanitizer: flags the lanes whose integer division or remainder of `a` by `b` is undefined
    /// (`b` = 0, or the most negative value divided by -1 when `signed`) ([`crate::check::arith`]).
    CheckDivision {
        bits: u32,
        signed: bool,
        a: Slot,
        b: Slot,
    },
    /// Sanitizer: flags the lanes whose shift amount is not below `bits`.
    CheckShift { bits: u32, shift: Slot },
    /// Sanitizer: flags the lanes where an `OpSRem`/`OpSMod` has a negative operand (a
    /// warning, [`crate::check::arith`]).
    CheckRemainderSign { bits: u32, a: Slot, b: Slot },
    /// Sanitizer: flags the lanes where `op` (Add, Sub, Mul, ShiftLeft; OpSNegate as 0 - b)
    /// wraps although decorated NoSignedWrap (`signed`) or NoUnsignedWrap (`unsigned`)
    /// ([`crate::check::arith`]).
    CheckWrap {
        op: IntBin,
        bits: u32,
        a: Slot,
        b: Slot,
        signed: bool,
        unsigned: bool,
    },
    /// Sanitizer: flags the lanes whose operands of GLSL.std.450 instruction `inst` lie outside
    /// its domain (a warning, [`crate::check::domain`]).
    CheckDomain {
        inst: u32,
        bits: u32,
        args: [Slot; 3],
        argc: u32,
    },
    /// `OpControlBarrier` with Workgroup execution scope: wait for every subgroup.
    /// `semantics` are its Memory Semantics with those of the `OpMemoryBarrier`s just before
    /// it: which storage classes it orders for the race check ([`crate::check::race`]);
    /// `sync` the [`crate::check::sync`] flags of both, for its part as a memory barrier.
    ControlBarrier { semantics: u32, sync: u8 },
    /// `OpMemoryBarrier`: executes nothing; for the race check, a release and/or acquire
    /// barrier with [`crate::check::sync`] flags `sync` ([`crate::check::sync`]).
    Fence { sync: u8 },
    /// `OpControlBarrier` with Subgroup execution scope: nothing to wait for (the tangle is the
    /// subgroup's invocations executing together); checked for uniformity
    /// ([`crate::check::barrier`]) and, with `semantics`, orders accesses within the subgroup.
    SubgroupBarrier { semantics: u32 },
    /// A function variable without an initializer, held in registers (or an `OpUndef` in a
    /// function): its `count` slots from `dst` hold an undefined value. Executes nothing; the
    /// uninitialised-value check marks them ([`crate::check::uninit`]).
    Undef { dst: Slot, count: u32 },
    /// `OpFunctionCall`: copy `args` (dst, src) into the callee's parameters, run it, and put the
    /// return value in `dst..dst+count`.
    Call {
        func: FuncIdx,
        dst: Slot,
        count: u32,
        args: Box<[(Slot, Slot)]>,
    },
    /// A group instruction with Subgroup scope (`OpGroupNonUniform*`, rotate): [`crate::run::group`].
    Group(Box<crate::run::group::GroupInst>),
    /// An access of a per-invocation array held in slots: in the fast program only, made by
    /// [`crate::lower::promote_inlined`] ([`crate::wide::arrays`]).
    Array(Box<super::array::ArrayOp>),
    /// An integer dot product (`OpSDot`, …, `OpSUDotAccSat`): [`crate::run::dot`].
    Dot(Box<crate::run::dot::DotInst>),
    /// An image instruction (`OpImageRead`, `OpImageWrite`, `OpImageFetch`,
    /// `OpImageTexelPointer`, queries): [`crate::run::image`].
    Image(Box<crate::run::image::ImageInst>),
    /// A cooperative-matrix operation or check (load, store, MulAdd, scope checks):
    /// [`crate::run::coopmat`].
    Coopmat(Box<crate::run::coopmat::CoopmatInst>),
}

/// How a block ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Terminator {
    /// `OpBranch`.
    Branch(BlockIdx),
    /// `OpBranchConditional`.
    BranchConditional {
        cond: Slot,
        t: BlockIdx,
        f: BlockIdx,
    },
    /// `OpSwitch` on a `bits`-wide selector.
    Switch {
        selector: Slot,
        bits: u32,
        cases: Vec<(u64, BlockIdx)>,
        default: BlockIdx,
    },
    /// `OpReturn`.
    Return,
    /// `OpReturnValue` of `count` slots from `src`.
    ReturnValue { src: Slot, count: u32 },
    /// `OpKill`/`OpTerminateInvocation`: the invocations end.
    Kill,
    /// `OpUnreachable` (or a missing terminator).
    #[default]
    Unreachable,
}

impl Terminator {
    /// The branch targets, in the order the lowering lists them (a switch's default first).
    pub fn successors(&self) -> Vec<BlockIdx> {
        match self {
            Terminator::Branch(b) => vec![*b],
            Terminator::BranchConditional { t, f, .. } => vec![*t, *f],
            Terminator::Switch { cases, default, .. } => std::iter::once(*default)
                .chain(cases.iter().map(|c| c.1))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Op {
    /// The destination of a one-slot pure op (the ops a store into a register-promoted
    /// variable may write directly, see [`crate::lower::promote`]).
    pub fn simple_dst_mut(&mut self) -> Option<&mut Slot> {
        match self {
            Op::Copy { dst, .. }
            | Op::IntBin { dst, .. }
            | Op::IntCmp { dst, .. }
            | Op::IntUn { dst, .. }
            | Op::FloatBin { dst, .. }
            | Op::FloatCmp { dst, .. }
            | Op::FNegate { dst, .. }
            | Op::Convert { dst, .. }
            | Op::Select { dst, .. } => Some(dst),
            _ => None,
        }
    }

    /// If this one-slot pure op reads its own destination, the same op reading `tmp` instead
    /// (the executor copies the destination's lanes to `tmp` first).
    pub fn unaliased(&self, tmp: Slot) -> Option<Op> {
        let r = |s: Slot, d: Slot| if s == d { tmp } else { s };
        Some(match *self {
            Op::Copy { dst, src } if src == dst => Op::Copy { dst, src: tmp },
            Op::IntBin {
                op,
                bits,
                dst,
                a,
                b,
            } if a == dst || b == dst => Op::IntBin {
                op,
                bits,
                dst,
                a: r(a, dst),
                b: r(b, dst),
            },
            Op::IntCmp {
                op,
                bits,
                dst,
                a,
                b,
            } if a == dst || b == dst => Op::IntCmp {
                op,
                bits,
                dst,
                a: r(a, dst),
                b: r(b, dst),
            },
            Op::IntUn { op, bits, dst, a } if a == dst => Op::IntUn {
                op,
                bits,
                dst,
                a: tmp,
            },
            Op::FloatBin {
                op,
                bits,
                dst,
                a,
                b,
            } if a == dst || b == dst => Op::FloatBin {
                op,
                bits,
                dst,
                a: r(a, dst),
                b: r(b, dst),
            },
            Op::FloatCmp {
                op,
                bits,
                dst,
                a,
                b,
            } if a == dst || b == dst => Op::FloatCmp {
                op,
                bits,
                dst,
                a: r(a, dst),
                b: r(b, dst),
            },
            Op::FNegate { bits, dst, a } if a == dst => Op::FNegate { bits, dst, a: tmp },
            Op::Convert {
                op,
                from,
                to,
                dst,
                a,
            } if a == dst => Op::Convert {
                op,
                from,
                to,
                dst,
                a: tmp,
            },
            Op::Select { dst, cond, a, b } if cond == dst || a == dst || b == dst => Op::Select {
                dst,
                cond: r(cond, dst),
                a: r(a, dst),
                b: r(b, dst),
            },
            _ => return None,
        })
    }
}
