//! The dispatch's worker threads and their monitor: workers take unit numbers (workgroups on
//! the reference path, batches on the wide path) from one shared counter, and the calling
//! thread watches the clock and reports progress.
//!
//! A shared counter (rather than a parallel iterator over every workgroup) is what bounds a
//! stopped dispatch: once `stop` is set no worker takes another workgroup, however many remain,
//! and a running workgroup leaves at its next terminator or barrier. Time is checked by the
//! monitor alone, about ten times a second, so workers pay one relaxed load per terminator.

use super::Shared;
use crate::error::{ExecError, Trap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How often the monitor looks at the clock and reports progress.
const TICK: Duration = Duration::from_millis(100);

/// What a worker runs: units by number, then hands their results to the dispatch.
pub(crate) trait Unit {
    /// Runs unit `i`.
    fn run(&mut self, i: u64) -> Result<(), ExecError>;
    /// Hands unit `i`'s findings and counters to the dispatch.
    fn flush(&mut self, i: u64);
    /// When the worker has no unit left: what it kept across units (in its thread).
    fn finish(&mut self) {}
}

/// The machine's cores (`std::thread::available_parallelism`), the most workers a dispatch
/// gets, asked once: on Linux the answer reads the process's cgroup files, about a tenth of a
/// millisecond of serial work per dispatch when asked every time.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The worker threads every dispatch shares, one a core ([`cores`], the most a dispatch asks
/// for), started at the first dispatch: starting a dozen threads per dispatch took a fixed
/// fraction of a millisecond of serial work, a sixth of a 1 ms dispatch on 16 cores. `None` if
/// the pool cannot be made; a dispatch then starts threads of its own, as one asking for more
/// workers than the pool has does.
///
/// Only the calling thread waits on a dispatch's workers (it is never one of the pool's
/// threads: workers do not dispatch), so dispatches from several threads at once share the
/// pool without a deadlock.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores())
            .thread_name(|w| format!("tangle-worker-{w}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` on the worker pool ([`pool`]), so that its parallel iterators share the workers'
/// threads (the race screen after a dispatch): on rayon's global pool they would wake a second
/// set of threads, one a core, while the workers' threads still spin looking for work. On the
/// calling thread where there is no pool.
pub(crate) fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// Runs units `0..total` on `threads` workers (at least one), each with its own state from
/// `new`, returning the first error (by unit number) or the time limit.
pub(crate) fn run_all<U: Unit>(
    s: &Shared<'_>,
    total: u64,
    threads: usize,
    new: impl Fn() -> U + Sync,
) -> Result<(), ExecError> {
    let started = Instant::now();
    // One deadline for every path the dispatch takes (`None`: no limit).
    let deadline = s.deadline;
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let first_error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let spawned = match pool().filter(|p| threads <= p.current_num_threads()) {
        Some(pool) => pool.in_place_scope(|scope| {
            // Workers never send; the channel disconnects when the last one ends.
            let (tx, rx) = mpsc::channel::<()>();
            for _ in 0..threads.max(1) {
                let tx = tx.clone();
                let (next, done, first_error, new) = (&next, &done, &first_error, &new);
                scope.spawn(move |_| {
                    work(s, total, next, done, first_error, new());
                    drop(tx);
                });
            }
            drop(tx);
            monitor(s, &rx, deadline, &done, total);
            threads.max(1)
        }),
        None => std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<()>();
            let mut spawned = 0usize;
            for w in 0..threads.max(1) {
                let tx = tx.clone();
                let (next, done, first_error, new) = (&next, &done, &first_error, &new);
                let worker = std::thread::Builder::new()
                    .name(format!("tangle-worker-{w}"))
                    .spawn_scoped(scope, move || {
                        work(s, total, next, done, first_error, new());
                        drop(tx);
                    });
                match worker {
                    Ok(_) => spawned += 1,
                    // The workers already started take over the rest.
                    Err(_) => break,
                }
            }
            drop(tx);
            if spawned > 0 {
                monitor(s, &rx, deadline, &done, total);
            }
            spawned
        }),
    };
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    s.worker_nanos.fetch_add(nanos, Ordering::Relaxed);
    if spawned == 0 {
        return Err(ExecError::Limit("cannot start a worker thread".to_string()));
    }
    if let Some((_, e)) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    if done.load(Ordering::Relaxed) < total {
        // Stopped with no error: only the time limit does that.
        return Err(Trap::TimeLimit {
            limit_ms: s.options.time_limit.as_millis(),
            at: None,
        }
        .into());
    }
    Ok(())
}

/// One worker: takes unit numbers until they run out or the dispatch stops.
fn work<U: Unit>(
    s: &Shared<'_>,
    total: u64,
    next: &AtomicU64,
    done: &AtomicU64,
    first_error: &Mutex<Option<(u64, ExecError)>>,
    mut wg: U,
) {
    while !s.stop.load(Ordering::Relaxed) {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= total {
            break;
        }
        match wg.run(i) {
            // A workgroup that saw `stop` may have left early: it is not counted as done.
            Ok(()) if !s.stop.load(Ordering::Relaxed) => {
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(()) => {}
            Err(e) => {
                s.stop.store(true, Ordering::Relaxed);
                let mut fe = first_error.lock().unwrap_or_else(|e| e.into_inner());
                if fe.as_ref().is_none_or(|(j, _)| i < *j) {
                    *fe = Some((i, e));
                }
            }
        }
        wg.flush(i);
    }
    wg.finish();
}

/// Waits for the workers, stopping them at the deadline and reporting progress every tick.
fn monitor(
    s: &Shared<'_>,
    rx: &mpsc::Receiver<()>,
    deadline: Option<Instant>,
    done: &AtomicU64,
    total: u64,
) {
    let report = |n: u64| {
        if let Some(p) = &s.options.progress {
            (p.0)(n, total);
        }
    };
    report(0);
    loop {
        let now = Instant::now();
        let wait = deadline.map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        match rx.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // Every worker has ended (they never send).
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            s.timed_out.store(true, Ordering::Relaxed);
            s.stop.store(true, Ordering::Relaxed);
        }
        // `done` only grows, so the counts reported never decrease.
        report(done.load(Ordering::Relaxed));
    }
    report(done.load(Ordering::Relaxed));
}
