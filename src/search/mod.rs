//! Game-tree search beyond the databases, for any two-player [`Game`]:
//! move-path enumeration ([`perft`]) and negamax alpha-beta with iterative
//! deepening and a transposition table ([`Search`]), which answers every
//! position a tablebase holds exactly from it instead of searching or
//! evaluating it.
//!
//! Scores are for the side to move, in centi-pieces where they come from
//! [`Game::evaluate`], and outside that range where they are proved: a win
//! `n` plies from the root is `WIN - n`, a loss `-(WIN - n)`. A tablebase
//! with distances gives the exact `n` of a position it holds (its distance
//! plus the plies to reach it); a win/draw/loss tablebase gives a proved
//! outcome without a length ([`KNOWN_WIN`]). A position seen again on the
//! current line counts as a draw, so the tree is finite even where kings
//! can shuffle for ever. On one thread the search is deterministic: the
//! same position, depth and table size give the same score, line and node
//! count (the table may carry a repetition's draw from one line into
//! another, as every engine's does, so a score can differ with the table's
//! size; a tablebase's answers never do). On several threads
//! ([`Search::with_threads`]) every thread searches the same root and they
//! share one table (lazy SMP, as Stockfish does): what one thread stores
//! cuts another's tree, so the node count, and beyond proved results the
//! score and move, depend on the threads' timing.

use crate::game::{Game, GameKind, Status};
use crate::probe::Tablebase;
use crate::{Error, Outcome, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A win at the root itself: a win `n` plies ahead scores `WIN - n`.
pub const WIN: i32 = 1_000_000;
/// Scores at or above this are wins proved without their length (a
/// win/draw/loss tablebase), minus the plies to reach them.
pub const KNOWN_WIN: i32 = WIN - 100_000;
/// No search reaches this deep: a win scored above `WIN - MAX_PLY` has its
/// exact distance.
pub const MAX_PLY: usize = 1_000;

/// Leaf paths of length `depth` from `pos`: the number of move sequences
/// of exactly `depth` plies (a position without moves ends its paths), as
/// chess and checkers programmers count them to test move generation. The
/// first two plies are split over all cores.
pub fn perft<G: Game>(game: &G, pos: &G::Position, depth: u32) -> u64 {
    use rayon::prelude::*;
    if depth == 0 {
        return 1;
    }
    if game.status(pos) != Status::Ongoing {
        return 0;
    }
    let mut moves = Vec::new();
    game.successors(pos, &mut moves);
    if depth <= 3 {
        return moves
            .iter()
            .map(|(_, s)| perft_serial(game, s, depth - 1))
            .sum();
    }
    moves
        .par_iter()
        .map(|(_, s)| perft(game, s, depth - 1))
        .sum()
}

fn perft_serial<G: Game>(game: &G, pos: &G::Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if game.status(pos) != Status::Ongoing {
        return 0;
    }
    let mut moves = Vec::new();
    game.successors(pos, &mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|(_, s)| perft_serial(game, s, depth - 1))
        .sum()
}

/// When a search stops.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Deepest iteration (plies); without a time, the search runs to it.
    pub depth: Option<u32>,
    /// Wall-clock budget: the iteration running when it ends is dropped.
    pub time: Option<Duration>,
    /// Search the root even where the tablebase holds it (its successors
    /// are still answered from it): a check of the search against the
    /// tablebase, and a way to see the moves' search scores.
    pub search_root: bool,
}

/// What a score means, for people and scripts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ScoreReport {
    /// The proved outcome for the side to move, where the search proved one.
    pub outcome: Option<Outcome>,
    /// Plies to the end under the best play found, where proved with a length.
    pub plies: Option<u32>,
    /// The heuristic score in the game's units ([`Game::evaluate`]), where
    /// nothing is proved.
    pub eval: Option<i32>,
}

impl ScoreReport {
    /// Reads a root score.
    pub fn of(score: i32) -> ScoreReport {
        let proved = |s: i32| {
            if s > WIN - MAX_PLY as i32 {
                (Some(Outcome::Win), Some((WIN - s) as u32))
            } else {
                (Some(Outcome::Win), None)
            }
        };
        let (outcome, plies) = if score >= KNOWN_WIN - MAX_PLY as i32 {
            proved(score)
        } else if score <= -(KNOWN_WIN - MAX_PLY as i32) {
            let (_, plies) = proved(-score);
            (Some(Outcome::Loss), plies)
        } else {
            (None, None)
        };
        ScoreReport {
            outcome,
            plies,
            eval: outcome.is_none().then_some(score),
        }
    }

    /// "win in 13 plies", "loss (length unknown)", "+35 (evaluation)".
    pub fn to_text(&self) -> String {
        match (self.outcome, self.plies, self.eval) {
            (Some(o), Some(n), _) => format!("{o} in {n} {}", if n == 1 { "ply" } else { "plies" }),
            (Some(Outcome::Draw), None, _) => "draw".into(),
            (Some(o), None, _) => format!("{o} (proved; its length unknown)"),
            (None, _, Some(e)) => format!("{e:+} (the game's evaluation)"),
            (None, _, None) => "unknown".into(),
        }
    }
}

/// The result of [`Search::run`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct SearchReport {
    /// The root position in the game's notation.
    pub position: String,
    /// The deepest iteration completed (0: answered by a tablebase or a
    /// finished game).
    pub depth: u32,
    /// The root's score.
    pub score: ScoreReport,
    /// Whether the score came from a tablebase at the root (exact, with
    /// every best move), not from a search.
    pub from_tablebase: bool,
    /// The best move found, in the game's notation.
    pub best_move: Option<String>,
    /// The principal variation: the best line found, as far as known.
    pub pv: Vec<String>,
    /// Positions visited.
    pub nodes: u64,
    /// Positions answered by a tablebase.
    pub tablebase_hits: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// `nodes / seconds`.
    pub nodes_per_second: f64,
}

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    score: i32,
    depth: u16,
    bound: Bound,
    best: u16,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Bound {
    #[default]
    Empty,
    Exact,
    Lower,
    Upper,
}

/// No move stored.
const NO_MOVE: u16 = u16::MAX;

/// The transposition table, shared by a search's threads without locks: a
/// slot holds `key ^ data` and `data`, so that a slot torn by two threads
/// writing at once fails the key check instead of giving another
/// position's entry (Hyatt and Mann's lockless hashing). Slots go in pairs:
/// the first keeps the deepest entry of the current search, the second
/// takes whatever the first does not (many threads storing at once would
/// otherwise wash out the deep results that save the most work).
struct Table {
    slots: Box<[[AtomicU64; 2]]>,
    /// The search the entries belong to (4 bits, wrapping): an entry of an
    /// earlier search yields its slot to any new one.
    generation: AtomicU64,
}

/// Bits of a slot's data: score 0..32, depth 32..42, bound 42..44,
/// generation 44..48, move 48..64.
const DEPTH_BITS: u64 = 0x3ff;

impl Table {
    fn new(log2: u32) -> Table {
        Table {
            slots: (0..1usize << log2.max(1))
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            generation: AtomicU64::new(0),
        }
    }

    /// A new search: entries stored from now on outrank the older ones.
    fn next_generation(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    fn pair(&self, key: u64) -> [&[AtomicU64; 2]; 2] {
        let i = (key as usize) & (self.slots.len() - 2);
        [&self.slots[i], &self.slots[i + 1]]
    }

    fn read(slot: &[AtomicU64; 2], key: u64) -> Option<(Entry, u64)> {
        let [k, d] = slot;
        let data = d.load(Ordering::Relaxed);
        let bound = match (data >> 42) & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            3 => Bound::Upper,
            _ => return None,
        };
        (k.load(Ordering::Relaxed) ^ data == key).then_some((
            Entry {
                key,
                score: data as u32 as i32,
                depth: ((data >> 32) & DEPTH_BITS) as u16,
                bound,
                best: (data >> 48) as u16,
            },
            data,
        ))
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let [deep, any] = self.pair(key);
        Table::read(deep, key)
            .or_else(|| Table::read(any, key))
            .map(|(e, _)| e)
    }

    fn store(&self, e: Entry) {
        let bound: u64 = match e.bound {
            Bound::Empty => 0,
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        let generation = self.generation.load(Ordering::Relaxed) & 15;
        // Depths stay below MAX_PLY < 1024: ten bits.
        let data = u64::from(e.score as u32)
            | (u64::from(e.depth) & DEPTH_BITS) << 32
            | bound << 42
            | generation << 44
            | u64::from(e.best) << 48;
        let [deep, any] = self.pair(e.key);
        let old = deep[1].load(Ordering::Relaxed);
        let old_depth = (old >> 32) & DEPTH_BITS;
        let stale = (old >> 44) & 15 != generation || (old >> 42) & 3 == 0;
        let same = deep[0].load(Ordering::Relaxed) ^ old == e.key;
        let slot = if stale || same || u64::from(e.depth) >= old_depth {
            deep
        } else {
            any
        };
        slot[0].store(e.key ^ data, Ordering::Relaxed);
        slot[1].store(data, Ordering::Relaxed);
    }
}

/// A negamax alpha-beta searcher of one game, with its transposition table,
/// optionally probing a tablebase of that game.
pub struct Search<'a, G: Game> {
    game: &'a G,
    tablebase: Option<&'a Tablebase>,
    table: Arc<Table>,
    line: Vec<u64>,
    moves: Vec<Vec<(G::Move, G::Position)>>,
    nodes: u64,
    tablebase_hits: u64,
    deadline: Option<Instant>,
    stopped: bool,
    /// Set when the main thread is done: the helpers stop.
    halt: Arc<AtomicBool>,
    /// The root's best move in this searcher's last finished iteration
    /// (the shared table's root entry may be a helper's).
    root_best: u16,
    /// Searchers of the other threads, sharing this one's table (empty: one
    /// thread).
    helpers: Vec<Search<'a, G>>,
}

impl<'a, G: Game> Search<'a, G> {
    /// A searcher of `game` with a table of `2^table_log2` entries (16
    /// bytes each), probing `tablebase` where given. The tablebase must be
    /// one of `game` as given (the caller opens the game from its manifest).
    pub fn new(game: &'a G, tablebase: Option<&'a Tablebase>, table_log2: u32) -> Result<Self> {
        if game.info().kind != GameKind::TwoPlayer {
            return Err(Error::NotAvailable(format!(
                "{} is a puzzle: search scores two-player games; probe its tablebase instead",
                game.info().id
            )));
        }
        if let Some(tb) = tablebase {
            tb.check_game(game)?;
        }
        Ok(Search {
            game,
            tablebase,
            table: Arc::new(Table::new(table_log2)),
            line: Vec::new(),
            moves: Vec::new(),
            nodes: 0,
            tablebase_hits: 0,
            deadline: None,
            stopped: false,
            halt: Arc::new(AtomicBool::new(false)),
            root_best: NO_MOVE,
            helpers: Vec::new(),
        })
    }

    /// The same searcher on `threads` threads. Every thread runs the same
    /// iterative deepening from the root (every other helper one ply
    /// deeper), all sharing this searcher's table, so that each thread's
    /// results cut the others' trees; the answer is this thread's last
    /// finished iteration. The node count, and beyond proved results the
    /// score and move, depend on the threads' timing.
    pub fn with_threads(mut self, threads: usize) -> Result<Self> {
        self.helpers = (1..threads.max(1))
            .map(|_| {
                let mut h = Search::new(self.game, self.tablebase, 0)?;
                h.table = Arc::clone(&self.table);
                h.halt = Arc::clone(&self.halt);
                Ok(h)
            })
            .collect::<Result<_>>()?;
        Ok(self)
    }

    /// Searches `root` within `limits` (a depth, a time, or both; neither:
    /// depth 8).
    pub fn run(&mut self, root: &G::Position, limits: Limits) -> Result<SearchReport> {
        let started = Instant::now();
        self.nodes = 0;
        self.tablebase_hits = 0;
        self.stopped = false;
        self.deadline = limits.time.map(|t| started + t);
        for h in &mut self.helpers {
            h.nodes = 0;
            h.tablebase_hits = 0;
            h.stopped = false;
            h.deadline = self.deadline;
        }
        let max_depth = limits
            .depth
            .unwrap_or(if limits.time.is_some() { 200 } else { 8 })
            .min(MAX_PLY as u32 - 1);
        let position = self.game.format_position(root);
        if !limits.search_root {
            if let Some(report) = self.answer_from_tablebase(root, &position, started)? {
                return Ok(report);
            }
        }
        let mut done: Option<(u32, i32, Option<u16>)> = None;
        self.table.next_generation();
        if self.game.status(root) == Status::Ongoing {
            self.halt.store(false, Ordering::Relaxed);
            let mut helpers = std::mem::take(&mut self.helpers);
            let failed = std::thread::scope(|scope| {
                let running: Vec<_> = helpers
                    .iter_mut()
                    .enumerate()
                    .map(|(i, h)| scope.spawn(move || h.deepen(root, max_depth, Some(i))))
                    .collect();
                let main = self.deepen(root, max_depth, None);
                self.halt.store(true, Ordering::Relaxed);
                let mut failed = None;
                for r in running {
                    match r.join() {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) => failed = failed.or(Some(e)),
                        Err(_) => {
                            failed = failed.or(Some(Error::NotAvailable(
                                "a search thread panicked (a bug in tbforge)".into(),
                            )))
                        }
                    }
                }
                match main {
                    Ok(d) => {
                        done = d;
                        failed
                    }
                    Err(e) => Some(e),
                }
            });
            self.helpers = helpers;
            if let Some(e) = failed {
                return Err(e);
            }
        } else {
            self.line.clear();
            let score = self.negamax(root, 0, 0, -WIN - 1, WIN + 1)?;
            done = Some((0, score, None));
        }
        let Some((depth, score, best)) = done else {
            return Err(Error::NotAvailable(
                "the time limit ended before the first iteration: give more time or a depth".into(),
            ));
        };
        let pv = self.principal_variation(root, best, depth.max(1) as usize);
        let seconds = started.elapsed().as_secs_f64();
        let nodes = self.nodes + self.helpers.iter().map(|h| h.nodes).sum::<u64>();
        Ok(SearchReport {
            position,
            depth,
            score: ScoreReport::of(score),
            from_tablebase: false,
            best_move: pv.first().cloned(),
            pv,
            nodes,
            tablebase_hits: self.tablebase_hits
                + self.helpers.iter().map(|h| h.tablebase_hits).sum::<u64>(),
            seconds,
            nodes_per_second: nodes as f64 / seconds.max(1e-9),
        })
    }

    /// Iterative deepening from `root` up to `max_depth`, until done, out
    /// of time or halted: (depth, score, best move) of the last finished
    /// iteration. Helper `i` skips depths in its own pattern (Stockfish's
    /// skip sizes and phases), so that the threads spread over the next
    /// few depths instead of all searching the same tree in step.
    fn deepen(
        &mut self,
        root: &G::Position,
        max_depth: u32,
        helper: Option<usize>,
    ) -> Result<Option<(u32, i32, Option<u16>)>> {
        const SKIP_SIZE: [u32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
        const SKIP_PHASE: [u32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
        let mut done = None;
        for depth in 1..=max_depth {
            if let Some(i) = helper {
                let k = i % 20;
                if depth < max_depth && ((depth + SKIP_PHASE[k]) / SKIP_SIZE[k]) % 2 == 1 {
                    continue;
                }
            }
            self.line.clear();
            self.root_best = NO_MOVE;
            let score = self.negamax(root, depth, 0, -WIN - 1, WIN + 1)?;
            if self.stopped {
                break;
            }
            let best = Some(self.root_best).filter(|&b| b != NO_MOVE);
            done = Some((depth, score, best));
            // A proved result with its length inside the horizon: no
            // deeper iteration changes it.
            let proved = score.abs() > WIN - MAX_PLY as i32;
            if proved && (WIN - score.abs()) as u32 <= depth {
                break;
            }
        }
        Ok(done)
    }

    /// The root answered by the tablebase, where it holds it: its value and
    /// the line of best moves it gives.
    fn answer_from_tablebase(
        &self,
        root: &G::Position,
        position: &str,
        started: Instant,
    ) -> Result<Option<SearchReport>> {
        let Some(tb) = self.tablebase else {
            return Ok(None);
        };
        if self.stored(root)?.is_none() {
            return Ok(None);
        }
        let result = tb.probe(self.game, root)?;
        let score = match (result.outcome, result.distance) {
            (Outcome::Draw, _) => ScoreReport {
                outcome: Some(Outcome::Draw),
                plies: None,
                eval: None,
            },
            (o, plies) => ScoreReport {
                outcome: Some(o),
                plies,
                eval: None,
            },
        };
        // The line: the first best move each time, as long as the tablebase
        // holds the positions (a capture may leave it for a smaller one it
        // also holds; a drawn line is cut at 40 plies).
        let mut pv = Vec::new();
        let mut pos = root.clone();
        let mut moves = Vec::new();
        while pv.len() < result.distance.unwrap_or(40) as usize {
            if self.stored(&pos)?.is_none() || self.game.status(&pos) != Status::Ongoing {
                break;
            }
            let best = tb.probe(self.game, &pos)?.best_moves;
            let Some(first) = best.first() else { break };
            moves.clear();
            self.game.successors(&pos, &mut moves);
            let Some((mv, next)) = moves
                .iter()
                .find(|(m, _)| &self.game.format_move(&pos, m) == first)
            else {
                break;
            };
            pv.push(self.game.format_move(&pos, mv));
            pos = next.clone();
        }
        let seconds = started.elapsed().as_secs_f64();
        Ok(Some(SearchReport {
            position: position.to_string(),
            depth: 0,
            score,
            from_tablebase: true,
            best_move: result.best_moves.first().cloned(),
            pv,
            nodes: 1,
            tablebase_hits: 1,
            seconds,
            nodes_per_second: 1.0 / seconds.max(1e-9),
        }))
    }

    /// The tablebase's (outcome, distance) of `pos`, where it holds it.
    fn stored(&self, pos: &G::Position) -> Result<Option<(Outcome, Option<u32>)>> {
        let Some(tb) = self.tablebase else {
            return Ok(None);
        };
        let (p, _) = self.game.rank(pos);
        if !tb.has_partition(p) {
            return Ok(None);
        }
        // The position's value, also where an engine file stores don't-care.
        let stored = tb.probe_position(self.game, pos)?;
        match stored.outcome {
            Some(o) => Ok(Some((o, stored.distance))),
            None => Err(Error::NotAvailable(format!(
                "{} holds {} as an illegal index: the tablebase does not match the game; run `tbforge verify {}`",
                tb.dir().display(),
                self.game.format_position(pos),
                tb.dir().display()
            ))),
        }
    }

    fn probe_table(&self, key: u64) -> Option<Entry> {
        self.table.probe(key)
    }

    fn store(&mut self, key: u64, depth: u32, score: i32, bound: Bound, best: u16) {
        self.table.store(Entry {
            key,
            score,
            depth: depth as u16,
            bound,
            best,
        });
    }

    /// The score of `pos` searched `depth` plies deep, `ply` plies below the root.
    fn negamax(
        &mut self,
        pos: &G::Position,
        depth: u32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> Result<i32> {
        self.nodes += 1;
        if self.nodes & 0xfff == 0 {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    self.stopped = true;
                }
            }
            // A helper stops when the main thread is done.
            if self.halt.load(Ordering::Relaxed) {
                self.stopped = true;
            }
        }
        if self.stopped {
            return Ok(0);
        }
        match self.game.status(pos) {
            Status::Lost => return Ok(-(WIN - ply as i32)),
            Status::Drawn => return Ok(0),
            Status::Goal => return Ok(WIN - ply as i32),
            Status::Ongoing => {}
        }
        if ply > 0 {
            if let Some((outcome, distance)) = self.stored(pos)? {
                self.tablebase_hits += 1;
                let win = match distance {
                    Some(d) => WIN - ply as i32 - d as i32,
                    None => KNOWN_WIN - ply as i32,
                };
                return Ok(match outcome {
                    Outcome::Win => win,
                    Outcome::Loss => -win,
                    Outcome::Draw => 0,
                });
            }
        }
        let key = self.game.search_key(pos);
        if ply > 0 && self.line.contains(&key) {
            // Back on the current line: neither side has to leave the cycle.
            return Ok(0);
        }
        if depth == 0 || ply + 1 >= MAX_PLY {
            return Ok(self.game.evaluate(pos));
        }
        let mut first = NO_MOVE;
        if let Some(e) = self.probe_table(key) {
            first = e.best;
            if u32::from(e.depth) >= depth && ply > 0 {
                let score = from_table(e.score, ply);
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                    Bound::Empty => false,
                };
                if cut {
                    return Ok(score);
                }
            }
        }
        if self.moves.len() <= ply {
            self.moves.resize_with(ply + 1, Vec::new);
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        moves.clear();
        self.game.successors(pos, &mut moves);
        // The table's move first, then the rest in the game's order
        // (without a list: this runs at every node).
        let first = usize::from(first);
        let n = moves.len();
        let order = (0..n).map(|k| {
            if first >= n {
                k
            } else if k == 0 {
                first
            } else if k <= first {
                k - 1
            } else {
                k
            }
        });
        let alpha_in = alpha;
        let mut best_score = -WIN - 1;
        let mut best = NO_MOVE;
        self.line.push(key);
        for i in order {
            let score = -self.negamax(&moves[i].1, depth - 1, ply + 1, -beta, -alpha)?;
            if self.stopped {
                break;
            }
            if score > best_score {
                best_score = score;
                best = i as u16;
            }
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        self.line.pop();
        self.moves[ply] = moves;
        if self.stopped {
            return Ok(0);
        }
        let bound = if best_score <= alpha_in {
            Bound::Upper
        } else if best_score >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        if ply == 0 {
            self.root_best = best;
        }
        self.store(key, depth, to_table(best_score, ply), bound, best);
        Ok(best_score)
    }

    /// The best line from `root`: its best move, then the table's best
    /// moves while they are stored, at most `len` plies, stopping at a
    /// repeated position.
    fn principal_variation(
        &self,
        root: &G::Position,
        best: Option<u16>,
        len: usize,
    ) -> Vec<String> {
        let mut pv = Vec::new();
        let mut pos = root.clone();
        let mut seen = Vec::new();
        let mut next_best = best;
        let mut moves = Vec::new();
        while pv.len() < len {
            let Some(b) = next_best else { break };
            if self.game.status(&pos) != Status::Ongoing {
                break;
            }
            moves.clear();
            self.game.successors(&pos, &mut moves);
            let Some((mv, next)) = moves.get(usize::from(b)) else {
                break;
            };
            pv.push(self.game.format_move(&pos, mv));
            seen.push(self.game.search_key(&pos));
            pos = next.clone();
            let key = self.game.search_key(&pos);
            if seen.contains(&key) {
                break;
            }
            next_best = self
                .probe_table(key)
                .map(|e| e.best)
                .filter(|&b| b != NO_MOVE);
        }
        pv
    }
}

/// A score as the table keeps it: proved wins counted from the stored
/// position, not the root, so that a transposition at another ply reads
/// the right length.
fn to_table(score: i32, ply: usize) -> i32 {
    if score >= KNOWN_WIN - MAX_PLY as i32 {
        score + ply as i32
    } else if score <= -(KNOWN_WIN - MAX_PLY as i32) {
        score - ply as i32
    } else {
        score
    }
}

fn from_table(score: i32, ply: usize) -> i32 {
    if score >= KNOWN_WIN - MAX_PLY as i32 {
        score - ply as i32
    } else if score <= -(KNOWN_WIN - MAX_PLY as i32) {
        score + ply as i32
    } else {
        score
    }
}
