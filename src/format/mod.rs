//! Tablebase files and the manifest.
//!
//! FIRST CUT, to be replaced by the tablebase-files issue: the error type only.

/// Why a tablebase file or manifest could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// An I/O error on a named file.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
