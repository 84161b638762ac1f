//! Tablebase files, the manifest and `info`.
//!
//! The rest of this page is the format's specification (src/format/FORMAT.md).
//!
#![doc = include_str!("FORMAT.md")]

mod atomic;
pub(crate) use atomic::write_atomic_with;
mod file;
mod info;
mod manifest;

#[cfg(feature = "build")]
pub use file::{write_engine_file, write_partition_file_par, write_partition_file_sparse};
pub use file::{
    write_memory_bytes, write_partition_file, write_partition_file_from, write_partition_file_with,
    BlockRef, FileSummary, Header, TableFile, WriteOptions, BLOCK_BYTES, ENGINE_BLOCK_POSITIONS,
    ENGINE_FORMAT_VERSION, ENGINE_ZSTD_LEVEL, FORMAT_VERSION, HEADER_LEN, INDEX_ENTRY_LEN,
    LONG_FORMAT_VERSION, MAGIC, TRAILER_LEN, TRAILER_MAGIC, ZSTD_LEVEL,
};
pub use info::{info, render_info_text, DepthRow, GroupRow, InfoReport, PlayerRow, PlayerTable};
pub use manifest::{
    file_name, read_manifest, write_manifest, Counts, EngineInfo, FileEntry, Manifest, Tally,
    Totals, MANIFEST_NAME,
};

use crate::game::GameKind;
use crate::value::{Outcome, PartitionId, Rank, Value};
use std::path::PathBuf;

/// How position values are stored in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueEncoding {
    /// One byte per position: the [`Value`] byte (outcome and distance).
    Byte,
    /// Two bits per position: the WDL code (0 illegal, 1 draw, 2 win, 3 loss;
    /// puzzles: 2 goal reachable, 1 not reachable), four positions per byte,
    /// the first position in the low bits.
    Wdl2,
}

impl ValueEncoding {
    /// The code written into file headers.
    pub const fn code(self) -> u8 {
        match self {
            ValueEncoding::Byte => 0,
            ValueEncoding::Wdl2 => 1,
        }
    }

    /// The encoding with header code `code`.
    pub const fn from_code(code: u8) -> Option<ValueEncoding> {
        match code {
            0 => Some(ValueEncoding::Byte),
            1 => Some(ValueEncoding::Wdl2),
            _ => None,
        }
    }

    /// Positions per stored byte.
    pub const fn positions_per_byte(self) -> u64 {
        match self {
            ValueEncoding::Byte => 1,
            ValueEncoding::Wdl2 => 4,
        }
    }

    /// The stored code of `value` in a game of `kind`.
    ///
    /// Byte: the value byte itself. Wdl2: [`Value::wdl_code`] for two-player
    /// games; for puzzles 2 when the goal is reachable (any distance), 1 when
    /// it is not, 0 illegal: distance parity means nothing in a puzzle.
    pub fn encode(self, kind: GameKind, value: Value) -> u8 {
        match (self, kind) {
            (ValueEncoding::Byte, _) => value.to_byte(),
            (ValueEncoding::Wdl2, GameKind::TwoPlayer) => value.wdl_code(),
            (ValueEncoding::Wdl2, GameKind::Puzzle) => {
                if value.is_illegal() {
                    0
                } else if value.distance().is_some() {
                    2
                } else {
                    1
                }
            }
        }
    }

    /// What a stored code says, in a game of `kind`.
    pub fn decode(self, kind: GameKind, code: u8) -> Stored {
        match self {
            ValueEncoding::Byte => Stored::from_value(kind, Value::from_byte(code)),
            ValueEncoding::Wdl2 => Stored {
                outcome: match code & 3 {
                    0 => None,
                    1 => Some(Outcome::Draw),
                    2 => Some(Outcome::Win),
                    _ => Some(Outcome::Loss),
                },
                distance: None,
                value: None,
            },
        }
    }
}

impl std::fmt::Display for ValueEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ValueEncoding::Byte => "byte",
            ValueEncoding::Wdl2 => "wdl2",
        })
    }
}

/// A stored position, read with its game's kind in mind.
///
/// Two-player: the outcome for the side to move and the distance in plies.
/// Puzzle: [`Outcome::Win`] when the goal is reachable (distance = moves to
/// it), [`Outcome::Draw`] when it is not; puzzles have no losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Stored {
    /// `None` for an illegal or unused index.
    pub outcome: Option<Outcome>,
    /// The distance, where the encoding stores it and the position is decided.
    pub distance: Option<u32>,
    /// The value byte, in one-byte files.
    #[serde(skip)]
    pub value: Option<Value>,
}

impl Stored {
    /// How a value reads to people: "win in 7", "draw", "loss in 4" (plies)
    /// in two-player games; "7 moves to the goal", "at the goal", "goal
    /// unreachable" in puzzles; "illegal" for none.
    pub fn describe(kind: GameKind, outcome: Option<Outcome>, distance: Option<u32>) -> String {
        match (kind, outcome, distance) {
            (_, None, _) => "illegal".into(),
            (GameKind::Puzzle, Some(Outcome::Win), Some(0)) => "at the goal".into(),
            (GameKind::Puzzle, Some(Outcome::Win), Some(d)) => {
                format!("{} to the goal", count(u64::from(d), "move", "moves"))
            }
            (GameKind::Puzzle, Some(Outcome::Win), None) => "goal reachable".into(),
            (GameKind::Puzzle, Some(_), _) => "goal unreachable".into(),
            (_, Some(o), Some(d)) => format!("{o} in {d}"),
            (_, Some(o), None) => o.to_string(),
        }
    }

    /// How `value` reads in a game of `kind`.
    pub fn from_value(kind: GameKind, value: Value) -> Stored {
        let outcome = match kind {
            GameKind::TwoPlayer => value.outcome(),
            GameKind::Puzzle => match value.to_byte() {
                0 => None,
                1 => Some(Outcome::Draw),
                _ => Some(Outcome::Win),
            },
        };
        Stored {
            outcome,
            distance: value.distance(),
            value: Some(value),
        }
    }

    /// True for an illegal or unused index.
    pub fn is_illegal(&self) -> bool {
        self.outcome.is_none()
    }
}

/// Why a tablebase file or manifest could not be written, read or trusted.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// An I/O error on a named file.
    #[error(transparent)]
    Io(IoError),
    /// A file's bytes are damaged or are not a tablebase file.
    #[error("{file}{}: {message}; rebuild or re-download it, then run `tbforge verify`",
        block.map(|b| format!(" block {b}")).unwrap_or_default())]
    Corrupt {
        /// The file's name.
        file: String,
        /// The damaged block, when the damage is inside one.
        block: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// A file was written by a newer or older, incompatible format.
    #[error("{file}: {}", version_message(*found, *supported))]
    Version {
        /// The file's name.
        file: String,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The manifest is missing, unreadable or inconsistent.
    #[error("manifest {}: {message}", path.display())]
    Manifest {
        /// The manifest's path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file does not belong to the tablebase that refers to it.
    #[error("{file}: {message}")]
    Mismatch {
        /// The file's name.
        file: String,
        /// What differs.
        message: String,
    },
    /// The position's partition has no file in this tablebase.
    #[error("partition {partition} is not in this tablebase (its manifest lists no file for it)")]
    NotInTablebase {
        /// The partition asked for.
        partition: PartitionId,
    },
    /// A rank beyond the partition's size.
    #[error("rank {rank} is out of range for partition {partition} ({})", count(*size, "index", "indices"))]
    RankOutOfRange {
        /// The partition.
        partition: PartitionId,
        /// The rank asked for.
        rank: Rank,
        /// The partition's size.
        size: u64,
    },
    /// The index names no legal position.
    #[error("partition {partition} rank {rank} is an illegal index (no position is stored there)")]
    IllegalIndex {
        /// The partition.
        partition: PartitionId,
        /// The rank.
        rank: Rank,
    },
    /// The index names a legal position of a partition that stores only the
    /// positions reachable from the start, and the start does not reach it.
    #[error("partition {partition} rank {rank} is not reachable from the start position (this tablebase stores only the reachable positions of that partition)")]
    NotReached {
        /// The partition.
        partition: PartitionId,
        /// The rank.
        rank: Rank,
    },
    /// The request needs data this tablebase does not store.
    #[error("{0}")]
    Unsupported(String),
    /// Values handed to the writer are inconsistent with the request.
    #[error("cannot write {file}: {message}")]
    BadInput {
        /// The file being written.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// What to do about a file of format `found` where this tbforge reads
/// `supported`: an older one is rebuilt, a newer one needs a newer tbforge.
fn version_message(found: u32, supported: u32) -> String {
    if (FORMAT_VERSION + 1..ENGINE_FORMAT_VERSION).contains(&found) && found < supported {
        format!("engine files of an older tbforge (format {found}); export them again with this one (`tbforge export DIR --engine OUT`, format {supported})")
    } else if (1..supported).contains(&found) {
        format!("written by an older tbforge (format {found}); rebuild the directory with this one (format {supported})")
    } else if found > supported {
        format!("written by a newer tbforge (format {found}); this one reads format {supported}: upgrade tbforge")
    } else {
        format!("format version {found} is none that tbforge wrote (this one reads format {supported}): the file is damaged")
    }
}

/// `n` and the noun that agrees with it: `count(1, "file", "files")` is
/// "1 file", `count(0, ...)` "0 files". Every count in a message or a
/// rendering goes through here, so none reads "1 files".
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl FormatError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, e: std::io::Error) -> Self {
        FormatError::Io(IoError::new(action, path, e))
    }
}

/// An I/O error on a named path: what both [`FormatError::Io`] and
/// [`crate::Error::Io`] hold, so that a caller handles the two alike.
#[derive(Debug, thiserror::Error)]
#[error("{action} {}: {source}", path.display())]
pub struct IoError {
    /// What was being done ("writing", "reading", "creating directory").
    pub action: &'static str,
    /// The path involved.
    pub path: PathBuf,
    /// The underlying error.
    #[source]
    pub source: std::io::Error,
}

impl IoError {
    /// `source`, which happened while doing `action` on `path`.
    pub fn new(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IoError {
            action,
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_picks_the_noun_that_agrees() {
        assert_eq!(count(0, "file", "files"), "0 files");
        assert_eq!(count(1, "file", "files"), "1 file");
        assert_eq!(count(2, "index", "indices"), "2 indices");
        assert_eq!(count(1, "index", "indices"), "1 index");
        let e = FormatError::RankOutOfRange {
            partition: PartitionId(3),
            rank: Rank(1),
            size: 1,
        };
        assert_eq!(
            e.to_string(),
            "rank 1 is out of range for partition 3 (1 index)"
        );
    }
}
