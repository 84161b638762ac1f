//! The answer step: each bucket of requests answered from one lookup range
//! of the successors' values, the answers bucketed by the requester's chunk.

use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::disks::ByteFile;
use super::external::Solver;
use super::runs::{Order, Record, RunIndex};
use crate::game::Game;
use crate::Result;
use rayon::prelude::*;

impl<G: Game> Solver<'_, G> {
    /// Requests are answered from a lookup range of values, a byte each.
    fn request_order(&self) -> Order {
        Order::for_range(self.plan.lookup_chunk)
    }

    /// Answers every request with the successor's stored value.
    pub(super) fn answer(
        &self,
        requests: &RunIndex,
        d: u32,
        from: Option<WithinPass>,
        save: &mut SaveWithin<'_>,
    ) -> Result<RunIndex> {
        let (first, answers) = self.step_writer("ans", from.map(|w| (w.next, w.answers)))?;
        let slots: Vec<usize> = if d == 0 {
            (0..self.slot).collect()
        } else {
            vec![self.slot]
        };
        self.progress
            .phase(&format!("{} answer", self.name()), requests.records);
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
                    self.prefetch_runs("req", requests, self.bucket_base[ns] + nc);
                }
                let lo = c * self.plan.lookup_chunk;
                let hi = (lo + self.plan.lookup_chunk).min(size);
                let mut chunk: Option<Vec<u8>> = None;
                self.read_runs("req", requests, bucket, self.request_order(), |records| {
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
                })?;
            }
            let next = ordinal as u64 + 1;
            self.save_when_due(next, buckets.len() as u64, save, || {
                Ok(WithinPass {
                    next,
                    requests: requests.clone(),
                    answers: answers.durable()?,
                    ..WithinPass::at(Step::Answer)
                })
            })?;
        }
        let index = self.finish_runs(answers)?;
        super::external::lock(&self.figures).answer_bytes = index.bytes;
        Ok(index)
    }
}
