//! Frogs-and-Toads: Fore and Aft on two `side` x `side` squares (Edelkamp,
//! "BDDs for Minimal Perfect Hashing", Tables 0.5 and 0.6).
//!
//! Board: a (2 `side` - 1)-square grid's upper-left and lower-right
//! `side` x `side` squares, overlapping in the centre cell: 2 `side`^2 - 1
//! cells (17 for `side=3`, Sam Loyd's and Dudeney's Fore and Aft; 31 for
//! `side=4`, the paper's Frogs-and-Toads with 15 + 15 pieces). Black pieces
//! fill the upper-left square, white ones the lower-right, the centre is empty.
//!
//! Rules: a piece of either colour slides orthogonally into the empty cell
//! next to it, or jumps orthogonally over one piece of either colour into
//! the empty cell beyond. Goal: the colours swapped. Moves are reversible and
//! swapping the colours maps start to goal, so the distances to the goal have the layer counts of a search from the
//! start.
//!
//! Hash: one partition, `empty cell * C(n - 1, k)` plus the binomial rank of
//! the black pieces among the other `n - 1` cells (`k` pieces a colour):
//! every index is a position. Moves are generated on bitboards (one `u64`,
//! bit `i` = cell `i`) from fixed tables, so that a kernel can mirror them.
//!
//! Notation: rows from the top, `b` black, `w` white, `.` empty, separated by
//! `/`; every row has `side` cells but the middle one (2 `side` - 1):
//! `bbb/bbb/bb.ww/www/www` is the `side=3` start. Moves are `from-to` with
//! columns `a`.. and rows `1`.. from the top. Values are moves to the goal.

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "build")]
mod twin;

use super::board::{bad_position, goal_if, info_from, only_partition};
use super::params::{params, GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::hash::Binomial;
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "frogsandtoads",
    summary: "Frogs-and-Toads: swap the black and white pieces of two side x side squares that share their centre cell (side=3: Fore and Aft; side=4: 15 + 15 pieces on 31 cells) (Edelkamp, \"BDDs for Minimal Perfect Hashing\" Tables 0.5, 0.6)",
    kind: GameKind::Puzzle,
    params: &[ParamDoc {
        key: "side",
        default: "3",
        help: "side of each square: 2 (7 cells), 3 (17 cells, Fore and Aft), 4 (31 cells, 4.8 G positions)",
    }],
    notation: "rows from the top, b black / w white / . empty, separated by /; rows of `side` cells but the middle one of 2 side - 1; value: moves to the goal (colours swapped); moves from-to, columns a.., rows 1.. from the top",
    example: "bbb/bbb/bb.ww/www/www",
};

/// A board: where the black pieces are and which cell is empty; every other
/// cell holds a white piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// Black pieces, bit `i` for cell `i` (row by row from the top left).
    pub black: u64,
    /// The empty cell.
    pub empty: u8,
}

/// A move of the piece on `from` into the empty cell `to` (a slide or a jump).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The moving piece's cell.
    pub from: u8,
    /// The empty cell it moves to.
    pub to: u8,
}

/// No cell.
const NONE: u8 = u8::MAX;

/// Frogs-and-Toads on two `side` x `side` squares.
#[derive(Clone, Debug)]
pub struct FrogsAndToads {
    side: u8,
    /// Row and column of each cell.
    coords: Vec<(u8, u8)>,
    /// For each empty cell: the cells a piece can come from, slides first
    /// then jumps per direction ([`NONE`] where there is none): 8 at most.
    sources: Vec<[u8; 8]>,
    /// Black placements among the cells other than the empty one.
    blacks: Binomial,
}

impl FrogsAndToads {
    /// The game from `--param`s.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("frogsandtoads", raw);
        let side = p.uint("side", 3, 2..=4)? as u8;
        p.finish()?;
        Self::new(side)
    }

    /// The puzzle on squares of `side` (2..=4: beyond, the index outgrows
    /// any memory).
    pub fn new(side: u8) -> Result<Self> {
        let s = i32::from(side);
        let grid = 2 * s - 1;
        let on = |r: i32, c: i32| {
            (0..grid).contains(&r)
                && (0..grid).contains(&c)
                && ((r < s && c < s) || (r >= s - 1 && c >= s - 1))
        };
        let mut coords = Vec::new();
        for r in 0..grid {
            for c in 0..grid {
                if on(r, c) {
                    coords.push((r as u8, c as u8));
                }
            }
        }
        let cell_at = |r: i32, c: i32| -> u8 {
            if !on(r, c) {
                return NONE;
            }
            coords
                .iter()
                .position(|&(cr, cc)| i32::from(cr) == r && i32::from(cc) == c)
                .map_or(NONE, |p| p as u8)
        };
        let mut sources = vec![[NONE; 8]; coords.len()];
        for (e, &(r, c)) in coords.iter().enumerate() {
            let (r, c) = (i32::from(r), i32::from(c));
            for (d, (dr, dc)) in [(-1, 0), (1, 0), (0, -1), (0, 1)].into_iter().enumerate() {
                sources[e][d] = cell_at(r + dr, c + dc);
                if sources[e][d] != NONE {
                    sources[e][4 + d] = cell_at(r + 2 * dr, c + 2 * dc);
                }
            }
        }
        let n = coords.len();
        let blacks = Binomial::new(n - 1, (n - 1) / 2)?;
        Ok(FrogsAndToads {
            side,
            coords,
            sources,
            blacks,
        })
    }

    /// Cells on the board.
    pub fn cells(&self) -> usize {
        self.coords.len()
    }

    /// Pieces of each colour.
    pub fn pieces(&self) -> usize {
        (self.cells() - 1) / 2
    }

    /// Indices (and positions) in all.
    pub fn size(&self) -> u64 {
        self.cells() as u64 * self.blacks.size()
    }

    /// The centre cell, empty at the start and the goal.
    fn centre(&self) -> u8 {
        let m = self.side - 1;
        self.coords
            .iter()
            .position(|&rc| rc == (m, m))
            .map_or(0, |p| p as u8)
    }

    /// The position with one colour on the upper-left square and the other
    /// on the lower-right: `black_upper` says which.
    fn filled(&self, black_upper: bool) -> Board {
        let m = self.side - 1;
        let mut black = 0u64;
        for (i, &(r, c)) in self.coords.iter().enumerate() {
            let upper = r <= m && c <= m && (r, c) != (m, m);
            let lower = r >= m && c >= m && (r, c) != (m, m);
            if (upper && black_upper) || (lower && !black_upper) {
                black |= 1 << i;
            }
        }
        Board {
            black,
            empty: self.centre(),
        }
    }

    /// The goal: white upper-left, black lower-right.
    pub fn goal(&self) -> Board {
        self.filled(false)
    }

    /// The index of a board (the game's only partition).
    #[inline]
    pub fn index(&self, b: &Board) -> u64 {
        let e = u32::from(b.empty);
        let low = b.black & ((1u64 << e) - 1);
        let high = b.black >> (e + 1) << e;
        u64::from(b.empty) * self.blacks.size() + self.blacks.rank(low | high)
    }

    /// The board of index `r` (below [`Self::size`]).
    #[inline]
    pub fn board(&self, r: u64) -> Board {
        let e = (r / self.blacks.size()) as u32;
        let m = self.blacks.unrank(r % self.blacks.size());
        let low = m & ((1u64 << e) - 1);
        Board {
            black: low | (m >> e) << (e + 1),
            empty: e as u8,
        }
    }

    /// Calls `f` with every move from `b` and the board it leads to; no
    /// allocation, fixed tables: the loop a kernel runs.
    #[inline]
    pub fn for_each_move(&self, b: &Board, mut f: impl FnMut(Step, Board)) {
        let e = b.empty;
        for &from in &self.sources[e as usize] {
            if from == NONE {
                continue;
            }
            let bit = b.black >> from & 1;
            let next = Board {
                black: b.black & !(1 << from) | bit << e,
                empty: from,
            };
            f(Step { from, to: e }, next);
        }
    }

    /// The tables kernels/frogsandtoads.cu reads: each cell's 8 sources
    /// (`slots` in all, [`NONE`] past the board's cells) and the binomials
    /// C(n, k) for n, k below `side` (row n; they fit a u32 below n = 32).
    #[cfg(feature = "cuda")]
    pub(crate) fn device_tables(&self, slots: usize, side: usize) -> Result<(Vec<u8>, Vec<u32>)> {
        let mut sources: Vec<u8> = self.sources.iter().flatten().copied().collect();
        sources.resize(slots, NONE);
        let mut binom = vec![0u32; side * side];
        for n in 0..side {
            for k in 0..=n {
                let c = Binomial::new(n, k)?.size();
                binom[n * side + k] = u32::try_from(c).map_err(|_| {
                    crate::Error::NotAvailable(format!("C({n}, {k}) does not fit a u32"))
                })?;
            }
        }
        Ok((sources, binom))
    }

    fn hint(&self) -> String {
        format!(
            "write {} rows of b, w or . separated by /, e.g. {}",
            self.side * 2 - 1,
            self.format_position(&self.filled(true))
        )
    }
}

impl Game for FrogsAndToads {
    type Position = Board;
    type Move = Step;

    fn info(&self) -> GameInfo {
        info_from(&DESCRIPTOR, params([("side", self.side.to_string())]))
    }

    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        only_partition(p, self.size())
    }

    fn partition_name(&self, _p: PartitionId) -> String {
        "all".to_string()
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Board> {
        (p.0 == 0 && r.0 < self.size()).then(|| self.board(r.0))
    }

    fn rank(&self, b: &Board) -> (PartitionId, Rank) {
        (PartitionId(0), Rank(self.index(b)))
    }

    fn status(&self, b: &Board) -> Status {
        goal_if(*b == self.goal())
    }

    fn successors(&self, b: &Board, out: &mut Vec<(Step, Board)>) {
        self.for_each_move(b, |s, n| out.push((s, n)));
    }

    fn start(&self) -> Option<Board> {
        Some(self.filled(true))
    }

    fn parse_position(&self, text: &str) -> Result<Board> {
        let bad = |message: String| bad_position("frogsandtoads", text, message, self.hint());
        let rows: Vec<&str> = text.trim().split('/').map(str::trim).collect();
        let grid = usize::from(self.side) * 2 - 1;
        if rows.len() != grid {
            return Err(bad(format!("{} rows, not {grid}", rows.len())));
        }
        let mut chars = Vec::with_capacity(self.cells());
        for (r, row) in rows.iter().enumerate() {
            let want = self
                .coords
                .iter()
                .filter(|&&(cr, _)| usize::from(cr) == r)
                .count();
            let n = row.chars().count();
            if n != want {
                return Err(bad(format!("row {} has {n} cells, not {want}", r + 1)));
            }
            chars.extend(row.chars());
        }
        let (mut black, mut empties, mut whites) = (0u64, Vec::new(), 0usize);
        for (i, ch) in chars.into_iter().enumerate() {
            match ch.to_ascii_lowercase() {
                'b' | 'x' => black |= 1 << i,
                'w' | 'o' => whites += 1,
                '.' | '_' | '-' => empties.push(i as u8),
                other => return Err(bad(format!("`{other}` is not b, w or ."))),
            }
        }
        let k = self.pieces();
        if black.count_ones() as usize != k || whites != k || empties.len() != 1 {
            return Err(bad(format!(
                "{} black, {whites} white and {} empty cells; the puzzle has {k} of each colour and one empty cell",
                black.count_ones(),
                empties.len()
            )));
        }
        Ok(Board {
            black,
            empty: empties[0],
        })
    }

    fn format_position(&self, b: &Board) -> String {
        let mut s = String::new();
        for (i, &(r, _)) in self.coords.iter().enumerate() {
            if i > 0 && self.coords[i - 1].0 != r {
                s.push('/');
            }
            s.push(if i == usize::from(b.empty) {
                '.'
            } else if b.black >> i & 1 == 1 {
                'b'
            } else {
                'w'
            });
        }
        s
    }

    fn format_move(&self, _b: &Board, step: &Step) -> String {
        let name = |c: u8| {
            let (r, col) = self.coords[usize::from(c)];
            format!("{}{}", (b'a' + col) as char, r + 1)
        };
        format!("{}-{}", name(step.from), name(step.to))
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(std::sync::Arc::new(twin::FtKernels::new(
            self.clone(),
            device,
        )?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_and_index() {
        for (side, cells, size) in [
            (2u8, 7usize, 140u64),
            (3, 17, 218_790),
            (4, 31, 4_808_643_120),
        ] {
            let g = FrogsAndToads::new(side).unwrap();
            assert_eq!(g.cells(), cells);
            assert_eq!(g.size(), size);
            let start = g.start().unwrap();
            assert_eq!(g.parse_position(&g.format_position(&start)).unwrap(), start);
            let mut succ = Vec::new();
            g.successors(&start, &mut succ);
            // Into the centre: four slides and, but on the smallest board, four jumps.
            assert_eq!(succ.len(), if side == 2 { 4 } else { 8 });
            for r in (0..size).step_by((size / 5000).max(1) as usize) {
                let b = g.board(r);
                assert_eq!(g.index(&b), r);
            }
        }
        let g = FrogsAndToads::new(3).unwrap();
        assert_eq!(
            g.format_position(&g.start().unwrap()),
            "bbb/bbb/bb.ww/www/www"
        );
        assert_eq!(g.format_position(&g.goal()), "www/www/ww.bb/bbb/bbb");
        assert!(g.parse_position("bbb/bbb/bbbww/www/www").is_err());
        assert!(g.parse_position("bbb/bbb").is_err());
    }
}
