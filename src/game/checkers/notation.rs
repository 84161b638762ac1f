//! PDN notation: FEN positions (`W:W18,K25:B1,2,K12`) and moves (`11-15`,
//! `15x24x31`), in the standard numbering of the squares 1..32 (black's men
//! start on 1..12 and move toward 32).

use super::rules::{bits, turn, Move, Position};
use crate::game::board::bad_position;
use crate::{Error, Result};

/// How positions are written, for errors.
pub(crate) const HINT: &str = "write a PDN FEN: the side to move (W or B), then `:W` and `:B` \
     with each side's squares 1..32, K before a king, e.g. W:W18,K25:B1,2,K12";

/// Most pieces one side has in checkers.
const MAX_SIDE: u32 = 12;

fn bad(text: &str, message: impl std::fmt::Display) -> Error {
    bad_position("checkers", text, message, HINT)
}

/// One side's men and kings in the standard numbering (bit `n - 1` = square `n`).
#[derive(Clone, Copy, Default)]
struct Side {
    men: u32,
    kings: u32,
}

/// Reads `W18,K25` (or ranges such as `1-12`, `K29-32`).
fn parse_side(text: &str, list: &str) -> Result<Side> {
    let mut side = Side::default();
    for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (king, squares) = match item.strip_prefix(['K', 'k']) {
            Some(rest) => (true, rest.trim()),
            None => (false, item),
        };
        let number = |t: &str| -> Result<u32> {
            match t.trim().parse::<u32>() {
                Ok(n) if (1..=32).contains(&n) => Ok(n),
                _ => Err(bad(text, format!("`{item}` is not a square 1..32"))),
            }
        };
        let (lo, hi) = match squares.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(squares)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(bad(text, format!("range `{item}` runs backwards")));
        }
        for n in lo..=hi {
            let bit = 1u32 << (n - 1);
            if (side.men | side.kings) & bit != 0 {
                return Err(bad(text, format!("square {n} given twice")));
            }
            if king {
                side.kings |= bit;
            } else {
                side.men |= bit;
            }
        }
    }
    Ok(side)
}

/// Parses a PDN FEN position.
pub(crate) fn parse_position(text: &str) -> Result<Position> {
    let body = text.trim().trim_end_matches('.');
    let parts: Vec<&str> = body.split(':').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(bad(
            text,
            format!("{} `:`-separated parts, not 3", parts.len()),
        ));
    }
    let white_to_move = match parts[0] {
        "W" | "w" => true,
        "B" | "b" => false,
        other => {
            return Err(bad(
                text,
                format!("side to move `{other}` is neither W nor B"),
            ))
        }
    };
    let mut white = None;
    let mut black = None;
    for part in &parts[1..] {
        let mut chars = part.chars();
        let slot = match chars.next() {
            Some('W' | 'w') => &mut white,
            Some('B' | 'b') => &mut black,
            _ => {
                return Err(bad(
                    text,
                    format!("`{part}` should start with W or B (whose pieces)"),
                ))
            }
        };
        if slot.is_some() {
            return Err(bad(text, format!("`{}` given twice", &part[..1])));
        }
        *slot = Some(parse_side(text, chars.as_str())?);
    }
    let (Some(white), Some(black)) = (white, black) else {
        return Err(bad(text, "give both the `W` and the `B` pieces"));
    };
    let both = (white.men | white.kings) & (black.men | black.kings);
    if both != 0 {
        return Err(bad(
            text,
            format!("square {} held by both sides", both.trailing_zeros() + 1),
        ));
    }
    // Black's men crown on 29..32, white's on 1..4: no man stands there.
    if black.men & 0xf000_0000 != 0 {
        return Err(bad(
            text,
            "a black man on 29..32 (its crowning row) would be a king: write K",
        ));
    }
    if white.men & 0xf != 0 {
        return Err(bad(
            text,
            "a white man on 1..4 (its crowning row) would be a king: write K",
        ));
    }
    for (name, s) in [("white", white), ("black", black)] {
        let n = (s.men | s.kings).count_ones();
        if n > MAX_SIDE {
            return Err(bad(
                text,
                format!("{name} has {n} pieces; a side has at most {MAX_SIDE}"),
            ));
        }
    }
    // Internally the mover's men move toward higher squares, as black's do.
    Ok(if white_to_move {
        Position {
            men: [turn(white.men), turn(black.men)],
            kings: [turn(white.kings), turn(black.kings)],
            white_to_move,
        }
    } else {
        Position {
            men: [black.men, white.men],
            kings: [black.kings, white.kings],
            white_to_move,
        }
    })
}

fn write_side(tag: char, side: Side) -> String {
    let items: Vec<String> = bits(side.men | side.kings)
        .map(|i| {
            if side.kings & (1 << i) != 0 {
                format!("K{}", i + 1)
            } else {
                (i + 1).to_string()
            }
        })
        .collect();
    format!("{tag}{}", items.join(","))
}

/// Writes a position as a PDN FEN (squares ascending, `K` before kings).
pub(crate) fn format_position(pos: &Position) -> String {
    let (white, black) = if pos.white_to_move {
        (
            Side {
                men: turn(pos.men[0]),
                kings: turn(pos.kings[0]),
            },
            Side {
                men: turn(pos.men[1]),
                kings: turn(pos.kings[1]),
            },
        )
    } else {
        (
            Side {
                men: pos.men[1],
                kings: pos.kings[1],
            },
            Side {
                men: pos.men[0],
                kings: pos.kings[0],
            },
        )
    };
    format!(
        "{}:{}:{}",
        if pos.white_to_move { 'W' } else { 'B' },
        write_side('W', white),
        write_side('B', black)
    )
}

/// Writes a move: `11-15`, or every landing square of a capture, `15x24x31`.
pub(crate) fn format_move(pos: &Position, mv: &Move) -> String {
    let square = |i: u8| {
        if pos.white_to_move {
            32 - u32::from(i)
        } else {
            u32::from(i) + 1
        }
    };
    let sep = if mv.capture { "x" } else { "-" };
    mv.path()
        .iter()
        .map(|&i| square(i).to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fen_round_trip() {
        for text in [
            "W:W18,K25:B1,2,K12",
            "B:W18,K25:B1,2,K12",
            "B:W:BK1",
            "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
        ] {
            let pos = parse_position(text).unwrap();
            assert_eq!(format_position(&pos), text);
        }
        // Ranges, lower case, the trailing period and either list order read the same.
        let a = parse_position("W:B1-12:W21-32.").unwrap();
        let b =
            parse_position("w:w21,22,23,24,25,26,27,28,29,30,31,32:b1,2,3,4,5,6,7,8,9,10,11,12")
                .unwrap();
        assert_eq!(format_position(&a), format_position(&b));
    }

    #[test]
    fn white_to_move_is_the_turned_board() {
        // White man 18 moving is black man 15 (33 - 18) moving in the mover's frame.
        let pos = parse_position("W:W18:BK1").unwrap();
        assert_eq!(pos.men[0], 1 << 14);
        assert_eq!(pos.kings[1], 1 << 31);
        let mut out = Vec::new();
        super::super::rules::successors(&pos, &mut out);
        let mut moves: Vec<String> = out.iter().map(|(m, _)| format_move(&pos, m)).collect();
        moves.sort();
        assert_eq!(moves, ["18-14", "18-15"]);
        // And the successor is written from black's side again.
        let next = out
            .iter()
            .find(|(m, _)| format_move(&pos, m) == "18-14")
            .unwrap();
        assert_eq!(format_position(&next.1), "B:W14:BK1");
    }

    #[test]
    fn malformed_fens_are_errors() {
        for text in [
            "",
            "W",
            "X:W1:B2",
            "W:W33:B1",
            "W:W0:B1",
            "W:W5:B5",
            "W:W1:B2",    // a white man on its crowning row
            "B:W5:B30",   // a black man on its crowning row
            "W:W5,5:B1",  // twice
            "W:W5:W6",    // no black list
            "W:W5:B1:B2", // four parts
            "W:W9-5:B1",  // backwards range
            "W:Wx:B1",
            "W:W1-13:B20", // more than 12 (and men on 1..4)
            "W:W5-17:B20", // 13 pieces
        ] {
            assert!(parse_position(text).is_err(), "{text:?} parsed");
        }
    }
}
