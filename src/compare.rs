//! `tbforge compare`: two tablebases of one game, built with different
//! parameters (a symmetry-class index against a plain one, one encoding
//! against another), checked position by position.
//!
//! Every index of every partition of A is unranked in A's game; each legal
//! position is ranked in B's game and the two stored values are compared
//! (the value byte; the WDL code where either side stores only that). The
//! manifests' weighted totals, which count positions and not indices, are
//! compared too.
//!
//! Why whole partitions and not probes: A can hold a billion positions, and
//! a probe per position through the block cache would decompress a block of
//! B for nearly every one of them. Instead B's partitions are decompressed
//! once each and held in memory (one byte per index) while A is streamed,
//! a run of blocks at a time, with the ranking and comparing spread over the
//! cores.

use crate::format::{
    count, read_manifest, FileEntry, FormatError, Manifest, Stored, TableFile, ValueEncoding,
};
use crate::game::{Game, GameKind};
use crate::registry::{open_game, AnyGame, GameVisitor};
use crate::value::{PartitionId, Rank, Value};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which of the two directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    /// The first directory: its indices are enumerated.
    A,
    /// The second directory: A's positions are looked up in it.
    B,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::A => "DIR_A",
            Side::B => "DIR_B",
        })
    }
}

/// Why two directories could not be compared (bad input, not a difference
/// between them: those are in the [`CompareReport`]).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A directory is missing, is no tablebase, or does not hold what its
    /// manifest says.
    #[error("{side} {}: {message}", dir.display())]
    Input {
        /// Which directory.
        side: Side,
        /// Its path.
        dir: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A file of a directory could not be read or is damaged.
    #[error("{side} {}: {source}", dir.display())]
    Format {
        /// Which directory.
        side: Side,
        /// Its path.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: FormatError,
    },
    /// The two directories hold different games.
    #[error("DIR_A {} holds {a}, DIR_B {} holds {b}: compare needs two tablebases of the same game (its parameters may differ)", dir_a.display(), dir_b.display())]
    DifferentGames {
        /// DIR_A.
        dir_a: PathBuf,
        /// DIR_B.
        dir_b: PathBuf,
        /// A's game with its parameters.
        a: String,
        /// B's game with its parameters.
        b: String,
    },
}

/// Settings for [`compare_dirs_with`].
#[derive(Clone, Copy, Debug)]
pub struct CompareOptions {
    /// Mismatches described in full (the first ones, in A's order).
    pub examples: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { examples: 10 }
    }
}

/// What `tbforge compare` found; `--json` prints it as is.
#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    /// DIR_A.
    pub dir_a: String,
    /// DIR_B.
    pub dir_b: String,
    /// A's game with its parameters.
    pub game_a: String,
    /// B's game with its parameters.
    pub game_b: String,
    /// How A stores values.
    pub encoding_a: ValueEncoding,
    /// How B stores values.
    pub encoding_b: ValueEncoding,
    /// `byte` when both store value bytes (outcome and distance compared);
    /// `wdl2` when either stores only WDL codes (outcomes compared).
    pub compared_as: ValueEncoding,
    /// True when every value and the totals agree and no partition is missing.
    pub ok: bool,
    /// Legal positions of A compared with B.
    pub compared: u64,
    /// Of those, the ones whose values differ.
    pub mismatches: u64,
    /// Legal positions of A whose partition in B has no file.
    pub missing: u64,
    /// Seconds the comparison took.
    pub seconds: f64,
    /// One entry per partition of A, in A's manifest order.
    pub partitions: Vec<PartitionComparison>,
    /// The first mismatches, in full.
    pub examples: Vec<Mismatch>,
    /// B's partitions that A's positions fall in but B has no file for.
    pub missing_partitions: Vec<MissingPartition>,
    /// The manifests' weighted totals, which count positions (not indices)
    /// and so agree between a symmetry-class index and a plain one.
    pub totals: Vec<TotalComparison>,
    /// True when every one of [`CompareReport::totals`] agrees.
    pub totals_agree: bool,
}

/// One partition of A against B.
#[derive(Clone, Debug, Serialize)]
pub struct PartitionComparison {
    /// The partition.
    pub partition: PartitionId,
    /// Its name.
    pub name: String,
    /// Its indices, legal or not.
    pub indices: u64,
    /// Legal positions compared.
    pub compared: u64,
    /// Positions whose values differ.
    pub mismatches: u64,
    /// Positions whose partition in B has no file.
    pub missing: u64,
}

/// One position whose two values differ.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// Its partition in A.
    pub partition_a: String,
    /// Its rank in A.
    pub rank_a: Rank,
    /// The position, as A unranks it (the game's notation).
    pub position_a: String,
    /// A's value there.
    pub value_a: String,
    /// Its partition in B.
    pub partition_b: String,
    /// Its rank in B.
    pub rank_b: Rank,
    /// The position B's index stands for (with a symmetry-class index, the
    /// class's representative), where B's game unranks it.
    pub position_b: Option<String>,
    /// B's value there.
    pub value_b: String,
}

/// A partition of B that positions of A fall in and B has no file for.
#[derive(Clone, Debug, Serialize)]
pub struct MissingPartition {
    /// The partition.
    pub partition: PartitionId,
    /// B's game's name for it.
    pub name: String,
    /// Positions of A that fall in it.
    pub positions: u64,
    /// Whether B's game, with B's parameters, has this partition at all
    /// (then B's directory lacks its file; else B's parameters leave it out).
    pub in_game_b: bool,
}

/// One of the manifests' totals in both directories.
#[derive(Clone, Debug, Serialize)]
pub struct TotalComparison {
    /// The total's name in the manifest.
    pub field: &'static str,
    /// A's.
    pub a: u64,
    /// B's.
    pub b: u64,
    /// Whether they are equal.
    pub agree: bool,
}

/// Compares every position of the tablebase in `dir_a` with the tablebase in
/// `dir_b` (default options).
pub fn compare_dirs(dir_a: &Path, dir_b: &Path) -> Result<CompareReport, CompareError> {
    compare_dirs_with(dir_a, dir_b, &CompareOptions::default(), |_| {})
}

/// Compares every position of the tablebase in `dir_a` with the tablebase in
/// `dir_b`, opening both games from the registry by their manifests.
/// `on_partition` hears of each partition of A as it is finished (progress).
///
/// Differences are in the report; `Err` means the directories could not be
/// compared (missing, not tablebases, different games, damaged files).
pub fn compare_dirs_with(
    dir_a: &Path,
    dir_b: &Path,
    options: &CompareOptions,
    on_partition: impl FnMut(&PartitionComparison),
) -> Result<CompareReport, CompareError> {
    let (manifest_a, game_a) = open_side(Side::A, dir_a)?;
    let (manifest_b, game_b) = open_side(Side::B, dir_b)?;
    let different = || CompareError::DifferentGames {
        dir_a: dir_a.to_path_buf(),
        dir_b: dir_b.to_path_buf(),
        a: manifest_a.canonical_game(),
        b: manifest_b.canonical_game(),
    };
    if manifest_a.game != manifest_b.game {
        return Err(different());
    }
    let sides = Sides::new((dir_a, &manifest_a), (dir_b, &manifest_b));
    game_a
        .visit(WithB {
            b: &game_b,
            sides: &sides,
            options,
            on_partition,
        })
        .ok_or_else(different)?
}

/// Compares every position of the tablebase in `dir_a`, a tablebase of
/// `game_a`, with the tablebase in `dir_b`, one of `game_b`: games the
/// registry need not know (an engine's own, a test's).
pub fn compare_game_dirs<G: Game>(
    game_a: &G,
    dir_a: &Path,
    game_b: &G,
    dir_b: &Path,
    options: &CompareOptions,
) -> Result<CompareReport, CompareError> {
    let manifest_a = read_side(Side::A, dir_a)?;
    let manifest_b = read_side(Side::B, dir_b)?;
    let sides = Sides::new((dir_a, &manifest_a), (dir_b, &manifest_b));
    compare_games(game_a, game_b, &sides, options, |_| {})
}

fn read_side(side: Side, dir: &Path) -> Result<Manifest, CompareError> {
    let input = |message: String| CompareError::Input {
        side,
        dir: dir.to_path_buf(),
        message,
    };
    if !dir.exists() {
        return Err(input(
            "no such directory; give a tablebase directory (`tbforge build` writes one)".into(),
        ));
    }
    if !dir.is_dir() {
        return Err(input(
            "not a directory; give a tablebase directory (`tbforge build` writes one)".into(),
        ));
    }
    read_manifest(dir).map_err(|source| CompareError::Format {
        side,
        dir: dir.to_path_buf(),
        source,
    })
}

fn open_side(side: Side, dir: &Path) -> Result<(Manifest, AnyGame), CompareError> {
    let manifest = read_side(side, dir)?;
    let input = |message: String| CompareError::Input {
        side,
        dir: dir.to_path_buf(),
        message,
    };
    let game = open_game(&manifest.game, &manifest.params).map_err(|e| {
        input(format!(
            "its manifest names {}, which this tbforge cannot open: {e}",
            manifest.canonical_game()
        ))
    })?;
    let info = game.info();
    if manifest.param_hash_value() != Some(info.param_hash()) || info.params != manifest.params {
        return Err(input(format!(
            "its manifest's parameters and hash ({}, {}) are not those of the game they open ({}); run `tbforge verify` on it",
            manifest.canonical_game(),
            manifest.param_hash,
            info.canonical()
        )));
    }
    Ok((manifest, game))
}

struct Dir<'a> {
    side: Side,
    dir: &'a Path,
    manifest: &'a Manifest,
}

impl Dir<'_> {
    fn input(&self, message: String) -> CompareError {
        CompareError::Input {
            side: self.side,
            dir: self.dir.to_path_buf(),
            message,
        }
    }

    fn format(&self, source: FormatError) -> CompareError {
        CompareError::Format {
            side: self.side,
            dir: self.dir.to_path_buf(),
            source,
        }
    }

    /// Opens the file of `entry` and checks it against the manifest and the
    /// game: its header, its size, and the whole-file crc32 its index gives
    /// (each block is checked against its own crc32 as it is read).
    fn open<G: Game>(&self, game: &G, entry: &FileEntry) -> Result<TableFile, CompareError> {
        if entry.name.is_empty() || entry.name.contains(['/', '\\']) || entry.name.starts_with('.')
        {
            return Err(self.input(format!(
                "its manifest lists `{}`, not a plain file name; run `tbforge verify` on it",
                entry.name
            )));
        }
        let file = TableFile::open_read(&self.dir.join(&entry.name)).map_err(|e| self.format(e))?;
        let h = file.header();
        let m = self.manifest;
        let size = game.partition_size(entry.partition);
        let wrong: Vec<String> = [
            (h.game != m.game, format!("game `{}`", h.game)),
            (
                Some(h.param_hash) != m.param_hash_value(),
                format!("parameter hash {:016x}", h.param_hash),
            ),
            (h.kind != m.kind, format!("kind {:?}", h.kind)),
            (
                h.partition != entry.partition,
                format!("partition {}", h.partition),
            ),
            (h.encoding != m.encoding, format!("encoding {}", h.encoding)),
            (
                h.index_size != entry.index_size || h.index_size != size,
                format!(
                    "{} (manifest {}, game {size})",
                    count(h.index_size, "index", "indices"),
                    entry.index_size
                ),
            ),
        ]
        .into_iter()
        .filter(|(differs, _)| *differs)
        .map(|(_, what)| what)
        .collect();
        if !wrong.is_empty() {
            return Err(self.input(format!(
                "{} does not match its manifest entry or game: {}; run `tbforge verify` on it",
                entry.name,
                wrong.join(", ")
            )));
        }
        let crc = file.whole_file_crc32();
        if crc != entry.crc32 {
            return Err(self.input(format!(
                "{}: whole-file crc32 {crc:08x}, the manifest says {:08x} (the file was changed or replaced); run `tbforge verify` on it",
                entry.name, entry.crc32
            )));
        }
        Ok(file)
    }
}

struct Sides<'a> {
    a: Dir<'a>,
    b: Dir<'a>,
}

impl<'a> Sides<'a> {
    fn new(a: (&'a Path, &'a Manifest), b: (&'a Path, &'a Manifest)) -> Sides<'a> {
        let dir = |side, (dir, manifest): (&'a Path, &'a Manifest)| Dir {
            side,
            dir,
            manifest,
        };
        Sides {
            a: dir(Side::A, a),
            b: dir(Side::B, b),
        }
    }
}

/// Hands A's concrete game, and B's as the same type, to [`compare_games`].
/// The registry opens each side on its own; two games of one id are one type.
struct WithB<'a, F> {
    b: &'a AnyGame,
    sides: &'a Sides<'a>,
    options: &'a CompareOptions,
    on_partition: F,
}

impl<F: FnMut(&PartitionComparison)> GameVisitor for WithB<'_, F> {
    type Output = Option<Result<CompareReport, CompareError>>;
    fn visit<G: Game>(self, game_a: &G) -> Self::Output {
        self.b.visit(AsA {
            a: game_a,
            sides: self.sides,
            options: self.options,
            on_partition: self.on_partition,
        })
    }
}

struct AsA<'a, GA, F> {
    a: &'a GA,
    sides: &'a Sides<'a>,
    options: &'a CompareOptions,
    on_partition: F,
}

impl<GA: Game, F: FnMut(&PartitionComparison)> GameVisitor for AsA<'_, GA, F> {
    type Output = Option<Result<CompareReport, CompareError>>;
    fn visit<G: Game>(self, game_b: &G) -> Self::Output {
        let b = (game_b as &dyn std::any::Any).downcast_ref::<GA>()?;
        Some(compare_games(
            self.a,
            b,
            self.sides,
            self.options,
            self.on_partition,
        ))
    }
}

/// Positions of A ranked and compared at a time: a run of whole blocks of
/// about this many, so that the ranks held between the two steps stay small
/// (16 bytes each) while each step has plenty to spread over the cores.
const CHUNK_POSITIONS: u64 = 1 << 20;

/// B's decompressed partitions are kept across A's partitions while they
/// take at most this many bytes; beyond, those the last partition of A did
/// not use are dropped (and read again if a later one needs them).
const B_KEEP_BYTES: usize = 1 << 30;

/// Sub-chunk of a chunk counted by one task: big enough to amortise a task,
/// small enough to balance over the cores.
const TASK_POSITIONS: usize = 1 << 14;

/// Where one index of A lands in B.
#[derive(Clone, Copy)]
struct Target {
    /// B's partition; meaningless where `rank` is [`ILLEGAL`].
    partition: PartitionId,
    rank: u64,
}

/// `rank` of a [`Target`] whose index of A names no legal position.
const ILLEGAL: u64 = u64::MAX;

/// What one task counted.
#[derive(Default)]
struct Tally {
    compared: u64,
    mismatches: u64,
    missing: BTreeMap<PartitionId, u64>,
    /// (A's rank, B's partition, B's rank, A's code, B's code).
    examples: Vec<(u64, PartitionId, u64, u8, u8)>,
}

/// A's or B's codes read for comparison: the value byte, or its WDL code
/// where the comparison is of WDL codes. A table over all 256 codes.
fn key_table(kind: GameKind, stored: ValueEncoding, compared: ValueEncoding) -> [u8; 256] {
    let mut t = [0u8; 256];
    for (code, k) in t.iter_mut().enumerate() {
        let code = code as u8;
        *k = match (stored, compared) {
            (ValueEncoding::Byte, ValueEncoding::Wdl2) => {
                ValueEncoding::Wdl2.encode(kind, Value::from_byte(code))
            }
            _ => code,
        };
    }
    t
}

/// How a stored code reads, for messages.
fn describe(kind: GameKind, encoding: ValueEncoding, code: u8) -> String {
    let s: Stored = encoding.decode(kind, code);
    Stored::describe(kind, s.outcome, s.distance)
}

/// Every stored code of `file`'s blocks `blocks`, one byte per position,
/// the blocks decompressed in parallel.
fn read_codes(file: &TableFile, blocks: std::ops::Range<u64>) -> Result<Vec<u8>, FormatError> {
    let parts: Vec<Vec<u8>> = blocks
        .into_par_iter()
        .map(|block| {
            let raw = file.read_block(block)?;
            Ok(match file.header().encoding {
                ValueEncoding::Byte => raw,
                ValueEncoding::Wdl2 => (0..file.header().positions_in(block))
                    .map(|i| file.code_in(&raw, i))
                    .collect(),
            })
        })
        .collect::<Result<_, FormatError>>()?;
    Ok(parts.concat())
}

/// B's partitions, decompressed when first needed.
struct BValues<'a, G> {
    game: &'a G,
    dir: &'a Dir<'a>,
    entries: HashMap<PartitionId, &'a FileEntry>,
    loaded: HashMap<PartitionId, Vec<u8>>,
}

impl<G: Game> BValues<'_, G> {
    fn load(&mut self, p: PartitionId) -> Result<(), CompareError> {
        if self.loaded.contains_key(&p) {
            return Ok(());
        }
        let Some(entry) = self.entries.get(&p) else {
            return Ok(());
        };
        let file = self.dir.open(self.game, entry)?;
        let codes =
            read_codes(&file, 0..file.header().block_count).map_err(|e| self.dir.format(e))?;
        self.loaded.insert(p, codes);
        Ok(())
    }

    fn bytes(&self) -> usize {
        self.loaded.values().map(Vec::len).sum()
    }
}

fn compare_games<G: Game>(
    game_a: &G,
    game_b: &G,
    sides: &Sides<'_>,
    options: &CompareOptions,
    mut on_partition: impl FnMut(&PartitionComparison),
) -> Result<CompareReport, CompareError> {
    let t = Instant::now();
    let (ma, mb) = (sides.a.manifest, sides.b.manifest);
    let kind = game_a.info().kind;
    if mb.kind != ma.kind {
        return Err(sides.b.input(format!(
            "its manifest says {:?}, DIR_A's {:?}: these are not tablebases of one game",
            mb.kind, ma.kind
        )));
    }
    let compared_as = if ma.encoding == ValueEncoding::Byte && mb.encoding == ValueEncoding::Byte {
        ValueEncoding::Byte
    } else {
        ValueEncoding::Wdl2
    };
    let key_a = key_table(kind, ma.encoding, compared_as);
    let key_b = key_table(kind, mb.encoding, compared_as);
    let partitions_a = game_a.partitions();
    let mut entries_b = HashMap::new();
    for f in &mb.files {
        if entries_b.insert(f.partition, f).is_some() {
            return Err(sides.b.input(format!(
                "its manifest lists partition {} twice; run `tbforge verify` on it",
                f.partition
            )));
        }
    }
    let mut b = BValues {
        game: game_b,
        dir: &sides.b,
        entries: entries_b,
        loaded: HashMap::new(),
    };
    let mut report = CompareReport {
        dir_a: sides.a.dir.display().to_string(),
        dir_b: sides.b.dir.display().to_string(),
        game_a: ma.canonical_game(),
        game_b: mb.canonical_game(),
        encoding_a: ma.encoding,
        encoding_b: mb.encoding,
        compared_as,
        ok: false,
        compared: 0,
        mismatches: 0,
        missing: 0,
        seconds: 0.0,
        partitions: Vec::new(),
        examples: Vec::new(),
        missing_partitions: Vec::new(),
        totals: Vec::new(),
        totals_agree: false,
    };
    let mut missing: BTreeMap<PartitionId, u64> = BTreeMap::new();
    // (A's partition, A's rank, B's partition, B's rank, A's code, B's code)
    let mut examples: Vec<(PartitionId, u64, PartitionId, u64, u8, u8)> = Vec::new();
    for entry in &ma.files {
        let pa = entry.partition;
        if !partitions_a.contains(&pa) {
            return Err(sides.a.input(format!(
                "{}: partition {pa} is not a partition of {}; run `tbforge verify` on it",
                entry.name, report.game_a
            )));
        }
        let file = sides.a.open(game_a, entry)?;
        let h = file.header().clone();
        let mut pc = PartitionComparison {
            partition: pa,
            name: entry.partition_name.clone(),
            indices: h.index_size,
            compared: 0,
            mismatches: 0,
            missing: 0,
        };
        let mut used_b: Vec<PartitionId> = Vec::new();
        let chunk_blocks = (CHUNK_POSITIONS / u64::from(h.block_positions)).max(1);
        let mut block = 0;
        while block < h.block_count {
            let end = (block + chunk_blocks).min(h.block_count);
            let start = block * u64::from(h.block_positions);
            let codes = read_codes(&file, block..end).map_err(|e| sides.a.format(e))?;
            block = end;
            let targets: Vec<Target> = (0..codes.len() as u64)
                .into_par_iter()
                .map(|i| match game_a.unrank(pa, Rank(start + i)) {
                    Some(pos) => {
                        let (p, r) = game_b.rank(&pos);
                        Target {
                            partition: p,
                            rank: r.0,
                        }
                    }
                    None => Target {
                        partition: PartitionId(0),
                        rank: ILLEGAL,
                    },
                })
                .collect();
            // Runs of one partition are the rule: a set of the few needed.
            let mut last = None;
            for t in targets.iter().filter(|t| t.rank != ILLEGAL) {
                if last != Some(t.partition) {
                    last = Some(t.partition);
                    if !used_b.contains(&t.partition) {
                        used_b.push(t.partition);
                        b.load(t.partition)?;
                    }
                }
            }
            let loaded = &b.loaded;
            let want = options.examples.saturating_sub(examples.len());
            let tallies: Vec<Tally> = targets
                .par_chunks(TASK_POSITIONS)
                .zip(codes.par_chunks(TASK_POSITIONS))
                .enumerate()
                .map(|(task, (targets, codes))| {
                    let mut tally = Tally::default();
                    let first = start + (task * TASK_POSITIONS) as u64;
                    // Runs of one partition: look it up once a run.
                    let mut run: Option<(PartitionId, Option<&Vec<u8>>)> = None;
                    for (i, (t, &code_a)) in targets.iter().zip(codes).enumerate() {
                        if t.rank == ILLEGAL {
                            continue;
                        }
                        let values = match run {
                            Some((p, values)) if p == t.partition => values,
                            _ => {
                                let values = loaded.get(&t.partition);
                                run = Some((t.partition, values));
                                values
                            }
                        };
                        let Some(values) = values else {
                            *tally.missing.entry(t.partition).or_default() += 1;
                            continue;
                        };
                        tally.compared += 1;
                        // A rank beyond B's partition breaks the game's
                        // contract; 0 (illegal) stands in and shows it.
                        let code_b = usize::try_from(t.rank)
                            .ok()
                            .and_then(|r| values.get(r))
                            .copied()
                            .unwrap_or(0);
                        if key_a[code_a as usize] != key_b[code_b as usize] {
                            tally.mismatches += 1;
                            if tally.examples.len() < want {
                                tally.examples.push((
                                    first + i as u64,
                                    t.partition,
                                    t.rank,
                                    code_a,
                                    code_b,
                                ));
                            }
                        }
                    }
                    tally
                })
                .collect();
            for tally in tallies {
                pc.compared += tally.compared;
                pc.mismatches += tally.mismatches;
                for (p, n) in tally.missing {
                    pc.missing += n;
                    *missing.entry(p).or_default() += n;
                }
                for (ra, pb, rb, ca, cb) in tally.examples {
                    if examples.len() < options.examples {
                        examples.push((pa, ra, pb, rb, ca, cb));
                    }
                }
            }
        }
        if b.bytes() > B_KEEP_BYTES {
            b.loaded.retain(|p, _| used_b.contains(p));
        }
        report.compared += pc.compared;
        report.mismatches += pc.mismatches;
        report.missing += pc.missing;
        on_partition(&pc);
        report.partitions.push(pc);
    }
    let name_a = |p: PartitionId| {
        ma.file_of(p)
            .map_or_else(|| game_a.partition_name(p), |f| f.partition_name.clone())
    };
    report.examples = examples
        .into_iter()
        .map(|(pa, ra, pb, rb, ca, cb)| Mismatch {
            partition_a: name_a(pa),
            rank_a: Rank(ra),
            position_a: game_a
                .unrank(pa, Rank(ra))
                .map_or_else(|| "?".into(), |p| game_a.format_position(&p)),
            value_a: describe(kind, ma.encoding, ca),
            partition_b: game_b.partition_name(pb),
            rank_b: Rank(rb),
            position_b: (rb < game_b.partition_size(pb))
                .then(|| game_b.unrank(pb, Rank(rb)))
                .flatten()
                .map(|p| game_b.format_position(&p)),
            value_b: if rb < game_b.partition_size(pb) {
                describe(kind, mb.encoding, cb)
            } else {
                format!(
                    "none: rank {rb} is beyond the partition's {}",
                    count(game_b.partition_size(pb), "index", "indices")
                )
            },
        })
        .collect();
    let partitions_b = game_b.partitions();
    report.missing_partitions = missing
        .into_iter()
        .map(|(partition, positions)| MissingPartition {
            partition,
            name: game_b.partition_name(partition),
            positions,
            in_game_b: partitions_b.contains(&partition),
        })
        .collect();
    let (ta, tb) = (&ma.totals, &mb.totals);
    report.totals = [
        ("positions", ta.positions, tb.positions),
        ("wins", ta.wins, tb.wins),
        ("draws", ta.draws, tb.draws),
        ("losses", ta.losses, tb.losses),
    ]
    .into_iter()
    .map(|(field, a, b)| TotalComparison {
        field,
        a,
        b,
        agree: a == b,
    })
    .collect();
    report.totals_agree = report.totals.iter().all(|t| t.agree);
    report.ok = report.mismatches == 0 && report.missing == 0 && report.totals_agree;
    report.seconds = t.elapsed().as_secs_f64();
    Ok(report)
}

/// The human rendering `tbforge compare` prints.
pub fn render_compare_text(r: &CompareReport) -> String {
    let mut s = format!(
        "A: {} ({}, {})\nB: {} ({}, {})\n",
        r.dir_a, r.game_a, r.encoding_a, r.dir_b, r.game_b, r.encoding_b
    );
    s += &format!(
        "{:<16} {:>14} {:>14} {:>12} {:>12}\n",
        "partition", "indices", "compared", "mismatches", "missing"
    );
    for p in &r.partitions {
        s += &format!(
            "{:<16} {:>14} {:>14} {:>12} {:>12}\n",
            p.name, p.indices, p.compared, p.mismatches, p.missing
        );
    }
    s += &format!(
        "{:<16} {:>14} {:>14} {:>12} {:>12}\n",
        "total",
        r.partitions.iter().map(|p| p.indices).sum::<u64>(),
        r.compared,
        r.mismatches,
        r.missing
    );
    s += &format!("\n{:<16} {:>20} {:>20}\n", "manifest totals", "A", "B");
    for t in &r.totals {
        s += &format!(
            "{:<16} {:>20} {:>20}  {}\n",
            t.field,
            t.a,
            t.b,
            if t.agree { "agree" } else { "DIFFER" }
        );
    }
    for m in &r.examples {
        s += &format!(
            "MISMATCH A {} rank {} {}: {}; B {} rank {} {}: {}\n",
            m.partition_a,
            m.rank_a,
            m.position_a,
            m.value_a,
            m.partition_b,
            m.rank_b,
            m.position_b.as_deref().unwrap_or("-"),
            m.value_b
        );
    }
    if r.mismatches > r.examples.len() as u64 {
        s += &format!(
            "... and {} more\n",
            count(
                r.mismatches - r.examples.len() as u64,
                "mismatch",
                "mismatches"
            )
        );
    }
    for m in &r.missing_partitions {
        s += &format!(
            "MISSING partition {} ({}) in B: {} of A fall in it; {}\n",
            m.name,
            m.partition,
            count(m.positions, "position", "positions"),
            if m.in_game_b {
                "B's manifest lists no file for it"
            } else {
                "B's parameters have no such partition"
            }
        );
    }
    let what = if r.compared_as == ValueEncoding::Byte {
        "values"
    } else {
        "WDL outcomes"
    };
    let rate = r.compared as f64 / r.seconds.max(1e-9);
    let mut wrong = Vec::new();
    if r.mismatches > 0 {
        wrong.push(count(r.mismatches, "mismatch", "mismatches"));
    }
    if r.missing > 0 {
        wrong.push(format!(
            "{} in partitions B lacks",
            count(r.missing, "position", "positions")
        ));
    }
    if !r.totals_agree {
        wrong.push("the totals differ".into());
    }
    s += &format!(
        "{} compared in {} ({:.1} s, {:.3e}/s): {}\n",
        count(r.compared, "position", "positions"),
        count(r.partitions.len() as u64, "partition", "partitions"),
        r.seconds,
        rate,
        if wrong.is_empty() {
            format!("all {what} and totals agree")
        } else {
            format!("DIFFERENT ({})", wrong.join(", "))
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_codes_compare_as_wdl_where_either_side_is_wdl() {
        let two = key_table(
            GameKind::TwoPlayer,
            ValueEncoding::Byte,
            ValueEncoding::Wdl2,
        );
        // Distance 1 (byte 3) is a win, distance 2 (byte 4) a loss.
        assert_eq!(two[0], 0);
        assert_eq!(two[1], 1);
        assert_eq!(two[3], 2);
        assert_eq!(two[4], 3);
        let puzzle = key_table(GameKind::Puzzle, ValueEncoding::Byte, ValueEncoding::Wdl2);
        assert_eq!(puzzle[4], 2);
        let same = key_table(
            GameKind::TwoPlayer,
            ValueEncoding::Byte,
            ValueEncoding::Byte,
        );
        assert_eq!(same[7], 7);
        assert_eq!(
            describe(GameKind::TwoPlayer, ValueEncoding::Byte, 3),
            "win in 1"
        );
        assert_eq!(
            describe(GameKind::TwoPlayer, ValueEncoding::Wdl2, 3),
            "loss"
        );
        assert_eq!(
            describe(GameKind::Puzzle, ValueEncoding::Byte, 1),
            "goal unreachable"
        );
        assert_eq!(
            describe(GameKind::TwoPlayer, ValueEncoding::Byte, 0),
            "illegal"
        );
    }
}
