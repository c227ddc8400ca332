//! Calls inlined for the fast tiers: the entry point as one function with every callee's body
//! in place of its `OpFunctionCall`s ([`inline`]). The reference path keeps running the
//! lowered program with its calls; the wide interpreter and the native tier, which take one
//! function only, run this one (`docs/executor.md`, "Inlined calls").
//!
//! Exactness. Slots are the program's own: every function already has slots of its own (a
//! callee called twice reuses them on the reference path as here, recursion being refused),
//! so each copy computes the same values in the same slots. A block holding calls is cut at
//! each call: the part before it ends in a branch to the callee's entry block, whose phi copies
//! from that part are the call's argument copies; each `OpReturn`/`OpReturnValue` becomes a
//! branch to the part after the call, the return value its phi copies. Each op keeps its
//! location (findings, and the time limit's `at`, name the same instructions), and a tangle
//! takes as many steps (the call's step is the branch into the callee, the return's the
//! branch out). The reference path's positions are call stacks compared frame by frame
//! (`run/tangle.rs`); the blocks' ranks here are those positions in the same order — a part
//! of block `b` starting at op `j` ranks as `(rank of b, j)`, a callee block reached from the
//! call at op `j` as `(rank of b, j, its rank in the callee …)`, compared lexicographically —
//! so the wide path's tangles run in the reference path's order and join where it joins them
//! (after a call, where every invocation that made it has returned): maximal reconvergence at
//! calls is kept, and only the default policy's ranks are used by the fast tiers with
//! subgroup operations ([`crate::wide`]).

use crate::program::{Block, BlockIdx, Function, Op, Program, Terminator};

/// The most ops and blocks the inlined entry point may have: past it the program keeps its
/// calls and runs on the reference path (each call site is a copy of its callee).
pub const MAX_OPS: usize = 1 << 16;

/// A function with its calls inlined, and each block's rank key.
#[derive(Clone)]
struct Flat {
    blocks: Vec<Block>,
    keys: Vec<Vec<u32>>,
}

impl Flat {
    fn size(&self) -> usize {
        self.blocks.iter().map(|b| b.ops.len() + 1).sum()
    }
}

/// `prog` with its entry point's calls inlined, as a program of that one function; `Err` says
/// why not (the fast tiers then do not take the program).
pub fn inline(prog: &Program) -> Result<Program, String> {
    let mut memo: Vec<State> = vec![State::New; prog.functions.len()];
    let flat = flatten(prog, prog.entry, &mut memo)?;
    let Some(entry) = prog.functions.get(prog.entry as usize) else {
        return Err("no entry function".into());
    };
    let mut order: Vec<usize> = (0..flat.keys.len()).collect();
    order.sort_by(|&a, &b| flat.keys.get(a).cmp(&flat.keys.get(b)));
    let mut blocks = flat.blocks;
    for (rank, &b) in order.iter().enumerate() {
        if let Some(block) = blocks.get_mut(b) {
            block.rank = rank as u32;
        }
    }
    let mut out = prog.clone();
    out.functions = vec![Function {
        id: entry.id,
        params: entry.params.clone(),
        places: entry.places.clone(),
        blocks,
    }];
    out.entry = 0;
    Ok(out)
}

/// Where [`flatten`] is with a function.
#[derive(Clone)]
enum State {
    New,
    Busy,
    Done(Box<Flat>),
}

/// Function `f` with its calls inlined (callees first, each once: `memo`).
fn flatten(prog: &Program, f: u32, memo: &mut [State]) -> Result<Flat, String> {
    match memo.get(f as usize) {
        None => return Err(format!("a call of function {f}, which does not exist")),
        Some(State::Busy) => return Err("recursion".into()),
        Some(State::Done(flat)) => return Ok((**flat).clone()),
        Some(State::New) => {}
    }
    if let Some(s) = memo.get_mut(f as usize) {
        *s = State::Busy;
    }
    let func = prog
        .functions
        .get(f as usize)
        .ok_or_else(|| format!("a call of function {f}, which does not exist"))?;
    // Callees first.
    let mut callees: Vec<(u32, Flat)> = Vec::new();
    for block in &func.blocks {
        for op in &block.ops {
            if let Op::Call { func: c, .. } = op {
                if !callees.iter().any(|(k, _)| k == c) {
                    callees.push((*c, flatten(prog, *c, memo)?));
                }
            }
        }
    }
    let callee = |c: u32| callees.iter().find(|(k, _)| *k == c).map(|(_, fl)| fl);
    // Layout: each block's parts, a callee copy between two parts.
    let mut first = Vec::with_capacity(func.blocks.len());
    let mut last = Vec::with_capacity(func.blocks.len());
    let mut next = 0usize;
    let mut size = 0usize;
    for block in &func.blocks {
        first.push(next as BlockIdx);
        for op in &block.ops {
            if let Op::Call { func: c, .. } = op {
                let copy = callee(*c).map_or(0, |fl| fl.blocks.len());
                size = size.saturating_add(callee(*c).map_or(0, Flat::size));
                next = next.saturating_add(1 + copy);
            }
        }
        last.push(next as BlockIdx);
        next = next.saturating_add(1);
        size = size.saturating_add(block.ops.len() + 1);
        if size > MAX_OPS || next > MAX_OPS {
            return Err(format!(
                "inlining would make the program larger than {MAX_OPS} ops"
            ));
        }
    }
    let at = |v: &[BlockIdx], b: BlockIdx| v.get(b as usize).copied().unwrap_or(BlockIdx::MAX);
    let mut out = Flat {
        blocks: Vec::with_capacity(next),
        keys: Vec::with_capacity(next),
    };
    for block in &func.blocks {
        let mut part = Block {
            label: block.label,
            phis: block
                .phis
                .iter()
                .map(|(p, copies)| (at(&last, *p), copies.clone()))
                .collect(),
            ..Block::default()
        };
        let mut start = 0u32;
        for (j, op) in block.ops.iter().enumerate() {
            let loc = block.locs.get(j).copied().unwrap_or(0);
            let Op::Call {
                func: c, dst, args, ..
            } = op
            else {
                part.ops.push(op.clone());
                part.locs.push(loc);
                continue;
            };
            let Some(copy) = callee(*c) else {
                return Err(format!("a call of function {c}, which does not exist"));
            };
            // The part before the call: its branch is the call's step.
            let here = out.blocks.len() as BlockIdx;
            let base = here + 1;
            let after = base + copy.blocks.len() as BlockIdx;
            part.terminator = Terminator::Branch(base);
            part.term_loc = loc;
            out.blocks.push(std::mem::take(&mut part));
            out.keys.push(vec![block.rank, start]);
            let mut returns = Vec::new();
            for (i, (cb, key)) in copy.blocks.iter().zip(&copy.keys).enumerate() {
                let mut cb = cb.clone();
                shift(&mut cb, base);
                if i == 0 {
                    cb.phis.push((here, args.to_vec()));
                }
                match cb.terminator {
                    Terminator::Return => {
                        cb.terminator = Terminator::Branch(after);
                        returns.push((base + i as BlockIdx, Vec::new()));
                    }
                    Terminator::ReturnValue { src, count } => {
                        cb.terminator = Terminator::Branch(after);
                        let copies = (0..count).map(|k| (dst + k, src + k)).collect();
                        returns.push((base + i as BlockIdx, copies));
                    }
                    _ => {}
                }
                out.blocks.push(cb);
                let mut k = vec![block.rank, j as u32];
                k.extend_from_slice(key);
                out.keys.push(k);
            }
            start = j as u32 + 1;
            part.label = block.label;
            part.phis = returns;
        }
        part.terminator = remap(&block.terminator, |t| at(&first, t));
        part.term_loc = block.term_loc;
        part.merge = block.merge.map(|m| at(&first, m));
        part.continue_target = block.continue_target.map(|m| at(&first, m));
        out.blocks.push(part);
        out.keys.push(vec![block.rank, start]);
    }
    if let Some(s) = memo.get_mut(f as usize) {
        *s = State::Done(Box::new(out.clone()));
    }
    Ok(out)
}

/// `t` with its targets mapped by `to`.
fn remap(t: &Terminator, to: impl Fn(BlockIdx) -> BlockIdx) -> Terminator {
    match t {
        Terminator::Branch(b) => Terminator::Branch(to(*b)),
        Terminator::BranchConditional { cond, t, f } => Terminator::BranchConditional {
            cond: *cond,
            t: to(*t),
            f: to(*f),
        },
        Terminator::Switch {
            selector,
            bits,
            cases,
            default,
        } => Terminator::Switch {
            selector: *selector,
            bits: *bits,
            cases: cases.iter().map(|&(v, b)| (v, to(b))).collect(),
            default: to(*default),
        },
        other => other.clone(),
    }
}

/// A callee block copied to start at block `base`: every block index it names moves by `base`.
fn shift(b: &mut Block, base: BlockIdx) {
    b.terminator = remap(&b.terminator, |t| t.saturating_add(base));
    b.merge = b.merge.map(|m| m.saturating_add(base));
    b.continue_target = b.continue_target.map(|m| m.saturating_add(base));
    for (p, _) in &mut b.phis {
        *p = p.saturating_add(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(func: u32) -> Op {
        Op::Call {
            func,
            dst: 0,
            count: 0,
            args: Box::new([(1, 2)]),
        }
    }

    fn function(blocks: Vec<Block>) -> Function {
        Function {
            blocks,
            ..Function::default()
        }
    }

    fn block(ops: Vec<Op>, terminator: Terminator, rank: u32) -> Block {
        Block {
            locs: (0..ops.len() as u32).collect(),
            ops,
            terminator,
            rank,
            ..Block::default()
        }
    }

    #[test]
    fn a_callee_ranks_between_the_parts_of_its_call_and_gets_the_arguments() {
        let nop = || Op::Copy { dst: 3, src: 4 };
        let entry = function(vec![
            block(vec![nop(), call(1), nop()], Terminator::Branch(1), 0),
            block(vec![], Terminator::Return, 1),
        ]);
        // The callee: 0 -> 1 | 2, each returning.
        let callee = function(vec![
            block(
                vec![],
                Terminator::BranchConditional {
                    cond: 5,
                    t: 1,
                    f: 2,
                },
                0,
            ),
            block(vec![], Terminator::Return, 1),
            block(vec![], Terminator::Return, 2),
        ]);
        let prog = Program {
            functions: vec![entry, callee],
            ..Program::default()
        };
        let out = inline(&prog).expect("inlined");
        let [f] = &out.functions[..] else {
            panic!("one function")
        };
        let ranks: Vec<u32> = f.blocks.iter().map(|b| b.rank).collect();
        // Part before the call, the callee's three blocks, the part after, the return block.
        assert_eq!(ranks, [0, 1, 2, 3, 4, 5]);
        assert_eq!(f.blocks[0].terminator, Terminator::Branch(1));
        assert_eq!(f.blocks[1].phis, [(0, vec![(1, 2)])]);
        assert_eq!(f.blocks[2].terminator, Terminator::Branch(4));
        assert_eq!(f.blocks[3].terminator, Terminator::Branch(4));
        assert_eq!(f.blocks[4].terminator, Terminator::Branch(5));
        // The op after the call keeps its location.
        assert_eq!(f.blocks[4].locs, [2]);
        assert_eq!(f.blocks[0].term_loc, 1);
    }

    #[test]
    fn recursion_and_size_keep_the_calls() {
        let looping = Program {
            functions: vec![function(vec![block(vec![call(0)], Terminator::Return, 0)])],
            ..Program::default()
        };
        assert_eq!(inline(&looping).err().as_deref(), Some("recursion"));
        let big = block(
            vec![Op::Copy { dst: 3, src: 4 }; MAX_OPS / 2],
            Terminator::Return,
            0,
        );
        let twice = Program {
            functions: vec![
                function(vec![block(vec![call(1), call(1)], Terminator::Return, 0)]),
                function(vec![big]),
            ],
            ..Program::default()
        };
        let why = inline(&twice).err().unwrap_or_default();
        assert!(why.contains("larger than 65536 ops"), "{why}");
    }
}
