//! Forward search from a game's start position over the perfect hash: which
//! indices are reachable, and how many first appear at each depth.
//!
//! Three variants, which must agree (tests hold them to it):
//! - [`frontier_bfs`]: a visited bit per index plus explicit frontier lists;
//!   fastest when layers are small against the index space.
//! - [`two_bit_bfs`]: Edelkamp's "BDDs for Minimal Perfect Hashing" and Edelkamp and Sulewski's "Parallel State Space Search on the GPU" two-bit BFS, 2 bits per index holding
//!   "unseen" or the depth mod 3 at which it was first reached; layer `d` is
//!   every index marked `d mod 3`. Indices marked three layers back carry the
//!   same code and are expanded again; their successors are all seen, so they
//!   add nothing and the counts stay exact.
//! - [`one_bit_reachability`]: 1 bit per index, rescanning until no new index
//!   is set; gives the reachable set but no layers.
//!
//! Terminal positions (lost, drawn) are counted but not expanded: play stops
//! there. Puzzle goals are expanded like any other position.

use super::bitset::AtomicBitSet;
use super::Progress;
use crate::game::Layout;
use crate::game::{Game, Status};
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What forward search found.
pub struct Reachable {
    /// One bit per index, per partition slot.
    pub bits: Vec<AtomicBitSet>,
    /// Positions first reached at each depth (depth 0: the start).
    pub layers: Vec<u64>,
    /// Seconds spent expanding each depth (into the next), where the search
    /// goes depth by depth over partitions ([`super::layered_search`]).
    pub depth_seconds: Vec<f64>,
    /// Seconds spent expanding each partition slot, where the search went
    /// partition by partition ([`super::layered_search`]); empty otherwise.
    pub slot_seconds: Vec<f64>,
}

impl Reachable {
    /// Reachable positions in the partition in `slot`.
    pub fn count(&self, slot: usize) -> u64 {
        self.bits[slot].count()
    }

    /// All reachable positions.
    pub fn total(&self) -> u64 {
        self.layers.iter().sum()
    }
}

/// Expands indices and reports the first contract breach.
pub(super) struct Expander<'a, G: Game> {
    game: &'a G,
    layout: &'a Layout,
    error: Mutex<Option<String>>,
}

impl<'a, G: Game> Expander<'a, G> {
    pub(super) fn new(game: &'a G, layout: &'a Layout) -> Self {
        Expander {
            game,
            layout,
            error: Mutex::new(None),
        }
    }

    /// Calls `visit(slot, rank)` for each successor of the position at (slot, r),
    /// unless the position is terminal.
    pub(super) fn expand(
        &self,
        slot: usize,
        r: u64,
        buf: &mut Vec<(G::Move, G::Position)>,
        mut visit: impl FnMut(usize, u64),
    ) {
        let p = self.layout.order()[slot];
        let Some(pos) = self.game.unrank(p, Rank(r)) else {
            self.fail(format!(
                "reached index ({p}, {r}), which the game calls illegal"
            ));
            return;
        };
        if matches!(self.game.status(&pos), Status::Lost | Status::Drawn) {
            return;
        }
        buf.clear();
        self.game.successors(&pos, buf);
        for (_, s) in buf.iter() {
            let (sp, sr) = self.game.rank(s);
            match self.layout.locate(sp, sr) {
                Some(ss) => visit(ss, sr.0),
                None => self.fail(format!(
                    "successor ({sp}, {sr}) is outside the game's partitions"
                )),
            }
        }
    }

    pub(super) fn fail(&self, message: String) {
        let mut e = self.error.lock().unwrap_or_else(|e| e.into_inner());
        e.get_or_insert(message);
    }

    pub(super) fn check(&self) -> Result<()> {
        match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(message) => Err(Error::GameContract {
                game: self.game.info().id.to_string(),
                message,
            }),
            None => Ok(()),
        }
    }
}

pub(super) fn start_index<G: Game>(game: &G, layout: &Layout) -> Result<Option<(usize, u64)>> {
    let Some(start) = game.start() else {
        return Ok(None);
    };
    let (p, r): (PartitionId, Rank) = game.rank(&start);
    let slot = layout.locate(p, r).ok_or_else(|| Error::GameContract {
        game: game.info().id.to_string(),
        message: format!("start position ranks to ({p}, {r}), outside the partitions"),
    })?;
    Ok(Some((slot, r.0)))
}

/// One bit per index with the start position's set, and the start's (slot, rank).
type StartBits = (Vec<AtomicBitSet>, (usize, u64));

/// [`StartBits`] of the game; `None` without a start.
fn start_bits<G: Game>(game: &G, layout: &Layout) -> Result<Option<StartBits>> {
    let Some((slot, r)) = start_index(game, layout)? else {
        return Ok(None);
    };
    let bits: Vec<AtomicBitSet> = (0..layout.len())
        .map(|s| AtomicBitSet::new(layout.size(s)))
        .collect();
    bits[slot].set(r);
    Ok(Some((bits, (slot, r))))
}

/// Layered BFS with explicit frontiers; `None` if the game has no start position.
pub fn frontier_bfs<G: Game>(
    game: &G,
    layout: &Layout,
    progress: &Progress,
) -> Result<Option<Reachable>> {
    let Some((bits, (slot, r))) = start_bits(game, layout)? else {
        return Ok(None);
    };
    let ex = Expander::new(game, layout);
    let mut frontier = vec![(slot as u32, r)];
    let mut layers = vec![1u64];
    while !frontier.is_empty() {
        progress.phase(
            &format!("bfs depth {}", layers.len()),
            frontier.len() as u64,
        );
        let next: Vec<(u32, u64)> = frontier
            .par_chunks(1 << 12)
            .flat_map_iter(|chunk| {
                let mut buf = Vec::new();
                let mut found = Vec::new();
                for &(s, r) in chunk {
                    ex.expand(s as usize, r, &mut buf, |ss, sr| {
                        if bits[ss].set(sr) {
                            found.push((ss as u32, sr));
                        }
                    });
                }
                progress.inc(chunk.len() as u64);
                found
            })
            .collect();
        ex.check()?;
        if !next.is_empty() {
            layers.push(next.len() as u64);
        }
        frontier = next;
    }
    progress.finish();
    Ok(Some(Reachable {
        bits,
        layers,
        depth_seconds: Vec::new(),
        slot_seconds: Vec::new(),
    }))
}

/// 2 bits per index, packed 32 to a word: 0 unseen, 1..=3 first reached at depth mod 3 = code - 1.
struct TwoBitArray {
    words: Vec<AtomicU64>,
}

impl TwoBitArray {
    fn new(len: u64) -> Self {
        TwoBitArray {
            words: (0..len.div_ceil(32)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn get(&self, i: u64) -> u8 {
        ((self.words[(i / 32) as usize].load(Ordering::Relaxed) >> (2 * (i % 32))) & 3) as u8
    }

    /// Sets an unseen entry to `code`; true if this call did it.
    fn claim(&self, i: u64, code: u8) -> bool {
        let shift = 2 * (i % 32);
        let word = &self.words[(i / 32) as usize];
        let mut old = word.load(Ordering::Relaxed);
        loop {
            if (old >> shift) & 3 != 0 {
                return false;
            }
            match word.compare_exchange_weak(
                old,
                old | (u64::from(code) << shift),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => old = now,
            }
        }
    }
}

/// What the two-bit BFS found: layer sizes and reachable positions per partition slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoBitResult {
    /// Positions first reached at each depth (depth 0: the start).
    pub layers: Vec<u64>,
    /// Reachable positions per partition slot.
    pub per_slot: Vec<u64>,
}

/// Seed 001's two-bit BFS (depth mod 3 per index): 2 bits per index and no
/// frontier lists, so its memory is fixed in advance (memory-limited builds use it).
pub fn two_bit_bfs<G: Game>(
    game: &G,
    layout: &Layout,
    progress: &Progress,
) -> Result<Option<TwoBitResult>> {
    let Some((slot, r)) = start_index(game, layout)? else {
        return Ok(None);
    };
    let arrays: Vec<TwoBitArray> = (0..layout.len())
        .map(|s| TwoBitArray::new(layout.size(s)))
        .collect();
    arrays[slot].claim(r, 1);
    let ex = Expander::new(game, layout);
    let mut layers = vec![1u64];
    loop {
        let depth = layers.len() as u64 - 1;
        let current = (depth % 3) as u8 + 1;
        let next = ((depth + 1) % 3) as u8 + 1;
        let found = AtomicU64::new(0);
        progress.phase(&format!("2-bit bfs depth {depth}"), layout.total_size());
        for s in 0..layout.len() {
            let size = layout.size(s);
            (0..size.div_ceil(1 << 12))
                .into_par_iter()
                .for_each_init(Vec::new, |buf, c| {
                    let (lo, hi) = (c << 12, ((c + 1) << 12).min(size));
                    let mut n = 0;
                    for i in lo..hi {
                        if arrays[s].get(i) == current {
                            ex.expand(s, i, buf, |ss, sr| {
                                if arrays[ss].claim(sr, next) {
                                    n += 1;
                                }
                            });
                        }
                    }
                    found.fetch_add(n, Ordering::Relaxed);
                    progress.inc(hi - lo);
                });
        }
        ex.check()?;
        match found.into_inner() {
            0 => break,
            n => layers.push(n),
        }
    }
    progress.finish();
    let per_slot = arrays
        .iter()
        .map(|a| {
            a.words
                .iter()
                .map(|w| {
                    // Count 2-bit entries that are not 0: OR the pair's bits into the low bit.
                    let w = w.load(Ordering::Relaxed);
                    u64::from(((w | (w >> 1)) & 0x5555_5555_5555_5555).count_ones())
                })
                .sum()
        })
        .collect();
    Ok(Some(TwoBitResult { layers, per_slot }))
}

/// One bit per index, rescanned until nothing changes: the number of reachable positions.
pub fn one_bit_reachability<G: Game>(
    game: &G,
    layout: &Layout,
    progress: &Progress,
) -> Result<Option<u64>> {
    let Some((bits, _start)) = start_bits(game, layout)? else {
        return Ok(None);
    };
    let ex = Expander::new(game, layout);
    let mut sweep = 0;
    loop {
        progress.phase(&format!("1-bit sweep {sweep}"), layout.total_size());
        let changed = AtomicU64::new(0);
        // Alternate the sweep direction: whichever way moves run between
        // partitions, a sweep in that direction carries a new index to the
        // end of the chain, so few sweeps are needed.
        let order: Vec<usize> = if sweep % 2 == 0 {
            (0..layout.len()).collect()
        } else {
            (0..layout.len()).rev().collect()
        };
        for s in order {
            let words = bits[s].word_count();
            (0..words)
                .into_par_iter()
                .for_each_init(Vec::new, |buf, w| {
                    let mut word = bits[s].word(w);
                    let mut n = 0;
                    while word != 0 {
                        let i = (w as u64) * 64 + u64::from(word.trailing_zeros());
                        word &= word - 1;
                        ex.expand(s, i, buf, |ss, sr| {
                            if bits[ss].set(sr) {
                                n += 1;
                            }
                        });
                    }
                    changed.fetch_add(n, Ordering::Relaxed);
                });
        }
        ex.check()?;
        sweep += 1;
        if changed.into_inner() == 0 {
            break;
        }
    }
    progress.finish();
    Ok(Some(bits.iter().map(AtomicBitSet::count).sum()))
}
