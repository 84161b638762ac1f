//! The partition schedule: solve every partition in the game's order, each
//! reading its successors' values from the partitions solved before it.

use super::bfs::{frontier_bfs, Reachable};
use super::retro::solve_partition;
use super::Progress;
use crate::game::Game;
use crate::game::Layout;
use crate::pipeline::{
    solve_partition_streamed, ByteFile, ExternalPlan, IoStats, PassCheckpoint, ScratchDisks,
    StreamDevice,
};
use crate::Result;

/// A fully solved game, in memory.
pub struct SolvedGame {
    /// Partition layout (solving order, sizes).
    pub layout: Layout,
    /// One value byte per index, per slot.
    pub values: Vec<Vec<u8>>,
    /// Forward-search results, for games with a start position.
    pub reachable: Option<Reachable>,
}

/// Solves `game` entirely in memory.
pub fn solve_game<G: Game>(game: &G, progress: &Progress) -> Result<SolvedGame> {
    let layout = Layout::new(game)?;
    let reachable = frontier_bfs(game, &layout, progress)?;
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    for slot in 0..layout.len() {
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let values = solve_partition(game, &layout, &deps, slot, progress)?;
        solved[slot] = Some(values);
    }
    progress.finish();
    let values = solved.into_iter().map(|v| v.unwrap_or_default()).collect();
    Ok(SolvedGame {
        layout,
        values,
        reachable,
    })
}

/// Solves `game` through the external-memory path only (every partition
/// chunked on `disks`), returning the values read back. The build uses the
/// same machinery with checkpoints; tests compare this with [`solve_game`].
pub fn solve_game_external<G: Game>(
    game: &G,
    disks: &ScratchDisks,
    plan: ExternalPlan,
    progress: &Progress,
) -> Result<Vec<Vec<u8>>> {
    let layout = Layout::new(game)?;
    let stats = IoStats::default();
    let mut values = Vec::new();
    let external = ExternalSolver {
        game,
        layout: &layout,
        disks,
        plan,
        progress,
        stats: &stats,
        device: None,
    };
    for slot in 0..layout.len() {
        external.solve(slot, None, None, &mut |_| Ok(()))?;
    }
    for slot in 0..layout.len() {
        let file = ByteFile::open_existing_parts(&disks.values_path(slot), layout.size(slot))?;
        let mut v = vec![0u8; layout.size(slot) as usize];
        file.read_at(0, &mut v)?;
        values.push(v);
    }
    progress.finish();
    Ok(values)
}

/// The external-memory path over one game's partitions: what stays the same
/// from partition to partition, so that the build (which records and resumes
/// checkpoints) and [`solve_game_external`] (which does not) solve a
/// partition alike.
pub(crate) struct ExternalSolver<'a, G> {
    /// The game.
    pub(crate) game: &'a G,
    /// Its partitions in solving order.
    pub(crate) layout: &'a Layout,
    /// Where the scratch files go.
    pub(crate) disks: &'a ScratchDisks,
    /// How partitions are chunked.
    pub(crate) plan: ExternalPlan,
    /// Progress display.
    pub(crate) progress: &'a Progress,
    /// Disk traffic counters.
    pub(crate) stats: &'a IoStats,
    /// The device the expand steps stream through, where the game's
    /// kernels cover a partition.
    pub(crate) device: Option<StreamDevice<'a>>,
}

impl<G: Game> ExternalSolver<'_, G> {
    /// Solves partition `slot` into its scratch value file, continuing from
    /// `resume` where given and handing each pass's checkpoint to
    /// `checkpoint`.
    pub(crate) fn solve(
        &self,
        slot: usize,
        reached: Option<&[u64]>,
        resume: Option<PassCheckpoint>,
        checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
    ) -> Result<()> {
        solve_partition_streamed(
            self.game,
            self.layout,
            self.disks,
            slot,
            reached,
            self.device,
            self.plan,
            self.progress,
            self.stats,
            resume,
            checkpoint,
        )
    }
}
