//! The device-kernel interface: how the generic build hands a whole partition
//! to a game's own kernels (on a CUDA GPU, or their CPU twins on all cores).
//!
//! A game that has kernels returns them from [`Game::kernels`](super::Game::kernels)
//! for a [`Device`]; the build then offers every partition it solves in
//! memory to [`PartitionKernels::solve`] and falls back to the generic solver
//! where the kernels decline. Whatever the device, the values must be the
//! generic solver's bytes: the golden and twin tests hold that.

use super::reached::ReachedView;
use crate::dist::Team;
use crate::value::{LongDistances, PartitionId};
use crate::Result;
use std::sync::atomic::AtomicU64;

/// Where a build may run a game's kernels.
#[derive(Clone, Debug, Default)]
pub enum Device {
    /// The CPU: the kernels' CPU twins, where a game has them.
    #[default]
    Cpu,
    /// A CUDA GPU, opened and shared by every game's kernels.
    #[cfg(feature = "cuda")]
    Cuda(std::sync::Arc<crate::backend::cuda::CudaDevice>),
}

impl Device {
    /// "cpu", or "cuda: DEVICE NAME", for logs and errors.
    pub fn describe(&self) -> String {
        match self {
            Device::Cpu => "cpu".into(),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => format!("cuda: {}", d.name()),
        }
    }
}

/// The values of partitions solved earlier in a build, by partition: what a
/// partition's moves into other partitions read.
#[derive(Clone, Debug, Default)]
pub struct SolvedPartitions<'a> {
    parts: Vec<(PartitionId, &'a [u8])>,
    compact: Vec<(PartitionId, ReachedView<'a>)>,
    reached: Option<&'a [u64]>,
    long: Vec<(PartitionId, &'a LongDistances)>,
}

impl<'a> SolvedPartitions<'a> {
    /// The given partitions' values.
    pub fn new(parts: impl IntoIterator<Item = (PartitionId, &'a [u8])>) -> Self {
        SolvedPartitions {
            parts: parts.into_iter().collect(),
            compact: Vec::new(),
            reached: None,
            long: Vec::new(),
        }
    }

    /// Adds the long distances of partitions that have some (whose value
    /// bytes are saturated there: [`LongDistances`]).
    pub fn with_long(
        mut self,
        parts: impl IntoIterator<Item = (PartitionId, &'a LongDistances)>,
    ) -> Self {
        self.long
            .extend(parts.into_iter().filter(|(_, l)| !l.is_empty()));
        self
    }

    /// Partition `p`'s long distances (empty for nearly every partition).
    pub fn long(&self, p: PartitionId) -> &'a [(u64, u32)] {
        self.long
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(&[][..], |(_, l)| l.entries())
    }

    /// Adds partitions held compact, only where reached
    /// ([`ReachedValues`](super::ReachedValues)).
    pub fn with_compact(
        mut self,
        parts: impl IntoIterator<Item = (PartitionId, ReachedView<'a>)>,
    ) -> Self {
        self.compact.extend(parts);
        self
    }

    /// The same, for a partition of which only the indices whose bits are set
    /// in `reached` (64 to a word, lowest bit first) are to be solved: a
    /// [`Forward::Layer`](super::Forward::Layer) partition. Every other index
    /// must come back as 0 (not reached).
    pub fn with_reached(mut self, reached: &'a [u64]) -> Self {
        self.reached = Some(reached);
        self
    }

    /// The reached bits of the partition being solved, when only those are to
    /// be solved (see [`SolvedPartitions::with_reached`]).
    pub fn reached(&self) -> Option<&'a [u64]> {
        self.reached
    }

    /// The partitions of `order` whose values `values` holds, slot by slot
    /// (`None`: not solved), as a build keeps them.
    pub fn from_slots(order: &[PartitionId], values: &[Option<&'a [u8]>]) -> Self {
        Self::new(
            order
                .iter()
                .zip(values)
                .filter_map(|(p, v)| Some((*p, (*v)?))),
        )
    }

    /// Partition `p`'s values, one byte per index, if it is solved and held
    /// that way (a partition held compact is not: see [`Self::get_compact`]).
    pub fn get(&self, p: PartitionId) -> Option<&'a [u8]> {
        self.parts.iter().find(|(q, _)| *q == p).map(|(_, v)| *v)
    }

    /// Partition `p`'s values, one byte per index for a partition of `len`
    /// indices, whichever way it is held (a compact one is expanded: for
    /// readers that need whole arrays).
    pub fn get_full(&self, p: PartitionId, len: u64) -> Option<std::borrow::Cow<'a, [u8]>> {
        match self.get(p) {
            Some(v) => Some(std::borrow::Cow::Borrowed(v)),
            None => Some(std::borrow::Cow::Owned(self.get_compact(p)?.to_full(len))),
        }
    }

    /// Partition `p`'s values, if it is solved and held compact.
    pub fn get_compact(&self, p: PartitionId) -> Option<ReachedView<'a>> {
        self.compact.iter().find(|(q, _)| *q == p).map(|(_, v)| *v)
    }
}

/// Where forward search marks successors: one bit per index (64 to a word,
/// lowest bit first) of each partition that moves from the expanded one can
/// reach, set by many threads at once.
#[derive(Clone, Debug, Default)]
pub struct ForwardTargets<'a> {
    parts: Vec<(PartitionId, &'a [AtomicU64])>,
}

impl<'a> ForwardTargets<'a> {
    /// The given partitions' bits.
    pub fn new(parts: impl IntoIterator<Item = (PartitionId, &'a [AtomicU64])>) -> Self {
        ForwardTargets {
            parts: parts.into_iter().collect(),
        }
    }

    /// Partition `p`'s bits, if moves may reach it.
    pub fn get(&self, p: PartitionId) -> Option<&'a [AtomicU64]> {
        self.parts.iter().find(|(q, _)| *q == p).map(|(_, v)| *v)
    }
}

/// A failure word before anything failed: kernels (common.cuh's `tb_fail`)
/// and their CPU twins keep the lowest `(code << 56) | rank` of what broke
/// in one `u64`, so that the report does not depend on thread timing.
pub const NO_FAILURE: u64 = u64::MAX;

/// A game's solver of whole partitions on one device: the host side of its
/// kernels (or their CPU twins), with exactly the generic solver's bytes.
pub trait PartitionKernels: Send + Sync + std::fmt::Debug {
    /// Values of partition `p` given the earlier partitions' values, or `None`
    /// when these kernels do not cover `p` (the generic solver takes it).
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>>;

    /// Partition `p` solved by every member of `team` together (an MPI
    /// rank, or the thread of one GPU each): every member calls this with
    /// the same arguments, solves its own slice ([`Team::slice`]) on its own
    /// device and exchanges what the others need through the team's
    /// collectives; every member returns the whole partition's values, the
    /// bytes [`PartitionKernels::solve`] would return. `None` (on every
    /// member alike) when these kernels cannot split `p`: the build then
    /// has one member solve it whole and hand it to the others.
    fn solve_team(
        &self,
        p: PartitionId,
        solved: &SolvedPartitions<'_>,
        team: &dyn Team,
    ) -> Option<Result<KernelSolve>> {
        let _ = (p, solved, team);
        None
    }

    /// The partitions a solve of `p` reads, where these kernels know them
    /// (`None`: unknown). With [`Self::own_device`], a team solves
    /// partitions that do not read each other side by side, one member each.
    fn reads(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        let _ = p;
        None
    }

    /// Whether this member solves on a device of its own (a GPU), so that
    /// members solving different partitions at once each go at full speed:
    /// a team then hands independent partitions ([`Self::reads`]) to
    /// different members instead of splitting each among all. False for CPU
    /// twins, whose members (MPI ranks) may share one host's cores.
    fn own_device(&self) -> bool {
        false
    }

    /// Called on every member of `team` alike once member `owner` has
    /// solved `p` whole and every member holds its values (`values`: this
    /// member's copy, where the build keeps it): a collective in which the
    /// kernels may take the owner's device copy for the later solves that
    /// read `p` (Morris: a copy between GPUs instead of an upload).
    fn adopt(&self, p: PartitionId, owner: usize, values: &[u8], team: &dyn Team) -> Result<()> {
        let _ = (p, owner, values, team);
        Ok(())
    }

    /// Forward search of [`Forward::Layer`](super::Forward::Layer) partition
    /// `p`: for every index whose bit is set in `reached` (64 to a word, lowest
    /// bit first), sets the bits of its successors in `next`. `None` when these
    /// kernels do not cover `p` (the generic search expands it); the bits set
    /// must be exactly the generic search's.
    fn expand(
        &self,
        p: PartitionId,
        reached: &[u64],
        next: &ForwardTargets<'_>,
    ) -> Option<Result<()>> {
        let _ = (p, reached, next);
        None
    }

    /// The whole forward search on this device, where the kernels cover the
    /// game: the two-bit BFS (seeds 001 and 002) from the start at
    /// `start` over `partitions` (each with its size, in the build's order).
    /// `None`: not covered (the generic search runs). The layers and
    /// counts must be exactly the generic search's.
    fn search(
        &self,
        start: (PartitionId, crate::value::Rank),
        partitions: &[(PartitionId, u64)],
    ) -> Option<Result<DeviceSearch>> {
        let _ = (start, partitions);
        None
    }

    /// Bytes of device memory [`PartitionKernels::solve`] of partition `p`
    /// needs at its peak (its values, what it reads of earlier partitions,
    /// its work arrays), where the kernels know: a partition that does not
    /// fit `--gpu-mem-limit` takes the streamed path. `None`: unknown, or
    /// not on a device.
    fn working_set(&self, p: PartitionId, size: u64) -> Option<u64> {
        let _ = (p, size);
        None
    }

    /// A streamed expander of partition `targets.partition`'s chunks on
    /// this device, keeping at most `device_bytes` of device memory, or
    /// `None` where these kernels do not cover the partition (the pipeline
    /// expands it on the CPU through the game's own rules).
    fn expander(
        &self,
        targets: &StreamTargets,
        device_bytes: u64,
    ) -> Option<Result<Box<dyn ChunkExpander>>> {
        let _ = (targets, device_bytes);
        None
    }

    /// A name for logs ("morris on cuda: NVIDIA H100").
    fn name(&self) -> String;

    /// Checks every kernel against its CPU twin on fresh random inputs,
    /// measures both, and compares whole-partition solves (`tbforge bench
    /// gpu`). On [`Device::Cpu`] the twin runs in the device's place (a dry
    /// run of the check itself). The default: nothing to check.
    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        Ok(DeviceCheckReport::new(self.name(), opts))
    }
}

/// What a device's forward search found ([`PartitionKernels::search`]).
#[derive(Clone, Debug, Default)]
pub struct DeviceSearch {
    /// Positions first reached at each depth (depth 0: the start).
    pub layers: Vec<u64>,
    /// Reachable positions of each partition, in the order asked.
    pub reachable: Vec<u64>,
    /// Seconds the device was busy, where it was a device and not a CPU twin.
    pub device_seconds: Option<f64>,
}

/// One partition solved by a game's kernels: its values and what the solve
/// took, for the build log.
#[derive(Clone, Debug, Default)]
pub struct KernelSolve {
    /// The partition's values, the generic solver's bytes: one per index,
    /// or, where `compact`, one per reached index in index order.
    pub values: Vec<u8>,
    /// The exact distances of the positions whose byte is saturated
    /// because their distance is beyond a byte (where the kernels can go
    /// there; the generic solver stops with an error instead).
    pub long: LongDistances,
    /// Whether `values` holds only the reached indices' values (kernels may
    /// answer so when the partition is solved only where reached,
    /// [`SolvedPartitions::with_reached`]).
    pub compact: bool,
    /// Retrograde passes run (or plies stepped), where the kernels count them.
    pub passes: Option<u32>,
    /// Seconds the device was busy with this partition (uploads, kernels,
    /// downloads), where it was a device and not the CPU twin.
    pub device_seconds: Option<f64>,
}

impl KernelSolve {
    /// Values solved on the CPU (a twin): no device time.
    pub fn on_cpu(values: Vec<u8>, passes: Option<u32>) -> Self {
        KernelSolve {
            values,
            long: LongDistances::new(),
            compact: false,
            passes,
            device_seconds: None,
        }
    }
}

/// What `tbforge bench gpu` asks of a game's kernels: how much to check and
/// measure. Every comparison draws fresh random inputs from `seed`, so a run
/// can be replayed with the seed it printed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceCheckOptions {
    /// Seed of every random input.
    pub seed: u64,
    /// Random inputs per kernel-against-twin comparison.
    pub samples: usize,
    /// Throughput workloads (and synthetic inputs) cover at most 2^`work_log2`
    /// positions.
    pub work_log2: u32,
    /// Whole partitions of more positions are not solved.
    pub solve_max_size: u64,
    /// Whole partitions of more positions are solved on the device only (and
    /// sampled against the twin where the game can), not by the CPU twin.
    pub cpu_max_size: u64,
}

impl Default for DeviceCheckOptions {
    fn default() -> Self {
        DeviceCheckOptions {
            seed: 1,
            samples: 1 << 20,
            work_log2: 28,
            solve_max_size: u64::MAX,
            cpu_max_size: u64::MAX,
        }
    }
}

/// One row of a [`DeviceCheckReport`]: a kernel (or a whole solve) run on
/// the device and by its CPU twin over the same inputs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceCheckRow {
    /// The kernel or the solve ("morris_expand3w", "retro solve").
    pub what: String,
    /// The partition or board.
    pub target: String,
    /// Positions the device ran.
    pub positions: u64,
    /// Seconds of the CPU twin (all cores), where it ran.
    pub cpu_seconds: Option<f64>,
    /// Seconds of the device, where it ran.
    pub gpu_seconds: Option<f64>,
    /// Positions per second of the CPU twin (its own positions: it may run a
    /// sample of the device's).
    pub cpu_positions_per_second: Option<f64>,
    /// Positions per second of the device.
    pub gpu_positions_per_second: Option<f64>,
    /// Device rate over CPU rate.
    pub ratio: Option<f64>,
    /// Whether the results were identical; `None`: not compared (a
    /// throughput-only or device-only row).
    pub matched: Option<bool>,
    /// What was compared, how, and the first difference if any.
    pub detail: String,
}

impl DeviceCheckRow {
    /// A row for `what` on `target` over `positions` positions, nothing timed
    /// or compared yet.
    pub fn new(what: impl Into<String>, target: impl Into<String>, positions: u64) -> Self {
        DeviceCheckRow {
            what: what.into(),
            target: target.into(),
            positions,
            cpu_seconds: None,
            gpu_seconds: None,
            cpu_positions_per_second: None,
            gpu_positions_per_second: None,
            ratio: None,
            matched: None,
            detail: String::new(),
        }
    }

    /// The CPU twin ran `positions` positions in `seconds`.
    pub fn cpu(mut self, positions: u64, seconds: f64) -> Self {
        self.cpu_seconds = Some(seconds);
        self.cpu_positions_per_second = Some(positions as f64 / seconds.max(1e-9));
        self.rate_ratio()
    }

    /// The device ran `positions` positions in `seconds`.
    pub fn gpu(mut self, positions: u64, seconds: f64) -> Self {
        self.gpu_seconds = Some(seconds);
        self.gpu_positions_per_second = Some(positions as f64 / seconds.max(1e-9));
        self.rate_ratio()
    }

    /// The outcome of the comparison, and what it was.
    pub fn matched(mut self, matched: bool, detail: impl Into<String>) -> Self {
        self.matched = Some(matched);
        self.detail = detail.into();
        self
    }

    /// A note on a row that compared nothing.
    pub fn note(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    fn rate_ratio(mut self) -> Self {
        if let (Some(c), Some(g)) = (self.cpu_positions_per_second, self.gpu_positions_per_second) {
            self.ratio = Some(g / c.max(1e-9));
        }
        self
    }
}

/// What [`PartitionKernels::device_check`] found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DeviceCheckReport {
    /// The kernels and their device ([`PartitionKernels::name`]).
    pub kernels: String,
    /// The options the check ran with (the seed replays it).
    pub options: Option<DeviceCheckOptions>,
    /// CPU threads the twins ran on.
    pub cpu_threads: usize,
    /// The rows, in the order they ran.
    pub rows: Vec<DeviceCheckRow>,
}

impl DeviceCheckReport {
    /// An empty report of `kernels` run with `opts`.
    pub fn new(kernels: impl Into<String>, opts: &DeviceCheckOptions) -> Self {
        DeviceCheckReport {
            kernels: kernels.into(),
            options: Some(opts.clone()),
            cpu_threads: rayon::current_num_threads(),
            rows: Vec::new(),
        }
    }

    /// No comparison mismatched.
    pub fn all_matched(&self) -> bool {
        self.rows.iter().all(|r| r.matched != Some(false))
    }

    /// Comparisons made.
    pub fn compared(&self) -> usize {
        self.rows.iter().filter(|r| r.matched.is_some()).count()
    }

    /// The rows as a Markdown table, then one line of totals.
    pub fn render_table(&self) -> String {
        fn num(v: Option<f64>, digits: usize) -> String {
            v.map_or("-".into(), |v| format!("{v:.digits$}"))
        }
        let mut out = format!(
            "| kernel | target | positions | CPU {} thr s | GPU s | CPU M pos/s | GPU M pos/s | ratio | matched | detail |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
            self.cpu_threads
        );
        for r in &self.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.what,
                r.target,
                r.positions,
                num(r.cpu_seconds, 3),
                num(r.gpu_seconds, 4),
                num(r.cpu_positions_per_second.map(|v| v / 1e6), 1),
                num(r.gpu_positions_per_second.map(|v| v / 1e6), 1),
                r.ratio.map_or("-".into(), |v| format!("{v:.1}x")),
                match r.matched {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                },
                r.detail
            ));
        }
        let bad = self
            .rows
            .iter()
            .filter(|r| r.matched == Some(false))
            .count();
        out.push_str(&format!(
            "\n{}: {} comparisons, {bad} mismatched\n",
            self.kernels,
            self.compared()
        ));
        out
    }
}

pub use crate::backend::stream::{
    block_lookup_twin, group_pairs, ChunkDone, ChunkExpander, ChunkJob, ChunkTiming, Lookup,
    OwnedRequests, RequestPiece, Requests, StreamTargets, STREAM_DRAWN, STREAM_ILLEGAL,
    STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING, STREAM_PENDING,
};
