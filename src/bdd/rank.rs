//! BDD perfect hashing: the rank of a state is its position among the
//! satisfying assignments of a BDD in lexicographic order (variable 0 most
//! significant), read off satisfying-assignment counts cached per node
//! (Dietzfelbinger and Edelkamp, "Perfect Hashing for State Spaces in BDD
//! Representation"; Edelkamp, "BDDs for Minimal Perfect Hashing", Fig. 0.5).
//!
//! The BDD is copied out of the manager into plain arrays (a plain BDD, the
//! complement edges resolved): ranking then only reads, so any number of
//! threads share one copy (the chapter duplicates the BDD per core because
//! its package's ranking wrote to the nodes).

use super::set::{Bdds, StateSet};
use crate::hash::HashError;
use crate::value::Rank;
use oxidd::{BooleanFunction, Function, Manager};
use std::collections::HashMap;

/// A truth assignment to a manager's variables: bit `len - 1 - i` holds
/// variable `i`, so that comparing the words compares assignments
/// lexicographically (variable 0 first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Assignment {
    bits: u128,
    len: u32,
}

impl Assignment {
    /// All `len` variables false (`len <= 128`).
    pub fn new(len: u32) -> Assignment {
        Assignment {
            bits: 0,
            len: len.min(super::MAX_VARIABLES),
        }
    }

    /// The assignment whose word (variable 0 most significant) is `bits`;
    /// bits above `len` are dropped.
    pub fn from_bits(len: u32, bits: u128) -> Assignment {
        let len = len.min(super::MAX_VARIABLES);
        let mask = if len == 128 { !0 } else { (1u128 << len) - 1 };
        Assignment {
            bits: bits & mask,
            len,
        }
    }

    /// The word, variable 0 most significant.
    pub fn bits(&self) -> u128 {
        self.bits
    }

    /// Number of variables.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True when there are no variables.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of variable `var` (false past the end).
    #[inline]
    pub fn get(&self, var: u32) -> bool {
        var < self.len && (self.bits >> (self.len - 1 - var)) & 1 == 1
    }

    /// Sets variable `var` (ignored past the end).
    #[inline]
    pub fn set(&mut self, var: u32, value: bool) {
        if var < self.len {
            let bit = 1u128 << (self.len - 1 - var);
            if value {
                self.bits |= bit;
            } else {
                self.bits &= !bit;
            }
        }
    }

    /// Variables `from..to` read as a binary number, `from` most significant.
    #[inline]
    fn field(&self, from: u32, to: u32) -> u128 {
        if to <= from {
            return 0;
        }
        let width = to - from;
        let shifted = self.bits >> (self.len - to);
        if width == 128 {
            shifted
        } else {
            shifted & ((1u128 << width) - 1)
        }
    }

    /// Writes `value` into variables `from..to`, `from` most significant.
    #[inline]
    fn set_field(&mut self, from: u32, to: u32, value: u128) {
        for v in from..to {
            self.set(v, (value >> (to - 1 - v)) & 1 == 1);
        }
    }
}

/// `x << s` when no set bit is shifted out.
fn shl_exact(x: u128, s: u32) -> Option<u128> {
    if x == 0 {
        Some(0)
    } else if s < 128 && x.leading_zeros() >= s {
        Some(x << s)
    } else {
        None
    }
}

/// One node of the copied BDD.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The variable tested; `vars` for the two terminals.
    var: u32,
    /// Child for the variable false (the else edge).
    lo: u32,
    /// Child for the variable true (the then edge).
    hi: u32,
    /// Satisfying assignments of variables `var..vars` below this node.
    count: u64,
}

/// Index of the false terminal.
const FALSE: u32 = 0;
/// Index of the true terminal.
const TRUE: u32 = 1;

/// A minimal perfect hash of the set a BDD represents: [`BddRank::rank`] maps
/// its states onto `0..size()` in lexicographic order of their assignments
/// (so the hash is monotone), [`BddRank::unrank`] inverts it; both take one
/// step per variable. Like the other hashes, the fast methods trust their
/// input; the `checked_*` ones validate it.
#[derive(Clone, Debug)]
pub struct BddRank {
    vars: u32,
    nodes: Vec<Node>,
    root: u32,
    size: u64,
}

impl BddRank {
    /// Copies `set` out of `bdds` with each node's count of satisfying
    /// assignments. Fails when the set holds 2^64 states or more.
    pub fn new(bdds: &Bdds, set: &StateSet) -> Result<BddRank, HashError> {
        let vars = bdds.variables();
        let terminal = |count| Node {
            var: vars,
            lo: FALSE,
            hi: FALSE,
            count,
        };
        let mut out = BddRank {
            vars,
            nodes: vec![terminal(0), terminal(1)],
            root: FALSE,
            size: 0,
        };
        let truth = bdds.all();
        // A function hashes and compares by its edge (node and complement
        // tag), which never changes; its interior mutability is the manager's.
        #[allow(clippy::mutable_key_type)]
        let mut index: HashMap<StateSet, u32> = HashMap::new();
        index.insert(bdds.none(), FALSE);
        index.insert(truth.clone(), TRUE);
        let overflow = || HashError::Overflow {
            what: format!("BDD of {vars} variables"),
        };
        // Depth-first with an explicit stack: a node is pushed once its children are in.
        let mut stack = vec![set.clone()];
        while let Some(f) = stack.last().cloned() {
            if index.contains_key(&f) {
                stack.pop();
                continue;
            }
            let Some((hi, lo)) = f.0.cofactors() else {
                // A terminal that is neither `all` nor `none` cannot exist.
                return Err(overflow());
            };
            let (hi, lo) = (StateSet(hi), StateSet(lo));
            let (Some(&h), Some(&l)) = (index.get(&hi), index.get(&lo)) else {
                for child in [hi, lo] {
                    if !index.contains_key(&child) {
                        stack.push(child);
                    }
                }
                continue;
            };
            stack.pop();
            let var = f.0.with_manager_shared(|m, e| m.get_node(e).level());
            let weight = |child: u32| -> Option<u128> {
                let c = out.nodes[child as usize];
                shl_exact(u128::from(c.count), c.var - var - 1)
            };
            let count = weight(l)
                .zip(weight(h))
                .and_then(|(a, b)| a.checked_add(b))
                .and_then(|c| u64::try_from(c).ok())
                .ok_or_else(overflow)?;
            let id = out.nodes.len() as u32;
            out.nodes.push(Node {
                var,
                lo: l,
                hi: h,
                count,
            });
            index.insert(f, id);
        }
        out.root = index[set];
        let r = out.nodes[out.root as usize];
        out.size = shl_exact(u128::from(r.count), r.var)
            .and_then(|s| u64::try_from(s).ok())
            .ok_or_else(overflow)?;
        Ok(out)
    }

    /// States in the set: ranks run over `0..size()`.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Variables of an assignment.
    pub fn variables(&self) -> u32 {
        self.vars
    }

    /// Nodes of the copy, the two terminals included.
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes the copy takes (16 per node).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
    }

    /// The rank of `a`, and whether `a` is in the set. Wrapping arithmetic:
    /// on members no sum exceeds `size()`, on anything else the rank is
    /// unspecified but nothing panics.
    #[inline]
    fn walk(&self, a: &Assignment) -> (u64, bool) {
        let mut n = self.nodes[self.root as usize];
        let mut rank = a.field(0, n.var).wrapping_mul(u128::from(n.count));
        while n.var < self.vars {
            let lo = self.nodes[n.lo as usize];
            let next = if a.get(n.var) {
                rank = rank.wrapping_add(u128::from(lo.count) << (lo.var - n.var - 1));
                self.nodes[n.hi as usize]
            } else {
                lo
            };
            if next.count == 0 {
                return (0, false);
            }
            rank = rank.wrapping_add(
                a.field(n.var + 1, next.var)
                    .wrapping_mul(u128::from(next.count)),
            );
            n = next;
        }
        (rank as u64, n.count != 0)
    }

    /// The rank of a state of the set (anything else: an unspecified rank).
    #[inline]
    pub fn rank(&self, a: &Assignment) -> Rank {
        Rank(self.walk(a).0)
    }

    /// The rank of `a`, or an error if it is not in the set.
    pub fn checked_rank(&self, a: &Assignment) -> Result<Rank, HashError> {
        if a.len() != self.vars {
            return Err(self.input(format!(
                "{} variables where the BDD has {}",
                a.len(),
                self.vars
            )));
        }
        match self.walk(a) {
            (r, true) if self.size > 0 => Ok(Rank(r)),
            _ => Err(self.input(format!("assignment {:#x} is not in the set", a.bits()))),
        }
    }

    /// The state of rank `r < size()` (larger ranks: an unspecified assignment).
    #[inline]
    pub fn unrank(&self, r: Rank) -> Assignment {
        let mut a = Assignment::new(self.vars);
        let mut n = self.nodes[self.root as usize];
        if n.count == 0 {
            return a;
        }
        let mut r = u128::from(r.0);
        a.set_field(0, n.var, r / u128::from(n.count));
        r %= u128::from(n.count);
        while n.var < self.vars {
            let lo = self.nodes[n.lo as usize];
            let below_lo = u128::from(lo.count) << (lo.var - n.var - 1);
            let next = if r < below_lo {
                lo
            } else {
                r -= below_lo;
                a.set(n.var, true);
                self.nodes[n.hi as usize]
            };
            let c = u128::from(next.count.max(1));
            a.set_field(n.var + 1, next.var, r / c);
            r %= c;
            n = next;
        }
        a
    }

    /// The state of rank `r`, or an error if `r >= size()`.
    pub fn checked_unrank(&self, r: Rank) -> Result<Assignment, HashError> {
        if r.0 >= self.size {
            return Err(HashError::Range {
                what: self.what(),
                rank: r.0,
                size: self.size,
            });
        }
        Ok(self.unrank(r))
    }

    fn what(&self) -> String {
        format!(
            "BDD of {} nodes over {} variables",
            self.nodes.len(),
            self.vars
        )
    }

    fn input(&self, message: String) -> HashError {
        HashError::Input {
            what: self.what(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bdd::BddOptions;

    /// A set of 7-variable assignments from a few cubes: ranks run 0, 1, 2, ... through the
    /// members in increasing bitvector order, and unrank inverts rank.
    #[test]
    fn bdd_rank_follows_bitvector_order() {
        let n = 7;
        let bdds = Bdds::new(n, BddOptions::for_memory(16 << 20, 1)).unwrap();
        let mut set = bdds.none();
        for cube in [
            &[(0, true), (3, false)][..],
            &[(1, true), (2, true), (6, false)],
            &[(0, false), (4, true), (5, true)],
            &[(2, false), (3, true), (5, false), (6, true)],
        ] {
            set = set.or(&bdds.cube(cube).unwrap()).unwrap();
        }
        let rank = BddRank::new(&bdds, &set).unwrap();
        assert_eq!(u128::from(rank.size()), bdds.count(&set));
        let mut next = 0;
        for bits in 0..1u128 << n {
            let a = Assignment::from_bits(n, bits);
            let member = (a.get(0) && !a.get(3))
                || (a.get(1) && a.get(2) && !a.get(6))
                || (!a.get(0) && a.get(4) && a.get(5))
                || (!a.get(2) && a.get(3) && !a.get(5) && a.get(6));
            match rank.checked_rank(&a) {
                Ok(r) => {
                    assert!(member, "{bits:#09b}");
                    assert_eq!(r, Rank(next));
                    assert_eq!(rank.unrank(r), a);
                    next += 1;
                }
                Err(_) => assert!(!member, "{bits:#09b}"),
            }
        }
        assert_eq!(next, rank.size());
        assert!(rank.checked_unrank(Rank(next)).is_err());
    }
}
