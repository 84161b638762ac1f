//! `tbforge bench`: throughput figures of hashing, solving and probing.

use super::{open, set_threads, BenchWhat};
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;
use tbforge::registry::GameVisitor;
use tbforge::solve::{frontier_bfs, solve_partition, Layout, Progress};
use tbforge::Game;

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
