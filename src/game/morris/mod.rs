//! Nine Men's Morris: the whole game from the empty board (`pieces=N`), or
//! phases II and III alone (moving and flying, `max=K`), as in Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions".
//!
//! # Board
//! 24 points on three concentric squares joined at the middles of their sides,
//! named as in the usual notation by column `a`..`g` and row `1`..`7`:
//!
//! ```text
//! 7  a7 ----------- d7 ----------- g7
//!    |              |              |
//! 6  |   b6 ------- d6 ------- f6  |
//!    |   |          |          |   |
//! 5  |   |   c5 --- d5 --- e5  |   |
//!    |   |   |             |   |   |
//! 4  a4 -b4 -c4            e4 -f4 -g4
//!    |   |   |             |   |   |
//! 3  |   |   c3 --- d3 --- e3  |   |
//!    |   |          |          |   |
//! 2  |   b2 ------- d2 ------- f2  |
//!    |              |              |
//! 1  a1 ----------- d1 ----------- g1
//!    a   b   c      d      e   f   g
//! ```
//!
//! Points are numbered 0..24 in the order a1, a4, a7, b2, b4, b6, c3, c4, c5,
//! d1, d2, d3, d5, d6, d7, e3, e4, e5, f2, f4, f6, g1, g4, g7 (bit `i` of a
//! bitboard is point `i`). A *mill* is three points on one drawn line: the
//! eight rows and eight columns of three above (16 mills; the middle lines
//! a4-b4-c4, e4-f4-g4, d1-d2-d3, d5-d6-d7 count, lines through the centre do not).
//!
//! # Rules (Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions", the standard game after all pieces are placed)
//! - The side to move moves one of its pieces along a line to an adjacent
//!   empty point. A player with exactly three pieces may instead *fly*: move
//!   a piece to any empty point.
//! - A move that closes a mill (the moved piece ends on a line of three of its
//!   own colour) removes one opponent piece that is not in a mill; if every
//!   opponent piece is in a mill, any of them may be removed. Closing two
//!   mills at once still removes only one piece (after the opening this cannot
//!   happen: a sliding piece leaves one of the two lines through its target,
//!   and a flying side has too few pieces). Each choice of removed piece is a
//!   separate move.
//! - A player reduced to two pieces loses. A player who cannot move (every
//!   piece blocked, and not flying) loses.
//! - A position that can repeat forever without a decision is a draw.
//!
//! # Phase I (placing), the whole game with `pieces=N`
//! The standard rules that Gasser and the Malom project solved, with N
//! pieces per side (9 is the real game; 3..=8 are the same rules with fewer):
//! - Play starts on the empty board with N pieces in each hand; white places
//!   first. A placement puts a piece from the hand on any empty point (there
//!   is always one: at most 2N - 1 < 24 pieces stand when one is placed).
//! - A placement that closes a mill removes one opponent piece *from the
//!   board* (never from the hand) under the same rule as in phase II: not one
//!   in a mill, unless all are. Two mills closed by one placement still
//!   remove one piece. Were no opponent piece on the board, nothing would be
//!   removed (play cannot get there: the opponent has placed one more piece
//!   than the mills could have taken since).
//! - A side whose pieces on the board and in hand number two loses at once
//!   (the removal that got it there wins); nobody is blocked while placing.
//! - After the 2N-th placement, phase II starts with white to move: from
//!   there the rules above apply, and the value is phase II/III's (the
//!   partitions `k1-k2` and `2-k` of the same build). Moving during the
//!   placement phase (Lasker's variant) is not allowed.
//!
//! Phase I's partitions are the sets S(a, b, t) of Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions": `tTT-a-b`
//! holds the positions after `t` placements (0..2N; the pieces in hand are
//! N - t/2 for the side to move and N - (t+1)/2 for its opponent, rounding
//! down) with `a` pieces of the side to move and `b` of the opponent on the
//! board, indexed like S(a, b) of phase II (classes or boards). Only the
//! counts that the capture rules allow get a partition. Every placement leads
//! from layer `t` to layer `t + 1`, so forward search marks the positions
//! that play reaches layer by layer (one bit each, [`crate::Forward::Layer`]),
//! and only those are solved and stored: an index that play never reaches
//! holds 0 (*not reached*). Phase I values are the same bytes as phases
//! II/III's: win or loss with the distance in plies to the end of the game
//! under best play (placements count as plies), or draw.
//!
//! # Partitions and hash
//! Positions are stored from the side to move: colour 1 is the mover, colour
//! 2 the opponent, so a value needs no colour flip. The set S(a, b) (mover has
//! `a` pieces, opponent `b`) is ranked with the multinomial hash of Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions"
//! (Algorithms 1 and 2, the same order as [`crate::hash::Multinomial`] with
//! counts `[a, b]`), table-driven here because it runs in the solver's inner loop.
//!
//! A move without capture leads from S(a, b) to S(b, a), and back: the two are
//! one cycle, so they share a partition. Partition `k1-k2` (k1 >= k2 >= 3)
//! holds S(k1, k2) at ranks `0..M` and, when k1 != k2, S(k2, k1) at ranks
//! `M..2M`, where M = 24! / (k1! k2! (24-k1-k2)!) is Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions" Table 1's size of
//! `k1-k2`. A capture lowers the total piece count, so partitions are solved
//! by increasing total. Partition `2-k` holds S(2, k): the side to move was
//! just reduced to two pieces, every index is a loss at distance 0. They exist
//! so that a capture that ends the game has a successor to point at.
//!
//! `--param max=K` builds every `k1-k2` with 3 <= k2 <= k1 <= K and `2-k` for
//! 3 <= k <= K. Every board is a legal position (the seed counts the whole
//! multinomial space too).
//!
//! Symmetries: the board has 16 (the square's 8 rotations and reflections,
//! times swapping the inner and outer squares), and every rule is invariant
//! under them. With `symmetry=off` each S(a, b) is indexed by the seed's
//! multinomial, M indices as above. With `symmetry=on` (the default) it is
//! indexed by symmetry classes ([`classes`]: a perfect hash in the style of
//! Gasser's and Malom's, one index per class, none unused): [`Game::rank`]
//! maps a position to its class's index, [`Game::unrank`] gives the class's
//! representative (the image with the smallest mover bitboard, then the
//! smallest opponent bitboard), and [`Game::weights`] says how many positions
//! each index stands for (16, or fewer for a symmetric class), so that a build
//! reports positions as well as classes. Probing any position of a class gives
//! the same answer. `max=9` has 8,904,593,601 classes in its `k1-k2`
//! partitions (142,430,121,724 positions) and 18,972,552 in the lost ones.
//!
//! # Notation
//! `W:a1,a4,d2;B:g7,g4,f4;w`: white's points, black's points, the side to
//! move (`w` or `b`); in phase I `;h=W,B` follows, white's and black's pieces
//! in hand (`W:a1,d2;B:g7;w;h=7,8`; the empty board `W:;B:;w;h=9,9`). Moves
//! are `from-to` (`a4-b4`, or a flight `a4-e5`), a bare point for a
//! placement (`d6`), with `xPOINT` appended for the removed piece
//! (`d6-d5xa1`, `d6xg7`). The colour in a position is presentation only: positions
//! with colours and side swapped are the same game state and compare equal.

#[cfg(feature = "build")]
pub mod check;
pub mod classes;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "build")]
pub mod expand;
#[cfg(feature = "build")]
pub mod kernels;
#[cfg(feature = "build")]
pub mod place;
#[cfg(feature = "build")]
pub mod rank24;
#[cfg(feature = "build")]
pub mod retro;
#[cfg(feature = "build")]
pub mod stream;
#[cfg(feature = "build")]
pub mod twin;

use super::params::{GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Ranking, Status};
use crate::value::{PartitionId, Rank, Weights};
use crate::{Error, Result};
use classes::HalfRanks;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "morris",
    summary: "Nine Men's Morris: the whole game from the empty board (pieces=N, 9 is the \
              real game), or phases II and III (moving, flying) alone with 3..=max pieces per \
              side; values with distance (Edelkamp, Sulewski and Yücel, \"GPU Exploration of Two-Player Games with Perfect Hash Functions\")",
    kind: GameKind::TwoPlayer,
    params: &[
        ParamDoc {
            key: "max",
            default: "3",
            help: "most pieces per side, 3..=9: builds partitions k1-k2 with 3 <= k2 <= k1 <= max \
                   and the lost 2-k (positions: max=3 3.1 M, max=4 81 M, max=5 0.99 G, \
                   max=9 143 G, all of phases II/III; with symmetry on, about 1/16 as many \
                   indices: max=9 8.9 G)",
        },
        ParamDoc {
            key: "pieces",
            default: "none",
            help: "the whole game with N pieces per side, 3..=9 (9: Nine Men's Morris): phases \
                   II/III with max=N, then every placement layer from the empty board (only the \
                   positions play reaches are solved); give either pieces or max; \
                   `build --from DIR` copies the phase II/III partitions of any morris build \
                   with the same symmetry setting instead of solving them",
        },
        ParamDoc {
            key: "symmetry",
            default: "on",
            help: "on: index one position per class of the board's 16 symmetries (a perfect \
                   hash of classes; probes of any position of a class give its value, and counts \
                   give both classes and positions); off: index every position (Edelkamp, Sulewski and Yücel's \"GPU Exploration of Two-Player Games with Perfect Hash Functions\" \
                   multinomial)",
        },
    ],
    notation: "W:<white points>;B:<black points>;<w|b to move>, points a1..g7 as in the usual \
               Morris notation (a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 \
               g1 g4 g7), then `;h=W,B` (pieces in hand) while placing (empty board: \
               W:;B:;w;h=9,9); moves are from-to (a4-b4) or a point (a placement, d6), plus \
               xPOINT for a removed piece (d6-d5xa1, d6xg7)",
    example: "W:a1,a4,d2;B:g7,g4,f4;w",
};

/// Point names in index order (bit `i` of a bitboard).
pub const POINT_NAMES: [&str; 24] = [
    "a1", "a4", "a7", "b2", "b4", "b6", "c3", "c4", "c5", "d1", "d2", "d3", "d5", "d6", "d7", "e3",
    "e4", "e5", "f2", "f4", "f6", "g1", "g4", "g7",
];

/// The 16 mills as point indices, each line in order along it (so that the
/// middle point is adjacent to both ends): 8 rows, then 8 columns. The CUDA
/// backend's tables are built from this one.
pub const MILL_LINES: [[u8; 3]; 16] = [
    // rows
    [2, 14, 23],  // a7 d7 g7
    [5, 13, 20],  // b6 d6 f6
    [8, 12, 17],  // c5 d5 e5
    [1, 4, 7],    // a4 b4 c4
    [16, 19, 22], // e4 f4 g4
    [6, 11, 15],  // c3 d3 e3
    [3, 10, 18],  // b2 d2 f2
    [0, 9, 21],   // a1 d1 g1
    // columns
    [0, 1, 2],    // a1 a4 a7
    [3, 4, 5],    // b2 b4 b6
    [6, 7, 8],    // c3 c4 c5
    [9, 10, 11],  // d1 d2 d3
    [12, 13, 14], // d5 d6 d7
    [15, 16, 17], // e3 e4 e5
    [18, 19, 20], // f2 f4 f6
    [21, 22, 23], // g1 g4 g7
];

const FULL: u32 = (1 << 24) - 1;

/// Bitboard of each mill.
pub(crate) const MILL_MASKS: [u32; 16] = {
    let mut out = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = (1 << MILL_LINES[i][0]) | (1 << MILL_LINES[i][1]) | (1 << MILL_LINES[i][2]);
        i += 1;
    }
    out
};

/// Neighbours of each point: the consecutive points of the lines through it.
pub(crate) const ADJACENT: [u32; 24] = {
    let mut out = [0u32; 24];
    let mut i = 0;
    while i < 16 {
        let [x, y, z] = MILL_LINES[i];
        out[x as usize] |= 1 << y;
        out[y as usize] |= (1 << x) | (1 << z);
        out[z as usize] |= 1 << y;
        i += 1;
    }
    out
};

/// The two mills through each point.
const MILLS_AT: [[u32; 2]; 24] = {
    let mut out = [[0u32; 2]; 24];
    let mut seen = [0usize; 24];
    let mut i = 0;
    while i < 16 {
        let mut j = 0;
        while j < 3 {
            let p = MILL_LINES[i][j] as usize;
            out[p][seen[p]] = MILL_MASKS[i];
            seen[p] += 1;
            j += 1;
        }
        i += 1;
    }
    out
};

/// Most pieces one side has.
const MAX_PIECES: usize = 9;

/// `COEF[m][a + 1][b + 1]` = m! / (a! b! (m-a-b)!) (0 when a + b > m); index 0
/// stands for a count of -1 and holds 0, which keeps rank/unrank branch-light.
type CoefTable = [[[u64; MAX_PIECES + 2]; MAX_PIECES + 2]; 25];

static COEF: CoefTable = {
    let mut binom = [[0u64; 25]; 25];
    let mut n = 0;
    while n < 25 {
        binom[n][0] = 1;
        let mut k = 1;
        while k <= n {
            binom[n][k] = binom[n - 1][k - 1] + if k < n { binom[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    let mut out = [[[0u64; MAX_PIECES + 2]; MAX_PIECES + 2]; 25];
    let mut m = 0;
    while m < 25 {
        let mut a = 0;
        while a <= MAX_PIECES {
            let mut b = 0;
            while b <= MAX_PIECES {
                if a + b <= m {
                    out[m][a + 1][b + 1] = binom[m][a] * binom[m - a][b];
                }
                b += 1;
            }
            a += 1;
        }
        m += 1;
    }
    out
};

/// Size of S(a, b): boards with `a` mover and `b` opponent pieces.
fn space(a: u32, b: u32) -> u64 {
    COEF[24][a as usize + 1][b as usize + 1]
}

/// Seed 000 Algorithm 1 for two colours (1 = mover, 2 = opponent, 0 empty).
///
/// Algorithm 1 adds, at an empty cell with `m` cells after it, M(m; a, b-1) +
/// M(m; a-1, b) = M(m+1; a, b) - M(m; a, b) (Pascal's rule for multinomials:
/// the cell is a 1, a 2 or empty). Over a run of empty cells the sum
/// telescopes, so the loop visits only the occupied cells: O(pieces), not
/// O(24), for the same rank. Tests check it against [`crate::hash::Multinomial`].
#[inline]
fn rank_boards(mover: u32, opponent: u32) -> u64 {
    let mut a = mover.count_ones() as usize;
    let mut b = opponent.count_ones() as usize;
    let mut occupied = mover | opponent;
    let mut r = 0u64;
    // First cell not yet accounted for.
    let mut p = 0usize;
    while occupied != 0 {
        let q = occupied.trailing_zeros() as usize;
        occupied &= occupied - 1;
        // The empty cells p..q.
        r += COEF[24 - p][a + 1][b + 1] - COEF[24 - q][a + 1][b + 1];
        let is_mover = ((mover >> q) & 1) as usize;
        // A 1 here counts the boards with a 2 here instead.
        r += COEF[23 - q][a + 1][b] * is_mover as u64;
        a -= is_mover;
        b -= 1 - is_mover;
        p = q + 1;
    }
    r
}

/// Seed 000 Algorithm 2: the (mover, opponent) boards with index `r` of S(a, b).
#[inline]
fn unrank_boards(mut r: u64, mut a: usize, mut b: usize) -> (u32, u32) {
    let (mut mover, mut opponent) = (0u32, 0u32);
    let mut i = 0usize;
    while a + b > 0 {
        let m = 23 - i;
        let twos = COEF[m][a + 1][b];
        let ones = COEF[m][a][b + 1];
        if r < twos {
            opponent |= 1 << i;
            b -= 1;
        } else if r < twos + ones {
            r -= twos;
            mover |= 1 << i;
            a -= 1;
        } else {
            r -= twos + ones;
        }
        i += 1;
    }
    (mover, opponent)
}

/// The board's 16 symmetries as bit permutations, one 256-entry table per
/// byte of a bitboard: `SYMMETRIES[s][k][byte]` is the image of `byte << 8k`.
type SymmetryTables = [[[u32; 256]; 3]; 16];

/// The 16 symmetries of the board as point permutations (identity first):
/// bit 3 swaps the inner and outer squares, bit 2 mirrors, bits 0-1 turn by
/// quarter turns, on points placed at (column - d, row - 4). The CUDA backend
/// builds its tables from this list too.
pub fn symmetry_permutations() -> Vec<[usize; 24]> {
    // Points as (dx, dy) from the centre d4; ring = max(|dx|, |dy|) in 1..=3.
    let coords: Vec<(i32, i32)> = POINT_NAMES
        .iter()
        .map(|n| {
            let b = n.as_bytes();
            (i32::from(b[0] - b'a') - 3, i32::from(b[1] - b'1') - 3)
        })
        .collect();
    (0..16)
        .map(|s| {
            let (swap_rings, mirror, turns) = (s & 8 != 0, s & 4 != 0, s & 3);
            let mut perm = [0usize; 24];
            for (i, &(mut dx, mut dy)) in coords.iter().enumerate() {
                if swap_rings {
                    // Inner and outer squares trade places; the middle one stays.
                    match dx.abs().max(dy.abs()) {
                        3 => (dx, dy) = (dx / 3, dy / 3),
                        1 => (dx, dy) = (dx * 3, dy * 3),
                        _ => {}
                    }
                }
                if mirror {
                    dx = -dx;
                }
                for _ in 0..turns {
                    (dx, dy) = (-dy, dx);
                }
                perm[i] = coords
                    .iter()
                    .position(|&c| c == (dx, dy))
                    .expect("a symmetry maps points to points");
            }
            perm
        })
        .collect()
}

static SYMMETRIES: LazyLock<Box<SymmetryTables>> = LazyLock::new(|| {
    let mut tables = Box::new([[[0u32; 256]; 3]; 16]);
    for (table, image) in tables.iter_mut().zip(symmetry_permutations()) {
        for (k, bytes) in table.iter_mut().enumerate() {
            for (byte, out) in bytes.iter_mut().enumerate() {
                *out = bits(byte as u32)
                    .map(|bit| 1u32 << image[8 * k + bit as usize])
                    .fold(0, |acc, b| acc | b);
            }
        }
    }
    tables
});

/// The image of bitboard `mask` under symmetry table `t`.
#[inline]
fn map_board(t: &[[u32; 256]; 3], mask: u32) -> u32 {
    t[0][(mask & 0xff) as usize] | t[1][((mask >> 8) & 0xff) as usize] | t[2][(mask >> 16) as usize]
}

/// The representative of (mover, opponent) under the 16 symmetries: the image
/// with the smallest mover bitboard, ties broken by the opponent's.
#[inline]
fn canonical(mover: u32, opponent: u32) -> (u32, u32) {
    let mut best = (mover, opponent);
    for t in &SYMMETRIES[1..] {
        let m = map_board(t, mover);
        if m <= best.0 {
            let o = map_board(t, opponent);
            if (m, o) < best {
                best = (m, o);
            }
        }
    }
    best
}

/// Every point of `mask` that lies in a mill of `mask`.
#[inline]
fn in_mills(mask: u32) -> u32 {
    let mut out = 0;
    for m in MILL_MASKS {
        if mask & m == m {
            out |= m;
        }
    }
    out
}

/// Iterates the set bits of a bitboard, lowest first.
#[inline]
pub(crate) fn bits(mut mask: u32) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            i
        })
    })
}

/// A position: the pieces of the side to move and of its opponent.
///
/// `white_to_move` only says which colour the mover plays when the position
/// is written out; it takes no part in rank or equality (a position and its
/// colour-swapped twin are the same game state).
#[derive(Clone, Copy, Debug, Eq)]
pub struct Position {
    /// Bitboard of the side to move's pieces (bit `i` = [`POINT_NAMES`]`[i]`).
    pub mover: u32,
    /// Bitboard of the opponent's pieces.
    pub opponent: u32,
    /// Whether the side to move plays white (for notation only).
    pub white_to_move: bool,
    /// Pieces still in hand (phase I): the mover's, then the opponent's.
    /// `[0, 0]` in phases II/III.
    pub hand: [u8; 2],
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        self.mover == other.mover && self.opponent == other.opponent && self.hand == other.hand
    }
}

impl Position {
    /// The position after the mover's pieces became `moved` and the
    /// opponent's `left`: the opponent is to move.
    fn after(&self, moved: u32, left: u32) -> Position {
        Position {
            mover: left,
            opponent: moved,
            white_to_move: !self.white_to_move,
            hand: [self.hand[1], self.hand[0]],
        }
    }

    /// The position after a placement: as [`Position::after`], with one piece
    /// fewer in the mover's hand.
    fn after_placing(&self, moved: u32, left: u32) -> Position {
        Position {
            hand: [self.hand[1], self.hand[0] - 1],
            ..self.after(moved, left)
        }
    }

    /// Whether pieces are still to be placed (phase I).
    pub fn placing(&self) -> bool {
        self.hand != [0, 0]
    }

    /// White's pieces.
    pub fn white(&self) -> u32 {
        if self.white_to_move {
            self.mover
        } else {
            self.opponent
        }
    }

    /// Black's pieces.
    pub fn black(&self) -> u32 {
        if self.white_to_move {
            self.opponent
        } else {
            self.mover
        }
    }
}

/// A move: a slide or flight `from`-`to` (or a placement when `from` is `None`),
/// with the removed opponent piece when it closes a mill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// Point the piece leaves (`None` for a placement, phase I).
    pub from: Option<u8>,
    /// Point the piece arrives at.
    pub to: u8,
    /// Opponent point emptied by a closed mill.
    pub capture: Option<u8>,
}

/// A partition: `k1-k2` (both sides to move) or the lost `2-k` of phases
/// II/III, or a placement layer `tTT-a-b` of phase I.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// k1 >= k2 >= 3: S(k1, k2) then, if k1 != k2, S(k2, k1).
    Pair(u32, u32),
    /// S(2, k): the side to move has two pieces left.
    Lost(u32),
    /// Phase I: `t` placements made (the pieces in hand follow from `t`),
    /// the side to move has `a` pieces on the board and its opponent `b`.
    Place {
        /// Placements made, 0..2N.
        t: u32,
        /// The mover's pieces on the board.
        a: u32,
        /// The opponent's pieces on the board.
        b: u32,
    },
}

impl Part {
    /// `k1-k2` is id 10 k1 + k2 (33..=99); `2-k` is id k (3..=9); `tTT-a-b`
    /// is 100 (t + 1) + 10 a + b (100..=1899).
    fn id(self) -> PartitionId {
        PartitionId(match self {
            Part::Pair(k1, k2) => 10 * k1 + k2,
            Part::Lost(k) => k,
            Part::Place { t, a, b } => 100 * (t + 1) + 10 * a + b,
        })
    }

    fn from_id(p: PartitionId) -> Option<Part> {
        if (100..1900).contains(&p.0) {
            let (t, a, b) = (p.0 / 100 - 1, p.0 / 10 % 10, p.0 % 10);
            return Some(Part::Place { t, a, b });
        }
        let (hi, lo) = (p.0 / 10, p.0 % 10);
        match (hi, lo) {
            (0, k) if (3..=9).contains(&k) => Some(Part::Lost(k)),
            (k1, k2) if k1 <= 9 && k2 >= 3 && k1 >= k2 => Some(Part::Pair(k1, k2)),
            _ => None,
        }
    }

    /// The halves: (mover, opponent) piece counts, in index order.
    fn halves(self) -> impl Iterator<Item = (u32, u32)> {
        // An iterator, not a vector: ranking and unranking ask per position.
        let (first, second) = match self {
            Part::Pair(k1, k2) if k1 == k2 => ((k1, k2), None),
            Part::Pair(k1, k2) => ((k1, k2), Some((k2, k1))),
            Part::Lost(k) => ((2, k), None),
            Part::Place { a, b, .. } => ((a, b), None),
        };
        std::iter::once(first).chain(second)
    }
}

/// The game: phases II and III with up to `max` pieces per side, or the
/// whole game with `pieces` per side (phase I too).
#[derive(Clone, Debug)]
pub struct Morris {
    max: u32,
    symmetry: bool,
    /// The whole game (`pieces=N`): phase I from the empty board, N = `max`.
    whole: bool,
}

impl Morris {
    /// Reads `pieces` (the whole game, 3..=9) or `max` (phases II/III, 3..=9,
    /// default 3), and `symmetry`.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("morris", raw);
        let whole = raw.contains_key("pieces");
        if whole && raw.contains_key("max") {
            return Err(p.error(
                "give either `pieces=N` (the whole game, phases I-III, N pieces per side) or \
                 `max=K` (phases II/III only), not both"
                    .to_string(),
            ));
        }
        let max = if whole {
            p.uint("pieces", 9, 3..=MAX_PIECES as u64)? as u32
        } else {
            p.uint("max", 3, 3..=MAX_PIECES as u64)? as u32
        };
        let symmetry = match p.text("symmetry").map(str::trim) {
            None | Some("on") => true,
            Some("off") => false,
            Some(other) => {
                return Err(p.error(format!(
                    "`symmetry={other}`: write `symmetry=on` (store one position per symmetry class) or `symmetry=off`"
                )))
            }
        };
        p.finish()?;
        Ok(Morris {
            max,
            symmetry,
            whole,
        })
    }

    /// The whole game with `pieces` per side (3..=9; 9 is Nine Men's Morris):
    /// phase I from the empty board, then phases II/III.
    pub fn whole(pieces: u32, symmetry: bool) -> Result<Self> {
        let mut raw = BTreeMap::new();
        raw.insert("pieces".to_string(), pieces.to_string());
        let sym = if symmetry { "on" } else { "off" };
        raw.insert("symmetry".to_string(), sym.to_string());
        Self::from_params(&raw)
    }

    /// Whether this is the whole game (phase I included).
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// Pieces in hand at `t` placements made: the mover's, the opponent's.
    fn hands_at(&self, t: u32) -> [u8; 2] {
        [(self.max - t / 2) as u8, (self.max - t.div_ceil(2)) as u8]
    }

    /// The placement layers' partitions at depth `t`, by (a, b): every count
    /// of pieces on the board that the rules allow there (a superset of what
    /// play reaches; the forward search finds which positions it does).
    fn place_parts(&self, t: u32) -> Vec<Part> {
        // Placed so far: the mover t/2 pieces, the opponent (t+1)/2.
        let (placed_m, placed_o) = (t / 2, t.div_ceil(2));
        let [hand_m, hand_o] = self.hands_at(t).map(u32::from);
        let mut out = Vec::new();
        for a in 0..=placed_m {
            for b in 0..=placed_o {
                // A side captures at most once per placement from its third on.
                let lost_m_ok = placed_m - a <= placed_o.saturating_sub(2);
                let lost_o_ok = placed_o - b <= placed_m.saturating_sub(2);
                // The opponent is never below three: the game would have
                // ended on its turn. The mover at exactly two has just lost.
                if lost_m_ok && lost_o_ok && b + hand_o >= 3 && a + hand_m >= 2 {
                    out.push(Part::Place { t, a, b });
                }
            }
        }
        out
    }

    /// The game with up to `max` pieces per side (3..=9), storing one position
    /// per symmetry class when `symmetry` is true.
    pub fn new(max: u32, symmetry: bool) -> Result<Self> {
        let mut raw = BTreeMap::new();
        raw.insert("max".to_string(), max.to_string());
        let sym = if symmetry { "on" } else { "off" };
        raw.insert("symmetry".to_string(), sym.to_string());
        Self::from_params(&raw)
    }

    /// How S(a, b) is indexed in this game.
    pub fn half(&self, a: u32, b: u32) -> HalfRanks {
        HalfRanks::new(a, b, self.symmetry)
    }

    /// The phase II/III partition of boards with `a` pieces to move and `b`
    /// for the opponent, and where their half starts in it (the larger
    /// count's side to move comes first).
    fn pair_half(&self, a: u32, b: u32) -> (PartitionId, u64) {
        let offset = if a < b { self.half(b, a).size() } else { 0 };
        (Part::Pair(a.max(b), a.min(b)).id(), offset)
    }

    /// The partition of a position in phase II/III with `a` pieces to move
    /// and `b` for the opponent (lost where the side to move has two), and
    /// where their half starts in it.
    fn moving_half(&self, a: u32, b: u32) -> (PartitionId, u64) {
        if a == 2 {
            (Part::Lost(b).id(), 0)
        } else {
            self.pair_half(a, b)
        }
    }

    /// Each half of `part` with its first index.
    fn halves(&self, part: Part) -> Vec<(u64, HalfRanks)> {
        let mut base = 0;
        part.halves()
            .map(|(a, b)| {
                let half = self.half(a, b);
                let at = base;
                base += half.size();
                (at, half)
            })
            .collect()
    }

    /// Whether positions are folded by the board's symmetries.
    pub fn symmetry(&self) -> bool {
        self.symmetry
    }

    /// Most pieces per side.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The partition id of phase I's layer `t` (placements made) with `a`
    /// pieces of the side to move and `b` of its opponent on the board.
    pub fn placement_partition(t: u32, a: u32, b: u32) -> PartitionId {
        Part::Place { t, a, b }.id()
    }

    /// The partition id of `k1-k2` (k1 >= k2 >= 3) or, with `k2 == 2`, of `2-k1`.
    pub fn partition_of(k1: u32, k2: u32) -> PartitionId {
        if k2 == 2 {
            Part::Lost(k1).id()
        } else {
            Part::Pair(k1.max(k2), k1.min(k2)).id()
        }
    }

    /// The number of boards with `a` pieces of one colour and `b` of the
    /// other: 24! / (a! b! (24-a-b)!), Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" size of S(a, b).
    pub fn space_size(a: u32, b: u32) -> u64 {
        if a as usize > MAX_PIECES || b as usize > MAX_PIECES {
            return 0;
        }
        space(a, b)
    }

    fn mobile(pos: &Position) -> bool {
        if pos.mover.count_ones() == 3 {
            return true;
        }
        let empty = !(pos.mover | pos.opponent) & FULL;
        bits(pos.mover).any(|p| ADJACENT[p as usize] & empty != 0)
    }

    fn bad(&self, text: &str, message: impl Into<String>) -> Error {
        Error::BadPosition {
            game: "morris".into(),
            text: text.into(),
            message: format!(
                "{}; write e.g. `W:a1,a4,d2;B:g7,g4,f4;w` (white points; black points; side to move)",
                message.into()
            ),
        }
    }

    fn parse_points(&self, text: &str, list: &str) -> Result<u32> {
        let mut mask = 0u32;
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let lower = name.to_ascii_lowercase();
            let Some(i) = POINT_NAMES.iter().position(|&p| p == lower) else {
                return Err(self.bad(
                    text,
                    format!("`{name}` is not a point of the board (a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7)"),
                ));
            };
            if mask & (1 << i) != 0 {
                return Err(self.bad(text, format!("point {lower} is listed twice")));
            }
            mask |= 1 << i;
        }
        Ok(mask)
    }

    /// `h=W,B`: white's and black's pieces in hand.
    fn parse_hands(&self, text: &str, h: &str) -> Result<[u8; 2]> {
        let counts = h
            .strip_prefix("h=")
            .or_else(|| h.strip_prefix("H="))
            .map(|c| {
                c.split(',')
                    .map(|n| n.trim().parse::<u8>())
                    .collect::<Vec<_>>()
            });
        match counts.as_deref() {
            Some([Ok(w), Ok(b)]) if *w <= MAX_PIECES as u8 && *b <= MAX_PIECES as u8 => {
                Ok([*w, *b])
            }
            _ => Err(self.bad(
                text,
                format!("`{h}` should be `h=W,B`, white's and black's pieces in hand (0..=9 each)"),
            )),
        }
    }

    /// A phase I position, checked against the whole game's rules: hands
    /// that placement alternation allows, pieces on the board that captures allow.
    fn check_placing(
        &self,
        text: &str,
        mover: u32,
        opponent: u32,
        white_to_move: bool,
        hands: [u8; 2],
        hand: [u8; 2],
    ) -> Result<Position> {
        let n = self.max;
        if !self.whole {
            return Err(self.bad(
                text,
                format!(
                    "pieces in hand are phase I, which this build (phases II/III, max={n}) does not hold: \
                     build the whole game with `--param pieces={n}`"
                ),
            ));
        }
        let [w, b] = hands.map(u32::from);
        // White places first: with white to move both have placed as many,
        // with black to move white has placed one more.
        let alternates = if white_to_move { w == b } else { b == w + 1 };
        if w > n || b > n || !alternates {
            return Err(self.bad(
                text,
                format!(
                    "`h={w},{b}` with {} to move cannot arise with {n} pieces each: white places first, \
                     so with white to move both hands are equal, with black to move black holds one more",
                    if white_to_move { "white" } else { "black" }
                ),
            ));
        }
        let t = 2 * n - w - b;
        let (a, bb) = (mover.count_ones(), opponent.count_ones());
        if !self.place_parts(t).contains(&Part::Place { t, a, b: bb }) {
            return Err(self.bad(
                text,
                format!(
                    "after {t} placements the side to move cannot have {a} pieces on the board and \
                     its opponent {bb}: more placed than the hands allow, more lost than mills could \
                     take, or a side already below three"
                ),
            ));
        }
        Ok(Position {
            mover,
            opponent,
            white_to_move,
            hand,
        })
    }

    fn write_points(mask: u32) -> String {
        bits(mask)
            .map(|i| POINT_NAMES[i as usize])
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The boards the opponent of `pos` had before its last move, where that
/// move stayed in the partition: quiet moves only, since a capture leaves
/// for a partition of fewer pieces and a placement for the next placement
/// partition, so no position in phase I, nor one that is lost, has a
/// predecessor in its partition. One of its pieces goes back from `to` to
/// an empty `from` (any empty point when it has three and flies), unless
/// arriving on `to` closed a mill (a capture).
#[inline]
fn each_unmove_within(pos: &Position, mut f: impl FnMut(u32)) {
    let (mover, opponent) = (pos.mover, pos.opponent);
    if pos.placing() || mover.count_ones() < 3 || opponent.count_ones() < 3 {
        return;
    }
    let empty = !(mover | opponent) & FULL;
    let flying = opponent.count_ones() == 3;
    for to in bits(opponent) {
        let [m1, m2] = MILLS_AT[to as usize];
        if opponent & m1 == m1 || opponent & m2 == m2 {
            continue;
        }
        let from = if flying {
            empty
        } else {
            ADJACENT[to as usize] & empty
        };
        for from in bits(from) {
            f(opponent ^ (1 << to) ^ (1 << from));
        }
    }
}

/// Every move of `pos` (an ongoing position), in the order
/// [`Game::successors`] lists them, with the mover's board after it and
/// the opponent's board left (less a captured piece), until `f` returns
/// `false`.
#[inline]
fn each_move(pos: &Position, mut f: impl FnMut(Move, u32, u32) -> bool) {
    let own = pos.mover;
    let opp = pos.opponent;
    let empty = !(own | opp) & FULL;
    let flying = own.count_ones() == 3;
    // Pieces in a mill are protected unless every piece is in one.
    let protected = in_mills(opp);
    let removable = if protected == opp {
        opp
    } else {
        opp & !protected
    };
    // A move (or placement) to `to` that leaves the mover's board `moved`:
    // `false` once `f` says stop.
    let mut step = |from: Option<u8>, to: u8, moved: u32| -> bool {
        let [m1, m2] = MILLS_AT[to as usize];
        let closes = moved & m1 == m1 || moved & m2 == m2;
        let mut mv = Move {
            from,
            to,
            capture: None,
        };
        // With no opponent piece on the board a placement's mill removes
        // nothing (play cannot get there: kept for the rule's sake).
        if closes && (removable != 0 || from.is_some()) {
            for x in bits(removable) {
                mv.capture = Some(x);
                if !f(mv, moved, opp & !(1 << x)) {
                    return false;
                }
            }
            true
        } else {
            f(mv, moved, opp)
        }
    };
    if pos.placing() {
        for to in bits(empty) {
            if !step(None, to, own | 1 << to) {
                return;
            }
        }
        return;
    }
    for from in bits(own) {
        let targets = if flying {
            empty
        } else {
            ADJACENT[from as usize] & empty
        };
        for to in bits(targets) {
            if !step(Some(from), to, (own & !(1 << from)) | (1 << to)) {
                return;
            }
        }
    }
}

impl Game for Morris {
    type Position = Position;
    type Move = Move;

    fn info(&self) -> GameInfo {
        GameInfo {
            id: "morris",
            params: super::params::params([
                (
                    if self.whole { "pieces" } else { "max" },
                    self.max.to_string(),
                ),
                (
                    "symmetry",
                    if self.symmetry { "on" } else { "off" }.to_string(),
                ),
            ]),
            kind: GameKind::TwoPlayer,
        }
    }

    /// Material, for the side to move: 100 for each of its pieces on the
    /// board or in hand, less the opponent's (a side reduced to two pieces
    /// has lost).
    fn evaluate(&self, pos: &Position) -> i32 {
        let mine = pos.mover.count_ones() as i32 + i32::from(pos.hand[0]);
        let theirs = pos.opponent.count_ones() as i32 + i32::from(pos.hand[1]);
        100 * (mine - theirs)
    }

    fn partitions(&self) -> Vec<PartitionId> {
        let mut out: Vec<PartitionId> = (3..=self.max).map(|k| Part::Lost(k).id()).collect();
        // Captures lower the total piece count: solve by increasing total.
        let mut pairs: Vec<(u32, u32)> = (3..=self.max)
            .flat_map(|k1| (3..=k1).map(move |k2| (k1, k2)))
            .collect();
        pairs.sort_by_key(|&(k1, k2)| (k1 + k2, k1));
        out.extend(pairs.into_iter().map(|(k1, k2)| Part::Pair(k1, k2).id()));
        if self.whole {
            // Every placement leads one layer deeper: the last layer first.
            for t in (0..2 * self.max).rev() {
                out.extend(self.place_parts(t).into_iter().map(Part::id));
            }
        }
        out
    }

    fn successor_partitions(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        // Where a side left with `a` pieces moves against `b`.
        let moving = |a: u32, b: u32| {
            if a == 2 {
                Part::Lost(b)
            } else {
                Part::Pair(a.max(b), a.min(b))
            }
        };
        let mut out: Vec<PartitionId> = match Part::from_id(p)? {
            Part::Lost(_) => Vec::new(),
            // A move without a capture swaps the halves S(k1, k2) and
            // S(k2, k1) of the pair; a capture takes a piece of the side
            // that moves next.
            Part::Pair(k1, k2) => vec![moving(k2 - 1, k1).id(), moving(k1 - 1, k2).id()],
            // A placement leads one layer on; the last to the moving phase.
            Part::Place { t, .. } if t + 1 < 2 * self.max => {
                self.place_parts(t + 1).into_iter().map(Part::id).collect()
            }
            Part::Place { .. } => self
                .partitions()
                .into_iter()
                .filter(|&q| !matches!(Part::from_id(q), Some(Part::Place { .. })))
                .collect(),
        };
        out.retain(|&q| q != p);
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        Part::from_id(p).map_or(0, |part| {
            part.halves().map(|(a, b)| self.half(a, b).size()).sum()
        })
    }

    fn partition_name(&self, p: PartitionId) -> String {
        match Part::from_id(p) {
            Some(Part::Pair(k1, k2)) => format!("{k1}-{k2}"),
            Some(Part::Lost(k)) => format!("2-{k}"),
            Some(Part::Place { t, a, b }) => format!("t{t:02}-{a}-{b}"),
            None => format!("invalid{}", p.0),
        }
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Position> {
        let part = Part::from_id(p)?;
        let (hand, white_to_move) = match part {
            Part::Place { t, .. } => (self.hands_at(t), t % 2 == 0),
            _ => ([0, 0], true),
        };
        let mut base = 0;
        for (a, b) in part.halves() {
            let half = self.half(a, b);
            let size = half.size();
            if r.0 < base + size {
                let (mover, opponent) = half.unrank(r.0 - base);
                if self.symmetry {
                    debug_assert_eq!(canonical(mover, opponent), (mover, opponent));
                }
                return Some(Position {
                    mover,
                    opponent,
                    white_to_move,
                    hand,
                });
            }
            base += size;
        }
        None
    }

    fn rank(&self, pos: &Position) -> (PartitionId, Rank) {
        let a = pos.mover.count_ones();
        let b = pos.opponent.count_ones();
        let r = self.half(a, b).rank(pos.mover, pos.opponent);
        if pos.placing() {
            let t = 2 * self.max - u32::from(pos.hand[0]) - u32::from(pos.hand[1]);
            return (Part::Place { t, a, b }.id(), Rank(r));
        }
        let (p, offset) = self.moving_half(a, b);
        (p, Rank(offset + r))
    }

    fn weights(&self, p: PartitionId) -> Weights {
        if !self.symmetry {
            return Weights::one();
        }
        let mut exceptions = Vec::new();
        for (base, half) in Part::from_id(p).map_or(Vec::new(), |part| self.halves(part)) {
            if let HalfRanks::Classes(c) = half {
                exceptions.extend(c.exceptions.iter().map(|&(r, w)| (Rank(base + r), w)));
            }
        }
        Weights {
            common: 16,
            exceptions,
        }
    }

    fn status(&self, pos: &Position) -> Status {
        if pos.placing() {
            // A placement is always possible (at most 2N - 1 < 24 points are
            // taken); a side loses in phase I only by dropping below three.
            return if pos.mover.count_ones() + u32::from(pos.hand[0]) < 3 {
                Status::Lost
            } else {
                Status::Ongoing
            };
        }
        if pos.mover.count_ones() < 3 || !Self::mobile(pos) {
            Status::Lost
        } else {
            Status::Ongoing
        }
    }

    /// Captures: a closed mill removes a piece, so the successor lies in a
    /// partition of fewer pieces, solved before this one.
    fn resolves(&self, _pos: &Position, mv: &Move, _succ: &Position) -> bool {
        mv.capture.is_some()
    }

    /// Quiet moves only: a capture leaves for a partition of fewer pieces,
    /// and a placement for the next placement partition, so no position in
    /// phase I, nor one that is lost, has a predecessor in its partition.
    fn predecessors_within(&self, pos: &Position, out: &mut Vec<Position>) -> bool {
        each_unmove_within(pos, |mover| {
            out.push(Position {
                mover,
                opponent: pos.mover,
                white_to_move: !pos.white_to_move,
                hand: [0, 0],
            })
        });
        true
    }

    fn visit_predecessor_ranks_within(
        &self,
        pos: &Position,
        _scratch: &mut Vec<Position>,
        visit: &mut dyn FnMut(PartitionId, Rank),
    ) -> bool {
        // Every predecessor within has the opponent to move with the same
        // pieces: one partition, one offset and one half for all of them.
        let (a, b) = (pos.opponent.count_ones(), pos.mover.count_ones());
        if pos.placing() || a < 3 || b < 3 {
            return true;
        }
        let (p, offset) = self.pair_half(a, b);
        let half = self.half(a, b);
        each_unmove_within(pos, |mover| {
            visit(p, Rank(offset + half.rank(mover, pos.mover)))
        });
        true
    }

    fn successors(&self, pos: &Position, out: &mut Vec<(Move, Position)>) {
        let placing = pos.placing();
        each_move(pos, |mv, moved, left| {
            out.push((
                mv,
                if placing {
                    pos.after_placing(moved, left)
                } else {
                    pos.after(moved, left)
                },
            ));
            true
        });
    }

    fn visit_successor_ranks(
        &self,
        pos: &Position,
        scratch: &mut Vec<(Move, Position)>,
        ranking: Ranking,
        visit: &mut dyn FnMut(PartitionId, Option<Rank>) -> bool,
    ) {
        if pos.placing() {
            return crate::game::rank_each_successor(self, pos, scratch, ranking, visit);
        }
        // A quiet move leaves the opponent's board whole, and it is the
        // side to move's next: one partition, one offset and one mover's
        // share of the ranking for all of them. A capture takes one of the
        // opponent's pieces: its partition is known before it is ranked.
        let (a, b) = (pos.opponent.count_ones(), pos.mover.count_ones());
        let quiet = (a > 2).then(|| {
            let (p, offset) = self.pair_half(a, b);
            let ranks = ranking
                .wants(p)
                .then(|| self.half(a, b).under(pos.opponent));
            (p, offset, ranks)
        });
        let captured = (a > 2).then(|| self.moving_half(a - 1, b).0);
        each_move(pos, |_, moved, left| match (&quiet, captured) {
            (Some((p, offset, ranks)), _) if left == pos.opponent => visit(
                *p,
                ranks.as_ref().map(|ranks| Rank(offset + ranks.rank(moved))),
            ),
            (_, Some(p)) if left != pos.opponent && !ranking.wants(p) => visit(p, None),
            _ => {
                let (p, r) = self.rank(&pos.after(moved, left));
                visit(p, ranking.wants(p).then_some(r))
            }
        });
    }

    fn start(&self) -> Option<Position> {
        // Phases II/III alone have no single start: phase I leads into them.
        self.whole.then_some(Position {
            mover: 0,
            opponent: 0,
            white_to_move: true,
            hand: [self.max as u8; 2],
        })
    }

    fn shares_partition_with(&self, other: &GameInfo, p: PartitionId) -> bool {
        let param = |k: &str| other.params.get(k).map(String::as_str);
        if other.id != "morris"
            || param("symmetry") != Some(self.info().params["symmetry"].as_str())
        {
            return false;
        }
        match Part::from_id(p) {
            // Phase I values depend on the pieces in hand: the same N only.
            Some(Part::Place { .. }) => {
                self.whole && param("pieces") == Some(self.max.to_string().as_str())
            }
            // A k1-k2 or 2-k partition's values depend only on the
            // partitions with fewer pieces, whatever the build's largest.
            Some(_) => true,
            None => false,
        }
    }

    fn forward(&self, p: PartitionId) -> super::Forward {
        match Part::from_id(p) {
            _ if !self.whole => super::Forward::Expand,
            Some(Part::Place { t, .. }) => super::Forward::Layer(t),
            // Phases II/III are solved whole: play reaches them at depth 2N.
            _ => super::Forward::Stop,
        }
    }

    fn parse_position(&self, text: &str) -> Result<Position> {
        let parts: Vec<&str> = text.trim().split(';').map(str::trim).collect();
        if !(3..=4).contains(&parts.len()) {
            return Err(self.bad(
                text,
                format!(
                    "{} `;`-separated parts, not 3 (or 4 with `h=`)",
                    parts.len()
                ),
            ));
        }
        let mut white = None;
        let mut black = None;
        for part in &parts[..2] {
            let (tag, list) = part.split_once(':').ok_or_else(|| {
                self.bad(text, format!("`{part}` should start with `W:` or `B:`"))
            })?;
            let slot = match tag.trim().to_ascii_lowercase().as_str() {
                "w" => &mut white,
                "b" => &mut black,
                other => return Err(self.bad(text, format!("`{other}:` is neither `W:` nor `B:`"))),
            };
            if slot.is_some() {
                return Err(self.bad(text, format!("`{}:` given twice", tag.trim())));
            }
            *slot = Some(self.parse_points(text, list)?);
        }
        let (Some(white), Some(black)) = (white, black) else {
            return Err(self.bad(text, "give both `W:` and `B:` points"));
        };
        if white & black != 0 {
            let both = Self::write_points(white & black);
            return Err(self.bad(text, format!("{both} held by both colours")));
        }
        let white_to_move = match parts[2].to_ascii_lowercase().as_str() {
            "w" => true,
            "b" => false,
            other => {
                return Err(self.bad(text, format!("side to move `{other}` is neither w nor b")))
            }
        };
        // Pieces in hand, white's then black's.
        let hands = match parts.get(3) {
            None => [0u8, 0],
            Some(h) => self.parse_hands(text, h)?,
        };
        let (mover, opponent) = if white_to_move {
            (white, black)
        } else {
            (black, white)
        };
        let hand = if white_to_move {
            hands
        } else {
            [hands[1], hands[0]]
        };
        let (a, b) = (mover.count_ones(), opponent.count_ones());
        let side = |w: bool| if w { "white" } else { "black" };
        if hands != [0, 0] {
            return self.check_placing(text, mover, opponent, white_to_move, hands, hand);
        }
        let most = MAX_PIECES as u32;
        if !(2..=most).contains(&a) {
            return Err(self.bad(
                text,
                format!(
                    "{} (to move) has {a} pieces and none in hand; phases II/III need 3..={most} (2: already lost)",
                    side(white_to_move)
                ),
            ));
        }
        if !(3..=most).contains(&b) {
            return Err(self.bad(
                text,
                format!(
                    "{} has {b} pieces and none in hand; the side not to move needs 3..={most} (with 2 the game ended before its move)",
                    side(!white_to_move)
                ),
            ));
        }
        Ok(Position {
            mover,
            opponent,
            white_to_move,
            hand,
        })
    }

    fn format_position(&self, pos: &Position) -> String {
        let mut text = format!(
            "W:{};B:{};{}",
            Self::write_points(pos.white()),
            Self::write_points(pos.black()),
            if pos.white_to_move { 'w' } else { 'b' }
        );
        if pos.placing() {
            let [m, o] = pos.hand;
            let (w, b) = if pos.white_to_move { (m, o) } else { (o, m) };
            text.push_str(&format!(";h={w},{b}"));
        }
        text
    }

    fn format_move(&self, _pos: &Position, mv: &Move) -> String {
        let mut s = String::new();
        if let Some(from) = mv.from {
            s.push_str(POINT_NAMES[from as usize]);
            s.push('-');
        }
        s.push_str(POINT_NAMES[mv.to as usize]);
        if let Some(x) = mv.capture {
            s.push('x');
            s.push_str(POINT_NAMES[x as usize]);
        }
        s
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(std::sync::Arc::new(kernels::MorrisKernels::new(
            self, device,
        )?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces on the board and in hand count alike, from the mover's side.
    #[test]
    fn evaluation_is_material_for_the_mover() {
        let g = Morris::new(9, true).unwrap();
        let pos = Position {
            mover: 0b1_1111,
            opponent: 0b111 << 8,
            white_to_move: true,
            hand: [2, 0],
        };
        assert_eq!(g.evaluate(&pos), 100 * (7 - 3));
        let swapped = Position {
            mover: pos.opponent,
            opponent: pos.mover,
            white_to_move: false,
            hand: [0, 2],
        };
        assert_eq!(g.evaluate(&swapped), -400);
    }

    /// The successors' ranks a pass takes in one walk (the quiet moves
    /// sharing their mover's share of the ranking, the successors a build
    /// does not need unranked) are those of each successor ranked alone, in
    /// the same order, stopped where the visitor stops: boards and classes,
    /// quiet moves, captures down to a lost side, flying and placing.
    /// Every successor of a sample of each partition's positions lies in
    /// the partition itself or in one `successor_partitions` lists, in the
    /// moving phases and in a whole game's placements; the list is no
    /// wider than a capture's two targets where the pieces are on the board.
    #[test]
    fn successors_lie_where_successor_partitions_says() {
        for g in [
            Morris::new(5, true).unwrap(),
            Morris::whole(4, true).unwrap(),
        ] {
            let mut seen_away = 0;
            for p in g.partitions() {
                let (listed, away) = crate::game::check_successor_partitions(&g, p, 300);
                if let Some(Part::Pair(..)) = Part::from_id(p) {
                    assert!(listed.len() <= 2, "{}: {listed:?}", g.partition_name(p));
                }
                seen_away += away;
            }
            assert!(seen_away > 1000, "{seen_away}");
        }
    }

    #[test]
    fn successor_ranks_in_one_walk_are_each_successors_rank() {
        for symmetry in [true, false] {
            let g = Morris::new(5, symmetry).unwrap();
            let (mut positions, mut quiet, mut captures) = (0, 0, 0);
            let mut scratch = Vec::new();
            for p in g.partitions() {
                let size = g.partition_size(p);
                for r in (0..size).step_by((size / 200).max(1) as usize) {
                    let Some(moving) = g.unrank(p, Rank(r)) else {
                        continue;
                    };
                    let placing = Position {
                        hand: [2, 1],
                        ..moving
                    };
                    for pos in [moving, placing] {
                        if g.status(&pos) != Status::Ongoing {
                            continue;
                        }
                        // Every ranking a build asks for: all, within the
                        // position's own partition or outside it, within
                        // the one its captures or placements reach, and
                        // within one it does not reach (nothing ranked).
                        let own = g.rank(&pos).0;
                        let mut all = Vec::new();
                        crate::game::rank_each_successor(
                            &g,
                            &pos,
                            &mut scratch,
                            Ranking::All,
                            &mut |p, _| {
                                all.push(p);
                                true
                            },
                        );
                        let away = all.iter().copied().find(|&p| p != own).unwrap_or(own);
                        for ranking in [
                            Ranking::All,
                            Ranking::Within(own),
                            Ranking::Outside(own),
                            Ranking::Within(away),
                            Ranking::Within(PartitionId(u32::MAX)),
                        ] {
                            let mut each = Vec::new();
                            crate::game::rank_each_successor(
                                &g,
                                &pos,
                                &mut scratch,
                                ranking,
                                &mut |p, r| {
                                    each.push((p, r));
                                    true
                                },
                            );
                            let mut walked = Vec::new();
                            g.visit_successor_ranks(&pos, &mut scratch, ranking, &mut |p, r| {
                                walked.push((p, r));
                                true
                            });
                            assert_eq!(walked, each, "{pos:?} {ranking:?}");
                            let stop = each.len() / 2;
                            let mut first = Vec::new();
                            g.visit_successor_ranks(&pos, &mut scratch, ranking, &mut |p, r| {
                                first.push((p, r));
                                first.len() <= stop
                            });
                            assert_eq!(first, each[..(stop + 1).min(each.len())], "{pos:?}");
                        }
                        positions += 1;
                        scratch.clear();
                        g.successors(&pos, &mut scratch);
                        for (mv, _) in &scratch {
                            match mv.capture {
                                Some(_) => captures += 1,
                                None => quiet += 1,
                            }
                        }
                    }
                }
            }
            assert!(
                positions > 1000 && quiet > 10_000 && captures > 1000,
                "{positions} positions, {quiet} quiet moves, {captures} captures"
            );
        }
    }

    /// The predecessors' ranks a pass's marking takes in one walk are those
    /// of each predecessor within the partition ranked alone, in the same
    /// order: boards and classes, sliding and flying, and none for a
    /// position with a side of two pieces or in phase I.
    #[test]
    fn predecessor_ranks_in_one_walk_are_each_predecessors_rank() {
        for symmetry in [true, false] {
            let g = Morris::new(5, symmetry).unwrap();
            let (mut positions, mut listed, mut flying) = (0, 0, 0);
            let mut scratch = Vec::new();
            for p in g.partitions() {
                let size = g.partition_size(p);
                for r in (0..size).step_by((size / 200).max(1) as usize) {
                    let Some(pos) = g.unrank(p, Rank(r)) else {
                        continue;
                    };
                    let placing = Position {
                        hand: [1, 1],
                        ..pos
                    };
                    for pos in [pos, placing] {
                        let mut before = Vec::new();
                        assert!(g.predecessors_within(&pos, &mut before));
                        let each: Vec<_> = before.iter().map(|q| g.rank(q)).collect();
                        let mut walked = Vec::new();
                        assert!(g.visit_predecessor_ranks_within(
                            &pos,
                            &mut scratch,
                            &mut |p, r| walked.push((p, r))
                        ));
                        assert_eq!(walked, each, "{pos:?}");
                        positions += 1;
                        listed += each.len();
                        flying += usize::from(pos.opponent.count_ones() == 3 && !each.is_empty());
                    }
                }
            }
            assert!(
                positions > 1000 && listed > 10_000 && flying > 100,
                "{positions} positions, {listed} predecessors, {flying} flying"
            );
        }
    }

    /// Every position of a partition that reaches P by a move inside the
    /// partition is among P's predecessors within it (by rank: symmetry on
    /// and off), and each of those has a move to P.
    #[test]
    fn predecessors_within_a_partition_are_those_whose_moves_stay_there() {
        for symmetry in [true, false] {
            let g = Morris::new(4, symmetry).unwrap();
            let (mut moves, mut listed) = (0u64, 0u64);
            for p in g.partitions() {
                if !matches!(Part::from_id(p), Some(Part::Pair(..))) {
                    continue;
                }
                let size = g.partition_size(p);
                let (mut succ, mut before) = (Vec::new(), Vec::new());
                for r in (0..size).step_by((size / 300).max(1) as usize) {
                    let pos = g.unrank(p, Rank(r)).unwrap();
                    if g.status(&pos) != Status::Ongoing {
                        continue;
                    }
                    succ.clear();
                    g.successors(&pos, &mut succ);
                    for (_, s) in &succ {
                        if g.rank(s).0 != p {
                            continue;
                        }
                        before.clear();
                        assert!(g.predecessors_within(s, &mut before));
                        assert!(
                            before.iter().any(|q| g.rank(q) == (p, Rank(r))),
                            "{}: {pos:?} moves to {s:?}, not among its predecessors",
                            g.partition_name(p)
                        );
                        moves += 1;
                        for q in &before {
                            assert_eq!(g.rank(q).0, p);
                            let mut after = Vec::new();
                            g.successors(q, &mut after);
                            assert!(after.iter().any(|(_, t)| g.rank(t) == g.rank(s)));
                            listed += 1;
                        }
                    }
                }
            }
            assert!(
                moves > 1000 && listed > 1000,
                "{moves} moves, {listed} listed"
            );
        }
    }
}
