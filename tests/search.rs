//! The search (`tbforge analyse`, `tbforge play`) against published move
//! counts and against the tablebases: a search deep enough, or one ply deep
//! over a tablebase's positions, must give the tablebase's value exactly.
//!
//! # Source: tic-tac-toe move paths of exactly n plies (games stop at a
//! line of three): 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872,
//! from the standard enumeration of its 255,168 games (1,440 end after 5
//! marks, 5,328 after 6, 47,952 after 7, 72,576 after 8, 127,872 after 9;
//! H. Bottomley, "How many Tic-Tac-Toe (noughts and crosses) games are
//! possible?"): paths(n + 1) = (paths(n) - games ended at n) x (9 - n).

use crate::common;

use common::{build_cmd, stderr, tbforge};
use std::collections::BTreeMap;
use tbforge::game::tictactoe::TicTacToe;
use tbforge::search::{perft, Limits, Search};
use tbforge::solve::{solve_game, Progress};
use tbforge::{Game, Outcome, Rank, Tablebase, Value};

#[test]
fn tictactoe_perft_matches_the_published_game_counts() {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let start = g.initial().unwrap();
    let counts: Vec<u64> = (1..=9).map(|d| perft(&g, &start, d)).collect();
    assert_eq!(
        counts,
        [9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]
    );
    assert_eq!(perft(&g, &start, 0), 1);
}

/// Full-depth search without a tablebase proves every position's value with
/// its exact length: alpha-beta with wins scored by their distance keeps
/// the quickest win and the slowest loss, as the retrograde solve does. On
/// one thread and on four sharing one table (whatever their timing, a
/// search to the end stores only exact bounds).
#[test]
fn tictactoe_search_to_the_end_equals_the_solved_values() {
    for threads in [1, 4] {
        search_to_the_end(threads);
    }
}

fn search_to_the_end(threads: usize) {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    let mut search = Search::new(&g, None, 16)
        .unwrap()
        .with_threads(threads)
        .unwrap();
    let mut checked = 0;
    for p in g.partitions() {
        let slot = solved.layout.slot(p).unwrap();
        for (r, &byte) in solved.values[slot].iter().enumerate() {
            let v = Value::from_byte(byte);
            if v.is_illegal() {
                continue;
            }
            let pos = g.unrank(p, Rank(r as u64)).unwrap();
            let limits = Limits {
                depth: Some(9),
                ..Limits::default()
            };
            let report = search.run(&pos, limits).unwrap();
            let what = format!("{} on {threads} threads", g.format_position(&pos));
            match v.outcome().unwrap() {
                Outcome::Draw => assert_eq!(report.score.eval, Some(0), "{what}"),
                o => {
                    assert_eq!(report.score.outcome, Some(o), "{what}");
                    assert_eq!(report.score.plies, v.distance(), "{what}");
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 5478);
}

/// One ply of search over a tablebase: every successor answered from it,
/// the root's score is the tablebase's own value (every legal index of a
/// Connect Four 4x4 build, whose layers hold only reached positions).
#[test]
fn one_ply_over_a_tablebase_gives_its_values() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c4");
    let o = build_cmd(
        &["connect4", "--param", "width=4", "--param", "height=4"],
        &dir,
        &[],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tb = Tablebase::open(&dir).unwrap();
    let game = tbforge::registry::open_game(&tb.manifest().game, &tb.manifest().params).unwrap();
    let tbforge::registry::AnyGame::Connect4(g) = game else {
        panic!("not connect4")
    };
    let mut search = Search::new(&g, Some(&tb), 12).unwrap();
    let (mut wins, mut losses, mut draws) = (0, 0, 0);
    for p in g.partitions() {
        // A sample of each ply: every 7th index.
        for r in (0..g.partition_size(p)).step_by(7) {
            let stored = tb.probe_stored(p, Rank(r)).unwrap();
            let Some(outcome) = stored.outcome else {
                continue;
            };
            let pos = g.unrank(p, Rank(r)).unwrap();
            let limits = Limits {
                depth: Some(1),
                search_root: true,
                ..Limits::default()
            };
            let report = search.run(&pos, limits).unwrap();
            let what = g.format_position(&pos);
            match outcome {
                Outcome::Draw => {
                    draws += 1;
                    assert_eq!(report.score.eval, Some(0), "{what}")
                }
                o => {
                    if o == Outcome::Win {
                        wins += 1
                    } else {
                        losses += 1
                    }
                    assert_eq!(report.score.outcome, Some(o), "{what}");
                    assert_eq!(report.score.plies, stored.distance, "{what}");
                }
            }
            // Not searched: the tablebase answers the root with its best moves.
            let exact = search.run(&pos, Limits::default()).unwrap();
            assert!(exact.from_tablebase || stored.distance == Some(0), "{what}");
        }
    }
    assert!(
        wins > 100 && losses > 100 && draws > 100,
        "{wins} {losses} {draws}"
    );
}

#[test]
fn analyse_and_play_on_the_command_line() {
    let o = tbforge(&["analyse", "tictactoe", "--perft", "9", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"], 127872);

    let o = tbforge(&[
        "analyse",
        "tictactoe",
        "x.o.x.o..",
        "--depth",
        "9",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // A line of three in one: proved at the first iteration, which ends the search.
    assert_eq!(v["score"]["outcome"], "win", "{v}");
    assert_eq!(v["score"]["plies"], 1, "{v}");
    assert_eq!(v["depth"], 1, "{v}");

    let o = tbforge(&["play", "tictactoe", "--depth", "9", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Perfect play from the empty board: a draw, the board filled.
    assert_eq!(v["result"], "1/2-1/2", "{v}");
    assert_eq!(v["moves"].as_array().unwrap().len(), 9, "{v}");

    // Bad input: one line naming the thing and the fix, exit 2.
    for (args, words) in [
        (&["analyse", "chess"][..], "chess"),
        (&["analyse", "pancake", "--depth", "3"][..], "puzzle"),
        (
            &["analyse", "tictactoe", "xxxxxxxxxxxx"][..],
            "xxxxxxxxxxxx",
        ),
        (&["analyse", "tictactoe", "--depth", "0"][..], "--depth"),
        (&["analyse", "tictactoe", "--time", "0"][..], "--time"),
        (
            &["analyse", "nim", "--tb", "/nonexistent/tb"][..],
            "/nonexistent/tb",
        ),
    ] {
        let o = tbforge(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(words), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
