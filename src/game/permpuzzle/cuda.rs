//! The permutation puzzles' kernels on a CUDA GPU (`kernels/permutation.cu`):
//! the two-bit BFS (`perm_two_bit_step`, one launch per layer, the count of
//! new indices read back after each), the byte BFS from the goal
//! (`perm_byte_step` per distance, then `perm_byte_finish`), and the check
//! kernel `perm_expand`. The whole index stays on the device; the values come
//! back through [`CudaDevice::download`]'s pinned buffers.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, PushKernelArg};

use super::twin::{distance_byte, PermSpec, MAX_SUCCESSORS};
use crate::backend::cuda::{cuda_err, CudaDevice, Timed, BLOCK};
use crate::value::Value;
use crate::{Error, Result};

/// The permutation puzzles' kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] = &[(
    "permutation.cu",
    include_str!("../../../kernels/permutation.cu"),
)];

/// The permutation kernels loaded on a [`CudaDevice`].
pub struct PermCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    expand_fn: CudaFunction,
    two_bit_fn: CudaFunction,
    byte_fn: CudaFunction,
    finish_fn: CudaFunction,
}

impl PermCuda {
    /// Compiles and loads `permutation.cu` on `gpu`.
    pub fn new(gpu: Arc<CudaDevice>) -> Result<PermCuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        Ok(PermCuda {
            expand_fn: gpu.function(&module, "perm_expand")?,
            two_bit_fn: gpu.function(&module, "perm_two_bit_step")?,
            byte_fn: gpu.function(&module, "perm_byte_step")?,
            finish_fn: gpu.function(&module, "perm_byte_finish")?,
            gpu,
            _module: module,
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.gpu
    }

    /// Successors of the listed indices, [`MAX_SUCCESSORS`] slots each
    /// (unused: `u64::MAX`), as [`PermSpec::expand_listed`].
    pub fn expand(&self, spec: &PermSpec, idx: &[u64]) -> Result<Timed<Vec<u64>>> {
        check_indices(spec, idx)?;
        let t = Instant::now();
        let s = self.gpu.stream();
        let e = cuda_err;
        let count = idx.len() as u64;
        let dev_idx = if idx.is_empty() {
            s.alloc_zeros::<u64>(1)
        } else {
            s.clone_htod(idx)
        }
        .map_err(e("copying indices to the device"))?;
        let mut out = s
            .alloc_zeros::<u64>((idx.len() * MAX_SUCCESSORS).max(1))
            .map_err(e("allocating successors"))?;
        let cfg = self.gpu.grid(&self.expand_fn, BLOCK, count, 0)?;
        let mut launch = s.launch_builder(&self.expand_fn);
        launch
            .arg(&spec.kind)
            .arg(&spec.n)
            .arg(&spec.a)
            .arg(&spec.b)
            .arg(&spec.half)
            .arg(&dev_idx)
            .arg(&count)
            .arg(&mut out);
        // SAFETY: the arguments match perm_expand in permutation.cu; `spec`
        // is one of PermSpec's constructors' (n <= 16 items, so every
        // permutation fits a u64 of nibbles); `dev_idx` holds `count` indices,
        // each below spec.size (check_indices), and `out` holds
        // MAX_SUCCESSORS u64 for each, at most what any index has.
        unsafe { launch.launch(cfg) }.map_err(e("launching perm_expand"))?;
        let mut host = s.clone_dtoh(&out).map_err(e("copying successors back"))?;
        host.truncate(idx.len() * MAX_SUCCESSORS);
        Ok(Timed {
            value: host,
            seconds: t.elapsed().as_secs_f64(),
        })
    }

    /// The two-bit BFS from index `start`: positions first reached at each
    /// depth (the twin's [`super::twin::two_bit_bfs`]); host-clock seconds.
    pub fn two_bit_bfs(&self, spec: &PermSpec, start: u64) -> Result<Timed<Vec<u64>>> {
        check_indices(spec, &[start])?;
        let t = Instant::now();
        let nwords = spec.size.div_ceil(32);
        self.gpu
            .ensure_room("the two-bit BFS", nwords * 8, "build with --backend cpu")?;
        let s = self.gpu.stream();
        let e = cuda_err;
        let mut words = s
            .alloc_zeros::<u64>(nwords as usize)
            .map_err(e("allocating the two-bit array"))?;
        let w = (start / 32) as usize;
        s.memcpy_htod(
            &[1u64 << (2 * (start % 32))],
            &mut words.slice_mut(w..w + 1),
        )
        .map_err(e("marking the start"))?;
        let mut found = s.alloc_zeros::<u64>(1).map_err(e("allocating a counter"))?;
        let cfg = self.gpu.grid(&self.two_bit_fn, BLOCK, nwords, 0)?;
        let mut layers = vec![1u64];
        loop {
            let depth = layers.len() as u64 - 1;
            let current = (depth % 2 + 1) as u32;
            let next = ((depth + 1) % 2 + 1) as u32;
            s.memset_zeros(&mut found)
                .map_err(e("clearing a counter"))?;
            let mut launch = s.launch_builder(&self.two_bit_fn);
            launch
                .arg(&spec.kind)
                .arg(&spec.n)
                .arg(&spec.a)
                .arg(&spec.b)
                .arg(&spec.half)
                .arg(&mut words)
                .arg(&nwords)
                .arg(&current)
                .arg(&next)
                .arg(&mut found);
            // SAFETY: the arguments match perm_two_bit_step; `words` holds
            // `nwords` words, 32 two-bit entries each, which cover spec.size
            // indices; entries past spec.size stay 0, so only indices of the
            // puzzle are expanded, and every successor
            // index of one is below spec.size (the twin tests hold expand to
            // the puzzle's own rank); `found` holds one u64.
            unsafe { launch.launch(cfg) }.map_err(e("launching perm_two_bit_step"))?;
            let n = s.clone_dtoh(&found).map_err(e("reading the layer count"))?[0];
            if n == 0 {
                break;
            }
            layers.push(n);
        }
        Ok(Timed {
            value: layers,
            seconds: t.elapsed().as_secs_f64(),
        })
    }

    /// The byte BFS from index `goal`: every index's value byte and the steps
    /// run (the twin's [`super::twin::byte_bfs`]); host-clock seconds,
    /// the download included.
    pub fn byte_bfs(&self, spec: &PermSpec, goal: u64) -> Result<Timed<(Vec<u8>, u32)>> {
        check_indices(spec, &[goal])?;
        let t = Instant::now();
        let size = usize::try_from(spec.size)
            .map_err(|_| Error::Cuda(format!("{} indices do not fit memory", spec.size)))?;
        self.gpu.ensure_room(
            "the goal search (a byte per index)",
            spec.size,
            "build with --backend cpu",
        )?;
        let s = self.gpu.stream();
        let e = cuda_err;
        let mut values = s
            .alloc_zeros::<u8>(size)
            .map_err(e("allocating the values"))?;
        let g = goal as usize;
        s.memcpy_htod(&[distance_byte(0)?], &mut values.slice_mut(g..g + 1))
            .map_err(e("marking the goal"))?;
        let mut grew = s.alloc_zeros::<u32>(1).map_err(e("allocating a flag"))?;
        let size64 = spec.size;
        let cfg = self.gpu.grid(&self.byte_fn, BLOCK, size64.div_ceil(8), 0)?;
        let mut d = 0u32;
        loop {
            let here = u32::from(distance_byte(d)?);
            let next = u32::from(distance_byte(d + 1)?);
            s.memset_zeros(&mut grew).map_err(e("clearing a flag"))?;
            let mut launch = s.launch_builder(&self.byte_fn);
            launch
                .arg(&spec.kind)
                .arg(&spec.n)
                .arg(&spec.a)
                .arg(&spec.b)
                .arg(&spec.half)
                .arg(&mut values)
                .arg(&size64)
                .arg(&here)
                .arg(&next)
                .arg(&mut grew);
            // SAFETY: the arguments match perm_byte_step; `values` holds
            // spec.size bytes, the kernel reads groups of 8 only where all 8
            // lie inside and single bytes below size otherwise; every
            // successor index of an index of the puzzle is below spec.size
            // (as for the two-bit step); `grew` holds one u32.
            unsafe { launch.launch(cfg) }.map_err(e("launching perm_byte_step"))?;
            let any = s.clone_dtoh(&grew).map_err(e("reading a flag"))?[0];
            d += 1;
            if any == 0 {
                break;
            }
        }
        let draw = u32::from(Value::DRAW.to_byte());
        let cfg = self.gpu.grid(&self.finish_fn, BLOCK, size64, 0)?;
        let mut launch = s.launch_builder(&self.finish_fn);
        launch.arg(&mut values).arg(&size64).arg(&draw);
        // SAFETY: the arguments match perm_byte_finish; `values` holds
        // `size64` bytes.
        unsafe { launch.launch(cfg) }.map_err(e("launching perm_byte_finish"))?;
        let host = self.gpu.download(&values)?;
        Ok(Timed {
            value: (host, d),
            seconds: t.elapsed().as_secs_f64(),
        })
    }
}

/// Errors unless every index is one of the puzzle's.
fn check_indices(spec: &PermSpec, idx: &[u64]) -> Result<()> {
    match idx.iter().find(|&&i| i >= spec.size) {
        Some(i) => Err(Error::NotAvailable(format!(
            "index {i} is outside the puzzle's {} indices",
            spec.size
        ))),
        None => Ok(()),
    }
}
