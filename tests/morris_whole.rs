//! Nine Men's Morris as a whole game (`pieces=N`): phase I (placing) from the
//! empty board, checked against an independent model of the placement rules.
//!
//! The model below knows the board only as coordinates (its own mills, from
//! the geometry of three concentric squares and four spokes), plays the
//! placement phase by plain minimax over every reachable position, reads
//! the phase II/III values at the end of placement from the built tablebase,
//! and then demands that the tablebase hold exactly its value, distance
//! included, for every position play reaches, that the forward search reach
//! exactly the positions it reaches per depth, and that symmetry classes
//! count what the positions fold into.

use crate::common;

use common::{build_with, open};
use std::collections::HashMap;
use tbforge::format::TableFile;
use tbforge::game::morris::{Morris, Position, POINT_NAMES};
use tbforge::probe::Tablebase;
use tbforge::{Game, PartitionId, Rank, Value};

/// The 16 mills, from coordinates: each square's four sides and the four
/// spokes between the squares. Points are named `a1`..`g7` (column, row).
fn mills() -> Vec<u32> {
    let bit = |x: i32, y: i32| {
        let name = format!("{}{}", (b'a' + x as u8) as char, y + 1);
        1u32 << POINT_NAMES
            .iter()
            .position(|&p| p == name)
            .expect("a board point")
    };
    let mut out = Vec::new();
    for r in 1..=3 {
        let (lo, hi) = (3 - r, 3 + r);
        for fixed in [lo, hi] {
            out.push(bit(lo, fixed) | bit(3, fixed) | bit(hi, fixed));
            out.push(bit(fixed, lo) | bit(fixed, 3) | bit(fixed, hi));
        }
    }
    for (a, b) in [(0, 2), (4, 6)] {
        out.push(bit(3, a) | bit(3, a + 1) | bit(3, b));
        out.push(bit(a, 3) | bit(a + 1, 3) | bit(b, 3));
    }
    out
}

/// A placement-phase state: the side to move's points and pieces in hand,
/// and the opponent's.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
struct State {
    mover: u32,
    opponent: u32,
    hand: [u8; 2],
}

impl State {
    fn position(&self, n: u8) -> Position {
        let t = 2 * u32::from(n) - u32::from(self.hand[0]) - u32::from(self.hand[1]);
        Position {
            mover: self.mover,
            opponent: self.opponent,
            white_to_move: t % 2 == 0,
            hand: self.hand,
        }
    }
}

/// The independent model: values by minimax over the placement rules,
/// memoised by the game's index of each position (with symmetry on, one
/// entry per class: values are the same across a class).
struct Model<'a> {
    n: u8,
    mills: Vec<u32>,
    game: &'a Morris,
    values: &'a Values,
    /// Value and placements made, by index.
    memo: HashMap<(PartitionId, Rank), (Value, u32)>,
}

/// A tablebase's values, every file read whole (probing block by block
/// would decompress a block per position).
struct Values(HashMap<PartitionId, Vec<u8>>);

impl Values {
    fn read(dir: &std::path::Path) -> Values {
        let tb = Tablebase::open(dir).unwrap();
        let files = tb.manifest().files.iter().map(|f| {
            let file = TableFile::open_read(&dir.join(&f.name)).unwrap();
            (f.partition, file.read_all_codes().unwrap())
        });
        Values(files.collect())
    }

    fn at(&self, (p, r): (PartitionId, Rank)) -> Value {
        Value::from_byte(self.0[&p][r.0 as usize])
    }
}

impl Model<'_> {
    fn in_mill(&self, own: u32, point: u32) -> bool {
        self.mills.iter().any(|&m| m & point != 0 && own & m == m)
    }

    fn value(&mut self, s: State) -> Value {
        let key = self.game.rank(&s.position(self.n));
        if let Some(&(v, _)) = self.memo.get(&key) {
            return v;
        }
        let v = if s.hand == [0, 0] {
            // Placing is over: phases II/III's value, as built.
            self.values.at(key)
        } else if s.mover.count_ones() + u32::from(s.hand[0]) < 3 {
            Value::at_distance(0).unwrap()
        } else {
            let empty = !(s.mover | s.opponent) & ((1 << 24) - 1);
            let protected = self
                .mills
                .iter()
                .filter(|&&m| s.opponent & m == m)
                .fold(0, |acc, &m| acc | m);
            let removable = match s.opponent & !protected {
                0 => s.opponent,
                free => free,
            };
            let mut next = Vec::new();
            for p in (0..24).map(|i| 1u32 << i).filter(|p| empty & p != 0) {
                let own = s.mover | p;
                let hand = [s.hand[1], s.hand[0] - 1];
                if self.in_mill(own, p) && removable != 0 {
                    for x in (0..24).map(|i| 1u32 << i).filter(|x| removable & x != 0) {
                        next.push(State {
                            mover: s.opponent & !x,
                            opponent: own,
                            hand,
                        });
                    }
                } else {
                    next.push(State {
                        mover: s.opponent,
                        opponent: own,
                        hand,
                    });
                }
            }
            // Minimax with distances: the quickest win, else the slowest loss.
            let (mut best_win, mut longest_loss, mut all_lost) = (None::<u32>, 0, true);
            for t in next {
                match self.value(t).distance() {
                    Some(e) if e % 2 == 0 => best_win = Some(best_win.map_or(e, |b| b.min(e))),
                    Some(e) => longest_loss = longest_loss.max(e),
                    None => all_lost = false,
                }
            }
            match best_win {
                Some(e) => Value::at_distance(e + 1).unwrap(),
                None if all_lost => Value::at_distance(longest_loss + 1).unwrap(),
                None => Value::DRAW,
            }
        };
        let t = 2 * u32::from(self.n) - u32::from(s.hand[0]) - u32::from(s.hand[1]);
        self.memo.insert(key, (v, t));
        v
    }
}

fn build(pieces: u32, symmetry: bool) -> (tempfile::TempDir, Tablebase, Values) {
    let dir = tempfile::tempdir().unwrap();
    let sym = if symmetry { "on" } else { "off" };
    let g = open(
        "morris",
        &[("pieces", &pieces.to_string()), ("symmetry", sym)],
    );
    // With the Morris kernels' CPU twins, as the command line builds: the
    // generic solver would spend minutes on phase II.
    let kernels = Morris::whole(pieces, symmetry)
        .unwrap()
        .kernels(&tbforge::game::Device::Cpu)
        .unwrap();
    build_with(&g, dir.path(), 2, |opts| opts.kernels = kernels);
    let tb = Tablebase::open(dir.path()).unwrap();
    let values = Values::read(dir.path());
    (dir, tb, values)
}

/// Plays the model from the empty board against the build of `pieces` with
/// `symmetry`: every index play reaches holds the model's value, and the
/// forward search's layers count the model's indices per depth. Gives the
/// indices reached per depth, each with its weight (positions).
fn check_against_model(pieces: u32, symmetry: bool) -> Vec<Vec<u64>> {
    let (_dir, tb, values) = build(pieces, symmetry);
    let game = Morris::whole(pieces, symmetry).unwrap();
    let mut model = Model {
        n: pieces as u8,
        mills: mills(),
        game: &game,
        values: &values,
        memo: HashMap::new(),
    };
    let start = State {
        mover: 0,
        opponent: 0,
        hand: [pieces as u8; 2],
    };
    let start_value = model.value(start);
    let (p, r) = game.rank(&game.start().unwrap());
    assert_eq!(tb.probe_value(p, r).unwrap(), start_value);

    let mut weights = HashMap::new();
    let mut per_depth = vec![Vec::new(); 2 * pieces as usize + 1];
    for (&(p, r), &(v, t)) in &model.memo {
        let stored = values.at((p, r));
        assert_eq!(stored, v, "partition {p} index {r}");
        per_depth[t as usize].push(weights.entry(p).or_insert_with(|| game.weights(p)).at(r));
    }
    let layers = tb.manifest().layers.clone().expect("forward search ran");
    for (t, reached) in per_depth.iter().enumerate() {
        assert_eq!(
            layers[t],
            reached.len() as u64,
            "indices reached at depth {t}"
        );
    }
    per_depth
}

/// Both indexings against the model; the classes reached at each depth
/// stand for exactly the positions reached there.
#[test]
fn three_pieces_match_the_model() {
    let positions = check_against_model(3, false);
    let classes = check_against_model(3, true);
    for (t, (p, c)) in positions.iter().zip(&classes).enumerate() {
        assert!(p.iter().all(|&w| w == 1));
        assert_eq!(
            c.iter().sum::<u64>(),
            p.len() as u64,
            "positions at depth {t}"
        );
    }
}

#[test]
fn four_pieces_match_the_model() {
    check_against_model(4, true);
}

#[test]
fn notation_reads_hands_and_placements() {
    let g = Morris::whole(9, true).unwrap();
    let start = g.parse_position("W:;B:;w;h=9,9").unwrap();
    assert_eq!(start, g.start().unwrap());
    assert_eq!(g.format_position(&start), "W:;B:;w;h=9,9");
    let pos = g.parse_position("W:a1,d2;B:g7;b;h=7,8").unwrap();
    assert_eq!(g.format_position(&pos), "W:a1,d2;B:g7;b;h=7,8");
    let mut next = Vec::new();
    g.successors(&pos, &mut next);
    assert_eq!(next.len(), 21, "every empty point is a placement");
    let (mv, after) = &next[0];
    assert_eq!(g.format_move(&pos, mv), "a4");
    assert_eq!(g.format_position(after), "W:a1,d2;B:a4,g7;w;h=7,7");
    // A mill closed while placing removes a piece from the board.
    let pos = g
        .parse_position("W:a1,a4,g7,g1;B:d6,d5,b2;b;h=5,6")
        .unwrap();
    next.clear();
    g.successors(&pos, &mut next);
    let moves: Vec<String> = next.iter().map(|(m, _)| g.format_move(&pos, m)).collect();
    assert!(moves.contains(&"d7xa1".to_string()), "{moves:?}");
    assert!(!moves.contains(&"d7".to_string()), "{moves:?}");

    for (bad, why) in [
        ("W:;B:;w;h=9,8", "cannot arise"),
        ("W:;B:;b;h=9,9", "cannot arise"),
        ("W:;B:;w;h=10,10", "h=W,B"),
        ("W:a1;B:;w;h=x", "h=W,B"),
        ("W:a1,a4,a7,b2,b4;B:;w;h=7,7", "cannot have"),
    ] {
        let e = g.parse_position(bad).unwrap_err().to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
    let phase_two = Morris::new(9, true).unwrap();
    let e = phase_two
        .parse_position("W:;B:;w;h=9,9")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--param pieces=9"), "{e}");
}

/// The command line: `--from` copies phases II/III from a `max` build (the
/// same bytes as solving them), `info` tabulates the placement depths, and
/// probe answers the empty board but calls an unreachable placement
/// position what it is.
#[test]
fn command_line_whole_game() {
    use common::{assert_same, build_cmd, contents, tbforge};
    let tmp = tempfile::tempdir().unwrap();
    let (phase_two, from, plain) = (
        tmp.path().join("max3"),
        tmp.path().join("from"),
        tmp.path().join("plain"),
    );
    for (args, out, extra) in [
        (["morris", "--param", "max=3"], &phase_two, vec![]),
        (
            ["morris", "--param", "pieces=3"],
            &from,
            vec!["--from", phase_two.to_str().unwrap()],
        ),
        (["morris", "--param", "pieces=3"], &plain, vec![]),
    ] {
        let o = build_cmd(&args, out, &extra).output().unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
    }
    let log = std::fs::read_to_string(from.join(tbforge::solve::BUILD_LOG)).unwrap();
    assert!(log.contains("\"copied\""), "{log}");
    assert_same(
        &contents(&from),
        &contents(&plain),
        "--from against solving",
    );

    let info = tbforge(&["info", plain.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("depth") && text.contains("reached"), "{text}");

    let probe = tbforge(&["probe", plain.to_str().unwrap(), "W:;B:;w;h=3,3"]);
    assert!(probe.status.success(), "{}", common::stderr(&probe));
    // White closed a mill with its third piece and took nothing: no game gets here.
    let probe = tbforge(&[
        "probe",
        plain.to_str().unwrap(),
        "W:a1,a4,a7;B:d7,g7;b;h=0,1",
    ]);
    assert_eq!(probe.status.code(), Some(1));
    assert!(
        common::stderr(&probe).contains("not reachable"),
        "{}",
        common::stderr(&probe)
    );
}
