//! The probe-only build (`cargo test --no-default-features --test probe_only`):
//! files written from values computed here, without tbforge's solver, then
//! verified (deep) and probed. Also a tiny puzzle for the puzzle reading of values.
//! # Source: the rules of tic-tac-toe; its empty board is a draw (Schaefer 2002).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use tbforge::format::{write_manifest, write_partition_file, FileEntry, Manifest, ValueEncoding};
use tbforge::game::tictactoe::{Board, TicTacToe};
use tbforge::game::{GameInfo, Params};
use tbforge::probe::{probe_text, GameTablebase, Tablebase};
use tbforge::verify::verify_dir;
use tbforge::{Game, GameKind, Outcome, PartitionId, Rank, Status, Value, Weights};

/// Negamax with the value byte's distance rules, from the rules alone.
fn negamax(g: &TicTacToe, b: &Board, memo: &mut HashMap<Board, Value>) -> Value {
    if let Some(&v) = memo.get(b) {
        return v;
    }
    let v = match g.status(b) {
        Status::Lost => Value::at_distance(0).unwrap(),
        Status::Drawn => Value::DRAW,
        _ => {
            let mark =
                if b.iter().filter(|&&c| c == 1).count() == b.iter().filter(|&&c| c == 2).count() {
                    1
                } else {
                    2
                };
            let kids: Vec<Value> = (0..9)
                .filter(|&c| b[c] == 0)
                .map(|c| {
                    let mut n = *b;
                    n[c] = mark;
                    negamax(g, &n, memo)
                })
                .collect();
            let loss = kids
                .iter()
                .filter(|k| k.outcome() == Some(Outcome::Loss))
                .filter_map(|k| k.distance())
                .min();
            if let Some(d) = loss {
                Value::at_distance(d + 1).unwrap()
            } else if kids.iter().all(|k| k.outcome() == Some(Outcome::Win)) {
                Value::at_distance(kids.iter().filter_map(|k| k.distance()).max().unwrap() + 1)
                    .unwrap()
            } else {
                Value::DRAW
            }
        }
    };
    memo.insert(*b, v);
    v
}

#[test]
fn tablebase_written_from_negamax_verifies_deep_and_probes() {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let info = g.info();
    let dir = tempfile::tempdir().unwrap();
    let mut memo = HashMap::new();
    let mut files = Vec::new();
    for p in g.partitions() {
        let values: Vec<u8> = (0..g.partition_size(p))
            .map(|r| match g.unrank(p, Rank(r)) {
                None => Value::ILLEGAL.to_byte(),
                Some(b) => negamax(&g, &b, &mut memo).to_byte(),
            })
            .collect();
        let name = g.partition_name(p);
        let path = dir.path().join(tbforge::format::file_name(&name));
        let sum = write_partition_file(&path, &info, p, ValueEncoding::Byte, &values).unwrap();
        files.push(FileEntry::new(
            info.kind,
            p,
            &name,
            &values,
            &g.weights(p),
            None,
            sum,
        ));
    }
    write_manifest(
        dir.path(),
        &Manifest::new(&info, ValueEncoding::Byte, files, None),
    )
    .unwrap();
    let report = verify_dir(dir.path(), true).unwrap();
    assert!(report.ok, "{report:#?}");
    assert!(report.positions_sampled > 5000);
    let r = probe_text(dir.path(), ".........").unwrap();
    assert_eq!(r.result.outcome, Outcome::Draw);
    assert_eq!(r.result.best_moves.len(), 9);
}

/// A one-partition puzzle: a token on squares 0..=10 moves +1 or +3 (not past
/// 10); 10 is the goal; square 6 has no moves (a dead end); index 11 is unused.
#[derive(Clone, Debug)]
struct Hop;

impl Game for Hop {
    type Position = u64;
    type Move = u64;
    fn info(&self) -> GameInfo {
        GameInfo {
            id: "hop",
            params: Params::new(),
            kind: GameKind::Puzzle,
        }
    }
    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }
    fn partition_size(&self, _: PartitionId) -> u64 {
        12
    }
    fn partition_name(&self, _: PartitionId) -> String {
        "all".into()
    }
    fn unrank(&self, _: PartitionId, r: Rank) -> Option<u64> {
        (r.0 <= 10).then_some(r.0)
    }
    fn rank(&self, pos: &u64) -> (PartitionId, Rank) {
        (PartitionId(0), Rank(*pos))
    }
    fn status(&self, pos: &u64) -> Status {
        if *pos == 10 {
            Status::Goal
        } else {
            Status::Ongoing
        }
    }
    fn successors(&self, pos: &u64, out: &mut Vec<(u64, u64)>) {
        if *pos == 6 {
            return;
        }
        for step in [1, 3] {
            if pos + step <= 10 {
                out.push((step, pos + step));
            }
        }
    }
    fn start(&self) -> Option<u64> {
        Some(0)
    }
    fn parse_position(&self, text: &str) -> tbforge::Result<u64> {
        Ok(text.parse().unwrap())
    }
    fn format_position(&self, pos: &u64) -> String {
        pos.to_string()
    }
    fn format_move(&self, _: &u64, mv: &u64) -> String {
        format!("+{mv}")
    }
}

#[test]
fn puzzle_values_read_as_goal_distances() {
    // Moves to the goal, worked out by hand: 9 -> 10 (1); 8 -> 9 (2); 7 -> 10 (1);
    // 6 dead end; 5 -> 8 (3, +1 reaches the dead end); 4 -> 7 (2); 3 -> 4 (3);
    // 2 -> 3 or 5 (4); 1 -> 4 (3); 0 -> 1 or 3 (4).
    let want: [Option<u32>; 11] = [
        Some(4),
        Some(3),
        Some(4),
        Some(3),
        Some(2),
        Some(3),
        None,
        Some(1),
        Some(2),
        Some(1),
        Some(0),
    ];
    let mut values: Vec<u8> = want
        .iter()
        .map(|d| {
            d.map_or(Value::DRAW, |d| Value::at_distance(d).unwrap())
                .to_byte()
        })
        .collect();
    values.push(0);
    let dir = tempfile::tempdir().unwrap();
    let entry = write_hop(dir.path(), ValueEncoding::Byte, &values);
    // Puzzles: wins = positions that reach the goal, draws = those that cannot, no losses.
    assert_eq!(
        (entry.wins, entry.draws, entry.losses, entry.illegal),
        (10, 1, 0, 1)
    );
    assert_eq!(entry.longest_win, Some(4));

    let gtb = GameTablebase::new(Hop, Tablebase::open(dir.path()).unwrap()).unwrap();
    for (pos, d) in want.iter().enumerate() {
        let r = gtb.probe(&(pos as u64)).unwrap();
        match d {
            Some(d) => assert_eq!((r.outcome, r.distance), (Outcome::Win, Some(*d)), "{pos}"),
            None => assert_eq!((r.outcome, r.distance), (Outcome::Draw, None), "{pos}"),
        }
    }
    // Best moves go one step closer: from 0 both +1 (to 1, 3 left) and +3 (to 3, 3 left).
    assert_eq!(gtb.probe(&0).unwrap().best_moves, ["+1", "+3"]);
    // From 5, +1 leads to the dead end.
    let r = gtb.probe(&5).unwrap();
    assert_eq!(r.best_moves, ["+3"]);
    assert_eq!(r.moves[0].outcome, Outcome::Draw);
    assert_eq!(
        (r.moves[1].outcome, r.moves[1].distance),
        (Outcome::Win, Some(3))
    );
    assert!(gtb.probe(&10).unwrap().best_moves.is_empty());
    assert!(gtb.probe(&6).unwrap().best_moves.is_empty());
}

/// Writes `values` of [`Hop`]'s one partition as `dir/all.tbf` and its
/// manifest; returns the file's manifest entry.
fn write_hop(dir: &Path, encoding: ValueEncoding, values: &[u8]) -> FileEntry {
    let info = Hop.info();
    let sum = write_partition_file(
        &dir.join("all.tbf"),
        &info,
        PartitionId(0),
        encoding,
        values,
    )
    .unwrap();
    let entry = FileEntry::new(
        GameKind::Puzzle,
        PartitionId(0),
        "all",
        values,
        &Weights::one(),
        None,
        sum,
    );
    let manifest = Manifest::new(&info, encoding, vec![entry.clone()], None);
    write_manifest(dir, &manifest).unwrap();
    entry
}

#[test]
fn puzzle_wdl2_reads_as_reachable_or_not() {
    let mut values: Vec<u8> = [4u32, 3, 4, 3, 2, 3, 99, 1, 2, 1, 0]
        .iter()
        .map(|&d| {
            if d == 99 {
                Value::DRAW
            } else {
                Value::at_distance(d).unwrap()
            }
            .to_byte()
        })
        .collect();
    values.push(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.tbf");
    write_hop(dir.path(), ValueEncoding::Wdl2, &values);
    // Distance parity means nothing in a puzzle: every solvable square reads as a win.
    let codes = tbforge::format::TableFile::open_read(&path)
        .unwrap()
        .read_all_codes()
        .unwrap();
    assert_eq!(codes, [2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 0]);
    let gtb = GameTablebase::new(Hop, Tablebase::open(dir.path()).unwrap()).unwrap();
    let r = gtb.probe(&5).unwrap();
    assert_eq!((r.outcome, r.distance), (Outcome::Win, None));
    assert_eq!(r.best_moves, ["+3"]);
    assert_eq!(gtb.probe(&6).unwrap().outcome, Outcome::Draw);
}
