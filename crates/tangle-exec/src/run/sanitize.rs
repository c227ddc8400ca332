//! The executor's side of the race and barrier checks: when the race log
//! ([`crate::check::race`]) is swept, how its races become findings, the check of the races
//! between workgroups after a dispatch, and the Subgroup-scope barrier check.

use super::builtins::Place;
use super::{Keyed, Shared, Workgroup};
use crate::check::barrier::BarrierFinding;
use crate::check::kind::Kind;
use crate::check::race::{self, Access, Race, RaceFinding};
use crate::check::robust;
use crate::check::summary::Summaries;
use crate::check::uninit;
use crate::report::{Diagnostic, Finding};

/// Memory Semantics: UniformMemory (storage buffers).
const UNIFORM_MEMORY: u32 = 0x40;

/// `WorkgroupId` of workgroup number `i` (x fastest) of a grid of `groups` starting at
/// `base` ([`crate::RunOptions::base`]).
pub(super) fn workgroup_id(i: u64, groups: [u32; 3], base: [u32; 3]) -> [u32; 3] {
    let [gx, gy, _] = groups.map(|g| u64::from(g).max(1));
    let id = [
        (i % gx) as u32,
        ((i / gx) % gy) as u32,
        (i / (gx * gy)) as u32,
    ];
    std::array::from_fn(|c| id[c].wrapping_add(base[c]))
}

fn place(s: &Shared<'_>, wg: u64, local: u32) -> Place {
    Place {
        workgroup: workgroup_id(wg, s.groups, s.options.base),
        groups: s.groups,
        local_size: s.prog.local_size,
        local_index: local,
        subgroup_size: s.sg as u32,
    }
}

/// The finding of a race, reported at `r.this`.
fn race_finding(s: &Shared<'_>, r: &Race, across: bool) -> Finding {
    let (region, off) = super::memory::split_pointer(r.this.start);
    let base = r.this.start - off;
    let lo = r.this.start.max(r.other.start) - base;
    let hi = r.this.end.min(r.other.end) - base;
    Finding::Race(RaceFinding {
        region: race_region(s, region),
        bytes: (lo, hi),
        write: r.this.class & race::WRITE != 0,
        other: s.prog.location(r.other.loc),
        other_invocation: place(s, r.other.wg, r.other.inv).global_id(),
        other_write: r.other.class & race::WRITE != 0,
        across_workgroups: across,
    })
}

/// The name of the region a race's bytes lie in: where regions share the bytes
/// ([`super::memory::View::alias`]), the one the offsets count from (the lowest `base`) and
/// the others that overlap it, since either may have made the accesses.
fn race_region(s: &Shared<'_>, region: u64) -> String {
    let name = |r: u64| super::access::region_name(s.buffers, s.images, r);
    let sharing: Vec<String> = (0u64..)
        .zip(s.buffers)
        .filter(|(i, (v, _))| {
            let r = super::memory::FIRST_BUFFER + i;
            r != region && v.alias.is_some_and(|(a, _)| a == region)
        })
        .map(|(i, _)| name(super::memory::FIRST_BUFFER + i))
        .collect();
    match sharing.is_empty() {
        true => name(region),
        false => format!(
            "{} (bytes from its start; the same memory as {})",
            name(region),
            sharing.join(", ")
        ),
    }
}

impl Workgroup {
    /// Whether this dispatch logs accesses for the race check.
    pub(super) fn races_on(s: &Shared<'_>) -> bool {
        s.options.checks && !s.options.allow.contains(Kind::Race)
    }

    /// At a workgroup barrier with Memory Semantics and [`crate::check::sync`] flags
    /// `semantics` (`None`: the end of the workgroup, which orders everything): checks the
    /// accesses it orders.
    pub(super) fn barrier_races(&mut self, s: &Shared<'_>, semantics: Option<(u32, u8)>) {
        if !self.races.get_mut().on {
            return;
        }
        // GLSL's barrier() orders shared memory whatever its semantics say; buffers need
        // UniformMemory (memoryBarrierBuffer()), as the memory model asks.
        let storage = semantics.is_none_or(|(m, _)| m & UNIFORM_MEMORY != 0);
        let flags = semantics.map_or(0, |(_, f)| f);
        let mut found = Vec::new();
        self.races
            .get_mut()
            .barrier(storage, flags, s.options.max_findings, &mut found);
        for r in found {
            let f = race_finding(s, &r, false);
            self.record(s, r.this.loc, r.this.inv, f);
        }
    }

    /// Hands this workgroup's buffer accesses to the check across workgroups, and where its
    /// log was cut short (the earliest workgroup's place is kept, whatever thread ran first).
    pub(super) fn flush_races(&mut self, s: &Shared<'_>) {
        let log = self.races.get_mut();
        if !log.on {
            return;
        }
        log.keep_history();
        if log.runs.is_empty() && log.truncated.is_none() {
            return;
        }
        let mut all = s.runs.lock().unwrap_or_else(|e| e.into_inner());
        let mut cut = log.truncated.take();
        if all.0.len() + log.runs.len() > s.options.race_log_limit {
            cut = cut.or(Some(race::CutShort {
                wg: log.wg,
                loc: None,
            }));
            log.runs.clear();
        } else {
            all.0.append(&mut log.runs);
        }
        if let Some(c) = cut {
            if all.1.is_none_or(|old| c.wg < old.wg) {
                all.1 = Some(c);
            }
        }
    }
}

/// `OpMemoryBarrier` with [`crate::check::sync`] flags `flags` by the lanes `mask` of the
/// running subgroup.
pub(super) fn fence(mem: &super::access::Mem<'_>, mask: u128, n: usize, flags: u8) {
    if let (Some(r), true) = (mem.races, flags != 0) {
        let mut r = r.borrow_mut();
        for l in super::alu::bits_of(mask, n) {
            r.fence(l, flags);
        }
    }
}

/// `OpControlBarrier` with Subgroup scope executed by the lanes `mask` of a subgroup whose other
/// tangles are `others`: a finding when invocations of the subgroup still run elsewhere.
pub(super) fn subgroup_barrier(mask: u128, others: &[super::Tangle]) -> Option<Finding> {
    let live = others.iter().fold(mask, |m, t| m | t.mask);
    (live != mask).then(|| {
        Finding::Barrier(BarrierFinding {
            scope: "Subgroup",
            arrived: mask.count_ones(),
            invocations: live.count_ones(),
            finished: 0,
        })
    })
}

/// Where the race check was cut short, as the report says it.
pub(super) fn cut_short(s: &Shared<'_>, c: race::CutShort) -> crate::report::RaceCutShort {
    crate::report::RaceCutShort {
        workgroup: workgroup_id(c.wg, s.groups, s.options.base),
        at: c.loc.map(|l| s.prog.location(l)),
        limit: s.options.race_log_limit,
    }
}

/// After a dispatch: the races between workgroups, as findings added to `found` and
/// `summaries` (keyed after every finding of their workgroup).
pub(super) fn races_across(
    s: &Shared<'_>,
    runs: &mut [Access],
    found: &mut Vec<Keyed>,
    summaries: &mut Summaries,
    dropped: &mut u64,
) {
    let sync = s.sync.lock().unwrap_or_else(|e| e.into_inner());
    // With orderings missing, a race could be invented: none is reported (the report says
    // the check was cut short).
    if sync.overflow.is_some() {
        return;
    }
    let mut races = Vec::new();
    let knows = |x: &Access, a: &Access| {
        sync.history(x.wg)
            .is_some_and(|h| h.knows(race::class_of(a.start), x, a))
    };
    let order = |a: &Access, b: &Access| !sync.is_empty() && (knows(b, a) || knows(a, b));
    race::sweep(runs, (true, &order), s.options.max_findings, &mut races);
    for (n, r) in races.iter().enumerate() {
        let finding = race_finding(s, r, true);
        let p = place(s, r.this.wg, r.this.inv);
        let d = Diagnostic {
            finding,
            at: s.prog.location(r.this.loc),
            invocation: p.global_id(),
            workgroup: p.workgroup,
        };
        let key = (r.this.wg, u64::MAX / 2 + n as u64);
        if found.len() < s.options.max_findings {
            found.push((key, d.clone()));
        } else {
            *dropped += 1;
        }
        summaries.add(r.this.loc, Kind::Race, key, d);
    }
}

/// The uninitialised-value check after `op` ran for the lanes `mask` of `sg`: carries origins
/// ([`uninit::step`], through invocation memory [`uninit::step_memory`]), gives a load of unwritten workgroup memory the load as its origin, and
/// lists each use of an undefined value as a finding of its lane. The subgroup's registers and
/// origins come apart because its per-invocation memory is borrowed by `mem`.
#[allow(clippy::too_many_arguments)]
pub(super) fn track_uninit(
    prog: &crate::program::Program,
    op: &crate::program::Op,
    (regs, poison): (&[u64], &mut uninit::Poison),
    n: usize,
    mask: u128,
    mem: &super::access::Mem<'_>,
    loc: u32,
    found: &mut Vec<super::access::LaneFinding>,
) {
    use super::alu::{bits_of, rd};
    use super::memory::{split_pointer, REGION_INVOCATION, REGION_WORKGROUP};
    use crate::program::Op;
    let mut uses = Vec::new();
    if poison.any() {
        let visible = |ptr: crate::program::Slot, l: usize| {
            split_pointer(rd(regs, n, ptr, l)).0 != REGION_INVOCATION
        };
        if !uninit::step(prog, op, poison, n, mask, &visible, &mut uses) {
            // Only ops that take values: a group operation's Value was checked already, and
            // a descriptor array's element is chosen by an index alone.
            if matches!(
                op,
                Op::Dot(_) | Op::Coopmat(_) | Op::Image(_) | Op::CopyMemory { .. }
            ) {
                uninit::held_chosen(poison, n, mask, &mut uses);
            }
            uninit::forget(poison, n, mask);
        }
    }
    uninit::step_memory(
        prog,
        op,
        poison,
        n,
        mask,
        &|ptr, l| rd(regs, n, ptr, l),
        loc,
    );
    if let (Op::Load { dst, ptr, ty } | Op::LoadUniform { dst, ptr, ty }, Some(w)) =
        (op, mem.written)
    {
        let w = w.borrow();
        for l in bits_of(mask, n) {
            let (region, off) = split_pointer(rd(regs, n, *ptr, l));
            if region != REGION_WORKGROUP {
                continue;
            }
            for (i, leaf) in prog.leaves_of(*ty).iter().enumerate() {
                if !w.written(off + leaf.offset, u64::from(leaf.bytes)) {
                    uninit::set(poison, n, dst + i as u32, l, loc + 1);
                }
            }
        }
    }
    follow_chosen(prog, op, (poison, n), mem.robust.0, loc, found);
    push_uses(prog, &poison.chosen, uses, found);
}

/// The `robust-access` warnings of `op` (at location `loc`) that wait for their value to reach
/// the output ([`robust::follows_value`]) leave `found`: the lane's result instead carries a
/// [`robust::CHOSEN`] origin, reported where it is used ([`push_uses`]).
fn follow_chosen(
    prog: &crate::program::Program,
    op: &crate::program::Op,
    (poison, n): (&mut uninit::Poison, usize),
    robustness: robust::Robustness,
    loc: u32,
    found: &mut Vec<super::access::LaneFinding>,
) {
    use crate::program::Op;
    let (dst, slots, access) = match op {
        Op::Load { dst, ty, .. } | Op::LoadUniform { dst, ty, .. } => {
            (*dst, prog.ty(*ty).slots, robust::Access::Load)
        }
        Op::Atomic { dst, .. } => (*dst, 1, robust::Access::Atomic),
        // A null image descriptor's alpha (`run::image`): only that component was chosen.
        Op::Image(inst) => match &**inst {
            crate::run::image::ImageInst::Read { dst, count: 4, .. } => {
                (dst + 3, 1, robust::Access::Load)
            }
            _ => return,
        },
        _ => return,
    };
    let image = matches!(op, Op::Image(_));
    if !(image || robust::follows_value(robustness, access))
        || !found
            .iter()
            .any(|(_, f)| matches!(f, Finding::RobustAccess { .. }))
    {
        return;
    }
    for (l, f) in std::mem::take(found) {
        if !matches!(f, Finding::RobustAccess { .. }) {
            found.push((l, f));
            continue;
        }
        let o = poison.chosen.record(loc, l, f);
        for s in dst..dst + slots {
            uninit::set(poison, n, s, l, o);
        }
    }
}

/// Copies the origins of `(dst, src)` slot pairs for the lanes in `mask` (a call's parameters,
/// a returned value), when some value is undefined.
pub(super) fn copy_origins(
    poison: &mut uninit::Poison,
    n: usize,
    mask: u128,
    pairs: impl Iterator<Item = (crate::program::Slot, crate::program::Slot)>,
) {
    if !poison.any() {
        return;
    }
    for (dst, src) in pairs {
        if uninit::undefined(poison, dst, mask) | uninit::undefined(poison, src, mask) == 0 {
            continue;
        }
        for l in super::alu::bits_of(mask, n) {
            let o = uninit::origin(poison, n, src, l);
            uninit::set(poison, n, dst, l, o);
        }
    }
}

/// The uses of undefined values as lane findings: `uninit` ones, or `robust-access` warnings
/// where the value is one an implementation chose under robustness (`chosen`).
pub(super) fn push_uses(
    prog: &crate::program::Program,
    chosen: &robust::Chosen,
    uses: Vec<crate::check::uninit::Use>,
    found: &mut Vec<super::access::LaneFinding>,
) {
    for (l, o, used_as) in uses {
        let at = prog.location((o & !robust::CHOSEN).saturating_sub(1));
        if let Some(f) = chosen.finding(o, l, &used_as, &at) {
            found.push((l, f));
            continue;
        }
        if used_as == uninit::UsedAs::Untracked {
            continue;
        }
        found.push((
            l,
            Finding::Uninit(crate::check::uninit::UninitFinding {
                used_as,
                origin: prog.location(o.saturating_sub(1)),
            }),
        ));
    }
}
