//! Cooperative matrices on the native tier: a lockstep group is one whole subgroup
//! ([`super::lockstep::subgroups_taken`]), so a matrix value, which is held once per subgroup,
//! is held once per group, as a *tile* (its elements in row-major order) in a per-worker tile
//! store ([`super::tiles::Tiles`]), never in the lanes' registers.
//!
//! [`plan`] takes a program only when every matrix is touched solely by whole-matrix ops:
//! `OpCooperativeMatrixLoadKHR`, `StoreKHR`, `MulAddKHR`, a run of `Copy` ops moving one
//! matrix whole to another (how glslang assigns a matrix variable), or from a splat constant
//! (`coopmat<float, ...>(0.0)`), and `OpUndef` (a declaration). Any other op touching a matrix's
//! slots (composite access, element-wise ops, conversions, a phi) leaves the program to the
//! wide path, which holds matrices per lane where it must. A copy whose source was just
//! written, by a load or a MulAdd, and nothing touches its destination in between, is folded
//! into that op ([`fold_move`]): a GEMM's accumulator stays in its tile. Each of the other ops
//! is one call of [`super::native::coopmat_op`] (or of a fast form's own entry, [`Fast`])
//! with the group's Pointer and Stride, which must be shared
//! slots or equal in every lane (checked at run time; the dispatch is given back otherwise);
//! the `Active` check always holds in lockstep (the group is the whole subgroup, every lane
//! active). Reached outside lockstep (the group's lanes parted) an op gives the dispatch back
//! to the wide interpreter, as a subgroup operation does ([`super::compile::reason::GROUP`]).
//!
//! The tiles themselves, typed where that pays, and the ops on them are [`super::tiles`].

use super::compile::{reason, Emitter};
use crate::program::{Function, Op, Program, Slot};
use crate::run::coopmat::{Access, CoopmatInst};
use crate::semantics::coopmat_types::{Component, MulAddTypes};
use cranelift_codegen::ir::InstBuilder;
use std::collections::HashMap;

/// A register range holding matrix values, and its tile's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    first: Slot,
    length: u32,
    rows: u32,
    cols: u32,
}

/// The typed form a load decodes a range's elements into (a hint: any form is exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Val {
    /// binary32 values.
    F32,
    /// binary16 values widened to binary32 (what a MulAdd reads of them).
    F16,
}

/// One tile op of a compiled program, by the index the compiled code passes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TileOp {
    /// A load into range `dst`.
    Load { dst: usize, at: Access },
    /// A store from range `src`.
    Store { src: usize, at: Access },
    /// `dst` = `a` × `b` + `c`.
    MulAdd {
        dst: usize,
        a: usize,
        b: usize,
        c: usize,
        types: MulAddTypes,
        dims: (usize, usize, usize),
    },
    /// Range `dst` ← range `src`, whole.
    Copy { dst: usize, src: usize },
    /// The same, where nothing reads `src` again before it is written: the tiles are
    /// swapped (`src` then holds a stale value, which nothing reads).
    Move { dst: usize, src: usize },
    /// Every element of range `dst` ← `bits` (a splat constant).
    Splat { dst: usize, bits: u64 },
}

/// What a tile op's own entry ([`super::native::coopmat_load`],
/// [`super::native::coopmat_mul_add`]) runs without the general dispatch
/// ([`super::tiles::Tiles::run`]), decided when the program is compiled; where the op is not
/// one of these, or a check at run time fails, the general dispatch runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fast {
    /// A row-major load of binary16 elements into range `dst`, which a MulAdd reads as f16:
    /// the rows widened straight into the tile's values, the loaded words kept too when
    /// `words` (something may read the tile's bits: a store, a copy, another kind of MulAdd;
    /// [`bits_read`]).
    F16Rows { dst: usize, words: bool },
    /// The f16 × f16 + f32 → f32 MulAdd of 16 × 16 × 16 tiles accumulating in C's own tile
    /// `acc` (its destination, after a fold: [`fold_move`]).
    MulAdd16 { acc: usize, a: usize, b: usize },
    /// Neither.
    General,
}

/// What the compiled code does at one op of a program it takes with matrices.
#[derive(Debug, Clone)]
enum Action {
    /// A tile op, with the Pointer and Stride slots of a load or store.
    Tile(TileOp, Option<(Slot, Slot)>),
    /// Nothing: the `Active` check (it holds in lockstep), an `OpUndef`, a copy folded into
    /// the one before.
    Nothing,
    /// The `Uniform` check of a slot: equal in every lane, else give back.
    Uniform(Slot),
}

/// The tile ranges of a program and the action at each op touching them.
#[derive(Debug, Default)]
pub(super) struct CoopPlan {
    ranges: Vec<Range>,
    hints: Vec<Option<Val>>,
    /// Ranges no op writes, which hold a constant splat throughout: (range, bits).
    splats: Vec<(usize, u64)>,
    actions: HashMap<(u32, u32), Action>,
    /// The tile ops emitted so far ([`Compiled::coop`](super::compile::Compiled)).
    pub(super) ops: Vec<TileOp>,
}

/// The tile store's shape and ops, as the compiled code names them.
#[derive(Debug, Default)]
pub(crate) struct TileProgram {
    /// Elements of each range's tile.
    pub(super) sizes: Vec<usize>,
    /// The typed form a load into each range decodes into.
    pub(super) hints: Vec<Option<Val>>,
    /// Ranges that hold a constant splat throughout (no op writes them).
    pub(super) splats: Vec<(usize, u64)>,
    pub(super) ops: Vec<TileOp>,
    /// Each op's fast form.
    pub(super) fast: Vec<Fast>,
}

impl CoopPlan {
    /// The program the workers' tile stores run.
    pub(super) fn program(&mut self) -> TileProgram {
        let ops = std::mem::take(&mut self.ops);
        TileProgram {
            sizes: (self.ranges.iter())
                .map(|r| r.rows as usize * r.cols as usize)
                .collect(),
            hints: self.hints.clone(),
            splats: self.splats.clone(),
            fast: fast_forms(&ops, &self.hints),
            ops,
        }
    }

    /// The fast form [`fast_forms`] gives op `op` (the compiled code calls its own entry for
    /// one).
    pub(super) fn fast_of(&self, op: &TileOp) -> Fast {
        fast_form(op, &self.hints, &[])
    }
}

/// Each op's fast form ([`Fast`]).
fn fast_forms(ops: &[TileOp], hints: &[Option<Val>]) -> Vec<Fast> {
    let read = bits_read(ops, hints.len());
    ops.iter().map(|op| fast_form(op, hints, &read)).collect()
}

/// Op `op`'s fast form; `read` says which ranges' bits may be read (a range it does not
/// cover is taken as read).
fn fast_form(op: &TileOp, hints: &[Option<Val>], read: &[bool]) -> Fast {
    match *op {
        TileOp::Load { dst, at }
            if hints.get(dst) == Some(&Some(Val::F16))
                && at.shape.bytes == 2
                && !at.column_major =>
        {
            Fast::F16Rows {
                dst,
                words: read.get(dst).copied().unwrap_or(true),
            }
        }
        TileOp::MulAdd {
            dst,
            a,
            b,
            c,
            types,
            dims: (16, 16, 16),
        } if types == crate::run::coopmat_dense::F16_F32
            && dst == c
            && a != c
            && b != c
            && a != b =>
        {
            Fast::MulAdd16 { acc: c, a, b }
        }
        _ => Fast::General,
    }
}

/// Which of `ranges` ranges may have their bits read: those a store reads, any operand of a
/// MulAdd other than f16 × f16 + f32 → f32 and the C of that one, and (until nothing changes)
/// the source of a copy or move whose destination's bits may be read (a move carries the
/// tile itself to its destination). An f16 × f16 + f32 MulAdd reads A's and B's values alone,
/// so a tile only such MulAdds read needs no words ([`Fast::F16Rows`]).
fn bits_read(ops: &[TileOp], ranges: usize) -> Vec<bool> {
    let mut read = vec![false; ranges];
    let mark = |r: usize, read: &mut Vec<bool>| {
        if let Some(x) = read.get_mut(r) {
            *x = true;
        }
    };
    for op in ops {
        match *op {
            TileOp::Store { src, .. } => mark(src, &mut read),
            TileOp::MulAdd { a, b, c, types, .. } => {
                if types != crate::run::coopmat_dense::F16_F32 {
                    mark(a, &mut read);
                    mark(b, &mut read);
                }
                mark(c, &mut read);
            }
            _ => {}
        }
    }
    // Each round marks at least one more source, or stops.
    for _ in 0..=ops.len() {
        let mut changed = false;
        for op in ops {
            if let TileOp::Copy { dst, src } | TileOp::Move { dst, src } = *op {
                if read.get(dst) == Some(&true) && read.get(src) == Some(&false) {
                    mark(src, &mut read);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    read
}

/// The plan of `func` (the entry of `prog`), or why the native tier leaves it to the wide path.
pub(super) fn plan(prog: &Program, func: &Function) -> Result<CoopPlan, String> {
    let refuse = |what: &str| Err(format!("a cooperative matrix {what}"));
    let mut ranges: Vec<Range> = Vec::new();
    for op in func.blocks.iter().flat_map(|b| &b.ops) {
        let Op::Coopmat(c) = op else { continue };
        for (first, rows, cols, length) in c.matrix_operands() {
            if length == 0 || rows == 0 || cols == 0 {
                return refuse("of no elements");
            }
            ranges.push(Range {
                first,
                length,
                rows,
                cols,
            });
        }
    }
    // The destinations of whole copies of them (a matrix variable assigned and not used
    // otherwise) are ranges too: each round adds at least one, or stops.
    let whole_copy = |ops: &[Op], j: usize, dst: Slot, src: Slot, n: u32| {
        (0..n).all(|i| {
            ops.get(j + i as usize)
                == Some(&Op::Copy {
                    dst: dst + i,
                    src: src + i,
                })
        })
    };
    for _ in 0..func.blocks.iter().map(|b| b.ops.len()).sum::<usize>() {
        let covered = |s: Slot, ranges: &[Range]| {
            ranges
                .iter()
                .any(|r| (r.first..r.first.saturating_add(r.length)).contains(&s))
        };
        let mut added = false;
        for block in &func.blocks {
            for (j, op) in block.ops.iter().enumerate() {
                let &Op::Copy { dst, src } = op else { continue };
                let Some(r) = ranges.iter().find(|r| r.first == src).copied() else {
                    continue;
                };
                if !covered(dst, &ranges) && whole_copy(&block.ops, j, dst, src, r.length) {
                    ranges.push(Range { first: dst, ..r });
                    added = true;
                }
            }
        }
        if !added {
            break;
        }
    }
    ranges.sort_by_key(|r| (r.first, r.length, r.rows, r.cols));
    ranges.dedup();
    if ranges
        .windows(2)
        .any(|w| w[0].first.saturating_add(w[0].length) > w[1].first)
    {
        return refuse("whose slots overlap another's");
    }
    let mut range_of = vec![usize::MAX; prog.slots as usize];
    for (i, r) in ranges.iter().enumerate() {
        for s in r.first..r.first.saturating_add(r.length) {
            *range_of
                .get_mut(s as usize)
                .ok_or("a matrix outside the register file")? = i;
        }
    }
    let of = |s: Slot| {
        range_of
            .get(s as usize)
            .copied()
            .filter(|&r| r != usize::MAX)
    };
    let first_of = |s: Slot| of(s).filter(|&r| ranges.get(r).map(|r| r.first) == Some(s));
    let consts: HashMap<Slot, u64> = prog.constants.iter().copied().collect();
    let mut hints: Vec<Option<Val>> = vec![None; ranges.len()];
    let mut copies = Vec::new();
    let mut actions = HashMap::new();
    for (bi, block) in func.blocks.iter().enumerate() {
        if block
            .phis
            .iter()
            .flat_map(|(_, c)| c)
            .any(|&(d, s)| of(d).is_some() || of(s).is_some())
        {
            return refuse("in a phi");
        }
        let mut j = 0;
        while let Some(op) = block.ops.get(j) {
            let at = (bi as u32, j as u32);
            let (writes, reads) =
                super::facts::op_slots(prog, op).ok_or("an op the native tier lacks")?;
            let touches = writes.iter().chain(&reads).any(|&s| of(s).is_some());
            let action = match op {
                Op::Coopmat(c) => coopmat_action(c, &first_of, &of, &mut hints)?,
                Op::Undef { .. } => Action::Nothing,
                &Op::Copy { dst, src } if first_of(dst).is_some() => {
                    let d = first_of(dst).ok_or("a range")?;
                    let r = *ranges.get(d).ok_or("a range")?;
                    if !whole_copy(&block.ops, j, dst, src, r.length) {
                        return refuse("copied in part");
                    }
                    let splat = (0..r.length).map(|i| consts.get(&(src + i)).copied());
                    let splat: Option<Vec<u64>> = splat.collect();
                    let op = match (first_of(src), splat) {
                        (Some(s), _)
                            if ranges.get(s).map(|x| (x.length, x.rows, x.cols))
                                == Some((r.length, r.rows, r.cols)) =>
                        {
                            copies.push((d, s));
                            TileOp::Copy { dst: d, src: s }
                        }
                        // A constant matrix: the same value in every slot of every lane is
                        // every element that value (constants are broadcast to all lanes).
                        (None, Some(v)) if v.windows(2).all(|w| w[0] == w[1]) => TileOp::Splat {
                            dst: d,
                            bits: v.first().copied().unwrap_or(0),
                        },
                        _ => return refuse("copied from something else"),
                    };
                    for i in 1..r.length {
                        actions.insert((at.0, at.1 + i), Action::Nothing);
                    }
                    actions.insert(at, Action::Tile(op, None));
                    j += r.length as usize;
                    continue;
                }
                _ if touches => return refuse("touched by an element-wise op or composite access"),
                _ => {
                    j += 1;
                    continue;
                }
            };
            actions.insert(at, action);
            j += 1;
        }
        let read = match block.terminator {
            crate::program::Terminator::BranchConditional { cond, .. } => Some(cond),
            crate::program::Terminator::Switch { selector, .. } => Some(selector),
            _ => None,
        };
        if read.and_then(of).is_some() {
            return refuse("read by a branch");
        }
    }
    let written = moves(&mut actions, ranges.len());
    // A range no op writes is read as it starts: a constant's slots (an operand such as
    // `CI(7)`), the same value in each, are that splat; anything else is not taken.
    let mut splats = Vec::new();
    for (i, r) in ranges.iter().enumerate() {
        if written.get(i).copied().unwrap_or(true) {
            continue;
        }
        let v: Option<Vec<u64>> = (r.first..r.first.saturating_add(r.length))
            .map(|s| consts.get(&s).copied())
            .collect();
        match v {
            Some(v) if v.windows(2).all(|w| w[0] == w[1]) => {
                splats.push((i, v.first().copied().unwrap_or(0)));
            }
            _ => return refuse("read but never written"),
        }
    }
    // A copy's two ends take each other's hint (the loaded tile of a GEMM is copied into the
    // variable the MulAdd reads).
    for _ in 0..=copies.len() {
        let mut changed = false;
        for &(d, s) in &copies {
            for (x, y) in [(d, s), (s, d)] {
                if let (Some(None), Some(&Some(h))) = (hints.get(x), hints.get(y)) {
                    hints[x] = Some(h);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    Ok(CoopPlan {
        ranges,
        hints,
        splats,
        actions,
        ops: Vec::new(),
    })
}

/// The range a tile op writes, and those it reads.
fn op_ranges(op: &TileOp) -> (Option<usize>, Vec<usize>) {
    match *op {
        TileOp::Load { dst, .. } | TileOp::Splat { dst, .. } => (Some(dst), Vec::new()),
        TileOp::Store { src, .. } => (None, vec![src]),
        TileOp::MulAdd { dst, a, b, c, .. } => (Some(dst), vec![a, b, c]),
        TileOp::Copy { dst, src } | TileOp::Move { dst, src } => (Some(dst), vec![src]),
    }
}

/// Each range's writers and readers: the places of the tile ops writing and reading it.
type Places = Vec<Vec<(u32, u32)>>;

fn writers_and_readers(actions: &HashMap<(u32, u32), Action>, ranges: usize) -> (Places, Places) {
    let (mut writers, mut readers) = (vec![Vec::new(); ranges], vec![Vec::new(); ranges]);
    for (&at, action) in actions {
        let Action::Tile(op, _) = action else {
            continue;
        };
        let (w, r) = op_ranges(op);
        if let Some(x) = w.and_then(|w| writers.get_mut(w)) {
            x.push(at);
        }
        for r in r {
            if let Some(x) = readers.get_mut(r) {
                x.push(at);
            }
        }
    }
    (writers, readers)
}

/// Turns into [`TileOp::Move`] each copy whose source range is read by it alone and written
/// by one op alone, earlier in the same block: each time the copy runs, the source was just
/// written, and nothing reads it after. Then folds such a move into that writer where it can
/// ([`fold_move`]). Returns which ranges some op writes (before the folds: a range whose
/// writer now writes the move's destination is read by nothing either).
fn moves(actions: &mut HashMap<(u32, u32), Action>, ranges: usize) -> Vec<bool> {
    let (writers, readers) = writers_and_readers(actions, ranges);
    for (&at, action) in actions.iter_mut() {
        let Action::Tile(op @ TileOp::Copy { .. }, _) = action else {
            continue;
        };
        let TileOp::Copy { dst, src } = *op else {
            continue;
        };
        let alone = readers.get(src).is_some_and(|r| r[..] == [at]);
        let written = writers
            .get(src)
            .is_some_and(|w| matches!(w[..], [(b, j)] if b == at.0 && j < at.1));
        if dst != src && alone && written {
            *op = TileOp::Move { dst, src };
        }
    }
    let written = writers.iter().map(|w| !w.is_empty()).collect();
    // Each fold takes one move away: at most as many rounds as there are actions.
    for _ in 0..actions.len() {
        if !fold_move(actions, ranges) {
            break;
        }
    }
    written
}

/// Folds one [`TileOp::Move`] into the op that writes its source: that op writes the move's
/// destination instead, and the move does nothing (a GEMM's `acc = coopMatMulAdd(a, b, acc)`
/// then accumulates in `acc`'s own tile, and a load decodes into the variable's tile: no call
/// and no swap a copy). Only where nothing touches the destination between the two (the writer
/// is the source's only one, earlier in the same block, and the source's only reader is the
/// move, [`moves`]), so every op sees the values it saw before; and only for a load, a splat,
/// or a MulAdd that does not read the destination as A or B (it may as C: the kernel reads
/// each element of C before it writes it). `false` where none folds.
fn fold_move(actions: &mut HashMap<(u32, u32), Action>, ranges: usize) -> bool {
    let (writers, _) = writers_and_readers(actions, ranges);
    let touches = |op: &TileOp, r: usize| {
        let (w, rs) = op_ranges(op);
        w == Some(r) || rs.contains(&r)
    };
    // In program order, so that the compiled code does not depend on the map's order.
    let mut moves: Vec<((u32, u32), usize, usize)> = (actions.iter())
        .filter_map(|(&at, action)| match *action {
            Action::Tile(TileOp::Move { dst, src }, _) => Some((at, dst, src)),
            _ => None,
        })
        .collect();
    moves.sort_unstable();
    let mut found = None;
    for ((block, j), dst, src) in moves {
        let Some(&[(wb, wj)]) = writers.get(src).map(Vec::as_slice) else {
            continue;
        };
        let Some(Action::Tile(writer, _)) = actions.get(&(wb, wj)) else {
            continue;
        };
        let foldable = match *writer {
            TileOp::Load { .. } | TileOp::Splat { .. } => true,
            TileOp::MulAdd { a, b, .. } => dst != a && dst != b,
            _ => false,
        };
        let between_clear = (wj + 1..j).all(|k| match actions.get(&(block, k)) {
            Some(Action::Tile(op, _)) => !touches(op, dst),
            _ => true,
        });
        if wb == block && wj < j && foldable && between_clear {
            found = Some(((wb, wj), (block, j), dst));
            break;
        }
    }
    let Some((writer, mv, dst)) = found else {
        return false;
    };
    if let Some(Action::Tile(op, _)) = actions.get_mut(&writer) {
        match op {
            TileOp::Load { dst: d, .. }
            | TileOp::Splat { dst: d, .. }
            | TileOp::MulAdd { dst: d, .. } => *d = dst,
            _ => return false,
        }
    }
    actions.insert(mv, Action::Nothing);
    true
}

/// The action of cooperative-matrix op `c`; notes the typed form its MulAdd operands want.
fn coopmat_action(
    c: &CoopmatInst,
    first_of: &dyn Fn(Slot) -> Option<usize>,
    of: &dyn Fn(Slot) -> Option<usize>,
    hints: &mut [Option<Val>],
) -> Result<Action, String> {
    let range = |s: Slot| first_of(s).ok_or_else(|| "a matrix operand outside a range".to_string());
    let scalar = |s: Slot| match of(s) {
        Some(_) => Err("a matrix's slot as a scalar operand".to_string()),
        None => Ok(s),
    };
    Ok(match *c {
        CoopmatInst::Active => Action::Nothing,
        CoopmatInst::Uniform { slot, .. } => Action::Uniform(scalar(slot)?),
        CoopmatInst::Load { dst, at } => Action::Tile(
            TileOp::Load {
                dst: range(dst)?,
                at,
            },
            Some((scalar(at.ptr)?, scalar(at.stride.slot)?)),
        ),
        CoopmatInst::Store { src, at } => Action::Tile(
            TileOp::Store {
                src: range(src)?,
                at,
            },
            Some((scalar(at.ptr)?, scalar(at.stride.slot)?)),
        ),
        CoopmatInst::MulAdd {
            dst,
            a,
            b,
            c,
            types,
            m,
            n,
            k,
            ..
        } => {
            let [dst, a, b, c] = [range(dst)?, range(a)?, range(b)?, range(c)?];
            let val = |t: Component| match t {
                Component::Float(16) => Some(Val::F16),
                Component::Float(32) => Some(Val::F32),
                _ => None,
            };
            for (r, t) in [
                (a, types.a),
                (b, types.b),
                (c, types.c),
                (dst, types.result),
            ] {
                if let Some(h) = hints.get_mut(r) {
                    *h = h.or(val(t));
                }
            }
            Action::Tile(
                TileOp::MulAdd {
                    dst,
                    a,
                    b,
                    c,
                    types,
                    dims: (m as usize, n as usize, k as usize),
                },
                None,
            )
        }
        CoopmatInst::CheckDivision { .. } | CoopmatInst::Owned { .. } => {
            return Err("a cooperative matrix's element-wise op".into())
        }
    })
}

impl Emitter<'_> {
    /// Emits `op` if the tile plan has an action for it (in lockstep: the action; outside, a
    /// give-back to the wide interpreter); says whether it did.
    pub(super) fn coop_op(&mut self, op: &Op) -> Result<bool, String> {
        let Some(action) = self
            .coop
            .as_ref()
            .and_then(|p| p.actions.get(&self.at))
            .cloned()
        else {
            return match op {
                Op::Coopmat(_) => Err("a cooperative-matrix op outside the tile plan".into()),
                _ => Ok(false),
            };
        };
        if self.lane.is_none() {
            if matches!(action, Action::Nothing) && matches!(op, Op::Undef { .. }) {
                return Ok(true);
            }
            // The group's lanes parted before it: the wide interpreter runs the dispatch.
            self.gives_up_always();
            let code =
                self.iconst(reason::GROUP | u64::from(self.at.0) << 8 | u64::from(self.at.1) << 32);
            let cont = self.b.create_block();
            let giveup = self.giveup;
            self.b
                .ins()
                .jump(giveup, &[cranelift_codegen::ir::BlockArg::Value(code)]);
            self.enter(cont);
            return Ok(true);
        }
        match action {
            Action::Nothing => {}
            Action::Uniform(s) => {
                self.uniform(s)?;
            }
            Action::Tile(op, scalars) => {
                let (ptr, stride) = match scalars {
                    Some((p, s)) => (Some(p), Some(s)),
                    None => (None, None),
                };
                // Logged where the lockstep code would log the same pointer's accesses.
                let write = matches!(op, TileOp::Store { .. });
                let on = self.key.races && ptr.is_some_and(|p| self.facts.logged(p, write));
                let logged = on && matches!(op, TileOp::Load { .. } | TileOp::Store { .. });
                if logged {
                    // A site of its own, so that the dispatch keeps a log at all (the helper
                    // logs into its closed runs directly).
                    self.sites += 1;
                }
                let zero = self.iconst(0);
                let p = match ptr {
                    Some(s) => self.uniform(s)?,
                    None => zero,
                };
                let st = match stride {
                    Some(s) => self.uniform(s)?,
                    None => zero,
                };
                let (tiles, log) = {
                    let v = self.vals()?;
                    (v.tiles, v.log)
                };
                let log = if logged { log } else { zero };
                let plan = self.coop.as_mut().ok_or("no tile plan")?;
                let index = plan.ops.len() as u64;
                let fast = plan.fast_of(&op);
                plan.ops.push(op);
                let index = self.iconst(index);
                // A fast form has its own entry (an unlogged load, a MulAdd); the rest the
                // general one.
                let bad = match fast {
                    Fast::F16Rows { .. } if !logged => self.call(
                        super::native::coopmat_load as *const (),
                        &[tiles, index, p, st],
                    ),
                    Fast::MulAdd16 { .. } => {
                        self.call(super::native::coopmat_mul_add as *const (), &[tiles, index])
                    }
                    _ => {
                        let g = self.use_var(self.g);
                        self.call(
                            super::native::coopmat_op as *const (),
                            &[tiles, log, index, p, st, g],
                        )
                    }
                };
                self.give_up_if(bad, reason::COOPMAT);
            }
        }
        Ok(true)
    }

    /// The value of slot `s` for a group in lockstep, which must be the same in every lane
    /// (a shared slot is; any other is compared, and the dispatch given back if it differs).
    fn uniform(&mut self, s: Slot) -> Result<cranelift_codegen::ir::Value, String> {
        use cranelift_codegen::ir::condcodes::IntCC;
        self.lane = Some(0);
        let first = self.get(s)?;
        if self.is_shared(s) {
            return Ok(first);
        }
        let mut differ = None;
        for l in 1..self.lanes {
            self.lane = Some(l);
            let v = self.get(s)?;
            let ne = self.b.ins().icmp(IntCC::NotEqual, v, first);
            differ = Some(differ.map_or(ne, |d| self.b.ins().bor(d, ne)));
        }
        self.lane = Some(0);
        if let Some(d) = differ {
            let d = self.bool64(d);
            self.give_up_if(d, reason::COOPMAT);
        }
        Ok(first)
    }
}
