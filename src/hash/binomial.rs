//! k-subsets of n cells, as bitmasks, in Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" path-counting order.
//!
//! A subset is read as a string of bits, cell 0 first; strings are ordered
//! with 1 before 0, so rank 0 sets the first k cells and the last rank sets
//! the last k cells (Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" example: 6 cells, 3 set, rank 0 = 111000,
//! rank 1 = 110100, ..., rank 19 = 000111).
//!
//! Reading cell `i` as the bit of value `2^(n-1-i)`, this is the descending
//! order of the masks' values, so with `p_1 < ... < p_k` the value-positions of
//! the set bits, the number of subsets *below* is Macaulay's combinatorial
//! number `sum_t C(p_t, t)` and the rank is `C(n, k) - 1` minus it. That sum
//! needs one table lookup per set bit and no division.

use super::tables::{binom, MAX_CELLS};
use super::HashError;

/// The binomial perfect hash of k-subsets of `n <= 64` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binomial {
    n: u32,
    k: u32,
    size: u64,
}

impl Binomial {
    /// Subsets of `k` of `n` cells; `n <= 64`, `k <= n`.
    ///
    /// Every such space fits a `u64` (C(64, 32) < 2^61), so the only errors
    /// are shapes.
    pub fn new(n: usize, k: usize) -> Result<Binomial, HashError> {
        let what = || format!("binomial({n}, {k})");
        if n > MAX_CELLS {
            return Err(HashError::Shape {
                what: what(),
                message: format!("{n} cells exceed the {MAX_CELLS} a u64 mask holds"),
            });
        }
        if k > n {
            return Err(HashError::Shape {
                what: what(),
                message: format!("{k} set cells do not fit in {n}"),
            });
        }
        let (n, k) = (n as u32, k as u32);
        Ok(Binomial {
            n,
            k,
            size: binom(n, k),
        })
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.n as usize
    }

    /// Number of set cells.
    pub fn ones(&self) -> usize {
        self.k as usize
    }

    /// Number of subsets, C(n, k).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Rank of `mask` (bit `i` = cell `i`), which must have exactly `k` bits
    /// set, all below bit `n`; any other mask gives an unspecified value
    /// (never a panic). [`Binomial::checked_rank`] validates first.
    #[inline]
    pub fn rank(&self, mask: u64) -> u64 {
        let top = self.n.wrapping_sub(1);
        let mut m = mask;
        let mut t = self.k;
        let mut below = 0u64;
        // Lowest cell = highest value-position = the t-th set bit from the top (t = k first).
        while m != 0 {
            let i = m.trailing_zeros();
            below = below.wrapping_add(binom(top.wrapping_sub(i), t));
            t = t.wrapping_sub(1);
            m &= m - 1;
        }
        self.size.wrapping_sub(1).wrapping_sub(below)
    }

    /// [`Binomial::rank`] after checking that `mask` belongs to the space.
    pub fn checked_rank(&self, mask: u64) -> Result<u64, HashError> {
        let outside = if self.n >= 64 { 0 } else { mask >> self.n };
        if outside != 0 || mask.count_ones() != self.k {
            return Err(HashError::Input {
                what: format!("binomial({}, {})", self.n, self.k),
                message: format!(
                    "mask {mask:#x} must have exactly {} bits set, all below bit {}",
                    self.k, self.n
                ),
            });
        }
        Ok(self.rank(mask))
    }

    /// The mask of rank `r`; `r` must be below [`Binomial::size`] (a larger
    /// `r` gives some mask of the space, never a panic).
    #[inline]
    pub fn unrank(&self, r: u64) -> u64 {
        // Walk the cells, choosing 1 while the rank falls among the subsets that
        // start with 1 (C(cells left - 1, ones left - 1) of them), else skip them.
        // Branch-free per cell, and the next cell's count is loaded for both
        // choices before this one is made, so the loop carries a compare and a
        // select instead of a table load.
        let n = self.n;
        let mut r = r.min(self.size.wrapping_sub(1));
        let mut left = self.k;
        let mut mask = 0u64;
        let mut i = 0u32;
        let mut with_one = binom(n.wrapping_sub(1), left.wrapping_sub(1));
        while left != 0 && left < n - i {
            let rest = n - 2 - i;
            let if_taken = binom(rest, left.wrapping_sub(2));
            let if_skipped = binom(rest, left - 1);
            let take = u64::from(r < with_one);
            mask |= take << i;
            r -= with_one & (take ^ 1).wrapping_neg();
            left -= take as u32;
            with_one = if take == 1 { if_taken } else { if_skipped };
            i += 1;
        }
        if left != 0 {
            // Only ones remain: the last `left` cells.
            mask |= (u64::MAX >> (64 - left)) << i;
        }
        mask
    }

    /// [`Binomial::unrank`] after checking `r < size()`.
    pub fn checked_unrank(&self, r: u64) -> Result<u64, HashError> {
        if r >= self.size {
            return Err(HashError::Range {
                what: format!("binomial({}, {})", self.n, self.k),
                rank: r,
                size: self.size,
            });
        }
        Ok(self.unrank(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straight transcription of the path counting: at each 0-cell add the
    /// number of completions that would have put a 1 there.
    fn reference_rank(n: u32, k: u32, mask: u64) -> u64 {
        let mut left = k;
        let mut r = 0;
        for i in 0..n {
            if mask >> i & 1 == 1 {
                left -= 1;
            } else if left > 0 {
                r += binom(n - 1 - i, left - 1);
            }
        }
        r
    }

    #[test]
    fn rank_matches_the_path_counting_definition() {
        for n in 0..=12u32 {
            for mask in 0..1u64 << n {
                let k = mask.count_ones();
                let b = Binomial::new(n as usize, k as usize).unwrap();
                let r = b.rank(mask);
                assert_eq!(r, reference_rank(n, k, mask), "n={n} mask={mask:b}");
                assert_eq!(b.unrank(r), mask);
            }
        }
    }

    #[test]
    fn shapes() {
        assert!(matches!(Binomial::new(65, 1), Err(HashError::Shape { .. })));
        assert!(matches!(Binomial::new(5, 6), Err(HashError::Shape { .. })));
        assert_eq!(Binomial::new(64, 32).unwrap().size(), 1832624140942590534);
        assert_eq!(Binomial::new(0, 0).unwrap().size(), 1);
    }
}
