//! The external-memory pipeline: partitions larger than the memory budget
//! are solved in chunks streamed from scratch files striped over several
//! disks, with bucketed, radix-sorted write buffers between the passes, and
//! checkpoints that let an interrupted build resume exactly.

mod answer;
mod blocking;
mod buffers;
mod candidates;
mod checkpoint;
mod combine;
mod disks;
mod distance_lists;
mod expand;
mod external;
mod plan;
mod resident;
mod runs;
mod stats;

pub use checkpoint::{PassCheckpoint, Step, WithinPass};
pub use disks::{ByteFile, FileParts, ScratchDisks};
pub use external::{
    scratch_intact, solve_partition_external, solve_partition_external_reached,
    solve_partition_streamed, StreamDevice,
};
pub use plan::{ExternalPlan, DEFAULT_CHECKPOINT_EVERY};
pub use stats::{peak_rss, resident_bytes, IoStats, PassRecord, PassTimeline, StorageIo};
