//! Engine files' values (FORMAT.md, "Engine files"): the order of stored
//! codes, the bound a one-ply search over followed successors gives, and the
//! prober's resolution of a don't-care code. The exporter uses the same
//! functions, so that what it drops is exactly what the prober recovers.

use super::Tablebase;
use crate::format::{FormatError, ValueEncoding};
use crate::game::{Game, GameKind, Status};
use crate::value::{PartitionId, Rank, Value};

/// The stored codes of one encoding in one kind of game, ordered for the
/// side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codes {
    /// How the codes are stored.
    pub encoding: ValueEncoding,
    /// Two-player or puzzle: how they read.
    pub kind: GameKind,
}

impl Codes {
    /// A total order of the legal codes, higher better for the side to move:
    /// a win sooner > a win later > a draw > a loss later > a loss sooner
    /// (puzzles: the goal sooner > later > unreachable). Code 0 (illegal)
    /// is below everything.
    pub fn key(self, code: u8) -> i32 {
        match (self.encoding, self.kind, code) {
            (_, _, 0) => i32::MIN,
            (_, _, 1) => 0,
            (ValueEncoding::Byte, GameKind::TwoPlayer, c) => {
                let d = i32::from(c) - 2;
                if d % 2 == 1 {
                    1000 - d
                } else {
                    -1000 + d
                }
            }
            (ValueEncoding::Byte, GameKind::Puzzle, c) => 1000 - (i32::from(c) - 2),
            (ValueEncoding::Wdl2, GameKind::TwoPlayer, 2) => 1,
            (ValueEncoding::Wdl2, GameKind::TwoPlayer, _) => -1,
            (ValueEncoding::Wdl2, GameKind::Puzzle, _) => 1,
        }
    }

    /// What a move to a successor stored as `code` gives the mover: the
    /// outcome turned round (two-player) and one ply (move) more. `None`
    /// for an illegal successor or a distance beyond one byte.
    pub fn through_move(self, code: u8) -> Option<u8> {
        match (self.encoding, self.kind, code) {
            (_, _, 0) => None,
            (_, _, 1) => Some(1),
            (ValueEncoding::Byte, _, c) => c.checked_add(1),
            (ValueEncoding::Wdl2, GameKind::TwoPlayer, c) => Some(5 - c),
            (ValueEncoding::Wdl2, GameKind::Puzzle, c) => Some(c),
        }
    }

    /// The code of a terminal position (its status says its value).
    pub fn terminal(self, status: Status) -> Option<u8> {
        let value = match status {
            Status::Ongoing => return None,
            Status::Drawn => Value::DRAW,
            Status::Lost | Status::Goal => Value::at_distance(0)?,
        };
        Some(self.encoding.encode(self.kind, value))
    }

    /// The value byte whose stored code is `code` (the writer takes value
    /// bytes and encodes them): the code itself in one-byte files; in
    /// two-bit files a value of that outcome.
    pub fn value_of(self, code: u8) -> u8 {
        match (self.encoding, self.kind, code) {
            (ValueEncoding::Byte, _, c) => c,
            (ValueEncoding::Wdl2, GameKind::TwoPlayer, 2) => 3,
            (ValueEncoding::Wdl2, GameKind::TwoPlayer, 3) => 2,
            (ValueEncoding::Wdl2, _, c) => c,
        }
    }

    /// The better of two codes for the side to move.
    pub fn max(self, a: u8, b: u8) -> u8 {
        if self.key(b) > self.key(a) {
            b
        } else {
            a
        }
    }
}

/// The bound of `pos` (in partition `p`, ongoing) from its followed
/// successors: the best code a move to one of them gives, or `None` where no
/// move is followed. Followed: every move to a terminal successor (valued by
/// its status) and every move [`Game::resolves`] names that leaves `p` (valued
/// by `value_of`). The true value of `pos` is never below it.
pub fn bound<G: Game, E: From<FormatError>>(
    codes: Codes,
    game: &G,
    pos: &G::Position,
    p: PartitionId,
    succ: &mut Vec<(G::Move, G::Position)>,
    mut value_of: impl FnMut(&G::Position) -> Result<u8, E>,
) -> Result<Option<u8>, E> {
    succ.clear();
    game.successors(pos, succ);
    let mut best: Option<u8> = None;
    // Taken out so that `value_of` may recurse with a list of its own.
    let moves = std::mem::take(succ);
    let mut result = Ok(());
    for (mv, s) in &moves {
        let code = match codes.terminal(game.status(s)) {
            Some(c) => c,
            None if game.resolves(pos, mv, s) && game.rank(s).0 != p => match value_of(s) {
                Ok(c) => c,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            },
            None => continue,
        };
        let Some(mine) = codes.through_move(code) else {
            let (sp, sr) = game.rank(s);
            result = Err(E::from(FormatError::Mismatch {
                file: format!("partition {sp}"),
                message: format!(
                    "stores rank {sr} as illegal (or beyond one byte's distance), but it follows from {} by a legal move",
                    game.format_position(pos)
                ),
            }));
            break;
        };
        best = Some(best.map_or(mine, |b| codes.max(b, mine)));
    }
    *succ = moves;
    result.map(|()| best)
}

/// Whether `pos`, in a partition whose reached marks the game derives
/// ([`Game::derives_reach`]), is reached: it is the start, or one of its
/// ongoing, legal predecessors stores a code other than 0 (their partitions
/// keep their marks). `code_of` reads a stored code.
pub fn reached_by_predecessors<G: Game, E>(
    game: &G,
    pos: &G::Position,
    mut code_of: impl FnMut(PartitionId, Rank) -> Result<u8, E>,
) -> Result<bool, E> {
    let here = game.rank(pos);
    if game.start().is_some_and(|start| game.rank(&start) == here) {
        return Ok(true);
    }
    let mut before = Vec::new();
    game.predecessors(pos, &mut before);
    for q in &before {
        if game.status(q) != Status::Ongoing {
            continue;
        }
        let (qp, qr) = game.rank(q);
        if code_of(qp, qr)? != 0 && game.unrank(qp, qr).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The true code of `pos` at (`p`, `r`) in an engine tablebase: 0 where the
/// file stores 0 (illegal or unreached) or, in a partition whose reached
/// marks the game derives, where no predecessor is reached; a terminal
/// position's status; else
/// the better of the stored code and the bound of the followed successors,
/// each resolved the same way (they lie in partitions solved before `p`, so
/// the recursion ends).
pub(crate) fn resolve<G: Game>(
    tb: &Tablebase,
    game: &G,
    pos: &G::Position,
    p: PartitionId,
    r: Rank,
) -> Result<u8, FormatError> {
    let codes = Codes {
        encoding: tb.encoding(),
        kind: tb.kind(),
    };
    let stored = tb.code(p, r)?;
    if game.derives_reach(p) {
        if !reached_by_predecessors(game, pos, |q, s| tb.code(q, s))? {
            return Ok(0);
        }
    } else if stored == 0 {
        return Ok(0);
    }
    if let Some(c) = codes.terminal(game.status(pos)) {
        return Ok(c);
    }
    let mut succ = Vec::new();
    let e = bound(codes, game, pos, p, &mut succ, |s| {
        let (sp, sr) = game.rank(s);
        resolve(tb, game, s, sp, sr)
    })?;
    Ok(e.map_or(stored, |e| codes.max(stored, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_and_the_move_agree_with_the_value_byte() {
        let codes = Codes {
            encoding: ValueEncoding::Byte,
            kind: GameKind::TwoPlayer,
        };
        // Win in 1 > win in 3 > draw > loss in 4 > loss in 0.
        let order = [3u8, 5, 1, 6, 2];
        for w in order.windows(2) {
            assert!(codes.key(w[0]) > codes.key(w[1]), "{w:?}");
        }
        // A move into a loss at 0 wins at 1; into a win at 1 loses at 2.
        assert_eq!(codes.through_move(2), Some(3));
        assert_eq!(codes.through_move(3), Some(4));
        let wdl = Codes {
            encoding: ValueEncoding::Wdl2,
            kind: GameKind::TwoPlayer,
        };
        assert!(wdl.key(2) > wdl.key(1) && wdl.key(1) > wdl.key(3));
        assert_eq!(wdl.through_move(3), Some(2));
        for c in 1..=3 {
            assert_eq!(
                wdl.encoding
                    .encode(wdl.kind, Value::from_byte(wdl.value_of(c))),
                c
            );
        }
    }
}
