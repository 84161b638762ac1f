//! The n-pancake problem (plain and burnt) against seed 002 and the known pancake numbers.
//! # Source: seed 002 (Edelkamp & Sulewski, Parallel state space search on the GPU), Table 4
//! "Comparing CPU with GPU Performances in 2-Bit BFS in Pancake Problems": States = 362,880
//! (n=9), 3,628,800 (n=10), 39,916,800 (n=11), 479,001,600 (n=12); the same counts are seed 001
//! Table 0.3. The text: "the pancake problem has n! reachable states, the burned one has n! 2^n".
//! # Source: the pancake numbers (most flips needed to sort n pancakes), OEIS A058986:
//! 0, 1, 3, 4, 5, 7, 8, 9, 10, 11, 13 for n = 1..=11 (Gates & Papadimitriou 1979; Heydari &
//! Sudborough 1997; Cibulka 2011); burnt pancake numbers, OEIS A078941: 1, 4, 6, 8, 10, 12, 14,
//! 15 for n = 1..=8 (Cohen & Blum 1995; Cibulka 2011).
//!
//! Counting: the paper's "States" is the number reached by BFS from the sorted stack, start
//! included; flips are their own inverses, so BFS from the start equals BFS from the goal.
//! n = 11 and 12 take minutes on 2 cores: ignored tests, run by scripts/puzzles.sh.
use crate::common;

use common::{distance_counts, puzzle_value, solve_puzzle, two_bit_layers, walk_to_goal};
use tbforge::game::pancake::Pancake;
use tbforge::solve::{frontier_bfs, Layout, Progress};
use tbforge::Game;

const PANCAKE_NUMBERS: [usize; 11] = [0, 1, 3, 4, 5, 7, 8, 9, 10, 11, 13];
const BURNT_PANCAKE_NUMBERS: [usize; 8] = [1, 4, 6, 8, 10, 12, 14, 15];

fn two_bit(n: usize, burnt: bool) -> Vec<u64> {
    two_bit_layers(
        &Pancake::new(n, burnt),
        &format!("pancake n={n} burnt={burnt}"),
    )
}

#[test]
fn table_4_small() {
    for (n, states) in [(9, 362_880u64), (10, 3_628_800)] {
        let layers = two_bit(n, false);
        assert_eq!(layers.iter().sum::<u64>(), states, "n={n}");
        assert_eq!(layers.len() - 1, PANCAKE_NUMBERS[n - 1], "n={n}");
    }
}

#[test]
#[ignore = "minutes on 2 cores; scripts/puzzles.sh"]
fn table_4_n11() {
    let layers = two_bit(11, false);
    assert_eq!(layers.iter().sum::<u64>(), 39_916_800);
    assert_eq!(layers.len() - 1, PANCAKE_NUMBERS[10]);
}

#[test]
#[ignore = "479 million states; for a many-core machine, scripts/puzzles.sh"]
fn table_4_n12() {
    let layers = two_bit(12, false);
    assert_eq!(layers.iter().sum::<u64>(), 479_001_600);
    // Pancake number for n = 12 is 14 (OEIS A058986).
    assert_eq!(layers.len() - 1, 14);
}

#[test]
fn pancake_numbers_small() {
    for n in 2..=8 {
        let g = Pancake::new(n, false);
        let layout = Layout::new(&g).unwrap();
        let f = frontier_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap();
        assert_eq!(f.total(), (1..=n as u64).product::<u64>(), "n={n}");
        assert_eq!(f.layers.len() - 1, PANCAKE_NUMBERS[n - 1], "n={n}");
        assert_eq!(
            two_bit(n, false),
            f.layers,
            "two-bit and frontier BFS agree, n={n}"
        );
    }
}

#[test]
fn burnt_pancakes() {
    for n in 1..=7 {
        let layers = two_bit(n, true);
        let states: u64 = (1..=n as u64).product::<u64>() << n;
        assert_eq!(layers.iter().sum::<u64>(), states, "n! 2^n, n={n}");
        assert_eq!(layers.len() - 1, BURNT_PANCAKE_NUMBERS[n - 1], "n={n}");
    }
}

#[test]
fn goal_distances_equal_bfs_layers_and_probe_walks_home() {
    for (n, burnt) in [(7, false), (5, true)] {
        let g = Pancake::new(n, burnt);
        let (layout, values) = solve_puzzle(&g);
        let f = frontier_bfs(&g, &layout, &Progress::hidden())
            .unwrap()
            .unwrap();
        assert_eq!(distance_counts(&values), f.layers);
        // Best moves from a deepest stack reach the sorted one in exactly its distance.
        let text = if burnt {
            "-5 -4 -3 -2 -1"
        } else {
            "4 1 6 3 7 2 5"
        };
        let s = g.parse_position(text).unwrap();
        let value = |s: &[u8; 16]| puzzle_value(&g, &values, s);
        let d0 = value(&s).distance().unwrap();
        let (moves, _) = walk_to_goal(&g, s, value);
        assert_eq!(moves.len(), d0 as usize);
        assert!(d0 > 0);
    }
}

/// Puzzles read as moves to the goal, never as a game won.
#[test]
fn probe_text_says_moves_to_the_goal() {
    let dir = tempfile::tempdir().unwrap();
    let o = common::tbforge(&[
        "build",
        "pancake",
        "--param",
        "n=5",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let r = tbforge::probe::probe_text(dir.path(), "3 1 2 5 4").unwrap();
    let d = r.result.distance.unwrap();
    assert!(d > 1);
    let text = r.to_text();
    assert!(
        text.contains(&format!("\n{d} moves to the goal\n")),
        "{text}"
    );
    assert!(!text.contains("win"), "{text}");
    let r = tbforge::probe::probe_text(dir.path(), "1 2 3 4 5").unwrap();
    assert!(r.to_text().contains("\nat the goal\n"), "{}", r.to_text());
}
