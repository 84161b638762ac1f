//! Checkers chunks on the streamed path (`game::kernels::StreamTargets`):
//! kernel `checkers_stream_expand` in `kernels/checkers.cu`, launched by the
//! generic [`Stager`](crate::backend::cuda::stream::Stager), and its CPU
//! twin [`expand_twin`], written over the kernels' own tables
//! ([`CheckersTables`]) rather than the game's rules, so that a machine
//! without a GPU can hold it against [`crate::game::expand_chunk_on_cpu`]
//! (tests/checkers_stream.rs) and `tbforge bench gpu checkers` can hold the
//! kernel against both.
//!
//! A successor lies in the partition itself (a slice of its own descriptors:
//! a quiet move that keeps the material and the leading rows), in a
//! dependency (an earlier partition: captures, crownings, a man moving past
//! the leading row), or nowhere the build solves before it. The tables
//! already tell which, per slice; the kernel only needs each dependency's
//! first bucket beside them ([`StreamBuckets`]).

use super::twin::{for_each_successor, CheckersTables, KIND_EXTERNAL, KIND_INTERNAL};
use super::Checkers;
use crate::game::{
    expand_on_twin, ChunkDone, ChunkJob, Game, StreamTargets, NO_FAILURE, STREAM_ILLEGAL,
    STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING, STREAM_PENDING,
};
use crate::{Error, Result};

/// `CK_NO_BUCKET` of checkers.cu: a partition the build may not request.
pub const NO_BUCKET: u64 = u64::MAX;

/// Failure codes of `kernels/common.cuh` (`TB_FAIL_*`): the top byte of
/// the failure word, the rank below it.
const FAIL_LATER: u64 = 1;
const FAIL_NO_MOVES: u64 = 2;

/// What the kernel reads besides the tables: the first bucket of each
/// dependency of [`CheckersTables::deps`] and of the partition itself
/// ([`NO_BUCKET`]: not requested in this build).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamBuckets {
    /// By dependency index (descriptor word 5).
    pub deps: Vec<u64>,
    /// The partition's own.
    pub own: u64,
}

impl StreamBuckets {
    /// The buckets of `t`'s partitions as `targets` lays them out.
    pub fn of(t: &CheckersTables, targets: &StreamTargets) -> StreamBuckets {
        StreamBuckets {
            deps: t
                .deps
                .iter()
                .map(|&d| targets.base_of(d).unwrap_or(NO_BUCKET))
                .collect(),
            own: targets.base_of(t.partition).unwrap_or(NO_BUCKET),
        }
    }
}

/// About how many requests an index of `t` emits at most on average (the
/// stager's buffer sizing; more costs only a rerun of the chunk): a step
/// per direction of each of the mover's pieces, two for a man and four for
/// a king, in its larger slice.
pub fn requests_per_index(t: &CheckersTables) -> u32 {
    t.own
        .iter()
        .filter(|&&di| di != super::twin::NONE)
        .map(|&di| {
            let (men, kings) = t.mover_pieces(di);
            2 * men + 4 * kings
        })
        .max()
        .unwrap_or(1)
        .clamp(1, 32)
}

/// The contract error of failure word `fail` (code << 56 | rank) of the
/// partition of `t`, worded as the generic stager words the kernel's.
fn contract_error(game: &Checkers, t: &CheckersTables, fail: u64) -> Error {
    let rank = fail & 0x00ff_ffff_ffff_ffff;
    let name = game.partition_name(t.partition);
    Error::GameContract {
        game: "checkers".into(),
        message: if fail >> 56 == FAIL_LATER {
            format!("index {rank} of partition {name} has a move to a partition that is not solved before it (twin expansion)")
        } else {
            format!("index {rank} of partition {name} has no moves but its status is not Lost or Drawn (twin expansion)")
        },
    }
}

/// The CPU twin of `checkers_stream_expand`: `job` (a chunk of the
/// partition of `t`) expanded as [`StreamTargets`] specifies, on all
/// threads. Its results must equal [`crate::game::expand_chunk_on_cpu`]'s
/// on the game checkers, and the kernel's.
pub fn expand_twin(
    game: &Checkers,
    t: &CheckersTables,
    buckets: &StreamBuckets,
    targets: &StreamTargets,
    job: ChunkJob,
) -> Result<ChunkDone> {
    let first_scan = job.first_scan;
    let piece = |vals: &mut [u8], bits: &mut [u8], at: u64| {
        let mut out = Vec::new();
        let mut fail = NO_FAILURE;
        for (j, v) in vals.iter_mut().enumerate() {
            let r = at + j as u64;
            let shift = 2 * (j % 4);
            if first_scan {
                bits[j / 4] &= !(3 << shift);
                if !targets.is_reached(r) || r >= t.size {
                    *v = STREAM_ILLEGAL;
                    continue;
                }
            } else if (bits[j / 4] >> shift) & 3 != STREAM_ONGOING | STREAM_INTERNAL
                || *v != STREAM_PENDING
                || r >= t.size
            {
                continue;
            }
            let (mut internal, mut later) = (false, false);
            let moves = for_each_successor(&t.unrank(r), |s| {
                let target = t.locate(&s);
                let kind = t.kind(target.desc);
                let inside = kind == KIND_INTERNAL;
                let base = match kind {
                    KIND_INTERNAL => buckets.own,
                    KIND_EXTERNAL => buckets.deps[t.dep_of(target.desc)],
                    _ => NO_BUCKET,
                };
                if base == NO_BUCKET {
                    later = true;
                    return true;
                }
                if first_scan && inside {
                    internal = true;
                } else if first_scan != inside {
                    let (_, index) = t.partition_rank(target);
                    out.push([targets.key(base, index), r]);
                }
                false
            });
            if later {
                fail = fail.min(FAIL_LATER << 56 | r);
                continue;
            }
            if moves == 0 {
                if first_scan {
                    *v = STREAM_LOST;
                } else {
                    fail = fail.min(FAIL_NO_MOVES << 56 | r);
                }
                continue;
            }
            if first_scan {
                *v = STREAM_PENDING;
                let f = if internal {
                    STREAM_ONGOING | STREAM_INTERNAL
                } else {
                    STREAM_ONGOING
                };
                bits[j / 4] |= f << shift;
            }
        }
        (out, fail)
    };
    expand_on_twin(targets, job, piece, |fail| contract_error(game, t, fail))
}

#[cfg(feature = "cuda")]
pub use device::CheckersStreamLaunch;

#[cfg(feature = "cuda")]
mod device {
    use std::sync::Arc;

    use cudarc::driver::{CudaModule, CudaSlice, CudaStream, PushKernelArg};

    use super::super::cuda::{CheckersCuda, DeviceTables};
    use super::super::twin::CheckersTables;
    use super::super::Checkers;
    use super::{requests_per_index, StreamBuckets};
    use crate::backend::cuda::stream::{ChunkLaunch, StreamArgs};
    use crate::backend::cuda::{cuda_err, BLOCK};
    use crate::game::{Game, StreamTargets};
    use crate::value::PartitionId;
    use crate::Result;

    /// `checkers_stream_expand` of one partition: its tables and buckets
    /// on the device.
    pub struct CheckersStreamLaunch {
        cuda: Arc<CheckersCuda>,
        tables: DeviceTables,
        dep_bucket: CudaSlice<u64>,
        own_bucket: u64,
        hint: u32,
        game: Checkers,
    }

    impl CheckersStreamLaunch {
        /// The launch of partition `targets.partition` of `game` (its tables
        /// built and uploaded).
        pub fn new(
            cuda: Arc<CheckersCuda>,
            game: &Checkers,
            targets: &StreamTargets,
        ) -> Result<CheckersStreamLaunch> {
            let t = CheckersTables::new(game, targets.partition)?;
            let buckets = StreamBuckets::of(&t, targets);
            let tables = cuda.upload_tables(&t)?;
            let s = cuda.device().stream();
            // An empty slice cannot be copied: a partition with no
            // dependency gets one bucket that no descriptor names.
            let deps = if buckets.deps.is_empty() {
                vec![super::NO_BUCKET]
            } else {
                buckets.deps.clone()
            };
            let dep_bucket = s
                .clone_htod(&deps)
                .map_err(cuda_err("copying the buckets to the device"))?;
            // The stager's streams do not wait for this one: the tables must
            // be in place before its first launch.
            s.synchronize()
                .map_err(cuda_err("copying the checkers tables to the device"))?;
            Ok(CheckersStreamLaunch {
                hint: requests_per_index(&t),
                cuda,
                tables,
                dep_bucket,
                own_bucket: buckets.own,
                game: game.clone(),
            })
        }
    }

    impl ChunkLaunch for CheckersStreamLaunch {
        fn module(&self) -> &Arc<CudaModule> {
            self.cuda.module()
        }

        fn launch(&self, stream: &Arc<CudaStream>, args: &mut StreamArgs<'_>) -> Result<()> {
            let f = self.cuda.stream_function();
            let cfg = self.cuda.device().grid(f, BLOCK, u64::from(args.n), 0)?;
            let mut l = stream.launch_builder(f);
            self.tables.push(&mut l);
            l.arg(&self.dep_bucket).arg(&self.own_bucket);
            args.push(&mut l);
            // SAFETY: the arguments match checkers_stream_expand in
            // checkers.cu: CK_TABLE_ARGS (DeviceTables::push, tables built
            // by CheckersTables::new for this partition, so every
            // descriptor's dependency word is an index into `dep_bucket`,
            // which holds one bucket per dependency), the buckets, then
            // common.cuh's tail as StreamArgs::push lays it out. The kernel
            // unranks only indices below the partition's size, touches
            // values[j], flag word j / 16 and reached word j / 64 for
            // j < args.n only (buffers the stager sized for its chunk) and
            // stores a request only below `cap`, the pairs `out` holds.
            unsafe { l.launch(cfg) }.map_err(cuda_err("launching checkers_stream_expand"))?;
            Ok(())
        }

        fn requests_per_index(&self) -> u32 {
            self.hint
        }

        fn game(&self) -> String {
            "checkers".into()
        }

        fn partition_name(&self, p: PartitionId) -> String {
            self.game.partition_name(p)
        }
    }
}
