//! The time limit of dispatches that the calling thread works on ([`super::workers`]): one timer
//! thread for the whole process, started by the first such dispatch, sets a dispatch's
//! `timed_out` and `stop` flags when its deadline passes, as the monitor does for a dispatch
//! whose calling thread only watches. The workers see the flags where they see any stop (each
//! terminator and barrier, each loop header of native code), so a dispatch stops at its limit
//! on every tier whichever thread runs it.
//!
//! Nothing waits for the timer: arming and disarming a deadline take its lock once each, and
//! the timer is woken only for a deadline earlier than the one it sleeps towards. A program's
//! dispatches come with deadlines later than the one before (each its start plus the same
//! limit), so the timer wakes about once a limit, not once a dispatch: handing a dispatch to a
//! waiting thread and back cost two context switches, more than a small dispatch's own work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

/// One armed deadline and the flags it sets.
struct Entry {
    id: u64,
    deadline: Instant,
    stop: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
}

impl Entry {
    /// What the monitor does at a deadline: `timed_out` first, so that a worker seeing `stop`
    /// names the time limit.
    fn fire(&self) {
        self.timed_out.store(true, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The armed deadlines and what the timer sleeps towards.
struct State {
    entries: Vec<Entry>,
    next_id: u64,
    /// The deadline the timer sleeps until (possibly one disarmed since); `None` while it
    /// waits for an entry.
    wakes_at: Option<Instant>,
}

/// The timer's state and its wake-up.
struct Timer {
    state: Mutex<State>,
    wake: Condvar,
}

static TIMER: Timer = Timer {
    state: Mutex::new(State {
        entries: Vec::new(),
        next_id: 0,
        wakes_at: None,
    }),
    wake: Condvar::new(),
};

/// The state, whatever a panic elsewhere left (it holds no invariant a panic breaks).
fn state() -> MutexGuard<'static, State> {
    TIMER.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the timer thread runs (started at the first call).
fn started() -> bool {
    static STARTED: OnceLock<bool> = OnceLock::new();
    *STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("tangle-watchdog".into())
            .spawn(tick)
            .is_ok()
    })
}

/// The timer thread: fires the deadlines passed, then sleeps until the next one (or an entry).
fn tick() {
    let mut st = state();
    loop {
        let now = Instant::now();
        st.entries.retain(|e| {
            let due = e.deadline <= now;
            if due {
                e.fire();
            }
            !due
        });
        st.wakes_at = st.entries.iter().map(|e| e.deadline).min();
        st = match st.wakes_at {
            None => TIMER.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
            Some(d) => {
                let wait = d.saturating_duration_since(now);
                match TIMER.wake.wait_timeout(st, wait) {
                    Ok((g, _)) => g,
                    Err(e) => e.into_inner().0,
                }
            }
        };
    }
}

/// A deadline armed by [`arm`]; disarmed when dropped.
#[derive(Debug)]
pub(crate) struct Armed(Option<u64>);

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(id) = self.0 {
            state().entries.retain(|e| e.id != id);
        }
    }
}

/// Sets `timed_out` and then `stop` once `deadline` passes, until the [`Armed`] returned is
/// dropped; at once when it has passed already. `None` when the timer thread cannot start (the
/// caller then watches the clock itself).
pub(crate) fn arm(
    deadline: Instant,
    stop: &Arc<AtomicBool>,
    timed_out: &Arc<AtomicBool>,
) -> Option<Armed> {
    if !started() {
        return None;
    }
    let entry = Entry {
        id: 0,
        deadline,
        stop: Arc::clone(stop),
        timed_out: Arc::clone(timed_out),
    };
    if deadline <= Instant::now() {
        entry.fire();
        return Some(Armed(None));
    }
    let mut st = state();
    let id = st.next_id;
    st.next_id = id.wrapping_add(1);
    st.entries.push(Entry { id, ..entry });
    if st.wakes_at.is_none_or(|w| deadline < w) {
        TIMER.wake.notify_one();
    }
    Some(Armed(Some(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn flags() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
        (Arc::default(), Arc::default())
    }

    #[test]
    fn a_deadline_sets_both_flags_once_it_passes_and_a_disarmed_one_never() {
        let (stop, timed_out) = flags();
        let (kept, kept_out) = flags();
        let start = Instant::now();
        let armed = arm(start + Duration::from_millis(50), &stop, &timed_out).expect("timer");
        // Disarmed before its deadline: never fires.
        drop(arm(start + Duration::from_millis(100), &kept, &kept_out).expect("timer"));
        while !stop.load(Ordering::Relaxed) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the timer never fired"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(start.elapsed() >= Duration::from_millis(50));
        assert!(timed_out.load(Ordering::Relaxed));
        drop(armed);
        std::thread::sleep(
            (start + Duration::from_millis(200)).saturating_duration_since(Instant::now()),
        );
        assert!(!kept.load(Ordering::Relaxed) && !kept_out.load(Ordering::Relaxed));
    }

    #[test]
    fn a_later_deadline_then_an_earlier_one_each_fire_at_their_time() {
        let (late, late_out) = flags();
        let (early, early_out) = flags();
        let start = Instant::now();
        let _a = arm(start + Duration::from_secs(3600), &late, &late_out).expect("timer");
        // Earlier than the one the timer sleeps towards: it must be woken for it.
        let _b = arm(start + Duration::from_millis(30), &early, &early_out).expect("timer");
        while !early.load(Ordering::Relaxed) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the timer slept past it"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!late.load(Ordering::Relaxed));
        // A deadline already passed fires at once.
        let (now, now_out) = flags();
        let _c = arm(start, &now, &now_out).expect("timer");
        assert!(now.load(Ordering::Relaxed) && now_out.load(Ordering::Relaxed));
    }
}
