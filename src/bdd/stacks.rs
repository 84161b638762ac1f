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
//! "Symbolic search"). The top cells' three branches run on the manager's
//! workers, with one memo shared: 7x6's 43 layers in 517 s on 16 cores,
//! where one thread had counted 25 in 434 s.

use super::set::StateSet;
use crate::{Error, Result};
use oxidd::bcdd::BCDDFunction;
use oxidd::{BooleanFunction, Edge, Function, Manager};
use oxidd_core::util::{AllocResult, Borrowed, EdgeDropGuard};
use oxidd_core::{DiagramRules, HasLevel, LevelNo, Node};
use oxidd_core::{HasWorkers, WorkerPool};
use oxidd_rules_bdd::complement_edge::{BCDDRules, BCDDTerminal, EdgeTag};
use rustc_hash::FxHashMap;
use std::sync::Mutex;

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
        set.0
            .with_manager_shared(|m, root| {
                // The walk's top cells fork on the manager's workers: the
                // three branches of a cell (its token kept, of either
                // colour, or the cell left empty) are independent, and the
                // memo, shared, keeps one result per sub-function.
                let threads = m.workers().current_num_threads() as u32;
                let walk = Walk {
                    cells,
                    height: self.height,
                    first,
                    fork_below: if threads > 1 { threads.ilog2() + 5 } else { 0 },
                };
                let memo = Memo::new();
                let result = walk.push(m, root, 0, true, &memo);
                memo.drop_all(m);
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
    /// Cells above this one fork their branches onto the workers.
    fork_below: u32,
}

/// The walk's results by [`Key`], shared by the workers: sharded locks, so
/// that threads rarely wait for each other.
struct Memo<'id> {
    shards: Vec<Mutex<FxHashMap<Key, E<'id>>>>,
}

const MEMO_SHARDS: usize = 256;

impl<'id> Memo<'id> {
    fn new() -> Memo<'id> {
        Memo {
            shards: (0..MEMO_SHARDS)
                .map(|_| Mutex::new(FxHashMap::default()))
                .collect(),
        }
    }

    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, FxHashMap<Key, E<'id>>> {
        // Fibonacci hashing of the node, cell and flag: the top bits pick
        // the shard.
        let mixed = key.0 as u64 ^ u64::from(key.2) << 40 ^ u64::from(key.3) << 39;
        let h = mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.shards[(h >> 56) as usize % MEMO_SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, m: &M<'id>, key: &Key) -> Option<E<'id>> {
        self.shard(key).get(key).map(|e| m.clone_edge(e))
    }

    /// Keeps `e` for `key` (a result another worker stored first is the
    /// same function: it is kept).
    fn insert(&self, m: &M<'id>, key: Key, e: &E<'id>) {
        self.shard(&key)
            .entry(key)
            .or_insert_with(|| m.clone_edge(e));
    }

    /// Hands every stored edge back to the manager.
    fn drop_all(self, m: &M<'id>) {
        for shard in self.shards {
            for (_, e) in shard.into_inner().unwrap_or_else(|e| e.into_inner()) {
                m.drop_edge(e);
            }
        }
    }
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
        memo: &Memo<'id>,
    ) -> AllocResult<E<'id>> {
        if k == self.cells || is_false(m, f) {
            return Ok(falsum(m));
        }
        let key = (f.node_id(), f.tag() == EdgeTag::Complemented, k, below);
        if let Some(r) = memo.get(m, &key) {
            return Ok(r);
        }
        let (occupied, colour) = (2 * k, 2 * k + 1);
        let next_is_bottom = (k + 1) % self.height == 0;
        let (full, empty) = cofactors(m, f, occupied);
        let (first_token, second_token) = cofactors(m, &full, colour);
        // An empty cell has no colour: only its colour-false branch is a state.
        let (_, empty) = cofactors(m, &empty, colour);
        // The cell keeps its token (the push happens higher up or later), or
        // stays empty (the token goes higher up or onto a later stack).
        let keep_first = || self.push(m, &first_token, k + 1, true, memo);
        let keep_second = || self.push(m, &second_token, k + 1, true, memo);
        let skip = || self.push(m, &empty, k + 1, next_is_bottom, memo);
        let ((with_first, with_second), stays_empty) = if k < self.fork_below {
            let workers = m.workers();
            workers.join(|| workers.join(keep_first, keep_second), skip)
        } else {
            ((keep_first(), keep_second()), skip())
        };
        // Guards hand the edges back to the manager on an early return.
        let guard = |r: AllocResult<E<'id>>| r.map(|e| EdgeDropGuard::new(m, e));
        let (with_first, with_second, stays_empty) =
            (guard(with_first), guard(with_second), guard(stays_empty));
        let (mut with_first, mut with_second, stays_empty) =
            (with_first?, with_second?, stays_empty?);
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
        let full = node(m, colour, with_first.into_edge(), with_second.into_edge())?;
        let full = EdgeDropGuard::new(m, full);
        let empty = node(m, colour, falsum(m), stays_empty.into_edge())?;
        let result = node(m, occupied, full.into_edge(), empty)?;
        memo.insert(m, key, &result);
        Ok(result)
    }
}
