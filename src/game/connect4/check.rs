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
//!   times given.
//!
//! On [`Device::Cpu`](crate::game::Device) the twin stands in for the device
//! (a dry run of the check itself, without a GPU).
//!
//! Declared from `kernels.rs` (a child of it, to see the solver it checks).

use crate::dist::{Team, ThreadTeam};
use crate::hash::SplitMix64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::super::twin::{self, Connect4SolveSpec, Connect4Tables, Connect4Twin, Kind};
use super::{Connect4Kernels, Solver};
use crate::game::{
    DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, Game, KernelSolve, Layout,
    PartitionKernels, ReachedValues, ReachedView, SolvedPartitions,
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
