//! The expand step: the partition's chunks streamed through an expander
//! (a device's kernels, or the game's rules on the CPU), every successor
//! that must be looked up turned into a request bucketed by its lookup
//! range.
//!
//! Chunks are cut into jobs of at most the expander's chunk size and kept
//! in flight up to its depth: on a GPU one job is copied in while another
//! is in its kernels and a third's requests come back, and the reader
//! thread fetches the next chunk from disk meanwhile.

use super::candidates::Candidates;
use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::external::{Expanded, Solver};
use super::runs::{Record, RunIndex, LOW_BITS};
use crate::game::{ChunkExpander, ChunkJob, CpuExpander, Game, StreamTargets};
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;

/// The fewest indices a job holds (unless its chunk is smaller).
const MIN_JOB: u64 = 1024;

/// A chunk read from disk whose jobs are not all back yet.
struct OpenChunk {
    chunk: u64,
    lo: u64,
    len: usize,
    values: Vec<u8>,
    flags: Vec<u8>,
    /// Indices handed to the expander so far.
    submitted: usize,
    outstanding: usize,
}

impl<'a, G: Game> Solver<'a, G> {
    /// What an expander of this partition needs to know.
    fn stream_targets(&self) -> StreamTargets {
        let order = self.layout.order();
        let own = self.layout.size(self.slot).div_ceil(self.plan.lookup_chunk);
        // Jobs bounded by the write buffers' size, so that a job's
        // requests, held at once, stay a fraction of the memory budget; but
        // not below 1024 indices: tiny jobs cost more in hand-offs
        // than they expand (64-index jobs made a pass of a 1.5 M-index partition 4x slower).
        let job = ((self.plan.run_capacity as u64 / 16) / 64 * 64)
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
            max_chunk: job,
            buckets: self.bucket_base[self.slot] + own,
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

    /// Expands the pending positions of every chunk into requests. In the first
    /// scan (`d == 0`) it also sets illegal and terminal values and the
    /// internal-successor flags, and asks only about earlier partitions; in
    /// pass `d` it asks only about this one, for the `candidates` alone
    /// where given.
    pub(super) fn expand(
        &self,
        d: u32,
        candidates: Option<&Candidates>,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<RunIndex> {
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
        let job_size = (expander.max_chunk().min(self.plan.chunk) / 64 * 64).max(64) as usize;
        let depth = expander.depth().max(1);
        let mut expanded = Expanded {
            expander: expander.name(),
            candidates: candidates.map(|_| 0),
            // The marking before the step counted these.
            chunks_marked_by_combine: super::external::lock(&self.expanded)
                .chunks_marked_by_combine,
            ..Expanded::default()
        };
        let kept = std::sync::atomic::AtomicU64::new(0);
        self.with_chunks(
            first,
            |c| {
                let (lo, hi) = self.chunk_range(self.size(), c);
                if candidates.is_some_and(|k| !k.any_in(lo, hi)) {
                    // Nothing to expand: the chunk is not read.
                    self.progress.inc(hi - lo);
                    return Ok((Vec::new(), Vec::new()));
                }
                let (values, mut flags) = self.read_chunk(c)?;
                if let Some(candidates) = candidates {
                    let n = candidates.keep_in(lo, &values, &mut flags);
                    kept.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                }
                Ok((values, flags))
            },
            |next| {
                let mut open: VecDeque<OpenChunk> = VecDeque::new();
                let mut in_flight = 0usize;
                let mut read_all = false;
                loop {
                    while in_flight < depth {
                        if open.back().is_none_or(|o| o.submitted >= o.len) {
                            if read_all {
                                break;
                            }
                            let Some((chunk, (values, flags))) = next()? else {
                                read_all = true;
                                break;
                            };
                            let (lo, _) = self.chunk_range(self.size(), chunk);
                            let skipped = values.is_empty();
                            open.push_back(OpenChunk {
                                chunk,
                                lo,
                                len: values.len(),
                                values,
                                flags,
                                submitted: 0,
                                outstanding: 0,
                            });
                            if skipped {
                                // Done as it is; leaves with the chunks
                                // before it.
                                continue;
                            }
                        }
                        let o = open.back_mut().expect("a chunk is open");
                        let off = o.submitted;
                        let len = job_size.min(o.len - off);
                        let (values, flags) = if off == 0 && len == o.len {
                            (std::mem::take(&mut o.values), std::mem::take(&mut o.flags))
                        } else {
                            (
                                o.values[off..off + len].to_vec(),
                                o.flags[off / 4..(off + len).div_ceil(4)].to_vec(),
                            )
                        };
                        expander.submit(ChunkJob {
                            chunk: o.chunk,
                            lo: o.lo + off as u64,
                            first_scan,
                            values,
                            flags,
                        })?;
                        o.submitted += len;
                        o.outstanding += 1;
                        in_flight += 1;
                    }
                    if in_flight == 0 {
                        break;
                    }
                    let done = expander.collect()?;
                    in_flight -= 1;
                    let Some(o) = open.iter_mut().find(|o| o.chunk == done.chunk) else {
                        return Err(Error::NotAvailable(format!(
                            "the expander returned chunk {}, which was not submitted; report this as a bug",
                            done.chunk
                        )));
                    };
                    let off = (done.lo - o.lo) as usize;
                    let n = done.values.len();
                    if o.values.is_empty() && n == o.len {
                        o.values = done.values;
                        o.flags = done.flags;
                    } else if first_scan {
                        o.values[off..off + n].copy_from_slice(&done.values);
                        let fb = n.div_ceil(4);
                        o.flags[off / 4..off / 4 + fb].copy_from_slice(&done.flags[..fb]);
                    }
                    let records: Vec<Record> = done
                        .requests
                        .par_iter()
                        .map(|&[key, payload]| Record { key, payload })
                        .collect();
                    requests.push(&records)?;
                    expanded.requests += records.len() as u64;
                    expanded.chunks += 1;
                    expanded.timing.add(&done.timing);
                    self.progress.inc(n as u64);
                    o.outstanding -= 1;
                    while open
                        .front()
                        .is_some_and(|o| o.submitted >= o.len && o.outstanding == 0)
                    {
                        let o = open.pop_front().expect("checked above");
                        if first_scan {
                            self.write(&self.values, o.lo, &o.values)?;
                            self.write(&self.flags, o.lo / 4, &o.flags)?;
                        }
                        let c = o.chunk;
                        self.save_when_due(c + 1, chunks, save, || {
                            Ok(WithinPass {
                                next: c + 1,
                                requests: requests.durable()?,
                                ..WithinPass::at(Step::Expand)
                            })
                        })?;
                    }
                }
                Ok(())
            },
        )?;
        *super::external::lock(&self.expander) = Some(expander);
        if let Some(n) = expanded.candidates.as_mut() {
            *n = kept.into_inner();
        }
        let index = self.finish_runs(requests)?;
        expanded.request_bytes = index.bytes;
        *super::external::lock(&self.expanded) = expanded;
        Ok(index)
    }
}
