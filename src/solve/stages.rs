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
}

impl std::fmt::Display for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Solver::Kernels => "kernels",
            Solver::Generic => "generic",
            Solver::External => "external",
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
    /// Its indices, legal or not.
    pub index_size: u64,
    /// Its legal indices.
    pub classes: u64,
    /// Its legal positions (indices weighted by what they stand for).
    pub positions: u64,
    /// Who solved it.
    pub solver: Solver,
    /// Retrograde passes (or plies stepped), where the solver counts them.
    pub passes: Option<u32>,
    /// Seconds a device was busy with it, where one was.
    pub device_seconds: Option<f64>,
    /// Seconds from the start of its solve to its values.
    pub solve_seconds: f64,
    /// Seconds counting its values for the manifest.
    pub count_seconds: f64,
    /// Seconds compressing, writing and syncing its file.
    pub write_seconds: f64,
    /// Its file's length.
    pub bytes: u64,
}

impl PartitionStage {
    /// Takes the sizes and the file length from the partition's manifest entry.
    pub fn fill_from(&mut self, entry: &crate::format::FileEntry) {
        self.index_size = entry.index_size;
        self.classes = entry.classes;
        self.positions = entry.positions;
        self.bytes = entry.bytes;
    }

    /// A partition about to be solved by `solver`: no time taken yet.
    pub fn new(partition: PartitionId, name: &str, solver: Solver) -> PartitionStage {
        PartitionStage {
            partition,
            name: name.to_string(),
            index_size: 0,
            classes: 0,
            positions: 0,
            solver,
            passes: None,
            device_seconds: None,
            solve_seconds: 0.0,
            count_seconds: 0.0,
            write_seconds: 0.0,
            bytes: 0,
        }
    }
}

/// The stages of one build, as `tbforge bench stages` reports them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildStages {
    /// `game:params`.
    pub game: String,
    /// One entry per partition solved in the run, in solving order.
    pub partitions: Vec<PartitionStage>,
    /// Sums over the partitions (`passes` and `device_seconds`: over those
    /// that know them; `None` if none does).
    pub totals: StageTotals,
}

/// Sums over a build's partitions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageTotals {
    /// Indices.
    pub index_size: u64,
    /// Legal indices.
    pub classes: u64,
    /// Legal positions.
    pub positions: u64,
    /// Passes, where known.
    pub passes: Option<u64>,
    /// Device seconds, where known.
    pub device_seconds: Option<f64>,
    /// Solve seconds.
    pub solve_seconds: f64,
    /// Count seconds.
    pub count_seconds: f64,
    /// Write seconds.
    pub write_seconds: f64,
    /// File bytes.
    pub bytes: u64,
}

impl BuildStages {
    /// The stages of these partitions, with their sums.
    pub fn new(game: String, partitions: Vec<PartitionStage>) -> BuildStages {
        let mut t = StageTotals::default();
        for p in &partitions {
            t.index_size = t.index_size.saturating_add(p.index_size);
            t.classes = t.classes.saturating_add(p.classes);
            t.positions = t.positions.saturating_add(p.positions);
            if let Some(n) = p.passes {
                t.passes = Some(t.passes.unwrap_or(0) + u64::from(n));
            }
            if let Some(s) = p.device_seconds {
                t.device_seconds = Some(t.device_seconds.unwrap_or(0.0) + s);
            }
            t.solve_seconds += p.solve_seconds;
            t.count_seconds += p.count_seconds;
            t.write_seconds += p.write_seconds;
            t.bytes = t.bytes.saturating_add(p.bytes);
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
/// totals; "other s" is counting plus writing.
pub fn render_stages_text(s: &BuildStages) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let row = |name: &str,
               size: u64,
               classes: u64,
               positions: u64,
               passes: Option<u64>,
               device: Option<f64>,
               solve: f64,
               other: f64,
               bytes: u64| {
        format!(
            "{:<16} {:>14} {:>14} {:>16} {:>7} {:>9} {:>9} {:>8} {:>12}\n",
            name,
            size,
            classes,
            positions,
            opt(passes.map(|p| p.to_string())),
            opt(device.map(|d| format!("{d:.3}"))),
            format!("{solve:.3}"),
            format!("{other:.3}"),
            bytes
        )
    };
    let mut out = format!(
        "{}: {} solved in this run\n",
        s.game,
        crate::format::count(s.partitions.len() as u64, "partition", "partitions")
    );
    out += &format!(
        "{:<16} {:>14} {:>14} {:>16} {:>7} {:>9} {:>9} {:>8} {:>12}\n",
        "partition",
        "index size",
        "classes",
        "positions",
        "passes",
        "device s",
        "solve s",
        "other s",
        "bytes"
    );
    for p in &s.partitions {
        out += &row(
            &p.name,
            p.index_size,
            p.classes,
            p.positions,
            p.passes.map(u64::from),
            p.device_seconds,
            p.solve_seconds,
            p.count_seconds + p.write_seconds,
            p.bytes,
        );
    }
    let t = &s.totals;
    out += &row(
        "total",
        t.index_size,
        t.classes,
        t.positions,
        t.passes,
        t.device_seconds,
        t.solve_seconds,
        t.count_seconds + t.write_seconds,
        t.bytes,
    );
    out
}
