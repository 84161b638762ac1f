//! Tic-tac-toe on the 3x3 board.
//!
//! Rules: X moves first; players alternate placing a mark on an empty cell;
//! three in a row (row, column or diagonal) wins; a full board without a line
//! is a draw. A position where the player who just moved completed a line is
//! lost for the side to move.
//!
//! Hash: partition n = marks on the board (0..=9, solved from 9 down to 0);
//! inside it, the multinomial rank of the board with ceil(n/2) X and
//! floor(n/2) O. Boards that cannot arise (both players have a line, or the
//! side that did not move last has one) are illegal indices.
//!
//! Notation: 9 characters `x`, `o`, `.` row by row from the top left
//! (`x...o....`); the side to move follows from the counts.

use super::board::{bad_position, info_from};
use super::params::{GameDescriptor, ParamReader};
use super::{Game, GameInfo, GameKind, Params, Status};
use crate::hash::Multinomial;
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "tictactoe",
    summary: "Tic-tac-toe (noughts and crosses) on 3x3; every legal position solved",
    kind: GameKind::TwoPlayer,
    params: &[],
    notation: "9 characters of x, o, . row by row from the top left; X moves first",
    example: "x...o....",
};

const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// How positions are written, for errors.
const HINT: &str = "write 9 characters of x, o, . row by row, e.g. x...o....";

/// A board: cell values 0 empty, 1 X, 2 O.
pub type Board = [u8; 9];

/// The game (it has no parameters).
#[derive(Clone, Debug)]
pub struct TicTacToe {
    hashes: Vec<Multinomial>,
}

impl TicTacToe {
    /// Tic-tac-toe; it accepts no parameters.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        ParamReader::new("tictactoe", raw).finish()?;
        let hashes = (0..=9u32)
            .map(|n| Multinomial::new(9, &[n.div_ceil(2), n / 2]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TicTacToe { hashes })
    }

    fn has_line(board: &Board, mark: u8) -> bool {
        LINES.iter().any(|l| l.iter().all(|&c| board[c] == mark))
    }

    fn marks(board: &Board) -> (usize, usize) {
        let x = board.iter().filter(|&&c| c == 1).count();
        let o = board.iter().filter(|&&c| c == 2).count();
        (x, o)
    }

    /// Legal: counts alternate, and only the player who moved last may have a line.
    fn is_legal(board: &Board) -> bool {
        let (x, o) = Self::marks(board);
        if x != o && x != o + 1 {
            return false;
        }
        let x_line = Self::has_line(board, 1);
        let o_line = Self::has_line(board, 2);
        match (x_line, o_line) {
            (true, true) => false,
            (true, false) => x == o + 1,
            (false, true) => x == o,
            (false, false) => true,
        }
    }
}

impl Game for TicTacToe {
    type Position = Board;
    type Move = usize;

    fn info(&self) -> GameInfo {
        info_from(&DESCRIPTOR, Params::new())
    }

    fn partitions(&self) -> Vec<PartitionId> {
        (0..=9).rev().map(PartitionId).collect()
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        self.hashes[p.0 as usize].size()
    }

    fn partition_name(&self, p: PartitionId) -> String {
        format!("marks{}", p.0)
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Board> {
        let mut board = [0u8; 9];
        self.hashes[p.0 as usize].unrank(r.0, &mut board);
        Self::is_legal(&board).then_some(board)
    }

    fn rank(&self, board: &Board) -> (PartitionId, Rank) {
        let (x, o) = Self::marks(board);
        let n = x + o;
        (PartitionId(n as u32), Rank(self.hashes[n].rank(board)))
    }

    fn status(&self, board: &Board) -> Status {
        if Self::has_line(board, 1) || Self::has_line(board, 2) {
            Status::Lost
        } else if board.iter().all(|&c| c != 0) {
            Status::Drawn
        } else {
            Status::Ongoing
        }
    }

    fn successors(&self, board: &Board, out: &mut Vec<(usize, Board)>) {
        let (x, o) = Self::marks(board);
        let mark = if x == o { 1 } else { 2 };
        for cell in 0..9 {
            if board[cell] == 0 {
                let mut next = *board;
                next[cell] = mark;
                out.push((cell, next));
            }
        }
    }

    fn start(&self) -> Option<Board> {
        Some([0; 9])
    }

    fn parse_position(&self, text: &str) -> Result<Board> {
        let bad = |message: &str| bad_position("tictactoe", text, message, HINT);
        let chars: Vec<char> = text.trim().chars().collect();
        if chars.len() != 9 {
            return Err(bad(&format!("{} characters, not 9", chars.len())));
        }
        let mut board = [0u8; 9];
        for (cell, ch) in board.iter_mut().zip(chars) {
            *cell = match ch.to_ascii_lowercase() {
                '.' | '-' | '_' => 0,
                'x' => 1,
                'o' | '0' => 2,
                other => return Err(bad(&format!("`{other}` is not x, o or ."))),
            };
        }
        if !Self::is_legal(&board) {
            return Err(bad(
                "no game reaches this board (mark counts or lines are impossible)",
            ));
        }
        Ok(board)
    }

    fn format_position(&self, board: &Board) -> String {
        board
            .iter()
            .map(|&c| match c {
                1 => 'x',
                2 => 'o',
                _ => '.',
            })
            .collect()
    }

    fn format_move(&self, _board: &Board, cell: &usize) -> String {
        // Cells as row/column, 1-based: "b2" is the centre (column letter, row number from the top).
        let col = (b'a' + (*cell % 3) as u8) as char;
        format!("{col}{}", cell / 3 + 1)
    }
}
