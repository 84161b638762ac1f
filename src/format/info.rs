//! `tbforge info`: the manifest, summarised.

use super::{count, read_manifest, FileEntry, FormatError, Totals, ValueEncoding};
use crate::game::{GameKind, Params};
use serde::Serialize;
use std::path::Path;

/// What `tbforge info` reports; `--json` prints it as is.
#[derive(Clone, Debug, Serialize)]
pub struct InfoReport {
    /// The directory.
    pub dir: String,
    /// The game's registry name.
    pub game: String,
    /// Two-player or puzzle.
    pub kind: GameKind,
    /// Canonical parameters.
    pub params: Params,
    /// The parameter hash (16 hex digits).
    pub param_hash: String,
    /// File format version.
    pub format_version: u32,
    /// The tbforge release that wrote it.
    pub tbforge_version: String,
    /// How values are stored.
    pub encoding: ValueEncoding,
    /// Bytes of all files together.
    pub bytes: u64,
    /// Compressed bits per index (all indices, legal or not).
    pub bits_per_position: f64,
    /// The manifest's totals.
    #[serde(flatten)]
    pub totals: Totals,
    /// Positions first reached at each depth from the start (BFS databases).
    pub layers: Option<Vec<u64>>,
    /// The manifest's files.
    pub files: Vec<FileEntry>,
}

/// The manifest of the tablebase in `dir`, summarised.
pub fn info(dir: &Path) -> Result<InfoReport, FormatError> {
    let m = read_manifest(dir)?;
    // Saturating: a damaged manifest's sizes may add up beyond u64 (verify says so).
    let bytes = m.files.iter().fold(0u64, |a, f| a.saturating_add(f.bytes));
    let positions = m.totals.positions;
    Ok(InfoReport {
        dir: dir.display().to_string(),
        bits_per_position: if positions == 0 {
            0.0
        } else {
            bytes as f64 * 8.0 / positions as f64
        },
        bytes,
        game: m.game,
        kind: m.kind,
        params: m.params,
        param_hash: m.param_hash,
        format_version: m.format_version,
        tbforge_version: m.tbforge_version,
        encoding: m.encoding,
        totals: m.totals,
        layers: m.layers,
        files: m.files,
    })
}

/// The human rendering `tbforge info` prints.
pub fn render_info_text(r: &InfoReport) -> String {
    let t = &r.totals;
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let (win, draw, loss) = match r.kind {
        GameKind::TwoPlayer => ("wins", "draws", "losses"),
        GameKind::Puzzle => ("solvable", "unsolvable", "-"),
    };
    let mut s = format!(
        "{} {} ({:?}, {} encoding, format {}, tbforge {})\n",
        r.game,
        if params.is_empty() {
            "(no parameters)".to_string()
        } else {
            params.join(",")
        },
        r.kind,
        r.encoding,
        r.format_version,
        r.tbforge_version
    );
    s += &format!("directory   {}\n", r.dir);
    // Saturating: info shows a manifest as it is; verify checks its sums.
    let legal = t.wins.saturating_add(t.draws).saturating_add(t.losses);
    s += &format!(
        "positions   {} legal in {} ({} illegal)\n",
        legal,
        count(t.positions, "index", "indices"),
        t.illegal
    );
    s += &format!("{win:<11} {}\n{draw:<11} {}\n", t.wins, t.draws);
    if r.kind == GameKind::TwoPlayer {
        s += &format!("{loss:<11} {}\n", t.losses);
    }
    if let Some(reach) = t.reachable {
        s += &format!("reachable   {reach}\n");
    }
    if let Some(d) = t.max_distance {
        s += &format!("longest     {d}\n");
    }
    if let Some(layers) = &r.layers {
        let deepest = layers.len().saturating_sub(1);
        s += &format!(
            "layers      {} ({})\n",
            count(layers.len() as u64, "layer", "layers"),
            match layers.len() {
                0 => "none".to_string(),
                1 => "depth 0".to_string(),
                _ => format!("depths 0..{deepest}"),
            }
        );
    }
    s += &format!(
        "size        {} in {}, {:.3} bits per index\n",
        count(r.bytes, "byte", "bytes"),
        count(r.files.len() as u64, "file", "files"),
        r.bits_per_position
    );
    s += &format!(
        "\n{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
        "file", "indices", win, draw, loss, "illegal", "longest", "bytes"
    );
    for f in &r.files {
        s += &format!(
            "{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
            f.name,
            f.positions,
            f.wins,
            f.draws,
            f.losses,
            f.illegal,
            f.longest_win.map_or("-".to_string(), |d| d.to_string()),
            f.bytes
        );
    }
    s
}
