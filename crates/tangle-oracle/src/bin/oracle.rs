//! The long oracle run: `cargo run -p tangle-oracle --release --bin oracle -- [COUNT] [FIRST_SEED]`
//! runs COUNT random programs (default 100,000; seeds FIRST_SEED.., configurations from
//! `case_config`: depths 2..=6, subgroup sizes 4..=128, partial last subgroups) on every core,
//! prints the first mismatches in full and the counts, and fails if any program differs.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tangle_oracle::{case_config, run_case};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let first: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let next = AtomicU64::new(first);
    let failed = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed >= first + count {
                    break;
                }
                let (depth, sg, wg) = case_config(seed);
                if let Err(m) = run_case(seed, depth, sg, wg) {
                    let mut f = failed.lock().unwrap_or_else(|e| e.into_inner());
                    if f.len() < 5 {
                        eprintln!("{m}");
                    }
                    f.push(seed);
                }
            });
        }
    });
    let mut failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    failed.sort_unstable();
    println!(
        "{count} programs, {} passed, {} failed",
        count - failed.len() as u64,
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failing seeds: {:?}", &failed[..failed.len().min(100)]);
        ExitCode::FAILURE
    }
}
