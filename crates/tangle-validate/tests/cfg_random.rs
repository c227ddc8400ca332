//! Random control flow, differentially: a seeded generator builds compute modules whose one
//! function is a random structured program (nested if / loop / switch with break, continue,
//! break-if, return and case fallthrough), then, for about half of them, applies random
//! mutations (retarget a branch, drop or move a merge, swap a loop's merge and continue target,
//! add or remove an edge, reorder blocks, reorder switch cases) that usually break a
//! structured-control-flow rule. Each module is assembled with `spirv-as`, and tangle and
//! `spirv-val` 2025.5 must give it the same verdict.
//!
//! `TANGLE_CFG_RANDOM=20000` runs more modules than the default 400; `TANGLE_CFG_SEED=n` runs
//! the one module of seed `n` and prints it. A second test checks the control-flow nesting
//! limit (1023) with nests one level either side of it.

mod common;

use common::{spirv_as, spirv_val};
use tangle_spirv::TargetEnv;
use tangle_validate::{validate, ValidateOptions};

/// Modules checked by default (a few seconds on two cores).
const DEFAULT_COUNT: u64 = 400;

/// Blocks a generated function stops growing at (mutations come on top).
const MAX_BLOCKS: usize = 48;

/// SplitMix64: small, seedable, good enough for shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        items.get(self.below(items.len())).copied()
    }
}

/// A block's terminator; labels are block numbers.
#[derive(Debug, Clone, PartialEq)]
enum Term {
    Branch(u32),
    Cond(u32, u32),
    Switch { default: u32, cases: Vec<u32> },
    Return,
    Unreachable,
}

/// A block's merge instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MergeInst {
    Selection(u32),
    Loop(u32, u32),
}

#[derive(Debug, Clone)]
struct Blk {
    label: u32,
    merge: Option<MergeInst>,
    term: Term,
}

/// Where jumps in the current statement list may go.
#[derive(Debug, Clone, Copy, Default)]
struct Jumps {
    /// `break`: the innermost loop or switch merge.
    brk: Option<u32>,
    /// `continue`: the innermost loop's continue target.
    cont: Option<u32>,
    /// break-if: the innermost loop's merge.
    loop_merge: Option<u32>,
    /// Whether `return` is allowed (not in continue constructs).
    ret: bool,
    /// The merge block one construct further out than `brk` (a two-level break, which is
    /// structured only in some nestings).
    far: Option<u32>,
}

struct Gen {
    rng: Rng,
    blocks: Vec<Blk>,
    next_label: u32,
}

impl Gen {
    fn label(&mut self) -> u32 {
        self.next_label += 1;
        self.next_label
    }

    /// Appends a block (in dominance order: blocks are opened in structured order).
    fn open(&mut self, label: u32) -> usize {
        self.blocks.push(Blk {
            label,
            merge: None,
            term: Term::Unreachable,
        });
        self.blocks.len() - 1
    }

    fn close(&mut self, at: usize, merge: Option<MergeInst>, term: Term) {
        if let Some(b) = self.blocks.get_mut(at) {
            b.merge = merge;
            b.term = term;
        }
    }

    fn full(&self) -> bool {
        self.blocks.len() >= MAX_BLOCKS
    }

    /// A statement list starting in open block `cur`; returns the open block after it, or
    /// `None` when the list ended in a jump.
    fn body(&mut self, cur: usize, depth: u32, jumps: Jumps) -> Option<usize> {
        let mut cur = Some(cur);
        for _ in 0..self.rng.below(4) {
            let Some(c) = cur else { break };
            if self.full() {
                break;
            }
            let kinds = if depth < 4 { 8 } else { 2 };
            cur = match self.rng.below(kinds) {
                0 => self.split(c),
                1 => self.jump_if(c, jumps),
                2 | 3 => self.if_(c, depth, jumps),
                4 | 5 => self.loop_(c, depth, jumps),
                _ => self.switch(c, depth, jumps),
            };
        }
        let c = cur?;
        match self.rng.below(10) {
            0 if jumps.brk.is_some() => self.close(c, None, Term::Branch(jumps.brk?)),
            1 if jumps.cont.is_some() => self.close(c, None, Term::Branch(jumps.cont?)),
            2 if jumps.ret => self.close(c, None, Term::Return),
            _ => return Some(c),
        }
        None
    }

    /// A straight-line branch to a new block.
    fn split(&mut self, c: usize) -> Option<usize> {
        let next = self.label();
        self.close(c, None, Term::Branch(next));
        Some(self.open(next))
    }

    /// A merge-less conditional break or continue (`if (x) break;` as glslang emits it).
    fn jump_if(&mut self, c: usize, jumps: Jumps) -> Option<usize> {
        let target = match self.rng.below(7) {
            0 | 1 => jumps.loop_merge,
            2 | 3 => jumps.cont,
            4 | 5 => jumps.brk,
            _ => jumps.far,
        };
        let Some(target) = target else {
            return self.split(c);
        };
        let next = self.label();
        let term = if self.rng.chance(50) {
            Term::Cond(target, next)
        } else {
            Term::Cond(next, target)
        };
        self.close(c, None, term);
        Some(self.open(next))
    }

    fn if_(&mut self, c: usize, depth: u32, jumps: Jumps) -> Option<usize> {
        let (t, e, m) = (self.label(), self.label(), self.label());
        let has_else = self.rng.chance(50);
        let other = if has_else { e } else { m };
        let term = if self.rng.chance(50) {
            Term::Cond(t, other)
        } else {
            Term::Cond(other, t)
        };
        self.close(c, Some(MergeInst::Selection(m)), term);
        let ti = self.open(t);
        if let Some(o) = self.body(ti, depth + 1, jumps) {
            self.close(o, None, Term::Branch(m));
        }
        if has_else {
            let ei = self.open(e);
            if let Some(o) = self.body(ei, depth + 1, jumps) {
                self.close(o, None, Term::Branch(m));
            }
        }
        Some(self.open(m))
    }

    fn loop_(&mut self, c: usize, depth: u32, jumps: Jumps) -> Option<usize> {
        let (h, body, cont, m) = (self.label(), self.label(), self.label(), self.label());
        self.close(c, None, Term::Branch(h));
        let hi = self.open(h);
        // Now and then a one-block loop: the header is its own continue target and back edge.
        if self.rng.chance(10) {
            let term = if self.rng.chance(50) {
                Term::Cond(h, m)
            } else {
                Term::Cond(m, h)
            };
            self.close(hi, Some(MergeInst::Loop(m, h)), term);
            return Some(self.open(m));
        }
        let term = if self.rng.chance(50) {
            Term::Cond(body, m)
        } else {
            Term::Branch(body)
        };
        self.close(hi, Some(MergeInst::Loop(m, cont)), term);
        let bi = self.open(body);
        let inner = Jumps {
            brk: Some(m),
            cont: Some(cont),
            loop_merge: Some(m),
            ret: jumps.ret,
            far: jumps.brk,
        };
        if let Some(o) = self.body(bi, depth + 1, inner) {
            self.close(o, None, Term::Branch(cont));
        }
        let ci = self.open(cont);
        let end = if self.rng.chance(30) && !self.full() {
            self.if_(ci, depth + 1, Jumps::default())
        } else {
            Some(ci)
        };
        if let Some(o) = end {
            let back = if self.rng.chance(50) {
                Term::Branch(h)
            } else {
                Term::Cond(h, m)
            };
            self.close(o, None, back);
        }
        Some(self.open(m))
    }

    fn switch(&mut self, c: usize, depth: u32, jumps: Jumps) -> Option<usize> {
        let m = self.label();
        let n = 1 + self.rng.below(3);
        let labels: Vec<u32> = (0..n).map(|_| self.label()).collect();
        // Case targets in operand order; a label may be named by two literals in a row.
        let mut cases = Vec::new();
        for &l in &labels {
            cases.push(l);
            if self.rng.chance(15) {
                cases.push(l);
            }
            if self.rng.chance(10) {
                cases.push(m);
            }
        }
        let default = match self.rng.below(3) {
            0 => m,
            1 => self.rng.pick(&labels).unwrap_or(m),
            _ => self.label(),
        };
        self.close(
            c,
            Some(MergeInst::Selection(m)),
            Term::Switch { default, cases },
        );
        let inner = Jumps {
            brk: Some(m),
            far: jumps.brk,
            ..jumps
        };
        if default != m && !labels.contains(&default) {
            let di = self.open(default);
            if let Some(o) = self.body(di, depth + 1, inner) {
                self.close(o, None, Term::Branch(m));
            }
        }
        for (i, &l) in labels.iter().enumerate() {
            let li = self.open(l);
            if let Some(o) = self.body(li, depth + 1, inner) {
                // Fall through to the next case now and then.
                let next = match labels.get(i + 1) {
                    Some(&next) if self.rng.chance(30) => next,
                    _ => m,
                };
                self.close(o, None, Term::Branch(next));
            }
        }
        Some(self.open(m))
    }

    /// Breaks the program in one random way (or does nothing, when the chosen kind of change
    /// finds nothing to change).
    fn mutate(&mut self) {
        let labels: Vec<u32> = self.blocks.iter().map(|b| b.label).collect();
        let n = self.blocks.len();
        let any = |rng: &mut Rng| -> u32 {
            // The entry block only rarely: targeting it is one plain error.
            if rng.chance(5) {
                labels.first().copied().unwrap_or(1)
            } else {
                labels
                    .get(1 + rng.below(n.saturating_sub(1)))
                    .copied()
                    .unwrap_or(1)
            }
        };
        let kind = self.rng.below(11);
        // The blocks the chosen kind of change applies to.
        let fits = |b: &Blk| match kind {
            0 | 1 => !matches!(b.term, Term::Return | Term::Unreachable),
            2 | 3 => b.merge.is_some(),
            4 => matches!(b.merge, Some(MergeInst::Loop(..))),
            5 => matches!(b.term, Term::Branch(_)),
            6 => matches!(b.term, Term::Cond(..)),
            7 => matches!(b.term, Term::Cond(..) | Term::Switch { .. }) && b.merge.is_none(),
            8 => matches!(b.term, Term::Switch { .. }),
            _ => true,
        };
        let candidates: Vec<usize> = (0..n)
            .filter(|&i| self.blocks.get(i).is_some_and(fits))
            .collect();
        let Some(b) = self.rng.pick(&candidates) else {
            return;
        };
        let rng = &mut self.rng;
        let Some(block) = self.blocks.get_mut(b) else {
            return;
        };
        match kind {
            // Retarget one branch operand.
            0 | 1 => match &mut block.term {
                Term::Branch(t) => *t = any(rng),
                Term::Cond(t, f) => {
                    if rng.chance(50) {
                        *t = any(rng)
                    } else {
                        *f = any(rng)
                    }
                }
                Term::Switch { default, cases } => {
                    let k = rng.below(cases.len() + 1);
                    match cases.get_mut(k) {
                        Some(c) => *c = any(rng),
                        None => *default = any(rng),
                    }
                }
                _ => {}
            },
            // Drop a merge instruction.
            2 => block.merge = None,
            // Move a merge block or continue target.
            3 => match &mut block.merge {
                Some(MergeInst::Selection(m)) => *m = any(rng),
                Some(MergeInst::Loop(m, c)) => {
                    if rng.chance(50) {
                        *m = any(rng)
                    } else {
                        *c = any(rng)
                    }
                }
                None => {}
            },
            // Swap a loop's merge block and continue target.
            4 => {
                if let Some(MergeInst::Loop(m, c)) = block.merge {
                    block.merge = Some(MergeInst::Loop(c, m));
                }
            }
            // Add an edge.
            5 => {
                if let Term::Branch(t) = block.term {
                    let extra = any(rng);
                    block.term = if rng.chance(50) {
                        Term::Cond(t, extra)
                    } else {
                        Term::Cond(extra, t)
                    };
                    if block.merge.is_none() && rng.chance(30) {
                        block.merge = Some(MergeInst::Selection(any(rng)));
                    }
                }
            }
            // Remove an edge.
            6 => {
                if let Term::Cond(t, f) = block.term {
                    block.term = Term::Branch(if rng.chance(50) { t } else { f });
                    if matches!(block.merge, Some(MergeInst::Selection(_))) && rng.chance(50) {
                        block.merge = None;
                    }
                }
            }
            // Give a merge-less divergence a selection merge.
            7 => {
                if matches!(block.term, Term::Cond(..) | Term::Switch { .. })
                    && block.merge.is_none()
                {
                    block.merge = Some(MergeInst::Selection(any(rng)));
                }
            }
            // Reorder a switch's targets.
            8 => {
                if let Term::Switch { default, cases } = &mut block.term {
                    if cases.len() >= 2 && rng.chance(70) {
                        let i = rng.below(cases.len());
                        let j = rng.below(cases.len());
                        cases.swap(i, j);
                    } else if let Some(first) = cases.first_mut() {
                        std::mem::swap(first, default);
                    }
                }
            }
            // End the block early.
            9 => {
                block.term = if rng.chance(50) {
                    Term::Return
                } else {
                    Term::Unreachable
                };
                block.merge = None;
            }
            // Move a block (never the entry block).
            _ => {
                if n > 2 {
                    let i = 1 + rng.below(n - 1);
                    let j = 1 + rng.below(n - 1);
                    self.blocks.swap(i, j);
                }
            }
        }
    }
}

/// The module of one seed: its text and target environment.
fn module_text(seed: u64) -> (String, &'static str) {
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed),
        blocks: Vec::new(),
        next_label: 0,
    };
    let entry = g.label();
    let e = g.open(entry);
    let top = Jumps {
        ret: true,
        ..Jumps::default()
    };
    // Keep drawing until the program has some structure.
    let mut end = g.body(e, 0, top);
    while g.blocks.len() < 4 && !g.full() {
        let Some(c) = end else { break };
        end = g.body(c, 0, top);
    }
    if let Some(o) = end {
        g.close(o, None, Term::Return);
    }
    if g.rng.chance(50) {
        for _ in 0..1 + g.rng.below(2) {
            g.mutate();
        }
    }
    let env = match g.rng.below(8) {
        0 => "vulkan1.1",
        _ => "vulkan1.3",
    };
    let maximal = env == "vulkan1.3" && g.rng.chance(20);
    let mut text = String::from("OpCapability Shader\n");
    if maximal {
        text.push_str("OpExtension \"SPV_KHR_maximal_reconvergence\"\n");
    }
    text.push_str(
        "OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
         OpExecutionMode %main LocalSize 1 1 1\n",
    );
    if maximal {
        text.push_str("OpExecutionMode %main MaximallyReconvergesKHR\n");
    }
    text.push_str(
        "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%bool = OpTypeBool\n\
         %u32 = OpTypeInt 32 0\n%cond = OpConstantTrue %bool\n%sel = OpConstant %u32 0\n\
         %main = OpFunction %void None %fn\n",
    );
    for b in &g.blocks {
        text.push_str(&format!("%b{} = OpLabel\n", b.label));
        match b.merge {
            Some(MergeInst::Selection(m)) => {
                text.push_str(&format!("OpSelectionMerge %b{m} None\n"))
            }
            Some(MergeInst::Loop(m, c)) => {
                text.push_str(&format!("OpLoopMerge %b{m} %b{c} None\n"))
            }
            None => {}
        }
        let line = match &b.term {
            Term::Branch(t) => format!("OpBranch %b{t}"),
            Term::Cond(t, f) => format!("OpBranchConditional %cond %b{t} %b{f}"),
            Term::Switch { default, cases } => {
                let mut s = format!("OpSwitch %sel %b{default}");
                for (i, c) in cases.iter().enumerate() {
                    s.push_str(&format!(" {i} %b{c}"));
                }
                s
            }
            Term::Return => "OpReturn".to_string(),
            Term::Unreachable => "OpUnreachable".to_string(),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("OpFunctionEnd\n");
    (text, env)
}

/// What one seed gave: tangle's verdict (with its findings), spirv-val's, and the module.
struct Outcome {
    seed: u64,
    tangle: Result<(), Vec<String>>,
    reference: bool,
    text: String,
}

fn run_seed(seed: u64) -> Result<Outcome, String> {
    let (text, env) = module_text(seed);
    let module = spirv_as(&text, env, &[])
        .map_err(|e| format!("seed {seed}: spirv-as rejects the module: {e}\n{text}"))?;
    let target = TargetEnv::parse(env).ok_or("bad env")?;
    let tangle = match validate(&module, target, &ValidateOptions::default()) {
        Ok(_) => Ok(()),
        Err(found) => Err(found
            .iter()
            .map(|d| format!("{}: {}", d.error.rule(), d.error))
            .collect()),
    };
    let reference = spirv_val(&module, env, &[]);
    Ok(Outcome {
        seed,
        tangle,
        reference,
        text,
    })
}

#[test]
fn random_cfgs_get_the_same_verdict_as_spirv_val() {
    let seeds: Vec<u64> = match std::env::var("TANGLE_CFG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => {
            let (text, env) = module_text(seed);
            eprintln!("seed {seed} ({env}):\n{text}");
            vec![seed]
        }
        None => {
            let count = std::env::var("TANGLE_CFG_RANDOM")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(DEFAULT_COUNT);
            (0..count).collect()
        }
    };
    // spirv-as and spirv-val are a process each per module; run four workers.
    let outcomes: Vec<Result<Outcome, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = seeds
            .chunks(seeds.len().div_ceil(4).max(1))
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|&s| run_seed(s)).collect::<Vec<_>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("cfg_random worker panicked"))
            .collect()
    });
    let mut failures = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    // How often each rule is tangle's first finding, to see what the generator reaches.
    let mut rules: std::collections::BTreeMap<String, usize> = Default::default();
    for outcome in outcomes {
        let o = match outcome {
            Ok(o) => o,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if let Err(found) = &o.tangle {
            let rule = found
                .first()
                .and_then(|f| f.split(": ").next())
                .unwrap_or("?");
            *rules.entry(rule.to_string()).or_default() += 1;
        }
        if o.reference {
            valid += 1;
        } else {
            invalid += 1;
        }
        if o.tangle.is_ok() != o.reference {
            failures.push(format!(
                "seed {}: spirv-val says {}, tangle {}\n{}",
                o.seed,
                if o.reference { "valid" } else { "invalid" },
                match &o.tangle {
                    Ok(()) => "valid".to_string(),
                    Err(found) => format!("invalid: {}", found.join("; ")),
                },
                o.text
            ));
        }
    }
    eprintln!(
        "{} modules: {valid} valid and {invalid} invalid for spirv-val; {} disagreements",
        valid + invalid,
        failures.len()
    );
    for (rule, count) in &rules {
        eprintln!("{count:>7}  {rule}");
    }
    for f in failures.iter().take(5) {
        eprintln!("DISAGREE {f}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} modules disagree (first ones above)",
        failures.len(),
        seeds.len()
    );
    if seeds.len() >= 100 {
        let total = valid + invalid;
        assert!(
            valid * 5 >= total && invalid * 5 >= total,
            "the generator should give both verdicts often: {valid} valid, {invalid} invalid"
        );
    }
}

/// A function of `depth` nested selections (`if` inside `if`), optionally in a loop.
fn nested_ifs(depth: usize, in_loop: bool) -> String {
    let mut t = String::from(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\"\n\
         OpExecutionMode %main LocalSize 1 1 1\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n\
         %bool = OpTypeBool\n%cond = OpConstantTrue %bool\n%main = OpFunction %void None %fn\n\
         %entry = OpLabel\n",
    );
    if in_loop {
        t.push_str("OpBranch %h\n%h = OpLabel\nOpLoopMerge %lm %lc None\nOpBranch %n0\n");
    } else {
        t.push_str("OpBranch %n0\n");
    }
    for i in 0..depth {
        t.push_str(&format!(
            "%n{i} = OpLabel\nOpSelectionMerge %m{i} None\nOpBranchConditional %cond %n{} %m{i}\n",
            i + 1
        ));
    }
    let after = if in_loop { "%lc" } else { "%end" };
    t.push_str(&format!(
        "%n{depth} = OpLabel\nOpBranch %m{}\n",
        depth.saturating_sub(1)
    ));
    for i in (0..depth).rev() {
        let next = if i == 0 {
            after.to_string()
        } else {
            format!("%m{}", i - 1)
        };
        t.push_str(&format!("%m{i} = OpLabel\nOpBranch {next}\n"));
    }
    if in_loop {
        t.push_str("%lc = OpLabel\nOpBranch %h\n%lm = OpLabel\nOpReturn\n");
    } else {
        t.push_str("%end = OpLabel\nOpReturn\n");
    }
    t.push_str("OpFunctionEnd\n");
    t
}

#[test]
fn nesting_depth_limit_agrees_with_spirv_val() {
    let env = TargetEnv::parse("vulkan1.3").expect("env");
    let tangle =
        |module: &tangle_spirv::Module| validate(module, env, &ValidateOptions::default()).is_ok();
    // One level too deep: spirv-val stops at its depth check at once.
    for (depth, in_loop) in [(1024, false), (1023, true)] {
        let text = nested_ifs(depth, in_loop);
        let module = spirv_as(&text, "vulkan1.3", &[]).expect("spirv-as assembles the nest");
        assert!(
            !spirv_val(&module, "vulkan1.3", &[]),
            "spirv-val rejects {depth}"
        );
        assert!(
            !tangle(&module),
            "tangle rejects {depth} (in a loop: {in_loop})"
        );
    }
    // At the limit. spirv-val accepts these too, but its construct checks take it about half
    // a minute on each (they are quadratic in the depth), so it is not run here.
    for (depth, in_loop) in [(1023, false), (1022, true)] {
        let text = nested_ifs(depth, in_loop);
        let module = spirv_as(&text, "vulkan1.3", &[]).expect("spirv-as assembles the nest");
        assert!(
            tangle(&module),
            "tangle accepts {depth} (in a loop: {in_loop})"
        );
    }
}
