//! CPU twins of `kernels/permutation.cu`: the same index arithmetic (a
//! permutation of up to 16 items in one `u64` of 4-bit fields, Myrvold–Ruskey
//! rank and unrank with the parity counted on the fly, each puzzle's moves on
//! the fields), and the same two BFS steps, on all cores.
//!
//! The puzzles' own `rank`/`unrank`/`successors` are the reference: the
//! tests (tests/puzzle_kernels.rs) hold [`PermSpec::expand`] to them index by
//! index, and the twin BFS results to the generic BFS and solver.

pub use super::super::index_bfs::distance_byte;
use super::super::index_bfs::{self, IndexMoves};
use crate::hash::Permutation;
use crate::Result;
use rayon::prelude::*;

/// `kind` of sliding-tile puzzles.
pub const SLIDING: u32 = 0;
/// `kind` of Top-Spin.
pub const TOPSPIN: u32 = 1;
/// `kind` of the pancake problems.
pub const PANCAKE: u32 = 2;

/// Successor slots per index in the check kernel's output.
pub const MAX_SUCCESSORS: usize = 16;

/// One puzzle of the family, as the kernels take it (`kernels/permutation.cu`
/// documents the fields per kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermSpec {
    /// [`SLIDING`], [`TOPSPIN`] or [`PANCAKE`].
    pub kind: u32,
    /// Items (sliding: tiles; Top-Spin: tokens on the ring; pancakes).
    pub n: u32,
    /// Sliding: rows; Top-Spin: k; pancakes: 1 if burnt.
    pub a: u32,
    /// Sliding: columns; Top-Spin: 1 if parity-halved; pancakes: 0.
    pub b: u32,
    /// Sliding: (rows*cols - 1)!/2; Top-Spin: (n-1)!/2; pancakes: 0.
    pub half: u64,
    /// Indices of the puzzle.
    pub size: u64,
}

fn factorial(n: usize) -> u64 {
    Permutation::new(n).map_or(0, |p| p.size())
}

/// The low `k` nibbles.
#[inline(always)]
fn mask(k: u32) -> u64 {
    if k >= 16 {
        u64::MAX
    } else {
        (1u64 << (4 * k)) - 1
    }
}

/// A 1 in each of the low `k` nibbles.
#[inline(always)]
fn ones(k: u32) -> u64 {
    0x1111_1111_1111_1111 & mask(k)
}

/// Myrvold–Ruskey unrank1 of `r < n!` (`n` <= 16) and its parity (true: odd).
#[inline(always)]
pub fn unrank(mut r: u64, n: u32) -> (u64, bool) {
    let mut p = 0xFEDC_BA98_7654_3210u64;
    let mut swaps = 0u32;
    let mut k = n.saturating_sub(1);
    while k >= 1 {
        // As the kernel: 32-bit division once the rest fits.
        let j = if r >> 32 != 0 {
            let q = r / u64::from(k + 1);
            let j = (r - q * u64::from(k + 1)) as u32;
            r = q;
            j
        } else {
            let r32 = r as u32;
            let q = r32 / (k + 1);
            r = u64::from(q);
            r32 - q * (k + 1)
        };
        let x = ((p >> (4 * k)) ^ (p >> (4 * j))) & 15;
        p ^= (x << (4 * k)) | (x << (4 * j));
        swaps += u32::from(j != k);
        k -= 1;
    }
    (p & mask(n), swaps & 1 == 1)
}

/// Myrvold–Ruskey rank1 of the permutation `p` of `n` items and its parity.
#[inline(always)]
pub fn rank(mut p: u64, n: u32) -> (u64, bool) {
    let mut inv = 0u64;
    for i in 0..n {
        inv |= u64::from(i) << (4 * ((p >> (4 * i)) & 15));
    }
    let (mut r, mut weight) = (0u64, 1u64);
    let mut swaps = 0u32;
    let mut k = n.saturating_sub(1);
    while k >= 1 {
        let s = (p >> (4 * k)) & 15;
        let j = (inv >> (4 * k)) & 15;
        p ^= (u64::from(k) ^ s) << (4 * j);
        inv ^= (u64::from(k) ^ j) << (4 * s);
        swaps += u32::from(s != u64::from(k));
        r = r.wrapping_add(s.wrapping_mul(weight));
        weight = weight.wrapping_mul(u64::from(k) + 1);
        k -= 1;
    }
    (r, swaps & 1 == 1)
}

/// Items 0 and 1 exchanged (Theorem 4: ranks `r` and `r + n!/2`).
#[inline(always)]
fn swap01(q: u64) -> u64 {
    (q & !0xFF) | ((q & 15) << 4) | ((q >> 4) & 15)
}

/// The nibbles of `x` in reverse order.
#[inline(always)]
fn nibble_reverse(x: u64) -> u64 {
    let y = x.swap_bytes();
    ((y >> 4) & 0x0F0F_0F0F_0F0F_0F0F) | ((y & 0x0F0F_0F0F_0F0F_0F0F) << 4)
}

impl PermSpec {
    /// The `rows x cols` sliding-tile puzzle (rows*cols <= 16).
    pub fn sliding(rows: usize, cols: usize) -> PermSpec {
        let tiles = rows * cols - 1;
        let half = factorial(tiles) / 2;
        PermSpec {
            kind: SLIDING,
            n: tiles as u32,
            a: rows as u32,
            b: cols as u32,
            half,
            size: half * (rows * cols) as u64,
        }
    }

    /// (n, k) Top-Spin (n <= 16), its index parity-halved or not.
    pub fn topspin(n: usize, k: usize, halved: bool) -> PermSpec {
        let orders = factorial(n - 1);
        PermSpec {
            kind: TOPSPIN,
            n: n as u32,
            a: k as u32,
            b: u32::from(halved),
            half: orders / 2,
            size: if halved { orders / 2 } else { orders },
        }
    }

    /// `n` pancakes (n <= 15; burnt: n <= 12).
    pub fn pancake(n: usize, burnt: bool) -> PermSpec {
        let orders = factorial(n);
        PermSpec {
            kind: PANCAKE,
            n: n as u32,
            a: u32::from(burnt),
            b: 0,
            half: 0,
            size: if burnt { orders << n } else { orders },
        }
    }

    /// Calls `emit` with each successor index of index `idx < size`, in the
    /// kernel's order.
    #[inline(always)]
    pub fn expand(&self, idx: u64, mut emit: impl FnMut(u64)) {
        let (n, a, b, half) = (self.n, self.a, self.b, self.half);
        match self.kind {
            SLIDING => {
                let (rows, cols) = (a, b);
                let blank = (idx / half) as u32;
                let r = idx - u64::from(blank) * half;
                let want = cols % 2 == 0 && (blank / cols) % 2 == 1;
                let (mut q, odd) = unrank(r, n);
                if odd != want {
                    q = swap01(q);
                }
                let (row, col) = (blank / cols, blank % cols);
                if col > 0 {
                    emit(u64::from(blank - 1) * half + r);
                }
                if col + 1 < cols {
                    emit(u64::from(blank + 1) * half + r);
                }
                for up in [true, false] {
                    if if up { row == 0 } else { row + 1 == rows } {
                        continue;
                    }
                    let to = if up { blank - cols } else { blank + cols };
                    let (from, at) = if up { (to, blank - 1) } else { (to - 1, blank) };
                    let t = (q >> (4 * from)) & 15;
                    let moved = if from > at {
                        let seg = q & mask(from) & !mask(at);
                        (q & !(mask(from + 1) & !mask(at))) | (seg << 4) | (t << (4 * at))
                    } else {
                        let seg = q & mask(at + 1) & !mask(from + 1);
                        (q & !(mask(at + 1) & !mask(from))) | (seg >> 4) | (t << (4 * at))
                    };
                    let (s, _) = rank(moved, n);
                    emit(u64::from(to) * half + if s >= half { s - half } else { s });
                }
            }
            TOPSPIN => {
                let (k, halved, items) = (a, b != 0, n - 1);
                let (mut q, odd) = unrank(idx, items);
                if halved && odd {
                    q = swap01(q);
                }
                let ring = (q + ones(items)) << 4;
                for i in 0..n {
                    let mut t = ring;
                    for x in 0..k / 2 {
                        let (p1, p2) = ((i + x) % n, (i + k - 1 - x) % n);
                        let d = ((t >> (4 * p1)) ^ (t >> (4 * p2))) & 15;
                        t ^= (d << (4 * p1)) | (d << (4 * p2));
                    }
                    let off = (n - i) % n;
                    let at = if off < k { (i + k - 1 - off) % n } else { 0 };
                    let rot = if at == 0 {
                        t
                    } else {
                        ((t >> (4 * at)) | (t << (4 * (n - at)))) & mask(n)
                    };
                    let (s, _) = rank((rot >> 4) - ones(items), items);
                    emit(if halved && s >= half { s - half } else { s });
                }
            }
            _ => {
                let burnt = a != 0;
                let (r, sides) = if burnt {
                    (idx >> n, (idx & ((1u64 << n) - 1)) as u32)
                } else {
                    (idx, 0)
                };
                let (p, _) = unrank(r, n);
                let rev = nibble_reverse(p);
                for k in if burnt { 1 } else { 2 }..=n {
                    let flipped = (p & !mask(k)) | (rev >> (4 * (16 - k)));
                    let (mut s, _) = rank(flipped, n);
                    if burnt {
                        let low_mask = (1u32 << k) - 1;
                        let fl = ((sides & low_mask).reverse_bits() >> (32 - k)) ^ low_mask;
                        s = (s << n) | u64::from((sides & !low_mask) | fl);
                    }
                    emit(s);
                }
            }
        }
    }

    /// The check kernel's output for `idx`: [`MAX_SUCCESSORS`] slots per
    /// index, unused ones `u64::MAX`.
    pub fn expand_listed(&self, idx: &[u64]) -> Vec<u64> {
        let mut out = vec![u64::MAX; idx.len() * MAX_SUCCESSORS];
        out.par_chunks_mut(MAX_SUCCESSORS)
            .zip(idx.par_iter())
            .for_each(|(o, &i)| {
                let mut m = 0;
                self.expand(i, |s| {
                    o[m] = s;
                    m += 1;
                });
            });
        out
    }
}

impl IndexMoves for PermSpec {
    fn size(&self) -> u64 {
        self.size
    }

    #[inline(always)]
    fn for_each_successor(&self, index: u64, emit: impl FnMut(u64)) {
        self.expand(index, emit);
    }
}

/// The two-bit BFS of `perm_two_bit_step` from index `start`
/// (`index_bfs::two_bit_bfs`).
pub fn two_bit_bfs(spec: &PermSpec, start: u64) -> Vec<u64> {
    index_bfs::two_bit_bfs(spec, start)
}

/// The byte BFS of `perm_byte_step` from index `goal`
/// (`index_bfs::byte_bfs`).
pub fn byte_bfs(spec: &PermSpec, goal: u64) -> Result<(Vec<u8>, u32)> {
    index_bfs::byte_bfs(spec, goal)
}
