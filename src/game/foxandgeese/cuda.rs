//! Fox-and-Geese levels on a CUDA GPU (`kernels/foxandgeese.cu`): the twin
//! of `super::twin::LevelSolver`, decision for decision.
//!
//! A level's solve keeps five bytes per index on the device (the value, a
//! two-byte counter, what its captures allow, its best capture win) and the
//! level below's values until the first look has read them; the passes then
//! scan the values for the distance at hand instead of keeping bucket lists,
//! and read back two words each (the largest distance found so far, and the
//! lowest failure). 16 geese, the largest level (8.4 G indices), needs about
//! 50 GB.

use crate::game::NO_FAILURE;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::twin::{check_digest, LevelSolver};
use super::FoxAndGeese;
use crate::backend::cuda::{cuda_err, CudaDevice, Timed, BLOCK};
use crate::game::{
    DeviceCheckOptions, DeviceCheckReport, DeviceCheckRow, Game, KernelSolve, PartitionKernels,
    SolvedPartitions,
};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Value};
use crate::{Error, Result};

/// The Fox-and-Geese kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] = &[(
    "foxandgeese.cu",
    include_str!("../../../kernels/foxandgeese.cu"),
)];

/// Failure codes of kernels/foxandgeese.cu.
const FAIL_NO_LOWER: u64 = 1;
const FAIL_DISTANCE: u64 = 2;
/// Words `fg_check` writes per index.
const CHECK_WORDS: usize = 5;

/// The Fox-and-Geese kernels loaded on a [`CudaDevice`], with the board's
/// tables uploaded once.
pub struct FgCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    init: CudaFunction,
    candidates: CudaFunction,
    expand: CudaFunction,
    check: CudaFunction,
    board: CudaSlice<u8>,
    binom: CudaSlice<u64>,
    maps: CudaSlice<u64>,
    blocks: u32,
}

impl FgCuda {
    /// Compiles and loads `foxandgeese.cu` on `gpu` for `game`'s board.
    pub fn new(gpu: Arc<CudaDevice>, game: &FoxAndGeese) -> Result<FgCuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        let (board, binom, maps) = game.index.device_tables();
        let s = gpu.stream();
        let e = cuda_err("copying the Fox-and-Geese tables to the device");
        Ok(FgCuda {
            init: gpu.function(&module, "fg_init")?,
            candidates: gpu.function(&module, "fg_candidates")?,
            expand: gpu.function(&module, "fg_expand")?,
            check: gpu.function(&module, "fg_check")?,
            board: s.clone_htod(&board).map_err(&e)?,
            binom: s.clone_htod(&binom).map_err(&e)?,
            maps: s.clone_htod(&maps).map_err(&e)?,
            blocks: game.index.blocks() as u32,
            gpu,
            _module: module,
        })
    }

    /// Pushes `FG_TABLE_ARGS`, the leading arguments of the table kernels.
    fn push_tables<'a>(&'a self, launch: &mut cudarc::driver::LaunchArgs<'a>) {
        launch
            .arg(&self.board)
            .arg(&self.binom)
            .arg(&self.maps)
            .arg(&self.blocks);
    }

    /// The error a failure word stands for (`None`: nothing failed).
    fn failure(&self, k: usize, word: u64) -> Option<Error> {
        if word == NO_FAILURE {
            return None;
        }
        let index = word & 0x00ff_ffff_ffff_ffff;
        Some(match word >> 56 {
            FAIL_NO_LOWER => Error::GameContract {
                game: "foxandgeese".into(),
                message: format!(
                    "a capture from level {k} (index {index}) finds no value in level {}",
                    k.saturating_sub(1)
                ),
            },
            FAIL_DISTANCE => Error::NotAvailable(format!(
                "foxandgeese level {k}: index {index} needs a distance beyond {} plies, more \
                 than a value byte holds",
                Value::MAX_DISTANCE
            )),
            code => Error::Cuda(format!(
                "foxandgeese level {k}: unknown failure code {code} at index {index}"
            )),
        })
    }

    /// Level `k`'s values given level `k - 1`'s (none for `k = 0`), and the
    /// distances it went through: `LevelSolver::solve_level`'s bytes, and
    /// the seconds the solve took (uploads, kernels and the download).
    pub fn solve_level(
        &self,
        game: &FoxAndGeese,
        k: usize,
        lower: Option<&[u8]>,
    ) -> Result<Timed<(Vec<u8>, u32)>> {
        let t0 = Instant::now();
        let size = game.index.size(k);
        let padded = size.div_ceil(4) * 4;
        let lower_size = lower.map_or(0, |l| l.len() as u64);
        // Values (padded for fg_claim's words), counters, ext, cand, below.
        let need = padded + size.div_ceil(2) * 4 + 2 * size + lower_size;
        self.gpu.ensure_room(
            &format!("foxandgeese level {k}"),
            need,
            "build it with --backend cpu",
        )?;
        let s = self.gpu.stream();
        let e = cuda_err;
        let dev_lower = match lower {
            Some(l) if !l.is_empty() => self.gpu.upload(l)?,
            _ => s.alloc_zeros::<u8>(1).map_err(e("allocating"))?,
        };
        let mut values = s
            .alloc_zeros::<u8>(padded.max(4) as usize)
            .map_err(e("allocating the values"))?;
        let mut counters = s
            .alloc_zeros::<u32>(size.div_ceil(2).max(1) as usize)
            .map_err(e("allocating the counters"))?;
        let mut ext = s
            .alloc_zeros::<u8>(size.max(1) as usize)
            .map_err(e("allocating the capture bounds"))?;
        let mut cand = s
            .alloc_zeros::<u8>(size.max(1) as usize)
            .map_err(e("allocating the capture wins"))?;
        let mut top = s.alloc_zeros::<u32>(1).map_err(e("allocating"))?;
        let mut fail = s.clone_htod(&[NO_FAILURE]).map_err(e("allocating"))?;
        let k32 = k as u32;
        let cfg = self.gpu.grid(&self.init, BLOCK, size, 0)?;
        let mut launch = s.launch_builder(&self.init);
        self.push_tables(&mut launch);
        launch
            .arg(&k32)
            .arg(&size)
            .arg(&dev_lower)
            .arg(&lower_size)
            .arg(&mut values)
            .arg(&mut counters)
            .arg(&mut ext)
            .arg(&mut cand)
            .arg(&mut top)
            .arg(&mut fail);
        // SAFETY: the arguments match fg_init in foxandgeese.cu. The tables
        // are Index::device_tables' (FG_BOARD_BYTES board bytes, 33 x 33
        // binomials, 8 x 5 x 256 byte images), so every point, symmetry and
        // binomial the kernel looks up lies inside; ranks run below `size`,
        // which `values` (padded), `counters` (a u16 per index, two a word),
        // `ext` and `cand` cover; capture targets are read only below
        // `lower_size`, the length of `dev_lower`; top and fail hold one
        // element each.
        unsafe { launch.launch(cfg) }.map_err(e("launching fg_init"))?;
        let read_fail = |fail: &CudaSlice<u64>| -> Result<()> {
            let word = s.clone_dtoh(fail).map_err(e("copying back"))?[0];
            self.failure(k, word).map_or(Ok(()), Err)
        };
        read_fail(&fail)?;
        // Captures are read only at the first look.
        drop(dev_lower);
        let mut bound = s.clone_dtoh(&top).map_err(e("copying back"))?[0];
        let mut d = 0u32;
        let cfg_scan = self.gpu.grid(&self.candidates, BLOCK, size, 0)?;
        let cfg_expand = self.gpu.grid(&self.expand, BLOCK, size, 0)?;
        while d < bound {
            if d > Value::MAX_DISTANCE {
                return Err(Error::NotAvailable(format!(
                    "a distance of {d} plies does not fit a value byte"
                )));
            }
            // Capture wins are odd distances (a loss one level down, plus one).
            if d % 2 == 1 {
                let mut launch = s.launch_builder(&self.candidates);
                launch.arg(&size).arg(&d).arg(&mut values).arg(&cand);
                // SAFETY: the arguments match fg_candidates; `values` and
                // `cand` hold at least `size` bytes.
                unsafe { launch.launch(cfg_scan) }.map_err(e("launching fg_candidates"))?;
            }
            let mut launch = s.launch_builder(&self.expand);
            self.push_tables(&mut launch);
            launch
                .arg(&k32)
                .arg(&size)
                .arg(&d)
                .arg(&mut values)
                .arg(&mut counters)
                .arg(&ext)
                .arg(&mut top)
                .arg(&mut fail);
            // SAFETY: the arguments match fg_expand; tables as for fg_init;
            // every index the kernel forms is a rank of the level, below
            // `size`; `values` is padded to whole 4-byte words, which
            // fg_claim reads and swaps; `counters` holds ceil(size / 2)
            // words and `ext` `size` bytes; top and fail one element each.
            unsafe { launch.launch(cfg_expand) }.map_err(e("launching fg_expand"))?;
            bound = bound.max(s.clone_dtoh(&top).map_err(e("copying back"))?[0]);
            read_fail(&fail)?;
            d += 1;
        }
        drop((counters, ext, cand));
        let mut host = self.gpu.download(&values)?;
        host.truncate(size as usize);
        Ok(Timed {
            value: (host, d),
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// What `fg_check` gives for each (level, index) pair: `check_digest`'s
    /// five words each.
    pub fn check(&self, pairs: &[(usize, u64)]) -> Result<Vec<u64>> {
        let s = self.gpu.stream();
        let e = cuda_err;
        let packed: Vec<u64> = pairs
            .iter()
            .map(|&(k, r)| (k as u64) << 56 | (r & 0x00ff_ffff_ffff_ffff))
            .chain(std::iter::once(0))
            .collect();
        let n = pairs.len() as u64;
        let dev = s.clone_htod(&packed).map_err(e("copying the pairs"))?;
        let mut out = s
            .alloc_zeros::<u64>((pairs.len() * CHECK_WORDS).max(1))
            .map_err(e("allocating"))?;
        let cfg = self.gpu.grid(&self.check, BLOCK, n, 0)?;
        let mut launch = s.launch_builder(&self.check);
        self.push_tables(&mut launch);
        launch.arg(&dev).arg(&n).arg(&mut out);
        // SAFETY: the arguments match fg_check; tables as for fg_init;
        // `dev` holds n pairs (and one unread), each with a level of 0..=32
        // geese, `out` five words per pair. Indices beyond their level are
        // reported illegal, never read through.
        unsafe { launch.launch(cfg) }.map_err(e("launching fg_check"))?;
        let mut host = s.clone_dtoh(&out).map_err(e("copying back"))?;
        host.truncate(pairs.len() * CHECK_WORDS);
        Ok(host)
    }
}

/// Fox-and-Geese's [`PartitionKernels`] on a GPU: each level solved whole.
pub struct FgKernels {
    game: FoxAndGeese,
    cuda: FgCuda,
}

impl std::fmt::Debug for FgKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl FgKernels {
    /// The kernels of `game` on `gpu`.
    pub fn new(game: FoxAndGeese, gpu: Arc<CudaDevice>) -> Result<FgKernels> {
        let cuda = FgCuda::new(gpu, &game)?;
        Ok(FgKernels { game, cuda })
    }
}

impl PartitionKernels for FgKernels {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        let k = p.0 as usize;
        if k > self.game.max_geese() || solved.reached().is_some() {
            return None;
        }
        let below = k.checked_sub(1).map(FoxAndGeese::level);
        let lower = match below {
            None => None,
            Some(b) => Some(solved.get_full(b, self.game.partition_size(b))?),
        };
        Some(
            self.cuda
                .solve_level(&self.game, k, lower.as_deref())
                .map(|t| {
                    let (values, passes) = t.value;
                    KernelSolve {
                        device_seconds: Some(t.seconds),
                        ..KernelSolve::on_cpu(values, Some(passes))
                    }
                }),
        )
    }

    fn name(&self) -> String {
        format!("foxandgeese on cuda: {}", self.cuda.gpu.name())
    }

    fn device_check(&self, opts: &DeviceCheckOptions) -> Result<DeviceCheckReport> {
        let mut report = DeviceCheckReport::new(self.name(), opts);
        let game = &self.game;
        let idx = &*game.index;
        let top = game.max_geese();
        // 1. Index, moves and steps back of random indices of every level.
        let n = (opts.samples as u64)
            .min(1 << opts.work_log2.min(22))
            .max(1);
        let mut rng = SplitMix64::new(opts.seed);
        let pairs: Vec<(usize, u64)> = (0..n)
            .map(|_| {
                let k = rng.below(top as u64 + 1) as usize;
                (k, rng.below(idx.size(k)))
            })
            .collect();
        let t = Instant::now();
        let want: Vec<[u64; CHECK_WORDS]> = {
            use rayon::prelude::*;
            pairs
                .par_iter()
                .map(|&(k, r)| check_digest(game, k, r))
                .collect()
        };
        let cpu = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let got = self.cuda.check(&pairs)?;
        let gpu = t.elapsed().as_secs_f64();
        let legal = want.iter().filter(|w| w[0] != 0).count();
        let diff =
            (0..pairs.len()).find(|&i| want[i][..] != got[i * CHECK_WORDS..(i + 1) * CHECK_WORDS]);
        report.rows.push(
            DeviceCheckRow::new("fg_check", format!("levels 0..={top}"), n)
                .cpu(n, cpu)
                .gpu(n, gpu)
                .matched(
                    diff.is_none(),
                    match diff {
                        None => format!(
                            "unrank, rank, moves, captures and steps back of {n} random indices \
                             ({legal} legal; seed {})",
                            opts.seed
                        ),
                        Some(i) => format!(
                            "level {} index {}: twin {:x?}, device {:x?}",
                            pairs[i].0,
                            pairs[i].1,
                            want[i],
                            &got[i * CHECK_WORDS..(i + 1) * CHECK_WORDS]
                        ),
                    },
                ),
        );
        // 2. Whole levels, upwards, each from the level below as each side
        // solved it (the twin only while every level so far fit it).
        let twin = LevelSolver::new(game.clone());
        let (mut below_gpu, mut below_cpu): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
        for k in 0..=top {
            let size = idx.size(k);
            let target = format!("{k} geese ({size} indices)");
            if size > opts.solve_max_size {
                report.rows.push(
                    DeviceCheckRow::new("level solve", target, size)
                        .note("not run: more indices than --solve-max-size"),
                );
                break;
            }
            let solved = self.cuda.solve_level(game, k, below_gpu.as_deref())?;
            let (values, passes) = solved.value;
            let mut row =
                DeviceCheckRow::new("level solve", target, size).gpu(size, solved.seconds);
            let twin_here = size <= opts.cpu_max_size && (k == 0 || below_cpu.is_some());
            if twin_here {
                let t = Instant::now();
                let (want, want_passes) = twin.solve_level(k, below_cpu.as_deref())?;
                row = row.cpu(size, t.elapsed().as_secs_f64());
                let diff = want.iter().zip(&values).position(|(a, b)| a != b);
                let same = diff.is_none() && want.len() == values.len() && want_passes == passes;
                row = row.matched(
                    same,
                    match diff {
                        None if same => format!("every byte, {passes} passes"),
                        None => format!(
                            "{} bytes and {want_passes} passes (twin), {} and {passes} (device)",
                            want.len(),
                            values.len()
                        ),
                        Some(i) => {
                            format!("index {i}: twin byte {}, device {}", want[i], values[i])
                        }
                    },
                );
                below_cpu = Some(want);
            } else {
                row = row.note(format!("device only, {passes} passes"));
                below_cpu = None;
            }
            report.rows.push(row);
            below_gpu = Some(values);
        }
        Ok(report)
    }
}
