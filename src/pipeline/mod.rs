//! The external-memory pipeline: partitions larger than the memory budget
//! are solved in chunks streamed from scratch files striped over several
//! disks, with bucketed, radix-sorted write buffers between the passes, and
//! checkpoints that let an interrupted build resume exactly.

mod disks;
mod external;
mod runs;
mod stats;

pub use disks::{ByteFile, ScratchDisks};
pub use external::{
    solve_partition_external, ExternalPlan, PassCheckpoint, Step, WithinPass,
    DEFAULT_CHECKPOINT_EVERY,
};
pub use stats::{peak_rss, IoStats, StorageIo};
