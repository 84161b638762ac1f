//! Tic-tac-toe against its published numbers, and the solver's invariants on it.
//!
//! # Source: positions reachable after n marks: 1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78,
//! total 5,478 (OEIS A008907 sums to 5,478 legal positions; e.g. Schaefer, "Tic-tac-toe
//! positions", and the tbforge seeds README); 958 of them are terminal (game over); the empty
//! board is a draw under perfect play.

use std::collections::BTreeMap;
use tbforge::game::tictactoe::TicTacToe;
use tbforge::solve::{
    frontier_bfs, one_bit_reachability, solve_game, two_bit_bfs, Layout, Progress,
};
use tbforge::{Game, GameKind, Outcome, Status, Value};

fn game() -> TicTacToe {
    TicTacToe::from_params(&BTreeMap::new()).unwrap()
}

#[test]
fn reachable_per_ply_and_start_value() {
    let g = game();
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    let reach = solved.reachable.as_ref().unwrap();
    assert_eq!(
        reach.layers,
        vec![1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]
    );
    assert_eq!(reach.total(), 5478);
    let (p, r) = g.rank(&g.start().unwrap());
    let slot = solved.layout.slot(p).unwrap();
    let v = Value::from_byte(solved.values[slot][r.0 as usize]);
    assert_eq!(v.outcome(), Some(Outcome::Draw));
}

#[test]
fn terminal_reachable_positions() {
    let g = game();
    let layout = Layout::new(&g).unwrap();
    let reach = frontier_bfs(&g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap();
    let mut terminal = 0;
    for (slot, &p) in layout.order().iter().enumerate() {
        for r in 0..layout.size(slot) {
            if reach.bits[slot].get(r) {
                let pos = g.unrank(p, tbforge::Rank(r)).unwrap();
                if g.status(&pos) != Status::Ongoing {
                    terminal += 1;
                }
            }
        }
    }
    assert_eq!(terminal, 958);
}

#[test]
fn bfs_variants_agree() {
    let g = game();
    let layout = Layout::new(&g).unwrap();
    let hidden = Progress::hidden();
    let frontier = frontier_bfs(&g, &layout, &hidden).unwrap().unwrap();
    let two_bit = two_bit_bfs(&g, &layout, &hidden).unwrap().unwrap();
    assert_eq!(two_bit.layers, frontier.layers);
    let per_slot: Vec<u64> = (0..layout.len()).map(|s| frontier.count(s)).collect();
    assert_eq!(two_bit.per_slot, per_slot);
    let one_bit = one_bit_reachability(&g, &layout, &hidden).unwrap().unwrap();
    assert_eq!(one_bit, frontier.total());
}

/// Every legal position's stored value equals minimax over its successors,
/// computed here independently of the solver.
#[test]
fn every_value_is_the_best_over_successors() {
    let g = game();
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    let value_of = |pos: &[u8; 9]| {
        let (p, r) = g.rank(pos);
        Value::from_byte(solved.values[solved.layout.slot(p).unwrap()][r.0 as usize])
    };
    let mut checked = 0;
    for (slot, &p) in solved.layout.order().iter().enumerate() {
        for r in 0..solved.layout.size(slot) {
            let stored = Value::from_byte(solved.values[slot][r as usize]);
            let Some(pos) = g.unrank(p, tbforge::Rank(r)) else {
                assert!(stored.is_illegal());
                continue;
            };
            let expected = match g.status(&pos) {
                Status::Lost => Value::at_distance(0).unwrap(),
                Status::Drawn => Value::DRAW,
                Status::Goal => unreachable!("two-player game"),
                Status::Ongoing => {
                    let mut succ = Vec::new();
                    g.successors(&pos, &mut succ);
                    let vals: Vec<Value> = succ.iter().map(|(_, s)| value_of(s)).collect();
                    let losses = vals.iter().filter(|v| v.outcome() == Some(Outcome::Loss));
                    if let Some(d) = losses.filter_map(|v| v.distance()).min() {
                        Value::at_distance(d + 1).unwrap()
                    } else if vals.iter().all(|v| v.outcome() == Some(Outcome::Win)) {
                        let d = vals.iter().filter_map(|v| v.distance()).max().unwrap();
                        Value::at_distance(d + 1).unwrap()
                    } else {
                        Value::DRAW
                    }
                }
            };
            assert_eq!(stored, expected, "{}", g.format_position(&pos));
            checked += 1;
        }
    }
    // The game's legality rule (counts alternate, only the last mover may have a line) admits
    // exactly the reachable boards, so every one of the 5,478 is checked.
    assert_eq!(checked, 5478);
    assert_eq!(g.info().kind, GameKind::TwoPlayer);
}

#[test]
fn any_thread_count_gives_the_same_bytes() {
    let g = game();
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| solve_game(&g, &Progress::hidden()).unwrap().values)
    };
    assert_eq!(run(1), run(3));
}
