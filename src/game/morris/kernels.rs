//! Morris partitions through the device-kernel interface: a `k1-k2` partition
//! is solved by candidate-driven passes on the GPU ([`super::cuda::MorrisCuda`])
//! or by their CPU twin ([`CpuTwin`], the CPU backend of Morris builds); the
//! lost `2-k` partitions are filled on the spot. Phase I's placement layers
//! `tTT-a-b` are solved and searched forward where they are reached, by
//! kernels `place_solve` and `place_expand` or their twin ([`super::place`]).

#[cfg(feature = "cuda")]
use std::sync::Arc;

use super::place::{self, PlaceSpec};
use super::retro::{CpuTwin, MorrisSolveSpec};
use super::{Morris, Part};
use crate::game::{
    Device, DeviceCheckOptions, DeviceCheckReport, ForwardTargets, Game, KernelSolve,
    PartitionKernels, SolvedPartitions,
};
use crate::value::{PartitionId, Value};
use crate::{Error, Result};

/// The per-position expansion kernel (v3, capture walks shared by the warp).
pub const EXPAND_KERNEL: &str = "morris_expand3w";

/// The summary kernel: v3 with capture walks batched across positions, the
/// measured winner of kernels/PERF.md (5.67 G positions/s on an H100, 7-7).
pub const SUMMARY_KERNEL: &str = "morris_summary3b_lb";

/// Where a Morris partition is solved.
#[derive(Clone)]
pub(super) enum Solver {
    /// The CPU twin, on all cores.
    Twin,
    /// The Morris kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Arc<super::cuda::MorrisCuda>),
}

/// Morris's [`PartitionKernels`].
#[derive(Clone)]
pub struct MorrisKernels {
    pub(super) game: Morris,
    pub(super) solver: Solver,
}

impl std::fmt::Debug for MorrisKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl MorrisKernels {
    /// The kernels of `game` on `device` (compiled and loaded there for a GPU).
    pub fn new(game: &Morris, device: &Device) -> Result<MorrisKernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(Arc::new(super::cuda::MorrisCuda::new(d.clone())?)),
        };
        Ok(MorrisKernels {
            game: game.clone(),
            solver,
        })
    }

    /// The values of `spec` from its dependencies' values.
    pub fn solve_spec(&self, spec: MorrisSolveSpec, deps: Vec<&[u8]>) -> Result<KernelSolve> {
        match &self.solver {
            Solver::Twin => {
                let s = CpuTwin::new(spec, deps)?.solve()?;
                Ok(KernelSolve::on_cpu(s.value, Some(s.passes)))
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t0 = std::time::Instant::now();
                let s = gpu.morris_solve(spec, &deps)?;
                Ok(KernelSolve {
                    compact: false,
                    values: s.value,
                    passes: Some(s.passes),
                    device_seconds: Some(t0.elapsed().as_secs_f64()),
                })
            }
        }
    }

    /// Values of placement layer `spec` where `reached` is set, from its
    /// targets' values (quiet, capture).
    pub fn solve_place(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        deps: [Option<&[u8]>; 2],
    ) -> Result<KernelSolve> {
        match &self.solver {
            Solver::Twin => Ok(KernelSolve::on_cpu(
                place::solve(spec, reached, deps)?,
                None,
            )),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t0 = std::time::Instant::now();
                let values = gpu.place_solve(spec, reached, deps)?.value;
                Ok(KernelSolve {
                    compact: false,
                    values,
                    passes: None,
                    device_seconds: Some(t0.elapsed().as_secs_f64()),
                })
            }
        }
    }
}

/// The targets' values of placement layer `spec` (quiet, capture), where
/// they are solved. One that is not is `None`: as with the generic solver,
/// that is an error (naming it) only if a reached position moves there, so
/// a layer that play does not reach needs nothing.
/// Layers held compact are expanded: the kernels read whole arrays.
pub fn place_dependencies<'a>(
    spec: &PlaceSpec,
    solved: &SolvedPartitions<'a>,
) -> [Option<std::borrow::Cow<'a, [u8]>>; 2] {
    spec.targets()
        .map(|t| t.and_then(|t| solved.get_full(t.id, t.size)))
}

/// The spec of partition `p` of `game`, for the `k1-k2` partitions the
/// kernels solve (indexed as the game indexes them).
pub fn spec_of(game: &Morris, p: PartitionId) -> Option<MorrisSolveSpec> {
    let spec = match Part::from_id(p)? {
        Part::Pair(k1, k2) => MorrisSolveSpec::new(k1, k2, game.symmetry).ok()?,
        Part::Lost(_) | Part::Place { .. } => return None,
    };
    (spec.size() == game.partition_size(p)).then_some(spec)
}

/// The dependencies' values of `spec`, in [`MorrisSolveSpec::dependencies`] order.
pub fn dependencies<'a>(
    spec: &MorrisSolveSpec,
    solved: &SolvedPartitions<'a>,
) -> Result<Vec<&'a [u8]>> {
    // Each half's captures land in one partition: the lost `2-k` when the
    // capturing side is left with two pieces, else the pair of its counts.
    spec.halves()
        .iter()
        .zip(spec.dependencies())
        .map(|(half, name)| {
            let (a, b) = (half.capture.a, half.capture.b);
            let part = if a == 2 {
                Part::Lost(b)
            } else {
                Part::Pair(a.max(b), a.min(b))
            };
            solved.get(part.id()).ok_or_else(|| {
                Error::Cuda(format!(
                    "partition {}: its captures lead to {name}, which is not solved before it",
                    spec.name()
                ))
            })
        })
        .collect()
}

impl PartitionKernels for MorrisKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        if let Part::Lost(_) = Part::from_id(p)? {
            // The side to move has two pieces: every position is lost at
            // distance 0 (the generic solver's bytes), and every index is a
            // position, so no kernel is needed to know it.
            let values =
                vec![Value::at_distance(0)?.to_byte(); self.game.partition_size(p) as usize];
            return Some(Ok(KernelSolve::on_cpu(values, Some(0))));
        }
        if let Some(spec) = PlaceSpec::of(&self.game, p) {
            // Only reached positions are solved; without the bits the
            // generic solver takes the partition.
            let reached = solved.reached()?;
            let deps = place_dependencies(&spec, solved);
            return Some(self.solve_place(&spec, reached, deps.each_ref().map(|d| d.as_deref())));
        }
        let spec = spec_of(&self.game, p)?;
        Some(dependencies(&spec, solved).and_then(|deps| self.solve_spec(spec, deps)))
    }

    fn expand(
        &self,
        p: PartitionId,
        reached: &[u64],
        next: &ForwardTargets<'_>,
    ) -> Option<Result<()>> {
        let spec = PlaceSpec::of(&self.game, p)?;
        // A target without bits here is an error (naming it) only if a
        // reached position moves there, as in the generic search.
        let targets = spec.targets().map(|t| t.and_then(|t| next.get(t.id)));
        Some(match &self.solver {
            Solver::Twin => place::expand(&spec, reached, targets),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => gpu.place_expand(&spec, reached, targets).map(|_| ()),
        })
    }

    fn name(&self) -> String {
        match &self.solver {
            Solver::Twin => "morris on cpu (twin)".into(),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => format!("morris on cuda: {}", gpu.device().name()),
        }
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        super::check::device_check(self, opts)
    }
}
