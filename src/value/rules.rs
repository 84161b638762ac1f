//! The rules that turn successors' values into a position's value, shared by
//! the in-memory solver and the external-memory pipeline so both give the
//! same bytes.

use super::{GameKind, Value};

/// While solving, byte 1 (draw) doubles as "not decided yet": a draw is only
/// ever the absence of a decision, and successors that are drawn behave exactly
/// like undecided ones in every rule.
pub(crate) const PENDING: u8 = Value::DRAW.to_byte();

/// A decided value at distance `d` (the pass loop keeps `d` in range).
pub(crate) fn at(d: u32) -> Value {
    Value::at_distance(d).expect("distance checked against MAX_DISTANCE by the pass loop")
}

/// What pass `d` learns from a pending position's successors.
///
/// Values at distance `>= d` count as undecided: they may be this pass's own
/// writes, and ignoring them makes a pass independent of the order in which
/// positions are visited (and lets an interrupted pass be run again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PassAcc {
    /// Some successor is at exactly `d - 1` (two-player: a loss for the opponent).
    hit: bool,
    /// Some successor is not a win decided below `d` (two-player only).
    blocked: bool,
    /// The longest win among the successors (two-player only). A byte, as
    /// distances are (`Value::MAX_DISTANCE`): the external pipeline holds an
    /// accumulator per position of a chunk, and three bytes a position
    /// instead of eight keep more of a chunk in cache.
    longest: u8,
}

impl PassAcc {
    /// Whether pass `d` decides a position through a successor at `d - 1`
    /// alone (as a win at `d`): an odd pass, or a puzzle's every pass. The
    /// other passes (a two-player game's even ones) decide losses, which
    /// need every successor. The external pipeline skips such a pass's
    /// expansion where its candidates are exactly the positions with such a
    /// successor.
    #[inline]
    pub(crate) fn decides_by_hit(kind: GameKind, d: u32) -> bool {
        kind == GameKind::Puzzle || d % 2 == 1
    }

    /// Adds one successor's value.
    #[inline]
    pub(crate) fn add(&mut self, kind: GameKind, d: u32, v: Value) {
        let e = v.distance().filter(|&e| e < d);
        if e == Some(d - 1) && Self::decides_by_hit(kind, d) {
            self.hit = true;
        }
        match e {
            // A value byte's distance is at most MAX_DISTANCE: it fits.
            Some(e) if e % 2 == 1 => self.longest = self.longest.max(e as u8),
            _ => self.blocked = true,
        }
    }

    /// Whether a successor at value `v` can change what pass `d` decides,
    /// where a pending position whose successors are all wins below `d`
    /// has one at `d - 1` (a position whose longest win is shorter is
    /// decided by the pass right after it; the passes' candidates include
    /// every predecessor of a position decided at the pass before). An odd
    /// pass (a puzzle's every pass) decides through a successor at
    /// `d - 1` alone; an even one through the successors that block it and
    /// the longest win, at `d - 1`. The external pipeline's answer step
    /// keeps only these answers: the rest were most of what the combine
    /// step read and applied.
    #[inline]
    pub(crate) fn can_change(kind: GameKind, d: u32, v: Value) -> bool {
        let e = v.distance().filter(|&e| e < d);
        if Self::decides_by_hit(kind, d) {
            return e == Some(d - 1);
        }
        match e {
            Some(e) if e % 2 == 1 => e == d - 1,
            _ => true,
        }
    }

    /// True once further successors cannot change the decision.
    #[inline]
    pub(crate) fn settled(&self, kind: GameKind, d: u32) -> bool {
        if Self::decides_by_hit(kind, d) {
            self.hit
        } else {
            self.blocked
        }
    }

    /// The position's value if it is decided at distance `d`.
    pub(crate) fn decide(self, kind: GameKind, d: u32) -> Option<Value> {
        if Self::decides_by_hit(kind, d) {
            self.hit.then(|| at(d))
        } else {
            // Every successor is a win below d; the longest is d - 1 (a shorter one
            // would have decided this position in an earlier pass).
            (!self.blocked).then(|| at(u32::from(self.longest) + 1))
        }
    }
}

/// The value of a position from the values of all its successors.
pub(crate) struct Combine {
    kind: GameKind,
    best_win: Option<u32>,
    longest_opponent_win: u32,
    all_lost: bool,
    best_goal: Option<u32>,
}

impl Combine {
    pub(crate) fn new(kind: GameKind) -> Combine {
        Combine {
            kind,
            best_win: None,
            longest_opponent_win: 0,
            all_lost: true,
            best_goal: None,
        }
    }

    /// Adds one successor's value (from the successor's side to move).
    pub(crate) fn add(&mut self, v: Value) {
        match self.kind {
            GameKind::Puzzle => {
                if let Some(e) = v.distance() {
                    self.best_goal = Some(self.best_goal.map_or(e, |b| b.min(e)));
                }
            }
            GameKind::TwoPlayer => match v.distance() {
                // The opponent lost there: we win one ply further.
                Some(e) if e % 2 == 0 => {
                    self.best_win = Some(self.best_win.map_or(e, |b| b.min(e)));
                }
                Some(e) => self.longest_opponent_win = self.longest_opponent_win.max(e),
                None => self.all_lost = false,
            },
        }
    }

    /// The combined value; `None` if its distance does not fit a value byte.
    /// Two-player positions must have had at least one successor added.
    pub(crate) fn finish(self) -> Option<Value> {
        let next = |e: u32| Value::at_distance(e + 1);
        match self.kind {
            GameKind::Puzzle => self.best_goal.map_or(Some(Value::DRAW), next),
            GameKind::TwoPlayer => match self.best_win {
                Some(e) => next(e),
                None if self.all_lost => next(self.longest_opponent_win),
                None => Some(Value::DRAW),
            },
        }
    }
}

/// Every list of one to `most` successors' values, each a draw or at a
/// distance up to `d + 1`: what the exhaustive tests of pass `d`'s rules
/// run through.
#[cfg(test)]
pub(crate) fn successor_sets(d: u32, most: u32) -> Vec<Vec<Value>> {
    let choices: Vec<Value> = std::iter::once(Value::DRAW)
        .chain((0..d + 2).map(at))
        .collect();
    let k = choices.len();
    (1..=most)
        .flat_map(|n| {
            let choices = &choices;
            (0..k.pow(n)).map(move |mut code| {
                (0..n)
                    .map(|_| {
                        let v = choices[code % k];
                        code /= k;
                        v
                    })
                    .collect()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass's decision from the successors [`PassAcc::can_change`] keeps
    /// is the decision from all of them, wherever a position whose
    /// successors are all wins below `d` has one at `d - 1`: every set of
    /// up to three successors, each a draw or at a distance up to `d + 1`.
    #[test]
    fn the_kept_successors_decide_as_all_of_them() {
        let (mut compared, mut decided) = (0, 0);
        for kind in [GameKind::Puzzle, GameKind::TwoPlayer] {
            for d in 1..10u32 {
                for values in successor_sets(d, 3) {
                    let (mut all, mut kept) = (PassAcc::default(), PassAcc::default());
                    for &v in &values {
                        all.add(kind, d, v);
                        if PassAcc::can_change(kind, d, v) {
                            kept.add(kind, d, v);
                        }
                    }
                    // Such a position was decided by an earlier pass:
                    // no pending one is like it.
                    let longest_short = !PassAcc::decides_by_hit(kind, d)
                        && !all.blocked
                        && u32::from(all.longest) + 1 < d;
                    if longest_short {
                        continue;
                    }
                    compared += 1;
                    let whole = all.decide(kind, d);
                    decided += usize::from(whole.is_some());
                    assert_eq!(kept.decide(kind, d), whole, "{kind:?} pass {d}: {values:?}");
                }
            }
        }
        assert!(compared > 1_000 && decided > 100, "{compared} {decided}");
    }
}
