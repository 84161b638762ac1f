//! The expand step: the partition's chunks streamed, every successor that
//! must be looked up turned into a request bucketed by its lookup range.

use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::external::{clear_flags, flag, set_flag, Solver, INTERNAL, ONGOING};
use super::runs::{Record, RunIndex};
use crate::game::{Game, GameKind, Status};
use crate::value::rules::{at, PENDING};
use crate::value::{Rank, Value};
use crate::Result;
use rayon::prelude::*;

/// Records an expanding thread collects before it hands them to the write
/// buffer (64 KiB per thread).
const LOCAL_RECORDS: usize = 4096;

impl<G: Game> Solver<'_, G> {
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
    pub(super) fn expand(
        &self,
        d: u32,
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
                                    if self.reached.is_some_and(|w| {
                                        w[(r / 64) as usize] & (1 << (r % 64)) == 0
                                    }) {
                                        *v = Value::ILLEGAL.to_byte();
                                        continue;
                                    }
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
                self.save_when_due(c + 1, chunks, save, || {
                    Ok(WithinPass {
                        next: c + 1,
                        requests: requests.durable()?,
                        ..WithinPass::at(Step::Expand)
                    })
                })
            },
        )?;
        self.finish_runs(requests)
    }
}
