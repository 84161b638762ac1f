//! Write buffers (seed 002): records bucketed by the chunk they must be
//! applied to, collected in a bounded buffer, radix-sorted and flushed to one
//! run file per bucket; a later streamed pass reads each bucket back.
//!
//! Sorting by key before a flush makes each flushed segment ascending, so
//! applying a bucket walks its chunk's array in order (Korf's sorted merge)
//! rather than at random.

use super::disks::ScratchDisks;
use crate::{Error, Result};
use rdst::{RadixKey, RadixSort};
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Bits of a record key below the bucket number.
pub const LOW_BITS: u32 = 44;
/// The largest number of buckets one pass may use.
pub const MAX_BUCKETS: u64 = 1 << (64 - LOW_BITS);

/// One record: a key (bucket in the top bits, an index below) and a payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// `bucket << LOW_BITS | index`.
    pub key: u64,
    /// What the record carries (a requester's rank, a value).
    pub payload: u64,
}

impl Record {
    /// A record for `index` in `bucket`.
    #[inline]
    pub fn new(bucket: u64, index: u64, payload: u64) -> Record {
        debug_assert!(bucket < MAX_BUCKETS && index < 1 << LOW_BITS);
        Record {
            key: (bucket << LOW_BITS) | index,
            payload,
        }
    }

    /// The index below the bucket bits.
    #[inline]
    pub fn index(&self) -> u64 {
        self.key & ((1 << LOW_BITS) - 1)
    }

    fn bucket(&self) -> u64 {
        self.key >> LOW_BITS
    }
}

impl RadixKey for Record {
    const LEVELS: usize = 8;
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.key >> (level * 8)) as u8
    }
}

const RECORD_BYTES: usize = 16;

/// A bounded write buffer over per-bucket run files.
pub struct RunWriter<'a> {
    disks: &'a ScratchDisks,
    kind: &'static str,
    buffer: Mutex<Vec<Record>>,
    capacity: usize,
    bytes_written: AtomicU64,
    /// Bytes per bucket, so a reader notices a run file that was deleted or cut.
    written: Mutex<BTreeMap<u64, u64>>,
}

/// What a finished [`RunWriter`] wrote: bytes per bucket.
#[derive(Debug, Default)]
pub struct RunIndex {
    written: BTreeMap<u64, u64>,
    /// Total bytes written.
    pub bytes: u64,
}

impl<'a> RunWriter<'a> {
    /// A writer of run files of `kind` holding at most `capacity` records in memory.
    pub fn new(disks: &'a ScratchDisks, kind: &'static str, capacity: usize) -> RunWriter<'a> {
        RunWriter {
            disks,
            kind,
            buffer: Mutex::new(Vec::with_capacity(capacity.max(1))),
            capacity: capacity.max(1),
            bytes_written: AtomicU64::new(0),
            written: Mutex::new(BTreeMap::new()),
        }
    }

    /// Adds records; flushes when the buffer is full.
    pub fn push(&self, records: &[Record]) -> Result<()> {
        let mut buf = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let mut rest = records;
        while !rest.is_empty() {
            let room = self.capacity - buf.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            buf.extend_from_slice(now);
            rest = later;
            if buf.len() >= self.capacity {
                self.flush(&mut buf)?;
            }
        }
        Ok(())
    }

    /// Flushes what is left; says what was written.
    pub fn finish(self) -> Result<RunIndex> {
        let mut buf = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        self.flush(&mut buf)?;
        drop(buf);
        Ok(RunIndex {
            written: self.written.into_inner().unwrap_or_else(|e| e.into_inner()),
            bytes: self.bytes_written.load(Ordering::Relaxed),
        })
    }

    fn flush(&self, buf: &mut Vec<Record>) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        buf.radix_sort_unstable();
        let mut bytes = Vec::new();
        let mut start = 0;
        while start < buf.len() {
            let bucket = buf[start].bucket();
            let end = start + buf[start..].partition_point(|r| r.bucket() == bucket);
            bytes.clear();
            for r in &buf[start..end] {
                bytes.extend_from_slice(&r.key.to_le_bytes());
                bytes.extend_from_slice(&r.payload.to_le_bytes());
            }
            let path = self.disks.run_path(self.kind, bucket as usize);
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| Error::io("opening run file", &path, e))?;
            file.write_all(&bytes)
                .map_err(|e| Error::io("writing run file", &path, e))?;
            self.bytes_written
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            *self
                .written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(bucket)
                .or_default() += bytes.len() as u64;
            start = end;
        }
        buf.clear();
        Ok(())
    }
}

/// Streams bucket `bucket`'s records of `kind` in blocks of at most `block` records;
/// returns the bytes read.
pub fn read_bucket(
    disks: &ScratchDisks,
    kind: &str,
    index: &RunIndex,
    bucket: u64,
    block: usize,
    mut apply: impl FnMut(&[Record]) -> Result<()>,
) -> Result<u64> {
    let expected = index.written.get(&bucket).copied().unwrap_or(0);
    if expected == 0 {
        return Ok(0);
    }
    let path = disks.run_path(kind, bucket as usize);
    let damaged = |what: String| {
        Error::io(
            "reading run file",
            &path,
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{what}: scratch was changed during the build; resume it with --resume"),
            ),
        )
    };
    let mut file =
        std::fs::File::open(&path).map_err(|e| Error::io("opening run file", &path, e))?;
    let have = file
        .metadata()
        .map_err(|e| Error::io("reading size of", &path, e))?
        .len();
    if have != expected {
        return Err(damaged(format!("{have} bytes, {expected} were written")));
    }
    let block = block.max(1);
    let mut bytes = vec![0u8; block * RECORD_BYTES];
    let mut records = Vec::with_capacity(block);
    let mut total = 0u64;
    loop {
        let mut filled = 0;
        while filled < bytes.len() {
            let n = file
                .read(&mut bytes[filled..])
                .map_err(|e| Error::io("reading run file", &path, e))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled % RECORD_BYTES != 0 {
            return Err(damaged("ends inside a record".into()));
        }
        if filled == 0 {
            return Ok(total);
        }
        total += filled as u64;
        records.clear();
        for c in bytes[..filled].chunks_exact(RECORD_BYTES) {
            let key = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
            let payload = u64::from_le_bytes(c[8..].try_into().expect("8 bytes"));
            records.push(Record { key, payload });
        }
        apply(&records)?;
    }
}
