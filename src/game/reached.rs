//! Values of a partition solved only where the forward search reached
//! ([`Forward::Layer`](super::Forward::Layer)), kept compact: the reached bits
//! and one value byte per reached index, in index order. An index's value is
//! found by ranking it among the reached ones: a directory gives the reached
//! count before every 512-index block (one 64-byte cache line of bits), and a
//! popcount of at most seven words does the rest.
//!
//! A build holds its layered partitions this way, so that a partition whose
//! index is mostly unreachable costs about a bit per index and a byte per
//! reached position, in host memory and on a device, rather than a byte per
//! index.

use rayon::prelude::*;

/// Words of reached bits per directory entry: 512 indices, one cache line.
pub const WORDS_PER_BLOCK: usize = 8;

/// A compact partition, borrowed: what kernels and solvers read.
#[derive(Clone, Copy, Debug)]
pub struct ReachedView<'a> {
    /// One bit per index, 64 to a word, lowest bit first.
    pub bits: &'a [u64],
    /// `block_ranks[b]`: the reached indices below `512 b`, for every block
    /// of `WORDS_PER_BLOCK` words and one past the last (the total).
    pub block_ranks: &'a [u64],
    /// The reached indices' values, in index order.
    pub values: &'a [u8],
}

impl ReachedView<'_> {
    /// Where index `r`'s value lies in `values`, if `r` was reached.
    #[inline]
    pub fn slot(&self, r: u64) -> Option<usize> {
        let w = (r / 64) as usize;
        let word = *self.bits.get(w)?;
        let bit = 1u64 << (r % 64);
        if word & bit == 0 {
            return None;
        }
        Some(self.reached_before_word(w) + (word & (bit - 1)).count_ones() as usize)
    }

    /// Reached indices in the words before word `w` (all of them past the end).
    fn reached_before_word(&self, w: usize) -> usize {
        if w >= self.bits.len() {
            return self.values.len();
        }
        let block = w / WORDS_PER_BLOCK;
        let before: u64 = self.bits[block * WORDS_PER_BLOCK..w]
            .iter()
            .map(|x| u64::from(x.count_ones()))
            .sum();
        (self.block_ranks[block] + before) as usize
    }

    /// Index `r`'s value; 0 (not reached) where the search did not get.
    #[inline]
    pub fn get(&self, r: u64) -> u8 {
        self.slot(r).map_or(0, |s| self.values[s])
    }

    /// Reached indices.
    pub fn reached(&self) -> u64 {
        self.values.len() as u64
    }

    /// The indices `offset .. offset + n` (`offset` a multiple of 64) as a
    /// bitmap of `ceil(n / 8)` bytes, lowest bit first, and the values of the
    /// set bits: appended to `out`, the bitmap first. The values are returned.
    pub fn sparse_into(&self, offset: u64, n: usize, out: &mut Vec<u8>) -> &[u8] {
        debug_assert_eq!(offset % 64, 0);
        let first = (offset / 64) as usize;
        let words = n.div_ceil(64);
        let mut bytes = n.div_ceil(8);
        let mut ones = 0usize;
        for w in 0..words {
            let mut word = self.bits.get(first + w).copied().unwrap_or(0);
            if (w + 1) * 64 > n {
                word &= (1u64 << (n % 64)) - 1;
            }
            ones += word.count_ones() as usize;
            let take = bytes.min(8);
            out.extend_from_slice(&word.to_le_bytes()[..take]);
            bytes -= take;
        }
        let start = self.reached_before_word(first);
        let values = &self.values[start..start + ones];
        out.extend_from_slice(values);
        values
    }

    /// One byte per index for a partition of `len` indices, 0 where not
    /// reached: for readers that need the whole array.
    pub fn to_full(&self, len: u64) -> Vec<u8> {
        let mut full = vec![0u8; len as usize];
        // Pieces of whole directory blocks, each expanded on its own.
        full.par_chunks_mut(64 * WORDS_PER_BLOCK * 1024)
            .enumerate()
            .for_each(|(i, piece)| {
                self.expand_into((i * 64 * WORDS_PER_BLOCK * 1024) as u64, piece)
            });
        full
    }

    /// The values of indices `offset .. offset + out.len()`, one byte each,
    /// 0 where not reached (how the partition's file stores them).
    /// `offset` must be a multiple of 64.
    pub fn expand_into(&self, offset: u64, out: &mut [u8]) {
        debug_assert_eq!(offset % 64, 0);
        let first_word = (offset / 64) as usize;
        let mut next = self.reached_before_word(first_word);
        for (i, chunk) in out.chunks_mut(64).enumerate() {
            chunk.fill(0);
            let mut word = self.bits.get(first_word + i).copied().unwrap_or(0);
            while word != 0 {
                let b = word.trailing_zeros() as usize;
                word &= word - 1;
                if let Some(v) = chunk.get_mut(b) {
                    *v = self.values[next];
                }
                next += 1;
            }
        }
    }
}

/// A solved partition's values as a build holds them: one byte per index, or
/// compact.
#[derive(Clone, Copy, Debug)]
pub enum PartitionValues<'a> {
    /// One byte per index.
    Full(&'a [u8]),
    /// Only where reached.
    Compact(ReachedView<'a>),
}

impl PartitionValues<'_> {
    /// Index `r`'s value byte (0 where not reached or out of range).
    #[inline]
    pub fn get(&self, r: u64) -> u8 {
        match self {
            PartitionValues::Full(v) => v.get(r as usize).copied().unwrap_or(0),
            PartitionValues::Compact(c) => c.get(r),
        }
    }
}

/// A compact partition, owned (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct ReachedValues {
    bits: Vec<u64>,
    block_ranks: Vec<u64>,
    values: Vec<u8>,
}

impl ReachedValues {
    /// The reached bits with their directory, before any value is known
    /// (`values` all 0, one per reached index): what a solver fills.
    pub fn unsolved(bits: Vec<u64>) -> ReachedValues {
        let block_ranks = block_ranks(&bits);
        let reached = *block_ranks.last().expect("one entry at least") as usize;
        ReachedValues {
            bits,
            block_ranks,
            values: vec![0; reached],
        }
    }

    /// `values` (one per reached index, in index order) with their bits.
    /// `None` when the counts disagree.
    pub fn from_compact(bits: Vec<u64>, values: Vec<u8>) -> Option<ReachedValues> {
        let block_ranks = block_ranks(&bits);
        (*block_ranks.last()? == values.len() as u64).then_some(ReachedValues {
            bits,
            block_ranks,
            values,
        })
    }

    /// The reached indices' values taken from `full` (one byte per index).
    pub fn from_full(bits: Vec<u64>, full: &[u8]) -> ReachedValues {
        let mut out = ReachedValues::unsolved(bits);
        let blocks: Vec<(usize, &mut [u8])> = {
            // Each directory block's values are a contiguous run of `values`.
            let mut rest = out.values.as_mut_slice();
            let mut runs = Vec::with_capacity(out.block_ranks.len());
            for (b, pair) in out.block_ranks.windows(2).enumerate() {
                let (run, tail) = rest.split_at_mut((pair[1] - pair[0]) as usize);
                runs.push((b, run));
                rest = tail;
            }
            runs
        };
        let bits = &out.bits;
        blocks.into_par_iter().for_each(|(b, run)| {
            let mut next = 0;
            for (i, &word) in bits
                .iter()
                .enumerate()
                .skip(b * WORDS_PER_BLOCK)
                .take(WORDS_PER_BLOCK)
            {
                let mut word = word;
                while word != 0 {
                    let bit = word.trailing_zeros() as usize;
                    word &= word - 1;
                    run[next] = full.get(i * 64 + bit).copied().unwrap_or(0);
                    next += 1;
                }
            }
        });
        out
    }

    /// Borrowed.
    pub fn view(&self) -> ReachedView<'_> {
        ReachedView {
            bits: &self.bits,
            block_ranks: &self.block_ranks,
            values: &self.values,
        }
    }

    /// The values, one per reached index, for a solver to fill.
    pub fn values_mut(&mut self) -> &mut [u8] {
        &mut self.values
    }

    /// Reached indices.
    pub fn reached(&self) -> u64 {
        self.values.len() as u64
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> u64 {
        (self.bits.len() * 8 + self.block_ranks.len() * 8 + self.values.len()) as u64
    }
}

/// The directory of `bits`: reached indices before each block of
/// [`WORDS_PER_BLOCK`] words, and the total.
pub fn block_ranks(bits: &[u64]) -> Vec<u64> {
    let counts: Vec<u64> = bits
        .par_chunks(WORDS_PER_BLOCK)
        .map(|c| c.iter().map(|w| u64::from(w.count_ones())).sum())
        .collect();
    let mut ranks = Vec::with_capacity(counts.len() + 1);
    let mut total = 0;
    ranks.push(0);
    for c in counts {
        total += c;
        ranks.push(total);
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_expand_and_compact_agree_with_a_plain_scan() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let len = 64 * 8 * 5 + 37;
        let mut bits: Vec<u64> = (0..(len as usize).div_ceil(64))
            .map(|i| if i == 3 { 0 } else { next() & next() })
            .collect();
        // No bit past the partition's end.
        *bits.last_mut().unwrap() &= (1 << (len % 64)) - 1;
        let full: Vec<u8> = (0..len)
            .map(|i| {
                if bits[(i / 64) as usize] >> (i % 64) & 1 == 1 {
                    1 + (next() % 200) as u8
                } else {
                    0
                }
            })
            .collect();
        let compact = ReachedValues::from_full(bits.clone(), &full);
        let view = compact.view();
        assert_eq!(
            view.reached(),
            full.iter().filter(|&&v| v != 0).count() as u64
        );
        for (r, &v) in full.iter().enumerate() {
            assert_eq!(view.get(r as u64), v, "index {r}");
        }
        let mut out = vec![9u8; 700];
        view.expand_into(64 * 4, &mut out);
        let end = (64 * 4 + 700).min(len as usize);
        assert_eq!(&out[..end - 64 * 4], &full[64 * 4..end]);
        assert!(out[end - 64 * 4..].iter().all(|&b| b == 0));
        let again = ReachedValues::from_compact(bits, compact.view().values.to_vec()).unwrap();
        assert_eq!(again.view().values, compact.view().values);
    }
}
