//! Connect Four on a `width` x `height` board.
//!
//! Rules: the first player moves first; players alternately drop a piece into
//! a column that is not full, where it falls to the lowest empty cell; four of
//! one's pieces in a row (horizontally, vertically or diagonally) win; a full
//! board without a four is a draw. As everywhere in tbforge, a position where
//! the player who just moved has a four is modelled as lost for the side to move.
//!
//! Board: two bitboards, one per player, column-major with `height + 1` bits per
//! column (the top bit of each column is an always-empty guard, so shifted
//! lines never wrap from one column into the next).
//!
//! Hash: partition `n` = pieces played (`0..=width*height`, solved from the full
//! board down to the empty one: every move adds a piece). Inside partition `n`,
//! with `k = ceil(n/2)` pieces of the first player:
//! `rank = H(heights) * C(n, k) + B(first)`, where `H` is the lexicographic
//! index of the column-height vector among those with sum `n` (the
//! bounded-composition hash of `src/game/compositions.rs`) and `B` the
//! colexicographic rank of the `n`-bit word saying which filled cells, read
//! column by column from the bottom, hold the first player's pieces. Pieces never float, by construction. An index is
//! illegal when both players have a four, or when the player who did not move
//! last has one. (Some legal indices can still never arise in play, e.g. a
//! column holding the second player's piece under the first player's as the
//! only two pieces; forward search leaves them unreachable.)
//!
//! Plies are layered ([`super::Forward::Layer`]): a build stores values only
//! for positions reachable from the empty board, 0 elsewhere.
//!
//! Notation: the columns played, 1-based, first move first, as common Connect
//! Four solvers take them (`4453`); the empty string is the empty board.

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "build")]
pub mod kernels;
mod stream;
#[cfg(feature = "bdd")]
pub mod symbolic;
#[cfg(feature = "build")]
pub mod twin;

use super::compositions::Compositions;
use super::params::{params, GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};
use std::collections::{BTreeMap, HashSet};

/// Engine files follow every move from plies of this parity.
const FOLLOWED_PLIES: u32 = 1;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "connect4",
    summary:
        "Connect Four on a width x height board: gravity, four in a row wins, a full board draws",
    kind: GameKind::TwoPlayer,
    params: &[
        ParamDoc {
            key: "width",
            default: "7",
            help: "number of columns, 1..=9",
        },
        ParamDoc {
            key: "height",
            default: "6",
            help: "number of rows, 1..=16, with width * (height + 1) <= 64",
        },
    ],
    notation: "the columns played, 1-based, first move first (`4453`); empty for the start",
    example: "4453",
};

const MAX_WIDTH: u64 = 9;
const MAX_HEIGHT: u64 = 16;

/// A Connect Four position: one bitboard per player (bit `col * (height + 1) + row`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Connect4Position {
    first: u64,
    second: u64,
}

impl Connect4Position {
    /// Pieces on the board (plies played).
    pub fn pieces(&self) -> u32 {
        (self.first | self.second).count_ones()
    }

    /// True when the first player is to move.
    pub fn first_to_move(&self) -> bool {
        self.pieces() % 2 == 0
    }
}

/// Who holds a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// No piece.
    Empty,
    /// The first player's piece.
    First,
    /// The second player's piece.
    Second,
}

/// Connect Four with a fixed board size.
#[derive(Clone, Debug)]
pub struct Connect4 {
    width: u32,
    height: u32,
    /// Column-height vectors by sum.
    columns: Compositions,
    /// `binom[n * 65 + k] = C(n, k)` for `n, k <= 64`.
    binom: Vec<u64>,
    /// Partition sizes by pieces played.
    sizes: Vec<u64>,
}

impl Connect4 {
    /// Connect Four from `--param width=W --param height=H` (default 7 x 6).
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("connect4", raw);
        let width = p.uint("width", 7, 1..=MAX_WIDTH)? as u32;
        let height = p.uint("height", 6, 1..=MAX_HEIGHT)? as u32;
        p.finish()?;
        Connect4::new(width, height).map_err(|message| Error::BadParam {
            game: "connect4".into(),
            message,
        })
    }

    /// The `width` x `height` game; the message says why a size is refused.
    fn new(width: u32, height: u32) -> Result<Self, String> {
        if width * (height + 1) > 64 {
            return Err(format!(
                "a {width}x{height} board needs {} bits per player with a guard row; at most 64 fit",
                width * (height + 1)
            ));
        }
        let too_big =
            || format!("a {width}x{height} board has more positions than a 64-bit index holds");
        let columns = Compositions::new(&vec![height; width as usize]).map_err(|_| too_big())?;
        let mut binom = vec![0u64; 65 * 65];
        for n in 0..=64usize {
            binom[n * 65] = 1;
            for k in 1..=n {
                // C(64, k) < 2^63: no overflow.
                binom[n * 65 + k] = binom[(n - 1) * 65 + k - 1] + binom[(n - 1) * 65 + k];
            }
        }
        let cells = width * height;
        let mut sizes = Vec::with_capacity(cells as usize + 1);
        let mut total: u64 = 0;
        for n in 0..=cells {
            let size = columns
                .count(n)
                .checked_mul(binom[n as usize * 65 + n.div_ceil(2) as usize])
                .ok_or_else(too_big)?;
            total = total.checked_add(size).ok_or_else(too_big)?;
            sizes.push(size);
        }
        Ok(Connect4 {
            width,
            height,
            columns,
            binom,
            sizes,
        })
    }

    /// Number of columns.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of rows.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Who holds the cell in `col` (0-based from the left) and `row` (0-based from the bottom).
    pub fn cell(&self, pos: &Connect4Position, col: u32, row: u32) -> Cell {
        if col >= self.width || row >= self.height {
            return Cell::Empty;
        }
        let bit = 1u64 << (col * self.stride() + row);
        if pos.first & bit != 0 {
            Cell::First
        } else if pos.second & bit != 0 {
            Cell::Second
        } else {
            Cell::Empty
        }
    }

    /// Bits per column, guard included.
    #[inline]
    fn stride(&self) -> u32 {
        self.height + 1
    }

    #[inline]
    fn binom(&self, n: u32, k: u32) -> u64 {
        if k > n {
            0
        } else {
            self.binom[n as usize * 65 + k as usize]
        }
    }

    #[inline]
    fn column_bits(&self, board: u64, col: u32) -> u64 {
        (board >> (col * self.stride())) & ((1u64 << self.height) - 1)
    }

    /// Four in a row on one player's bitboard: for each direction `d`, `m = b & b>>d`
    /// marks pairs, `m & m>>2d` marks fours. Guard bits are always empty, so no
    /// line runs across a column edge.
    #[inline]
    fn has_four(&self, b: u64) -> bool {
        let s = self.stride();
        for d in [1, s, s - 1, s + 1] {
            let m = b & (b >> d);
            if m & (m >> (2 * d)) != 0 {
                return true;
            }
        }
        false
    }

    /// Whether `pos` can be stored: not both players with a four, and no four
    /// for the player who did not move last.
    fn is_legal(&self, pos: &Connect4Position) -> bool {
        let first_moved_last = pos.pieces() % 2 == 1;
        match (self.has_four(pos.first), self.has_four(pos.second)) {
            (true, true) => false,
            (true, false) => first_moved_last,
            (false, true) => !first_moved_last,
            (false, false) => true,
        }
    }

    fn column_height(&self, pos: &Connect4Position, col: u32) -> u32 {
        self.column_bits(pos.first | pos.second, col).count_ones()
    }

    /// Drops the side to move's piece into `col` (which must not be full).
    fn play(&self, pos: &Connect4Position, col: u32) -> Connect4Position {
        let bit = 1u64 << (col * self.stride() + self.column_height(pos, col));
        let mut next = *pos;
        if pos.first_to_move() {
            next.first |= bit;
        } else {
            next.second |= bit;
        }
        next
    }

    /// A sequence of moves (0-based columns) from the empty board to `pos`
    /// along which nobody completes a four before the last move; `None` if
    /// no game reaches `pos`.
    fn move_sequence(&self, pos: &Connect4Position) -> Option<Vec<u32>> {
        let mut heights: Vec<u32> = (0..self.width)
            .map(|c| self.column_height(pos, c))
            .collect();
        let mut dead = HashSet::new();
        let mut undone = Vec::new();
        let lost = self.has_four(pos.first) || self.has_four(pos.second);
        if self.undo(pos, &mut heights, lost, &mut dead, &mut undone) {
            Some(undone)
        } else {
            None
        }
    }

    /// Takes pieces back, the last mover's first, alternating. Only the first
    /// step must remove a four (taking pieces away never makes one), so below it
    /// a state is known by its column heights alone; `dead` memoises those from
    /// which the empty board cannot be reached.
    fn undo(
        &self,
        pos: &Connect4Position,
        heights: &mut [u32],
        must_break_four: bool,
        dead: &mut HashSet<u64>,
        undone: &mut Vec<u32>,
    ) -> bool {
        let n: u32 = heights.iter().sum();
        if n == 0 {
            return true;
        }
        let key = heights
            .iter()
            .fold(0u64, |k, &h| k * u64::from(self.height + 1) + u64::from(h));
        if !must_break_four && dead.contains(&key) {
            return false;
        }
        let last = if n % 2 == 1 { pos.first } else { pos.second };
        for c in 0..self.width {
            let h = heights[c as usize];
            if h == 0 {
                continue;
            }
            let bit = 1u64 << (c * self.stride() + h - 1);
            if last & bit == 0 {
                continue;
            }
            let before = Connect4Position {
                first: pos.first & !bit,
                second: pos.second & !bit,
            };
            if must_break_four && (self.has_four(before.first) || self.has_four(before.second)) {
                continue;
            }
            heights[c as usize] -= 1;
            let ok = self.undo(&before, heights, false, dead, undone);
            heights[c as usize] += 1;
            if ok {
                undone.push(c);
                return true;
            }
        }
        if !must_break_four {
            dead.insert(key);
        }
        false
    }

    /// The board as columns bottom-up (`x` first player, `o` second), `/` between columns.
    fn diagram(&self, pos: &Connect4Position) -> String {
        (0..self.width)
            .map(|c| {
                (0..self.height)
                    .filter_map(|r| match self.cell(pos, c, r) {
                        Cell::First => Some('x'),
                        Cell::Second => Some('o'),
                        Cell::Empty => None,
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}

impl Game for Connect4 {
    type Position = Connect4Position;
    /// A column, 0-based.
    type Move = u32;

    fn info(&self) -> GameInfo {
        GameInfo {
            id: "connect4",
            params: params([
                ("height", self.height.to_string()),
                ("width", self.width.to_string()),
            ]),
            kind: GameKind::TwoPlayer,
        }
    }

    fn partitions(&self) -> Vec<PartitionId> {
        (0..=self.width * self.height)
            .rev()
            .map(PartitionId)
            .collect()
    }

    fn successor_partitions(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        // A move adds one disc.
        Some(if p.0 < self.width * self.height {
            vec![PartitionId(p.0 + 1)]
        } else {
            Vec::new()
        })
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        self.sizes.get(p.0 as usize).copied().unwrap_or(0)
    }

    fn partition_name(&self, p: PartitionId) -> String {
        format!("ply{:02}", p.0)
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Connect4Position> {
        let n = p.0;
        if r.0 >= self.partition_size(p) {
            return None;
        }
        let mut k = n.div_ceil(2);
        let per = self.binom(n, k);
        let mut heights = [0u32; MAX_WIDTH as usize];
        let heights = &mut heights[..self.width as usize];
        self.columns.unrank(n, r.0 / per, heights);
        // Colex unrank of the first player's cells among the n filled ones, branch-free
        // (a data-dependent branch here mispredicts half the time). Invariant:
        // b < C(i + 1, k); once k = 0, b = 0 < C(i, 0) takes nothing, and
        // C(i, k) = 0 for k > i takes every remaining cell.
        let mut b = r.0 % per;
        let mut which: u64 = 0;
        for i in (0..n).rev() {
            let c = self.binom[i as usize * 65 + k as usize];
            let take = u64::from(b >= c);
            which |= take << i;
            b -= c & take.wrapping_neg();
            k -= take as u32;
        }
        let mut pos = Connect4Position::default();
        for (c, &h) in heights.iter().enumerate() {
            let filled = (1u64 << h) - 1;
            let shift = c as u32 * self.stride();
            pos.first |= (which & filled) << shift;
            pos.second |= (!which & filled) << shift;
            which >>= h;
        }
        self.is_legal(&pos).then_some(pos)
    }

    fn rank(&self, pos: &Connect4Position) -> (PartitionId, Rank) {
        let occupied = pos.first | pos.second;
        let n = occupied.count_ones();
        let mut which: u64 = 0;
        let mut offset = 0;
        let mut heights = [0u32; MAX_WIDTH as usize];
        for (c, slot) in heights[..self.width as usize].iter_mut().enumerate() {
            let h = self.column_bits(occupied, c as u32).count_ones();
            which |= self.column_bits(pos.first, c as u32) << offset;
            offset += h;
            *slot = h;
        }
        let k = n.div_ceil(2);
        let mut b: u64 = 0;
        let mut j = 0;
        while which != 0 {
            let i = which.trailing_zeros();
            which &= which - 1;
            j += 1;
            b += self.binom(i, j);
        }
        let h = self
            .columns
            .rank(heights[..self.width as usize].iter().copied(), n);
        (PartitionId(n), Rank(h * self.binom(n, k) + b))
    }

    /// Threats and the centre, for the side to move: 16 for each empty cell
    /// that would complete one of its fours, less the opponent's, and 4 for
    /// each of its pieces in the centre column (two on even widths), less the opponent's.
    /// Threats decide most games between good players (Allis, "A Knowledge-
    /// based Approach of Connect-Four"); the centre takes part in the most
    /// lines.
    fn evaluate(&self, pos: &Connect4Position) -> i32 {
        let (mine, theirs) = if pos.first_to_move() {
            (pos.first, pos.second)
        } else {
            (pos.second, pos.first)
        };
        let occupied = mine | theirs;
        let mut threats = [0i32; 2];
        let mut centre = [0i32; 2];
        for c in 0..self.width {
            let central = c == (self.width - 1) / 2 || c == self.width / 2;
            for r in 0..self.height {
                let cell = 1u64 << (c * self.stride() + r);
                for (k, b) in [mine, theirs].into_iter().enumerate() {
                    if occupied & cell == 0 && self.has_four(b | cell) {
                        threats[k] += 1;
                    }
                    if central && b & cell != 0 {
                        centre[k] += 1;
                    }
                }
            }
        }
        16 * (threats[0] - threats[1]) + 4 * (centre[0] - centre[1])
    }

    fn status(&self, pos: &Connect4Position) -> Status {
        if self.has_four(pos.first) || self.has_four(pos.second) {
            Status::Lost
        } else if pos.pieces() == self.width * self.height {
            Status::Drawn
        } else {
            Status::Ongoing
        }
    }

    fn successors(&self, pos: &Connect4Position, out: &mut Vec<(u32, Connect4Position)>) {
        for c in 0..self.width {
            if self.column_height(pos, c) < self.height {
                out.push((c, self.play(pos, c)));
            }
        }
    }

    /// Every move from a position with an odd number of pieces: such a
    /// position's value is then its moves' best (every move leaves for the
    /// next ply), so engine files store none of those plies' values (nor,
    /// with [`Game::derives_reach`], which of their positions are reached),
    /// while the even plies they read follow only moves that end the game,
    /// so a probe reads at most one ply on. Odd rather than even plies: the
    /// smaller files on 5x4 and 5x5 (`scripts/bench_engine_files.sh`).
    fn resolves(&self, pos: &Connect4Position, _mv: &u32, _succ: &Connect4Position) -> bool {
        pos.pieces() % 2 == FOLLOWED_PLIES
    }

    /// The last mover's piece taken off the top of any column.
    fn predecessors(&self, pos: &Connect4Position, out: &mut Vec<Connect4Position>) -> bool {
        let last_mover_first = !pos.first_to_move();
        for c in 0..self.width {
            let h = self.column_height(pos, c);
            if h == 0 {
                continue;
            }
            let bit = 1u64 << (c * self.stride() + h - 1);
            let mut before = *pos;
            let board = if last_mover_first {
                &mut before.first
            } else {
                &mut before.second
            };
            if *board & bit != 0 {
                *board &= !bit;
                out.push(before);
            }
        }
        true
    }

    /// The plies whose positions [`Game::resolves`] follows whole: their
    /// predecessors lie in the even plies, which keep their reached marks.
    fn derives_reach(&self, p: PartitionId) -> bool {
        p.0 % 2 == FOLLOWED_PLIES
    }

    /// Every move adds a piece: ply `n` is first reached at depth `n`, and only
    /// its reached positions are solved and stored (most of a large board's
    /// index at high plies holds boards with fours that play never reaches).
    fn forward(&self, p: PartitionId) -> super::Forward {
        super::Forward::Layer(p.0)
    }

    fn start(&self) -> Option<Connect4Position> {
        Some(Connect4Position::default())
    }

    fn parse_position(&self, text: &str) -> Result<Connect4Position> {
        let bad = |message: String| Error::BadPosition {
            game: "connect4".into(),
            text: text.into(),
            message: format!(
                "{message}; write the columns played, 1 to {}, first move first, e.g. `4453`",
                self.width
            ),
        };
        let mut pos = Connect4Position::default();
        for (i, ch) in text.trim().chars().enumerate() {
            let Some(col) = ch.to_digit(10).filter(|c| (1..=self.width).contains(c)) else {
                return Err(bad(format!(
                    "move {}: `{ch}` is not a column 1..={}",
                    i + 1,
                    self.width
                )));
            };
            match self.status(&pos) {
                Status::Ongoing => {}
                _ => {
                    return Err(bad(format!(
                        "move {} (column {col}) comes after the game ended",
                        i + 1
                    )))
                }
            }
            if self.column_height(&pos, col - 1) == self.height {
                return Err(bad(format!(
                    "move {}: column {col} is already full ({} pieces)",
                    i + 1,
                    self.height
                )));
            }
            pos = self.play(&pos, col - 1);
        }
        Ok(pos)
    }

    /// The move sequence, when one reaches the position; boards no game reaches
    /// (some legal indices) are written `unreachable:` and their columns bottom-up,
    /// which `parse_position` rejects, as it must.
    fn format_position(&self, pos: &Connect4Position) -> String {
        match self.move_sequence(pos) {
            Some(moves) => moves.iter().map(|c| char::from(b'1' + *c as u8)).collect(),
            None => format!("unreachable:{}", self.diagram(pos)),
        }
    }

    fn format_move(&self, _pos: &Connect4Position, col: &u32) -> String {
        (col + 1).to_string()
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(std::sync::Arc::new(kernels::Connect4Kernels::new(
            self, device,
        )?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every successor lies one ply on, the partition listed.
    #[test]
    fn successors_lie_where_successor_partitions_says() {
        let g = Connect4::new(4, 4).unwrap();
        let mut checked = 0;
        for p in g.partitions() {
            let listed = g.successor_partitions(p).unwrap();
            for q in crate::game::sampled_successor_partitions(&g, p, 300) {
                assert_eq!(listed, [q], "ply {}", p.0);
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn four_detection_does_not_wrap() {
        let g = Connect4::new(7, 6).unwrap();
        let s = g.stride();
        // Vertical four in column 0.
        assert!(g.has_four(0b1111));
        // Three at the top of column 0 plus the bottom of column 1 is no line.
        assert!(!g.has_four(0b111000 | 1 << s));
        // Horizontal four along row 0.
        assert!(g.has_four(1 | 1 << s | 1 << (2 * s) | 1 << (3 * s)));
        // Diagonals both ways.
        assert!(g.has_four(1 | 1 << (s + 1) | 1 << (2 * s + 2) | 1 << (3 * s + 3)));
        assert!(g.has_four(1 << 3 | 1 << (s + 2) | 1 << (2 * s + 1) | 1 << (3 * s)));
    }

    /// Three in a row on the bottom row, open at both ends, is two threats
    /// for its owner, counted from the side to move's point of view.
    #[test]
    fn evaluation_counts_threats_and_the_centre() {
        let g = Connect4::new(7, 6).unwrap();
        let s = g.stride();
        let cell = |col: u32, row: u32| 1u64 << (col * s + row);
        // First: c1 d1 e1 (threats b1 and f1); second: a1 c2 d2 (none).
        // Each holds one piece of the centre column d.
        let first = cell(2, 0) | cell(3, 0) | cell(4, 0);
        let second = cell(0, 0) | cell(2, 1) | cell(3, 1);
        let pos = Connect4Position { first, second };
        assert!(pos.first_to_move());
        assert_eq!(g.evaluate(&pos), 16 * 2);
        // First adds a2 (no new threat): now second is to move, 2 down.
        let pos = Connect4Position {
            first: first | cell(0, 1),
            second,
        };
        assert!(!pos.first_to_move());
        assert_eq!(g.evaluate(&pos), -16 * 2);
    }
}
