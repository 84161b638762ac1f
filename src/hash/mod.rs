//! Perfect hash functions: rank a configuration to a dense index and unrank it
//! back, exact inverses.
//!
//! FIRST CUT: only the multinomial hash, written plainly; the hash issue
//! replaces this module with table-driven binomial, multinomial and
//! permutation hashes under the same API.

mod multinomial;

pub use multinomial::Multinomial;

/// Why a hash could not be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HashError {
    /// The space has more indices than a u64 holds.
    #[error("hash space {what} has more than 2^64 indices")]
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
}
