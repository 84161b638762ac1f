//! A fixed-size bit vector that many threads may set at once.

use std::sync::atomic::{AtomicU64, Ordering};

/// One bit per index; `set` is safe to call from many threads.
pub struct AtomicBitSet {
    words: Vec<AtomicU64>,
    len: u64,
}

impl AtomicBitSet {
    /// `len` bits, all clear.
    pub fn new(len: u64) -> AtomicBitSet {
        // On all cores: a forward search allocates a gigabyte or more of sets
        // up front, and zeroing them on one core took a second.
        use rayon::prelude::*;
        let words = (0..len.div_ceil(64))
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        AtomicBitSet { words, len }
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if there are no bits at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads bit `i`.
    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
    }

    /// Sets bit `i`; true if it was clear before (this caller set it).
    pub fn set(&self, i: u64) -> bool {
        let bit = 1u64 << (i % 64);
        self.words[(i / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// Number of set bits.
    pub fn count(&self) -> u64 {
        use rayon::prelude::*;
        self.words
            .par_iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// The word holding bits `64 * w .. 64 * w + 64`.
    pub fn word(&self, w: usize) -> u64 {
        self.words[w].load(Ordering::Relaxed)
    }

    /// Number of 64-bit words.
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// The words themselves, for a device's search to set bits in
    /// ([`crate::game::ForwardTargets`]).
    pub fn atomic_words(&self) -> &[AtomicU64] {
        &self.words
    }

    /// The bits as plain words (64 to a word, lowest bit first), once no
    /// thread sets them any more.
    pub fn into_words(self) -> Vec<u64> {
        self.words.into_iter().map(AtomicU64::into_inner).collect()
    }

    /// Clears every bit.
    pub fn clear(&mut self) {
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
    }
}
