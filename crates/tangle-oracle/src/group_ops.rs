//! Seeded random compute shaders full of subgroup operations under divergence, and a run of
//! one on every tier of the executor (`docs/executor.md`): the reference path, the wide
//! interpreter (`--no-jit`) and the native tier in front of it (the default).
//!
//! Each program has `size` statements at its top level: subgroup operations of every kind
//! (rotates, clustered rotates, shuffles, broadcasts, ballots, votes, reductions, scans and
//! clustered reductions) on a `uint` and an `ivec4`, in `if`/`else` pairs nested up to three
//! deep and in loops, on conditions that are uniform, uniform within aligned clusters of
//! lanes (`(gl_SubgroupInvocationID >> s) & 1`) or data-dependent. A permutation reads only
//! lanes its condition keeps active (its cluster inside the active clusters) except now and
//! then, so most programs are free of undefined behaviour and run on the fast tiers, and some
//! read an inactive lane, which every tier must report alike. The shape the native tier's
//! compile once took minutes on (issue 28: short divergent `if`/`else` pairs of clustered
//! rotates on a `uint` and an `ivec4`, a loop of them) is the common case here.
//!
//! Why: the native tier compiles a lockstep copy of the program per subgroup, whose size and
//! whose divergence points grow with the program; [`run_tiers`] gives the compile's budget
//! measure with the results, so tests can bound it ([`tangle_exec::jit::budget`]).

use crate::generate::Rng;
use std::fmt::Write;
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};

/// Words of the data buffer (binding 0); indices are masked to it.
const DATA: u32 = 64;

/// The generator's state.
struct Gen {
    rng: Rng,
    sg: u32,
    out: String,
    /// Names of loop counters and trip counts.
    next: u32,
}

/// The GLSL source of program `seed` with `size` top-level statements, for subgroups of `sg`
/// invocations in workgroups of [`workgroup_size`]`(sg)`.
pub fn program(seed: u64, size: u32, sg: u32) -> String {
    let mut g = Gen {
        rng: Rng::new(seed ^ 0x0928_2a7e),
        sg: sg.max(1),
        out: String::new(),
        next: 0,
    };
    for _ in 0..size {
        g.statement(1, sg.max(1));
    }
    let wg = workgroup_size(sg);
    format!(
        "#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_shuffle_relative : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_rotate : enable
layout(local_size_x = {wg}) in;
layout(set = 0, binding = 0) readonly buffer D {{ uint d[]; }};
layout(set = 0, binding = 1) buffer O {{ uint o[]; }};
layout(set = 0, binding = 2) buffer V {{ ivec4 v[]; }};
void main() {{
  uint i = gl_GlobalInvocationID.x;
  uint l = gl_SubgroupInvocationID;
  uint a = d[i & {m}u];
  uint b = i * 2654435761u + d[(i + 1u) & {m}u];
  ivec4 w = ivec4(a, b, i, l);
{body}  o[i] = a;
  o[i + {total}u] = b;
  v[i] = w;
}}
",
        m = DATA - 1,
        total = wg * GROUPS,
        body = g.out,
    )
}

/// Workgroups a program runs in.
pub const GROUPS: u32 = 2;

/// The workgroup size for subgroups of `sg`: whole subgroups, at least 64 invocations.
pub fn workgroup_size(sg: u32) -> u32 {
    sg.max(64)
}

impl Gen {
    fn indent(&mut self, depth: u32) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    /// A power of two at most `max` (at least 1).
    fn cluster(&mut self, max: u32) -> u32 {
        let bits = 32 - max.max(1).leading_zeros();
        1 << self.rng.below(bits)
    }

    /// A delta or mask: a constant, a uniform word of the data, or a loop counter.
    fn amount(&mut self, loop_var: Option<&str>) -> String {
        match (self.rng.below(4), loop_var) {
            (0, _) => format!("d[{}]", self.rng.below(DATA)),
            (1, Some(j)) => j.to_string(),
            _ => format!("{}u", self.rng.below(self.sg * 2)),
        }
    }

    /// One statement at nesting `depth`, where lanes are active or not in whole aligned
    /// clusters of `active` (a power of two; `sg`: the whole subgroup, 1: any lanes).
    fn statement(&mut self, depth: u32, active: u32) {
        self.statement_in(depth, active, None);
    }

    fn statement_in(&mut self, depth: u32, active: u32, loop_var: Option<&str>) {
        let compound = depth <= 3 && self.rng.chance(35);
        if !compound {
            return self.assign(depth, active, loop_var);
        }
        if self.rng.chance(70) {
            self.branch(depth, active, loop_var)
        } else {
            self.looped(depth, active, loop_var)
        }
    }

    /// An `if`/`else` pair (or a lone `if`) of one to three statements each.
    fn branch(&mut self, depth: u32, active: u32, loop_var: Option<&str>) {
        let (cond, inner) = match self.rng.below(4) {
            // Uniform: every lane the same way.
            0 => (format!("d[{}] > 16u", self.rng.below(DATA)), active),
            // Data-dependent: any lanes.
            1 => (format!("(a & {}u) == 0u", 1 << self.rng.below(4)), 1),
            // Uniform within aligned clusters of 2^s lanes.
            _ => {
                let s = self.rng.below(32 - self.sg.leading_zeros());
                (format!("((l >> {s}u) & 1u) == 0u"), active.min(1 << s))
            }
        };
        self.indent(depth);
        let _ = writeln!(self.out, "if ({cond}) {{");
        for _ in 0..1 + self.rng.below(3) {
            self.statement_in(depth + 1, inner, loop_var);
        }
        self.indent(depth);
        if self.rng.chance(75) {
            self.out.push_str("} else {\n");
            for _ in 0..1 + self.rng.below(3) {
                self.statement_in(depth + 1, inner, loop_var);
            }
            self.indent(depth);
        }
        self.out.push_str("}\n");
    }

    /// A loop of a uniform trip count, or of one that differs between lanes (then any lanes
    /// may be active in its body).
    fn looped(&mut self, depth: u32, active: u32, _outer: Option<&str>) {
        self.next += 1;
        let (j, n) = (format!("j{}", self.next), format!("n{}", self.next));
        let (count, inner) = if self.rng.chance(50) {
            (format!("{}u", 1 + self.rng.below(3)), active)
        } else {
            (format!("(a >> {}u) & 3u", self.rng.below(8)), 1)
        };
        self.indent(depth);
        let _ = writeln!(
            self.out,
            "uint {n} = {count};\n{pad}for (uint {j} = 0u; {j} < {n}; {j}++) {{",
            pad = "  ".repeat(depth as usize)
        );
        for _ in 0..1 + self.rng.below(3) {
            self.statement_in(depth + 1, inner, Some(&j));
        }
        self.indent(depth);
        self.out.push_str("}\n");
    }

    /// An assignment of a subgroup operation's result (or plain arithmetic) to `a`, `b` or
    /// `w`.
    fn assign(&mut self, depth: u32, active: u32, loop_var: Option<&str>) {
        // Now and then a permutation ignores which lanes are active: undefined behaviour
        // the tiers must report alike.
        let free = self.rng.chance(8);
        let reach = if free { self.sg } else { active };
        let vector = self.rng.chance(35);
        let x = if vector {
            "w"
        } else {
            ["a", "b"][self.rng.below(2) as usize]
        };
        let operand = if vector {
            "w".to_string()
        } else {
            match self.rng.below(3) {
                0 => "a".to_string(),
                1 => "b".to_string(),
                _ => format!("a + {}u", self.rng.below(100)),
            }
        };
        let rhs = match self.rng.below(15) {
            0 if reach >= self.sg => {
                let d = self.amount(loop_var);
                format!("subgroupRotate({operand}, {d})")
            }
            0..=2 => {
                let c = self.cluster(reach.min(16));
                let d = self.amount(loop_var);
                format!("subgroupClusteredRotate({operand}, {d}, {c}u)")
            }
            3 => {
                let m = self.rng.below(reach);
                format!("subgroupShuffleXor({operand}, {m}u)")
            }
            4 => {
                let m = self.rng.below(reach);
                format!("subgroupShuffle({operand}, l ^ {m}u)")
            }
            5 if reach >= self.sg => {
                let k = self.rng.below(self.sg);
                match self.rng.below(3) {
                    0 => format!("subgroupShuffleUp({operand}, {k}u)"),
                    1 => format!("subgroupShuffleDown({operand}, {k}u)"),
                    _ => format!("subgroupBroadcast({operand}, {k}u)"),
                }
            }
            5 | 6 => format!("subgroupBroadcastFirst({operand})"),
            7 => {
                let ops = ["Add", "Min", "Max", "And", "Or", "Xor"];
                let op = ops[self.rng.below(ops.len() as u32) as usize];
                format!("subgroup{op}({operand})")
            }
            8 => {
                let ops = [
                    "InclusiveAdd",
                    "ExclusiveAdd",
                    "InclusiveXor",
                    "ExclusiveMax",
                ];
                let op = ops[self.rng.below(ops.len() as u32) as usize];
                format!("subgroup{op}({operand})")
            }
            9 => {
                let ops = ["Add", "Xor", "Max"];
                let op = ops[self.rng.below(ops.len() as u32) as usize];
                let c = self.cluster(self.sg.min(16));
                format!("subgroupClustered{op}({operand}, {c}u)")
            }
            10 | 11 => {
                let bit = 1 << self.rng.below(8);
                let ballot = format!("subgroupBallot((a & {bit}u) != 0u)");
                let v = match self.rng.below(3) {
                    0 => format!("subgroupBallotBitCount({ballot})"),
                    1 => format!("{ballot}.x ^ {ballot}.y"),
                    _ => format!("subgroupBallotExclusiveBitCount({ballot})"),
                };
                if vector {
                    format!("ivec4({v})")
                } else {
                    v
                }
            }
            12 => {
                let v = match self.rng.below(4) {
                    0 => "uint(subgroupElect())".to_string(),
                    1 => "uint(subgroupAll((a & 1u) == 0u))".to_string(),
                    2 => "uint(subgroupAny(b > a))".to_string(),
                    _ => "uint(subgroupAllEqual(a))".to_string(),
                };
                if vector {
                    format!("ivec4({v})")
                } else {
                    v
                }
            }
            _ if vector => "w.yzwx * 3 + ivec4(a)".to_string(),
            _ => format!("{operand} * {}u + b", 1 + 2 * self.rng.below(20)),
        };
        let op = ["+=", "^=", "-="][self.rng.below(3) as usize];
        self.indent(depth);
        let _ = writeln!(self.out, "{x} {op} {rhs};");
    }
}

/// What one tier did with a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Every bound buffer's bytes after the dispatch, by binding.
    pub buffers: Vec<Vec<u8>>,
    /// The findings (rendered) and their summaries, or the error.
    pub findings: Result<(Vec<String>, String), String>,
}

/// One tier's run: its [`Outcome`] and how many invocations ran on the wide interpreter
/// and as native code.
#[derive(Debug, Clone)]
pub struct TierRun {
    pub outcome: Outcome,
    pub wide_invocations: u64,
    pub native_invocations: u64,
}

/// The three tiers, in the order [`run_tiers`] returns them: the reference path, the wide
/// interpreter alone, the native tier in front of it.
pub const TIERS: [(&str, bool, bool); 3] = [
    ("reference", false, false),
    ("wide", true, false),
    ("native", true, true),
];

/// A program's runs on every tier.
#[derive(Debug, Clone)]
pub struct Tiers {
    /// One run per tier, in the order of [`TIERS`].
    pub runs: Vec<TierRun>,
    /// What the native compile cost ([`tangle_exec::jit::Compiles`]).
    pub compiles: tangle_exec::jit::Compiles,
    /// The program's lowered ops (its size).
    pub ops: usize,
}

/// Compiles GLSL `src` and runs it on every tier ([`TIERS`]) over [`GROUPS`] workgroups of
/// [`workgroup_size`]`(sg)` with subgroups of `sg`, sanitizer on. `Err`: the shader does not
/// compile, validate or make a pipeline.
pub fn run_tiers(src: &str, sg: u32) -> Result<Tiers, String> {
    let module = crate::compile(src).map_err(|e| format!("{e:?}"))?;
    let env = tangle_spirv::TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3")?;
    let valid = tangle_validate::validate(&module, env, &Default::default())
        .map_err(|found| format!("{} validation findings", found.len()))?;
    let profile = Profile::default()
        .with_subgroup_size(sg)
        .ok_or_else(|| format!("subgroup size {sg}"))?;
    let pipeline = Device::new(profile)
        .compute_pipeline(&valid, "main", &SpecConstants::new())
        .map_err(|e| e.to_string())?;
    let total = (workgroup_size(sg) * GROUPS) as usize;
    let data: Vec<u8> = (0..DATA)
        .flat_map(|k| (k.wrapping_mul(0x9e37_79b9) >> 7 ^ k).to_le_bytes())
        .collect();
    let runs = TIERS
        .iter()
        .map(|&(_, wide, jit)| {
            let mut res = Resources::default();
            res.buffers.insert((0, 0), data.clone());
            res.buffers.insert((0, 1), vec![0; total * 8]);
            res.buffers.insert((0, 2), vec![0; total * 16]);
            let options = RunOptions {
                threads: 2,
                wide,
                jit,
                step_limit: 1_000_000,
                ..RunOptions::default()
            };
            let report = pipeline.dispatch(&mut res, [GROUPS, 1, 1], &options);
            let (wide_invocations, native_invocations) = report.as_ref().map_or((0, 0), |r| {
                (r.stats.wide_invocations, r.stats.jit_invocations)
            });
            let findings = report
                .map(|r| {
                    (
                        r.diagnostics.iter().map(|d| format!("{d:?}")).collect(),
                        format!("{:?}", r.summaries),
                    )
                })
                .map_err(|e| e.to_string());
            TierRun {
                outcome: Outcome {
                    buffers: (0..3).map(|b| res.buffers[&(0, b)].clone()).collect(),
                    findings,
                },
                wide_invocations,
                native_invocations,
            }
        })
        .collect();
    let ops = pipeline
        .program()
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .map(|b| b.ops.len())
        .sum();
    Ok(Tiers {
        runs,
        compiles: pipeline.native_compiles(),
        ops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_deterministic_and_grow_with_their_size() {
        assert_eq!(program(7, 10, 32), program(7, 10, 32));
        assert_ne!(program(7, 10, 32), program(8, 10, 32));
        let small = program(7, 10, 32).len();
        let large = program(7, 40, 32).len();
        assert!(large > 2 * small, "{small} {large}");
    }
}
