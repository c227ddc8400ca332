//! `tangle run`'s progress bars on standard error: one for the workgroups of the running
//! dispatch, one for the iterations of an outermost Amber `REPEAT`. Each appears only once its
//! dispatch or `REPEAT` has run for [`SHOW_AFTER`], and only when standard error is a terminal
//! and the report is not JSON; otherwise nothing is drawn. The executor and the runner only
//! call hooks ([`tangle_exec::device::Progress`], [`tangle_amber::run_observed`]): the bars
//! live here.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tangle_exec::device::Progress;

/// How long a dispatch or a `REPEAT` runs before its bar appears: short ones draw nothing.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// The bars of one `tangle run`.
pub struct Bars {
    multi: MultiProgress,
    repeat: Mutex<Lazy>,
    dispatch: Mutex<Lazy>,
}

/// A bar that exists only once its task has run for [`SHOW_AFTER`].
struct Lazy {
    what: &'static str,
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Lazy {
    fn new(what: &'static str) -> Self {
        Lazy {
            what,
            started: Instant::now(),
            bar: None,
        }
    }

    /// Shows `done` of `total`; a `done` of 0 starts a new task (and clears the last bar).
    fn update(&mut self, multi: &MultiProgress, done: u64, total: u64) {
        if done == 0 {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
            self.started = Instant::now();
        }
        if self.bar.is_none() && done < total && self.started.elapsed() >= SHOW_AFTER {
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            let bar = multi.add(ProgressBar::new(total).with_style(style));
            bar.set_prefix(self.what);
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
            if done >= total {
                bar.finish_and_clear();
                self.bar = None;
            }
        }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Bars {
    /// Bars on standard error when it is a terminal and `json` is off; `None` otherwise.
    pub fn for_stderr(json: bool) -> Option<Arc<Bars>> {
        if json || !std::io::stderr().is_terminal() {
            return None;
        }
        Some(Arc::new(Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            repeat: Mutex::new(Lazy::new("REPEAT")),
            dispatch: Mutex::new(Lazy::new("workgroups")),
        }))
    }

    /// The executor's progress hook, drawing the dispatch bar.
    pub fn dispatch_hook(self: &Arc<Self>) -> Progress {
        let bars = Arc::clone(self);
        Progress::new(move |done, total| {
            let mut lazy = bars.dispatch.lock().unwrap_or_else(|e| e.into_inner());
            lazy.update(&bars.multi, done, total);
        })
    }

    /// The runner's `REPEAT` hook.
    pub fn repeat(&self, done: u64, total: u64) {
        let mut lazy = self.repeat.lock().unwrap_or_else(|e| e.into_inner());
        lazy.update(&self.multi, done, total);
    }

    /// Removes every bar (before the report is printed).
    pub fn clear(&self) {
        for lazy in [&self.dispatch, &self.repeat] {
            lazy.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}
