//! Peg solitaire on the English 33-hole board (Edelkamp, "BDDs for Minimal Perfect Hashing", Table 0.4).
//!
//! Rules: a peg jumps orthogonally over an adjacent peg into an empty hole
//! directly beyond it; the jumped peg is removed. Start: every hole filled but
//! the centre. Goal: a single peg, in the centre (the start's complement).
//!
//! Hash: partition `p` = pegs on the board (0..=33); inside it the binomial
//! rank of the 33-bit peg mask with `p` bits set. Every jump removes one peg,
//! so successors lie in partition `p - 1`, and partitions are solved from 0
//! pegs upward. Every index is a legal board (most are unreachable from the
//! start; they still get their distance to the goal, or "unreachable").
//!
//! Distances: a position with `p` pegs that can reach the goal does so in
//! exactly `p - 1` jumps, so the database is the set of solvable positions.
//! Forward BFS layer `d` (d jumps from the start) is the reachable part of the
//! partition with `32 - d` pegs: one bit per index, layer by layer
//! ([`crate::solve::partition_layer_bfs`]).
//!
//! Kernels (kernels.rs, and on a GPU cuda.rs with kernels/pegsolitaire.cu):
//! each partition in one pass from the one below, and the forward search one
//! partition at a time.
//!
//! Notation: the 7 rows of the board from the top, `o` a peg and `.` a hole,
//! rows of 3 or 7 cells separated by `/`:
//! `ooo/ooo/ooooooo/ooo.ooo/ooooooo/ooo/ooo` is the start. Moves are written
//! `from-to` with columns `a`..`g` from the left and rows `1`..`7` from the top
//! (`d2-d4` jumps the peg on d2 over d3 into the centre).

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "build")]
mod kernels;
#[cfg(feature = "build")]
pub use kernels::search_twin;

use super::board::{bad_position, goal_if, info_from, Block, CrossBoard};
use super::params::{GameDescriptor, ParamReader};
use super::{Game, GameInfo, GameKind, Params, Status};
use crate::hash::Binomial;
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "pegsolitaire",
    summary: "Peg solitaire, English 33-hole board: jumps to a single peg in the centre (Edelkamp, \"BDDs for Minimal Perfect Hashing\" Table 0.4)",
    kind: GameKind::Puzzle,
    params: &[],
    notation: "7 rows from the top, o peg / . hole, rows separated by /; moves from-to, columns a-g, rows 1-7 from the top",
    example: "ooo/ooo/ooooooo/ooo.ooo/ooooooo/ooo/ooo",
};

/// Holes on the board.
pub const CELLS: usize = 33;
/// The centre hole's index (row 4, column d).
pub const CENTRE: usize = 16;

/// Pegs as a bit mask over the 33 holes, numbered row by row from the top left.
pub type Board = u64;

/// A jump: the peg on `from` jumps into `to` (cell indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    /// The jumping peg's hole.
    pub from: u8,
    /// The hole it lands in.
    pub to: u8,
}

/// The English board: three-wide arms on a 7x7 grid.
const BOARD: CrossBoard<CELLS> = CrossBoard::new(
    7,
    &[
        Block {
            top: 2,
            bottom: 4,
            left: 0,
            right: 6,
        },
        Block {
            top: 0,
            bottom: 6,
            left: 2,
            right: 4,
        },
    ],
);

/// How positions are written, for errors.
const HINT: &str = "write 7 rows of o (peg) and . (hole) separated by /, e.g. ooo/ooo/ooooooo/ooo.ooo/ooooooo/ooo/ooo";

/// Every jump on the board as (from, over, to): 76 on the English board.
fn all_jumps() -> Vec<(u8, u8, u8)> {
    let mut jumps = Vec::new();
    for from in 0..CELLS {
        for (over, to) in BOARD.lines(from) {
            if let Some(to) = to {
                jumps.push((from as u8, over as u8, to as u8));
            }
        }
    }
    jumps
}

/// The English board (it has no parameters).
#[derive(Clone, Debug)]
pub struct PegSolitaire {
    /// (from mask, over mask, to mask) per jump, as single bits.
    jumps: Vec<(u64, u64, u64)>,
    hashes: Vec<Binomial>,
}

impl PegSolitaire {
    /// The English 33-hole board; it accepts no parameters.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        ParamReader::new("pegsolitaire", raw).finish()?;
        Ok(Self::english())
    }

    /// The English 33-hole board.
    pub fn english() -> Self {
        let jumps = all_jumps()
            .into_iter()
            .map(|(f, o, t)| (1u64 << f, 1u64 << o, 1u64 << t))
            .collect();
        let hashes = (0..=CELLS)
            .map(|k| Binomial::new(CELLS, k).expect("C(33, k) fits a u64"))
            .collect();
        PegSolitaire { jumps, hashes }
    }

    /// Number of distinct jumps on the board.
    pub fn jump_count(&self) -> usize {
        self.jumps.len()
    }

    /// The goal: one peg, in the centre.
    pub fn goal(&self) -> Board {
        1 << CENTRE
    }

    fn bad(&self, text: &str, message: impl std::fmt::Display) -> Error {
        bad_position("pegsolitaire", text, message, HINT)
    }
}

impl Game for PegSolitaire {
    type Position = Board;
    type Move = Jump;

    fn info(&self) -> GameInfo {
        info_from(&DESCRIPTOR, Params::new())
    }

    fn partitions(&self) -> Vec<PartitionId> {
        (0..=CELLS as u32).map(PartitionId).collect()
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        self.hashes.get(p.0 as usize).map_or(0, Binomial::size)
    }

    fn partition_name(&self, p: PartitionId) -> String {
        format!("pegs{:02}", p.0)
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Board> {
        let h = self.hashes.get(p.0 as usize)?;
        (r.0 < h.size()).then(|| h.unrank(r.0))
    }

    fn rank(&self, board: &Board) -> (PartitionId, Rank) {
        let pegs = board.count_ones();
        (
            PartitionId(pegs),
            Rank(self.hashes[pegs as usize].rank(*board)),
        )
    }

    fn status(&self, board: &Board) -> Status {
        goal_if(*board == self.goal())
    }

    fn successors(&self, board: &Board, out: &mut Vec<(Jump, Board)>) {
        let holes = !*board;
        for &(from, over, to) in &self.jumps {
            if *board & from != 0 && *board & over != 0 && holes & to != 0 {
                let jump = Jump {
                    from: from.trailing_zeros() as u8,
                    to: to.trailing_zeros() as u8,
                };
                out.push((jump, *board ^ (from | over | to)));
            }
        }
    }

    fn start(&self) -> Option<Board> {
        Some(((1u64 << CELLS) - 1) & !(1 << CENTRE))
    }

    fn parse_position(&self, text: &str) -> Result<Board> {
        let cells = BOARD.parse_cells(text).map_err(|m| self.bad(text, m))?;
        let mut board = 0u64;
        for (cell, ch) in cells.into_iter().enumerate() {
            match ch {
                'o' | 'O' | 'x' | 'X' | '1' => board |= 1 << cell,
                '.' | '_' | '-' | '0' => {}
                other => return Err(self.bad(text, format!("`{other}` is neither o nor ."))),
            }
        }
        Ok(board)
    }

    fn format_position(&self, board: &Board) -> String {
        BOARD.format(|cell| if board & (1 << cell) != 0 { 'o' } else { '.' })
    }

    fn format_move(&self, _board: &Board, jump: &Jump) -> String {
        BOARD.move_name(jump.from, jump.to)
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(std::sync::Arc::new(kernels::PegKernels::new(
            self.clone(),
            device,
        )?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_shape() {
        let g = PegSolitaire::english();
        assert_eq!(BOARD.all_coords()[CENTRE], (3, 3));
        assert_eq!(g.jump_count(), 76);
        let start = g.start().unwrap();
        assert_eq!(
            g.format_position(&start),
            "ooo/ooo/ooooooo/ooo.ooo/ooooooo/ooo/ooo"
        );
        assert_eq!(
            g.parse_position("ooo/ooo/ooooooo/ooo.ooo/ooooooo/ooo/ooo")
                .unwrap(),
            start
        );
        assert!(g.parse_position("ooo/ooo").is_err());
        assert!(g
            .parse_position("ooo/ooo/ooooooo/ooo?ooo/ooooooo/ooo/ooo")
            .is_err());
        let mut succ = Vec::new();
        g.successors(&start, &mut succ);
        assert_eq!(succ.len(), 4);
        let names: Vec<String> = succ.iter().map(|(m, _)| g.format_move(&start, m)).collect();
        assert!(names.contains(&"d2-d4".to_string()), "{names:?}");
    }

    #[test]
    fn binomial_round_trip() {
        let g = PegSolitaire::english();
        for k in [0usize, 1, 2, 5, 16, 32, 33] {
            let h = &g.hashes[k];
            let step = (h.size() / 5000).max(1);
            let mut r = 0;
            while r < h.size() {
                let m = h.unrank(r);
                assert_eq!(m.count_ones() as usize, k);
                assert!(m < 1 << CELLS);
                assert_eq!(h.rank(m), r);
                r += step;
            }
            assert_eq!(h.rank(h.unrank(h.size() - 1)), h.size() - 1);
        }
    }
}
