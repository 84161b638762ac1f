//! The partition schedule: solve every partition in the game's order, each
//! reading its successors' values from the partitions solved before it.

use super::bfs::{frontier_bfs, Reachable};
use super::layout::Layout;
use super::retro::solve_partition;
use super::Progress;
use crate::game::Game;
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
        let values = solve_partition(game, &layout, &solved, slot, progress)?;
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
