//! The native tier's compile budget: a count, kept while a function is emitted, that bounds
//! the work of compiling it; past [`BUDGET`] the program is not compiled and the wide
//! interpreter runs it, as it runs a program with an op the native tier has no code for.
//!
//! What it counts: Cranelift builds the SSA form of the function's variables (one per slot,
//! per lane of a lockstep group) as each is read: a read finds the variable's definition by
//! walking back over the blocks emitted since the variable was last defined or read there,
//! and each block it passes may receive a parameter for it. So a read costs one plus the
//! blocks emitted since its variable was last touched ([`Budget::touch`]), and the measure
//! is the sum over every read: the (variable × block) steps of the SSA construction, which
//! bounds the size of the function handed to Cranelift's code generator as well (every
//! instruction reads a variable or is one of a bounded number per read). A program whose
//! reads are near their definitions costs about its size; what cost minutes before
//! (`docs/executor.md`, "Compile time") was reads of every slot of every lane at each point
//! a group may diverge, far from their definitions: (points × slots × lanes × blocks).
//!
//! Deterministic: it depends on the program and the [`super::compile::Key`] only, never on a
//! clock, so a program is compiled, or not, the same way on every machine and in every test.

use cranelift_frontend::Variable;

/// The largest measure compiled. The measure is about the function's instruction count on
/// the generated programs of `tangle-oracle`'s `group_ops` (issue 28's shader, 26 `if`/`else`
/// pairs: 114 k), whose compile takes about a microsecond an instruction in a release build
/// once the function is past the backtracking register allocator's size
/// (`compile::BACKTRACKING_INSTS`): so at most about a second.
pub const BUDGET: u64 = 1 << 20;

/// The measure so far, and what it needs to go on.
#[derive(Debug, Default)]
pub(super) struct Budget {
    /// The measure so far.
    pub(super) spent: u64,
    /// Per variable (by index), the block count when it was last defined or read.
    touched: Vec<u32>,
    /// The block count when the copy of the program being emitted began: a read walks back
    /// through that copy's blocks only (the lockstep copy defines its own values; what it
    /// reads from before it, it finds at the copy's one entry).
    copy_start: u32,
}

impl Budget {
    /// Counts a read (`read`) or a definition of `var` when `blocks` blocks have been created.
    pub(super) fn touch(&mut self, var: Variable, blocks: u32, read: bool) {
        use cranelift_codegen::entity::EntityRef;
        let i = var.index();
        if self.touched.len() <= i {
            self.touched.resize(i + 1, 0);
        }
        if let Some(t) = self.touched.get_mut(i) {
            if read {
                let since = blocks.saturating_sub((*t).max(self.copy_start));
                self.spent = self.spent.saturating_add(1 + u64::from(since));
            }
            *t = blocks;
        }
    }

    /// A new copy of the program begins when `blocks` blocks have been created.
    pub(super) fn start_copy(&mut self, blocks: u32) {
        self.copy_start = blocks;
    }

    /// `Err` once the measure has passed [`BUDGET`].
    pub(super) fn check(&self) -> Result<(), String> {
        let limit = limit();
        if self.spent > limit {
            return Err(format!(
                "the program is too large to compile to native code (its compile measure \
                 passed {limit})"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// The bound of this thread's compiles, lowered by the tests (a dispatch compiles on the
    /// thread that dispatches).
    static TEST_LIMIT: std::cell::Cell<u64> = const { std::cell::Cell::new(BUDGET) };
}

/// The bound: [`BUDGET`].
#[cfg(not(test))]
fn limit() -> u64 {
    BUDGET
}

/// The bound: [`BUDGET`], as lowered by the test running on this thread.
#[cfg(test)]
fn limit() -> u64 {
    TEST_LIMIT.with(|l| l.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_costs_the_blocks_since_its_variable_was_touched() {
        let mut b = Budget::default();
        let (x, y) = (Variable::from_u32(0), Variable::from_u32(3));
        b.touch(x, 1, false);
        b.touch(x, 5, true);
        assert_eq!(b.spent, 5);
        // A second read in the same block costs one.
        b.touch(x, 5, true);
        assert_eq!(b.spent, 6);
        // A variable never defined walks back to the start.
        b.touch(y, 7, true);
        assert_eq!(b.spent, 14);
        // In another copy of the program, back to the copy's start.
        b.start_copy(20);
        b.touch(x, 22, true);
        assert_eq!(b.spent, 17);
        assert!(b.check().is_ok());
        b.spent = BUDGET + 1;
        assert!(b.check().is_err());
    }

    /// A pipeline of `src` (GLSL) with subgroups of 16.
    fn pipeline(src: &str) -> crate::Pipeline {
        use crate::{Device, Profile, SpecConstants};
        let env = tangle_spirv::TargetEnv::parse("vulkan1.3").expect("vulkan1.3");
        let words = tangle_amber::compile::glsl(src, env).expect("GLSL");
        let module = tangle_spirv::binary::read(&words).expect("read");
        let valid = tangle_validate::validate(&module, env, &Default::default()).expect("valid");
        let profile = Profile::default().with_subgroup_size(16).expect("16");
        Device::new(profile)
            .compute_pipeline(&valid, "main", &SpecConstants::new())
            .expect("pipeline")
    }

    /// Dispatches `src` (GLSL) on 2 workgroups with subgroups of 16, on the native tier
    /// (`jit`) or the wide interpreter or the reference path alone (`wide` off): the buffer,
    /// the report's findings, the native and wide invocations and the compile's measure.
    fn dispatch(src: &str, wide: bool, jit: bool) -> (Vec<u8>, String, u64, u64, u64) {
        use crate::{Resources, RunOptions};
        let pipeline = pipeline(src);
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 128 * 4]);
        let options = RunOptions {
            threads: 1,
            wide,
            jit,
            ..RunOptions::default()
        };
        let report = pipeline
            .dispatch(&mut res, [2, 1, 1], &options)
            .expect("dispatch");
        (
            res.buffers[&(0, 0)].clone(),
            format!("{:?}", report.diagnostics),
            report.stats.jit_invocations,
            report.stats.wide_invocations,
            pipeline.native_compiles().measure,
        )
    }

    /// A run whose time limit passed before the dispatch (`RunOptions::started`: validation
    /// and lowering count) compiles nothing and fails with the limit.
    #[test]
    fn a_deadline_passed_before_the_compile_stops_the_run_without_compiling() {
        use crate::{ExecError, Resources, RunOptions, Trap};
        let pipeline = pipeline(SRC);
        let mut res = Resources::default();
        res.buffers.insert((0, 0), vec![0; 128 * 4]);
        let now = std::time::Instant::now();
        let options = RunOptions {
            threads: 1,
            time_limit: std::time::Duration::from_millis(1500),
            started: now.checked_sub(std::time::Duration::from_secs(2)),
            ..RunOptions::default()
        };
        let err = pipeline.dispatch(&mut res, [2, 1, 1], &options).err();
        assert!(
            matches!(
                err,
                Some(ExecError::Trap(Trap::TimeLimit {
                    limit_ms: 1500,
                    at: None
                }))
            ),
            "{err:?}"
        );
        assert_eq!(pipeline.native_compiles(), Default::default());
        assert_eq!(res.buffers[&(0, 0)], vec![0; 128 * 4]);
        // Started now, the same run passes, and compiles.
        let options = RunOptions {
            started: Some(std::time::Instant::now()),
            ..options
        };
        pipeline
            .dispatch(&mut res, [2, 1, 1], &options)
            .expect("dispatch");
        assert!(pipeline.native_compiles().measure > 0);
    }

    /// Rotates, a reduction and a loop, no divergence: the native tier runs it.
    const SRC: &str = "#version 450
#extension GL_KHR_shader_subgroup_rotate : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint a = i * 2654435761u;
  for (uint j = 0u; j < 3u; j++) {
    a += subgroupClusteredRotate(a, j + 1u, 8u);
    a ^= subgroupAdd(a >> 3u);
  }
  o[i] = a + subgroupRotate(a, 5u);
}
";

    #[test]
    fn a_program_past_the_budget_runs_on_the_wide_interpreter_with_the_same_results() {
        let src = SRC;
        let reference = dispatch(src, false, false);
        let native = dispatch(src, true, true);
        assert!(native.2 > 0, "the native tier did not run it");
        assert!(native.4 > 0 && native.4 <= BUDGET, "measure {}", native.4);
        // Under a bound below its measure the program is refused, and the wide interpreter
        // runs it.
        TEST_LIMIT.with(|l| l.set(native.4 - 1));
        let refused = dispatch(src, true, true);
        TEST_LIMIT.with(|l| l.set(BUDGET));
        assert_eq!(refused.2, 0, "the native tier ran past its bound");
        assert_eq!(refused.4, 0, "a refused compile has no measure");
        assert_eq!(refused.3, 128, "the wide interpreter did not run it");
        for run in [&native, &refused] {
            assert_eq!((&run.0, &run.1), (&reference.0, &reference.1));
        }
        assert_ne!(reference.0, vec![0; 128 * 4]);
    }
}
