//! The native compiler: a lowered [`Program`] of the wide path's subset (cooperative matrices
//! as [`super::coopmat`] takes them) to one Cranelift function `fn(ctx, first, count) -> status` that
//! runs invocations `first .. first + count` (global linear order, workgroup-major) to
//! completion, their blocks as real control flow: in lockstep groups where a group fits
//! ([`super::lockstep`], the function's lockstep copy of every block), else one after the
//! other (its scalar copy, which also finishes the lanes of a group that parted).
//!
//! Register slots become Cranelift variables (`def_var`/`use_var`, which build the SSA form),
//! holding the very `u64` lane value the interpreters hold. Pure ops are emitted by
//! [`super::ops`]. This file emits the invocation loop, blocks and terminators (with `OpPhi`'s
//! parallel copies on each edge), the built-in inputs, loads, stores and access chains, and
//! the give-up exits:
//!
//! * a memory access outside its region, into a region the table leaves empty (workgroup,
//!   invocation, unbound), or not 4-byte aligned;
//! * a sanitizer check that fires (division, shift, index) when checks are on; a dot
//!   product's AccSat overflow;
//! * the step limit: each invocation counts what the reference path counts per tangle (a
//!   block's ops plus one, [`crate::run::Shared::at_terminator`]), and gives up past
//!   [`super::step_budget`], a bound under which no tangle of the reference path can reach
//!   the limit;
//! * the stop flag, read at every loop header (the time limit, another worker's error).

use super::facts::Facts;
use super::lockstep;
use super::native::{self, Code, Ctx, Region};
use crate::program::{Block as PBlock, Function, Op, Program, Slot, Step, Terminator};
use crate::run::memory::{OFFSET_BITS, REGION_UNBOUND};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I8};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, InstBuilder, MemFlagsData, SigRef, Signature, StackSlotData,
    StackSlotKind, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::collections::HashMap;
use std::mem::offset_of;

/// What a compiled function is specialised for, besides its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    /// The run's scheduling policy is the default one (subgroup operations are taken only
    /// then, as on the wide path: `wide::group_batches`).
    pub default_policy: bool,
    /// The sanitizer's checks are on (division, shift and index checks give up).
    pub checks: bool,
    /// Buffer accesses are logged for the race screen.
    pub races: bool,
    /// Every buffer access is logged, for the record of the bytes touched
    /// ([`crate::RunOptions::touched`]).
    pub touched: bool,
    /// Workgroups in the dispatch (the built-ins divide by them).
    pub groups: [u32; 3],
    /// The subgroup size.
    pub sg: u32,
}

/// Why compiled code gave up (the low byte of [`Ctx::reason`]; the block and op follow).
pub(crate) mod reason {
    /// A memory access outside its region or into no region.
    pub const OUT_OF_BOUNDS: u64 = 1;
    /// A memory access not aligned to 4 bytes.
    pub const UNALIGNED: u64 = 2;
    /// An undefined division or remainder.
    pub const DIVISION: u64 = 3;
    /// A shift by at least the width.
    pub const SHIFT: u64 = 4;
    /// A dynamic index out of range.
    pub const INDEX: u64 = 5;
    /// The step bound.
    pub const STEPS: u64 = 6;
    /// A dot product's AccSat overflow.
    pub const DOT: u64 = 7;
    /// A state the compiled code never reaches (a give-up, never a guess, if it did).
    pub const INTERNAL: u64 = 8;
    /// A subgroup operation with a finding, or reached after its group's lanes parted (also
    /// a cooperative-matrix op reached after they parted).
    pub const GROUP: u64 = 9;
    /// A lockstep group's pointers off the line their index made ([`super::affine`]).
    pub const LINE: u64 = 10;
    /// A cooperative-matrix op with a finding or an operand not the same in every lane.
    pub const COOPMAT: u64 = 11;
}

/// A compiled program.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub code: Code,
    /// Memory op sites the race log keeps a run for.
    pub sites: usize,
    /// The subgroup operations, by the index the code passes to [`native::group_op`].
    pub group_ops: std::sync::Arc<Vec<Op>>,
    /// The code uses the subgroup register file ([`super::group::GroupScratch::regs`]).
    pub group_regs: bool,
    /// The tile ops of cooperative matrices ([`super::coopmat`]), by the index the code
    /// passes to [`native::coopmat_op`].
    pub coop: std::sync::Arc<super::coopmat::TileProgram>,
    /// Its compile budget's measure ([`super::budget`]), at most [`super::budget::BUDGET`].
    pub measure: u64,
}

/// The most instructions a function may have for the backtracking register allocator, whose
/// time grows faster than the function (about as its size to the power 1.4 on the generated
/// programs of `tangle-oracle`'s `group_ops`); a larger one takes the single-pass allocator,
/// linear in its size, which spills more (a function that large is rarely a hot kernel's).
const BACKTRACKING_INSTS: usize = 1 << 15;

/// The host's code generator, or why there is none; with the single-pass register
/// allocator when `single_pass`.
fn host(single_pass: bool) -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        // The memory argument of `native` holds for these two only.
        return Err("the native tier supports x86-64 and aarch64 hosts".into());
    }
    let mut flags = settings::builder();
    let regalloc = if single_pass {
        "single_pass"
    } else {
        "backtracking"
    };
    for (k, v) in [
        ("opt_level", "speed"),
        ("is_pic", "false"),
        ("regalloc_algorithm", regalloc),
    ] {
        flags
            .set(k, v)
            .map_err(|e| format!("Cranelift setting {k}: {e}"))?;
    }
    cranelift_native::builder()
        .map_err(|e| format!("no Cranelift code generator for this host: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("Cranelift: {e}"))
}

/// Compiles `prog` for `key`, or says why not (the dispatch then takes the interpreters);
/// stops before Cranelift's code generation when `deadline` has passed.
pub(crate) fn compile(
    prog: &Program,
    key: Key,
    deadline: Option<std::time::Instant>,
) -> Result<Compiled, String> {
    let plan = crate::wide::plan(prog)?;
    if plan.workgroup {
        // Its batches are not aligned to workgroups: the wide path takes these.
        return Err("Workgroup memory or barriers (the wide path runs them)".into());
    }
    let func = prog
        .functions
        .get(prog.entry as usize)
        .ok_or("no entry function")?;
    if plan.group_ops {
        lockstep::subgroups_taken(prog, func, key)?;
    }
    let coop = lockstep::has_matrices(func)
        .then(|| super::coopmat::plan(prog, func))
        .transpose()?;
    let (code, (sites, group_ops, coop, measure)) =
        build("tangle_dispatch", prog, func, key, deadline, |e| {
            e.coop = coop;
            e.function()?;
            e.budget.check()?;
            let coop = e.coop.as_mut().map(|p| p.program()).unwrap_or_default();
            Ok((
                e.sites as usize,
                std::mem::take(&mut e.group_ops),
                coop,
                e.budget.spent,
            ))
        })?;
    Ok(Compiled {
        code,
        sites,
        group_ops: std::sync::Arc::new(group_ops),
        group_regs: plan.group_ops,
        coop: std::sync::Arc::new(coop),
        measure,
    })
}

/// Builds one function of the [`super::native::Entry`] signature, named `name`: `body` emits
/// it through an [`Emitter`] over `func` of `prog`. Returns the finished code and what `body`
/// returned.
fn build<R>(
    name: &str,
    prog: &Program,
    func: &Function,
    key: Key,
    deadline: Option<std::time::Instant>,
    body: impl FnOnce(&mut Emitter<'_>) -> Result<R, String>,
) -> Result<(Code, R), String> {
    let mut facts = Facts::of(prog, func, key.groups);
    facts.log_all = key.touched;
    let isa = host(false)?;
    let call_conv = isa.default_call_conv();
    let frontend = isa.frontend_config();
    let mut ctx = cranelift_codegen::Context::new();
    let mut sig = Signature::new(call_conv);
    sig.params.extend([AbiParam::new(I64); 3]);
    sig.returns.push(AbiParam::new(I64));
    ctx.func.signature = sig;
    let mut fbc = FunctionBuilderContext::new();
    let out = {
        let b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
        let mut e = Emitter::new(b, prog, func, &facts, key, call_conv);
        if std::env::var_os("TANGLE_JIT_DISASM").is_some() {
            e.print_plan();
        }
        let out = body(&mut e)?;
        e.b.seal_all_blocks();
        e.b.finalize(frontend);
        out
    };
    if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
        return Err("the time limit passed".into());
    }
    // The register allocator by the function's size (both allocators are exact; they differ
    // in speed).
    let isa = if ctx.func.dfg.num_insts() > BACKTRACKING_INSTS {
        host(true)?
    } else {
        isa
    };
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let id = module
        .declare_function(name, Linkage::Local, &ctx.func.signature)
        .map_err(|e| format!("Cranelift: {e}"))?;
    // A developer's aid: the machine code of every function compiled, on stderr.
    let disasm = std::env::var_os("TANGLE_JIT_DISASM").is_some();
    ctx.set_disasm(disasm);
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("Cranelift: {e:?}"))?;
    if let Some(code) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
        eprintln!("{name}:\n{code}");
    }
    module.clear_context(&mut ctx);
    Ok((Code::new(module, id)?, out))
}

/// Compiles one op alone, for the tests: a function `(regs, _, _) -> status` that reads slots
/// `0..slots` from the `u64`s at `regs`, runs `op` and writes them back; status 1 when it gave
/// up. `constants` are slots the compiler may take as known (the caller puts the same values
/// in `regs`).
#[cfg(test)]
pub(crate) fn compile_op(
    op: &Op,
    slots: u32,
    checks: bool,
    constants: &[(Slot, u64)],
) -> Result<Code, String> {
    let prog = Program {
        slots,
        constants: constants.to_vec(),
        ..Program::default()
    };
    let func = Function::default();
    let key = Key {
        default_policy: true,
        checks,
        races: false,
        touched: false,
        groups: [1; 3],
        sg: 1,
    };
    let (code, ()) = build("op", &prog, &func, key, None, |e| {
        let entry = e.b.create_block();
        e.b.append_block_params_for_function_params(entry);
        e.b.switch_to_block(entry);
        let regs = *e.b.block_params(entry).first().ok_or("no parameter")?;
        let flags = MemFlagsData::trusted();
        for s in 0..slots {
            let v = e.b.ins().load(I64, flags, regs, s as i32 * 8);
            e.set(s, v)?;
        }
        e.op(op)?;
        for s in 0..slots {
            let v = e.get(s)?;
            e.b.ins().store(flags, v, regs, s as i32 * 8);
        }
        let zero = e.iconst(0);
        e.b.ins().return_(&[zero]);
        let giveup = e.giveup;
        e.b.switch_to_block(giveup);
        e.b.append_block_param(giveup, I64);
        let one = e.iconst(1);
        e.b.ins().return_(&[one]);
        Ok(())
    })?;
    Ok(code)
}

/// A branch edge's block, the phi copies it makes, and the block it goes on to.
type Edge<'a> = (Block, &'a [(Slot, Slot)], u32);

/// The values every block may use, defined in the entry block.
pub(super) struct Entryvals {
    /// `Ctx::group` and `Ctx::group_regs`.
    pub(super) group: Value,
    pub(super) group_regs: Value,
    /// `Ctx::tiles` and `Ctx::log`.
    pub(super) tiles: Value,
    pub(super) log: Value,
    regions: Value,
    nregions: Value,
    region_mask: Value,
    stop: Value,
    limit: Value,
}

/// The variables a diverged group keeps while its lanes finish one by one
/// ([`super::lockstep`]).
pub(super) struct Divergence {
    /// The block whose terminator the group diverged at.
    pub block: Variable,
    /// The next lane to finish.
    pub lane: Variable,
    /// The group's first invocation.
    pub first: Variable,
    /// The group's steps when it diverged.
    pub steps: Variable,
    /// 1 while a diverged group's lanes are finishing (a return then resumes the next).
    pub active: Variable,
}

/// The state of one function's emission.
pub(super) struct Emitter<'a> {
    pub(super) b: FunctionBuilder<'a>,
    pub(super) prog: &'a Program,
    pub(super) func: &'a Function,
    pub(super) facts: &'a Facts,
    pub(super) key: Key,
    call_conv: CallConv,
    vars: Vec<Variable>,
    blocks: Vec<Block>,
    pub(super) giveup: Block,
    stopped: Block,
    entry: Option<Entryvals>,
    /// The invocation index (a group's first in lockstep), the current invocation's (or
    /// group's) steps, and instructions in total.
    pub(super) g: Variable,
    pub(super) steps: Variable,
    instructions: Variable,
    sigs: HashMap<usize, SigRef>,
    /// The next race log site.
    pub(super) sites: u32,
    /// Invocations per lockstep group ([`super::lockstep`]); 1 when there is no lockstep copy.
    pub(super) lanes: u32,
    /// The lane being emitted in the lockstep copy; `None` in the scalar code.
    pub(super) lane: Option<u32>,
    /// Each lane's variables of the slots not shared, by lane then slot.
    lane_vars: Vec<Vec<Variable>>,
    /// The slots held once for a group in lockstep ([`super::lockstep::shared_slots`]).
    shared: Vec<bool>,
    /// The slots held as vectors of 32-bit lanes ([`super::lockstep::vector_slots`]).
    vector: Vec<bool>,
    /// The slots held once as lane 0's value, the others a step apart ([`super::affine`]).
    pub(super) affine: Vec<Option<super::affine::Affine>>,
    /// The run-time steps of affine slots that have one ([`super::affine::Affine::dynamic`]).
    pub(super) step_vars: Vec<Option<Variable>>,
    /// Their variables, by vector then slot.
    vec_vars: Vec<Vec<Option<Variable>>>,
    /// The lockstep copy's blocks.
    lock_blocks: Vec<Block>,
    /// The race log site of the op being emitted in lockstep, shared by its lanes.
    pub(super) op_site: Option<u32>,
    /// The written slots, in the order a diverging group spills them.
    pub(super) spilled: Vec<Slot>,
    /// The spill area's address.
    pub(super) spill: Option<Value>,
    /// The blocks whose terminator a group may diverge at.
    pub(super) diverges: Vec<bool>,
    pub(super) div: Divergence,
    /// Where diverged lanes are restored ([`Emitter::resume`]).
    pub(super) resume_block: Block,
    /// The subgroup operations emitted, by index ([`super::group`]).
    pub(super) group_ops: Vec<Op>,
    /// Divergence blocks to fill after the terminator being emitted.
    pub(super) pending_div: Vec<(Block, u32)>,
    /// While a lockstep op's lanes are emitted, their race log accesses (pointer, bytes,
    /// write), logged together after the last lane ([`Emitter::log_group`]).
    pub(super) deferred: Option<Vec<(Value, u64, bool)>>,
    /// Where the op being emitted is, for the give-up code: (block, op).
    pub(super) at: (u32, u32),
    /// The cooperative matrices' tile plan ([`super::coopmat`]), for a program with them.
    pub(super) coop: Option<super::coopmat::CoopPlan>,
    /// The blocks that check the step bound and the stop flag on entry: loop headers, and
    /// every target of a branch from a block not before it, so that every cycle has one.
    checked: Vec<bool>,
    /// Loads from push constants through pointers known at compile time, read once on entry
    /// (push constants do not change during a dispatch): their leaves' values by pointer slot.
    push: HashMap<Slot, Vec<Value>>,
    /// For each buffer variable with [`super::facts::Bounded`] chains: how many bytes past
    /// its pointer their accesses may reach, checked against the buffer's length on entry
    /// ([`Emitter::bounded_extents`]), and the buffer's host address, loaded there.
    extents: HashMap<Slot, (u64, Value)>,
    /// While the scalar copy is emitted: each block's reads and writes ([`super::live`]).
    reads: Option<super::live::Reads>,
    /// For each block: the positions in [`Emitter::spilled`] of the slots a lane finishing
    /// alone from its terminator may read, the only ones a group diverging there spills.
    pub(super) live: Vec<Vec<usize>>,
    /// For each block of the scalar copy and of the lockstep copy: the blocks whose
    /// terminators (and, in the scalar copy, [`Emitter::resume`]'s copies of them) may still
    /// branch to it; it is sealed when none is left, so that Cranelift's SSA construction
    /// never leaves a lookup pending (the blow-up `seal_all_blocks` gave: `docs/executor.md`).
    preds_left: [Vec<u32>; 2],
    /// The compile budget's measure ([`super::budget`]).
    pub(super) budget: super::budget::Budget,
    /// The constants of slots no op writes. A read of one is the constant itself, not a
    /// variable's value: a variable defined on entry and read all over the function would make
    /// Cranelift's SSA construction walk back from every read, and the register allocator keep
    /// one more value alive throughout (both grew with the program's size times its constants).
    consts: HashMap<Slot, u64>,
}

/// The low `bits` bits mask.
pub(super) fn mask(bits: u32) -> u64 {
    crate::semantics::mask(bits)
}

impl<'a> Emitter<'a> {
    fn new(
        mut b: FunctionBuilder<'a>,
        prog: &'a Program,
        func: &'a Function,
        facts: &'a Facts,
        key: Key,
        call_conv: CallConv,
    ) -> Emitter<'a> {
        let vars = (0..prog.slots).map(|_| b.declare_var(I64)).collect();
        let blocks = func.blocks.iter().map(|_| b.create_block()).collect();
        let (giveup, stopped) = (b.create_block(), b.create_block());
        let mut checked: Vec<bool> = func
            .blocks
            .iter()
            .map(|b| b.continue_target.is_some())
            .collect();
        for (from, block) in func.blocks.iter().enumerate() {
            let targets: Vec<u32> = match block.terminator {
                Terminator::Branch(t) => vec![t],
                Terminator::BranchConditional { t, f, .. } => vec![t, f],
                Terminator::Switch {
                    ref cases, default, ..
                } => cases.iter().map(|c| c.1).chain([default]).collect(),
                _ => Vec::new(),
            };
            for t in targets {
                if t as usize <= from {
                    if let Some(c) = checked.get_mut(t as usize) {
                        *c = true;
                    }
                }
            }
        }
        let (g, steps, instructions) = (b.declare_var(I64), b.declare_var(I64), b.declare_var(I64));
        let spilled: Vec<Slot> = (0..prog.slots)
            .filter(|&s| facts.written.get(s as usize).copied().unwrap_or(false))
            .collect();
        let lanes = lockstep::lanes_for(func, spilled.len(), key);
        let shared = if lanes > 1 {
            lockstep::shared_slots(prog, func, facts, lanes, key.sg)
        } else {
            Vec::new()
        };
        let affine = if lanes > 1 {
            super::affine::affine_slots(prog, func, facts, key, lanes, &shared)
        } else {
            Vec::new()
        };
        let step_vars = affine
            .iter()
            .map(|a| a.filter(|a| a.dynamic).map(|_| b.declare_var(I64)))
            .collect();
        // Vectors only of slots held per lane.
        let once: Vec<bool> = (0..prog.slots as usize)
            .map(|s| {
                shared.get(s).copied().unwrap_or(false)
                    || affine.get(s).copied().flatten().is_some()
            })
            .collect();
        let vector = if lanes >= 4 {
            lockstep::vector_slots(prog, func, &once, facts)
        } else {
            Vec::new()
        };
        let vec_vars = (0..lanes / 4)
            .map(|_| {
                vector
                    .iter()
                    .map(|&v| v.then(|| b.declare_var(I32X4)))
                    .collect()
            })
            .collect();
        let lane_vars = if lanes > 1 {
            (0..lanes)
                .map(|_| (0..prog.slots).map(|_| b.declare_var(I64)).collect())
                .collect()
        } else {
            Vec::new()
        };
        let lock_blocks = if lanes > 1 {
            func.blocks.iter().map(|_| b.create_block()).collect()
        } else {
            Vec::new()
        };
        let unshared = |s: Slot| !shared.get(s as usize).copied().unwrap_or(false);
        let diverges: Vec<bool> = func
            .blocks
            .iter()
            .map(|block| match block.terminator {
                Terminator::BranchConditional { cond, t, f } => t != f && unshared(cond),
                Terminator::Switch { selector, .. } => unshared(selector),
                _ => false,
            })
            .map(|d| d && lanes > 1)
            .collect();
        let div = Divergence {
            block: b.declare_var(I64),
            lane: b.declare_var(I64),
            first: b.declare_var(I64),
            steps: b.declare_var(I64),
            active: b.declare_var(I64),
        };
        let resume_block = b.create_block();
        let preds_left = [false, true].map(|lock| {
            let mut left = vec![0u32; func.blocks.len()];
            for (i, block) in func.blocks.iter().enumerate() {
                let mut succ = block.terminator.successors();
                succ.sort_unstable();
                succ.dedup();
                // A diverging block's terminator is emitted again in the scalar code's resume.
                let copies = if !lock && diverges.get(i).copied().unwrap_or(false) {
                    2
                } else {
                    1
                };
                for t in succ {
                    if let Some(l) = left.get_mut(t as usize) {
                        *l += copies;
                    }
                }
            }
            left
        });
        Emitter {
            b,
            prog,
            func,
            facts,
            key,
            call_conv,
            vars,
            blocks,
            giveup,
            stopped,
            entry: None,
            g,
            steps,
            instructions,
            sigs: HashMap::new(),
            sites: 0,
            at: (0, 0),
            checked,
            push: HashMap::new(),
            extents: Default::default(),
            lanes,
            lane: None,
            lane_vars,
            shared,
            vector,
            affine,
            step_vars,
            vec_vars,
            lock_blocks,
            op_site: None,
            spilled,
            spill: None,
            diverges,
            div,
            resume_block,
            pending_div: Vec::new(),
            deferred: None,
            group_ops: Vec::new(),
            coop: None,
            reads: None,
            live: Vec::new(),
            preds_left,
            budget: Default::default(),
            consts: prog
                .constants
                .iter()
                .copied()
                .filter(|&(s, _)| !facts.written.get(s as usize).copied().unwrap_or(true))
                .collect(),
        }
    }

    /// A developer's aid (`TANGLE_JIT_DISASM`): the function's ops, each written slot marked
    /// with how a lockstep group holds it (`=` shared, `+step` affine, `~` run-time step,
    /// `v` vector, else per lane), on stderr.
    fn print_plan(&self) {
        let class = |s: Slot| match (self.is_shared(s), self.affine(s), self.is_vector(s)) {
            (true, _, _) => "=".to_string(),
            (_, Some(a), _) if a.dynamic => "~".to_string(),
            (_, Some(a), _) => format!("+{}", a.step as i64),
            (_, _, true) => "v".to_string(),
            _ => String::new(),
        };
        eprintln!("lockstep groups of {} lanes", self.lanes);
        for (i, block) in self.func.blocks.iter().enumerate() {
            eprintln!("block {i}:");
            for (_, copies) in &block.phis {
                for &(dst, src) in copies {
                    eprintln!("  phi s{dst}{} <- s{src}", class(dst));
                }
            }
            for op in &block.ops {
                let writes = super::facts::op_slots(self.prog, op)
                    .map(|(w, _)| w)
                    .unwrap_or_default();
                let marks: Vec<String> = writes
                    .iter()
                    .map(|&w| format!("s{w}{}", class(w)))
                    .collect();
                eprintln!("  {} := {op:?}", marks.join(" "));
            }
        }
    }

    /// Whether slot `s` is held as vectors of 32-bit lanes in lockstep.
    pub(super) fn is_vector(&self, s: Slot) -> bool {
        self.vector.get(s as usize).copied().unwrap_or(false)
    }

    /// The variable of vector `v` (lanes `4v .. 4v + 4`) of vector slot `s`.
    pub(super) fn vec_var(&self, s: Slot, v: u32) -> Result<Variable, String> {
        self.vec_vars
            .get(v as usize)
            .and_then(|vars| vars.get(s as usize))
            .copied()
            .flatten()
            .ok_or_else(|| format!("slot {s} is no vector slot"))
    }

    /// Whether slot `s` is held once for a group in lockstep.
    pub(super) fn is_shared(&self, s: Slot) -> bool {
        self.shared.get(s as usize).copied().unwrap_or(false)
    }

    /// Whether slot `s` is held once for a group in lockstep, shared or affine (lane 0's).
    pub(super) fn held_once(&self, s: Slot) -> bool {
        self.is_shared(s) || self.affine(s).is_some()
    }

    /// The variable of slot `s` in the lane being emitted.
    fn var(&self, s: Slot) -> Result<Variable, String> {
        let vars = match self.lane {
            Some(l) if !self.held_once(s) => self
                .lane_vars
                .get(l as usize)
                .ok_or("a lane outside the group")?,
            _ => &self.vars,
        };
        vars.get(s as usize)
            .copied()
            .ok_or_else(|| format!("slot {s} outside the register file"))
    }

    /// A slot's value (in the lane being emitted).
    pub(super) fn get(&mut self, s: Slot) -> Result<Value, String> {
        if self.lane.is_none() && self.reads.is_some() {
            let (block, at_end) = (self.at.0, self.at_end());
            if let Some(r) = self.reads.as_mut() {
                r.read(block, at_end, s);
            }
        }
        if let Some(&c) = self.consts.get(&s) {
            return Ok(self.iconst(c));
        }
        if let Some(l) = self.lane.filter(|_| self.is_vector(s)) {
            return self.vec_lane(s, l);
        }
        let v = self.var(s)?;
        let v = self.use_var(v);
        match (self.lane, self.affine(s)) {
            (Some(l), Some(a)) => self.affine_lane(s, a, v, l),
            _ => Ok(v),
        }
    }

    /// Sets a slot (in the lane being emitted).
    pub(super) fn set(&mut self, s: Slot, v: Value) -> Result<(), String> {
        if self.lane.is_none() && self.reads.is_some() {
            let (block, at_end) = (self.at.0, self.at_end());
            if let Some(r) = self.reads.as_mut() {
                r.write(block, at_end, s);
            }
        }
        if let Some(l) = self.lane.filter(|_| self.is_vector(s)) {
            return self.vec_set_lane(s, l, v);
        }
        if self.lane.is_some_and(|l| l > 0) && self.affine(s).is_some() {
            // Only lane 0's value is held; the ops that write affine slots run once.
            return Err(format!("lane {:?} writes affine slot {s}", self.lane));
        }
        let var = self.var(s)?;
        self.def_var(var, v);
        Ok(())
    }

    /// Whether the code being emitted is its block's terminator (or an edge's phi copies).
    fn at_end(&self) -> bool {
        let ops = self
            .func
            .blocks
            .get(self.at.0 as usize)
            .map_or(0, |b| b.ops.len());
        self.at.1 as usize >= ops
    }

    /// Seals the blocks of a copy (the lockstep one when `lock`) that no block branches to:
    /// the first (its one branch, from the invocation loop, is emitted before the copy) and
    /// unreachable ones.
    fn seal_unreached(&mut self, lock: bool) {
        let blocks = if lock {
            &self.lock_blocks
        } else {
            &self.blocks
        };
        let none: Vec<Block> = self.preds_left[usize::from(lock)]
            .iter()
            .zip(blocks)
            .filter(|(&left, _)| left == 0)
            .map(|(_, &b)| b)
            .collect();
        for b in none {
            self.b.seal_block(b);
        }
    }

    /// Reads variable `var` (counted in the compile budget's measure).
    pub(super) fn use_var(&mut self, var: Variable) -> Value {
        let blocks = self.b.func.dfg.num_blocks() as u32;
        self.budget.touch(var, blocks, true);
        self.b.use_var(var)
    }

    /// Defines variable `var` (counted in the compile budget's measure).
    pub(super) fn def_var(&mut self, var: Variable, v: Value) {
        let blocks = self.b.func.dfg.num_blocks() as u32;
        self.budget.touch(var, blocks, false);
        self.b.def_var(var, v);
    }

    /// Notes that the op being emitted always gives up: in the scalar copy, what its block
    /// reads after it is never run ([`super::live`]).
    pub(super) fn gives_up_always(&mut self) {
        if let (Some(r), None) = (self.reads.as_mut(), self.lane) {
            r.give_up(self.at.0);
        }
    }

    /// Switches to `block`, whose predecessors are all emitted, and seals it.
    pub(super) fn enter(&mut self, block: Block) {
        self.b.switch_to_block(block);
        self.b.seal_block(block);
    }

    /// The index of the invocation being emitted: the group's first plus the lane.
    fn inv(&mut self) -> Value {
        let g = self.use_var(self.g);
        match self.lane {
            Some(l) if l > 0 => self.b.ins().iadd_imm_s(g, i64::from(l)),
            _ => g,
        }
    }

    /// The value of a slot that holds a constant throughout.
    pub(super) fn constant(&self, s: Slot) -> Option<u64> {
        self.facts.known.get(&s).copied()
    }

    pub(super) fn iconst(&mut self, v: u64) -> Value {
        self.b.ins().iconst(I64, v as i64)
    }

    /// The low `bits` bits of `v` ([`crate::semantics::truncate`]).
    pub(super) fn trunc(&mut self, bits: u32, v: Value) -> Value {
        match bits {
            64.. => v,
            // A 32-bit move zero-extends on x86-64 (the mask would be a load from the
            // constant pool and an `and`).
            32 => {
                let low = self.b.ins().ireduce(I32, v);
                self.b.ins().uextend(I64, low)
            }
            _ => self.b.ins().band_imm_s(v, mask(bits) as i64),
        }
    }

    /// `v`'s low `bits` bits sign-extended ([`crate::semantics::sign_extend`]).
    pub(super) fn sext(&mut self, bits: u32, v: Value) -> Value {
        match bits {
            0 => self.iconst(0),
            1..=63 => {
                let up = self.b.ins().ishl_imm_s(v, i64::from(64 - bits));
                self.b.ins().sshr_imm_s(up, i64::from(64 - bits))
            }
            _ => v,
        }
    }

    /// A 0/1 `i64` from a comparison's `i8`.
    pub(super) fn bool64(&mut self, c: Value) -> Value {
        self.b.ins().uextend(I64, c)
    }

    /// Calls helper `f` (an `extern "C" fn` of `u64`s returning one) with `args`.
    pub(super) fn call(&mut self, f: *const (), args: &[Value]) -> Value {
        let n = args.len();
        let sig = match self.sigs.get(&n) {
            Some(s) => *s,
            None => {
                let mut sig = Signature::new(self.call_conv);
                sig.params.extend((0..n).map(|_| AbiParam::new(I64)));
                sig.returns.push(AbiParam::new(I64));
                let s = self.b.import_signature(sig);
                self.sigs.insert(n, s);
                s
            }
        };
        let callee = self.b.ins().iconst(I64, f as usize as i64);
        let inst = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(inst).first().copied().unwrap_or(callee)
    }

    /// Leaves for the give-up exit when `cond` (an integer) is not zero.
    pub(super) fn give_up_if(&mut self, cond: Value, why: u64) {
        let code = why | u64::from(self.at.0) << 8 | u64::from(self.at.1) << 32;
        let code = self.iconst(code);
        let cont = self.b.create_block();
        self.b
            .ins()
            .brif(cond, self.giveup, &[BlockArg::Value(code)], cont, &[]);
        self.enter(cont);
    }

    fn ctx_field(&mut self, ctx: Value, offset: usize) -> Value {
        self.b
            .ins()
            .load(I64, MemFlagsData::trusted(), ctx, offset as i32)
    }

    fn function(&mut self) -> Result<(), String> {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.enter(entry);
        let params = self.b.block_params(entry).to_vec();
        let [ctx, first, count] = params[..] else {
            return Err("the entry block's parameters".into());
        };
        let vals = Entryvals {
            group: self.ctx_field(ctx, offset_of!(Ctx, group)),
            group_regs: self.ctx_field(ctx, offset_of!(Ctx, group_regs)),
            tiles: self.ctx_field(ctx, offset_of!(Ctx, tiles)),
            regions: self.ctx_field(ctx, offset_of!(Ctx, regions)),
            nregions: self.ctx_field(ctx, offset_of!(Ctx, nregions)),
            region_mask: self.ctx_field(ctx, offset_of!(Ctx, region_mask)),
            stop: self.ctx_field(ctx, offset_of!(Ctx, stop)),
            log: self.ctx_field(ctx, offset_of!(Ctx, log)),
            limit: self.ctx_field(ctx, offset_of!(Ctx, step_limit)),
        };
        let template = self.ctx_field(ctx, offset_of!(Ctx, template));
        // Slots no op writes hold their template value (constants, buffer handles) throughout.
        let handles: Vec<Slot> = self.prog.variables.iter().map(|v| v.slot).collect();
        for s in 0..self.prog.slots {
            if self.facts.written.get(s as usize).copied().unwrap_or(true) {
                continue;
            }
            let v = match self.consts.get(&s) {
                // Made where each read is ([`Emitter::get`]).
                Some(_) => continue,
                None if handles.contains(&s) => self.b.ins().load(
                    I64,
                    MemFlagsData::trusted(),
                    template,
                    (s as i32).wrapping_mul(8),
                ),
                None => continue,
            };
            self.set(s, v)?;
        }
        self.entry = Some(vals);
        self.push_constants()?;
        self.bounded_extents()?;
        let zero = self.iconst(0);
        self.def_var(self.instructions, zero);
        self.def_var(self.g, first);
        if self.lanes > 1 {
            let bytes = self.spilled.len() * (self.lanes as usize + 1) * 8;
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                u32::try_from(bytes.max(8)).map_err(|_| "a spill area too large")?,
                3,
            ));
            self.spill = Some(self.b.ins().stack_addr(I64, slot, 0));
            for v in [
                self.div.block,
                self.div.lane,
                self.div.first,
                self.div.steps,
                self.div.active,
            ] {
                self.def_var(v, zero);
            }
        }
        let end = self.b.ins().iadd(first, count);
        let head = self.b.create_block();
        let (body, exit) = (self.b.create_block(), self.b.create_block());
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(head);
        let g = self.use_var(self.g);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, g, end);
        self.b.ins().brif(more, body, &[], exit, &[]);

        self.enter(body);
        self.def_var(self.steps, zero);
        let first_block = *self.blocks.first().ok_or("no blocks")?;
        match self.lock_blocks.first() {
            // A whole group left: in lockstep; the last invocations alone.
            Some(&lock) => {
                let g = self.use_var(self.g);
                let left = self.b.ins().isub(end, g);
                let whole = self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    left,
                    i64::from(self.lanes),
                );
                self.b.ins().brif(whole, lock, &[], first_block, &[]);
            }
            None => {
                self.b.ins().jump(first_block, &[]);
            }
        }

        let func = self.func;
        self.seal_unreached(false);
        // The scalar copy, its reads recorded: what a diverged lane may read is computed from
        // them before the lockstep copy spills anything.
        self.reads = (self.lanes > 1).then(|| super::live::Reads::new(func.blocks.len()));
        for (i, block) in func.blocks.iter().enumerate() {
            self.block(i as u32, block, head)?;
        }
        if let Some(reads) = self.reads.take() {
            let index: HashMap<Slot, usize> = self
                .spilled
                .iter()
                .enumerate()
                .map(|(k, &s)| (s, k))
                .collect();
            self.live = reads
                .live_at_end(func)
                .iter()
                .map(|set| set.iter().filter_map(|s| index.get(s).copied()).collect())
                .collect();
        }
        if self.lanes > 1 {
            self.seal_unreached(true);
            let blocks = self.b.func.dfg.num_blocks() as u32;
            self.budget.start_copy(blocks);
            for (i, block) in func.blocks.iter().enumerate() {
                self.lane = Some(0);
                self.block(i as u32, block, head)?;
            }
            self.lane = None;
            self.resume(head)?;
        }
        // Every branch to the loop's head is emitted (the returns, the resume's last lane).
        self.b.seal_block(head);

        self.enter(exit);
        let n = self.use_var(self.instructions);
        self.b.ins().store(
            MemFlagsData::trusted(),
            n,
            ctx,
            offset_of!(Ctx, instructions) as i32,
        );
        let done = self.iconst(super::Status::Done as u64);
        self.b.ins().return_(&[done]);

        for (exit, status) in [
            (self.giveup, super::Status::GaveUp),
            (self.stopped, super::Status::Stopped),
        ] {
            self.enter(exit);
            self.b.set_cold_block(exit);
            let why = self.b.append_block_param(exit, I64);
            self.b.ins().store(
                MemFlagsData::trusted(),
                why,
                ctx,
                offset_of!(Ctx, reason) as i32,
            );
            let s = self.iconst(status as u64);
            self.b.ins().return_(&[s]);
        }
        Ok(())
    }

    pub(super) fn vals(&self) -> Result<&Entryvals, String> {
        self.entry.as_ref().ok_or_else(|| "no entry values".into())
    }

    /// One block: the stop flag at a loop header, its ops, the step count, the terminator.
    /// In the lockstep copy when [`Emitter::lane`] is set: the ops for every lane, the steps
    /// once for the group.
    fn block(&mut self, i: u32, block: &PBlock, head: Block) -> Result<(), String> {
        let lock = self.lane.is_some();
        let here = *if lock {
            self.lock_blocks.get(i as usize)
        } else {
            self.blocks.get(i as usize)
        }
        .ok_or("block index")?;
        self.b.switch_to_block(here);
        if self.checked.get(i as usize).copied().unwrap_or(true) {
            self.at = (i, 0);
            let stop = self.vals()?.stop;
            let flag = self.b.ins().load(I8, MemFlagsData::trusted(), stop, 0);
            let cont = self.b.create_block();
            let at = self.iconst(u64::from(i));
            self.b
                .ins()
                .brif(flag, self.stopped, &[BlockArg::Value(at)], cont, &[]);
            self.enter(cont);
            self.check_steps()?;
        }
        for (j, op) in block.ops.iter().enumerate() {
            self.at = (i, j as u32);
            self.budget.check()?;
            if lock {
                self.lock_op(op)?;
            } else {
                self.op(op)?;
            }
        }
        self.at = (i, block.ops.len() as u32);
        let n = block.ops.len() as i64;
        let steps = self.use_var(self.steps);
        let steps = self.b.ins().iadd_imm_s(steps, n + 1);
        self.def_var(self.steps, steps);
        let total = self.use_var(self.instructions);
        let per = if lock { i64::from(self.lanes) } else { 1 };
        let total = self.b.ins().iadd_imm_s(total, n * per);
        self.def_var(self.instructions, total);
        self.terminator(i, &block.terminator, head)?;
        self.budget.check()
    }

    /// Gives up when the invocation's steps passed the bound: on entry to the blocks every
    /// cycle passes, and at the end of the invocation.
    fn check_steps(&mut self) -> Result<(), String> {
        let limit = self.vals()?.limit;
        let steps = self.use_var(self.steps);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, steps, limit);
        self.give_up_if(over, reason::STEPS);
        Ok(())
    }

    /// Block `from`'s terminator, in the lockstep copy when [`Emitter::lane`] is set: a
    /// condition or selector not shared may send the group to [`Emitter::diverge`].
    pub(super) fn terminator(
        &mut self,
        from: u32,
        t: &Terminator,
        head: Block,
    ) -> Result<(), String> {
        let lock = self.lane.is_some();
        let mut pending = Vec::new();
        match *t {
            Terminator::Branch(to) => {
                let target = self.edge(from, to, &mut pending, lock)?;
                self.b.ins().jump(target, &[]);
            }
            Terminator::BranchConditional { cond, t, f } => {
                let tb = self.edge(from, t, &mut pending, lock)?;
                let fb = if t == f {
                    tb
                } else {
                    self.edge(from, f, &mut pending, lock)?
                };
                if tb == fb {
                    self.b.ins().jump(tb, &[]);
                } else if lock && !self.is_shared(cond) {
                    // Every lane true, every lane false, or the group diverges.
                    let (all, any) = self.lock_condition(cond)?;
                    let div = self.diverge(from);
                    let mixed = self.b.create_block();
                    self.b.ins().brif(all, tb, &[], mixed, &[]);
                    self.enter(mixed);
                    self.b.ins().brif(any, div, &[], fb, &[]);
                } else {
                    // The reference path takes the true branch where the condition is not 0.
                    self.lane = lock.then_some(0);
                    let c = self.get(cond)?;
                    self.b.ins().brif(c, tb, &[], fb, &[]);
                }
            }
            Terminator::Switch {
                selector,
                bits,
                ref cases,
                default,
            } => {
                // Each invocation to the first case its selector's low `bits` equal.
                let v = if lock && !self.is_shared(selector) {
                    let (v, same) = self.lock_selector(selector, bits)?;
                    let div = self.diverge(from);
                    let together = self.b.create_block();
                    self.b.ins().brif(same, together, &[], div, &[]);
                    self.enter(together);
                    v
                } else {
                    self.lane = lock.then_some(0);
                    let v = self.get(selector)?;
                    self.trunc(bits, v)
                };
                let mut switch = Switch::new();
                let mut seen = Vec::new();
                for &(value, to) in cases {
                    if seen.contains(&value) {
                        continue;
                    }
                    seen.push(value);
                    let target = self.edge(from, to, &mut pending, lock)?;
                    switch.set_entry(u128::from(value), target);
                }
                let otherwise = self.edge(from, default, &mut pending, lock)?;
                switch.emit(&mut self.b, v, otherwise);
            }
            Terminator::Return => {
                self.check_steps()?;
                let g = self.use_var(self.g);
                if lock {
                    let next = self.b.ins().iadd_imm_s(g, i64::from(self.lanes));
                    self.def_var(self.g, next);
                    self.b.ins().jump(head, &[]);
                } else {
                    let next = self.b.ins().iadd_imm_s(g, 1);
                    self.def_var(self.g, next);
                    if self.lanes > 1 {
                        // A diverged group's lane: the next lane, else the next invocation.
                        let active = self.use_var(self.div.active);
                        let resume = self.resume_block;
                        self.b.ins().brif(active, resume, &[], head, &[]);
                    } else {
                        self.b.ins().jump(head, &[]);
                    }
                }
            }
            ref t => return Err(format!("terminator {t:?}")),
        }
        // The edge blocks: each edge's phi copies, as one parallel copy (per lane where the
        // destination is not shared).
        for (edge, copies, to) in pending {
            self.enter(edge);
            let mut values = Vec::new();
            let mut vectors = Vec::new();
            for &(dst, src) in copies {
                if lock && self.is_vector(dst) {
                    for v in 0..self.lanes / 4 {
                        vectors.push((self.vec_var(dst, v)?, self.vec_get(src, v)?));
                    }
                    continue;
                }
                let lanes = if lock && !self.held_once(dst) {
                    self.lanes
                } else {
                    1
                };
                for l in 0..lanes {
                    self.lane = lock.then_some(l);
                    values.push((dst, self.lane, self.get(src)?));
                }
            }
            for (dst, lane, v) in values {
                self.lane = lane;
                self.set(dst, v)?;
            }
            for (var, v) in vectors {
                self.def_var(var, v);
            }
            let blocks = if lock {
                &self.lock_blocks
            } else {
                &self.blocks
            };
            let target = *blocks.get(to as usize).ok_or("branch target")?;
            self.b.ins().jump(target, &[]);
        }
        for (div, from) in std::mem::take(&mut self.pending_div) {
            self.fill_diverge(div, from)?;
        }
        self.lane = lock.then_some(0);
        // Its targets have one branching block fewer to wait for.
        let mut targets = t.successors();
        targets.sort_unstable();
        targets.dedup();
        for to in targets {
            let left = self.preds_left[usize::from(lock)]
                .get_mut(to as usize)
                .ok_or("branch target")?;
            *left = left.checked_sub(1).ok_or("a block branched to too often")?;
            if *left == 0 {
                let blocks = if lock {
                    &self.lock_blocks
                } else {
                    &self.blocks
                };
                let target = *blocks.get(to as usize).ok_or("branch target")?;
                self.b.seal_block(target);
            }
        }
        Ok(())
    }

    /// The block a branch from `from` to `to` jumps to (in the lockstep copy when `lock`):
    /// `to` itself, or a new block for the edge's phi copies (filled after the branch, from
    /// `pending`).
    fn edge(
        &mut self,
        from: u32,
        to: u32,
        pending: &mut Vec<Edge<'a>>,
        lock: bool,
    ) -> Result<Block, String> {
        let blocks = if lock {
            &self.lock_blocks
        } else {
            &self.blocks
        };
        let target = *blocks.get(to as usize).ok_or("branch target")?;
        let func: &'a Function = self.func;
        let copies = func
            .blocks
            .get(to as usize)
            .and_then(|b| b.phis.iter().find(|(p, _)| *p == from));
        match copies {
            Some((_, c)) if !c.is_empty() => {
                let e = self.b.create_block();
                pending.push((e, &c[..], to));
                Ok(e)
            }
            _ => Ok(target),
        }
    }

    pub(super) fn op(&mut self, op: &Op) -> Result<(), String> {
        if self.coop_op(op)? {
            return Ok(());
        }
        match op {
            Op::Undef { .. } => Ok(()),
            Op::Load { dst, ptr, ty } | Op::LoadUniform { dst, ptr, ty } => {
                self.load(*dst, *ptr, *ty)
            }
            Op::Store { ptr, src, ty } => self.store(*ptr, *src, *ty),
            Op::AccessChain { dst, base, steps } => self.chain(*dst, *base, steps),
            // Reached outside lockstep: its subgroup's lanes parted (or a tail) — not taken.
            Op::Group(_) => {
                self.gives_up_always();
                let code = self
                    .iconst(reason::GROUP | u64::from(self.at.0) << 8 | u64::from(self.at.1) << 32);
                let cont = self.b.create_block();
                self.b.ins().jump(self.giveup, &[BlockArg::Value(code)]);
                self.enter(cont);
                Ok(())
            }
            _ => self.pure(op),
        }
    }

    /// The address of a `size`-byte access at pointer `p`, after the bounds and alignment
    /// checks (module doc of [`native`], "Memory").
    pub(super) fn address(&mut self, p: Value, size: u64) -> Result<Value, String> {
        let (regions, nregions, region_mask) = {
            let v = self.vals()?;
            (v.regions, v.nregions, v.region_mask)
        };
        let region = self.b.ins().ushr_imm_s(p, i64::from(OFFSET_BITS));
        let outside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, region, nregions);
        self.give_up_if(outside, reason::OUT_OF_BOUNDS);
        // The table does not change during a call: loads a loop may hoist, above the check
        // just made too, so the index is masked to the table's (power-of-two) length.
        let entry = self.region_entry(regions, region_mask, region);
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        let base = self
            .b
            .ins()
            .load(I64, flags, entry, offset_of!(Region, base) as i32);
        let len = self
            .b
            .ins()
            .load(I64, flags, entry, offset_of!(Region, len) as i32);
        let off = self.trunc(OFFSET_BITS, p);
        let end = self.b.ins().iadd_imm_s(off, size as i64);
        let beyond = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, len);
        self.give_up_if(beyond, reason::OUT_OF_BOUNDS);
        let odd = self.b.ins().band_imm_s(off, 3);
        self.give_up_if(odd, reason::UNALIGNED);
        Ok(self.b.ins().iadd(base, off))
    }

    /// The leaves of `ty` if the compiled code can move them: 4 or 8 bytes at offsets that
    /// are multiples of 4.
    fn leaves(&self, ty: u32) -> Result<Vec<crate::program::Leaf>, String> {
        let leaves = self.prog.leaves_of(ty);
        if leaves.is_empty() {
            return Err("a load or store of a type without scalars".into());
        }
        if leaves
            .iter()
            .any(|l| !matches!(l.bytes, 4 | 8) || l.offset % 4 != 0)
        {
            return Err("a load or store of 8- or 16-bit scalars".into());
        }
        Ok(leaves.to_vec())
    }

    /// Logs an access for the race screen when the site needs it.
    fn log(&mut self, ptr: Slot, p: Value, size: u64, write: bool) -> Result<(), String> {
        if !self.key.races || !self.facts.logged(ptr, write) {
            return Ok(());
        }
        if let (Some(_), Some(d)) = (self.lane, self.deferred.as_mut()) {
            d.push((p, size, write));
            return Ok(());
        }
        let log = self.vals()?.log;
        // The lanes of a group in lockstep share the op's site: their accesses come in
        // invocation order, as the scalar code's do.
        let site = match (self.lane, self.op_site) {
            (Some(_), Some(site)) => site,
            _ => {
                let site = self.sites;
                self.sites += 1;
                if self.lane.is_some() {
                    self.op_site = Some(site);
                }
                site
            }
        };
        let site = self.iconst(u64::from(site));
        let g = self.inv();
        let len = self.iconst(size | u64::from(write) << 63);
        self.call(native::log_access as *const (), &[log, site, g, p, len]);
        Ok(())
    }

    /// The race log site of the lockstep op being emitted: its own, or a new one.
    pub(super) fn next_site(&mut self) -> u32 {
        match self.op_site {
            Some(site) => site,
            None => {
                self.sites += 1;
                self.sites - 1
            }
        }
    }

    /// Logs the group's `count` accesses of one site (`site`, `len` as [`native::log_run`]
    /// takes them), each lane's the bytes after the one before's, from `p0`: one call.
    pub(super) fn log_run(
        &mut self,
        site: Value,
        p0: Value,
        len: Value,
        count: u64,
    ) -> Result<(), String> {
        let log = self.vals()?.log;
        let g = self.use_var(self.g);
        let count = self.iconst(count);
        self.call(
            native::log_run as *const (),
            &[log, site, g, p0, len, count],
        );
        Ok(())
    }

    /// Logs a lockstep op's accesses, deferred while its lanes were emitted (one per lane,
    /// in lane order): one call for the group when each lane's pointer is the one before plus
    /// the access's size (`out[i]` of consecutive invocations), else one per lane.
    pub(super) fn log_group(&mut self, accesses: &[(Value, u64, bool)]) -> Result<(), String> {
        let Some(&(p0, size, write)) = accesses.first() else {
            return Ok(());
        };
        let log = self.vals()?.log;
        let site = self.next_site();
        let site = self.iconst(u64::from(site));
        let len = self.iconst(size | u64::from(write) << 63);
        let g = self.use_var(self.g);
        let mut all = None;
        for (l, &(p, _, _)) in accesses.iter().enumerate().skip(1) {
            let want = self.b.ins().iadd_imm_s(p0, (l as u64 * size) as i64);
            let eq = self.b.ins().icmp(IntCC::Equal, p, want);
            all = Some(all.map_or(eq, |a| self.b.ins().band(a, eq)));
        }
        let (run, each, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        match all {
            Some(all) => self.b.ins().brif(all, run, &[], each, &[]),
            None => self.b.ins().jump(run, &[]),
        };
        self.enter(run);
        self.log_run(site, p0, len, accesses.len() as u64)?;
        self.b.ins().jump(join, &[]);
        self.enter(each);
        self.b.set_cold_block(each);
        for (l, &(p, _, _)) in accesses.iter().enumerate() {
            let gl = self.b.ins().iadd_imm_s(g, l as i64);
            self.call(native::log_access as *const (), &[log, site, gl, p, len]);
        }
        self.b.ins().jump(join, &[]);
        self.enter(join);
        Ok(())
    }

    /// Reads, on entry, every push constant a load names with a pointer known at compile
    /// time: a loop bound then costs nothing per iteration. One out of bounds gives up on
    /// entry, earlier than the reference path would report it, which is safe: the reference
    /// path then runs the dispatch.
    fn push_constants(&mut self) -> Result<(), String> {
        let func = self.func;
        for (i, block) in func.blocks.iter().enumerate() {
            for (j, op) in block.ops.iter().enumerate() {
                let (Op::Load { ptr, ty, .. } | Op::LoadUniform { ptr, ty, .. }) = *op else {
                    continue;
                };
                let Some(&p) = self.facts.known.get(&ptr) else {
                    continue;
                };
                if crate::run::memory::split_pointer(p).0 != crate::run::memory::REGION_PUSH
                    || self.push.contains_key(&ptr)
                {
                    continue;
                }
                self.at = (i as u32, j as u32);
                let p = self.iconst(p);
                let values = self.read(None, p, ty)?;
                self.push.insert(ptr, values);
            }
        }
        Ok(())
    }

    /// Checks, on entry, that every access through a [`super::facts::Bounded`] chain lies
    /// inside its buffer, whatever the chain's (checked) indices: the variable's pointer plus
    /// the most bytes the chain adds plus the access's size against the buffer's length, once
    /// a call, where [`Emitter::address`] checked each access (`w[t]` in a loop of taps), and
    /// keeps the buffer's host address for them. One past its buffer gives up on entry,
    /// earlier than the reference path would report it (if it would: a loop may never reach
    /// that index), which is safe: the reference path then runs the dispatch.
    fn bounded_extents(&mut self) -> Result<(), String> {
        if !self.key.checks {
            // Without the index checks the indices are not bounded.
            return Ok(());
        }
        let func = self.func;
        let mut extents: std::collections::BTreeMap<Slot, u64> = Default::default();
        for op in func.blocks.iter().flat_map(|b| &b.ops) {
            let (Op::Load { ptr, ty, .. }
            | Op::LoadUniform { ptr, ty, .. }
            | Op::Store { ptr, ty, .. }) = *op
            else {
                continue;
            };
            if let Some(b) = self.facts.bounded.get(&ptr) {
                let end = b.last.saturating_add(self.prog.extent_of(ty));
                let e = extents.entry(b.var).or_default();
                *e = (*e).max(end);
            }
        }
        for (var, end) in extents {
            // One access of `end` bytes at the variable's pointer, checked as any access is
            // ([`Emitter::address`]): every access through its chains lies inside it.
            let p = self.get(var)?;
            let at = self.address(p, end)?;
            let off = self.trunc(OFFSET_BITS, p);
            let base = self.b.ins().isub(at, off);
            self.extents.insert(var, (end, base));
        }
        Ok(())
    }

    /// The region table's entry for region number `region` (masked to the table's length:
    /// [`Emitter::address`] says why).
    fn region_entry(&mut self, regions: Value, region_mask: Value, region: Value) -> Value {
        let index = self.b.ins().band(region, region_mask);
        let at = self
            .b
            .ins()
            .imul_imm_s(index, std::mem::size_of::<Region>() as i64);
        self.b.ins().iadd(regions, at)
    }

    /// The address of a `size`-byte access through slot `ptr`, which holds `p`: with no check
    /// for a [`super::facts::Bounded`] chain whose extent was checked on entry
    /// ([`Emitter::bounded_extents`]: its offset then stays below the buffer's length, so it
    /// does not wrap, and is a multiple of 4), after [`Emitter::address`]'s checks for any
    /// other.
    fn address_of(&mut self, ptr: Slot, p: Value, size: u64) -> Result<Value, String> {
        let checked = self.facts.bounded.get(&ptr).and_then(|b| {
            let &(end, base) = self.extents.get(&b.var)?;
            (b.last.saturating_add(size) <= end).then_some(base)
        });
        let Some(base) = checked else {
            return self.address(p, size);
        };
        let off = self.trunc(OFFSET_BITS, p);
        Ok(self.b.ins().iadd(base, off))
    }

    /// The leaves of a `ty` value through slot `ptr` holding `p` (`None`: no slot), after the
    /// checks of [`Emitter::address_of`].
    fn read(&mut self, ptr: Option<Slot>, p: Value, ty: u32) -> Result<Vec<Value>, String> {
        let leaves = self.leaves(ty)?;
        // To the end of the last member: padding after it is not accessed.
        let size = self.prog.extent_of(ty);
        let addr = match ptr {
            Some(ptr) => self.address_of(ptr, p, size)?,
            None => self.address(p, size)?,
        };
        let flags = MemFlagsData::trusted();
        let mut out = Vec::new();
        for leaf in &leaves {
            let at = leaf.offset as i32;
            let lo = self.b.ins().load(I32, flags, addr, at);
            let lo = self.b.ins().uextend(I64, lo);
            let mut v = lo;
            if leaf.bytes == 8 {
                let hi = self.b.ins().load(I32, flags, addr, at + 4);
                let hi = self.b.ins().uextend(I64, hi);
                let hi = self.b.ins().ishl_imm_s(hi, 32);
                v = self.b.ins().bor(lo, hi);
            }
            if leaf.boolean {
                let c = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                v = self.bool64(c);
            }
            out.push(v);
        }
        Ok(out)
    }

    fn load(&mut self, dst: Slot, ptr: Slot, ty: u32) -> Result<(), String> {
        if let Some(values) = self.push.get(&ptr).cloned() {
            for (i, v) in values.into_iter().enumerate() {
                self.set(dst + i as u32, v)?;
            }
            return Ok(());
        }
        if let Some(&p) = self.facts.known.get(&ptr) {
            if crate::run::memory::split_pointer(p).0 == crate::run::memory::REGION_INVOCATION {
                return self.load_builtin(dst, p, ty);
            }
        }
        let size = self.prog.extent_of(ty);
        let p = self.get(ptr)?;
        // Logged before the read, as the reference path logs (and nothing reads the log
        // before the end).
        self.log(ptr, p, size, false)?;
        let values = self.read(Some(ptr), p, ty)?;
        for (i, v) in values.into_iter().enumerate() {
            self.set(dst + i as u32, v)?;
        }
        Ok(())
    }

    fn store(&mut self, ptr: Slot, src: Slot, ty: u32) -> Result<(), String> {
        let leaves = self.leaves(ty)?;
        let size = self.prog.extent_of(ty);
        let p = self.get(ptr)?;
        let addr = self.address_of(ptr, p, size)?;
        self.log(ptr, p, size, true)?;
        let flags = MemFlagsData::trusted();
        for (i, leaf) in leaves.iter().enumerate() {
            let at = leaf.offset as i32;
            let v = self.get(src + i as u32)?;
            let lo = self.b.ins().ireduce(I32, v);
            self.b.ins().store(flags, lo, addr, at);
            if leaf.bytes == 8 {
                let hi = self.b.ins().ushr_imm_s(v, 32);
                let hi = self.b.ins().ireduce(I32, hi);
                self.b.ins().store(flags, hi, addr, at + 4);
            }
        }
        Ok(())
    }

    /// `OpAccessChain`: the offset wraps inside its 48 bits and the region stays; a pointer
    /// from an unbound descriptor stays as it is ([`crate::run::access::exec_memory`]).
    fn chain(&mut self, dst: Slot, base: Slot, steps: &[Step]) -> Result<(), String> {
        let v = match self.facts.bounded.get(&dst) {
            // Its buffer's reach was checked on entry: the offset stays inside the buffer, so
            // it neither wraps nor leaves the region, and the base is no unbound descriptor.
            Some(b) if self.extents.contains_key(&b.var) => {
                let p = self.get(base)?;
                let sum = self.chain_offset(steps)?;
                self.b.ins().iadd(p, sum)
            }
            _ => self.chain_value(base, steps)?,
        };
        self.set(dst, v)
    }

    /// The pointer an access chain makes (in the lane being emitted), its index checks
    /// included.
    pub(super) fn chain_value(&mut self, base: Slot, steps: &[Step]) -> Result<Value, String> {
        let p = self.get(base)?;
        let sum = self.chain_offset(steps)?;
        let region_bits = !mask(OFFSET_BITS);
        let region = self.b.ins().band_imm_s(p, region_bits as i64);
        let moved = self.b.ins().iadd(p, sum);
        let moved = self.trunc(OFFSET_BITS, moved);
        let moved = self.b.ins().bor(region, moved);
        let unbound =
            self.b
                .ins()
                .icmp_imm_s(IntCC::Equal, region, (REGION_UNBOUND << OFFSET_BITS) as i64);
        Ok(self.b.ins().select(unbound, p, moved))
    }

    /// The bytes an access chain's `steps` add to its base, its index checks included.
    fn chain_offset(&mut self, steps: &[Step]) -> Result<Value, String> {
        let mut sum = self.iconst(0);
        for step in steps {
            let delta = match *step {
                Step::Const(c) => self.iconst(c),
                Step::Dyn {
                    index,
                    bits,
                    signed,
                    stride,
                    count,
                } => {
                    let raw = self.get(index)?;
                    let raw = self.trunc(bits, raw);
                    let i = if signed { self.sext(bits, raw) } else { raw };
                    if self.key.checks && count != 0 {
                        // check::index: an index below 0 (a huge unsigned value here) or at
                        // least the length.
                        let out = self.b.ins().icmp_imm_s(
                            IntCC::UnsignedGreaterThanOrEqual,
                            i,
                            i64::from(count),
                        );
                        self.give_up_if(out, reason::INDEX);
                    }
                    self.b.ins().imul_imm_s(i, stride as i64)
                }
            };
            sum = self.b.ins().iadd(sum, delta);
        }
        Ok(sum)
    }

    /// A load of a built-in input: each 4-byte component computed from the invocation index
    /// as [`crate::run::builtins::Place::value`] gives it.
    fn load_builtin(&mut self, dst: Slot, p: u64, ty: u32) -> Result<(), String> {
        let &(b, c) = self
            .facts
            .builtins
            .get(&p)
            .ok_or("a load of invocation memory that is no built-in")?;
        let leaves = self.prog.leaves_of(ty).to_vec();
        for (i, leaf) in leaves.iter().enumerate() {
            let v = self.builtin(b, c + (leaf.offset / 4) as usize)?;
            self.set(dst + i as u32, v)?;
        }
        Ok(())
    }

    fn div_const(&mut self, v: Value, d: u64) -> Value {
        if d <= 1 {
            v
        } else if d.is_power_of_two() {
            self.b.ins().ushr_imm_s(v, i64::from(d.trailing_zeros()))
        } else {
            let d = self.iconst(d);
            self.b.ins().udiv(v, d)
        }
    }

    fn rem_const(&mut self, v: Value, d: u64) -> Value {
        if d <= 1 {
            self.iconst(0)
        } else if d.is_power_of_two() {
            self.b.ins().band_imm_s(v, (d - 1) as i64)
        } else {
            let d = self.iconst(d);
            self.b.ins().urem(v, d)
        }
    }

    /// Component `c` of an `[x, y, z]` position with linear index `v` in a grid of `dims`.
    fn split3(&mut self, v: Value, dims: [u64; 3], c: usize) -> Value {
        let (x, y) = (dims[0].max(1), dims[1].max(1));
        match c {
            0 => self.rem_const(v, x),
            1 => {
                let q = self.div_const(v, x);
                self.rem_const(q, y)
            }
            _ => self.div_const(v, x * y),
        }
    }

    fn builtin(&mut self, b: u32, c: usize) -> Result<Value, String> {
        use spirv::BuiltIn as B;
        let size = self.prog.local_size.map(u64::from);
        let groups = self.key.groups.map(u64::from);
        let per_group = size.iter().product::<u64>().max(1);
        let sg = u64::from(self.key.sg.max(1));
        let g = self.inv();
        let local = self.rem_const(g, per_group);
        let which = B::from_u32(b).ok_or("an unknown built-in")?;
        let three = matches!(
            which,
            B::GlobalInvocationId
                | B::LocalInvocationId
                | B::WorkgroupId
                | B::NumWorkgroups
                | B::WorkgroupSize
        );
        // Components past the value's read 0, as `Place::value(..).get(c)` gives.
        if (three && c >= 3) || (!three && c >= 1) {
            return Ok(self.iconst(0));
        }
        Ok(match which {
            B::LocalInvocationId => self.split3(local, size, c),
            B::WorkgroupId | B::GlobalInvocationId => {
                let wg = self.div_const(g, per_group);
                let wg = self.split3(wg, groups, c);
                if which == B::WorkgroupId {
                    wg
                } else {
                    let l = self.split3(local, size, c);
                    let at = self.b.ins().imul_imm_s(wg, size[c] as i64);
                    let v = self.b.ins().iadd(at, l);
                    self.trunc(32, v)
                }
            }
            B::NumWorkgroups => self.iconst(groups[c]),
            B::WorkgroupSize => self.iconst(size[c]),
            B::LocalInvocationIndex => local,
            B::SubgroupSize => self.iconst(sg),
            B::SubgroupLocalInvocationId => self.rem_const(local, sg),
            B::SubgroupId => self.div_const(local, sg),
            B::NumSubgroups => {
                let invocations = size.iter().product::<u64>();
                self.iconst(invocations.div_ceil(sg))
            }
            _ => return Err(format!("the built-in {which:?}")),
        })
    }
}
