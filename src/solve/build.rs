//! A whole build: forward search, every partition solved in order (in memory
//! or through the external-memory pipeline), each written as a tablebase file
//! as soon as it is solved, then manifest.json.
//!
//! The build is durable at every step: a state file in the output directory
//! records the forward-search results, the finished partitions' manifest
//! entries and, inside a partition solved externally, the last finished pass.
//! A build killed at any moment and run again with `--resume` continues from
//! there and ends with the same bytes as an uninterrupted one.

use super::bfs::{frontier_bfs, two_bit_bfs};
use super::layer_search::{layered_forwards, layered_search};
use super::lock::DirLocks;
use super::retro::solve_partition_team;
use super::schedule::ExternalSolver;
use super::stages::{PartitionStage, Solver};
use super::Progress;
use crate::dist::{Solo, Team};
use crate::format::{
    self, file_name, write_manifest, Counts, FileEntry, Manifest, TableFile, ValueEncoding,
    WriteOptions, FORMAT_VERSION,
};
use crate::game::Layout;
use crate::game::{
    Forward, Game, GameInfo, KernelSolve, PartitionKernels, PartitionValues, ReachedValues,
    SolvedPartitions,
};
use crate::pipeline::{
    peak_rss, scratch_intact, ByteFile, ExternalPlan, FileParts, IoStats, PassCheckpoint,
    ScratchDisks, StorageIo, StreamDevice,
};
use crate::value::{LongDistances, PartitionId, Weights};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// How to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The tablebase directory to write.
    pub out: PathBuf,
    /// How values are stored.
    pub encoding: ValueEncoding,
    /// Show progress bars on stderr.
    pub progress: bool,
    /// Memory budget in bytes; partitions that do not fit go through the pipeline.
    pub mem_limit: Option<u64>,
    /// Scratch directories striped over (default: the output directory).
    pub disks: Vec<PathBuf>,
    /// Continue an interrupted build.
    pub resume: bool,
    /// Force the external path with this chunking (tests and benchmarks).
    pub external_plan: Option<ExternalPlan>,
    /// How often a long pipeline pass records its progress (unless
    /// `external_plan` says).
    pub checkpoint_every: std::time::Duration,
    /// The game's own partition kernels (a GPU's, or their CPU twins), offered
    /// every partition solved in memory; see [`Game::kernels`].
    pub kernels: Option<Arc<dyn PartitionKernels>>,
    /// An earlier build whose partitions, where the game says they hold the
    /// same values ([`Game::shares_partition_with`]) and name and size
    /// match, are copied rather than solved (`--from DIR`).
    pub from: Option<PathBuf>,
    /// The members building together (MPI ranks, or one thread per GPU),
    /// this one among them; `None`: this process alone. Every member calls
    /// [`build_game`] with the same game and options but its own team
    /// member and kernels (see [`crate::dist`]).
    pub team: Option<Arc<dyn Team>>,
    /// Device memory the kernels may take (`--gpu-mem-limit`): a partition
    /// whose in-memory kernel solve needs more
    /// ([`PartitionKernels::working_set`]) takes the streamed path, the
    /// external pipeline with its chunks expanded on the device within
    /// this many bytes, while the others are solved in memory. `None`: no
    /// limit (streamed only when `--mem-limit` sends the whole build
    /// through the pipeline).
    pub gpu_mem_limit: Option<u64>,
    /// Whether a team hands partitions that do not read each other to
    /// different members, each solving its own whole at the same time,
    /// rather than splitting every partition among all
    /// ([`PartitionKernels::reads`]). `None`: where the kernels run on a
    /// device of each member's own ([`PartitionKernels::own_device`]).
    pub side_by_side: Option<bool>,
    /// Where the kernels run on a device: the host memory its driver,
    /// context and the game's kernels keep resident (the command line
    /// measures it around opening the device), and the page-locked buffers
    /// in-memory solves copy through (at most what the command line
    /// bounds them to). `--mem-limit` bounds the
    /// whole process, so this comes out of it, and a streamed path's
    /// page-locked host buffers get a share of what is left
    /// (an eighth). `None`: no device, or not measured
    /// (the page-locked buffers then have no bound).
    pub device_host_bytes: Option<u64>,
}

/// The share of `--mem-limit` (after the baseline and the device's resident
/// memory) that a streamed path's page-locked host buffers may take; the
/// pipeline's buffers are planned in the rest.
const DEVICE_STAGING_SHARE: u64 = 8;

/// The least a GPU build's `--mem-limit` must leave past the baseline and
/// the device's resident memory: a pipeline plan of a few MiB and its
/// staging share.
const DEVICE_MIN_PLAN: u64 = 8 << 20;

impl BuildOptions {
    /// In-memory defaults writing to `out`.
    pub fn new(out: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            out: out.into(),
            encoding: ValueEncoding::Byte,
            progress: false,
            mem_limit: None,
            disks: Vec::new(),
            resume: false,
            external_plan: None,
            checkpoint_every: crate::pipeline::DEFAULT_CHECKPOINT_EVERY,
            kernels: None,
            from: None,
            team: None,
            gpu_mem_limit: None,
            side_by_side: None,
            device_host_bytes: None,
        }
    }
}

/// What a build did; also written, with host facts, to `build-log.json`
/// (never into the manifest, whose bytes must not depend on the run).
#[derive(Clone, Debug, Serialize)]
pub struct BuildReport {
    /// `game:params`.
    pub game: String,
    /// The tablebase directory.
    pub out: PathBuf,
    /// Indices over all partitions, legal or not.
    pub positions: u64,
    /// Reachable positions, where forward search ran.
    pub reachable: Option<u64>,
    /// Tablebase files in the directory.
    pub files: usize,
    /// "memory" or "external"; "finished" where `--resume` found the build
    /// finished already and did nothing.
    pub mode: &'static str,
    /// Wall-clock seconds of this run.
    pub seconds: f64,
    /// Positions solved per second in this run.
    pub positions_per_second: f64,
    /// Scratch bytes read and written by the pipeline.
    pub scratch_bytes_read: u64,
    /// Scratch bytes written by the pipeline.
    pub scratch_bytes_written: u64,
    /// Seconds spent in the pipeline's passes (external partitions only).
    pub pipeline_seconds: f64,
    /// Where the pipeline's time went: steps' wall seconds (and, as
    /// `STEP_cpu`, the process's CPU seconds meanwhile), flusher threads'
    /// sort and write seconds, and seconds spent waiting on flushers and
    /// readers (summed over threads).
    pub pipeline_profile: std::collections::BTreeMap<String, f64>,
    /// What the process read from and wrote to storage, below the page cache
    /// (Linux `/proc/self/io`; written bytes less those dropped before
    /// write-back), if known.
    pub storage_io: Option<StorageIo>,
    /// Peak resident memory of the process, bytes.
    pub peak_rss: Option<u64>,
    /// Host memory the device's driver, context and kernels kept resident
    /// (see [`BuildOptions::device_host_bytes`]), taken out of `--mem-limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_host_bytes: Option<u64>,
    /// Bytes of page-locked host memory a streamed path's buffers could take
    /// (its share of `--mem-limit`), where bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staging_bytes: Option<u64>,
    /// Partitions taken over from an interrupted build.
    pub resumed_partitions: usize,
    /// Partitions solved by the game's kernels.
    pub accelerated_partitions: usize,
    /// Seconds of forward search in this run (0 when it ran in an earlier,
    /// interrupted run, or the game has no start position).
    pub forward_seconds: f64,
    /// Of which, per depth: seconds expanding depth d into depth d + 1, where
    /// the forward search goes depth by depth ([`crate::Forward::Layer`]).
    pub forward_depth_seconds: Vec<f64>,
    /// Why the build took the streamed path though memory would have held
    /// it: the first partition whose kernel solve needs more device memory
    /// than `--gpu-mem-limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streamed_because: Option<String>,
    /// The most device memory one partition's in-memory kernel solve needs
    /// ([`PartitionKernels::working_set`]), where the kernels say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_working_set: Option<u64>,
    /// The game's kernels, if they were offered.
    pub accelerator: Option<String>,
    /// Worker threads.
    pub threads: usize,
    /// Each partition solved in this run, in solving order, with what its
    /// stages took (`tbforge bench stages` tabulates them).
    pub partitions: Vec<PartitionStage>,
    /// Members that built together (1: this process alone).
    pub ranks: usize,
    /// What they were: "solo", "mpi" or "threads" (one per GPU).
    pub team: &'static str,
    /// What this member's collectives moved and waited in the whole build.
    pub communication: crate::dist::CommReading,
}

const STATE_FILE: &str = ".tbforge-build.json";
/// The pipeline's passes as they end (see `IoStats::journal_passes_to`),
/// until the build log holds them.
const PASS_JOURNAL: &str = ".tbforge-passes.jsonl";
/// Part of every scratch directory's name (see `ScratchDisks::open`).
const SCRATCH_MARK: &str = ".tbforge-scratch-";
/// The build log's name inside the output directory.
pub const BUILD_LOG: &str = "build-log.json";

#[derive(Serialize, Deserialize, Debug)]
struct State {
    format_version: u32,
    game: String,
    param_hash: String,
    external: bool,
    layers: Option<Vec<u64>>,
    reachable_per_slot: Option<Vec<u64>>,
    finished: Vec<FileEntry>,
    current: Option<(usize, PassCheckpoint)>,
    /// The external path's chunking (chunk, lookup range, write-buffer
    /// records), fixed by the first run: the scratch a resumed pass reads
    /// was cut that way, while the budget a resumed run derives may differ
    /// (it holds the reached bits of fewer layers).
    #[serde(default)]
    chunking: Option<(u64, u64, usize)>,
}

fn write_state(out: &Path, state: &State) -> Result<()> {
    let path = out.join(STATE_FILE);
    let tmp = out.join(format!("{STATE_FILE}.tmp"));
    let text = serde_json::to_vec_pretty(state).expect("state serialises");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        std::fs::File::open(out)?.sync_all()
    };
    write().map_err(|e| {
        // The previous state file still stands; a half-written one must not.
        let _ = std::fs::remove_file(&tmp);
        Error::io("saving build state", &path, e)
    })
}

/// The build state, written by the team's leader alone.
fn save_state(leader: bool, out: &Path, state: &State) -> Result<()> {
    if leader {
        write_state(out, state)
    } else {
        Ok(())
    }
}

/// Builds `game` into `opts.out`.
///
/// An I/O failure names the path and says what to do: a full disk or a file
/// size limit stops the build where it stands (finished files stay, temporary
/// ones are removed) and the same command with `--resume` continues it once
/// there is room.
pub fn build_game<G: Game>(game: &G, opts: &BuildOptions) -> Result<BuildReport> {
    let solo: Arc<dyn Team> = Arc::new(Solo::default());
    let team = opts.team.clone().unwrap_or(solo);
    build(game, opts, &*team).map_err(|e| {
        let e = explain_io(e);
        // The others would wait for this member in their next collective.
        if team.size() > 1 && !matches!(e, Error::Team { .. }) {
            team.abort(&e.to_string());
        }
        e
    })
}

/// Adds what to do to the I/O errors a user can fix.
fn explain_io(e: Error) -> Error {
    use std::io::ErrorKind as K;
    let format::IoError {
        action,
        path,
        source,
    } = match e {
        Error::Io(e) | Error::Format(format::FormatError::Io(e)) => e,
        other => return other,
    };
    let hint = match source.kind() {
        K::StorageFull | K::QuotaExceeded => Some(
            "disk full: free space there (or move the directory to a larger disk), \
             then run the same command with --resume to continue",
        ),
        K::FileTooLarge => Some(
            "file too large for this file system or for the file size limit \
             (`ulimit -f`): raise the limit or use another file system, \
             then run the same command with --resume to continue",
        ),
        K::NotADirectory | K::AlreadyExists => Some(
            "a file is in the way of a directory tbforge needs: \
             remove it, or pass another --out or --disk",
        ),
        K::ReadOnlyFilesystem | K::PermissionDenied => {
            Some("not writable: pass an --out or --disk directory this user can write")
        }
        K::NotFound if path.to_string_lossy().contains(SCRATCH_MARK) => Some(
            "a scratch file vanished during the build (removed by another program?): \
             run the same command with --resume; if that fails the same way, \
             delete the output and scratch directories and build again",
        ),
        _ => None,
    };
    match hint {
        Some(hint) => Error::io(
            action,
            path,
            std::io::Error::new(source.kind(), format!("{hint} ({source})")),
        ),
        None => Error::io(action, path, source),
    }
}

fn build<G: Game>(game: &G, opts: &BuildOptions, team: &dyn Team) -> Result<BuildReport> {
    let started = Instant::now();
    let info = game.info();
    let out = &opts.out;
    // Member 0 keeps the build state and the manifest; the others learn the
    // state from it and write only their own partitions' files.
    let leader = team.rank() == 0;
    let comm_started = team.stats().read();
    if leader {
        std::fs::create_dir_all(out).map_err(|e| Error::io("creating output directory", out, e))?;
    }
    // Before anything in the directory is read or written: two builds into
    // one place would rewrite each other's state and scratch files.
    let mut locks = DirLocks::default();
    if leader {
        locks.lock(out, "output directory")?;
    }
    let progress = Progress::new(opts.progress && leader);
    let layout = Layout::new(game)?;
    let param_hash = format!("{:016x}", info.param_hash());
    let total = layout.total_size();
    // Partitions marked Layer are searched one bit per index and solved only
    // where reached (`Forward`); `None`: the general BFS, every index solved.
    let forwards = match game.start() {
        Some(_) => layered_forwards(game, &layout)?,
        None => None,
    };
    // Checked before anything is written, so that a retry needs no --resume.
    if let (Some(limit), Some(_)) = (opts.mem_limit, game.start()) {
        let (needs, bits) = match forwards {
            Some(_) => (layout.total_size().div_ceil(8), "1 bit"),
            None => (layout.total_size().div_ceil(4), "2 bits"),
        };
        if needs > limit {
            return Err(Error::NotAvailable(format!(
                "--mem-limit {limit} bytes is below what the forward search of {} positions keeps in memory ({needs} bytes, {bits} each): raise it to at least {}M",
                layout.total_size(),
                (needs + baseline_bytes() + format::write_memory_bytes(opts.encoding)).div_ceil(1 << 20)
            )));
        }
    }
    // Partitions whose kernel solve would not fit the device: solved
    // through the pipeline, their chunks streamed through the device, while
    // the others are solved in memory as usual.
    let over_limit: Vec<Option<u64>> = (0..layout.len())
        .map(|s| match (&opts.kernels, opts.gpu_mem_limit) {
            (Some(k), Some(limit)) => k
                .working_set(layout.order()[s], layout.size(s))
                .filter(|&need| need > limit),
            _ => None,
        })
        .collect();
    let streamed: Vec<bool> = over_limit.iter().map(Option::is_some).collect();
    let too_big_for_device = over_limit.iter().enumerate().find_map(|(s, need)| {
        need.map(|need| {
            (
                game.partition_name(layout.order()[s]),
                need,
                opts.gpu_mem_limit.unwrap_or(0),
            )
        })
    });
    // A device's resident memory counts against the limit like the rest.
    let device_host = opts.device_host_bytes.unwrap_or(0);
    if let (Some(limit), Some(_)) = (opts.mem_limit, opts.device_host_bytes) {
        let floor = baseline_bytes() + device_host + DEVICE_MIN_PLAN;
        if limit < floor {
            return Err(Error::NotAvailable(format!(
                "--mem-limit {limit} bytes is below what the device's driver, context, kernels and copy buffers keep resident ({device_host} bytes) and tbforge's own buffers need: raise it to at least {}M, or use --backend cpu",
                floor.div_ceil(1 << 20)
            )));
        }
    }
    let external = opts.external_plan.is_some()
        || opts
            .mem_limit
            .is_some_and(|limit| in_memory_bytes(&layout, opts.encoding) + device_host > limit);

    // Checked before any state is written: a bad --from leaves nothing to resume.
    let source = match &opts.from {
        Some(_) if external => {
            return Err(Error::NotAvailable(
                "--from copies partitions into an in-memory build: leave out --mem-limit/--disk, or --from"
                    .into(),
            ))
        }
        Some(dir) => Some(Source::open(dir)?),
        None => None,
    };
    let state_path = out.join(STATE_FILE);
    let fresh_state = || State {
        format_version: FORMAT_VERSION,
        game: info.canonical(),
        param_hash: param_hash.clone(),
        external,
        layers: None,
        reachable_per_slot: None,
        finished: Vec::new(),
        current: None,
        chunking: None,
    };
    // Whether --resume found the build finished: members learn it with the state.
    let mut already_finished = false;
    let mut state = if !leader {
        fresh_state()
    } else {
        match std::fs::read(&state_path) {
            Ok(bytes) if opts.resume => {
                let s: State = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::NotAvailable(format!(
                        "cannot resume: {} is unreadable ({e}); delete it to start over",
                        state_path.display()
                    ))
                })?;
                if s.game != info.canonical()
                    || s.param_hash != param_hash
                    || s.format_version != FORMAT_VERSION
                {
                    return Err(Error::NotAvailable(format!(
                    "cannot resume: {} holds a build of {} (format {}), not {} (format {FORMAT_VERSION}); use another --out or delete it",
                    out.display(),
                    s.game,
                    s.format_version,
                    info.canonical()
                )));
                }
                s
            }
            Ok(_) => {
                return Err(Error::NotAvailable(format!(
                "{} holds an unfinished build; continue it with --resume, or delete the directory",
                out.display()
            )))
            }
            // No state left: the build either never started or finished.
            // A --resume of a finished one (a requeued batch job whose run
            // had in fact ended) takes its files as they stand rather than
            // building them all again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let finished = match opts.resume {
                    true => finished_build(out, &info, &param_hash, opts.encoding)?,
                    false => None,
                };
                match finished {
                    Some(m) => {
                        already_finished = true;
                        State {
                            layers: m.layers,
                            finished: m.files,
                            ..fresh_state()
                        }
                    }
                    None => fresh_state(),
                }
            }
            Err(e) => return Err(Error::io("reading build state", &state_path, e)),
        }
    };
    if leader {
        remove_stale_temporaries(out)?;
    }
    if team.size() > 1 {
        // The others take the leader's state: what is finished, and how.
        let text = if leader {
            serde_json::to_vec(&(&state, already_finished)).expect("state serialises")
        } else {
            Vec::new()
        };
        let text = team.broadcast(0, &text)?;
        if !leader {
            (state, already_finished) = serde_json::from_slice(&text).map_err(|e| Error::Team {
                rank: team.rank(),
                size: team.size(),
                message: format!(
                    "the build state rank 0 sent is unreadable ({e}); report this as a bug"
                ),
            })?;
        }
    }
    let resumed_partitions = state.finished.len();
    if already_finished {
        if leader {
            // What a build killed after its manifest stood left for its end
            // to remove: the pass journal, and members' scratch.
            remove_pass_journal(out)?;
            remove_member_scratch(opts, &param_hash);
        }
        let manifest = Manifest::new(&info, opts.encoding, state.finished, state.layers);
        return Ok(BuildReport {
            game: info.canonical(),
            out: out.clone(),
            positions: total,
            reachable: manifest.totals.reachable,
            files: manifest.files.len(),
            mode: "finished",
            seconds: started.elapsed().as_secs_f64(),
            positions_per_second: 0.0,
            scratch_bytes_read: 0,
            scratch_bytes_written: 0,
            pipeline_seconds: 0.0,
            pipeline_profile: Default::default(),
            storage_io: StorageIo::of_process(),
            peak_rss: peak_rss(),
            device_host_bytes: opts.device_host_bytes,
            staging_bytes: None,
            resumed_partitions,
            accelerated_partitions: 0,
            forward_seconds: 0.0,
            forward_depth_seconds: Vec::new(),
            streamed_because: None,
            largest_working_set: None,
            accelerator: opts.kernels.as_ref().map(|k| k.name()),
            threads: rayon::current_num_threads(),
            partitions: Vec::new(),
            ranks: team.size(),
            team: team.kind(),
            communication: team.stats().read().since(&comm_started),
        });
    }
    // A resumed build keeps the path it started on: the scratch it left is for that path.
    let external = state.external;
    // Scratch directories are checked before the state file is written, so a
    // bad --disk leaves no unfinished build behind.
    let disks = if external || streamed.contains(&true) {
        let dirs = if opts.disks.is_empty() {
            vec![out.clone()]
        } else {
            opts.disks.clone()
        };
        // Members of a team may share a host and its disks: each keeps its
        // scratch (and its lock) in a directory of its own.
        let dirs: Vec<PathBuf> = if team.size() > 1 {
            dirs.iter()
                .map(|d| d.join(format!("rank{}", team.rank())))
                .collect()
        } else {
            dirs
        };
        for dir in &dirs {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("creating scratch directory", dir, e))?;
            locks.lock(dir, "scratch directory")?;
        }
        Some(ScratchDisks::open(&dirs, &param_hash)?)
    } else {
        None
    };
    save_state(leader, out, &state)?;

    // The reached bits of each Layer partition not yet solved, dropped once
    // it is. They are not saved: a resumed build searches again (the search
    // is deterministic) and keeps the layers it recorded.
    let mut reached: Vec<Option<Vec<u64>>> = vec![None; layout.len()];
    // The last slot that reads each slot's values, where the game's layers
    // say (a Layer(d) partition is read only by Layer(d - 1) ones, solved
    // after it): past it, the values are dropped, so that a build holds a few
    // layers, never the whole game. `usize::MAX`: kept to the end.
    let last_reader: Vec<usize> = match &forwards {
        Some(forwards) => (0..layout.len())
            .map(|s| match forwards[s] {
                Forward::Layer(d) => (0..layout.len())
                    .filter(|&t| d > 0 && forwards[t] == Forward::Layer(d - 1))
                    .fold(s, usize::max),
                _ => usize::MAX,
            })
            .collect(),
        None => vec![usize::MAX; layout.len()],
    };
    let search_started = Instant::now();
    let mut forward_depth_seconds = Vec::new();
    let mut forward_slot_seconds = Vec::new();
    if let Some(forwards) = &forwards {
        let is_layer = |s: usize| matches!(forwards[s], Forward::Layer(_));
        let finished = state.finished.len();
        // Finished partitions that unfinished ones still read come back from
        // their files, compact again: their bits are wanted too.
        let wanted = |s: usize| is_layer(s) && (s >= finished || last_reader[s] >= finished);
        let unfinished = (finished..layout.len()).any(is_layer);
        if state.layers.is_none() || unfinished {
            let reach = layered_search(game, &layout, opts.kernels.as_deref(), &progress)?
                .expect("start checked");
            match &state.layers {
                None => {
                    state.reachable_per_slot =
                        Some((0..layout.len()).map(|s| reach.count(s)).collect());
                    state.layers = Some(reach.layers.clone());
                    save_state(leader, out, &state)?;
                }
                // The search is deterministic: other layers mean the game
                // changed under the interrupted build, and its files with it.
                Some(layers) if *layers != reach.layers => {
                    return Err(Error::NotAvailable(format!(
                        "cannot resume: the forward search now finds other layers than the interrupted build recorded ({:?} against {layers:?}); delete {} and build again",
                        reach.layers,
                        out.display()
                    )))
                }
                Some(_) => {}
            }
            forward_depth_seconds = reach.depth_seconds;
            forward_slot_seconds = reach.slot_seconds;
            for (s, bits) in reach.bits.into_iter().enumerate() {
                if wanted(s) {
                    reached[s] = Some(bits.into_words());
                }
            }
        }
    } else if state.layers.is_none() && game.start().is_some() {
        let parts: Vec<(PartitionId, u64)> = (0..layout.len())
            .map(|s| (layout.order()[s], layout.size(s)))
            .collect();
        let on_device = match (&opts.kernels, game.start()) {
            (Some(k), Some(start)) => k.search(game.rank(&start), &parts),
            _ => None,
        };
        if let Some(found) = on_device {
            let found = found?;
            if found.reachable.len() != layout.len() {
                return Err(Error::NotAvailable(format!(
                    "{}: the device search counted {} partitions, not {}; report this as a bug",
                    opts.kernels.as_ref().map_or_else(String::new, |k| k.name()),
                    found.reachable.len(),
                    layout.len()
                )));
            }
            state.reachable_per_slot = Some(found.reachable);
            state.layers = Some(found.layers);
        } else if opts.mem_limit.is_some() {
            // Fixed memory (2 bits per index) rather than frontier lists of unknown size.
            let reach = two_bit_bfs(game, &layout, &progress)?.expect("start checked");
            state.reachable_per_slot = Some(reach.per_slot);
            state.layers = Some(reach.layers);
        } else {
            let reach = frontier_bfs(game, &layout, &progress)?.expect("start checked");
            state.reachable_per_slot = Some((0..layout.len()).map(|s| reach.count(s)).collect());
            state.layers = Some(reach.layers.clone());
        }
        save_state(leader, out, &state)?;
    }
    let forward_seconds = search_started.elapsed().as_secs_f64();
    // The reached bits a layered build keeps until each partition is solved.
    let held_bits: u64 = reached.iter().flatten().map(|b| b.len() as u64 * 8).sum();

    let stats = IoStats::default();
    // The pipeline's buffers get what the process leaves of the budget. The
    // file writer runs between solves, never during one, and its compressors'
    // large allocations go back to the system when freed: glibc does that
    // once its mmap threshold is fixed, as the command line does (main.rs).
    // Without that, a 16-thread build starved the pipeline of the writer's
    // ~36 MB and ran 3x slower on tiny chunks.
    // A device's resident memory is the process's too; its page-locked
    // copies of streamed chunks and requests get a share of what is left.
    let (planned, staging_bytes) = plan_within(opts, held_bits);
    let plan = opts.external_plan.unwrap_or(planned);

    let plan = match (external, state.chunking) {
        (true, Some((chunk, lookup_chunk, run_capacity))) => ExternalPlan {
            chunk,
            lookup_chunk,
            run_capacity,
            ..plan
        },
        (true, None) => {
            state.chunking = Some((plan.chunk, plan.lookup_chunk, plan.run_capacity));
            save_state(leader, out, &state)?;
            plan
        }
        (false, _) => plan,
    };
    if external && leader {
        stats.journal_passes_to(&out.join(PASS_JOURNAL))?;
    }

    // The file writer's threads, each with its zstd context, so that writing
    // a partition fits the budget too (it never runs during a solve).
    let writer_pool = match opts.mem_limit {
        Some(limit) if external => {
            let threads = rayon::current_num_threads() as u64;
            let per_thread = format::write_memory_bytes(opts.encoding)
                .div_ceil(threads)
                .max(1);
            let fit = (limit.saturating_sub(baseline_bytes()) / per_thread).clamp(1, threads);
            (fit < threads)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(fit as usize)
                        .build()
                        .ok()
                })
                .flatten()
        }
        _ => None,
    };

    let mut in_memory: Vec<Option<Arc<Held>>> = vec![None; layout.len()];
    // The slots below this have their values on scratch, checked or put
    // there in this run: each is looked at once, not again for every later
    // partition (four stat calls each, and a build of small partitions has
    // hundreds).
    let on_scratch = std::cell::Cell::new(0usize);
    // Each partition's long distances (tiny: kept for the whole build).
    let mut long_of: Vec<Arc<LongDistances>> = vec![Arc::default(); layout.len()];
    let mut accelerated_partitions = 0usize;
    let mut stages = Vec::new();
    // In memory, partition n's file is counted, compressed and written on a
    // thread of its own while partition n + 1 is solved (on a device, the CPU
    // would idle otherwise). Files are finished in order, each entering the
    // build state only once it is on disk: an interruption redoes the rest.
    let (mut writer, done_rx) =
        Writer::start(&info, opts.encoding, out, team.members_in_process())?;
    let mut writing = 0usize;
    // Partitions queued for the writer hold their values: a device that
    // solves faster than files are written waits here rather than filling
    // the host's memory.
    const MAX_WRITING: usize = 2;
    // Files this member finished, not yet told to the others; then every
    // member's, until the state's list (in solving order) reaches them.
    let mut told = Told {
        mine: Vec::new(),
        landed: std::collections::BTreeMap::new(),
    };
    let resumed = state.finished.len();
    // Partitions a team solved before their turn, side by side (see
    // `plan_side_by_side`), with the member that solved each.
    let mut ahead: Vec<Option<Ahead>> = vec![None; layout.len()];
    let side_by_side = match &opts.kernels {
        Some(k) if team.size() > 1 && source.is_none() && !external => {
            opts.side_by_side.unwrap_or_else(|| k.own_device())
        }
        _ => false,
    };
    // The pipeline's solver of a partition, external or streamed, on this
    // build's scratch disks (opened for either) and device.
    let stream_device = |host_bytes| {
        opts.kernels.as_deref().map(|kernels| StreamDevice {
            kernels,
            device_bytes: opts.gpu_mem_limit.unwrap_or(u64::MAX),
            host_bytes,
        })
    };
    let pipeline_solver = |plan: ExternalPlan, staging_bytes: u64| ExternalSolver {
        game,
        layout: &layout,
        disks: disks
            .as_ref()
            .expect("scratch disks opened for the pipeline"),
        plan,
        progress: &progress,
        stats: &stats,
        device: stream_device(staging_bytes),
    };
    let slot_of: std::collections::HashMap<PartitionId, usize> = layout
        .order()
        .iter()
        .enumerate()
        .map(|(slot, &p)| (p, slot))
        .collect();
    for slot in 0..layout.len() {
        while let Ok(done) = done_rx.try_recv() {
            writing -= 1;
            told.mine.push(done?);
        }
        // Every member comes here for every slot: the place to share.
        told.share(team, &mut state, &mut stages, leader, out)?;
        let p = layout.order()[slot];
        let name = game.partition_name(p);
        let path = out.join(file_name(&name));
        if slot < resumed {
            // Finished before an interruption: its values come back from scratch
            // (external) or from its tablebase file (in memory), if still read.
            if !external && last_reader[slot] >= resumed {
                let (values, long) = read_values(&path, layout.size(slot))?;
                long_of[slot] = Arc::new(long);
                in_memory[slot] = Some(Arc::new(match reached[slot].take() {
                    Some(bits) => Held::Compact(ReachedValues::from_full(bits, &values)),
                    None => Held::Full(Arc::new(values)),
                }));
            }
            continue;
        }
        let reachable = state.reachable_per_slot.as_ref().map(|r| r[slot]);
        let solve_started = Instant::now();
        let (entry, mut stage) = match disks.as_ref().filter(|_| external) {
            None => {
                let comm_before = team.stats().read();
                if side_by_side && ahead[slot].is_none() && reached[slot].is_none() {
                    let k = opts
                        .kernels
                        .as_deref()
                        .expect("side by side only with kernels");
                    let ready = Ready {
                        slot,
                        slot_of: &slot_of,
                        ahead: &ahead,
                        reached: &reached,
                        streamed: &streamed,
                    };
                    if let Some(plan) = plan_side_by_side(k, &layout, &ready, team.size()) {
                        progress.phase(
                            &format!("{name} and {} more side by side", plan.len() - 1),
                            1,
                        );
                        solve_side_by_side(
                            k, &layout, &plan, slot, &in_memory, &long_of, &mut ahead, team,
                        )?;
                    }
                }
                let deps: Vec<Option<PartitionValues<'_>>> = in_memory
                    .iter()
                    .map(|v| v.as_deref().map(Held::view))
                    .collect();
                let mask = reached[slot].take();
                let order = layout.order();
                let mut solved = solved_before(order, &deps[..slot], &long_of, &[]);
                if let Some(bits) = &mask {
                    solved = solved.with_reached(bits);
                }
                let mut stage = PartitionStage::new(p, &name, Solver::Generic);
                stage.work.forward_seconds = forward_slot_seconds.get(slot).copied();
                let copied = match &source {
                    Some(source) => source.values(game, p, &name, layout.size(slot))?,
                    None => None,
                };
                // The values of a partition solved side by side, held as
                // they came (`solve.values` is then empty).
                let mut shared: Option<Arc<Vec<u8>>> = None;
                let accelerated = match copied {
                    Some((values, long)) => {
                        stage.solver = Solver::Copied;
                        Some(Ok(KernelSolve {
                            long,
                            ..KernelSolve::on_cpu(values, None)
                        }))
                    }
                    None => match &opts.kernels {
                        Some(_) if ahead[slot].is_some() => ahead[slot].take().map(|a| {
                            stage.work.solved_by = Some(a.owner);
                            shared = Some(a.values);
                            Ok(a.solve)
                        }),
                        Some(k) if streamed[slot] => {
                            stage.solver = Solver::External;
                            let disks = disks.as_ref().expect("opened for streamed partitions");
                            // The chunking a checkpoint inside this partition
                            // was taken with, or this run's (saved first): a
                            // checkpoint without its chunking is not used.
                            let resume = checkpoint_of(&state, disks, &layout, slot)
                                .filter(|_| state.chunking.is_some());
                            let held: u64 = in_memory.iter().flatten().map(|h| h.bytes()).sum();
                            let (planned, staging_bytes) = plan_within(opts, held_bits + held);
                            let plan = match (&resume, state.chunking) {
                                (Some(_), Some((chunk, lookup_chunk, run_capacity))) => {
                                    ExternalPlan {
                                        chunk,
                                        lookup_chunk,
                                        run_capacity,
                                        ..plan
                                    }
                                }
                                _ => {
                                    state.chunking = Some((
                                        planned.chunk,
                                        planned.lookup_chunk,
                                        planned.run_capacity,
                                    ));
                                    save_state(leader, out, &state)?;
                                    planned
                                }
                            };
                            let streamed = StreamedSlot {
                                solver: pipeline_solver(plan, staging_bytes),
                                in_memory: &in_memory,
                                on_scratch: &on_scratch,
                                team,
                            };
                            let values =
                                streamed.solve(slot, mask.as_deref(), resume, &mut |c| {
                                    state.current = Some((slot, c));
                                    save_state(leader, out, &state)
                                })?;
                            stage.work.pipeline_passes = stats.take_passes();
                            Some(Ok(KernelSolve {
                                passes: Some(stage.work.pipeline_passes.len() as u32),
                                ..KernelSolve::on_cpu(values, None)
                            }))
                        }
                        Some(k) if team.size() > 1 => {
                            team_kernel_solve(&**k, slot, p, &solved, team)?
                        }
                        Some(k) => k.solve(p, &solved),
                        None => None,
                    },
                };
                let mut compact = false;
                let mut long = LongDistances::new();
                let values = match accelerated {
                    Some(solve) => {
                        let solve = solve?;
                        compact = solve.compact;
                        if stage.solver == Solver::Generic {
                            accelerated_partitions += 1;
                            stage.solver = Solver::Kernels;
                        }
                        stage.work.passes = solve.passes.map(u64::from);
                        stage.work.device_seconds = solve.device_seconds;
                        long = solve.long;
                        solve.values
                    }
                    None => solve_partition_team(
                        game,
                        &layout,
                        &deps,
                        slot,
                        mask.as_deref(),
                        &progress,
                        team,
                    )?,
                };
                if team.size() > 1 {
                    stage.work.communication = Some(team.stats().read().since(&comm_before));
                }
                drop(solved);
                if let Some(m) = &mask {
                    // Only reached indices are kept (below): so are only
                    // their long distances.
                    let kept: Vec<(u64, u32)> = long
                        .entries()
                        .iter()
                        .copied()
                        .filter(|&(r, _)| {
                            m.get((r / 64) as usize)
                                .is_some_and(|w| w >> (r % 64) & 1 == 1)
                        })
                        .collect();
                    long = LongDistances::from_entries(kept).unwrap_or_default();
                }
                long_of[slot] = Arc::new(long);
                // Layered partitions are kept compact whoever solved them:
                // only reached indices are taken from a full answer, so the
                // bytes never depend on the solver.
                let held = match mask {
                    Some(bits) if compact => {
                        let got = values.len();
                        Held::Compact(ReachedValues::from_compact(bits, values).ok_or_else(|| {
                            Error::NotAvailable(format!(
                                "{}: the kernels returned {got} values for partition {name}, not one per reached index; report this as a bug",
                                opts.kernels.as_ref().map_or_else(String::new, |k| k.name())
                            ))
                        })?)
                    }
                    Some(bits) => Held::Compact(ReachedValues::from_full(bits, &values)),
                    None if shared.is_some() => Held::Full(shared.take().expect("checked")),
                    None if compact => {
                        return Err(Error::NotAvailable(format!(
                            "the kernels returned compact values for partition {name}, which is solved whole; report this as a bug"
                        )))
                    }
                    None => Held::Full(Arc::new(values)),
                };
                stage.work.solve_seconds = solve_started.elapsed().as_secs_f64();
                progress.phase(&format!("{name} write"), 1);
                let values = Arc::new(held);
                drop(deps);
                in_memory[slot] = Some(values.clone());
                for held in in_memory
                    .iter_mut()
                    .zip(&last_reader)
                    .filter(|(_, &r)| r == slot)
                {
                    *held.0 = None;
                }
                // A partition solved side by side is written by its owner
                // (the rounds deal the work evenly, so do the writes).
                let writes = stage
                    .work
                    .solved_by
                    .map_or_else(|| team.writes(slot), |owner| owner == team.rank());
                if !writes {
                    // Another member writes this one; its values stay here
                    // for the partitions that read them.
                    continue;
                }
                // A team's member whose queued values are kept for later
                // partitions anyway (never dropped) queues on: waiting here
                // would hold up the others in the next collective. A member
                // that does not write this one adds nothing to its queue.
                let kept_anyway = team.size() > 1 && last_reader[slot] == usize::MAX;
                while writing >= MAX_WRITING && !kept_anyway {
                    let Ok(done) = done_rx.recv() else { break };
                    writing -= 1;
                    told.mine.push(done?);
                    if team.size() == 1 {
                        told.share(team, &mut state, &mut stages, leader, out)?;
                    }
                }
                let job = WriteJob {
                    slot,
                    partition: p,
                    name,
                    path,
                    size: layout.size(slot),
                    values,
                    long: long_of[slot].clone(),
                    weights: game.weights(p),
                    reachable,
                    stage,
                };
                if !writer.send(job) {
                    // The writer stopped: its error is waiting.
                    break;
                }
                writing += 1;
                continue;
            }
            Some(disks) => {
                let resume = checkpoint_of(&state, disks, &layout, slot);
                for earlier in on_scratch.get()..slot {
                    let values = disks.values_path(earlier);
                    let size = layout.size(earlier);
                    if values.complete(size) {
                        continue;
                    }
                    // A member that did not take part before (a resume with
                    // another number of members: scratch lies under each
                    // member's own directory) has none yet: the finished
                    // file holds the same bytes.
                    let name = game.partition_name(layout.order()[earlier]);
                    let file = out.join(file_name(&name));
                    if !file.is_file() {
                        return Err(Error::NotAvailable(format!(
                            "cannot continue: {} (the values of a finished partition) is missing; \
                             delete {} and the scratch directories, then build again",
                            values.first().display(),
                            out.display()
                        )));
                    }
                    restore_values(&file, &values, size)?;
                }
                on_scratch.set(slot);
                let external = pipeline_solver(plan, staging_bytes);
                let mask = reached[slot].take();
                let comm_before = team.stats().read();
                if team.size() == 1 {
                    external.solve(slot, mask.as_deref(), resume, &mut |c| {
                        state.current = Some((slot, c));
                        save_state(leader, out, &state)
                    })?;
                } else {
                    // On a team, member `slot % size` solves the partition
                    // whole through the pipeline and sends its values to the
                    // others' scratch, where later partitions read them. Its
                    // passes keep no checkpoint (the leader keeps the state):
                    // an interrupted partition is solved again.
                    let owner = slot % team.size();
                    if team.rank() == owner {
                        external.solve(slot, mask.as_deref(), None, &mut |_| Ok(()))?;
                    }
                    share_values(team, owner, &disks.values_path(slot), layout.size(slot))?;
                    if !team.writes(slot) {
                        continue;
                    }
                }
                let mut stage = PartitionStage::new(p, &name, Solver::External);
                if team.size() > 1 {
                    stage.work.communication = Some(team.stats().read().since(&comm_before));
                }
                stage.work.pipeline_passes = stats.take_passes();
                stage.work.passes = Some(stage.work.pipeline_passes.len() as u64);
                stage.work.forward_seconds = forward_slot_seconds.get(slot).copied();
                stage.work.solve_seconds = solve_started.elapsed().as_secs_f64();
                progress.phase(&format!("{name} write"), 1);
                let written = Instant::now();
                let t = Instant::now();
                let weights = game.weights(p);
                let mut counting = t.elapsed();
                // Streamed from the scratch value file a few blocks at a time:
                // a partition larger than the memory budget is never held whole.
                let file =
                    ByteFile::open_existing_parts(&disks.values_path(slot), layout.size(slot))?;
                let mut counts = Counts::default();
                let mut write = || {
                    format::write_partition_file_from(
                        &path,
                        &info,
                        p,
                        opts.encoding,
                        file.len(),
                        &WriteOptions::default(),
                        |offset, buf: &mut [u8]| {
                            file.read_at(offset, buf)?;
                            stats.read(buf.len() as u64);
                            let t = Instant::now();
                            counts.add_values(info.kind, &weights, crate::value::Rank(offset), buf);
                            counting += t.elapsed();
                            Ok::<(), Error>(())
                        },
                    )
                };
                let summary = match &writer_pool {
                    Some(pool) => pool.install(write)?,
                    None => write()?,
                };
                stage.work.count_seconds = counting.as_secs_f64();
                stage.work.write_seconds = written.elapsed().saturating_sub(counting).as_secs_f64();
                (
                    FileEntry::from_counts(p, &name, &counts, reachable, summary),
                    stage,
                )
            }
        };
        stage.fill_from(&entry);
        told.mine.push((slot, entry, stage));
        // A team shares at the top of the next slot, where every member
        // comes (the other members skipped this far): once a slot for all.
        if team.size() == 1 {
            told.share(team, &mut state, &mut stages, leader, out)?;
        }
    }
    writer.close();
    for done in done_rx.iter().take(writing) {
        writing -= 1;
        told.mine.push(done?);
    }
    if writing > 0 {
        return Err(Error::NotAvailable(format!(
            "the file writer thread stopped with {writing} partitions unwritten; build again to finish"
        )));
    }
    told.share(team, &mut state, &mut stages, leader, out)?;
    if state.finished.len() != layout.len() {
        return Err(Error::Team {
            rank: team.rank(),
            size: team.size(),
            message: format!(
                "{} of {} partition files were reported written; build again with --resume",
                state.finished.len(),
                layout.len()
            ),
        });
    }
    progress.finish();

    let manifest = Manifest::new(
        &info,
        opts.encoding,
        state.finished.clone(),
        state.layers.clone(),
    );
    if let Some(d) = &disks {
        d.remove_all()?;
        if team.size() > 1 {
            // The member's own directory under each disk, empty by now.
            for dir in d.dirs() {
                if let Some(own) = dir.parent() {
                    let _ = std::fs::remove_dir(own);
                }
            }
        }
    }
    if leader {
        write_manifest(out, &manifest)?;
    }

    let seconds = started.elapsed().as_secs_f64();
    let mut report = BuildReport {
        game: info.canonical(),
        out: out.clone(),
        positions: total,
        reachable: manifest.totals.reachable,
        files: manifest.files.len(),
        mode: if external { "external" } else { "memory" },
        seconds,
        positions_per_second: total as f64 / seconds.max(1e-9),
        scratch_bytes_read: stats.bytes_read(),
        scratch_bytes_written: stats.bytes_written(),
        pipeline_seconds: stats.busy_seconds(),
        pipeline_profile: stats.profile_seconds(),
        storage_io: StorageIo::of_process(),
        peak_rss: peak_rss(),
        device_host_bytes: opts.device_host_bytes,
        staging_bytes: (external && staging_bytes < u64::MAX).then_some(staging_bytes),
        resumed_partitions,
        accelerated_partitions,
        forward_seconds,
        forward_depth_seconds,
        largest_working_set: opts.kernels.as_ref().and_then(|k| {
            (0..layout.len())
                .filter_map(|s| k.working_set(layout.order()[s], layout.size(s)))
                .max()
        }),
        streamed_because: too_big_for_device.map(|(name, need, limit)| {
            format!("partition {name} needs {need} bytes of device memory in one piece, --gpu-mem-limit is {limit}")
        }),
        accelerator: opts.kernels.as_ref().map(|k| k.name()),
        threads: rayon::current_num_threads(),
        partitions: stages,
        ranks: team.size(),
        team: team.kind(),
        communication: team.stats().read().since(&comm_started),
    };
    if leader {
        // Written as it serialises: the passes come from the pass journal a
        // line at a time, never all in memory.
        crate::format::write_atomic_with(&out.join(BUILD_LOG), |file, tmp| -> Result<()> {
            let mut writer = std::io::BufWriter::new(file);
            serde_json::to_writer_pretty(&mut writer, &report)
                .map_err(std::io::Error::from)
                .and_then(|()| std::io::Write::flush(&mut writer))
                .map_err(|e| Error::io("writing build log", tmp, e))
        })
        .map_err(|e| match e {
            // Its creation, sync or rename: said as the log's.
            Error::Format(crate::format::FormatError::Io(e)) => {
                Error::io("writing build log", e.path, e.source)
            }
            e => e,
        })?;
        for stage in &mut report.partitions {
            stage.work.pipeline_passes.logged();
        }
        remove_pass_journal(out)?;
        // Last: until the state goes, a kill leaves a build that --resume
        // finishes (and cleans), never one that looks finished with the
        // pass journal still beside its files.
        std::fs::remove_file(&state_path)
            .map_err(|e| Error::io("removing build state", &state_path, e))?;
    }
    // Nobody returns before the manifest stands: a script that waits for
    // any member may read the tablebase at once.
    team.barrier()?;
    if leader && disks.is_some() {
        // Scratch that members of an interrupted run left on this host's
        // disks (a resume by other members never reads it again).
        remove_member_scratch(opts, &param_hash);
    }
    Ok(report)
}

/// Removes every member's scratch of the build tagged `build_tag` under
/// the bases `opts` gives scratch (its `--disk` directories, or else its
/// output directory: `BASE/rankN/.tbforge-scratch-TAG`), and the member directories
/// left empty. Best effort: what cannot be removed stays.
fn remove_member_scratch(opts: &BuildOptions, build_tag: &str) {
    let bases = if opts.disks.is_empty() {
        std::slice::from_ref(&opts.out)
    } else {
        &opts.disks[..]
    };
    for base in bases {
        let Ok(entries) = std::fs::read_dir(base) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let is_member = name
                .strip_prefix("rank")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if is_member && entry.path().is_dir() {
                let scratch = entry.path().join(ScratchDisks::dir_name(build_tag));
                let _ = std::fs::remove_dir_all(scratch);
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

type WriteResult = Result<(usize, FileEntry, PartitionStage)>;

/// Bytes of a partition's values sent in one collective: the pieces pass
/// through memory, whatever --mem-limit allows for the pipeline.
const SHARE_PIECE: u64 = 4 << 20;

/// The values at `path` (`len` bytes) on member `owner`, copied to `path`
/// on every other member, a piece at a time.
fn share_values(team: &dyn Team, owner: usize, path: &FileParts, len: u64) -> Result<()> {
    let file = if team.rank() == owner {
        ByteFile::open_existing_parts(path, len)?
    } else {
        ByteFile::create_or_open_parts(path, len)?
    };
    let mut piece = Vec::new();
    let mut offset = 0;
    while offset < len {
        let n = SHARE_PIECE.min(len - offset);
        if team.rank() == owner {
            piece.resize(n as usize, 0);
            file.read_at(offset, &mut piece)?;
        }
        let got = team.broadcast(owner, &piece)?;
        if team.rank() != owner {
            if got.len() as u64 != n {
                return Err(Error::Team {
                    rank: team.rank(),
                    size: team.size(),
                    message: format!(
                        "rank {owner} sent {} bytes of {} at offset {offset}, not {n}; report this as a bug",
                        got.len(),
                        path.first().display()
                    ),
                });
            }
            file.write_at(offset, &got)?;
        }
        offset += n;
    }
    file.sync()
}

/// A finished partition's values, read back from its tablebase `file` into
/// the scratch value file `values` (`len` bytes), a block at a time.
fn restore_values(file: &Path, values: &FileParts, len: u64) -> Result<()> {
    let table = TableFile::open_read(file)?;
    let header = table.header();
    if header.index_size != len || header.encoding != ValueEncoding::Byte {
        return Err(Error::NotAvailable(format!(
            "cannot resume: {} does not hold this partition's one-byte values; delete the output directory and build again",
            file.display()
        )));
    }
    let out = ByteFile::create_or_open_parts(values, len)?;
    let mut offset = 0;
    for block in 0..header.block_count {
        let codes = table.block_codes(block)?;
        out.write_at(offset, &codes)?;
        offset += codes.len() as u64;
    }
    out.sync()
}

/// Partition `slot` solved by the team with the game's kernels: split over
/// the members where the kernels can ([`PartitionKernels::solve_team`]),
/// else solved whole by member `slot % size` and sent to the others.
/// `None` where the kernels do not cover it (on every member alike).
fn team_kernel_solve(
    kernels: &dyn PartitionKernels,
    slot: usize,
    p: PartitionId,
    solved: &SolvedPartitions<'_>,
    team: &dyn Team,
) -> Result<Option<Result<KernelSolve>>> {
    if let Some(split) = kernels.solve_team(p, solved, team) {
        return Ok(Some(split));
    }
    let owner = slot % team.size();
    let mine = if team.rank() == owner {
        kernels.solve(p, solved).transpose()?
    } else {
        None
    };
    let covered = team.broadcast(owner, &[u8::from(mine.is_some())])?;
    match covered.as_slice() {
        [0] => Ok(None),
        [1] => {
            let (mut solve, values) = share_solve(team, owner, mine, p)?;
            // The owner's buffer comes back whole; the others copy theirs.
            solve.values = Arc::try_unwrap(values).unwrap_or_else(|shared| (*shared).clone());
            Ok(Some(Ok(solve)))
        }
        _ => Err(malformed_solve(team, owner, p)),
    }
}

/// The error of a member that received a solve it cannot read.
fn malformed_solve(team: &dyn Team, owner: usize, p: PartitionId) -> Error {
    Error::Team {
        rank: team.rank(),
        size: team.size(),
        message: format!(
            "rank {owner} sent a malformed solve of partition {p}; report this as a bug"
        ),
    }
}

/// Member `owner`'s solve of `p` (`solve`, given on `owner` only) on every
/// member: what the solve took through a broadcast (its `values` left
/// empty), the values beside it ([`Team::broadcast_shared`]: the owner's
/// own buffer, which a device may know by its address, shared by members
/// in one process).
fn share_solve(
    team: &dyn Team,
    owner: usize,
    solve: Option<KernelSolve>,
    p: PartitionId,
) -> Result<(KernelSolve, Arc<Vec<u8>>)> {
    let (head, values) = match solve {
        Some(s) => {
            let mut head = vec![u8::from(s.compact)];
            head.extend(s.passes.unwrap_or(u32::MAX).to_le_bytes());
            head.extend(s.device_seconds.unwrap_or(-1.0).to_le_bytes());
            for &(r, d) in s.long.entries() {
                head.extend(r.to_le_bytes());
                head.extend(d.to_le_bytes());
            }
            (head, s.values)
        }
        None => (Vec::new(), Vec::new()),
    };
    let head = team.broadcast(owner, &head)?;
    let values = team.broadcast_shared(owner, Arc::new(values))?;
    let broken = || malformed_solve(team, owner, p);
    if head.len() < 13 || (head.len() - 13) % 12 != 0 {
        return Err(broken());
    }
    let passes = u32::from_le_bytes(head[1..5].try_into().expect("4 bytes"));
    let seconds = f64::from_le_bytes(head[5..13].try_into().expect("8 bytes"));
    let long = head[13..]
        .chunks_exact(12)
        .map(|e| {
            (
                u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
                u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
            )
        })
        .collect();
    let solve = KernelSolve {
        compact: head[0] == 1,
        passes: (passes != u32::MAX).then_some(passes),
        device_seconds: (seconds >= 0.0).then_some(seconds),
        long: LongDistances::from_entries(long).ok_or_else(broken)?,
        values: Vec::new(),
    };
    Ok((solve, values))
}

/// A partition solved side by side before its turn.
#[derive(Clone)]
struct Ahead {
    /// The member that solved it.
    owner: usize,
    /// What the solve took (its `values` empty).
    solve: KernelSolve,
    /// Its values.
    values: Arc<Vec<u8>>,
}

/// Where a build stands when a team plans partitions side by side.
struct Ready<'a> {
    /// The slot whose turn it is.
    slot: usize,
    /// Each partition's slot.
    slot_of: &'a std::collections::HashMap<PartitionId, usize>,
    /// The partitions solved ahead of their turn.
    ahead: &'a [Option<Ahead>],
    /// The reached bits of layered partitions not solved yet.
    reached: &'a [Option<Vec<u64>>],
    /// The partitions too large for the device, solved through the
    /// pipeline in their turn (never side by side).
    streamed: &'a [bool],
}

/// The most of a side-by-side round's work one member may carry (in
/// indices) for the round to beat splitting each partition among all
/// members: splitting gained 1.05-1.2x on two GPUs (docs/SCALING.md), so
/// a round pays once its busiest member carries under ~85 % of the work.
const SIDE_BY_SIDE_MAX_SHARE: f64 = 0.8;

/// The partitions a team solves side by side now, each with its member
/// (in slot order), or `None` (then the turn's partition is solved as
/// before): the turn's partition and every later one not solved yet whose
/// reads ([`PartitionKernels::reads`]) are all solved, the largest first to
/// the least loaded member. Every member plans alike: the plan depends on
/// the layout and the kernels' reads only.
fn plan_side_by_side(
    kernels: &dyn PartitionKernels,
    layout: &Layout,
    at: &Ready<'_>,
    members: usize,
) -> Option<Vec<(usize, usize)>> {
    let order = layout.order();
    let solved = |q: &PartitionId| {
        at.slot_of
            .get(q)
            .is_some_and(|&t| t < at.slot || at.ahead[t].is_some())
    };
    let ready = |t: usize| {
        at.ahead[t].is_none()
            && at.reached[t].is_none()
            && !at.streamed[t]
            && kernels
                .reads(order[t])
                .is_some_and(|reads| reads.iter().all(solved))
    };
    if !ready(at.slot) {
        return None;
    }
    let mut round: Vec<usize> = (at.slot..layout.len()).filter(|&t| ready(t)).collect();
    if round.len() < 2 {
        return None;
    }
    round.sort_by_key(|&t| (std::cmp::Reverse(layout.size(t)), t));
    let mut load = vec![0u64; members];
    let mut plan: Vec<(usize, usize)> = round
        .iter()
        .map(|&t| {
            let member = (0..members).min_by_key(|&m| (load[m], m)).expect("members");
            load[member] += layout.size(t);
            (t, member)
        })
        .collect();
    let total: u64 = load.iter().sum();
    let busiest = load.iter().copied().max().unwrap_or(0);
    if busiest as f64 > SIDE_BY_SIDE_MAX_SHARE * total as f64 {
        return None;
    }
    plan.sort_unstable();
    Some(plan)
}

/// What a solve at the turn of slot `views.len()` may read: the values of
/// the partitions before it (`views`, by slot, with their long distances)
/// and of those solved `ahead` of their turn.
fn solved_before<'a>(
    order: &[PartitionId],
    views: &[Option<PartitionValues<'a>>],
    long_of: &'a [Arc<LongDistances>],
    ahead: &'a [Option<Ahead>],
) -> SolvedPartitions<'a> {
    let ahead = || {
        ahead
            .iter()
            .enumerate()
            .filter_map(|(t, a)| Some((order[t], a.as_ref()?)))
    };
    let earlier = || {
        views
            .iter()
            .enumerate()
            .filter_map(|(s, v)| Some((order[s], (*v)?)))
    };
    SolvedPartitions::new(
        earlier()
            .filter_map(|(p, v)| match v {
                PartitionValues::Full(v) => Some((p, v)),
                PartitionValues::Compact(_) => None,
            })
            .chain(ahead().map(|(p, a)| (p, a.values.as_slice()))),
    )
    .with_compact(earlier().filter_map(|(p, v)| match v {
        PartitionValues::Compact(c) => Some((p, c)),
        PartitionValues::Full(_) => None,
    }))
    .with_long(
        (0..views.len())
            .map(|s| (order[s], &*long_of[s]))
            .chain(ahead().map(|(p, a)| (p, &a.solve.long))),
    )
}

/// Solves `plan`'s partitions, each on its member, at the same time, from
/// the values before `slot` and those solved ahead; then every member
/// takes every one of them (in slot order) into `ahead`, and the kernels
/// adopt each ([`PartitionKernels::adopt`]).
#[allow(clippy::too_many_arguments)]
fn solve_side_by_side(
    kernels: &dyn PartitionKernels,
    layout: &Layout,
    plan: &[(usize, usize)],
    slot: usize,
    in_memory: &[Option<Arc<Held>>],
    long_of: &[Arc<LongDistances>],
    ahead: &mut [Option<Ahead>],
    team: &dyn Team,
) -> Result<()> {
    let order = layout.order();
    let mut mine = Vec::new();
    {
        let views: Vec<Option<PartitionValues<'_>>> = in_memory[..slot]
            .iter()
            .map(|v| v.as_deref().map(Held::view))
            .collect();
        let solved = solved_before(order, &views, long_of, ahead);
        for &(t, member) in plan {
            if member != team.rank() {
                continue;
            }
            let solve = kernels.solve(order[t], &solved).unwrap_or_else(|| {
                Err(Error::NotAvailable(format!(
                    "{}: the kernels declined partition {}, whose reads they gave; report this as a bug",
                    kernels.name(),
                    order[t]
                )))
            })?;
            mine.push((t, solve));
        }
    }
    let mut mine = mine.into_iter();
    for &(t, owner) in plan {
        let solve = if owner == team.rank() {
            mine.next().map(|(_, solve)| solve)
        } else {
            None
        };
        let (solve, values) = share_solve(team, owner, solve, order[t])?;
        kernels.adopt(order[t], owner, &values, team)?;
        ahead[t] = Some(Ahead {
            owner,
            solve,
            values,
        });
    }
    Ok(())
}

/// The file writers' threads, one pool for every member of a team in this
/// process: the cores less one for each member, whose thread drives its
/// device and waits on it spinning. A writer on every core slowed the GPU
/// solves of a 1.8 G-index build from 3.8 s to 5.1 s (kernels/PERF.md);
/// two GPU members with a writer of all cores less one each solved 5-20 %
/// slower than alone on two H200s (a 0.6 G-index partition 1.44 s against
/// 1.29 s; 1.28 s under --threads 16, which left them two cores;
/// docs/SCALING.md). One pool rather than one each: the build's
/// last file is written by all the cores, not its member's share.
fn write_pool(members_in_process: usize) -> Result<Arc<rayon::ThreadPool>> {
    use std::sync::{Mutex, Weak};
    // By thread count, shared while a build holds it: builds of another
    // count at the same time (tests side by side) get their own.
    static SHARED: Mutex<Vec<(usize, Weak<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let threads = rayon::current_num_threads()
        .saturating_sub(members_in_process)
        .max(1);
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    shared.retain(|(_, pool)| pool.strong_count() > 0);
    if let Some(pool) = shared
        .iter()
        .find(|(n, _)| *n == threads)
        .and_then(|(_, pool)| pool.upgrade())
    {
        return Ok(pool);
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("tbforge-write-{i}"))
            .build()
            .map_err(|e| Error::NotAvailable(format!("starting the file writer's threads: {e}")))?,
    );
    shared.push((threads, Arc::downgrade(&pool)));
    Ok(pool)
}

/// Finished files on their way into the build state (see `build`).
struct Told {
    /// Written by this member since it last shared: (slot, entry, stage).
    mine: Vec<(usize, FileEntry, PartitionStage)>,
    /// Every member's, by slot, waiting for the earlier slots.
    landed: std::collections::BTreeMap<usize, (FileEntry, PartitionStage)>,
}

impl Told {
    /// Tells the others what this member wrote and learns what they wrote
    /// (a collective: every member calls it at the same points), then moves
    /// every file whose turn has come into the state, saved by the leader.
    fn share(
        &mut self,
        team: &dyn Team,
        state: &mut State,
        stages: &mut Vec<PartitionStage>,
        leader: bool,
        out: &Path,
    ) -> Result<()> {
        let mine = std::mem::take(&mut self.mine);
        if team.size() == 1 {
            self.landed
                .extend(mine.into_iter().map(|(slot, e, st)| (slot, (e, st))));
        } else {
            let text = serde_json::to_vec(&mine).expect("entries serialise");
            for (member, text) in team.all_gather(&text)?.iter().enumerate() {
                let theirs: Vec<(usize, FileEntry, PartitionStage)> = serde_json::from_slice(text)
                    .map_err(|e| Error::Team {
                        rank: team.rank(),
                        size: team.size(),
                        message: format!("rank {member} sent unreadable file entries ({e}); report this as a bug"),
                    })?;
                self.landed
                    .extend(theirs.into_iter().map(|(slot, e, st)| (slot, (e, st))));
            }
        }
        let before = state.finished.len();
        while let Some((entry, stage)) = self.landed.remove(&state.finished.len()) {
            stages.push(stage);
            state.finished.push(entry);
            state.current = None;
        }
        if state.finished.len() > before {
            save_state(leader, out, state)?;
        }
        Ok(())
    }
}

/// The file writer thread: takes [`WriteJob`]s in order and sends back each
/// one's result in the same order. Dropped (an error ends the build early),
/// it finishes the jobs it has and is joined, so that no file is written
/// after the build returns.
struct Writer {
    jobs: Option<std::sync::mpsc::Sender<WriteJob>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    fn start(
        info: &GameInfo,
        encoding: ValueEncoding,
        out: &Path,
        members_in_process: usize,
    ) -> Result<(Writer, std::sync::mpsc::Receiver<WriteResult>)> {
        let (job_tx, job_rx) = std::sync::mpsc::channel::<WriteJob>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<WriteResult>();
        let info = info.clone();
        let pool = write_pool(members_in_process)?;
        let thread = std::thread::Builder::new()
            .name("tbforge-writer".into())
            .spawn(move || {
                for job in job_rx {
                    if done_tx
                        .send(pool.install(|| job.write(&info, encoding)))
                        .is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(|e| Error::io("starting the file writer thread", out, e))?;
        let writer = Writer {
            jobs: Some(job_tx),
            thread: Some(thread),
        };
        Ok((writer, done_rx))
    }

    /// Queues a job; false when the thread has stopped.
    fn send(&self, job: WriteJob) -> bool {
        self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok())
    }

    /// No more jobs: the thread ends after the queued ones.
    fn close(&mut self) {
        self.jobs = None;
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
        if let Some(thread) = self.thread.take() {
            // A panic in the writer already surfaced as a missing result.
            let _ = thread.join();
        }
    }
}

/// One partition's values on their way to their file (the writer thread).
struct WriteJob {
    slot: usize,
    partition: PartitionId,
    name: String,
    path: PathBuf,
    /// Indices in the partition.
    size: u64,
    values: Arc<Held>,
    /// The partition's long distances (saturated bytes' exact distances).
    long: Arc<LongDistances>,
    weights: Weights,
    reachable: Option<u64>,
    stage: PartitionStage,
}

impl WriteJob {
    /// Writes the file and counts the values: the manifest entry and the
    /// stage with its write and count times.
    fn write(mut self, info: &GameInfo, encoding: ValueEncoding) -> WriteResult {
        let entry = match &*self.values {
            Held::Full(values) => {
                let t = Instant::now();
                let summary = format::write_partition_file_with(
                    &self.path,
                    info,
                    self.partition,
                    encoding,
                    values,
                    &WriteOptions {
                        long: Some(&self.long),
                        ..WriteOptions::default()
                    },
                )?;
                self.stage.work.write_seconds = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let mut counts = format::Counts::of_values(info.kind, &self.weights, values);
                counts.add_long(&self.long);
                let entry = FileEntry::from_counts(
                    self.partition,
                    &self.name,
                    &counts,
                    self.reachable,
                    summary,
                );
                self.stage.work.count_seconds = t.elapsed().as_secs_f64();
                entry
            }
            Held::Compact(values) => {
                // Expanded block by block on every core, counted as each
                // block is made, never whole.
                let t = Instant::now();
                let view = values.view();
                let counts = std::sync::Mutex::new(format::Counts::default());
                let counting = std::sync::atomic::AtomicU64::new(0);
                let kind = info.kind;
                let count = |offset: u64, n: usize, nonzero: Option<&[u8]>, all: &[u8]| {
                    let t = Instant::now();
                    let mut c = format::Counts::default();
                    match nonzero {
                        Some(v) => c.add_nonzero(kind, &self.weights, n as u64, v),
                        None => c.add_values(kind, &self.weights, crate::value::Rank(offset), all),
                    }
                    counts.lock().expect("counting never panics").absorb(&c);
                    counting.fetch_add(
                        t.elapsed().as_nanos() as u64,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                };
                let summary =
                    if encoding == ValueEncoding::Byte && self.weights.exceptions.is_empty() {
                        // Stored as they are held: bitmap and reached values.
                        format::write_partition_file_sparse(
                            &self.path,
                            info,
                            self.partition,
                            self.size,
                            &WriteOptions {
                                long: Some(&self.long),
                                ..WriteOptions::default()
                            },
                            |offset, n, out: &mut Vec<u8>| {
                                let nonzero = view.sparse_into(offset, n, out);
                                count(offset, n, Some(nonzero), &[]);
                                Ok::<(), Error>(())
                            },
                        )?
                    } else {
                        format::write_partition_file_par(
                            &self.path,
                            info,
                            self.partition,
                            encoding,
                            self.size,
                            &WriteOptions {
                                long: Some(&self.long),
                                ..WriteOptions::default()
                            },
                            |offset, buf: &mut [u8]| {
                                view.expand_into(offset, buf);
                                count(offset, buf.len(), None, buf);
                                Ok::<(), Error>(())
                            },
                        )?
                    };
                // Thread-seconds of counting, as a share of the wall time.
                let threads = rayon::current_num_threads() as f64;
                let count_seconds = counting.into_inner() as f64 * 1e-9 / threads;
                let wall = t.elapsed().as_secs_f64();
                self.stage.work.count_seconds = count_seconds;
                self.stage.work.write_seconds = (wall - count_seconds).max(0.0);
                let mut counts = counts.into_inner().expect("counting never panics");
                counts.add_long(&self.long);
                FileEntry::from_counts(self.partition, &self.name, &counts, self.reachable, summary)
            }
        };
        self.stage.fill_from(&entry);
        Ok((self.slot, entry, self.stage))
    }
}

/// A solved partition as the build keeps it while later ones may read it.
enum Held {
    /// One byte per index (shared: the members of a team in one process
    /// hold the same buffer of a partition solved side by side).
    Full(Arc<Vec<u8>>),
    /// A layered partition: only its reached indices' values.
    Compact(ReachedValues),
}

impl Held {
    fn view(&self) -> PartitionValues<'_> {
        match self {
            Held::Full(v) => PartitionValues::Full(v.as_slice()),
            Held::Compact(c) => PartitionValues::Compact(c.view()),
        }
    }

    /// Bytes of memory held.
    fn bytes(&self) -> u64 {
        match self {
            Held::Full(v) => v.len() as u64,
            Held::Compact(c) => c.heap_bytes(),
        }
    }
}

/// A partition of an in-memory build whose kernel solve needs more device
/// memory than `--gpu-mem-limit`: solved through the pipeline, its chunks
/// streamed through the device, while the partitions around it are solved
/// in memory.
struct StreamedSlot<'a, G: Game> {
    solver: ExternalSolver<'a, G>,
    /// The build's values so far, by slot: the pipeline reads every earlier
    /// partition the game's rules reach (the kernels' own reads may leave
    /// some out, such as lost partitions they decide without reading).
    in_memory: &'a [Option<Arc<Held>>],
    /// The slots below this have their values on this member's scratch
    /// (see `build`).
    on_scratch: &'a std::cell::Cell<usize>,
    team: &'a dyn Team,
}

impl<G: Game> StreamedSlot<'_, G> {
    /// Solves `slot` (only the `reached` indices, where given) and returns
    /// its values. The pipeline reads earlier partitions from scratch: those
    /// held that are not there yet are written first, once for the build. On a team, member `slot % size` solves and the others receive
    /// the values, as an external build's members do.
    fn solve(
        &self,
        slot: usize,
        reached: Option<&[u64]>,
        resume: Option<PassCheckpoint>,
        checkpoint: &mut dyn FnMut(PassCheckpoint) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let (layout, disks, team) = (self.solver.layout, self.solver.disks, self.team);
        let owner = slot % team.size();
        if team.rank() == owner {
            let first = self.on_scratch.get().min(slot);
            for (earlier, held) in self.in_memory[..slot].iter().enumerate().skip(first) {
                if let Some(held) = held {
                    spill_values(held, &disks.values_path(earlier), layout.size(earlier))?;
                }
            }
            self.on_scratch.set(slot);
            if team.size() == 1 {
                self.solver.solve(slot, reached, resume, checkpoint)?;
            } else {
                self.solver.solve(slot, reached, None, &mut |_| Ok(()))?;
            }
        }
        let path = disks.values_path(slot);
        let size = layout.size(slot);
        if team.size() > 1 {
            share_values(team, owner, &path, size)?;
        }
        let mut values = vec![0u8; size as usize];
        ByteFile::open_existing_parts(&path, size)?.read_at(0, &mut values)?;
        self.solver.stats.read(size);
        // Its passes' side files are not read again; its values stay, for
        // the later streamed partitions that read them.
        for what in ["summary", "flags"] {
            let side = disks.side_path(slot, what);
            std::fs::remove_file(&side)
                .map_err(|e| Error::io("removing scratch file", &side, e))?;
        }
        Ok(values)
    }
}

/// Writes `held` (a partition of `len` indices) to the scratch value file
/// `path` unless a complete copy is there: under a temporary name first,
/// so that an interruption never leaves a partial file the next run trusts.
fn spill_values(held: &Held, path: &FileParts, len: u64) -> Result<()> {
    if path.complete(len) {
        return Ok(());
    }
    let tmp = path.with_suffix("-tmp");
    let file = ByteFile::create_or_open_parts(&tmp, len)?;
    const PIECE: u64 = 64 << 20;
    let mut piece = Vec::new();
    let mut offset = 0;
    while offset < len {
        let n = PIECE.min(len - offset);
        match held {
            Held::Full(v) => file.write_at(offset, &v[offset as usize..(offset + n) as usize])?,
            Held::Compact(c) => {
                piece.resize(n as usize, 0);
                c.view().expand_into(offset, &mut piece);
                file.write_at(offset, &piece)?;
            }
        }
        offset += n;
    }
    file.sync()?;
    tmp.rename_to(path)
}

/// The checkpoint inside partition `slot` the state holds, if its scratch
/// files are still all there (a checkpoint is only as good as the scratch
/// it describes: without them the partition is redone whole, exactly).
fn checkpoint_of(
    state: &State,
    disks: &ScratchDisks,
    layout: &Layout,
    slot: usize,
) -> Option<PassCheckpoint> {
    state
        .current
        .clone()
        .filter(|(s, _)| *s == slot)
        .map(|(_, c)| c)
        .filter(|_| scratch_intact(disks, slot, layout.size(slot)))
}

/// The manifest of a finished build of `info`'s game and parameters in
/// `out`, every file it names in place at its length; `None` where `out`
/// holds no manifest. Another build's manifest, or a file missing, is an
/// error: a `--resume` builds over neither.
fn finished_build(
    out: &Path,
    info: &GameInfo,
    param_hash: &str,
    encoding: ValueEncoding,
) -> Result<Option<Manifest>> {
    if !out.join(format::MANIFEST_NAME).exists() {
        return Ok(None);
    }
    let m = format::read_manifest(out)?;
    if m.game != info.id
        || m.param_hash != param_hash
        || m.format_version != FORMAT_VERSION
        || m.encoding != encoding
        || m.engine.is_some()
    {
        return Err(Error::NotAvailable(format!(
            "cannot resume: {} holds a finished build of {} (format {}{}), not {} (format {FORMAT_VERSION}); use another --out, or leave out --resume to build over it",
            out.display(),
            m.canonical_game(),
            m.format_version,
            if m.engine.is_some() { ", engine files" } else { "" },
            info.canonical(),
        )));
    }
    for f in &m.files {
        let path = out.join(&f.name);
        let len = std::fs::metadata(&path).map(|md| md.len()).ok();
        if len != Some(f.bytes) {
            return Err(Error::NotAvailable(format!(
                "cannot resume: {} is finished, but its file {} is {} ({} bytes in manifest.json): check it with `tbforge verify {}`, or leave out --resume to build it again",
                out.display(),
                f.name,
                len.map_or("missing".to_string(), |l| format!("{l} bytes long")),
                f.bytes,
                out.display(),
            )));
        }
    }
    Ok(Some(m))
}

/// Removes the journal of a build's passes, once its log holds them (or a
/// finished build's --resume finds it left by a run killed at its end).
fn remove_pass_journal(out: &Path) -> Result<()> {
    let journal = out.join(PASS_JOURNAL);
    if journal.exists() {
        std::fs::remove_file(&journal)
            .map_err(|e| Error::io("removing the pass journal", &journal, e))?;
    }
    Ok(())
}

/// Removes what a killed writer left under temporary names (`.NAME.tmpPID`):
/// never read by anyone, but not to be shipped either.
fn remove_stale_temporaries(out: &Path) -> Result<()> {
    let entries = std::fs::read_dir(out).map_err(|e| Error::io("listing", out, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.contains(".tmp") && entry.path().is_file() {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|e| Error::io("removing stale temporary", &path, e))?;
        }
    }
    Ok(())
}

/// What an all-in-memory build holds at its peak: every partition's values
/// (later partitions read earlier ones), the forward search's two bits per
/// index or the solver's bit per index of the largest partition, the file
/// writer and the process itself.
fn in_memory_bytes(layout: &Layout, encoding: ValueEncoding) -> u64 {
    let total = layout.total_size();
    let largest = (0..layout.len()).map(|s| layout.size(s)).max().unwrap_or(0);
    total + (total / 4).max(largest / 8) + format::write_memory_bytes(encoding) + baseline_bytes()
}

/// The process before any data: code, libraries, allocator. Measured on a
/// pipeline build (tests/pipeline_memory.rs's): its mapped file pages (the
/// binary's code and the C libraries, faulted in 64 KiB around what runs)
/// once the pipeline's code (zstd among it) has run, and the heap beyond
/// the planned buffers (the allocator's slack, small tables, stacks). The
/// binary grows with the games, the explorer's server, the GPU paths, and
/// its resident code with it, though a build runs little of it: at 14 MiB
/// (2026-12-06), the test binary's code alone was 12.2 to 13.7 MB resident,
/// and a 16-thread build under 20 MiB peaked at 20.9 to 21.5 MB (2 threads:
/// 20.0 MB; the release binary 18.3 and 19.4 to 19.8 MB). This is that
/// figure with a margin.
const BASELINE_BYTES: u64 = 16 << 20;

/// The process before any data, with its worker threads: each adds its stack
/// and small per-thread state (measured: with the run decoders pooled, not
/// kept per thread, a 16-thread pipeline build peaks no higher than a
/// 2-thread one at the same plan; 192 KiB a thread is the margin for deeper
/// stacks).
/// The pipeline's plan within what `--mem-limit` (1 GiB without it) leaves
/// past the baseline, `held` bytes held meanwhile and a device's resident
/// memory; and the bytes a streamed path's page-locked host buffers may
/// take, a share of that (`u64::MAX`, no bound, without a measured device
/// or a limit).
fn plan_within(opts: &BuildOptions, held: u64) -> (ExternalPlan, u64) {
    let budget = opts
        .mem_limit
        .unwrap_or(1 << 30)
        .saturating_sub(baseline_bytes() + held + opts.device_host_bytes.unwrap_or(0));
    let staging = match (opts.device_host_bytes, opts.mem_limit) {
        (Some(_), Some(_)) => Some(budget / DEVICE_STAGING_SHARE),
        _ => None,
    };
    let plan = ExternalPlan {
        checkpoint_every: opts.checkpoint_every,
        ..ExternalPlan::for_mem_limit(budget - staging.unwrap_or(0))
    };
    (plan, staging.unwrap_or(u64::MAX))
}

fn baseline_bytes() -> u64 {
    BASELINE_BYTES + 192 * 1024 * rayon::current_num_threads() as u64
}

/// A finished partition's values read back from its tablebase file.
/// An earlier build that `--from` names: its manifest, read once.
struct Source {
    dir: PathBuf,
    info: GameInfo,
    manifest: format::Manifest,
}

impl Source {
    fn open(dir: &Path) -> Result<Source> {
        let manifest = format::read_manifest(dir).map_err(|e| {
            Error::NotAvailable(format!(
                "--from {}: not a finished tablebase ({e}); pass the directory of a finished build",
                dir.display()
            ))
        })?;
        let info = GameInfo {
            id: "",
            params: manifest.params.clone(),
            kind: manifest.kind,
        };
        Ok(Source {
            dir: dir.to_path_buf(),
            info,
            manifest,
        })
    }

    /// Partition `p`'s values from the source, if the game says the
    /// source's partition of that name holds them and the sizes agree.
    fn values<G: Game>(
        &self,
        game: &G,
        p: PartitionId,
        name: &str,
        size: u64,
    ) -> Result<Option<(Vec<u8>, LongDistances)>> {
        if self.manifest.game != game.info().id
            || self.manifest.encoding != ValueEncoding::Byte
            || !game.shares_partition_with(
                &GameInfo {
                    id: game.info().id,
                    ..self.info.clone()
                },
                p,
            )
        {
            return Ok(None);
        }
        let Some(entry) = self
            .manifest
            .files
            .iter()
            .find(|f| f.partition_name == name)
        else {
            return Ok(None);
        };
        if entry.tally.index_size != size {
            return Ok(None);
        }
        let path = self.dir.join(&entry.name);
        let file = TableFile::open_read(&path)?;
        if file.whole_file_crc32() != entry.crc32 {
            return Err(Error::NotAvailable(format!(
                "--from: {} does not match its manifest's crc32 (damaged or replaced): run `tbforge verify {}`, or build without --from",
                path.display(),
                self.dir.display()
            )));
        }
        Ok(Some((file.read_all_codes()?, file.long().clone())))
    }
}

fn read_values(path: &Path, size: u64) -> Result<(Vec<u8>, LongDistances)> {
    let file = TableFile::open_read(path)?;
    let values = file.read_all_codes()?;
    if values.len() as u64 != size || file.header().encoding != ValueEncoding::Byte {
        return Err(Error::NotAvailable(format!(
            "cannot resume: {} does not hold this partition's one-byte values; delete the output directory and build again",
            path.display()
        )));
    }
    Ok((values, file.long().clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_of_one_process_share_one_writer_pool_of_the_cores_they_leave() {
        let cores = rayon::ThreadPoolBuilder::new()
            .num_threads(9)
            .build()
            .unwrap();
        cores.install(|| {
            let first = write_pool(2).unwrap();
            let second = write_pool(2).unwrap();
            assert!(Arc::ptr_eq(&first, &second));
            assert_eq!(first.current_num_threads(), 7);
            let alone = write_pool(1).unwrap();
            assert_eq!(alone.current_num_threads(), 8);
            assert!(Arc::ptr_eq(&first, &write_pool(2).unwrap()));
            drop((first, second));
            assert_eq!(write_pool(9).unwrap().current_num_threads(), 1);
        });
    }

    #[test]
    fn a_devices_resident_memory_and_page_locked_share_come_out_of_the_limit() {
        let mut opts = BuildOptions::new("unused");
        opts.mem_limit = Some(400 << 20);
        let held = 3 << 20;
        let (cpu, unbounded) = plan_within(&opts, held);
        assert_eq!(unbounded, u64::MAX);
        let budget = (400 << 20) - baseline_bytes() - held;
        assert_eq!(cpu.chunk, ExternalPlan::for_mem_limit(budget).chunk);
        // A device measured at 140 MB: the plan gets seven eighths of what
        // is left past it, the page-locked buffers the eighth.
        opts.device_host_bytes = Some(140 << 20);
        let (gpu, staging) = plan_within(&opts, held);
        let left = budget - (140 << 20);
        assert_eq!(staging, left / DEVICE_STAGING_SHARE);
        let planned = ExternalPlan::for_mem_limit(left - staging);
        assert_eq!(
            (gpu.chunk, gpu.lookup_chunk, gpu.run_capacity),
            (planned.chunk, planned.lookup_chunk, planned.run_capacity)
        );
        assert!(gpu.run_capacity < cpu.run_capacity);
        // No limit: nothing to share out, and no bound on the staging.
        opts.mem_limit = None;
        assert_eq!(plan_within(&opts, held).1, u64::MAX);
    }
}
