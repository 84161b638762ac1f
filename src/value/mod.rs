//! The domain types every part of tbforge speaks: where a position lives
//! ([`PartitionId`], [`Rank`]) and what it is worth ([`Value`], [`Outcome`]).

mod long;
#[cfg(feature = "build")]
pub(crate) mod rules;

pub use long::{LongDistances, SATURATED_LOSS};

use serde::{Deserialize, Serialize};
use std::fmt;

/// A partition of a game's state space: the orthogonal hash h1 (piece counts,
/// plies played, pegs left, ...). A partition is one tablebase file.
///
/// The number is the game's own (plies played, an encoding of piece counts);
/// [`crate::Game::partitions`] lists them in the order they are solved.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct PartitionId(pub u32);

/// The dense index of a position inside its partition: `0..size(partition)`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct Rank(pub u64);

/// Both print as their bare number (file names, messages, JSON keys).
macro_rules! display_as_number {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    )*};
}
display_as_number!(PartitionId, Rank);

/// How many positions each index of one partition stands for.
///
/// A game that stores one representative per symmetry class (Nine Men's
/// Morris with `symmetry=on`) gives each index the size of its class's orbit:
/// most classes have no symmetry of their own and stand for `common`
/// positions; the few that do stand for fewer, and are listed. Counting a
/// partition's positions weighs each legal index by this; counting its
/// classes weighs each by one. Illegal indices count in neither.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Positions per index, except at [`Weights::exceptions`].
    pub common: u64,
    /// `(rank, positions)` of the indices that stand for other than
    /// `common` positions, in increasing rank order.
    pub exceptions: Vec<(Rank, u64)>,
}

impl Weights {
    /// Every index is one position: games without a symmetry-class index.
    pub fn one() -> Weights {
        Weights {
            common: 1,
            exceptions: Vec::new(),
        }
    }

    /// True when every index is one position.
    pub fn is_one(&self) -> bool {
        self.common == 1 && self.exceptions.is_empty()
    }

    /// The positions index `r` stands for.
    pub fn at(&self, r: Rank) -> u64 {
        match self.exceptions.binary_search_by_key(&r, |&(rank, _)| rank) {
            Ok(i) => self.exceptions[i].1,
            Err(_) => self.common,
        }
    }
}

/// The game-theoretic result for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The side to move wins with best play.
    Win,
    /// Neither side can force a win.
    Draw,
    /// The side to move loses against best play.
    Loss,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
        })
    }
}

/// The stored value of one position: one byte.
///
/// | byte | meaning |
/// |------|---------|
/// | 0    | illegal or unused index (compresses to nothing) |
/// | 1    | draw (two-player) / goal unreachable (puzzle) |
/// | 2+d  | decided at distance `d` plies (two-player) or `d` moves to the goal (puzzle) |
///
/// In two-player games every terminal position is a loss or a draw for the side
/// to move, so a decided position's outcome follows from its distance: even
/// distances are losses (0 = already lost), odd distances are wins. A game whose
/// rules end with the side to move having won models that as the previous move
/// having lost, which keeps this parity exact. The longest distance a byte holds
/// is [`Value::MAX_DISTANCE`]. A solver that needs more either stores the
/// saturated byte of the outcome ([`Value::saturated`]: 254 a loss at 252 or
/// more, 255 a win at 253 or more) and lists the exact distance in the
/// partition's [`LongDistances`], or reports an error rather than wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Value(u8);

impl Value {
    /// Illegal position or unused index.
    pub const ILLEGAL: Value = Value(0);
    /// Draw (two-player) or goal unreachable (puzzle).
    pub const DRAW: Value = Value(1);
    /// The longest distance one byte can hold.
    pub const MAX_DISTANCE: u32 = 253;

    /// A decided position at `distance` (plies or moves); `None` past [`Value::MAX_DISTANCE`].
    pub fn at_distance(distance: u32) -> Option<Value> {
        (distance <= Self::MAX_DISTANCE).then(|| Value(distance as u8 + 2))
    }

    /// The raw byte as stored in a tablebase file.
    pub const fn to_byte(self) -> u8 {
        self.0
    }

    /// Reads a stored byte; every byte is a valid value.
    pub const fn from_byte(byte: u8) -> Value {
        Value(byte)
    }

    /// True for the illegal/unused code.
    pub const fn is_illegal(self) -> bool {
        self.0 == 0
    }

    /// The distance of a decided position.
    pub fn distance(self) -> Option<u32> {
        (self.0 >= 2).then(|| u32::from(self.0) - 2)
    }

    /// The outcome for the side to move in a two-player game; `None` if illegal.
    pub fn outcome(self) -> Option<Outcome> {
        match self.0 {
            0 => None,
            1 => Some(Outcome::Draw),
            b if (b - 2) % 2 == 0 => Some(Outcome::Loss),
            _ => Some(Outcome::Win),
        }
    }

    /// The 2-bit WDL code of this value: 0 illegal, 1 draw, 2 win, 3 loss.
    pub fn wdl_code(self) -> u8 {
        match self.outcome() {
            None => 0,
            Some(Outcome::Draw) => 1,
            Some(Outcome::Win) => 2,
            Some(Outcome::Loss) => 3,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.outcome(), self.distance()) {
            (None, _) => f.write_str("illegal"),
            (Some(o), Some(d)) => write!(f, "{o} in {d}"),
            (Some(o), None) => write!(f, "{o}"),
        }
    }
}

/// Two-player games store win/draw/loss and distance; puzzles store the
/// distance to the goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GameKind {
    /// Two players alternate; values are for the side to move.
    TwoPlayer,
    /// One player; values are the number of moves to the goal.
    Puzzle,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_gives_outcome() {
        assert_eq!(
            Value::at_distance(0).unwrap().outcome(),
            Some(Outcome::Loss)
        );
        assert_eq!(Value::at_distance(1).unwrap().outcome(), Some(Outcome::Win));
        assert_eq!(
            Value::at_distance(252).unwrap().outcome(),
            Some(Outcome::Loss)
        );
        assert_eq!(Value::at_distance(253).unwrap().distance(), Some(253));
        assert_eq!(Value::at_distance(254), None);
        assert_eq!(Value::DRAW.outcome(), Some(Outcome::Draw));
        assert_eq!(Value::ILLEGAL.outcome(), None);
        for b in 0..=255u8 {
            let v = Value::from_byte(b);
            assert_eq!(v.to_byte(), b);
            if let Some(d) = v.distance() {
                assert_eq!(Value::at_distance(d), Some(v));
            }
        }
    }
}
