//! Search on checkers (`tbforge analyse checkers`, `tbforge play checkers`):
//! move generation against published perft counts, and search against the
//! databases.
//!
//! # Source: perft from the opening position, 1..8 plies: 7, 49, 302, 1469,
//! 7361, 36768, 179740, 845931 (A. Bik, "perft for 8x8 checkers",
//! TalkChess, 8 May 2009; captures that differ only in their order counted
//! once per path, which English draughts' unique jump paths make moot).

use crate::common;

use common::{build_cmd, stderr, tbforge};
use std::collections::BTreeMap;
use tbforge::game::checkers::Checkers;
use tbforge::search::{perft, Limits, Search};
use tbforge::{Game, Outcome, Rank, Tablebase};

#[test]
fn perft_from_the_opening_matches_the_published_counts() {
    let g = Checkers::from_params(&BTreeMap::new()).unwrap();
    let start = g.initial().expect("checkers names its opening");
    let counts: Vec<u64> = (1..=8).map(|d| perft(&g, &start, d)).collect();
    assert_eq!(counts, [7, 49, 302, 1469, 7361, 36768, 179740, 845931]);

    let o = tbforge(&["analyse", "checkers", "--perft", "5", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"], 7361, "{v}");
}

/// Every sampled position of the 3-piece databases searched one ply deep
/// (its successors answered by the databases, captures into the 2-piece
/// ones included) scores the databases' own value; and self-play with the
/// databases from a won position lasts exactly its distance.
#[test]
fn search_over_the_databases_gives_their_values() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tb");
    let o = build_cmd(&["checkers", "--param", "pieces=3"], &dir, &[])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tb = Tablebase::open(&dir).unwrap();
    let game = tbforge::registry::open_game(&tb.manifest().game, &tb.manifest().params).unwrap();
    let tbforge::registry::AnyGame::Checkers(g) = game else {
        panic!("not checkers")
    };
    let mut search = Search::new(&g, Some(&tb), 12).unwrap();
    let mut seen = [0u32; 3];
    let mut longest_win: Option<(String, u32)> = None;
    for p in g.partitions() {
        for r in (0..g.partition_size(p)).step_by(97) {
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
                    seen[1] += 1;
                    assert_eq!(report.score.eval, Some(0), "{what}");
                }
                o => {
                    seen[if o == Outcome::Win { 0 } else { 2 }] += 1;
                    assert_eq!(report.score.outcome, Some(o), "{what}");
                    assert_eq!(report.score.plies, stored.distance, "{what}");
                    let d = stored.distance.unwrap();
                    if o == Outcome::Win && longest_win.as_ref().is_none_or(|(_, l)| d > *l) {
                        longest_win = Some((what, d));
                    }
                }
            }
        }
    }
    assert!(
        seen.iter().all(|&n| n > 20),
        "wins, draws, losses sampled: {seen:?}"
    );

    // Perfect play on both sides: the winner takes the quickest win, the
    // loser the slowest loss, so the game lasts the stored distance.
    let (fen, distance) = longest_win.unwrap();
    let o = tbforge(&[
        "play",
        "checkers",
        &fen,
        "--tb",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"], "1-0", "{v}");
    assert_eq!(v["moves"].as_array().unwrap().len() as u32, distance, "{v}");

    // The engine's score from the opening: a search, not the databases.
    let o = tbforge(&[
        "analyse",
        "checkers",
        "--depth",
        "6",
        "--tb",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["depth"], 6, "{v}");
    assert_eq!(v["pv"].as_array().unwrap().len(), 6, "{v}");
    assert!(v["nodes"].as_u64().unwrap() > 100, "{v}");
}

/// Threads sharing one table: from the opening, a legal first move with an
/// evaluation at the depth asked, on one thread and on four (beyond proved
/// results the move may differ with the threads' timing; tests/search.rs
/// checks proved values on four threads).
#[test]
fn threads_give_the_same_proved_score_and_a_legal_move() {
    let run = |threads: &str, args: &[&str]| {
        let mut all = vec!["analyse", "checkers", "--threads", threads, "--json"];
        all.extend_from_slice(args);
        let o = tbforge(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let opening: Vec<serde_json::Value> = ["1", "4"]
        .iter()
        .map(|t| run(t, &["--depth", "9"]))
        .collect();
    let legal = ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"];
    for v in &opening {
        assert!(legal.contains(&v["best_move"].as_str().unwrap()), "{v}");
        assert!(v["score"]["eval"].is_i64(), "{v}");
        assert_eq!(v["depth"], 9, "{v}");
    }
}
