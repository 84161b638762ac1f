//! The combine step: each chunk of the partition streamed again, the answers
//! applied to its positions, which are decided and written back; and the
//! per-position summary of earlier partitions' successors that the first
//! scan leaves to the passes.

use super::blocking::Blocking;
use super::buffers::{Fill, SpareBuffers};
use super::candidates::{leaves_unread, Candidates, NextMarks, Stretches};
use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::disks::cut_apart;
use super::distance_lists::DistanceLists;
use super::external::{flag, lock, Solver, INTERNAL, ONGOING};
use super::runs::{Order, Record, RunIndex};
use super::stats::{Part, Profile, StepClock};
use crate::game::{Game, GameKind};
use crate::value::rules::{at, PassAcc, PENDING};
use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Per-position summary of successors in earlier partitions, as the first
/// scan gathers them: nearest loss (puzzles: nearest goal distance), longest
/// win, and whether some successor is neither (draw). The passes keep only
/// what they need of it ([`Earlier`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Summary {
    nearest_loss: Option<u8>,
    longest_win: Option<u8>,
    blocked: bool,
}

impl Summary {
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

    /// What the passes keep of it (see [`Earlier`]).
    fn earlier(self) -> Earlier {
        Earlier(match (self.nearest_loss, self.blocked, self.longest_win) {
            (Some(e), _, _) => e,
            (None, true, _) => Earlier::BLOCKED,
            (None, false, Some(e)) => e,
            (None, false, None) => Earlier::NONE,
        })
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
}

/// The [`Summary`] of each position of a chunk, gathered by many threads
/// at once (a first scan answered in memory folds each answer into its
/// requester's as the requests come back, in any order): each part in a
/// byte of its own, folded by an atomic minimum, maximum or or.
pub(super) struct AtomicSummaries {
    /// The nearest loss, [`AtomicSummaries::NONE`] for none.
    nearest_loss: Vec<AtomicU8>,
    /// One more than the longest win, 0 for none.
    longest_win: Vec<AtomicU8>,
    blocked: Vec<AtomicBool>,
}

impl AtomicSummaries {
    /// No loss (distances end at [`Value::MAX_DISTANCE`], below it).
    const NONE: u8 = u8::MAX;

    /// Summaries of `n` positions, none with a successor yet.
    pub(super) fn new(n: usize) -> AtomicSummaries {
        AtomicSummaries {
            // On all threads: a chunk's millions, made on the expand step's
            // thread as the chunk opens, held up its jobs.
            nearest_loss: (0..n)
                .into_par_iter()
                .map(|_| AtomicU8::new(Self::NONE))
                .collect(),
            longest_win: (0..n).into_par_iter().map(|_| AtomicU8::new(0)).collect(),
            blocked: (0..n)
                .into_par_iter()
                .map(|_| AtomicBool::new(false))
                .collect(),
        }
    }

    /// Positions held.
    pub(super) fn len(&self) -> usize {
        self.blocked.len()
    }

    /// [`Summary::add`] of position `j`'s, from any thread. A part that
    /// already holds as much is only read: most answers change nothing.
    #[inline]
    pub(super) fn add(&self, j: usize, kind: GameKind, v: Value) {
        match v.distance() {
            Some(e) if kind == GameKind::Puzzle || e % 2 == 0 => {
                let (e, at) = (e as u8, &self.nearest_loss[j]);
                if at.load(Ordering::Relaxed) > e {
                    at.fetch_min(e, Ordering::Relaxed);
                }
            }
            Some(e) => {
                let (e, at) = (e as u8 + 1, &self.longest_win[j]);
                if at.load(Ordering::Relaxed) < e {
                    at.fetch_max(e, Ordering::Relaxed);
                }
            }
            None => {
                let at = &self.blocked[j];
                if !at.load(Ordering::Relaxed) {
                    at.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Position `j`'s summary, once every thread that added to it is done.
    fn get(&self, j: usize) -> Summary {
        let loss = self.nearest_loss[j].load(Ordering::Relaxed);
        let win = self.longest_win[j].load(Ordering::Relaxed);
        Summary {
            nearest_loss: (loss != Self::NONE).then_some(loss),
            longest_win: win.checked_sub(1),
            blocked: self.blocked[j].load(Ordering::Relaxed),
        }
    }

    /// Every position's summary, into `out` (whose room is reused).
    pub(super) fn read_into<'o>(&self, out: &'o mut Vec<Summary>) -> &'o mut [Summary] {
        // Every summary is overwritten: no clearing pass first.
        if out.len() < self.len() {
            out.resize(self.len(), Summary::default());
        }
        let out = &mut out[..self.len()];
        out.par_iter_mut()
            .enumerate()
            .for_each(|(j, s)| *s = self.get(j));
        out
    }
}

/// What the passes need of a pending position's successors in earlier
/// partitions, in the byte a position the first scan leaves them (a third
/// of its [`Summary`]'s three: the passes read it for every pending
/// candidate). One of them decides every pass as the whole summary does:
/// - a nearest loss at `e` (a puzzle's nearest goal): the pass `e + 1`
///   decides the position a win there (it is a candidate, its summary
///   naming `e`) if no earlier pass did, and every pass before sees `e` as
///   undecided, which blocks a loss; a longest win or a draw changes none
///   of that (an odd pass hits through an even distance alone);
/// - else a draw: it blocks every loss, and hits no pass;
/// - else the longest win, or nothing.
///
/// A position with both a win and a loss or a draw is therefore no
/// candidate for the pass after its longest win, which could not decide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Earlier(u8);

impl Earlier {
    /// Bytes a position.
    pub(super) const BYTES: usize = 1;
    /// A draw among the successors and no loss (distances end at
    /// [`Value::MAX_DISTANCE`], below both codes).
    const BLOCKED: u8 = 254;
    /// No successor in an earlier partition.
    const NONE: u8 = 255;

    pub(super) fn decode(b: u8) -> Earlier {
        Earlier(b)
    }

    /// The distance it names, if any.
    pub(super) fn distance(self) -> Option<u32> {
        (self.0 < Self::BLOCKED).then_some(u32::from(self.0))
    }

    /// Whether it names distance `e`.
    pub(super) fn mentions(self, e: u32) -> bool {
        self.distance() == Some(e)
    }

    /// Whether these successors alone leave pass `d` nothing to decide:
    /// they settle its accumulator (a loss's, blocked) without a decision,
    /// so no answer from inside the partition can change that, and the
    /// position need not be expanded.
    pub(super) fn settles_undecided(self, kind: GameKind, d: u32) -> bool {
        let mut acc = PassAcc::default();
        self.add_to(&mut acc, kind, d);
        acc.settled(kind, d) && acc.decide(kind, d).is_none()
    }

    /// Adds the earlier partitions' successors to pass `d`'s accumulator.
    /// (Adding is order-free, so this may come after the pass's answers.)
    fn add_to(self, acc: &mut PassAcc, kind: GameKind, d: u32) {
        match self.distance() {
            Some(e) => acc.add(kind, d, at(e)),
            None if self.0 == Self::BLOCKED => acc.add(kind, d, Value::DRAW),
            None => {}
        }
    }
}

/// Chunks' values written back on threads of their own while the next
/// chunk is combined, one chunk at a time: on the step's thread the copies
/// into the page cache (and the write-back they start) took a quarter of a
/// pass's combine step, with the cores idle. A chunk's pieces go to a
/// thread per file of the values ([`WritesValues::by_file`]): buffered
/// writes into one file take its lock in turn, and a late pass's scattered
/// writes were its largest cost. The threads live as long as the step: a
/// thread a chunk cost a start and an exit (a stack mapped and unmapped)
/// for each of a late pass's few writes.
pub(super) struct WriteBack<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    /// The partition's values.
    write: &'env (dyn WritesValues + 'env),
    /// Where a written buffer goes.
    spare: &'env SpareBuffers,
    /// Where the step's waits for its writes and markings are counted.
    profile: &'env Profile,
    /// The writing threads, started with the step's first write.
    writer: Option<Writer<'scope>>,
    /// The next pass's marking of a chunk before, in flight.
    marking: Option<std::thread::ScopedJoinHandle<'scope, ()>>,
    /// Whether writes run on the step's thread: a step over one chunk has
    /// no next chunk to overlap them with, and a thread a step cost the
    /// small partitions' passes a start each (7,360 threads for 5,831
    /// passes over 201 small partitions).
    inline: bool,
}

/// A piece of a chunk's values for one file's thread to write: the
/// chunk's values, its first index, and the stretches (chunk offsets)
/// that lie in that file.
type WriteJob = (Arc<Vec<u8>>, u64, Vec<(usize, usize)>);

/// One write-back thread's ends: pieces go in, their outcomes come out.
struct Lane<'scope> {
    jobs: Option<std::sync::mpsc::SyncSender<WriteJob>>,
    outcomes: std::sync::mpsc::Receiver<Result<()>>,
    thread: Option<std::thread::ScopedJoinHandle<'scope, ()>>,
}

/// The write-back threads, one per file of the values, started as a
/// chunk's pieces first reach that file.
#[derive(Default)]
struct Writer<'scope> {
    lanes: Vec<Lane<'scope>>,
    /// The lanes given a piece of the chunk in flight, their outcomes not
    /// yet taken.
    in_flight: Vec<usize>,
    /// The chunk in flight's values, back to the spare buffers once every
    /// piece is written.
    buffer: Option<Arc<Vec<u8>>>,
    /// Set once a thread panicked: the step's later writes fail too.
    broken: bool,
}

impl Drop for Writer<'_> {
    /// Ends the threads (their queues closed) and joins them, so that a
    /// panic in one is the error its outcome already reported, not the
    /// scope's.
    fn drop(&mut self) {
        for lane in &mut self.lanes {
            lane.jobs = None;
        }
        for lane in &mut self.lanes {
            if let Some(thread) = lane.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// Where a write-back thread writes a chunk's values: the partition's
/// solver, which the step's threads (its markings too) borrow.
pub(super) trait WritesValues: Sync {
    /// Writes `bytes` at `offset` of the partition's values.
    fn write_values(&self, offset: u64, bytes: &[u8]) -> Result<()>;

    /// `ranges` of the values from `lo` on (offsets from `lo`, sorted,
    /// apart) cut where the values' files change, gathered by file.
    fn by_file(&self, lo: u64, ranges: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
        let _ = lo;
        vec![ranges.to_vec()]
    }
}

impl<F: Fn(u64, &[u8]) -> Result<()> + Sync> WritesValues for F {
    fn write_values(&self, offset: u64, bytes: &[u8]) -> Result<()> {
        self(offset, bytes)
    }
}

impl<G: Game> WritesValues for Solver<'_, G> {
    fn write_values(&self, offset: u64, bytes: &[u8]) -> Result<()> {
        self.write(&self.values, offset, bytes)
    }

    fn by_file(&self, lo: u64, ranges: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
        self.values.ranges_by_file(lo, ranges)
    }
}

/// Decided positions of a chunk from which its marking of the next pass's
/// candidates runs on a thread of its own, beside the step's next chunks
/// (fewer cost less than the thread).
const MARK_BESIDE: usize = 512;

impl<'scope, 'env> WriteBack<'scope, 'env> {
    /// Nothing in flight yet: writes through `write`, written buffers kept
    /// in `spare`, threads of `scope`.
    fn new(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        write: &'env (dyn WritesValues + 'env),
        spare: &'env SpareBuffers,
        profile: &'env Profile,
    ) -> Self {
        WriteBack {
            scope,
            write,
            spare,
            profile,
            writer: None,
            marking: None,
            inline: false,
        }
    }

    /// Writes run on the calling thread, each done when [`Self::start`]
    /// returns.
    fn inline(self) -> Self {
        WriteBack {
            inline: true,
            ..self
        }
    }

    /// Waits for the marking in flight, if any.
    fn settle_marking(&mut self) -> Result<()> {
        let Some(marking) = self.marking.take() else {
            return Ok(());
        };
        match self.profile.time(Part::WaitMarking, || marking.join()) {
            Err(_) => Err(Error::NotAvailable("a marking thread panicked".into())),
            Ok(()) => Ok(()),
        }
    }

    /// Waits for the marking in flight, then starts `mark` on a thread of
    /// its own: one at a time, so that the step's chunks ahead of their
    /// marking stay few (each holds its list of decided positions).
    fn start_marking(&mut self, mark: impl FnOnce() + Send + 'env) -> Result<()> {
        self.settle_marking()?;
        let marking = std::thread::Builder::new()
            .name("tbforge-marking".into())
            .spawn_scoped(self.scope, mark)
            .map_err(|e| Error::NotAvailable(format!("cannot start a marking thread: {e}")))?;
        self.marking = Some(marking);
        Ok(())
    }

    /// Waits for the write in flight, if any: a checkpoint counts a chunk
    /// as done only once its values are written.
    pub(super) fn settle(&mut self) -> Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let mut outcome = Ok(());
        let in_flight = std::mem::take(&mut writer.in_flight);
        if !in_flight.is_empty() {
            self.profile.time(Part::WaitWriteBack, || {
                for k in in_flight {
                    let got = writer.lanes[k].outcomes.recv().unwrap_or_else(|_| {
                        writer.broken = true;
                        Err(Error::NotAvailable("a write-back thread panicked".into()))
                    });
                    if outcome.is_ok() {
                        outcome = got;
                    }
                }
            });
        }
        // Every piece is written and each thread let go of the buffer
        // before it said so.
        if let Some(Ok(written)) = writer.buffer.take().map(Arc::try_unwrap) {
            self.spare.keep(written);
        }
        outcome
    }

    /// Waits for the write in flight, then starts writing back `values`,
    /// the chunk's at `lo`: its `stretches` (what a pass changed: the rest
    /// holds what the disk holds, or is not the chunk's), or all of it.
    fn start(
        &mut self,
        values: Vec<u8>,
        lo: u64,
        stretches: Option<Vec<(usize, usize)>>,
    ) -> Result<()> {
        self.settle()?;
        let ranges = stretches.unwrap_or_else(|| vec![(0, values.len())]);
        if self.inline {
            let written = ranges.iter().try_for_each(|&(start, end)| {
                self.write
                    .write_values(lo + start as u64, &values[start..end])
            });
            self.spare.keep(values);
            return written;
        }
        let pieces = self.write.by_file(lo, &ranges);
        let mut writer = self.writer.take().unwrap_or_default();
        while writer.lanes.len() < pieces.len() {
            match self.start_lane() {
                Ok(lane) => writer.lanes.push(lane),
                Err(e) => {
                    self.writer = Some(writer);
                    return Err(e);
                }
            }
        }
        let values = Arc::new(values);
        let mut sent = !writer.broken;
        for (k, piece) in pieces.into_iter().enumerate() {
            if piece.is_empty() || !sent {
                continue;
            }
            let lane = &writer.lanes[k];
            sent = lane
                .jobs
                .as_ref()
                .is_some_and(|jobs| jobs.send((Arc::clone(&values), lo, piece)).is_ok());
            if sent {
                writer.in_flight.push(k);
            } else {
                writer.broken = true;
            }
        }
        writer.buffer = Some(values);
        self.writer = Some(writer);
        if !sent {
            // What was handed over is waited for (its outcome dropped): the
            // error that matters is the panic.
            let _ = self.settle();
            return Err(Error::NotAvailable("a write-back thread panicked".into()));
        }
        Ok(())
    }

    /// A thread that writes the pieces of one file of the values that
    /// [`Self::start`] hands it, in order.
    fn start_lane(&self) -> Result<Lane<'scope>> {
        let (jobs, queue) = std::sync::mpsc::sync_channel::<WriteJob>(1);
        let (done, outcomes) = std::sync::mpsc::sync_channel(1);
        let write = self.write;
        let thread = std::thread::Builder::new()
            .name("tbforge-writeback".into())
            .spawn_scoped(self.scope, move || {
                for (values, lo, stretches) in queue {
                    let written = stretches.iter().try_for_each(|&(start, end)| {
                        write.write_values(lo + start as u64, &values[start..end])
                    });
                    // Let go first: the step takes the buffer back once
                    // every thread said it is done.
                    drop(values);
                    if done.send(written).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| Error::NotAvailable(format!("cannot start a write-back thread: {e}")))?;
        Ok(Lane {
            jobs: Some(jobs),
            outcomes,
            thread: Some(thread),
        })
    }
}

/// Bytes a write call is worth: neighbouring changes fewer bytes apart are
/// written as one stretch with what lies between them. A short write call
/// into the page cache took 5 to 8 us on the hosts measured (the device
/// hosts' ext4: 8.3 us), the time of about 16 KiB at a disk's 2 to 3 GB/s,
/// and the bytes between two such changes dirty at most four more pages.
const JOIN_WITHIN: usize = 16 << 10;

/// The stretches of a chunk whose values a pass changed, to be written
/// back (chunk offsets, sorted, apart): neighbours closer than
/// [`JOIN_WITHIN`] joined where the bytes between them were read. A late
/// pass decides a few positions among the many it reads, and writing each
/// read stretch back (tens of thousands of calls) held its combine step.
#[derive(Default)]
struct Changes {
    /// The read bytes the changes lie in (`start..end`): the bytes between
    /// two changes in them hold what the disk holds.
    read: (usize, usize),
    ranges: Vec<(usize, usize)>,
}

impl Changes {
    /// None yet, in the read bytes `read` (a piece of a chunk).
    fn within(read: (usize, usize)) -> Changes {
        Changes {
            read,
            ranges: Vec::new(),
        }
    }

    /// Position `offset` (in the read bytes, after every one added before)
    /// changed.
    fn add(&mut self, offset: usize) {
        debug_assert!((self.read.0..self.read.1).contains(&offset));
        match self.ranges.last_mut() {
            Some(last) if offset - last.1 < JOIN_WITHIN => last.1 = offset + 1,
            _ => self.ranges.push((offset, offset + 1)),
        }
    }

    /// The changes of the next piece, `after`, appended: its first joined
    /// to this one's last where the pieces are one read stretch.
    fn join(&mut self, after: Changes) {
        // One read stretch: this piece's end is the next one's start.
        let contiguous = self.read.1 == after.read.0;
        let mut ranges = after.ranges.into_iter();
        if let Some(first) = ranges.next() {
            match self.ranges.last_mut() {
                Some(last)
                    if contiguous && last.0 >= self.read.0 && first.0 - last.1 < JOIN_WITHIN =>
                {
                    last.1 = first.1
                }
                _ => self.ranges.push(first),
            }
        }
        self.ranges.extend(ranges);
        self.read = if contiguous {
            (self.read.0, after.read.1)
        } else {
            after.read
        };
    }
}

/// Positions per slice when a chunk's positions are combined in parallel (a
/// multiple of 4: flags are packed four to a byte).
const SLICE: usize = 1 << 14;

/// The positions of `start..end` (chunk offsets) whose flags are exactly
/// `ONGOING | INTERNAL`, in order: the only ones a pass decides. A pass's
/// flags are masked to its candidates, so most words are zero, and are
/// passed over 32 positions at a time: a flag test a position was a fifth
/// of a middle pass's time where it read tens of megabytes of stretches
/// for a few thousand candidates.
fn ongoing_internal(flags: &[u8], start: usize, end: usize) -> impl Iterator<Item = usize> + '_ {
    const _: () = assert!(
        ONGOING == 1 && INTERNAL == 2,
        "the masks below read these bits"
    );
    // Bit 2i of a word set: both of position i's flags are.
    const LOW: u64 = 0x5555_5555_5555_5555;
    let bytes = &flags[start / 4..end.div_ceil(4)];
    let base = start / 4 * 4;
    bytes
        .chunks(8)
        .enumerate()
        .flat_map(move |(k, group)| {
            let mut word = [0u8; 8];
            word[..group.len()].copy_from_slice(group);
            let x = u64::from_le_bytes(word);
            let mut both = x & (x >> 1) & LOW;
            let first = base + 32 * k;
            std::iter::from_fn(move || {
                if both == 0 {
                    return None;
                }
                let at = first + both.trailing_zeros() as usize / 2;
                both &= both - 1;
                Some(at)
            })
        })
        .filter(move |&j| (start..end).contains(&j))
}

/// The first `n` of `kept` (grown where shorter), each reset to its
/// default on all threads: per-position state kept from chunk to chunk,
/// since a fresh chunk's worth, faulted in and filled on the step's thread,
/// held every core up.
fn cleared<T: Default + Clone + Send>(kept: &mut Vec<T>, n: usize) -> &mut [T] {
    if kept.len() < n {
        kept.resize(n, T::default());
    }
    let part = &mut kept[..n];
    part.par_chunks_mut(SLICE)
        .for_each(|piece| piece.fill(T::default()));
    part
}

/// Records per ascending run a block needs on average for its threads to
/// binary-search their shares of it rather than scan it whole.
const MIN_RUN: usize = 64;

/// A piece of a chunk: `(start, end, at)`, offsets in the chunk and where
/// its accumulators start.
type Piece = (usize, usize, usize);

/// The parts of a chunk a pass's combine step decides in, in order, none
/// longer than [`SLICE`]: the whole chunk, or the stretches around the
/// pass's candidates. Accumulators are held for these positions alone,
/// packed one after another: a late pass has a few candidates a chunk, and
/// filling and scanning an accumulator for each of its positions cost more
/// than the rest of its work.
struct Pieces {
    list: Vec<Piece>,
    /// Accumulators in all.
    held: usize,
    /// Whether they are packed (`at` differs from `start`).
    packed: bool,
}

impl Pieces {
    /// The pieces of a chunk of `len` positions, within `stretches` (sorted,
    /// apart) where given.
    fn of(len: usize, stretches: Option<&[(usize, usize)]>) -> Pieces {
        let whole = [(0, len)];
        let (mut list, mut held) = (Vec::new(), 0);
        for &(start, end) in stretches.unwrap_or(&whole) {
            for from in (start..end).step_by(SLICE) {
                let to = (from + SLICE).min(end);
                list.push((from, to, held));
                held += to - from;
            }
        }
        Pieces {
            list,
            held,
            packed: stretches.is_some(),
        }
    }

    /// The accumulator of chunk offset `offset`, if a piece holds it.
    fn slot(&self, offset: u64) -> Option<usize> {
        let offset = usize::try_from(offset).ok()?;
        let k = self.list.partition_point(|&(start, _, _)| start <= offset);
        let &(start, end, at) = self.list.get(k.checked_sub(1)?)?;
        (offset < end).then(|| at + offset - start)
    }

    /// `values` (the chunk's) cut into the pieces' parts, with their pieces.
    fn carve<'v>(&self, values: &'v mut [u8]) -> Vec<(Piece, &'v mut [u8])> {
        let parts = cut_apart(
            values,
            self.list.iter().map(|&(start, end, _)| (start, end)),
        );
        self.list.iter().copied().zip(parts).collect()
    }
}

/// Applies each record to the target of its index (`targets[record.index()]`,
/// or the packed slot `pieces` give it), on all threads: each thread owns a
/// contiguous slice of the targets and applies the records that fall in it.
/// A block is a few ascending runs (a flusher writes each bucket's piece
/// sorted), so each thread finds its share of every run by binary search;
/// a block of many runs is scanned whole by every thread instead. Applying
/// is order-independent, so the result is the serial one.
///
/// A record outside the targets (a damaged run file) is an error, not a panic.
fn apply_in_parallel<T: Send>(
    targets: &mut [T],
    pieces: Option<&Pieces>,
    records: &[Record],
    apply: impl Fn(&mut T, &Record) + Sync,
) -> Result<()> {
    let slot = |r: &Record| match pieces {
        Some(pieces) => pieces.slot(r.index()),
        None => usize::try_from(r.index()).ok(),
    };
    let threads = rayon::current_num_threads();
    let applied = if threads == 1 || records.len() < 4 * SLICE {
        let mut applied = 0;
        for r in records {
            if let Some(t) = slot(r).and_then(|i| targets.get_mut(i)) {
                apply(t, r);
                applied += 1;
            }
        }
        applied
    } else {
        // Packed slots are found once, not by every thread.
        let slots: Option<Vec<usize>> = pieces.map(|_| {
            records
                .par_iter()
                .map(|r| slot(r).unwrap_or(usize::MAX))
                .collect()
        });
        let slot_of = |k: usize| match &slots {
            Some(slots) => slots[k],
            None => slot(&records[k]).unwrap_or(usize::MAX),
        };
        // Every thread reading every record cost sixteen reads of each
        // block on a 16-core host.
        let descents: Vec<usize> = (1..records.len())
            .into_par_iter()
            .filter(|&k| slot_of(k) < slot_of(k - 1))
            .collect();
        let runs: Option<Vec<(usize, usize)>> =
            (descents.len() < records.len() / MIN_RUN).then(|| {
                let starts = std::iter::once(0).chain(descents.iter().copied());
                let ends = descents
                    .iter()
                    .copied()
                    .chain(std::iter::once(records.len()));
                starts.zip(ends).collect()
            });
        // The first record of `a..b` (ascending slots) at or past `bound`.
        let first_at_least = |(a, b): (usize, usize), bound: usize| {
            a + match &slots {
                Some(slots) => slots[a..b].partition_point(|&s| s < bound),
                None => records[a..b].partition_point(|r| slot(r).unwrap_or(usize::MAX) < bound),
            }
        };
        let per_thread = targets.len().div_ceil(threads).max(1);
        targets
            .par_chunks_mut(per_thread)
            .enumerate()
            .map(|(t, slice)| {
                let lo = t * per_thread;
                let hi = lo + slice.len();
                let mut applied = 0;
                let mut visit = |from: usize, to: usize| {
                    for (k, r) in records.iter().enumerate().take(to).skip(from) {
                        let i = slot_of(k);
                        // Runs end at every descent, so the search is exact;
                        // a record outside the targets is never applied, and
                        // the count below says so.
                        if (lo..hi).contains(&i) {
                            apply(&mut slice[i - lo], r);
                            applied += 1;
                        }
                    }
                };
                match &runs {
                    Some(runs) => {
                        for &run in runs {
                            visit(first_at_least(run, lo), first_at_least(run, hi));
                        }
                    }
                    None => visit(0, records.len()),
                }
                applied
            })
            .sum()
    };
    if applied == records.len() {
        Ok(())
    } else {
        Err(Error::NotAvailable(format!(
            "a run file holds {} records outside the positions of their chunk the pass looks at ({}): scratch is damaged; delete the scratch directories and build again",
            records.len() - applied,
            targets.len()
        )))
    }
}

/// How a pass's combine step decides its pending candidates.
#[derive(Clone, Copy)]
pub(super) enum Deciding<'a> {
    /// By the answers to the requests its expand step made; both runs are
    /// named in a checkpoint of the step.
    Answers {
        /// The requests, which the answers' runs follow.
        requests: &'a RunIndex,
        /// The answers, by requesting position.
        answers: &'a RunIndex,
    },
    /// Every pending candidate is decided, without answers: its exact mark
    /// says it has a successor at `d - 1`, which is all a pass that decides
    /// by a hit needs (see `Solver::pass`).
    Marks,
    /// By the blocked bits the expand step set from its requests, and the
    /// summaries (see blocking.rs).
    InMemory(&'a Blocking),
}

/// What a pass's combine step reads of a chunk depends on (the reader
/// thread's share of [`PassDecider`]).
#[derive(Clone, Copy)]
pub(super) struct ChunkReads<'a> {
    d: u32,
    candidates: Option<&'a Candidates>,
    /// Whether the step marks the next pass's candidates.
    marking_next: bool,
    /// Whether it decides by the marks alone (no summary needed).
    by_marks: bool,
}

/// A chunk as a pass's combine step reads it.
pub(super) struct ChunkToDecide {
    values: Vec<u8>,
    /// Masked to the pass's candidates.
    flags: Vec<u8>,
    /// The flags as stored, where the marking scans the whole chunk.
    all_flags: Option<Vec<u8>>,
    summary: Vec<u8>,
    /// Whether the next pass's marks come from the decided positions alone.
    list_decided: bool,
    /// The stretches the chunk was read in (offsets in it), or `None`: whole.
    stretches: Option<Vec<(usize, usize)>>,
}

impl ChunkToDecide {
    /// The values as read (anything outside the stretches).
    pub(super) fn values(&self) -> &[u8] {
        &self.values
    }

    /// The flags, masked to the pass's candidates.
    pub(super) fn flags(&self) -> &[u8] {
        &self.flags
    }

    /// The summaries of the pending candidates (at least).
    pub(super) fn summary(&self) -> &[u8] {
        &self.summary
    }

    /// The stretches the chunk was read in, or `None` where it was read whole.
    pub(super) fn stretches(&self) -> Option<&[(usize, usize)]> {
        self.stretches.as_deref()
    }
}

/// A pass's combine step across its chunks: how it decides, what it has
/// decided so far, and the next pass's marks it makes.
pub(super) struct PassDecider<'a> {
    d: u32,
    candidates: Option<&'a Candidates>,
    deciding: Deciding<'a>,
    next: Option<NextMarks>,
    /// Accumulators kept from chunk to chunk (see [`Solver::decide_chunk`]).
    kept_accs: Vec<PassAcc>,
    decided: u64,
    /// Time spent marking the next pass's candidates.
    pub(super) marking: Duration,
}

impl<'a> PassDecider<'a> {
    /// What its chunks' reads depend on.
    pub(super) fn reads(&self) -> ChunkReads<'a> {
        ChunkReads {
            d: self.d,
            candidates: self.candidates,
            marking_next: self.next.is_some(),
            by_marks: matches!(self.deciding, Deciding::Marks),
        }
    }
}

impl<G: Game> Solver<'_, G> {
    /// The summaries of chunk `lo..`'s pending positions whose flags (as
    /// the pass takes them, masked to its candidates) say ongoing with a
    /// move inside the partition: the only ones the combine step decodes.
    /// They sit at their places in a chunk-long buffer; the rest of it holds
    /// what a spare buffer held (only those positions' are looked at).
    /// Where they are few and far apart they are read in short stretches:
    /// a late pass has a few candidates a chunk. Otherwise the chunk's are
    /// read whole.
    /// Where the chunk was read in stretches (`within`), only they are
    /// looked at.
    pub(super) fn read_pending_summaries(
        &self,
        lo: u64,
        values: &[u8],
        flags: &[u8],
        within: Option<&[(usize, usize)]>,
    ) -> Result<Vec<u8>> {
        let n = values.len();
        let whole = || {
            self.read(
                &self.summary,
                lo * Earlier::BYTES as u64,
                n * Earlier::BYTES,
            )
        };
        // Flags are zero outside the stretches a chunk was read in.
        let all = [(0, n)];
        let mut stretches = Stretches::new(n);
        for &(start, end) in within.unwrap_or(&all) {
            for j in ongoing_internal(flags, start, end) {
                if values[j] == PENDING && !stretches.add(j, j + 1) {
                    return whole();
                }
            }
        }
        let mut summary = self.spare.take(n * Earlier::BYTES, Fill::Overwritten);
        let bytes: Vec<(usize, usize)> = stretches
            .into_vec()
            .into_iter()
            .map(|(start, end)| (start * Earlier::BYTES, end * Earlier::BYTES))
            .collect();
        self.read_ranges(
            &self.summary,
            lo * Earlier::BYTES as u64,
            &mut summary,
            &bytes,
        )?;
        Ok(summary)
    }

    /// Answers are applied to a chunk's accumulators.
    fn answer_order(&self) -> Order {
        let per_position = std::mem::size_of::<PassAcc>().max(std::mem::size_of::<Summary>());
        Order::for_range(self.plan.chunk * per_position as u64)
    }

    /// Starts fetching the first block of chunk `c`'s answers.
    fn prefetch_answers(&self, answers: &RunIndex, c: u64) {
        if c < self.chunk_count() {
            self.prefetch_runs("ans", answers, c);
        }
    }

    /// Applies chunk `c`'s answers to `targets`, one per position of the
    /// chunk or of its `pieces`.
    fn apply_answers<T: Send>(
        &self,
        answers: &RunIndex,
        c: u64,
        (targets, pieces): (&mut [T], Option<&Pieces>),
        apply: impl Fn(&mut T, &Record) + Sync,
    ) -> Result<()> {
        self.read_runs("ans", answers, c, self.answer_order(), |records| {
            apply_in_parallel(targets, pieces, records, &apply)
        })
    }

    /// Runs `work` on the chunks from `first` on (those before it were
    /// combined before an interruption), timed as the combine step but for
    /// what `work` counts in `marking` (the next pass's marks).
    fn combine_chunks<'s, T: Send>(
        &'s self,
        what: &str,
        first: u64,
        load: impl Fn(u64) -> Result<T> + Sync,
        mut work: impl FnMut(u64, T, &mut WriteBack<'_, 's>) -> Result<()>,
        marking: &Cell<Duration>,
    ) -> Result<()> {
        self.chunk_phase(what, first);
        let clock = StepClock::start();
        let done = self.stats.profile.in_step(Part::Combine, || {
            self.with_write_back(|back| {
                self.for_each_chunk(first, load, |c, loaded| work(c, loaded, back))
            })
        });
        self.end_step();
        done?;
        let marking = marking.get();
        let profile = &self.stats.profile;
        // The CPU time of the marking inside stays the combine step's.
        let (wall, cpu) = clock.read();
        profile.add_step(Part::Combine, wall.saturating_sub(marking), cpu);
        profile.add(Part::Candidates, marking);
        Ok(())
    }

    /// Records, when due, that the combine step's chunks before `next` are
    /// done, with its tallies so far: the positions a pass decided, the
    /// longest distance the first scan saw.
    /// Values still being written back are written first.
    fn save_combine(
        &self,
        next: u64,
        (requests, answers): (&RunIndex, &RunIndex),
        (decided, max_seen): (u64, u32),
        back: &mut WriteBack<'_, '_>,
        save: &mut SaveWithin<'_>,
    ) -> Result<()> {
        self.save_when_due(next, self.chunk_count(), save, || {
            back.settle()?;
            Ok(WithinPass {
                next,
                requests: requests.clone(),
                answers: answers.clone(),
                decided,
                max_seen,
                ..WithinPass::at(Step::Combine)
            })
        })
    }

    /// The first scan's work on a chunk (from `lo`) once its positions'
    /// `summaries` are whole: decides each position with no move inside the
    /// partition, writes the summaries the passes read and the chunk's
    /// distance lists, and hands its values to `back`. Returns the longest
    /// distance seen and whether some position is left for the passes.
    pub(super) fn finish_first_chunk<'s>(
        &'s self,
        lo: u64,
        (mut values, flags): (Vec<u8>, Vec<u8>),
        summaries: &[Summary],
        lists: &mut Option<DistanceLists>,
        back: &mut WriteBack<'_, 's>,
    ) -> Result<(u32, bool)> {
        let kind = self.kind;
        let n = values.len();
        // Every byte is set below.
        let mut packed = self.spare.take(n * Earlier::BYTES, Fill::Overwritten);
        // Per slice of the chunk: (longest distance, some position
        // left for the passes, some distance too long to store).
        let (longest, internal, overflow) = values
            .par_chunks_mut(SLICE)
            .zip(packed.par_chunks_mut(SLICE * Earlier::BYTES))
            .zip(summaries.par_chunks(SLICE))
            .zip(flags.par_chunks(SLICE / 4))
            .map(|(((values, packed), summaries), flags)| {
                let (mut longest, mut internal, mut overflow) = (0u32, false, false);
                for (j, s) in summaries.iter().enumerate() {
                    packed[j] = s.earlier().0;
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
        // The passes read a summary only for a position with a move
        // inside the partition.
        if internal {
            self.write(&self.summary, lo * Earlier::BYTES as u64, &packed)?;
        }
        if let Some(lists) = lists.as_mut() {
            lists.add_chunk((&values, &flags, &packed), |file, offset, bytes| {
                self.write(file, offset, bytes)
            })?;
        }
        self.spare.keep(packed);
        self.spare.keep(flags);
        // Written beside the next chunk's work.
        back.start(values, lo, None)?;
        Ok((longest, internal))
    }

    /// The first scan's combine step, from where `from` left it: returns the
    /// longest distance seen, and whether some position is left for the passes.
    pub(super) fn first_combine(
        &self,
        requests: &RunIndex,
        answers: &RunIndex,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u32, bool)> {
        let kind = self.kind;
        let (first, mut max_seen) = from.map_or((0, 0), |w| (w.next, w.max_seen));
        // Chunks combined before an interruption are not looked at again, so
        // a resumed scan cannot tell: it leaves the answer to the passes.
        let mut left_for_passes = first > 0;
        let mut lists = self.first_scan_lists(first)?;
        let mut kept_summaries: Vec<Summary> = Vec::new();
        self.combine_chunks(
            "first scan: combine",
            first,
            |c| self.read_chunk(c),
            |c, (values, flags), back| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                self.prefetch_answers(answers, c + 1);
                let n = (hi - lo) as usize;
                let summaries = cleared(&mut kept_summaries, n);
                self.apply_answers(answers, c, (&mut *summaries, None), |s, a| {
                    s.add(kind, Value::from_byte(a.payload as u8))
                })?;
                let (longest, internal) =
                    self.finish_first_chunk(lo, (values, flags), summaries, &mut lists, back)?;
                self.progress.inc(hi - lo);
                max_seen = max_seen.max(longest);
                left_for_passes |= internal;
                self.save_combine(c + 1, (requests, answers), (0, max_seen), back, save)
            },
            &Cell::new(Duration::ZERO),
        )?;
        self.keep_first_scan_lists(lists, left_for_passes)?;
        Ok((max_seen, left_for_passes))
    }

    /// The distance lists a first scan from chunk `first` makes, if the
    /// passes use them. Lists are of the whole scan: one resumed at chunk
    /// `first` lists the chunks before it again from what it left on disk
    /// (their values, flags and summaries are final once a checkpoint
    /// counts them done), one read of them, where without lists each of
    /// its partition's passes would read every chunk its hints do not rule
    /// out.
    pub(super) fn first_scan_lists(&self, first: u64) -> Result<Option<DistanceLists>> {
        let path = DistanceLists::path_for(self.disks, self.slot);
        if !self.lists_predecessors() {
            // None an earlier run left is resumed in the passes.
            DistanceLists::remove(&path)?;
            return Ok(None);
        }
        let mut lists = DistanceLists::create(&path, self.size())?;
        if first > 0 {
            self.chunk_phase("first scan: lists of the chunks done", 0);
        }
        for c in 0..first {
            let (lo, hi) = self.chunk_range(self.size(), c);
            // A chunk with no position left for the passes has no summary
            // on disk, and needs none: only such positions read theirs.
            let (values, flags, summary) = self.read_chunk_with_summary(c)?;
            lists.add_chunk((&values, &flags, &summary), |file, offset, bytes| {
                self.write(file, offset, bytes)
            })?;
            for buf in [values, flags, summary] {
                self.spare.keep(buf);
            }
            self.progress.inc(hi - lo);
        }
        Ok(Some(lists))
    }

    /// Keeps a first scan's distance lists for the passes where they cover
    /// every chunk and some position is left for the passes.
    pub(super) fn keep_first_scan_lists(
        &self,
        lists: Option<DistanceLists>,
        left_for_passes: bool,
    ) -> Result<()> {
        if let Some(lists) = lists {
            let whole = lists.chunks() == self.chunk_count();
            if whole && left_for_passes {
                // Before the first scan's end is recorded: a build resumed
                // in the passes finds them.
                lists.keep()?;
            }
            *lock(&self.distance_lists) = Some(lists);
            if !(whole && left_for_passes) {
                self.drop_distance_lists()?;
            }
        }
        Ok(())
    }

    /// Pass `d`'s combine step, from where `from` left it (with
    /// `candidates`, over theirs alone): returns how many positions the
    /// pass decided.
    pub(super) fn pass_combine(
        &self,
        d: u32,
        candidates: Option<&Candidates>,
        deciding: Deciding<'_>,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<u64> {
        let no_runs = RunIndex::default();
        let (requests, answers) = match deciding {
            Deciding::Answers { requests, answers } => (requests, answers),
            _ => (&no_runs, &no_runs),
        };
        let (first, decided) = from.map_or((0, 0), |w| (w.next, w.decided));
        let mut decider = self.pass_decider(d, candidates, deciding, first, decided);
        let reads = decider.reads();
        let marking = Cell::new(Duration::ZERO);
        self.combine_chunks(
            &format!("pass {d}: combine"),
            first,
            |c| self.load_to_decide(reads, c),
            |c, loaded, back| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                self.prefetch_answers(answers, c + 1);
                if let Some(loaded) = loaded {
                    self.decide_chunk(&mut decider, c, loaded, back)?;
                    marking.set(decider.marking);
                }
                self.progress.inc(hi - lo);
                let tally = (decider.decided, 0);
                self.save_combine(c + 1, (requests, answers), tally, back, save)
            },
            &marking,
        )?;
        Ok(self.finish_decider(decider))
    }

    /// A pass's combine step before its first chunk `first` (`decided`:
    /// the positions it decided in the chunks before), the next pass's
    /// marks started where they can be made.
    pub(super) fn pass_decider<'a>(
        &self,
        d: u32,
        candidates: Option<&'a Candidates>,
        deciding: Deciding<'a>,
        first: u64,
        decided: u64,
    ) -> PassDecider<'a> {
        // With candidates, the chunks this step visits are those whose
        // values can change, and it marks the next pass's candidates in
        // them (see candidates.rs).
        let next = candidates.and_then(|_| self.start_next_marks(d, first));
        PassDecider {
            d,
            candidates,
            deciding,
            next,
            kept_accs: Vec::new(),
            decided,
            marking: Duration::ZERO,
        }
    }

    /// Ends a pass's combine step: the next pass's marks are kept, and the
    /// positions it decided returned.
    pub(super) fn finish_decider(&self, decider: PassDecider<'_>) -> u64 {
        if let Some(next) = decider.next {
            self.finish_next_marks(next);
        }
        decider.decided
    }

    /// Reads what a pass's combine step needs of chunk `c`; `None` where
    /// the chunk holds no candidate (no answer, no change: not read).
    pub(super) fn load_to_decide(
        &self,
        reads: ChunkReads<'_>,
        c: u64,
    ) -> Result<Option<ChunkToDecide>> {
        let ChunkReads {
            d,
            candidates,
            marking_next,
            by_marks,
        } = reads;
        let (lo, hi) = self.chunk_range(self.size(), c);
        if leaves_unread(candidates, lo, hi) {
            return Ok(None);
        }
        // Where the next pass's marks can come from this pass's decisions
        // alone, they are listed (offsets in the chunk), and only the
        // positions the pass may decide are read: their stretches of values
        // and flags, their summaries. The marking's scan of the whole chunk
        // needs it all.
        let list_decided = marking_next && self.marks_from_decided_alone(d + 1, c);
        let scan_whole = marking_next && !list_decided;
        let stretches = candidates
            .filter(|_| !scan_whole)
            .and_then(|k| k.stretches(lo, hi));
        let (values, mut flags) = match &stretches {
            Some(stretches) => self.read_chunk_in(c, stretches)?,
            None => self.read_chunk(c)?,
        };
        // The marking needs the flags as stored, the decisions those of the
        // candidates alone.
        let all_flags = scan_whole.then(|| {
            let mut copy = self.spare.take(flags.len(), Fill::Overwritten);
            copy.copy_from_slice(&flags);
            copy
        });
        if let Some(candidates) = candidates {
            candidates.mask_in(lo, &mut flags, stretches.as_deref());
        }
        let summary = if scan_whole {
            self.read(
                &self.summary,
                lo * Earlier::BYTES as u64,
                (hi - lo) as usize * Earlier::BYTES,
            )?
        } else if by_marks {
            Vec::new()
        } else {
            self.read_pending_summaries(lo, &values, &flags, stretches.as_deref())?
        };
        Ok(Some(ChunkToDecide {
            values,
            flags,
            all_flags,
            summary,
            list_decided,
            stretches,
        }))
    }

    /// Decides the pending candidates of chunk `c` (as
    /// [`Self::load_to_decide`] read it), marks the next pass's candidates
    /// in it, and starts writing back its values if they changed.
    ///
    /// The marking of many decided positions runs beside the step's next
    /// chunks, on a thread of the step's scope (`back`), as their writes do.
    pub(super) fn decide_chunk<'s>(
        &'s self,
        decider: &mut PassDecider<'_>,
        c: u64,
        loaded: ChunkToDecide,
        back: &mut WriteBack<'_, 's>,
    ) -> Result<()> {
        let kind = self.kind;
        let d = decider.d;
        let decided_byte = at(d).to_byte();
        let by_marks = matches!(decider.deciding, Deciding::Marks);
        let blocking = match decider.deciding {
            Deciding::InMemory(b) => Some(b),
            _ => None,
        };
        let (lo, hi) = self.chunk_range(self.size(), c);
        let ChunkToDecide {
            mut values,
            flags,
            all_flags,
            summary,
            list_decided,
            stretches,
        } = loaded;
        // The summaries of earlier partitions' successors join a position's
        // answers when it is decided: only the pending candidates need
        // them, often a small part of the chunk.
        let pieces = Pieces::of((hi - lo) as usize, stretches.as_deref());
        // Accumulators only where answers are applied to them.
        let held = match decider.deciding {
            Deciding::Answers { .. } => pieces.held,
            _ => 0,
        };
        let accs = cleared(&mut decider.kept_accs, held);
        if let Deciding::Answers { answers, .. } = decider.deciding {
            self.apply_answers(
                answers,
                c,
                (&mut *accs, pieces.packed.then_some(&pieces)),
                |acc, a| acc.add(kind, d, Value::from_byte(a.payload as u8)),
            )?;
        }
        let accs = &*accs;
        let per_piece: Vec<_> = pieces
            .carve(&mut values)
            .into_par_iter()
            .map(|((start, end, at), values)| {
                let mut changes = Changes::within((start, end));
                let mut decided = 0u64;
                let mut listed = Vec::new();
                for offset in ongoing_internal(&flags, start, start + values.len()) {
                    let j = offset - start;
                    if values[j] == PENDING && by_marks {
                        values[j] = decided_byte;
                        changes.add(offset);
                    } else if values[j] == PENDING {
                        let mut acc = match blocking {
                            Some(b) => b.acc(kind, d, lo + offset as u64),
                            None => accs[at + j],
                        };
                        Earlier::decode(summary[offset]).add_to(&mut acc, kind, d);
                        if let Some(v) = acc.decide(kind, d) {
                            values[j] = v.to_byte();
                            changes.add(offset);
                        }
                    }
                    // Counted by value, not by change: a chunk redone after
                    // an interruption finds some of its decisions already
                    // written, and the pass loop's end test needs the full
                    // count.
                    if values[j] == decided_byte {
                        decided += 1;
                        if list_decided {
                            listed.push(offset as u32);
                        }
                    }
                }
                (changes, decided, listed)
            })
            .collect();
        let mut changes = Changes::default();
        let (mut decided_here, mut listed) = (0, Vec::new());
        for (piece, decided, piece_listed) in per_piece {
            changes.join(piece);
            decided_here += decided;
            listed.extend(piece_listed);
        }
        decider.decided += decided_here;
        if let Some(next) = decider.next.as_mut() {
            let started = Instant::now();
            match &all_flags {
                Some(all_flags) => self.mark_next(next, c, (&values, all_flags, &summary)),
                None if listed.len() < MARK_BESIDE => self.marking_from_decided(next, c, listed)(),
                None => back.start_marking(self.marking_from_decided(next, c, listed))?,
            }
            decider.marking += started.elapsed();
        }
        for buf in [Some(flags), all_flags, Some(summary)]
            .into_iter()
            .flatten()
        {
            self.spare.keep(buf);
        }
        let changes = changes.ranges;
        if !changes.is_empty() {
            back.start(values, lo, Some(changes))
        } else {
            self.spare.keep(values);
            Ok(())
        }
    }

    /// Runs `body` with a writer of chunks' values on a thread of its own,
    /// waiting for its last write before returning.
    pub(super) fn with_write_back<'s, R>(
        &'s self,
        body: impl FnOnce(&mut WriteBack<'_, 's>) -> Result<R>,
    ) -> Result<R> {
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, self, &self.spare, &self.stats.profile);
            if self.no_overlap_from(0) {
                back = back.inline();
            }
            let out = body(&mut back);
            // The marks are whole before the step ends, even where it
            // failed (a marking borrows what the step's caller frees).
            let marked = back.settle_marking();
            let out = out?;
            back.settle()?;
            marked?;
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers folded into atomic summaries by many threads in any order
    /// make each position's summary what adding them one by one makes:
    /// random values (every distance, draws) for positions with none, one
    /// or many answers, in both kinds of game.
    #[test]
    fn atomic_summaries_fold_as_one_by_one_adds_do() {
        let mut rng = crate::hash::SplitMix64::new(29);
        for kind in [GameKind::Puzzle, GameKind::TwoPlayer] {
            let n = 5000;
            let answers: Vec<(usize, Value)> = (0..40_000)
                .map(|_| {
                    let r = rng.next_u64();
                    // A third of the positions get no answer.
                    let j = (r % (2 * n as u64 / 3)) as usize;
                    let v = match (r >> 32) % 9 {
                        0 => Value::DRAW,
                        d => Value::at_distance((d as u32 * 37 + (r >> 40) as u32) % 254).unwrap(),
                    };
                    (j, v)
                })
                .collect();
            let mut want = vec![Summary::default(); n];
            for &(j, v) in &answers {
                want[j].add(kind, v);
            }
            let atomic = AtomicSummaries::new(n);
            answers
                .par_chunks(97)
                .for_each(|piece| piece.iter().for_each(|&(j, v)| atomic.add(j, kind, v)));
            let mut kept = vec![Summary::default(); 3];
            let got = atomic.read_into(&mut kept);
            assert_eq!(got.len(), n);
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    (g.nearest_loss, g.longest_win, g.blocked),
                    (w.nearest_loss, w.longest_win, w.blocked),
                    "{kind:?} position {j}"
                );
            }
            // Positions with every part set (a puzzle keeps no wins).
            let full = |s: &Summary| {
                s.nearest_loss.is_some()
                    && s.blocked
                    && (kind == GameKind::Puzzle || s.longest_win.is_some())
            };
            assert!(want.iter().filter(|s| full(s)).count() > 100);
        }
    }

    /// A chunk's changes, gathered piece by piece as the combine step does,
    /// are written in stretches that cover every change, lie each within
    /// one read stretch, and leave no two neighbours of one read stretch
    /// closer than `JOIN_WITHIN` (fewer calls would do): random read
    /// stretches (the whole chunk among them) cut into pieces, random
    /// changes, sparse and dense.
    #[test]
    fn changes_are_written_in_as_few_stretches_as_the_join_allows() {
        let mut rng = crate::hash::SplitMix64::new(31);
        for round in 0..300 {
            let len = 1 + (rng.next_u64() % 300_000) as usize;
            let mut read = Vec::new();
            if round % 4 == 0 {
                read.push((0, len));
            } else {
                let mut at = (rng.next_u64() % 50) as usize;
                while at < len {
                    let end = (at + 1 + (rng.next_u64() % 60_000) as usize).min(len);
                    read.push((at, end));
                    at = end + 1 + (rng.next_u64() % 40_000) as usize;
                }
            }
            let density = 1 + rng.next_u64() % 40_000;
            let pieces = Pieces::of(len, Some(&read));
            let mut changed = vec![false; len];
            let mut changes = Changes::default();
            for &(start, end, _) in &pieces.list {
                let mut piece = Changes::within((start, end));
                for (offset, change) in changed.iter_mut().enumerate().take(end).skip(start) {
                    if rng.next_u64() % density == 0 {
                        *change = true;
                        piece.add(offset);
                    }
                }
                changes.join(piece);
            }
            let ranges = changes.ranges;
            let within = |(s, e): (usize, usize)| read.iter().position(|&(a, b)| a <= s && e <= b);
            for (k, &(s, e)) in ranges.iter().enumerate() {
                assert!(
                    s < e && within((s, e)).is_some(),
                    "round {round}: {s}..{e} not read"
                );
                assert!(
                    changed[s] && changed[e - 1],
                    "round {round}: {s}..{e} ends unchanged"
                );
                if let Some(&(_, prev_end)) = k.checked_sub(1).map(|p| &ranges[p]) {
                    assert!(prev_end < s, "round {round}: not sorted apart");
                    if within((prev_end - 1, prev_end)) == within((s, s + 1)) {
                        assert!(
                            s - prev_end >= JOIN_WITHIN,
                            "round {round}: {prev_end}..{s} not joined"
                        );
                    }
                }
            }
            let covered = ranges
                .iter()
                .map(|&(s, e)| changed[s..e].iter().filter(|&&c| c).count());
            assert_eq!(
                covered.sum::<usize>(),
                changed.iter().filter(|&&c| c).count(),
                "round {round}"
            );
        }
    }

    use crate::value::rules::successor_sets;

    /// The byte a pass reads of a pending position's earlier successors
    /// decides as all of them do, and a distance the byte drops (a longest
    /// win beside a loss or a draw) names no pass that would decide the
    /// position: every list of up to five successors, split into one to
    /// three in earlier partitions and answers from inside the partition,
    /// each a draw or at a distance up to `d + 1`, at every pass to 9 where
    /// such a position can still be pending. Where the byte alone settles the pass (the expand step
    /// then leaves the position out), no answer decides it.
    #[test]
    fn the_summary_byte_decides_as_every_earlier_successor() {
        let (mut compared, mut dropped, mut settled) = (0, 0, 0);
        for kind in [GameKind::Puzzle, GameKind::TwoPlayer] {
            for d in 1..10u32 {
                for values in successor_sets(d, 5) {
                    for earlier_count in 1..=values.len().min(3) {
                        let (earlier, inside) = values.split_at(earlier_count);
                        let mut summary = Summary::default();
                        for &v in earlier {
                            summary.add(kind, v);
                        }
                        // The pass after a nearest loss decides the
                        // position; the passes after that see it decided.
                        if summary.nearest_loss.is_some_and(|e| d > u32::from(e) + 1) {
                            continue;
                        }
                        let (mut all, mut kept) = (PassAcc::default(), PassAcc::default());
                        for &v in values.iter() {
                            all.add(kind, d, v);
                        }
                        for &v in inside {
                            kept.add(kind, d, v);
                        }
                        let byte = summary.earlier();
                        byte.add_to(&mut kept, kind, d);
                        // A pending position whose successors are all
                        // wins below `d` has one at `d - 1`.
                        let longest_short = !PassAcc::decides_by_hit(kind, d)
                            && all.decide(kind, d).is_some_and(|v| v != at(d));
                        if longest_short {
                            continue;
                        }
                        assert_eq!(
                            all.decide(kind, d),
                            kept.decide(kind, d),
                            "{kind:?} pass {d}: {earlier:?} and {inside:?}"
                        );
                        compared += 1;
                        // Settled by them alone: no answer decides it.
                        if byte.settles_undecided(kind, d) {
                            assert_eq!(kept.decide(kind, d), None, "{kind:?} pass {d}: {values:?}");
                            settled += 1;
                        }
                        let names = |e: u32| {
                            summary.nearest_loss.map(u32::from) == Some(e)
                                || summary.longest_win.map(u32::from) == Some(e)
                        };
                        if names(d - 1) && !byte.mentions(d - 1) {
                            assert_eq!(all.decide(kind, d), None, "{kind:?} pass {d}: {values:?}");
                            dropped += 1;
                        }
                    }
                }
            }
        }
        assert!(
            compared > 100_000 && dropped > 1000 && settled > 10_000,
            "{compared} {dropped} {settled}"
        );
    }

    /// Writes go where the chunk and its stretches say; a write's end is
    /// waited for (a checkpoint that followed it would otherwise count a
    /// chunk whose values were still on their way); its error comes back;
    /// its buffer is kept for reuse.
    #[test]
    fn write_back_writes_the_stretches_settles_and_reports_errors() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Mutex;
        let file = Mutex::new(vec![0u8; 300_000]);
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let wait = Mutex::new(wait);
        let hold = AtomicBool::new(true);
        let into_file = write_into(&file, 250_000);
        let write = |offset: u64, bytes: &[u8]| -> Result<()> {
            if hold.load(Ordering::SeqCst) {
                wait.lock().unwrap().recv().unwrap();
            }
            into_file(offset, bytes)
        };
        let spare = SpareBuffers::new(1 << 30);
        let profile = Profile::default();
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, &write, &spare, &profile);
            back.settle().unwrap();
            // Stretches of a chunk at 1000: only they are written.
            back.start(vec![7u8; 100_000], 1000, Some(vec![(0, 64), (640, 704)]))
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                file.lock().unwrap().iter().all(|&b| b == 0),
                "written before its turn"
            );
            go.send(()).unwrap();
            go.send(()).unwrap();
            back.settle().unwrap();
            {
                let f = file.lock().unwrap();
                assert!(f[1000..1064].iter().all(|&b| b == 7));
                assert!(f[1064..1640].iter().all(|&b| b == 0));
                assert!(f[1640..1704].iter().all(|&b| b == 7));
                assert!(f[1704..].iter().all(|&b| b == 0));
            }
            // The buffer came back for the next chunk's reads.
            assert!(spare
                .take(100_000, Fill::Overwritten)
                .iter()
                .all(|&b| b == 7));
            hold.store(false, Ordering::SeqCst);
            // A whole chunk, then one whose write fails: the error comes
            // back with the next start, and a settle after it has nothing.
            back.start(vec![3u8; 1000], 200_000, None).unwrap();
            back.start(vec![4u8; 1000], 260_000, None).unwrap();
            assert!(file.lock().unwrap()[200_000..201_000]
                .iter()
                .all(|&b| b == 3));
            let failed = back.start(vec![5u8; 1000], 0, None).unwrap_err();
            assert!(failed.to_string().contains("scratch disk gone"), "{failed}");
            back.settle().unwrap();
        });
    }

    /// Writes into `file`, failing from offset `fails_at` on.
    fn write_into(
        file: &std::sync::Mutex<Vec<u8>>,
        fails_at: u64,
    ) -> impl Fn(u64, &[u8]) -> Result<()> + Sync + '_ {
        move |offset, bytes| {
            if offset >= fails_at {
                return Err(Error::NotAvailable("scratch disk gone".into()));
            }
            let at = offset as usize;
            file.lock().unwrap()[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        }
    }

    /// A step over one chunk writes on its own thread: done when the start
    /// returns, the buffer kept, a failed write reported by that start.
    #[test]
    fn inline_write_back_is_done_when_it_returns() {
        use std::sync::Mutex;
        let file = Mutex::new(vec![0u8; 4000]);
        let caller = std::thread::current().id();
        let into_file = write_into(&file, 3000);
        let write = |offset: u64, bytes: &[u8]| -> Result<()> {
            assert_eq!(
                std::thread::current().id(),
                caller,
                "written on another thread"
            );
            into_file(offset, bytes)
        };
        let spare = SpareBuffers::new(1 << 30);
        let profile = Profile::default();
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, &write, &spare, &profile).inline();
            back.start(vec![9u8; 100_000], 100, Some(vec![(0, 10), (500, 520)]))
                .unwrap();
            {
                let f = file.lock().unwrap();
                assert!(f[100..110].iter().all(|&b| b == 9));
                assert!(f[110..600].iter().all(|&b| b == 0));
                assert!(f[600..620].iter().all(|&b| b == 9));
                assert!(f[620..].iter().all(|&b| b == 0));
            }
            assert!(spare
                .take(100_000, Fill::Overwritten)
                .iter()
                .all(|&b| b == 9));
            let failed = back.start(vec![1u8; 100], 3000, None).unwrap_err();
            assert!(failed.to_string().contains("scratch disk gone"), "{failed}");
            back.settle().unwrap();
        });
    }

    /// One thread writes a step's chunks one after another; a write that
    /// panics is an error of the write-back, not a panic of the step, and
    /// the step's later writes report it too.
    #[test]
    fn one_writer_writes_every_chunk_and_a_panic_in_it_is_an_error() {
        use std::collections::HashSet;
        use std::sync::Mutex;
        let (writers, written) = (Mutex::new(HashSet::new()), Mutex::new(Vec::new()));
        let write = |offset: u64, bytes: &[u8]| -> Result<()> {
            assert!(offset != 999_999, "a write that panics");
            writers.lock().unwrap().insert(std::thread::current().id());
            written.lock().unwrap().push((offset, bytes.len()));
            Ok(())
        };
        let spare = SpareBuffers::new(1 << 30);
        let profile = Profile::default();
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, &write, &spare, &profile);
            for c in 0..5u64 {
                back.start(vec![1u8; 100], 1000 * c, Some(vec![(0, 10), (50, 60)]))
                    .unwrap();
            }
            back.settle().unwrap();
            assert_eq!(writers.lock().unwrap().len(), 1, "one thread for the step");
            assert_eq!(written.lock().unwrap().len(), 10);
            back.start(vec![1u8; 10], 999_999, None).unwrap();
            let failed = back.settle().unwrap_err();
            assert!(
                failed.to_string().contains("write-back thread panicked"),
                "{failed}"
            );
            let again = back.start(vec![1u8; 10], 0, None).unwrap_err();
            assert!(
                again.to_string().contains("write-back thread panicked"),
                "{again}"
            );
        });
    }

    /// Values striped over three files: a chunk's stretches are cut where
    /// the files change and each file's pieces are written by a thread of
    /// its own, the same thread for that file all step long; every byte
    /// lands where it belongs, and the buffer comes back once all are done.
    #[test]
    fn a_chunk_is_written_by_a_thread_per_file_of_the_values() {
        use crate::pipeline::disks::{ByteFile, FileParts};
        use std::collections::{HashMap, HashSet};
        use std::num::NonZeroU64;
        use std::sync::Mutex;
        // The values as the solver keeps them, so that the cut tested is
        // the product's.
        struct Striped {
            file: ByteFile,
            writers: Mutex<HashMap<usize, HashSet<std::thread::ThreadId>>>,
        }
        impl WritesValues for Striped {
            fn write_values(&self, offset: u64, bytes: &[u8]) -> Result<()> {
                let files: Vec<usize> = self
                    .file
                    .ranges_by_file(offset, &[(0, bytes.len())])
                    .iter()
                    .enumerate()
                    .filter(|(_, pieces)| !pieces.is_empty())
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(files.len(), 1, "a piece across files");
                let id = std::thread::current().id();
                self.writers
                    .lock()
                    .unwrap()
                    .entry(files[0])
                    .or_default()
                    .insert(id);
                self.file.write_at(offset, bytes)
            }
            fn by_file(&self, lo: u64, ranges: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
                self.file.ranges_by_file(lo, ranges)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let paths: [_; 3] = std::array::from_fn(|k| dir.path().join(format!("v.{k}")));
        let parts = FileParts::striped(paths, NonZeroU64::new(100).unwrap());
        let write = Striped {
            file: ByteFile::create_or_open_parts(&parts, 500_000).unwrap(),
            writers: Mutex::default(),
        };
        let spare = SpareBuffers::new(1 << 30);
        let profile = Profile::default();
        let mut model = vec![0u8; 500_000];
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, &write, &spare, &profile);
            for c in 0..6u64 {
                let lo = 75_000 * c + 7;
                let values: Vec<u8> = (0..70_000).map(|i| (i + c) as u8 | 1).collect();
                let stretches = match c {
                    0 => None,
                    _ => Some(vec![(0, 1), (90, 420), (777, 52_000), (69_999, 70_000)]),
                };
                for &(a, b) in stretches.as_deref().unwrap_or(&[(0, 70_000)]) {
                    let at = lo as usize;
                    model[at + a..at + b].copy_from_slice(&values[a..b]);
                }
                back.start(values, lo, stretches).unwrap();
            }
            back.settle().unwrap();
        });
        let mut written = vec![0u8; 500_000];
        write.file.read_at(0, &mut written).unwrap();
        assert!(written == model, "bytes in the wrong places");
        let writers = write.writers.lock().unwrap();
        assert_eq!(writers.len(), 3, "every file written");
        assert!(
            writers.values().all(|ids| ids.len() == 1),
            "one thread a file"
        );
        let ids: HashSet<_> = writers.values().flatten().collect();
        assert_eq!(ids.len(), 3, "a thread of its own for each file");
        // The chunks' buffers came back for reuse.
        let kept = spare.take(70_000, Fill::Overwritten);
        assert!(
            (0..6u64).any(|c| kept
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i as u64 + c) as u8 | 1)),
            "no chunk's buffer came back"
        );
    }

    /// A marking runs beside the caller, one at a time: the next one starts
    /// once the one before is over, and the step's end waits for the last;
    /// a marking that panicked is an error, not a hang.
    #[test]
    fn markings_run_one_at_a_time_and_end_with_the_step() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let write = |_: u64, _: &[u8]| -> Result<()> { Ok(()) };
        let spare = SpareBuffers::new(1 << 30);
        let profile = Profile::default();
        let (running, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            let mut back = WriteBack::new(scope, &write, &spare, &profile);
            for _ in 0..4 {
                back.start_marking(|| {
                    assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "two at once");
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                    done.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
            }
            assert!(done.load(Ordering::SeqCst) >= 3);
            back.settle_marking().unwrap();
            assert_eq!(done.load(Ordering::SeqCst), 4);
            back.start_marking(|| panic!("a marking that fails"))
                .unwrap();
            let failed = back.settle_marking().unwrap_err();
            assert!(
                failed.to_string().contains("marking thread panicked"),
                "{failed}"
            );
            back.settle_marking().unwrap();
        });
    }

    /// The records whose indices lie in `stretches`.
    fn within(records: &[Record], stretches: &[(usize, usize)]) -> Vec<Record> {
        records
            .iter()
            .filter(|r| {
                stretches
                    .iter()
                    .any(|&(a, b)| (a..b).contains(&(r.index() as usize)))
            })
            .copied()
            .collect()
    }

    /// The positions a pass decides are those a flag test a position finds:
    /// on random sparse and dense flags, over ranges that start and end
    /// anywhere in a byte and in a word.
    #[test]
    fn ongoing_internal_finds_what_a_flag_test_a_position_finds() {
        let mut rng = crate::hash::SplitMix64::new(5);
        for round in 0..200 {
            let len = 1 + (rng.next_u64() % 700) as usize;
            let sparse = round % 2 == 0;
            let flags: Vec<u8> = (0..len.div_ceil(4))
                .map(|_| {
                    let x = rng.next_u64();
                    if sparse && x % 5 != 0 {
                        0
                    } else {
                        (x >> 8) as u8
                    }
                })
                .collect();
            let start = (rng.next_u64() % len as u64) as usize;
            let end = start + (rng.next_u64() % (len - start + 1) as u64) as usize;
            let want: Vec<usize> = (start..end)
                .filter(|&j| flag(&flags, j) == ONGOING | INTERNAL)
                .collect();
            let got: Vec<usize> = ongoing_internal(&flags, start, end).collect();
            assert_eq!(got, want, "round {round}: {start}..{end} of {len}");
        }
    }

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
            apply_in_parallel(&mut t, None, &records, |x, r| {
                *x = x.wrapping_mul(31) ^ r.payload
            })
            .unwrap();
            t
        });
        assert_eq!(parallel, serial);
        let mut short = vec![0u64; n - 1];
        let outside = pool.install(|| apply_in_parallel(&mut short, None, &records, |_, _| {}));
        assert!(outside.unwrap_err().to_string().contains("outside"));
        // Packed into pieces: the records of the pieces' positions, each at
        // its packed slot, give the serial result there; one outside them
        // is an error.
        let stretches = [(0, 70_000), (80_000, 80_064), (99_968, n)];
        let pieces = Pieces::of(n, Some(&stretches));
        assert!(pieces.packed && pieces.list.iter().all(|p| p.1 - p.0 <= SLICE));
        assert_eq!(pieces.held, 70_000 + 64 + (n - 99_968));
        let inside = within(&records, &stretches);
        assert!(inside.len() > 4 * SLICE, "takes the parallel way");
        for records in [&inside[..], &inside[..1000]] {
            let mut packed = vec![0u64; pieces.held];
            pool.install(|| {
                apply_in_parallel(&mut packed, Some(&pieces), records, |x, r| {
                    *x = x.wrapping_mul(31) ^ r.payload
                })
            })
            .unwrap();
            let mut dense = vec![0u64; n];
            for r in records {
                let x = &mut dense[r.index() as usize];
                *x = x.wrapping_mul(31) ^ r.payload;
            }
            for &(start, end) in &stretches {
                for i in start..end {
                    assert_eq!(packed[pieces.slot(i as u64).unwrap()], dense[i], "{i}");
                }
            }
        }
        assert_eq!(pieces.slot(75_000), None);
        let mut packed = vec![0u64; pieces.held];
        let stray = [Record::new(0, 75_000, 1)];
        let outside = apply_in_parallel(&mut packed, Some(&pieces), &stray, |_, _| {});
        assert!(outside.unwrap_err().to_string().contains("outside"));
    }

    /// A block of a few ascending runs, as flushers write them: each thread
    /// searches its share of every run, and the result is the serial one,
    /// dense or packed; a record outside the targets inside a run is still
    /// an error.
    #[test]
    fn parallel_apply_of_sorted_runs_equals_serial_apply() {
        let n = 100_003usize;
        let mut records: Vec<Record> = (0..200_000u64)
            .map(|i| Record::new(0, (i * 7_919 + i / 3) % n as u64, i))
            .collect();
        // Three runs; equal indices keep their block order (stable sort),
        // which the order-dependent apply below checks.
        for run in records.chunks_mut(70_000) {
            run.sort_by_key(Record::index);
        }
        let serial = |records: &[Record], t: &mut [u64]| {
            for r in records {
                let x = &mut t[r.index() as usize];
                *x = x.wrapping_mul(31) ^ r.payload;
            }
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let apply = |x: &mut u64, r: &Record| *x = x.wrapping_mul(31) ^ r.payload;
        let mut want = vec![0u64; n];
        serial(&records, &mut want);
        let mut got = vec![0u64; n];
        pool.install(|| apply_in_parallel(&mut got, None, &records, apply))
            .unwrap();
        assert_eq!(got, want);

        let stretches = [(0, 70_000), (80_000, 80_064), (99_968, n)];
        let pieces = Pieces::of(n, Some(&stretches));
        let inside = within(&records, &stretches);
        let mut packed = vec![0u64; pieces.held];
        pool.install(|| apply_in_parallel(&mut packed, Some(&pieces), &inside, apply))
            .unwrap();
        let mut dense = vec![0u64; n];
        serial(&inside, &mut dense);
        for &(start, end) in &stretches {
            for i in start..end {
                assert_eq!(packed[pieces.slot(i as u64).unwrap()], dense[i], "{i}");
            }
        }

        // A stray in the middle of the second run: past the targets, and
        // (packed) between two pieces.
        for (index, pieces) in [(n as u64 + 5, None), (75_000, Some(&pieces))] {
            let mut damaged = if pieces.is_some() {
                inside.clone()
            } else {
                records.clone()
            };
            damaged.insert(damaged.len() / 2, Record::new(0, index, 0));
            let mut t = vec![0u64; pieces.map_or(n, |p| p.held)];
            let outside = pool.install(|| apply_in_parallel(&mut t, pieces, &damaged, apply));
            assert!(
                outside.unwrap_err().to_string().contains("outside"),
                "{index}"
            );
        }
    }
}
