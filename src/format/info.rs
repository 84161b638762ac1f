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
    let indices = m.totals.index_size;
    Ok(InfoReport {
        dir: dir.display().to_string(),
        bits_per_position: if indices == 0 {
            0.0
        } else {
            bytes as f64 * 8.0 / indices as f64
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
    // A symmetry-class index: each class stands for several positions, and
    // both are shown; otherwise classes are positions and the text is as it
    // always was.
    let symmetric = t.classes != t.positions;
    if symmetric {
        s += &format!(
            "positions   {} legal in {} ({} illegal)\n",
            t.positions,
            count(t.classes, "class", "classes"),
            t.illegal
        );
        s += &format!("index       {}\n", count(t.index_size, "index", "indices"));
    } else {
        s += &format!(
            "positions   {} legal in {} ({} illegal)\n",
            t.positions,
            count(t.index_size, "index", "indices"),
            t.illegal
        );
    }
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
    let longest = |l: Option<u32>| l.map_or("-".to_string(), |d| d.to_string());
    if symmetric {
        let row = |name: &str, n: [u64; 8], l: Option<u32>| {
            format!(
                "{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
                name,
                n[0],
                n[1],
                n[2],
                n[3],
                n[4],
                n[5],
                n[6],
                longest(l),
                n[7]
            )
        };
        s += &format!(
            "\n{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
            "file",
            "indices",
            "classes",
            "positions",
            win,
            draw,
            loss,
            "illegal",
            "longest",
            "bytes"
        );
        for f in &r.files {
            s += &row(
                &f.name,
                [
                    f.index_size,
                    f.classes,
                    f.positions,
                    f.wins,
                    f.draws,
                    f.losses,
                    f.illegal,
                    f.bytes,
                ],
                f.longest_win,
            );
        }
        s += &row(
            "total",
            [
                t.index_size,
                t.classes,
                t.positions,
                t.wins,
                t.draws,
                t.losses,
                t.illegal,
                r.bytes,
            ],
            r.files.iter().filter_map(|f| f.longest_win).max(),
        );
        return s;
    }
    s += &format!(
        "\n{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
        "file", "indices", win, draw, loss, "illegal", "longest", "bytes"
    );
    for f in &r.files {
        s += &format!(
            "{:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12}\n",
            f.name,
            f.index_size,
            f.wins,
            f.draws,
            f.losses,
            f.illegal,
            longest(f.longest_win),
            f.bytes
        );
    }
    s
}
