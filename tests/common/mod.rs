//! Set-up shared by the integration tests: running the command line, opening
//! games by name, comparing tablebase directories, reading solved values and
//! the solve-and-check steps of the puzzle tests. Each test binary includes
//! this module (`mod common;`) and uses only part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use tbforge::game::SolvedPartitions;
use tbforge::registry::{open_game, AnyGame, GameVisitor};
use tbforge::solve::{
    build_game, solve_partition, two_bit_bfs, BuildOptions, Layout, Progress, SolvedGame, BUILD_LOG,
};
use tbforge::{Game, Status, Value};

/// The tbforge binary cargo built for these tests.
pub const EXE: &str = env!("CARGO_BIN_EXE_tbforge");

/// Runs `tbforge ARGS...` to the end.
pub fn tbforge(args: &[&str]) -> Output {
    Command::new(EXE).args(args).output().expect("run tbforge")
}

/// A command's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `tbforge build GAME --backend cpu --json --out OUT EXTRA...`.
pub fn build_cmd(game: &[&str], out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(EXE);
    c.arg("build")
        .args(game)
        .args(["--backend", "cpu", "--json", "--out"])
        .arg(out)
        .args(extra);
    c
}

/// The files of a tablebase directory, by name.
pub type Files = BTreeMap<String, Vec<u8>>;

/// Every file of a tablebase directory except the build log (it holds times).
pub fn contents(dir: &Path) -> Files {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != BUILD_LOG)
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Compares two directories' contents without dumping megabytes on failure.
pub fn assert_same(actual: &Files, expected: &Files, what: &str) {
    let names = |m: &Files| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(actual), names(expected), "{what}: different files");
    for (name, bytes) in expected {
        assert!(actual[name] == *bytes, "{what}: {name} differs");
    }
}

/// `--param` pairs as a game's raw parameters.
pub fn raw_params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The registry's game `name` with parameters `pairs`.
pub fn open(name: &str, pairs: &[(&str, &str)]) -> AnyGame {
    open_game(name, &raw_params(pairs)).unwrap()
}

/// Builds a registry game with `build_game`.
struct Build(BuildOptions);

impl GameVisitor for Build {
    type Output = tbforge::Result<tbforge::solve::BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        build_game(game, &self.0)
    }
}

/// Builds `g` into `out` on `threads` threads, with options changed by `tweak`.
pub fn build_with(g: &AnyGame, out: &Path, threads: usize, tweak: impl FnOnce(&mut BuildOptions)) {
    let mut opts = BuildOptions::new(out);
    tweak(&mut opts);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| g.visit(Build(opts)))
        .unwrap();
}

/// The stored value of `pos` in a solved game.
pub fn solved_value<G: Game>(g: &G, solved: &SolvedGame, pos: &G::Position) -> Value {
    let (p, r) = g.rank(pos);
    let slot = solved.layout.slot(p).unwrap();
    Value::from_byte(solved.values[slot][r.0 as usize])
}

/// Panics at the first index where two solvers' values of partition `name` differ.
pub fn assert_same_values(name: &str, (a_name, a): (&str, &[u8]), (b_name, b): (&str, &[u8])) {
    assert_eq!(a.len(), b.len(), "{name}");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!(
            "{name}: first difference at index {i}: {a_name} {} {b_name} {}",
            a[i], b[i]
        );
    }
}

/// Solves the partitions in layout order, each with the values of those
/// before it: `solve(slot, name, deps, before)` gives a partition's values
/// (which the later ones then read), or `None` to stop there.
pub fn solve_in_order<G: Game>(
    game: &G,
    layout: &Layout,
    mut solve: impl FnMut(usize, &str, &[Option<&[u8]>], &SolvedPartitions) -> Option<Vec<u8>>,
) {
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    for slot in 0..layout.len() {
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let name = game.partition_name(layout.order()[slot]);
        let before = SolvedPartitions::from_slots(&layout.order()[..slot], &deps);
        let Some(values) = solve(slot, &name, &deps, &before) else {
            return;
        };
        solved[slot] = Some(values);
    }
}

/// The generic solver's values of partition `slot`.
pub fn cpu_values<G: Game>(
    game: &G,
    layout: &Layout,
    deps: &[Option<&[u8]>],
    slot: usize,
) -> Vec<u8> {
    solve_partition(game, layout, deps, slot, &Progress::hidden()).unwrap()
}

// Puzzles.

/// Two-bit BFS layer counts of a puzzle, with its size and speed on stderr.
pub fn two_bit_layers<G: Game>(g: &G, what: &str) -> Vec<u64> {
    let layout = Layout::new(g).unwrap();
    let t = std::time::Instant::now();
    let layers = two_bit_bfs(g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap()
        .layers;
    let total: u64 = layers.iter().sum();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "{what}: {total} states, max depth {}, {secs:.2} s, {:.0} states/s",
        layers.len() - 1,
        total as f64 / secs
    );
    layers
}

/// A one-partition puzzle's layout and goal distances (one value byte per index).
pub fn solve_puzzle<G: Game>(g: &G) -> (Layout, Vec<u8>) {
    let layout = Layout::new(g).unwrap();
    let values = solve_partition(g, &layout, &[None], 0, &Progress::hidden()).unwrap();
    (layout, values)
}

/// How many positions lie at each distance from the goal, up to the deepest;
/// every position must reach the goal.
pub fn distance_counts(values: &[u8]) -> Vec<u64> {
    let mut counts = Vec::new();
    for &b in values {
        let d = Value::from_byte(b)
            .distance()
            .expect("every position reaches the goal") as usize;
        if counts.len() <= d {
            counts.resize(d + 1, 0);
        }
        counts[d] += 1;
    }
    counts
}

/// Follows best moves (each a successor one step closer, as probe reports
/// them) from `pos` to the goal; returns the moves and the goal reached.
pub fn walk_to_goal<G: Game>(
    g: &G,
    mut pos: G::Position,
    value: impl Fn(&G::Position) -> Value,
) -> (Vec<G::Move>, G::Position) {
    let mut moves = Vec::new();
    while g.status(&pos) != Status::Goal {
        let d = value(&pos).distance().unwrap();
        let mut succ = Vec::new();
        g.successors(&pos, &mut succ);
        let (m, next) = succ
            .into_iter()
            .find(|(_, s)| value(s).distance() == Some(d - 1))
            .expect("a solvable position has a move one step closer");
        moves.push(m);
        pos = next;
    }
    (moves, pos)
}

/// The stored value of `pos` in a one-partition puzzle's values.
pub fn puzzle_value<G: Game>(g: &G, values: &[u8], pos: &G::Position) -> Value {
    Value::from_byte(values[g.rank(pos).1 .0 as usize])
}

/// Morris with `max` pieces a side and symmetry folding `on` or `off`.
pub fn morris(max: u32, symmetry: &str) -> tbforge::game::morris::Morris {
    let max = max.to_string();
    tbforge::game::morris::Morris::from_params(&raw_params(&[
        ("max", &max),
        ("symmetry", symmetry),
    ]))
    .unwrap()
}

/// A game's layout and forward-search (frontier BFS) result.
pub fn frontier<G: Game>(g: &G) -> (Layout, tbforge::solve::Reachable) {
    let layout = Layout::new(g).unwrap();
    let reach = tbforge::solve::frontier_bfs(g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap();
    (layout, reach)
}

/// Recomputes the trailer checksum of a tablebase file over its header and
/// the index the header describes, after a test edited them: a hostile or
/// buggy writer's file, which only the structural checks stand between and a
/// panic. Files too short to hold a header and trailer are left alone.
pub fn reseal(bytes: &mut [u8]) {
    use tbforge::format::{HEADER_LEN, TRAILER_LEN};
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return;
    }
    let block_count = u64::from_le_bytes(bytes[80..88].try_into().unwrap());
    let index_end = (HEADER_LEN as u64).saturating_add(block_count.saturating_mul(16));
    let n = bytes.len();
    if index_end > (n - TRAILER_LEN) as u64 {
        return;
    }
    let crc = crc32fast::hash(&bytes[..index_end as usize]);
    bytes[n - TRAILER_LEN..n - TRAILER_LEN + 4].copy_from_slice(&crc.to_le_bytes());
}

/// The manifest's top-level fields in their documented order (FORMAT.md).
pub const MANIFEST_FIELDS: [&str; 10] = [
    "format_version",
    "tbforge_version",
    "game",
    "kind",
    "params",
    "param_hash",
    "encoding",
    "totals",
    "layers",
    "files",
];

/// The info of a game made up for a test: no parameters.
pub fn plain_info(id: &'static str, kind: tbforge::GameKind) -> tbforge::GameInfo {
    tbforge::GameInfo {
        id,
        params: tbforge::game::Params::new(),
        kind,
    }
}
