//! The expand step: the partition's chunks streamed through an expander
//! (a device's kernels, or the game's rules on the CPU), every successor
//! that must be looked up turned into a request bucketed by its lookup
//! range.
//!
//! Chunks are cut into jobs of at most the expander's chunk size and kept
//! in flight up to its depth: on a GPU one job is copied in while another
//! is in its kernels and a third's requests come back, and the reader
//! thread fetches the next chunk from disk meanwhile.

use super::blocking::Blocking;
use super::buffers::Fill;
use super::candidates::{leaves_unread, Candidates};
use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::combine::{AtomicSummaries, ChunkReads, ChunkToDecide, Earlier};
use super::external::{ExpandStep, Solver};
use super::resident::{FoldError, Resident};
use super::runs::{RunIndex, LOW_BITS};
use crate::game::{ChunkExpander, ChunkJob, CpuExpander, Game, Lookup, StreamTargets};
use crate::value::rules::PassAcc;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A chunk as the expand step's reader thread hands it on: its length
/// (zero: nothing to expand), values (a first scan's), flags, positions
/// that expand per word (a pass's), and what deciding it needs (a pass
/// decided as its chunks come back).
type LoadedForExpand = (
    usize,
    Vec<u8>,
    Vec<u8>,
    Option<Vec<u32>>,
    Option<ChunkToDecide>,
);

/// The fewest indices a job holds (unless its chunk is smaller).
const MIN_JOB: u64 = 1024;

/// A chunk read from disk whose jobs are not all back yet.
struct OpenChunk {
    chunk: u64,
    lo: u64,
    len: usize,
    /// A first scan's values; a pass's chunk holds none (its flags say what
    /// expands).
    values: Vec<u8>,
    flags: Vec<u8>,
    /// Positions that expand per word of 64 indices, in a pass (in a first
    /// scan every index does).
    expanding: Option<Vec<u32>>,
    /// Indices handed to the expander, or passed over, so far.
    submitted: usize,
    outstanding: usize,
    /// In a pass decided as its chunks come back, what deciding this one
    /// needs.
    to_decide: Option<ChunkToDecide>,
    /// In a first scan answered in memory, its positions' summaries so far.
    summaries: Option<AtomicSummaries>,
}

impl OpenChunk {
    /// The next job's first index and length within the chunk: at most
    /// `max_len` indices (a multiple of 64) and, but for a single word,
    /// `max_expanding` positions that expand. A pass's job starts and ends
    /// on words that hold such positions: the words between jobs have
    /// nothing to expand, and are not sent. `None`: nothing left.
    fn next_job(&self, max_len: usize, max_expanding: u64) -> Option<(usize, usize)> {
        let from = self.submitted;
        if from >= self.len {
            return None;
        }
        let Some(words) = &self.expanding else {
            let len = max_len.min((max_expanding as usize / 64 * 64).max(64));
            return Some((from, len.min(self.len - from)));
        };
        let first = from / 64 + words[from / 64..].iter().position(|&n| n > 0)?;
        let (mut last, mut count) = (first, 0u64);
        for (w, &n) in words.iter().enumerate().skip(first) {
            if (w + 1 - first) * 64 > max_len || (w > first && count + u64::from(n) > max_expanding)
            {
                break;
            }
            count += u64::from(n);
            if n > 0 {
                last = w;
            }
        }
        let start = first * 64;
        Some((start, ((last + 1) * 64).min(self.len) - start))
    }
}

/// How many positions of each word of 64 indices expand in a pass: pending,
/// with flags exactly `ONGOING | INTERNAL` (see `StreamTargets`). The flags
/// of the others are cleared in the same scan, so that the flags alone say
/// what expands (the pass's jobs go without values), and where the pass
/// takes `candidates` (with the chunk's first index), so are those of the
/// positions that are not candidates. Where the chunk was read in
/// stretches (`within`), only their words are looked at: elsewhere flags
/// are zero and nothing expands.
pub(super) fn expanding_per_word(
    values: &[u8],
    flags: &mut [u8],
    candidates: Option<(&Candidates, u64)>,
    within: Option<&[(usize, usize)]>,
) -> Vec<u32> {
    let count = |w: usize, values: &[u8], flags: &mut [u8]| {
        if let Some((candidates, lo)) = candidates {
            candidates.mask_word_in(lo, w, flags);
        }
        ChunkJob::clear_flags_unless_pending(values, flags);
        ChunkJob::count_expanding(flags) as u32
    };
    // Words outside the stretches are skipped in the same single parallel
    // scan: a parallel scan a stretch, from the loader's thread, cost a
    // hand-off to the pool each, and a middle pass has thousands a chunk.
    let mut inside = vec![within.is_none(); values.len().div_ceil(64)];
    for &(start, end) in within.unwrap_or(&[]) {
        inside[start / 64..end.div_ceil(64)].fill(true);
    }
    values
        .par_chunks(64)
        .zip(flags.par_chunks_mut(16))
        .enumerate()
        .map(|(w, (values, flags))| {
            if inside[w] {
                count(w, values, flags)
            } else {
                0
            }
        })
        .collect()
}

/// Clears the flags of the positions that expand (flags exactly `ONGOING |
/// INTERNAL`, see [`expanding_per_word`]) whose summary byte `settled`
/// says leaves the pass nothing to decide, and takes them off their words'
/// counts. Returns how many it cleared.
fn drop_settled(
    flags: &mut [u8],
    words: &mut [u32],
    summary: &[u8],
    settled: impl Fn(Earlier) -> bool + Sync,
) -> u64 {
    flags
        .par_chunks_mut(16)
        .zip(words.par_iter_mut())
        .enumerate()
        .filter(|(_, (_, n))| **n > 0)
        .map(|(w, (flags, n))| {
            let before = *n;
            for (k, byte) in flags.iter_mut().enumerate() {
                for i in 0..4 {
                    let j = w * 64 + 4 * k + i;
                    if (*byte >> (2 * i)) & 3 == 3 && settled(Earlier::decode(summary[j])) {
                        *byte &= !(3 << (2 * i));
                        *n -= 1;
                    }
                }
            }
            u64::from(before - *n)
        })
        .sum()
}

/// A pass answered in memory whose chunks are decided as they come back
/// from the expander: once a chunk's jobs are all back, its requests have
/// set its positions' blocked bits (a request's requester is a position of
/// the job), so the combine step's work on it can be done then, on what
/// the expand step read, and the chunk is neither read nor visited again.
pub(super) struct DecideAsExpanded<'f> {
    /// The bits the requests are looked up in.
    pub(super) blocking: &'f Blocking,
    /// What the combine step reads of a chunk.
    pub(super) reads: ChunkReads<'f>,
    /// The combine step's work on chunk `c`, handed what it read.
    pub(super) decide: &'f mut (dyn FnMut(u64, ChunkToDecide) -> Result<()> + 'f),
}

/// A first scan answered in memory (see resident.rs): each request looked
/// up in `resident` as it comes back and folded into its requester's
/// summary; once a chunk's jobs are all back, `finish` gets its values and
/// flags and their summaries, and writes them.
pub(super) struct FirstScanInMemory<'f> {
    /// The values requests are looked up in.
    pub(super) resident: &'f Resident,
    /// The first scan's work on chunk `c` once its summaries are whole.
    #[allow(clippy::type_complexity)]
    pub(super) finish:
        &'f mut (dyn FnMut(u64, (Vec<u8>, Vec<u8>), &AtomicSummaries) -> Result<()> + 'f),
}

/// How a step answers its requests without run files.
pub(super) enum InMemory<'f> {
    /// A pass that decides losses, into its blocked bits.
    Pass(DecideAsExpanded<'f>),
    /// A first scan, from the earlier partitions' values.
    FirstScan(FirstScanInMemory<'f>),
}

impl<'a, G: Game> Solver<'a, G> {
    /// What an expander of this partition needs to know.
    fn stream_targets(&self) -> StreamTargets {
        let order = self.layout.order();
        let own = self.layout.size(self.slot).div_ceil(self.plan.lookup_chunk);
        // Positions that expand in a job bounded by the write buffers'
        // size, so that a job's requests, held at once, stay a fraction of
        // the memory budget; but not below 1024: tiny jobs cost more in
        // hand-offs than they expand (64-index jobs made a pass of a 1.5
        // M-index partition 4x slower). Its indices only by the chunk: a
        // pass expands few of them (bounding them by the requests' room too
        // cut a pass of a 144 M-index partition into 580 jobs).
        let expanding = ((self.plan.run_capacity as u64 / 16) / 64 * 64)
            .max(MIN_JOB)
            .min(self.plan.chunk);
        StreamTargets {
            partition: order[self.slot],
            bucket_base: (0..=self.slot)
                .map(|s| (order[s], self.bucket_base[s]))
                .collect(),
            lookup_chunk: self.plan.lookup_chunk,
            low_bits: LOW_BITS,
            reached: self.reached.map(Arc::from),
            max_chunk: self.plan.chunk,
            max_expanding: expanding,
            buckets: self.bucket_base[self.slot] + own,
            host_bytes: self.device.map_or(u64::MAX, |d| d.host_bytes),
        }
    }

    /// The device's expander where the kernels cover this partition, the
    /// game's rules on the CPU otherwise.
    fn new_expander(&self) -> Result<Box<dyn ChunkExpander + 'a>> {
        let targets = self.stream_targets();
        if let Some(device) = &self.device {
            if let Some(made) = device.kernels.expander(&targets, device.device_bytes) {
                return made;
            }
        }
        Ok(Box::new(CpuExpander::new(self.game, targets)))
    }

    /// A pass's chunk `c` read as its combine step reads it (the pass is
    /// decided as its chunks come back), with the flags of the positions
    /// that expand (see the plain pass's read in [`Self::expand`]) and
    /// their count per word. `settled` and `kept` count as there.
    fn load_to_expand_and_decide(
        &self,
        d: u32,
        reads: ChunkReads<'_>,
        c: u64,
        settled: &AtomicU64,
        kept: &AtomicU64,
    ) -> Result<LoadedForExpand> {
        let (lo, hi) = self.chunk_range(self.size(), c);
        let Some(chunk) = self.load_to_decide(reads, c)? else {
            // No candidate: nothing to expand or decide, the chunk not read.
            self.progress.inc(hi - lo);
            return Ok((0, Vec::new(), Vec::new(), None, None));
        };
        // The combine step's flags are masked to the candidates already.
        let mut flags = self.spare.take(chunk.flags().len(), Fill::Overwritten);
        flags.copy_from_slice(chunk.flags());
        let mut words = expanding_per_word(chunk.values(), &mut flags, None, chunk.stretches());
        // As in a plain pass that decides losses: a candidate its earlier
        // successors block is not expanded (the combine step's summary holds
        // every pending candidate's).
        let dropped = drop_settled(&mut flags, &mut words, chunk.summary(), |e| {
            e.settles_undecided(self.kind, d)
        });
        settled.fetch_add(dropped, Ordering::Relaxed);
        kept.fetch_add(words.iter().map(|&n| u64::from(n)).sum(), Ordering::Relaxed);
        Ok((
            (hi - lo) as usize,
            Vec::new(),
            flags,
            Some(words),
            Some(chunk),
        ))
    }

    /// Expands the pending positions of every chunk into requests. In the first
    /// scan (`d == 0`) it also sets illegal and terminal values and the
    /// internal-successor flags, and asks only about earlier partitions; in
    /// pass `d` it asks only about this one, for the `candidates` alone
    /// where given. With `in_memory`, a pass's requests are answered as
    /// they come back, into its blocked bits, none is written, and each
    /// chunk is decided once its jobs are back.
    pub(super) fn expand(
        &self,
        d: u32,
        candidates: Option<&Candidates>,
        from: Option<WithinPass>,
        in_memory: Option<InMemory<'_>>,
        save: &mut SaveWithin<'_>,
    ) -> Result<RunIndex> {
        let (blocking, reads, mut decide, mut first_in_memory) = match in_memory {
            Some(InMemory::Pass(f)) => (Some(f.blocking), Some(f.reads), Some(f.decide), None),
            Some(InMemory::FirstScan(f)) => (None, None, None, Some(f)),
            None => (None, None, None, None),
        };
        let resident = first_in_memory.as_ref().map(|f| f.resident);
        let kind = self.kind;
        let own_ranges = (self.bucket_base[self.slot], self.plan.lookup_chunk);
        // An expander that can look successors up where it makes them (the
        // CPU's) does so in a pass answered in memory: a candidate stops at
        // its first blocking successor instead of requesting them all.
        let blocks = |s: u64| blocking.is_some_and(|b| b.blocks(s));
        let block = |r: u64| blocking.iter().for_each(|b| b.block(r));
        let lookup = blocking.map(|_| Lookup {
            blocks: &blocks,
            blocked: &block,
        });
        let (first, requests) = self.step_writer("req", from.map(|w| (w.next, w.requests)))?;
        let phase = if d == 0 {
            "first scan".to_string()
        } else {
            format!("pass {d}")
        };
        self.chunk_phase(&format!("{phase}: expand"), first);
        let first_scan = d == 0;
        let chunks = self.chunk_count();
        // One expander for all the partition's passes: a device's pinned
        // and device buffers are costly to set up again every pass.
        let mut expander = match super::external::lock(&self.expander).take() {
            Some(e) => e,
            None => self.new_expander()?,
        };
        // A device answers a pass that decides losses itself where the
        // partition's bits fit beside its buffers: no request comes back
        // to the host, only a bit per position. Asked before the jobs are
        // cut, as it may make its chunks smaller to hold the bits.
        let bits = blocking
            .filter(|_| !expander.looks_up())
            .map(Blocking::can_block_words);
        let on_device = expander.answer_on_device(bits.as_deref())?;
        let job_size = (expander.max_chunk().min(self.plan.chunk) / 64 * 64).max(64) as usize;
        let max_expanding = expander.max_expanding().max(64);
        let depth = expander.depth().max(1);
        let mut expanded = ExpandStep {
            expander: if on_device {
                expander.name() + super::external::ANSWERED_ON_DEVICE
            } else {
                expander.name()
            },
            candidates: candidates.map(|_| 0),
            ..ExpandStep::default()
        };
        let kept = AtomicU64::new(0);
        let settled = AtomicU64::new(0);
        self.with_chunks(
            first,
            |c| {
                if let Some(reads) = reads {
                    return self.load_to_expand_and_decide(d, reads, c, &settled, &kept);
                }
                let (lo, hi) = self.chunk_range(self.size(), c);
                if leaves_unread(candidates, lo, hi) {
                    // Nothing to expand: the chunk is not read.
                    self.progress.inc(hi - lo);
                    return Ok((0, Vec::new(), Vec::new(), None, None));
                }
                if first_scan {
                    let (values, flags) = self.read_chunk(c)?;
                    return Ok(((hi - lo) as usize, values, flags, None, None));
                }
                // Only the candidates expand: where they are few, only
                // their stretches of the chunk are read.
                let stretches = candidates.and_then(|k| k.stretches(lo, hi));
                let (values, mut flags) = match &stretches {
                    Some(stretches) => self.read_chunk_in(c, stretches)?,
                    None => self.read_chunk(c)?,
                };
                let mut words = expanding_per_word(
                    &values,
                    &mut flags,
                    candidates.map(|k| (k, lo)),
                    stretches.as_deref(),
                );
                // A pass that decides losses needs every successor, so a
                // position whose earlier successors block it (a draw among
                // them, or a loss or win at `d` or beyond) stays undecided
                // whatever the others are: it is not expanded, and the
                // combine step finds it blocked by its summary as it would
                // with its answers. In a partition whose captures can lead
                // to a draw that is a third of a pass's candidates, with
                // dozens of moves each.
                if !PassAcc::decides_by_hit(self.kind, d) && words.iter().any(|&n| n > 0) {
                    let summary =
                        self.read_pending_summaries(lo, &values, &flags, stretches.as_deref())?;
                    let dropped = drop_settled(&mut flags, &mut words, &summary, |e| {
                        e.settles_undecided(self.kind, d)
                    });
                    settled.fetch_add(dropped, Ordering::Relaxed);
                    self.spare.keep(summary);
                }
                if candidates.is_some() {
                    let n: u64 = words.iter().map(|&n| u64::from(n)).sum();
                    kept.fetch_add(n, Ordering::Relaxed);
                }
                // The flags now say what expands: the values stay behind.
                self.spare.keep(values);
                Ok(((hi - lo) as usize, Vec::new(), flags, Some(words), None))
            },
            |next| {
                let mut open: VecDeque<OpenChunk> = VecDeque::new();
                let mut in_flight = 0usize;
                let mut read_all = false;
                loop {
                    // Chunks whose jobs are all back leave in order: a
                    // first scan writes them, a checkpoint may follow.
                    while open
                        .front()
                        .is_some_and(|o| o.submitted >= o.len && o.outstanding == 0)
                    {
                        let mut o = open.pop_front().expect("checked above");
                        let c = o.chunk;
                        match (first_in_memory.as_mut(), o.summaries.take()) {
                            (Some(f), Some(summaries)) => {
                                let chunk = (std::mem::take(&mut o.values), std::mem::take(&mut o.flags));
                                (f.finish)(c, chunk, &summaries)?;
                            }
                            (Some(_), None) => {
                                return Err(Error::NotAvailable(format!(
                                    "chunk {c} of a first scan answered in memory has no summaries; report this as a bug"
                                )));
                            }
                            (None, _) if first_scan => {
                                self.write(&self.values, o.lo, &o.values)?;
                                self.write(&self.flags, o.lo / 4, &o.flags)?;
                            }
                            (None, _) => {}
                        }
                        if let (Some(decide), Some(chunk)) = (decide.as_mut(), o.to_decide.take())
                        {
                            decide(c, chunk)?;
                        }
                        self.progress.inc(o.len as u64);
                        self.spare.keep(o.values);
                        self.spare.keep(o.flags);
                        if first_in_memory.is_some() {
                            // Its `finish` records the checkpoints.
                            continue;
                        }
                        self.save_when_due(c + 1, chunks, save, || {
                            Ok(WithinPass {
                                next: c + 1,
                                requests: requests.durable()?,
                                ..WithinPass::at(Step::Expand)
                            })
                        })?;
                    }
                    while in_flight < depth {
                        let job = open
                            .back()
                            .and_then(|o| o.next_job(job_size, max_expanding));
                        let Some((off, len)) = job else {
                            if let Some(o) = open.back_mut() {
                                // What is left has nothing to expand.
                                o.submitted = o.len;
                            }
                            if read_all {
                                break;
                            }
                            let Some((chunk, (len, values, flags, expanding, to_decide))) =
                                next()?
                            else {
                                read_all = true;
                                break;
                            };
                            let (lo, _) = self.chunk_range(self.size(), chunk);
                            open.push_back(OpenChunk {
                                chunk,
                                lo,
                                len,
                                values,
                                flags,
                                expanding,
                                submitted: 0,
                                outstanding: 0,
                                to_decide,
                                summaries: resident.map(|_| AtomicSummaries::new(len)),
                            });
                            continue;
                        };
                        let o = open.back_mut().expect("a job comes from an open chunk");
                        let (values, flags) = if off == 0 && len == o.len {
                            (std::mem::take(&mut o.values), std::mem::take(&mut o.flags))
                        } else {
                            // A pass's chunk holds no values (its flags say
                            // what expands): its jobs go without. Copies
                            // into spares: a late pass's job spans most of
                            // its chunk for a few positions, and fresh
                            // buffers cost it their page faults.
                            let copy = |part: &[u8]| {
                                let mut buf = self.spare.take(part.len(), Fill::Overwritten);
                                buf.copy_from_slice(part);
                                buf
                            };
                            (
                                copy(o.values.get(off..off + len).unwrap_or_default()),
                                copy(&o.flags[off / 4..(off + len).div_ceil(4)]),
                            )
                        };
                        let job = ChunkJob {
                            chunk: o.chunk,
                            lo: o.lo + off as u64,
                            first_scan,
                            values,
                            flags,
                        };
                        match lookup.as_ref().filter(|_| expander.looks_up()) {
                            Some(lookup) => {
                                expanded.requests += expander.submit_looking_up(job, lookup)?
                            }
                            None => expander.submit(job)?,
                        }
                        o.submitted = off + len;
                        o.outstanding += 1;
                        in_flight += 1;
                    }
                    if in_flight == 0 {
                        if open.is_empty() {
                            break;
                        }
                        // Only chunks with nothing left to expand: they leave above.
                        continue;
                    }
                    let mut pushed = 0u64;
                    let done = expander.collect_into(&mut |pairs| {
                        pushed += pairs.len() as u64;
                        match (blocking, resident) {
                            (Some(b), _) => {
                                b.block_requesters(pairs, own_ranges);
                                Ok(())
                            }
                            (None, Some(resident)) => {
                                // A job's requesters all lie in its chunk.
                                let Some(requester) = pairs.first_requester() else {
                                    return Ok(());
                                };
                                let o = open
                                    .iter()
                                    .find(|o| requester.wrapping_sub(o.lo) < o.len as u64)
                                    .ok_or(FoldError::Requester(requester));
                                let summaries = o.map(|o| {
                                    (o.lo, o.summaries.as_ref().expect("opened with them"))
                                });
                                summaries
                                    .and_then(|at| resident.fold(pairs, at, kind))
                                    .map_err(|e| self.fold_failed(e))
                            }
                            (None, None) => requests.push_requests(pairs),
                        }
                    })?;
                    in_flight -= 1;
                    let Some(o) = open.iter_mut().find(|o| o.chunk == done.chunk) else {
                        return Err(Error::NotAvailable(format!(
                            "the expander returned chunk {}, which was not submitted; report this as a bug",
                            done.chunk
                        )));
                    };
                    // A first scan's values and flags go back into the
                    // chunk, which writes them; a pass leaves both alone.
                    let off = (done.lo - o.lo) as usize;
                    let n = done.values.len();
                    if first_scan && o.values.is_empty() && n == o.len {
                        o.values = done.values;
                        o.flags = done.flags;
                    } else {
                        if first_scan {
                            o.values[off..off + n].copy_from_slice(&done.values);
                            let fb = n.div_ceil(4);
                            o.flags[off / 4..off / 4 + fb].copy_from_slice(&done.flags[..fb]);
                        }
                        self.spare.keep(done.values);
                        self.spare.keep(done.flags);
                    }
                    if let (true, Some(b)) = (on_device, blocking) {
                        b.block_words(done.lo, &done.blocked);
                        pushed += done.looked_up;
                    }
                    expanded.requests += pushed;
                    expanded.chunks += 1;
                    expanded.timing.add(&done.timing);
                    o.outstanding -= 1;
                }
                Ok(())
            },
        )?;
        *super::external::lock(&self.expander) = Some(expander);
        expanded.settled_by_summary = settled.into_inner();
        if let Some(n) = expanded.candidates.as_mut() {
            *n = kept.into_inner();
        }
        let index = self.finish_runs(requests)?;
        expanded.request_bytes = index.bytes;
        super::external::lock(&self.figures).expand = expanded;
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::rules::PENDING;

    /// Exactly the expanding positions whose summary byte settles the pass
    /// lose their flags, and each word's count follows: against a plain
    /// scan, on random flags and bytes.
    #[test]
    fn dropped_positions_are_the_settled_ones_that_expand() {
        let len = 64 * 50 + 17;
        let mut rng = crate::hash::SplitMix64::new(17);
        let mut next = move || rng.next_u64();
        let values = vec![PENDING; len];
        let mut flags: Vec<u8> = (0..len.div_ceil(4)).map(|_| next() as u8).collect();
        let mut words = expanding_per_word(&values, &mut flags, None, None);
        let summary: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let settled = |e: Earlier| e.distance().is_none_or(|d| d % 3 == 0);
        let before = flags.clone();
        let dropped = drop_settled(&mut flags, &mut words, &summary, settled);
        let mut want = 0;
        for (j, &byte) in summary.iter().enumerate() {
            let (was, now) = (flag_of(&before, j), flag_of(&flags, j));
            let drop = was == 3 && settled(Earlier::decode(byte));
            want += u64::from(drop);
            assert_eq!(now, if drop { 0 } else { was }, "position {j}");
        }
        assert!(want > 100, "{want}");
        assert_eq!(dropped, want);
        for (w, &n) in words.iter().enumerate() {
            let end = (16 * w + 16).min(flags.len());
            assert_eq!(
                n as usize,
                ChunkJob::count_expanding(&flags[16 * w..end]),
                "word {w}"
            );
        }
    }

    fn flag_of(flags: &[u8], j: usize) -> u8 {
        (flags[j / 4] >> (2 * (j % 4))) & 3
    }

    fn open(len: usize, expanding: Option<Vec<u32>>) -> OpenChunk {
        OpenChunk {
            chunk: 0,
            lo: 0,
            len,
            values: vec![PENDING; len],
            flags: vec![0; len.div_ceil(4)],
            expanding,
            submitted: 0,
            outstanding: 0,
            to_decide: None,
            summaries: None,
        }
    }

    /// Every job the chunk gives, in order.
    fn jobs(mut o: OpenChunk, max_len: usize, max_expanding: u64) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        while let Some((off, len)) = o.next_job(max_len, max_expanding) {
            assert!(off >= o.submitted && len > 0, "{off} {len}");
            o.submitted = off + len;
            out.push((off, len));
        }
        out
    }

    #[test]
    fn a_first_scan_cuts_jobs_by_indices_and_by_requests() {
        assert_eq!(
            jobs(open(300, None), 128, 1000),
            [(0, 128), (128, 128), (256, 44)]
        );
        // Every index expands: 64 of them fill the requests' room.
        assert_eq!(
            jobs(open(150, None), 128, 100),
            [(0, 64), (64, 64), (128, 22)]
        );
    }

    #[test]
    fn a_pass_sends_only_the_words_with_positions_that_expand() {
        // Words 0, 1, 4 and 5 empty; the chunk ends inside word 7.
        let words = vec![0, 0, 3, 1, 0, 0, 2, 5];
        let o = || open(7 * 64 + 10, Some(words.clone()));
        assert_eq!(jobs(o(), 1024, 1000), [(128, 5 * 64 + 10)]);
        // Four words at most: the job ends on its last word that expands.
        assert_eq!(jobs(o(), 256, 1000), [(128, 128), (384, 64 + 10)]);
        // Four positions at most, but never less than a word.
        assert_eq!(jobs(o(), 1024, 4), [(128, 128), (384, 64), (448, 10)]);
        assert_eq!(jobs(open(128, Some(vec![0, 0])), 1024, 10), []);
    }
}
