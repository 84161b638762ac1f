//! The perfect hash: slices (Lake, Schaeffer and Lu's subdivisions), the
//! partitions that pair them, and rank/unrank inside a slice.
//!
//! A slice is `(a, b, c, d, rm, ro)`: the side to move has `a` men and `b`
//! kings, the opponent `c` men and `d` kings; `rm` is the row of the mover's
//! most advanced man counted from its own home row (0..=6; men never stand on
//! their crowning row 7), `ro` the same for the opponent from its side; both
//! are 0 for a side without men. Inside a slice, in the mover's orientation:
//!
//! 1. `M`, the mover's men: a set of `a` squares in rows `0..=rm` with at
//!    least one in row `rm`; its colex rank among the squares `0..4(rm+1)`
//!    minus `C(4rm, a)` (the sets avoiding row `rm` are exactly the colex
//!    ranks below that), so `iM` runs over `0..C(4(rm+1), a) - C(4rm, a)`.
//! 2. `O`, the opponent's men, in the opponent's orientation: `c` squares of
//!    its rows `0..=ro`, at least one in row `ro`, none where a mover man
//!    stands. Its squares are renumbered over the zone's free squares (rows
//!    below `ro` first), so the sets avoiding row `ro` again rank first:
//!    `iO = colex - C(fhi, c)` with `fhi` the free squares below row `ro`.
//!    How many `O` there are depends on `M` when the two zones overlap
//!    (`rm + ro >= 7`); there a table of prefix sums over `iM` gives
//!    `iMO = prefix[iM] + iO`, elsewhere `iMO = iM * |O| + iO`.
//! 3. The kings on the `32 - a - c` squares left: the colex rank of all
//!    `b + d` king squares (renumbered over the free squares), times
//!    `C(b + d, b)`, plus the colex rank of which of them are the mover's.
//!
//! `rank = iMO * kings + iK`. Every index is a legal position and every
//! position has one index: a slice's size is its number of positions, and
//! the slices of `n` pieces add up to the literature's counts (Schaeffer et
//! al., "Checkers Is Solved"). The index is the multinomial of the four piece
//! sets written as a product of binomials (men first, within the leading-row
//! split, then the kings on what is left), which is what Lake et al.'s
//! indexing amounts to as Edelkamp, Sulewski and Yücel read it (multinomial
//! hashing of four piece types, split by the most advanced men); the exact
//! order of their index is not reproduced.

use super::rules::{bits, leading_row, turn, Position};

/// Most pieces a build may hold: prefix tables grow as `C(28, men)`.
pub const MAX_PIECES: u32 = 8;

/// `C(n, k)` for `n, k <= 32`.
static BINOM: [[u64; 33]; 33] = {
    let mut t = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + t[n - 1][k];
            k += 1;
        }
        n += 1;
    }
    t
};

#[inline]
pub(crate) fn binom(n: u32, k: u32) -> u64 {
    if k > n {
        0
    } else {
        BINOM[n as usize][k as usize]
    }
}

/// Colex rank of the set `mask` (positions below 32).
#[inline]
fn colex_rank(mask: u32) -> u64 {
    bits(mask)
        .enumerate()
        .map(|(i, p)| binom(u32::from(p), i as u32 + 1))
        .sum()
}

/// `BINOM_T[k][n] = C(n, k)`: a row per `k`, for the searches of [`colex_unrank`].
static BINOM_T: [[u64; 33]; 33] = {
    let mut t = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        let mut k = 0;
        while k <= 32 {
            t[k][n] = BINOM[n][k];
            k += 1;
        }
        n += 1;
    }
    t
};

/// The `k`-set with colex rank `r` (positions below 32).
#[inline]
fn colex_unrank(mut r: u64, k: u32) -> u32 {
    let mut mask = 0u32;
    for i in (1..=k as usize).rev() {
        // The largest p with C(p, i) <= r: C(p, i) does not decrease with p,
        // so a branch-free binary search over 0..32 finds it (the solver
        // unranks in its inner loop, and search branches mispredict).
        let row = &BINOM_T[i];
        let mut p = 0usize;
        for step in [16, 8, 4, 2, 1] {
            let q = p + step;
            p = if row[q] <= r { q } else { p };
        }
        mask |= 1 << p;
        r -= row[p];
    }
    mask
}

/// The positions, among the set bits of `free` (lowest first), of the bits
/// of `mask` (a subset of `free`).
#[inline]
fn compress(mask: u32, free: u32) -> u32 {
    bits(mask).fold(0u32, |acc, s| {
        acc | 1 << (free & ((1u32 << s) - 1)).count_ones()
    })
}

/// The inverse of [`compress`]: the set bits of `free` at the positions in `c`.
#[inline]
fn expand(c: u32, mut free: u32) -> u32 {
    let mut out = 0u32;
    let mut rest = c;
    // Branch-free body: take the lowest free square when the lowest
    // position left in `rest` is set.
    while rest != 0 {
        let low = free & free.wrapping_neg();
        out |= low & (rest & 1).wrapping_neg();
        free &= free.wrapping_sub(1);
        rest >>= 1;
    }
    out
}

/// The squares of rows `0..rows` (in some side's orientation).
#[inline]
fn rows_mask(rows: u32) -> u32 {
    if rows >= 8 {
        u32::MAX
    } else {
        (1u32 << (4 * rows)) - 1
    }
}

/// A subdivision: the material and each side's leading man row, from the side
/// to move (`[mover, opponent]` in each field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slice {
    /// Men.
    pub men: [u8; 2],
    /// Kings.
    pub kings: [u8; 2],
    /// Row of each side's most advanced man, from its own side (0 without men).
    pub lead: [u8; 2],
}

impl Slice {
    /// The same material and rows seen from the opponent.
    pub fn mirror(self) -> Slice {
        Slice {
            men: [self.men[1], self.men[0]],
            kings: [self.kings[1], self.kings[0]],
            lead: [self.lead[1], self.lead[0]],
        }
    }

    /// The order key (a, b, c, d, rm, ro), four bits each, `a` highest.
    #[inline]
    fn key(self) -> u32 {
        let [a, c] = self.men.map(u32::from);
        let [b, d] = self.kings.map(u32::from);
        let [rm, ro] = self.lead.map(u32::from);
        a << 20 | b << 16 | c << 12 | d << 8 | rm << 4 | ro
    }

    /// The mirror's [`Slice::key`].
    #[inline]
    fn mirror_key(self) -> u32 {
        let [a, c] = self.men.map(u32::from);
        let [b, d] = self.kings.map(u32::from);
        let [rm, ro] = self.lead.map(u32::from);
        c << 20 | d << 16 | a << 12 | b << 8 | ro << 4 | rm
    }

    /// Whether this slice (not its mirror) names their partition.
    #[inline]
    pub fn is_canonical(self) -> bool {
        self.key() >= self.mirror_key()
    }

    /// The member of `{self, mirror}` that names their partition.
    pub fn canonical(self) -> Slice {
        if self.is_canonical() {
            self
        } else {
            self.mirror()
        }
    }

    /// Pieces on the board.
    pub fn pieces(self) -> u32 {
        u32::from(self.men[0] + self.men[1] + self.kings[0] + self.kings[1])
    }

    /// The slice `pos` lies in.
    pub fn of(pos: &Position) -> Slice {
        Slice {
            men: [pos.men[0].count_ones() as u8, pos.men[1].count_ones() as u8],
            kings: [
                pos.kings[0].count_ones() as u8,
                pos.kings[1].count_ones() as u8,
            ],
            lead: [leading_row(pos.men[0]), leading_row(turn(pos.men[1]))],
        }
    }

    /// A dense id, the same for a slice and its mirror's partition: mixed
    /// radix over counts `0..=12` and rows `0..=6`.
    #[inline]
    pub fn id(self) -> u32 {
        let k = self.key().max(self.mirror_key());
        let digit = |shift: u32| (k >> shift) & 0xf;
        ((((digit(20) * 13 + digit(16)) * 13 + digit(12)) * 13 + digit(8)) * 7 + digit(4)) * 7
            + digit(0)
    }

    /// The file-name-safe name: `p3-m1k0-m0k2-r5x` (pieces; mover men and
    /// kings; opponent men and kings; leading rows, `x` without men).
    pub fn name(self) -> String {
        let row = |n: u8, r: u8| {
            if n == 0 {
                "x".to_string()
            } else {
                r.to_string()
            }
        };
        format!(
            "p{}-m{}k{}-m{}k{}-r{}{}",
            self.pieces(),
            self.men[0],
            self.kings[0],
            self.men[1],
            self.kings[1],
            row(self.men[0], self.lead[0]),
            row(self.men[1], self.lead[1])
        )
    }

    /// Every slice of the material `men`/`kings` (with any leading rows).
    pub fn all_of(men: [u8; 2], kings: [u8; 2]) -> Vec<Slice> {
        let rows = |n: u8| if n == 0 { 0..=0 } else { 0..=6 };
        let mut out = Vec::new();
        for rm in rows(men[0]) {
            for ro in rows(men[1]) {
                out.push(Slice {
                    men,
                    kings,
                    lead: [rm, ro],
                });
            }
        }
        out
    }
}

/// How `iMO` is laid out over the mover's men sets.
#[derive(Clone, Debug)]
enum MenLayout {
    /// The zones do not overlap: `|O|` opponent sets for every `M`.
    Uniform(u64),
    /// `prefix[iM]`: the `iMO` of `M`'s first opponent set (`len = |M| + 1`).
    Prefix(Vec<u64>),
}

/// Rank and unrank of one slice.
#[derive(Clone, Debug)]
pub struct SliceIndex {
    slice: Slice,
    men_sets: u64,
    layout: MenLayout,
    /// Placements of the kings on the squares left.
    king_sets: u64,
    size: u64,
}

impl SliceIndex {
    /// The index of `slice`; `None` if the sizes overflow a u64 (never for
    /// [`MAX_PIECES`] pieces).
    pub fn new(slice: Slice) -> Option<SliceIndex> {
        let [a, c] = slice.men.map(u32::from);
        let [b, d] = slice.kings.map(u32::from);
        let [rm, ro] = slice.lead.map(u32::from);
        let men_sets = if a == 0 {
            1
        } else {
            binom(4 * (rm + 1), a) - binom(4 * rm, a)
        };
        let zones_meet = a > 0 && c > 0 && rm + ro >= 7;
        let layout = if zones_meet {
            let mut prefix = Vec::with_capacity(men_sets as usize + 1);
            let mut sum = 0u64;
            prefix.push(0);
            for i in 0..men_sets {
                let m = colex_unrank(i + binom(4 * rm, a), a);
                sum = sum.checked_add(Self::opponent_sets(c, ro, turn(m)))?;
                prefix.push(sum);
            }
            MenLayout::Prefix(prefix)
        } else {
            MenLayout::Uniform(Self::opponent_sets(c, ro, 0))
        };
        let mo = match &layout {
            MenLayout::Uniform(n) => men_sets.checked_mul(*n)?,
            MenLayout::Prefix(p) => p[men_sets as usize],
        };
        let free = 32u32.checked_sub(a + c)?;
        let king_sets = binom(free, b + d).checked_mul(binom(b + d, b))?;
        Some(SliceIndex {
            slice,
            men_sets,
            layout,
            king_sets,
            size: mo.checked_mul(king_sets)?,
        })
    }

    /// Positions (and indices) in the slice.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The slice.
    pub fn slice(&self) -> Slice {
        self.slice
    }

    /// Sets of the mover's men (the range of `iM`).
    #[cfg(feature = "build")]
    pub(crate) fn men_sets(&self) -> u64 {
        self.men_sets
    }

    /// Placements of the kings on the squares the men leave.
    #[cfg(feature = "build")]
    pub(crate) fn king_sets(&self) -> u64 {
        self.king_sets
    }

    /// The layout of `iMO`: `Ok(|O|)` where the zones do not overlap, else
    /// `Err(prefix)` (`prefix[iM]` is the first `iMO` of men set `iM`).
    #[cfg(feature = "build")]
    pub(crate) fn men_layout(&self) -> std::result::Result<u64, &[u64]> {
        match &self.layout {
            MenLayout::Uniform(n) => Ok(*n),
            MenLayout::Prefix(p) => Err(p),
        }
    }

    /// Sets of `c` opponent men in its rows `0..=ro` with one in row `ro`,
    /// avoiding `blocked` (mover men, in the opponent's orientation).
    fn opponent_sets(c: u32, ro: u32, blocked: u32) -> u64 {
        if c == 0 {
            return 1;
        }
        let f = (rows_mask(ro + 1) & !blocked).count_ones();
        let fhi = (rows_mask(ro) & !blocked).count_ones();
        binom(f, c) - binom(fhi, c)
    }

    /// The rank of `pos`, which must lie in this slice.
    pub fn rank(&self, pos: &Position) -> u64 {
        let [a, c] = self.slice.men.map(u32::from);
        let [b, d] = self.slice.kings.map(u32::from);
        let [rm, ro] = self.slice.lead.map(u32::from);
        let m = pos.men[0];
        let i_m = if a == 0 {
            0
        } else {
            colex_rank(m) - binom(4 * rm, a)
        };
        let i_o = if c == 0 {
            0
        } else {
            let zone = rows_mask(ro + 1) & !turn(m);
            let fhi = (zone & rows_mask(ro)).count_ones();
            colex_rank(compress(turn(pos.men[1]), zone)) - binom(fhi, c)
        };
        let i_mo = match &self.layout {
            MenLayout::Uniform(n) => i_m * n + i_o,
            MenLayout::Prefix(p) => p[i_m as usize] + i_o,
        };
        let free = !(pos.men[0] | pos.men[1]);
        let all = pos.kings[0] | pos.kings[1];
        let i_k = colex_rank(compress(all, free)) * binom(b + d, b)
            + colex_rank(compress(pos.kings[0], all));
        i_mo * self.king_sets + i_k
    }

    /// The position of rank `r < size()` (white to move: false).
    pub fn unrank(&self, r: u64) -> Position {
        let [a, c] = self.slice.men.map(u32::from);
        let [b, d] = self.slice.kings.map(u32::from);
        let [rm, ro] = self.slice.lead.map(u32::from);
        let i_mo = r / self.king_sets;
        let i_k = r % self.king_sets;
        let (i_m, i_o) = match &self.layout {
            MenLayout::Uniform(n) => (i_mo / n, i_mo % n),
            MenLayout::Prefix(p) => {
                let i = p.partition_point(|&x| x <= i_mo) - 1;
                (i as u64, i_mo - p[i])
            }
        };
        debug_assert!(i_m < self.men_sets);
        let m = if a == 0 {
            0
        } else {
            colex_unrank(i_m + binom(4 * rm, a), a)
        };
        let o = if c == 0 {
            0
        } else {
            let zone = rows_mask(ro + 1) & !turn(m);
            let fhi = (zone & rows_mask(ro)).count_ones();
            turn(expand(colex_unrank(i_o + binom(fhi, c), c), zone))
        };
        let free = !(m | o);
        let per = binom(b + d, b);
        let all = expand(colex_unrank(i_k / per, b + d), free);
        let mine = expand(colex_unrank(i_k % per, b), all);
        Position {
            men: [m, o],
            kings: [mine, all & !mine],
            white_to_move: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colex_round_trip() {
        for k in 0..=4u32 {
            for r in 0..binom(10, k) {
                let m = colex_unrank(r, k);
                assert_eq!(m.count_ones(), k);
                assert!(m < 1 << 10);
                assert_eq!(colex_rank(m), r);
            }
        }
    }

    #[test]
    fn compress_expand_round_trip() {
        let free = 0b1011_0110_1101u32;
        for c in 0..(1u32 << free.count_ones()) {
            let e = expand(c, free);
            assert_eq!(e & !free, 0);
            assert_eq!(compress(e, free), c);
        }
    }

    /// Every index of a slice unranks to a position of that slice that ranks
    /// back to it, and distinct indices give distinct positions.
    fn bijection(slice: Slice) -> u64 {
        let idx = SliceIndex::new(slice).unwrap();
        let mut seen = std::collections::HashSet::new();
        for r in 0..idx.size() {
            let pos = idx.unrank(r);
            assert_eq!(Slice::of(&pos), slice, "rank {r}");
            assert_eq!(pos.occupied().count_ones(), slice.pieces());
            assert_eq!(pos.men[0] & super::super::rules::CROWN_ROW, 0);
            assert_eq!(pos.men[1] & super::super::rules::OPP_CROWN_ROW, 0);
            assert_eq!(idx.rank(&pos), r, "{slice:?} rank {r}");
            assert!(seen.insert((pos.men, pos.kings)));
        }
        idx.size()
    }

    #[test]
    fn rank_unrank_bijection_on_every_small_slice() {
        // Every slice of up to three pieces, and overlapping-zone slices of four.
        let mut total = 0;
        for n in 1..=3u8 {
            for a in 0..=n {
                for b in 0..=n - a {
                    for c in 0..=n - a - b {
                        let d = n - a - b - c;
                        for s in Slice::all_of([a, c], [b, d]) {
                            total += bijection(s);
                        }
                    }
                }
            }
        }
        assert_eq!(total, 120 + 6_972 + 261_224);
        for s in Slice::all_of([2, 2], [0, 0]) {
            if s.lead[0] + s.lead[1] >= 9 {
                bijection(s);
            }
        }
    }
}
