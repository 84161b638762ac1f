//! CPU twins of `kernels/permutation.cu`: the same index arithmetic (a
//! permutation of up to 16 items in one `u64` of 4-bit fields, Myrvold–Ruskey
//! rank and unrank with the parity counted on the fly, each puzzle's moves on
//! the fields), and the same two BFS steps, on all cores.
//!
//! The puzzles' own `rank`/`unrank`/`successors` are the reference: the
//! tests (tests/puzzle_kernels.rs) hold [`PermSpec::expand`] to them index by
//! index, and the twin BFS results to the generic BFS and solver.

use crate::hash::Permutation;
use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

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

/// Two-bit entry `s` of `words` set to `code` if unseen; true if this call did.
#[inline(always)]
fn claim(words: &[AtomicU64], s: u64, code: u64) -> bool {
    let w = &words[(s >> 5) as usize];
    let shift = 2 * (s & 31);
    let mut old = w.load(Ordering::Relaxed);
    while (old >> shift) & 3 == 0 {
        match w.compare_exchange_weak(
            old,
            old | (code << shift),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => old = now,
        }
    }
    false
}

/// Two-bit words per parallel work item.
const WORDS_PER_ITEM: usize = 1 << 10;

/// The two-bit BFS of `perm_two_bit_step` from index `start`: positions
/// first reached at each depth (depth 0: the start). Korf's codes: 0 unseen,
/// 3 expanded, the frontier and the next layer 1 and 2 by turns, so that
/// every index is expanded once.
pub fn two_bit_bfs(spec: &PermSpec, start: u64) -> Vec<u64> {
    let words: Vec<AtomicU64> = (0..spec.size.div_ceil(32))
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    claim(&words, start, 1);
    let mut layers = vec![1u64];
    loop {
        let depth = layers.len() as u64 - 1;
        let current = depth % 2 + 1;
        let next = (depth + 1) % 2 + 1;
        let pattern = 0x5555_5555_5555_5555u64 * current;
        let found: u64 = (0..words.len().div_ceil(WORDS_PER_ITEM))
            .into_par_iter()
            .map(|c| {
                let mut mine = 0u64;
                let hi = ((c + 1) * WORDS_PER_ITEM).min(words.len());
                for w in c * WORDS_PER_ITEM..hi {
                    let y = words[w].load(Ordering::Relaxed) ^ pattern;
                    let mut m = !(y | (y >> 1)) & 0x5555_5555_5555_5555;
                    if m != 0 {
                        words[w].fetch_or(m * 3, Ordering::Relaxed);
                    }
                    while m != 0 {
                        let bit = u64::from(m.trailing_zeros());
                        m &= m - 1;
                        spec.expand(w as u64 * 32 + bit / 2, |s| {
                            mine += u64::from(claim(&words, s, next));
                        });
                    }
                }
                mine
            })
            .sum();
        if found == 0 {
            return layers;
        }
        layers.push(found);
    }
}

/// The byte of distance `d`, or the error the kernels' host side gives too.
pub fn distance_byte(d: u32) -> Result<u8> {
    Value::at_distance(d).map(Value::to_byte).ok_or_else(|| {
        Error::NotAvailable(format!("a distance of {d} moves does not fit a value byte"))
    })
}

/// Indices per parallel work item of the byte BFS.
const BYTES_PER_ITEM: usize = 1 << 16;

/// The byte BFS of `perm_byte_step` from index `goal`: every index's value
/// (distance `d`: [`distance_byte`]; unreached: draw) and the steps run.
pub fn byte_bfs(spec: &PermSpec, goal: u64) -> Result<(Vec<u8>, u32)> {
    let size = usize::try_from(spec.size)
        .map_err(|_| Error::NotAvailable(format!("{} indices do not fit memory", spec.size)))?;
    let values: Vec<AtomicU8> = (0..size)
        .into_par_iter()
        .map(|_| AtomicU8::new(0))
        .collect();
    values[goal as usize].store(distance_byte(0)?, Ordering::Relaxed);
    let mut d = 0u32;
    loop {
        let (here, next) = (distance_byte(d)?, distance_byte(d + 1)?);
        let grew = AtomicBool::new(false);
        values
            .par_chunks(BYTES_PER_ITEM)
            .enumerate()
            .for_each(|(c, chunk)| {
                let base = (c * BYTES_PER_ITEM) as u64;
                let mut any = false;
                for (i, v) in chunk.iter().enumerate() {
                    if v.load(Ordering::Relaxed) != here {
                        continue;
                    }
                    spec.expand(base + i as u64, |s| {
                        let t = &values[s as usize];
                        if t.load(Ordering::Relaxed) == 0 {
                            t.store(next, Ordering::Relaxed);
                            any = true;
                        }
                    });
                }
                if any {
                    grew.store(true, Ordering::Relaxed);
                }
            });
        d += 1;
        if !grew.load(Ordering::Relaxed) {
            break;
        }
    }
    let draw = Value::DRAW.to_byte();
    let out = values
        .into_iter()
        .map(|v| match v.into_inner() {
            0 => draw,
            b => b,
        })
        .collect();
    Ok((out, d))
}
