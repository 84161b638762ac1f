//! Write buffers (Edelkamp and Sulewski, "Parallel State Space Search on the GPU"): records bucketed by the chunk they must be
//! applied to, collected in a bounded buffer, sorted by key with a radix
//! sort and flushed to one run file per bucket; a later streamed pass reads
//! each bucket back.
//!
//! # Run files
//!
//! A run file is a sequence of frames, each self-contained, so that
//! flushers may append frames of the same bucket side by side and a
//! checkpoint may cut a file back between frames. A frame holds up to
//! [`FRAME_RECORDS`] records of one bucket, ascending by index:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | body length, little-endian |
//! | 4 | records |
//! | 4 | length of the encoded records before compression; the top bit set when the body is compressed |
//! | 4 | CRC-32 of the body |
//! | … | body |
//!
//! The encoded records are, per record, the index's difference from the
//! previous record's index (the first from 0) and the payload, each an
//! unsigned LEB128 varint: sorted indices of a dense bucket differ by a few
//! units, so a 16-byte record shrinks to its payload's bytes and one or two
//! more. The body is that stream compressed by zstd at level 1, or the
//! stream itself where compression does not make it shorter. Scratch is
//! the pipeline's bottleneck (a disk, not the cores), so the bytes saved
//! are time saved.
//!
//! Where the range a bucket is applied to outgrows the cache, the reader
//! radix-sorts each block by key before applying it, so the apply walks its
//! array in order (Korf's sorted merge) rather than at random. The sort sits
//! on the reading side because there it runs on the whole thread pool while
//! the pass waits for it anyway; on the writing side it held up every
//! producer behind one flusher.

use super::buffers::SpareBuffers;
use super::disks::{read_ahead, start_writeback, ScratchDisks};
use super::stats::{Part, Profile};
use crate::game::{RequestPiece, Requests};
use crate::{Error, Result};
use bytemuck::{Pod, Zeroable};
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
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

/// How the keys of a batch of records pack into their low bits for a sort:
/// the bucket less the batch's first, above as many index bits as its
/// largest index needs. Packed keys order as the keys do, and a radix sort
/// of them makes a counting pass per byte they span, not per byte of a
/// key: a pass's buckets are few and its indices below a chunk's or a
/// lookup range's size, so they span four bytes or so of the eight. On
/// buffers shaped as a flusher's (500 K records, 3 or 47 buckets of
/// 2^26 or 2^22 indices) the sort took 13.5 against 17.5 ns a record.
#[derive(Clone, Copy, Debug)]
struct Packing {
    first: u64,
    index_bits: u32,
    bits: u32,
}

impl Packing {
    fn of(records: &[Record]) -> Packing {
        let (mut first, mut last, mut index) = (u64::MAX, 0, 0);
        for r in records {
            first = first.min(r.bucket());
            last = last.max(r.bucket());
            index = index.max(r.index());
        }
        let index_bits = u64::BITS - index.leading_zeros();
        let bucket_bits = u64::BITS - last.saturating_sub(first).leading_zeros();
        Packing {
            first: first.min(last),
            index_bits,
            bits: index_bits + bucket_bits,
        }
    }

    #[inline]
    fn pack(&self, key: u64) -> u64 {
        ((key >> LOW_BITS) - self.first) << self.index_bits | (key & ((1 << LOW_BITS) - 1))
    }

    #[inline]
    fn unpack(&self, packed: u64) -> u64 {
        // index_bits < 64: indices are below 2^LOW_BITS.
        let index = packed & ((1u64 << self.index_bits) - 1);
        ((packed >> self.index_bits) + self.first) << LOW_BITS | index
    }
}

/// A record as the radix sort sees it once its key is packed into the low
/// bytes ([`Packing`]): a sort of `LEVELS` bytes.
macro_rules! packed_records {
    ($($name:ident: $levels:literal),*) => {$(
        #[derive(Clone, Copy, Pod, Zeroable)]
        #[repr(C)]
        struct $name {
            key: u64,
            payload: u64,
        }
        impl RadixKey for $name {
            const LEVELS: usize = $levels;
            #[inline]
            fn get_level(&self, level: usize) -> u8 {
                (self.key >> (level * 8)) as u8
            }
        }
    )*};
}
packed_records!(Packed1: 1, Packed2: 2, Packed3: 3, Packed4: 4, Packed5: 5, Packed6: 6, Packed7: 7);

/// Sorts a flusher's `records` by key, in place, on this thread or, where
/// `parallel`, on the pool too (see [`PARALLEL_FLUSH`]). The reader's
/// sort of a block, on all threads, stays unpacked: packed (its scan for
/// the packing on one thread), the answer step's block sorts took 34.8 s against 24.9 in one
/// A/B run on an H200 host (a 429 M-position build, 2.7 G requests),
/// while the flushers' sorts went from 218 to 194 thread-seconds.
fn sort_by_key(records: &mut [Record], parallel: bool) {
    fn sort_as<T: Pod + RadixKey + Send + Sync>(records: &mut [Record], parallel: bool) {
        // The same bytes seen as T: both are two u64s, C layout.
        let view: &mut [T] = bytemuck::cast_slice_mut(records);
        view.radix_sort_builder()
            .with_low_mem_tuner()
            .with_parallel(parallel)
            .sort();
    }
    if records.len() < 2 {
        return;
    }
    let packing = Packing::of(records);
    let levels = packing.bits.div_ceil(8).max(1);
    if levels >= 8 {
        return sort_as::<Record>(records, parallel);
    }
    records.iter_mut().for_each(|r| r.key = packing.pack(r.key));
    match levels {
        1 => sort_as::<Packed1>(records, parallel),
        2 => sort_as::<Packed2>(records, parallel),
        3 => sort_as::<Packed3>(records, parallel),
        4 => sort_as::<Packed4>(records, parallel),
        5 => sort_as::<Packed5>(records, parallel),
        6 => sort_as::<Packed6>(records, parallel),
        _ => sort_as::<Packed7>(records, parallel),
    }
    records
        .iter_mut()
        .for_each(|r| r.key = packing.unpack(r.key));
}

/// The order in which a reader applies a bucket's records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Each block in ascending runs of keys, at most [`SWEEPS`] of them
    /// (sorted first if it has more): the apply walks its range in order,
    /// a few times over, which pays when that range outgrows the cache.
    Sorted,
    /// As written: the range fits the cache, where random access costs
    /// about as little as a walk and a sort would cost more than it saves.
    Grouped,
}

impl Order {
    /// Records applied to a range of `bytes` bytes: sorted when the range
    /// outgrows the host's last-level cache ([`cache_bytes`]).
    pub fn for_range(bytes: u64) -> Order {
        if bytes > cache_bytes() {
            Order::Sorted
        } else {
            Order::Grouped
        }
    }
}

/// The most ascending runs a block of [`Order::Sorted`] may be handed
/// over in, unsorted. A flusher writes each bucket's records sorted, so a
/// block read back is a few such runs (one per flush it spans), and a few
/// walks over the range cost about what one does; radix-sorting every
/// block took 26 s of a 480 s streamed build on an H200 host.
pub const SWEEPS: usize = 8;

/// Whether `records` are at most `runs` ascending runs of keys.
fn ascending_runs_at_most(records: &[Record], runs: usize) -> bool {
    // A block of many records is looked at on all threads: on the reading
    // thread alone, the look held every core up.
    if records.len() >= PARALLEL_LOOK {
        use rayon::prelude::*;
        let descents = records
            .par_windows(2)
            .filter(|w| w[1].key < w[0].key)
            .count();
        return descents < runs;
    }
    let mut descents = 0;
    for w in records.windows(2) {
        if w[1].key < w[0].key {
            descents += 1;
            if descents >= runs {
                return false;
            }
        }
    }
    true
}

/// Records from which a push fills the buffer on all threads. The answer
/// step pushes a block's answers at once (a million records or more): made
/// on the pool into a block of their own and then copied into the buffer
/// on the calling thread, their copy held up the step's next block.
const PARALLEL_PUSH: usize = 1 << 16;

/// Items a task of a parallel push makes records of.
const PUSH_PIECE: usize = 1 << 14;

/// Records from which [`ascending_runs_at_most`] looks on all threads.
const PARALLEL_LOOK: usize = 1 << 16;

/// Records of a write buffer from which its flusher sorts and encodes it
/// on the pool too, not on its own thread alone: a step ends waiting for
/// the buffers in flight, each about a whole buffer's sort and encoding on
/// one thread (21 s of a 174 s streamed build of 703 passes on an H200
/// host), while the pool is idle. Smaller buffers (a small `--mem-limit`,
/// one flusher) stay on their thread, and their zstd contexts few.
/// (The unit tests' writers are small: two threads' writer flushes on the
/// pool, sixteen threads' eight flushers on their own threads.)
const PARALLEL_FLUSH: usize = if cfg!(test) { 1000 } else { 256 << 10 };

/// How a reader hands a bucket's records over.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    /// Records per block at most.
    pub records: usize,
    /// Their order within a block.
    pub order: Order,
}

/// The largest range a bucket is applied to unsorted: the host's
/// last-level cache, as Linux reports it, or a workstation's where it does
/// not ([`CACHE_BYTES`]). Within it a random access is a cache hit, and
/// the answer step's many threads overlap their misses, so a record costs a
/// few nanoseconds; a radix sort costs more than that per record. Measured
/// on a 16-core H100 host (a 10^7-position build, 5.5 MB ranges): sorting
/// every block took 12.9 of the answer step's 17.1 seconds.
pub fn cache_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        let caches = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        let read = |index: &std::path::Path, what: &str| {
            std::fs::read_to_string(index.join(what)).unwrap_or_default()
        };
        std::fs::read_dir(caches)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let index = entry.path();
                let level: u32 = read(&index, "level").trim().parse().ok()?;
                Some((level, cache_size(&read(&index, "size"))?))
            })
            .max()
            .map_or(CACHE_BYTES, |(_, bytes)| bytes)
    })
}

/// A cache's size as sysfs writes it ("32768K", "1M").
fn cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.strip_suffix('K') {
        Some(d) => (d, 1 << 10),
        None => match text.strip_suffix('M') {
            Some(d) => (d, 1 << 20),
            None => (text, 1),
        },
    };
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(unit)
        .filter(|&b| b > 0)
}

/// The last-level cache where the host does not say: a workstation's.
pub const CACHE_BYTES: u64 = 32 << 20;

/// Records of a frame at most: frames of about 100 KiB on disk keep a
/// reader's buffers and a flusher's encoder small, and long enough for the
/// codec to find its repeats.
pub const FRAME_RECORDS: usize = 16 << 10;

const FRAME_HEADER: usize = 16;
const COMPRESSED: u32 = 1 << 31;

/// One flusher's (or reader's) codec state: the zstd contexts and the
/// buffers a frame passes through, kept across frames.
#[derive(Default)]
pub(super) struct FrameCodec {
    compressor: Option<zstd::bulk::Compressor<'static>>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    varints: Vec<u8>,
    body: Vec<u8>,
}

fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// The varint at `at`, moving `at` past it; `None` where the stream ends
/// inside it or it overflows 64 bits.
#[inline]
fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut x = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        x |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(x);
        }
    }
    None
}

impl FrameCodec {
    /// Appends the frames of `records` (one bucket's, ascending by key) to
    /// `out`.
    fn encode(&mut self, records: &[Record], out: &mut Vec<u8>) -> Result<()> {
        for frame in records.chunks(FRAME_RECORDS) {
            self.varints.clear();
            let mut prev = 0;
            for r in frame {
                let index = r.index();
                put_varint(&mut self.varints, index - prev);
                put_varint(&mut self.varints, r.payload);
                prev = index;
            }
            let compressor = match &mut self.compressor {
                Some(c) => c,
                None => self.compressor.insert(
                    zstd::bulk::Compressor::new(1)
                        .map_err(|e| Error::NotAvailable(format!("zstd: {e}")))?,
                ),
            };
            self.body.clear();
            self.body
                .reserve(zstd::zstd_safe::compress_bound(self.varints.len()));
            let n = compressor
                .compress_to_buffer(&self.varints, &mut self.body)
                .map_err(|e| Error::NotAvailable(format!("zstd: compressing a run frame: {e}")))?;
            let (body, flag) = if n < self.varints.len() {
                (&self.body[..n], COMPRESSED)
            } else {
                (&self.varints[..], 0)
            };
            out.extend_from_slice(&(body.len() as u32).to_le_bytes());
            out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            out.extend_from_slice(&(self.varints.len() as u32 | flag).to_le_bytes());
            out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
            out.extend_from_slice(body);
        }
        Ok(())
    }

    /// Decodes frame `body` (with header fields `raw` and `crc`) of
    /// `bucket` into `out`, which has room for exactly its records;
    /// `Err(what)` names the damage.
    fn decode(
        &mut self,
        bucket: u64,
        (raw, crc): (u32, u32),
        body: &[u8],
        out: &mut [Record],
    ) -> std::result::Result<(), String> {
        if crc32fast::hash(body) != crc {
            return Err("a frame fails its checksum".into());
        }
        let raw_len = (raw & !COMPRESSED) as usize;
        let stream: &[u8] = if raw & COMPRESSED != 0 {
            let decompressor = match &mut self.decompressor {
                Some(d) => d,
                None => self
                    .decompressor
                    .insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
            };
            self.varints.clear();
            self.varints.reserve(raw_len);
            let n = decompressor
                .decompress_to_buffer(body, &mut self.varints)
                .map_err(|e| format!("a frame does not decompress ({e})"))?;
            if n != raw_len {
                return Err(format!("a frame decompresses to {n} bytes, not {raw_len}"));
            }
            &self.varints
        } else {
            if body.len() != raw_len {
                return Err("a stored frame's lengths disagree".into());
            }
            body
        };
        let (mut at, mut index) = (0usize, 0u64);
        let base = bucket << LOW_BITS;
        for slot in out.iter_mut() {
            let (Some(delta), Some(payload)) =
                (get_varint(stream, &mut at), get_varint(stream, &mut at))
            else {
                return Err("a frame ends inside a record".into());
            };
            index = index
                .checked_add(delta)
                .filter(|&i| i < 1 << LOW_BITS)
                .ok_or("a frame's index is out of range")?;
            *slot = Record {
                key: base | index,
                payload,
            };
        }
        if at != stream.len() {
            return Err("a frame has bytes after its records".into());
        }
        Ok(())
    }
}

/// A bounded write buffer over per-bucket run files.
///
/// Producers fill one buffer while flusher threads group and write the
/// previous ones, so expansion never waits for the disk unless the disk is
/// slower than the producers (then `push` blocks: back-pressure). On a
/// machine of many cores one flusher could not keep up with the producers,
/// so there are several (half the cores, at most eight), each on its
/// own buffer, and the buffers are smaller in proportion: the records held
/// at once stay about three buffers' worth of the given capacity (the one
/// being filled, the one being flushed, and a sort's scratch).
pub struct RunWriter {
    shared: Arc<Shared>,
    buffer: Mutex<Vec<Record>>,
    /// Where buffers come from and, once the flushers are done, go back to.
    spare: Arc<SpareBuffers<Record>>,
    capacity: usize,
    full: Option<SyncSender<Vec<Record>>>,
    empty: Mutex<Receiver<Vec<Record>>>,
    /// Starts the flushers, at the first buffer handed over: a writer whose
    /// records fit one buffer flushes it on its own thread as it finishes,
    /// and starts none (a small partition's passes had started a writer's
    /// flushers each: 2,998 threads for 5,831 passes over 201 small
    /// partitions).
    unstarted: Mutex<Option<StartFlushers>>,
    flushers: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// What starts a writer's flusher threads.
type StartFlushers = Box<dyn FnOnce() -> Vec<std::thread::JoinHandle<()>> + Send>;

/// What the flusher threads and the writer share.
struct Shared {
    disks: ScratchDisks,
    kind: &'static str,
    bytes_written: AtomicU64,
    records_written: AtomicU64,
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
    /// Records written.
    #[serde(default)]
    pub records: u64,
}

/// Flusher threads per writer: half the pool's threads, one to eight. Four
/// on a 16-core H200 host held the expand and answer steps of a streamed
/// build to their pace (18 s of waits in a 307 s build); with eight the
/// build took 256 s, its expand steps 68 s against 94 (the pool is idle
/// while the device expands). But a flusher has buffers and a compressor of
/// its own, about 1 MiB outside the write buffers' `capacity`, so a small
/// capacity gets one flusher per [`FLUSHER_RECORDS`] of it: eight under a
/// 20 MiB `--mem-limit` took the process's peak over it.
fn flusher_count(capacity: usize) -> usize {
    (rayon::current_num_threads() / 2)
        .clamp(1, 8)
        .min((capacity / FLUSHER_RECORDS).max(1))
}

/// Records of a writer's capacity per flusher (1 MiB of records, about what
/// the flusher holds of its own), but for the unit tests, whose writers are
/// small and must still have several. With 2 MiB, a streamed build under an
/// 82 MiB `--mem-limit` (172 M positions, 150 M requests) had two flushers;
/// with 1 MiB it has five: on an H200 host (W/64, 3 disks, the binaries one
/// after the other, bytes identical) 16.4 → 12.5 s, its waits for flushers
/// 5.6 → 1.9 s (README, "External memory"). The 20 MiB limit keeps one.
const FLUSHER_RECORDS: usize = if cfg!(test) { 100 } else { 64 << 10 };

/// What a [`RunWriter`] works with besides its files: the build's
/// profile, and the write buffers kept from one writer to the next.
#[derive(Clone)]
pub struct WriterParts {
    /// Where its timings go.
    pub profile: Arc<Profile>,
    /// Where its buffers come from and go back to: a step's buffers, fresh
    /// from the system, had their pages faulted in on the producing thread
    /// (the expand step's, one at a time), and their release cost a TLB
    /// shootdown on every core, every step of every pass.
    pub buffers: Arc<SpareBuffers<Record>>,
}

impl RunWriter {
    /// A writer of new run files of `kind` (any left by an interrupted step
    /// are removed) holding about `3 * capacity` records in memory at most.
    pub fn new(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        parts: &WriterParts,
    ) -> Result<RunWriter> {
        RunWriter::resume(disks, kind, capacity, RunIndex::default(), parts)
    }

    /// A writer that continues the run files of `kind` as a checkpoint recorded
    /// them: files are cut back to the recorded sizes (dropping what was
    /// appended after the checkpoint) and files of other buckets are removed.
    pub fn resume(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        at: RunIndex,
        parts: &WriterParts,
    ) -> Result<RunWriter> {
        cut_runs_back(disks, kind, &at.written)?;
        Ok(RunWriter::start(disks, kind, capacity, at, parts))
    }

    /// The bytes of write buffers a writer of `capacity` holds at most:
    /// what [`WriterParts::buffers`] needs to keep for the next.
    pub fn buffer_bytes(capacity: usize) -> usize {
        3 * capacity * std::mem::size_of::<Record>()
    }

    fn start(
        disks: &ScratchDisks,
        kind: &'static str,
        capacity: usize,
        at: RunIndex,
        parts: &WriterParts,
    ) -> RunWriter {
        let profile = &parts.profile;
        let flushers = flusher_count(capacity);
        // Buffers alive at once: the one being filled, one per flusher, and
        // a spare coming back; a flusher's grouping sort works in place.
        let capacity = (capacity * 3 / (flushers + 2)).max(1);
        let shared = Arc::new(Shared {
            disks: disks.clone(),
            kind,
            bytes_written: AtomicU64::new(at.bytes),
            records_written: AtomicU64::new(at.records),
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
        // Every emptied buffer comes back for reuse (a buffer is made only
        // when none is spare, so no more are alive than without it): a
        // fresh one's pages cost a fault and a zeroing each on the producer.
        let (empty_tx, empty_rx) = sync_channel::<Vec<Record>>(flushers + 1);
        let for_flushers = Arc::clone(&shared);
        let start_flushers = move || {
            (0..flushers)
                .map(|_| {
                    let shared = Arc::clone(&for_flushers);
                    let full_rx = Arc::clone(&full_rx);
                    let empty_tx = empty_tx.clone();
                    std::thread::Builder::new()
                        .name("tbforge-flush".into())
                        .spawn(move || {
                            let mut codec = FrameCodec::default();
                            loop {
                                let Ok(buf) = lock(&full_rx).recv() else {
                                    return;
                                };
                                let mut buf = shared.flush_or_record(buf, &mut codec);
                                buf.clear();
                                // The writer may be gone or already hold a spare: then drop it.
                                let _ = empty_tx.try_send(buf);
                                shared.settle_one();
                            }
                        })
                })
                // A flusher the system would not start is one fewer; with
                // none, the first hand-over finds no receiver and says so.
                .filter_map(|spawned| spawned.ok())
                .collect()
        };
        RunWriter {
            shared,
            buffer: Mutex::new(parts.buffers.take_empty(capacity)),
            spare: Arc::clone(&parts.buffers),
            capacity,
            full: Some(full_tx),
            empty: Mutex::new(empty_rx),
            unstarted: Mutex::new(Some(Box::new(start_flushers))),
            flushers: Mutex::new(Vec::new()),
        }
    }

    /// Adds records; hands the buffer to a flusher when it is full (the
    /// tests' way in: a build's records are made straight into the buffer).
    #[cfg(test)]
    pub fn push(&self, records: &[Record]) -> Result<()> {
        self.push_as(records, |buf, now| {
            if now.len() >= PARALLEL_PUSH {
                use rayon::prelude::*;
                buf.par_extend(now.par_iter().copied());
            } else {
                buf.extend_from_slice(now);
            }
        })
    }

    /// Adds an expander's requests as records, as it hands them back:
    /// made once, straight into the buffer.
    pub fn push_requests(&self, requests: Requests<'_>) -> Result<()> {
        for RequestPiece { bucket, lo, pairs } in requests.pieces(usize::MAX) {
            let base = bucket << requests.low_bits;
            self.push_mapped(
                pairs,
                |_| true,
                |&[index, requester]| Record {
                    key: base | u64::from(index),
                    payload: lo + u64::from(requester),
                },
            )?;
        }
        Ok(())
    }

    /// Adds the records `make` makes of the `items` that `keep` keeps, in
    /// order, made straight into the buffer: the answer step's answers to a
    /// block of requests. `keep` is asked first (and on its own) because
    /// making a record costs more: a pass that keeps few answers makes no
    /// more than those, and a step that keeps all (`|_| true`) counts none.
    pub fn push_mapped<T: Sync>(
        &self,
        items: &[T],
        keep: impl Fn(&T) -> bool + Sync,
        make: impl Fn(&T) -> Record + Sync,
    ) -> Result<()> {
        self.push_as(items, |buf, now| {
            if now.len() < PARALLEL_PUSH {
                buf.extend(now.iter().filter(|&item| keep(item)).map(&make));
                return;
            }
            // Counted first, then made in place: collecting pieces of
            // unknown length grew and copied a vector per piece.
            use rayon::prelude::*;
            let pieces: Vec<&[T]> = now.chunks(PUSH_PIECE).collect();
            let counts: Vec<usize> = pieces
                .par_iter()
                .map(|piece| piece.iter().filter(|&item| keep(item)).count())
                .collect();
            let start = buf.len();
            buf.par_extend(rayon::iter::repeat_n(
                Record::default(),
                counts.iter().sum(),
            ));
            let mut rest = &mut buf[start..];
            let mut outs = Vec::with_capacity(counts.len());
            for &n in &counts {
                let (out, tail) = std::mem::take(&mut rest).split_at_mut(n);
                outs.push(out);
                rest = tail;
            }
            pieces.into_par_iter().zip(outs).for_each(|(piece, out)| {
                let made = piece.iter().filter(|&item| keep(item)).map(&make);
                for (slot, made) in out.iter_mut().zip(made) {
                    *slot = made;
                }
            });
        })
    }

    /// Adds `items` through `fill`, which appends the records of the
    /// items it is given (never more than the buffer has room for).
    fn push_as<T>(&self, items: &[T], fill: impl Fn(&mut Vec<Record>, &[T])) -> Result<()> {
        let mut buf = lock(&self.buffer);
        let mut rest = items;
        while !rest.is_empty() {
            let room = self.capacity - buf.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            fill(&mut buf, now);
            rest = later;
            if buf.len() >= self.capacity {
                let full = std::mem::replace(&mut *buf, self.empty_buffer());
                self.hand_over(full)?;
            }
        }
        drop(buf);
        self.check()
    }

    /// A buffer to fill: one a flusher gave back, or a spare.
    fn empty_buffer(&self) -> Vec<Record> {
        lock(&self.empty)
            .try_recv()
            .unwrap_or_else(|_| self.spare.take_empty(self.capacity))
    }

    fn hand_over(&self, full: Vec<Record>) -> Result<()> {
        if let Some(start) = lock(&self.unstarted).take() {
            *lock(&self.flushers) = start();
        }
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
        let buf = std::mem::replace(&mut *lock(&self.buffer), self.empty_buffer());
        if !buf.is_empty() {
            self.hand_over(buf)?;
        }
        self.wait_settled();
        self.check()?;
        let written = lock(&self.shared.written).clone();
        let index = RunIndex {
            bytes: written.values().sum(),
            written,
            records: self.shared.records_written.load(Ordering::Relaxed),
        };
        sync_runs(&self.shared.disks, self.shared.kind, &index)?;
        Ok(index)
    }

    /// Flushes what is left, waits for the flushers; says what was written.
    pub fn finish(mut self) -> Result<RunIndex> {
        let last = std::mem::take(&mut *lock(&self.buffer));
        let unstarted = lock(&self.unstarted).take();
        if let (false, Some(_)) = (last.is_empty(), &unstarted) {
            // The only buffer: flushed here, as a flusher would, with no
            // thread to start and wait for.
            let mut flushed = self
                .shared
                .flush_or_record(last, &mut FrameCodec::default());
            flushed.clear();
            self.spare.keep(flushed);
        } else if !last.is_empty() {
            self.hand_over(last)?;
        }
        self.stop();
        self.check()?;
        let written = std::mem::take(&mut *lock(&self.shared.written));
        Ok(RunIndex {
            written,
            bytes: self.shared.bytes_written.load(Ordering::Relaxed),
            records: self.shared.records_written.load(Ordering::Relaxed),
        })
    }

    /// Closes the channel and joins the flushers (also on drop, after an
    /// error); the buffers they gave back are kept for the next writer.
    fn stop(&mut self) {
        self.full = None;
        // Flushers never started hold no buffer: their channels' ends go.
        lock(&self.unstarted).take();
        let flushers = std::mem::take(&mut *lock(&self.flushers));
        for handle in flushers {
            if handle.join().is_err() {
                lock(&self.shared.error).get_or_insert(Error::NotAvailable(format!(
                    "a {} run writer thread panicked",
                    self.shared.kind
                )));
            }
        }
        let empty = lock(&self.empty);
        while let Ok(buf) = empty.try_recv() {
            self.spare.keep(buf);
        }
        self.spare.keep(std::mem::take(&mut *lock(&self.buffer)));
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
    if sizes.is_empty() {
        // A new writer's case, every pass's: the files go, as between passes.
        return disks.clear_runs(Some(kind));
    }
    disks.forget_run_files();
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
    fn flush_or_record(&self, buf: Vec<Record>, codec: &mut FrameCodec) -> Vec<Record> {
        if lock(&self.error).is_some() {
            return buf;
        }
        let flushed =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.flush(buf, codec)));
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

    /// Sorts `buf` by key and appends each bucket's piece, encoded in
    /// frames, to its run file; gives the buffer back for reuse.
    fn flush(&self, buf: Vec<Record>, codec: &mut FrameCodec) -> Result<Vec<Record>> {
        if buf.is_empty() {
            return Ok(buf);
        }
        let mut buf = buf;
        let parallel = buf.len() >= PARALLEL_FLUSH;
        self.profile
            .time(Part::FlushGroup, || sort_by_key(&mut buf, parallel));
        // Encoded and written a few frames at a time (a frame at a time on
        // the pool): a bounded buffer, not a copy of the bucket.
        let piece_records = if parallel {
            FRAME_RECORDS
        } else {
            4 * FRAME_RECORDS
        };
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < buf.len() {
            let bucket = buf[start].bucket();
            let end = start + buf[start..].partition_point(|r| r.bucket() == bucket);
            for from in (start..end).step_by(piece_records) {
                pieces.push((bucket, from..(from + piece_records).min(end)));
            }
            start = end;
        }
        if !parallel {
            let mut bytes = Vec::new();
            for (bucket, range) in pieces {
                bytes.clear();
                self.profile.time(Part::FlushEncode, || {
                    codec.encode(&buf[range.clone()], &mut bytes)
                })?;
                self.append(bucket, &bytes, range.len())?;
            }
            return Ok(buf);
        }
        use rayon::prelude::*;
        let group = 2 * rayon::current_num_threads();
        for pieces in pieces.chunks(group) {
            let encoded: Vec<Result<Vec<u8>>> = self.profile.time(Part::FlushEncode, || {
                pieces
                    .par_iter()
                    .map(|(_, range)| {
                        let mut bytes = Vec::new();
                        with_pooled_codec(|codec| codec.encode(&buf[range.clone()], &mut bytes))
                            .map(|()| bytes)
                    })
                    .collect()
            });
            for ((bucket, range), bytes) in pieces.iter().zip(encoded) {
                self.append(*bucket, &bytes?, range.len())?;
            }
        }
        Ok(buf)
    }

    /// Appends `bytes`, the frames of `records` records, to bucket
    /// `bucket`'s run file.
    fn append(&self, bucket: u64, bytes: &[u8], records: usize) -> Result<()> {
        let path = self.disks.run_path(self.kind, bucket as usize);
        let file = self.run_file(bucket, &path)?;
        let started = std::time::Instant::now();
        let len = bytes.len() as u64;
        let at = {
            let mut written = lock(&self.written);
            let size = written.entry(bucket).or_default();
            *size += len;
            *size - len
        };
        file.write_all_at(bytes, at)
            .map_err(|e| Error::io("writing run file", &path, e))?;
        start_writeback(&file, at, len);
        self.bytes_written.fetch_add(len, Ordering::Relaxed);
        self.records_written
            .fetch_add(records as u64, Ordering::Relaxed);
        self.profile.add(Part::FlushWrite, started.elapsed());
        Ok(())
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
/// records (a reader thread reads the next frames while this block's are
/// decoded, on all cores, and applied); returns the bytes read. Blocks are
/// decoded into `decoded`, which a caller keeps between buckets: a fresh
/// block's pages cost a fault and a zeroing each, on the thread every
/// core then waits for.
pub fn read_bucket(
    (disks, kind): (&ScratchDisks, &str),
    index: &RunIndex,
    bucket: u64,
    blocks: Blocks,
    profile: &Profile,
    decoded: &mut Vec<Record>,
    mut apply: impl FnMut(&[Record]) -> Result<()>,
) -> Result<u64> {
    let Blocks {
        records: block,
        order,
    } = blocks;
    let block = block.max(1);
    let expected = index.written.get(&bucket).copied().unwrap_or(0);
    if expected == 0 {
        return Ok(0);
    }
    let path = disks.run_path(kind, bucket as usize);
    let file = std::fs::File::open(&path).map_err(|e| Error::io("opening run file", &path, e))?;
    let have = file
        .metadata()
        .map_err(|e| Error::io("reading size of", &path, e))?
        .len();
    let reader = FrameReader {
        path: &path,
        expected,
        block,
    };
    if have != expected {
        return Err(reader.damaged(format!("{have} bytes, {expected} were written")));
    }
    let records = decoded;
    let mut consume = |batch: &FrameBatch| -> Result<()> {
        profile
            .time(Part::RunDecode, || batch.decode(bucket, records))
            .map_err(|what| reader.damaged(what))?;
        for piece in records.chunks_mut(block) {
            if order == Order::Sorted && !ascending_runs_at_most(piece, SWEEPS) {
                profile.time(Part::BlockSort, || piece.radix_sort_unstable());
            }
            apply(piece)?;
        }
        Ok(())
    };
    if expected <= INLINE_READ {
        // A frame or two: no thread to start.
        return reader.read(file, |batch| {
            consume(&batch)?;
            Ok(batch)
        });
    }
    std::thread::scope(|scope| {
        // Two batches in memory: the one decoded and applied, the one read.
        let (tx, rx) = sync_channel::<FrameBatch>(0);
        // Batches come back for reuse: no fresh pages to fault in per batch.
        let (spare_tx, spare_rx) = sync_channel::<FrameBatch>(1);
        let reader = &reader;
        // The reader stops at its first error and drops its sender; the
        // error comes back through its join.
        let read = std::thread::Builder::new()
            .name("tbforge-runread".into())
            .spawn_scoped(scope, move || {
                reader.read(file, |batch| {
                    tx.send(batch).map_err(|_| {
                        Error::NotAvailable("the run reader's consumer stopped".into())
                    })?;
                    Ok(spare_rx.try_recv().unwrap_or_default())
                })
            })
            .map_err(|e| Error::NotAvailable(format!("cannot start a run reader thread: {e}")))?;
        let mut applied = Ok(());
        while let Ok(batch) = profile.time(Part::WaitRunRead, || rx.recv()) {
            applied = consume(&batch);
            if applied.is_err() {
                break;
            }
            let _ = spare_tx.try_send(batch);
        }
        // A failed apply ends the reader: its next send finds no receiver.
        drop(rx);
        let read = read
            .join()
            .unwrap_or_else(|_| Err(Error::NotAvailable("a run reader thread panicked".into())));
        applied?;
        read
    })
}

/// Bytes a run reader reads at once.
const READ_BUFFER: usize = 1 << 20;

/// Run files up to this size are read on the applying thread; larger ones
/// on a reader thread beside it.
const INLINE_READ: u64 = 64 << 10;

/// Frames read from a run file, not yet decoded: headers and bodies as on
/// disk, and where each frame starts.
#[derive(Default)]
struct FrameBatch {
    bytes: Vec<u8>,
    frames: Vec<usize>,
    records: usize,
}

impl FrameBatch {
    fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
        self.records = 0;
    }

    /// Decodes the frames into `out` (replacing what it held), in
    /// parallel: one reader thread decoding alone held the answer and
    /// combine steps up (on 16 cores they waited for it a quarter of
    /// their time). Each frame decodes straight into its place in `out`:
    /// a block's records are held once, not once per frame and again
    /// joined (under `--mem-limit` that copy was the difference).
    fn decode(&self, bucket: u64, out: &mut Vec<Record>) -> std::result::Result<(), String> {
        use rayon::prelude::*;
        // Every record is decoded into its place (or the batch fails), so
        // what `out` held is not cleared first: zeroing a block on this
        // thread held every core up.
        if out.len() < self.records {
            out.resize(self.records, Record::default());
        }
        out.truncate(self.records);
        let mut places = Vec::with_capacity(self.frames.len());
        let mut rest = &mut out[..];
        for &at in &self.frames {
            let (len, count, raw, crc) = frame_header(&self.bytes[at..at + FRAME_HEADER]);
            let body = &self.bytes[at + FRAME_HEADER..at + FRAME_HEADER + len as usize];
            let (place, tail) = std::mem::take(&mut rest).split_at_mut(count as usize);
            places.push((body, (raw, crc), place));
            rest = tail;
        }
        places
            .into_par_iter()
            .try_for_each(|(body, fields, place)| {
                with_pooled_codec(|codec| codec.decode(bucket, fields, body, place))
            })
    }
}

/// Runs `f` with a codec from the pool that the pool's threads share to
/// decode a reader's frames and encode a large flush's: not one kept per
/// thread, as a zstd context is about 100 KB (decompression) or more, and
/// over a build every pool thread would come to hold one (1.6 MB on 16
/// threads took a `--mem-limit 16M` build over its limit), while no more
/// than a batch's frames are ever worked on at once.
fn with_pooled_codec<R>(f: impl FnOnce(&mut FrameCodec) -> R) -> R {
    static CODECS: Mutex<Vec<FrameCodec>> = Mutex::new(Vec::new());
    let mut codec = lock(&CODECS).pop().unwrap_or_default();
    let done = f(&mut codec);
    lock(&CODECS).push(codec);
    done
}

/// A frame header's fields: body length, records, raw length (and the
/// compression bit), CRC-32.
fn frame_header(header: &[u8]) -> (u32, u32, u32, u32) {
    let field =
        |i: usize| u32::from_le_bytes(header[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    (field(0), field(1), field(2), field(3))
}

/// Reads one bucket's run file frame by frame.
struct FrameReader<'a> {
    path: &'a std::path::Path,
    expected: u64,
    block: usize,
}

impl FrameReader<'_> {
    fn damaged(&self, what: String) -> Error {
        Error::io(
            "reading run file",
            self.path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{what}: scratch was changed during the build; resume it with --resume"),
            ),
        )
    }

    /// Reads the file's frames in batches of about `self.block` records
    /// (at least one frame), each handed to `emit`, which gives back an
    /// emptied batch for the next; returns the bytes read.
    fn read(
        &self,
        file: std::fs::File,
        mut emit: impl FnMut(FrameBatch) -> Result<FrameBatch>,
    ) -> Result<u64> {
        let io = |e| Error::io("reading run file", self.path, e);
        let mut input = std::io::BufReader::with_capacity(READ_BUFFER, file);
        let (mut at, mut ahead) = (0u64, 0u64);
        let mut batch = FrameBatch::default();
        while at < self.expected {
            // The kernel fetches the next stretch while this one is read:
            // two requests at the disk, not one.
            if at + READ_BUFFER as u64 >= ahead {
                let len = 4 * READ_BUFFER as u64;
                read_ahead(input.get_ref(), ahead.max(at), len);
                ahead = ahead.max(at) + len;
            }
            if self.expected - at < FRAME_HEADER as u64 {
                return Err(self.damaged("ends inside a frame header".into()));
            }
            let start = batch.bytes.len();
            batch.bytes.resize(start + FRAME_HEADER, 0);
            input.read_exact(&mut batch.bytes[start..]).map_err(io)?;
            let (len, count, _, _) = frame_header(&batch.bytes[start..]);
            at += FRAME_HEADER as u64;
            if u64::from(len) > self.expected - at || count as usize > FRAME_RECORDS {
                return Err(self.damaged("a frame header is damaged".into()));
            }
            if batch.records > 0 && batch.records + count as usize > self.block {
                // This frame opens the next batch.
                let header: [u8; FRAME_HEADER] = batch.bytes[start..].try_into().expect("a header");
                batch.bytes.truncate(start);
                batch = emit(batch)?;
                batch.clear();
                batch.bytes.extend_from_slice(&header);
            }
            let frame = batch.bytes.len() - FRAME_HEADER;
            batch.bytes.resize(frame + FRAME_HEADER + len as usize, 0);
            input
                .read_exact(&mut batch.bytes[frame + FRAME_HEADER..])
                .map_err(io)?;
            at += u64::from(len);
            batch.frames.push(frame);
            batch.records += count as usize;
        }
        if !batch.frames.is_empty() {
            emit(batch)?;
        }
        Ok(at)
    }
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

    /// The blocks the reader hands over, of 100 records at most, decoded
    /// into `decoded` (which holds an earlier bucket's records: they must
    /// not leak into this one's).
    fn read_all(
        disks: &ScratchDisks,
        index: &RunIndex,
        bucket: u64,
        order: Order,
        decoded: &mut Vec<Record>,
    ) -> Vec<Vec<Record>> {
        let mut out = Vec::new();
        let profile = Profile::default();
        let blocks = Blocks {
            records: 100,
            order,
        };
        read_bucket(
            (disks, "req"),
            index,
            bucket,
            blocks,
            &profile,
            decoded,
            |r| {
                assert!(!r.is_empty() && r.len() <= 100, "{} records", r.len());
                out.push(r.to_vec());
                Ok(())
            },
        )
        .unwrap();
        out
    }

    /// A writer's parts: a profile of its own, buffers kept for the next
    /// writer of `capacity`.
    fn parts(capacity: usize) -> WriterParts {
        WriterParts {
            profile: Arc::new(Profile::default()),
            buffers: Arc::new(SpareBuffers::new(RunWriter::buffer_bytes(capacity))),
        }
    }

    /// The buffers a finished writer leaves serve the next one, within
    /// their bound, and its records come back as the first's did.
    #[test]
    fn a_finished_writers_buffers_serve_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let disks = ScratchDisks::open(&[dir.path().join("a")], "t").unwrap();
        // Buffers of a few hundred KB: large enough to be kept.
        let capacity = 40_000;
        let parts = parts(capacity);
        let records = scrambled(300_000, 3);
        let mut held = Vec::new();
        for writer_number in 0..2 {
            // A new writer of the same kind starts its run files afresh.
            let writer = RunWriter::new(&disks, "req", capacity, &parts).unwrap();
            if let Some(&before) = held.last() {
                assert!(parts.buffers.held() < before, "the writer took none");
            }
            writer.push(&records).unwrap();
            let index = writer.finish().unwrap();
            assert_eq!(index.records, records.len() as u64);
            let kept = parts.buffers.held();
            assert!(
                kept > 0 && kept <= RunWriter::buffer_bytes(capacity),
                "{kept} bytes kept"
            );
            held.push(kept);
            let mut decoded = Vec::new();
            let mut got: Vec<Record> = (0..3)
                .flat_map(|b| read_all(&disks, &index, b, Order::Grouped, &mut decoded).concat())
                .collect();
            let mut want = records.clone();
            got.sort_unstable_by_key(|r| (r.key, r.payload));
            want.sort_unstable_by_key(|r| (r.key, r.payload));
            assert!(got == want, "writer {writer_number}: records differ");
        }
    }

    /// A mapped push keeps the records its map makes and drops the rest,
    /// on the calling thread and on the pool (pushes on both sides of
    /// `PARALLEL_PUSH`, pieces of `PUSH_PIECE` that keep none, some or
    /// all), across buffers that fill in the middle of a push.
    #[test]
    fn a_mapped_push_keeps_what_its_map_makes() {
        let dir = tempfile::tempdir().unwrap();
        let disks = ScratchDisks::open(&[dir.path().join("a")], "t").unwrap();
        let capacity = 30_000;
        let parts = parts(capacity);
        let items = scrambled(3 * PARALLEL_PUSH + 777, 2);
        let keep = |r: &Record| {
            let piece = r.payload as usize / PUSH_PIECE;
            match piece % 3 {
                0 => false,
                1 => r.index() % 3 == 0,
                _ => true,
            }
        };
        let make = |r: &Record| Record::new(r.bucket() ^ 1, r.index(), r.payload * 7);
        let writer = RunWriter::new(&disks, "req", capacity, &parts).unwrap();
        let (small, large) = items.split_at(1000);
        writer.push_mapped(small, keep, make).unwrap();
        writer.push_mapped(large, keep, make).unwrap();
        let index = writer.finish().unwrap();
        let mut want: Vec<Record> = items.iter().filter(|r| keep(r)).map(make).collect();
        assert!(want.len() > PARALLEL_PUSH && want.len() < items.len());
        assert_eq!(index.records, want.len() as u64);
        let mut decoded = Vec::new();
        let mut got: Vec<Record> = (0..2)
            .flat_map(|b| read_all(&disks, &index, b, Order::Grouped, &mut decoded).concat())
            .collect();
        got.sort_unstable_by_key(|r| (r.key, r.payload));
        want.sort_unstable_by_key(|r| (r.key, r.payload));
        assert!(got == want, "records differ");
    }

    #[test]
    fn every_record_comes_back_in_its_bucket_in_either_order() {
        every_record_comes_back(1);
    }

    /// Sixteen threads: eight flushers write pieces of the same buckets side
    /// by side, producers push at once, a checkpoint comes in between.
    #[test]
    fn every_record_comes_back_from_several_flushers() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        pool.install(|| {
            assert_eq!(flusher_count(2000), 8);
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
            // Enough for pieces of a flush long enough for their deltas to
            // stay small with eight flushers (300 records each over 5 buckets
            // made 5.2 bytes a record), and still many flushes.
            let capacity = 2000;
            let writer = RunWriter::new(&disks, "req", capacity, &parts(capacity)).unwrap();
            let (first, second) = records.split_at(records.len() / 3);
            for half in [first, second] {
                half.par_chunks(333)
                    .with_min_len(half.len() / 333 / producers + 1)
                    .for_each(|batch| writer.push(batch).unwrap());
                if half.len() == first.len() {
                    let at = writer.durable().unwrap();
                    assert_eq!(at.records, first.len() as u64);
                }
            }
            let index = writer.finish().unwrap();
            assert_eq!(index.records, records.len() as u64);
            // Sorted 20-bit indices in 5 buckets differ by a few units, and
            // payloads are below 2^16: about 4 bytes a record, not 16.
            assert!(
                index.bytes < records.len() as u64 * 5,
                "{} bytes",
                index.bytes
            );
            let mut decoded = Vec::new();
            for bucket in 0..5 {
                let blocks = read_all(&disks, &index, bucket, order, &mut decoded);
                if order == Order::Sorted {
                    // Each block the reader hands over is a few ascending runs.
                    for block in &blocks {
                        assert!(ascending_runs_at_most(block, SWEEPS));
                    }
                }
                let mut got = blocks.concat();
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
    fn packed_sorts_order_records_as_their_keys_do() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // (first bucket, buckets, index mask, records): spans of one to
        // eight bytes, the largest bucket and index, keys all equal.
        let top = (1u64 << LOW_BITS) - 1;
        let shapes = [
            (0, 1, 0, 1_000),
            (7, 1, 0xff, 1_000),
            (3, 3, (1 << 26) - 1, 5_000),
            (40, 47, (1 << 22) - 1, 5_000),
            (MAX_BUCKETS - 5, 5, top, 5_000),
            (0, MAX_BUCKETS, top, 5_000),
            (9, 2, 0xffff, 200_000),
        ];
        for ((first, buckets, mask, n), parallel) in shapes
            .into_iter()
            .flat_map(|shape| [(shape, false), (shape, true)])
        {
            let records: Vec<Record> = (0..n)
                .map(|i| Record::new(first + next() % buckets, next() & mask, i as u64))
                .collect();
            let mut sorted = records.clone();
            sort_by_key(&mut sorted, parallel);
            assert!(sorted.windows(2).all(|w| w[0].key <= w[1].key));
            let mut want = records;
            want.sort_unstable_by_key(|r| (r.key, r.payload));
            sorted.sort_by_key(|r| (r.key, r.payload));
            assert_eq!(sorted, want, "{first} {buckets} {mask:x} {n} {parallel}");
        }
    }

    #[test]
    fn ascending_runs_are_counted() {
        let keys =
            |ks: &[u64]| -> Vec<Record> { ks.iter().map(|&k| Record::new(0, k, 0)).collect() };
        assert!(ascending_runs_at_most(&keys(&[]), 1));
        assert!(ascending_runs_at_most(&keys(&[1, 2, 2, 9]), 1));
        assert!(!ascending_runs_at_most(&keys(&[1, 2, 0, 9]), 1));
        assert!(ascending_runs_at_most(&keys(&[1, 2, 0, 9]), 2));
        assert!(ascending_runs_at_most(&keys(&[5, 6, 1, 2, 0, 3]), 3));
        assert!(!ascending_runs_at_most(&keys(&[5, 6, 1, 2, 0, 3]), 2));
        // Long enough to be looked at on all threads: three runs, the
        // descents at the ends of the pieces threads may split it at.
        let n = PARALLEL_LOOK as u64 * 3;
        let three: Vec<u64> = (0..n).map(|i| i % (n / 3) + i / (n / 3)).collect();
        assert!(ascending_runs_at_most(&keys(&three), 3));
        assert!(!ascending_runs_at_most(&keys(&three), 2));
        let one: Vec<u64> = (0..n).collect();
        assert!(ascending_runs_at_most(&keys(&one), 1));
    }

    #[test]
    fn frames_round_trip_at_the_edges_of_the_key_and_payload() {
        let bucket = MAX_BUCKETS - 1;
        let mut records: Vec<Record> = [0, 0, 1, 5, (1 << LOW_BITS) - 1]
            .iter()
            .zip([u64::MAX, 0, 1 << 63, 7, u64::MAX - 1])
            .map(|(&i, p)| Record::new(bucket, i, p))
            .collect();
        // More than a frame: the second starts its deltas afresh.
        records.extend(
            (0..FRAME_RECORDS as u64 + 10).map(|i| Record::new(bucket, (1 << LOW_BITS) - 1, i)),
        );
        records.sort_by_key(|r| r.key);
        let mut codec = FrameCodec::default();
        let mut bytes = Vec::new();
        codec.encode(&records, &mut bytes).unwrap();
        let mut back = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let field = |i: usize| {
                u32::from_le_bytes(bytes[at + 4 * i..at + 4 * i + 4].try_into().unwrap())
            };
            let (len, count, raw, crc) = (field(0), field(1), field(2), field(3));
            let body = &bytes[at + FRAME_HEADER..at + FRAME_HEADER + len as usize];
            let from = back.len();
            back.resize(from + count as usize, Record::default());
            codec
                .decode(bucket, (raw, crc), body, &mut back[from..])
                .unwrap();
            at += FRAME_HEADER + len as usize;
        }
        assert_eq!(back, records);
    }

    /// A run file changed on disk (a flipped byte, a cut, bytes added) is
    /// an error naming the file and the damage, never wrong records.
    #[test]
    fn damaged_run_files_are_errors_that_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let disks = ScratchDisks::open(&[dir.path().to_path_buf()], "t").unwrap();
        let parts = parts(1000);
        let writer = RunWriter::new(&disks, "req", 1000, &parts).unwrap();
        writer.push(&scrambled(20_000, 1)).unwrap();
        let index = writer.finish().unwrap();
        let profile = &parts.profile;
        let path = disks.run_path("req", 0);
        let good = std::fs::read(&path).unwrap();
        let read = |index: &RunIndex| {
            let blocks = Blocks {
                records: 100,
                order: Order::Grouped,
            };
            read_bucket(
                (&disks, "req"),
                index,
                0,
                blocks,
                profile,
                &mut Vec::new(),
                |_| Ok(()),
            )
        };
        assert_eq!(read(&index).unwrap(), good.len() as u64);
        for at in [0, 5, 17, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let e = read(&index).unwrap_err().to_string();
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                e.contains(name) && e.contains("scratch was changed"),
                "{at}: {e}"
            );
        }
        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        let e = read(&index).unwrap_err().to_string();
        assert!(e.contains("were written"), "{e}");
        // A file cut back between frames with the index to match reads
        // what is left; one cut inside a frame is damage.
        let first_frame = FRAME_HEADER + u32::from_le_bytes(good[..4].try_into().unwrap()) as usize;
        let mut cut = index.clone();
        cut.written.insert(0, first_frame as u64 + 7);
        cut.bytes = first_frame as u64 + 7;
        std::fs::write(&path, &good[..first_frame + 7]).unwrap();
        let e = read(&cut).unwrap_err().to_string();
        assert!(e.contains("scratch was changed"), "{e}");
    }

    #[test]
    fn order_follows_the_range_size() {
        let cache = cache_bytes();
        assert!(cache >= 1 << 10, "{cache}");
        assert_eq!(Order::for_range(cache), Order::Grouped);
        assert_eq!(Order::for_range(cache + 1), Order::Sorted);
    }

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(cache_size("300M"), Some(300 << 20));
        assert_eq!(cache_size("1048576"), Some(1 << 20));
        assert_eq!(cache_size(""), None);
        assert_eq!(cache_size("0K"), None);
        assert_eq!(cache_size("big"), None);
    }
}
