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
//! The columns are [`Stacks`]: a layer's successors come from one walk of
//! its BDD. A position where the player who just moved has four in a row is
//! counted but not expanded: the successors go on where the mover has no
//! four anywhere (before the move there was none, since play went on).
//!
//! The same moves as one action per cell (the cell empty, the one below
//! occupied, the mover's piece written; a four through the cell ends play)
//! are [`SymbolicSearch::actions`], the generic image's input; tests compare
//! both on every layer.

use super::{Connect4, Connect4Position};
use crate::bdd::{
    Action, Assignment, Bdds, LayerImage, Stacks, StateSet, SymbolicEncoding, SymbolicSearch,
};
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

    /// The states where `first` (or the second player) has no four in a row.
    fn no_four(&self, bdds: &Bdds, first: bool) -> Result<StateSet> {
        let mut fours = bdds.none();
        for line in self.lines() {
            let pieces: Vec<(u32, bool)> = line
                .iter()
                .flat_map(|&(c, r)| self.piece(c, r, first))
                .collect();
            fours = fours.or(&bdds.cube(&pieces)?)?;
        }
        fours.not()
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

    fn layer_image<'a>(&'a self, bdds: &'a Bdds) -> Result<Box<dyn LayerImage + 'a>> {
        Ok(Box::new(ColumnDrops {
            columns: Stacks {
                stacks: self.width,
                height: self.height,
            },
            no_four: [self.no_four(bdds, true)?, self.no_four(bdds, false)?],
        }))
    }
}

/// A layer's successors: every drop into a column, in one walk of the
/// layer's BDD, and play goes on where the mover has no four. Building the
/// no-four sets takes about as long as a mid-game layer's image, so they are
/// built once.
struct ColumnDrops {
    columns: Stacks,
    /// Indexed by `!first`: the first player's set, then the second's.
    no_four: [StateSet; 2],
}

impl LayerImage for ColumnDrops {
    fn successors(&mut self, live: &StateSet, layer: u32) -> Result<(StateSet, StateSet)> {
        let first = layer % 2 == 0;
        let all = self.columns.push_image(live, first)?;
        let going = all.and(&self.no_four[usize::from(!first)])?;
        Ok((all, going))
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
