//! The board, positions and move generation of English draughts.
//!
//! Squares are bits `0..32` of a `u32`: bit `i` is the standard square `i + 1`
//! seen from the side to move's "black" orientation (see [`Position`]). Row
//! `i / 4` counts from the mover's home row (0) to its crowning row (7). On an
//! even row the square's column on the 8x8 board is `2 (i % 4) + 1`, on an odd
//! row `2 (i % 4)`: that is how the standard numbering lays 1..32 out
//! (9-13, 9-14, 12-16, 5-9, 8-11, 8-12 are the moves from those squares).

/// Squares in a bitboard.
pub const SQUARES: usize = 32;

/// The side to move's crowning row (row 7).
pub(crate) const CROWN_ROW: u32 = 0xf000_0000;
/// The opponent's crowning row (row 0): its men never stand there.
#[cfg(test)]
pub(crate) const OPP_CROWN_ROW: u32 = 0x0000_000f;

/// A diagonal step: `(row step, column step)`; the first two go forward for
/// the side to move.
const DIRECTIONS: [(i32, i32); 4] = [(1, -1), (1, 1), (-1, -1), (-1, 1)];

/// No square (off the board).
const OFF: u8 = 0xff;

/// `STEP[s][d]`: the neighbour of square `s` in direction `d`, or [`OFF`].
/// `JUMP[s][d]`: the square two steps away, or [`OFF`].
static STEP: [[u8; 4]; SQUARES] = geometry(1);
static JUMP: [[u8; 4]; SQUARES] = geometry(2);

const fn geometry(distance: i32) -> [[u8; 4]; SQUARES] {
    let mut out = [[OFF; 4]; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        let row = (s / 4) as i32;
        let col = 2 * (s % 4) as i32 + if row % 2 == 0 { 1 } else { 0 };
        let mut d = 0;
        while d < 4 {
            let r = row + DIRECTIONS[d].0 * distance;
            let c = col + DIRECTIONS[d].1 * distance;
            if r >= 0 && r < 8 && c >= 0 && c < 8 {
                // Dark squares only: the column's parity matches the row's.
                out[s][d] = (r * 4 + c / 2) as u8;
            }
            d += 1;
        }
        s += 1;
    }
    out
}

/// The square `distance` steps from `s` in direction `d`, if on the board
/// (the tables, for the kernels' twin to compare its arithmetic with).
#[cfg(test)]
pub(crate) fn neighbour(s: u8, d: usize, distance: i32) -> Option<u8> {
    let t = match distance {
        1 => STEP[s as usize][d],
        2 => JUMP[s as usize][d],
        _ => OFF,
    };
    (t != OFF).then_some(t)
}

/// Maps a bitboard to the other side's view: square `i` becomes `31 - i`,
/// the board turned half round (standard square `n` becomes `33 - n`).
#[inline]
pub fn turn(board: u32) -> u32 {
    board.reverse_bits()
}

/// A position, stored from the side to move: index 0 of each array is the
/// mover, 1 the opponent, and squares are in the mover's orientation (its men
/// move toward higher squares, as black's do in the standard numbering).
///
/// `white_to_move` only says which colour the mover plays when the position
/// is written out (with white to move, internal square `i` is the standard
/// square `32 - i`); it takes no part in rank or equality: a position and its
/// colour-reversed, half-turned twin are the same game state.
#[derive(Clone, Copy, Debug, Eq)]
pub struct Position {
    /// Men of the mover and of the opponent.
    pub men: [u32; 2],
    /// Kings of the mover and of the opponent.
    pub kings: [u32; 2],
    /// Whether the mover plays white (notation only).
    pub white_to_move: bool,
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        self.men == other.men && self.kings == other.kings
    }
}

/// The squares a move visits, in the side to move's orientation: the start,
/// then each landing square. A capture jumps between consecutive squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// Visited squares; `path[..len]` is used.
    path: [u8; MAX_PATH],
    len: u8,
    /// Whether the move captures (every step is a jump).
    pub capture: bool,
}

/// Most squares one move visits: a piece jumps at most once per opponent
/// piece, and a side has at most 12.
const MAX_PATH: usize = 13;

impl Move {
    /// The visited squares (bit indices in the mover's orientation).
    pub fn path(&self) -> &[u8] {
        &self.path[..self.len as usize]
    }
}

impl Position {
    /// Every piece on the board.
    #[inline]
    pub fn occupied(&self) -> u32 {
        self.men[0] | self.men[1] | self.kings[0] | self.kings[1]
    }

    /// Pieces on the board.
    pub fn pieces(&self) -> u32 {
        self.occupied().count_ones()
    }

    /// The position after the mover's pieces became `men`/`kings` and the
    /// opponent's `opp_men`/`opp_kings`: the opponent to move, board turned.
    #[inline]
    fn after(&self, men: u32, kings: u32, opp_men: u32, opp_kings: u32) -> Position {
        Position {
            men: [turn(opp_men), turn(men)],
            kings: [turn(opp_kings), turn(kings)],
            white_to_move: !self.white_to_move,
        }
    }

    /// Whether the side to move has a legal move: a step to an empty square
    /// or a jump over an opponent piece to an empty one (without listing them).
    pub fn has_move(&self) -> bool {
        let empty = !self.occupied();
        let steps = [(2, self.men[0]), (4, self.kings[0])]
            .into_iter()
            .any(|(dirs, pieces)| {
                bits(pieces).any(|s| {
                    (0..dirs).any(|d| {
                        let t = STEP[s as usize][d];
                        t != OFF && empty & (1 << t) != 0
                    })
                })
            });
        steps || self.has_capture()
    }

    /// Whether the side to move can capture (and so must: captures are
    /// compulsory).
    pub fn has_capture(&self) -> bool {
        let empty = !self.occupied();
        let opp = self.men[1] | self.kings[1];
        [(2, self.men[0]), (4, self.kings[0])]
            .into_iter()
            .any(|(dirs, pieces)| {
                bits(pieces).any(|s| {
                    (0..dirs).any(|d| {
                        let land = JUMP[s as usize][d];
                        land != OFF
                            && opp & (1 << STEP[s as usize][d]) != 0
                            && empty & (1 << land) != 0
                    })
                })
            })
    }
}

/// The row of a side's most advanced man, from its own side (0 without
/// men): with the material, what names a slice (`index::Slice`).
#[inline]
pub(crate) fn leading_row(men: u32) -> u8 {
    if men == 0 {
        0
    } else {
        ((31 - men.leading_zeros()) / 4) as u8
    }
}

/// Calls `visit` with every position from which a legal move leads to `pos`
/// inside `pos`'s partition: a king's step, or a man's step that keeps its
/// side's leading man row, by the side that just moved (`pos`'s opponent).
/// Captures and crownings change the material, and a man stepping past the
/// leading row changes the slice, so no other move stays in the partition.
/// A position that could capture instead is left out (captures are
/// compulsory): the list is exact, as a pass that decides wins by its marks
/// alone needs.
pub fn each_unmove_within(pos: &Position, mut visit: impl FnMut(Position)) {
    // The side that moved, before the board was turned for its opponent.
    let (men, kings) = (turn(pos.men[1]), turn(pos.kings[1]));
    let (opp_men, opp_kings) = (turn(pos.men[0]), turn(pos.kings[0]));
    let empty = !(men | kings | opp_men | opp_kings);
    let mut try_before = |men: u32, kings: u32| {
        let before = Position {
            men: [men, opp_men],
            kings: [kings, opp_kings],
            white_to_move: !pos.white_to_move,
        };
        if !before.has_capture() {
            visit(before);
        }
    };
    for t in bits(kings) {
        for &s in &STEP[t as usize] {
            if s != OFF && empty & (1 << s) != 0 {
                try_before(men, kings & !(1 << t) | 1 << s);
            }
        }
    }
    let lead = leading_row(men);
    for t in bits(men) {
        // A man came from behind: the backward directions.
        for &s in &STEP[t as usize][2..] {
            if s == OFF || empty & (1 << s) == 0 {
                continue;
            }
            let before = men & !(1 << t) | 1 << s;
            if leading_row(before) == lead {
                try_before(before, kings);
            }
        }
    }
}

/// Appends every legal move of the side to move and the position after it.
///
/// Rules (English draughts): a capture must be made when one exists, and a
/// capturing piece keeps jumping while it can; each maximal jump sequence is
/// one move. Men move and capture forward only, kings both ways. A man that
/// reaches the crowning row becomes a king and the move ends there, even in
/// the middle of a capture. Captured pieces leave the board as they are
/// jumped; a piece is never jumped twice (a jumped square can never be a
/// landing square: landings keep the start's row parity, jumped squares have
/// the other).
pub fn successors(pos: &Position, out: &mut Vec<(Move, Position)>) {
    let start = out.len();
    let empty = !pos.occupied();
    let opp = pos.men[1] | pos.kings[1];
    for (is_king, pieces) in [(false, pos.men[0]), (true, pos.kings[0])] {
        for s in bits(pieces) {
            let mut path = Move {
                path: [0; MAX_PATH],
                len: 1,
                capture: true,
            };
            path.path[0] = s;
            // The start square is empty once the piece has left it.
            jumps(pos, is_king, s, empty | (1 << s), opp, &mut path, out);
        }
    }
    if out.len() > start {
        return;
    }
    for (is_king, pieces) in [(false, pos.men[0]), (true, pos.kings[0])] {
        let dirs = if is_king { 4 } else { 2 };
        for s in bits(pieces) {
            for &t in &STEP[s as usize][..dirs] {
                if t == OFF || empty & (1 << t) == 0 {
                    continue;
                }
                let mut mv = Move {
                    path: [0; MAX_PATH],
                    len: 2,
                    capture: false,
                };
                mv.path[0] = s;
                mv.path[1] = t;
                let from = 1u32 << s;
                let to = 1u32 << t;
                let next = if is_king {
                    pos.after(
                        pos.men[0],
                        pos.kings[0] & !from | to,
                        pos.men[1],
                        pos.kings[1],
                    )
                } else if to & CROWN_ROW != 0 {
                    pos.after(
                        pos.men[0] & !from,
                        pos.kings[0] | to,
                        pos.men[1],
                        pos.kings[1],
                    )
                } else {
                    pos.after(
                        pos.men[0] & !from | to,
                        pos.kings[0],
                        pos.men[1],
                        pos.kings[1],
                    )
                };
                out.push((mv, next));
            }
        }
    }
}

/// Extends the jump sequence in `path` (the piece now on `at`, `empty` the
/// empty squares, `opp` the opponent pieces not yet taken); pushes each
/// maximal sequence. The board in `pos` is the one before the move.
fn jumps(
    pos: &Position,
    is_king: bool,
    at: u8,
    empty: u32,
    opp: u32,
    path: &mut Move,
    out: &mut Vec<(Move, Position)>,
) {
    let dirs = if is_king { 4 } else { 2 };
    let mut extended = false;
    for d in 0..dirs {
        let over = STEP[at as usize][d];
        let land = JUMP[at as usize][d];
        if land == OFF || opp & (1 << over) == 0 || empty & (1 << land) == 0 {
            continue;
        }
        extended = true;
        let len = path.len as usize;
        path.path[len] = land;
        path.len += 1;
        let opp_after = opp & !(1 << over);
        let empty_after = (empty | (1 << over)) & !(1 << land);
        if !is_king && (1u32 << land) & CROWN_ROW != 0 {
            // Crowning ends the move.
            finish(pos, false, land, opp_after, true, path, out);
        } else {
            jumps(pos, is_king, land, empty_after, opp_after, path, out);
        }
        path.len -= 1;
    }
    if !extended && path.len > 1 {
        finish(pos, is_king, at, opp, false, path, out);
    }
}

/// Pushes the capture in `path`, ending on `at` with `opp_left` of the
/// opponent's pieces remaining.
fn finish(
    pos: &Position,
    is_king: bool,
    at: u8,
    opp_left: u32,
    crowned: bool,
    path: &Move,
    out: &mut Vec<(Move, Position)>,
) {
    let from = 1u32 << path.path[0];
    let to = 1u32 << at;
    let (men, kings) = if is_king {
        (pos.men[0], pos.kings[0] & !from | to)
    } else if crowned {
        (pos.men[0] & !from, pos.kings[0] | to)
    } else {
        (pos.men[0] & !from | to, pos.kings[0])
    };
    let next = pos.after(men, kings, pos.men[1] & opp_left, pos.kings[1] & opp_left);
    out.push((*path, next));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A black-to-move position from standard square lists.
    fn black(men: &[u8], kings: &[u8], wmen: &[u8], wkings: &[u8]) -> Position {
        let m = |l: &[u8]| l.iter().fold(0u32, |a, &s| a | 1 << (s - 1));
        Position {
            men: [m(men), m(wmen)],
            kings: [m(kings), m(wkings)],
            white_to_move: false,
        }
    }

    fn moves(pos: &Position) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        successors(pos, &mut out);
        let mut v: Vec<Vec<u8>> = out
            .iter()
            .map(|(m, _)| m.path().iter().map(|&s| s + 1).collect())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn geometry_is_the_standard_numbering() {
        // Forward moves from the standard opening squares (black's view).
        let fwd = |s: u8| -> Vec<u8> {
            let mut v: Vec<u8> = (0..2)
                .map(|d| STEP[s as usize - 1][d])
                .filter(|&t| t != OFF)
                .map(|t| t + 1)
                .collect();
            v.sort();
            v
        };
        assert_eq!(fwd(9), [13, 14]);
        assert_eq!(fwd(11), [15, 16]);
        assert_eq!(fwd(12), [16]);
        assert_eq!(fwd(5), [9]);
        assert_eq!(fwd(8), [11, 12]);
        assert_eq!(fwd(28), [32]);
        assert_eq!(fwd(29), Vec::<u8>::new());
        // Turning the board maps square n to 33 - n, and steps to steps.
        for s in 0..32 {
            for d in 0..4 {
                let t = STEP[s][d];
                if t != OFF {
                    let back = STEP[31 - s][3 - d];
                    assert_eq!(back, 31 - t);
                }
            }
        }
    }

    #[test]
    fn capture_is_mandatory() {
        // Black man 14, white man 18: 14x23 must be played, not 14-17 or 9-13.
        let pos = black(&[9, 14], &[], &[18], &[]);
        assert_eq!(moves(&pos), [vec![14, 23]]);
    }

    #[test]
    fn multi_jump_continues() {
        // Black man 1 jumps 6 then 15: 1x10x19, not a stop at 10.
        let pos = black(&[1], &[], &[6, 15], &[]);
        assert_eq!(moves(&pos), [vec![1, 10, 19]]);
        // Two branches from 10 (over 15 or over 14) are two moves.
        let pos = black(&[1], &[], &[6, 14, 15], &[]);
        assert_eq!(moves(&pos), [vec![1, 10, 17], vec![1, 10, 19]]);
    }

    #[test]
    fn crowning_ends_the_move() {
        // Black man 22 jumps 26 to 31 and is crowned; from 31 a king could jump
        // 27 to 24, but the move ends on the crowning.
        let pos = black(&[22], &[], &[26, 27], &[]);
        let mut out = Vec::new();
        successors(&pos, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.path(), [21, 30]);
        // After the move white is to move; black's new king sits on 31, which
        // is square 2 of white's view (bit 1).
        assert_eq!(out[0].1.kings[1], 1 << 1);
        assert_eq!(out[0].1.men[1], 0);
        // A simple move onto the crowning row crowns too.
        let pos = black(&[27], &[], &[], &[]);
        let mut out = Vec::new();
        successors(&pos, &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|(_, n)| n.kings[1].count_ones() == 1));
    }

    #[test]
    fn kings_capture_backwards() {
        // Black king 23 jumps white 18 backwards to 14, then white 10 to 7.
        let pos = black(&[], &[23], &[], &[18, 10]);
        assert_eq!(moves(&pos), [vec![23, 14, 7]]);
        // A man on the same square cannot capture backwards: it just moves.
        let pos = black(&[23], &[], &[18], &[]);
        assert_eq!(moves(&pos), [vec![23, 26], vec![23, 27]]);
    }

    #[test]
    fn blocked_side_has_no_move() {
        // Black man 28: its only step 32 is taken by a white king, the jump is off the board.
        let pos = black(&[28], &[], &[], &[32]);
        assert!(!pos.has_move());
        assert!(!black(&[], &[], &[], &[5]).has_move());
    }
}
