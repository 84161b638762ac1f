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
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

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
///
/// Producers fill one buffer while a flusher thread sorts and writes the
/// previous one, so expansion never waits for the disk unless the disk is
/// slower than the producers (then `push` blocks: back-pressure). At most two
/// buffers of `capacity` records exist at once.
pub struct RunWriter {
    shared: Arc<Shared>,
    buffer: Mutex<Vec<Record>>,
    capacity: usize,
    full: Option<SyncSender<ToFlusher>>,
    empty: Mutex<Receiver<Vec<Record>>>,
    flusher: Option<std::thread::JoinHandle<()>>,
}

/// What the writer sends its flusher thread.
enum ToFlusher {
    /// A full buffer to sort and append.
    Buffer(Vec<Record>),
    /// Answer once everything sent before is written.
    Barrier(SyncSender<()>),
}

/// What the flusher thread and the writer share.
struct Shared {
    disks: ScratchDisks,
    kind: &'static str,
    bytes_written: AtomicU64,
    /// Bytes per bucket, so a reader notices a run file that was deleted or cut.
    written: Mutex<BTreeMap<u64, u64>>,
    error: Mutex<Option<Error>>,
}

/// What a finished [`RunWriter`] wrote: bytes per bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunIndex {
    written: BTreeMap<u64, u64>,
    /// Total bytes written.
    pub bytes: u64,
}

impl RunWriter {
    /// A writer of new run files of `kind` (any left by an interrupted step
    /// are removed) holding at most `capacity` records in memory per buffer
    /// (two buffers).
    pub fn new(disks: &ScratchDisks, kind: &'static str, capacity: usize) -> Result<RunWriter> {
        RunWriter::resume(disks, kind, capacity, RunIndex::default())
    }

    /// A writer that continues the run files of `kind` as a checkpoint recorded
    /// them: files are cut back to the recorded sizes (dropping what was
    /// appended after the checkpoint) and files of other buckets are removed.
    pub fn resume(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        at: RunIndex,
    ) -> Result<RunWriter> {
        cut_runs_back(disks, kind, &at.written)?;
        Ok(RunWriter::start(disks, kind, capacity, at))
    }

    fn start(disks: &ScratchDisks, kind: &'static str, capacity: usize, at: RunIndex) -> RunWriter {
        let capacity = capacity.max(1);
        let shared = Arc::new(Shared {
            disks: disks.clone(),
            kind,
            bytes_written: AtomicU64::new(at.bytes),
            written: Mutex::new(at.written),
            error: Mutex::new(None),
        });
        // Rendezvous: a full buffer is handed over only when the flusher is
        // free, which bounds the buffers to the one being filled and the one
        // being flushed.
        let (full_tx, full_rx) = sync_channel::<ToFlusher>(0);
        let (empty_tx, empty_rx) = sync_channel::<Vec<Record>>(1);
        let flusher = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                for message in full_rx {
                    let mut buf = match message {
                        ToFlusher::Buffer(buf) => buf,
                        ToFlusher::Barrier(done) => {
                            let _ = done.send(());
                            continue;
                        }
                    };
                    if lock(&shared.error).is_none() {
                        if let Err(e) = shared.flush(&mut buf) {
                            lock(&shared.error).get_or_insert(e);
                        }
                    }
                    buf.clear();
                    // The writer may be gone or already hold a spare: then drop it.
                    let _ = empty_tx.try_send(buf);
                }
            })
        };
        RunWriter {
            shared,
            buffer: Mutex::new(Vec::with_capacity(capacity)),
            capacity,
            full: Some(full_tx),
            empty: Mutex::new(empty_rx),
            flusher: Some(flusher),
        }
    }

    /// Adds records; hands the buffer to the flusher when it is full.
    pub fn push(&self, records: &[Record]) -> Result<()> {
        let mut buf = lock(&self.buffer);
        let mut rest = records;
        while !rest.is_empty() {
            let room = self.capacity - buf.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            buf.extend_from_slice(now);
            rest = later;
            if buf.len() >= self.capacity {
                let spare = lock(&self.empty)
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(self.capacity));
                let full = std::mem::replace(&mut *buf, spare);
                self.hand_over(full)?;
            }
        }
        drop(buf);
        self.check()
    }

    fn hand_over(&self, full: Vec<Record>) -> Result<()> {
        self.send(ToFlusher::Buffer(full))
    }

    fn send(&self, message: ToFlusher) -> Result<()> {
        let sent = self.full.as_ref().map(|tx| tx.send(message));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => {
                self.check()?;
                Err(Error::NotAvailable(format!(
                    "the {} run writer thread stopped",
                    self.shared.kind
                )))
            }
        }
    }

    fn check(&self) -> Result<()> {
        match lock(&self.shared.error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Writes out every record pushed so far and syncs the run files, for a
    /// checkpoint: returns what a [`RunWriter::resume`] continues from.
    pub fn durable(&self) -> Result<RunIndex> {
        let buf = std::mem::take(&mut *lock(&self.buffer));
        if !buf.is_empty() {
            self.hand_over(buf)?;
        }
        let (done_tx, done_rx) = sync_channel(1);
        self.send(ToFlusher::Barrier(done_tx))?;
        if done_rx.recv().is_err() {
            self.check()?;
        }
        self.check()?;
        let written = lock(&self.shared.written).clone();
        let index = RunIndex {
            bytes: written.values().sum(),
            written,
        };
        sync_runs(&self.shared.disks, self.shared.kind, &index)?;
        Ok(index)
    }

    /// Flushes what is left, waits for the flusher; says what was written.
    pub fn finish(mut self) -> Result<RunIndex> {
        let last = std::mem::take(&mut *lock(&self.buffer));
        if !last.is_empty() {
            self.hand_over(last)?;
        }
        self.stop();
        self.check()?;
        let written = std::mem::take(&mut *lock(&self.shared.written));
        Ok(RunIndex {
            written,
            bytes: self.shared.bytes_written.load(Ordering::Relaxed),
        })
    }

    /// Closes the channel and joins the flusher (also on drop, after an error).
    fn stop(&mut self) {
        self.full = None;
        if let Some(handle) = self.flusher.take() {
            if handle.join().is_err() {
                lock(&self.shared.error).get_or_insert(Error::NotAvailable(format!(
                    "the {} run writer thread panicked",
                    self.shared.kind
                )));
            }
        }
    }
}

impl Drop for RunWriter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Syncs every run file of `kind` that `index` names.
pub fn sync_runs(disks: &ScratchDisks, kind: &str, index: &RunIndex) -> Result<()> {
    for &bucket in index.written.keys() {
        let path = disks.run_path(kind, bucket as usize);
        std::fs::File::open(&path)
            .and_then(|f| f.sync_data())
            .map_err(|e| Error::io("syncing run file", &path, e))?;
    }
    Ok(())
}

/// Cuts the run files of `kind` back to `sizes` and removes the others; a
/// file shorter than its recorded size is damage, reported as such.
fn cut_runs_back(disks: &ScratchDisks, kind: &str, sizes: &BTreeMap<u64, u64>) -> Result<()> {
    let prefix = format!("{kind}-");
    for dir in disks.dirs() {
        let entries =
            std::fs::read_dir(dir).map_err(|e| Error::io("listing scratch directory", dir, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let Some(bucket) = name
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix)?.strip_suffix(".run"))
                .and_then(|b| b.parse::<u64>().ok())
            else {
                continue;
            };
            match sizes.get(&bucket) {
                Some(&len) => {
                    let file = OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(|e| Error::io("opening run file", &path, e))?;
                    let have = file
                        .metadata()
                        .map_err(|e| Error::io("reading size of", &path, e))?
                        .len();
                    if have < len {
                        return Err(Error::io(
                            "resuming from run file",
                            &path,
                            std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                format!("{have} bytes, the checkpoint recorded {len}: scratch was changed; delete the scratch directories and build again"),
                            ),
                        ));
                    }
                    file.set_len(len)
                        .map_err(|e| Error::io("cutting back run file", &path, e))?;
                }
                None => std::fs::remove_file(&path)
                    .map_err(|e| Error::io("removing run file", &path, e))?,
            }
        }
    }
    // A recorded bucket whose file is gone is damage too.
    for (&bucket, &len) in sizes {
        let path = disks.run_path(kind, bucket as usize);
        if len > 0 && !path.exists() {
            return Err(Error::io(
                "resuming from run file",
                &path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "missing: scratch was changed; delete the scratch directories and build again",
                ),
            ));
        }
    }
    Ok(())
}

/// The flushers' own threads for sorting: a quarter of the cores, at least one.
/// (None if the threads cannot be started: then the flusher sorts alone.)
fn sort_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads((rayon::current_num_threads() / 4).max(1))
            .thread_name(|i| format!("tbforge-sort-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn flush(&self, buf: &mut [Record]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        // Not on rayon's global pool: its threads may be the producers blocked
        // in `push` waiting for this very flush.
        match sort_pool() {
            Some(pool) => pool.install(|| buf.radix_sort_unstable()),
            None => buf.radix_sort_builder().with_parallel(false).sort(),
        }
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
            *lock(&self.written).entry(bucket).or_default() += bytes.len() as u64;
            start = end;
        }
        Ok(())
    }
}

/// Streams bucket `bucket`'s records of `kind` in blocks of at most `block`
/// records (a reader thread fetches the next block while `apply` works on
/// this one); returns the bytes read.
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
    let read_block =
        |file: &mut std::fs::File, bytes: &mut [u8], records: &mut Vec<Record>| -> Result<usize> {
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
            records.clear();
            records.extend(bytes[..filled].chunks_exact(RECORD_BYTES).map(|c| Record {
                key: u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
                payload: u64::from_le_bytes(c[8..].try_into().expect("8 bytes")),
            }));
            Ok(filled)
        };
    if expected <= (block * RECORD_BYTES) as u64 {
        // One block: no thread to start.
        let mut records = Vec::new();
        let mut bytes = vec![0u8; expected as usize];
        let n = read_block(&mut file, &mut bytes, &mut records)?;
        if n as u64 != expected {
            return Err(damaged(format!("{n} bytes read, {expected} were written")));
        }
        apply(&records)?;
        return Ok(n as u64);
    }
    std::thread::scope(|scope| {
        // Two blocks in memory: the one applied and the one being read.
        let (tx, rx) = sync_channel::<Result<(usize, Vec<Record>)>>(0);
        let read_block = &read_block;
        scope.spawn(move || {
            let mut bytes = vec![0u8; block * RECORD_BYTES];
            loop {
                let mut records = Vec::with_capacity(block);
                let got = read_block(&mut file, &mut bytes, &mut records).map(|n| (n, records));
                let stop = !matches!(got, Ok((n, _)) if n > 0);
                if tx.send(got).is_err() || stop {
                    return;
                }
            }
        });
        let mut total = 0u64;
        for got in rx {
            let (n, records) = got?;
            if n == 0 {
                break;
            }
            total += n as u64;
            apply(&records)?;
        }
        if total != expected {
            return Err(damaged(format!(
                "{total} bytes read, {expected} were written"
            )));
        }
        Ok(total)
    })
}
