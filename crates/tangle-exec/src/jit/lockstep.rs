//! Lockstep groups: the native tier runs [`LANES`] consecutive invocations side by side, each
//! op emitted once per invocation ("lane") in turn, so that the processor overlaps their
//! independent chains of dependent instructions (one invocation alone is latency-bound: an
//! integer hash's loop body is a chain of eight dependent instructions).
//!
//! While a group's invocations take the same branches they stay together ("lockstep"), and a
//! slot whose value is the same in every lane ([`shared_slots`]: loop counters, push
//! constants, values computed from them) is held and computed once for the group. At a branch
//! where the lanes disagree the group *diverges*: every lane's registers are spilled to a stack
//! area, and each lane in turn is restored into the scalar code's registers and finishes
//! alone from that branch on ([`Emitter::resume`]), as a lone invocation of the scalar code
//! does. Lanes never join again.
//!
//! Integer values of 32 bits that simple ops compute ([`vector_slots`]: add, subtract,
//! multiply, bitwise ops, shifts by a constant, packed 4x8-bit dot products) are held as vectors of four lanes
//! (`I32X4`, [`LANES`] / 4 of them), one vector instruction computing four lanes; any other
//! op reads or writes such a slot lane by lane (extract, insert), so the choice changes the
//! code's speed, never what it computes: a 32-bit value is a `u64` lane zero-extended, and
//! these ops wrap modulo 2^32 in either form.
//!
//! Exactness: the programs taken have independent invocations (module doc of [`super`]), so
//! interleaving their ops computes what running them one after the other does; the race
//! screen (fed the same accesses, one log site per op for the group) and every give-up are
//! the scalar code's. A group counts its steps once: its lanes have run the same blocks.

use super::compile::{Emitter, Key};
use super::facts::{op_slots, Facts};
use crate::program::{FloatBin, Function, IntBin, IntUn, Op, Program, Slot};
use crate::run::memory::{split_pointer, REGION_INVOCATION, REGION_PUSH};
use crate::semantics::dot::DotKind;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, I32, I32X4, I64, I8, I8X16};
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Switch;

/// Invocations in a lockstep group.
pub(super) const LANES: u32 = 16;

/// The most ops (counted once per lane) a lockstep copy of a function may have: past it the
/// code would grow without a gain worth its compile time, and only the scalar code is built.
const MAX_LOCKSTEP_OPS: usize = 1 << 15;

/// The most bytes of registers a diverging group spills (a stack area of the compiled code).
const MAX_SPILL_BYTES: usize = 1 << 18;

/// The lanes of `func`'s lockstep groups, with `written` slots written: a subgroup's
/// invocations when it has subgroup operations ([`subgroups_taken`]), else [`LANES`]; 1 (no
/// lockstep copy) when the copy would be too large.
pub(super) fn lanes_for(func: &Function, written: usize, key: Key) -> u32 {
    let lanes = if has_group_ops(func) { key.sg } else { LANES };
    let ops: usize = func.blocks.iter().map(|b| b.ops.len() + 1).sum();
    let spill = written.saturating_mul(lanes as usize + 1).saturating_mul(8);
    if ops.saturating_mul(lanes as usize) > MAX_LOCKSTEP_OPS || spill > MAX_SPILL_BYTES {
        1
    } else {
        lanes
    }
}

/// Whether `func` has subgroup operations or cooperative-matrix ops.
fn has_group_ops(func: &Function) -> bool {
    func.blocks
        .iter()
        .flat_map(|b| &b.ops)
        .any(|op| matches!(op, Op::Group(_) | Op::Coopmat(_)))
}

/// Whether `func` has cooperative-matrix ops ([`super::coopmat`]).
pub(super) fn has_matrices(func: &Function) -> bool {
    func.blocks
        .iter()
        .flat_map(|b| &b.ops)
        .any(|op| matches!(op, Op::Coopmat(_)))
}

/// The most invocations a subgroup may have for a lockstep group to hold it.
const MAX_SUBGROUP: u32 = 64;

/// Whether the native tier takes a program with subgroup operations for `key`, else why not:
/// a lockstep group must be exactly one subgroup (a size of 4 to [`MAX_SUBGROUP`], a power of
/// two, dividing the workgroup's, so that subgroups are whole and aligned), under the
/// default policy (the wide path's condition, `wide::group_batches`: other policies may
/// split a subgroup's tangles where its lanes agree), and small enough for a lockstep copy.
pub(super) fn subgroups_taken(prog: &Program, func: &Function, key: Key) -> Result<(), String> {
    let per_group: u64 = prog.local_size.iter().map(|&x| u64::from(x)).product();
    let sg = key.sg;
    if !key.default_policy {
        return Err("subgroup operations under a policy other than the default".into());
    }
    if !(4..=MAX_SUBGROUP).contains(&sg)
        || !sg.is_power_of_two()
        || !per_group.is_multiple_of(u64::from(sg))
    {
        return Err(format!(
            "subgroup operations with subgroups of {sg} in workgroups of {per_group}"
        ));
    }
    if lanes_for(func, 0, key) != sg {
        return Err("subgroup operations in a program too large for lockstep groups".into());
    }
    Ok(())
}

/// Whether the built-in `b` reads the same in every lane of a group of `lanes` (its lanes
/// are consecutive invocations, the first a multiple of `lanes`) with subgroups of `sg`.
fn shared_builtin(b: u32, per_group: u64, lanes: u32, sg: u32) -> bool {
    use spirv::BuiltIn as B;
    match B::from_u32(b) {
        Some(B::NumWorkgroups | B::WorkgroupSize | B::SubgroupSize | B::NumSubgroups) => true,
        // A workgroup holds whole groups when its size is a multiple of the lanes.
        Some(B::WorkgroupId) => per_group.is_multiple_of(u64::from(lanes)),
        // A group that is one subgroup.
        Some(B::SubgroupId) => lanes == sg && per_group.is_multiple_of(u64::from(lanes)),
        _ => false,
    }
}

/// Which slots hold the same value in every lane of a group while it is in lockstep: those
/// only ever written by ops that read shared slots alone, loads of push constants, of
/// built-ins that are the same for the group ([`shared_builtin`]) and through a shared
/// pointer into a buffer no store writes ([`Facts::read_only`]), and copies of shared
/// slots on edges (the lanes take the same edges). Slots nothing writes hold their template
/// value, the same in every lane. A fixpoint: each round marks at least one slot unshared.
pub(super) fn shared_slots(
    prog: &Program,
    func: &Function,
    facts: &Facts,
    lanes: u32,
    sg: u32,
) -> Vec<bool> {
    let (known, builtins) = (&facts.known, &facts.builtins);
    let per_group = prog.local_size.iter().map(|&x| u64::from(x)).product();
    let mut shared = vec![true; prog.slots as usize];
    let is = |shared: &[bool], s: Slot| shared.get(s as usize).copied().unwrap_or(false);
    for _ in 0..=prog.slots {
        let mut changed = false;
        let mut unshare = |shared: &mut Vec<bool>, s: Slot| {
            if let Some(v) = shared.get_mut(s as usize) {
                changed |= std::mem::replace(v, false);
            }
        };
        for block in &func.blocks {
            for op in &block.ops {
                let Some((writes, reads)) = op_slots(prog, op) else {
                    continue;
                };
                let own = match *op {
                    Op::Load { ptr, .. } | Op::LoadUniform { ptr, .. } => {
                        match known.get(&ptr).map(|&p| (split_pointer(p).0, p)) {
                            Some((REGION_PUSH, _)) => true,
                            Some((REGION_INVOCATION, p)) => builtins
                                .get(&p)
                                .is_some_and(|&(b, _)| shared_builtin(b, per_group, lanes, sg)),
                            // The same address of memory nothing writes: the same value.
                            _ => facts.read_only(ptr) && is(&shared, ptr),
                        }
                    }
                    // Each lane's result its own (an inclusive scan, an elect), even from
                    // shared operands.
                    Op::Group(_) => false,
                    _ => reads.iter().all(|&r| is(&shared, r)),
                };
                if !own {
                    for w in writes {
                        unshare(&mut shared, w);
                    }
                }
            }
            for (_, copies) in &block.phis {
                for &(dst, src) in copies {
                    if !is(&shared, src) {
                        unshare(&mut shared, dst);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    shared
}

/// An op held as vectors of 32-bit lanes: what it computes from which slots.
#[derive(Debug, Clone, Copy)]
enum VecOp {
    Bin(IntBin, Slot, Slot),
    /// A shift by a constant amount below 32.
    Shift(IntBin, Slot, i64),
    Not(Slot),
    Negate(Slot),
    Copy(Slot),
    /// A packed 4x8-bit dot product to 32 bits, with or without an accumulator, whose
    /// steps cannot overflow (no sanitizer check).
    Dot(DotKind, Slot, Slot, Option<Slot>),
    /// An f32 add, subtract, multiply or divide ([`float_vectors`]).
    Float(FloatBin, Slot, Slot),
    /// A load of one 32-bit word (not a boolean): along a line, vector loads
    /// ([`Emitter::line_load`]); otherwise each lane's word inserted.
    Word,
    /// A rotate of one 32-bit value: vector moves where its delta is held once
    /// ([`Emitter::vector_rotate`]), else each lane's result inserted.
    Rotate,
}

/// Whether `ty` is one 32-bit word (not a boolean, which a load converts).
pub(super) fn word_leaf(prog: &Program, ty: u32) -> bool {
    matches!(prog.leaves_of(ty), [l] if l.bytes == 4 && l.offset == 0 && !l.boolean)
}

/// Whether f32 arithmetic may run as `F32X4` vectors: on x86-64, where a packed add,
/// subtract, multiply or divide gives each lane the bits the scalar instruction gives, which
/// are the reference's (`float::map2`: the operation in f64, rounded once to f32 — exact for
/// these four, as f64 holds more than twice f32's precision plus two bits; NaNs: both forms
/// return the first NaN operand quieted, or the default NaN).
fn float_vectors() -> bool {
    cfg!(target_arch = "x86_64")
}

/// The destination and vector form of a 32-bit op that has one.
fn vector_form(
    prog: &Program,
    op: &Op,
    constant: impl Fn(Slot) -> Option<u64>,
) -> Option<(Slot, VecOp)> {
    use IntBin as B;
    Some(match *op {
        Op::FloatBin {
            op: op @ (FloatBin::Add | FloatBin::Sub | FloatBin::Mul | FloatBin::Div),
            bits: 32,
            dst,
            a,
            b,
        } if float_vectors() => (dst, VecOp::Float(op, a, b)),
        Op::Load { dst, ty, .. } if word_leaf(prog, ty) => (dst, VecOp::Word),
        Op::Group(ref g)
            if matches!(g.kind, crate::run::group::GroupKind::Rotate { .. })
                && g.count == 1
                && g.bits == 32 =>
        {
            (g.dst, VecOp::Rotate)
        }
        Op::IntBin {
            op,
            bits: 32,
            dst,
            a,
            b,
        } => match op {
            B::Add | B::Sub | B::Mul | B::And | B::Or | B::Xor => (dst, VecOp::Bin(op, a, b)),
            B::ShiftLeft | B::ShiftRightLogical | B::ShiftRightArithmetic => {
                // Below the width the plain shift (int::shift_*); at or past it the
                // semantics' fallbacks, left to the scalar code.
                let s = constant(b).filter(|&s| s < 32)?;
                (dst, VecOp::Shift(op, a, s as i64))
            }
            _ => return None,
        },
        Op::IntUn {
            op: IntUn::Not,
            bits: 32,
            dst,
            a,
        } => (dst, VecOp::Not(a)),
        Op::IntUn {
            op: IntUn::Negate,
            bits: 32,
            dst,
            a,
        } => (dst, VecOp::Negate(a)),
        Op::Copy { dst, src } => (dst, VecOp::Copy(src)),
        Op::Dot(ref d)
            if d.packed
                && d.comp_bits == 8
                && d.count == 4
                && d.result_bits == 32
                && !(d.acc.is_some() && d.may_overflow()) =>
        {
            (d.dst, VecOp::Dot(d.kind, d.a, d.b, d.acc))
        }
        _ => return None,
    })
}

/// Which slots a group in lockstep holds as vectors of 32-bit lanes: unshared slots that
/// ops write, every such op a 32-bit op with a vector form ([`vector_form`]; a copy only
/// of a vector slot, whose width it then has). Edge copies may write them from anything (a
/// phi's operands have its type).
pub(super) fn vector_slots(
    prog: &Program,
    func: &Function,
    shared: &[bool],
    facts: &Facts,
) -> Vec<bool> {
    let n = prog.slots as usize;
    let (mut written, mut other) = (vec![false; n], vec![false; n]);
    let mut copies = Vec::new();
    let mark = |v: &mut Vec<bool>, s: Slot| {
        if let Some(x) = v.get_mut(s as usize) {
            *x = true;
        }
    };
    for op in func.blocks.iter().flat_map(|b| &b.ops) {
        match vector_form(prog, op, |s| facts.known.get(&s).copied()) {
            Some((dst, form)) => {
                mark(&mut written, dst);
                if let VecOp::Copy(src) = form {
                    copies.push((dst, src));
                }
            }
            None => {
                for w in op_slots(prog, op).map(|(w, _)| w).unwrap_or_default() {
                    mark(&mut other, w);
                }
            }
        }
    }
    let mut vector: Vec<bool> = (0..n)
        .map(|s| written[s] && !other[s] && !shared.get(s).copied().unwrap_or(true))
        .collect();
    let is = |v: &[bool], s: Slot| v.get(s as usize).copied().unwrap_or(false);
    // A copy of a slot that is not a vector may be of any width: not one either, unless it
    // is a constant of 32 bits (an accumulator's start, `acc = 0.0`).
    let narrow = |s: Slot| {
        facts
            .known
            .get(&s)
            .is_some_and(|&c| c <= u64::from(u32::MAX))
    };
    for _ in 0..=copies.len() {
        let mut changed = false;
        for &(dst, src) in &copies {
            if is(&vector, dst) && !is(&vector, src) && !narrow(src) {
                vector[dst as usize] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    vector
}

impl Emitter<'_> {
    /// Whether `op` is emitted once for a group in lockstep: it writes only shared or affine
    /// slots (or, writing none, reads only shared slots) and is no store (each lane's store is an access
    /// of its own, for the race screen).
    pub(super) fn op_shared(&self, op: &Op) -> bool {
        if matches!(op, Op::Store { .. }) {
            return false;
        }
        let Some((writes, reads)) = op_slots(self.prog, op) else {
            return false;
        };
        if writes.is_empty() {
            reads.iter().all(|&r| self.is_shared(r))
        } else {
            // An op writing affine slots computes lane 0's values ([`super::affine`]).
            writes.iter().all(|&w| self.held_once(w))
        }
    }

    /// One op of a group in lockstep: once, or once per lane in turn.
    pub(super) fn lock_op(&mut self, op: &Op) -> Result<(), String> {
        self.op_site = None;
        if self.coop_op(op)? {
            return Ok(());
        }
        if let Op::Group(g) = op {
            return self.group_op(g, op);
        }
        if self.line_load(op)?
            || self.line_store(op)?
            || self.gather_load(op)?
            || self.vector_op(op)?
        {
            return Ok(());
        }
        if self.op_shared(op) {
            self.lane = Some(0);
            self.op(op)?;
            self.affine_step(op)?;
            if let Op::AccessChain { dst, base, steps } = op {
                self.line_check(*dst, *base, steps)?;
            }
            return Ok(());
        }
        self.deferred = Some(Vec::new());
        for l in 0..self.lanes {
            self.lane = Some(l);
            self.op(op)?;
        }
        let accesses = self.deferred.take().unwrap_or_default();
        // Every lane's access or none (a site not logged).
        if accesses.len() == self.lanes as usize {
            self.log_group(&accesses)?;
        } else if !accesses.is_empty() {
            return Err("a lockstep op logged by some lanes only".into());
        }
        Ok(())
    }

    /// A branch condition of a group in lockstep: `(all, any)` lanes true, as `i8`s.
    pub(super) fn lock_condition(&mut self, cond: Slot) -> Result<(Value, Value), String> {
        let mut all = None;
        let mut any = None;
        for l in 0..self.lanes {
            self.lane = Some(l);
            let c = self.get(cond)?;
            // The reference path takes the true branch where the condition is not 0.
            let t = self.b.ins().icmp_imm_s(IntCC::NotEqual, c, 0);
            all = Some(all.map_or(t, |a| self.b.ins().band(a, t)));
            any = Some(any.map_or(t, |a| self.b.ins().bor(a, t)));
        }
        all.zip(any).ok_or_else(|| "a group of no lanes".into())
    }

    /// A switch selector of a group in lockstep: lane 0's selector's low `bits` bits, and
    /// whether every lane's equals it (an `i8`).
    pub(super) fn lock_selector(&mut self, sel: Slot, bits: u32) -> Result<(Value, Value), String> {
        self.lane = Some(0);
        let first = self.get(sel)?;
        let first = self.trunc(bits, first);
        let mut same = None;
        for l in 1..self.lanes {
            self.lane = Some(l);
            let v = self.get(sel)?;
            let v = self.trunc(bits, v);
            let eq = self.b.ins().icmp(IntCC::Equal, v, first);
            same = Some(same.map_or(eq, |s| self.b.ins().band(s, eq)));
        }
        let same = match same {
            Some(s) => s,
            None => self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1),
        };
        Ok((first, same))
    }

    /// The block a group whose lanes disagree at block `from`'s terminator goes to, filled
    /// by [`Emitter::fill_diverge`] once the terminator is emitted.
    pub(super) fn diverge(&mut self, from: u32) -> cranelift_codegen::ir::Block {
        let div = self.b.create_block();
        self.pending_div.push((div, from));
        div
    }

    /// Fills a [`Emitter::diverge`] block: it spills the written slots a lane may read from
    /// the terminator on ([`Emitter::live`]: once if shared, else per lane) and has
    /// [`Emitter::resume`] finish the lanes one by one from the terminator.
    pub(super) fn fill_diverge(
        &mut self,
        div: cranelift_codegen::ir::Block,
        from: u32,
    ) -> Result<(), String> {
        self.enter(div);
        self.b.set_cold_block(div);
        let base = self.spill_base()?;
        let flags = MemFlagsData::trusted();
        let n = self.spilled.len();
        let live = self.live.get(from as usize).cloned().unwrap_or_default();
        for k in live {
            let s = *self.spilled.get(k).ok_or("a spilled slot")?;
            if self.is_shared(s) {
                self.lane = None;
                let v = self.get(s)?;
                self.b.ins().store(flags, v, base, (k * 8) as i32);
            } else {
                for l in 0..self.lanes {
                    self.lane = Some(l);
                    let v = self.get(s)?;
                    let at = ((l as usize + 1) * n + k) * 8;
                    self.b.ins().store(flags, v, base, at as i32);
                }
            }
        }
        self.lane = None;
        let from = self.iconst(u64::from(from));
        self.def_var(self.div.block, from);
        let zero = self.iconst(0);
        self.def_var(self.div.lane, zero);
        let g = self.use_var(self.g);
        self.def_var(self.div.first, g);
        let steps = self.use_var(self.steps);
        self.def_var(self.div.steps, steps);
        let one = self.iconst(1);
        self.def_var(self.div.active, one);
        let resume = self.resume_block;
        self.b.ins().jump(resume, &[]);
        Ok(())
    }

    /// The block every diverged lane goes through: its invocation index and the group's
    /// steps, then, for the terminator the group diverged at, the lane's registers that were
    /// spilled there restored into the scalar code's and the scalar copy of the terminator;
    /// after the last lane, the next group.
    pub(super) fn resume(&mut self, head: cranelift_codegen::ir::Block) -> Result<(), String> {
        self.b.switch_to_block(self.resume_block);
        self.b.set_cold_block(self.resume_block);
        self.lane = None;
        let lane = self.use_var(self.div.lane);
        let first = self.use_var(self.div.first);
        let done = self.b.ins().icmp_imm_s(
            IntCC::UnsignedGreaterThanOrEqual,
            lane,
            i64::from(self.lanes),
        );
        let (finish, restore) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(done, finish, &[], restore, &[]);

        self.enter(finish);
        let next = self.b.ins().iadd_imm_s(first, i64::from(self.lanes));
        self.def_var(self.g, next);
        let zero = self.iconst(0);
        self.def_var(self.div.active, zero);
        self.b.ins().jump(head, &[]);

        self.enter(restore);
        let base = self.spill_base()?;
        let n = self.spilled.len();
        let lane_at = self.b.ins().iadd_imm_s(lane, 1);
        let lane_at = self.b.ins().imul_imm_s(lane_at, (n * 8) as i64);
        let lane_base = self.b.ins().iadd(base, lane_at);
        let flags = MemFlagsData::trusted();
        let g = self.b.ins().iadd(first, lane);
        self.def_var(self.g, g);
        let steps = self.use_var(self.div.steps);
        self.def_var(self.steps, steps);
        let next = self.b.ins().iadd_imm_s(lane, 1);
        self.def_var(self.div.lane, next);
        let which = self.use_var(self.div.block);
        let mut switch = Switch::new();
        let mut terms = Vec::new();
        for (i, block) in self.func.blocks.iter().enumerate() {
            if self.diverges.get(i).copied().unwrap_or(false) {
                let t = self.b.create_block();
                switch.set_entry(i as u128, t);
                terms.push((i as u32, t, block));
            }
        }
        // No other value is ever stored; a give-up, never a guess, if one were.
        let nowhere = self.b.create_block();
        switch.emit(&mut self.b, which, nowhere);
        self.enter(nowhere);
        let code = self.iconst(super::compile::reason::INTERNAL);
        let giveup = self.giveup;
        self.b
            .ins()
            .jump(giveup, &[cranelift_codegen::ir::BlockArg::Value(code)]);
        for (i, t, block) in terms {
            self.enter(t);
            let live = self.live.get(i as usize).cloned().unwrap_or_default();
            for k in live {
                let s = *self.spilled.get(k).ok_or("a spilled slot")?;
                let from = if self.is_shared(s) { base } else { lane_base };
                let v = self.b.ins().load(I64, flags, from, (k * 8) as i32);
                self.set(s, v)?;
            }
            self.terminator(i, &block.terminator, head)?;
        }
        Ok(())
    }

    /// Emits `op` as vector instructions if it has a vector form and its destination is a
    /// vector slot; says whether it did.
    pub(super) fn vector_op(&mut self, op: &Op) -> Result<bool, String> {
        let Some((dst, form)) = vector_form(self.prog, op, |s| self.constant(s)) else {
            return Ok(false);
        };
        if !self.is_vector(dst) || matches!(form, VecOp::Word | VecOp::Rotate) {
            return Ok(false);
        }
        let mut out = Vec::new();
        for v in 0..self.lanes / 4 {
            let r = match form {
                VecOp::Bin(op, a, b) => {
                    let (x, y) = (self.vec_get(a, v)?, self.vec_get(b, v)?);
                    let i = self.b.ins();
                    match op {
                        IntBin::Add => i.iadd(x, y),
                        IntBin::Sub => i.isub(x, y),
                        IntBin::Mul => i.imul(x, y),
                        IntBin::And => i.band(x, y),
                        IntBin::Or => i.bor(x, y),
                        _ => i.bxor(x, y),
                    }
                }
                VecOp::Shift(op, a, s) => {
                    let x = self.vec_get(a, v)?;
                    let i = self.b.ins();
                    match op {
                        IntBin::ShiftLeft => i.ishl_imm_s(x, s),
                        IntBin::ShiftRightLogical => i.ushr_imm_s(x, s),
                        _ => i.sshr_imm_s(x, s),
                    }
                }
                VecOp::Not(a) => {
                    let x = self.vec_get(a, v)?;
                    self.b.ins().bnot(x)
                }
                VecOp::Negate(a) => {
                    let x = self.vec_get(a, v)?;
                    self.b.ins().ineg(x)
                }
                VecOp::Copy(a) => self.vec_get(a, v)?,
                VecOp::Float(op, a, b) => {
                    let (x, y) = (self.vec_get(a, v)?, self.vec_get(b, v)?);
                    let lanes = MemFlagsData::new().with_endianness(Endianness::Little);
                    let x = self.b.ins().bitcast(F32X4, lanes, x);
                    let y = self.b.ins().bitcast(F32X4, lanes, y);
                    let i = self.b.ins();
                    let r = match op {
                        FloatBin::Add => i.fadd(x, y),
                        FloatBin::Sub => i.fsub(x, y),
                        FloatBin::Mul => i.fmul(x, y),
                        _ => i.fdiv(x, y),
                    };
                    self.b.ins().bitcast(I32X4, lanes, r)
                }
                // Not emitted as a vector op (above).
                VecOp::Word | VecOp::Rotate => return Err("a load or rotate as a vector op".into()),
                VecOp::Dot(kind, a, b, acc) => {
                    let (x, y) = (self.vec_get(a, v)?, self.vec_get(b, v)?);
                    let acc = match acc {
                        Some(c) => Some(self.vec_get(c, v)?),
                        None => None,
                    };
                    self.vec_dot(kind, x, y, acc)
                }
            };
            out.push(r);
        }
        for (v, r) in out.into_iter().enumerate() {
            let var = self.vec_var(dst, v as u32)?;
            self.def_var(var, r);
        }
        Ok(true)
    }

    /// [`super::ops`]'s packed dot product on four lanes: each byte sign- or zero-extended
    /// (Vector 1 signed for `Signed` and `Mixed`, Vector 2 for `Signed`), the four products
    /// summed (exact: below 2^17 in magnitude), then wrapped to 32 bits, or added to the
    /// accumulator and clamped to the result's range — a saturating 32-bit add, signed
    /// unless `Unsigned`.
    fn vec_dot(&mut self, kind: DotKind, a: Value, b: Value, acc: Option<Value>) -> Value {
        let (sa, sb) = match kind {
            DotKind::Signed => (true, true),
            DotKind::Unsigned => (false, false),
            DotKind::Mixed => (true, false),
        };
        // Each lane's four bytes widened to 16 bits (lanes 0 and 1 in the low half, 2 and 3
        // in the high), multiplied in pairs and the pairs summed (`pmaddwd` on x86-64: the
        // products of 16-bit values fit 32 bits), then adjacent sums added (`phaddd`). Exact:
        // each product's magnitude is at most 255 × 255.
        let lanes = MemFlagsData::new().with_endianness(Endianness::Little);
        let halves = |e: &mut Self, v: Value, signed: bool| {
            let bytes = e.b.ins().bitcast(I8X16, lanes, v);
            if signed {
                (e.b.ins().swiden_low(bytes), e.b.ins().swiden_high(bytes))
            } else {
                (e.b.ins().uwiden_low(bytes), e.b.ins().uwiden_high(bytes))
            }
        };
        let (a_lo, a_hi) = halves(self, a, sa);
        let (b_lo, b_hi) = halves(self, b, sb);
        let pairs = |e: &mut Self, x: Value, y: Value| {
            let low = e.b.ins().swiden_low(x);
            let low_y = e.b.ins().swiden_low(y);
            let high = e.b.ins().swiden_high(x);
            let high_y = e.b.ins().swiden_high(y);
            let low = e.b.ins().imul(low, low_y);
            let high = e.b.ins().imul(high, high_y);
            e.b.ins().iadd_pairwise(low, high)
        };
        let lo = pairs(self, a_lo, b_lo);
        let hi = pairs(self, a_hi, b_hi);
        let sum = self.b.ins().iadd_pairwise(lo, hi);
        let Some(acc) = acc else {
            return sum;
        };
        let total = self.b.ins().iadd(acc, sum);
        if kind == DotKind::Unsigned {
            // Past 2^32 - 1 the wrapped total is below the accumulator: all ones then.
            let over = self.b.ins().icmp(IntCC::UnsignedLessThan, total, acc);
            self.b.ins().bor(total, over)
        } else {
            // Overflow where the total's sign differs from both operands'; then the bound
            // on the accumulator's side: MAX (0x7fffffff) for a positive one, MIN below.
            let t1 = self.b.ins().bxor(acc, total);
            let t2 = self.b.ins().bxor(sum, total);
            let both = self.b.ins().band(t1, t2);
            let over = self.b.ins().sshr_imm_s(both, 31);
            let sign = self.b.ins().sshr_imm_s(acc, 31);
            let max = self.b.ins().iconst(I32, i64::from(i32::MAX));
            let max = self.b.ins().splat(I32X4, max);
            let bound = self.b.ins().bxor(sign, max);
            self.b.ins().bitselect(over, bound, total)
        }
    }

    /// Lanes `4v .. 4v + 4` of slot `s` as an `I32X4` (low 32 bits of each lane): a vector
    /// slot's vector, a shared slot's value in every lane, or the lanes gathered.
    pub(super) fn vec_get(&mut self, s: Slot, v: u32) -> Result<Value, String> {
        if self.is_vector(s) {
            let var = self.vec_var(s, v)?;
            return Ok(self.use_var(var));
        }
        if self.is_shared(s) {
            self.lane = Some(0);
            let x = self.get(s)?;
            let x = self.b.ins().ireduce(I32, x);
            return Ok(self.b.ins().splat(I32X4, x));
        }
        let mut vec = None;
        for k in 0..4u8 {
            self.lane = Some(v * 4 + u32::from(k));
            let x = self.get(s)?;
            let x = self.b.ins().ireduce(I32, x);
            vec = Some(match vec {
                None => self.b.ins().scalar_to_vector(I32X4, x),
                Some(p) => self.b.ins().insertlane(p, x, k),
            });
        }
        vec.ok_or_else(|| "an empty vector".into())
    }

    /// Lane `l` of vector slot `s`, zero-extended as every 32-bit lane value is.
    pub(super) fn vec_lane(&mut self, s: Slot, l: u32) -> Result<Value, String> {
        let var = self.vec_var(s, l / 4)?;
        let v = self.use_var(var);
        let x = self.b.ins().extractlane(v, (l % 4) as u8);
        Ok(self.b.ins().uextend(I64, x))
    }

    /// Sets lane `l` of vector slot `s` to the low 32 bits of `x`.
    pub(super) fn vec_set_lane(&mut self, s: Slot, l: u32, x: Value) -> Result<(), String> {
        let var = self.vec_var(s, l / 4)?;
        let v = self.use_var(var);
        let x = self.b.ins().ireduce(I32, x);
        let v = self.b.ins().insertlane(v, x, (l % 4) as u8);
        self.def_var(var, v);
        Ok(())
    }

    /// A subgroup operation of a group in lockstep, which is one whole subgroup with every
    /// lane active ([`super::group`]): the operands of every lane into the subgroup register
    /// file, the reference path's kernel, the results back.
    fn group_op(&mut self, g: &crate::run::group::GroupInst, op: &Op) -> Result<(), String> {
        if self.permute(g)? {
            return Ok(());
        }
        let (writes, reads) = g.slots();
        let (group, regs) = {
            let v = self.vals()?;
            (v.group, v.group_regs)
        };
        let sg = self.lanes;
        let flags = MemFlagsData::trusted();
        let at = |s: Slot, l: u32| -> Result<i32, String> {
            if s >= self.prog.slots {
                return Err(format!("slot {s} outside the register file"));
            }
            i32::try_from((u64::from(s) * u64::from(sg) + u64::from(l)) * 8)
                .map_err(|_| "a subgroup register file too large".to_string())
        };
        for &r in &reads {
            for l in 0..sg {
                self.lane = Some(l);
                let v = self.get(r)?;
                self.b.ins().store(flags, v, regs, at(r, l)?);
            }
        }
        let index = self.iconst(self.group_ops.len() as u64);
        self.group_ops.push(op.clone());
        let bad = self.call(super::native::group_op as *const (), &[group, index]);
        self.give_up_if(bad, super::compile::reason::GROUP);
        for w in writes {
            for l in 0..sg {
                self.lane = Some(l);
                let v = self.b.ins().load(I64, flags, regs, at(w, l)?);
                self.set(w, v)?;
            }
        }
        Ok(())
    }

    /// A subgroup operation that moves each lane's Value from a source lane (rotates,
    /// shuffles, broadcasts) as compiled code, when its source lanes follow from values the
    /// compiled code has: each lane's Value stored into the subgroup register file, each
    /// lane's source computed as the reference kernel's `semantics::group` function computes
    /// it, and read back. A source outside the subgroup (undefined: the reference path
    /// reports it) gives the dispatch back; a rotate whose Delta, or a broadcast whose Id, is
    /// not held once for the group (possibly not uniform: a finding) or whose ClusterSize is
    /// undefined is left to the kernel ([`Emitter::group_op`]). `false` when not done here.
    fn permute(&mut self, g: &crate::run::group::GroupInst) -> Result<bool, String> {
        use crate::run::group::GroupKind as K;
        if self.vector_rotate(g)? {
            return Ok(true);
        }
        let n = self.lanes;
        let (operand, size) = match g.kind {
            K::Rotate { delta, cluster } => {
                let size = cluster.unwrap_or(u64::from(n));
                if !self.is_shared(delta)
                    || crate::semantics::group::rotate_cluster_is_undefined(size, n)
                {
                    return Ok(false);
                }
                (delta, size)
            }
            K::Broadcast { id } if self.is_shared(id) => (id, 0),
            K::Shuffle { id } => (id, 0),
            K::ShuffleXor { mask } => (mask, 0),
            K::ShuffleUp { delta } | K::ShuffleDown { delta } => (delta, 0),
            _ => return Ok(false),
        };
        let regs = self.vals()?.group_regs;
        let flags = MemFlagsData::trusted();
        let slot_at = |s: Slot| -> Result<i64, String> {
            if s >= self.prog.slots {
                return Err(format!("slot {s} outside the register file"));
            }
            Ok(i64::from(s) * i64::from(n) * 8)
        };
        for c in 0..g.count {
            let at = slot_at(g.value + c)?;
            for l in 0..n {
                self.lane = Some(l);
                let v = self.get(g.value + c)?;
                let at = i32::try_from(at + 8 * i64::from(l))
                    .map_err(|_| "a subgroup register file too large".to_string())?;
                self.b.ins().store(flags, v, regs, at);
            }
        }
        // Each lane's source lane, and whether it is outside the subgroup.
        let mut sources = Vec::new();
        let mut outside = None;
        for l in 0..n {
            self.lane = Some(l);
            let x = self.get(operand)?;
            let lane = i64::from(l);
            let (src, bad) = match g.kind {
                K::Rotate { .. } => {
                    // rotate_source_lane: ((l + delta) mod size) + the cluster's first lane.
                    let m = size as i64 - 1;
                    let sum = self.b.ins().iadd_imm_s(x, lane);
                    let low = self.b.ins().band_imm_s(sum, m);
                    (self.b.ins().iadd_imm_s(low, lane & !m), None)
                }
                K::Broadcast { .. } | K::Shuffle { .. } => {
                    let bad =
                        self.b
                            .ins()
                            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, x, i64::from(n));
                    (x, Some(bad))
                }
                K::ShuffleXor { .. } => {
                    let src = self.b.ins().bxor_imm_s(x, lane);
                    let bad = self.b.ins().icmp_imm_s(
                        IntCC::UnsignedGreaterThanOrEqual,
                        src,
                        i64::from(n),
                    );
                    (src, Some(bad))
                }
                K::ShuffleUp { .. } => {
                    let bad = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, x, lane);
                    let l = self.iconst(u64::from(l));
                    (self.b.ins().isub(l, x), Some(bad))
                }
                _ => {
                    // ShuffleDown: delta ≥ n − l is outside (and no sum past 2^64).
                    let bad = self.b.ins().icmp_imm_s(
                        IntCC::UnsignedGreaterThanOrEqual,
                        x,
                        i64::from(n) - lane,
                    );
                    (self.b.ins().iadd_imm_s(x, lane), Some(bad))
                }
            };
            if let Some(bad) = bad {
                outside = Some(match outside {
                    None => bad,
                    Some(o) => self.b.ins().bor(o, bad),
                });
            }
            sources.push(src);
        }
        if let Some(o) = outside {
            self.give_up_if(o, super::compile::reason::GROUP);
        }
        for c in 0..g.count {
            let at = i32::try_from(slot_at(g.value + c)?)
                .map_err(|_| "a subgroup register file too large".to_string())?;
            for (l, &src) in (0u32..).zip(&sources) {
                let off = self.b.ins().ishl_imm_s(src, 3);
                let addr = self.b.ins().iadd(regs, off);
                let v = self.b.ins().load(I64, flags, addr, at);
                self.lane = Some(l);
                self.set(g.dst + c, v)?;
            }
        }
        Ok(true)
    }

    /// A rotate of a 32-bit value into a vector slot, its delta held once and its cluster
    /// size `c` defined and at least 4, in registers only: byte shuffles of the cluster's
    /// `m = c / 4` vectors by indices computed once from the delta and shared by every
    /// cluster. Output lane `l` of a cluster reads `semantics::group::rotate_source_lane`'s
    /// source, cluster lane `(l + delta) mod c`: in bytes, the cluster's `16m` bytes rotated
    /// by `4 (delta mod c)`. (The earlier form stored each cluster twice and loaded at the
    /// rotated start: every such load spans two stores, which x86 cannot forward, a stall of
    /// about a dozen cycles a load.) `false` when not done here.
    fn vector_rotate(&mut self, g: &crate::run::group::GroupInst) -> Result<bool, String> {
        let crate::run::group::GroupKind::Rotate { delta, cluster } = g.kind else {
            return Ok(false);
        };
        let n = self.lanes;
        let c = cluster.unwrap_or(u64::from(n));
        if !self.is_vector(g.dst)
            || g.count != 1
            || g.bits != 32
            || !self.is_shared(delta)
            || crate::semantics::group::rotate_cluster_is_undefined(c, n)
            || c < 4
        {
            return Ok(false);
        }
        let m = c as u32 / 4;
        self.lane = Some(0);
        let d = self.get(delta)?;
        let d = self.b.ins().band_imm_s(d, c as i64 - 1);
        let lanes = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut outs = Vec::new();
        if m <= 4 {
            // Output vector i's byte j is the cluster's byte `(16i + j + 4d) mod 16m`, byte
            // `.. - 16k` of vector k: each output ORs one shuffle of every vector, each
            // taking its own bytes and zeros elsewhere (m² shuffles: used up to m = 4).
            let shift = self.b.ins().ishl_imm_s(d, 2);
            let shift = self.byte_splat(shift);
            let mut indices = Vec::new();
            for i in 0..m {
                let at = self.iota_bytes(16 * i as u8);
                let at = self.b.ins().iadd(at, shift);
                let wrap = self.byte_splat_const(16 * m as u8 - 1);
                let at = self.b.ins().band(at, wrap);
                for k in 0..m {
                    let back = self.byte_splat_const(16 * k as u8);
                    let from_k = self.b.ins().isub(at, back);
                    indices.push(self.shuffle_indices(from_k));
                }
            }
            for cl in 0..n / c as u32 {
                let mut v = Vec::new();
                for k in 0..m {
                    let x = self.vec_get(g.value, cl * m + k)?;
                    v.push(self.b.ins().bitcast(I8X16, lanes, x));
                }
                for i in 0..m {
                    let mut out = None;
                    for k in 0..m {
                        let part = self.byte_shuffle(v[k as usize], indices[(i * m + k) as usize]);
                        out = Some(match out {
                            None => part,
                            Some(o) => self.b.ins().bor(o, part),
                        });
                    }
                    let x = out.ok_or("an empty cluster")?;
                    outs.push((cl * m + i, self.b.ins().bitcast(I32X4, lanes, x)));
                }
            }
        } else {
            // With `d = 4q + r`: the cluster's vectors first rotated by q (a barrel shifter
            // of log2 m stages of bit selects on q's bits: `R[i] = V[(i + q) mod m]`), then
            // `out[i] = shuffle(R[i], A) | shuffle(R[(i + 1) mod m], B)` with byte indices
            // `A = [0 .. 16] + 4r` and `B = A - 16`, each past 15 (or negative) giving 0.
            let q = self.b.ins().ushr_imm_s(d, 2);
            let mut masks = Vec::new();
            for s in 0..m.trailing_zeros() {
                let bit = self.b.ins().ushr_imm_s(q, i64::from(s));
                let bit = self.b.ins().band_imm_s(bit, 1);
                let all = self.b.ins().ineg(bit);
                let all = self.b.ins().ireduce(I32, all);
                masks.push(self.b.ins().splat(I32X4, all));
            }
            let r = self.b.ins().band_imm_s(d, 3);
            let shift = self.b.ins().ishl_imm_s(r, 2);
            let shift = self.byte_splat(shift);
            let at = self.iota_bytes(0);
            let a = self.b.ins().iadd(at, shift);
            let sixteen = self.byte_splat_const(16);
            let b = self.b.ins().isub(a, sixteen);
            let (a, b) = (self.shuffle_indices(a), self.shuffle_indices(b));
            for cl in 0..n / c as u32 {
                let mut v = Vec::new();
                for k in 0..m {
                    v.push(self.vec_get(g.value, cl * m + k)?);
                }
                for (s, &mask) in masks.iter().enumerate() {
                    let step = 1usize << s;
                    let len = v.len();
                    v = (0..len)
                        .map(|i| self.b.ins().bitselect(mask, v[(i + step) % len], v[i]))
                        .collect();
                }
                let bytes: Vec<Value> = v
                    .iter()
                    .map(|&x| self.b.ins().bitcast(I8X16, lanes, x))
                    .collect();
                for i in 0..bytes.len() {
                    let lo = self.byte_shuffle(bytes[i], a);
                    let hi = self.byte_shuffle(bytes[(i + 1) % bytes.len()], b);
                    let x = self.b.ins().bor(lo, hi);
                    outs.push((cl * m + i as u32, self.b.ins().bitcast(I32X4, lanes, x)));
                }
            }
        }
        for (v, x) in outs {
            let var = self.vec_var(g.dst, v)?;
            self.def_var(var, x);
        }
        Ok(true)
    }

    /// The bytes `first, first + 1, .., first + 15`.
    fn iota_bytes(&mut self, first: u8) -> Value {
        let bytes: Vec<u8> = (0..16).map(|j| first.wrapping_add(j)).collect();
        let bytes = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(I8X16, bytes)
    }

    /// The low byte of integer `x` in every byte.
    fn byte_splat(&mut self, x: Value) -> Value {
        let x = self.b.ins().ireduce(I8, x);
        self.b.ins().splat(I8X16, x)
    }

    /// `x` in every byte.
    fn byte_splat_const(&mut self, x: u8) -> Value {
        let x = self.b.ins().iconst(I8, i64::from(x));
        self.b.ins().splat(I8X16, x)
    }

    /// Byte indices for [`Emitter::byte_shuffle`] from indices where any past 15 means 0
    /// (`swizzle`'s rule): on x86-64 they are made once here as `pshufb` wants them — an
    /// unsigned saturating add of 0x70 sets bit 7 exactly on those past 15 and keeps the low
    /// four bits of the others — which a `swizzle` would redo at every use.
    fn shuffle_indices(&mut self, indices: Value) -> Value {
        if cfg!(target_arch = "x86_64") {
            let bias = self.b.ins().iconst(I8, 0x70);
            let bias = self.b.ins().splat(I8X16, bias);
            self.b.ins().uadd_sat(indices, bias)
        } else {
            indices
        }
    }

    /// `x`'s bytes at [`Emitter::shuffle_indices`]' indices, 0 where an index is past 15.
    fn byte_shuffle(&mut self, x: Value, indices: Value) -> Value {
        if cfg!(target_arch = "x86_64") {
            self.b.ins().x86_pshufb(x, indices)
        } else {
            self.b.ins().swizzle(x, indices)
        }
    }

    /// The spill area's address (made once, in the entry block).
    fn spill_base(&self) -> Result<Value, String> {
        self.spill.ok_or_else(|| "no spill area".into())
    }
}
