//! The streamed path's interface between the pipeline and a device: what a
//! chunk of a partition is, what expanding it yields, and the expander that
//! keeps several chunks in flight. Games implement it for their kernels
//! (`PartitionKernels::expander`); the CPU's expander, through a game's
//! rules, is in the game layer; [`cuda`](super::cuda)'s stager is the
//! device side every game shares.

use crate::value::PartitionId;
use crate::Result;

/// The streamed path's view of a partition being expanded: where each
/// request for a successor's value goes.
///
/// A request is a pair of u64: the key `(bucket << low_bits) | (rank %
/// lookup_chunk)`, where `bucket = bucket_base(successor's partition) + rank
/// / lookup_chunk`, and the payload, the requester's rank. Which requests a
/// chunk emits is fixed by [`ChunkJob::first_scan`]:
///
/// - **first scan**: every index's flags are cleared (two bits per index, four
///   to a byte, lowest first); an index not reached (where
///   [`StreamTargets::reached`] is given) or that does not unrank becomes
///   [`STREAM_ILLEGAL`]; a lost or goal position becomes [`STREAM_LOST`], a
///   drawn one [`STREAM_DRAWN`]; an ongoing one becomes [`STREAM_PENDING`]
///   with flag [`STREAM_ONGOING`], gains flag [`STREAM_INTERNAL`] when some
///   move stays in the partition, and requests every successor in an earlier
///   partition;
/// - **a pass**: an index whose flags are exactly `ONGOING | INTERNAL` and
///   whose value is `PENDING` requests every successor in its own partition;
///   values and flags are left as they are. A pass's job may come without
///   values (see [`ChunkJob::values`]): its flags are then cleared wherever
///   the value is not `PENDING`, and they alone say what expands.
///
/// A successor in a partition without a bucket base (solved later, or not
/// the game's) breaks the game's contract: the chunk fails with
/// [`Error::GameContract`](crate::Error::GameContract).
#[derive(Clone, Debug)]
pub struct StreamTargets {
    /// The partition expanded.
    pub partition: PartitionId,
    /// First bucket of the partition itself and of every earlier one.
    pub bucket_base: Vec<(PartitionId, u64)>,
    /// Indices per bucket.
    pub lookup_chunk: u64,
    /// Bits of a key below the bucket number.
    pub low_bits: u32,
    /// Where only reached indices are solved: the partition's reached bits
    /// (64 to a word, lowest bit first).
    pub reached: Option<std::sync::Arc<[u64]>>,
    /// The most indices a chunk holds (a multiple of 64).
    pub max_chunk: u64,
    /// The most positions that expand (see [`ChunkExpander::max_expanding`])
    /// a chunk holds: what bounds the requests held at once.
    pub max_expanding: u64,
    /// Buckets in all: every key's bucket is below this.
    pub buckets: u64,
    /// Bytes of page-locked host memory a device expander's buffers may
    /// take: the memory plan's share for them (`u64::MAX`: no bound). The
    /// CPU expander takes none.
    pub host_bytes: u64,
}

impl StreamTargets {
    /// The first bucket of partition `p`'s requests, if it may be requested.
    pub fn base_of(&self, p: PartitionId) -> Option<u64> {
        self.bucket_base
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, b)| *b)
    }

    /// Targets of `partition` laid out as a build lays them out: each
    /// partition of `order` (with its indices) up to and including it gets
    /// buckets of `lookup_chunk` indices in turn. No reached bits; chunks,
    /// and positions that expand in one, of at most `max_chunk` indices; no
    /// bound on page-locked memory.
    pub fn laid_out(
        order: impl IntoIterator<Item = (PartitionId, u64)>,
        partition: PartitionId,
        lookup_chunk: u64,
        max_chunk: u64,
    ) -> StreamTargets {
        let mut bucket_base = Vec::new();
        let mut buckets = 0;
        for (q, size) in order {
            bucket_base.push((q, buckets));
            buckets += size.div_ceil(lookup_chunk);
            if q == partition {
                break;
            }
        }
        StreamTargets {
            partition,
            bucket_base,
            lookup_chunk,
            low_bits: 64 - (lookup_chunk - 1).leading_zeros(),
            reached: None,
            max_chunk,
            max_expanding: max_chunk,
            buckets,
            host_bytes: u64::MAX,
        }
    }

    /// Whether index `r` is to be solved: reached, where only reached
    /// indices are.
    pub fn is_reached(&self, r: u64) -> bool {
        self.reached
            .as_ref()
            .is_none_or(|w| w[(r / 64) as usize] & (1 << (r % 64)) != 0)
    }

    /// [`Self::base_of`] for every partition at once, found by a binary
    /// search: the CPU's expander looks a base up for each successor in
    /// another partition, and a linear search of a build's hundreds of
    /// partitions took a twentieth of such a build's time.
    pub fn bases(&self) -> PartitionBases {
        let mut by_id: Vec<(PartitionId, u64)> = self.bucket_base.clone();
        by_id.sort_unstable_by_key(|&(p, _)| p);
        PartitionBases(by_id)
    }

    /// The request key of index `rank` of the partition whose first bucket is `base`.
    pub fn key(&self, base: u64, rank: u64) -> u64 {
        ((base + rank / self.lookup_chunk) << self.low_bits) | (rank % self.lookup_chunk)
    }
}

/// The first bucket of each partition that may be requested, by partition
/// (see [`StreamTargets::bases`]).
#[derive(Clone, Debug)]
pub struct PartitionBases(Vec<(PartitionId, u64)>);

impl PartitionBases {
    /// The first bucket of partition `p`'s requests, if it may be requested.
    pub fn get(&self, p: PartitionId) -> Option<u64> {
        self.0
            .binary_search_by_key(&p, |&(q, _)| q)
            .ok()
            .map(|i| self.0[i].1)
    }
}

/// Value bytes and flags of the streamed path's first scan, as
/// `kernels/common.cuh` spells them too (`TB_ILLEGAL` ...).
pub const STREAM_ILLEGAL: u8 = 0;
/// A drawn terminal position; also the undecided mark.
pub const STREAM_DRAWN: u8 = 1;
/// Undecided (shares its byte with a draw: see `value::rules`).
pub const STREAM_PENDING: u8 = 1;
/// Lost (two-player) or at the goal (puzzle): distance 0.
pub const STREAM_LOST: u8 = 2;
/// Flag: an ongoing position.
pub const STREAM_ONGOING: u8 = 1;
/// Flag: a position with a move inside its own partition.
pub const STREAM_INTERNAL: u8 = 2;

/// One chunk of a partition handed to a [`ChunkExpander`].
#[derive(Debug, Default)]
pub struct ChunkJob {
    /// The chunk's number, handed back in [`ChunkDone::chunk`].
    pub chunk: u64,
    /// Its first index (a multiple of 64).
    pub lo: u64,
    /// The first scan, or a pass (see [`StreamTargets`]).
    pub first_scan: bool,
    /// One byte per index; or, in a pass, none at all: then the flags alone
    /// say what expands (every index with flags `ONGOING | INTERNAL` is
    /// `PENDING`), and a device is spared a byte an index of copies, most of
    /// what a pass sent it (its candidates are a few in a word).
    pub values: Vec<u8>,
    /// Two bits per index, four to a byte.
    pub flags: Vec<u8>,
}

impl ChunkJob {
    /// Whether the job is a pass's sent without values.
    pub fn flags_only(&self) -> bool {
        !self.first_scan && self.values.is_empty()
    }

    /// Indices in the job: a value byte each, or, in a job sent without
    /// values, four a flag byte (those past the chunk's end have no flags
    /// set, and do nothing).
    pub fn indices(&self) -> usize {
        if self.flags_only() {
            4 * self.flags.len()
        } else {
            self.values.len()
        }
    }

    /// Gives a job sent without values the values its flags imply, for an
    /// expander that reads them: `PENDING` at every index (the others'
    /// flags are clear, so they do not expand whatever their value).
    pub fn fill_values(&mut self) {
        if self.flags_only() {
            self.values = vec![STREAM_PENDING; self.indices()];
        }
    }

    /// Makes a pass's job the same job sent without values (see
    /// [`Self::clear_flags_unless_pending`]).
    pub fn drop_values(&mut self) {
        if self.first_scan {
            return;
        }
        self.flags.truncate(self.values.len().div_ceil(4));
        Self::clear_flags_unless_pending(&self.values, &mut self.flags);
        self.values = Vec::new();
    }

    /// Clears the flags of every index whose value is not `PENDING`, and of
    /// those past the last value in the last flag byte (a job sent without
    /// values has four indices a flag byte): what lets a pass's flags alone
    /// say what expands.
    pub fn clear_flags_unless_pending(values: &[u8], flags: &mut [u8]) {
        for (k, byte) in flags.iter_mut().enumerate() {
            let mut keep = 0u8;
            for i in 0..4 {
                if values.get(4 * k + i) == Some(&STREAM_PENDING) {
                    keep |= 3 << (2 * i);
                }
            }
            *byte &= keep;
        }
    }

    /// Indices whose flags are exactly `ONGOING | INTERNAL`: those a pass
    /// expands once its flags are cleared as above.
    pub fn count_expanding(flags: &[u8]) -> usize {
        flags
            .iter()
            .map(|&b| (b & (b >> 1) & 0x55).count_ones() as usize)
            .sum()
    }

    /// The indices below `len` whose flags (`flags`, from index 0) are exactly
    /// `ONGOING | INTERNAL`, what a pass expands, in increasing order: 32 flags
    /// tested at a time. A late pass expands few positions of a chunk, and
    /// testing each index's flags one by one was a tenth of a CPU build's
    /// samples on the largest build measured.
    pub fn expanding(flags: &[u8], len: usize) -> impl Iterator<Item = usize> + '_ {
        flags[..len.div_ceil(4)]
            .chunks(8)
            .enumerate()
            .flat_map(|(w, bytes)| {
                let mut word = [0u8; 8];
                word[..bytes.len()].copy_from_slice(bytes);
                let x = u64::from_le_bytes(word);
                // The low bit of each index's pair, where both of its bits are set.
                let mut both = x & (x >> 1) & 0x5555_5555_5555_5555;
                std::iter::from_fn(move || {
                    (both != 0).then(|| {
                        let at = both.trailing_zeros() as usize;
                        both &= both - 1;
                        32 * w + at / 2
                    })
                })
            })
            .take_while(move |&j| j < len)
    }
}

/// How a pass that decides losses looks successors up where they are made
/// ([`ChunkExpander::submit_looking_up`]): a pending position is blocked
/// (not a loss at the pass's distance) once one successor within the
/// partition can block it, so it needs no other.
pub struct Lookup<'a> {
    /// Whether the position of this index (of the partition) can block a
    /// predecessor's loss.
    pub blocks: &'a (dyn Fn(u64) -> bool + Sync),
    /// Told the index of each position that a successor blocks.
    pub blocked: &'a (dyn Fn(u64) + Sync),
}

/// A job's requests as an expander hands them over, grouped by bucket in
/// ascending order, 8 bytes each: a pair is (the successor's index within
/// its bucket's lookup range, the requester's rank less [`Requests::lo`]),
/// and its bucket is where it lies. A device sends these back rather than
/// the 16-byte (key, requester) pairs [`StreamTargets`] defines: a large
/// partition's first scan sent 5.1 GB of those back for the host to read.
#[derive(Clone, Copy, Debug)]
pub struct Requests<'a> {
    /// The bucket of the first group.
    pub first_bucket: u64,
    /// Where each group ends in `pairs`: group `b` (bucket `first_bucket +
    /// b`) is `pairs[ends[b - 1]..ends[b]]`, from 0 for the first.
    pub ends: &'a [u32],
    /// The rank the requesters are counted from: the job's first index.
    pub lo: u64,
    /// Bits of a key below the bucket number.
    pub low_bits: u32,
    /// (index within the lookup range, requester − `lo`) pairs.
    pub pairs: &'a [[u32; 2]],
}

fn not_narrow() -> crate::Error {
    crate::Error::NotAvailable(
        "an expander's requests do not narrow to 8 bytes (a requester outside its job, an index past 2^32 in its lookup range, or not grouped by bucket); report this as a bug"
            .into(),
    )
}

/// Requests of one bucket, for one task.
#[derive(Clone, Copy, Debug)]
pub struct RequestPiece<'a> {
    /// The bucket they ask about.
    pub bucket: u64,
    /// The rank the requesters are counted from.
    pub lo: u64,
    /// (index within the bucket's lookup range, requester − `lo`) pairs.
    pub pairs: &'a [[u32; 2]],
}

impl<'a> Requests<'a> {
    /// How many requests.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The rank of the first request's requester, if any.
    pub fn first_requester(&self) -> Option<u64> {
        self.pairs.first().map(|&[_, r]| self.lo + u64::from(r))
    }

    /// The requests cut into pieces of at most `most` pairs (at least one),
    /// each within one bucket.
    pub fn pieces(&self, most: usize) -> Vec<RequestPiece<'a>> {
        let most = most.max(1);
        let mut pieces = Vec::new();
        let mut start = 0usize;
        for (b, &end) in self.ends.iter().enumerate() {
            let end = (end as usize).min(self.pairs.len());
            let bucket = self.first_bucket + b as u64;
            for pairs in self.pairs[start.min(end)..end].chunks(most) {
                pieces.push(RequestPiece {
                    bucket,
                    lo: self.lo,
                    pairs,
                });
            }
            start = end;
        }
        pieces
    }

    /// Appends the requests as (key, requester) pairs.
    pub fn keyed_into(&self, out: &mut Vec<[u64; 2]>) {
        out.reserve(self.pairs.len());
        for RequestPiece { bucket, lo, pairs } in self.pieces(usize::MAX) {
            let base = bucket << self.low_bits;
            out.extend(
                pairs
                    .iter()
                    .map(|&[i, r]| [base | u64::from(i), lo + u64::from(r)]),
            );
        }
    }
}

/// The pairs of `pieces` grouped by bucket in ascending order, each made
/// into a `T` by `make` (`None` refuses it, and the grouping), as the
/// device's `tb_bucket_*` kernels group them: a count per bucket, a prefix
/// sum, a scatter, in the pieces' order within a bucket. Returns the first
/// bucket, where each bucket from it ends, and the items.
pub fn group_pairs<T: Copy + Default, P: AsRef<[[u64; 2]]>>(
    pieces: &[P],
    low_bits: u32,
    make: impl Fn([u64; 2]) -> Option<T>,
) -> Option<(u64, Vec<usize>, Vec<T>)> {
    let all = || pieces.iter().flat_map(|p| p.as_ref().iter().copied());
    let bucket = |pair: [u64; 2]| pair[0] >> low_bits;
    let Some((first, last)) = all().map(bucket).fold(None, |range, b| match range {
        None => Some((b, b)),
        Some((lo, hi)) => Some((b.min(lo), b.max(hi))),
    }) else {
        return Some((0, Vec::new(), Vec::new()));
    };
    let mut ends = vec![0usize; (last - first + 1) as usize];
    for pair in all() {
        ends[(bucket(pair) - first) as usize] += 1;
    }
    // Each bucket's start, then (after the scatter) its end.
    let mut run = 0;
    for e in &mut ends {
        let count = *e;
        *e = run;
        run += count;
    }
    let mut items = vec![T::default(); run];
    for pair in all() {
        let at = &mut ends[(bucket(pair) - first) as usize];
        items[*at] = make(pair)?;
        *at += 1;
    }
    Some((first, ends, items))
}

/// The CPU twin of `tb_block_lookup` (kernels/common.cuh): the blocked
/// bits of a job of `n` indices from `lo` whose (key, requester) pairs are
/// `pairs`, every successor in the partition whose first bucket is
/// `own_base`, each blocking where its bit in `can_block` is set. An error
/// names the first pair whose successor lies outside the partition.
pub fn block_lookup_twin(
    pairs: &[[u64; 2]],
    targets: &StreamTargets,
    lo: u64,
    n: usize,
    can_block: &[u64],
) -> Result<Vec<u64>> {
    let own_base = targets.base_of(targets.partition).unwrap_or(0);
    let low_mask = (1u64 << targets.low_bits) - 1;
    let mut blocked = vec![0u64; n.div_ceil(64)];
    for &[key, requester] in pairs {
        let bucket = key >> targets.low_bits;
        let s = bucket
            .checked_sub(own_base)
            .map(|b| b * targets.lookup_chunk + (key & low_mask))
            .filter(|&s| s / 64 < can_block.len() as u64);
        let r = requester.wrapping_sub(lo);
        let (Some(s), true) = (s, r < n as u64) else {
            return Err(crate::Error::NotAvailable(format!(
                "request (key {key:#x}, requester {requester}) lies outside the partition or the job at {lo}; report this as a bug"
            )));
        };
        if can_block[(s / 64) as usize] >> (s % 64) & 1 == 1 {
            blocked[(r / 64) as usize] |= 1 << (r % 64);
        }
    }
    Ok(blocked)
}

/// Requests held in vectors of their own: a CPU expander's, made from its
/// keyed pairs.
#[derive(Debug, Default)]
pub struct OwnedRequests {
    first_bucket: u64,
    ends: Vec<u32>,
    lo: u64,
    low_bits: u32,
    pairs: Vec<[u32; 2]>,
}

impl OwnedRequests {
    /// `keyed`, grouped by bucket in ascending order, narrowed against
    /// `lo`; an error where some pair does not narrow (a requester outside
    /// `lo .. lo + 2^32`, an index within its range past 2^32) or the pairs
    /// are not grouped.
    pub fn from_keyed(keyed: &[[u64; 2]], lo: u64, low_bits: u32) -> Result<Self> {
        let grouped = keyed
            .windows(2)
            .all(|w| w[0][0] >> low_bits <= w[1][0] >> low_bits);
        if !grouped {
            return Err(not_narrow());
        }
        Self::group(std::slice::from_ref(&keyed), lo, low_bits)
    }

    /// The requests of `pieces` (keyed pairs in any order) grouped by
    /// bucket ([`group_pairs`]) and narrowed against `lo`. An error where
    /// some pair does not narrow.
    pub fn group<P: AsRef<[[u64; 2]]>>(pieces: &[P], lo: u64, low_bits: u32) -> Result<Self> {
        let low_mask = (1u64 << low_bits) - 1;
        let narrow = |[key, requester]: [u64; 2]| {
            Some([
                u32::try_from(key & low_mask).ok()?,
                u32::try_from(requester.checked_sub(lo)?).ok()?,
            ])
        };
        let (first_bucket, ends, pairs) =
            group_pairs(pieces, low_bits, narrow).ok_or_else(not_narrow)?;
        let ends = ends
            .into_iter()
            .map(u32::try_from)
            .collect::<std::result::Result<Vec<u32>, _>>()
            .map_err(|_| not_narrow())?;
        Ok(OwnedRequests {
            first_bucket,
            ends,
            lo,
            low_bits,
            pairs,
        })
    }

    /// The requests, to hand over.
    pub fn view(&self) -> Requests<'_> {
        Requests {
            first_bucket: self.first_bucket,
            ends: &self.ends,
            lo: self.lo,
            low_bits: self.low_bits,
            pairs: &self.pairs,
        }
    }
}

/// A chunk expanded: its values and flags (changed by a first scan only;
/// a job sent without values comes back without them) and its requests,
/// grouped by bucket in ascending order.
#[derive(Debug, Default)]
pub struct ChunkDone {
    /// [`ChunkJob::chunk`].
    pub chunk: u64,
    /// [`ChunkJob::lo`].
    pub lo: u64,
    /// One byte per index.
    pub values: Vec<u8>,
    /// Two bits per index.
    pub flags: Vec<u8>,
    /// (key, payload) pairs, buckets ascending; any order inside a bucket.
    pub requests: Vec<[u64; 2]>,
    /// Where the pass was answered on the device
    /// ([`ChunkExpander::answer_on_device`]): a bit per index from `lo`
    /// (64 to a word, lowest first), set where a successor blocks it; and
    /// no requests. Empty otherwise.
    pub blocked: Vec<u64>,
    /// Successors looked up on the device for it (`blocked` given).
    pub looked_up: u64,
    /// What the device did for it.
    pub timing: ChunkTiming,
}

/// What one chunk cost the device (all zero for a CPU expander, except the
/// kernel time, which is the expansion's).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChunkTiming {
    /// Bytes copied to the device.
    pub h2d_bytes: u64,
    /// Bytes copied back.
    pub d2h_bytes: u64,
    /// Seconds of copies to the device (device events).
    pub h2d_seconds: f64,
    /// Seconds of kernels: the expansion and the bucketing.
    pub kernel_seconds: f64,
    /// Seconds of copies back.
    pub d2h_seconds: f64,
    /// Seconds the host waited for the device to hand the chunk back.
    pub host_wait_seconds: f64,
    /// Seconds the host spent staging the chunk outside those waits:
    /// copies into and out of page-locked buffers, enqueueing copies and
    /// launches. A tiny job costs about this much however small it is.
    #[serde(default)]
    pub host_stage_seconds: f64,
}

impl ChunkTiming {
    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &ChunkTiming) {
        self.h2d_bytes += other.h2d_bytes;
        self.d2h_bytes += other.d2h_bytes;
        self.h2d_seconds += other.h2d_seconds;
        self.kernel_seconds += other.kernel_seconds;
        self.d2h_seconds += other.d2h_seconds;
        self.host_wait_seconds += other.host_wait_seconds;
        self.host_stage_seconds += other.host_stage_seconds;
    }
}

/// Expands a partition's chunks for the streamed path, several in flight
/// at once (on a GPU: one copying in, one in kernels, one copying out).
pub trait ChunkExpander: Send {
    /// How many chunks may be submitted before one must be collected.
    fn depth(&self) -> usize;

    /// The most indices one chunk may hold (a multiple of 64): what the
    /// device's memory allows, at most [`StreamTargets::max_chunk`].
    fn max_chunk(&self) -> u64;

    /// The most expanding positions one chunk should hold (every index in
    /// a first scan; in a pass, a pending one with flags exactly `ONGOING |
    /// INTERNAL`), so that its requests fit the expander's buffers: the
    /// pipeline cuts jobs by this as well as by [`ChunkExpander::max_chunk`].
    /// At most [`StreamTargets::max_expanding`].
    fn max_expanding(&self) -> u64;

    /// "cpu", or the device's name, for logs.
    fn name(&self) -> String;

    /// Hands a chunk over (at most [`ChunkExpander::depth`] uncollected).
    fn submit(&mut self, job: ChunkJob) -> Result<()>;

    /// The oldest submitted chunk, expanded (waits for it), its requests
    /// handed to `requests` from where the expander holds them (a device's
    /// page-locked buffer), in one batch or more, and not kept in the
    /// [`ChunkDone`]. A streamed build copies them straight into its write
    /// buffer: through a vector of their own they were copied twice on the
    /// step's thread, a fifth of a streamed build's expand steps.
    fn collect_into(
        &mut self,
        requests: &mut dyn FnMut(Requests<'_>) -> Result<()>,
    ) -> Result<ChunkDone>;

    /// Whether it can look successors up where it makes them
    /// ([`ChunkExpander::submit_looking_up`]): the CPU's can, a device's
    /// makes every request.
    fn looks_up(&self) -> bool {
        false
    }

    /// Hands over a pass's chunk (as [`ChunkExpander::submit`]) whose
    /// successors within the partition are not requested but looked up as
    /// they are made, through `lookup`: a position stops at its first
    /// successor that blocks it. Its [`ChunkDone`] comes back without
    /// requests. Returns how many successors were looked up. Only where
    /// [`ChunkExpander::looks_up`] says it can.
    fn submit_looking_up(&mut self, job: ChunkJob, lookup: &Lookup<'_>) -> Result<u64> {
        let _ = (job, lookup);
        Err(crate::Error::NotAvailable(format!(
            "the {} expander cannot look successors up; report this as a bug",
            self.name()
        )))
    }

    /// Answers the lookups of the pass about to be expanded on the device,
    /// from `can_block`, a bit a position of the partition (64 to a word,
    /// lowest first): whether that position can block a predecessor's loss.
    /// Until it is called again with `None`, every job of a pass comes back
    /// with its [`ChunkDone::blocked`] bits and without requests: no
    /// request crosses back to the host. Returns whether it does so:
    /// `false` where the bits do not fit its memory beside its buffers, or
    /// it cannot (the CPU's looks successors up where it makes them
    /// instead, [`ChunkExpander::submit_looking_up`]). Called between
    /// steps, with nothing in flight.
    fn answer_on_device(&mut self, can_block: Option<&[u64]>) -> Result<bool> {
        let _ = can_block;
        Ok(false)
    }

    /// The oldest submitted chunk, expanded, with its requests.
    fn collect(&mut self) -> Result<ChunkDone> {
        let mut all = Vec::new();
        let mut done = self.collect_into(&mut |r| {
            r.keyed_into(&mut all);
            Ok(())
        })?;
        done.requests = all;
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keyed pairs grouped by bucket (with empty buckets between) narrow
    /// and come back as they were; the pieces cover them in order, each
    /// within one bucket and no longer than asked; pairs that do not narrow
    /// or are not grouped are refused.
    #[test]
    fn narrow_requests_are_the_keyed_pairs_again() {
        let low_bits = 44;
        let mut rng = crate::hash::SplitMix64::new(5);
        let lo = 1 << 35;
        let mut keyed = Vec::new();
        for bucket in [3u64, 4, 7, 8, 20] {
            for _ in 0..(rng.next_u64() % 300 + 1) {
                let index = rng.next_u64() % (1 << 32);
                keyed.push([bucket << low_bits | index, lo + rng.next_u64() % (1 << 32)]);
            }
        }
        let narrow = OwnedRequests::from_keyed(&keyed, lo, low_bits).expect("narrows");
        let requests = narrow.view();
        assert_eq!(requests.len(), keyed.len());
        assert_eq!(requests.first_requester(), Some(keyed[0][1]));
        let mut back = Vec::new();
        requests.keyed_into(&mut back);
        assert_eq!(back, keyed);
        for most in [1, 7, 100, usize::MAX] {
            let mut again = Vec::new();
            for RequestPiece {
                bucket,
                lo: from,
                pairs,
            } in requests.pieces(most)
            {
                assert!(!pairs.is_empty() && pairs.len() <= most);
                again.extend(
                    pairs
                        .iter()
                        .map(|&[i, r]| [bucket << low_bits | u64::from(i), from + u64::from(r)]),
                );
            }
            assert_eq!(again, keyed, "pieces of {most}");
        }
        // Grouped from pieces in any order, as the device's kernels group.
        let mut scrambled = keyed.clone();
        scrambled.reverse();
        let pieces: Vec<Vec<[u64; 2]>> = scrambled.chunks(97).map(<[_]>::to_vec).collect();
        let grouped = OwnedRequests::group(&pieces, lo, low_bits).expect("narrows");
        let mut regrouped = Vec::new();
        grouped.view().keyed_into(&mut regrouped);
        assert_eq!(grouped.view().ends, requests.ends);
        assert!(regrouped
            .windows(2)
            .all(|w| w[0][0] >> low_bits <= w[1][0] >> low_bits));
        regrouped.sort_unstable();
        let mut sorted = keyed.clone();
        sorted.sort_unstable();
        assert_eq!(regrouped, sorted);
        let empty = OwnedRequests::from_keyed(&[], lo, low_bits).expect("narrows");
        assert!(empty.view().is_empty() && empty.view().pieces(10).is_empty());
        let refused = [
            vec![[3 << low_bits, lo - 1]],
            vec![[3 << low_bits | 1 << 32, lo]],
            vec![[3 << low_bits, lo + (1 << 32)]],
            vec![[4 << low_bits, lo], [3 << low_bits, lo]],
            vec![
                [3 << low_bits, lo],
                [4 << low_bits, lo],
                [3 << low_bits, lo],
            ],
        ];
        for keyed in refused {
            assert!(
                OwnedRequests::from_keyed(&keyed, lo, low_bits).is_err(),
                "{keyed:?}"
            );
        }
    }

    /// The indices a pass expands, 32 flags at a time, are those whose two
    /// flag bits are both set, one index at a time: every flag pattern,
    /// lengths that end inside a byte and a word, and none past the length.
    #[test]
    fn expanding_lists_each_index_with_both_flags() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in [0usize, 1, 3, 4, 31, 32, 33, 64, 100, 4095, 4096] {
            for density in [0u64, 1, 2, 3, 4] {
                let flags: Vec<u8> = (0..len.div_ceil(4) + 9)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        // density 0: no index has both bits; 4: every one.
                        let mut b = (seed & 0xff) as u8;
                        for k in 0..4 {
                            if (seed >> (8 + 2 * k)) & 3 < density {
                                b |= 3 << (2 * k);
                            } else if b >> (2 * k) & 3 == 3 {
                                b &= !(1 << (2 * k));
                            }
                        }
                        b
                    })
                    .collect();
                let want: Vec<usize> = (0..len)
                    .filter(|&j| {
                        (flags[j / 4] >> (2 * (j % 4))) & 3 == STREAM_ONGOING | STREAM_INTERNAL
                    })
                    .collect();
                let got: Vec<usize> = ChunkJob::expanding(&flags, len).collect();
                assert_eq!(got, want, "{len} indices, density {density}");
            }
        }
    }
}
