//! `tangle bench driver`: what a Vulkan driver adds to a dispatch (issue 29's benchmark). One
//! 1-workgroup dispatch of a 64-invocation shader, timed two ways on every Vulkan device the
//! loader finds, tangle's own driver added ([`tangle_vulkan::raw::overhead`]): one dispatch per
//! submission (record, submit, execute, fence wait) and one command buffer of
//! [`BATCH`] dispatches with a barrier between each two. The baseline, measured in the same
//! run, is the executor without a driver: [`tangle_exec::Pipeline::dispatch`] on the same
//! SPIR-V and options as the driver's (every check on), once per dispatch. Every device's
//! buffer is checked against plain Rust before any time is printed.

use std::time::{Duration, Instant};
use tangle_exec::{Device, Profile, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use tangle_vulkan::raw::overhead::{self, Shape};

/// The shader: each invocation steps its own word of a linear congruential generator, so that
/// every dispatch changes every word and a lost or repeated dispatch shows in the result.
pub const SHADER: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    v[i] = v[i] * 1664525u + 1013904223u;
}
";

/// Invocations, and words of the buffer.
const WORDS: u32 = 64;

/// Dispatches in the batch's command buffer.
pub const BATCH: usize = 1000;

/// One measured path.
#[derive(Debug, Clone)]
pub struct Row {
    /// What ran it: the executor directly, or a device and its driver.
    pub name: String,
    /// Whether it is tangle's own driver.
    pub tangle: bool,
    /// Per dispatch, one per submission; or why it was not measured.
    pub result: Result<(Duration, Duration), String>,
}

impl Row {
    /// The time per dispatch, one per submission.
    pub fn single(&self) -> Option<Duration> {
        self.result.as_ref().ok().map(|r| r.0)
    }

    /// The time of the whole batch.
    pub fn batch(&self) -> Option<Duration> {
        self.result.as_ref().ok().map(|r| r.1)
    }
}

/// The buffer before the first dispatch: word `i` holds `i`.
fn input() -> Vec<u8> {
    (0..WORDS).flat_map(u32::to_le_bytes).collect()
}

/// The buffer after `n` dispatches, in plain Rust.
pub fn expected(n: usize) -> Vec<u8> {
    (0..WORDS)
        .map(|i| {
            (0..n).fold(i, |v, _| {
                v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
            })
        })
        .flat_map(u32::to_le_bytes)
        .collect()
}

/// The shader as SPIR-V for Vulkan 1.3.
pub fn spirv() -> Result<Vec<u32>, String> {
    let env = TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3 environment")?;
    tangle_amber::compile::glsl(SHADER, env).map_err(|e| format!("GLSL: {e}"))
}

/// The baseline: [`tangle_exec::Pipeline::dispatch`] `shape.singles` times per round, and
/// `shape.batch` times, the fastest of `shape.rounds` rounds each, with the driver's options.
pub fn baseline(words: &[u32], shape: Shape) -> Row {
    let name = "Pipeline::dispatch (no driver)".to_string();
    Row {
        name,
        tangle: false,
        result: baseline_times(words, shape),
    }
}

fn baseline_times(words: &[u32], shape: Shape) -> Result<(Duration, Duration), String> {
    let env = TargetEnv::parse("vulkan1.3").ok_or("no vulkan1.3 environment")?;
    let module = Module::from_words(words).map_err(|e| e.to_string())?;
    let module = tangle_validate::validate(&module, env, &Default::default())
        .map(tangle_validate::Validated::into_owned)
        .map_err(|found| format!("the shader is not valid ({} findings)", found.len()))?;
    let profile = Profile::by_name("default").ok_or("no default profile")?;
    let pipeline = Device::new(profile)
        .compute_pipeline(&module, "main", &SpecConstants::default())
        .map_err(|e| e.to_string())?;
    let mut resources = Resources::default();
    resources.buffers.insert((0, 0), input());
    // As the driver runs a dispatch (crates/tangle-icd/src/exec.rs): default options.
    let options = RunOptions::default();
    let mut dispatch = |resources: &mut Resources| {
        pipeline
            .dispatch(resources, [1, 1, 1], &options)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    // Warm-up, as on the devices: the first dispatch compiles the native tier's code.
    dispatch(&mut resources)?;
    let mut runs = 1;
    let best = |resources: &mut Resources,
                count: usize,
                dispatch: &mut dyn FnMut(&mut Resources) -> Result<(), String>|
     -> Result<Duration, String> {
        let mut best = Duration::MAX;
        for _ in 0..shape.rounds {
            let start = Instant::now();
            for _ in 0..count {
                dispatch(resources)?;
            }
            best = best.min(start.elapsed());
        }
        Ok(best)
    };
    let single = best(&mut resources, shape.singles, &mut dispatch)?;
    let batch = best(&mut resources, shape.batch, &mut dispatch)?;
    runs += shape.rounds * (shape.singles + shape.batch);
    check(resources.buffers.get(&(0, 0)), runs)?;
    Ok((single / per(shape.singles), batch))
}

/// `n` as a divisor of a duration.
fn per(n: usize) -> u32 {
    u32::try_from(n.max(1)).unwrap_or(u32::MAX)
}

/// Whether `got` is the buffer after `runs` dispatches.
fn check(got: Option<&Vec<u8>>, runs: usize) -> Result<(), String> {
    if got.is_some_and(|g| *g == expected(runs)) {
        Ok(())
    } else {
        Err(format!(
            "the buffer after {runs} dispatches differs from plain Rust's"
        ))
    }
}

/// Every device the loader finds (tangle's driver added by the caller), each measured.
pub fn devices(words: &[u32], shape: Shape) -> Result<Vec<Row>, String> {
    let instance =
        tangle_vulkan::raw::Instance::new(std::env::var_os(tangle_vulkan::LOADER_ENV).as_deref())
            .map_err(|e| e.to_string())?;
    let devices = instance.devices().map_err(|e| e.to_string())?;
    Ok(devices
        .into_iter()
        .map(|(physical, info)| {
            // The driver's name and version (`llvmpipe Mesa 22.3.6 (LLVM 15.0.6)`, `tangle
            // tangle 0.1.0`), without what tangle's adds after a colon.
            let driver = info.driver.split(':').next().unwrap_or("");
            let name = format!("device {}: {driver}", info.index);
            let result = overhead::measure(instance.clone(), physical, words, &input(), shape)
                .map_err(|e| e.to_string())
                .and_then(|o| {
                    check(Some(&o.bytes), o.dispatches)?;
                    Ok((o.single, o.batch))
                });
            Row {
                name,
                tangle: info.driver.starts_with("tangle "),
                result,
            }
        })
        .collect())
}

/// The table's header.
pub fn header(shape: Shape) -> String {
    format!(
        "driver overhead: a 1-workgroup dispatch (64 invocations), the fastest of {} rounds\n  {:<46} {:>14} {:>9}  {:>16} {:>14} {:>9}",
        shape.rounds,
        "path",
        "µs/dispatch",
        "ratio",
        format!("{} in 1 cmd (ms)", shape.batch),
        "µs/dispatch",
        "ratio"
    )
}

/// One row, with its ratios to `base` (the baseline's times over this row's: below 1 is
/// slower than the executor alone).
pub fn row(r: &Row, base: &Row, shape: Shape) -> String {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let ratio = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.3}x", b.as_secs_f64() / a.as_secs_f64().max(1e-12)),
        _ => "-".into(),
    };
    match &r.result {
        Ok((single, batch)) => format!(
            "  {:<46} {:>14.1} {:>9}  {:>16.2} {:>14.1} {:>9}",
            r.name,
            us(*single),
            ratio(r.single(), base.single()),
            batch.as_secs_f64() * 1e3,
            us(*batch) / shape.batch.max(1) as f64,
            ratio(r.batch(), base.batch()),
        ),
        Err(why) => format!("  {:<46} not measured: {why}", r.name),
    }
}

/// The ratios of `a` over `b` (`b`'s time over `a`'s, as [`row`]), in words.
pub fn versus(a: &Row, b: &Row) -> Option<String> {
    let single = b.single()?.as_secs_f64() / a.single()?.as_secs_f64().max(1e-12);
    let batch = b.batch()?.as_secs_f64() / a.batch()?.as_secs_f64().max(1e-12);
    Some(format!(
        "  {} against {}: {single:.3}x one per submission, {batch:.3}x in one command buffer (above 1: faster)",
        a.name, b.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The baseline runs the shader and its result is plain Rust's; `expected` steps the
    /// generator (two dispatches from word 1: 1 -> 1015568748 -> 1586005467).
    #[test]
    fn the_baseline_matches_plain_rust() {
        let e = expected(2);
        assert_eq!(e[4..8], 1_586_005_467u32.to_le_bytes());
        let words = spirv().expect("compiles");
        let shape = Shape {
            singles: 2,
            batch: BATCH,
            rounds: 1,
            timeout: Duration::from_secs(60),
        };
        let base = baseline(&words, shape);
        let (single, batch) = base.result.clone().expect("runs");
        assert!(single > Duration::ZERO && batch > single, "{base:?}");
        let line = row(&base, &base, shape);
        assert!(line.contains("1.000x"), "{line}");
        assert!(check(Some(&input()), 1).is_err());
    }
}
