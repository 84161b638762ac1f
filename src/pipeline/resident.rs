//! A first scan answered in memory: where the values of the earlier
//! partitions its successors lie in fit the memory a first scan's write
//! buffers and lookup range would take, they are read whole before it, and
//! each request is looked up as it comes back from the expander and folded
//! into its requester's summary. Each chunk is decided once its jobs are
//! back, and nothing goes through run files: no request or answer is
//! sorted, encoded, written, read back or decoded, which was most of a
//! first scan's host work on a GPU host (8 to 10 of 16 cores busy with
//! that for a partition's whole scan) and most of its scratch bytes.
//!
//! The bytes are the run files' path's: a summary folds its answers in any
//! order, and each chunk is decided by the same code once they are all in.

use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::combine::{AtomicSummaries, Summary};
use super::disks::ByteFile;
use super::expand::{FirstScanInMemory, InMemory};
use super::external::{lock, Solver};
use super::runs::LOW_BITS;
use super::stats::{Part, StepClock};
use crate::game::{Game, Requests};
use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Pairs a task of the fold looks up, at most: a job's pairs are cut into
/// about four pieces a thread, so that all threads take part (a device's
/// first-scan job brings ~85 K pairs: cut into pieces of 8 K, 10 of 16
/// threads folded while the others waited), but no fewer than
/// [`FOLD_PIECE_MIN`], enough to pay for the hand-off.
const FOLD_PIECE: usize = 1 << 13;
const FOLD_PIECE_MIN: usize = 1 << 10;

/// Pairs whose values a fold looks up before it folds them.
const GATHER: usize = 256;

/// The values of the earlier partitions a first scan looks its requests up
/// in, by the bucket of a request's key.
pub(super) struct Resident {
    values: Vec<Vec<u8>>,
    /// Per bucket: which of `values` holds its lookup range, and the index
    /// that range starts at; `None` where that partition is not held.
    by_bucket: Vec<Option<(usize, u64)>>,
}

impl Resident {
    /// The values of a bucket's lookup range, if its partition is held.
    fn range(&self, bucket: u64) -> Option<&[u8]> {
        let (held, base) = (*self.by_bucket.get(bucket as usize)?)?;
        self.values[held].get(base as usize..)
    }

    /// Looks each request up (a request's key, its requester) and folds
    /// the value into the requester's summary in `chunk` (of `summaries`,
    /// its first index `lo`), on all threads. A key outside the held
    /// partitions is the first of them returned as `Err`.
    pub(super) fn fold(
        &self,
        requests: Requests<'_>,
        (lo, summaries): (u64, &AtomicSummaries),
        kind: crate::game::GameKind,
    ) -> std::result::Result<(), FoldError> {
        let (unheld, outside) = (AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX));
        let piece = requests
            .len()
            .div_ceil(4 * rayon::current_num_threads())
            .clamp(FOLD_PIECE_MIN, FOLD_PIECE);
        let fold = |v: Option<u8>, key: u64, requester: u64| {
            let j = requester.wrapping_sub(lo);
            if j >= summaries.len() as u64 {
                outside.fetch_min(requester, Ordering::Relaxed);
                return;
            }
            match v {
                Some(v) => summaries.add(j as usize, kind, Value::from_byte(v)),
                None => {
                    unheld.fetch_min(key, Ordering::Relaxed);
                }
            }
        };
        requests.pieces(piece).par_iter().for_each(|piece| {
            // The values of a group are looked up before any is folded: the
            // lookups, each likely a cache miss, then overlap rather than
            // wait behind the folds between them (a thread's fold went from
            // 19.6 to 15.6 ns a pair on the development machine).
            let mut looked_up = [None; GATHER];
            // One bucket a piece: its values are found once.
            let range = self.range(piece.bucket).unwrap_or_default();
            for group in piece.pairs.chunks(GATHER) {
                for (v, &[index, _]) in looked_up.iter_mut().zip(group) {
                    *v = range.get(index as usize).copied();
                }
                for (&v, &[index, requester]) in looked_up.iter().zip(group) {
                    let key = (piece.bucket << LOW_BITS) | u64::from(index);
                    fold(v, key, piece.lo + u64::from(requester));
                }
            }
        });
        match (unheld.into_inner(), outside.into_inner()) {
            (_, r) if r != u64::MAX => Err(FoldError::Requester(r)),
            (k, _) if k != u64::MAX => Err(FoldError::Unheld(k)),
            _ => Ok(()),
        }
    }
}

/// Why a fold failed.
#[derive(Debug)]
pub(super) enum FoldError {
    /// A request's key in a partition not held: the game's list of
    /// successor partitions left it out.
    Unheld(u64),
    /// A requester outside the chunk its job came from.
    Requester(u64),
}

impl<G: Game> Solver<'_, G> {
    /// The earlier partitions (by slot) this partition's successors may lie
    /// in, where their values fit the plan's room for a first scan
    /// answered in memory; `None` where they do not, or the plan has no
    /// such room.
    pub(super) fn resident_slots(&self) -> Option<Vec<usize>> {
        let order = self.layout.order();
        let slots: Vec<usize> = match self.game.successor_partitions(order[self.slot]) {
            Some(listed) => (0..self.slot)
                .filter(|&s| listed.contains(&order[s]))
                .collect(),
            None => (0..self.slot).collect(),
        };
        let bytes: u64 = slots.iter().map(|&s| self.layout.size(s)).sum();
        (self.plan.first_scan_values > 0 && bytes <= self.plan.first_scan_values).then_some(slots)
    }

    /// Reads the values of `slots` whole.
    fn load_resident(&self, slots: &[usize]) -> Result<Resident> {
        let buckets = self.bucket_base[self.slot] as usize;
        let mut by_bucket = vec![None; buckets];
        let mut values = Vec::with_capacity(slots.len());
        for &s in slots {
            let size = self.layout.size(s);
            let file = ByteFile::open_existing_parts(&self.disks.values_path(s), size)?;
            let mut held = vec![0u8; size as usize];
            self.read_into(&file, 0, &mut held)?;
            let ranges = size.div_ceil(self.plan.lookup_chunk);
            for c in 0..ranges {
                by_bucket[(self.bucket_base[s] + c) as usize] =
                    Some((values.len(), c * self.plan.lookup_chunk));
            }
            values.push(held);
        }
        Ok(Resident { values, by_bucket })
    }

    /// What a failed fold means, in words.
    pub(super) fn fold_failed(&self, failed: FoldError) -> Error {
        match failed {
            FoldError::Unheld(key) => {
                let bucket = key >> LOW_BITS;
                let slot = self.bucket_base[..self.slot]
                    .iter()
                    .rposition(|&b| b <= bucket)
                    .unwrap_or(0);
                let order = self.layout.order();
                Error::GameContract {
                    game: self.game.info().id.to_string(),
                    message: format!(
                        "a move from partition {} leads to partition {}, which successor_partitions does not list",
                        self.name(),
                        self.game.partition_name(order[slot])
                    ),
                }
            }
            FoldError::Requester(r) => Error::NotAvailable(format!(
                "partition {}: the expander returned a request of position {r}, outside the chunk it was sent; report this as a bug",
                self.name()
            )),
        }
    }

    /// The first scan answered in memory (see the module's notes) over the
    /// values of `slots`, from the chunk a checkpoint of its combine work
    /// left it at: returns the longest distance seen, and whether some
    /// position is left for the passes. Its checkpoints are the combine
    /// step's (chunks before them decided), naming no runs.
    ///
    /// One step does the work of the three: its time deciding chunks is the
    /// combine step's, the rest and all its CPU time and bytes the expand
    /// step's.
    pub(super) fn first_scan_in_memory(
        &self,
        slots: &[usize],
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<(u32, bool)> {
        let (first, mut max_seen) = from.map_or((0, 0), |w| (w.next, w.max_seen));
        // Chunks decided before an interruption are not looked at again, so
        // a resumed scan cannot tell: it leaves the answer to the passes.
        let mut left_for_passes = first > 0;
        let mut lists = self.first_scan_lists(first)?;
        let profile = &self.stats.profile;
        let clock = StepClock::start();
        let mut deciding = Duration::ZERO;
        let done = profile.in_step(Part::Expand, || -> Result<()> {
            let resident = self.load_resident(slots)?;
            let mut kept: Vec<Summary> = Vec::new();
            let chunks = self.chunk_count();
            self.with_write_back(|back| {
                let mut finish = |c: u64,
                                  (values, flags): (Vec<u8>, Vec<u8>),
                                  summaries: &AtomicSummaries| {
                    let started = Instant::now();
                    let (lo, _) = self.chunk_range(self.size(), c);
                    self.write(&self.flags, lo / 4, &flags)?;
                    let summaries = summaries.read_into(&mut kept);
                    let (longest, internal) =
                        self.finish_first_chunk(lo, (values, flags), summaries, &mut lists, back)?;
                    max_seen = max_seen.max(longest);
                    left_for_passes |= internal;
                    self.save_when_due(c + 1, chunks, save, || {
                        back.settle()?;
                        Ok(WithinPass {
                            next: c + 1,
                            max_seen,
                            ..WithinPass::at(Step::Combine)
                        })
                    })?;
                    deciding += started.elapsed();
                    Ok(())
                };
                let in_memory = InMemory::FirstScan(FirstScanInMemory {
                    resident: &resident,
                    finish: &mut finish,
                });
                // The expand step's own checkpoints name its runs, and it
                // writes none here.
                let mut no_save = |_: WithinPass| Ok(());
                let from = (first > 0).then(|| WithinPass {
                    next: first,
                    ..WithinPass::at(Step::Expand)
                });
                self.expand(0, None, from, Some(in_memory), &mut no_save)
            })?;
            Ok(())
        });
        let (wall, cpu) = clock.read();
        profile.add_step(Part::Expand, wall.saturating_sub(deciding), cpu);
        profile.add(Part::Combine, deciding);
        self.end_step();
        done?;
        lock(&self.figures).expand.expander += ", answered in memory";
        self.keep_first_scan_lists(lists, left_for_passes)?;
        Ok((max_seen, left_for_passes))
    }
}
