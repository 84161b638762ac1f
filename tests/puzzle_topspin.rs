//! The (n, 4) Top-Spin puzzle against seed 002.
//! # Source: seed 002 (Edelkamp & Sulewski, Parallel state space search on the GPU), Table 3
//! "Comparing CPU with GPU Performances in 2-Bit BFS in the Top-Spin Domain": States = 120, 360,
//! 5,040, 20,160, 362,880, 1,814,400, 39,916,800 for n = 6..=12 (k = 4); the same counts are seed
//! 001 Table 0.2. Theorem 1: (n-1)!/2 reachable states for odd n > k + 1, (n-1)! for even n.
//!
//! Counting: "States" is the number of normalised rings (token 1 in front) reached by two-bit BFS
//! from the sorted ring, start included. For odd n our index is parity-halved, so reaching every
//! index is the theorem; for even n it is the full (n-1)!. n = 12 is an ignored test
//! (scripts/puzzles.sh).
use crate::common;

use common::{distance_counts, solve_puzzle, two_bit_layers};
use tbforge::game::topspin::TopSpin;
use tbforge::solve::{frontier_bfs, two_bit_bfs, Layout, Progress};

const TABLE_3: [(usize, u64); 7] = [
    (6, 120),
    (7, 360),
    (8, 5_040),
    (9, 20_160),
    (10, 362_880),
    (11, 1_814_400),
    (12, 39_916_800),
];

fn states(n: usize) -> (u64, usize) {
    let g = TopSpin::new(n, 4);
    let layers = two_bit_layers(&g, &format!("topspin n={n} k=4"));
    let total: u64 = layers.iter().sum();
    assert_eq!(
        total,
        Layout::new(&g).unwrap().total_size(),
        "every index reached"
    );
    (total, layers.len() - 1)
}

#[test]
fn table_3_up_to_11() {
    for &(n, expected) in &TABLE_3[..6] {
        assert_eq!(states(n).0, expected, "n={n}");
    }
}

#[test]
#[ignore = "40 million states, about a minute on 2 cores; scripts/puzzles.sh"]
fn table_3_n12() {
    assert_eq!(states(12).0, TABLE_3[6].1);
}

#[test]
fn distances_to_goal_equal_bfs_layers() {
    for n in [7, 8] {
        let g = TopSpin::new(n, 4);
        let (layout, values) = solve_puzzle(&g);
        let f = frontier_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap();
        assert_eq!(distance_counts(&values), f.layers, "n={n}");
        assert_eq!(
            two_bit_bfs(&g, &layout, &Progress::hidden())
                .unwrap()
                .unwrap()
                .layers,
            f.layers
        );
    }
}
