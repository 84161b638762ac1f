//! Passes that decide losses, answered in memory.
//!
//! A pending position of such a pass (a two-player game's even pass `d`) is
//! a loss at `d` when none of its successors blocks it: every one is a win
//! below `d` (a win at `d - 1` among them, which its exact candidate mark
//! guarantees, see [`PassAcc::decides_by_hit`]). So the answer a request
//! needs is one bit of its successor, "not a win below `d`", and with the
//! candidates marked a bit a position those bits fit beside them: a bit a
//! position, kept from pass to pass ([`Blocking`]). The expand step then
//! looks each request up as it comes back from the expander and sets its
//! requester's "blocked" bit, and the combine step decides from those bits
//! and the summaries: no request or answer reaches the disk, and the
//! answer step, which read the partition's values whole in every such
//! pass, does not run. An expander that can look successors up where it
//! makes them (the CPU's) does so, and a candidate stops at its first
//! successor that blocks it: most candidates are blocked, and ranking
//! their other successors was most of such a pass's work.
//!
//! The bits change only where a win is decided, and every win at `d - 1`
//! is visited by the marking of pass `d`'s candidates (they are its
//! predecessors' reason to be candidates), which clears its bit. A marking
//! that did not run whole, a resumed partition, or candidates that are not
//! exact let the bits go; they are made again from the values when the next
//! such pass needs them.

use super::external::{lock, Solver};
use crate::game::{Game, RequestPiece, Requests};
use crate::value::rules::{at, PassAcc, PENDING};
use crate::value::{GameKind, Value};
use crate::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Request pairs a slice of the pool looks up at once.
const LOOKUP_SLICE: usize = 1 << 14;

/// A bit a position of the partition: whether it can block a loss at pass
/// [`Blocking::pass`] (it is not a win below that distance); and a bit a
/// position saying which of that pass's candidates a successor blocks.
pub(super) struct Blocking {
    /// The pass the bits are for: a win at a distance below it has its bit
    /// clear, every other position its bit set.
    pass: u32,
    can_block: Vec<AtomicU64>,
    blocked: Vec<AtomicU64>,
}

fn words(size: u64) -> usize {
    size.div_ceil(64) as usize
}

fn bit(bits: &[AtomicU64], r: u64) -> bool {
    bits[(r / 64) as usize].load(Ordering::Relaxed) & (1 << (r % 64)) != 0
}

/// Whether a position of value byte `v` can block a loss at pass `d`.
fn can_block(v: u8, d: u32) -> bool {
    !Value::from_byte(v)
        .distance()
        .is_some_and(|e| e < d && e % 2 == 1)
}

impl Blocking {
    /// The bits for a pass at `d` from the partition's values, `values(c)`
    /// chunk `c` of them (`chunk` positions each, `size` in all).
    fn from_values(
        d: u32,
        size: u64,
        chunk: u64,
        mut values: impl FnMut(u64) -> Result<Vec<u8>>,
    ) -> Result<Blocking> {
        let mut can: Vec<u64> = vec![0; words(size)];
        for c in 0..size.div_ceil(chunk) {
            let bytes = values(c)?;
            // Chunks are whole words (a multiple of 64 positions).
            let first = (c * chunk / 64) as usize;
            can[first..first + bytes.len().div_ceil(64)]
                .par_iter_mut()
                .zip(bytes.par_chunks(64))
                .for_each(|(word, bytes)| {
                    *word = bytes
                        .iter()
                        .enumerate()
                        .filter(|&(_, &v)| can_block(v, d))
                        .fold(0, |w, (i, _)| w | 1 << i);
                });
        }
        Ok(Blocking {
            pass: d,
            can_block: can.into_iter().map(AtomicU64::new).collect(),
            blocked: (0..words(size)).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// The bits of the wins at `pass - 1`, which the marking of pass
    /// `pass`'s candidates visits: cleared by [`Self::clear_win`]. `None`
    /// where that marking does not keep them (an odd pass's marking).
    pub(super) fn wins_cleared_by_marking(&self, pass: u32) -> Option<&[AtomicU64]> {
        (pass % 2 == 0 && self.pass + 2 == pass).then_some(&self.can_block[..])
    }

    /// Position `r`, a win at distance `pass - 1`, no longer blocks.
    pub(super) fn clear_win(bits: &[AtomicU64], r: u64) {
        bits[(r / 64) as usize].fetch_and(!(1 << (r % 64)), Ordering::Relaxed);
    }

    /// Whether position `r` can block a loss at the pass.
    pub(super) fn blocks(&self, r: u64) -> bool {
        bit(&self.can_block, r)
    }

    /// Position `r`, a candidate of the pass, has a successor that blocks it.
    pub(super) fn block(&self, r: u64) {
        self.blocked[(r / 64) as usize].fetch_or(1 << (r % 64), Ordering::Relaxed);
    }

    /// The can-block bits as plain words, for a device that answers the
    /// pass itself ([`crate::game::ChunkExpander::answer_on_device`]).
    pub(super) fn can_block_words(&self) -> Vec<u64> {
        self.can_block
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }

    /// Sets the blocked bits a device sent back for a job from `lo`: a bit
    /// per index of the job, 64 to a word.
    pub(super) fn block_words(&self, lo: u64, words: &[u64]) {
        for (i, &w) in words.iter().enumerate() {
            if w == 0 {
                continue;
            }
            let first = lo + 64 * i as u64;
            if first % 64 == 0 {
                self.blocked[(first / 64) as usize].fetch_or(w, Ordering::Relaxed);
            } else {
                let mut rest = w;
                while rest != 0 {
                    self.block(first + u64::from(rest.trailing_zeros()));
                    rest &= rest - 1;
                }
            }
        }
    }

    /// Sets the blocked bit of each request's requester whose successor can
    /// block: the partition's lookup ranges are its buckets from `base`.
    pub(super) fn block_requesters(
        &self,
        requests: Requests<'_>,
        (base, lookup_chunk): (u64, u64),
    ) {
        let look = |&RequestPiece { bucket, lo, pairs }: &RequestPiece<'_>| {
            let first = (bucket - base) * lookup_chunk;
            for &[index, requester] in pairs {
                if self.blocks(first + u64::from(index)) {
                    self.block(lo + u64::from(requester));
                }
            }
        };
        let pieces = requests.pieces(LOOKUP_SLICE);
        if requests.len() <= LOOKUP_SLICE {
            pieces.iter().for_each(look);
        } else {
            pieces.par_iter().for_each(look);
        }
    }

    /// What the successors within the partition tell pass `d` of its
    /// pending candidate `r`: a win at `d - 1` (its exact mark says it has
    /// one, here or in its summary), and a blocking one where some
    /// successor is not a win below `d`.
    pub(super) fn acc(&self, kind: GameKind, d: u32, r: u64) -> PassAcc {
        let mut acc = PassAcc::default();
        acc.add(kind, d, at(d - 1));
        if bit(&self.blocked, r) {
            acc.add(kind, d, Value::from_byte(PENDING));
        }
        acc
    }
}

impl<G: Game> Solver<'_, G> {
    /// Whether pass `d`, over `exact` candidates (a bit a position), is
    /// answered in memory: a pass that decides losses.
    pub(super) fn answers_in_memory(&self, d: u32, exact: bool) -> bool {
        exact && !PassAcc::decides_by_hit(self.kind, d)
    }

    /// The bits for pass `d`, over exact candidates, taken out of
    /// `self.blocking`: those kept from the pass two before, whose wins at
    /// `d - 1` the marking of `d`'s candidates cleared (a marking that did
    /// not finish made no exact candidates, and a pass without them let
    /// the bits go), else made from the values. The blocked bits of the
    /// pass before are cleared.
    pub(super) fn take_blocking_for(&self, d: u32) -> Result<Blocking> {
        let kept = lock(&self.blocking).take();
        if let Some(mut b) = kept.filter(|b| b.pass + 2 == d) {
            b.pass = d;
            b.blocked
                .par_iter()
                .for_each(|w| w.store(0, Ordering::Relaxed));
            return Ok(b);
        }
        // The answer step's lookup range is not needed by passes answered
        // in memory: the bits take its room.
        *lock(&self.lookup_values) = Vec::new();
        let size = self.size();
        Blocking::from_values(d, size, self.plan.chunk, |c| {
            let (lo, hi) = self.chunk_range(size, c);
            self.read(&self.values, lo, (hi - lo) as usize)
        })
    }

    /// Lets the bits go: a pass that decides losses will make them again.
    pub(super) fn drop_blocking(&self) {
        *lock(&self.blocking) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::OwnedRequests;
    use crate::hash::SplitMix64;

    /// The bits made from values are "not a win below d", position by
    /// position; a request sets its requester's blocked bit exactly where
    /// its successor's is set; and the accumulator decides a loss at `d`
    /// exactly where no successor blocks.
    #[test]
    fn bits_and_lookups_follow_the_values() {
        let size = 64 * 40 + 23;
        let mut rng = SplitMix64::new(7);
        let values: Vec<u8> = (0..size)
            .map(|_| match rng.next_u64() % 8 {
                0 => PENDING,
                1 => at((rng.next_u64() % 12) as u32).to_byte(),
                // Mostly wins below the pass: many requesters stay unblocked.
                _ => at(1 + 2 * (rng.next_u64() % 3) as u32).to_byte(),
            })
            .collect();
        let d = 6;
        let chunk = 128;
        let b = Blocking::from_values(d, size as u64, chunk, |c| {
            let lo = (c * chunk) as usize;
            Ok(values[lo..(lo + chunk as usize).min(size)].to_vec())
        })
        .unwrap();
        for (r, &v) in values.iter().enumerate() {
            let win_below = Value::from_byte(v)
                .distance()
                .is_some_and(|e| e < d && e % 2 == 1);
            assert_eq!(bit(&b.can_block, r as u64), !win_below, "position {r}");
        }
        let (base, lookup_chunk, low_bits) = (3, 1000, 44);
        let mut pairs: Vec<[u64; 2]> = (0..3_000)
            .map(|_| {
                let s = rng.next_u64() % size as u64;
                let key = ((base + s / lookup_chunk) << low_bits) | (s % lookup_chunk);
                [key, rng.next_u64() % size as u64]
            })
            .collect();
        // As an expander hands them over: grouped by bucket, narrow.
        let handed = |pairs: &mut [[u64; 2]]| {
            pairs.sort_by_key(|&[key, _]| key >> low_bits);
            OwnedRequests::from_keyed(pairs, 0, low_bits).unwrap()
        };
        b.block_requesters(handed(&mut pairs[..1000]).view(), (base, lookup_chunk));
        // More than a slice at once: looked up on the pool.
        let mut many: Vec<[u64; 2]> = pairs[1000..]
            .iter()
            .cycle()
            .take(LOOKUP_SLICE + 7)
            .copied()
            .collect();
        b.block_requesters(handed(&mut many).view(), (base, lookup_chunk));
        let mut want = vec![false; size];
        for &[key, q] in &pairs {
            let s = ((key >> low_bits) - base) * lookup_chunk + (key & ((1 << low_bits) - 1));
            want[q as usize] |= bit(&b.can_block, s);
        }
        for (q, &w) in want.iter().enumerate() {
            assert_eq!(bit(&b.blocked, q as u64), w, "requester {q}");
            let decided = b
                .acc(GameKind::TwoPlayer, d, q as u64)
                .decide(GameKind::TwoPlayer, d);
            assert_eq!(decided, (!w).then(|| at(d)), "requester {q}");
        }
        assert!(want.iter().any(|&w| w) && want.iter().any(|&w| !w));
        // Marking clears a win at d + 1 for the pass after next alone.
        assert!(b.wins_cleared_by_marking(d + 1).is_none());
        assert!(b.wins_cleared_by_marking(d + 2).is_some());
    }
}
