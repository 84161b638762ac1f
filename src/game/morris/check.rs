//! `tbforge bench gpu morris`: every Morris kernel against its CPU twin on
//! fresh random inputs, throughput of both, and whole partitions solved by the
//! twin and by the device with their bytes compared (what the deleted
//! `tbforge-gpucheck` did, now behind [`PartitionKernels::device_check`]).
//!
//! With the kernels on [`Device::Cpu`](crate::game::Device) the twin stands
//! in for the device: the check then compares the twin with itself, which
//! exercises this code without a GPU (the CLI test runs it so).

use std::time::Instant;

use rayon::prelude::*;

use super::classes::HalfIndex;
use super::expand::{mix64, Expansion, MorrisPartition, Summary};
#[cfg(feature = "cuda")]
use super::kernels::TEAM_ALIGN;
use super::kernels::{
    dependencies, spec_of, MorrisKernels, Solver, EXPAND_KERNEL, GPU_TEAM_BLOCK_WORDS,
    SUMMARY_KERNEL, TWIN_TEAM_BLOCK,
};
use super::place::{self, PlaceSpec};
use super::rank24;
use super::retro::{self, CpuTwin, MorrisSolveSpec, SolveStats};
use super::twin::{self as cpu, RankCheck};
use super::{Morris, Part};
use crate::dist::{Team, ThreadTeam};
use crate::game::{
    DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, Game, PartitionKernels, SolvedPartitions,
};
use crate::game::{Layout, Status};
use crate::value::{PartitionId, Value};
use crate::{Error, Rank, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Partitions of the rank/unrank comparison: the largest, the smallest, the
/// edges of the count range (all one colour, a single piece).
const RANK_PARTS: [(u32, u32); 10] = [
    (7, 7),
    (9, 9),
    (3, 3),
    (12, 12),
    (3, 9),
    (9, 3),
    (8, 5),
    (0, 24),
    (24, 0),
    (1, 0),
];

/// Halves S(a, b) of the class index comparison: the largest, both flying
/// sides, the lost side, the many-representative and many-symmetric edges.
const CLASS_HALVES: [(u32, u32); 8] = [
    (9, 8),
    (8, 9),
    (9, 9),
    (3, 9),
    (3, 3),
    (2, 9),
    (4, 7),
    (6, 6),
];

/// Partitions of the per-position expansion comparison: sliding, flying
/// (3 pieces) on either side, and unequal counts both ways round.
const EXPAND_PARTS: [(u32, u32); 11] = [
    (7, 7),
    (9, 9),
    (3, 3),
    (3, 9),
    (9, 3),
    (8, 5),
    (5, 8),
    (4, 3),
    (3, 4),
    (6, 6),
    (9, 6),
];

/// Phase I layers of the placement comparison, (t, a, b) of Nine Men's
/// Morris (`pieces=9`): early placements (no capture yet), the middle game
/// with captures, and the last placement, whose successors are phase II's
/// `k1-k2` (both halves) and the lost `2-k`.
const PLACE_LAYERS: [(u32, u32, u32); 4] = [(6, 3, 3), (9, 4, 4), (17, 3, 4), (17, 2, 3)];

/// Runs `f`, returning its value and host-clock seconds.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed().as_secs_f64()))
}

/// The device side of the check: the GPU's kernels, or the twin in their place.
impl Solver {
    fn rank_check(&self, k1: u32, k2: u32, ranks: &[Rank]) -> Result<Vec<RankCheck>> {
        match self {
            Solver::Twin => cpu::rank_check(k1, k2, ranks),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.rank_check(k1, k2, ranks),
        }
    }

    fn class_check(&self, a: u32, b: u32, inputs: &[(u64, u32)]) -> Result<Vec<(u32, u32, u64)>> {
        match self {
            Solver::Twin => cpu::class_check(a, b, inputs),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.class_check(a, b, inputs),
        }
    }

    fn expand_ranks(&self, part: MorrisPartition, ranks: &[Rank]) -> Result<Vec<Expansion>> {
        match self {
            Solver::Twin => cpu::morris_expand_ranks(part, ranks),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.morris_expand_ranks(part, ranks),
        }
    }

    /// The summary and its seconds (device events around the kernel; the
    /// host clock for the twin).
    fn summary(&self, part: MorrisPartition, start: Rank, count: u64) -> Result<(Summary, f64)> {
        match self {
            Solver::Twin => timed(|| cpu::morris_summary(part, start, count)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                let r = g.morris_summary(part, start, count)?;
                Ok((r.value, r.seconds))
            }
        }
    }

    /// Per-position results of ranks `0..count` brought to the host and
    /// digested there, with the host-clock seconds of the whole stream.
    fn streamed(&self, part: MorrisPartition, count: u64, chunk: usize) -> Result<(Summary, f64)> {
        let mut host = Summary::default();
        let mut sink = |first: Rank, counts: &[u16], sums: &[u64]| -> Result<()> {
            let s = counts
                .par_iter()
                .zip(sums.par_iter())
                .enumerate()
                .fold(Summary::default, |mut s, (i, (&c, &x))| {
                    let e = Expansion {
                        successors: u32::from(c),
                        checksum: x,
                    };
                    s.add(first.0 + i as u64, e);
                    s
                })
                .reduce(Summary::default, Summary::merge);
            host = host.merge(s);
            Ok(())
        };
        let seconds = match self {
            Solver::Twin => {
                let t = Instant::now();
                let mut out = vec![Expansion::default(); chunk];
                let mut first = 0;
                while first < count {
                    let len = (count - first).min(chunk as u64) as usize;
                    cpu::morris_expand_range(part, Rank(first), &mut out[..len])?;
                    let counts: Vec<u16> = out[..len].iter().map(|e| e.successors as u16).collect();
                    let sums: Vec<u64> = out[..len].iter().map(|e| e.checksum).collect();
                    sink(Rank(first), &counts, &sums)?;
                    first += len as u64;
                }
                t.elapsed().as_secs_f64()
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                g.morris_expand_streamed(part, Rank(0), count, chunk, sink)?
                    .seconds
            }
        };
        Ok((host, seconds))
    }

    /// The values, the seconds of the whole call (host clock) and of the
    /// kernel alone (device events; the whole call's for the twin).
    fn place_solve(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        deps: [Option<&[u8]>; 2],
    ) -> Result<(Vec<u8>, f64, f64)> {
        let t = Instant::now();
        let (values, kernel) = match self {
            Solver::Twin => (place::solve(spec, reached, deps)?, None),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                let r = g.place_solve(spec, reached, deps)?;
                (r.value, Some(r.seconds))
            }
        };
        let call = t.elapsed().as_secs_f64();
        Ok((values, call, kernel.unwrap_or(call)))
    }

    /// The seconds of the whole call and of the kernel, as [`Self::place_solve`].
    fn place_expand(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        next: [Option<&[AtomicU64]>; 2],
    ) -> Result<(f64, f64)> {
        let t = Instant::now();
        let kernel = match self {
            Solver::Twin => {
                place::expand(spec, reached, next)?;
                None
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => Some(g.place_expand(spec, reached, next)?.seconds),
        };
        let call = t.elapsed().as_secs_f64();
        Ok((call, kernel.unwrap_or(call)))
    }

    fn merge_marks(
        &self,
        values: &[u8],
        marks: &[u32],
        theirs: &[u32],
        members: u32,
        rank: u32,
    ) -> Result<Vec<u32>> {
        match self {
            Solver::Twin => twin_merge(values, marks, theirs, members, rank),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                g.merge_marks_check(values, marks, theirs, GPU_TEAM_BLOCK_WORDS, members, rank)
            }
        }
    }

    fn solve(&self, spec: MorrisSolveSpec, deps: &[&[u8]]) -> Result<SolveStats<Vec<u8>>> {
        match self {
            Solver::Twin => CpuTwin::new(spec, deps.to_vec())?.solve(),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.morris_solve(spec, deps),
        }
    }
}

/// `n` random ranks below `size`, drawn from `seed` (which advances).
fn random_ranks(seed: &mut u64, size: u64, n: usize) -> Vec<Rank> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_add(1);
            Rank(mix64(*seed) % size)
        })
        .collect()
}

/// `None` when two result lists are equal, else where they first differ.
fn first_difference<T: PartialEq + std::fmt::Debug>(want: &[T], got: &[T]) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} results, the twin {}", got.len(), want.len()));
    }
    let i = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at {i}: twin {:?}, device {:?}",
        want[i], got[i]
    ))
}

/// The row of a rank/unrank comparison of `(kernel, target)` on `inputs`:
/// the twin's and the device's results (each timed) must be equal, and
/// `back(result, input)` must hold for every twin result (the rank came
/// back); the details name agreement or how many did not come back.
fn round_trip_row<I, T: PartialEq + std::fmt::Debug>(
    (kernel, target): (&str, String),
    inputs: &[I],
    (twin, device): (
        impl FnOnce(&[I]) -> Result<Vec<T>>,
        impl FnOnce(&[I]) -> Result<Vec<T>>,
    ),
    back: impl Fn(&T, &I) -> bool,
    (agree, lost): (&str, &str),
) -> Result<DeviceCheckRow> {
    let (want, cpu_seconds) = timed(|| twin(inputs))?;
    let (got, gpu_seconds) = timed(|| device(inputs))?;
    let not_back = want.iter().zip(inputs).filter(|(w, i)| !back(w, i)).count();
    let diff = first_difference(&want, &got);
    let n = want.len() as u64;
    let detail = match (&diff, not_back) {
        (None, 0) => format!("{n} {agree}"),
        (None, b) => format!("{b} {lost}"),
        (Some(d), _) => d.clone(),
    };
    Ok(DeviceCheckRow::new(kernel, target, n)
        .cpu(n, cpu_seconds)
        .gpu(n, gpu_seconds)
        .matched(diff.is_none() && not_back == 0, detail))
}

/// The whole check of `kernels` (see the module documentation).
pub fn device_check(
    kernels: &MorrisKernels,
    opts: &DeviceCheckOptions,
) -> Result<DeviceCheckReport> {
    let side = &kernels.solver;
    let mut report = DeviceCheckReport::new(kernels.name(), opts);
    let mut seed = opts.seed;

    // The class index's tables: built at start-up, on the CPU's cores.
    let (classes, seconds) = timed(|| Ok(HalfIndex::build_all_uncached()))?;
    report.rows.push(
        DeviceCheckRow::new("class tables", "max=9, all halves", classes)
            .cpu(classes, seconds)
            .note(format!(
                "{classes} classes indexed; tables built afresh on the CPU"
            )),
    );
    let samples = opts.samples.max(1);

    // Kernels against twins on fresh random inputs.
    for (k1, k2) in RANK_PARTS {
        let size = rank24::size(k1, k2).expect("every listed partition fits on 24 cells");
        let ranks = random_ranks(&mut seed, size, samples.min(size as usize * 4));
        report.rows.push(round_trip_row(
            ("tb_rank_check", format!("{k1}-{k2}")),
            &ranks,
            (
                |r: &[Rank]| cpu::rank_check(k1, k2, r),
                |r: &[Rank]| side.rank_check(k1, k2, r),
            ),
            |w, r| w.rank == r.0,
            (
                "random ranks: boards, swapped ranks and re-ranks equal",
                "ranks do not come back from their boards",
            ),
        )?);
    }
    for (a, b) in CLASS_HALVES {
        let size = HalfIndex::get(a, b).size();
        let inputs: Vec<(u64, u32)> = random_ranks(&mut seed, size, samples)
            .into_iter()
            .map(|r| {
                seed = seed.wrapping_add(1);
                (r.0, (mix64(seed) % 16) as u32)
            })
            .collect();
        report.rows.push(round_trip_row(
            ("class_rank_check", format!("S({a},{b})")),
            &inputs,
            (
                |i: &[(u64, u32)]| cpu::class_check(a, b, i),
                |i: &[(u64, u32)]| side.class_check(a, b, i),
            ),
            |w, i| w.2 == i.0,
            (
                "random classes under random symmetries: boards and ranks equal, every rank back",
                "classes do not rank back from a symmetric image",
            ),
        )?);
    }
    for (k1, k2) in EXPAND_PARTS {
        let part = MorrisPartition::new(k1, k2)?;
        let ranks = random_ranks(&mut seed, part.size(), samples);
        let (want, cs) = timed(|| cpu::morris_expand_ranks(part, &ranks))?;
        let (got, gs) = timed(|| side.expand_ranks(part, &ranks))?;
        let succ: u64 = want.iter().map(|e| u64::from(e.successors)).sum();
        let diff = first_difference(&want, &got);
        let n = ranks.len() as u64;
        report.rows.push(
            DeviceCheckRow::new(EXPAND_KERNEL, format!("{k1}-{k2}"), n)
                .cpu(n, cs)
                .gpu(n, gs)
                .matched(
                    diff.is_none(),
                    diff.unwrap_or_else(|| format!("{n} random ranks, {succ} successors")),
                ),
        );
    }

    // Throughput: the first 2^work_log2 ranks of 7-7 (GPU.md's probe), the
    // twin on all cores against the summary kernel; then the same ranks'
    // per-position results streamed to the host.
    let part = MorrisPartition::new(7, 7)?;
    let count = (1u64 << opts.work_log2.min(40)).min(part.size());
    if !matches!(side, Solver::Twin) {
        // Clocks and caches: the first launch is not timed.
        side.summary(part, Rank(0), count.min(1 << 22))?;
    }
    let (want, cs) = timed(|| cpu::morris_summary(part, Rank(0), count))?;
    let (got, gs) = side.summary(part, Rank(0), count)?;
    report.rows.push(
        DeviceCheckRow::new(SUMMARY_KERNEL, "7-7", count)
            .cpu(count, cs)
            .gpu(count, gs)
            .matched(
                got == want,
                format!(
                    "first {count} ranks: {} successors, digest {:016x} (device {:016x}); device events",
                    want.successors, want.digest, got.digest
                ),
            ),
    );
    let chunk = (1usize << 24).min(count as usize).max(1);
    let (streamed, ss) = side.streamed(part, count, chunk)?;
    report.rows.push(
        DeviceCheckRow::new(format!("{} streamed", EXPAND_KERNEL), "7-7", count)
            .cpu(count, cs)
            .gpu(count, ss)
            .matched(
                streamed == want,
                format!(
                    "per-position results to pinned host memory, 2 streams, chunks of {chunk}, digested on the host"
                ),
            ),
    );
    // Ranges that end inside a warp (lanes standing in past the end).
    for (k1, k2) in [(7, 7), (9, 9), (3, 9)] {
        let p = MorrisPartition::new(k1, k2)?;
        let start = Rank(12_345);
        let n = 1_000_003u64.min((1u64 << opts.work_log2.min(40)) | 3);
        let (want, cs) = timed(|| cpu::morris_summary(p, start, n))?;
        let (got, gs) = side.summary(p, start, n)?;
        report.rows.push(
            DeviceCheckRow::new(SUMMARY_KERNEL, format!("{k1}-{k2}"), n)
                .cpu(n, cs)
                .gpu(n, gs)
                .matched(
                    got == want,
                    format!("ranks {} + {n} (a partial warp at the end)", start.0),
                ),
        );
    }
    // Other partitions: the largest and flying, the device over a quarter of
    // the 7-7 workload, the twin over a 16th of that (both compared there).
    for (k1, k2) in [(9, 9), (8, 8), (3, 9)] {
        let p = MorrisPartition::new(k1, k2)?;
        let n = (count / 4).clamp(1, p.size());
        let m = (n / 16).max(1);
        let (_, gs) = side.summary(p, Rank(0), n)?;
        let (want, cs) = timed(|| cpu::morris_summary(p, Rank(0), m))?;
        let (got, _) = side.summary(p, Rank(0), m)?;
        report.rows.push(
            DeviceCheckRow::new(SUMMARY_KERNEL, format!("{k1}-{k2}"), n)
                .cpu(m, cs)
                .gpu(n, gs)
                .matched(
                    got == want,
                    format!("device over the first {n} ranks; compared over the first {m}"),
                ),
        );
    }

    merge_row(side, opts, &mut seed, &mut report)?;
    place_rows(side, opts, &mut seed, &mut report)?;
    place_chain_rows(side, opts, &mut seed, &mut report)?;
    solve_rows(kernels, side, opts, &mut report)?;
    stream_rows(kernels, opts, &mut seed, &mut report)?;
    Ok(report)
}

/// `retro_merge_marks` (a team's peer copies) against its twin: random
/// values (about half pending), random own marks and random bitmaps from
/// two other members, joined by member 1 of 3.
fn merge_row(
    side: &Solver,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    *seed = seed.wrapping_add(1);
    let s = mix64(*seed);
    let words = opts.samples.clamp(64, 1 << 22);
    let values: Vec<u8> = (0..words as u64 * 32)
        .map(|r| {
            if mix64(s ^ r) % 2 == 0 {
                retro::PENDING
            } else {
                3
            }
        })
        .collect();
    let marks: Vec<u32> = (0..words as u64)
        .map(|w| (mix64(s ^ 0x6d61726b ^ mix64(w)) & mix64(s ^ w)) as u32)
        .collect();
    let theirs: Vec<u32> = (0..2 * words as u64)
        .map(|w| mix64(s ^ 0x7468656972 ^ mix64(w)) as u32)
        .collect();
    let (want, cs) = timed(|| twin_merge(&values, &marks, &theirs, 3, 1))?;
    let (got, gs) = timed(|| side.merge_marks(&values, &marks, &theirs, 3, 1))?;
    let diff = first_difference(&want, &got);
    report.rows.push(
        DeviceCheckRow::new("retro_merge_marks", "random words", words as u64 * 32)
            .cpu(words as u64 * 32, cs)
            .gpu(words as u64 * 32, gs)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!("{words} words, two other members' marks joined by member 1 of 3")
                }),
            ),
    );
    Ok(())
}

fn twin_merge(
    values: &[u8],
    marks: &[u32],
    theirs: &[u32],
    members: u32,
    rank: u32,
) -> Result<Vec<u32>> {
    let mut out = marks.to_vec();
    retro::merge_marks(
        values,
        &mut out,
        theirs,
        GPU_TEAM_BLOCK_WORDS,
        members,
        rank,
    );
    Ok(out)
}

/// Random reached bits over `spec`'s partition, about one index in `one_in`
/// (each word drawn from `seed` and its number, so that threads agree).
fn random_reached(spec: &PlaceSpec, seed: u64, one_in: u64) -> Vec<u64> {
    let size = spec.size();
    (0..spec.words() as u64)
        .into_par_iter()
        .map(|w| {
            let mut word = 0u64;
            for bit in 0..64u64.min(size - w * 64) {
                if mix64(seed ^ mix64(w * 64 + bit)) % one_in == 0 {
                    word |= 1 << bit;
                }
            }
            word
        })
        .collect()
}

/// Random valid value bytes for a whole partition: draws and distances
/// 0..=58 (bytes 1..=60), drawn from `seed` and the index.
fn random_values(seed: u64, size: u64) -> Vec<u8> {
    (0..size)
        .into_par_iter()
        .map(|r| 1 + (mix64(seed ^ mix64(r)) % 60) as u8)
        .collect()
}

/// Fresh successor bits for each target of `spec`.
fn fresh_bits(spec: &PlaceSpec) -> [Vec<AtomicU64>; 2] {
    spec.targets().map(|t| {
        (0..t.map_or(0, |t| t.size.div_ceil(64)))
            .map(|_| AtomicU64::new(0))
            .collect()
    })
}

/// Kernels `place_solve` and `place_expand` against the twin on
/// [`PLACE_LAYERS`], with symmetry on and off: random reached bits (about
/// `4 * samples` positions a layer) and random target values. A layer whose
/// values and targets' values exceed 2^(work_log2 + 10) bytes is skipped
/// (named in a row). The device's seconds are the kernel's (device events);
/// the details give the whole call's, uploads and downloads included.
fn place_rows(
    side: &Solver,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let samples = opts.samples.max(1) as u64;
    let mut skipped = Vec::new();
    for symmetry in [true, false] {
        let game = Morris::whole(9, symmetry)?;
        for (t, a, b) in PLACE_LAYERS {
            let p = Morris::placement_partition(t, a, b);
            let spec = PlaceSpec::of(&game, p).ok_or_else(|| {
                Error::Cuda(format!(
                    "t{t:02}-{a}-{b} is not a placement layer of pieces=9"
                ))
            })?;
            let target = format!("{} sym {}", spec.name, if symmetry { "on" } else { "off" });
            let bytes = spec.size() + spec.targets().iter().flatten().map(|t| t.size).sum::<u64>();
            if bytes > 1 << (opts.work_log2.min(40) + 10) {
                skipped.push(target);
                continue;
            }
            *seed = seed.wrapping_add(1);
            let one_in = (spec.size() / (4 * samples)).max(2);
            let reached = random_reached(&spec, mix64(*seed), one_in);
            let n: u64 = reached.iter().map(|w| u64::from(w.count_ones())).sum();
            let deps: Vec<Option<Vec<u8>>> = spec
                .targets()
                .iter()
                .map(|t| {
                    *seed = seed.wrapping_add(1);
                    t.map(|t| random_values(mix64(*seed), t.size))
                })
                .collect();
            let deps = [deps[0].as_deref(), deps[1].as_deref()];
            let names: Vec<String> = spec
                .targets()
                .iter()
                .flatten()
                .map(|t| t.name.clone())
                .collect();
            let (want, cs) = timed(|| place::solve(&spec, &reached, deps))?;
            let (got, call, gs) = side.place_solve(&spec, &reached, deps)?;
            let diff = first_difference(&want, &got);
            report.rows.push(
                DeviceCheckRow::new("place_solve", target.clone(), n)
                    .cpu(n, cs)
                    .gpu(n, gs)
                    .matched(
                        diff.is_none(),
                        diff.unwrap_or_else(|| {
                            format!(
                                "{n} random reached of {}, random values of {}: bytes identical; \
                                 device: the kernel alone, {call:.4} s with copies",
                                spec.size(),
                                names.join(" and ")
                            )
                        }),
                    ),
            );
            let [wq, wc] = fresh_bits(&spec);
            let [gq, gc] = fresh_bits(&spec);
            let [q, c] = spec.targets().map(|t| t.is_some());
            let want_next = [q.then_some(&wq[..]), c.then_some(&wc[..])];
            let got_next = [q.then_some(&gq[..]), c.then_some(&gc[..])];
            let ((), cs) = timed(|| place::expand(&spec, &reached, want_next))?;
            let (call, gs) = side.place_expand(&spec, &reached, got_next)?;
            let load = |v: &[AtomicU64]| -> Vec<u64> {
                v.iter().map(|w| w.load(Ordering::Relaxed)).collect()
            };
            let (want, got) = (
                [load(&wq), load(&wc)].concat(),
                [load(&gq), load(&gc)].concat(),
            );
            let marked: u64 = want.iter().map(|w| u64::from(w.count_ones())).sum();
            let diff = first_difference(&want, &got);
            report.rows.push(
                DeviceCheckRow::new("place_expand", target, n)
                    .cpu(n, cs)
                    .gpu(n, gs)
                    .matched(
                        diff.is_none(),
                        diff.unwrap_or_else(|| {
                            format!(
                                "{n} random reached: {marked} successor bits in {}, identical; \
                                 device: the kernel alone, {call:.4} s with copies",
                                names.join(" and ")
                            )
                        }),
                    ),
            );
        }
    }
    if !skipped.is_empty() {
        report
            .rows
            .push(DeviceCheckRow::new("place_*", "skipped", 0).note(format!(
                "values of the layer and its targets over 2^(work_log2 + 10) bytes: {}",
                skipped.join(", ")
            )));
    }
    Ok(())
}

/// Phase I of the whole game end to end, as a build runs it, on the device
/// and by the twin: the forward search from the empty board layer by layer
/// (`place_expand`), then every layer solved backwards where reached
/// (`place_solve`), phase II/III's values random (the lost `2-k` all lost).
/// Each side runs on its own results; all bits and bytes are compared. The
/// pieces a side grow with work_log2: 3 below 20, 5 below 26, else 6 (104 M
/// positions reached with symmetry).
fn place_chain_rows(
    side: &Solver,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let n = match opts.work_log2 {
        0..20 => 3,
        20..26 => 5,
        _ => 6,
    };
    let game = Morris::whole(n, true)?;
    let layout = Layout::new(&game)?;
    let order = layout.order();
    let target = format!("pieces={n} sym on");
    let fresh = || -> Vec<Vec<AtomicU64>> {
        order
            .iter()
            .map(|&p| {
                (0..game.partition_size(p).div_ceil(64))
                    .map(|_| AtomicU64::new(0))
                    .collect()
            })
            .collect()
    };
    let load =
        |v: &[AtomicU64]| -> Vec<u64> { v.iter().map(|w| w.load(Ordering::Relaxed)).collect() };
    let slot_of = |p: PartitionId| {
        layout.slot(p).ok_or_else(|| {
            Error::Cuda(format!(
                "{} is not a partition of {target}",
                game.partition_name(p)
            ))
        })
    };
    let start = game
        .start()
        .expect("the whole game starts on the empty board");
    let (p0, r0) = game.rank(&start);
    let s0 = slot_of(p0)?;
    let (twin_bits, dev_bits) = (fresh(), fresh());
    for bits in [&twin_bits, &dev_bits] {
        bits[s0][(r0.0 / 64) as usize].fetch_or(1 << (r0.0 % 64), Ordering::Relaxed);
    }
    // Every placement partition, layer by layer.
    let layers: Vec<PlaceSpec> = (0..2 * n)
        .flat_map(|t| game.place_parts(t))
        .filter_map(|part| PlaceSpec::of(&game, part.id()))
        .collect();
    // The slots of a layer's targets (quiet, capture).
    let targets_of = |spec: &PlaceSpec| -> Result<[Option<usize>; 2]> {
        let [q, c] = spec.targets().map(|t| t.map(|t| slot_of(t.id)).transpose());
        Ok([q?, c?])
    };
    let (mut cs, mut gs, mut calls, mut positions) = (0.0, 0.0, 0.0, 0u64);
    for spec in &layers {
        let slot = slot_of(spec.id)?;
        let [q, c] = targets_of(spec)?;
        let reached = load(&twin_bits[slot]);
        positions += reached
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum::<u64>();
        let next = [q.map(|s| &twin_bits[s][..]), c.map(|s| &twin_bits[s][..])];
        let ((), t) = timed(|| place::expand(spec, &reached, next))?;
        cs += t;
        let reached = load(&dev_bits[slot]);
        let next = [q.map(|s| &dev_bits[s][..]), c.map(|s| &dev_bits[s][..])];
        let (call, kernel) = side.place_expand(spec, &reached, next)?;
        (gs, calls) = (gs + kernel, calls + call);
    }
    let differ = order
        .iter()
        .zip(twin_bits.iter().zip(&dev_bits))
        .find(|(_, (a, b))| load(a) != load(b))
        .map(|(p, _)| game.partition_name(*p));
    report.rows.push(
        DeviceCheckRow::new("place_expand chain", target.clone(), positions)
            .cpu(positions, cs)
            .gpu(positions, gs)
            .matched(
                differ.is_none(),
                differ.map_or_else(
                    || {
                        format!(
                            "forward search from the empty board, {} partitions in {} layers: \
                             every bit identical; device: kernels alone, {calls:.3} s with copies",
                            layers.len(),
                            2 * n
                        )
                    },
                    |p| format!("reached bits of {p} differ"),
                ),
            ),
    );
    // Backwards, phase II/III's values random.
    let lost = Value::at_distance(0).expect("distance 0 exists").to_byte();
    let mut twin_values: Vec<Option<Vec<u8>>> = vec![None; order.len()];
    for (slot, &p) in order.iter().enumerate() {
        *seed = seed.wrapping_add(1);
        let size = game.partition_size(p);
        twin_values[slot] = match Part::from_id(p) {
            Some(Part::Place { .. }) => None,
            Some(Part::Lost(_)) => Some(vec![lost; size as usize]),
            _ => Some(random_values(mix64(*seed), size)),
        };
    }
    let mut dev_values = twin_values.clone();
    let (mut cs, mut gs, mut calls, mut differ) = (0.0, 0.0, 0.0, None);
    for spec in layers.iter().rev() {
        let slot = slot_of(spec.id)?;
        let [q, c] = targets_of(spec)?;
        // A target's values: solved before (a later layer, or phase II/III).
        fn deps_of<'v>(
            values: &'v [Option<Vec<u8>>],
            slots: [Option<usize>; 2],
            name: &str,
        ) -> Result<[Option<&'v [u8]>; 2]> {
            let [dq, dc] = slots.map(|s| {
                s.map(|s| {
                    values[s].as_deref().ok_or_else(|| {
                        Error::Cuda(format!("{name}: a target is not solved before it"))
                    })
                })
                .transpose()
            });
            Ok([dq?, dc?])
        }
        let reached = load(&twin_bits[slot]);
        let deps = deps_of(&twin_values, [q, c], &spec.name)?;
        let (want, t) = timed(|| place::solve(spec, &reached, deps))?;
        cs += t;
        let reached = load(&dev_bits[slot]);
        let (got, call, kernel) =
            side.place_solve(spec, &reached, deps_of(&dev_values, [q, c], &spec.name)?)?;
        (gs, calls) = (gs + kernel, calls + call);
        if differ.is_none() && got != want {
            differ = Some(spec.name.clone());
        }
        twin_values[slot] = Some(want);
        dev_values[slot] = Some(got);
    }
    let start_value = twin_values[s0].as_ref().map_or(0, |v| v[r0.0 as usize]);
    report.rows.push(
        DeviceCheckRow::new("place_solve chain", target, positions)
            .cpu(positions, cs)
            .gpu(positions, gs)
            .matched(
                differ.is_none(),
                differ.map_or_else(
                    || {
                        format!(
                            "every layer solved backwards where reached (phase II/III values random): \
                             bytes identical, start byte {start_value}; device: kernels alone, \
                             {calls:.3} s with copies"
                        )
                    },
                    |p| format!("values of {p} differ"),
                ),
            ),
    );
    Ok(())
}

/// Every partition of the game (up to the size cap) solved in build order by
/// the device and by the twin, bytes compared; the device's values feed the
/// later partitions. The lost `2-k` partitions (no kernel) are filled here:
/// every legal position in them is lost on the spot.
fn solve_rows(
    kernels: &MorrisKernels,
    side: &Solver,
    opts: &DeviceCheckOptions,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let game = &kernels.game;
    let layout = Layout::new(game)?;
    let order = layout.order();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let (mut total_n, mut total_c, mut total_g, mut all_same) = (0u64, 0.0, 0.0, true);
    let mut compared = 0;
    let mut skipped = Vec::new();
    let mut placing = 0;
    // The largest partition compared: the team row's (its slot, spec, the
    // twin's bytes, the device's seconds alone).
    let mut largest: Option<(usize, MorrisSolveSpec, Vec<u8>, f64)> = None;
    for slot in 0..layout.len() {
        let p = order[slot];
        let name = game.partition_name(p);
        let size = layout.size(slot);
        if size > opts.solve_max_size {
            skipped.push(name);
            continue;
        }
        if let Some(Part::Place { .. }) = Part::from_id(p) {
            placing += 1;
            continue;
        }
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let Some(spec) = spec_of(game, p) else {
            solved[slot] = Some(lost_partition(game, p, size)?);
            continue;
        };
        let before = SolvedPartitions::from_slots(&order[..slot], &deps);
        let Ok(d) = dependencies(&spec, &before) else {
            skipped.push(format!("{name} (a dependency was skipped)"));
            continue;
        };
        let (dev, gs) = timed(|| side.solve(spec, &d))?;
        let row = DeviceCheckRow::new("retro solve", name.clone(), size).gpu(size, gs);
        let row = if size <= opts.cpu_max_size {
            let (twin, cs) = timed(|| CpuTwin::new(spec, d.clone())?.solve())?;
            let diff = first_difference(&twin.value, &dev.value);
            total_n += size;
            compared += 1;
            total_c += cs;
            total_g += gs;
            all_same &= diff.is_none();
            if largest.as_ref().is_none_or(|l| spec.size() > l.1.size()) {
                largest = Some((slot, spec, twin.value, gs));
            }
            row.cpu(size, cs).matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!(
                        "bytes identical; {} passes, {} pending after the first scan",
                        dev.passes, dev.first_pending
                    )
                }),
            )
        } else {
            row.note(format!("device only ({} passes)", dev.passes))
        };
        report.rows.push(row);
        solved[slot] = Some(dev.value);
    }
    if compared > 1 {
        report.rows.push(
            DeviceCheckRow::new("retro solve", format!("all {compared} compared"), total_n)
                .cpu(total_n, total_c)
                .gpu(total_n, total_g)
                .matched(all_same, "sum of the compared partitions"),
        );
    }
    if let Some((slot, spec, twin, alone)) = largest {
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let before = SolvedPartitions::from_slots(&order[..slot], &deps);
        let deps = dependencies(&spec, &before)?;
        for peer in [true, false] {
            report
                .rows
                .push(team_row(side, spec, &deps, &twin, alone, peer)?);
        }
        #[cfg(feature = "cuda")]
        if let Solver::Cuda(g) = side {
            report.rows.push(bounded_row(g, spec, &deps, &twin, alone)?);
        }
    }
    if placing > 0 {
        report.rows.push(
            DeviceCheckRow::new("retro solve", "phase I", 0).note(format!(
                "{placing} placement layers not solved here: they are solved where the forward search reaches them (the place_* rows check their kernels)"
            )),
        );
    }
    if !skipped.is_empty() {
        report.rows.push(
            DeviceCheckRow::new("retro solve", "skipped", 0).note(format!(
                "over --solve-max-size {}: {}",
                opts.solve_max_size,
                skipped.join(", ")
            )),
        );
    }
    Ok(())
}

/// Partition `spec` solved by a team of two (`solve_team`: two members on
/// the one device here, each with its own kernels, exchanging as two GPUs
/// would: peer copies where `peer`, else through host memory as MPI ranks)
/// against the twin's bytes `twin`; `alone` is the device's seconds for the
/// whole partition. On one device the members share it, so the time checks
/// the exchange's cost, not the speed-up of two GPUs.
fn team_row(
    side: &Solver,
    spec: MorrisSolveSpec,
    deps: &[&[u8]],
    twin: &[u8],
    alone: f64,
    peer: bool,
) -> Result<DeviceCheckRow> {
    let team = if peer {
        ThreadTeam::new(2)
    } else {
        ThreadTeam::apart(2)
    };
    #[cfg(feature = "cuda")]
    let second = match side {
        Solver::Cuda(g) => Some(super::cuda::MorrisCuda::new(g.device().clone())?),
        Solver::Twin => None,
    };
    let solve = |rank: usize| -> Result<Vec<u8>> {
        let member = &team[rank];
        let result = match side {
            Solver::Twin => CpuTwin::new(spec, deps.to_vec())?.solve_team(member, TWIN_TEAM_BLOCK),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => match (rank, &second) {
                (1, Some(g1)) => g1.morris_solve_team(spec, deps, member, TEAM_ALIGN),
                _ => g.morris_solve_team(spec, deps, member, TEAM_ALIGN),
            },
        };
        if let Err(e) = &result {
            member.abort(&e.to_string());
        }
        Ok(result?.value)
    };
    let t0 = Instant::now();
    let got: Vec<Result<Vec<u8>>> = std::thread::scope(|s| {
        let solve = &solve;
        let handles: Vec<_> = (0..2).map(|r| s.spawn(move || solve(r))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a team member panicked"))
            .collect()
    });
    let together = t0.elapsed().as_secs_f64();
    let mut diff = None;
    for (rank, g) in got.into_iter().enumerate() {
        if let Some(d) = first_difference(twin, &g?) {
            diff.get_or_insert(format!("member {rank}: {d}"));
        }
    }
    let moved = team[0].stats().read();
    let size = spec.size();
    Ok(DeviceCheckRow::new(
        if peer {
            "retro solve, team of 2, peer copies"
        } else {
            "retro solve, team of 2, through host"
        },
        spec.name(),
        size,
    )
    .gpu(size, together)
    .matched(
        diff.is_none(),
        diff.unwrap_or_else(|| {
            format!(
                "both members' bytes identical to the twin's; 1 member {alone:.3} s, \
                         2 members on one device {together:.3} s ({:.2}x); member 0 sent {} \
                         bytes in {} collectives",
                alone / together.max(1e-9),
                moved.bytes_sent,
                moved.calls
            )
        }),
    ))
}

/// Partition `spec` solved by the device with its candidate and frontier
/// lists held to 1/512 of its size, as on a card without room for whole
/// lists: each pass lists its candidates in parts and a frontier larger
/// than a list goes through host memory. Its bytes must equal the twin's
/// `twin`, and the parts must have run; `alone` is the device's seconds
/// with whole lists.
#[cfg(feature = "cuda")]
fn bounded_row(
    gpu: &super::cuda::MorrisCuda,
    spec: MorrisSolveSpec,
    deps: &[&[u8]],
    twin: &[u8],
    alone: f64,
) -> Result<DeviceCheckRow> {
    let size = spec.size();
    let (got, seconds) = timed(|| gpu.morris_solve_bounded(spec, deps, (size / 512).max(1024)))?;
    let diff = first_difference(twin, &got.value);
    let lists = got.lists;
    let detail = match &diff {
        Some(d) => d.clone(),
        None if lists.parts == 0 => format!(
            "bytes identical, but lists of {} entries held every pending position: no parts ran",
            lists.entries
        ),
        None => format!(
            "bytes identical; lists of {} entries: {} parts in {} passes, {} frontier entries through host memory; {seconds:.3} s (whole lists {alone:.3} s)",
            lists.entries, lists.parts, got.passes, lists.host_frontier
        ),
    };
    Ok(
        DeviceCheckRow::new("retro solve, bounded lists", spec.name(), size)
            .gpu(size, seconds)
            .matched(diff.is_none() && lists.parts > 0, detail),
    )
}

/// A partition where the side to move has two pieces: each legal index is a
/// loss at distance 0, as the generic solver finds by the game's status.
fn lost_partition(game: &super::Morris, p: PartitionId, size: u64) -> Result<Vec<u8>> {
    use rayon::prelude::*;
    let lost = Value::at_distance(0).expect("distance 0 exists").to_byte();
    (0..size)
        .into_par_iter()
        .map(|r| match game.unrank(p, Rank(r)) {
            None => Ok(Value::ILLEGAL.to_byte()),
            Some(pos) if game.status(&pos) == Status::Lost => Ok(lost),
            Some(_) => Err(Error::Cuda(format!(
                "{} index {r}: a position with two pieces to move is not lost",
                game.partition_name(p)
            ))),
        })
        .collect()
}

/// Partitions of the streamed path's comparison (Nine Men's Morris,
/// `pieces=9`), by symmetry: moves with a flying half (4-3), many pieces
/// (9-9), without symmetry (5-4, boards ranked by the multinomial), the
/// lost 2-5, and placement layers with reached bits: early (t06-3-3),
/// captures into the next layer (t09-4-4), the last placement into phase
/// II's both halves and the lost 2-k (t17-3-4, t17-2-3).
const STREAM_PARTS: [(&str, bool); 8] = [
    ("4-3", true),
    ("9-9", true),
    ("5-4", false),
    ("2-5", true),
    ("t06-3-3", true),
    ("t09-4-4", true),
    ("t17-3-4", true),
    ("t17-2-3", false),
];

/// The most indices of one chunk in the streamed comparison.
const STREAM_MAX_CHUNK: u64 = 1 << 16;

/// Indices per chunk of the streamed comparison: 2^(work_log2 - 6), from
/// 1,024 to [`STREAM_MAX_CHUNK`] (a dry run stays small, a real one
/// exercises full chunks).
fn stream_chunk(opts: &DeviceCheckOptions) -> u64 {
    (1u64 << (opts.work_log2.clamp(6, 40) - 6)).clamp(1 << 10, STREAM_MAX_CHUNK)
}

/// Targets of partition `p` of `game`: every partition up to `p` in the
/// game's order gets buckets of `lookup_chunk` indices.
fn stream_targets(
    game: &Morris,
    p: PartitionId,
    lookup_chunk: u64,
    reached: Option<std::sync::Arc<[u64]>>,
    max_chunk: u64,
) -> crate::game::StreamTargets {
    let order = game
        .partitions()
        .into_iter()
        .map(|q| (q, game.partition_size(q)));
    crate::game::StreamTargets {
        reached,
        ..crate::game::StreamTargets::laid_out(order, p, lookup_chunk, max_chunk)
    }
}

/// The streamed path's chunk expansion ([`crate::game::ChunkExpander`]:
/// the stager with `morris_stream_expand` on a GPU, the CPU expander in its
/// place on the CPU) against [`crate::game::expand_chunk_on_cpu`], the
/// reference, on [`STREAM_PARTS`]: a range of indices of each (crossing
/// the halves' boundary of a `k1-k2`; 2^(work_log2 - 4) within bounds, in
/// chunks of [`stream_chunk`] with a partial last one), a random lookup chunk and
/// bucket bases for every partition up to it, random input bytes (a first
/// scan overwrites them), random reached bits on placement layers. First
/// the first scan, then a pass over its output with a random third of the
/// pending positions decided.
fn stream_rows(
    kernels: &MorrisKernels,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    use crate::game::stream_check::{
        answered_row, chunks_difference, copy_job, noisy_jobs, pass_jobs, run_chunks,
    };
    use crate::game::{expand_chunk_on_cpu, CpuExpander, STREAM_PENDING};
    let on_cpu = matches!(kernels.solver, Solver::Twin);
    for (name, symmetry) in STREAM_PARTS {
        let game = Morris::whole(9, symmetry)?;
        let Some(p) = game
            .partitions()
            .into_iter()
            .find(|&q| game.partition_name(q) == name)
        else {
            return Err(Error::Cuda(format!(
                "{name} is not a partition of pieces=9"
            )));
        };
        let size = game.partition_size(p);
        let target = format!("{name} sym {}", if symmetry { "on" } else { "off" });
        *seed = seed.wrapping_add(1);
        let s = mix64(*seed);
        let lookup_chunk = 1000 + s % 30_000;
        let reached: Option<std::sync::Arc<[u64]>> =
            PlaceSpec::of(&game, p).map(|spec| random_reached(&spec, mix64(s ^ 1), 3).into());
        let max_chunk = stream_chunk(opts);
        let targets = stream_targets(&game, p, lookup_chunk, reached, max_chunk);
        // Five chunks and a partial one at least, 2^22 indices at most.
        let len = (1u64 << opts.work_log2.min(40).saturating_sub(4))
            .clamp(5 * max_chunk + 4_321, 1 << 22)
            .min(size);
        // Across the halves' boundary where there are two.
        let second = match super::stream::StreamDesc::of(&game, &targets) {
            Some(d) if d.halves.len() > 1 => d.halves[1].base,
            _ => 0,
        };
        let lo = (second.saturating_sub(len / 2) / 64 * 64).min((size - len) / 64 * 64);
        let hi = (lo + len).min(size);
        let n = hi - lo;
        let expander = if on_cpu {
            Some(Ok(Box::new(CpuExpander::new(&game, targets.clone()))
                as Box<dyn crate::game::ChunkExpander + '_>))
        } else {
            kernels
                .for_game(&game)
                .expander(&targets, 1 << 30)
                .map(|r| r.map(|b| b as Box<dyn crate::game::ChunkExpander + '_>))
        };
        let mut ex = match expander {
            Some(Ok(ex)) => ex,
            Some(Err(e)) => {
                report.rows.push(
                    DeviceCheckRow::new("stream expand", target, n)
                        .matched(false, format!("no expander: {e}")),
                );
                continue;
            }
            None => {
                report.rows.push(
                    DeviceCheckRow::new("stream expand", target, n)
                        .note("the kernels decline this partition (expanded on the CPU)"),
                );
                continue;
            }
        };
        // Jobs a first scan may expand whole: within the requests' room too.
        let chunk = max_chunk
            .min(ex.max_chunk())
            .min(ex.max_expanding())
            .max(64);
        let jobs = noisy_jobs(lo, hi, chunk, mix64(s ^ 2));
        let chunks = jobs.len();
        let (mut next_jobs, mut bare_jobs) = (Vec::new(), Vec::new());
        // The first scan, a pass, the same pass sent without values.
        for (first_scan, bare) in [(true, false), (false, false), (false, true)] {
            let what = match (first_scan, bare) {
                (true, _) => "stream expand: first scan",
                (false, false) => "stream expand: pass",
                (false, true) => "stream expand: pass without values",
            };
            let jobs: Vec<_> = if first_scan {
                jobs.iter().map(copy_job).collect()
            } else if bare {
                std::mem::take(&mut bare_jobs)
            } else {
                std::mem::take(&mut next_jobs)
            };
            let (want, cs) = timed(|| {
                jobs.iter()
                    .map(|j| expand_chunk_on_cpu(&game, &targets, copy_job(j)))
                    .collect::<Result<Vec<_>>>()
            })?;
            let requests: usize = want.iter().map(|d| d.requests.len()).sum();
            // Without values, the positions that expand are told by their flags alone.
            let pending = if bare {
                jobs.iter()
                    .map(|j| crate::game::ChunkJob::count_expanding(&j.flags))
                    .sum()
            } else {
                want.iter()
                    .flat_map(|d| d.values.iter())
                    .filter(|&&v| v == STREAM_PENDING)
                    .count()
            };
            // The same pass answered on the device, after it.
            let answered_jobs: Option<Vec<_>> =
                (!first_scan && !bare).then(|| jobs.iter().map(copy_job).collect());
            let got = timed(|| run_chunks(ex.as_mut(), jobs));
            let row = DeviceCheckRow::new(what, target.clone(), n).cpu(n, cs);
            let row = match got {
                Err(e) => row.matched(false, format!("device: {e}")),
                Ok((got, gs)) => {
                    let diff = chunks_difference(&want, &got, targets.low_bits);
                    let mut t = crate::game::ChunkTiming::default();
                    for d in &got {
                        t.add(&d.timing);
                    }
                    let device = if on_cpu {
                        "; CPU expander in the device's place".to_string()
                    } else {
                        format!(
                            "; device events: kernels {:.4} s ({:.1} M pos/s), copies in {:.4} s, back {:.4} s ({} MB)",
                            t.kernel_seconds,
                            n as f64 / t.kernel_seconds.max(1e-9) / 1e6,
                            t.h2d_seconds,
                            t.d2h_seconds,
                            t.d2h_bytes >> 20
                        )
                    };
                    row.gpu(n, gs).matched(
                        diff.is_none(),
                        diff.unwrap_or_else(|| {
                            format!(
                                "indices {lo}..{hi} in {chunks} chunks of <= {chunk}, lookup chunk {lookup_chunk}, {} buckets, {pending} pending: values, flags, {requests} requests (sorted) equal, grouped by bucket{device}",
                                targets.buckets,
                            )
                        }),
                    )
                }
            };
            report.rows.push(row);
            if let Some(jobs) = answered_jobs {
                let row = DeviceCheckRow::new(
                    "stream expand: pass answered on the device",
                    target.clone(),
                    n,
                );
                report.rows.push(answered_row(
                    ex.as_mut(),
                    &targets,
                    jobs,
                    &want,
                    mix64(s ^ 4),
                    row,
                )?);
            }
            if first_scan {
                (next_jobs, bare_jobs) = pass_jobs(want, mix64(s ^ 3));
            }
        }
    }
    Ok(())
}
