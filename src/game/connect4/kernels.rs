//! Connect Four plies through the device-kernel interface. Plies are
//! layered: the forward search steps ply `n` to ply `n + 1` with kernel
//! `connect4_expand`, and ply `n` is solved only where reached, from ply
//! `n + 1` held compact, by kernel `connect4_solve`, answering compact; on
//! the GPU ([`super::cuda::Connect4Cuda`], which keeps the last ply on the
//! device) or by their CPU twins ([`super::twin`]).
//!
//! Without the reached bits of the ply, or with ply `n + 1` held one byte
//! per index, the kernels decline and the generic solver takes the ply.
//!
//! A team ([`PartitionKernels::solve_team`]) splits a ply by its reached
//! bits' words: each member takes a contiguous slice of them
//! ([`Team::slice`], on multiples of [`twin::TEAM_ALIGN`] words, a directory
//! block, so that a slice starts on a directory entry), solves the reached
//! indices of its words only, and the members all-gather their compact
//! values (with their failure bits, so that a broken input fails every member
//! alike). There are no passes, hence nothing else to exchange: the pieces in
//! rank order are the whole ply's compact values, because the compact order
//! is the index order and the slices are contiguous in it. Every member then
//! holds the whole ply, which ply `n - 1` reads; a GPU member also completes
//! its device copy of the ply with the others' pieces (see
//! [`super::cuda`]). The forward search is not split: every member runs the
//! whole of it, so every member holds every ply's reached bits.

use super::twin::{self, Connect4SolveSpec, Connect4Tables, Connect4Twin};
use super::Connect4;
use crate::game::{
    ChunkExpander, Device, DeviceCheckOptions, DeviceCheckReport, ForwardTargets, Game,
    KernelSolve, PartitionKernels, ReachedView, SolvedPartitions, StreamTargets,
};

// `tbforge bench gpu connect4`. A child of this module (it reads the solver),
// in the game's folder beside this file.
#[path = "check.rs"]
mod check;
use crate::dist::Team;
use crate::value::PartitionId;
use crate::{Error, Result};

/// Where a Connect Four partition is solved.
enum Solver {
    /// The CPU twins, on all cores: what a CPU build runs.
    Twin,
    /// The kernels on a GPU.
    #[cfg(feature = "cuda")]
    Cuda(Box<super::cuda::Connect4Cuda>),
}

/// Connect Four's [`PartitionKernels`].
pub struct Connect4Kernels {
    game: Connect4,
    solver: Solver,
    /// The streamed path's kernel, on a GPU only: on the CPU the pipeline's
    /// own expansion through the game's rules is the reference itself.
    #[cfg(feature = "cuda")]
    streamed: Option<super::stream::StreamKernels>,
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
            #[cfg(feature = "cuda")]
            streamed: streamed_on(&solver),
            solver,
        })
    }

    /// A second solver of the same game on the same device (its own state:
    /// a GPU's kept ply, staging buffers), as another member of a team would
    /// hold.
    pub fn sibling(&self) -> Result<Connect4Kernels> {
        let solver = match &self.solver {
            Solver::Twin => Solver::Twin,
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                Solver::Cuda(Box::new(super::cuda::Connect4Cuda::new(gpu.device_arc())?))
            }
        };
        Ok(Connect4Kernels {
            game: self.game.clone(),
            #[cfg(feature = "cuda")]
            streamed: streamed_on(&solver),
            solver,
        })
    }

    /// Ply `spec` split over `team` (see the module documentation), from
    /// ply `n + 1` held compact.
    fn solve_split(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<ReachedView<'_>>,
        team: &dyn Team,
    ) -> Result<KernelSolve> {
        match &self.solver {
            Solver::Twin => {
                let twin = Connect4Twin::new(spec, next)?;
                let reached = twin::check_reached(spec, twin.tables(), reached)?;
                let words = team.slice(reached.len() as u64, twin::TEAM_ALIGN);
                let dir = crate::game::reached::block_ranks(reached);
                let (piece, failed) = twin.solve_words_dir(reached, &dir, words)?;
                Ok(KernelSolve {
                    long: Default::default(),
                    values: twin::gather_slices(spec, reached, &dir, team, failed, piece)?,
                    compact: true,
                    passes: None,
                    device_seconds: None,
                })
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let s = gpu.solve_team(spec, reached, next, team)?;
                Ok(KernelSolve {
                    long: Default::default(),
                    values: s.values,
                    compact: true,
                    passes: None,
                    device_seconds: Some(s.seconds),
                })
            }
        }
    }

    /// The spec of partition `p`, if the kernel covers the board and indexes
    /// the partition as the game does.
    pub fn spec_of(&self, p: PartitionId) -> Option<Connect4SolveSpec> {
        let spec = Connect4SolveSpec::new(self.game.width(), self.game.height(), p.0).ok()?;
        let tables = Connect4Tables::new(spec).ok()?;
        (tables.size(p.0) == self.game.partition_size(p)).then_some(spec)
    }
}

/// The streamed path's kernel on `solver`'s GPU (compiled on first use).
#[cfg(feature = "cuda")]
fn streamed_on(solver: &Solver) -> Option<super::stream::StreamKernels> {
    match solver {
        Solver::Twin => None,
        Solver::Cuda(gpu) => Some(super::stream::StreamKernels::new(gpu.device_arc())),
    }
}

/// Ply `n + 1` held compact among the solved partitions: `Some(None)` for
/// the full board (no successors), `None` (decline) when ply `n + 1` is held
/// one byte per index, an error when it is not solved at all.
pub fn next_compact<'a>(
    spec: &Connect4SolveSpec,
    solved: &SolvedPartitions<'a>,
) -> Option<Result<Option<ReachedView<'a>>>> {
    let Some(next) = spec.next() else {
        return Some(Ok(None));
    };
    let p = PartitionId(next.n);
    match (solved.get_compact(p), solved.get(p)) {
        (Some(view), _) => Some(Ok(Some(view))),
        (None, Some(_)) => None,
        (None, None) => Some(Err(Error::NotAvailable(format!(
            "connect4 partition {}: its moves lead to partition {}, which is not solved before it",
            spec.n, next.n
        )))),
    }
}

impl PartitionKernels for Connect4Kernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        let spec = self.spec_of(p)?;
        let reached = solved.reached()?;
        let next = next_compact(&spec, solved)?;
        Some(next.and_then(|next| match &self.solver {
            Solver::Twin => Ok(KernelSolve {
                long: Default::default(),
                values: Connect4Twin::new(spec, next)?.solve(reached)?,
                compact: true,
                passes: None,
                device_seconds: None,
            }),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let s = gpu.solve(spec, reached, next)?;
                Ok(KernelSolve {
                    long: Default::default(),
                    values: s.values,
                    compact: true,
                    passes: None,
                    device_seconds: Some(s.seconds),
                })
            }
        }))
    }

    fn solve_team(
        &self,
        p: PartitionId,
        solved: &SolvedPartitions<'_>,
        team: &dyn Team,
    ) -> Option<Result<KernelSolve>> {
        if team.size() <= 1 {
            return self.solve(p, solved);
        }
        // Every decline below depends on the arguments alone: every member
        // declines alike, and none waits in a collective for one that did.
        let spec = self.spec_of(p)?;
        let reached = solved.reached()?;
        let next = next_compact(&spec, solved)?;
        Some(next.and_then(|next| self.solve_split(spec, reached, next, team)))
    }

    fn expand(
        &self,
        p: PartitionId,
        reached: &[u64],
        next: &ForwardTargets<'_>,
    ) -> Option<Result<()>> {
        let spec = self.spec_of(p)?;
        let bits = spec.next().and_then(|s| next.get(PartitionId(s.n)));
        Some(match &self.solver {
            Solver::Twin => twin::expand(spec, reached, bits),
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => gpu.expand(spec, reached, bits).map(|_| ()),
        })
    }

    /// The peak of [`PartitionKernels::solve`] on the GPU
    /// (`Connect4Cuda::solve`): ply `n`'s reached bits, their directory and
    /// its values, with ply `n + 1` held the same way beside them, plus the
    /// tables. Counted as if every index were reached (the values are one
    /// per reached index, which only the reached bits, not given here,
    /// tell): an upper bound, far above the real need of the large plies,
    /// most of whose indices play never reaches. The forward search
    /// (`Connect4Cuda::expand`: the two plies' bits) needs less. The
    /// driver's own reserve beside it (`backend::cuda::ROOM_MARGIN`) is left out: it is
    /// not the partition's, and the solve checks the free memory itself.
    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        if matches!(self.solver, Solver::Twin) {
            return None;
        }
        let spec = self.spec_of(p)?;
        let tables = Connect4Tables::new(spec).ok()?;
        let next = spec.next().map_or(0, |s| tables.size(s.n));
        // Bits (a word per 64 indices), directory (an entry per 8 words and
        // one past), values; each buffer holds one element at least.
        let ply = |s: u64| {
            let words = s.div_ceil(64).max(1);
            words * 8 + (words / 8 + 1) * 8 + s.max(1)
        };
        let tables_bytes = 8 * tables.flat().len() as u64;
        // The failure word beside them.
        Some(ply(size) + ply(next) + tables_bytes + 64)
    }

    fn expander(
        &self,
        targets: &StreamTargets,
        device_bytes: u64,
    ) -> Option<Result<Box<dyn ChunkExpander>>> {
        #[cfg(feature = "cuda")]
        if let Some(streamed) = &self.streamed {
            let spec = self.spec_of(targets.partition)?;
            return Some(streamed.expander(spec, targets, device_bytes));
        }
        let _ = (targets, device_bytes);
        None
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
