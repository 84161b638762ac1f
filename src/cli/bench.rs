//! `tbforge bench`: throughput figures of hashing, solving and probing, and
//! a build's time per stage.

use super::{open, set_threads, BenchWhat, CheckDevice};
use anyhow::bail;
use serde_json::json;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tbforge::game::{Device, DeviceCheckOptions, PartitionKernels};
use tbforge::registry::GameVisitor;
use tbforge::solve::{frontier_bfs, solve_partition, Layout, Progress};
use tbforge::Game;

pub fn bench(what: BenchWhat) -> anyhow::Result<ExitCode> {
    match what {
        BenchWhat::Gpu {
            game,
            params,
            samples,
            seed,
            work_log2,
            solve_max_size,
            cpu_max_size,
            device,
            threads,
            json,
        } => {
            let g = open(&game, &params)?;
            set_threads(threads)?;
            let device = open_check_device(device)?;
            let opts = DeviceCheckOptions {
                seed: seed.unwrap_or_else(clock_seed),
                samples,
                work_log2,
                solve_max_size: solve_max_size.unwrap_or(u64::MAX),
                cpu_max_size: cpu_max_size.unwrap_or(u64::MAX),
            };
            let canonical = g.visit(Canonical);
            let Some(kernels) = g.visit(KernelsOn(device))? else {
                bail!("{canonical} has no device kernels: nothing to check");
            };
            if !json {
                // Before the long part, so that a failing run can be replayed.
                println!(
                    "{} ({canonical}), seed {}, {} CPU threads",
                    kernels.name(),
                    opts.seed,
                    rayon::current_num_threads()
                );
            }
            let t = Instant::now();
            let report = kernels.device_check(&opts)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", report.render_table());
                println!("seed {}, {:.1} s", opts.seed, t.elapsed().as_secs_f64());
            }
            if report.compared() == 0 {
                bail!("{canonical}: the kernels compared nothing");
            }
            Ok(if report.all_matched() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "tbforge: a device result differs from its CPU twin (replay with --seed {})",
                    opts.seed
                );
                ExitCode::from(1)
            })
        }
        BenchWhat::Search {
            game,
            position,
            params,
            min_depth,
            max_depth,
            cpu_max_depth,
            time,
            samples,
            check_depth,
            seed,
            device,
            threads,
            json,
        } => {
            let g = open(&game, &params)?;
            set_threads(threads)?;
            if min_depth == 0 || check_depth == 0 || min_depth > max_depth {
                bail!("give depths of at least 1, --min-depth <= --max-depth");
            }
            if !(time > 0.0 && time.is_finite()) {
                bail!("--time {time}: give a positive number of seconds");
            }
            g.visit(super::bench_search::SearchBench(
                super::bench_search::SearchBenchArgs {
                    position,
                    min_depth,
                    max_depth,
                    cpu_max_depth,
                    time,
                    samples,
                    check_depth,
                    seed: seed.unwrap_or_else(clock_seed),
                    device,
                    json,
                },
            ))
        }
        BenchWhat::Pcie { size_mb, json } => pcie(size_mb, json),
        #[cfg(feature = "serve")]
        BenchWhat::Serve {
            dirs,
            connections,
            requests,
            positions,
            seconds,
            server_threads,
            client_threads,
            answers,
            json,
        } => super::serve::bench(super::serve::BenchArgs {
            dirs,
            connections,
            requests,
            positions,
            seconds,
            server_threads,
            client_threads,
            answers,
            json,
        }),
        BenchWhat::Probe { dir, json } => {
            let row = tbforge::probe::bench(&dir, &Default::default())?;
            if json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                print!("{}", tbforge::probe::render_bench_text(&[row]));
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchWhat::Zstd {
            dir,
            partition,
            level,
            sample_mb,
            threads,
            json,
        } => {
            let mut opts = tbforge::zstd_bench::ZstdBenchOptions {
                partition,
                level,
                ..Default::default()
            };
            if let Some(mb) = sample_mb {
                opts.sample_bytes = Some(mb.checked_mul(1 << 20).ok_or_else(|| {
                    anyhow::anyhow!("--sample-mb {mb} is out of range; give a size in MiB")
                })?);
            }
            if let Some(t) = threads {
                opts.threads = t;
            }
            let row = tbforge::zstd_bench::bench_zstd(&dir, &opts)?;
            if json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                print!("{}", tbforge::zstd_bench::render_zstd_text(&row));
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchWhat::Stages { dir, json } => {
            let stages = tbforge::solve::read_stages(&dir)?;
            if json {
                println!("{}", serde_json::to_string(&stages)?);
            } else {
                print!("{}", tbforge::solve::render_stages_text(&stages));
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

/// A seed from the clock: every run draws fresh inputs (and prints the seed).
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// The device `tbforge bench gpu` runs the kernels on.
fn open_check_device(device: CheckDevice) -> anyhow::Result<Device> {
    match device {
        CheckDevice::Cpu => Ok(Device::Cpu),
        #[cfg(feature = "cuda")]
        CheckDevice::Cuda => {
            let d = tbforge::backend::cuda::CudaDevice::open(0)
                .map_err(|e| anyhow::anyhow!("{e} (--device cpu runs a dry run without a GPU)"))?;
            Ok(Device::Cuda(Arc::new(d)))
        }
        #[cfg(not(feature = "cuda"))]
        CheckDevice::Cuda => {
            bail!("this tbforge was built without CUDA (--device cpu runs a dry run)")
        }
    }
}

/// The game's name with its parameters.
struct Canonical;

impl GameVisitor for Canonical {
    type Output = String;
    fn visit<G: Game>(self, game: &G) -> String {
        game.info().canonical()
    }
}

/// The game's kernels on a device.
struct KernelsOn(Device);

impl GameVisitor for KernelsOn {
    type Output = tbforge::Result<Option<Arc<dyn PartitionKernels>>>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        game.kernels(&self.0)
    }
}

#[cfg(feature = "cuda")]
fn pcie(size_mb: usize, json: bool) -> anyhow::Result<ExitCode> {
    let device = tbforge::backend::cuda::CudaDevice::open(0)?;
    let bytes = size_mb.max(1) << 20;
    let (h2d, d2h) = tbforge::backend::cuda::stream::copy_rates(&device, bytes)?;
    if json {
        println!(
            "{}",
            json!({ "device": device.name(), "bytes": bytes, "h2d_bytes_per_second": h2d, "d2h_bytes_per_second": d2h })
        );
    } else {
        println!(
            "{}: pinned copies of {size_mb} MiB: to the device {:.1} GB/s, back {:.1} GB/s",
            device.name(),
            h2d / 1e9,
            d2h / 1e9
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "cuda"))]
fn pcie(_: usize, _: bool) -> anyhow::Result<ExitCode> {
    bail!("this tbforge was built without the `cuda` feature: `bench pcie` needs it")
}
