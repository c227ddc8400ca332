//! Module-wide facts every rule reads: where each id is defined, what each type is, the value of
//! each constant, the declared (and implied) capabilities and extensions, names, decorations,
//! entry points and execution modes.
//!
//! Facts are gathered in one tolerant pass: malformed instructions are skipped here and reported
//! by the rule that owns them (`rules::layout`, `rules::ids`, `rules::types`). Every lookup returns
//! an `Option`, so a rule that meets a missing fact stays silent instead of guessing.

use spirv::Op;
use std::collections::{HashMap, HashSet};
use tangle_spirv::grammar::OperandKind;
use tangle_spirv::{Id, Instruction, Module, Operand};

/// A hasher for ids: ids are small dense integers, so one multiply spreads them well enough and
/// avoids SipHash's cost on the many lookups validation makes (it keeps validation linear-time
/// and fast; collision attacks do not matter for a validator's private tables).
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// Builds [`IdHasher`]s.
pub type IdBuildHasher = std::hash::BuildHasherDefault<IdHasher>;
/// A map keyed by ids.
pub type IdMap<V> = HashMap<Id, V, IdBuildHasher>;
/// A set of ids (or other small integers).
pub type IdSet<T = Id> = HashSet<T, IdBuildHasher>;

/// A type, as declared by an `OpType*` instruction (ids refer to other types or constants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    Void,
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    /// `encoding` is the optional FP Encoding operand (BFloat16, FP8 ...).
    Float {
        width: u32,
        encoding: Option<u32>,
    },
    Vector {
        component: Id,
        count: u32,
    },
    Matrix {
        column: Id,
        count: u32,
    },
    Array {
        element: Id,
        length: Id,
    },
    RuntimeArray {
        element: Id,
    },
    Struct {
        members: Vec<Id>,
    },
    Pointer {
        storage: u32,
        pointee: Id,
    },
    UntypedPointer {
        storage: u32,
    },
    Function {
        ret: Id,
        params: Vec<Id>,
    },
    /// `OpTypeCooperativeMatrixKHR`: the last four are ids of (possibly specialization) constants.
    CoopMat {
        component: Id,
        scope: Id,
        rows: Id,
        cols: Id,
        usage: Id,
    },
    /// Any other type-declaring opcode (images, samplers, vendor types ...).
    Other(u16),
}

/// The value of a constant-defining instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstValue {
    /// `OpConstant`: the literal bits, zero-extended.
    Scalar(u64),
    /// `OpConstantTrue` / `OpConstantFalse`.
    Bool(bool),
    /// `OpConstantComposite` and friends.
    Composite(Vec<Id>),
    /// `OpConstantNull`: every scalar in it is zero.
    Null,
    /// A specialization constant: its value is not known at validation time.
    Spec,
}

/// A constant: its type and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    pub ty: Id,
    pub value: ConstValue,
}

/// One `OpDecorate` / `OpMemberDecorate` (member `None` for the former).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoration {
    pub member: Option<u32>,
    pub decoration: u32,
    /// The decoration's parameters (literals or ids), in binary order.
    pub params: Vec<Operand>,
}

/// One `OpEntryPoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPoint {
    /// Index of the `OpEntryPoint` instruction.
    pub index: usize,
    pub model: u32,
    pub function: Id,
    pub name: String,
    pub interface: Vec<Id>,
}

/// One `OpExecutionMode` / `OpExecutionModeId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionMode {
    pub index: usize,
    pub mode: u32,
    /// The mode's parameters (literals for `OpExecutionMode`, ids for `OpExecutionModeId`).
    pub params: Vec<Operand>,
}

/// Everything rules look up by id.
#[derive(Debug, Default)]
pub struct Facts {
    /// Id → index of the instruction that defines it (the first one, if defined twice).
    pub defs: IdMap<usize>,
    pub types: IdMap<Type>,
    pub constants: IdMap<Constant>,
    /// Value id → its type id.
    pub value_types: IdMap<Id>,
    /// Declared capabilities plus every capability they implicitly declare.
    pub capabilities: IdSet<u32>,
    /// Capabilities named by `OpCapability`, in order.
    pub declared_capabilities: Vec<u32>,
    pub extensions: HashSet<String>,
    /// `OpExtInstImport` id → set name.
    pub ext_inst_imports: IdMap<String>,
    pub names: IdMap<String>,
    pub decorations: IdMap<Vec<Decoration>>,
    pub entry_points: Vec<EntryPoint>,
    pub execution_modes: IdMap<Vec<ExecutionMode>>,
    pub addressing_model: Option<u32>,
    pub memory_model: Option<u32>,
    /// Ids named by `OpTypeForwardPointer` (they may be used before their definition).
    pub forward_pointers: IdSet,
    /// Whether some 8- or 16-bit type is declared without the capability that makes it a full
    /// arithmetic type (only a storage capability): then [`Facts::contains_limited_use`] must
    /// look at types, else it is false for every type, and most modules skip the walk.
    pub limited_small_types: bool,
}

impl Facts {
    /// Gathers the facts of a module in one pass.
    pub fn gather(module: &Module) -> Facts {
        let mut f = Facts::default();
        f.defs.reserve(module.instructions.len());
        f.value_types.reserve(module.instructions.len());
        for (index, inst) in module.instructions.iter().enumerate() {
            if let Some(id) = inst.result_id {
                f.defs.entry(id).or_insert(index);
            }
            f.record(index, inst);
        }
        f.capabilities = implied_closure(&f.declared_capabilities);
        f.limited_small_types = f.types.values().any(|t| match t {
            Type::Int { width: 8, .. } => !f.has_capability(spirv::Capability::Int8),
            Type::Int { width: 16, .. } => !f.has_capability(spirv::Capability::Int16),
            Type::Float { width: 16, .. } => !f.has_capability(spirv::Capability::Float16),
            _ => false,
        });
        f
    }

    fn record(&mut self, index: usize, inst: &Instruction) {
        let Some(op) = inst.op() else { return };
        let lit = |i: usize| inst.literal_operand(i).map(|v| v as u32);
        let id = |i: usize| inst.id_operand(i);
        match op {
            Op::Capability => self.declared_capabilities.extend(lit(0)),
            Op::Extension => {
                if let Some(name) = inst.string_operand(0) {
                    self.extensions.insert(name.to_string());
                }
            }
            Op::ExtInstImport => {
                if let (Some(r), Some(name)) = (inst.result_id, inst.string_operand(0)) {
                    self.ext_inst_imports.insert(r, name.to_string());
                }
            }
            Op::MemoryModel => {
                self.addressing_model = lit(0);
                self.memory_model = lit(1);
            }
            Op::EntryPoint => {
                if let (Some(model), Some(function), Some(name)) =
                    (lit(0), id(1), inst.string_operand(2))
                {
                    let interface = inst
                        .operands
                        .iter()
                        .skip(3)
                        .filter_map(Operand::id)
                        .collect();
                    self.entry_points.push(EntryPoint {
                        index,
                        model,
                        function,
                        name: name.to_string(),
                        interface,
                    });
                }
            }
            Op::ExecutionMode | Op::ExecutionModeId => {
                if let (Some(target), Some(mode)) = (id(0), lit(1)) {
                    let params = inst.operands.iter().skip(2).cloned().collect();
                    self.execution_modes
                        .entry(target)
                        .or_default()
                        .push(ExecutionMode {
                            index,
                            mode,
                            params,
                        });
                }
            }
            Op::Name => {
                if let (Some(target), Some(name)) = (id(0), inst.string_operand(1)) {
                    self.names.entry(target).or_insert_with(|| name.to_string());
                }
            }
            Op::Decorate | Op::DecorateId | Op::DecorateString => {
                if let (Some(target), Some(decoration)) = (id(0), lit(1)) {
                    let params = inst.operands.iter().skip(2).cloned().collect();
                    self.decorations
                        .entry(target)
                        .or_default()
                        .push(Decoration {
                            member: None,
                            decoration,
                            params,
                        });
                }
            }
            Op::MemberDecorate | Op::MemberDecorateString => {
                if let (Some(target), Some(member), Some(decoration)) = (id(0), lit(1), lit(2)) {
                    let params = inst.operands.iter().skip(3).cloned().collect();
                    let d = Decoration {
                        member: Some(member),
                        decoration,
                        params,
                    };
                    self.decorations.entry(target).or_default().push(d);
                }
            }
            Op::TypeForwardPointer => self.forward_pointers.extend(id(0)),
            _ => {}
        }
        let Some(result) = inst.result_id else { return };
        if let Some(ty) = type_of_instruction(op, inst) {
            self.types.entry(result).or_insert(ty);
            return;
        }
        if let Some(ty) = inst.result_type {
            self.value_types.entry(result).or_insert(ty);
            if let Some(value) = constant_value(op, inst) {
                self.constants
                    .entry(result)
                    .or_insert(Constant { ty, value });
            }
        }
    }

    /// Whether a capability is declared or implied by a declared one.
    pub fn has_capability(&self, cap: spirv::Capability) -> bool {
        self.capabilities.contains(&(cap as u32))
    }

    /// Whether an extension is declared.
    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.contains(name)
    }

    /// The type declared with this id.
    pub fn ty(&self, id: Id) -> Option<&Type> {
        self.types.get(&id)
    }

    /// The type id of a value.
    pub fn type_of(&self, value: Id) -> Option<Id> {
        self.value_types.get(&value).copied()
    }

    /// The type of a value, resolved.
    pub fn value_type(&self, value: Id) -> Option<&Type> {
        self.type_of(value).and_then(|t| self.ty(t))
    }

    /// The opcode of the instruction defining `id`.
    pub fn def_opcode(&self, module: &Module, id: Id) -> Option<u16> {
        self.defs
            .get(&id)
            .and_then(|i| module.instructions.get(*i))
            .map(|inst| inst.opcode)
    }

    /// `(width, signed)` of an integer scalar type.
    pub fn int_scalar(&self, ty: Id) -> Option<(u32, bool)> {
        match self.ty(ty)? {
            Type::Int { width, signed } => Some((*width, *signed)),
            _ => None,
        }
    }

    /// Whether `ty` is an integer scalar type.
    pub fn is_int_scalar(&self, ty: Id) -> bool {
        self.int_scalar(ty).is_some()
    }

    /// Whether `ty` is an integer scalar type with Signedness 0.
    pub fn is_unsigned_int_scalar(&self, ty: Id) -> bool {
        matches!(self.int_scalar(ty), Some((_, false)))
    }

    /// Whether `ty` is a 32-bit integer scalar type (either signedness).
    pub fn is_int32_scalar(&self, ty: Id) -> bool {
        matches!(self.int_scalar(ty), Some((32, _)))
    }

    /// Whether `ty` is a float scalar type.
    pub fn is_float_scalar(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Float { .. }))
    }

    /// Whether `ty` is the boolean type.
    pub fn is_bool_scalar(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Bool))
    }

    /// The scalar type of a scalar, or the component type of a vector; `None` for anything else.
    pub fn scalar_or_vector_component(&self, ty: Id) -> Option<Id> {
        match self.ty(ty)? {
            Type::Bool | Type::Int { .. } | Type::Float { .. } => Some(ty),
            Type::Vector { component, .. } => Some(*component),
            _ => None,
        }
    }

    /// The FP Encoding of `ty`'s float components (of a scalar, vector or cooperative matrix),
    /// if it has one: bfloat16 or FP8, the storage formats whose extensions give them no
    /// arithmetic.
    fn float_encoding(&self, ty: Id) -> Option<u32> {
        let scalar = self
            .coopmat(ty)
            .map(|m| m.component)
            .or_else(|| self.scalar_or_vector_component(ty))?;
        match self.ty(scalar)? {
            Type::Float { encoding, .. } => *encoding,
            _ => None,
        }
    }

    /// Whether `ty` is a float with an FP Encoding (bfloat16, FP8), or a vector or cooperative
    /// matrix of one.
    pub fn is_encoded_float(&self, ty: Id) -> bool {
        self.float_encoding(ty).is_some()
    }

    /// Whether `ty` is bfloat16 (FP Encoding BFloat16KHR, 0, of SPV_KHR_bfloat16) or a vector or
    /// cooperative matrix of it.
    pub fn is_bfloat16(&self, ty: Id) -> bool {
        self.float_encoding(ty) == Some(0)
    }

    /// The number of components: 1 for scalars, the count for vectors.
    pub fn component_count(&self, ty: Id) -> Option<u32> {
        match self.ty(ty)? {
            Type::Bool | Type::Int { .. } | Type::Float { .. } => Some(1),
            Type::Vector { count, .. } => Some(*count),
            _ => None,
        }
    }

    /// Bit width of a numeric scalar, or of a vector's components.
    pub fn bit_width(&self, ty: Id) -> Option<u32> {
        match self.ty(self.scalar_or_vector_component(ty)?)? {
            Type::Int { width, .. } | Type::Float { width, .. } => Some(*width),
            Type::Bool => Some(1),
            _ => None,
        }
    }

    /// The cooperative matrix type behind `ty`, if it is one.
    pub fn coopmat(&self, ty: Id) -> Option<CoopMatType> {
        match self.ty(ty)? {
            Type::CoopMat {
                component,
                scope,
                rows,
                cols,
                usage,
            } => Some(CoopMatType {
                component: *component,
                scope: *scope,
                rows: *rows,
                cols: *cols,
                usage: *usage,
            }),
            _ => None,
        }
    }

    /// Whether `ty` is, or contains (through vector components, matrix columns, array elements
    /// and struct members, as SPIRV-Tools' `ContainsType` walks them), a type for which `pred`
    /// (given the type's id and what it is) holds.
    pub fn contains(&self, ty: Id, pred: impl Fn(Id, &Type) -> bool) -> bool {
        let mut stack = vec![ty];
        let mut seen = IdSet::default();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            let Some(found) = self.ty(t) else { continue };
            if pred(t, found) {
                return true;
            }
            match found {
                Type::Vector { component: e, .. }
                | Type::Matrix { column: e, .. }
                | Type::Array { element: e, .. }
                | Type::RuntimeArray { element: e } => stack.push(*e),
                Type::Struct { members } => stack.extend(members.iter().copied()),
                _ => {}
            }
        }
        false
    }

    /// Whether the instruction defining `id` is a constant instruction (`OpConstant*` or
    /// `OpSpecConstant*`), as SPIRV-Tools' `spvOpcodeIsConstant` decides.
    pub fn is_constant_instruction(&self, id: Id) -> bool {
        self.constants.contains_key(&id)
    }

    /// The value of a non-specialization integer constant of at most 64 bits (`OpConstantNull`
    /// is zero). Specialization constants are unknown (`None`), as in SPIRV-Tools' `EvalInt32IfConst`.
    pub fn eval_int(&self, id: Id) -> Option<u64> {
        let c = self.constants.get(&id)?;
        self.int_scalar(c.ty)?;
        match c.value {
            ConstValue::Scalar(v) => Some(v),
            ConstValue::Null => Some(0),
            _ => None,
        }
    }

    /// The value of a non-specialization 32-bit integer constant.
    pub fn eval_u32(&self, id: Id) -> Option<u32> {
        let c = self.constants.get(&id)?;
        if !self.is_int32_scalar(c.ty) {
            return None;
        }
        self.eval_int(id).map(|v| v as u32)
    }

    /// Whether `id` is a 32-bit integer scalar constant, and its value when it is not a
    /// specialization constant: `(is_int32, Some(value) if known)`.
    pub fn int32_if_const(&self, id: Id) -> (bool, Option<u32>) {
        match self.type_of(id) {
            Some(t) if self.is_int32_scalar(t) => (true, self.eval_u32(id)),
            _ => (false, None),
        }
    }

    /// Whether the id has a decoration with this value (on the object itself, not a member).
    pub fn has_decoration(&self, id: Id, decoration: spirv::Decoration) -> bool {
        self.decorations.get(&id).is_some_and(|ds| {
            ds.iter()
                .any(|d| d.member.is_none() && d.decoration == decoration as u32)
        })
    }

    /// Whether the id, or one of its members, has a decoration with this value (SPIRV-Tools'
    /// `HasDecoration`, whose decoration list of a struct includes its members').
    pub fn has_decoration_or_member(&self, id: Id, decoration: spirv::Decoration) -> bool {
        self.decorations
            .get(&id)
            .is_some_and(|ds| ds.iter().any(|d| d.decoration == decoration as u32))
    }

    /// The `%name` to show for an id: its `OpName` if any, else its number.
    pub fn friendly(&self, id: Id) -> String {
        match self.names.get(&id) {
            Some(name) => format!("{id}[%{name}]"),
            None => format!("{id}"),
        }
    }
}

/// Type predicates with the exact meaning of SPIRV-Tools' `ValidationState_t` helpers of the
/// same names, which the instruction rules mirror (`validate_arithmetics.cpp` and friends).
impl Facts {
    /// `GetDimension`: 1 for a scalar, the count of a vector or the columns of a matrix, and
    /// 0 for anything else (cooperative matrices, arrays, structs, pointers, non-types).
    pub fn dimension(&self, ty: Id) -> u32 {
        match self.ty(ty) {
            Some(Type::Bool | Type::Int { .. } | Type::Float { .. }) => 1,
            Some(Type::Vector { count, .. } | Type::Matrix { count, .. }) => *count,
            _ => 0,
        }
    }

    /// `GetComponentType`: a scalar itself, the component of a vector, the component of a
    /// matrix's columns, or the element (not recursing) of an array or cooperative matrix.
    pub fn component_type(&self, ty: Id) -> Option<Id> {
        match self.ty(ty)? {
            Type::Bool | Type::Int { .. } | Type::Float { .. } => Some(ty),
            Type::Vector { component, .. } => Some(*component),
            Type::Array { element, .. } => Some(*element),
            Type::CoopMat { component, .. } => Some(*component),
            Type::Matrix { column, .. } => match self.ty(*column)? {
                Type::Vector { component, .. } => Some(*component),
                _ => None,
            },
            _ => None,
        }
    }

    /// `GetBitWidth`: the width of the [`Facts::component_type`] (1 for booleans), 0 when that
    /// is not a scalar.
    pub fn width(&self, ty: Id) -> u32 {
        match self.component_type(ty).and_then(|c| self.ty(c)) {
            Some(Type::Int { width, .. } | Type::Float { width, .. }) => *width,
            Some(Type::Bool) => 1,
            _ => 0,
        }
    }

    /// `IsIntVectorType`.
    pub fn is_int_vector(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Vector { component, .. }) if self.is_int_scalar(*component))
    }

    /// `IsUnsignedIntVectorType`.
    pub fn is_unsigned_int_vector(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Vector { component, .. }) if self.is_unsigned_int_scalar(*component))
    }

    /// `IsFloatVectorType`.
    pub fn is_float_vector(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Vector { component, .. }) if self.is_float_scalar(*component))
    }

    /// `IsBoolVectorType`.
    pub fn is_bool_vector(&self, ty: Id) -> bool {
        matches!(self.ty(ty), Some(Type::Vector { component, .. }) if self.is_bool_scalar(*component))
    }

    /// `IsIntScalarOrVectorType`.
    pub fn is_int_scalar_or_vector(&self, ty: Id) -> bool {
        self.is_int_scalar(ty) || self.is_int_vector(ty)
    }

    /// `IsUnsignedIntScalarOrVectorType`.
    pub fn is_unsigned_int_scalar_or_vector(&self, ty: Id) -> bool {
        self.is_unsigned_int_scalar(ty) || self.is_unsigned_int_vector(ty)
    }

    /// `IsFloatScalarOrVectorType`.
    pub fn is_float_scalar_or_vector(&self, ty: Id) -> bool {
        self.is_float_scalar(ty) || self.is_float_vector(ty)
    }

    /// `IsBoolScalarOrVectorType`.
    pub fn is_bool_scalar_or_vector(&self, ty: Id) -> bool {
        self.is_bool_scalar(ty) || self.is_bool_vector(ty)
    }

    /// `GetMatrixTypeInfo`: `(rows, columns, column type, component type)` of a matrix type.
    pub fn matrix_info(&self, ty: Id) -> Option<(u32, u32, Id, Id)> {
        let Type::Matrix { column, count } = self.ty(ty)? else {
            return None;
        };
        let Type::Vector {
            component,
            count: rows,
        } = self.ty(*column)?
        else {
            return None;
        };
        Some((*rows, *count, *column, *component))
    }

    /// `IsFloatMatrixType`: a matrix whose columns are float vectors.
    pub fn is_float_matrix(&self, ty: Id) -> bool {
        self.matrix_info(ty)
            .is_some_and(|(_, _, _, c)| self.is_float_scalar(c))
    }

    /// `GetPointerTypeInfo` of a typed pointer: `(pointee, storage class)`.
    pub fn pointer_info(&self, ty: Id) -> Option<(Id, u32)> {
        match self.ty(ty)? {
            Type::Pointer { storage, pointee } => Some((*pointee, *storage)),
            _ => None,
        }
    }

    /// `ContainsSizedIntOrFloatType`: whether the type is, or contains (through vectors,
    /// matrices, arrays, structs, pointers, cooperative matrices and function types), an
    /// integer (`float` false) or float type of this width.
    pub fn contains_sized(&self, ty: Id, float: bool, width: u32) -> bool {
        self.contains_sized_with(ty, float, width, true)
    }

    /// [`Facts::contains_sized`] for IEEE floats alone: a float with an FP Encoding (bf16, FP8)
    /// is not counted.
    pub fn contains_sized_ieee_float(&self, ty: Id, width: u32) -> bool {
        self.contains_sized_with(ty, true, width, false)
    }

    /// [`Facts::contains_sized`], counting floats with an FP Encoding (bf16, FP8) only when
    /// `encoded` is set.
    fn contains_sized_with(&self, ty: Id, float: bool, width: u32, encoded: bool) -> bool {
        let mut stack = vec![ty];
        let mut seen = IdSet::default();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            match self.ty(t) {
                Some(Type::Int { width: w, .. }) if !float && *w == width => return true,
                Some(Type::Float { width: w, encoding })
                    if float && *w == width && (encoded || encoding.is_none()) =>
                {
                    return true
                }
                Some(
                    Type::Vector { component: e, .. }
                    | Type::Matrix { column: e, .. }
                    | Type::Array { element: e, .. }
                    | Type::RuntimeArray { element: e }
                    | Type::CoopMat { component: e, .. },
                ) => stack.push(*e),
                Some(Type::Pointer { pointee, .. }) if !self.forward_pointers.contains(&t) => {
                    stack.push(*pointee)
                }
                Some(Type::Struct { members }) => stack.extend(members.iter().copied()),
                Some(Type::Function { ret, params }) => {
                    stack.push(*ret);
                    stack.extend(params.iter().copied());
                }
                _ => {}
            }
        }
        false
    }

    /// `ContainsLimitedUseIntOrFloatType`: whether the type contains an 8-bit integer without
    /// the Int8 capability, a 16-bit integer without Int16, or a 16-bit float without Float16
    /// (types that only the 8- and 16-bit storage capabilities declare). A bfloat16 is not one:
    /// SPV_KHR_bfloat16's BFloat16TypeKHR capability declares it for use, and spirv-val accepts
    /// bf16 cooperative-matrix MulAdds and stores without Float16.
    pub fn contains_limited_use(&self, ty: Id) -> bool {
        use spirv::Capability as C;
        self.limited_small_types
            && ((!self.has_capability(C::Int16) && self.contains_sized(ty, false, 16))
                || (!self.has_capability(C::Int8) && self.contains_sized(ty, false, 8))
                || (!self.has_capability(C::Float16)
                    && self.contains_sized_with(ty, true, 16, false)))
    }

    /// `GetStructMemberTypes`: the member types of a struct type.
    pub fn struct_members(&self, ty: Id) -> Option<&[Id]> {
        match self.ty(ty)? {
            Type::Struct { members } => Some(members),
            _ => None,
        }
    }
}

/// A cooperative matrix type's operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoopMatType {
    pub component: Id,
    pub scope: Id,
    pub rows: Id,
    pub cols: Id,
    pub usage: Id,
}

/// The type an `OpType*` instruction declares, or `None` if it declares none.
fn type_of_instruction(op: Op, inst: &Instruction) -> Option<Type> {
    let lit = |i: usize| inst.literal_operand(i).map(|v| v as u32);
    let id = |i: usize| inst.id_operand(i);
    let ids_from = |i: usize| {
        inst.operands
            .iter()
            .skip(i)
            .filter_map(Operand::id)
            .collect::<Vec<_>>()
    };
    Some(match op {
        Op::TypeVoid => Type::Void,
        Op::TypeBool => Type::Bool,
        Op::TypeInt => Type::Int {
            width: lit(0)?,
            signed: lit(1)? != 0,
        },
        Op::TypeFloat => Type::Float {
            width: lit(0)?,
            encoding: lit(1),
        },
        Op::TypeVector => Type::Vector {
            component: id(0)?,
            count: lit(1)?,
        },
        Op::TypeMatrix => Type::Matrix {
            column: id(0)?,
            count: lit(1)?,
        },
        Op::TypeArray => Type::Array {
            element: id(0)?,
            length: id(1)?,
        },
        Op::TypeRuntimeArray => Type::RuntimeArray { element: id(0)? },
        Op::TypeStruct => Type::Struct {
            members: ids_from(0),
        },
        Op::TypePointer => Type::Pointer {
            storage: lit(0)?,
            pointee: id(1)?,
        },
        Op::TypeUntypedPointerKHR => Type::UntypedPointer { storage: lit(0)? },
        Op::TypeFunction => Type::Function {
            ret: id(0)?,
            params: ids_from(1),
        },
        Op::TypeCooperativeMatrixKHR => Type::CoopMat {
            component: id(0)?,
            scope: id(1)?,
            rows: id(2)?,
            cols: id(3)?,
            usage: id(4)?,
        },
        _ if is_type_opcode(inst.opcode) => Type::Other(inst.opcode),
        _ => return None,
    })
}

/// Whether the opcode declares a type (grammar class "Type-Declaration", forward pointers excluded).
pub fn is_type_opcode(opcode: u16) -> bool {
    opcode != Op::TypeForwardPointer as u16
        && tangle_spirv::grammar::instruction(opcode).is_some_and(|d| d.class == "Type-Declaration")
}

/// The value of a constant-defining instruction, or `None` if it defines no constant.
fn constant_value(op: Op, inst: &Instruction) -> Option<ConstValue> {
    Some(match op {
        Op::Constant => ConstValue::Scalar(inst.literal_operand(0)?),
        Op::ConstantTrue => ConstValue::Bool(true),
        Op::ConstantFalse => ConstValue::Bool(false),
        Op::ConstantComposite | Op::ConstantCompositeReplicateEXT => {
            ConstValue::Composite(inst.operands.iter().filter_map(Operand::id).collect())
        }
        Op::ConstantNull => ConstValue::Null,
        Op::ConstantSampler => ConstValue::Spec,
        Op::SpecConstant
        | Op::SpecConstantTrue
        | Op::SpecConstantFalse
        | Op::SpecConstantComposite
        | Op::SpecConstantCompositeReplicateEXT
        | Op::SpecConstantOp => ConstValue::Spec,
        _ => return None,
    })
}

/// The closure of a set of capabilities under "implicitly declares" (the grammar's `capabilities`
/// list of each Capability enumerant, e.g. Shader → Matrix, DotProductInput4x8Bit → Int8,
/// GroupNonUniformRotateKHR → GroupNonUniform).
pub fn implied_closure(declared: &[u32]) -> IdSet<u32> {
    let mut all = IdSet::default();
    let mut stack: Vec<u32> = declared.to_vec();
    while let Some(cap) = stack.pop() {
        if all.insert(cap) {
            if let Some(e) = OperandKind::Capability.enumerant(cap) {
                stack.extend(e.capabilities.iter().copied());
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv::Capability as C;

    #[test]
    fn implication_follows_the_grammar() {
        let caps = implied_closure(&[
            C::Shader as u32,
            C::GroupNonUniformRotateKHR as u32,
            C::DotProductInput4x8Bit as u32,
        ]);
        for cap in [C::Matrix, C::GroupNonUniform, C::Int8, C::Shader] {
            assert!(caps.contains(&(cap as u32)), "{cap:?}");
        }
        assert!(!caps.contains(&(C::Kernel as u32)));
    }
}
