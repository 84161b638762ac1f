//! `tbforge analyse` and `tbforge play`: search from any position of a
//! two-player game, answering positions a tablebase holds from it.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tbforge::game::{Device, FrontierReport, FrontierSearch};
use tbforge::registry::{AnyGame, GameVisitor};
use tbforge::search::{perft, Limits, ScoreReport, Search, SearchReport, WIN};
use tbforge::{Game, Outcome, Status, Tablebase};

/// Table entries of a search, shared by its threads: 2^24 of 16 bytes,
/// 256 MiB.
const TABLE_LOG2: u32 = 24;

/// What `analyse` was asked.
pub struct AnalyseArgs {
    pub game: String,
    pub params: Vec<String>,
    pub position: Option<String>,
    pub depth: Option<u32>,
    pub time: Option<f64>,
    pub tb: Option<PathBuf>,
    pub perft: Option<u32>,
    pub threads: Option<usize>,
    pub frontier: Option<super::CheckDevice>,
    pub json: bool,
}

/// What `play` was asked.
pub struct PlayArgs {
    pub game: String,
    pub params: Vec<String>,
    pub position: Option<String>,
    pub depth: u32,
    pub opponent_depth: Option<u32>,
    pub tb: Option<PathBuf>,
    pub max_plies: u32,
    pub threads: Option<usize>,
    pub json: bool,
}

/// The game to search: the tablebase's own (its ranks are the files'),
/// checked against the name given, or the named game with its parameters.
fn open(
    name: &str,
    params: &[String],
    tb: Option<&Path>,
) -> anyhow::Result<(AnyGame, Option<Tablebase>)> {
    let Some(dir) = tb else {
        return Ok((super::open(name, params)?, None));
    };
    let tb = Tablebase::open(dir)?;
    let manifest = tb.manifest();
    if manifest.game != name {
        bail!(
            "--tb {} holds {}, not {name}: pass a tablebase of {name}",
            dir.display(),
            manifest.game
        );
    }
    if !params.is_empty() {
        bail!(
            "--param with --tb: the tablebase's own parameters are used ({}); drop --param",
            dir.display()
        );
    }
    let game = tbforge::registry::open_game(&manifest.game, &manifest.params)?;
    Ok((game, Some(tb)))
}

fn root<G: Game>(game: &G, text: Option<&str>) -> anyhow::Result<G::Position> {
    match text {
        Some(t) => Ok(game.parse_position(t)?),
        None => game.initial().with_context(|| {
            format!(
                "{} has no opening position: give one (see `tbforge games`)",
                game.info().id
            )
        }),
    }
}

pub fn analyse(args: AnalyseArgs) -> anyhow::Result<ExitCode> {
    super::set_threads(args.threads)?;
    let (game, tb) = open(&args.game, &args.params, args.tb.as_deref())?;
    struct Visit<'a> {
        args: &'a AnalyseArgs,
        tb: Option<&'a Tablebase>,
    }
    impl GameVisitor for Visit<'_> {
        type Output = anyhow::Result<ExitCode>;
        fn visit<G: Game>(self, game: &G) -> Self::Output {
            let args = self.args;
            let pos = root(game, args.position.as_deref())?;
            if let Some(depth) = args.perft {
                let started = Instant::now();
                let nodes = perft(game, &pos, depth);
                let seconds = started.elapsed().as_secs_f64();
                if args.json {
                    println!(
                        "{}",
                        serde_json::json!({
                            "position": game.format_position(&pos),
                            "depth": depth,
                            "nodes": nodes,
                            "seconds": seconds,
                        })
                    );
                } else {
                    println!(
                        "perft({depth}) = {nodes} from {} ({seconds:.3} s, {:.1} M paths/s)",
                        game.format_position(&pos),
                        nodes as f64 / seconds.max(1e-9) / 1e6
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(device) = args.frontier {
                let device = frontier_device(
                    device,
                    "run without --gpu (the alpha-beta search on the CPU), or with --frontier \
                     cpu (the same frontier search on the CPU)",
                )?;
                let Some(fs) = game.frontier(&device)? else {
                    bail!(
                        "{} has no frontier search; run without --gpu/--frontier (alpha-beta)",
                        game.info().id
                    );
                };
                let run = frontier_run(game, fs.as_ref(), &pos, args.depth, args.time)?;
                if args.json {
                    println!("{}", serde_json::to_string(&run)?);
                } else {
                    print!("{}", run.to_text());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let mut search = Search::new(game, self.tb, TABLE_LOG2)?
                .with_threads(rayon::current_num_threads())?;
            let limits = Limits {
                depth: args.depth,
                time: args.time.map(Duration::from_secs_f64),
                search_root: false,
            };
            let report = search.run(&pos, limits)?;
            if args.json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", report_text(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
    if let Some(t) = args.time {
        if !(t > 0.0 && t.is_finite()) {
            bail!("--time {t}: give a positive number of seconds");
        }
    }
    if args.depth == Some(0) {
        bail!("--depth 0: give at least one ply");
    }
    game.visit(Visit {
        args: &args,
        tb: tb.as_ref(),
    })
}

/// The device of `--frontier` / `--gpu`; `fix` says what to do without a
/// GPU (the command's own flags).
pub(crate) fn frontier_device(device: super::CheckDevice, fix: &str) -> anyhow::Result<Device> {
    match device {
        super::CheckDevice::Cpu => Ok(Device::Cpu),
        #[cfg(feature = "cuda")]
        super::CheckDevice::Cuda => {
            let d = tbforge::backend::cuda::CudaDevice::open(0).map_err(|e| {
                // The backend's own hint names the build's flag, not this one.
                let e = e.to_string();
                let e = e.split("; use --backend").next().unwrap_or_default();
                anyhow::anyhow!("the frontier search needs a CUDA GPU: {e}; {fix}")
            })?;
            Ok(Device::Cuda(std::sync::Arc::new(d)))
        }
        #[cfg(not(feature = "cuda"))]
        super::CheckDevice::Cuda => bail!(
            "the frontier search on a GPU needs a tbforge built with the `cuda` feature; {fix}"
        ),
    }
}

/// A frontier search from one position, as `analyse --gpu` reports it.
#[derive(serde::Serialize)]
pub(crate) struct FrontierRun {
    /// The root in the game's notation.
    pub position: String,
    /// What ran it.
    pub device: String,
    /// The depth searched (the deepest that fitted the time, with --time).
    pub depth: u32,
    /// The root's exact minimax value at that depth.
    pub value: i32,
    /// The value, read as the alpha-beta search reports its scores.
    pub score: ScoreReport,
    /// The first best move.
    pub best_move: Option<String>,
    /// How many moves reach the value (1: the best move is unique).
    pub best_moves: u32,
    /// The best line.
    pub pv: Vec<String>,
    /// Nodes per level, the root's first, the leaves' last.
    pub levels: Vec<u64>,
    /// Leaves evaluated.
    pub leaves: u64,
    /// All nodes, root and leaves included.
    pub nodes: u64,
    /// Seconds of that depth's search.
    pub seconds: f64,
    /// Seconds of its leaf evaluation pass.
    pub leaf_seconds: f64,
    /// Leaves / leaf_seconds.
    pub leaves_per_second: f64,
    /// Nodes / seconds.
    pub nodes_per_second: f64,
    /// (depth, seconds) of every search run, with --time.
    pub iterations: Vec<(u32, f64)>,
    /// Why deeper searches stopped, with --time.
    pub stopped: Option<String>,
    /// Seconds in all.
    pub total_seconds: f64,
}

impl FrontierRun {
    fn to_text(&self) -> String {
        let mut out = format!("position  {}\n", self.position);
        out += &format!(
            "frontier  {} plies full width on {}: {} leaves, {} nodes in {:.3} s\n",
            self.depth, self.device, self.leaves, self.nodes, self.seconds
        );
        out += &format!(
            "speed     {:.3} G leaves/s (the evaluation pass, {:.3} s), {:.3} G nodes/s overall\n",
            self.leaves_per_second / 1e9,
            self.leaf_seconds,
            self.nodes_per_second / 1e9
        );
        out += &format!("score     {}\n", self.score.to_text());
        out += &format!(
            "best      {}{}\n",
            self.best_move
                .as_deref()
                .unwrap_or("(none: the game is over)"),
            if self.best_moves > 1 {
                format!(" (one of {} moves with that value)", self.best_moves)
            } else {
                String::new()
            }
        );
        if !self.pv.is_empty() {
            out += &format!("line      {}\n", self.pv.join(" "));
        }
        if let Some(why) = &self.stopped {
            out += &format!("stopped   {why}\n");
        }
        out
    }
}

/// The game's notation of a frontier search's line from `pos`.
fn line_text<G: Game>(game: &G, pos: &G::Position, line: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = pos.clone();
    let mut moves = Vec::new();
    for &k in line {
        if game.status(&pos) != Status::Ongoing {
            break;
        }
        moves.clear();
        game.successors(&pos, &mut moves);
        let Some((mv, next)) = moves.get(k as usize) else {
            break;
        };
        out.push(game.format_move(&pos, mv));
        pos = next.clone();
    }
    out
}

/// A frontier search of `pos` to `depth` (default 8), or with `time`, at
/// depths 1, 2, ... up to `depth` while the next one is expected to end
/// within it (each level grows by its predecessor's ratio).
pub(crate) fn frontier_run<G: Game>(
    game: &G,
    fs: &dyn FrontierSearch<G::Position>,
    pos: &G::Position,
    depth: Option<u32>,
    time: Option<f64>,
) -> anyhow::Result<FrontierRun> {
    let started = Instant::now();
    let max_depth = depth.unwrap_or(if time.is_some() { 64 } else { 8 });
    let mut best: Option<(u32, FrontierReport)> = None;
    let mut iterations = Vec::new();
    let mut stopped = None;
    let first = if time.is_some() { 1 } else { max_depth };
    for d in first..=max_depth {
        if let (Some(t), Some((_, last))) = (time, &best) {
            let grow = match last.levels.as_slice() {
                [.., a, b] if *a > 0 => *b as f64 / *a as f64,
                _ => 8.0,
            };
            if started.elapsed().as_secs_f64() + last.seconds * grow.max(1.0) > t {
                stopped = Some(format!(
                    "depth {d} would take about {:.1} s more, past --time {t}",
                    last.seconds * grow
                ));
                break;
            }
        }
        match fs.search(std::slice::from_ref(pos), d, WIN) {
            Ok(r) => {
                iterations.push((d, r.seconds));
                best = Some((d, r));
            }
            Err(e) if best.is_some() => {
                stopped = Some(format!("depth {d}: {e}"));
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let Some((depth, r)) = best else {
        bail!("no frontier search ran: give a depth of at least 1");
    };
    let pv = line_text(game, pos, &r.line);
    let value = r.values[0];
    Ok(FrontierRun {
        position: game.format_position(pos),
        device: fs.name(),
        depth,
        value,
        score: ScoreReport::of(value),
        best_move: pv.first().cloned(),
        best_moves: r.best_moves,
        pv,
        leaves: r.leaves(),
        nodes: r.nodes(),
        seconds: r.seconds,
        leaf_seconds: r.leaf_seconds,
        leaves_per_second: r.leaves() as f64 / r.leaf_seconds.max(1e-9),
        nodes_per_second: r.nodes() as f64 / r.seconds.max(1e-9),
        levels: r.levels,
        iterations,
        stopped,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

fn report_text(r: &SearchReport) -> String {
    let mut out = format!("position  {}\n", r.position);
    if r.from_tablebase {
        out += "source    the tablebase (exact)\n";
    } else {
        out += &format!(
            "depth     {} plies, {} nodes in {:.2} s ({:.2} M nodes/s), {} tablebase hits\n",
            r.depth,
            r.nodes,
            r.seconds,
            r.nodes_per_second / 1e6,
            r.tablebase_hits
        );
    }
    out += &format!("score     {}\n", r.score.to_text());
    out += &format!(
        "best      {}\n",
        r.best_move.as_deref().unwrap_or("(none: the game is over)")
    );
    if !r.pv.is_empty() {
        out += &format!("line      {}\n", r.pv.join(" "));
    }
    out
}

pub fn play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    if args.depth == 0 || args.opponent_depth == Some(0) {
        bail!("--depth 0: give at least one ply");
    }
    super::set_threads(args.threads)?;
    let (game, tb) = open(&args.game, &args.params, args.tb.as_deref())?;
    struct Visit<'a> {
        args: &'a PlayArgs,
        tb: Option<&'a Tablebase>,
    }
    impl GameVisitor for Visit<'_> {
        type Output = anyhow::Result<ExitCode>;
        fn visit<G: Game>(self, game: &G) -> Self::Output {
            let args = self.args;
            let start = root(game, args.position.as_deref())?;
            let depths = [args.depth, args.opponent_depth.unwrap_or(args.depth)];
            let threads = rayon::current_num_threads();
            let mut searchers = [
                Search::new(game, self.tb, TABLE_LOG2 - 2)?.with_threads(threads)?,
                Search::new(game, self.tb, TABLE_LOG2 - 2)?.with_threads(threads)?,
            ];
            let mut pos = start.clone();
            let mut moves: Vec<String> = Vec::new();
            let mut seen = vec![game.search_key(&pos)];
            let mut successors = Vec::new();
            // From the first mover's side: Some(true) it won, Some(false)
            // it lost, None drawn or unfinished.
            let (result, why) = loop {
                let mover = moves.len() % 2;
                match game.status(&pos) {
                    Status::Lost => break (Some(mover == 1), "no legal move"),
                    Status::Drawn => break (None, "a drawn end"),
                    Status::Goal => break (Some(mover == 0), "the goal"),
                    Status::Ongoing => {}
                }
                if moves.len() as u32 >= args.max_plies {
                    break (None, "the ply limit (unfinished)");
                }
                let key = game.search_key(&pos);
                if seen.iter().filter(|&&k| k == key).count() >= 3 {
                    break (None, "the third repetition");
                }
                let report = searchers[mover].run(
                    &pos,
                    Limits {
                        depth: Some(depths[mover]),
                        time: None,
                        search_root: false,
                    },
                )?;
                if report.from_tablebase && report.score.outcome == Some(Outcome::Draw) {
                    break (None, "a tablebase draw");
                }
                let Some(best) = report.best_move else {
                    bail!("the search found no move in {}", game.format_position(&pos));
                };
                successors.clear();
                game.successors(&pos, &mut successors);
                let next = successors
                    .iter()
                    .find(|(m, _)| game.format_move(&pos, m) == best)
                    .map(|(_, p)| p.clone())
                    .with_context(|| format!("the search's move {best} is not legal"))?;
                moves.push(best);
                pos = next;
                seen.push(game.search_key(&pos));
            };
            let code = match result {
                Some(true) => "1-0",
                Some(false) => "0-1",
                None => "1/2-1/2",
            };
            let unfinished = why.contains("unfinished");
            let code = if unfinished { "*" } else { code };
            if args.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "start": game.format_position(&start),
                        "moves": moves,
                        "result": code,
                        "ended_by": why,
                        "final": game.format_position(&pos),
                        "depths": depths,
                    })
                );
            } else {
                println!(
                    "[Event \"tbforge self-play, depths {} and {}\"]",
                    depths[0], depths[1]
                );
                println!("[FEN \"{}\"]", game.format_position(&start));
                println!("[Result \"{code}\"]");
                let mut text = String::new();
                for (i, pair) in moves.chunks(2).enumerate() {
                    text += &format!("{}. {} ", i + 1, pair.join(" "));
                }
                println!("{text}{code}");
                println!(
                    "{{ended by {why} after {} plies; 1-0 means the side to move at the start won}}",
                    moves.len()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
    game.visit(Visit {
        args: &args,
        tb: tb.as_ref(),
    })
}
