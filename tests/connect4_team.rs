//! Connect Four plies split over a team (the CPU twins; threads stand in for
//! GPUs or MPI ranks): `solve_team` on every member returns exactly what
//! `solve` returns, ply by ply, also where some members' slices are empty;
//! and whole builds by 2 and 3 members write the bytes of one build.

use crate::common;

use common::{assert_same, contents, open, raw_params};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tbforge::dist::{Team, ThreadTeam};
use tbforge::game::connect4::kernels::Connect4Kernels;
use tbforge::game::connect4::twin::{self, Connect4SolveSpec, Connect4Tables};
use tbforge::game::connect4::Connect4;
use tbforge::game::{Device, PartitionKernels, ReachedValues, SolvedPartitions};
use tbforge::registry::{AnyGame, GameVisitor};
use tbforge::solve::{build_game, BuildOptions, BuildReport};
use tbforge::{Game, PartitionId};

fn c4(width: u32, height: u32) -> Connect4 {
    let (w, h) = (width.to_string(), height.to_string());
    Connect4::from_params(&raw_params(&[("width", &w), ("height", &h)])).unwrap()
}

/// Every ply's reached bits, by the twin's forward search from the empty board.
fn reached_plies(width: u32, height: u32) -> Vec<Vec<u64>> {
    let cells = width * height;
    let tables = Connect4Tables::new(Connect4SolveSpec::new(width, height, 0).unwrap()).unwrap();
    let plies: Vec<Vec<AtomicU64>> = (0..=cells)
        .map(|n| {
            (0..tables.size(n).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        })
        .collect();
    plies[0][0].store(1, Ordering::Relaxed);
    for n in 0..cells as usize {
        let reached: Vec<u64> = plies[n].iter().map(|w| w.load(Ordering::Relaxed)).collect();
        let spec = Connect4SolveSpec::new(width, height, n as u32).unwrap();
        twin::expand(spec, &reached, Some(&plies[n + 1])).unwrap();
    }
    plies
        .iter()
        .map(|p| p.iter().map(|w| w.load(Ordering::Relaxed)).collect())
        .collect()
}

#[test]
fn every_member_returns_the_solve_of_the_whole_ply() {
    for (width, height) in [(4, 4), (5, 4)] {
        let game = c4(width, height);
        let solo = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
        let plies = reached_plies(width, height);
        let mut prev: Option<ReachedValues> = None;
        let mut empty_slices = 0;
        for (n, reached) in plies.iter().enumerate().rev() {
            let p = PartitionId(n as u32);
            let solved = match &prev {
                Some(next) => SolvedPartitions::new([])
                    .with_compact([(PartitionId(n as u32 + 1), next.view())]),
                None => SolvedPartitions::new([]),
            }
            .with_reached(reached);
            let want = solo.solve(p, &solved).unwrap().unwrap();
            assert!(want.compact);
            // 9 members: more than the 8-word units of the small plies.
            for members in [2, 3, 9] {
                let units = (reached.len() as u64).div_ceil(8);
                if units < members as u64 {
                    empty_slices += 1;
                }
                let team = ThreadTeam::new(members);
                let got: Vec<_> = std::thread::scope(|s| {
                    let handles: Vec<_> = team
                        .iter()
                        .map(|member| {
                            let (game, solved) = (&game, &solved);
                            s.spawn(move || {
                                let mine = Connect4Kernels::new(game, &Device::Cpu).unwrap();
                                mine.solve_team(p, solved, member).unwrap().unwrap()
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                for (rank, g) in got.iter().enumerate() {
                    let what = format!("{width}x{height} ply {n}, rank {rank} of {members}");
                    assert_eq!(g.values, want.values, "{what}");
                    assert_eq!(g.compact, want.compact, "{what}");
                    assert_eq!(g.passes, want.passes, "{what}");
                    assert_eq!(g.device_seconds, want.device_seconds, "{what}");
                }
                if members > 1 {
                    assert!(
                        team[0].stats().read().bytes_received > 0,
                        "{width}x{height} ply {n}: nothing exchanged"
                    );
                }
            }
            prev = Some(ReachedValues::from_compact(reached.clone(), want.values).unwrap());
        }
        assert!(empty_slices > 0, "no ply left a member without words");
    }
}

#[test]
fn a_split_declines_alike_and_a_team_of_one_is_the_plain_solve() {
    let game = c4(4, 4);
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let plies = reached_plies(4, 4);
    // Without reached bits: declined, on every member, before any collective.
    let team = ThreadTeam::new(2);
    let none = SolvedPartitions::new([]);
    assert!(kernels
        .solve_team(PartitionId(16), &none, &team[0])
        .is_none());
    // Ply 15 without ply 16 solved: the same error on each member, no wait.
    let solved = SolvedPartitions::new([]).with_reached(&plies[15]);
    for member in &team {
        let err = kernels.solve_team(PartitionId(15), &solved, member);
        assert!(matches!(err, Some(Err(_))));
    }
    // A team of one: the solve itself.
    let one = ThreadTeam::new(1);
    let solved = SolvedPartitions::new([]).with_reached(&plies[16]);
    let got = kernels
        .solve_team(PartitionId(16), &solved, &one[0])
        .unwrap()
        .unwrap();
    let want = kernels.solve(PartitionId(16), &solved).unwrap().unwrap();
    assert_eq!(got.values, want.values);
}

#[test]
fn word_ranges_of_the_twin_tile_its_whole_solve() {
    let plies = reached_plies(5, 4);
    let n = 10;
    let reached = &plies[n];
    let spec = Connect4SolveSpec::new(5, 4, n as u32).unwrap();
    let next = ReachedValues::from_compact(plies[n + 1].clone(), twin_values(5, 4, &plies, n + 1))
        .unwrap();
    let t = twin::Connect4Twin::new(spec, Some(next.view())).unwrap();
    let whole = t.solve(reached).unwrap();
    // Unaligned cuts too: the twin's ranges need no alignment.
    let words = reached.len() as u64;
    let cuts = [0, 1, 7, 8, 9, words / 3, words / 2 + 5, words - 1, words];
    let mut joined = Vec::new();
    for pair in cuts.windows(2) {
        let (piece, failed) = t.solve_words(reached, pair[0]..pair[1]).unwrap();
        assert_eq!(failed, 0);
        joined.extend(piece);
    }
    assert_eq!(joined, whole);
    assert!(t.solve_words(reached, 0..words + 1).is_err());
}

/// The members' slices of a ply joined by `gather_slices`: in rank order
/// and the same on every member, through shared memory and apart (as MPI
/// ranks exchange); one member's failure bits fail every member alike, and a
/// slice of the wrong length is an error on every member, never a hang.
#[test]
fn gathered_slices_join_in_rank_order_and_fail_alike() {
    let plies = reached_plies(5, 4);
    let n = 10;
    let reached = &plies[n];
    let spec = Connect4SolveSpec::new(5, 4, n as u32).unwrap();
    let total: usize = reached.iter().map(|w| w.count_ones() as usize).sum();
    let whole: Vec<u8> = (0..total).map(|i| (i * 7 + 3) as u8).collect();
    let held = ReachedValues::from_compact(reached.clone(), whole.clone()).unwrap();
    let dir = held.view().block_ranks.to_vec();
    for (members, team) in [(3, ThreadTeam::new(3)), (2, ThreadTeam::apart(2))] {
        for case in ["whole", "a member failed", "a torn slice"] {
            let (dir, whole) = (&dir, &whole);
            let got: Vec<tbforge::Result<Vec<u8>>> = std::thread::scope(|s| {
                let handles: Vec<_> = team
                    .iter()
                    .map(|member| {
                        s.spawn(move || {
                            let slots = twin::member_slots(reached, dir, member.rank(), members);
                            let mut piece = whole[slots].to_vec();
                            let last = member.rank() == members - 1;
                            let failed = if case == "a member failed" && last {
                                twin::fail::ILLEGAL_SUCCESSOR
                            } else {
                                0
                            };
                            if case == "a torn slice" && member.rank() == 0 {
                                piece.push(0);
                            }
                            twin::gather_slices(spec, reached, dir, member, failed, piece)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (rank, got) in got.into_iter().enumerate() {
                let what = format!("{case}, member {rank} of {members}");
                match case {
                    "whole" => assert_eq!(got.unwrap(), *whole, "{what}"),
                    "a member failed" => {
                        let e = got.expect_err(&what).to_string();
                        assert!(e.contains("illegal"), "{what}: {e}");
                    }
                    _ => {
                        let e = got.expect_err(&what).to_string();
                        assert!(e.contains("rank 0 sent"), "{what}: {e}");
                    }
                }
            }
        }
    }
}

/// Ply `n`'s compact values by the twin, solved down from the full board.
fn twin_values(width: u32, height: u32, plies: &[Vec<u64>], n: usize) -> Vec<u8> {
    let mut prev: Option<ReachedValues> = None;
    for m in (n..plies.len()).rev() {
        let spec = Connect4SolveSpec::new(width, height, m as u32).unwrap();
        let t = twin::Connect4Twin::new(spec, prev.as_ref().map(ReachedValues::view)).unwrap();
        let values = t.solve(&plies[m]).unwrap();
        prev = Some(ReachedValues::from_compact(plies[m].clone(), values).unwrap());
    }
    prev.unwrap().view().values.to_vec()
}

/// Builds with the game's CPU kernels (its twins).
struct WithKernels(BuildOptions);

impl GameVisitor for WithKernels {
    type Output = tbforge::Result<BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let mut opts = self.0;
        opts.kernels = game.kernels(&Device::Cpu)?;
        build_game(game, &opts)
    }
}

fn team_build(g: &AnyGame, out: &Path, members: usize) -> Vec<BuildReport> {
    let team = ThreadTeam::new(members);
    std::thread::scope(|s| {
        let handles: Vec<_> = team
            .into_iter()
            .map(|member| {
                s.spawn(move || {
                    let mut opts = BuildOptions::new(out);
                    opts.team = Some(Arc::new(member) as Arc<dyn Team>);
                    g.visit(WithKernels(opts)).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn team_builds_write_the_bytes_of_one_build() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in [("4", "4"), ("5", "4")] {
        let g = open("connect4", &[("width", w), ("height", h)]);
        let solo = dir.path().join(format!("{w}x{h}-solo"));
        g.visit(WithKernels(BuildOptions::new(&solo))).unwrap();
        let expected = contents(&solo);
        for members in [2, 3] {
            let out = dir.path().join(format!("{w}x{h}-{members}"));
            let reports = team_build(&g, &out, members);
            assert_same(
                &contents(&out),
                &expected,
                &format!("connect4 {w}x{h} by {members} members"),
            );
            assert!(reports.iter().all(|r| r.ranks == members));
            assert!(reports[0].accelerated_partitions > 0);
        }
    }
}

#[test]
fn the_device_check_compares_a_team_solve_with_the_twin() {
    let game = c4(4, 4);
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let opts = tbforge::game::DeviceCheckOptions {
        seed: 7,
        samples: 500,
        work_log2: 12,
        ..Default::default()
    };
    let report = kernels.device_check(&opts).unwrap();
    let row = report
        .rows
        .iter()
        .find(|r| r.what == "connect4_solve (team of 2)")
        .expect("a team row");
    assert_eq!(row.matched, Some(true), "{}", row.detail);
    assert!(row.cpu_seconds.is_some() && row.gpu_seconds.is_some());
    assert!(report.all_matched());
}
