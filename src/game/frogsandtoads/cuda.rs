//! The puzzle's searches on a CUDA GPU (`kernels/frogsandtoads.cu`): the
//! two-bit BFS from the start (`ft_two_bit_step`, one launch per layer, the
//! count of new indices read back after each), the byte BFS from the goal
//! (`ft_byte_step` per distance, then `ft_byte_finish`) and the check kernel
//! `ft_expand_check`. The whole index stays on the device (4.8 GB of bytes
//! for the 31-cell board); the values come back through
//! [`CudaDevice::download`]'s pinned buffers.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::super::index_bfs::distance_byte;
use super::twin::MAX_SUCCESSORS;
use super::FrogsAndToads;
use crate::backend::cuda::{cuda_err, CudaDevice, Timed, BLOCK};
use crate::value::Value;
use crate::{Error, Result};

/// The Frogs-and-Toads kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] = &[(
    "frogsandtoads.cu",
    include_str!("../../../kernels/frogsandtoads.cu"),
)];

/// The kernels' table sizes (`FT_MAX_CELLS * FT_SOURCES`, `FT_BINOM_SIDE`).
const SOURCE_SLOTS: usize = 31 * 8;
const BINOM_SIDE: usize = 32;

/// The kernels loaded on a [`CudaDevice`], with the board's tables.
pub struct FtCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    expand_fn: CudaFunction,
    two_bit_fn: CudaFunction,
    byte_fn: CudaFunction,
    finish_fn: CudaFunction,
    sources: CudaSlice<u8>,
    binom: CudaSlice<u32>,
    cells: u32,
    pieces: u32,
    sub: u64,
    size: u64,
}

impl FtCuda {
    /// Compiles and loads `frogsandtoads.cu` on `gpu` for `game`'s board.
    pub fn new(gpu: Arc<CudaDevice>, game: &FrogsAndToads) -> Result<FtCuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        let (sources, binom) = game.device_tables(SOURCE_SLOTS, BINOM_SIDE)?;
        let s = gpu.stream();
        let e = cuda_err("copying the Frogs-and-Toads tables to the device");
        Ok(FtCuda {
            expand_fn: gpu.function(&module, "ft_expand_check")?,
            two_bit_fn: gpu.function(&module, "ft_two_bit_step")?,
            byte_fn: gpu.function(&module, "ft_byte_step")?,
            finish_fn: gpu.function(&module, "ft_byte_finish")?,
            sources: s.clone_htod(&sources).map_err(&e)?,
            binom: s.clone_htod(&binom).map_err(&e)?,
            cells: game.cells() as u32,
            pieces: game.pieces() as u32,
            sub: game.size() / game.cells() as u64,
            size: game.size(),
            gpu,
            _module: module,
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.gpu
    }

    /// Pushes `FT_TABLE_ARGS`, the leading arguments of the search kernels.
    fn push_tables<'a>(&'a self, launch: &mut cudarc::driver::LaunchArgs<'a>) {
        launch
            .arg(&self.sources)
            .arg(&self.binom)
            .arg(&self.cells)
            .arg(&self.pieces)
            .arg(&self.sub);
    }

    fn check_indices(&self, idx: &[u64]) -> Result<()> {
        match idx.iter().find(|&&i| i >= self.size) {
            Some(i) => Err(Error::NotAvailable(format!(
                "index {i} is outside the puzzle's {} indices",
                self.size
            ))),
            None => Ok(()),
        }
    }

    /// Successors of the listed indices, `MAX_SUCCESSORS` slots each
    /// (unused: `u64::MAX`), as `super::twin::expand_listed`.
    pub fn expand(&self, idx: &[u64]) -> Result<Vec<u64>> {
        self.check_indices(idx)?;
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
        self.push_tables(&mut launch);
        launch.arg(&dev_idx).arg(&count).arg(&mut out);
        // SAFETY: the arguments match ft_expand_check in frogsandtoads.cu; the
        // tables are FrogsAndToads::device_tables' (31 x 8 sources, each a
        // cell of the board or FT_NONE; 32 x 32 binomials), `dev_idx` holds
        // `count` indices, each below the puzzle's size (check_indices), and
        // `out` holds MAX_SUCCESSORS slots for each, the most a cell has.
        unsafe { launch.launch(cfg) }.map_err(e("launching ft_expand_check"))?;
        let mut host = s.clone_dtoh(&out).map_err(e("copying successors back"))?;
        host.truncate(idx.len() * MAX_SUCCESSORS);
        Ok(host)
    }

    /// The two-bit BFS from index `start`: positions first reached at each
    /// depth (the twin's `super::super::index_bfs::two_bit_bfs`); host-clock seconds.
    pub fn two_bit_bfs(&self, start: u64) -> Result<Timed<Vec<u64>>> {
        self.check_indices(&[start])?;
        let t = Instant::now();
        let nwords = self.size.div_ceil(32);
        self.gpu.ensure_room(
            "frogsandtoads: the two-bit BFS",
            nwords * 8,
            "build with --backend cpu",
        )?;
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
            self.push_tables(&mut launch);
            launch
                .arg(&mut words)
                .arg(&nwords)
                .arg(&current)
                .arg(&next)
                .arg(&mut found);
            // SAFETY: the arguments match ft_two_bit_step; tables as for
            // ft_expand_check; `words` holds `nwords` words of 32 two-bit
            // entries, covering the puzzle's indices; entries past its size
            // stay 0, so only its indices are expanded, and each successor
            // is an index of the puzzle (the twin tests hold the moves to
            // the index); `found` holds one u64.
            unsafe { launch.launch(cfg) }.map_err(e("launching ft_two_bit_step"))?;
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
    /// run (the twin's `super::super::index_bfs::byte_bfs`); host-clock
    /// seconds, the download included.
    pub fn byte_bfs(&self, goal: u64) -> Result<Timed<(Vec<u8>, u32)>> {
        self.check_indices(&[goal])?;
        let t = Instant::now();
        let size = usize::try_from(self.size)
            .map_err(|_| Error::Cuda(format!("{} indices do not fit memory", self.size)))?;
        self.gpu.ensure_room(
            "frogsandtoads: the goal search (a byte per index)",
            self.size,
            "build with --backend cpu",
        )?;
        let s = self.gpu.stream();
        let e = cuda_err;
        let mut values: CudaSlice<u8> = s
            .alloc_zeros::<u8>(size)
            .map_err(e("allocating the values"))?;
        let g = goal as usize;
        s.memcpy_htod(&[distance_byte(0)?], &mut values.slice_mut(g..g + 1))
            .map_err(e("marking the goal"))?;
        let mut grew = s.alloc_zeros::<u32>(1).map_err(e("allocating a flag"))?;
        let size64 = self.size;
        let cfg = self.gpu.grid(&self.byte_fn, BLOCK, size64.div_ceil(8), 0)?;
        let mut d = 0u32;
        loop {
            let here = u32::from(distance_byte(d)?);
            let next = u32::from(distance_byte(d + 1)?);
            s.memset_zeros(&mut grew).map_err(e("clearing a flag"))?;
            let mut launch = s.launch_builder(&self.byte_fn);
            self.push_tables(&mut launch);
            launch
                .arg(&mut values)
                .arg(&size64)
                .arg(&here)
                .arg(&next)
                .arg(&mut grew);
            // SAFETY: the arguments match ft_byte_step; tables as for
            // ft_expand_check; `values` holds the puzzle's size in bytes, the
            // kernel reads groups of 8 only where all 8 lie inside and single
            // bytes below the size otherwise; every successor is an index of
            // the puzzle; `grew` holds one u32.
            unsafe { launch.launch(cfg) }.map_err(e("launching ft_byte_step"))?;
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
        // SAFETY: the arguments match ft_byte_finish; `values` holds `size64` bytes.
        unsafe { launch.launch(cfg) }.map_err(e("launching ft_byte_finish"))?;
        let host = self.gpu.download(&values)?;
        Ok(Timed {
            value: (host, d),
            seconds: t.elapsed().as_secs_f64(),
        })
    }
}
