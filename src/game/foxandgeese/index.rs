//! The index of one level (a number of geese): side to move, the fox on one
//! of the 7 representatives of its symmetry class, and the geese as a
//! binomially ranked subset of the other 32 points.
//!
//! Edelkamp ("BDDs for Minimal Perfect Hashing") splits a level into one
//! set per fox position and copies results between symmetric fox positions;
//! here the copies are never made: a position is ranked as its image with
//! the fox on its representative, and among the images that leave the fox
//! there (the representative's stabiliser: 1, 2 or 8 symmetries) the one
//! with the smallest geese mask is the class's index. The other images'
//! indices are illegal (value 0, which compresses to nothing), so every
//! legal index is one class of positions under the 8 symmetries, and it
//! stands for 8 positions unless the geese are symmetric too.

use super::board::{Geometry, CELLS};
use crate::hash::Binomial;
use crate::value::{Rank, Weights};
use std::collections::BTreeSet;

/// Points other than the fox's, where geese may stand.
pub const GOOSE_POINTS: usize = CELLS - 1;

/// Bytes of the board table kernels/foxandgeese.cu copies into shared
/// memory (`FG_BOARD_BYTES`).
#[cfg(feature = "cuda")]
pub const DEVICE_BOARD_BYTES: usize = 640;

/// The index of every level.
#[derive(Clone, Debug)]
pub struct Index {
    /// The board.
    pub geo: Geometry,
    /// The representative of each point's symmetry class (its smallest point).
    rep: [u8; CELLS],
    /// The representatives, in increasing order: block `b` of a level's
    /// index holds the positions with the fox on `reps[b]`.
    reps: Vec<u8>,
    /// Block of each representative (unused for other points).
    block: [u8; CELLS],
    /// `to_rep[p]`: the symmetries sending `p` to its representative.
    to_rep: [Vec<u8>; CELLS],
    /// Subsets of the 32 goose points with `k` geese, for every `k`.
    subsets: Vec<Binomial>,
}

/// A position taken apart for the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The fox's point.
    pub fox: usize,
    /// The geese (bit `i` = point `i`).
    pub geese: u64,
    /// The fox moves next (else the geese).
    pub fox_to_move: bool,
}

impl Index {
    /// The index on board `geo`.
    pub fn new(geo: Geometry) -> Index {
        let mut rep = [0u8; CELLS];
        let mut to_rep: [Vec<u8>; CELLS] = std::array::from_fn(|_| Vec::new());
        for p in 0..CELLS {
            rep[p] = (0..8).map(|g| geo.perm[g][p]).min().unwrap_or(p as u8);
            to_rep[p] = (0..8u8)
                .filter(|&g| geo.perm[g as usize][p] == rep[p])
                .collect();
        }
        let mut reps: Vec<u8> = rep.to_vec();
        reps.sort_unstable();
        reps.dedup();
        let mut block = [u8::MAX; CELLS];
        for (b, &r) in reps.iter().enumerate() {
            block[r as usize] = b as u8;
        }
        let subsets = (0..=GOOSE_POINTS)
            .map(|k| Binomial::new(GOOSE_POINTS, k).expect("k <= 32 of 32 points"))
            .collect();
        Index {
            geo,
            rep,
            reps,
            block,
            to_rep,
            subsets,
        }
    }

    /// Blocks per side to move: symmetry classes of fox points.
    pub fn blocks(&self) -> u64 {
        self.reps.len() as u64
    }

    /// Indices of the level with `k` geese.
    pub fn size(&self, k: usize) -> u64 {
        2 * self.blocks() * self.subsets[k].size()
    }

    /// The index of a position with `k` geese.
    #[inline]
    pub fn rank(&self, k: usize, pos: Placed) -> Rank {
        let r = self.rep[pos.fox] as usize;
        let mut canon = u64::MAX;
        for &g in &self.to_rep[pos.fox] {
            canon = canon.min(self.geo.map(g as usize, pos.geese));
        }
        self.rank_canonical(k, r, canon, pos.fox_to_move)
    }

    /// The index of the fox on representative `r` and the geese `canon`,
    /// already the smallest of their images.
    #[inline]
    fn rank_canonical(&self, k: usize, r: usize, canon: u64, fox_to_move: bool) -> Rank {
        let low = canon & ((1u64 << r) - 1);
        let high = canon >> (r + 1) << r;
        let sub = &self.subsets[k];
        let turn = u64::from(!fox_to_move);
        Rank((turn * self.blocks() + u64::from(self.block[r])) * sub.size() + sub.rank(low | high))
    }

    /// The position of index `r` of level `k`, `None` for an index that is
    /// not its class's smallest image (or out of range).
    #[inline]
    pub fn unrank(&self, k: usize, r: Rank) -> Option<Placed> {
        let sub = &self.subsets[k];
        if r.0 >= self.size(k) {
            return None;
        }
        let (outer, inner) = (r.0 / sub.size(), r.0 % sub.size());
        let fox_to_move = outer < self.blocks();
        let fox = self.reps[(outer % self.blocks()) as usize] as usize;
        let m = sub.unrank(inner);
        let low = m & ((1u64 << fox) - 1);
        let geese = low | (m >> fox) << (fox + 1);
        for &h in &self.to_rep[fox] {
            if self.geo.map(h as usize, geese) < geese {
                return None;
            }
        }
        Some(Placed {
            fox,
            geese,
            fox_to_move,
        })
    }

    /// The tables kernels/foxandgeese.cu reads, in its layout: the board
    /// ([`DEVICE_BOARD_BYTES`] bytes at the kernel's `FG_*_AT` offsets: each
    /// point's 8 steps, representative, block, the blocks' representatives,
    /// the symmetries taking each point to its representative and how many),
    /// the binomials C(n, k) for n, k <= 32 (row n, 0 where k > n), and each
    /// symmetry's image of each byte of a mask (`Geometry::map`'s table).
    #[cfg(feature = "cuda")]
    pub fn device_tables(&self) -> (Vec<u8>, Vec<u64>, Vec<u64>) {
        const REP_AT: usize = 264;
        const BLOCK_AT: usize = 297;
        const REPS_AT: usize = 330;
        const TOREP_AT: usize = 338;
        const TOREPN_AT: usize = 602;
        let mut board = vec![0u8; DEVICE_BOARD_BYTES];
        for p in 0..CELLS {
            board[p * 8..p * 8 + 8].copy_from_slice(&self.geo.step[p]);
            board[REP_AT + p] = self.rep[p];
            board[BLOCK_AT + p] = self.block[p];
            for (i, &g) in self.to_rep[p].iter().enumerate() {
                board[TOREP_AT + p * 8 + i] = g;
            }
            board[TOREPN_AT + p] = self.to_rep[p].len() as u8;
        }
        for (b, &r) in self.reps.iter().enumerate() {
            board[REPS_AT + b] = r;
        }
        let mut binom = vec![0u64; (CELLS) * (CELLS)];
        for n in 0..CELLS {
            for k in 0..=n {
                binom[n * CELLS + k] = Binomial::new(n, k).map_or(0, |b| b.size());
            }
        }
        let maps = self
            .geo
            .bytes
            .iter()
            .flat_map(|table| table.iter().flat_map(|row| row.iter().copied()))
            .collect();
        (board, binom, maps)
    }

    /// How many of the 8 symmetries leave the position of a legal index in
    /// place: its class has 8 / that many positions.
    #[cfg(feature = "build")]
    #[inline]
    pub fn fixing(&self, pos: Placed) -> u32 {
        self.to_rep[pos.fox]
            .iter()
            .filter(|&&h| self.geo.map(h as usize, pos.geese) == pos.geese)
            .count() as u32
    }

    /// Positions per index of level `k`: 8, but for the classes whose geese
    /// some symmetry fixing the fox leaves in place (found by building the
    /// sets such a symmetry fixes, cycle by cycle, not by scanning the level).
    pub fn weights(&self, k: usize) -> Weights {
        let mut exceptions = Vec::new();
        for &r in &self.reps {
            let r = r as usize;
            let stabiliser = &self.to_rep[r];
            let mut fixed_sets = BTreeSet::new();
            for &h in stabiliser.iter().filter(|&&h| h != 0) {
                let cycles = self.cycles(h as usize, r);
                let mut pick = |set: u64| {
                    if stabiliser
                        .iter()
                        .all(|&g| self.geo.map(g as usize, set) >= set)
                    {
                        fixed_sets.insert(set);
                    }
                };
                unions_of_size(&cycles, 0, k, 0, &mut pick);
            }
            for set in fixed_sets {
                let fixing = stabiliser
                    .iter()
                    .filter(|&&g| self.geo.map(g as usize, set) == set)
                    .count() as u64;
                for fox_to_move in [true, false] {
                    let rank = self.rank_canonical(k, r, set, fox_to_move);
                    exceptions.push((rank, 8 / fixing));
                }
            }
        }
        exceptions.sort_unstable();
        Weights {
            common: 8,
            exceptions,
        }
    }

    /// The cycles of symmetry `h` on the points other than `fox`, as masks.
    fn cycles(&self, h: usize, fox: usize) -> Vec<u64> {
        let mut done = 1u64 << fox;
        let mut out = Vec::new();
        for p in 0..CELLS {
            if done >> p & 1 == 1 {
                continue;
            }
            let mut cycle = 0u64;
            let mut q = p;
            while cycle >> q & 1 == 0 {
                cycle |= 1 << q;
                q = self.geo.perm[h][q] as usize;
            }
            done |= cycle;
            out.push(cycle);
        }
        out
    }
}

/// Calls `f` with every union of some of `cycles[i..]` with `left` more
/// points, added to `acc`.
fn unions_of_size(cycles: &[u64], i: usize, left: usize, acc: u64, f: &mut impl FnMut(u64)) {
    if left == 0 {
        f(acc);
        return;
    }
    let Some(&c) = cycles.get(i) else {
        return;
    };
    let n = c.count_ones() as usize;
    if n <= left {
        unions_of_size(cycles, i + 1, left - n, acc | c, f);
    }
    unions_of_size(cycles, i + 1, left, acc, f);
}
