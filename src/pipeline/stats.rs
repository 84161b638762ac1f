//! Byte counters and peak memory for the build log.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes the pipeline read and wrote.
#[derive(Debug, Default)]
pub struct IoStats {
    read: AtomicU64,
    written: AtomicU64,
}

impl IoStats {
    /// Counts `n` bytes read.
    pub fn read(&self, n: u64) {
        self.read.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts `n` bytes written.
    pub fn wrote(&self, n: u64) {
        self.written.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

/// The process's peak resident memory in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
