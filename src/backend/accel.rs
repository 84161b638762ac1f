//! The build's [`PartitionAccelerator`] for Nine Men's Morris: finds the
//! partition and its capture dependencies in the layout and hands them to a
//! [`MorrisSolver`] (the CUDA backend, or the CPU twin: `--backend cpu`).
//!
//! Generic over the game type `G` so that this file needs nothing of the game
//! module but the [`Game`] trait: the caller names the Morris type
//! (`MorrisAccelerator::<Morris>::new(..)`), and games of any other type or id
//! are declined (`None`), as are the lost `2-k` partitions (trivial on the CPU).

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use super::morris_retro::{CpuTwin, MorrisSolveSpec};
use crate::game::Game;
use crate::solve::{Layout, PartitionAccelerator};
use crate::{Error, Result};

/// Solves one Morris partition given its dependencies' values.
pub trait MorrisSolver: Send + Sync {
    /// Values of `spec`; `deps[i]` holds [`MorrisSolveSpec::dependencies`]`[i]`.
    fn solve_morris(&self, spec: MorrisSolveSpec, deps: Vec<&[u8]>) -> Result<Vec<u8>>;
    /// A name for logs.
    fn solver_name(&self) -> String;
}

/// The CPU twin as a solver: the CPU backend of Morris builds (and tests of
/// the accelerator glue without a GPU).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuTwinSolver;

impl MorrisSolver for CpuTwinSolver {
    fn solve_morris(&self, spec: MorrisSolveSpec, deps: Vec<&[u8]>) -> Result<Vec<u8>> {
        Ok(CpuTwin::new(spec, deps)?.solve()?.value)
    }
    fn solver_name(&self) -> String {
        "cpu twin".into()
    }
}

/// What the accelerator needs to know about a game's partition.
pub fn morris_spec<G: Game>(game: &G, layout: &Layout, slot: usize) -> Option<MorrisSolveSpec> {
    let info = game.info();
    if info.id != "morris" {
        return None;
    }
    let symmetry = info.params.get("symmetry").is_some_and(|v| v == "on");
    let name = game.partition_name(*layout.order().get(slot)?);
    let (a, b) = name.split_once('-')?;
    let (k1, k2) = (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?);
    if k2 < 3 || k1 < k2 {
        return None;
    }
    let spec = MorrisSolveSpec::new(k1, k2, symmetry).ok()?;
    (spec.size() == layout.size(slot)).then_some(spec)
}

/// The dependencies' values of `spec`, from the solved partitions by slot.
pub fn morris_deps<'a, G: Game>(
    game: &G,
    layout: &Layout,
    deps: &[Option<&'a [u8]>],
    spec: &MorrisSolveSpec,
    slot: usize,
) -> Result<Vec<&'a [u8]>> {
    spec.dependencies()
        .iter()
        .map(|name| {
            let found = (0..slot.min(deps.len()))
                .find(|&s| game.partition_name(layout.order()[s]) == *name)
                .and_then(|s| deps[s]);
            found.ok_or_else(|| {
                Error::Cuda(format!(
                    "partition {}: its captures lead to {name}, which is not solved before it",
                    spec.name()
                ))
            })
        })
        .collect()
}

/// A [`PartitionAccelerator`] for games of type `G` with id `morris`.
pub struct MorrisAccelerator<G> {
    solver: Arc<dyn MorrisSolver>,
    _game: PhantomData<fn() -> G>,
}

impl<G> std::fmt::Debug for MorrisAccelerator<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MorrisAccelerator({})", self.solver.solver_name())
    }
}

impl<G: Game> MorrisAccelerator<G> {
    /// Solves the Morris partitions of builds with `solver`.
    pub fn new(solver: Arc<dyn MorrisSolver>) -> Self {
        MorrisAccelerator {
            solver,
            _game: PhantomData,
        }
    }
}

impl<G: Game> PartitionAccelerator for MorrisAccelerator<G> {
    fn solve_partition(
        &self,
        game: &dyn Any,
        layout: &Layout,
        deps: &[Option<&[u8]>],
        slot: usize,
    ) -> Option<Result<Vec<u8>>> {
        let game = game.downcast_ref::<G>()?;
        let spec = morris_spec(game, layout, slot)?;
        Some(
            morris_deps(game, layout, deps, &spec, slot)
                .and_then(|d| self.solver.solve_morris(spec, d)),
        )
    }

    fn name(&self) -> String {
        self.solver.solver_name()
    }
}
