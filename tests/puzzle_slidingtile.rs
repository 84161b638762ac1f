//! Sliding-tile puzzles against seed 002 and the 8-puzzle's known layer counts.
//! # Source: seed 002 (Edelkamp & Sulewski, Parallel state space search on the GPU), Table 1 and
//! the text beside it: all states generated and "equally distributed among the possible blank
//! positions"; "the maximum BFS layer for symmetric puzzles matched (53 for 3x4 and 4x3 as well as
//! 63 for 2x6 and 6x2)". Seed 001 says the same beside its Table 0.1.
//! # Source: 8-puzzle (3x3, blank in a corner as goal) positions by distance, OEIS A089473
//! (Reinefeld 1993): 1, 2, 4, 8, 16, 20, 39, 62, 116, 152, 286, 396, 748, 1024, 1893, 2512, 4485,
//! 5638, 9529, 10878, 16993, 17110, 23952, 20224, 24047, 15578, 14560, 6274, 3910, 760, 221, 2;
//! 181,440 positions, at most 31 moves.
//!
//! # Source: most moves needed on the m x n puzzle, OEIS A151944 (read by antidiagonals):
//! 2x2: 6, 2x3: 21, 2x4: 36, 3x3: 31, 2x5: 55, 3x4: 53, 2x6: 80, 3x5: 84, 4x4: 80 (the 3x4 and
//! 2x6 values also in Korf & Schultze 2005, "Large-scale parallel breadth-first search").
//!
//! Counting: the seed's "maximum BFS layer" is the index of the deepest non-empty layer, i.e.
//! the most moves any position needs (the goal is layer 0); our goal has the blank top-left.
//! The 3x4/4x3 and 2x6/6x2 instances (239,500,800 states each) are ignored tests, run by
//! scripts/puzzles.sh. Measured here (frontier BFS, 2 shared cores): 3x4 and 4x3 reach all
//! 239,500,800 states, deepest layer 53 as the seed says (461 s and 424 s).
//!
//! Mismatch, with evidence: for 2x6 and 6x2 the seed says 63; we find 80 (2 positions at 80,
//! every state reached, spread evenly over the blank cells), which is OEIS A151944's value for
//! the 2 x 6 puzzle. Our 3x4 result (53) matches the seed with the same code and conventions, and
//! every smaller board matches A151944 (tests below), so we take 63 as the seed's error; its
//! Table 1 times do not say which goal or board it searched.
use crate::common;

use common::{distance_counts, puzzle_value, solve_puzzle, walk_to_goal};
use tbforge::game::slidingtile::SlidingTile;
use tbforge::solve::{frontier_bfs, one_bit_bfs, two_bit_bfs, Layout, Progress, Reachable};
use tbforge::{Game, Value};

const EIGHT_PUZZLE: [u64; 32] = [
    1, 2, 4, 8, 16, 20, 39, 62, 116, 152, 286, 396, 748, 1024, 1893, 2512, 4485, 5638, 9529, 10878,
    16993, 17110, 23952, 20224, 24047, 15578, 14560, 6274, 3910, 760, 221, 2,
];

fn one_bit(g: &SlidingTile) -> Reachable {
    let layout = Layout::new(g).unwrap();
    let t = std::time::Instant::now();
    let r = one_bit_bfs(g, &layout, |_, r| g.side(r), &Progress::hidden())
        .unwrap()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "slidingtile {:?}: one-bit BFS {} states, max depth {}, {secs:.2} s",
        g.info().params,
        r.total(),
        r.layers.len() - 1
    );
    r
}

/// Reached positions per blank cell, from the one-bit BFS's bits.
fn per_blank(g: &SlidingTile, r: &Reachable) -> Vec<u64> {
    let half = g.per_blank();
    let cells = (g.partition_size(tbforge::PartitionId(0)) / half) as usize;
    (0..cells)
        .map(|b| {
            (b as u64 * half..(b as u64 + 1) * half)
                .filter(|&i| r.bits[0].get(i))
                .count() as u64
        })
        .collect()
}

#[test]
fn eight_puzzle_layers_three_ways() {
    let g = SlidingTile::new(3, 3);
    let layout = Layout::new(&g).unwrap();
    let one = one_bit(&g);
    assert_eq!(one.layers, EIGHT_PUZZLE.to_vec());
    assert_eq!(one.total(), 181_440);
    assert_eq!(
        frontier_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap()
            .layers,
        EIGHT_PUZZLE.to_vec()
    );
    assert_eq!(
        two_bit_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap()
            .layers,
        EIGHT_PUZZLE.to_vec()
    );
    assert!(per_blank(&g, &one).iter().all(|&n| n == 20_160));
}

#[test]
fn eight_puzzle_goal_distances_and_best_moves() {
    let g = SlidingTile::new(3, 3);
    let (layout, values) = solve_puzzle(&g);
    assert_eq!(distance_counts(&values), EIGHT_PUZZLE.to_vec());
    // The two hardest 8-puzzle positions for this goal need 31 moves (Reinefeld 1993);
    // follow best moves from one of them.
    let value = |b: &[u8; 16]| puzzle_value(&g, &values, b);
    let hardest: Vec<_> = (0..layout.total_size())
        .filter(|&r| Value::from_byte(values[r as usize]).distance() == Some(31))
        .collect();
    assert_eq!(hardest.len(), 2);
    let b = g
        .unrank(tbforge::PartitionId(0), tbforge::Rank(hardest[0]))
        .unwrap();
    let (moves, _) = walk_to_goal(&g, b, value);
    assert_eq!(moves.len(), 31);
}

#[test]
fn small_boards_transposed_agree() {
    // 2x4 and 4x2: 20,160 states each, equally spread over the blank cells, same depth.
    let a = one_bit(&SlidingTile::new(2, 4));
    let b = one_bit(&SlidingTile::new(4, 2));
    assert_eq!(a.total(), 20_160);
    assert_eq!(b.total(), 20_160);
    assert_eq!(a.layers.len(), b.layers.len());
    for g in [
        SlidingTile::new(2, 4),
        SlidingTile::new(4, 2),
        SlidingTile::new(2, 5),
    ] {
        let r = one_bit(&g);
        let spread = per_blank(&g, &r);
        assert!(spread.iter().all(|&n| n == g.per_blank()), "{spread:?}");
        let layout = Layout::new(&g).unwrap();
        assert_eq!(
            two_bit_bfs(&g, &layout, &Progress::hidden())
                .unwrap()
                .unwrap()
                .layers,
            r.layers
        );
    }
}

/// The deepest layer of a large board. Frontier BFS expands each state once; the one-bit BFS
/// re-expands every state about depth/2 times, too slow for 239.5 million states on 2 cores (the
/// small boards above hold all three searches to the same layers).
fn max_depth(rows: usize, cols: usize) -> usize {
    let g = SlidingTile::new(rows, cols);
    let layout = Layout::new(&g).unwrap();
    let t = std::time::Instant::now();
    let r = frontier_bfs(&g, &layout, &Progress::new(true))
        .unwrap()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "slidingtile {rows}x{cols}: {} states, max depth {}, {secs:.1} s, {:.0} states/s, layers {:?}",
        r.total(),
        r.layers.len() - 1,
        r.total() as f64 / secs,
        r.layers
    );
    assert_eq!(r.total(), layout.total_size(), "every index reached");
    let spread = per_blank(&g, &r);
    assert!(spread.iter().all(|&n| n == g.per_blank()), "{spread:?}");
    r.layers.len() - 1
}

#[test]
#[ignore = "239,500,800 states each; scripts/puzzles.sh"]
fn seed_002_three_by_four() {
    assert_eq!(max_depth(3, 4), 53);
    assert_eq!(max_depth(4, 3), 53);
}

#[test]
#[ignore = "239,500,800 states each; scripts/puzzles.sh"]
fn seed_002_two_by_six() {
    // The seed says 63; OEIS A151944 and we say 80 (see the header).
    assert_eq!(max_depth(2, 6), 80);
    assert_eq!(max_depth(6, 2), 80);
}

#[test]
fn small_boards_most_moves_match_a151944() {
    for (rows, cols, most) in [(2, 2, 6), (2, 3, 21), (3, 2, 21), (2, 4, 36), (4, 2, 36)] {
        let g = SlidingTile::new(rows, cols);
        let layout = Layout::new(&g).unwrap();
        let f = frontier_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap();
        assert_eq!(f.layers.len() - 1, most, "{rows}x{cols}");
        assert_eq!(f.total(), layout.total_size());
    }
}

#[test]
#[ignore = "1.8 million states by one-bit BFS: about 20 s on 2 cores"]
fn two_by_five_most_moves() {
    assert_eq!(one_bit(&SlidingTile::new(2, 5)).layers.len() - 1, 55);
}
