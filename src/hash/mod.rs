//! Perfect hash functions: rank a configuration to a dense index in
//! `0..size()` and unrank it back, exact inverses, in time linear in the board
//! and without heap allocation.
//!
//! - [`Binomial`]: k-subsets of up to 64 cells, as bitmasks;
//! - [`Multinomial`]: boards of up to 64 cells with fixed counts of colours
//!   `1..=c` plus empties (Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" Algorithms 1 and 2);
//! - [`Permutation`]: permutations of up to 20 items in lexicographic and
//!   Myrvold–Ruskey order, with parity and the parity-halved index (Edelkamp and Sulewski, "Parallel State Space Search on the GPU").
//!
//! All of them run on the constant tables in [`binomial_table`],
//! [`factorial_table`], [`divisor_table`] and [`exact_division_table`], and
//! two-colour multinomials on their own [`Multinomial::walk_table`]: plain
//! arrays that a GPU kernel can copy to its memory to run the same code.
//! [`bench::run`] times the hot paths.
//! The fast `rank`/`unrank` methods trust their input (a board of the space, a
//! rank below `size()`); on anything else they return an unspecified value but
//! never panic. The `checked_*` methods validate first.

pub mod bench;
mod binomial;
mod multinomial;
mod permutation;
mod random;
mod tables;

pub use binomial::Binomial;
pub use multinomial::{Multinomial, MAX_COLOURS};
pub use permutation::{lex_rank, lex_rank_parity, lex_unrank, parity, Parity, Permutation};
pub use random::{kernel_mix64, mix64, SplitMix64};
pub use tables::{
    binomial_table, divisor_table, exact_division_table, factorial_table, MAX_CELLS,
    MAX_PERMUTATION,
};

/// Why a hash could not be built, or an input does not belong to its space.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HashError {
    /// The space has more indices than a u64 holds.
    #[error("hash space {what} has more than 2^64 indices: split it into smaller partitions")]
    Overflow {
        /// The space, e.g. `multinomial(64; 20, 20)`.
        what: String,
    },
    /// The counts do not fit the board.
    #[error("bad hash shape {what}: {message}")]
    Shape {
        /// The space.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// A configuration given to a checked rank is not in the space.
    #[error("input not in hash space {what}: {message}")]
    Input {
        /// The space.
        what: String,
        /// What is wrong with the input.
        message: String,
    },
    /// A rank given to a checked unrank is not below the space's size.
    #[error("rank {rank} out of range for hash space {what}: it has {size} indices")]
    Range {
        /// The space.
        what: String,
        /// The rank given.
        rank: u64,
        /// The space's size.
        size: u64,
    },
}
