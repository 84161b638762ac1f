//! The Connect Four partition solver in GPU form (game::connect4::twin, CPU
//! twin of kernels/connect4.cu) gives exactly the bytes of the generic solver
//! (solve::solve_partition), partition by partition, through the game's
//! kernels; and a whole build with the kernels writes the same files as one
//! without. No GPU needed: on a GPU machine `tbforge bench gpu` runs the same
//! comparison with the CUDA kernel.

mod common;

use common::{assert_same, assert_same_values, contents, cpu_values, raw_params, solve_in_order};
use std::sync::Arc;

use tbforge::game::connect4::kernels::Connect4Kernels;
use tbforge::game::connect4::twin::{Connect4SolveSpec, Connect4Twin};
use tbforge::game::connect4::Connect4;
use tbforge::game::{Device, PartitionKernels, SolvedPartitions};
use tbforge::solve::{build_game, BuildOptions, Layout};
use tbforge::Game;

fn game(width: u32, height: u32) -> Connect4 {
    let (width, height) = (width.to_string(), height.to_string());
    Connect4::from_params(&raw_params(&[("width", &width), ("height", &height)])).unwrap()
}

/// Solves partitions from the full board down (both solvers reading the CPU
/// solver's values), comparing each accelerated partition; stops once
/// `max_size` is passed. Returns the number compared.
fn compare(width: u32, height: u32, max_size: u64) -> usize {
    let game = game(width, height);
    let layout = Layout::new(&game).unwrap();
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let mut compared = 0;
    // Some win was compared (not only illegal, lost and drawn bytes).
    let mut decided = false;
    solve_in_order(&game, &layout, |slot, name, deps, before| {
        if layout.size(slot) > max_size {
            return None;
        }
        let cpu = cpu_values(&game, &layout, deps, slot);
        let name = format!("{width}x{height} {name}");
        let twin = kernels
            .solve(layout.order()[slot], before)
            .unwrap_or_else(|| panic!("{name}: declined"))
            .unwrap();
        assert_same_values(&name, ("cpu", &cpu), ("twin", &twin.values));
        decided |= cpu.iter().any(|&v| v >= 3);
        compared += 1;
        Some(cpu)
    });
    assert!(
        decided,
        "{width}x{height}: no win among the compared partitions"
    );
    compared
}

#[test]
fn twin_matches_solve_partition_4x4() {
    assert_eq!(compare(4, 4, u64::MAX), 17);
}

#[test]
fn twin_matches_solve_partition_5x4_and_4x5() {
    assert_eq!(compare(5, 4, u64::MAX), 21);
    assert_eq!(compare(4, 5, u64::MAX), 21);
}

/// The full board (5.2 M indices) and 24 pieces (13.5 M).
#[test]
fn twin_matches_solve_partition_5x5_top() {
    assert_eq!(compare(5, 5, 16_000_000), 2);
}

#[test]
fn every_partition_is_covered_and_other_games_have_no_kernels() {
    // The twin's per-index function covers exactly each partition: its size
    // is the game's.
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
    // A missing dependency is an error, not a panic.
    let p = layout.order()[2];
    let err = kernels
        .solve(p, &SolvedPartitions::default())
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("not solved before it"), "{err}");
    // Wrong-sized dependency values are refused.
    let spec = Connect4SolveSpec::new(4, 4, 15).unwrap();
    assert!(Connect4Twin::new(spec, Some(&[2u8; 3])).is_err());
}

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
