//! The Morris partition solver in GPU form (game::morris::retro, CPU twin of
//! kernels/retro.cu) gives exactly the bytes of the generic solver
//! (solve::solve_partition), partition by partition, through the game's
//! kernels. No GPU needed: on a GPU machine `tbforge bench gpu` runs the same
//! comparison with the CUDA kernels.

use std::collections::BTreeMap;

use tbforge::game::morris::kernels::spec_of;
use tbforge::game::morris::Morris;
use tbforge::game::{Device, SolvedPartitions};
use tbforge::solve::{solve_partition, Layout, Progress};
use tbforge::Game;

fn compare(max: u32, symmetry: &str) -> usize {
    let mut p = BTreeMap::new();
    p.insert("max".to_string(), max.to_string());
    p.insert("symmetry".to_string(), symmetry.to_string());
    let game = Morris::from_params(&p).unwrap();
    let layout = Layout::new(&game).unwrap();
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut accelerated = 0;
    for slot in 0..layout.len() {
        let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
        let cpu = solve_partition(&game, &layout, &deps, slot, &Progress::hidden()).unwrap();
        let p = layout.order()[slot];
        let name = game.partition_name(p);
        let before = SolvedPartitions::from_slots(&layout.order()[..slot], &deps);
        match kernels.solve(p, &before) {
            Some(twin) => {
                let twin = twin.unwrap();
                assert_eq!(twin.len(), cpu.len(), "{name}");
                let diff = (0..cpu.len()).find(|&i| cpu[i] != twin[i]);
                assert!(
                    diff.is_none(),
                    "{name}: first difference at {diff:?}: cpu {} twin {}",
                    cpu[diff.unwrap()],
                    twin[diff.unwrap()]
                );
                accelerated += 1;
            }
            None => assert!(name.starts_with("2-"), "{name} was declined"),
        }
        assert!(spec_of(&game, p).is_some() != name.starts_with("2-"));
        solved[slot] = Some(cpu);
    }
    accelerated
}

#[test]
fn twin_matches_solver_max3_symmetry_off() {
    assert_eq!(compare(3, "off"), 1);
}

#[test]
fn twin_matches_solver_max3_symmetry_on() {
    assert_eq!(compare(3, "on"), 1);
}
