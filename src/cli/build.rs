//! `tbforge build`: one game, or the default set, solved and written.

use super::{open, parse_size, plural, set_threads, Backend, BuildArgs, SideBySide};
use anyhow::bail;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use tbforge::dist::{Team, ThreadTeam};
use tbforge::game::Device;
use tbforge::registry::{GameVisitor, DEFAULT_SET};
use tbforge::solve::{build_game, BuildOptions, BuildReport};
use tbforge::Game;

pub fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let games = match &args.game {
        Some(g) => vec![open(g, &args.params)?],
        None => {
            if !args.params.is_empty() || args.out.is_some() {
                bail!("--param and --out need a GAME; give one (see `tbforge games`)");
            }
            DEFAULT_SET
                .iter()
                .map(|(g, params)| {
                    open(g, &params.iter().map(|p| p.to_string()).collect::<Vec<_>>())
                })
                .collect::<anyhow::Result<Vec<_>>>()?
        }
    };
    let mem_limit = args.mem_limit.as_deref().map(parse_size).transpose()?;
    let gpu_mem_limit = args.gpu_mem_limit.as_deref().map(parse_size).transpose()?;
    if gpu_mem_limit.is_some() && args.backend == Backend::Cpu {
        bail!(
            "--gpu-mem-limit with --backend cpu: leave out --gpu-mem-limit, or use --backend cuda"
        );
    }
    let members = members(&args)?;
    if mem_limit.is_some() {
        crate::limit_malloc_arenas();
    }
    set_threads(args.threads)?;
    let leader = members[0].team.as_ref().is_none_or(|t| t.rank() == 0);
    let reports = if members.len() == 1 {
        let member = members.into_iter().next().expect("one member");
        build_all(&games, &args, (mem_limit, gpu_mem_limit), member, leader)?
    } else {
        // One thread per GPU, each a member of the team: every member
        // builds every partition's own slice; member 0 reports.
        let results: Vec<anyhow::Result<Vec<BuildReport>>> = std::thread::scope(|s| {
            let handles: Vec<_> = members
                .into_iter()
                .enumerate()
                .map(|(i, m)| {
                    let (games, args) = (&games, &args);
                    s.spawn(move || build_all(games, args, (mem_limit, gpu_mem_limit), m, i == 0))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a GPU's build thread panicked")))
                })
                .collect()
        });
        // The member that failed first says why; the others only saw it stop.
        let mut first_error = None;
        let mut reports = None;
        for r in results {
            match r {
                Ok(r) => {
                    reports.get_or_insert(r);
                }
                Err(e) => {
                    let secondary = matches!(
                        e.downcast_ref::<tbforge::Error>(),
                        Some(tbforge::Error::Team { .. })
                    );
                    if first_error.is_none() || !secondary {
                        let keep = first_error.as_ref().is_none_or(|(s, _)| *s);
                        if keep {
                            first_error = Some((secondary, e));
                        }
                    }
                }
            }
        }
        if let Some((_, e)) = first_error {
            return Err(e);
        }
        reports.expect("members reported")
    };
    if args.json && leader {
        println!("{}", serde_json::to_string(&json!({ "builds": reports }))?);
    }
    Ok(ExitCode::SUCCESS)
}

/// One member of the build: its team (none: this process alone) and device.
struct Member {
    team: Option<Arc<dyn Team>>,
    device: Device,
}

/// Every game of the command, built by `member`; the leader prints.
fn build_all(
    games: &[tbforge::registry::AnyGame],
    args: &BuildArgs,
    (mem_limit, gpu_mem_limit): (Option<u64>, Option<u64>),
    member: Member,
    leader: bool,
) -> anyhow::Result<Vec<BuildReport>> {
    let gpu_mem_limit = match &member.device {
        Device::Cpu if gpu_mem_limit.is_some() => {
            bail!("--gpu-mem-limit needs a CUDA device, and this build runs on the CPU: leave it out, or build with --backend cuda on a machine with a GPU")
        }
        Device::Cpu => None,
        #[cfg(feature = "cuda")]
        Device::Cuda(d) if gpu_mem_limit.is_some() => {
            // Every kernel of the build, not only the streamed path's
            // buffers, stays within the limit: the device acts as the card.
            d.limit_memory(gpu_mem_limit.expect("checked"))?;
            gpu_mem_limit
        }
        #[cfg(feature = "cuda")]
        Device::Cuda(d) => Some(d.free_memory()?),
    };
    let mut reports = Vec::new();
    for game in games {
        let out = match &args.out {
            Some(o) => o.clone(),
            None => Path::new("tablebases").join(game.info().dir_name()),
        };
        let mut opts = BuildOptions::new(out);
        opts.progress = !args.json && leader;
        opts.mem_limit = mem_limit;
        opts.gpu_mem_limit = gpu_mem_limit;
        opts.disks = args.disk.clone();
        opts.resume = args.resume;
        opts.from = args.from.clone();
        opts.checkpoint_every = std::time::Duration::from_secs(args.checkpoint_every);
        opts.team = member.team.clone();
        opts.side_by_side = match args.side_by_side {
            SideBySide::Auto => None,
            SideBySide::On => Some(true),
            SideBySide::Off => Some(false),
        };
        let report = game.visit(BuildVisitor {
            opts,
            device: member.device.clone(),
            require_kernels: args.backend == Backend::Cuda,
        })?;
        if !args.json && leader && report.mode == "finished" {
            println!(
                "{}: already built in {} ({}); nothing to resume (`tbforge verify {}` checks the files)",
                report.game,
                report.out.display(),
                plural(report.files as u64, "file"),
                report.out.display(),
            );
        } else if !args.json && leader {
            println!(
                "{}: {} positions{} in {:.2} s ({:.3e} positions/s), {} in {}{}",
                report.game,
                report.positions,
                report
                    .reachable
                    .map(|r| format!(" ({r} reachable)"))
                    .unwrap_or_default(),
                report.seconds,
                report.positions_per_second,
                plural(report.files as u64, "file"),
                report.out.display(),
                match report.ranks {
                    1 => String::new(),
                    n => format!(", {n} {} members", report.team),
                }
            );
        }
        reports.push(report);
    }
    Ok(reports)
}

/// Who builds: this process alone on its device; under an MPI launcher,
/// this rank (its GPU: the host-local rank modulo the GPUs there); with
/// `--gpus`, one member per GPU of this host.
fn members(args: &BuildArgs) -> anyhow::Result<Vec<Member>> {
    #[cfg(feature = "mpi")]
    if tbforge::dist::MpiTeam::launched() {
        if args.gpus.is_some() {
            bail!("--gpus under MPI: run one rank per GPU instead (mpirun -np <GPUs per host x hosts>)");
        }
        let team = tbforge::dist::MpiTeam::init(!args.no_shared_memory)?;
        mpi_stop_message(team.rank(), team.size(), team.host());
        let ordinal = match args.backend {
            Backend::Cpu => 0,
            _ => gpu_count().map_or(0, |n| team.local_rank() % n.max(1)),
        };
        let device = open_device(args.backend, ordinal)?;
        return Ok(vec![Member {
            team: Some(Arc::new(team)),
            device,
        }]);
    }
    #[cfg(not(feature = "mpi"))]
    if std::env::var("OMPI_COMM_WORLD_SIZE")
        .or_else(|_| std::env::var("PMI_SIZE"))
        .is_ok_and(|n| n.trim() != "1")
    {
        bail!(
            "started by an MPI launcher, but this tbforge was built without the `mpi` feature, so each process would build alone: rebuild with `cargo build --release --features mpi` (needs Open MPI), or run one process"
        );
    }
    if args.no_shared_memory {
        bail!("--no-shared-memory concerns the ranks of an MPI build (mpirun -np N tbforge build ...); leave it out here");
    }
    // The ordinal of each member's GPU.
    let ordinals: Vec<usize> = match args.gpus.as_deref() {
        None => vec![0],
        Some(text) => {
            if args.backend == Backend::Cpu {
                bail!("--gpus {text} with --backend cpu: leave out --gpus, or use --backend cuda");
            }
            let present = gpu_count()?;
            if text == "all" {
                (0..present).collect()
            } else if text.contains(',') {
                // Listed GPUs; one listed twice holds two members (a dry run
                // of the several-GPU path on one GPU).
                text.split(',')
                    .map(|o| match o.trim().parse::<usize>() {
                        Ok(o) if o < present => Ok(o),
                        Ok(o) => bail!("--gpus {text}: there is no GPU {o}, this machine has {present} CUDA device(s), numbered from 0"),
                        Err(_) => bail!("--gpus {text}: give `all`, a count, or GPU numbers separated by commas (0,1)"),
                    })
                    .collect::<anyhow::Result<_>>()?
            } else {
                match text.parse::<usize>() {
                    Ok(0) | Err(_) => bail!("--gpus {text}: give `all`, a count of at least 1, or GPU numbers separated by commas (0,1)"),
                    Ok(n) if n > present => {
                        bail!("--gpus {n}: this machine has {present} CUDA device(s)")
                    }
                    Ok(n) => (0..n).collect(),
                }
            }
        }
    };
    let gpus = ordinals.len();
    if gpus <= 1 {
        return Ok(vec![Member {
            team: None,
            device: open_device(args.backend, ordinals[0])?,
        }]);
    }
    let devices = ordinals
        .iter()
        .map(|&i| open_device(Backend::Cuda, i))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(ThreadTeam::new(gpus)
        .into_iter()
        .zip(devices)
        .map(|(t, device)| Member {
            team: Some(Arc::new(t) as Arc<dyn Team>),
            device,
        })
        .collect())
}

/// CUDA devices present (an error where there is no usable driver).
fn gpu_count() -> anyhow::Result<usize> {
    #[cfg(feature = "cuda")]
    {
        let n = tbforge::backend::cuda::CudaDevice::count()?;
        if n == 0 {
            bail!("no CUDA device present; use --backend cpu");
        }
        Ok(n)
    }
    #[cfg(not(feature = "cuda"))]
    bail!("this tbforge was built without the `cuda` feature; leave out --gpus")
}

/// The line a rank prints when the MPI launcher stops it because another
/// rank ended (mpirun sends SIGTERM to the rest of the job).
#[cfg(feature = "mpi")]
static STOP_LINE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

#[cfg(feature = "mpi")]
extern "C" fn stopped_by_launcher(_signal: libc::c_int) {
    if let Some(line) = STOP_LINE.get() {
        // SAFETY: write(2) is async-signal-safe, and the buffer is a static
        // that lives until the process ends.
        unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    }
    // SAFETY: _exit(2) is async-signal-safe and ends the process at once,
    // which is what the launcher asked for.
    unsafe { libc::_exit(2) }
}

#[cfg(feature = "mpi")]
fn mpi_stop_message(rank: usize, size: usize, host: &str) {
    let line = format!(
        "tbforge: error: rank {rank} of {size} on {host} stopped by the MPI launcher (another rank ended or was killed); finished partitions are kept: run the same command with --resume (any number of ranks) to continue\n"
    );
    if STOP_LINE.set(line.into_bytes()).is_ok() {
        // SAFETY: the handler only calls async-signal-safe functions
        // (write, _exit) on a static buffer set before it is installed.
        unsafe {
            libc::signal(
                libc::SIGTERM,
                stopped_by_launcher as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
}

/// The process's resident memory before it first opened a device: what the
/// device's driver, context and kernels keep resident is measured from it.
static RESIDENT_BEFORE_DEVICE: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();

/// The device the build may run kernels on, per `--backend`: `cuda`, a GPU
/// or an error; `auto`, a GPU if one is usable, else the CPU (said on stderr).
fn open_device(backend: Backend, ordinal: usize) -> anyhow::Result<Device> {
    RESIDENT_BEFORE_DEVICE.get_or_init(tbforge::pipeline::resident_bytes);
    #[cfg(feature = "cuda")]
    {
        use tbforge::backend::cuda::CudaDevice;
        match backend {
            Backend::Cpu => Ok(Device::Cpu),
            Backend::Cuda => Ok(Device::Cuda(Arc::new(CudaDevice::open(ordinal).map_err(
                |e| {
                    let e = e.to_string();
                    // Most reasons already name the fix; say it once.
                    if e.contains("--backend cpu") {
                        anyhow::anyhow!("{e}")
                    } else {
                        anyhow::anyhow!("{e}; use --backend cpu")
                    }
                },
            )?))),
            Backend::Auto => match CudaDevice::open(ordinal) {
                Ok(d) => Ok(Device::Cuda(Arc::new(d))),
                Err(e) => {
                    eprintln!("tbforge: building on the CPU ({e})");
                    Ok(Device::Cpu)
                }
            },
        }
    }
    #[cfg(not(feature = "cuda"))]
    let _ = ordinal;
    #[cfg(not(feature = "cuda"))]
    match backend {
        Backend::Cuda => {
            bail!("this tbforge was built without the `cuda` feature; use --backend cpu")
        }
        _ => Ok(Device::Cpu),
    }
}

/// Builds one game with its kernels on the chosen device, where it has any.
struct BuildVisitor {
    opts: BuildOptions,
    device: Device,
    require_kernels: bool,
}

impl GameVisitor for BuildVisitor {
    type Output = anyhow::Result<BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let mut opts = self.opts;
        opts.kernels = game.kernels(&self.device)?;
        if self.require_kernels && opts.kernels.is_none() {
            bail!(
                "{} has no CUDA kernels (see `tbforge games`); use --backend cpu or auto",
                game.info().id
            );
        }
        // The driver's mappings, the context and the compiled kernels stay
        // resident for the whole build: `--mem-limit` bounds them too.
        if !matches!(self.device, Device::Cpu) {
            if let (Some(Some(before)), Some(now)) = (
                RESIDENT_BEFORE_DEVICE.get(),
                tbforge::pipeline::resident_bytes(),
            ) {
                opts.device_host_bytes = Some(now.saturating_sub(*before));
            }
        }
        // So do the two page-locked buffers in-memory solves copy values
        // through, pinned at their first copy and kept: under a limit they
        // get a sixty-fourth of it each, and the plan counts them.
        #[cfg(feature = "cuda")]
        if let (Device::Cuda(gpu), Some(limit), Some(host)) =
            (&self.device, opts.mem_limit, opts.device_host_bytes)
        {
            gpu.limit_copy_buffers(usize::try_from(limit / 64).unwrap_or(usize::MAX));
            opts.device_host_bytes = Some(host + 2 * gpu.copy_buffer_bytes() as u64);
        }
        Ok(build_game(game, &opts)?)
    }
}
