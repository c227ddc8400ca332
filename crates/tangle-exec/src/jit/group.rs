//! Subgroup operations on the native tier: a lockstep group holds one whole subgroup
//! ([`super::lockstep`], lanes = subgroup size), so a subgroup operation reached in lockstep
//! has every invocation of its subgroup active, as the reference path's single tangle has.
//! The compiled code stores the operands of all lanes into a subgroup-sized register file
//! ([`GroupScratch::regs`], slot-major like the reference path's), calls [`GroupScratch::run`]
//! through [`super::native::group_op`], which runs the reference path's own kernel
//! ([`crate::run::group::exec_group`]) with the full mask, and loads the results back. The
//! semantics are therefore the reference path's by construction; any finding (a non-uniform
//! Id, say) gives the dispatch back, and the reference path reports it.

use crate::program::Op;
use crate::run::access::LaneFinding;

/// One worker's state for the subgroup operations of a compiled program.
#[derive(Debug)]
pub(crate) struct GroupScratch {
    /// The program's subgroup operations, by the index the compiled code passes.
    ops: std::sync::Arc<Vec<Op>>,
    /// A register file of every slot for one subgroup: lane `l` of slot `s` at `s * sg + l`.
    pub(crate) regs: Vec<u64>,
    sg: usize,
    found: Vec<LaneFinding>,
}

impl GroupScratch {
    /// A scratch for `ops` of a program of `slots` slots, subgroups of `sg`; its register
    /// file only where the compiled code uses one (`regs`: the program has subgroup
    /// operations, whether run by the kernel or, as permutations, by the compiled code).
    pub(crate) fn new(
        ops: std::sync::Arc<Vec<Op>>,
        regs: bool,
        slots: u32,
        sg: usize,
    ) -> GroupScratch {
        let len = if regs { slots as usize * sg } else { 0 };
        GroupScratch {
            ops,
            regs: vec![0; len],
            sg,
            found: Vec::new(),
        }
    }

    /// Runs operation `index` on the register file for every lane; `false` on a finding (or
    /// an index that names no operation).
    pub(crate) fn run(&mut self, index: u64) -> bool {
        let Some(op) = usize::try_from(index).ok().and_then(|i| self.ops.get(i)) else {
            return false;
        };
        self.found.clear();
        let mask = crate::run::alu::full_mask(self.sg);
        let ran = crate::run::group::exec_group(
            op,
            &mut self.regs,
            self.sg,
            self.sg,
            mask,
            &mut self.found,
        );
        ran && self.found.is_empty()
    }
}
