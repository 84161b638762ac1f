//! How an external solve cuts a partition into chunks, sized from the
//! memory budget.

use std::time::Duration;

/// Chunking of an external solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExternalPlan {
    /// Positions per chunk (a multiple of 64).
    pub chunk: u64,
    /// Positions per lookup range: the answer step holds one such range of a
    /// partition's values (a byte each) while it answers the requests for
    /// it. Requests are bucketed by lookup range, so the larger it is, the
    /// fewer buckets and the longer each write of a flushed buffer.
    pub lookup_chunk: u64,
    /// Records a write buffer holds before it flushes.
    pub run_capacity: usize,
    /// Bytes of earlier partitions' values a first scan may hold in memory
    /// (a byte a position), to answer its requests as they come back
    /// rather than through run files (zero: never).
    pub first_scan_values: u64,
    /// How often a pass makes its progress durable at a chunk or bucket
    /// boundary (zero: at every boundary), so that a long pass interrupted
    /// near its end does not start over.
    pub checkpoint_every: Duration,
}

impl ExternalPlan {
    /// A plan whose buffers stay within `mem_limit` bytes. Per chunk position
    /// the combine step holds value, summary, flags and accumulator (about 20
    /// bytes), twice over with double buffering: a chunk gets 1/128 of the
    /// budget (31%). The answer step holds six record buffers of 16-byte
    /// records at once (the run reader's bytes, the block it reads, the block
    /// being answered, the answers, the write buffer being filled and the one
    /// being flushed): each gets 1/16 (37.5% together), and one lookup range
    /// of values, 1/8 (12.5%). A first scan answered in memory holds none
    /// of those: the values it looks its requests up in get their half.
    pub fn for_mem_limit(mem_limit: u64) -> ExternalPlan {
        let chunk = ((mem_limit / 128).max(4096) / 64 * 64).min(MAX_LOOKUP_CHUNK);
        let lookup_chunk = (mem_limit / 8).max(chunk).min(MAX_LOOKUP_CHUNK);
        let run_capacity = ((mem_limit / 16) / 16).max(1024) as usize;
        ExternalPlan {
            chunk,
            lookup_chunk,
            run_capacity,
            first_scan_values: mem_limit / 2,
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
        }
    }
}

/// The most positions a lookup range (and a chunk) holds: a device sends a
/// request back as an index within its lookup range in 32 bits
/// (`Requests`), half the bytes of a key. Only a budget past 32 GB
/// meets it: such a budget's lookup ranges, 4 GB of values, stay well
/// within it.
pub const MAX_LOOKUP_CHUNK: u64 = 1 << 32;

/// How often a long pass records its progress, unless the plan says otherwise.
pub const DEFAULT_CHECKPOINT_EVERY: Duration = Duration::from_secs(60);
