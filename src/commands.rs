//! One function per subcommand: parse nothing (clap did), call the library,
//! print text or one JSON object.

use crate::{open, Backend, BenchWhat, BuildArgs, CheckFailed, DEFAULT_SET};
use anyhow::{bail, Context};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;
use tbforge::format::{self, FormatError};
use tbforge::game::{catalog, GameVisitor};
use tbforge::solve::{
    build_game, frontier_bfs, solve_partition, BuildOptions, BuildReport, Layout, Progress,
};
use tbforge::Game;

pub fn games(json: bool) -> anyhow::Result<ExitCode> {
    let games = catalog();
    if json {
        println!("{}", serde_json::to_string(&json!({ "games": games }))?);
        return Ok(ExitCode::SUCCESS);
    }
    for g in games {
        let kind = match g.kind {
            tbforge::GameKind::TwoPlayer => "two-player",
            tbforge::GameKind::Puzzle => "puzzle",
        };
        let default = DEFAULT_SET
            .iter()
            .find(|(name, _)| *name == g.name)
            .map(|(_, p)| match p.len() {
                0 => "  [default set]".to_string(),
                _ => format!("  [default set: {}]", p.join(" ")),
            })
            .unwrap_or_default();
        println!("{}  ({kind}){default}", g.name);
        println!("    {}", g.summary);
        for p in g.params {
            println!(
                "    --param {}=<{}>  (default {}) {}",
                p.key, p.key, p.default, p.help
            );
        }
        println!("    position: {}", g.notation);
        println!("    example:  {}", g.example);
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

fn set_threads(threads: Option<usize>) -> anyhow::Result<()> {
    if let Some(n) = threads {
        if n == 0 {
            bail!("--threads 0: give at least 1 thread");
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .context("cannot start the worker threads")?;
    }
    Ok(())
}

/// `8G`, `512M`, `64K`, `1000` (bytes); binary multiples.
fn parse_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let (digits, mult) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (t, 1u64),
        Some((i, _)) => {
            let unit = t[i..].trim().to_ascii_uppercase();
            let mult = match unit.trim_end_matches("IB").trim_end_matches('B') {
                "" => 1,
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                "T" => 1 << 40,
                _ => bail!("--mem-limit `{text}`: unknown unit; write e.g. 512M or 8G"),
            };
            (&t[..i], mult)
        }
    };
    let n: u64 = digits.parse().map_err(|_| {
        anyhow::anyhow!("--mem-limit `{text}` is not a size; write e.g. 512M or 8G")
    })?;
    n.checked_mul(mult).filter(|&b| b > 0).ok_or_else(|| {
        anyhow::anyhow!("--mem-limit `{text}` is out of range; write e.g. 512M or 8G")
    })
}

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
    let gpu = open_gpu(args.backend)?;
    set_threads(args.threads)?;
    let mut reports = Vec::new();
    for game in &games {
        let out = match &args.out {
            Some(o) => o.clone(),
            None => Path::new("tablebases").join(game.info().dir_name()),
        };
        let mut opts = BuildOptions::new(out);
        opts.progress = !args.json;
        opts.mem_limit = mem_limit;
        opts.disks = args.disk.clone();
        opts.resume = args.resume;
        opts.checkpoint_every = std::time::Duration::from_secs(args.checkpoint_every);
        let report = game.visit(BuildVisitor {
            opts,
            gpu: gpu.clone(),
            require_gpu: args.backend == Backend::Cuda,
        })?;
        if !args.json {
            println!(
                "{}: {} positions{} in {:.2} s ({:.3e} positions/s), {} files in {}",
                report.game,
                report.positions,
                report
                    .reachable
                    .map(|r| format!(" ({r} reachable)"))
                    .unwrap_or_default(),
                report.seconds,
                report.positions_per_second,
                report.files,
                report.out.display()
            );
        }
        reports.push(report);
    }
    if args.json {
        println!("{}", serde_json::to_string(&json!({ "builds": reports }))?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The GPU the build may use, per `--backend`.
#[cfg(feature = "cuda")]
type Gpu = Option<std::sync::Arc<tbforge::backend::cuda::CudaBackend>>;
#[cfg(not(feature = "cuda"))]
type Gpu = Option<()>;

/// `cuda`: a GPU or an error; `auto`: a GPU if one is usable, else the CPU (said on stderr).
fn open_gpu(backend: Backend) -> anyhow::Result<Gpu> {
    #[cfg(feature = "cuda")]
    {
        use tbforge::backend::cuda::CudaBackend;
        match backend {
            Backend::Cpu => Ok(None),
            Backend::Cuda => Ok(Some(std::sync::Arc::new(
                CudaBackend::open(0).map_err(|e| anyhow::anyhow!("{e}; use --backend cpu"))?,
            ))),
            Backend::Auto => match CudaBackend::open(0) {
                Ok(b) => Ok(Some(std::sync::Arc::new(b))),
                Err(e) => {
                    eprintln!("tbforge: building on the CPU ({e})");
                    Ok(None)
                }
            },
        }
    }
    #[cfg(not(feature = "cuda"))]
    match backend {
        Backend::Cuda => {
            bail!("this tbforge was built without the `cuda` feature; use --backend cpu")
        }
        _ => Ok(None),
    }
}

struct BuildVisitor {
    opts: BuildOptions,
    gpu: Gpu,
    require_gpu: bool,
}

impl GameVisitor for BuildVisitor {
    type Output = anyhow::Result<BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let id = game.info().id;
        // Only Morris and Connect Four have GPU kernels; other games are small
        // enough for the CPU.
        if self.require_gpu && id != "morris" && id != "connect4" {
            bail!(
                "the CUDA backend has kernels for morris and connect4 only, not {id}; \
                 use --backend cpu or auto"
            );
        }
        // Without a GPU, Morris partitions go to the CPU backend's own
        // solver (candidate-driven passes, the GPU's scheme on rayon).
        let no_gpu = self.gpu.is_none();
        let mut opts = self.opts;
        if no_gpu && id == "morris" {
            use std::sync::Arc;
            use tbforge::backend::accel::{CpuTwinSolver, MorrisAccelerator};
            opts.accelerator = Some(Arc::new(MorrisAccelerator::<G>::new(Arc::new(
                CpuTwinSolver,
            ))));
        }
        #[cfg(feature = "cuda")]
        let opts = {
            let mut opts = opts;
            if let Some(gpu) = self.gpu {
                use std::sync::Arc;
                use tbforge::backend::accel::MorrisAccelerator;
                use tbforge::backend::accel_connect4::Connect4Accelerator;
                use tbforge::backend::cuda::Connect4Cuda;
                opts.accelerator = match id {
                    "connect4" => Some(Arc::new(Connect4Accelerator::<G>::new(Arc::new(
                        Connect4Cuda::new(gpu)?,
                    )))),
                    _ => Some(Arc::new(MorrisAccelerator::<G>::new(gpu))),
                };
            }
            opts
        };
        #[cfg(not(feature = "cuda"))]
        let _ = self.gpu;
        Ok(build_game(game, &opts)?)
    }
}

/// Times forward search and retrograde analysis of a game in memory.
struct SolveBench;

impl GameVisitor for SolveBench {
    type Output = tbforge::Result<serde_json::Value>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let hidden = Progress::hidden();
        let layout = Layout::new(game)?;
        let positions = layout.total_size();
        let t = Instant::now();
        let reach = frontier_bfs(game, &layout, &hidden)?;
        let bfs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
        for slot in 0..layout.len() {
            let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
            solved[slot] = Some(solve_partition(game, &layout, &deps, slot, &hidden)?);
        }
        let solve = t.elapsed().as_secs_f64();
        let reachable = reach.as_ref().map(|r| r.total());
        Ok(json!({
            "game": game.info().canonical(),
            "positions": positions,
            "reachable": reachable,
            "threads": rayon::current_num_threads(),
            "bfs_seconds": bfs,
            "bfs_positions_per_second": reachable.unwrap_or(0) as f64 / bfs.max(1e-9),
            "solve_seconds": solve,
            "solve_positions_per_second": positions as f64 / solve.max(1e-9),
        }))
    }
}

pub fn verify(dir: &Path, deep: bool, json: bool) -> anyhow::Result<ExitCode> {
    let report = format::verify_dir(dir, deep)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_verify_text(&report));
    }
    if report.ok {
        Ok(ExitCode::SUCCESS)
    } else {
        if !json {
            eprintln!("tbforge: verify failed: {}", dir.display());
        }
        Ok(ExitCode::from(1))
    }
}

pub fn info(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let report = format::info(dir)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_info_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn probe(dir: &Path, position: &str, json: bool) -> anyhow::Result<ExitCode> {
    match tbforge::probe::probe_text(dir, position) {
        Ok(report) => {
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", report.to_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ tbforge::Error::Format(FormatError::NotInTablebase { .. })) => {
            Err(CheckFailed(format!(
                "{e}; the position has more pieces or moves than {} was built for: build a larger \
                 instance (see `tbforge info {}`)",
                dir.display(),
                dir.display()
            ))
            .into())
        }
        Err(e @ tbforge::Error::Format(FormatError::IllegalIndex { .. })) => {
            Err(CheckFailed(e.to_string()).into())
        }
        Err(e) => Err(e.into()),
    }
}

pub fn bench(what: BenchWhat) -> anyhow::Result<ExitCode> {
    match what {
        BenchWhat::Probe { dir, json } => {
            let row = tbforge::probe::bench(&dir, &Default::default())?;
            if json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                print!("{}", tbforge::probe::render_bench_text(&[row]));
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchWhat::Hash { json } => {
            let rows = tbforge::hash::bench::run(2_000_000);
            if json {
                println!("{}", serde_json::to_string(&json!({ "hash": rows }))?);
            } else {
                println!("{:<40} {:>12} {:>12}", "space", "ns/rank", "ns/unrank");
                for r in &rows {
                    println!(
                        "{:<40} {:>12.2} {:>12.2}",
                        r.name, r.ns_per_rank, r.ns_per_unrank
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchWhat::Solve {
            game,
            params,
            threads,
            json,
        } => {
            let g = open(&game, &params)?;
            set_threads(threads)?;
            let row = g.visit(SolveBench)?;
            if json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                println!(
                    "{}: {} positions, {} threads\n  forward search {:.3} s ({:.3e} positions/s)\n  retrograde     {:.3} s ({:.3e} positions/s)",
                    row["game"].as_str().unwrap_or_default(),
                    row["positions"],
                    row["threads"],
                    row["bfs_seconds"].as_f64().unwrap_or(0.0),
                    row["bfs_positions_per_second"].as_f64().unwrap_or(0.0),
                    row["solve_seconds"].as_f64().unwrap_or(0.0),
                    row["solve_positions_per_second"].as_f64().unwrap_or(0.0),
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
