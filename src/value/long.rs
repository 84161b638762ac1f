//! Distances longer than a value byte holds.
//!
//! A value byte holds distances up to [`Value::MAX_DISTANCE`] (253 plies).
//! Some databases go further (the deepest checkers endings with seven
//! pieces need more than 253 plies), and widening every byte of every
//! position to two would double the memory and files of all of them for a
//! handful of positions. Instead a position whose distance does not fit
//! keeps a **saturated** byte that still tells its outcome (254, a loss at
//! 252 plies or more, or 255, a win at 253 or more: the parity of a
//! distance is its outcome), and its exact distance is listed in its
//! partition's [`LongDistances`], which files store beside the values
//! (FORMAT.md, "Long distances").

use super::{Rank, Value};

/// The byte of a loss at a distance of 252 plies or more.
pub const SATURATED_LOSS: u8 = 254;
/// The byte of a win at a distance of 253 plies or more.
pub const SATURATED_WIN: u8 = 255;

/// The exact distances of one partition's positions whose distance is beyond
/// [`Value::MAX_DISTANCE`], by rank, in increasing rank order; each of these
/// positions stores [`Value::saturated`] of its distance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LongDistances {
    entries: Vec<(u64, u32)>,
}

impl LongDistances {
    /// No long distances: what nearly every partition has.
    pub const fn new() -> LongDistances {
        LongDistances {
            entries: Vec::new(),
        }
    }

    /// The table of `entries` (rank, distance) in any order; `None` if a rank
    /// is listed twice or a distance fits a byte.
    pub fn from_entries(mut entries: Vec<(u64, u32)>) -> Option<LongDistances> {
        entries.sort_unstable();
        let distinct = entries.windows(2).all(|w| w[0].0 != w[1].0);
        let long = entries.iter().all(|&(_, d)| d > Value::MAX_DISTANCE);
        (distinct && long).then_some(LongDistances { entries })
    }

    /// Adds the entries of `more` (ranks not listed yet, distances beyond a
    /// byte); `false`, and nothing added, otherwise.
    pub fn extend(&mut self, more: Vec<(u64, u32)>) -> bool {
        if more.is_empty() {
            return true;
        }
        // Cloned, not taken: a refused extension leaves the table as it was.
        let mut all = self.entries.clone();
        all.extend(more);
        match LongDistances::from_entries(all) {
            Some(merged) => {
                *self = merged;
                true
            }
            None => false,
        }
    }

    /// Positions listed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no position is listed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The (rank, distance) entries in rank order.
    pub fn entries(&self) -> &[(u64, u32)] {
        &self.entries
    }

    /// The long distance of the position at `rank`, if it has one.
    #[inline]
    pub fn get(&self, rank: Rank) -> Option<u32> {
        self.entries
            .binary_search_by_key(&rank.0, |&(r, _)| r)
            .ok()
            .map(|i| self.entries[i].1)
    }

    /// The distance of the position at `rank` whose byte is `value`: the
    /// listed one where the byte is saturated and the rank listed, the byte's
    /// own otherwise.
    #[inline]
    pub fn distance(&self, rank: Rank, value: Value) -> Option<u32> {
        if value.to_byte() >= SATURATED_LOSS && !self.entries.is_empty() {
            if let Some(d) = self.get(rank) {
                return Some(d);
            }
        }
        value.distance()
    }

    /// The longest distance listed.
    pub fn max_distance(&self) -> Option<u32> {
        self.entries.iter().map(|&(_, d)| d).max()
    }

    /// The longest win (odd distance) listed.
    pub fn longest_win(&self) -> Option<u32> {
        self.entries
            .iter()
            .map(|&(_, d)| d)
            .filter(|d| d % 2 == 1)
            .max()
    }

    /// Checks the table against its partition's value bytes (`byte_at(rank)`,
    /// `None` past the partition's `size` indices): every rank inside the
    /// partition, its byte the saturated one of its distance. The first
    /// entry that breaks this, as a message.
    pub fn check(&self, size: u64, byte_at: impl Fn(u64) -> u8) -> Result<(), String> {
        for &(rank, d) in &self.entries {
            if rank >= size {
                return Err(format!(
                    "long distance {d} listed at rank {rank}, past the partition's {size} indices"
                ));
            }
            let want = Value::saturated(d).to_byte();
            let got = byte_at(rank);
            if got != want {
                return Err(format!(
                    "rank {rank} has a long distance of {d} plies but value byte {got}, not {want}"
                ));
            }
        }
        Ok(())
    }
}

impl Value {
    /// A decided position at any `distance`: the exact byte where it fits,
    /// the saturated byte of its outcome (254 loss, 255 win) beyond
    /// [`Value::MAX_DISTANCE`], whose exact distance goes in the partition's
    /// [`LongDistances`].
    pub fn saturated(distance: u32) -> Value {
        match Value::at_distance(distance) {
            Some(v) => v,
            None if distance % 2 == 0 => Value::from_byte(SATURATED_LOSS),
            None => Value::from_byte(SATURATED_WIN),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturated_bytes_keep_the_outcome() {
        for d in [0, 1, 251, 252, 253, 254, 255, 300, 301, 9_999] {
            let v = Value::saturated(d);
            let expect = if d % 2 == 0 { "loss" } else { "win" };
            assert_eq!(v.outcome().unwrap().to_string(), expect, "distance {d}");
            if d <= Value::MAX_DISTANCE {
                assert_eq!(v.distance(), Some(d));
            } else {
                assert!(v.to_byte() >= SATURATED_LOSS);
            }
        }
    }

    #[test]
    fn lookup_and_checks() {
        let long = LongDistances::from_entries(vec![(40, 301), (7, 254)]).unwrap();
        assert_eq!(long.entries(), &[(7, 254), (40, 301)]);
        assert_eq!(long.get(Rank(7)), Some(254));
        assert_eq!(long.get(Rank(8)), None);
        assert_eq!(
            long.distance(Rank(40), Value::from_byte(SATURATED_WIN)),
            Some(301)
        );
        // A saturated byte that is not listed is the byte's own distance.
        assert_eq!(
            long.distance(Rank(41), Value::from_byte(SATURATED_WIN)),
            Some(253)
        );
        assert_eq!(long.max_distance(), Some(301));
        assert_eq!(long.longest_win(), Some(301));
        let bytes = |r: u64| match r {
            7 => SATURATED_LOSS,
            40 => SATURATED_WIN,
            _ => 3,
        };
        assert_eq!(long.check(41, bytes), Ok(()));
        assert!(long.check(40, bytes).is_err());
        assert!(long.check(41, |_| SATURATED_WIN).is_err());
        assert!(LongDistances::from_entries(vec![(1, 300), (1, 302)]).is_none());
        assert!(LongDistances::from_entries(vec![(1, 253)]).is_none());
        let mut grown = LongDistances::new();
        assert!(grown.extend(vec![(3, 260)]));
        assert!(!grown.extend(vec![(3, 262)]));
        assert_eq!(grown.entries(), &[(3, 260)]);
    }
}
