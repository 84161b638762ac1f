//! manifest.json: what a tablebase directory holds (FORMAT.md, "The manifest").

use super::atomic::write_atomic;
use super::{FormatError, ValueEncoding, ENGINE_FORMAT_VERSION, FORMAT_VERSION};
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
    /// Present in an engine directory (FORMAT.md, "Engine files"): its files
    /// hold don't-care values a one-ply search resolves. Absent (and not
    /// written) in a full tablebase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineInfo>,
    /// Sums over all files.
    pub totals: Totals,
    /// Positions first reached at each depth from the start (depth 0: the
    /// start itself), where a forward search ran.
    pub layers: Option<Vec<u64>>,
    /// One entry per file, in solving order.
    pub files: Vec<FileEntry>,
}

/// Counts by outcome: what the manifest's totals, each file entry and
/// [`Counts`] share, one type so that build, verify and the manifest agree
/// field for field. Its fields stand in the manifest in this order, inside
/// the totals and each file entry (`#[serde(flatten)]`); the three read them
/// as their own through `Deref`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Tally {
    /// Indices, legal or not.
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
}

impl Tally {
    /// The field names, in the order of [`Tally::fields`] and of the manifest.
    pub const NAMES: [&'static str; 10] = [
        "index_size",
        "positions",
        "wins",
        "draws",
        "losses",
        "classes",
        "class_wins",
        "class_draws",
        "class_losses",
        "illegal",
    ];

    /// The counts in the order of [`Tally::NAMES`].
    pub fn fields(&self) -> [u64; 10] {
        let mut copy = *self;
        copy.fields_mut().map(|f| *f)
    }

    /// The counts of indices, unweighted: classes, their wins, draws and
    /// losses, and illegal indices.
    pub fn class_counts(&self) -> [u64; 5] {
        [
            self.classes,
            self.class_wins,
            self.class_draws,
            self.class_losses,
            self.illegal,
        ]
    }

    /// The weighted counts: positions, wins, draws and losses.
    pub fn weighted_counts(&self) -> [u64; 4] {
        [self.positions, self.wins, self.draws, self.losses]
    }

    /// Adds `other` field by field with `add`; `None` (and `self` partly
    /// added) where `add` gives `None`.
    fn add_with(&mut self, other: &Tally, add: impl Fn(u64, u64) -> Option<u64>) -> Option<()> {
        for (mine, theirs) in self.fields_mut().into_iter().zip(other.fields()) {
            *mine = add(*mine, theirs)?;
        }
        Some(())
    }

    fn fields_mut(&mut self) -> [&mut u64; 10] {
        [
            &mut self.index_size,
            &mut self.positions,
            &mut self.wins,
            &mut self.draws,
            &mut self.losses,
            &mut self.classes,
            &mut self.class_wins,
            &mut self.class_draws,
            &mut self.class_losses,
            &mut self.illegal,
        ]
    }
}

/// What an engine directory's manifest says of its files (FORMAT.md,
/// "Engine files"). Its counts, totals and distances are those of the full
/// tablebase it was exported from: the true values, not the stored ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineInfo {
    /// Whether the files keep distances (`byte` encoding) or only
    /// win/draw/loss (`wdl2`).
    pub distance: bool,
    /// Legal indices whose stored value is don't-care (resolved by the
    /// prober's one-ply search), over all files.
    pub dont_care: u64,
    /// Bytes of the full tablebase's files it was exported from.
    pub source_bytes: u64,
}

/// `Deref` to the [`Tally`] a type holds: `entry.wins` reads as before the
/// counts moved into one shared type.
macro_rules! deref_to_tally {
    ($($t:ty),*) => {$(
        impl std::ops::Deref for $t {
            type Target = Tally;
            fn deref(&self) -> &Tally {
                &self.tally
            }
        }

        impl std::ops::DerefMut for $t {
            fn deref_mut(&mut self) -> &mut Tally {
                &mut self.tally
            }
        }
    )*};
}
deref_to_tally!(Totals, FileEntry, Counts);

/// The manifest's totals: sums over its files.
///
/// Unknown fields are refused (`deny_unknown_fields` on a struct with a
/// flattened part: serde refuses the keys that neither takes).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    /// Sums of the files' counts.
    #[serde(flatten)]
    pub tally: Tally,
    /// Indices reachable from the start, where a forward search ran.
    pub reachable: Option<u64>,
    /// The longest distance of any decided position; `None` if none is decided.
    pub max_distance: Option<u32>,
}

/// As the totals were printed (verify's message) before their counts moved
/// into [`Tally`]: one flat list of fields.
impl std::fmt::Debug for Totals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Totals");
        for (name, n) in Tally::NAMES.iter().zip(self.tally.fields()) {
            d.field(name, &n);
        }
        d.field("reachable", &self.reachable)
            .field("max_distance", &self.max_distance)
            .finish()
    }
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
    /// Its values counted (`index_size`: indices in the partition).
    #[serde(flatten)]
    pub tally: Tally,
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
    /// The counts by outcome (weighted positions saturate at `u64::MAX`).
    pub tally: Tally,
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

    /// Raises the longest distances to the partition's long distances (the
    /// positions whose saturated bytes were counted at the byte's distance).
    pub fn add_long(&mut self, long: &crate::value::LongDistances) {
        self.longest_win = max_opt(self.longest_win, long.longest_win());
        self.max_distance = max_opt(self.max_distance, long.max_distance());
    }

    /// Adds the counts of another piece of the same partition.
    pub fn absorb(&mut self, c: &Counts) {
        self.tally
            .add_with(&c.tally, |a, b| Some(a.saturating_add(b)))
            .expect("saturating sums always exist");
        self.longest_win = max_opt(self.longest_win, c.longest_win);
        self.max_distance = max_opt(self.max_distance, c.max_distance);
    }

    /// Adds a further piece of a partition's [`Value`] bytes, the first at
    /// rank `start`: counting a partition piece by piece gives
    /// [`Counts::of_values`] of the whole.
    pub fn add_values(&mut self, kind: GameKind, weights: &Weights, start: Rank, values: &[u8]) {
        let class = self.classify(kind, values, 0);
        self.add_piece(weights, start, class, |i| byte_category(kind, values[i]));
    }

    /// The counts by category of `values` and of `zeros` more 0 bytes,
    /// noting their distances.
    fn classify(&mut self, kind: GameKind, values: &[u8], zeros: u64) -> [u64; 4] {
        let mut hist = [0u64; 256];
        for &b in values {
            hist[b as usize] += 1;
        }
        let mut class = [hist[0] + zeros, 0, hist[1], 0];
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
        class
    }

    /// Adds a piece of `len` indices from rank `start` given only its nonzero
    /// value bytes (`values`, in order; the rest are 0): the same counts as
    /// [`Counts::add_values`] of the whole piece, where `weights` has no
    /// exception (the caller expands the piece otherwise).
    pub fn add_nonzero(&mut self, kind: GameKind, weights: &Weights, len: u64, values: &[u8]) {
        debug_assert!(weights.exceptions.is_empty());
        let class = self.classify(kind, values, len - values.len() as u64);
        self.add_piece(weights, Rank(0), class, |_| ILLEGAL);
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
            tally: c.tally,
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
            t.tally.add_with(&f.tally, add)?;
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
            engine: None,
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

    /// The parameter hash as a number, if the text is 16 lowercase hex digits.
    ///
    /// Uppercase digits are refused: the manifest is compared byte for byte with
    /// what the build writes, and a text that parses to the same number but is
    /// not those bytes is a changed manifest.
    pub fn param_hash_value(&self) -> Option<u64> {
        lowercase_hex(&self.param_hash, 16)
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
    let version_error = |found: u32| FormatError::Version {
        file: path.display().to_string(),
        found,
        supported: if found > FORMAT_VERSION {
            ENGINE_FORMAT_VERSION
        } else {
            FORMAT_VERSION
        },
    };
    let known = |v: u32| v == FORMAT_VERSION || v == ENGINE_FORMAT_VERSION;
    if let Ok(v) = serde_json::from_slice::<VersionOnly>(&text) {
        if !known(v.format_version) {
            return Err(version_error(v.format_version));
        }
    }
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| FormatError::Manifest {
        path: path.clone(),
        message: format!("not a valid manifest: {e}"),
    })?;
    if !known(manifest.format_version) {
        return Err(version_error(manifest.format_version));
    }
    // ENGINE_FORMAT_VERSION is the engine directories' version: the two agree.
    if (manifest.format_version == ENGINE_FORMAT_VERSION) != manifest.engine.is_some() {
        return Err(FormatError::Manifest {
            path: path.clone(),
            message: format!(
                "format version {} {} an `engine` field (engine directories are version {ENGINE_FORMAT_VERSION}, with one)",
                manifest.format_version,
                if manifest.engine.is_some() { "with" } else { "without" }
            ),
        });
    }
    Ok(manifest)
}

/// Whether `s` is exactly `digits` lowercase hex digits, the only spelling the
/// format writes (`from_str_radix` alone would also take uppercase and a sign).
fn lowercase_hex(s: &str, digits: usize) -> bool {
    s.len() == digits && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:08x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let s = String::deserialize(d)?;
        let refuse =
            || serde::de::Error::custom(format!("crc32 `{s}` is not 8 lowercase hex digits"));
        if !super::lowercase_hex(&s, 8) {
            return Err(refuse());
        }
        u32::from_str_radix(&s, 16).map_err(|_| refuse())
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

    /// `deny_unknown_fields` beside `#[serde(flatten)]`: a key that neither
    /// the entry nor its [`Tally`] takes is still refused, a known one read,
    /// and the fields keep the manifest's order.
    #[test]
    fn flattened_counts_read_back_and_refuse_unknown_fields() {
        let summary = crate::format::FileSummary {
            bytes: 9,
            crc32: 0xabcd,
        };
        let mut c = Counts::default();
        c.add_values(GameKind::TwoPlayer, &Weights::one(), Rank(0), &[0, 1, 2, 3]);
        let entry = FileEntry::from_counts(PartitionId(3), "p3", &c, Some(2), summary);
        let totals = Totals::sum(std::slice::from_ref(&entry));
        let text = serde_json::to_string(&entry).unwrap();
        let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
        let order: Vec<&str> = ["name", "partition", "partition_name"]
            .into_iter()
            .chain(Tally::NAMES)
            .chain(["reachable", "longest_win", "max_distance", "bytes", "crc32"])
            .collect();
        assert!(order.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(
            serde_json::from_value::<FileEntry>(json.clone()).unwrap(),
            entry
        );
        let t = serde_json::to_value(&totals).unwrap();
        assert_eq!(serde_json::from_value::<Totals>(t.clone()).unwrap(), totals);
        for mut v in [json, t] {
            v.as_object_mut().unwrap().insert("heaps".into(), 1.into());
            let e = serde_json::from_value::<FileEntry>(v.clone()).err();
            let f = serde_json::from_value::<Totals>(v).err();
            assert!(e.is_some() && f.is_some(), "{e:?} {f:?}");
        }
    }

    #[test]
    fn hex_fields_take_only_the_lowercase_spelling_the_format_writes() {
        let summary = crate::format::FileSummary {
            bytes: 9,
            crc32: 0x00ab_cdef,
        };
        let c = Counts::default();
        let entry = FileEntry::from_counts(PartitionId(0), "p0", &c, None, summary);
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(json["crc32"], "00abcdef");
        for spelling in ["00ABCDEF", "00abcdeF", "+0abcdef", "0abcdef", "000abcdef"] {
            let mut v = json.clone();
            v["crc32"] = spelling.into();
            let refused = serde_json::from_value::<FileEntry>(v).err();
            assert!(refused.is_some(), "crc32 {spelling} was taken");
        }
        assert!(lowercase_hex("da7bd31e2dbaaeb0", 16));
        for spelling in [
            "da7bd31e2dbaaEb0",
            "+a7bd31e2dbaaeb0",
            "da7bd31e2dbaaeb",
            "da7bd31e2dbaaeb0 ",
        ] {
            assert!(!lowercase_hex(spelling, 16), "{spelling}");
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
