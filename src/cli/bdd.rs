//! `tbforge bdd-count`: layered symbolic BFS with BDDs, per layer the BDD's
//! nodes and the number of states.

use clap::Args;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;
use tbforge::bdd::{layered_bfs, BddOptions, Bdds};
use tbforge::registry::open_symbolic;

/// What both BDD commands take: the game, its parameters, threads and
/// the BDD manager's memory.
#[derive(Args, Debug)]
pub(crate) struct BddGameArgs {
    /// The game (see `tbforge games`); a game without a BDD encoding is
    /// refused with the list of those that have one.
    game: String,
    /// A game parameter, `KEY=VALUE` (repeatable), e.g. `--param width=5`.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Memory for the BDD node table and cache, e.g. `16G` (default:
    /// `bdd-count` 3/4 of the memory available now, `bdd-solve` a quarter:
    /// its values and the comparison take the rest).
    #[arg(long, value_name = "SIZE")]
    mem_limit: Option<String>,
}

impl BddGameArgs {
    /// The parameters, the threads and the manager's memory (`share` of
    /// what is available by default).
    fn resolve(
        &self,
        share: (u64, u64),
    ) -> anyhow::Result<(std::collections::BTreeMap<String, String>, usize, u64)> {
        let params = super::parse_params(&self.params)?;
        let threads = match self.threads {
            Some(0) => anyhow::bail!("--threads 0: give at least 1 thread"),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let memory = match &self.mem_limit {
            Some(text) => super::parse_size(text)?,
            None => available_memory().map_or(4 << 30, |m| m / share.1 * share.0),
        };
        Ok((params, threads, memory))
    }
}

#[derive(Args, Debug)]
pub(crate) struct BddCountArgs {
    #[command(flatten)]
    common: BddGameArgs,
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
    let (params, threads, memory) = args.common.resolve((3, 4))?;
    let game = open_symbolic(&args.common.game, &params)?;
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
        value["game"] = json!(args.common.game);
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

#[derive(Args, Debug)]
pub(crate) struct BddSolveArgs {
    #[command(flatten)]
    common: BddGameArgs,
    /// Also solve the game over its regular index, in memory, and compare
    /// every reachable position's value byte.
    #[arg(long)]
    compare: bool,
}

/// `tbforge bdd-solve`: the layers of a symbolic BFS ranked by their BDDs
/// and solved backwards over byte arrays exactly as long as the layers
/// (`tbforge::solve::solve_bdd_layers`), against the regular index's size
/// and, with `--compare`, its values.
pub(crate) fn bdd_solve(args: BddSolveArgs) -> anyhow::Result<ExitCode> {
    let (params, threads, memory) = args.common.resolve((1, 4))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let solve = SolveLayers {
        memory,
        threads: threads as u32,
        compare: args.compare,
    };
    pool.install(|| tbforge::registry::visit_symbolic(&args.common.game, &params, solve))?
}

/// `bdd-solve` on the game the registry opens.
struct SolveLayers {
    memory: u64,
    threads: u32,
    compare: bool,
}

impl tbforge::registry::SymbolicVisitor for SolveLayers {
    type Output = anyhow::Result<ExitCode>;

    fn visit<G, E>(self, game: &G, encoding: &E) -> Self::Output
    where
        G: tbforge::Game + Sync,
        G::Position: Send,
        E: tbforge::bdd::SymbolicSearch
            + tbforge::bdd::SymbolicEncoding<State = G::Position>
            + Sync,
    {
        solve_layers(game, encoding, self.memory, self.threads, self.compare)
    }
}

fn solve_layers<G, E>(
    game: &G,
    encoding: &E,
    memory: u64,
    threads: u32,
    compare: bool,
) -> anyhow::Result<ExitCode>
where
    G: tbforge::Game + Sync,
    G::Position: Send,
    E: tbforge::bdd::SymbolicSearch + tbforge::bdd::SymbolicEncoding<State = G::Position> + Sync,
{
    use rayon::prelude::*;
    use std::time::Instant;
    use tbforge::bdd::BddRank;
    use tbforge::solve::{solve_bdd_layers, solve_game, Layout, Progress};
    let name = encoding.name();
    let bdds = Bdds::new(
        encoding.variables(),
        BddOptions::for_memory(memory, threads),
    )?;
    let t = Instant::now();
    let mut ranks = Vec::new();
    layered_bfs(encoding, &bdds, None, |row, set| {
        eprintln!(
            "bdd-solve {name}: layer {} ({} states) ranked at {:.1} s",
            row.layer,
            row.states,
            t.elapsed().as_secs_f64()
        );
        ranks.push(BddRank::new(&bdds, set)?);
        Ok(())
    })?;
    let search_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let values = solve_bdd_layers(game, encoding, &ranks, &Progress::new(false))?;
    let solve_seconds = t.elapsed().as_secs_f64();
    let stored: u64 = ranks.iter().map(BddRank::size).sum();
    let index = Layout::new(game)?.total_size();
    println!(
        "{name}: {} layers solved over BDD ranks: {stored} values where the regular index has {index} ({:.2} of it); symbolic search and ranks {search_seconds:.1} s, solve {solve_seconds:.1} s, {threads} threads",
        ranks.len(),
        stored as f64 / index as f64
    );
    if !compare {
        return Ok(ExitCode::SUCCESS);
    }
    let t = Instant::now();
    let regular = solve_game(game, &Progress::new(false))?;
    let regular_seconds = t.elapsed().as_secs_f64();
    let mut first_mismatch: Option<String> = None;
    let mut mismatches = 0u64;
    for (d, (rank, bytes)) in ranks.iter().zip(&values).enumerate() {
        let (bad, first) = (0..rank.size())
            .into_par_iter()
            .map(|i| {
                let decoded = encoding.decode(&rank.unrank(tbforge::Rank(i)));
                let Some(pos) = decoded else {
                    return (1u64, Some(format!("layer {d} rank {i} decodes to no state")));
                };
                let (p, r) = game.rank(&pos);
                let regular_byte = regular
                    .layout
                    .slot(p)
                    .and_then(|s| regular.values[s].get(r.0 as usize).copied());
                if regular_byte == Some(bytes[i as usize]) {
                    (0, None)
                } else {
                    (
                        1,
                        Some(format!(
                            "layer {d}: {} has byte {} over BDD ranks, {regular_byte:?} in the regular index",
                            game.format_position(&pos),
                            bytes[i as usize]
                        )),
                    )
                }
            })
            .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.or(b.1)));
        mismatches += bad;
        first_mismatch = first_mismatch.or(first);
    }
    let reachable = regular.reachable.as_ref().map(|r| r.total());
    println!(
        "compared with the regular index solved in memory ({regular_seconds:.1} s): {stored} positions, {mismatches} different; the regular forward search reached {}",
        reachable.map_or("-".into(), |n| n.to_string())
    );
    if let Some(m) = first_mismatch {
        eprintln!("tbforge: error: the values differ, first: {m}");
        return Ok(ExitCode::FAILURE);
    }
    if reachable.is_some_and(|n| n != stored) {
        eprintln!(
            "tbforge: error: the symbolic layers hold {stored} states, the regular forward search reached {}",
            reachable.unwrap_or(0)
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
