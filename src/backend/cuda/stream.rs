//! The streamed path on a CUDA device: chunks of a partition pass through
//! pinned host buffers and device buffers, two of each (slots), on four
//! streams: copies in, kernels, small copies out (a chunk's request count,
//! a first scan's values), and the requests' copies out. While chunk `c` is
//! in its kernels, chunk `c + 1` is copied in and chunk `c - 1`'s requests
//! are copied out.
//!
//! A game supplies only its chunk-expansion kernel ([`ChunkLaunch`]); the
//! staging, the grouping of requests by bucket (`kernels/common.cuh`'s
//! `tb_bucket_*`), the timings and the contract checks are here, the same
//! for every game.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    result, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    LaunchArgs, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::{cuda_err, CudaDevice};
use crate::backend::stream::{
    ChunkDone, ChunkExpander, ChunkJob, ChunkTiming, Requests, StreamTargets, STREAM_PENDING,
};
use crate::{Error, Result};

/// Chunks in flight at once: one per slot.
const SLOTS: usize = 2;

/// A game's chunk-expansion kernel, launched by the generic [`Stager`].
pub trait ChunkLaunch: Send + Sync {
    /// The module compiled from the game's kernel file (common.cuh's
    /// `tb_bucket_*` kernels are in it too).
    fn module(&self) -> &Arc<CudaModule>;

    /// Launches the game's kernel over `args.n` indices on `stream`: the
    /// game's own arguments, then [`StreamArgs::push`].
    fn launch(&self, stream: &Arc<CudaStream>, args: &mut StreamArgs<'_>) -> Result<()>;

    /// About how many requests an expanded index emits on average, at most:
    /// sizes the request buffers (a chunk that emits more has its buffers
    /// grown and runs again).
    fn requests_per_index(&self) -> u32;

    /// The game's name, for errors.
    fn game(&self) -> String;

    /// Partition `p`'s name, for errors.
    fn partition_name(&self, p: crate::value::PartitionId) -> String;
}

/// The generic arguments of a chunk-expansion kernel (common.cuh lists
/// them, in this order).
pub struct StreamArgs<'s> {
    /// First index of the chunk.
    pub lo: u64,
    /// Indices in the chunk.
    pub n: u32,
    /// 1 for the first scan, 0 for a pass.
    pub first_scan: u32,
    /// The chunk's values.
    pub values: &'s mut CudaSlice<u8>,
    /// The chunk's flags, two bits per index, as u32 words.
    pub flags: &'s mut CudaSlice<u32>,
    /// The chunk's reached bits, if `has_reached`.
    pub reached: &'s CudaSlice<u64>,
    /// 1 when only reached indices are solved.
    pub has_reached: u32,
    /// Indices per bucket.
    pub lookup_chunk: u64,
    /// Bits of a key below the bucket number.
    pub low_bits: u32,
    /// (key, payload) pairs.
    pub out: &'s mut CudaSlice<u64>,
    /// Pairs `out` holds.
    pub cap: u32,
    /// Requests emitted (may pass `cap`).
    pub count: &'s mut CudaSlice<u32>,
    /// The lowest (code << 56 | rank) of a broken contract, or all ones.
    pub fail: &'s mut CudaSlice<u64>,
}

impl<'s> StreamArgs<'s> {
    /// Pushes the generic arguments after the game's own.
    pub fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>)
    where
        's: 'a,
    {
        launch
            .arg(&self.lo)
            .arg(&self.n)
            .arg(&self.first_scan)
            .arg(&mut *self.values)
            .arg(&mut *self.flags)
            .arg(self.reached)
            .arg(&self.has_reached)
            .arg(&self.lookup_chunk)
            .arg(&self.low_bits)
            .arg(&mut *self.out)
            .arg(&self.cap)
            .arg(&mut *self.count)
            .arg(&mut *self.fail);
    }
}

/// One slot's buffers and events.
struct Slot {
    /// values | flags | reached bits, as the reader left them.
    pin_in: PinnedHostSlice<u8>,
    /// values | flags as the first scan left them.
    pin_back: PinnedHostSlice<u8>,
    /// The request count and the failure word.
    pin_small: PinnedHostSlice<u64>,
    /// Where each bucket's requests end in `pin_out`.
    pin_ends: PinnedHostSlice<u32>,
    /// The requests, 8 bytes each (`Requests`).
    pin_out: PinnedHostSlice<u32>,
    values: CudaSlice<u8>,
    flags: CudaSlice<u32>,
    reached: CudaSlice<u64>,
    out: CudaSlice<u64>,
    grouped: CudaSlice<u32>,
    count: CudaSlice<u32>,
    fail: CudaSlice<u64>,
    hist: CudaSlice<u32>,
    /// Request pairs the buffers hold.
    cap: usize,
    /// h2d start, h2d end, kernels start, kernels end, d2h start, d2h
    /// end (counts, and a first scan's values), requests' d2h start and end.
    events: [CudaEvent; 8],
    /// Whether the requests' copy back (events 6 and 7) is enqueued.
    fetching: bool,
    job: Option<ChunkJob>,
    /// Whether the job in the slot is a pass answered on the device: its
    /// blocked bits come back (in `pin_back`) instead of its requests.
    answered: bool,
    regrown: u32,
    /// Seconds the host spent submitting the job now in the slot.
    staged_seconds: f64,
}

impl Slot {
    /// The job's request count and failure word, as the device left them
    /// once event 5 has passed (the count is the low half of the first word).
    fn count_and_failure(&self) -> Result<(usize, u64)> {
        let small = self
            .pin_small
            .as_slice()
            .map_err(cuda_err("pinned memory"))?;
        Ok(((small[0] & 0xffff_ffff) as usize, small[1]))
    }
}

/// A [`ChunkExpander`] on a CUDA device, for any game's [`ChunkLaunch`].
pub struct Stager {
    device: Arc<CudaDevice>,
    launch: Arc<dyn ChunkLaunch>,
    targets: StreamTargets,
    h2d: Arc<CudaStream>,
    compute: Arc<CudaStream>,
    d2h: Arc<CudaStream>,
    /// The requests' copies back, on a stream of their own: on `d2h` a
    /// chunk's copy queued behind the next chunk's count, and so behind
    /// its kernels (an H100 host's first scans waited for the device
    /// through a kernel and a copy a job: 1.04 s of a 2.65 s first scan,
    /// the build's largest).
    fetch: Arc<CudaStream>,
    count_fn: CudaFunction,
    scan_fn: CudaFunction,
    scatter_fn: CudaFunction,
    lookup_fn: CudaFunction,
    slots: Vec<Slot>,
    /// Slots in submission order, oldest first.
    queue: std::collections::VecDeque<usize>,
    next: usize,
    chunk: u64,
    /// The most expanding positions a chunk should hold: its requests'
    /// room divided by the game's requests per position.
    expanding: u64,
    /// The device memory it may take (`--gpu-mem-limit`'s share).
    device_bytes: u64,
    /// The partition's can-block bits on the device, once a pass answered
    /// on the device took room for them (kept for the partition's later
    /// such passes, loaded again by each).
    can_block: Option<CudaSlice<u8>>,
    /// Whether the passes' jobs are answered on the device now.
    answering: bool,
}

impl Stager {
    /// A stager of `targets.partition` within `device_bytes` of device memory.
    pub fn new(
        device: Arc<CudaDevice>,
        launch: Arc<dyn ChunkLaunch>,
        targets: StreamTargets,
        device_bytes: u64,
    ) -> Result<Stager> {
        // Narrow requests address an index within a lookup range in 32 bits.
        if targets.lookup_chunk > 1 << 32 {
            return Err(Error::NotAvailable(format!(
                "lookup ranges of {} indices pass the 2^32 a device's requests address; report this as a bug",
                targets.lookup_chunk
            )));
        }
        let (chunk, cap) = sizes(&targets, launch.as_ref(), device_bytes)?;
        let hint = u64::from(launch.requests_per_index().max(1));
        let ctx = device.context();
        let e = cuda_err;
        let h2d = ctx.new_stream().map_err(e("creating a copy stream"))?;
        let compute = ctx.new_stream().map_err(e("creating a kernel stream"))?;
        let d2h = ctx.new_stream().map_err(e("creating a copy stream"))?;
        let fetch = ctx.new_stream().map_err(e("creating a copy stream"))?;
        let module = launch.module();
        let count_fn = device.function(module, "tb_bucket_count")?;
        let scan_fn = device.function(module, "tb_bucket_scan")?;
        let scatter_fn = device.function(module, "tb_bucket_scatter")?;
        let lookup_fn = device.function(module, "tb_block_lookup")?;
        let mut stager = Stager {
            device,
            launch,
            h2d,
            compute,
            d2h,
            fetch,
            count_fn,
            scan_fn,
            scatter_fn,
            lookup_fn,
            slots: Vec::new(),
            queue: Default::default(),
            next: 0,
            chunk,
            expanding: cap / hint,
            targets,
            device_bytes,
            can_block: None,
            answering: false,
        };
        for _ in 0..SLOTS {
            let slot = stager.untracked(|s| s.new_slot(cap as usize))?;
            stager.slots.push(slot);
        }
        // The buffers were cleared on the kernel stream; the copy streams
        // use them next, and nothing else orders them (they are untracked).
        stager
            .compute
            .synchronize()
            .map_err(e("allocating the stager's buffers"))?;
        Ok(stager)
    }

    /// Runs `make` with cudarc's event tracking off, so that the buffers it
    /// allocates carry none: tracking records an event on a stream and
    /// makes the next stream wait for it for every buffer of every copy
    /// and launch, a few dozen driver calls a job (measured on an H200
    /// host, a build of 72,666 jobs: the host's staging took 8.1 s
    /// tracked and 6.3 s untracked). The stager orders its
    /// four streams itself (events 1, 3 and the waits in `collect`), and
    /// its drop waits for them before the buffers are freed.
    fn untracked<T>(&self, make: impl FnOnce(&Self) -> T) -> T {
        let ctx = self.device.context();
        if !ctx.is_event_tracking() {
            return make(self);
        }
        // SAFETY: only buffers made by `make` go untracked (the flag is
        // read when a buffer is allocated, and set back right after).
        // Their contract holds by the stager's own ordering: a buffer is
        // allocated on the kernel stream, which `new` waits for (or, for
        // request buffers grown in `collect`, which uses them next); within
        // a job the copy in, the kernels and the copies back are chained by
        // events 1 and 3; a slot is refilled only after `collect` waited for
        // its last copy back; and `Drop` waits for all four streams before
        // the buffers are freed.
        unsafe { ctx.disable_event_tracking() };
        let made = make(self);
        // SAFETY: as above; buffers allocated from here on are tracked again.
        unsafe { ctx.enable_event_tracking() };
        made
    }

    fn new_slot(&self, cap: usize) -> Result<Slot> {
        let ctx = self.device.context();
        let e = cuda_err;
        let n = self.chunk as usize;
        let pinned = |len: usize| {
            // SAFETY: flags 0 asks for page-locked memory that is not
            // write-combined (the host reads these buffers back); the
            // contents are written before any read.
            unsafe { ctx.alloc_pinned_with_flags::<u8>(len.max(1), 0) }
                .map_err(e("allocating pinned host memory"))
        };
        let timed = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(e("creating an event"))
        };
        let s = &self.compute;
        let (out, pin_out, grouped) = self.request_buffers(cap)?;
        Ok(Slot {
            pin_in: pinned(n + n / 4 + n / 8)?,
            pin_back: pinned(n + n / 4)?,
            // SAFETY: as above; written by the device before it is read.
            pin_small: unsafe { ctx.alloc_pinned_with_flags::<u64>(2, 0) }
                .map_err(e("allocating pinned host memory"))?,
            // SAFETY: as above; written by the device before it is read.
            pin_ends: unsafe {
                ctx.alloc_pinned_with_flags::<u32>(self.targets.buckets as usize + 1, 0)
            }
            .map_err(e("allocating pinned host memory"))?,
            pin_out,
            values: s.alloc_zeros(n).map_err(e("allocating chunk values"))?,
            flags: s
                .alloc_zeros(n / 16 + 1)
                .map_err(e("allocating chunk flags"))?,
            reached: s
                .alloc_zeros(n / 64 + 1)
                .map_err(e("allocating reached bits"))?,
            out,
            grouped,
            count: s.alloc_zeros(1).map_err(e("allocating a counter"))?,
            fail: s.alloc_zeros(1).map_err(e("allocating a counter"))?,
            hist: s
                .alloc_zeros(self.targets.buckets as usize + 1)
                .map_err(e("allocating bucket counters"))?,
            cap,
            events: [
                timed()?,
                timed()?,
                timed()?,
                timed()?,
                timed()?,
                timed()?,
                timed()?,
                timed()?,
            ],
            fetching: false,
            job: None,
            answered: false,
            regrown: 0,
            staged_seconds: 0.0,
        })
    }

    #[allow(clippy::type_complexity)]
    fn request_buffers(
        &self,
        cap: usize,
    ) -> Result<(CudaSlice<u64>, PinnedHostSlice<u32>, CudaSlice<u32>)> {
        let e = cuda_err;
        let s = &self.compute;
        let len = 2 * cap.max(1);
        Ok((
            s.alloc_zeros(len)
                .map_err(e("allocating request buffers"))?,
            // SAFETY: page-locked, not write-combined (read by the host);
            // only the part the device filled is read.
            unsafe { self.device.context().alloc_pinned_with_flags::<u32>(len, 0) }
                .map_err(e("allocating pinned host memory"))?,
            s.alloc_zeros(len)
                .map_err(e("allocating request buffers"))?,
        ))
    }

    /// Enqueues slot `i`'s copies in, kernels and small copies out.
    fn enqueue(&mut self, i: usize) -> Result<()> {
        let e = cuda_err;
        let targets = &self.targets;
        let slot = &mut self.slots[i];
        let job = slot.job.as_ref().expect("a job is in the slot");
        let n = job.indices();
        let flag_bytes = n.div_ceil(4);
        let chunk = self.chunk as usize;
        let (h2d, compute, d2h) = (&self.h2d, &self.compute, &self.d2h);
        slot.fetching = false;
        slot.answered = self.answering && !job.first_scan;
        let answered = slot.answered;
        let blocked_words = n.div_ceil(64);
        slot.events[0]
            .record(h2d)
            .map_err(e("recording an event"))?;
        {
            let (dv, _gv) = slot.values.device_ptr_mut(h2d);
            if job.flags_only() {
                // SAFETY: the device buffer holds `chunk >= n` bytes.
                unsafe { result::memset_d8_async(dv, STREAM_PENDING, n, h2d.cu_stream()) }
                    .map_err(e("setting a chunk's values"))?;
            } else {
                let host = slot.pin_in.as_slice().map_err(e("pinned memory"))?;
                // SAFETY: `host` is page-locked and outlives the copy (the
                // slot is not refilled before `collect` waited for event 1,
                // recorded behind it); the device buffer holds `chunk >= n`
                // bytes.
                unsafe { result::memcpy_htod_async(dv, &host[..n], h2d.cu_stream()) }
                    .map_err(e("copying a chunk's values to the device"))?;
            }
        }
        {
            let (df, _gf) = slot.flags.device_ptr_mut(h2d);
            if job.first_scan {
                // SAFETY: the flags buffer holds n / 16 + 1 u32 words, at
                // least `flag_bytes` bytes.
                unsafe { result::memset_d8_async(df, 0, flag_bytes, h2d.cu_stream()) }
                    .map_err(e("clearing a chunk's flags"))?;
            } else {
                let host = slot.pin_in.as_slice().map_err(e("pinned memory"))?;
                // SAFETY: as for the values; the flags sit after `chunk` value bytes.
                unsafe {
                    result::memcpy_htod_async(df, &host[chunk..chunk + flag_bytes], h2d.cu_stream())
                }
                .map_err(e("copying a chunk's flags to the device"))?;
            }
        }
        let has_reached = u32::from(targets.reached.is_some() && job.first_scan);
        if has_reached == 1 {
            let host = slot.pin_in.as_slice().map_err(e("pinned memory"))?;
            let words = n.div_ceil(64);
            let at = chunk + chunk / 4;
            let (dr, _gr) = slot.reached.device_ptr_mut(h2d);
            // SAFETY: as for the values; `words` u64 fit the reached buffer
            // (n / 64 + 1 words) and sit after values and flags in `host`.
            unsafe { result::memcpy_htod_async(dr, &host[at..at + words * 8], h2d.cu_stream()) }
                .map_err(e("copying a chunk's reached bits to the device"))?;
        }
        slot.events[1]
            .record(h2d)
            .map_err(e("recording an event"))?;

        compute
            .wait(&slot.events[1])
            .map_err(e("ordering streams"))?;
        slot.events[2]
            .record(compute)
            .map_err(e("recording an event"))?;
        compute
            .memset_zeros(&mut slot.count)
            .map_err(e("clearing a counter"))?;
        let (first_bucket, buckets) = asked_buckets(targets, job.first_scan);
        let hist_range = first_bucket as usize..(first_bucket + buckets) as usize + 1;
        compute
            .memset_zeros(&mut slot.hist.slice_mut(hist_range.clone()))
            .map_err(e("clearing bucket counters"))?;
        {
            let (df, _g) = slot.fail.device_ptr_mut(compute);
            // SAFETY: `fail` holds one u64 (8 bytes), set to all ones.
            unsafe { result::memset_d8_async(df, 0xff, 8, compute.cu_stream()) }
                .map_err(e("clearing the failure word"))?;
        }
        let cap = slot.cap as u32;
        let mut args = StreamArgs {
            lo: job.lo,
            n: n as u32,
            first_scan: u32::from(job.first_scan),
            values: &mut slot.values,
            flags: &mut slot.flags,
            reached: &slot.reached,
            has_reached,
            lookup_chunk: targets.lookup_chunk,
            low_bits: targets.low_bits,
            out: &mut slot.out,
            cap,
            count: &mut slot.count,
            fail: &mut slot.fail,
        };
        self.launch.launch(compute, &mut args)?;
        let buckets = buckets as u32;
        let mut hist = slot.hist.slice_mut(hist_range);
        let grid = |f: &CudaFunction| self.device.grid(f, 256, u64::from(cap), 0);
        let low_bits = targets.low_bits;
        if answered {
            let can_block = self
                .can_block
                .as_ref()
                .expect("a pass is answered on the device only with its bits there");
            let bit_words = (can_block.len() / 8) as u64;
            let own_base = first_bucket;
            // A pass's kernel does not read the reached bits (has_reached
            // is 0): their buffer, n / 64 + 1 words, takes the blocked bits.
            {
                let (dr, _g) = slot.reached.device_ptr_mut(compute);
                // SAFETY: the buffer holds n / 64 + 1 >= blocked_words u64.
                unsafe { result::memset_d8_async(dr, 0, 8 * blocked_words, compute.cu_stream()) }
                    .map_err(e("clearing the blocked bits"))?;
            }
            let cfg = grid(&self.lookup_fn)?;
            let mut l = compute.launch_builder(&self.lookup_fn);
            l.arg(&slot.out)
                .arg(&slot.count)
                .arg(&cap)
                .arg(&low_bits)
                .arg(&own_base)
                .arg(&targets.lookup_chunk)
                .arg(&job.lo)
                .arg(can_block)
                .arg(&bit_words)
                .arg(&mut slot.reached)
                .arg(&mut slot.fail);
            // SAFETY: matches tb_block_lookup in common.cuh; `out` holds
            // `cap` pairs, of which it reads min(count, cap); `can_block`
            // holds `bit_words` u64 words and every successor's bit is
            // checked against them (one outside is reported through
            // `fail`); every requester is an index of the job, lo .. lo +
            // n, whose bit lies in the `blocked_words` words cleared above.
            unsafe { l.launch(cfg) }.map_err(e("launching tb_block_lookup"))?;
        } else {
            {
                let cfg = grid(&self.count_fn)?;
                let mut l = compute.launch_builder(&self.count_fn);
                l.arg(&slot.out)
                    .arg(&slot.count)
                    .arg(&cap)
                    .arg(&low_bits)
                    .arg(&first_bucket)
                    .arg(&mut hist);
                // SAFETY: matches tb_bucket_count in common.cuh; `out` holds
                // `cap` pairs, of which the kernel reads min(count, cap); every
                // key's bucket lies in first_bucket .. first_bucket + buckets
                // (a first scan's in earlier partitions, a pass's in this one:
                // StreamTargets), and `hist` is the view of those counters and one more.
                unsafe { l.launch(cfg) }.map_err(e("launching tb_bucket_count"))?;
            }
            {
                let cfg = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (1024, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut l = compute.launch_builder(&self.scan_fn);
                l.arg(&mut hist).arg(&buckets);
                // SAFETY: matches tb_bucket_scan (one block of 1024 threads);
                // `hist` holds `buckets` + 1 counters.
                unsafe { l.launch(cfg) }.map_err(e("launching tb_bucket_scan"))?;
            }
            {
                let cfg = grid(&self.scatter_fn)?;
                let mut l = compute.launch_builder(&self.scatter_fn);
                l.arg(&slot.out)
                    .arg(&slot.count)
                    .arg(&cap)
                    .arg(&low_bits)
                    .arg(&first_bucket)
                    .arg(&job.lo)
                    .arg(&mut hist)
                    .arg(&mut slot.grouped);
                // SAFETY: matches tb_bucket_scatter; the offsets are the scan of
                // the counts of the same min(count, cap) pairs, so every pair
                // lands inside `grouped`, which holds `cap` narrow pairs (2 *
                // cap u32). Its narrowing is exact: every payload is a
                // requester's rank in lo .. lo + n (n is a u32), and every
                // index within a lookup range is below lookup_chunk <= 2^32
                // (checked by Stager::new).
                unsafe { l.launch(cfg) }.map_err(e("launching tb_bucket_scatter"))?;
            }
        }
        slot.events[3]
            .record(compute)
            .map_err(e("recording an event"))?;

        d2h.wait(&slot.events[3]).map_err(e("ordering streams"))?;
        slot.events[4]
            .record(d2h)
            .map_err(e("recording an event"))?;
        {
            let small = slot.pin_small.as_mut_slice().map_err(e("pinned memory"))?;
            let (dc, _gc) = slot.count.device_ptr(d2h);
            let (dfail, _gf) = slot.fail.device_ptr(d2h);
            let (dh, _gh) = slot.hist.device_ptr(d2h);
            let ends = slot.pin_ends.as_mut_slice().map_err(e("pinned memory"))?;
            // SAFETY: `small` is page-locked and read only after event 5,
            // recorded behind these copies, has passed; the count is one
            // u32 (its low half of small[0], which was zeroed), the failure
            // word one u64.
            unsafe {
                small[0] = 0;
                let count_bytes =
                    std::slice::from_raw_parts_mut(small.as_mut_ptr().cast::<u32>(), 1);
                result::memcpy_dtoh_async(count_bytes, dc, d2h.cu_stream())
                    .map_err(e("copying the request count back"))?;
                result::memcpy_dtoh_async(&mut small[1..2], dfail, d2h.cu_stream())
                    .map_err(e("copying the failure word back"))?;
            }
            if !answered {
                // SAFETY: as above.
                unsafe {
                    // After the scatter each bucket's counter is where its
                    // requests end. SAFETY: `ends` is page-locked, holds
                    // targets.buckets + 1 u32 and is read only after event 5;
                    // `hist` holds the same, of which these are
                    // first_bucket .. first_bucket + buckets.
                    result::memcpy_dtoh_async(
                        &mut ends[..buckets as usize],
                        dh + 4 * first_bucket,
                        d2h.cu_stream(),
                    )
                    .map_err(e("copying the bucket ends back"))?;
                }
            }
        }
        if answered {
            let back = slot.pin_back.as_mut_slice().map_err(e("pinned memory"))?;
            let (dr, _g) = slot.reached.device_ptr(d2h);
            // SAFETY: `back` is page-locked, holds chunk + chunk / 4 >= 8 *
            // blocked_words bytes, and is read only after event 5; the
            // device buffer holds the blocked words.
            unsafe {
                result::memcpy_dtoh_async(&mut back[..8 * blocked_words], dr, d2h.cu_stream())
            }
            .map_err(e("copying the blocked bits back"))?;
        }
        if job.first_scan {
            let back = slot.pin_back.as_mut_slice().map_err(e("pinned memory"))?;
            let (dv, _gv) = slot.values.device_ptr(d2h);
            let (df, _gf) = slot.flags.device_ptr(d2h);
            // SAFETY: `back` is page-locked, holds chunk + chunk / 4 bytes,
            // and is read only after event 5; the device buffers hold n
            // values and at least flag_bytes flag bytes.
            unsafe {
                result::memcpy_dtoh_async(&mut back[..n], dv, d2h.cu_stream())
                    .map_err(e("copying a chunk's values back"))?;
                result::memcpy_dtoh_async(
                    &mut back[chunk..chunk + flag_bytes],
                    df,
                    d2h.cu_stream(),
                )
                .map_err(e("copying a chunk's flags back"))?;
            }
        }
        slot.events[5]
            .record(d2h)
            .map_err(e("recording an event"))?;
        Ok(())
    }

    /// Enqueues slot `i`'s requests' copy back (events 6 and 7): its count
    /// is in, within the buffers' room, and no contract was broken (event
    /// 5 has passed and `collect` checked both, or [`Self::fetch_if_ready`]
    /// did).
    fn start_fetch(&mut self, i: usize) -> Result<()> {
        let e = cuda_err;
        let slot = &mut self.slots[i];
        let (count, _) = slot.count_and_failure()?;
        slot.events[6]
            .record(&self.fetch)
            .map_err(e("recording an event"))?;
        {
            let host = slot.pin_out.as_mut_slice().map_err(e("pinned memory"))?;
            let (dg, _g) = slot.grouped.device_ptr(&self.fetch);
            // SAFETY: `host` is page-locked, holds 2 * cap u32 and is read
            // only after `collect` waited for event 7, recorded behind this
            // copy; the slot is not refilled before then. The device holds
            // `count <= cap` pairs, written by kernels that finished before
            // event 5, which the host saw pass before enqueueing this.
            unsafe {
                result::memcpy_dtoh_async(&mut host[..2 * count], dg, self.fetch.cu_stream())
            }
            .map_err(e("copying requests back"))?;
        }
        slot.events[7]
            .record(&self.fetch)
            .map_err(e("recording an event"))?;
        slot.fetching = true;
        Ok(())
    }

    /// Starts slot `i`'s requests' copy back now if its kernels and count
    /// are done, its requests fit and no contract was broken, without
    /// waiting: otherwise `collect` sees to it.
    fn fetch_if_ready(&mut self, i: usize) -> Result<()> {
        let slot = &self.slots[i];
        if slot.fetching
            || slot.answered
            || !slot.events[5]
                .try_is_complete()
                .map_err(cuda_err("querying an event"))?
        {
            return Ok(());
        }
        let (count, fail) = slot.count_and_failure()?;
        if fail != u64::MAX || count > slot.cap {
            return Ok(());
        }
        self.start_fetch(i)
    }

    fn contract_error(&self, fail: u64) -> Error {
        let code = fail >> 56;
        let rank = fail & 0x00ff_ffff_ffff_ffff;
        let name = self.launch.partition_name(self.targets.partition);
        Error::GameContract {
            game: self.launch.game(),
            message: match code {
                1 => format!(
                    "index {rank} of partition {name} has a move to a partition that is not solved before it (device expansion)"
                ),
                2 => format!(
                    "index {rank} of partition {name} has no moves but its status is not Lost or Drawn (device expansion)"
                ),
                _ => format!("index {rank} of partition {name}: the device kernel reported failure {code}"),
            },
        }
    }
}

impl Drop for Stager {
    /// Waits for every stream before the slots' untracked buffers are
    /// freed: a job may still be in flight after an error.
    fn drop(&mut self) {
        for stream in [&self.h2d, &self.compute, &self.d2h, &self.fetch] {
            // Nothing to do about a failure here: the context is broken
            // and the build already reports an error.
            let _ = stream.synchronize();
        }
    }
}

/// The indices a slot's chunk holds and the request pairs its buffers hold
/// within `device_bytes` of device memory (both slots) and the targets'
/// page-locked share, or the one-line refusal where they fall below a
/// word of indices and its requests.
fn sizes(
    targets: &StreamTargets,
    launch: &dyn ChunkLaunch,
    device_bytes: u64,
) -> Result<(u64, u64)> {
    let hint = u64::from(launch.requests_per_index().max(1));
    let fixed = 4 * (targets.buckets + 1) + 64;
    let room = (device_bytes / SLOTS as u64).saturating_sub(fixed);
    // An eighth of a slot for the chunk itself (a value, a quarter byte
    // of flags, an eighth of reached bits per index), the rest for
    // request pairs, held twice (as emitted, 16 bytes, and as grouped,
    // 8: `Requests`). The pipeline cuts a job by both: a first scan's
    // job by its requests (every index expands), a pass's by its
    // indices, as few of those expand.
    // Sizing both by the first scan's need made a pass's jobs tiny: at
    // a 25 MB limit, 1,800 jobs of 48 K indices a pass, each paying its
    // launches and round trips.
    let chunk = (room / 11 / 64 * 64).min(targets.max_chunk);
    let cap = ((room - room.min(chunk * 11 / 8)) / 24).min(targets.max_expanding * hint);
    if chunk < 64 || cap < 64 * hint {
        return Err(Error::NotAvailable(format!(
            "--gpu-mem-limit {device_bytes} bytes leaves no room for the streamed path's buffers of partition {} ({} bytes at least): raise it",
            launch.partition_name(targets.partition),
            // 64 indices, and room for 64 indices' requests in seven eighths.
            SLOTS as u64 * (fixed + (64 * 24 * hint * 8).div_ceil(7).max(64 * 11))
        )));
    }
    // The page-locked copies on the host (a slot's are 21/8 bytes an
    // index and 8 a request) stay within the memory plan's share, cut
    // as the device's are: an eighth for the chunk, the rest for
    // requests. Without it a workstation's limits (24G on the device,
    // 32G on the host) would have pinned a fifth of the host's budget
    // beyond it.
    let host_room = targets.host_bytes / SLOTS as u64;
    let chunk = chunk.min(host_room / 21 / 64 * 64);
    let cap = cap.min((host_room - host_room.min(chunk * 21 / 8)) / 8);
    if chunk < 64 || cap < 64 * hint {
        return Err(Error::NotAvailable(format!(
            "--mem-limit leaves {} bytes of page-locked host memory for the streamed path's buffers of partition {}, below the {} they need at least: raise it",
            targets.host_bytes,
            launch.partition_name(targets.partition),
            SLOTS as u64 * (64 * 21 / 8 + 64 * 8 * hint)
        )));
    }
    Ok((chunk, cap))
}

/// The buckets a job's requests lie in: a first scan asks only about
/// earlier partitions, a pass only about its own (the counters of the
/// other buckets stay out of the way). The first and how many.
fn asked_buckets(targets: &StreamTargets, first_scan: bool) -> (u64, u64) {
    let own = targets.base_of(targets.partition).unwrap_or(0);
    if first_scan {
        (0, own)
    } else {
        (own, targets.buckets - own)
    }
}

fn ms(a: &CudaEvent, b: &CudaEvent) -> Result<f64> {
    Ok(f64::from(a.elapsed_ms(b).map_err(cuda_err("reading an event"))?) / 1e3)
}

impl ChunkExpander for Stager {
    fn depth(&self) -> usize {
        SLOTS
    }

    fn max_chunk(&self) -> u64 {
        self.chunk
    }

    fn max_expanding(&self) -> u64 {
        self.expanding
    }

    fn name(&self) -> String {
        format!("cuda: {}", self.device.name())
    }

    fn submit(&mut self, job: ChunkJob) -> Result<()> {
        let started = Instant::now();
        let n = job.indices();
        if self.queue.len() >= SLOTS || n as u64 > self.chunk || job.flags.len() < n.div_ceil(4) {
            return Err(Error::NotAvailable(format!(
                "chunk {} of {n} indices does not fit the stager ({} in flight, {} indices at most); report this as a bug",
                job.chunk,
                self.queue.len(),
                self.chunk
            )));
        }
        let i = self.next;
        self.next = (self.next + 1) % SLOTS;
        let chunk = self.chunk as usize;
        let reached_words = self
            .targets
            .reached
            .as_ref()
            .filter(|_| job.first_scan)
            .map(|w| {
                let first = (job.lo / 64) as usize;
                let last = (first + n.div_ceil(64)).min(w.len());
                w[first.min(last)..last].to_vec()
            });
        {
            let slot = &mut self.slots[i];
            let host = slot
                .pin_in
                .as_mut_slice()
                .map_err(cuda_err("pinned memory"))?;
            // A job without values has them set on the device.
            host[..job.values.len()].copy_from_slice(&job.values);
            let fb = n.div_ceil(4);
            host[chunk..chunk + fb].copy_from_slice(&job.flags[..fb]);
            if let Some(words) = reached_words {
                let at = chunk + chunk / 4;
                for (k, w) in words.iter().enumerate() {
                    host[at + 8 * k..at + 8 * k + 8].copy_from_slice(&w.to_le_bytes());
                }
                // Past the partition's last word the bits are zero.
                for k in words.len()..n.div_ceil(64) {
                    host[at + 8 * k..at + 8 * k + 8].fill(0);
                }
            }
            slot.job = Some(job);
            slot.regrown = 0;
        }
        self.enqueue(i)?;
        if let Some(&older) = self.queue.front() {
            self.fetch_if_ready(older)?;
        }
        self.queue.push_back(i);
        self.slots[i].staged_seconds = started.elapsed().as_secs_f64();
        Ok(())
    }

    fn collect_into(
        &mut self,
        requests: &mut dyn FnMut(Requests<'_>) -> Result<()>,
    ) -> Result<ChunkDone> {
        let Some(i) = self.queue.pop_front() else {
            return Err(Error::NotAvailable(
                "no chunk to collect; report this as a bug".into(),
            ));
        };
        let e = cuda_err;
        let started = Instant::now();
        let mut host_wait_seconds = 0.0;
        let mut wait = |event: &CudaEvent, what: &'static str| {
            let waited = Instant::now();
            let done = event.synchronize().map_err(e(what));
            host_wait_seconds += waited.elapsed().as_secs_f64();
            done
        };
        loop {
            wait(&self.slots[i].events[5], "waiting for a chunk")?;
            let (count, fail) = self.slots[i].count_and_failure()?;
            if fail != u64::MAX {
                return Err(self.contract_error(fail));
            }
            if count <= self.slots[i].cap {
                break;
            }
            // More requests than the buffers hold: grow them and run the
            // chunk again (the pinned input is intact; the kernels rewrite
            // everything they produce).
            let cap = count + count / 4;
            let (out, pin_out, grouped) = self.untracked(|s| s.request_buffers(cap))?;
            let slot = &mut self.slots[i];
            (slot.out, slot.pin_out, slot.grouped, slot.cap) = (out, pin_out, grouped, cap);
            slot.regrown += 1;
            self.enqueue(i)?;
        }
        let answered = self.slots[i].answered;
        if !self.slots[i].fetching && !answered {
            self.start_fetch(i)?;
        }
        // The next chunk's requests come back while the caller takes these.
        if let Some(&next) = self.queue.front() {
            self.fetch_if_ready(next)?;
        }
        let slot = &mut self.slots[i];
        let (count, _) = slot.count_and_failure()?;
        if !answered {
            wait(&slot.events[7], "waiting for requests")?;
        }
        let mut job = slot.job.take().expect("a submitted slot holds its job");
        let n = job.indices();
        let values_in = job.values.len();
        let first_scan = job.first_scan;
        let chunk = self.chunk as usize;
        if first_scan {
            let back = slot.pin_back.as_slice().map_err(e("pinned memory"))?;
            job.values.copy_from_slice(&back[..n]);
            let fb = n.div_ceil(4);
            job.flags[..fb].copy_from_slice(&back[chunk..chunk + fb]);
        }
        let pairs = slot.pin_out.as_slice().map_err(e("pinned memory"))?;
        let ends = slot.pin_ends.as_slice().map_err(e("pinned memory"))?;
        let (first_bucket, buckets) = asked_buckets(&self.targets, first_scan);
        // What the build does with them is its own time, not staging.
        let handing = Instant::now();
        let mut blocked = Vec::new();
        if answered {
            let back = slot.pin_back.as_slice().map_err(e("pinned memory"))?;
            blocked = back[..8 * n.div_ceil(64)]
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
                .collect();
        } else {
            requests(Requests {
                first_bucket,
                ends: &ends[..buckets as usize],
                lo: job.lo,
                low_bits: self.targets.low_bits,
                pairs: bytemuck::cast_slice(&pairs[..2 * count]),
            })?;
        }
        let handed_seconds = handing.elapsed().as_secs_f64();
        let ev = &slot.events;
        let back_bytes = if first_scan { n + n.div_ceil(4) } else { 0 };
        let in_bytes = values_in
            + if first_scan { 0 } else { n.div_ceil(4) }
            + if self.targets.reached.is_some() && first_scan {
                n.div_ceil(64) * 8
            } else {
                0
            };
        let (d2h_bytes, d2h_seconds) = if answered {
            (16 + 8 * n.div_ceil(64), ms(&ev[4], &ev[5])?)
        } else {
            (
                8 * count + 16 + 4 * buckets as usize + back_bytes,
                ms(&ev[4], &ev[5])? + ms(&ev[6], &ev[7])?,
            )
        };
        let timing = ChunkTiming {
            h2d_bytes: in_bytes as u64,
            d2h_bytes: d2h_bytes as u64,
            h2d_seconds: ms(&ev[0], &ev[1])?,
            kernel_seconds: ms(&ev[2], &ev[3])?,
            d2h_seconds,
            host_wait_seconds,
            host_stage_seconds: slot.staged_seconds + started.elapsed().as_secs_f64()
                - host_wait_seconds
                - handed_seconds,
        };
        Ok(ChunkDone {
            chunk: job.chunk,
            lo: job.lo,
            values: job.values,
            flags: job.flags,
            requests: Vec::new(),
            looked_up: if answered { count as u64 } else { 0 },
            blocked,
            timing,
        })
    }

    fn answer_on_device(&mut self, can_block: Option<&[u64]>) -> Result<bool> {
        let Some(bits) = can_block else {
            self.answering = false;
            return Ok(false);
        };
        if !self.queue.is_empty() {
            return Err(Error::NotAvailable(
                "the stager was asked to answer on the device with chunks in flight; report this as a bug"
                    .into(),
            ));
        }
        let bytes = 8 * bits.len() as u64;
        let kept = self.can_block.as_ref().map_or(0, |b| b.len() as u64);
        if bytes > kept {
            // The bits take room from the slots' buffers, at most a
            // quarter of the device memory: jobs a quarter smaller still
            // spare every request's trip back, more and they would pay
            // in round trips.
            let Some((chunk, cap)) = (bytes <= self.device_bytes / 4)
                .then(|| {
                    sizes(
                        &self.targets,
                        self.launch.as_ref(),
                        self.device_bytes - bytes,
                    )
                    .ok()
                })
                .flatten()
            else {
                self.answering = false;
                return Ok(false);
            };
            for stream in [&self.h2d, &self.compute, &self.d2h, &self.fetch] {
                stream
                    .synchronize()
                    .map_err(cuda_err("waiting for the stager's streams"))?;
            }
            if (chunk, cap as usize) != (self.chunk, self.slots[0].cap) {
                self.slots.clear();
                self.chunk = chunk;
                let hint = u64::from(self.launch.requests_per_index().max(1));
                self.expanding = cap / hint;
                for _ in 0..SLOTS {
                    let slot = self.untracked(|s| s.new_slot(cap as usize))?;
                    self.slots.push(slot);
                }
                self.next = 0;
            }
        }
        // The old bits go first: both at once would pass the bound.
        self.can_block = None;
        // Untracked as the slots' buffers: the upload waits for its copies
        // before it returns, and the buffer is let go only with nothing in
        // flight (above) or after the streams are waited for (Drop).
        let loaded = self.untracked(|s| s.device.upload(bytemuck::cast_slice(bits)))?;
        self.compute
            .synchronize()
            .map_err(cuda_err("allocating the stager's buffers"))?;
        self.can_block = Some(loaded);
        self.answering = true;
        Ok(true)
    }
}

/// Copy rates through page-locked, not write-combined host memory (the
/// staging buffers' kind), in bytes per second: (to the device, back),
/// each the best of five copies of `bytes`.
pub fn copy_rates(device: &CudaDevice, bytes: usize) -> Result<(f64, f64)> {
    let e = cuda_err;
    let ctx = device.context();
    let stream = ctx.new_stream().map_err(e("creating a stream"))?;
    // SAFETY: page-locked, not write-combined; filled before it is copied.
    let mut host = unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), 0) }
        .map_err(e("allocating pinned host memory"))?;
    host.as_mut_slice()
        .map_err(e("pinned memory"))?
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8);
    let mut dev = stream
        .alloc_zeros::<u8>(bytes.max(1))
        .map_err(e("allocating device memory"))?;
    let timed = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(e("creating an event"))
    };
    let (a, b) = (timed()?, timed()?);
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        a.record(&stream).map_err(e("recording an event"))?;
        stream
            .memcpy_htod(&host, &mut dev)
            .map_err(e("copying to the device"))?;
        b.record(&stream).map_err(e("recording an event"))?;
        best.0 = best.0.min(ms(&a, &b)?);
        a.record(&stream).map_err(e("recording an event"))?;
        stream
            .memcpy_dtoh(&dev, &mut host)
            .map_err(e("copying back"))?;
        b.record(&stream).map_err(e("recording an event"))?;
        best.1 = best.1.min(ms(&a, &b)?);
    }
    Ok((bytes as f64 / best.0, bytes as f64 / best.1))
}
