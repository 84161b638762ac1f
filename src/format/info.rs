//! `tbforge info`: the manifest, summarised.

use super::{count, read_manifest, EngineInfo, FileEntry, FormatError, Totals, ValueEncoding};
use crate::game::{GameKind, Params};
use crate::value::PartitionId;
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
    /// Engine files (FORMAT.md, "Engine files"): what the manifest says of
    /// them; absent for a full tablebase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineInfo>,
    /// The manifest's totals.
    #[serde(flatten)]
    pub totals: Totals,
    /// Positions first reached at each depth from the start (BFS databases).
    pub layers: Option<Vec<u64>>,
    /// The manifest's files.
    pub files: Vec<FileEntry>,
    /// By depth from the start, for a game whose partitions are layered
    /// (each first reached at one depth; see [`InfoReport::set_depths`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depths: Option<Vec<DepthRow>>,
    /// The files' counts totalled by the game's groups of partitions
    /// (see [`InfoReport::set_groups`]), in order of first appearance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<GroupRow>>,
    /// Positions won by each player, whoever moves, by group (`tbforge
    /// info --players`, for a game that names its players).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub players: Option<PlayerTable>,
}

/// The positions each of a game's two players wins, whoever moves, read
/// from the files' values (the manifest counts outcomes for the side to move).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlayerTable {
    /// The players, as the game names them.
    pub names: [String; 2],
    /// By group of partitions (as in [`InfoReport::groups`]; by partition
    /// where the game has no groups), in order of first appearance.
    pub rows: Vec<PlayerRow>,
}

/// One group's positions by the player who wins them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlayerRow {
    /// The group.
    pub group: String,
    /// Legal positions (each index weighted by the positions it stands for).
    pub positions: u64,
    /// Of those, won by the first and by the second player.
    pub won: [u64; 2],
    /// Drawn (neither side can force a win).
    pub draws: u64,
    /// The longest distance of any decided position, in plies.
    pub longest: Option<u32>,
}

/// One group of partitions (a game's own grouping, such as pieces on the
/// board) and its files' counts, totalled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupRow {
    /// The game's label of the group.
    pub group: String,
    /// Files in it.
    pub partitions: u64,
    /// Their indices (each a class where the index is of symmetry classes).
    pub classes: u64,
    /// The positions those stand for.
    pub positions: u64,
    /// Of those, won for the side to move (puzzles: goal reachable).
    pub wins: u64,
    /// Drawn (puzzles: goal unreachable).
    pub draws: u64,
    /// Lost for the side to move.
    pub losses: u64,
}

/// One depth of a layered game: its partitions' stored (reached) positions
/// and their outcomes, and what the forward search first reached there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DepthRow {
    /// Plies from the start.
    pub depth: u32,
    /// Layered partitions whose positions all lie at this depth.
    pub partitions: u64,
    /// Positions first reached at this depth in any partition (the
    /// manifest's `layers`), where the forward search recorded them.
    pub reached: Option<u64>,
    /// Reached indices of this depth's partitions (their files store only
    /// those); `None` where no layered partition lies at this depth.
    pub classes: Option<u64>,
    /// The positions they stand for.
    pub positions: Option<u64>,
    /// Of those, won for the side to move (puzzles: goal reachable).
    pub wins: Option<u64>,
    /// Drawn (puzzles: goal unreachable).
    pub draws: Option<u64>,
    /// Lost for the side to move.
    pub losses: Option<u64>,
}

impl InfoReport {
    /// Adds the table by depth, given the depth of each layered partition
    /// (`layer_of`: `Some(d)` for a partition whose positions all lie at
    /// depth `d`, `None` for the others, which count only in `reached`).
    /// The caller knows the game; this module does not.
    pub fn set_depths(&mut self, layer_of: impl Fn(PartitionId) -> Option<u32>) {
        let of: Vec<Option<u32>> = self.files.iter().map(|f| layer_of(f.partition)).collect();
        let layers = self.layers.as_deref().unwrap_or(&[]);
        let rows = of
            .iter()
            .flatten()
            .map(|&d| d as usize + 1)
            .chain([layers.len()])
            .max()
            .unwrap_or(0);
        let depths = (0..rows)
            .map(|d| {
                let files: Vec<&FileEntry> = self
                    .files
                    .iter()
                    .zip(&of)
                    .filter(|(_, l)| **l == Some(d as u32))
                    .map(|(f, _)| f)
                    .collect();
                let sum = |get: fn(&FileEntry) -> u64| {
                    (!files.is_empty())
                        .then(|| files.iter().fold(0u64, |a, f| a.saturating_add(get(f))))
                };
                DepthRow {
                    depth: d as u32,
                    partitions: files.len() as u64,
                    reached: layers.get(d).copied(),
                    classes: sum(|f| f.classes),
                    positions: sum(|f| f.positions),
                    wins: sum(|f| f.wins),
                    draws: sum(|f| f.draws),
                    losses: sum(|f| f.losses),
                }
            })
            .collect();
        self.depths = Some(depths);
    }
}

impl InfoReport {
    /// Adds the table by group, given each partition's group (`None`: in
    /// none). The caller knows the game; this module does not.
    pub fn set_groups(&mut self, group_of: impl Fn(PartitionId) -> Option<String>) {
        let mut rows: Vec<GroupRow> = Vec::new();
        for f in &self.files {
            let Some(group) = group_of(f.partition) else {
                continue;
            };
            let i = match rows.iter().position(|r| r.group == group) {
                Some(i) => i,
                None => {
                    rows.push(GroupRow {
                        group,
                        partitions: 0,
                        classes: 0,
                        positions: 0,
                        wins: 0,
                        draws: 0,
                        losses: 0,
                    });
                    rows.len() - 1
                }
            };
            let r = &mut rows[i];
            r.partitions += 1;
            // Saturating: a damaged manifest's counts may add up beyond u64.
            r.classes = r.classes.saturating_add(f.classes);
            r.positions = r.positions.saturating_add(f.positions);
            r.wins = r.wins.saturating_add(f.wins);
            r.draws = r.draws.saturating_add(f.draws);
            r.losses = r.losses.saturating_add(f.losses);
        }
        if !rows.is_empty() {
            self.groups = Some(rows);
        }
    }
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
        engine: m.engine,
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
        depths: None,
        groups: None,
        players: None,
    })
}

/// The human rendering `tbforge info` prints.
pub fn render_info_text(r: &InfoReport) -> String {
    let mut s = render_files_text(r);
    if let Some(depths) = &r.depths {
        s += &render_depths_text(r.kind, depths);
    }
    if let Some(groups) = &r.groups {
        s += &render_groups_text(r.kind, groups);
    }
    if let Some(players) = &r.players {
        s += &render_players_text(players);
    }
    s
}

/// The table of positions won by each player.
fn render_players_text(t: &PlayerTable) -> String {
    let width = t
        .rows
        .iter()
        .map(|g| g.group.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let won = |i: usize| format!("won for {}", t.names[i]);
    let mut s = format!(
        "\n{:<width$} {:>16} {:>20} {:>20} {:>16} {:>8}\n",
        "group",
        "positions",
        won(0),
        won(1),
        "draws",
        "longest"
    );
    for r in &t.rows {
        let longest = r.longest.map_or("-".to_string(), |d| d.to_string());
        s += &format!(
            "{:<width$} {:>16} {:>20} {:>20} {:>16} {:>8}\n",
            r.group, r.positions, r.won[0], r.won[1], r.draws, longest
        );
    }
    s
}

/// The table by group of partitions.
fn render_groups_text(kind: GameKind, groups: &[GroupRow]) -> String {
    let (win, draw, loss) = match kind {
        GameKind::TwoPlayer => ("wins", "draws", "losses"),
        GameKind::Puzzle => ("solvable", "unsolvable", "-"),
    };
    let width = groups
        .iter()
        .map(|g| g.group.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut s = format!(
        "\n{:<width$} {:>10} {:>14} {:>14} {:>14} {:>14} {:>14}\n",
        "group", "partitions", "classes", "positions", win, draw, loss
    );
    for g in groups {
        s += &format!(
            "{:<width$} {:>10} {:>14} {:>14} {:>14} {:>14} {:>14}\n",
            g.group, g.partitions, g.classes, g.positions, g.wins, g.draws, g.losses
        );
    }
    s
}

/// The table by depth of a layered game.
fn render_depths_text(kind: GameKind, depths: &[DepthRow]) -> String {
    let (win, draw, loss) = match kind {
        GameKind::TwoPlayer => ("wins", "draws", "losses"),
        GameKind::Puzzle => ("solvable", "unsolvable", "-"),
    };
    let cell = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
    let mut s = format!(
        "\n{:<6} {:>10} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n",
        "depth", "partitions", "reached", "classes", "positions", win, draw, loss
    );
    for d in depths {
        s += &format!(
            "{:<6} {:>10} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n",
            d.depth,
            d.partitions,
            cell(d.reached),
            cell(d.classes),
            cell(d.positions),
            cell(d.wins),
            cell(d.draws),
            cell(d.losses)
        );
    }
    s
}

/// The summary and the table by file.
fn render_files_text(r: &InfoReport) -> String {
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
    } else if r.depths.is_some() {
        // Layered: only what the forward search reached was solved, so every
        // count below is over reachable positions, comparable with the
        // literature's counts.
        s += &format!(
            "positions   {} reachable, solved, in {} ({} not reached or illegal)\n",
            t.positions,
            count(t.index_size, "index", "indices"),
            t.illegal
        );
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
    if let Some(e) = &r.engine {
        s += &format!(
            "engine      engine files, {}: {} legal stored as don't-care (resolved by a one-ply search); the full files: {} ({:.1}x)\n",
            if e.distance {
                "win/draw/loss and distance"
            } else {
                "win/draw/loss only"
            },
            count(e.dont_care, "index", "indices"),
            count(e.source_bytes, "byte", "bytes"),
            e.source_bytes as f64 / r.bytes.max(1) as f64
        );
    }
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
