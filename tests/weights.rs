//! A game whose indices stand for several positions each (as a symmetry-class
//! index's do): the manifest counts classes one each and positions by the
//! game's weights, build and verify agree on both, in memory and through the
//! external pipeline (counted chunk by chunk and block by block, so that
//! exceptions are found by rank), and verify catches weighted counts that
//! were altered.
//! # Source: the game below is made up for this test; its counts are worked
//! out by hand in `counts_are_classes_and_weighted_positions`.

use crate::common;

use tbforge::format::{info, read_manifest, render_info_text, write_manifest, Manifest, Totals};
use tbforge::game::GameInfo;
use tbforge::pipeline::ExternalPlan;
use tbforge::solve::{build_game, read_stages, BuildOptions, Solver};
use tbforge::verify::{verify_dir, verify_game_dir, VerifyOptions};
use tbforge::{Game, GameKind, PartitionId, Rank, Status, Weights};

/// Piles of take-one-or-two: index `hi * 100 + lo` is pile `hi` (an inert
/// label, 0..1500) holding `lo` tokens; `lo` in 0..=30 is legal, the rest of
/// each hundred is unused. The side to move with no tokens has lost.
///
/// Weights: 16 positions per index, but 1 where `lo` is 0, 8 where it is 5,
/// and 3 at `lo` 50 (unused: it must count nowhere). 150,000 indices span
/// three 65,536-index blocks, so verify meets exceptions in every block.
#[derive(Clone, Debug)]
struct Piles;

const PILES: u64 = 1500;

impl Game for Piles {
    type Position = (u64, u64);
    type Move = u64;
    fn info(&self) -> GameInfo {
        common::plain_info("piles", GameKind::TwoPlayer)
    }
    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0)]
    }
    fn partition_size(&self, _: PartitionId) -> u64 {
        PILES * 100
    }
    fn partition_name(&self, _: PartitionId) -> String {
        "all".into()
    }
    fn unrank(&self, _: PartitionId, r: Rank) -> Option<(u64, u64)> {
        (r.0 % 100 <= 30).then_some((r.0 / 100, r.0 % 100))
    }
    fn rank(&self, &(hi, lo): &(u64, u64)) -> (PartitionId, Rank) {
        (PartitionId(0), Rank(hi * 100 + lo))
    }
    fn status(&self, &(_, lo): &(u64, u64)) -> Status {
        if lo == 0 {
            Status::Lost
        } else {
            Status::Ongoing
        }
    }
    fn successors(&self, &(hi, lo): &(u64, u64), out: &mut Vec<(u64, (u64, u64))>) {
        for take in [1, 2] {
            if take <= lo {
                out.push((take, (hi, lo - take)));
            }
        }
    }
    fn start(&self) -> Option<(u64, u64)> {
        None
    }
    fn parse_position(&self, text: &str) -> tbforge::Result<(u64, u64)> {
        let (hi, lo) = text.split_once(':').unwrap();
        Ok((hi.parse().unwrap(), lo.parse().unwrap()))
    }
    fn format_position(&self, &(hi, lo): &(u64, u64)) -> String {
        format!("{hi}:{lo}")
    }
    fn format_move(&self, _: &(u64, u64), mv: &u64) -> String {
        format!("-{mv}")
    }
    fn weights(&self, _: PartitionId) -> Weights {
        let mut exceptions = Vec::new();
        for hi in 0..PILES {
            for (lo, w) in [(0, 1), (5, 8), (50, 3)] {
                exceptions.push((Rank(hi * 100 + lo), w));
            }
        }
        Weights {
            common: 16,
            exceptions,
        }
    }
}

fn build(external: bool) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path());
    if external {
        // Chunks that split the partition between exceptions.
        opts.external_plan = Some(ExternalPlan {
            chunk: 16_384,
            lookup_chunk: 32_768,
            run_capacity: 1024,
            first_scan_values: u64::MAX,
            checkpoint_every: std::time::Duration::ZERO,
        });
    }
    build_game(&Piles, &opts).unwrap();
    let m = read_manifest(dir.path()).unwrap();
    (dir, m)
}

fn verify(dir: &std::path::Path) -> tbforge::verify::VerifyReport {
    verify_game_dir(&Piles, dir, &VerifyOptions::default()).unwrap()
}

#[test]
fn counts_are_classes_and_weighted_positions() {
    let (dir, m) = build(false);
    let f = &m.files[0];
    // Per pile: 31 legal indices, lo % 3 == 0 lost (11: 0, 3, ..., 30), the
    // other 20 won.
    assert_eq!(f.index_size, PILES * 100);
    assert_eq!(f.classes, PILES * 31);
    assert_eq!(f.illegal, PILES * 69);
    assert_eq!(f.index_size, f.classes + f.illegal);
    assert_eq!(
        (f.class_wins, f.class_draws, f.class_losses),
        (PILES * 20, 0, PILES * 11)
    );
    // Weighted: 16 each, less 15 at lo 0 (a loss) and 8 at lo 5 (a win);
    // the weight at lo 50 is an unused index's and counts nowhere.
    assert_eq!(f.wins, PILES * (20 * 16 - 8));
    assert_eq!(f.losses, PILES * (11 * 16 - 15));
    assert_eq!(f.draws, 0);
    assert_eq!(f.positions, PILES * (31 * 16 - 15 - 8));
    assert_eq!(f.positions, f.wins + f.draws + f.losses);
    // The slow way: one weight look-up per legal index.
    let w = Piles.weights(PartitionId(0));
    let slow: u64 = (0..f.index_size)
        .filter(|&r| r % 100 <= 30)
        .map(|r| w.at(Rank(r)))
        .sum();
    assert_eq!(slow, f.positions);
    assert_eq!(m.totals, Totals::sum(&m.files));
    assert_eq!(m.totals.positions, f.positions);

    let r = verify(dir.path());
    assert!(r.ok, "{r:#?}");
    let deep = verify_game_dir(
        &Piles,
        dir.path(),
        &VerifyOptions {
            deep: true,
            ..VerifyOptions::default()
        },
    )
    .unwrap();
    assert!(deep.ok && deep.positions_sampled > 0, "{deep:#?}");

    // info: classes and positions both, a totals row.
    let report = info(dir.path()).unwrap();
    let text = render_info_text(&report);
    assert!(
        text.contains("positions   709500 legal in 46500 classes (103500 illegal)\n"),
        "{text}"
    );
    assert!(text.contains("index       150000 indices\n"), "{text}");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("file "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0][..4], ["file", "indices", "classes", "positions"]);
    assert_eq!(rows[1][..4], ["all.tbf", "150000", "46500", "709500"]);
    assert_eq!(rows[2][..4], ["total", "150000", "46500", "709500"]);
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(
        (&v["index_size"], &v["classes"], &v["positions"]),
        (&150_000.into(), &46_500.into(), &709_500.into())
    );

    // The build log names the stages' counts the manifest holds.
    let stages = read_stages(dir.path()).unwrap();
    assert_eq!(stages.partitions.len(), 1);
    let p = &stages.partitions[0];
    assert_eq!(
        (
            p.sizes.index_size,
            p.sizes.classes,
            p.sizes.positions,
            p.work.bytes,
            p.solver
        ),
        (
            f.index_size,
            f.classes,
            f.positions,
            f.bytes,
            Solver::Generic
        )
    );
}

#[test]
fn external_build_counts_chunk_by_chunk_the_same() {
    let (memory, m) = build(false);
    let (external, e) = build(true);
    assert_eq!(m, e);
    assert_eq!(
        std::fs::read(memory.path().join("manifest.json")).unwrap(),
        std::fs::read(external.path().join("manifest.json")).unwrap()
    );
    assert!(verify(external.path()).ok);
    let stages = read_stages(external.path()).unwrap();
    assert_eq!(stages.partitions[0].solver, Solver::External);
}

#[test]
fn verify_catches_altered_weighted_counts() {
    let (dir, m) = build(false);
    // A win moved to the losses, sums kept: the manifest is consistent in
    // itself and its class counts are right; only the weights tell.
    let mut bad = m.clone();
    bad.files[0].wins -= 16;
    bad.files[0].losses += 16;
    bad.totals = Totals::sum(&bad.files);
    write_manifest(dir.path(), &bad).unwrap();
    let r = verify(dir.path());
    assert!(!r.ok);
    assert!(r.manifest_failures.is_empty(), "{:?}", r.manifest_failures);
    let failures = &r.files[0].failures;
    assert!(
        failures
            .iter()
            .any(|x| x.message.contains("weigh to positions")),
        "{failures:?}"
    );

    // Positions that are not the sum of their outcomes: the manifest itself.
    let mut bad = m.clone();
    bad.files[0].positions += 1;
    bad.totals = Totals::sum(&bad.files);
    write_manifest(dir.path(), &bad).unwrap();
    let r = verify(dir.path());
    assert!(r
        .manifest_failures
        .iter()
        .any(|x| x.contains("wins + draws + losses != positions")));

    // The manifest as built passes again.
    write_manifest(dir.path(), &m).unwrap();
    assert!(verify(dir.path()).ok);
    // Without the game (the registry has none of this name) the classes are
    // still checked, and the manifest fails for naming an unknown game.
    let r = verify_dir(dir.path(), false).unwrap();
    assert!(r.files[0].failures.is_empty(), "{:?}", r.files[0].failures);
    assert!(r
        .manifest_failures
        .iter()
        .any(|x| x.contains("cannot be opened")));
}
