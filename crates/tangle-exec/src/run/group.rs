//! Executing the group instructions (`OpGroupNonUniform*` and OpGroupNonUniformRotateKHR) with
//! Subgroup scope over one tangle: the invocations of the executing tangle are exactly the
//! active invocations of the instruction (SPIR-V "Non-Uniform Instructions": "the group of
//! invocations ... that execute the same dynamic instance"). Source lanes and operators come
//! from [`crate::semantics::group`]; undefined cases are reported as
//! [`crate::check::group::GroupFinding`]s and give [`poison`].

use super::access::LaneFinding;
use super::alu::{bits_of, full_mask, rd, wr};
use crate::check::group::{poison, GroupFinding, SourceRead};
use crate::error::ExecError;
use crate::profile::{subgroup_ops, Profile};
use crate::program::{Op, Program, Slot};
use crate::report::Finding;
use crate::semantics::float;
use crate::semantics::group::{self as sg, GroupOp};

/// The GroupOperation of an arithmetic or BallotBitCount instruction (ClusteredReduce is
/// `Reduce` with a cluster size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// `Reduce` / `ClusteredReduce`.
    Reduce,
    /// `InclusiveScan`.
    Inclusive,
    /// `ExclusiveScan`.
    Exclusive,
}

/// What a group op does; slots are the first slot of the named operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// OpGroupNonUniformElect.
    Elect,
    /// OpGroupNonUniformAll (Value is the Predicate).
    All,
    /// OpGroupNonUniformAny.
    Any,
    /// OpGroupNonUniformAllEqual.
    AllEqual,
    /// OpGroupNonUniformBroadcast.
    Broadcast { id: Slot },
    /// OpGroupNonUniformBroadcastFirst.
    BroadcastFirst,
    /// OpGroupNonUniformBallot (Value is the Predicate; the result is a uvec4).
    Ballot,
    /// OpGroupNonUniformInverseBallot (Value is a uvec4).
    InverseBallot,
    /// OpGroupNonUniformBallotBitExtract.
    BallotBitExtract { index: Slot },
    /// OpGroupNonUniformBallotBitCount.
    BallotBitCount { scan: Scan },
    /// OpGroupNonUniformBallotFindLSB.
    BallotFindLsb,
    /// OpGroupNonUniformBallotFindMSB.
    BallotFindMsb,
    /// OpGroupNonUniformShuffle.
    Shuffle { id: Slot },
    /// OpGroupNonUniformShuffleXor.
    ShuffleXor { mask: Slot },
    /// OpGroupNonUniformShuffleUp.
    ShuffleUp { delta: Slot },
    /// OpGroupNonUniformShuffleDown.
    ShuffleDown { delta: Slot },
    /// OpGroupNonUniform{IAdd, …, LogicalXor} with its GroupOperation.
    Arith {
        op: GroupOp,
        scan: Scan,
        cluster: Option<u64>,
    },
    /// OpGroupNonUniformQuadBroadcast.
    QuadBroadcast { index: Slot },
    /// OpGroupNonUniformQuadSwap with its constant Direction.
    QuadSwap { direction: u64 },
    /// OpGroupNonUniformRotateKHR with its constant ClusterSize.
    Rotate { delta: Slot, cluster: Option<u64> },
}

/// One lowered group instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInst {
    /// What it does.
    pub kind: GroupKind,
    /// The result's first slot.
    pub dst: Slot,
    /// The first slot of Value (or Predicate); unused by Elect.
    pub value: Slot,
    /// Components of Value.
    pub count: u32,
    /// Component width of Value (1 for booleans).
    pub bits: u32,
    /// Value is a float.
    pub float: bool,
}

impl GroupInst {
    /// The slots the op writes (for its active lanes) and the slots it reads, from what
    /// [`exec_group`] does for each kind: a one-slot result for the predicates, counts and
    /// lane finds, the four words of a ballot, else a result shaped as Value; the ballot
    /// operands are read as four words.
    pub fn slots(&self) -> (std::ops::Range<Slot>, Vec<Slot>) {
        use GroupKind as K;
        let g = self;
        let result = match g.kind {
            K::Elect
            | K::All
            | K::Any
            | K::AllEqual
            | K::InverseBallot
            | K::BallotBitExtract { .. }
            | K::BallotBitCount { .. }
            | K::BallotFindLsb
            | K::BallotFindMsb => 1,
            K::Ballot => 4,
            _ => g.count,
        };
        let value = match g.kind {
            K::Elect => 0,
            K::InverseBallot
            | K::BallotBitExtract { .. }
            | K::BallotBitCount { .. }
            | K::BallotFindLsb
            | K::BallotFindMsb => g.count.max(4),
            _ => g.count,
        };
        let mut reads: Vec<Slot> = (g.value..g.value.saturating_add(value)).collect();
        match g.kind {
            K::Broadcast { id } | K::Shuffle { id } => reads.push(id),
            K::ShuffleXor { mask } => reads.push(mask),
            K::ShuffleUp { delta } | K::ShuffleDown { delta } | K::Rotate { delta, .. } => {
                reads.push(delta)
            }
            K::QuadBroadcast { index } | K::BallotBitExtract { index } => reads.push(index),
            _ => {}
        }
        (g.dst..g.dst.saturating_add(result), reads)
    }
}

/// The state of one execution of a group op.
struct Exec<'a> {
    g: &'a GroupInst,
    regs: &'a mut [u64],
    /// Subgroup size.
    n: usize,
    /// Invocations that exist in this (maybe partial) subgroup.
    lanes: usize,
    /// Active lanes of the tangle.
    mask: u128,
    found: &'a mut Vec<LaneFinding>,
}

/// Executes a group op over the active lanes `mask` of a subgroup of size `n` holding `lanes`
/// invocations. Returns `false` for other ops.
pub fn exec_group(
    op: &Op,
    regs: &mut [u64],
    n: usize,
    lanes: usize,
    mask: u128,
    found: &mut Vec<LaneFinding>,
) -> bool {
    let Op::Group(g) = op else { return false };
    let lanes = lanes.min(n);
    let mut e = Exec {
        g,
        regs,
        n,
        lanes,
        mask: mask & full_mask(lanes),
        found,
    };
    e.run();
    true
}

impl Exec<'_> {
    fn get(&self, s: Slot, l: usize) -> u64 {
        rd(self.regs, self.n, s, l)
    }

    fn set(&mut self, s: Slot, l: usize, v: u64) {
        wr(self.regs, self.n, s, l, v);
    }

    /// Slot `s`'s values of every lane, when every lane of the subgroup exists and is active
    /// (the case the full-subgroup fast paths take).
    fn whole_row(&self, s: Slot) -> Option<&[u64]> {
        if self.lanes != self.n || self.mask != full_mask(self.n) {
            return None;
        }
        let at = s as usize * self.n;
        self.regs.get(at..at + self.n)
    }

    fn active(&self, l: u64) -> bool {
        l < 128 && (self.mask >> l) & 1 == 1
    }

    fn first_lane(&self) -> usize {
        self.mask.trailing_zeros() as usize
    }

    fn report(&mut self, lane: usize, f: GroupFinding) {
        self.found.push((lane, Finding::Group(f)));
    }

    /// Every active lane's result (`count` components at `dst`) set to poison.
    fn poison_all(&mut self, count: u32, bits: u32) {
        for l in bits_of(self.mask, self.n) {
            for i in 0..count {
                self.set(self.g.dst + i, l, poison(bits));
            }
        }
    }

    /// The value of slot `s`, which must be dynamically uniform: `None` (after a finding) when
    /// the active lanes disagree.
    fn uniform(&mut self, s: Slot, operand: &'static str) -> Option<u64> {
        let first = self.get(s, self.first_lane());
        if let Some(row) = self.whole_row(s) {
            // Every lane active: one pass over the slot's row (vectorised).
            if row.iter().all(|&v| v == first) {
                return Some(first);
            }
        } else if bits_of(self.mask, self.n).all(|l| self.get(s, l) == first) {
            return Some(first);
        }
        let values = bits_of(self.mask, self.n)
            .map(|l| (l as u32, self.get(s, l)))
            .collect();
        let lane = self.first_lane();
        self.report(lane, GroupFinding::NotUniform { operand, values });
        None
    }

    /// A constant ClusterSize checked against the subgroup size; `None` after a finding.
    fn cluster(&mut self, c: Option<u64>) -> Option<u32> {
        match c {
            None => Some(self.n as u32),
            Some(c) if !sg::rotate_cluster_is_undefined(c, self.n as u32) => Some(c as u32),
            Some(c) => {
                let lane = self.first_lane();
                self.report(
                    lane,
                    GroupFinding::ClusterSize {
                        cluster_size: c,
                        subgroup_size: self.n as u32,
                    },
                );
                None
            }
        }
    }

    fn run(&mut self) {
        if self.mask == 0 {
            return;
        }
        let g = self.g;
        let n = self.n as u32;
        match g.kind {
            GroupKind::Elect => {
                let first = self.first_lane();
                for l in bits_of(self.mask, self.n) {
                    self.set(g.dst, l, u64::from(l == first));
                }
            }
            GroupKind::All | GroupKind::Any => {
                let all = bits_of(self.mask, self.n).all(|l| self.get(g.value, l) != 0);
                let any = bits_of(self.mask, self.n).any(|l| self.get(g.value, l) != 0);
                let v = u64::from(if g.kind == GroupKind::All { all } else { any });
                self.broadcast_result(v);
            }
            GroupKind::AllEqual => {
                let first = self.first_lane();
                let equal = bits_of(self.mask, self.n).all(|l| {
                    (0..g.count).all(|i| {
                        let (a, b) = (self.get(g.value + i, first), self.get(g.value + i, l));
                        if g.float {
                            // Floats compare by value, as OpFOrdEqual: -0 equals +0, NaN nothing.
                            float::to_f64(g.bits, a) == float::to_f64(g.bits, b)
                        } else {
                            a == b
                        }
                    })
                });
                self.broadcast_result(u64::from(equal));
            }
            GroupKind::Broadcast { id } => {
                // "Id must be dynamically uniform within Execution."
                let Some(id) = self.uniform(id, "Id") else {
                    return self.poison_all(g.count, g.bits);
                };
                self.by_source(|_| sg::shuffle_source_lane(id, n).ok_or(i128::from(id)));
            }
            GroupKind::BroadcastFirst => {
                let first = self.first_lane() as u32;
                self.by_source(|_| Ok(first));
            }
            GroupKind::Shuffle { id } => {
                let ids: Vec<u64> = (0..self.n).map(|l| self.get(id, l)).collect();
                self.by_source(|l| {
                    let id = ids.get(l as usize).copied().unwrap_or(0);
                    sg::shuffle_source_lane(id, n).ok_or(i128::from(id))
                });
            }
            GroupKind::ShuffleXor { mask } => {
                let ms: Vec<u64> = (0..self.n).map(|l| self.get(mask, l)).collect();
                self.by_source(|l| {
                    let m = ms.get(l as usize).copied().unwrap_or(0);
                    sg::shuffle_xor_source_lane(l, m, n).ok_or(i128::from(u64::from(l) ^ m))
                });
            }
            GroupKind::ShuffleUp { delta } => {
                let ds: Vec<u64> = (0..self.n).map(|l| self.get(delta, l)).collect();
                self.by_source(|l| {
                    let d = ds.get(l as usize).copied().unwrap_or(0);
                    sg::shuffle_up_source_lane(l, d).ok_or(i128::from(l) - i128::from(d))
                });
            }
            GroupKind::ShuffleDown { delta } => {
                let ds: Vec<u64> = (0..self.n).map(|l| self.get(delta, l)).collect();
                self.by_source(|l| {
                    let d = ds.get(l as usize).copied().unwrap_or(0);
                    sg::shuffle_down_source_lane(l, d, n).ok_or(i128::from(l) + i128::from(d))
                });
            }
            GroupKind::QuadBroadcast { index } => {
                // "Index must be dynamically uniform within Execution" (SPIR-V 1.5 and later).
                let Some(index) = self.uniform(index, "Index") else {
                    return self.poison_all(g.count, g.bits);
                };
                self.by_source(|l| {
                    sg::quad_broadcast_source_lane(l, index)
                        .ok_or(i128::from(l & !3) + i128::from(index))
                });
            }
            GroupKind::QuadSwap { direction } => {
                self.by_source(|l| sg::quad_swap_source_lane(l, direction).ok_or(i128::from(l)));
            }
            GroupKind::Rotate { delta, cluster } => {
                // "Delta must be dynamically uniform within Execution."
                let Some(delta) = self.uniform(delta, "Delta") else {
                    return self.poison_all(g.count, g.bits);
                };
                let Some(size) = self.cluster(cluster) else {
                    return self.poison_all(g.count, g.bits);
                };
                self.by_source(|l| Ok(sg::rotate_source_lane(l, delta, size)));
            }
            GroupKind::Ballot => {
                let mut m = 0u128;
                for l in bits_of(self.mask, self.n) {
                    if self.get(g.value, l) != 0 {
                        m |= 1 << l;
                    }
                }
                let words = sg::ballot_words(m);
                for l in bits_of(self.mask, self.n) {
                    for (i, w) in (0u32..).zip(words) {
                        self.set(g.dst + i, l, w);
                    }
                }
            }
            GroupKind::InverseBallot => {
                // "Value must be the same for all invocations that execute the same dynamic
                // instance of this instruction."
                let mut words = [0u64; 4];
                for (i, w) in (0u32..).zip(words.iter_mut()) {
                    match self.uniform(g.value + i, "Value") {
                        Some(v) => *w = v,
                        None => return self.poison_all(1, 1),
                    }
                }
                let m = sg::ballot_from_words(&words);
                for l in bits_of(self.mask, self.n) {
                    self.set(g.dst, l, sg::ballot_bit_extract(m, l as u64));
                }
            }
            GroupKind::BallotBitExtract { index } => {
                for l in bits_of(self.mask, self.n) {
                    let m = self.ballot_of(l);
                    let v = sg::ballot_bit_extract(m, self.get(index, l));
                    self.set(g.dst, l, v);
                }
            }
            GroupKind::BallotBitCount { scan } => {
                for l in bits_of(self.mask, self.n) {
                    let m = self.ballot_of(l);
                    let v = match scan {
                        Scan::Reduce => sg::ballot_bit_count(m, n),
                        Scan::Inclusive => sg::ballot_inclusive_bit_count(m, n, l as u32),
                        Scan::Exclusive => sg::ballot_exclusive_bit_count(m, n, l as u32),
                    };
                    self.set(g.dst, l, v);
                }
            }
            GroupKind::BallotFindLsb | GroupKind::BallotFindMsb => {
                let mut empty = Vec::new();
                for l in bits_of(self.mask, self.n) {
                    let m = self.ballot_of(l);
                    let found = if g.kind == GroupKind::BallotFindLsb {
                        sg::ballot_find_lsb(m, n)
                    } else {
                        sg::ballot_find_msb(m, n)
                    };
                    let v = found.map_or_else(
                        || {
                            empty.push(l as u32);
                            poison(32)
                        },
                        u64::from,
                    );
                    self.set(g.dst, l, v);
                }
                if let Some(&l) = empty.first() {
                    self.report(l as usize, GroupFinding::EmptyBallot { lanes: empty });
                }
            }
            GroupKind::Arith { op, scan, cluster } => self.arith(op, scan, cluster),
        }
    }

    /// The same result for every active lane.
    fn broadcast_result(&mut self, v: u64) {
        for l in bits_of(self.mask, self.n) {
            self.set(self.g.dst, l, v);
        }
    }

    /// The ballot (uvec4 Value) lane `l` holds.
    fn ballot_of(&self, l: usize) -> u128 {
        let words = [0, 1, 2, 3].map(|i| self.get(self.g.value + i, l));
        sg::ballot_from_words(&words)
    }

    /// [`Exec::by_source`] when every lane of the subgroup exists and is active and every
    /// source lane lies in the subgroup (so is active): the sources computed once, then each
    /// component a row at a time through a copy of the Value's row. `false` (nothing done)
    /// otherwise.
    fn by_source_whole(&mut self, source: &impl Fn(u32) -> Result<u32, i128>) -> bool {
        let (g, n) = (self.g, self.n);
        if self.whole_row(g.value).is_none() || n > 128 {
            return false;
        }
        let mut from = [0u8; 128];
        for (l, f) in from.iter_mut().enumerate().take(n) {
            match source(l as u32) {
                Ok(s) if (s as usize) < n => *f = s as u8,
                _ => return false,
            }
        }
        let mut src = [0u64; 128];
        for i in 0..g.count {
            let Some(row) = self.whole_row(g.value + i) else {
                return false;
            };
            src[..n].copy_from_slice(row);
            let at = (g.dst + i) as usize * n;
            let Some(dst) = self.regs.get_mut(at..at + n) else {
                return false;
            };
            for (d, &f) in dst.iter_mut().zip(&from) {
                *d = src[f as usize];
            }
        }
        true
    }

    /// Every active lane takes the Value of the lane `source` names: `Ok(lane)` within the
    /// group, `Err(id)` outside it. Reads of inactive or nonexistent lanes give poison and one
    /// finding.
    fn by_source(&mut self, source: impl Fn(u32) -> Result<u32, i128>) {
        if self.by_source_whole(&source) {
            return;
        }
        let g = self.g;
        let mut bad = Vec::new();
        for l in bits_of(self.mask, self.n) {
            let read = match source(l as u32) {
                Ok(s) if self.active(u64::from(s)) => {
                    for i in 0..g.count {
                        let v = self.get(g.value + i, s as usize);
                        self.set(g.dst + i, l, v);
                    }
                    continue;
                }
                Ok(s) => SourceRead {
                    lane: l as u32,
                    source: i128::from(s),
                    exists: (s as usize) < self.lanes,
                },
                Err(id) => SourceRead {
                    lane: l as u32,
                    source: id,
                    exists: false,
                },
            };
            bad.push(read);
            for i in 0..g.count {
                self.set(g.dst + i, l, poison(g.bits));
            }
        }
        if let Some(first) = bad.first() {
            let lane = first.lane as usize;
            self.report(lane, GroupFinding::InactiveSource { reads: bad });
        }
    }

    /// Reduce, InclusiveScan, ExclusiveScan and ClusteredReduce over the active lanes, in lane
    /// order (the order in which tangle combines is its own choice; for floats it fixes the
    /// rounding).
    fn arith(&mut self, op: GroupOp, scan: Scan, cluster: Option<u64>) {
        let g = self.g;
        let Some(size) = self.cluster(cluster) else {
            return self.poison_all(g.count, g.bits);
        };
        let size = size.max(1) as usize;
        for i in 0..g.count {
            let slot = g.value + i;
            if self.arith_whole(op, scan, size, slot, g.dst + i) {
                continue;
            }
            match scan {
                Scan::Reduce => {
                    // One cluster is the whole subgroup when there is no ClusterSize.
                    for base in (0..self.n).step_by(size) {
                        let m = self.mask & (full_mask(size) << base);
                        if m == 0 {
                            continue;
                        }
                        let acc = bits_of(m, self.n).fold(op.identity(g.bits), |acc, l| {
                            op.combine(g.bits, acc, self.get(slot, l))
                        });
                        for l in bits_of(m, self.n) {
                            self.set(g.dst + i, l, acc);
                        }
                    }
                }
                Scan::Inclusive | Scan::Exclusive => {
                    let mut acc = op.identity(g.bits);
                    for l in bits_of(self.mask, self.n) {
                        let next = op.combine(g.bits, acc, self.get(slot, l));
                        let v = if scan == Scan::Inclusive { next } else { acc };
                        self.set(g.dst + i, l, v);
                        acc = next;
                    }
                }
            }
        }
    }

    /// [`Exec::arith`] for one component when every lane of the subgroup exists and is active:
    /// the same combinations in the same lane order, over a copy of the Value's row. `false`
    /// (nothing done) otherwise.
    fn arith_whole(&mut self, op: GroupOp, scan: Scan, size: usize, slot: Slot, dst: Slot) -> bool {
        let (bits, n) = (self.g.bits, self.n);
        let Some(row) = self.whole_row(slot).filter(|_| n <= 128) else {
            return false;
        };
        let mut src = [0u64; 128];
        src[..n].copy_from_slice(row);
        let at = dst as usize * n;
        let Some(out) = self.regs.get_mut(at..at + n) else {
            return false;
        };
        match scan {
            Scan::Reduce => {
                for (cluster, out) in src[..n].chunks(size).zip(out.chunks_mut(size)) {
                    let acc = cluster
                        .iter()
                        .fold(op.identity(bits), |acc, &v| op.combine(bits, acc, v));
                    out.fill(acc);
                }
            }
            Scan::Inclusive | Scan::Exclusive => {
                let mut acc = op.identity(bits);
                for (o, &v) in out.iter_mut().zip(&src[..n]) {
                    let next = op.combine(bits, acc, v);
                    *o = if scan == Scan::Inclusive { next } else { acc };
                    acc = next;
                }
            }
        }
        true
    }
}

/// The Vulkan subgroup feature bit ([`subgroup_ops`]) a group op needs.
pub fn category(kind: &GroupKind) -> u32 {
    match kind {
        GroupKind::Elect => subgroup_ops::BASIC,
        GroupKind::All | GroupKind::Any | GroupKind::AllEqual => subgroup_ops::VOTE,
        GroupKind::Broadcast { .. }
        | GroupKind::BroadcastFirst
        | GroupKind::Ballot
        | GroupKind::InverseBallot
        | GroupKind::BallotBitExtract { .. }
        | GroupKind::BallotBitCount { .. }
        | GroupKind::BallotFindLsb
        | GroupKind::BallotFindMsb => subgroup_ops::BALLOT,
        GroupKind::Shuffle { .. } | GroupKind::ShuffleXor { .. } => subgroup_ops::SHUFFLE,
        GroupKind::ShuffleUp { .. } | GroupKind::ShuffleDown { .. } => {
            subgroup_ops::SHUFFLE_RELATIVE
        }
        GroupKind::Arith {
            cluster: Some(_), ..
        } => subgroup_ops::CLUSTERED,
        GroupKind::Arith { cluster: None, .. } => subgroup_ops::ARITHMETIC,
        GroupKind::QuadBroadcast { .. } | GroupKind::QuadSwap { .. } => subgroup_ops::QUAD,
        GroupKind::Rotate { cluster: None, .. } => subgroup_ops::ROTATE,
        GroupKind::Rotate {
            cluster: Some(_), ..
        } => subgroup_ops::ROTATE | subgroup_ops::ROTATE_CLUSTERED,
    }
}

/// Refuses a program that uses a group op of a category the profile does not support (as a
/// Vulkan driver refuses a shader that needs an absent `supportedOperations` bit).
pub fn check_supported(prog: &Program, profile: &Profile) -> Result<(), ExecError> {
    for block in prog.functions.iter().flat_map(|f| &f.blocks) {
        for (op, &loc) in block.ops.iter().zip(&block.locs) {
            let Op::Group(g) = op else { continue };
            let missing = category(&g.kind) & !profile.subgroup_operations;
            if missing != 0 {
                let what = format!(
                    "a subgroup operation of a category (bits {missing:#x}) the '{}' profile lacks",
                    profile.name
                );
                return Err(crate::error::unsupported(&prog.location(loc), what));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(kind: GroupKind) -> Op {
        Op::Group(Box::new(GroupInst {
            kind,
            dst: 0,
            value: 1,
            count: 1,
            bits: 32,
            float: false,
        }))
    }

    /// Runs `op` on a register file of slots 0 (result), 1 (Value) and 2 (an operand).
    fn exec(
        op: &Op,
        n: usize,
        lanes: usize,
        mask: u128,
        value: &[u64],
        operand: &[u64],
    ) -> (Vec<u64>, Vec<LaneFinding>) {
        let mut regs = vec![0u64; 3 * n];
        regs[n..n + value.len()].copy_from_slice(value);
        regs[2 * n..2 * n + operand.len()].copy_from_slice(operand);
        let mut found = Vec::new();
        assert!(exec_group(op, &mut regs, n, lanes, mask, &mut found));
        (regs[..n].to_vec(), found)
    }

    #[test]
    fn rotate_within_the_tangle_and_poison_outside() {
        let v: Vec<u64> = (10..18).collect();
        let rot = inst(GroupKind::Rotate {
            delta: 2,
            cluster: None,
        });
        let (out, found) = exec(&rot, 8, 8, 0xff, &v, &[3; 8]);
        assert_eq!(out, [13, 14, 15, 16, 17, 10, 11, 12]);
        assert!(found.is_empty());
        // Lanes 0..4 active: lane 1 reads lane 4 (inactive), lane 0 reads 3.
        let (out, found) = exec(&rot, 8, 8, 0x0f, &v, &[3; 8]);
        assert_eq!(out[..4], [13, poison(32), poison(32), poison(32)]);
        assert_eq!(out[4..], [0; 4]);
        assert_eq!(found.len(), 1);
        // Six invocations exist: lane 5 + 3 = 8 → lane 0; lane 3 reads lane 6, which does not exist.
        let (out, found) = exec(&rot, 8, 6, 0x3f, &v, &[3; 8]);
        assert_eq!(out[..6], [13, 14, 15, poison(32), poison(32), 10]);
        let Some((3, Finding::Group(GroupFinding::InactiveSource { reads }))) = found.first()
        else {
            panic!("{found:?}")
        };
        assert_eq!(
            reads[0],
            SourceRead {
                lane: 3,
                source: 6,
                exists: false
            }
        );
    }

    #[test]
    fn scans_skip_inactive_lanes() {
        let add = |scan| {
            inst(GroupKind::Arith {
                op: GroupOp::IAdd,
                scan,
                cluster: None,
            })
        };
        let v = [1, 2, 4, 8];
        assert_eq!(
            exec(&add(Scan::Reduce), 4, 4, 0b1011, &v, &[]).0,
            [11, 11, 0, 11]
        );
        assert_eq!(
            exec(&add(Scan::Inclusive), 4, 4, 0b1011, &v, &[]).0,
            [1, 3, 0, 11]
        );
        assert_eq!(
            exec(&add(Scan::Exclusive), 4, 4, 0b1011, &v, &[]).0,
            [0, 1, 0, 3]
        );
        let clustered = inst(GroupKind::Arith {
            op: GroupOp::IAdd,
            scan: Scan::Reduce,
            cluster: Some(2),
        });
        assert_eq!(exec(&clustered, 4, 4, 0b1011, &v, &[]).0, [3, 3, 0, 8]);
    }

    #[test]
    fn categories_follow_the_vulkan_feature_bits() {
        assert_eq!(category(&GroupKind::Elect), subgroup_ops::BASIC);
        assert_eq!(
            category(&GroupKind::ShuffleUp { delta: 0 }),
            subgroup_ops::SHUFFLE_RELATIVE
        );
        let clustered = GroupKind::Arith {
            op: GroupOp::IAdd,
            scan: Scan::Reduce,
            cluster: Some(4),
        };
        assert_eq!(category(&clustered), subgroup_ops::CLUSTERED);
        let rotate = GroupKind::Rotate {
            delta: 0,
            cluster: Some(4),
        };
        assert_eq!(
            category(&rotate),
            subgroup_ops::ROTATE | subgroup_ops::ROTATE_CLUSTERED
        );
    }
}
