//! Which programs the wide path runs, decided once per dispatch from the lowered [`Program`].
//!
//! The wide path batches invocations of *several subgroups and workgroups* together, so it
//! takes only programs in which nothing but subgroup operations can observe how invocations are
//! grouped: no atomics, no function calls (the fast tiers get
//! the program with its calls inlined, [`crate::lower::inline`]), no memory of an
//! invocation's own besides its built-in inputs, and only the operations whose lane kernels it
//! has. A program with Workgroup memory or barriers is taken too, in batches aligned to
//! workgroups ([`Plan::workgroup`], [`super::workgroup`]). Subgroup operations and cooperative-matrix ops are taken where the dispatch lets
//! batches hold whole subgroups ([`Plan::group_ops`], checked in [`super::Wide::new`]). Everything else runs on the
//! reference path, so this list is about speed, never about meaning: a program outside it is
//! not refused.

use crate::program::{Function, Op, Program, RegionKind, Terminator};
use crate::run::memory::{
    make_pointer, split_pointer, REGION_INVOCATION, REGION_PUSH, REGION_WORKGROUP,
};
use std::collections::{HashMap, HashSet};

/// What the wide path needs to know of a program it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The program has subgroup operations or cooperative-matrix ops (of Subgroup scope, the
    /// only one lowering takes), so a batch must hold whole subgroups and the tangles must be
    /// the reference path's.
    pub group_ops: bool,
    /// The program has Workgroup memory or barriers: batches then hold one workgroup each
    /// (several batches in step for a larger one, [`super::workgroup`]).
    pub workgroup: bool,
}

/// Whether the wide path takes `prog`: `Err` says why not. An `OpUndef` is taken only when each
/// of its slots is overwritten before any read in its block (a value merely declared, as
/// glslang does for every local variable, is no uninitialised read); the wide path skips it.
pub fn plan(prog: &Program) -> Result<Plan, String> {
    // Each 4-byte component of every built-in input, as the constant pointer a load uses.
    let mut builtins = HashSet::new();
    for var in &prog.variables {
        match (var.region, var.builtin) {
            (RegionKind::Invocation, Some(_)) => {
                let size = prog.ty(var.ty).size;
                for at in (0..size).step_by(4) {
                    builtins.insert(make_pointer(REGION_INVOCATION, var.offset.wrapping_add(at)));
                }
            }
            (RegionKind::Buffer { .. } | RegionKind::PushConstant | RegionKind::Workgroup, _) => {}
            (region, _) => return Err(format!("a variable in {region:?}")),
        }
    }
    let Some(func) = prog.functions.get(prog.entry as usize) else {
        return Err("no entry function".into());
    };
    if prog.functions.len() != 1 {
        return Err("function calls".into());
    }
    let consts: HashMap<u32, u64> = prog.constants.iter().copied().collect();
    for block in &func.blocks {
        for op in &block.ops {
            if !matches!(op, Op::Undef { .. }) {
                op_supported(prog, op, &consts, &builtins)?;
            }
        }
        match block.terminator {
            Terminator::Branch(_)
            | Terminator::BranchConditional { .. }
            | Terminator::Switch { .. }
            | Terminator::Return
            // Reached, it gives the dispatch back ([`super::Batch::run`]).
            | Terminator::Unreachable => {}
            ref t => return Err(format!("terminator {t:?}")),
        }
    }
    // The wide kernels read a constant's slot as one value for every lane.
    let written_constant = func.blocks.iter().any(|b| {
        b.ops.iter().any(|op| {
            slots_of(op).is_some_and(|(writes, _)| writes.iter().any(|w| consts.contains_key(w)))
        }) || b
            .phis
            .iter()
            .any(|(_, copies)| copies.iter().any(|(dst, _)| consts.contains_key(dst)))
    });
    if written_constant {
        return Err("an op writes a constant's slot".into());
    }
    // Module-scope `OpUndef`s, undefined specialization constants and promoted Private
    // variables are slots no op writes before their first store: taken where no path reads them.
    if undefined_reads(func, &prog.undefs) {
        return Err("an OpUndef value that may be read".into());
    }
    let group_ops = func.blocks.iter().any(|b| {
        b.ops
            .iter()
            .any(|op| matches!(op, Op::Group(_) | Op::Coopmat(_)))
    });
    let workgroup = prog.workgroup_bytes > 0 || has_barrier(func);
    if workgroup && has_matrices(func) {
        return Err("cooperative matrices with Workgroup memory or barriers".into());
    }
    Ok(Plan {
        group_ops,
        workgroup,
    })
}

/// Whether `func` has a barrier of Workgroup or Subgroup execution scope.
pub(super) fn has_barrier(func: &Function) -> bool {
    func.blocks.iter().any(|b| {
        b.ops
            .iter()
            .any(|op| matches!(op, Op::ControlBarrier { .. } | Op::SubgroupBarrier { .. }))
    })
}

/// Whether `func` has cooperative-matrix ops.
pub(super) fn has_matrices(func: &Function) -> bool {
    func.blocks
        .iter()
        .any(|b| b.ops.iter().any(|op| matches!(op, Op::Coopmat(_))))
}

/// Whether some path may read a slot of an `OpUndef` before writing it: a forward dataflow
/// over the blocks of the slots that may hold an undefined value (phi copies carry it along an
/// edge; a copy is no read, as the sanitizer counts it).
/// `undefs` (module-scope `OpUndef`s, and Private variables promoted to slots,
/// [`crate::lower::promote_inlined`]) are undefined at entry.
fn undefined_reads(func: &Function, undefs: &[(u32, u32, u32)]) -> bool {
    let blocks = &func.blocks;
    let mut entry: Vec<Option<HashSet<u32>>> = vec![None; blocks.len()];
    if let Some(e) = entry.get_mut(0) {
        *e = Some(
            undefs
                .iter()
                .flat_map(|&(s, n, _)| s..s.saturating_add(n))
                .collect(),
        );
    }
    let mut work: Vec<usize> = vec![0];
    // Each block's entry set only grows, so this ends; a bound keeps it obviously so.
    let mut budget = blocks.len().saturating_mul(blocks.len() + 16).max(1024);
    while let Some(b) = work.pop() {
        budget = budget.saturating_sub(1);
        if budget == 0 {
            return true;
        }
        let (Some(block), Some(Some(set))) = (blocks.get(b), entry.get(b)) else {
            continue;
        };
        let mut set = set.clone();
        for op in &block.ops {
            if let Op::Undef { dst, count } = *op {
                set.extend(dst..dst.saturating_add(count));
                continue;
            }
            let Some((writes, reads)) = slots_of(op) else {
                return true;
            };
            if reads.iter().any(|r| set.contains(r)) {
                return true;
            }
            for w in writes {
                set.remove(&w);
            }
        }
        let targets: Vec<u32> = match block.terminator {
            Terminator::Branch(t) => vec![t],
            Terminator::Switch {
                selector,
                ref cases,
                default,
                ..
            } => {
                if set.contains(&selector) {
                    return true;
                }
                cases.iter().map(|&(_, t)| t).chain([default]).collect()
            }
            Terminator::BranchConditional { cond, t, f } => {
                if set.contains(&cond) {
                    return true;
                }
                vec![t, f]
            }
            _ => Vec::new(),
        };
        for t in targets {
            let Some(target) = blocks.get(t as usize) else {
                continue;
            };
            let mut out = set.clone();
            if let Some((_, copies)) = target.phis.iter().find(|(p, _)| *p as usize == b) {
                let undefined: Vec<bool> =
                    copies.iter().map(|(_, src)| set.contains(src)).collect();
                for (&(dst, _), u) in copies.iter().zip(undefined) {
                    if u {
                        out.insert(dst);
                    } else {
                        out.remove(&dst);
                    }
                }
            }
            let Some(slot) = entry.get_mut(t as usize) else {
                continue;
            };
            let grown = match slot {
                None => {
                    *slot = Some(out);
                    true
                }
                Some(old) => {
                    let before = old.len();
                    old.extend(out);
                    old.len() != before
                }
            };
            if grown {
                work.push(t as usize);
            }
        }
    }
    false
}

/// The slots an op of the wide subset writes whole, and those it reads; `None` outside it.
pub(crate) fn slots_of(op: &Op) -> Option<(Vec<u32>, Vec<u32>)> {
    let range = |first: u32, count: u32| (first..first.saturating_add(count)).collect::<Vec<_>>();
    Some(match *op {
        Op::Copy { dst, src } => (vec![dst], vec![src]),
        Op::IntBin { dst, a, b, .. }
        | Op::IntCmp { dst, a, b, .. }
        | Op::FloatBin { dst, a, b, .. }
        | Op::FloatCmp { dst, a, b, .. } => (vec![dst], vec![a, b]),
        Op::IntUn { dst, a, .. } | Op::FNegate { dst, a, .. } | Op::Convert { dst, a, .. } => {
            (vec![dst], vec![a])
        }
        Op::IntTern { dst, a, b, c, .. } => (vec![dst], vec![a, b, c]),
        Op::Select { dst, cond, a, b } => (vec![dst], vec![cond, a, b]),
        Op::BitFieldInsert {
            dst,
            base,
            insert,
            offset,
            count,
            ..
        } => (vec![dst], vec![base, insert, offset, count]),
        Op::Wide { lo, hi, a, b, .. } => (vec![lo, hi], vec![a, b]),
        Op::Glsl {
            dst, args, argc, ..
        } => (
            vec![dst],
            args.iter().take(argc as usize).copied().collect(),
        ),
        Op::GlslVector {
            dst,
            dst_count,
            ref args,
            ..
        } => (
            range(dst, dst_count),
            args.iter().flat_map(|&(s, c)| range(s, c)).collect(),
        ),
        Op::FDot {
            dst, ref a, ref b, ..
        } => (vec![dst], a.iter().chain(b.iter()).copied().collect()),
        Op::Ldexp { dst, a, exp, .. } => (vec![dst], vec![a, exp]),
        Op::Frexp { dst, exp, a, .. } => (vec![dst, exp], vec![a]),
        Op::Modf { dst, whole, a, .. } => (vec![dst, whole], vec![a]),
        Op::Bitcast {
            dst,
            dst_count,
            src,
            src_count,
            ..
        } => (range(dst, dst_count), range(src, src_count)),
        Op::ExtractDynamic {
            dst,
            base,
            count,
            index,
            ..
        } => (vec![dst], [range(base, count), vec![index]].concat()),
        // Writes one component and keeps the others: no whole write.
        Op::InsertDynamic { value, index, .. } => (Vec::new(), vec![value, index]),
        Op::Load { dst, ptr, ty: _ } | Op::LoadUniform { dst, ptr, ty: _ } => {
            (vec![dst], vec![ptr])
        }
        Op::Store { ptr, src, .. } => (Vec::new(), vec![ptr, src]),
        Op::AccessChain {
            dst,
            base,
            ref steps,
        } => {
            let mut reads = vec![base];
            reads.extend(steps.iter().filter_map(|s| match *s {
                crate::program::Step::Dyn { index, .. } => Some(index),
                crate::program::Step::Const(_) => None,
            }));
            (vec![dst], reads)
        }
        Op::Dot(ref d) => {
            // A packed vector is one slot; otherwise one per component.
            let per = if d.packed { 1 } else { d.count };
            let mut reads = [range(d.a, per), range(d.b, per)].concat();
            reads.extend(d.acc);
            (vec![d.dst], reads)
        }
        Op::CheckDivision { a, b, .. }
        | Op::CheckWrap { a, b, .. }
        | Op::CheckRemainderSign { a, b, .. } => (Vec::new(), vec![a, b]),
        Op::CheckDomain { args, argc, .. } => (
            Vec::new(),
            args.iter().take(argc as usize).copied().collect(),
        ),
        Op::CheckShift { shift, .. } => (Vec::new(), vec![shift]),
        Op::Undef { .. } => (Vec::new(), Vec::new()),
        Op::Group(ref g) => {
            let (writes, reads) = g.slots();
            (writes.collect(), reads)
        }
        Op::Coopmat(ref c) => c.slots(),
        Op::Array(ref a) => a.slots(),
        Op::ControlBarrier { .. } | Op::SubgroupBarrier { .. } | Op::Fence { .. } => {
            (Vec::new(), Vec::new())
        }
        _ => return None,
    })
}

/// Whether the wide path has a kernel for `op`.
fn op_supported(
    prog: &Program,
    op: &Op,
    consts: &HashMap<u32, u64>,
    builtins: &HashSet<u64>,
) -> Result<(), String> {
    let ok = match op {
        // The reference path's pure kernels ([`crate::run::alu::exec_pure`]), every width.
        Op::Copy { .. }
        | Op::Select { .. }
        | Op::IntTern { .. }
        | Op::BitFieldInsert { .. }
        | Op::Wide { .. }
        | Op::Glsl { .. }
        | Op::GlslVector { .. }
        | Op::FDot { .. }
        | Op::Ldexp { .. }
        | Op::Frexp { .. }
        | Op::Modf { .. }
        | Op::Bitcast { .. }
        | Op::ExtractDynamic { .. }
        | Op::InsertDynamic { .. }
        | Op::FloatBin { .. }
        | Op::FloatCmp { .. }
        | Op::FNegate { .. }
        // Integer dot products ([`crate::run::dot::exec_dot`]).
        | Op::Dot(_)
        // Subgroup operations and cooperative-matrix ops (whose scope is the subgroup), one
        // subgroup at a time ([`crate::run::group::exec_group`],
        // [`crate::run::coopmat::exec_coopmat`]).
        | Op::Group(_)
        | Op::Coopmat(_)
        // Per-invocation arrays in slots ([`super::arrays`]).
        | Op::Array(_)
        // Barriers: steps of the workgroup's batches ([`super::workgroup`]).
        | Op::ControlBarrier { .. }
        | Op::SubgroupBarrier { .. }
        | Op::Fence { .. } => true,
        Op::IntBin { bits, .. }
        | Op::IntUn { bits, .. }
        | Op::IntCmp { bits, .. }
        | Op::CheckDivision { bits, .. }
        | Op::CheckShift { bits, .. }
        // The sanitizer's other checks of arithmetic ([`crate::check::arith`]): a finding
        // gives the dispatch back.
        | Op::CheckWrap { bits, .. }
        | Op::CheckRemainderSign { bits, .. }
        | Op::CheckDomain { bits, .. } => *bits <= 64,
        Op::Convert { from, to, .. } => *from <= 64 && *to <= 64,
        Op::AccessChain { .. } => true,
        Op::Load { ty, ptr, .. } | Op::LoadUniform { ty, ptr, .. } => {
            match consts.get(ptr).map(|p| split_pointer(*p).0) {
                // A built-in input (whole or one component), or a push constant; any other
                // constant pointer is not one the wide path knows.
                Some(REGION_INVOCATION) => {
                    consts.get(ptr).is_some_and(|p| builtins.contains(p))
                        && prog
                            .leaves_of(*ty)
                            .iter()
                            .all(|l| l.bytes == 4 && !l.boolean && l.offset % 4 == 0)
                }
                Some(REGION_PUSH | REGION_WORKGROUP) => movable(prog, *ty),
                Some(_) => false,
                // A pointer made at run time (a buffer's, by an access chain).
                None => movable(prog, *ty),
            }
        }
        Op::Store { ty, ptr, .. } => {
            movable(prog, *ty)
                && consts
                    .get(ptr)
                    .is_none_or(|p| split_pointer(*p).0 == REGION_WORKGROUP)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{op:?}"))
    }
}

/// A type the memory kernels move ([`crate::run::access::exec_memory`]): one with a memory
/// image (booleans and pointers included), not an opaque one.
fn movable(prog: &Program, ty: u32) -> bool {
    !prog.leaves_of(ty).is_empty()
}
