//! Where a build's time went, partition by partition: the `partitions` list
//! of `build-log.json`, read back and tabulated by `tbforge bench stages`.
//!
//! Timings live in the build log only: the manifest's bytes must not depend
//! on the run.

use super::build::BUILD_LOG;
use crate::value::PartitionId;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Who solved a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    /// The game's own partition kernels (a GPU's, or their CPU twins).
    Kernels,
    /// The generic in-memory retrograde solver.
    Generic,
    /// The generic external-memory pipeline.
    External,
    /// Not solved: copied from an earlier build (`--from`).
    Copied,
}

impl std::fmt::Display for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Solver::Kernels => "kernels",
            Solver::Generic => "generic",
            Solver::External => "external",
            Solver::Copied => "copied",
        })
    }
}

/// One partition solved in a build run, and what each stage took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionStage {
    /// The partition.
    pub partition: PartitionId,
    /// The game's name for it.
    pub name: String,
    /// Its sizes.
    #[serde(flatten)]
    pub sizes: StageSizes,
    /// Who solved it.
    pub solver: Solver,
    /// What solving and writing it took.
    #[serde(flatten)]
    pub work: StageWork,
    /// The process's peak resident memory (Linux `VmHWM`, bytes) when its
    /// file was written: the first partition past `--mem-limit` is the one
    /// that raised the peak there. `None` where the system does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_after: Option<u64>,
}

/// The sizes of a partition, or their sums over a build's partitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageSizes {
    /// Indices, legal or not.
    pub index_size: u64,
    /// Legal indices.
    pub classes: u64,
    /// Legal positions (indices weighted by what they stand for).
    pub positions: u64,
}

/// What solving and writing a partition took, or the sums over a build's
/// partitions (`passes` and `device_seconds`: over those that know them;
/// `None` if none does).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageWork {
    /// Retrograde passes (or plies stepped), where the solver counts them.
    pub passes: Option<u64>,
    /// Seconds a device was busy with it, where one was.
    pub device_seconds: Option<f64>,
    /// Seconds the forward search spent expanding it, where the search went
    /// partition by partition (layered games) in this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_seconds: Option<f64>,
    /// Seconds from the start of its solve to its values.
    pub solve_seconds: f64,
    /// Seconds counting its values for the manifest.
    pub count_seconds: f64,
    /// Seconds compressing, writing and syncing its file.
    pub write_seconds: f64,
    /// Its file's length.
    pub bytes: u64,
    /// What the build's team exchanged while solving it (a build of several
    /// members: MPI ranks, or GPUs): collectives, bytes each way, seconds in
    /// them (waiting for the others included), as the writing member saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub communication: Option<crate::dist::CommReading>,
    /// The member of a team that solved it whole while others solved other
    /// partitions beside it (side by side: `solve_seconds` and
    /// `communication` of the round go to its first partition). `None`:
    /// every member took part, or one process built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved_by: Option<usize>,
    /// The pipeline's passes over it (external partitions), in order: the
    /// streamed path's timeline. A resumed partition lists the passes of
    /// the run that finished it. Listed in build-log.json; the report a
    /// build returns (`--json`) counts them in `passes`.
    #[serde(
        default,
        skip_serializing_if = "crate::pipeline::PassTimeline::is_unlisted"
    )]
    pub pipeline_passes: crate::pipeline::PassTimeline,
}

impl PartitionStage {
    /// Its file is written: takes the sizes and the file length from its
    /// manifest entry, and the process's peak resident memory so far.
    pub fn fill_from(&mut self, entry: &crate::format::FileEntry) {
        self.sizes = StageSizes {
            index_size: entry.index_size,
            classes: entry.classes,
            positions: entry.positions,
        };
        self.work.bytes = entry.bytes;
        self.peak_rss_after = crate::pipeline::peak_rss();
    }

    /// A partition about to be solved by `solver`: no time taken yet.
    pub fn new(partition: PartitionId, name: &str, solver: Solver) -> PartitionStage {
        PartitionStage {
            partition,
            name: name.to_string(),
            sizes: StageSizes::default(),
            solver,
            work: StageWork::default(),
            peak_rss_after: None,
        }
    }
}

impl StageSizes {
    fn add(&mut self, o: &StageSizes) {
        self.index_size = self.index_size.saturating_add(o.index_size);
        self.classes = self.classes.saturating_add(o.classes);
        self.positions = self.positions.saturating_add(o.positions);
    }
}

impl StageWork {
    fn add(&mut self, o: &StageWork) {
        if let Some(n) = o.passes {
            self.passes = Some(self.passes.unwrap_or(0) + n);
        }
        if let Some(s) = o.device_seconds {
            self.device_seconds = Some(self.device_seconds.unwrap_or(0.0) + s);
        }
        if let Some(s) = o.forward_seconds {
            self.forward_seconds = Some(self.forward_seconds.unwrap_or(0.0) + s);
        }
        self.solve_seconds += o.solve_seconds;
        self.count_seconds += o.count_seconds;
        self.write_seconds += o.write_seconds;
        self.bytes = self.bytes.saturating_add(o.bytes);
    }
}

/// The stages of one build, as `tbforge bench stages` reports them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildStages {
    /// `game:params`.
    pub game: String,
    /// One entry per partition solved in the run, in solving order.
    pub partitions: Vec<PartitionStage>,
    /// Sums over the partitions.
    pub totals: StageTotals,
}

/// Sums over a build's partitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageTotals {
    /// Summed sizes.
    #[serde(flatten)]
    pub sizes: StageSizes,
    /// Summed work.
    #[serde(flatten)]
    pub work: StageWork,
}

impl BuildStages {
    /// The stages of these partitions, with their sums.
    pub fn new(game: String, partitions: Vec<PartitionStage>) -> BuildStages {
        let mut t = StageTotals::default();
        for p in &partitions {
            t.sizes.add(&p.sizes);
            t.work.add(&p.work);
        }
        BuildStages {
            game,
            partitions,
            totals: t,
        }
    }
}

/// The stages recorded in `dir`'s build log.
pub fn read_stages(dir: &Path) -> Result<BuildStages> {
    #[derive(Deserialize)]
    struct Log {
        game: String,
        partitions: Option<Vec<PartitionStage>>,
    }
    let path = dir.join(BUILD_LOG);
    let bytes = std::fs::read(&path).map_err(|e| Error::io("reading build log", &path, e))?;
    let log: Log = serde_json::from_slice(&bytes).map_err(|e| {
        Error::NotAvailable(format!(
            "{} is not a build log: {e}; `tbforge build` writes one",
            path.display()
        ))
    })?;
    let partitions = log.partitions.ok_or_else(|| {
        Error::NotAvailable(format!(
            "{} has no per-partition stages (an older tbforge wrote it): build again with this one",
            path.display()
        ))
    })?;
    Ok(BuildStages::new(log.game, partitions))
}

/// The table `tbforge bench stages` prints: one row per partition, then the
/// totals: forward search, device, solve, count and write seconds (counting
/// and writing run on the writer's threads while the next partition is
/// solved).
pub fn render_stages_text(s: &BuildStages) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let row = |name: &str, z: &StageSizes, w: &StageWork| {
        format!(
            "{:<16} {:>14} {:>14} {:>16} {:>7} {:>8} {:>9} {:>9} {:>8} {:>8} {:>12}\n",
            name,
            z.index_size,
            z.classes,
            z.positions,
            opt(w.passes.map(|p| p.to_string())),
            opt(w.forward_seconds.map(|d| format!("{d:.3}"))),
            opt(w.device_seconds.map(|d| format!("{d:.3}"))),
            format!("{:.3}", w.solve_seconds),
            format!("{:.3}", w.count_seconds),
            format!("{:.3}", w.write_seconds),
            w.bytes
        )
    };
    let mut out = format!(
        "{}: {} solved in this run\n",
        s.game,
        crate::format::count(s.partitions.len() as u64, "partition", "partitions")
    );
    out += &format!(
        "{:<16} {:>14} {:>14} {:>16} {:>7} {:>8} {:>9} {:>9} {:>8} {:>8} {:>12}\n",
        "partition",
        "index size",
        "classes",
        "positions",
        "passes",
        "fwd s",
        "device s",
        "solve s",
        "count s",
        "write s",
        "bytes"
    );
    for p in &s.partitions {
        out += &row(&p.name, &p.sizes, &p.work);
    }
    out + &row("total", &s.totals.sizes, &s.totals.work)
}
