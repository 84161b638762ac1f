//! Solvers: forward search (reachability and layers) and retrograde analysis,
//! partition by partition in the game's dependency order.

mod bfs;
mod bitset;
mod build;
mod layered;
mod layout;
mod progress;
mod retro;
pub(crate) mod rules;
mod schedule;

pub use bfs::{frontier_bfs, one_bit_reachability, two_bit_bfs, Reachable, TwoBitResult};
pub use bitset::AtomicBitSet;
pub use build::{build_game, BuildOptions, BuildReport, BUILD_LOG};
pub use layered::{one_bit_bfs, partition_layer_bfs, PartitionLayers};
pub use layout::Layout;
pub use progress::Progress;
pub use retro::solve_partition;
pub use schedule::{solve_game, solve_game_external, SolvedGame};
