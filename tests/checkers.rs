//! Checkers (English draughts): position counts against the published table,
//! move generation by hand, notation, the index, a solved 3-piece set checked
//! against its successors and against positions from the checkers
//! literature, and the command line (build, verify --deep, probe, info,
//! memory-limited build, --from, errors).

use crate::common;

use common::{assert_same, build_cmd, contents, solved_value, stderr, tbforge};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use tbforge::format::TableFile;
use tbforge::game::checkers::Checkers;
use tbforge::solve::{solve_game, Progress, SolvedGame};
use tbforge::{Game, Outcome, Rank, Status, Value};

type Pos = <Checkers as Game>::Position;

/// Positions with 1..=6 pieces on the board, side to move not counted.
///
/// Source: J. Schaeffer, N. Burch, Y. Björnsson, A. Kishimoto, M. Müller,
/// R. Lake, P. Lu, S. Sutphen, "Checkers Is Solved", Science 317 (2007), the
/// table of the number of positions per number of pieces (reproduced in OEIS
/// A055213, "Number of n-piece positions at checkers", which cites it, and
/// recomputed by M. VandeWettering, "Total number of checkers positions",
/// brainwagon.org, 2008). Men never stand on their crowning row; a side may
/// have no pieces (1 piece: 28 + 32 squares for a black man or king, the
/// same for white: 120).
const PUBLISHED: [u64; 6] = [120, 6_972, 261_224, 7_092_774, 148_688_232, 2_503_611_964];

fn c(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
}

/// The count written out apart from the index: black men on squares 1..28,
/// white men on 5..32 (they share 5..28), then the kings anywhere left.
fn formula(n: u64) -> u128 {
    let mut total = 0;
    for a in 0..=n {
        for cm in 0..=n - a {
            let mut men = 0;
            for i in 0..=a.min(4) {
                for j in 0..=cm.min(4) {
                    men += c(4, i) * c(24, a - i) * c(4, j) * c(24 - (a - i), cm - j);
                }
            }
            let kings = n - a - cm;
            for b in 0..=kings {
                let d = kings - b;
                if a + b <= 12 && cm + d <= 12 {
                    total += men * c(32 - a - cm, b) * c(32 - a - cm - b, d);
                }
            }
        }
    }
    total
}

#[test]
fn positions_per_piece_count_match_the_published_table() {
    for (n, &expected) in (1..).zip(&PUBLISHED) {
        assert_eq!(formula(n), u128::from(expected), "formula, {n} pieces");
    }
    // The index: its slices' sizes add up to the same numbers (every index
    // is a position, so a build's manifest counts them too).
    let game = Checkers::with_pieces(6).unwrap();
    let counts = game.positions_by_pieces();
    let expected: Vec<(u32, u64)> = (1..).zip(PUBLISHED).collect();
    assert_eq!(counts, expected);
}

// ---------------------------------------------------------------------------
// Moves.

fn game(pieces: u32) -> Checkers {
    Checkers::with_pieces(pieces).unwrap()
}

fn moves(g: &Checkers, fen: &str) -> Vec<String> {
    let pos = g.parse_position(fen).unwrap();
    let mut out = Vec::new();
    g.successors(&pos, &mut out);
    let mut v: Vec<String> = out.iter().map(|(m, _)| g.format_move(&pos, m)).collect();
    v.sort();
    v
}

/// The position after the move written `mv`.
fn play(g: &Checkers, pos: &Pos, mv: &str) -> Pos {
    let mut out = Vec::new();
    g.successors(pos, &mut out);
    out.into_iter()
        .find(|(m, _)| g.format_move(pos, m) == mv)
        .unwrap_or_else(|| panic!("{mv} is not legal in {}", g.format_position(pos)))
        .1
}

#[test]
fn captures_are_mandatory() {
    let g = game(4);
    // Black could step 9-13, 9-14... but 14x23 is there, so it must be taken.
    assert_eq!(moves(&g, "B:W18:B9,14"), ["14x23"]);
    // The same, board turned and colours swapped: white to move.
    assert_eq!(moves(&g, "W:W19,24:B15"), ["19x10"]);
    // Without a capture, every step.
    assert_eq!(moves(&g, "B:W27:B9,14"), ["14-17", "14-18", "9-13"]);
}

#[test]
fn a_capture_goes_on_while_jumps_remain() {
    let g = game(4);
    assert_eq!(moves(&g, "B:W6,15:B1"), ["1x10x19"]);
    // Two ways on from 10: two moves, either may be chosen.
    assert_eq!(moves(&g, "B:W6,14,15:B1"), ["1x10x17", "1x10x19"]);
    // A white king's double jump.
    assert_eq!(moves(&g, "W:WK32:B19,27"), ["32x23x16"]);
}

#[test]
fn crowning_ends_the_move() {
    let g = game(4);
    // 22x31 crowns; the new king could jump 27 from 31, but the move ends.
    assert_eq!(moves(&g, "B:W26,27:B22"), ["22x31"]);
    let pos = g.parse_position("B:W26,27:B22").unwrap();
    assert_eq!(g.format_position(&play(&g, &pos, "22x31")), "W:W27:BK31");
    // A plain step onto the far row crowns too; white crowns on 1..4.
    let pos = g.parse_position("W:W6:B20").unwrap();
    assert_eq!(g.format_position(&play(&g, &pos, "6-1")), "B:WK1:B20");
}

#[test]
fn kings_capture_backwards_and_men_do_not() {
    let g = game(4);
    assert_eq!(moves(&g, "B:WK10,K18:BK23"), ["23x14x7"]);
    assert_eq!(moves(&g, "B:W18:B23"), ["23-26", "23-27"]);
}

#[test]
fn no_legal_move_loses() {
    let g = game(4);
    // Black's man on 28 is blocked by the king on 32 (the jump leaves the board).
    let pos = g.parse_position("B:WK32:B28").unwrap();
    assert_eq!(g.status(&pos), Status::Lost);
    // No pieces at all: lost.
    let pos = g.parse_position("B:WK32:B").unwrap();
    assert_eq!(g.status(&pos), Status::Lost);
    let pos = g.parse_position("W:WK32:B28").unwrap();
    assert_eq!(g.status(&pos), Status::Ongoing);
}

// ---------------------------------------------------------------------------
// Notation and index.

#[test]
fn notation_round_trips_for_every_three_piece_position() {
    let g = game(3);
    for p in g.partitions() {
        (0..g.partition_size(p)).into_par_iter().for_each(|r| {
            let pos = g.unrank(p, Rank(r)).unwrap();
            for side in [pos, flipped(&g, &pos)] {
                let text = g.format_position(&side);
                let back = g.parse_position(&text).unwrap();
                assert_eq!(back, side, "{text}");
                assert_eq!(g.format_position(&back), text);
                assert_eq!(g.rank(&back), (p, Rank(r)), "{text}");
            }
        });
    }
}

/// The same game state written with the other colour to move: board turned
/// half round (square n to 33 - n), colours swapped.
fn flipped(g: &Checkers, pos: &Pos) -> Pos {
    let text = g.format_position(pos);
    let turn = |list: &str| -> String {
        list.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| match s.strip_prefix('K') {
                Some(n) => format!("K{}", 33 - n.parse::<u32>().unwrap()),
                None => (33 - s.parse::<u32>().unwrap()).to_string(),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let parts: Vec<&str> = text.split(':').collect();
    let side = if parts[0] == "W" { "B" } else { "W" };
    // W list becomes black's, B list white's.
    let other = format!("{side}:W{}:B{}", turn(&parts[2][1..]), turn(&parts[1][1..]));
    let back = g.parse_position(&other).unwrap();
    assert_eq!(back.white_to_move, side == "W");
    back
}

#[test]
fn rank_unrank_is_a_bijection_on_sampled_four_piece_partitions() {
    let g = game(4);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    for p in g.partitions() {
        let size = g.partition_size(p);
        let ranks: Vec<u64> = if size <= 4096 {
            (0..size).collect()
        } else {
            (0..200).map(|_| next(size)).chain([0, size - 1]).collect()
        };
        let mut seen = BTreeSet::new();
        for r in ranks {
            let pos = g.unrank(p, Rank(r)).unwrap();
            assert_eq!(g.rank(&pos), (p, Rank(r)), "{}", g.partition_name(p));
            seen.insert(g.format_position(&pos));
        }
        if size <= 4096 {
            assert_eq!(seen.len() as u64, size, "{}", g.partition_name(p));
        }
        assert!(g.unrank(p, Rank(size)).is_none());
    }
}

// ---------------------------------------------------------------------------
// Solving.

/// The value a position must have given its successors' values (written out
/// apart from the solver's own combination).
fn expected_value(g: &Checkers, solved: &SolvedGame, pos: &Pos) -> Value {
    if g.status(pos) == Status::Lost {
        return Value::at_distance(0).unwrap();
    }
    let mut succ = Vec::new();
    g.successors(pos, &mut succ);
    let mut fastest_win: Option<u32> = None;
    let mut slowest_loss: Option<u32> = Some(0);
    for (_, s) in &succ {
        let v = solved_value(g, solved, s);
        match (v.outcome().expect("successor is legal"), v.distance()) {
            (Outcome::Loss, Some(d)) => {
                fastest_win = Some(fastest_win.map_or(d + 1, |w| w.min(d + 1)))
            }
            (Outcome::Win, Some(d)) => slowest_loss = slowest_loss.map(|l| l.max(d + 1)),
            _ => slowest_loss = None,
        }
    }
    match (fastest_win, slowest_loss) {
        (Some(w), _) => Value::at_distance(w).unwrap(),
        (None, Some(l)) => Value::at_distance(l).unwrap(),
        (None, None) => Value::DRAW,
    }
}

fn value_of(g: &Checkers, solved: &SolvedGame, fen: &str) -> Value {
    solved_value(g, solved, &g.parse_position(fen).unwrap())
}

fn best_moves(g: &Checkers, solved: &SolvedGame, pos: &Pos) -> Vec<String> {
    let here = solved_value(g, solved, pos);
    let mut succ = Vec::new();
    g.successors(pos, &mut succ);
    let mut out: Vec<String> = succ
        .iter()
        .filter(|(_, s)| {
            let v = solved_value(g, solved, s);
            match here.outcome() {
                Some(Outcome::Draw) => v.outcome() == Some(Outcome::Draw),
                _ => {
                    v.distance().map(|d| d + 1) == here.distance() && v.outcome() != here.outcome()
                }
            }
        })
        .map(|(m, _)| g.format_move(pos, m))
        .collect();
    out.sort();
    out
}

#[test]
fn three_pieces_solved_consistently_and_as_the_literature_says() {
    let g = game(3);
    let solved = solve_game(&g, &Progress::hidden()).unwrap();
    // Every value is the best over its successors' values: with distances
    // this pins every value down (by induction on the distance).
    for &p in solved.layout.order() {
        let slot = solved.layout.slot(p).unwrap();
        let bad = (0..g.partition_size(p)).into_par_iter().find_any(|&r| {
            let pos = g.unrank(p, Rank(r)).unwrap();
            expected_value(&g, &solved, &pos) != Value::from_byte(solved.values[slot][r as usize])
        });
        assert!(bad.is_none(), "{} rank {bad:?}", g.partition_name(p));
    }
    let win = |d| Value::at_distance(d).unwrap();

    // Edward Lasker, "Chess and Checkers: The Way to Mastership" (1918),
    // Diagram 88: white king 32, black king 26. White to move wins by 32-27,
    // taking the opposition ("the move") and driving the black king to the
    // edge; with black to move, 26-31 gains the opposition and it is a draw.
    let pos = g.parse_position("W:WK32:BK26").unwrap();
    assert_eq!(
        solved_value(&g, &solved, &pos).outcome(),
        Some(Outcome::Win)
    );
    assert_eq!(best_moves(&g, &solved, &pos), ["32-27"]);
    let pos = g.parse_position("B:WK32:BK26").unwrap();
    assert_eq!(solved_value(&g, &solved, &pos), Value::DRAW);
    assert!(best_moves(&g, &solved, &pos).contains(&"26-31".to_string()));

    // Lasker, Diagram 89: "with one king entrenched in the double corner it
    // takes two kings to force the win": white kings 19, 23 against the black
    // king on 32, white to move. His winning line, every white move a
    // fastest win and every black move the longest defence: 15 plies in all.
    let mut pos = g.parse_position("W:WK19,K23:BK32").unwrap();
    assert_eq!(solved_value(&g, &solved, &pos), win(15));
    let line = [
        "19-24", "32-28", "23-19", "28-32", "24-28", "32-27", "28-32", "27-31", "19-15", "31-26",
        "15-18", "26-31", "18-22",
    ];
    for (i, mv) in line.iter().enumerate() {
        assert!(
            best_moves(&g, &solved, &pos).contains(&mv.to_string()),
            "{mv} is not best in {}",
            g.format_position(&pos)
        );
        pos = play(&g, &pos, mv);
        assert_eq!(solved_value(&g, &solved, &pos), win(14 - i as u32));
    }
    // Black, king on 31, must step next to a white king and is captured.
    assert_eq!(g.format_position(&pos), "B:WK22,K32:BK31");
    assert_eq!(best_moves(&g, &solved, &pos), ["31-26", "31-27"]);

    // Two kings do not always beat one: black kings 6 and 7 against the white
    // king on 2, black to move. Both black kings touch the white one, and
    // whichever moves, white must jump the other (2x9 or 2x11): one king
    // each. Black draws by choosing the king-against-king it keeps.
    let fen = "B:WK2:BK6,K7";
    assert_eq!(value_of(&g, &solved, fen), Value::DRAW);
    let pos = g.parse_position(fen).unwrap();
    for mv in moves(&g, fen) {
        let next = g.format_position(&play(&g, &pos, &mv));
        assert!(moves(&g, &next).iter().all(|m| m.contains('x')), "{mv}");
    }

    // Colour symmetry: the turned, colour-swapped twin is the same index.
    assert_eq!(
        value_of(&g, &solved, "W:WK19,K23:BK32"),
        value_of(&g, &solved, "B:WK1:BK10,K14")
    );
}

// ---------------------------------------------------------------------------
// The command line.

fn run_ok(args: &[&str]) -> String {
    let o = tbforge(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("one JSON object")
}

fn build(dir: &Path, game: &[&str], extra: &[&str]) {
    let o = build_cmd(game, dir, extra).output().unwrap();
    assert!(o.status.success(), "{game:?} {extra:?}: {}", stderr(&o));
}

#[test]
fn cli_builds_verifies_and_probes_the_default_set() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ck");
    let d = dir.to_str().unwrap();
    build(&dir, &["checkers"], &[]);
    let info = json(&run_ok(&["info", d, "--json"]));
    assert_eq!(info["params"]["pieces"], "3");
    assert_eq!(
        info["positions"].as_u64().unwrap(),
        PUBLISHED[..3].iter().sum::<u64>()
    );
    assert_eq!(info["illegal"], 0);
    // Per piece count: `info`'s table of groups, and the text it prints.
    let groups: Vec<(String, u64)> = info["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_string(),
                g["positions"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = ["1 piece", "2 pieces", "3 pieces"]
        .iter()
        .map(|g| g.to_string())
        .zip(PUBLISHED)
        .collect();
    assert_eq!(groups, expected);
    let text = run_ok(&["info", d]);
    let row = text.lines().find(|l| l.starts_with("3 pieces")).unwrap();
    assert_eq!(row.split_whitespace().nth(4), Some("261224"), "{row}");
    run_ok(&["verify", d, "--deep"]);

    let probe = json(&run_ok(&["probe", d, "W:WK19,K23:BK32", "--json"]));
    assert_eq!(probe["outcome"], "win");
    assert_eq!(probe["distance"], 15);
    assert_eq!(probe["best_moves"], serde_json::json!(["19-24"]));
    let probe = json(&run_ok(&["probe", d, "B:WK32:BK26", "--json"]));
    assert_eq!(probe["outcome"], "draw");
    let text = run_ok(&["probe", d, "W:WK32:BK26"]);
    assert!(text.contains("best moves: 32-27"), "{text}");
    // A capture's notation, with its landing squares.
    let probe = json(&run_ok(&["probe", d, "W:WK22,K32:BK26", "--json"]));
    assert_eq!(probe["best_moves"], serde_json::json!(["22x31"]));
    assert_eq!(probe["distance"], 1);

    // Four pieces are not in a 3-piece build: exit 1, one line.
    let o = tbforge(&["probe", d, "W:W18,K25:B1,2", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);

    // One signature, its smaller ones copied from this build: the same
    // values (headers differ: they carry the parameters' hash).
    let one = tmp.path().join("kkvk");
    build(
        &one,
        &["checkers", "--param", "material=KKvK"],
        &["--from", d],
    );
    let values = |dir: &Path, name: &str| {
        TableFile::open_read(&dir.join(name))
            .unwrap()
            .read_all_codes()
            .unwrap()
    };
    let names: Vec<String> = contents(&one)
        .into_keys()
        .filter(|n| n.ends_with(".tbf"))
        .collect();
    assert!(
        names.contains(&"p3-m0k2-m0k1-rxx.tbf".to_string()),
        "{names:?}"
    );
    for name in &names {
        assert!(
            values(&one, name) == values(&dir, name),
            "{name} differs from the pieces=3 build"
        );
    }
}

/// KMvM: one of its partitions (p3-m1k1-m1k0-r65) has a pass that decides losses with every candidate settled by its
/// earlier successors, so without requests, before the pass that decides
/// its last wins (in 33 plies). The pipeline once ended the partition
/// there, leaving those wins draws.
#[test]
fn memory_limited_build_is_byte_identical() {
    for material in ["KMvK", "KMvM"] {
        let tmp = tempfile::tempdir().unwrap();
        let param = format!("material={material}");
        let game = ["checkers", "--param", &param];
        let mem = tmp.path().join("mem");
        let ext = tmp.path().join("ext");
        build(&mem, &game, &[]);
        build(&ext, &game, &["--mem-limit", "1M"]);
        let log: serde_json::Value =
            serde_json::from_slice(&std::fs::read(ext.join("build-log.json")).unwrap()).unwrap();
        assert_eq!(log["mode"], "external");
        assert_same(
            &contents(&ext),
            &contents(&mem),
            &format!("{material} --mem-limit 1M"),
        );
        run_ok(&["verify", ext.to_str().unwrap(), "--deep"]);
    }
}

#[test]
fn bad_parameters_and_positions_are_one_line_errors() {
    for params in [
        &["pieces=0"][..],
        &["pieces=9"],
        &["pieces=three"],
        &["material=KXvK"],
        &["material=KK"],
        &["material=KKKKKvKKKK"],
        &["pieces=3", "material=KvK"],
        &["colour=white"],
    ] {
        let mut args = vec![
            "build",
            "checkers",
            "--backend",
            "cpu",
            "--out",
            "/nonexistent/x",
        ];
        for p in params {
            args.extend(["--param", p]);
        }
        let o = tbforge(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{params:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{params:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("one");
    build(&dir, &["checkers", "--param", "pieces=1"], &[]);
    let d = dir.to_str().unwrap();
    for fen in [
        "hello",
        "W:W33:B1",
        "W:W1:B2",
        "W:W5:B5",
        "X:W5:B1",
        "W:W5",
        "W:W5,5:B1",
        "",
    ] {
        let o = tbforge(&["probe", d, fen]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{fen:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{fen:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn games_lists_checkers_with_its_notation() {
    let v = json(&run_ok(&["games", "--json"]));
    let ck = v["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "checkers")
        .expect("checkers listed")
        .clone();
    assert!(ck["notation"]
        .as_str()
        .unwrap()
        .contains("W:W18,K25:B1,2,K12"));
    let example = ck["example"].as_str().unwrap();
    game(3).parse_position(example).unwrap();
}

/// Three kings against two, a 5-piece signature: about 25 s on 2 cores, so
/// run it with `cargo test --test all checkers:: -- --ignored`.
///
/// Source: B. Newell, The Checker Maven (bobnewell.net), a novice lesson on
/// three kings against two: `W:WK22,K23,K24:BK31,K32`, either to play, White
/// wins; with White to play "an amazing first move wins at once, 22-25!",
/// and with Black to play the published defence starts 32-28.
#[test]
#[ignore = "solves 4.6 M positions (material=KKKvKK): about 25 s on 2 cores"]
fn three_kings_beat_two() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kkkvkk");
    let d = dir.to_str().unwrap();
    build(&dir, &["checkers", "--param", "material=KKKvKK"], &[]);
    let probe = json(&run_ok(&["probe", d, "W:WK22,K23,K24:BK31,K32", "--json"]));
    assert_eq!(probe["outcome"], "win");
    assert_eq!(probe["best_moves"], serde_json::json!(["22-25"]));
    let probe = json(&run_ok(&["probe", d, "B:WK22,K23,K24:BK31,K32", "--json"]));
    assert_eq!(probe["outcome"], "loss");
    assert_eq!(probe["best_moves"], serde_json::json!(["32-28"]));
}

/// A build killed (SIGKILL) part way and resumed ends with the same bytes.
#[test]
fn killed_build_resumes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["checkers", "--param", "material=MMvK"];
    let reference = tmp.path().join("reference");
    build(&reference, &game, &[]);
    let out = tmp.path().join("killed");
    let mut resumed_any = false;
    for (i, delay) in [150u64, 300, 450].into_iter().enumerate() {
        let extra: &[&str] = if i == 0 { &[] } else { &["--resume"] };
        let mut child = build_cmd(&game, &out, extra).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        // Already finished is fine too: the resume below must cope either way.
        let _ = child.kill();
        let _ = child.wait();
        resumed_any |= out.exists();
    }
    assert!(resumed_any, "no build left a directory to resume");
    build(&out, &game, &["--resume"]);
    assert_same(
        &contents(&out),
        &contents(&reference),
        "kill -9 and --resume",
    );
}
