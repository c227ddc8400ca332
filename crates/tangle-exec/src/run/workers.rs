//! The dispatch's worker threads: workers take unit numbers (workgroups on the reference path,
//! batches on the wide path) from one shared counter. The calling thread is one of them, and
//! the process's timer ([`super::watchdog`]) stops the dispatch at its deadline; where a
//! progress hook wants ticks (or no timer can start), the calling thread watches the clock and
//! reports progress instead, as the monitor.
//!
//! A shared counter (rather than a parallel iterator over every workgroup) is what bounds a
//! stopped dispatch: once `stop` is set no worker takes another workgroup, however many remain,
//! and a running workgroup leaves at its next terminator or barrier. Time is checked by the
//! timer or the monitor alone, so workers pay one relaxed load per terminator. A one-worker
//! dispatch thus runs on the calling thread alone: no thread is woken, and none waits.

use super::Shared;
use crate::device::Progress;
use crate::error::{ExecError, Trap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
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
    let flags = Flags {
        stop: &s.stop,
        timed_out: &s.timed_out,
        // One deadline for every path the dispatch takes (`None`: no limit).
        deadline: s.deadline,
        progress: s.options.progress.as_ref(),
    };
    let (spawned, done, first_error) = run_units(&flags, total, threads, new);
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    s.worker_nanos.fetch_add(nanos, Ordering::Relaxed);
    if spawned == 0 {
        return Err(ExecError::Limit("cannot start a worker thread".to_string()));
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    if done < total {
        // Stopped with no error: only the time limit does that.
        return Err(Trap::TimeLimit {
            limit_ms: s.options.time_limit.as_millis(),
            at: None,
        }
        .into());
    }
    Ok(())
}

/// What stops a dispatch's workers, and who is told of their progress.
struct Flags<'a> {
    stop: &'a Arc<AtomicBool>,
    timed_out: &'a Arc<AtomicBool>,
    deadline: Option<Instant>,
    progress: Option<&'a Progress>,
}

/// [`run_all`]'s work: the workers that ran (the calling thread counted when it worked), the
/// units done, and the first error by unit number.
fn run_units<U: Unit>(
    f: &Flags<'_>,
    total: u64,
    threads: usize,
    new: impl Fn() -> U + Sync,
) -> (usize, u64, Option<(u64, ExecError)>) {
    let threads = threads.max(1);
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let first_error: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    // The calling thread works unless it must watch: a progress hook is called from it every
    // tick, and without the timer the clock is its to check. Disarmed at the end of the scope.
    let armed = match (f.progress, f.deadline) {
        (Some(_), _) => None,
        (None, None) => Some(None),
        (None, Some(d)) => super::watchdog::arm(d, f.stop, f.timed_out).map(Some),
    };
    let caller = usize::from(armed.is_some());
    let run = || work(f.stop, total, &next, &done, &first_error, new());
    let spawned = match pool().filter(|p| threads - caller <= p.current_num_threads()) {
        // One worker, the calling thread: nothing to hand over or wait for.
        _ if threads == caller => {
            run();
            1
        }
        Some(pool) => pool.in_place_scope(|scope| {
            // Workers never send; the channel disconnects when the last one ends.
            let (tx, rx) = mpsc::channel::<()>();
            for _ in caller..threads {
                let tx = tx.clone();
                let run = &run;
                scope.spawn(move |_| {
                    run();
                    drop(tx);
                });
            }
            drop(tx);
            match armed {
                Some(_) => run(),
                None => monitor(f, &rx, &done, total),
            }
            threads
        }),
        None => std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<()>();
            let mut spawned = 0usize;
            for w in caller..threads {
                let tx = tx.clone();
                let run = &run;
                let worker = std::thread::Builder::new()
                    .name(format!("tangle-worker-{w}"))
                    .spawn_scoped(scope, move || {
                        run();
                        drop(tx);
                    });
                match worker {
                    Ok(_) => spawned += 1,
                    // The workers already started take over the rest.
                    Err(_) => break,
                }
            }
            drop(tx);
            match armed {
                Some(_) => {
                    run();
                    spawned += 1;
                }
                None if spawned > 0 => monitor(f, &rx, &done, total),
                None => {}
            }
            spawned
        }),
    };
    drop(armed);
    let first_error = first_error.into_inner().unwrap_or_else(|e| e.into_inner());
    (spawned, done.load(Ordering::Relaxed), first_error)
}

/// One worker: takes unit numbers until they run out or the dispatch stops.
fn work<U: Unit>(
    stop: &AtomicBool,
    total: u64,
    next: &AtomicU64,
    done: &AtomicU64,
    first_error: &Mutex<Option<(u64, ExecError)>>,
    mut wg: U,
) {
    while !stop.load(Ordering::Relaxed) {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= total {
            break;
        }
        match wg.run(i) {
            // A workgroup that saw `stop` may have left early: it is not counted as done.
            Ok(()) if !stop.load(Ordering::Relaxed) => {
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(()) => {}
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
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
fn monitor(f: &Flags<'_>, rx: &mpsc::Receiver<()>, done: &AtomicU64, total: u64) {
    let report = |n: u64| {
        if let Some(p) = f.progress {
            (p.0)(n, total);
        }
    };
    report(0);
    loop {
        let now = Instant::now();
        let wait = f
            .deadline
            .map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        match rx.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // Every worker has ended (they never send).
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if f.deadline.is_some_and(|d| Instant::now() >= d) {
            f.timed_out.store(true, Ordering::Relaxed);
            f.stop.store(true, Ordering::Relaxed);
        }
        // `done` only grows, so the counts reported never decrease.
        report(done.load(Ordering::Relaxed));
    }
    report(done.load(Ordering::Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit that records the thread it ran on, or spins until the dispatch stops.
    struct Probe<'a> {
        ran_on: &'a Mutex<Vec<std::thread::ThreadId>>,
        stop: &'a AtomicBool,
        spin: bool,
    }

    impl Unit for Probe<'_> {
        fn run(&mut self, _: u64) -> Result<(), ExecError> {
            self.ran_on
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(std::thread::current().id());
            while self.spin && !self.stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            Ok(())
        }
        fn flush(&mut self, _: u64) {}
    }

    fn flags<'a>(
        stop: &'a Arc<AtomicBool>,
        timed_out: &'a Arc<AtomicBool>,
        deadline: Option<Instant>,
    ) -> Flags<'a> {
        Flags {
            stop,
            timed_out,
            deadline,
            progress: None,
        }
    }

    #[test]
    fn a_one_worker_dispatch_runs_on_the_calling_thread() {
        let (stop, timed_out) = (Arc::default(), Arc::default());
        let ran_on = Mutex::new(Vec::new());
        let deadline = Some(Instant::now() + Duration::from_secs(60));
        let f = flags(&stop, &timed_out, deadline);
        let (spawned, done, error) = run_units(&f, 3, 1, || Probe {
            ran_on: &ran_on,
            stop: &stop,
            spin: false,
        });
        assert_eq!((spawned, done), (1, 3));
        assert!(error.is_none());
        let me = std::thread::current().id();
        assert_eq!(ran_on.into_inner().expect("log"), vec![me; 3]);
        assert!(!timed_out.load(Ordering::Relaxed));
    }

    #[test]
    fn a_runaway_unit_on_the_calling_thread_stops_at_the_deadline() {
        for threads in [1, 2] {
            let (stop, timed_out) = (Arc::default(), Arc::default());
            let ran_on = Mutex::new(Vec::new());
            let start = Instant::now();
            let limit = Duration::from_millis(100);
            let f = flags(&stop, &timed_out, Some(start + limit));
            let (_, done, error) = run_units(&f, 4, threads, || Probe {
                ran_on: &ran_on,
                stop: &stop,
                spin: true,
            });
            let took = start.elapsed();
            assert!(took >= limit && took < Duration::from_secs(10), "{took:?}");
            assert!(timed_out.load(Ordering::Relaxed) && stop.load(Ordering::Relaxed));
            assert!(error.is_none());
            // Stopped units are not counted as done, and no unit starts after the stop.
            assert_eq!(done, 0);
            let ran = ran_on.into_inner().expect("log");
            assert!(ran.contains(&std::thread::current().id()), "{threads}");
            assert!(ran.len() <= threads, "{ran:?}");
        }
    }
}
