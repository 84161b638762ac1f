//! Device kernels of the permutation puzzles (sliding tiles, Top-Spin,
//! pancakes: one kernel family, `kernels/permutation.cu`), shared by the
//! three puzzles' folders, each of which hands its index to [`PermKernels`]
//! as a [`PermSpec`].
//!
//! Two whole-puzzle searches, on a CUDA GPU ([`cuda`]) or by their CPU twins
//! on all cores ([`twin`]):
//! - the build's forward search: the two-bit BFS (seeds 001 and 002, 2 bits
//!   per index; Korf's codes, unseen / frontier / next / expanded, so that
//!   each index is expanded once, where the generic search's depth-mod-3 codes
//!   expand it again every third layer) from the start, giving the layers and
//!   the reachable count ([`PartitionKernels::search`]);
//! - the values: a BFS from the goal with one byte per index (the value
//!   byte itself: distance `d` where first reached, draw where never), which
//!   is the generic solver's answer because every move of these puzzles is
//!   its own inverse (a slide back, the same twist or flip): the distance to
//!   the goal is the BFS depth from it ([`PartitionKernels::solve`]).
//!
//! Both need the whole index in device memory (2 bits, then 1 byte per
//! index); a puzzle larger than `--gpu-mem-limit` is built through the
//! external pipeline with the CPU's expansion.

pub mod twin;

#[cfg(feature = "cuda")]
pub mod cuda;

use crate::game::{
    Device, DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, DeviceSearch, KernelSolve,
    PartitionKernels, SolvedPartitions,
};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Rank};
use crate::Result;
use std::time::Instant;
pub use twin::PermSpec;

/// Where the searches run.
enum Solver {
    /// The CPU twins, on all cores: what a CPU build runs.
    Twin,
    /// The kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Box<cuda::PermCuda>),
}

/// A permutation puzzle's [`PartitionKernels`]: its one partition (id 0)
/// searched and solved whole.
pub struct PermKernels {
    game: String,
    spec: PermSpec,
    goal: u64,
    solver: Solver,
}

impl std::fmt::Debug for PermKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl PermKernels {
    /// The kernels of puzzle `game` (its canonical name, for logs), indexed
    /// as `spec` says, whose goal has index `goal`, on `device`.
    pub fn new(game: String, spec: PermSpec, goal: u64, device: &Device) -> Result<PermKernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(Box::new(cuda::PermCuda::new(d.clone())?)),
        };
        Ok(PermKernels {
            game,
            spec,
            goal,
            solver,
        })
    }

    /// The index layout the kernels were given.
    pub fn spec(&self) -> &PermSpec {
        &self.spec
    }

    /// Layers of the two-bit BFS from `start`, and device seconds (None on the CPU).
    pub fn two_bit_layers(&self, start: u64) -> Result<(Vec<u64>, Option<f64>)> {
        match &self.solver {
            Solver::Twin => Ok((twin::two_bit_bfs(&self.spec, start), None)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.two_bit_bfs(&self.spec, start)?;
                Ok((t.value, Some(t.seconds)))
            }
        }
    }

    /// Every index's value byte and the steps run, and device seconds.
    pub fn goal_values(&self) -> Result<(Vec<u8>, u32, Option<f64>)> {
        match &self.solver {
            Solver::Twin => {
                let (v, d) = twin::byte_bfs(&self.spec, self.goal)?;
                Ok((v, d, None))
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t = gpu.byte_bfs(&self.spec, self.goal)?;
                Ok((t.value.0, t.value.1, Some(t.seconds)))
            }
        }
    }

    /// The check kernel's successors of `idx` (see [`PermSpec::expand_listed`]).
    pub fn expand_listed(&self, idx: &[u64]) -> Result<Vec<u64>> {
        match &self.solver {
            Solver::Twin => Ok(self.spec.expand_listed(idx)),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => Ok(gpu.expand(&self.spec, idx)?.value),
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

impl PartitionKernels for PermKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        // The whole partition only (the puzzles have no layered partitions).
        if p != PartitionId(0) || solved.reached().is_some() {
            return None;
        }
        Some(
            self.goal_values()
                .map(|(values, steps, seconds)| KernelSolve {
                    values,
                    long: Default::default(),
                    compact: false,
                    passes: Some(steps),
                    device_seconds: seconds,
                }),
        )
    }

    fn search(
        &self,
        start: (PartitionId, Rank),
        partitions: &[(PartitionId, u64)],
    ) -> Option<Result<DeviceSearch>> {
        if partitions != [(PartitionId(0), self.spec.size)] || start.0 != PartitionId(0) {
            return None;
        }
        Some(
            self.two_bit_layers(start.1 .0)
                .map(|(layers, seconds)| DeviceSearch {
                    reachable: vec![layers.iter().sum()],
                    layers,
                    device_seconds: seconds,
                }),
        )
    }

    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        // The solve's byte per index (the two-bit array is freed before).
        let on_device = match &self.solver {
            Solver::Twin => false,
            #[cfg(feature = "cuda")]
            Solver::Cuda(_) => true,
        };
        (on_device && p == PartitionId(0)).then_some(size)
    }

    fn name(&self) -> String {
        format!(
            "{} permutation kernels on {}",
            self.game,
            self.device_name()
        )
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        let mut report = DeviceCheckReport::new(self.name(), opts);
        let spec = self.spec;
        let target = format!("{} ({} indices)", self.game, spec.size);
        // 1. The expansion itself on random indices: every successor index.
        let n = (opts.samples as u64)
            .min(1 << opts.work_log2.min(26))
            .max(1);
        let mut rng = SplitMix64::new(opts.seed);
        let idx: Vec<u64> = (0..n).map(|_| rng.below(spec.size)).collect();
        let t = Instant::now();
        let want = spec.expand_listed(&idx);
        let cpu = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let got = self.expand_listed(&idx)?;
        let gpu = t.elapsed().as_secs_f64();
        let diff = (0..idx.len()).find(|&i| {
            let r = i * twin::MAX_SUCCESSORS..(i + 1) * twin::MAX_SUCCESSORS;
            want[r.clone()] != got[r]
        });
        report.rows.push(
            DeviceCheckRow::new("perm_expand", &target, n)
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
        if spec.size > opts.solve_max_size {
            report.rows.push(
                DeviceCheckRow::new("two-bit BFS", &target, spec.size)
                    .note("not run: more indices than --solve-max-size"),
            );
            return Ok(report);
        }
        let on_cpu = spec.size <= opts.cpu_max_size;
        // 2. The two-bit BFS from the goal (the puzzles' start), whole.
        let t = Instant::now();
        let (layers, device) = self.two_bit_layers(self.goal)?;
        let gpu = device.unwrap_or_else(|| t.elapsed().as_secs_f64());
        let mut row =
            DeviceCheckRow::new("perm_two_bit_step (BFS)", &target, spec.size).gpu(spec.size, gpu);
        row = if on_cpu {
            let t = Instant::now();
            let want = twin::two_bit_bfs(&spec, self.goal);
            row = row.cpu(spec.size, t.elapsed().as_secs_f64());
            row.matched(
                want == layers,
                format!(
                    "layers: {} deep, {} reached{}",
                    layers.len() - 1,
                    layers.iter().sum::<u64>(),
                    if want == layers {
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
        // 3. The values: byte BFS from the goal.
        let t = Instant::now();
        let (values, steps, device) = self.goal_values()?;
        let gpu = device.unwrap_or_else(|| t.elapsed().as_secs_f64());
        let mut row =
            DeviceCheckRow::new("perm_byte_step (solve)", &target, spec.size).gpu(spec.size, gpu);
        row = if on_cpu {
            let t = Instant::now();
            let (want, _) = twin::byte_bfs(&spec, self.goal)?;
            row = row.cpu(spec.size, t.elapsed().as_secs_f64());
            let diff = want.iter().zip(&values).position(|(a, b)| a != b);
            let same = diff.is_none() && want.len() == values.len();
            row.matched(
                same,
                match diff {
                    None => format!("{} value bytes, {steps} steps", values.len()),
                    Some(i) => format!("index {i}: twin {} device {}", want[i], values[i]),
                },
            )
        } else {
            row.note(format!("device only: {steps} steps"))
        };
        report.rows.push(row);
        Ok(report)
    }
}
