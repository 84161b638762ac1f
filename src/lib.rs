//! tbforge builds endgame databases (tablebases) of board games and puzzles by
//! retrograde analysis and breadth-first search over perfectly hashed state
//! spaces, writes them as compressed, checksummed files, verifies them, and
//! lets engines probe them.
//!
//! The library's parts, by concept:
//! - [`hash`]: perfect hash functions (rank/unrank) of boards and permutations;
//! - [`game`]: the [`Game`] trait and the built-in games;
//! - `bdd` (feature `bdd`): symbolic search with BDDs, and BDD perfect hashing;
//! - `solve` (feature `build`): forward search and retrograde analysis;
//! - `dist` (feature `build`): one build by several members (MPI ranks with
//!   feature `mpi`, or one thread per GPU);
//! - [`mod@format`]: the tablebase file format and the manifest;
//! - [`probe`]: what engines link to read values back;
//! - `compare` (feature `build`): two tablebases of one game, position by position;
//! - `search` (feature `build`): perft, and alpha-beta search that probes tablebases;
//! - `zstd_bench` (feature `build`): one partition as a single zstd stream against its file;
//! - `serve` (feature `serve`): the HTTP API and web explorer of `tbforge serve`.
#![warn(missing_docs)]

mod error;
pub mod format;
pub mod game;
pub mod hash;
pub mod probe;
pub mod registry;
mod value;
pub mod verify;

#[cfg(feature = "build")]
pub mod backend;
#[cfg(feature = "bdd")]
pub mod bdd;
#[cfg(feature = "build")]
pub mod compare;
#[cfg(feature = "build")]
pub mod dist;
#[cfg(feature = "build")]
pub mod export;
#[cfg(feature = "build")]
pub mod pipeline;
#[cfg(feature = "build")]
mod progress;
#[cfg(feature = "build")]
pub mod search;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "build")]
pub mod solve;
#[cfg(feature = "build")]
pub mod zstd_bench;

pub use error::{Error, Result};
pub use game::{Forward, Game, GameInfo, GameKind, Status};
pub use probe::Tablebase;
pub use value::{LongDistances, Outcome, PartitionId, Rank, Value, Weights};
