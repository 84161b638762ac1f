//! `tbforge verify`: every file against the manifest, every block against its
//! checksum, every header against the game; `--deep` re-derives sampled
//! positions from their successors.

use crate::format::{
    count, read_manifest, Counts, FileEntry, FormatError, Manifest, Stored, TableFile, Totals,
    ValueEncoding, MANIFEST_NAME,
};
use crate::game::{Forward, Game, GameKind, Status};
use crate::probe::Tablebase;
use crate::registry::{open_game, GameVisitor};
use crate::value::{Outcome, PartitionId, Rank, Value, Weights};
use serde::Serialize;
use std::io::Read;
use std::path::Path;

/// Settings for [`verify_dir_with`].
#[derive(Clone, Copy, Debug)]
pub struct VerifyOptions {
    /// Re-derive sampled positions from their successors.
    pub deep: bool,
    /// At most this many positions sampled per file in a deep check.
    pub samples_per_file: u64,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            deep: false,
            samples_per_file: 2000,
        }
    }
}

/// What `tbforge verify` found; `--json` prints it as is.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// The directory checked.
    pub dir: String,
    /// True if every check passed.
    pub ok: bool,
    /// Whether positions were re-derived.
    pub deep: bool,
    /// Files the manifest lists.
    pub files_checked: usize,
    /// Blocks whose checksum was checked.
    pub blocks_checked: u64,
    /// Positions re-derived from their successors (deep).
    pub positions_sampled: u64,
    /// Problems with the manifest itself or with the set of files.
    pub manifest_failures: Vec<String>,
    /// One entry per file, in manifest order.
    pub files: Vec<FileCheck>,
}

/// The checks of one file.
#[derive(Clone, Debug, Serialize)]
pub struct FileCheck {
    /// The file's name.
    pub name: String,
    /// Its partition.
    pub partition: PartitionId,
    /// True if every check of this file passed.
    pub ok: bool,
    /// Blocks checked.
    pub blocks: u64,
    /// Positions re-derived (deep).
    pub sampled: u64,
    /// What failed; `block` is set where a single block is at fault.
    pub failures: Vec<BlockFailure>,
}

/// One failed check.
#[derive(Clone, Debug, Serialize)]
pub struct BlockFailure {
    /// The block, when the failure is inside one.
    pub block: Option<u64>,
    /// What failed.
    pub message: String,
}

impl FileCheck {
    fn fail(&mut self, block: Option<u64>, message: impl Into<String>) {
        self.failures.push(BlockFailure {
            block,
            message: message.into(),
        });
    }
}

/// Verifies the tablebase in `dir` (deep: re-derive samples too).
pub fn verify_dir(dir: &Path, deep: bool) -> Result<VerifyReport, FormatError> {
    verify_dir_with(
        dir,
        &VerifyOptions {
            deep,
            ..VerifyOptions::default()
        },
    )
}

/// Verifies the tablebase in `dir`, opening the game its manifest names from
/// the registry. Every problem found is a failure in the report; `Err` is
/// kept for the directory itself being unreadable.
pub fn verify_dir_with(dir: &Path, options: &VerifyOptions) -> Result<VerifyReport, FormatError> {
    verify(dir, options, |m| {
        open_game(&m.game, &m.params).map_err(|e| e.to_string())
    })
}

/// Verifies the tablebase in `dir` as one of `game`, a game the registry need
/// not know (an engine's own, a test's): its sizes, names, weights and, deep,
/// its rules are the reference.
pub fn verify_game_dir<G: Game>(
    game: &G,
    dir: &Path,
    options: &VerifyOptions,
) -> Result<VerifyReport, FormatError> {
    verify(dir, options, |_| Ok(Given(game)))
}

/// A game generic verification code can be handed to.
trait VisitGame {
    fn visit_game<V: GameVisitor>(&self, visitor: V) -> V::Output;
}

impl VisitGame for crate::registry::AnyGame {
    fn visit_game<V: GameVisitor>(&self, visitor: V) -> V::Output {
        self.visit(visitor)
    }
}

struct Given<'a, G>(&'a G);

impl<G: Game> VisitGame for Given<'_, G> {
    fn visit_game<V: GameVisitor>(&self, visitor: V) -> V::Output {
        visitor.visit(self.0)
    }
}

fn verify<S: VisitGame>(
    dir: &Path,
    options: &VerifyOptions,
    open: impl FnOnce(&Manifest) -> Result<S, String>,
) -> Result<VerifyReport, FormatError> {
    if !dir.is_dir() {
        return Err(FormatError::io(
            "opening tablebase directory",
            dir,
            std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
        ));
    }
    let mut report = VerifyReport {
        dir: dir.display().to_string(),
        ok: false,
        deep: options.deep,
        files_checked: 0,
        blocks_checked: 0,
        positions_sampled: 0,
        manifest_failures: Vec::new(),
        files: Vec::new(),
    };
    let manifest = match read_manifest(dir) {
        Ok(m) => m,
        Err(e) => {
            report.manifest_failures.push(e.to_string());
            return Ok(report);
        }
    };
    check_manifest(&manifest, &mut report.manifest_failures);
    let game = open(&manifest);
    // Whether the manifest describes exactly the game it names: only then
    // can the deep check unrank its files' indices in that game.
    let (game_matches, known) = match &game {
        Ok(g) => {
            let before = report.manifest_failures.len();
            let known = g.visit_game(GameChecks {
                manifest: &manifest,
                failures: &mut report.manifest_failures,
            });
            (report.manifest_failures.len() == before, known)
        }
        Err(e) => {
            report
                .manifest_failures
                .push(format!("the manifest's game cannot be opened: {e}"));
            (false, vec![false; manifest.files.len()])
        }
    };
    // Each file's weights come from the game: without it the weighted
    // counts cannot be re-computed (the failure above says why).
    let checks = match &game {
        Ok(g) => g.visit_game(FileChecks {
            dir,
            manifest: &manifest,
            known: &known,
        }),
        Err(_) => check_files(dir, &manifest, |_| None),
    };
    report.blocks_checked = checks.iter().map(|c| c.blocks).sum();
    report.files = checks;
    report.files_checked = report.files.len();

    if options.deep {
        match (&game, Tablebase::open(dir)) {
            (Ok(_), _) if !game_matches => report.manifest_failures.push(
                "deep check skipped: the manifest does not describe the game it names".into(),
            ),
            (Ok(g), Ok(tb)) => {
                let sampled = g.visit_game(Deep {
                    tb: &tb,
                    files: &mut report.files,
                    samples: options.samples_per_file.max(1),
                });
                report.positions_sampled = sampled;
            }
            (Err(_), _) => report
                .manifest_failures
                .push("deep check skipped: the game cannot be opened".into()),
            (_, Err(e)) => report
                .manifest_failures
                .push(format!("deep check skipped: {e}")),
        }
    }
    for f in &mut report.files {
        f.ok = f.failures.is_empty();
    }
    report.ok = report.manifest_failures.is_empty() && report.files.iter().all(|f| f.ok);
    Ok(report)
}

/// Internal consistency of the manifest: totals, hash text, names, duplicates.
fn check_manifest(m: &Manifest, failures: &mut Vec<String>) {
    if m.param_hash_value().is_none() {
        failures.push(format!(
            "param_hash `{}` is not 16 lowercase hex digits",
            m.param_hash
        ));
    }
    match Totals::checked_sum(&m.files) {
        Some(totals) if totals == m.totals => {}
        Some(totals) => failures.push(format!(
            "totals {:?} are not the sums over its files {:?}",
            m.totals, totals
        )),
        None => failures.push("the files' counts add up to more than 2^64".into()),
    }
    if let (Some(layers), Some(reachable)) = (&m.layers, m.totals.reachable) {
        match layers.iter().try_fold(0u64, |a, &b| a.checked_add(b)) {
            Some(sum) if sum == reachable => {}
            Some(sum) => failures.push(format!(
                "layers sum to {sum}, totals.reachable is {reachable}"
            )),
            None => failures.push("the layers add up to more than 2^64".into()),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for f in &m.files {
        if !seen.insert(f.partition) {
            failures.push(format!("partition {} is listed twice", f.partition));
        }
        if !names.insert(&f.name) {
            failures.push(format!("file {} is listed twice", f.name));
        }
        if f.name.is_empty() || f.name.contains(['/', '\\']) || f.name.starts_with('.') {
            failures.push(format!("file name `{}` is not a plain file name", f.name));
        }
        let sum = |n: &[u64]| n.iter().try_fold(0u64, |a, &b| a.checked_add(b));
        for (parts, whole, what) in [
            (
                [f.wins, f.draws, f.losses],
                f.positions,
                "wins + draws + losses != positions",
            ),
            (
                [f.class_wins, f.class_draws, f.class_losses],
                f.classes,
                "class_wins + class_draws + class_losses != classes",
            ),
            (
                [f.classes, f.illegal, 0],
                f.index_size,
                "classes + illegal != index_size",
            ),
        ] {
            if sum(&parts) != Some(whole) {
                failures.push(format!("{}: {what}", f.name));
            }
        }
        // A forward search counts every file's reachable positions and
        // records its layers: both or neither. Reached positions are legal.
        if f.reachable.is_some() != m.layers.is_some() {
            failures.push(format!(
                "{}: reachable is {}, but the manifest {} layers (a forward search gives both)",
                f.name,
                if f.reachable.is_some() {
                    "given"
                } else {
                    "null"
                },
                if m.layers.is_some() { "has" } else { "has no" }
            ));
        }
        // The forward search counts indices, so it is bounded by the classes.
        if let Some(reachable) = f.reachable {
            if reachable > f.classes {
                failures.push(format!(
                    "{}: {reachable} reachable, more than its {}",
                    f.name,
                    count(f.classes, "legal index", "legal indices")
                ));
            }
        }
    }
}

/// Checks that need the game: identity and partition sizes. Says of each
/// file whether it is one of the game's partitions.
struct GameChecks<'a> {
    manifest: &'a Manifest,
    failures: &'a mut Vec<String>,
}

impl GameVisitor for GameChecks<'_> {
    type Output = Vec<bool>;
    fn visit<G: Game>(self, game: &G) -> Vec<bool> {
        let info = game.info();
        let m = self.manifest;
        if m.param_hash_value() != Some(info.param_hash()) {
            self.failures.push(format!(
                "param_hash {} is not the hash of {} ({:016x})",
                m.param_hash,
                info.canonical(),
                info.param_hash()
            ));
        }
        if info.params != m.params {
            self.failures.push(format!(
                "params `{}` are not the canonical parameters of the game they open (`{}`)",
                m.canonical_game(),
                info.canonical()
            ));
        }
        if info.kind != m.kind {
            self.failures.push(format!(
                "kind {:?}, but {} is {:?}",
                m.kind, info.id, info.kind
            ));
        }
        let partitions = game.partitions();
        // One file per partition, in the game's solving order, as builds write them.
        let listed: Vec<PartitionId> = m.files.iter().map(|f| f.partition).collect();
        if listed != partitions {
            let at = listed
                .iter()
                .zip(&partitions)
                .position(|(a, b)| a != b)
                .unwrap_or(listed.len().min(partitions.len()));
            let describe = |p: Option<&PartitionId>| {
                p.map_or("nothing".to_string(), |p| format!("partition {p}"))
            };
            self.failures.push(format!(
                "the manifest lists {} where {} has {} in solving order; entry {at} is {}, the game's is {}",
                count(listed.len() as u64, "file", "files"),
                info.id,
                count(partitions.len() as u64, "partition", "partitions"),
                describe(listed.get(at)),
                describe(partitions.get(at))
            ));
        }
        let mut known = Vec::with_capacity(m.files.len());
        for f in &m.files {
            if !partitions.contains(&f.partition) {
                self.failures.push(format!(
                    "{}: partition {} is not a partition of {}",
                    f.name, f.partition, info.id
                ));
                known.push(false);
                continue;
            }
            known.push(true);
            let size = game.partition_size(f.partition);
            if size != f.index_size {
                self.failures.push(format!(
                    "{}: {}, but partition {} has {size}",
                    f.name,
                    count(f.index_size, "index", "indices"),
                    f.partition
                ));
            }
            // A layered partition stores exactly the positions the forward
            // search reached there: every other index holds 0.
            if matches!(game.forward(f.partition), Forward::Layer(_)) {
                if let Some(reachable) = f.reachable.filter(|&r| r != f.classes) {
                    self.failures.push(format!(
                        "{}: {reachable} reachable, but {} stored (a layered partition stores exactly its reached positions)",
                        f.name,
                        count(f.classes, "legal index", "legal indices")
                    ));
                }
            }
            let name = game.partition_name(f.partition);
            if name != f.partition_name {
                self.failures.push(format!(
                    "{}: partition name `{}`, the game calls it `{name}`",
                    f.name, f.partition_name
                ));
            }
        }
        known
    }
}

/// Every file's checks, with the game's weights for the files that are its
/// partitions (`known`).
struct FileChecks<'a> {
    dir: &'a Path,
    manifest: &'a Manifest,
    known: &'a [bool],
}

impl GameVisitor for FileChecks<'_> {
    type Output = Vec<FileCheck>;
    fn visit<G: Game>(self, game: &G) -> Vec<FileCheck> {
        let m = self.manifest;
        check_files(self.dir, m, |i| {
            self.known[i].then(|| game.weights(m.files[i].partition))
        })
    }
}

/// Checks every file of `m`, the `i`th with `weights_of(i)`: fetched file by
/// file, so that only the files being checked hold theirs (a symmetry-class
/// index's exceptions can be many).
fn check_files(
    dir: &Path,
    m: &Manifest,
    weights_of: impl Fn(usize) -> Option<Weights> + Sync,
) -> Vec<FileCheck> {
    let check = |(i, entry): (usize, &FileEntry)| check_file(dir, m, entry, weights_of(i).as_ref());
    #[cfg(feature = "build")]
    {
        use rayon::prelude::*;
        // Files are independent; collect keeps manifest order.
        m.files.par_iter().enumerate().map(check).collect()
    }
    #[cfg(not(feature = "build"))]
    m.files.iter().enumerate().map(check).collect()
}

/// Whole-file size and crc32, header, every block, counts: the classes
/// always, the weighted counts where the game gave the file's `weights`.
fn check_file(dir: &Path, m: &Manifest, entry: &FileEntry, weights: Option<&Weights>) -> FileCheck {
    let mut c = FileCheck {
        name: entry.name.clone(),
        partition: entry.partition,
        ok: false,
        blocks: 0,
        sampled: 0,
        failures: Vec::new(),
    };
    if entry.name.is_empty() || entry.name.contains(['/', '\\']) || entry.name == MANIFEST_NAME {
        c.fail(None, "not a plain tablebase file name");
        return c;
    }
    let path = dir.join(&entry.name);
    // Streamed: files can be far larger than memory.
    let whole = std::fs::File::open(&path).and_then(|mut f| {
        let mut crc = crc32fast::Hasher::new();
        let mut len = 0u64;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                return Ok((len, crc.finalize()));
            }
            len += n as u64;
            crc.update(&buf[..n]);
        }
    });
    let (len, crc) = match whole {
        Ok(x) => x,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            c.fail(None, "missing");
            return c;
        }
        Err(e) => {
            c.fail(None, format!("cannot be read: {e}"));
            return c;
        }
    };
    if len != entry.bytes {
        c.fail(
            None,
            format!(
                "{}, the manifest says {}",
                count(len, "byte", "bytes"),
                entry.bytes
            ),
        );
    }
    if crc != entry.crc32 {
        c.fail(
            None,
            format!(
                "whole-file crc32 {crc:08x}, the manifest says {:08x}",
                entry.crc32
            ),
        );
    }
    let file = match TableFile::open_read(&path) {
        Ok(f) => f,
        Err(e) => {
            c.fail(block_of(&e), e.to_string());
            return c;
        }
    };
    let h = file.header();
    let mut mismatch = |what: String| c.fail(None, format!("header: {what}"));
    if h.game != m.game {
        mismatch(format!("game `{}`, the manifest's is `{}`", h.game, m.game));
    }
    if Some(h.param_hash) != m.param_hash_value() {
        mismatch(format!(
            "parameter hash {:016x}, the manifest's is {}",
            h.param_hash, m.param_hash
        ));
    }
    if h.kind != m.kind {
        mismatch(format!("kind {:?}, the manifest's is {:?}", h.kind, m.kind));
    }
    if h.partition != entry.partition {
        mismatch(format!(
            "partition {}, the manifest's is {}",
            h.partition, entry.partition
        ));
    }
    if h.encoding != m.encoding {
        mismatch(format!(
            "encoding {}, the manifest's is {}",
            h.encoding, m.encoding
        ));
    }
    if h.engine != m.engine.is_some() {
        mismatch(format!(
            "{}, the manifest's is {}",
            if h.engine {
                "an engine file"
            } else {
                "a full file"
            },
            if m.engine.is_some() {
                "an engine directory"
            } else {
                "a full tablebase"
            }
        ));
    }
    if h.index_size != entry.index_size {
        mismatch(format!(
            "{}, the manifest says {}",
            count(h.index_size, "index", "indices"),
            entry.index_size
        ));
    }
    let one = Weights::one();
    let mut counts = Counts::default();
    let mut complete = true;
    for block in 0..h.block_count {
        c.blocks += 1;
        match file.read_block(block) {
            Ok(raw) => {
                let codes: Vec<u8> = (0..h.positions_in(block))
                    .map(|i| file.code_in(&raw, i))
                    .collect();
                let start = Rank(block * u64::from(h.block_positions));
                counts.add_codes(m.kind, m.encoding, weights.unwrap_or(&one), start, &codes);
            }
            Err(e) => {
                complete = false;
                c.fail(block_of(&e).or(Some(block)), e.to_string());
            }
        }
    }
    // An engine file's stored values are partly don't-care (FORMAT.md,
    // "Engine files"): its counts are the full tablebase's, which only the
    // prober's resolution (`--deep`) reaches.
    if let Err(message) = file.long().check(h.index_size, |r| {
        let bp = u64::from(h.block_positions);
        file.read_block(r / bp)
            .map_or(0, |raw| file.code_in(&raw, r % bp))
    }) {
        c.fail(None, format!("long distances: {message}"));
    }
    counts.add_long(file.long());
    if complete && m.engine.is_none() {
        let (got, want) = (counts.class_counts(), entry.class_counts());
        if got != want {
            c.fail(
                None,
                format!("stored values count classes, their wins/draws/losses and illegal indices {got:?}, the manifest says {want:?}"),
            );
        }
        if weights.is_some() {
            let (got, want) = (counts.weighted_counts(), entry.weighted_counts());
            if got != want {
                c.fail(
                    None,
                    format!("stored values weigh to positions, wins, draws and losses {got:?}, the manifest says {want:?}"),
                );
            }
        }
        if m.encoding == ValueEncoding::Byte
            && (counts.longest_win, counts.max_distance) != (entry.longest_win, entry.max_distance)
        {
            c.fail(
                None,
                format!(
                    "stored values give longest win {:?} and max distance {:?}, the manifest says {:?} and {:?}",
                    counts.longest_win, counts.max_distance, entry.longest_win, entry.max_distance
                ),
            );
        }
    }
    c
}

fn block_of(e: &FormatError) -> Option<u64> {
    match e {
        FormatError::Corrupt { block, .. } => *block,
        _ => None,
    }
}

/// Re-derives sampled positions of every file from their successors' stored values.
struct Deep<'a> {
    tb: &'a Tablebase,
    files: &'a mut Vec<FileCheck>,
    samples: u64,
}

impl GameVisitor for Deep<'_> {
    type Output = u64;
    fn visit<G: Game>(self, game: &G) -> u64 {
        let mut total = 0;
        let kind = game.info().kind;
        let encoding = self.tb.encoding();
        let mut succ = Vec::new();
        for check in self.files.iter_mut() {
            // A file that failed its checks cannot be probed meaningfully.
            if !check.failures.is_empty() {
                continue;
            }
            let p = check.partition;
            // Indices a layered partition's forward search did not reach are
            // stored as 0 whether legal or not (`Forward::Layer`).
            let layered = matches!(game.forward(p), Forward::Layer(_));
            let size = game.partition_size(p);
            let step = size.div_ceil(self.samples).max(1);
            let mut r = 0;
            while r < size {
                let rank = Rank(r);
                r += step;
                let stored = match self.tb.probe_stored(p, rank) {
                    Ok(s) => s,
                    Err(e) => {
                        check.fail(None, format!("rank {rank}: {e}"));
                        break;
                    }
                };
                let pos = game.unrank(p, rank);
                // An engine file stores anything at an illegal index, and
                // don't-care values the one-ply search resolves elsewhere.
                let engine = self.tb.is_engine();
                let stored = match &pos {
                    Some(pos) if engine => match self.tb.probe_position(game, pos) {
                        Ok(s) => s,
                        Err(e) => {
                            check.fail(None, format!("rank {rank}: {e}"));
                            break;
                        }
                    },
                    _ => stored,
                };
                let Some(pos) = pos else {
                    if !stored.is_illegal() && !engine {
                        check.fail(
                            None,
                            format!(
                                "rank {rank} is illegal for the game but stores {:?}",
                                stored.outcome
                            ),
                        );
                    }
                    continue;
                };
                if stored.is_illegal() && layered {
                    continue;
                }
                if stored.is_illegal() {
                    check.fail(
                        None,
                        format!(
                            "rank {rank} ({}) is legal but stored as illegal",
                            game.format_position(&pos)
                        ),
                    );
                    continue;
                }
                check.sampled += 1;
                total += 1;
                match derive(self.tb, game, kind, &pos, &mut succ) {
                    Ok((expected, distance)) => {
                        let same = match encoding {
                            ValueEncoding::Byte => {
                                stored.value == Some(expected) && stored.distance == distance
                            }
                            ValueEncoding::Wdl2 => {
                                stored.outcome
                                    == encoding
                                        .decode(kind, encoding.encode(kind, expected))
                                        .outcome
                            }
                        };
                        if !same {
                            check.fail(
                                None,
                                format!(
                                    "rank {rank} ({}) stores {}, its successors give {}",
                                    game.format_position(&pos),
                                    describe(kind, stored.outcome, stored.distance),
                                    describe(kind, Some(outcome_of(kind, expected)), distance),
                                ),
                            );
                        }
                    }
                    Err(e) => check.fail(None, format!("rank {rank}: {e}")),
                }
                if check.failures.len() >= 20 {
                    check.fail(None, "too many failures; stopped sampling this file");
                    break;
                }
            }
        }
        total
    }
}

fn outcome_of(kind: GameKind, v: Value) -> Outcome {
    Stored::from_value(kind, v).outcome.unwrap_or(Outcome::Draw)
}

fn describe(kind: GameKind, o: Option<Outcome>, d: Option<u32>) -> String {
    Stored::describe(kind, o, d)
}

/// The value of `pos` from its successors' stored values, by the solver's rules,
/// written independently of it: the value byte (saturated beyond a byte's
/// distances) and the exact distance. In WDL-only tablebases the successors'
/// distances are unknown; the outcome is still exact (distance 0 or 1 stands in).
fn derive<G: Game>(
    tb: &Tablebase,
    game: &G,
    kind: GameKind,
    pos: &G::Position,
    succ: &mut Vec<(G::Move, G::Position)>,
) -> Result<(Value, Option<u32>), String> {
    let at = |d: u32| Ok((Value::saturated(d), Some(d)));
    match (kind, game.status(pos)) {
        (GameKind::TwoPlayer, Status::Lost) | (GameKind::Puzzle, Status::Goal) => return at(0),
        (GameKind::TwoPlayer, Status::Drawn) => return Ok((Value::DRAW, None)),
        (_, Status::Ongoing) => {}
        (k, s) => return Err(format!("status {s:?} in a {k:?} game")),
    }
    succ.clear();
    game.successors(pos, succ);
    if succ.is_empty() && kind == GameKind::TwoPlayer {
        return Err("no moves, yet the status is Ongoing".into());
    }
    let mut quickest_win: Option<u32> = None; // distance of the opponent's quickest loss
    let mut slowest_loss = 0; // distance of the opponent's slowest win
    let mut all_opponent_wins = true;
    let mut nearest_goal: Option<u32> = None;
    for (_, s) in succ.iter() {
        let (sp, sr) = game.rank(s);
        let v = tb.probe_position(game, s).map_err(|e| e.to_string())?;
        let d = v.distance.unwrap_or(match v.outcome {
            // WDL only: any distance of the right parity keeps the outcome.
            Some(Outcome::Win) => 1,
            _ => 0,
        });
        match (kind, v.outcome) {
            (_, None) => {
                return Err(format!(
                    "successor {} (partition {sp}, rank {sr}) is stored as illegal",
                    game.format_position(s)
                ))
            }
            (GameKind::TwoPlayer, Some(Outcome::Loss)) => {
                quickest_win = Some(quickest_win.map_or(d, |q| q.min(d)));
                all_opponent_wins = false;
            }
            (GameKind::TwoPlayer, Some(Outcome::Win)) => slowest_loss = slowest_loss.max(d),
            (GameKind::TwoPlayer, Some(Outcome::Draw)) => all_opponent_wins = false,
            (GameKind::Puzzle, Some(Outcome::Win)) => {
                nearest_goal = Some(nearest_goal.map_or(d, |n| n.min(d)))
            }
            (GameKind::Puzzle, _) => {}
        }
    }
    match kind {
        GameKind::TwoPlayer => match quickest_win {
            Some(d) => at(d + 1),
            None if all_opponent_wins => at(slowest_loss + 1),
            None => Ok((Value::DRAW, None)),
        },
        GameKind::Puzzle => nearest_goal.map_or(Ok((Value::DRAW, None)), |d| at(d + 1)),
    }
}

/// The human rendering `tbforge verify` prints.
pub fn render_verify_text(r: &VerifyReport) -> String {
    let mut s = String::new();
    for m in &r.manifest_failures {
        s += &format!("FAIL manifest: {m}\n");
    }
    for f in &r.files {
        if f.ok {
            continue;
        }
        for x in &f.failures {
            match x.block {
                Some(b) => s += &format!("FAIL {} block {b}: {}\n", f.name, x.message),
                None => s += &format!("FAIL {}: {}\n", f.name, x.message),
            }
        }
    }
    let failed = r.files.iter().filter(|f| !f.ok).count() as u64;
    let verdict = if r.ok {
        "all checks passed".to_string()
    } else {
        let files = (failed > 0).then(|| count(failed, "file", "files"));
        let manifest = (!r.manifest_failures.is_empty()).then(|| "the manifest".to_string());
        let what: Vec<String> = files.into_iter().chain(manifest).collect();
        format!("FAILED ({})", what.join(" and "))
    };
    s += &format!(
        "{}: {}, {} checked{}; {verdict}\n",
        r.dir,
        count(r.files_checked as u64, "file", "files"),
        count(r.blocks_checked, "block", "blocks"),
        if r.deep {
            format!(
                ", {} re-derived",
                count(r.positions_sampled, "position", "positions")
            )
        } else {
            String::new()
        },
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(files: &[(&str, bool)], blocks: u64, manifest_ok: bool, deep: bool) -> VerifyReport {
        let files: Vec<FileCheck> = files
            .iter()
            .enumerate()
            .map(|(i, &(name, ok))| FileCheck {
                name: name.into(),
                partition: PartitionId(i as u32),
                ok,
                blocks: 1,
                sampled: 0,
                failures: if ok {
                    Vec::new()
                } else {
                    vec![BlockFailure {
                        block: Some(0),
                        message: "checksum".into(),
                    }]
                },
            })
            .collect();
        let manifest_failures = if manifest_ok {
            Vec::new()
        } else {
            vec!["totals".to_string()]
        };
        VerifyReport {
            dir: "tb".into(),
            ok: manifest_ok && files.iter().all(|f| f.ok),
            deep,
            files_checked: files.len(),
            blocks_checked: blocks,
            positions_sampled: if deep { 1 } else { 0 },
            manifest_failures,
            files,
        }
    }

    #[test]
    fn counts_in_the_summary_agree_with_their_nouns() {
        let last = |r: &VerifyReport| render_verify_text(r).lines().last().unwrap().to_string();
        assert_eq!(
            last(&report(&[("a.tbf", true)], 1, true, true)),
            "tb: 1 file, 1 block checked, 1 position re-derived; all checks passed"
        );
        assert_eq!(
            last(&report(&[("a.tbf", true), ("b.tbf", true)], 7, true, false)),
            "tb: 2 files, 7 blocks checked; all checks passed"
        );
        assert_eq!(
            last(&report(
                &[("a.tbf", false), ("b.tbf", true)],
                2,
                true,
                false
            )),
            "tb: 2 files, 2 blocks checked; FAILED (1 file)"
        );
        assert_eq!(
            last(&report(
                &[("a.tbf", false), ("b.tbf", false)],
                2,
                false,
                false
            )),
            "tb: 2 files, 2 blocks checked; FAILED (2 files and the manifest)"
        );
        assert_eq!(
            last(&report(&[], 0, false, false)),
            "tb: 0 files, 0 blocks checked; FAILED (the manifest)"
        );
        let text = render_verify_text(&report(&[("a.tbf", false)], 1, false, false));
        assert!(text.starts_with("FAIL manifest: totals\nFAIL a.tbf block 0: checksum\n"));
    }
}
