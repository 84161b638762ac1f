//! The Morris partition solver in GPU form (backend::morris_retro, CPU twin of
//! kernels/retro.cu) gives exactly the bytes of the game's own solver
//! (solve::solve_partition), partition by partition, through the build hook.
//! No GPU needed: on a GPU machine `tbforge-gpucheck solve` runs the same
//! comparison with the CUDA kernels.

use std::collections::BTreeMap;
use std::sync::Arc;

use tbforge::backend::accel::{morris_spec, CpuTwinSolver, MorrisAccelerator};
use tbforge::game::registry::{open_game, GameVisitor};
use tbforge::solve::{solve_partition, Layout, PartitionAccelerator, Progress};
use tbforge::{Error, Game};

struct Compare;

impl GameVisitor for Compare {
    type Output = usize;
    fn visit<G: Game>(self, game: &G) -> usize {
        let layout = Layout::new(game).unwrap();
        let accel = MorrisAccelerator::<G>::new(Arc::new(CpuTwinSolver));
        let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
        let mut accelerated = 0;
        for slot in 0..layout.len() {
            let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
            let cpu = solve_partition(game, &layout, &deps, slot, &Progress::hidden()).unwrap();
            let name = game.partition_name(layout.order()[slot]);
            match accel.solve_partition(game as &dyn std::any::Any, &layout, &deps, slot) {
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
            assert!(morris_spec(game, &layout, slot).is_some() != name.starts_with("2-"));
            solved[slot] = Some(cpu);
        }
        accelerated
    }
}

fn compare(max: u32, symmetry: &str) -> Option<usize> {
    let mut p = BTreeMap::new();
    p.insert("max".to_string(), max.to_string());
    p.insert("symmetry".to_string(), symmetry.to_string());
    match open_game("morris", &p) {
        Ok(g) => Some(g.visit(Compare)),
        // The game module lives on its own branch until it is merged.
        Err(Error::UnknownGame(_)) => {
            eprintln!("game morris not in this build: comparison skipped");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn twin_matches_solver_max3_symmetry_off() {
    if let Some(n) = compare(3, "off") {
        assert_eq!(n, 1);
    }
}

#[test]
fn twin_matches_solver_max3_symmetry_on() {
    if let Some(n) = compare(3, "on") {
        assert_eq!(n, 1);
    }
}
