//! Connect Four as BDDs: the encoding and moves of Edelkamp and Kissmann's
//! symbolic search (Edelkamp, "BDDs for Minimal Perfect Hashing", Tables 0.8
//! and 0.9).
//!
//! Two variables per cell, cells column by column from the left, each
//! column bottom-up: "occupied", then "holds the first player's piece"
//! (false on empty cells, so every state is exactly one assignment). The
//! side to move follows from the layer, so it takes no variable. With this
//! order and complement edges, the empty 7x6 board is a BDD of 85 nodes and
//! layer 1 one of 163, as in the chapter's Table 0.9.
//!
//! A move is one action per cell: it needs the cell empty and the one below
//! occupied, and writes the mover's piece. A position where the player who
//! just moved has four in a row is counted but not expanded; such a four
//! always runs through the piece just played, so each action's `continues`
//! set only looks at the lines through its cell.

use super::{Connect4, Connect4Position};
use crate::bdd::{Action, Assignment, Bdds, StateSet, SymbolicEncoding, SymbolicSearch};
use crate::Result;

/// Connect Four's BDD encoding for one board size.
#[derive(Clone, Debug)]
pub struct Connect4Symbolic {
    width: u32,
    height: u32,
}

impl Connect4 {
    /// This board's BDD encoding (for `tbforge bdd-count` and BDD-indexed layers).
    pub fn symbolic(&self) -> Connect4Symbolic {
        Connect4Symbolic {
            width: self.width,
            height: self.height,
        }
    }
}

impl Connect4Symbolic {
    /// The "occupied" variable of a cell; its "first player" variable follows it.
    fn occupied(&self, col: u32, row: u32) -> u32 {
        2 * (col * self.height + row)
    }

    /// Every line of four cells on the board, as (column, row) pairs.
    fn lines(&self) -> Vec<[(u32, u32); 4]> {
        let (w, h) = (self.width as i64, self.height as i64);
        let mut out = Vec::new();
        for c in 0..w {
            for r in 0..h {
                for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                    let cells = [0, 1, 2, 3].map(|i| (c + i * dc, r + i * dr));
                    if cells
                        .iter()
                        .all(|&(x, y)| (0..w).contains(&x) && (0..h).contains(&y))
                    {
                        out.push(cells.map(|(x, y)| (x as u32, y as u32)));
                    }
                }
            }
        }
        out
    }

    /// The literals of `first`'s (or the second player's) piece on a cell.
    fn piece(&self, col: u32, row: u32, first: bool) -> [(u32, bool); 2] {
        let v = self.occupied(col, row);
        [(v, true), (v + 1, first)]
    }
}

impl SymbolicSearch for Connect4Symbolic {
    fn name(&self) -> String {
        format!("connect4 {}x{}", self.width, self.height)
    }

    fn variables(&self) -> u32 {
        2 * self.width * self.height
    }

    fn initial(&self, bdds: &Bdds) -> Result<StateSet> {
        let empty: Vec<(u32, bool)> = (0..self.variables()).map(|v| (v, false)).collect();
        bdds.cube(&empty)
    }

    fn actions(&self, bdds: &Bdds, layer: u32) -> Result<Vec<Action>> {
        let first = layer % 2 == 0;
        let lines = self.lines();
        let mut out = Vec::with_capacity((self.width * self.height) as usize);
        for col in 0..self.width {
            for row in 0..self.height {
                let v = self.occupied(col, row);
                let mut guard = vec![(v, false)];
                if row > 0 {
                    guard.push((self.occupied(col, row - 1), true));
                }
                let mut fours = bdds.none();
                for line in lines.iter().filter(|l| l.contains(&(col, row))) {
                    let others: Vec<(u32, bool)> = line
                        .iter()
                        .filter(|&&cell| cell != (col, row))
                        .flat_map(|&(c, r)| self.piece(c, r, first))
                        .collect();
                    fours = fours.or(&bdds.cube(&others)?)?;
                }
                out.push(Action {
                    guard: bdds.cube(&guard)?,
                    frame: bdds.cube(&[(v, true), (v + 1, true)])?,
                    effect: bdds.cube(&self.piece(col, row, first))?,
                    continues: fours.not()?,
                });
            }
        }
        Ok(out)
    }
}

impl SymbolicEncoding for Connect4Symbolic {
    type State = Connect4Position;

    fn encode(&self, pos: &Connect4Position) -> Assignment {
        let mut a = Assignment::new(self.variables());
        let stride = self.height + 1;
        for col in 0..self.width {
            for row in 0..self.height {
                let bit = 1u64 << (col * stride + row);
                let v = self.occupied(col, row);
                a.set(v, (pos.first | pos.second) & bit != 0);
                a.set(v + 1, pos.first & bit != 0);
            }
        }
        a
    }

    fn decode(&self, a: &Assignment) -> Option<Connect4Position> {
        if a.len() != self.variables() {
            return None;
        }
        let mut pos = Connect4Position::default();
        let stride = self.height + 1;
        for col in 0..self.width {
            let mut below = true;
            for row in 0..self.height {
                let v = self.occupied(col, row);
                let (occupied, first) = (a.get(v), a.get(v + 1));
                // Pieces never float, and an empty cell has one encoding.
                if (occupied && !below) || (!occupied && first) {
                    return None;
                }
                let bit = 1u64 << (col * stride + row);
                match (occupied, first) {
                    (true, true) => pos.first |= bit,
                    (true, false) => pos.second |= bit,
                    _ => {}
                }
                below = occupied;
            }
        }
        Some(pos)
    }
}
