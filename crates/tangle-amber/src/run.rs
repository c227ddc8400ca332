//! The runner: checks requirements, compiles every shader, then executes the commands in order
//! against a [`Backend`], keeping buffer contents across `RUN`s and pipelines.
//!
//! A failed `EXPECT` is recorded and execution goes on (every expectation gets a result); a
//! backend error, an unsupported job or a compile error stops the run, and the report counts the
//! `EXPECT`s it did not reach. A script with no `RUN` and no `EXPECT` is an error: it would pass
//! while testing nothing.

use crate::backend::{Backend, BackendError, ComputeJob, JobBinding, JobImage};
use crate::compile::{compile, compile_for, job_env};
use crate::optimize::{optimize, OptimizeError};
use crate::report::{RunReport, Status};
use crate::script::{BindingKind, Command, Pipeline, Script};
use crate::verify::verify;

/// Runs `script` on `backend`.
pub fn run(script: &Script, backend: &mut dyn Backend) -> RunReport {
    run_observed(script, backend, &mut |_, _| {})
}

/// [`run()`], calling `on_repeat(done, count)` as an outermost `REPEAT` goes: with 0 before its
/// first iteration and after each one (a progress display's hook; the runner draws nothing).
pub fn run_observed(
    script: &Script,
    backend: &mut dyn Backend,
    on_repeat: &mut dyn FnMut(u64, u64),
) -> RunReport {
    let (runs, expects) = tally(&script.commands);
    let mut report = execute(script, backend, runs == 0 && expects == 0, on_repeat);
    report.unreached = expects.saturating_sub(report.expects.len());
    report
}

/// Checks the requirements, compiles the shaders and runs the commands; `idle` says the script
/// has nothing to run or check.
fn execute(
    script: &Script,
    backend: &mut dyn Backend,
    idle: bool,
    on_repeat: &mut dyn FnMut(u64, u64),
) -> RunReport {
    let mut report = RunReport::new();
    if idle {
        report.set(
            Status::Error,
            "the script has no RUN and no EXPECT: it runs nothing and checks nothing".into(),
        );
        return report;
    }
    for requirement in &script.requirements {
        if let Err(why) = backend.supports(requirement) {
            report.set(Status::Unsupported, format!("{requirement}: {why}"));
            return report;
        }
    }
    let mut modules = Vec::with_capacity(script.shaders.len());
    for (index, shader) in script.shaders.iter().enumerate() {
        // A shader every pipeline of which compiles it with COMPILE_OPTIONS definitions may not
        // compile without them (`#error` guards): it is built per pipeline only.
        let mut users = script.pipelines.iter().filter(|p| p.shader == index);
        let first = users.next();
        if first.is_some_and(|p| !p.build.defines.is_empty())
            && users.all(|p| !p.build.defines.is_empty())
        {
            modules.push(Vec::new());
            continue;
        }
        match compile(shader) {
            Ok(words) => modules.push(words),
            Err(e) => {
                report.set(Status::Error, format!("line {}: {e}", shader.at.line));
                return report;
            }
        }
    }
    // Each pipeline's module: its shader with the pipeline's COMPILE_OPTIONS and passes.
    let mut pipeline_modules = Vec::with_capacity(script.pipelines.len());
    for p in &script.pipelines {
        match build_pipeline(script, p, &modules) {
            Ok(words) => pipeline_modules.push(words),
            Err((status, why)) => {
                report.set(
                    status,
                    format!("line {}: PIPELINE {}: {why}", p.at.line, p.name),
                );
                return report;
            }
        }
    }
    let mut runner = Runner {
        script,
        modules: pipeline_modules,
        buffers: script.buffers.iter().map(|b| b.bytes.clone()).collect(),
        backend,
        report,
        on_repeat,
        depth: 0,
    };
    // A stop (Err) has already been recorded in the report.
    let _ = runner.commands(&script.commands);
    runner.report
}

/// The words a pipeline runs: its shader compiled with the pipeline's definitions, then through
/// its optimizer passes.
fn build_pipeline(
    script: &Script,
    p: &Pipeline,
    modules: &[Vec<u32>],
) -> Result<Vec<u32>, (Status, String)> {
    let (Some(shader), Some(base)) = (script.shaders.get(p.shader), modules.get(p.shader)) else {
        return Err((Status::Error, "no shader".into()));
    };
    let words = compile_for(shader, &p.build, base).map_err(|e| (Status::Error, e.to_string()))?;
    if p.build.passes.is_empty() {
        return Ok(words);
    }
    optimize(&words, &p.build.passes, job_env(shader, &words)).map_err(|e| match e {
        OptimizeError::Unsupported(why) => (Status::Unsupported, why),
        OptimizeError::Failed(why) => (Status::Error, why),
    })
}

/// How many `RUN`s and `EXPECT`s the commands execute when nothing stops them, counting a
/// `REPEAT` body once per iteration (saturating: a count only needs to be compared).
pub fn tally(commands: &[Command]) -> (usize, usize) {
    commands
        .iter()
        .fold((0usize, 0usize), |(runs, expects), command| match command {
            Command::Run { .. } => (runs.saturating_add(1), expects),
            Command::Debug { threads, .. } => (
                runs.saturating_add(1),
                expects.saturating_add(crate::debug::expectations(threads)),
            ),
            Command::Expect(_) => (runs, expects.saturating_add(1)),
            Command::Copy { .. } | Command::Write { .. } => (runs, expects),
            Command::Repeat { count, body, .. } => {
                let (r, e) = tally(body);
                let n = *count as usize;
                (
                    runs.saturating_add(r.saturating_mul(n)),
                    expects.saturating_add(e.saturating_mul(n)),
                )
            }
        })
}

struct Runner<'s, 'b> {
    script: &'s Script,
    /// Each pipeline's SPIR-V words.
    modules: Vec<Vec<u32>>,
    buffers: Vec<Vec<u8>>,
    backend: &'b mut dyn Backend,
    report: RunReport,
    on_repeat: &'b mut dyn FnMut(u64, u64),
    /// How many `REPEAT`s the current command is inside.
    depth: usize,
}

/// The run stopped; the reason is in the report.
struct Stop;

impl Runner<'_, '_> {
    fn commands(&mut self, commands: &[Command]) -> Result<(), Stop> {
        for command in commands {
            match command {
                Command::Run {
                    pipeline,
                    groups,
                    at,
                } => {
                    let Some(p) = self.script.pipelines.get(*pipeline) else {
                        return Err(Stop);
                    };
                    self.dispatch(*pipeline, p, *groups, at.line, Vec::new())
                        .map_err(|(status, why)| {
                            self.report
                                .set(status, format!("line {}: RUN {}: {why}", at.line, p.name));
                            Stop
                        })?;
                }
                Command::Debug {
                    pipeline,
                    groups,
                    threads,
                    at,
                } => {
                    let Some(p) = self.script.pipelines.get(*pipeline) else {
                        return Err(Stop);
                    };
                    let invocations = threads.iter().map(|t| t.invocation).collect();
                    let words = self.modules.get(*pipeline).cloned().unwrap_or_default();
                    let results = self
                        .dispatch(*pipeline, p, *groups, at.line, invocations)
                        .and_then(|paths| crate::debug::check(&words, threads, &paths))
                        .map_err(|(status, why)| {
                            self.report
                                .set(status, format!("line {}: DEBUG {}: {why}", at.line, p.name));
                            Stop
                        })?;
                    for result in results {
                        if !result.passed {
                            self.report.set(
                                Status::Fail,
                                format!("line {}: DEBUG {}", result.line, result.message),
                            );
                        }
                        self.report.expects.push(result);
                    }
                }
                Command::Expect(expect) => {
                    let result = verify(self.script, &self.buffers, expect);
                    if !result.passed {
                        self.report.set(
                            Status::Fail,
                            format!("line {}: EXPECT {}", result.line, result.message),
                        );
                    }
                    self.report.expects.push(result);
                }
                Command::Copy { from, to, .. } => {
                    let bytes = self.buffers.get(*from).cloned().unwrap_or_default();
                    if let Some(dst) = self.buffers.get_mut(*to) {
                        *dst = bytes;
                    }
                }
                Command::Write {
                    buffer,
                    offset,
                    bytes,
                    ..
                } => {
                    // The parser counted the largest size against the buffer limit.
                    let end = offset.saturating_add(bytes.len());
                    if let Some(dst) = self.buffers.get_mut(*buffer) {
                        if dst.len() < end {
                            dst.resize(end, 0);
                        }
                        if let Some(slot) = dst.get_mut(*offset..end) {
                            slot.copy_from_slice(bytes);
                        }
                    }
                }
                Command::Repeat { count, body, .. } => {
                    let count = u64::from(*count);
                    let outermost = self.depth == 0;
                    if outermost {
                        (self.on_repeat)(0, count);
                    }
                    self.depth += 1;
                    for i in 0..count {
                        let done = self.commands(body);
                        if outermost && done.is_ok() {
                            (self.on_repeat)(i + 1, count);
                        }
                        if done.is_err() {
                            self.depth -= 1;
                            return done;
                        }
                    }
                    self.depth -= 1;
                }
            }
        }
        Ok(())
    }

    /// Builds the job for one `RUN`, runs it, and writes the bound ranges back.
    fn dispatch(
        &mut self,
        index: usize,
        p: &Pipeline,
        groups: [u32; 3],
        line: u32,
        debug: Vec<[u32; 3]>,
    ) -> Result<Vec<Vec<crate::backend::PathEvent>>, (Status, String)> {
        let spirv = self
            .modules
            .get(index)
            .cloned()
            .ok_or((Status::Error, "no shader".to_string()))?;
        let env = self
            .script
            .shaders
            .get(p.shader)
            .map(|shader| job_env(shader, &spirv))
            .unwrap_or(crate::compile::DEFAULT_TARGET_ENV);
        let mut bindings = Vec::with_capacity(p.bindings.len());
        let mut ranges = Vec::with_capacity(p.bindings.len());
        for b in &p.bindings {
            let bytes = self.buffers.get(b.buffer).map_or(&[][..], Vec::as_slice);
            let end = match b.range {
                Some(r) => b.offset.checked_add(r),
                None => Some(bytes.len()),
            };
            let range = end
                .filter(|e| b.offset <= *e && *e <= bytes.len())
                .map(|e| b.offset..e)
                .ok_or_else(|| {
                    let name = self
                        .script
                        .buffers
                        .get(b.buffer)
                        .map_or("?", |x| x.name.as_str());
                    (
                        Status::Error,
                        format!(
                            "the bound range of '{name}' lies outside its {} bytes",
                            bytes.len()
                        ),
                    )
                })?;
            let image = match b.kind.is_image() {
                true => Some(self.job_image(b, &range)?),
                false => None,
            };
            let sampler = b
                .sampler
                .and_then(|i| self.script.samplers.get(i))
                .map(|s| s.state);
            bindings.push(JobBinding {
                set: b.set,
                binding: b.binding,
                kind: b.kind,
                element: b.element,
                bytes: bytes[range.clone()].to_vec(),
                buffer: b.buffer,
                offset: range.start,
                image,
                sampler,
            });
            ranges.push((b.buffer, range));
        }
        // A backend that gives each binding its own memory would lose writes through one of
        // two overlapping bindings.
        let aliases = self.backend.aliases_bindings();
        overlapping_ranges(&ranges, aliases).map_err(|(a, b)| {
            let name = |i: usize| {
                let buffer = ranges.get(i).map_or(usize::MAX, |r| r.0);
                self.script
                    .buffers
                    .get(buffer)
                    .map_or("?", |x| x.name.as_str())
            };
            let at = |i: usize| {
                p.bindings.get(i).map_or(String::new(), |b| {
                    format!("set {} binding {} element {}", b.set, b.binding, b.element)
                })
            };
            (
                Status::Unsupported,
                format!(
                    "'{}' is bound at {} and {} with overlapping ranges: this backend gives each descriptor its own copy of the bytes, so writes through one would not be seen through the other",
                    name(a),
                    at(a),
                    at(b)
                ),
            )
        })?;
        let push_constants = p
            .push_constants
            .and_then(|i| self.buffers.get(i))
            .cloned()
            .unwrap_or_default();
        let job = ComputeJob {
            spirv,
            target_env: env,
            entry_point: p.entry_point.clone(),
            spec_constants: p.spec_constants.clone(),
            bindings,
            push_constants,
            groups,
            subgroup: p.subgroup,
            line,
            debug,
            robustness: crate::backend::BufferRobustness::of(&self.script.requirements),
            image_robustness: crate::backend::BufferRobustness::images(&self.script.requirements),
            coopmat_robustness: crate::backend::BufferRobustness::enables(
                &self.script.requirements,
                crate::backend::BufferRobustness::COOPMAT_FEATURE,
            ),
            null_descriptor: crate::backend::BufferRobustness::enables(
                &self.script.requirements,
                crate::backend::BufferRobustness::NULL_FEATURE,
            ),
        };
        let output = self.backend.run_compute(&job).map_err(|e| match e {
            BackendError::Unsupported(_) => (Status::Unsupported, e.to_string()),
            BackendError::Invalid(_) | BackendError::Failed(_) => (Status::Fail, e.to_string()),
            BackendError::Device(_) => (Status::Error, e.to_string()),
        })?;
        if output.bindings.len() != ranges.len() {
            return Err((
                Status::Error,
                "the backend returned the wrong number of buffers".into(),
            ));
        }
        for ((buffer, range), bytes) in ranges.into_iter().zip(output.bindings) {
            let slot = self.buffers.get_mut(buffer).and_then(|b| b.get_mut(range));
            match slot {
                Some(slot) if slot.len() == bytes.len() => slot.copy_from_slice(&bytes),
                // A `BIND SAMPLER` has no buffer and no bytes.
                None if buffer == usize::MAX && bytes.is_empty() => {}
                _ => {
                    return Err((
                        Status::Error,
                        "the backend changed the size of a buffer".into(),
                    ))
                }
            }
        }
        self.report.runs += 1;
        self.report.notes.extend(output.notes);
        self.report.warnings.extend(output.warnings);
        self.report
            .findings
            .extend(output.findings.into_iter().map(|mut f| {
                f.line = line;
                f
            }));
        if !output.undefined_behaviour.is_empty() {
            // A finding's text may run over several lines; the verdict names its first.
            let first = output
                .undefined_behaviour
                .first()
                .and_then(|u| u.lines().next())
                .unwrap_or_default()
                .to_string();
            self.report
                .undefined_behaviour
                .extend(output.undefined_behaviour);
            self.report.set(
                Status::Fail,
                format!("{} undefined behaviour: {first}", p.name),
            );
        }
        Ok(output.debug_paths)
    }
}

impl Runner<'_, '_> {
    /// The texel layout of an image binding: an `IMAGE` for `storage_image` and
    /// `sampled_image`, a `FORMAT` buffer (or `IMAGE`) for the texel buffers, whose texel count
    /// is its size over the texel size.
    fn job_image(
        &self,
        b: &crate::script::Binding,
        range: &std::ops::Range<usize>,
    ) -> Result<JobImage, (Status, String)> {
        let buffer = self
            .script
            .buffers
            .get(b.buffer)
            .ok_or((Status::Error, "no buffer".to_string()))?;
        let name = &buffer.name;
        let texel_buffer = matches!(
            b.kind,
            BindingKind::UniformTexelBuffer | BindingKind::StorageTexelBuffer
        );
        let format = buffer.format.clone().ok_or_else(|| {
            (
                Status::Error,
                format!("'{name}' is bound as an image or texel buffer but has no FORMAT"),
            )
        })?;
        match (buffer.image, texel_buffer) {
            (Some(shape), false) => Ok(JobImage {
                format,
                dimensions: shape.dimensions,
                extent: shape.extent,
            }),
            (_, true) => {
                let texels = range.len().checked_div(buffer.element.stride).unwrap_or(0);
                Ok(JobImage {
                    format,
                    dimensions: 1,
                    extent: [u32::try_from(texels).unwrap_or(u32::MAX), 1, 1],
                })
            }
            (None, false) => Err((
                Status::Error,
                format!("'{name}' is bound as an image but is a BUFFER, not an IMAGE"),
            )),
        }
    }
}

/// The first two bindings (by position) whose ranges of one buffer overlap, unless the backend
/// `aliases` them.
fn overlapping_ranges(
    ranges: &[(usize, std::ops::Range<usize>)],
    aliases: bool,
) -> Result<(), (usize, usize)> {
    if aliases {
        return Ok(());
    }
    for (i, (bi, ri)) in ranges.iter().enumerate() {
        for (j, (bj, rj)) in ranges.iter().enumerate().skip(i + 1) {
            if bi == bj && ri.start < rj.end && rj.start < ri.end {
                return Err((i, j));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
