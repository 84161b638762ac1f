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
//! - `checkers_stream_expand` (the streamed path's chunks) through the
//!   device's stager against its twin ([`stream::expand_twin`]), and the
//!   twin against [`crate::game::expand_chunk_on_cpu`] (the game's rules),
//!   on a range of the largest partition and of a few drawn at random: a
//!   first scan over random input bytes, then a pass over its output with a
//!   random third of the pending positions decided, with values and
//!   without.
//!
//! On [`Device::Cpu`](crate::game::Device) the twin stands in for the device
//! (a dry run of the check itself, without a GPU).

use std::collections::HashMap;
use std::time::Instant;

use rayon::prelude::*;

use super::super::stream::{self, StreamBuckets};
use super::super::twin::{self, CheckersTables, NONE};
use super::super::Checkers;
use super::{CheckersKernels, Solver};
use crate::game::stream_check::{
    answered_row, chunks_difference, copy_job, noisy_jobs, pass_jobs, run_chunks,
};
use crate::game::{
    expand_chunk_on_cpu, ChunkExpander, DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow,
    Game, Layout, PartitionKernels, StreamTargets,
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
    report.rows.extend(stream_rows(k, opts, &mut rng)?);
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

/// Partitions of the streamed comparison: the largest and some drawn at random.
const STREAM_PARTITIONS: usize = 4;

/// The most indices of one chunk in the streamed comparison.
const STREAM_MAX_CHUNK: u64 = 1 << 16;

/// Targets of the partition at `slot` of `layout`: every partition up to it
/// in the build's order gets buckets of `lookup_chunk` indices.
fn stream_targets(
    layout: &Layout,
    slot: usize,
    lookup_chunk: u64,
    reached: Option<std::sync::Arc<[u64]>>,
    max_chunk: u64,
) -> StreamTargets {
    let order = (0..=slot).map(|q| (layout.order()[q], layout.size(q)));
    StreamTargets {
        reached,
        ..StreamTargets::laid_out(order, layout.order()[slot], lookup_chunk, max_chunk)
    }
}

/// The streamed path's rows (module documentation).
fn stream_rows(
    k: &CheckersKernels,
    opts: &DeviceCheckOptions,
    rng: &mut SplitMix64,
) -> Result<Vec<DeviceCheckRow>> {
    let game = k.game();
    let layout = Layout::new(game)?;
    let Some(largest) = (0..layout.len()).max_by_key(|&q| (layout.size(q), std::cmp::Reverse(q)))
    else {
        return Ok(Vec::new());
    };
    let mut slots = vec![largest];
    slots.extend((1..STREAM_PARTITIONS).map(|_| rng.below(layout.len() as u64) as usize));
    let max_chunk = (1u64 << (opts.work_log2.clamp(6, 40) - 6)).clamp(1 << 10, STREAM_MAX_CHUNK);
    let mut rows = Vec::new();
    for (i, slot) in slots.into_iter().enumerate() {
        let p = layout.order()[slot];
        let size = layout.size(slot);
        let lookup_chunk = 1000 + rng.below(30_000);
        // Builds of checkers solve every index; the kernel honours reached
        // bits all the same, checked on every other partition.
        let reached: Option<std::sync::Arc<[u64]>> = (i % 2 == 1).then(|| {
            (0..size.div_ceil(64))
                .map(|_| rng.next_u64() | rng.next_u64())
                .collect()
        });
        let targets = stream_targets(&layout, slot, lookup_chunk, reached, max_chunk);
        let t = CheckersTables::new(game, p)?;
        let buckets = StreamBuckets::of(&t, &targets);
        let len = (1u64 << opts.work_log2.min(40).saturating_sub(4))
            .clamp(5 * max_chunk + 4_321, 1 << 22)
            .min(size);
        let lo = rng.below(size - len + 1) / 64 * 64;
        let hi = (lo + len).min(size);
        let n = hi - lo;
        let target = game.partition_name(p);
        let mut device = match device_expander(k, &targets) {
            Ok(d) => d,
            Err(e) => {
                rows.push(
                    DeviceCheckRow::new("stream expand", target, n)
                        .matched(false, format!("no expander: {e}")),
                );
                continue;
            }
        };
        let chunk = match &device {
            Some(ex) => max_chunk.min(ex.max_chunk()).min(ex.max_expanding()),
            None => max_chunk,
        }
        .max(64);
        let seed = rng.next_u64();
        let mut jobs = noisy_jobs(lo, hi, chunk, seed);
        let mut bare = Vec::new();
        for what in ["first scan", "pass", "pass without values"] {
            let inputs = std::mem::take(&mut jobs);
            let (want, _) = timed(|| {
                inputs
                    .iter()
                    .map(|j| expand_chunk_on_cpu(game, &targets, copy_job(j)))
                    .collect::<Result<Vec<_>>>()
            })?;
            let (mine, cs) = timed(|| {
                inputs
                    .iter()
                    .map(|j| stream::expand_twin(game, &t, &buckets, &targets, copy_job(j)))
                    .collect::<Result<Vec<_>>>()
            })?;
            let requests: usize = want.iter().map(|d| d.requests.len()).sum();
            let row =
                DeviceCheckRow::new(format!("stream expand: {what}"), target.clone(), n).cpu(n, cs);
            let twin_diff = chunks_difference(&want, &mine, targets.low_bits)
                .map(|d| format!("twin against the rules: {d}"));
            // The same pass answered on the device, after it.
            let answered_jobs: Option<Vec<_>> =
                (what == "pass" && device.is_some()).then(|| inputs.iter().map(copy_job).collect());
            let (row, device_diff) = match device.as_mut() {
                None => (row, None),
                Some(ex) => match timed(|| run_chunks(ex.as_mut(), inputs)) {
                    Err(e) => (row, Some(format!("device: {e}"))),
                    Ok((got, gs)) => (
                        row.gpu(n, gs),
                        chunks_difference(&mine, &got, targets.low_bits)
                            .map(|d| format!("device against the twin: {d}")),
                    ),
                },
            };
            let against = if device.is_some() {
                "device = twin = rules"
            } else {
                "twin = rules (no device)"
            };
            let diff = twin_diff.or(device_diff);
            rows.push(row.matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!(
                        "indices {lo}..{hi} in chunks of <= {chunk}, lookup chunk {lookup_chunk}, {} buckets{}: values, flags, {requests} requests (sorted) {against}, grouped by bucket",
                        targets.buckets,
                        if targets.reached.is_some() { ", random reached bits" } else { "" },
                    )
                }),
            ));
            if let (Some(jobs), Some(ex)) = (answered_jobs, device.as_mut()) {
                let row = DeviceCheckRow::new(
                    "stream expand: pass answered on the device",
                    target.clone(),
                    n,
                );
                rows.push(answered_row(
                    ex.as_mut(),
                    &targets,
                    jobs,
                    &want,
                    seed ^ 4,
                    row,
                )?);
            }
            match what {
                "first scan" => (jobs, bare) = pass_jobs(want, seed ^ 3),
                _ => jobs = std::mem::take(&mut bare),
            }
        }
    }
    Ok(rows)
}

/// The device's streamed expander of `targets.partition`, or `None` on the
/// CPU (the twin stands in).
fn device_expander(
    k: &CheckersKernels,
    targets: &StreamTargets,
) -> Result<Option<Box<dyn ChunkExpander>>> {
    match &k.solver {
        Solver::Twin => Ok(None),
        #[cfg(feature = "cuda")]
        Solver::Cuda(_) => k.expander(targets, 1 << 30).transpose(),
    }
}
