//! The statistics view's data: per partition the manifest's win/draw/loss
//! counts and a distance histogram (the manifest stores no histogram, so the
//! files are scanned once, on first request), and the build's timeline.

use crate::format::{FormatError, Manifest, ValueEncoding};
use crate::registry::{AnyGame, GameVisitor};
use crate::{Forward, Game, Outcome, PartitionId, Rank, Tablebase};
use serde::Serialize;
use std::path::Path;

/// The build log `tbforge build` writes beside the manifest.
const BUILD_LOG: &str = "build-log.json";

/// Indices a histogram scan reads at most, over all partitions of one
/// tablebase: about a second of decompression. Larger tablebases get
/// histograms for their first partitions in solving order only.
const SCAN_LIMIT: u64 = 1 << 27;

/// Per partition, and why some have no histogram.
#[derive(Debug, Serialize)]
pub(super) struct Histograms {
    /// Why histograms are missing where they are (`None`: none is).
    pub note: Option<String>,
    /// In solving order.
    pub partitions: Vec<PartitionStats>,
}

/// One partition's counts, weighted by the positions each index stands for
/// (as the manifest counts them).
#[derive(Debug, Serialize)]
pub(super) struct PartitionStats {
    pub partition: PartitionId,
    pub name: String,
    /// The forward search's depth, in layered games.
    pub depth: Option<u32>,
    /// The game's group of partitions, where it has them.
    pub group: Option<String>,
    pub index_size: u64,
    pub positions: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub illegal: u64,
    pub max_distance: Option<u32>,
    /// Positions won (puzzles: solvable) at distance d, for d = 0, 1, ...
    pub win_distances: Option<Vec<u64>>,
    /// Positions lost at distance d.
    pub loss_distances: Option<Vec<u64>>,
}

/// Scans `tb`'s files for the histograms of every partition (up to
/// [`SCAN_LIMIT`] indices in all).
pub(super) fn histograms(tb: &Tablebase, game: &AnyGame) -> Result<Histograms, FormatError> {
    struct Scan<'a> {
        tb: &'a Tablebase,
    }
    impl GameVisitor for Scan<'_> {
        type Output = Result<Histograms, FormatError>;
        fn visit<G: Game>(self, game: &G) -> Self::Output {
            let m: &Manifest = self.tb.manifest();
            let why_none = if self.tb.is_engine() {
                Some("engine files store don't-care values where a search resolves them: no histogram")
            } else if m.encoding != ValueEncoding::Byte {
                Some("this tablebase stores win/draw/loss only (no distances): no histogram")
            } else {
                None
            };
            let mut scanned = 0u64;
            let mut skipped = 0usize;
            let mut partitions = Vec::new();
            for f in &m.files {
                let p = f.partition;
                let mut row = PartitionStats {
                    partition: p,
                    name: f.partition_name.clone(),
                    depth: match game.forward(p) {
                        Forward::Layer(d) => Some(d),
                        _ => None,
                    },
                    group: game.partition_group(p),
                    index_size: f.index_size,
                    positions: f.positions,
                    wins: f.wins,
                    draws: f.draws,
                    losses: f.losses,
                    illegal: f.illegal,
                    max_distance: f.max_distance,
                    win_distances: None,
                    loss_distances: None,
                };
                if why_none.is_none() {
                    if scanned.saturating_add(f.index_size) > SCAN_LIMIT {
                        skipped += 1;
                    } else {
                        scanned += f.index_size;
                        let codes = self.tb.partition_codes(p)?;
                        let long = self.tb.long_distances(p)?;
                        let weights = game.weights(p);
                        let (mut win, mut loss) = (Vec::new(), Vec::new());
                        for (r, &code) in codes.iter().enumerate() {
                            let s = m.encoding.decode(m.kind, code);
                            let bins = match s.outcome {
                                Some(Outcome::Win) => &mut win,
                                Some(Outcome::Loss) => &mut loss,
                                _ => continue,
                            };
                            let d = long.get(Rank(r as u64)).or(s.distance).unwrap_or(0) as usize;
                            if bins.len() <= d {
                                bins.resize(d + 1, 0);
                            }
                            bins[d] += if weights.is_one() {
                                1
                            } else {
                                weights.at(Rank(r as u64))
                            };
                        }
                        row.win_distances = Some(win);
                        row.loss_distances = Some(loss);
                    }
                }
                partitions.push(row);
            }
            let note = why_none.map(str::to_string).or_else(|| {
                (skipped > 0).then(|| {
                    format!(
                        "{skipped} partitions past the first {SCAN_LIMIT} indices have no histogram (too large to scan on request)"
                    )
                })
            });
            Ok(Histograms { note, partitions })
        }
    }
    game.visit(Scan { tb })
}

/// The run and its partitions from `dir`'s build log, if it has a readable one.
pub(super) fn read_timeline(dir: &Path) -> Option<serde_json::Value> {
    let bytes = std::fs::read(dir.join(BUILD_LOG)).ok()?;
    let log: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let keep = [
        "game",
        "mode",
        "seconds",
        "threads",
        "accelerator",
        "forward_seconds",
        "forward_depth_seconds",
        "positions_per_second",
        "peak_rss",
        "resumed_partitions",
        "partitions",
    ];
    let obj = log.as_object()?;
    Some(serde_json::Value::Object(
        keep.iter()
            .filter_map(|k| obj.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect(),
    ))
}
