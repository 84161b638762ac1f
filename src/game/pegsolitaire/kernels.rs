//! The puzzle's kernels and their CPU twins, offered to the build: each
//! partition's values in one pass over it from the partition with one peg
//! fewer (where every jump leads), and the forward search as one expansion
//! per partition, on all cores or on a CUDA GPU (cuda.rs,
//! `kernels/pegsolitaire.cu`, the same loops).
//!
//! Every jump removes a peg, so the generic solver decides every position of
//! a partition in its first scan: the goal at distance 0, else one more than
//! the nearest successor that reaches the goal, else "goal unreachable". The
//! twin computes just that, and the forward search's layer `d` is the
//! reached part of the partition with `32 - d` pegs.

use super::{PegSolitaire, CELLS};
use crate::game::{
    Device, DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, DeviceSearch, Game, KernelSolve,
    PartitionKernels, SolvedPartitions,
};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Rank, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Indices per parallel work item.
const CHUNK: usize = 1 << 14;

/// What the forward search finds: the positions first reached at each depth,
/// and the reached count of every partition (by peg count).
pub type Reach = (Vec<u64>, Vec<u64>);

/// The values of partition `k` (pegs) from `lower`, partition `k - 1`'s:
/// what `pg_solve` writes.
pub fn solve_partition_twin(game: &PegSolitaire, k: usize, lower: &[u8]) -> Result<Vec<u8>> {
    let h = &game.hashes[k];
    let size = usize::try_from(h.size())
        .map_err(|_| Error::NotAvailable(format!("{} indices do not fit memory", h.size())))?;
    let mut values = vec![0u8; size];
    values
        .par_chunks_mut(CHUNK)
        .enumerate()
        .try_for_each(|(c, chunk)| -> Result<()> {
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = board_value(game, k, h.unrank((c * CHUNK + i) as u64), lower)?;
            }
            Ok(())
        })?;
    Ok(values)
}

fn no_value(k: usize) -> Error {
    Error::GameContract {
        game: "pegsolitaire".into(),
        message: format!(
            "a jump from {k} pegs finds no value among the positions with {}",
            k.saturating_sub(1)
        ),
    }
}

/// The forward search from `start` (32 pegs): positions first reached at
/// each depth, and the reached count of every partition (by peg count):
/// what `pg_expand` finds layer by layer; up to `max_depth` jumps where
/// given.
pub fn search_twin(game: &PegSolitaire, start: u64, max_depth: Option<usize>) -> Reach {
    let mut reachable = vec![0u64; CELLS + 1];
    let mut k = start.count_ones() as usize;
    let words = |k: usize| -> Vec<AtomicU64> {
        (0..game.hashes[k].size().div_ceil(64))
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect()
    };
    let mut current = words(k);
    let r = game.hashes[k].rank(start);
    current[(r / 64) as usize].fetch_or(1 << (r % 64), Ordering::Relaxed);
    let mut layers = vec![1u64];
    reachable[k] = 1;
    while k > 0 && !matches!(max_depth, Some(d) if layers.len() > d) {
        let next = words(k - 1);
        let (h, below) = (&game.hashes[k], &game.hashes[k - 1]);
        let found: u64 = current
            .par_iter()
            .enumerate()
            .map(|(w, bits)| {
                let mut mine = 0;
                let mut bits = bits.load(Ordering::Relaxed);
                while bits != 0 {
                    let board = h.unrank(w as u64 * 64 + u64::from(bits.trailing_zeros()));
                    bits &= bits - 1;
                    for &(from, over, to) in &game.jumps {
                        if board & from == 0 || board & over == 0 || board & to != 0 {
                            continue;
                        }
                        let s = below.rank(board ^ (from | over | to));
                        let bit = 1u64 << (s % 64);
                        if next[(s / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0 {
                            mine += 1;
                        }
                    }
                }
                mine
            })
            .sum();
        if found == 0 {
            break;
        }
        k -= 1;
        layers.push(found);
        reachable[k] = found;
        current = next;
    }
    (layers, reachable)
}

/// Where the kernels run.
enum Solver {
    /// The CPU twins, on all cores.
    Twin,
    /// The kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Box<super::cuda::PgCuda>),
}

/// Peg solitaire's [`PartitionKernels`].
pub struct PegKernels {
    game: PegSolitaire,
    solver: Solver,
}

impl std::fmt::Debug for PegKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl PegKernels {
    /// The kernels of `game` on `device`.
    pub fn new(game: PegSolitaire, device: &Device) -> Result<PegKernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(Box::new(super::cuda::PgCuda::new(d.clone(), &game)?)),
        };
        Ok(PegKernels { game, solver })
    }

    /// Partition `k`'s values and device seconds.
    fn values(&self, k: usize, lower: &[u8]) -> Result<(Vec<u8>, Option<f64>)> {
        match &self.solver {
            Solver::Twin => Ok((solve_partition_twin(&self.game, k, lower)?, None)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.solve(&self.game, k, lower)?;
                Ok((t.value, Some(t.seconds)))
            }
        }
    }

    /// The forward search's layers and reached counts, and device seconds.
    fn layers(&self, start: u64) -> Result<(Reach, Option<f64>)> {
        match &self.solver {
            Solver::Twin => Ok((search_twin(&self.game, start, None), None)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.search(&self.game, start)?;
                Ok((t.value, Some(t.seconds)))
            }
        }
    }

    fn device_name(&self) -> String {
        match &self.solver {
            Solver::Twin => "cpu".into(),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => format!("cuda: {}", gpu.device().name()),
        }
    }
}

impl PartitionKernels for PegKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        let k = p.0 as usize;
        if k > CELLS || solved.reached().is_some() {
            return None;
        }
        let lower = match k.checked_sub(1) {
            None => std::borrow::Cow::Borrowed(&[][..]),
            Some(b) => {
                let b = PartitionId(b as u32);
                solved.get_full(b, self.game.partition_size(b))?
            }
        };
        Some(self.values(k, &lower).map(|(values, seconds)| KernelSolve {
            device_seconds: seconds,
            ..KernelSolve::on_cpu(values, Some(0))
        }))
    }

    fn search(
        &self,
        start: (PartitionId, Rank),
        partitions: &[(PartitionId, u64)],
    ) -> Option<Result<DeviceSearch>> {
        let board = self.game.unrank(start.0, start.1)?;
        Some(self.layers(board).map(|((layers, reachable), seconds)| {
            DeviceSearch {
                layers,
                reachable: partitions
                    .iter()
                    .map(|(p, _)| reachable.get(p.0 as usize).copied().unwrap_or(0))
                    .collect(),
                device_seconds: seconds,
            }
        }))
    }

    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        // The partition's bytes and the one below.
        let on_device = match &self.solver {
            Solver::Twin => false,
            #[cfg(feature = "cuda")]
            Solver::Cuda(_) => true,
        };
        let below =
            p.0.checked_sub(1)
                .map_or(0, |b| self.game.partition_size(PartitionId(b)));
        on_device.then_some(size + below)
    }

    fn name(&self) -> String {
        format!("pegsolitaire kernels on {}", self.device_name())
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        let mut report = DeviceCheckReport::new(self.name(), opts);
        let g = &self.game;
        // 1. The forward search, whole.
        let start = g.start().unwrap_or(0);
        let t = Instant::now();
        let ((layers, reachable), device) = self.layers(start)?;
        let total: u64 = layers.iter().sum();
        let mut row = DeviceCheckRow::new("pg_expand (search)", "English board", total)
            .gpu(total, device.unwrap_or_else(|| t.elapsed().as_secs_f64()));
        let t = Instant::now();
        let want = search_twin(g, start, None);
        row = row.cpu(total, t.elapsed().as_secs_f64());
        let same = want == (layers.clone(), reachable);
        report.rows.push(row.matched(
            same,
            format!(
                "{} layers, {total} positions reached{}",
                layers.len(),
                if same {
                    String::new()
                } else {
                    format!("; twin {:?} device {layers:?}", want.0)
                }
            ),
        ));
        // 2. Every partition's values from the one below, each side from its
        // own (the twin only up to --cpu-max-size; then a sample of indices of
        // the device's values, each against its twin recomputed alone).
        let mut rng = SplitMix64::new(opts.seed);
        let (mut below_gpu, mut below_cpu): (Vec<u8>, Option<Vec<u8>>) =
            (Vec::new(), Some(Vec::new()));
        for k in 0..=CELLS {
            let size = g.hashes[k].size();
            let target = format!("{k} pegs ({size} indices)");
            if size > opts.solve_max_size {
                report.rows.push(
                    DeviceCheckRow::new("pg_solve", target, size)
                        .note("not run: more indices than --solve-max-size"),
                );
                break;
            }
            let t = Instant::now();
            let (values, device) = self.values(k, &below_gpu)?;
            let mut row = DeviceCheckRow::new("pg_solve", target, size)
                .gpu(size, device.unwrap_or_else(|| t.elapsed().as_secs_f64()));
            match below_cpu.take() {
                Some(lower) if size <= opts.cpu_max_size => {
                    let t = Instant::now();
                    let want = solve_partition_twin(g, k, &lower)?;
                    row = row.cpu(size, t.elapsed().as_secs_f64());
                    let diff = want.iter().zip(&values).position(|(a, b)| a != b);
                    let same = diff.is_none() && want.len() == values.len();
                    row = row.matched(
                        same,
                        match diff {
                            None => "every byte".to_string(),
                            Some(i) => format!("index {i}: twin {}, device {}", want[i], values[i]),
                        },
                    );
                    below_cpu = Some(want);
                }
                _ => {
                    // Random indices, each recomputed by the twin from the
                    // device's own lower partition.
                    let n = (opts.samples as u64).min(1 << 16).min(size).max(1);
                    let idx: Vec<u64> = (0..n).map(|_| rng.below(size)).collect();
                    let t = Instant::now();
                    let want: Vec<u8> = idx
                        .iter()
                        .map(|&r| board_value(g, k, g.hashes[k].unrank(r), &below_gpu))
                        .collect::<Result<_>>()?;
                    row = row.cpu(n, t.elapsed().as_secs_f64());
                    let diff = (0..idx.len()).find(|&i| want[i] != values[idx[i] as usize]);
                    row = row.matched(
                        diff.is_none(),
                        match diff {
                            None => format!("{n} random indices against the twin"),
                            Some(i) => format!(
                                "index {}: twin {}, device {}",
                                idx[i], want[i], values[idx[i] as usize]
                            ),
                        },
                    );
                }
            }
            report.rows.push(row);
            below_gpu = values;
        }
        Ok(report)
    }
}

/// The value of `board` (`k` pegs) from `lower`, partition `k - 1`'s.
fn board_value(game: &PegSolitaire, k: usize, board: u64, lower: &[u8]) -> Result<u8> {
    if board == game.goal() {
        return Ok(Value::at_distance(0).map_or(0, Value::to_byte));
    }
    let mut best: Option<u32> = None;
    for &(from, over, to) in &game.jumps {
        if board & from == 0 || board & over == 0 || board & to != 0 {
            continue;
        }
        let s = match k.checked_sub(1) {
            Some(b) => game.hashes[b].rank(board ^ (from | over | to)),
            None => return Err(no_value(k)),
        };
        let value = Value::from_byte(*lower.get(s as usize).ok_or_else(|| no_value(k))?);
        if value.is_illegal() {
            return Err(no_value(k));
        }
        if let Some(e) = value.distance() {
            best = Some(best.map_or(e, |b| b.min(e)));
        }
    }
    Ok(match best {
        Some(e) => Value::at_distance(e + 1).map_or(0, Value::to_byte),
        None => Value::DRAW.to_byte(),
    })
}
