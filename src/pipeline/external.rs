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
//! position, a byte that sums them up, so later passes only exchange requests
//! inside the partition. Where the earlier partitions its successors lie in
//! fit half the memory budget, it holds their values and answers each
//! request as it comes back, with no run files (resident.rs). Every rule is the in-memory solver's (`solve::rules`),
//! applied in an order-independent way, so the bytes are the same for any
//! chunk size, thread count or disk layout; a pass interrupted at any point and
//! run again gives the same result, which is what makes `--resume` exact.

use super::blocking::Blocking;
use super::buffers::{Fill, SpareBuffers};
use super::candidates::Candidates;
use super::checkpoint::{PassCheckpoint, SaveWithin, Step, WithinPass};
use super::combine::{Deciding, Earlier};
use super::disks::{ByteFile, FileParts, ScratchDisks};
use super::distance_lists::DistanceLists;
use super::expand::{DecideAsExpanded, InMemory};
use super::plan::ExternalPlan;
use super::runs::{
    prefetch_bucket, read_bucket, Blocks, Order, Record, RunIndex, RunWriter, WriterParts,
    MAX_BUCKETS,
};
use super::stats::{IoStats, Part, PassRecord, Snapshot, StepClock};
use crate::game::{ChunkTiming, Game, GameKind, Layout, PartitionKernels};
use crate::progress::Progress;
use crate::value::rules::PassAcc;
use crate::value::Value;
use crate::{Error, Result};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a pass's record names its expander where the device looked its
/// successors up itself ([`crate::game::ChunkExpander::answer_on_device`]).
pub(super) const ANSWERED_ON_DEVICE: &str = ", answered on the device";

/// Flag: the position is ongoing (not illegal, not terminal).
pub(super) const ONGOING: u8 = 1;
/// Flag: the position has a successor in its own partition.
pub(super) const INTERNAL: u8 = 2;

#[inline]
pub(super) fn flag(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The spare buffers a solver keeps, in bytes per chunk position: two
/// chunks' values, flags, summaries and candidates' flags (2.5 bytes a
/// position each), within what the plan gives a chunk's buffers.
const SPARE_BYTES_PER_POSITION: u64 = 5;

/// Partition `slot`'s scratch files (of `size` positions) and the sizes
/// this build's pipeline makes them: values, summaries, flags.
fn scratch_files(disks: &ScratchDisks, slot: usize, size: u64) -> [(FileParts, u64); 3] {
    [
        (disks.values_path(slot), size),
        (
            FileParts::one(&disks.side_path(slot, "summary")),
            size * Earlier::BYTES as u64,
        ),
        (
            FileParts::one(&disks.side_path(slot, "flags")),
            size.div_ceil(4),
        ),
    ]
}

/// Whether partition `slot`'s scratch files (of `size` positions) are all
/// there at the sizes this build's pipeline makes them: a checkpoint inside
/// the partition is only as good as them. Files a build with another
/// layout left (an older binary's three-byte summaries, or its values in
/// one file) are not.
pub fn scratch_intact(disks: &ScratchDisks, slot: usize, size: u64) -> bool {
    scratch_files(disks, slot, size)
        .iter()
        .all(|(parts, len)| parts.complete(*len))
}

pub(super) struct Solver<'a, G: Game> {
    pub(super) game: &'a G,
    pub(super) layout: &'a Layout,
    pub(super) disks: &'a ScratchDisks,
    pub(super) slot: usize,
    pub(super) plan: ExternalPlan,
    pub(super) kind: GameKind,
    pub(super) progress: &'a Progress,
    pub(super) stats: &'a IoStats,
    /// First bucket number of each slot's chunks.
    pub(super) bucket_base: Vec<u64>,
    /// Where only reached indices are solved (a layered partition): their
    /// bits; every other index is stored 0 and expands nothing.
    pub(super) reached: Option<&'a [u64]>,
    pub(super) values: ByteFile,
    pub(super) summary: ByteFile,
    /// Two bits per position: [`ONGOING`] and [`INTERNAL`].
    pub(super) flags: ByteFile,
    pub(super) last_saved: Mutex<Instant>,
    /// The device the expand step streams chunks through, if any.
    pub(super) device: Option<StreamDevice<'a>>,
    /// What the current pass's steps did, for its timeline.
    pub(super) figures: Mutex<PassFigures>,
    /// The expander, kept between the passes of the partition.
    pub(super) expander: Mutex<Option<Box<dyn crate::game::ChunkExpander + 'a>>>,
    /// The answer step's lookup range buffer, kept between its ranges and
    /// passes: fresh pages cost a fault and a zeroing each, more than the
    /// copy into them when a range is read whole.
    pub(super) lookup_values: Mutex<Vec<u8>>,
    /// The block of run records a step's reads decode into, kept between
    /// the buckets of a step (see [`read_bucket`]) and let go at its end.
    pub(super) decoded: Mutex<Vec<Record>>,
    /// Chunk-sized byte buffers the steps are done with, for the next
    /// chunk's reads.
    pub(super) spare: SpareBuffers,
    /// Candidate marks a pass is done with, for a later pass's: a fresh
    /// bitmap, a bit a position, is megabytes faulted in and zeroed on
    /// the pass's thread, every pass.
    pub(super) spare_marks: SpareBuffers<u64>,
    /// What the steps' run writers share: the profile, and the write
    /// buffers one writer leaves to the next.
    pub(super) writer_parts: WriterParts,
    /// Set once the game could not list a position's predecessors within
    /// the partition: its passes expand every pending position.
    pub(super) no_predecessors: AtomicBool,
    /// Which chunks the next pass's marking must read (kept in memory
    /// only: a resumed partition reads every chunk once, then has them).
    pub(super) chunk_hints: Mutex<Option<super::candidates::ChunkHints>>,
    /// The next pass's candidates, as the combine step marked them.
    pub(super) next_marks: Mutex<Option<super::candidates::NextMarks>>,
    /// The first scan's distance lists, where it made them (memory only,
    /// as the hints: a resumed partition does without).
    pub(super) distance_lists: Mutex<Option<DistanceLists>>,
    /// The bits that answer a pass that decides losses in memory, kept
    /// from one such pass to the next (see blocking.rs).
    pub(super) blocking: Mutex<Option<Blocking>>,
}

/// A device the streamed path expands chunks on: the game's kernels there,
/// and the device memory their buffers may take.
#[derive(Clone, Copy, Debug)]
pub struct StreamDevice<'a> {
    /// The game's kernels on the device ([`PartitionKernels::expander`]).
    pub kernels: &'a dyn PartitionKernels,
    /// Bytes of device memory the streamed buffers may take (`--gpu-mem-limit`).
    pub device_bytes: u64,
    /// Bytes of page-locked host memory their host copies may take (the
    /// memory plan's share; `u64::MAX`: no bound).
    pub host_bytes: u64,
}

/// What a pass's steps tell its timeline.
#[derive(Clone, Debug, Default)]
pub(super) struct PassFigures {
    /// The expand step's figures: it sets them whole.
    pub(super) expand: ExpandStep,
    /// Bytes of the answer runs the pass wrote.
    pub(super) answer_bytes: u64,
    /// Chunks whose candidates the combine step of the pass before marked.
    pub(super) chunks_marked_by_combine: u64,
}

/// One expand step on its expander.
#[derive(Clone, Debug, Default)]
pub(super) struct ExpandStep {
    pub(super) expander: String,
    pub(super) chunks: u64,
    pub(super) requests: u64,
    pub(super) request_bytes: u64,
    /// Pending positions left to expand where the pass took only its
    /// candidates.
    pub(super) candidates: Option<u64>,
    /// See [`PassRecord::settled_by_summary`].
    pub(super) settled_by_summary: u64,
    pub(super) timing: ChunkTiming,
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
    solve_partition_external_reached(
        game, layout, disks, slot, None, plan, progress, stats, resume, checkpoint,
    )
}

/// [`solve_partition_external`] of only the indices whose bits are set in
/// `reached` (64 to a word, lowest bit first), when given: every other index
/// is stored 0 (not reached) and expands nothing, as in
/// [`crate::solve::solve_partition_reached`].
#[allow(clippy::too_many_arguments)]
pub fn solve_partition_external_reached<G: Game>(
    game: &G,
    layout: &Layout,
    disks: &ScratchDisks,
    slot: usize,
    reached: Option<&[u64]>,
    plan: ExternalPlan,
    progress: &Progress,
    stats: &IoStats,
    resume: Option<PassCheckpoint>,
    checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
) -> Result<()> {
    solve_partition_streamed(
        game, layout, disks, slot, reached, None, plan, progress, stats, resume, checkpoint,
    )
}

/// [`solve_partition_external_reached`] with its expand steps streamed
/// through `device` where the game's kernels cover the partition (on the
/// CPU through the game's rules otherwise): the same bytes either way.
#[allow(clippy::too_many_arguments)]
pub fn solve_partition_streamed<G: Game>(
    game: &G,
    layout: &Layout,
    disks: &ScratchDisks,
    slot: usize,
    reached: Option<&[u64]>,
    device: Option<StreamDevice<'_>>,
    plan: ExternalPlan,
    progress: &Progress,
    stats: &IoStats,
    resume: Option<PassCheckpoint>,
    checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
) -> Result<()> {
    let started = std::time::Instant::now();
    if let Some(bits) = reached {
        if (bits.len() as u64) < layout.size(slot).div_ceil(64) {
            return Err(Error::NotAvailable(format!(
                "the reached bits of partition {} hold {} words, {} are needed",
                layout.order()[slot],
                bits.len(),
                layout.size(slot).div_ceil(64)
            )));
        }
    }
    let solved =
        Solver::new(game, layout, disks, slot, plan, progress, stats).and_then(|mut solver| {
            solver.reached = reached;
            solver.device = device;
            solver.run(resume, checkpoint)
        });
    stats.busy(started.elapsed());
    solved
}

impl<'a, G: Game> Solver<'a, G> {
    /// A solver of partition `slot`, its files created or, on a resume, opened.
    fn new(
        game: &'a G,
        layout: &'a Layout,
        disks: &'a ScratchDisks,
        slot: usize,
        plan: ExternalPlan,
        progress: &'a Progress,
        stats: &'a IoStats,
    ) -> Result<Solver<'a, G>> {
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
        let [values, summary, flags] = scratch_files(disks, slot, size)
            .map(|(parts, len)| ByteFile::create_or_open_parts(&parts, len));
        Ok(Solver {
            game,
            layout,
            disks,
            slot,
            plan,
            kind: game.info().kind,
            progress,
            stats,
            bucket_base,
            reached: None,
            values: values?,
            summary: summary?,
            flags: flags?,
            last_saved: Mutex::new(Instant::now()),
            device: None,
            figures: Mutex::new(PassFigures::default()),
            expander: Mutex::new(None),
            lookup_values: Mutex::new(Vec::new()),
            decoded: Mutex::new(Vec::new()),
            spare: SpareBuffers::new((SPARE_BYTES_PER_POSITION * plan.chunk) as usize),
            // The marks of one pass at a time: a pass's marks and the next
            // pass's are alive together, and one of them is kept between.
            spare_marks: SpareBuffers::new(size.div_ceil(64) as usize * 8),
            writer_parts: WriterParts {
                profile: Arc::clone(&stats.profile),
                buffers: Arc::new(SpareBuffers::new(RunWriter::buffer_bytes(
                    plan.run_capacity,
                ))),
            },
            no_predecessors: AtomicBool::new(false),
            chunk_hints: Mutex::new(None),
            next_marks: Mutex::new(None),
            distance_lists: Mutex::new(None),
            blocking: Mutex::new(None),
        })
    }

    /// The first scan and the passes, from where `resume` left them.
    fn run(
        &self,
        resume: Option<PassCheckpoint>,
        checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
    ) -> Result<()> {
        let (disks, stats) = (self.disks, self.stats);
        // Resumed after its first scan, the partition's values may hold
        // decisions of passes it redoes (see `end_pass`).
        let redoing = resume.as_ref().is_some_and(|c| c.next_pass > 0);
        if redoing {
            // The first scan's lists, where it kept them for the passes.
            let path = DistanceLists::path_for(self.disks, self.slot);
            *lock(&self.distance_lists) =
                DistanceLists::reopen(&path, self.size(), self.chunk_count())?;
        }
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
            let mark = self.mark();
            let (max_seen, left_for_passes) = self.first_scan(within, &mut save)?;
            self.record(0, mark)?;
            state.max_seen = max_seen;
            state.next_pass = 1;
            self.end_pass(&state, checkpoint, true)?;
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
                    game: self.game.info().id.to_string(),
                    partition: self.name(),
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
            let mark = self.mark();
            let started = Instant::now();
            let (decided, requests, candidates) = self.pass(d, within, redoing, &mut save)?;
            self.record(d, mark)?;
            state.next_pass = d + 1;
            // No requests in a pass over every pending position: none has a
            // move inside the partition, so no later pass can decide anything
            // either. (A pass over part of them, its candidates or those its
            // summaries do not settle, may have none while a later one has
            // some.) Nor can one once a pass past every
            // distance the first scan saw decides nothing: a position at
            // `d + 1` needs a successor at `d`. Not the pass right after
            // those distances: it may decide a position through its summary
            // alone, and a pass redone after an interruption does not count
            // such a position decided before (it is no longer pending, so no
            // longer a candidate); from the next pass on, every decision has
            // a successor in the partition at the distance before, and marks
            // its position whatever its value.
            let last = (requests == 0 && !candidates) || (decided == 0 && d > state.max_seen + 1);
            // A checkpoint inside this pass names its runs, which go now: the
            // pass's end must take its place.
            let saved_inside = *lock(&self.last_saved) > started;
            self.end_pass(&state, checkpoint, last || saved_inside)?;
            if last {
                break;
            }
        }
        stats
            .profile
            .time(Part::ClearRuns, || disks.clear_runs(None))?;
        self.drop_distance_lists()
    }

    /// Lets go of the distance lists, if the first scan made them, and of
    /// their files (also those an interrupted run left).
    pub(super) fn drop_distance_lists(&self) -> Result<()> {
        drop(lock(&self.distance_lists).take());
        DistanceLists::remove(&DistanceLists::path_for(self.disks, self.slot))
    }

    /// Records `state`, the pass before it done, once the partition's files
    /// are durable, where it `must` or a checkpoint is due; and only then
    /// clears the pass's runs: a resume from a checkpoint inside the pass
    /// reads them.
    ///
    /// The passes between the first scan and the last record their ends only
    /// as often as the plan's checkpoints are due (or where a checkpoint
    /// inside the pass must be replaced): waiting for the disk at every
    /// pass's end took 11 s of a 174 s streamed build of 703 passes. A
    /// build resumed from an older pass's end redoes the passes since, over
    /// values that later passes may have written: a pass decides what it
    /// decided before, as a value at its distance or beyond counts as
    /// undecided to it (`PassAcc::add`), exactly as a pending one does; its
    /// count of decisions, which ends the passes, is by value, and takes
    /// care where a decision made before leaves no trace in a redone pass
    /// (the end test in `run`, and `pass`).
    fn end_pass(
        &self,
        state: &PassCheckpoint,
        checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
        must: bool,
    ) -> Result<()> {
        let profile = &self.stats.profile;
        if must || self.checkpoint_due() {
            self.sync()?;
            profile.time(Part::Checkpoint, || checkpoint(state.clone()))?;
            *lock(&self.last_saved) = Instant::now();
        }
        profile.time(Part::ClearRuns, || self.disks.clear_runs(None))
    }
}

/// Counters at the start of a pass.
pub(super) struct Mark {
    clock: StepClock,
    read: u64,
    written: u64,
    stretch_reads: u64,
    value_writes: u64,
    profile: Snapshot,
}

impl<G: Game> Solver<'_, G> {
    fn mark(&self) -> Mark {
        *lock(&self.figures) = PassFigures::default();
        Mark {
            clock: StepClock::start(),
            read: self.stats.bytes_read(),
            written: self.stats.bytes_written(),
            stretch_reads: self.stats.stretch_reads(),
            value_writes: self.values.writes(),
            profile: self.stats.profile.snapshot(),
        }
    }

    /// Adds pass `d`, begun at `mark`, to the timeline.
    fn record(&self, d: u32, mark: Mark) -> Result<()> {
        let profile = &self.stats.profile;
        let since = |part| profile.since(&mark.profile, part);
        let (wall, cpu) = mark.clock.read();
        let steps = [
            ("expand", Part::Expand),
            ("answer", Part::Answer),
            ("combine", Part::Combine),
            ("marking", Part::Candidates),
        ];
        let step_bytes = steps
            .into_iter()
            .map(|(k, part)| (k.to_string(), profile.bytes_since(&mark.profile, part)))
            .collect();
        let cpu_seconds = steps
            .into_iter()
            .map(|(k, part)| (k.to_string(), profile.cpu_since(&mark.profile, part)))
            .chain(std::iter::once(("pass".to_string(), cpu as f64 / 1e9)))
            .collect();
        let PassFigures {
            expand,
            answer_bytes,
            chunks_marked_by_combine,
        } = std::mem::take(&mut *lock(&self.figures));
        let waits = [
            ("for_chunk_reads", since(Part::WaitChunkRead)),
            ("for_device", expand.timing.host_wait_seconds),
            ("for_flushers", since(Part::WaitFlusher)),
            ("for_run_reads", since(Part::WaitRunRead)),
            ("for_write_back", since(Part::WaitWriteBack)),
            ("for_marking", since(Part::WaitMarking)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        self.stats.record_pass(
            &self.name(),
            PassRecord {
                pass: d,
                expander: expand.expander,
                seconds: wall.as_secs_f64(),
                expand_seconds: since(Part::Expand),
                candidate_seconds: since(Part::Candidates),
                candidates: expand.candidates,
                settled_by_summary: expand.settled_by_summary,
                chunks_marked_by_combine,
                answer_seconds: since(Part::Answer),
                combine_seconds: since(Part::Combine),
                bytes_read: self.stats.bytes_read() - mark.read,
                bytes_written: self.stats.bytes_written() - mark.written,
                stretch_reads: self.stats.stretch_reads() - mark.stretch_reads,
                value_writes: self.values.writes() - mark.value_writes,
                cpu_seconds,
                jobs: expand.chunks,
                requests: expand.requests,
                scratch_bytes_per_request: (expand.requests > 0)
                    .then(|| (expand.request_bytes + answer_bytes) as f64 / expand.requests as f64),
                device: expand.timing,
                waits,
                step_bytes,
            },
        )
    }

    pub(super) fn name(&self) -> String {
        self.game.partition_name(self.layout.order()[self.slot])
    }

    pub(super) fn sync(&self) -> Result<()> {
        self.stats.profile.time(Part::Sync, || {
            self.values.sync()?;
            self.summary.sync()?;
            self.flags.sync()
        })
    }

    pub(super) fn chunk_range(&self, size: u64, c: u64) -> (u64, u64) {
        let lo = c * self.plan.chunk;
        (lo, (lo + self.plan.chunk).min(size))
    }

    pub(super) fn size(&self) -> u64 {
        self.layout.size(self.slot)
    }

    pub(super) fn chunk_count(&self) -> u64 {
        self.size().div_ceil(self.plan.chunk)
    }

    /// Whether a step over the chunks from `first` on has at most one:
    /// nothing to overlap a helper thread's reads or writes with, so the
    /// step does them on its own thread.
    pub(super) fn no_overlap_from(&self, first: u64) -> bool {
        self.chunk_count().saturating_sub(first) <= 1
    }

    pub(super) fn read(&self, file: &ByteFile, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = self.spare.take(len, Fill::Overwritten);
        self.read_into(file, offset, &mut buf)?;
        Ok(buf)
    }

    /// Reads `buf.len()` bytes at `offset` into `buf`, counted as read.
    pub(super) fn read_into(&self, file: &ByteFile, offset: u64, buf: &mut [u8]) -> Result<()> {
        file.read_whole(offset, buf)?;
        self.stats.read(buf.len() as u64);
        self.progress.bytes(buf.len() as u64);
        Ok(())
    }

    /// [`ByteFile::read_ranges`], counted as read.
    pub(super) fn read_ranges(
        &self,
        file: &ByteFile,
        base: u64,
        buf: &mut [u8],
        ranges: &[(usize, usize)],
    ) -> Result<()> {
        file.read_ranges(base, buf, ranges)?;
        let bytes: usize = ranges.iter().map(|(start, end)| end - start).sum();
        self.stats.read(bytes as u64);
        self.stats.read_stretches(ranges.len() as u64);
        self.progress.bytes(bytes as u64);
        Ok(())
    }

    pub(super) fn write(&self, file: &ByteFile, offset: u64, buf: &[u8]) -> Result<()> {
        file.write_at(offset, buf)?;
        self.stats.wrote(buf.len() as u64);
        self.progress.bytes(buf.len() as u64);
        Ok(())
    }

    /// Reads chunk `c` of this partition: values and flags.
    pub(super) fn read_chunk(&self, c: u64) -> Result<(Vec<u8>, Vec<u8>)> {
        let (lo, hi) = self.chunk_range(self.size(), c);
        let values = self.read(&self.values, lo, (hi - lo) as usize)?;
        let flags = self.read(&self.flags, lo / 4, (hi - lo).div_ceil(4) as usize)?;
        Ok((values, flags))
    }

    /// [`Self::read_chunk`] of the `stretches` of chunk `c` alone (offsets
    /// in the chunk, whole words of 64 positions but for the chunk's end):
    /// elsewhere flags are zero, flags that neither expand nor decide a
    /// position, and values are whatever the buffer held. Nothing reads a
    /// value outside the stretches (a position is looked at only where its
    /// flags say it expands or is decided); zeroing them, a chunk's
    /// megabytes on the reader's thread, was a third of that thread's time
    /// in a late pass.
    pub(super) fn read_chunk_in(
        &self,
        c: u64,
        stretches: &[(usize, usize)],
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let (lo, hi) = self.chunk_range(self.size(), c);
        let len = (hi - lo) as usize;
        let (mut values, mut flags) = (
            self.spare.take(len, Fill::Overwritten),
            self.spare.take(len.div_ceil(4), Fill::Zeroed),
        );
        // Flag bytes hold four positions: stretches start on whole words, so
        // their flag bytes are apart too.
        let flag_bytes: Vec<(usize, usize)> = stretches
            .iter()
            .map(|&(start, end)| (start / 4, end.div_ceil(4)))
            .collect();
        self.read_ranges(&self.values, lo, &mut values, stretches)?;
        self.read_ranges(&self.flags, lo / 4, &mut flags, &flag_bytes)?;
        Ok((values, flags))
    }

    /// Reads chunk `c` of this partition with its positions' summaries.
    pub(super) fn read_chunk_with_summary(&self, c: u64) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>)> {
        let (lo, hi) = self.chunk_range(self.size(), c);
        let (values, flags) = self.read_chunk(c)?;
        let summary = self.read(
            &self.summary,
            lo * Earlier::BYTES as u64,
            (hi - lo) as usize * Earlier::BYTES,
        )?;
        Ok((values, flags, summary))
    }

    /// Starts a progress phase over the partition's positions, those of the
    /// chunks before `first` (done before an interruption) counted as done.
    pub(super) fn chunk_phase(&self, what: &str, first: u64) {
        self.progress
            .phase(&format!("{} {what}", self.name()), self.size());
        self.progress
            .inc((first * self.plan.chunk).min(self.size()));
    }

    /// Runs `work` on each chunk of this partition in order while a reader
    /// thread loads the next one (double buffering).
    pub(super) fn for_each_chunk<T: Send>(
        &self,
        first: u64,
        load: impl Fn(u64) -> Result<T> + Sync,
        mut work: impl FnMut(u64, T) -> Result<()>,
    ) -> Result<()> {
        self.with_chunks(first, load, |next| {
            while let Some((c, loaded)) = next()? {
                work(c, loaded)?;
            }
            Ok(())
        })
    }

    /// Hands `body` a puller of this partition's chunks from `first` on,
    /// each loaded by a reader thread while the one before is worked on
    /// (`None` past the last).
    pub(super) fn with_chunks<T: Send, R>(
        &self,
        first: u64,
        load: impl Fn(u64) -> Result<T> + Sync,
        body: impl FnOnce(&mut dyn FnMut() -> Result<Option<(u64, T)>>) -> Result<R>,
    ) -> Result<R> {
        let n = self.chunk_count();
        let mut c = first;
        let mut pull = |fetch: &mut dyn FnMut(u64) -> Result<T>| -> Result<Option<(u64, T)>> {
            if c >= n {
                return Ok(None);
            }
            let loaded = self.stats.profile.time(Part::WaitChunkRead, || fetch(c))?;
            c += 1;
            Ok(Some((c - 1, loaded)))
        };
        if self.no_overlap_from(first) {
            // No work to overlap the load with, so no thread (one per step
            // cost a small partition's passes its start and stack each
            // time: 6,066 threads for the 5,831 passes of 201 small
            // partitions).
            return body(&mut || pull(&mut |c| load(c)));
        }
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T>>(1);
            let load = &load;
            std::thread::Builder::new()
                .name("tbforge-chunks".into())
                .spawn_scoped(scope, move || {
                    for c in first..n {
                        let loaded = load(c);
                        let failed = loaded.is_err();
                        if tx.send(loaded).is_err() || failed {
                            return;
                        }
                    }
                })
                .map_err(|e| {
                    Error::NotAvailable(format!("cannot start the chunk reader thread: {e}"))
                })?;
            body(&mut || {
                pull(&mut |_| {
                    rx.recv().map_err(|_| {
                        Error::NotAvailable("the chunk reader thread stopped".into())
                    })?
                })
            })
        })
    }

    /// A step's writer of run files of `kind`, and the first chunk or bucket
    /// it has left: where a checkpoint inside the step left it (`at`: that
    /// chunk or bucket, and the runs as recorded then, cut back to them), or
    /// a new one from the start.
    pub(super) fn step_writer(
        &self,
        kind: &'static str,
        at: Option<(u64, RunIndex)>,
    ) -> Result<(u64, RunWriter)> {
        let capacity = self.plan.run_capacity;
        let parts = &self.writer_parts;
        Ok(match at {
            Some((first, runs)) => (
                first,
                RunWriter::resume(self.disks, kind, capacity, runs, parts)?,
            ),
            None => (0, RunWriter::new(self.disks, kind, capacity, parts)?),
        })
    }

    /// Ends a step's writer: its runs are what the next step reads.
    pub(super) fn finish_runs(&self, writer: RunWriter) -> Result<RunIndex> {
        let index = writer.finish()?;
        self.stats.wrote(index.bytes);
        self.progress.bytes(index.bytes);
        Ok(index)
    }

    /// Starts fetching the first block of bucket `bucket`'s runs of `kind`.
    pub(super) fn prefetch_runs(&self, kind: &str, runs: &RunIndex, bucket: u64) {
        let block_bytes = self.plan.run_capacity as u64 * 16;
        prefetch_bucket(self.disks, kind, runs, bucket, block_bytes);
    }

    /// Streams bucket `bucket`'s runs of `kind` to `apply`, a block of
    /// records in `order` at a time.
    pub(super) fn read_runs(
        &self,
        kind: &str,
        runs: &RunIndex,
        bucket: u64,
        order: Order,
        apply: impl FnMut(&[Record]) -> Result<()>,
    ) -> Result<()> {
        let blocks = Blocks {
            records: self.plan.run_capacity,
            order,
        };
        let mut decoded = std::mem::take(&mut *lock(&self.decoded));
        let read = read_bucket(
            (self.disks, kind),
            runs,
            bucket,
            blocks,
            &self.stats.profile,
            &mut decoded,
            apply,
        );
        *lock(&self.decoded) = decoded;
        let read = read?;
        self.stats.read(read);
        self.progress.bytes(read);
        Ok(())
    }

    /// The first scan: returns the longest distance seen, and whether some
    /// position is left for the passes (one with a move inside the partition).
    fn first_scan(
        &self,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u32, bool)> {
        if let Some(slots) = self.resident_slots() {
            // Chunks before a checkpoint of the combine step (either way's)
            // are decided; one of the expand or answer steps of a scan
            // through run files says nothing of that: it starts over.
            let from = from.filter(|w| w.step == Step::Combine);
            return self.first_scan_in_memory(&slots, from, save);
        }
        // A checkpoint of a scan answered in memory names no runs, and its
        // chunks after it were never expanded: the scan starts over (the
        // expand step sets every value and flag again).
        let from = match from {
            Some(w) if w.step == Step::Combine && w.requests.bytes == 0 => {
                self.stats
                    .profile
                    .time(Part::ClearRuns, || self.disks.clear_runs(None))?;
                None
            }
            from => from,
        };
        let (requests, answers, from) = self.exchange(0, None, from, save)?;
        self.first_combine(&requests, &answers, from, save)
    }

    /// Pass `d`: returns how many positions it decided, the request bytes
    /// it exchanged, and whether it expanded part of the pending positions
    /// only (its candidates, or those their summaries do not settle).
    fn pass(
        &self,
        d: u32,
        from: Option<WithinPass>,
        redoing: bool,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u64, u64, bool)> {
        let candidates = self.candidates(d)?;
        let done = self.pass_over(d, candidates.as_ref(), from, redoing, save);
        if let Some(k) = candidates {
            self.keep_marks(k);
        }
        done
    }

    /// Pass `d` over its `candidates` (every pending position: `None`).
    fn pass_over(
        &self,
        d: u32,
        candidates: Option<&Candidates>,
        from: Option<WithinPass>,
        redoing: bool,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u64, u64, bool)> {
        let only = candidates.is_some();
        // A pass that decides through a successor at `d - 1` alone
        // decides each pending candidate when the marks are exact: a
        // candidate is a predecessor within the partition of a position at
        // `d - 1` or has a summary that names `d - 1`, so it has such a
        // successor. Its expand and answer steps would only confirm it.
        if candidates.is_some_and(Candidates::exact) && PassAcc::decides_by_hit(self.kind, d) {
            // A checkpoint of this pass lies in its combine step (or, made
            // by a build that exchanged requests, before it: redone).
            let from = from.filter(|w| w.step == Step::Combine);
            let decided = self.pass_combine(d, candidates, Deciding::Marks, from, save)?;
            lock(&self.figures).expand = ExpandStep {
                expander: "none: its candidates decided by their marks".into(),
                candidates: Some(decided),
                ..ExpandStep::default()
            };
            return Ok((decided, 0, only));
        }
        let exact = candidates.is_some_and(Candidates::exact);
        if self.answers_in_memory(d, exact) {
            let decided = self.pass_in_memory(d, candidates)?;
            return Ok((decided, 0, only));
        }
        self.drop_blocking();
        let (requests, answers, from) = self.exchange(d, candidates, from, save)?;
        // A pass that decides losses does not expand the positions their
        // summaries settle: one without requests then went over part of the
        // pending positions only, as a pass over candidates does, and says
        // nothing of moves inside the partition (a two-player game's
        // partition once ended so, a pass before its last wins).
        let partial = only || lock(&self.figures).expand.settled_by_summary > 0;
        // A pass redone after an interruption may find its candidates all
        // decided already (a win at `d` is every pending predecessor of a
        // loss at `d - 1`): they made no request, but the pass loop's end
        // test needs them counted, so the combine step runs, with no answers.
        if requests.bytes == 0 && !(only && redoing) {
            // Nothing to combine, nothing decided: the next pass's marks
            // from this one's decisions are none, and where distance lists
            // hold the rest it need read no chunk for them.
            if only && lock(&self.distance_lists).is_some() {
                if let Some(next) = self.start_next_marks(d, 0) {
                    self.finish_next_marks(next);
                }
            }
            return Ok((0, 0, partial));
        }
        let decided = self.pass_combine(
            d,
            candidates,
            Deciding::Answers {
                requests: &requests,
                answers: &answers,
            },
            from,
            save,
        )?;
        Ok((decided, requests.bytes, partial))
    }

    /// Pass `d`, a pass that decides losses over exact candidates, answered
    /// in memory (see blocking.rs), each chunk decided as soon as its
    /// requests are all back: returns how many positions it decided. It
    /// records no checkpoint inside itself (its bits are in memory alone),
    /// and a checkpoint inside it, which an older binary may have made, is
    /// not used: the pass is redone whole.
    ///
    /// One step does the work of the expand and combine steps: its time
    /// deciding chunks (less the marking inside) is the combine step's, the
    /// rest and all its CPU time and bytes the expand step's.
    fn pass_in_memory(&self, d: u32, candidates: Option<&Candidates>) -> Result<u64> {
        let mut no_save = |_: WithinPass| Ok(());
        let profile = &self.stats.profile;
        let clock = StepClock::start();
        let mut deciding = Duration::ZERO;
        let mut marking = Duration::ZERO;
        let done = profile.in_step(Part::Expand, || -> Result<(Blocking, u64)> {
            let blocking = self.take_blocking_for(d)?;
            let mut decider = self.pass_decider(d, candidates, Deciding::InMemory(&blocking), 0, 0);
            let reads = decider.reads();
            self.with_write_back(|back| {
                let mut decide = |c: u64, chunk| {
                    let started = Instant::now();
                    let done = self.decide_chunk(&mut decider, c, chunk, back);
                    deciding += started.elapsed();
                    done
                };
                let in_memory = DecideAsExpanded {
                    blocking: &blocking,
                    reads,
                    decide: &mut decide,
                };
                self.expand(
                    d,
                    candidates,
                    None,
                    Some(InMemory::Pass(in_memory)),
                    &mut no_save,
                )
            })?;
            marking = decider.marking;
            let decided = self.finish_decider(decider);
            Ok((blocking, decided))
        });
        let (wall, cpu) = clock.read();
        profile.add_step(Part::Expand, wall.saturating_sub(deciding), cpu);
        profile.add(Part::Combine, deciding.saturating_sub(marking));
        profile.add(Part::Candidates, marking);
        self.end_step();
        let (blocking, decided) = done?;
        let expander = &mut lock(&self.figures).expand.expander;
        if !expander.ends_with(ANSWERED_ON_DEVICE) {
            *expander += ", answered in memory";
        }
        *lock(&self.blocking) = Some(blocking);
        Ok(decided)
    }

    /// The expand and answer steps of pass `d` (0: the first scan; with
    /// `candidates`, only theirs are expanded), or what a
    /// checkpoint says of them: the requests, the answers, and where the
    /// combine step starts if it had started.
    fn exchange(
        &self,
        d: u32,
        candidates: Option<&Candidates>,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(RunIndex, RunIndex, Option<WithinPass>)> {
        let (requests, from) = self.exchange_step(
            from,
            (Step::Expand, Part::Expand),
            |w| &w.requests,
            |from| self.expand(d, candidates, from, None, save),
        )?;
        if requests.bytes == 0 {
            return Ok((requests, RunIndex::default(), None));
        }
        let (answers, from) = self.exchange_step(
            from,
            (Step::Answer, Part::Answer),
            |w| &w.answers,
            |from| self.answer(&requests, d, from, save),
        )?;
        // The request runs stay until the pass's last checkpoint: an answer
        // step resumed from its checkpoint reads them again.
        Ok((requests, answers, from))
    }

    /// Lets go of the buffers a step kept between its buckets or chunks, so
    /// that the next step's are not held beside them.
    pub(super) fn end_step(&self) {
        *lock(&self.decoded) = Vec::new();
    }

    /// Runs `step` (timed as `part`) from where `from` stands in it; when a
    /// checkpoint is past the step, its runs are the ones it recorded
    /// (`wrote`). Returns them, and where the steps after it start.
    fn exchange_step(
        &self,
        from: Option<WithinPass>,
        (step, part): (Step, Part),
        wrote: impl FnOnce(&WithinPass) -> &RunIndex,
        run: impl FnOnce(Option<WithinPass>) -> Result<RunIndex>,
    ) -> Result<(RunIndex, Option<WithinPass>)> {
        match from {
            Some(w) if w.step != step => Ok((wrote(&w).clone(), Some(w))),
            from => {
                let runs = self.stats.profile.time_step(part, || run(from));
                self.end_step();
                Ok((runs?, None))
            }
        }
    }
}
