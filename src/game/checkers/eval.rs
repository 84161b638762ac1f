//! What a search beyond the databases needs of checkers (`tbforge analyse
//! checkers`): the opening position, a heuristic score, and a key.

use super::rules::Position;

/// The opening position: black's twelve men on 1-12, white's on 21-32,
/// black to move (the standard PDN FEN `B:W21-32:B1-12`).
pub fn initial() -> Position {
    Position {
        men: [0x0000_0fff, 0xfff0_0000],
        kings: [0, 0],
        white_to_move: false,
    }
}

/// Material and advancement for the side to move, 100 to a man: a king is
/// worth 130 (the weight checkers programs commonly give it), and a man
/// gains 3 a row it has advanced (the closer to crowning, the more it is
/// worth). The databases replace it wherever they hold a position.
pub fn evaluate(pos: &Position) -> i32 {
    let side = |men: u32, kings: u32, forward: bool| -> i32 {
        let mut score = 100 * men.count_ones() as i32 + 130 * kings.count_ones() as i32;
        let mut m = men;
        while m != 0 {
            let row = (m.trailing_zeros() / 4) as i32;
            score += 3 * if forward { row } else { 7 - row };
            m &= m - 1;
        }
        score
    };
    side(pos.men[0], pos.kings[0], true) - side(pos.men[1], pos.kings[1], false)
}

/// A key of the position's pieces (not of the colour names: a position and
/// its colour-reversed twin are one game state, as [`Position`]'s equality
/// says).
pub fn search_key(pos: &Position) -> u64 {
    let a = u64::from(pos.men[0]) | u64::from(pos.men[1]) << 32;
    let b = u64::from(pos.kings[0]) | u64::from(pos.kings[1]) << 32;
    crate::hash::mix64(a ^ crate::hash::mix64(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_is_the_standard_one_and_even() {
        let pos = initial();
        assert_eq!(
            super::super::notation::format_position(&pos),
            "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
        );
        assert_eq!(evaluate(&pos), 0);
    }
}
