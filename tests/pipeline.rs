//! The external-memory path gives the in-memory solver's bytes, on a cyclic
//! synthetic game (draws, cycles, moves across partitions) where every pass matters.

use crate::common;

use std::time::Duration;
use tbforge::game::GameInfo;
use tbforge::pipeline::{ExternalPlan, ScratchDisks};
use tbforge::solve::{solve_game, solve_game_external, Progress};
use tbforge::{Game, GameKind, PartitionId, Rank, Status, Value};

/// Positions `(partition, i)`; partition 1 moves into itself and into 0.
struct Graph {
    kind: GameKind,
    sizes: [u64; 2],
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
    for (chunk, lookup_chunk, capacity, disks, checkpoint_every) in [
        (64, 192, 37, 2, hourly),
        (4096, 3 * 4096, 1 << 20, 1, every_boundary),
        (1 << 23, 1 << 26, 61, 3, every_boundary),
    ] {
        let dirs: Vec<_> = (0..disks)
            .map(|d| tmp.path().join(format!("disk{d}")))
            .collect();
        let scratch = ScratchDisks::open(&dirs, &format!("{chunk}")).unwrap();
        let plan = ExternalPlan {
            checkpoint_every,
            chunk,
            lookup_chunk,
            run_capacity: capacity,
        };
        let external = solve_game_external(&g, &scratch, plan, &Progress::hidden()).unwrap();
        assert_eq!(
            external, memory,
            "chunk {chunk}, capacity {capacity}, {disks} disks"
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
