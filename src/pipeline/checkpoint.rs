//! Checkpoints of an external solve: which pass a partition has reached, and
//! durable progress inside a pass, so that an interrupted build resumes
//! exactly.

use super::external::{lock, Solver};
use super::runs::{sync_runs, RunIndex};
use crate::game::Game;
use crate::Result;
use std::time::Instant;

/// Where an interrupted solve of a partition stands: `next_pass` 0 is the first scan.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PassCheckpoint {
    /// The pass to run next, or under way when `within` is set (0: the first scan).
    pub next_pass: u32,
    /// The longest distance among values the first scan saw.
    pub max_seen: u32,
    /// How far pass `next_pass` got, if it had started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<WithinPass>,
}

/// Durable progress inside a pass: every chunk (or bucket) before `next` of
/// `step` is done, and the run files hold exactly the recorded bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WithinPass {
    /// The step under way.
    pub step: Step,
    /// The next chunk (expand, combine) or bucket (answer, counted in order) to do.
    pub next: u64,
    pub(super) requests: RunIndex,
    pub(super) answers: RunIndex,
    /// Positions the combine step decided so far.
    pub(super) decided: u64,
    /// The first scan's longest distance so far.
    pub(super) max_seen: u32,
}

/// The steps of a pass, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// Turning pending positions into requests.
    Expand,
    /// Answering requests from the successors' values.
    Answer,
    /// Applying answers and deciding.
    Combine,
}

impl WithinPass {
    pub(super) fn at(step: Step) -> WithinPass {
        WithinPass {
            step,
            next: 0,
            requests: RunIndex::default(),
            answers: RunIndex::default(),
            decided: 0,
            max_seen: 0,
        }
    }
}

/// Records progress inside a pass.
pub(super) type SaveWithin<'s> = dyn FnMut(WithinPass) -> Result<()> + 's;

impl<G: Game> Solver<'_, G> {
    /// Whether progress inside a pass should be made durable now.
    pub(super) fn checkpoint_due(&self) -> bool {
        lock(&self.last_saved).elapsed() >= self.plan.checkpoint_every
    }

    /// Makes the partition's files durable and records `within`.
    fn save(&self, within: WithinPass, save: &mut SaveWithin<'_>) -> Result<()> {
        self.sync()?;
        // Finished steps' runs the checkpoint names (a running step's writer
        // made its own durable); syncing an already clean file costs little.
        if within.step != Step::Expand {
            sync_runs(self.disks, "req", &within.requests)?;
        }
        if within.step == Step::Combine {
            sync_runs(self.disks, "ans", &within.answers)?;
        }
        save(within)?;
        *lock(&self.last_saved) = Instant::now();
        Ok(())
    }

    /// Records, when a checkpoint is due, that a step's chunks or buckets
    /// before `next` of `total` are done; none is recorded after the last,
    /// where the step ends. `within` is built only then: it may make a
    /// writer's runs durable, which waits for the disk.
    pub(super) fn save_when_due(
        &self,
        next: u64,
        total: u64,
        save: &mut SaveWithin<'_>,
        within: impl FnOnce() -> Result<WithinPass>,
    ) -> Result<()> {
        if next < total && self.checkpoint_due() {
            self.save(within()?, save)?;
        }
        Ok(())
    }
}
