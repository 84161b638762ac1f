//! `tbforge bench gpu connect4`: the kernel `connect4_solve` against its CPU
//! twin ([`Connect4Twin::value_of`]) on fresh random indices of large boards
//! (synthetic successor values), then every partition of the game's board
//! solved by the device (each from the device's previous partition, kept
//! there, as a build does) and by the twin from the same input, bytes
//! compared (what the deleted `tbforge-gpucheck connect4` did).
//!
//! On [`Device::Cpu`](crate::game::Device) the twin stands in for the device
//! (a dry run of the check itself, without a GPU).
//!
//! Declared from `kernels.rs` (a child of it, to see the solver it checks).

use crate::hash::SplitMix64;
use std::time::Instant;

use rayon::prelude::*;

use super::super::twin::{Connect4SolveSpec, Connect4Tables, Connect4Twin};
use super::{Connect4Kernels, Solver};
use crate::game::Layout;
use crate::game::{DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, Game, PartitionKernels};
use crate::{Rank, Result};

/// Boards whose random indices are checked besides the game's own: the
/// standard board and larger ones (wider tables, longer columns).
const LARGE_BOARDS: [(u32, u32); 5] = [(7, 6), (8, 7), (9, 6), (4, 15), (6, 7)];

/// The kernel name in rows.
const KERNEL: &str = "connect4_solve";

/// One partition solved: values, host seconds, whether partition n + 1 was
/// still on the device.
struct Solved {
    values: Vec<u8>,
    seconds: f64,
    reused: bool,
}

/// The device side of the check: the GPU's kernels, or the twin in their place.
impl Solver {
    fn solve(&self, spec: Connect4SolveSpec, next: Option<&[u8]>) -> Result<Solved> {
        match self {
            Solver::Twin => {
                let t = Instant::now();
                let values = Connect4Twin::new(spec, next)?.solve()?;
                Ok(Solved {
                    values,
                    seconds: t.elapsed().as_secs_f64(),
                    reused: false,
                })
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => {
                let r = g.solve(spec, next)?;
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
        next: Option<&[u8]>,
        ranks: &[Rank],
    ) -> Result<(Vec<u8>, u32)> {
        match self {
            Solver::Twin => twin_values(&Connect4Twin::new(spec, next)?, ranks),
            #[cfg(feature = "cuda")]
            Solver::Cuda(g) => g.values_of(spec, next, ranks),
        }
    }

    fn forget(&self) {
        #[cfg(feature = "cuda")]
        if let Solver::Cuda(g) = self {
            g.forget();
        }
    }
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

/// `None` when the two byte lists are equal, else where they first differ.
fn first_difference(want: &[u8], got: &[u8]) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} values, the twin {}", got.len(), want.len()));
    }
    let i = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at index {i}: twin {}, device {}",
        want[i], got[i]
    ))
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
        random_rows(side, w, h, opts, &mut seed, &mut report)?;
    }
    board_row(kernels, side, opts, &mut seed, &mut report)?;
    Ok(report)
}

/// Random indices of board `w`x`h`: the full board (no successors) and the
/// largest partition whose successor partition has at most 2^min(work_log2,
/// 26) indices, filled with synthetic values 1..=60.
fn random_rows(
    side: &Solver,
    w: u32,
    h: u32,
    opts: &DeviceCheckOptions,
    seed: &mut u64,
    report: &mut DeviceCheckReport,
) -> Result<()> {
    let tables = Connect4Tables::new(Connect4SolveSpec::new(w, h, w * h)?)?;
    let cap = 1u64 << opts.work_log2.min(26);
    let below = (0..w * h).rev().find(|&n| tables.size(n + 1) <= cap);
    for n in std::iter::once(w * h).chain(below) {
        let spec = Connect4SolveSpec::new(w, h, n)?;
        let salt = *seed;
        let next: Option<Vec<u8>> = spec.next().map(|s| {
            (0..tables.size(s.n))
                .into_par_iter()
                .map(|i| 1 + (mix(i ^ salt) % 60) as u8)
                .collect()
        });
        let size = tables.size(n);
        let ranks = random_ranks(seed, size, opts.samples.max(1));
        let twin = Connect4Twin::new(spec, next.as_deref())?;
        let t = Instant::now();
        let (want, want_bits) = twin_values(&twin, &ranks)?;
        let cs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (got, bits) = side.values_of(spec, next.as_deref(), &ranks)?;
        let gs = t.elapsed().as_secs_f64();
        let mut hist = [0u64; 4];
        for &v in &want {
            hist[match v {
                0 => 0,
                1 => 1,
                v if v % 2 == 0 => 2,
                _ => 3,
            }] += 1;
        }
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
                        format!(
                            "{k} random of {size} indices (illegal {} draw {} loss {} win {})",
                            hist[0], hist[1], hist[2], hist[3]
                        )
                    }),
                ),
        );
    }
    Ok(())
}

/// Every partition of the game's board, from the full board down: the device
/// from its own previous partition, the twin from the same values; boards of
/// more than `cpu_max_size` positions are sampled against the twin instead.
fn board_row(
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
        report.rows.push(
            DeviceCheckRow::new(format!("{KERNEL} (board)"), board, positions).note(format!(
                "skipped: over --solve-max-size {}",
                opts.solve_max_size
            )),
        );
        return Ok(());
    }
    let compare = positions <= opts.cpu_max_size;
    let (mut cs, mut gs, mut reused, mut sampled) = (0.0, 0.0, 0usize, 0u64);
    let mut diff: Option<String> = None;
    let mut prev: Option<Vec<u8>> = None;
    for slot in 0..layout.len() {
        let p = layout.order()[slot];
        let spec = kernels.spec_of(p).ok_or_else(|| {
            crate::Error::Cuda(format!(
                "{board} {}: the kernel does not cover it",
                game.partition_name(p)
            ))
        })?;
        let dev = side.solve(spec, prev.as_deref())?;
        gs += dev.seconds;
        reused += usize::from(dev.reused);
        let twin = Connect4Twin::new(spec, prev.as_deref())?;
        let d = if compare {
            let t = Instant::now();
            let want = twin.solve()?;
            cs += t.elapsed().as_secs_f64();
            first_difference(&want, &dev.values)
        } else {
            let k = (opts.samples / 16).clamp(1, dev.values.len().max(1) * 2);
            let ranks = random_ranks(seed, dev.values.len() as u64, k);
            sampled += ranks.len() as u64;
            let (want, _) = twin_values(&twin, &ranks)?;
            let got: Vec<u8> = ranks.iter().map(|r| dev.values[r.0 as usize]).collect();
            first_difference(&want, &got)
        };
        if diff.is_none() {
            diff = d.map(|d| format!("{}: {d}", spec.name()));
        }
        prev = Some(dev.values);
    }
    side.forget();
    let parts = layout.len();
    let row = DeviceCheckRow::new(format!("{KERNEL} (board)"), board, positions).gpu(positions, gs);
    let row = if compare { row.cpu(positions, cs) } else { row };
    let how = if compare {
        "every partition's bytes identical".to_string()
    } else {
        format!("device only; {sampled} indices sampled against the twin")
    };
    report.rows.push(row.matched(
        diff.is_none(),
        diff.unwrap_or_else(|| {
            format!("{parts} partitions ({reused} from n + 1 kept on the device), {how}")
        }),
    ));
    Ok(())
}
