//! The library's error type. Every variant names the thing at fault and, where
//! there is one, the fix; modules with many failure modes keep their own enum
//! and are wrapped here.

use std::path::PathBuf;

/// Anything that can go wrong in tbforge.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No game of that name is built into tbforge.
    #[error("unknown game `{0}`: run `tbforge games` for the list")]
    UnknownGame(String),
    /// A `--param` was unknown, malformed or out of range.
    #[error("bad parameter for {game}: {message}")]
    BadParam {
        /// The game's name.
        game: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A position string could not be parsed or names no legal position.
    #[error("bad position `{text}` for {game}: {message}")]
    BadPosition {
        /// The game's name.
        game: String,
        /// The text as given.
        text: String,
        /// What is wrong, and the notation expected.
        message: String,
    },
    /// A perfect hash could not be built (sizes beyond u64, bad counts).
    #[error(transparent)]
    Hash(#[from] crate::hash::HashError),
    /// Reading or writing tablebase files or the manifest failed.
    #[error(transparent)]
    Format(#[from] crate::format::FormatError),
    /// An I/O error on a named path.
    #[error(transparent)]
    Io(crate::format::IoError),
    /// The solver needed a distance beyond what one value byte holds.
    #[error("partition {partition} of {game} needs distances beyond {max} plies, more than the one-byte value encoding holds")]
    DistanceOverflow {
        /// The game's name.
        game: String,
        /// The partition's name.
        partition: String,
        /// The longest distance the encoding holds.
        max: u32,
    },
    /// A game broke the solver's contract (a move into a later partition, a rank out of range).
    #[error("game {game} broke the solver's contract: {message}")]
    GameContract {
        /// The game's name.
        game: String,
        /// What went wrong.
        message: String,
    },
    /// A feature that is not part of this build or not built yet.
    #[error("{0}")]
    NotAvailable(String),
    /// Another member of the build's team (an MPI rank, or the thread of
    /// another GPU) failed, so this one stopped.
    #[error("rank {rank} of {size}: {message}; continue the build with --resume")]
    Team {
        /// This member's rank.
        rank: usize,
        /// Members in the team.
        size: usize,
        /// Which member failed, and how.
        message: String,
    },
    /// The CUDA backend could not be used.
    #[error("CUDA backend unavailable: {0}")]
    Cuda(String),
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io(crate::format::IoError::new(action, path, source))
    }
}

/// Result with tbforge's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
