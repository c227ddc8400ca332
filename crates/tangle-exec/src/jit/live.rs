//! What a diverged lane may still read: the slots live at each block's terminator, from the
//! reads and writes the scalar copy's code makes ([`Reads`], recorded while it is emitted).
//!
//! Why: a group that diverges spills its registers and each lane finishes alone in the scalar
//! code ([`super::lockstep`]). Spilling every written slot at every point a group may diverge
//! made the code grow as (points × slots × lanes), and each of those reads of a slot defined
//! far away made Cranelift's SSA construction walk (and give block parameters to) the blocks
//! in between: super-linear in the program's size (`docs/executor.md`, "Compile time"). Only
//! the slots the scalar code may read from the terminator on need to be spilled and restored.
//!
//! Exactness: the reads are those of the very code the lane then runs (every slot read goes
//! through [`super::compile::Emitter::get`]), so a slot left out is one no path from the
//! terminator reads before writing it. A phi's copies on an edge are reads at the terminator,
//! and their destinations are written on that edge only (the edge's block sets every one). An
//! op that always gives up (a subgroup operation in the scalar code) ends its block's code:
//! what the block's ops read after it is never run.

use crate::program::{Function, Slot};
use std::collections::BTreeSet;

/// Each block's reads and writes in the scalar copy, in emission order.
#[derive(Debug, Default)]
pub(super) struct Reads {
    /// Slots a block's ops read before writing them.
    exposed: Vec<BTreeSet<Slot>>,
    /// Slots a block's ops write whole.
    written: Vec<BTreeSet<Slot>>,
    /// Slots its terminator reads (its condition, its edges' phi sources).
    at_end: Vec<BTreeSet<Slot>>,
    /// Whether an op of the block always gives up: what its ops read after that is never
    /// run, and nothing after the block is reached from its start.
    gives_up: Vec<bool>,
}

impl Reads {
    pub(super) fn new(blocks: usize) -> Reads {
        Reads {
            exposed: vec![BTreeSet::new(); blocks],
            written: vec![BTreeSet::new(); blocks],
            at_end: vec![BTreeSet::new(); blocks],
            gives_up: vec![false; blocks],
        }
    }

    /// An op of block `block` that always gives up (a subgroup operation reached in the
    /// scalar code) has been emitted.
    pub(super) fn give_up(&mut self, block: u32) {
        if let Some(g) = self.gives_up.get_mut(block as usize) {
            *g = true;
        }
    }

    /// A read of `s` in block `block`, by one of its ops (`at_end`: by its terminator).
    pub(super) fn read(&mut self, block: u32, at_end: bool, s: Slot) {
        let b = block as usize;
        if at_end {
            if let Some(set) = self.at_end.get_mut(b) {
                set.insert(s);
            }
        } else if !self.written.get(b).is_some_and(|w| w.contains(&s))
            && !self.gives_up.get(b).copied().unwrap_or(false)
        {
            if let Some(set) = self.exposed.get_mut(b) {
                set.insert(s);
            }
        }
    }

    /// A write of `s` by an op of block `block` (a terminator's writes are not counted).
    pub(super) fn write(&mut self, block: u32, at_end: bool, s: Slot) {
        if !at_end {
            if let Some(set) = self.written.get_mut(block as usize) {
                set.insert(s);
            }
        }
    }

    /// For each block of `func`, the slots its terminator and the code after it may read
    /// before writing them: a backward fixpoint over the blocks' successors.
    pub(super) fn live_at_end(&self, func: &Function) -> Vec<BTreeSet<Slot>> {
        let n = func.blocks.len();
        let mut live_in: Vec<BTreeSet<Slot>> = vec![BTreeSet::new(); n];
        let mut at_end: Vec<BTreeSet<Slot>> = vec![BTreeSet::new(); n];
        // Each round that changes something adds a slot to some block's set, which only
        // grows: at most slots × blocks rounds, in practice the loop nesting depth plus two.
        loop {
            let mut changed = false;
            for (b, block) in func.blocks.iter().enumerate().rev() {
                let mut end = self.at_end.get(b).cloned().unwrap_or_default();
                for succ in block.terminator.successors() {
                    let Some(l) = live_in.get(succ as usize) else {
                        continue;
                    };
                    // The phi copies of the edge from `b` write their destinations.
                    let copies = func
                        .blocks
                        .get(succ as usize)
                        .and_then(|t| t.phis.iter().find(|(p, _)| *p as usize == b))
                        .map_or(&[][..], |(_, c)| &c[..]);
                    end.extend(
                        l.iter()
                            .copied()
                            .filter(|s| !copies.iter().any(|&(dst, _)| dst == *s)),
                    );
                }
                let mut start = self.exposed.get(b).cloned().unwrap_or_default();
                let written = self.written.get(b);
                if !self.gives_up.get(b).copied().unwrap_or(false) {
                    start.extend(
                        end.iter()
                            .copied()
                            .filter(|s| !written.is_some_and(|w| w.contains(s))),
                    );
                }
                if start.len() != live_in[b].len() {
                    live_in[b] = start;
                    changed = true;
                }
                at_end[b] = end;
            }
            if !changed {
                return at_end;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Block, Terminator};

    fn block(terminator: Terminator) -> Block {
        Block {
            terminator,
            ..Block::default()
        }
    }

    #[test]
    fn live_slots_follow_the_loop_and_stop_at_writes() {
        // 0 -> 1 (loop header) -> 2 -> 1 | 3; the edge 2 -> 1 copies 4 into 8.
        let mut header = block(Terminator::Branch(2));
        header.phis = vec![(2, vec![(8, 4)])];
        let func = Function {
            blocks: vec![
                block(Terminator::Branch(1)),
                header,
                block(Terminator::BranchConditional {
                    cond: 9,
                    t: 1,
                    f: 3,
                }),
                block(Terminator::Return),
            ],
            ..Function::default()
        };
        let mut r = Reads::new(4);
        // Block 1 reads 5, then writes 6; block 2 writes 7 and reads it; block 3 reads 6,
        // then gives up (a subgroup operation in the scalar code), then reads 8, which is
        // never run.
        r.read(1, false, 5);
        r.write(1, false, 6);
        r.write(2, false, 7);
        r.read(2, false, 7);
        r.read(2, true, 9);
        r.read(2, true, 4);
        r.read(3, false, 6);
        r.give_up(3);
        r.read(3, false, 8);
        let live = r.live_at_end(&func);
        let set = |v: &[Slot]| v.iter().copied().collect::<BTreeSet<Slot>>();
        assert_eq!(live[3], set(&[]));
        // 4 is the source of the edge back to 1, 9 the condition.
        assert_eq!(live[2], set(&[4, 5, 6, 9]));
        // 6 is written by block 1 before block 3 reads it; 7 is written before it is read.
        assert_eq!(live[1], set(&[4, 5, 6, 9]));
        assert_eq!(live[0], set(&[4, 5, 9]));
    }

    #[test]
    fn a_phi_destination_is_written_on_its_edge() {
        // 0 -> 1 | 2 -> 3: the edges into 3 copy 5 (from 1) and 6 (from 2) into 7, which 3
        // reads: 7 is live at neither 1's end nor 2's, and 5 only at 1's.
        let mut merge = block(Terminator::Return);
        merge.phis = vec![(1, vec![(7, 5)]), (2, vec![(7, 6)])];
        let func = Function {
            blocks: vec![
                block(Terminator::BranchConditional {
                    cond: 9,
                    t: 1,
                    f: 2,
                }),
                block(Terminator::Branch(3)),
                block(Terminator::Branch(3)),
                merge,
            ],
            ..Function::default()
        };
        let mut r = Reads::new(4);
        r.read(0, true, 9);
        r.read(1, true, 5);
        r.read(2, true, 6);
        r.read(3, false, 7);
        let live = r.live_at_end(&func);
        let set = |v: &[Slot]| v.iter().copied().collect::<BTreeSet<Slot>>();
        assert_eq!(live[1], set(&[5]));
        assert_eq!(live[2], set(&[6]));
        assert_eq!(live[0], set(&[5, 6, 9]));
    }
}
