//! The `tbforge` command line: a thin layer over the library. Errors become
//! one line on stderr and an exit code (0 success, 1 a check failed or the
//! position is not in the tablebase, 2 usage or input error).

use anyhow::bail;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use tbforge::game::{open_game, AnyGame};

mod commands;

/// Build, verify and probe endgame databases (tablebases) of board games and puzzles.
///
/// Start with `tbforge games` to see what can be built, then `tbforge build GAME`.
#[derive(Parser, Debug)]
#[command(name = "tbforge", version, about, long_about = None)]
struct Cli {
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
    /// Summarise a tablebase directory's manifest: totals, layers, files.
    Info {
        /// The tablebase directory (holding manifest.json).
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
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
    /// Throughput figures: hashing, solving, probing (positions/s).
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand, Debug)]
enum BenchWhat {
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
    /// Probe latency and bits per position of a built tablebase directory.
    Probe {
        /// The tablebase directory.
        dir: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Where expansion runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The GPU when one is usable, else the CPU (and say so).
    Auto,
    /// The CPU, all cores (rayon).
    Cpu,
    /// A CUDA GPU.
    Cuda,
}

#[derive(Args, Debug)]
struct BuildArgs {
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
    /// Scratch/output directory to stripe over (repeatable), as over RAID disks.
    #[arg(long, value_name = "DIR")]
    disk: Vec<PathBuf>,
    /// Continue an interrupted build from its last checkpoint (a finished
    /// partition, pass, or point inside a long pass).
    #[arg(long)]
    resume: bool,
    /// Seconds between checkpoints inside a long pipeline pass (0: at every
    /// chunk); the output does not depend on it.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    checkpoint_every: u64,
    /// Print one JSON object (the build summary) instead of text.
    #[arg(long)]
    json: bool,
}

/// Makes glibc serve every allocation of 256 KiB or more (chunks, run
/// buffers) from its own mapping, returned to the system when freed. By
/// default glibc raises that threshold after each such free, so later big
/// buffers come from per-thread heap arenas that keep their freed memory:
/// measured on 16 threads, a pipeline build under `--mem-limit 128M` grew to
/// 331 MB that way, and stays at 67 MB with the threshold fixed.
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called first
    // thing in main, before any other thread exists, and M_MMAP_THRESHOLD with
    // a value below the 32 MiB maximum is a documented, valid setting.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
    }
}

/// Raises the soft limit on open files to the hard one: the pipeline keeps a
/// run file open per bucket it writes, and a game of many small partitions
/// (Morris) has hundreds of buckets; the usual soft limit of 1024 would send
/// it back to opening a file per piece written.
fn allow_many_open_files() {
    #[cfg(target_os = "linux")]
    // SAFETY: getrlimit/setrlimit read and write the struct we pass, which
    // lives on this stack frame; raising the soft limit up to the hard one
    // is always permitted.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max.min(1 << 16);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
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

fn main() -> ExitCode {
    return_large_buffers_to_the_system();
    allow_many_open_files();
    let cli = Cli::parse();
    match run(cli) {
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

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Games { json } => commands::games(json),
        Command::Build(args) => commands::build(args),
        Command::Verify { dir, deep, json } => commands::verify(&dir, deep, json),
        Command::Info { dir, json } => commands::info(&dir, json),
        Command::Probe {
            dir,
            position,
            json,
        } => commands::probe(&dir, &position, json),
        Command::Bench { what } => commands::bench(what),
    }
}

/// `KEY=VALUE` strings to a map; a key given twice is an error.
fn parse_params(raw: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
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

fn open(name: &str, raw: &[String]) -> anyhow::Result<AnyGame> {
    let params = parse_params(raw)?;
    Ok(open_game(name, &params)?)
}

/// What `tbforge build` builds when given no game: a quick, meaningful demo
/// (seconds to a minute on a laptop) with a published number behind each.
const DEFAULT_SET: &[(&str, &[&str])] = &[
    ("tictactoe", &[]),
    ("nim", &["heaps=1,3,5,7"]),
    ("connect4", &["width=5", "height=4"]),
    ("morris", &["max=3"]),
    ("foreandaft", &[]),
];
