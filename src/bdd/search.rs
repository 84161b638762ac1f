//! Layered symbolic breadth-first search: layer `d + 1` is the image of
//! layer `d`'s non-terminal states under the game's moves.

use super::rank::Assignment;
use super::set::{Bdds, StateSet};
use crate::Result;
use std::time::Instant;

/// One move of a game as a transition on BDD variables (a partitioned
/// transition relation: no primed copy of the variables is needed because
/// a move rewrites only the few variables of its frame).
///
/// The successors of a set `S` through the action are
/// `(∃ frame. S ∧ guard) ∧ effect`; the ones at which play goes on are those
/// that also lie in `continues`.
pub struct Action {
    /// States the move applies to.
    pub guard: StateSet,
    /// Cube (conjunction of positive literals) of the variables the move rewrites.
    pub frame: StateSet,
    /// The frame's variables after the move.
    pub effect: StateSet,
    /// Successors through this move that are not terminal.
    pub continues: StateSet,
}

/// A game or puzzle whose states are assignments to Boolean variables and
/// whose moves from layer `d` lead to layer `d + 1`.
pub trait SymbolicSearch: Send + Sync {
    /// The instance's name, e.g. a game and its parameters.
    fn name(&self) -> String;
    /// Boolean variables of a state (at most 128).
    fn variables(&self) -> u32;
    /// The states of layer 0, none of them terminal.
    fn initial(&self, bdds: &Bdds) -> Result<StateSet>;
    /// The moves from the states of layer `layer`.
    fn actions(&self, bdds: &Bdds, layer: u32) -> Result<Vec<Action>>;
    /// The successors of each layer on `bdds`, as the layered search asks
    /// for them. By default the [`image`] through [`actions`](Self::actions);
    /// a game whose moves have an image of their own in one pass (such as
    /// [`Stacks`](super::Stacks)) gives its own, holding what it builds once
    /// per manager.
    fn layer_image<'a>(&'a self, bdds: &'a Bdds) -> Result<Box<dyn LayerImage + 'a>> {
        Ok(Box::new(ByActions { game: self, bdds }))
    }
}

/// A game's moves on one manager.
pub trait LayerImage {
    /// The successors of `live`, the non-terminal states of layer `layer`:
    /// (all of them, those at which play goes on).
    fn successors(&mut self, live: &StateSet, layer: u32) -> Result<(StateSet, StateSet)>;
}

/// The default [`LayerImage`]: the [`image`] through the game's actions.
struct ByActions<'a, G: ?Sized> {
    game: &'a G,
    bdds: &'a Bdds,
}

impl<G: SymbolicSearch + ?Sized> LayerImage for ByActions<'_, G> {
    fn successors(&mut self, live: &StateSet, layer: u32) -> Result<(StateSet, StateSet)> {
        image(self.bdds, live, &self.game.actions(self.bdds, layer)?)
    }
}

/// A [`SymbolicSearch`] whose states are also explicit positions: the
/// bridge between a BDD layer and a game's own representation.
pub trait SymbolicEncoding: SymbolicSearch {
    /// The explicit state.
    type State;
    /// The assignment of a state.
    fn encode(&self, state: &Self::State) -> Assignment;
    /// The state of an assignment; `None` for one that encodes no state.
    fn decode(&self, a: &Assignment) -> Option<Self::State>;
}

/// One layer of a symbolic search.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LayerReport {
    /// Depth from the initial states.
    pub layer: u32,
    /// Nodes of the layer's BDD (the terminal included).
    pub nodes: u64,
    /// States in the layer.
    pub states: u128,
    /// Seconds from the start of the search to the end of this layer.
    pub seconds: f64,
}

/// What a whole search found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchReport {
    /// Every layer, from the initial states on.
    pub layers: Vec<LayerReport>,
    /// States in all layers.
    pub total: u128,
    /// The largest layer BDD, in nodes.
    pub peak_layer_nodes: u64,
    /// The most inner nodes the manager held after a layer, garbage
    /// included (collected once it fills half the node table).
    pub peak_held_nodes: u64,
    /// Seconds for the whole search.
    pub seconds: f64,
}

/// Unions of many sets pairwise, so that no union takes a huge set and a
/// small one more often than needed.
fn union_all(mut sets: Vec<StateSet>, empty: StateSet) -> Result<StateSet> {
    while sets.len() > 1 {
        let mut next = Vec::with_capacity(sets.len().div_ceil(2));
        for pair in sets.chunks(2) {
            next.push(match pair {
                [a, b] => a.or(b)?,
                [a] => a.clone(),
                _ => unreachable!("chunks of two"),
            });
        }
        sets = next;
    }
    Ok(sets.pop().unwrap_or(empty))
}

/// The successors of `live` through `actions`: (all of them, the non-terminal ones).
pub fn image(bdds: &Bdds, live: &StateSet, actions: &[Action]) -> Result<(StateSet, StateSet)> {
    let mut all = Vec::with_capacity(actions.len());
    let mut going = Vec::with_capacity(actions.len());
    for a in actions {
        let succ = live.and_exists(&a.guard, &a.frame)?.and(&a.effect)?;
        if succ.is_empty() {
            continue;
        }
        going.push(succ.and(&a.continues)?);
        all.push(succ);
    }
    Ok((union_all(all, bdds.none())?, union_all(going, bdds.none())?))
}

/// Layered symbolic BFS from the initial states until a layer is empty (or
/// `max_layers` layers are done). `on_layer` sees each layer's report and
/// BDD as soon as it is known.
pub fn layered_bfs(
    game: &dyn SymbolicSearch,
    bdds: &Bdds,
    max_layers: Option<u32>,
    mut on_layer: impl FnMut(&LayerReport, &StateSet) -> Result<()>,
) -> Result<SearchReport> {
    let start = Instant::now();
    let mut moves = game.layer_image(bdds)?;
    let mut layer = game.initial(bdds)?;
    let mut live = layer.clone();
    let mut report = SearchReport {
        layers: Vec::new(),
        total: 0,
        peak_layer_nodes: 0,
        peak_held_nodes: 0,
        seconds: 0.0,
    };
    for d in 0.. {
        let states = bdds.count(&layer);
        let nodes = layer.nodes() as u64;
        // A collection walks the whole node table, which the memory budget
        // sizes (about 8 s a layer at 50 GB, even after tiny layers): only
        // once garbage fills half of it. The manager also collects by
        // itself when the table is nearly full.
        if bdds.allocated_nodes() as u64 > bdds.options().nodes / 2 {
            bdds.collect_garbage();
        }
        report.peak_held_nodes = report.peak_held_nodes.max(bdds.allocated_nodes() as u64);
        let row = LayerReport {
            layer: d,
            nodes,
            states,
            seconds: start.elapsed().as_secs_f64(),
        };
        report.total += states;
        report.peak_layer_nodes = report.peak_layer_nodes.max(nodes);
        on_layer(&row, &layer)?;
        report.layers.push(row);
        if max_layers.is_some_and(|m| d + 1 >= m) {
            break;
        }
        let (next, next_live) = moves.successors(&live, d)?;
        if next.is_empty() {
            break;
        }
        (layer, live) = (next, next_live);
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}
