//! Forward search of a game whose partitions are all [`Forward::Layer`] or
//! [`Forward::Stop`] (Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" phase I BFS): one bit per index and no
//! frontier lists. Every position of a `Layer(d)` partition is first reached
//! at depth `d`, so depth `d` is expanded by scanning the set bits of the
//! `Layer(d)` partitions once, marking successors in the `Layer(d + 1)` and
//! `Stop` partitions; `Stop` partitions are counted, never expanded.
//!
//! Each depth reads only `Layer(d)` bits and writes only other partitions'
//! bits, and counts are taken between depths, so the result never depends on
//! thread count or timing, nor on whether a game's kernels expanded a partition.

use super::bfs::{start_index, Expander, Reachable};
use super::bitset::AtomicBitSet;
use super::layered::for_each_set;
use super::Progress;
use crate::game::{Forward, ForwardTargets, Game, Layout, PartitionKernels};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::Ordering;

/// Each slot's [`Forward`] when `game` is to be searched layer by layer: every
/// partition `Layer` or `Stop`, at least one `Layer`. `None` when the game is
/// for the general BFS (no `Layer` partition); a contract error when `Layer`
/// partitions stand beside `Expand` ones, which no search serves: the general
/// BFS would solve the `Layer` partitions whole, against what they promise.
pub fn layered_forwards<G: Game>(game: &G, layout: &Layout) -> Result<Option<Vec<Forward>>> {
    let forwards: Vec<Forward> = layout.order().iter().map(|&p| game.forward(p)).collect();
    let layer = forwards.iter().position(|f| matches!(f, Forward::Layer(_)));
    let expand = forwards.iter().position(|f| *f == Forward::Expand);
    match (layer, expand) {
        (None, _) => Ok(None),
        (Some(_), None) => Ok(Some(forwards)),
        (Some(l), Some(e)) => Err(Error::GameContract {
            game: game.info().id.to_string(),
            message: format!(
                "partition {} is {:?} but partition {} is Forward::Expand: a game with Layer \
                 partitions must mark every other partition Stop",
                layout.order()[l],
                forwards[l],
                layout.order()[e]
            ),
        }),
    }
}

/// The forward search of a game whose partitions are all [`Forward::Layer`] or
/// [`Forward::Stop`] (see [`layered_forwards`]): the reached bits of every
/// partition slot and the positions first reached at each depth (depth 0:
/// the start, which must lie in a `Layer(0)` partition; a `Stop` position
/// first marked while depth `d` is expanded counts at depth `d + 1`).
///
/// `kernels`, when given, are offered each `Layer` partition first
/// ([`PartitionKernels::expand`]); the generic expansion takes the ones they
/// decline. A move from `Layer(d)` to anything but a `Layer(d + 1)` or `Stop`
/// partition is a contract error naming both partitions. `None` if the game
/// has no start position.
pub fn layered_search<G: Game>(
    game: &G,
    layout: &Layout,
    kernels: Option<&dyn PartitionKernels>,
    progress: &Progress,
) -> Result<Option<Reachable>> {
    let contract = |message: String| Error::GameContract {
        game: game.info().id.to_string(),
        message,
    };
    let Some(forwards) = layered_forwards(game, layout)? else {
        return Err(Error::NotAvailable(format!(
            "{} has no Forward::Layer partition: search it with the general BFS",
            game.info().id
        )));
    };
    let Some((start, r)) = start_index(game, layout)? else {
        return Ok(None);
    };
    let order = layout.order();
    if forwards[start] != Forward::Layer(0) {
        return Err(contract(format!(
            "the start position lies in partition {} ({:?}), not in a Layer(0) partition",
            order[start], forwards[start]
        )));
    }
    let bits: Vec<AtomicBitSet> = (0..layout.len())
        .map(|s| AtomicBitSet::new(layout.size(s)))
        .collect();
    bits[start].set(r);
    let deepest = forwards
        .iter()
        .filter_map(|f| match f {
            Forward::Layer(d) => Some(*d),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let ex = Expander::new(game, layout);
    let mut layers = vec![1u64];
    let mut depth_seconds = Vec::new();
    let mut slot_seconds = vec![0.0; layout.len()];
    for d in 0..=deepest {
        let started = std::time::Instant::now();
        let current: Vec<usize> = (0..layout.len())
            .filter(|&s| {
                forwards[s] == Forward::Layer(d)
                    && bits[s]
                        .atomic_words()
                        .par_iter()
                        .any(|w| w.load(Ordering::Relaxed) != 0)
            })
            .collect();
        if current.is_empty() {
            break;
        }
        // Where depth d's moves may lead; the next layer's partitions are
        // still empty, the Stop partitions hold what earlier depths marked.
        let targets: Vec<usize> = (0..layout.len())
            .filter(|&s| forwards[s] == Forward::Layer(d + 1) || forwards[s] == Forward::Stop)
            .collect();
        // On all cores: the Stop partitions can be most of the index.
        let marked = |targets: &[usize]| -> u64 {
            targets
                .iter()
                .map(|&t| {
                    bits[t]
                        .atomic_words()
                        .par_iter()
                        .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
                        .sum::<u64>()
                })
                .sum()
        };
        // Only depth d's expansion sets Layer(d + 1) bits: before it, just the
        // Stop partitions hold any (one scan less of the next layer).
        let stops: Vec<usize> = targets
            .iter()
            .copied()
            .filter(|&t| forwards[t] == Forward::Stop)
            .collect();
        let before = marked(&stops);
        for &s in &current {
            let slot_started = std::time::Instant::now();
            let p = order[s];
            progress.phase(
                &format!("layer {d} {}", game.partition_name(p)),
                bits[s].len(),
            );
            let by_kernels = kernels.and_then(|k| {
                // Nobody sets this partition's bits while it is expanded.
                let reached: Vec<u64> = bits[s]
                    .atomic_words()
                    .par_iter()
                    .map(|w| w.load(Ordering::Relaxed))
                    .collect();
                let next = ForwardTargets::new(
                    targets.iter().map(|&t| (order[t], bits[t].atomic_words())),
                );
                k.expand(p, &reached, &next)
            });
            match by_kernels {
                Some(done) => done?,
                None => {
                    for_each_set(&bits[s], progress, Vec::new, |buf, i| {
                        ex.expand(s, i, buf, |ss, sr| match forwards[ss] {
                            Forward::Stop => {
                                bits[ss].set(sr);
                            }
                            Forward::Layer(e) if e == d + 1 => {
                                bits[ss].set(sr);
                            }
                            f => ex.fail(format!(
                                "a move from partition {p} (Layer({d})) reaches partition {} \
                                 ({f:?}): moves from layer {d} must lead to a Layer({}) or Stop partition",
                                order[ss],
                                d + 1
                            )),
                        });
                    });
                    ex.check()?;
                }
            }
            slot_seconds[s] = slot_started.elapsed().as_secs_f64();
        }
        depth_seconds.push(started.elapsed().as_secs_f64());
        match marked(&targets) - before {
            0 => break,
            n => layers.push(n),
        }
    }
    progress.finish();
    Ok(Some(Reachable {
        bits,
        layers,
        depth_seconds,
        slot_seconds,
    }))
}
