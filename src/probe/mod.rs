//! The probe API engines link: open a tablebase directory, probe positions,
//! get best moves.
//!
//! ```no_run
//! use tbforge::game::tictactoe::TicTacToe;
//! use tbforge::probe::{GameTablebase, Tablebase};
//! use tbforge::Game;
//! use std::path::Path;
//!
//! // An engine that knows its game: bind the tablebase to it once.
//! let game = TicTacToe::from_params(&Default::default())?;
//! let tb = GameTablebase::new(game, Tablebase::open(Path::new("tablebases/tictactoe"))?)?;
//! let pos = tb.game().parse_position("x...o....")?;
//! let r = tb.probe(&pos)?;
//! println!("{} in {:?}, best: {:?}", r.outcome, r.distance, r.best_moves);
//!
//! // The command line's way: the game named in the manifest, a position as text.
//! let report = tbforge::probe::probe_text(Path::new("tablebases/tictactoe"), "x...o....")?;
//! println!("{}", report.to_text());
//! # Ok::<(), tbforge::Error>(())
//! ```
//!
//! A [`Tablebase`] is `Send + Sync`: share one behind an `Arc` across threads.
//! Files are opened on first use and checked (header, index, trailer
//! checksum, and the manifest's whole-file crc32 as the index gives it: see
//! [`TableFile::whole_file_crc32`]); each block is checked against its crc32
//! when read, so damage shows up as [`FormatError::Corrupt`], never as a
//! wrong value.

mod bench;
mod cache;
mod engine;

pub use bench::{bench, render_bench_text, BenchOptions, BenchRow};
pub use engine::{bound, reached_by_predecessors, Codes};

use crate::format::{
    count, read_manifest, FormatError, Manifest, Stored, TableFile, ValueEncoding,
};
use crate::game::{Forward, Game, GameKind, Status};
use crate::registry::{open_game, AnyGame, GameVisitor};
use crate::value::{Outcome, PartitionId, Rank, Value};
use cache::BlockCache;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// How a [`Tablebase`] reads its files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Positional reads through the file handle (the safe default).
    Read,
    /// Memory maps; see [`Tablebase::open_mapped`] for the contract.
    Mapped,
}

/// Settings for [`Tablebase::open_with`].
#[derive(Clone, Copy, Debug)]
pub struct OpenOptions {
    /// Decompressed blocks kept in memory (64 KiB each by default); 0 turns the cache off.
    pub cache_blocks: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { cache_blocks: 256 }
    }
}

struct Slot {
    path: PathBuf,
    entry: usize,
    file: OnceLock<Arc<TableFile>>,
}

/// An open tablebase directory.
pub struct Tablebase {
    dir: PathBuf,
    manifest: Manifest,
    param_hash: u64,
    by_partition: HashMap<PartitionId, u32>,
    slots: Vec<Slot>,
    cache: BlockCache,
    access: Access,
}

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("dir", &self.dir)
            .field("game", &self.manifest.canonical_game())
            .finish_non_exhaustive()
    }
}

impl Tablebase {
    /// Opens the tablebase in `dir`: reads and checks its manifest; files are
    /// opened when first probed.
    pub fn open(dir: &Path) -> Result<Tablebase, FormatError> {
        Tablebase::build(dir, OpenOptions::default(), Access::Read)
    }

    /// [`Tablebase::open`] with explicit options.
    pub fn open_with(dir: &Path, options: OpenOptions) -> Result<Tablebase, FormatError> {
        Tablebase::build(dir, options, Access::Read)
    }

    /// Opens the tablebase in `dir`, reading its files through memory maps.
    ///
    /// # Safety
    ///
    /// No file of the directory may be truncated or written to in place while
    /// the returned value lives (see [`TableFile::open_mapped`]): a vanished
    /// page kills the process with SIGBUS, changed bytes under a map are
    /// undefined behaviour. Replacing a file by rename, as tbforge's writers
    /// do, is fine. Use [`Tablebase::open`] where this cannot be promised.
    pub unsafe fn open_mapped(dir: &Path, options: OpenOptions) -> Result<Tablebase, FormatError> {
        Tablebase::build(dir, options, Access::Mapped)
    }

    fn build(dir: &Path, options: OpenOptions, access: Access) -> Result<Tablebase, FormatError> {
        let manifest = read_manifest(dir)?;
        let bad = |message: String| FormatError::Manifest {
            path: dir.join(crate::format::MANIFEST_NAME),
            message,
        };
        let param_hash = manifest.param_hash_value().ok_or_else(|| {
            bad(format!(
                "param_hash `{}` is not 16 lowercase hex digits",
                manifest.param_hash
            ))
        })?;
        let mut by_partition = HashMap::new();
        let mut slots = Vec::with_capacity(manifest.files.len());
        for (i, f) in manifest.files.iter().enumerate() {
            if f.name.is_empty() || f.name.contains(['/', '\\']) || f.name.starts_with('.') {
                return Err(bad(format!(
                    "file name `{}` is not a plain file name in the directory",
                    f.name
                )));
            }
            if by_partition.insert(f.partition, i as u32).is_some() {
                return Err(bad(format!("partition {} is listed twice", f.partition)));
            }
            slots.push(Slot {
                path: dir.join(&f.name),
                entry: i,
                file: OnceLock::new(),
            });
        }
        Ok(Tablebase {
            dir: dir.to_path_buf(),
            manifest,
            param_hash,
            by_partition,
            slots,
            cache: BlockCache::new(options.cache_blocks),
            access,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Two-player or puzzle.
    pub fn kind(&self) -> GameKind {
        self.manifest.kind
    }

    /// How the files store values.
    pub fn encoding(&self) -> ValueEncoding {
        self.manifest.encoding
    }

    /// True for an engine directory (FORMAT.md, "Engine files"): its stored
    /// codes may be don't-care, and only [`Tablebase::probe_position`] (and
    /// the probes built on it) reads true values from them.
    pub fn is_engine(&self) -> bool {
        self.manifest.engine.is_some()
    }

    /// True if the manifest lists a file for `partition`.
    pub fn has_partition(&self, partition: PartitionId) -> bool {
        self.by_partition.contains_key(&partition)
    }

    /// Decompressed blocks in the cache now.
    pub fn cached_blocks(&self) -> usize {
        self.cache.len()
    }

    fn file(&self, slot: u32) -> Result<&Arc<TableFile>, FormatError> {
        let s = &self.slots[slot as usize];
        if let Some(f) = s.file.get() {
            return Ok(f);
        }
        let file = match self.access {
            Access::Read => TableFile::open_read(&s.path)?,
            // SAFETY: `access` is Mapped only through `open_mapped`, whose
            // caller promised that no file here changes in place while mapped.
            Access::Mapped => unsafe { TableFile::open_mapped(&s.path)? },
        };
        self.check_file(&file, s.entry)?;
        // Two threads may open the file at once; either copy is as good.
        Ok(s.file.get_or_init(|| Arc::new(file)))
    }

    /// The header must name this manifest's game, partition and shape.
    fn check_file(&self, file: &TableFile, entry: usize) -> Result<(), FormatError> {
        let e = &self.manifest.files[entry];
        let h = file.header();
        let m = &self.manifest;
        // Each field that differs, as "the header's value (manifest: the
        // manifest's value)"; formatted only where it differs.
        let wrong: Vec<String> = [
            (h.game != m.game).then(|| format!("game `{}` (manifest: `{}`)", h.game, m.game)),
            (h.param_hash != self.param_hash).then(|| {
                format!(
                    "parameter hash {:016x} (manifest: {})",
                    h.param_hash, m.param_hash
                )
            }),
            (h.kind != m.kind).then(|| format!("kind {:?} (manifest: {:?})", h.kind, m.kind)),
            (h.partition != e.partition)
                .then(|| format!("partition {} (manifest: {})", h.partition, e.partition)),
            (h.encoding != m.encoding)
                .then(|| format!("encoding {} (manifest: {})", h.encoding, m.encoding)),
            (h.index_size != e.index_size).then(|| {
                let header = count(h.index_size, "index", "indices");
                format!("{header} (manifest: {})", e.index_size)
            }),
            (h.file_len != e.bytes).then(|| {
                let header = count(h.file_len, "byte", "bytes");
                format!("a length of {header} (manifest: {})", e.bytes)
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !wrong.is_empty() {
            return Err(FormatError::Mismatch {
                file: e.name.clone(),
                message: format!(
                    "does not belong to this tablebase: its header has {}",
                    wrong.join(", ")
                ),
            });
        }
        // The header is right; the index must be the one the manifest's
        // whole-file crc32 was taken over (each block is then checked
        // against its index entry as it is read).
        let crc = file.whole_file_crc32();
        if crc != e.crc32 {
            return Err(FormatError::Corrupt {
                file: e.name.clone(),
                block: None,
                message: format!(
                    "its header, block index and trailer give a whole-file crc32 of {crc:08x}, the manifest says {:08x} (the file was changed or replaced)",
                    e.crc32
                ),
            });
        }
        Ok(())
    }

    /// The stored code of a position (the value byte, or the 2-bit WDL code).
    fn code(&self, partition: PartitionId, rank: Rank) -> Result<u8, FormatError> {
        let slot = *self
            .by_partition
            .get(&partition)
            .ok_or(FormatError::NotInTablebase { partition })?;
        let file = self.file(slot)?;
        let (block, offset) = file.locate(rank)?;
        let key = (slot, block);
        let raw = match self.cache.get(key) {
            Some(raw) => raw,
            None => {
                let raw: Arc<[u8]> = Arc::from(file.read_block(block)?);
                self.cache.insert(key, Arc::clone(&raw));
                raw
            }
        };
        Ok(file.code_in(&raw, offset))
    }

    /// Every stored code of `partition` in rank order (one byte per index,
    /// whatever the encoding), read past the block cache. In an engine
    /// directory these are the stored codes, don't-cares included.
    pub fn partition_codes(&self, partition: PartitionId) -> Result<Vec<u8>, FormatError> {
        let slot = *self
            .by_partition
            .get(&partition)
            .ok_or(FormatError::NotInTablebase { partition })?;
        self.file(slot)?.read_all_codes()
    }

    /// The long distances of `partition`'s file (FORMAT.md, "Long
    /// distances"): empty for nearly every partition.
    pub fn long_distances(
        &self,
        partition: PartitionId,
    ) -> Result<crate::value::LongDistances, FormatError> {
        let slot = *self
            .by_partition
            .get(&partition)
            .ok_or(FormatError::NotInTablebase { partition })?;
        Ok(self.file(slot)?.long().clone())
    }

    /// The stored code at (`partition`, `rank`): the value byte, or the
    /// two-bit WDL code (in an engine directory possibly don't-care).
    pub fn probe_code(&self, partition: PartitionId, rank: Rank) -> Result<u8, FormatError> {
        self.code(partition, rank)
    }

    /// The stored position at (`partition`, `rank`), read for the game's kind;
    /// illegal indices give [`Stored::is_illegal`]. In an engine directory
    /// this is the stored code, which may be don't-care: use
    /// [`Tablebase::probe_position`] for the position's value.
    pub fn probe_stored(&self, partition: PartitionId, rank: Rank) -> Result<Stored, FormatError> {
        let code = self.code(partition, rank)?;
        if code < crate::value::SATURATED_LOSS || self.manifest.encoding != ValueEncoding::Byte {
            return Ok(self.manifest.encoding.decode(self.manifest.kind, code));
        }
        // A saturated byte: the exact distance may be in the file's long table.
        let slot = *self
            .by_partition
            .get(&partition)
            .ok_or(FormatError::NotInTablebase { partition })?;
        Ok(self.file(slot)?.decode_at(rank, code))
    }

    /// The [`Value`] byte at (`partition`, `rank`) (illegal indices give
    /// [`Value::ILLEGAL`]). Needs one-byte files: a 2-bit WDL tablebase has
    /// no distances (use [`Tablebase::probe_stored`]).
    pub fn probe_value(&self, partition: PartitionId, rank: Rank) -> Result<Value, FormatError> {
        if self.manifest.encoding != ValueEncoding::Byte {
            return Err(FormatError::Unsupported(format!(
                "{} stores {} values (win/draw/loss only); Value bytes need a `byte` tablebase",
                self.dir.display(),
                self.manifest.encoding
            )));
        }
        Ok(Value::from_byte(self.code(partition, rank)?))
    }

    /// The value of `pos` of `game` (which must be this tablebase's game):
    /// the stored one, or in an engine directory the one its one-ply search
    /// resolves (FORMAT.md, "Engine files"). Illegal and unreached indices
    /// give [`Stored::is_illegal`].
    pub fn probe_position<G: Game>(
        &self,
        game: &G,
        pos: &G::Position,
    ) -> Result<Stored, FormatError> {
        let (p, r) = game.rank(pos);
        if !self.is_engine() {
            return self.probe_stored(p, r);
        }
        // An engine file may store anything at an illegal index: the game
        // says which indices those are (after the rank is checked in range).
        let stored = self.code(p, r)?;
        let code = if (stored != 0 || game.derives_reach(p)) && game.unrank(p, r).is_none() {
            0
        } else {
            engine::resolve(self, game, pos, p, r)?
        };
        Ok(self.manifest.encoding.decode(self.manifest.kind, code))
    }

    /// Probes `pos` of `game`, checking first that `game` is the game this
    /// tablebase was built for (use [`GameTablebase`] to check once).
    pub fn probe<G: Game>(&self, game: &G, pos: &G::Position) -> crate::Result<ProbeResult> {
        self.check_game(game)?;
        probe_unchecked(self, game, pos)
    }

    /// An error unless `game` (id, parameters, kind) is this tablebase's game.
    pub fn check_game<G: Game>(&self, game: &G) -> Result<(), FormatError> {
        let info = game.info();
        if info.id != self.manifest.game
            || info.param_hash() != self.param_hash
            || info.kind != self.manifest.kind
        {
            return Err(FormatError::Mismatch {
                file: self.dir.display().to_string(),
                message: format!(
                    "holds {}, not {}",
                    self.manifest.canonical_game(),
                    info.canonical()
                ),
            });
        }
        Ok(())
    }
}

/// A tablebase bound to its game, checked once.
pub struct GameTablebase<G: Game> {
    game: G,
    tb: Tablebase,
}

impl<G: Game> GameTablebase<G> {
    /// Binds `tb` to `game`; an error if `tb` was built for another game or parameters.
    pub fn new(game: G, tb: Tablebase) -> Result<Self, FormatError> {
        tb.check_game(&game)?;
        Ok(GameTablebase { game, tb })
    }

    /// The game.
    pub fn game(&self) -> &G {
        &self.game
    }

    /// The tablebase.
    pub fn tablebase(&self) -> &Tablebase {
        &self.tb
    }

    /// Value, distance and best moves of `pos`.
    pub fn probe(&self, pos: &G::Position) -> crate::Result<ProbeResult> {
        probe_unchecked(&self.tb, &self.game, pos)
    }

    /// The best moves of `pos` as the game's moves (see [`ProbeResult::best_moves`]).
    pub fn best_moves(&self, pos: &G::Position) -> crate::Result<Vec<G::Move>> {
        Ok(analyse(&self.tb, &self.game, pos)?
            .best
            .into_iter()
            .map(|i| i.0)
            .collect())
    }
}

/// What a probe says about a position.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProbeResult {
    /// For the side to move (puzzles: win = goal reachable, draw = not).
    pub outcome: Outcome,
    /// Plies to the end under best play (puzzles: moves to the goal); `None`
    /// for draws and in WDL-only tablebases.
    pub distance: Option<u32>,
    /// The stored value byte; `None` in WDL-only tablebases.
    #[serde(skip)]
    pub value: Option<Value>,
    /// The moves that keep the optimal value: when winning, those to the
    /// quickest loss for the opponent; when losing, those to the opponent's
    /// slowest win; when drawing, those keeping the draw; in a puzzle, those
    /// one step closer to the goal. With WDL-only files, moves that keep the
    /// outcome (without distances, a winning line is not guaranteed to progress).
    pub best_moves: Vec<String>,
    /// Every legal move with the value it leads to, for the side that makes it.
    pub moves: Vec<MoveValue>,
}

/// One move and what it leads to, seen by the side that makes it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveValue {
    /// The move in the game's notation.
    #[serde(rename = "move")]
    pub mv: String,
    /// The position it leads to, in the game's notation (what a client
    /// sends back to follow the move).
    pub position: String,
    /// The outcome for the mover after this move.
    pub outcome: Outcome,
    /// Plies (puzzles: moves) to the end counting this move, where known.
    pub distance: Option<u32>,
}

struct Analysis<G: Game> {
    here: Stored,
    best: Vec<(G::Move, usize)>,
    moves: Vec<(G::Move, G::Position, Stored)>,
}

/// The value of `pos` alone, without its moves (the cheap probe an engine's
/// search makes): the stored or resolved value, checked against the
/// position's status. An error for an illegal or unreached position.
/// `game` must be `tb`'s game ([`Tablebase::check_game`]).
pub fn probe_value_only<G: Game>(
    tb: &Tablebase,
    game: &G,
    pos: &G::Position,
) -> crate::Result<Stored> {
    let (p, r) = game.rank(pos);
    let here = tb.probe_position(game, pos)?;
    let Some(outcome) = here.outcome else {
        // A layered partition stores 0 for every position the start does not
        // reach, legal or not: say which it is.
        if matches!(game.forward(p), Forward::Layer(_)) && game.unrank(p, r).is_some() {
            return Err(FormatError::NotReached {
                partition: p,
                rank: r,
            }
            .into());
        }
        return Err(FormatError::IllegalIndex {
            partition: p,
            rank: r,
        }
        .into());
    };
    let status = game.status(pos);
    let terminal_ok = match status {
        Status::Ongoing => true,
        Status::Lost => outcome == Outcome::Loss && here.distance.unwrap_or(0) == 0,
        Status::Drawn => outcome == Outcome::Draw,
        Status::Goal => outcome == Outcome::Win && here.distance.unwrap_or(0) == 0,
    };
    if !terminal_ok {
        return Err(FormatError::Mismatch {
            file: file_label(tb, p),
            message: format!(
                "stores {outcome} for {}, whose status is {status:?}: the tablebase does not match the game",
                game.format_position(pos)
            ),
        }
        .into());
    }
    Ok(here)
}

fn analyse<G: Game>(tb: &Tablebase, game: &G, pos: &G::Position) -> crate::Result<Analysis<G>> {
    let here = probe_value_only(tb, game, pos)?;
    let outcome = here
        .outcome
        .expect("probe_value_only rejects illegal positions");
    let kind = tb.kind();
    let status = game.status(pos);
    let mut moves = Vec::new();
    if status == Status::Ongoing {
        let mut succ = Vec::new();
        game.successors(pos, &mut succ);
        for (mv, s) in succ {
            let (sp, sr) = game.rank(&s);
            let v = tb.probe_position(game, &s)?;
            if v.is_illegal() {
                return Err(FormatError::Mismatch {
                    file: file_label(tb, sp),
                    message: format!(
                        "stores rank {sr} as illegal, but it follows from {} by a legal move",
                        game.format_position(pos)
                    ),
                }
                .into());
            }
            moves.push((mv, s, v));
        }
    }
    // The optimal successors: the outcome to move to, and which distance is
    // best among them (the opponent's slowest win when losing, else the quickest).
    let (want, slowest) = match (kind, outcome) {
        (GameKind::TwoPlayer, Outcome::Win) => (Some(Outcome::Loss), false),
        (GameKind::TwoPlayer, Outcome::Loss) => (Some(Outcome::Win), true),
        (GameKind::TwoPlayer, Outcome::Draw) => (Some(Outcome::Draw), false),
        (GameKind::Puzzle, Outcome::Win) => (Some(Outcome::Win), false),
        (GameKind::Puzzle, _) => (None, false),
    };
    let candidates: Vec<usize> = (0..moves.len())
        .filter(|&i| want.is_some() && moves[i].2.outcome == want)
        .collect();
    let distances = candidates.iter().map(|&i| moves[i].2.distance);
    let pick = if slowest {
        distances.max().flatten()
    } else {
        distances.min().flatten()
    };
    let best: Vec<usize> = candidates
        .into_iter()
        .filter(|&i| pick.is_none() || moves[i].2.distance == pick)
        .collect();
    let best = best.into_iter().map(|i| (moves[i].0.clone(), i)).collect();
    Ok(Analysis { here, best, moves })
}

fn file_label(tb: &Tablebase, p: PartitionId) -> String {
    tb.manifest
        .file_of(p)
        .map(|f| f.name.clone())
        .unwrap_or_else(|| format!("partition {p}"))
}

fn probe_unchecked<G: Game>(
    tb: &Tablebase,
    game: &G,
    pos: &G::Position,
) -> crate::Result<ProbeResult> {
    let a = analyse(tb, game, pos)?;
    let kind = tb.kind();
    let outcome = a.here.outcome.expect("analyse rejects illegal positions");
    let best_moves = a
        .best
        .iter()
        .map(|(mv, _)| game.format_move(pos, mv))
        .collect();
    let moves = a
        .moves
        .iter()
        .map(|(mv, succ, v)| {
            let o = v.outcome.expect("analyse rejects illegal successors");
            MoveValue {
                mv: game.format_move(pos, mv),
                position: game.format_position(succ),
                outcome: match (kind, o) {
                    (GameKind::TwoPlayer, Outcome::Win) => Outcome::Loss,
                    (GameKind::TwoPlayer, Outcome::Loss) => Outcome::Win,
                    (_, o) => o,
                },
                distance: v.distance.map(|d| d + 1),
            }
        })
        .collect();
    Ok(ProbeResult {
        outcome,
        distance: a.here.distance,
        value: a.here.value,
        best_moves,
        moves,
    })
}

/// What `tbforge probe DIR POSITION` reports.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ProbeReport {
    /// `game:params`.
    pub game: String,
    /// The position, as the game writes it.
    pub position: String,
    /// Its partition.
    pub partition: PartitionId,
    /// The partition's name.
    pub partition_name: String,
    /// Its rank inside the partition.
    pub rank: Rank,
    /// The probe's findings.
    #[serde(flatten)]
    pub result: ProbeResult,
    /// Two-player or puzzle: how the values read.
    #[serde(skip)]
    pub kind: GameKind,
}

impl ProbeReport {
    /// The human rendering `tbforge probe` prints.
    pub fn to_text(&self) -> String {
        let r = &self.result;
        let mut s = format!("{} {}\n", self.game, self.position);
        s += &format!(
            "partition {} ({}), rank {}\n",
            self.partition_name, self.partition, self.rank
        );
        s += &Stored::describe(self.kind, Some(r.outcome), r.distance);
        s.push('\n');
        if r.best_moves.is_empty() {
            s += "best moves: none\n";
        } else {
            s += &format!("best moves: {}\n", r.best_moves.join(" "));
        }
        for m in &r.moves {
            let value = Stored::describe(self.kind, Some(m.outcome), m.distance);
            s += &format!("  {:<8} {value}\n", m.mv);
        }
        s
    }
}

/// Opens the tablebase in `dir`, the game its manifest names, parses
/// `position` in that game's notation and probes it.
pub fn probe_text(dir: &Path, position: &str) -> crate::Result<ProbeReport> {
    let tb = Tablebase::open(dir)?;
    probe_text_in(&tb, position)
}

/// [`probe_text`] on an open tablebase.
pub fn probe_text_in(tb: &Tablebase, position: &str) -> crate::Result<ProbeReport> {
    let game = open_game(&tb.manifest.game, &tb.manifest.params)?;
    probe_text_with(tb, &game, position)
}

/// [`probe_text_in`] with the game already opened (opening one may build
/// tables: a server opens it once, not per probe). `game` must be the
/// tablebase's game; the probe checks it.
pub fn probe_text_with(
    tb: &Tablebase,
    game: &AnyGame,
    position: &str,
) -> crate::Result<ProbeReport> {
    struct Visit<'a> {
        tb: &'a Tablebase,
        text: &'a str,
    }
    impl GameVisitor for Visit<'_> {
        type Output = crate::Result<ProbeReport>;
        fn visit<G: Game>(self, game: &G) -> Self::Output {
            let pos = game.parse_position(self.text)?;
            let result = self.tb.probe(game, &pos)?;
            let (p, r) = game.rank(&pos);
            Ok(ProbeReport {
                game: game.info().canonical(),
                position: game.format_position(&pos),
                partition: p,
                partition_name: game.partition_name(p),
                rank: r,
                result,
                kind: game.info().kind,
            })
        }
    }
    game.visit(Visit { tb, text: position })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablebase_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Tablebase>();
        check::<GameTablebase<crate::game::tictactoe::TicTacToe>>();
    }
}
