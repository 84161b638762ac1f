//! Fore and Aft (Dudeney; Edelkamp's "BDDs for Minimal Perfect Hashing" Frogs-and-Toads, Table 0.5).
//!
//! Board: two 3x3 squares of a 5x5 grid overlapping in the centre cell, 17
//! cells: the upper-left square (rows 1-3, columns a-c) and the lower-right one
//! (rows 3-5, columns c-e), sharing c3. Eight black pieces fill the upper-left
//! square and eight white pieces the lower-right one; the centre is empty.
//!
//! Rules: a piece of either colour moves in any orthogonal direction, either
//! sliding to the adjacent empty cell or jumping over one adjacent piece of
//! either colour into the empty cell directly beyond. Goal: the colours
//! swapped (white upper-left, black lower-right, centre empty).
//!
//! Hash: one partition, a multinomial rank of the board with 8 black, 8
//! white and one empty cell: 17!/(8! 8! 1!) = 218,790 indices, all legal (and,
//! as BFS shows, all reachable). The rank is `empty cell * C(16, 8)` plus the
//! binomial (colex) rank of the black pieces among the other 16 cells. Moves are reversible, so distances to the goal
//! and from the start are both BFS distances; swapping the colours maps the
//! start to the goal, so both give the same layer counts.
//!
//! Notation: rows from the top, `b` black, `w` white, `.` empty; rows have 3,
//! 3, 5, 3 and 3 cells (the cells of the board) and are separated by `/`:
//! `bbb/bbb/bb.ww/www/www` is the start. Moves are `from-to` with columns `a`..`e`
//! and rows `1`..`5` from the top (`c2-c3` slides the piece above the centre into it).

use super::board::{bad_position, goal_if, info_from, only_partition, Block, CrossBoard};
use super::params::{GameDescriptor, ParamReader};
use super::{Game, GameInfo, GameKind, Params, Status};
use crate::hash::Multinomial;
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "foreandaft",
    summary: "Fore and Aft (Frogs and Toads): swap 8 black and 8 white pieces on two overlapping 3x3 squares (Edelkamp, \"BDDs for Minimal Perfect Hashing\" Table 0.5)",
    kind: GameKind::Puzzle,
    params: &[],
    notation: "rows from the top of 3,3,5,3,3 cells, b black / w white / . empty, separated by /; moves from-to, columns a-e, rows 1-5",
    example: "bbb/bbb/bb.ww/www/www",
};

/// Cells on the board.
pub const CELLS: usize = 17;
/// Pieces of each colour.
pub const PIECES: u32 = 8;

/// A board: per cell (row by row from the top left) 0 empty, 1 black, 2 white.
pub type Board = [u8; CELLS];

/// A move of the piece on `from` to the empty cell `to` (a slide or a jump).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The moving piece's cell.
    pub from: u8,
    /// The empty cell it moves to.
    pub to: u8,
}

/// The upper-left and lower-right 3x3 squares of a 5x5 grid.
const BOARD: CrossBoard<CELLS> = CrossBoard::new(
    5,
    &[
        Block {
            top: 0,
            bottom: 2,
            left: 0,
            right: 2,
        },
        Block {
            top: 2,
            bottom: 4,
            left: 2,
            right: 4,
        },
    ],
);

/// How positions are written, for errors.
const HINT: &str =
    "write 5 rows of 3,3,5,3,3 cells (b, w or .) separated by /, e.g. bbb/bbb/bb.ww/www/www";

/// C(16, 8): placements of the black pieces once the empty cell is fixed.
const BLACK_PLACEMENTS: u64 = 12_870;
/// Index positions in all.
const SIZE: u64 = CELLS as u64 * BLACK_PLACEMENTS;

/// Fore and Aft (no parameters).
#[derive(Clone, Debug)]
pub struct ForeAndAft {
    /// For each empty cell: the cells a piece can come from (adjacent, or two away with a piece between).
    sources: Vec<Vec<(u8, Option<u8>)>>,
    /// The multinomial hash of 17 cells holding 8 + 8 pieces and one empty.
    hash: Multinomial,
}

impl ForeAndAft {
    /// The game; it accepts no parameters.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        ParamReader::new("foreandaft", raw).finish()?;
        Self::new()
    }

    /// The game.
    pub fn new() -> Result<Self> {
        let mut sources = vec![Vec::new(); CELLS];
        for (to, into) in sources.iter_mut().enumerate() {
            for (next, far) in BOARD.lines(to) {
                into.push((next as u8, None));
                if let Some(far) = far {
                    into.push((far as u8, Some(next as u8)));
                }
            }
        }
        let hash = Multinomial::new(CELLS, &[PIECES, PIECES])?;
        debug_assert_eq!(hash.size(), SIZE);
        Ok(ForeAndAft { sources, hash })
    }

    /// The position with every piece in place of the given colours: `upper` in
    /// the upper-left square, `lower` in the lower-right one.
    fn filled(upper: u8, lower: u8) -> Board {
        let mut b = [0u8; CELLS];
        for (cell, &(r, c)) in BOARD.all_coords().iter().enumerate() {
            b[cell] = if r == 2 && c == 2 {
                0
            } else if r <= 2 && c <= 2 {
                upper
            } else {
                lower
            };
        }
        b
    }

    /// The goal: white upper-left, black lower-right.
    pub fn goal(&self) -> Board {
        Self::filled(2, 1)
    }
}

impl Game for ForeAndAft {
    type Position = Board;
    type Move = Step;

    fn info(&self) -> GameInfo {
        info_from(&DESCRIPTOR, Params::new())
    }

    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        only_partition(p, SIZE)
    }

    fn partition_name(&self, _p: PartitionId) -> String {
        "all".to_string()
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Board> {
        if p.0 != 0 || r.0 >= SIZE {
            return None;
        }
        {
            let mut b = [0u8; CELLS];
            self.hash.unrank(r.0, &mut b);
            Some(b)
        }
    }

    fn rank(&self, board: &Board) -> (PartitionId, Rank) {
        (PartitionId(0), Rank(self.hash.rank(board)))
    }

    fn status(&self, board: &Board) -> Status {
        goal_if(*board == self.goal())
    }

    fn successors(&self, board: &Board, out: &mut Vec<(Step, Board)>) {
        let Some(empty) = board.iter().position(|&c| c == 0) else {
            return;
        };
        for &(from, over) in &self.sources[empty] {
            if board[from as usize] == 0 || over.is_some_and(|o| board[o as usize] == 0) {
                continue;
            }
            let mut next = *board;
            next[empty] = next[from as usize];
            next[from as usize] = 0;
            out.push((
                Step {
                    from,
                    to: empty as u8,
                },
                next,
            ));
        }
    }

    fn start(&self) -> Option<Board> {
        Some(Self::filled(1, 2))
    }

    fn parse_position(&self, text: &str) -> Result<Board> {
        let bad = |message: String| bad_position("foreandaft", text, message, HINT);
        let cells = BOARD.parse_cells(text).map_err(bad)?;
        let mut board = [0u8; CELLS];
        for (cell, ch) in board.iter_mut().zip(cells) {
            *cell = match ch.to_ascii_lowercase() {
                '.' | '_' | '-' => 0,
                'b' | 'x' => 1,
                'w' | 'o' => 2,
                other => return Err(bad(format!("`{other}` is not b, w or ."))),
            };
        }
        let count = |c: u8| board.iter().filter(|&&x| x == c).count();
        if count(1) != PIECES as usize || count(2) != PIECES as usize {
            return Err(bad(format!(
                "{} black and {} white pieces; the puzzle has {PIECES} of each and one empty cell",
                count(1),
                count(2)
            )));
        }
        Ok(board)
    }

    fn format_position(&self, board: &Board) -> String {
        BOARD.format(|cell| match board[cell] {
            1 => 'b',
            2 => 'w',
            _ => '.',
        })
    }

    fn format_move(&self, _board: &Board, step: &Step) -> String {
        BOARD.move_name(step.from, step.to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_is_a_bijection() {
        assert_eq!(SIZE, 218_790);
        let g = ForeAndAft::new().unwrap();
        let mut seen = vec![false; SIZE as usize];
        for r in 0..SIZE {
            let b = g.unrank(PartitionId(0), Rank(r)).unwrap();
            assert_eq!(b.iter().filter(|&&c| c == 0).count(), 1);
            assert_eq!(b.iter().filter(|&&c| c == 1).count(), PIECES as usize);
            assert_eq!(g.rank(&b), (PartitionId(0), Rank(r)));
            seen[r as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn board_and_notation() {
        let g = ForeAndAft::new().unwrap();
        assert_eq!(BOARD.all_coords()[8], (2, 2));
        let start = g.start().unwrap();
        assert_eq!(g.format_position(&start), "bbb/bbb/bb.ww/www/www");
        assert_eq!(g.format_position(&g.goal()), "www/www/ww.bb/bbb/bbb");
        assert_eq!(g.parse_position("bbb/bbb/bb.ww/www/www").unwrap(), start);
        assert!(g.parse_position("bbb/bbb/bbbww/www/www").is_err());
        assert!(g.parse_position("bbb/bbb").is_err());
        let mut succ = Vec::new();
        g.successors(&start, &mut succ);
        // Into the centre: slides from c2, b3, d3, c4 and jumps from c1, a3, e3, c5.
        assert_eq!(succ.len(), 8);
        let names: Vec<String> = succ.iter().map(|(m, _)| g.format_move(&start, m)).collect();
        assert!(names.contains(&"c2-c3".to_string()) && names.contains(&"a3-c3".to_string()));
        for (_, s) in &succ {
            let (p, r) = g.rank(s);
            assert_eq!(g.unrank(p, r).as_ref(), Some(s));
        }
    }
}
