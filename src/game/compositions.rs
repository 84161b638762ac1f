//! A dense perfect hash of bounded compositions: vectors `(x_0, ..., x_{k-1})`
//! with `0 <= x_i <= cap_i` and a fixed sum. Nim's heap sizes with a given
//! number of objects left and Connect Four's column heights with a given
//! number of pieces played are both such vectors.
//!
//! Order: lexicographic (x_0 most significant). With `ways[i][s]` the number of
//! ways parts `i..k` sum to `s`, the rank is
//! `sum_i sum_{v < x_i} ways[i + 1][rest_i - v]` where `rest_i` is what parts
//! `i..k` must still hold. The inner sum is a difference of prefix sums, so
//! ranking costs one subtraction per part.

use crate::hash::HashError;

/// Bounded compositions of every sum `0..=caps.iter().sum()`.
#[derive(Clone, Debug)]
pub(crate) struct Compositions {
    caps: Vec<u32>,
    total: u32,
    /// `ways[i * stride + s]`: ways parts `i..k` sum to `s` (row `k` is the empty tail).
    ways: Vec<u64>,
    /// `prefix[i * (stride + 1) + s]`: `sum_{t < s} ways[i][t]`.
    prefix: Vec<u64>,
    stride: usize,
}

impl Compositions {
    /// Vectors with `x_i <= caps[i]`; fails if some sum has more than 2^64 vectors.
    pub(crate) fn new(caps: &[u32]) -> Result<Compositions, HashError> {
        let k = caps.len();
        let total: u32 = caps.iter().sum();
        let stride = total as usize + 1;
        let mut ways = vec![0u64; (k + 1) * stride];
        ways[k * stride] = 1;
        let overflow = || HashError::Overflow {
            what: format!("compositions bounded by {caps:?}"),
        };
        for i in (0..k).rev() {
            for s in 0..stride {
                let mut sum: u64 = 0;
                for v in 0..=(caps[i] as usize).min(s) {
                    sum = sum
                        .checked_add(ways[(i + 1) * stride + s - v])
                        .ok_or_else(overflow)?;
                }
                ways[i * stride + s] = sum;
            }
        }
        let mut prefix = vec![0u64; (k + 1) * (stride + 1)];
        for i in 0..=k {
            for s in 0..stride {
                // A row's prefix sums may pass 2^64 even when every entry fits;
                // they wrap, and only differences that fit are ever taken, so
                // modular arithmetic gives them exactly.
                prefix[i * (stride + 1) + s + 1] =
                    prefix[i * (stride + 1) + s].wrapping_add(ways[i * stride + s]);
            }
        }
        Ok(Compositions {
            caps: caps.to_vec(),
            total,
            ways,
            prefix,
            stride,
        })
    }

    /// The largest sum.
    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// Number of vectors with sum `sum` (0 past the total).
    pub(crate) fn count(&self, sum: u32) -> u64 {
        if sum > self.total {
            0
        } else {
            self.ways[sum as usize]
        }
    }

    /// Rank of `parts` among the vectors with its sum (the caller knows the sum is `sum`).
    #[inline]
    pub(crate) fn rank(&self, parts: impl IntoIterator<Item = u32>, sum: u32) -> u64 {
        let mut rest = sum as usize;
        let mut r: u64 = 0;
        for (i, x) in parts.into_iter().enumerate() {
            let x = x as usize;
            // sum_{v < x} ways[i+1][rest - v] = prefix[i+1][rest+1] - prefix[i+1][rest-x+1]
            let row = (i + 1) * (self.stride + 1);
            r = r.wrapping_add(
                self.prefix[row + rest + 1].wrapping_sub(self.prefix[row + rest + 1 - x]),
            );
            rest -= x;
        }
        r
    }

    /// Writes the vector with rank `r` among those of sum `sum` into `out` (`caps.len()` long).
    #[inline]
    pub(crate) fn unrank(&self, sum: u32, mut r: u64, out: &mut [u32]) {
        let mut rest = sum as usize;
        for (i, slot) in out.iter_mut().enumerate() {
            let next = (i + 1) * self.stride;
            let mut x = 0usize;
            loop {
                let n = self.ways[next + rest - x];
                if r < n {
                    break;
                }
                r -= n;
                x += 1;
            }
            debug_assert!(x as u32 <= self.caps[i]);
            *slot = x as u32;
            rest -= x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vector under the caps, by brute force, grouped by sum, ranked in lexicographic order.
    #[test]
    fn matches_brute_force_order() {
        for caps in [
            vec![1u32, 3, 5, 7],
            vec![5, 5, 5, 5, 5],
            vec![2],
            vec![0, 3, 0],
            vec![],
        ] {
            let c = Compositions::new(&caps).unwrap();
            let total: u32 = caps.iter().sum();
            let mut by_sum: Vec<Vec<Vec<u32>>> = vec![Vec::new(); total as usize + 1];
            let mut v = vec![0u32; caps.len()];
            'outer: loop {
                by_sum[v.iter().sum::<u32>() as usize].push(v.clone());
                for i in (0..caps.len()).rev() {
                    if v[i] < caps[i] {
                        v[i] += 1;
                        continue 'outer;
                    }
                    v[i] = 0;
                }
                break;
            }
            for (s, list) in by_sum.iter().enumerate() {
                assert_eq!(
                    c.count(s as u32),
                    list.len() as u64,
                    "caps {caps:?} sum {s}"
                );
                for (r, vec) in list.iter().enumerate() {
                    assert_eq!(c.rank(vec.iter().copied(), s as u32), r as u64);
                    let mut out = vec![0u32; caps.len()];
                    c.unrank(s as u32, r as u64, &mut out);
                    assert_eq!(&out, vec);
                }
            }
        }
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(Compositions::new(&[1000; 40]).is_err());
    }
}
