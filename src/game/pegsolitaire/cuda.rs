//! Peg solitaire on a CUDA GPU (`kernels/pegsolitaire.cu`): each partition's
//! values from the partition with one peg fewer (`pg_solve`), and the
//! forward search one partition at a time (`pg_expand`, one bit per index,
//! the count of new indices read back after each). CPU twins: kernels.rs.

use crate::game::NO_FAILURE;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::{PegSolitaire, CELLS};
use crate::backend::cuda::{cuda_err, CudaDevice, ResidentValues, Timed, BLOCK, ROOM_MARGIN};
use crate::{Error, Result};

/// The peg solitaire kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] = &[(
    "pegsolitaire.cu",
    include_str!("../../../kernels/pegsolitaire.cu"),
)];

/// The kernels' table sizes (`PG_JUMPS`, `PG_BINOM_SIDE`).
const JUMPS: usize = 76;
const BINOM_SIDE: usize = CELLS + 1;

/// The kernels loaded on a [`CudaDevice`], with the board's tables.
pub struct PgCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    solve_fn: CudaFunction,
    expand_fn: CudaFunction,
    jumps: CudaSlice<u8>,
    binom: CudaSlice<u64>,
    /// The partition solved last, kept for the next solve, which reads it
    /// (uploading it again took up to 1.17 GB a solve).
    resident: ResidentValues,
}

impl PgCuda {
    /// Compiles and loads `pegsolitaire.cu` on `gpu` for `game`'s board.
    pub fn new(gpu: Arc<CudaDevice>, game: &PegSolitaire) -> Result<PgCuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        let jumps: Vec<u8> = game
            .jumps
            .iter()
            .flat_map(|&(f, o, t)| [f, o, t].map(|m| m.trailing_zeros() as u8))
            .collect();
        if jumps.len() != 3 * JUMPS {
            return Err(Error::NotAvailable(format!(
                "pegsolitaire: the kernels hold {JUMPS} jumps, the board has {}",
                jumps.len() / 3
            )));
        }
        let mut binom = vec![0u64; BINOM_SIDE * BINOM_SIDE];
        for n in 0..BINOM_SIDE {
            for k in 0..=n {
                binom[n * BINOM_SIDE + k] = crate::hash::Binomial::new(n, k)?.size();
            }
        }
        let s = gpu.stream();
        let e = cuda_err("copying the peg solitaire tables to the device");
        Ok(PgCuda {
            solve_fn: gpu.function(&module, "pg_solve")?,
            expand_fn: gpu.function(&module, "pg_expand")?,
            jumps: s.clone_htod(&jumps).map_err(&e)?,
            binom: s.clone_htod(&binom).map_err(&e)?,
            resident: ResidentValues::new(gpu.free_memory()? / 3),
            gpu,
            _module: module,
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.gpu
    }

    /// Partition `k`'s values from `lower` (partition `k - 1`'s): the twin's
    /// `super::kernels::solve_partition_twin`; host-clock seconds.
    pub fn solve(&self, game: &PegSolitaire, k: usize, lower: &[u8]) -> Result<Timed<Vec<u8>>> {
        let t = Instant::now();
        let size = game.hashes[k].size();
        let need = size + lower.len() as u64;
        self.resident
            .make_room(&self.gpu, need.saturating_add(ROOM_MARGIN))?;
        self.gpu.ensure_room(
            &format!("pegsolitaire: the partition of {k} pegs"),
            need,
            "build with --backend cpu",
        )?;
        let s = self.gpu.stream();
        let e = cuda_err;
        let kept = k
            .checked_sub(1)
            .and_then(|below| self.resident.get(&below.to_string(), lower));
        let dev_lower = match kept {
            Some(kept) => kept,
            None if lower.is_empty() => Arc::new(s.alloc_zeros::<u8>(1).map_err(e("allocating"))?),
            None => Arc::new(self.gpu.upload(lower)?),
        };
        let lower_size = lower.len() as u64;
        let mut values = s
            .alloc_zeros::<u8>(size.max(1) as usize)
            .map_err(e("allocating the values"))?;
        let mut fail = s.clone_htod(&[NO_FAILURE]).map_err(e("allocating"))?;
        let (k32, goal) = (k as u32, game.goal());
        let cfg = self.gpu.grid(&self.solve_fn, BLOCK, size, 0)?;
        let mut launch = s.launch_builder(&self.solve_fn);
        launch
            .arg(&self.jumps)
            .arg(&self.binom)
            .arg(&k32)
            .arg(&size)
            .arg(&*dev_lower)
            .arg(&lower_size)
            .arg(&goal)
            .arg(&mut values)
            .arg(&mut fail);
        // SAFETY: the arguments match pg_solve in pegsolitaire.cu: `jumps`
        // holds the 76 jumps' three cells (each below 33), `binom` 34 x 34
        // binomials; ranks run below `size` (C(33, k)), the length of
        // `values`; a jump's target is read only below `lower_size`, the
        // length of `dev_lower`; fail holds one element.
        unsafe { launch.launch(cfg) }.map_err(e("launching pg_solve"))?;
        let word = s.clone_dtoh(&fail).map_err(e("copying back"))?[0];
        if word != NO_FAILURE {
            return Err(Error::GameContract {
                game: "pegsolitaire".into(),
                message: format!(
                    "a jump from {k} pegs (index {}) finds no value among the positions with {}",
                    word & 0x00ff_ffff_ffff_ffff,
                    k.saturating_sub(1)
                ),
            });
        }
        drop(dev_lower);
        let mut host = self.gpu.download(&values)?;
        host.truncate(size as usize);
        self.resident.keep(k.to_string(), values, &host);
        Ok(Timed {
            value: host,
            seconds: t.elapsed().as_secs_f64(),
        })
    }

    /// The forward search from board `start`: the twin's
    /// [`super::kernels::search_twin`] (layers, reached count by peg
    /// count); host-clock seconds.
    pub fn search(&self, game: &PegSolitaire, start: u64) -> Result<Timed<super::kernels::Reach>> {
        let t = Instant::now();
        let s = self.gpu.stream();
        let e = cuda_err;
        let mut reachable = vec![0u64; CELLS + 1];
        let mut k = start.count_ones() as usize;
        let nwords = |k: usize| game.hashes[k].size().div_ceil(64);
        let alloc = |k: usize| -> Result<CudaSlice<u64>> {
            self.gpu.ensure_room(
                "pegsolitaire: the forward search",
                8 * nwords(k) + 8 * nwords(k.saturating_sub(1)),
                "build with --backend cpu",
            )?;
            s.alloc_zeros::<u64>(nwords(k).max(1) as usize)
                .map_err(e("allocating the reached bits"))
        };
        let mut current = alloc(k)?;
        let r = game.hashes[k].rank(start);
        let w = (r / 64) as usize;
        s.memcpy_htod(&[1u64 << (r % 64)], &mut current.slice_mut(w..w + 1))
            .map_err(e("marking the start"))?;
        let mut layers = vec![1u64];
        reachable[k] = 1;
        let mut found = s.alloc_zeros::<u64>(1).map_err(e("allocating a counter"))?;
        while k > 0 {
            let mut next = alloc(k - 1)?;
            s.memset_zeros(&mut found)
                .map_err(e("clearing a counter"))?;
            let (k32, words) = (k as u32, nwords(k));
            let cfg = self.gpu.grid(&self.expand_fn, BLOCK, words, 0)?;
            let mut launch = s.launch_builder(&self.expand_fn);
            launch
                .arg(&self.jumps)
                .arg(&self.binom)
                .arg(&k32)
                .arg(&words)
                .arg(&current)
                .arg(&mut next)
                .arg(&mut found);
            // SAFETY: the arguments match pg_expand; tables as for pg_solve;
            // `current` holds `words` words, one bit per index of the
            // partition with k pegs (bits past its size stay 0), and every
            // successor is a rank of the partition with k - 1 pegs, whose
            // bits `next` holds; `found` holds one u64.
            unsafe { launch.launch(cfg) }.map_err(e("launching pg_expand"))?;
            let n = s.clone_dtoh(&found).map_err(e("reading the layer count"))?[0];
            if n == 0 {
                break;
            }
            k -= 1;
            layers.push(n);
            reachable[k] = n;
            current = next;
        }
        Ok(Timed {
            value: (layers, reachable),
            seconds: t.elapsed().as_secs_f64(),
        })
    }
}
