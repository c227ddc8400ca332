//! Affine slots of a lockstep group ([`super::lockstep`]): values that differ from lane to lane
//! by a step known at compile time, `lane l = lane 0 + l × step` — the invocation's index and
//! what is computed from it by adding shared values, multiplying or shifting by constants, and
//! the pointers access chains make from them (`x[gl_GlobalInvocationID.x]`). Such a slot is
//! held once for the group, as lane 0's value, and each lane's value is made from it where an
//! op needs it (one add).
//!
//! What it buys: a load or store through an affine pointer whose step is the access's size
//! ([`Emitter::line_load`], [`Emitter::line_store`]) touches the group's lanes' bytes in one
//! line, so it is one bounds and alignment check, one race-log run and vector loads or stores
//! (the "contiguous access → one bounds check and a vector load"), where each lane
//! otherwise computed its own address, checked it and moved its own word.
//!
//! Exactness. Integer slots: `(v + l·k) mod 2^bits` is what adding, subtracting, multiplying
//! and shifting left by a constant compute lane by lane (these are ring homomorphisms modulo
//! 2^bits), so lane `l`'s value is `(v0 + l·k) mod 2^bits` exactly, whatever wraps. Pointers: an
//! access chain extends its index (sign or zero) before it scales it, so a wrap of the index
//! inside the group breaks the line; [`Emitter::line_check`] therefore computes the last lane's
//! pointer exactly as the scalar code does and gives the dispatch back (to the wide
//! interpreter) unless it is `p0 + (lanes − 1)·step`. That one check covers every lane: the
//! lanes' extended indices climb (or fall) by at most 2^16 per lane from lane 0, so they wrap
//! at most once, and a wrap shifts every later lane's offset by `2^bits × stride` (nonzero
//! modulo 2^48 for the 32-bit indices and strides below 2^15 allowed here), the last lane's
//! included; a 64-bit index never wraps modulo 2^48 differently from the offset itself, and a
//! carry out of the 48 offset bits shows in the last lane's region bits.

use super::compile::{reason, Emitter, Key};
use super::facts::{op_slots, Facts};
use crate::program::{Function, IntBin, Op, Program, Slot, Step};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;

/// How a slot's lanes follow from lane 0's in a group in lockstep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Affine {
    /// Lane `l` holds lane 0's value plus `l × step` (modulo 2^bits).
    pub step: u64,
    /// The width the values wrap at (32 or 64); a pointer's is 64 and does not wrap (its
    /// line is checked where it is made, [`Emitter::line_check`]).
    pub bits: u32,
    pub pointer: bool,
    /// The step is known only at run time (`r * p.words`, a push constant's multiple): it is
    /// held in the slot's own variable ([`Emitter::affine_step`]), computed by the op that
    /// writes the slot, which is its only write; `step` is then unused (0).
    pub dynamic: bool,
}

impl Affine {
    /// The same value in every lane (a step of 0 known at compile time).
    fn zero(&self) -> bool {
        !self.dynamic && self.step == 0
    }
}

/// The largest step (in magnitude) of a run-time index step an access chain takes; past it
/// the dispatch is given back ([`Emitter::affine_step`]), so the lanes' extended indices
/// wrap at most once (module doc).
const MAX_DYNAMIC_STEP: i64 = 1 << 24;

/// The largest step (in magnitude) of an index an access chain makes a line from.
const MAX_INDEX_STEP: i64 = 1 << 16;
/// The largest stride of such an index.
const MAX_STRIDE: u64 = 1 << 15;

/// The most fixpoints [`affine_slots`] finds before it gives up on affine slots.
const MAX_PASSES: usize = 8;

/// The analysis' state of one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Not known yet (no write seen with known operands).
    Open,
    Line(Affine),
    /// Each lane its own.
    Lanes,
}

impl Form {
    /// What a slot is when it is written with `other` too.
    fn meet(self, other: Form) -> Form {
        match (self, other) {
            (Form::Open, x) | (x, Form::Open) => x,
            (Form::Line(a), Form::Line(b)) if a == b => Form::Line(a),
            _ => Form::Lanes,
        }
    }
}

/// A shared slot read as an affine operand: step 0.
const SHARED: Affine = Affine {
    step: 0,
    bits: 64,
    pointer: false,
    dynamic: false,
};

/// The affine slots of `func`'s lockstep groups of `lanes` (none when there are none): slots
/// not shared whose every write is an op with an affine form ([`form_of`]) of shared or affine
/// operands, all with the same step. An optimistic fixpoint (a loop's induction variable
/// started from the invocation's index is affine): each slot goes from open to a line to each
/// lane its own, at most twice, so the rounds are bounded.
pub(super) fn affine_slots(
    prog: &Program,
    func: &Function,
    facts: &Facts,
    key: Key,
    lanes: u32,
    shared: &[bool],
) -> Vec<Option<Affine>> {
    let n = prog.slots as usize;
    let is_shared = |s: Slot| shared.get(s as usize).copied().unwrap_or(false);
    // Slots found open at a fixpoint (written only from values still open: nothing grounds
    // them) are made each lane's own and the fixpoint found again, so that no line rests on
    // an open value.
    let mut forced = vec![false; n];
    // A run-time step lives in its slot's variable, which one write defines: slots written
    // more than once keep constant steps only.
    let mut writers = vec![0usize; n];
    for block in &func.blocks {
        for op in &block.ops {
            for w in op_slots(prog, op).map(|(w, _)| w).unwrap_or_default() {
                if let Some(c) = writers.get_mut(w as usize) {
                    *c += 1;
                }
            }
        }
        for (_, copies) in &block.phis {
            for &(dst, _) in copies {
                if let Some(c) = writers.get_mut(dst as usize) {
                    *c += 1;
                }
            }
        }
    }
    let mut forms = vec![Form::Open; n];
    // Each pass forces at least one slot; a program needing more than a few passes (never
    // seen: an open slot is one nothing writes from a grounded value) gets no affine slots,
    // which keeps the analysis' time bounded whatever the program.
    for _ in 0..MAX_PASSES {
        let mut settled = false;
        for _ in 0..2 * n + 2 {
            let next = round(
                prog, func, facts, key, lanes, &forms, &forced, &writers, &is_shared,
            );
            if next == forms {
                settled = true;
                break;
            }
            forms = next;
        }
        if !settled {
            break;
        }
        let mut open = false;
        for (s, f) in forms.iter().enumerate() {
            if *f == Form::Open && facts.written.get(s).copied().unwrap_or(false) {
                forced[s] = true;
                open = true;
            }
        }
        if !open {
            return forms
                .into_iter()
                .enumerate()
                .map(|(s, f)| match f {
                    Form::Line(a) if !is_shared(s as Slot) => Some(a),
                    _ => None,
                })
                .collect();
        }
        forms = vec![Form::Open; n];
    }
    // No fixpoint within the bounds: no affine slots.
    vec![None; n]
}

/// One round of [`affine_slots`]: each slot's form from its writes' forms, given `forms`.
#[allow(clippy::too_many_arguments)]
fn round(
    prog: &Program,
    func: &Function,
    facts: &Facts,
    key: Key,
    lanes: u32,
    forms: &[Form],
    forced: &[bool],
    writers: &[usize],
    is_shared: &dyn Fn(Slot) -> bool,
) -> Vec<Form> {
    let mut next: Vec<Form> = forced
        .iter()
        .map(|&f| if f { Form::Lanes } else { Form::Open })
        .collect();
    let of = |s: Slot| -> Form {
        if is_shared(s) {
            Form::Line(SHARED)
        } else {
            forms.get(s as usize).copied().unwrap_or(Form::Lanes)
        }
    };
    let mut put = |s: Slot, f: Form| {
        let f = match f {
            Form::Line(a) if a.dynamic && writers.get(s as usize) != Some(&1) => Form::Lanes,
            f => f,
        };
        if let Some(x) = next.get_mut(s as usize) {
            *x = x.meet(f);
        }
    };
    for block in &func.blocks {
        for op in &block.ops {
            let writes = op_slots(prog, op).map(|(w, _)| w).unwrap_or_default();
            match form_of(prog, op, facts, key, lanes, &of) {
                Some(results) if results.len() == writes.len() => {
                    for (w, f) in writes.into_iter().zip(results) {
                        put(w, f);
                    }
                }
                _ => {
                    for w in writes {
                        put(w, Form::Lanes);
                    }
                }
            }
        }
        for (_, copies) in &block.phis {
            for &(dst, src) in copies {
                // A copy on an edge has no op to compute a run-time step.
                match of(src) {
                    Form::Line(a) if a.dynamic => put(dst, Form::Lanes),
                    f => put(dst, f),
                }
            }
        }
    }
    next
}

/// The forms of the slots `op` writes (in [`op_slots`] order) when it keeps lines, given its
/// operands' forms; `None` when it does not (or cannot tell).
fn form_of(
    prog: &Program,
    op: &Op,
    facts: &Facts,
    key: Key,
    lanes: u32,
    of: &dyn Fn(Slot) -> Form,
) -> Option<Vec<Form>> {
    let line = |s: Slot| match of(s) {
        Form::Line(a) => Some(Some(a)),
        Form::Open => Some(None),
        Form::Lanes => None,
    };
    // An operand still open leaves the result open (the optimistic start).
    let int = |a: Option<Affine>, bits: u32| a.is_none_or(|a| !a.pointer && a.bits >= bits);
    let dynamic = |bits: u32, pointer: bool| {
        Form::Line(Affine {
            step: 0,
            bits,
            pointer,
            dynamic: true,
        })
    };
    Some(match *op {
        Op::Copy { src, .. } => match of(src) {
            Form::Line(a) if a.dynamic => vec![dynamic(a.bits, a.pointer)],
            f => vec![f],
        },
        Op::IntBin {
            op,
            bits: bits @ (32 | 64),
            a,
            b,
            ..
        } => {
            let (x, y) = (line(a)?, line(b)?);
            if !int(x, bits) || !int(y, bits) {
                return None;
            }
            let (Some(x), Some(y)) = (x, y) else {
                return Some(vec![Form::Open]);
            };
            let m = super::compile::mask(bits);
            let known = |s: Slot| facts.known.get(&s).copied();
            let step = match op {
                IntBin::Add | IntBin::Sub if x.dynamic || y.dynamic => {
                    return Some(vec![dynamic(bits, false)])
                }
                IntBin::Add => x.step.wrapping_add(y.step),
                IntBin::Sub => x.step.wrapping_sub(y.step),
                // A line times a value the same in every lane: a line, its step known when
                // the factor is a constant, else at run time.
                IntBin::Mul if x.zero() && y.zero() => 0,
                IntBin::Mul if y.zero() => match (x.dynamic, known(b)) {
                    (false, Some(c)) => x.step.wrapping_mul(c),
                    _ => return Some(vec![dynamic(bits, false)]),
                },
                IntBin::Mul if x.zero() => match (y.dynamic, known(a)) {
                    (false, Some(c)) => y.step.wrapping_mul(c),
                    _ => return Some(vec![dynamic(bits, false)]),
                },
                IntBin::ShiftLeft if y.zero() => {
                    let s = known(b).filter(|&s| s < u64::from(bits))?;
                    if x.dynamic {
                        return Some(vec![dynamic(bits, false)]);
                    }
                    x.step << s
                }
                _ => return None,
            };
            vec![Form::Line(Affine {
                step: step & m,
                bits,
                pointer: false,
                dynamic: false,
            })]
        }
        Op::Load { ptr, ty, .. } => {
            let &p = facts.known.get(&ptr)?;
            let leaves = prog.leaves_of(ty);
            let mut out = Vec::new();
            for leaf in leaves {
                let pc = crate::run::memory::make_pointer(
                    crate::run::memory::REGION_INVOCATION,
                    crate::run::memory::split_pointer(p).1 + leaf.offset,
                );
                let &(b, c) = facts.builtins.get(&pc)?;
                let step = builtin_step(prog, key, lanes, b, c)?;
                out.push(Form::Line(Affine {
                    step,
                    bits: 32,
                    pointer: false,
                    dynamic: false,
                }));
            }
            out
        }
        Op::AccessChain {
            base, ref steps, ..
        } => {
            let mut open = false;
            let mut moving = 0;
            let mut dyn_step = false;
            let mut step = match line(base)? {
                Some(a) if a.zero() => 0,
                Some(a) if a.pointer => {
                    moving += 1;
                    dyn_step = a.dynamic;
                    a.step
                }
                Some(_) => return None,
                None => {
                    open = true;
                    0
                }
            };
            for s in steps.iter() {
                let Step::Dyn {
                    index,
                    bits,
                    stride,
                    ..
                } = *s
                else {
                    continue;
                };
                let Some(a) = line(index)? else {
                    open = true;
                    continue;
                };
                if a.zero() {
                    continue;
                }
                if a.pointer || a.bits < bits || !matches!(bits, 32 | 64) || stride >= MAX_STRIDE {
                    return None;
                }
                moving += 1;
                if a.dynamic {
                    // Its size is checked at run time (Emitter::affine_step).
                    dyn_step = true;
                    continue;
                }
                // The index's step as the lanes' extended indices climb without a wrap.
                let k = crate::semantics::sign_extend(bits, a.step & super::compile::mask(bits));
                if k.unsigned_abs() > MAX_INDEX_STEP as u64 {
                    return None;
                }
                step = (k as u64).wrapping_mul(stride);
            }
            if moving > 1 {
                return None;
            }
            if open {
                return Some(vec![Form::Open]);
            }
            if dyn_step {
                return Some(vec![dynamic(64, true)]);
            }
            vec![Form::Line(Affine {
                step,
                bits: 64,
                pointer: true,
                dynamic: false,
            })]
        }
        _ => return None,
    })
}

/// The step of component `c` of built-in `b` in a group of `lanes` consecutive invocations
/// whose first is a multiple of `lanes`, if it has one.
fn builtin_step(prog: &Program, key: Key, lanes: u32, b: u32, c: usize) -> Option<u64> {
    use spirv::BuiltIn as B;
    let size = prog.local_size.map(u64::from);
    let per_group: u64 = size.iter().product();
    let lanes = u64::from(lanes);
    // A group inside one row of x: the lanes' x climbs by one, y and z stay.
    let in_row = size[0].is_multiple_of(lanes);
    match (B::from_u32(b)?, c) {
        (B::LocalInvocationId, 0) if in_row => Some(1),
        (B::LocalInvocationId, 1 | 2) if in_row => Some(0),
        // x is truncated to 32 bits: no wrap while the dispatch's x fits.
        (B::GlobalInvocationId, 0) if in_row && u64::from(key.groups[0]) * size[0] <= 1 << 32 => {
            Some(1)
        }
        (B::GlobalInvocationId, 1 | 2) if in_row => Some(0),
        (B::LocalInvocationIndex, 0) if per_group.is_multiple_of(lanes) => Some(1),
        (B::SubgroupLocalInvocationId, 0)
            if per_group.is_multiple_of(lanes) && u64::from(key.sg).is_multiple_of(lanes) =>
        {
            Some(1)
        }
        _ => None,
    }
}

impl Emitter<'_> {
    /// Slot `s`'s form when it is affine.
    pub(super) fn affine(&self, s: Slot) -> Option<Affine> {
        self.affine.get(s as usize).copied().flatten()
    }

    /// Lane `l`'s value of affine slot `s` (form `a`) from lane 0's, `v0`.
    pub(super) fn affine_lane(
        &mut self,
        s: Slot,
        a: Affine,
        v0: Value,
        l: u32,
    ) -> Result<Value, String> {
        if l == 0 || a.zero() {
            return Ok(v0);
        }
        let v = if a.dynamic {
            let step = self.step_var(s)?;
            let step = self.use_var(step);
            let d = self.b.ins().imul_imm_s(step, i64::from(l));
            self.b.ins().iadd(v0, d)
        } else {
            self.b
                .ins()
                .iadd_imm_s(v0, a.step.wrapping_mul(u64::from(l)) as i64)
        };
        Ok(if a.pointer { v } else { self.trunc(a.bits, v) })
    }

    /// The variable holding the run-time step of affine slot `s`.
    fn step_var(&self, s: Slot) -> Result<Variable, String> {
        self.step_vars
            .get(s as usize)
            .copied()
            .flatten()
            .ok_or_else(|| format!("slot {s} has no run-time step"))
    }

    /// The step of slot `s` as a value: its variable's, its constant, or 0 (shared).
    fn step_of(&mut self, s: Slot) -> Result<Value, String> {
        match self.affine(s) {
            Some(a) if a.dynamic => {
                let v = self.step_var(s)?;
                Ok(self.use_var(v))
            }
            Some(a) => Ok(self.iconst(a.step)),
            None if self.is_shared(s) => Ok(self.iconst(0)),
            None => Err(format!("slot {s} is not held once")),
        }
    }

    /// After `op` wrote lane 0's value of an affine slot with a run-time step: the step,
    /// computed from its operands' as [`form_of`] composes them, into the slot's variable.
    /// An access chain's index step past [`MAX_DYNAMIC_STEP`] gives the dispatch back.
    pub(super) fn affine_step(&mut self, op: &Op) -> Result<(), String> {
        let dst = match *op {
            Op::Copy { dst, .. } | Op::IntBin { dst, .. } | Op::AccessChain { dst, .. } => dst,
            _ => return Ok(()),
        };
        if !self.affine(dst).is_some_and(|a| a.dynamic) {
            return Ok(());
        }
        self.lane = Some(0);
        let step = match *op {
            Op::Copy { src, .. } => self.step_of(src)?,
            Op::IntBin { op, bits, a, b, .. } => {
                let (sa, sb) = (self.step_of(a)?, self.step_of(b)?);
                let v = match op {
                    IntBin::Add => self.b.ins().iadd(sa, sb),
                    IntBin::Sub => self.b.ins().isub(sa, sb),
                    IntBin::Mul => {
                        // One side's step is 0 (form_of): (a0 + l·sa)·b0 or a0·(b0 + l·sb).
                        let (a0, b0) = (self.get(a)?, self.get(b)?);
                        let x = self.b.ins().imul(sa, b0);
                        let y = self.b.ins().imul(a0, sb);
                        self.b.ins().iadd(x, y)
                    }
                    IntBin::ShiftLeft => {
                        let c = self.constant(b).ok_or("a shift by a value not constant")?;
                        self.b.ins().ishl_imm_s(sa, c as i64)
                    }
                    _ => return Err("an affine op without a run-time step".into()),
                };
                self.trunc(bits, v)
            }
            Op::AccessChain {
                base, ref steps, ..
            } => {
                let mut sum = self.step_of(base)?;
                for st in steps.iter() {
                    let Step::Dyn {
                        index,
                        bits,
                        stride,
                        ..
                    } = *st
                    else {
                        continue;
                    };
                    if self.is_shared(index) {
                        continue;
                    }
                    let k = self.step_of(index)?;
                    let k = self.trunc(bits, k);
                    let k = self.sext(bits, k);
                    // |k| ≤ MAX_DYNAMIC_STEP, else given back (module doc).
                    let biased = self.b.ins().iadd_imm_s(k, MAX_DYNAMIC_STEP);
                    let far = self.b.ins().icmp_imm_s(
                        IntCC::UnsignedGreaterThan,
                        biased,
                        2 * MAX_DYNAMIC_STEP,
                    );
                    self.give_up_if(far, reason::LINE);
                    let d = self.b.ins().imul_imm_s(k, stride as i64);
                    sum = self.b.ins().iadd(sum, d);
                }
                sum
            }
            _ => return Ok(()),
        };
        let var = self.step_var(dst)?;
        self.def_var(var, step);
        Ok(())
    }

    /// After an access chain made lane 0's pointer of affine slot `dst`: the last lane's
    /// pointer made as the scalar code makes it (its index checks included), and the dispatch
    /// given back unless it is on the line (module doc, "Exactness").
    pub(super) fn line_check(
        &mut self,
        dst: Slot,
        base: Slot,
        steps: &[Step],
    ) -> Result<(), String> {
        let Some(a) = self.affine(dst).filter(|a| a.pointer && !a.zero()) else {
            return Ok(());
        };
        self.lane = Some(0);
        let p0 = self.get(dst)?;
        let last = self.lanes - 1;
        self.lane = Some(last);
        let pl = self.chain_value(base, steps)?;
        let want = self.affine_lane(dst, a, p0, last)?;
        let off = self.b.ins().icmp(IntCC::NotEqual, pl, want);
        self.give_up_if(off, reason::LINE);
        Ok(())
    }

    /// Whether a load or store of `ty` through `ptr` is one line of the group's words.
    fn on_line(&self, ptr: Slot, ty: u32) -> bool {
        self.affine(ptr).is_some_and(|a| {
            a.pointer && !a.dynamic && a.step == 4 && super::lockstep::word_leaf(self.prog, ty)
        })
    }

    /// A group's load of one word per lane along a line (module doc): one check, one log run,
    /// vector loads into a vector slot or a word per lane. `false` when it is no such load.
    pub(super) fn line_load(&mut self, op: &Op) -> Result<bool, String> {
        let Op::Load { dst, ptr, ty } = *op else {
            return Ok(false);
        };
        if !self.on_line(ptr, ty) {
            return Ok(false);
        }
        self.lane = Some(0);
        let p0 = self.get(ptr)?;
        self.log_line(ptr, p0, false)?;
        let addr = self.address(p0, 4 * u64::from(self.lanes))?;
        let flags = MemFlagsData::trusted();
        if self.is_vector(dst) {
            for v in 0..self.lanes / 4 {
                let x = self.b.ins().load(I32X4, flags, addr, (16 * v) as i32);
                let var = self.vec_var(dst, v)?;
                self.def_var(var, x);
            }
        } else {
            for l in 0..self.lanes {
                let x = self.b.ins().load(I32, flags, addr, (4 * l) as i32);
                let x = self.b.ins().uextend(I64, x);
                self.lane = Some(l);
                self.set(dst, x)?;
            }
        }
        Ok(true)
    }

    /// A group's load of one word per lane through an affine pointer of another step (a
    /// column of a matrix: `a[r * words + k]`), in a buffer the race screen does not watch:
    /// the first and last lanes' addresses checked (the lanes' lie between them, on the line
    /// [`Emitter::line_check`] made sure of) and the step's alignment, then each lane's word
    /// at its address. `false` when it is no such load.
    pub(super) fn gather_load(&mut self, op: &Op) -> Result<bool, String> {
        let Op::Load { dst, ptr, ty } = *op else {
            return Ok(false);
        };
        let Some(a) = self.affine(ptr).filter(|a| a.pointer && !a.zero()) else {
            return Ok(false);
        };
        if !super::lockstep::word_leaf(self.prog, ty)
            || (self.key.races && self.facts.logged(ptr, false))
        {
            return Ok(false);
        }
        self.lane = Some(0);
        let p0 = self.get(ptr)?;
        let last = self.lanes - 1;
        let pl = self.affine_lane(ptr, a, p0, last)?;
        let addr = self.address(p0, 4)?;
        self.address(pl, 4)?;
        let step = self.step_of(ptr)?;
        let odd = self.b.ins().band_imm_s(step, 3);
        self.give_up_if(odd, reason::UNALIGNED);
        let flags = MemFlagsData::trusted();
        for l in 0..self.lanes {
            let at = if l == 0 {
                addr
            } else {
                let d = self.b.ins().imul_imm_s(step, i64::from(l));
                self.b.ins().iadd(addr, d)
            };
            let x = self.b.ins().load(I32, flags, at, 0);
            let x = self.b.ins().uextend(I64, x);
            self.lane = Some(l);
            self.set(dst, x)?;
        }
        Ok(true)
    }

    /// A group's store of one word per lane along a line, as [`Emitter::line_load`].
    pub(super) fn line_store(&mut self, op: &Op) -> Result<bool, String> {
        let Op::Store { ptr, src, ty } = *op else {
            return Ok(false);
        };
        if !self.on_line(ptr, ty) {
            return Ok(false);
        }
        self.lane = Some(0);
        let p0 = self.get(ptr)?;
        let addr = self.address(p0, 4 * u64::from(self.lanes))?;
        self.log_line(ptr, p0, true)?;
        let flags = MemFlagsData::trusted();
        for v in 0..self.lanes / 4 {
            let x = self.vec_get(src, v)?;
            self.b.ins().store(flags, x, addr, (16 * v) as i32);
        }
        Ok(true)
    }

    /// Logs a line's accesses, one word per lane, as one run, when the site needs it.
    fn log_line(
        &mut self,
        ptr: Slot,
        p0: cranelift_codegen::ir::Value,
        write: bool,
    ) -> Result<(), String> {
        if !self.key.races || !self.facts.logged(ptr, write) {
            return Ok(());
        }
        let site = self.next_site();
        let site = self.iconst(u64::from(site));
        let len = self.iconst(4 | u64::from(write) << 63);
        self.log_run(site, p0, len, u64::from(self.lanes))
    }
}
