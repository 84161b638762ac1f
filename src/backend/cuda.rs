//! The CUDA device, for any game's kernels: opens a device through the driver
//! API (cudarc, loaded at run time), compiles kernel sources with NVRTC for
//! the device's compute capability (`kernels/common.cuh` pasted in), loads
//! them and fills their `__constant__` tables, sizes persistent grids and
//! copies results back through pinned buffers. The games' own kernels (which
//! entry points, which tables, which launch shape) live with each game
//! (`src/game/<game>/cuda.rs`); nothing here knows a game.
//!
//! Nothing here panics when CUDA is missing: cudarc panics on first use of an
//! absent library, so [`CudaDevice::open`] and [`compile_kernel`] probe for
//! `libcuda` / `libnvrtc` first (inside `catch_unwind`) and return
//! [`Error::Cuda`] with a one-line cause.

mod peer;
mod resident;
pub mod stream;

pub use peer::PeerBuffer;
pub use resident::ResidentValues;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig,
};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::{Error, Result};

/// `kernels/common.cuh`, pasted into each kernel source in place of its
/// `#include "common.cuh"` (NVRTC sees one self-contained source).
pub const COMMON_SOURCE: &str = include_str!("../../kernels/common.cuh");

/// Threads per block of launches that do not choose their own (a multiple
/// of the warp size: kernels reduce per warp).
pub const BLOCK: u32 = 256;

/// The complete NVRTC input for kernel file `name` with text `src`:
/// common.cuh pasted in, with `#line` directives so that compile errors name
/// the right file.
pub fn kernel_source(name: &str, src: &str) -> String {
    let mut out = String::with_capacity(COMMON_SOURCE.len() + src.len() + 128);
    for (i, line) in src.lines().enumerate() {
        if line.trim() == "#include \"common.cuh\"" {
            out.push_str("#line 1 \"common.cuh\"\n");
            out.push_str(COMMON_SOURCE);
            out.push_str(&format!("\n#line {} \"{name}\"\n", i + 2));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Maps a driver error to [`Error::Cuda`] saying what was being done.
pub fn cuda_err(what: &str) -> impl Fn(DriverError) -> Error + '_ {
    move |e| Error::Cuda(format!("{what}: {e}"))
}

/// Whether the shared library behind `probe` loads, without letting a cudarc
/// panic escape.
fn library_loads(probe: unsafe fn() -> bool) -> bool {
    // SAFETY: the probe only dlopens the CUDA library (running its
    // initialisers, as any CUDA program does) and closes it again.
    catch_unwind(|| unsafe { probe() }).unwrap_or(false)
}

/// Checks that NVRTC can be loaded.
pub fn nvrtc_available() -> Result<()> {
    if library_loads(cudarc::nvrtc::sys::is_culib_present) {
        Ok(())
    } else {
        Err(Error::Cuda(
            "NVRTC not found (libnvrtc.so.13): add the CUDA toolkit's lib directory to \
             LD_LIBRARY_PATH, or use --backend cpu"
                .into(),
        ))
    }
}

/// Checks that the CUDA driver library can be loaded.
pub fn driver_available() -> Result<()> {
    if library_loads(cudarc::driver::sys::is_culib_present) {
        Ok(())
    } else {
        Err(Error::Cuda(
            "no CUDA driver found (libcuda.so.1); use --backend cpu".into(),
        ))
    }
}

/// Compiles kernel file `name` (text `source`) to PTX for `arch` (e.g. `sm_90`). Needs only
/// NVRTC, no GPU.
pub fn compile_kernel(name: &str, source: &str, arch: &str) -> Result<Ptx> {
    nvrtc_available()?;
    let src = kernel_source(name, source);
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()],
        name: Some(name.to_string()),
        ..Default::default()
    };
    match catch_unwind(AssertUnwindSafe(|| {
        cudarc::nvrtc::compile_ptx_with_opts(src, opts)
    })) {
        Ok(Ok(ptx)) => Ok(ptx),
        Ok(Err(cudarc::nvrtc::CompileError::CompileError { log, .. })) => {
            Err(Error::Cuda(format!(
                "NVRTC failed to compile {name} for {arch}: {}",
                log.to_string_lossy().trim()
            )))
        }
        Ok(Err(e)) => Err(Error::Cuda(format!("NVRTC failed on {name}: {e}"))),
        Err(_) => Err(Error::Cuda(format!(
            "NVRTC crashed compiling {name} (missing symbol in libnvrtc?)"
        ))),
    }
}

/// Timing of one device run.
#[derive(Clone, Copy, Debug)]
pub struct Timed<T> {
    /// The result.
    pub value: T,
    /// Seconds, measured with device events around the kernels (or with the
    /// host clock for the streamed driver, which includes copies).
    pub seconds: f64,
}

/// An opened CUDA device: its context, default stream and the facts launches
/// are sized by.
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    capability: (u32, u32),
    sms: u32,
    /// Two pinned buffers for [`Self::upload`] and [`Self::download`], as
    /// large as the largest copy so far up to [`Self::copy_buffer_bytes`],
    /// allocated on first use and kept: pinning 128 MiB costs tens of
    /// milliseconds, a partition's copy about as much. Page-locked memory is
    /// resident: at 64 MiB each they took a build of small partitions (at
    /// most 288 KB) 79 MiB past its `--mem-limit`.
    staging: std::sync::Mutex<Option<[cudarc::driver::PinnedHostSlice<u8>; 2]>>,
    /// The most bytes each staging buffer may hold (see
    /// [`Self::limit_copy_buffers`]).
    staging_cap: std::sync::atomic::AtomicUsize,
    /// Contexts of other devices given access to this one's memory (and
    /// this one to theirs), with whether that access is direct: opening a
    /// memory pool again each partition cost milliseconds.
    peers: std::sync::Mutex<std::collections::HashMap<u64, bool>>,
    /// `--gpu-mem-limit`, so that this process sees the device as a card
    /// of that size: what it allocated since counts against the limit.
    cap: std::sync::Mutex<Option<Cap>>,
    /// The memory pool cudarc allocates from, keeping what is freed.
    pool: Option<Pool>,
    /// Modules loaded so far, by what made them: a game's in-memory kernels
    /// and its streamed path compile the same kernel file with the same
    /// tables, and NVRTC took a second of a streamed build's first
    /// partition for the second copy.
    modules: std::sync::Mutex<Vec<(ModuleKey, Arc<CudaModule>)>>,
}

/// What a loaded module was made from: the kernel file's name and text and
/// its `__constant__` tables (written only when a module is loaded, so two
/// loads from equal keys make modules that behave alike).
#[derive(PartialEq)]
struct ModuleKey {
    name: String,
    source: String,
    tables: Vec<(String, Vec<u32>)>,
}

/// The most bytes of each pinned staging buffer: past a few MiB a copy
/// gains little from larger pieces.
const STAGING_CHUNK: usize = 64 << 20;

/// The fewest bytes of a staging buffer: small partitions' copies share
/// buffers of this size rather than pinning one of their own size each.
const STAGING_LEAST: usize = 64 << 10;

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("device", &self.name)
            .field("capability", &self.capability)
            .field("sms", &self.sms)
            .finish()
    }
}

/// The device's memory pool, from which cudarc allocates.
#[derive(Clone, Copy)]
struct Pool(cudarc::driver::sys::CUmemoryPool);

// SAFETY: a pool handle names a driver object of the process, usable from
// any thread (the driver serialises calls on it).
unsafe impl Send for Pool {}
// SAFETY: as above; the handle itself is never written after open.
unsafe impl Sync for Pool {}

/// Makes the device's memory pool keep what is freed instead of giving it
/// back to the driver at every synchronisation (its default): a solve frees
/// and allocates gigabytes per partition, and memory given back must be
/// mapped again, for every GPU the pool is open to. Measured on two H200s
/// (docs/SCALING.md): a 9 G-index build on one GPU 18.2 s -> 17.5 s; on two
/// splitting every partition 21.6 s -> 15.0 s (taking the other GPU's slice
/// after a first scan: 50-130 ms -> 2 ms a partition); side by side
/// 12.8 -> 11.9 s.
/// [`CudaDevice::free_memory`] counts what the pool keeps as free. `None`
/// where the driver has no memory pools (cudarc then allocates directly).
fn keep_freed_memory(ctx: &CudaContext) -> Result<Option<Pool>> {
    use cudarc::driver::sys;
    if !ctx.has_async_alloc() {
        return Ok(None);
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut keep = u64::MAX;
    // SAFETY: FFI with valid out-pointers and this context's device; the
    // release threshold is a u64.
    unsafe {
        sys::cuDeviceGetMemPool(&mut pool, ctx.cu_device())
            .result()
            .map_err(cuda_err("finding the device's memory pool"))?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut keep as *mut u64 as *mut std::ffi::c_void,
        )
        .result()
        .map_err(cuda_err("setting the memory pool's release threshold"))?;
    }
    Ok(Some(Pool(pool)))
}

/// `--gpu-mem-limit` as [`CudaDevice::limit_memory`] set it.
#[derive(Clone, Copy, Debug)]
struct Cap {
    limit: u64,
    /// The device's free memory then (what the limit counts from without a
    /// memory pool).
    free_then: u64,
    /// The memory pool's allocations in use then.
    used_then: u64,
}

/// Device memory a solve leaves free beside its own buffers: the driver's
/// and the loaded modules' needs while it runs.
pub const ROOM_MARGIN: u64 = 256 << 20;

impl CudaDevice {
    /// Opens GPU `ordinal`. Errors (never panics)
    /// when the driver, NVRTC or the device is missing.
    pub fn open(ordinal: usize) -> Result<CudaDevice> {
        driver_available()?;
        nvrtc_available()?;
        match catch_unwind(|| Self::open_inner(ordinal)) {
            Ok(r) => r,
            Err(_) => Err(Error::Cuda(
                "the CUDA driver library is incomplete (cudarc panicked); use --backend cpu".into(),
            )),
        }
    }

    /// How many CUDA devices this machine has. Errors (never panics) when
    /// the driver is missing.
    pub fn count() -> Result<usize> {
        driver_available()?;
        match catch_unwind(CudaContext::device_count) {
            Ok(Ok(n)) => Ok(n.max(0) as usize),
            Ok(Err(e)) => Err(cuda_err("initialising CUDA")(e)),
            Err(_) => Err(Error::Cuda(
                "the CUDA driver library is incomplete (cudarc panicked); use --backend cpu".into(),
            )),
        }
    }

    fn open_inner(ordinal: usize) -> Result<CudaDevice> {
        let count = CudaContext::device_count().map_err(cuda_err("initialising CUDA"))?;
        if count <= 0 {
            return Err(Error::Cuda(
                "no CUDA device present; use --backend cpu".into(),
            ));
        }
        if ordinal >= count as usize {
            return Err(Error::Cuda(format!(
                "no CUDA device {ordinal}: only {count} present"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(cuda_err("opening the device"))?;
        let name = ctx.name().map_err(cuda_err("reading the device name"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(cuda_err("reading the compute capability"))?;
        let sms = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda_err("reading the multiprocessor count"))?;
        let stream = ctx.default_stream();
        let pool = keep_freed_memory(&ctx)?;
        Ok(CudaDevice {
            ctx,
            stream,
            name,
            capability: (major as u32, minor as u32),
            sms: sms as u32,
            staging: std::sync::Mutex::new(None),
            staging_cap: std::sync::atomic::AtomicUsize::new(STAGING_CHUNK),
            peers: Default::default(),
            modules: Default::default(),
            cap: std::sync::Mutex::new(None),
            pool,
        })
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's compute capability (major, minor).
    pub fn compute_capability(&self) -> (u32, u32) {
        self.capability
    }

    /// Bytes of device memory free now: the default `--gpu-mem-limit`.
    /// Under [`CudaDevice::limit_memory`], no more than the limit leaves
    /// after what this process allocated since.
    pub fn free_memory(&self) -> Result<u64> {
        let free = self.device_free()?;
        let cap = *self.cap.lock().unwrap_or_else(|e| e.into_inner());
        Ok(match cap {
            Some(cap) => free.min(cap.limit.saturating_sub(self.taken_since(cap)?)),
            None => free,
        })
    }

    /// Device memory this process allocated since `cap` was set: what its
    /// memory pool hands out (every allocation of cudarc's streams), so
    /// that the driver's own reservations (kernel code it loads at a
    /// kernel's first launch, local memory it grows for a kernel's stack:
    /// 2 MiB that a build under a 275 KB limit was charged) do not count,
    /// as a card of the limit's size holds them beside its free memory.
    /// Without a pool, the fall in free memory.
    fn taken_since(&self, cap: Cap) -> Result<u64> {
        Ok(match self.pool_used()? {
            Some(used) => used.saturating_sub(cap.used_then),
            None => cap.free_then.saturating_sub(self.device_free()?),
        })
    }

    /// Free device memory, counting what the memory pool keeps for reuse
    /// (see [`keep_freed_memory`]). Where the driver's own free memory falls
    /// under a quarter of the device, the pool gives back what it keeps
    /// first: a request larger than its kept pieces then finds the memory.
    fn device_free(&self) -> Result<u64> {
        self.ctx
            .bind_to_thread()
            .map_err(cuda_err("binding the context"))?;
        let read = || -> Result<(u64, u64)> {
            let (free, total) = self
                .ctx
                .mem_get_info()
                .map_err(cuda_err("reading free device memory"))?;
            Ok((free as u64, total as u64))
        };
        let (mut free, total) = read()?;
        let mut kept = self.pool_kept()?;
        if kept > 0 && free < total / 4 {
            if let Some(pool) = self.pool {
                // SAFETY: FFI on this device's pool (from the driver at
                // open); trimming releases only memory no allocation holds.
                unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool.0, 0) }
                    .result()
                    .map_err(cuda_err("returning the memory pool's spare memory"))?;
                free = read()?.0;
                kept = self.pool_kept()?;
            }
        }
        Ok(free + kept)
    }

    /// Bytes the memory pool holds beyond its allocations in use.
    fn pool_kept(&self) -> Result<u64> {
        let Some((reserved, used)) = self.pool_sizes()? else {
            return Ok(0);
        };
        Ok(reserved.saturating_sub(used))
    }

    /// Bytes of the memory pool's allocations in use (`None`: no pool).
    fn pool_used(&self) -> Result<Option<u64>> {
        Ok(self.pool_sizes()?.map(|(_, used)| used))
    }

    /// The memory pool's reserved bytes and the bytes of its allocations
    /// in use.
    fn pool_sizes(&self) -> Result<Option<(u64, u64)>> {
        let Some(pool) = self.pool else {
            return Ok(None);
        };
        use cudarc::driver::sys::CUmemPool_attribute as A;
        let read = |attr| -> Result<u64> {
            let mut value = 0u64;
            // SAFETY: FFI on this device's pool with an out-pointer to a
            // u64, the type of both attributes read here.
            unsafe {
                cudarc::driver::sys::cuMemPoolGetAttribute(
                    pool.0,
                    attr,
                    &mut value as *mut u64 as *mut std::ffi::c_void,
                )
            }
            .result()
            .map_err(cuda_err("reading the memory pool's size"))?;
            Ok(value)
        };
        let reserved = read(A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let used = read(A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
        Ok(Some((reserved, used)))
    }

    /// Makes every kernel of this process see the device as a card with
    /// `limit` bytes free now (`--gpu-mem-limit`): what is allocated from
    /// here on counts against it, in [`CudaDevice::free_memory`] and the
    /// room checks built on it. A larger device then builds as the smaller
    /// card would, which is how a workstation card is measured on an H200.
    pub fn limit_memory(&self, limit: u64) -> Result<()> {
        let cap = Cap {
            limit,
            free_then: self.device_free()?,
            used_then: self.pool_used()?.unwrap_or(0),
        };
        *self.cap.lock().unwrap_or_else(|e| e.into_inner()) = Some(cap);
        Ok(())
    }

    /// Errors unless `need` bytes and [`ROOM_MARGIN`] are free on this
    /// device once its stream has freed what was dropped before: "`what`
    /// needs X GB of device memory and Y GB are free on NAME; `fix`".
    pub fn ensure_room(&self, what: &str, need: u64, fix: &str) -> Result<()> {
        if self.has_room(need)? {
            return Ok(());
        }
        let cap = *self.cap.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cap) = cap {
            // Under a limit the margin is the device's own, and the amounts
            // may be a few kilobytes: bytes, and what this process took.
            return Err(Error::Cuda(format!(
                "{what} needs {need} bytes of device memory and {} are free under --gpu-mem-limit {} on {} (this process allocated {} bytes since the limit was set); {fix}",
                self.free_memory()?,
                cap.limit,
                self.name(),
                self.taken_since(cap)?
            )));
        }
        Err(Error::Cuda(format!(
            "{what} needs {:.2} GB of device memory and {:.2} GB are free on {}; {fix}",
            need.saturating_add(ROOM_MARGIN) as f64 / 1e9,
            self.free_memory()? as f64 / 1e9,
            self.name()
        )))
    }

    /// Whether `need` bytes and [`ROOM_MARGIN`] are free on this device once
    /// its stream has freed what was dropped before. Under
    /// [`CudaDevice::limit_memory`] the margin (the driver's reserve) is
    /// the device's own: `need` alone must fit the limit.
    pub fn has_room(&self, need: u64) -> Result<bool> {
        Ok(need <= self.room()?)
    }

    /// The largest `need` for which [`CudaDevice::has_room`] holds now:
    /// what a solve that sizes its work arrays to the device may still
    /// allocate.
    pub fn room(&self) -> Result<u64> {
        self.stream
            .synchronize()
            .map_err(cuda_err("synchronising"))?;
        Ok(self
            .device_free()?
            .saturating_sub(ROOM_MARGIN)
            .min(self.free_memory()?))
    }

    /// The number of multiprocessors.
    pub fn multiprocessors(&self) -> u32 {
        self.sms
    }

    /// The context (events, pinned allocations).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every game's launches and copies go through.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Compiles kernel file `name` (text `source`) for this device, loads it
    /// and fills its `__constant__` u32 tables (`tables`: symbol, contents);
    /// or, where that was done before on this device, the module it made.
    pub fn load_module(
        &self,
        name: &str,
        source: &str,
        tables: &[(&str, &[u32])],
    ) -> Result<Arc<CudaModule>> {
        let key = ModuleKey {
            name: name.to_string(),
            source: source.to_string(),
            tables: tables
                .iter()
                .map(|(symbol, data)| (symbol.to_string(), data.to_vec()))
                .collect(),
        };
        // Held while compiling: two threads asking for one module compile it once.
        let mut loaded = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, module)) = loaded.iter().find(|(k, _)| *k == key) {
            return Ok(module.clone());
        }
        let module = self.compile_and_load(name, source, tables)?;
        loaded.push((key, module.clone()));
        Ok(module)
    }

    fn compile_and_load(
        &self,
        name: &str,
        source: &str,
        tables: &[(&str, &[u32])],
    ) -> Result<Arc<CudaModule>> {
        let (major, minor) = self.capability;
        let ptx = compile_kernel(name, source, &format!("sm_{major}{minor}"))?;
        let module = self.ctx.load_module(ptx).map_err(cuda_err(&format!(
            "loading {name} (PTX newer than the driver?)"
        )))?;
        for (symbol, data) in tables {
            fill_u32(&module, &self.stream, symbol, data)?;
        }
        self.stream
            .synchronize()
            .map_err(cuda_err("filling tables"))?;
        Ok(module)
    }

    /// Entry point `entry` of a loaded module.
    pub fn function(&self, module: &Arc<CudaModule>, entry: &str) -> Result<CudaFunction> {
        module
            .load_function(entry)
            .map_err(cuda_err(&format!("loading kernel {entry}")))
    }

    /// the device at once, capped by the work.
    pub fn grid(&self, f: &CudaFunction, block: u32, work: u64, smem: u32) -> Result<LaunchConfig> {
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(block, smem as usize, None)
            .map_err(cuda_err("querying occupancy"))?
            .max(1);
        let blocks = u64::from(per_sm * self.sms).min(work.div_ceil(u64::from(block)).max(1));
        Ok(LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: smem,
        })
    }

    /// Bounds each of the two pinned buffers that [`Self::upload`] and
    /// [`Self::download`] copy through to `bytes` (at least 64 KiB, at most
    /// 64 MiB, the default): a build under `--mem-limit` counts them in its
    /// host memory. Buffers already larger are let go.
    pub fn limit_copy_buffers(&self, bytes: usize) {
        let cap = bytes.clamp(STAGING_LEAST, STAGING_CHUNK);
        self.staging_cap
            .store(cap, std::sync::atomic::Ordering::Relaxed);
        let mut guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_some_and(|[b, _]| b.len() > cap) {
            *guard = None;
        }
    }

    /// The most bytes each of the two copy buffers may take: host memory
    /// that stays resident once a copy of that size has run.
    pub fn copy_buffer_bytes(&self) -> usize {
        self.staging_cap.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The staging buffers, each large enough for a piece of a copy of
    /// `need` bytes (the whole of it, up to the cap), allocated or grown
    /// on first need (held for one copy at a time: copies of one device
    /// take turns).
    fn staging(
        &self,
        need: usize,
    ) -> Result<std::sync::MutexGuard<'_, Option<[cudarc::driver::PinnedHostSlice<u8>; 2]>>> {
        // Grown by powers of two: a build's partitions grow one by one,
        // and pinning again for each would cost more than its copy.
        let piece = need
            .max(1)
            .next_power_of_two()
            .clamp(STAGING_LEAST, self.copy_buffer_bytes());
        let mut guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        if guard.as_ref().is_none_or(|[b, _]| b.len() < piece) {
            // The old pair goes first: both at once would be resident together.
            *guard = None;
            let e = |what: &'static str| cuda_err(what);
            // SAFETY: flags 0 asks for plain page-locked memory (the CPU reads
            // it back, which write-combined memory makes slow); a buffer is
            // only touched after the event recorded behind its last copy
            // has passed.
            *guard = Some(unsafe {
                [
                    self.ctx
                        .alloc_pinned_with_flags::<u8>(piece, 0)
                        .map_err(e("allocating pinned memory"))?,
                    self.ctx
                        .alloc_pinned_with_flags::<u8>(piece, 0)
                        .map_err(e("allocating pinned memory"))?,
                ]
            });
        }
        Ok(guard)
    }

    /// Copies `src` to a new device buffer through the two pinned staging
    /// buffers (a pageable copy ran at a few GB/s, slower still while
    /// another GPU's member copied too): the CPU's threads fill one while
    /// the device reads the other.
    pub fn upload(&self, src: &[u8]) -> Result<CudaSlice<u8>> {
        let e = |what: &'static str| cuda_err(what);
        let n = src.len();
        // SAFETY: every byte is written below before the buffer is read.
        let mut out = unsafe { self.stream.alloc::<u8>(n.max(1)) }.map_err(e("allocating"))?;
        if n == 0 {
            return Ok(out);
        }
        let mut guard = self.staging(n)?;
        let [b0, b1] = guard.as_mut().expect("allocated above");
        let piece = b0.len();
        let host: [&mut [u8]; 2] = [
            b0.as_mut_slice().map_err(e("pinned memory"))?,
            b1.as_mut_slice().map_err(e("pinned memory"))?,
        ];
        let events = [
            self.ctx.new_event(None).map_err(e("creating an event"))?,
            self.ctx.new_event(None).map_err(e("creating an event"))?,
        ];
        let mut used = [false; 2];
        for (j, chunk) in src.chunks(piece).enumerate() {
            let b = j % 2;
            if used[b] {
                events[b].synchronize().map_err(e("waiting for a copy"))?;
            }
            use rayon::prelude::*;
            host[b][..chunk.len()]
                .par_chunks_mut(1 << 20)
                .zip(chunk.par_chunks(1 << 20))
                .for_each(|(o, i)| o.copy_from_slice(i));
            let at = j * piece;
            let mut dst = out.slice_mut(at..at + chunk.len());
            let (dst_ptr, dst_sync) =
                cudarc::driver::DevicePtrMut::device_ptr_mut(&mut dst, &self.stream);
            // SAFETY: the pinned buffer holds chunk.len() bytes and is not
            // touched again before the event recorded behind this copy has
            // passed; dst is as long. (cudarc's memcpy_htod from a slice
            // would wait for the copy, leaving the CPU's filling of the
            // other buffer and the device's reading of this one in turn.)
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    dst_ptr,
                    &host[b][..chunk.len()],
                    self.stream.cu_stream(),
                )
            }
            .map_err(e("copying to the device"))?;
            drop(dst_sync);
            events[b]
                .record(&self.stream)
                .map_err(e("recording an event"))?;
            used[b] = true;
        }
        // The buffers are free again only once the device has read them.
        for (event, used) in events.iter().zip(used) {
            if used {
                event.synchronize().map_err(e("waiting for a copy"))?;
            }
        }
        Ok(out)
    }

    /// Copies `src` back through the two pinned staging buffers (a pageable
    /// copy into fresh memory ran at ~1 GB/s): the device fills one while
    /// the CPU threads copy the other into the result, faulting its pages in
    /// parallel.
    pub fn download(&self, src: &CudaSlice<u8>) -> Result<Vec<u8>> {
        let n = src.len();
        let mut out = vec![0u8; n];
        if n == 0 {
            return Ok(out);
        }
        let e = |what: &'static str| cuda_err(what);
        let mut guard = self.staging(n)?;
        let [b0, b1] = guard.as_mut().expect("allocated above");
        let piece = b0.len();
        let chunks = n.div_ceil(piece);
        let part = |j: usize| j * piece..(j * piece + piece).min(n);
        // With one stream cudarc records no events on pinned buffers (their
        // as_slice would not wait): own events mark each copy's end.
        let events = [
            self.ctx.new_event(None).map_err(e("creating an event"))?,
            self.ctx.new_event(None).map_err(e("creating an event"))?,
        ];
        let host: [&mut [u8]; 2] = [
            b0.as_mut_slice().map_err(e("pinned memory"))?,
            b1.as_mut_slice().map_err(e("pinned memory"))?,
        ];
        let copy = |j: usize, dst: &mut [u8]| -> Result<()> {
            let r = part(j);
            self.stream
                .memcpy_dtoh(&src.slice(r.clone()), &mut dst[..r.len()])
                .map_err(e("copying the values back"))?;
            events[j % 2]
                .record(&self.stream)
                .map_err(e("recording an event"))
        };
        copy(0, host[0])?;
        for j in 0..chunks {
            if j + 1 < chunks {
                copy(j + 1, host[(j + 1) % 2])?;
            }
            events[j % 2]
                .synchronize()
                .map_err(e("waiting for a copy"))?;
            let r = part(j);
            use rayon::prelude::*;
            out[r.clone()]
                .par_chunks_mut(1 << 20)
                .zip(host[j % 2][..r.len()].par_chunks(1 << 20))
                .for_each(|(o, i)| o.copy_from_slice(i));
        }
        Ok(out)
    }
}

fn fill_u32(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    name: &str,
    data: &[u32],
) -> Result<()> {
    let mut global = module
        .get_global(name, stream)
        .map_err(cuda_err(&format!("finding __constant__ {name}")))?;
    // SAFETY: the symbol is a u32 array of at least data.len() elements
    // (transmute_mut checks the byte length and returns None otherwise).
    let mut view = unsafe { global.transmute_mut::<u32>(data.len()) }
        .ok_or_else(|| Error::Cuda(format!("__constant__ {name} is smaller than its table")))?;
    stream
        .memcpy_htod(data, &mut view)
        .map_err(cuda_err(&format!("filling __constant__ {name}")))
}
