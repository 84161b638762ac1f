//! manifest.json: what a tablebase directory holds (FORMAT.md, "The manifest").

use super::atomic::write_atomic;
use super::{FormatError, ValueEncoding, FORMAT_VERSION};
use crate::game::{GameInfo, GameKind, Params};
use crate::value::{PartitionId, Value};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The manifest's file name inside a tablebase directory.
pub const MANIFEST_NAME: &str = "manifest.json";

/// The file name of partition `partition_name`'s tablebase file.
pub fn file_name(partition_name: &str) -> String {
    format!("{partition_name}.tbf")
}

/// manifest.json. Field order here is the order in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The tablebase file format version (also in every file's header).
    pub format_version: u32,
    /// The tbforge release that wrote it.
    pub tbforge_version: String,
    /// The game's registry name.
    pub game: String,
    /// Two-player or puzzle.
    pub kind: GameKind,
    /// Canonical parameters (every key, defaults filled in).
    pub params: Params,
    /// [`GameInfo::param_hash`] as 16 lowercase hex digits.
    pub param_hash: String,
    /// How the files store values.
    pub encoding: ValueEncoding,
    /// Sums over all files.
    pub totals: Totals,
    /// Positions first reached at each depth from the start (depth 0: the
    /// start itself), where a forward search ran.
    pub layers: Option<Vec<u64>>,
    /// One entry per file, in solving order.
    pub files: Vec<FileEntry>,
}

/// The manifest's totals: sums over its files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    /// Indices over all files, legal or not.
    pub positions: u64,
    /// Won for the side to move (puzzles: goal reachable).
    pub wins: u64,
    /// Drawn (puzzles: goal unreachable).
    pub draws: u64,
    /// Lost for the side to move (puzzles: always 0).
    pub losses: u64,
    /// Illegal or unused indices.
    pub illegal: u64,
    /// Positions reachable from the start, where a forward search ran.
    pub reachable: Option<u64>,
    /// The longest distance of any decided position; `None` if none is decided.
    pub max_distance: Option<u32>,
}

/// One tablebase file as the manifest records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// File name inside the directory.
    pub name: String,
    /// The partition it holds.
    pub partition: PartitionId,
    /// The game's name for that partition.
    pub partition_name: String,
    /// Indices in the partition (legal or not).
    pub positions: u64,
    /// Won for the side to move (puzzles: goal reachable).
    pub wins: u64,
    /// Drawn (puzzles: goal unreachable).
    pub draws: u64,
    /// Lost for the side to move (puzzles: 0).
    pub losses: u64,
    /// Illegal or unused indices.
    pub illegal: u64,
    /// Positions of this partition reachable from the start, where known.
    pub reachable: Option<u64>,
    /// The longest distance of a win (puzzles: the longest distance to the goal).
    pub longest_win: Option<u32>,
    /// The longest distance of any decided position (win or loss).
    pub max_distance: Option<u32>,
    /// The file's length in bytes.
    pub bytes: u64,
    /// crc32 (IEEE) of the whole file, 8 lowercase hex digits.
    #[serde(with = "hex32")]
    pub crc32: u32,
}

/// Counts of one partition's values: what build and verify both compute, with
/// this one function, so that they agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Counts {
    /// Indices.
    pub positions: u64,
    /// Wins (puzzles: goal reachable).
    pub wins: u64,
    /// Draws (puzzles: goal unreachable).
    pub draws: u64,
    /// Losses (puzzles: 0).
    pub losses: u64,
    /// Illegal indices.
    pub illegal: u64,
    /// Longest win distance (puzzles: longest distance to the goal); only
    /// known from one-byte values.
    pub longest_win: Option<u32>,
    /// Longest distance of any decided position.
    pub max_distance: Option<u32>,
}

impl Counts {
    /// Counts a slice of [`Value`] bytes of a game of `kind`.
    pub fn of_values(kind: GameKind, values: &[u8]) -> Counts {
        let mut hist = [0u64; 256];
        for &b in values {
            hist[b as usize] += 1;
        }
        let mut c = Counts {
            positions: values.len() as u64,
            illegal: hist[0],
            draws: hist[1],
            ..Counts::default()
        };
        for (byte, &n) in hist.iter().enumerate().skip(2).filter(|(_, &n)| n > 0) {
            let d = Value::from_byte(byte as u8)
                .distance()
                .expect("bytes >= 2 are decided");
            let win = kind == GameKind::Puzzle || d % 2 == 1;
            if win {
                c.wins += n;
                c.longest_win = Some(c.longest_win.map_or(d, |l| l.max(d)));
            } else {
                c.losses += n;
            }
            c.max_distance = Some(c.max_distance.map_or(d, |l| l.max(d)));
        }
        c
    }

    /// Adds a further slice of [`Value`] bytes of a game of `kind`: counting
    /// a partition piece by piece gives [`Counts::of_values`] of the whole.
    pub fn add_values(&mut self, kind: GameKind, values: &[u8]) {
        let c = Counts::of_values(kind, values);
        self.positions += c.positions;
        self.wins += c.wins;
        self.draws += c.draws;
        self.losses += c.losses;
        self.illegal += c.illegal;
        self.longest_win = max_opt(self.longest_win, c.longest_win);
        self.max_distance = max_opt(self.max_distance, c.max_distance);
    }

    /// Adds one decoded block's codes into these counts (`encoding` says how
    /// to read them); used by verify.
    pub(crate) fn add_codes(&mut self, kind: GameKind, encoding: ValueEncoding, codes: &[u8]) {
        match encoding {
            ValueEncoding::Byte => self.add_values(kind, codes),
            ValueEncoding::Wdl2 => {
                for &code in codes {
                    self.positions += 1;
                    match code {
                        0 => self.illegal += 1,
                        1 => self.draws += 1,
                        2 => self.wins += 1,
                        _ => self.losses += 1,
                    }
                }
            }
        }
    }
}

fn max_opt(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl FileEntry {
    /// The entry for a file written from `values` (one [`Value`] byte per
    /// index) of partition `partition` named `partition_name`.
    pub fn new(
        kind: GameKind,
        partition: PartitionId,
        partition_name: &str,
        values: &[u8],
        reachable: Option<u64>,
        summary: super::FileSummary,
    ) -> FileEntry {
        FileEntry::from_counts(
            partition,
            partition_name,
            &Counts::of_values(kind, values),
            reachable,
            summary,
        )
    }

    /// The entry for a file whose values were counted into `c` (for values
    /// streamed from disk, counted piece by piece with [`Counts::add_values`]).
    pub fn from_counts(
        partition: PartitionId,
        partition_name: &str,
        c: &Counts,
        reachable: Option<u64>,
        summary: super::FileSummary,
    ) -> FileEntry {
        FileEntry {
            name: file_name(partition_name),
            partition,
            partition_name: partition_name.to_string(),
            positions: c.positions,
            wins: c.wins,
            draws: c.draws,
            losses: c.losses,
            illegal: c.illegal,
            reachable,
            longest_win: c.longest_win,
            max_distance: c.max_distance,
            bytes: summary.bytes,
            crc32: summary.crc32,
        }
    }
}

impl Totals {
    /// Sums `files`; `reachable` is known only if every file knows it. Sums
    /// beyond `u64` (only a damaged manifest has them) stop at `u64::MAX`;
    /// [`Totals::checked_sum`] tells them apart.
    pub fn sum(files: &[FileEntry]) -> Totals {
        Totals::sum_with(files, |a, b| Some(a.saturating_add(b)))
            .expect("saturating sums always exist")
    }

    /// [`Totals::sum`], or `None` if a sum overflows `u64`.
    pub fn checked_sum(files: &[FileEntry]) -> Option<Totals> {
        Totals::sum_with(files, u64::checked_add)
    }

    fn sum_with<A: Copy + Fn(u64, u64) -> Option<u64>>(
        files: &[FileEntry],
        add: A,
    ) -> Option<Totals> {
        let mut t = Totals {
            reachable: Some(0),
            ..Totals::default()
        };
        for f in files {
            t.positions = add(t.positions, f.positions)?;
            t.wins = add(t.wins, f.wins)?;
            t.draws = add(t.draws, f.draws)?;
            t.losses = add(t.losses, f.losses)?;
            t.illegal = add(t.illegal, f.illegal)?;
            t.reachable = match (t.reachable, f.reachable) {
                (Some(a), Some(b)) => Some(add(a, b)?),
                _ => None,
            };
            t.max_distance = max_opt(t.max_distance, f.max_distance);
        }
        if files.is_empty() {
            t.reachable = None;
        }
        Some(t)
    }
}

impl Manifest {
    /// A manifest for `game` with these files (in solving order) and, where a
    /// forward search ran, its layers; totals are summed from the files.
    pub fn new(
        game: &GameInfo,
        encoding: ValueEncoding,
        files: Vec<FileEntry>,
        layers: Option<Vec<u64>>,
    ) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            tbforge_version: env!("CARGO_PKG_VERSION").to_string(),
            game: game.id.to_string(),
            kind: game.kind,
            params: game.params.clone(),
            param_hash: format!("{:016x}", game.param_hash()),
            totals: Totals::sum(&files),
            encoding,
            layers,
            files,
        }
    }

    /// The parameter hash as a number, if the text is 16 hex digits.
    pub fn param_hash_value(&self) -> Option<u64> {
        (self.param_hash.len() == 16)
            .then(|| u64::from_str_radix(&self.param_hash, 16).ok())
            .flatten()
    }

    /// `game:key=value,...`, as [`GameInfo::canonical`] writes it.
    pub fn canonical_game(&self) -> String {
        crate::game::canonical_text(&self.game, &self.params)
    }

    /// The entry of `partition`, if the manifest lists one.
    pub fn file_of(&self, partition: PartitionId) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.partition == partition)
    }

    /// The manifest as written: pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a manifest always serialises");
        s.push('\n');
        s
    }
}

/// Writes `manifest` to `dir/manifest.json` atomically.
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), FormatError> {
    write_atomic(&dir.join(MANIFEST_NAME), &[manifest.to_json().as_bytes()])
}

/// Reads and parses `dir/manifest.json`, refusing another format version.
pub fn read_manifest(dir: &Path) -> Result<Manifest, FormatError> {
    let path = dir.join(MANIFEST_NAME);
    // Bytes, not a String: a damaged manifest that is not UTF-8 is a bad
    // manifest (serde_json says where), not an I/O error.
    let text = std::fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            FormatError::Manifest {
                path: path.clone(),
                message: "not found: is this a tablebase directory? (`tbforge build` writes one)"
                    .into(),
            }
        } else {
            FormatError::io("reading", &path, e)
        }
    })?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| FormatError::Manifest {
        path: path.clone(),
        message: format!("not a valid manifest: {e}"),
    })?;
    if manifest.format_version != FORMAT_VERSION {
        return Err(FormatError::Version {
            file: path.display().to_string(),
            found: manifest.format_version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(manifest)
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:08x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 8 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(serde::de::Error::custom(format!(
                "crc32 `{s}` is not 8 hex digits"
            )));
        }
        u32::from_str_radix(&s, 16)
            .map_err(|_| serde::de::Error::custom(format!("crc32 `{s}` is not 8 hex digits")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_added_piece_by_piece_equal_the_whole() {
        let values: Vec<u8> = (0..10_000u32).map(|i| ((i * 7919) % 61) as u8).collect();
        for kind in [GameKind::TwoPlayer, GameKind::Puzzle] {
            let whole = Counts::of_values(kind, &values);
            assert!(whole.wins > 0 && whole.draws > 0 && whole.illegal > 0);
            for piece in [1, 7, 4096, 10_000] {
                let mut c = Counts::default();
                for p in values.chunks(piece) {
                    c.add_values(kind, p);
                }
                assert_eq!(c, whole, "{kind:?}, pieces of {piece}");
            }
        }
    }
}
