//! The external-memory path gives the in-memory solver's bytes, on a cyclic
//! synthetic game (draws, cycles, moves across partitions) where every pass matters.

use crate::common;

use std::time::Duration;
use tbforge::game::{GameInfo, Layout};
use tbforge::pipeline::{
    solve_partition_external, ByteFile, ExternalPlan, IoStats, PassCheckpoint, ScratchDisks,
};
use tbforge::solve::{solve_game, solve_game_external, Progress};
use tbforge::{Game, GameKind, PartitionId, Rank, Status, Value};

/// Positions `(partition, i)`; partition 1 moves into itself and into 0.
struct Graph {
    kind: GameKind,
    sizes: [u64; 2],
    /// Whether it claims that no successor leaves its partition (a broken
    /// contract: partition 1 moves into 0).
    omits_successors: bool,
}

impl Game for Graph {
    type Position = (u32, u64);
    type Move = u8;

    fn info(&self) -> GameInfo {
        common::plain_info("graph", self.kind)
    }
    fn partitions(&self) -> Vec<PartitionId> {
        vec![PartitionId(0), PartitionId(1)]
    }
    fn partition_size(&self, p: PartitionId) -> u64 {
        self.sizes[p.0 as usize]
    }
    fn partition_name(&self, p: PartitionId) -> String {
        format!("g{}", p.0)
    }
    fn successor_partitions(&self, _: PartitionId) -> Option<Vec<PartitionId>> {
        self.omits_successors.then(Vec::new)
    }
    fn unrank(&self, p: PartitionId, r: Rank) -> Option<(u32, u64)> {
        (r.0 % 41 != 7).then_some((p.0, r.0))
    }
    fn rank(&self, pos: &(u32, u64)) -> (PartitionId, Rank) {
        (PartitionId(pos.0), Rank(pos.1))
    }
    fn status(&self, &(p, i): &(u32, u64)) -> Status {
        match (i % 17, i % 29) {
            (0, _) if self.kind == GameKind::Puzzle => Status::Goal,
            (0, _) => Status::Lost,
            (_, 5) if self.kind == GameKind::TwoPlayer && p == 1 => Status::Drawn,
            _ => Status::Ongoing,
        }
    }
    fn successors(&self, &(p, i): &(u32, u64), out: &mut Vec<(u8, (u32, u64))>) {
        let n = self.sizes[p as usize];
        let legal = |j: u64, n: u64| if j % 41 == 7 { (j + 1) % n } else { j };
        out.push((0, (p, legal((i * 7 + 3) % n, n))));
        if i % 5 != 0 {
            out.push((1, (p, legal((i * 5 + 1) % n, n))));
        }
        if i % 4 == 1 {
            out.push((2, (p, legal((i + 1) % n, n))));
        }
        if p == 1 && i % 3 == 0 {
            out.push((3, (0, legal((i * 11) % self.sizes[0], self.sizes[0]))));
        }
    }
    fn start(&self) -> Option<(u32, u64)> {
        Some((1, 1))
    }
    fn parse_position(&self, _: &str) -> tbforge::Result<(u32, u64)> {
        unimplemented!("not needed by these tests")
    }
    fn format_position(&self, pos: &(u32, u64)) -> String {
        format!("{pos:?}")
    }
    fn format_move(&self, _: &(u32, u64), m: &u8) -> String {
        m.to_string()
    }
}

fn check(kind: GameKind) {
    let g = Graph {
        kind,
        sizes: [3001, 5003],
        omits_successors: false,
    };
    let memory = solve_game(&g, &Progress::hidden()).unwrap().values;
    let distinct: std::collections::BTreeSet<u8> = memory.iter().flatten().copied().collect();
    assert!(
        distinct.len() > 6,
        "the game must exercise many distances: {distinct:?}"
    );
    assert!(distinct.contains(&Value::DRAW.to_byte()));
    let tmp = tempfile::tempdir().unwrap();
    // Small ranges: write buffers only grouped by bucket; large ones (over
    // the pipeline's 32 MiB cache allowance): sorted inside each bucket.
    // Progress made durable at every chunk and bucket boundary, except with
    // 64-position chunks: there its syncs took 39 s of the test's 40.
    let (every_boundary, hourly) = (Duration::ZERO, Duration::from_secs(3600));
    // Each with the first scan's requests through run files, and answered
    // from the earlier partition's values in memory.
    for (chunk, lookup_chunk, capacity, disks, checkpoint_every, first_scan_values) in [
        (64, 192, 37, 2, hourly),
        (4096, 3 * 4096, 1 << 20, 1, every_boundary),
        (1 << 23, 1 << 26, 61, 3, every_boundary),
    ]
    .into_iter()
    .flat_map(|c| [(c, 0), (c, u64::MAX)])
    .map(|((a, b, c, d, e), f)| (a, b, c, d, e, f))
    {
        let dirs: Vec<_> = (0..disks)
            .map(|d| tmp.path().join(format!("disk{d}")))
            .collect();
        let scratch = ScratchDisks::open(&dirs, &format!("{chunk}-{first_scan_values}")).unwrap();
        let plan = ExternalPlan {
            checkpoint_every,
            chunk,
            lookup_chunk,
            run_capacity: capacity,
            first_scan_values,
        };
        let external = solve_game_external(&g, &scratch, plan, &Progress::hidden()).unwrap();
        assert_eq!(
            external, memory,
            "chunk {chunk}, capacity {capacity}, {disks} disks, first scan's values {first_scan_values}"
        );
        if disks > 1 {
            for d in scratch.dirs() {
                assert!(
                    std::fs::read_dir(d).unwrap().count() > 0,
                    "{} unused",
                    d.display()
                );
            }
        }
    }
}

#[test]
fn external_two_player_equals_in_memory() {
    check(GameKind::TwoPlayer);
}

#[test]
fn external_puzzle_equals_in_memory() {
    check(GameKind::Puzzle);
}

/// Pass ends are recorded only when a checkpoint is due (and at the first
/// scan's end and the last pass's), so a build resumes from a pass's end
/// older than its scratch: later passes' values are written. Redone from
/// there, each pass decides what it decided the first time, and the
/// partition ends with the same values.
#[test]
fn a_partition_resumed_from_an_old_pass_end_ends_the_same() {
    for kind in [GameKind::TwoPlayer, GameKind::Puzzle] {
        let g = Graph {
            kind,
            sizes: [3001, 5003],
            omits_successors: false,
        };
        let plan = |checkpoint_every| ExternalPlan {
            checkpoint_every,
            chunk: 4096,
            lookup_chunk: 3 * 4096,
            run_capacity: 1 << 20,
            first_scan_values: 0,
        };
        // Checkpoints an hour apart: the first scan's end and the last
        // pass's are recorded, none between.
        let tmp = tempfile::tempdir().unwrap();
        let scratch = ScratchDisks::open(&[tmp.path().to_path_buf()], "sparse").unwrap();
        let layout = Layout::new(&g).unwrap();
        solve_slot(&g, &layout, &scratch, 0, plan(Duration::ZERO), None);
        let sparse = solve_slot(
            &g,
            &layout,
            &scratch,
            1,
            plan(Duration::from_secs(3600)),
            None,
        );
        let passes: Vec<u32> = sparse.iter().map(|(c, _)| c.next_pass).collect();
        assert!(
            passes.len() == 2 && passes[0] == 1 && passes[1] > 4,
            "{kind:?}: pass ends recorded {passes:?}"
        );
        let tried = resume_from_every_pass_end(&g, plan(Duration::ZERO));
        assert!(tried as u32 > passes[1], "{kind:?}: {tried} resumes");
    }
}

/// The same of every partition of Nine Men's Morris with three pieces a
/// side at most, chunked as a 16 MiB budget cuts it: a build killed at
/// random there once resumed to other bytes (a pass after every distance
/// the first scan saw decided nothing when redone, and ended the partition
/// early).
#[test]
fn morris_partitions_resumed_from_every_pass_end_end_the_same() {
    use tbforge::game::morris::Morris;
    let g = Morris::from_params(&common::raw_params(&[("max", "3")])).unwrap();
    // First scans answered in memory (the budget's default), and through
    // run files.
    for first_scan_values in [8 << 20, 0] {
        let plan = ExternalPlan {
            checkpoint_every: Duration::ZERO,
            first_scan_values,
            ..ExternalPlan::for_mem_limit(16 << 20)
        };
        let tried = resume_from_every_pass_end(&g, plan);
        assert!(tried > 30, "{tried} resumes");
    }
}

/// A partition killed at one of its pass ends (its scratch as the kill
/// left it, the first scan's distance lists among it) resumes from there
/// to the values of a run never killed: the lists a resumed build reads
/// again mark the candidates an uninterrupted run's do. Every pass end of
/// every partition of Morris with three pieces a side at most.
#[test]
fn morris_partitions_killed_at_a_pass_end_resume_with_their_lists() {
    use tbforge::game::morris::Morris;
    let g = Morris::from_params(&common::raw_params(&[("max", "3")])).unwrap();
    let plan = ExternalPlan {
        checkpoint_every: Duration::ZERO,
        ..ExternalPlan::for_mem_limit(16 << 20)
    };
    let layout = Layout::new(&g).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let scratch = ScratchDisks::open(&[tmp.path().to_path_buf()], "killed").unwrap();
    let (mut tried, mut with_lists) = (0, 0);
    for slot in 0..layout.len() {
        let ends = solve_slot(&g, &layout, &scratch, slot, plan, None);
        let done = values_of(&layout, &scratch, slot);
        for (end, _) in &ends {
            // Run again from nothing, stopped as the pass end is recorded.
            let stopped = solve_reporting(&g, (&layout, &scratch, slot), plan, None, &mut |c| {
                if c.within.is_none() && c.next_pass == end.next_pass {
                    return Err(tbforge::Error::NotAvailable("killed".into()));
                }
                Ok(())
            });
            assert!(
                stopped.is_err(),
                "pass end {} not recorded again",
                end.next_pass
            );
            with_lists += usize::from(lists_index_exists(tmp.path()));
            solve_slot(&g, &layout, &scratch, slot, plan, Some(end.clone()));
            assert!(
                values_of(&layout, &scratch, slot) == done,
                "partition {}: killed at pass {}'s end and resumed, the values differ",
                g.partition_name(layout.order()[slot]),
                end.next_pass
            );
            tried += 1;
        }
    }
    assert!(
        tried > 20 && with_lists > 20,
        "{tried} resumes, {with_lists} with lists"
    );
}

/// Whether a distance lists' index lies anywhere under `dir`.
fn lists_index_exists(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            lists_index_exists(&path)
        } else {
            path.to_string_lossy().ends_with(".lists.index")
        }
    })
}

/// Solves `game`'s partition `slot` through the pipeline from `resume`;
/// returns the pass ends it recorded, each with the partition's values then.
fn solve_slot<G: Game>(
    game: &G,
    layout: &Layout,
    scratch: &ScratchDisks,
    slot: usize,
    plan: ExternalPlan,
    resume: Option<PassCheckpoint>,
) -> Vec<(PassCheckpoint, Vec<u8>)> {
    let mut ends = Vec::new();
    solve_reporting(game, (layout, scratch, slot), plan, resume, &mut |c| {
        if c.within.is_none() {
            ends.push((c, values_of(layout, scratch, slot)));
        }
        Ok(())
    })
    .unwrap();
    ends
}

/// Solves partition `slot` through the pipeline from `resume`, handing
/// each checkpoint to `report` (whose error stops the solve).
fn solve_reporting<G: Game>(
    game: &G,
    (layout, scratch, slot): (&Layout, &ScratchDisks, usize),
    plan: ExternalPlan,
    resume: Option<PassCheckpoint>,
    report: &mut dyn FnMut(PassCheckpoint) -> tbforge::Result<()>,
) -> tbforge::Result<()> {
    solve_partition_external(
        game,
        layout,
        scratch,
        slot,
        plan,
        &Progress::hidden(),
        &IoStats::default(),
        resume,
        report,
    )
}

/// Partition `slot`'s values as its scratch holds them.
fn values_of(layout: &Layout, scratch: &ScratchDisks, slot: usize) -> Vec<u8> {
    let size = layout.size(slot);
    let mut v = vec![0u8; size as usize];
    ByteFile::open_existing_parts(&scratch.values_path(slot), size)
        .unwrap()
        .read_at(0, &mut v)
        .unwrap();
    v
}

/// Solves every partition of `game` through the pipeline under `plan`,
/// keeping each pass end's values; then resumes each partition from each
/// of its pass ends over the values of a later one (as a build killed
/// after passes it had not recorded finds them), and the partition must
/// end with the same values. Returns how many resumes it tried.
fn resume_from_every_pass_end<G: Game>(game: &G, plan: ExternalPlan) -> usize {
    let layout = Layout::new(game).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let scratch = ScratchDisks::open(&[tmp.path().to_path_buf()], "every").unwrap();
    let mut tried = 0;
    for slot in 0..layout.len() {
        let ends = solve_slot(game, &layout, &scratch, slot, plan, None);
        let done = values_of(&layout, &scratch, slot);
        for (k, (from, _)) in ends.iter().enumerate() {
            for (later, written) in ends.iter().skip(k + 1).take(2) {
                let size = layout.size(slot);
                ByteFile::create_or_open_parts(&scratch.values_path(slot), size)
                    .unwrap()
                    .write_at(0, written)
                    .unwrap();
                solve_slot(game, &layout, &scratch, slot, plan, Some(from.clone()));
                let got = values_of(&layout, &scratch, slot);
                assert!(
                    got == done,
                    "partition {}: resumed from pass {} over the values of pass {}'s end, the values differ",
                    game.partition_name(layout.order()[slot]),
                    from.next_pass,
                    later.next_pass
                );
                tried += 1;
            }
        }
    }
    tried
}

/// Every checkpoint inside partition `slot`'s first scan under `plan`
/// (checkpoints due at every boundary), in order: the scan runs once and
/// stops at its end.
fn checkpoints_inside_first_scan<G: Game>(
    game: &G,
    layout: &Layout,
    scratch: &ScratchDisks,
    slot: usize,
    plan: ExternalPlan,
) -> Vec<PassCheckpoint> {
    let mut inside = Vec::new();
    let ended = solve_reporting(game, (layout, scratch, slot), plan, None, &mut |c| {
        if c.next_pass > 0 {
            return Err(tbforge::Error::NotAvailable("stopped".into()));
        }
        inside.push(c);
        Ok(())
    });
    assert!(ended.is_err(), "the scan's end was not recorded");
    inside
}

/// A first scan interrupted inside resumes to the values of one never
/// interrupted, whichever way either run answers its requests (through run
/// files, or from the earlier partitions' values held in memory): each
/// way's checkpoints mean to the other what they mean to itself. Each run
/// stops at the checkpoint after the one it resumes from (or at the scan's
/// end), so its scratch is ahead of the checkpoint, as a killed build's is.
/// Where an uninterrupted scan keeps distance lists, a resumed one keeps
/// them too, the chunks it had done listed again from disk, and its passes
/// mark their candidates from them.
#[test]
fn first_scans_interrupted_inside_resume_exactly_either_way() {
    use tbforge::game::morris::Morris;
    let g = Morris::from_params(&common::raw_params(&[("max", "3")])).unwrap();
    let layout = Layout::new(&g).unwrap();
    let plan = |first_scan_values, checkpoint_every| ExternalPlan {
        checkpoint_every,
        chunk: 16_384,
        lookup_chunk: 4 * 16_384,
        run_capacity: 4096,
        first_scan_values,
    };
    let tmp = tempfile::tempdir().unwrap();
    let scratch = ScratchDisks::open(&[tmp.path().to_path_buf()], "inside").unwrap();
    let (mut resumed, mut crossed, mut listed) = (0, 0, 0);
    for slot in 0..layout.len() {
        let hourly = Duration::from_secs(3600);
        let at = (&layout, &scratch, slot);
        let uninterrupted = lists_at_scan_end(&g, at, plan(0, hourly), None, tmp.path());
        let done = values_of(&layout, &scratch, slot);
        for (first, then) in [(0, u64::MAX), (u64::MAX, 0), (u64::MAX, u64::MAX)] {
            let every = plan(first, Duration::ZERO);
            let inside = checkpoints_inside_first_scan(&g, &layout, &scratch, slot, every);
            for (k, from) in inside.iter().enumerate() {
                // Run again up to the next checkpoint, or the scan's end.
                let mut seen = 0;
                let at = (&layout, &scratch, slot);
                let stopped = solve_reporting(&g, at, every, None, &mut |_| {
                    seen += 1;
                    if seen > k + 1 {
                        return Err(tbforge::Error::NotAvailable("killed".into()));
                    }
                    Ok(())
                });
                assert!(stopped.is_err());
                let lists =
                    lists_at_scan_end(&g, at, plan(then, hourly), Some(from.clone()), tmp.path());
                // A resumed scan leaves the question whether positions are
                // left for the passes to them, so it keeps lists where an
                // uninterrupted one may not.
                assert!(
                    lists || !uninterrupted,
                    "partition {}: first scan resumed from {from:?} kept no distance lists",
                    g.partition_name(layout.order()[slot])
                );
                listed += usize::from(lists && from.within.is_some());
                assert!(
                    values_of(&layout, &scratch, slot) == done,
                    "partition {}: first scan with first_scan_values {first} resumed from {from:?} with {then}: the values differ",
                    g.partition_name(layout.order()[slot])
                );
                resumed += 1;
                crossed += usize::from(first != then);
            }
        }
    }
    assert!(
        resumed > 30 && crossed > 20 && listed > 20,
        "{resumed} resumes, {crossed} across, {listed} with lists"
    );
}

/// Solves partition `slot` through the pipeline from `resume`; returns
/// whether a distance lists' index lay under `dir` as the first scan's end
/// was recorded.
fn lists_at_scan_end<G: Game>(
    game: &G,
    at: (&Layout, &ScratchDisks, usize),
    plan: ExternalPlan,
    resume: Option<PassCheckpoint>,
    dir: &std::path::Path,
) -> bool {
    let mut lists = false;
    solve_reporting(game, at, plan, resume, &mut |c| {
        if c.within.is_none() && c.next_pass == 1 {
            lists = lists_index_exists(dir);
        }
        Ok(())
    })
    .unwrap();
    lists
}

/// A game whose list of successor partitions leaves one out fails a first
/// scan answered in memory with an error naming both partitions, not with
/// values from a partition it did not hold; through run files the list
/// plays no part, and the same game solves.
#[test]
fn a_successor_outside_the_listed_partitions_is_a_clear_error() {
    let g = Graph {
        kind: GameKind::TwoPlayer,
        sizes: [3001, 5003],
        omits_successors: true,
    };
    let tmp = tempfile::tempdir().unwrap();
    let plan = |first_scan_values| ExternalPlan {
        checkpoint_every: Duration::from_secs(3600),
        chunk: 4096,
        lookup_chunk: 3 * 4096,
        run_capacity: 1 << 20,
        first_scan_values,
    };
    let scratch = ScratchDisks::open(&[tmp.path().join("held")], "held").unwrap();
    let failed = solve_game_external(&g, &scratch, plan(u64::MAX), &Progress::hidden());
    let text = failed
        .expect_err("a successor outside the list")
        .to_string();
    assert!(
        text.contains("from partition g1 leads to partition g0")
            && text.contains("successor_partitions"),
        "{text}"
    );
    let scratch = ScratchDisks::open(&[tmp.path().join("runs")], "runs").unwrap();
    let through_runs = solve_game_external(&g, &scratch, plan(0), &Progress::hidden()).unwrap();
    assert_eq!(
        through_runs,
        solve_game(&g, &Progress::hidden()).unwrap().values
    );
}
