//! Connect Four partitions on the device (kernel `connect4_solve` in
//! `kernels/connect4.cu`; CPU twin [`Connect4Twin`](super::twin::Connect4Twin)).
//!
//! A build solves partition `n` from partition `n + 1`, which it solved just
//! before: [`Connect4Cuda`] keeps the last partition it produced on the device
//! and uses that copy, instead of uploading the host's, when the next call's
//! dependency is the very buffer it returned (same partition, same address
//! and length, same sampled fingerprint).
//!
//! The values come back through two pinned (page-locked, CPU-readable)
//! staging buffers on two streams: while one chunk is copied from the device,
//! the previous one is copied, on all cores, into the result.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PinnedHostSlice, PushKernelArg};
use rayon::prelude::*;

use super::twin::{check_fail, check_next, Connect4SolveSpec, Connect4Tables};
use crate::backend::cuda::{cuda_err, CudaDevice, BLOCK};
use crate::{Error, Rank, Result};

/// The Connect Four kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] =
    &[("connect4.cu", include_str!("../../../kernels/connect4.cu"))];

/// What one device solve did.
#[derive(Clone, Debug)]
pub struct Connect4Solved {
    /// The partition's values.
    pub values: Vec<u8>,
    /// Host-clock seconds of the whole call (uploads, kernel, download).
    pub seconds: f64,
    /// Device-event seconds of the kernel alone.
    pub kernel_seconds: f64,
    /// True when partition `n + 1` was already on the device.
    pub reused_next: bool,
}

/// The last partition solved, kept on the device.
struct Cached {
    spec: Connect4SolveSpec,
    addr: usize,
    len: usize,
    fingerprint: u32,
    values: CudaSlice<u8>,
}

/// Bytes per staging buffer: whole ones come back through pinned memory, the
/// rest of a partition (and any small partition) straight into the result.
const STAGE: usize = 32 << 20;

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

/// A CRC of up to 4096 bytes sampled evenly (cheap next to the partition).
fn fingerprint(v: &[u8]) -> u32 {
    let step = (v.len() / 4096).max(1);
    let mut h = crc32fast::Hasher::new();
    for i in (0..v.len()).step_by(step) {
        h.update(&[v[i]]);
    }
    h.finalize()
}

/// The Connect Four kernel loaded on a [`CudaDevice`], with its device cache.
pub struct Connect4Cuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its function is in use.
    _module: Arc<cudarc::driver::CudaModule>,
    function: CudaFunction,
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
        let function = gpu.function(&module, "connect4_solve")?;
        Ok(Connect4Cuda {
            gpu,
            _module: module,
            function,
            state: Mutex::new(State::default()),
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.gpu
    }

    /// Drops the partition kept on the device.
    pub fn forget(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).cache = None;
    }

    /// Solves partition `spec` given partition `n + 1`'s values (`None` for
    /// the full board). The result stays on the device for the next call.
    pub fn solve(&self, spec: Connect4SolveSpec, next: Option<&[u8]>) -> Result<Connect4Solved> {
        let t0 = Instant::now();
        let tables = Connect4Tables::new(spec)?;
        let next = next.unwrap_or(&[]);
        check_next(spec, &tables, next)?;
        let size = usize::try_from(tables.size(spec.n))
            .map_err(|_| Error::Cuda("partition larger than the address space".into()))?;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let hit = state.cache.take().filter(|c| {
            Some(c.spec) == spec.next()
                && c.addr == next.as_ptr() as usize
                && c.len == next.len()
                && c.fingerprint == fingerprint(next)
        });
        let s = &self.gpu.stream();
        let reused_next = hit.is_some();
        let dev_next = match hit {
            Some(c) => c.values,
            // One byte stands in for the full board's missing successor partition.
            None if next.is_empty() => s.alloc_zeros::<u8>(1).map_err(cuda_err("allocating"))?,
            None => s
                .clone_htod(next)
                .map_err(cuda_err("copying partition n + 1 to the device"))?,
        };
        let mut out = s
            .alloc_zeros::<u8>(size.max(1))
            .map_err(cuda_err("allocating the partition's values"))?;
        let (fail, kernel_seconds) =
            self.run(&self.function, spec, &tables, None, &dev_next, &mut out)?;
        check_fail(spec, fail)?;
        drop(dev_next);
        let values = self.download(&mut state, &out, size)?;
        state.cache = Some(Cached {
            spec,
            addr: values.as_ptr() as usize,
            len: values.len(),
            fingerprint: fingerprint(&values),
            values: out,
        });
        Ok(Connect4Solved {
            values,
            seconds: t0.elapsed().as_secs_f64(),
            kernel_seconds,
            reused_next,
        })
    }

    /// The first `size` bytes of `out` (the kernel finished): whole
    /// [`STAGE`]s through the staging buffers, the tail directly.
    fn download(&self, state: &mut State, out: &CudaSlice<u8>, size: usize) -> Result<Vec<u8>> {
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
        let mut values = vec![0u8; size];
        let chunks = size / STAGE;
        if size > chunks * STAGE {
            // Pageable destination: the call returns once the copy is done.
            let tail = out.slice(chunks * STAGE..size);
            self.gpu
                .stream()
                .memcpy_dtoh(&tail, &mut values[chunks * STAGE..])
                .map_err(cuda_err("copying the values back"))?;
            self.gpu
                .stream()
                .synchronize()
                .map_err(cuda_err("copying the values back"))?;
        }
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
            let view = out.slice(j * STAGE..(j + 1) * STAGE);
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
    /// the failure bits ([`crate::game::connect4::twin::fail`]), for comparison
    /// with [`crate::game::connect4::twin::Connect4Twin::value_of`].
    pub fn values_of(
        &self,
        spec: Connect4SolveSpec,
        next: Option<&[u8]>,
        ranks: &[Rank],
    ) -> Result<(Vec<u8>, u32)> {
        let tables = Connect4Tables::new(spec)?;
        let next = next.unwrap_or(&[]);
        check_next(spec, &tables, next)?;
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
        let s = &self.gpu.stream();
        let dev_next = if next.is_empty() {
            s.alloc_zeros::<u8>(1).map_err(cuda_err("allocating"))?
        } else {
            s.clone_htod(next)
                .map_err(cuda_err("copying to the device"))?
        };
        let raw: Vec<u64> = ranks.iter().map(|r| r.0).collect();
        let dev_ranks = s
            .clone_htod(&raw)
            .map_err(cuda_err("copying ranks to the device"))?;
        let mut out = s
            .alloc_zeros::<u8>(ranks.len())
            .map_err(cuda_err("allocating"))?;
        let fail = self.run(
            &self.function,
            spec,
            &tables,
            Some((&dev_ranks, ranks.len() as u64)),
            &dev_next,
            &mut out,
        )?;
        let values = s.clone_dtoh(&out).map_err(cuda_err("copying back"))?;
        Ok((values, fail.0))
    }
}

impl Connect4Cuda {
    /// One launch of `connect4_solve` over the partition `spec` (or the
    /// `ranks` given) into `out`: (failure bits, kernel seconds).
    fn run(
        &self,
        function: &CudaFunction,
        spec: Connect4SolveSpec,
        tables: &Connect4Tables,
        ranks: Option<(&CudaSlice<u64>, u64)>,
        next: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
    ) -> Result<(u32, f64)> {
        let s = self.gpu.stream();
        let flat = tables.flat();
        let dev_tables = s
            .clone_htod(&flat)
            .map_err(cuda_err("copying the tables"))?;
        let mut fail = s.alloc_zeros::<u32>(1).map_err(cuda_err("allocating"))?;
        let count = match ranks {
            Some((_, n)) => n,
            None => tables.size(spec.n),
        };
        let smem = (flat.len() * 8) as u32;
        let cfg = self.gpu.grid(function, BLOCK, count, smem)?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let begin = self
            .gpu
            .context()
            .new_event(timing)
            .map_err(cuda_err("creating an event"))?;
        let end = self
            .gpu
            .context()
            .new_event(timing)
            .map_err(cuda_err("creating an event"))?;
        let (w, h, n) = (spec.width, spec.height, spec.n);
        let (len, ways, prefix) = (
            flat.len() as u32,
            tables.ways_offset(),
            tables.prefix_offset(),
        );
        let first = 0u64;
        let null = 0u64;
        begin.record(s).map_err(cuda_err("recording an event"))?;
        let mut launch = s.launch_builder(function);
        launch
            .arg(&w)
            .arg(&h)
            .arg(&n)
            .arg(&dev_tables)
            .arg(&len)
            .arg(&ways)
            .arg(&prefix)
            .arg(&first)
            .arg(&count);
        match ranks {
            Some((r, _)) => launch.arg(r),
            None => launch.arg(&null),
        };
        launch.arg(next).arg(out).arg(&mut fail);
        // SAFETY: the arguments match connect4_solve in connect4.cu; the
        // tables hold `len` u64 laid out as Connect4Tables::flat says and fit
        // the dynamic shared memory asked for; `out` holds at least `count`
        // bytes; every rank (the range 0..count, or the list, checked by the
        // callers) is an index of partition n, and every successor index the
        // kernel reads is one of partition n + 1, whose values `next` holds
        // (checked by check_next; the full board reads none).
        unsafe { launch.launch(cfg) }.map_err(cuda_err("launching connect4_solve"))?;
        end.record(s).map_err(cuda_err("recording an event"))?;
        let bits = s.clone_dtoh(&fail).map_err(cuda_err("copying back"))?[0];
        let ms = begin
            .elapsed_ms(&end)
            .map_err(cuda_err("reading the timer"))?;
        Ok((bits, f64::from(ms) / 1e3))
    }
}
