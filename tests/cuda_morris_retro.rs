//! The Morris partition solver in GPU form (game::morris::retro, CPU twin of
//! the retro kernels of kernels/morris.cu) gives exactly the bytes of the generic solver
//! (solve::solve_partition), partition by partition, through the game's
//! kernels. No GPU needed: on a GPU machine `tbforge bench gpu` runs the same
//! comparison with the CUDA kernels.

use crate::common;

use common::{assert_same_values, cpu_values, morris, solve_in_order};
use tbforge::game::morris::kernels::spec_of;
use tbforge::game::Device;
use tbforge::solve::Layout;
use tbforge::Game;

fn compare(max: u32, symmetry: &str) -> usize {
    let game = morris(max, symmetry);
    let layout = Layout::new(&game).unwrap();
    let kernels = game.kernels(&Device::Cpu).unwrap().unwrap();
    let mut accelerated = 0;
    solve_in_order(&game, &layout, |slot, name, deps, before| {
        let cpu = cpu_values(&game, &layout, deps, slot);
        let p = layout.order()[slot];
        // Every partition: the lost 2-k ones filled, the others solved.
        let twin = kernels.solve(p, before).expect("no partition is declined");
        assert_same_values(name, ("cpu", &cpu), ("twin", &twin.unwrap().values));
        accelerated += 1;
        assert!(spec_of(&game, p).is_some() != name.starts_with("2-"));
        Some(cpu)
    });
    accelerated
}

#[test]
fn twin_matches_solver_max3_symmetry_off() {
    assert_eq!(compare(3, "off"), 2);
}

#[test]
fn twin_matches_solver_max3_symmetry_on() {
    assert_eq!(compare(3, "on"), 2);
}
