//! The checkers frontier search (`tbforge analyse checkers --gpu`), through
//! its CPU twin, which runs the kernels' steps: full-width negamax must give
//! the alpha-beta search's value at the same depth, the same best move where
//! it is unique, and as many leaves as perft counts move paths.
//!
//! # Source: perft from the opening position, 1..8 plies: 7, 49, 302, 1469,
//! 7361, 36768, 179740, 845931 (A. Bik, "perft for 8x8 checkers",
//! TalkChess, 8 May 2009).

use crate::common;

use common::{stderr, tbforge};
use std::collections::BTreeMap;
use tbforge::game::checkers::Checkers;
use tbforge::game::{Device, FrontierSearch, Game};
use tbforge::search::{perft, Limits, Search, WIN};

fn game() -> Checkers {
    Checkers::from_params(&BTreeMap::new()).unwrap()
}

/// The frontier search on the CPU: the kernels' twin.
fn twin() -> Box<dyn FrontierSearch<<Checkers as Game>::Position>> {
    game()
        .frontier(&Device::Cpu)
        .unwrap()
        .expect("checkers has a frontier search")
}

/// The alpha-beta search's score and best move at `depth` (one thread,
/// a table large enough that nothing is overwritten at these depths).
fn alpha_beta(g: &Checkers, pos: &<Checkers as Game>::Position, depth: u32) -> (i32, String) {
    let mut search = Search::new(g, None, 20).unwrap();
    let r = search
        .run(
            pos,
            Limits {
                depth: Some(depth),
                ..Limits::default()
            },
        )
        .unwrap();
    let score = match (r.score.eval, r.score.outcome, r.score.plies) {
        (Some(e), _, _) => e,
        (None, Some(tbforge::Outcome::Win), Some(n)) => WIN - n as i32,
        (None, Some(tbforge::Outcome::Loss), Some(n)) => -(WIN - n as i32),
        other => panic!("unexpected score {other:?}"),
    };
    (score, r.best_move.unwrap_or_default())
}

fn check(g: &Checkers, fen: Option<&str>, depths: std::ops::RangeInclusive<u32>) {
    let pos = match fen {
        Some(f) => g.parse_position(f).unwrap(),
        None => g.initial().unwrap(),
    };
    let mut moves = Vec::new();
    g.successors(&pos, &mut moves);
    for depth in depths {
        let f = twin()
            .search(std::slice::from_ref(&pos), depth, WIN)
            .unwrap();
        let (score, best) = alpha_beta(g, &pos, depth);
        let what = format!("{} depth {depth}", g.format_position(&pos));
        assert_eq!(f.values, [score], "{what}");
        assert_eq!(f.levels.len(), depth as usize + 1, "{what}");
        assert!(
            !f.line.is_empty() && f.line.len() <= depth as usize,
            "{what}"
        );
        if f.best_moves == 1 {
            let mine = g.format_move(&pos, &moves[f.line[0] as usize].0);
            assert_eq!(mine, best, "{what}: the unique best move");
        }
    }
}

#[test]
fn the_opening_to_depth_6_gives_the_searchs_values() {
    check(&game(), None, 1..=6);
}

#[test]
fn positions_with_kings_and_captures_give_the_searchs_values() {
    let g = game();
    for fen in [
        // Kings against men: repetitions possible from ply 4 on.
        "W:WK18,K25,22:B1,2,K12,14",
        // A capture available at once, multi-jumps beyond.
        "B:W9,10,18,19,26,27:B1,5,6,15",
        // Few kings: long shuffles, every line's repetitions scored a draw.
        "W:WK18:BK1,K2",
        "B:WK10,K30:BK27,5",
    ] {
        check(&g, Some(fen), 1..=6);
    }
}

#[test]
fn leaves_are_perft_counts_from_the_opening() {
    let g = game();
    let start = g.initial().unwrap();
    for depth in 1..=8u32 {
        let f = twin()
            .search(std::slice::from_ref(&start), depth, WIN)
            .unwrap();
        // No line from the opening repeats a position this early (no kings),
        // so every level is a perft count.
        let levels: Vec<u64> = (0..=depth).map(|d| perft(&g, &start, d)).collect();
        assert_eq!(f.levels, levels, "depth {depth}");
    }
    let f = twin().search(std::slice::from_ref(&start), 8, WIN).unwrap();
    assert_eq!(f.leaves(), 845_931);
}

#[test]
fn many_roots_are_searched_as_each_alone() {
    let g = game();
    let fens = ["W:WK18,K25,22:B1,2,K12,14", "B:W9,10,18,19,26,27:B1,5,6,15"];
    let roots: Vec<_> = fens.iter().map(|f| g.parse_position(f).unwrap()).collect();
    let together = twin().search(&roots, 4, WIN).unwrap();
    for (i, r) in roots.iter().enumerate() {
        let alone = twin().search(std::slice::from_ref(r), 4, WIN).unwrap();
        assert_eq!(together.values[i], alone.values[0], "{}", fens[i]);
    }
}

#[test]
fn analyse_frontier_on_the_cpu_prints_the_searchs_value() {
    let o = tbforge(&[
        "analyse",
        "checkers",
        "--frontier",
        "cpu",
        "--depth",
        "5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = game();
    let (score, _) = alpha_beta(&g, &g.initial().unwrap(), 5);
    assert_eq!(v["score"]["eval"], score, "{v}");
    assert_eq!(v["leaves"], 7361, "{v}");
}

#[test]
fn bench_search_dry_run_agrees_everywhere() {
    let o = tbforge(&[
        "bench",
        "search",
        "checkers",
        "--device",
        "cpu",
        "--min-depth",
        "1",
        "--max-depth",
        "5",
        "--time",
        "0.5",
        "--samples",
        "300",
        "--check-depth",
        "3",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["all_agree"], true, "{v}");
    assert_eq!(v["random"]["value_mismatches"], 0, "{v}");
    let depths = v["depths"].as_array().unwrap();
    assert_eq!(depths.len(), 5, "{v}");
    assert_eq!(depths[4]["leaves"], 7361, "{v}");
    assert!(
        v["in_time"]["frontier"]["depth"].as_u64().unwrap() >= 1,
        "{v}"
    );
}

#[test]
fn analyse_gpu_without_a_gpu_says_what_to_do() {
    let o = tbforge(&["analyse", "checkers", "--gpu", "--depth", "4", "--json"]);
    if o.status.success() {
        // A machine with a GPU: the search ran.
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["leaves"], 1469, "{v}");
        return;
    }
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--frontier cpu"), "{err}");
}
