//! Random instruction typing, differentially (issue 3): a seeded generator builds compute
//! modules with a preamble of many types (bool, 8- to 64-bit integers of both signednesses,
//! 16- to 64-bit floats, their vectors, matrices, arrays, structs, and pointers in Function,
//! Private, Workgroup and StorageBuffer memory), constants, variables and storage-buffer
//! members of each, and a body of one to three instructions drawn from the executor's
//! instruction set: arithmetic, bit instructions, relational and logical, conversions,
//! composites, matrix products, memory and access chains, atomics (float ones included),
//! non-uniform group operations (rotate included), integer dot products and every GLSL.std.450
//! instruction. Operands and result types are mostly right, so about half the modules are
//! valid, and sometimes wrong (a near type: another width, signedness or component count; a
//! random type; an operand more or less; a literal out of range; undefined values and
//! specialization constants where constants are needed).
//!
//! Modules vary in environment (`vulkan1.3` mostly, `spv1.6`, and a few `spv1.5`, `spv1.3`,
//! `vulkan1.1` for the version-dependent rules), in variable-pointer capabilities, in the float
//! atomics' capabilities, and in whether Int8, Int16 and Float16 are declared (without them
//! the small types come from the storage capabilities only, and their uses are restricted).
//!
//! Each text is assembled with tangle's assembler (when it refuses one, `spirv-as` must refuse
//! it too), and tangle and `spirv-val` 2025.5 must give the binary the same verdict. Shapes
//! where tangle implements a rule SPIRV-Tools added after 2025.5 are not generated: wrong
//! integer dot products, and Workgroup scope on non-uniform operations other than rotate
//! outside Vulkan (see [`Gen::dot`] and [`Gen::group`]).
//!
//! Environment variables: `TANGLE_INSTR_RANDOM=20000` runs more modules than the default
//! (seeds from `TANGLE_INSTR_FIRST`, 0); `TANGLE_INSTR_SEED=n` runs the one module of seed `n`
//! and prints it; `TANGLE_INSTR_SHOW=n`
//! lists up to `n` disagreements (30); `TANGLE_INSTR_STATS=1` counts the first rule tangle
//! reports for invalid modules. Every text is also assembled by `spirv-as`, which must make the
//! same binary: the generator doubles as a differential test of tangle's assembler.

use std::collections::HashSet;
use tangle_reference::{par_map, spirv_as, spirv_val};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// Modules checked by default (a CI-sized run).
const DEFAULT_COUNT: u64 = 1500;

/// SplitMix64: small, seedable, good enough for shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// Storage classes the generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sc {
    Function,
    Private,
    Workgroup,
    StorageBuffer,
}

impl Sc {
    fn word(self) -> &'static str {
        match self {
            Sc::Function => "Function",
            Sc::Private => "Private",
            Sc::Workgroup => "Workgroup",
            Sc::StorageBuffer => "StorageBuffer",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Sc::Function => "Fn",
            Sc::Private => "Pv",
            Sc::Workgroup => "Wg",
            Sc::StorageBuffer => "Sb",
        }
    }
}

/// A type of the generated module, structurally (its name is derived from its shape, so a type
/// is declared once however often it is asked for).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Ty {
    Void,
    Bool,
    Int(u32, bool),
    Float(u32),
    Vector(Box<Ty>, u32),
    /// Column type, column count.
    Mat(Box<Ty>, u32),
    Arr(Box<Ty>, u32),
    RtArr(Box<Ty>),
    Struct(Vec<Ty>),
    /// The storage buffer's Block struct ([`block_members`]).
    Block,
    Ptr(Sc, Box<Ty>),
}

use Ty::*;

fn u32t() -> Ty {
    Int(32, false)
}

fn i32t() -> Ty {
    Int(32, true)
}

fn f32t() -> Ty {
    Float(32)
}

fn vec(c: Ty, n: u32) -> Ty {
    if n <= 1 {
        c
    } else {
        Vector(Box::new(c), n)
    }
}

fn mat(component: Ty, rows: u32, cols: u32) -> Ty {
    Mat(Box::new(Vector(Box::new(component), rows)), cols)
}

fn ptr(sc: Sc, t: Ty) -> Ty {
    Ptr(sc, Box::new(t))
}

/// The members of the storage buffer block, with their Offsets.
fn block_members() -> Vec<(Ty, u32)> {
    vec![
        (u32t(), 0),
        (i32t(), 4),
        (f32t(), 8),
        (vec(u32t(), 2), 16),
        (vec(f32t(), 4), 32),
        (Int(64, false), 48),
        (Int(64, true), 56),
        (Int(8, false), 64),
        (Int(8, true), 65),
        (Int(16, false), 66),
        (Int(16, true), 68),
        (Float(16), 70),
        (vec(Int(16, false), 2), 72),
        (vec(Float(16), 2), 76),
        (vec(Int(8, false), 4), 80),
        (Float(64), 88),
        (RtArr(Box::new(u32t())), 96),
    ]
}

/// The index of the block's runtime array.
const BLOCK_RTA: i64 = 16;

impl Ty {
    fn name(&self) -> String {
        match self {
            Void => "void".into(),
            Bool => "bool".into(),
            Int(w, false) => format!("u{w}"),
            Int(w, true) => format!("i{w}"),
            Float(w) => format!("f{w}"),
            Vector(c, n) => format!("v{n}{}", c.name()),
            Mat(c, n) => format!("m{n}{}", c.name()),
            Arr(e, n) => format!("a{n}{}", e.name()),
            RtArr(e) => format!("ra{}", e.name()),
            Struct(ms) => {
                let names: Vec<String> = ms.iter().map(Ty::name).collect();
                format!("s{}_{}", ms.len(), names.join("_"))
            }
            Block => "Block".into(),
            Ptr(sc, t) => format!("p{}_{}", sc.short(), t.name()),
        }
    }

    /// The scalar of a scalar, or the component of a vector.
    fn component(&self) -> &Ty {
        match self {
            Vector(c, _) => c,
            t => t,
        }
    }

    /// 1 for scalars, the count for vectors.
    fn count(&self) -> u32 {
        match self {
            Vector(_, n) => *n,
            _ => 1,
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Bool | Int(..) | Float(_))
    }

    /// Whether a Function variable of this type can be declared (and so a value loaded).
    fn storable(&self) -> bool {
        match self {
            Void | Block | RtArr(_) | Ptr(..) => false,
            Vector(c, _) | Mat(c, _) | Arr(c, _) => c.storable(),
            Struct(ms) => ms.iter().all(Ty::storable),
            _ => true,
        }
    }

    /// The type one literal index reaches, if in range.
    fn member(&self, index: u32) -> Option<Ty> {
        match self {
            Vector(c, n) | Mat(c, n) | Arr(c, n) if index < *n => Some((**c).clone()),
            RtArr(e) => Some((**e).clone()),
            Struct(ms) => ms.get(index as usize).cloned(),
            Block => block_members().get(index as usize).map(|m| m.0.clone()),
            _ => None,
        }
    }

    /// How many members a composite has (`None` for non-composites).
    fn arity(&self) -> Option<u32> {
        match self {
            Vector(_, n) | Mat(_, n) | Arr(_, n) => Some(*n),
            Struct(ms) => Some(ms.len() as u32),
            Block => Some(block_members().len() as u32),
            RtArr(_) => Some(4),
            _ => None,
        }
    }
}

/// One operand of a generated instruction.
#[derive(Clone, Debug)]
enum Arg {
    /// Any value of this type.
    Val(Ty),
    /// An `OpConstant` of this scalar type and value.
    Const(Ty, i64),
    /// Literal or fixed text that mutations leave alone.
    Lit(String),
}

/// An instruction before its operands are given values.
struct Inst {
    op: &'static str,
    result: Option<Ty>,
    args: Vec<Arg>,
    /// Whether mutations may change it (dot products and some scopes are exempt, see
    /// [`Gen::build`]).
    mutable: bool,
}

fn inst(op: &'static str, result: Option<Ty>, args: Vec<Arg>) -> Inst {
    Inst {
        op,
        result,
        args,
        mutable: true,
    }
}

const FLOAT_ARITH: &[&str] = &[
    "OpFAdd",
    "OpFSub",
    "OpFMul",
    "OpFDiv",
    "OpFRem",
    "OpFMod",
    "OpFNegate",
];
const INT_ARITH: &[&str] = &[
    "OpIAdd",
    "OpISub",
    "OpIMul",
    "OpSDiv",
    "OpSRem",
    "OpSMod",
    "OpSNegate",
    "OpUDiv",
    "OpUMod",
    "OpIAddCarry",
    "OpISubBorrow",
    "OpUMulExtended",
    "OpSMulExtended",
];
const MATRIX: &[&str] = &[
    "OpDot",
    "OpVectorTimesScalar",
    "OpMatrixTimesScalar",
    "OpVectorTimesMatrix",
    "OpMatrixTimesVector",
    "OpMatrixTimesMatrix",
    "OpOuterProduct",
    "OpTranspose",
];
const BITWISE: &[&str] = &[
    "OpShiftRightLogical",
    "OpShiftRightArithmetic",
    "OpShiftLeftLogical",
    "OpBitwiseOr",
    "OpBitwiseXor",
    "OpBitwiseAnd",
    "OpNot",
    "OpBitFieldInsert",
    "OpBitFieldSExtract",
    "OpBitFieldUExtract",
    "OpBitReverse",
    "OpBitCount",
];
const RELATIONAL: &[&str] = &[
    "OpAny",
    "OpAll",
    "OpIsNan",
    "OpIsInf",
    "OpLogicalEqual",
    "OpLogicalNotEqual",
    "OpLogicalOr",
    "OpLogicalAnd",
    "OpLogicalNot",
    "OpSelect",
    "OpIEqual",
    "OpINotEqual",
    "OpUGreaterThan",
    "OpSGreaterThan",
    "OpUGreaterThanEqual",
    "OpSGreaterThanEqual",
    "OpULessThan",
    "OpSLessThan",
    "OpULessThanEqual",
    "OpSLessThanEqual",
    "OpFOrdEqual",
    "OpFUnordEqual",
    "OpFOrdNotEqual",
    "OpFUnordNotEqual",
    "OpFOrdLessThan",
    "OpFUnordLessThan",
    "OpFOrdGreaterThan",
    "OpFUnordGreaterThan",
    "OpFOrdLessThanEqual",
    "OpFUnordLessThanEqual",
    "OpFOrdGreaterThanEqual",
    "OpFUnordGreaterThanEqual",
];
const CONVERSION: &[&str] = &[
    "OpConvertFToU",
    "OpConvertFToS",
    "OpConvertSToF",
    "OpConvertUToF",
    "OpUConvert",
    "OpSConvert",
    "OpFConvert",
    "OpBitcast",
    "OpQuantizeToF16",
];
const COMPOSITE: &[&str] = &[
    "OpCompositeExtract",
    "OpCompositeInsert",
    "OpCompositeConstruct",
    "OpVectorShuffle",
    "OpVectorExtractDynamic",
    "OpVectorInsertDynamic",
    "OpCopyObject",
];
const MEMORY: &[&str] = &[
    "OpLoad",
    "OpStore",
    "OpCopyMemory",
    "OpAccessChain",
    "OpInBoundsAccessChain",
    "OpPtrAccessChain",
];
const ATOMIC: &[&str] = &[
    "OpAtomicLoad",
    "OpAtomicStore",
    "OpAtomicExchange",
    "OpAtomicCompareExchange",
    "OpAtomicIIncrement",
    "OpAtomicIDecrement",
    "OpAtomicIAdd",
    "OpAtomicISub",
    "OpAtomicSMin",
    "OpAtomicUMin",
    "OpAtomicSMax",
    "OpAtomicUMax",
    "OpAtomicAnd",
    "OpAtomicOr",
    "OpAtomicXor",
    "OpAtomicFAddEXT",
    "OpAtomicFMinEXT",
    "OpAtomicFMaxEXT",
];
const GROUP: &[&str] = &[
    "OpGroupNonUniformElect",
    "OpGroupNonUniformAll",
    "OpGroupNonUniformAny",
    "OpGroupNonUniformAllEqual",
    "OpGroupNonUniformBroadcast",
    "OpGroupNonUniformBroadcastFirst",
    "OpGroupNonUniformBallot",
    "OpGroupNonUniformInverseBallot",
    "OpGroupNonUniformBallotBitExtract",
    "OpGroupNonUniformBallotBitCount",
    "OpGroupNonUniformBallotFindLSB",
    "OpGroupNonUniformBallotFindMSB",
    "OpGroupNonUniformShuffle",
    "OpGroupNonUniformShuffleXor",
    "OpGroupNonUniformShuffleUp",
    "OpGroupNonUniformShuffleDown",
    "OpGroupNonUniformIAdd",
    "OpGroupNonUniformFAdd",
    "OpGroupNonUniformIMul",
    "OpGroupNonUniformFMul",
    "OpGroupNonUniformSMin",
    "OpGroupNonUniformUMin",
    "OpGroupNonUniformFMin",
    "OpGroupNonUniformSMax",
    "OpGroupNonUniformUMax",
    "OpGroupNonUniformFMax",
    "OpGroupNonUniformBitwiseAnd",
    "OpGroupNonUniformBitwiseOr",
    "OpGroupNonUniformBitwiseXor",
    "OpGroupNonUniformLogicalAnd",
    "OpGroupNonUniformLogicalOr",
    "OpGroupNonUniformLogicalXor",
    "OpGroupNonUniformQuadBroadcast",
    "OpGroupNonUniformQuadSwap",
    "OpGroupNonUniformRotateKHR",
];
const DOT: &[&str] = &[
    "OpSDot",
    "OpUDot",
    "OpSUDot",
    "OpSDotAccSat",
    "OpUDotAccSat",
    "OpSUDotAccSat",
];
/// Every GLSL.std.450 instruction, by name.
const GLSL: &[&str] = &[
    "Round",
    "RoundEven",
    "Trunc",
    "FAbs",
    "SAbs",
    "FSign",
    "SSign",
    "Floor",
    "Ceil",
    "Fract",
    "Radians",
    "Degrees",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Tanh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Atan2",
    "Pow",
    "Exp",
    "Log",
    "Exp2",
    "Log2",
    "Sqrt",
    "InverseSqrt",
    "Determinant",
    "MatrixInverse",
    "Modf",
    "ModfStruct",
    "FMin",
    "UMin",
    "SMin",
    "FMax",
    "UMax",
    "SMax",
    "FClamp",
    "UClamp",
    "SClamp",
    "FMix",
    "IMix",
    "Step",
    "SmoothStep",
    "Fma",
    "Frexp",
    "FrexpStruct",
    "Ldexp",
    "PackSnorm4x8",
    "PackUnorm4x8",
    "PackSnorm2x16",
    "PackUnorm2x16",
    "PackHalf2x16",
    "PackDouble2x32",
    "UnpackSnorm2x16",
    "UnpackUnorm2x16",
    "UnpackHalf2x16",
    "UnpackSnorm4x8",
    "UnpackUnorm4x8",
    "UnpackDouble2x32",
    "Length",
    "Distance",
    "Cross",
    "Normalize",
    "FaceForward",
    "Reflect",
    "Refract",
    "FindILsb",
    "FindSMsb",
    "FindUMsb",
    "InterpolateAtCentroid",
    "InterpolateAtSample",
    "InterpolateAtOffset",
    "NMin",
    "NMax",
    "NClamp",
];

/// The families with their weights.
const FAMILIES: &[(&[&str], usize)] = &[
    (FLOAT_ARITH, 6),
    (INT_ARITH, 8),
    (MATRIX, 6),
    (BITWISE, 8),
    (RELATIONAL, 10),
    (CONVERSION, 8),
    (COMPOSITE, 10),
    (MEMORY, 8),
    (ATOMIC, 8),
    (GROUP, 10),
    (DOT, 3),
    (GLSL, 14),
];

/// One module being generated.
struct Gen {
    rng: Rng,
    /// The target environment (`vulkan1.3` mostly; `spv1.6`, and a few older ones whose
    /// version-dependent rules differ).
    env: &'static str,
    vulkan: bool,
    /// The SPIR-V version the environment assembles to.
    version: (u32, u32),
    /// `VariablePointers` (2), `VariablePointersStorageBuffer` (1) or neither (0).
    variable_pointers: u8,
    /// Whether Int8, Int16 and Float16 are declared; without them those types come from the
    /// storage capabilities only, and their uses are restricted.
    int8: bool,
    int16: bool,
    float16: bool,
    /// Whether the float atomics' capabilities and extensions are declared.
    atomic_float: bool,
    /// Whether StorageBuffer pointer types are decorated with ArrayStride (as OpPtrAccessChain
    /// bases need).
    pointer_stride: bool,
    /// Whether the module uses the Vulkan memory model (so loads and stores may make their
    /// pointers available or visible).
    vulkan_memory_model: bool,
    annotations: Vec<String>,
    /// Types and constants, in dependency order.
    decls: Vec<String>,
    declared: HashSet<String>,
    globals: Vec<String>,
    interface: Vec<String>,
    /// The entry block's OpVariables, and the loads and access chains after them.
    locals: Vec<String>,
    prelude: Vec<String>,
    body: Vec<String>,
    /// Values defined by the body, with their types.
    results: Vec<(String, Ty)>,
    next: u32,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x1234_5678);
        let (env, version) = match rng.below(20) {
            0..=13 => ("vulkan1.3", (1, 6)),
            14..=16 => ("spv1.6", (1, 6)),
            17 => ("spv1.5", (1, 5)),
            18 => ("spv1.3", (1, 3)),
            _ => ("vulkan1.1", (1, 3)),
        };
        let vulkan = env.starts_with("vulkan");
        let variable_pointers = match rng.below(10) {
            0..=1 => 2,
            2 => 1,
            _ => 0,
        };
        // One module in five restricts the small types.
        let small = rng.chance(20);
        let int8 = !small || rng.chance(50);
        let int16 = !small || rng.chance(50);
        let float16 = !small || rng.chance(50);
        let atomic_float = rng.chance(50);
        let pointer_stride = rng.chance(50);
        let vulkan_memory_model = rng.chance(30);
        Gen {
            rng,
            env,
            vulkan,
            version,
            variable_pointers,
            int8,
            int16,
            float16,
            atomic_float,
            pointer_stride,
            vulkan_memory_model,
            annotations: Vec::new(),
            decls: Vec::new(),
            declared: HashSet::new(),
            globals: Vec::new(),
            interface: Vec::new(),
            locals: Vec::new(),
            prelude: Vec::new(),
            body: Vec::new(),
            results: Vec::new(),
            next: 0,
        }
    }

    fn env(&self) -> &'static str {
        self.env
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%r{}", self.next)
    }

    fn declare(&mut self, key: String, line: String) -> bool {
        if self.declared.insert(key) {
            self.decls.push(line);
            true
        } else {
            false
        }
    }

    /// Declares a type (and what it needs) once; returns its id.
    fn ty(&mut self, t: &Ty) -> String {
        let name = t.name();
        if self.declared.contains(&name) {
            return format!("%{name}");
        }
        let line = match t {
            Void => "OpTypeVoid".to_string(),
            Bool => "OpTypeBool".to_string(),
            Int(w, s) => format!("OpTypeInt {w} {}", u32::from(*s)),
            Float(w) => format!("OpTypeFloat {w}"),
            Vector(c, n) => format!("OpTypeVector {} {n}", self.ty(c)),
            Mat(c, n) => format!("OpTypeMatrix {} {n}", self.ty(c)),
            Arr(e, n) => {
                let e = self.ty(e);
                let len = self.fixed_constant(&u32t(), i64::from(*n));
                format!("OpTypeArray {e} {len}")
            }
            RtArr(e) => {
                let e = self.ty(e);
                self.annotations
                    .push(format!("OpDecorate %{name} ArrayStride 4"));
                format!("OpTypeRuntimeArray {e}")
            }
            Struct(ms) => {
                let ids: Vec<String> = ms.iter().map(|m| self.ty(m)).collect();
                format!("OpTypeStruct {}", ids.join(" "))
            }
            Block => {
                let mut ids = Vec::new();
                for (i, (m, offset)) in block_members().iter().enumerate() {
                    ids.push(self.ty(m));
                    self.annotations
                        .push(format!("OpMemberDecorate %Block {i} Offset {offset}"));
                }
                self.annotations.push("OpDecorate %Block Block".into());
                format!("OpTypeStruct {}", ids.join(" "))
            }
            Ptr(sc, p) => {
                if *sc == Sc::StorageBuffer && self.pointer_stride {
                    self.annotations
                        .push(format!("OpDecorate %{name} ArrayStride 16"));
                }
                format!("OpTypePointer {} {}", sc.word(), self.ty(p))
            }
        };
        self.declare(name.clone(), format!("%{name} = {line}"));
        format!("%{name}")
    }

    /// An `OpConstant` (or `OpConstantTrue`/`False`) of a scalar type.
    fn constant(&mut self, t: &Ty, v: i64) -> String {
        // Now and then a specialization constant (not a "constant" where an OpConstant is
        // required: scopes, struct indexes).
        let spec = self.rng.chance(4);
        self.constant_as(t, v, spec)
    }

    /// An `OpConstant`, never a specialization constant.
    fn fixed_constant(&mut self, t: &Ty, v: i64) -> String {
        self.constant_as(t, v, false)
    }

    fn constant_as(&mut self, t: &Ty, v: i64, spec: bool) -> String {
        let id = self.ty(t);
        let text = match t {
            Bool => {
                let (name, op) = if v != 0 {
                    ("true", "OpConstantTrue")
                } else {
                    ("false", "OpConstantFalse")
                };
                self.declare(name.into(), format!("%{name} = {op} {id}"));
                return format!("%{name}");
            }
            Float(_) => format!("{v}.5"),
            Int(_, false) if v < 0 => return self.null(t),
            _ => v.to_string(),
        };
        let (prefix, op) = if spec {
            ("sc", "OpSpecConstant")
        } else {
            ("c", "OpConstant")
        };
        let name = format!("{prefix}_{}_{}", t.name(), v.to_string().replace('-', "m"));
        self.declare(name.clone(), format!("%{name} = {op} {id} {text}"));
        format!("%{name}")
    }

    fn undef(&mut self, t: &Ty) -> String {
        let id = self.ty(t);
        let name = format!("undef_{}", t.name());
        self.declare(name.clone(), format!("%{name} = OpUndef {id}"));
        format!("%{name}")
    }

    fn null(&mut self, t: &Ty) -> String {
        let id = self.ty(t);
        let name = format!("null_{}", t.name());
        self.declare(name.clone(), format!("%{name} = OpConstantNull {id}"));
        format!("%{name}")
    }

    /// A constant of any storable type (composites built from constants).
    fn constant_of(&mut self, t: &Ty) -> String {
        if t.is_scalar() {
            let v = self.rng.pick(&[1, 2, 3, 5, 0, -1]);
            return self.constant(t, v);
        }
        let parts: Vec<Ty> = match t {
            Vector(c, n) | Mat(c, n) | Arr(c, n) => (0..*n).map(|_| (**c).clone()).collect(),
            Struct(ms) => ms.clone(),
            _ => return self.null(t),
        };
        let ids: Vec<String> = parts.iter().map(|p| self.constant_of(p)).collect();
        let id = self.ty(t);
        self.next += 1;
        let name = format!("k{}", self.next);
        self.declare(
            name.clone(),
            format!("%{name} = OpConstantComposite {id} {}", ids.join(" ")),
        );
        format!("%{name}")
    }

    /// A variable of `sc` holding `t` (the storage buffer holds the block only).
    fn variable(&mut self, sc: Sc, t: &Ty) -> String {
        let p = self.ty(&ptr(sc, t.clone()));
        let name = format!("var{}_{}", sc.short(), t.name());
        if self.declared.insert(name.clone()) {
            let line = format!("%{name} = OpVariable {p} {}", sc.word());
            match sc {
                Sc::Function => self.locals.push(line),
                _ => {
                    if sc == Sc::StorageBuffer {
                        self.annotations
                            .push(format!("OpDecorate %{name} DescriptorSet 0"));
                        self.annotations
                            .push(format!("OpDecorate %{name} Binding 0"));
                    }
                    self.globals.push(line);
                    self.interface.push(format!("%{name}"));
                }
            }
        }
        format!("%{name}")
    }

    /// A pointer to `t` in `sc`.
    fn pointer(&mut self, sc: Sc, t: &Ty) -> String {
        let want = ptr(sc, t.clone());
        let earlier: Vec<String> = self
            .results
            .iter()
            .filter(|(_, rt)| *rt == want)
            .map(|(n, _)| n.clone())
            .collect();
        if !earlier.is_empty() && self.rng.chance(30) {
            return self.rng.pick(&earlier);
        }
        if sc == Sc::StorageBuffer {
            if *t == Block {
                return self.variable(sc, &Block);
            }
            let members = block_members();
            let index = members.iter().position(|(m, _)| m == t);
            // The runtime array's element, or a member.
            let (name, indexes) = match index {
                _ if *t == u32t() && self.rng.chance(30) => ("sbe".to_string(), vec![BLOCK_RTA, 1]),
                Some(i) => (format!("sbm{i}"), vec![i as i64]),
                // Other types live in Workgroup memory instead.
                None => return self.pointer(Sc::Workgroup, t),
            };
            let base = self.variable(sc, &Block);
            let p = self.ty(&want);
            let ids: Vec<String> = indexes
                .iter()
                .map(|i| self.fixed_constant(&u32t(), *i))
                .collect();
            if self.declared.insert(name.clone()) {
                self.prelude.push(format!(
                    "%{name} = OpAccessChain {p} {base} {}",
                    ids.join(" ")
                ));
            }
            return format!("%{name}");
        }
        // Variables may hold pointers (with variable pointers), but not blocks.
        if !t.storable() && !matches!(t, Ptr(..)) {
            return self.variable(Sc::StorageBuffer, &Block);
        }
        self.variable(sc, t)
    }

    /// A value of type `t`: an earlier result, a load from a Function variable, or a constant.
    fn value(&mut self, t: &Ty) -> String {
        if let Ptr(sc, p) = t {
            if self.rng.chance(8) {
                return self.null(t);
            }
            return self.pointer(*sc, p);
        }
        if !t.storable() {
            // No value of this type can be made; a pointer to the block stands in.
            return self.variable(Sc::StorageBuffer, &Block);
        }
        let earlier: Vec<String> = self
            .results
            .iter()
            .filter(|(_, rt)| rt == t)
            .map(|(n, _)| n.clone())
            .collect();
        // Restricted small types are loaded from the storage buffer (their only valid source);
        // other block member types sometimes are.
        let member = block_members().iter().any(|(m, _)| m == t);
        if member && (self.restricted(t) || self.rng.chance(15)) {
            let p = self.pointer(Sc::StorageBuffer, t);
            let id = self.ty(t);
            let name = format!("sbl_{}", t.name());
            if self.declared.insert(name.clone()) {
                self.prelude.push(format!("%{name} = OpLoad {id} {p}"));
            }
            return format!("%{name}");
        }
        match self.rng.below(100) {
            0..=24 if !earlier.is_empty() => self.rng.pick(&earlier),
            0..=54 => {
                let var = self.variable(Sc::Function, t);
                let id = self.ty(t);
                let name = format!("ld_{}", t.name());
                if self.declared.insert(name.clone()) {
                    self.prelude.push(format!("%{name} = OpLoad {id} {var}"));
                }
                format!("%{name}")
            }
            55..=93 => self.constant_of(t),
            94 | 95 => self.undef(t),
            _ => self.null(t),
        }
    }

    /// Whether the type holds a small type this module declares through a storage capability
    /// only.
    fn restricted(&self, t: &Ty) -> bool {
        match t {
            Int(8, _) => !self.int8,
            Int(16, _) => !self.int16,
            Float(16) => !self.float16,
            Vector(c, _) | Mat(c, _) | Arr(c, _) | RtArr(c) | Ptr(_, c) => self.restricted(c),
            Struct(ms) => ms.iter().any(|m| self.restricted(m)),
            _ => false,
        }
    }

    // ---- type choices ----

    fn int_width(&mut self) -> u32 {
        self.rng.pick(&[32, 32, 8, 16, 64])
    }

    fn float_width(&mut self) -> u32 {
        self.rng.pick(&[32, 32, 16, 64])
    }

    fn count(&mut self) -> u32 {
        self.rng.pick(&[1, 1, 2, 3, 4])
    }

    fn int(&mut self) -> Ty {
        let w = self.int_width();
        Int(w, self.rng.chance(50))
    }

    fn int_of(&mut self, w: u32) -> Ty {
        Int(w, self.rng.chance(50))
    }

    fn scalar(&mut self) -> Ty {
        match self.rng.below(5) {
            0 => Bool,
            1 | 2 => self.int(),
            _ => Float(self.float_width()),
        }
    }

    /// A random scalar or vector.
    fn scalar_or_vector(&mut self) -> Ty {
        let s = self.scalar();
        let n = self.count();
        vec(s, n)
    }

    fn float_matrix(&mut self) -> Ty {
        let w = if self.rng.chance(80) {
            32
        } else {
            self.rng.pick(&[16, 64])
        };
        let rows = 2 + self.rng.below(3) as u32;
        let cols = 2 + self.rng.below(3) as u32;
        mat(Float(w), rows, cols)
    }

    /// Any type a value can have, for wrong operands and result types.
    fn random_type(&mut self) -> Ty {
        match self.rng.below(12) {
            0..=5 => self.scalar_or_vector(),
            6 => self.float_matrix(),
            7 => {
                let e = self.scalar_or_vector();
                Arr(Box::new(e), 1 + self.rng.below(4) as u32)
            }
            8 => {
                let a = self.scalar_or_vector();
                let b = self.scalar_or_vector();
                Struct(vec![a, b])
            }
            9 | 10 => {
                let sc = self
                    .rng
                    .pick(&[Sc::Function, Sc::Workgroup, Sc::StorageBuffer]);
                let t = if sc == Sc::StorageBuffer {
                    self.rng.pick(&block_members()).0
                } else {
                    self.scalar_or_vector()
                };
                if matches!(t, RtArr(_)) {
                    ptr(Sc::StorageBuffer, Block)
                } else {
                    ptr(sc, t)
                }
            }
            _ => Void,
        }
    }

    /// A type near `t`: another width, signedness, kind or component count.
    fn near(&mut self, t: &Ty) -> Ty {
        match t {
            Int(w, s) => match self.rng.below(5) {
                0 => Int(self.other_int_width(*w), *s),
                1 => Int(*w, !s),
                2 => Float(if *w == 8 { 32 } else { *w }),
                3 => Bool,
                _ => vec(t.clone(), 2 + self.rng.below(3) as u32),
            },
            Float(w) => match self.rng.below(4) {
                0 => Float(self.rng.pick(&[16, 32, 64])),
                1 => Int(*w, self.rng.chance(50)),
                2 => Bool,
                _ => vec(t.clone(), 2 + self.rng.below(3) as u32),
            },
            Bool => match self.rng.below(3) {
                0 => u32t(),
                1 => Float(32),
                _ => vec(Bool, 2 + self.rng.below(3) as u32),
            },
            Vector(c, n) => match self.rng.below(3) {
                0 => vec((**c).clone(), self.other_count(*n)),
                1 => {
                    let c = self.near(c);
                    vec(c.component().clone(), *n)
                }
                _ => (**c).clone(),
            },
            Mat(c, n) => match self.rng.below(3) {
                0 => Mat(c.clone(), self.other_count(*n)),
                1 => mat(c.component().clone(), self.other_count(c.count()), *n),
                _ => (**c).clone(),
            },
            Arr(e, n) => match self.rng.below(3) {
                0 => Arr(e.clone(), n + 1),
                1 => {
                    let near = self.near(e);
                    if near.storable() {
                        Arr(Box::new(near), *n)
                    } else {
                        (**e).clone()
                    }
                }
                _ => (**e).clone(),
            },
            Struct(ms) => match self.rng.below(3) {
                0 if !ms.is_empty() => {
                    let mut ms = ms.clone();
                    let i = self.rng.below(ms.len());
                    let m = self.near(&ms[i]);
                    if m.storable() {
                        ms[i] = m;
                    }
                    Struct(ms)
                }
                1 => {
                    let mut ms = ms.clone();
                    ms.push(u32t());
                    Struct(ms)
                }
                _ => ms.first().cloned().unwrap_or(Bool),
            },
            Ptr(sc, p) => match self.rng.below(3) {
                0 => {
                    let other = self.rng.pick(&[Sc::Function, Sc::Private, Sc::Workgroup]);
                    ptr(
                        if other == *sc { Sc::Workgroup } else { other },
                        (**p).clone(),
                    )
                }
                1 => {
                    let p = self.near(p);
                    if p.storable() {
                        ptr(*sc, p)
                    } else {
                        ptr(*sc, u32t())
                    }
                }
                _ => (**p).clone(),
            },
            _ => self.random_type(),
        }
    }

    fn other_int_width(&mut self, w: u32) -> u32 {
        loop {
            let o = self.rng.pick(&[8, 16, 32, 64]);
            if o != w {
                return o;
            }
        }
    }

    fn other_count(&mut self, n: u32) -> u32 {
        loop {
            let o = 2 + self.rng.below(3) as u32;
            if o != n {
                return o;
            }
        }
    }

    /// A composite type to walk into.
    fn composite(&mut self) -> Ty {
        match self.rng.below(4) {
            0 => {
                let s = self.scalar();
                vec(s, 2 + self.rng.below(3) as u32)
            }
            1 => self.float_matrix(),
            2 => {
                let e = self.scalar_or_vector();
                Arr(Box::new(e), 1 + self.rng.below(4) as u32)
            }
            _ => {
                let a = self.scalar_or_vector();
                let b = if self.rng.chance(30) {
                    let e = self.scalar();
                    Arr(Box::new(e), 2)
                } else {
                    self.scalar_or_vector()
                };
                Struct(vec![a, b])
            }
        }
    }

    /// A valid path of literal indexes into `t` (one or two deep), and the type it reaches.
    fn path(&mut self, t: &Ty) -> (Vec<u32>, Ty) {
        let mut current = t.clone();
        let mut path = Vec::new();
        for depth in 0..2 {
            let Some(n) = current.arity() else { break };
            if depth > 0 && self.rng.chance(50) {
                break;
            }
            let i = self.rng.below(n as usize) as u32;
            let Some(next) = current.member(i) else { break };
            path.push(i);
            current = next;
        }
        (path, current)
    }

    // ---- instructions ----

    /// The instruction `op` with its right result type and operands.
    fn build(&mut self, op: &'static str) -> Inst {
        let n = self.count();
        let v = |t: &Ty| Arg::Val(t.clone());
        match op {
            _ if FLOAT_ARITH.contains(&op) => {
                let t = vec(Float(self.float_width()), n);
                let arity = if op == "OpFNegate" { 1 } else { 2 };
                inst(op, Some(t.clone()), vec![v(&t); arity])
            }
            "OpUDiv" | "OpUMod" => {
                let t = vec(Int(self.int_width(), false), n);
                inst(op, Some(t.clone()), vec![v(&t); 2])
            }
            "OpIAddCarry" | "OpISubBorrow" | "OpUMulExtended" | "OpSMulExtended" => {
                let signed = op == "OpSMulExtended" && self.rng.chance(50);
                let w = self.rng.pick(&[32, 32, 16, 64]);
                let t = vec(Int(w, signed), n);
                let s = Struct(vec![t.clone(), t.clone()]);
                inst(op, Some(s), vec![v(&t); 2])
            }
            _ if INT_ARITH.contains(&op) => {
                let w = self.int_width();
                let t = vec(self.int_of(w), n);
                let arity = if op == "OpSNegate" { 1 } else { 2 };
                let args = (0..arity).map(|_| v(&vec(self.int_of(w), n))).collect();
                inst(op, Some(t), args)
            }
            _ if MATRIX.contains(&op) => self.matrix(op),
            _ if BITWISE.contains(&op) => self.bitwise(op, n),
            _ if RELATIONAL.contains(&op) => self.relational(op, n),
            _ if CONVERSION.contains(&op) => self.conversion(op, n),
            _ if COMPOSITE.contains(&op) => self.composite_op(op),
            _ if MEMORY.contains(&op) => self.memory(op),
            _ if ATOMIC.contains(&op) => self.atomic(op),
            _ if GROUP.contains(&op) => self.group(op, n),
            _ if DOT.contains(&op) => self.dot(op),
            name => self.glsl(name, n),
        }
    }

    fn matrix(&mut self, op: &'static str) -> Inst {
        let w = if self.rng.chance(80) {
            32
        } else {
            self.rng.pick(&[16, 64])
        };
        let f = Float(w);
        let (r, c, k) = (
            2 + self.rng.below(3) as u32,
            2 + self.rng.below(3) as u32,
            2 + self.rng.below(3) as u32,
        );
        let v = |t: Ty| Arg::Val(t);
        match op {
            "OpDot" => inst(op, Some(f.clone()), vec![v(vec(f.clone(), r)); 2]),
            "OpVectorTimesScalar" => inst(
                op,
                Some(vec(f.clone(), r)),
                vec![v(vec(f.clone(), r)), v(f)],
            ),
            "OpMatrixTimesScalar" => {
                let m = mat(f.clone(), r, c);
                inst(op, Some(m.clone()), vec![v(m), v(f)])
            }
            "OpVectorTimesMatrix" => inst(
                op,
                Some(vec(f.clone(), c)),
                vec![v(vec(f.clone(), r)), v(mat(f, r, c))],
            ),
            "OpMatrixTimesVector" => inst(
                op,
                Some(vec(f.clone(), r)),
                vec![v(mat(f.clone(), r, c)), v(vec(f, c))],
            ),
            "OpMatrixTimesMatrix" => inst(
                op,
                Some(mat(f.clone(), r, c)),
                vec![v(mat(f.clone(), r, k)), v(mat(f, k, c))],
            ),
            "OpOuterProduct" => inst(
                op,
                Some(mat(f.clone(), r, c)),
                vec![v(vec(f.clone(), r)), v(vec(f, c))],
            ),
            _ => inst(op, Some(mat(f.clone(), c, r)), vec![v(mat(f, r, c))]),
        }
    }

    fn bitwise(&mut self, op: &'static str, n: u32) -> Inst {
        // Vulkan limits the Base of the bit-field instructions and OpBitCount to 32 bits.
        let w = self.int_width();
        let t = vec(self.int_of(w), n);
        let v = |t: Ty| Arg::Val(t);
        match op {
            "OpShiftRightLogical" | "OpShiftRightArithmetic" | "OpShiftLeftLogical" => {
                let base = vec(self.int_of(w), n);
                let sw = self.int_width();
                let shift = vec(self.int_of(sw), n);
                inst(op, Some(t), vec![v(base), v(shift)])
            }
            "OpBitwiseOr" | "OpBitwiseXor" | "OpBitwiseAnd" => {
                let a = vec(self.int_of(w), n);
                let b = vec(self.int_of(w), n);
                inst(op, Some(t), vec![v(a), v(b)])
            }
            "OpNot" => {
                let a = vec(self.int_of(w), n);
                inst(op, Some(t), vec![v(a)])
            }
            _ => {
                let bw = if self.vulkan { 32 } else { w };
                let base = vec(self.int_of(bw), n);
                let offset = self.int();
                let count = self.int();
                match op {
                    "OpBitFieldInsert" => inst(
                        op,
                        Some(base.clone()),
                        vec![v(base.clone()), v(base), v(offset), v(count)],
                    ),
                    "OpBitFieldSExtract" | "OpBitFieldUExtract" => {
                        inst(op, Some(base.clone()), vec![v(base), v(offset), v(count)])
                    }
                    "OpBitReverse" => inst(op, Some(base.clone()), vec![v(base)]),
                    _ => inst(op, Some(t), vec![v(base)]),
                }
            }
        }
    }

    fn relational(&mut self, op: &'static str, n: u32) -> Inst {
        let b = vec(Bool, n);
        let v = |t: Ty| Arg::Val(t);
        match op {
            "OpAny" | "OpAll" => {
                let n = 2 + self.rng.below(3) as u32;
                inst(op, Some(Bool), vec![v(vec(Bool, n))])
            }
            "OpIsNan" | "OpIsInf" => {
                let f = vec(Float(self.float_width()), n);
                inst(op, Some(b), vec![v(f)])
            }
            "OpLogicalNot" => inst(op, Some(b.clone()), vec![v(b)]),
            "OpLogicalEqual" | "OpLogicalNotEqual" | "OpLogicalOr" | "OpLogicalAnd" => {
                inst(op, Some(b.clone()), vec![v(b.clone()), v(b)])
            }
            "OpSelect" => {
                let t = match self.rng.below(10) {
                    0 => self.composite(),
                    1 | 2 => {
                        let sc = self
                            .rng
                            .pick(&[Sc::Workgroup, Sc::StorageBuffer, Sc::Function]);
                        let p = if sc == Sc::StorageBuffer {
                            self.rng.pick(&block_members()).0
                        } else if self.rng.chance(40) {
                            self.composite()
                        } else {
                            self.scalar_or_vector()
                        };
                        if matches!(p, RtArr(_)) {
                            ptr(sc, u32t())
                        } else {
                            ptr(sc, p)
                        }
                    }
                    _ => self.scalar_or_vector(),
                };
                let c = if t.count() > 1 && self.rng.chance(70) {
                    vec(Bool, t.count())
                } else {
                    Bool
                };
                inst(op, Some(t.clone()), vec![v(c), v(t.clone()), v(t)])
            }
            _ if op.starts_with("OpF") => {
                let f = vec(Float(self.float_width()), n);
                inst(op, Some(b), vec![v(f.clone()), v(f)])
            }
            _ => {
                let w = self.int_width();
                let l = vec(self.int_of(w), n);
                let r = vec(self.int_of(w), n);
                inst(op, Some(b), vec![v(l), v(r)])
            }
        }
    }

    fn conversion(&mut self, op: &'static str, n: u32) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let fw = self.float_width();
        let iw = self.int_width();
        let (result, input) = match op {
            "OpConvertFToU" => (Int(iw, false), Float(fw)),
            "OpConvertFToS" => (self.int_of(iw), Float(fw)),
            "OpConvertSToF" | "OpConvertUToF" => (Float(fw), self.int_of(iw)),
            "OpUConvert" => {
                let ow = self.other_int_width(iw);
                (Int(iw, false), self.int_of(ow))
            }
            "OpSConvert" => {
                let ow = self.other_int_width(iw);
                (self.int_of(iw), self.int_of(ow))
            }
            "OpFConvert" => {
                let other = self.rng.pick(&[16, 32, 64]);
                let other = if other == fw {
                    32 + 32 * u32::from(fw == 32)
                } else {
                    other
                };
                (Float(fw), Float(other))
            }
            "OpQuantizeToF16" => (f32t(), f32t()),
            _ => {
                // OpBitcast between two shapes of the same total width.
                let total = self.rng.pick(&[32, 64, 16, 128]);
                let a = self.bits_shape(total);
                let b = self.bits_shape(total);
                return inst(op, Some(a), vec![v(b)]);
            }
        };
        inst(op, Some(vec(result, n)), vec![v(vec(input, n))])
    }

    /// A numeric scalar or vector of `total` bits.
    fn bits_shape(&mut self, total: u32) -> Ty {
        let options: Vec<(u32, u32)> = [8, 16, 32, 64]
            .into_iter()
            .flat_map(|w| (1..=4).map(move |n| (w, n)))
            .filter(|(w, n)| w * n == total)
            .collect();
        let (w, n) = self.rng.pick(&options);
        let s = if w != 8 && self.rng.chance(40) {
            Float(w)
        } else {
            self.int_of(w)
        };
        vec(s, n)
    }

    fn composite_op(&mut self, op: &'static str) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let lits =
            |path: &[u32]| -> Vec<Arg> { path.iter().map(|i| Arg::Lit(i.to_string())).collect() };
        match op {
            "OpCompositeExtract" => {
                let c = self.composite();
                let (path, reached) = self.path(&c);
                let mut args = vec![v(c)];
                args.extend(lits(&path));
                inst(op, Some(reached), args)
            }
            "OpCompositeInsert" => {
                let c = self.composite();
                let (path, reached) = self.path(&c);
                let mut args = vec![v(reached), v(c.clone())];
                args.extend(lits(&path));
                inst(op, Some(c), args)
            }
            "OpCompositeConstruct" => {
                let c = self.composite();
                let parts = match &c {
                    Vector(comp, n) => {
                        // Scalars and sub-vectors totalling the count.
                        let mut left = *n;
                        let mut parts = Vec::new();
                        while left > 0 {
                            let take = if left >= 2 && self.rng.chance(30) {
                                2 + self.rng.below((left - 1) as usize) as u32
                            } else {
                                1
                            };
                            let take = take.min(left);
                            parts.push(v(vec((**comp).clone(), take)));
                            left -= take;
                        }
                        parts
                    }
                    Mat(col, n) | Arr(col, n) => (0..*n).map(|_| v((**col).clone())).collect(),
                    Struct(ms) => ms.iter().cloned().map(v).collect(),
                    _ => Vec::new(),
                };
                inst(op, Some(c), parts)
            }
            "OpVectorShuffle" => {
                let s = self.scalar();
                let (n1, n2, m) = (
                    2 + self.rng.below(3) as u32,
                    2 + self.rng.below(3) as u32,
                    2 + self.rng.below(3) as u32,
                );
                let mut args = vec![v(vec(s.clone(), n1)), v(vec(s.clone(), n2))];
                for _ in 0..m {
                    let sel = if self.rng.chance(10) {
                        "0xFFFFFFFF".to_string()
                    } else {
                        self.rng.below((n1 + n2) as usize).to_string()
                    };
                    args.push(Arg::Lit(sel));
                }
                inst(op, Some(vec(s, m)), args)
            }
            "OpVectorExtractDynamic" => {
                let s = self.scalar();
                let vt = vec(s.clone(), 2 + self.rng.below(3) as u32);
                let index = self.int();
                inst(op, Some(s), vec![v(vt), v(index)])
            }
            "OpVectorInsertDynamic" => {
                let s = self.scalar();
                let vt = vec(s.clone(), 2 + self.rng.below(3) as u32);
                let index = self.int();
                inst(op, Some(vt.clone()), vec![v(vt), v(s), v(index)])
            }
            _ => {
                let t = if self.rng.chance(20) {
                    self.composite()
                } else if self.rng.chance(15) {
                    ptr(Sc::Function, u32t())
                } else {
                    self.scalar_or_vector()
                };
                inst(op, Some(t.clone()), vec![v(t)])
            }
        }
    }

    /// Memory operands for a load, store or copy, often none: a mask, its Aligned literal and
    /// the scopes of MakePointerAvailable/Visible (mostly valid ones; any scope value, or a
    /// non-constant scope, sometimes). The make-available/visible flags need the Vulkan memory
    /// model's capability, so without it they are capability errors.
    fn memory_operands(&mut self) -> Vec<Arg> {
        if self.rng.chance(50) {
            return Vec::new();
        }
        const FLAGS: [&str; 6] = [
            "Volatile",
            "Aligned",
            "Nontemporal",
            "MakePointerAvailable",
            "MakePointerVisible",
            "NonPrivatePointer",
        ];
        let chosen: Vec<&str> = FLAGS
            .iter()
            .copied()
            .filter(|_| self.rng.chance(30))
            .collect();
        if chosen.is_empty() {
            return vec![Arg::Lit("None".into())];
        }
        let mut args = vec![Arg::Lit(chosen.join("|"))];
        if chosen.contains(&"Aligned") {
            let alignment = self.rng.pick(&[1, 4, 16, 3]);
            args.push(Arg::Lit(alignment.to_string()));
        }
        for flag in ["MakePointerAvailable", "MakePointerVisible"] {
            if chosen.contains(&flag) {
                let scope = if self.rng.chance(10) {
                    Arg::Val(u32t())
                } else {
                    // Workgroup, Subgroup and QueueFamily mostly; any scope value sometimes.
                    let value = if self.rng.chance(75) {
                        self.rng.pick(&[2, 3, 5])
                    } else {
                        self.rng.pick(&[0, 1, 4, 6, 9])
                    };
                    Arg::Const(u32t(), value)
                };
                args.push(scope);
            }
        }
        args
    }

    fn memory(&mut self, op: &'static str) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let sc = self.rng.pick(&[
            Sc::Function,
            Sc::Function,
            Sc::Private,
            Sc::Workgroup,
            Sc::StorageBuffer,
        ]);
        let pointee = |g: &mut Gen| -> Ty {
            if sc == Sc::Function && g.rng.chance(10) {
                // A variable holding a pointer (variable pointers allow some).
                let inner = g.rng.pick(&[Sc::StorageBuffer, Sc::Workgroup]);
                let t = if inner == Sc::StorageBuffer {
                    u32t()
                } else {
                    g.scalar_or_vector()
                };
                ptr(inner, t)
            } else if sc == Sc::StorageBuffer {
                let m = g.rng.pick(&block_members()).0;
                if matches!(m, RtArr(_)) {
                    u32t()
                } else {
                    m
                }
            } else if g.rng.chance(20) {
                g.composite()
            } else {
                g.scalar_or_vector()
            }
        };
        match op {
            "OpLoad" => {
                let t = pointee(self);
                let mut args = vec![v(ptr(sc, t.clone()))];
                args.extend(self.memory_operands());
                inst(op, Some(t), args)
            }
            "OpStore" => {
                let t = pointee(self);
                let mut args = vec![v(ptr(sc, t.clone())), v(t)];
                args.extend(self.memory_operands());
                inst(op, None, args)
            }
            "OpCopyMemory" => {
                let t = pointee(self);
                let other = if sc == Sc::StorageBuffer {
                    Sc::Function
                } else {
                    self.rng.pick(&[Sc::Function, Sc::Private, Sc::Workgroup])
                };
                let mut args = vec![v(ptr(other, t.clone())), v(ptr(sc, t))];
                args.extend(self.memory_operands());
                if self.rng.chance(30) {
                    args.extend(self.memory_operands());
                }
                inst(op, None, args)
            }
            _ => {
                let base = if sc == Sc::StorageBuffer {
                    Block
                } else {
                    self.composite()
                };
                let (path, reached) = self.path(&base);
                let mut args = vec![v(ptr(sc, base.clone()))];
                if op == "OpPtrAccessChain" {
                    args.push(Arg::Const(u32t(), 0));
                }
                let mut current = base;
                for i in path {
                    let index_ty = if self.rng.chance(50) { u32t() } else { i32t() };
                    let arg = if matches!(current, Struct(_) | Block) || self.rng.chance(60) {
                        Arg::Const(index_ty, i64::from(i))
                    } else {
                        v(index_ty)
                    };
                    args.push(arg);
                    current = current.member(i).unwrap_or(Void);
                }
                inst(op, Some(ptr(sc, reached)), args)
            }
        }
    }

    fn atomic(&mut self, op: &'static str) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let float_ok = matches!(op, "OpAtomicLoad" | "OpAtomicStore" | "OpAtomicExchange");
        let float_only = op.ends_with("EXT");
        let t = match self.rng.below(10) {
            _ if float_only => f32t(),
            0..=3 => u32t(),
            4..=6 => i32t(),
            7 => Int(64, false),
            8 => Int(64, true),
            _ if float_ok => f32t(),
            _ => u32t(),
        };
        let sc = if self.rng.chance(50) {
            Sc::Workgroup
        } else {
            Sc::StorageBuffer
        };
        let scope = Arg::Const(u32t(), self.rng.pick(&[1, 2, 3]));
        let storage = if sc == Sc::Workgroup { 0x100 } else { 0x40 };
        let ordered = self.rng.chance(30);
        let sem = |order: i64| Arg::Const(u32t(), if ordered { order | storage } else { 0 });
        let p = v(ptr(sc, t.clone()));
        match op {
            "OpAtomicLoad" => inst(op, Some(t), vec![p, scope, sem(0x2)]),
            "OpAtomicStore" => inst(op, None, vec![p, scope, sem(0x4), v(t)]),
            "OpAtomicIIncrement" | "OpAtomicIDecrement" => {
                inst(op, Some(t), vec![p, scope, sem(0x8)])
            }
            "OpAtomicCompareExchange" => inst(
                op,
                Some(t.clone()),
                vec![p, scope, sem(0x8), sem(0x2), v(t.clone()), v(t)],
            ),
            _ => inst(op, Some(t.clone()), vec![p, scope, sem(0x8), v(t)]),
        }
    }

    fn group(&mut self, op: &'static str, n: u32) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let rotate = op == "OpGroupNonUniformRotateKHR";
        // Subgroup scope; a mutated scope may be Workgroup, which SPIRV-Tools after 2025.5
        // (#6811) and tangle reject outside Vulkan for every non-uniform operation but rotate
        // (`Group::ScopeNotSubgroup`, marked post-2025.5): there the scope is left alone.
        let scope = if self.vulkan || rotate {
            Arg::Const(u32t(), 3)
        } else {
            Arg::Lit(self.fixed_constant(&u32t(), 3))
        };
        let ballot = vec(u32t(), 4);
        let any_value = |g: &mut Gen| g.scalar_or_vector();
        let id = |g: &mut Gen| {
            if g.rng.chance(60) {
                Arg::Const(u32t(), g.rng.below(4) as i64)
            } else {
                v(u32t())
            }
        };
        let operation = |g: &mut Gen| -> Vec<Arg> {
            match g.rng.below(6) {
                0 | 1 => vec![Arg::Lit("Reduce".into())],
                2 => vec![Arg::Lit("InclusiveScan".into())],
                3 => vec![Arg::Lit("ExclusiveScan".into())],
                _ => vec![
                    Arg::Lit("ClusteredReduce".into()),
                    Arg::Const(u32t(), g.rng.pick(&[1, 2, 4, 3])),
                ],
            }
        };
        match op {
            "OpGroupNonUniformElect" => inst(op, Some(Bool), vec![scope]),
            "OpGroupNonUniformAll" | "OpGroupNonUniformAny" => {
                inst(op, Some(Bool), vec![scope, v(Bool)])
            }
            "OpGroupNonUniformAllEqual" => {
                let t = any_value(self);
                inst(op, Some(Bool), vec![scope, v(t)])
            }
            "OpGroupNonUniformBroadcastFirst" => {
                let t = any_value(self);
                inst(op, Some(t.clone()), vec![scope, v(t)])
            }
            "OpGroupNonUniformBallot" => inst(op, Some(ballot), vec![scope, v(Bool)]),
            "OpGroupNonUniformInverseBallot" => inst(op, Some(Bool), vec![scope, v(ballot)]),
            "OpGroupNonUniformBallotBitExtract" => {
                let i = id(self);
                inst(op, Some(Bool), vec![scope, v(ballot), i])
            }
            "OpGroupNonUniformBallotBitCount" => {
                let o = self.rng.pick(&["Reduce", "InclusiveScan", "ExclusiveScan"]);
                inst(op, Some(u32t()), vec![scope, Arg::Lit(o.into()), v(ballot)])
            }
            "OpGroupNonUniformBallotFindLSB" | "OpGroupNonUniformBallotFindMSB" => {
                inst(op, Some(u32t()), vec![scope, v(ballot)])
            }
            "OpGroupNonUniformBroadcast"
            | "OpGroupNonUniformShuffle"
            | "OpGroupNonUniformShuffleXor"
            | "OpGroupNonUniformShuffleUp"
            | "OpGroupNonUniformShuffleDown"
            | "OpGroupNonUniformQuadBroadcast" => {
                let t = any_value(self);
                let i = id(self);
                inst(op, Some(t.clone()), vec![scope, v(t), i])
            }
            "OpGroupNonUniformQuadSwap" => {
                let t = any_value(self);
                let d = Arg::Const(u32t(), self.rng.below(3) as i64);
                inst(op, Some(t.clone()), vec![scope, v(t), d])
            }
            "OpGroupNonUniformRotateKHR" => {
                let t = any_value(self);
                let mut args = vec![scope, v(t.clone()), v(u32t())];
                if self.rng.chance(50) {
                    args.push(Arg::Const(u32t(), self.rng.pick(&[1, 2, 4, 8, 3])));
                }
                inst(op, Some(t), args)
            }
            _ => {
                let s = if op.contains("Logical") {
                    Bool
                } else if op.starts_with("OpGroupNonUniformF") {
                    Float(self.float_width())
                } else if op.contains("UM") {
                    Int(self.int_width(), false)
                } else {
                    self.int()
                };
                let t = vec(s, n);
                // Operation, Value, and ClusterSize for ClusteredReduce.
                let mut operation = operation(self);
                let mut args = vec![scope, operation.remove(0), v(t.clone())];
                args.extend(operation);
                inst(op, Some(t), args)
            }
        }
    }

    /// Integer dot products, right shapes only: SPIRV-Tools 2025.5 checks nothing of their
    /// types (the rules of `validate_dot_product.cpp` came after it, #6524/#6525), while tangle
    /// implements them (`Dot::*`, marked post-2025.5), so wrong shapes are not generated.
    fn dot(&mut self, op: &'static str) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let unsigned = op.starts_with("OpUDot");
        let mixed = op.starts_with("OpSUDot");
        let packed = self.rng.chance(30);
        let w = if packed { 8 } else { self.int_width() };
        let rw = loop {
            let rw = self.int_width();
            if rw >= w {
                break rw;
            }
        };
        let result = Int(rw, !unsigned && self.rng.chance(50));
        let sign = |g: &mut Gen, must_unsigned: bool| !must_unsigned && g.rng.chance(50);
        let mut args = if packed {
            let a = Int(32, sign(self, unsigned));
            let b = Int(32, sign(self, unsigned || mixed));
            vec![v(a), v(b)]
        } else {
            let n = 2 + self.rng.below(3) as u32;
            let a = vec(Int(w, sign(self, unsigned)), n);
            let b = vec(Int(w, sign(self, unsigned || mixed)), n);
            vec![v(a), v(b)]
        };
        if op.ends_with("AccSat") {
            args.push(v(result.clone()));
        }
        if packed {
            args.push(Arg::Lit("PackedVectorFormat4x8Bit".into()));
        }
        let mut i = inst(op, Some(result), args);
        i.mutable = false;
        i
    }

    fn glsl(&mut self, name: &'static str, n: u32) -> Inst {
        let v = |t: Ty| Arg::Val(t);
        let f = Float(self.float_width());
        let t = vec(f.clone(), n);
        let iw = self.int_width();
        let it = vec(self.int_of(iw), n);
        let int_same = |g: &mut Gen, w: u32| vec(g.int_of(w), n);
        let (result, args): (Ty, Vec<Arg>) = match name {
            "Round" | "RoundEven" | "Trunc" | "FAbs" | "FSign" | "Floor" | "Ceil" | "Fract"
            | "Sqrt" | "InverseSqrt" | "Normalize" => (t.clone(), vec![v(t)]),
            "FMin" | "FMax" | "Step" | "NMin" | "NMax" | "Reflect" => {
                (t.clone(), vec![v(t.clone()), v(t)])
            }
            "FClamp" | "FMix" | "SmoothStep" | "Fma" | "NClamp" | "FaceForward" | "IMix" => {
                (t.clone(), vec![v(t.clone()), v(t.clone()), v(t)])
            }
            "SAbs" | "SSign" | "FindILsb" => (it, vec![v(int_same(self, iw))]),
            "FindSMsb" | "FindUMsb" => {
                let r = int_same(self, 32);
                (r, vec![v(int_same(self, 32))])
            }
            "UMin" | "SMin" | "UMax" | "SMax" => {
                let a = int_same(self, iw);
                let b = int_same(self, iw);
                (it, vec![v(a), v(b)])
            }
            "UClamp" | "SClamp" => {
                let a = int_same(self, iw);
                let b = int_same(self, iw);
                let c = int_same(self, iw);
                (it, vec![v(a), v(b), v(c)])
            }
            "Atan2" | "Pow" | "Radians" | "Degrees" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos"
            | "Atan" | "Sinh" | "Cosh" | "Tanh" | "Asinh" | "Acosh" | "Atanh" | "Exp" | "Log"
            | "Exp2" | "Log2" => {
                // These are defined on 16- and 32-bit floats only.
                let t = vec(Float(self.rng.pick(&[16, 32, 32])), n);
                let arity = if matches!(name, "Atan2" | "Pow") {
                    2
                } else {
                    1
                };
                (t.clone(), vec![v(t); arity])
            }
            "Determinant" | "MatrixInverse" => {
                let k = 2 + self.rng.below(3) as u32;
                let m = mat(f.clone(), k, k);
                let r = if name == "Determinant" { f } else { m.clone() };
                (r, vec![v(m)])
            }
            "Modf" => (t.clone(), vec![v(t.clone()), v(ptr(Sc::Function, t))]),
            "ModfStruct" => (Struct(vec![t.clone(), t.clone()]), vec![v(t)]),
            "Frexp" => {
                let e = vec(self.int_of(32), n);
                (t.clone(), vec![v(t), v(ptr(Sc::Function, e))])
            }
            "FrexpStruct" => {
                let e = vec(self.int_of(32), n);
                (Struct(vec![t.clone(), e]), vec![v(t)])
            }
            "Ldexp" => {
                let e = vec(self.int_of(32), n);
                (t.clone(), vec![v(t), v(e)])
            }
            "PackSnorm4x8" | "PackUnorm4x8" => (self.int_of(32), vec![v(vec(f32t(), 4))]),
            "PackSnorm2x16" | "PackUnorm2x16" | "PackHalf2x16" => {
                (self.int_of(32), vec![v(vec(f32t(), 2))])
            }
            "PackDouble2x32" => {
                let i = self.int_of(32);
                (Float(64), vec![v(vec(i, 2))])
            }
            "UnpackSnorm2x16" | "UnpackUnorm2x16" | "UnpackHalf2x16" => {
                (vec(f32t(), 2), vec![v(self.int_of(32))])
            }
            "UnpackSnorm4x8" | "UnpackUnorm4x8" => (vec(f32t(), 4), vec![v(self.int_of(32))]),
            "UnpackDouble2x32" => (vec(self.int_of(32), 2), vec![v(Float(64))]),
            "Length" => (f.clone(), vec![v(t)]),
            "Distance" => (f.clone(), vec![v(t.clone()), v(t)]),
            "Cross" => {
                let c = vec(f, 3);
                (c.clone(), vec![v(c.clone()), v(c)])
            }
            "Refract" => (t.clone(), vec![v(t.clone()), v(t), v(f)]),
            "InterpolateAtCentroid" | "InterpolateAtSample" | "InterpolateAtOffset" => {
                let t = vec(f32t(), n);
                let mut args = vec![v(ptr(Sc::Function, t.clone()))];
                if name == "InterpolateAtSample" {
                    args.push(v(i32t()));
                } else if name == "InterpolateAtOffset" {
                    args.push(v(vec(f32t(), 2)));
                }
                (t, args)
            }
            _ => (t.clone(), vec![v(t)]),
        };
        let mut all = vec![Arg::Lit("%glsl".into()), Arg::Lit(name.into())];
        all.extend(args);
        inst("OpExtInst", Some(result), all)
    }

    /// Sometimes makes an instruction wrong.
    fn mutate(&mut self, i: &mut Inst) {
        if !i.mutable || !self.rng.chance(35) {
            return;
        }
        let operands: Vec<usize> = i
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| !matches!(a, Arg::Lit(_)))
            .map(|(k, _)| k)
            .collect();
        match self.rng.below(10) {
            0 | 1 if i.result.is_some() => {
                let r = i.result.clone().unwrap_or(Void);
                i.result = Some(if self.rng.chance(70) {
                    self.near(&r)
                } else {
                    self.random_type()
                });
            }
            2..=6 if !operands.is_empty() => {
                let k = self.rng.pick(&operands);
                let t = match &i.args[k] {
                    Arg::Val(t) | Arg::Const(t, _) => t.clone(),
                    Arg::Lit(_) => Void,
                };
                let t = if self.rng.chance(75) {
                    self.near(&t)
                } else {
                    self.random_type()
                };
                i.args[k] = Arg::Val(t);
            }
            7 if !i.args.is_empty() => {
                i.args.pop();
            }
            8 => {
                let t = self.random_type();
                i.args.push(Arg::Val(t));
            }
            _ => {
                // A literal (index, selector, cluster size) out of its range.
                let lits: Vec<usize> = i
                    .args
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| matches!(a, Arg::Lit(s) if s.parse::<u32>().is_ok()))
                    .map(|(k, _)| k)
                    .collect();
                if lits.is_empty() {
                    return;
                }
                let k = self.rng.pick(&lits);
                i.args[k] = Arg::Lit((4 + self.rng.below(5)).to_string());
            }
        }
    }

    /// Emits one instruction.
    fn emit(&mut self, i: Inst) {
        let mut text = Vec::new();
        for a in &i.args {
            text.push(match a {
                Arg::Val(Void) => "%main".to_string(),
                Arg::Val(t) => self.value(t),
                Arg::Const(t, v) => self.constant(t, *v),
                Arg::Lit(s) => s.clone(),
            });
        }
        match &i.result {
            Some(rt) => {
                let r = self.fresh();
                let id = self.ty(rt);
                self.body
                    .push(format!("{r} = {} {id} {}", i.op, text.join(" ")));
                if *rt != Void {
                    self.results.push((r, rt.clone()));
                }
            }
            None => self.body.push(format!("{} {}", i.op, text.join(" "))),
        }
    }

    fn op(&mut self) -> &'static str {
        let total: usize = FAMILIES.iter().map(|(_, w)| w).sum();
        let mut at = self.rng.below(total);
        for (ops, w) in FAMILIES {
            if at < *w {
                return self.rng.pick(ops);
            }
            at -= w;
        }
        "OpIAdd"
    }

    /// The whole module.
    fn module(mut self) -> (String, &'static str) {
        self.ty(&Void);
        self.declare("fn".into(), "%fn = OpTypeFunction %void".into());
        let count = 1 + self.rng.below(3);
        for _ in 0..count {
            let op = self.op();
            let mut i = self.build(op);
            self.mutate(&mut i);
            if self.rng.chance(10) {
                self.mutate(&mut i);
            }
            self.emit(i);
        }
        let mut caps = vec![
            "Shader",
            "Int64",
            "Float64",
            "Int64Atomics",
            "StorageBuffer8BitAccess",
            "StorageBuffer16BitAccess",
            "GroupNonUniform",
            "GroupNonUniformVote",
            "GroupNonUniformArithmetic",
            "GroupNonUniformBallot",
            "GroupNonUniformShuffle",
            "GroupNonUniformShuffleRelative",
            "GroupNonUniformClustered",
            "GroupNonUniformQuad",
            "GroupNonUniformRotateKHR",
            "DotProduct",
            "DotProductInputAll",
            "DotProductInput4x8BitPacked",
        ];
        let mut extensions = vec!["SPV_KHR_subgroup_rotate"];
        // What became core after the oldest versions generated.
        if self.version < (1, 6) {
            extensions.push("SPV_KHR_integer_dot_product");
        }
        if self.version < (1, 5) {
            extensions.push("SPV_KHR_8bit_storage");
        }
        // DotProductInput4x8Bit implies Int8.
        if self.int8 {
            caps.extend(["Int8", "DotProductInput4x8Bit"]);
        }
        if self.int16 {
            caps.push("Int16");
        }
        if self.float16 {
            caps.push("Float16");
        }
        match self.variable_pointers {
            2 => caps.push("VariablePointers"),
            1 => caps.push("VariablePointersStorageBuffer"),
            _ => {}
        }
        if self.atomic_float {
            caps.extend(["AtomicFloat32AddEXT", "AtomicFloat32MinMaxEXT"]);
            extensions.extend([
                "SPV_EXT_shader_atomic_float_add",
                "SPV_EXT_shader_atomic_float_min_max",
            ]);
        }
        if self.vulkan_memory_model {
            caps.push("VulkanMemoryModel");
            if self.version < (1, 5) {
                extensions.push("SPV_KHR_vulkan_memory_model");
            }
        }
        let mut out = String::new();
        for c in caps {
            out += &format!("OpCapability {c}\n");
        }
        for e in extensions {
            out += &format!("OpExtension \"{e}\"\n");
        }
        out += "%glsl = OpExtInstImport \"GLSL.std.450\"\n";
        out += if self.vulkan_memory_model {
            "OpMemoryModel Logical Vulkan\n"
        } else {
            "OpMemoryModel Logical GLSL450\n"
        };
        // Before SPIR-V 1.4 the interface lists Input and Output variables only.
        let interface = if self.version >= (1, 4) {
            self.interface.join(" ")
        } else {
            String::new()
        };
        out += &format!("OpEntryPoint GLCompute %main \"main\" {interface}\n");
        out += "OpExecutionMode %main LocalSize 4 1 1\n";
        for a in &self.annotations {
            out += a;
            out.push('\n');
        }
        for d in &self.decls {
            out += d;
            out.push('\n');
        }
        for g in &self.globals {
            out += g;
            out.push('\n');
        }
        out += "%main = OpFunction %void None %fn\n%entry = OpLabel\n";
        for l in self.locals.iter().chain(&self.prelude).chain(&self.body) {
            out += l;
            out.push('\n');
        }
        out += "OpReturn\nOpFunctionEnd\n";
        (out, self.env())
    }
}

/// What one seed gave.
enum Outcome {
    /// Both validators gave the same verdict: valid, or invalid with tangle's first rule.
    Agree(Option<String>),
    /// Neither assembler takes the text (a mutation broke the grammar).
    Unassembled,
    /// A disagreement, described.
    Disagree(String),
}

fn check(seed: u64) -> Outcome {
    let (text, env) = Gen::new(seed).module();
    let target = TargetEnv::parse(env).expect("known env");
    let module = match assemble(&text, &AssembleOptions { target_env: target }) {
        Ok((m, _)) => m,
        Err(e) => {
            // A mutation may break the grammar; then spirv-as must refuse the text too.
            if spirv_as(&text, env, &[]).is_err() {
                return Outcome::Unassembled;
            }
            let why = format!("tangle's assembler refuses what spirv-as takes: {e}");
            return Outcome::Disagree(format!("seed {seed} ({env}): {why}\n{text}"));
        }
    };
    let words = module.to_words();
    // spirv-as must take the text too, and make the same binary.
    match spirv_as(&text, env, &[]) {
        // The header's generator word (2) names the assembler.
        Ok(theirs)
            if theirs.len() == words.len()
                && theirs
                    .iter()
                    .zip(&words)
                    .enumerate()
                    .all(|(i, (a, b))| i == 2 || a == b) => {}
        Ok(_) => {
            let why = "tangle's assembler and spirv-as make different binaries";
            return Outcome::Disagree(format!("seed {seed} ({env}): {why}\n{text}"));
        }
        Err(e) => {
            let why = format!("spirv-as refuses what tangle's assembler takes: {e}");
            return Outcome::Disagree(format!("seed {seed} ({env}): {why}\n{text}"));
        }
    }
    let reference = spirv_val(&words, env, &[]);
    let tangle = validate(&module, target, &ValidateOptions::default());
    match (&reference, &tangle) {
        (Ok(()), Ok(_)) => Outcome::Agree(None),
        (Err(_), Err(d)) => Outcome::Agree(d.first().map(|d| d.error.rule())),
        _ => {
            let ours = match &tangle {
                Ok(_) => "valid".to_string(),
                Err(d) => d
                    .iter()
                    .map(|d| format!("{}: {}", d.error.rule(), d.error))
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let theirs = match &reference {
                Ok(()) => "valid".to_string(),
                Err(e) => e.clone(),
            };
            let body: Vec<&str> = text
                .lines()
                .skip_while(|l| !l.starts_with("%entry"))
                .collect();
            Outcome::Disagree(format!(
                "seed {seed} ({env}):\n  spirv-val: {theirs}\n  tangle:    {ours}\n  {}",
                body.join("\n  ")
            ))
        }
    }
}

#[test]
fn tangle_and_spirv_val_agree_on_random_instructions() {
    if let Some(seed) = std::env::var("TANGLE_INSTR_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        let (text, env) = Gen::new(seed).module();
        eprintln!("; env: {env}\n{text}");
        if let Outcome::Disagree(d) = check(seed) {
            panic!("{d}");
        }
        return;
    }
    let count = std::env::var("TANGLE_INSTR_RANDOM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_COUNT);
    let first: u64 = std::env::var("TANGLE_INSTR_FIRST")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let seeds: Vec<u64> = (first..first.saturating_add(count)).collect();
    let outcomes = par_map(&seeds, |s| check(*s));
    let mut disagreements = Vec::new();
    let (mut valid, mut unassembled) = (0, 0);
    // How often each rule is the first tangle reports (`TANGLE_INSTR_STATS=1` prints them).
    let mut rules: std::collections::BTreeMap<String, usize> = Default::default();
    for outcome in outcomes {
        match outcome {
            Outcome::Agree(None) => valid += 1,
            Outcome::Agree(Some(rule)) => *rules.entry(rule).or_default() += 1,
            Outcome::Unassembled => unassembled += 1,
            Outcome::Disagree(d) => disagreements.push(d),
        }
    }
    if std::env::var("TANGLE_INSTR_STATS").is_ok() {
        for (rule, n) in &rules {
            eprintln!("{n:6} {rule}");
        }
    }
    let show = std::env::var("TANGLE_INSTR_SHOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    for d in disagreements.iter().take(show) {
        eprintln!("DISAGREE {d}\n");
    }
    eprintln!(
        "{count} modules: {valid} valid, {unassembled} not assembled, {} disagreements",
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} of {count} modules got different verdicts (the first are listed above)",
        disagreements.len()
    );
}
