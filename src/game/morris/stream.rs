//! The streamed path's chunk expansion of Morris partitions on a CUDA
//! device: the host side of kernel `morris_stream_expand`
//! (`kernels/morris.cu`), launched by the generic
//! [`Stager`](crate::backend::cuda::stream::Stager).
//!
//! Every partition kind is covered: `k1-k2` (moves; quiet moves stay in the
//! partition, captures leave it), the lost `2-k` and lost placement layers
//! (every index lost, no request), and placement layers `tTT-a-b` (every
//! successor in another partition; reached bits where the build gives
//! them). The kernel reads the partition's shape from a small descriptor
//! ([`StreamDesc`]) that names, per half, where each of its two targets
//! (quiet, capture) lies and its first bucket, so no partition code has to
//! be looked up on the device: a half's moves can land in two partitions
//! only.

use super::kernels::spec_of;
use super::place::PlaceSpec;
use super::{Morris, Part};
use crate::game::{Game, StreamTargets};

/// The kernel.
pub const STREAM_KERNEL: &str = "morris_stream_expand";

/// `MS_KIND_LOST` in morris.cu: every index lost (or not reached).
pub const KIND_LOST: u64 = 0;
/// `MS_KIND_MOVE`: a `k1-k2` partition.
pub const KIND_MOVE: u64 = 1;
/// `MS_KIND_PLACE`: a placement layer that is not lost.
pub const KIND_PLACE: u64 = 2;
/// `MS_NO_BASE`: a target without a bucket (not solved before).
const NO_BASE: u64 = u64::MAX;
/// `MS_HEAD`, `MS_HALF`, `MS_WORDS`.
const HEAD: usize = 3;
const HALF: usize = 8;
/// Words of a descriptor.
pub const DESC_WORDS: usize = HEAD + 2 * HALF;

/// One target of a half: the counts its boards have (for its class table),
/// where they start in it, its first bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescTarget {
    /// Pieces of the successor's side to move, and of its opponent.
    pub counts: (u32, u32),
    /// First index of S(counts) in the target partition.
    pub offset: u64,
    /// First bucket of the target partition's requests, if it has one.
    pub base: Option<u64>,
    /// The target is the partition expanded.
    pub internal: bool,
}

/// A half of the partition: its first index and counts, its quiet and its
/// capture target (`None`: no move of the half can capture).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescHalf {
    /// First index.
    pub base: u64,
    /// Pieces of the side to move, and of its opponent.
    pub counts: (u32, u32),
    /// Where quiet moves or placements land.
    pub quiet: DescTarget,
    /// Where captures land.
    pub capture: Option<DescTarget>,
}

/// What the kernel needs to know of a partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamDesc {
    /// [`KIND_LOST`], [`KIND_MOVE`] or [`KIND_PLACE`].
    pub kind: u64,
    /// Indices of the partition.
    pub size: u64,
    /// One or two halves (none for a lost partition).
    pub halves: Vec<DescHalf>,
    /// Whether indices are symmetry classes.
    pub symmetry: bool,
}

impl StreamDesc {
    /// The descriptor of `targets.partition` of `game`, or `None` when it is
    /// not one of the game's partitions (the pipeline then expands it on
    /// the CPU).
    pub fn of(game: &Morris, targets: &StreamTargets) -> Option<StreamDesc> {
        let p = targets.partition;
        let size = game.partition_size(p);
        let lost = |size| StreamDesc {
            kind: KIND_LOST,
            size,
            halves: Vec::new(),
            symmetry: game.symmetry,
        };
        match Part::from_id(p)? {
            Part::Lost(k) => (3..=game.max).contains(&k).then(|| lost(size)),
            Part::Place { .. } => {
                let spec = PlaceSpec::of(game, p)?;
                if spec.lost {
                    return Some(lost(spec.size()));
                }
                let target = |t: &super::place::PlaceTarget| DescTarget {
                    counts: (t.a, t.b),
                    offset: t.offset,
                    base: targets.base_of(t.id).filter(|_| t.exists),
                    internal: t.id == p,
                };
                Some(StreamDesc {
                    kind: KIND_PLACE,
                    size: spec.size(),
                    halves: vec![DescHalf {
                        base: 0,
                        counts: (spec.a, spec.b),
                        quiet: target(spec.quiet.as_ref()?),
                        capture: spec.capture.as_ref().map(target),
                    }],
                    symmetry: game.symmetry,
                })
            }
            Part::Pair(..) => {
                let spec = spec_of(game, p)?;
                let halves = spec
                    .halves()
                    .iter()
                    .map(|h| {
                        let (q, c) = (h.quiet, h.capture);
                        // As Game::rank: a side left with two is the lost
                        // `2-k`, else the pair of the counts.
                        let capture_part = Morris::partition_of(c.b, c.a);
                        DescHalf {
                            base: h.base,
                            counts: (h.a, h.b),
                            quiet: DescTarget {
                                counts: (q.a, q.b),
                                offset: q.offset,
                                base: targets.base_of(p),
                                internal: true,
                            },
                            capture: Some(DescTarget {
                                counts: (c.a, c.b),
                                offset: c.offset,
                                base: targets.base_of(capture_part),
                                internal: false,
                            }),
                        }
                    })
                    .collect();
                Some(StreamDesc {
                    kind: KIND_MOVE,
                    size,
                    halves,
                    symmetry: game.symmetry,
                })
            }
        }
    }

    /// The descriptor as the kernel reads it (`MS_*` in morris.cu).
    pub fn words(&self) -> [u64; DESC_WORDS] {
        let mut w = [0u64; DESC_WORDS];
        w[0] = self.kind;
        w[1] = self.halves.len().max(1) as u64;
        w[2] = self.size;
        for (h, half) in self.halves.iter().enumerate() {
            let at = HEAD + HALF * h;
            w[at] = half.base;
            w[at + 1] = u64::from(half.counts.0) | u64::from(half.counts.1) << 8;
            for (k, t) in [Some(half.quiet), half.capture].iter().enumerate() {
                let t_at = at + 2 + 3 * k;
                // A missing capture target is never moved to (no placement
                // or move of the half closes a mill with something to take).
                w[t_at] = t.map_or(0, |t| t.offset);
                w[t_at + 1] = t.and_then(|t| t.base).unwrap_or(NO_BASE);
                w[t_at + 2] = u64::from(t.is_some_and(|t| t.internal));
            }
        }
        w
    }

    /// About how many requests an index emits at most on average: sizes the
    /// stager's buffers (more only costs a rerun of the chunk).
    pub fn requests_per_index(&self) -> u32 {
        match self.kind {
            // Every empty point, and a few captures.
            KIND_PLACE => self
                .halves
                .first()
                .map_or(1, |h| 26 - h.counts.0 - h.counts.1),
            KIND_MOVE => {
                let flying = self.halves.iter().any(|h| h.counts.0 == 3);
                if flying {
                    24
                } else {
                    8
                }
            }
            _ => 1,
        }
    }
}

#[cfg(feature = "cuda")]
pub use device::{MorrisStreamLaunch, StreamModule};

#[cfg(feature = "cuda")]
mod device {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, PushKernelArg};

    use super::super::classes::HalfIndex;
    use super::super::cuda::KERNEL_SOURCES;
    use super::super::{expand, rank24, retro, Morris};
    use super::{StreamDesc, STREAM_KERNEL};
    use crate::backend::cuda::stream::{ChunkLaunch, Stager, StreamArgs};
    use crate::backend::cuda::{cuda_err, CudaDevice, BLOCK};
    use crate::game::{Game, StreamTargets};
    use crate::value::PartitionId;
    use crate::Result;

    /// One half's class tables on the device ([`HalfIndex::device_blob`]).
    type DeviceTab = Arc<CudaSlice<u64>>;

    /// The Morris module loaded for the streamed path on one device, and
    /// the class tables uploaded so far: shared by every partition's stager.
    pub struct StreamModule {
        device: Arc<CudaDevice>,
        module: Arc<CudaModule>,
        function: CudaFunction,
        tabs: Mutex<HashMap<(u32, u32), DeviceTab>>,
        /// Stands in for the class tables without symmetry (never read).
        dummy: DeviceTab,
    }

    impl StreamModule {
        /// Compiles and loads morris.cu on `device` with its board tables.
        pub fn load(device: Arc<CudaDevice>) -> Result<StreamModule> {
            let bin = rank24::bin_flat();
            let (file, source) = KERNEL_SOURCES[0];
            // The tables MorrisCuda::new fills: the kernel shares their code.
            let tables: [(&str, &[u32]); 5] = [
                ("TB_BIN", &bin),
                ("MORRIS_SYM", &retro::SYM_NIBBLES),
                ("MORRIS_ADJ", &expand::ADJACENT),
                ("MORRIS_MILLS", &expand::MILLS),
                ("MORRIS_MILLS_AT", &expand::MILLS_AT),
            ];
            let module = device.load_module(file, source, &tables)?;
            let function = device.function(&module, STREAM_KERNEL)?;
            let s = device.stream();
            let dummy = Arc::new(
                s.clone_htod(&[0u64; 16])
                    .map_err(cuda_err("allocating a stand-in table"))?,
            );
            Ok(StreamModule {
                device,
                module,
                function,
                tabs: Mutex::new(HashMap::new()),
                dummy,
            })
        }

        /// The class tables of S(a, b) on the device (uploaded on first use).
        fn tab(&self, (a, b): (u32, u32)) -> Result<DeviceTab> {
            let mut tabs = self.tabs.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(t) = tabs.get(&(a, b)) {
                return Ok(t.clone());
            }
            let s = self.device.stream();
            let t = Arc::new(
                s.clone_htod(&HalfIndex::get(a, b).device_blob())
                    .map_err(cuda_err("copying class tables to the device"))?,
            );
            tabs.insert((a, b), t.clone());
            Ok(t)
        }

        /// A stager of `targets.partition` of `game` within `device_bytes`,
        /// or `None` when the kernel does not cover the partition.
        pub fn stager(
            self: &Arc<Self>,
            game: &Morris,
            targets: &StreamTargets,
            device_bytes: u64,
        ) -> Option<Result<Stager>> {
            let desc = StreamDesc::of(game, targets)?;
            Some(self.launch(game, desc).and_then(|launch| {
                Stager::new(
                    self.device.clone(),
                    Arc::new(launch),
                    targets.clone(),
                    device_bytes,
                )
            }))
        }

        fn launch(self: &Arc<Self>, game: &Morris, desc: StreamDesc) -> Result<MorrisStreamLaunch> {
            let s = self.device.stream();
            let words = s
                .clone_htod(&desc.words())
                .map_err(cuda_err("copying a partition descriptor"))?;
            let mut tabs: Vec<DeviceTab> = Vec::with_capacity(6);
            for h in 0..2 {
                match desc.halves.get(h).filter(|_| desc.symmetry) {
                    Some(half) => {
                        let own = self.tab(half.counts)?;
                        let quiet = self.tab(half.quiet.counts)?;
                        // No capture target: no capture is ranked into it.
                        let capture = match half.capture {
                            Some(c) => self.tab(c.counts)?,
                            None => own.clone(),
                        };
                        tabs.extend([own, quiet, capture]);
                    }
                    None => tabs.extend([0, 1, 2].map(|_| self.dummy.clone())),
                }
            }
            // The uploads ran on the device's stream; the stager launches on
            // its own streams.
            s.synchronize()
                .map_err(cuda_err("copying a partition descriptor"))?;
            Ok(MorrisStreamLaunch {
                module: self.clone(),
                desc_words: words,
                tabs: tabs.try_into().expect("two halves of three tables"),
                symmetry: u32::from(desc.symmetry),
                hint: desc.requests_per_index(),
                game: game.clone(),
                desc,
            })
        }
    }

    /// [`ChunkLaunch`] of one Morris partition.
    pub struct MorrisStreamLaunch {
        module: Arc<StreamModule>,
        desc_words: CudaSlice<u64>,
        tabs: [DeviceTab; 6],
        symmetry: u32,
        hint: u32,
        game: Morris,
        desc: StreamDesc,
    }

    impl MorrisStreamLaunch {
        /// The partition's descriptor.
        pub fn desc(&self) -> &StreamDesc {
            &self.desc
        }
    }

    impl ChunkLaunch for MorrisStreamLaunch {
        fn module(&self) -> &Arc<CudaModule> {
            &self.module.module
        }

        fn launch(&self, stream: &Arc<CudaStream>, args: &mut StreamArgs<'_>) -> Result<()> {
            let f = &self.module.function;
            let cfg = self.module.device.grid(f, BLOCK, u64::from(args.n), 0)?;
            let mut l = stream.launch_builder(f);
            l.arg(&self.desc_words).arg(&self.symmetry);
            for t in &self.tabs {
                l.arg(&**t);
            }
            args.push(&mut l);
            // SAFETY: the arguments match morris_stream_expand in morris.cu
            // (its own, then common.cuh's tail as StreamArgs pushes it);
            // desc_words holds DESC_WORDS words describing this partition
            // (StreamDesc::words); with symmetry each table is the device
            // blob of the half or target the descriptor names in that
            // slot, so every rank the kernel unranks (below the partition's
            // size, checked there) or ranks (boards of those counts) is
            // inside it; without symmetry the tables are never read. The
            // tail's buffers are the stager's: `values` and `flags` hold
            // `n` indices, `out` `cap` pairs (tb_emit writes below cap
            // only), `reached` the chunk's words when `has_reached`.
            unsafe { l.launch(cfg) }.map_err(cuda_err("launching morris_stream_expand"))?;
            Ok(())
        }

        fn requests_per_index(&self) -> u32 {
            self.hint
        }

        fn game(&self) -> String {
            self.game.info().id.to_string()
        }

        fn partition_name(&self, p: PartitionId) -> String {
            self.game.partition_name(p)
        }
    }
}
