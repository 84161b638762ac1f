//! The build's [`PartitionAccelerator`] for Connect Four: finds partition `n`
//! and its only dependency, partition `n + 1`, in the layout and hands them to
//! a [`Connect4Solver`] (the CUDA backend, or the CPU twin in tests).
//!
//! Generic over the game type `G` like [`super::accel::MorrisAccelerator`]:
//! the caller names the Connect Four type, and games of any other type or id
//! are declined (`None`).

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use super::connect4::{Connect4SolveSpec, Connect4Tables, Connect4Twin};
use crate::game::Game;
use crate::solve::{Layout, PartitionAccelerator};
use crate::value::PartitionId;
use crate::{Error, Result};

/// Solves one Connect Four partition given the next one's values.
pub trait Connect4Solver: Send + Sync {
    /// Values of `spec`; `next` holds partition `n + 1` (`None` for the full board).
    fn solve_connect4(&self, spec: Connect4SolveSpec, next: Option<&[u8]>) -> Result<Vec<u8>>;
    /// A name for logs.
    fn solver_name(&self) -> String;
}

/// The CPU twin as a solver (tests of the accelerator glue without a GPU).
#[derive(Clone, Copy, Debug, Default)]
pub struct Connect4TwinSolver;

impl Connect4Solver for Connect4TwinSolver {
    fn solve_connect4(&self, spec: Connect4SolveSpec, next: Option<&[u8]>) -> Result<Vec<u8>> {
        Connect4Twin::new(spec, next)?.solve()
    }
    fn solver_name(&self) -> String {
        "cpu twin".into()
    }
}

/// What the accelerator needs to know about a game's partition: `None` for
/// games other than `connect4` and for layouts that do not match the spec.
pub fn connect4_spec<G: Game>(game: &G, layout: &Layout, slot: usize) -> Option<Connect4SolveSpec> {
    let info = game.info();
    if info.id != "connect4" {
        return None;
    }
    let width = info.params.get("width")?.parse().ok()?;
    let height = info.params.get("height")?.parse().ok()?;
    let n = layout.order().get(slot)?.0;
    let spec = Connect4SolveSpec::new(width, height, n).ok()?;
    let tables = Connect4Tables::new(spec).ok()?;
    (tables.size(n) == layout.size(slot)).then_some(spec)
}

/// Partition `n + 1`'s values among the solved partitions (`None` for the full board).
pub fn connect4_next<'a>(
    layout: &Layout,
    deps: &[Option<&'a [u8]>],
    spec: &Connect4SolveSpec,
    slot: usize,
) -> Result<Option<&'a [u8]>> {
    let Some(next) = spec.next() else {
        return Ok(None);
    };
    let found = (0..slot.min(deps.len()))
        .find(|&s| layout.order()[s] == PartitionId(next.n))
        .and_then(|s| deps[s]);
    found.map(Some).ok_or_else(|| {
        Error::Cuda(format!(
            "connect4 partition {}: its moves lead to partition {}, which is not solved before it",
            spec.n, next.n
        ))
    })
}

/// A [`PartitionAccelerator`] for games of type `G` with id `connect4`.
pub struct Connect4Accelerator<G> {
    solver: Arc<dyn Connect4Solver>,
    _game: PhantomData<fn() -> G>,
}

impl<G> std::fmt::Debug for Connect4Accelerator<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connect4Accelerator({})", self.solver.solver_name())
    }
}

impl<G: Game> Connect4Accelerator<G> {
    /// Solves the Connect Four partitions of builds with `solver`.
    pub fn new(solver: Arc<dyn Connect4Solver>) -> Self {
        Connect4Accelerator {
            solver,
            _game: PhantomData,
        }
    }
}

impl<G: Game> PartitionAccelerator for Connect4Accelerator<G> {
    fn solve_partition(
        &self,
        game: &dyn Any,
        layout: &Layout,
        deps: &[Option<&[u8]>],
        slot: usize,
    ) -> Option<Result<Vec<u8>>> {
        let game = game.downcast_ref::<G>()?;
        let spec = connect4_spec(game, layout, slot)?;
        Some(
            connect4_next(layout, deps, &spec, slot)
                .and_then(|next| self.solver.solve_connect4(spec, next)),
        )
    }

    fn name(&self) -> String {
        self.solver.solver_name()
    }
}
