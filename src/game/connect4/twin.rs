//! One Connect Four partition solved in the form the GPU runs it
//! (`kernels/connect4.cu`), and the forward search of one, with their CPU
//! twins.
//!
//! The bytes are exactly those of [`crate::solve::solve_partition_reached`]
//! on the game `connect4` (src/game/connect4/mod.rs), whose hash this file
//! repeats bit for bit:
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
//! Plies are layered ([`crate::game::Forward::Layer`]): only positions that
//! the forward search reaches from the empty board are solved, and a build
//! holds each ply compact ([`crate::game::ReachedValues`]: reached bits, a
//! rank directory, a byte per reached index). [`expand`] (kernel
//! `connect4_expand`) is the search's step from ply `n` to ply `n + 1`;
//! [`Connect4Twin::solve`] (kernel `connect4_solve`) computes the byte of
//! every reached index of ply `n` from ply `n + 1` held compact, and answers
//! compact too. A reached position's moves all reach reached positions, so
//! a successor missing from ply `n + 1`'s bits is a broken input, reported
//! as such.
//!
//! No partition has moves inside itself, so there are no passes: one thread
//! per reached index computes its byte, and a whole build is one launch per
//! partition. For the same reason a ply splits over a team by its words
//! alone: [`Connect4Twin::solve_words`] solves the reached indices of a range
//! of words, whose values are a contiguous run of the ply's compact values
//! ([`member_slots`]), and [`gather_slices`] joins the members' runs.

use crate::dist::{slice_of, Team};
use crate::game::reached::{block_ranks, WORDS_PER_BLOCK};
use crate::game::ReachedView;
use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
    /// A move reaches an index of partition `n + 1` whose reached bit is
    /// not set (no value is held for it).
    pub const UNREACHED_SUCCESSOR: u32 = 4;
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

/// What an index of a partition holds (`c4_decode` in the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No position: a four for the player who did not move last.
    Illegal,
    /// A four on the board: lost for the side to move, not expanded.
    Lost,
    /// A full board without a four: drawn, not expanded.
    Drawn,
    /// A position with moves.
    Ongoing,
}

/// A position decoded from its index, as one kernel thread holds it.
#[derive(Clone, Copy, Debug)]
struct Board {
    heights: [u32; MAX_WIDTH as usize],
    /// Which filled cells (column by column, bottom up) are the first player's.
    which: u64,
    kind: Kind,
}

impl Connect4Tables {
    /// Index `r` of partition `n` decoded (`c4_decode`).
    fn decode(&self, n: u32, r: u64) -> Board {
        let (w, h) = (self.width, self.height);
        let cells = self.cells() as u32;
        let stride = h + 1;
        let k = n.div_ceil(2);
        let per = self.binom(n, k);
        // Column heights: bounded-composition unrank of r / C(n, k).
        let mut hr = r / per;
        let mut heights = [0u32; MAX_WIDTH as usize];
        let mut rest = n;
        let wstride = cells as usize + 1;
        for (i, slot) in heights.iter_mut().enumerate().take(w as usize) {
            let row = (i + 1) * wstride;
            let mut x = 0;
            while x < h.min(rest) {
                let c = self.ways[row + (rest - x) as usize];
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
            let c = self.binom(i, kk);
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
        let kind = if (first_moved_last && s4) || (!first_moved_last && f4) {
            Kind::Illegal
        } else if f4 || s4 {
            Kind::Lost
        } else if n == cells {
            Kind::Drawn
        } else {
            Kind::Ongoing
        };
        Board {
            heights,
            which,
            kind,
        }
    }

    /// What index `r` of partition `n` (below [`Self::size`]) holds.
    pub fn kind(&self, n: u32, r: u64) -> Kind {
        self.decode(n, r).kind
    }

    /// Calls `visit` with the index in partition `n + 1` of every move of
    /// the position `board` of partition `n`, column by column
    /// (`c4_successor`); a full column has none.
    #[inline]
    fn for_each_successor(&self, n: u32, board: &Board, mut visit: impl FnMut(u64)) {
        let (w, h) = (self.width as usize, self.height);
        let ins = u64::from(n % 2 == 0);
        let k1 = n.div_ceil(2) + ins as u32;
        let per1 = self.binom(n + 1, k1);
        let pstride = self.cells() + 2;
        let heights = &board.heights[..w];
        let which = board.which;
        let mut offset = 0;
        for c in 0..w {
            let hc = heights[c];
            let p = offset + hc;
            offset += hc;
            if hc == h {
                continue;
            }
            // Heights rank with column c one higher, at sum n + 1.
            let mut hrank: u64 = 0;
            let mut rest = n + 1;
            for (i, &hi) in heights.iter().enumerate() {
                let x = hi + u32::from(i == c);
                let row = (i + 1) * pstride + rest as usize + 1;
                hrank = hrank
                    .wrapping_add(self.prefix[row].wrapping_sub(self.prefix[row - x as usize]));
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
                brank += self.binom(i, j);
            }
            visit(hrank.wrapping_mul(per1).wrapping_add(brank));
        }
    }

    /// The indices in partition `n + 1` that the moves of index `r` of
    /// partition `n` reach (none for a position that is not
    /// [`Kind::Ongoing`]), into `out`; returns what `r` holds.
    pub fn successors(&self, n: u32, r: u64, out: &mut Vec<u64>) -> Kind {
        out.clear();
        let board = self.decode(n, r);
        if board.kind == Kind::Ongoing {
            self.for_each_successor(n, &board, |s| out.push(s));
        }
        board.kind
    }
}

/// Indices in the runs [`for_each_reached_run`] hands out: 64 directory
/// blocks, a task's worth of work.
const RUN_BLOCKS: usize = 64;

/// Reached indices of `bits` (directory `dir`) below word `w`'s first index
/// (`w` up to `bits.len()`): `c4_rank_before` in the kernel.
pub fn rank_before(bits: &[u64], dir: &[u64], w: usize) -> u64 {
    let b = w / WORDS_PER_BLOCK;
    dir[b]
        + bits[b * WORDS_PER_BLOCK..w]
            .iter()
            .map(|x| u64::from(x.count_ones()))
            .sum::<u64>()
}

/// Splits `out` (one slot per reached index of `bits[words]`, directory `dir`
/// of all of `bits`) into runs that end on multiples of [`RUN_BLOCKS`]
/// directory blocks and calls `f(first word, words, run)` for each, on all
/// cores, OR-ing what they return.
fn for_each_reached_run<T: Send>(
    bits: &[u64],
    dir: &[u64],
    words: Range<usize>,
    out: &mut [T],
    f: impl Fn(usize, &[u64], &mut [T]) -> u32 + Sync,
) -> u32 {
    let step = RUN_BLOCKS * WORDS_PER_BLOCK;
    let mut runs = Vec::with_capacity(words.len() / step + 2);
    let mut rest = out;
    let (mut w0, mut r0) = (words.start, rank_before(bits, dir, words.start));
    while w0 < words.end {
        let w1 = ((w0 / step + 1) * step).min(words.end);
        let r1 = rank_before(bits, dir, w1);
        let (run, tail) = rest.split_at_mut((r1 - r0) as usize);
        runs.push((w0, w1, run));
        rest = tail;
        (w0, r0) = (w1, r1);
    }
    runs.into_par_iter()
        .map(|(w0, w1, run)| f(w0, &bits[w0..w1], run))
        .reduce(|| 0, |a, b| a | b)
}

/// Checks that `reached` holds partition `spec`'s reached bits (at least a
/// word per 64 indices, none set past its size) and returns its words.
pub fn check_reached<'r>(
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    reached: &'r [u64],
) -> Result<&'r [u64]> {
    let size = tables.size(spec.n);
    let words = size.div_ceil(64) as usize;
    let bad = |what: String| {
        Err(Error::NotAvailable(format!(
            "connect4 {}x{} {}: the reached bits {what}",
            spec.width,
            spec.height,
            spec.name()
        )))
    };
    if reached.len() < words {
        return bad(format!("hold {} words, {words} are needed", reached.len()));
    }
    let reached = &reached[..words];
    if size % 64 != 0 && reached[words - 1] >> (size % 64) != 0 {
        return bad(format!("have bits set past the partition's {size} indices"));
    }
    Ok(reached)
}

/// Checks that `next` is partition `n + 1` held compact (`None` exactly for
/// the full board, which has no successors): a word of bits per 64 indices,
/// a directory entry per block and one past, a value per reached index.
pub fn check_next(
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    next: Option<&ReachedView<'_>>,
) -> Result<()> {
    let bad = |what: String| {
        Err(Error::NotAvailable(format!(
            "connect4 {}x{} {}: partition ply{:02} {what}",
            spec.width,
            spec.height,
            spec.name(),
            spec.n + 1
        )))
    };
    let (Some(s), Some(next)) = (spec.next(), next) else {
        return match spec.next() {
            Some(_) => bad("is not given: it is solved before this one".into()),
            None => Ok(()),
        };
    };
    let words = tables.size(s.n).div_ceil(64) as usize;
    let blocks = words.div_ceil(WORDS_PER_BLOCK);
    if next.bits.len() != words || next.block_ranks.len() != blocks + 1 {
        return bad(format!(
            "holds {} words of bits and {} directory entries, expected {words} and {}",
            next.bits.len(),
            next.block_ranks.len(),
            blocks + 1
        ));
    }
    if next.block_ranks[blocks] != next.values.len() as u64 {
        return bad(format!(
            "holds {} values for {} reached indices",
            next.values.len(),
            next.block_ranks[blocks]
        ));
    }
    Ok(())
}

/// The CPU twin of `connect4_solve` in `kernels/connect4.cu`: the same
/// per-index computation, reading partition `n + 1` compact.
#[derive(Clone, Debug)]
pub struct Connect4Twin<'a> {
    spec: Connect4SolveSpec,
    tables: Connect4Tables,
    next: Option<ReachedView<'a>>,
}

impl<'a> Connect4Twin<'a> {
    /// The twin for `spec` given partition `n + 1` held compact (`None` for
    /// the full board, which has no successors).
    pub fn new(spec: Connect4SolveSpec, next: Option<ReachedView<'a>>) -> Result<Connect4Twin<'a>> {
        let tables = Connect4Tables::new(spec)?;
        check_next(spec, &tables, next.as_ref())?;
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
        let board = self.tables.decode(self.spec.n, r);
        match board.kind {
            Kind::Illegal => return (Value::ILLEGAL.to_byte(), 0),
            Kind::Lost => return (Value::at_distance(0).expect("0 fits").to_byte(), 0),
            Kind::Drawn => return (Value::DRAW.to_byte(), 0),
            Kind::Ongoing => {}
        }
        let mut best_win: u32 = 256; // smallest even byte (a lost successor)
        let mut longest: u32 = 0; // largest odd byte (a won successor)
        let mut all_won = true;
        let mut failed = 0;
        self.tables.for_each_successor(self.spec.n, &board, |s| {
            let slot = self.next.as_ref().and_then(|next| next.slot(s));
            let Some(slot) = slot else {
                failed |= fail::UNREACHED_SUCCESSOR;
                return;
            };
            let v = u32::from(self.next.as_ref().expect("a slot").values[slot]);
            if v == 0 {
                failed |= fail::ILLEGAL_SUCCESSOR;
            } else if v == 1 {
                all_won = false;
            } else if v % 2 == 0 {
                best_win = best_win.min(v);
            } else {
                longest = longest.max(v);
            }
        });
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

    /// The values of the indices whose bits are set in `reached`, one per
    /// reached index in index order, on all cores.
    pub fn solve(&self, reached: &[u64]) -> Result<Vec<u8>> {
        let words = reached
            .len()
            .min(self.tables.size(self.spec.n).div_ceil(64) as usize);
        let (values, failed) = self.solve_words(reached, 0..words as u64)?;
        check_fail(self.spec, failed)?;
        Ok(values)
    }

    /// The values of the reached indices of `reached[words]` only (a team
    /// member's slice), in index order: slots `rank_before(words.start) ..
    /// rank_before(words.end)` of the whole ply's compact values; with the
    /// failure bits of those indices unchecked ([`fail`]), for the team to
    /// OR before any member reports them, so that all fail alike.
    pub fn solve_words(&self, reached: &[u64], words: Range<u64>) -> Result<(Vec<u8>, u32)> {
        let reached = check_reached(self.spec, &self.tables, reached)?;
        self.solve_words_dir(reached, &block_ranks(reached), words)
    }

    /// [`Self::solve_words`] given the directory `dir` of `reached`
    /// (`block_ranks`), which a team member also needs to join the pieces.
    pub fn solve_words_dir(
        &self,
        reached: &[u64],
        dir: &[u64],
        words: Range<u64>,
    ) -> Result<(Vec<u8>, u32)> {
        let reached = check_reached(self.spec, &self.tables, reached)?;
        let words = check_words(self.spec, reached, words)?;
        if dir.len() != reached.len().div_ceil(WORDS_PER_BLOCK) + 1 {
            return Err(Error::NotAvailable(format!(
                "connect4 {}: a directory of {} entries for {} words",
                self.spec.name(),
                dir.len(),
                reached.len()
            )));
        }
        let total = rank_before(reached, dir, words.end) - rank_before(reached, dir, words.start);
        let total = usize::try_from(total)
            .map_err(|_| Error::NotAvailable("more reached indices than memory holds".into()))?;
        let mut out = vec![0u8; total];
        let failed = for_each_reached_run(reached, dir, words, &mut out, |w0, words, run| {
            let mut f = 0;
            let mut next = 0;
            for (i, &word) in words.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    let r = (w0 + i) as u64 * 64 + u64::from(word.trailing_zeros());
                    word &= word - 1;
                    let (v, bits) = self.value_of(r);
                    run[next] = v;
                    next += 1;
                    f |= bits;
                }
            }
            f
        });
        Ok((out, failed))
    }
}

/// `words` as a range of `reached`'s words, if it lies inside them.
pub fn check_words(
    spec: Connect4SolveSpec,
    reached: &[u64],
    words: Range<u64>,
) -> Result<Range<usize>> {
    if words.start > words.end || words.end > reached.len() as u64 {
        return Err(Error::NotAvailable(format!(
            "connect4 {}x{} {}: words {}..{} of {} reached words asked for",
            spec.width,
            spec.height,
            spec.name(),
            words.start,
            words.end,
            reached.len()
        )));
    }
    Ok(words.start as usize..words.end as usize)
}

/// Words of reached bits per unit of a team member's slice: a directory
/// block, so that each member's first slot is a directory entry as it stands
/// (no words before it in its block to count) and no block of the directory
/// is shared by two members.
pub const TEAM_ALIGN: u64 = WORDS_PER_BLOCK as u64;

/// The slots of the compact values (`rank_before` of its bounds) that member
/// `rank` of `size` solves: the reached indices of its slice of `reached`'s
/// words (`Team::slice` with [`TEAM_ALIGN`]).
pub fn member_slots(reached: &[u64], dir: &[u64], rank: usize, size: usize) -> Range<usize> {
    let w = slice_of(reached.len() as u64, TEAM_ALIGN, rank, size);
    let at = |w: u64| rank_before(reached, dir, w as usize) as usize;
    at(w.start)..at(w.end)
}

/// A team's solve of ply `spec` put together: every member's compact values
/// of its slice (`piece`, `failed` its unchecked failure bits) gathered in
/// rank order, which is the whole ply's compact values in index order, the
/// same on every member. The failure bits are gathered and OR-ed before
/// the values are taken, so every member returns the same error. Each piece
/// is lent to the others ([`Team::broadcast_shared`]: threads read it in
/// place) and copied once, into the result: an all-gather copied it once
/// per member and again into the result, and fresh pages cost (a 6x5 ply's
/// 350 MB took 0.6 s to gather on a two-GPU host whose memory is touched in
/// at about 1.4 GB/s).
pub fn gather_slices(
    spec: Connect4SolveSpec,
    reached: &[u64],
    dir: &[u64],
    team: &dyn Team,
    failed: u32,
    piece: Vec<u8>,
) -> Result<Vec<u8>> {
    let failed = team
        .all_gather(&failed.to_le_bytes())?
        .iter()
        .map(|b| {
            b.get(..4)
                .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        })
        .fold(0, |a, b| a | b);
    check_fail(spec, failed)?;
    let slots: Vec<Range<usize>> = (0..team.size())
        .map(|member| member_slots(reached, dir, member, team.size()))
        .collect();
    let mut piece = Some(Arc::new(piece));
    let mut values = Vec::with_capacity(slots.last().map_or(0, |s| s.end));
    for (member, want) in slots.iter().enumerate() {
        let mine = if member == team.rank() {
            piece.take().expect("lent once")
        } else {
            Arc::default()
        };
        let part = team.broadcast_shared(member, mine)?;
        if part.len() != want.len() {
            return Err(Error::Team {
                rank: team.rank(),
                size: team.size(),
                message: format!(
                    "connect4 {}: rank {member} sent {} bytes for the {} values of its \
                     slice; report this as a bug",
                    spec.name(),
                    part.len(),
                    want.len()
                ),
            });
        }
        values.extend_from_slice(&part);
    }
    Ok(values)
}

/// The CPU twin of `connect4_expand`: for every index whose bit is set in
/// `reached` (partition `spec`), the successors of an ongoing position are
/// set in `next` (partition `n + 1`'s bits; `None` for the full board, or
/// where no move is to be marked). Terminal positions are not expanded, as
/// in the generic search; a reached illegal index is a broken contract.
pub fn expand(spec: Connect4SolveSpec, reached: &[u64], next: Option<&[AtomicU64]>) -> Result<()> {
    let tables = Connect4Tables::new(spec)?;
    let reached = check_reached(spec, &tables, reached)?;
    let next = check_next_bits(spec, &tables, next)?;
    const TASK: usize = 1 << 10;
    let first = reached
        .par_chunks(TASK)
        .enumerate()
        .map(|(t, words)| {
            let mut first = u64::MAX;
            for (i, &word) in words.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    let r = (t * TASK + i) as u64 * 64 + u64::from(word.trailing_zeros());
                    word &= word - 1;
                    let board = tables.decode(spec.n, r);
                    match board.kind {
                        Kind::Illegal => first = first.min(r),
                        Kind::Lost | Kind::Drawn => {}
                        Kind::Ongoing => tables.for_each_successor(spec.n, &board, |s| {
                            let (w, bit) = ((s / 64) as usize, 1u64 << (s % 64));
                            // Most successors are reached from several
                            // positions: a read spares the cache line a write.
                            if next[w].load(Ordering::Relaxed) & bit == 0 {
                                next[w].fetch_or(bit, Ordering::Relaxed);
                            }
                        }),
                    }
                }
            }
            first
        })
        .min()
        .unwrap_or(u64::MAX);
    check_expand_fail(spec, first)
}

/// Checks that `next` holds a bit for every index of partition `n + 1` and
/// returns them (empty for the full board, whose positions have no moves).
pub fn check_next_bits<'n>(
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    next: Option<&'n [AtomicU64]>,
) -> Result<&'n [AtomicU64]> {
    let Some(s) = spec.next() else {
        return Ok(&[]);
    };
    let words = tables.size(s.n).div_ceil(64) as usize;
    match next {
        Some(bits) if bits.len() >= words => Ok(&bits[..words]),
        _ => Err(Error::NotAvailable(format!(
            "connect4 {}x{} {}: the forward search gives no bits of partition ply{:02} \
             ({words} words) for its moves",
            spec.width,
            spec.height,
            spec.name(),
            s.n
        ))),
    }
}

/// The error of an expansion whose smallest reached illegal index is
/// `first` (`u64::MAX`: none), as the generic search reports it.
pub fn check_expand_fail(spec: Connect4SolveSpec, first: u64) -> Result<()> {
    if first == u64::MAX {
        return Ok(());
    }
    Err(Error::GameContract {
        game: "connect4".into(),
        message: format!(
            "reached index ({}, {first}), which the game calls illegal",
            spec.n
        ),
    })
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
    if bits & fail::UNREACHED_SUCCESSOR != 0 {
        return Err(Error::GameContract {
            game: "connect4".into(),
            message: format!(
                "a move from a reached position of partition {} reaches an index of partition {} \
                 that the forward search did not reach",
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
        let bits = [1u64];
        let view = ReachedView {
            bits: &bits,
            block_ranks: &[0, 1],
            values: &[2],
        };
        // Ply 4 of 4x4 has 210 indices: four words of bits.
        assert!(Connect4Twin::new(spec, Some(view)).is_err());
        assert!(Connect4Twin::new(spec, None).is_err());
        let full = Connect4SolveSpec::new(4, 4, 16).unwrap();
        assert!(Connect4Twin::new(full, None).is_ok());
        // Ply 1 has 4 indices: one word, the view fits; a bit past them
        // does not.
        let one = Connect4SolveSpec::new(4, 4, 0).unwrap();
        assert!(Connect4Twin::new(one, Some(view)).is_ok());
        let tables = Connect4Tables::new(one).unwrap();
        assert!(check_reached(Connect4SolveSpec { n: 1, ..one }, &tables, &[1 << 4]).is_err());
        assert!(check_reached(Connect4SolveSpec { n: 1, ..one }, &tables, &[]).is_err());
    }
}
