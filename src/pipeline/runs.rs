//! Write buffers (seed 002): records bucketed by the chunk they must be
//! applied to, collected in a bounded buffer, grouped by bucket with a radix
//! sort and flushed to one run file per bucket; a later streamed pass reads
//! each bucket back.
//!
//! Where the range a bucket is applied to outgrows the cache, the reader
//! radix-sorts each block by key before applying it, so the apply walks its
//! array in order (Korf's sorted merge) rather than at random. The sort sits
//! on the reading side because there it runs on the whole thread pool while
//! the pass waits for it anyway; on the writing side it held up every
//! producer behind one flusher.

use super::disks::{read_ahead, start_writeback, ScratchDisks};
use super::stats::{Part, Profile};
use crate::{Error, Result};
use rdst::{RadixKey, RadixSort};
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};

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

/// A record ordered by its bucket alone: a radix sort over the bucket's
/// bytes only, for buffers whose buckets need no order inside.
#[derive(Clone, Copy, Debug, Default)]
struct ByBucket(Record);

impl RadixKey for ByBucket {
    const LEVELS: usize = (64 - LOW_BITS as usize).div_ceil(8);
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.0.bucket() >> (level * 8)) as u8
    }
}

/// The order in which a reader applies a bucket's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Each block sorted by key first: the apply walks its range in order,
    /// which pays when that range outgrows the cache.
    Sorted,
    /// As written: the range fits the cache, where random access costs
    /// about as little as a walk and a sort would cost more than it saves.
    Grouped,
}

impl Order {
    /// Records applied to a range of `bytes` bytes: sorted when the range
    /// outgrows [`CACHE_BYTES`].
    pub fn for_range(bytes: u64) -> Order {
        if bytes > CACHE_BYTES {
            Order::Sorted
        } else {
            Order::Grouped
        }
    }
}

/// How a reader hands a bucket's records over.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    /// Records per block at most.
    pub records: usize,
    /// Their order within a block.
    pub order: Order,
}

/// The largest range a bucket is applied to unsorted: a workstation's
/// last-level cache. Within it a random access is a cache hit, and the
/// answer step's many threads overlap their misses, so a record costs a few
/// nanoseconds; a radix sort costs more than that per record. Measured on a
/// 16-core H100 host (a 10^7-position build, 5.5 MB ranges): sorting every block took
/// 12.9 of the answer step's 17.1 seconds.
pub const CACHE_BYTES: u64 = 32 << 20;

const RECORD_BYTES: usize = 16;

/// A bounded write buffer over per-bucket run files.
///
/// Producers fill one buffer while flusher threads group and write the
/// previous ones, so expansion never waits for the disk unless the disk is
/// slower than the producers (then `push` blocks: back-pressure). On a
/// machine of many cores one flusher could not keep up with the producers,
/// so there are several (a quarter of the cores, at most four), each on its
/// own buffer, and the buffers are smaller in proportion: the records held
/// at once stay about three buffers' worth of the given capacity (the one
/// being filled, the one being flushed, and a sort's scratch).
pub struct RunWriter {
    shared: Arc<Shared>,
    buffer: Mutex<Vec<Record>>,
    capacity: usize,
    full: Option<SyncSender<Vec<Record>>>,
    empty: Mutex<Receiver<Vec<Record>>>,
    flushers: Vec<std::thread::JoinHandle<()>>,
}

/// What the flusher threads and the writer share.
struct Shared {
    disks: ScratchDisks,
    kind: &'static str,
    bytes_written: AtomicU64,
    /// Bytes per bucket, so a reader notices a run file that was deleted or
    /// cut. A flusher reserves its piece of a bucket here before writing it,
    /// so flushers never write over each other.
    written: Mutex<BTreeMap<u64, u64>>,
    error: Mutex<Option<Error>>,
    profile: Arc<Profile>,
    /// Buffers handed over and not yet written.
    in_flight: Mutex<usize>,
    /// Signalled when `in_flight` drops to zero.
    settled: Condvar,
    /// Run files kept open for the writer's life: opening a file per piece
    /// written cost more kernel time than the writing where buckets are many
    /// and pieces small.
    files: Mutex<BTreeMap<u64, Arc<std::fs::File>>>,
}

/// Run files a writer keeps open at most (others are opened per piece): a
/// quarter of the process's open-file limit, as two writers and their
/// readers may be at work at once.
fn open_runs() -> usize {
    static OPEN_RUNS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *OPEN_RUNS.get_or_init(|| {
        #[cfg(target_os = "linux")]
        // SAFETY: getrlimit writes the struct we pass, which lives on this stack frame.
        unsafe {
            let mut limit = std::mem::zeroed::<libc::rlimit>();
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                return (limit.rlim_cur / 4).clamp(16, 1 << 14) as usize;
            }
        }
        256
    })
}

/// What a finished [`RunWriter`] wrote: bytes per bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunIndex {
    written: BTreeMap<u64, u64>,
    /// Total bytes written.
    pub bytes: u64,
}

/// Flusher threads per writer: a quarter of the pool's threads, one to four.
fn flusher_count() -> usize {
    (rayon::current_num_threads() / 4).clamp(1, 4)
}

impl RunWriter {
    /// A writer of new run files of `kind` (any left by an interrupted step
    /// are removed) holding about `3 * capacity` records in memory at most.
    pub fn new(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        profile: &Arc<Profile>,
    ) -> Result<RunWriter> {
        RunWriter::resume(disks, kind, capacity, RunIndex::default(), profile)
    }

    /// A writer that continues the run files of `kind` as a checkpoint recorded
    /// them: files are cut back to the recorded sizes (dropping what was
    /// appended after the checkpoint) and files of other buckets are removed.
    pub fn resume(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        at: RunIndex,
        profile: &Arc<Profile>,
    ) -> Result<RunWriter> {
        cut_runs_back(disks, kind, &at.written)?;
        Ok(RunWriter::start(disks, kind, capacity, at, profile))
    }

    fn start(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        at: RunIndex,
        profile: &Arc<Profile>,
    ) -> RunWriter {
        let flushers = flusher_count();
        // Buffers alive at once: the one being filled, one per flusher, and
        // a spare coming back; a flusher's grouping sort works in place.
        let capacity = (capacity * 3 / (flushers + 2)).max(1);
        let shared = Arc::new(Shared {
            disks: disks.clone(),
            kind,
            bytes_written: AtomicU64::new(at.bytes),
            written: Mutex::new(at.written),
            error: Mutex::new(None),
            profile: Arc::clone(profile),
            in_flight: Mutex::new(0),
            settled: Condvar::new(),
            files: Mutex::new(BTreeMap::new()),
        });
        // Rendezvous: a full buffer is handed over only when a flusher is
        // free, which bounds the buffers in memory.
        let (full_tx, full_rx) = sync_channel::<Vec<Record>>(0);
        let full_rx = Arc::new(Mutex::new(full_rx));
        let (empty_tx, empty_rx) = sync_channel::<Vec<Record>>(1);
        let flushers = (0..flushers)
            .map(|_| {
                let shared = Arc::clone(&shared);
                let full_rx = Arc::clone(&full_rx);
                let empty_tx = empty_tx.clone();
                std::thread::spawn(move || loop {
                    let Ok(buf) = lock(&full_rx).recv() else {
                        return;
                    };
                    let mut buf = shared.flush_or_record(buf);
                    buf.clear();
                    // The writer may be gone or already hold a spare: then drop it.
                    let _ = empty_tx.try_send(buf);
                    shared.settle_one();
                })
            })
            .collect();
        RunWriter {
            shared,
            buffer: Mutex::new(Vec::with_capacity(capacity)),
            capacity,
            full: Some(full_tx),
            empty: Mutex::new(empty_rx),
            flushers,
        }
    }

    /// Adds records; hands the buffer to a flusher when it is full.
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
        *lock(&self.shared.in_flight) += 1;
        let profile = &self.shared.profile;
        let sent = profile.time(Part::WaitFlusher, || {
            self.full.as_ref().map(|tx| tx.send(full))
        });
        match sent {
            Some(Ok(())) => Ok(()),
            _ => {
                self.shared.settle_one();
                self.check()?;
                Err(Error::NotAvailable(format!(
                    "the {} run writer threads stopped",
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

    /// Waits until every buffer handed over is written.
    fn wait_settled(&self) {
        let mut in_flight = lock(&self.shared.in_flight);
        while *in_flight > 0 {
            in_flight = self
                .shared
                .settled
                .wait(in_flight)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Writes out every record pushed so far and syncs the run files, for a
    /// checkpoint: returns what a [`RunWriter::resume`] continues from.
    pub fn durable(&self) -> Result<RunIndex> {
        let buf = std::mem::take(&mut *lock(&self.buffer));
        if !buf.is_empty() {
            self.hand_over(buf)?;
        }
        self.wait_settled();
        self.check()?;
        let written = lock(&self.shared.written).clone();
        let index = RunIndex {
            bytes: written.values().sum(),
            written,
        };
        sync_runs(&self.shared.disks, self.shared.kind, &index)?;
        Ok(index)
    }

    /// Flushes what is left, waits for the flushers; says what was written.
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

    /// Closes the channel and joins the flushers (also on drop, after an error).
    fn stop(&mut self) {
        self.full = None;
        for handle in self.flushers.drain(..) {
            if handle.join().is_err() {
                lock(&self.shared.error).get_or_insert(Error::NotAvailable(format!(
                    "a {} run writer thread panicked",
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Flushes `buf` unless an earlier flush failed; records a failure (a
    /// panic too, which would otherwise leave `in_flight` up for good).
    fn flush_or_record(&self, buf: Vec<Record>) -> Vec<Record> {
        if lock(&self.error).is_some() {
            return buf;
        }
        let flushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.flush(buf)));
        let failed = match flushed {
            Ok(Ok(buf)) => return buf,
            Ok(Err(e)) => e,
            Err(_) => Error::NotAvailable(format!("a {} run writer thread panicked", self.kind)),
        };
        lock(&self.error).get_or_insert(failed);
        Vec::new()
    }

    /// Bucket `bucket`'s run file, open for writing.
    fn run_file(&self, bucket: u64, path: &std::path::Path) -> Result<Arc<std::fs::File>> {
        // Held throughout: two flushers must not both create the same file.
        let mut files = lock(&self.files);
        if let Some(f) = files.get(&bucket) {
            return Ok(Arc::clone(f));
        }
        let file = if path.exists() {
            OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io("opening run file", path, e))?
        } else {
            self.disks.create_run_file(path)?
        };
        let file = Arc::new(file);
        if files.len() < open_runs() {
            files.insert(bucket, Arc::clone(&file));
        }
        Ok(file)
    }

    /// One handed-over buffer is done with.
    fn settle_one(&self) {
        let mut in_flight = lock(&self.in_flight);
        *in_flight = in_flight.saturating_sub(1);
        if *in_flight == 0 {
            self.settled.notify_all();
        }
    }

    /// Groups `buf` by bucket and writes each bucket's piece at the end of
    /// its run file; gives the buffer back for reuse.
    fn flush(&self, buf: Vec<Record>) -> Result<Vec<Record>> {
        let Some(first) = buf.first().map(Record::bucket) else {
            return Ok(buf);
        };
        let mut buf = buf;
        if buf.iter().any(|r| r.bucket() != first) {
            buf = self.profile.time(Part::FlushGroup, || {
                // Collected in place (same layout): no second buffer.
                let mut grouped: Vec<ByBucket> = buf.into_iter().map(ByBucket).collect();
                // In place, on this thread: the flushers run side by side,
                // and rayon's pool holds the producers that wait for them.
                grouped
                    .radix_sort_builder()
                    .with_low_mem_tuner()
                    .with_parallel(false)
                    .sort();
                grouped.into_iter().map(|g| g.0).collect()
            });
        }
        let started = std::time::Instant::now();
        // Encoded a block at a time: a bounded buffer, not a copy of the bucket.
        const BLOCK: usize = 8192;
        let mut bytes = Vec::with_capacity(BLOCK * RECORD_BYTES);
        let mut start = 0;
        while start < buf.len() {
            let bucket = buf[start].bucket();
            let end = start + buf[start..].partition_point(|r| r.bucket() == bucket);
            let path = self.disks.run_path(self.kind, bucket as usize);
            let file = self.run_file(bucket, &path)?;
            let len = ((end - start) * RECORD_BYTES) as u64;
            let at = {
                let mut written = lock(&self.written);
                let size = written.entry(bucket).or_default();
                *size += len;
                *size - len
            };
            let mut offset = at;
            for block in buf[start..end].chunks(BLOCK) {
                bytes.clear();
                for r in block {
                    bytes.extend_from_slice(&r.key.to_le_bytes());
                    bytes.extend_from_slice(&r.payload.to_le_bytes());
                }
                file.write_all_at(&bytes, offset)
                    .map_err(|e| Error::io("writing run file", &path, e))?;
                offset += bytes.len() as u64;
            }
            start_writeback(&file, at, len);
            self.bytes_written.fetch_add(len, Ordering::Relaxed);
            start = end;
        }
        self.profile.add(Part::FlushWrite, started.elapsed());
        Ok(buf)
    }
}

/// Asks the kernel to fetch the first `bytes` bytes of bucket `bucket`'s run
/// file of `kind` in the background, for a step about to read it: the disk
/// works while the step finishes its current bucket.
pub fn prefetch_bucket(
    disks: &ScratchDisks,
    kind: &str,
    index: &RunIndex,
    bucket: u64,
    bytes: u64,
) {
    let expected = index.written.get(&bucket).copied().unwrap_or(0);
    if expected == 0 {
        return;
    }
    // A missing file is reported by the read that follows, with context.
    if let Ok(file) = std::fs::File::open(disks.run_path(kind, bucket as usize)) {
        read_ahead(&file, 0, bytes.min(expected));
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
    blocks: Blocks,
    profile: &Profile,
    mut apply: impl FnMut(&[Record]) -> Result<()>,
) -> Result<u64> {
    let Blocks {
        records: block,
        order,
    } = blocks;
    let mut apply = |records: &mut Vec<Record>| {
        if order == Order::Sorted {
            profile.time(Part::BlockSort, || records.radix_sort_unstable());
        }
        apply(records)
    };
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
        apply(&mut records)?;
        return Ok(n as u64);
    }
    std::thread::scope(|scope| {
        // Two blocks in memory: the one applied and the one being read.
        let (tx, rx) = sync_channel::<Result<(usize, Vec<Record>)>>(0);
        // Applied blocks come back for reuse: no fresh pages to fault in per block.
        let (spare_tx, spare_rx) = sync_channel::<Vec<Record>>(1);
        let read_block = &read_block;
        scope.spawn(move || {
            let mut bytes = vec![0u8; block * RECORD_BYTES];
            let mut next = 0u64;
            loop {
                // The block after this one is fetched by the kernel while this
                // one is read and applied: two requests at the disk, not one.
                next += bytes.len() as u64;
                read_ahead(&file, next, bytes.len() as u64);
                let mut records = spare_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(block));
                let got = read_block(&mut file, &mut bytes, &mut records).map(|n| (n, records));
                let stop = !matches!(got, Ok((n, _)) if n > 0);
                if tx.send(got).is_err() || stop {
                    return;
                }
            }
        });
        let mut total = 0u64;
        while let Ok(got) = profile.time(Part::WaitRunRead, || rx.recv()) {
            let (n, mut records) = got?;
            if n == 0 {
                break;
            }
            total += n as u64;
            apply(&mut records)?;
            let _ = spare_tx.try_send(records);
        }
        if total != expected {
            return Err(damaged(format!(
                "{total} bytes read, {expected} were written"
            )));
        }
        Ok(total)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of a few buckets in a scrambled order (a fixed LCG: the test
    /// needs variety, not randomness).
    fn scrambled(n: usize, buckets: u64) -> Vec<Record> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                Record::new((x >> 60) % buckets, (x >> 20) & 0xfffff, i as u64)
            })
            .collect()
    }

    fn read_all(disks: &ScratchDisks, index: &RunIndex, bucket: u64, order: Order) -> Vec<Record> {
        let mut out = Vec::new();
        let profile = Profile::default();
        let blocks = Blocks {
            records: 100,
            order,
        };
        read_bucket(disks, "req", index, bucket, blocks, &profile, |r| {
            out.extend_from_slice(r);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn every_record_comes_back_in_its_bucket_in_either_order() {
        every_record_comes_back(1);
    }

    /// Sixteen threads: four flushers write pieces of the same buckets side
    /// by side, producers push at once, a checkpoint comes in between.
    #[test]
    fn every_record_comes_back_from_several_flushers() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        pool.install(|| {
            assert_eq!(flusher_count(), 4);
            every_record_comes_back(16)
        });
    }

    fn every_record_comes_back(producers: usize) {
        use rayon::prelude::*;
        let records = scrambled(50_000, 5);
        for order in [Order::Sorted, Order::Grouped] {
            let dir = tempfile::tempdir().unwrap();
            let disks =
                ScratchDisks::open(&[dir.path().join("a"), dir.path().join("b")], "t").unwrap();
            let profile = Arc::new(Profile::default());
            let capacity = 1000;
            let writer = RunWriter::new(&disks, "req", capacity, &profile).unwrap();
            let (first, second) = records.split_at(records.len() / 3);
            for half in [first, second] {
                half.par_chunks(333)
                    .with_min_len(half.len() / 333 / producers + 1)
                    .for_each(|batch| writer.push(batch).unwrap());
                if half.len() == first.len() {
                    let at = writer.durable().unwrap();
                    assert_eq!(at.bytes, (first.len() * RECORD_BYTES) as u64);
                }
            }
            let index = writer.finish().unwrap();
            assert_eq!(index.bytes, (records.len() * RECORD_BYTES) as u64);
            for bucket in 0..5 {
                let mut got = read_all(&disks, &index, bucket, order);
                if order == Order::Sorted {
                    // Each block of 100 records the reader hands over is ascending.
                    for block in got.chunks(100) {
                        assert!(block.windows(2).all(|w| w[0].key <= w[1].key));
                    }
                }
                let mut want: Vec<Record> = records
                    .iter()
                    .copied()
                    .filter(|r| r.bucket() == bucket)
                    .collect();
                got.sort_by_key(|r| (r.key, r.payload));
                want.sort_by_key(|r| (r.key, r.payload));
                assert_eq!(got, want, "{order:?}, bucket {bucket}");
            }
        }
    }

    #[test]
    fn order_follows_the_range_size() {
        assert_eq!(Order::for_range(CACHE_BYTES), Order::Grouped);
        assert_eq!(Order::for_range(CACHE_BYTES + 1), Order::Sorted);
    }
}
