//! The n-pancake problem and the burnt-pancake problem (Edelkamp and Sulewski, "Parallel State Space Search on the GPU", Table 4).
//!
//! A stack of `n` pancakes of distinct sizes, written top first; a move flips
//! the top `k` pancakes (2 <= k <= n; burnt: 1 <= k <= n, and every flipped
//! pancake turns over). Goal: the identity, sorted smallest on top (burnt:
//! also every burnt side down). Flips are their own inverses, so distances to
//! the goal and BFS layers from it coincide; the start is the goal.
//!
//! Hash: one partition. Plain: the Myrvold–Ruskey rank of the permutation,
//! `n!` indices, all reachable (no parity compression: flips of 2 and of 4
//! pancakes change the parity differently). Burnt: `rank * 2^n + side bits`,
//! `n! 2^n` indices.
//!
//! Notation: the stack top first, sizes 1..=n separated by spaces or commas; in
//! the burnt variant a `-` before a size marks a pancake with its burnt side up
//! (`3 -1 2`). A move is written `flip k`.

use super::board::{bad_position, goal_if, info_from, only_partition};
use super::params::{GameDescriptor, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::hash::{Parity, Permutation};
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "pancake",
    summary: "n-pancake problem (prefix reversals), optionally burnt: distance to the sorted stack (Edelkamp and Sulewski, \"Parallel State Space Search on the GPU\" Table 4)",
    kind: GameKind::Puzzle,
    params: &[
        super::params::ParamDoc {
            key: "n",
            default: "8",
            help: "pancakes, 2..=15 (n! positions; burnt n! 2^n)",
        },
        super::params::ParamDoc {
            key: "burnt",
            default: "0",
            help: "1: burnt pancakes (each has a burnt side that must end down)",
        },
    ],
    notation: "the stack top first, sizes 1..n separated by spaces; burnt: -k for a pancake burnt side up",
    example: "3 1 2 5 4 8 7 6",
};

/// Longest permutation a position holds.
pub const MAX_N: usize = 16;

/// The burnt-side-up flag in a stack entry.
const BURNT_UP: u8 = 0x80;

/// Myrvold and Ruskey's rank of permutations of `0..n` with the parity
/// computed on the fly (Edelkamp and Sulewski, "Parallel State Space Search on the GPU" Alg. 1, Theorem 3), as the permutation
/// puzzles use it: a thin view of [`crate::hash::Permutation`] with the parity
/// as a flag and the parity-halved unrank (Theorem 4: indices `r` and
/// `r + n!/2` differ by exchanging the first two entries).
#[derive(Clone, Debug)]
pub(crate) struct MyrvoldRuskey {
    perm: Permutation,
}

impl MyrvoldRuskey {
    /// Permutations of `0..n`, `n <= MAX_N` (so that `n!` fits a u64).
    pub(crate) fn new(n: usize) -> MyrvoldRuskey {
        MyrvoldRuskey {
            perm: Permutation::new(n).expect("n <= MAX_N = 20, checked by the puzzles' parameters"),
        }
    }

    /// `n!`.
    pub(crate) fn size(&self) -> u64 {
        self.perm.size()
    }

    /// The rank of `perm[..n]` and its parity (true: odd).
    pub(crate) fn rank(&self, perm: &[u8]) -> (u64, bool) {
        let (r, parity) = self.perm.mr_rank(perm);
        (r, parity == Parity::Odd)
    }

    /// Writes the permutation of rank `r` into `perm[..n]`; returns its parity (true: odd).
    pub(crate) fn unrank(&self, r: u64, perm: &mut [u8]) -> bool {
        self.perm.mr_unrank(r, perm) == Parity::Odd
    }

    /// Writes the permutation of parity `odd` with halved index `r`.
    pub(crate) fn unrank_half(&self, r: u64, odd: bool, perm: &mut [u8]) {
        if self.unrank(r, perm) != odd {
            perm.swap(0, 1);
        }
    }
}

/// The identity on `0..n`, the rest zero: the permutation puzzles' goal.
pub(crate) fn identity(n: usize) -> [u8; MAX_N] {
    let mut s = [0u8; MAX_N];
    for (i, v) in s[..n].iter_mut().enumerate() {
        *v = i as u8;
    }
    s
}

/// Goal when `perm` (the used entries) is the identity: every permutation
/// puzzle here has the sorted order as its only goal.
pub(crate) fn sorted_is_goal(perm: &[u8]) -> Status {
    goal_if(perm.iter().enumerate().all(|(i, &v)| v as usize == i))
}

/// A stack, top first: pancake sizes `0..n`, with bit 7 set on burnt-side-up ones.
pub type Stack = [u8; MAX_N];

/// The pancake problem for one `n`, plain or burnt.
#[derive(Clone, Debug)]
pub struct Pancake {
    n: usize,
    burnt: bool,
    perm: MyrvoldRuskey,
}

impl Pancake {
    /// From `--param n=N --param burnt=0|1`.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("pancake", raw);
        let n = p.uint("n", 8, 2..=15)? as usize;
        let burnt = p.uint("burnt", 0, 0..=1)? == 1;
        if burnt && n > 12 {
            return Err(p.error(format!(
                "burnt pancakes with n={n} have {n}! * 2^{n} positions, beyond what one table holds; use n <= 12"
            )));
        }
        p.finish()?;
        Ok(Self::new(n, burnt))
    }

    /// `n` pancakes (2..=15; burnt: 1..=12), plain or burnt.
    pub fn new(n: usize, burnt: bool) -> Self {
        Pancake {
            n,
            burnt,
            perm: MyrvoldRuskey::new(n),
        }
    }

    /// Number of pancakes.
    pub fn n(&self) -> usize {
        self.n
    }

    fn bad(&self, text: &str, message: impl std::fmt::Display) -> Error {
        let example = if self.burnt {
            "e.g. 2 -1 3"
        } else {
            "e.g. 2 1 3"
        };
        bad_position(
            "pancake",
            text,
            message,
            format_args!(
                "write the {} sizes 1..{} top first, separated by spaces{}, {example}",
                self.n,
                self.n,
                if self.burnt { ", -k burnt side up" } else { "" }
            ),
        )
    }
}

impl Game for Pancake {
    type Position = Stack;
    type Move = u8;

    fn info(&self) -> GameInfo {
        info_from(
            &DESCRIPTOR,
            super::params::params([
                ("burnt", u8::from(self.burnt).to_string()),
                ("n", self.n.to_string()),
            ]),
        )
    }

    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        let orders = self.perm.size();
        only_partition(p, if self.burnt { orders << self.n } else { orders })
    }

    fn partition_name(&self, _p: PartitionId) -> String {
        "all".to_string()
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Stack> {
        if r.0 >= self.partition_size(p) {
            return None;
        }
        let mut s = [0u8; MAX_N];
        if self.burnt {
            self.perm.unrank(r.0 >> self.n, &mut s);
            for (i, v) in s[..self.n].iter_mut().enumerate() {
                if r.0 >> i & 1 == 1 {
                    *v |= BURNT_UP;
                }
            }
        } else {
            self.perm.unrank(r.0, &mut s);
        }
        Some(s)
    }

    fn rank(&self, s: &Stack) -> (PartitionId, Rank) {
        if self.burnt {
            let mut plain = [0u8; MAX_N];
            let mut sides = 0u64;
            for (i, &v) in s[..self.n].iter().enumerate() {
                plain[i] = v & !BURNT_UP;
                if v & BURNT_UP != 0 {
                    sides |= 1 << i;
                }
            }
            let r = self.perm.rank(&plain).0;
            (PartitionId(0), Rank(r << self.n | sides))
        } else {
            (PartitionId(0), Rank(self.perm.rank(s).0))
        }
    }

    fn status(&self, s: &Stack) -> Status {
        sorted_is_goal(&s[..self.n])
    }

    fn successors(&self, s: &Stack, out: &mut Vec<(u8, Stack)>) {
        let lo = if self.burnt { 1 } else { 2 };
        for k in lo..=self.n {
            let mut t = *s;
            t[..k].reverse();
            if self.burnt {
                for v in &mut t[..k] {
                    *v ^= BURNT_UP;
                }
            }
            out.push((k as u8, t));
        }
    }

    fn start(&self) -> Option<Stack> {
        Some(identity(self.n))
    }

    fn parse_position(&self, text: &str) -> Result<Stack> {
        let items: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .collect();
        if items.len() != self.n {
            return Err(self.bad(text, format!("{} pancakes, not {}", items.len(), self.n)));
        }
        let mut s = [0u8; MAX_N];
        let mut seen = [false; MAX_N];
        for (i, item) in items.iter().enumerate() {
            let (up, digits) = match item.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, *item),
            };
            if up && !self.burnt {
                return Err(self.bad(
                    text,
                    format!("`{item}`: only burnt pancakes have a side (param burnt=1)"),
                ));
            }
            let size: usize = digits
                .parse()
                .ok()
                .filter(|v| (1..=self.n).contains(v))
                .ok_or_else(|| self.bad(text, format!("`{item}` is not a size 1..={}", self.n)))?;
            if seen[size - 1] {
                return Err(self.bad(text, format!("size {size} appears twice")));
            }
            seen[size - 1] = true;
            s[i] = (size - 1) as u8 | if up { BURNT_UP } else { 0 };
        }
        Ok(s)
    }

    fn format_position(&self, s: &Stack) -> String {
        s[..self.n]
            .iter()
            .map(|&v| {
                let size = (v & !BURNT_UP) + 1;
                if v & BURNT_UP != 0 {
                    format!("-{size}")
                } else {
                    size.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn format_move(&self, _s: &Stack, k: &u8) -> String {
        format!("flip {k}")
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        // The start is the goal: the index it ranks to is where both searches begin.
        let goal = self.rank(&self.start().expect("the goal")).1 .0;
        Ok(Some(std::sync::Arc::new(
            super::permpuzzle::PermKernels::new(
                self.info().canonical(),
                super::permpuzzle::PermSpec::pancake(self.n, self.burnt),
                goal,
                device,
            )?,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn myrvold_ruskey_round_trip_and_parity() {
        for n in 1..=7usize {
            let mr = MyrvoldRuskey::new(n);
            let mut seen = vec![false; mr.size() as usize];
            for r in 0..mr.size() {
                let mut p = [0u8; MAX_N];
                let odd = mr.unrank(r, &mut p);
                let inversions = (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .filter(|&(i, j)| p[i] > p[j])
                    .count();
                assert_eq!(odd, inversions % 2 == 1, "n={n} r={r}");
                assert_eq!(mr.rank(&p), (r, odd));
                seen[r as usize] = true;
                if n >= 2 {
                    let h = r % (mr.size() / 2);
                    let mut q = [0u8; MAX_N];
                    mr.unrank_half(h, odd, &mut q);
                    assert_eq!(q, p);
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn notation_and_moves() {
        let g = Pancake::new(4, true);
        let s = g.parse_position("2 -1 4 3").unwrap();
        assert_eq!(g.format_position(&s), "2 -1 4 3");
        assert!(g.parse_position("2 2 4 3").is_err());
        assert!(g.parse_position("2 1 4").is_err());
        assert!(Pancake::new(4, false).parse_position("2 -1 4 3").is_err());
        let mut succ = Vec::new();
        g.successors(&s, &mut succ);
        assert_eq!(succ.len(), 4);
        assert_eq!(g.format_position(&succ[1].1), "1 -2 4 3");
        for (_, t) in &succ {
            let (p, r) = g.rank(t);
            assert_eq!(g.unrank(p, r).as_ref(), Some(t));
        }
    }
}
