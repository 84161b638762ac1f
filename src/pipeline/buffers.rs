//! Chunk-sized byte buffers kept between chunks and steps.
//!
//! A chunk's values, flags and summaries are megabytes. Fresh ones came
//! from the system and went back to it every chunk of every pass, and the
//! page faults of filling them (contended by the reader threads) and the
//! unmapping (a TLB shootdown on every core) cost more than the reads into
//! them.

use std::sync::Mutex;

/// What a buffer from [`SpareBuffers::take`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fill {
    /// Zeros: the caller reads only parts of it in.
    Zeroed,
    /// Anything: the caller writes all of it before reading it.
    Overwritten,
}

/// Buffers smaller than this are left to the allocator, which keeps them
/// without the system's help.
const MIN_BYTES: usize = 64 << 10;

/// Spare buffers, at most `most` bytes of them.
pub(super) struct SpareBuffers {
    spare: Mutex<Vec<Vec<u8>>>,
    most: usize,
}

impl SpareBuffers {
    /// None yet; never more than `most` bytes kept.
    pub(super) fn new(most: usize) -> SpareBuffers {
        SpareBuffers {
            spare: Mutex::new(Vec::new()),
            most,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.spare.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer of `len` bytes: the smallest spare that holds them (a
    /// flags buffer is not spent on a summary's three bytes a position),
    /// zeroed where `fill` asks; a fresh one where none does.
    pub(super) fn take(&self, len: usize, fill: Fill) -> Vec<u8> {
        let reused = {
            let mut spare = self.lock();
            let best = spare
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= len)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i);
            best.map(|i| spare.swap_remove(i))
        };
        match reused {
            Some(mut buf) => {
                if fill == Fill::Zeroed {
                    buf.clear();
                }
                // Bytes past the old length are zeroed either way.
                buf.resize(len, 0);
                buf
            }
            None => vec![0u8; len],
        }
    }

    /// Keeps `buf` for [`Self::take`] where it is large enough to be worth
    /// it and the spares stay within their bound; lets it go otherwise.
    pub(super) fn keep(&self, buf: Vec<u8>) {
        if buf.capacity() < MIN_BYTES {
            return;
        }
        let mut spare = self.lock();
        let held: usize = spare.iter().map(Vec::capacity).sum();
        if held + buf.capacity() <= self.most {
            spare.push(buf);
        }
    }

    /// Bytes kept.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.lock().iter().map(Vec::capacity).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_buffer_comes_back_zeroed_or_as_it_was_and_the_smallest_that_fits() {
        let pool = SpareBuffers::new(1 << 30);
        pool.keep(vec![7u8; 3 * MIN_BYTES]);
        pool.keep(vec![9u8; MIN_BYTES]);
        // The smaller one fits: it comes back, its bytes as they were.
        let b = pool.take(MIN_BYTES / 2, Fill::Overwritten);
        assert!(b.capacity() < 2 * MIN_BYTES && b.iter().all(|&x| x == 9));
        pool.keep(b);
        // Zeroed: every byte, though the buffer held sevens.
        let z = pool.take(2 * MIN_BYTES, Fill::Zeroed);
        assert!(z.capacity() >= 3 * MIN_BYTES);
        assert_eq!(z.len(), 2 * MIN_BYTES);
        assert!(z.iter().all(|&x| x == 0));
        // Longer than what it held: the bytes past it are zeros.
        pool.keep(z);
        let mut grown = pool.take(3 * MIN_BYTES, Fill::Overwritten);
        assert_eq!(grown.len(), 3 * MIN_BYTES);
        assert!(grown[2 * MIN_BYTES..].iter().all(|&x| x == 0));
        grown.fill(5);
        pool.keep(grown);
        // None fits: a fresh one, zeroed.
        let fresh = pool.take(4 * MIN_BYTES, Fill::Overwritten);
        assert!(fresh.iter().all(|&x| x == 0));
    }

    #[test]
    fn spares_stay_within_their_bound_and_small_buffers_are_not_kept() {
        let pool = SpareBuffers::new(3 * MIN_BYTES);
        pool.keep(vec![0u8; MIN_BYTES - 1]);
        assert_eq!(pool.held(), 0);
        pool.keep(Vec::with_capacity(2 * MIN_BYTES));
        pool.keep(Vec::with_capacity(2 * MIN_BYTES));
        assert_eq!(pool.held(), 2 * MIN_BYTES);
        pool.keep(Vec::with_capacity(MIN_BYTES));
        assert_eq!(pool.held(), 3 * MIN_BYTES);
    }
}
