//! Checkers partitions through the device-kernel interface: every partition
//! is solved whole by the first-scan and pass kernels of
//! `kernels/checkers.cu` on a GPU ([`super::cuda::CheckersCuda`]) or by their
//! CPU twin ([`super::twin`], what a CPU build of checkers runs), with the
//! generic solver's bytes (the twin's module documentation says why).
//!
//! A partition whose working set ([`CheckersKernels::solve_bytes`]) does not
//! fit `--gpu-mem-limit` takes the pipeline's streamed path, where the GPU
//! expands its chunks (`checkers_stream_expand`, [`super::stream`]); a
//! CPU build expands them through the game's rules.

use std::borrow::Cow;

use super::twin::{self, CheckersTables, TwinSolved};
use super::Checkers;
use crate::game::{
    ChunkExpander, Device, DeviceCheckOptions, DeviceCheckReport, KernelSolve, PartitionKernels,
    SolvedPartitions, StreamTargets,
};
use crate::value::{LongDistances, PartitionId};
use crate::{Error, Result};

// `tbforge bench gpu checkers`. A child of this module (it reads the
// solver), in the game's folder beside this file.
#[path = "check.rs"]
mod check;

/// A partition's tables and its dependencies' values.
pub type TablesAndValues<'a> = (CheckersTables, Vec<Cow<'a, [u8]>>);

/// Where a checkers partition is solved.
pub(super) enum Solver {
    /// The CPU twin, on all cores.
    Twin,
    /// The kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(std::sync::Arc<super::cuda::CheckersCuda>),
}

/// Checkers's [`PartitionKernels`].
pub struct CheckersKernels {
    game: Checkers,
    solver: Solver,
}

impl std::fmt::Debug for CheckersKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl CheckersKernels {
    /// The kernels of `game` on `device` (compiled and loaded there for a GPU).
    pub fn new(game: &Checkers, device: &Device) -> Result<CheckersKernels> {
        let solver = match device {
            Device::Cpu => Solver::Twin,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => Solver::Cuda(std::sync::Arc::new(super::cuda::CheckersCuda::new(
                d.clone(),
            )?)),
        };
        Ok(CheckersKernels {
            game: game.clone(),
            solver,
        })
    }

    /// The game.
    pub fn game(&self) -> &Checkers {
        &self.game
    }

    /// The tables of partition `p` and its dependencies' values from
    /// `solved` (the unsolved ones marked missing in the tables); `None`
    /// when `p` is not a partition of the game.
    pub fn tables<'a>(
        &self,
        p: PartitionId,
        solved: &SolvedPartitions<'a>,
    ) -> Option<Result<TablesAndValues<'a>>> {
        self.game.part(p)?;
        Some(CheckersTables::new(&self.game, p).map(|mut t| {
            let mut deps = Vec::with_capacity(t.deps.len());
            for j in 0..t.deps.len() {
                match solved.get_full(t.deps[j], t.dep_sizes[j]) {
                    Some(v) => deps.push(v),
                    None => {
                        t.mark_missing(j);
                        deps.push(Cow::Borrowed(&[][..]));
                    }
                }
            }
            (t, deps)
        }))
    }

    /// Solves the partition of `t` from `deps` and their long distances
    /// (`deps_long[j]`, in rank order) on this solver's device.
    pub fn solve_tables(
        &self,
        t: &CheckersTables,
        deps: &[&[u8]],
        deps_long: &[&[(u64, u32)]],
    ) -> Result<KernelSolve> {
        let given: Vec<Option<&[u8]>> = deps
            .iter()
            .enumerate()
            .map(|(j, d)| (!t.missing[j]).then_some(*d))
            .collect();
        twin::check_deps(t, &given)?;
        let ceiling = crate::Value::MAX_DISTANCE;
        let (solved, device_seconds) = match &self.solver {
            Solver::Twin => (twin::solve(&self.game, t, deps, deps_long, ceiling)?, None),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let (s, seconds) = gpu.solve(&self.game, t, deps, deps_long, true, ceiling)?;
                (s, Some(seconds))
            }
        };
        let TwinSolved {
            values,
            passes,
            long,
        } = solved;
        let long = LongDistances::from_entries(long).ok_or_else(|| {
            Error::NotAvailable(format!(
                "checkers partition {}: the solver listed a long distance twice or one that fits a byte; report this as a bug",
                t.partition
            ))
        })?;
        Ok(KernelSolve {
            values,
            long,
            compact: false,
            passes: Some(passes),
            device_seconds,
        })
    }

    /// Device bytes a solve of partition `p` takes at its peak on a GPU
    /// ([`CheckersTables::device_bytes`]).
    pub fn solve_bytes(&self, p: PartitionId) -> Option<u64> {
        Some(CheckersTables::new(&self.game, p).ok()?.device_bytes())
    }
}

impl PartitionKernels for CheckersKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        // Checkers solves every index: reached bits are not its business.
        if solved.reached().is_some() {
            return None;
        }
        let (t, deps) = match self.tables(p, solved)? {
            Ok(x) => x,
            Err(e) => return Some(Err(e)),
        };
        let deps: Vec<&[u8]> = deps.iter().map(|d| &**d).collect();
        let deps_long: Vec<&[(u64, u32)]> = t.deps.iter().map(|&d| solved.long(d)).collect();
        Some(self.solve_tables(&t, &deps, &deps_long))
    }

    fn working_set(&self, p: PartitionId, _size: u64) -> Option<u64> {
        match &self.solver {
            // Not on a device.
            Solver::Twin => {
                let _ = p;
                None
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(_) => self.solve_bytes(p),
        }
    }

    fn expander(
        &self,
        targets: &StreamTargets,
        device_bytes: u64,
    ) -> Option<Result<Box<dyn ChunkExpander>>> {
        self.game.part(targets.partition)?;
        match &self.solver {
            // The pipeline's CPU path is the reference itself.
            Solver::Twin => {
                let _ = device_bytes;
                None
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => Some(
                super::stream::CheckersStreamLaunch::new(gpu.clone(), &self.game, targets)
                    .and_then(|launch| {
                        crate::backend::cuda::stream::Stager::new(
                            gpu.device().clone(),
                            std::sync::Arc::new(launch),
                            targets.clone(),
                            device_bytes,
                        )
                    })
                    .map(|s| Box::new(s) as Box<dyn ChunkExpander>),
            ),
        }
    }

    fn name(&self) -> String {
        match &self.solver {
            Solver::Twin => "checkers on cpu (twin)".into(),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => format!("checkers on cuda: {}", gpu.device().name()),
        }
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        check::device_check(self, opts)
    }
}
