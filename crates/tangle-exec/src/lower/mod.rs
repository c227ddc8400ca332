//! Lowering: a validated module, an entry point and specialization constants become a
//! [`Program`]: types resolved with their layouts, dense register slots, constants folded,
//! functions as blocks of ops with structured-order ranks.
//!
//! The passes, in order: module facts (decorations, entry point), the types/constants/variables
//! section in module order ([`types`], [`constants`]), then functions: a slot pre-pass over every
//! result id, and per-block op lowering ([`function`], [`arith`], [`memory`]).

pub mod arith;
pub mod cfg;
pub mod constants;
pub mod coopmat;
pub mod coopmat_support;
pub mod dot;
pub mod function;
pub mod group;
pub mod image;
pub mod inline;
pub mod memory;
pub mod promote;
pub mod promote_inlined;
pub mod types;

use crate::device::SpecConstants;
use crate::error::{malformed, unsupported, ExecError, InstRef};
use crate::profile::Profile;
use crate::program::{
    DescriptorArray, DescriptorKind, Op, Program, RegionKind, Slot, Type, TypeIdx, Variable,
};
use spirv::Op as SpvOp;
use std::collections::HashMap;

/// The `MaximallyReconvergesKHR` execution mode (SPV_KHR_maximal_reconvergence: 6023).
const MAXIMALLY_RECONVERGES_KHR: u64 = 6023;
use tangle_spirv::module::{Instruction, Module};

/// Decorations of one id (or struct member): `(decoration, literal parameters)`.
pub(crate) type Decorations = Vec<(u32, Vec<u64>)>;

/// A value an id stands for: its first slot and its (lowered) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Value {
    pub slot: Slot,
    pub ty: TypeIdx,
}

/// State of one lowering.
pub(crate) struct Lowerer<'m> {
    pub module: &'m Module,
    pub spec: &'m SpecConstants,
    pub program: Program,
    /// Decorations by id.
    pub decorations: HashMap<u32, Decorations>,
    /// Member decorations by (struct id, member).
    pub member_decorations: HashMap<(u32, u32), Decorations>,
    /// Type instructions by id.
    pub type_insts: HashMap<u32, &'m Instruction>,
    /// Lowered types by (type id, matrix layout override).
    pub type_memo: HashMap<(u32, Option<(u32, bool)>), TypeIdx>,
    /// Values (constants, variables, SSA results) by id.
    pub values: HashMap<u32, Value>,
    /// For pointer-valued ids: the lowered pointee type (with the layout of the path taken).
    pub pointees: HashMap<u32, TypeIdx>,
    /// Constant values by slot (for folding).
    pub const_values: HashMap<Slot, u64>,
    /// The `GLSL.std.450` import id.
    pub glsl: Option<u32>,
    /// Function indices by id.
    pub function_ids: HashMap<u32, u32>,
    /// The instruction being lowered (for error locations).
    pub at: InstRef,
    /// Pointers into register-promoted variables: first slot and pointee type.
    pub reg_ptrs: HashMap<u32, (Slot, TypeIdx)>,
    /// Ids used by exactly one instruction operand.
    pub single_use: std::collections::HashSet<u32>,
    /// Ids the executor cannot hold, with what they are (an error only when used).
    pub unsupported_ids: HashMap<u32, String>,
    /// Loads from promoted variables that share the variable's slots ([`promote`]).
    pub alias_loads: std::collections::HashSet<u32>,
    /// Constant slots whose folded value is undefined (a specialization constant divided by
    /// zero, and what is folded from it): [`constants`] lists them in `Program::undefs`.
    pub undef_consts: std::collections::HashSet<Slot>,
    /// Pointers to one component of a cooperative matrix in a variable, by id: the matrix's
    /// rows, columns, length and the slot of the index (for the ownership check on loads).
    pub coopmat_elements: HashMap<u32, (u32, u32, u32, Slot)>,
    /// Invocations per subgroup: a cooperative matrix holds ⌈elements / this⌉ per invocation.
    pub subgroup_size: u32,
    /// Memory semantics of the `OpMemoryBarrier`s since the last `OpControlBarrier`: the next
    /// control barrier orders what they name (`memoryBarrierBuffer(); barrier();`).
    pub memory_barrier: u32,
    /// Their [`crate::check::sync`] flags, for the control barrier's part as a memory barrier.
    pub memory_barrier_sync: u8,
    /// `OpString` texts by id (the files `OpLine` names).
    pub strings: HashMap<u32, String>,
    /// The source line of the instructions being lowered, from the last `OpLine`.
    pub line: Option<Box<crate::error::SourceLine>>,
    /// Descriptor-array variables: their index in [`Program::descriptor_arrays`].
    pub descriptor_vars: HashMap<u32, u32>,
    /// Lowered types that are image handles (`OpTypeImage`).
    pub handle_types: std::collections::HashSet<TypeIdx>,
    /// The SPIR-V `Dim` of image variables and of the handles loaded from them, by id.
    pub image_dims: HashMap<u32, u64>,
    /// Arrays of images and samplers, by variable id: their index in
    /// [`Program::descriptor_arrays`] and the handle type ([`Lowerer::image_array`]).
    pub image_arrays: HashMap<u32, (u32, TypeIdx)>,
    /// Whether the Workgroup variables seen so far are `Block`s (explicitly laid out and
    /// aliased) or not; `None` before the first.
    pub workgroup_blocks: Option<bool>,
}

/// Rejects a workgroup size with a zero dimension, naming where it came from (`sources`, by
/// axis): no device can run it, so it is not a device limit.
fn nonzero_size(size: [u32; 3], sources: &[String; 3]) -> Result<(), ExecError> {
    let Some(axis) = size.iter().position(|&s| s == 0) else {
        return Ok(());
    };
    let [x, y, z] = size;
    let name = ["x", "y", "z"].get(axis).copied().unwrap_or("?");
    let from = sources.get(axis).map_or("", String::as_str);
    Err(ExecError::InvalidEverywhere(format!(
        "the workgroup size {x}x{y}x{z} has a zero dimension: {name} comes from {from}"
    )))
}

/// Lowers `entry_point` of `module` for a device with `profile`.
pub fn lower(
    module: &Module,
    entry_point: &str,
    spec: &SpecConstants,
    profile: &Profile,
) -> Result<Program, ExecError> {
    let mut l = Lowerer {
        module,
        spec,
        program: Program::default(),
        decorations: HashMap::new(),
        member_decorations: HashMap::new(),
        type_insts: HashMap::new(),
        type_memo: HashMap::new(),
        values: HashMap::new(),
        pointees: HashMap::new(),
        const_values: HashMap::new(),
        glsl: None,
        function_ids: HashMap::new(),
        at: InstRef::default(),
        reg_ptrs: HashMap::new(),
        alias_loads: Default::default(),
        undef_consts: Default::default(),
        unsupported_ids: HashMap::new(),
        single_use: Default::default(),
        subgroup_size: profile.subgroup_size,
        coopmat_elements: HashMap::new(),
        strings: HashMap::new(),
        line: None,
        descriptor_vars: HashMap::new(),
        workgroup_blocks: None,
        handle_types: Default::default(),
        image_dims: HashMap::new(),
        image_arrays: HashMap::new(),
        memory_barrier: 0,
        memory_barrier_sync: 0,
    };
    l.collect_facts();
    l.check_capabilities(profile)?;
    let entry_id = l.find_entry(entry_point)?;
    l.globals()?;
    l.local_size(entry_id)?;
    coopmat_support::check(&l, profile)?;
    l.functions(entry_id)?;
    // The last slot is the executor's scratch for ops that read their own destination.
    l.alloc(1)?;
    l.program.compute_leaves();
    Ok(l.program)
}

impl<'m> Lowerer<'m> {
    /// Records decorations, type instructions and the extended-instruction imports.
    fn collect_facts(&mut self) {
        for inst in &self.module.instructions {
            match inst.op() {
                Some(SpvOp::String) => {
                    if let (Some(id), Some(text)) = (inst.result_id, inst.string_operand(0)) {
                        self.strings.insert(id, text.to_string());
                    }
                }
                Some(SpvOp::Decorate) | Some(SpvOp::DecorateId) => {
                    if let (Some(target), Some(dec)) = (inst.id_operand(0), inst.literal_operand(1))
                    {
                        let params = inst
                            .operands
                            .iter()
                            .skip(2)
                            .filter_map(|o| o.literal().or(o.id().map(u64::from)))
                            .collect();
                        self.decorations
                            .entry(target)
                            .or_default()
                            .push((dec as u32, params));
                    }
                }
                Some(SpvOp::MemberDecorate) => {
                    if let (Some(target), Some(member), Some(dec)) = (
                        inst.id_operand(0),
                        inst.literal_operand(1),
                        inst.literal_operand(2),
                    ) {
                        let params = inst
                            .operands
                            .iter()
                            .skip(3)
                            .filter_map(|o| o.literal())
                            .collect();
                        self.member_decorations
                            .entry((target, member as u32))
                            .or_default()
                            .push((dec as u32, params));
                    }
                }
                Some(SpvOp::ExtInstImport) => {
                    if inst.string_operand(0) == Some("GLSL.std.450") {
                        self.glsl = inst.result_id;
                    }
                }
                _ => {
                    if let (Some(id), Some(desc)) = (inst.result_id, inst.desc()) {
                        if desc.name.starts_with("OpType") {
                            self.type_insts.insert(id, inst);
                        }
                    }
                }
            }
        }
    }

    /// The decoration `dec` of `id`, with its parameters.
    pub fn decoration(&self, id: u32, dec: spirv::Decoration) -> Option<&[u64]> {
        self.decorations
            .get(&id)?
            .iter()
            .find(|(d, _)| *d == dec as u32)
            .map(|(_, p)| p.as_slice())
    }

    /// The member decoration `dec` of `(id, member)`, with its parameters.
    pub fn member_decoration(
        &self,
        id: u32,
        member: u32,
        dec: spirv::Decoration,
    ) -> Option<&[u64]> {
        self.member_decorations
            .get(&(id, member))?
            .iter()
            .find(|(d, _)| *d == dec as u32)
            .map(|(_, p)| p.as_slice())
    }

    /// The function id of the named GLCompute entry point.
    fn find_entry(&mut self, name: &str) -> Result<u32, ExecError> {
        for inst in &self.module.instructions {
            if inst.op() == Some(SpvOp::EntryPoint)
                && inst.literal_operand(0) == Some(spirv::ExecutionModel::GLCompute as u64)
                && inst.string_operand(2) == Some(name)
            {
                return inst.id_operand(1).ok_or_else(|| {
                    malformed(&InstRef::of(inst), "entry point without a function")
                });
            }
        }
        Err(ExecError::NoEntryPoint(name.to_string()))
    }

    /// An error naming the current instruction.
    pub fn malformed(&self, message: impl Into<String>) -> ExecError {
        malformed(&self.at, message)
    }

    /// An "unsupported" error naming the current instruction.
    pub fn unsupported(&self, what: impl Into<String>) -> ExecError {
        unsupported(&self.at, what)
    }

    /// The value of an id.
    pub fn value(&self, id: Option<u32>) -> Result<Value, ExecError> {
        let id = id.ok_or_else(|| self.malformed("missing operand"))?;
        if let Some(what) = self.unsupported_ids.get(&id) {
            return Err(self.unsupported(what.clone()));
        }
        self.values
            .get(&id)
            .copied()
            .ok_or_else(|| self.malformed(format!("%{id} has no value the executor knows")))
    }

    /// The value of operand `i` of `inst`.
    pub fn operand(&self, inst: &Instruction, i: usize) -> Result<Value, ExecError> {
        self.value(inst.id_operand(i))
    }

    /// A fresh range of `n` slots.
    pub fn alloc(&mut self, n: u32) -> Result<Slot, ExecError> {
        let s = self.program.slots;
        self.program.slots = s.checked_add(n).filter(|&t| t <= 1 << 24).ok_or_else(|| {
            ExecError::Limit("the program needs more than 16M register slots".to_string())
        })?;
        Ok(s)
    }

    /// A constant slot holding `v`.
    pub fn constant(&mut self, v: u64) -> Result<Slot, ExecError> {
        let s = self.alloc(1)?;
        self.program.constants.push((s, v));
        self.const_values.insert(s, v);
        Ok(s)
    }

    /// The constant value in `slot`, if it holds one.
    pub fn const_value(&self, slot: Slot) -> Option<u64> {
        self.const_values.get(&slot).copied()
    }

    /// The location index of the current instruction, recorded for diagnostics.
    pub fn location(&mut self) -> u32 {
        self.program.locations.push(self.at.clone());
        (self.program.locations.len() - 1) as u32
    }

    /// The types/constants/global-variables section, in module order.
    fn globals(&mut self) -> Result<(), ExecError> {
        let module = self.module;
        for inst in &module.instructions {
            self.at = InstRef::of(inst);
            let Some(op) = inst.op() else {
                return Err(self.unsupported(format!("opcode {}", inst.opcode)));
            };
            match op {
                SpvOp::Function => break,
                SpvOp::Variable => self.global_variable(inst)?,
                SpvOp::Undef => {
                    let ty = self.lower_type(inst.result_type)?;
                    self.const_composite(inst.result_id, ty, None)?;
                    let v = self.value(inst.result_id)?;
                    let count = self.program.ty(ty).slots;
                    let loc = self.location();
                    self.program.undefs.push((v.slot, count, loc));
                    self.undef_consts.extend(v.slot..v.slot + count);
                }
                _ if constants::is_constant(op) => self.lower_constant(inst, op)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// A module-scope `OpVariable`.
    fn global_variable(&mut self, inst: &Instruction) -> Result<(), ExecError> {
        let id = inst
            .result_id
            .ok_or_else(|| self.malformed("variable without result id"))?;
        let class = inst.literal_operand(0).unwrap_or(u64::MAX) as u32;
        let ptr_ty = self.lower_type(inst.result_type)?;
        let pointee = self.pointee_of(ptr_ty)?;
        let size = self.program.ty(pointee).size;
        let init = match inst.id_operand(1) {
            Some(init) => Some(self.value(Some(init))?.slot),
            None => None,
        };
        use spirv::StorageClass as SC;
        let (region, offset, builtin) = match SC::from_u32(class) {
            Some(SC::StorageBuffer) | Some(SC::Uniform) => {
                let set = self
                    .decoration(id, spirv::Decoration::DescriptorSet)
                    .and_then(|p| p.first().copied())
                    .unwrap_or(0);
                let binding = self
                    .decoration(id, spirv::Decoration::Binding)
                    .and_then(|p| p.first().copied())
                    .unwrap_or(0);
                // A block is a struct; an array of blocks is an array of descriptors, each
                // bound separately (Vulkan "DescriptorSet and Binding": "If the variable is an
                // array, the array elements are consumed by the descriptors of the binding").
                let count = match self.program.ty(pointee).ty {
                    Type::Array { count, .. } => Some(Some(count)),
                    Type::RuntimeArray { .. } => Some(None),
                    _ => None,
                };
                let (set, binding) = (set as u32, binding as u32);
                let region = match count {
                    Some(count) => {
                        let index = self.program.descriptor_arrays.len() as u32;
                        self.program.descriptor_arrays.push(DescriptorArray {
                            set,
                            binding,
                            count,
                            kind: DescriptorKind::Buffer,
                        });
                        self.descriptor_vars.insert(id, index);
                        RegionKind::DescriptorArray { index }
                    }
                    None => RegionKind::Buffer { set, binding },
                };
                (region, 0, None)
            }
            Some(SC::PushConstant) => (RegionKind::PushConstant, 0, None),
            Some(SC::UniformConstant) => match self.image_variable(id, inst)? {
                Some(region) => (region, 0, None),
                None => return Ok(()),
            },
            Some(SC::Workgroup) => (
                RegionKind::Workgroup,
                self.workgroup_offset(inst, size)?,
                None,
            ),
            Some(SC::Private) | Some(SC::Input) => {
                let builtin = self.builtin_of(id, pointee);
                let off = self.alloc_invocation(size);
                if class == SC::Private as u32 && init.is_none() {
                    // "If not present, the variable's value is undefined."
                    let loc = self.location();
                    self.program.undef_memory.push((off, size, loc));
                }
                (RegionKind::Invocation, off, builtin)
            }
            Some(SC::Output) => (RegionKind::Invocation, self.alloc_invocation(size), None),
            _ => {
                // Images, samplers and other classes: only an error if the shader uses them.
                let what = format!("a variable of storage class {class} (images, samplers, ...)");
                self.unsupported_ids.insert(id, what);
                return Ok(());
            }
        };
        let slot = self.alloc(1)?;
        if !matches!(
            region,
            RegionKind::Buffer { .. } | RegionKind::Image { .. } | RegionKind::Sampler { .. }
        ) {
            // (A descriptor array's pointer is region 0, which holds no memory: only an access
            // chain through it, which picks a descriptor, can reach a buffer.)
            let v = memory::pointer_value(region, offset);
            self.program.constants.push((slot, v));
            self.const_values.insert(slot, v);
        }
        self.values.insert(id, Value { slot, ty: ptr_ty });
        self.pointees.insert(id, pointee);
        self.program.variables.push(Variable {
            slot,
            region,
            offset,
            ty: pointee,
            builtin,
            init,
        });
        Ok(())
    }

    /// The offset of a Workgroup variable of `size` bytes in workgroup memory. Variables of a
    /// `Block` type (SPV_KHR_workgroup_memory_explicit_layout) all start at offset 0: "All the
    /// Workgroup blocks share the same underlying storage, so it is possible to get different
    /// views of the workgroup storage"; other variables follow one another. "Either all or none
    /// of the variables must be explicitly laid out", so a module mixing the two is refused.
    fn workgroup_offset(&mut self, inst: &Instruction, size: u64) -> Result<u64, ExecError> {
        let pointee_id = inst
            .result_type
            .and_then(|t| self.type_insts.get(&t))
            .and_then(|t| t.id_operand(1));
        let block =
            pointee_id.is_some_and(|t| self.decoration(t, spirv::Decoration::Block).is_some());
        let kind = if block { "Block" } else { "non-Block" };
        match self.workgroup_blocks {
            Some(was) if was != block => {
                return Err(self.malformed(format!(
                    "a {kind} Workgroup variable beside {} ones (SPV_KHR_workgroup_memory_explicit_layout: \"Either all or none of the variables must be explicitly laid out\")",
                    if was { "Block" } else { "non-Block" }
                )))
            }
            _ => self.workgroup_blocks = Some(block),
        }
        if block {
            self.program.workgroup_bytes = self.program.workgroup_bytes.max(size);
            return Ok(0);
        }
        let off = memory::align_up(self.program.workgroup_bytes, 16);
        self.program.workgroup_bytes = off.saturating_add(size);
        Ok(off)
    }

    /// Refuses a module declaring a `WorkgroupMemoryExplicitLayout*KHR` capability on a profile
    /// without VK_KHR_workgroup_memory_explicit_layout.
    fn check_capabilities(&self, profile: &Profile) -> Result<(), ExecError> {
        use spirv::Capability as C;
        for inst in &self.module.instructions {
            if inst.op() != Some(SpvOp::Capability) {
                continue;
            }
            let cap = inst.literal_operand(0).unwrap_or(u64::MAX);
            let explicit = [
                C::WorkgroupMemoryExplicitLayoutKHR,
                C::WorkgroupMemoryExplicitLayout8BitAccessKHR,
                C::WorkgroupMemoryExplicitLayout16BitAccessKHR,
            ]
            .iter()
            .any(|c| *c as u64 == cap);
            if explicit && !profile.workgroup_memory_explicit_layout {
                return Err(ExecError::ProfileLacks {
                    at: InstRef::of(inst),
                    profile: profile.name.clone(),
                    what: "VK_KHR_workgroup_memory_explicit_layout".to_string(),
                });
            }
        }
        Ok(())
    }

    /// The built-in an Input variable (or the first member of an Input block) holds.
    fn builtin_of(&self, id: u32, _pointee: TypeIdx) -> Option<u32> {
        self.decoration(id, spirv::Decoration::BuiltIn)
            .and_then(|p| p.first())
            .map(|&b| b as u32)
    }

    /// Reserves `size` bytes of per-invocation memory; returns the offset.
    pub fn alloc_invocation(&mut self, size: u64) -> u64 {
        let off = memory::align_up(self.program.invocation_bytes, 16);
        self.program.invocation_bytes = off.saturating_add(size);
        off
    }

    /// Records the `MaximallyReconvergesKHR` mode, and the workgroup size: `LocalSizeId`, then
    /// `LocalSize`, overridden by a `WorkgroupSize`
    /// built-in constant ("If an object is decorated with the WorkgroupSize decoration, this
    /// takes precedence over any LocalSize or LocalSizeId execution mode").
    fn local_size(&mut self, entry: u32) -> Result<(), ExecError> {
        let mut size = [1u32, 1, 1];
        // Where each dimension came from, to name a zero one.
        let mut sources: [String; 3] = Default::default();
        for inst in &self.module.instructions {
            self.at = InstRef::of(inst);
            let is_mode = inst.op() == Some(SpvOp::ExecutionMode);
            let is_mode_id = inst.op() == Some(SpvOp::ExecutionModeId);
            if !(is_mode || is_mode_id) || inst.id_operand(0) != Some(entry) {
                continue;
            }
            let mode = inst.literal_operand(1);
            if is_mode && mode == Some(MAXIMALLY_RECONVERGES_KHR) {
                self.program.maximally_reconverges = true;
            } else if is_mode && mode == Some(spirv::ExecutionMode::LocalSize as u64) {
                for (i, s) in size.iter_mut().enumerate() {
                    *s = inst.literal_operand(2 + i).unwrap_or(1) as u32;
                    sources[i] = "the LocalSize execution mode".to_string();
                }
            } else if is_mode_id && mode == Some(spirv::ExecutionMode::LocalSizeId as u64) {
                for (i, s) in size.iter_mut().enumerate() {
                    let v = self.operand(inst, 2 + i)?;
                    let c = self
                        .const_value(v.slot)
                        .ok_or_else(|| self.malformed("LocalSizeId operand is not a constant"))?;
                    *s = size_dimension(c);
                    sources[i] = format!(
                        "the LocalSizeId operand {}",
                        self.constant_name(inst.id_operand(2 + i))
                    );
                }
            }
        }
        let wg = self.decorations.iter().find_map(|(id, decs)| {
            decs.iter()
                .any(|(d, p)| {
                    *d == spirv::Decoration::BuiltIn as u32
                        && p.first() == Some(&(spirv::BuiltIn::WorkgroupSize as u64))
                })
                .then_some(*id)
        });
        if let Some((id, v)) = wg.and_then(|id| Some((id, self.values.get(&id).copied()?))) {
            let parts = self.constituents(id);
            for (i, s) in size.iter_mut().enumerate() {
                if let Some(c) = self.const_value(v.slot + i as u32) {
                    *s = size_dimension(c);
                    let part = parts.as_ref().and_then(|p| p.get(i).copied());
                    sources[i] = match part {
                        Some(_) => format!(
                            "{} in the WorkgroupSize built-in %{id}",
                            self.constant_name(part)
                        ),
                        None => format!(
                            "the WorkgroupSize built-in {}",
                            self.constant_name(Some(id))
                        ),
                    };
                }
            }
        }
        nonzero_size(size, &sources)?;
        self.program.local_size = size;
        Ok(())
    }

    /// Names a workgroup dimension's constant (`%5`), with its `SpecId` when it is a
    /// specialization constant, the usual way a zero gets in (`%5 (SpecId 0)`).
    fn constant_name(&self, id: Option<u32>) -> String {
        let Some(id) = id else {
            return "an operand".to_string();
        };
        match self
            .decoration(id, spirv::Decoration::SpecId)
            .and_then(|p| p.first())
        {
            Some(spec_id) => format!("%{id} (SpecId {spec_id})"),
            None => format!("%{id}"),
        }
    }

    /// The constituent ids of a composite constant, when `id` is one.
    fn constituents(&self, id: u32) -> Option<Vec<u32>> {
        let inst = self
            .module
            .instructions
            .iter()
            .find(|i| i.result_id == Some(id))?;
        matches!(
            inst.op(),
            Some(SpvOp::ConstantComposite | SpvOp::SpecConstantComposite)
        )
        .then(|| inst.operands.iter().filter_map(|o| o.id()).collect())
    }

    /// Pushes an op at the current location.
    pub fn emit(&mut self, out: &mut Out, op: Op) {
        let loc = if let Some(&last) = out.locs.last() {
            if self.program.locations.get(last as usize) == Some(&self.at) {
                last
            } else {
                self.location()
            }
        } else {
            self.location()
        };
        out.ops.push(op);
        out.locs.push(loc);
    }
}

/// Ops being lowered for one block, with their locations.
#[derive(Debug, Default)]
pub(crate) struct Out {
    pub ops: Vec<Op>,
    pub locs: Vec<u32>,
}

/// A workgroup size dimension from a (possibly 64-bit) constant. A value past `u32::MAX` becomes
/// `u32::MAX`, which every device limit rejects, rather than wrapping to a small size that runs.
fn size_dimension(c: u64) -> u32 {
    u32::try_from(c).unwrap_or(u32::MAX)
}
