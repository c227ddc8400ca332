//! The native tier: the wide path's programs (those with cooperative matrices where every
//! matrix meets only whole-matrix ops, [`coopmat`]), compiled with Cranelift to machine code
//! that runs groups of invocations side by side to completion ([`compile`], [`lockstep`];
//! subgroup operations in [`group`], cooperative matrices as tiles in [`coopmat`]), tried
//! before the wide interpreter.
//!
//! Why: the wide interpreter pays a dispatch per op per batch and keeps every value in memory;
//! compiled code keeps values in machine registers across ops (`docs/executor.md` has the
//! measurements).
//!
//! Exactness: the programs taken ([`crate::wide::plan`], less those with Workgroup memory or
//! barriers, which `compile` refuses) have no Workgroup memory, barrier,
//! atomic, call or memory of an invocation's own, so invocations are independent but for
//! subgroup operations, and running them to completion in any interleaving computes what the
//! wide path computes; a subgroup operation or cooperative-matrix op runs only where its whole subgroup is
//! together ([`group`], [`coopmat`]). Each
//! op is the lane kernel's exact function ([`ops`]), or a call of the same semantics function
//! ([`helpers`]); an op without native code is refused, never guessed. Like the wide path the
//! tier is *speculative*: at anything the reference path would report or handle differently
//! (a sanitizer check, an access outside a buffer, a possible data race from the same race
//! screen, [`log`], or the step bound) it gives the dispatch back, before anything is written
//! back, and the reference path runs it again and reports exactly.
//!
//! Compiled code is kept per pipeline ([`Cache`]), one function per [`Key`].

mod affine;
pub mod budget;
mod compile;
mod coopmat;
mod facts;
mod group;
mod helpers;
mod live;
mod lockstep;
mod log;
#[allow(unsafe_code)]
pub(crate) mod native;
pub use native::tile_kernel;
mod ops;
mod tiles;

pub(crate) use compile::Key;

use crate::check::kind::Kind;
use crate::error::ExecError;
use crate::program::Program;
use crate::report::Stats;
use crate::run::memory::{FIRST_BUFFER, REGION_PUSH};
use crate::run::Shared;
use compile::{reason, Compiled};
use native::{Ctx, Region};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a call of compiled code ended with (its return value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Status {
    /// Every invocation ran.
    Done = 0,
    /// It gave up; [`native::Ctx::reason`] says why ([`compile::reason`]).
    GaveUp = 1,
    /// The stop flag was set; `reason` is the loop header's block.
    Stopped = 2,
}

/// What the native tier did with a dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Not taken (the program, the options or the host): the interpreters run it.
    NotTaken(String),
    /// Run; its results are in the buffers.
    Done,
    /// Given up (nothing of it is kept): the reference path must run it.
    GaveUp(String),
    /// Given up (nothing of it is kept) because a subgroup's lanes parted before a subgroup
    /// operation: the wide interpreter, which follows parted lanes, may run it.
    Parted(String),
}

/// The compiled forms of one pipeline's program, by key; a refusal is kept too, so it is not
/// tried again. Also what compiling cost ([`Compiles`]).
#[derive(Debug, Default)]
pub struct Cache(Mutex<(Vec<(Key, Compilation)>, Compiles)>);

/// What a pipeline's native compiles cost so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Compiles {
    /// The time spent compiling, in total (refusals included).
    pub time: Duration,
    /// The longest compile.
    pub longest: Duration,
    /// The largest compile budget measure ([`budget`]) of a program compiled.
    pub measure: u64,
}

/// A program compiled for one key, or why not.
type Compilation = Result<Arc<Compiled>, String>;

impl Cache {
    /// The program compiled for `key` (compiling it now if needed, and saying how long that
    /// took), or why it is not compiled; the time limit's error when `deadline` has passed,
    /// before the compile, between its emission and Cranelift's code generation, or after it
    /// (a compile is bounded by [`budget::BUDGET`]). A compile the deadline stopped is not
    /// kept: the next run compiles again.
    fn get(
        &self,
        prog: &Program,
        key: Key,
        deadline: Option<Instant>,
        limit: Duration,
    ) -> Result<Compilation, ExecError> {
        let late = || {
            deadline.is_some_and(|d| Instant::now() >= d).then(|| {
                crate::error::Trap::TimeLimit {
                    limit_ms: limit.as_millis(),
                    at: None,
                }
                .into()
            })
        };
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = all.0.iter().find(|(k, _)| *k == key) {
            return Ok(c.clone());
        }
        if let Some(e) = late() {
            return Err(e);
        }
        let start = Instant::now();
        let c = compile::compile(prog, key, deadline).map(Arc::new);
        let took = start.elapsed();
        let costs = &mut all.1;
        costs.time += took;
        costs.longest = costs.longest.max(took);
        if let Ok(code) = &c {
            costs.measure = costs.measure.max(code.measure);
        }
        if let Some(e) = late() {
            return Err(e);
        }
        // A bound on what one pipeline keeps (each dispatch shape is a key): past it the old
        // entries go; a dispatch still running holds its own `Arc`.
        if all.0.len() >= MAX_CACHED {
            all.0.clear();
        }
        all.0.push((key, c.clone()));
        Ok(c)
    }

    /// What compiling cost so far.
    pub fn compiles(&self) -> Compiles {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).1
    }
}

/// The most compiled forms one pipeline keeps.
const MAX_CACHED: usize = 32;

/// The fewest invocations in a unit of work a worker takes.
const MIN_BATCH: u64 = 256;
/// The most: a unit is a call of the compiled code, and a dispatch's units are handed out
/// through shared counters, whose cost per unit outweighed `saxpy`'s 256 invocations' work
/// (it ran no faster on 16 threads than on 2); but a worker that takes the last unit must
/// not be left with much more than the others.
const MAX_BATCH: u64 = 16384;

/// Invocations per unit for a dispatch of `invocations` on `threads` workers: about 64 units
/// a worker, a power of two between [`MIN_BATCH`] and [`MAX_BATCH`] (so a multiple of every
/// lockstep group's size: groups never span two units).
fn batch(invocations: u64, threads: usize) -> u64 {
    let per = invocations / (threads.max(1) as u64).saturating_mul(64);
    per.checked_next_power_of_two()
        .unwrap_or(MAX_BATCH)
        .clamp(MIN_BATCH, MAX_BATCH)
}

/// The most log entries the race screen takes before giving up, as the wide path's.
const MAX_LOG: usize = 1 << 22;

/// The most steps one invocation may take on the native tier: no tangle of the reference
/// path can then reach the step limit.
///
/// A tangle's count (a block's ops plus one per block it runs, inherited at a split, the
/// larger kept at a join) is the weight of a chain of block executions, each by some
/// invocation of its subgroup, none of them the same execution twice; so it is at most the
/// sum of its subgroup's invocations' own counts, at most `sg` times the largest. Giving up
/// past `limit / sg` steps is therefore never late (and may be early, when the reference path
/// would finish: it then runs the dispatch).
pub(crate) fn step_budget(limit: u64, sg: usize) -> u64 {
    limit / (sg.max(1) as u64)
}

/// The dispatch state the workers share.
struct Jit<'s> {
    s: &'s Shared<'s>,
    code: Arc<Compiled>,
    invocations: u64,
    /// Invocations per unit of work ([`batch`]).
    batch: u64,
    logging: bool,
    /// Every slot's template value.
    template: Vec<u64>,
    gave_up: Mutex<Option<String>>,
    /// Some worker gave up at a subgroup operation ([`Tier::Parted`]).
    parted: std::sync::atomic::AtomicBool,
    log: crate::wide::races::Gather,
}

impl Jit<'_> {
    fn give_up(&self, why: String) {
        let mut g = self.gave_up.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(why);
        }
        self.s.stop.store(true, Ordering::Relaxed);
    }
}

/// The region table of a dispatch ([`native::Region`]) and its count of regions: push
/// constants and buffers, every other region empty, padded with empty entries to a
/// power-of-two length ([`native::Ctx::region_mask`]).
fn regions(s: &Shared<'_>) -> (Vec<Region>, u64) {
    let empty = Region {
        base: std::ptr::NonNull::<u32>::dangling().as_ptr(),
        len: 0,
    };
    let mut table = vec![empty; FIRST_BUFFER as usize];
    if let Some(r) = table.get_mut(REGION_PUSH as usize) {
        *r = Region {
            base: s.push.as_ptr(),
            len: s.push.len(),
        };
    }
    // Every view starts on a word (`Resident::word_aligned`, checked before this tier).
    table.extend(s.buffers.iter().map(|(v, _)| match v.as_ptr() {
        Some(base) => Region { base, len: v.len },
        None => empty,
    }));
    let n = table.len() as u64;
    table.resize(table.len().next_power_of_two(), empty);
    (table, n)
}

/// One worker's state.
struct Worker<'w, 's> {
    j: &'w Jit<'s>,
    regions: Vec<Region>,
    /// Entries of `regions` that are regions (the rest pad it).
    nregions: u64,
    log: log::LogState,
    /// The log of the units run so far, handed in when the worker ends.
    kept: Vec<crate::wide::races::Access>,
    /// Its entries of whole tiles.
    kept_rows: Vec<crate::wide::rows::Rows>,
    group: group::GroupScratch,
    tiles: tiles::Tiles<'s>,
    stats: Stats,
}

impl crate::run::workers::Unit for Worker<'_, '_> {
    fn run(&mut self, i: u64) -> Result<(), ExecError> {
        let j = self.j;
        let first = i.saturating_mul(j.batch);
        let count = j.invocations.saturating_sub(first).min(j.batch);
        let mut ctx = Ctx {
            regions: self.regions.as_ptr(),
            nregions: self.nregions,
            region_mask: (self.regions.len() as u64).saturating_sub(1),
            stop: j.s.stop.as_ptr().cast_const().cast(),
            log: if j.logging {
                &mut self.log
            } else {
                std::ptr::null_mut()
            },
            template: j.template.as_ptr(),
            step_limit: step_budget(j.s.options.step_limit, j.s.sg),
            reason: 0,
            instructions: 0,
            group: &mut self.group,
            group_regs: self.group.regs.as_mut_ptr(),
            tiles: std::ptr::from_mut(&mut self.tiles).cast(),
        };
        let status = j.code.code.call(&mut ctx, first, count);
        self.log.close();
        self.stats.dense_matrix_ops += std::mem::take(&mut self.tiles.ops_run);
        match status {
            s if s == Status::Done as u64 => {
                self.stats.invocations += count;
                self.stats.wide_invocations += count;
                self.stats.jit_invocations += count;
                self.stats.instructions += ctx.instructions;
            }
            s if s == Status::GaveUp as u64 => {
                j.give_up(describe(ctx.reason));
                if matches!(ctx.reason & 0xff, reason::GROUP | reason::LINE) {
                    j.parted.store(true, Ordering::Relaxed);
                }
            }
            _ => {
                // The stop flag: the time limit names the loop header it stopped at; any
                // other reason ends quietly.
                let loc =
                    j.s.fast
                        .functions
                        .get(j.s.fast.entry as usize)
                        .and_then(|f| f.blocks.get(ctx.reason as usize))
                        .map_or(0, |b| b.term_loc);
                j.s.at_terminator(0, loc, || [0; 3])?;
            }
        }
        Ok(())
    }

    fn flush(&mut self, _: u64) {
        let j = self.j;
        let entries = self.log.log.len() + self.log.rows.len();
        if entries > 0 {
            let limit = MAX_LOG.min(j.s.options.race_log_limit);
            if j.log.count(entries, limit) {
                self.kept.append(&mut self.log.log);
                self.kept_rows.append(&mut self.log.rows);
            } else {
                j.give_up("the race screen's log is full".into());
                self.log.log.clear();
                self.log.rows.clear();
            }
        }
        let mut f = j.s.found.lock().unwrap_or_else(|e| e.into_inner());
        f.1.add(&self.stats);
        self.stats = Stats::default();
    }

    fn finish(&mut self) {
        self.j.log.hand_in(std::mem::take(&mut self.kept));
        self.j.log.hand_in_rows(std::mem::take(&mut self.kept_rows));
    }
}

/// A give-up code in words.
fn describe(code: u64) -> String {
    let what = match code & 0xff {
        reason::OUT_OF_BOUNDS => "an access outside its region",
        reason::UNALIGNED => "an access not aligned to 4 bytes",
        reason::DIVISION => "an undefined division",
        reason::SHIFT => "a shift by at least the width",
        reason::INDEX => "an index out of range",
        reason::STEPS => "the step bound",
        reason::DOT => "a dot product's AccSat overflow",
        reason::INTERNAL => "a state the compiled code never reaches",
        reason::GROUP => "a subgroup operation with a finding, or in a group that parted",
        reason::LINE => "a lockstep group's pointers off their line",
        reason::COOPMAT => "a cooperative-matrix op with a finding or an operand not uniform",
        _ => "an unknown reason",
    };
    format!(
        "{what} (block {}, op {})",
        (code >> 8) & 0xff_ffff,
        code >> 32
    )
}

/// Runs dispatch `s` of `groups` workgroups on the native tier.
pub(crate) fn run(
    s: &Shared<'_>,
    cache: &Cache,
    groups: u64,
    threads: usize,
) -> Result<Tier, ExecError> {
    let o = s.options;
    if o.trace {
        return Ok(Tier::NotTaken("tracing follows subgroups".into()));
    }
    if let Some(why) = s.kept_calls {
        let why = format!("function calls: {why}");
        s.note(format!("native: not taken: {why}"));
        return Ok(Tier::NotTaken(why));
    }
    let per_group = s
        .fast
        .local_size
        .iter()
        .map(|&x| u64::from(x))
        .product::<u64>();
    let key = Key {
        default_policy: o.policy == crate::policy::Policy::default(),
        checks: o.checks,
        races: o.checks && !o.allow.contains(Kind::Race),
        touched: o.touched && o.checks && !o.allow.contains(Kind::Race),
        groups: s.groups,
        sg: s.sg as u32,
    };
    let code = match cache.get(s.fast, key, s.deadline, o.time_limit)? {
        Ok(c) => c,
        Err(why) => {
            s.note(format!("native: not taken: {why}"));
            return Ok(Tier::NotTaken(why));
        }
    };
    let template = (0..s.fast.slots)
        .map(|slot| crate::run::alu::rd(&s.template, s.sg, slot, 0))
        .collect();
    let j = Jit {
        s,
        logging: key.races && code.sites > 0,
        code,
        invocations: groups.saturating_mul(per_group),
        batch: batch(groups.saturating_mul(per_group), threads),
        template,
        gave_up: Mutex::new(None),
        parted: std::sync::atomic::AtomicBool::new(false),
        log: crate::wide::races::Gather::default(),
    };
    let sites = j.code.sites;
    let result = crate::run::workers::run_all(s, j.invocations.div_ceil(j.batch), threads, || {
        let (regions, nregions) = regions(s);
        Worker {
            j: &j,
            regions,
            nregions,
            log: log::LogState::new(sites),
            kept: Vec::new(),
            kept_rows: Vec::new(),
            group: group::GroupScratch::new(
                j.code.group_ops.clone(),
                j.code.group_regs,
                s.fast.slots,
                s.sg,
            ),
            tiles: tiles::Tiles::new(j.code.coop.clone(), s),
            stats: Stats::default(),
        }
    });
    let parted = j.parted.load(Ordering::Relaxed);
    let gave_up = j.gave_up.into_inner().unwrap_or_else(|e| e.into_inner());
    if gave_up.is_none() && key.touched {
        // Before the screen takes the log: the bytes it covers ([`crate::check::touched`]).
        *s.fast_touched.lock().unwrap_or_else(|e| e.into_inner()) =
            j.log.touched(crate::check::touched::CAP);
    }
    let why = match gave_up {
        Some(why) => Some(why),
        None => j
            .log
            .may_race_over(s.buffers)
            .then(|| "a possible data race".to_string()),
    };
    let mut f = s.found.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = why {
        // Its counters are the reference path's to give.
        f.1 = Stats::default();
        drop(f);
        let how = if parted { "lanes parted" } else { "gave up" };
        s.note(format!("native: {how}: {why}"));
        return Ok(if parted {
            Tier::Parted(why)
        } else {
            Tier::GaveUp(why)
        });
    }
    drop(f);
    result?;
    let mut f = s.found.lock().unwrap_or_else(|e| e.into_inner());
    f.1.workgroups += groups;
    Ok(Tier::Done)
}

#[cfg(test)]
mod tests;
