//! Builds by a team of members (the threads stand in for MPI ranks: the same
//! build code, collectives through shared memory): byte-identical to the
//! build of one process for any number of members, a failing member stops
//! the others with an error instead of a hang, and a build stopped that way
//! resumes with another number of members to the same bytes.

use crate::common;

use common::{assert_same, contents, open, Files};
use std::path::Path;
use std::sync::Arc;
use tbforge::dist::{Team, ThreadTeam};
use tbforge::game::Device;
use tbforge::pipeline::ExternalPlan;
use tbforge::registry::{AnyGame, GameVisitor};
use tbforge::solve::{build_game, BuildOptions, BuildReport};
use tbforge::Game;

/// Builds with the game's CPU kernels (its twins) where it has any.
struct WithKernels(BuildOptions);

impl GameVisitor for WithKernels {
    type Output = tbforge::Result<BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let mut opts = self.0;
        opts.kernels = game.kernels(&Device::Cpu)?;
        build_game(game, &opts)
    }
}

/// `g` built into `out` by `members` threads of one team; each member's
/// options changed by `tweak(rank, options)`.
fn team_build(
    g: &AnyGame,
    out: &Path,
    members: usize,
    tweak: impl Fn(usize, &mut BuildOptions) + Sync,
) -> Vec<tbforge::Result<BuildReport>> {
    let team = ThreadTeam::new(members);
    std::thread::scope(|s| {
        let handles: Vec<_> = team
            .into_iter()
            .enumerate()
            .map(|(rank, member)| {
                let tweak = &tweak;
                s.spawn(move || {
                    let mut opts = BuildOptions::new(out);
                    opts.team = Some(Arc::new(member) as Arc<dyn Team>);
                    tweak(rank, &mut opts);
                    g.visit(WithKernels(opts))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn solo_build(g: &AnyGame, out: &Path) {
    g.visit(WithKernels(BuildOptions::new(out))).unwrap();
}

/// The files of `g` built into `out` by one process.
fn solo_contents(g: &AnyGame, out: &Path) -> Files {
    solo_build(g, out);
    contents(out)
}

/// Builds `g` into `out` by `stop` members with a directory in the way of
/// file `blocked` (its writer fails mid-build, and every member must stop),
/// then resumes it with `resume` members (one: a process of its own), each
/// member's options changed by `tweak`. The resumed build must keep
/// partitions from before and end with the bytes of `expected`. Returns the
/// stopped members' errors.
fn stop_and_resume(
    g: &AnyGame,
    out: &Path,
    blocked: &str,
    (stop, resume): (usize, usize),
    tweak: impl Fn(usize, &mut BuildOptions) + Sync,
    expected: &Files,
) -> Vec<String> {
    std::fs::create_dir_all(out.join(blocked)).unwrap();
    let started = std::time::Instant::now();
    let errors: Vec<String> = team_build(g, out, stop, &tweak)
        .iter()
        .map(|r| r.as_ref().expect_err("every member stops").to_string())
        .collect();
    assert!(
        started.elapsed().as_secs() < 120,
        "the members took too long to stop"
    );
    assert!(!out.join("manifest.json").exists());
    std::fs::remove_dir(out.join(blocked)).unwrap();
    let resumed = if resume == 1 {
        let mut opts = BuildOptions::new(out);
        tweak(0, &mut opts);
        opts.resume = true;
        g.visit(WithKernels(opts)).unwrap()
    } else {
        team_build(g, out, resume, |rank, o| {
            tweak(rank, o);
            o.resume = true;
        })
        .into_iter()
        .map(|r| r.unwrap())
        .next()
        .unwrap()
    };
    assert!(resumed.resumed_partitions > 0, "nothing was kept");
    assert_same(
        &contents(out),
        expected,
        &format!("resumed by {resume} after {stop} members stopped"),
    );
    errors
}

#[test]
fn any_number_of_members_writes_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    for (name, params) in [
        // Layered (forward search, kernels' twins split or handed over).
        ("connect4", &[("width", "4"), ("height", "4")][..]),
        // Retrograde passes inside partitions, the Morris twins.
        ("morris", &[("max", "4")][..]),
        // The generic solver's passes, split over the members.
        ("foreandaft", &[][..]),
        ("nim", &[("heaps", "3,4,5")][..]),
    ] {
        let g = open(name, params);
        let expected = solo_contents(&g, &dir.path().join(format!("{name}-solo")));
        // Morris by three members only: its external passes are the slow
        // part of this test, and two members split it as Connect Four's do.
        let counts: &[usize] = if name == "morris" { &[3] } else { &[2, 3] };
        for &members in counts {
            let out = dir.path().join(format!("{name}-{members}"));
            let reports: Vec<_> = team_build(&g, &out, members, |_, _| {})
                .into_iter()
                .map(|r| r.unwrap())
                .collect();
            assert_same(
                &contents(&out),
                &expected,
                &format!("{name} by {members} members"),
            );
            assert!(reports.iter().all(|r| r.ranks == members));
            assert!(
                reports[0].communication.bytes_received > 0,
                "{name}: the members exchanged nothing"
            );
            // The leader's build log holds every partition, whoever wrote it.
            assert_eq!(reports[0].partitions.len(), reports[0].files);
        }
    }
}

/// Partitions that do not read each other solved side by side, one member
/// each (as GPUs do, forced here on the CPU twins): the bytes of one process,
/// and the rounds really ran (the build log names who solved what).
#[test]
fn partitions_solved_side_by_side_write_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let g = open("morris", &[("max", "5")]);
    let expected = solo_contents(&g, &dir.path().join("solo"));
    {
        let members = 2;
        let out = dir.path().join(format!("side-{members}"));
        let reports: Vec<_> = team_build(&g, &out, members, |_, o| o.side_by_side = Some(true))
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_same(
            &contents(&out),
            &expected,
            &format!("side by side, {members} members"),
        );
        let by: Vec<Option<usize>> = reports[0]
            .partitions
            .iter()
            .map(|p| p.work.solved_by)
            .collect();
        // 4-4 and 5-3 read neither each other nor anything after 4-3.
        for name in ["4-4", "5-3"] {
            let stage = reports[0]
                .partitions
                .iter()
                .find(|p| p.name == name)
                .unwrap();
            assert!(
                stage.work.solved_by.is_some(),
                "{name} was not solved side by side: {by:?}"
            );
        }
        let members_used: std::collections::BTreeSet<usize> =
            by.iter().flatten().copied().collect();
        assert_eq!(members_used.len(), members, "{by:?}");
        // 5-4 reads 5-3 and 4-4: alone in its round, split among all.
        let stage = reports[0]
            .partitions
            .iter()
            .find(|p| p.name == "5-4")
            .unwrap();
        assert_eq!(stage.work.solved_by, None, "{by:?}");
    }
    // Three members, stopped by a failing writer after the first rounds
    // (whose files they wrote), resumed by two: the same bytes.
    stop_and_resume(
        &g,
        &dir.path().join("side-resumed"),
        "5-4.tbf",
        (3, 2),
        |_, o| o.side_by_side = Some(true),
        &expected,
    );
}

#[test]
fn a_failing_member_stops_the_others_and_the_build_resumes_with_another_count() {
    let dir = tempfile::tempdir().unwrap();
    let g = open("connect4", &[("width", "4"), ("height", "4")]);
    let solo = dir.path().join("solo");
    solo_build(&g, &solo);
    let expected = contents(&solo);

    // A directory in the way of ply 9's file: its writer fails mid-build.
    let errors = stop_and_resume(
        &g,
        &dir.path().join("team"),
        "ply09.tbf",
        (2, 3),
        |_, _| {},
        &expected,
    );
    // The writer names the file; the other member says who stopped it.
    assert!(errors.iter().any(|e| e.contains("ply09.tbf")), "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("failed") && e.contains("--resume")),
        "{errors:?}"
    );
}

/// The external-memory pipeline on a team: each partition solved whole by one member through its
/// own scratch (under `--disk DIR/rankN`), its values sent to the others. Same bytes as one
/// process in memory, with 2 and 3 members, a failure stops everyone, and a resume with another
/// number of members (whose new member has no scratch) finishes with the same bytes.
#[test]
fn external_builds_by_a_team_write_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = |_: usize, o: &mut BuildOptions| {
        o.external_plan = Some(ExternalPlan {
            chunk: 4096,
            // Sixteen chunks a lookup range: the candidate bits of Morris
            // 3-3 (170 K indices) fit, so its passes expand their candidates
            // alone (11 s for the test, 76 s expanding every pending position).
            lookup_chunk: 16 * 4096,
            run_capacity: 1024,
            // Requests through run files (a first scan answered in memory:
            // tests/build.rs and tests/pipeline.rs).
            first_scan_values: 0,
            // The members keep no checkpoints within a partition anyway.
            checkpoint_every: std::time::Duration::from_secs(3600),
        });
    };
    for (name, params) in [
        ("connect4", &[("width", "4"), ("height", "4")][..]),
        ("morris", &[("max", "3")][..]),
    ] {
        let g = open(name, params);
        let expected = solo_contents(&g, &dir.path().join(format!("{name}-solo")));
        // Morris by three members only: its external passes are the slow
        // part of this test, and two members split it as Connect Four's do.
        let counts: &[usize] = if name == "morris" { &[3] } else { &[2, 3] };
        for &members in counts {
            let out = dir.path().join(format!("{name}-ext-{members}"));
            let disk = dir.path().join(format!("{name}-disk-{members}"));
            let reports: Vec<_> = team_build(&g, &out, members, |rank, o| {
                tiny(rank, o);
                o.disks = vec![disk.clone()];
            })
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
            assert_same(
                &contents(&out),
                &expected,
                &format!("{name} external by {members} members"),
            );
            assert!(reports.iter().all(|r| r.mode == "external"));
            assert!(reports[1].communication.bytes_received > 0);
            // Each member's scratch is gone, its directory too.
            assert_eq!(std::fs::read_dir(&disk).unwrap().count(), 0, "{name}");
        }
    }

    // A directory in the way of ply 9's file stops 2 members; 3 resume.
    // Stopped again by 3 members, resumed by one process (whose scratch is
    // not the members').
    let g = open("connect4", &[("width", "4"), ("height", "4")]);
    let expected = contents(&dir.path().join("connect4-solo"));
    for (stop, resume) in [(2, 3), (3, 1)] {
        stop_and_resume(
            &g,
            &dir.path().join(format!("ext-resumed-{stop}-{resume}")),
            "ply09.tbf",
            (stop, resume),
            tiny,
            &expected,
        );
    }
}

#[test]
fn members_that_disagree_on_the_build_stop_with_an_error() {
    // Member 1 is told to copy from a directory that does not exist: it
    // fails before its first collective, the leader must not wait forever.
    let dir = tempfile::tempdir().unwrap();
    let g = open("tictactoe", &[]);
    let out = dir.path().join("team");
    let missing = dir.path().join("nowhere");
    let results = team_build(&g, &out, 2, |rank, o| {
        if rank == 1 {
            o.from = Some(missing.clone());
        }
    });
    assert!(results.iter().all(|r| r.is_err()), "{results:?}");
    let leader = results[0].as_ref().unwrap_err().to_string();
    assert!(leader.contains("rank 1 failed"), "{leader}");
}
