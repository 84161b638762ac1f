//! The Connect Four partition solver in GPU form (game::connect4::twin, CPU
//! twin of kernels/connect4.cu) gives exactly the bytes of the generic solver
//! (solve::solve_partition), partition by partition, through the game's
//! kernels; and a whole build with the kernels writes the same files as one
//! without. No GPU needed: on a GPU machine `tbforge bench gpu` runs the same
//! comparison with the CUDA kernel.

use std::collections::BTreeMap;
use std::sync::Arc;

use tbforge::game::connect4::kernels::Connect4Kernels;
use tbforge::game::connect4::twin::{Connect4SolveSpec, Connect4Twin};
use tbforge::game::connect4::Connect4;
use tbforge::game::{Device, PartitionKernels, SolvedPartitions};
use tbforge::solve::{build_game, solve_partition, BuildOptions, Layout, Progress};
use tbforge::Game;

fn game(width: u32, height: u32) -> Connect4 {
    let mut p = BTreeMap::new();
    p.insert("width".to_string(), width.to_string());
    p.insert("height".to_string(), height.to_string());
    Connect4::from_params(&p).unwrap()
}

/// Solves partitions from the full board down (both solvers reading the CPU
/// solver's values), comparing each accelerated partition; stops once
/// `max_size` is passed. Returns the number compared.
fn compare(width: u32, height: u32, max_size: u64) -> usize {
    let game = game(width, height);
    let layout = Layout::new(&game).unwrap();
    let kernels = Connect4Kernels::new(&game, &Device::Cpu).unwrap();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut compared = 0;
    // Some win was compared (not only illegal, lost and drawn bytes).
    let mut decided = false;
    for slot in 0..layout.len() {
        if layout.size(slot) > max_size {
            break;
        }
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let cpu = solve_partition(&game, &layout, &deps, slot, &Progress::hidden()).unwrap();
        let name = game.partition_name(layout.order()[slot]);
        let before = SolvedPartitions::from_slots(&layout.order()[..slot], &deps);
        let twin = kernels
            .solve(layout.order()[slot], &before)
            .unwrap_or_else(|| panic!("{width}x{height} {name}: declined"))
            .unwrap();
        assert_eq!(twin.len(), cpu.len(), "{width}x{height} {name}");
        if let Some(i) = (0..cpu.len()).find(|&i| cpu[i] != twin[i]) {
            panic!(
                "{width}x{height} {name}: first difference at index {i}: cpu {} twin {}",
                cpu[i], twin[i]
            );
        }
        decided |= cpu.iter().any(|&v| v >= 3);
        compared += 1;
        solved[slot] = Some(cpu);
    }
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
    let ttt = tbforge::registry::open_game("tictactoe", &BTreeMap::new()).unwrap();
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
    let mut names: Vec<_> = std::fs::read_dir(&cpu_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "build-log.json")
        .collect();
    names.sort();
    assert!(names.len() > 21);
    for n in names {
        let a = std::fs::read(cpu_dir.join(&n)).unwrap();
        let b = std::fs::read(acc_dir.join(&n)).unwrap();
        assert!(a == b, "{n:?} differs");
    }
}
