//! Checkers partitions on a CUDA GPU: kernels `checkers_first_scan`,
//! `checkers_pass` and `checkers_successors` of `kernels/checkers.cu`, with
//! their CPU twins in [`super::twin`].
//!
//! A solve uploads the partition's tables ([`CheckersTables`]) and the values
//! of every partition its moves lead to (concatenated, with each one's start
//! in `dep_base`; those this device solved and still keeps are copied on the
//! device), runs the first scan, lists the pending positions' successors on
//! the device, then runs one pass per distance until the loop ends where the
//! generic solver's does (the twin's loop, step for step), each pass reading
//! only the positions the one before left pending, and downloads the values.
//! The partition, its internal bits and its dependencies stay on the device
//! for the whole solve; its values stay after it, within a budget, for the
//! solves that read them.

use crate::game::NO_FAILURE;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::twin::{self, CheckersTables, SuccessorList, TwinSolved, MAX_SUCC};
use super::Checkers;
use crate::backend::cuda::{cuda_err, CudaDevice, ResidentValues, BLOCK, ROOM_MARGIN};
use crate::game::Game;
use crate::value::PartitionId;
use crate::value::Value;
use crate::{Error, Result};

/// The checkers kernel file.
pub const KERNEL_SOURCES: &[(&str, &str)] =
    &[("checkers.cu", include_str!("../../../kernels/checkers.cu"))];

/// Passes launched between two reads of their counts, once past the
/// dependencies' longest distance: at most this many - 1 passes run past the
/// loop's end, each of them a scan that finds nothing to decide.
const PASS_BATCH: usize = 8;
/// The most passes of one batch (the first batch runs every pass up to the
/// dependencies' longest distance).
const PASS_BATCH_MAX: usize = 256;

/// A partition's tables on the device.
pub(super) struct DeviceTables {
    desc: CudaSlice<u64>,
    mat: CudaSlice<u32>,
    prefix: CudaSlice<u64>,
    own0: u32,
    own1: u32,
    size0: u64,
    size: u64,
}

impl DeviceTables {
    /// Pushes `CK_TABLE_ARGS`, the leading arguments of every checkers kernel.
    pub(super) fn push<'a>(&'a self, launch: &mut cudarc::driver::LaunchArgs<'a>) {
        launch
            .arg(&self.desc)
            .arg(&self.mat)
            .arg(&self.prefix)
            .arg(&self.own0)
            .arg(&self.own1)
            .arg(&self.size0)
            .arg(&self.size);
    }
}

/// `CK_LONG_ARGS` on the device: the dependencies' long distances (keys
/// into the concatenated dependency values, ascending), this partition's
/// two bytes per index once allocated, and the ceiling.
struct DeviceLong {
    keys: CudaSlice<u64>,
    dist: CudaSlice<u32>,
    n: u64,
    own: CudaSlice<u16>,
    has_own: u32,
    ceiling: u32,
}

impl DeviceLong {
    /// Pushes `CK_LONG_ARGS`.
    fn push<'a>(&'a self, launch: &mut cudarc::driver::LaunchArgs<'a>) {
        launch
            .arg(&self.keys)
            .arg(&self.dist)
            .arg(&self.n)
            .arg(&self.own)
            .arg(&self.has_own)
            .arg(&self.ceiling);
    }
}

/// The checkers kernels loaded on a [`CudaDevice`].
pub struct CheckersCuda {
    gpu: Arc<CudaDevice>,
    // Stays loaded while its functions are in use.
    module: Arc<cudarc::driver::CudaModule>,
    first_scan: CudaFunction,
    pass: CudaFunction,
    successors: CudaFunction,
    list_pending: CudaFunction,
    fill_targets: CudaFunction,
    pass_listed: CudaFunction,
    /// The streamed path's chunk expansion (`super::stream`).
    stream_expand: CudaFunction,
    /// Partitions this device solved, kept for the solves that read them
    /// (uploading the dependencies again from host memory took 35 of 74
    /// device seconds through 6 pieces on an H200).
    resident: ResidentValues,
}

/// The pending positions' successors on the device (`checkers_fill_targets`),
/// and the positions a pass reads them for: those still pending. Each pass
/// reads one of two lists of (rank, span) and leaves the positions it did
/// not decide in the other, so that each reads only what is undecided.
struct SuccessorLists {
    /// Pending ranks, as many as `live` says.
    ranks: [CudaSlice<u64>; 2],
    /// Each rank's successors in `targets`: start << SPAN_SHIFT | length.
    spans: [CudaSlice<u64>; 2],
    /// The length of each list (one element each).
    live: [CudaSlice<u64>; 2],
    /// Which list the next pass reads.
    current: usize,
    targets: CudaSlice<u64>,
    /// Positions pending after the first scan: the lists' room.
    n: u64,
    /// Successors in all lists.
    total: u64,
}

/// `CK_SPAN_SHIFT` of checkers.cu: a span's length takes the bits below.
const SPAN_SHIFT: u32 = 24;

/// What a partition's values are kept under on the device.
fn resident_key(p: PartitionId) -> String {
    p.0.to_string()
}

impl std::fmt::Debug for CheckersCuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CheckersCuda({})", self.gpu.name())
    }
}

impl CheckersCuda {
    /// Compiles and loads `checkers.cu` on `gpu`.
    pub fn new(gpu: Arc<CudaDevice>) -> Result<CheckersCuda> {
        let (name, source) = KERNEL_SOURCES[0];
        let module = gpu.load_module(name, source, &[])?;
        Ok(CheckersCuda {
            first_scan: gpu.function(&module, "checkers_first_scan")?,
            pass: gpu.function(&module, "checkers_pass")?,
            successors: gpu.function(&module, "checkers_successors")?,
            list_pending: gpu.function(&module, "checkers_list_pending")?,
            fill_targets: gpu.function(&module, "checkers_fill_targets")?,
            pass_listed: gpu.function(&module, "checkers_pass_listed")?,
            stream_expand: gpu.function(&module, "checkers_stream_expand")?,
            // A third of the device: the solve's own buffers, which kept
            // values give way to, beside them.
            resident: ResidentValues::new(gpu.free_memory()? / 3),
            gpu,
            module,
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<CudaDevice> {
        &self.gpu
    }

    /// The loaded `checkers.cu` (common.cuh's kernels are in it too).
    pub(super) fn module(&self) -> &Arc<cudarc::driver::CudaModule> {
        &self.module
    }

    /// `checkers_stream_expand`.
    pub(super) fn stream_function(&self) -> &CudaFunction {
        &self.stream_expand
    }

    /// Uploads `t` on the device's own stream (not synchronised).
    pub(super) fn upload_tables(&self, t: &CheckersTables) -> Result<DeviceTables> {
        let s = self.gpu.stream();
        let e = cuda_err("copying the checkers tables to the device");
        let prefix = if t.prefix.is_empty() {
            s.alloc_zeros::<u64>(1)
        } else {
            s.clone_htod(&t.prefix)
        }
        .map_err(&e)?;
        Ok(DeviceTables {
            desc: s.clone_htod(&t.desc).map_err(&e)?,
            mat: s.clone_htod(&t.mat).map_err(&e)?,
            prefix,
            own0: t.own[0],
            own1: t.own[1],
            size0: t.size0,
            size: t.size,
        })
    }

    /// Solves the partition of `t` from its dependencies' values (`t` with
    /// the unsolved ones marked missing, their slices empty) and long
    /// distances (`deps_long`, as [`twin::solve`] takes them), bytes holding
    /// distances up to `ceiling`: the twin's bytes and long distances, and
    /// the seconds the device took.
    pub fn solve(
        &self,
        game: &Checkers,
        t: &CheckersTables,
        deps: &[&[u8]],
        deps_long: &[&[(u64, u32)]],
        lists: bool,
        ceiling: u32,
    ) -> Result<(TwinSolved, f64)> {
        if !(2..=Value::MAX_DISTANCE).contains(&ceiling) {
            return Err(Error::NotAvailable(format!(
                "checkers: a value byte ceiling of {ceiling} is outside 2..={}",
                Value::MAX_DISTANCE
            )));
        }
        let t0 = Instant::now();
        let size = t.size;
        let words = size.div_ceil(32);
        // Kept partitions give way before the solve is found too large.
        self.resident
            .make_room(&self.gpu, t.device_bytes().saturating_add(ROOM_MARGIN))?;
        self.gpu.ensure_room(
            &format!(
                "checkers partition {}: the solve",
                game.partition_name(t.partition)
            ),
            t.device_bytes(),
            "build with --gpu-mem-limit below that (the streamed path), or with --backend cpu",
        )?;
        let s = self.gpu.stream();
        // TBFORGE_TWIN_TRACE: where a solve's time goes, one line on stderr
        // (each step waits for the device before it is timed).
        let trace = std::env::var_os("TBFORGE_TWIN_TRACE").is_some();
        let mut steps = [0f64; 5];
        let mut lap = {
            let mut last = Instant::now();
            move |steps: &mut [f64; 5], i: usize| -> Result<()> {
                if trace {
                    s.synchronize()
                        .map_err(cuda_err("waiting for the device"))?;
                    let now = Instant::now();
                    steps[i] += (now - last).as_secs_f64();
                    last = now;
                }
                Ok(())
            }
        };
        let dt = self.upload_tables(t)?;
        let e = cuda_err;
        // Each dependency at its own start; missing ones take no room.
        let mut dep_base = Vec::with_capacity(deps.len());
        let mut total = 0u64;
        for d in deps {
            dep_base.push(total);
            total += d.len() as u64;
        }
        let mut dev_deps = s
            .alloc_zeros::<u8>(total.max(1) as usize)
            .map_err(e("allocating the dependencies' values"))?;
        for ((d, &base), &p) in deps.iter().zip(&dep_base).zip(&t.deps) {
            if d.is_empty() {
                continue;
            }
            let range = base as usize..base as usize + d.len();
            match self.resident.get(&resident_key(p), d) {
                Some(kept) => s.memcpy_dtod(&kept.slice(..d.len()), &mut dev_deps.slice_mut(range)),
                None => s.memcpy_htod(*d, &mut dev_deps.slice_mut(range)),
            }
            .map_err(e("copying the dependencies' values to the device"))?;
        }
        let mut keys = Vec::new();
        let mut dist = Vec::new();
        for (long, &base) in deps_long.iter().zip(&dep_base) {
            for &(r, d) in long.iter() {
                keys.push(base + r);
                dist.push(d);
            }
        }
        let n_long = keys.len() as u64;
        keys.push(0);
        dist.push(0);
        let mut long = DeviceLong {
            keys: s
                .clone_htod(&keys)
                .map_err(e("copying the dependencies' long distances"))?,
            dist: s
                .clone_htod(&dist)
                .map_err(e("copying the dependencies' long distances"))?,
            n: n_long,
            own: s.alloc_zeros::<u16>(1).map_err(e("allocating"))?,
            has_own: 0,
            ceiling,
        };
        // Two bytes per index, once a distance beyond the ceiling needs them.
        let own_long = |long: &mut DeviceLong| -> Result<()> {
            if long.has_own == 0 {
                long.own = s
                    .alloc_zeros::<u16>(size.max(1) as usize)
                    .map_err(e("allocating the long distances"))?;
                long.has_own = 1;
            }
            Ok(())
        };
        dep_base.push(0);
        let dev_base = s
            .clone_htod(&dep_base)
            .map_err(e("copying the dependencies' starts"))?;
        let mut values = s
            .alloc_zeros::<u8>(size.max(1) as usize)
            .map_err(e("allocating the values"))?;
        let mut internal = s
            .alloc_zeros::<u32>(words.max(1) as usize)
            .map_err(e("allocating the internal bits"))?;
        let mut count = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let mut max_seen = s.alloc_zeros::<u32>(1).map_err(e("allocating"))?;
        let mut fail = s.clone_htod(&[NO_FAILURE]).map_err(e("allocating"))?;
        lap(&mut steps, 0)?;
        let cfg = self.gpu.grid(&self.first_scan, BLOCK, size, 0)?;
        let read64 = |x: &CudaSlice<u64>, what: &str| -> Result<u64> {
            Ok(s.clone_dtoh(x).map_err(cuda_err(what))?[0])
        };
        loop {
            let mut launch = s.launch_builder(&self.first_scan);
            dt.push(&mut launch);
            long.push(&mut launch);
            launch
                .arg(&dev_deps)
                .arg(&dev_base)
                .arg(&mut values)
                .arg(&mut internal)
                .arg(&mut count)
                .arg(&mut max_seen)
                .arg(&mut fail);
            // SAFETY: the arguments match checkers_first_scan in checkers.cu.
            // The tables are CheckersTables::new's: every descriptor index the
            // kernel forms (own0/own1, a material's base plus rm * 7 + ro < 49)
            // lies in `desc`, every prefix offset plus an iM of its slice in
            // `prefix`, and `mat` has MAT_LEN entries for the counts 0..=8 the
            // kernel checks before indexing. Ranks run below `size`, the
            // values' length, and `internal` holds a bit for each. An external
            // descriptor names dependency j < deps.len(), whose values start
            // at dep_base[j] in `dev_deps` and hold its whole partition
            // (check_deps verified their lengths), so every read lies inside;
            // missing dependencies are marked so and never read. count,
            // max_seen and fail hold one element each.
            // The long arguments: `keys` and `dist` hold `n` entries (plus one
            // unread), `own` an element per rank below `size` where has_own is
            // set (one, never read, where it is not).
            unsafe { launch.launch(cfg) }.map_err(e("launching checkers_first_scan"))?;
            let word = read64(&fail, "copying back")?;
            if word >> 56 == twin::FAIL_OVERFLOW && long.has_own == 0 {
                // A distance beyond the ceiling: scan again with room for it
                // (the scan rewrites every value; its bits and counts restart).
                own_long(&mut long)?;
                s.memset_zeros(&mut internal).map_err(e("clearing"))?;
                s.memset_zeros(&mut count).map_err(e("clearing"))?;
                s.memset_zeros(&mut max_seen).map_err(e("clearing"))?;
                s.memcpy_htod(&[NO_FAILURE], &mut fail)
                    .map_err(e("clearing"))?;
                continue;
            }
            break;
        }
        let inside = read64(&count, "copying the first scan's counts back")?;
        let seen = s
            .clone_dtoh(&max_seen)
            .map_err(e("copying the first scan's counts back"))?[0];
        if let Some(err) = twin::failure(game, t, read64(&fail, "copying back")?) {
            return Err(err);
        }
        lap(&mut steps, 1)?;
        let mut d = 0u32;
        let mut listed = 0u64;
        // Trace: pending positions each pass found still undecided, summed.
        let (mut live_work, mut decided_so_far) = (0u64, 0u64);
        if inside > 0 {
            // Passes are launched in batches, each writing its own count, and
            // read back once a batch: a round trip per pass costs more than
            // a small partition's pass. Up to `seen` no pass can end the loop,
            // so the first batch runs them all. A pass past the loop's end
            // decides nothing (every later value would need a successor at a
            // distance no position has), which the counts confirm.
            let mut lists = if lists {
                self.successor_lists(t, &dt, &dev_base, &internal, inside, &mut fail)?
            } else {
                None
            };
            listed = lists.as_ref().map_or(0, |l| l.total);
            lap(&mut steps, 2)?;
            let cfg = match &lists {
                Some(l) => self.gpu.grid(&self.pass_listed, BLOCK, l.n, 0)?,
                None => self.gpu.grid(&self.pass, BLOCK, size, 0)?,
            };
            let mut decided = s
                .alloc_zeros::<u64>(PASS_BATCH_MAX)
                .map_err(e("allocating"))?;
            let mut next = 1u32;
            'batches: loop {
                let batch = if next <= seen {
                    (seen + 1 - next) as usize
                } else {
                    PASS_BATCH
                }
                .min(PASS_BATCH_MAX);
                s.memset_zeros(&mut decided)
                    .map_err(e("clearing the pass counts"))?;
                if next + batch as u32 > ceiling {
                    own_long(&mut long)?;
                }
                for i in 0..batch {
                    let pass_d = next + i as u32;
                    if pass_d > u32::from(u16::MAX) {
                        break;
                    }
                    let mut slot = decided.slice_mut(i..i + 1);
                    if let Some(l) = &mut lists {
                        let (from, to) = (l.current, 1 - l.current);
                        let [r0, r1] = &mut l.ranks;
                        let (ranks, ranks_next) = if from == 0 { (&*r0, r1) } else { (&*r1, r0) };
                        let [s0, s1] = &mut l.spans;
                        let (spans, spans_next) = if from == 0 { (&*s0, s1) } else { (&*s1, s0) };
                        let [c0, c1] = &mut l.live;
                        let (live, live_next) = if from == 0 { (&*c0, c1) } else { (&*c1, c0) };
                        s.memset_zeros(live_next)
                            .map_err(e("clearing the pending count"))?;
                        let mut launch = s.launch_builder(&self.pass_listed);
                        long.push(&mut launch);
                        launch
                            .arg(&dev_deps)
                            .arg(&mut values)
                            .arg(ranks)
                            .arg(spans)
                            .arg(live)
                            .arg(ranks_next)
                            .arg(spans_next)
                            .arg(live_next)
                            .arg(&l.targets)
                            .arg(&pass_d)
                            .arg(&mut slot)
                            .arg(&mut fail);
                        // SAFETY: the arguments match checkers_pass_listed
                        // in checkers.cu. The lists hold n elements each
                        // and `live` says how many of `ranks` and `spans`
                        // are read (at most n: the first list's n, then what
                        // a pass kept of them); the kernel writes at most as
                        // many to the others, counted in `live_next` (one
                        // element). A span's targets lie inside `targets`
                        // (successor_lists formed them from the counts that
                        // sized it), and every target is a rank below
                        // `size` (values' length) or CK_DEP_BIT with an
                        // index inside `dev_deps` (checkers_fill_targets
                        // formed them as ck_value reads, and checked each
                        // list's length); the count slot and fail hold one
                        // element each; the long arguments as for the first
                        // scan (a dep key is such an index into `dev_deps`;
                        // `own` holds an element per rank once a pass may
                        // pass the ceiling).
                        unsafe { launch.launch(cfg) }
                            .map_err(e("launching checkers_pass_listed"))?;
                        l.current = to;
                        continue;
                    }
                    let mut launch = s.launch_builder(&self.pass);
                    dt.push(&mut launch);
                    long.push(&mut launch);
                    launch
                        .arg(&dev_deps)
                        .arg(&dev_base)
                        .arg(&mut values)
                        .arg(&internal)
                        .arg(&pass_d)
                        .arg(&mut slot)
                        .arg(&mut fail);
                    // SAFETY: the arguments match checkers_pass in
                    // checkers.cu; tables, dependencies and values as for
                    // the first scan above. The kernel reads the `internal`
                    // word of each rank below `size` (ceil(size / 32) words,
                    // its length) and only ranks whose bit the first scan set;
                    // the count slot and fail hold one element each; the
                    // long arguments as for checkers_pass_listed.
                    unsafe { launch.launch(cfg) }.map_err(e("launching checkers_pass"))?;
                }
                let counts = s
                    .clone_dtoh(&decided)
                    .map_err(e("copying the passes' counts back"))?;
                if let Some(err) = twin::failure(game, t, read64(&fail, "copying back")?) {
                    return Err(err);
                }
                for (i, &n) in counts[..batch].iter().enumerate() {
                    if n > 0 || next + i as u32 <= seen {
                        live_work += inside - decided_so_far;
                    }
                    decided_so_far += n;
                    let pass_d = next + i as u32;
                    if pass_d > u32::from(u16::MAX) {
                        return Err(Error::DistanceOverflow {
                            game: "checkers".into(),
                            partition: game.partition_name(t.partition),
                            max: u32::from(u16::MAX),
                        });
                    }
                    if n == 0 && pass_d > seen {
                        if let Some(late) = counts[i + 1..batch].iter().position(|&n| n > 0) {
                            return Err(Error::Cuda(format!(
                                "checkers partition {}: pass {} decided positions after pass {pass_d} \
                                 decided none (a kernel bug; run `tbforge bench gpu checkers`)",
                                game.partition_name(t.partition),
                                pass_d + 1 + late as u32,
                            )));
                        }
                        d = pass_d;
                        break 'batches;
                    }
                }
                next += batch as u32;
            }
            lap(&mut steps, 3)?;
        }
        let mut out = self.gpu.download(&values)?;
        out.truncate(size as usize);
        drop(dev_deps);
        self.resident.keep(resident_key(t.partition), values, &out);
        let mut long_out = Vec::new();
        if long.has_own == 1 {
            let own = s
                .clone_dtoh(&long.own)
                .map_err(e("copying the long distances back"))?;
            long_out.extend(
                own.iter()
                    .take(size as usize)
                    .enumerate()
                    .filter(|(_, &x)| x != 0)
                    .map(|(r, &x)| (r as u64, u32::from(x))),
            );
        }
        lap(&mut steps, 4)?;
        if trace {
            eprintln!(
                "checkers gpu {}: {size} indices, {} dependency bytes, {inside} pending, \
                 {listed} successors listed, {d} passes, {live_work} live entries scanned; seconds: upload {:.4}, first scan {:.4}, \
                 lists {:.4}, passes {:.4}, download {:.4}",
                game.partition_name(t.partition),
                total,
                steps[0],
                steps[1],
                steps[2],
                steps[3],
                steps[4],
            );
        }
        Ok((
            TwinSolved {
                values: out,
                passes: d,
                long: long_out,
            },
            t0.elapsed().as_secs_f64(),
        ))
    }

    /// The pending positions' successor lists, built on the device, or None
    /// where they would not fit beside the solve (the passes then generate
    /// the moves again each time). A failure the fill finds lands in `fail`,
    /// read with the first batch of passes.
    fn successor_lists(
        &self,
        t: &CheckersTables,
        dt: &DeviceTables,
        dev_base: &CudaSlice<u64>,
        internal: &CudaSlice<u32>,
        inside: u64,
        fail: &mut CudaSlice<u64>,
    ) -> Result<Option<SuccessorLists>> {
        let s = self.gpu.stream();
        let e = cuda_err;
        // Kept partitions give way to the lists before the lists give way.
        let free = |need: u64| -> Result<bool> {
            self.resident
                .make_room(&self.gpu, need.saturating_add(ROOM_MARGIN))?;
            self.gpu.has_room(need)
        };
        // The two lists of ranks and spans, and their counts.
        if !free(inside.saturating_mul(32))? {
            return Ok(None);
        }
        let room = inside.max(1) as usize;
        let alloc = |what| s.alloc_zeros::<u64>(room).map_err(e(what));
        let mut ranks = alloc("allocating the pending ranks")?;
        let mut spans = alloc("allocating the list spans")?;
        let mut live = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let mut cursor = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let cfg = self.gpu.grid(&self.list_pending, BLOCK, t.size, 0)?;
        let mut launch = s.launch_builder(&self.list_pending);
        dt.push(&mut launch);
        launch
            .arg(internal)
            .arg(&mut ranks)
            .arg(&mut spans)
            .arg(&inside)
            .arg(&mut live)
            .arg(&mut cursor)
            .arg(&mut *fail);
        // SAFETY: the arguments match checkers_list_pending in checkers.cu;
        // the tables as for the first scan. The kernel reads the `internal`
        // word of each rank below `size` (ceil(size / 32) words, its
        // length) and writes ranks and spans only below `room` (`inside`
        // elements, their length); live, cursor and fail hold one element.
        unsafe { launch.launch(cfg) }.map_err(e("launching checkers_list_pending"))?;
        let n = s
            .clone_dtoh(&live)
            .map_err(e("copying the list's length back"))?[0];
        let total = s
            .clone_dtoh(&cursor)
            .map_err(e("copying the list's length back"))?[0];
        if n != inside {
            return Err(Error::Cuda(format!(
                "checkers partition {}: {n} pending positions listed against the first scan's \
                 count of {inside} (a kernel bug; run `tbforge bench gpu checkers`)",
                t.partition
            )));
        }
        if total >> (64 - SPAN_SHIFT) != 0
            || !free(total.saturating_add(n.saturating_mul(2)).saturating_mul(8))?
        {
            return Ok(None);
        }
        let mut targets = s
            .alloc_zeros::<u64>(total.max(1) as usize)
            .map_err(e("allocating the successor lists"))?;
        let cfg = self.gpu.grid(&self.fill_targets, BLOCK, n, 0)?;
        let mut launch = s.launch_builder(&self.fill_targets);
        dt.push(&mut launch);
        launch
            .arg(dev_base)
            .arg(&ranks)
            .arg(&spans)
            .arg(&n)
            .arg(&mut targets)
            .arg(fail);
        // SAFETY: the arguments match checkers_fill_targets in checkers.cu;
        // the tables and dep_base as for the first scan. ranks and spans
        // hold n elements (checked against the count above). Position i
        // writes its span's targets and never more (a list that would grow
        // past it fails instead); checkers_list_pending gave the spans
        // disjoint ranges below `total`, the targets' length; fail holds one
        // element.
        unsafe { launch.launch(cfg) }.map_err(e("launching checkers_fill_targets"))?;
        let alloc = |what| s.alloc_zeros::<u64>(room).map_err(e(what));
        Ok(Some(SuccessorLists {
            ranks: [ranks, alloc("allocating the pending ranks")?],
            spans: [spans, alloc("allocating the list spans")?],
            live: [live, s.alloc_zeros::<u64>(1).map_err(e("allocating"))?],
            current: 0,
            targets,
            n,
            total,
        }))
    }

    /// One launch of `checkers_successors`: `ranks` listed (or `lo..lo+n`
    /// with `ranks` empty, checksum only). Returns the lists (when listed),
    /// the checksum, the successors counted and the kernel's seconds.
    fn run_successors(
        &self,
        t: &CheckersTables,
        ranks: &[u64],
        lo: u64,
        n: u64,
    ) -> Result<(Vec<SuccessorList>, u64, u64, f64)> {
        if let Some(r) = ranks.iter().find(|&&r| r >= t.size) {
            return Err(Error::Cuda(format!(
                "rank {r} is outside checkers partition {} ({} indices)",
                t.partition, t.size
            )));
        }
        if ranks.is_empty() && lo.saturating_add(n) > t.size {
            return Err(Error::Cuda(format!(
                "ranks {lo}..{} are outside checkers partition {} ({} indices)",
                lo.saturating_add(n),
                t.partition,
                t.size
            )));
        }
        let s = self.gpu.stream();
        let e = cuda_err;
        let dt = self.upload_tables(t)?;
        let listed = !ranks.is_empty();
        let len = if listed { ranks.len() } else { 1 };
        let dev_ranks = if listed {
            s.clone_htod(ranks)
        } else {
            s.alloc_zeros::<u64>(1)
        }
        .map_err(e("copying ranks to the device"))?;
        let mut counts = s.alloc_zeros::<u32>(len).map_err(e("allocating"))?;
        let mut pids = s
            .alloc_zeros::<u32>(len * MAX_SUCC)
            .map_err(e("allocating"))?;
        let mut out = s
            .alloc_zeros::<u64>(len * MAX_SUCC)
            .map_err(e("allocating"))?;
        let mut sum = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let mut total = s.alloc_zeros::<u64>(1).map_err(e("allocating"))?;
        let null = 0u64;
        let work = if listed { ranks.len() as u64 } else { n };
        let cfg = self.gpu.grid(&self.successors, BLOCK, work, 0)?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            self.gpu
                .context()
                .new_event(timing)
                .map_err(cuda_err("creating an event"))
        };
        let (begin, end) = (event()?, event()?);
        begin.record(s).map_err(e("recording an event"))?;
        let mut launch = s.launch_builder(&self.successors);
        dt.push(&mut launch);
        if listed {
            launch
                .arg(&dev_ranks)
                .arg(&lo)
                .arg(&work)
                .arg(&mut counts)
                .arg(&mut pids)
                .arg(&mut out);
        } else {
            launch
                .arg(&null)
                .arg(&lo)
                .arg(&work)
                .arg(&null)
                .arg(&null)
                .arg(&null);
        }
        launch.arg(&mut sum).arg(&mut total);
        // SAFETY: the arguments match checkers_successors in checkers.cu;
        // the tables as in `solve`. Listed: `dev_ranks` holds `work` ranks,
        // each below the partition's size (checked above), and counts,
        // pids and out hold `work`, `work * MAX_SUCC` and `work * MAX_SUCC`
        // elements, the kernel writing at most MAX_SUCC pairs per rank.
        // Checksum mode: ranks lo..lo + work lie in the partition (checked
        // above), the null pointers are never dereferenced (the kernel
        // tests them), and the checksum and total hold one element each.
        unsafe { launch.launch(cfg) }.map_err(e("launching checkers_successors"))?;
        end.record(s).map_err(e("recording an event"))?;
        let sums = s.clone_dtoh(&sum).map_err(e("copying back"))?;
        let count = s.clone_dtoh(&total).map_err(e("copying back"))?[0];
        let ms = begin.elapsed_ms(&end).map_err(e("reading the timer"))?;
        let mut lists = Vec::new();
        if listed {
            let counts = s.clone_dtoh(&counts).map_err(e("copying back"))?;
            let pids = s.clone_dtoh(&pids).map_err(e("copying back"))?;
            let out = s.clone_dtoh(&out).map_err(e("copying back"))?;
            for (i, &k) in counts.iter().enumerate() {
                let shown = (k as usize).min(MAX_SUCC);
                let at = i * MAX_SUCC;
                lists.push((k, (0..shown).map(|j| (pids[at + j], out[at + j])).collect()));
            }
        }
        Ok((lists, sums[0], count, f64::from(ms) / 1e3))
    }

    /// Kernel `checkers_successors` over `ranks`: each rank's successor
    /// count and its first [`MAX_SUCC`] (partition id, rank) pairs (twin:
    /// [`twin::successors_lists`]).
    pub fn successors_lists(
        &self,
        t: &CheckersTables,
        ranks: &[u64],
    ) -> Result<Vec<SuccessorList>> {
        if ranks.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.run_successors(t, ranks, 0, 0)?.0)
    }

    /// Kernel `checkers_successors` over ranks `lo..lo+n`, checksum only
    /// (twin: [`twin::successors_checksum`]): (checksum, successors, kernel seconds).
    pub fn successors_checksum(
        &self,
        t: &CheckersTables,
        lo: u64,
        n: u64,
    ) -> Result<(u64, u64, f64)> {
        let (_, sum, count, secs) = self.run_successors(t, &[], lo, n)?;
        Ok((sum, count, secs))
    }
}
