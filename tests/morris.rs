//! Nine Men's Morris, phases II and III: sizes against the seed, the hash, the
//! rules against an independent geometric model of the board, and the solved
//! values against their successors.
//!
//! # Source: seed 000 (Edelkamp, Sulewski, Yücel, "GPU exploration of two-player
//! games with perfect hash functions"), Table 1 "Retrograde Analysis of Phases II
//! and III", column Size (GB at one byte per position of S(k1, k2)), and
//! Algorithms 1 and 2 (multinomial rank/unrank).
//!
//! Table 1's sizes: the exact counts are 24! / (k1! k2! (24-k1-k2)!). Entries of
//! 1 GB and more are that count / 10^9 rounded (9-9: 6,544,057,520 -> 6.54). The
//! eleven entries below 1 GB are that count / 1.024e9 (MB of 10^6 bytes divided
//! by 1024): five of them cannot be read as / 10^9 at all (9-3: 0.5949 is printed
//! 0.58, 7-4: 0.8237 is 0.80, 8-3 and 6-4: 0.4119 are 0.40, 5-5: 0.4942 is 0.48,
//! 7-3: 0.2354 is 0.23), while / 1.024e9 gives every one of the eleven exactly
//! (0.581, 0.804, 0.402, 0.483, 0.230, ...). The test checks both halves of the
//! table under this reading, and the exact counts.

use crate::common;

use common::solved_value;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use tbforge::game::morris::Morris;
use tbforge::hash::Multinomial;
use tbforge::solve::{solve_game, Progress, SolvedGame};
use tbforge::{Game, Outcome, PartitionId, Rank, Status, Value};

/// (k1, k2, exact |S(k1, k2)|, Table 1's Size in GB as printed).
const TABLE_1: [(u32, u32, u64, &str); 28] = [
    (9, 9, 6_544_057_520, "6.54"),
    (9, 8, 8_413_788_240, "8.41"),
    (8, 8, 9_465_511_770, "9.47"),
    (9, 7, 8_413_788_240, "8.41"),
    (8, 7, 8_413_788_240, "8.41"),
    (9, 6, 6_544_057_520, "6.54"),
    (7, 7, 6_731_030_592, "6.73"),
    (8, 6, 5_889_651_768, "5.89"),
    (9, 5, 3_926_434_512, "3.93"),
    (7, 6, 4_283_383_104, "4.28"),
    (8, 5, 3_212_537_328, "3.21"),
    (9, 4, 1_784_742_960, "1.78"),
    (6, 6, 2_498_640_144, "2.50"),
    (7, 5, 2_141_691_552, "2.14"),
    (8, 4, 1_338_557_220, "1.34"),
    (9, 3, 594_914_320, "0.58"),
    (6, 5, 1_153_218_528, "1.15"),
    (7, 4, 823_727_520, "0.80"),
    (8, 3, 411_863_760, "0.40"),
    (5, 5, 494_236_512, "0.48"),
    (6, 4, 411_863_760, "0.40"),
    (7, 3, 235_350_720, "0.23"),
    (5, 4, 164_745_504, "0.16"),
    (6, 3, 109_830_336, "0.11"),
    (4, 4, 51_482_970, "0.05"),
    (5, 3, 41_186_376, "0.04"),
    (4, 3, 12_113_640, "0.01"),
    (3, 3, 2_691_920, "0.003"),
];

fn factorial(n: u32) -> u128 {
    (1..=u128::from(n)).product()
}

#[test]
fn partition_sizes_match_table_1() {
    let game = Morris::new(9, false).unwrap();
    for (k1, k2, exact, printed) in TABLE_1 {
        let formula = factorial(24) / (factorial(k1) * factorial(k2) * factorial(24 - k1 - k2));
        assert_eq!(u128::from(exact), formula, "{k1}-{k2}");
        assert_eq!(Morris::space_size(k1, k2), exact, "{k1}-{k2}");
        assert_eq!(Morris::space_size(k2, k1), exact, "{k2}-{k1}");
        // A partition holds both sides to move.
        let halves = if k1 == k2 { 1 } else { 2 };
        let p = Morris::partition_of(k1, k2);
        assert_eq!(game.partition_size(p), halves * exact, "{k1}-{k2}");
        assert_eq!(game.partition_name(p), format!("{k1}-{k2}"));
        // Table 1's rounding (see the header comment).
        let decimals = printed.split('.').nth(1).unwrap().len();
        let unit = if exact >= 1_000_000_000 { 1e9 } else { 1.024e9 };
        let shown = format!("{:.*}", decimals, exact as f64 / unit);
        assert_eq!(shown, printed, "{k1}-{k2}: {exact} positions");
    }
    assert_eq!(TABLE_1.len(), 28, "every k1 >= k2 >= 3 pair up to 9");
}

/// The class index at full size: one index per class of every `k1-k2`
/// partition (Burnside's count for each half, through the test's own
/// `classes`), 8,904,593,601 in all, and the weights give back every board of
/// the symmetry-off index (Table 1's sizes, checked above): 142,430,121,724.
/// The 2-k partitions add 18,972,552 classes of lost positions.
/// # Source: the classes are Burnside's lemma over the 16 symmetries (as in
/// Gasser, "Solving Nine Men's Morris", 1996, and tbforge issue 15); the
/// boards are the multinomials of seed 000's Table 1.
#[test]
fn class_index_at_max_9() {
    let on = Morris::new(9, true).unwrap();
    let off = Morris::new(9, false).unwrap();
    let t = std::time::Instant::now();
    let sizes: Vec<u64> = on
        .partitions()
        .iter()
        .map(|&p| on.partition_size(p))
        .collect();
    eprintln!("class tables for max=9: {:.2?}", t.elapsed());
    let t = std::time::Instant::now();
    let weights: Vec<_> = on.partitions().iter().map(|&p| on.weights(p)).collect();
    eprintln!("their weights: {:.2?} ({} sizes)", t.elapsed(), sizes.len());
    drop(weights);
    let t = std::time::Instant::now();
    let (mut pair_classes, mut lost_classes, mut positions) = (0u64, 0u64, 0u64);
    for p in on.partitions() {
        let size = on.partition_size(p);
        let w = on.weights(p);
        let short: u64 = w.exceptions.iter().map(|&(_, x)| w.common - x).sum();
        let boards = w.common * size - short;
        assert_eq!(boards, off.partition_size(p), "{}", on.partition_name(p));
        let name = on.partition_name(p);
        let (a, b): (u32, u32) = {
            let mut it = name.split('-').map(|x| x.parse().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        };
        let mut want = classes(a as usize, b as usize);
        if a != b && a != 2 {
            want += classes(b as usize, a as usize);
        }
        assert_eq!(size, want, "{name}");
        if a == 2 {
            lost_classes += size;
        } else {
            pair_classes += size;
            positions += boards;
        }
    }
    eprintln!(
        "class tables for max=9 and their weights: {:.2?}",
        t.elapsed()
    );
    assert_eq!(pair_classes, 8_904_593_601);
    assert_eq!(positions, 142_430_121_724);
    assert_eq!(lost_classes, 18_972_552);
}

#[test]
fn partitions_and_sizes_for_max() {
    let game = Morris::new(4, false).unwrap();
    let names: Vec<String> = game
        .partitions()
        .iter()
        .map(|&p| game.partition_name(p))
        .collect();
    assert_eq!(names, ["2-3", "2-4", "3-3", "4-3", "4-4"]);
    let sizes: Vec<u64> = game
        .partitions()
        .iter()
        .map(|&p| game.partition_size(p))
        .collect();
    // 2-k: C(24,2) C(22,k); the others from Table 1 (4-3 twice: both sides to move).
    assert_eq!(
        sizes,
        [
            276 * 1540,
            276 * 7315,
            2_691_920,
            2 * 12_113_640,
            51_482_970
        ]
    );
    for bad in ["max=2", "max=10", "max=x", "depth=3"] {
        let (k, v) = bad.split_once('=').unwrap();
        let raw: BTreeMap<String, String> = [(k.to_string(), v.to_string())].into();
        assert!(Morris::from_params(&raw).is_err(), "{bad}");
    }
}

// ---------------------------------------------------------------------------
// An independent model of the board, from geometry: a point is (column, row)
// in 0..7; lines join neighbours along rows and columns but never cross the
// centre (d4).

type Pt = (i32, i32);

fn all_points() -> Vec<Pt> {
    let mut out = Vec::new();
    for x in 0..7i32 {
        for y in 0..7i32 {
            let (dx, dy) = (x - 3, y - 3);
            let ring = dx.abs().max(dy.abs());
            if ring > 0 && (dx == 0 || dy == 0 || dx.abs() == dy.abs()) {
                out.push((x, y));
            }
        }
    }
    out
}

fn name(p: Pt) -> String {
    format!("{}{}", (b'a' + p.0 as u8) as char, p.1 + 1)
}

fn parse_pt(s: &str) -> Pt {
    let b = s.as_bytes();
    (i32::from(b[0] - b'a'), i32::from(b[1] - b'1'))
}

struct Board {
    points: Vec<Pt>,
    adjacent: BTreeMap<Pt, Vec<Pt>>,
    mills: Vec<[Pt; 3]>,
}

impl Board {
    fn new() -> Board {
        let points = all_points();
        let on = |p: Pt| points.contains(&p);
        let mut adjacent: BTreeMap<Pt, Vec<Pt>> = BTreeMap::new();
        for &p in &points {
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                let mut q = (p.0 + dx, p.1 + dy);
                while (0..7).contains(&q.0) && (0..7).contains(&q.1) && q != (3, 3) {
                    if on(q) {
                        adjacent.entry(p).or_default().push(q);
                        break;
                    }
                    q = (q.0 + dx, q.1 + dy);
                }
            }
        }
        let mut mills = Vec::new();
        for &q in &points {
            let n = &adjacent[&q];
            for &p in n {
                for &r in n {
                    let straight = (p.0 - q.0, p.1 - q.1) == (q.0 - r.0, q.1 - r.1);
                    if straight && p < r {
                        mills.push([p, q, r]);
                    }
                }
            }
        }
        Board {
            points,
            adjacent,
            mills,
        }
    }

    /// Every (move, successor) in notation, from the rules in the issue.
    fn successors(
        &self,
        white: &BTreeSet<Pt>,
        black: &BTreeSet<Pt>,
        wtm: bool,
    ) -> Vec<(String, String)> {
        let (own, opp) = if wtm { (white, black) } else { (black, white) };
        let empty: Vec<Pt> = self
            .points
            .iter()
            .copied()
            .filter(|p| !own.contains(p) && !opp.contains(p))
            .collect();
        let in_mill = |set: &BTreeSet<Pt>, p: Pt| {
            self.mills
                .iter()
                .any(|m| m.contains(&p) && m.iter().all(|q| set.contains(q)))
        };
        let mut removable: Vec<Pt> = opp.iter().copied().filter(|&p| !in_mill(opp, p)).collect();
        if removable.is_empty() {
            removable = opp.iter().copied().collect();
        }
        let mut out = Vec::new();
        for &from in own {
            let targets: Vec<Pt> = if own.len() == 3 {
                empty.clone()
            } else {
                self.adjacent[&from]
                    .iter()
                    .copied()
                    .filter(|q| empty.contains(q))
                    .collect()
            };
            for to in targets {
                let mut moved = own.clone();
                moved.remove(&from);
                moved.insert(to);
                let mv = format!("{}-{}", name(from), name(to));
                let captures: Vec<Option<Pt>> = if in_mill(&moved, to) {
                    removable.iter().map(|&x| Some(x)).collect()
                } else {
                    vec![None]
                };
                for x in captures {
                    let mut left = opp.clone();
                    let mut text = mv.clone();
                    if let Some(x) = x {
                        left.remove(&x);
                        text += &format!("x{}", name(x));
                    }
                    let (w, b) = if wtm {
                        (&moved, &left)
                    } else {
                        (&left, &moved)
                    };
                    out.push((text, notation(w, b, !wtm)));
                }
            }
        }
        out.sort();
        out
    }
}

fn notation(white: &BTreeSet<Pt>, black: &BTreeSet<Pt>, wtm: bool) -> String {
    let list = |s: &BTreeSet<Pt>| {
        let mut v: Vec<String> = s.iter().map(|&p| name(p)).collect();
        v.sort();
        v.join(",")
    };
    format!(
        "W:{};B:{};{}",
        list(white),
        list(black),
        if wtm { 'w' } else { 'b' }
    )
}

/// (white, black, white to move) from notation, read without the game's parser.
fn read(text: &str) -> (BTreeSet<Pt>, BTreeSet<Pt>, bool) {
    let parts: Vec<&str> = text.split(';').collect();
    let set = |s: &str| -> BTreeSet<Pt> {
        s[2..]
            .split(',')
            .filter(|t| !t.is_empty())
            .map(parse_pt)
            .collect()
    };
    (set(parts[0]), set(parts[1]), parts[2] == "w")
}

/// The 16 symmetries of the board as maps on points.
fn symmetries() -> Vec<Box<dyn Fn(Pt) -> Pt + Sync>> {
    let mut out: Vec<Box<dyn Fn(Pt) -> Pt + Sync>> = Vec::new();
    for swap_rings in [false, true] {
        for rot in 0..4 {
            for mirror in [false, true] {
                out.push(Box::new(move |p: Pt| {
                    let (mut dx, mut dy) = (p.0 - 3, p.1 - 3);
                    if swap_rings {
                        match dx.abs().max(dy.abs()) {
                            3 => (dx, dy) = (dx / 3, dy / 3),
                            1 => (dx, dy) = (dx * 3, dy * 3),
                            _ => {}
                        }
                    }
                    if mirror {
                        dx = -dx;
                    }
                    for _ in 0..rot {
                        (dx, dy) = (-dy, dx);
                    }
                    (dx + 3, dy + 3)
                }));
            }
        }
    }
    out
}

/// A small deterministic generator (xorshift) for sampling ranks.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn independent_board_model_is_the_standard_one() {
    let b = Board::new();
    assert_eq!(b.points.len(), 24);
    assert_eq!(b.mills.len(), 16);
    let edges: usize = b.adjacent.values().map(Vec::len).sum();
    assert_eq!(edges, 2 * 32, "the board has 32 lines between neighbours");
    let names: BTreeSet<String> = b.points.iter().map(|&p| name(p)).collect();
    let issue: BTreeSet<String> =
        "a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7"
            .split(' ')
            .map(String::from)
            .collect();
    assert_eq!(names, issue);
    // Each symmetry maps the board, its lines and its mills onto themselves.
    for s in symmetries() {
        for m in &b.mills {
            let mut image: Vec<Pt> = m.iter().map(|&p| s(p)).collect();
            image.sort();
            assert!(b.mills.iter().any(|n| {
                let mut n = n.to_vec();
                n.sort();
                n == image
            }));
        }
    }
}

// ---------------------------------------------------------------------------
// Hash.

#[test]
fn rank_is_seed_multinomial_and_bijective_on_3_3() {
    let game = Morris::new(3, false).unwrap();
    let p = Morris::partition_of(3, 3);
    let size = game.partition_size(p);
    let bad = (0..size).into_par_iter().find_any(|&r| {
        let pos = game.unrank(p, Rank(r)).unwrap();
        game.rank(&pos) != (p, Rank(r))
    });
    assert_eq!(bad, None);
    assert_eq!(game.unrank(p, Rank(size)), None);
}

#[test]
fn rank_agrees_with_the_crate_multinomial() {
    let game = Morris::new(9, false).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (k1, k2, exact, _) in TABLE_1 {
        for (a, b) in [(k1, k2), (k2, k1)] {
            let hash = Multinomial::new(24, &[a, b]).unwrap();
            assert_eq!(hash.size(), exact);
            let p = Morris::partition_of(k1, k2);
            let offset = if a < b { exact } else { 0 };
            for _ in 0..200 {
                let r = rng.below(exact);
                let pos = game.unrank(p, Rank(offset + r)).unwrap();
                assert_eq!(pos.mover.count_ones(), a);
                assert_eq!(pos.opponent.count_ones(), b);
                let board: Vec<u8> = (0..24)
                    .map(|i| {
                        if pos.mover >> i & 1 == 1 {
                            1
                        } else if pos.opponent >> i & 1 == 1 {
                            2
                        } else {
                            0
                        }
                    })
                    .collect();
                assert_eq!(hash.rank(&board), r, "{a}-{b} rank {r}");
                assert_eq!(game.rank(&pos), (p, Rank(offset + r)));
            }
        }
    }
    // Ends of the 2-k partitions.
    for k in 3..=9 {
        let p = Morris::partition_of(k, 2);
        let size = game.partition_size(p);
        assert_eq!(size, Morris::space_size(2, k));
        for r in [0, size / 2, size - 1] {
            let pos = game.unrank(p, Rank(r)).unwrap();
            assert_eq!(game.rank(&pos), (p, Rank(r)));
            assert_eq!(game.status(&pos), Status::Lost);
        }
        assert_eq!(game.unrank(p, Rank(size)), None);
    }
}

// ---------------------------------------------------------------------------
// Rules.

fn game_successors<G: Game>(game: &G, pos: &G::Position) -> Vec<(String, String)> {
    let mut succ = Vec::new();
    game.successors(pos, &mut succ);
    let mut out: Vec<(String, String)> = succ
        .iter()
        .map(|(m, s)| (game.format_move(pos, m), game.format_position(s)))
        .collect();
    out.sort();
    out
}

#[test]
fn moves_match_the_independent_model() {
    let board = Board::new();
    let game = Morris::new(9, false).unwrap();
    let mut rng = Rng(12345);
    let mut blocked = 0;
    let mut captures = 0;
    for (k1, k2) in [
        (3, 3),
        (4, 3),
        (4, 4),
        (5, 3),
        (6, 6),
        (7, 5),
        (9, 9),
        (9, 8),
        (8, 3),
    ] {
        let p = Morris::partition_of(k1, k2);
        let size = game.partition_size(p);
        for i in 0..3000 {
            let mut pos = game.unrank(p, Rank(rng.below(size))).unwrap();
            pos.white_to_move = i % 2 == 0;
            let text = game.format_position(&pos);
            let (w, b, wtm) = read(&text);
            assert_eq!(game.parse_position(&text).unwrap(), pos);
            let expected = board.successors(&w, &b, wtm);
            if expected.is_empty() {
                blocked += 1;
                assert_eq!(game.status(&pos), Status::Lost, "{text} is blocked");
                continue;
            }
            assert_eq!(game.status(&pos), Status::Ongoing, "{text}");
            captures += expected.iter().filter(|(m, _)| m.contains('x')).count();
            assert_eq!(game_successors(&game, &pos), expected, "{text}");
        }
    }
    // Blocked sides are rare among random boards: add some by hand (white to
    // move is hemmed in), plus ones just beside them that are not blocked.
    for text in [
        "W:a1,a4,a7,g1;B:b4,d1,d7,g4;w",
        "W:a1,a4,a7,g1;B:b4,d1,d7,g4,b6;b",
        "W:a1,a4,a7,g1;B:b4,d1,d7,g7;w",
        "W:a1,a4,a7,d2,g1;B:b2,b4,d1,d3,d7,f2,g4;w",
        "W:a1,a4,a7,d2,g1;B:b4,d1,d7,g4,f2,c3;w",
    ] {
        let pos = game.parse_position(text).unwrap();
        let (w, b, wtm) = read(text);
        let expected = board.successors(&w, &b, wtm);
        if expected.is_empty() {
            blocked += 1;
            assert_eq!(game.status(&pos), Status::Lost, "{text} is blocked");
        } else {
            assert_eq!(game.status(&pos), Status::Ongoing, "{text}");
            assert_eq!(game_successors(&game, &pos), expected, "{text}");
        }
    }
    // The sample must exercise the rules it checks.
    assert!(blocked >= 2, "too few blocked positions: {blocked}");
    assert!(captures > 1000, "too few captures sampled: {captures}");
}

// ---------------------------------------------------------------------------
// Solving.

fn value_of(game: &Morris, solved: &SolvedGame, text: &str) -> Value {
    solved_value(game, solved, &game.parse_position(text).unwrap())
}

/// The value a position must have given its successors' values (written out
/// here, apart from the solver's own combination).
fn expected_value(game: &Morris, solved: &SolvedGame, pos: &<Morris as Game>::Position) -> Value {
    if game.status(pos) == Status::Lost {
        return Value::at_distance(0).unwrap();
    }
    let mut succ = Vec::new();
    game.successors(pos, &mut succ);
    let mut fastest_win: Option<u32> = None;
    let mut slowest_loss: Option<u32> = Some(0);
    for (_, s) in &succ {
        let v = solved_value(game, solved, s);
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

/// Per partition: size, wins, draws, losses, longest win, longest loss
/// (unused indices, only with symmetry folding, are counted apart).
fn report(game: &Morris, solved: &SolvedGame) -> Vec<(String, u64, u64, u64, u64, u32, u32)> {
    let mut out = Vec::new();
    for (slot, &p) in solved.layout.order().iter().enumerate() {
        let (mut w, mut d, mut l, mut lw, mut ll, mut unused) = (0, 0, 0, 0, 0, 0u64);
        for &b in &solved.values[slot] {
            let v = Value::from_byte(b);
            match v.outcome() {
                Some(Outcome::Win) => {
                    w += 1;
                    lw = lw.max(v.distance().unwrap());
                }
                Some(Outcome::Loss) => {
                    l += 1;
                    ll = ll.max(v.distance().unwrap());
                }
                Some(Outcome::Draw) => d += 1,
                None => unused += 1,
            }
        }
        assert!(
            game.symmetry() || unused == 0,
            "illegal index in {}",
            game.partition_name(p)
        );
        let size = solved.values[slot].len() as u64;
        eprintln!(
            "{:>4}: size {size:>11} wins {w:>11} draws {d:>11} losses {l:>11} unused {unused:>11} longest win {lw:>3} longest loss {ll:>3}",
            game.partition_name(p)
        );
        out.push((game.partition_name(p), size, w, d, l, lw, ll));
    }
    out
}

fn check_consistent(game: &Morris, solved: &SolvedGame, p: PartitionId) {
    let slot = solved.layout.slot(p).unwrap();
    let bad = (0..game.partition_size(p)).into_par_iter().find_any(|&r| {
        let pos = game.unrank(p, Rank(r)).unwrap();
        expected_value(game, solved, &pos) != Value::from_byte(solved.values[slot][r as usize])
    });
    if let Some(r) = bad {
        let pos = game.unrank(p, Rank(r)).unwrap();
        panic!(
            "{} has {} but its successors give {}",
            game.format_position(&pos),
            Value::from_byte(solved.values[slot][r as usize]),
            expected_value(game, solved, &pos)
        );
    }
}

fn check_symmetric(game: &Morris, solved: &SolvedGame, samples: usize) {
    let syms = symmetries();
    let mut rng = Rng(777);
    for &p in solved.layout.order() {
        let size = game.partition_size(p);
        for _ in 0..samples {
            let pos = game.unrank(p, Rank(rng.below(size))).unwrap();
            let text = game.format_position(&pos);
            let v = value_of(game, solved, &text);
            let (w, b, wtm) = read(&text);
            for s in &syms {
                let map = |set: &BTreeSet<Pt>| set.iter().map(|&q| s(q)).collect::<BTreeSet<Pt>>();
                let image = notation(&map(&w), &map(&b), wtm);
                assert_eq!(
                    value_of(game, solved, &image),
                    v,
                    "{text} vs its image {image}"
                );
            }
            // The colour-swapped twin is the same state.
            assert_eq!(value_of(game, solved, &notation(&b, &w, !wtm)), v);
        }
    }
}

/// Hand-made positions with known answers (max >= 4 needed for the 4-4 ones).
fn check_hand_made(game: &Morris, solved: &SolvedGame) {
    let at = |d| Value::at_distance(d).unwrap();
    // White (three pieces, flying) closes a1-a4-a7 by flying g7-a7 and removes a
    // black piece: black is down to two and loses at once.
    let text = "W:a1,a4,g7;B:c3,e5,f2;w";
    assert_eq!(value_of(game, solved, text), at(1), "{text}");
    let pos = game.parse_position(text).unwrap();
    let best = best_moves(game, solved, &pos);
    assert_eq!(best, ["g7-a7xc3", "g7-a7xe5", "g7-a7xf2"]);
    // After the capture black has two pieces: lost, distance 0.
    assert_eq!(value_of(game, solved, "W:a1,a4,a7;B:e5,f2;b"), at(0));
    // Pieces in a mill are protected while others exist.
    let pos = game.parse_position("W:a1,a4,g7;B:c3,d3,e3;w").unwrap();
    assert!(game_successors(game, &pos)
        .iter()
        .any(|(m, _)| m == "g7-a7xd3"));
    if game.max() >= 4 {
        let pos = game.parse_position("W:a1,a4,g7;B:c3,d3,e3,f4;w").unwrap();
        let caps: Vec<String> = game_successors(game, &pos)
            .into_iter()
            .filter(|(m, _)| m.starts_with("g7-a7"))
            .map(|(m, _)| m)
            .collect();
        assert_eq!(caps, ["g7-a7xf4"]);
        // White (four pieces, so no flying) is blocked: a1 a4 a7 g1 hemmed in
        // by d1 b4 d7 g4. White to move has lost.
        let blocked = "W:a1,a4,a7,g1;B:b4,d1,d7,g4;w";
        assert_eq!(value_of(game, solved, blocked), at(0), "{blocked}");
        // Black to move blocks white by g7-g4: a win in one.
        let text = "W:a1,a4,a7,g1;B:b4,d1,d7,g7;b";
        assert_eq!(value_of(game, solved, text), at(1), "{text}");
        let pos = game.parse_position(text).unwrap();
        assert_eq!(best_moves(game, solved, &pos), ["g7-g4"]);
    }
}

fn best_moves(game: &Morris, solved: &SolvedGame, pos: &<Morris as Game>::Position) -> Vec<String> {
    let here = solved_value(game, solved, pos);
    let mut succ = Vec::new();
    game.successors(pos, &mut succ);
    let mut out: Vec<String> = succ
        .iter()
        .filter(|(_, s)| {
            let v = solved_value(game, solved, s);
            v.distance().map(|d| d + 1) == here.distance() && v.outcome() != here.outcome()
        })
        .map(|(m, _)| game.format_move(pos, m))
        .collect();
    out.sort();
    out
}

#[test]
fn registry_opens_morris_and_its_example_parses() {
    let descriptor = tbforge::registry::catalog()
        .into_iter()
        .find(|d| d.name == "morris")
        .expect("morris is in the catalogue");
    let raw: BTreeMap<String, String> = [("max".to_string(), "4".to_string())].into();
    let any = tbforge::registry::open_game("morris", &raw).unwrap();
    assert_eq!(any.info().canonical(), "morris:max=4,symmetry=on");
    let game = Morris::from_params(&BTreeMap::new()).unwrap();
    assert_eq!((game.max(), game.symmetry()), (3, true));
    let pos = game.parse_position(descriptor.example).unwrap();
    assert_eq!(game.format_position(&pos), "W:a1,a4,d2;B:f4,g4,g7;w");
    let raw: BTreeMap<String, String> = [("symmetry".to_string(), "maybe".to_string())].into();
    assert!(Morris::from_params(&raw).is_err());
}

#[test]
fn notation_round_trip_and_errors() {
    let game = Morris::new(4, false).unwrap();
    let text = "W:a1,a4,d2;B:f4,g4,g7;w";
    let pos = game.parse_position(text).unwrap();
    assert_eq!(game.format_position(&pos), text);
    // Order, case and spacing are free; the written form is canonical.
    let pos2 = game
        .parse_position(" b: G7 , g4,f4 ; w:d2,a1,a4 ; W ")
        .unwrap();
    assert_eq!(game.format_position(&pos2), text);
    let black = game.parse_position("W:a1,a4,d2;B:f4,g4,g7;b").unwrap();
    assert_eq!(game.format_position(&black), "W:a1,a4,d2;B:f4,g4,g7;b");
    assert_eq!(black.mover.count_ones(), 3);
    for bad in [
        "W:a1,a4,d4;B:f4,g4,g7;w", // d4 is the centre, no point
        "W:a1,a4,h2;B:f4,g4,g7;w", // unknown point
        "W:a1,a4,a4;B:f4,g4,g7;w", // duplicate point
        "W:a1,a4,g7;B:f4,g4,g7;w", // a point of both colours
        "W:a1;B:f4,g4,g7;w",       // one piece for the mover
        "W:a1,a4,d2;B:f4,g4;w",    // opponent with two: the game ended before
        "W:a1,a4,d2;B:f4,g4,g7",   // no side to move
        "W:a1,a4,d2;B:f4,g4,g7;x", // bad side to move
        "W:a1,a4,d2;W:f4,g4,g7;w", // W twice
        "a1,a4,d2;B:f4,g4,g7;w",   // no tag
        "W:a1,a2,a3,a4,a5,a6,a7,b1,b2,b3;B:f4,g4,g7;w", // unknown points
        "W:a1,a4,a7,b2,b4,b6,c3,c4,c5,d1;B:f4,g4,g7;w", // ten pieces
        "",
    ] {
        assert!(game.parse_position(bad).is_err(), "accepted {bad:?}");
    }
    // Moves: from-to plus the removed piece.
    let pos = game.parse_position("W:a1,a4,g7;B:c3,e5,f2;w").unwrap();
    let moves: Vec<String> = game_successors(&game, &pos)
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert!(moves.contains(&"g7-a7xc3".to_string()));
    assert!(moves.contains(&"a1-d1".to_string()));
    assert_eq!(
        moves.len(),
        3 * 18 - 1 + 3,
        "flying: 3 pieces x 18 empties, one mill x 3 captures"
    );
}

/// The values of every position (symmetry off's indexing) read from a
/// symmetry-folded solve: what probing each position of the board returns.
fn expand(on: &Morris, off: &Morris, solved: &SolvedGame) -> SolvedGame {
    let values = solved
        .layout
        .order()
        .iter()
        .map(|&p| {
            (0..off.partition_size(p))
                .into_par_iter()
                .map(|r| {
                    let pos = off.unrank(p, Rank(r)).unwrap();
                    let (q, i) = on.rank(&pos);
                    solved.values[solved.layout.slot(q).unwrap()][i.0 as usize]
                })
                .collect()
        })
        .collect();
    SolvedGame {
        layout: solved.layout.clone(),
        values,
        reachable: None,
    }
}

/// Burnside: the number of classes of boards with `a` and `b` pieces under
/// the 16 symmetries (from the independent geometric model).
fn classes(a: usize, b: usize) -> u64 {
    let points = all_points();
    let mut total = 0u64;
    for s in symmetries() {
        // Cycle lengths of the permutation.
        let mut seen = BTreeSet::new();
        let mut lengths = Vec::new();
        for &p in &points {
            let mut len = 0;
            let mut q = p;
            while seen.insert(q) {
                q = s(q);
                len += 1;
            }
            if len > 0 {
                lengths.push(len);
            }
        }
        // Colourings fixed by it: each cycle is all mover, all opponent or empty.
        let mut ways = vec![vec![0u64; b + 1]; a + 1];
        ways[0][0] = 1;
        for len in lengths {
            let mut next = ways.clone();
            for x in 0..=a {
                for y in 0..=b {
                    if x >= len {
                        next[x][y] += ways[x - len][y];
                    }
                    if y >= len {
                        next[x][y] += ways[x][y - len];
                    }
                }
            }
            ways = next;
        }
        total += ways[a][b];
    }
    assert_eq!(total % 16, 0);
    total / 16
}

/// `symmetry=on` indexes classes: one index per class (sizes are Burnside's
/// counts, every index a representative that ranks back to itself), and
/// every board ranks to its class's index, which stands for as many boards
/// as rank to it (the partition's weights).
#[test]
fn symmetry_index_has_one_index_per_class() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let on = Morris::new(4, true).unwrap();
    let off = Morris::new(4, false).unwrap();
    for (k1, k2) in [(3, 3), (4, 3)] {
        let p = Morris::partition_of(k1, k2);
        let mut want = classes(k1 as usize, k2 as usize);
        if k1 != k2 {
            want += classes(k2 as usize, k1 as usize);
        }
        let size = on.partition_size(p);
        assert_eq!(size, want, "{k1}-{k2}");
        (0..size).into_par_iter().for_each(|r| {
            let pos = on.unrank(p, Rank(r)).expect("every index is a class");
            assert_eq!(on.rank(&pos), (p, Rank(r)));
        });
        let boards: Vec<AtomicU64> = (0..size).map(|_| AtomicU64::new(0)).collect();
        (0..off.partition_size(p)).into_par_iter().for_each(|r| {
            let pos = off.unrank(p, Rank(r)).unwrap();
            let (q, i) = on.rank(&pos);
            assert_eq!(q, p);
            boards[i.0 as usize].fetch_add(1, Ordering::Relaxed);
        });
        let weights = on.weights(p);
        assert_eq!(weights.common, 16);
        for (i, n) in boards.iter().enumerate() {
            assert_eq!(
                n.load(Ordering::Relaxed),
                weights.at(Rank(i as u64)),
                "{k1}-{k2} index {i}"
            );
        }
    }
}

/// A folded solve and its expansion to every position: symmetric images
/// agree (`samples` per partition) and the hand-made positions hold in both.
fn check_folded_and_expanded(
    on: &Morris,
    solved: &SolvedGame,
    off: &Morris,
    full: &SolvedGame,
    samples: usize,
) {
    check_symmetric(off, full, samples);
    check_hand_made(off, full);
    check_hand_made(on, solved);
}

/// Solves `game` in memory, with its time and per-partition report on stderr.
fn solve_and_report(game: &Morris) -> SolvedGame {
    let t = std::time::Instant::now();
    let solved = solve_game(game, &Progress::hidden()).unwrap();
    eprintln!("{} solved in {:.1?}", game.info().canonical(), t.elapsed());
    report(game, &solved);
    solved
}

#[test]
fn solve_max_3() {
    let on = Morris::new(3, true).unwrap();
    let off = Morris::new(3, false).unwrap();
    let solved = solve_and_report(&on);
    // Every position of the board, each class's value spread to its members.
    let full = expand(&on, &off, &solved);
    let rows = report(&off, &full);
    assert_eq!(rows.len(), 2);
    // 2-3 is all losses at distance 0.
    assert_eq!((rows[0].4, rows[0].6), (rows[0].1, 0));
    // Each value is the best over its successors' values: with distances this
    // pins every value down (by induction on the distance), so it is the
    // solution, not just a consistent labelling.
    for &p in full.layout.order() {
        check_consistent(&off, &full, p);
    }
    check_folded_and_expanded(&on, &solved, &off, &full, 300);
}

/// Folding by symmetry changes no value: a direct comparison with an unfolded solve.
#[test]
#[ignore = "solves 3.1 M positions unfolded: half a minute of CPU"]
fn folding_matches_unfolded_max_3() {
    let on = Morris::new(3, true).unwrap();
    let off = Morris::new(3, false).unwrap();
    let solved_off = solve_game(&off, &Progress::hidden()).unwrap();
    let solved_on = solve_game(&on, &Progress::hidden()).unwrap();
    let expanded = expand(&on, &off, &solved_on);
    assert!(
        expanded.values == solved_off.values,
        "symmetry=on and off disagree"
    );
    check_consistent(&off, &solved_off, Morris::partition_of(3, 3));
}

/// max=4 (81 M indices): run with `cargo test --test all morris::solve_max_4 -- --ignored --exact`.
/// Measured on the shared 2-core development machine (load ~9): solve 285 s wall,
/// 3 min CPU for the whole test including the full 3-3/4-3 consistency check.
#[test]
#[ignore = "builds 81 M indices; minutes on 2 cores"]
fn solve_max_4() {
    let on = Morris::new(4, true).unwrap();
    let off = Morris::new(4, false).unwrap();
    let solved = solve_and_report(&on);
    eprintln!("every position:");
    let full = expand(&on, &off, &solved);
    report(&off, &full);
    let t = std::time::Instant::now();
    for (k1, k2) in [(3, 3), (4, 3)] {
        check_consistent(&off, &full, Morris::partition_of(k1, k2));
    }
    eprintln!("3-3 and 4-3 consistency checked in {:.1?}", t.elapsed());
    check_folded_and_expanded(&on, &solved, &off, &full, 200);
}

/// max=4 without symmetry folding, for timing against folding.
#[test]
#[ignore = "builds 81 M positions; many minutes on 2 cores"]
fn solve_max_4_unfolded() {
    let off = Morris::new(4, false).unwrap();
    let solved = solve_and_report(&off);
    for (k1, k2) in [(3, 3), (4, 3)] {
        check_consistent(&off, &solved, Morris::partition_of(k1, k2));
    }
    check_hand_made(&off, &solved);
}
