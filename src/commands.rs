//! One function per subcommand: parse nothing (clap did), call the library,
//! print text or one JSON object.

use crate::{default_set, open, Backend, BenchWhat, BuildArgs, CheckFailed};
use anyhow::{bail, Context};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use tbforge::game::{catalog, GameVisitor};
use tbforge::solve::{solve_game, Progress};
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
        println!(
            "{}  ({kind}){}",
            g.name,
            if g.in_default_set {
                "  [default set]"
            } else {
                ""
            }
        );
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

pub fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    if args.mem_limit.is_some() || !args.disk.is_empty() || args.resume {
        bail!("--mem-limit, --disk and --resume belong to the external-memory pipeline, which is not built yet; build in memory without them");
    }
    let names: Vec<String> = match &args.game {
        Some(g) => vec![g.clone()],
        None => {
            if !args.params.is_empty() || args.out.is_some() {
                bail!("--param and --out need a GAME; give one (see `tbforge games`)");
            }
            default_set().into_iter().map(String::from).collect()
        }
    };
    let games = names
        .iter()
        .map(|name| open(name, &args.params))
        .collect::<anyhow::Result<Vec<_>>>()?;
    match args.backend {
        Backend::Cuda => bail!("the CUDA backend is not built yet; use --backend cpu"),
        Backend::Auto => eprintln!("tbforge: no CUDA backend in this build yet; using the CPU"),
        Backend::Cpu => {}
    }
    set_threads(args.threads)?;
    let mut reports = Vec::new();
    for game in &games {
        let report = game.visit(BuildVisitor {
            progress: !args.json,
        })?;
        if !args.json {
            println!("{report}");
        }
        reports.push(report);
    }
    if args.json {
        println!("{}", serde_json::to_string(&json!({ "builds": reports }))?);
    }
    Ok(ExitCode::SUCCESS)
}

struct BuildVisitor {
    progress: bool,
}

impl GameVisitor for BuildVisitor {
    type Output = anyhow::Result<serde_json::Value>;
    fn visit<G: Game>(self, game: &G) -> anyhow::Result<serde_json::Value> {
        let info = game.info();
        let start = std::time::Instant::now();
        let solved = solve_game(game, &Progress::new(self.progress))?;
        let positions = solved.layout.total_size();
        let seconds = start.elapsed().as_secs_f64();
        Ok(json!({
            "game": info.canonical(),
            "positions": positions,
            "reachable": solved.reachable.as_ref().map(|r| r.total()),
            "seconds": seconds,
        }))
    }
}

pub fn verify(_dir: &Path, _deep: bool, _json: bool) -> anyhow::Result<ExitCode> {
    let _ = CheckFailed(String::new());
    bail!("verify is not built yet")
}

pub fn info(_dir: &Path, _json: bool) -> anyhow::Result<ExitCode> {
    bail!("info is not built yet")
}

pub fn probe(_dir: &Path, _position: &str, _json: bool) -> anyhow::Result<ExitCode> {
    bail!("probe is not built yet")
}

pub fn bench(_what: BenchWhat) -> anyhow::Result<ExitCode> {
    bail!("bench is not built yet")
}
