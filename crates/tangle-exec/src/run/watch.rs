//! Watched invocations ([`crate::RunOptions::watch`], what `DEBUG` follows): after each
//! instruction a watched invocation executes (looked at before the next op of another
//! instruction, or before the block's terminator), the values of its function's parameters,
//! variables and results ([`crate::program::Function::places`]) that changed since the last
//! look, recorded as [`crate::trace::EventKind::Values`] trace events between the `block`
//! events. Nothing here runs unless a dispatch names invocations to watch.

use super::access::Mem;
use super::alu::rd;
use crate::program::{Function, Place, Program};
use std::collections::HashMap;

/// The most scalars the watched invocations of one workgroup are looked at (each look reads
/// every value of the function): past it, looks are counted as dropped trace events.
const BUDGET: u64 = 1 << 26;

/// One watched invocation of the workgroup being run.
#[derive(Debug)]
struct Watched {
    subgroup: usize,
    lane: usize,
    /// The values last recorded, by id.
    last: HashMap<u32, Vec<u64>>,
}

/// The watched invocations of the workgroup being run.
#[derive(Debug, Default)]
pub(super) struct Watch {
    lanes: Vec<Watched>,
    /// Scalars left to look at in this workgroup.
    budget: u64,
}

/// What a look found: the lane, the instruction's word offset and the changed values.
pub(super) type Look = (u32, usize, Vec<(u32, Vec<u64>)>);

impl Watch {
    /// Starts workgroup `wg` (of a dispatch with `local` invocations per workgroup and
    /// subgroups of `sg`): the invocations of `watch` (`GlobalInvocationId`s) that it holds.
    pub fn start(&mut self, watch: &[[u32; 3]], wg: [u32; 3], local: [u32; 3], sg: usize) {
        self.lanes.clear();
        self.budget = BUDGET;
        for g in watch {
            if (0..3).any(|i| g[i] / local[i].max(1) != wg[i]) {
                continue;
            }
            let [x, y, z] = [0, 1, 2].map(|i| u64::from(g[i] % local[i].max(1)));
            let index = x + u64::from(local[0]) * (y + u64::from(local[1]) * z);
            let index = index as usize;
            self.lanes.push(Watched {
                subgroup: index / sg.max(1),
                lane: index % sg.max(1),
                last: HashMap::new(),
            });
        }
    }

    /// The watched lanes of subgroup `k`.
    pub fn mask(&self, k: usize) -> u128 {
        self.lanes
            .iter()
            .filter(|w| w.subgroup == k)
            .fold(0, |m, w| m | 1u128 << w.lane)
    }

    /// Looks at the watched lanes of subgroup `k` among `active` in `func`, after the
    /// instruction at word offset `at` (0: at the block's start): each one's values that
    /// changed go to `out`. `false` when the budget is spent (nothing is recorded then).
    #[allow(clippy::too_many_arguments)]
    pub fn look(
        &mut self,
        prog: &Program,
        func: &Function,
        k: usize,
        active: u128,
        (regs, n): (&[u64], usize),
        mem: &Mem<'_>,
        at: usize,
        out: &mut Vec<Look>,
    ) -> bool {
        for w in self
            .lanes
            .iter_mut()
            .filter(|w| w.subgroup == k && active >> w.lane & 1 == 1)
        {
            let mut changed = Vec::new();
            for &(id, place) in &func.places {
                let Some(value) = read(prog, place, regs, n, w.lane, mem) else {
                    continue;
                };
                let cost = value.len() as u64 + 1;
                if cost > self.budget {
                    self.budget = 0;
                    return false;
                }
                self.budget -= cost;
                if w.last.get(&id) != Some(&value) {
                    w.last.insert(id, value.clone());
                    changed.push((id, value));
                }
            }
            if !changed.is_empty() {
                out.push((w.lane as u32, at, changed));
            }
        }
        true
    }
}

/// The scalars of the value at `place` for `lane`, in slot order (a boolean as 0 or 1);
/// `None` where it cannot be read (a pointer into no memory).
fn read(
    prog: &Program,
    place: Place,
    regs: &[u64],
    n: usize,
    lane: usize,
    mem: &Mem<'_>,
) -> Option<Vec<u64>> {
    match place {
        Place::Slots { slot, ty } => {
            let count = prog.ty(ty).slots;
            Some(
                (slot..slot.saturating_add(count))
                    .map(|s| rd(regs, n, s, lane))
                    .collect(),
            )
        }
        Place::Pointee { slot, ty } => {
            let leaves = prog.leaves_of(ty);
            if leaves.is_empty() && prog.ty(ty).size > 0 {
                return None;
            }
            let (words, base) = mem
                .resolve_value(rd(regs, n, slot, lane), lane, (prog, ty))
                .ok()?;
            Some(
                leaves
                    .iter()
                    .map(|l| words.read(base + l.offset, l.bytes))
                    .collect(),
            )
        }
    }
}
