//! One Connect Four partition solved in the form the GPU runs it
//! (`kernels/connect4.cu`, one thread per index), with its CPU twin.
//!
//! The bytes are exactly those of [`crate::solve::solve_partition`] on the
//! game `connect4` (src/game/connect4.rs), whose hash this file repeats bit
//! for bit:
//! - partition `n` = pieces on the board, `k = ceil(n/2)` of them the first
//!   player's; `rank = H(heights) * C(n, k) + B(first)`, `H` the
//!   lexicographic rank of the column heights among the bounded compositions
//!   of `n` (caps `height`), `B` the colexicographic rank of the `n`-bit word
//!   that says which filled cells (column by column, bottom up) are the first
//!   player's;
//! - an index is illegal (byte 0) when both players have a four, or the
//!   player who did not move last has one;
//! - a legal position with a four is lost for the side to move (distance 0),
//!   a full board without one is a draw; otherwise every move adds a piece,
//!   so every successor lies in partition `n + 1` and the first scan of
//!   `solve_partition` decides the position by the combine rule
//!   (`solve::rules::Combine`): the quickest win through a successor lost at
//!   even distance `e` (`e + 1`), else, when every successor is a win, the
//!   longest of them plus one, else a draw.
//!
//! In value bytes (`2 + distance`): an even byte `>= 2` is a loss for the
//! successor's mover, an odd one a win, 1 a draw, 0 illegal (which a move
//! never reaches: the solver reports it as a broken game contract).
//!
//! No partition has moves inside itself, so there are no passes: one thread
//! per index computes its byte from partition `n + 1`'s bytes, and a whole
//! build is one launch per partition.

use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;

/// Rows of the binomial table: `C(i, j)` for `i` in `0..=64`.
pub const BIN_ROWS: usize = 65;
/// Columns of the binomial table: `C(i, j)` for `j` in `0..=32` (a board has
/// at most 60 cells, so a first player at most 30 pieces plus the one dropped).
pub const BIN_COLS: usize = 33;

/// The largest width the game accepts.
const MAX_WIDTH: u32 = 9;
/// The largest height the game accepts.
const MAX_HEIGHT: u32 = 16;

/// Failure bits of one index (the kernel ORs them into one word).
pub mod fail {
    /// A move reaches an index of partition `n + 1` whose byte is 0 (illegal).
    pub const ILLEGAL_SUCCESSOR: u32 = 1;
    /// The value's distance does not fit a value byte.
    pub const DISTANCE: u32 = 2;
}

/// One partition of Connect Four on a `width` x `height` board: the boards
/// with `n` pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connect4SolveSpec {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Pieces on the board (the partition).
    pub n: u32,
}

impl Connect4SolveSpec {
    /// The partition of `n` pieces; refuses boards the game refuses and `n`
    /// beyond the number of cells.
    pub fn new(width: u32, height: u32, n: u32) -> Result<Connect4SolveSpec> {
        if !(1..=MAX_WIDTH).contains(&width)
            || !(1..=MAX_HEIGHT).contains(&height)
            || width * (height + 1) > 64
        {
            return Err(Error::Cuda(format!(
                "connect4 {width}x{height}: the board must have 1..={MAX_WIDTH} columns, \
                 1..={MAX_HEIGHT} rows and width * (height + 1) <= 64"
            )));
        }
        if n > width * height {
            return Err(Error::Cuda(format!(
                "connect4 {width}x{height} has no partition of {n} pieces (at most {})",
                width * height
            )));
        }
        Ok(Connect4SolveSpec { width, height, n })
    }

    /// Cells of the board.
    pub fn cells(&self) -> u32 {
        self.width * self.height
    }

    /// The partition this one's moves lead to (`None` for the full board).
    pub fn next(&self) -> Option<Connect4SolveSpec> {
        (self.n < self.cells()).then_some(Connect4SolveSpec {
            n: self.n + 1,
            ..*self
        })
    }

    /// The game's name of the partition (`ply07`).
    pub fn name(&self) -> String {
        format!("ply{:02}", self.n)
    }
}

/// The tables of one board size, as the kernel receives them in one `u64`
/// array (see [`Connect4Tables::flat`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connect4Tables {
    width: u32,
    height: u32,
    /// `binom[i * BIN_COLS + j] = C(i, j)`.
    binom: Vec<u64>,
    /// `ways[i * (cells + 1) + s]`: ways columns `i..width` hold `s` pieces.
    ways: Vec<u64>,
    /// `prefix[i * (cells + 2) + s] = sum_{t < s} ways[i][t]` (wrapping).
    prefix: Vec<u64>,
}

impl Connect4Tables {
    /// Tables of the board of `spec` (any partition); fails if a partition
    /// has more than 2^64 indices.
    pub fn new(spec: Connect4SolveSpec) -> Result<Connect4Tables> {
        let (width, height) = (spec.width, spec.height);
        let cells = spec.cells() as usize;
        let mut binom = vec![0u64; BIN_ROWS * BIN_COLS];
        for i in 0..BIN_ROWS {
            binom[i * BIN_COLS] = 1;
            for j in 1..BIN_COLS.min(i + 1) {
                // C(64, 32) < 2^63: no overflow.
                binom[i * BIN_COLS + j] =
                    binom[(i - 1) * BIN_COLS + j - 1] + binom[(i - 1) * BIN_COLS + j];
            }
        }
        let too_big = || {
            Error::Cuda(format!(
                "connect4 {width}x{height} has more positions than a 64-bit index holds"
            ))
        };
        let w = width as usize;
        let stride = cells + 1;
        let mut ways = vec![0u64; (w + 1) * stride];
        ways[w * stride] = 1;
        for i in (0..w).rev() {
            for s in 0..stride {
                let mut sum: u64 = 0;
                for v in 0..=(height as usize).min(s) {
                    sum = sum
                        .checked_add(ways[(i + 1) * stride + s - v])
                        .ok_or_else(too_big)?;
                }
                ways[i * stride + s] = sum;
            }
        }
        let mut prefix = vec![0u64; (w + 1) * (stride + 1)];
        for i in 0..=w {
            for s in 0..stride {
                prefix[i * (stride + 1) + s + 1] =
                    prefix[i * (stride + 1) + s].wrapping_add(ways[i * stride + s]);
            }
        }
        let t = Connect4Tables {
            width,
            height,
            binom,
            ways,
            prefix,
        };
        for n in 0..=spec.cells() {
            t.count(n).ok_or_else(too_big)?;
        }
        Ok(t)
    }

    fn cells(&self) -> usize {
        (self.width * self.height) as usize
    }

    #[inline]
    fn binom(&self, i: u32, j: u32) -> u64 {
        self.binom[i as usize * BIN_COLS + j as usize]
    }

    /// Indices of partition `n` (None past 2^64).
    fn count(&self, n: u32) -> Option<u64> {
        let k = n.div_ceil(2);
        self.ways[n as usize].checked_mul(self.binom(n, k))
    }

    /// Indices of partition `n` (0 past the full board).
    pub fn size(&self, n: u32) -> u64 {
        if n as usize > self.cells() {
            0
        } else {
            self.count(n).unwrap_or(0)
        }
    }

    /// Offset of the `ways` table in [`Self::flat`] (the binomials come first).
    pub fn ways_offset(&self) -> u32 {
        self.binom.len() as u32
    }

    /// Offset of the `prefix` table in [`Self::flat`].
    pub fn prefix_offset(&self) -> u32 {
        (self.binom.len() + self.ways.len()) as u32
    }

    /// Every table in one array: binomials (`BIN_ROWS` x `BIN_COLS`), then
    /// `ways` (`width + 1` rows of `cells + 1`), then `prefix` (`width + 1`
    /// rows of `cells + 2`).
    pub fn flat(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.binom.len() + self.ways.len() + self.prefix.len());
        v.extend_from_slice(&self.binom);
        v.extend_from_slice(&self.ways);
        v.extend_from_slice(&self.prefix);
        v
    }
}

/// Four in a row on one player's bitboard (`stride = height + 1` bits per
/// column, the top one an always-empty guard, so no line wraps).
#[inline]
fn has_four(b: u64, stride: u32) -> bool {
    let mut any = 0u64;
    for d in [1, stride, stride - 1, stride + 1] {
        let m = b & (b >> d);
        any |= m & (m >> (2 * d));
    }
    any != 0
}

/// The CPU twin of `kernels/connect4.cu`: the same per-index computation.
#[derive(Clone, Debug)]
pub struct Connect4Twin<'a> {
    spec: Connect4SolveSpec,
    tables: Connect4Tables,
    next: &'a [u8],
}

impl<'a> Connect4Twin<'a> {
    /// The twin for `spec` given partition `n + 1`'s values (`None`, or an
    /// empty slice, for the full board, which has no successors).
    pub fn new(spec: Connect4SolveSpec, next: Option<&'a [u8]>) -> Result<Connect4Twin<'a>> {
        let tables = Connect4Tables::new(spec)?;
        let next = next.unwrap_or(&[]);
        check_next(spec, &tables, next)?;
        Ok(Connect4Twin { spec, tables, next })
    }

    /// Indices of the partition.
    pub fn size(&self) -> u64 {
        self.tables.size(self.spec.n)
    }

    /// The tables the kernel receives.
    pub fn tables(&self) -> &Connect4Tables {
        &self.tables
    }

    /// The byte of index `r` (below [`Self::size`]) and its failure bits
    /// ([`fail`]; 0 when none), computed as one kernel thread does.
    pub fn value_of(&self, r: u64) -> (u8, u32) {
        let t = &self.tables;
        let (w, h, n) = (self.spec.width, self.spec.height, self.spec.n);
        let cells = w * h;
        let stride = h + 1;
        let k = n.div_ceil(2);
        let per = t.binom(n, k);
        // Column heights: bounded-composition unrank of r / C(n, k).
        let mut hr = r / per;
        let mut heights = [0u32; MAX_WIDTH as usize];
        let mut rest = n;
        let wstride = cells as usize + 1;
        for (i, slot) in heights.iter_mut().enumerate().take(w as usize) {
            let row = (i + 1) * wstride;
            let mut x = 0;
            while x < h.min(rest) {
                let c = t.ways[row + (rest - x) as usize];
                if hr < c {
                    break;
                }
                hr -= c;
                x += 1;
            }
            *slot = x;
            rest -= x;
        }
        // First player's cells: branch-free colex unrank of r mod C(n, k).
        let mut b = r % per;
        let mut kk = k;
        let mut which: u64 = 0;
        for i in (0..n).rev() {
            let c = t.binom(i, kk);
            let take = u64::from(b >= c);
            which |= take << i;
            b -= c & take.wrapping_neg();
            kk -= take as u32;
        }
        let (mut first, mut second) = (0u64, 0u64);
        let mut rest_bits = which;
        for (c, &hc) in heights.iter().enumerate().take(w as usize) {
            let filled = (1u64 << hc) - 1;
            let shift = c as u32 * stride;
            first |= (rest_bits & filled) << shift;
            second |= (!rest_bits & filled) << shift;
            rest_bits >>= hc;
        }
        let f4 = has_four(first, stride);
        let s4 = has_four(second, stride);
        let first_moved_last = n % 2 == 1;
        // Illegal: a four for the player who did not move last (this covers
        // both players having one).
        if (first_moved_last && s4) || (!first_moved_last && f4) {
            return (Value::ILLEGAL.to_byte(), 0);
        }
        if f4 || s4 {
            return (Value::at_distance(0).expect("0 fits").to_byte(), 0);
        }
        if n == cells {
            return (Value::DRAW.to_byte(), 0);
        }
        // Every move adds a piece: successors are in partition n + 1.
        let ins = u64::from(n % 2 == 0);
        let k1 = k + ins as u32;
        let per1 = t.binom(n + 1, k1);
        let pstride = cells as usize + 2;
        let mut best_win: u32 = 256; // smallest even byte (a lost successor)
        let mut longest: u32 = 0; // largest odd byte (a won successor)
        let mut all_won = true;
        let mut failed = 0;
        let mut offset = 0;
        for c in 0..w as usize {
            let hc = heights[c];
            let p = offset + hc;
            offset += hc;
            if hc == h {
                continue;
            }
            // Heights rank with column c one higher, at sum n + 1.
            let mut hrank: u64 = 0;
            let mut rest = n + 1;
            for (i, &hi) in heights.iter().enumerate().take(w as usize) {
                let x = hi + u32::from(i == c);
                let row = (i + 1) * pstride + rest as usize + 1;
                hrank = hrank.wrapping_add(t.prefix[row].wrapping_sub(t.prefix[row - x as usize]));
                rest -= x;
            }
            // The colour word with the new piece's bit inserted at p.
            let low = which & ((1u64 << p) - 1);
            let mut word = low | (ins << p) | ((which >> p) << (p + 1));
            let mut brank: u64 = 0;
            let mut j = 0;
            while word != 0 {
                let i = word.trailing_zeros();
                word &= word - 1;
                j += 1;
                brank += t.binom(i, j);
            }
            let v = u32::from(self.next[(hrank * per1 + brank) as usize]);
            if v == 0 {
                failed |= fail::ILLEGAL_SUCCESSOR;
            } else if v == 1 {
                all_won = false;
            } else if v % 2 == 0 {
                best_win = best_win.min(v);
            } else {
                longest = longest.max(v);
            }
        }
        let byte = if best_win < 256 {
            best_win + 1
        } else if all_won {
            longest + 1
        } else {
            u32::from(Value::DRAW.to_byte())
        };
        if byte > 255 {
            failed |= fail::DISTANCE;
        }
        if failed != 0 {
            return (Value::ILLEGAL.to_byte(), failed);
        }
        (byte as u8, 0)
    }

    /// The whole partition, on all cores.
    pub fn solve(&self) -> Result<Vec<u8>> {
        let size = usize::try_from(self.size())
            .map_err(|_| Error::Cuda("partition larger than memory".into()))?;
        let mut out = vec![0u8; size];
        const CHUNK: usize = 1 << 14;
        let failed = out
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut f = 0;
                for (i, slot) in chunk.iter_mut().enumerate() {
                    let (v, bits) = self.value_of((c * CHUNK + i) as u64);
                    *slot = v;
                    f |= bits;
                }
                f
            })
            .reduce(|| 0, |a, b| a | b);
        check_fail(self.spec, failed)?;
        Ok(out)
    }
}

/// Checks that `next` holds partition `n + 1`'s values (empty for the full board).
pub fn check_next(spec: Connect4SolveSpec, tables: &Connect4Tables, next: &[u8]) -> Result<()> {
    let want = match spec.next() {
        Some(s) => tables.size(s.n),
        None => 0,
    };
    if next.len() as u64 != want {
        return Err(Error::Cuda(format!(
            "connect4 {}x{} {}: partition {} holds {} values, expected {want}",
            spec.width,
            spec.height,
            spec.name(),
            spec.n + 1,
            next.len()
        )));
    }
    Ok(())
}

/// Turns the failure bits of a solve (the kernel's or the twin's) into the
/// errors [`crate::solve::solve_partition`] reports.
pub fn check_fail(spec: Connect4SolveSpec, bits: u32) -> Result<()> {
    if bits & fail::ILLEGAL_SUCCESSOR != 0 {
        return Err(Error::GameContract {
            game: "connect4".into(),
            message: format!(
                "a move from partition {} reaches an index of partition {} that the game calls illegal",
                spec.n,
                spec.n + 1
            ),
        });
    }
    if bits & fail::DISTANCE != 0 {
        return Err(Error::DistanceOverflow {
            game: "connect4".into(),
            partition: spec.name(),
            max: Value::MAX_DISTANCE,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_closed_form() {
        // By hand: 1 empty board; 4 one-piece boards; height vectors of sum 2
        // over 4 columns: C(5, 2) = 10, times C(2, 1) colourings; the full
        // board: one height vector, C(16, 8) colourings.
        let t = Connect4Tables::new(Connect4SolveSpec::new(4, 4, 0).unwrap()).unwrap();
        assert_eq!(t.size(0), 1);
        assert_eq!(t.size(1), 4);
        assert_eq!(t.size(2), 20);
        assert_eq!(t.size(16), 12870); // one height vector, C(16, 8)
        assert_eq!(t.size(17), 0);
    }

    #[test]
    fn bad_boards_are_refused() {
        assert!(Connect4SolveSpec::new(10, 4, 0).is_err());
        assert!(Connect4SolveSpec::new(8, 8, 0).is_err());
        assert!(Connect4SolveSpec::new(4, 4, 17).is_err());
        let spec = Connect4SolveSpec::new(4, 4, 3).unwrap();
        assert!(Connect4Twin::new(spec, Some(&[2u8; 5])).is_err());
        assert!(Connect4Twin::new(spec, None).is_err());
    }
}
