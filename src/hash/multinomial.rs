//! Boards of `n <= 64` cells holding fixed counts of colours `1..=c` plus
//! empties (colour 0), ranked by Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" Algorithms 1 and 2 generalised to
//! `c` colours.
//!
//! # Order
//!
//! A board is read as a string, cell 0 first, over the alphabet ordered
//! `c < c-1 < ... < 1 < 0` (highest colour first, empty last; for `c = 2` this
//! is the paper's 2, 1, 0), and boards are ranked in the lexicographic order of
//! those strings. Rank 0 puts the colour-`c` pieces first, then colour `c-1`,
//! ..., empties last. This order does not factor into (mask of one colour,
//! rank of the rest): with one piece of each of 2 colours on 3 cells the
//! order is 210, 201, 120, 102, 021, 012, and the occupancy masks 110, 101,
//! 110, ... interleave. So every path below walks the cells.
//!
//! # How it runs without division
//!
//! At a cell with `m` cells left and `l_y` pieces of each colour `y` left
//! (including this cell), the boards of the remaining multiset that start with
//! colour `y` number `M(m-1; l - e_y)`; the rank adds those for every `y`
//! ordered before the cell's colour (the paths *below* the board's path).
//! - One colour is the binomial hash of the colour-1 cells ([`Binomial`]).
//! - Two colours (the common case) precompute, per space, both sums for
//!   every state `(l0, l1, l2)` of pieces left (the walk table, built from
//!   `M(m-1; l2-1, l1, .) = C(m-1, l2-1) C(m-l2, l1)` and
//!   `M(m-1; l2, l1-1, .) = C(m-1, l2) C(m-1-l2, l1-1)`): a cell costs one
//!   read and an index step. It is at most `4 (k0+1)(k1+1)(k2+1)` words
//!   (22 KiB for 24 cells with 9+9).
//! - Other counts of colours keep `M = M(m; l)` as they go and use
//!   `M(m-1; l - e_y) = M l_y / m`, an exact division done by the shift and
//!   modular inverse of `exact_division_table`.

use super::tables::{binom, div_exact, MAX_CELLS};
use super::{Binomial, HashError};

/// Most colours (besides empty) a [`Multinomial`] takes.
pub const MAX_COLOURS: usize = 32;

/// The multinomial perfect hash of boards with fixed colour counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Multinomial {
    cells: u32,
    colours: u32,
    /// `left[y]` = pieces of colour `y` on the board, `left[0]` = empties.
    left: [u32; MAX_COLOURS + 1],
    size: u64,
    /// Two colours only (else empty): the walk table, see [`Multinomial::walk_table`].
    walk: Vec<u64>,
    /// Two colours only: how far the walk index moves for a cell of colour
    /// 0, 1, 2 (an empty, a 1, a 2 used up).
    step: [u32; 3],
    /// At most one colour: the space is the binomial one of the colour-1 cells.
    subset: Binomial,
}

impl Multinomial {
    /// Boards of `cells <= 64` cells with `counts[i]` pieces of colour `i + 1`
    /// (`counts.len() <= 32` colours) and the rest empty.
    pub fn new(cells: usize, counts: &[u32]) -> Result<Multinomial, HashError> {
        let what = || format!("multinomial({cells}; {counts:?})");
        let shape = |message: String| HashError::Shape {
            what: what(),
            message,
        };
        if cells > MAX_CELLS {
            return Err(shape(format!(
                "{cells} cells exceed the {MAX_CELLS} a u64 mask holds"
            )));
        }
        if counts.len() > MAX_COLOURS {
            return Err(shape(format!(
                "{} colours exceed the {MAX_COLOURS} supported",
                counts.len()
            )));
        }
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if total > cells as u64 {
            return Err(shape(format!("{total} pieces do not fit on {cells} cells")));
        }
        let mut left = [0u32; MAX_COLOURS + 1];
        left[1..=counts.len()].copy_from_slice(counts);
        left[0] = (cells as u64 - total) as u32;
        // M(n; k_c, ..., k_1, k_0) = prod_j C(k_c + ... + k_j, k_j); each partial
        // product is itself a (smaller) multinomial, so overflow shows as soon as it happens.
        let colours = counts.len() as u32;
        let mut size = 1u64;
        let mut placed = 0u32;
        for y in (0..=colours as usize).rev() {
            placed += left[y];
            size = size
                .checked_mul(binom(placed, left[y]))
                .ok_or_else(|| HashError::Overflow { what: what() })?;
        }
        let mut hash = Multinomial {
            cells: cells as u32,
            colours,
            left,
            size,
            walk: Vec::new(),
            step: [0; 3],
            subset: Binomial::new(cells, left[1] as usize)?,
        };
        if colours == 2 {
            hash.build_walk();
        }
        Ok(hash)
    }

    /// Fills the two-colour walk table: for every state `(l0, l1, l2)` of
    /// pieces left (at index `l0 s0 + l1 s1 + l2`), 4 words: what an empty, a 1
    /// and a 2 in the current cell add to the rank, and 0 (padding).
    fn build_walk(&mut self) {
        let (k0, k1, k2) = (self.left[0], self.left[1], self.left[2]);
        let s1 = k2 + 1;
        let s0 = (k1 + 1) * s1;
        self.step = [s0, s1, 1];
        self.walk = vec![0u64; 4 * ((k0 + 1) * s0) as usize];
        for l0 in 0..=k0 {
            for l1 in 0..=k1 {
                for l2 in 0..=k2 {
                    let m = l0 + l1 + l2;
                    let (a, b) = if m == 0 { (0, 0) } else { starts(m, l1, l2) };
                    let at = 4 * (l0 * s0 + l1 * s1 + l2) as usize;
                    // Both are sub-multinomials of the space: no overflow.
                    self.walk[at] = a + b;
                    self.walk[at + 1] = a;
                }
            }
        }
    }

    /// The two-colour walk table the fast paths run on (`None` for other
    /// numbers of colours), for a GPU kernel to copy: with `l0, l1, l2` the
    /// empties, 1s and 2s left from a cell on (that cell included), entry
    /// `4 (l0 (k1+1)(k2+1) + l1 (k2+1) + l2) + x` is what a cell of colour `x`
    /// adds to the rank (`x = 2` adds 0; slot 3 is padding), and the next
    /// cell's state drops the count of `x` by one.
    pub fn walk_table(&self) -> Option<&[u64]> {
        (self.colours == 2).then_some(self.walk.as_slice())
    }

    /// Number of boards.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.cells as usize
    }

    /// Number of colours `c` (cells hold `0..=c`).
    pub fn colours(&self) -> usize {
        self.colours as usize
    }

    /// Pieces of colour `colour` (0 = empties) on every board of the space.
    pub fn count(&self, colour: usize) -> u32 {
        self.left.get(colour).copied().unwrap_or(0)
    }

    fn name(&self) -> String {
        let counts = &self.left[1..=self.colours as usize];
        format!("multinomial({}; {counts:?})", self.cells)
    }

    /// Rank of `board` (`board.len() == cells`, each cell `0..=c`, counts as
    /// given to `new`). On any other board the value is unspecified (no panic);
    /// [`Multinomial::checked_rank`] validates first.
    #[inline]
    pub fn rank(&self, board: &[u8]) -> u64 {
        match self.colours {
            0 | 1 => self.subset.rank(ones_of(board, self.cells)),
            2 => self.rank2_cells(board),
            _ => self.rank_generic(|i| board.get(i).copied().unwrap_or(0)),
        }
    }

    /// Writes the board with index `rank` into `board[..cells]`. `rank` must
    /// be below `size()` (otherwise some board is written, with no panic);
    /// cells beyond `board.len()` are not written.
    #[inline]
    pub fn unrank(&self, rank: u64, board: &mut [u8]) {
        let (ones, twos) = match self.colours {
            0 | 1 => (self.subset.unrank(rank), 0),
            2 => self.unrank2_fast(rank),
            _ => {
                return self.unrank_generic(rank, |i, colour| {
                    if let Some(cell) = board.get_mut(i) {
                        *cell = colour;
                    }
                })
            }
        };
        for (i, cell) in board.iter_mut().take(self.cells as usize).enumerate() {
            *cell = ((ones >> i) & 1) as u8 | (((twos >> i) & 1) as u8) << 1;
        }
    }

    /// Rank of the board given as one bitmask per colour: `masks[j]` holds the
    /// cells (bit `i` = cell `i`) of colour `j + 1`; cells in no mask are
    /// empty. Same order as [`Multinomial::rank`]. The masks must be disjoint,
    /// below bit `cells`, with the space's counts (else unspecified, no panic).
    #[inline]
    pub fn rank_masks(&self, masks: &[u64]) -> u64 {
        match self.colours {
            0 | 1 => self.subset.rank(masks.first().copied().unwrap_or(0)),
            2 => self.rank2_fast(
                masks.first().copied().unwrap_or(0),
                masks.get(1).copied().unwrap_or(0),
            ),
            _ => self.rank_generic(|i| colour_at(masks, i)),
        }
    }

    /// Writes the board of index `rank` as one bitmask per colour:
    /// `masks[j]` gets the cells of colour `j + 1` (`masks.len()` should be
    /// `c`; extra entries are zeroed, missing ones dropped).
    #[inline]
    pub fn unrank_masks(&self, rank: u64, masks: &mut [u64]) {
        masks.iter_mut().for_each(|m| *m = 0);
        match self.colours {
            0 | 1 => {
                if let Some(m) = masks.get_mut(0) {
                    *m = self.subset.unrank(rank);
                }
            }
            2 => {
                let (ones, twos) = self.unrank2_fast(rank);
                if let Some(m) = masks.get_mut(0) {
                    *m = ones;
                }
                if let Some(m) = masks.get_mut(1) {
                    *m = twos;
                }
            }
            _ => self.unrank_generic(rank, |i, colour| {
                if colour > 0 {
                    if let Some(m) = masks.get_mut(colour as usize - 1) {
                        *m |= 1 << i;
                    }
                }
            }),
        }
    }

    /// The two-colour fast path: rank of the board with colour-1 cells `ones`
    /// and colour-2 cells `twos`. For a space of another number of colours it
    /// ranks `[ones, twos]` like [`Multinomial::rank_masks`].
    #[inline]
    pub fn rank2(&self, ones: u64, twos: u64) -> u64 {
        self.rank_masks(&[ones, twos])
    }

    /// The two-colour fast path: `(ones, twos)` masks of the board of index
    /// `rank` (colours 1 and 2; for other spaces, the first two masks of
    /// [`Multinomial::unrank_masks`]).
    #[inline]
    pub fn unrank2(&self, rank: u64) -> (u64, u64) {
        if self.colours == 2 {
            self.unrank2_fast(rank)
        } else {
            let mut m = [0u64; 2];
            self.unrank_masks(rank, &mut m);
            (m[0], m[1])
        }
    }

    /// Checks that `board` belongs to the space: `cells` long, cells in
    /// `0..=c`, the space's count of every colour.
    pub fn check(&self, board: &[u8]) -> Result<(), HashError> {
        let bad = |message: String| HashError::Input {
            what: self.name(),
            message,
        };
        if board.len() != self.cells as usize {
            return Err(bad(format!(
                "board has {} cells, the space {}",
                board.len(),
                self.cells
            )));
        }
        let mut seen = [0u32; MAX_COLOURS + 1];
        for (i, &x) in board.iter().enumerate() {
            if u32::from(x) > self.colours {
                return Err(bad(format!(
                    "cell {i} holds {x}, colours are 0..={}",
                    self.colours
                )));
            }
            seen[x as usize] += 1;
        }
        let colours = self.colours as usize + 1;
        for (y, (&got, &want)) in seen.iter().zip(&self.left).take(colours).enumerate() {
            if got != want {
                return Err(bad(format!(
                    "board has {got} cells of colour {y}, the space {want}"
                )));
            }
        }
        Ok(())
    }

    /// [`Multinomial::rank`] after [`Multinomial::check`].
    pub fn checked_rank(&self, board: &[u8]) -> Result<u64, HashError> {
        self.check(board)?;
        Ok(self.rank(board))
    }

    /// [`Multinomial::unrank`] after checking `rank < size()` and the board's length.
    pub fn checked_unrank(&self, rank: u64, board: &mut [u8]) -> Result<(), HashError> {
        if rank >= self.size {
            return Err(HashError::Range {
                what: self.name(),
                rank,
                size: self.size,
            });
        }
        if board.len() != self.cells as usize {
            return Err(HashError::Input {
                what: self.name(),
                message: format!(
                    "output board has {} cells, the space {}",
                    board.len(),
                    self.cells
                ),
            });
        }
        self.unrank(rank, board);
        Ok(())
    }

    /// [`Multinomial::rank`] by the any-colour path, whatever the colours
    /// (for benchmarks and cross-checks of the two-colour path).
    pub(crate) fn rank_general(&self, board: &[u8]) -> u64 {
        self.rank_generic(|i| board.get(i).copied().unwrap_or(0))
    }

    /// [`Multinomial::unrank`] by the any-colour path.
    pub(crate) fn unrank_general(&self, rank: u64, board: &mut [u8]) {
        self.unrank_generic(rank, |i, colour| {
            if let Some(cell) = board.get_mut(i) {
                *cell = colour;
            }
        })
    }

    /// Index of the walk table's start state (all pieces left).
    #[inline(always)]
    fn walk_start(&self) -> usize {
        (self.left[0] * self.step[0] + self.left[1] * self.step[1] + self.left[2]) as usize
    }

    /// Word `slot` of walk state `state`, 0 outside the table (only bad
    /// input goes there, with indices that may have wrapped).
    #[inline(always)]
    fn walk_at(&self, state: usize, slot: usize) -> u64 {
        let at = state.wrapping_mul(4).wrapping_add(slot);
        self.walk.get(at).copied().unwrap_or(0)
    }

    /// Algorithm 1 for two colours over a cell array: per cell, one table
    /// read (indexed by the cell's colour) and one index step.
    #[inline]
    fn rank2_cells(&self, board: &[u8]) -> u64 {
        let mut state = self.walk_start();
        let mut r = 0u64;
        for &x in board.iter().take(self.cells as usize) {
            let x = usize::from(x & 3);
            r = r.wrapping_add(self.walk_at(state, x));
            state = state.wrapping_sub(*self.step.get(x).unwrap_or(&0) as usize);
        }
        r
    }

    /// Algorithm 1 for two colours over masks, visiting only the cells that
    /// are not 2 (the only ones that add to the rank).
    #[inline]
    fn rank2_fast(&self, ones: u64, twos: u64) -> u64 {
        let n = self.cells;
        let full = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let [s0, s1, _] = self.step;
        let mut rest = full & !twos;
        let mut state = self.walk_start();
        let mut next = 0u32; // the cell after the last one visited
        let mut r = 0u64;
        while rest != 0 {
            let i = rest.trailing_zeros();
            rest &= rest - 1;
            // The 2s skipped since the last visited cell are used up.
            state = state.wrapping_sub(i.wrapping_sub(next) as usize);
            let is_one = ((ones >> i) & 1) as usize;
            r = r.wrapping_add(self.walk_at(state, is_one));
            state = state.wrapping_sub(if is_one == 1 { s1 } else { s0 } as usize);
            next = i + 1;
        }
        r
    }

    /// Algorithm 2 for two colours, to `(ones, twos)` masks: per cell one
    /// table read (a pair) and branch-free selects.
    #[inline]
    fn unrank2_fast(&self, rank: u64) -> (u64, u64) {
        let mut r = rank.min(self.size.wrapping_sub(1));
        let [s0, s1, _] = self.step.map(|s| s as usize);
        let mut state = self.walk_start();
        let mut pieces = self.left[1] + self.left[2];
        let (mut ones, mut twos) = (0u64, 0u64);
        let mut i = 0u32;
        while pieces != 0 {
            // Boards starting with 2, and with 2 or 1, from this state.
            let (below1, below0) = (self.walk_at(state, 1), self.walk_at(state, 0));
            let is2 = u64::from(r < below1);
            let is1 = (is2 ^ 1) & u64::from(r < below0);
            let is0 = (is2 | is1) ^ 1;
            let (m1, m0) = (is1.wrapping_neg(), is0.wrapping_neg());
            r = r.wrapping_sub((below1 & m1) | (below0 & m0));
            state = state.wrapping_sub((is2 as usize) | (s1 & m1 as usize) | (s0 & m0 as usize));
            twos |= is2 << (i & 63);
            ones |= is1 << (i & 63);
            pieces -= (is2 | is1) as u32;
            i += 1;
        }
        (ones, twos)
    }

    /// Algorithm 1 for any number of colours; `colour(i)` reads cell `i`.
    #[inline]
    fn rank_generic(&self, colour: impl Fn(usize) -> u8) -> u64 {
        let n = self.cells;
        let c = self.colours as usize;
        let mut left = self.left;
        let mut here = self.size; // boards of the remaining multiset
        let mut r = 0u64;
        for i in 0..n {
            let m = (n - i) as usize;
            let x = colour(i as usize) as usize;
            // Pieces ordered before x: colours above it (all colours for an empty).
            let lo = if x == 0 { 1 } else { x + 1 };
            let mut before = 0u32;
            for &l in left.iter().take(c + 1).skip(lo) {
                before = before.wrapping_add(l);
            }
            r = r.wrapping_add(div_exact(u128::from(here) * u128::from(before), m));
            let lx = left.get(x).copied().unwrap_or(0);
            here = div_exact(u128::from(here) * u128::from(lx), m);
            if let Some(l) = left.get_mut(x) {
                *l = l.wrapping_sub(1);
            }
        }
        r
    }

    /// Algorithm 2 for any number of colours; `emit(i, colour)` writes cell `i`.
    #[inline]
    fn unrank_generic(&self, rank: u64, mut emit: impl FnMut(usize, u8)) {
        let n = self.cells;
        let c = self.colours as usize;
        let mut r = rank.min(self.size.wrapping_sub(1));
        let mut left = self.left;
        let mut here = self.size;
        for i in 0..n {
            let m = (n - i) as usize;
            // Try the colours in order c, c-1, ..., 1, then empty.
            let mut chosen = 0usize;
            for step in 0..=c {
                let y = if step == c { 0 } else { c - step };
                let with_y = div_exact(u128::from(here) * u128::from(left[y]), m);
                if r < with_y || step == c {
                    chosen = y;
                    here = with_y;
                    break;
                }
                r -= with_y;
            }
            left[chosen] = left[chosen].wrapping_sub(1);
            emit(i as usize, chosen as u8);
        }
    }
}

/// With `m` cells left holding `l1` 1s and `l2` 2s (and the rest empty):
/// the boards of the rest starting with a 2, `M(m-1; l2-1, l1, .) =
/// C(m-1, l2-1) C(m-l2, l1)`, and those starting with a 1, `M(m-1; l2, l1-1, .)
/// = C(m-1, l2) C(m-1-l2, l1-1)`; a count of -1 (wrapped) reads C = 0.
#[inline(always)]
fn starts(m: u32, l1: u32, l2: u32) -> (u64, u64) {
    let rest = m.wrapping_sub(1);
    let a = binom(rest, l2.wrapping_sub(1)).wrapping_mul(binom(m.wrapping_sub(l2), l1));
    let b = binom(rest, l2).wrapping_mul(binom(rest.wrapping_sub(l2), l1.wrapping_sub(1)));
    (a, b)
}

/// The mask of the cells holding colour 1 among the first `cells`.
#[inline(always)]
fn ones_of(board: &[u8], cells: u32) -> u64 {
    let mut mask = 0u64;
    for (i, &x) in board.iter().take(cells as usize).enumerate() {
        mask |= u64::from(x == 1) << i;
    }
    mask
}

/// The colour of cell `i` given one mask per colour (0 when in none).
#[inline(always)]
fn colour_at(masks: &[u64], i: usize) -> u8 {
    let mut colour = 0u8;
    for (j, &m) in masks.iter().enumerate().take(MAX_COLOURS) {
        if (m >> (i & 63)) & 1 == 1 {
            colour = j as u8 + 1;
        }
    }
    colour
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths agree on every board of small two-colour spaces.
    #[test]
    fn two_colour_paths_agree_with_the_general_path() {
        for n in 0..=7usize {
            for k1 in 0..=n as u32 {
                for k2 in 0..=(n as u32 - k1) {
                    let h = Multinomial::new(n, &[k1, k2]).unwrap();
                    let mut board = [0u8; 7];
                    let mut again = [0u8; 7];
                    for r in 0..h.size() {
                        h.unrank_general(r, &mut board[..n]);
                        h.unrank(r, &mut again[..n]);
                        assert_eq!(board, again, "n={n} {k1}+{k2} r={r}");
                        assert_eq!(h.rank_general(&board[..n]), r);
                        assert_eq!(h.rank(&board[..n]), r);
                        let (ones, twos) = h.unrank2(r);
                        assert_eq!(h.rank2(ones, twos), r);
                    }
                }
                // One colour: the binomial path against the general one.
                let h = Multinomial::new(n, &[k1]).unwrap();
                let mut board = [0u8; 7];
                for r in 0..h.size() {
                    h.unrank_general(r, &mut board[..n]);
                    assert_eq!(h.rank(&board[..n]), r, "n={n} {k1} r={r}");
                    let mut again = [0u8; 7];
                    h.unrank(r, &mut again[..n]);
                    assert_eq!(board, again);
                }
            }
        }
    }
}
