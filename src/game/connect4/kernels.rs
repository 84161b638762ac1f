//! Connect Four partitions through the device-kernel interface: partition `n`
//! is solved from its only dependency, partition `n + 1`, by the kernel
//! `connect4_solve` on the GPU ([`super::cuda::Connect4Cuda`], which keeps
//! the last partition on the device) or by its CPU twin ([`Connect4Twin`]).

use super::twin::{Connect4SolveSpec, Connect4Tables, Connect4Twin};
use super::Connect4;
use crate::game::{
    Device, DeviceCheckOptions, DeviceCheckReport, Game, KernelSolve, PartitionKernels,
    SolvedPartitions,
};

// `tbforge bench gpu connect4`. A child of this module (it reads the solver),
// in the game's folder beside this file.
#[path = "check.rs"]
mod check;
use crate::value::PartitionId;
use crate::{Error, Result};

/// Where a Connect Four partition is solved.
enum Solver {
    /// The CPU twin (tests of the glue without a GPU).
    Twin,
    /// The kernel on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Box<super::cuda::Connect4Cuda>),
}

/// Connect Four's [`PartitionKernels`].
pub struct Connect4Kernels {
    game: Connect4,
    solver: Solver,
}

impl std::fmt::Debug for Connect4Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Connect4Kernels {
    /// The kernels of `game` on `device`; on the CPU, the twin.
    pub fn new(game: &Connect4, device: &Device) -> Result<Connect4Kernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(Box::new(super::cuda::Connect4Cuda::new(d.clone())?)),
        };
        Ok(Connect4Kernels {
            game: game.clone(),
            solver,
        })
    }

    /// The spec of partition `p`, if the kernel covers the board and indexes
    /// the partition as the game does.
    pub fn spec_of(&self, p: PartitionId) -> Option<Connect4SolveSpec> {
        let spec = Connect4SolveSpec::new(self.game.width(), self.game.height(), p.0).ok()?;
        let tables = Connect4Tables::new(spec).ok()?;
        (tables.size(p.0) == self.game.partition_size(p)).then_some(spec)
    }
}

/// Partition `n + 1`'s values among the solved partitions (`None` for the full board).
pub fn next_values<'a>(
    spec: &Connect4SolveSpec,
    solved: &SolvedPartitions<'a>,
) -> Result<Option<&'a [u8]>> {
    let Some(next) = spec.next() else {
        return Ok(None);
    };
    solved.get(PartitionId(next.n)).map(Some).ok_or_else(|| {
        Error::Cuda(format!(
            "connect4 partition {}: its moves lead to partition {}, which is not solved before it",
            spec.n, next.n
        ))
    })
}

impl PartitionKernels for Connect4Kernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        let spec = self.spec_of(p)?;
        Some(
            next_values(&spec, solved).and_then(|next| match &self.solver {
                Solver::Twin => Ok(KernelSolve::on_cpu(
                    Connect4Twin::new(spec, next)?.solve()?,
                    None,
                )),
                #[cfg(feature = "cuda")]
                Solver::Cuda(gpu) => {
                    let s = gpu.solve(spec, next)?;
                    Ok(KernelSolve {
                        compact: false,
                        values: s.values,
                        passes: None,
                        device_seconds: Some(s.seconds),
                    })
                }
            }),
        )
    }

    fn name(&self) -> String {
        match &self.solver {
            Solver::Twin => "connect4 on cpu (twin)".into(),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => format!("connect4 on cuda: {}", gpu.device().name()),
        }
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        check::device_check(self, opts)
    }
}
