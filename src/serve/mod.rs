//! `tbforge serve`: an HTTP API over built tablebases and the web explorer
//! that uses it, both from one binary with no network beyond the listener.
//!
//! The JSON API follows lila-tablebase's shape (the Lichess tablebase server):
//! - `GET /api/games`: the tablebases served, each with its route name;
//! - `GET /api/{name}?position=TEXT`: the position's outcome and distance, and
//!   every legal move with the position it leads to and that position's
//!   value for the mover, best first;
//! - `GET /api/{name}/info`: the manifest summarised (as `tbforge info --json`);
//! - `GET /api/{name}/stats`: per partition the win/draw/loss counts and the
//!   distance histogram (computed on first request and kept), and the build's
//!   timeline from `build-log.json`;
//! - errors as `{"error": "..."}`: 400 for a bad position or parameter, 404
//!   for an unknown tablebase or route, 500 for a damaged file.
//!
//! A tablebase's route name is its game's id, unless two served tablebases
//! have the same game: then each is named by its directory's name.
//!
//! Each tablebase is opened once and shared by every request (a
//! [`Tablebase`] is `Send + Sync`, its block cache sharded behind locks).
//! Probes are microseconds of work on cached blocks, so handlers run them
//! on the runtime's workers; only the statistics scan, which reads whole
//! partitions, goes to the blocking pool.

mod api;
mod assets;
mod cache;
mod load;
mod stats;

pub use load::{load, load_blocking, LoadOptions, LoadReport};

use crate::format::{self, InfoReport};
use crate::game::GameDescriptor;
use crate::registry::{annotate_info, catalog, open_game, AnyGame, GameVisitor};
use crate::{Game, GameKind, Tablebase};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What can go wrong starting the explorer.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A directory is not a readable tablebase.
    #[error("cannot serve {}: {source}", dir.display())]
    Open {
        /// The directory given.
        dir: PathBuf,
        /// Why it cannot be opened.
        source: crate::Error,
    },
    /// Two directories would be served under one route name.
    #[error("{} and {} would both be served as `{name}`: give the directories different names", first.display(), second.display())]
    SameName {
        /// The route name.
        name: String,
        /// The first directory.
        first: PathBuf,
        /// The second directory.
        second: PathBuf,
    },
    /// No directory was given.
    #[error("no tablebase directory given: name at least one that `tbforge build` wrote")]
    Nothing,
    /// The listener could not be set up.
    #[error("cannot listen on {addr}: {source}; pick another address with --bind")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The runtime could not start, or the load generator failed.
    #[error("{what}: {source}")]
    Runtime {
        /// What was being done.
        what: &'static str,
        /// The system's reason.
        source: std::io::Error,
    },
}

/// How [`Explorer::open_with`] sets the explorer up.
#[derive(Clone, Copy, Debug)]
pub struct ExplorerOptions {
    /// Probe answers kept per tablebase (0: every request probes), about
    /// 2 KiB each.
    pub answers_kept: usize,
}

impl Default for ExplorerOptions {
    fn default() -> Self {
        ExplorerOptions { answers_kept: 4096 }
    }
}

/// One served tablebase.
struct Entry {
    name: String,
    tb: Tablebase,
    game: AnyGame,
    descriptor: Option<GameDescriptor>,
    /// Where the explorer starts: the game's opening position, else its
    /// notation's example when this tablebase holds it.
    start: Option<String>,
    info: InfoReport,
    /// The build log's run and partitions, if the directory has one.
    timeline: Option<serde_json::Value>,
    stats: OnceLock<Arc<stats::Histograms>>,
    /// Held while the histograms are scanned, so that requests arriving
    /// meanwhile wait for that scan instead of starting their own.
    scanning: std::sync::Mutex<()>,
    answers: cache::AnswerCache,
}

/// The tablebases `tbforge serve` serves, opened once and shared.
pub struct Explorer {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for Explorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Explorer")
            .field("names", &self.names())
            .finish_non_exhaustive()
    }
}

impl Explorer {
    /// Opens each directory's tablebase and its game.
    pub fn open(dirs: &[PathBuf]) -> Result<Explorer, ServeError> {
        Explorer::open_with(dirs, ExplorerOptions::default())
    }

    /// [`Explorer::open`] with explicit options.
    pub fn open_with(dirs: &[PathBuf], options: ExplorerOptions) -> Result<Explorer, ServeError> {
        if dirs.is_empty() {
            return Err(ServeError::Nothing);
        }
        let mut opened = Vec::new();
        for dir in dirs {
            let fail = |source: crate::Error| ServeError::Open {
                dir: dir.clone(),
                source,
            };
            let tb = Tablebase::open(dir).map_err(|e| fail(e.into()))?;
            let game = open_game(&tb.manifest().game, &tb.manifest().params).map_err(fail)?;
            struct Check<'a>(&'a Tablebase);
            impl GameVisitor for Check<'_> {
                type Output = Result<(), format::FormatError>;
                fn visit<G: Game>(self, game: &G) -> Self::Output {
                    self.0.check_game(game)
                }
            }
            game.visit(Check(&tb)).map_err(|e| fail(e.into()))?;
            let mut info = format::info(dir).map_err(|e| fail(e.into()))?;
            annotate_info(&mut info);
            opened.push((dir.clone(), tb, game, info));
        }
        // A game's id names its route unless another tablebase has the same game.
        let mut per_game: HashMap<String, usize> = HashMap::new();
        for (_, tb, _, _) in &opened {
            *per_game.entry(tb.manifest().game.clone()).or_default() += 1;
        }
        let mut entries = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut dir_of: HashMap<String, PathBuf> = HashMap::new();
        for (dir, tb, game, info) in opened {
            let id = tb.manifest().game.clone();
            let name = if per_game[&id] == 1 {
                id.clone()
            } else {
                dir_name(&dir)
            };
            if name.is_empty() || name == "games" || by_name.contains_key(&name) {
                return Err(ServeError::SameName {
                    first: dir_of
                        .get(&name)
                        .cloned()
                        .unwrap_or_else(|| "the API's own route".into()),
                    second: dir,
                    name,
                });
            }
            let descriptor = catalog().into_iter().find(|d| d.name == id);
            let start = start_position(&tb, &game, descriptor.as_ref());
            let timeline = stats::read_timeline(&dir);
            by_name.insert(name.clone(), entries.len());
            dir_of.insert(name.clone(), dir);
            entries.push(Entry {
                name,
                tb,
                game,
                descriptor,
                start,
                info,
                timeline,
                stats: OnceLock::new(),
                scanning: std::sync::Mutex::new(()),
                answers: cache::AnswerCache::new(options.answers_kept),
            });
        }
        Ok(Explorer { entries, by_name })
    }

    /// The route names served, in the order the directories were given.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// Up to `count` positions of tablebase `name` that probe without error
    /// (spread over its partitions by a fixed pseudo-random sequence), in the
    /// game's notation: the loads of `tbforge bench serve` and the tests.
    pub fn sample_positions(&self, name: &str, count: usize) -> Vec<String> {
        self.entry(name)
            .map(|e| {
                sample(&e.tb, &e.game, count)
                    .into_iter()
                    .map(|(p, _)| p)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Serves the API and the explorer on `listener` until `shutdown` resolves.
    pub async fn serve(
        self: Arc<Self>,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        axum::serve(listener, api::router(self))
            .with_graceful_shutdown(shutdown)
            .await
    }

    /// Starts serving on `bind` (e.g. `127.0.0.1:8080`; port 0 picks a free
    /// one) on a runtime of `threads` workers (default: one per core) in a
    /// thread of its own; returns once the listener is bound.
    pub fn spawn(
        self: Arc<Self>,
        bind: &str,
        threads: Option<usize>,
    ) -> Result<Running, ServeError> {
        let mut rt = tokio::runtime::Builder::new_multi_thread();
        rt.enable_io().enable_time().thread_name("tbforge-serve");
        if let Some(n) = threads {
            rt.worker_threads(n.max(1));
        }
        let rt = rt.build().map_err(|source| ServeError::Runtime {
            what: "cannot start the server's threads",
            source,
        })?;
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(bind))
            .map_err(|source| ServeError::Bind {
                addr: bind.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind {
            addr: bind.to_string(),
            source,
        })?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("tbforge-serve-main".into())
            .spawn(move || {
                rt.block_on(self.serve(listener, async {
                    let _ = stopped.await;
                }))
            })
            .map_err(|source| ServeError::Runtime {
                what: "cannot start the server's thread",
                source,
            })?;
        Ok(Running {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

/// A server started by [`Explorer::spawn`]; dropping it stops it.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the server ends (it ends on its own only on an error).
    pub fn wait(mut self) -> std::io::Result<()> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(std::io::Error::other("the server's thread panicked")),
            None => Ok(()),
        }
    }

    /// Stops accepting, lets open requests finish, and waits for the end.
    pub fn stop(mut self) -> std::io::Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.wait()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn dir_name(dir: &Path) -> String {
    // `canonicalize` so that `.` or `dir/` still give the directory's own name.
    let full = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    full.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Up to `count` positions of `tb` that probe without error, with their
/// distances, spread over its partitions by a fixed pseudo-random sequence.
fn sample(tb: &Tablebase, game: &AnyGame, count: usize) -> Vec<(String, Option<u32>)> {
    struct Sample<'a> {
        tb: &'a Tablebase,
        count: usize,
    }
    impl GameVisitor for Sample<'_> {
        type Output = Vec<(String, Option<u32>)>;
        fn visit<G: Game>(self, game: &G) -> Self::Output {
            let parts: Vec<_> = game
                .partitions()
                .into_iter()
                .filter(|&p| self.tb.has_partition(p) && game.partition_size(p) > 0)
                .collect();
            let mut out = Vec::new();
            if parts.is_empty() {
                return out;
            }
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            // Bounded: sparse partitions may hold few legal indices.
            for _ in 0..self.count.saturating_mul(64) {
                if out.len() >= self.count {
                    break;
                }
                x = crate::hash::mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                let p = parts[(x % parts.len() as u64) as usize];
                let r = crate::Rank((x >> 17) % game.partition_size(p));
                let Some(pos) = game.unrank(p, r) else {
                    continue;
                };
                if let Ok(v) = self.tb.probe(game, &pos) {
                    out.push((game.format_position(&pos), v.distance));
                }
            }
            out
        }
    }
    game.visit(Sample { tb, count })
}

/// Where the explorer opens a tablebase. Two-player games: the opening
/// position where the tablebase holds it, else the notation's example.
/// Puzzles, whose start is the goal: the example, else the farthest of a
/// sample of positions.
fn start_position(
    tb: &Tablebase,
    game: &AnyGame,
    descriptor: Option<&GameDescriptor>,
) -> Option<String> {
    struct Start<'a> {
        tb: &'a Tablebase,
        example: Option<&'static str>,
    }
    impl GameVisitor for Start<'_> {
        type Output = Option<String>;
        fn visit<G: Game>(self, game: &G) -> Option<String> {
            let example = self.example.and_then(|t| game.parse_position(t).ok());
            let candidates = if self.tb.kind() == GameKind::Puzzle {
                [example, None, None]
            } else {
                [game.start(), game.initial(), example]
            };
            candidates
                .into_iter()
                .flatten()
                .find(|pos| self.tb.probe(game, pos).is_ok())
                .map(|pos| game.format_position(&pos))
        }
    }
    let found = game.visit(Start {
        tb,
        example: descriptor.map(|d| d.example),
    });
    found.or_else(|| {
        sample(tb, game, 256)
            .into_iter()
            .max_by_key(|(_, d)| *d)
            .map(|(p, _)| p)
    })
}
