//! Byte counters and peak memory for the build log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bytes the pipeline read and wrote.
#[derive(Debug, Default)]
pub struct IoStats {
    read: AtomicU64,
    written: AtomicU64,
    busy_nanos: AtomicU64,
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

    /// Counts time spent in the pipeline.
    pub fn busy(&self, d: Duration) {
        self.busy_nanos.fetch_add(
            d.as_nanos().min(u128::from(u64::MAX)) as u64,
            Ordering::Relaxed,
        );
    }

    /// Seconds spent in the pipeline so far.
    pub fn busy_seconds(&self) -> f64 {
        self.busy_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }
}

/// Bytes a process moved to and from storage, as the kernel counts them
/// below the page cache: what the disks really saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StorageIo {
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent to storage (dirty pages written back), less those of files
    /// truncated or deleted before write-back.
    pub write_bytes: u64,
}

impl StorageIo {
    /// This process's counters so far (Linux `/proc/self/io`), if readable.
    pub fn of_process() -> Option<StorageIo> {
        let text = std::fs::read_to_string("/proc/self/io").ok()?;
        let field = |name: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))?
                .trim()
                .parse()
                .ok()
        };
        Some(StorageIo {
            read_bytes: field("read_bytes")?,
            write_bytes: field("write_bytes")?
                .saturating_sub(field("cancelled_write_bytes").unwrap_or(0)),
        })
    }
}

/// The process's peak resident memory in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
