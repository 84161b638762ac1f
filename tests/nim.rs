//! Nim against theory and an independent minimax.
//! # Source: C. L. Bouton, "Nim, a game with a complete mathematical theory", Annals of
//! Mathematics 3 (1901-02): under normal play a position is lost for the side to move iff the
//! xor (nim-sum) of the heap sizes is 0. Board 1,3,5,7 from seed 004 (Fiorella, Parallel MinMax
//! for Nim); its nim-sum is 0, so the first player loses.
use crate::common;

use common::{raw_params as raw, solved_value};
use std::collections::HashMap;
use tbforge::game::nim::{Heaps, Nim};
use tbforge::registry::{open_game, AnyGame};
use tbforge::solve::{frontier_bfs, solve_game, two_bit_bfs, Layout, Progress, SolvedGame};
use tbforge::{Error, Game, Outcome, PartitionId, Rank, Value};

fn nim(heaps: &str) -> Nim {
    Nim::from_params(&raw(&[("heaps", heaps)])).unwrap()
}

fn value_of(g: &Nim, solved: &SolvedGame, heaps: &[u32]) -> Value {
    solved_value(g, solved, &Heaps::new(heaps))
}

/// Every heap vector under `caps`.
fn all_positions(caps: &[u32]) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for &c in caps {
        out = out
            .into_iter()
            .flat_map(|v| {
                (0..=c).map(move |h| {
                    let mut w = v.clone();
                    w.push(h);
                    w
                })
            })
            .collect();
    }
    out
}

/// Plain memoised minimax, written without the solver: (side to move wins, plies to the end
/// under best play: the winner hurries, the loser delays).
fn minimax(heaps: &[u32], memo: &mut HashMap<Vec<u32>, (bool, u32)>) -> (bool, u32) {
    if let Some(&v) = memo.get(heaps) {
        return v;
    }
    let mut fastest_win: Option<u32> = None;
    let mut slowest_loss = 0;
    for i in 0..heaps.len() {
        for left in 0..heaps[i] {
            let mut next = heaps.to_vec();
            next[i] = left;
            let (opponent_wins, d) = minimax(&next, memo);
            if opponent_wins {
                slowest_loss = slowest_loss.max(d + 1);
            } else {
                fastest_win = Some(fastest_win.map_or(d + 1, |b: u32| b.min(d + 1)));
            }
        }
    }
    // No move at all (every heap empty): lost now, at distance 0.
    let v = match fastest_win {
        Some(d) => (true, d),
        None => (false, slowest_loss),
    };
    memo.insert(heaps.to_vec(), v);
    v
}

#[test]
fn xor_rule_and_minimax_hold_for_every_position() {
    for heaps in ["1,3,5,7", "7,7,7", "2,3,4,5,6", "1", "4,4", "3,6,9,1"] {
        let g = nim(heaps);
        let solved = solve_game(&g, &Progress::hidden()).unwrap();
        let mut memo = HashMap::new();
        let positions = all_positions(g.heaps());
        for pos in &positions {
            let v = value_of(&g, &solved, pos);
            let xor = pos.iter().fold(0, |a, &h| a ^ h);
            let expected = if xor == 0 {
                Outcome::Loss
            } else {
                Outcome::Win
            };
            assert_eq!(
                v.outcome(),
                Some(expected),
                "heaps {heaps}: position {pos:?}"
            );
            let (wins, d) = minimax(pos, &mut memo);
            assert_eq!(wins, xor != 0, "minimax disagrees with Bouton at {pos:?}");
            assert_eq!(v.distance(), Some(d), "heaps {heaps}: distance at {pos:?}");
        }
        // Every index is a position: the table holds exactly the vectors above.
        let stored: usize = solved.values.iter().map(Vec::len).sum();
        assert_eq!(stored, positions.len());
        assert!(solved.values.iter().flatten().all(|&b| b != 0));
    }
}

#[test]
fn start_of_seed_board_is_lost() {
    let g = nim("1,3,5,7");
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    let v = value_of(&g, &solved, &[1, 3, 5, 7]);
    assert_eq!(v.outcome(), Some(Outcome::Loss));
    // 1,3,5,6 has nim-sum 1: emptying heap 1 leaves 0,3,5,6 (nim-sum 0), so it is won.
    assert_eq!(
        value_of(&g, &solved, &[1, 3, 5, 6]).outcome(),
        Some(Outcome::Win)
    );
}

/// Elementary symmetric polynomial e_d of the caps: positions that need exactly d moves
/// from the start (d heaps touched), which is what BFS layer d must hold.
fn elementary(caps: &[u64], d: usize) -> u64 {
    let mut e = vec![0u64; caps.len() + 1];
    e[0] = 1;
    for &c in caps {
        for j in (1..e.len()).rev() {
            e[j] += e[j - 1] * c;
        }
    }
    e[d]
}

#[test]
fn bfs_layers_are_heaps_touched() {
    let g = nim("1,3,5,7");
    let layout = Layout::new(&g).unwrap();
    let reach = frontier_bfs(&g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap();
    let expected: Vec<u64> = (0..=4).map(|d| elementary(&[1, 3, 5, 7], d)).collect();
    assert_eq!(expected, vec![1, 16, 86, 176, 105]);
    assert_eq!(reach.layers, expected);
    assert_eq!(reach.total(), 2 * 4 * 6 * 8);
    let two_bit = two_bit_bfs(&g, &layout, &Progress::hidden())
        .unwrap()
        .unwrap();
    assert_eq!(two_bit.layers, expected);
}

#[test]
fn rank_unrank_bijection() {
    for heaps in ["1,3,5,7", "5,1,5", "9,9,9,9"] {
        let g = nim(heaps);
        let mut seen = 0;
        for p in g.partitions() {
            for r in 0..g.partition_size(p) {
                let pos = g.unrank(p, Rank(r)).expect("every Nim index is a position");
                assert_eq!(pos.iter().sum::<u32>(), p.0);
                assert_eq!(g.rank(&pos), (p, Rank(r)));
                seen += 1;
            }
            assert!(g.unrank(p, Rank(g.partition_size(p))).is_none());
        }
        assert_eq!(seen, all_positions(g.heaps()).len());
    }
    assert!(nim("1,3,5,7").unrank(PartitionId(17), Rank(0)).is_none());
}

#[test]
fn notation_round_trip_and_errors() {
    let g = nim("1,3,5,7");
    for pos in all_positions(g.heaps()) {
        let pos = Heaps::new(&pos);
        let text = g.format_position(&pos);
        assert_eq!(g.parse_position(&text).unwrap(), pos);
    }
    assert_eq!(*g.parse_position(" 0, 2,5 ,7 ").unwrap(), [0, 2, 5, 7]);
    for bad in [
        "1,3,5",
        "1,3,5,7,0",
        "2,3,5,7",
        "1,3,5,8",
        "a,b,c,d",
        "",
        "1,3,-5,7",
    ] {
        match g.parse_position(bad) {
            Err(Error::BadPosition { game, .. }) => assert_eq!(game, "nim"),
            other => panic!("`{bad}` should be a bad position, got {other:?}"),
        }
    }
    let start = g.start().unwrap();
    let mut succ = Vec::new();
    g.successors(&start, &mut succ);
    assert_eq!(succ.len(), 16);
    assert_eq!(g.format_move(&start, &succ[0].0), "h1-1");
    assert_eq!(g.format_position(&succ[0].1), "0,3,5,7");
}

#[test]
fn params_through_the_registry() {
    let AnyGame::Nim(g) = open_game("nim", &raw(&[])).unwrap() else {
        panic!("nim opens as Nim");
    };
    assert_eq!(g.heaps(), &[1, 3, 5, 7]);
    assert_eq!(g.info().canonical(), "nim:heaps=1,3,5,7");
    assert!(open_game("nim", &raw(&[("heaps", "2, 2")])).is_ok());
    for bad in ["0,1", "256", "1,x", "", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"] {
        assert!(
            matches!(
                open_game("nim", &raw(&[("heaps", bad)])),
                Err(Error::BadParam { .. })
            ),
            "heaps={bad} must be refused"
        );
    }
    // 16 heaps of 255: 256^16 positions, beyond a 64-bit index.
    let huge = vec!["255"; 16].join(",");
    assert!(matches!(
        open_game("nim", &raw(&[("heaps", &huge)])),
        Err(Error::BadParam { .. })
    ));
    assert!(matches!(
        open_game("nim", &raw(&[("size", "3")])),
        Err(Error::BadParam { .. })
    ));
}
