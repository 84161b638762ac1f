//! The permutation puzzles' kernels (kernels/permutation.cu) through their CPU
//! twins (src/game/permpuzzle/twin.rs), which run the kernels' arithmetic
//! step for step:
//! - the twin's successor indices are the puzzle's own (unrank, successors,
//!   rank), index by index on small boards and on random indices of the
//!   largest (16 nibbles: 4x4 and 2x8 tiles, a ring of 16, 15 pancakes);
//! - its two-bit BFS gives the generic frontier BFS's layers, and its byte
//!   BFS from the goal the generic solver's values;
//! - a CPU build (which runs the twins) writes the bytes of a build with no
//!   kernels at all (the generic search and solver).
//!
//! On a GPU, `tbforge bench gpu` compares each kernel with these twins
//! (scripts/gpu_puzzles.sh), and the script compares built files byte for byte.
use crate::common;

use common::{build_with, contents, open};
use tbforge::game::pancake::Pancake;
use tbforge::game::permpuzzle::{twin, PermSpec};
use tbforge::game::slidingtile::SlidingTile;
use tbforge::game::topspin::TopSpin;
use tbforge::hash::SplitMix64;
use tbforge::solve::{frontier_bfs, solve_partition, Layout, Progress};
use tbforge::{Game, PartitionId, Rank};

/// The puzzle's own successors of index `r`, as sorted indices.
fn own<G: Game>(g: &G, r: u64) -> Vec<u64> {
    let pos = g.unrank(PartitionId(0), Rank(r)).unwrap();
    let mut succ = Vec::new();
    g.successors(&pos, &mut succ);
    let mut v: Vec<u64> = succ.iter().map(|(_, s)| g.rank(s).1 .0).collect();
    v.sort_unstable();
    v
}

fn twins(spec: &PermSpec, r: u64) -> Vec<u64> {
    let mut v = Vec::new();
    spec.expand(r, |s| v.push(s));
    v.sort_unstable();
    v
}

fn same_successors<G: Game>(g: &G, spec: &PermSpec, indices: impl Iterator<Item = u64>) {
    assert_eq!(spec.size, g.partition_size(PartitionId(0)), "{spec:?}");
    for r in indices {
        assert_eq!(twins(spec, r), own(g, r), "{spec:?}: index {r}");
    }
}

fn random(spec: &PermSpec, n: usize) -> impl Iterator<Item = u64> {
    let mut rng = SplitMix64::new(spec.size ^ u64::from(spec.kind));
    let size = spec.size;
    (0..n).map(move |_| rng.below(size))
}

#[test]
fn successors_are_the_puzzles_own() {
    for (rows, cols) in [(2, 2), (2, 3), (3, 2), (2, 4), (4, 2), (3, 3)] {
        let (g, spec) = (SlidingTile::new(rows, cols), PermSpec::sliding(rows, cols));
        same_successors(&g, &spec, 0..spec.size);
    }
    for (rows, cols) in [(4, 4), (2, 8), (8, 2), (3, 5), (5, 3), (3, 4)] {
        let (g, spec) = (SlidingTile::new(rows, cols), PermSpec::sliding(rows, cols));
        same_successors(&g, &spec, random(&spec, 20_000));
    }
    for (n, k) in [(6, 4), (7, 4), (8, 4), (9, 4), (7, 3), (6, 2), (8, 5)] {
        let g = TopSpin::new(n, k);
        let spec = PermSpec::topspin(n, k, g.parity_halved());
        same_successors(&g, &spec, 0..spec.size);
    }
    for (n, k) in [(16, 4), (15, 4), (13, 4), (16, 7), (12, 4)] {
        let g = TopSpin::new(n, k);
        let spec = PermSpec::topspin(n, k, g.parity_halved());
        same_successors(&g, &spec, random(&spec, 20_000));
    }
    for (n, burnt) in [
        (2, false),
        (5, false),
        (7, false),
        (1, true),
        (3, true),
        (5, true),
    ] {
        let (g, spec) = (Pancake::new(n, burnt), PermSpec::pancake(n, burnt));
        same_successors(&g, &spec, 0..spec.size);
    }
    for (n, burnt) in [(15, false), (13, false), (12, true), (10, true)] {
        let (g, spec) = (Pancake::new(n, burnt), PermSpec::pancake(n, burnt));
        same_successors(&g, &spec, random(&spec, 20_000));
    }
}

/// The twins' searches against the generic BFS and solver.
fn same_searches<G: Game>(g: &G, spec: &PermSpec) {
    let layout = Layout::new(g).unwrap();
    let goal = g.rank(&g.start().unwrap()).1 .0;
    let generic = frontier_bfs(g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap();
    assert_eq!(twin::two_bit_bfs(spec, goal), generic.layers, "{spec:?}");
    let values = solve_partition(g, &layout, &[None], 0, &Progress::hidden()).unwrap();
    let (mine, _steps) = twin::byte_bfs(spec, goal).unwrap();
    assert!(mine == values, "{spec:?}: values differ");
}

#[test]
fn twin_searches_match_the_generic_ones() {
    for (rows, cols) in [(2, 3), (3, 3), (2, 4)] {
        same_searches(
            &SlidingTile::new(rows, cols),
            &PermSpec::sliding(rows, cols),
        );
    }
    for (n, k) in [(7, 4), (8, 4), (9, 4), (7, 3), (6, 2)] {
        let g = TopSpin::new(n, k);
        same_searches(&g, &PermSpec::topspin(n, k, g.parity_halved()));
    }
    for (n, burnt) in [(7, false), (8, false), (5, true)] {
        same_searches(&Pancake::new(n, burnt), &PermSpec::pancake(n, burnt));
    }
}

/// A CPU build runs the twins (kernels on `Device::Cpu`); the same build
/// without kernels runs the generic search and solver: the same files.
#[test]
fn cpu_builds_with_twins_write_the_generic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (name, params) in [
        ("slidingtile", vec![("rows", "2"), ("cols", "4")]),
        ("topspin", vec![("n", "8"), ("k", "4")]),
        ("topspin", vec![("n", "7"), ("k", "3")]),
        ("pancake", vec![("n", "7")]),
        ("pancake", vec![("n", "4"), ("burnt", "1")]),
    ] {
        let tag = format!(
            "{name}-{}",
            params.iter().map(|(_, v)| *v).collect::<Vec<_>>().join("-")
        );
        let twin_out = dir.path().join(format!("{tag}-twin"));
        let mut args = vec![name.to_string()];
        for (k, v) in &params {
            args.push("--param".into());
            args.push(format!("{k}={v}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::build_cmd(&args, &twin_out, &["--threads", "2"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tag}: {}", common::stderr(&out));
        let log = std::fs::read_to_string(twin_out.join(tbforge::solve::BUILD_LOG)).unwrap();
        assert!(
            log.contains("permutation kernels on cpu"),
            "{tag}: twins not used"
        );
        let generic_out = dir.path().join(format!("{tag}-generic"));
        build_with(&open(name, &params), &generic_out, 2, |_| {});
        common::assert_same(&contents(&twin_out), &contents(&generic_out), &tag);
    }
}
