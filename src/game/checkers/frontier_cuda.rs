//! The checkers frontier search on a CUDA GPU: the `checkers_frontier_*`
//! kernels of `kernels/checkers.cu`, driven step for step as their twin
//! ([`super::frontier`]) runs them.
//!
//! Every stored level stays on the device for the whole search (the
//! repetition check walks up the parents, and the backup reads each level
//! once more); the last level is scored without being stored. A stored
//! node costs 40 bytes (the node, its count, first child and value), 28 on
//! the last stored level, so the memory bounds the depth: from the
//! opening, depth 13 stores 0.49 G nodes (about 13 GB) and evaluates
//! 1.77 G leaves; depth 14 stores 2.26 G nodes (about 69 GB) and evaluates
//! 8 G. A search that does not fit says so before it allocates.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::frontier::{best_line, check_args, levels_of, Node, Stored, SCAN_TILE};
use super::rules::Position;
use crate::backend::cuda::{cuda_err, CudaDevice, BLOCK, ROOM_MARGIN};
use crate::game::{FrontierLevels, FrontierReport, FrontierSearch};
use crate::{Error, Result};

/// Bytes of device memory a stored node takes, all its buffers together:
/// the node, its value, and, below the last stored level, its count (until
/// scanned) and first child.
const NODE_BYTES: u64 = 24 + 4 + 4 + 8;
/// The same on the last stored level: the node and its value.
const LAST_NODE_BYTES: u64 = 24 + 4;
/// Threads of a scan block (`CK_SCAN_THREADS`).
const SCAN_THREADS: u32 = 256;

/// The frontier kernels loaded on a GPU.
pub struct FrontierCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    _module: Arc<cudarc::driver::CudaModule>,
    count: CudaFunction,
    scan_tiles: CudaFunction,
    scan_add: CudaFunction,
    expand: CudaFunction,
    leaves: CudaFunction,
    backup: CudaFunction,
}

impl FrontierCuda {
    /// Compiles and loads `checkers.cu` on `gpu`.
    pub fn new(gpu: Arc<CudaDevice>) -> Result<FrontierCuda> {
        let (name, source) = super::cuda::KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        let f = |entry: &str| gpu.function(&module, entry);
        Ok(FrontierCuda {
            count: f("checkers_frontier_count")?,
            scan_tiles: f("checkers_frontier_scan_tiles")?,
            scan_add: f("checkers_frontier_scan_add")?,
            expand: f("checkers_frontier_expand")?,
            leaves: f("checkers_frontier_leaves")?,
            backup: f("checkers_frontier_backup")?,
            _module: module,
            gpu,
        })
    }

    /// Errors unless `nodes` more stored nodes fit in the device's free memory.
    fn fits(&self, level: usize, nodes: u64, depth: u32) -> Result<()> {
        let free = self.gpu.free_memory()?;
        let per = if level + 1 == depth as usize {
            LAST_NODE_BYTES
        } else {
            NODE_BYTES
        };
        let need = nodes.saturating_mul(per).saturating_add(ROOM_MARGIN);
        if need > free {
            return Err(Error::Cuda(format!(
                "depth {depth}: level {level} of the frontier holds {nodes} nodes, {:.1} GB of \
                 device memory, and {:.1} GB are free on {}: search at most {} plies on this GPU",
                need as f64 / 1e9,
                free as f64 / 1e9,
                self.gpu.name(),
                level
            )));
        }
        Ok(())
    }

    /// Device pointers of the levels, as the kernels index them.
    fn level_table(&self, levels: &[CudaSlice<u32>]) -> Result<CudaSlice<u64>> {
        let s = self.gpu.stream();
        let ptrs: Vec<u64> = levels
            .iter()
            .map(|l| {
                let (p, _sync) = l.device_ptr(s);
                p
            })
            .collect();
        s.clone_htod(&ptrs)
            .map_err(cuda_err("copying the level table to the device"))
    }

    fn config(&self, f: &CudaFunction, work: u64) -> Result<LaunchConfig> {
        self.gpu.grid(f, BLOCK, work, 0)
    }

    /// Exclusive prefix sums of `n` values, `u32` or `u64` (the other null).
    fn scan(
        &self,
        in32: Option<&CudaSlice<u32>>,
        in64: Option<&CudaSlice<u64>>,
        n: u64,
    ) -> Result<CudaSlice<u64>> {
        let s = self.gpu.stream();
        let e = cuda_err;
        let tiles = n.div_ceil(SCAN_TILE as u64).max(1);
        let mut out = s.alloc_zeros::<u64>(n as usize).map_err(e("allocating"))?;
        let mut sums = s
            .alloc_zeros::<u64>(tiles as usize)
            .map_err(e("allocating"))?;
        let null = 0u64;
        let mut launch = s.launch_builder(&self.scan_tiles);
        match (in32, in64) {
            (Some(a), _) => launch.arg(a).arg(&null),
            (None, Some(b)) => launch.arg(&null).arg(b),
            (None, None) => return Err(Error::Cuda("a scan of nothing (a bug)".into())),
        };
        launch.arg(&n).arg(&mut out).arg(&mut sums);
        let cfg = LaunchConfig {
            grid_dim: (tiles as u32, 1, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match checkers_frontier_scan_tiles; the
        // input holds n values (the other pointer null, never read), out n,
        // and sums one per tile: each block reads and writes its own tile's
        // indices below n and its own sum. The kernel's block size is
        // CK_SCAN_THREADS, which this launch gives.
        unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_scan_tiles"))?;
        if tiles > 1 {
            let offsets = self.scan(None, Some(&sums), tiles)?;
            let mut launch = s.launch_builder(&self.scan_add);
            launch.arg(&mut out).arg(&n).arg(&offsets);
            let cfg = self.config(&self.scan_add, n)?;
            // SAFETY: out holds n values and offsets one per tile of
            // SCAN_TILE of them, as the kernel indexes it.
            unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_scan_add"))?;
        }
        Ok(out)
    }
}

impl FrontierCuda {
    /// The search; with `keep`, every stored level's nodes and values
    /// copied back too.
    fn run(
        &self,
        roots: &[Position],
        depth: u32,
        win: i32,
        keep: bool,
    ) -> Result<(FrontierReport, Option<Stored>)> {
        check_args(roots.len(), depth, win)?;
        let t0 = Instant::now();
        let s = self.gpu.stream();
        let e = cuda_err;
        let last = depth as usize - 1;
        let words: Vec<u32> = roots.iter().flat_map(|p| Node::root(p).words()).collect();
        let mut sizes = vec![roots.len() as u64];
        let mut levels = vec![s.clone_htod(&words).map_err(e("copying the roots"))?];
        let mut offsets: Vec<CudaSlice<u64>> = Vec::new();
        for l in 0..last {
            let n = sizes[l];
            let table = self.level_table(&levels)?;
            let level = l as u32;
            // One count more, left 0: the scan's last value is the total.
            let mut counts = s
                .alloc_zeros::<u32>(n as usize + 1)
                .map_err(e("allocating"))?;
            let mut launch = s.launch_builder(&self.count);
            launch.arg(&table).arg(&level).arg(&n).arg(&mut counts);
            let cfg = self.config(&self.count, n)?;
            // SAFETY: the arguments match checkers_frontier_count; the table
            // holds a pointer to each level 0..=l, level l holding n nodes of
            // six words, and counts n + 1 values (the kernel writes n).
            unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_count"))?;
            let off = self.scan(Some(&counts), None, n + 1)?;
            drop(counts);
            let total = s
                .clone_dtoh(&off.slice(n as usize..))
                .map_err(e("copying back"))?[0];
            if total > u64::from(u32::MAX) {
                return Err(Error::Cuda(format!(
                    "depth {depth}: level {} of the frontier holds {total} nodes, more than a \
                     level's 32-bit parents address: search less deep",
                    l + 1
                )));
            }
            self.fits(l + 1, total, depth)?;
            let mut next = s
                .alloc_zeros::<u32>(6 * total.max(1) as usize)
                .map_err(e("allocating"))?;
            let mut launch = s.launch_builder(&self.expand);
            launch
                .arg(&table)
                .arg(&level)
                .arg(&n)
                .arg(&off)
                .arg(&mut next);
            let cfg = self.config(&self.expand, n)?;
            // SAFETY: the arguments match checkers_frontier_expand; the table
            // as for the count, off holds n + 1 exclusive sums of the counts
            // the kernel's own move generation gives, so node i writes exactly
            // off[i + 1] - off[i] nodes from off[i] on, all below total, the
            // nodes `next` holds; the repetition walk reads levels 0..=l only.
            unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_expand"))?;
            offsets.push(off);
            levels.push(next);
            sizes.push(total);
        }
        let n = sizes[last];
        let table = self.level_table(&levels)?;
        let mut values = s
            .alloc_zeros::<i32>(n.max(1) as usize)
            .map_err(e("allocating"))?;
        let mut leaves = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            self.gpu
                .context()
                .new_event(timing)
                .map_err(cuda_err("creating an event"))
        };
        let (begin, end) = (event()?, event()?);
        begin.record(s).map_err(e("recording an event"))?;
        let level = last as u32;
        let mut launch = s.launch_builder(&self.leaves);
        launch
            .arg(&table)
            .arg(&level)
            .arg(&n)
            .arg(&win)
            .arg(&mut values)
            .arg(&mut leaves);
        let cfg = self.config(&self.leaves, n)?;
        // SAFETY: the arguments match checkers_frontier_leaves; the table
        // holds levels 0..=last, level `last` n nodes, values n slots, and
        // leaves one counter; the repetition walk reads levels 0..=last only.
        unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_leaves"))?;
        end.record(s).map_err(e("recording an event"))?;
        let n_leaves = s.clone_dtoh(&leaves).map_err(e("copying back"))?[0];
        let leaf_seconds = f64::from(begin.elapsed_ms(&end).map_err(e("reading the timer"))?) / 1e3;
        let mut level_values: Vec<Option<CudaSlice<i32>>> = (0..depth).map(|_| None).collect();
        for l in (0..last).rev() {
            let n = sizes[l];
            let mut v = s
                .alloc_zeros::<i32>(n.max(1) as usize)
                .map_err(e("allocating"))?;
            let level = l as u32;
            let mut launch = s.launch_builder(&self.backup);
            launch
                .arg(&table)
                .arg(&level)
                .arg(&n)
                .arg(&offsets[l])
                .arg(&values)
                .arg(&win)
                .arg(&mut v);
            let cfg = self.config(&self.backup, n)?;
            // SAFETY: the arguments match checkers_frontier_backup; level l
            // holds n nodes, offsets[l] n + 1 sums whose last is the size of
            // level l + 1, which `values` (its values) holds, and v n slots.
            unsafe { launch.launch(cfg) }.map_err(e("launching checkers_frontier_backup"))?;
            level_values[l + 1] = Some(std::mem::replace(&mut values, v));
        }
        let root_values = s
            .clone_dtoh(&values.slice(..roots.len()))
            .map_err(e("copying back"))?;
        // The first root's line, as the twin finds it, a few values at a time.
        let (line, best_moves) = best_line(
            last,
            win,
            |l, i| {
                let range = s
                    .clone_dtoh(&offsets[l].slice(i..i + 2))
                    .map_err(e("copying back"))?;
                let (lo, hi) = (range[0] as usize, range[1] as usize);
                let values = match &level_values[l + 1] {
                    Some(v) if lo < hi => {
                        s.clone_dtoh(&v.slice(lo..hi)).map_err(e("copying back"))?
                    }
                    _ => Vec::new(),
                };
                Ok((lo, values))
            },
            |l, i| {
                let w = s
                    .clone_dtoh(&levels[l].slice(6 * i..6 * i + 6))
                    .map_err(e("copying back"))?;
                Ok(Node::from_words(&w))
            },
        )?;
        let stored = if keep {
            let mut nodes = Vec::with_capacity(levels.len());
            let mut vals = Vec::with_capacity(levels.len());
            for (l, level) in levels.iter().enumerate() {
                let n = sizes[l] as usize;
                let words = s.clone_dtoh(level).map_err(e("copying back"))?;
                nodes.push(words[..6 * n].chunks(6).map(Node::from_words).collect());
                let v = if l == 0 {
                    Some(&values)
                } else {
                    level_values[l].as_ref()
                };
                vals.push(match v {
                    Some(v) if n > 0 => s.clone_dtoh(&v.slice(..n)).map_err(e("copying back"))?,
                    _ => Vec::new(),
                });
            }
            Some((nodes, vals))
        } else {
            None
        };
        sizes.push(n_leaves);
        let report = FrontierReport {
            values: root_values,
            line,
            best_moves,
            levels: sizes,
            seconds: t0.elapsed().as_secs_f64(),
            leaf_seconds,
        };
        Ok((report, stored))
    }
}

impl FrontierSearch<Position> for FrontierCuda {
    fn name(&self) -> String {
        format!("cuda: {}", self.gpu.name())
    }

    fn search(&self, roots: &[Position], depth: u32, win: i32) -> Result<FrontierReport> {
        Ok(self.run(roots, depth, win, false)?.0)
    }

    fn search_levels(
        &self,
        root: &Position,
        depth: u32,
        win: i32,
    ) -> Result<(FrontierReport, FrontierLevels<Position>)> {
        let (report, stored) = self.run(std::slice::from_ref(root), depth, win, true)?;
        let (nodes, values) = stored.unwrap_or_default();
        Ok((report, levels_of(root, &nodes, &values)))
    }
}
