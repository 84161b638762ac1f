//! Candidate-driven passes: which positions pass `d` can decide.
//!
//! A pending position is decided in pass `d` only if one of its successors
//! is at distance exactly `d - 1` (`value::rules`: a win needs a successor
//! lost at `d - 1`; a loss at `d` has its longest successor at `d - 1`, or
//! an earlier pass would have decided it). That successor lies in this
//! partition (its value is at distance `d - 1`, decided by the first scan
//! or by pass `d - 1`) or in an earlier one (the position's summary then
//! mentions `d - 1`). So before each pass one streamed scan of the values,
//! flags and summaries marks the predecessors within the partition
//! ([`Game::predecessors_within`]) of the positions at distance `d - 1`,
//! and the positions whose summary mentions `d - 1`; the pass's expand and
//! combine steps then take only the marked positions. The others would
//! have stayed pending, so the bytes are those of a pass over every pending
//! position.
//!
//! Where a bit stands for one position ([`Candidates::exact`]), a pass
//! that decides through a successor at `d - 1` alone (an odd one: `d - 1`
//! is a loss; a puzzle's every one) needs no expansion at all: every
//! pending candidate has such a successor, by the marking's construction
//! (the game lists exactly the positions with a move to a position), and
//! is decided at `d` by its mark (`Solver::pass`).
//!
//! The marks depend only on values at distance `d - 1`, which pass `d`
//! does not write: a pass resumed after an interruption marks the same
//! positions again, so they need no checkpoint.
//!
//! The combine step of pass `d - 1` holds each chunk it visits with its
//! final values for the pass: it marks pass `d`'s candidates from it then
//! ([`NextMarks`]), and the scan before pass `d` reads only the chunks it did
//! not visit whose values or summaries name `d - 1`. Where the first scan
//! made distance lists (distance_lists.rs), the combine step marks from
//! what it decided alone and the lists give the rest: no chunk is read.
//!
//! A bit a position is an eighth of a byte per index of the partition;
//! where that does not fit the memory plan, a bit stands for 2, 4, ... 64
//! neighbouring positions ([`Candidates::shift`]): the pass then takes
//! every pending position of a marked group, a superset of its candidates,
//! which the argument above allows (the extra positions stay pending).
//! Before, such a partition had every pending position expanded in every
//! pass: a 25 M-index partition under 64 MiB made 5.2 G requests in its
//! first 22 passes; with a bit per 2 positions the whole build's passes
//! make 1 % more requests than with a bit a position (the README).

use super::blocking::Blocking;
use super::buffers::Fill;
use super::combine::Earlier;
use super::external::{flag, lock, Solver, INTERNAL, ONGOING};
use super::stats::{Part, StepClock};
use crate::game::Game;
use crate::value::rules::PENDING;
use crate::value::{Rank, Value};
use crate::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Positions between two stretches of a chunk below which they are read
/// as one (3 KiB of summaries, 1 KiB of values: about what a read call
/// costs in copying).
///
/// Wider gaps were measured on H100 hosts (`scripts/gpu_pipeline_ab.sh`, W/64
/// over 3 disks, 2026-12-06): 4096 positions cut the passes' stretch reads
/// 6.9 M → 1.3 M and their value writes 1.4 M → 0.5 M (a pass writes back
/// within what it read), and the passes by marks 12.9 → 9.8 s, nearly all
/// of it fewer waits for write calls; but the build read 30 % and wrote
/// 25 % more scratch bytes (36.4 → 47.4 GB, 13.8 → 17.2 GB). There the
/// page cache held the scratch; a build whose disk carries it (the data
/// beyond memory this path is for) at that host's 1.3 GB/s would spend
/// some 11 s more on those bytes than it saved. Fewer write calls are the
/// gain to find, not more bytes.
pub(super) const STRETCH_GAP: usize = 1024;

/// The stretches of a chunk to read (offsets in it, ascending), from the
/// ranges that must be read, two joined where fewer than [`STRETCH_GAP`]
/// positions part them.
pub(super) struct Stretches {
    list: Vec<(usize, usize)>,
    covered: usize,
    len: usize,
}

impl Stretches {
    /// None yet, in a chunk of `len` positions.
    pub(super) fn new(len: usize) -> Stretches {
        Stretches {
            list: Vec::new(),
            covered: 0,
            len,
        }
    }

    /// Adds `start..end`, which lies after every range added before;
    /// `false` once the stretches cover more than half the chunk, which is
    /// then cheaper read whole.
    pub(super) fn add(&mut self, start: usize, end: usize) -> bool {
        match self.list.last_mut() {
            Some((_, last)) if start - *last < STRETCH_GAP => {
                self.covered += end - *last;
                *last = end;
            }
            _ => {
                self.list.push((start, end));
                self.covered += end - start;
            }
        }
        2 * self.covered <= self.len
    }

    pub(super) fn into_vec(self) -> Vec<(usize, usize)> {
        self.list
    }
}

/// Positions a thread marks from at a time (a multiple of 64).
const SLICE: usize = 1 << 14;

/// One bit per group of `1 << shift` positions of a partition: the
/// positions a pass looks at.
pub(super) struct Candidates {
    bits: Vec<u64>,
    /// Bit `i` set where word `i` of `bits` holds a mark. A late pass has a
    /// few marks among a partition's millions of words, and the chunk
    /// reader's tests for a chunk's candidates and its stretches went over
    /// them word by word on one thread, three times a pass (20 MB each
    /// time for a partition of 156 M positions: most of a pass of a few
    /// candidates).
    occupied: Vec<u64>,
    /// Log2 of the positions a bit stands for (0 to 6: a group never
    /// straddles a word of 64 positions, nor a chunk).
    shift: u32,
}

/// The largest [`Candidates::shift`]: a bit per word of 64 positions.
const MAX_SHIFT: u32 = 6;

/// Positions a pool thread takes at once when it marks the predecessors of
/// a chunk's decided positions. A late pass decides a few hundred a chunk:
/// in batches of 1,024 the whole list ran on the calling thread, the one
/// the combine step's chunks wait for, while a predecessor list costs
/// microseconds, far above the hand-off to another thread.
const MARK_BATCH: usize = 64;

/// Words of bits for `size` positions, a bit per `1 << shift` of them.
fn words_for(size: u64, shift: u32) -> usize {
    size.div_ceil(64 << shift) as usize
}

/// Sets the bit of position `r` (of groups of `1 << shift`).
fn set_bit(bits: &[AtomicU64], shift: u32, r: u64) {
    let b = r >> shift;
    bits[(b / 64) as usize].fetch_or(1 << (b % 64), Ordering::Relaxed);
}

impl Candidates {
    /// The candidates `bits` name, a bit per `1 << shift` positions.
    fn new(bits: Vec<u64>, shift: u32) -> Candidates {
        let occupied = bits
            .par_chunks(64)
            .with_min_len(256)
            .map(|words| {
                words
                    .iter()
                    .enumerate()
                    .fold(0, |o, (i, &w)| o | u64::from(w != 0) << i)
            })
            .collect();
        Candidates {
            bits,
            occupied,
            shift,
        }
    }

    /// The first word of `bits` from `i` on that holds a mark, if any: the
    /// empty ones are passed over 64 at a time.
    fn next_occupied(&self, i: usize) -> Option<usize> {
        let mut s = i / 64;
        let mut o = self.occupied.get(s)? & (u64::MAX << (i % 64));
        while o == 0 {
            s += 1;
            o = *self.occupied.get(s)?;
        }
        Some(64 * s + o.trailing_zeros() as usize)
    }

    /// The first set bit from bit `b` on, if any: the rest of `b`'s word,
    /// then the next occupied one.
    fn next_mark(&self, b: usize) -> Option<usize> {
        let i = b / 64;
        match self.bits.get(i)? & (u64::MAX << (b % 64)) {
            0 => {
                let w = self.next_occupied(i + 1)?;
                Some(64 * w + self.bits[w].trailing_zeros() as usize)
            }
            head => Some(64 * i + head.trailing_zeros() as usize),
        }
    }

    /// Whether a bit stands for one position: the marks are then exactly
    /// the positions the argument above names, not groups around them.
    pub(super) fn exact(&self) -> bool {
        self.shift == 0
    }

    /// Whether any position of `lo..hi` is a candidate: a chunk without
    /// one is neither read nor expanded nor combined (nothing in it can
    /// change in the pass).
    pub(super) fn any_in(&self, lo: u64, hi: u64) -> bool {
        let end = hi.div_ceil(1 << self.shift) as usize;
        self.next_mark((lo >> self.shift) as usize)
            .is_some_and(|m| m < end)
    }

    /// The stretches of chunk `lo..hi` (offsets in it, whole words of 64
    /// positions) that hold its candidates, two joined where fewer than
    /// [`STRETCH_GAP`] positions part them; `None` where they would cover
    /// more than half the chunk, which is then cheaper read whole. A late
    /// pass has a few candidates a chunk: reading only around them spares
    /// it the rest of the chunk's bytes.
    pub(super) fn stretches(&self, lo: u64, hi: u64) -> Option<Vec<(usize, usize)>> {
        debug_assert_eq!(lo % 64, 0, "chunks start on a word of marks");
        let len = (hi - lo) as usize;
        let (first, words) = ((lo / 64) as usize, len.div_ceil(64));
        let mut stretches = Stretches::new(len);
        let mut w = first;
        // From marked word to marked word: a late pass's chunk has a few
        // among tens of thousands, and this runs on the thread that reads
        // chunks, every chunk of every pass.
        while let Some(marked) = self.next_marked_word(w).filter(|&m| m < first + words) {
            let at = 64 * (marked - first);
            if !stretches.add(at, (at + 64).min(len)) {
                return None;
            }
            w = marked + 1;
        }
        Some(stretches.into_vec())
    }

    /// The first word of 64 positions from `w` on that holds a mark, if
    /// any: the bits between are skipped 64 at a time.
    fn next_marked_word(&self, w: usize) -> Option<usize> {
        // Bits a word of 64 positions takes.
        let per = 64usize >> self.shift;
        self.next_mark(w * per).map(|m| m / per)
    }

    /// The marks of word `w` of 64 positions (positions `64 w ..`), a bit
    /// a position.
    fn word(&self, w: usize) -> u64 {
        let s = self.shift;
        if s == 0 {
            return self.bits[w];
        }
        let per = 64u64 >> s;
        let first = w as u64 * per;
        let groups = (self.bits[(first / 64) as usize] >> (first % 64))
            & if per == 64 { u64::MAX } else { (1 << per) - 1 };
        let fill = if s == MAX_SHIFT {
            u64::MAX
        } else {
            (1u64 << (1 << s)) - 1
        };
        let (mut marks, mut rest) = (0u64, groups);
        while rest != 0 {
            marks |= fill << (rest.trailing_zeros() << s);
            rest &= rest - 1;
        }
        marks
    }

    /// Clears the flags of every position of the chunk at `lo` that is not a
    /// candidate, so that the expander and the combine rule pass over it as
    /// over a position without moves inside the partition. Where the chunk
    /// was read in stretches (`within`), only they hold flags to clear.
    pub(super) fn mask_in(&self, lo: u64, flags: &mut [u8], within: Option<&[(usize, usize)]>) {
        debug_assert_eq!(lo % 64, 0, "chunks start on a word of marks");
        let first = (lo / 64) as usize;
        let Some(stretches) = within else {
            flags
                .par_chunks_mut(16)
                .enumerate()
                .for_each(|(w, flags)| mask_word(flags, self.word(first + w)));
            return;
        };
        for &(start, end) in stretches {
            let (from, to) = (start / 64, end.div_ceil(64));
            let bytes = (16 * to).min(flags.len());
            for (k, flags) in flags[16 * from..bytes].chunks_mut(16).enumerate() {
                mask_word(flags, self.word(first + from + k));
            }
        }
    }

    /// [`Self::mask_in`] for word `w` of the chunk at `lo` alone (its 16
    /// flag bytes), for a scan that does more with each word.
    pub(super) fn mask_word_in(&self, lo: u64, w: usize, flags: &mut [u8]) {
        debug_assert_eq!(lo % 64, 0, "chunks start on a word of marks");
        mask_word(flags, self.word((lo / 64) as usize + w));
    }
}

/// Whether a pass over `candidates` (where it has them) leaves the chunk
/// `lo..hi` unread: without a candidate, nothing in it can change.
pub(super) fn leaves_unread(candidates: Option<&Candidates>, lo: u64, hi: u64) -> bool {
    candidates.is_some_and(|k| !k.any_in(lo, hi))
}

/// Clears the flags (16 bytes, four 2-bit fields each) of the 64 positions
/// of one word of marks whose mark is unset.
fn mask_word(flags: &mut [u8], marks: u64) {
    for (b, byte) in flags.iter_mut().enumerate() {
        *byte &= SPREAD[((marks >> (4 * b)) & 15) as usize];
    }
}

/// What tells, without reading a chunk, that the marking of the pass after
/// `pass` finds nothing in it. Pass `d` marks from positions at distance
/// `d - 1`, which pass `d - 1` decided among its candidates or the first
/// scan decided anywhere, and from pending positions whose summary
/// mentions `d - 1` (summaries do not change after the first scan).
pub(super) struct ChunkHints {
    /// The pass whose candidates `touched` records.
    pass: u32,
    /// Per chunk: whether it held a candidate of that pass.
    touched: Vec<bool>,
    /// Per chunk: the distances of its decided values and of its pending
    /// positions' summaries when it was last read whole (bit `e` of the
    /// 256: distance `e`; summaries hold distances below 256, and a value
    /// beyond sets them all).
    distances: Vec<[u64; 4]>,
}

impl ChunkHints {
    /// Whether the marking for pass `d` must read chunk `c`.
    fn must_read(&self, c: usize, d: u32) -> bool {
        let e = d - 1;
        (self.pass == e && self.touched[c]) || self.names(c, e)
    }

    /// Whether chunk `c`'s distances hold `e` (every distance beyond 255
    /// is held).
    fn names(&self, c: usize, e: u32) -> bool {
        e >= 256 || self.distances[c][(e / 64) as usize] & (1 << (e % 64)) != 0
    }
}

/// Pass `d`'s candidates as the combine step of pass `d - 1` marks them,
/// chunk by chunk (memory only: a combine step resumed after an
/// interruption makes none, and the scan reads every chunk).
pub(super) struct NextMarks {
    /// The pass the marks are for.
    pass: u32,
    /// Shared with the markings in flight ([`Solver::marking_from_decided`]).
    bits: Arc<Vec<AtomicU64>>,
    /// As [`Candidates::shift`].
    shift: u32,
    /// Per chunk: whether its marks are in (or on their way).
    done: Vec<bool>,
    /// Set when the game could not list a position's predecessors.
    cannot: Arc<AtomicBool>,
}

/// The words of marks no marking holds any more (copied where one still
/// did, which the steps' joins rule out).
fn into_words(bits: Arc<Vec<AtomicU64>>) -> Vec<u64> {
    match Arc::try_unwrap(bits) {
        Ok(bits) => bits.into_iter().map(AtomicU64::into_inner).collect(),
        Err(shared) => shared.iter().map(|b| b.load(Ordering::Relaxed)).collect(),
    }
}

impl<G: Game> Solver<'_, G> {
    /// No marks yet for this partition's positions, a bit per `1 <<
    /// shift`: a pass's spare marks cleared on all threads, or fresh ones.
    fn no_marks(&self, shift: u32) -> Arc<Vec<AtomicU64>> {
        let mut bits = self
            .spare_marks
            .take(words_for(self.size(), shift), Fill::Overwritten);
        bits.par_chunks_mut(1 << 14).for_each(|words| words.fill(0));
        // The same allocation, as atomics (same size and alignment).
        Arc::new(bits.into_iter().map(AtomicU64::new).collect())
    }

    /// Keeps the marks of a pass that is done with them for a later one.
    pub(super) fn keep_marks(&self, candidates: Candidates) {
        self.spare_marks.keep(candidates.bits);
    }
}

/// Adds distance `e` to a chunk's set of distances (all of them beyond 255).
fn add_distance(set: &mut [u64; 4], e: u32) {
    if e < 256 {
        set[(e / 64) as usize] |= 1 << (e % 64);
    } else {
        *set = [u64::MAX; 4];
    }
}

/// Four marks spread to the four 2-bit flag fields of a byte.
const SPREAD: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut n = 0;
    while n < 16 {
        let mut i = 0;
        while i < 4 {
            if n & (1 << i) != 0 {
                t[n] |= 3 << (2 * i);
            }
            i += 1;
        }
        n += 1;
    }
    t
};

impl<G: Game> Solver<'_, G> {
    /// The finest candidate bits that fit the memory plan (see
    /// [`Candidates::shift`]), `None` where not even a bit per word of 64
    /// positions does: they are held twice while the combine step of the
    /// pass before marks the next pass's (the plan leaves a fifth of the
    /// budget as slack; two bitmaps may take an eighth of it).
    fn candidate_shift(&self) -> Option<u32> {
        (0..=MAX_SHIFT)
            .find(|&s| words_for(self.size(), s) as u64 * 8 <= self.plan.lookup_chunk / 2)
    }

    /// The candidates of pass `d`, or `None` where every pending position
    /// is expanded: the game cannot list predecessors within a partition,
    /// or the bits do not fit the memory plan.
    pub(super) fn candidates(&self, d: u32) -> Result<Option<Candidates>> {
        let size = self.size();
        if self.no_predecessors.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some(shift) = self.candidate_shift() else {
            return Ok(None);
        };
        let clock = StepClock::start();
        // Hints from the pass before tell which chunks can hold marks;
        // without them (the partition's first marking, or a resume) every
        // chunk is read and the hints are made.
        let hints = lock(&self.chunk_hints).take().filter(|h| h.pass + 1 == d);
        let next = lock(&self.next_marks)
            .take()
            .filter(|m| m.pass == d && m.shift == shift);
        // The lists hold the rest of what the combine step of pass d - 1
        // did not mark (before pass 1, all of it).
        if lock(&self.distance_lists).is_some() && (next.is_some() || d == 1) {
            return self.candidates_from_lists(d, shift, next);
        }
        // Marks the combine step of pass d - 1 made (it kept the hints'
        // distances of the chunks it visited): those chunks are done.
        let next = next.filter(|_| hints.is_some());
        let chunks = self.chunk_count() as usize;
        let (bits, done) = match next {
            Some(m) => (m.bits, m.done),
            None => (self.no_marks(shift), vec![false; chunks]),
        };
        let mark = |r: u64| set_bit(&bits, shift, r);
        let cannot = AtomicBool::new(false);
        lock(&self.figures).chunks_marked_by_combine = done.iter().filter(|&&d| d).count() as u64;
        let mut distances = match &hints {
            Some(h) => h.distances.clone(),
            None => vec![[0u64; 4]; chunks],
        };
        self.chunk_phase(&format!("pass {d}: candidates"), 0);
        let marked = self.stats.profile.in_step(Part::Candidates, || {
            self.for_each_chunk(
                0,
                |c| match &hints {
                    _ if done[c as usize] => Ok(None),
                    Some(h) if !h.must_read(c as usize, d) => Ok(None),
                    _ => self.read_chunk_with_summary(c).map(Some),
                },
                |c, loaded| {
                    let (lo, hi) = self.chunk_range(size, c);
                    if let Some((values, flags, summary)) = loaded {
                        match self.mark_chunk(lo, (&values, &flags, &summary), d, &mark) {
                            Some(set) => distances[c as usize] = set,
                            None => cannot.store(true, Ordering::Relaxed),
                        }
                    }
                    self.progress.inc(hi - lo);
                    Ok(())
                },
            )
        });
        marked?;
        let (wall, cpu) = clock.read();
        self.stats.profile.add_step(Part::Candidates, wall, cpu);
        if cannot.into_inner() {
            self.no_predecessors.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        let candidates = Candidates::new(into_words(bits), shift);
        let touched = (0..chunks as u64)
            .map(|c| {
                let (lo, hi) = self.chunk_range(size, c);
                candidates.any_in(lo, hi)
            })
            .collect();
        *lock(&self.chunk_hints) = Some(ChunkHints {
            pass: d,
            touched,
            distances,
        });
        Ok(Some(candidates))
    }

    /// Marks in chunk `lo..` (its values, flags and summaries) pass `d`'s
    /// candidates that it gives: the predecessors within the partition of
    /// its positions at distance `d - 1`, and its pending positions whose
    /// summary mentions `d - 1`. Returns the chunk's distances for the
    /// hints, found in the same scan (see [`ChunkHints`]); `None` if the
    /// game cannot list predecessors.
    fn mark_chunk(
        &self,
        lo: u64,
        (values, flags, summary): (&[u8], &[u8], &[u8]),
        d: u32,
        mark: &(impl Fn(u64) + Sync),
    ) -> Option<[u64; 4]> {
        let blocking = lock(&self.blocking);
        let wins = blocking.as_ref().and_then(|b| b.wins_cleared_by_marking(d));
        values
            .par_chunks(SLICE)
            .enumerate()
            .try_fold(
                || (Vec::new(), [0u64; 4]),
                |(mut before, mut set), (s, values)| {
                    let base = s * SLICE;
                    for (j, &v) in values.iter().enumerate() {
                        let at = base + j;
                        let r = lo + at as u64;
                        match Value::from_byte(v).distance() {
                            Some(e) => {
                                add_distance(&mut set, e);
                                if e + 1 == d {
                                    if let Some(wins) = wins {
                                        Blocking::clear_win(wins, r);
                                    }
                                    if !self.mark_predecessors(r, &mut before, mark) {
                                        return None;
                                    }
                                }
                            }
                            None if v == PENDING && flag(flags, at) == ONGOING | INTERNAL => {
                                let s = Earlier::decode(summary[at]);
                                if let Some(e) = s.distance() {
                                    add_distance(&mut set, e);
                                }
                                if s.mentions(d - 1) {
                                    mark(r);
                                }
                            }
                            None => {}
                        }
                    }
                    Some((before, set))
                },
            )
            .map(|scanned| scanned.map(|(_, set)| set))
            .try_reduce(
                || [0u64; 4],
                |a, b| Some(std::array::from_fn(|i| a[i] | b[i])),
            )
    }

    /// Marks the predecessors within the partition of position `r`;
    /// `false` if the game cannot list them. `before` is scratch space.
    fn mark_predecessors(
        &self,
        r: u64,
        before: &mut Vec<G::Position>,
        mark: &(impl Fn(u64) + Sync),
    ) -> bool {
        let (game, size) = (self.game, self.size());
        let p = self.layout.order()[self.slot];
        let Some(pos) = game.unrank(p, Rank(r)) else {
            return true;
        };
        game.visit_predecessor_ranks_within(&pos, before, &mut |qp, Rank(qr)| {
            if qp == p && qr < size {
                mark(qr);
            }
        })
    }

    /// Clears the blocking bits (see blocking.rs) of the positions at
    /// `offsets` in the chunk at `lo`, at distance `d - 1`, where the
    /// marking of pass `d`'s candidates keeps them.
    fn clear_wins(&self, d: u32, lo: u64, offsets: &[u32]) {
        let blocking = lock(&self.blocking);
        if let Some(wins) = blocking.as_ref().and_then(|b| b.wins_cleared_by_marking(d)) {
            for &j in offsets {
                Blocking::clear_win(wins, lo + u64::from(j));
            }
        }
    }

    /// Marks, on all threads, the predecessors within the partition of the
    /// positions at `offsets` in the chunk at `lo`; `false` if the game
    /// cannot list them.
    fn mark_predecessors_of(&self, lo: u64, offsets: &[u32], mark: &(impl Fn(u64) + Sync)) -> bool {
        offsets
            .par_chunks(MARK_BATCH)
            .try_for_each_init(Vec::new, |before, js| {
                js.iter()
                    .all(|&j| self.mark_predecessors(lo + u64::from(j), before, mark))
                    .then_some(())
                    .ok_or(())
            })
            .is_ok()
    }

    /// Whether the combine step may mark pass `next_pass`'s candidates of
    /// chunk `c` from the positions it decided alone
    /// ([`Self::marking_from_decided`]): the hints, from the chunk's last
    /// whole read and every pass since, say it held no value at the
    /// combining pass's distance and no pending position whose summary
    /// mentions it. (A chunk redone after an interruption has some of its
    /// decisions written already; the marking scan before the resumed pass
    /// read it whole and saw them, so it takes the whole scan.)
    /// With the first scan's distance lists, every chunk may: they hold
    /// the rest of its marks.
    pub(super) fn marks_from_decided_alone(&self, next_pass: u32, c: u64) -> bool {
        let d = next_pass - 1;
        self.plan.chunk <= u64::from(u32::MAX)
            && (lock(&self.distance_lists).is_some()
                || lock(&self.chunk_hints)
                    .as_ref()
                    .is_some_and(|h| h.pass == d && !h.names(c as usize, d)))
    }

    /// Whether the game lists predecessors within this partition (asked of
    /// its first position that unranks), so that distance lists can serve
    /// its passes' marking.
    pub(super) fn lists_predecessors(&self) -> bool {
        let p = self.layout.order()[self.slot];
        self.plan.chunk <= u64::from(u32::MAX)
            && (0..self.size().min(1 << 12))
                .find_map(|r| self.game.unrank(p, Rank(r)))
                .is_some_and(|pos| self.game.predecessors_within(&pos, &mut Vec::new()))
    }

    /// Pass `d`'s candidates from the first scan's distance lists at `d - 1`
    /// and, for `d > 1`, `next`, the marks pass `d - 1`'s combine step made
    /// from what it decided: no chunk is read.
    fn candidates_from_lists(
        &self,
        d: u32,
        shift: u32,
        next: Option<NextMarks>,
    ) -> Result<Option<Candidates>> {
        let size = self.size();
        let clock = StepClock::start();
        let bits = match next {
            Some(m) => {
                lock(&self.figures).chunks_marked_by_combine =
                    m.done.iter().filter(|&&d| d).count() as u64;
                m.bits
            }
            None => self.no_marks(shift),
        };
        let mark = |r: u64| set_bit(&bits, shift, r);
        self.chunk_phase(&format!("pass {d}: candidates from lists"), 0);
        let listed_all = self
            .stats
            .profile
            .in_step(Part::Candidates, || -> Result<bool> {
                let lists = lock(&self.distance_lists);
                let Some(lists) = lists.as_ref() else {
                    return Ok(false);
                };
                for c in 0..self.chunk_count() {
                    let (lo, hi) = self.chunk_range(size, c);
                    let listed =
                        lists.listed(c, d - 1, |file, offset, len| self.read(file, offset, len))?;
                    for &j in &listed.mentioning {
                        mark(lo + u64::from(j));
                    }
                    self.clear_wins(d, lo, &listed.decided);
                    if !self.mark_predecessors_of(lo, &listed.decided, &mark) {
                        return Ok(false);
                    }
                    self.progress.inc(hi - lo);
                }
                Ok(true)
            });
        let (wall, cpu) = clock.read();
        self.stats.profile.add_step(Part::Candidates, wall, cpu);
        if !listed_all? {
            self.no_predecessors.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        Ok(Some(Candidates::new(into_words(bits), shift)))
    }

    /// [`Self::mark_next`] where [`Self::marks_from_decided_alone`] holds:
    /// the positions the pass decided in chunk `c`, `decided` (offsets in
    /// the chunk), are then all its positions at the pass's distance, and
    /// their predecessors are the next pass's candidates the chunk gives;
    /// no pending summary mentions the distance, and the chunk's other
    /// distances are as the hints hold them. This spares a scan of the
    /// whole chunk, which late passes, deciding a few positions a chunk,
    /// spent most of their marking on.
    ///
    /// Returns the marking itself, to run now or beside the step's next
    /// chunks (it touches only the marks and the blocking bits of the
    /// positions it lists, which nothing reads before the step ends): a
    /// pass that decides many positions spends most of its combine step
    /// ranking their predecessors, while the step's reads and writes wait.
    pub(super) fn marking_from_decided<'s>(
        &'s self,
        next: &mut NextMarks,
        c: u64,
        decided: Vec<u32>,
    ) -> Box<dyn FnOnce() + Send + 's> {
        let (lo, _) = self.chunk_range(self.size(), c);
        next.done[c as usize] = true;
        if !decided.is_empty() {
            if let Some(h) = lock(&self.chunk_hints).as_mut() {
                add_distance(&mut h.distances[c as usize], next.pass - 1);
            }
        }
        let (bits, shift, pass) = (next.bits.clone(), next.shift, next.pass);
        let cannot = next.cannot.clone();
        Box::new(move || {
            let mark = |r: u64| set_bit(&bits, shift, r);
            self.clear_wins(pass, lo, &decided);
            if !self.mark_predecessors_of(lo, &decided, &mark) {
                cannot.store(true, Ordering::Relaxed);
            }
        })
    }

    /// Starts pass `d + 1`'s marks for the combine step of pass `d`, where
    /// they fit and the step starts at its first chunk (`first == 0`): a
    /// step resumed mid-way has not seen the chunks before `first`.
    pub(super) fn start_next_marks(&self, d: u32, first: u64) -> Option<NextMarks> {
        if first > 0 || self.no_predecessors.load(Ordering::Relaxed) {
            return None;
        }
        let shift = self.candidate_shift()?;
        Some(NextMarks {
            pass: d + 1,
            bits: self.no_marks(shift),
            shift,
            done: vec![false; self.chunk_count() as usize],
            cannot: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Marks from chunk `c` (its values final for pass `next.pass - 1`)
    /// the next pass's candidates, and refreshes its distances in the
    /// hints.
    pub(super) fn mark_next(
        &self,
        next: &mut NextMarks,
        c: u64,
        (values, flags, summary): (&[u8], &[u8], &[u8]),
    ) {
        let (lo, _) = self.chunk_range(self.size(), c);
        let (bits, shift) = (&next.bits, next.shift);
        let mark = |r: u64| set_bit(bits, shift, r);
        let distances = self.mark_chunk(lo, (values, flags, summary), next.pass, &mark);
        next.done[c as usize] = true;
        match distances {
            Some(set) => {
                if let Some(h) = lock(&self.chunk_hints).as_mut() {
                    h.distances[c as usize] = set;
                }
            }
            None => next.cannot.store(true, Ordering::Relaxed),
        }
    }

    /// Keeps the marks a combine step made for the next pass's scan.
    pub(super) fn finish_next_marks(&self, next: NextMarks) {
        if next.cannot.load(Ordering::Relaxed) {
            self.no_predecessors.store(true, Ordering::Relaxed);
        } else {
            *lock(&self.next_marks) = Some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_cover_the_marked_words_joined_across_short_gaps() {
        // 8192 positions (128 words), a bit a position.
        let mut bits = vec![0u64; 128];
        bits[2] = 1 << 5; // positions 128..192
        bits[10] = 1; // 640..704: 448 positions after the first, joined
        bits[100] = 1 << 63; // 6400..6464: far, a stretch of its own
        let k = Candidates::new(bits, 0);
        assert_eq!(k.stretches(0, 8192), Some(vec![(128, 704), (6400, 6464)]));
        // The chunk at 6400 (a partition's last, 1000 positions) sees only
        // the last mark, its stretch cut at the chunk's end.
        assert_eq!(k.stretches(6400, 7400), Some(vec![(0, 64)]));
        // A one-position chunk that is a candidate: whole.
        assert_eq!(k.stretches(128, 129), None);
        assert_eq!(k.stretches(1024, 6400), Some(vec![]));
        // More than half the chunk marked: read whole.
        let dense = Candidates::new((0..128).map(|w| u64::from(w % 3 != 0)).collect(), 0);
        assert_eq!(dense.stretches(0, 8192), None);
        // A bit for 8 positions: group 20 is positions 160..168, in word 2.
        let coarse = Candidates::new(vec![1 << 20, 0], 3);
        assert_eq!(coarse.stretches(0, 1024), Some(vec![(128, 192)]));
    }

    /// A range holds a candidate exactly where one of its positions' bits
    /// is set, however far the range reaches past empty words (which the
    /// test skips by their occupancy bits) and wherever it starts and ends.
    #[test]
    fn any_in_finds_a_mark_exactly_where_a_position_of_the_range_has_one() {
        let mut rng = crate::hash::SplitMix64::new(31);
        for shift in 0..=MAX_SHIFT {
            let size = 64 * 9000 + 7;
            let n = words_for(size, shift);
            // A handful of marks among thousands of words: most ranges
            // cross many empty words, some of them whole occupancy words.
            let mut bits = vec![0u64; n];
            for _ in 0..6 {
                let b = rng.next_u64() % (n as u64 * 64);
                bits[(b / 64) as usize] |= 1 << (b % 64);
            }
            let marked =
                |r: u64| bits[((r >> shift) / 64) as usize] >> ((r >> shift) % 64) & 1 == 1;
            let plain: Vec<bool> = (0..size).map(marked).collect();
            let k = Candidates::new(bits.clone(), shift);
            for _ in 0..400 {
                let lo = rng.next_u64() % size;
                let hi = (lo + rng.next_u64() % (size / 3)).min(size);
                let want = plain[lo as usize..hi as usize].iter().any(|&m| m);
                assert_eq!(k.any_in(lo, hi), want, "shift {shift}, range {lo}..{hi}");
            }
            assert!(!k.any_in(5, 5), "an empty range holds nothing");
        }
    }

    /// Stretches found by skipping to the marked words are those a scan of
    /// every word finds, for every shift and chunk bounds, on sparse marks.
    #[test]
    fn stretches_skip_to_the_marked_words_as_a_scan_of_every_word_finds() {
        let mut rng = crate::hash::SplitMix64::new(29);
        for shift in 0..=MAX_SHIFT {
            let size = 64 * 3000 + 64 * (shift as u64);
            let n = words_for(size, shift);
            // About 20 words with a bit or two, the others empty.
            let every = (n as u64 / 20).max(1);
            let bits: Vec<u64> = (0..n)
                .map(|_| {
                    let r = rng.next_u64();
                    let (one, two) = (1 << ((r >> 8) % 64), 1 << ((r >> 16) % 64));
                    match (r % every == 0, r & 1 == 0) {
                        (true, true) => one | two,
                        (true, false) => one,
                        (false, _) => 0,
                    }
                })
                .collect();
            let k = Candidates::new(bits, shift);
            for (lo, hi) in [
                (0, size),
                (64 * 17, 64 * 1017),
                (64 * 2999, size),
                (640, 640 + 100),
            ] {
                let len = (hi - lo) as usize;
                let mut plain = Stretches::new(len);
                let mut whole = false;
                for w in 0..len.div_ceil(64) {
                    if k.word((lo / 64) as usize + w) != 0
                        && !plain.add(64 * w, (64 * w + 64).min(len))
                    {
                        whole = true;
                        break;
                    }
                }
                let want = (!whole).then(|| plain.into_vec());
                assert_eq!(k.stretches(lo, hi), want, "shift {shift}, chunk {lo}..{hi}");
            }
            assert!(
                k.stretches(0, size).is_some_and(|s| s.len() > 10),
                "shift {shift}: too few marks to test"
            );
        }
    }

    #[test]
    fn keeping_candidates_clears_the_flags_of_the_others() {
        // 128 positions: every one ongoing with internal moves, pending
        // but for position 5.
        let mut values = vec![PENDING; 128];
        values[5] = Value::at_distance(3).unwrap().to_byte();
        let mut flags = vec![0xffu8; 32];
        let candidates = Candidates::new(vec![0b10_0110, 1 << 63], 0);
        candidates.mask_in(0, &mut flags, None);
        let left: Vec<usize> = (0..128).filter(|&j| flag(&flags, j) != 0).collect();
        assert_eq!(left, vec![1, 2, 5, 127]);
        assert!(left.iter().all(|&j| flag(&flags, j) == ONGOING | INTERNAL));
        // Position 5 is marked but decided: three pending candidates, in
        // the first word two, in the second one.
        let expanding = super::super::expand::expanding_per_word;
        assert_eq!(expanding(&values, &mut flags, None, None), [2, 1]);
        // Its flags are cleared in the same scan: the pass's jobs go
        // without values, their flags alone say what expands.
        let left: Vec<usize> = (0..128).filter(|&j| flag(&flags, j) != 0).collect();
        assert_eq!(left, vec![1, 2, 127]);
        // Masked and counted in one scan: the same flags, the same counts.
        let mut fused = vec![0xffu8; 32];
        let words = expanding(&values, &mut fused, Some((&candidates, 0)), None);
        assert_eq!((fused, words), (flags.clone(), vec![2, 1]));
        // Read in a stretch (the second word), zero elsewhere: only the
        // stretch is looked at, with the same result there.
        let mut read = vec![0u8; 32];
        read[16..].fill(0xff);
        let mut masked = read.clone();
        candidates.mask_in(0, &mut masked, Some(&[(64, 128)]));
        assert_eq!(masked[..16], [0; 16]);
        assert_eq!(masked[16..], flags[16..]);
        let words = expanding(
            &values,
            &mut read,
            Some((&candidates, 0)),
            Some(&[(64, 128)]),
        );
        assert_eq!((read, words), (masked, vec![0, 1]));
        assert!(candidates.any_in(0, 64) && candidates.any_in(64, 128));
        let none = Candidates::new(vec![0, 0, 1 << 7], 0);
        assert!(!none.any_in(0, 128) && none.any_in(128, 136) && none.any_in(64, 136));
    }

    /// A bit for a group of positions stands for every position of the
    /// group, whichever of them was marked: the same answers as the bits a
    /// position of the whole groups.
    #[test]
    fn coarse_candidates_are_the_whole_groups_of_their_marks() {
        let size = 1000u64;
        let marked = [0u64, 5, 63, 64, 130, 511, 512, 777, 999];
        for shift in 0..=MAX_SHIFT {
            let bits: Vec<AtomicU64> = (0..words_for(size, shift))
                .map(|_| AtomicU64::new(0))
                .collect();
            for &r in &marked {
                set_bit(&bits, shift, r);
            }
            let coarse =
                Candidates::new(bits.into_iter().map(AtomicU64::into_inner).collect(), shift);
            let fine_bits: Vec<AtomicU64> =
                (0..words_for(size, 0)).map(|_| AtomicU64::new(0)).collect();
            for r in 0..size {
                if marked.iter().any(|&m| m >> shift == r >> shift) {
                    set_bit(&fine_bits, 0, r);
                }
            }
            let fine = Candidates::new(
                fine_bits.into_iter().map(AtomicU64::into_inner).collect(),
                0,
            );
            for w in 0..words_for(size, 0) {
                // A group may reach past the partition's end, where no
                // position (and no flag) is.
                let past = size.saturating_sub(64 * w as u64).min(64);
                let within = if past == 64 {
                    u64::MAX
                } else {
                    (1 << past) - 1
                };
                assert_eq!(
                    coarse.word(w) & within,
                    fine.word(w),
                    "shift {shift}, word {w}"
                );
            }
            for (lo, hi) in [
                (0, 64),
                (64, 128),
                (128, 512),
                (192, 448),
                (448, 512),
                (512, 1000),
                (832, 1000),
                (0, 1000),
            ] {
                assert_eq!(
                    coarse.any_in(lo, hi),
                    fine.any_in(lo, hi),
                    "shift {shift}, {lo}..{hi}"
                );
            }
            let (mut a, mut b) = (vec![0xffu8; 250], vec![0xffu8; 250]);
            coarse.mask_in(0, &mut a, None);
            fine.mask_in(0, &mut b, None);
            assert_eq!(a, b, "shift {shift}");
            // Masked in its stretches alone (flags read there only), the
            // chunk's last word short: the same flags.
            let stretches: Vec<(usize, usize)> = (0..words_for(size, 0))
                .filter(|&w| fine.word(w) != 0)
                .map(|w| (64 * w, (64 * w + 64).min(size as usize)))
                .collect();
            let mut c = vec![0u8; 250];
            for &(start, end) in &stretches {
                c[start / 4..end.div_ceil(4)].fill(0xff);
            }
            coarse.mask_in(0, &mut c, Some(&stretches));
            assert_eq!(c, b, "shift {shift}, in stretches");
        }
        // Some ranges with and some without a mark, so the test can tell.
        let fine = |r: u64| marked.contains(&r);
        assert!(!(192..448).any(fine) && (448..512).any(fine));
    }
}
