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
    /// the native compile against program size; `driver`: a dispatch's cost through each
    /// Vulkan driver, tangle's own included, against the executor alone).
    workloads: Vec<String>,
}

/// The name that selects the native compile's rows alone.
const COMPILE: &str = "compile";

/// The name that selects the driver-overhead rows alone ([`bench::overhead`]).
const DRIVER: &str = "driver";

/// The loader's variable adding driver manifests to those it finds (`docs/driver.md`).
const ADD_DRIVER_FILES: &str = "VK_ADD_DRIVER_FILES";

pub fn run(args: &Args) -> Result<Exit, Unusable> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let options = Options {
        threads: args.threads.unwrap_or(cores).clamp(1, cores),
        wide: !args.reference,
        jit: !args.no_jit,
    };
    let divisor = if args.quick { 16 } else { 1 };
    let all = workloads::all();
    if let Some(unknown) = args.workloads.iter().find(|name| {
        ![COMPILE, DRIVER].contains(&name.as_str()) && !all.iter().any(|w| w.name == name.as_str())
    }) {
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
    let named = |name: &str| args.workloads.iter().any(|n| n == name);
    let mut exit = Exit::Success;
    // First, while the process has no other thread: it adds tangle's driver to the loader's
    // list through the environment, and puts the environment back before the workloads pick
    // their device.
    if named(DRIVER) || (args.workloads.is_empty() && !args.no_driver) {
        if driver_overhead(args.quick) == Exit::No {
            exit = Exit::No;
        }
        if args.workloads.iter().all(|n| n == DRIVER) && !args.workloads.is_empty() {
            return Ok(exit);
        }
    }
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
    // The longest native compile of any shader this run compiled, and whose.
    let mut worst: Option<(std::time::Duration, String)> = None;
    let mut compiled = |time: std::time::Duration, what: String| {
        if worst.as_ref().is_none_or(|(t, _)| time > *t) {
            worst = Some((time, what));
        }
    };
    for w in all
        .iter()
        .filter(|w| args.workloads.is_empty() || named(w.name))
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
    if options.wide && options.jit && (args.workloads.is_empty() || named(COMPILE)) {
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

/// The driver-overhead rows ([`bench::overhead`]): the executor alone, then every Vulkan device
/// the loader finds with tangle's driver added (`VK_ADD_DRIVER_FILES`, a manifest for the
/// library beside this executable), then tangle's driver against each other device. `No`
/// when a result is wrong or nothing could be measured.
fn driver_overhead(quick: bool) -> Exit {
    use bench::overhead;
    let shape = tangle_vulkan::raw::overhead::Shape {
        singles: if quick { 20 } else { 200 },
        batch: overhead::BATCH,
        rounds: 3,
        timeout: std::time::Duration::from_secs(600),
    };
    println!("{}", overhead::header(shape));
    let words = match overhead::spirv() {
        Ok(w) => w,
        Err(why) => {
            println!("  not measured: {why}");
            return Exit::No;
        }
    };
    // The executable's path; in a chroot without /proc (lavapipe 26's, tools/lavapipe-sid.sh),
    // the path it was started by.
    let exe = std::env::current_exe()
        .ok()
        .or_else(|| std::env::args_os().next().map(std::path::PathBuf::from));
    let library = exe.and_then(|exe| exe.parent().and_then(tangle_icd::manifest::find_library));
    let manifest =
        std::env::temp_dir().join(format!("tangle-bench-icd-{}.json", std::process::id()));
    let added =
        library.is_some_and(|l| std::fs::write(&manifest, tangle_icd::manifest::json(&l)).is_ok());
    // Set before the baseline starts the executor's worker threads, so that no other thread
    // runs while the environment changes; the user's own value, if any, comes back after.
    let before = std::env::var_os(ADD_DRIVER_FILES);
    if added {
        let mut files = std::ffi::OsString::from(&manifest);
        if let Some(theirs) = &before {
            files.push(":");
            files.push(theirs);
        }
        std::env::set_var(ADD_DRIVER_FILES, files);
    } else {
        println!(
            "  tangle's driver: not measured (no {} beside this executable)",
            tangle_icd::manifest::LIBRARY
        );
    }
    let base = overhead::baseline(&words, shape);
    println!("{}", overhead::row(&base, &base, shape));
    let rows = overhead::devices(&words, shape);
    if added {
        match before {
            Some(theirs) => std::env::set_var(ADD_DRIVER_FILES, theirs),
            None => std::env::remove_var(ADD_DRIVER_FILES),
        }
        let _ = std::fs::remove_file(&manifest);
    }
    let rows = match rows {
        Ok(rows) => rows,
        Err(why) => {
            println!("  Vulkan: not measured ({why})");
            return if base.result.is_ok() {
                Exit::Success
            } else {
                Exit::No
            };
        }
    };
    for r in &rows {
        println!("{}", overhead::row(r, &base, shape));
    }
    // tangle's driver against every other device.
    let ours = rows.iter().find(|r| r.tangle);
    for other in rows.iter().filter(|r| !r.tangle) {
        if let Some(line) = ours.and_then(|t| overhead::versus(t, other)) {
            println!("{line}");
        }
    }
    let wrong = base.result.is_err()
        || rows
            .iter()
            .any(|r| r.result.as_ref().is_err_and(|e| e.contains("differs")));
    if wrong {
        Exit::No
    } else {
        Exit::Success
    }
}
