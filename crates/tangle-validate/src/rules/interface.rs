//! Entry point interfaces (SPIR-V 2.16.1 and `OpEntryPoint`; SPIRV-Tools `validate_interfaces.cpp`,
//! `validate_entry_point` checks): a module has an entry point unless it is a library (Linkage),
//! and from SPIR-V 1.4 on an entry point's interface lists every global variable its static call
//! tree references ("The Interface is a list of ... all global variables referenced by the entry
//! point's call tree").

use super::{Ctx, Sink};
use crate::facts::IdSet;
use spirv::{Capability, Op, StorageClass};
use tangle_spirv::{Id, Operand};

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
        if !since_1_4 {
            continue;
        }
        let listed: IdSet = entry.interface.iter().copied().collect();
        let mut reported = IdSet::default();
        for function in cx.cfg.reachable_functions(&[entry.function]) {
            let Some(func) = cx.cfg.function(function) else {
                continue;
            };
            let body = cx
                .module
                .instructions
                .get(func.start..=func.end)
                .unwrap_or_default();
            for id in body
                .iter()
                .flat_map(|i| i.operands.iter().filter_map(Operand::id))
            {
                if globals.contains(&id) && !listed.contains(&id) && reported.insert(id) {
                    let e = InterfaceError::MissingFromInterface {
                        variable: id,
                        entry: entry.name.clone(),
                    };
                    sink.error(Some(entry.index), e);
                }
            }
        }
    }
}
