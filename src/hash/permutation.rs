//! Permutations of `n <= 20` items (`0..n`, as bytes), in two orders.
//!
//! # Lexicographic order
//!
//! Permutations ordered as strings (identity first, reversal last). The rank
//! is `sum_i d_i (n-1-i)!` with the inverted index `d_i` = the number of
//! later items smaller than `perm[i]` (Edelkamp and Sulewski, "Parallel State Space Search on the GPU", Definition 8), and the
//! parity is `sum_i d_i mod 2`. Ranks `2h` and `2h+1` differ by swapping the
//! last two items, so they have opposite parities and `rank >> 1` indexes the
//! permutations of one parity densely (`lex_half_*`).
//!
//! # Myrvold–Ruskey order
//!
//! Myrvold and Ruskey's `unrank1`: starting from the identity, for
//! `k = n-1, ..., 1` swap `perm[k]` with `perm[r mod (k+1)]` and set
//! `r = r div (k+1)`; `rank1` undoes it. Every swap of two distinct places
//! flips the parity, so it is counted on the fly (Edelkamp and Sulewski, "Parallel State Space Search on the GPU", Algorithm 1 and
//! Theorem 3). Ranks `r` and `r + n!/2` differ only by swapping `perm[0]`
//! and `perm[1]` (Theorem 4), so `r mod n!/2` indexes the permutations of one
//! parity densely (`mr_half_*`): the index for parity-preserving puzzles such
//! as sliding tiles.
//!
//! Neither direction allocates or divides: division by the small moduli uses
//! the reciprocal table, and the lexicographic digits are kept in a `u64` of
//! 4-bit fields (up to 16 items) or a `u128` of 5-bit fields.

use super::tables::{divmod_small, factorial, MAX_PERMUTATION};
use super::HashError;

/// The parity of a permutation: of its number of inversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Parity {
    /// An even number of inversions (the identity is even).
    Even,
    /// An odd number of inversions.
    Odd,
}

impl Parity {
    fn from_bit(odd: u32) -> Parity {
        if odd & 1 == 0 {
            Parity::Even
        } else {
            Parity::Odd
        }
    }
}

/// Bits of one field of the packed digit words (values up to 20 fit).
const FIELD: u32 = 5;

/// A 1 in each of the 5-bit fields `0..=MAX_PERMUTATION`.
const ONES: u128 = {
    let mut x = 0u128;
    let mut v = 0;
    while v <= MAX_PERMUTATION {
        x |= 1 << (FIELD as usize * v);
        v += 1;
    }
    x
};

/// The fields holding `0, 1, 2, ...`: the items in increasing order.
const IDENTITY_FIELDS: u128 = {
    let mut x = 0u128;
    let mut v = 0;
    while v <= MAX_PERMUTATION {
        x |= (v as u128) << (FIELD as usize * v);
        v += 1;
    }
    x
};

/// A 1 in each 4-bit field of a `u64`.
const ONES_NIBBLES: u64 = 0x1111_1111_1111_1111;

/// The 4-bit fields holding `0, 1, ..., 15`.
const IDENTITY_NIBBLES: u64 = 0xFEDC_BA98_7654_3210;

const IDENTITY: [u8; 32] = {
    let mut a = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        a[i] = i as u8;
        i += 1;
    }
    a
};

/// Lexicographic rank of `perm` (a permutation of `0..perm.len()`,
/// `perm.len() <= 20`) and its parity. Other input: unspecified, no panic.
#[inline]
pub fn lex_rank_parity(perm: &[u8]) -> (u64, Parity) {
    let n = perm.len();
    if n <= 16 {
        return lex_rank_parity_16(perm);
    }
    // Field v holds how many still-unplaced items are below v: v minus the
    // smaller items already placed. It never goes below 0 for a permutation.
    let mut below = IDENTITY_FIELDS;
    let mut r = 0u64;
    let mut sum = 0u32;
    for (i, &v) in perm.iter().enumerate() {
        let v = u32::from(v) % (MAX_PERMUTATION as u32 + 1);
        let d = ((below >> (FIELD * v)) & 31) as u64;
        // Horner: r = (...(d_0 (n-1) + d_1)(n-2) + ...) = sum d_i (n-1-i)!.
        r = r.wrapping_mul((n - i) as u64).wrapping_add(d);
        sum = sum.wrapping_add(d as u32);
        below = below.wrapping_sub(ONES.wrapping_shl(FIELD * (v + 1)));
    }
    (r, Parity::from_bit(sum))
}

/// [`lex_rank_parity`] for up to 16 items, in one `u64` of 4-bit fields.
#[inline(always)]
fn lex_rank_parity_16(perm: &[u8]) -> (u64, Parity) {
    let n = perm.len();
    let mut below = IDENTITY_NIBBLES;
    let mut r = 0u64;
    let mut sum = 0u32;
    for (i, &v) in perm.iter().enumerate() {
        let shift = 4 * u32::from(v & 15);
        let d = (below >> shift) & 15;
        r = r.wrapping_mul((n - i) as u64).wrapping_add(d);
        sum = sum.wrapping_add(d as u32);
        // Two shifts: the fields above v, without a shift by 64 when v = 15.
        below = below.wrapping_sub((ONES_NIBBLES << shift) << 4);
    }
    (r, Parity::from_bit(sum))
}

/// Lexicographic rank of `perm`, a permutation of `0..perm.len()` with
/// `perm.len() <= 20` (other input: unspecified, no panic).
#[inline]
pub fn lex_rank(perm: &[u8]) -> u64 {
    lex_rank_parity(perm).0
}

/// Writes the permutation of `0..n` with lexicographic rank `r` into
/// `out[..n]` and returns its parity. Needs `n <= 20`, `r < n!`,
/// `out.len() >= n` (otherwise unspecified, no panic).
#[inline]
pub fn lex_unrank(r: u64, n: usize, out: &mut [u8]) -> Parity {
    let n = n.min(MAX_PERMUTATION);
    // Factorial-base digits, least significant first: d_{n-1} = 0, d_{n-2} = r mod 2, ...
    let mut digits = [0u8; MAX_PERMUTATION];
    let mut r = r;
    for base in 2..=n {
        let (q, d) = divmod_small(r, base);
        digits[n - base] = d as u8;
        r = q;
    }
    if n <= 16 {
        // Up to 16 items: the unused ones fit one u64 of 4-bit fields.
        let mut unused = IDENTITY_NIBBLES;
        let mut sum = 0u32;
        for (i, slot) in out.iter_mut().take(n).enumerate() {
            let d = u32::from(digits[i] & 15);
            sum += d;
            let shift = 4 * d;
            *slot = ((unused >> shift) & 15) as u8;
            let low = unused & ((1u64 << shift) - 1);
            let high = ((unused >> shift) >> 4) << shift;
            unused = low | high;
        }
        return Parity::from_bit(sum);
    }
    let mut unused = IDENTITY_FIELDS;
    let mut sum = 0u32;
    for (i, slot) in out.iter_mut().take(n).enumerate() {
        let d = u32::from(digits[i]) % (MAX_PERMUTATION as u32 + 1);
        sum += d;
        *slot = ((unused >> (FIELD * d)) & 31) as u8;
        // Remove field d: keep the fields below it, shift the ones above down one.
        let low = unused & ((1u128 << (FIELD * d)) - 1);
        let high = (unused >> (FIELD * (d + 1))) << (FIELD * d);
        unused = low | high;
    }
    Parity::from_bit(sum)
}

/// Parity of `perm`, a permutation of `0..perm.len()` (`len <= 20`).
#[inline]
pub fn parity(perm: &[u8]) -> Parity {
    lex_rank_parity(perm).1
}

/// Myrvold–Ruskey rank for up to 16 items, with the permutation and its
/// inverse in registers (`u64`s of 4-bit fields) rather than arrays.
#[inline(always)]
fn mr_rank_16(perm: &[u8]) -> (u64, Parity) {
    let n = perm.len();
    let (mut p, mut inv) = (0u64, 0u64);
    for (i, &v) in perm.iter().enumerate() {
        p |= u64::from(v & 15) << (4 * i);
        inv |= (i as u64) << (4 * u32::from(v & 15));
    }
    let mut r = 0u64;
    let mut weight = 1u64;
    let mut swaps = 0u32;
    for k in (1..n as u64).rev() {
        let s = (p >> (4 * k)) & 15;
        let j = (inv >> (4 * k)) & 15;
        // p[j] was k and becomes s; inv[s] was k and becomes j.
        p ^= (k ^ s) << (4 * j);
        inv ^= (k ^ j) << (4 * s);
        swaps += u32::from(s != k);
        r = r.wrapping_add(s.wrapping_mul(weight));
        weight = weight.wrapping_mul(k + 1);
    }
    (r, Parity::from_bit(swaps))
}

/// Myrvold–Ruskey unrank for up to 16 items, the permutation in a register.
#[inline(always)]
fn mr_unrank_16(r: u64, n: usize, out: &mut [u8]) -> Parity {
    let mut p = IDENTITY_NIBBLES;
    let mut r = r;
    let mut swaps = 0u32;
    for k in (1..n).rev() {
        let (q, j) = divmod_small(r, k + 1);
        let j = j & 15;
        let k4 = 4 * k as u64;
        let x = ((p >> k4) ^ (p >> (4 * j))) & 15;
        p ^= (x << k4) | (x << (4 * j));
        swaps += u32::from(j != k as u64);
        r = q;
    }
    for (i, slot) in out.iter_mut().take(n).enumerate() {
        *slot = ((p >> (4 * i)) & 15) as u8;
    }
    Parity::from_bit(swaps)
}

/// The permutation hashes for one size `n <= 20`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permutation {
    n: usize,
    size: u64,
}

impl Permutation {
    /// Permutations of `n` items; `n <= 20` since 21! > 2^64.
    pub fn new(n: usize) -> Result<Permutation, HashError> {
        if n > MAX_PERMUTATION {
            return Err(HashError::Overflow {
                what: format!("permutation({n}): {n}! (max n is {MAX_PERMUTATION})"),
            });
        }
        Ok(Permutation {
            n,
            size: factorial(n),
        })
    }

    /// Number of items `n`.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for the permutation of no items.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of permutations, `n!`.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of permutations of one parity, `n!/2`, for `n >= 2`; 0 for
    /// `n < 2`, where the only permutation is even and has no halved index.
    pub fn half_size(&self) -> u64 {
        if self.n < 2 {
            0
        } else {
            self.size / 2
        }
    }

    /// Checks that `perm` is a permutation of `0..n`.
    pub fn check(&self, perm: &[u8]) -> Result<(), HashError> {
        let bad = |message: String| HashError::Input {
            what: format!("permutation({})", self.n),
            message,
        };
        if perm.len() != self.n {
            return Err(bad(format!(
                "{} items given, expected {}",
                perm.len(),
                self.n
            )));
        }
        let mut seen = 0u32;
        for (i, &v) in perm.iter().enumerate() {
            if usize::from(v) >= self.n || seen >> v & 1 == 1 {
                return Err(bad(format!(
                    "item {i} is {v}: items must be 0..{} each once",
                    self.n
                )));
            }
            seen |= 1 << v;
        }
        Ok(())
    }

    /// Lexicographic rank (see the module's order).
    #[inline]
    pub fn lex_rank(&self, perm: &[u8]) -> u64 {
        lex_rank(perm)
    }

    /// Writes the permutation of lexicographic rank `r` into `out[..n]` and
    /// returns its parity.
    #[inline]
    pub fn lex_unrank(&self, r: u64, out: &mut [u8]) -> Parity {
        lex_unrank(r, self.n, out)
    }

    /// Index of `perm` among the permutations of its parity, in
    /// lexicographic order: `lex_rank >> 1`, in `0..n!/2`.
    #[inline]
    pub fn lex_half_rank(&self, perm: &[u8]) -> u64 {
        lex_rank(perm) >> 1
    }

    /// Writes the permutation of parity `parity` with halved lexicographic
    /// index `h` (`h < n!/2`, `n >= 2`) into `out[..n]`.
    #[inline]
    pub fn lex_half_unrank(&self, h: u64, parity: Parity, out: &mut [u8]) {
        let got = lex_unrank(h.wrapping_mul(2), self.n, out);
        if got != parity && self.n >= 2 && out.len() >= self.n {
            out.swap(self.n - 2, self.n - 1);
        }
    }

    /// Myrvold–Ruskey rank of `perm` and its parity, both computed in one pass.
    #[inline]
    pub fn mr_rank(&self, perm: &[u8]) -> (u64, Parity) {
        let n = perm.len().min(self.n);
        if n <= 16 {
            return mr_rank_16(&perm[..n]);
        }
        let mut p = [0u8; 32];
        let mut inv = [0u8; 32];
        for (i, &v) in perm.iter().take(n).enumerate() {
            p[i] = v & 31;
            inv[usize::from(v & 31)] = i as u8;
        }
        let mut r = 0u64;
        let mut weight = 1u64;
        let mut swaps = 0u32;
        for k in (1..n).rev() {
            // Undo unrank1's swap of positions k and r mod (k+1): item k sits at inv[k].
            let s = p[k];
            let j = usize::from(inv[k] & 31);
            p[j] = s;
            inv[usize::from(s & 31)] = j as u8;
            swaps += u32::from(usize::from(s) != k);
            r = r.wrapping_add(u64::from(s).wrapping_mul(weight));
            weight = weight.wrapping_mul(k as u64 + 1);
        }
        (r, Parity::from_bit(swaps))
    }

    /// Writes the permutation of Myrvold–Ruskey rank `r` (`r < n!`) into
    /// `out[..n]` and returns its parity.
    #[inline]
    pub fn mr_unrank(&self, r: u64, out: &mut [u8]) -> Parity {
        let n = self.n;
        if n <= 16 {
            return mr_unrank_16(r, n, out);
        }
        let mut p = IDENTITY;
        let mut r = r;
        let mut swaps = 0u32;
        for k in (1..n).rev() {
            let (q, j) = divmod_small(r, k + 1);
            let j = (j as usize) & 31;
            p.swap(k, j);
            swaps += u32::from(j != k);
            r = q;
        }
        for (slot, &v) in out.iter_mut().zip(&p[..n]) {
            *slot = v;
        }
        Parity::from_bit(swaps)
    }

    /// Index of `perm` among the permutations of its parity, in
    /// Myrvold–Ruskey order: `mr_rank mod n!/2`, in `0..n!/2`.
    #[inline]
    pub fn mr_half_rank(&self, perm: &[u8]) -> u64 {
        let (r, _) = self.mr_rank(perm);
        let half = self.half_size();
        if r >= half {
            r.wrapping_sub(half)
        } else {
            r
        }
    }

    /// Writes the permutation of parity `parity` with halved Myrvold–Ruskey
    /// index `h` (`h < n!/2`, `n >= 2`) into `out[..n]`: `mr_unrank(h)`, or
    /// `mr_unrank(h + n!/2)` (the same with items 0 and 1 swapped).
    #[inline]
    pub fn mr_half_unrank(&self, h: u64, parity: Parity, out: &mut [u8]) {
        let got = self.mr_unrank(h, out);
        if got != parity && self.n >= 2 && out.len() >= 2 {
            out.swap(0, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_items_in_both_orders() {
        let p = Permutation::new(3).unwrap();
        let lex: Vec<[u8; 3]> = (0..6)
            .map(|r| {
                let mut out = [0u8; 3];
                p.lex_unrank(r, &mut out);
                out
            })
            .collect();
        assert_eq!(
            lex,
            [
                [0, 1, 2],
                [0, 2, 1],
                [1, 0, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0]
            ]
        );
        // unrank1 by hand: r=0: swap(2,0) -> 2 1 0, swap(1,0) -> 1 2 0.
        let mut out = [0u8; 3];
        assert_eq!(p.mr_unrank(0, &mut out), Parity::Even);
        assert_eq!(out, [1, 2, 0]);
        // r=2: swap(2,2), then r=0: swap(1,0) -> 1 0 2.
        assert_eq!(p.mr_unrank(2, &mut out), Parity::Odd);
        assert_eq!(out, [1, 0, 2]);
        assert_eq!(p.mr_rank(&[1, 0, 2]), (2, Parity::Odd));
    }

    #[test]
    fn overflow() {
        assert!(Permutation::new(20).is_ok());
        assert!(matches!(
            Permutation::new(21),
            Err(HashError::Overflow { .. })
        ));
    }
}
