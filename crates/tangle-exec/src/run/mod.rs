//! The SIMT executor: dispatch over workgroups in parallel, subgroups cooperating at barriers
//! inside a workgroup, and the interpreter loop that runs one tangle.

pub mod access;
pub mod alu;
mod budget;
pub mod builtins;
pub mod coopmat;
pub mod coopmat_dense;
mod descriptors;
pub mod dot;
pub mod group;
pub mod image;
pub mod memory;
pub mod resident;
mod sanitize;
pub mod tangle;
mod watch;
mod watchdog;
pub(crate) mod workers;

use crate::check::barrier::BarrierFinding;
use crate::check::kind::Kind;
use crate::check::race::RaceLog;
use crate::check::summary::Summaries;
use crate::check::uninit::{self, Shadow};
use crate::device::{Pipeline, Resources, RunOptions};
use crate::error::{ExecError, Trap};
use crate::policy::{Reconvergence, Rng, SwitchGrouping};
use crate::program::{Op, Program, RegionKind, Slot, Terminator};
use crate::report::{Diagnostic, Finding, Report, Stats};
use crate::semantics::sampler::Sampler;
use crate::trace::{Collector, Event, EventKind};
use access::{BufferKey, DescriptorTable, LaneFinding, Mem};
use alu::{bits_of, full_mask, rd, wr};
use builtins::Place;
use memory::Words;
use resident::Resident;
use sanitize::track_uninit;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tangle::{Apart, Frame, Schedule, Tangle};

/// A diagnostic with its sort key (workgroup, order found).
type Keyed = ((u64, u64), Diagnostic);

/// What every workgroup of a dispatch shares.
pub(crate) struct Shared<'a> {
    pub(crate) prog: &'a Program,
    /// The program the fast tiers run: `prog` with its calls inlined, or `prog`
    /// ([`Pipeline`]'s `fast`); the same slots, constants, variables and locations.
    pub(crate) fast: &'a Program,
    /// Why `prog` keeps its calls, when it does: the fast tiers' reason not to take it.
    pub(crate) kept_calls: Option<&'a str>,
    pub(crate) buffers: &'a [(memory::View, BufferKey)],
    /// For each region of `buffers` holding an image, what the image is.
    pub(crate) images: &'a [Option<image::ImageView>],
    /// The samplers, in `Resources::samplers` order (a handle is the index plus 1).
    pub(crate) samplers: Vec<Sampler>,
    /// The program's descriptor arrays with the pointer of each bound element, by element.
    pub(crate) descriptors: Vec<DescriptorTable>,
    pub(crate) push: &'a Words,
    /// Whether the program may write each region of `buffers` ([`crate::program::writes`]),
    /// or the bytes of one it may write ([`Resident::screened`]): the race screens log no
    /// load of a region whose bytes it never writes.
    pub(crate) writable: &'a [bool],
    /// The register file every subgroup starts from (constants and buffer pointers broadcast).
    pub(crate) template: Vec<u64>,
    pub(crate) sg: usize,
    pub(crate) groups: [u32; 3],
    pub(crate) options: &'a RunOptions,
    /// Set when the dispatch must end: an error, or the time limit ([`Shared::timed_out`]).
    /// Workers take no workgroup after it, and running workgroups leave at their next
    /// terminator or barrier. Shared with the process's timer ([`watchdog`]).
    pub(crate) stop: std::sync::Arc<AtomicBool>,
    /// Set, with `stop`, when the time limit passed.
    pub(crate) timed_out: std::sync::Arc<AtomicBool>,
    /// Diagnostics, each with its sort key (workgroup, order found), the summaries of every
    /// finding, and the counters.
    pub(crate) found: Mutex<(Vec<Keyed>, Stats, Summaries)>,
    /// Scheduling under the dispatch's policy.
    pub(crate) sched: Schedule<'a>,
    /// Trace events by workgroup, when tracing.
    pub(crate) events: Mutex<Collector>,
    /// Cooperative-matrix element positions under the run's layout.
    pub(crate) layouts: coopmat::Layouts,
    /// Every workgroup's buffer accesses as runs, for the race check across workgroups, and
    /// whether some were dropped at the bound.
    pub(crate) runs: Mutex<(
        Vec<crate::check::race::Access>,
        Option<crate::check::race::CutShort>,
    )>,
    /// Release sequences and synchronizes-with edges of buffer atomics, for the race check.
    pub(crate) sync: std::sync::Arc<Mutex<crate::check::sync::SyncState>>,
    /// The bytes the wide path's race log covers, as `(first pointer, end pointer, write)`,
    /// when [`RunOptions::touched`] asks (`None` inside: past the cap).
    pub(crate) fast_touched: Mutex<Option<Vec<(u64, u64, bool)>>>,
    /// Nanoseconds the dispatch's worker pools ran ([`crate::report::Timing::workers`]).
    pub(crate) worker_nanos: std::sync::atomic::AtomicU64,
    /// When the time limit passes ([`RunOptions::started`] plus the limit), for every path
    /// the dispatch takes; `None`: no limit.
    pub(crate) deadline: Option<std::time::Instant>,
    /// Why a faster path left the dispatch ([`crate::report::PathNotes`]).
    pub(crate) notes: Mutex<Vec<String>>,
}

impl Shared<'_> {
    /// Notes why a faster path left the dispatch to a slower one ([`crate::report::PathNotes`]).
    pub(crate) fn note(&self, why: String) {
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(why);
    }

    /// The checks at a terminator, the same on both paths: the step limit (a tangle's `steps`;
    /// `invocation` names its first invocation), then one relaxed load of the stop flag, which
    /// bounds how long a stopped dispatch keeps running to one block (or one barrier wait) per
    /// worker; the time limit names the terminator it stopped at. `Ok(true)`: the dispatch
    /// was stopped for another reason, so the caller ends quietly.
    pub(crate) fn at_terminator(
        &self,
        steps: u64,
        term_loc: u32,
        invocation: impl FnOnce() -> [u32; 3],
    ) -> Result<bool, ExecError> {
        if steps > self.options.step_limit {
            return Err(Trap::StepLimit {
                limit: self.options.step_limit,
                at: self.prog.location(term_loc),
                invocation: invocation(),
            }
            .into());
        }
        if !self.stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        if self.timed_out.load(Ordering::Relaxed) {
            return Err(Trap::TimeLimit {
                limit_ms: self.options.time_limit.as_millis(),
                at: Some(self.prog.location(term_loc)),
            }
            .into());
        }
        Ok(true)
    }
}

/// Runs a dispatch over `res`: its memory made resident, the dispatch, the results read back
/// into `res` ([`Resident`]); on an error `res` is left as it was.
pub fn dispatch(
    p: &Pipeline,
    res: &mut Resources,
    groups: [u32; 3],
    options: &RunOptions,
) -> Result<Report, ExecError> {
    let start = std::time::Instant::now();
    // Refused before anything is allocated, as the memory limit promises.
    admit(p, res, groups, options)?;
    let mut resident = Resident::new(std::mem::take(res));
    match dispatch_resident(p, &mut resident, groups, options) {
        Ok(mut report) => {
            *res = resident.into_resources();
            // The whole call, the conversions in and out included.
            report.timing.total = start.elapsed();
            Ok(report)
        }
        Err(e) => {
            *res = resident.into_backup();
            Err(e)
        }
    }
}

/// Runs a dispatch on resident memory. A fast path that gives up restarts from the
/// dispatch's inputs, as [`dispatch`] does: the regions the program may write are refreshed
/// first where an earlier dispatch wrote them ([`Resident::refresh`]).
pub fn dispatch_resident(
    p: &Pipeline,
    resident: &mut Resident,
    groups: [u32; 3],
    options: &RunOptions,
) -> Result<Report, ExecError> {
    let start = std::time::Instant::now();
    let (total, threads) = admit(p, resident.bytes(), groups, options)?;
    let writable = resident.writable(&p.writes);
    if options.wide {
        // A fast path may give up: the bytes must be this dispatch's inputs.
        resident.refresh(&writable);
    }
    let result = run_on(
        p, resident, &writable, groups, total, threads, options, start,
    );
    // Finished or not, what the program may write may have changed.
    resident.written(&writable);
    result
}

/// What is checked before a dispatch over resources of `res`'s sizes allocates anything: the
/// workgroup count against the device's limit, the memory budget (which gives the worker
/// threads) and each image's texel count. Returns the workgroups and the threads.
fn admit(
    p: &Pipeline,
    res: &Resources,
    groups: [u32; 3],
    options: &RunOptions,
) -> Result<(u64, usize), ExecError> {
    crate::allocation::check_views(res)?;
    let max = p.profile.max_workgroup_count;
    if groups.iter().zip(max).any(|(g, m)| *g > m) {
        return Err(ExecError::Limit(format!(
            "{groups:?} workgroups exceed the device's maximum {max:?}"
        )));
    }
    let sg = p.profile.subgroup_size.clamp(1, 128) as usize;
    // A workgroup's register files are memory like its workgroup and Function variables: the
    // memory limit the user set bounds them (`budget::threads` counts them per worker, and one
    // worker that does not fit is `Trap::MemoryLimit`, exit 1), not a cap of tangle's own.
    let total = groups.iter().map(|&g| u64::from(g)).product::<u64>();
    let threads = budget::threads(&p.program, sg, res, options, total)?;
    let images = res.images.iter().map(|(&(s, b), i)| (s, b, i));
    let elements = res.image_elements.iter().map(|(&(s, b, _), i)| (s, b, i));
    for (set, binding, img) in images.chain(elements) {
        let texels = img
            .extent
            .iter()
            .map(|&e| u64::from(e))
            .product::<u64>()
            .saturating_mul(u64::from(img.format.bytes()));
        if texels != img.texels.len() as u64 {
            return Err(ExecError::Resource(format!(
                "the image at set {set}, binding {binding} has {} bytes, but {:?} texels of {} need {texels}",
                img.texels.len(),
                img.extent,
                img.format.name
            )));
        }
    }
    Ok((total, threads))
}

/// The dispatch itself, on `resident`'s regions.
#[allow(clippy::too_many_arguments)]
fn run_on(
    p: &Pipeline,
    resident: &Resident,
    writable: &[bool],
    groups: [u32; 3],
    total: u64,
    threads: usize,
    options: &RunOptions,
    start: std::time::Instant,
) -> Result<Report, ExecError> {
    let prog = &*p.program;
    let sg = p.profile.subgroup_size.clamp(1, 128) as usize;
    let per_subgroup = (prog.slots as usize).saturating_mul(sg);
    let res = resident.bytes();
    // The buffers' keys (not the images': an image is no element of a descriptor array).
    let images = &resident.images[..];
    let keys: Vec<BufferKey> = resident
        .regions
        .iter()
        .zip(images)
        .filter(|(_, v)| v.is_none())
        .map(|((_, k), _)| *k)
        .collect();
    // As for images, element 0 of an array of samplers may be its binding's plain sampler.
    let samplers: Vec<((u32, u32, u32), Sampler)> = res
        .samplers
        .iter()
        .map(|(&(s, b), v)| ((s, b, 0), *v))
        .chain(res.sampler_elements.iter().map(|(k, v)| (*k, *v)))
        .collect();
    let descriptors = descriptors::descriptor_tables(prog, &keys, images, &samplers)?;
    let mut template = vec![0u64; per_subgroup];
    for &(slot, v) in &prog.constants {
        for l in 0..sg {
            wr(&mut template, sg, slot, l, v);
        }
    }
    for var in &prog.variables {
        let handle = match var.region {
            RegionKind::Image { index } => {
                Some(descriptors::image_handle(prog, index, images, &samplers)?)
            }
            RegionKind::Sampler { set, binding } => {
                Some(descriptors::sampler_handle(&samplers, set, binding)?)
            }
            _ => None,
        };
        if let Some(h) = handle {
            for l in 0..sg {
                wr(&mut template, sg, var.slot, l, h);
            }
        }
        if let RegionKind::Buffer { set, binding } = var.region {
            let idx = keys.iter().position(|k| *k == (set, binding, None)).ok_or_else(|| {
                ExecError::Resource(format!("the shader uses a buffer at set {set}, binding {binding}, but none is bound"))
            })?;
            for l in 0..sg {
                wr(&mut template, sg, var.slot, l, memory::buffer_address(idx));
            }
        }
    }
    // With the bytes touched asked for, the wide path logs the loads of read-only buffers too.
    // Loads through a view sharing bytes with a written one are logged too.
    let every = vec![true; writable.len()];
    let aliased = resident.screened(writable);
    let screened = if options.touched { &every } else { &aliased };
    let shared = Shared {
        prog,
        fast: &p.fast,
        kept_calls: p.kept_calls.as_deref(),
        buffers: &resident.regions,
        descriptors,
        images,
        samplers: samplers.into_iter().map(|(_, s)| s).collect(),
        push: &resident.push,
        writable: screened,
        template,
        sg,
        groups,
        options,
        stop: Default::default(),
        timed_out: Default::default(),
        found: Mutex::new((Vec::new(), Stats::default(), Summaries::default())),
        sched: Schedule::new(prog, options.policy),
        events: Mutex::new(Collector::default()),
        layouts: coopmat::Layouts::new(prog, sg, options.coopmat_layout),
        runs: Mutex::new((Vec::new(), None)),
        sync: std::sync::Arc::new(Mutex::new(crate::check::sync::SyncState::new(
            options.race_log_limit,
        ))),
        fast_touched: Mutex::new(None),
        worker_nanos: std::sync::atomic::AtomicU64::new(0),
        deadline: options
            .started
            .unwrap_or(start)
            .checked_add(options.time_limit),
        notes: Mutex::new(Vec::new()),
    };
    // The native tier first; a program it does not take goes to the wide interpreter, and a
    // dispatch it gave up to the reference path (or to the wide interpreter, from its inputs
    // again, when lanes parted before a subgroup operation).
    // A matrix element's owner is implementation-defined, and the fast paths' race screens
    // know owners under this run's layout only ([`Pipeline::matrix_meets_plain`]).
    // The fast paths number workgroups from zero: a dispatch with a base runs on the reference
    // path alone.
    // Regions sharing bytes that the program may write take the wide interpreter: its
    // accesses go op by op through their views, and its race screen keys bytes as the
    // reference path's race check does (`Gather::may_race_over`). The native tier's facts
    // about pointers and its hoisted checks assume regions apart: it refuses them.
    let fast_paths = options.wide
        && options.base == [0; 3]
        && !(p.matrix_meets_plain && Workgroup::races_on(&shared));
    let aliased_writes = resident.aliased_writes(writable);
    if fast_paths && options.jit && aliased_writes {
        shared.note("native: not taken: a region it may write shares bytes with another".into());
    }
    // The native tier's region table holds word pointers: a view starting inside a word
    // takes the wide interpreter, which accesses it through its view.
    let native = match fast_paths && options.jit && resident.word_aligned() && !aliased_writes {
        true => crate::jit::run(&shared, &p.native, total, threads)?,
        false => crate::jit::Tier::NotTaken("off".into()),
    };
    let fast = match native {
        crate::jit::Tier::Done => Fast::Done,
        crate::jit::Tier::GaveUp(_) => Fast::GaveUp,
        crate::jit::Tier::Parted(_) => {
            shared.stop.store(false, Ordering::Relaxed);
            shared.timed_out.store(false, Ordering::Relaxed);
            resident.restore(writable);
            run_wide(&shared, total, threads)?
        }
        crate::jit::Tier::NotTaken(_) if fast_paths => run_wide(&shared, total, threads)?,
        crate::jit::Tier::NotTaken(_) => Fast::NotTaken,
    };
    if fast_paths && fast != Fast::Done {
        // The reference path starts again from the inputs: the memory is those unless a
        // fast path ran (and gave up) since it was last restored.
        shared.stop.store(false, Ordering::Relaxed);
        shared.timed_out.store(false, Ordering::Relaxed);
        if fast == Fast::GaveUp {
            resident.restore(writable);
        }
        workers::run_all(&shared, total, threads, || RefWorker {
            wg: Workgroup::new(&shared),
            s: &shared,
        })?;
    } else if !fast_paths {
        workers::run_all(&shared, total, threads, || RefWorker {
            wg: Workgroup::new(&shared),
            s: &shared,
        })?;
    }
    let (mut found, mut stats, mut summaries) =
        std::mem::take(&mut *shared.found.lock().unwrap_or_else(|e| e.into_inner()));
    let (mut runs, cut) =
        std::mem::take(&mut *shared.runs.lock().unwrap_or_else(|e| e.into_inner()));
    let touched = match (options.touched && Workgroup::races_on(&shared), fast) {
        (false, _) => None,
        (true, Fast::Done) => {
            let spans = shared
                .fast_touched
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            spans.map(|s| crate::check::touched::from_spans(&s, &resident.regions))
        }
        (true, _) => cut
            .is_none()
            .then(|| crate::check::touched::from_runs(&runs, &resident.regions)),
    };
    sanitize::races_across(
        &shared,
        &mut runs,
        &mut found,
        &mut summaries,
        &mut stats.dropped_diagnostics,
    );
    found.sort_by_key(|(k, _)| *k);
    if found.len() > options.max_findings {
        stats.dropped_diagnostics += (found.len() - options.max_findings) as u64;
        found.truncate(options.max_findings);
    }
    let overflow = shared
        .sync
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .overflow;
    let race_cut_short = cut.or(overflow).map(|c| sanitize::cut_short(&shared, c));
    let policy = shared.sched.policy.to_string();
    let trace = options.trace.then(|| {
        let events = shared
            .events
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        events.finish(policy, sg as u32)
    });
    Ok(Report {
        diagnostics: found.into_iter().map(|(_, d)| d).collect(),
        summaries: summaries.finish(),
        race_cut_short,
        stats,
        trace,
        timing: crate::report::Timing {
            total: start.elapsed(),
            workers: std::time::Duration::from_nanos(shared.worker_nanos.load(Ordering::Relaxed)),
        },
        touched,
        paths: crate::report::PathNotes(
            shared.notes.into_inner().unwrap_or_else(|e| e.into_inner()),
        ),
    })
}

/// A reference-path worker: one workgroup's state.
struct RefWorker<'s> {
    wg: Workgroup,
    s: &'s Shared<'s>,
}

impl workers::Unit for RefWorker<'_> {
    fn run(&mut self, i: u64) -> Result<(), ExecError> {
        self.wg.run(self.s, i)
    }
    fn flush(&mut self, i: u64) {
        self.wg.flush(self.s, i);
    }
}

/// A wide-path worker: one batch's state.
struct WideWorker<'w, 's> {
    batch: crate::wide::Batch,
    w: &'w crate::wide::Wide<'s>,
}

impl workers::Unit for WideWorker<'_, '_> {
    fn run(&mut self, i: u64) -> Result<(), ExecError> {
        self.batch.run(self.w, i)
    }
    fn flush(&mut self, _: u64) {
        self.batch.flush(self.w);
    }
    fn finish(&mut self) {
        self.batch.finish(self.w);
    }
}

/// What a fast path did with a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fast {
    /// Ran it.
    Done,
    /// Ran part of it and gave it up: the memory holds some of its writes.
    GaveUp,
    /// Did not take the program: nothing ran.
    NotTaken,
}

/// Runs the dispatch on the wide path ([`crate::wide`]); when it gives up, nothing of its run
/// is kept but its writes to memory.
fn run_wide(s: &Shared<'_>, groups: u64, threads: usize) -> Result<Fast, ExecError> {
    let per_group = s
        .prog
        .local_size
        .iter()
        .map(|&x| u64::from(x))
        .product::<u64>();
    let w = match crate::wide::Wide::new(s, groups.saturating_mul(per_group), threads) {
        Ok(w) => w,
        Err(why) => {
            s.note(format!("wide: not taken: {}", why.0));
            return Ok(Fast::NotTaken);
        }
    };
    let result = workers::run_all(s, w.batches(), threads, || WideWorker {
        batch: crate::wide::Batch::new(&w),
        w: &w,
    });
    let outcome = w.outcome();
    if let Err(why) = &outcome {
        s.note(format!("wide: gave up: {}", why.0));
        // Its findings and counters are the reference path's to give.
        let mut f = s.found.lock().unwrap_or_else(|e| e.into_inner());
        f.1 = Stats::default();
        return Ok(Fast::GaveUp);
    }
    result?;
    let mut f = s.found.lock().unwrap_or_else(|e| e.into_inner());
    f.1.workgroups += groups;
    Ok(Fast::Done)
}

/// One subgroup's state.
struct Subgroup {
    regs: Vec<u64>,
    invocation: Words,
    tangles: Vec<Tangle>,
    /// `LocalInvocationIndex` of lane 0.
    first_index: u32,
    lanes: usize,
    /// The policy's random choices for this subgroup of the current workgroup.
    rng: Rng,
    /// Subgroup-scope barriers with memory semantics passed (the race check's ordering).
    barriers: u64,
    /// The origin of each slot and lane's value, when the uninitialised-value check is on
    /// (empty otherwise; [`crate::check::uninit`]).
    poison: uninit::Poison,
}

/// A workgroup's state, reused for every workgroup a thread runs.
struct Workgroup {
    subgroups: Vec<Subgroup>,
    memory: Words,
    stats: Stats,
    diagnostics: Vec<Diagnostic>,
    /// Every finding of the workgroup being run, summarised.
    summaries: Summaries,
    /// Findings of the workgroup being run so far (the second part of their sort key).
    seq: u64,
    found: Vec<LaneFinding>,
    scratch: Vec<u64>,
    id: [u32; 3],
    /// The linear number of the workgroup being run.
    wg_index: u64,
    const_map: HashMap<Slot, u64>,
    /// Trace events of the workgroup being run (at most [`crate::trace::MAX_EVENTS`]).
    events: Vec<Event>,
    /// Trace events of the workgroup being run, kept or not.
    produced: u64,
    /// The watched invocations of the workgroup being run ([`RunOptions::watch`]).
    watch: watch::Watch,
    /// Masks of the tangles the last pick merged.
    joined: Vec<u128>,
    /// Buffers of cooperative-matrix MulAdd.
    coopmat: coopmat::Scratch,
    /// The race check's log of the workgroup being run.
    races: RefCell<RaceLog>,
    /// The workgroup memory written so far (the uninitialised-value check).
    written: RefCell<Shadow>,
    /// Whether a subgroup gave its turn up while spinning ([`SPIN_TURN`]).
    yielded: bool,
}

/// Steps a tangle that ran an atomic runs in one turn before it gives the turn, at a block's
/// start, to the other subgroups: a spin loop waiting for another subgroup's atomic (release/acquire
/// between subgroups of one workgroup) then finishes. Counted in steps, so the interleaving
/// is the same on every run.
const SPIN_TURN: u64 = 1024;

impl Workgroup {
    fn new(s: &Shared<'_>) -> Self {
        let invocations = s
            .prog
            .local_size
            .iter()
            .map(|&x| x as usize)
            .product::<usize>();
        // Tracked unless both kinds of use are allowed, and also where robustness leaves
        // values to follow to the output (`check::robust::follows_value`).
        let uninit = s.options.checks
            && (!(s.options.allow.contains(Kind::Uninit)
                && s.options.allow.contains(Kind::UninitIndex))
                || (s.options.robustness != crate::check::robust::Robustness::Off
                    && !s.options.allow.contains(Kind::RobustAccess)));
        let subgroups = (0..invocations.div_ceil(s.sg))
            .map(|i| Subgroup {
                regs: s.template.clone(),
                invocation: Words::new(s.prog.invocation_bytes.saturating_mul(s.sg as u64)),
                tangles: Vec::new(),
                first_index: (i * s.sg) as u32,
                lanes: (invocations - i * s.sg).min(s.sg),
                rng: Rng::new(0, &[]),
                barriers: 0,
                poison: uninit::Poison::new(if uninit { s.template.len() } else { 0 }, s.sg)
                    .with_memory(s.sg, s.prog.invocation_bytes),
            })
            .collect();
        Workgroup {
            subgroups,
            memory: Words::new(s.prog.workgroup_bytes),
            stats: Stats::default(),
            diagnostics: Vec::new(),
            summaries: Summaries::default(),
            seq: 0,
            found: Vec::new(),
            scratch: Vec::new(),
            id: [0; 3],
            wg_index: 0,
            const_map: s.prog.constants.iter().copied().collect(),
            events: Vec::new(),
            watch: watch::Watch::default(),
            produced: 0,
            joined: Vec::new(),
            coopmat: coopmat::Scratch::default(),
            races: RefCell::new(RaceLog {
                on: Workgroup::races_on(s),
                limit: s.options.race_log_limit,
                sync: Some(s.sync.clone()),
                ..RaceLog::default()
            }),
            written: RefCell::new(Shadow::new(uninit)),
            yielded: false,
        }
    }

    /// Hands this workgroup's findings and counters to the dispatch.
    fn flush(&mut self, s: &Shared<'_>, i: u64) {
        let mut f = s.found.lock().unwrap_or_else(|e| e.into_inner());
        f.1.add(&self.stats);
        self.stats = Stats::default();
        if self.produced > 0 {
            let mut ev = s.events.lock().unwrap_or_else(|e| e.into_inner());
            ev.add(i, std::mem::take(&mut self.events), self.produced);
            self.produced = 0;
        }
        for (k, d) in self.diagnostics.drain(..).enumerate() {
            f.0.push(((i, k as u64), d));
        }
        self.seq = 0;
        self.flush_races(s);
        if !self.summaries.is_empty() {
            f.2.merge(std::mem::take(&mut self.summaries));
        }
        // Keep the earliest findings only; the rest are counted.
        let keep = s.options.max_findings;
        if f.0.len() > 4 * keep.max(1) {
            f.0.sort_by_key(|(k, _)| *k);
            let extra = f.0.len() - keep;
            f.1.dropped_diagnostics += extra as u64;
            f.0.truncate(keep);
        }
    }

    fn place(&self, s: &Shared<'_>, local_index: u32) -> Place {
        Place {
            workgroup: self.id,
            groups: s.groups,
            local_size: s.prog.local_size,
            local_index,
            subgroup_size: s.sg as u32,
        }
    }

    /// Writes a constant value (slots from `init`) into memory at `off` of `w` using `ty`'s image.
    fn write_const(&self, prog: &Program, w: &Words, off: u64, ty: u32, init: Slot) {
        for (i, leaf) in prog.leaves_of(ty).iter().enumerate() {
            let v = self.const_map.get(&(init + i as u32)).copied().unwrap_or(0);
            if w.contains(off + leaf.offset, u64::from(leaf.bytes)) {
                w.write(off + leaf.offset, leaf.bytes, v);
            }
        }
    }

    /// Runs workgroup number `i` (linear, x fastest).
    fn run(&mut self, s: &Shared<'_>, i: u64) -> Result<(), ExecError> {
        self.id = sanitize::workgroup_id(i, s.groups, s.options.base);
        self.wg_index = i;
        self.races.get_mut().start(i);
        let prog = s.prog;
        self.events.clear();
        self.produced = 0;
        if s.options.trace && !s.options.watch.is_empty() {
            self.watch
                .start(&s.options.watch, self.id, prog.local_size, s.sg);
        }
        let seed = match s.options.policy.reconvergence {
            Reconvergence::Random(seed) => seed,
            _ => 0,
        };
        self.memory.zero();
        let uninit_on = self.written.get_mut().on;
        if uninit_on {
            self.written.get_mut().start(prog.workgroup_bytes);
        }
        for var in &prog.variables {
            if let (RegionKind::Workgroup, Some(init)) = (var.region, var.init) {
                self.write_const(prog, &self.memory, var.offset, var.ty, init);
                if uninit_on {
                    // The initializer's members: padding stays unwritten.
                    for &(o, len) in prog.spans_of(var.ty) {
                        self.written.get_mut().write(var.offset + o, len);
                    }
                }
            }
        }
        let s_n = s.sg;
        let entry = Frame {
            func: prog.entry,
            block: 0,
            op: 0,
        };
        for k in 0..self.subgroups.len() {
            let (first, lanes) = match self.subgroups.get(k) {
                Some(sg) => (sg.first_index, sg.lanes),
                None => continue,
            };
            let places: Vec<Place> = (0..lanes)
                .map(|l| self.place(s, first + l as u32))
                .collect();
            let Some(sg) = self.subgroups.get_mut(k) else {
                continue;
            };
            sg.regs.copy_from_slice(&s.template);
            sg.invocation.zero();
            sg.tangles.clear();
            sg.tangles.push(Tangle {
                mask: full_mask(lanes),
                stack: vec![entry],
                blocked: false,
                steps: 0,
                apart: Vec::new(),
            });
            sg.rng = Rng::new(seed, &[i, k as u64]);
            sg.barriers = 0;
            if sg.poison.on() {
                sg.poison.clear();
                for &(slot, count, loc) in &prog.undefs {
                    for s in slot..slot + count {
                        for l in 0..lanes {
                            uninit::set(&mut sg.poison, s_n, s, l, loc + 1);
                        }
                    }
                }
                for &(off, bytes, loc) in &prog.undef_memory {
                    for l in 0..lanes {
                        sg.poison.mem_set(l, off, bytes, loc + 1);
                    }
                }
            }
            self.stats.invocations += lanes as u64;
            let Some(sg) = self.subgroups.get(k) else {
                continue;
            };
            for var in &prog.variables {
                if var.region != RegionKind::Invocation {
                    continue;
                }
                for (l, place) in places.iter().enumerate() {
                    let base = l as u64 * prog.invocation_bytes + var.offset;
                    if let Some(b) = var.builtin {
                        if let Some(vals) = place.value(b) {
                            for (leaf, &v) in prog.leaves_of(var.ty).iter().zip(vals.as_slice()) {
                                sg.invocation.write(base + leaf.offset, leaf.bytes, v);
                            }
                        }
                    } else if let Some(init) = var.init {
                        self.write_const(prog, &sg.invocation, base, var.ty, init);
                    }
                }
            }
        }
        self.stats.workgroups += 1;
        loop {
            // Without this, a stopped workgroup whose subgroups still hold tangles would release
            // barriers forever.
            if s.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let (mut waiting, mut yielded) = (false, false);
            for k in 0..self.subgroups.len() {
                self.run_subgroup(s, k)?;
                yielded |= std::mem::take(&mut self.yielded);
                waiting |= self
                    .subgroups
                    .get(k)
                    .is_some_and(|sg| !sg.tangles.is_empty());
            }
            // A subgroup gave its turn up: not every one waits at a barrier yet.
            if yielded {
                continue;
            }
            if !waiting {
                self.barrier_races(s, None);
                return Ok(());
            }
            // Every subgroup is done or waits at a barrier.
            if s.options.checks && !s.options.allow.contains(Kind::Barrier) {
                if let Some((loc, local, f)) = self.divergent_barrier(s) {
                    self.record(s, loc, local, Finding::Barrier(f));
                    // A real GPU would hang or go on with corrupt data: this workgroup ends.
                    for sg in &mut self.subgroups {
                        sg.tangles.clear();
                    }
                    self.barrier_races(s, None);
                    return Ok(());
                }
            }
            let semantics = self.waiting_semantics(s);
            self.barrier_races(s, Some(semantics));
            // Release the barrier.
            for sg in &mut self.subgroups {
                tangle::release(&mut sg.tangles);
            }
        }
    }

    /// When every tangle of the workgroup waits at a barrier: `None` if they all wait at one
    /// position and no invocation has finished, else the barrier divergence
    /// ([`crate::check::barrier`]) at the barrier of the tangle holding the lowest
    /// `LocalInvocationIndex`, with that index.
    fn divergent_barrier(&self, s: &Shared<'_>) -> Option<(u32, u32, BarrierFinding)> {
        let total: u32 = self.subgroups.iter().map(|sg| sg.lanes as u32).sum();
        let first = self
            .subgroups
            .iter()
            .flat_map(|sg| sg.tangles.iter().map(move |t| (sg.first_index, t)))
            .min_by_key(|(base, t)| base + t.mask.trailing_zeros())?;
        let (mut arrived, mut waiting) = (0u32, 0u32);
        for t in self.subgroups.iter().flat_map(|sg| &sg.tangles) {
            waiting += t.mask.count_ones();
            if t.stack == first.1.stack {
                arrived += t.mask.count_ones();
            }
        }
        if arrived == total {
            return None;
        }
        let frame = first.1.stack.last()?;
        let loc = s
            .prog
            .functions
            .get(frame.func as usize)
            .and_then(|f| f.blocks.get(frame.block as usize))
            .and_then(|b| b.locs.get((frame.op as usize).checked_sub(1)?))
            .copied()
            .unwrap_or(0);
        let finding = BarrierFinding {
            scope: "Workgroup",
            arrived,
            invocations: total,
            finished: total - waiting,
        };
        Some((loc, first.0 + first.1.mask.trailing_zeros(), finding))
    }

    /// The Memory Semantics and [`crate::check::sync`] flags of the barrier the workgroup's
    /// first waiting tangle waits at.
    fn waiting_semantics(&self, s: &Shared<'_>) -> (u32, u8) {
        let frame = self
            .subgroups
            .iter()
            .flat_map(|sg| sg.tangles.first())
            .find_map(|t| t.stack.last());
        let op = frame.and_then(|f| {
            s.prog
                .functions
                .get(f.func as usize)?
                .blocks
                .get(f.block as usize)?
                .ops
                .get((f.op as usize).checked_sub(1)?)
        });
        match op {
            Some(Op::ControlBarrier { semantics, sync }) => (*semantics, *sync),
            _ => (0, 0),
        }
    }

    /// Runs subgroup `k` until it finishes or every tangle waits at a barrier.
    fn run_subgroup(&mut self, s: &Shared<'_>, k: usize) -> Result<(), ExecError> {
        loop {
            if s.stop.load(Ordering::Relaxed) || self.yielded {
                return Ok(());
            }
            let Some(sg) = self.subgroups.get_mut(k) else {
                return Ok(());
            };
            let Some(ti) = tangle::pick(
                &s.sched,
                &mut sg.tangles,
                &mut sg.rng,
                &mut self.stats,
                &mut self.joined,
            ) else {
                return Ok(());
            };
            let t = sg.tangles.swap_remove(ti);
            if let (true, false, Some(&frame)) =
                (s.options.trace, self.joined.is_empty(), t.stack.last())
            {
                let from = std::mem::take(&mut self.joined);
                self.trace(s, k, frame, EventKind::Join { from });
            }
            self.run_tangle(s, k, t)?;
        }
    }

    /// Records lane findings of one op as diagnostics.
    fn report(&mut self, s: &Shared<'_>, first: u32, loc: u32) {
        for (l, f) in std::mem::take(&mut self.found) {
            self.record(s, loc, first + l as u32, f);
        }
    }

    /// Records one finding of the invocation with `LocalInvocationIndex` `local` at location
    /// `loc`, unless the run's options turn its kind off.
    fn record(&mut self, s: &Shared<'_>, loc: u32, local: u32, f: Finding) {
        let kind = f.kind();
        if (!s.options.checks && !f.always_reported()) || s.options.allow.contains(kind) {
            return;
        }
        let d = Diagnostic {
            finding: f,
            at: s.prog.location(loc),
            invocation: self.place(s, local).global_id(),
            workgroup: self.id,
        };
        let key = (self.wg_index, self.seq);
        self.seq += 1;
        if self.diagnostics.len() >= s.options.max_findings {
            self.stats.dropped_diagnostics += 1;
        } else {
            self.diagnostics.push(d.clone());
        }
        self.summaries.add(loc, kind, key, d);
    }

    /// Runs tangle `t` of subgroup `k` until it ends, waits, splits, or is no longer first.
    fn run_tangle(&mut self, s: &Shared<'_>, k: usize, mut t: Tangle) -> Result<(), ExecError> {
        let prog = s.prog;
        let n = s.sg;
        let Some(sg) = self.subgroups.get_mut(k) else {
            return Ok(());
        };
        let first = sg.first_index;
        let turn = t.steps;
        // Whether it ran an atomic in this turn (a spin may wait for another subgroup).
        let mut spun = false;
        loop {
            let Some(frame) = t.stack.last().copied() else {
                return Ok(());
            };
            let Some(func) = prog.functions.get(frame.func as usize) else {
                return Ok(());
            };
            let Some(block) = func.blocks.get(frame.block as usize) else {
                return Ok(());
            };
            if spun && frame.op == 0 && t.steps - turn > SPIN_TURN {
                self.yielded = true;
                self.push_tangle(k, t);
                return Ok(());
            }
            let active = u64::from(t.mask.count_ones());
            let start = frame.op as usize;
            if start == 0 && s.options.trace {
                self.trace(s, k, frame, EventKind::Block { mask: t.mask });
            }
            let mut executed = 0u64;
            let mut stop_at: Option<(usize, bool)> = None; // (op index, is barrier)
            let mut pending: Vec<(u32, Vec<LaneFinding>)> = Vec::new();
            // DEBUG: the values of watched lanes, before each instruction (watch.rs).
            let watching = s.options.trace && self.watch.mask(k) & t.mask != 0;
            let mut looks: Vec<watch::Look> = Vec::new();
            let mut dropped_looks = 0u64;
            {
                let Some(sg) = self.subgroups.get_mut(k) else {
                    return Ok(());
                };
                let mem = Mem {
                    buffers: s.buffers,
                    descriptors: &s.descriptors,
                    images: s.images,
                    samplers: &s.samplers,
                    push: s.push,
                    workgroup: &self.memory,
                    invocation: &sg.invocation,
                    invocation_bytes: prog.invocation_bytes,
                    races: self.races.get_mut().on.then_some(&self.races),
                    written: self.written.get_mut().on.then_some(&self.written),
                    robust: (s.options.robustness, s.options.policy.robust),
                    image_robust: s.options.image_robustness,
                    coopmat_robust: s.options.coopmat_robustness,
                    null_descriptor: s.options.null_descriptor,
                };
                if let Some(r) = mem.races {
                    let mut r = r.borrow_mut();
                    r.first = first;
                    r.sg_epoch = ((k as u64) << 32) | sg.barriers;
                }
                for (j, op) in block.ops.iter().enumerate().skip(start) {
                    let before = block.locs.get(j.wrapping_sub(1));
                    if watching && (j == start || block.locs.get(j) != before) {
                        // After the instruction of the op before (0: at the block's start).
                        let at = before.and_then(|&l| prog.locations.get(l as usize));
                        let at = at.map_or(0, |l| l.offset);
                        let regs = (sg.regs.as_slice(), n);
                        if !self
                            .watch
                            .look(prog, func, k, t.mask, regs, &mem, at, &mut looks)
                        {
                            dropped_looks += 1;
                        }
                    }
                    match op {
                        Op::Call { .. } => {
                            stop_at = Some((j, false));
                            break;
                        }
                        Op::ControlBarrier { .. } => {
                            stop_at = Some((j, true));
                            break;
                        }
                        _ => {}
                    }
                    executed += 1;
                    // Without checks the division and shift checks are skipped, not only their
                    // reports (they find nothing else).
                    if matches!(
                        op,
                        Op::CheckDivision { .. }
                            | Op::CheckShift { .. }
                            | Op::CheckDomain { .. }
                            | Op::CheckWrap { .. }
                            | Op::CheckRemainderSign { .. }
                    ) && !s.options.checks
                    {
                        continue;
                    }
                    if let Some(r) = mem.races {
                        r.borrow_mut().loc = block.locs.get(j).copied().unwrap_or(0);
                    }
                    let handled = match op {
                        Op::Undef { dst, count } => {
                            if sg.poison.on() {
                                let o = block.locs.get(j).copied().unwrap_or(0) + 1;
                                for l in bits_of(t.mask, n) {
                                    for s in *dst..*dst + *count {
                                        uninit::set(&mut sg.poison, n, s, l, o);
                                    }
                                }
                            }
                            true
                        }
                        Op::Atomic { .. } => {
                            spun = true;
                            false
                        }
                        Op::Fence { sync } => {
                            sanitize::fence(&mem, t.mask, n, *sync);
                            true
                        }
                        Op::SubgroupBarrier { semantics } => {
                            if *semantics != 0 {
                                sg.barriers += 1;
                                if let Some(r) = mem.races {
                                    r.borrow_mut().sg_epoch = ((k as u64) << 32) | sg.barriers;
                                }
                            }
                            if let Some(f) = sanitize::subgroup_barrier(t.mask, &sg.tangles) {
                                self.found.push((t.mask.trailing_zeros() as usize, f));
                            }
                            true
                        }
                        _ => false,
                    };
                    if s.options.checks {
                        crate::check::index::check(op, &sg.regs, n, t.mask, &mut self.found);
                    }
                    if !handled
                        && !crate::check::arith::exec_check(
                            op,
                            &sg.regs,
                            n,
                            t.mask,
                            &mut self.found,
                        )
                        && !alu::exec_pure(op, &mut sg.regs, n, t.mask)
                        && !access::exec_memory(
                            prog,
                            op,
                            &mut sg.regs,
                            n,
                            t.mask,
                            &mem,
                            &mut self.found,
                        )
                        && !group::exec_group(
                            op,
                            &mut sg.regs,
                            n,
                            sg.lanes,
                            t.mask,
                            &mut self.found,
                        )
                        && !dot::exec_dot(op, &mut sg.regs, n, t.mask, &mut self.found)
                        && !image::exec_image(op, &mut sg.regs, n, t.mask, &mem, &mut self.found)
                        && !coopmat::exec_coopmat(
                            op,
                            &mut sg.regs,
                            n,
                            t.mask,
                            &coopmat::Ctx {
                                layouts: &s.layouts,
                                mem: &mem,
                                lanes: sg.lanes,
                            },
                            &mut self.coopmat,
                            &mut self.found,
                        )
                    {
                        return Err(crate::error::malformed(
                            &prog.location(block.locs.get(j).copied().unwrap_or(0)),
                            "op the executor cannot run",
                        ));
                    }
                    if sg.poison.on() {
                        let loc = block.locs.get(j).copied().unwrap_or(0);
                        track_uninit(
                            prog,
                            op,
                            (&sg.regs, &mut sg.poison),
                            n,
                            t.mask,
                            &mem,
                            loc,
                            &mut self.found,
                        );
                    }
                    if !self.found.is_empty() {
                        let loc = block.locs.get(j).copied().unwrap_or(0);
                        pending.push((loc, std::mem::take(&mut self.found)));
                    }
                }
                if watching && stop_at.is_none() {
                    // Before the terminator: what the block's last op left.
                    let last = block.locs.last();
                    let at = last.and_then(|&l| prog.locations.get(l as usize));
                    let at = at.map_or(0, |l| l.offset);
                    let regs = (sg.regs.as_slice(), n);
                    if !self
                        .watch
                        .look(prog, func, k, t.mask, regs, &mem, at, &mut looks)
                    {
                        dropped_looks += 1;
                    }
                }
            }
            for (loc, found) in pending {
                self.found = found;
                self.report(s, first, loc);
            }
            self.produced += dropped_looks;
            for (lane, at, set) in looks {
                self.trace(s, k, frame, EventKind::Values { lane, at, set });
            }
            self.stats.instructions += executed * active;
            self.stats.tangle_instructions += executed;
            t.steps += executed;
            if let Some((j, barrier)) = stop_at {
                self.stats.instructions += active;
                self.stats.tangle_instructions += 1;
                t.steps += 1;
                let Some(op) = block.ops.get(j) else {
                    return Ok(());
                };
                if barrier {
                    if let Some(f) = t.stack.last_mut() {
                        f.op = j as u32 + 1;
                    }
                    t.blocked = true;
                    self.push_tangle(k, t);
                    return Ok(());
                }
                if let Op::Call {
                    func: callee, args, ..
                } = op
                {
                    let Some(sg) = self.subgroups.get_mut(k) else {
                        return Ok(());
                    };
                    for &(dst, src) in args.iter() {
                        for l in bits_of(t.mask, n) {
                            let v = rd(&sg.regs, n, src, l);
                            wr(&mut sg.regs, n, dst, l, v);
                        }
                    }
                    sanitize::copy_origins(&mut sg.poison, n, t.mask, args.iter().copied());
                    if let Some(f) = t.stack.last_mut() {
                        f.op = j as u32;
                    }
                    if t.stack.len() > 1024 {
                        return Err(crate::error::malformed(
                            &prog.location(block.locs.get(j).copied().unwrap_or(0)),
                            "call depth above 1024 (recursion?)",
                        ));
                    }
                    t.stack.push(Frame {
                        func: *callee,
                        block: 0,
                        op: 0,
                    });
                    continue;
                }
            }
            // The terminator.
            t.steps += 1;
            self.stats.instructions += active;
            self.stats.tangle_instructions += 1;
            let lane = first + t.mask.trailing_zeros();
            if s.at_terminator(t.steps, block.term_loc, || self.place(s, lane).global_id())? {
                return Ok(());
            }
            let b = frame.block;
            let decided_by = match &block.terminator {
                Terminator::BranchConditional { cond, .. } => {
                    Some((*cond, uninit::UsedAs::BranchCondition))
                }
                Terminator::Switch { selector, .. } => {
                    Some((*selector, uninit::UsedAs::SwitchSelector))
                }
                _ => None,
            };
            if let (Some((slot, what)), Some(sg)) = (decided_by, self.subgroups.get_mut(k)) {
                if sg.poison.any() {
                    let mut uses = Vec::new();
                    uninit::sink(&mut sg.poison, n, t.mask, slot, what, &mut uses);
                    sanitize::push_uses(prog, &sg.poison.chosen, uses, &mut self.found);
                    self.report(s, first, block.term_loc);
                }
            }
            match &block.terminator {
                Terminator::Branch(target) => {
                    self.phis(k, n, frame.func, b, *target, t.mask, prog);
                    set_block(&mut t, *target);
                }
                Terminator::BranchConditional { cond, t: tb, f: fb } => {
                    let Some(sg) = self.subgroups.get(k) else {
                        return Ok(());
                    };
                    // Over all lanes, branch-free, then masked: the hottest line of loops.
                    let mt = alu::lanes_of(&sg.regs, n, *cond)
                        .iter()
                        .enumerate()
                        .fold(0u128, |m, (l, &v)| m | (u128::from(v != 0) << l))
                        & t.mask;
                    let mf = t.mask & !mt;
                    if mf == 0 || mt == 0 || tb == fb {
                        let target = if mt != 0 { *tb } else { *fb };
                        self.phis(k, n, frame.func, b, target, t.mask, prog);
                        set_block(&mut t, target);
                    } else {
                        self.phis(k, n, frame.func, b, *tb, mt, prog);
                        self.phis(k, n, frame.func, b, *fb, mf, prog);
                        if s.options.trace {
                            let into = vec![
                                (label(prog, frame.func, *tb), mt),
                                (label(prog, frame.func, *fb), mf),
                            ];
                            self.trace(s, k, frame, EventKind::Split { mask: t.mask, into });
                        }
                        let mut other = t.clone();
                        other.mask = mf;
                        set_block(&mut other, *fb);
                        t.mask = mt;
                        set_block(&mut t, *tb);
                        self.stats.splits += 1;
                        self.push_tangle(k, other);
                        self.push_tangle(k, t);
                        return Ok(());
                    }
                }
                Terminator::Switch {
                    selector,
                    bits,
                    cases,
                    default,
                } => {
                    let Some(sg) = self.subgroups.get(k) else {
                        return Ok(());
                    };
                    // "T(I) is partitioned into at least one tangle per case construct, and at
                    // most one tangle per unique Selector value": the policy's switch grouping
                    // picks which (SPV_KHR_maximal_reconvergence, Divergence).
                    let by_selector =
                        s.options.policy.switch_grouping == SwitchGrouping::BySelector;
                    let mut groups: Vec<(u32, u64, u128)> = Vec::new();
                    for l in bits_of(t.mask, n) {
                        let v = rd(&sg.regs, n, *selector, l) & crate::semantics::mask(*bits);
                        let target = cases
                            .iter()
                            .find(|(c, _)| *c == v)
                            .map_or(*default, |(_, t)| *t);
                        let key = if by_selector { v } else { 0 };
                        match groups
                            .iter_mut()
                            .find(|(g, gv, _)| *g == target && *gv == key)
                        {
                            Some((_, _, m)) => *m |= 1 << l,
                            None => groups.push((target, key, 1 << l)),
                        }
                    }
                    if groups.len() <= 1 {
                        let target = groups.first().map_or(*default, |g| g.0);
                        self.phis(k, n, frame.func, b, target, t.mask, prog);
                        set_block(&mut t, target);
                    } else {
                        self.stats.splits += groups.len() as u64 - 1;
                        if s.options.trace {
                            let into = groups
                                .iter()
                                .map(|(g, _, m)| (label(prog, frame.func, *g), *m))
                                .collect();
                            self.trace(s, k, frame, EventKind::Split { mask: t.mask, into });
                        }
                        let merge = block.merge.filter(|_| by_selector);
                        for (target, value, m) in groups {
                            self.phis(k, n, frame.func, b, target, m, prog);
                            let mut part = t.clone();
                            part.mask = m;
                            if let Some(merge) = merge {
                                part.apart.push(Apart {
                                    depth: part.stack.len() as u32,
                                    merge,
                                    value,
                                });
                            }
                            set_block(&mut part, target);
                            self.push_tangle(k, part);
                        }
                        return Ok(());
                    }
                }
                Terminator::Return | Terminator::ReturnValue { .. } => {
                    t.stack.pop();
                    let depth = t.stack.len();
                    t.apart.retain(|a| a.depth as usize <= depth);
                    let Some(caller) = t.stack.last_mut() else {
                        return Ok(());
                    };
                    if let Terminator::ReturnValue { src, count } = &block.terminator {
                        let call = prog
                            .functions
                            .get(caller.func as usize)
                            .and_then(|f| f.blocks.get(caller.block as usize))
                            .and_then(|bl| bl.ops.get(caller.op as usize));
                        if let (Some(Op::Call { dst, .. }), Some(sg)) =
                            (call, self.subgroups.get_mut(k))
                        {
                            for i in 0..*count {
                                for l in bits_of(t.mask, n) {
                                    let v = rd(&sg.regs, n, src + i, l);
                                    wr(&mut sg.regs, n, dst + i, l, v);
                                }
                            }
                            let pairs = (0..*count).map(|i| (dst + i, src + i));
                            sanitize::copy_origins(&mut sg.poison, n, t.mask, pairs);
                        }
                    }
                    caller.op += 1;
                }
                // Fragment-only: the validator refuses it in a compute shader.
                Terminator::Kill => return Ok(()),
                Terminator::Unreachable => {
                    // Reported for each invocation, which then ends: nothing defines what
                    // it would do next.
                    for l in bits_of(t.mask, n) {
                        self.found.push((l, Finding::Unreachable));
                    }
                    self.report(s, first, block.term_loc);
                    return Ok(());
                }
            }
            // Keep running while no other tangle may go first.
            let others = self
                .subgroups
                .get(k)
                .is_some_and(|sg| sg.tangles.iter().any(|o| !o.blocked));
            if others {
                self.push_tangle(k, t);
                return Ok(());
            }
        }
    }

    /// Records a trace event of subgroup `k` at `frame`'s block.
    fn trace(&mut self, s: &Shared<'_>, k: usize, frame: Frame, kind: EventKind) {
        self.produced += 1;
        if self.events.len() >= crate::trace::MAX_EVENTS {
            return;
        }
        let function = s
            .prog
            .functions
            .get(frame.func as usize)
            .map_or(0, |f| f.id);
        self.events.push(Event {
            workgroup: self.id,
            subgroup: k as u32,
            function,
            block: label(s.prog, frame.func, frame.block),
            kind,
        });
    }

    fn push_tangle(&mut self, k: usize, t: Tangle) {
        if let Some(sg) = self.subgroups.get_mut(k) {
            sg.tangles.push(t);
        }
    }

    /// Copies the phis of `target` for the edge from `from`, for the lanes in `mask`, as one
    /// parallel copy.
    #[allow(clippy::too_many_arguments)]
    fn phis(
        &mut self,
        k: usize,
        n: usize,
        func: u32,
        from: u32,
        target: u32,
        mask: u128,
        prog: &Program,
    ) {
        let Some(block) = prog
            .functions
            .get(func as usize)
            .and_then(|f| f.blocks.get(target as usize))
        else {
            return;
        };
        let Some((_, copies)) = block.phis.iter().find(|(p, _)| *p == from) else {
            return;
        };
        let Some(sg) = self.subgroups.get_mut(k) else {
            return;
        };
        alu::phi_copies(&mut sg.regs, n, copies, mask, &mut self.scratch);
        let undefined = |s: Slot| uninit::undefined(&sg.poison, s, mask) != 0;
        if sg.poison.any() && copies.iter().any(|&(d, s)| undefined(d) || undefined(s)) {
            // The origins move with the values, as one parallel copy too.
            let origins: Vec<u32> = copies
                .iter()
                .flat_map(|&(_, src)| bits_of(mask, n).map(move |l| (src, l)))
                .map(|(src, l)| uninit::origin(&sg.poison, n, src, l))
                .collect();
            let mut it = origins.into_iter();
            for &(dst, _) in copies {
                for l in bits_of(mask, n) {
                    let o = it.next().unwrap_or(0);
                    uninit::set(&mut sg.poison, n, dst, l, o);
                }
            }
        }
    }
}

/// The label id of a block.
fn label(prog: &Program, func: u32, block: u32) -> u32 {
    prog.functions
        .get(func as usize)
        .and_then(|f| f.blocks.get(block as usize))
        .map_or(0, |b| b.label)
}

fn set_block(t: &mut Tangle, block: u32) {
    if let Some(f) = t.stack.last_mut() {
        f.block = block;
        f.op = 0;
    }
}
