//! The wide path: a dispatch run in batches of [`WIDTH`] invocations taken across subgroups and
//! workgroups, for programs in which nothing can observe the grouping ([`plan`]).
//!
//! Why: the reference path pays its decoding, scheduling and sanitizer bookkeeping once per op
//! per *subgroup* (often 32 lanes, or a 64-invocation workgroup). Paid once per 128 lanes, with
//! the same lane kernels ([`crate::run::alu`], [`crate::run::access`]), an ALU-bound shader runs
//! several times faster; `docs/executor.md` has the measurements and the road to a typed
//! kernel set.
//!
//! Exactness: the wide path is *speculative*. It computes with the reference path's own op
//! kernels, and gives up on the whole dispatch — before anything is written back — at anything
//! the reference path would report or handle differently: a sanitizer finding of any kind
//! (division, shift, out-of-bounds access), a possible data race ([`races`]), or the step
//! limit. The dispatch then runs again on the reference path from the same inputs, which
//! reports exactly. So the wide path never reports a finding itself, and a program it takes
//! gives the reference path's buffers, bit for bit (`tests/wide_path.rs` checks this on every
//! Amber script of the repository).

pub mod arrays;
mod dense;
mod kernels;
mod plan;
pub mod races;
pub(crate) mod rows;
mod workgroup;

pub use plan::plan;
pub(crate) use plan::slots_of;

use crate::check::kind::Kind;
use crate::error::ExecError;
use crate::program::{Op, Program, RegionKind, Terminator};
use crate::report::Stats;
use crate::run::access::{self, Mem};
use crate::run::alu::{self, bits_of, full_mask, rd, wr};
use crate::run::builtins::Place;
use crate::run::coopmat::{self, CoopmatInst};
use crate::run::group::{self, GroupInst};
use crate::run::memory::{self, Words};
use crate::run::Shared;
use races::Access;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use workgroup::Parked;

/// Invocations per batch: the most lanes a register file row and a mask (`u128`) hold.
pub const WIDTH: usize = 128;

/// Why the wide path gave a dispatch back to the reference path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp(pub String);

/// What the batches of one worker share with the dispatch.
pub(crate) struct Wide<'a> {
    /// The register file of one batch at its start (constants and handles, every lane).
    template: Vec<u64>,
    /// Whether buffer accesses are logged for the race screen.
    races: bool,
    /// The first reason to give up, set once; it also stops the workers.
    gave_up: Mutex<Option<GaveUp>>,
    /// Every worker's access log, for the race screen at the end.
    log: races::Gather,
    /// Invocations in the dispatch.
    invocations: u64,
    /// The built-in input and component each constant pointer into invocation memory names.
    builtins: HashMap<u64, (u32, usize)>,
    /// Which slots hold constants (never written: one value for every lane).
    constant: Vec<bool>,
    /// The program has subgroup operations or cooperative matrices (batches then hold whole
    /// subgroups).
    group_ops: bool,
    /// Which matrix values the batches hold in dense form, and how ([`dense`]).
    dense: dense::DensePlan,
    /// The Workgroup and invocation memory of a batch: none ([`plan`]).
    no_memory: Words,
    /// With Workgroup memory or barriers, the shape of the workgroup-aligned batches.
    workgroup: Option<workgroup::Shape>,
    shared: &'a Shared<'a>,
}

/// The most log entries the race screen takes before giving up (its memory bound).
const MAX_LOG: usize = 1 << 22;

/// Dispatches smaller than this run on the reference path: a batch mostly empty costs the wide
/// path more than the reference path's subgroups (a lone invocation ran 2× slower).
const MIN_INVOCATIONS: u64 = 32;

/// The most register values of one batch (32 MiB a worker).
const MAX_REGISTERS: usize = 1 << 22;

impl<'a> Wide<'a> {
    /// The wide form of the dispatch `s`, or why the wide path does not take it.
    pub(crate) fn new(
        s: &'a Shared<'a>,
        invocations: u64,
        threads: usize,
    ) -> Result<Wide<'a>, GaveUp> {
        let o = s.options;
        if o.trace {
            return Err(GaveUp("tracing follows subgroups".into()));
        }
        if invocations < MIN_INVOCATIONS {
            return Err(GaveUp("too few invocations to fill a batch".into()));
        }
        if let Some(why) = s.kept_calls {
            return Err(GaveUp(format!("function calls: {why}")));
        }
        let plan = plan::plan(s.fast).map_err(GaveUp)?;
        let mut dense = dense::DensePlan::default();
        if plan.group_ops {
            group_batches(s)?;
            dense = dense::DensePlan::new(s.fast, &s.layouts, s.sg);
        }
        let shape = plan
            .workgroup
            .then(|| workgroup::Shape::new(s))
            .transpose()?;
        // Each worker holds a register file of every slot for WIDTH lanes (one per part of a
        // workgroup larger than a batch).
        let parts = shape.map_or(1, |w| w.parts);
        let registers = (s.fast.slots as usize)
            .saturating_mul(WIDTH)
            .saturating_mul(parts);
        if registers > MAX_REGISTERS {
            return Err(GaveUp("a register file too large for a batch".into()));
        }
        // Its workers' register files and matrix tiles (no larger: a matrix's registers hold
        // at least its elements) stay inside the dispatch's memory budget too (the thread
        // count was fitted to the reference path's smaller per-worker need).
        let bytes = (registers as u64)
            .saturating_mul(8)
            .saturating_add(dense::Tiles::bytes(&dense))
            .saturating_mul(threads as u64);
        if bytes > s.options.memory_limit / 2 {
            return Err(GaveUp(
                "the register files would not fit the memory limit".into(),
            ));
        }
        // One value per slot: the template of the reference path holds every lane alike.
        let n = s.sg;
        let mut template = vec![0u64; s.fast.slots as usize * WIDTH];
        for slot in 0..s.fast.slots {
            let v = rd(&s.template, n, slot, 0);
            for l in 0..WIDTH {
                wr(&mut template, WIDTH, slot, l, v);
            }
        }
        let mut builtins = HashMap::new();
        for var in &s.fast.variables {
            if let (RegionKind::Invocation, Some(b)) = (var.region, var.builtin) {
                let size = s.fast.ty(var.ty).size;
                for (c, at) in (0..size).step_by(4).enumerate() {
                    let ptr = memory::make_pointer(
                        memory::REGION_INVOCATION,
                        var.offset.wrapping_add(at),
                    );
                    builtins.insert(ptr, (b, c));
                }
            }
        }
        let mut constant = vec![false; s.fast.slots as usize];
        for &(slot, _) in &s.fast.constants {
            if let Some(c) = constant.get_mut(slot as usize) {
                *c = true;
            }
        }
        Ok(Wide {
            workgroup: shape,
            group_ops: plan.group_ops,
            dense,
            no_memory: Words::default(),
            constant,
            builtins,
            template,
            // With barriers or Workgroup memory, screened with the checks off too: a racy
            // program's bytes are then the reference path's ([`workgroup`]).
            races: (o.checks && !o.allow.contains(Kind::Race)) || plan.workgroup,
            gave_up: Mutex::new(None),
            log: races::Gather::default(),
            invocations,
            shared: s,
        })
    }

    /// The memory a batch's ops see: the dispatch's buffers, images and push constants.
    fn mem(&self) -> Mem<'_> {
        self.mem_with(None)
    }

    /// [`Wide::mem`] with the Workgroup memory of the batch's workgroup, if it has one.
    fn mem_with<'b>(&'b self, workgroup: Option<&'b Words>) -> Mem<'b> {
        let s = self.shared;
        Mem {
            buffers: s.buffers,
            descriptors: &s.descriptors,
            images: s.images,
            samplers: &s.samplers,
            push: s.push,
            workgroup: workgroup.unwrap_or(&self.no_memory),
            invocation: &self.no_memory,
            invocation_bytes: s.fast.invocation_bytes,
            races: None,
            written: None,
            robust: (s.options.robustness, s.options.policy.robust),
            image_robust: s.options.image_robustness,
            coopmat_robust: s.options.coopmat_robustness,
            null_descriptor: s.options.null_descriptor,
        }
    }

    /// Batches in the dispatch (workgroups, when a batch holds one).
    pub(crate) fn batches(&self) -> u64 {
        match self.workgroup {
            Some(shape) => self.invocations / shape.per_group.max(1),
            None => self.invocations.div_ceil(WIDTH as u64),
        }
    }

    /// Records the first reason to give up and stops the workers.
    fn give_up(&self, why: String) {
        let mut g = self.gave_up.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(GaveUp(why));
        }
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    /// After the workers: why the wide path gave up, if it did (a possible race included).
    pub(crate) fn outcome(self) -> Result<(), GaveUp> {
        if let Some(g) = self.gave_up.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(g);
        }
        if self.shared.options.touched {
            // Before the screen takes the log: the bytes it covers ([`crate::check::touched`]).
            let cap = crate::check::touched::CAP;
            *self
                .shared
                .fast_touched
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = self.log.touched(cap);
        }
        if self.log.may_race_over(self.shared.buffers) {
            return Err(GaveUp("a possible data race".into()));
        }
        Ok(())
    }
}

/// Whether batches of [`WIDTH`] consecutive invocations hold whole subgroups whose tangles are
/// the reference path's, so subgroup operations can run on them: `Err` says why not.
///
/// Subgroups are consecutive invocations of a workgroup, so with a workgroup size and
/// [`WIDTH`] both multiples of the subgroup size every batch holds whole subgroups. And under
/// the default policy the reference path runs, per subgroup, the tangle of lowest structured
/// rank first and merges tangles that reach the same block (`run/tangle.rs`); the wide path
/// does the same over the batch, which restricted to one subgroup is the same order and the
/// same merges, since lanes of different subgroups never change each other's positions. Other
/// policies choose differently per subgroup (branch order, coins, switch grouping).
fn group_batches(s: &Shared<'_>) -> Result<(), GaveUp> {
    let per_group: u64 = s.fast.local_size.iter().map(|&x| u64::from(x)).product();
    let sg = s.sg as u64;
    if sg == 0 || !(WIDTH as u64).is_multiple_of(sg) || !per_group.is_multiple_of(sg) {
        return Err(GaveUp(
            "subgroup operations where a batch cannot hold whole subgroups".into(),
        ));
    }
    if s.options.policy != crate::policy::Policy::default() {
        return Err(GaveUp(
            "subgroup operations under a policy other than the default".into(),
        ));
    }
    Ok(())
}

/// One worker's batch state.
pub(crate) struct Batch {
    /// The register file, `WIDTH` lanes per slot. It is filled from the template once: every
    /// slot an op reads was written before by the same invocation (SSA; the plan takes no
    /// `OpUndef` that is read), so a batch needs no reset.
    regs: Vec<u64>,
    log: Vec<Access>,
    /// The log of the units run so far, handed in when the worker ends.
    kept: Vec<Access>,
    /// Scratch values (phi copies).
    scratch: Vec<u64>,
    /// One subgroup's register file (subgroup-size lanes per slot) for a subgroup operation:
    /// only the slots the op touches are filled.
    subgroup: Vec<u64>,
    /// Reused buffers of cooperative-matrix ops.
    coopmat: coopmat::Scratch,
    /// The matrices held in dense form ([`dense`]).
    tiles: dense::Tiles,
    /// Invocation index of lane 0.
    first: u64,
    /// Tangles waiting at a barrier ([`workgroup`]).
    parked: Vec<Parked>,
    /// Its workgroup's memory and screens, while it runs ([`workgroup`]).
    wgm: Option<Box<workgroup::Memory>>,
    /// The other parts of a workgroup larger than a batch, run in step with this one.
    parts: Vec<Batch>,
    pub(crate) stats: Stats,
}

impl Batch {
    pub(crate) fn new(w: &Wide<'_>) -> Batch {
        Batch {
            regs: w.template.clone(),
            log: Vec::new(),
            kept: Vec::new(),
            scratch: Vec::new(),
            subgroup: Vec::new(),
            coopmat: coopmat::Scratch::default(),
            tiles: dense::Tiles::new(&w.dense),
            first: 0,
            parked: Vec::new(),
            wgm: None,
            parts: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Hands the log and counters to the dispatch.
    pub(crate) fn flush(&mut self, w: &Wide<'_>) {
        if !self.log.is_empty() {
            // The dispatch's bound on race bookkeeping holds here too; past it the reference
            // path runs, and says where its own check was cut short.
            let limit = MAX_LOG.min(w.shared.options.race_log_limit);
            if w.log.count(self.log.len(), limit) {
                self.kept.append(&mut self.log);
            } else {
                w.give_up("the race screen's log is full".into());
                self.log.clear();
            }
        }
        let mut f = w.shared.found.lock().unwrap_or_else(|e| e.into_inner());
        f.1.add(&self.stats);
        self.stats = Stats::default();
        drop(f);
        for p in &mut self.parts {
            p.flush(w);
        }
    }

    /// Hands the log of every unit this worker ran to the dispatch, sorted in its thread.
    pub(crate) fn finish(&mut self, w: &Wide<'_>) {
        w.log.hand_in(std::mem::take(&mut self.kept));
        for p in &mut self.parts {
            p.finish(w);
        }
    }

    /// Runs batch `i`: invocations `i * WIDTH ..` in global linear order (workgroup-major);
    /// with Workgroup memory or barriers, workgroup `i` ([`workgroup::run`]).
    pub(crate) fn run(&mut self, w: &Wide<'_>, i: u64) -> Result<(), ExecError> {
        if w.workgroup.is_some() {
            return workgroup::run(self, w, i);
        }
        let first = i * WIDTH as u64;
        let count = (w.invocations - first).min(WIDTH as u64) as usize;
        self.begin(first, count);
        self.advance(w, vec![(0, 0, full_mask(count), 0)])
    }

    /// Starts the batch of `count` invocations from `first`.
    fn begin(&mut self, first: u64, count: usize) {
        self.first = first;
        self.stats.invocations += count as u64;
        self.stats.wide_invocations += count as u64;
        self.tiles.reset();
        self.parked.clear();
    }

    /// Runs the tangles of `resume` (block, op, mask, steps: each from op `op` of its block)
    /// until every lane has finished or waits at a barrier ([`Batch::parked`]).
    fn advance(&mut self, w: &Wide<'_>, mut resume: Vec<Parked>) -> Result<(), ExecError> {
        let s = w.shared;
        let prog = s.fast;
        let first = self.first;
        let Some(func) = prog.functions.get(prog.entry as usize) else {
            return Ok(());
        };
        // Tangles waiting: (block, mask, steps). The one of lowest structured rank runs first,
        // so lanes that left a loop or a selection wait at its merge block for the others.
        // Steps count as the reference path counts them per tangle (ops and terminators; a split
        // inherits them, a join keeps the larger); past the step limit the wide path gives up.
        let mut waiting: Vec<(u32, u128, u64)> = Vec::new();
        'tangles: loop {
            let (block_idx, start, mask, mut steps) = match resume.pop() {
                Some(r) => r,
                None => match lowest_rank(&waiting, prog) {
                    Some(at) => {
                        let (b, m, st) = waiting.swap_remove(at);
                        (b, 0, m, st)
                    }
                    None => break,
                },
            };
            let Some(block) = func.blocks.get(block_idx as usize) else {
                return Ok(());
            };
            let lanes = u64::from(mask.count_ones());
            let ran = block.ops.len().saturating_sub(start) as u64;
            self.stats.instructions += ran * lanes;
            self.stats.tangle_instructions += ran;
            for (j, op) in block.ops.iter().enumerate().skip(start) {
                if let Op::ControlBarrier { .. } = op {
                    // The barrier counts as a step; the lanes wait after it.
                    steps += (j + 1 - start) as u64;
                    workgroup::park(&mut self.parked, (block_idx, j + 1, mask, steps));
                    continue 'tangles;
                }
                if let Err(why) = self.step(w, op, mask, first, (block_idx, j)) {
                    w.give_up(why);
                    return Ok(());
                }
            }
            steps += ran + 1;
            // A batch's tangle joins lanes of several subgroups, and a join keeps the larger
            // count, so a lane's count here can pass the reference path's for its subgroup:
            // at the step limit the reference path runs the dispatch and says which invocation
            // stopped where.
            if steps > s.options.step_limit {
                w.give_up("the step limit".into());
                return Ok(());
            }
            // The stop flag and the time limit, as the reference path checks them.
            let lane = first + u64::from(mask.trailing_zeros());
            if s.at_terminator(steps, block.term_loc, || place(s, lane).global_id())? {
                return Ok(());
            }
            match block.terminator {
                Terminator::Branch(t) => self.go(w, &mut waiting, block_idx, t, mask, steps),
                Terminator::BranchConditional { cond, t, f } => {
                    let taken = branch_mask(alu::lanes_of(&self.regs, WIDTH, cond)) & mask;
                    if taken != 0 {
                        self.go(w, &mut waiting, block_idx, t, taken, steps);
                    }
                    if mask & !taken != 0 {
                        self.go(w, &mut waiting, block_idx, f, mask & !taken, steps);
                    }
                    if taken != 0 && mask & !taken != 0 {
                        self.stats.splits += 1;
                    }
                }
                Terminator::Switch {
                    selector,
                    bits,
                    ref cases,
                    default,
                } => {
                    // Each lane to the first case its selector (its low `bits`) equals, as the
                    // reference path picks; how the lanes are grouped is unobservable here.
                    let width = crate::semantics::mask(bits);
                    let mut rest = mask;
                    for &(value, target) in cases.iter() {
                        let values = alu::lanes_of(&self.regs, WIDTH, selector);
                        let hit = bits_of(rest, WIDTH)
                            .filter(|&l| values.get(l).is_some_and(|v| v & width == value))
                            .fold(0u128, |m, l| m | 1 << l);
                        if hit != 0 {
                            self.go(w, &mut waiting, block_idx, target, hit, steps);
                            rest &= !hit;
                        }
                    }
                    if rest != 0 {
                        self.go(w, &mut waiting, block_idx, default, rest, steps);
                    }
                }
                // Undefined behaviour where reached (glslang ends a function that returns on
                // every path with one): the reference path reports it.
                Terminator::Unreachable => {
                    w.give_up("OpUnreachable reached".into());
                    return Ok(());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Moves the lanes of `mask` from `from` to `to`: `to`'s phi copies, then joins a tangle
    /// already waiting there.
    fn go(
        &mut self,
        w: &Wide<'_>,
        waiting: &mut Vec<(u32, u128, u64)>,
        from: u32,
        to: u32,
        mask: u128,
        steps: u64,
    ) {
        let prog = w.shared.fast;
        let block = prog
            .functions
            .get(prog.entry as usize)
            .and_then(|f| f.blocks.get(to as usize));
        if let Some((_, copies)) = block.and_then(|b| b.phis.iter().find(|(p, _)| *p == from)) {
            // Matrices copied by phis are copied through their registers.
            let ranges = w.dense.phis(to, from);
            if let Some((touched, _)) = ranges {
                let layouts = &w.shared.layouts;
                (self.tiles).fill_lanes(&w.dense, layouts, touched, mask, &mut self.regs);
            }
            alu::phi_copies(&mut self.regs, WIDTH, copies, mask, &mut self.scratch);
            if let Some((_, writes)) = ranges {
                self.tiles.written(&w.dense, writes, mask);
            }
        }
        match waiting.iter_mut().find(|(b, _, _)| *b == to) {
            Some((_, m, s)) => {
                *m |= mask;
                *s = (*s).max(steps);
                self.stats.joins += 1;
            }
            None => waiting.push((to, mask, steps)),
        }
    }

    /// Loads component `c` of built-in `b` into slot `dst` for the lanes of `mask`: counters
    /// stepped lane by lane rather than a division per lane, as the reference path's
    /// [`Place`] computes them (which the other built-ins use).
    fn load_builtin(
        &mut self,
        w: &Wide<'_>,
        (b, c): (u32, usize),
        dst: u32,
        mask: u128,
        first: u64,
    ) {
        use spirv::BuiltIn as B;
        let s = w.shared;
        let size = s.fast.local_size.map(u64::from);
        let per_group = size.iter().product::<u64>().max(1);
        let groups = s.groups.map(|g| u64::from(g).max(1));
        let split = |v: u64, dims: [u64; 3]| {
            let (x, y) = (dims[0].max(1), dims[1].max(1));
            [v % x, (v / x) % y, v / (x * y)]
        };
        let (mut wg, mut local) = (first / per_group, first % per_group);
        let (mut wg_id, mut local_id) = (split(wg, groups), split(local, size));
        // Decoded once: per lane it cost 3% of saxpy.
        let which = B::from_u32(b);
        let simple = matches!(
            which,
            Some(
                B::GlobalInvocationId
                    | B::LocalInvocationId
                    | B::WorkgroupId
                    | B::LocalInvocationIndex
            )
        );
        let c = c.min(2);
        for l in 0..WIDTH {
            if mask >> l & 1 != 0 {
                let v = if simple {
                    match which {
                        Some(B::GlobalInvocationId) => {
                            (wg_id[c] * size[c] + local_id[c]) & 0xffff_ffff
                        }
                        Some(B::LocalInvocationId) => local_id[c],
                        Some(B::WorkgroupId) => wg_id[c],
                        _ => local,
                    }
                } else {
                    place(s, first + l as u64)
                        .value(b)
                        .and_then(|v| v.as_slice().get(c).copied())
                        .unwrap_or(0)
                };
                wr(&mut self.regs, WIDTH, dst, l, v);
            }
            // The next invocation in linear order.
            local += 1;
            local_id[0] += 1;
            if local_id[0] == size[0] {
                local_id = split(local, size);
            }
            if local == per_group {
                local = 0;
                local_id = [0; 3];
                wg += 1;
                wg_id = split(wg, groups);
            }
        }
    }

    /// Runs op `at` (block, index) for `mask` with what its [`dense::Action`] says around it;
    /// `Err` says why the wide path must give up.
    fn step(
        &mut self,
        w: &Wide<'_>,
        op: &Op,
        mask: u128,
        first: u64,
        at: (u32, usize),
    ) -> Result<(), String> {
        let (p, layouts) = (&w.dense, &w.shared.layouts);
        match p.action(at.0, at.1) {
            dense::Action::Plain => self.exec(w, op, mask, first, at),
            dense::Action::Folded => Ok(()),
            &dense::Action::Copy { dst, src } => {
                (self.tiles).copy(p, layouts, (dst, src), mask, &mut self.regs);
                Ok(())
            }
            dense::Action::Lanes { ranges, writes } => {
                (self.tiles).fill_lanes(p, layouts, ranges, mask, &mut self.regs);
                self.exec(w, op, mask, first, at)?;
                self.tiles.written(p, writes, mask);
                Ok(())
            }
            dense::Action::Coopmat => match op {
                Op::Coopmat(c) => self.coopmat_dense(w, c, op, mask, first),
                _ => self.exec(w, op, mask, first, at),
            },
        }
    }

    /// Runs one op for `mask`; `Err` says why the wide path must give up.
    fn exec(
        &mut self,
        w: &Wide<'_>,
        op: &Op,
        mask: u128,
        first: u64,
        at: (u32, usize),
    ) -> Result<(), String> {
        let s = w.shared;
        let n = WIDTH;
        if matches!(op, Op::Undef { .. }) {
            // Overwritten before any read ([`plan`]): nothing to do.
            return Ok(());
        }
        if let Op::Load { dst, ptr, ty } | Op::LoadUniform { dst, ptr, ty } = *op {
            // A built-in input: a constant pointer into invocation memory, its components
            // one slot each.
            let p = rd(&self.regs, n, ptr, 0);
            let invocation = memory::split_pointer(p).0 == memory::REGION_INVOCATION;
            // (The region test first: hashing every load's pointer cost 1% of alu_hash.)
            if let Some(&(b, c)) = invocation.then(|| w.builtins.get(&p)).flatten() {
                for (i, leaf) in s.fast.leaves_of(ty).iter().enumerate() {
                    let component = c + (leaf.offset / 4) as usize;
                    self.load_builtin(w, (b, component), dst + i as u32, mask, first);
                }
                return Ok(());
            }
        }
        if let Op::Group(g) = op {
            return self.group(w, g, op, mask);
        }
        if let Op::ControlBarrier { .. } | Op::SubgroupBarrier { .. } | Op::Fence { .. } = op {
            return workgroup::barrier_op(w, op, mask);
        }
        if let Op::Coopmat(c) = op {
            return self.coopmat(w, c, op, mask, first);
        }
        if let Op::Array(a) = op {
            return arrays::exec(a, &mut self.regs, n, mask);
        }
        let mut found = Vec::new();
        if s.options.checks {
            // Dynamic vector indices out of range.
            crate::check::index::check(op, &self.regs, n, mask, &mut found);
        }
        if matches!(
            op,
            Op::CheckDivision { .. }
                | Op::CheckShift { .. }
                | Op::CheckWrap { .. }
                | Op::CheckRemainderSign { .. }
                | Op::CheckDomain { .. }
        ) {
            if s.options.checks {
                crate::check::arith::exec_check(op, &self.regs, n, mask, &mut found);
            }
        } else if (mask == full_mask(n) && kernels::exec_fast(op, &mut self.regs, &w.constant))
            || alu::exec_pure(op, &mut self.regs, n, mask)
            || crate::run::dot::exec_dot(op, &mut self.regs, n, mask, &mut found)
        {
        } else {
            if let Some(m) = self.wgm.as_deref_mut() {
                m.access(s.fast, op, &self.regs, mask)?;
            }
            if w.races {
                self.log_access((s.fast, s.writable), op, mask, first);
            }
            if let (Op::AccessChain { dst, base, steps }, true) = (op, mask == full_mask(n)) {
                if self.chain(*dst, *base, steps) {
                    return Ok(());
                }
            }
            let mem = w.mem_with(self.wgm.as_deref().map(|m| &m.words));
            if let (Op::LoadUniform { dst, ptr, ty }, true) = (op, mask == full_mask(n)) {
                // One read for the whole batch, one fill (the kernel writes lane by lane).
                if let [leaf] = s.fast.leaves_of(*ty) {
                    let p = rd(&self.regs, n, *ptr, 0);
                    let (words, off) = mem
                        .resolve_value(p, 0, (s.fast, *ty))
                        .map_err(|f| format!("a finding ({f})"))?;
                    let v = words.read(off + leaf.offset, leaf.bytes);
                    let v = if leaf.boolean { u64::from(v != 0) } else { v };
                    let at = *dst as usize * n;
                    if let Some(d) = self.regs.get_mut(at..at + n) {
                        d.fill(v);
                    }
                    return Ok(());
                }
            }
            if !access::exec_memory(s.fast, op, &mut self.regs, n, mask, &mem, &mut found) {
                return Err(format!("op {at:?} has no wide kernel"));
            }
        }
        match found.first() {
            None => Ok(()),
            Some((_, f)) => Err(format!("a finding ({f})")),
        }
    }

    /// Runs subgroup operation `op` for the lanes of `mask`, one subgroup at a time with the
    /// reference path's kernel on a subgroup-sized copy of the slots it touches. Any finding
    /// (a non-uniform Id, an inactive source lane, ...) gives up: the reference path reports it.
    fn group(&mut self, w: &Wide<'_>, g: &GroupInst, op: &Op, mask: u128) -> Result<(), String> {
        let (writes, reads) = g.slots();
        let mut found = Vec::new();
        let sg = w.shared.sg;
        per_subgroup(
            w,
            &mut self.regs,
            &mut self.subgroup,
            mask,
            (writes, &reads),
            |regs, lanes, _| {
                group::exec_group(op, regs, sg, sg, lanes, &mut found);
                first_finding(&found)
            },
        )
    }

    /// Runs cooperative-matrix op `op` for the lanes of `mask` as [`Batch::group`] runs a
    /// subgroup operation: the matrix's scope is the subgroup. Its loads and stores are logged
    /// for the race screen: a load as the span it reads, by "several invocations" (a tile's
    /// rows lie apart; one entry per load, merged with the last ones of the same region, keeps
    /// the log of a GEMM's thousands of tile loads small, and reading more than was read can
    /// only send the dispatch to the reference path), a store as the runs each invocation
    /// writes. An access that is not uniform is not logged: the wide path gives up on it.
    fn coopmat(
        &mut self,
        w: &Wide<'_>,
        c: &CoopmatInst,
        op: &Op,
        mask: u128,
        first: u64,
    ) -> Result<(), String> {
        if checks_pass(w, c, &self.regs, mask) {
            return Ok(());
        }
        let s = w.shared;
        let (writes, reads) = c.slots();
        let mem = w.mem();
        let cx = coopmat::Ctx {
            layouts: &s.layouts,
            mem: &mem,
            lanes: s.sg,
        };
        let (log, scratch) = (&mut self.log, &mut self.coopmat);
        let mut found = Vec::new();
        let sg = s.sg;
        let writes = writes.into_iter();
        per_subgroup(
            w,
            &mut self.regs,
            &mut self.subgroup,
            mask,
            (writes, &reads),
            |regs, lanes, k| {
                if w.races {
                    log_coopmat(c, regs, sg, lanes, s, first + (k * sg) as u64, log)?;
                }
                coopmat::exec_coopmat(op, regs, sg, lanes, &cx, scratch, &mut found);
                first_finding(&found)
            },
        )
    }

    /// Runs a load, store or MulAdd whose matrices are held in dense form ([`dense`]) one
    /// subgroup at a time, as [`Batch::coopmat`] runs it: on the dense forms where the whole
    /// subgroup runs it and the fast path applies (a uniform pointer and stride with every row
    /// in bounds; a MulAdd without an undefined element), else with the lane path on registers
    /// filled from them, which reports. Loads and stores are logged for the race screen as
    /// there.
    fn coopmat_dense(
        &mut self,
        w: &Wide<'_>,
        c: &CoopmatInst,
        op: &Op,
        mask: u128,
        first: u64,
    ) -> Result<(), String> {
        let s = w.shared;
        let (p, layouts, sg) = (&w.dense, &s.layouts, s.sg);
        let mem = w.mem();
        let cx = coopmat::Ctx {
            layouts,
            mem: &mem,
            lanes: sg,
        };
        let missing = || "a dense matrix operand without its range".to_string();
        // The ranges of its matrix operands, the written one first; the Pointer and Stride.
        let (ranges, scalars): (Vec<u32>, Vec<u32>) = match *c {
            CoopmatInst::Load { dst, ref at } => (
                vec![p.range_at(dst).ok_or_else(missing)?],
                vec![at.ptr, at.stride.slot],
            ),
            CoopmatInst::Store { src, ref at } => (
                vec![p.range_at(src).ok_or_else(missing)?],
                vec![at.ptr, at.stride.slot],
            ),
            CoopmatInst::MulAdd { dst, a, b, c, .. } => {
                let r = |slot| p.range_at(slot).ok_or_else(missing);
                (vec![r(dst)?, r(a)?, r(b)?, r(c)?], Vec::new())
            }
            _ => return Err("a cooperative-matrix op without dense operands".into()),
        };
        let written: &[u32] = match c {
            CoopmatInst::Store { .. } => &[],
            _ => ranges.get(..1).unwrap_or(&[]),
        };
        subgroup_file(w, &mut self.subgroup);
        let mut found = Vec::new();
        for k in dense::subgroups(p, mask) {
            let lanes = (mask >> (k * sg)) & full_mask(sg);
            let in_batch = lanes << (k * sg);
            copy_slots(
                &mut self.regs,
                &mut self.subgroup,
                scalars.iter().copied(),
                (k, sg),
                true,
            )?;
            if w.races {
                let at = first + (k * sg) as u64;
                log_coopmat(c, &self.subgroup, sg, lanes, s, at, &mut self.log)?;
            }
            let done = lanes == full_mask(sg)
                && match (c, ranges.as_slice()) {
                    (CoopmatInst::Load { at, .. }, &[r]) => {
                        let tile = self.tiles.tile_mut(p, r, k).ok_or_else(missing)?;
                        let loaded = coopmat::load_dense(at, &self.subgroup, sg, lanes, &cx, tile);
                        if loaded {
                            self.tiles.loaded(p, r, k);
                        }
                        loaded
                    }
                    (CoopmatInst::Store { at, .. }, &[r]) => {
                        let tile = self.tiles.read(p, layouts, r, k, &self.regs);
                        let tile = tile.ok_or_else(missing)?;
                        coopmat::store_dense(at, &self.subgroup, sg, lanes, &cx, tile)
                    }
                    (
                        &CoopmatInst::MulAdd {
                            ref types,
                            m,
                            n,
                            k: depth,
                            ..
                        },
                        &[d, a, b, c],
                    ) => {
                        let shape = (m as usize, n as usize, depth as usize);
                        (self.tiles).mul_add(p, layouts, types, shape, [d, a, b, c], k, &self.regs)
                    }
                    _ => false,
                };
            if done {
                self.stats.dense_matrix_ops += 1;
                continue;
            }
            // The lane path, on registers filled from the dense forms.
            let (writes, reads) = c.slots();
            (self.tiles).fill_lanes(p, layouts, &ranges, in_batch, &mut self.regs);
            let slots = reads.iter().copied().chain(writes.iter().copied());
            copy_slots(&mut self.regs, &mut self.subgroup, slots, (k, sg), true)?;
            coopmat::exec_coopmat(
                op,
                &mut self.subgroup,
                sg,
                lanes,
                &cx,
                &mut self.coopmat,
                &mut found,
            );
            first_finding(&found)?;
            copy_slots(
                &mut self.regs,
                &mut self.subgroup,
                writes.iter().copied(),
                (k, sg),
                false,
            )?;
            self.tiles.written(p, written, in_batch);
        }
        Ok(())
    }

    /// An access chain from one base pointer for every lane (a buffer variable's): the offsets
    /// summed lane by lane in one pass per step, wrapping inside the offset's 48 bits as the
    /// reference path's kernel does ([`access::step_delta`]). `false` (nothing done) for any
    /// other base, which the kernel takes.
    fn chain(&mut self, dst: u32, base: u32, steps: &[crate::program::Step]) -> bool {
        let n = WIDTH;
        let lanes = alu::lanes_of(&self.regs, n, base);
        let p0 = lanes.first().copied().unwrap_or(0);
        if memory::unbound_of(p0).is_some() || lanes.iter().any(|&p| p != p0) {
            return false;
        }
        let (region, off) = memory::split_pointer(p0);
        let mut offsets = [off; WIDTH];
        for step in steps {
            for (l, o) in offsets.iter_mut().enumerate() {
                *o = o.wrapping_add(access::step_delta(step, |slot| rd(&self.regs, n, slot, l)));
            }
        }
        let at = dst as usize * n;
        let Some(d) = self.regs.get_mut(at..at + n) else {
            return false;
        };
        for (d, o) in d.iter_mut().zip(offsets) {
            *d = memory::make_pointer(region, o);
        }
        true
    }

    /// Logs a buffer access of a load or store for the race screen, in the shape the lanes
    /// make: one run, one address, or lane by lane.
    fn log_access(
        &mut self,
        (prog, writable): (&Program, &[bool]),
        op: &Op,
        mask: u128,
        first: u64,
    ) {
        let (ptr, ty, write, uniform) = match *op {
            Op::Load { ptr, ty, .. } => (ptr, ty, false, false),
            Op::LoadUniform { ptr, ty, .. } => (ptr, ty, false, true),
            Op::Store { ptr, ty, .. } => (ptr, ty, true, false),
            _ => return,
        };
        let lanes = alu::lanes_of(&self.regs, WIDTH, ptr);
        let buffer = |p: u64| races::logged(writable, p, write);
        let Some(l0) = bits_of(mask, WIDTH).next() else {
            return;
        };
        let p0 = lanes.get(l0).copied().unwrap_or(0);
        // From the value's start to the end of its last member: what it touches, and the
        // padding between its members, which can only over-report.
        let len = prog.extent_of(ty);
        let active = mask.count_ones() as usize;
        if uniform {
            // OpLoad of a pointer lowering proved uniform: every lane reads the first active
            // lane's address, as the kernel does ([`access::exec_memory`]).
            if buffer(p0) {
                self.log.push(Access {
                    ptr: p0,
                    len,
                    step: if active > 1 { 0 } else { len },
                    count: active as u64,
                    first: first + l0 as u64,
                    write: false,
                });
            }
            return;
        }
        // The active lanes are l0, l0 + 1, ... with no gap.
        let contiguous_lanes = (mask >> l0).count_ones() == (mask >> l0).trailing_ones();
        let at = |l: usize| lanes.get(l).copied().unwrap_or(0);
        // One stride between every two neighbouring lanes (0: one address for all).
        let step = bits_of(mask, WIDTH)
            .nth(1)
            .map_or(len, |l1| at(l1).wrapping_sub(p0));
        let strided = bits_of(mask, WIDTH)
            .all(|l| at(l).wrapping_sub(p0) == ((l - l0) as u64).wrapping_mul(step));
        let fits = step
            .checked_mul(active as u64)
            .and_then(|span| (p0 & ((1 << memory::OFFSET_BITS) - 1)).checked_add(span))
            .is_some_and(|end| end < 1 << memory::OFFSET_BITS);
        if strided && fits && (step == 0 || step >= len) && contiguous_lanes && buffer(p0) {
            self.log.push(Access {
                ptr: p0,
                len,
                step: if active > 1 { step } else { len },
                count: active as u64,
                first: first + l0 as u64,
                write,
            });
            return;
        }
        for l in bits_of(mask, WIDTH) {
            let p = lanes.get(l).copied().unwrap_or(0);
            if buffer(p) {
                self.log.push(Access {
                    ptr: p,
                    len,
                    step: len,
                    count: 1,
                    first: first + l as u64,
                    write,
                });
            }
        }
    }
}

/// Runs `f(registers, lanes, k)` for each subgroup `k` of the batch that has lanes in `mask`,
/// on `subgroup`, a subgroup-sized register file into which the slots `reads` and `writes` are
/// copied from the batch's `regs`; the slots of `writes` are copied back after.
fn per_subgroup<W: Iterator<Item = u32> + Clone>(
    w: &Wide<'_>,
    regs: &mut [u64],
    subgroup: &mut Vec<u64>,
    mask: u128,
    (writes, reads): (W, &[u32]),
    mut f: impl FnMut(&mut [u64], u128, usize) -> Result<(), String>,
) -> Result<(), String> {
    let sg = w.shared.sg;
    if !w.group_ops || sg == 0 || !WIDTH.is_multiple_of(sg) {
        return Err("a subgroup-scope operation the plan did not take".into());
    }
    subgroup_file(w, subgroup);
    for k in 0..WIDTH / sg {
        let lanes = (mask >> (k * sg)) & full_mask(sg);
        if lanes == 0 {
            continue;
        }
        let slots = reads.iter().copied().chain(writes.clone());
        copy_slots(regs, subgroup, slots, (k, sg), true)?;
        f(subgroup, lanes, k)?;
        copy_slots(regs, subgroup, writes.clone(), (k, sg), false)?;
    }
    Ok(())
}

/// Sizes `subgroup` as a register file of every slot for one subgroup.
fn subgroup_file(w: &Wide<'_>, subgroup: &mut Vec<u64>) {
    let size = w.shared.fast.slots as usize * w.shared.sg;
    if subgroup.len() != size {
        *subgroup = vec![0; size];
    }
}

/// Copies `slots` of subgroup `k` (of `sg` invocations) from the batch's register file `regs`
/// into the subgroup-sized `subgroup` (`into` true), or back.
fn copy_slots(
    regs: &mut [u64],
    subgroup: &mut [u64],
    slots: impl Iterator<Item = u32>,
    (k, sg): (usize, usize),
    into: bool,
) -> Result<(), String> {
    for slot in slots {
        let (wide, one) = (slot as usize * WIDTH + k * sg, slot as usize * sg);
        match (
            regs.get_mut(wide..wide + sg),
            subgroup.get_mut(one..one + sg),
        ) {
            (Some(batch), Some(sub)) if into => sub.copy_from_slice(batch),
            (Some(batch), Some(sub)) => batch.copy_from_slice(sub),
            _ => return Err("a subgroup-scope operation's slot out of range".into()),
        }
    }
    Ok(())
}

/// Whether `c` is an Active or Uniform check that holds for every subgroup with lanes in `mask`
/// in one pass over the batch's registers (a GEMM's loop runs a dozen per step): each such
/// subgroup active whole, the operand the same in all its lanes. `false` for anything else,
/// which [`Batch::coopmat`] runs with the reference path's kernel, reporting what fails.
fn checks_pass(w: &Wide<'_>, c: &CoopmatInst, regs: &[u64], mask: u128) -> bool {
    let sg = w.shared.sg;
    if !w.group_ops || sg == 0 || !WIDTH.is_multiple_of(sg) {
        return false;
    }
    let whole = |k: usize| {
        let lanes = (mask >> (k * sg)) & full_mask(sg);
        lanes == 0 || lanes == full_mask(sg)
    };
    let active = |k: usize| (mask >> (k * sg)) & full_mask(sg) != 0;
    match *c {
        CoopmatInst::Active => (0..WIDTH / sg).all(whole),
        CoopmatInst::Uniform { slot, .. } => (0..WIDTH / sg).all(|k| {
            let at = slot as usize * WIDTH + k * sg;
            let same = |v: &[u64]| v.iter().all(|&x| Some(&x) == v.first());
            whole(k) && (!active(k) || regs.get(at..at + sg).is_some_and(same))
        }),
        _ => false,
    }
}

/// `Err` naming the first finding, if there is one: the wide path gives up on it.
fn first_finding(found: &[crate::run::access::LaneFinding]) -> Result<(), String> {
    match found.first() {
        None => Ok(()),
        Some((_, f)) => Err(format!("a finding ({f})")),
    }
}

/// Logs a cooperative-matrix load or store of one subgroup (registers `regs`, `n` lanes, the
/// first being invocation `first`) for the race screen, as [`Batch::coopmat`] says.
pub(crate) fn log_coopmat(
    c: &CoopmatInst,
    regs: &[u64],
    n: usize,
    mask: u128,
    s: &Shared<'_>,
    first: u64,
    log: &mut Vec<Access>,
) -> Result<(), String> {
    let not_uniform = || "a cooperative-matrix access that is not uniform".to_string();
    let layouts = &s.layouts;
    match c {
        CoopmatInst::Load { at, .. } => {
            let (ptr, len) =
                coopmat::touched(at, regs, n, mask, layouts, None).ok_or_else(not_uniform)?;
            if !races::logged(s.writable, ptr, false) {
                return Ok(());
            }
            let region = memory::split_pointer(ptr).0;
            let shared = |a: &Access| !a.write && a.first == u64::MAX && a.step == 0;
            if let Some(a) = log
                .iter_mut()
                .rev()
                .take(4)
                .find(|a| shared(a) && memory::split_pointer(a.ptr).0 == region)
            {
                let end = a.ptr.saturating_add(a.len).max(ptr.saturating_add(len));
                a.ptr = a.ptr.min(ptr);
                a.len = end - a.ptr;
            } else {
                log.push(Access {
                    ptr,
                    len,
                    step: 0,
                    count: 2,
                    first: u64::MAX,
                    write: false,
                });
            }
        }
        CoopmatInst::Store { at, .. } => {
            let mut run = |lane: usize, ptr: u64, len: u64| {
                if memory::split_pointer(ptr).0 < memory::FIRST_BUFFER {
                    return;
                }
                races::push_run(
                    log,
                    Access {
                        ptr,
                        len,
                        step: len,
                        count: 1,
                        first: first + lane as u64,
                        write: true,
                    },
                );
            };
            coopmat::touched(at, regs, n, mask, layouts, Some(&mut run)).ok_or_else(not_uniform)?;
        }
        _ => {}
    }
    Ok(())
}

/// The lanes whose condition holds (is not 0): one comparison when every lane agrees (a loop's
/// test, mostly), else two 64-lane passes.
fn branch_mask(cond: &[u64]) -> u128 {
    // A lane takes the branch when its condition is not 0, as on the reference path.
    let first = cond.first().copied().unwrap_or(0);
    if cond.iter().all(|&c| c == first) {
        return if first != 0 { u128::MAX } else { 0 };
    }
    let half = |c: &[u64]| {
        c.iter()
            .enumerate()
            .fold(0u64, |m, (l, &v)| m | u64::from(v != 0) << l)
    };
    let (lo, hi) = cond.split_at(cond.len().min(64));
    u128::from(half(lo)) | u128::from(half(hi)) << 64
}

/// The index in `waiting` of the tangle whose block comes first in the structured order.
fn lowest_rank(waiting: &[(u32, u128, u64)], prog: &Program) -> Option<usize> {
    let func = prog.functions.get(prog.entry as usize)?;
    let rank = |b: u32| func.blocks.get(b as usize).map_or(u32::MAX, |b| b.rank);
    (0..waiting.len()).min_by_key(|&i| waiting.get(i).map_or(u32::MAX, |(b, _, _)| rank(*b)))
}

/// Where invocation `g` (global linear index, workgroup-major) sits in the dispatch.
fn place(s: &Shared<'_>, g: u64) -> Place {
    let per_group = s
        .fast
        .local_size
        .iter()
        .map(|&x| u64::from(x))
        .product::<u64>()
        .max(1);
    let [gx, gy, _] = s.groups.map(|g| u64::from(g).max(1));
    let wg = g / per_group;
    Place {
        workgroup: [
            (wg % gx) as u32,
            ((wg / gx) % gy) as u32,
            (wg / (gx * gy)) as u32,
        ],
        groups: s.groups,
        local_size: s.fast.local_size,
        local_index: (g % per_group) as u32,
        subgroup_size: s.sg as u32,
    }
}
