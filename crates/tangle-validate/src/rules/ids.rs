//! Ids (SPIR-V 2.2.2 and 2.4): each result id is defined once; every id used is defined; ids are
//! used only after their definition, except where the spec allows forward references (names,
//! decorations, entry points and execution modes, branch targets, `OpPhi`, function calls, and
//! pointers declared with `OpTypeForwardPointer`), as SPIRV-Tools' `validate_id.cpp` decides.

use super::{Ctx, Sink};
use crate::facts::IdSet;
use spirv::Op;
use tangle_spirv::{Id, Instruction, Operand};

/// An id rule failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IdsError {
    /// 2.2.2: "Each Result `<id>` ... must be unique."
    #[error("id %{id} is defined more than once")]
    Redefined { id: Id },
    /// Every id used must be defined by some instruction.
    #[error("id %{id} is used but never defined")]
    Undefined { id: Id },
    /// 2.4: forward references are allowed only in the listed places.
    #[error("id %{id} is used before its definition")]
    UsedBeforeDefinition { id: Id },
}

/// Checks definitions and uses of every id.
pub fn check(cx: &Ctx, sink: &mut Sink) {
    let mut defined = IdSet::with_capacity_and_hasher(cx.facts.defs.len(), Default::default());
    for (index, inst) in cx.module.instructions.iter().enumerate() {
        let forward_ok = forward_reference_rule(inst);
        for (position, operand) in inst.operands.iter().enumerate() {
            let Operand::Id(id) = operand else { continue };
            if defined.contains(id) {
                continue;
            }
            if !cx.facts.defs.contains_key(id) {
                sink.error(Some(index), IdsError::Undefined { id: *id });
            } else if !forward_ok(position)
                && !cx.facts.forward_pointers.contains(id)
                && !is_function(cx, *id)
            {
                sink.error(Some(index), IdsError::UsedBeforeDefinition { id: *id });
            }
        }
        if let Some(ty) = inst.result_type {
            if !defined.contains(&ty) {
                let e = if cx.facts.defs.contains_key(&ty) {
                    IdsError::UsedBeforeDefinition { id: ty }
                } else {
                    IdsError::Undefined { id: ty }
                };
                sink.error(Some(index), e);
            }
        }
        if let Some(id) = inst.result_id {
            if !defined.insert(id) {
                sink.error(Some(index), IdsError::Redefined { id });
            }
        }
    }
}

/// Functions may be named before their definition wherever a function operand is allowed
/// (calls, and vendor operands such as decode functions), since definitions come in any order.
fn is_function(cx: &Ctx, id: Id) -> bool {
    cx.def(id).is_some_and(|d| d.op() == Some(Op::Function))
}

/// Which operand positions of this instruction may name an id defined later.
fn forward_reference_rule(inst: &Instruction) -> fn(usize) -> bool {
    let all: fn(usize) -> bool = |_| true;
    let none: fn(usize) -> bool = |_| false;
    let Some(op) = inst.op() else { return none };
    match op {
        Op::Name
        | Op::MemberName
        | Op::Decorate
        | Op::DecorateId
        | Op::DecorateString
        | Op::MemberDecorate
        | Op::MemberDecorateString
        | Op::GroupDecorate
        | Op::GroupMemberDecorate
        | Op::EntryPoint
        | Op::ExecutionMode
        | Op::ExecutionModeId
        | Op::Branch
        | Op::LoopMerge
        | Op::SelectionMerge
        | Op::Phi
        | Op::TypeForwardPointer
        | Op::ExtInstWithForwardRefsKHR => all,
        // The condition or selector must be defined; the labels may come later.
        Op::BranchConditional | Op::Switch => |i| i > 0,
        // The function called may be defined later.
        Op::FunctionCall => |i| i == 0,
        _ => none,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{compute, module};
    use tangle_spirv::TargetEnv;

    #[test]
    fn a_result_id_defined_twice() {
        // The assembler refuses a second definition, so rename one after assembling.
        let mut m = module(
            &compute(
                "",
                "",
                "%a = OpIAdd %u32 %u32_1 %u32_1\n%b = OpIAdd %u32 %u32_1 %u32_1",
            ),
            "vulkan1.3",
        );
        let ids: Vec<u32> = m
            .instructions
            .iter()
            .filter(|i| i.op() == Some(spirv::Op::IAdd))
            .filter_map(|i| i.result_id)
            .collect();
        if let (Some(first), Some(second)) = (ids.first().copied(), ids.get(1).copied()) {
            if let Some(inst) = m
                .instructions
                .iter_mut()
                .find(|i| i.result_id == Some(second))
            {
                inst.result_id = Some(first);
            }
        }
        let env = TargetEnv::parse("vulkan1.3").expect("env");
        let diags =
            crate::validate(&m, env, &crate::ValidateOptions::default()).expect_err("invalid");
        let names: Vec<String> = diags.iter().map(|d| d.error.rule()).collect();
        assert_eq!(names, ["Ids::Redefined"]);
    }
}
