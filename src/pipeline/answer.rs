//! The answer step: each bucket of requests answered from one lookup range
//! of the successors' values, the answers bucketed by the requester's chunk.

use super::checkpoint::{SaveWithin, Step, WithinPass};
use super::disks::ByteFile;
use super::external::Solver;
use super::runs::{Order, Record, RunIndex};
use crate::game::Game;
use crate::value::rules::PassAcc;
use crate::value::Value;
use crate::Result;

/// Positions a lookup range is read by where its requests are few: a late
/// pass asks about a few thousand positions of a partition, and reading
/// its whole lookup ranges for them took most of its answer step.
const SEGMENT: usize = 4096;

/// One lookup range of values (`lo..` of a file, `len` long), read by
/// segments as its requests need them, or whole where they are many.
struct LookupRange {
    lo: u64,
    len: usize,
    values: Vec<u8>,
    /// Per segment: whether it is read.
    read: Vec<bool>,
}

impl LookupRange {
    /// Range `lo..lo + len` in `values`, a buffer of an earlier range: its
    /// bytes are not looked at before the segment they are in is read.
    fn new(lo: u64, len: usize, mut values: Vec<u8>) -> LookupRange {
        values.resize(len, 0);
        LookupRange {
            lo,
            len,
            values,
            read: vec![false; len.div_ceil(SEGMENT)],
        }
    }

    /// The segments `records` need, and where a quarter of the range's
    /// segments or more may be, all of them; each unread stretch of
    /// them read in one piece by `read(offset in the file, into)`.
    fn read_for(
        &mut self,
        records: &[Record],
        mut read: impl FnMut(u64, &mut [u8]) -> Result<()>,
    ) -> Result<&[u8]> {
        let segments = self.read.len();
        let mut want = vec![false; segments];
        if records.len() >= segments / 4 {
            want.fill(true);
        } else {
            for q in records {
                if let Some(w) = want.get_mut(q.index() as usize / SEGMENT) {
                    *w = true;
                }
            }
        }
        let mut s = 0;
        while s < segments {
            if !want[s] || self.read[s] {
                s += 1;
                continue;
            }
            let first = s;
            while s < segments && want[s] && !self.read[s] {
                self.read[s] = true;
                s += 1;
            }
            let (start, end) = (first * SEGMENT, (s * SEGMENT).min(self.len));
            read(self.lo + start as u64, &mut self.values[start..end])?;
        }
        Ok(&self.values)
    }
}

impl<G: Game> Solver<'_, G> {
    /// Requests are answered from a lookup range of values, a byte each.
    fn request_order(&self) -> Order {
        Order::for_range(self.plan.lookup_chunk)
    }

    /// Answers every request with the successor's stored value, but for
    /// those that cannot change what pass `d` decides (the first scan's
    /// summaries need them all).
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
                        ByteFile::open_existing_parts(&self.disks.values_path(s), size)?,
                    ));
                }
                let file = &file.as_ref().expect("opened above").1;
                let bucket = self.bucket_base[s] + c;
                if let Some(&(ns, nc)) = buckets.get(ordinal + 1) {
                    self.prefetch_runs("req", requests, self.bucket_base[ns] + nc);
                }
                let lo = c * self.plan.lookup_chunk;
                let hi = (lo + self.plan.lookup_chunk).min(size);
                let mut range: Option<LookupRange> = None;
                self.read_runs("req", requests, bucket, self.request_order(), |records| {
                    let values = range
                        .get_or_insert_with(|| {
                            let kept =
                                std::mem::take(&mut *super::external::lock(&self.lookup_values));
                            LookupRange::new(lo, (hi - lo) as usize, kept)
                        })
                        .read_for(records, |at, into| self.read_into(file, at, into))?;
                    self.progress.inc(records.len() as u64);
                    let answer = |q: &Record| {
                        let requester = q.payload;
                        Record::new(
                            requester / self.plan.chunk,
                            requester % self.plan.chunk,
                            u64::from(values[q.index() as usize]),
                        )
                    };
                    // The first scan keeps every answer: its summaries need them all.
                    if d == 0 {
                        answers.push_mapped(records, |_| true, answer)
                    } else {
                        let kind = self.kind;
                        let can_change = |q: &Record| {
                            let v = Value::from_byte(values[q.index() as usize]);
                            PassAcc::can_change(kind, d, v)
                        };
                        answers.push_mapped(records, can_change, answer)
                    }
                })?;
                if let Some(range) = range {
                    *super::external::lock(&self.lookup_values) = range.values;
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_range_reads_the_segments_its_requests_need_or_all() {
        let file: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (lo, len) = (10_000u64, 90_000usize); // 22 segments, the last short
        let reads = std::cell::RefCell::new(Vec::new());
        let read = |at: u64, into: &mut [u8]| {
            reads.borrow_mut().push((at, into.len()));
            into.copy_from_slice(&file[at as usize..at as usize + into.len()]);
            Ok(())
        };
        // A stale buffer from an earlier range: never looked at unread.
        let mut range = LookupRange::new(lo, len, vec![0xee; 120_000]);
        let few = [
            Record::new(0, 5, 0),
            Record::new(0, 4_100, 0),
            Record::new(0, 89_999, 0),
        ];
        let values = range.read_for(&few, read).unwrap().to_vec();
        for q in &few {
            let i = q.index() as usize;
            assert_eq!(values[i], file[lo as usize + i]);
        }
        // Segments 0 and 1 (adjacent: one read), and the last one, short.
        assert_eq!(*reads.borrow(), [(lo, 8_192), (lo + 86_016, 3_984)]);
        // Read again for a request in a segment already read: no read.
        range.read_for(&few[1..2], read).unwrap();
        assert_eq!(reads.borrow().len(), 2);
        // A quarter of the segments' worth of requests: the rest, in the
        // stretches between what was read.
        let many: Vec<Record> = (0..5u64).map(|i| Record::new(0, 20_000 + i, 0)).collect();
        let values = range.read_for(&many, read).unwrap().to_vec();
        assert_eq!(reads.borrow()[2..], [(lo + 8_192, 77_824)]);
        assert_eq!(values, file[lo as usize..lo as usize + len]);
    }
}
