//! Nine Men's Morris on a CUDA device: the host side of `kernels/morris.cu`,
//! one module holding the rank/unrank check (`tb_rank_check`), the expansion
//! and summary kernels (`morris_expand3w`, `morris_summary3b_lb`), the
//! candidate-driven partition solve (`retro_*`) and phase I's layer solve
//! and forward search (`place_solve`, `place_expand`). Every kernel has a CPU
//! twin in this folder ([`super::twin`], [`super::retro::CpuTwin`],
//! [`super::place`]), compared on the device by `tbforge bench gpu morris`
//! ([`super::check`]).
//!
//! Results that come back per position travel through pinned host buffers
//! (plain page-locked, not write-combined: the CPU reads them) on two streams,
//! so that one chunk's copy overlaps the next chunk's kernel.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchArgs, PinnedHostSlice,
    PushKernelArg,
};

use super::classes::HalfIndex;
use super::expand::{self, Expansion, MorrisPartition, Summary};
use super::kernels::{LIST_FLOOR, LIST_SLACK};
use super::place::{self, PlaceSpec};
use super::rank24;
use super::retro::{self, word_range, CpuTwin, ListUse, MorrisSolveSpec, SolveStats};
use super::twin::{self as cpu, RankCheck};
use crate::backend::cuda::{cuda_err, CudaDevice, PeerBuffer, ResidentValues, Timed, BLOCK};
use crate::dist::{decode_u64s, encode_u64s, slice_of, Solo, Team};
use crate::{Error, Rank, Result};

/// The Morris kernel file, by name.
pub const KERNEL_SOURCES: &[(&str, &str)] =
    &[("morris.cu", include_str!("../../../kernels/morris.cu"))];

pub use super::kernels::{EXPAND_KERNEL, GPU_TEAM_BLOCK_WORDS, SUMMARY_KERNEL};

/// Threads per block of [`SUMMARY_KERNEL`]: its `__launch_bounds__(512, 2)`
/// (64 registers a thread) were measured at this size.
pub const SUMMARY_BLOCK: u32 = 512;

/// Dynamic shared memory of a v3 kernel (`mc_load` in morris.cu): its term
/// table (24 x L1 x (L1 + 2) pairs of u64) and a queue per warp of `queue`
/// bytes (`mc_smem_queue_bytes`).
fn morris3_smem(part: MorrisPartition, block: u32, queue: u32) -> u32 {
    let l1 = part.mover().max(part.opponent()) + 1;
    24 * l1 * (l1 + 2) * 16 + block.div_ceil(32) * queue
}

/// Dynamic shared memory of [`EXPAND_KERNEL`] (MODE 1 queues: 128 slots of
/// 12 bytes and 32 accumulators of 12 bytes per warp).
fn expand_smem(part: MorrisPartition, block: u32) -> u32 {
    morris3_smem(part, block, 128 * 12 + 32 * 12)
}

/// Dynamic shared memory of [`SUMMARY_KERNEL`] (MODE 2 queues: 128 slots of
/// 24 bytes per warp).
fn summary_smem(part: MorrisPartition, block: u32) -> u32 {
    morris3_smem(part, block, 128 * 24)
}

/// The most dynamic shared memory a v3 kernel is allowed (opted in at load:
/// the table for 9 a side and the queues of 1,024 threads fit; sm_90 allows
/// 227 KiB).
const MORRIS3_SMEM_MAX: i32 = 160 * 1024;

/// Dynamic shared memory of the retro kernels: the term table for counts up
/// to max(k1, k2), `tb_terms_len(L1)` u64 (at most 38,400 bytes for 9 pieces
/// a side, under the 48 KiB a block gets without opting in).
fn retro_smem(part: MorrisPartition) -> u32 {
    let l1 = part.mover().max(part.opponent()) + 1;
    2 * 24 * l1 * l1 * 8
}

/// The arguments every `retro_*` kernel but `retro_compact` starts with:
/// the partition, whether it indexes classes, and the four class tables
/// (RCtx and RHalf in morris.cu).
struct RetroHead<'a> {
    k1: u32,
    k2: u32,
    symmetry: u32,
    tabs: [&'a CudaSlice<u64>; 4],
}

impl<'a> RetroHead<'a> {
    fn push(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&self.k1).arg(&self.k2).arg(&self.symmetry);
        for t in self.tabs {
            launch.arg(t);
        }
    }
}

/// One half's class tables on the device ([`HalfIndex::device_blob`]).
type DeviceBlob = Arc<CudaSlice<u64>>;

/// The arguments `place_solve` and `place_expand` start with: the
/// partition, whether it indexes classes, its class tables and its reached
/// bits (PCtx in morris.cu).
struct PlaceHead<'a> {
    a: u32,
    b: u32,
    symmetry: u32,
    tab: Option<&'a CudaSlice<u64>>,
    reached: &'a CudaSlice<u64>,
    words: u64,
    /// Items per chunk of 32 reached words ([`place_split`]).
    split: u32,
    /// A null device pointer, for what is not given.
    null: u64,
}

impl<'a> PlaceHead<'a> {
    /// The head of `spec` with its reached bits (`host`, on the device as
    /// `reached`) and class table `tab`.
    fn new(
        spec: &PlaceSpec,
        host: &[u64],
        reached: &'a CudaSlice<u64>,
        tab: Option<&'a CudaSlice<u64>>,
    ) -> PlaceHead<'a> {
        PlaceHead {
            a: spec.a,
            b: spec.b,
            symmetry: u32::from(spec.symmetry),
            tab,
            reached,
            words: host.len() as u64,
            split: place_split(host),
            null: 0,
        }
    }

    /// Threads to launch: a warp per item.
    fn threads(&self) -> u64 {
        self.words.div_ceil(32) * u64::from(self.split) * 32
    }

    fn push(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&self.a).arg(&self.b).arg(&self.symmetry);
        self.push_opt(launch, self.tab);
        launch.arg(self.reached).arg(&self.words).arg(&self.split);
    }

    /// `slice` as a pointer argument, or null where it is not given.
    fn push_opt<T>(&'a self, launch: &mut LaunchArgs<'a>, slice: Option<&'a CudaSlice<T>>) {
        match slice {
            Some(s) => launch.arg(s),
            None => launch.arg(&self.null),
        };
    }
}

/// Items per chunk of 32 reached words for the `place_*` kernels
/// (`place_for_reached` in morris.cu): about one round of 32 positions per
/// item on average, so that a dense partition of few words keeps as many
/// warps busy as a sparse one of many; a power of two up to 64 (a chunk
/// holds at most 64 rounds).
fn place_split(reached: &[u64]) -> u32 {
    let positions: u64 = reached.iter().map(|w| u64::from(w.count_ones())).sum();
    let chunks = (reached.len() as u64).div_ceil(32).max(1);
    let rounds = positions.div_ceil(chunks * 32);
    rounds.clamp(1, 64).next_power_of_two() as u32
}

/// The Morris kernels loaded on one device.
pub struct MorrisCuda {
    device: Arc<CudaDevice>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    // The module stays loaded while its functions are in use.
    _module: Arc<CudaModule>,
    rank_check: CudaFunction,
    expand: CudaFunction,
    summary: CudaFunction,
    retro_first: CudaFunction,
    retro_candidates: CudaFunction,
    retro_compact: CudaFunction,
    retro_merge: CudaFunction,
    retro_pass: CudaFunction,
    class_check: CudaFunction,
    place_solve: CudaFunction,
    place_expand: CudaFunction,
    /// Class tables uploaded so far, by (a, b): every partition reuses them.
    class_tabs: Mutex<HashMap<(u32, u32), DeviceBlob>>,
    /// Whether copies from another member's GPU went through host memory
    /// (no direct peer access between the two): for traces.
    indirect_peers: std::sync::atomic::AtomicBool,
    /// Values of the partitions this device solved last, kept for those
    /// whose captures lead there (uploading 1.2 GB of dependencies took
    /// 0.32 s of 8-7's 2.3 s on an H200).
    resident: ResidentValues,
}

/// What a partition's values are kept under on the device.
fn resident_key(name: &str, symmetry: bool) -> String {
    format!("{name}/{symmetry}")
}

impl std::fmt::Debug for MorrisCuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MorrisCuda({})", self.device.name())
    }
}

impl MorrisCuda {
    /// Compiles and loads the Morris kernels on `device` and fills their
    /// board tables.
    pub fn new(device: Arc<CudaDevice>) -> Result<MorrisCuda> {
        let bin = rank24::bin_flat();
        let (file, source) = KERNEL_SOURCES[0];
        let tables: [(&str, &[u32]); 5] = [
            ("TB_BIN", &bin),
            ("MORRIS_SYM", &retro::SYM_NIBBLES),
            ("MORRIS_ADJ", &expand::ADJACENT),
            ("MORRIS_MILLS", &expand::MILLS),
            ("MORRIS_MILLS_AT", &expand::MILLS_AT),
        ];
        let module = device.load_module(file, source, &tables)?;
        let v3 = |name: &str| -> Result<CudaFunction> {
            let f = device.function(&module, name)?;
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                MORRIS3_SMEM_MAX,
            )
            .map_err(cuda_err(&format!("allowing {name} more shared memory")))?;
            Ok(f)
        };
        Ok(MorrisCuda {
            ctx: device.context().clone(),
            stream: device.stream().clone(),
            rank_check: device.function(&module, "tb_rank_check")?,
            expand: v3(EXPAND_KERNEL)?,
            summary: v3(SUMMARY_KERNEL)?,
            retro_first: device.function(&module, "retro_first_scan")?,
            retro_candidates: device.function(&module, "retro_candidates")?,
            retro_compact: device.function(&module, "retro_compact")?,
            retro_merge: device.function(&module, "retro_merge_marks")?,
            retro_pass: device.function(&module, "retro_pass_candidates")?,
            class_check: device.function(&module, "class_rank_check")?,
            place_solve: device.function(&module, "place_solve")?,
            place_expand: device.function(&module, "place_expand")?,
            class_tabs: Mutex::new(HashMap::new()),
            indirect_peers: Default::default(),
            // A quarter of the device: the partitions solved last, the
            // solve's own buffers beside them.
            resident: ResidentValues::new(device.free_memory()? / 4),
            _module: module,
            device,
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.device
    }

    /// The class tables of S(a, b) on the device (uploaded on first use).
    fn class_tab(&self, a: u32, b: u32) -> Result<Arc<CudaSlice<u64>>> {
        let mut tabs = self.class_tabs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = tabs.get(&(a, b)) {
            return Ok(t.clone());
        }
        let blob = HalfIndex::get(a, b).device_blob();
        let t = Arc::new(
            self.stream
                .clone_htod(&blob)
                .map_err(cuda_err("copying class tables to the device"))?,
        );
        tabs.insert((a, b), t.clone());
        Ok(t)
    }

    /// The class tables a `retro_*` kernel of `spec` reads (RHalf in
    /// morris.cu): (k1, k2), (k2, k1), (k2 - 1, k1), (k1 - 1, k2); without
    /// symmetry, four stand-ins the kernels never read.
    fn retro_tabs(&self, spec: &MorrisSolveSpec) -> Result<[Arc<CudaSlice<u64>>; 4]> {
        let (k1, k2) = (spec.k1, spec.k2);
        if !spec.symmetry {
            let t = self.class_tab(2, 1)?;
            return Ok([t.clone(), t.clone(), t.clone(), t]);
        }
        Ok([
            self.class_tab(k1, k2)?,
            self.class_tab(k2, k1)?,
            self.class_tab(k2 - 1, k1)?,
            self.class_tab(k1 - 1, k2)?,
        ])
    }

    /// Class index check: for each `(rank, symmetry)`, the board at `rank` of
    /// S(a, b) and the rank of its image under `symmetry` (twin:
    /// [`cpu::class_check`]).
    pub fn class_check(
        &self,
        a: u32,
        b: u32,
        inputs: &[(u64, u32)],
    ) -> Result<Vec<(u32, u32, u64)>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let size = HalfIndex::get(a, b).size();
        if let Some(&(r, _)) = inputs.iter().find(|(r, g)| *r >= size || *g >= 16) {
            return Err(Error::Cuda(format!(
                "class check of S({a}, {b}): index {r} or its symmetry is out of range"
            )));
        }
        let blob = self.class_tab(a, b)?;
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        let ranks: Vec<u64> = inputs.iter().map(|&(r, _)| r).collect();
        let syms: Vec<u32> = inputs.iter().map(|&(_, g)| g).collect();
        let n = inputs.len();
        let ranks = s.clone_htod(&ranks).map_err(e("copying ranks"))?;
        let syms = s.clone_htod(&syms).map_err(e("copying symmetries"))?;
        let mut movers = s.alloc_zeros::<u32>(n).map_err(e("allocating"))?;
        let mut opps = s.alloc_zeros::<u32>(n).map_err(e("allocating"))?;
        let mut reranked = s.alloc_zeros::<u64>(n).map_err(e("allocating"))?;
        let n64 = n as u64;
        let cfg = self.device.grid(&self.class_check, BLOCK, n64, 0)?;
        let mut launch = s.launch_builder(&self.class_check);
        launch
            .arg(&*blob)
            .arg(&ranks)
            .arg(&syms)
            .arg(&n64)
            .arg(&mut movers)
            .arg(&mut opps)
            .arg(&mut reranked);
        // SAFETY: arguments match class_rank_check in morris.cu; blob is
        // S(a, b)'s device_blob, every rank is below its size and every
        // symmetry below 16 (checked above), the outputs hold n entries.
        unsafe { launch.launch(cfg) }.map_err(e("launching class_rank_check"))?;
        let movers = s.clone_dtoh(&movers).map_err(e("copying back"))?;
        let opps = s.clone_dtoh(&opps).map_err(e("copying back"))?;
        let reranked = s.clone_dtoh(&reranked).map_err(e("copying back"))?;
        Ok((0..n).map(|i| (movers[i], opps[i], reranked[i])).collect())
    }

    fn upload_ranks(&self, ranks: &[Rank]) -> Result<CudaSlice<u64>> {
        let raw: Vec<u64> = ranks.iter().map(|r| r.0).collect();
        self.stream
            .clone_htod(&raw)
            .map_err(cuda_err("copying ranks to the device"))
    }

    /// Unranks each rank of partition (k1, k2) on the device, ranks it again
    /// (kernel `tb_rank_check`; twin [`cpu::rank_check`]).
    pub fn rank_check(&self, k1: u32, k2: u32, ranks: &[Rank]) -> Result<Vec<RankCheck>> {
        let size = rank24::size(k1, k2)
            .ok_or_else(|| Error::Cuda(format!("{k1} + {k2} pieces do not fit on 24 cells")))?;
        if ranks.iter().any(|r| r.0 >= size) || ranks.is_empty() {
            return cpu::rank_check(k1, k2, ranks); // the same error, or nothing to do
        }
        let n = ranks.len();
        let dev_ranks = self.upload_ranks(ranks)?;
        let zeros32 = || {
            self.stream
                .alloc_zeros::<u32>(n)
                .map_err(cuda_err("allocating"))
        };
        let zeros64 = || {
            self.stream
                .alloc_zeros::<u64>(n)
                .map_err(cuda_err("allocating"))
        };
        let (mut c1, mut c2, mut sw, mut rr) = (zeros32()?, zeros32()?, zeros64()?, zeros64()?);
        let cfg = self.device.grid(&self.rank_check, BLOCK, n as u64, 0)?;
        let n64 = n as u64;
        let mut launch = self.stream.launch_builder(&self.rank_check);
        launch
            .arg(&k1)
            .arg(&k2)
            .arg(&dev_ranks)
            .arg(&n64)
            .arg(&mut c1)
            .arg(&mut c2)
            .arg(&mut sw)
            .arg(&mut rr);
        // SAFETY: the arguments match tb_rank_check's signature in morris.cu; every
        // buffer holds n elements and the kernel touches indices below n only.
        unsafe { launch.launch(cfg) }.map_err(cuda_err("launching tb_rank_check"))?;
        let get32 =
            |b: &CudaSlice<u32>| self.stream.clone_dtoh(b).map_err(cuda_err("copying back"));
        let get64 =
            |b: &CudaSlice<u64>| self.stream.clone_dtoh(b).map_err(cuda_err("copying back"));
        let (c1, c2, sw, rr) = (get32(&c1)?, get32(&c2)?, get64(&sw)?, get64(&rr)?);
        Ok((0..n)
            .map(|i| RankCheck {
                c1: c1[i],
                c2: c2[i],
                swapped: sw[i],
                rank: rr[i],
            })
            .collect())
    }

    /// Expansions of the given ranks of `part` (kernel [`EXPAND_KERNEL`] over a
    /// rank list; twin [`cpu::morris_expand_ranks`]).
    pub fn morris_expand_ranks(
        &self,
        part: MorrisPartition,
        ranks: &[Rank],
    ) -> Result<Vec<Expansion>> {
        let f = &self.expand;
        cpu::check_ranks(part, ranks)?;
        if ranks.is_empty() {
            return Ok(Vec::new());
        }
        let n = ranks.len();
        let dev_ranks = self.upload_ranks(ranks)?;
        let mut counts = self
            .stream
            .alloc_zeros::<u16>(n)
            .map_err(cuda_err("allocating"))?;
        let mut sums = self
            .stream
            .alloc_zeros::<u64>(n)
            .map_err(cuda_err("allocating"))?;
        let cfg = self
            .device
            .grid(f, BLOCK, n as u64, expand_smem(part, BLOCK))?;
        let (k1, k2, start, n64) = (part.mover(), part.opponent(), 0u64, n as u64);
        let mut launch = self.stream.launch_builder(f);
        launch
            .arg(&k1)
            .arg(&k2)
            .arg(&start)
            .arg(&n64)
            .arg(&dev_ranks)
            .arg(&mut counts)
            .arg(&mut sums);
        // SAFETY: arguments match morris_expand3w in morris.cu; ranks, counts
        // and sums hold n elements, every rank is below the partition size (checked
        // above), and the dynamic shared memory is expand_smem's, what mc_load lays out.
        unsafe { launch.launch(cfg) }.map_err(cuda_err("launching morris_expand3w"))?;
        let counts = self
            .stream
            .clone_dtoh(&counts)
            .map_err(cuda_err("copying back"))?;
        let sums = self
            .stream
            .clone_dtoh(&sums)
            .map_err(cuda_err("copying back"))?;
        Ok(counts
            .into_iter()
            .zip(sums)
            .map(|(c, s)| Expansion {
                successors: u32::from(c),
                checksum: s,
            })
            .collect())
    }

    /// Summary of the expansions of ranks `start..start + count` of `part`,
    /// reduced on the device (kernel [`SUMMARY_KERNEL`] in blocks of
    /// [`SUMMARY_BLOCK`]; twin [`cpu::morris_summary`]), timed with device
    /// events around the kernel.
    pub fn morris_summary(
        &self,
        part: MorrisPartition,
        start: Rank,
        count: u64,
    ) -> Result<Timed<Summary>> {
        let f = &self.summary;
        let block = SUMMARY_BLOCK;
        cpu::check_range(part, start, count)?;
        let mut out = self
            .stream
            .alloc_zeros::<u64>(2)
            .map_err(cuda_err("allocating"))?;
        let cfg = self
            .device
            .grid(f, block, count, summary_smem(part, block))?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let begin = self
            .ctx
            .new_event(timing)
            .map_err(cuda_err("creating an event"))?;
        let end = self
            .ctx
            .new_event(timing)
            .map_err(cuda_err("creating an event"))?;
        let (k1, k2, s0) = (part.mover(), part.opponent(), start.0);
        begin
            .record(&self.stream)
            .map_err(cuda_err("recording an event"))?;
        let mut launch = self.stream.launch_builder(f);
        launch.arg(&k1).arg(&k2).arg(&s0).arg(&count).arg(&mut out);
        // SAFETY: arguments match morris_summary3b_lb in morris.cu; out holds 2
        // elements; ranks start..start+count lie in the partition (checked);
        // the block is within its launch bounds and the dynamic shared memory
        // is summary_smem's, what mc_load lays out.
        unsafe { launch.launch(cfg) }.map_err(cuda_err("launching morris_summary3b_lb"))?;
        end.record(&self.stream)
            .map_err(cuda_err("recording an event"))?;
        let sums = self
            .stream
            .clone_dtoh(&out)
            .map_err(cuda_err("copying back"))?;
        let ms = begin
            .elapsed_ms(&end)
            .map_err(cuda_err("reading the timer"))?;
        Ok(Timed {
            value: Summary {
                positions: count,
                successors: sums[0],
                digest: sums[1],
            },
            seconds: f64::from(ms) / 1e3,
        })
    }

    /// Expands ranks `start..start + count` of `part` chunk by chunk and hands
    /// each chunk's per-position results to `sink(first_rank, counts, checksums)`
    /// in rank order. Two streams, each with its own device and pinned host
    /// buffers of `chunk` positions: the kernel of chunk j runs while chunk
    /// j - 1 is copied back and chunk j - 2 is in `sink`. Timed with the host
    /// clock from the first launch (kernels, copies and sink together); the
    /// value is the seconds spent before it allocating streams and buffers.
    pub fn morris_expand_streamed(
        &self,
        part: MorrisPartition,
        start: Rank,
        count: u64,
        chunk: usize,
        mut sink: impl FnMut(Rank, &[u16], &[u64]) -> Result<()>,
    ) -> Result<Timed<f64>> {
        cpu::check_range(part, start, count)?;
        if chunk == 0 {
            return Err(Error::Cuda("chunk size 0".into()));
        }
        let t0 = Instant::now();
        let streams = [
            self.ctx
                .new_stream()
                .map_err(cuda_err("creating a stream"))?,
            self.ctx
                .new_stream()
                .map_err(cuda_err("creating a stream"))?,
        ];
        let mut dev_counts = Vec::new();
        let mut dev_sums = Vec::new();
        let mut host_counts: Vec<PinnedHostSlice<u16>> = Vec::new();
        let mut host_sums: Vec<PinnedHostSlice<u64>> = Vec::new();
        for s in &streams {
            dev_counts.push(
                s.alloc_zeros::<u16>(chunk)
                    .map_err(cuda_err("allocating"))?,
            );
            dev_sums.push(
                s.alloc_zeros::<u64>(chunk)
                    .map_err(cuda_err("allocating"))?,
            );
            // SAFETY: flags 0 asks for plain page-locked memory; the contents are
            // only read after a device copy into them has completed.
            unsafe {
                host_counts.push(
                    self.ctx
                        .alloc_pinned_with_flags::<u16>(chunk, 0)
                        .map_err(cuda_err("allocating pinned memory"))?,
                );
                host_sums.push(
                    self.ctx
                        .alloc_pinned_with_flags::<u64>(chunk, 0)
                        .map_err(cuda_err("allocating pinned memory"))?,
                );
            }
        }
        let f = &self.expand;
        let cfg = self
            .device
            .grid(f, BLOCK, chunk as u64, expand_smem(part, BLOCK))?;
        let setup = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let chunks = count.div_ceil(chunk as u64);
        let mut pending: Pending = [None, None];
        let (k1, k2) = (part.mover(), part.opponent());
        let null: u64 = 0;
        type Pending = [Option<(Rank, usize)>; 2];
        // Hands the chunk waiting in `slot`'s pinned buffers to the sink.
        fn drain(
            slot: usize,
            pending: &mut Pending,
            counts: &[PinnedHostSlice<u16>],
            sums: &[PinnedHostSlice<u64>],
            sink: &mut impl FnMut(Rank, &[u16], &[u64]) -> Result<()>,
        ) -> Result<()> {
            if let Some((first, len)) = pending[slot].take() {
                let c = counts[slot]
                    .as_slice()
                    .map_err(cuda_err("waiting for a copy"))?;
                let s = sums[slot]
                    .as_slice()
                    .map_err(cuda_err("waiting for a copy"))?;
                sink(first, &c[..len], &s[..len])?;
            }
            Ok(())
        }
        for j in 0..chunks {
            let slot = (j % 2) as usize;
            let first = start.0 + j * chunk as u64;
            let len = (count - j * chunk as u64).min(chunk as u64);
            let stream = &streams[slot];
            let mut launch = stream.launch_builder(f);
            launch
                .arg(&k1)
                .arg(&k2)
                .arg(&first)
                .arg(&len)
                .arg(&null)
                .arg(&mut dev_counts[slot])
                .arg(&mut dev_sums[slot]);
            // SAFETY: arguments match morris_expand3w (a null rank list means
            // ranks first..first+len, inside the partition: checked above); the
            // buffers hold chunk >= len elements. Stream order puts this kernel
            // after the previous copy out of the same buffers.
            unsafe { launch.launch(cfg) }.map_err(cuda_err("launching morris_expand3w"))?;
            // The pinned buffers of this slot still hold chunk j - 2: hand it
            // over before the next copy overwrites it.
            drain(slot, &mut pending, &host_counts, &host_sums, &mut sink)?;
            // Whole buffers: cudarc copies the destination's length.
            stream
                .memcpy_dtoh(&dev_counts[slot], &mut host_counts[slot])
                .map_err(cuda_err("copying back"))?;
            stream
                .memcpy_dtoh(&dev_sums[slot], &mut host_sums[slot])
                .map_err(cuda_err("copying back"))?;
            pending[slot] = Some((Rank(first), len as usize));
        }
        let next = (chunks % 2) as usize;
        drain(next, &mut pending, &host_counts, &host_sums, &mut sink)?;
        drain(1 - next, &mut pending, &host_counts, &host_sums, &mut sink)?;
        Ok(Timed {
            value: setup,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// Solves Morris partition `spec` on the device by candidate-driven
    /// passes (kernels `retro_first_scan`, `retro_candidates`,
    /// `retro_compact`, `retro_pass_candidates`; twin [`CpuTwin::solve`]):
    /// the partition's values, its dependencies, the event list, the
    /// candidate bitmap and lists stay on the device for the whole solve
    /// (lists as large as the device's room allows: [`ListUse`]);
    /// `deps[i]` holds [`MorrisSolveSpec::dependencies`]`[i]`.
    pub fn morris_solve(
        &self,
        spec: MorrisSolveSpec,
        deps: &[&[u8]],
    ) -> Result<SolveStats<Vec<u8>>> {
        self.morris_solve_team(spec, deps, &Solo::default(), 64)
    }

    /// [`Self::morris_solve`] by one member of `team`, which scans and
    /// decides the slice `team.slice(size, align)` (`align` a multiple of
    /// 64: slices hold whole words of the candidate bitmap) and returns the
    /// whole partition's values, the bytes of [`Self::morris_solve`]. What
    /// crosses between members (through host memory) is described in
    /// [`super::kernels`]; a team of one exchanges nothing.
    pub fn morris_solve_team(
        &self,
        spec: MorrisSolveSpec,
        deps: &[&[u8]],
        team: &dyn Team,
        align: u64,
    ) -> Result<SolveStats<Vec<u8>>> {
        self.solve_partition(spec, deps, team, align, None)
    }

    /// [`Self::morris_solve`] with its candidate and frontier lists held to
    /// `list_cap` entries (rounded down to whole bitmap words, at least 32)
    /// however much the device has free: the device check's
    /// way to run the parts and the host-held frontiers of a partition
    /// larger than a card's room on a partition it can compare.
    pub fn morris_solve_bounded(
        &self,
        spec: MorrisSolveSpec,
        deps: &[&[u8]],
        list_cap: u64,
    ) -> Result<SolveStats<Vec<u8>>> {
        self.solve_partition(spec, deps, &Solo::default(), 64, Some(list_cap))
    }

    fn solve_partition(
        &self,
        spec: MorrisSolveSpec,
        deps: &[&[u8]],
        team: &dyn Team,
        align: u64,
        list_limit: Option<u64>,
    ) -> Result<SolveStats<Vec<u8>>> {
        assert!(align % 64 == 0 && align > 0, "slices must hold whole words");
        CpuTwin::new(spec, deps.to_vec())?; // checks the dependencies' sizes
        let t0 = std::time::Instant::now();
        let size = spec.size();
        let split = team.size() > 1;
        // Members in one process copy from each other's GPUs directly
        // (module documentation of super::kernels); otherwise through
        // collectives.
        let peer = split && team.shares_memory();
        let others: Vec<usize> = (0..team.size()).filter(|&j| j != team.rank()).collect();
        let slices: Vec<Range<u64>> = (0..team.size())
            .map(|j| slice_of(size, align, j, team.size()))
            .collect();
        let own = slices[team.rank()].clone();
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        let dev_deps: Vec<Arc<CudaSlice<u8>>> = deps
            .iter()
            .zip(spec.dependencies())
            .map(
                |(d, name)| match self.resident_copy(&name, spec.symmetry, d) {
                    Some(v) => Ok(v),
                    None => self.device.upload(d).map(Arc::new),
                },
            )
            .collect::<Result<_>>()?;
        // What this solve allocates with whole lists (and the peer copies'
        // room): kept partitions give way to it; a solve that still lacks
        // the room holds its lists to what is left.
        let words = size.div_ceil(32);
        self.make_room(size * (1 + 8 + 3 * 8) + words * 4 * (1 + others.len() as u64))?;
        let uploaded = t0.elapsed().as_secs_f64();
        let dep0 = &*dev_deps[0];
        let dep1 = dev_deps.get(1).map_or(dep0, |d| &**d);
        let mut values = s
            .alloc_zeros::<u8>(size as usize)
            .map_err(e("allocating the partition's values"))?;
        let mut stats = s.alloc_zeros::<u64>(4 + 256).map_err(e("allocating"))?;
        let part = MorrisPartition::new(spec.k1, spec.k2)?;
        let smem = retro_smem(part);
        let (k1, k2) = (spec.k1, spec.k2);
        let tabs = self.retro_tabs(&spec)?;
        let head = RetroHead {
            k1,
            k2,
            symmetry: u32::from(spec.symmetry),
            tabs: [&*tabs[0], &*tabs[1], &*tabs[2], &*tabs[3]],
        };
        let (lo, hi) = (own.start, own.end);
        // Events: at most one per index of the slice; the kernel counts past
        // the capacity and the scan is rerun if needed.
        let mut cap = (hi - lo).max(1);
        let (mut events, st) = loop {
            let mut events = s
                .alloc_zeros::<u64>(cap as usize)
                .map_err(e("allocating the event list"))?;
            s.memset_zeros(&mut stats).map_err(e("clearing"))?;
            let cfg = self
                .device
                .grid(&self.retro_first, BLOCK, (hi - lo).max(1), smem)?;
            let mut launch = s.launch_builder(&self.retro_first);
            head.push(&mut launch);
            launch
                .arg(&lo)
                .arg(&hi)
                .arg(dep0)
                .arg(dep1)
                .arg(&mut values)
                .arg(&mut events)
                .arg(&cap)
                .arg(&mut stats);
            // SAFETY: arguments match retro_first_scan in morris.cu; values holds
            // `size` bytes and lo <= hi <= size, events `cap` entries (the
            // kernel writes below cap only), stats 260, the dependencies
            // their partitions' sizes (checked above), and every rank the
            // kernel reads in them is a rank of that partition; with
            // symmetry, tab0..tab3 are the device blobs of the four halves
            // the kernel's RHalf names.
            unsafe { launch.launch(cfg) }.map_err(e("launching retro_first_scan"))?;
            let st = s.clone_dtoh(&stats).map_err(e("copying back"))?;
            if st[3] <= cap {
                break (events, st);
            }
            cap = st[3];
        };
        let (local_pending, n_events) = (st[0], st[3]);
        let scanned = t0.elapsed().as_secs_f64();
        // When the first scan's exchange reached each step (trace).
        let (mut gathered, mut copied) = (0.0, 0.0);
        let (mut first_pending, mut max_seen, mut fail) = (st[0], st[1] as u32, st[2] as u32);
        if split {
            // Every member must take the same decisions: the loop's bound
            // and the failure are the team's, not the slice's.
            fail = team
                .all_gather(&fail.to_le_bytes())?
                .iter()
                .fold(0, |acc, b| {
                    acc | u32::from_le_bytes([b[0], b[1], b[2], b[3]])
                });
        }
        retro::check_fail(&spec, fail)?;
        // Pending positions by member: a bound on what the others mark in
        // each slice (only pending positions with a quiet successor are
        // ever marked).
        let mut pendings = vec![local_pending];
        if split {
            max_seen = team.all_max(u64::from(max_seen))? as u32;
            pendings = decode_u64s(&team.all_gather(&local_pending.to_le_bytes())?.concat())?;
            first_pending = pendings.iter().sum();
        }
        let agreed = t0.elapsed().as_secs_f64();
        if peer {
            // Every member's first scan is finished (each read its counts
            // back before the collectives above): take the others' slices.
            let t = Instant::now();
            let of = self.gather_peers(team, &[PeerBuffer::of(&self.device, &values)], &spec)?;
            gathered = t0.elapsed().as_secs_f64();
            let mut moved = 0u64;
            for &j in &others {
                let r = &slices[j];
                // SAFETY: member j's values hold the whole partition and stay
                // unwritten until every member passes the barrier below,
                // after this stream is synchronised.
                unsafe {
                    self.device.copy_from_peer(
                        s,
                        &mut values,
                        r.start as usize,
                        &of[j][0],
                        r.start as usize,
                        (r.end - r.start) as usize,
                    )?
                };
                moved += r.end - r.start;
            }
            s.synchronize()
                .map_err(e("copying the other slices' values"))?;
            copied = t0.elapsed().as_secs_f64();
            team.barrier()?;
            team.stats().record(t, 0, moved);
        } else if split {
            let mine = if lo < hi {
                s.clone_dtoh(&values.slice(lo as usize..hi as usize))
                    .map_err(e("copying the slice's values back"))?
            } else {
                Vec::new()
            };
            // All-to-all rather than all-gather: this member's bytes move to
            // the last other member instead of being copied for each one
            // (with two members, no copy at all: the exchange of `size`
            // bytes is the team's one large cost).
            let mut parts = vec![Vec::new(); team.size()];
            if let Some((&last, rest)) = others.split_last() {
                for &j in rest {
                    parts[j] = mine.clone();
                }
                parts[last] = mine;
            }
            for (j, bytes) in team.all_to_all(parts)?.iter().enumerate() {
                if j == team.rank() {
                    continue;
                }
                let r = &slices[j];
                if bytes.len() as u64 != r.end - r.start {
                    return Err(retro::torn(&spec, j, "values"));
                }
                if !bytes.is_empty() {
                    s.memcpy_htod(
                        bytes.as_slice(),
                        &mut values.slice_mut(r.start as usize..r.end as usize),
                    )
                    .map_err(e("copying the other slices' values"))?;
                }
            }
        }
        // TBFORGE_TWIN_TRACE: where the time goes (as CpuTwin::solve prints).
        let trace = std::env::var_os("TBFORGE_TWIN_TRACE").is_some();
        let t_passes = std::time::Instant::now();
        if trace {
            eprintln!(
                "gpu {}: first scan {:.3} s (dependencies uploaded after {uploaded:.3} s, scanned after {scanned:.3} s, \
                 agreed after {agreed:.3} s, peers' buffers after {gathered:.3} s, slices copied after {copied:.3} s), \
                 {n_events} events, {local_pending} pending (of {first_pending})",
                spec.name(),
                t0.elapsed().as_secs_f64()
            );
        }
        let mut total_cand = 0u64;
        // Seconds of each step of a pass (trace): candidates marked (and
        // sent), waiting for the others' marks, the pass itself (marks
        // joined, listed, checked), agreeing on the decided counts.
        let mut steps = [0f64; 5];
        let mut lap = {
            let mut last = Instant::now();
            move |steps: &mut [f64; 5], i: usize| {
                let now = Instant::now();
                steps[i] += (now - last).as_secs_f64();
                last = now;
            }
        };
        // Candidates and decided positions are distinct pending positions
        // of what this member owns in the passes: its slice, or (peer
        // copies) blocks dealt round-robin, bounded by the whole partition's.
        let l_cap = if peer { first_pending } else { local_pending }.max(1);
        let n = team.size() as u32;
        let (block_words, members, rank) = if peer {
            (GPU_TEAM_BLOCK_WORDS, n, team.rank() as u32)
        } else {
            (1u64, 1u32, 0u32)
        };
        // Alone, the candidate list and the two frontiers hold what the
        // device has room for, up to every pending position (a card
        // smaller than the whole solve, --gpu-mem-limit, or the check's
        // bound): a pass then lists and checks its candidates part by part
        // (a part of list_cap bits holds at most list_cap candidates), and
        // a frontier that outgrows its list waits in host memory. A pass
        // decides a few pending positions in a thousand, so the parts cost
        // a few launches, not passes. A team's lists stay whole.
        let list_cap = if split {
            l_cap
        } else {
            let fixed = words * 4 + LIST_SLACK;
            let whole = 3 * 8 * l_cap + fixed;
            if list_limit.is_none() && self.device.room()? >= whole {
                l_cap
            } else {
                // The event list was sized to the slice before the scan:
                // its unused tail goes to the lists.
                if n_events < events.len() as u64 {
                    let mut tight = s
                        .alloc_zeros::<u64>(n_events.max(1) as usize)
                        .map_err(e("allocating the event list"))?;
                    if n_events > 0 {
                        s.memcpy_dtod(&events.slice(..n_events as usize), &mut tight)
                            .map_err(e("copying the event list"))?;
                    }
                    events = tight;
                }
                let room = self.device.room()?.saturating_sub(fixed) / 24;
                let cap = room.min(list_limit.unwrap_or(u64::MAX));
                if cap >= l_cap {
                    l_cap
                } else {
                    // Whole bitmap words per part. Below the floor the
                    // parts would cost more launches than the passes'
                    // work; a check's bound goes lower on purpose.
                    let cap = cap / 32 * 32;
                    let floor = if list_limit.is_some() { 32 } else { LIST_FLOOR };
                    if cap < floor {
                        return Err(Error::Cuda(format!(
                            "partition {}: {:.3} GB of device memory are free after its values, events and dependencies, room for lists of {cap} entries where a solve needs {floor}; raise --gpu-mem-limit or use a card with more memory",
                            spec.name(),
                            self.device.room()? as f64 / 1e9,
                        )));
                    }
                    cap
                }
            }
        };
        let bounded = list_cap < l_cap;
        let mut list_use = ListUse {
            entries: if bounded { list_cap } else { 0 },
            ..ListUse::default()
        };
        let mut cand = s
            .alloc_zeros::<u64>(list_cap as usize)
            .map_err(e("allocating"))?;
        let mut frontier = [
            s.alloc_zeros::<u64>(list_cap as usize)
                .map_err(e("allocating"))?,
            s.alloc_zeros::<u64>(list_cap as usize)
                .map_err(e("allocating"))?,
        ];
        let mut counts = [
            s.alloc_zeros::<u64>(1).map_err(e("allocating"))?,
            s.alloc_zeros::<u64>(1).map_err(e("allocating"))?,
        ];
        let mut cand_count = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let mut marks = s
            .alloc_zeros::<u32>(words as usize)
            .map_err(e("allocating the candidate bitmap"))?;
        // The words whose candidates this member lists: its slice's, or
        // (peer copies) all, of which it owns blocks.
        let own_words = if peer {
            0..words as usize
        } else {
            word_range(&own, 32)
        };
        let (w_lo, w_hi) = (own_words.start as u64, own_words.end as u64);
        // Peer copies: room for every other member's whole bitmap, which
        // each copies here every pass, and every member's frontier lists.
        let their_marks = s
            .alloc_zeros::<u32>(if peer {
                (words as usize * others.len()).max(1)
            } else {
                1
            })
            .map_err(e("allocating"))?;
        let peers = if peer {
            let mine = [&frontier[0], &frontier[1]].map(|f| PeerBuffer::of(&self.device, f));
            self.gather_peers(
                team,
                &[PeerBuffer::of(&self.device, &their_marks), mine[0], mine[1]],
                &spec,
            )?
        } else {
            Vec::new()
        };
        let cfg_merge = self
            .device
            .grid(&self.retro_merge, BLOCK, words.max(1), 0)?;
        // The ranks this member marks in another's slice, listed part by
        // part: at most OTHERS_CAP at a time (bounded by that slice's
        // pending count, or by the bits of a part).
        const OTHERS_CAP: u64 = 1 << 27;
        let x_cap = if split {
            (0..team.size())
                .filter(|&j| j != team.rank())
                .map(|j| pendings[j])
                .max()
                .unwrap_or(0)
                .clamp(1, OTHERS_CAP)
        } else {
            1
        };
        let mut x_list = s
            .alloc_zeros::<u64>(x_cap as usize)
            .map_err(e("allocating"))?;
        let mut x_count = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        // What the others marked in this slice (as capture-event keys),
        // what they decided, and a count of 0 for a launch without frontier.
        let mut received = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let mut theirs = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let zero = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let cfg_cand =
            self.device
                .grid(&self.retro_candidates, BLOCK, list_cap + n_events, smem)?;
        // The bitmap words listed at once: all this member's, or (bounded)
        // list_cap bits.
        let part_words = if bounded { list_cap / 32 } else { w_hi - w_lo }.max(1);
        let cfg_compact = self
            .device
            .grid(&self.retro_compact, BLOCK, part_words, 0)?;
        let cfg_pass = self.device.grid(&self.retro_pass, BLOCK, list_cap, smem)?;
        // A frontier that outgrew its list, marked from host memory in the
        // next pass.
        let mut host_frontier: Option<Vec<u64>> = None;
        // The others' positions decided in the last pass, written by the
        // next retro_candidates (byte d + 1 in pass d).
        let mut n_set = 0u64;
        let mut d = 1u32;
        loop {
            if d > crate::Value::MAX_DISTANCE {
                return Err(Error::Cuda(format!(
                    "partition {}: distances beyond {}",
                    spec.name(),
                    crate::Value::MAX_DISTANCE
                )));
            }
            let (a, b) = frontier.split_at_mut(1);
            let (fr_in, fr_out) = if d % 2 == 1 {
                (&a[0], &mut b[0])
            } else {
                (&b[0], &mut a[0])
            };
            let (ca, cb) = counts.split_at_mut(1);
            let (n_in, n_out) = if d % 2 == 1 {
                (&mut ca[0], &mut cb[0])
            } else {
                (&mut cb[0], &mut ca[0])
            };
            if d == 1 {
                s.memset_zeros(n_in).map_err(e("clearing"))?;
            }
            let ne: u64 = if st[4 + (d as usize - 1).min(255)] > 0 {
                n_events
            } else {
                0
            };
            let set_byte = (d + 1) as u8;
            if let Some(list) = host_frontier.take() {
                // The frontier waited in host memory: marked part by part
                // through the candidate list (unused until this pass lists
                // its candidates), the events with the first part.
                let parts: Vec<&[u64]> = list.chunks(list_cap as usize).collect();
                let counts: Vec<[u64; 1]> = parts.iter().map(|p| [p.len() as u64]).collect();
                for (i, part) in parts.iter().enumerate() {
                    s.memcpy_htod(*part, &mut cand)
                        .map_err(e("copying the frontier"))?;
                    s.memcpy_htod(&counts[i], &mut cand_count)
                        .map_err(e("copying the frontier"))?;
                    let ne_part = if i == 0 { ne } else { 0 };
                    let mut launch = s.launch_builder(&self.retro_candidates);
                    head.push(&mut launch);
                    launch
                        .arg(&d)
                        .arg(&mut values)
                        .arg(&cand)
                        .arg(&cand_count)
                        .arg(&events)
                        .arg(&ne_part)
                        .arg(&mut marks)
                        .arg(&theirs)
                        .arg(&n_set)
                        .arg(&set_byte);
                    // SAFETY: arguments match retro_candidates; cand holds
                    // the part's count (at most list_cap) of ranks the last
                    // pass decided in the partition, events n_events keys
                    // of its ranks, marks one bit per index, values one
                    // byte; alone, n_set is 0.
                    unsafe { launch.launch(cfg_cand) }.map_err(e("launching retro_candidates"))?;
                }
                // The copies' host sources are read before they are dropped.
                s.synchronize().map_err(e("marking candidates"))?;
                list_use.host_frontier += list.len() as u64;
            } else {
                let mut launch = s.launch_builder(&self.retro_candidates);
                head.push(&mut launch);
                launch
                    .arg(&d)
                    .arg(&mut values)
                    .arg(fr_in)
                    .arg(&*n_in)
                    .arg(&events)
                    .arg(&ne)
                    .arg(&mut marks)
                    .arg(&theirs)
                    .arg(&n_set)
                    .arg(&set_byte);
                // SAFETY: arguments match retro_candidates; fr_in holds *n_in
                // decided ranks of the partition (at most list_cap), events
                // n_events keys of its ranks, marks one bit per index, values
                // one byte; theirs holds n_set ranks of the partition: through
                // host memory each checked to lie in its sender's slice when
                // it came; copied from another GPU, listed there by the same
                // retro_pass_candidates from its candidates, ranks below
                // `size`.
                unsafe { launch.launch(cfg_cand) }.map_err(e("launching retro_candidates"))?;
            }
            if trace {
                // The candidates apart from what follows (costs a wait).
                s.synchronize().map_err(e("marking candidates"))?;
                lap(&mut steps, 4);
            }
            if peer {
                let t = Instant::now();
                // This member's whole bitmap goes to every other member,
                // into the place kept for it there.
                for &j in &others {
                    let place = if team.rank() < j {
                        team.rank()
                    } else {
                        team.rank() - 1
                    };
                    // SAFETY: member j's buffer holds a bitmap per other
                    // member; j reads this one in its pass after the barrier
                    // below and is done with it (its stream synchronised)
                    // before it joins this pass's decided counts, which this
                    // member waits for before it copies here again.
                    unsafe {
                        self.device.copy_to_peer(
                            s,
                            &peers[j][0],
                            place * words as usize,
                            &marks,
                            0,
                            words as usize,
                        )?
                    };
                }
                s.synchronize().map_err(e("sending the marks"))?;
                lap(&mut steps, 0);
                // Every member's marks of this pass have arrived.
                team.barrier()?;
                lap(&mut steps, 1);
                let n_theirs = others.len() as u32;
                let mut launch = s.launch_builder(&self.retro_merge);
                launch
                    .arg(&values)
                    .arg(&mut marks)
                    .arg(&their_marks)
                    .arg(&n_theirs)
                    .arg(&words)
                    .arg(&block_words)
                    .arg(&members)
                    .arg(&rank);
                // SAFETY: arguments match retro_merge_marks; their_marks
                // holds n_theirs bitmaps of `words` words, marks `words`,
                // values a byte per index (32 per word).
                unsafe { launch.launch(cfg_merge) }.map_err(e("launching retro_merge_marks"))?;
                team.stats().record(t, words * 4 * others.len() as u64, 0);
            } else if split {
                // The ranks this member marked in the others' slices go to
                // their owners (8 bytes each: passes mark few, where the
                // slice's bitmap words would cost far more than the pass).
                let mut parts = vec![Vec::new(); team.size()];
                for (j, r) in slices.iter().enumerate() {
                    let w = word_range(r, 32);
                    if j == team.rank() || w.is_empty() {
                        continue;
                    }
                    let step = if pendings[j] <= x_cap {
                        w.len() as u64
                    } else {
                        x_cap / 32
                    };
                    let mut ranks = Vec::new();
                    let mut a = w.start as u64;
                    while a < w.end as u64 {
                        let b = (a + step).min(w.end as u64);
                        ranks.extend(self.list_marks(
                            &mut marks,
                            a..b,
                            &mut x_list,
                            &mut x_count,
                        )?);
                        a = b;
                    }
                    parts[j] = encode_u64s(&ranks);
                }
                // What the others marked here: claimed as capture events
                // due now, so that this member's exact copy drops what is
                // decided.
                let mut keys = Vec::new();
                for (j, got) in team.all_to_all(parts)?.iter().enumerate() {
                    let ranks = decode_u64s(got)?;
                    if ranks.iter().any(|r| !own.contains(r)) {
                        return Err(retro::torn(&spec, j, "candidate marks"));
                    }
                    let due = (u64::from(d - 1) << retro::EVENT_SHIFT) | retro::EVENT_CAPTURE;
                    keys.extend(ranks.into_iter().map(|r| due | r));
                }
                if !keys.is_empty() {
                    if received.len() < keys.len() {
                        received = s
                            .alloc_zeros::<u64>(keys.len().next_power_of_two())
                            .map_err(e("allocating"))?;
                    }
                    s.memcpy_htod(keys.as_slice(), &mut received)
                        .map_err(e("copying the others' marks"))?;
                    let (n, no_set) = (keys.len() as u64, 0u64);
                    let cfg = self.device.grid(&self.retro_candidates, BLOCK, n, smem)?;
                    let mut launch = s.launch_builder(&self.retro_candidates);
                    head.push(&mut launch);
                    launch
                        .arg(&d)
                        .arg(&mut values)
                        .arg(&zero)
                        .arg(&zero)
                        .arg(&received)
                        .arg(&n)
                        .arg(&mut marks)
                        .arg(&theirs)
                        .arg(&no_set)
                        .arg(&set_byte);
                    // SAFETY: arguments match retro_candidates; no frontier
                    // (its count, `zero`, holds 0: the frontier pointer is
                    // never read), received holds n event keys of ranks of
                    // this member's slice (checked above), marks one bit
                    // per index, values one byte; nothing to set.
                    unsafe { launch.launch(cfg) }.map_err(e("launching retro_candidates"))?;
                }
            }
            s.memset_zeros(n_out).map_err(e("clearing"))?;
            // The decided positions on the device (in fr_out, counted in
            // n_out) and, bounded, those that went to host memory before.
            let (mut n_cand, mut held) = (0u64, 0u64);
            let mut spilled: Vec<u64> = Vec::new();
            let mut a = w_lo;
            loop {
                let b = (a + part_words).min(w_hi);
                s.memset_zeros(&mut cand_count).map_err(e("clearing"))?;
                let mut launch = s.launch_builder(&self.retro_compact);
                launch
                    .arg(&mut marks)
                    .arg(&a)
                    .arg(&b)
                    .arg(&mut cand)
                    .arg(&list_cap)
                    .arg(&mut cand_count)
                    .arg(&block_words)
                    .arg(&members)
                    .arg(&rank);
                // SAFETY: arguments match retro_compact; marks holds `words`
                // >= w_hi >= b u32 words, cand list_cap entries (written
                // below list_cap only).
                unsafe { launch.launch(cfg_compact) }.map_err(e("launching retro_compact"))?;
                let mut skip = false;
                if bounded {
                    list_use.parts += 1;
                    // At most list_cap candidates in list_cap bits; what they
                    // decide must fit beside what fr_out holds.
                    let part = s.clone_dtoh(&cand_count).map_err(e("copying back"))?[0];
                    skip = part == 0;
                    if !skip && held + part > list_cap {
                        spilled.extend(
                            s.clone_dtoh(&fr_out.slice(..held as usize))
                                .map_err(e("copying decided positions back"))?,
                        );
                        s.memset_zeros(n_out).map_err(e("clearing"))?;
                        held = 0;
                    }
                }
                if !skip {
                    let mut launch = s.launch_builder(&self.retro_pass);
                    head.push(&mut launch);
                    launch
                        .arg(&d)
                        .arg(dep0)
                        .arg(dep1)
                        .arg(&mut values)
                        .arg(&cand)
                        .arg(&cand_count)
                        .arg(&mut *fr_out)
                        .arg(&list_cap)
                        .arg(&mut *n_out);
                    // SAFETY: arguments match retro_pass_candidates; cand
                    // holds min(cand_count, list_cap) ranks of the
                    // partition (the count is checked below before its
                    // results are used), fr_out has room for list_cap
                    // (written below list_cap only).
                    unsafe { launch.launch(cfg_pass) }
                        .map_err(e("launching retro_pass_candidates"))?;
                    held = s.clone_dtoh(&*n_out).map_err(e("copying back"))?[0];
                    let part = s.clone_dtoh(&cand_count).map_err(e("copying back"))?[0];
                    if part > list_cap || held > list_cap {
                        return Err(Error::Cuda(format!(
                            "partition {}: pass {d} found {part} candidates or decided {held} in words {a}..{b}, more than the {list_cap} a list holds; report this as a bug",
                            spec.name()
                        )));
                    }
                    n_cand += part;
                }
                a = b;
                if a >= w_hi {
                    break;
                }
            }
            let mut decided = spilled.len() as u64 + held;
            if !spilled.is_empty() {
                spilled.extend(
                    s.clone_dtoh(&fr_out.slice(..held as usize))
                        .map_err(e("copying decided positions back"))?,
                );
                host_frontier = Some(spilled);
            }
            lap(&mut steps, 2);
            total_cand += n_cand;
            if peer {
                // Every member's pass is finished (each read its count back):
                // take the positions the others decided.
                let t = Instant::now();
                let counts = decode_u64s(&team.all_gather(&decided.to_le_bytes())?.concat())?;
                let listed = if d % 2 == 1 { 2 } else { 1 };
                let total_theirs: u64 = others.iter().map(|&j| counts[j]).sum();
                if (theirs.len() as u64) < total_theirs {
                    theirs = s
                        .alloc_zeros::<u64>((total_theirs as usize).next_power_of_two())
                        .map_err(e("allocating"))?;
                }
                let mut at = 0usize;
                for &j in &others {
                    let n = counts[j] as usize;
                    if n as u64 > first_pending || (n * 8) as u64 > peers[j][listed].bytes() {
                        return Err(retro::torn(&spec, j, "decided positions"));
                    }
                    // SAFETY: member j's list of this pass holds n ranks of
                    // its slice; it is written again two passes on, after
                    // the next pass's barriers, which this member reaches
                    // only once this stream is synchronised.
                    unsafe {
                        self.device
                            .copy_from_peer(s, &mut theirs, at, &peers[j][listed], 0, n)?
                    };
                    at += n;
                }
                n_set = at as u64;
                decided = counts.iter().sum();
                if trace {
                    // The lists' copies counted here (costs a wait).
                    s.synchronize().map_err(e("taking decided lists"))?;
                }
                lap(&mut steps, 3);
                team.stats().record(t, 0, n_set * 8);
            } else if split {
                // Every position a pass decides is at distance d: the
                // others learn the ranks, not the bytes.
                let mine = if decided > 0 {
                    s.clone_dtoh(&fr_out.slice(..decided as usize))
                        .map_err(e("copying decided positions back"))?
                } else {
                    Vec::new()
                };
                let mut lists = Vec::new();
                decided = 0;
                for (j, got) in team.all_gather(&encode_u64s(&mine))?.iter().enumerate() {
                    let list = decode_u64s(got)?;
                    decided += list.len() as u64;
                    if j == team.rank() {
                        continue;
                    }
                    if list.iter().any(|r| !slices[j].contains(r)) {
                        return Err(retro::torn(&spec, j, "decided positions"));
                    }
                    lists.extend(list);
                }
                if theirs.len() < lists.len() {
                    theirs = s
                        .alloc_zeros::<u64>(lists.len().next_power_of_two())
                        .map_err(e("allocating"))?;
                }
                if !lists.is_empty() {
                    s.memcpy_htod(lists.as_slice(), &mut theirs)
                        .map_err(e("copying the others' decided positions"))?;
                }
                n_set = lists.len() as u64;
            }
            if decided == 0 && d > max_seen {
                break;
            }
            d += 1;
        }
        if trace {
            eprintln!(
                "gpu {} member {}: {d} passes {:.3} s, {total_cand} candidates; steps (s): \
                 candidates {:.3}, sending marks {:.3}, wait {:.3}, pass {:.3}, decided counts and lists {:.3}{}",
                spec.name(),
                team.rank(),
                t_passes.elapsed().as_secs_f64(),
                steps[4],
                steps[0],
                steps[1],
                steps[2],
                steps[3],
                if self.indirect_peers.load(Ordering::Relaxed) {
                    "; copies from the other GPUs go through host memory (no peer access)"
                } else {
                    ""
                }
            );
            if bounded {
                eprintln!(
                    "gpu {}: lists of {list_cap} entries (of {l_cap} pending): {} parts, {} frontier entries through host memory",
                    spec.name(),
                    list_use.parts,
                    list_use.host_frontier
                );
            }
        }
        let t_down = Instant::now();
        let value = self.device.download(&values)?;
        drop(dev_deps);
        self.keep_resident(spec, values, &value);
        if trace {
            eprintln!(
                "gpu {} member {}: values downloaded in {:.3} s",
                spec.name(),
                team.rank(),
                t_down.elapsed().as_secs_f64()
            );
        }
        Ok(SolveStats {
            value,
            passes: d,
            first_pending,
            max_seen,
            lists: list_use,
        })
    }

    /// Kernel `retro_merge_marks` on given words (the device check):
    /// `marks` with `theirs` (whole bitmaps of the others) joined into the
    /// words member `rank` of `members` owns, the rest cleared.
    pub fn merge_marks_check(
        &self,
        values: &[u8],
        marks: &[u32],
        theirs: &[u32],
        block_words: u64,
        members: u32,
        rank: u32,
    ) -> Result<Vec<u32>> {
        let words = marks.len() as u64;
        assert!(theirs.len() as u64 % words.max(1) == 0 && marks.len() * 32 <= values.len());
        let n_theirs = (theirs.len() as u64 / words.max(1)) as u32;
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        let dev_values = s.clone_htod(values).map_err(e("copying values"))?;
        let mut dev_marks = s.clone_htod(marks).map_err(e("copying marks"))?;
        let dev_theirs = s.clone_htod(theirs).map_err(e("copying marks"))?;
        let cfg = self
            .device
            .grid(&self.retro_merge, BLOCK, words.max(1), 0)?;
        let mut launch = s.launch_builder(&self.retro_merge);
        launch
            .arg(&dev_values)
            .arg(&mut dev_marks)
            .arg(&dev_theirs)
            .arg(&n_theirs)
            .arg(&words)
            .arg(&block_words)
            .arg(&members)
            .arg(&rank);
        // SAFETY: arguments match retro_merge_marks; theirs holds n_theirs
        // bitmaps of `words` words (asserted), marks `words`, values 32
        // bytes a word of marks.
        unsafe { launch.launch(cfg) }.map_err(e("launching retro_merge_marks"))?;
        s.clone_dtoh(&dev_marks).map_err(e("copying back"))
    }

    /// The device copy of dependency `name` whose host bytes are `host`, if
    /// this device solved it and still holds it.
    fn resident_copy(&self, name: &str, symmetry: bool, host: &[u8]) -> Option<Arc<CudaSlice<u8>>> {
        self.resident.get(&resident_key(name, symmetry), host)
    }

    /// Drops kept partitions, oldest first, until `bytes` are free on the
    /// device (or none is kept).
    fn make_room(&self, bytes: u64) -> Result<()> {
        self.resident.make_room(&self.device, bytes)
    }

    /// Keeps partition `spec`'s values on the device beside their host copy
    /// `host`, dropping the oldest beyond the budget.
    fn keep_resident(&self, spec: MorrisSolveSpec, values: CudaSlice<u8>, host: &[u8]) {
        self.resident
            .keep(resident_key(&spec.name(), spec.symmetry), values, host);
    }

    /// Partition `spec`, solved whole by member `owner` of `team` (threads
    /// of one process), kept on this device too: a collective in which the
    /// owner names its device copy and every other member copies it from
    /// the owner's GPU (NVLink: about 7 ms a gigabyte, where an upload from
    /// host memory takes ten times that), beside `host`, its own host copy
    /// of the values, which later solves name as their dependency. An owner
    /// that no longer holds the copy names none; nothing is copied then.
    pub fn adopt_from_peer(
        &self,
        spec: MorrisSolveSpec,
        owner: usize,
        host: &[u8],
        team: &dyn Team,
    ) -> Result<()> {
        let name = spec.name();
        let t0 = Instant::now();
        let held = (team.rank() == owner)
            .then(|| self.resident_copy(&name, spec.symmetry, host))
            .flatten();
        let named = held
            .as_ref()
            .map(|v| PeerBuffer::of(&self.device, &**v).to_bytes().to_vec())
            .unwrap_or_default();
        let named = team.broadcast(owner, &named)?;
        if named.is_empty() {
            return Ok(());
        }
        let theirs = PeerBuffer::from_bytes(&named)
            .ok_or_else(|| retro::torn(&spec, owner, "device buffers"))?;
        if team.rank() != owner {
            if theirs.bytes() != host.len() as u64 {
                return Err(retro::torn(&spec, owner, "device buffers"));
            }
            if !self.device.enable_peer_access(&theirs)? {
                self.indirect_peers.store(true, Ordering::Relaxed);
            }
            let named_at = t0.elapsed().as_secs_f64();
            self.make_room(host.len() as u64)?;
            let room_at = t0.elapsed().as_secs_f64();
            let s = &self.stream;
            // SAFETY: written whole by the copy below before anything reads it.
            let mut mine = unsafe { s.alloc::<u8>(host.len().max(1)) }
                .map_err(cuda_err("allocating a partition's values"))?;
            // SAFETY: the owner's copy holds the partition's values (its
            // length checked above) and stays alive and unwritten until every
            // member passes the barrier below, after this stream is
            // synchronised.
            unsafe {
                self.device
                    .copy_from_peer(s, &mut mine, 0, &theirs, 0, host.len())?
            };
            let alloc_at = t0.elapsed().as_secs_f64();
            s.synchronize()
                .map_err(cuda_err("copying a partition's values from another GPU"))?;
            if std::env::var_os("TBFORGE_TWIN_TRACE").is_some() {
                eprintln!(
                    "gpu {name} adopted by member {}: named after {named_at:.3} s, room after {room_at:.3} s, \
                     allocated and queued after {alloc_at:.3} s, copied after {:.3} s",
                    team.rank(),
                    t0.elapsed().as_secs_f64()
                );
            }
            self.keep_resident(spec, mine, host);
        }
        // The owner keeps its copy alive (`held`) until every member has it.
        team.barrier()?;
        drop(held);
        Ok(())
    }

    /// Every member's `mine` (buffers of this partition's solve), by rank,
    /// with peer access enabled to each other member's device: a
    /// collective.
    fn gather_peers(
        &self,
        team: &dyn Team,
        mine: &[PeerBuffer],
        spec: &MorrisSolveSpec,
    ) -> Result<Vec<Vec<PeerBuffer>>> {
        let bytes: Vec<u8> = mine.iter().flat_map(|b| b.to_bytes()).collect();
        let mut all = Vec::with_capacity(team.size());
        for (j, got) in team.all_gather(&bytes)?.iter().enumerate() {
            let theirs: Option<Vec<PeerBuffer>> = (got.len() == bytes.len())
                .then(|| {
                    got.chunks(PeerBuffer::ENCODED)
                        .map(PeerBuffer::from_bytes)
                        .collect()
                })
                .flatten();
            let theirs = theirs.ok_or_else(|| retro::torn(spec, j, "device buffers"))?;
            if j != team.rank() && !self.device.enable_peer_access(&theirs[0])? {
                self.indirect_peers.store(true, Ordering::Relaxed);
            }
            all.push(theirs);
        }
        // Nobody copies before every member has opened its memory.
        team.barrier()?;
        Ok(all)
    }

    /// The set bits of `marks` words `words` as ranks, cleared (kernel
    /// `retro_compact` into `list`, whose length must be at least the bits
    /// of those words or the most that can be set there).
    fn list_marks(
        &self,
        marks: &mut CudaSlice<u32>,
        words: Range<u64>,
        list: &mut CudaSlice<u64>,
        count: &mut CudaSlice<u64>,
    ) -> Result<Vec<u64>> {
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        assert!(words.end as usize <= marks.len());
        s.memset_zeros(count).map_err(e("clearing"))?;
        let cap = list.len() as u64;
        let cfg = self.device.grid(
            &self.retro_compact,
            BLOCK,
            (words.end - words.start).max(1),
            0,
        )?;
        let mut launch = s.launch_builder(&self.retro_compact);
        launch
            .arg(&mut *marks)
            .arg(&words.start)
            .arg(&words.end)
            .arg(&mut *list)
            .arg(&cap)
            .arg(&mut *count)
            .arg(&1u64)
            .arg(&1u32)
            .arg(&0u32);
        // SAFETY: arguments match retro_compact (one member owning every
        // word of the range); marks holds at least
        // words.end u32 words (asserted above), list `cap` entries (written
        // below cap only).
        unsafe { launch.launch(cfg) }.map_err(e("launching retro_compact"))?;
        let n = s.clone_dtoh(&*count).map_err(e("copying back"))?[0];
        if n > cap {
            return Err(Error::Cuda(format!(
                "{n} candidate marks in words {words:?}, more than the {cap} that can be set there; report this as a bug"
            )));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        s.clone_dtoh(&list.slice(..n as usize))
            .map_err(e("copying candidate marks back"))
    }

    /// The class tables the `place_*` kernels of `spec` read (PCtx::tabs in
    /// morris.cu): S(a, b), then the quiet and the capture target's halves;
    /// none without symmetry (the kernels then rank boards by the multinomial).
    fn place_tabs(&self, spec: &PlaceSpec) -> Result<[Option<DeviceBlob>; 3]> {
        if !spec.symmetry {
            return Ok([None, None, None]);
        }
        let [q, c] = spec
            .targets()
            .map(|t| t.map(|t| self.class_tab(t.a, t.b)).transpose());
        Ok([Some(self.class_tab(spec.a, spec.b)?), q?, c?])
    }

    /// Launches `launch` with `cfg` between two timing events; the kernel's
    /// seconds.
    ///
    /// # Safety
    /// As [`LaunchArgs::launch`]: the arguments must match the kernel's
    /// signature and every pointer must be valid for what it reads and writes.
    unsafe fn launch_timed(
        &self,
        launch: &mut LaunchArgs<'_>,
        cfg: cudarc::driver::LaunchConfig,
        what: &'static str,
    ) -> Result<f64> {
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let e = |what: &'static str| cuda_err(what);
        let begin = self.ctx.new_event(timing).map_err(e("creating an event"))?;
        let end = self.ctx.new_event(timing).map_err(e("creating an event"))?;
        begin
            .record(&self.stream)
            .map_err(e("recording an event"))?;
        // SAFETY: the caller's contract.
        unsafe { launch.launch(cfg) }.map_err(e(what))?;
        end.record(&self.stream).map_err(e("recording an event"))?;
        end.synchronize().map_err(e("waiting for a kernel"))?;
        let ms = begin.elapsed_ms(&end).map_err(e("reading the timer"))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// The fail bits and first failing index a `place_*` kernel left, as an error.
    fn place_check(
        &self,
        spec: &PlaceSpec,
        fail: &CudaSlice<u32>,
        first: &CudaSlice<u64>,
    ) -> Result<()> {
        let e = |what: &'static str| cuda_err(what);
        let fail = self.stream.clone_dtoh(fail).map_err(e("copying back"))?[0];
        let first = self.stream.clone_dtoh(first).map_err(e("copying back"))?[0];
        place::check_fail(spec, fail, first)
    }

    /// Values of phase I partition `spec` where `reached` is set, 0 elsewhere
    /// (kernel `place_solve`; twin [`place::solve`]); `deps` holds the quiet
    /// and the capture target's values ([`PlaceSpec::targets`]; `None`: not
    /// given). A lost or unreached partition needs no successor: the CPU
    /// maps its bits (0 seconds). The seconds are the kernel's (device
    /// events), copies not included.
    pub fn place_solve(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        deps: [Option<&[u8]>; 2],
    ) -> Result<Timed<Vec<u8>>> {
        let reached = spec.reached_bits(reached)?;
        spec.check_deps(&deps)?;
        // A lost layer needs no successor, an unreached one nothing at all
        // (not even its dependencies uploaded).
        if spec.lost || reached.iter().all(|&w| w == 0) {
            return Ok(Timed {
                value: place::solve(spec, reached, deps)?,
                seconds: 0.0,
            });
        }
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        let dev_reached = s.clone_htod(reached).map_err(e("copying reached bits"))?;
        let [q, c] = deps.map(|d| d.map(|d| self.device.upload(d)).transpose());
        let (q, c) = (q?, c?);
        let tabs = self.place_tabs(spec)?;
        let mut values = s
            .alloc_zeros::<u8>(spec.size() as usize)
            .map_err(e("allocating the partition's values"))?;
        let mut fail = s.alloc_zeros::<u32>(1).map_err(e("allocating"))?;
        let mut first = s.clone_htod(&[u64::MAX]).map_err(e("allocating"))?;
        let head = PlaceHead::new(spec, reached, &dev_reached, tabs[0].as_deref());
        let [qoff, coff] = spec.targets().map(|t| t.map_or(0, |t| t.offset));
        let cfg = self
            .device
            .grid(&self.place_solve, BLOCK, head.threads(), 0)?;
        let mut launch = s.launch_builder(&self.place_solve);
        head.push(&mut launch);
        launch.arg(&qoff);
        head.push_opt(&mut launch, tabs[1].as_deref());
        head.push_opt(&mut launch, q.as_ref());
        launch.arg(&coff);
        head.push_opt(&mut launch, tabs[2].as_deref());
        head.push_opt(&mut launch, c.as_ref());
        launch.arg(&mut values).arg(&mut fail).arg(&mut first);
        // SAFETY: arguments match place_solve in morris.cu (split a power
        // of two up to 64, as place_split makes it). reached holds `words`
        // words, one bit per index of the partition and none past its size
        // (checked above), values one byte per index; each given
        // dependency holds its whole target partition (checked above), and
        // every index the kernel reads there is a rank of S(b, a + 1) or
        // S(b - 1, a + 1) plus the target's offset, inside it; with symmetry
        // the tables are the device blobs of S(a, b) and of those halves, a
        // null one only where the target is absent (never ranked into).
        let seconds = unsafe { self.launch_timed(&mut launch, cfg, "launching place_solve") }?;
        self.place_check(spec, &fail, &first)?;
        Ok(Timed {
            value: self.device.download(&values)?,
            seconds,
        })
    }

    /// Forward search of phase I partition `spec`: sets in `next` (the quiet
    /// and the capture target's bits; `None`: not given) the successors of
    /// every index whose bit is set in `reached` (kernel `place_expand`,
    /// into device copies of the targets' bits that are then OR-ed into
    /// `next`; twin [`place::expand`]). The seconds are the kernel's (device
    /// events), copies not included; 0 for a lost or unreached partition
    /// (no successors).
    pub fn place_expand(
        &self,
        spec: &PlaceSpec,
        reached: &[u64],
        next: [Option<&[AtomicU64]>; 2],
    ) -> Result<Timed<()>> {
        let reached = spec.reached_bits(reached)?;
        spec.check_next(&next)?;
        if spec.lost || reached.iter().all(|&w| w == 0) {
            return Ok(Timed {
                value: (),
                seconds: 0.0,
            });
        }
        let s = &self.stream;
        let e = |what: &'static str| cuda_err(what);
        let dev_reached = s.clone_htod(reached).map_err(e("copying reached bits"))?;
        let words = |k: usize| spec.targets()[k].map_or(0, |t| t.size.div_ceil(64) as usize);
        let mut bits: Vec<Option<CudaSlice<u64>>> = Vec::with_capacity(2);
        for (k, given) in next.iter().enumerate() {
            bits.push(match given {
                Some(_) => Some(
                    s.alloc_zeros::<u64>(words(k).max(1))
                        .map_err(e("allocating successor bits"))?,
                ),
                None => None,
            });
        }
        let tabs = self.place_tabs(spec)?;
        let mut fail = s.alloc_zeros::<u32>(1).map_err(e("allocating"))?;
        let mut first = s.clone_htod(&[u64::MAX]).map_err(e("allocating"))?;
        let head = PlaceHead::new(spec, reached, &dev_reached, tabs[0].as_deref());
        let [qoff, coff] = spec.targets().map(|t| t.map_or(0, |t| t.offset));
        let cfg = self
            .device
            .grid(&self.place_expand, BLOCK, head.threads(), 0)?;
        let (qbits, cbits) = bits.split_at_mut(1);
        let mut launch = s.launch_builder(&self.place_expand);
        head.push(&mut launch);
        launch.arg(&qoff);
        head.push_opt(&mut launch, tabs[1].as_deref());
        match qbits[0].as_mut() {
            Some(b) => launch.arg(b),
            None => launch.arg(&head.null),
        };
        launch.arg(&coff);
        head.push_opt(&mut launch, tabs[2].as_deref());
        match cbits[0].as_mut() {
            Some(b) => launch.arg(b),
            None => launch.arg(&head.null),
        };
        launch.arg(&mut fail).arg(&mut first);
        // SAFETY: arguments match place_expand in morris.cu (split a power
        // of two up to 64, as place_split makes it). reached holds `words`
        // words, one bit per index and none past the partition's size
        // (checked above); each given bit array holds one bit per index of
        // its whole target partition, and every index the kernel sets there
        // is a rank of S(b, a + 1) or S(b - 1, a + 1) plus the target's
        // offset, inside it; with symmetry the tables are the device blobs of
        // S(a, b) and of those halves, a null one only where the target is
        // absent (never ranked into).
        let seconds = unsafe { self.launch_timed(&mut launch, cfg, "launching place_expand") }?;
        self.place_check(spec, &fail, &first)?;
        for (k, dev) in bits.iter().enumerate() {
            let (Some(dev), Some(out)) = (dev, next[k]) else {
                continue;
            };
            let host = s
                .clone_dtoh(dev)
                .map_err(e("copying successor bits back"))?;
            out[..words(k)]
                .par_iter()
                .zip(&host[..words(k)])
                .for_each(|(o, &w)| {
                    if w != 0 {
                        o.fetch_or(w, Ordering::Relaxed);
                    }
                });
        }
        Ok(Timed { value: (), seconds })
    }
}

#[cfg(test)]
mod tests {
    use super::place_split;

    #[test]
    fn split_follows_density_in_powers_of_two() {
        assert_eq!(place_split(&[0; 100]), 1);
        assert_eq!(place_split(&[1; 100]), 1);
        // Every bit set: 64 rounds of 32 a chunk.
        assert_eq!(place_split(&[u64::MAX; 64]), 64);
        assert_eq!(place_split(&[u64::MAX; 3]), 8);
        // Three rounds a chunk on average: four items.
        assert_eq!(place_split(&[(1 << 3) - 1; 32]), 4);
    }
}
