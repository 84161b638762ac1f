//! The two-colour multinomial hash of 24-cell boards in bitboard form: the
//! CPU twin of `kernels/common.cuh` (`tb_rank2`, `tb_unrank2`).
//!
//! # Order
//! Seed 000's Algorithms 1 and 2: boards are ordered lexicographically, cell 0
//! most significant, with colour 2 < colour 1 < empty in each cell; rank 0 puts
//! all colour-2 pieces first, then colour 1, then the empties. This is the
//! order of [`crate::hash::Multinomial`] with counts `[k1, k2]` (tests hold it).
//!
//! The tempting split "rank of the occupied-cell subset times C(k1+k2, k2)
//! plus the colour pattern among occupied cells" is a *different* order
//! (e.g. `1 0 2` sorts before `0 2 1` here, after it there), so the walk below
//! stays cell by cell.
//!
//! # Formulation
//! Walking cell `i` with `m = 23 - i` cells after it and `l1`, `l2` pieces of
//! each colour still to place (`s = l1 + l2`), Algorithm 1 adds
//! - for colour 1: M(m; l1, l2-1) = C(m, s-1) * C(s-1, l1),
//! - for an empty: M(m; l1, l2-1) + M(m; l1-1, l2) = C(m, s-1) * C(s, l1)
//!   (Pascal's rule merges the two),
//! - for colour 2: nothing.
//!
//! Both are one product of two entries of [`BIN`], a table of C(x, y) shifted
//! by one column so that C(x, -1) = 0 needs no branch. Every multinomial over
//! 24 cells is below 2^34, so u64 arithmetic is exact.
//!
//! The same walk read with the colours swapped gives the rank of the board seen
//! from the other side (partition (k2, k1)): a colour-2 cell adds
//! C(m, s-1) * C(s-1, l1-1) and an empty the same as before. Unranking gets that
//! swapped rank almost for free, which the expansion kernels use: successors
//! are ranked from the opponent's point of view.

/// Cells of the board.
pub const CELLS: usize = 24;

/// Mask of the 24 cells.
pub const FULL: u32 = (1 << CELLS) - 1;

/// Columns of [`BIN`]: C(x, y) lives at column y + 1, for y in -1..=24.
pub const BIN_COLS: usize = CELLS + 2;

/// `BIN[x][y + 1] = C(x, y)` for x in 0..=24 and y in -1..=24 (zero outside
/// 0 <= y <= x). The same table is copied into `__constant__ TB_BIN` of the
/// CUDA kernels.
pub const BIN: [[u32; BIN_COLS]; CELLS + 1] = {
    let mut t = [[0u32; BIN_COLS]; CELLS + 1];
    let mut x = 0;
    while x <= CELLS {
        t[x][1] = 1;
        let mut y = 1;
        while y <= x {
            // C(x, y) = C(x-1, y-1) + C(x-1, y); C(24, 12) = 2704156 fits u32.
            t[x][y + 1] = t[x - 1][y] + t[x - 1][y + 1];
            y += 1;
        }
        x += 1;
    }
    t
};

/// [`BIN`] flattened row by row, as the kernels receive it.
pub fn bin_flat() -> Vec<u32> {
    BIN.iter().flat_map(|row| row.iter().copied()).collect()
}

/// Number of boards with `k1` pieces of colour 1 and `k2` of colour 2 on 24
/// cells, or `None` when `k1 + k2 > 24`.
pub fn size(k1: u32, k2: u32) -> Option<u64> {
    let s = k1.checked_add(k2)? as usize;
    if s > CELLS {
        return None;
    }
    Some(u64::from(BIN[CELLS][s + 1]) * u64::from(BIN[s][k1 as usize + 1]))
}

/// Algorithm 1's contribution of one cell: `m` cells after it, `s` pieces
/// still to place of which `l1` of colour 1, the cell holding colour 1
/// (`is1`) or colour 2 (`is2`) or neither.
#[inline(always)]
pub(crate) fn term(m: usize, s: usize, l1: usize, is1: bool, is2: bool) -> u64 {
    if is2 {
        return 0;
    }
    u64::from(BIN[m][s]) * u64::from(BIN[s - usize::from(is1)][l1 + 1])
}

/// Rank of the board with colour-1 cells `c1` and colour-2 cells `c2`
/// (disjoint, `popcount(c1) == k1`, `popcount(c2) == k2`, within [`FULL`]).
/// Other input gives an unspecified rank, never a panic.
pub fn rank(c1: u32, c2: u32, k1: u32, k2: u32) -> u64 {
    let mut l1 = k1 as usize;
    let mut s = (k1 + k2) as usize;
    let mut r = 0u64;
    for i in 0..CELLS {
        if s == 0 || s > CELLS || l1 > s {
            break;
        }
        let is1 = (c1 >> i) & 1 != 0;
        let is2 = !is1 && (c2 >> i) & 1 != 0;
        if is1 && l1 == 0 {
            break;
        }
        r = r.wrapping_add(term(CELLS - 1 - i, s, l1, is1, is2));
        l1 -= usize::from(is1);
        s -= usize::from(is1 || is2);
    }
    r
}

/// A board recovered by [`unrank`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unranked {
    /// Cells of colour 1.
    pub c1: u32,
    /// Cells of colour 2.
    pub c2: u32,
    /// Rank of the same board with the colours swapped, in partition (k2, k1).
    pub swapped: u64,
}

/// The board of rank `r` (Algorithm 2) in partition (k1, k2), together with its
/// colour-swapped rank. `r` must be below [`size`]`(k1, k2)`; larger ranks give
/// an unspecified board, never a panic.
pub fn unrank(mut r: u64, k1: u32, k2: u32) -> Unranked {
    let mut l1 = k1 as usize;
    let mut s = (k1 + k2) as usize;
    let (mut c1, mut c2, mut swapped) = (0u32, 0u32, 0u64);
    if s > CELLS || l1 > s {
        return Unranked { c1, c2, swapped };
    }
    for i in 0..CELLS {
        if s == 0 {
            break;
        }
        let m = CELLS - 1 - i;
        let f = u64::from(BIN[m][s]);
        let v2 = f * u64::from(BIN[s - 1][l1 + 1]);
        let v12 = f * u64::from(BIN[s][l1 + 1]);
        if r < v2 {
            c2 |= 1 << i;
            swapped += v12 - v2;
            s -= 1;
        } else if r < v12 {
            c1 |= 1 << i;
            r -= v2;
            l1 -= 1;
            s -= 1;
        } else {
            r -= v12;
            swapped += v12;
        }
    }
    Unranked { c1, c2, swapped }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_pascal() {
        assert_eq!(BIN[24][13], 2_704_156); // C(24, 12)
        assert_eq!(BIN[5][0], 0); // C(5, -1)
        assert_eq!(BIN[4][6], 0); // C(4, 5)
        for (x, row) in BIN.iter().enumerate() {
            let row: u64 = row.iter().map(|&v| u64::from(v)).sum();
            assert_eq!(row, 1u64 << x);
        }
    }

    #[test]
    fn size_matches_factorials() {
        // 24! / (9! 9! 6!) computed independently in u128.
        let fact = |n: u128| (1..=n).product::<u128>();
        let want = fact(24) / (fact(9) * fact(9) * fact(6));
        assert_eq!(u128::from(size(9, 9).unwrap()), want);
        assert_eq!(size(20, 5), None);
    }
}
