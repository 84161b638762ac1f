//! Connect Four plies on the device: kernels `connect4_expand` (forward
//! search) and `connect4_solve` (values of reached indices, compact) in
//! `kernels/connect4.cu`; CPU twins in [`super::twin`].
//!
//! A build solves ply `n` from ply `n + 1`, which it solved just before:
//! [`Connect4Cuda`] keeps the last ply it produced on the device (bits,
//! directory, values) and uses that copy, instead of uploading the host's,
//! when the next call's ply `n + 1` is the very one it returned (same ply,
//! same addresses and lengths, same sampled fingerprints). A step then
//! uploads only ply `n`'s bits and directory.
//!
//! A team member ([`Connect4Cuda::solve_team`]) launches the kernel over its
//! slice of ply `n`'s words only, into a buffer of the whole ply's values
//! (each reached index at its slot in the whole ply), downloads its own
//! slots, all-gathers them with the other members' and copies the others'
//! pieces into the same buffer. Only then is the buffer kept as the ply on
//! the device, identified by the gathered whole array it equals: a kept ply
//! is always whole, never one member's part, and a member that fails before
//! the copies keeps nothing.
//!
//! The values come back through two pinned (page-locked, CPU-readable)
//! staging buffers on two streams: while one chunk is copied from the device,
//! the previous one is copied, on all cores, into the result.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use rayon::prelude::*;

use super::twin::{
    check_expand_fail, check_fail, check_next, check_next_bits, check_reached, gather_slices,
    member_slots, Connect4SolveSpec, Connect4Tables, TEAM_ALIGN,
};
use crate::backend::cuda::{cuda_err, CudaDevice, BLOCK};
use crate::dist::Team;
use crate::game::reached::block_ranks;
use crate::game::ReachedView;
use crate::{Error, Rank, Result};

/// The Connect Four kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] =
    &[("connect4.cu", include_str!("../../../kernels/connect4.cu"))];

/// What one device solve did.
#[derive(Clone, Debug)]
pub struct Connect4Solved {
    /// The values of the ply's reached indices, in index order.
    pub values: Vec<u8>,
    /// Host-clock seconds of the whole call (uploads, kernel, download).
    pub seconds: f64,
    /// Device-event seconds of the kernel alone.
    pub kernel_seconds: f64,
    /// True when ply `n + 1` was already on the device.
    pub reused_next: bool,
}

/// A ply held compact on the device.
struct DevicePly {
    bits: CudaSlice<u64>,
    dir: CudaSlice<u64>,
    values: CudaSlice<u8>,
    /// Words of `bits` (the buffers hold at least one element each).
    words: u64,
}

impl DevicePly {
    /// Bytes a ply of these lengths takes on the device.
    fn bytes(bits: usize, dir: usize, values: usize) -> u64 {
        (bits.max(1) * 8 + dir.max(1) * 8 + values.max(1)) as u64
    }

    fn upload(s: &Arc<CudaStream>, bits: &[u64], dir: &[u64], values: &[u8]) -> Result<DevicePly> {
        // A zero-length buffer is no allocation: one element stands in.
        let up64 = |v: &[u64]| {
            if v.is_empty() {
                s.alloc_zeros::<u64>(1)
            } else {
                s.clone_htod(v)
            }
        };
        let e = cuda_err("copying ply n + 1 to the device");
        Ok(DevicePly {
            bits: up64(bits).map_err(&e)?,
            dir: up64(dir).map_err(&e)?,
            values: if values.is_empty() {
                s.alloc_zeros::<u8>(1)
            } else {
                s.clone_htod(values)
            }
            .map_err(&e)?,
            words: bits.len() as u64,
        })
    }
}

/// Which host copy of a ply a device copy mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct HostId {
    bits: (usize, usize, u32),
    values: (usize, usize, u32),
}

impl HostId {
    fn of(bits: &[u64], values: &[u8]) -> HostId {
        HostId {
            bits: (
                bits.as_ptr() as usize,
                bits.len(),
                fingerprint(bits.len(), |h, i| h.update(&bits[i].to_le_bytes())),
            ),
            values: (
                values.as_ptr() as usize,
                values.len(),
                fingerprint(values.len(), |h, i| h.update(&values[i..=i])),
            ),
        }
    }
}

/// The last ply solved, kept on the device.
struct Cached {
    spec: Connect4SolveSpec,
    host: HostId,
    ply: DevicePly,
}

/// Bytes per staging buffer: whole ones come back through pinned memory, the
/// rest of a ply (and any small ply) straight into the result.
const STAGE: usize = 32 << 20;

/// Words of successor bits copied back at a time (256 MiB).
const BITS_CHUNK: usize = 32 << 20;

/// Two streams with a pinned staging buffer each.
struct Staging {
    streams: [Arc<CudaStream>; 2],
    pinned: [PinnedHostSlice<u8>; 2],
}

/// What the solver keeps between calls.
#[derive(Default)]
struct State {
    cache: Option<Cached>,
    staging: Option<Staging>,
}

/// A CRC of up to 4096 elements of a sequence of `len`, sampled evenly
/// (cheap next to the ply).
fn fingerprint(len: usize, feed: impl Fn(&mut crc32fast::Hasher, usize)) -> u32 {
    let step = (len / 4096).max(1);
    let mut h = crc32fast::Hasher::new();
    for i in (0..len).step_by(step) {
        feed(&mut h, i);
    }
    h.finalize()
}

/// The tables of a board on the device, with their layout.
struct DeviceTables {
    flat: CudaSlice<u64>,
    len: u32,
    ways: u32,
    prefix: u32,
}

/// What `connect4_solve` reads of ply `n`.
enum SolveInput<'a> {
    /// Every set bit of the reached bits' words `first .. first + words`
    /// (with the directory of all of them), each value at its slot in the
    /// whole ply.
    Reached {
        bits: &'a CudaSlice<u64>,
        dir: &'a CudaSlice<u64>,
        first: u64,
        words: u64,
    },
    /// The listed ranks (a check's sample).
    Ranks(&'a CudaSlice<u64>, u64),
}

/// The Connect Four kernels loaded on a [`CudaDevice`], with the device copy
/// of the last ply.
pub struct Connect4Cuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    solve_fn: CudaFunction,
    expand_fn: CudaFunction,
    state: Mutex<State>,
}

impl std::fmt::Debug for Connect4Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connect4Cuda({})", self.gpu.name())
    }
}

impl Connect4Cuda {
    /// Compiles and loads `connect4.cu` on `gpu`.
    pub fn new(gpu: Arc<CudaDevice>) -> Result<Connect4Cuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        let solve_fn = gpu.function(&module, "connect4_solve")?;
        let expand_fn = gpu.function(&module, "connect4_expand")?;
        Ok(Connect4Cuda {
            gpu,
            _module: module,
            solve_fn,
            expand_fn,
            state: Mutex::new(State::default()),
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.gpu
    }

    /// The device, shared: for another solver on it.
    pub fn device_arc(&self) -> Arc<CudaDevice> {
        self.gpu.clone()
    }

    /// Drops the ply kept on the device.
    pub fn forget(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).cache = None;
    }

    /// Solves the indices of ply `spec` whose bits are set in `reached`,
    /// given ply `n + 1` held compact (`None` for the full board): one byte
    /// per reached index, in index order. The result stays on the device
    /// for the next call.
    pub fn solve(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<ReachedView<'_>>,
    ) -> Result<Connect4Solved> {
        self.solve_in(spec, reached, next, None)
    }

    /// The same solve by `team`, every member of which calls this with the
    /// same arguments on its own device: this one solves only the reached
    /// indices of its slice of `reached`'s words, and every member returns
    /// the whole ply's values (see the module documentation), kept whole on
    /// each device for the next call. `seconds` is this member's own, its
    /// wait in the exchange left out.
    pub fn solve_team(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<ReachedView<'_>>,
        team: &dyn Team,
    ) -> Result<Connect4Solved> {
        self.solve_in(spec, reached, next, Some(team))
    }

    fn solve_in(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<ReachedView<'_>>,
        team: Option<&dyn Team>,
    ) -> Result<Connect4Solved> {
        let t0 = Instant::now();
        let tables = Connect4Tables::new(spec)?;
        let reached = check_reached(spec, &tables, reached)?;
        check_next(spec, &tables, next.as_ref())?;
        let dir = block_ranks(reached);
        let total = usize::try_from(*dir.last().expect("one entry at least"))
            .map_err(|_| Error::Cuda("more reached indices than the address space".into()))?;
        // This member's words and the slots of their values.
        let (words, mine) = match team {
            Some(t) => (
                t.slice(reached.len() as u64, TEAM_ALIGN),
                member_slots(reached, &dir, t.rank(), t.size()),
            ),
            None => (0..reached.len() as u64, 0..total),
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let hit = state.cache.take().filter(|c| {
            Some(c.spec) == spec.next()
                && next.is_some_and(|v| c.host == HostId::of(v.bits, v.values))
        });
        let reused_next = hit.is_some();
        let upload_next = match (&hit, &next) {
            (None, Some(v)) => DevicePly::bytes(v.bits.len(), v.block_ranks.len(), v.values.len()),
            _ => 0,
        };
        self.gpu.ensure_room(
            &format!(
                "connect4 {}x{} {}: solving",
                spec.width,
                spec.height,
                spec.name()
            ),
            DevicePly::bytes(reached.len(), dir.len(), total) + upload_next,
            "build on a GPU with more memory, or with --backend cpu",
        )?;
        let s = self.gpu.stream();
        let dev_next = match (hit, next) {
            (Some(c), _) => c.ply,
            (None, Some(v)) => DevicePly::upload(s, v.bits, v.block_ranks, v.values)?,
            (None, None) => DevicePly::upload(s, &[], &[], &[])?,
        };
        let e = cuda_err("copying ply n's reached bits to the device");
        let bits = s.clone_htod(reached).map_err(&e)?;
        let dir_dev = s.clone_htod(&dir).map_err(&e)?;
        // The whole ply's slots even for a slice: the others' pieces join
        // this member's here, and the buffer is kept as the whole ply.
        let mut out = s
            .alloc_zeros::<u8>(total.max(1))
            .map_err(cuda_err("allocating the ply's values"))?;
        let input = SolveInput::Reached {
            bits: &bits,
            dir: &dir_dev,
            first: words.start,
            words: words.end - words.start,
        };
        let (fail, kernel_seconds) = self.run_solve(spec, &tables, input, &dev_next, &mut out)?;
        drop(dev_next);
        // Seconds in the exchange, waiting for the others: not this device's.
        let mut waited = 0.0;
        let values = match team {
            None => {
                check_fail(spec, fail)?;
                self.download(&mut state, &out, 0, total)?
            }
            Some(team) => {
                let piece = self.download(&mut state, &out, mine.start, mine.len())?;
                // Not held across the collective: a solver shared by two
                // members would otherwise wait on itself.
                drop(state);
                let exchange = Instant::now();
                let values = gather_slices(spec, reached, &dir, team, fail, piece)?;
                waited = exchange.elapsed().as_secs_f64();
                for member in (0..team.size()).filter(|&m| m != team.rank()) {
                    let slots = member_slots(reached, &dir, member, team.size());
                    if slots.is_empty() {
                        continue;
                    }
                    s.memcpy_htod(&values[slots.clone()], &mut out.slice_mut(slots))
                        .map_err(cuda_err("copying the other members' values to the device"))?;
                }
                // The kept ply must be whole before anyone reads it.
                s.synchronize()
                    .map_err(cuda_err("copying the other members' values to the device"))?;
                state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                values
            }
        };
        state.cache = Some(Cached {
            spec,
            host: HostId::of(reached, &values),
            ply: DevicePly {
                bits,
                dir: dir_dev,
                values: out,
                words: reached.len() as u64,
            },
        });
        Ok(Connect4Solved {
            values,
            seconds: (t0.elapsed().as_secs_f64() - waited).max(0.0),
            kernel_seconds,
            reused_next,
        })
    }

    /// Bytes `offset .. offset + size` of `out` (the kernel finished): whole
    /// [`STAGE`]s through the staging buffers, the tail directly.
    fn download(
        &self,
        state: &mut State,
        out: &CudaSlice<u8>,
        offset: usize,
        size: usize,
    ) -> Result<Vec<u8>> {
        let mut values = vec![0u8; size];
        let chunks = size / STAGE;
        if size > chunks * STAGE {
            // Pageable destination: the call returns once the copy is done.
            let tail = out.slice(offset + chunks * STAGE..offset + size);
            self.gpu
                .stream()
                .memcpy_dtoh(&tail, &mut values[chunks * STAGE..])
                .map_err(cuda_err("copying the values back"))?;
            self.gpu
                .stream()
                .synchronize()
                .map_err(cuda_err("copying the values back"))?;
        }
        if chunks == 0 {
            // No whole stage: no page-locked buffers pinned for it (a build
            // under --mem-limit counts every resident byte).
            return Ok(values);
        }
        if state.staging.is_none() {
            let ctx = self.gpu.context();
            let stream = || ctx.new_stream().map_err(cuda_err("creating a stream"));
            // SAFETY: flags 0 asks for plain page-locked memory (not
            // write-combined: the CPU reads it); its contents are read only
            // after a device copy into it has completed (as_slice waits).
            let pinned = || unsafe {
                ctx.alloc_pinned_with_flags::<u8>(STAGE, 0)
                    .map_err(cuda_err("allocating pinned memory"))
            };
            state.staging = Some(Staging {
                streams: [stream()?, stream()?],
                pinned: [pinned()?, pinned()?],
            });
        }
        let st = state.staging.as_mut().expect("just set");
        // Chunk waiting in each staging buffer.
        let mut pending: [Option<usize>; 2] = [None, None];
        fn drain(st: &Staging, slot: usize, j: usize, values: &mut [u8]) -> Result<()> {
            let src = st.pinned[slot]
                .as_slice()
                .map_err(cuda_err("waiting for a copy"))?;
            let lo = j * STAGE;
            values[lo..lo + STAGE]
                .par_chunks_mut(1 << 20)
                .zip(src.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s));
            Ok(())
        }
        for j in 0..chunks {
            let slot = j % 2;
            if let Some(prev) = pending[slot].take() {
                drain(st, slot, prev, &mut values)?;
            }
            let view = out.slice(offset + j * STAGE..offset + (j + 1) * STAGE);
            st.streams[slot]
                .memcpy_dtoh(&view, &mut st.pinned[slot])
                .map_err(cuda_err("copying the values back"))?;
            pending[slot] = Some(j);
        }
        for j in chunks.saturating_sub(2)..chunks {
            if let Some(prev) = pending[j % 2].take() {
                drain(st, j % 2, prev, &mut values)?;
            }
        }
        Ok(values)
    }

    /// The bytes of the given ranks of `spec` (kernel over a rank list) and
    /// the failure bits ([`crate::game::connect4::twin::fail`]), for
    /// comparison with [`crate::game::connect4::twin::Connect4Twin::value_of`].
    pub fn values_of(
        &self,
        spec: Connect4SolveSpec,
        next: Option<ReachedView<'_>>,
        ranks: &[Rank],
    ) -> Result<(Vec<u8>, u32)> {
        let tables = Connect4Tables::new(spec)?;
        check_next(spec, &tables, next.as_ref())?;
        let size = tables.size(spec.n);
        if let Some(r) = ranks.iter().find(|r| r.0 >= size) {
            return Err(Error::Cuda(format!(
                "rank {r} is outside partition {} ({size} indices)",
                spec.name()
            )));
        }
        if ranks.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let s = self.gpu.stream();
        let dev_next = match next {
            Some(v) => DevicePly::upload(s, v.bits, v.block_ranks, v.values)?,
            None => DevicePly::upload(s, &[], &[], &[])?,
        };
        let raw: Vec<u64> = ranks.iter().map(|r| r.0).collect();
        let dev_ranks = s
            .clone_htod(&raw)
            .map_err(cuda_err("copying ranks to the device"))?;
        let mut out = s
            .alloc_zeros::<u8>(ranks.len())
            .map_err(cuda_err("allocating"))?;
        let input = SolveInput::Ranks(&dev_ranks, ranks.len() as u64);
        let (fail, _) = self.run_solve(spec, &tables, input, &dev_next, &mut out)?;
        let values = s.clone_dtoh(&out).map_err(cuda_err("copying back"))?;
        Ok((values, fail))
    }

    /// Forward search of ply `spec` (kernel `connect4_expand`; twin
    /// [`super::twin::expand`]): sets in `next` (ply `n + 1`'s bits) the
    /// successors of every ongoing position whose bit is set in `reached`,
    /// through a device copy of ply `n + 1`'s bits that is then OR-ed into
    /// `next`. Returns the seconds of the whole call.
    pub fn expand(
        &self,
        spec: Connect4SolveSpec,
        reached: &[u64],
        next: Option<&[AtomicU64]>,
    ) -> Result<f64> {
        let t0 = Instant::now();
        let tables = Connect4Tables::new(spec)?;
        let (reached_in, next_in) = (reached, next);
        let reached = check_reached(spec, &tables, reached)?;
        let next = check_next_bits(spec, &tables, next)?;
        if reached.iter().all(|&w| w == 0) {
            return Ok(0.0);
        }
        let need = ((reached.len() + next.len().max(1)) * 8) as u64;
        if !self.gpu.has_room(need)? {
            // A ply kept from solving is worth less than the search.
            self.forget();
            if !self.gpu.has_room(need)? {
                // A card too small for two plies' bits (--gpu-mem-limit far
                // below the build's working sets): this step runs on the
                // CPU twin, which sets the same bits.
                super::twin::expand(spec, reached_in, next_in)?;
                return Ok(0.0);
            }
        }
        let s = self.gpu.stream();
        let e = cuda_err;
        let bits = s
            .clone_htod(reached)
            .map_err(e("copying ply n's reached bits to the device"))?;
        let mut dev_next = s
            .alloc_zeros::<u64>(next.len().max(1))
            .map_err(e("allocating ply n + 1's bits"))?;
        let mut first = s.clone_htod(&[u64::MAX]).map_err(e("allocating"))?;
        let t = self.upload_tables(&tables)?;
        let words = reached.len() as u64;
        let (w, h, n) = (spec.width, spec.height, spec.n);
        let cfg = self.config(&self.expand_fn, words, t.len)?;
        let mut launch = s.launch_builder(&self.expand_fn);
        launch
            .arg(&w)
            .arg(&h)
            .arg(&n)
            .arg(&t.flat)
            .arg(&t.len)
            .arg(&t.ways)
            .arg(&t.prefix)
            .arg(&bits)
            .arg(&words)
            .arg(&mut dev_next)
            .arg(&mut first);
        // SAFETY: the arguments match connect4_expand in connect4.cu; the
        // tables hold `len` u64 laid out as Connect4Tables::flat says and fit
        // the dynamic shared memory asked for; `bits` holds `words` words, one
        // bit per index of ply n and none set past its size (check_reached),
        // so every index decoded is one of ply n; every successor index the
        // kernel sets is one of ply n + 1, whose bits `dev_next` holds whole
        // (check_next_bits; the full board has no ongoing position and sets
        // none); `first` holds one element.
        unsafe { launch.launch(cfg) }.map_err(e("launching connect4_expand"))?;
        let first = s.clone_dtoh(&first).map_err(e("copying back"))?[0];
        check_expand_fail(spec, first)?;
        let mut host = vec![0u64; BITS_CHUNK.min(next.len())];
        for lo in (0..next.len()).step_by(BITS_CHUNK) {
            let hi = (lo + BITS_CHUNK).min(next.len());
            s.memcpy_dtoh(&dev_next.slice(lo..hi), &mut host[..hi - lo])
                .map_err(e("copying ply n + 1's bits back"))?;
            s.synchronize()
                .map_err(e("copying ply n + 1's bits back"))?;
            next[lo..hi]
                .par_iter()
                .zip(&host[..hi - lo])
                .for_each(|(o, &w)| {
                    if w != 0 {
                        o.fetch_or(w, Ordering::Relaxed);
                    }
                });
        }
        Ok(t0.elapsed().as_secs_f64())
    }

    /// The tables of `tables`' board, on the device.
    fn upload_tables(&self, tables: &Connect4Tables) -> Result<DeviceTables> {
        let flat = tables.flat();
        Ok(DeviceTables {
            flat: self
                .gpu
                .stream()
                .clone_htod(&flat)
                .map_err(cuda_err("copying the tables"))?,
            len: flat.len() as u32,
            ways: tables.ways_offset(),
            prefix: tables.prefix_offset(),
        })
    }

    /// A launch of `function` over `work` threads' items with `tables_len`
    /// u64 of tables in shared memory.
    fn config(&self, function: &CudaFunction, work: u64, tables_len: u32) -> Result<LaunchConfig> {
        self.gpu.grid(function, BLOCK, work, tables_len * 8)
    }

    /// One launch of `connect4_solve` over `input` of ply `spec` into `out`,
    /// reading ply `n + 1` from `next`: (failure bits, kernel seconds).
    fn run_solve(
        &self,
        spec: Connect4SolveSpec,
        tables: &Connect4Tables,
        input: SolveInput<'_>,
        next: &DevicePly,
        out: &mut CudaSlice<u8>,
    ) -> Result<(u32, f64)> {
        let s = self.gpu.stream();
        let t = self.upload_tables(tables)?;
        let mut fail = s.alloc_zeros::<u32>(1).map_err(cuda_err("allocating"))?;
        let null = 0u64;
        let count = match &input {
            SolveInput::Reached { words, .. } => *words,
            SolveInput::Ranks(_, n) => *n,
        };
        let cfg = self.config(&self.solve_fn, count, t.len)?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            self.gpu
                .context()
                .new_event(timing)
                .map_err(cuda_err("creating an event"))
        };
        let (begin, end) = (event()?, event()?);
        let (w, h, n) = (spec.width, spec.height, spec.n);
        begin.record(s).map_err(cuda_err("recording an event"))?;
        let mut launch = s.launch_builder(&self.solve_fn);
        launch
            .arg(&w)
            .arg(&h)
            .arg(&n)
            .arg(&t.flat)
            .arg(&t.len)
            .arg(&t.ways)
            .arg(&t.prefix);
        match &input {
            SolveInput::Reached {
                bits, dir, first, ..
            } => {
                launch
                    .arg(&null)
                    .arg(first)
                    .arg(&count)
                    .arg(*bits)
                    .arg(*dir)
                    .arg(&null);
            }
            SolveInput::Ranks(ranks, _) => {
                launch
                    .arg(*ranks)
                    .arg(&null)
                    .arg(&count)
                    .arg(&null)
                    .arg(&null)
                    .arg(&null);
            }
        }
        launch
            .arg(&next.bits)
            .arg(&next.dir)
            .arg(&next.words)
            .arg(&next.values)
            .arg(out)
            .arg(&mut fail);
        // SAFETY: the arguments match connect4_solve in connect4.cu; the
        // tables hold `len` u64 laid out as Connect4Tables::flat says and fit
        // the dynamic shared memory asked for. Reached input: `bits` holds
        // ply n's words, none set past its size (check_reached), `dir` their
        // directory (block_ranks of all of them), and the kernel reads words
        // `first .. first + count`, inside them (a Team::slice of their
        // number, or all); out_base is 0 and `out` holds a byte per set bit
        // of all the words, so every slot (a set bit's rank among all of
        // them) lies in it; rank input: every rank is an index of ply n
        // (checked by values_of) and `out` holds `count` bytes. `next` is
        // ply n + 1 held compact as check_next verified: `words` words of
        // bits covering the whole ply (a successor index past them is read
        // as unreached, never loaded), a directory entry per 8 words and one
        // past, a value per set bit, so every slot the kernel computes lies
        // in `next.values`; the full board reads none of it.
        unsafe { launch.launch(cfg) }.map_err(cuda_err("launching connect4_solve"))?;
        end.record(s).map_err(cuda_err("recording an event"))?;
        let bits = s.clone_dtoh(&fail).map_err(cuda_err("copying back"))?[0];
        let ms = begin
            .elapsed_ms(&end)
            .map_err(cuda_err("reading the timer"))?;
        Ok((bits, f64::from(ms) / 1e3))
    }
}
