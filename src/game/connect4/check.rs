//! `tbforge bench gpu connect4`: the kernels against their CPU twins.
//! - `connect4_solve` on fresh random indices of the full board of large
//!   boards (no successors), and on random compact inputs of a ply whose
//!   successor ply is small: random legal reached indices, ply `n + 1`'s bits
//!   their successors plus random legal extras, synthetic values;
//! - `connect4_expand` on the same random reached bits;
//! - the game's own board whole: the forward search from the empty board ply
//!   by ply on the device and by the twin (bits compared), then every ply
//!   solved compact by the device (each from the device's previous ply, kept
//!   there, as a build does) and by the twin from the same input (bytes
//!   compared). Boards of more than `cpu_max_size` positions are run on the
//!   device only and sampled against the twin;
//! - the ply of most reached positions (among those of at most
//!   `cpu_max_size` indices) solved by a team of two members
//!   ([`PartitionKernels::solve_team`], a [`ThreadTeam`] of two solvers on
//!   the same device, each its slice of the ply's words, pieces exchanged),
//!   against the twin's unsplit solve: both members' bytes compared, both
//!   times given;
//! - the streamed path ([`stream_rows`]): `connect4_stream_expand` through
//!   the generic stager against `game::expand_chunk_on_cpu` (the game's
//!   rules) on early, middle and late plies of the game's board and of 5x4
//!   and 5x5, first scans and passes, chunk for chunk (values, flags,
//!   sorted requests, grouping by bucket), a refused first scan, and a
//!   window in chunks as large as a build's for the rates.
//!
//! On [`Device::Cpu`](crate::game::Device) the twin stands in for the device
//! (a dry run of the check itself, without a GPU; for the streamed path,
//! [`stream::expand_twin`], the kernel's twin over its own tables).
//!
//! Declared from `kernels.rs` (a child of it, to see the solver it checks).

use crate::dist::{Team, ThreadTeam};
use crate::hash::SplitMix64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::super::stream;
use super::super::twin::{self, Connect4SolveSpec, Connect4Tables, Connect4Twin, Kind};
use super::super::Connect4;
use super::{Connect4Kernels, Solver};
use crate::game::{
    expand_chunk_on_cpu, ChunkDone, ChunkExpander, ChunkJob, DeviceCheckOptions, DeviceCheckReport,
    DeviceCheckRow, Game, KernelSolve, Layout, OwnedRequests, PartitionKernels, ReachedValues,
    ReachedView, Requests, SolvedPartitions, StreamTargets, STREAM_INTERNAL, STREAM_ONGOING,
    STREAM_PENDING,
};
use crate::value::PartitionId;
use crate::{Rank, Result};

/// Boards whose random indices are checked besides the game's own: the
/// standard board and larger ones (wider tables, longer columns).
const LARGE_BOARDS: [(u32, u32); 5] = [(7, 6), (8, 7), (9, 6), (4, 15), (6, 7)];

/// The kernel names in rows.
const KERNEL: &str = "connect4_solve";
const EXPAND: &str = "connect4_expand";

/// One ply solved: values of its reached indices, host seconds, whether ply
/// n + 1 was still on the device.
struct Solved {
    values: Vec<u8>,
    seconds: f64,
    reused: bool,
}

/// The device side of the check: the GPU's kernels, or the twin in their place.
impl Solver {
    fn solve(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<ReachedView<'_>>,
    ) -> Result<Solved> {
        match self {
            Solver::Twin => {
                let t = Instant::now();
                let values = Connect4Twin::new(spec, next)?.solve(reached)?;
                Ok(Solved {
                    values,
                    seconds: t.elapsed().as_secs_f64(),
                    reused: false,
                })
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                let r = g.solve(spec, reached, next)?;
                Ok(Solved {
                    values: r.values,
                    seconds: r.seconds,
                    reused: r.reused_next,
                })
            }
        }
    }

    /// The bytes of `ranks` and the OR of their failure bits.
    fn values_of(
        &self,
        spec: Connect4SolveSpec,
        next: Option<ReachedView<'_>>,
        ranks: &[Rank],
    ) -> Result<(Vec<u8>, u32)> {
        match self {
            Solver::Twin => twin_values(&Connect4Twin::new(spec, next)?, ranks),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.values_of(spec, next, ranks),
        }
    }

    /// One step of the forward search; host seconds.
    fn expand(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<&[AtomicU64]>,
    ) -> Result<f64> {
        match self {
            Solver::Twin => timed(|| twin::expand(spec, reached, next)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                let t = Instant::now();
                g.expand(spec, reached, next)?;
                Ok(t.elapsed().as_secs_f64())
            }
        }
    }

    fn forget(&self) {
        #[cfg(feature = "cuda")]
        if let Solver::Cuda(g) = self {
            g.forget();
        }
    }
}

/// Seconds `f` took, if it succeeded.
fn timed(f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed().as_secs_f64())
}

/// The twin's bytes of `ranks` and the OR of their failure bits.
fn twin_values(twin: &Connect4Twin<'_>, ranks: &[Rank]) -> Result<(Vec<u8>, u32)> {
    let (values, bits): (Vec<u8>, Vec<u32>) = ranks.par_iter().map(|r| twin.value_of(r.0)).unzip();
    Ok((values, bits.into_iter().fold(0, |a, b| a | b)))
}

/// One SplitMix64 step from `z`: random indices and synthetic values.
fn mix(z: u64) -> u64 {
    SplitMix64::new(z).next_u64()
}

/// `n` random indices below `size`, drawn from `seed` (which advances).
fn random_ranks(seed: &mut u64, size: u64, n: usize) -> Vec<Rank> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_add(1);
            Rank(mix(*seed) % size)
        })
        .collect()
}

/// Bits of up to `n` random legal indices of ply `ply` (illegal draws are
/// dropped), set in `bits` (zero or partly set), drawn from `seed`.
fn add_random_legal(tables: &Connect4Tables, ply: u32, seed: &mut u64, n: usize, bits: &mut [u64]) {
    for r in random_ranks(seed, tables.size(ply), n) {
        if tables.kind(ply, r.0) != Kind::Illegal {
            bits[(r.0 / 64) as usize] |= 1 << (r.0 % 64);
        }
    }
}

/// Zeroed bits of `size` indices, for a search to set.
fn atomic_bits(size: u64) -> Vec<AtomicU64> {
    (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

fn load(bits: &[AtomicU64]) -> Vec<u64> {
    bits.par_iter().map(|w| w.load(Ordering::Relaxed)).collect()
}

fn popcount(bits: &[u64]) -> u64 {
    bits.par_iter().map(|w| u64::from(w.count_ones())).sum()
}

/// `None` when the two byte lists are equal, else where they first differ.
fn first_difference(want: &[u8], got: &[u8]) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} values, the twin {}", got.len(), want.len()));
    }
    let i = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at slot {i}: twin {}, device {}",
        want[i], got[i]
    ))
}

/// `None` when the two bit lists are equal, else the first differing word.
fn first_bits_difference(want: &[u64], got: &[u64]) -> Option<String> {
    let i = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at word {i}: twin {:#x}, device {:#x}",
        want[i], got[i]
    ))
}

/// Counts of illegal, draw, loss and win bytes.
fn histogram(values: &[u8]) -> String {
    let mut hist = [0u64; 4];
    for &v in values {
        hist[match v {
            0 => 0,
            1 => 1,
            v if v % 2 == 0 => 2,
            _ => 3,
        }] += 1;
    }
    format!(
        "illegal {} draw {} loss {} win {}",
        hist[0], hist[1], hist[2], hist[3]
    )
}

/// The whole check of `kernels` (see the module documentation).
pub fn device_check(
    kernels: &Connect4Kernels,
    opts: &DeviceCheckOptions,
) -> Result<DeviceCheckReport> {
    let side = &kernels.solver;
    let mut report = DeviceCheckReport::new(kernels.name(), opts);
    let mut seed = opts.seed;
    let own = (kernels.game.width(), kernels.game.height());
    let mut boards = vec![own];
    boards.extend(LARGE_BOARDS.iter().filter(|b| **b != own));
    for (w, h) in boards {
        full_board_row(side, w, h, opts, &mut seed, &mut report)?;
        random_compact_rows(side, w, h, opts, &mut seed, &mut report)?;
    }
    board_rows(kernels, side, opts, &mut seed, &mut report)?;
    stream_rows(kernels, opts, &mut seed, &mut report)?;
    Ok(report)
}

/// Random indices of the full board of `w`x`h` (no successors), over a rank
/// list: the board's index is too large for bits.
fn full_board_row(
    side: &Solver,
    w: u32,
    h: u32,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let spec = Connect4SolveSpec::new(w, h, w * h)?;
    let twin = Connect4Twin::new(spec, None)?;
    let size = twin.size();
    let ranks = random_ranks(seed, size, opts.samples.max(1));
    let t = Instant::now();
    let (want, want_bits) = twin_values(&twin, &ranks)?;
    let cs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (got, bits) = side.values_of(spec, None, &ranks)?;
    let gs = t.elapsed().as_secs_f64();
    let diff = first_difference(&want, &got).or_else(|| {
        (bits != want_bits).then(|| format!("failure bits: twin {want_bits}, device {bits}"))
    });
    let k = ranks.len() as u64;
    report.rows.push(
        DeviceCheckRow::new(KERNEL, format!("{w}x{h} {}", spec.name()), k)
            .cpu(k, cs)
            .gpu(k, gs)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!("{k} random of {size} indices ({})", histogram(&want))
                }),
            ),
    );
    Ok(())
}

/// The largest ply `n` of `w`x`h` whose successor ply has at most
/// 2^min(work_log2, 26) indices: random legal reached indices of it,
/// expanded (`connect4_expand`), then solved compact (`connect4_solve`)
/// from ply `n + 1` = their successors plus random legal extras, with
/// synthetic values 1..=60.
fn random_compact_rows(
    side: &Solver,
    w: u32,
    h: u32,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let tables = Connect4Tables::new(Connect4SolveSpec::new(w, h, 0)?)?;
    let cap = 1u64 << opts.work_log2.min(26);
    let Some(n) = (0..w * h).rev().find(|&n| tables.size(n + 1) <= cap) else {
        return Ok(());
    };
    let spec = Connect4SolveSpec::new(w, h, n)?;
    let target = format!("{w}x{h} {}", spec.name());
    let mut reached = vec![0u64; tables.size(n).div_ceil(64) as usize];
    add_random_legal(&tables, n, seed, opts.samples.max(1), &mut reached);
    let k = popcount(&reached);

    let want_bits = atomic_bits(tables.size(n + 1));
    let cs = timed(|| twin::expand(spec, &reached, Some(&want_bits)))?;
    let got_bits = atomic_bits(tables.size(n + 1));
    let gs = side.expand(spec, &reached, Some(&got_bits))?;
    let mut next = load(&want_bits);
    let diff = first_bits_difference(&next, &load(&got_bits));
    let successors = popcount(&next);
    report.rows.push(
        DeviceCheckRow::new(EXPAND, target.clone(), k)
            .cpu(k, cs)
            .gpu(k, gs)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!(
                        "{k} random legal of {} indices: {successors} successors in ply{:02}",
                        tables.size(n),
                        n + 1
                    )
                }),
            ),
    );

    add_random_legal(&tables, n + 1, seed, opts.samples.max(1) / 4, &mut next);
    let salt = *seed;
    let count = popcount(&next);
    let values: Vec<u8> = (0..count)
        .into_par_iter()
        .map(|i| 1 + (mix(i ^ salt) % 60) as u8)
        .collect();
    let next = ReachedValues::from_compact(next, values).expect("one value per set bit");
    let t = Instant::now();
    let want = Connect4Twin::new(spec, Some(next.view()))?.solve(&reached)?;
    let cs = t.elapsed().as_secs_f64();
    let got = side.solve(spec, &reached, Some(next.view()))?;
    side.forget();
    let diff = first_difference(&want, &got.values);
    report.rows.push(
        DeviceCheckRow::new(KERNEL, format!("{target} compact"), k)
            .cpu(k, cs)
            .gpu(k, got.seconds)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!(
                        "{k} random legal reached, ply{:02} {count} reached ({})",
                        n + 1,
                        histogram(&want)
                    )
                }),
            ),
    );
    Ok(())
}

/// The game's own board whole (see the module documentation).
fn board_rows(
    kernels: &Connect4Kernels,
    side: &Solver,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let game = &kernels.game;
    let layout = Layout::new(game)?;
    let positions = layout.total_size();
    let board = format!("{}x{}", game.width(), game.height());
    if positions > opts.solve_max_size {
        for what in [EXPAND, KERNEL] {
            report.rows.push(
                DeviceCheckRow::new(format!("{what} (board)"), board.clone(), positions).note(
                    format!("skipped: over --solve-max-size {}", opts.solve_max_size),
                ),
            );
        }
        return Ok(());
    }
    let compare = positions <= opts.cpu_max_size;
    let cells = game.width() * game.height();
    let specs: Vec<Connect4SolveSpec> = (0..=cells)
        .map(|n| {
            kernels.spec_of(PartitionId(n)).ok_or_else(|| {
                crate::Error::Cuda(format!(
                    "{board} {}: the kernels do not cover it",
                    game.partition_name(PartitionId(n))
                ))
            })
        })
        .collect::<Result<_>>()?;
    let tables = Connect4Tables::new(specs[0])?;
    let samples = (opts.samples / 16).max(1);

    // Forward search from the empty board (index 0 of ply 0).
    let fresh = || -> Vec<Vec<AtomicU64>> {
        let plies: Vec<_> = (0..=cells).map(|n| atomic_bits(tables.size(n))).collect();
        plies[0][0].store(1, Ordering::Relaxed);
        plies
    };
    let dev = fresh();
    let cpu = if compare { Some(fresh()) } else { None };
    let (mut cs, mut gs, mut sampled) = (0.0, 0.0, 0u64);
    let mut diff: Option<String> = None;
    let mut succ = Vec::new();
    for n in 0..cells as usize {
        let reached = load(&dev[n]);
        gs += side.expand(specs[n], &reached, Some(&dev[n + 1]))?;
        let d = match &cpu {
            Some(cpu) => {
                let mine = load(&cpu[n]);
                cs += timed(|| twin::expand(specs[n], &mine, Some(&cpu[n + 1])))?;
                first_bits_difference(&load(&cpu[n + 1]), &load(&dev[n + 1]))
            }
            None => {
                // The successors of sampled reached positions must be set.
                let next = load(&dev[n + 1]);
                let mut found = None;
                for w in random_ranks(seed, reached.len() as u64, samples) {
                    let mut word = reached[w.0 as usize];
                    while word != 0 && found.is_none() {
                        let r = w.0 * 64 + u64::from(word.trailing_zeros());
                        word &= word - 1;
                        sampled += 1;
                        tables.successors(n as u32, r, &mut succ);
                        found = succ
                            .iter()
                            .find(|&&s| next[(s / 64) as usize] & (1 << (s % 64)) == 0)
                            .map(|s| format!("index {r}'s successor {s} is not set"));
                    }
                }
                found
            }
        };
        if diff.is_none() {
            diff = d.map(|d| format!("{}: {d}", specs[n].name()));
        }
    }
    let bits: Vec<Vec<u64>> = dev.iter().map(|b| load(b)).collect();
    drop(dev);
    let reached_total: u64 = bits.iter().map(|b| popcount(b)).sum();
    let how = |what: &str, sampled: u64| {
        if compare {
            format!("every partition's {what} identical")
        } else {
            format!("device only; {sampled} reached positions sampled against the twin")
        }
    };
    let row = DeviceCheckRow::new(format!("{EXPAND} (board)"), board.clone(), reached_total)
        .gpu(reached_total, gs);
    let row = if compare {
        row.cpu(reached_total, cs)
    } else {
        row
    };
    report.rows.push(row.matched(
        diff.is_none(),
        diff.unwrap_or_else(|| {
            format!(
                "{reached_total} reached in {} plies, {}",
                cells + 1,
                how("bits", sampled)
            )
        }),
    ));

    // The ply the team solves: the most reached among those the twin may
    // solve whole.
    let team_ply = (0..bits.len())
        .filter(|&n| tables.size(n as u32) <= opts.cpu_max_size)
        .max_by_key(|&n| popcount(&bits[n]));
    let mut team_row = None;

    // Every ply solved compact, from the full board down.
    let (mut cs, mut gs, mut reused) = (0.0, 0.0, 0usize);
    sampled = 0;
    let mut diff: Option<String> = None;
    let mut prev: Option<ReachedValues> = None;
    for (n, reached) in bits.into_iter().enumerate().rev() {
        let spec = specs[n];
        let next = prev.as_ref().map(ReachedValues::view);
        let got = side.solve(spec, &reached, next)?;
        gs += got.seconds;
        reused += usize::from(got.reused);
        let twin = Connect4Twin::new(spec, next)?;
        let d = if compare {
            let t = Instant::now();
            let want = twin.solve(&reached)?;
            cs += t.elapsed().as_secs_f64();
            first_difference(&want, &got.values)
        } else {
            let view = ReachedView {
                bits: &reached,
                block_ranks: &crate::game::reached::block_ranks(&reached),
                values: &got.values,
            };
            let mut found = None;
            for w in random_ranks(seed, reached.len() as u64, samples) {
                let mut word = reached[w.0 as usize];
                while word != 0 && found.is_none() {
                    let r = w.0 * 64 + u64::from(word.trailing_zeros());
                    word &= word - 1;
                    sampled += 1;
                    let (want, _) = twin.value_of(r);
                    let got = view.get(r);
                    found = (want != got).then(|| format!("index {r}: twin {want}, device {got}"));
                }
            }
            found
        };
        if diff.is_none() {
            diff = d.map(|d| format!("{}: {d}", spec.name()));
        }
        if team_ply == Some(n) {
            team_row = Some(team_solve_row(kernels, spec, &reached, next, &board)?);
        }
        prev = Some(
            ReachedValues::from_compact(reached, got.values).ok_or_else(|| {
                crate::Error::Cuda(format!(
                    "{board} {}: the device gave a value count unlike the reached count",
                    spec.name()
                ))
            })?,
        );
    }
    side.forget();
    let row = DeviceCheckRow::new(format!("{KERNEL} (board)"), board.clone(), positions)
        .gpu(positions, gs);
    let row = if compare { row.cpu(positions, cs) } else { row };
    report.rows.push(row.matched(
        diff.is_none(),
        diff.unwrap_or_else(|| {
            format!(
                "{} plies, {reached_total} reached ({reused} from n + 1 kept on the device), {}",
                cells + 1,
                how("bytes", sampled)
            )
        }),
    ));
    report.rows.push(team_row.unwrap_or_else(|| {
        DeviceCheckRow::new(format!("{KERNEL} (team of 2)"), board, 0).note(format!(
            "skipped: every ply has over --cpu-max-size {} indices",
            opts.cpu_max_size
        ))
    }));
    Ok(())
}

/// Ply `spec` solved by a team of two solvers on this device (threads of a
/// [`ThreadTeam`], each its slice of the ply's words), against the twin's
/// unsplit solve: every member must return the twin's bytes. The device
/// time is the team's wall time (both members on one device, so the row
/// shows the split's overhead, not a speed-up).
fn team_solve_row(
    kernels: &Connect4Kernels,
    spec: Connect4SolveSpec,
    reached: &[u64],
    next: Option<ReachedView<'_>>,
    board: &str,
) -> Result<DeviceCheckRow> {
    let p = PartitionId(spec.n);
    let solved = match next {
        Some(v) => SolvedPartitions::new([]).with_compact([(PartitionId(spec.n + 1), v)]),
        None => SolvedPartitions::new([]),
    }
    .with_reached(reached);
    let k = popcount(reached);
    let t = Instant::now();
    let want = Connect4Twin::new(spec, next)?.solve(reached)?;
    let cs = t.elapsed().as_secs_f64();
    // Fresh solvers: nothing kept on the device from the board's solve.
    let members = [kernels.sibling()?, kernels.sibling()?];
    let team = ThreadTeam::new(2);
    let t = Instant::now();
    let got: Vec<Result<KernelSolve>> = std::thread::scope(|s| {
        let handles: Vec<_> = members
            .iter()
            .zip(&team)
            .map(|(mine, member)| {
                let solved = &solved;
                s.spawn(move || {
                    let got = mine.solve_team(p, solved, member).unwrap_or_else(|| {
                        Err(crate::Error::Cuda(format!(
                            "{board} {}: the kernels declined a team solve",
                            spec.name()
                        )))
                    });
                    // The other member must not wait for this one.
                    if let Err(e) = &got {
                        member.abort(&e.to_string());
                    }
                    got
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(crate::Error::Cuda("a team member panicked".into())))
            })
            .collect()
    });
    let gs = t.elapsed().as_secs_f64();
    let got = got.into_iter().collect::<Result<Vec<_>>>()?;
    let diff = got.iter().enumerate().find_map(|(rank, g)| {
        first_difference(&want, &g.values).map(|d| format!("rank {rank}: {d}"))
    });
    let seconds: Vec<String> = got
        .iter()
        .map(|g| g.device_seconds.map_or("-".into(), |s| format!("{s:.4}")))
        .collect();
    Ok(DeviceCheckRow::new(
        format!("{KERNEL} (team of 2)"),
        format!("{board} {}", spec.name()),
        k,
    )
    .cpu(k, cs)
    .gpu(k, gs)
    .matched(
        diff.is_none(),
        diff.unwrap_or_else(|| {
            format!(
                "2 members on one device, each its slice of {} words, against the twin unsplit; \
                 members' device s {}; {} exchanged by rank 0",
                reached.len(),
                seconds.join(", "),
                team[0].stats().read().bytes_received
            )
        }),
    ))
}

/// The streamed path's rows: kernel `connect4_stream_expand` through the
/// generic [`Stager`](crate::backend::cuda::stream::Stager) (on
/// [`Device::Cpu`](crate::game::Device): its twin
/// [`stream::expand_twin`] in the device's place) against
/// [`expand_chunk_on_cpu`], the game's rules, on an early, a middle and a
/// late ply of the game's own board and of [`STREAM_BOARDS`]: a window of
/// at most 2^min(work_log2, 22) indices (the whole ply where it is
/// smaller), cut into chunks of at most [`STREAM_CHUNK`] indices, the last
/// one partial, with random values and flags in, a random small lookup
/// range (several buckets) and random reached bits, and the real ones from
/// a forward search where the board has at most 2^work_log2 indices. Each
/// first scan is followed by a pass over its output (with random indices'
/// flags raised to ONGOING | INTERNAL), which must ask nothing and leave
/// values and flags alone; then a first scan whose targets lack ply
/// `n + 1`, which both sides must refuse.
pub fn stream_rows(
    kernels: &Connect4Kernels,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let own = (kernels.game.width(), kernels.game.height());
    let mut boards = vec![own];
    boards.extend(STREAM_BOARDS.iter().filter(|b| **b != own));
    for (w, h) in boards {
        let game = Connect4::new(w, h).map_err(|message| crate::Error::BadParam {
            game: "connect4".into(),
            message,
        })?;
        let cells = w * h;
        let tables = Connect4Tables::new(Connect4SolveSpec::new(w, h, 0)?)?;
        let total: u64 = (0..=cells).map(|n| tables.size(n)).sum();
        let real = if total <= 1u64 << opts.work_log2 {
            Some(forward_search(w, h, &tables)?)
        } else {
            None
        };
        let mut plies = vec![4.min(cells - 1), cells / 2, cells.saturating_sub(2)];
        plies.dedup();
        for n in plies {
            let spec = Connect4SolveSpec::new(w, h, n)?;
            let size = tables.size(n);
            let span = (1u64 << opts.work_log2.min(22)).min(size);
            // A window starting on a word, ending off one (a partial chunk),
            // inside the first 2^26 indices so that its reached bits stay small.
            let lo = if size > span {
                (mix(bump(seed)) % (size - span).min(1 << 26)) / 64 * 64
            } else {
                0
            };
            let hi = (lo + span - mix(bump(seed)) % 64.min(span / 2)).max(lo + 1);
            let targets = stream_targets(&tables, spec, seed);
            let mut random = vec![0u64; hi.div_ceil(64) as usize];
            for (i, wd) in random.iter_mut().enumerate() {
                // About half the indices, below the window as well.
                *wd = mix(bump(seed) ^ i as u64);
            }
            let mut variants = vec![("random reached", Some(random))];
            if let Some(real) = &real {
                variants.push(("reached", Some(real[n as usize].clone())));
            } else {
                variants.push(("every index", None));
            }
            for (what, reached) in variants {
                let targets = StreamTargets {
                    reached: reached.map(std::sync::Arc::from),
                    ..targets.clone()
                };
                let target = format!("{w}x{h} {} [{lo}, {hi}) {what}", spec.name());
                stream_compare(
                    kernels,
                    &game,
                    spec,
                    &tables,
                    &targets,
                    lo..hi,
                    seed,
                    &target,
                    report,
                )?;
            }
            if n == cells / 2 {
                report.rows.push(contract_row(
                    kernels,
                    &game,
                    spec,
                    &tables,
                    &targets,
                    lo..hi,
                    seed,
                )?);
                if (w, h) == own {
                    throughput_row(kernels, &game, spec, &tables, opts, seed, report)?;
                }
            }
        }
    }
    Ok(())
}

/// The most indices a chunk of the throughput row holds: chunks as large as
/// a build's, so that the row shows the kernel's rate more than the cost of
/// a chunk.
const THROUGHPUT_CHUNK: u64 = 1 << 21;

/// A window of 2^min(work_log2, 24) indices of ply `spec` (every index, as
/// a partition solved whole), in chunks of up to [`THROUGHPUT_CHUNK`]:
/// compared too, but there for the rates.
fn throughput_row(
    kernels: &Connect4Kernels,
    game: &Connect4,
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let size = tables.size(spec.n);
    let span = (1u64 << opts.work_log2.min(24)).min(size);
    let lo = (mix(bump(seed)) % (size - span + 1)) / 64 * 64;
    let targets = StreamTargets {
        max_chunk: THROUGHPUT_CHUNK,
        max_expanding: THROUGHPUT_CHUNK,
        ..stream_targets(tables, spec, seed)
    };
    let target = format!(
        "{}x{} {} [{lo}, {}) every index, throughput",
        spec.width,
        spec.height,
        spec.name(),
        lo + span
    );
    stream_compare(
        kernels,
        game,
        spec,
        tables,
        &targets,
        lo..lo + span,
        seed,
        &target,
        report,
    )
}

/// Boards of the streamed rows besides the game's own.
const STREAM_BOARDS: [(u32, u32); 2] = [(5, 4), (5, 5)];

/// The most indices a chunk of the streamed rows holds.
const STREAM_CHUNK: u64 = 1 << 16;

/// The streamed kernel's name in rows.
const STREAM: &str = "connect4_stream_expand";

/// Advances `seed`, for a fresh draw.
fn bump(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(1);
    *seed
}

/// Every ply's reached bits of the `w`x`h` board, from the empty board.
fn forward_search(w: u32, h: u32, tables: &Connect4Tables) -> Result<Vec<Vec<u64>>> {
    let cells = w * h;
    let plies: Vec<Vec<AtomicU64>> = (0..=cells).map(|n| atomic_bits(tables.size(n))).collect();
    plies[0][0].store(1, Ordering::Relaxed);
    for n in 0..cells {
        let reached = load(&plies[n as usize]);
        twin::expand(
            Connect4SolveSpec::new(w, h, n)?,
            &reached,
            Some(&plies[n as usize + 1]),
        )?;
    }
    Ok(plies.iter().map(|b| load(b)).collect())
}

/// Targets of ply `spec` laid out as a build lays them out (partitions in
/// solving order, each its buckets in turn) but only from ply `n + 2` down
/// (a build lists every earlier ply: these suffice, and keep the buckets
/// few enough for a small lookup range), with a random lookup range small
/// enough to cut every ply into several buckets (all the buckets together
/// at most about 2^20), and no reached bits.
fn stream_targets(
    tables: &Connect4Tables,
    spec: Connect4SolveSpec,
    seed: &mut u64,
) -> StreamTargets {
    let order: Vec<u32> = (spec.n..=(spec.n + 2).min(spec.cells())).rev().collect();
    let total: u64 = order.iter().map(|&n| tables.size(n)).sum();
    let lookup_chunk = (64 + mix(bump(seed)) % 4096).max(total >> 20);
    let order = order.iter().map(|&n| (PartitionId(n), tables.size(n)));
    StreamTargets::laid_out(order, PartitionId(spec.n), lookup_chunk, STREAM_CHUNK)
}

/// A [`ChunkExpander`] over the twin of the streamed kernel: the device's
/// stand-in on the CPU.
struct TwinExpander<'t> {
    spec: Connect4SolveSpec,
    tables: &'t Connect4Tables,
    targets: StreamTargets,
    done: std::collections::VecDeque<Result<ChunkDone>>,
}

impl ChunkExpander for TwinExpander<'_> {
    fn depth(&self) -> usize {
        2
    }

    fn max_chunk(&self) -> u64 {
        self.targets.max_chunk
    }

    fn max_expanding(&self) -> u64 {
        self.targets.max_expanding
    }

    fn name(&self) -> String {
        "cpu (twin)".into()
    }

    fn submit(&mut self, job: ChunkJob) -> Result<()> {
        self.done.push_back(stream::expand_twin(
            self.spec,
            self.tables,
            &self.targets,
            job,
        ));
        Ok(())
    }

    fn collect_into(
        &mut self,
        requests: &mut dyn FnMut(Requests<'_>) -> Result<()>,
    ) -> Result<ChunkDone> {
        let mut done = self
            .done
            .pop_front()
            .unwrap_or_else(|| Err(crate::Error::NotAvailable("no chunk to collect".into())))?;
        let keyed = std::mem::take(&mut done.requests);
        requests(OwnedRequests::from_keyed(&keyed, done.lo, self.targets.low_bits)?.view())?;
        Ok(done)
    }
}

/// The device's expander of `targets` (the twin's on the CPU).
fn stream_side<'t>(
    kernels: &Connect4Kernels,
    spec: Connect4SolveSpec,
    tables: &'t Connect4Tables,
    targets: &StreamTargets,
) -> Result<Box<dyn ChunkExpander + 't>> {
    // The game's own board through the trait, as a build asks; another
    // board straight to its stager (`kernels.expander` would take the
    // partition for one of the game's own board).
    // Room for two slots of whole chunks, each index's requests twice.
    let device_bytes = (2 * targets.max_chunk * (2 + 32 * u64::from(spec.width))).max(256 << 20);
    if kernels.spec_of(PartitionId(spec.n)) == Some(spec) {
        if let Some(made) = kernels.expander(targets, device_bytes) {
            return made.map(|e| -> Box<dyn ChunkExpander + 't> { e });
        }
    }
    #[cfg(feature = "cuda")]
    if let Some(streamed) = &kernels.streamed {
        return streamed.expander(spec, targets, device_bytes);
    }
    Ok(Box::new(TwinExpander {
        spec,
        tables,
        targets: targets.clone(),
        done: Default::default(),
    }))
}

/// The jobs of window `range` in chunks of at most `chunk` indices, with
/// random values and flags (a first scan must overwrite both).
fn random_jobs(range: std::ops::Range<u64>, chunk: u64, seed: &mut u64) -> Vec<ChunkJob> {
    let salt = mix(bump(seed));
    let mut jobs = Vec::new();
    let mut lo = range.start;
    while lo < range.end {
        let n = chunk.min(range.end - lo) as usize;
        let byte = |i: usize| mix(salt ^ (lo + i as u64)) as u8;
        jobs.push(ChunkJob {
            chunk: jobs.len() as u64,
            lo,
            first_scan: true,
            values: (0..n).map(byte).collect(),
            flags: (0..n.div_ceil(4)).map(|i| byte(i + (1 << 40))).collect(),
        });
        lo += n as u64;
    }
    jobs
}

/// `jobs` through `expander`, `depth` in flight as the pipeline keeps them:
/// the chunks back in order, and the seconds.
fn run_stream(
    expander: &mut dyn ChunkExpander,
    jobs: Vec<ChunkJob>,
) -> Result<(Vec<ChunkDone>, f64)> {
    let t = Instant::now();
    let depth = expander.depth().max(1);
    let total = jobs.len();
    let mut done = Vec::with_capacity(total);
    let mut in_flight = 0;
    for job in jobs {
        if in_flight == depth {
            done.push(expander.collect()?);
            in_flight -= 1;
        }
        expander.submit(job)?;
        in_flight += 1;
    }
    while done.len() < total {
        done.push(expander.collect()?);
    }
    Ok((done, t.elapsed().as_secs_f64()))
}

/// The game's rules over `jobs`: the chunks, and the seconds.
fn run_rules(
    game: &Connect4,
    targets: &StreamTargets,
    jobs: Vec<ChunkJob>,
) -> Result<(Vec<ChunkDone>, f64)> {
    let t = Instant::now();
    let done = jobs
        .into_iter()
        .map(|j| expand_chunk_on_cpu(game, targets, j))
        .collect::<Result<Vec<_>>>()?;
    Ok((done, t.elapsed().as_secs_f64()))
}

/// Index `j`'s two flag bits.
fn flag_of(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

/// `None` when the device's chunks equal the rules' (values, each index's
/// flags, sorted requests) and its requests are grouped by bucket, else the
/// first difference.
fn chunks_difference(want: &[ChunkDone], got: &[ChunkDone], low_bits: u32) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!(
            "{} chunks back, the rules {}",
            got.len(),
            want.len()
        ));
    }
    for (w, g) in want.iter().zip(got) {
        let at = format!("chunk {} at {}", w.chunk, w.lo);
        if (g.chunk, g.lo) != (w.chunk, w.lo) {
            return Some(format!(
                "{at}: the device returned chunk {} at {}",
                g.chunk, g.lo
            ));
        }
        if let Some(d) = first_difference(&w.values, &g.values) {
            return Some(format!("{at}: values: {d}"));
        }
        // Bits past the chunk's last index are nobody's: not compared.
        if let Some(j) = (0..w.values.len()).find(|&j| flag_of(&w.flags, j) != flag_of(&g.flags, j))
        {
            return Some(format!(
                "{at}: index {}: flags {} by the rules, {} by the device",
                w.lo + j as u64,
                flag_of(&w.flags, j),
                flag_of(&g.flags, j)
            ));
        }
        if !g.grouped(low_bits) {
            return Some(format!("{at}: requests not grouped by bucket"));
        }
        let (ws, gs) = (w.sorted_requests(), g.sorted_requests());
        if ws != gs {
            let i = ws
                .iter()
                .zip(&gs)
                .position(|(a, b)| a != b)
                .unwrap_or(ws.len().min(gs.len()));
            return Some(format!(
                "{at}: {} requests by the rules, {} by the device; first difference at {i}: {:?} vs {:?}",
                ws.len(),
                gs.len(),
                ws.get(i),
                gs.get(i)
            ));
        }
    }
    None
}

/// The first scan of window `range` and then a pass over its output, on the
/// device and by the rules: two rows.
#[allow(clippy::too_many_arguments)]
fn stream_compare(
    kernels: &Connect4Kernels,
    game: &Connect4,
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    targets: &StreamTargets,
    range: std::ops::Range<u64>,
    seed: &mut u64,
    target: &str,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let k = range.end - range.start;
    let mut side = stream_side(kernels, spec, tables, targets)?;
    let what = if side.name().starts_with("cpu") {
        format!("{STREAM} (twin)")
    } else {
        STREAM.to_string()
    };
    // Jobs a first scan may expand whole: within the requests' room too.
    let chunk = side
        .max_chunk()
        .min(side.max_expanding())
        .min(targets.max_chunk)
        / 64
        * 64;
    let jobs = random_jobs(range.clone(), chunk, seed);
    let copy = |jobs: &[ChunkJob]| -> Vec<ChunkJob> {
        jobs.iter()
            .map(|j| ChunkJob {
                chunk: j.chunk,
                lo: j.lo,
                first_scan: j.first_scan,
                values: j.values.clone(),
                flags: j.flags.clone(),
            })
            .collect()
    };
    let (want, cs) = run_rules(game, targets, copy(&jobs))?;
    let (got, gs) = run_stream(side.as_mut(), jobs)?;
    let diff = chunks_difference(&want, &got, targets.low_bits);
    let requests: usize = want.iter().map(|d| d.requests.len()).sum();
    let pending: usize = want
        .iter()
        .map(|d| {
            d.values
                .iter()
                .enumerate()
                .filter(|&(j, &v)| v == STREAM_PENDING && flag_of(&d.flags, j) != 0)
                .count()
        })
        .sum();
    report.rows.push(
        DeviceCheckRow::new(format!("{what} first scan"), target, k)
            .cpu(k, cs)
            .gpu(k, gs)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| {
                    format!(
                        "{} chunks of <= {chunk}, {} buckets of {}: {pending} ongoing, {requests} requests",
                        want.len(),
                        targets.buckets,
                        targets.lookup_chunk
                    )
                }),
            ),
    );

    // A pass over the first scan's output, some flags raised to ONGOING |
    // INTERNAL (which this game never sets): nothing asked, nothing changed.
    let salt = mix(bump(seed));
    let pass: Vec<ChunkJob> = want
        .iter()
        .map(|d| {
            let mut flags = d.flags.clone();
            for j in 0..d.values.len() {
                if mix(salt ^ (d.lo + j as u64)) % 8 == 0 {
                    flags[j / 4] |= (STREAM_ONGOING | STREAM_INTERNAL) << (2 * (j % 4));
                }
            }
            ChunkJob {
                chunk: d.chunk,
                lo: d.lo,
                first_scan: false,
                values: d.values.clone(),
                flags,
            }
        })
        .collect();
    let before = copy(&pass);
    let (want, cs) = run_rules(game, targets, copy(&pass))?;
    let (got, gs) = run_stream(side.as_mut(), pass)?;
    let diff = chunks_difference(&want, &got, targets.low_bits).or_else(|| {
        let asked: usize = got.iter().map(|d| d.requests.len()).sum();
        let changed = got.iter().zip(&before).any(|(g, b)| {
            g.values != b.values
                || g.flags[..b.values.len().div_ceil(4)] != b.flags[..b.values.len().div_ceil(4)]
        });
        (asked > 0 || changed)
            .then(|| format!("the pass asked {asked} and changed values or flags: {changed}"))
    });
    report.rows.push(
        DeviceCheckRow::new(format!("{what} pass"), target, k)
            .cpu(k, cs)
            .gpu(k, gs)
            .matched(
                diff.is_none(),
                diff.unwrap_or_else(|| "no requests, values and flags unchanged".into()),
            ),
    );
    Ok(())
}

/// A first scan of a window of ply `spec` whose targets lack ply `n + 1`:
/// both sides must refuse it as a broken game contract.
fn contract_row(
    kernels: &Connect4Kernels,
    game: &Connect4,
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    targets: &StreamTargets,
    range: std::ops::Range<u64>,
    seed: &mut u64,
) -> Result<DeviceCheckRow> {
    let (lo, hi) = (range.start, range.end);
    let next = PartitionId(spec.n + 1);
    let targets = StreamTargets {
        bucket_base: targets
            .bucket_base
            .iter()
            .filter(|(p, _)| *p != next)
            .copied()
            .collect(),
        reached: None,
        ..targets.clone()
    };
    let mut same = *seed;
    let want = run_rules(game, &targets, random_jobs(lo..hi, STREAM_CHUNK, &mut same));
    let jobs = random_jobs(lo..hi, STREAM_CHUNK, seed);
    let k = hi - lo;
    let mut side = stream_side(kernels, spec, tables, &targets)?;
    let got = run_stream(side.as_mut(), jobs);
    let is_contract =
        |r: &Result<(Vec<ChunkDone>, f64)>| matches!(r, Err(crate::Error::GameContract { .. }));
    let ok = is_contract(&want) && is_contract(&got);
    let say = |r: &Result<(Vec<ChunkDone>, f64)>| match r {
        Ok(_) => "accepted it".to_string(),
        Err(e) => e.to_string(),
    };
    Ok(DeviceCheckRow::new(
        format!("{STREAM} (contract)"),
        format!(
            "{}x{} {} [{lo}, {hi}) without ply{:02}",
            spec.width,
            spec.height,
            spec.name(),
            spec.n + 1
        ),
        k,
    )
    .matched(ok, format!("rules: {}; device: {}", say(&want), say(&got))))
}
