//! The (n, k) Top-Spin puzzle (Edelkamp and Sulewski, "Parallel State Space Search on the GPU", Table 3; Theorem 1).
//!
//! `n` tokens on a ring; a move ("twist at i") reverses the `k` consecutive
//! tokens at ring positions `i, i+1, ..., i+k-1` (mod n), for each of the `n`
//! positions `i`. Only the tokens' cyclic order matters, so every state is
//! normalised by rotating token 1 to the front (Edelkamp and Sulewski, "Parallel State Space Search on the GPU": "we normalize the
//! permutation moving token 0 to the start"): `(n-1)!` states. Goal: the
//! tokens in order, `1 2 ... n`. Twists are their own inverses, so BFS from
//! the goal (the start) gives the distances to it.
//!
//! Hash: one partition, the Myrvold–Ruskey rank of the order of tokens
//! `2..=n` behind token 1. For `k = 4` and odd `n > 5` every twist keeps that
//! order's parity even (Theorem 1), so the index is parity-halved: `(n-1)!/2`
//! indices, all reachable; otherwise `(n-1)!` indices.
//!
//! Notation: the tokens around the ring, any rotation, separated by spaces
//! (`1 2 3 4 5 6`); moves are `twist i`, `i` counted from token 1's position (0-based).

use super::board::{bad_position, info_from, only_partition};
use super::pancake::{identity, sorted_is_goal, MyrvoldRuskey, MAX_N};
use super::params::{GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "topspin",
    summary: "(n,k) Top-Spin: reverse k consecutive tokens on a ring of n; distance to the sorted ring (Edelkamp and Sulewski, \"Parallel State Space Search on the GPU\" Table 3)",
    kind: GameKind::Puzzle,
    params: &[
        ParamDoc {
            key: "n",
            default: "9",
            help: "tokens on the ring, 4..=16",
        },
        ParamDoc {
            key: "k",
            default: "4",
            help: "tokens reversed by a twist, 2..=n-1",
        },
    ],
    notation: "the tokens 1..n around the ring separated by spaces, any rotation; moves `twist i`",
    example: "1 3 2 4 5 6 7 8 9",
};

/// A ring, normalised: token 0 (written 1) at index 0, then the others.
pub type Ring = [u8; MAX_N];

/// The (n, k) Top-Spin puzzle.
#[derive(Clone, Debug)]
pub struct TopSpin {
    n: usize,
    k: usize,
    /// Parity-halved index (k = 4, n odd, n > 5).
    halved: bool,
    perm: MyrvoldRuskey,
}

impl TopSpin {
    /// From `--param n=N --param k=K`.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("topspin", raw);
        let n = p.uint("n", 9, 4..=16)? as usize;
        let k = p.uint("k", 4, 2..=15)? as usize;
        if k >= n {
            return Err(p.error(format!("k={k} must be below n={n}")));
        }
        p.finish()?;
        Ok(Self::new(n, k))
    }

    /// `n` tokens (4..=16), twists of `k` (2..n).
    pub fn new(n: usize, k: usize) -> Self {
        TopSpin {
            n,
            k,
            halved: k == 4 && n % 2 == 1 && n > 5,
            perm: MyrvoldRuskey::new(n - 1),
        }
    }

    /// Whether the index space is parity-halved (Theorem 1 applies).
    pub fn parity_halved(&self) -> bool {
        self.halved
    }

    /// The order of tokens behind token 0, as a permutation of `0..n-1`.
    fn order(&self, ring: &Ring) -> [u8; MAX_N] {
        let mut q = [0u8; MAX_N];
        for j in 0..self.n - 1 {
            q[j] = ring[j + 1] - 1;
        }
        q
    }

    /// Parity of a normalised ring's order (true: odd).
    pub fn odd(&self, ring: &Ring) -> bool {
        self.perm.rank(&self.order(ring)).1
    }

    fn normalise(&self, ring: &[u8]) -> Ring {
        let n = self.n;
        let at = ring[..n].iter().position(|&t| t == 0).unwrap_or(0);
        let mut out = [0u8; MAX_N];
        for j in 0..n {
            out[j] = ring[(at + j) % n];
        }
        out
    }
}

impl Game for TopSpin {
    type Position = Ring;
    type Move = u8;

    fn info(&self) -> GameInfo {
        info_from(
            &DESCRIPTOR,
            super::params::params([("k", self.k.to_string()), ("n", self.n.to_string())]),
        )
    }

    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        let orders = self.perm.size();
        only_partition(p, if self.halved { orders / 2 } else { orders })
    }

    fn partition_name(&self, _p: PartitionId) -> String {
        "all".to_string()
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Ring> {
        if r.0 >= self.partition_size(p) {
            return None;
        }
        let mut q = [0u8; MAX_N];
        if self.halved {
            self.perm.unrank_half(r.0, false, &mut q);
        } else {
            self.perm.unrank(r.0, &mut q);
        }
        let mut ring = [0u8; MAX_N];
        for j in 0..self.n - 1 {
            ring[j + 1] = q[j] + 1;
        }
        Some(ring)
    }

    fn rank(&self, ring: &Ring) -> (PartitionId, Rank) {
        let q = self.order(ring);
        if self.halved {
            let (r, odd) = self.perm.rank(&q);
            // Theorem 1: never odd here; an odd ring would alias an even one.
            debug_assert!(!odd, "odd Top-Spin state in a parity-halved index");
            (PartitionId(0), Rank(r % (self.perm.size() / 2)))
        } else {
            (PartitionId(0), Rank(self.perm.rank(&q).0))
        }
    }

    fn status(&self, ring: &Ring) -> Status {
        sorted_is_goal(&ring[..self.n])
    }

    fn successors(&self, ring: &Ring, out: &mut Vec<(u8, Ring)>) {
        let n = self.n;
        for i in 0..n {
            let mut t = *ring;
            for a in 0..self.k / 2 {
                t.swap((i + a) % n, (i + self.k - 1 - a) % n);
            }
            out.push((i as u8, self.normalise(&t)));
        }
    }

    fn start(&self) -> Option<Ring> {
        Some(identity(self.n))
    }

    fn parse_position(&self, text: &str) -> Result<Ring> {
        let hint = format!(
            "write the tokens 1..={} around the ring separated by spaces, e.g. {}",
            self.n,
            (1..=self.n)
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let bad = |message: String| bad_position("topspin", text, message, &hint);
        let items: Vec<&str> = text.split_whitespace().collect();
        if items.len() != self.n {
            return Err(bad(format!("{} tokens, not {}", items.len(), self.n)));
        }
        let mut ring = [0u8; MAX_N];
        let mut seen = [false; MAX_N];
        for (i, item) in items.iter().enumerate() {
            let t: usize = item
                .parse()
                .ok()
                .filter(|t| (1..=self.n).contains(t))
                .ok_or_else(|| bad(format!("`{item}` is not a token 1..={}", self.n)))?;
            if seen[t - 1] {
                return Err(bad(format!("token {t} appears twice")));
            }
            seen[t - 1] = true;
            ring[i] = (t - 1) as u8;
        }
        let ring = self.normalise(&ring);
        if self.halved && self.odd(&ring) {
            return Err(bad(
                "this ring cannot be sorted: with k=4 and odd n every twist keeps the order's parity (Edelkamp and Sulewski, \"Parallel State Space Search on the GPU\" Theorem 1), and this one is odd".to_string(),
            ));
        }
        Ok(ring)
    }

    fn format_position(&self, ring: &Ring) -> String {
        ring[..self.n]
            .iter()
            .map(|&t| (t + 1).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn format_move(&self, _ring: &Ring, i: &u8) -> String {
        format!("twist {i}")
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
                super::permpuzzle::PermSpec::topspin(self.n, self.k, self.halved),
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
    fn notation_and_round_trip() {
        let g = TopSpin::new(7, 4);
        let ring = g.parse_position("3 4 5 6 7 1 2").unwrap();
        assert_eq!(g.format_position(&ring), "1 2 3 4 5 6 7");
        assert_eq!(g.status(&ring), Status::Goal);
        assert!(
            g.parse_position("1 2 3 4 5 7 6").is_err(),
            "odd order with k=4, n=7"
        );
        assert!(TopSpin::new(6, 4).parse_position("1 2 3 4 6 5").is_ok());
        let mut succ = Vec::new();
        g.successors(&ring, &mut succ);
        assert_eq!(succ.len(), 7);
        // Twist at 0 reverses 1 2 3 4 into 4 3 2 1; then token 1 goes to the front.
        assert_eq!(g.format_position(&succ[0].1), "1 5 6 7 4 3 2");
        for (_, t) in &succ {
            let (p, r) = g.rank(t);
            assert_eq!(g.unrank(p, r).as_ref(), Some(t));
        }
    }

    #[test]
    fn theorem_1_every_twist_keeps_parity_for_odd_n() {
        for n in [7usize, 9] {
            let g = TopSpin::new(n, 4);
            assert!(g.parity_halved());
            let mut succ = Vec::new();
            for r in 0..g.partition_size(PartitionId(0)) {
                let ring = g.unrank(PartitionId(0), Rank(r)).unwrap();
                assert!(!g.odd(&ring));
                succ.clear();
                g.successors(&ring, &mut succ);
                for (_, t) in &succ {
                    assert!(
                        !g.odd(t),
                        "n={n}: a twist of {} made it odd",
                        g.format_position(&ring)
                    );
                }
            }
        }
    }
}
