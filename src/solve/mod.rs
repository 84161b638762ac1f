//! Solvers: forward search (reachability and layers) and retrograde analysis,
//! partition by partition in the game's dependency order.

#[cfg(feature = "bdd")]
mod bdd_layers;
mod bfs;
mod bitset;
mod build;
mod layer_search;
mod layered;
mod lock;
mod retro;
mod schedule;
mod solved;
mod stages;

pub use crate::game::Layout;
pub use crate::progress::Progress;
#[cfg(feature = "bdd")]
pub use bdd_layers::solve_bdd_layers;
pub use bfs::{frontier_bfs, one_bit_reachability, two_bit_bfs, Reachable, TwoBitResult};
pub use bitset::AtomicBitSet;
pub use build::{build_game, BuildOptions, BuildReport, BUILD_LOG};
pub use layer_search::{layered_forwards, layered_search};
pub use layered::{one_bit_bfs, partition_layer_bfs, PartitionLayers};
pub use retro::{solve_partition, solve_partition_reached};
pub use schedule::{solve_game, solve_game_external, SolvedGame};
pub use solved::write_solved;
pub use stages::{
    read_stages, render_stages_text, BuildStages, PartitionStage, Solver, StageSizes, StageTotals,
    StageWork,
};
