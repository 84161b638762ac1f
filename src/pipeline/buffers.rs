//! Large buffers kept between chunks and steps: a chunk's bytes, a run
//! writer's records.
//!
//! A chunk's values, flags and summaries are megabytes, and so is a write
//! buffer. Fresh ones came from the system and went back to it every chunk
//! of every pass (every step, for write buffers), and the page faults of
//! filling them (contended by the reader threads) and the unmapping (a TLB
//! shootdown on every core) cost more than the reads into them.

use bytemuck::Zeroable;
use std::sync::Mutex;

/// What a buffer from [`SpareBuffers::take`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Zeros: the caller reads only parts of it in.
    Zeroed,
    /// Anything: the caller writes all of it before reading it.
    Overwritten,
}

/// Buffers smaller than this are left to the allocator, which keeps them
/// without the system's help.
const MIN_BYTES: usize = 64 << 10;

/// Spare buffers of `T`, at most `most` bytes of them.
pub(crate) struct SpareBuffers<T = u8> {
    spare: Mutex<Vec<Vec<T>>>,
    most: usize,
}

impl<T: Copy + Zeroable> SpareBuffers<T> {
    /// None yet; never more than `most` bytes kept.
    pub(crate) fn new(most: usize) -> SpareBuffers<T> {
        SpareBuffers {
            spare: Mutex::new(Vec::new()),
            most,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<T>>> {
        self.spare.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bytes(buf: &Vec<T>) -> usize {
        buf.capacity() * std::mem::size_of::<T>()
    }

    /// The smallest spare with room for `len` items, taken out; none for
    /// a buffer below [`MIN_BYTES`], which the allocator serves: a caller
    /// that lets a small buffer go (a chunk's distance list, a few hundred
    /// bytes) would otherwise take a chunk's megabytes with it, and the
    /// next chunk's read would fault them in again.
    fn smallest_holding(&self, len: usize) -> Option<Vec<T>> {
        if len * std::mem::size_of::<T>() < MIN_BYTES {
            return None;
        }
        let mut spare = self.lock();
        let best = spare
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        best.map(|i| spare.swap_remove(i))
    }

    /// An empty buffer with room for `capacity` items, a spare where one
    /// has it.
    pub(crate) fn take_empty(&self, capacity: usize) -> Vec<T> {
        match self.smallest_holding(capacity) {
            Some(mut buf) => {
                buf.clear();
                buf
            }
            None => Vec::with_capacity(capacity),
        }
    }

    /// A buffer of `len` items: the smallest spare that holds them (a
    /// flags buffer is not spent on a value's byte a position),
    /// zeroed where `fill` asks; a fresh one where none does.
    pub(crate) fn take(&self, len: usize, fill: Fill) -> Vec<T> {
        match self.smallest_holding(len) {
            Some(mut buf) => {
                if fill == Fill::Zeroed {
                    buf.clear();
                }
                // Items past the old length are zeroed either way.
                buf.resize(len, T::zeroed());
                buf
            }
            None => vec![T::zeroed(); len],
        }
    }

    /// Keeps `buf` for [`Self::take`] where it is large enough to be worth
    /// it and the spares stay within their bound; lets it go otherwise.
    pub(crate) fn keep(&self, buf: Vec<T>) {
        if Self::bytes(&buf) < MIN_BYTES {
            return;
        }
        let mut spare = self.lock();
        let held: usize = spare.iter().map(Self::bytes).sum();
        if held + Self::bytes(&buf) <= self.most {
            spare.push(buf);
        }
    }

    /// Bytes kept.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().iter().map(Self::bytes).sum()
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
        // A small buffer is the allocator's: no spare goes with it.
        let small = pool.take(MIN_BYTES / 2, Fill::Overwritten);
        assert_eq!(small.len(), MIN_BYTES / 2);
        assert_eq!(pool.held(), 4 * MIN_BYTES);
        drop(small);
        // The smaller one fits: it comes back, its bytes as they were.
        let b = pool.take(MIN_BYTES, Fill::Overwritten);
        assert!(b.capacity() < 2 * MIN_BYTES && b.iter().all(|&x| x == 9));
        assert_eq!(pool.held(), 3 * MIN_BYTES);
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
