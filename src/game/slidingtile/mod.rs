//! The (rows x cols) sliding-tile puzzle (Edelkamp and Sulewski, "Parallel State Space Search on the GPU": Table 1, one- and two-bit BFS).
//!
//! Tiles `1..rows*cols` and one blank on a grid; a move slides a tile next to
//! the blank into it. Goal (and start): the blank in the top-left corner, the
//! tiles in reading order behind it (`0 1 2/3 4 5/6 7 8` for 3x3). Moves are
//! reversible, so BFS from the goal gives the distances to it.
//!
//! Hash (Edelkamp and Sulewski's "Parallel State Space Search on the GPU" "blank-projected" partitioning, folded into one partition
//! because moves go back and forth between blank cells, and partitions must be
//! ordered): index = `blank cell * (N-1)!/2 + r`, where `r` is the
//! parity-halved Myrvold–Ruskey rank of the tiles in reading order, blank
//! skipped. Only half of the orders are reachable for each blank cell: with an
//! odd number of columns every move keeps the order's parity (a vertical move
//! carries a tile past `cols - 1` others); with an even number, the parity
//! changes with the blank's row. So the wanted parity follows from the blank
//! cell, and `(rows*cols)!/2` indices, all reachable, hold the puzzle.
//!
//! One-bit BFS: every move changes the colour of the blank's cell on a
//! chessboard, the move-alternation property of Edelkamp and Sulewski's "Parallel State Space Search on the GPU" Algorithm 4; see
//! [`SlidingTile::side`].
//!
//! Notation: rows from the top separated by `/`, tiles separated by spaces, `0`
//! or `.` for the blank: `1 0 2/3 4 5/6 7 8`. Moves name the direction the blank
//! moves: `U`, `D`, `L`, `R`.

use super::board::{bad_position, info_from, only_partition};
use super::pancake::{identity, sorted_is_goal, MyrvoldRuskey, MAX_N};
use super::params::{GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "slidingtile",
    summary: "Sliding-tile puzzle (8-puzzle and friends): distance to the sorted board, blank top-left (Edelkamp and Sulewski, \"Parallel State Space Search on the GPU\" Table 1)",
    kind: GameKind::Puzzle,
    params: &[
        ParamDoc {
            key: "rows",
            default: "3",
            help: "rows, 2..=8, rows*cols at most 16",
        },
        ParamDoc {
            key: "cols",
            default: "3",
            help: "columns, 2..=8, rows*cols at most 16",
        },
    ],
    notation: "rows from the top separated by /, tiles by spaces, 0 or . the blank; moves U D L R (the blank's direction)",
    example: "1 0 2/3 4 5/6 7 8",
};

/// A board: the tile on each cell in reading order, 0 the blank.
pub type Board = [u8; MAX_N];

/// The sliding-tile puzzle of one size.
#[derive(Clone, Debug)]
pub struct SlidingTile {
    rows: usize,
    cols: usize,
    /// (rows*cols - 1)!/2: orders per blank cell.
    half: u64,
    perm: MyrvoldRuskey,
}

const DIRS: [(i32, i32, char); 4] = [(-1, 0, 'U'), (1, 0, 'D'), (0, -1, 'L'), (0, 1, 'R')];

impl SlidingTile {
    /// From `--param rows=R --param cols=C`.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("slidingtile", raw);
        // One row or column would make most orders unreachable, not half of them.
        let rows = p.uint("rows", 3, 2..=8)? as usize;
        let cols = p.uint("cols", 3, 2..=8)? as usize;
        if rows * cols > MAX_N {
            return Err(p.error(format!(
                "{rows}x{cols} has {} cells; at most {MAX_N}",
                rows * cols
            )));
        }
        p.finish()?;
        Ok(Self::new(rows, cols))
    }

    /// A `rows x cols` board (rows, cols >= 2, rows*cols <= 16).
    pub fn new(rows: usize, cols: usize) -> Self {
        let perm = MyrvoldRuskey::new(rows * cols - 1);
        SlidingTile {
            rows,
            cols,
            half: perm.size() / 2,
            perm,
        }
    }

    fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Orders per blank cell, `(rows*cols - 1)!/2`.
    pub fn per_blank(&self) -> u64 {
        self.half
    }

    /// The parity (true: odd) of the tile order that goes with a blank on `cell`.
    fn odd_order(&self, cell: usize) -> bool {
        self.cols % 2 == 0 && (cell / self.cols) % 2 == 1
    }

    /// The chessboard colour of the blank's cell for index `r`: every move flips it.
    pub fn side(&self, r: Rank) -> bool {
        let blank = (r.0 / self.half) as usize;
        (blank / self.cols + blank % self.cols) % 2 == 1
    }

    fn order(&self, board: &Board) -> ([u8; MAX_N], usize) {
        let mut q = [0u8; MAX_N];
        let mut blank = 0;
        let mut j = 0;
        for (cell, &t) in board[..self.cells()].iter().enumerate() {
            if t == 0 {
                blank = cell;
            } else {
                q[j] = t - 1;
                j += 1;
            }
        }
        (q, blank)
    }

    /// Whether a board can reach the goal (its order has the parity its blank cell needs).
    pub fn solvable(&self, board: &Board) -> bool {
        let (q, blank) = self.order(board);
        self.perm.rank(&q).1 == self.odd_order(blank)
    }
}

impl Game for SlidingTile {
    type Position = Board;
    type Move = char;

    fn info(&self) -> GameInfo {
        info_from(
            &DESCRIPTOR,
            super::params::params([
                ("cols", self.cols.to_string()),
                ("rows", self.rows.to_string()),
            ]),
        )
    }

    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        only_partition(p, self.half * self.cells() as u64)
    }

    fn partition_name(&self, _p: PartitionId) -> String {
        "all".to_string()
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Board> {
        if r.0 >= self.partition_size(p) {
            return None;
        }
        let blank = (r.0 / self.half) as usize;
        let mut q = [0u8; MAX_N];
        self.perm
            .unrank_half(r.0 % self.half, self.odd_order(blank), &mut q);
        let mut board = [0u8; MAX_N];
        let mut j = 0;
        for (cell, t) in board[..self.cells()].iter_mut().enumerate() {
            if cell != blank {
                *t = q[j] + 1;
                j += 1;
            }
        }
        Some(board)
    }

    fn rank(&self, board: &Board) -> (PartitionId, Rank) {
        let (q, blank) = self.order(board);
        let (r, odd) = self.perm.rank(&q);
        debug_assert_eq!(odd, self.odd_order(blank), "unsolvable board ranked");
        (
            PartitionId(0),
            Rank(blank as u64 * self.half + r % self.half),
        )
    }

    fn status(&self, board: &Board) -> Status {
        sorted_is_goal(&board[..self.cells()])
    }

    fn successors(&self, board: &Board, out: &mut Vec<(char, Board)>) {
        let blank = board[..self.cells()]
            .iter()
            .position(|&t| t == 0)
            .unwrap_or(0);
        let (r, c) = ((blank / self.cols) as i32, (blank % self.cols) as i32);
        for (dr, dc, name) in DIRS {
            let (nr, nc) = (r + dr, c + dc);
            if nr < 0 || nc < 0 || nr >= self.rows as i32 || nc >= self.cols as i32 {
                continue;
            }
            let to = nr as usize * self.cols + nc as usize;
            let mut next = *board;
            next.swap(blank, to);
            out.push((name, next));
        }
    }

    fn start(&self) -> Option<Board> {
        Some(identity(self.cells()))
    }

    fn parse_position(&self, text: &str) -> Result<Board> {
        let hint = format!(
            "write {} rows of {} tiles separated by /, tiles by spaces, 0 for the blank",
            self.rows, self.cols
        );
        let bad = |message: String| bad_position("slidingtile", text, message, &hint);
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != self.rows {
            return Err(bad(format!("{} rows, not {}", rows.len(), self.rows)));
        }
        let mut board = [0u8; MAX_N];
        let mut seen = [false; MAX_N];
        for (r, row) in rows.iter().enumerate() {
            let items: Vec<&str> = row.split_whitespace().collect();
            if items.len() != self.cols {
                return Err(bad(format!(
                    "row {} has {} tiles, not {}",
                    r + 1,
                    items.len(),
                    self.cols
                )));
            }
            for (c, item) in items.iter().enumerate() {
                let t: usize = if *item == "." {
                    0
                } else {
                    item.parse()
                        .ok()
                        .filter(|&t| t < self.cells())
                        .ok_or_else(|| bad(format!("`{item}` is not a tile 0..{}", self.cells())))?
                };
                if seen[t] {
                    return Err(bad(format!("tile {t} appears twice")));
                }
                seen[t] = true;
                board[r * self.cols + c] = t as u8;
            }
        }
        if !self.solvable(&board) {
            return Err(bad(
                "this board cannot reach the goal (its tile order has the wrong parity)"
                    .to_string(),
            ));
        }
        Ok(board)
    }

    fn format_position(&self, board: &Board) -> String {
        (0..self.rows)
            .map(|r| {
                board[r * self.cols..(r + 1) * self.cols]
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    fn format_move(&self, _board: &Board, m: &char) -> String {
        m.to_string()
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        // The start is the goal: the index it ranks to is where both searches begin.
        let goal = self.rank(&self.start().expect("the goal")).1 .0;
        Ok(Some(std::sync::Arc::new(
            super::permpuzzle::PermKernels::new(
                self.info().canonical(),
                super::permpuzzle::PermSpec::sliding(self.rows, self.cols),
                goal,
                device,
            )?,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_round_trips_and_moves_flip_the_side() {
        for (rows, cols) in [(2, 2), (2, 3), (3, 2), (3, 3), (2, 4)] {
            let g = SlidingTile::new(rows, cols);
            let mut succ = Vec::new();
            for r in 0..g.partition_size(PartitionId(0)) {
                let b = g.unrank(PartitionId(0), Rank(r)).unwrap();
                assert!(g.solvable(&b));
                assert_eq!(g.rank(&b), (PartitionId(0), Rank(r)));
                succ.clear();
                g.successors(&b, &mut succ);
                for (_, s) in &succ {
                    assert!(g.solvable(s), "{rows}x{cols}: a move broke the parity rule");
                    assert_ne!(g.side(g.rank(s).1), g.side(Rank(r)));
                }
            }
        }
    }

    #[test]
    fn notation() {
        let g = SlidingTile::new(3, 3);
        let b = g.parse_position("1 0 2/3 4 5/6 7 8").unwrap();
        assert_eq!(g.format_position(&b), "1 0 2/3 4 5/6 7 8");
        assert!(
            g.parse_position("0 2 1/3 4 5/6 7 8").is_err(),
            "two tiles swapped"
        );
        assert!(g.parse_position("0 1 2/3 4 5").is_err());
        let mut succ = Vec::new();
        g.successors(&b, &mut succ);
        let names: String = succ.iter().map(|(m, _)| *m).collect();
        assert_eq!(names, "DLR");
    }
}
