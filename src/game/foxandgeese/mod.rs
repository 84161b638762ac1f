//! Fox-and-Geese, solved level by level for 0 to N geese (Edelkamp, "BDDs for
//! Minimal Perfect Hashing", Table 0.7).
//!
//! Board: the cross of 33 points (a 3x3 centre with a 2x3 arm on each side)
//! in a 7x7 grid. Lines: the orthogonal ones and, with `diagonals=alternate`
//! (the default, the board of the paper's figure), the diagonals through
//! every other point; `diagonals=all` joins every point to all 8 neighbours.
//!
//! Rules (as the paper states them): the fox and the geese take turns; a
//! piece moves to an empty neighbouring point along a line; the fox may
//! instead jump along a line over an adjacent goose to the empty point
//! beyond, capturing it (one jump a move). The geese win when the fox,
//! to move, cannot move. Geese that cannot move lose (Edelkamp's
//! algorithm marks a position without successors lost). A position neither
//! side can force is a draw here; the paper counts these as fox wins, so
//! "won for the geese" is every position the geese win, whoever moves.
//!
//! Hash: one partition per number of geese, solved upwards (a capture goes
//! one level down), each indexed (index.rs) by side to move x fox
//! class x binomial rank of the geese, one legal index per class of
//! positions under the board's 8 symmetries.
//!
//! Solving: each level by retrograde analysis driven by predecessors, on all
//! cores (twin.rs, `LevelSolver`) or on a CUDA GPU (cuda.rs and
//! kernels/foxandgeese.cu, the same decisions pass for pass, so the same
//! bytes); the values of the level below are what captures read.
//!
//! Notation: the 7 rows from the top, of 3, 3, 7, 7, 7, 3, 3 points, `F` the
//! fox, `G` a goose, `.` empty, separated by `/`, then `;f` (fox to move) or
//! `;g` (geese to move). Points are named by column `a`..`g` and row `1`..`7`
//! from the top; a step is `d5-d4`, a capture `d5xd3`.

mod board;
#[cfg(feature = "cuda")]
pub mod cuda;
mod index;
#[cfg(feature = "build")]
mod twin;

use super::board::{bad_position, info_from};
use super::params::{params, GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank, Weights};
use crate::Result;
pub use board::Diagonals;
use board::{Geometry, CELLS, NONE};
use index::{Index, Placed, GOOSE_POINTS};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "foxandgeese",
    summary: "Fox-and-Geese on the 33-point cross: every position with 0 to N geese by retrograde analysis; the geese win by trapping the fox, draws are what the paper counts as fox wins (Edelkamp, \"BDDs for Minimal Perfect Hashing\" Table 0.7)",
    kind: GameKind::TwoPlayer,
    params: &[
        ParamDoc {
            key: "geese",
            default: "6",
            help: "the most geese: levels 0..=N are solved, one partition each (1..=32)",
        },
        ParamDoc {
            key: "diagonals",
            default: "alternate",
            help: "`alternate`: diagonals through every other point (the paper's figure, the traditional board); `all`: every point joins its 8 neighbours",
        },
    ],
    notation: "7 rows of 3,3,7,7,7,3,3 points from the top, F fox / G goose / . empty, separated by /, then ;f (fox to move) or ;g (geese to move); value for the side to move, a draw counts as a fox win in the paper; moves d5-d4, captures d5xd3 (columns a-g, rows 1-7 from the top)",
    example: "GGG/GGG/GGGGGGG/GG...GG/......./.F./...;g",
};

/// How positions are written, for errors.
const HINT: &str = "write 7 rows of 3,3,7,7,7,3,3 points (F, G or .) separated by /, then ;f or ;g, e.g. GGG/GGG/GGGGGGG/GG...GG/......./.F./...;g";

/// A position: where the fox and the geese stand and who moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The fox's point (row by row from the top left, 0..33).
    pub fox: u8,
    /// The geese: bit `i` for point `i`.
    pub geese: u64,
    /// Whether the fox moves next (else the geese).
    pub fox_to_move: bool,
}

impl Position {
    /// Geese on the board.
    pub fn geese_count(&self) -> usize {
        self.geese.count_ones() as usize
    }

    fn placed(&self) -> Placed {
        Placed {
            fox: self.fox as usize,
            geese: self.geese,
            fox_to_move: self.fox_to_move,
        }
    }
}

/// A move: a piece from one point to another, the fox's jumps capturing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The moving piece's point.
    pub from: u8,
    /// Where it lands.
    pub to: u8,
    /// The fox jumped over a goose and took it.
    pub capture: bool,
}

/// Fox-and-Geese with up to `geese` geese.
#[derive(Clone, Debug)]
pub struct FoxAndGeese {
    geese: usize,
    diagonals: Diagonals,
    index: Arc<Index>,
}

impl FoxAndGeese {
    /// The game from `--param`s.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("foxandgeese", raw);
        let geese = p.uint("geese", 6, 1..=GOOSE_POINTS as u64)? as usize;
        let diagonals = match p.text("diagonals").map(str::trim) {
            None | Some("alternate") => Diagonals::Alternate,
            Some("all") => Diagonals::All,
            Some(other) => {
                return Err(p.error(format!(
                    "`diagonals={other}` is neither `alternate` nor `all`"
                )))
            }
        };
        p.finish()?;
        Ok(Self::new(geese, diagonals))
    }

    /// Levels 0..=`geese` on the board with `diagonals`.
    pub fn new(geese: usize, diagonals: Diagonals) -> Self {
        FoxAndGeese {
            geese: geese.min(GOOSE_POINTS),
            diagonals,
            index: Arc::new(Index::new(Geometry::new(diagonals))),
        }
    }

    /// The most geese.
    pub fn max_geese(&self) -> usize {
        self.geese
    }

    /// The partition of positions with `k` geese.
    pub fn level(k: usize) -> PartitionId {
        PartitionId(k as u32)
    }

    /// Whether the geese have won (with best play) in `pos`, given the
    /// value of `pos` for its side to move: a geese win is the fox's loss.
    pub fn geese_win(pos: &Position, outcome: crate::value::Outcome) -> bool {
        use crate::value::Outcome;
        match outcome {
            Outcome::Win => !pos.fox_to_move,
            Outcome::Loss => pos.fox_to_move,
            Outcome::Draw => false,
        }
    }

    fn point_name(&self, p: u8) -> String {
        let (r, c) = self.index.geo.coords[p as usize];
        format!("{}{}", (b'a' + c) as char, r + 1)
    }
}

impl Game for FoxAndGeese {
    type Position = Position;
    type Move = Move;

    fn info(&self) -> GameInfo {
        info_from(
            &DESCRIPTOR,
            params([
                ("diagonals", self.diagonals.name().to_string()),
                ("geese", self.geese.to_string()),
            ]),
        )
    }

    fn partitions(&self) -> Vec<PartitionId> {
        (0..=self.geese).map(Self::level).collect()
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        let k = p.0 as usize;
        if k > self.geese {
            return 0;
        }
        self.index.size(k)
    }

    fn partition_name(&self, p: PartitionId) -> String {
        format!("geese{:02}", p.0)
    }

    fn partition_group(&self, p: PartitionId) -> Option<String> {
        Some(format!("{:2} geese", p.0))
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Position> {
        let k = p.0 as usize;
        if k > self.geese {
            return None;
        }
        let placed = self.index.unrank(k, r)?;
        Some(Position {
            fox: placed.fox as u8,
            geese: placed.geese,
            fox_to_move: placed.fox_to_move,
        })
    }

    fn rank(&self, pos: &Position) -> (PartitionId, Rank) {
        let k = pos.geese_count();
        (Self::level(k), self.index.rank(k, pos.placed()))
    }

    fn weights(&self, p: PartitionId) -> Weights {
        let k = p.0 as usize;
        if k > self.geese {
            return Weights::one();
        }
        self.index.weights(k)
    }

    fn status(&self, pos: &Position) -> Status {
        let geo = &self.index.geo;
        let stuck = if pos.fox_to_move {
            !geo.fox_can_move(pos.fox as usize, pos.geese)
        } else {
            !geo.geese_can_move(pos.fox as usize, pos.geese)
        };
        if stuck {
            Status::Lost
        } else {
            Status::Ongoing
        }
    }

    fn successors(&self, pos: &Position, out: &mut Vec<(Move, Position)>) {
        let geo = &self.index.geo;
        let fox = pos.fox as usize;
        let occupied = pos.geese | 1 << fox;
        if pos.fox_to_move {
            for d in 0..8 {
                let n = geo.step[fox][d];
                if n == NONE {
                    continue;
                }
                if occupied >> n & 1 == 0 {
                    let mv = Move {
                        from: pos.fox,
                        to: n,
                        capture: false,
                    };
                    let next = Position {
                        fox: n,
                        geese: pos.geese,
                        fox_to_move: false,
                    };
                    out.push((mv, next));
                    continue;
                }
                let beyond = geo.step[n as usize][d];
                if beyond != NONE && occupied >> beyond & 1 == 0 {
                    let mv = Move {
                        from: pos.fox,
                        to: beyond,
                        capture: true,
                    };
                    let next = Position {
                        fox: beyond,
                        geese: pos.geese & !(1 << n),
                        fox_to_move: false,
                    };
                    out.push((mv, next));
                }
            }
        } else {
            let mut m = pos.geese;
            while m != 0 {
                let g = m.trailing_zeros() as usize;
                m &= m - 1;
                for d in 0..8 {
                    let n = geo.step[g][d];
                    if n == NONE || occupied >> n & 1 == 1 {
                        continue;
                    }
                    let mv = Move {
                        from: g as u8,
                        to: n,
                        capture: false,
                    };
                    let next = Position {
                        fox: pos.fox,
                        geese: pos.geese & !(1 << g) | 1 << n,
                        fox_to_move: true,
                    };
                    out.push((mv, next));
                }
            }
        }
    }

    fn start(&self) -> Option<Position> {
        None
    }

    fn parse_position(&self, text: &str) -> Result<Position> {
        let bad = |message: String| bad_position("foxandgeese", text, message, HINT);
        let (board, side) = text
            .trim()
            .rsplit_once(';')
            .ok_or_else(|| bad("no `;f` or `;g` after the board".into()))?;
        let fox_to_move = match side.trim() {
            "f" | "F" => true,
            "g" | "G" => false,
            other => return Err(bad(format!("`{other}` is not f or g"))),
        };
        let rows: Vec<&str> = board.trim().split('/').map(str::trim).collect();
        let widths = [3, 3, 7, 7, 7, 3, 3];
        if rows.len() != widths.len() {
            return Err(bad(format!("{} rows, not 7", rows.len())));
        }
        let mut cells = Vec::with_capacity(CELLS);
        for (r, (row, &want)) in rows.iter().zip(&widths).enumerate() {
            let n = row.chars().count();
            if n != want {
                return Err(bad(format!("row {} has {n} points, not {want}", r + 1)));
            }
            cells.extend(row.chars());
        }
        let mut fox = None;
        let mut geese = 0u64;
        for (p, ch) in cells.into_iter().enumerate() {
            match ch {
                'F' | 'f' => {
                    if fox.is_some() {
                        return Err(bad("more than one fox".into()));
                    }
                    fox = Some(p as u8);
                }
                'G' | 'g' => geese |= 1 << p,
                '.' | '_' | '-' => {}
                other => return Err(bad(format!("`{other}` is not F, G or ."))),
            }
        }
        let fox = fox.ok_or_else(|| bad("no fox (F)".into()))?;
        Ok(Position {
            fox,
            geese,
            fox_to_move,
        })
    }

    fn format_position(&self, pos: &Position) -> String {
        let mut s = String::new();
        for (p, &(r, _)) in self.index.geo.coords.iter().enumerate() {
            if p > 0 && self.index.geo.coords[p - 1].0 != r {
                s.push('/');
            }
            s.push(if p == pos.fox as usize {
                'F'
            } else if pos.geese >> p & 1 == 1 {
                'G'
            } else {
                '.'
            });
        }
        s.push_str(if pos.fox_to_move { ";f" } else { ";g" });
        s
    }

    fn format_move(&self, _pos: &Position, mv: &Move) -> String {
        let sep = if mv.capture { 'x' } else { '-' };
        format!(
            "{}{sep}{}",
            self.point_name(mv.from),
            self.point_name(mv.to)
        )
    }

    fn players(&self) -> Option<[&'static str; 2]> {
        Some(["fox", "geese"])
    }

    fn player_to_move(&self, p: PartitionId, r: Rank) -> usize {
        // The index puts the fox's moves first, then the geese's.
        usize::from(r.0 >= self.partition_size(p) / 2)
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(match device {
            super::Device::Cpu => Arc::new(twin::LevelSolver::new(self.clone())),
            #[cfg(feature = "cuda")]
            super::Device::Cuda(gpu) => Arc::new(cuda::FgKernels::new(self.clone(), gpu.clone())?),
        }))
    }

    fn resolves(&self, _pos: &Position, mv: &Move, _succ: &Position) -> bool {
        mv.capture
    }

    fn search_key(&self, pos: &Position) -> u64 {
        // Positions with more geese than the build's lie outside its partitions.
        crate::hash::mix64(pos.geese ^ u64::from(pos.fox) << 40 ^ u64::from(pos.fox_to_move) << 48)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_unrank_and_weights() {
        let g = FoxAndGeese::new(3, Diagonals::Alternate);
        for k in 0..=3usize {
            let p = FoxAndGeese::level(k);
            let size = g.partition_size(p);
            let w = g.weights(p);
            let mut positions = 0u64;
            for r in 0..size {
                if let Some(pos) = g.unrank(p, Rank(r)) {
                    assert_eq!(g.rank(&pos), (p, Rank(r)));
                    positions += w.at(Rank(r));
                }
            }
            // Every position once: 33 fox points, C(32, k) geese, 2 sides.
            assert_eq!(
                positions,
                2 * 33 * crate::hash::Binomial::new(32, k).unwrap().size()
            );
        }
    }

    #[test]
    fn notation() {
        let g = FoxAndGeese::new(17, Diagonals::Alternate);
        let text = DESCRIPTOR.example;
        let pos = g.parse_position(text).unwrap();
        assert_eq!(pos.geese_count(), 17);
        assert_eq!(g.format_position(&pos), text);
        assert!(g.parse_position("GGG/GGG").is_err());
        assert!(g
            .parse_position("GGG/GGG/GGGGGGG/GG...GG/......./.F./...")
            .is_err());
        assert!(g
            .parse_position("GGG/GGG/GGGGGGG/GG...GG/......./.FF/...;f")
            .is_err());
    }
}
