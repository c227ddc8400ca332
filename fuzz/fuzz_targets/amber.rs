//! Fuzz target: arbitrary UTF-8 → the AmberScript parser → tangle's CPU backend. Every input is
//! parsed or rejected with a located error, and every script that parses is run (its shaders
//! compiled, validated, lowered and dispatched) under small step, time and memory limits. No
//! input may panic the host or outgrow the limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use tangle::cpu_backend::CpuBackend;
use tangle_exec::{Profile, RunOptions};

fuzz_target!(|text: &str| {
    // Buffers and dispatches are held to 64 MiB, far below libFuzzer's 2 GB RSS limit.
    let Ok(script) = tangle_amber::parse_limited(text, 64 << 20) else {
        return;
    };
    let options = RunOptions {
        threads: 1,
        step_limit: 10_000,
        time_limit: Duration::from_millis(200),
        memory_limit: 64 << 20,
        ..RunOptions::default()
    };
    let mut backend = CpuBackend::new(Profile::default(), options);
    let report = tangle_amber::run(&script, &mut backend);
    // PASS is never claimed over a failed expectation.
    if report.status == tangle_amber::Status::Pass {
        assert!(
            report.expects.iter().all(|e| e.passed),
            "PASS with a failed EXPECT"
        );
    }
});
