//! Sets of states as BDDs on one shared manager (oxidd's complement-edge BDDs).

use crate::{Error, Result};
use oxidd::bcdd::{BCDDFunction, BCDDManagerRef};
use oxidd::util::{AllocResult, SatCountCache};
use oxidd::{
    BooleanFunction, BooleanFunctionQuant, BooleanOperator, Function, Manager, ManagerRef,
};

/// Bytes of one inner node slot in oxidd's index manager (two 32-bit edges, a
/// level, a reference count and the unique table's link, rounded up), to turn
/// a memory budget into a node capacity.
pub const BYTES_PER_NODE: u64 = 24;

/// Most inner nodes oxidd's index manager addresses (32-bit node ids).
const MAX_NODES: u64 = u32::MAX as u64 - 1;

/// How a [`Bdds`] manager is sized and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BddOptions {
    /// Inner nodes the manager may hold (it collects garbage near this many).
    pub nodes: u64,
    /// Entries of the apply cache (memoised operations).
    pub cache: u64,
    /// Worker threads of the manager's parallel apply.
    pub threads: u32,
}

impl BddOptions {
    /// A manager for `threads` threads whose node table and cache fit in
    /// `memory` bytes (a fifth of it for the cache).
    pub fn for_memory(memory: u64, threads: u32) -> BddOptions {
        let cache = (memory / 5 / 16).next_power_of_two() / 2;
        BddOptions {
            nodes: (memory * 4 / 5 / BYTES_PER_NODE).clamp(1 << 16, MAX_NODES),
            cache: cache.clamp(1 << 12, 1 << 32),
            threads: threads.max(1),
        }
    }
}

/// One BDD manager with a fixed number of Boolean variables, numbered
/// `0..variables()` in the order they are tested (variable 0 at the root).
pub struct Bdds {
    manager: BCDDManagerRef,
    vars: Vec<BCDDFunction>,
    options: BddOptions,
}

/// A set of states (the satisfying assignments of a Boolean function) on a
/// [`Bdds`] manager. Cloning is cheap (a reference).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct StateSet(pub(super) BCDDFunction);

/// Maps oxidd's allocation failure to the library's error, naming the fix.
fn alloc<T>(r: AllocResult<T>) -> Result<T> {
    r.map_err(|_| {
        Error::NotAvailable(
            "the BDD manager ran out of node slots: give it more with --nodes (or more memory)"
                .into(),
        )
    })
}

impl Bdds {
    /// A manager with `variables` variables (at most 128: assignments are 128-bit words).
    pub fn new(variables: u32, options: BddOptions) -> Result<Bdds> {
        if variables == 0 || variables > super::MAX_VARIABLES {
            return Err(Error::NotAvailable(format!(
                "{variables} BDD variables: between 1 and {} are supported",
                super::MAX_VARIABLES
            )));
        }
        let nodes = options.nodes.clamp(1 << 10, MAX_NODES);
        let manager =
            oxidd::bcdd::new_manager(nodes as usize, options.cache as usize, options.threads);
        let vars = manager.with_manager_exclusive(|m| {
            (0..variables)
                .map(|_| alloc(BCDDFunction::new_var(m)))
                .collect::<Result<Vec<_>>>()
        })?;
        Ok(Bdds {
            manager,
            vars,
            options: BddOptions { nodes, ..options },
        })
    }

    /// Number of variables.
    pub fn variables(&self) -> u32 {
        self.vars.len() as u32
    }

    /// How the manager was sized.
    pub fn options(&self) -> BddOptions {
        self.options
    }

    /// Every assignment.
    pub fn all(&self) -> StateSet {
        StateSet(self.manager.with_manager_shared(|m| BCDDFunction::t(m)))
    }

    /// No assignment.
    pub fn none(&self) -> StateSet {
        StateSet(self.manager.with_manager_shared(|m| BCDDFunction::f(m)))
    }

    /// The assignments with variable `var` set to `value` (`var < variables()`).
    pub fn literal(&self, var: u32, value: bool) -> Result<StateSet> {
        let v = self.vars.get(var as usize).ok_or_else(|| {
            Error::NotAvailable(format!(
                "BDD variable {var} does not exist: the manager has {}",
                self.vars.len()
            ))
        })?;
        Ok(StateSet(if value { v.clone() } else { alloc(v.not())? }))
    }

    /// The conjunction of the given literals `(variable, value)`.
    pub fn cube(&self, literals: &[(u32, bool)]) -> Result<StateSet> {
        let mut sorted = literals.to_vec();
        // Bottom-up conjunction keeps every intermediate a single path.
        sorted.sort_unstable_by_key(|&(v, _)| std::cmp::Reverse(v));
        sorted
            .iter()
            .try_fold(self.all(), |acc, &(v, b)| acc.and(&self.literal(v, b)?))
    }

    /// The number of assignments in `set`, over all variables.
    pub fn count(&self, set: &StateSet) -> u128 {
        set.0.sat_count::<u128, rustc_hash::FxBuildHasher>(
            self.variables(),
            &mut SatCountCache::default(),
        )
    }

    /// Frees the nodes no live [`StateSet`] reaches; returns how many.
    pub fn collect_garbage(&self) -> usize {
        self.manager.with_manager_shared(|m| m.gc())
    }

    /// Inner nodes the manager holds now, garbage included.
    pub fn allocated_nodes(&self) -> usize {
        self.manager.with_manager_shared(|m| m.num_inner_nodes())
    }
}

impl StateSet {
    /// Intersection.
    pub fn and(&self, other: &StateSet) -> Result<StateSet> {
        alloc(self.0.and(&other.0)).map(StateSet)
    }

    /// Union.
    pub fn or(&self, other: &StateSet) -> Result<StateSet> {
        alloc(self.0.or(&other.0)).map(StateSet)
    }

    /// Complement.
    pub fn not(&self) -> Result<StateSet> {
        alloc(self.0.not()).map(StateSet)
    }

    /// `self` without `other`.
    pub fn and_not(&self, other: &StateSet) -> Result<StateSet> {
        alloc(other.0.imp_strict(&self.0)).map(StateSet)
    }

    /// `∃ frame. self ∧ other`, in one pass (the relational product): `frame`
    /// is the cube (conjunction of positive literals) of the variables to forget.
    pub fn and_exists(&self, other: &StateSet, frame: &StateSet) -> Result<StateSet> {
        alloc(
            self.0
                .apply_exists(BooleanOperator::And, &other.0, &frame.0),
        )
        .map(StateSet)
    }

    /// True for the empty set.
    pub fn is_empty(&self) -> bool {
        !self.0.satisfiable()
    }

    /// Nodes of this BDD, the (single) terminal included: what CUDD's
    /// `Cudd_DagSize` reports for complement-edge BDDs.
    pub fn nodes(&self) -> usize {
        self.0.node_count()
    }
}
