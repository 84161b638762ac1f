//! One-bit breadth-first searches for puzzles whose structure gives the BFS
//! layer for free, so that one bit per index is enough (Edelkamp, "BDDs for Minimal Perfect Hashing" and Edelkamp and Sulewski, "Parallel State Space Search on the GPU").
//!
//! - [`partition_layer_bfs`]: every move leads from one partition to one
//!   fixed next partition (a move that always removes one piece), so BFS
//!   layer `d` is exactly the reachable part of the `d`-th partition visited.
//!   Only the current and the next partition's bits are held at once.
//! - [`one_bit_bfs`]: Edelkamp and Sulewski's "Parallel State Space Search on the GPU" one-bit BFS for games with a move-alternation
//!   property (Def. 10): every index has a side, every move changes it
//!   (e.g. the colour of a moving blank's cell on a chessboard). Bits are
//!   cumulative; at level `l` every set index on the side of level `l - 1` is
//!   expanded, and the newly set bits are layer `l` (Edelkamp and Sulewski, "Parallel State Space Search on the GPU" Theorem 6).
//!   Indices are expanded several times; no second bit is needed.
//!
//! Both read one side (or partition) while writing only the other, so the
//! result never depends on thread count or timing.

use super::bfs::{start_index, Expander};
use super::bitset::AtomicBitSet;
use super::{Progress, Reachable};
use crate::game::Game;
use crate::game::Layout;
use crate::value::{PartitionId, Rank};
use crate::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// 64-bit words per parallel work item.
const WORDS_PER_TASK: usize = 1 << 10;

/// Layer sizes of a search in which each layer is one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionLayers {
    /// Positions first reached at each depth (depth 0: the start).
    pub layers: Vec<u64>,
    /// The partition holding each layer.
    pub partitions: Vec<PartitionId>,
}

impl PartitionLayers {
    /// All positions found.
    pub fn total(&self) -> u64 {
        self.layers.iter().sum()
    }
}

/// Calls `f(scratch, index)` for every set bit of `bits`, in parallel over
/// blocks of words, with one `init()` scratch value per task.
pub(super) fn for_each_set<S, I, F>(bits: &AtomicBitSet, progress: &Progress, init: I, f: F)
where
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, u64) + Sync,
{
    let words = bits.word_count();
    (0..words.div_ceil(WORDS_PER_TASK))
        .into_par_iter()
        .for_each_init(init, |scratch, task| {
            let lo = task * WORDS_PER_TASK;
            for w in lo..(lo + WORDS_PER_TASK).min(words) {
                let mut word = bits.word(w);
                while word != 0 {
                    let i = (w as u64) * 64 + u64::from(word.trailing_zeros());
                    word &= word - 1;
                    f(scratch, i);
                }
            }
            let hi = ((lo + WORDS_PER_TASK).min(words) as u64 * 64).min(bits.len());
            progress.inc(hi - lo as u64 * 64);
        });
}

/// One-bit BFS in which each layer is one partition: the start's partition,
/// then the partition every move from there leads to, and so on.
///
/// Stops when a layer is empty or after `max_depth` moves. Fails with a
/// contract error if the moves from one layer reach two different partitions
/// or stay in their own. `None` if the game has no start position.
pub fn partition_layer_bfs<G: Game>(
    game: &G,
    layout: &Layout,
    max_depth: Option<usize>,
    progress: &Progress,
) -> Result<Option<PartitionLayers>> {
    let Some((slot, r)) = start_index(game, layout)? else {
        return Ok(None);
    };
    let p = layout.order()[slot];
    let mut current = (slot, AtomicBitSet::new(layout.size(slot)));
    current.1.set(r);
    let mut out = PartitionLayers {
        layers: vec![1],
        partitions: vec![p],
    };
    let ex = Expander::new(game, layout);
    while max_depth.is_none_or(|m| out.layers.len() <= m) {
        let (cur_slot, cur_bits) = &current;
        let name = game.partition_name(layout.order()[*cur_slot]);
        progress.phase(&format!("1-bit bfs {name}"), cur_bits.len());
        let next: OnceLock<(usize, AtomicBitSet)> = OnceLock::new();
        for_each_set(cur_bits, progress, Vec::new, |buf, i| {
            ex.expand(*cur_slot, i, buf, |ss, sr| {
                let sp = layout.order()[ss];
                let (ns, bits) = next.get_or_init(|| (ss, AtomicBitSet::new(layout.size(ss))));
                if ss == *cur_slot {
                    ex.fail(format!("a move from partition {sp} stays in it; layers need a new partition"));
                } else if ss != *ns {
                    ex.fail(format!(
                        "moves from partition {} reach both {} and {sp}; one layer must lead to one partition",
                        layout.order()[*cur_slot],
                        layout.order()[*ns]
                    ));
                } else {
                    bits.set(sr);
                }
            });
        });
        ex.check()?;
        let Some((ns, bits)) = next.into_inner() else {
            break;
        };
        let n = bits.count();
        if n == 0 {
            break;
        }
        out.layers.push(n);
        out.partitions.push(layout.order()[ns]);
        current = (ns, bits);
    }
    progress.finish();
    Ok(Some(out))
}

/// Seed 002's one-bit BFS (Algorithm 4) for games with a move-alternation
/// property: `side(p, r)` is the side of index `r` of partition `p`, and every
/// move must change it. Gives the reachable set and its BFS layers.
/// `None` if the game has no start position.
pub fn one_bit_bfs<G, F>(
    game: &G,
    layout: &Layout,
    side: F,
    progress: &Progress,
) -> Result<Option<Reachable>>
where
    G: Game,
    F: Fn(PartitionId, Rank) -> bool + Sync,
{
    let Some((slot, r)) = start_index(game, layout)? else {
        return Ok(None);
    };
    let p = layout.order()[slot];
    let bits: Vec<AtomicBitSet> = (0..layout.len())
        .map(|s| AtomicBitSet::new(layout.size(s)))
        .collect();
    bits[slot].set(r);
    let start_side = side(p, Rank(r));
    let ex = Expander::new(game, layout);
    let mut layers = vec![1u64];
    loop {
        let level = layers.len();
        // Level `level` expands everything found so far on the side of level - 1.
        let expand_side = start_side ^ (level % 2 == 0);
        progress.phase(&format!("1-bit bfs level {level}"), layout.total_size());
        let found = AtomicU64::new(0);
        for s in 0..layout.len() {
            let part = layout.order()[s];
            for_each_set(&bits[s], progress, Vec::new, |buf, i| {
                if side(part, Rank(i)) != expand_side {
                    return;
                }
                let mut n = 0;
                ex.expand(s, i, buf, |ss, sr| {
                let sp = layout.order()[ss];
                    if side(sp, Rank(sr)) == expand_side {
                        ex.fail(format!(
                            "a move from ({part}, {i}) to ({sp}, {sr}) keeps its side; one-bit BFS needs every move to change it"
                        ));
                    } else if bits[ss].set(sr) {
                        n += 1;
                    }
                });
                if n > 0 {
                    found.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
        ex.check()?;
        match found.into_inner() {
            0 => break,
            n => layers.push(n),
        }
    }
    progress.finish();
    Ok(Some(Reachable {
        bits,
        layers,
        depth_seconds: Vec::new(),
        slot_seconds: Vec::new(),
    }))
}
