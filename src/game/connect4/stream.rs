//! Connect Four plies on the streamed path (`game::kernels::StreamTargets`):
//! kernel `connect4_stream_expand` in `kernels/connect4.cu`, launched by the
//! generic [`Stager`](crate::backend::cuda::stream::Stager), and its CPU
//! twin [`expand_twin`], written over the kernel's own tables
//! ([`Connect4Tables`]) rather than the game's rules, so that the check can
//! hold it against [`crate::game::expand_chunk_on_cpu`] on a machine
//! without a GPU.
//!
//! Every move adds a piece, so every successor of ply `n` lies in ply
//! `n + 1`, which a build solves before ply `n`: a first scan emits every
//! request there is, no index gains the internal flag, and a pass asks
//! nothing. Ply `n + 1`'s first bucket is therefore the whole table of
//! successor partitions the kernel needs; when `StreamTargets` has none
//! for it, an ongoing index fails the chunk as the CPU expansion does.
#![cfg(feature = "build")]

use super::twin::{Connect4SolveSpec, Connect4Tables, Kind};
use crate::game::{
    expand_on_twin, ChunkDone, ChunkJob, StreamTargets, STREAM_DRAWN, STREAM_ILLEGAL,
    STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING, STREAM_PENDING,
};
use crate::value::PartitionId;
use crate::{Error, Result};

/// Failure codes of `kernels/common.cuh` (`TB_FAIL_*`): the top byte of
/// the failure word, the rank below it.
const FAIL_LATER: u64 = 1;
const FAIL_NO_MOVES: u64 = 2;

/// The game's name of ply `n` (as `Connect4::partition_name`).
pub fn ply_name(n: u32) -> String {
    format!("ply{n:02}")
}

/// The contract error of failure word `fail` (code << 56 | rank) of ply
/// `spec`, worded as the generic stager words the kernel's.
fn contract_error(spec: Connect4SolveSpec, fail: u64) -> Error {
    let rank = fail & 0x00ff_ffff_ffff_ffff;
    let name = ply_name(spec.n);
    Error::GameContract {
        game: "connect4".into(),
        message: if fail >> 56 == FAIL_LATER {
            format!("index {rank} of partition {name} has a move to a partition that is not solved before it (twin expansion)")
        } else {
            format!("index {rank} of partition {name} has no moves but its status is not Lost or Drawn (twin expansion)")
        },
    }
}

/// Ply `n + 1`'s first bucket, if `targets` may request it.
fn next_base(spec: Connect4SolveSpec, targets: &StreamTargets) -> Option<u64> {
    spec.next().and_then(|s| targets.base_of(PartitionId(s.n)))
}

/// The CPU twin of `connect4_stream_expand`: `job` (a chunk of ply `spec`)
/// expanded as [`StreamTargets`] specifies, on all threads, through
/// `tables` (those of `spec`'s board). Its results must equal
/// [`crate::game::expand_chunk_on_cpu`]'s on the game connect4, and the
/// kernel's.
pub fn expand_twin(
    spec: Connect4SolveSpec,
    tables: &Connect4Tables,
    targets: &StreamTargets,
    job: ChunkJob,
) -> Result<ChunkDone> {
    let first_scan = job.first_scan;
    let n = spec.n;
    let size = tables.size(n);
    let base = next_base(spec, targets);
    let piece = |vals: &mut [u8], bits: &mut [u8], at: u64| {
        let mut out = Vec::new();
        let mut succ = Vec::new();
        let mut fail = u64::MAX;
        for (j, v) in vals.iter_mut().enumerate() {
            let r = at + j as u64;
            let shift = 2 * (j % 4);
            if first_scan {
                bits[j / 4] &= !(3 << shift);
                if !targets.is_reached(r) || r >= size {
                    *v = STREAM_ILLEGAL;
                    continue;
                }
                match tables.successors(n, r, &mut succ) {
                    Kind::Illegal => *v = STREAM_ILLEGAL,
                    Kind::Lost => *v = STREAM_LOST,
                    Kind::Drawn => *v = STREAM_DRAWN,
                    Kind::Ongoing => {
                        *v = STREAM_PENDING;
                        bits[j / 4] |= STREAM_ONGOING << shift;
                        match base {
                            Some(b) => out.extend(succ.iter().map(|&s| [targets.key(b, s), r])),
                            None => fail = fail.min(FAIL_LATER << 56 | r),
                        }
                    }
                }
            } else if (bits[j / 4] >> shift) & 3 == STREAM_ONGOING | STREAM_INTERNAL
                && *v == STREAM_PENDING
                && r < size
                && tables.kind(n, r) != Kind::Illegal
            {
                // No first scan of this game sets INTERNAL; where the
                // flags say so anyway, the moves (all out of the ply)
                // ask nothing, but still break the contract as the
                // game's rules would.
                if spec.next().is_none() {
                    fail = fail.min(FAIL_NO_MOVES << 56 | r);
                } else if base.is_none() {
                    fail = fail.min(FAIL_LATER << 56 | r);
                }
            }
        }
        (out, fail)
    };
    expand_on_twin(targets, job, piece, |fail| contract_error(spec, fail))
}

#[cfg(feature = "cuda")]
pub use device::StreamKernels;

#[cfg(feature = "cuda")]
mod device {
    use std::sync::Arc;

    use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, PushKernelArg};

    use super::super::cuda::KERNEL_SOURCES;
    use super::super::twin::{Connect4SolveSpec, Connect4Tables};
    use super::{next_base, ply_name};
    use crate::backend::cuda::stream::{ChunkLaunch, Stager, StreamArgs};
    use crate::backend::cuda::{cuda_err, CudaDevice, BLOCK};
    use crate::game::{ChunkExpander, StreamTargets};
    use crate::value::PartitionId;
    use crate::Result;

    /// The streamed path's kernel on one device: `connect4.cu`, compiled
    /// once per device (`CudaDevice::load_module` keeps it; a build asks
    /// for an expander per partition and pass).
    pub struct StreamKernels {
        device: Arc<CudaDevice>,
    }

    impl StreamKernels {
        /// Nothing compiled yet.
        pub fn new(device: Arc<CudaDevice>) -> StreamKernels {
            StreamKernels { device }
        }

        fn module(&self) -> Result<Arc<CudaModule>> {
            let (name, source) = KERNEL_SOURCES[0];
            self.device.load_module(name, source, &[])
        }

        /// A [`Stager`] of ply `spec` (`targets.partition`) within
        /// `device_bytes` of device memory.
        pub fn expander(
            &self,
            spec: Connect4SolveSpec,
            targets: &StreamTargets,
            device_bytes: u64,
        ) -> Result<Box<dyn ChunkExpander>> {
            let launch = Connect4Launch::new(self.device.clone(), self.module()?, spec, targets)?;
            Ok(Box::new(Stager::new(
                self.device.clone(),
                Arc::new(launch),
                targets.clone(),
                device_bytes,
            )?))
        }
    }

    /// `connect4_stream_expand` of one ply, with its own arguments.
    struct Connect4Launch {
        device: Arc<CudaDevice>,
        module: Arc<CudaModule>,
        function: CudaFunction,
        spec: Connect4SolveSpec,
        tables: CudaSlice<u64>,
        tables_len: u32,
        ways: u32,
        prefix: u32,
        size: u64,
        next_base: u64,
        has_next_base: u32,
    }

    impl Connect4Launch {
        fn new(
            device: Arc<CudaDevice>,
            module: Arc<CudaModule>,
            spec: Connect4SolveSpec,
            targets: &StreamTargets,
        ) -> Result<Connect4Launch> {
            let t = Connect4Tables::new(spec)?;
            let flat = t.flat();
            let s = device.stream();
            let tables = s
                .clone_htod(&flat)
                .map_err(cuda_err("copying the tables"))?;
            // The stager's streams do not wait for this one: the tables must
            // be in place before its first launch.
            s.synchronize().map_err(cuda_err("copying the tables"))?;
            let function = device.function(&module, "connect4_stream_expand")?;
            let base = next_base(spec, targets);
            Ok(Connect4Launch {
                function,
                module,
                spec,
                tables,
                tables_len: flat.len() as u32,
                ways: t.ways_offset(),
                prefix: t.prefix_offset(),
                size: t.size(spec.n),
                next_base: base.unwrap_or(0),
                has_next_base: u32::from(base.is_some()),
                device,
            })
        }
    }

    impl ChunkLaunch for Connect4Launch {
        fn module(&self) -> &Arc<CudaModule> {
            &self.module
        }

        fn launch(&self, stream: &Arc<CudaStream>, args: &mut StreamArgs<'_>) -> Result<()> {
            let smem = self.tables_len * 8;
            let cfg = self
                .device
                .grid(&self.function, BLOCK, u64::from(args.n), smem)?;
            let (w, h, n) = (self.spec.width, self.spec.height, self.spec.n);
            let mut b = stream.launch_builder(&self.function);
            b.arg(&w)
                .arg(&h)
                .arg(&n)
                .arg(&self.tables)
                .arg(&self.tables_len)
                .arg(&self.ways)
                .arg(&self.prefix)
                .arg(&self.size)
                .arg(&self.next_base)
                .arg(&self.has_next_base);
            args.push(&mut b);
            // SAFETY: the arguments match connect4_stream_expand in
            // connect4.cu, its own then common.cuh's tail in its order
            // (StreamArgs::push). The tables hold `tables_len` u64 laid out
            // as Connect4Tables::flat says, for this board, and fit the
            // dynamic shared memory asked for (under 27 KiB for the largest
            // board); BLOCK is a multiple of 32, as the kernel's whole-warp
            // loop needs. The kernel decodes only indices below `size` (ply
            // n's indices, so every successor is an index of ply n + 1),
            // touches values[j], flag word j / 16 and reached word j / 64
            // for j < args.n only (buffers the stager sized for its chunk),
            // and stores a request only at a slot below `cap`, the pairs
            // `out` holds.
            unsafe { b.launch(cfg) }.map_err(cuda_err("launching connect4_stream_expand"))?;
            Ok(())
        }

        /// At most one request per column: the buffers never have to grow,
        /// so the stager stays within the device memory it was given.
        fn requests_per_index(&self) -> u32 {
            self.spec.width
        }

        fn game(&self) -> String {
            "connect4".into()
        }

        fn partition_name(&self, p: PartitionId) -> String {
            ply_name(p.0)
        }
    }
}
