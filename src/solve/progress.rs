//! Progress display for long work: one bar per phase with positions/s and ETA.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;

/// Shows (or, when hidden, silently counts) the work of a build.
pub struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    visible: bool,
}

impl Progress {
    /// A display on stderr when `visible` (and stderr is a terminal), else nothing.
    pub fn new(visible: bool) -> Progress {
        Progress {
            bar: Mutex::new(None),
            visible,
        }
    }

    /// No display at all.
    pub fn hidden() -> Progress {
        Progress::new(false)
    }

    /// Starts a phase of `total` units (positions) named `name`.
    pub fn phase(&self, name: &str, total: u64) {
        let mut guard = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = guard.take() {
            old.finish_and_clear();
        }
        if !self.visible {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>22} [{bar:30}] {human_pos}/{human_len} {per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(name.to_string());
        *guard = Some(bar);
    }

    /// Adds `n` finished units to the current phase.
    pub fn inc(&self, n: u64) {
        if !self.visible {
            return;
        }
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            bar.inc(n);
        }
    }

    /// Prints a line above the bar (or to stderr when hidden but visible is off: nothing).
    pub fn println(&self, line: &str) {
        if !self.visible {
            return;
        }
        match self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Clears the display.
    pub fn finish(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}
