//! The probe API against an independent game-tree search of tic-tac-toe:
//! every legal position's outcome, distance and best moves.
//! # Source: the rules of tic-tac-toe; the empty board is a draw (Schaefer 2002)
//! and 5,478 positions are reachable (OEIS A008907 summed), checked in format_roundtrip.
#![cfg(feature = "build")]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tbforge::format::{read_manifest, write_manifest, FormatError, ValueEncoding};
use tbforge::game::tictactoe::{Board, TicTacToe};
use tbforge::probe::{probe_text, GameTablebase, OpenOptions, Tablebase};
use tbforge::solve::write_solved;
use tbforge::solve::{solve_game, Progress};
use tbforge::{Error, Game, Outcome, PartitionId, Rank, Value};

/// Three in a row on the 3x3 board, cells numbered row by row: (start, step)
/// of the rows, the columns and the two diagonals.
fn three_in_a_row(b: &Board) -> bool {
    let lines = (0..3)
        .map(|r| (3 * r, 1))
        .chain((0..3).map(|c| (c, 3)))
        .chain([(0, 4), (2, 2)]);
    lines
        .map(|(start, step)| [start, start + step, start + 2 * step])
        .any(|l| b[l[0]] != 0 && b[l[0]] == b[l[1]] && b[l[1]] == b[l[2]])
}

/// (outcome for the side to move, plies to the end) by plain negamax with the
/// distance rules of the value byte: win as fast as possible, lose as slowly
/// as possible. Written from the rules, sharing nothing with tbforge's solver.
fn negamax(b: Board, memo: &mut HashMap<Board, (Outcome, u32)>) -> (Outcome, u32) {
    if let Some(&v) = memo.get(&b) {
        return v;
    }
    let v = if three_in_a_row(&b) {
        (Outcome::Loss, 0)
    } else if b.iter().all(|&c| c != 0) {
        (Outcome::Draw, 0)
    } else {
        let mark = if b.iter().filter(|&&c| c == 1).count() == b.iter().filter(|&&c| c == 2).count()
        {
            1
        } else {
            2
        };
        let kids: Vec<(Outcome, u32)> = (0..9)
            .filter(|&c| b[c] == 0)
            .map(|c| {
                let mut n = b;
                n[c] = mark;
                negamax(n, memo)
            })
            .collect();
        if let Some(d) = kids
            .iter()
            .filter(|k| k.0 == Outcome::Loss)
            .map(|k| k.1)
            .min()
        {
            (Outcome::Win, d + 1)
        } else if kids.iter().all(|k| k.0 == Outcome::Win) {
            (Outcome::Loss, kids.iter().map(|k| k.1).max().unwrap() + 1)
        } else {
            (Outcome::Draw, 0)
        }
    };
    memo.insert(b, v);
    v
}

fn legal_boards(g: &TicTacToe) -> Vec<Board> {
    (0..19683u32)
        .map(|mut n| {
            let mut b = [0u8; 9];
            for c in &mut b {
                *c = (n % 3) as u8;
                n /= 3;
            }
            b
        })
        .filter(|b| g.parse_position(&g.format_position(b)).is_ok())
        .collect()
}

fn built(encoding: ValueEncoding) -> (TicTacToe, tempfile::TempDir) {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let s = solve_game(&g, &Progress::hidden()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_solved(dir.path(), &g, &s, encoding).unwrap();
    (g, dir)
}

fn cell_name(c: usize) -> String {
    format!("{}{}", (b'a' + (c % 3) as u8) as char, c / 3 + 1)
}

#[test]
fn every_position_and_its_best_moves_match_negamax() {
    let (g, dir) = built(ValueEncoding::Byte);
    let gtb = GameTablebase::new(g.clone(), Tablebase::open(dir.path()).unwrap()).unwrap();
    let mut memo = HashMap::new();
    let boards = legal_boards(&g);
    assert!(boards.len() >= 5478, "{}", boards.len());
    for b in boards {
        let (outcome, dist) = negamax(b, &mut memo);
        let r = gtb.probe(&b).unwrap();
        assert_eq!(r.outcome, outcome, "{}", g.format_position(&b));
        let want_distance = (outcome != Outcome::Draw).then_some(dist);
        assert_eq!(r.distance, want_distance, "{}", g.format_position(&b));
        assert_eq!(r.value.unwrap().outcome(), Some(outcome));

        // Best moves, from negamax: the children whose value is the optimal one.
        let terminal = g.status(&b) != tbforge::Status::Ongoing;
        let mut want = Vec::new();
        if !terminal {
            let mark =
                if b.iter().filter(|&&c| c == 1).count() == b.iter().filter(|&&c| c == 2).count() {
                    1
                } else {
                    2
                };
            for c in (0..9).filter(|&c| b[c] == 0) {
                let mut n = b;
                n[c] = mark;
                let (o, d) = negamax(n, &mut memo);
                let good = match outcome {
                    Outcome::Win => o == Outcome::Loss && d + 1 == dist,
                    Outcome::Loss => o == Outcome::Win && d + 1 == dist,
                    Outcome::Draw => o == Outcome::Draw,
                };
                if good {
                    want.push(cell_name(c));
                }
            }
            assert_eq!(r.moves.len(), b.iter().filter(|&&c| c == 0).count());
        } else {
            assert!(r.moves.is_empty());
        }
        assert_eq!(r.best_moves, want, "{}", g.format_position(&b));
        assert_eq!(gtb.best_moves(&b).unwrap().len(), want.len());
    }
}

#[test]
fn known_positions_through_the_text_api() {
    let (_, dir) = built(ValueEncoding::Byte);
    // X in a corner, O on an adjacent edge: X wins (standard tic-tac-toe theory).
    let r = probe_text(dir.path(), "xo.......").unwrap();
    assert_eq!(r.result.outcome, Outcome::Win);
    assert_eq!(r.partition, PartitionId(2));
    // X completes the top row with c1.
    let r = probe_text(dir.path(), "xx.oo....").unwrap();
    assert_eq!(
        (r.result.outcome, r.result.distance),
        (Outcome::Win, Some(1))
    );
    assert_eq!(r.result.best_moves, ["c1"]);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["outcome"], "win");
    assert_eq!(json["distance"], 1);
    assert_eq!(json["best_moves"][0], "c1");
    assert!(r.to_text().contains("win in 1"));
    // O has just completed a line: lost for X, no moves.
    let r = probe_text(dir.path(), "xx.ooo..x").unwrap();
    assert_eq!(
        (r.result.outcome, r.result.distance),
        (Outcome::Loss, Some(0))
    );
    assert!(r.result.best_moves.is_empty());

    match probe_text(dir.path(), "xxxxxxxxx") {
        Err(Error::BadPosition { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn shared_across_threads_with_a_tiny_cache() {
    let (g, dir) = built(ValueEncoding::Byte);
    let tb = Arc::new(Tablebase::open_with(dir.path(), OpenOptions { cache_blocks: 3 }).unwrap());
    let reference = Tablebase::open(dir.path()).unwrap();
    let parts = g.partitions();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let tb = Arc::clone(&tb);
            let parts = parts.clone();
            let g = g.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for round in 0..3 {
                    for &p in parts.iter().rev().skip((t + round) % 3) {
                        for r in 0..g.partition_size(p) {
                            seen.push((p, r, tb.probe_value(p, Rank(r)).unwrap()));
                        }
                    }
                    assert!(tb.cached_blocks() <= 3);
                }
                seen
            })
        })
        .collect();
    for h in handles {
        for (p, r, v) in h.join().unwrap() {
            assert_eq!(v, reference.probe_value(p, Rank(r)).unwrap());
        }
    }
    assert!(tb.cached_blocks() <= 3);
}

#[test]
fn mapped_reads_agree() {
    let (g, dir) = built(ValueEncoding::Byte);
    let read = Tablebase::open(dir.path()).unwrap();
    // SAFETY: the temporary directory is ours; nothing modifies its files while mapped.
    let mapped = unsafe { Tablebase::open_mapped(dir.path(), OpenOptions::default()) }.unwrap();
    for p in g.partitions() {
        for r in 0..g.partition_size(p) {
            assert_eq!(
                read.probe_value(p, Rank(r)).unwrap(),
                mapped.probe_value(p, Rank(r)).unwrap()
            );
        }
    }
}

#[test]
fn errors_name_the_problem() {
    let (g, dir) = built(ValueEncoding::Byte);
    let tb = Tablebase::open(dir.path()).unwrap();
    match tb.probe_value(PartitionId(4), Rank(1 << 40)) {
        Err(FormatError::RankOutOfRange { .. }) => {}
        other => panic!("{other:?}"),
    }
    match tb.probe_value(PartitionId(77), Rank(0)) {
        Err(FormatError::NotInTablebase { partition }) => assert_eq!(partition, PartitionId(77)),
        other => panic!("{other:?}"),
    }
    // Illegal indices read back as the illegal value at the raw level...
    let illegal = (0..g.partition_size(PartitionId(9)))
        .find(|&r| g.unrank(PartitionId(9), Rank(r)).is_none())
        .unwrap();
    assert_eq!(
        tb.probe_value(PartitionId(9), Rank(illegal)).unwrap(),
        Value::ILLEGAL
    );

    // A tablebase missing a partition: positions there, or moving there, are errors.
    let mut m = read_manifest(dir.path()).unwrap();
    m.files.retain(|f| f.partition != PartitionId(5));
    write_manifest(dir.path(), &m).unwrap();
    match probe_text(dir.path(), "xx.oo....") {
        Err(Error::Format(FormatError::NotInTablebase { partition })) => {
            assert_eq!(partition, PartitionId(5))
        }
        other => panic!("{other:?}"),
    }
    assert!(!tbforge::verify::verify_dir(dir.path(), false).unwrap().ok);

    // Another game's parameters: refused before any probe.
    let (_, dir) = built(ValueEncoding::Byte);
    let mut m = read_manifest(dir.path()).unwrap();
    m.param_hash = "0000000000000001".into();
    write_manifest(dir.path(), &m).unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    assert!(matches!(
        GameTablebase::new(g.clone(), tb),
        Err(FormatError::Mismatch { .. })
    ));
    let tb = Tablebase::open(dir.path()).unwrap();
    match tb.probe_value(PartitionId(0), Rank(0)) {
        Err(FormatError::Mismatch { file, message }) => {
            assert_eq!(file, "marks0.tbf");
            assert!(message.contains("parameter hash"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // No tablebase at all.
    let empty = tempfile::tempdir().unwrap();
    match Tablebase::open(empty.path()) {
        Err(FormatError::Manifest { message, .. }) => assert!(message.contains("not found")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wdl_tablebase_best_moves_keep_the_outcome() {
    let (g, dir) = built(ValueEncoding::Wdl2);
    let gtb = GameTablebase::new(g.clone(), Tablebase::open(dir.path()).unwrap()).unwrap();
    let mut memo = HashMap::new();
    for b in legal_boards(&g) {
        let (outcome, _) = negamax(b, &mut memo);
        let r = gtb.probe(&b).unwrap();
        assert_eq!((r.outcome, r.distance, r.value), (outcome, None, None));
        for m in &r.moves {
            let keeps = r.best_moves.contains(&m.mv);
            assert_eq!(
                keeps,
                m.outcome == outcome,
                "{} {}",
                g.format_position(&b),
                m.mv
            );
        }
    }
}
