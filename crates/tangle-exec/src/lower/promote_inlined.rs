//! Register promotion in the fast program ([`promote`]): Function and Private variables kept in
//! invocation memory at lowering become register slots once calls are inlined
//! (`docs/executor.md`, "Sixteenth round").
//!
//! glslang without its optimizer passes every parameter as the pointer of a Function variable
//! (`param` temporaries), and keeps module-scope globals (`uint a_offset;`) as Private
//! variables: lowering's promotion ([`super::promote`]) cannot take a variable whose pointer
//! goes to a call, and never takes Private ones. After inlining, each call's argument copy is
//! a phi copy of the variable's (constant) address into the callee's parameter slot, so a
//! forward dataflow over the inlined blocks knows, at every op, which variable and offset a
//! pointer slot holds. A variable all of whose accesses go through such known pointers — a
//! whole load or store of leaves the variable has at that offset, a constant-index access
//! chain, a copy, `UndefMemory` of the whole variable — is given slots of its own, and each
//! access becomes one slot op: a load a [`Op::Copy`] (one scalar) or an [`Op::Bitcast`] between
//! equal widths (a vector or array of one width: a copy of the run), a store the same the
//! other way, `UndefMemory` an [`Op::Undef`]. Exactness: a store under the tangle's mask is a
//! copy under that mask; slot values are held as the memory image reads them back (a
//! boolean 0 or 1, integers at their width), as [`super::promote`] relies on too; one op
//! stays one op, so a tangle takes the reference path's steps. A Private variable without
//! initializer starts undefined: its slots join [`Program::undefs`], which the wide path's
//! definite-assignment check (`wide/plan.rs`) seeds at entry. A Private variable with an
//! initializer stays in memory (the fast tiers would need its value written at start).
//!
//! Uninitialised reads stay exact by refusal: the wide path takes a program only where no
//! path may read an undefined slot before writing it (a copy counts as a read), so a load
//! that may read a never-stored byte keeps the dispatch on the reference path, which reports
//! or carries the undefined value as before (`Report::paths` says "an OpUndef value that may
//! be read").
//!
//! A Function variable indexed at run time (an access chain with a dynamic index) is held as
//! an array in slots instead, if it is of one scalar type laid out tightly and accessed an
//! element at a time: its accesses become [`ArrayOp`]s ([`crate::wide::arrays`], which says
//! how out-of-range indices and unstored elements are given back). A whole load of one such
//! variable stored straight into another, glslang's copy of an array passed by value or
//! `inout` (`copy_pairs`), becomes one array copy (the store an empty `Undef`).
//!
//! Not promoted (they stay in memory, and the fast tiers give the dispatch to the reference
//! path): a variable whose pointer is stored, compared, or merged with pointers into other
//! variables where it is used; one with a load or store of mixed widths or at an offset that
//! is not one of its leaves; a Private variable indexed at run time (its stored bits would
//! need clearing at invocation start); one larger than [`MAX_SLOTS`].

use crate::program::array::{ArrayKind, ArrayOp};
use crate::program::{Op, Program, RegionKind, Slot, Step, Terminator, TypeIdx};
use crate::run::memory::{make_pointer, split_pointer, REGION_INVOCATION};
use std::collections::HashMap;

/// The most slots a variable promoted here may take (each is a slot of every lane of the
/// fast tiers' register files).
pub const MAX_SLOTS: u32 = 256;

/// A variable that may be promoted: its place in invocation memory and its type.
#[derive(Debug, Clone, Copy)]
struct Var {
    offset: u64,
    size: u64,
    ty: TypeIdx,
    /// Its slots, once given.
    base: Slot,
    /// A Private variable (index into [`Program::variables`]).
    private: Option<usize>,
}

/// What a slot holds at one point: a pointer into one variable at a known byte offset, a
/// pointer into one variable at an offset known at run time only (a dynamic index), or a
/// pointer into one of several variables (or something else): its uses leave those in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Known(usize, u64),
    Into(usize),
    Some(Vec<usize>),
}

impl Val {
    fn vars(&self) -> Vec<usize> {
        match self {
            Val::Known(v, _) | Val::Into(v) => vec![*v],
            Val::Some(v) => v.clone(),
        }
    }

    /// The one variable a pointer points into, wherever in it.
    fn var(&self) -> Option<usize> {
        match *self {
            Val::Known(v, _) | Val::Into(v) => Some(v),
            Val::Some(_) => None,
        }
    }

    fn join(a: Option<&Val>, b: Option<&Val>) -> Option<Val> {
        match (a, b) {
            (None, None) => None,
            (Some(x), Some(y)) if x == y => Some(x.clone()),
            (Some(x), Some(y)) if x.var().is_some() && x.var() == y.var() => x.var().map(Val::Into),
            _ => {
                let mut vars: Vec<usize> = a
                    .map(Val::vars)
                    .unwrap_or_default()
                    .into_iter()
                    .chain(b.map(Val::vars).unwrap_or_default())
                    .collect();
                vars.sort_unstable();
                vars.dedup();
                Some(Val::Some(vars))
            }
        }
    }
}

type State = HashMap<Slot, Val>;

/// What becomes of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// It stays in memory.
    Escaped,
    /// Slots, every access at a known offset: slot copies.
    Whole,
    /// Slots, some access at a run-time offset: [`ArrayOp`]s.
    Array,
}

/// What the accesses of a variable need, gathered over the program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Needs {
    escaped: bool,
    /// Some access is at an offset known at run time only.
    dynamic: bool,
    /// Some access is not one element (one scalar of the element type).
    not_element: bool,
}

/// `prog` (one function: the fast program) with the variables above promoted; `source` is the
/// lowered program it was inlined from, whose functions' places name the Function variables.
/// A program this cannot analyse comes back unchanged.
pub fn promote(source: &Program, prog: Program) -> Program {
    match Promoter::new(source, &prog).and_then(|p| p.run(prog.clone())) {
        Some(out) => out,
        None => prog,
    }
}

struct Promoter<'a> {
    prog: &'a Program,
    vars: Vec<Var>,
    /// Constant slots that hold a pointer into a variable.
    consts: HashMap<Slot, (usize, u64)>,
}

/// What one op does with the pointer it reads.
#[derive(Clone, Copy)]
enum Access {
    /// A load or store of `ty` through the pointer.
    Whole { ptr: Slot, ty: TypeIdx },
    /// `UndefMemory` of `bytes` at the pointer.
    Undef { ptr: Slot, bytes: u64 },
}

/// The callback [`Promoter::step`] gives each op's access (if any) and the slots it reads
/// otherwise (a pointer among them escapes), with the state before the op.
type Seen<'s, 'a> = dyn FnMut(&Promoter<'a>, &State, Option<Access>, &[Slot]) + 's;

impl<'a> Promoter<'a> {
    fn new(source: &Program, prog: &'a Program) -> Option<Self> {
        if prog.functions.len() != 1 {
            return None;
        }
        let consts: HashMap<Slot, u64> = prog.constants.iter().copied().collect();
        let mut vars = Vec::new();
        for (i, v) in prog.variables.iter().enumerate() {
            let undefined = prog
                .undef_memory
                .iter()
                .any(|&(off, bytes, _)| off == v.offset && bytes == prog.ty(v.ty).size);
            if v.region == RegionKind::Invocation && v.builtin.is_none() && undefined {
                vars.push((v.offset, v.ty, Some(i)));
            }
        }
        for f in &source.functions {
            for &(_, place) in &f.places {
                let crate::program::Place::Pointee { slot, ty } = place else {
                    continue;
                };
                let Some(&p) = consts.get(&slot) else {
                    continue;
                };
                let (region, offset) = split_pointer(p);
                if region == REGION_INVOCATION && !vars.iter().any(|v| v.0 == offset) {
                    vars.push((offset, ty, None));
                }
            }
        }
        let vars: Vec<Var> = vars
            .into_iter()
            .map(|(offset, ty, private)| Var {
                offset,
                size: prog.ty(ty).size,
                ty,
                base: 0,
                private,
            })
            .filter(|v| {
                let leaves = prog.leaves_of(v.ty).len() as u32;
                v.size > 0 && leaves > 0 && leaves <= MAX_SLOTS
            })
            .collect();
        if vars.is_empty() {
            return None;
        }
        // Variables do not overlap (each has its own allocation); a constant pointer names
        // the one it points into.
        let mut known = HashMap::new();
        for (&slot, &p) in &consts {
            let (region, off) = split_pointer(p);
            if region != REGION_INVOCATION {
                continue;
            }
            if let Some(i) = vars
                .iter()
                .position(|v| off >= v.offset && off < v.offset.saturating_add(v.size))
            {
                known.insert(slot, (i, off - vars[i].offset));
            }
        }
        Some(Promoter {
            prog,
            vars,
            consts: known,
        })
    }

    /// The value slot `s` holds in `state`.
    fn val(&self, state: &State, s: Slot) -> Option<Val> {
        if let Some(&(v, off)) = self.consts.get(&s) {
            return Some(Val::Known(v, off));
        }
        state.get(&s).cloned()
    }

    /// The first leaf of variable `v` that a whole `ty` at byte `off` covers, where its leaves
    /// are a run of the variable's of one width (so one slot op moves them).
    fn leaves_at(&self, v: usize, off: u64, ty: TypeIdx) -> Option<(u32, u32)> {
        let var = self.vars.get(v)?;
        let all = self.prog.leaves_of(var.ty);
        let mine = self.prog.leaves_of(ty);
        let first = mine.first()?;
        let at = off.checked_add(first.offset)?;
        let k = all.iter().position(|l| l.offset == at)?;
        let run = all.get(k..k + mine.len())?;
        let same = run.iter().zip(mine).all(|(a, b)| {
            a.bytes == b.bytes
                && a.boolean == b.boolean
                && Some(a.offset) == off.checked_add(b.offset)
        });
        let one_width = mine.iter().all(|l| l.bytes == first.bytes);
        (same && (mine.len() == 1 || one_width)).then_some((k as u32, mine.len() as u32))
    }

    /// Runs the dataflow, then rewrites; `None` where the program has an op this does not
    /// know the slots of.
    fn run(mut self, mut prog: Program) -> Option<Program> {
        let entry = self.fixpoint()?;
        let func = prog.functions.first()?;
        // What each variable's accesses need: any use of a pointer into it other than the
        // ones taken leaves it in memory.
        let mut needs = vec![Needs::default(); self.vars.len()];
        let pairs = copy_pairs(self.prog);
        // The variables each copy pair joins (both held alike: in slots as arrays, or not).
        let mut joined: Vec<(usize, usize)> = Vec::new();
        for (b, block) in func.blocks.iter().enumerate() {
            let mut state = entry.get(b).cloned().flatten().unwrap_or_default();
            for (i, op) in block.ops.iter().enumerate() {
                let pair = pairs
                    .contains(&(b, i))
                    .then(|| block.ops.get(i + 1))
                    .flatten();
                if let (Op::Load { ptr, ty, .. }, Some(&Op::Store { ptr: to, .. })) = (op, pair) {
                    // The state between the two is this one: the load writes no pointer.
                    match (self.whole(&state, *ptr, *ty), self.whole(&state, to, *ty)) {
                        (Some(a), Some(b)) => joined.push((a, b)),
                        _ => {
                            let mut st = state.clone();
                            for op in [op, &block.ops[i + 1]] {
                                self.step(&mut st, op, &mut |this, st, acc, others| {
                                    this.check(st, acc, others, &mut needs);
                                })?;
                            }
                        }
                    }
                }
                if pairs.contains(&(b, i.wrapping_sub(1))) && matches!(op, Op::Store { .. }) {
                    // Checked with its load.
                    self.step(&mut state, op, &mut |_, _, _, _| {})?;
                    continue;
                }
                if pair.is_some() {
                    self.step(&mut state, op, &mut |_, _, _, _| {})?;
                    continue;
                }
                self.step(&mut state, op, &mut |this, st, acc, others| {
                    this.check(st, acc, others, &mut needs);
                })?;
            }
            self.check(&state, None, &term_reads(&block.terminator), &mut needs);
        }
        // A copy between two variables holds them alike.
        loop {
            let mut changed = false;
            for &(a, b) in &joined {
                let (Some(&x), Some(&y)) = (needs.get(a), needs.get(b)) else {
                    continue;
                };
                let both = Needs {
                    escaped: x.escaped || y.escaped,
                    dynamic: x.dynamic || y.dynamic,
                    not_element: x.not_element || y.not_element,
                };
                for v in [a, b] {
                    if let Some(n) = needs.get_mut(v) {
                        changed |= *n != both;
                        *n = both;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // An array indexed at run time: a Function variable (its `UndefMemory` at its
        // function's entry clears the stored bits) of one scalar type, accessed an element
        // at a time.
        let mut modes: Vec<Mode> = needs
            .iter()
            .zip(&self.vars)
            .enumerate()
            .map(|(i, (n, var))| match n {
                Needs { escaped: true, .. } => Mode::Escaped,
                Needs { dynamic: false, .. } => Mode::Whole,
                Needs {
                    not_element: false, ..
                } if var.private.is_none() && self.element(i).is_some() => Mode::Array,
                _ => Mode::Escaped,
            })
            .collect();
        // The two sides of a copy held differently: both stay in memory.
        while let Some(&(a, b)) = joined.iter().find(|&&(a, b)| modes.get(a) != modes.get(b)) {
            for v in [a, b] {
                if let Some(m) = modes.get_mut(v) {
                    *m = Mode::Escaped;
                }
            }
        }
        if modes.iter().all(|&m| m == Mode::Escaped) {
            return None;
        }
        let mut next = prog.slots;
        for (v, &mode) in self.vars.iter_mut().zip(&modes) {
            let n = self.prog.leaves_of(v.ty).len() as u32;
            let slots = match mode {
                Mode::Escaped => continue,
                Mode::Whole => n,
                Mode::Array => {
                    // The stored bits start undefined: the definite-assignment check wants
                    // the variable's `UndefMemory` first.
                    prog.undefs.push((next + n, n.div_ceil(64), 0));
                    n + n.div_ceil(64)
                }
            };
            v.base = next;
            next = next.checked_add(slots)?;
        }
        // The rewrite.
        let mut rewritten: Vec<Vec<Option<Op>>> = Vec::new();
        for (b, block) in func.blocks.iter().enumerate() {
            let mut state = entry.get(b).cloned().flatten().unwrap_or_default();
            let mut ops = Vec::with_capacity(block.ops.len());
            for (i, op) in block.ops.iter().enumerate() {
                let pair = pairs
                    .contains(&(b, i))
                    .then(|| block.ops.get(i + 1))
                    .flatten();
                if let (Op::Load { ptr, ty, .. }, Some(&Op::Store { ptr: to, .. })) = (op, pair) {
                    if let Some(copy) = self.copy(&state, (*ptr, to, *ty), &modes) {
                        // The load copies the elements and their stored bits; the store is
                        // then nothing (one op each still: the same steps).
                        ops.push(Some(copy));
                        ops.push(Some(Op::Undef { dst: 0, count: 0 }));
                        for op in &block.ops[i..=i + 1] {
                            self.step(&mut state, op, &mut |_, _, _, _| {})?;
                        }
                        continue;
                    }
                }
                if ops.len() > i {
                    continue;
                }
                let mut new = None;
                self.step(&mut state, op, &mut |this, st, acc, _| {
                    if let Some(acc) = acc {
                        new = this.rewrite(st, op, acc, &modes);
                    }
                })?;
                ops.push(new);
            }
            rewritten.push(ops);
        }
        let func = prog.functions.first_mut()?;
        for (block, ops) in func.blocks.iter_mut().zip(rewritten) {
            for (op, new) in block.ops.iter_mut().zip(ops) {
                if let Some(new) = new {
                    *op = new;
                }
            }
        }
        // The file's last slot stays the scratch slot the lane kernels copy an operand that
        // is also the destination to (`run::alu::exec_pure`): one more after the new ones.
        prog.slots = next.checked_add(1)?;
        // Private variables leave the program's memory: their slots start undefined.
        let mut gone = Vec::new();
        for (i, v) in self.vars.iter().enumerate() {
            if let (Some(Mode::Whole), Some(p)) = (modes.get(i), v.private) {
                let n = self.prog.leaves_of(v.ty).len() as u32;
                let at = prog
                    .undef_memory
                    .iter()
                    .find(|u| u.0 == v.offset)
                    .map_or(0, |u| u.2);
                prog.undefs.push((v.base, n, at));
                prog.undef_memory.retain(|u| u.0 != v.offset);
                gone.push(p);
            }
        }
        let mut i = 0;
        prog.variables.retain(|_| {
            i += 1;
            !gone.contains(&(i - 1))
        });
        Some(prog)
    }

    /// Notes in `needs` what `acc` (an access through a pointer) asks of its variable, and that
    /// the variables of the pointers among `others` escape.
    fn check(&self, state: &State, acc: Option<Access>, others: &[Slot], needs: &mut [Needs]) {
        let escape = |v: Option<Val>, needs: &mut [Needs]| {
            for i in v.map(|v| v.vars()).unwrap_or_default() {
                if let Some(n) = needs.get_mut(i) {
                    n.escaped = true;
                }
            }
        };
        for &s in others {
            escape(self.val(state, s), needs);
        }
        let Some(acc) = acc else {
            return;
        };
        let (ptr, ty) = match acc {
            Access::Whole { ptr, ty } => (ptr, ty),
            Access::Undef { ptr, bytes } => {
                let whole = match self.val(state, ptr) {
                    Some(Val::Known(v, 0)) => self.vars.get(v).is_some_and(|x| x.size == bytes),
                    _ => false,
                };
                if !whole {
                    escape(self.val(state, ptr), needs);
                }
                return;
            }
        };
        let val = self.val(state, ptr);
        let (v, ok) = match val {
            Some(Val::Known(v, off)) => (v, self.leaves_at(v, off, ty).is_some()),
            Some(Val::Into(v)) => (v, true),
            _ => (0, false),
        };
        if !ok {
            escape(val, needs);
            return;
        }
        if let Some(n) = needs.get_mut(v) {
            n.dynamic |= matches!(val, Some(Val::Into(_)));
            n.not_element |= self.element(v).is_none_or(|(bytes, boolean)| {
                !matches!(self.prog.leaves_of(ty), [l] if l.offset == 0 && l.bytes == bytes && l.boolean == boolean)
            });
        }
    }

    /// The variable `ptr` points at the start of, where a `ty` is all of it.
    fn whole(&self, state: &State, ptr: Slot, ty: TypeIdx) -> Option<usize> {
        let Some(Val::Known(v, 0)) = self.val(state, ptr) else {
            return None;
        };
        let var = self.vars.get(v)?;
        let all = self.prog.leaves_of(var.ty);
        (self.prog.leaves_of(ty) == all && self.leaves_at(v, 0, ty).is_some()).then_some(v)
    }

    /// The copy a pair's load becomes where both variables are arrays in slots.
    fn copy(
        &self,
        state: &State,
        (from, to, ty): (Slot, Slot, TypeIdx),
        modes: &[Mode],
    ) -> Option<Op> {
        let (a, b) = (self.whole(state, from, ty)?, self.whole(state, to, ty)?);
        if modes.get(a) != Some(&Mode::Array) || modes.get(b) != Some(&Mode::Array) {
            return None;
        }
        let (src, dst) = (self.vars.get(a)?, self.vars.get(b)?);
        let (bytes, _) = self.element(a)?;
        Some(Op::Array(Box::new(ArrayOp {
            kind: ArrayKind::Copy,
            value: dst.base,
            ptr: 0,
            origin: make_pointer(REGION_INVOCATION, src.offset),
            unit: u64::from(bytes),
            base: src.base,
            count: self.prog.leaves_of(src.ty).len() as u32,
        })))
    }

    /// The element of variable `v` if it is an array of one scalar type laid out tightly
    /// (leaf `k` at byte `k × bytes`): its bytes and whether it is a boolean.
    fn element(&self, v: usize) -> Option<(u32, bool)> {
        let leaves = self.prog.leaves_of(self.vars.get(v)?.ty);
        let first = leaves.first()?;
        leaves
            .iter()
            .enumerate()
            .all(|(k, l)| {
                l.bytes == first.bytes
                    && l.boolean == first.boolean
                    && l.offset == k as u64 * u64::from(first.bytes)
            })
            .then_some((first.bytes, first.boolean))
    }

    /// The slot op an access of a promoted variable becomes.
    fn rewrite(&self, state: &State, op: &Op, acc: Access, modes: &[Mode]) -> Option<Op> {
        let ptr = match acc {
            Access::Whole { ptr, .. } | Access::Undef { ptr, .. } => ptr,
        };
        let val = self.val(state, ptr)?;
        let v = val.var()?;
        let var = self.vars.get(v)?;
        match modes.get(v)? {
            Mode::Escaped => None,
            Mode::Array => {
                let (bytes, _) = self.element(v)?;
                let count = self.prog.leaves_of(var.ty).len() as u32;
                let (kind, value) = match *op {
                    Op::Load { dst, .. } => (ArrayKind::Load, dst),
                    Op::Store { src, .. } => (ArrayKind::Store, src),
                    Op::UndefMemory { .. } => (ArrayKind::Undef, 0),
                    _ => return None,
                };
                Some(Op::Array(Box::new(ArrayOp {
                    kind,
                    value,
                    ptr,
                    origin: make_pointer(REGION_INVOCATION, var.offset),
                    unit: u64::from(bytes),
                    base: var.base,
                    count,
                })))
            }
            Mode::Whole => {
                let Val::Known(_, off) = val else {
                    return None;
                };
                let run = |ty: TypeIdx| -> Option<(Slot, u32, u32)> {
                    let (k, n) = self.leaves_at(v, off, ty)?;
                    let bits = self.prog.leaves_of(ty).first()?.bytes * 8;
                    Some((var.base + k, n, bits))
                };
                let copy = |dst: Slot, src: Slot, n: u32, bits: u32| {
                    if n == 1 {
                        Op::Copy { dst, src }
                    } else {
                        Op::Bitcast {
                            dst,
                            dst_count: n,
                            dst_bits: bits,
                            src,
                            src_count: n,
                            src_bits: bits,
                        }
                    }
                };
                match *op {
                    Op::Load { dst, ty, .. } => {
                        let (at, n, bits) = run(ty)?;
                        Some(copy(dst, at, n, bits))
                    }
                    Op::Store { src, ty, .. } => {
                        let (at, n, bits) = run(ty)?;
                        Some(copy(at, src, n, bits))
                    }
                    Op::UndefMemory { .. } => Some(Op::Undef {
                        dst: var.base,
                        count: self.prog.leaves_of(var.ty).len() as u32,
                    }),
                    _ => None,
                }
            }
        }
    }

    /// The pointer values at each block's entry (`None`: not reached), to a fixpoint.
    fn fixpoint(&self) -> Option<Vec<Option<State>>> {
        let func = self.prog.functions.first()?;
        let blocks = &func.blocks;
        let mut entry: Vec<Option<State>> = vec![None; blocks.len()];
        *entry.get_mut(0)? = Some(State::new());
        let mut work = vec![0usize];
        // Entry states only grow (a known pointer to a set of variables, sets to larger ones),
        // so this ends; the bound keeps it obviously so.
        let mut budget = blocks.len().saturating_mul(64).max(4096);
        while let Some(b) = work.pop() {
            budget = budget.checked_sub(1)?;
            let (Some(block), Some(Some(state))) = (blocks.get(b), entry.get(b)) else {
                continue;
            };
            let mut state = state.clone();
            for op in &block.ops {
                self.step(&mut state, op, &mut |_, _, _, _| {})?;
            }
            for t in block.terminator.successors() {
                let Some(target) = blocks.get(t as usize) else {
                    continue;
                };
                let mut out = state.clone();
                if let Some((_, copies)) = target.phis.iter().find(|(p, _)| *p as usize == b) {
                    let vals: Vec<Option<Val>> = copies
                        .iter()
                        .map(|&(_, src)| self.val(&state, src))
                        .collect();
                    for (&(dst, _), v) in copies.iter().zip(vals) {
                        match v {
                            Some(v) => out.insert(dst, v),
                            None => out.remove(&dst),
                        };
                    }
                }
                let slot = entry.get_mut(t as usize)?;
                let grown = match slot {
                    None => {
                        *slot = Some(out);
                        true
                    }
                    Some(old) => {
                        let mut changed = false;
                        let keys: Vec<Slot> = old.keys().chain(out.keys()).copied().collect();
                        for k in keys {
                            let j = Val::join(old.get(&k), out.get(&k));
                            if j.as_ref() != old.get(&k) {
                                changed = true;
                                if let Some(j) = j {
                                    old.insert(k, j);
                                }
                            }
                        }
                        changed
                    }
                };
                if grown {
                    work.push(t as usize);
                }
            }
        }
        Some(entry)
    }

    /// Applies `op` to `state`, first calling `seen` with the state before it, the op's access
    /// (a load, store or `UndefMemory`) and the slots it reads otherwise, whose pointers escape
    /// (a copy and a constant-index access chain of a known pointer read none that way).
    /// `None` for an op this does not know the slots of.
    fn step(&self, state: &mut State, op: &Op, seen: &mut Seen<'_, 'a>) -> Option<()> {
        match *op {
            Op::Copy { dst, src } => {
                match self.val(state, src) {
                    Some(v) => state.insert(dst, v),
                    None => state.remove(&dst),
                };
            }
            Op::AccessChain {
                dst,
                base,
                ref steps,
            } => {
                let dynamic: Vec<Slot> = steps
                    .iter()
                    .filter_map(|s| match *s {
                        Step::Dyn { index, .. } => Some(index),
                        Step::Const(_) => None,
                    })
                    .collect();
                let val = self.val(state, base);
                let out = match (&val, dynamic.is_empty()) {
                    (Some(Val::Known(v, off)), true) => {
                        let delta = steps.iter().fold(0u64, |a, s| match *s {
                            Step::Const(c) => a.wrapping_add(c),
                            Step::Dyn { .. } => a,
                        });
                        Some(Val::Known(*v, off.wrapping_add(delta)))
                    }
                    // A dynamic index (the chain's own check reports one out of its array).
                    (Some(Val::Known(v, _) | Val::Into(v)), _) => {
                        seen(self, state, None, &dynamic);
                        Some(Val::Into(*v))
                    }
                    _ => {
                        // A pointer not known here: its variables escape.
                        let mut reads = dynamic;
                        reads.push(base);
                        seen(self, state, None, &reads);
                        None
                    }
                };
                match out {
                    Some(v) => state.insert(dst, v),
                    None => state.remove(&dst),
                };
            }
            Op::Load { dst, ptr, ty } => {
                seen(self, state, Some(Access::Whole { ptr, ty }), &[]);
                state.remove(&dst);
            }
            Op::Store { ptr, src, ty } => {
                seen(self, state, Some(Access::Whole { ptr, ty }), &[src]);
            }
            Op::UndefMemory { ptr, bytes } => {
                seen(self, state, Some(Access::Undef { ptr, bytes }), &[]);
            }
            Op::InsertDynamic {
                dst,
                count,
                value,
                index,
                ..
            } => {
                seen(self, state, None, &[value, index]);
                for s in dst..dst.saturating_add(count) {
                    state.remove(&s);
                }
            }
            ref other => {
                let (writes, reads) = crate::wide::slots_of(other)?;
                seen(self, state, None, &reads);
                for w in writes {
                    state.remove(&w);
                }
            }
        }
        Some(())
    }
}

/// The slots a terminator reads.
fn term_reads(t: &Terminator) -> Vec<Slot> {
    match *t {
        Terminator::BranchConditional { cond, .. } => vec![cond],
        Terminator::Switch { selector, .. } => vec![selector],
        Terminator::ReturnValue { src, count } => (src..src.saturating_add(count)).collect(),
        _ => Vec::new(),
    }
}

/// The copies between variables, as glslang makes them for an array passed by value or
/// `inout` (`param = temp; f(param); temp = param;`): a whole load whose value only the store
/// right after it reads (a function inlined twice has its slots twice, so every read of those
/// slots must be such a store). Their positions (block, the load's op).
fn copy_pairs(prog: &Program) -> std::collections::HashSet<(usize, usize)> {
    let mut out = std::collections::HashSet::new();
    let Some(func) = prog.functions.first() else {
        return out;
    };
    let is_pair = |pair: &[Op]| match pair {
        [Op::Load { dst, ty, .. }, Op::Store { src, ty: t2, .. }] => {
            src == dst && ty == t2 && prog.ty(*ty).slots > 1
        }
        _ => false,
    };
    // The slots read other than by such a store (a store's value is all its slots).
    let mut read_elsewhere: std::collections::HashSet<Slot> = std::collections::HashSet::new();
    for block in &func.blocks {
        for (i, op) in block.ops.iter().enumerate() {
            let paired = i > 0 && block.ops.get(i - 1..=i).is_some_and(is_pair);
            match *op {
                Op::Store { ptr, src, ty } => {
                    read_elsewhere.insert(ptr);
                    if !paired {
                        read_elsewhere.extend(src..src.saturating_add(prog.ty(ty).slots));
                    }
                }
                Op::UndefMemory { ptr, .. } => {
                    read_elsewhere.insert(ptr);
                }
                ref op => match crate::wide::slots_of(op) {
                    Some((_, r)) => read_elsewhere.extend(r),
                    // An op whose reads are not known: no pair.
                    None => return out,
                },
            }
        }
        for (_, copies) in &block.phis {
            read_elsewhere.extend(copies.iter().map(|&(_, src)| src));
        }
        read_elsewhere.extend(term_reads(&block.terminator));
    }
    for (b, block) in func.blocks.iter().enumerate() {
        for (i, pair) in block.ops.windows(2).enumerate() {
            if let [Op::Load { dst, ty, .. }, _] = pair {
                let n = prog.ty(*ty).slots;
                if is_pair(pair) && !(*dst..dst + n).any(|s| read_elsewhere.contains(&s)) {
                    out.insert((b, i));
                }
            }
        }
    }
    out
}
