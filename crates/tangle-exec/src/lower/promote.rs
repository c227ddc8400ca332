//! Register promotion of function variables.
//!
//! glslang without optimization keeps every local in an `OpVariable` of the Function storage
//! class and reads and writes it with `OpLoad`/`OpStore`. A variable whose pointer is only ever
//! loaded from, stored to, or indexed with constant indices (and then loaded from or stored
//! to) never has its address observed, so its value can live in register slots: a load becomes
//! a slot copy and a store a slot copy under the tangle's mask, which is the same per-invocation
//! behaviour at a fraction of the cost.

use super::Lowerer;
use spirv::Op as SpvOp;
use std::collections::{HashMap, HashSet};
use tangle_spirv::module::Instruction;

/// The most slots a promoted variable may take.
const MAX_PROMOTED_SLOTS: u32 = 64;

impl<'m> Lowerer<'m> {
    /// The function variables among `insts` that can live in registers, and the root variable
    /// of every pointer derived from one.
    pub(crate) fn promotable(&self, insts: &[&Instruction]) -> (HashSet<u32>, HashMap<u32, u32>) {
        let mut root: HashMap<u32, u32> = HashMap::new();
        for inst in insts {
            if inst.op() == Some(SpvOp::Variable)
                && inst.literal_operand(0) == Some(spirv::StorageClass::Function as u64)
            {
                if let Some(id) = inst.result_id {
                    root.insert(id, id);
                }
            }
        }
        // Constant-index access chains derive from their base's root (to a fixpoint, as a
        // chain may be listed after a block that uses it).
        loop {
            let before = root.len();
            for inst in insts {
                if matches!(
                    inst.op(),
                    Some(SpvOp::AccessChain) | Some(SpvOp::InBoundsAccessChain)
                ) {
                    let (Some(base), Some(id)) = (inst.id_operand(0), inst.result_id) else {
                        continue;
                    };
                    if let Some(&r) = root.get(&base) {
                        if self.constant_indices(inst) {
                            root.insert(id, r);
                        }
                    }
                }
            }
            if root.len() == before {
                break;
            }
        }
        let mut bad: HashSet<u32> = HashSet::new();
        for inst in insts {
            for (pos, o) in inst.operands.iter().enumerate() {
                let Some(&r) = o.id().and_then(|id| root.get(&id)) else {
                    continue;
                };
                let ok = match inst.op() {
                    Some(SpvOp::Load) | Some(SpvOp::Store) => pos == 0,
                    Some(SpvOp::AccessChain) | Some(SpvOp::InBoundsAccessChain) => {
                        pos == 0 && self.constant_indices(inst)
                    }
                    _ => false,
                };
                if !ok {
                    bad.insert(r);
                }
            }
        }
        let vars: HashSet<u32> = root
            .iter()
            .filter(|(id, r)| id == r && !bad.contains(r))
            .map(|(id, _)| *id)
            .filter(|id| {
                let ty = insts
                    .iter()
                    .find(|i| i.result_id == Some(*id))
                    .and_then(|i| i.result_type);
                self.type_memo
                    .get(&(ty.unwrap_or(0), None))
                    .and_then(|&t| self.pointee_of(t).ok())
                    .is_some_and(|p| {
                        self.program.ty(p).slots <= MAX_PROMOTED_SLOTS
                            && self.program.ty(p).slots > 0
                    })
            })
            .collect();
        root.retain(|_, r| vars.contains(r));
        (vars, root)
    }

    /// Loads from promoted variables whose result can share the variable's slots: every use is
    /// later in the same block, and no store to the variable comes between the load and its
    /// last use (a store *at* the last use reads before it writes). Also returns the ids used
    /// exactly once.
    pub(crate) fn aliasable_loads(
        blocks: &[Vec<&Instruction>],
        root: &HashMap<u32, u32>,
    ) -> (HashSet<u32>, HashSet<u32>) {
        let mut uses: HashMap<u32, Vec<(usize, usize)>> = HashMap::new();
        for (b, insts) in blocks.iter().enumerate() {
            for (i, inst) in insts.iter().enumerate() {
                for o in &inst.operands {
                    if let Some(id) = o.id() {
                        uses.entry(id).or_default().push((b, i));
                    }
                }
            }
        }
        let single: HashSet<u32> = uses
            .iter()
            .filter(|(_, u)| u.len() == 1)
            .map(|(id, _)| *id)
            .collect();
        let mut out = HashSet::new();
        for (b, insts) in blocks.iter().enumerate() {
            for (i, inst) in insts.iter().enumerate() {
                if inst.op() != Some(SpvOp::Load) {
                    continue;
                }
                let (Some(id), Some(r)) = (
                    inst.result_id,
                    inst.id_operand(0).and_then(|p| root.get(&p)),
                ) else {
                    continue;
                };
                let Some(us) = uses.get(&id) else {
                    out.insert(id);
                    continue;
                };
                if us.iter().any(|&(ub, ui)| ub != b || ui <= i) {
                    continue;
                }
                let last = us.iter().map(|&(_, ui)| ui).max().unwrap_or(i);
                let clobbered = insts.iter().take(last).skip(i + 1).any(|s| {
                    s.op() == Some(SpvOp::Store)
                        && s.id_operand(0).and_then(|p| root.get(&p)) == Some(r)
                });
                if !clobbered {
                    out.insert(id);
                }
            }
        }
        (out, single)
    }

    /// Whether every index of an access chain is a constant.
    fn constant_indices(&self, inst: &Instruction) -> bool {
        inst.operands.iter().skip(1).all(|o| {
            o.id()
                .and_then(|id| self.values.get(&id))
                .is_some_and(|v| self.const_value(v.slot).is_some())
        })
    }
}
