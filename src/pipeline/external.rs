//! Retrograde analysis of a partition too large for memory.
//!
//! The same passes as the in-memory solver (see `solve`'s retro module), with
//! every array on disk and processed in chunks:
//!
//! - **expand**: stream the partition's chunks (a reader thread fills the next
//!   chunk while the current one is expanded); every successor that must be
//!   looked up becomes a request record `(successor rank, requester rank)` in a
//!   write buffer bucketed by the successor's chunk, radix-sorted and flushed
//!   to run files;
//! - **answer**: for each bucket, load that chunk of values and turn each request
//!   into an answer `(requester rank, successor value)` bucketed by the
//!   requester's chunk;
//! - **combine**: stream the partition's chunks again, apply the answers, decide,
//!   write the chunk back.
//!
//! The first pass looks up successors in earlier partitions and keeps, per
//! position, a 3-byte summary of them, so later passes only exchange requests
//! inside the partition. Every rule is the in-memory solver's (`solve::rules`),
//! applied in an order-independent way, so the bytes are the same for any
//! chunk size, thread count or disk layout; a pass interrupted at any point and
//! run again gives the same result, which is what makes `--resume` exact.

use super::disks::{ByteFile, ScratchDisks};
use super::runs::{
    prefetch_bucket, read_bucket, sync_runs, Blocks, Order, Record, RunIndex, RunWriter,
    MAX_BUCKETS,
};
use super::stats::{IoStats, Part};
use crate::game::Layout;
use crate::game::{Game, GameKind, Status};
use crate::progress::Progress;
use crate::value::rules::{at, PassAcc, PENDING};
use crate::value::{Rank, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Chunking of an external solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExternalPlan {
    /// Positions per chunk (a multiple of 64).
    pub chunk: u64,
    /// Positions per lookup range: the answer step holds one such range of a
    /// partition's values (a byte each) while it answers the requests for
    /// it. Requests are bucketed by lookup range, so the larger it is, the
    /// fewer buckets and the longer each write of a flushed buffer.
    pub lookup_chunk: u64,
    /// Records a write buffer holds before it flushes.
    pub run_capacity: usize,
    /// How often a pass makes its progress durable at a chunk or bucket
    /// boundary (zero: at every boundary), so that a long pass interrupted
    /// near its end does not start over.
    pub checkpoint_every: Duration,
}

impl ExternalPlan {
    /// A plan whose buffers stay within `mem_limit` bytes. Per chunk position
    /// the combine step holds value, summary, flags and accumulator (about 20
    /// bytes), twice over with double buffering: a chunk gets 1/128 of the
    /// budget (31%). The answer step holds six record buffers of 16-byte
    /// records at once (the run reader's bytes, the block it reads, the block
    /// being answered, the answers, the write buffer being filled and the one
    /// being flushed): each gets 1/16 (37.5% together), and one lookup range
    /// of values, 1/8 (12.5%).
    pub fn for_mem_limit(mem_limit: u64) -> ExternalPlan {
        let chunk = ((mem_limit / 128).max(4096) / 64) * 64;
        let lookup_chunk = (mem_limit / 8).max(chunk);
        let run_capacity = ((mem_limit / 16) / 16).max(1024) as usize;
        ExternalPlan {
            chunk,
            lookup_chunk,
            run_capacity,
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
        }
    }
}

/// How often a long pass records its progress, unless the plan says otherwise.
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Where an interrupted solve of a partition stands: `next_pass` 0 is the first scan.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PassCheckpoint {
    /// The pass to run next, or under way when `within` is set (0: the first scan).
    pub next_pass: u32,
    /// The longest distance among values the first scan saw.
    pub max_seen: u32,
    /// How far pass `next_pass` got, if it had started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<WithinPass>,
}

/// Durable progress inside a pass: every chunk (or bucket) before `next` of
/// `step` is done, and the run files hold exactly the recorded bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WithinPass {
    /// The step under way.
    pub step: Step,
    /// The next chunk (expand, combine) or bucket (answer, counted in order) to do.
    pub next: u64,
    requests: RunIndex,
    answers: RunIndex,
    /// Positions the combine step decided so far.
    decided: u64,
    /// The first scan's longest distance so far.
    max_seen: u32,
}

/// The steps of a pass, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// Turning pending positions into requests.
    Expand,
    /// Answering requests from the successors' values.
    Answer,
    /// Applying answers and deciding.
    Combine,
}

impl WithinPass {
    fn at(step: Step) -> WithinPass {
        WithinPass {
            step,
            next: 0,
            requests: RunIndex::default(),
            answers: RunIndex::default(),
            decided: 0,
            max_seen: 0,
        }
    }
}

/// Records progress inside a pass.
type SaveWithin<'s> = dyn FnMut(WithinPass) -> Result<()> + 's;

/// Per-position summary of successors in earlier partitions, kept on disk
/// between passes: nearest loss (puzzles: nearest goal distance), longest win,
/// and whether some successor is neither (draw).
#[derive(Clone, Copy, Debug, Default)]
struct Summary {
    nearest_loss: Option<u8>,
    longest_win: Option<u8>,
    blocked: bool,
}

impl Summary {
    const BYTES: usize = 3;

    fn add(&mut self, kind: GameKind, v: Value) {
        match v.distance() {
            Some(e) if kind == GameKind::Puzzle || e % 2 == 0 => {
                let e = e as u8;
                self.nearest_loss = Some(self.nearest_loss.map_or(e, |b| b.min(e)));
            }
            Some(e) => {
                let e = e as u8;
                self.longest_win = Some(self.longest_win.map_or(e, |b| b.max(e)));
            }
            None => self.blocked = true,
        }
    }

    fn encode(self, out: &mut [u8]) {
        out[0] = self.nearest_loss.map_or(0xff, |e| e);
        out[1] = self.longest_win.map_or(0xff, |e| e);
        out[2] = u8::from(self.blocked);
    }

    fn decode(b: &[u8]) -> Summary {
        Summary {
            nearest_loss: (b[0] != 0xff).then_some(b[0]),
            longest_win: (b[1] != 0xff).then_some(b[1]),
            blocked: b[2] != 0,
        }
    }

    /// The largest distance it mentions.
    fn longest(&self) -> u32 {
        u32::from(
            self.nearest_loss
                .unwrap_or(0)
                .max(self.longest_win.unwrap_or(0)),
        )
    }

    /// The value when these are all the successors (the first scan).
    fn finish(self, kind: GameKind) -> Option<Value> {
        let next = |e: u8| Value::at_distance(u32::from(e) + 1);
        match (kind, self.nearest_loss) {
            (_, Some(e)) => next(e),
            (GameKind::Puzzle, None) => Some(Value::DRAW),
            (GameKind::TwoPlayer, None) if !self.blocked => next(self.longest_win.unwrap_or(0)),
            (GameKind::TwoPlayer, None) => Some(Value::DRAW),
        }
    }

    /// Seeds pass `d`'s accumulator with the earlier partitions' successors:
    /// the nearest loss and the longest win stand for all of them.
    fn seed(self, kind: GameKind, d: u32) -> PassAcc {
        let mut acc = PassAcc::default();
        if let Some(e) = self.nearest_loss {
            acc.add(kind, d, at(u32::from(e)));
        }
        if let Some(e) = self.longest_win {
            acc.add(kind, d, at(u32::from(e)));
        }
        if self.blocked {
            acc.add(kind, d, Value::DRAW);
        }
        acc
    }
}

/// Records an expanding thread collects before it hands them to the write
/// buffer (64 KiB per thread).
const LOCAL_RECORDS: usize = 4096;

/// Positions per slice when a chunk's positions are combined in parallel (a
/// multiple of 4: flags are packed four to a byte).
const SLICE: usize = 1 << 14;

/// Applies each record to `targets[record.index()]`, on all threads: each
/// thread owns a contiguous slice of the targets and applies the records
/// that fall in it. Every thread scans the whole block, which costs less
/// than the scattered writes it shares out; applying is order-independent,
/// so the result is the serial one.
///
/// A record outside the targets (a damaged run file) is an error, not a panic.
fn apply_in_parallel<T: Send>(
    targets: &mut [T],
    records: &[Record],
    apply: impl Fn(&mut T, &Record) + Sync,
) -> Result<()> {
    let threads = rayon::current_num_threads();
    let applied = if threads == 1 || records.len() < 4 * SLICE {
        let mut applied = 0;
        for r in records {
            if let Some(t) = targets.get_mut(r.index() as usize) {
                apply(t, r);
                applied += 1;
            }
        }
        applied
    } else {
        let per_thread = targets.len().div_ceil(threads).max(1);
        targets
            .par_chunks_mut(per_thread)
            .enumerate()
            .map(|(t, slice)| {
                let lo = (t * per_thread) as u64;
                let hi = lo + slice.len() as u64;
                let mut applied = 0;
                for r in records {
                    let i = r.index();
                    if (lo..hi).contains(&i) {
                        apply(&mut slice[(i - lo) as usize], r);
                        applied += 1;
                    }
                }
                applied
            })
            .sum()
    };
    if applied == records.len() {
        Ok(())
    } else {
        Err(Error::NotAvailable(format!(
            "a run file holds {} records outside their chunk of {} positions: scratch is damaged; delete the scratch directories and build again",
            records.len() - applied,
            targets.len()
        )))
    }
}

/// Flag: the position is ongoing (not illegal, not terminal).
const ONGOING: u8 = 1;
/// Flag: the position has a successor in its own partition.
const INTERNAL: u8 = 2;

#[inline]
fn flag(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

#[inline]
fn set_flag(flags: &mut [u8], j: usize, f: u8) {
    flags[j / 4] |= f << (2 * (j % 4));
}

#[inline]
fn clear_flags(flags: &mut [u8], j: usize) {
    flags[j / 4] &= !(3 << (2 * (j % 4)));
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Solver<'a, G: Game> {
    game: &'a G,
    layout: &'a Layout,
    disks: &'a ScratchDisks,
    slot: usize,
    plan: ExternalPlan,
    kind: GameKind,
    progress: &'a Progress,
    stats: &'a IoStats,
    /// First bucket number of each slot's chunks.
    bucket_base: Vec<u64>,
    values: ByteFile,
    summary: ByteFile,
    /// Two bits per position: [`ONGOING`] and [`INTERNAL`].
    flags: ByteFile,
    error: Mutex<Option<Error>>,
    last_saved: Mutex<Instant>,
}

/// Solves partition `slot` with its values on disk at `disks.values_path(slot)`,
/// reading earlier partitions' values from their scratch files.
#[allow(clippy::too_many_arguments)]
pub fn solve_partition_external<G: Game>(
    game: &G,
    layout: &Layout,
    disks: &ScratchDisks,
    slot: usize,
    plan: ExternalPlan,
    progress: &Progress,
    stats: &IoStats,
    resume: Option<PassCheckpoint>,
    checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
) -> Result<()> {
    let started = std::time::Instant::now();
    let solved = solve_external(
        game, layout, disks, slot, plan, progress, stats, resume, checkpoint,
    );
    stats.busy(started.elapsed());
    solved
}

#[allow(clippy::too_many_arguments)]
fn solve_external<G: Game>(
    game: &G,
    layout: &Layout,
    disks: &ScratchDisks,
    slot: usize,
    plan: ExternalPlan,
    progress: &Progress,
    stats: &IoStats,
    resume: Option<PassCheckpoint>,
    checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
) -> Result<()> {
    let size = layout.size(slot);
    let chunks_of = |s: usize| layout.size(s).div_ceil(plan.lookup_chunk.max(1));
    let mut bucket_base = Vec::with_capacity(slot + 1);
    let mut next = 0u64;
    for s in 0..=slot {
        bucket_base.push(next);
        next += chunks_of(s);
    }
    if next > MAX_BUCKETS
        || plan.chunk % 64 != 0
        || plan.chunk >= 1 << super::runs::LOW_BITS
        || plan.lookup_chunk == 0
        || plan.lookup_chunk >= 1 << super::runs::LOW_BITS
    {
        return Err(Error::NotAvailable(format!(
            "memory limit too small for {} positions: it needs {next} chunks of {}; raise --mem-limit",
            layout.total_size(),
            plan.chunk
        )));
    }
    let solver = Solver {
        game,
        layout,
        disks,
        slot,
        plan,
        kind: game.info().kind,
        progress,
        stats,
        bucket_base,
        values: ByteFile::create_or_open(&disks.values_path(slot), size)?,
        summary: ByteFile::create_or_open(
            &disks.side_path(slot, "summary"),
            size * Summary::BYTES as u64,
        )?,
        flags: ByteFile::create_or_open(&disks.side_path(slot, "flags"), size.div_ceil(4))?,
        error: Mutex::new(None),
        last_saved: Mutex::new(Instant::now()),
    };
    let mut state = resume.unwrap_or(PassCheckpoint {
        next_pass: 0,
        max_seen: 0,
        within: None,
    });
    // Run files belong to the pass under way; a resumed step cuts them back itself.
    if state.within.is_none() {
        stats
            .profile
            .time(Part::ClearRuns, || disks.clear_runs(None))?;
    }
    if state.next_pass == 0 {
        let within = state.within.take();
        let mut save = |w: WithinPass| {
            checkpoint(PassCheckpoint {
                next_pass: 0,
                max_seen: 0,
                within: Some(w),
            })
        };
        let (max_seen, left_for_passes) = solver.first_scan(within, &mut save)?;
        state.max_seen = max_seen;
        state.next_pass = 1;
        solver.sync()?;
        stats
            .profile
            .time(Part::Checkpoint, || checkpoint(state.clone()))?;
        // Only now: a resume from a checkpoint inside the scan reads them.
        stats
            .profile
            .time(Part::ClearRuns, || disks.clear_runs(None))?;
        if !left_for_passes {
            // Every position is decided: a pass would read the whole
            // partition to find no request.
            return Ok(());
        }
    }
    loop {
        let d = state.next_pass;
        if d > Value::MAX_DISTANCE {
            return Err(Error::DistanceOverflow {
                game: game.info().id.to_string(),
                partition: game.partition_name(layout.order()[slot]),
                max: Value::MAX_DISTANCE,
            });
        }
        let within = state.within.take();
        let max_seen = state.max_seen;
        let mut save = |w: WithinPass| {
            checkpoint(PassCheckpoint {
                next_pass: d,
                max_seen,
                within: Some(w),
            })
        };
        let (decided, requests) = solver.pass(d, within, &mut save)?;
        solver.sync()?;
        state.next_pass = d + 1;
        stats
            .profile
            .time(Part::Checkpoint, || checkpoint(state.clone()))?;
        stats
            .profile
            .time(Part::ClearRuns, || disks.clear_runs(None))?;
        // No requests: no pending position has a move inside the partition,
        // so no later pass can decide anything either.
        if requests == 0 || (decided == 0 && d > state.max_seen) {
            break;
        }
    }
    stats
        .profile
        .time(Part::ClearRuns, || disks.clear_runs(None))?;
    Ok(())
}

impl<G: Game> Solver<'_, G> {
    fn name(&self) -> String {
        self.game.partition_name(self.layout.order()[self.slot])
    }

    fn fail(&self, e: Error) {
        lock(&self.error).get_or_insert(e);
    }

    fn check(&self) -> Result<()> {
        match lock(&self.error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn contract(&self, message: String) -> Error {
        Error::GameContract {
            game: self.game.info().id.to_string(),
            message,
        }
    }

    fn sync(&self) -> Result<()> {
        self.stats.profile.time(Part::Sync, || {
            self.values.sync()?;
            self.summary.sync()?;
            self.flags.sync()
        })
    }

    /// Whether progress inside a pass should be made durable now.
    fn checkpoint_due(&self) -> bool {
        lock(&self.last_saved).elapsed() >= self.plan.checkpoint_every
    }

    /// Makes the partition's files durable and records `within`.
    fn save(&self, within: WithinPass, save: &mut SaveWithin<'_>) -> Result<()> {
        self.sync()?;
        // Finished steps' runs the checkpoint names (a running step's writer
        // made its own durable); syncing an already clean file costs little.
        if within.step != Step::Expand {
            sync_runs(self.disks, "req", &within.requests)?;
        }
        if within.step == Step::Combine {
            sync_runs(self.disks, "ans", &within.answers)?;
        }
        save(within)?;
        *lock(&self.last_saved) = Instant::now();
        Ok(())
    }

    /// Bytes of one block of records as a reader hands them over.
    fn block_bytes(&self) -> u64 {
        self.plan.run_capacity as u64 * 16
    }

    /// Starts fetching the first block of chunk `c`'s answers.
    fn prefetch_answers(&self, answers: &RunIndex, c: u64) {
        if c < self.chunk_count() {
            prefetch_bucket(self.disks, "ans", answers, c, self.block_bytes());
        }
    }

    /// Requests are answered from a lookup range of values, a byte each.
    fn request_order(&self) -> Order {
        Order::for_range(self.plan.lookup_chunk)
    }

    /// Answers are applied to a chunk's accumulators.
    fn answer_order(&self) -> Order {
        let per_position = std::mem::size_of::<PassAcc>().max(std::mem::size_of::<Summary>());
        Order::for_range(self.plan.chunk * per_position as u64)
    }

    fn chunk_range(&self, size: u64, c: u64) -> (u64, u64) {
        let lo = c * self.plan.chunk;
        (lo, (lo + self.plan.chunk).min(size))
    }

    fn size(&self) -> u64 {
        self.layout.size(self.slot)
    }

    fn chunk_count(&self) -> u64 {
        self.size().div_ceil(self.plan.chunk)
    }

    fn read(&self, file: &ByteFile, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        file.read_at(offset, &mut buf)?;
        self.stats.read(len as u64);
        self.progress.bytes(len as u64);
        Ok(buf)
    }

    fn write(&self, file: &ByteFile, offset: u64, buf: &[u8]) -> Result<()> {
        file.write_at(offset, buf)?;
        self.stats.wrote(buf.len() as u64);
        self.progress.bytes(buf.len() as u64);
        Ok(())
    }

    /// Reads chunk `c` of this partition: values and flags.
    fn read_chunk(&self, c: u64) -> Result<(Vec<u8>, Vec<u8>)> {
        let (lo, hi) = self.chunk_range(self.size(), c);
        let values = self.read(&self.values, lo, (hi - lo) as usize)?;
        let flags = self.read(&self.flags, lo / 4, (hi - lo).div_ceil(4) as usize)?;
        Ok((values, flags))
    }

    /// Runs `work` on each chunk of this partition in order while a reader
    /// thread loads the next one (double buffering).
    fn for_each_chunk<T: Send>(
        &self,
        first: u64,
        load: impl Fn(u64) -> Result<T> + Sync,
        mut work: impl FnMut(u64, T) -> Result<()>,
    ) -> Result<()> {
        let n = self.chunk_count();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T>>(1);
            let load = &load;
            scope.spawn(move || {
                for c in first..n {
                    let loaded = load(c);
                    let failed = loaded.is_err();
                    if tx.send(loaded).is_err() || failed {
                        return;
                    }
                }
            });
            for c in first..n {
                let loaded = self
                    .stats
                    .profile
                    .time(Part::WaitChunkRead, || rx.recv())
                    .map_err(|_| Error::NotAvailable("the chunk reader thread stopped".into()))??;
                work(c, loaded)?;
            }
            Ok(())
        })
    }

    /// The request bucket and in-range index of (slot, rank).
    fn bucket_of(&self, slot: usize, rank: u64) -> (u64, u64) {
        (
            self.bucket_base[slot] + rank / self.plan.lookup_chunk,
            rank % self.plan.lookup_chunk,
        )
    }

    /// Expands the pending positions of every chunk into requests. In the first
    /// scan (`d == 0`) it also sets illegal and terminal values and the
    /// internal-successor flags, and asks only about earlier partitions; in
    /// pass `d` it asks only about this one.
    fn expand(
        &self,
        d: u32,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<RunIndex> {
        let (first, requests) = match from {
            Some(w) => (
                w.next,
                RunWriter::resume(
                    self.disks,
                    "req",
                    self.plan.run_capacity,
                    w.requests,
                    &self.stats.profile,
                )?,
            ),
            None => (
                0,
                RunWriter::new(
                    self.disks,
                    "req",
                    self.plan.run_capacity,
                    &self.stats.profile,
                )?,
            ),
        };
        let phase = if d == 0 {
            "first scan".to_string()
        } else {
            format!("pass {d}")
        };
        self.progress
            .phase(&format!("{} {phase}: expand", self.name()), self.size());
        self.progress
            .inc((first * self.plan.chunk).min(self.size()));
        let partition = self.layout.order()[self.slot];
        let chunks = self.chunk_count();
        self.for_each_chunk(
            first,
            |c| self.read_chunk(c),
            |c, (mut values, mut flags)| {
                let (lo, _) = self.chunk_range(self.size(), c);
                const SUB: usize = 4096;
                values
                    .par_chunks_mut(SUB)
                    .zip(flags.par_chunks_mut(SUB / 4))
                    .enumerate()
                    .for_each_init(
                        || (Vec::new(), Vec::new()),
                        |(succ, out), (i, (vals, bits))| {
                            out.clear();
                            let base = lo + (i * SUB) as u64;
                            for (j, v) in vals.iter_mut().enumerate() {
                                let r = base + j as u64;
                                if d == 0 {
                                    clear_flags(bits, j);
                                } else if flag(bits, j) != ONGOING | INTERNAL || *v != PENDING {
                                    continue;
                                }
                                let Some(pos) = self.game.unrank(partition, Rank(r)) else {
                                    if d == 0 {
                                        *v = Value::ILLEGAL.to_byte();
                                    }
                                    continue;
                                };
                                if d == 0 {
                                    match self.game.status(&pos) {
                                        Status::Lost | Status::Goal => {
                                            *v = at(0).to_byte();
                                            continue;
                                        }
                                        Status::Drawn => {
                                            *v = Value::DRAW.to_byte();
                                            continue;
                                        }
                                        Status::Ongoing => {
                                            *v = PENDING;
                                            set_flag(bits, j, ONGOING);
                                        }
                                    }
                                }
                                succ.clear();
                                self.game.successors(&pos, succ);
                                if succ.is_empty() && self.kind == GameKind::TwoPlayer {
                                    self.fail(self.contract(format!(
                                        "position {} has no moves but its status is not Lost or Drawn",
                                        self.game.format_position(&pos)
                                    )));
                                }
                                for (_, s) in succ.iter() {
                                    let (sp, sr) = self.game.rank(s);
                                    let Some(ss) = self.layout.locate(sp, sr) else {
                                        self.fail(self.contract(format!(
                                            "successor ({sp}, {sr}) is outside the game's partitions"
                                        )));
                                        continue;
                                    };
                                    if ss > self.slot {
                                        self.fail(self.contract(format!(
                                            "a move from partition {partition} leads to partition {sp}, which is solved later"
                                        )));
                                        continue;
                                    }
                                    if ss == self.slot {
                                        if d == 0 {
                                            set_flag(bits, j, INTERNAL);
                                        } else {
                                            let (b, idx) = self.bucket_of(ss, sr.0);
                                            out.push(Record::new(b, idx, r));
                                        }
                                    } else if d == 0 {
                                        let (b, idx) = self.bucket_of(ss, sr.0);
                                        out.push(Record::new(b, idx, r));
                                    }
                                }
                                // Bounded per thread, whatever the branching factor.
                                if out.len() >= LOCAL_RECORDS {
                                    if let Err(e) = requests.push(out) {
                                        self.fail(e);
                                    }
                                    out.clear();
                                }
                            }
                            if let Err(e) = requests.push(out) {
                                self.fail(e);
                            }
                            self.progress.inc(vals.len() as u64);
                        },
                    );
                self.check()?;
                if d == 0 {
                    self.write(&self.values, lo, &values)?;
                    self.write(&self.flags, lo / 4, &flags)?;
                }
                if c + 1 < chunks && self.checkpoint_due() {
                    let mut w = WithinPass::at(Step::Expand);
                    w.next = c + 1;
                    w.requests = requests.durable()?;
                    self.save(w, save)?;
                }
                Ok(())
            },
        )?;
        let index = requests.finish()?;
        self.stats.wrote(index.bytes);
        self.progress.bytes(index.bytes);
        Ok(index)
    }

    /// Answers every request with the successor's stored value.
    fn answer(
        &self,
        requests: &RunIndex,
        d: u32,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<RunIndex> {
        let (first, answers) = match from {
            Some(w) => (
                w.next,
                RunWriter::resume(
                    self.disks,
                    "ans",
                    self.plan.run_capacity,
                    w.answers,
                    &self.stats.profile,
                )?,
            ),
            None => (
                0,
                RunWriter::new(
                    self.disks,
                    "ans",
                    self.plan.run_capacity,
                    &self.stats.profile,
                )?,
            ),
        };
        let slots: Vec<usize> = if d == 0 {
            (0..self.slot).collect()
        } else {
            vec![self.slot]
        };
        self.progress
            .phase(&format!("{} answer", self.name()), requests.bytes / 16);
        // Buckets in order, numbered for checkpoints.
        let buckets: Vec<(usize, u64)> = slots
            .iter()
            .flat_map(|&s| {
                (0..self.layout.size(s).div_ceil(self.plan.lookup_chunk)).map(move |c| (s, c))
            })
            .collect();
        let mut file: Option<(usize, ByteFile)> = None;
        for (ordinal, &(s, c)) in buckets.iter().enumerate().skip(first as usize) {
            {
                let size = self.layout.size(s);
                if file.as_ref().is_none_or(|(fs, _)| *fs != s) {
                    file = Some((
                        s,
                        ByteFile::open_existing(&self.disks.values_path(s), size)?,
                    ));
                }
                let file = &file.as_ref().expect("opened above").1;
                let bucket = self.bucket_base[s] + c;
                if let Some(&(ns, nc)) = buckets.get(ordinal + 1) {
                    let next = self.bucket_base[ns] + nc;
                    prefetch_bucket(self.disks, "req", requests, next, self.block_bytes());
                }
                let lo = c * self.plan.lookup_chunk;
                let hi = (lo + self.plan.lookup_chunk).min(size);
                let mut chunk: Option<Vec<u8>> = None;
                let read = read_bucket(
                    self.disks,
                    "req",
                    requests,
                    bucket,
                    Blocks {
                        records: self.plan.run_capacity,
                        order: self.request_order(),
                    },
                    &self.stats.profile,
                    |records| {
                        let values = match &chunk {
                            Some(v) => v,
                            None => chunk.insert(self.read(file, lo, (hi - lo) as usize)?),
                        };
                        let out: Vec<Record> = records
                            .par_iter()
                            .map(|q| {
                                let v = values[q.index() as usize];
                                let requester = q.payload;
                                Record::new(
                                    requester / self.plan.chunk,
                                    requester % self.plan.chunk,
                                    u64::from(v),
                                )
                            })
                            .collect();
                        self.progress.inc(records.len() as u64);
                        answers.push(&out)
                    },
                )?;
                self.stats.read(read);
                self.progress.bytes(read);
            }
            if ordinal + 1 < buckets.len() && self.checkpoint_due() {
                let mut w = WithinPass::at(Step::Answer);
                w.next = ordinal as u64 + 1;
                w.requests = requests.clone();
                w.answers = answers.durable()?;
                self.save(w, save)?;
            }
        }
        let index = answers.finish()?;
        self.stats.wrote(index.bytes);
        self.progress.bytes(index.bytes);
        Ok(index)
    }

    /// The first scan: returns the longest distance seen, and whether some
    /// position is left for the passes (one with a move inside the partition).
    fn first_scan(
        &self,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u32, bool)> {
        let (requests, answers, from) = self.exchange(0, from, save)?;
        let kind = self.kind;
        let (first, mut max_seen) = from.map_or((0, 0), |w| (w.next, w.max_seen));
        // Chunks combined before an interruption are not looked at again, so
        // a resumed scan cannot tell: it leaves the answer to the passes.
        let mut left_for_passes = first > 0;
        self.progress
            .phase(&format!("{} first scan: combine", self.name()), self.size());
        self.progress
            .inc((first * self.plan.chunk).min(self.size()));
        let answers = &answers;
        let chunks = self.chunk_count();
        let combine_started = Instant::now();
        self.for_each_chunk(
            first,
            |c| self.read_chunk(c),
            |c, (mut values, flags)| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                self.prefetch_answers(answers, c + 1);
                let mut summaries = vec![Summary::default(); (hi - lo) as usize];
                let read = read_bucket(
                    self.disks,
                    "ans",
                    answers,
                    c,
                    Blocks {
                        records: self.plan.run_capacity,
                        order: self.answer_order(),
                    },
                    &self.stats.profile,
                    |records| {
                        apply_in_parallel(&mut summaries, records, |s, a| {
                            s.add(kind, Value::from_byte(a.payload as u8))
                        })
                    },
                )?;
                self.stats.read(read);
                self.progress.bytes(read);
                let mut packed = vec![0u8; summaries.len() * Summary::BYTES];
                // Per slice of the chunk: (longest distance, some position
                // left for the passes, some distance too long to store).
                let (longest, internal, overflow) = values
                    .par_chunks_mut(SLICE)
                    .zip(packed.par_chunks_mut(SLICE * Summary::BYTES))
                    .zip(summaries.par_chunks(SLICE))
                    .zip(flags.par_chunks(SLICE / 4))
                    .map(|(((values, packed), summaries), flags)| {
                        let (mut longest, mut internal, mut overflow) = (0u32, false, false);
                        for (j, s) in summaries.iter().enumerate() {
                            s.encode(&mut packed[j * Summary::BYTES..(j + 1) * Summary::BYTES]);
                            let f = flag(flags, j);
                            if f & ONGOING == 0 {
                                longest = longest.max(values[j].saturating_sub(2).into());
                                continue;
                            }
                            longest = longest.max(s.longest());
                            internal |= f & INTERNAL != 0;
                            if f & INTERNAL == 0 {
                                match s.finish(kind) {
                                    Some(v) => {
                                        values[j] = v.to_byte();
                                        longest = longest.max(v.distance().unwrap_or(0));
                                    }
                                    None => overflow = true,
                                }
                            }
                        }
                        (longest, internal, overflow)
                    })
                    .reduce(
                        || (0, false, false),
                        |a, b| (a.0.max(b.0), a.1 | b.1, a.2 | b.2),
                    );
                if overflow {
                    return Err(Error::DistanceOverflow {
                        game: self.game.info().id.to_string(),
                        partition: self.name(),
                        max: Value::MAX_DISTANCE,
                    });
                }
                max_seen = max_seen.max(longest);
                self.progress.inc(hi - lo);
                self.write(&self.values, lo, &values)?;
                // The passes read a summary only for a position with a move
                // inside the partition.
                if internal {
                    self.write(&self.summary, lo * Summary::BYTES as u64, &packed)?;
                }
                left_for_passes |= internal;
                if c + 1 < chunks && self.checkpoint_due() {
                    let mut w = WithinPass::at(Step::Combine);
                    w.next = c + 1;
                    w.requests = requests.clone();
                    w.answers = answers.clone();
                    w.max_seen = max_seen;
                    self.save(w, save)?;
                }
                Ok(())
            },
        )?;
        self.stats
            .profile
            .add(Part::Combine, combine_started.elapsed());
        Ok((max_seen, left_for_passes))
    }

    /// The expand and answer steps of pass `d` (0: the first scan), or what a
    /// checkpoint says of them: the requests, the answers, and where the
    /// combine step starts if it had started.
    fn exchange(
        &self,
        d: u32,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(RunIndex, RunIndex, Option<WithinPass>)> {
        let profile = &self.stats.profile;
        let (requests, from) = match from {
            None => (
                profile.time(Part::Expand, || self.expand(d, None, save))?,
                None,
            ),
            Some(w) if w.step == Step::Expand => (
                profile.time(Part::Expand, || self.expand(d, Some(w), save))?,
                None,
            ),
            Some(w) => (w.requests.clone(), Some(w)),
        };
        if requests.bytes == 0 {
            return Ok((requests, RunIndex::default(), None));
        }
        let (answers, from) = match from {
            None => (
                profile.time(Part::Answer, || self.answer(&requests, d, None, save))?,
                None,
            ),
            Some(w) if w.step == Step::Answer => (
                profile.time(Part::Answer, || self.answer(&requests, d, Some(w), save))?,
                None,
            ),
            Some(w) => (w.answers.clone(), Some(w)),
        };
        // The request runs stay until the pass's last checkpoint: an answer
        // step resumed from its checkpoint reads them again.
        Ok((requests, answers, from))
    }

    /// Pass `d`: returns how many positions it decided and the request bytes it exchanged.
    fn pass(
        &self,
        d: u32,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u64, u64)> {
        let (requests, answers, from) = self.exchange(d, from, save)?;
        if requests.bytes == 0 {
            return Ok((0, 0));
        }
        let requests_bytes = requests.bytes;
        let kind = self.kind;
        let (first, mut decided) = from.map_or((0, 0), |w| (w.next, w.decided));
        self.progress
            .phase(&format!("{} pass {d}: combine", self.name()), self.size());
        self.progress
            .inc((first * self.plan.chunk).min(self.size()));
        let answers = &answers;
        let chunks = self.chunk_count();
        let decided_byte = at(d).to_byte();
        let combine_started = Instant::now();
        self.for_each_chunk(
            first,
            |c| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                let (values, flags) = self.read_chunk(c)?;
                let summary = self.read(
                    &self.summary,
                    lo * Summary::BYTES as u64,
                    (hi - lo) as usize * Summary::BYTES,
                )?;
                Ok((values, flags, summary))
            },
            |c, (mut values, flags, summary)| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                self.prefetch_answers(answers, c + 1);
                let mut accs: Vec<PassAcc> = summary[..(hi - lo) as usize * Summary::BYTES]
                    .par_chunks_exact(Summary::BYTES)
                    .map(|b| Summary::decode(b).seed(kind, d))
                    .collect();
                let read = read_bucket(
                    self.disks,
                    "ans",
                    answers,
                    c,
                    Blocks {
                        records: self.plan.run_capacity,
                        order: self.answer_order(),
                    },
                    &self.stats.profile,
                    |records| {
                        apply_in_parallel(&mut accs, records, |acc, a| {
                            acc.add(kind, d, Value::from_byte(a.payload as u8))
                        })
                    },
                )?;
                self.stats.read(read);
                self.progress.bytes(read);
                let (changed, decided_here) = values
                    .par_chunks_mut(SLICE)
                    .zip(accs.par_chunks(SLICE))
                    .zip(flags.par_chunks(SLICE / 4))
                    .map(|((values, accs), flags)| {
                        let (mut changed, mut decided) = (false, 0u64);
                        for (j, acc) in accs.iter().enumerate() {
                            if flag(flags, j) != ONGOING | INTERNAL {
                                continue;
                            }
                            if values[j] == PENDING {
                                if let Some(v) = acc.decide(kind, d) {
                                    values[j] = v.to_byte();
                                    changed = true;
                                }
                            }
                            // Counted by value, not by change: a chunk redone
                            // after an interruption finds some of its decisions
                            // already written, and the pass loop's end test
                            // needs the full count.
                            if values[j] == decided_byte {
                                decided += 1;
                            }
                        }
                        (changed, decided)
                    })
                    .reduce(|| (false, 0), |a, b| (a.0 | b.0, a.1 + b.1));
                decided += decided_here;
                self.progress.inc(hi - lo);
                if changed {
                    self.write(&self.values, lo, &values)?;
                }
                if c + 1 < chunks && self.checkpoint_due() {
                    let mut w = WithinPass::at(Step::Combine);
                    w.next = c + 1;
                    w.requests = requests.clone();
                    w.answers = answers.clone();
                    w.decided = decided;
                    self.save(w, save)?;
                }
                Ok(())
            },
        )?;
        self.stats
            .profile
            .add(Part::Combine, combine_started.elapsed());
        Ok((decided, requests_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_apply_equals_serial_apply() {
        let n = 100_003usize;
        let records: Vec<Record> = (0..200_000u64)
            .map(|i| Record::new(0, (i * 7_919 + i / 3) % n as u64, i))
            .collect();
        let serial = {
            let mut t = vec![0u64; n];
            for r in &records {
                t[r.index() as usize] = t[r.index() as usize].wrapping_mul(31) ^ r.payload;
            }
            t
        };
        // Order-dependent on purpose: each target sees its records in block order.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let parallel = pool.install(|| {
            let mut t = vec![0u64; n];
            apply_in_parallel(&mut t, &records, |x, r| *x = x.wrapping_mul(31) ^ r.payload)
                .unwrap();
            t
        });
        assert_eq!(parallel, serial);
        let mut short = vec![0u64; n - 1];
        let outside = pool.install(|| apply_in_parallel(&mut short, &records, |_, _| {}));
        assert!(outside
            .unwrap_err()
            .to_string()
            .contains("outside their chunk"));
    }
}
