//! Entry point interfaces (SPIR-V 2.16.1 and `OpEntryPoint`; SPIRV-Tools `validate_interfaces.cpp`,
//! `validate_entry_point` checks): a module has an entry point unless it is a library (Linkage),
//! and from SPIR-V 1.4 on an entry point's interface lists every global variable its static call
//! tree references ("The Interface is a list of ... all global variables referenced by the entry
//! point's call tree"). In Vulkan an entry point lists and uses at most one push constant
//! block, and its static call tree has no cycles.

use super::{Ctx, Sink};
use crate::facts::IdSet;
use crate::vuid::Vuid;
use spirv::{Capability, Op, StorageClass};
use tangle_spirv::Id;

/// An entry-point interface rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InterfaceError {
    /// 2.4: "All entry point declarations" — a module without Linkage needs at least one.
    #[error(
        "the module has no OpEntryPoint (only modules with the Linkage capability may omit it)"
    )]
    NoEntryPoint,
    /// SPIR-V 1.4+: the interface lists all global variables the entry point uses.
    #[error(
        "global variable %{variable} is used by entry point '{entry}' but is not in its interface"
    )]
    MissingFromInterface { variable: Id, entry: String },
    /// SPIR-V 1.3 and earlier: "Interface ... must be OpVariable instructions with Input or Output storage".
    #[error("before SPIR-V 1.4 the interface of entry point '{entry}' may list only Input and Output variables (%{id})")]
    InterfaceStorageClass { id: Id, entry: String },
    /// Interface ids must be variables in Input, Output or (1.4+) any global storage class.
    #[error("interface id %{id} of entry point '{entry}' is not a global variable")]
    NotAVariable { id: Id, entry: String },
    /// Vulkan: "there must be no more than one push constant block statically used per shader
    /// entry point" (and, from SPIR-V 1.4, no more than one PushConstant variable in its
    /// interface).
    #[error(
        "entry point '{entry}' {how} more than one PushConstant variable (%{first} and %{second})"
    )]
    SeveralPushConstants {
        entry: String,
        how: &'static str,
        first: Id,
        second: Id,
    },
    /// Vulkan (VUID-StandaloneSpirv-None-04634): "The static function-call graph for an entry
    /// point must not contain cycles; that is, static recursion is not allowed" (SPIRV-Tools
    /// `ValidateEntryPoints`; other environments allow recursion).
    #[error("the call graph of entry point '{entry}' has a cycle (recursion)")]
    RecursiveCallGraph { entry: String },
    /// SPIRV-Tools `ValidateFunction`, in every environment: "A function may not be targeted by
    /// both an OpEntryPoint instruction and an OpFunctionCall instruction."
    #[error("entry point '{entry}' is also called with OpFunctionCall")]
    EntryPointCalled { entry: String },
    /// SPV_KHR_workgroup_memory_explicit_layout (SPIRV-Tools `CheckDecorationsOfEntryPoints`):
    /// "When declaring WorkgroupMemoryExplicitLayoutKHR, either all or none of the Workgroup
    /// Storage Class variables in the entry point interface must point to struct types decorated
    /// with Block".
    #[error("entry point '{entry}' has Workgroup variables both explicitly laid out (Block, %{block}) and not (%{plain}): with WorkgroupMemoryExplicitLayoutKHR all or none of them must be Block structs")]
    WorkgroupBlocksMixed { entry: String, block: Id, plain: Id },
    /// The same check: "if more than one Workgroup Storage Class variable in the entry point
    /// interface point to a type decorated with Block, all of them must be decorated with
    /// Aliased".
    #[error("entry point '{entry}' has several Workgroup Block variables, and %{variable} is not decorated Aliased (all of them must be)")]
    WorkgroupBlocksNotAliased { entry: String, variable: Id },
    /// The same check: "Workgroup Storage Class variables can't be decorated with Block unless
    /// declaring the WorkgroupMemoryExplicitLayoutKHR capability."
    #[error("Workgroup variable %{variable} of entry point '{entry}' is a Block struct, which needs the WorkgroupMemoryExplicitLayoutKHR capability")]
    WorkgroupBlockWithoutCapability { entry: String, variable: Id },
}

impl InterfaceError {
    /// The Vulkan VUID of environment rules.
    pub fn vuid(&self) -> Option<Vuid> {
        match self {
            InterfaceError::SeveralPushConstants { how: "lists", .. } => {
                Some(Vuid("VUID-StandaloneSpirv-OpVariable-06673"))
            }
            InterfaceError::SeveralPushConstants { .. } => {
                Some(Vuid("VUID-StandaloneSpirv-OpEntryPoint-06674"))
            }
            InterfaceError::RecursiveCallGraph { .. } => {
                Some(Vuid("VUID-StandaloneSpirv-None-04634"))
            }
            _ => None,
        }
    }
}

/// Runs the entry point and interface checks.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    if f.entry_points.is_empty() && !f.has_capability(Capability::Linkage) {
        sink.error(None, InterfaceError::NoEntryPoint);
        return;
    }
    let globals: IdSet = cx
        .module
        .instructions
        .iter()
        .filter(|i| matches!(i.op(), Some(Op::Variable | Op::UntypedVariableKHR)))
        .filter(|i| i.literal_operand(0) != Some(StorageClass::Function as u64))
        .filter_map(|i| i.result_id)
        .collect();
    called_entry_points(cx, sink);
    if cx.vulkan() {
        recursion(cx, sink);
    }
    let since_1_4 = cx.module.header.version >= (1, 4);
    let input_output = [
        Some(StorageClass::Input as u64),
        Some(StorageClass::Output as u64),
    ];
    for entry in &f.entry_points {
        for id in &entry.interface {
            let name = entry.name.clone();
            if !globals.contains(id) {
                sink.error(
                    Some(entry.index),
                    InterfaceError::NotAVariable {
                        id: *id,
                        entry: name,
                    },
                );
            } else if !since_1_4
                && !input_output.contains(&cx.def(*id).and_then(|d| d.literal_operand(0)))
            {
                sink.error(
                    Some(entry.index),
                    InterfaceError::InterfaceStorageClass {
                        id: *id,
                        entry: name,
                    },
                );
            }
        }
        workgroup_blocks(cx, entry, sink);
        if !since_1_4 && !cx.vulkan() {
            continue;
        }
        let used = cx.ids_used_by(&[entry.function]);
        if cx.vulkan() {
            push_constants(cx, entry, &used, sink);
        }
        if !since_1_4 {
            continue;
        }
        let listed: IdSet = entry.interface.iter().copied().collect();
        for &id in &used {
            if globals.contains(&id) && !listed.contains(&id) {
                let e = InterfaceError::MissingFromInterface {
                    variable: id,
                    entry: entry.name.clone(),
                };
                sink.error(Some(entry.index), e);
            }
        }
    }
}

/// SPV_KHR_workgroup_memory_explicit_layout, counted as SPIRV-Tools counts: over the Workgroup
/// variables the entry point's interface lists (only SPIR-V 1.4+ interfaces list them), those
/// whose pointee is a struct decorated Block, and of the struct ones, those decorated Aliased.
/// With the capability (and without `UntypedPointersKHR`, which lifts both rules), either none
/// or all are Blocks, and several Blocks are all Aliased; without it, none is a Block.
fn workgroup_blocks(cx: &Ctx, entry: &crate::facts::EntryPoint, sink: &mut Sink) {
    let f = cx.facts;
    let mut seen = IdSet::default();
    let (mut blocks, mut plain, mut not_aliased) = (Vec::new(), Vec::new(), Vec::new());
    for &id in &entry.interface {
        let Some(def) = cx.def(id).filter(|d| d.op() == Some(Op::Variable)) else {
            continue;
        };
        if def.literal_operand(0) != Some(StorageClass::Workgroup as u64) || !seen.insert(id) {
            continue;
        }
        let pointee = match def.result_type.and_then(|t| f.ty(t)) {
            Some(crate::facts::Type::Pointer { pointee, .. }) => *pointee,
            _ => continue,
        };
        let is_struct = matches!(f.ty(pointee), Some(crate::facts::Type::Struct { .. }));
        if is_struct && f.has_decoration(pointee, spirv::Decoration::Block) {
            blocks.push(id);
            if !f.has_decoration(id, spirv::Decoration::Aliased) {
                not_aliased.push(id);
            }
        } else {
            plain.push(id);
        }
    }
    let Some(&block) = blocks.first() else {
        return;
    };
    let entry_name = entry.name.clone();
    let error = if !f.has_capability(Capability::WorkgroupMemoryExplicitLayoutKHR) {
        InterfaceError::WorkgroupBlockWithoutCapability {
            entry: entry_name,
            variable: block,
        }
    } else if f.has_capability(Capability::UntypedPointersKHR) {
        return;
    } else if let Some(&plain) = plain.first() {
        InterfaceError::WorkgroupBlocksMixed {
            entry: entry_name,
            block,
            plain,
        }
    } else if let (true, Some(&variable)) = (blocks.len() > 1, not_aliased.first()) {
        InterfaceError::WorkgroupBlocksNotAliased {
            entry: entry_name,
            variable,
        }
    } else {
        return;
    };
    sink.error(Some(entry.index), error);
}

/// Vulkan: one push constant block per entry point, in its interface (SPIR-V 1.4+) and in what
/// its call tree uses.
fn push_constants(cx: &Ctx, entry: &crate::facts::EntryPoint, used: &[Id], sink: &mut Sink) {
    let is_push_constant = |id: &Id| {
        cx.def(*id).is_some_and(|d| {
            d.op() == Some(Op::Variable)
                && d.literal_operand(0) == Some(StorageClass::PushConstant as u64)
        })
    };
    let listed: Vec<Id> = entry
        .interface
        .iter()
        .copied()
        .filter(is_push_constant)
        .collect();
    let used: Vec<Id> = used.iter().copied().filter(is_push_constant).collect();
    for (how, found) in [("lists", listed), ("uses", used)] {
        if let [first, second, ..] = found[..] {
            sink.error(
                Some(entry.index),
                InterfaceError::SeveralPushConstants {
                    entry: entry.name.clone(),
                    how,
                    first,
                    second,
                },
            );
            return;
        }
    }
}

/// Vulkan: no entry point reaches a cycle of calls; reported at the entry point's `OpFunction`,
/// as SPIRV-Tools does.
fn recursion(cx: &Ctx, sink: &mut Sink) {
    let recursive = cx.cfg.reaching_recursion();
    for entry in &cx.facts.entry_points {
        if recursive.contains(&entry.function) {
            sink.error(
                cx.facts.defs.get(&entry.function).copied(),
                InterfaceError::RecursiveCallGraph {
                    entry: entry.name.clone(),
                },
            );
        }
    }
}

/// No function is both an entry point and called; reported once per function, at its
/// `OpFunction`, as SPIRV-Tools does.
fn called_entry_points(cx: &Ctx, sink: &mut Sink) {
    let called: IdSet = cx
        .cfg
        .functions
        .iter()
        .flat_map(|f| f.callees.iter().copied())
        .collect();
    let mut reported = IdSet::default();
    for entry in &cx.facts.entry_points {
        if called.contains(&entry.function) && reported.insert(entry.function) {
            sink.error(
                cx.facts.defs.get(&entry.function).copied(),
                InterfaceError::EntryPointCalled {
                    entry: entry.name.clone(),
                },
            );
        }
    }
}
