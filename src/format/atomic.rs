//! Files appear only complete: written under a temporary name in the same
//! directory, fsynced, renamed over the final name, and the directory fsynced
//! so that the rename itself survives a crash.

use super::FormatError;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name `path` is written under. `verify` never reads it: it
/// only opens names the manifest lists, and no manifest lists a temporary name.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes `parts` (concatenated) to `path` atomically.
pub(crate) fn write_atomic(path: &Path, parts: &[&[u8]]) -> Result<(), FormatError> {
    write_atomic_with(path, |f, tmp| {
        for part in parts {
            f.write_all(part)
                .map_err(|e| FormatError::io("writing", tmp, e))?;
        }
        Ok(())
    })
}

/// Creates the temporary file of `path`, lets `write` fill it (given the file
/// and its temporary name), then syncs it and renames it over `path`. On any
/// error the temporary is removed, so a failed write leaves nothing behind.
pub(crate) fn write_atomic_with<R, E: From<FormatError>>(
    path: &Path,
    write: impl FnOnce(&mut File, &Path) -> Result<R, E>,
) -> Result<R, E> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| FormatError::io("creating", &tmp, e))?;
        let r = write(&mut f, &tmp)?;
        f.sync_all()
            .map_err(|e| FormatError::io("syncing", &tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| FormatError::io("renaming into place", path, e))?;
        sync_dir(path)?;
        Ok(r)
    })();
    if result.is_err() {
        // Best effort: a leftover temporary is harmless but untidy (and the
        // next build removes it).
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn sync_dir(path: &Path) -> Result<(), FormatError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FormatError::io("syncing directory", dir, e))
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> Result<(), FormatError> {
    // Directories cannot be opened for syncing here; the rename is as durable as the OS makes it.
    Ok(())
}
