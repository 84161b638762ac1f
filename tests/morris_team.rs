//! Morris partitions solved by a team (`PartitionKernels::solve_team`, the
//! CPU twins; every member a thread of a `ThreadTeam`) against the same
//! partitions solved whole (`solve`): every member of teams of 2 and 3 must
//! return exactly the whole solve's bytes, partition by partition, fed the
//! earlier partitions' values as a build feeds them (placement layers held
//! compact, solved where the forward search reached them).

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::morris;
use tbforge::dist::{slice_of, Blocks, Team, ThreadTeam};
use tbforge::game::morris::kernels::{dependencies, spec_of, TEAM_ALIGN};
use tbforge::game::morris::place::PlaceSpec;
use tbforge::game::morris::retro::CpuTwin;
use tbforge::game::morris::Morris;
use tbforge::game::{
    Device, ForwardTargets, KernelSolve, PartitionKernels, ReachedValues, SolvedPartitions,
};
use tbforge::solve::Layout;
use tbforge::Game;
use tbforge::PartitionId;

/// Partition `p` solved by a team of `n` threads: every member's answer.
/// `apart`: the members exchange as MPI ranks on several hosts (messages),
/// else they share memory as threads or ranks of one host.
fn team_solve(
    kernels: &dyn PartitionKernels,
    p: PartitionId,
    solved: &SolvedPartitions<'_>,
    n: usize,
    apart: bool,
) -> Vec<KernelSolve> {
    let team = if apart {
        ThreadTeam::apart(n)
    } else {
        ThreadTeam::new(n)
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = team
            .iter()
            .map(|member| {
                s.spawn(move || {
                    kernels
                        .solve_team(p, solved, member)
                        .expect("the kernels split what they solve")
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Checks every member's answer against the whole solve's.
fn assert_team_matches(name: &str, whole: &KernelSolve, members: &[KernelSolve]) {
    for (rank, m) in members.iter().enumerate() {
        let at = whole.values.iter().zip(&m.values).position(|(a, b)| a != b);
        assert!(
            m.values.len() == whole.values.len() && at.is_none(),
            "{name}, member {rank} of {}: {} values against {}, first difference at {at:?}",
            members.len(),
            m.values.len(),
            whole.values.len()
        );
        assert_eq!(m.compact, whole.compact, "{name}");
        assert_eq!(m.passes, whole.passes, "{name}, member {rank}");
    }
}

/// Every partition of a game's phases II/III (`max`), solved whole and by
/// teams of each size in `teams` (apart or sharing memory, see
/// `team_solve`), up to partitions of `max_size` indices.
fn phase_two(max: u32, symmetry: &str, max_size: u64, teams: &[usize], apart: bool) -> usize {
    let game = morris(max, symmetry);
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let layout = Layout::new(&game).unwrap();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut checked = 0;
    for slot in 0..layout.len() {
        let p = layout.order()[slot];
        if layout.size(slot) > max_size {
            break;
        }
        let name = game.partition_name(p);
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let before = SolvedPartitions::from_slots(&layout.order()[..slot], &deps);
        let whole = kernels.solve(p, &before).unwrap().unwrap();
        for &n in teams {
            assert_team_matches(&name, &whole, &team_solve(&*kernels, p, &before, n, apart));
        }
        checked += 1;
        solved[slot] = Some(whole.values);
    }
    checked
}

#[test]
fn team_matches_whole_max4_symmetry_on() {
    for apart in [false, true] {
        assert_eq!(phase_two(4, "on", u64::MAX, &[2, 3], apart), 5);
    }
}

#[test]
fn team_matches_whole_max4_symmetry_off() {
    // Up to 3-3 (2.7 M indices, flying: 10 s a solve on two cores), by a
    // team of 3 only; 4-3 (24 M) and 4-4 (51 M) would take minutes.
    assert_eq!(phase_two(4, "off", 1 << 23, &[3], true), 3);
}

#[test]
fn team_matches_whole_max5_symmetry_on() {
    // Up to 5-3 (5.2 M indices); 5-4 and 5-5 are larger.
    assert_eq!(phase_two(5, "on", 1 << 23, &[2], false), 7);
}

/// A team whose blocks are so coarse that some members own nothing: the
/// exchange (or the shared memory) must still give every member the whole
/// partition.
#[test]
fn team_with_empty_slices_matches_whole() {
    let game = morris(3, "on");
    let layout = Layout::new(&game).unwrap();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    for slot in 0..layout.len() {
        let p = layout.order()[slot];
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let before = SolvedPartitions::from_slots(&layout.order()[..slot], &deps);
        let whole = kernels.solve(p, &before).unwrap().unwrap();
        if let Some(spec) = spec_of(&game, p) {
            let d = dependencies(&spec, &before).unwrap();
            let size = spec.size();
            // Blocks of 2^16 indices: most of 5 members own nothing.
            let align = 1 << 16;
            let n = 5;
            assert!((0..n).any(|j| Blocks::new(size, align, n).count(j) == 0));
            for team in [ThreadTeam::apart(n), ThreadTeam::new(n)] {
                let got: Vec<Vec<u8>> = std::thread::scope(|s| {
                    let handles: Vec<_> = team
                        .iter()
                        .map(|member| {
                            let d = d.clone();
                            s.spawn(move || {
                                CpuTwin::new(spec, d)
                                    .unwrap()
                                    .solve_team(member, align)
                                    .unwrap()
                                    .value
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                for (rank, g) in got.iter().enumerate() {
                    assert!(
                        g == &whole.values,
                        "{}: member {rank}, sharing memory: {}",
                        spec.name(),
                        team[0].shares_memory()
                    );
                }
            }
        }
        solved[slot] = Some(whole.values);
    }
}

/// The whole game (`pieces`): the forward search marks where play reaches,
/// then every partition in build order, placement layers held compact as a
/// build holds them and solved where reached, whole and by teams of 2 and
/// 3. Returns the placement layers checked and how many of them had a
/// member with an empty slice.
fn whole_game(pieces: u32, symmetry: bool) -> (usize, usize) {
    let game = Morris::whole(pieces, symmetry).unwrap();
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let layout = Layout::new(&game).unwrap();
    let order = layout.order();
    let bits: Vec<Vec<AtomicU64>> = (0..layout.len())
        .map(|s| {
            (0..layout.size(s).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        })
        .collect();
    let (p0, r0) = game.rank(&game.start().unwrap());
    let slot_of = |p: PartitionId| order.iter().position(|&q| q == p).unwrap();
    bits[slot_of(p0)][(r0.0 / 64) as usize].fetch_or(1 << (r0.0 % 64), Ordering::Relaxed);
    let mut layers: Vec<PlaceSpec> = order
        .iter()
        .filter_map(|&p| PlaceSpec::of(&game, p))
        .collect();
    layers.sort_by_key(|s| s.t);
    let targets = ForwardTargets::new(order.iter().zip(&bits).map(|(&p, b)| (p, &b[..])));
    let load =
        |v: &[AtomicU64]| -> Vec<u64> { v.iter().map(|w| w.load(Ordering::Relaxed)).collect() };
    for spec in &layers {
        let reached = load(&bits[slot_of(spec.id)]);
        kernels
            .expand(spec.id, &reached, &targets)
            .unwrap()
            .unwrap();
    }
    enum Held {
        Full(Vec<u8>),
        Compact(ReachedValues),
    }
    let mut held: Vec<Option<Arc<Held>>> = vec![None; layout.len()];
    let (mut layers_checked, mut with_empty) = (0, 0);
    for slot in 0..layout.len() {
        let p = order[slot];
        let name = game.partition_name(p);
        let spec = PlaceSpec::of(&game, p);
        let mask = spec.as_ref().map(|_| load(&bits[slot]));
        let mut before =
            SolvedPartitions::new((0..slot).filter_map(|s| match held[s].as_deref()? {
                Held::Full(v) => Some((order[s], &v[..])),
                Held::Compact(_) => None,
            }))
            .with_compact((0..slot).filter_map(|s| match held[s].as_deref()? {
                Held::Compact(c) => Some((order[s], c.view())),
                Held::Full(_) => None,
            }));
        if let Some(m) = &mask {
            before = before.with_reached(m);
        }
        let whole = kernels.solve(p, &before).unwrap().unwrap();
        for n in [2, 3] {
            assert_team_matches(&name, &whole, &team_solve(&*kernels, p, &before, n, false));
            if spec.is_some()
                && (0..n).any(|j| slice_of(layout.size(slot), TEAM_ALIGN, j, n).is_empty())
            {
                with_empty += 1;
            }
        }
        layers_checked += usize::from(spec.is_some());
        held[slot] = Some(Arc::new(match mask {
            Some(m) => Held::Compact(if whole.compact {
                ReachedValues::from_compact(m, whole.values).unwrap()
            } else {
                ReachedValues::from_full(m, &whole.values)
            }),
            None => Held::Full(whole.values),
        }));
    }
    (layers_checked, with_empty)
}

#[test]
fn team_matches_whole_in_phase_one_four_pieces() {
    let (layers, with_empty) = whole_game(4, true);
    assert!(layers > 10, "{layers} placement layers");
    assert!(
        with_empty > 0,
        "no layer small enough to leave a member empty"
    );
}
