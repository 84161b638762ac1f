//! Nim, normal play: players alternately take one or more objects from one
//! heap; whoever takes the last object wins (so the side to move at an empty
//! board has lost). Seed 004 describes the game and its board of heaps
//! 1, 3, 5, 7, the default here.
//!
//! Parameter `heaps=1,3,5,7`: the starting (largest) size of each heap. Heaps
//! are told apart by position: `1,0,2` and `2,0,1` are different positions.
//!
//! Hash: partition `t` = objects left (`0..=sum of heaps`); moves lower it, so
//! partitions are solved from 0 upward. Inside a partition the rank is the
//! lexicographic index of the heap-size vector among all vectors with that sum
//! and each heap within its starting size (the bounded-composition hash of
//! `src/game/compositions.rs`); every index is a legal, reachable position.
//!
//! Notation: positions are the heap sizes, comma-separated, heap 1 first
//! (`1,2,5,4`); a move `h3-2` takes 2 objects from heap 3.

use super::board::{bad_position, info_from};
use super::compositions::Compositions;
use super::params::{params, GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::collections::BTreeMap;

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "nim",
    summary: "Nim, normal play (taking the last object wins); every position of the heaps solved",
    kind: GameKind::TwoPlayer,
    params: &[ParamDoc {
        key: "heaps",
        default: "1,3,5,7",
        help: "starting size of each heap, comma-separated: 1 to 16 heaps of 1..=255 objects",
    }],
    notation: "heap sizes, comma-separated, heap 1 first; a move `h3-2` takes 2 from heap 3",
    example: "1,2,5,4",
};

const DEFAULT_HEAPS: [u64; 4] = [1, 3, 5, 7];
const MAX_HEAPS: usize = 16;
const MAX_HEAP: u64 = 255;

/// Heap sizes, heap 1 first: held inline (no allocation per successor; a
/// Nim expansion makes one position per object on the board).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Heaps {
    sizes: [u32; MAX_HEAPS],
    len: u8,
}

impl Heaps {
    /// `n` empty heaps (`n` at most 16).
    fn empty(n: usize) -> Heaps {
        debug_assert!(n <= MAX_HEAPS);
        Heaps {
            sizes: [0; MAX_HEAPS],
            len: n as u8,
        }
    }

    /// Heaps of the given sizes (at most 16).
    pub fn new(sizes: &[u32]) -> Heaps {
        let mut heaps = Heaps::empty(sizes.len());
        heaps.copy_from_slice(sizes);
        heaps
    }
}

impl std::ops::Deref for Heaps {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.sizes[..usize::from(self.len)]
    }
}

impl std::ops::DerefMut for Heaps {
    fn deref_mut(&mut self) -> &mut [u32] {
        &mut self.sizes[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for Heaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A move: take `take` objects from heap `heap` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NimMove {
    /// The heap, 0-based.
    pub heap: usize,
    /// How many objects are taken (at least 1).
    pub take: u32,
}

/// Nim with fixed starting heaps.
#[derive(Clone, Debug)]
pub struct Nim {
    caps: Vec<u32>,
    hash: Compositions,
}

impl Nim {
    /// Nim from `--param heaps=...` (default 1,3,5,7).
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("nim", raw);
        let heaps = p.uint_list("heaps", &DEFAULT_HEAPS, 1..=MAX_HEAP)?;
        if heaps.is_empty() || heaps.len() > MAX_HEAPS {
            return Err(p.error(format!(
                "{} heaps given; write 1 to {MAX_HEAPS} sizes, e.g. `heaps=1,3,5,7`",
                heaps.len()
            )));
        }
        let caps: Vec<u32> = heaps.iter().map(|&h| h as u32).collect();
        let too_big = |p: &ParamReader| {
            p.error(format!(
                "heaps={} have more positions than a 64-bit index holds; use fewer or smaller heaps",
                join(&caps)
            ))
        };
        let hash = Compositions::new(&caps).map_err(|_| too_big(&p))?;
        // The solver adds partition sizes up: their total must fit too.
        let mut sum: u64 = 0;
        for t in 0..=hash.total() {
            sum = sum.checked_add(hash.count(t)).ok_or_else(|| too_big(&p))?;
        }
        p.finish()?;
        Ok(Nim { caps, hash })
    }

    /// The starting size of each heap.
    pub fn heaps(&self) -> &[u32] {
        &self.caps
    }
}

fn join(h: &[u32]) -> String {
    h.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

impl Game for Nim {
    type Position = Heaps;
    type Move = NimMove;

    fn info(&self) -> GameInfo {
        info_from(&DESCRIPTOR, params([("heaps", join(&self.caps))]))
    }

    fn partitions(&self) -> Vec<PartitionId> {
        (0..=self.hash.total()).map(PartitionId).collect()
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        self.hash.count(p.0)
    }

    fn partition_name(&self, p: PartitionId) -> String {
        let digits = self.hash.total().to_string().len();
        format!("left{:0digits$}", p.0)
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Heaps> {
        if p.0 > self.hash.total() || r.0 >= self.hash.count(p.0) {
            return None;
        }
        let mut heaps = Heaps::empty(self.caps.len());
        self.hash.unrank(p.0, r.0, &mut heaps);
        Some(heaps)
    }

    fn rank(&self, heaps: &Heaps) -> (PartitionId, Rank) {
        let t: u32 = heaps.iter().sum();
        (
            PartitionId(t),
            Rank(self.hash.rank(heaps.iter().copied(), t)),
        )
    }

    fn status(&self, heaps: &Heaps) -> Status {
        if heaps.iter().all(|&h| h == 0) {
            Status::Lost
        } else {
            Status::Ongoing
        }
    }

    fn successors(&self, heaps: &Heaps, out: &mut Vec<(NimMove, Heaps)>) {
        for (heap, &h) in heaps.iter().enumerate() {
            for take in 1..=h {
                let mut next = *heaps;
                next[heap] = h - take;
                out.push((NimMove { heap, take }, next));
            }
        }
    }

    fn start(&self) -> Option<Heaps> {
        Some(Heaps::new(&self.caps))
    }

    fn parse_position(&self, text: &str) -> Result<Heaps> {
        let hint = format!(
            "write {} heap sizes separated by commas, each at most its starting size {}",
            self.caps.len(),
            join(&self.caps)
        );
        let bad = |message: String| bad_position("nim", text, message, &hint);
        let parts: Vec<&str> = text.trim().split(',').map(str::trim).collect();
        if parts.len() != self.caps.len() {
            return Err(bad(format!("{} heaps given", parts.len())));
        }
        let mut heaps = Heaps::empty(parts.len());
        for (i, (part, &cap)) in parts.iter().zip(&self.caps).enumerate() {
            let h: u32 = part
                .parse()
                .map_err(|_| bad(format!("heap {}: `{part}` is not a whole number", i + 1)))?;
            if h > cap {
                return Err(bad(format!(
                    "heap {} holds {h}, more than its starting size {cap}",
                    i + 1
                )));
            }
            heaps[i] = h;
        }
        Ok(heaps)
    }

    fn format_position(&self, heaps: &Heaps) -> String {
        join(heaps)
    }

    fn format_move(&self, _heaps: &Heaps, mv: &NimMove) -> String {
        format!("h{}-{}", mv.heap + 1, mv.take)
    }
}
