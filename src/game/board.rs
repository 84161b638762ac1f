//! Board geometry, position notation and the small parts of `Game` impls
//! that the puzzles (and the small two-player games) share.
//!
//! Peg solitaire's English board (a plus of three-wide arms) and Fore and
//! Aft's board (two 3x3 squares meeting at a corner) are both unions of
//! rectangles on a square grid, numbered row by row from the top left and
//! written row by row with `/` between rows. [`CrossBoard`] holds that once:
//! the cells, their coordinates, orthogonal steps and jumps, cell names and
//! the row shape of the notation.

use super::params::GameDescriptor;
use super::{GameInfo, Params, Status};
use crate::value::PartitionId;
use crate::Error;

/// Rows `top..=bottom` and columns `left..=right` of the grid, all on the board.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block {
    /// First row (0 the top).
    pub top: u8,
    /// Last row.
    pub bottom: u8,
    /// First column (0 the left).
    pub left: u8,
    /// Last column.
    pub right: u8,
}

impl Block {
    const fn contains(&self, row: i32, col: i32) -> bool {
        row >= self.top as i32
            && row <= self.bottom as i32
            && col >= self.left as i32
            && col <= self.right as i32
    }
}

/// A board of `N` cells: the grid cells that lie in any of its blocks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrossBoard<const N: usize> {
    rows: u8,
    blocks: &'static [Block],
    /// Row and column of each cell, in cell order.
    coords: [(u8, u8); N],
}

/// Orthogonal directions, in the order moves are generated: the games' move
/// order (and so their successor lists) follows it.
const DIRECTIONS: [(i32, i32); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

impl<const N: usize> CrossBoard<N> {
    /// The board of `blocks` on a grid of `rows` rows (and as many columns as
    /// the blocks reach); it fails to compile unless they cover `N` cells.
    pub const fn new(rows: u8, blocks: &'static [Block]) -> Self {
        let mut cols = 0;
        let mut b = 0;
        while b < blocks.len() {
            if blocks[b].right + 1 > cols {
                cols = blocks[b].right + 1;
            }
            b += 1;
        }
        let mut coords = [(0u8, 0u8); N];
        let mut n = 0;
        let mut row = 0;
        while row < rows {
            let mut col = 0;
            while col < cols {
                if Self::in_blocks(blocks, row as i32, col as i32) {
                    assert!(n < N, "the blocks cover more than N cells");
                    coords[n] = (row, col);
                    n += 1;
                }
                col += 1;
            }
            row += 1;
        }
        assert!(n == N, "the blocks cover fewer than N cells");
        CrossBoard {
            rows,
            blocks,
            coords,
        }
    }

    const fn in_blocks(blocks: &[Block], row: i32, col: i32) -> bool {
        let mut b = 0;
        while b < blocks.len() {
            if blocks[b].contains(row, col) {
                return true;
            }
            b += 1;
        }
        false
    }

    /// Row and column (from the top left, 0-based) of every cell, in cell order.
    pub fn all_coords(&self) -> &[(u8, u8); N] {
        &self.coords
    }

    /// The cell at `row`, `col`, if that grid point is on the board.
    pub fn cell_at(&self, row: i32, col: i32) -> Option<usize> {
        if !Self::in_blocks(self.blocks, row, col) {
            return None;
        }
        self.coords
            .iter()
            .position(|&(r, c)| i32::from(r) == row && i32::from(c) == col)
    }

    /// For each orthogonal direction with a neighbour of `cell`: that
    /// neighbour, and the cell beyond it in the same direction if there is one.
    pub fn lines(&self, cell: usize) -> impl Iterator<Item = (usize, Option<usize>)> + '_ {
        let (r, c) = self.coords[cell];
        let (r, c) = (i32::from(r), i32::from(c));
        DIRECTIONS.iter().filter_map(move |&(dr, dc)| {
            let next = self.cell_at(r + dr, c + dc)?;
            Some((next, self.cell_at(r + 2 * dr, c + 2 * dc)))
        })
    }

    /// The cell's name: column letter from `a`, row number from 1 at the top.
    pub fn cell_name(&self, cell: usize) -> String {
        let (r, c) = self.coords[cell];
        format!("{}{}", (b'a' + c) as char, r + 1)
    }

    /// A move from one cell to another, `from-to` (`d2-d4`).
    pub fn move_name(&self, from: u8, to: u8) -> String {
        format!(
            "{}-{}",
            self.cell_name(from.into()),
            self.cell_name(to.into())
        )
    }

    /// The board written row by row, `/` between rows, `mark(cell)` per cell.
    pub fn format(&self, mut mark: impl FnMut(usize) -> char) -> String {
        let mut s = String::new();
        for (cell, &(r, _)) in self.coords.iter().enumerate() {
            if cell > 0 && self.coords[cell - 1].0 != r {
                s.push('/');
            }
            s.push(mark(cell));
        }
        s
    }

    /// The characters of a position written as [`Self::format`] writes it, in
    /// cell order, once the rows' count and lengths are right; otherwise what
    /// is wrong with them.
    pub fn parse_cells(&self, text: &str) -> Result<Vec<char>, String> {
        let rows: Vec<&str> = text.trim().split('/').map(str::trim).collect();
        if rows.len() != usize::from(self.rows) {
            return Err(format!("{} rows, not {}", rows.len(), self.rows));
        }
        let mut cells = Vec::with_capacity(N);
        for (r, row) in rows.iter().enumerate() {
            let want = self
                .coords
                .iter()
                .filter(|&&(cr, _)| usize::from(cr) == r)
                .count();
            let before = cells.len();
            cells.extend(row.chars());
            if cells.len() - before != want {
                return Err(format!(
                    "row {} has {} cells, not {want}",
                    r + 1,
                    cells.len() - before
                ));
            }
        }
        Ok(cells)
    }
}

/// What `Game::info` says: the registry name and kind of the game's
/// descriptor, with these canonical parameters.
pub(crate) fn info_from(descriptor: &GameDescriptor, params: Params) -> GameInfo {
    GameInfo {
        id: descriptor.name,
        params,
        kind: descriptor.kind,
    }
}

/// The status of a puzzle position: the goal, or not yet (puzzles have no
/// other end).
pub(crate) fn goal_if(reached: bool) -> Status {
    if reached {
        Status::Goal
    } else {
        Status::Ongoing
    }
}

/// Partition `p`'s size in a game whose `size` indices all lie in partition 0.
pub(crate) fn only_partition(p: PartitionId, size: u64) -> u64 {
    if p == PartitionId(0) {
        size
    } else {
        0
    }
}

/// A position the game cannot read: `message` says what is wrong, `hint` how
/// the game writes its positions.
pub(crate) fn bad_position(
    game: &str,
    text: &str,
    message: impl std::fmt::Display,
    hint: impl std::fmt::Display,
) -> Error {
    Error::BadPosition {
        game: game.into(),
        text: text.into(),
        message: format!("{message}; {hint}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLUS: CrossBoard<5> = CrossBoard::new(
        3,
        &[
            Block {
                top: 1,
                bottom: 1,
                left: 0,
                right: 2,
            },
            Block {
                top: 0,
                bottom: 2,
                left: 1,
                right: 1,
            },
        ],
    );

    #[test]
    fn plus_of_five() {
        assert_eq!(PLUS.all_coords(), &[(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)]);
        assert_eq!(PLUS.cell_at(1, 1), Some(2));
        assert_eq!(PLUS.cell_at(0, 0), None);
        assert_eq!(PLUS.cell_name(3), "c2");
        // Up, down, left, right from the centre: neighbours, none with a cell beyond.
        let lines: Vec<_> = PLUS.lines(2).collect();
        assert_eq!(lines, [(0, None), (4, None), (1, None), (3, None)]);
        // From the top arm: down to the centre, then on to the bottom arm.
        assert_eq!(PLUS.lines(0).collect::<Vec<_>>(), [(2, Some(4))]);
        let text = PLUS.format(|c| if c == 2 { 'o' } else { '.' });
        assert_eq!(text, "./.o./.");
        assert_eq!(
            PLUS.parse_cells(" . / .o. /.").unwrap(),
            ['.', '.', 'o', '.', '.']
        );
        assert_eq!(PLUS.parse_cells("./..").unwrap_err(), "2 rows, not 3");
        assert_eq!(
            PLUS.parse_cells("./../.").unwrap_err(),
            "row 2 has 2 cells, not 3"
        );
    }
}
