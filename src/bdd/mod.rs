//! Symbolic search with binary decision diagrams (BDDs), and BDD perfect
//! hashing (Edelkamp, "BDDs for Minimal Perfect Hashing: Merging Two
//! State-Space Compression Techniques").
//!
//! - [`layered_bfs`]: layered symbolic breadth-first search over a game's
//!   [`SymbolicSearch`] encoding (states as assignments to Boolean
//!   variables, moves as [`Action`]s on a few of them), reporting each
//!   layer's BDD nodes and states.
//! - [`BddRank`]: rank and unrank of the states a BDD holds, in
//!   lexicographic order, from satisfying-assignment counts cached per node:
//!   a minimal perfect hash of any set a BDD represents, so that a layer's
//!   values fit a byte array as long as the layer itself (the chapter's
//!   hybrid of symbolic search and bitvectors).
//!
//! Games provide their encodings (a `symbolic` module in the game's folder);
//! this module knows none of them.
//!
//! # The BDD library
//! Built on oxidd (0.10, complement-edge BDDs with the index-based manager).
//! Measured against biodivine-lib-bdd 0.5 on this job (the same layered
//! count of a 5x5 board with the same encoding, moves and union order, on a
//! 2-core machine shared with other work): see README.md's "Symbolic search"
//! section for the figures. The two compute the same layers, and take about
//! the same time on one thread; oxidd was chosen because
//! - its apply runs on several threads (biodivine-lib-bdd's is
//!   single-threaded), which a 16-core count of 7x6 needs;
//! - it has complement edges like CUDD, so its node counts are those of the
//!   published tables (the chapter used CUDD);
//! - its satisfying-assignment count is exact in any integer type (u128 here).
//!
//! biodivine-lib-bdd's advantages, recorded for a later choice: each BDD is
//! a compact array of its own (less memory for few large sets; no node table
//! sized up front) and a simpler API.

mod rank;
mod search;
mod set;
mod stacks;

pub use rank::{Assignment, BddRank};
pub use search::{
    image, layered_bfs, Action, LayerImage, LayerReport, SearchReport, SymbolicEncoding,
    SymbolicSearch,
};
pub use set::{BddOptions, Bdds, StateSet, BYTES_PER_NODE};
pub use stacks::Stacks;

/// Most variables a [`Bdds`] manager and an [`Assignment`] hold.
pub const MAX_VARIABLES: u32 = 128;
