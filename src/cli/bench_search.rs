//! `tbforge bench search`: a game's frontier search on a device against its
//! CPU twin and against the alpha-beta search, at the same depths.
//!
//! 1. Random inputs: roots drawn by random play from the game's opening
//!    (fresh each run, the seed printed), searched together by the device
//!    and by the twin: every root's value and every level's size must agree.
//! 2. From one position, each depth: the device's value, best move, leaves
//!    and speeds; the twin's (full-width minimax on all cores) up to a depth;
//!    the alpha-beta search's value and best move (one thread, so that they
//!    do not depend on timing): the values must agree, and the best moves
//!    where the frontier's is unique.
//! 3. The depth each reaches in a time: alpha-beta on all cores, the device
//!    at depths 1, 2, ... while the next is expected to fit.

use super::analyse::{frontier_device, frontier_run};
use super::CheckDevice;
use anyhow::{bail, Context};
use serde_json::json;
use std::process::ExitCode;
use tbforge::game::{Device, FrontierSearch};
use tbforge::hash::SplitMix64;
use tbforge::registry::GameVisitor;
use tbforge::search::{Limits, Search, WIN};
use tbforge::{Game, Outcome, Status};

/// Table entries of the alpha-beta searches: 2^24 of 16 bytes.
const TABLE_LOG2: u32 = 24;
/// Random roots also searched by alpha-beta, one by one.
const AB_ROOTS: usize = 256;

/// What `bench search` was asked.
pub struct SearchBenchArgs {
    pub position: Option<String>,
    pub min_depth: u32,
    pub max_depth: u32,
    pub cpu_max_depth: u32,
    pub time: f64,
    pub samples: usize,
    pub check_depth: u32,
    pub seed: u64,
    pub device: CheckDevice,
    pub json: bool,
}

/// Runs the benchmark on the game the visitor is given.
pub struct SearchBench(pub SearchBenchArgs);

impl GameVisitor for SearchBench {
    type Output = anyhow::Result<ExitCode>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        run(game, &self.0)
    }
}

/// A root by random play from `start`: up to `max_plies` random moves,
/// stopping where the game ends.
fn random_root<G: Game>(game: &G, start: &G::Position, rng: &mut SplitMix64) -> G::Position {
    let plies = rng.below(80);
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        if game.status(&pos) != Status::Ongoing {
            break;
        }
        moves.clear();
        game.successors(&pos, &mut moves);
        if moves.is_empty() {
            break;
        }
        pos = moves[rng.below(moves.len() as u64) as usize].1.clone();
    }
    pos
}

/// The alpha-beta search's score at `depth` as one integer, and its move.
fn alpha_beta<G: Game>(
    game: &G,
    pos: &G::Position,
    depth: u32,
    table_log2: u32,
) -> anyhow::Result<(i32, Option<String>, u64, f64)> {
    let mut search = Search::new(game, None, table_log2)?;
    let r = search.run(
        pos,
        Limits {
            depth: Some(depth),
            ..Limits::default()
        },
    )?;
    let score = match (r.score.eval, r.score.outcome, r.score.plies) {
        (Some(e), _, _) => e,
        (None, Some(Outcome::Win), Some(n)) => WIN - n as i32,
        (None, Some(Outcome::Loss), Some(n)) => -(WIN - n as i32),
        (_, o, p) => bail!("alpha-beta gave an unexpected score ({o:?}, {p:?})"),
    };
    Ok((score, r.best_move, r.nodes, r.seconds))
}

/// Where the device and the twin part on one root searched `depth` plies:
/// the first stored level, from the leaves up, whose values differ, and
/// its first differing node (both values and its position), as one line.
/// The leaves are scored inside the last stored level's values, so a
/// difference there points at the leaf pass, one higher up at the backup.
fn first_difference<G: Game>(
    game: &G,
    dev: &dyn FrontierSearch<G::Position>,
    twin: &dyn FrontierSearch<G::Position>,
    root: &G::Position,
    depth: u32,
) -> anyhow::Result<String> {
    let (_, a) = dev.search_levels(root, depth, WIN)?;
    let (_, b) = twin.search_levels(root, depth, WIN)?;
    let from = game.format_position(root);
    let last = depth - 1;
    for l in (0..a.len().max(b.len())).rev() {
        let (x, y) = (
            a.get(l).map_or(&[][..], Vec::as_slice),
            b.get(l).map_or(&[][..], Vec::as_slice),
        );
        if x.len() != y.len() {
            return Ok(format!(
                "first difference from {from}, depth {depth}: level {l} of 0..={last} holds {} \
                 nodes on the device, {} on the twin",
                x.len(),
                y.len()
            ));
        }
        if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
            let ((p, v), (q, w)) = (&x[i], &y[i]);
            let at = if p == q {
                format!("position {}", game.format_position(p))
            } else {
                format!(
                    "positions differ: device {}, twin {}",
                    game.format_position(p),
                    game.format_position(q)
                )
            };
            return Ok(format!(
                "first difference from {from}, depth {depth}: level {l} of 0..={last}, node {i}: \
                 device {v}, twin {w}, {at}"
            ));
        }
    }
    Ok(format!(
        "from {from}, depth {depth}: searched alone, the device and the twin agree at every level"
    ))
}

fn run<G: Game>(game: &G, args: &SearchBenchArgs) -> anyhow::Result<ExitCode> {
    let device = frontier_device(
        args.device,
        "--device cpu runs the CPU twin in its place (a dry run)",
    )?;
    let Some(dev) = game.frontier(&device)? else {
        bail!("{} has no frontier search", game.info().id);
    };
    let Some(twin) = game.frontier(&Device::Cpu)? else {
        bail!("{} has no frontier search on the CPU", game.info().id);
    };
    let start = game
        .initial()
        .with_context(|| format!("{} has no opening position", game.info().id))?;
    let root = match &args.position {
        Some(t) => game.parse_position(t)?,
        None => start.clone(),
    };
    let text = !args.json;
    let mut failed = false;
    if text {
        println!(
            "{} frontier search on {}, against {} and alpha-beta (seed {})",
            game.info().id,
            dev.name(),
            twin.name(),
            args.seed
        );
    }

    // 1. Random roots, device against twin.
    let mut rng = SplitMix64::new(args.seed);
    let roots: Vec<G::Position> = (0..args.samples.max(1))
        .map(|_| random_root(game, &start, &mut rng))
        .collect();
    let a = dev.search(&roots, args.check_depth, WIN)?;
    let b = twin.search(&roots, args.check_depth, WIN)?;
    let value_mismatches = a
        .values
        .iter()
        .zip(&b.values)
        .filter(|(x, y)| x != y)
        .count();
    let levels_match = a.levels == b.levels;
    let random_difference = match a.values.iter().zip(&b.values).position(|(x, y)| x != y) {
        Some(i) => Some(first_difference(
            game,
            dev.as_ref(),
            twin.as_ref(),
            &roots[i],
            args.check_depth,
        )?),
        None => None,
    };
    // The alpha-beta search on some of them, one by one, with the twin's
    // best move of each.
    let mut ab_checked = 0;
    let mut ab_value_mismatches = 0;
    let mut ab_move_mismatches = 0;
    let mut unique = 0;
    for (i, r) in roots.iter().enumerate().take(AB_ROOTS) {
        if game.status(r) != Status::Ongoing {
            continue;
        }
        let (score, best, _, _) = alpha_beta(game, r, args.check_depth, 18)?;
        let alone = twin.search(std::slice::from_ref(r), args.check_depth, WIN)?;
        ab_checked += 1;
        if score != a.values[i] {
            ab_value_mismatches += 1;
        }
        if alone.best_moves == 1 {
            unique += 1;
            let mut moves = Vec::new();
            game.successors(r, &mut moves);
            let mine = alone
                .line
                .first()
                .and_then(|&k| moves.get(k as usize))
                .map(|(m, _)| game.format_move(r, m));
            if mine != best {
                ab_move_mismatches += 1;
            }
        }
    }
    failed |=
        value_mismatches > 0 || !levels_match || ab_value_mismatches > 0 || ab_move_mismatches > 0;
    let random = json!({
        "roots": roots.len(),
        "depth": args.check_depth,
        "leaves": a.leaves(),
        "value_mismatches": value_mismatches,
        "levels_match": levels_match,
        "alpha_beta_roots": ab_checked,
        "alpha_beta_value_mismatches": ab_value_mismatches,
        "unique_best_moves": unique,
        "alpha_beta_best_move_mismatches": ab_move_mismatches,
        "device_leaves_per_second": a.leaves() as f64 / a.leaf_seconds.max(1e-9),
        "twin_leaves_per_second": b.leaves() as f64 / b.leaf_seconds.max(1e-9),
        "first_difference": random_difference,
    });
    if text {
        println!(
            "random roots: {} by random play, depth {}, {} leaves: {} value mismatches, levels {}",
            roots.len(),
            args.check_depth,
            a.leaves(),
            value_mismatches,
            if levels_match { "equal" } else { "DIFFER" }
        );
        if let Some(line) = &random_difference {
            println!("{line}");
        }
        println!(
            "alpha-beta on {ab_checked} of them: {ab_value_mismatches} value mismatches; \
             {unique} unique best moves, {ab_move_mismatches} of them differ"
        );
        println!("from {}", game.format_position(&root));
        println!(
            "{:>5} {:>13} {:>9} {:>10} {:>10} {:>9} {:>10} {:>7} {:>8} {:>8} {:>5} {:>9} {:>9}",
            "depth",
            "leaves",
            "dev s",
            "G leaf/s",
            "G node/s",
            "twin s",
            "M node/s",
            "dev/cpu",
            "frontier",
            "a-b",
            "agree",
            "best",
            "a-b best"
        );
    }

    // 2. Each depth from the root.
    let mut rows = Vec::new();
    let mut moves = Vec::new();
    game.successors(&root, &mut moves);
    for d in args.min_depth..=args.max_depth {
        let r = match dev.search(std::slice::from_ref(&root), d, WIN) {
            Ok(r) => r,
            Err(e) => {
                if text {
                    println!("{d:>5} stops: {e}");
                }
                rows.push(json!({ "depth": d, "error": e.to_string() }));
                break;
            }
        };
        let cpu = if d <= args.cpu_max_depth {
            Some(twin.search(std::slice::from_ref(&root), d, WIN)?)
        } else {
            None
        };
        let (ab, ab_best, ab_nodes, ab_seconds) = alpha_beta(game, &root, d, TABLE_LOG2)?;
        let value = r.values[0];
        let best = r
            .line
            .first()
            .and_then(|&k| moves.get(k as usize))
            .map(|(m, _)| game.format_move(&root, m));
        let twin_agrees = cpu.as_ref().is_none_or(|c| c.values == r.values);
        let difference = if twin_agrees {
            None
        } else {
            Some(first_difference(
                game,
                dev.as_ref(),
                twin.as_ref(),
                &root,
                d,
            )?)
        };
        let agree = value == ab && twin_agrees;
        let best_agree = r.best_moves != 1 || best == ab_best;
        failed |= !agree || !best_agree;
        let leaf_rate = r.leaves() as f64 / r.leaf_seconds.max(1e-9);
        let node_rate = r.nodes() as f64 / r.seconds.max(1e-9);
        let cpu_rate = cpu.as_ref().map(|c| c.nodes() as f64 / c.seconds.max(1e-9));
        if text {
            let opt = |v: Option<f64>, scale: f64, width: usize, prec: usize| match v {
                Some(x) => format!("{:>width$.prec$}", x / scale),
                None => format!("{:>width$}", "-"),
            };
            println!(
                "{:>5} {:>13} {:>9.3} {:>10.3} {:>10.3} {} {} {} {:>8} {:>8} {:>5} {:>9} {:>9}",
                d,
                r.leaves(),
                r.seconds,
                leaf_rate / 1e9,
                node_rate / 1e9,
                opt(cpu.as_ref().map(|c| c.seconds), 1.0, 9, 3),
                opt(cpu_rate, 1e6, 10, 1),
                opt(cpu_rate.map(|c| node_rate / c), 1.0, 7, 1),
                value,
                ab,
                if agree && best_agree { "yes" } else { "NO" },
                format!(
                    "{}{}",
                    best.as_deref().unwrap_or("-"),
                    if r.best_moves == 1 { "" } else { "*" }
                ),
                ab_best.as_deref().unwrap_or("-")
            );
            if let Some(line) = &difference {
                println!("{line}");
            }
        }
        rows.push(json!({
            "depth": d,
            "value": value,
            "alpha_beta_value": ab,
            "twin_value": cpu.as_ref().map(|c| c.values[0]),
            "first_difference": difference,
            "agree": agree,
            "best_move": best,
            "best_moves": r.best_moves,
            "alpha_beta_best_move": ab_best,
            "best_move_agrees": best_agree,
            "levels": r.levels,
            "leaves": r.leaves(),
            "seconds": r.seconds,
            "leaf_seconds": r.leaf_seconds,
            "leaves_per_second": leaf_rate,
            "nodes_per_second": node_rate,
            "twin_seconds": cpu.as_ref().map(|c| c.seconds),
            "twin_nodes_per_second": cpu_rate,
            "alpha_beta_nodes": ab_nodes,
            "alpha_beta_seconds": ab_seconds,
        }));
    }

    // 3. Depth reached in the time.
    let mut search =
        Search::new(game, None, TABLE_LOG2)?.with_threads(rayon::current_num_threads())?;
    let ab = search.run(
        &root,
        Limits {
            time: Some(std::time::Duration::from_secs_f64(args.time)),
            ..Limits::default()
        },
    )?;
    let fr = frontier_run(game, dev.as_ref(), &root, None, Some(args.time))?;
    if text {
        println!("* several moves share the value: the best moves are not compared");
        println!(
            "in {} s: alpha-beta ({} threads) depth {} ({:.1} M nodes/s, score {}, best {}); \
             frontier ({}) depth {} ({:.3} G leaves/s in its last evaluation pass, score {}, best {})",
            args.time,
            rayon::current_num_threads(),
            ab.depth,
            ab.nodes_per_second / 1e6,
            ab.score.to_text(),
            ab.best_move.as_deref().unwrap_or("-"),
            fr.device,
            fr.depth,
            fr.leaves_per_second / 1e9,
            fr.score.to_text(),
            fr.best_move.as_deref().unwrap_or("-"),
        );
        if let Some(why) = &fr.stopped {
            println!("frontier stopped: {why}");
        }
    } else {
        println!(
            "{}",
            json!({
                "game": game.info().canonical(),
                "device": dev.name(),
                "twin": twin.name(),
                "seed": args.seed,
                "position": game.format_position(&root),
                "random": random,
                "depths": rows,
                "in_time": {
                    "seconds": args.time,
                    "alpha_beta": ab,
                    "frontier": fr,
                },
                "all_agree": !failed,
            })
        );
    }
    Ok(if failed {
        eprintln!(
            "tbforge: the frontier search disagrees (replay the random roots with --seed {})",
            args.seed
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
