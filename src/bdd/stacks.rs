//! The image of "push a token onto a stack" in one pass over a BDD.
//!
//! States of stacked tokens: the cells are grouped in stacks of `height`,
//! stack after stack, each stack bottom-up, and each cell has two variables
//! in this order: "occupied", then "holds a token of the first colour"
//! (false on an empty cell). Tokens lie on the bottom of their stack with
//! no gap. A move pushes one token onto one stack that is not full.
//!
//! The generic image ([`image`](super::image)) takes one relational product
//! and one conjunction per cell and then unions as many sets, each about as
//! large as the layer. Here one recursive walk of the layer's BDD builds the
//! union directly: a cell that was empty and whose lower neighbour is
//! occupied either takes the token (the rest of the state stays as it was)
//! or stays empty (the token goes higher up or onto a later stack). The
//! results are memoised per (node, cell, lower neighbour occupied); where the
//! two choices land on the same branch of the cell's variables, one union of
//! two sub-functions joins them. On a 5x5 board of five stacks (one thread)
//! this took a layered count from 46.4 to 11.9 CPU-seconds (README,
//! "Symbolic search").

use super::set::StateSet;
use crate::{Error, Result};
use oxidd::bcdd::BCDDFunction;
use oxidd::{BooleanFunction, Edge, Function, Manager};
use oxidd_core::util::{AllocResult, Borrowed, EdgeDropGuard};
use oxidd_core::{DiagramRules, HasLevel, LevelNo, Node};
use oxidd_rules_bdd::complement_edge::{BCDDRules, BCDDTerminal, EdgeTag};
use rustc_hash::FxHashMap;

type M<'id> = <BCDDFunction as Function>::Manager<'id>;
type E<'id> = <M<'id> as Manager>::Edge;

/// The shape of a stacked-token encoding: `stacks` stacks of `height` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stacks {
    /// Number of stacks.
    pub stacks: u32,
    /// Cells per stack.
    pub height: u32,
}

impl Stacks {
    /// Every state reached from a state of `set` by pushing one token of the
    /// first colour (`first`) or of the second onto a stack that is not full.
    ///
    /// `set` must hold encoded states only (no gaps, empty cells without a
    /// colour) over the manager's first `2 * stacks * height` variables.
    pub fn push_image(&self, set: &StateSet, first: bool) -> Result<StateSet> {
        let cells = self.stacks * self.height;
        if self.height == 0 || cells == 0 {
            return Ok(StateSet(
                set.0.with_manager_shared(|m, _| BCDDFunction::f(m)),
            ));
        }
        let walk = Walk {
            cells,
            height: self.height,
            first,
        };
        set.0
            .with_manager_shared(|m, root| {
                let mut memo = FxHashMap::default();
                let result = walk.push(m, root, 0, true, &mut memo);
                for (_, e) in memo.drain() {
                    m.drop_edge(e);
                }
                result.map(|e| BCDDFunction::from_edge(m, e))
            })
            .map(StateSet)
            .map_err(|_| {
                Error::NotAvailable(
                    "the BDD manager ran out of node slots: give it more with --mem-limit".into(),
                )
            })
    }
}

/// Memo key: the node and its edge's tag, the cell, and whether the cell
/// below is occupied (true at a stack's bottom).
type Key = (usize, bool, u32, bool);

struct Walk {
    cells: u32,
    height: u32,
    first: bool,
}

/// The (then, else) cofactors of `f` for the variable at `level`; `f` twice
/// where it does not test that variable.
fn cofactors<'a, 'id>(
    m: &'a M<'id>,
    f: &'a E<'id>,
    level: LevelNo,
) -> (Borrowed<'a, E<'id>>, Borrowed<'a, E<'id>>) {
    match m.get_node(f) {
        Node::Inner(n) if n.level() == level => {
            let mut it = BCDDRules::cofactors(f.tag(), n);
            let t = it.next().expect("a BDD node has two children");
            let e = it.next().expect("a BDD node has two children");
            (t, e)
        }
        _ => (f.borrowed(), f.borrowed()),
    }
}

fn node<'id>(m: &M<'id>, level: LevelNo, t: E<'id>, e: E<'id>) -> AllocResult<E<'id>> {
    BCDDRules::reduce(m, level, [t, e]).then_insert(m, level)
}

fn falsum<'id>(m: &M<'id>) -> E<'id> {
    m.get_terminal(BCDDTerminal)
        .expect("the terminal exists")
        .with_tag_owned(EdgeTag::Complemented)
}

fn is_false<'id>(m: &M<'id>, f: &E<'id>) -> bool {
    f.tag() == EdgeTag::Complemented && m.get_node(f).is_any_terminal()
}

impl Walk {
    /// The states reached from those of `f` (a function of the variables
    /// from cell `k` on) by a push at cell `k` or later; `below`: the cell
    /// under `k` is occupied, or `k` is a stack's bottom.
    fn push<'id>(
        &self,
        m: &M<'id>,
        f: &E<'id>,
        k: u32,
        below: bool,
        memo: &mut FxHashMap<Key, E<'id>>,
    ) -> AllocResult<E<'id>> {
        if k == self.cells || is_false(m, f) {
            return Ok(falsum(m));
        }
        let key = (f.node_id(), f.tag() == EdgeTag::Complemented, k, below);
        if let Some(r) = memo.get(&key) {
            return Ok(m.clone_edge(r));
        }
        let (occupied, colour) = (2 * k, 2 * k + 1);
        let next_is_bottom = (k + 1) % self.height == 0;
        let (full, empty) = cofactors(m, f, occupied);
        // The cell keeps its token: the push happens higher up or later.
        // Guards hand the edges back to the manager on an early return.
        let (first_token, second_token) = cofactors(m, &full, colour);
        let mut with_first = EdgeDropGuard::new(m, self.push(m, &first_token, k + 1, true, memo)?);
        let mut with_second =
            EdgeDropGuard::new(m, self.push(m, &second_token, k + 1, true, memo)?);
        // An empty cell has no colour: only its colour-false branch is a state.
        let (_, empty) = cofactors(m, &empty, colour);
        if below {
            // The token lands here; nothing else changes.
            let target = if self.first {
                &mut with_first
            } else {
                &mut with_second
            };
            let joined = BCDDFunction::or_edge(m, target, &empty)?;
            m.drop_edge(std::mem::replace(&mut **target, joined));
        }
        let stays_empty = self.push(m, &empty, k + 1, next_is_bottom, memo)?;
        let full = node(m, colour, with_first.into_edge(), with_second.into_edge())?;
        let full = EdgeDropGuard::new(m, full);
        let empty = node(m, colour, falsum(m), stays_empty)?;
        let result = node(m, occupied, full.into_edge(), empty)?;
        memo.insert(key, m.clone_edge(&result));
        Ok(result)
    }
}
