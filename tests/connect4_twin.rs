//! The Connect Four kernels in GPU form (game::connect4::twin, CPU twins of
//! kernels/connect4.cu), through the game's kernels:
//! - the forward search step `expand` sets exactly the bits of the generic
//!   layered search, ply by ply;
//! - the compact solve gives exactly the generic solver's bytes
//!   (solve::solve_partition_reached) at the reached indices of every ply;
//! - a whole build with the kernels writes the same files as one without.
//!
//! No GPU needed: on a GPU machine `tbforge bench gpu` runs the same
//! comparisons with the CUDA kernels.

use crate::common;

use common::{assert_same, assert_same_values, contents, cpu_values, raw_params};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tbforge::game::connect4::kernels::Connect4Kernels;
use tbforge::game::connect4::twin::{self, Connect4SolveSpec, Connect4Tables, Kind};
use tbforge::game::connect4::Connect4;
use tbforge::game::{Device, PartitionKernels, PartitionValues, ReachedValues, SolvedPartitions};
use tbforge::solve::{
    build_game, layered_search, solve_partition_reached, BuildOptions, Layout, Progress,
};
use tbforge::Game;
use tbforge::PartitionId;

fn game(width: u32, height: u32) -> Connect4 {
    let (width, height) = (width.to_string(), height.to_string());
    Connect4::from_params(&raw_params(&[("width", &width), ("height", &height)])).unwrap()
}

/// The generic layered search's reached bits, by ply.
fn generic_reached(game: &Connect4, layout: &Layout) -> Vec<Vec<u64>> {
    let kernels: Option<&dyn PartitionKernels> = None;
    let found = layered_search(game, layout, kernels, &Progress::hidden())
        .unwrap()
        .unwrap();
    let cells = game.width() * game.height();
    (0..=cells)
        .map(|n| {
            let slot = layout.slot(PartitionId(n)).unwrap();
            let b = &found.bits[slot];
            (0..b.word_count()).map(|w| b.word(w)).collect()
        })
        .collect()
}

/// The twin expand, ply by ply from the empty board, equals the generic
/// layered search bit for bit; so does the search run through the kernels.
fn compare_expand(width: u32, height: u32) {
    let game = game(width, height);
    let layout = Layout::new(&game).unwrap();
    let t = std::time::Instant::now();
    let want = generic_reached(&game, &layout);
    let generic_seconds = t.elapsed().as_secs_f64();
    let cells = width * height;
    let tables = Connect4Tables::new(Connect4SolveSpec::new(width, height, 0).unwrap()).unwrap();
    let mut plies: Vec<Vec<AtomicU64>> = (0..=cells)
        .map(|n| {
            (0..tables.size(n).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        })
        .collect();
    *plies[0][0].get_mut() = 1;
    for n in 0..cells {
        let reached: Vec<u64> = plies[n as usize]
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        let spec = Connect4SolveSpec::new(width, height, n).unwrap();
        twin::expand(spec, &reached, Some(&plies[n as usize + 1])).unwrap();
    }
    for (n, (ply, want)) in plies.iter_mut().zip(&want).enumerate() {
        let got: Vec<u64> = ply.iter_mut().map(|w| *w.get_mut()).collect();
        assert_eq!(
            &got, want,
            "{width}x{height} ply{n:02}: twin expand differs from the generic search"
        );
    }
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let kernels: Option<&dyn PartitionKernels> = Some(&kernels);
    let t = std::time::Instant::now();
    let through = layered_search(&game, &layout, kernels, &Progress::hidden())
        .unwrap()
        .unwrap();
    eprintln!(
        "{width}x{height}: layered search {generic_seconds:.3} s generic, {:.3} s through the twin",
        t.elapsed().as_secs_f64()
    );
    for n in 0..=cells {
        let slot = layout.slot(PartitionId(n)).unwrap();
        let b = &through.bits[slot];
        let got: Vec<u64> = (0..b.word_count()).map(|w| b.word(w)).collect();
        assert_eq!(
            got, want[n as usize],
            "{width}x{height} ply{n:02}: the search through the kernels differs"
        );
    }
}

#[test]
fn twin_expand_matches_the_layered_search_4x4_and_5x4() {
    compare_expand(4, 4);
    compare_expand(5, 4);
}

/// Every ply solved from the full board down, only where reached: the
/// generic solver from the generic values of ply n + 1 (one byte per index),
/// the kernels from the same ply n + 1 held compact. Returns the plies
/// compared.
fn compare_compact(width: u32, height: u32) -> usize {
    let game = game(width, height);
    let layout = Layout::new(&game).unwrap();
    let reached = generic_reached(&game, &layout);
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut compact: Option<ReachedValues> = None;
    // Some win was compared (not only illegal, lost and drawn bytes).
    let mut decided = false;
    for slot in 0..layout.len() {
        let p = layout.order()[slot];
        let n = p.0 as usize;
        let deps: Vec<Option<PartitionValues>> = solved
            .iter()
            .map(|v| v.as_deref().map(PartitionValues::Full))
            .collect();
        let generic = solve_partition_reached(
            &game,
            &layout,
            &deps,
            slot,
            Some(&reached[n]),
            &Progress::hidden(),
        )
        .unwrap();
        let mut before = SolvedPartitions::default().with_reached(&reached[n]);
        if let Some(c) = &compact {
            before = before.with_compact([(PartitionId(p.0 + 1), c.view())]);
        }
        let name = format!("{width}x{height} {}", game.partition_name(p));
        let got = kernels
            .solve(p, &before)
            .unwrap_or_else(|| panic!("{name}: declined"))
            .unwrap();
        assert!(got.compact, "{name}: not compact");
        let want = ReachedValues::from_full(reached[n].clone(), &generic);
        assert_same_values(
            &name,
            ("generic", want.view().values),
            ("twin", &got.values),
        );
        decided |= got.values.iter().any(|&v| v >= 3 && v % 2 == 1);
        compact = Some(ReachedValues::from_compact(reached[n].clone(), got.values).unwrap());
        solved[slot] = Some(generic);
    }
    assert!(decided, "{width}x{height}: no win among the compared plies");
    layout.len()
}

#[test]
fn compact_twin_matches_the_generic_solver_4x4() {
    assert_eq!(compare_compact(4, 4), 17);
}

#[test]
fn compact_twin_matches_the_generic_solver_5x4_and_4x5() {
    assert_eq!(compare_compact(5, 4), 21);
    assert_eq!(compare_compact(4, 5), 21);
}

/// The full board (5.2 M indices) and 24 pieces (13.5 M), every legal index
/// taken as reached: the wide indices of a larger board.
#[test]
fn compact_twin_matches_the_generic_solver_5x5_top() {
    let game = game(5, 5);
    let layout = Layout::new(&game).unwrap();
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let none: Vec<Option<&[u8]>> = vec![None; layout.len()];
    let full = cpu_values(&game, &layout, &none, 0);
    let mut deps = none.clone();
    deps[0] = Some(&full);
    let top = cpu_values(&game, &layout, &deps, 1);
    // Every legal position has a non-zero byte.
    let legal = |v: &[u8]| -> Vec<u64> {
        v.chunks(64)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u64, |w, (i, &b)| w | (u64::from(b != 0) << i))
            })
            .collect()
    };
    let full_bits = legal(&full);
    let got = kernels
        .solve(
            PartitionId(25),
            &SolvedPartitions::default().with_reached(&full_bits),
        )
        .unwrap()
        .unwrap();
    let full_compact = ReachedValues::from_full(full_bits.clone(), &full);
    assert_same_values(
        "5x5 ply25",
        ("cpu", full_compact.view().values),
        ("twin", &got.values),
    );
    let top_bits = legal(&top);
    let got = kernels
        .solve(
            PartitionId(24),
            &SolvedPartitions::default()
                .with_reached(&top_bits)
                .with_compact([(PartitionId(25), full_compact.view())]),
        )
        .unwrap()
        .unwrap();
    let want = ReachedValues::from_full(top_bits, &top);
    assert_same_values(
        "5x5 ply24",
        ("cpu", want.view().values),
        ("twin", &got.values),
    );
    assert!(got.values.iter().any(|&v| v >= 3 && v % 2 == 1));
}

#[test]
fn every_ply_is_covered_and_bad_inputs_are_errors() {
    // The twin's per-index function covers exactly each ply: its size is
    // the game's.
    let g = game(4, 4);
    let layout = Layout::new(&g).unwrap();
    let kernels = Connect4Kernels::new(&g, &Device::Cpu).unwrap();
    for slot in 0..layout.len() {
        let spec = kernels.spec_of(layout.order()[slot]).unwrap();
        assert_eq!(spec.n, layout.order()[slot].0);
    }
    let ttt = common::open("tictactoe", &[]);
    struct NoKernels;
    impl tbforge::registry::GameVisitor for NoKernels {
        type Output = bool;
        fn visit<G: Game>(self, game: &G) -> bool {
            game.kernels(&Device::Cpu).unwrap().is_none()
        }
    }
    assert!(ttt.visit(NoKernels));
    let p = PartitionId(14);
    let bits = vec![0u64; layout.size(layout.slot(p).unwrap()).div_ceil(64) as usize];
    // Without reached bits the generic solver takes the ply.
    assert!(kernels.solve(p, &SolvedPartitions::default()).is_none());
    // Ply n + 1 held one byte per index: declined too.
    let next = vec![1u8; layout.size(layout.slot(PartitionId(15)).unwrap()) as usize];
    let full = SolvedPartitions::new([(PartitionId(15), next.as_slice())]).with_reached(&bits);
    assert!(kernels.solve(p, &full).is_none());
    // A missing dependency is an error, not a panic.
    let err = kernels
        .solve(p, &SolvedPartitions::default().with_reached(&bits))
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("not solved before it"), "{err}");
    // Too few reached words are refused.
    let err = kernels
        .solve(
            PartitionId(16),
            &SolvedPartitions::default().with_reached(&[]),
        )
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("words"), "{err}");
    // A reached illegal index is a broken contract, as in the generic search.
    let spec = Connect4SolveSpec::new(4, 4, 8).unwrap();
    let tables = Connect4Tables::new(spec).unwrap();
    let illegal = (0..tables.size(8))
        .find(|&r| tables.kind(8, r) == Kind::Illegal)
        .unwrap();
    let mut reached = vec![0u64; tables.size(8).div_ceil(64) as usize];
    reached[(illegal / 64) as usize] |= 1 << (illegal % 64);
    let next: Vec<AtomicU64> = (0..tables.size(9).div_ceil(64))
        .map(|_| AtomicU64::new(0))
        .collect();
    let err = twin::expand(spec, &reached, Some(&next)).unwrap_err();
    assert!(err.to_string().contains("illegal"), "{err}");
    // A move to an index ply n + 1 does not hold is a broken input.
    let ongoing = (0..tables.size(8))
        .find(|&r| tables.kind(8, r) == Kind::Ongoing)
        .unwrap();
    reached.fill(0);
    reached[(ongoing / 64) as usize] |= 1 << (ongoing % 64);
    let empty = ReachedValues::unsolved(vec![0; tables.size(9).div_ceil(64) as usize]);
    let err = kernels
        .solve(
            PartitionId(8),
            &SolvedPartitions::default()
                .with_reached(&reached)
                .with_compact([(PartitionId(9), empty.view())]),
        )
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("did not reach"), "{err}");
}

/// Needs the generic build to store layered partitions compact (it takes
/// `KernelSolve::compact` values and hands ply n + 1 to the kernels with
/// `SolvedPartitions::with_compact`), which main is adding; until then the
/// build offers the kernels ply n + 1 one byte per index, they decline every
/// ply but the full board, and the full board's compact values break it.
#[test]
fn build_with_twin_kernels_writes_the_same_files() {
    let g = game(5, 4);
    let dir = tempfile::tempdir().unwrap();
    let cpu_dir = dir.path().join("cpu");
    let acc_dir = dir.path().join("acc");
    build_game(&g, &BuildOptions::new(&cpu_dir)).unwrap();
    let mut opts = BuildOptions::new(&acc_dir);
    opts.kernels = Some(Arc::new(Connect4Kernels::new(&g, &Device::Cpu).unwrap()));
    let report = build_game(&g, &opts).unwrap();
    assert_eq!(report.accelerated_partitions, 21);
    let cpu = contents(&cpu_dir);
    assert!(cpu.len() > 21);
    assert_same(&contents(&acc_dir), &cpu, "built with the twin kernels");
}
