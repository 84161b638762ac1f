//! The checkers kernels' CPU twin (src/game/checkers/twin.rs, the twin of
//! kernels/checkers.cu): its solve against the generic solver's bytes,
//! partition by partition, and its successor lists against the game's rules
//! on random positions. The GPU side is compared with the twin by
//! `tbforge bench gpu checkers` (scripts/gpu_check.sh).
#![cfg(feature = "build")]

use std::collections::BTreeMap;

use tbforge::game::checkers::twin::{successors_lists, CheckersTables, NONE};
use tbforge::game::checkers::Checkers;
use tbforge::game::{Device, DeviceCheckOptions, SolvedPartitions};
use tbforge::hash::SplitMix64;
use tbforge::solve::{solve_partition, Layout, Progress};
use tbforge::{Game, Rank};

fn material(m: &str) -> Checkers {
    let raw = BTreeMap::from([("material".to_string(), m.to_string())]);
    Checkers::from_params(&raw).unwrap()
}

/// Every partition of `game` solved in order by the generic solver and by
/// the kernels' twin from the same earlier values: the same bytes. Returns
/// the positions compared.
fn twin_equals_generic(game: &Checkers) -> u64 {
    let kernels = game
        .kernels(&Device::Cpu)
        .unwrap()
        .expect("checkers has kernels");
    let layout = Layout::new(game).unwrap();
    let progress = Progress::new(false);
    let mut done: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut positions = 0;
    let mut passes = 0;
    for slot in 0..layout.len() {
        let p = layout.order()[slot];
        let solved: Vec<Option<&[u8]>> = done.iter().map(|v| v.as_deref()).collect();
        let want = solve_partition(game, &layout, &solved, slot, &progress).unwrap();
        let given = SolvedPartitions::from_slots(layout.order(), &solved);
        let got = kernels
            .solve(p, &given)
            .expect("the kernels take every checkers partition")
            .unwrap();
        if let Some(i) = (0..want.len()).find(|&i| want.get(i) != got.values.get(i)) {
            panic!(
                "{}: rank {i} of {}: twin {:?}, generic {:?}",
                game.partition_name(p),
                want.len(),
                got.values.get(i),
                want.get(i)
            );
        }
        assert_eq!(got.values.len(), want.len());
        passes = passes.max(got.passes.unwrap_or(0));
        positions += want.len() as u64;
        done[slot] = Some(want);
    }
    // Passes ran: the comparison covered the passes, not only first scans.
    assert!(
        passes > 2,
        "{}: at most {passes} passes",
        game.info().canonical()
    );
    positions
}

#[test]
fn twin_solve_is_the_generic_solvers_bytes_up_to_three_pieces() {
    let game = Checkers::with_pieces(3).unwrap();
    assert_eq!(twin_equals_generic(&game), 120 + 6_972 + 261_224);
}

#[test]
fn twin_solve_is_the_generic_solvers_bytes_on_four_piece_materials() {
    // Kings only (long multi-jumps both ways, many passes), and a man that
    // crowns, captures into smaller materials and changes its leading row
    // (both sides' men, whose zones overlap, are in the three-piece test).
    for m in ["KKvKK", "MvKKK"] {
        let game = material(m);
        let t = std::time::Instant::now();
        let n = twin_equals_generic(&game);
        eprintln!("{m}: {n} positions, {:?}", t.elapsed());
        assert!(n > 100_000, "{m}");
    }
}

/// The twin's successor lists (partition id and rank of each, in order)
/// are the rules' (the game's successors, ranked by the game), on random
/// positions of every partition of a 7-piece material with many kings
/// (multi-jumps, crowning captures, both leading-row layouts).
#[test]
fn twin_successors_are_the_rules_on_random_positions() {
    let game = material("KKMMvKKM");
    let mut rng = SplitMix64::new(19);
    let (mut checked, mut captures, mut multi) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    for p in game.partitions() {
        let t = CheckersTables::new(&game, p).unwrap();
        let ranks: Vec<u64> = (0..24).map(|_| rng.below(t.size)).collect();
        let lists = successors_lists(&t, &ranks);
        for (&r, (n, list)) in ranks.iter().zip(&lists) {
            let pos = game.unrank(p, Rank(r)).unwrap();
            out.clear();
            game.successors(&pos, &mut out);
            let want: Vec<(u32, u64)> = out
                .iter()
                .map(|(_, next)| {
                    let (q, rank) = game.rank(next);
                    if game.partition_size(q) > 0 {
                        (q.0, rank.0)
                    } else {
                        (NONE, u64::MAX)
                    }
                })
                .collect();
            assert_eq!(
                *n as usize,
                want.len(),
                "{} rank {r}",
                game.partition_name(p)
            );
            assert_eq!(list, &want, "{} rank {r}", game.partition_name(p));
            checked += 1;
            if out.first().is_some_and(|(m, _)| m.capture) {
                captures += 1;
                multi += u64::from(out.iter().any(|(m, _)| m.path().len() > 2));
            }
        }
    }
    // The sample holds what the walk must get right.
    assert!(checked > 10_000, "{checked}");
    assert!(captures > 1_000, "{captures} captures");
    assert!(multi > 50, "{multi} multi-jumps");
}

/// A partition solved without the earlier partitions its moves read is an
/// error naming it, not a panic or a wrong byte.
#[test]
fn a_missing_dependency_is_an_error() {
    let game = Checkers::with_pieces(3).unwrap();
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let last = *game.partitions().last().unwrap();
    let err = kernels
        .solve(last, &SolvedPartitions::default())
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("not solved"), "{err}");
}

/// `tbforge bench gpu checkers --device cpu`: the check's own dry run, the
/// twin in the device's place, compares and matches.
#[test]
fn device_check_dry_run_matches() {
    let game = Checkers::with_pieces(3).unwrap();
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let opts = DeviceCheckOptions {
        seed: 7,
        samples: 1 << 12,
        work_log2: 14,
        ..Default::default()
    };
    let report = kernels.device_check(&opts).unwrap();
    let table = report.render_table();
    assert!(report.all_matched(), "{table}");
    // Lists, checksum, the streamed path's three rows (first scan, pass,
    // pass without values) on each of its partitions, and one solve row per
    // piece count.
    assert_eq!(report.compared(), 2 + 3 * 4 + 3, "{table}");
}

/// Distances beyond a value byte: every partition of a four-piece material
/// solved by the twin with bytes holding distances up to 9 plies only
/// (saturated bytes beyond, exact distances in the long lists, dependencies'
/// lists read through), and with full bytes: after widening, the same
/// values at every index. The build's ceiling is 253 plies, which only
/// seven pieces pass; a low one puts small databases on the same path.
#[test]
fn long_distances_beyond_a_low_ceiling_are_exact() {
    use std::collections::HashMap;
    use tbforge::game::checkers::twin::{self, widen};
    let game = material("MvKKK");
    let layout = Layout::new(&game).unwrap();
    type Solved = (Vec<u8>, Vec<(u64, u32)>);
    let mut full: HashMap<tbforge::PartitionId, Solved> = HashMap::new();
    let mut low: HashMap<tbforge::PartitionId, Solved> = HashMap::new();
    let mut long_total = 0;
    for &p in layout.order() {
        let mut t = CheckersTables::new(&game, p).unwrap();
        for j in 0..t.deps.len() {
            if !full.contains_key(&t.deps[j]) {
                t.mark_missing(j);
            }
        }
        let solve = |done: &HashMap<_, Solved>, ceiling| {
            let empty = (Vec::new(), Vec::new());
            let at = |d| done.get(d).unwrap_or(&empty);
            let deps: Vec<&[u8]> = t.deps.iter().map(|d| at(d).0.as_slice()).collect();
            let long: Vec<&[(u64, u32)]> = t.deps.iter().map(|d| at(d).1.as_slice()).collect();
            let s = twin::solve(&game, &t, &deps, &long, ceiling).unwrap();
            (s.values, s.long)
        };
        let a = solve(&full, tbforge::Value::MAX_DISTANCE);
        let b = solve(&low, 9);
        assert!(a.1.is_empty(), "{}", game.partition_name(p));
        assert!(b.1.iter().all(|&(r, d)| d > 9 && b.0[r as usize] >= 10));
        assert_eq!(
            widen(&a.0, &a.1),
            widen(&b.0, &b.1),
            "{}",
            game.partition_name(p)
        );
        long_total += b.1.len();
        full.insert(p, a);
        low.insert(p, b);
    }
    // The path ran: many positions are deeper than 9 plies.
    assert!(long_total > 1000, "{long_total} long distances");
}
