//! `tbforge export DIR --engine OUT`: a compact, probe-only copy of a
//! tablebase (FORMAT.md, "Engine files").
//!
//! Every position whose value a one-ply search over its followed successors
//! gives (a move to a terminal position, or one the game's
//! [`Game::resolves`] names, such as a capture) is stored as don't-care: any
//! value no better than that bound, chosen to make runs that zstd stores in
//! a few bytes. Illegal indices and terminal positions are don't-care too
//! (the game says which they are). The prober re-derives the true value as
//! the better of the stored one and the bound, so answers are unchanged.
//! The same trick as the Syzygy and Kingsrow endgame databases' (captures
//! resolved by search instead of stored).

use crate::format::{
    read_manifest, write_engine_file, write_manifest, EngineInfo, FileEntry, FormatError, Manifest,
    ValueEncoding, ENGINE_FORMAT_VERSION,
};
use crate::game::{Game, GameKind};
use crate::probe::{bound, reached_by_predecessors, Codes, OpenOptions, Tablebase};
use crate::registry::{open_game, GameVisitor};
use crate::value::{PartitionId, Rank, Value};
use crate::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Settings of [`export_engine`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ExportOptions {
    /// Keep the distances (one-byte files); by default win/draw/loss
    /// only (two-bit files), what an engine's search probes.
    pub distance: bool,
    /// Write into an OUT that already holds files (replacing those of the
    /// same names).
    pub force: bool,
    /// How don't-care values are chosen.
    pub fill: DontCareFill,
}

/// How the exporter chooses a don't-care value (any value no better than
/// the position's bound). Each block starts afresh, so that blocks stay
/// independent of the threads that fill them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DontCareFill {
    /// The previous index's stored value where it is allowed, else the
    /// lowest value (a loss at once; puzzles: the goal unreachable).
    PreviousOrLowest,
    /// The previous index's stored value where allowed, else the bound.
    PreviousOrBound,
    /// Always the lowest value.
    Lowest,
    /// The fewest runs of equal values the don't-care indices allow: the
    /// smallest files of the four on the tablebases
    /// `scripts/bench_engine_files.sh` measures (Morris max=4: 2 % smaller
    /// than `PreviousOrLowest` with distances, 4 % WDL-only; Connect Four
    /// 5x4: 8 % and 6 %; `Lowest` 25 % to 90 % larger).
    #[default]
    Runs,
}

/// One engine file, as [`export_engine`] wrote it.
#[derive(Clone, Debug, Serialize)]
pub struct ExportRow {
    /// File name.
    pub name: String,
    /// Indices in the partition.
    pub index_size: u64,
    /// Legal indices.
    pub classes: u64,
    /// Legal indices stored as don't-care.
    pub dont_care: u64,
    /// The full file's bytes.
    pub source_bytes: u64,
    /// The engine file's bytes.
    pub bytes: u64,
}

/// What [`export_engine`] did.
#[derive(Clone, Debug, Serialize)]
pub struct ExportReport {
    /// The full tablebase read.
    pub source: String,
    /// The engine directory written.
    pub out: String,
    /// Whether distances were kept.
    pub distance: bool,
    /// How don't-care values were chosen.
    pub fill: DontCareFill,
    /// One row per file, in the manifest's order.
    pub files: Vec<ExportRow>,
    /// Indices over all files.
    pub index_size: u64,
    /// Legal indices stored as don't-care.
    pub dont_care: u64,
    /// Bytes of the full files.
    pub source_bytes: u64,
    /// Bytes of the engine files.
    pub bytes: u64,
    /// The engine files' bits per index.
    pub bits_per_position: f64,
}

/// Writes the engine files of the full tablebase in `dir` into `out`, with
/// a manifest that says they are engine files; the full tablebase is read,
/// never changed. Refuses a `dir` that is an engine directory itself, an
/// `out` that holds files (unless `force`), and distances from a WDL-only
/// tablebase.
pub fn export_engine(dir: &Path, out: &Path, options: &ExportOptions) -> Result<ExportReport> {
    let manifest = read_manifest(dir)?;
    if manifest.engine.is_some() {
        return Err(Error::NotAvailable(format!(
            "{} holds engine files already: export from the full tablebase it came from",
            dir.display()
        )));
    }
    if manifest.encoding == ValueEncoding::Wdl2 && options.distance {
        return Err(Error::NotAvailable(format!(
            "{} stores win/draw/loss only: export without --distance (or from a build with distances)",
            dir.display()
        )));
    }
    check_out(dir, out, options.force)?;
    let tb = Tablebase::open_with(dir, OpenOptions { cache_blocks: 1024 })?;
    let game = open_game(&manifest.game, &manifest.params)?;
    std::fs::create_dir_all(out).map_err(|e| FormatError::io("creating directory", out, e))?;
    game.visit(Export {
        tb: &tb,
        manifest: &manifest,
        out,
        options,
    })
}

/// OUT must not be DIR, nor hold anything unless `force`.
fn check_out(dir: &Path, out: &Path, force: bool) -> Result<()> {
    if let (Ok(a), Ok(b)) = (dir.canonicalize(), out.canonicalize()) {
        if a == b {
            return Err(Error::NotAvailable(format!(
                "{} is the tablebase being exported: give --engine another directory",
                out.display()
            )));
        }
    }
    match std::fs::read_dir(out).map(|mut entries| entries.next().is_some()) {
        Ok(true) if !force => Err(Error::NotAvailable(format!(
            "{} is not empty: give an empty or new directory, or --force to replace the files in it",
            out.display()
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            Err(Error::NotAvailable(format!(
                "{} is a file, not a directory: give a directory for the engine files",
                out.display()
            )))
        }
        Err(e) => Err(FormatError::io("reading directory", out, e).into()),
    }
}

struct Export<'a> {
    tb: &'a Tablebase,
    manifest: &'a Manifest,
    out: &'a Path,
    options: &'a ExportOptions,
}

impl GameVisitor for Export<'_> {
    type Output = Result<ExportReport>;
    fn visit<G: Game>(self, game: &G) -> Result<ExportReport> {
        self.tb.check_game(game)?;
        let m = self.manifest;
        let info = game.info();
        let encoding = if self.options.distance {
            m.encoding
        } else {
            ValueEncoding::Wdl2
        };
        let codes = Codes {
            encoding,
            kind: m.kind,
        };
        let mut files = Vec::with_capacity(m.files.len());
        let mut rows = Vec::with_capacity(m.files.len());
        for entry in &m.files {
            if encoding == ValueEncoding::Byte
                && !self.tb.long_distances(entry.partition)?.is_empty()
            {
                return Err(crate::Error::NotAvailable(format!(
                    "{}: distances beyond 253 plies do not fit an engine file yet; export without --distance (win/draw/loss)",
                    entry.name
                )));
            }
            let dont_care = AtomicU64::new(0);
            let path = self.out.join(&entry.name);
            let summary = write_engine_file(
                &path,
                &info,
                entry.partition,
                encoding,
                entry.index_size,
                |offset, buf: &mut [u8]| -> Result<()> {
                    let n = self.fill_block(game, codes, entry.partition, offset, buf)?;
                    dont_care.fetch_add(n, Ordering::Relaxed);
                    Ok(())
                },
            )?;
            let dont_care = dont_care.into_inner();
            files.push(FileEntry {
                bytes: summary.bytes,
                crc32: summary.crc32,
                ..entry.clone()
            });
            rows.push(ExportRow {
                name: entry.name.clone(),
                index_size: entry.index_size,
                classes: entry.classes,
                dont_care,
                source_bytes: entry.bytes,
                bytes: summary.bytes,
            });
        }
        let source_bytes = m.files.iter().map(|f| f.bytes).sum();
        let dont_care = rows.iter().map(|r| r.dont_care).sum();
        let engine = Manifest {
            format_version: ENGINE_FORMAT_VERSION,
            tbforge_version: env!("CARGO_PKG_VERSION").to_string(),
            encoding,
            engine: Some(EngineInfo {
                distance: encoding == ValueEncoding::Byte,
                dont_care,
                source_bytes,
            }),
            files,
            ..m.clone()
        };
        // Last, as a build does: a directory without its manifest is no
        // tablebase, so an export cut short is never mistaken for one.
        write_manifest(self.out, &engine)?;
        let bytes: u64 = rows.iter().map(|r| r.bytes).sum();
        let index_size = m.totals.index_size;
        Ok(ExportReport {
            source: self.tb.dir().display().to_string(),
            out: self.out.display().to_string(),
            distance: encoding == ValueEncoding::Byte,
            fill: self.options.fill,
            files: rows,
            index_size,
            dont_care,
            source_bytes,
            bytes,
            bits_per_position: bits_per(bytes, index_size),
        })
    }
}

/// `bytes` as bits per index (0 for no index).
pub fn bits_per(bytes: u64, indices: u64) -> f64 {
    if indices == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / indices as f64
    }
}

/// What an index must or may store.
enum Slot {
    /// Exactly this code.
    Fixed(u8),
    /// Anything: an illegal index, which the prober recognises by the game.
    Any,
    /// Any legal code: a terminal position, valued by its status.
    AnyLegal,
    /// Any legal code no better than this bound.
    AtMost(u8),
}

impl Export<'_> {
    /// Fills `buf` with the value bytes of indices `offset..` of partition
    /// `p`; returns how many legal ones are don't-care.
    fn fill_block<G: Game>(
        &self,
        game: &G,
        codes: Codes,
        p: PartitionId,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<u64> {
        let full = self.manifest.encoding;
        let kind = self.manifest.kind;
        // A full code in the engine files' encoding.
        let convert = |c: u8| match (full, codes.encoding) {
            (ValueEncoding::Byte, ValueEncoding::Wdl2) => {
                ValueEncoding::Wdl2.encode(kind, Value::from_byte(c))
            }
            _ => c,
        };
        let mut succ = Vec::new();
        let derives = game.derives_reach(p);
        let mut slots = Vec::with_capacity(buf.len());
        for i in 0..buf.len() {
            let r = Rank(offset + i as u64);
            let code = convert(self.tb.probe_code(p, r)?);
            let unranked = game.unrank(p, r);
            if let (Some(pos), true) = (&unranked, derives) {
                let reached = reached_by_predecessors(game, pos, |q, s| {
                    Ok::<_, Error>(convert(self.tb.probe_code(q, s)?))
                })?;
                if reached != (code != 0) {
                    return Err(Error::GameContract {
                        game: game.info().canonical(),
                        message: format!(
                            "{} is {} but its predecessors say otherwise: `predecessors` or `derives_reach` is wrong, and engine files would answer it wrongly",
                            game.format_position(pos),
                            if code != 0 { "reached" } else { "not reached" }
                        ),
                    });
                }
            }
            slots.push(match unranked {
                None => Slot::Any,
                // Its predecessors say it is unreached: nothing to store.
                Some(_) if code == 0 && derives => Slot::Any,
                Some(_) if code == 0 => Slot::Fixed(0),
                Some(pos) if codes.terminal(game.status(&pos)).is_some() => Slot::AnyLegal,
                Some(pos) => {
                    let e = bound(codes, game, &pos, p, &mut succ, |s| {
                        let (sp, sr) = game.rank(s);
                        Ok::<_, Error>(convert(self.tb.probe_code(sp, sr)?))
                    })?;
                    match e {
                        Some(e) if codes.key(code) < codes.key(e) => {
                            return Err(Error::GameContract {
                                game: game.info().canonical(),
                                message: format!(
                                    "{} stores a value below what one of its moves gives: the tablebase is not the game's minimax values, and engine files would answer it wrongly",
                                    game.format_position(&pos)
                                ),
                            })
                        }
                        Some(e) if codes.key(code) == codes.key(e) => Slot::AtMost(e),
                        _ => Slot::Fixed(code),
                    }
                }
            });
        }
        let dont_care = slots
            .iter()
            .filter(|s| matches!(s, Slot::AnyLegal | Slot::AtMost(_)))
            .count() as u64;
        let chosen = match self.options.fill {
            DontCareFill::Runs => fewest_runs(codes, &slots),
            fill => previous_or(codes, &slots, fill),
        };
        for (out, v) in buf.iter_mut().zip(chosen) {
            *out = codes.value_of(v);
        }
        Ok(dont_care)
    }
}

/// The lowest legal code: a loss at once (puzzles: the goal unreachable).
fn lowest(codes: Codes) -> u8 {
    match codes.kind {
        GameKind::TwoPlayer => codes.terminal(crate::game::Status::Lost),
        GameKind::Puzzle => Some(1),
    }
    .unwrap_or(1)
}

/// Each don't-care index takes the previous index's value where allowed,
/// else the lowest value or the bound (`fill`).
fn previous_or(codes: Codes, slots: &[Slot], fill: DontCareFill) -> Vec<u8> {
    let lowest = lowest(codes);
    let mut previous: Option<u8> = None;
    let mut out = Vec::with_capacity(slots.len());
    for slot in slots {
        let legal_previous = previous.filter(|&c| c != 0);
        let fallback = |e: u8| match fill {
            DontCareFill::PreviousOrBound => e,
            _ => lowest,
        };
        let v = match *slot {
            Slot::Fixed(c) => c,
            Slot::Any if fill == DontCareFill::Lowest => lowest,
            Slot::Any => previous.unwrap_or(0),
            Slot::AnyLegal => match fill {
                DontCareFill::Lowest => lowest,
                _ => legal_previous.unwrap_or(lowest),
            },
            Slot::AtMost(e) => match legal_previous {
                Some(c) if fill != DontCareFill::Lowest && codes.key(c) <= codes.key(e) => c,
                _ if codes.key(fallback(e)) <= codes.key(e) => fallback(e),
                _ => e,
            },
        };
        previous = Some(v);
        out.push(v);
    }
    out
}

/// The fewest runs of equal values the slots allow: each run is made as
/// long as one value fits every slot in it (greedy, which is optimal for
/// this: every slot allows a set of values closed downwards, a single
/// value or anything), then given the value a run most often has where the
/// slots leave a choice: a draw where allowed, else the highest allowed.
fn fewest_runs(codes: Codes, slots: &[Slot]) -> Vec<u8> {
    let mut out = Vec::with_capacity(slots.len());
    let mut previous: Option<u8> = None;
    let mut i = 0;
    while i < slots.len() {
        let mut fixed: Option<u8> = None;
        let mut cap: Option<u8> = None;
        let mut legal = false;
        let mut j = i;
        while j < slots.len() {
            let (f, c, l) = match slots[j] {
                Slot::Any => (fixed, cap, legal),
                Slot::AnyLegal => (fixed, cap, true),
                Slot::AtMost(e) => (
                    fixed,
                    Some(cap.map_or(e, |c| if codes.key(e) < codes.key(c) { e } else { c })),
                    true,
                ),
                Slot::Fixed(v) => match fixed {
                    Some(f) if f != v => break,
                    _ => (Some(v), cap, legal),
                },
            };
            let fits = match f {
                Some(v) => (!l || v != 0) && c.is_none_or(|c| codes.key(v) <= codes.key(c)),
                None => true,
            };
            if !fits {
                break;
            }
            (fixed, cap, legal) = (f, c, l);
            j += 1;
        }
        let v = match (fixed, cap) {
            (Some(v), _) => v,
            (None, Some(c)) if codes.key(1) <= codes.key(c) => 1,
            (None, Some(c)) => c,
            (None, None) if legal => previous.filter(|&p| p != 0).unwrap_or(1),
            (None, None) => previous.unwrap_or(0),
        };
        out.extend(std::iter::repeat_n(v, j - i));
        previous = Some(v);
        i = j;
    }
    out
}
