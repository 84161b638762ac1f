//! Progress display for long work: one bar per phase with positions/s, the
//! disk bytes/s of pipeline phases, and ETA.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Shows (or, when hidden, silently counts) the work of a build.
pub struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    visible: bool,
    /// Bytes moved to and from disk in the current phase.
    phase_bytes: AtomicU64,
    /// When the phase started and when its rate was last shown.
    clock: Mutex<(Instant, Instant)>,
}

impl Progress {
    /// A display on stderr when `visible` (and stderr is a terminal), else nothing.
    pub fn new(visible: bool) -> Progress {
        let now = Instant::now();
        Progress {
            bar: Mutex::new(None),
            visible,
            phase_bytes: AtomicU64::new(0),
            clock: Mutex::new((now, now)),
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
                "{prefix:>22} [{bar:30}] {human_pos}/{human_len} {rate} {msg} ETA {eta}",
            )
            .map(|style| {
                style.with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}/s", indicatif::HumanCount(state.per_sec() as u64));
                    },
                )
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(name.to_string());
        *guard = Some(bar);
        self.phase_bytes.store(0, Ordering::Relaxed);
        let now = Instant::now();
        *self.clock.lock().unwrap_or_else(|e| e.into_inner()) = (now, now);
    }

    /// Counts `n` bytes read from or written to disk in the current phase;
    /// the bar shows their rate.
    pub fn bytes(&self, n: u64) {
        if !self.visible {
            return;
        }
        let total = self.phase_bytes.fetch_add(n, Ordering::Relaxed) + n;
        let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        let (started, shown) = *clock;
        if shown.elapsed() < Duration::from_millis(250) {
            return;
        }
        clock.1 = Instant::now();
        drop(clock);
        let rate = total as f64 / started.elapsed().as_secs_f64().max(1e-3);
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            bar.set_message(format!("{}/s disk", indicatif::HumanBytes(rate as u64)));
        }
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
