//! `tbforge bench gpu checkers`: the kernels against their CPU twins.
//! - `checkers_successors` (lists) on fresh random ranks of random
//!   partitions of the game: the device's successor lists (partition id and
//!   rank of each, in order) against the twin's, and the twin's against the
//!   game's own rules ([`rules::successors`](super::super::rules::successors)
//!   and the game's rank);
//! - `checkers_successors` (checksum) over the first 2^`work_log2` ranks of
//!   the game's largest partition on both, for the rates (positions per
//!   second of unrank, move generation and ranking of every successor);
//! - every partition of the game solved in order by `checkers_first_scan`
//!   and the passes, both kinds (`checkers_pass_listed` over successor lists
//!   from `checkers_list_pending` / `checkers_fill_targets`, and
//!   `checkers_pass`, which generates the moves each time), and by the twin
//!   from the same earlier values, bytes compared (partitions above `cpu_max_size` on the device only, above
//!   `solve_max_size` not at all, with everything after them that needs
//!   them). One row per number of pieces. (The twin against the generic
//!   solver is tests/checkers_kernels.rs: `game` may not call `solve`.)
//!
//! On [`Device::Cpu`](crate::game::Device) the twin stands in for the device
//! (a dry run of the check itself, without a GPU).

use std::collections::HashMap;
use std::time::Instant;

use rayon::prelude::*;

use super::super::twin::{self, CheckersTables, NONE};
use super::super::Checkers;
use super::{CheckersKernels, Solver};
use crate::game::{
    DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, Game, Layout, PartitionKernels,
};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Rank, Value};
use crate::Result;

/// Partitions the successor lists are drawn from.
const LIST_PARTITIONS: usize = 64;

/// Successor lists: (count, first pairs) per rank.
type Lists = Vec<twin::SuccessorList>;

/// Runs `f`, with its seconds.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let t = Instant::now();
    let x = f()?;
    Ok((x, t.elapsed().as_secs_f64()))
}

impl CheckersKernels {
    fn device_lists(&self, t: &CheckersTables, ranks: &[u64]) -> Result<Lists> {
        match &self.solver {
            Solver::Twin => Ok(twin::successors_lists(t, ranks)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => gpu.successors_lists(t, ranks),
        }
    }

    /// (checksum, successors, seconds).
    fn device_checksum(&self, t: &CheckersTables, n: u64) -> Result<(u64, u64, f64)> {
        match &self.solver {
            Solver::Twin => {
                let ((sum, count), secs) = timed(|| Ok(twin::successors_checksum(t, 0, n)))?;
                Ok((sum, count, secs))
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => gpu.successors_checksum(t, 0, n),
        }
    }
}

/// The successors of `r` of partition `p` by the game's rules, as the
/// kernels list them.
fn rules_list(game: &Checkers, p: PartitionId, r: u64) -> (u32, Vec<(u32, u64)>) {
    let Some(pos) = game.unrank(p, Rank(r)) else {
        return (0, Vec::new());
    };
    let mut out = Vec::new();
    game.successors(&pos, &mut out);
    let list = out
        .iter()
        .take(twin::MAX_SUCC)
        .map(|(_, next)| {
            let (q, rank) = game.rank(next);
            if game.part(q).is_some() {
                (q.0, rank.0)
            } else {
                (NONE, u64::MAX)
            }
        })
        .collect();
    (out.len() as u32, list)
}

fn lists_difference(
    game: &Checkers,
    p: PartitionId,
    ranks: &[u64],
    want: &Lists,
    got: &Lists,
) -> Option<String> {
    let i = (0..ranks.len()).find(|&i| want.get(i) != got.get(i))?;
    Some(format!(
        "partition {} rank {}: {:?} against {:?}",
        game.partition_name(p),
        ranks[i],
        want.get(i),
        got.get(i)
    ))
}

/// The check (module documentation).
pub fn device_check(k: &CheckersKernels, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
    let mut report = DeviceCheckReport::new(k.name(), opts);
    let mut rng = SplitMix64::new(opts.seed);
    report.rows.push(list_row(k, opts, &mut rng)?);
    if let Some(row) = throughput_row(k, opts)? {
        report.rows.push(row);
    }
    report.rows.extend(solve_rows(k, opts)?);
    Ok(report)
}

fn list_row(
    k: &CheckersKernels,
    opts: &DeviceCheckOptions,
    rng: &mut SplitMix64,
) -> Result<DeviceCheckRow> {
    let game = k.game();
    let parts = game.partitions();
    let picks = LIST_PARTITIONS.min(parts.len());
    let per = (opts.samples / picks.max(1)).max(1);
    let (mut positions, mut gpu_s, mut cpu_s) = (0u64, 0.0, 0.0);
    let mut difference = None;
    for _ in 0..picks {
        let p = parts[rng.below(parts.len() as u64) as usize];
        let t = CheckersTables::new(game, p)?;
        let ranks: Vec<u64> = (0..per).map(|_| rng.below(t.size)).collect();
        let (got, g) = timed(|| k.device_lists(&t, &ranks))?;
        let (mine, c) = timed(|| Ok(twin::successors_lists(&t, &ranks)))?;
        let rules: Lists = ranks.par_iter().map(|&r| rules_list(game, p, r)).collect();
        positions += ranks.len() as u64;
        gpu_s += g;
        cpu_s += c;
        if difference.is_none() {
            difference = lists_difference(game, p, &ranks, &mine, &got)
                .map(|d| format!("device against twin: {d}"))
                .or_else(|| {
                    lists_difference(game, p, &ranks, &rules, &mine)
                        .map(|d| format!("rules against twin: {d}"))
                });
        }
    }
    let detail = match &difference {
        None => format!(
            "successor lists (partition, rank, in order) of {positions} random positions of \
             {picks} partitions: device = twin = rules"
        ),
        Some(d) => d.clone(),
    };
    Ok(DeviceCheckRow::new(
        "checkers_successors (lists)",
        format!("{picks} partitions"),
        positions,
    )
    .cpu(positions, cpu_s)
    .gpu(positions, gpu_s)
    .matched(difference.is_none(), detail))
}

fn throughput_row(
    k: &CheckersKernels,
    opts: &DeviceCheckOptions,
) -> Result<Option<DeviceCheckRow>> {
    let game = k.game();
    let Some(&p) = game
        .partitions()
        .iter()
        .max_by_key(|&&p| (game.partition_size(p), std::cmp::Reverse(p.0)))
    else {
        return Ok(None);
    };
    let t = CheckersTables::new(game, p)?;
    let n = t.size.min(1u64 << opts.work_log2.min(40));
    let (sum, count, g) = k.device_checksum(&t, n)?;
    let ((want, want_count), c) = timed(|| Ok(twin::successors_checksum(&t, 0, n)))?;
    let ok = sum == want && count == want_count;
    let detail = if ok {
        format!("checksums of every successor's (partition, rank) equal; {count} successors")
    } else {
        format!(
            "checksum {sum:#x} ({count} successors) against the twin's {want:#x} ({want_count})"
        )
    };
    Ok(Some(
        DeviceCheckRow::new("checkers_successors (checksum)", game.partition_name(p), n)
            .cpu(n, c)
            .gpu(n, g)
            .matched(ok, detail),
    ))
}

/// Totals of one piece count's partitions.
#[derive(Default)]
struct Group {
    partitions: u64,
    positions: u64,
    compared: u64,
    cpu_positions: u64,
    cpu_s: f64,
    gpu_s: f64,
    skipped: u64,
    /// Long distances found with bytes up to [`LOW_CEILING`].
    long: u64,
    difference: Option<String>,
}

/// A partition solved with bytes up to [`LOW_CEILING`]: values and long distances.
type LowSolve = (Vec<u8>, Vec<(u64, u32)>);

/// The byte ceiling of the check's second solve: low enough that four
/// pieces have distances beyond it.
const LOW_CEILING: u32 = 9;

fn first_difference(want: &[u8], got: &[u8]) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} values against {}", got.len(), want.len()));
    }
    let i = want.iter().zip(got).position(|(a, b)| a != b)?;
    Some(format!("rank {i}: byte {} against {}", got[i], want[i]))
}

fn solve_rows(k: &CheckersKernels, opts: &DeviceCheckOptions) -> Result<Vec<DeviceCheckRow>> {
    let game = k.game();
    let layout = Layout::new(game)?;
    let mut done: HashMap<PartitionId, Vec<u8>> = HashMap::new();
    let mut done_low: HashMap<PartitionId, LowSolve> = HashMap::new();
    let mut groups: std::collections::BTreeMap<u32, Group> = Default::default();
    for (slot, &p) in layout.order().iter().enumerate() {
        let size = layout.size(slot);
        let pieces = game.part(p).map_or(0, |x| x.first.slice().pieces());
        let g = groups.entry(pieces).or_default();
        g.partitions += 1;
        let mut t = CheckersTables::new(game, p)?;
        let ready = t.deps.iter().all(|d| done.contains_key(d));
        if size > opts.solve_max_size || !ready {
            g.skipped += 1;
            continue;
        }
        for j in 0..t.deps.len() {
            if !done.contains_key(&t.deps[j]) {
                t.mark_missing(j);
            }
        }
        let deps: Vec<&[u8]> = t.deps.iter().map(|d| done[d].as_slice()).collect();
        let (dev, gs) = timed(|| k.solve_tables(&t, &deps, &[]))?;
        g.positions += size;
        g.gpu_s += dev.device_seconds.unwrap_or(gs);
        if size <= opts.cpu_max_size {
            let (mine, cs) = timed(|| twin::solve(game, &t, &deps, &[], Value::MAX_DISTANCE))?;
            g.cpu_s += cs;
            g.cpu_positions += size;
            g.compared += 1;
            if g.difference.is_none() {
                g.difference = first_difference(&mine.values, &dev.values)
                    .map(|d| format!("{}: device against twin: {d}", game.partition_name(p)));
            }
            // The passes that generate moves each time, where successor
            // lists would not fit, against the same twin.
            #[cfg(feature = "cuda")]
            if let Solver::Cuda(gpu) = &k.solver {
                let (again, _) = gpu.solve(game, &t, &deps, &[], false, Value::MAX_DISTANCE)?;
                if g.difference.is_none() {
                    g.difference = first_difference(&mine.values, &again.values).map(|d| {
                        format!(
                            "{}: device without successor lists against twin: {d}",
                            game.partition_name(p)
                        )
                    });
                }
            }
        }
        // Again with bytes holding distances up to LOW_CEILING only, so that
        // small databases take the long-distance path (dependencies' long
        // distances included): the device against the twin, and both
        // against the full-byte solve once widened.
        let low_ready = t.deps.iter().all(|d| done_low.contains_key(d));
        if size <= opts.cpu_max_size && low_ready {
            let deps: Vec<&[u8]> = t.deps.iter().map(|d| done_low[d].0.as_slice()).collect();
            let deps_long: Vec<&[(u64, u32)]> =
                t.deps.iter().map(|d| done_low[d].1.as_slice()).collect();
            let mine = twin::solve(game, &t, &deps, &deps_long, LOW_CEILING)?;
            let theirs = match &k.solver {
                #[cfg(feature = "cuda")]
                Solver::Cuda(gpu) => gpu.solve(game, &t, &deps, &deps_long, true, LOW_CEILING)?.0,
                _ => mine.clone(),
            };
            g.long += mine.long.len() as u64;
            if g.difference.is_none() {
                let name = game.partition_name(p);
                g.difference = if (&mine.values, &mine.long) != (&theirs.values, &theirs.long) {
                    Some(format!(
                        "{name}: device against twin with bytes up to {LOW_CEILING} plies: {}",
                        first_difference(&mine.values, &theirs.values)
                            .unwrap_or_else(|| "the long distances differ".into())
                    ))
                } else if twin::widen(&mine.values, &mine.long)
                    != twin::widen(&dev.values, dev.long.entries())
                {
                    Some(format!(
                        "{name}: the solve with bytes up to {LOW_CEILING} plies, widened, is not the full-byte solve"
                    ))
                } else {
                    None
                };
            }
            done_low.insert(p, (mine.values, mine.long));
        }
        done.insert(p, dev.values);
    }
    Ok(groups
        .into_iter()
        .map(|(pieces, g)| {
            let mut row = DeviceCheckRow::new(
                "checkers retro solve",
                format!(
                    "{pieces} piece{} ({} partition{})",
                    if pieces == 1 { "" } else { "s" },
                    g.partitions,
                    if g.partitions == 1 { "" } else { "s" }
                ),
                g.positions,
            )
            .gpu(g.positions, g.gpu_s);
            if g.cpu_positions > 0 {
                row = row.cpu(g.cpu_positions, g.cpu_s);
            }
            let detail = match &g.difference {
                Some(d) => d.clone(),
                None => format!(
                    "{} partitions byte for byte against the twin, {} on the device only, {} not \
                     solved; {} long distances with bytes up to {LOW_CEILING} plies, the same",
                    g.compared,
                    g.partitions - g.compared - g.skipped,
                    g.skipped,
                    g.long
                ),
            };
            if g.compared > 0 {
                row.matched(g.difference.is_none(), detail)
            } else {
                row.note(detail)
            }
        })
        .collect())
}
