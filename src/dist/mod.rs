//! One build by several workers: MPI ranks (feature `mpi`), or one thread per
//! GPU of a host (`--gpus`), each a *member* of a [`Team`].
//!
//! Every member runs the same build, partition after partition. A partition
//! is solved by all members together: each owns a share of its index
//! ([`Team::slice`], or blocks dealt round-robin), solves that share, and
//! learns the others' results through the team's collectives; or, where
//! the members have a device each and partitions do not read each other,
//! partitions are solved side by side, each whole by one member and handed
//! to the others ([`Team::broadcast_shared`]). Every member ends each
//! partition holding all of its values, so that later partitions read
//! earlier ones locally. Member `slot % size` (side by side: the owner)
//! writes partition `slot`'s file; member 0 writes the build state and the
//! manifest. The values of a partition are a function of
//! the game alone, so the bytes never depend on the number of members.
//!
//! The collectives here are all-gather and all-to-all of byte buffers, in
//! rank order, with what they moved and waited counted ([`CommStats`]). A
//! member that fails aborts the team: the others' next collective returns
//! [`Error::Team`] (threads) or the MPI job ends (`MPI_Abort`, mpirun stops
//! every rank), never a hang.

mod threads;
pub use threads::ThreadTeam;

#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
pub use self::mpi::MpiTeam;

use crate::{Error, Result};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The members of one build and their collectives.
pub trait Team: Send + Sync + std::fmt::Debug {
    /// This member's number, 0..size.
    fn rank(&self) -> usize;

    /// How many members build together.
    fn size(&self) -> usize;

    /// Sends `parts[j]` to member j (`parts.len() == size`) and returns what
    /// every member sent to this one, by sender. Every member must call it,
    /// in the same order as every other collective.
    fn all_to_all(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>>;

    /// Ends the team's work because this member failed with `message`: the
    /// others' collectives fail instead of waiting for it. Under MPI the
    /// whole job ends and this call does not return.
    fn abort(&self, message: &str);

    /// What the collectives moved and waited so far.
    fn stats(&self) -> &CommStats;

    /// "mpi", "gpu threads": for logs.
    fn kind(&self) -> &'static str;

    /// Whether the members are threads of one process, so that an address
    /// of one member's (a device buffer, under unified addressing) is valid
    /// in every other's: members may then copy from each other's GPUs
    /// directly, with collectives only to agree on when.
    fn shares_memory(&self) -> bool {
        false
    }

    /// How many members run in this process (threads), sharing its cores
    /// and its thread pool; 1 for members that are processes (MPI ranks,
    /// each with its own `--threads`).
    fn members_in_process(&self) -> usize {
        1
    }

    /// Every member's `mine`, in rank order (this member's own included).
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.all_to_all(vec![mine.to_vec(); self.size()])
    }

    /// The sum of every member's `x`.
    fn all_sum(&self, x: u64) -> Result<u64> {
        Ok(self
            .all_gather(&x.to_le_bytes())?
            .iter()
            .map(|b| read_u64(b))
            .sum())
    }

    /// The largest of every member's `x`.
    fn all_max(&self, x: u64) -> Result<u64> {
        Ok(self
            .all_gather(&x.to_le_bytes())?
            .iter()
            .map(|b| read_u64(b))
            .max()
            .unwrap_or(0))
    }

    /// Member `root`'s bytes, on every member (`mine` is read on `root` only).
    fn broadcast(&self, root: usize, mine: &[u8]) -> Result<Vec<u8>> {
        let parts = if self.rank() == root {
            vec![mine.to_vec(); self.size()]
        } else {
            vec![Vec::new(); self.size()]
        };
        Ok(std::mem::take(&mut self.all_to_all(parts)?[root]))
    }

    /// Member `root`'s buffer on every member (`mine` is read on `root`
    /// only; `root` gets it back): a partition's values handed on by the
    /// member that solved it. Members that share memory share the buffer
    /// itself instead of copies.
    fn broadcast_shared(&self, root: usize, mine: Arc<Vec<u8>>) -> Result<Arc<Vec<u8>>> {
        broadcast_copied(self, root, mine)
    }

    /// `len` zeroed bytes that every member addresses at once, where the
    /// members can share memory (threads of one process; MPI ranks of one
    /// host, through an MPI-3 shared window), or `None` where they cannot
    /// (then they exchange through the collectives). A collective: every
    /// member asks for the same `len`, and all get a region or none. What a
    /// member stores in it before a collective, the others read after.
    fn shared_region(&self, len: usize) -> Result<Option<SharedRegion>> {
        let _ = len;
        Ok(None)
    }

    /// Gives back a region of [`Self::shared_region`]: a collective, on the
    /// path where every member succeeded. (A member leaving on an error
    /// drops its region instead: the team is aborted, and the memory goes
    /// with the process or the last member.)
    fn free_region(&self, region: SharedRegion) -> Result<()> {
        drop(region);
        Ok(())
    }

    /// Waits until every member has come here.
    fn barrier(&self) -> Result<()> {
        self.all_gather(&[]).map(|_| ())
    }

    /// This member's slice of `len` indices: contiguous, in rank order,
    /// boundaries on multiples of `align` (a power of two), as even as that
    /// allows.
    fn slice(&self, len: u64, align: u64) -> Range<u64> {
        slice_of(len, align, self.rank(), self.size())
    }

    /// Whether this member writes partition `slot`'s file.
    fn writes(&self, slot: usize) -> bool {
        slot % self.size() == self.rank()
    }
}

/// Memory that every member of a team addresses ([`Team::shared_region`]),
/// read and written as atomics: members store into it concurrently. A region
/// is used either as bytes or as 64-bit words, never both.
pub struct SharedRegion {
    base: std::ptr::NonNull<u8>,
    len: usize,
    _owner: RegionOwner,
}

/// What keeps a region's memory alive.
pub(crate) enum RegionOwner {
    /// Threads of one process: the last member's drop frees it.
    Heap(#[allow(dead_code)] Arc<Vec<AtomicU64>>),
    /// An MPI shared window, freed by [`Team::free_region`] alone (freeing
    /// is a collective, which a member leaving on an error must not enter).
    #[cfg(feature = "mpi")]
    Window,
}

// SAFETY: the region is only ever accessed through atomics (`bytes`,
// `words`), which any thread may use concurrently; the owner is Send and
// Sync itself (an Arc) or holds nothing.
unsafe impl Send for SharedRegion {}
// SAFETY: as for Send.
unsafe impl Sync for SharedRegion {}

impl std::fmt::Debug for SharedRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedRegion({} bytes)", self.len)
    }
}

impl SharedRegion {
    /// A region of `len` bytes at `base`, kept alive by `owner`. `base` must
    /// be 8-aligned, point to `len` bytes (a multiple of 8) that stay
    /// mapped while `owner` lives, and be accessed only through atomics.
    pub(crate) fn new(base: std::ptr::NonNull<u8>, len: usize, owner: RegionOwner) -> SharedRegion {
        assert!(
            base.as_ptr() as usize % 8 == 0 && len % 8 == 0,
            "regions hold whole words"
        );
        SharedRegion {
            base,
            len,
            _owner: owner,
        }
    }

    /// Threads' region: `words`, shared by every member that holds it.
    pub(crate) fn from_words(words: Arc<Vec<AtomicU64>>) -> SharedRegion {
        let base = std::ptr::NonNull::new(words.as_ptr() as *mut u8)
            .unwrap_or(std::ptr::NonNull::<u64>::dangling().cast());
        SharedRegion::new(base, words.len() * 8, RegionOwner::Heap(words))
    }

    /// The region's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The region as bytes.
    pub fn bytes(&self) -> &[std::sync::atomic::AtomicU8] {
        // SAFETY: `new`'s contract: `len` bytes stay mapped while `self`
        // (its owner) lives, and are only accessed through atomics.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().cast(), self.len) }
    }

    /// The region as 64-bit words.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: as in `bytes`; `new` checked that base and length are
        // whole words.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().cast(), self.len / 8) }
    }
}

/// [`Team::broadcast_shared`] through [`Team::broadcast`]: `root` keeps its
/// buffer, every other member receives a copy.
fn broadcast_copied<T: Team + ?Sized>(
    team: &T,
    root: usize,
    mine: Arc<Vec<u8>>,
) -> Result<Arc<Vec<u8>>> {
    if team.rank() == root {
        team.broadcast(root, &mine)?;
        Ok(mine)
    } else {
        team.broadcast(root, &[]).map(Arc::new)
    }
}

/// Block-cyclic ownership of `len` indices: block `b` (indices `b * block`
/// up to `(b + 1) * block`) belongs to member `b % size`. Retrograde passes
/// decide positions unevenly along the index (a pass may find all its wins
/// in one region), so contiguous slices leave members waiting for the one
/// that holds the busy region; interleaved blocks share every region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// Indices in all.
    pub len: u64,
    /// Indices per block (a multiple of 64 where words of bits are owned).
    pub block: u64,
    /// Members.
    pub size: usize,
}

impl Blocks {
    /// The ownership of `len` indices in blocks of `block` among `size` members.
    pub fn new(len: u64, block: u64, size: usize) -> Blocks {
        Blocks {
            len,
            block: block.max(1),
            size: size.max(1),
        }
    }

    /// The member that owns index `i`.
    pub fn owner(&self, i: u64) -> usize {
        ((i / self.block) % self.size as u64) as usize
    }

    /// The blocks member `rank` owns, in index order.
    pub fn of(&self, rank: usize) -> impl Iterator<Item = Range<u64>> + Clone + Send + '_ {
        let blocks = self.len.div_ceil(self.block);
        (rank as u64..blocks)
            .step_by(self.size)
            .map(move |b| b * self.block..((b + 1) * self.block).min(self.len))
    }

    /// Indices member `rank` owns.
    pub fn count(&self, rank: usize) -> u64 {
        self.of(rank).map(|r| r.end - r.start).sum()
    }
}

/// Member `rank`'s slice of `len` indices among `size` (see [`Team::slice`]).
pub fn slice_of(len: u64, align: u64, rank: usize, size: usize) -> Range<u64> {
    let units = len.div_ceil(align.max(1));
    let bound = |r: usize| ((units as u128 * r as u128 / size as u128) as u64 * align).min(len);
    bound(rank)..bound(rank + 1)
}

fn read_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// A team of one: the plain build. Its collectives return at once.
#[derive(Debug, Default)]
pub struct Solo {
    stats: CommStats,
}

impl Team for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn all_to_all(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        Ok(parts)
    }
    fn abort(&self, _message: &str) {}
    fn stats(&self) -> &CommStats {
        &self.stats
    }
    fn kind(&self) -> &'static str {
        "solo"
    }
}

/// What a member's collectives moved and how long it spent in them (its
/// own waiting for the others included): the build log's communication
/// figures.
#[derive(Debug, Default)]
pub struct CommStats {
    calls: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    nanos: AtomicU64,
}

/// A reading of [`CommStats`]; differences of two readings give a step's share.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CommReading {
    /// Collectives called.
    pub calls: u64,
    /// Bytes sent to other members.
    pub bytes_sent: u64,
    /// Bytes received from other members.
    pub bytes_received: u64,
    /// Seconds inside collectives (moving data and waiting for the others).
    pub seconds: f64,
}

impl CommReading {
    /// What happened between `earlier` and this reading.
    pub fn since(&self, earlier: &CommReading) -> CommReading {
        CommReading {
            calls: self.calls - earlier.calls,
            bytes_sent: self.bytes_sent - earlier.bytes_sent,
            bytes_received: self.bytes_received - earlier.bytes_received,
            seconds: (self.seconds - earlier.seconds).max(0.0),
        }
    }
}

impl CommStats {
    /// The totals so far.
    pub fn read(&self) -> CommReading {
        CommReading {
            calls: self.calls.load(Ordering::Relaxed),
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            bytes_received: self.bytes_received.load(Ordering::Relaxed),
            seconds: self.nanos.load(Ordering::Relaxed) as f64 * 1e-9,
        }
    }

    /// Counts one collective that started at `started`, sending `sent` bytes
    /// to others and receiving `received` from them.
    pub(crate) fn record(&self, started: Instant, sent: u64, received: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.bytes_sent.fetch_add(sent, Ordering::Relaxed);
        self.bytes_received.fetch_add(received, Ordering::Relaxed);
        self.nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// The error a member's collective returns once another member aborted.
pub(crate) fn aborted(rank: usize, size: usize, message: &str) -> Error {
    Error::Team {
        rank,
        size,
        message: message.to_string(),
    }
}

/// Concatenated little-endian u64s, for lists exchanged between members.
pub fn encode_u64s(xs: &[u64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The u64s of [`encode_u64s`]; a length that is not a multiple of 8 is a
/// broken exchange.
pub fn decode_u64s(bytes: &[u8]) -> Result<Vec<u64>> {
    if bytes.len() % 8 != 0 {
        return Err(Error::NotAvailable(format!(
            "a member sent {} bytes where a list of 8-byte numbers was expected; report this as a bug",
            bytes.len()
        )));
    }
    Ok(bytes.chunks_exact(8).map(read_u64).collect())
}

/// Ascending u64s as deltas in LEB128 (7 bits a byte): what members send
/// each other are sorted ranks, mostly close together, 1 to 3 bytes each
/// instead of 8. Not ascending: the plain encoding is used (first byte 0).
pub fn encode_ascending(xs: &[u64]) -> Vec<u8> {
    if xs.windows(2).any(|w| w[0] > w[1]) {
        let mut out = vec![0u8];
        out.extend(encode_u64s(xs));
        return out;
    }
    let mut out = Vec::with_capacity(1 + xs.len() * 2);
    out.push(1);
    let mut last = 0u64;
    for &x in xs {
        let mut d = x - last;
        last = x;
        loop {
            let byte = (d & 0x7f) as u8;
            d >>= 7;
            if d == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

/// The u64s of [`encode_ascending`]; a torn or overlong list is a broken
/// exchange.
pub fn decode_ascending(bytes: &[u8]) -> Result<Vec<u64>> {
    let broken = || {
        Error::NotAvailable(format!(
            "a member sent a malformed list of {} bytes; report this as a bug",
            bytes.len()
        ))
    };
    match bytes.split_first() {
        None => Ok(Vec::new()),
        Some((0, rest)) => decode_u64s(rest),
        Some((1, rest)) => {
            let mut out = Vec::with_capacity(rest.len() / 2);
            let (mut last, mut d, mut shift) = (0u64, 0u64, 0u32);
            for &b in rest {
                if shift > 63 {
                    return Err(broken());
                }
                d |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    last = last.checked_add(d).ok_or_else(broken)?;
                    out.push(last);
                    (d, shift) = (0, 0);
                } else {
                    shift += 7;
                }
            }
            if shift != 0 {
                return Err(broken());
            }
            Ok(out)
        }
        Some(_) => Err(broken()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_index_in_order_on_aligned_bounds() {
        for &(len, align, size) in &[
            (0u64, 64u64, 3usize),
            (1, 64, 2),
            (1000, 64, 3),
            (4097, 1, 5),
            (640, 64, 10),
            (65, 64, 4),
        ] {
            let mut next = 0;
            for rank in 0..size {
                let s = slice_of(len, align, rank, size);
                assert_eq!(s.start, next, "len {len} align {align} size {size}");
                assert!(s.start % align == 0 || s.start == len);
                assert!(s.end >= s.start);
                next = s.end;
            }
            assert_eq!(next, len);
        }
        // Even where alignment allows: 1000 indices over 3 in units of 8.
        let sizes: Vec<u64> = (0..3)
            .map(|r| slice_of(1000, 8, r, 3))
            .map(|s| s.end - s.start)
            .collect();
        assert!(
            sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 8,
            "{sizes:?}"
        );
    }

    #[test]
    fn blocks_are_dealt_round_robin_and_cover_the_index_once() {
        for &(len, block, size) in &[
            (0u64, 64u64, 3usize),
            (1, 64, 2),
            (1000, 64, 3),
            (4097, 4096, 5),
            (640, 64, 10),
        ] {
            let own = Blocks::new(len, block, size);
            let mut seen = vec![0u8; len as usize];
            for rank in 0..size {
                let mut last = None;
                for r in own.of(rank) {
                    assert!(last.is_none_or(|l| l < r.start), "in order");
                    last = Some(r.start);
                    for i in r {
                        assert_eq!(own.owner(i), rank);
                        seen[i as usize] += 1;
                    }
                }
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "len {len} block {block} size {size}"
            );
            assert_eq!((0..size).map(|r| own.count(r)).sum::<u64>(), len);
        }
    }

    #[test]
    fn ascending_lists_shrink_and_round_trip() {
        let xs: Vec<u64> = (0..1000u64).map(|i| i * 37 + (i % 5)).collect();
        let e = encode_ascending(&xs);
        assert!(e.len() < xs.len() * 2, "{} bytes", e.len());
        assert_eq!(decode_ascending(&e).unwrap(), xs);
        for xs in [
            vec![],
            vec![0],
            vec![u64::MAX],
            vec![5, 5, 5],
            vec![9, 3, 7],
        ] {
            assert_eq!(decode_ascending(&encode_ascending(&xs)).unwrap(), xs);
        }
        assert!(decode_ascending(&[1, 0x80]).is_err(), "torn");
        assert!(decode_ascending(&[2]).is_err(), "unknown form");
        assert!(decode_ascending(&[
            1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1
        ])
        .is_err());
    }

    #[test]
    fn u64_lists_round_trip_and_a_torn_list_is_an_error() {
        let xs = [0, 1, u64::MAX, 1 << 40];
        assert_eq!(decode_u64s(&encode_u64s(&xs)).unwrap(), xs);
        assert!(decode_u64s(&[1, 2, 3]).is_err());
    }
}
