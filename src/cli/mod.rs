//! The `tbforge` command line: a thin layer over the library, one file per
//! subcommand. Errors become one line on stderr and an exit code (0 success,
//! 1 a check failed or the position is not in the tablebase, 2 usage or input
//! error). No game is named here: games come from the registry.

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tbforge::registry::{open_game, AnyGame};

mod analyse;
mod bdd;
mod bench;
mod bench_search;
mod build;
mod compare;
mod export;
mod games;
mod info;
mod probe;
#[cfg(feature = "serve")]
mod serve;
mod verify;

/// Build, verify and probe endgame databases (tablebases) of board games and puzzles.
///
/// Start with `tbforge games` to see what can be built, then `tbforge build GAME`.
#[derive(Parser, Debug)]
#[command(name = "tbforge", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the games, their parameters and how to write a position.
    Games {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Solve a game and write its tablebase files and manifest.json.
    ///
    /// Without GAME, builds the default set (a quick demo) into tablebases/.
    Build(BuildArgs),
    /// Check every file of a tablebase directory against its manifest and checksums.
    ///
    /// Exits 0 only if every check passed, 1 if any failed.
    Verify {
        /// The tablebase directory (holding manifest.json).
        dir: PathBuf,
        /// Also re-derive a sample of positions from their successors' stored values.
        #[arg(long)]
        deep: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a compact, probe-only copy of a tablebase: engine files.
    ///
    /// Positions whose value a one-ply search over their followed moves
    /// recovers (a move that ends the game, or one the game follows, such as
    /// a capture) are stored as don't-care and chosen to compress; `tbforge
    /// probe` (and the probe API) resolves them by that search and answers
    /// exactly as the full tablebase does. Same checksums and manifest;
    /// `tbforge verify` checks them.
    Export {
        /// The full tablebase directory (holding manifest.json).
        dir: PathBuf,
        /// Where to write the engine files (a new or empty directory).
        #[arg(long, value_name = "OUT")]
        engine: PathBuf,
        /// Keep the distances too (larger files; by default engine files
        /// hold win/draw/loss only, as engines probe them in a search).
        #[arg(long)]
        distance: bool,
        /// The default, kept for scripts: win/draw/loss only.
        #[arg(long, hide = true, conflicts_with = "distance")]
        wdl_only: bool,
        /// Write into an OUT that already holds files, replacing those of the same names.
        #[arg(long)]
        force: bool,
        /// How don't-care values are chosen (for measurements; the default
        /// gave the smallest files).
        #[arg(long, value_enum, default_value_t = Fill::Runs, hide = true)]
        fill: Fill,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Summarise a tablebase directory's manifest: totals, layers, files.
    Info {
        /// The tablebase directory (holding manifest.json).
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also count the positions each player wins, whoever moves, by
        /// reading every value (games that name their two players).
        #[arg(long)]
        players: bool,
    },
    /// Look up one position: its outcome, distance and best moves.
    ///
    /// POSITION uses the game's notation (see `tbforge games`). Exits 1 if the
    /// position is not in the tablebase.
    Probe {
        /// The tablebase directory (holding manifest.json).
        dir: PathBuf,
        /// The position, in the game's notation.
        position: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compare two tablebases of one game, built with different parameters,
    /// position by position.
    ///
    /// Every index of every partition of DIR_A is unranked; each legal
    /// position is ranked in DIR_B's game and the two stored values compared
    /// (value bytes; WDL codes where either stores only those). The manifests'
    /// position totals (positions, wins, draws, losses) are compared too.
    /// Exits 0 if everything agrees, 1 on any difference, 2 if the two cannot
    /// be compared (missing, damaged, different games).
    Compare {
        /// The tablebase whose every index is enumerated.
        dir_a: PathBuf,
        /// The tablebase its positions are looked up in.
        dir_b: PathBuf,
        /// Mismatches to describe in full (the first ones, in DIR_A's order).
        #[arg(long, value_name = "N", default_value_t = 10)]
        examples: usize,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Search from a position of a two-player game: alpha-beta with
    /// iterative deepening, positions in a tablebase answered from it.
    ///
    /// Prints the score (a proved win or loss with its length where the
    /// search or the tablebase proves one, else the evaluation), the best
    /// move, the line, and nodes/s. With --perft D, counts the move paths
    /// of D plies instead (to test move generation).
    Analyse {
        /// The game (see `tbforge games`).
        game: String,
        /// The position, in the game's notation (default: the game's opening position).
        position: Option<String>,
        /// A game parameter KEY=VALUE (without --tb); repeatable.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Deepest iteration, in plies (default 8 without --time).
        #[arg(long)]
        depth: Option<u32>,
        /// Seconds to search (the iteration running then is dropped).
        #[arg(long, value_name = "SECONDS")]
        time: Option<f64>,
        /// A tablebase of the game: positions it holds are answered exactly.
        #[arg(long, value_name = "DIR")]
        tb: Option<PathBuf>,
        /// Count the move paths of D plies instead of searching.
        #[arg(long, value_name = "D")]
        perft: Option<u32>,
        /// Threads (default: all cores): the root's moves are shared out.
        #[arg(long)]
        threads: Option<usize>,
        /// Full-width frontier search instead of alpha-beta, on this device:
        /// the tree expanded breadth-first to --depth (default 8) on the
        /// device, every leaf evaluated in one pass, negamax backed up
        /// (exact minimax values; `cpu` runs the kernels' CPU twin). With
        /// --time, depths 1, 2, ... while they fit in it. For the games
        /// whose kernels have one. Leaves are evaluated with the game's
        /// evaluation, never probed in a tablebase: no --tb.
        #[arg(long, value_enum, value_name = "DEVICE", conflicts_with_all = ["perft", "tb"])]
        frontier: Option<CheckDevice>,
        /// Same as --frontier cuda: the frontier search on GPU 0.
        #[arg(long, conflicts_with_all = ["frontier", "perft", "tb"])]
        gpu: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The engine plays a game against itself and prints it (PDN-style).
    Play {
        /// The game (see `tbforge games`).
        game: String,
        /// Where to start (default: the game's opening position).
        position: Option<String>,
        /// A game parameter KEY=VALUE (without --tb); repeatable.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Search depth of the side to move first, in plies.
        #[arg(long, default_value_t = 6)]
        depth: u32,
        /// Search depth of the other side (default: --depth).
        #[arg(long, value_name = "D")]
        opponent_depth: Option<u32>,
        /// A tablebase of the game: positions it holds are played exactly.
        #[arg(long, value_name = "DIR")]
        tb: Option<PathBuf>,
        /// Stop (unfinished) after this many plies.
        #[arg(long, default_value_t = 300)]
        max_plies: u32,
        /// Threads of each side's search (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve tablebases over HTTP: a JSON API and a web explorer.
    ///
    /// The API: GET /api/games (what is served), /api/NAME?position=TEXT
    /// (value, distance, and every move with its resulting position and
    /// value, best first), /api/NAME/info (the manifest summarised),
    /// /api/NAME/stats (counts, distance histograms, the build's timeline).
    /// NAME is the game's id, or the directory's name where two tablebases
    /// of one game are served. Open http://ADDR/ for the explorer.
    #[cfg(feature = "serve")]
    Serve {
        /// Tablebase directories (each holding manifest.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Address to listen on (port 0: any free port, printed at start).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        bind: String,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Symbolic BFS with BDDs: per layer the BDD's nodes and the number of states.
    BddCount(bdd::BddCountArgs),
    /// A game solved over BDD-indexed layers (a byte per reachable state),
    /// optionally compared with the regular index's values.
    BddSolve(bdd::BddSolveArgs),
    /// Throughput figures: hashing, solving, probing (positions/s).
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum BenchWhat {
    /// Nanoseconds per rank and unrank of the perfect hash functions.
    Hash {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Solve a game in memory and report positions/s per phase.
    Solve {
        /// The game, as for `tbforge build`.
        game: String,
        /// Game parameters, `KEY=VALUE`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Requests per second and latency of `tbforge serve` on loopback.
    ///
    /// Serves the directories on 127.0.0.1 in this process, samples
    /// positions of each tablebase, requests each once (so that their
    /// blocks are cached), then sends --requests probes over --connections
    /// keep-alive connections and prints req/s and latency percentiles.
    /// Server and load share this machine's cores. Exits 1 if any request
    /// failed.
    #[cfg(feature = "serve")]
    Serve {
        /// Tablebase directories (each holding manifest.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Keep-alive connections, each with one request in flight.
        #[arg(long, default_value_t = 32)]
        connections: usize,
        /// Requests per tablebase.
        #[arg(long, default_value_t = 20_000)]
        requests: usize,
        /// Distinct positions requested per tablebase.
        #[arg(long, default_value_t = 256)]
        positions: usize,
        /// Stop each tablebase's load after this many seconds.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// The server's worker threads (default: one per core).
        #[arg(long)]
        server_threads: Option<usize>,
        /// The load generator's threads.
        #[arg(long, default_value_t = 1)]
        client_threads: usize,
        /// Probe answers the server keeps per tablebase (0: every request
        /// probes the tablebase; the block cache stays on).
        #[arg(long, value_name = "N", default_value_t = 4096)]
        answers: usize,
        /// Print one JSON array (a row per tablebase) instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Probe latency and bits per position of a built tablebase directory.
    Probe {
        /// The tablebase directory.
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// How well one partition's values compress as one zstd stream, against
    /// the tablebase's own file (compressed block by block).
    ///
    /// Decompresses the partition's stored values, compresses them as a
    /// single stream (libzstd's worker threads), checks that the stream
    /// decompresses to them, and prints both sizes in bytes and bits per
    /// value, their ratio, and the stream's seconds and MB/s.
    Zstd {
        /// The tablebase directory.
        dir: PathBuf,
        /// The partition (its name, as `tbforge info` lists it, or its file
        /// name); default: the largest file.
        #[arg(long, value_name = "NAME")]
        partition: Option<String>,
        /// The stream's zstd level (1..=22; the files use 9).
        #[arg(
            long,
            value_name = "N",
            default_value_t = 19,
            allow_negative_numbers = true
        )]
        level: i32,
        /// Compress only the first M MiB of the values (default: all).
        #[arg(long, value_name = "M")]
        sample_mb: Option<u64>,
        /// zstd worker threads (default: all cores; 0: single-threaded).
        #[arg(long)]
        threads: Option<u32>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Where a build's time went, per partition: solve, device, count and
    /// write seconds from the directory's build-log.json.
    ///
    /// One row per partition solved in the build's last run (index size,
    /// classes, positions, passes, device s, solve s, other s = count + write,
    /// bytes) and a totals row.
    Stages {
        /// A directory `tbforge build` wrote (holding build-log.json).
        dir: PathBuf,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Copy rates between the host and GPU 0 through page-locked buffers,
    /// the streamed path's kind: GB/s each way (best of five).
    Pcie {
        /// Bytes per copy, in MiB.
        #[arg(long, value_name = "MIB", default_value_t = 256)]
        size_mb: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A game's frontier search (`analyse --gpu`) against its CPU twin and
    /// the alpha-beta search: values, best moves, leaves/s, nodes/s.
    ///
    /// Random roots (by random play from the opening; --seed replays them)
    /// searched by the device and the twin must agree root by root and
    /// level by level; from the position (default: the opening), each depth
    /// of --min-depth..=--max-depth gives the device's value, best move and
    /// speeds, the twin's time (up to --cpu-max-depth) and the alpha-beta
    /// search's value and best move on one thread, which must agree (the
    /// best move where the frontier's is unique); last, the depth each
    /// reaches in --time seconds. Prints a table; exits 1 on any
    /// disagreement, 2 without the device.
    Search {
        /// The game (one whose kernels have a frontier search).
        game: String,
        /// The position, in the game's notation (default: the opening).
        position: Option<String>,
        /// Game parameters, `KEY=VALUE`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// First depth compared.
        #[arg(long, default_value_t = 6)]
        min_depth: u32,
        /// Last depth compared (a depth that does not fit the device ends the table).
        #[arg(long, default_value_t = 12)]
        max_depth: u32,
        /// Deepest depth the CPU twin also searches (its time grows sevenfold a ply).
        #[arg(long, default_value_t = 10)]
        cpu_max_depth: u32,
        /// Seconds for the depth-reached comparison.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
        time: f64,
        /// Random roots searched by both the device and the twin.
        #[arg(long, default_value_t = 4096)]
        samples: usize,
        /// Depth of the random roots' searches.
        #[arg(long, default_value_t = 4)]
        check_depth: u32,
        /// Seed of the random roots (default: from the clock).
        #[arg(long)]
        seed: Option<u64>,
        /// `cpu` runs the CPU twin in the device's place (a dry run without a GPU).
        #[arg(long, value_enum, default_value_t = CheckDevice::Cuda)]
        device: CheckDevice,
        /// Worker threads of the twin and the alpha-beta search (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Check a game's GPU kernels against their CPU twins and time both.
    ///
    /// Every kernel runs on fresh random inputs (the seed is printed; --seed
    /// replays it), throughput is measured on the CPU (all cores) and the GPU,
    /// and whole partitions are solved by both with their bytes compared.
    /// Prints a table; exits 1 if any comparison mismatched, 2 without a GPU.
    Gpu {
        /// The game, as for `tbforge build` (one with kernels: see `tbforge games`).
        game: String,
        /// Game parameters, `KEY=VALUE` (the partitions solved come from them,
        /// e.g. `--param max=5`).
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Random inputs per kernel comparison.
        #[arg(long, default_value_t = 1 << 20)]
        samples: usize,
        /// Seed of the random inputs (default: from the clock).
        #[arg(long)]
        seed: Option<u64>,
        /// Throughput workloads cover 2^N positions.
        #[arg(long, value_name = "N", default_value_t = 28,
              value_parser = clap::value_parser!(u32).range(4..=36))]
        work_log2: u32,
        /// Solve only partitions (or whole games, where a game is solved as one) of at most this many positions.
        #[arg(long, value_name = "POSITIONS")]
        solve_max_size: Option<u64>,
        /// Larger partitions (boards) are solved on the GPU only, not by the CPU twin.
        #[arg(long, value_name = "POSITIONS")]
        cpu_max_size: Option<u64>,
        /// `cpu` runs the CPU twin in the GPU's place: a dry run of the check
        /// itself, without a GPU.
        #[arg(long, value_enum, default_value_t = CheckDevice::Cuda)]
        device: CheckDevice,
        /// Worker threads of the CPU twins (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object (the report) instead of the table.
        #[arg(long)]
        json: bool,
    },
}

/// `tbforge export --fill`: [`tbforge::export::DontCareFill`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Fill {
    /// The previous index's value where allowed, else the lowest value.
    PreviousOrLowest,
    /// The previous index's value where allowed, else the bound.
    PreviousOrBound,
    /// Always the lowest value.
    Lowest,
    /// The fewest runs of equal values.
    Runs,
}

/// Where `tbforge bench gpu` runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckDevice {
    /// CUDA GPU 0.
    Cuda,
    /// The CPU twin in the GPU's place (a dry run).
    Cpu,
}

/// `--side-by-side`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SideBySide {
    /// Where each member has a GPU of its own.
    Auto,
    /// Always, where the game's kernels know what each partition reads.
    On,
    /// Never: every partition split over all members.
    Off,
}

/// Where expansion runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Backend {
    /// The GPU when one is usable, else the CPU (and say so).
    Auto,
    /// The CPU, all cores (rayon).
    Cpu,
    /// A CUDA GPU.
    Cuda,
}

#[derive(Args, Debug)]
pub(crate) struct BuildArgs {
    /// The game to solve (see `tbforge games`); omit to build the default set.
    game: Option<String>,
    /// A game parameter, `KEY=VALUE` (repeatable), e.g. `--param width=5`.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Output directory (default: tablebases/<game>[-<params>]).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Expansion backend.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Peak memory budget, e.g. `8G`, `512M` (external-memory pipeline).
    #[arg(long, value_name = "SIZE")]
    mem_limit: Option<String>,
    /// Device memory the GPU kernels may take, e.g. `24G` (default: what the
    /// device has free): the device acts as a card of that size. A partition
    /// whose in-memory kernel solve needs more goes through the streamed
    /// path (chunks from the scratch disks through pinned buffers and the
    /// device); the others are solved in memory.
    #[arg(long, value_name = "SIZE")]
    gpu_mem_limit: Option<String>,
    /// Scratch/output directory to stripe over (repeatable), as over RAID disks.
    #[arg(long, value_name = "DIR")]
    disk: Vec<PathBuf>,
    /// Continue an interrupted build from its last checkpoint (a finished
    /// partition, pass, or point inside a long pass); a finished build is
    /// left as it is.
    #[arg(long)]
    resume: bool,
    /// Seconds between a pipeline partition's checkpoints, at the end of a
    /// pass or inside a long one (0: at every pass end, chunk and bucket);
    /// the output does not depend on it.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    checkpoint_every: u64,
    /// Print one JSON object (the build summary) instead of text.
    #[arg(long)]
    json: bool,
    /// Build on several GPUs of this host at once (`all`, a count, or GPU
    /// numbers such as `0,1`; a number listed twice runs two members on
    /// that GPU, a dry run of this path on a one-GPU machine), each
    /// driven by its own thread: partitions that do not read each other are
    /// solved side by side, one GPU each, the others split over all GPUs
    /// (see --side-by-side). The output does not depend on it. Under MPI,
    /// run one rank per GPU instead.
    #[arg(long, value_name = "N|all")]
    gpus: Option<String>,
    /// With several GPUs or MPI ranks: `on` solves partitions that do not
    /// read each other at the same time, one member each, `off` splits every
    /// partition over all members; `auto` (default) is `on` where each
    /// member has a GPU of its own. The output does not depend on it.
    #[arg(long, value_name = "auto|on|off", default_value = "auto")]
    side_by_side: SideBySide,
    /// Under MPI: ranks of one host exchange a partition's values through
    /// messages, as ranks on several hosts do, instead of sharing them in
    /// memory (the default where every rank runs on one host). To measure
    /// or check that path; the output does not depend on it.
    #[arg(long)]
    no_shared_memory: bool,
    /// A finished build to copy partitions from instead of solving them,
    /// where the game says they hold the same values (`tbforge games` says
    /// which games share partitions across parameters).
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
}

/// Errors that map to exit code 1 rather than 2.
#[derive(Debug)]
struct CheckFailed(String);

impl std::fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckFailed {}

/// Parses the command line, runs it, and turns an error into one line on
/// stderr and its exit code.
pub fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(err) => {
            // One line: the chain of causes joined, each cause once (many
            // errors already print their source in their own message).
            let mut line = err.to_string();
            for cause in err.chain().skip(1) {
                let cause = cause.to_string();
                if !line.contains(&cause) {
                    line.push_str(": ");
                    line.push_str(&cause);
                }
            }
            eprintln!("tbforge: error: {line}");
            if err.downcast_ref::<CheckFailed>().is_some() {
                ExitCode::from(1)
            } else {
                ExitCode::from(2)
            }
        }
    }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Games { json } => games::games(json),
        Command::Build(args) => build::build(args),
        Command::Verify { dir, deep, json } => verify::verify(&dir, deep, json),
        Command::Info { dir, json, players } => info::info(&dir, json, players),
        Command::Export {
            dir,
            engine,
            distance,
            wdl_only: _,
            force,
            fill,
            threads,
            json,
        } => export::export(
            &dir,
            &engine,
            &tbforge::export::ExportOptions {
                distance,
                force,
                fill: match fill {
                    Fill::PreviousOrLowest => tbforge::export::DontCareFill::PreviousOrLowest,
                    Fill::PreviousOrBound => tbforge::export::DontCareFill::PreviousOrBound,
                    Fill::Lowest => tbforge::export::DontCareFill::Lowest,
                    Fill::Runs => tbforge::export::DontCareFill::Runs,
                },
            },
            threads,
            json,
        ),
        Command::Probe {
            dir,
            position,
            json,
        } => probe::probe(&dir, &position, json),
        Command::Compare {
            dir_a,
            dir_b,
            examples,
            threads,
            json,
        } => compare::compare(&dir_a, &dir_b, examples, threads, json),
        Command::Analyse {
            game,
            position,
            params,
            depth,
            time,
            tb,
            perft,
            threads,
            frontier,
            gpu,
            json,
        } => analyse::analyse(analyse::AnalyseArgs {
            game,
            params,
            position,
            depth,
            time,
            tb,
            perft,
            threads,
            frontier: if gpu {
                Some(CheckDevice::Cuda)
            } else {
                frontier
            },
            json,
        }),
        Command::Play {
            game,
            position,
            params,
            depth,
            opponent_depth,
            tb,
            max_plies,
            threads,
            json,
        } => analyse::play(analyse::PlayArgs {
            game,
            params,
            position,
            depth,
            opponent_depth,
            tb,
            max_plies,
            threads,
            json,
        }),
        #[cfg(feature = "serve")]
        Command::Serve {
            dirs,
            bind,
            threads,
        } => serve::serve(&dirs, &bind, threads),
        Command::Bench { what } => bench::bench(what),
        Command::BddCount(args) => bdd::bdd_count(args),
        Command::BddSolve(args) => bdd::bdd_solve(args),
    }
}

/// `KEY=VALUE` strings to a map; a key given twice is an error.
pub(crate) fn parse_params(raw: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for p in raw {
        let Some((k, v)) = p.split_once('=') else {
            bail!("--param `{p}` is not KEY=VALUE; write e.g. --param width=5");
        };
        if map
            .insert(k.trim().to_string(), v.trim().to_string())
            .is_some()
        {
            bail!("--param `{k}` given twice; give each parameter once");
        }
    }
    Ok(map)
}

pub(crate) fn open(name: &str, raw: &[String]) -> anyhow::Result<AnyGame> {
    let params = parse_params(raw)?;
    Ok(open_game(name, &params)?)
}

/// `n thing` or `n things`.
pub(crate) fn plural(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

pub(crate) fn set_threads(threads: Option<usize>) -> anyhow::Result<()> {
    // Named, so that a profile (perf's `--sort comm`, `top -H`) tells the
    // pool's threads from the pipeline's readers and flushers.
    let pool = rayon::ThreadPoolBuilder::new().thread_name(|_| "tbforge-pool".into());
    match threads {
        Some(0) => bail!("--threads 0: give at least 1 thread"),
        Some(n) => pool
            .num_threads(n)
            .build_global()
            .context("cannot start the worker threads")?,
        // A pool already started (a second command in one process) is kept.
        None => drop(pool.build_global()),
    }
    Ok(())
}

/// `8G`, `512M`, `64K`, `1000` (bytes); binary multiples.
pub(crate) fn parse_size(text: &str) -> anyhow::Result<u64> {
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
