//! The streamed path's chunk expansion on the CPU, through the game's own
//! rules (unrank, status, successors, rank): what every game's device
//! expander must reproduce, request for request, and what the pipeline runs
//! for games or partitions that have no device expander.
//!
//! The grouping by bucket is the CPU twin of `kernels/common.cuh`'s
//! histogram-and-scatter: a count per bucket, a prefix sum, a scatter.

use super::kernels::{
    group_pairs, ChunkDone, ChunkExpander, ChunkJob, ChunkTiming, Lookup, OwnedRequests, Requests,
    StreamTargets, STREAM_DRAWN, STREAM_ILLEGAL, STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING,
    STREAM_PENDING,
};
use super::{Game, GameKind, Ranking, Status};
use crate::value::Rank;
use crate::{Error, Result};
use rayon::prelude::*;
use std::time::Instant;

/// Indices a thread expands at a time (a multiple of 4: flags are packed
/// four to a byte).
const SUB: usize = 4096;

#[inline]
fn set_flag(flags: &mut [u8], j: usize, f: u8) {
    flags[j / 4] |= f << (2 * (j % 4));
}

/// Expands `job` as [`StreamTargets`] specifies, on all threads.
pub fn expand_chunk_on_cpu<G: Game>(
    game: &G,
    targets: &StreamTargets,
    job: ChunkJob,
) -> Result<ChunkDone> {
    let (mut done, pieces) = expand_in_pieces(game, targets, job)?;
    done.requests = group_by_bucket(&pieces, targets.low_bits);
    Ok(done)
}

/// `job` opened for expansion: given values where it came without (see
/// [`ChunkJob::fill_values`]), with whether it came without them; an error
/// where its flags do not cover its values.
fn open_job(mut job: ChunkJob) -> Result<(ChunkJob, bool)> {
    let without_values = job.flags_only();
    job.fill_values();
    if job.values.len().div_ceil(4) > job.flags.len() {
        return Err(Error::NotAvailable(format!(
            "chunk {}: {} values but {} flag bytes; report this as a bug",
            job.chunk,
            job.values.len(),
            job.flags.len()
        )));
    }
    Ok((job, without_values))
}

/// [`expand_chunk_on_cpu`]'s work, its requests left as each thread made
/// them (not grouped, not in the [`ChunkDone`]).
fn expand_in_pieces<G: Game>(
    game: &G,
    targets: &StreamTargets,
    job: ChunkJob,
) -> Result<(ChunkDone, Vec<Vec<[u64; 2]>>)> {
    let started = Instant::now();
    let (
        ChunkJob {
            chunk,
            lo,
            first_scan,
            mut values,
            mut flags,
        },
        without_values,
    ) = open_job(job)?;
    let kind = game.info().kind;
    let p = targets.partition;
    // Most successors stay in the partition: its base is looked up once,
    // not in the list of partitions for each of them.
    let own_base = targets.base_of(p);
    let bases = targets.bases();
    // A first scan requests the successors in earlier partitions (those
    // inside only make the position's flag), a pass those inside: the
    // others need no rank.
    let ranking = if first_scan {
        Ranking::Outside(p)
    } else {
        Ranking::Within(p)
    };
    let contract = |message: String| Error::GameContract {
        game: game.info().id.to_string(),
        message,
    };
    let pieces: Vec<Result<Vec<[u64; 2]>>> = values
        .par_chunks_mut(SUB)
        .zip(flags.par_chunks_mut(SUB / 4))
        .enumerate()
        .map(|(i, (vals, bits))| {
            let mut out = Vec::new();
            let mut succ = Vec::new();
            let base = lo + (i * SUB) as u64;
            // A first scan visits every index, a pass those its flags expand.
            let listed: Vec<usize> = if first_scan {
                Vec::new()
            } else {
                ChunkJob::expanding(bits, vals.len()).collect()
            };
            let order: &mut dyn Iterator<Item = usize> = if first_scan {
                &mut (0..vals.len())
            } else {
                &mut listed.iter().copied()
            };
            for j in order {
                let v = &mut vals[j];
                let r = base + j as u64;
                if first_scan {
                    bits[j / 4] &= !(3 << (2 * (j % 4)));
                    if !targets.is_reached(r) {
                        *v = STREAM_ILLEGAL;
                        continue;
                    }
                } else if *v != STREAM_PENDING {
                    continue;
                }
                let Some(pos) = game.unrank(p, Rank(r)) else {
                    if first_scan {
                        *v = STREAM_ILLEGAL;
                    }
                    continue;
                };
                if first_scan {
                    match game.status(&pos) {
                        Status::Lost | Status::Goal => {
                            *v = STREAM_LOST;
                            continue;
                        }
                        Status::Drawn => {
                            *v = STREAM_DRAWN;
                            continue;
                        }
                        Status::Ongoing => {
                            *v = STREAM_PENDING;
                            set_flag(bits, j, STREAM_ONGOING);
                        }
                    }
                }
                let (mut moves, mut unsolved) = (0u32, None);
                game.visit_successor_ranks(&pos, &mut succ, ranking, &mut |sp, sr| {
                    moves += 1;
                    let base = if sp == p { own_base } else { bases.get(sp) };
                    let Some(b) = base else {
                        unsolved = Some(sp);
                        return false;
                    };
                    match sr {
                        // Ranked where the step needs it (`ranking`).
                        Some(Rank(s)) => out.push([targets.key(b, s), r]),
                        None if sp == p && first_scan => set_flag(bits, j, STREAM_INTERNAL),
                        None => {}
                    }
                    true
                });
                if let Some(sp) = unsolved {
                    return Err(contract(format!(
                        "a move from partition {} leads to partition {}, which is not solved before it",
                        game.partition_name(p),
                        game.partition_name(sp)
                    )));
                }
                if moves == 0 && kind == GameKind::TwoPlayer {
                    return Err(contract(format!(
                        "position {} has no moves but its status is not Lost or Drawn",
                        game.format_position(&pos)
                    )));
                }
            }
            Ok(out)
        })
        .collect();
    let mut pieces_ok = Vec::with_capacity(pieces.len());
    for piece in pieces {
        pieces_ok.push(piece?);
    }
    let done = ChunkDone {
        chunk,
        lo,
        values: if without_values { Vec::new() } else { values },
        flags,
        requests: Vec::new(),
        timing: ChunkTiming {
            kernel_seconds: started.elapsed().as_secs_f64(),
            ..ChunkTiming::default()
        },
        ..ChunkDone::default()
    };
    Ok((done, pieces_ok))
}

/// A pass's `job` expanded with its successors within the partition looked
/// up as they are made (see [`ChunkExpander::submit_looking_up`]), on all
/// threads: each position that expands (flags exactly `ONGOING | INTERNAL`,
/// value pending) stops at its first successor within the partition that
/// `lookup` says blocks it, and is then reported blocked. Its successors in
/// earlier partitions are not looked at (a pass has their summary). Returns
/// how many successors were looked up.
///
/// Where most candidates are blocked, most of their successors are never
/// ranked, and ranking is most of an expansion's work.
pub fn look_up_chunk_on_cpu<G: Game>(
    game: &G,
    targets: &StreamTargets,
    job: &ChunkJob,
    lookup: &Lookup<'_>,
) -> Result<u64> {
    if job.first_scan {
        return Err(Error::NotAvailable(
            "a first scan's chunk was sent to be looked up; report this as a bug".into(),
        ));
    }
    let p = targets.partition;
    let indices = job.indices();
    let pieces: Vec<u64> = (0..indices.div_ceil(SUB))
        .into_par_iter()
        .map(|i| {
            let mut succ = Vec::new();
            let mut looked = 0u64;
            let from = i * SUB;
            let to = (from + SUB).min(indices);
            for j in ChunkJob::expanding(&job.flags[from / 4..], to - from).map(|j| from + j) {
                if job.values.get(j).is_some_and(|&v| v != STREAM_PENDING) {
                    continue;
                }
                let r = job.lo + j as u64;
                let Some(pos) = game.unrank(p, Rank(r)) else {
                    continue;
                };
                game.visit_successor_ranks(&pos, &mut succ, Ranking::Within(p), &mut |sp, sr| {
                    let Some(Rank(s)) = sr.filter(|_| sp == p) else {
                        return true;
                    };
                    looked += 1;
                    if (lookup.blocks)(s) {
                        (lookup.blocked)(r);
                        return false;
                    }
                    true
                });
            }
            looked
        })
        .collect();
    Ok(pieces.into_iter().sum())
}

/// The requests of `pieces`, grouped by bucket in ascending order: a count
/// per bucket, a prefix sum, a scatter (the device's three kernels).
pub fn group_by_bucket(pieces: &[Vec<[u64; 2]>], low_bits: u32) -> Vec<[u64; 2]> {
    group_pairs(pieces, low_bits, Some).map_or_else(Vec::new, |(_, _, grouped)| grouped)
}

/// A [`ChunkExpander`] on the CPU: one chunk at a time, on all threads.
pub struct CpuExpander<'a, G: Game> {
    game: &'a G,
    targets: StreamTargets,
    /// The last chunk submitted, its requests grouped and narrowed as a
    /// device's come back: a build without a device takes the same path
    /// through its first scans' folds and run files.
    done: Option<Result<(ChunkDone, OwnedRequests)>>,
}

impl<'a, G: Game> CpuExpander<'a, G> {
    /// An expander of `targets.partition` through `game`'s rules.
    pub fn new(game: &'a G, targets: StreamTargets) -> Self {
        CpuExpander {
            game,
            targets,
            done: None,
        }
    }
}

impl<G: Game> ChunkExpander for CpuExpander<'_, G> {
    fn depth(&self) -> usize {
        1
    }

    fn max_chunk(&self) -> u64 {
        self.targets.max_chunk
    }

    fn max_expanding(&self) -> u64 {
        self.targets.max_expanding
    }

    fn submit(&mut self, job: ChunkJob) -> Result<()> {
        if self.done.is_some() {
            return Err(Error::NotAvailable(
                "a chunk was submitted before the last one was collected; report this as a bug"
                    .into(),
            ));
        }
        let low_bits = self.targets.low_bits;
        self.done = Some(expand_in_pieces(self.game, &self.targets, job).and_then(
            |(done, pieces)| {
                let grouped = OwnedRequests::group(&pieces, done.lo, low_bits)?;
                Ok((done, grouped))
            },
        ));
        Ok(())
    }

    fn looks_up(&self) -> bool {
        true
    }

    fn submit_looking_up(&mut self, job: ChunkJob, lookup: &Lookup<'_>) -> Result<u64> {
        if self.done.is_some() {
            return Err(Error::NotAvailable(
                "a chunk was submitted before the last one was collected; report this as a bug"
                    .into(),
            ));
        }
        let started = Instant::now();
        let looked = look_up_chunk_on_cpu(self.game, &self.targets, &job, lookup)?;
        // Its buffers go back with it, for the caller to use again.
        let done = ChunkDone {
            chunk: job.chunk,
            lo: job.lo,
            values: job.values,
            flags: job.flags,
            timing: ChunkTiming {
                kernel_seconds: started.elapsed().as_secs_f64(),
                ..ChunkTiming::default()
            },
            ..ChunkDone::default()
        };
        self.done = Some(Ok((done, OwnedRequests::default())));
        Ok(looked)
    }

    fn collect_into(
        &mut self,
        requests: &mut dyn FnMut(Requests<'_>) -> Result<()>,
    ) -> Result<ChunkDone> {
        let (done, grouped) = self.done.take().unwrap_or_else(|| {
            Err(Error::NotAvailable(
                "no chunk to collect; report this as a bug".into(),
            ))
        })?;
        requests(grouped.view())?;
        Ok(done)
    }

    fn name(&self) -> String {
        "cpu".into()
    }
}

/// The frame of a device kernel's CPU twin on the streamed path: `job`
/// (given values where it came without) cut into pieces of [`SUB`] indices,
/// expanded on all threads by `piece(values, flags, first index)`, which
/// returns the piece's requests and its failure word (common.cuh's
/// `tb_fail`: the lowest `code << 56 | rank`, or
/// [`NO_FAILURE`](super::NO_FAILURE)). The lowest failure of all becomes
/// `contract(failure)`; else the requests are grouped by bucket as the
/// device groups them. The twins differ only in `piece`.
pub fn expand_on_twin(
    targets: &StreamTargets,
    job: ChunkJob,
    piece: impl Fn(&mut [u8], &mut [u8], u64) -> (Vec<[u64; 2]>, u64) + Sync,
    contract: impl FnOnce(u64) -> Error,
) -> Result<ChunkDone> {
    let started = Instant::now();
    let (
        ChunkJob {
            chunk,
            lo,
            mut values,
            mut flags,
            ..
        },
        without_values,
    ) = open_job(job)?;
    let (pieces, failures): (Vec<Vec<[u64; 2]>>, Vec<u64>) = values
        .par_chunks_mut(SUB)
        .zip(flags.par_chunks_mut(SUB / 4))
        .enumerate()
        .map(|(i, (vals, bits))| piece(vals, bits, lo + (i * SUB) as u64))
        .unzip();
    if let Some(&failure) = failures.iter().min().filter(|&&f| f != super::NO_FAILURE) {
        return Err(contract(failure));
    }
    Ok(ChunkDone {
        chunk,
        lo,
        values: if without_values { Vec::new() } else { values },
        flags,
        requests: group_by_bucket(&pieces, targets.low_bits),
        timing: ChunkTiming {
            kernel_seconds: started.elapsed().as_secs_f64(),
            ..ChunkTiming::default()
        },
        ..ChunkDone::default()
    })
}

impl ChunkDone {
    /// The requests sorted by key and payload: two expansions of a chunk
    /// agree when these, the values and the flags do.
    pub fn sorted_requests(&self) -> Vec<[u64; 2]> {
        let mut r = self.requests.clone();
        r.par_sort_unstable();
        r
    }

    /// Whether the requests are grouped by bucket in ascending order.
    pub fn grouped(&self, low_bits: u32) -> bool {
        self.requests
            .windows(2)
            .all(|w| w[0][0] >> low_bits <= w[1][0] >> low_bits)
    }
}
