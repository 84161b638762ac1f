//! Morris partitions through the device-kernel interface: a `k1-k2` partition
//! is solved by candidate-driven passes on the GPU ([`super::cuda::MorrisCuda`])
//! or by their CPU twin ([`CpuTwin`], the CPU backend of Morris builds); the
//! lost `2-k` partitions are filled on the spot. Phase I's placement layers
//! `tTT-a-b` are solved and searched forward where they are reached, by
//! kernels `place_solve` and `place_expand` or their twin ([`super::place`]).
//!
//! A partition whose working set ([`MorrisKernels::solve_bytes`]) does not
//! fit the device takes the pipeline's streamed path: on a GPU its chunks
//! are expanded by kernel `morris_stream_expand` through the generic stager
//! ([`super::stream`]), every partition kind alike; on the CPU the pipeline
//! expands them through the game's rules (no expander here).
//!
//! # A partition solved by a team
//!
//! [`PartitionKernels::solve_team`] splits a partition among the members of
//! a [`Team`] (one GPU each, or MPI ranks). On the GPU member j owns the
//! indices `team.slice(size, TEAM_ALIGN)`, contiguous and on whole 64-bit
//! words; the twin deals blocks of [`TWIN_TEAM_BLOCK`] indices round-robin
//! instead ([`crate::dist::Blocks`]), which keeps its members equally busy
//! in every pass (`CpuTwin::solve_team` says why). Either way members own
//! whole words, so
//! that every bitmap (the GPU's 32-bit candidate marks, the twin's 64-bit
//! ones, reached bits) splits on word bounds: a member lists and clears
//! whole words of its slice. Every member holds the whole partition's
//! values throughout: a pass reads successors anywhere, and the build
//! wants every partition whole on every member afterwards. The bytes never depend on the team's
//! size, because a pass reads distances below `d` only and writes `d`, so
//! who decides a position in pass `d` changes nothing.
//!
//! `k1-k2` partitions (retrograde passes, [`super::retro`]):
//! - the first scan covers the member's slice only, its event list names
//!   only the slice's indices; the members then all-gather their slices'
//!   values (`size` bytes in all), and combine the failure bits (OR), the
//!   longest distance seen (max) and the pending counts (sum), so that all
//!   take the same loop decisions;
//! - each pass, a member marks the predecessors of its *own* frontier (and
//!   its own capture events due) in a bitmap of the whole partition; the
//!   ranks it marked in another member's slice are listed (and cleared)
//!   and sent to that member (all-to-all), which claims them as capture
//!   events due now: its copy of its own slice is exact, so what is no
//!   longer pending drops out there. Then each member lists and checks the
//!   candidates of its own slice only, with the unchanged pass kernel. The
//!   ranks it decided are all-gathered and every other member writes them
//!   into its copy (the GPU in the next pass's first kernel): every
//!   position a pass `d` decides has byte `d + 2` (a win at odd `d` needs a
//!   successor lost at `d - 1`; a loss at even `d` is a candidate because of
//!   its longest successor, at `d - 1`), so no value bytes travel. The stop
//!   test uses the team's count of decided positions.
//!
//! So a pass moves, per member, 8 bytes per rank it marked in another
//! slice and 8 bytes per position decided anywhere. Ranks rather than the
//! other slices' bitmap words: a pass marks few positions (6-6 averages
//! under a million candidates a pass over 2.5 G indices, about 1 ms of GPU
//! time each), where the words would be an eighth of a byte per index, a
//! hundred times the pass's own time to stage. The GPU stages the lists
//! through host memory (copy back, collective, copy in) and keeps the
//! values, the dependencies, the bitmap and every list on the device
//! between passes.
//!
//! Members that are threads of one process (`--gpus`, where
//! [`Team::shares_memory`]) leave the host out and copy between GPUs
//! directly (peer copies, over NVLink where there is one). After the first
//! scan each takes the others' slices of values from their GPUs. In the
//! passes they own candidates by blocks of [`GPU_TEAM_BLOCK_WORDS`] bitmap
//! words dealt round-robin rather than by slices: a pass's decisions
//! cluster along the index, and with slices one GPU waited for the other
//! in every pass (8-7 of `max=8`: twice the candidates on one member). Each
//! pass a member copies its whole bitmap into every other member's GPU,
//! and after one barrier joins what it received into the words it owns,
//! where the position is still pending here (kernel `retro_merge_marks`,
//! the twin of claiming received ranks), clearing the words it does not
//! own. After the pass the members agree on the decided counts (the one
//! other collective) and each copies the others' lists of decided ranks.
//! A pass then moves an eighth of a byte per index to each other member,
//! whatever it marked: staged through host memory as ranks, 8-7 moved
//! 22 GB in 205 passes and took 31 times its one-GPU time on two H200s
//! (docs/SCALING.md).
//!
//! Placement layers `tTT-a-b` have no passes (every successor lies in
//! another partition): a member solves the reached indices of its slice
//! (the reached bits outside it cleared) and the members all-gather their
//! slices' values of reached indices, in index order; the concatenation is
//! the compact array, expanded back into the whole partition's bytes. The
//! lost `2-k` partitions (and lost layers) cost nothing: every member fills
//! them whole.

#[cfg(feature = "cuda")]
use std::sync::Arc;

use super::place::{self, PlaceSpec};
use super::retro::{word_range, CpuTwin, MorrisSolveSpec};
use super::{Morris, Part};
use crate::dist::slice_of;
use crate::dist::Team;
use crate::game::{
    ChunkExpander, Device, DeviceCheckOptions, DeviceCheckReport, ForwardTargets, Game,
    KernelSolve, PartitionKernels, SolvedPartitions, StreamTargets,
};
use crate::value::{PartitionId, Value};
use crate::{Error, Result};

/// The per-position expansion kernel (v3, capture walks shared by the warp).
pub const EXPAND_KERNEL: &str = "morris_expand3w";

/// The summary kernel: v3 with capture walks batched across positions, the
/// measured winner of kernels/PERF.md (5.67 G positions/s on an H100, 7-7).
pub const SUMMARY_KERNEL: &str = "morris_summary3b_lb";

/// Alignment of a team member's slice ([`Team::slice`]): whole 64-bit words
/// of every bitmap (module documentation).
pub const TEAM_ALIGN: u64 = 64;

/// Partitions smaller than this many indices are solved whole by every GPU
/// member at once rather than split: their passes are too short to hide
/// the collectives a split pass waits on, and no bytes need to travel.
pub const GPU_SPLIT_MIN: u64 = 1 << 25;

/// A GPU team's ownership of a pass's candidates when members copy from
/// each other's GPUs: blocks of this many 32-bit bitmap words (32768
/// indices) dealt round-robin (`retro_owns` in morris.cu).
pub const GPU_TEAM_BLOCK_WORDS: u64 = 1024;

/// Entries of the smallest candidate and frontier lists a device solve
/// works with (1 Mi: 8 MB each), which a partition's working set counts;
/// with room, a solve's lists hold every pending position.
pub const MIN_LIST: u64 = 1 << 20;

/// Entries below which a device solve's lists are refused (an error
/// naming the memory): [`MIN_LIST`] leaves room for the device's own
/// allocations (cached class tables) that a working set does not count.
pub const LIST_FLOOR: u64 = 1 << 16;

/// Device bytes of a solve's counters and launch buffers beside its lists.
pub const LIST_SLACK: u64 = 16 << 20;

/// The twin's ownership: blocks of this many indices dealt round-robin
/// ([`crate::dist::Blocks`]), fine enough that every region of the index,
/// busy or quiet in a pass, is shared by all members, coarse enough for a
/// work item of the first scan.
pub const TWIN_TEAM_BLOCK: u64 = 4096;

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
    /// The streamed path's module, compiled on a partition's first
    /// [`PartitionKernels::expander`] call (a build that keeps every
    /// partition on the device never pays for it), then shared.
    #[cfg(feature = "cuda")]
    pub(super) stream: Arc<std::sync::Mutex<Option<Arc<super::stream::StreamModule>>>>,
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
            #[cfg(feature = "cuda")]
            stream: Default::default(),
        })
    }

    /// The same kernels (and device) for another Morris game: the device
    /// check expands partitions of games other than the build's.
    pub fn for_game(&self, game: &Morris) -> MorrisKernels {
        MorrisKernels {
            game: game.clone(),
            ..self.clone()
        }
    }

    /// The streamed path's module on `device`, loaded on first use.
    #[cfg(feature = "cuda")]
    pub(super) fn stream_module(
        &self,
        device: &Arc<crate::backend::cuda::CudaDevice>,
    ) -> Result<Arc<super::stream::StreamModule>> {
        let mut slot = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = &*slot {
            return Ok(m.clone());
        }
        let m = Arc::new(super::stream::StreamModule::load(device.clone())?);
        *slot = Some(m.clone());
        Ok(m)
    }

    /// Device bytes [`PartitionKernels::solve`] of `p` (of `size` indices)
    /// needs on a GPU, from what `MorrisCuda` allocates:
    /// - `k1-k2`: the values (1 byte an index), the event list (8, sized
    ///   to the partition before the scan), the candidate bitmap (1/8),
    ///   both dependencies whole, the four class tables, and a candidate
    ///   list and two frontiers of at least [`MIN_LIST`] entries (8 bytes
    ///   each). With room, the lists hold every pending position (24 bytes
    ///   an index more); with less, a pass works through its candidates
    ///   part by part, which costs launches, not passes;
    /// - a placement layer: the values, the reached bits (1/8), both
    ///   targets' values whole and three class tables;
    /// - a lost partition: nothing (filled on the host).
    ///
    /// Plus a MiB for counters, statistics and alignment.
    pub fn solve_bytes(&self, p: PartitionId, size: u64) -> Option<u64> {
        const SLACK: u64 = 1 << 20;
        let blob = |a: u32, b: u32| -> u64 {
            if self.game.symmetry {
                8 * super::classes::HalfIndex::get(a, b).device_blob().len() as u64
            } else {
                0
            }
        };
        match Part::from_id(p)? {
            Part::Lost(_) => Some(0),
            Part::Place { .. } => {
                let spec = PlaceSpec::of(&self.game, p)?;
                if spec.lost {
                    return Some(0);
                }
                let targets: u64 = spec
                    .targets()
                    .iter()
                    .flatten()
                    .map(|t| t.size + blob(t.a, t.b))
                    .sum();
                Some(size + size.div_ceil(64) * 8 + targets + blob(spec.a, spec.b) + SLACK)
            }
            Part::Pair(..) => {
                let spec = spec_of(&self.game, p)?;
                let deps: u64 = spec.dependency_sizes().iter().sum();
                let (k1, k2) = (spec.k1, spec.k2);
                let tabs = if spec.symmetry {
                    blob(k1, k2) + blob(k2, k1) + blob(k2 - 1, k1) + blob(k1 - 1, k2)
                } else {
                    0
                };
                let lists = 3 * 8 * MIN_LIST.min(size) + LIST_SLACK;
                Some(size * (1 + 8) + size.div_ceil(32) * 4 + deps + tabs + lists + SLACK)
            }
        }
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
                    long: Default::default(),
                    compact: false,
                    values: s.value,
                    passes: Some(s.passes),
                    device_seconds: Some(t0.elapsed().as_secs_f64()),
                })
            }
        }
    }

    /// [`Self::solve_spec`] by one member of `team` (module documentation):
    /// the whole partition's values.
    pub fn solve_spec_team(
        &self,
        spec: MorrisSolveSpec,
        deps: Vec<&[u8]>,
        team: &dyn Team,
    ) -> Result<KernelSolve> {
        match &self.solver {
            Solver::Twin => {
                let s = CpuTwin::new(spec, deps)?.solve_team(team, TWIN_TEAM_BLOCK)?;
                Ok(KernelSolve::on_cpu(s.value, Some(s.passes)))
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                let t0 = std::time::Instant::now();
                let s = gpu.morris_solve_team(spec, &deps, team, TEAM_ALIGN)?;
                Ok(KernelSolve {
                    long: Default::default(),
                    compact: false,
                    values: s.value,
                    passes: Some(s.passes),
                    device_seconds: Some(t0.elapsed().as_secs_f64()),
                })
            }
        }
    }

    /// [`Self::solve_place`] by one member of `team` (module
    /// documentation): the whole partition's values. A member that fails
    /// fails them all, with the error of the first one in rank order.
    pub fn solve_place_team(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        deps: [Option<&[u8]>; 2],
        team: &dyn Team,
    ) -> Result<KernelSolve> {
        let reached = spec.reached_bits(reached)?;
        let slices: Vec<_> = (0..team.size())
            .map(|j| word_range(&slice_of(spec.size(), TEAM_ALIGN, j, team.size()), 64))
            .collect();
        let own = slices[team.rank()].clone();
        let mut mine = vec![0u64; reached.len()];
        mine[own.clone()].copy_from_slice(&reached[own.clone()]);
        let solved = self.solve_place(spec, &mine, deps);
        // Status byte 0 and the slice's reached values in index order, or 1
        // and the error.
        let message = match &solved {
            Ok(s) => {
                let mut out = vec![0u8];
                out.extend(reached_values(&reached[own.clone()], own.start, &s.values));
                out
            }
            Err(e) => {
                let mut out = vec![1u8];
                out.extend_from_slice(e.to_string().as_bytes());
                out
            }
        };
        let all = team.all_gather(&message)?;
        let mut solved = solved?;
        if let Some(bad) = all.iter().position(|m| m.first() != Some(&0)) {
            let text = String::from_utf8_lossy(all[bad].get(1..).unwrap_or_default());
            return Err(Error::Cuda(format!(
                "partition {}: team member {bad} failed: {text}",
                spec.name
            )));
        }
        let mut values = vec![0u8; spec.size() as usize];
        for (j, m) in all.iter().enumerate() {
            let words = &reached[slices[j].clone()];
            let base = slices[j].start;
            let want: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
            if m.len() as u64 - 1 != want {
                return Err(Error::Cuda(format!(
                    "partition {}: team member {j} sent {} values for {want} reached indices; report this as a bug",
                    spec.name,
                    m.len() - 1
                )));
            }
            let mut got = m[1..].iter();
            for (i, &w) in words.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    let r = (base + i) * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    values[r] = *got.next().expect("counted above");
                }
            }
        }
        solved.values = values;
        Ok(solved)
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
                    long: Default::default(),
                    compact: false,
                    values,
                    passes: None,
                    device_seconds: Some(t0.elapsed().as_secs_f64()),
                })
            }
        }
    }
}

/// The values of the indices whose bits are set in `words` (the reached
/// bits of words `first..`), in index order, from a whole partition's bytes.
fn reached_values<'v>(
    words: &'v [u64],
    first: usize,
    values: &'v [u8],
) -> impl Iterator<Item = u8> + 'v {
    words.iter().enumerate().flat_map(move |(i, &w)| {
        let base = (first + i) * 64;
        let mut w = w;
        std::iter::from_fn(move || {
            (w != 0).then(|| {
                let r = base + w.trailing_zeros() as usize;
                w &= w - 1;
                values[r]
            })
        })
    })
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

/// The partitions `spec`'s captures lead to, in
/// [`MorrisSolveSpec::dependencies`] order: each half's land in one, the
/// lost `2-k` when the capturing side is left with two pieces, else the
/// pair of its counts.
fn capture_parts(spec: &MorrisSolveSpec) -> Vec<Part> {
    spec.halves()
        .iter()
        .map(|half| {
            let (a, b) = (half.capture.a, half.capture.b);
            if a == 2 {
                Part::Lost(b)
            } else {
                Part::Pair(a.max(b), a.min(b))
            }
        })
        .collect()
}

/// The dependencies' values of `spec`, in [`MorrisSolveSpec::dependencies`] order.
pub fn dependencies<'a>(
    spec: &MorrisSolveSpec,
    solved: &SolvedPartitions<'a>,
) -> Result<Vec<&'a [u8]>> {
    capture_parts(spec)
        .into_iter()
        .zip(spec.dependencies())
        .map(|(part, name)| {
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

    fn solve_team(
        &self,
        p: PartitionId,
        solved: &SolvedPartitions<'_>,
        team: &dyn Team,
    ) -> Option<Result<KernelSolve>> {
        let part = Part::from_id(p)?;
        let on_gpu = !matches!(self.solver, Solver::Twin);
        if team.size() <= 1
            || matches!(part, Part::Lost(_))
            || (on_gpu && self.game.partition_size(p) < GPU_SPLIT_MIN)
        {
            // Nothing to split, or cheaper done whole on every member than
            // exchanged.
            return self.solve(p, solved);
        }
        let result = if let Some(spec) = PlaceSpec::of(&self.game, p) {
            let reached = solved.reached()?;
            if spec.lost {
                return self.solve(p, solved);
            }
            let deps = place_dependencies(&spec, solved);
            self.solve_place_team(&spec, reached, deps.each_ref().map(|d| d.as_deref()), team)
        } else {
            let spec = spec_of(&self.game, p)?;
            dependencies(&spec, solved).and_then(|deps| self.solve_spec_team(spec, deps, team))
        };
        // A member that stops on its own error would leave the others
        // waiting in their next collective: it ends the team's work first
        // (an error of a collective means another member already did).
        if let Err(e) = &result {
            if !matches!(e, Error::Team { .. }) {
                team.abort(&e.to_string());
            }
        }
        Some(result)
    }

    fn reads(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        match Part::from_id(p)? {
            Part::Lost(_) => Some(Vec::new()),
            // Placement layers are solved where the forward search reached
            // them, one layer after the other.
            Part::Place { .. } => None,
            Part::Pair(..) => Some(
                capture_parts(&spec_of(&self.game, p)?)
                    .into_iter()
                    .map(Part::id)
                    .collect(),
            ),
        }
    }

    fn own_device(&self) -> bool {
        !matches!(self.solver, Solver::Twin)
    }

    fn adopt(&self, p: PartitionId, owner: usize, values: &[u8], team: &dyn Team) -> Result<()> {
        match (&self.solver, spec_of(&self.game, p)) {
            #[cfg(feature = "cuda")]
            (Solver::Cuda(gpu), Some(spec)) if team.size() > 1 && team.shares_memory() => {
                gpu.adopt_from_peer(spec, owner, values, team)
            }
            _ => {
                let _ = (owner, values, team);
                Ok(())
            }
        }
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

    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        match &self.solver {
            // Not on a device.
            Solver::Twin => {
                let _ = (p, size);
                None
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(_) => self.solve_bytes(p, size),
        }
    }

    fn expander(
        &self,
        targets: &StreamTargets,
        device_bytes: u64,
    ) -> Option<Result<Box<dyn ChunkExpander>>> {
        match &self.solver {
            // The pipeline's CPU path is the reference itself.
            Solver::Twin => {
                let _ = (targets, device_bytes);
                None
            }
            #[cfg(feature = "cuda")]
            Solver::Cuda(gpu) => {
                // Decline what the kernel does not cover before compiling it.
                super::stream::StreamDesc::of(&self.game, targets)?;
                let stager = self.stream_module(gpu.device()).and_then(|m| {
                    m.stager(&self.game, targets, device_bytes)
                        .expect("the descriptor exists (checked above)")
                });
                Some(stager.map(|s| Box::new(s) as Box<dyn ChunkExpander>))
            }
        }
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
