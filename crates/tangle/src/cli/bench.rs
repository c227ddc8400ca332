//! `tangle bench`: the benchmark workloads (`bench/README.md`) through the executor and as plain
//! Rust in the same run ([`crate::bench`]). Exit 0 when every result matches plain Rust, 1 when
//! one does not (or a workload cannot run).

use super::unusable::{Kind, Unusable};
use super::Exit;
use tangle::bench::{self, workloads, Options};

#[derive(clap::Args)]
pub struct Args {
    /// Threads for tangle and for the plain-Rust baseline (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// 1/16 of the standard sizes (256³ for the GEMM).
    #[arg(long, conflicts_with = "large")]
    quick: bool,
    /// Also the larger sizes the benchmark brief names (the GEMM at 2048³ as well as 1024³).
    #[arg(long)]
    large: bool,
    /// Do not run the workloads on a Vulkan driver even when one is installed.
    #[arg(long)]
    no_driver: bool,
    /// The Vulkan device to compare with (`tangle profiles --devices`); lavapipe's threads are
    /// set with LP_NUM_THREADS.
    #[arg(long, value_name = "N")]
    device: Option<usize>,
    /// Run the executor's reference path alone (no wide path), to measure what the wide path
    /// gives.
    #[arg(long)]
    reference: bool,
    /// Leave the native tier off (the wide interpreter runs what it would), to measure what it
    /// gives.
    #[arg(long = "no-jit")]
    no_jit: bool,
    /// Only these workloads (alu_hash, saxpy, rotate_conv, dot_gemv, coopmat_gemm; `compile`:
    /// the native compile against program size).
    workloads: Vec<String>,
}

/// The name that selects the native compile's rows alone.
const COMPILE: &str = "compile";

pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let options = Options {
        threads: args.threads.unwrap_or(cores).clamp(1, cores),
        wide: !args.reference,
        jit: !args.no_jit,
    };
    let divisor = if args.quick { 16 } else { 1 };
    let all = workloads::all();
    if let Some(unknown) = args
        .workloads
        .iter()
        .find(|name| name.as_str() != COMPILE && !all.iter().any(|w| w.name == name.as_str()))
    {
        return Err(Unusable::new(
            Kind::Usage,
            format!("no benchmark workload named '{unknown}'"),
        ));
    }
    println!(
        "tangle bench: {} thread(s){}{}; the 16³ matrix kernel: {}",
        options.threads,
        if args.quick {
            ", quick sizes"
        } else if args.large {
            ", standard and large sizes"
        } else {
            ""
        },
        if args.reference {
            ", reference path only"
        } else if args.no_jit {
            ", no native tier"
        } else {
            ""
        },
        tangle_exec::jit::tile_kernel()
    );
    // The same SPIR-V on a Vulkan driver when one is installed (lavapipe in CI).
    let mut driver = if args.no_driver {
        None
    } else {
        let options = super::vulkan::options(args.device, std::time::Duration::from_secs(600));
        match tangle_vulkan::VulkanBackend::new(&options) {
            Ok(d) => {
                println!("driver: {} ({})", d.device().name, d.device().driver);
                Some(d)
            }
            Err(e) => {
                println!("driver: none ({e})");
                None
            }
        }
    };
    println!("{}", bench::HEADER);
    let mut exit = Exit::Success;
    // The longest native compile of any shader this run compiled, and whose.
    let mut worst: Option<(std::time::Duration, String)> = None;
    let mut compiled = |time: std::time::Duration, what: String| {
        if worst.as_ref().is_none_or(|(t, _)| time > *t) {
            worst = Some((time, what));
        }
    };
    for w in all
        .iter()
        .filter(|w| args.workloads.is_empty() || args.workloads.iter().any(|n| n == w.name))
    {
        let large = w.large.filter(|_| args.large);
        for case in std::iter::once((w.case)(divisor)).chain(large.into_iter().map(|f| f())) {
            let d = driver.as_mut().map(|d| bench::Driver {
                max_groups: d.device().limits.max_workgroup_count,
                backend: d as &mut dyn tangle_amber::Backend,
            });
            match bench::measure(w, &case, &options, d) {
                Ok(m) => {
                    println!("{}", bench::row(&m));
                    compiled(m.native, format!("{} ({})", m.name, m.size));
                }
                Err(why) => {
                    println!("{:<13} not measured ({}): {why}", w.name, case.size);
                    exit = Exit::No;
                }
            }
        }
    }
    if options.wide
        && options.jit
        && (args.workloads.is_empty() || args.workloads.iter().any(|n| n == COMPILE))
    {
        // The native compile's growth with program size: linear (issue 28).
        let sizes: &[u32] = if args.quick {
            &[6, 12, 24]
        } else {
            &[6, 12, 24, 48]
        };
        println!("{}", bench::COMPILE_HEADER);
        match bench::compile_scaling(sizes) {
            Ok(rows) => {
                for r in &rows {
                    println!("{}", bench::compile_row(r));
                    if r.measure > 0 {
                        compiled(r.time, format!("generated, {} ops", r.ops));
                    }
                }
            }
            Err(why) => {
                println!("  not measured: {why}");
                exit = Exit::No;
            }
        }
    }
    if let Some((time, what)) = worst {
        println!(
            "longest native compile: {:.1} ms ({what})",
            time.as_secs_f64() * 1e3
        );
    }
    if let Some(peak) = bench::peak_memory() {
        println!("peak memory: {peak}");
    }
    Ok(exit)
}
