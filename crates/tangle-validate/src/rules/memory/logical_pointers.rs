//! The logical-pointer rules, run over the whole module after the instruction passes (SPIRV-Tools
//! `ValidateLogicalPointers`): which instructions take and return logical pointers, and what
//! variable pointers may point to.

use super::MemoryError;
use crate::facts::Type;
use crate::rules::{Ctx, Sink};
use spirv::{AddressingModel, Capability, Op, StorageClass};
use tangle_spirv::{Id, Instruction, Operand};

/// The logical-pointer rules of the Logical and PhysicalStorageBuffer64 addressing models
/// (SPIRV-Tools `ValidateLogicalPointers`, after the instruction passes): which instructions
/// take and return logical pointers (pointers other than PhysicalStorageBuffer ones), and what
/// variable pointers may point to. `--relax-logical-pointer` lifts them.
pub fn check_logical_pointers(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    let model = f.addressing_model;
    let logical_model = model == Some(AddressingModel::Logical as u32)
        || model == Some(AddressingModel::PhysicalStorageBuffer64 as u32);
    if !logical_model || cx.options.relax_logical_pointer {
        return;
    }
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        if let Err(e) = pointer_operands(cx, inst).and_then(|()| pointer_result(cx, inst)) {
            sink.error(Some(index), e);
        }
    }
    variable_pointers(cx, sink);
}

/// The storage class of a logical pointer type (`None` for other types and for
/// PhysicalStorageBuffer pointers).
fn logical_pointer_storage(cx: &Ctx, ty: Option<Id>) -> Option<u32> {
    let storage = match ty.and_then(|t| cx.facts.ty(t))? {
        Type::Pointer { storage, .. } | Type::UntypedPointer { storage } => *storage,
        _ => return None,
    };
    (storage != StorageClass::PhysicalStorageBuffer as u32).then_some(storage)
}

/// Variable pointers live in StorageBuffer memory (with VariablePointersStorageBuffer, which
/// VariablePointers implies) or Workgroup memory (with VariablePointers).
fn variable_pointer_storage_ok(cx: &Ctx, storage: u32) -> bool {
    let f = cx.facts;
    (storage == StorageClass::StorageBuffer as u32
        && f.has_capability(Capability::VariablePointersStorageBuffer))
        || (storage == StorageClass::Workgroup as u32
            && f.has_capability(Capability::VariablePointers))
}

/// SPIRV-Tools `ValidateLogicalPointerOperands` (instructions with a result type only; the
/// storage class is the first logical pointer operand's).
fn pointer_operands(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    if inst.result_type.is_none() {
        return Ok(());
    }
    let Some(storage) = inst
        .operands
        .iter()
        .filter_map(Operand::id)
        .find_map(|v| logical_pointer_storage(cx, cx.facts.type_of(v)))
    else {
        return Ok(());
    };
    let Some(op) = inst.op() else { return Ok(()) };
    let is_atomic = inst.desc().is_some_and(|d| d.class == "Atomic");
    match op {
        Op::Load
        | Op::Store
        | Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::FunctionCall
        | Op::ImageTexelPointer
        | Op::CopyMemory
        | Op::CopyMemorySized
        | Op::CopyObject
        | Op::ArrayLength
        | Op::ExtInst
        | Op::Decorate
        | Op::DecorateId
        | Op::EntryPoint
        | Op::UntypedArrayLengthKHR
        | Op::UntypedAccessChainKHR
        | Op::UntypedInBoundsAccessChainKHR
        | Op::CooperativeMatrixLoadKHR
        | Op::CooperativeMatrixStoreKHR
        | Op::CooperativeMatrixLoadNV
        | Op::CooperativeMatrixStoreNV => Ok(()),
        _ if is_atomic => Ok(()),
        Op::ReturnValue
        | Op::PtrAccessChain
        | Op::PtrEqual
        | Op::PtrNotEqual
        | Op::PtrDiff
        | Op::Select
        | Op::Phi
        | Op::Variable
        | Op::UntypedPtrAccessChainKHR => {
            if variable_pointer_storage_ok(cx, storage) {
                Ok(())
            } else {
                Err(MemoryError::LogicalPointerOperand {
                    why: "this instruction takes pointers only to StorageBuffer or Workgroup memory, with the variable pointers capability for it",
                })
            }
        }
        // Instructions of other extensions SPIRV-Tools lists are not in tangle's scope; the
        // rest take no logical pointers.
        _ if inst.name().contains("RayQuery") || inst.name().contains("HitObject") => Ok(()),
        _ => Err(MemoryError::LogicalPointerOperand {
            why: "this instruction cannot take a pointer operand",
        }),
    }
}

/// SPIRV-Tools `ValidateLogicalPointerReturns`.
fn pointer_result(cx: &Ctx, inst: &Instruction) -> Result<(), MemoryError> {
    let Some(storage) = logical_pointer_storage(cx, inst.result_type) else {
        return Ok(());
    };
    let Some(op) = inst.op() else { return Ok(()) };
    match op {
        Op::Variable
        | Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::FunctionParameter
        | Op::ImageTexelPointer
        | Op::CopyObject
        | Op::Undef
        | Op::UntypedAccessChainKHR
        | Op::UntypedInBoundsAccessChainKHR
        | Op::UntypedVariableKHR => Ok(()),
        Op::Select
        | Op::Phi
        | Op::FunctionCall
        | Op::PtrAccessChain
        | Op::Load
        | Op::ConstantNull
        | Op::Function
        | Op::UntypedPtrAccessChainKHR => {
            if variable_pointer_storage_ok(cx, storage) {
                Ok(())
            } else {
                Err(MemoryError::LogicalPointerResult {
                    why: "this instruction returns pointers only to StorageBuffer or Workgroup memory, with the variable pointers capability for it",
                })
            }
        }
        _ => Err(MemoryError::LogicalPointerResult {
            why: "this instruction cannot return a pointer",
        }),
    }
}

/// The variable pointers: the logical pointers OpSelect, OpPhi, OpPtrAccessChain, OpLoad,
/// OpFunctionCall and OpConstantNull return, the pointers OpSelect and OpPhi choose from and
/// OpPtrAccessChain starts from, and (back through access chains and copies) the pointers they
/// are derived from, variables aside. Each must not point to (an object containing) a matrix,
/// nor into a matrix (as SPIRV-Tools 2025.5 finds them).
fn variable_pointers(cx: &Ctx, sink: &mut Sink) {
    let f = cx.facts;
    let logical = |v: Id| logical_pointer_storage(cx, f.type_of(v)).is_some();
    let mut variable = crate::facts::IdSet::default();
    let mut work: Vec<Id> = Vec::new();
    for inst in &cx.module.instructions {
        let Some(op) = inst.op() else { continue };
        let seed = matches!(
            op,
            Op::Select
                | Op::Phi
                | Op::PtrAccessChain
                | Op::Load
                | Op::FunctionCall
                | Op::ConstantNull
        );
        if !seed {
            continue;
        }
        work.extend(inst.result_id.filter(|r| logical(*r)));
        let chosen: Vec<Id> = match op {
            Op::Select => inst
                .operands
                .iter()
                .skip(1)
                .filter_map(Operand::id)
                .collect(),
            Op::Phi => inst
                .operands
                .iter()
                .step_by(2)
                .filter_map(Operand::id)
                .collect(),
            Op::PtrAccessChain => inst.id_operand(0).into_iter().collect(),
            _ => Vec::new(),
        };
        work.extend(chosen.into_iter().filter(|v| logical(*v)));
    }
    while let Some(p) = work.pop() {
        if !variable.insert(p) {
            continue;
        }
        let Some(def) = cx.def(p) else { continue };
        let derived_from = match def.op() {
            Some(
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::CopyObject,
            ) => def.id_operand(0),
            _ => None,
        };
        work.extend(derived_from.filter(|b| logical(*b)));
    }
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        let Some(result) = inst.result_id else {
            continue;
        };
        if !variable.contains(&result) || inst.op() == Some(Op::Variable) {
            continue;
        }
        let pointee = inst
            .result_type
            .and_then(|t| f.pointer_info(t))
            .map(|p| p.0);
        if pointee.is_some_and(|p| f.contains(p, |_, t| matches!(t, Type::Matrix { .. }))) {
            sink.error(Some(index), MemoryError::VariablePointerToMatrix);
        } else if walks_through_matrix(cx, inst) {
            sink.error(Some(index), MemoryError::VariablePointerIntoMatrix);
        }
    }
}

/// Whether an access chain's indexes step into a matrix (to a column or a component of one).
fn walks_through_matrix(cx: &Ctx, inst: &Instruction) -> bool {
    let f = cx.facts;
    let first = match inst.op() {
        Some(Op::AccessChain | Op::InBoundsAccessChain) => 1,
        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) => 2,
        _ => return false,
    };
    let Some((mut current, _)) = inst
        .id_operand(0)
        .and_then(|b| f.type_of(b))
        .and_then(|t| f.pointer_info(t))
    else {
        return false;
    };
    for index in inst.operands.iter().skip(first).filter_map(Operand::id) {
        current = match f.ty(current) {
            Some(Type::Matrix { .. }) => return true,
            Some(
                Type::Vector { component: e, .. }
                | Type::Array { element: e, .. }
                | Type::RuntimeArray { element: e },
            ) => *e,
            Some(Type::Struct { members }) => {
                let member = f.eval_int(index).and_then(|i| usize::try_from(i).ok());
                match member.and_then(|i| members.get(i)) {
                    Some(m) => *m,
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    false
}
