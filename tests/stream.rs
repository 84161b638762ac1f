//! The streamed path without a GPU: a stand-in device whose expander runs
//! the game's rules on the CPU but behaves as a device's does (several jobs
//! in flight, jobs no larger than its memory allows, requests in a scrambled
//! order inside each bucket). The partitions that `--gpu-mem-limit` sends
//! through the pipeline (the others are solved in memory), or a whole
//! external build, must give the in-memory build's bytes, for any limit and
//! disk count, after a device failure and a resume too, and say in
//! build-log.json what each pass moved.

use crate::common;

use common::{assert_same, contents, open};
use std::collections::VecDeque;
use std::path::Path;
use tbforge::game::{
    block_lookup_twin, expand_chunk_on_cpu, ChunkDone, ChunkExpander, ChunkJob, KernelSolve,
    OwnedRequests, PartitionKernels, Requests, SolvedPartitions, StreamTargets, STREAM_INTERNAL,
    STREAM_ONGOING,
};
use tbforge::pipeline::ExternalPlan;
use tbforge::registry::{AnyGame, GameVisitor};
use tbforge::solve::{build_game, BuildOptions, BuildReport, BUILD_LOG};
use tbforge::{Game, PartitionId, Result};

/// Device memory the stand-in says a partition's in-memory solve needs.
const BYTES_PER_INDEX: u64 = 4;

/// Kernels of a stand-in device: no in-memory solve, a streamed expander.
#[derive(Debug)]
struct StandIn {
    game: AnyGame,
    /// Jobs in flight at most.
    depth: usize,
    /// Jobs the device takes before it fails (a lost device), if it does.
    fails_after: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Whether it answers the passes that decide losses itself, as a
    /// device that holds the partition's can-block bits does (through the
    /// twin of its kernel).
    answers: bool,
}

impl StandIn {
    fn new(game: &AnyGame, depth: usize) -> StandIn {
        StandIn {
            game: game.clone(),
            depth,
            fails_after: None,
            answers: false,
        }
    }
}

impl PartitionKernels for StandIn {
    fn solve(&self, _: PartitionId, _: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        None
    }

    fn working_set(&self, _: PartitionId, size: u64) -> Option<u64> {
        Some(size * BYTES_PER_INDEX)
    }

    fn expander(
        &self,
        targets: &StreamTargets,
        device_bytes: u64,
    ) -> Option<Result<Box<dyn ChunkExpander>>> {
        // As a device would: the chunk its memory holds, two buffers in
        // flight, and requests of a quarter of its indices at most.
        let chunk = (device_bytes / 2 / 64 * 64).clamp(64, targets.max_chunk);
        Some(Ok(Box::new(StandInExpander {
            game: self.game.clone(),
            targets: targets.clone(),
            chunk,
            expanding: (chunk / 4).clamp(64, targets.max_expanding.max(64)),
            depth: self.depth,
            queue: VecDeque::new(),
            fails_after: self.fails_after.clone(),
            answers: self.answers,
            can_block: None,
        })))
    }

    fn name(&self) -> String {
        "stand-in device".into()
    }
}

struct StandInExpander {
    game: AnyGame,
    targets: StreamTargets,
    chunk: u64,
    expanding: u64,
    depth: usize,
    queue: VecDeque<Result<ChunkDone>>,
    fails_after: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    answers: bool,
    /// The bits of the pass it answers itself, if it does.
    can_block: Option<Vec<u64>>,
}

struct Expand<'a>(&'a StreamTargets, ChunkJob);

impl GameVisitor for Expand<'_> {
    type Output = Result<ChunkDone>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        expand_chunk_on_cpu(game, self.0, self.1)
    }
}

impl ChunkExpander for StandInExpander {
    fn depth(&self) -> usize {
        self.depth
    }

    fn max_chunk(&self) -> u64 {
        self.chunk
    }

    fn max_expanding(&self) -> u64 {
        self.expanding
    }

    fn name(&self) -> String {
        "stand-in device".into()
    }

    fn submit(&mut self, job: ChunkJob) -> Result<()> {
        if let Some(left) = &self.fails_after {
            let before = left.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            if before == 0 || before > u64::MAX / 2 {
                return Err(tbforge::Error::Cuda("the stand-in device was lost".into()));
            }
        }
        assert!(
            self.queue.len() < self.depth,
            "more jobs in flight than the depth"
        );
        let n = job.indices();
        assert!(n as u64 <= self.chunk, "a job larger than max_chunk");
        // A pass's jobs go without values: their flags say what expands.
        assert!(
            job.first_scan || job.flags_only(),
            "a pass's job sent with values"
        );
        let expanding = if job.first_scan {
            n
        } else {
            let flag = |j: usize| (job.flags[j / 4] >> (2 * (j % 4))) & 3;
            (0..n)
                .filter(|&j| flag(j) == STREAM_ONGOING | STREAM_INTERNAL)
                .count()
        };
        assert!(
            expanding as u64 <= self.expanding || n <= 64,
            "a job of {n} indices with {expanding} positions to expand, more than max_expanding"
        );
        // A pass's job starts and ends on positions that expand.
        assert!(
            job.first_scan || expanding > 0,
            "a pass's job with nothing to expand"
        );
        let answer = self.can_block.as_ref().filter(|_| !job.first_scan);
        let done = self
            .game
            .visit(Expand(&self.targets, job))
            .and_then(|mut done| {
                if let Some(bits) = answer {
                    let requests = std::mem::take(&mut done.requests);
                    done.blocked = block_lookup_twin(&requests, &self.targets, done.lo, n, bits)?;
                    done.looked_up = requests.len() as u64;
                    return Ok(done);
                }
                // A device's atomics leave any order inside a bucket: reverse each bucket.
                let low = self.targets.low_bits;
                let mut start = 0;
                while start < done.requests.len() {
                    let b = done.requests[start][0] >> low;
                    let end = start
                        + done.requests[start..]
                            .iter()
                            .take_while(|r| r[0] >> low == b)
                            .count();
                    done.requests[start..end].reverse();
                    start = end;
                }
                Ok(done)
            });
        self.queue.push_back(done);
        Ok(())
    }

    fn collect_into(
        &mut self,
        requests: &mut dyn FnMut(Requests<'_>) -> Result<()>,
    ) -> Result<ChunkDone> {
        let mut done = self.queue.pop_front().expect("a job was submitted")?;
        if !done.blocked.is_empty() {
            return Ok(done);
        }
        // In two batches, narrowed as a device's: the contract allows several.
        let all = std::mem::take(&mut done.requests);
        let (first, second) = all.split_at(all.len() / 2);
        let low = self.targets.low_bits;
        requests(OwnedRequests::from_keyed(first, done.lo, low)?.view())?;
        requests(OwnedRequests::from_keyed(second, done.lo, low)?.view())?;
        Ok(done)
    }

    fn answer_on_device(&mut self, can_block: Option<&[u64]>) -> Result<bool> {
        self.can_block = can_block.filter(|_| self.answers).map(<[u64]>::to_vec);
        Ok(self.can_block.is_some())
    }
}

struct Build(BuildOptions);

impl GameVisitor for Build {
    type Output = Result<BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        build_game(game, &self.0)
    }
}

fn build(g: &AnyGame, out: &Path, tweak: impl FnOnce(&mut BuildOptions)) -> BuildReport {
    let mut opts = BuildOptions::new(out);
    tweak(&mut opts);
    rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| g.visit(Build(opts)))
        .unwrap()
}

/// The in-memory build, then builds whose partitions over `--gpu-mem-limit`
/// (1/2 and 1/64 of the largest partition's working set, 1 and 3 disks)
/// are streamed, the others solved in memory; then a whole external build
/// streamed.
/// Returns how many passes the stand-in answered itself.
fn streamed_builds_agree(g: &AnyGame) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("memory");
    let memory = build(g, &reference, |_| {});
    assert_eq!(memory.mode, "memory");
    let expected = contents(&reference);
    let (largest, sizes) = g.visit(Sizes);
    // Builds where some partitions were streamed and others not.
    let mut mixed = 0;
    let mut answered_on_device = 0;
    // The device answers the passes that decide losses itself in two of
    // them, the host as their requests come back in the other.
    for (fraction, disks, depth, external, answers) in [
        (2, 1, 2, false, true),
        (64, 3, 3, false, false),
        (64, 1, 1, true, true),
    ] {
        let limit = largest * BYTES_PER_INDEX / fraction;
        let out = tmp
            .path()
            .join(format!("streamed-{fraction}-{disks}-{depth}-{external}"));
        let report = build(g, &out, |o| {
            o.kernels = Some(std::sync::Arc::new(StandIn {
                answers,
                ..StandIn::new(g, depth)
            }));
            o.gpu_mem_limit = Some(limit);
            o.disks = (0..disks)
                .map(|d| out.with_extension(format!("disk{d}")))
                .collect();
            // Small write buffers: several jobs per chunk.
            let plan = ExternalPlan::for_mem_limit(48 << 20);
            if external {
                o.external_plan = Some(plan);
            } else {
                o.mem_limit = Some(1 << 30);
            }
        });
        let what = format!(
            "--gpu-mem-limit {limit} (1/{fraction}), {disks} disk(s), depth {depth}, external {external}, answers {answers}"
        );
        assert_eq!(
            report.mode,
            if external { "external" } else { "memory" },
            "{what}"
        );
        assert!(report.streamed_because.is_some(), "{what}");
        assert_same(&contents(&out), &expected, &what);
        for d in 0..disks {
            let dir = out.with_extension(format!("disk{d}"));
            let left: Vec<_> = std::fs::read_dir(&dir)
                .map(|d| d.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
            assert!(
                left.is_empty(),
                "{what}: scratch left in {}: {left:?}",
                dir.display()
            );
        }
        let log: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(BUILD_LOG)).unwrap()).unwrap();
        let stages = log["partitions"].as_array().unwrap();
        // Where the build is in memory, exactly the partitions over the limit
        // went through the pipeline.
        for stage in stages {
            let name = stage["name"].as_str().unwrap();
            let size = sizes[name];
            let over = size * BYTES_PER_INDEX > limit;
            let piped = stage["solver"] == "external";
            assert_eq!(
                piped,
                external || over,
                "{what}: partition {name} of {size} indices solved by {}",
                stage["solver"]
            );
            assert_eq!(
                piped,
                stage["pipeline_passes"]
                    .as_array()
                    .is_some_and(|p| !p.is_empty())
                    || size == 0,
                "{what}: {name}"
            );
        }
        if stages.iter().any(|s| s["solver"] != "external") {
            mixed += 1;
        }
        let passes: Vec<&serde_json::Value> = stages
            .iter()
            .flat_map(|p| p["pipeline_passes"].as_array().into_iter().flatten())
            .collect();
        assert!(!passes.is_empty(), "{what}: no pass in the timeline");
        // A pass that decides its candidates by their marks expands none.
        let by_marks = |p: &serde_json::Value| {
            p["expander"]
                .as_str()
                .is_some_and(|e| e.starts_with("none: "))
        };
        // The others expand on the device. First scans whose earlier
        // values fit are answered in memory as their requests come, and so
        // are the passes that decide losses over a bit a position, unless
        // the device answers those itself.
        let on_device = |p: &serde_json::Value| {
            let e = &p["expander"];
            let in_memory =
                e == "stand-in device, answered in memory" && (!answers || p["pass"] == 0);
            e == "stand-in device"
                || in_memory
                || (answers && e == "stand-in device, answered on the device")
        };
        for p in &passes {
            assert!(on_device(p) || by_marks(p), "{what}: {p}");
        }
        answered_on_device += passes
            .iter()
            .filter(|p| p["expander"] == "stand-in device, answered on the device")
            .count();
        let jobs: u64 = passes.iter().map(|p| p["jobs"].as_u64().unwrap()).sum();
        let requests: u64 = passes.iter().map(|p| p["requests"].as_u64().unwrap()).sum();
        assert!(requests > 0, "{what}: no request in the timeline");
        assert!(
            jobs as f64 >= (largest / (limit / 2).max(64)) as f64,
            "{what}: {jobs} jobs, yet the largest partition alone needs more"
        );
        for p in &passes {
            if p["requests"].as_u64().unwrap() > 0 {
                let per = p["scratch_bytes_per_request"].as_f64().unwrap();
                if p["expander"] == "stand-in device" {
                    assert!(per > 0.0 && per <= 16.0, "{what}: {per} bytes per request");
                } else {
                    assert_eq!(per, 0.0, "{what}: requests answered in memory");
                }
            }
            assert!(p["bytes_read"].as_u64().unwrap() > 0, "{what}");
            // The steps run one after another within the pass, so the
            // process's CPU seconds counted against them are parts of the
            // pass's (a step counted twice, or outside its pass, breaks it).
            let cpu = |k: &str| {
                p["cpu_seconds"][k]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{what}: no {k} CPU seconds"))
            };
            let steps: f64 = ["expand", "answer", "combine", "marking"]
                .into_iter()
                .map(cpu)
                .sum();
            assert!(
                steps <= cpu("pass") + 1e-3,
                "{what}: steps took {steps} CPU s of a pass's {}",
                cpu("pass")
            );
            // Every scratch byte a pass moves is moved by one of its steps
            // (a step's bytes uncounted, or counted twice, breaks it).
            for (i, key) in ["bytes_read", "bytes_written"].into_iter().enumerate() {
                let by_step: u64 = ["expand", "answer", "combine", "marking"]
                    .into_iter()
                    .map(|k| p["step_bytes"][k][i].as_u64().unwrap_or(0))
                    .sum();
                assert_eq!(by_step, p[key].as_u64().unwrap(), "{what}: {key} by step");
            }
        }
        let pass_cpu: f64 = passes
            .iter()
            .map(|p| p["cpu_seconds"]["pass"].as_f64().unwrap())
            .sum();
        assert!(pass_cpu > 0.0, "{what}: the passes used no CPU time");
    }
    assert!(
        mixed > 0,
        "no build solved some partitions in memory and streamed others"
    );
    answered_on_device
}

/// The largest partition's size, and every partition's by name.
struct Sizes;

impl GameVisitor for Sizes {
    type Output = (u64, std::collections::HashMap<String, u64>);
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let layout = tbforge::game::Layout::new(game).unwrap();
        let sizes: std::collections::HashMap<String, u64> = (0..layout.len())
            .map(|s| (game.partition_name(layout.order()[s]), layout.size(s)))
            .collect();
        (sizes.values().copied().max().unwrap(), sizes)
    }
}

#[test]
fn connect4_streamed_builds_agree_with_memory() {
    // Its partitions have no move within them: first scans alone.
    streamed_builds_agree(&open("connect4", &[("width", "4"), ("height", "4")]));
}

#[test]
fn morris_streamed_builds_agree_with_memory() {
    let answered = streamed_builds_agree(&open("morris", &[("max", "3")]));
    assert!(answered > 0, "no pass was answered on the device");
}

/// The device is lost inside a streamed partition of an in-memory build
/// (checkpoints at every chunk): the build stops with the device's error,
/// and `--resume` finishes it with the in-memory build's bytes.
#[test]
fn a_streamed_partition_interrupted_by_the_device_resumes_exactly() {
    let g = open("morris", &[("max", "3")]);
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("memory");
    build(&g, &reference, |_| {});
    let expected = contents(&reference);
    let (largest, _) = g.visit(Sizes);
    let out = tmp.path().join("streamed");
    let disk = tmp.path().join("disk");
    let options = |o: &mut BuildOptions, fails_after: Option<u64>| {
        o.kernels = Some(std::sync::Arc::new(StandIn {
            fails_after: fails_after.map(|n| std::sync::Arc::new(n.into())),
            ..StandIn::new(&g, 2)
        }));
        // Over the limit: the largest partition, not the one before it.
        o.gpu_mem_limit = Some(largest * BYTES_PER_INDEX / 2);
        o.disks = vec![disk.clone()];
        o.checkpoint_every = std::time::Duration::ZERO;
    };
    let mut opts = BuildOptions::new(&out);
    options(&mut opts, Some(7));
    let failed = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| g.visit(Build(opts)));
    let err = failed.expect_err("the device was lost").to_string();
    assert!(err.contains("stand-in device was lost"), "{err}");
    assert!(!out.join("manifest.json").exists());
    // The build state holds a checkpoint inside the streamed partition: the
    // resume starts there, not over.
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(".tbforge-build.json")).unwrap()).unwrap();
    assert!(
        !state["current"].is_null(),
        "no checkpoint inside the partition: {state}"
    );
    build(&g, &out, |o| {
        options(o, None);
        o.resume = true;
    });
    assert_same(
        &contents(&out),
        &expected,
        "resumed after the device was lost",
    );
}

#[test]
fn gpu_mem_limit_without_a_gpu_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    let o = common::tbforge(&[
        "build",
        "tictactoe",
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--gpu-mem-limit",
        "1G",
    ]);
    assert!(!o.status.success());
    let err = common::stderr(&o);
    assert!(err.contains("--gpu-mem-limit"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.join("manifest.json").exists());
}
