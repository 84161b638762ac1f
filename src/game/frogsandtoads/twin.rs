//! The puzzle's searches, offered to the build as its kernels: on the CPU
//! (the twins, [`crate::game::index_bfs`] on the puzzle's own moves) or on a
//! CUDA GPU (cuda.rs, `kernels/frogsandtoads.cu`, the same steps).
//!
//! Every move can be taken back (a slide or jump into the empty cell is
//! undone by the same piece moving back), so a position's distance to the
//! goal is its depth in a breadth-first search from the goal, and layer
//! `d + 1` is every unseen successor of layer `d`. The generic retrograde
//! solver re-expands every undecided position at each distance (about 60
//! times on average for the 31-cell board); this expands each once. Layer by
//! layer the decisions do not depend on the order threads see each other's
//! writes (a cell only goes from unseen to `d + 1`), so the bytes are the
//! generic solver's for any thread count: tests/frogsandtoads.rs compares
//! them. The forward search from the start (the layers `info` prints) is the
//! two-bit BFS, each index expanded once.

use super::super::index_bfs::{self, IndexMoves};
use super::FrogsAndToads;
use crate::game::{
    Device, DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, DeviceSearch, KernelSolve,
    PartitionKernels, SolvedPartitions,
};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::time::Instant;

/// Successor slots per index of the check kernel (`FT_SOURCES`).
pub const MAX_SUCCESSORS: usize = 8;

impl IndexMoves for FrogsAndToads {
    fn size(&self) -> u64 {
        FrogsAndToads::size(self)
    }

    #[inline]
    fn for_each_successor(&self, index: u64, mut emit: impl FnMut(u64)) {
        self.for_each_move(&self.board(index), |_, s| emit(self.index(&s)));
    }
}

/// The successors of each listed index, [`MAX_SUCCESSORS`] slots each
/// (unused: `u64::MAX`): what `ft_expand_check` writes.
pub fn expand_listed(game: &FrogsAndToads, idx: &[u64]) -> Vec<u64> {
    use rayon::prelude::*;
    let mut out = vec![u64::MAX; idx.len() * MAX_SUCCESSORS];
    out.par_chunks_mut(MAX_SUCCESSORS)
        .zip(idx.par_iter())
        .for_each(|(o, &i)| {
            let mut m = 0;
            game.for_each_successor(i, |s| {
                o[m] = s;
                m += 1;
            });
        });
    out
}

/// Where the searches run.
enum Solver {
    /// The CPU twins, on all cores.
    Twin,
    /// The kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Box<super::cuda::FtCuda>),
}

/// The puzzle's [`PartitionKernels`]: its one partition searched and solved
/// whole.
pub struct FtKernels {
    game: FrogsAndToads,
    solver: Solver,
}

impl std::fmt::Debug for FtKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl FtKernels {
    /// The searches of `game` on `device`.
    pub fn new(game: FrogsAndToads, device: &Device) -> Result<FtKernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(Box::new(super::cuda::FtCuda::new(d.clone(), &game)?)),
        };
        Ok(FtKernels { game, solver })
    }

    /// Every index's value (`2 + d` at `d` moves from the goal; draw where
    /// the goal cannot be reached, which no position is: the tests say so),
    /// the steps run, and device seconds (`None` on the CPU).
    pub fn values(&self) -> Result<(Vec<u8>, u32, Option<f64>)> {
        let goal = self.game.index(&self.game.goal());
        match &self.solver {
            Solver::Twin => {
                let (v, d) = index_bfs::byte_bfs(&self.game, goal)?;
                Ok((v, d, None))
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.byte_bfs(goal)?;
                Ok((t.value.0, t.value.1, Some(t.seconds)))
            }
        }
    }

    /// Layers of the two-bit BFS from index `start`, and device seconds.
    pub fn layers(&self, start: u64) -> Result<(Vec<u64>, Option<f64>)> {
        match &self.solver {
            Solver::Twin => Ok((index_bfs::two_bit_bfs(&self.game, start), None)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.two_bit_bfs(start)?;
                Ok((t.value, Some(t.seconds)))
            }
        }
    }

    fn expand(&self, idx: &[u64]) -> Result<Vec<u64>> {
        match &self.solver {
            Solver::Twin => Ok(expand_listed(&self.game, idx)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => gpu.expand(idx),
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

impl PartitionKernels for FtKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        // Only the whole partition: a build asking for reached indices alone
        // (none does: the puzzle has no layered partitions) gets the generic solver.
        if p != PartitionId(0) || solved.reached().is_some() {
            return None;
        }
        Some(self.values().map(|(values, passes, seconds)| KernelSolve {
            device_seconds: seconds,
            ..KernelSolve::on_cpu(values, Some(passes))
        }))
    }

    fn search(
        &self,
        start: (PartitionId, Rank),
        partitions: &[(PartitionId, u64)],
    ) -> Option<Result<DeviceSearch>> {
        if partitions != [(PartitionId(0), self.game.size())] || start.0 != PartitionId(0) {
            return None;
        }
        Some(
            self.layers(start.1 .0)
                .map(|(layers, seconds)| DeviceSearch {
                    reachable: vec![layers.iter().sum()],
                    layers,
                    device_seconds: seconds,
                }),
        )
    }

    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        // The goal search's byte per index (the two-bit array, a quarter of
        // that, is freed before).
        let on_device = match &self.solver {
            Solver::Twin => false,
            #[cfg(feature = "cuda")]
            Solver::Cuda(_) => true,
        };
        (on_device && p == PartitionId(0)).then_some(size)
    }

    fn name(&self) -> String {
        format!("frogsandtoads searches on {}", self.device_name())
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        let mut report = DeviceCheckReport::new(self.name(), opts);
        let g = &self.game;
        let size = g.size();
        let target = format!("{} cells ({size} indices)", g.cells());
        // 1. The moves of random indices, every successor's index.
        let n = (opts.samples as u64)
            .min(1 << opts.work_log2.min(26))
            .max(1);
        let mut rng = SplitMix64::new(opts.seed);
        let idx: Vec<u64> = (0..n).map(|_| rng.below(size)).collect();
        let t = Instant::now();
        let want = expand_listed(g, &idx);
        let cpu = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let got = self.expand(&idx)?;
        let gpu = t.elapsed().as_secs_f64();
        let diff = (0..idx.len()).find(|&i| {
            let r = i * MAX_SUCCESSORS..(i + 1) * MAX_SUCCESSORS;
            want[r.clone()] != got[r]
        });
        report.rows.push(
            DeviceCheckRow::new("ft_expand_check", &target, n)
                .cpu(n, cpu)
                .gpu(n, gpu)
                .matched(
                    diff.is_none(),
                    match diff {
                        None => format!("successors of {n} random indices (seed {})", opts.seed),
                        Some(i) => format!("index {}: first difference", idx[i]),
                    },
                ),
        );
        if size > opts.solve_max_size {
            report.rows.push(
                DeviceCheckRow::new("searches", &target, size)
                    .note("not run: more indices than --solve-max-size"),
            );
            return Ok(report);
        }
        let on_cpu = size <= opts.cpu_max_size;
        // 2. The two-bit BFS from the start, whole.
        let start = g.index(&g.filled(true));
        let t = Instant::now();
        let (layers, device) = self.layers(start)?;
        let mut row = DeviceCheckRow::new("ft_two_bit_step (BFS)", &target, size)
            .gpu(size, device.unwrap_or_else(|| t.elapsed().as_secs_f64()));
        row = if on_cpu {
            let t = Instant::now();
            let want = index_bfs::two_bit_bfs(g, start);
            row = row.cpu(size, t.elapsed().as_secs_f64());
            let same = want == layers;
            row.matched(
                same,
                format!(
                    "layers: {} deep, {} reached{}",
                    layers.len() - 1,
                    layers.iter().sum::<u64>(),
                    if same {
                        String::new()
                    } else {
                        format!("; twin {want:?} device {layers:?}")
                    }
                ),
            )
        } else {
            row.note(format!("device only: {} layers", layers.len()))
        };
        report.rows.push(row);
        // 3. The byte BFS from the goal: every value.
        let t = Instant::now();
        let (values, steps, device) = self.values()?;
        let mut row = DeviceCheckRow::new("ft_byte_step (goal search)", &target, size)
            .gpu(size, device.unwrap_or_else(|| t.elapsed().as_secs_f64()));
        row = if on_cpu {
            let t = Instant::now();
            let (want, want_steps) = index_bfs::byte_bfs(g, g.index(&g.goal()))?;
            row = row.cpu(size, t.elapsed().as_secs_f64());
            let diff = want.iter().zip(&values).position(|(a, b)| a != b);
            let same = diff.is_none() && want.len() == values.len() && want_steps == steps;
            row.matched(
                same,
                match diff {
                    None if same => format!("every byte, {steps} steps"),
                    None => format!("{want_steps} steps (twin), {steps} (device)"),
                    Some(i) => format!("index {i}: twin byte {}, device {}", want[i], values[i]),
                },
            )
        } else {
            row.note(format!("device only: {steps} steps"))
        };
        report.rows.push(row);
        Ok(report)
    }
}
