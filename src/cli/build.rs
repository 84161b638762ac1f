//! `tbforge build`: one game, or the default set, solved and written.

use super::{open, parse_size, plural, set_threads, Backend, BuildArgs};
use anyhow::bail;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
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
    let device = open_device(args.backend)?;
    if mem_limit.is_some() {
        crate::limit_malloc_arenas();
    }
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
        opts.from = args.from.clone();
        opts.checkpoint_every = std::time::Duration::from_secs(args.checkpoint_every);
        let report = game.visit(BuildVisitor {
            opts,
            device: device.clone(),
            require_kernels: args.backend == Backend::Cuda,
        })?;
        if !args.json {
            println!(
                "{}: {} positions{} in {:.2} s ({:.3e} positions/s), {} in {}",
                report.game,
                report.positions,
                report
                    .reachable
                    .map(|r| format!(" ({r} reachable)"))
                    .unwrap_or_default(),
                report.seconds,
                report.positions_per_second,
                plural(report.files as u64, "file"),
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

/// The device the build may run kernels on, per `--backend`: `cuda`, a GPU
/// or an error; `auto`, a GPU if one is usable, else the CPU (said on stderr).
fn open_device(backend: Backend) -> anyhow::Result<Device> {
    #[cfg(feature = "cuda")]
    {
        use std::sync::Arc;
        use tbforge::backend::cuda::CudaDevice;
        match backend {
            Backend::Cpu => Ok(Device::Cpu),
            Backend::Cuda => Ok(Device::Cuda(Arc::new(
                CudaDevice::open(0).map_err(|e| anyhow::anyhow!("{e}; use --backend cpu"))?,
            ))),
            Backend::Auto => match CudaDevice::open(0) {
                Ok(d) => Ok(Device::Cuda(Arc::new(d))),
                Err(e) => {
                    eprintln!("tbforge: building on the CPU ({e})");
                    Ok(Device::Cpu)
                }
            },
        }
    }
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
        Ok(build_game(game, &opts)?)
    }
}
