//! Tic-tac-toe against its published numbers.
//! # Source: 5,478 legal positions reachable from the empty board (OEIS A008907 sums; seed README);
//! the empty board is a draw under perfect play (well known, e.g. Schaefer 2002).
use std::collections::BTreeMap;
use tbforge::game::tictactoe::TicTacToe;
use tbforge::solve::{solve_game, Progress};
use tbforge::{Game, Outcome, Value};

#[test]
fn reachable_and_start_value() {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    let reach = solved.reachable.as_ref().unwrap();
    assert_eq!(reach.total(), 5478);
    let (p, r) = g.rank(&g.start().unwrap());
    let slot = solved.layout.slot(p).unwrap();
    let v = Value::from_byte(solved.values[slot][r.0 as usize]);
    assert_eq!(v.outcome(), Some(Outcome::Draw));
}
