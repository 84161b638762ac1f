//! One build per directory: a build holds an exclusive advisory lock
//! (`flock`) on its output directory and on every scratch directory for its
//! whole run, so that a second build into the same place stops at once with a
//! one-line error naming the directory and the process that holds it, instead
//! of both rewriting the same state and scratch files.
//!
//! The lock is taken on the directory itself, not on a lock file inside it:
//! a build leaves no file behind that is not part of the tablebase, and the
//! kernel drops the lock when the process ends, `kill -9` included, so a
//! killed build never leaves a stale lock for `--resume` to trip on.

use crate::{Error, Result};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Exclusive locks on directories, released when dropped (or when the
/// process ends).
#[derive(Debug, Default)]
pub struct DirLocks {
    held: Vec<(PathBuf, File)>,
}

impl DirLocks {
    /// Locks `dir` (which must exist) for this process, or fails at once if
    /// another process holds it. Locking a directory this value already
    /// holds is a no-op (an output directory may also be the scratch one).
    pub fn lock(&mut self, dir: &Path, what: &str) -> Result<()> {
        let canonical = dir
            .canonicalize()
            .map_err(|e| Error::io("locking the directory", dir, e))?;
        if self.held.iter().any(|(p, _)| *p == canonical) {
            return Ok(());
        }
        let file =
            File::open(&canonical).map_err(|e| Error::io("locking the directory", dir, e))?;
        // SAFETY: flock is called on a descriptor this function owns (it
        // stays open inside `file`, which `held` keeps until the lock is
        // released); LOCK_NB makes it return at once instead of waiting.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let holder = holder_of(&file)
                    .map(|pid| format!("process {pid}"))
                    .unwrap_or_else(|| "another process".into());
                return Err(Error::NotAvailable(format!(
                    "{} ({what}) is in use by another tbforge build ({holder}); wait for it to end, \
                     or pass another --out / --disk",
                    dir.display()
                )));
            }
            return Err(Error::io("locking the directory", dir, err));
        }
        self.held.push((canonical, file));
        Ok(())
    }
}

/// The process holding a `flock` on `file`'s inode, from `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 4242 08:02:1234 0 EOF`), where Linux says.
fn holder_of(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    // The device too: inode numbers repeat across file systems (a test's
    // tmpfs beside /tmp), and a match on the inode alone once named another
    // build's process.
    let want = (libc::major(meta.dev()), libc::minor(meta.dev()), meta.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, dev_inode) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        // MAJOR:MINOR:INODE, the device numbers in hex.
        let mut parts = dev_inode.split(':');
        let major = u32::from_str_radix(parts.next()?, 16).ok()?;
        let minor = u32::from_str_radix(parts.next()?, 16).ok()?;
        let ino: u64 = parts.next()?.parse().ok()?;
        (*kind == "FLOCK" && (major, minor, ino) == want)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = DirLocks::default();
        first.lock(dir.path(), "output").unwrap();
        // Locking again through the same value is fine (out == disk).
        first.lock(dir.path(), "scratch").unwrap();
        // flock locks belong to the open file description: a second one in
        // the same process conflicts exactly as another process's would.
        let mut second = DirLocks::default();
        let err = second.lock(dir.path(), "output").unwrap_err().to_string();
        assert!(err.contains("in use by another tbforge build"), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");
        assert!(
            err.contains(&format!("process {}", std::process::id())),
            "{err}"
        );
        drop(first);
        second.lock(dir.path(), "output").unwrap();
    }
}
