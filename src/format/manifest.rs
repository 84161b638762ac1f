//! manifest.json: what a tablebase directory holds (FORMAT.md, "The manifest").

use super::atomic::write_atomic;
use super::{FormatError, ValueEncoding, FORMAT_VERSION};
use crate::game::{GameInfo, GameKind, Params};
use crate::value::{PartitionId, Rank, Value, Weights};
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
    pub index_size: u64,
    /// Legal positions: each stored index weighted by the positions it stands
    /// for ([`Weights`]), so that a symmetry-class index reports the same
    /// totals as a plain one.
    pub positions: u64,
    /// Positions won for the side to move (puzzles: goal reachable).
    pub wins: u64,
    /// Positions drawn (puzzles: goal unreachable).
    pub draws: u64,
    /// Positions lost for the side to move (puzzles: always 0).
    pub losses: u64,
    /// Legal indices: one each, whatever they stand for.
    pub classes: u64,
    /// Legal indices won for the side to move.
    pub class_wins: u64,
    /// Legal indices drawn.
    pub class_draws: u64,
    /// Legal indices lost for the side to move.
    pub class_losses: u64,
    /// Illegal or unused indices.
    pub illegal: u64,
    /// Indices reachable from the start, where a forward search ran.
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
    pub index_size: u64,
    /// Legal positions, each index weighted by the positions it stands for.
    pub positions: u64,
    /// Positions won for the side to move (puzzles: goal reachable).
    pub wins: u64,
    /// Positions drawn (puzzles: goal unreachable).
    pub draws: u64,
    /// Positions lost for the side to move (puzzles: 0).
    pub losses: u64,
    /// Legal indices, one each.
    pub classes: u64,
    /// Legal indices won for the side to move.
    pub class_wins: u64,
    /// Legal indices drawn.
    pub class_draws: u64,
    /// Legal indices lost for the side to move.
    pub class_losses: u64,
    /// Illegal or unused indices.
    pub illegal: u64,
    /// Indices of this partition reachable from the start, where known.
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
/// this one type, so that they agree.
///
/// A partition is counted piece by piece (blocks, chunks), each piece with
/// the rank it starts at: that is where the partition's [`Weights`]
/// exceptions are found. Weighting costs `common` times the class counts
/// plus a correction over the exceptions inside the piece, never a look-up
/// per index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Counts {
    /// Indices.
    pub index_size: u64,
    /// Legal positions (weighted).
    pub positions: u64,
    /// Positions won (puzzles: goal reachable), weighted.
    pub wins: u64,
    /// Positions drawn (puzzles: goal unreachable), weighted.
    pub draws: u64,
    /// Positions lost (puzzles: 0), weighted.
    pub losses: u64,
    /// Legal indices.
    pub classes: u64,
    /// Won indices.
    pub class_wins: u64,
    /// Drawn indices.
    pub class_draws: u64,
    /// Lost indices.
    pub class_losses: u64,
    /// Illegal indices.
    pub illegal: u64,
    /// Longest win distance (puzzles: longest distance to the goal); only
    /// known from one-byte values.
    pub longest_win: Option<u32>,
    /// Longest distance of any decided position.
    pub max_distance: Option<u32>,
}

/// What a stored value counts as; the order is that of [`Counts::add_piece`]'s
/// arrays.
const ILLEGAL: usize = 0;
const WIN: usize = 1;
const DRAW: usize = 2;
const LOSS: usize = 3;

impl Counts {
    /// Counts a whole partition's [`Value`] bytes (rank 0 first) of a game of
    /// `kind` whose indices stand for `weights` positions.
    pub fn of_values(kind: GameKind, weights: &Weights, values: &[u8]) -> Counts {
        // Pieces of 16 M values on all cores where the build machinery is in:
        // a billion values counted on one core took a second.
        const PIECE: usize = 1 << 24;
        let count = |(i, piece): (usize, &[u8])| {
            let mut c = Counts::default();
            c.add_values(kind, weights, Rank((i * PIECE) as u64), piece);
            c
        };
        #[cfg(feature = "build")]
        let pieces: Vec<Counts> = {
            use rayon::prelude::*;
            values.par_chunks(PIECE).enumerate().map(count).collect()
        };
        #[cfg(not(feature = "build"))]
        let pieces: Vec<Counts> = values.chunks(PIECE).enumerate().map(count).collect();
        pieces.iter().fold(Counts::default(), |mut all, c| {
            all.absorb(c);
            all
        })
    }

    /// Adds the counts of another piece of the same partition.
    fn absorb(&mut self, c: &Counts) {
        self.index_size += c.index_size;
        self.positions = self.positions.saturating_add(c.positions);
        self.wins = self.wins.saturating_add(c.wins);
        self.draws = self.draws.saturating_add(c.draws);
        self.losses = self.losses.saturating_add(c.losses);
        self.classes += c.classes;
        self.class_wins += c.class_wins;
        self.class_draws += c.class_draws;
        self.class_losses += c.class_losses;
        self.illegal += c.illegal;
        self.longest_win = max_opt(self.longest_win, c.longest_win);
        self.max_distance = max_opt(self.max_distance, c.max_distance);
    }

    /// Adds a further piece of a partition's [`Value`] bytes, the first at
    /// rank `start`: counting a partition piece by piece gives
    /// [`Counts::of_values`] of the whole.
    pub fn add_values(&mut self, kind: GameKind, weights: &Weights, start: Rank, values: &[u8]) {
        let mut hist = [0u64; 256];
        for &b in values {
            hist[b as usize] += 1;
        }
        let mut class = [hist[0], 0, hist[1], 0];
        for (byte, &n) in hist.iter().enumerate().skip(2).filter(|(_, &n)| n > 0) {
            let d = Value::from_byte(byte as u8)
                .distance()
                .expect("bytes >= 2 are decided");
            if byte_category(kind, byte as u8) == WIN {
                class[WIN] += n;
                self.longest_win = max_opt(self.longest_win, Some(d));
            } else {
                class[LOSS] += n;
            }
            self.max_distance = max_opt(self.max_distance, Some(d));
        }
        self.add_piece(weights, start, class, |i| byte_category(kind, values[i]));
    }

    /// Adds one decoded block's codes, the first at rank `start`, into these
    /// counts (`encoding` says how to read them); used by verify.
    pub(crate) fn add_codes(
        &mut self,
        kind: GameKind,
        encoding: ValueEncoding,
        weights: &Weights,
        start: Rank,
        codes: &[u8],
    ) {
        match encoding {
            ValueEncoding::Byte => self.add_values(kind, weights, start, codes),
            ValueEncoding::Wdl2 => {
                let mut class = [0u64; 4];
                for &code in codes {
                    class[wdl_category(code)] += 1;
                }
                self.add_piece(weights, start, class, |i| wdl_category(codes[i]));
            }
        }
    }

    /// Adds a piece of `class` counts (by category) starting at rank `start`:
    /// each category weighs `common` per index, but for the exceptions inside
    /// the piece, which `category_at` (by place in the piece) sorts.
    /// Saturating: sums beyond `u64` only come from a game's absurd weights.
    fn add_piece(
        &mut self,
        weights: &Weights,
        start: Rank,
        class: [u64; 4],
        category_at: impl Fn(usize) -> usize,
    ) {
        let len: u64 = class.iter().sum();
        let end = start.0.saturating_add(len);
        let ex = &weights.exceptions;
        let from = ex.partition_point(|&(r, _)| r.0 < start.0);
        let to = ex.partition_point(|&(r, _)| r.0 < end);
        // Per category: exceptions inside the piece and the positions they stand for.
        let mut ex_count = [0u64; 4];
        let mut ex_weight = [0u64; 4];
        for &(r, w) in &ex[from..to] {
            let k = category_at((r.0 - start.0) as usize);
            ex_count[k] += 1;
            ex_weight[k] = ex_weight[k].saturating_add(w);
        }
        let weighted = |k: usize| {
            weights
                .common
                .saturating_mul(class[k].saturating_sub(ex_count[k]))
                .saturating_add(ex_weight[k])
        };
        self.index_size += len;
        self.illegal += class[ILLEGAL];
        self.class_wins += class[WIN];
        self.class_draws += class[DRAW];
        self.class_losses += class[LOSS];
        self.classes += class[WIN] + class[DRAW] + class[LOSS];
        let (w, d, l) = (weighted(WIN), weighted(DRAW), weighted(LOSS));
        self.wins = self.wins.saturating_add(w);
        self.draws = self.draws.saturating_add(d);
        self.losses = self.losses.saturating_add(l);
        self.positions = self
            .positions
            .saturating_add(w)
            .saturating_add(d)
            .saturating_add(l);
    }
}

/// What a [`Value`] byte counts as in a game of `kind`.
fn byte_category(kind: GameKind, byte: u8) -> usize {
    match byte {
        0 => ILLEGAL,
        1 => DRAW,
        b if kind == GameKind::Puzzle || (b - 2) % 2 == 1 => WIN,
        _ => LOSS,
    }
}

/// What a two-bit WDL code counts as.
fn wdl_category(code: u8) -> usize {
    match code & 3 {
        0 => ILLEGAL,
        1 => DRAW,
        2 => WIN,
        _ => LOSS,
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
    /// index) of partition `partition` named `partition_name`, whose indices
    /// stand for `weights` positions.
    pub fn new(
        kind: GameKind,
        partition: PartitionId,
        partition_name: &str,
        values: &[u8],
        weights: &Weights,
        reachable: Option<u64>,
        summary: super::FileSummary,
    ) -> FileEntry {
        FileEntry::from_counts(
            partition,
            partition_name,
            &Counts::of_values(kind, weights, values),
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
            index_size: c.index_size,
            positions: c.positions,
            wins: c.wins,
            draws: c.draws,
            losses: c.losses,
            classes: c.classes,
            class_wins: c.class_wins,
            class_draws: c.class_draws,
            class_losses: c.class_losses,
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
            t.index_size = add(t.index_size, f.index_size)?;
            t.positions = add(t.positions, f.positions)?;
            t.wins = add(t.wins, f.wins)?;
            t.draws = add(t.draws, f.draws)?;
            t.losses = add(t.losses, f.losses)?;
            t.classes = add(t.classes, f.classes)?;
            t.class_wins = add(t.class_wins, f.class_wins)?;
            t.class_draws = add(t.class_draws, f.class_draws)?;
            t.class_losses = add(t.class_losses, f.class_losses)?;
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
    // The version first: another version's fields would fail the parse
    // below with a message about a field instead of the version.
    #[derive(Deserialize)]
    struct VersionOnly {
        format_version: u32,
    }
    if let Ok(v) = serde_json::from_slice::<VersionOnly>(&text) {
        if v.format_version != FORMAT_VERSION {
            return Err(FormatError::Version {
                file: path.display().to_string(),
                found: v.format_version,
                supported: FORMAT_VERSION,
            });
        }
    }
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
        let weights = [
            Weights::one(),
            Weights {
                common: 8,
                exceptions: (0..10_000u64)
                    .step_by(37)
                    .map(|r| (Rank(r), 1 + r % 4))
                    .collect(),
            },
        ];
        for kind in [GameKind::TwoPlayer, GameKind::Puzzle] {
            for w in &weights {
                let whole = Counts::of_values(kind, w, &values);
                assert!(whole.wins > 0 && whole.draws > 0 && whole.illegal > 0);
                for piece in [1, 7, 4096, 10_000] {
                    let mut c = Counts::default();
                    for (i, p) in values.chunks(piece).enumerate() {
                        c.add_values(kind, w, Rank((i * piece) as u64), p);
                    }
                    assert_eq!(c, whole, "{kind:?}, pieces of {piece}");
                }
            }
        }
    }

    #[test]
    fn weighted_counts_are_the_weights_summed_per_outcome() {
        let values: Vec<u8> = (0..5_000u32).map(|i| ((i * 31) % 23) as u8).collect();
        let w = Weights {
            common: 8,
            exceptions: (3..5_000u64)
                .step_by(11)
                .map(|r| (Rank(r), r % 5))
                .collect(),
        };
        for kind in [GameKind::TwoPlayer, GameKind::Puzzle] {
            let c = Counts::of_values(kind, &w, &values);
            // The slow way: a look-up per index.
            let mut want = [0u64; 4];
            for (r, &b) in values.iter().enumerate() {
                want[byte_category(kind, b)] += w.at(Rank(r as u64));
            }
            assert_eq!(
                (c.wins, c.draws, c.losses),
                (want[WIN], want[DRAW], want[LOSS])
            );
            assert_eq!(c.positions, c.wins + c.draws + c.losses);
            assert_eq!(c.classes, c.class_wins + c.class_draws + c.class_losses);
            assert_eq!(c.index_size, c.classes + c.illegal);
            assert_eq!(c.index_size, values.len() as u64);
            let plain = Counts::of_values(kind, &Weights::one(), &values);
            assert_eq!(
                (plain.positions, plain.wins, plain.draws, plain.losses),
                (c.classes, c.class_wins, c.class_draws, c.class_losses)
            );
        }
    }
}
