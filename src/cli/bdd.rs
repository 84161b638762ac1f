//! `tbforge bdd-count`: layered symbolic BFS with BDDs, per layer the BDD's
//! nodes and the number of states.

use clap::Args;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;
use tbforge::bdd::{layered_bfs, BddOptions, Bdds};
use tbforge::registry::open_symbolic;

#[derive(Args, Debug)]
pub(crate) struct BddCountArgs {
    /// The game (see `tbforge games`); a game without a BDD encoding is
    /// refused with the list of those that have one.
    game: String,
    /// A game parameter, `KEY=VALUE` (repeatable), e.g. `--param width=5`.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Threads of the BDD library's parallel apply (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Memory for the BDD node table and cache, e.g. `16G` (default: 3/4 of
    /// the memory available now).
    #[arg(long, value_name = "SIZE")]
    mem_limit: Option<String>,
    /// Stop after this many layers (default: until a layer is empty).
    #[arg(long, value_name = "N")]
    max_layers: Option<u32>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / f64::from(1 << 30))
}

pub(crate) fn bdd_count(args: BddCountArgs) -> anyhow::Result<ExitCode> {
    let params = super::parse_params(&args.params)?;
    let game = open_symbolic(&args.game, &params)?;
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads 0: give at least 1 thread"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let memory = match &args.mem_limit {
        Some(text) => super::parse_size(text)?,
        None => available_memory().map_or(4 << 30, |m| m / 4 * 3),
    };
    let options = BddOptions::for_memory(memory, threads as u32);
    let bdds = Bdds::new(game.variables(), options)?;
    let name = game.name();
    eprintln!(
        "bdd-count {name}: {} variables, {} threads, room for {} nodes ({})",
        game.variables(),
        threads,
        bdds.options().nodes,
        gib(memory)
    );
    if !args.json {
        println!(
            "{:>5}  {:>12}  {:>20}  {:>9}",
            "layer", "nodes", "states", "seconds"
        );
    }
    let report = layered_bfs(game.as_ref(), &bdds, args.max_layers, |row, _| {
        if !args.json {
            println!(
                "{:>5}  {:>12}  {:>20}  {:>9.2}",
                row.layer, row.nodes, row.states, row.seconds
            );
            std::io::stdout().flush().ok();
        }
        eprintln!(
            "bdd-count {name}: layer {} done at {:.1} s, peak memory {}",
            row.layer,
            row.seconds,
            tbforge::pipeline::peak_rss().map_or("unknown".into(), gib)
        );
        Ok(())
    })?;
    let peak = tbforge::pipeline::peak_rss();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["game"] = json!(args.game);
        value["params"] = json!(params);
        value["threads"] = json!(threads);
        value["peak_memory_bytes"] = json!(peak);
        println!("{}", serde_json::to_string(&value)?);
    } else {
        println!("{:>5}  {:>12}  {:>20}", "total", "", report.total);
        println!(
            "{name}: {} layers, {} states, largest layer BDD {} nodes, {:.2} s, peak memory {}",
            report.layers.len(),
            report.total,
            report.peak_layer_nodes,
            report.seconds,
            peak.map_or("unknown".into(), gib)
        );
    }
    Ok(ExitCode::SUCCESS)
}
