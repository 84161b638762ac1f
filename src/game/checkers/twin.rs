//! The CPU twin of `kernels/checkers.cu`: the same tables, the same
//! move generation and the same passes, on all cores with rayon.
//!
//! # The tables ([`CheckersTables`])
//! A partition's kernels need, besides its own values, the values of every
//! partition its moves lead to, and the index of every slice a successor
//! may lie in. The host lists those slices once per partition: from a
//! slice with mover men `a`, kings `b` and opponent men `c`, kings `d`, a
//! move leads to the opponent's view `(c - i, d - j, a - k, b + k)` (`i`, `j`
//! pieces captured, `k` a crowning), with any leading rows. Each such slice
//! gets a descriptor of [`DESC`] words:
//!
//! | word | meaning |
//! |------|---------|
//! | 0 | where the slice starts in its partition's values (0, or the first slice's size for a mirror) |
//! | 1 | `|O|` where the men zones do not overlap, else the offset of its prefix table in `prefix` |
//! | 2 | king placements (`iK`'s range) |
//! | 3 | men sets (`iM`'s range) |
//! | 4 | `a, b, c, d, rm, ro` four bits each from bit 0; bits 32..34 the kind, bit 34 prefix layout |
//! | 5 | the dependency (index into the list of partitions read) of an external slice |
//! | 6 | the partition id (`u32::MAX` for none) |
//! | 7 | positions in the slice |
//!
//! Kinds: absent (no partition of the game: a successor there breaks the
//! game's contract), internal (the partition being solved), external (an
//! earlier partition, its values read), missing (a partition of the game
//! solved later in the order, or an earlier one whose values were not
//! given: a successor there is an error, as in the generic solver, but only
//! if some position moves there; the order being a dependency order, none
//! does). `mat[((a*9+b)*9+c)*9+d]`
//! gives the first of the material's 49 descriptors (rows `rm * 7 + ro`).
//!
//! # Move generation without a stack
//! A capture is a depth-first walk over jump sequences. The kernels may not
//! keep per-thread arrays (they would spill to local memory), so the walk
//! keeps only the piece's square, the pieces still to take, the empty
//! squares and the directions taken, two bits per jump, in one word: going
//! back a jump is the jump in the opposite direction (`3 - d` in the order
//! of [`rules`](super::rules)), which restores the square and the piece
//! jumped. Successors come out in the order of
//! [`rules::successors`](super::rules::successors): captures (men, then
//! kings, lowest square first, directions in order, each sequence to its
//! end, a crowning ending it), and only without any capture the steps.
//!
//! # Why the bytes are the generic solver's
//! The first scan and the passes apply `solve::retro`'s rules position by
//! position: a position without moves is lost at 0; one with a successor
//! inside the partition is pending (byte 1) and marked; one whose successors
//! are all in earlier partitions gets their combination (a win one ply
//! beyond the shortest loss among them, else a loss one ply beyond the
//! longest win if all are wins, else a draw). Pass `d` decides a marked,
//! still pending position from its successors' values below `d` only (a
//! win at odd `d` if one is lost at `d - 1`; a loss at even `d` if all are
//! wins, one ply beyond the longest), so what a pass writes (distance `d`)
//! is never read in the same pass and the order of the threads does not
//! matter. The loop stops where the generic solver's does: after a pass that
//! decided nothing once `d` is past the longest distance seen in earlier
//! partitions. The successors are the game's (the check compares them with
//! [`rules`](super::rules) on random positions), and the combination of a
//! position's successors does not depend on their order.

use super::index::{Slice, SliceIndex};
use super::rules::Position;
use super::Checkers;
use crate::game::Game;
use crate::game::NO_FAILURE;
use crate::value::{PartitionId, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Words per slice descriptor.
pub const DESC: usize = 8;
/// Entries of the material table: counts `0..=8` of each piece kind.
pub const MAT_LEN: usize = 9 * 9 * 9 * 9;
/// No descriptor, no partition.
pub const NONE: u32 = u32::MAX;

/// A successor's slice is in no partition of the game.
pub const KIND_ABSENT: u64 = 0;
/// A successor's slice is in the partition being solved.
pub const KIND_INTERNAL: u64 = 1;
/// A successor's slice is in an earlier, solved partition.
pub const KIND_EXTERNAL: u64 = 2;
/// A successor's slice is in a partition that is not solved yet.
pub const KIND_MISSING: u64 = 3;
/// Descriptor word 4: the prefix-table layout.
const PREFIX_BIT: u64 = 1 << 34;

/// Failure codes in the top byte of the failure word (the rank below).
pub const FAIL_ABSENT: u64 = 1;
/// A successor lies in a partition that is not solved.
pub const FAIL_MISSING: u64 = 2;
/// A successor's stored value is the illegal code.
pub const FAIL_ILLEGAL: u64 = 3;
/// A value beyond the longest distance a byte holds.
pub const FAIL_OVERFLOW: u64 = 4;

/// Most successors the successor kernel lists per position (more are
/// counted, not listed).
pub const MAX_SUCC: usize = 64;

/// Positions per work item of the twin.
const CHUNK: u64 = 4096;

// `C(n, k)` for `n, k <= 32`: the index's table, which the kernels fill in
// shared memory too.
use super::index::binom as bin;

/// The board's geometry by arithmetic, as the kernel computes it: the square
/// `dist` diagonal steps from `s` in direction `d` (0, 1 forward, 2, 3
/// backward, as in [`rules`](super::rules)), or 32 and above when off the board.
#[inline]
fn neighbour(s: u32, d: u32, dist: i32) -> u32 {
    let row = (s >> 2) as i32;
    let col = 2 * (s & 3) as i32 + if row & 1 == 0 { 1 } else { 0 };
    let r = row + if d < 2 { dist } else { -dist };
    let c = col + if d & 1 == 1 { dist } else { -dist };
    if (0..8).contains(&r) && (0..8).contains(&c) {
        (r * 4 + c / 2) as u32
    } else {
        64
    }
}

/// Bit `s` of a bitboard, 0 for squares off the board.
#[inline]
fn bit(s: u32) -> u32 {
    if s < 32 {
        1 << s
    } else {
        0
    }
}

/// A board from the mover's view: men and kings of the mover (0) and the opponent (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Board {
    /// Men.
    pub men: [u32; 2],
    /// Kings.
    pub kings: [u32; 2],
}

impl Board {
    /// The board of a position.
    pub fn of(pos: &Position) -> Board {
        Board {
            men: pos.men,
            kings: pos.kings,
        }
    }

    /// The position (white to move: false).
    pub fn position(&self) -> Position {
        Position {
            men: self.men,
            kings: self.kings,
            white_to_move: false,
        }
    }

    /// The successor after the mover's pieces became `men`/`kings` and the
    /// opponent kept `left` of its pieces: the opponent's view.
    #[inline]
    fn after(&self, men: u32, kings: u32, left: u32) -> Board {
        Board {
            men: [(self.men[1] & left).reverse_bits(), men.reverse_bits()],
            kings: [(self.kings[1] & left).reverse_bits(), kings.reverse_bits()],
        }
    }
}

/// Calls `f` with every successor of `b` in the order of
/// [`rules::successors`](super::rules::successors) (module documentation),
/// until `f` returns true; returns the number of successors visited.
#[inline]
pub fn for_each_successor(b: &Board, mut f: impl FnMut(Board) -> bool) -> u32 {
    let occ = b.men[0] | b.men[1] | b.kings[0] | b.kings[1];
    let empty0 = !occ;
    let opp = b.men[1] | b.kings[1];
    let mut n = 0u32;
    for king in [false, true] {
        let dirs = if king { 4 } else { 2 };
        let mut rest = if king { b.kings[0] } else { b.men[0] };
        while rest != 0 {
            let s = rest.trailing_zeros();
            rest &= rest - 1;
            let from = 1u32 << s;
            let (mut at, mut depth, mut stack) = (s, 0u32, 0u32);
            let (mut left, mut empty) = (opp, empty0 | from);
            let (mut d, mut extended) = (0u32, false);
            loop {
                if d < dirs {
                    let over = neighbour(at, d, 1);
                    let land = neighbour(at, d, 2);
                    if land < 32 && left & bit(over) != 0 && empty & bit(land) != 0 {
                        stack |= d << (2 * depth);
                        depth += 1;
                        left &= !bit(over);
                        empty = (empty | bit(over)) & !bit(land);
                        at = land;
                        if !king && land >= 28 {
                            // Crowning ends the move: a leaf, then back.
                            n += 1;
                            if f(b.after(b.men[0] & !from, b.kings[0] | bit(land), left)) {
                                return n;
                            }
                        } else {
                            d = 0;
                            extended = false;
                            continue;
                        }
                    } else {
                        d += 1;
                        continue;
                    }
                } else {
                    if !extended && depth > 0 {
                        n += 1;
                        let to = bit(at);
                        let next = if king {
                            b.after(b.men[0], b.kings[0] & !from | to, left)
                        } else {
                            b.after(b.men[0] & !from | to, b.kings[0], left)
                        };
                        if f(next) {
                            return n;
                        }
                    }
                    if depth == 0 {
                        break;
                    }
                }
                // Back one jump: the opposite direction from the landing square.
                depth -= 1;
                let taken = (stack >> (2 * depth)) & 3;
                stack &= !(3 << (2 * depth));
                let over = neighbour(at, 3 - taken, 1);
                left |= bit(over);
                empty = (empty & !bit(over)) | bit(at);
                at = neighbour(at, 3 - taken, 2);
                d = taken + 1;
                extended = true;
            }
        }
    }
    if n > 0 {
        return n;
    }
    for king in [false, true] {
        let dirs = if king { 4 } else { 2 };
        let mut rest = if king { b.kings[0] } else { b.men[0] };
        while rest != 0 {
            let s = rest.trailing_zeros();
            rest &= rest - 1;
            let from = 1u32 << s;
            for d in 0..dirs {
                let t = neighbour(s, d, 1);
                if t >= 32 || empty0 & bit(t) == 0 {
                    continue;
                }
                let to = bit(t);
                let next = if king {
                    b.after(b.men[0], b.kings[0] & !from | to, u32::MAX)
                } else if t >= 28 {
                    b.after(b.men[0] & !from, b.kings[0] | to, u32::MAX)
                } else {
                    b.after(b.men[0] & !from | to, b.kings[0], u32::MAX)
                };
                n += 1;
                if f(next) {
                    return n;
                }
            }
        }
    }
    n
}

/// Colex rank of a set of squares.
#[inline]
fn colex_rank(mut mask: u32) -> u64 {
    let (mut r, mut i) = (0u64, 1u32);
    while mask != 0 {
        r += bin(mask.trailing_zeros(), i);
        mask &= mask - 1;
        i += 1;
    }
    r
}

/// The `k`-set of colex rank `r` (a binary search per element, as the kernel).
#[inline]
fn colex_unrank(mut r: u64, k: u32) -> u32 {
    let mut mask = 0u32;
    let mut i = k;
    while i >= 1 {
        let mut p = 0u32;
        let mut step = 16;
        while step > 0 {
            let q = p + step;
            if bin(q, i) <= r {
                p = q;
            }
            step >>= 1;
        }
        mask |= 1 << p;
        r -= bin(p, i);
        i -= 1;
    }
    mask
}

/// The positions among the set bits of `free` of the bits of `mask`.
#[inline]
fn compress(mut mask: u32, free: u32) -> u32 {
    let mut out = 0u32;
    while mask != 0 {
        let s = mask.trailing_zeros();
        mask &= mask - 1;
        out |= 1 << (free & ((1u32 << s) - 1)).count_ones();
    }
    out
}

/// The set bits of `free` at the positions in `c`.
#[inline]
fn expand(mut c: u32, mut free: u32) -> u32 {
    let mut out = 0u32;
    while c != 0 {
        let low = free & free.wrapping_neg();
        if c & 1 != 0 {
            out |= low;
        }
        free &= free.wrapping_sub(1);
        c >>= 1;
    }
    out
}

#[inline]
fn rows_mask(rows: u32) -> u32 {
    if rows >= 8 {
        u32::MAX
    } else {
        (1u32 << (4 * rows)) - 1
    }
}

/// One partition's tables (module documentation): what the kernels and the
/// twin read besides values.
#[derive(Clone, Debug)]
pub struct CheckersTables {
    /// The partition.
    pub partition: PartitionId,
    /// Its positions.
    pub size: u64,
    /// Positions of its first slice (the mirror's start at this rank).
    pub size0: u64,
    /// Descriptors of its slice and its mirror (`NONE` without one).
    pub own: [u32; 2],
    /// Descriptors, [`DESC`] words each.
    pub desc: Vec<u64>,
    /// First descriptor of each material, `NONE` for materials not listed.
    pub mat: Vec<u32>,
    /// The prefix tables of slices whose men zones overlap.
    pub prefix: Vec<u64>,
    /// Partitions read, by dependency index.
    pub deps: Vec<PartitionId>,
    /// Their sizes.
    pub dep_sizes: Vec<u64>,
    /// Which of them are not solved ([`CheckersTables::mark_missing`]).
    pub missing: Vec<bool>,
}

/// Where a successor lies: its descriptor (or `NONE`) and rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Descriptor index, `NONE` for a slice in no partition.
    pub desc: u32,
    /// Rank inside its slice.
    pub rank: u64,
}

impl CheckersTables {
    /// The tables of partition `p` of `game`; every earlier partition its
    /// moves may lead to is listed as external (see
    /// [`CheckersTables::mark_missing`]), later ones as missing.
    pub fn new(game: &Checkers, p: PartitionId) -> Result<CheckersTables> {
        let part = game.part(p).ok_or_else(|| {
            Error::NotAvailable(format!("checkers has no partition {p} in this build"))
        })?;
        let own_slices: Vec<Slice> = std::iter::once(part.first.slice())
            .chain(part.second.as_ref().map(SliceIndex::slice))
            .collect();
        let mut mats = std::collections::BTreeSet::new();
        for s in &own_slices {
            let [a, c] = s.men;
            let [b, d] = s.kings;
            if a.max(b).max(c).max(d) > 8 {
                return Err(Error::NotAvailable(format!(
                    "checkers partition {}: the kernels cover at most 8 pieces of a kind",
                    s.name()
                )));
            }
            mats.insert([a, b, c, d]);
            for i in 0..=c {
                for j in 0..=d {
                    mats.insert([c - i, d - j, a, b]);
                    if a > 0 {
                        mats.insert([c - i, d - j, a - 1, b + 1]);
                    }
                }
            }
        }
        let mut t = CheckersTables {
            partition: p,
            size: part.size(),
            size0: part.first.size(),
            own: [NONE; 2],
            desc: Vec::with_capacity(mats.len() * 49 * DESC),
            mat: vec![NONE; MAT_LEN],
            prefix: Vec::new(),
            deps: Vec::new(),
            dep_sizes: Vec::new(),
            missing: Vec::new(),
        };
        for m @ [a, b, c, d] in mats {
            if a.max(b).max(c).max(d) > 8 {
                continue;
            }
            let key =
                ((usize::from(a) * 9 + usize::from(b)) * 9 + usize::from(c)) * 9 + usize::from(d);
            t.mat[key] = (t.desc.len() / DESC) as u32;
            for rm in 0..7u8 {
                for ro in 0..7u8 {
                    let slice = Slice {
                        men: [m[0], m[2]],
                        kings: [m[1], m[3]],
                        lead: [rm, ro],
                    };
                    t.push_slice(game, p, slice);
                }
            }
        }
        let lookup = |s: Slice| {
            let b = t.mat[((usize::from(s.men[0]) * 9 + usize::from(s.kings[0])) * 9
                + usize::from(s.men[1]))
                * 9
                + usize::from(s.kings[1])];
            b + u32::from(s.lead[0]) * 7 + u32::from(s.lead[1])
        };
        t.own[0] = lookup(own_slices[0]);
        if let Some(&s) = own_slices.get(1) {
            t.own[1] = lookup(s);
        }
        Ok(t)
    }

    /// Appends the descriptor of `slice` (seen from the mover).
    fn push_slice(&mut self, game: &Checkers, p: PartitionId, slice: Slice) {
        let mut w = [0u64; DESC];
        w[6] = u64::from(NONE);
        let valid =
            (slice.men[0] > 0 || slice.lead[0] == 0) && (slice.men[1] > 0 || slice.lead[1] == 0);
        let id = slice.id();
        let part = if valid {
            game.part(PartitionId(id))
        } else {
            None
        };
        let Some(part) = part else {
            self.desc.extend_from_slice(&w);
            return;
        };
        let (index, off) = if slice.is_canonical() {
            (&part.first, 0)
        } else {
            (
                part.second
                    .as_ref()
                    .expect("a slice's mirror is in its part"),
                part.first.size(),
            )
        };
        let kind = if id == p.0 {
            KIND_INTERNAL
        } else if game.slot[id as usize] > game.slot[p.0 as usize] {
            // Solved later: no move leads there (the order is a dependency
            // order), and listing it would make every solve wait for it.
            KIND_MISSING
        } else {
            let j = match self.deps.iter().position(|q| q.0 == id) {
                Some(j) => j,
                None => {
                    self.deps.push(PartitionId(id));
                    self.dep_sizes.push(part.size());
                    self.missing.push(false);
                    self.deps.len() - 1
                }
            };
            w[5] = j as u64;
            KIND_EXTERNAL
        };
        w[0] = off;
        w[1] = match index.men_layout() {
            Ok(n) => n,
            Err(prefix) => {
                let at = self.prefix.len() as u64;
                self.prefix.extend_from_slice(prefix);
                w[4] |= PREFIX_BIT;
                at
            }
        };
        w[2] = index.king_sets();
        w[3] = index.men_sets();
        let s = slice;
        w[4] |= u64::from(s.men[0])
            | u64::from(s.kings[0]) << 4
            | u64::from(s.men[1]) << 8
            | u64::from(s.kings[1]) << 12
            | u64::from(s.lead[0]) << 16
            | u64::from(s.lead[1]) << 20
            | kind << 32;
        w[6] = u64::from(id);
        w[7] = index.size();
        self.desc.extend_from_slice(&w);
    }

    /// Marks dependency `j` as not solved: a successor there is an error.
    pub fn mark_missing(&mut self, j: usize) {
        self.missing[j] = true;
        for w in self.desc.chunks_exact_mut(DESC) {
            if (w[4] >> 32) & 3 == KIND_EXTERNAL && w[5] == j as u64 {
                w[4] = (w[4] & !(3 << 32)) | KIND_MISSING << 32;
            }
        }
    }

    /// Bytes of device memory a solve takes: the values, the internal
    /// bits, the dependencies' values whole and the tables.
    pub fn device_bytes(&self) -> u64 {
        self.size
            + self.size.div_ceil(32) * 4
            + self.dep_sizes.iter().sum::<u64>()
            + 8 * (self.desc.len() + self.prefix.len() + self.deps.len() + 1) as u64
            + 4 * self.mat.len() as u64
            + 4096
    }

    #[inline]
    fn word(&self, di: u32, k: usize) -> u64 {
        self.desc[di as usize * DESC + k]
    }

    /// The kind of descriptor `di`.
    #[inline]
    pub fn kind(&self, di: u32) -> u64 {
        if di == NONE {
            KIND_ABSENT
        } else {
            (self.word(di, 4) >> 32) & 3
        }
    }

    /// The dependency (index into [`Self::deps`]) of external descriptor `di`.
    #[inline]
    pub fn dep_of(&self, di: u32) -> usize {
        self.word(di, 5) as usize
    }

    /// The men and kings of the side to move in the slice of descriptor `di`.
    pub fn mover_pieces(&self, di: u32) -> (u32, u32) {
        let w4 = self.word(di, 4);
        ((w4 & 15) as u32, ((w4 >> 4) & 15) as u32)
    }

    /// The partition id of descriptor `di` (`NONE` for none).
    #[inline]
    pub fn partition_of(&self, di: u32) -> u32 {
        if di == NONE {
            NONE
        } else {
            self.word(di, 6) as u32
        }
    }

    /// Where `b` lies (the kernel's `ck_locate`).
    #[inline]
    pub fn locate(&self, b: &Board) -> Target {
        let absent = Target {
            desc: NONE,
            rank: u64::MAX,
        };
        let a = b.men[0].count_ones();
        let c = b.men[1].count_ones();
        let k0 = b.kings[0].count_ones();
        let k1 = b.kings[1].count_ones();
        if a.max(c).max(k0).max(k1) > 8 {
            return absent;
        }
        let base = self.mat[(((a * 9 + k0) * 9 + c) * 9 + k1) as usize];
        if base == NONE {
            return absent;
        }
        let rm = if a > 0 {
            (31 - b.men[0].leading_zeros()) / 4
        } else {
            0
        };
        let ro = if c > 0 {
            (31 - b.men[1].trailing_zeros()) / 4
        } else {
            0
        };
        let di = base + rm * 7 + ro;
        if self.kind(di) == KIND_ABSENT {
            return absent;
        }
        Target {
            desc: di,
            rank: self.rank_in(di, b),
        }
    }

    /// The rank of `b` in the slice of descriptor `di`.
    #[inline]
    fn rank_in(&self, di: u32, b: &Board) -> u64 {
        let w4 = self.word(di, 4);
        let a = (w4 & 15) as u32;
        let bk = ((w4 >> 4) & 15) as u32;
        let c = ((w4 >> 8) & 15) as u32;
        let dk = ((w4 >> 12) & 15) as u32;
        let rm = ((w4 >> 16) & 15) as u32;
        let ro = ((w4 >> 20) & 15) as u32;
        let m = b.men[0];
        let i_m = if a == 0 {
            0
        } else {
            colex_rank(m) - bin(4 * rm, a)
        };
        let i_o = if c == 0 {
            0
        } else {
            let zone = rows_mask(ro + 1) & !m.reverse_bits();
            let fhi = (zone & rows_mask(ro)).count_ones();
            colex_rank(compress(b.men[1].reverse_bits(), zone)) - bin(fhi, c)
        };
        let layout = self.word(di, 1);
        let i_mo = if w4 & PREFIX_BIT != 0 {
            self.prefix[(layout + i_m) as usize] + i_o
        } else {
            i_m * layout + i_o
        };
        let free = !(b.men[0] | b.men[1]);
        let all = b.kings[0] | b.kings[1];
        let i_k = colex_rank(compress(all, free)) * bin(bk + dk, bk)
            + colex_rank(compress(b.kings[0], all));
        i_mo * self.word(di, 2) + i_k
    }

    /// The board of rank `r` of the partition (`r < size`).
    #[inline]
    pub fn unrank(&self, r: u64) -> Board {
        let (di, r) = if r < self.size0 {
            (self.own[0], r)
        } else {
            (self.own[1], r - self.size0)
        };
        let w4 = self.word(di, 4);
        let a = (w4 & 15) as u32;
        let bk = ((w4 >> 4) & 15) as u32;
        let c = ((w4 >> 8) & 15) as u32;
        let dk = ((w4 >> 12) & 15) as u32;
        let rm = ((w4 >> 16) & 15) as u32;
        let ro = ((w4 >> 20) & 15) as u32;
        let kings = self.word(di, 2);
        let i_mo = r / kings;
        let i_k = r % kings;
        let layout = self.word(di, 1);
        let (i_m, i_o) = if w4 & PREFIX_BIT != 0 {
            // The last men set whose first iMO is at most i_mo.
            let p = &self.prefix[layout as usize..];
            let (mut lo, mut hi) = (0u64, self.word(di, 3));
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                if p[mid as usize] <= i_mo {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (lo, i_mo - p[lo as usize])
        } else {
            (i_mo / layout, i_mo % layout)
        };
        let m = if a == 0 {
            0
        } else {
            colex_unrank(i_m + bin(4 * rm, a), a)
        };
        let o = if c == 0 {
            0
        } else {
            let zone = rows_mask(ro + 1) & !m.reverse_bits();
            let fhi = (zone & rows_mask(ro)).count_ones();
            expand(colex_unrank(i_o + bin(fhi, c), c), zone).reverse_bits()
        };
        let free = !(m | o);
        let per = bin(bk + dk, bk);
        let all = expand(colex_unrank(i_k / per, bk + dk), free);
        let mine = expand(colex_unrank(i_k % per, bk), all);
        Board {
            men: [m, o],
            kings: [mine, all & !mine],
        }
    }

    /// The value of a successor at `t` as a byte would hold it were bytes
    /// wide enough (`distance + 2`; 1 pending or drawn), reading this
    /// partition's `own` values and the dependencies' `deps`, saturated bytes
    /// through `long`; `Err(failure code)` where the successor may not be
    /// read. Also whether it lies in this partition.
    #[inline]
    fn value_at(
        &self,
        t: Target,
        own: &[AtomicU8],
        deps: &[&[u8]],
        long: &LongView<'_>,
    ) -> std::result::Result<(u32, bool), u64> {
        match self.kind(t.desc) {
            KIND_INTERNAL => {
                let i = self.word(t.desc, 0) + t.rank;
                let v = u32::from(own[i as usize].load(Ordering::Relaxed));
                Ok((long.own_value(i, v), true))
            }
            KIND_EXTERNAL => {
                let j = self.word(t.desc, 5) as usize;
                let i = self.word(t.desc, 0) + t.rank;
                let v = u32::from(deps[j][i as usize]);
                if v == 0 {
                    Err(FAIL_ILLEGAL)
                } else {
                    Ok((long.dep_value(j, i, v), false))
                }
            }
            KIND_MISSING => Err(FAIL_MISSING),
            _ => Err(FAIL_ABSENT),
        }
    }

    /// The successors of rank `r` as (partition id, rank in the partition),
    /// in the rules' order; `(NONE, u64::MAX)` for one in no partition.
    pub fn successors(&self, r: u64) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        for_each_successor(&self.unrank(r), |s| {
            out.push(self.partition_rank(self.locate(&s)));
            false
        });
        out
    }

    /// A target as (partition id, rank in the partition).
    #[inline]
    pub fn partition_rank(&self, t: Target) -> (u32, u64) {
        if t.desc == NONE {
            (NONE, u64::MAX)
        } else {
            (self.partition_of(t.desc), self.word(t.desc, 0) + t.rank)
        }
    }
}

/// One position's successors: their number and the first [`MAX_SUCC`]
/// (partition id, rank in the partition) pairs.
pub type SuccessorList = (u32, Vec<(u32, u64)>);

/// One successor's share of the successor kernel's checksum.
#[inline]
pub fn checksum_term(r: u64, pid: u32, rank: u64) -> u64 {
    crate::hash::kernel_mix64(r.wrapping_mul(0x0000_0100_0000_01b3) ^ (u64::from(pid) << 40) ^ rank)
}

/// The twin of the successor kernel's checksum mode over ranks `lo..lo+n`:
/// (sum of [`checksum_term`], successors).
pub fn successors_checksum(t: &CheckersTables, lo: u64, n: u64) -> (u64, u64) {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut sum = 0u64;
            let mut count = 0u64;
            for r in lo + c * CHUNK..lo + ((c + 1) * CHUNK).min(n) {
                count += u64::from(for_each_successor(&t.unrank(r), |s| {
                    let (pid, rank) = t.partition_rank(t.locate(&s));
                    sum = sum.wrapping_add(checksum_term(r, pid, rank));
                    false
                }));
            }
            (sum, count)
        })
        .reduce(|| (0, 0), |x, y| (x.0.wrapping_add(y.0), x.1 + y.1))
}

/// The twin of the successor kernel's list mode: for each rank, its
/// successor count and the first [`MAX_SUCC`] (partition id, rank) pairs.
pub fn successors_lists(t: &CheckersTables, ranks: &[u64]) -> Vec<SuccessorList> {
    ranks
        .par_iter()
        .map(|&r| {
            let mut list = Vec::new();
            let n = for_each_successor(&t.unrank(r), |s| {
                if list.len() < MAX_SUCC {
                    list.push(t.partition_rank(t.locate(&s)));
                }
                false
            });
            (n, list)
        })
        .collect()
}

/// The lowest (code, rank) failure, as `tb_fail` keeps it.
fn fail(word: &AtomicU64, code: u64, r: u64) {
    word.fetch_min(code << 56 | (r & 0x00ff_ffff_ffff_ffff), Ordering::Relaxed);
}

/// A partition solved by the twin.
#[derive(Clone, Debug)]
pub struct TwinSolved {
    /// One byte per index: the generic solver's where every distance fits
    /// the ceiling, saturated bytes beyond it.
    pub values: Vec<u8>,
    /// The last pass run (0: none).
    pub passes: u32,
    /// (rank, distance) of every position whose distance is beyond the
    /// ceiling, in rank order.
    pub long: Vec<(u64, u32)>,
}

/// Distances beyond what a value byte holds, while a partition is solved
/// (the kernels' `CkLong`): bytes hold distances up to `ceiling`
/// ([`Value::MAX_DISTANCE`] in a build; lower in tests, so that small
/// databases exercise the path), beyond it a position holds the saturated
/// byte of its outcome ([`saturated_bytes`]) and its distance in `own`, two
/// bytes per index, allocated once a distance needs it. A dependency's
/// long distances are its [`LongDistances`](crate::LongDistances) entries.
///
/// A pass reads a saturated byte of this pass's own writing as the byte's
/// own distance or as its exact one, depending on timing: either way it is
/// not below `d` and of the parity the pass does not look for (pass `d`
/// writes wins at odd `d`, losses at even `d`; the byte's own distance is
/// the largest of that parity within the ceiling, which the pass treats as
/// it treats `d`), so the decision is the same.
#[derive(Clone, Copy, Debug)]
pub struct LongView<'a> {
    /// The longest distance a byte holds.
    pub ceiling: u32,
    /// Each dependency's long distances (rank, distance), in rank order.
    pub deps: &'a [&'a [(u64, u32)]],
    /// This partition's long distances by index (0: none), once allocated.
    pub own: Option<&'a [AtomicU16]>,
}

/// The saturated (loss, win) bytes under `ceiling`: the bytes of the
/// longest even and odd distances a byte holds (254 and 255 under
/// [`Value::MAX_DISTANCE`]).
pub fn saturated_bytes(ceiling: u32) -> (u8, u8) {
    let even = ceiling - ceiling % 2;
    let odd = if ceiling % 2 == 1 {
        ceiling
    } else {
        ceiling - 1
    };
    ((even + 2) as u8, (odd + 2) as u8)
}

impl LongView<'_> {
    /// Bytes at or above this may stand for a long distance.
    #[inline]
    fn saturated_from(&self) -> u32 {
        self.ceiling + 1
    }

    #[inline]
    fn own_value(&self, i: u64, v: u32) -> u32 {
        match self.own {
            Some(own) if v >= self.saturated_from() => {
                match own[i as usize].load(Ordering::Relaxed) {
                    0 => v,
                    d => u32::from(d) + 2,
                }
            }
            _ => v,
        }
    }

    #[inline]
    fn dep_value(&self, j: usize, i: u64, v: u32) -> u32 {
        if v < self.saturated_from() {
            return v;
        }
        let long = self.deps.get(j).copied().unwrap_or_default();
        match long.binary_search_by_key(&i, |&(r, _)| r) {
            Ok(k) => long[k].1 + 2,
            Err(_) => v,
        }
    }

    /// Stores distance `e` at index `r`: its byte, and beyond the ceiling
    /// its exact distance; `false` where that needs `own` and it is not
    /// allocated (or `e` is beyond two bytes).
    #[inline]
    fn store(&self, values: &[AtomicU8], r: u64, e: u32) -> bool {
        if e <= self.ceiling {
            values[r as usize].store((e + 2) as u8, Ordering::Relaxed);
            return true;
        }
        let Some(own) = self.own.filter(|_| e <= u32::from(u16::MAX)) else {
            return false;
        };
        own[r as usize].store(e as u16, Ordering::Relaxed);
        let (loss, win) = saturated_bytes(self.ceiling);
        values[r as usize].store(if e % 2 == 0 { loss } else { win }, Ordering::Relaxed);
        true
    }
}

/// Every index's value as a byte would hold it were bytes wide enough
/// (`distance + 2`; 0 illegal, 1 drawn): `values` with the saturated bytes
/// of the positions `long` lists (rank order) replaced by their distances.
/// Two solves under different ceilings give the same widened values.
pub fn widen(values: &[u8], long: &[(u64, u32)]) -> Vec<u32> {
    let mut wide: Vec<u32> = values.iter().map(|&b| u32::from(b)).collect();
    for &(r, d) in long {
        if let Some(v) = wide.get_mut(r as usize) {
            *v = d + 2;
        }
    }
    wide
}

/// The first scan of rank `r` (kernel `checkers_first_scan`): stores its
/// value; returns whether it has an internal successor and the longest
/// external distance seen.
#[inline]
fn first_scan(
    t: &CheckersTables,
    r: u64,
    own: &[AtomicU8],
    deps: &[&[u8]],
    long: &LongView<'_>,
    failed: &AtomicU64,
) -> (bool, u32) {
    let b = t.unrank(r);
    let mut best_win = u32::MAX;
    let mut longest = 0u32;
    let mut all_lost = true;
    let mut internal = false;
    let mut seen = 0u32;
    let mut broken = false;
    let n = for_each_successor(&b, |s| {
        let at = t.locate(&s);
        match t.value_at(at, own, deps, long) {
            Ok((_, true)) => internal = true,
            Ok((v, false)) => {
                if v >= 2 {
                    let e = v - 2;
                    seen = seen.max(e);
                    if e % 2 == 0 {
                        best_win = best_win.min(e);
                    } else {
                        longest = longest.max(e);
                    }
                } else {
                    all_lost = false;
                }
            }
            Err(code) => {
                fail(failed, code, r);
                broken = true;
                return true;
            }
        }
        false
    });
    let put = |v: u8| own[r as usize].store(v, Ordering::Relaxed);
    if broken {
        put(0);
        return (false, 0);
    }
    if n == 0 {
        put(2);
        return (false, 0);
    }
    if internal {
        put(1);
        return (true, seen);
    }
    let e = if best_win != u32::MAX {
        best_win + 1
    } else if all_lost {
        longest + 1
    } else {
        put(1);
        return (false, seen);
    };
    if !long.store(own, r, e) {
        fail(failed, FAIL_OVERFLOW, r);
        put(0);
        return (false, 0);
    }
    (false, seen.max(e))
}

/// Pass `d` of pending rank `r` (kernel `checkers_pass`): its distance if
/// decided.
#[inline]
fn pass(
    t: &CheckersTables,
    r: u64,
    d: u32,
    own: &[AtomicU8],
    deps: &[&[u8]],
    long: &LongView<'_>,
    failed: &AtomicU64,
) -> Option<u32> {
    let b = t.unrank(r);
    let (mut hit, mut blocked, mut longest) = (false, false, 0u32);
    let mut broken = false;
    for_each_successor(&b, |s| {
        let v = match t.value_at(t.locate(&s), own, deps, long) {
            Ok((v, _)) => v,
            Err(code) => {
                fail(failed, code, r);
                broken = true;
                return true;
            }
        };
        // Distances d and beyond may be this pass's own writes: unknown.
        let e = v.wrapping_sub(2);
        if v >= 2 && e < d {
            if e == d - 1 && d % 2 == 1 {
                hit = true;
            }
            if e % 2 == 1 {
                longest = longest.max(e);
            } else {
                blocked = true;
            }
        } else {
            blocked = true;
        }
        if d % 2 == 1 {
            hit
        } else {
            blocked
        }
    });
    if broken {
        return None;
    }
    if d % 2 == 1 {
        hit.then_some(d)
    } else {
        (!blocked).then_some(longest + 1)
    }
}

/// The error a failure word stands for (`None` for [`NO_FAILURE`]).
pub fn failure(game: &Checkers, t: &CheckersTables, word: u64) -> Option<Error> {
    if word == NO_FAILURE {
        return None;
    }
    let code = word >> 56;
    let r = word & 0x00ff_ffff_ffff_ffff;
    let name = game.partition_name(t.partition);
    let pos = if r < t.size {
        game.format_position(&t.unrank(r).position())
    } else {
        format!("rank {r}")
    };
    let what = match code {
        FAIL_ABSENT => "a move leads outside the game's partitions".to_string(),
        FAIL_MISSING => "a move leads to a partition that is not solved before it".to_string(),
        FAIL_ILLEGAL => "a move reaches an index the game calls illegal".to_string(),
        FAIL_OVERFLOW => format!(
            "the value is beyond the longest distance the solver holds ({})",
            u16::MAX
        ),
        _ => format!("failure code {code}"),
    };
    Some(Error::GameContract {
        game: "checkers".into(),
        message: format!("partition {name}, position {pos} (rank {r}): {what}"),
    })
}

/// Checks that `deps` are the tables' dependencies (`None`: not solved).
pub fn check_deps(t: &CheckersTables, deps: &[Option<&[u8]>]) -> Result<()> {
    if deps.len() != t.deps.len() {
        return Err(Error::NotAvailable(format!(
            "checkers partition {}: {} dependencies given, {} needed",
            t.partition,
            deps.len(),
            t.deps.len()
        )));
    }
    for (j, d) in deps.iter().enumerate() {
        if let Some(v) = d {
            if v.len() as u64 != t.dep_sizes[j] {
                return Err(Error::NotAvailable(format!(
                    "checkers partition {}: dependency {} holds {} values, not {}",
                    t.partition,
                    t.deps[j],
                    v.len(),
                    t.dep_sizes[j]
                )));
            }
        }
    }
    Ok(())
}

/// Solves the partition of `t` (the twin of the first-scan and pass kernels)
/// from its dependencies' values (`t` with the unsolved ones marked missing)
/// and their long distances (`deps_long[j]`: dependency j's entries, in rank
/// order; may be shorter than `deps` where the rest have none), bytes holding
/// distances up to `ceiling` ([`Value::MAX_DISTANCE`] in a build).
pub fn solve(
    game: &Checkers,
    t: &CheckersTables,
    deps: &[&[u8]],
    deps_long: &[&[(u64, u32)]],
    ceiling: u32,
) -> Result<TwinSolved> {
    if !(2..=Value::MAX_DISTANCE).contains(&ceiling) {
        return Err(Error::NotAvailable(format!(
            "checkers: a value byte ceiling of {ceiling} is outside 2..={}",
            Value::MAX_DISTANCE
        )));
    }
    let size = t.size;
    let values: Vec<AtomicU8> = (0..size).map(|_| AtomicU8::new(0)).collect();
    let internal: Vec<AtomicU64> = (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    let failed = AtomicU64::new(NO_FAILURE);
    let max_seen = AtomicU32::new(0);
    // Two bytes per index for distances beyond the ceiling, allocated (as
    // the device does) once a first scan or a pass needs them.
    let mut own_long: Option<Vec<AtomicU16>> = None;
    let allocate = || (0..size).map(|_| AtomicU16::new(0)).collect::<Vec<_>>();
    let mut any_internal;
    loop {
        let long = LongView {
            ceiling,
            deps: deps_long,
            own: own_long.as_deref(),
        };
        any_internal = (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(size));
                let mut seen_here = 0u32;
                let mut any = false;
                for r in lo..hi {
                    let (inside, seen) = first_scan(t, r, &values, deps, &long, &failed);
                    if inside {
                        internal[(r / 64) as usize].fetch_or(1 << (r % 64), Ordering::Relaxed);
                        any = true;
                    }
                    seen_here = seen_here.max(seen);
                }
                max_seen.fetch_max(seen_here, Ordering::Relaxed);
                any
            })
            .reduce(|| false, |x, y| x || y);
        let word = failed.load(Ordering::Relaxed);
        if word >> 56 == FAIL_OVERFLOW && own_long.is_none() {
            // A distance beyond the ceiling: scan again with room for it
            // (the scan rewrites every value; its bits and counts restart).
            own_long = Some(allocate());
            failed.store(NO_FAILURE, Ordering::Relaxed);
            max_seen.store(0, Ordering::Relaxed);
            internal.iter().for_each(|w| w.store(0, Ordering::Relaxed));
            continue;
        }
        if let Some(e) = failure(game, t, word) {
            return Err(e);
        }
        break;
    }
    let max_seen = max_seen.load(Ordering::Relaxed);
    let mut d = 0u32;
    if any_internal {
        d = 1;
        loop {
            if d > u32::from(u16::MAX) {
                return Err(Error::DistanceOverflow {
                    game: "checkers".into(),
                    partition: game.partition_name(t.partition),
                    max: u32::from(u16::MAX),
                });
            }
            if d > ceiling && own_long.is_none() {
                own_long = Some(allocate());
            }
            let long = LongView {
                ceiling,
                deps: deps_long,
                own: own_long.as_deref(),
            };
            let decided: u64 = internal
                .par_iter()
                .enumerate()
                .with_min_len(64)
                .map(|(w, word)| {
                    let mut bits = word.load(Ordering::Relaxed);
                    let mut n = 0u64;
                    while bits != 0 {
                        let r = w as u64 * 64 + u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        if values[r as usize].load(Ordering::Relaxed) != 1 {
                            continue;
                        }
                        if let Some(e) = pass(t, r, d, &values, deps, &long, &failed) {
                            if long.store(&values, r, e) {
                                n += 1;
                            } else {
                                fail(&failed, FAIL_OVERFLOW, r);
                            }
                        }
                    }
                    n
                })
                .sum();
            if let Some(e) = failure(game, t, failed.load(Ordering::Relaxed)) {
                return Err(e);
            }
            if decided == 0 && d > max_seen {
                break;
            }
            d += 1;
        }
    }
    let long = match own_long {
        Some(own) => own
            .into_iter()
            .enumerate()
            .filter_map(|(r, x)| match x.into_inner() {
                0 => None,
                e => Some((r as u64, u32::from(e))),
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(TwinSolved {
        values: values.into_iter().map(AtomicU8::into_inner).collect(),
        passes: d,
        long,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::checkers::rules;

    #[test]
    fn geometry_matches_the_rules() {
        // The kernels' arithmetic against the rules' tables, square by square.
        for s in 0..32u32 {
            for d in 0..4u32 {
                for dist in [1, 2] {
                    let mine = neighbour(s, d, dist);
                    let theirs = rules::neighbour(s as u8, d as usize, dist);
                    assert_eq!(mine < 32, theirs.is_some(), "{s} {d} {dist}");
                    if let Some(t) = theirs {
                        assert_eq!(mine, u32::from(t));
                        // Back the opposite way.
                        assert_eq!(neighbour(mine, 3 - d, dist), s);
                    }
                }
            }
        }
    }

    #[test]
    fn colex_and_compress_round_trip() {
        for k in 0..=4u32 {
            for r in 0..bin(12, k) {
                assert_eq!(colex_rank(colex_unrank(r, k)), r);
            }
        }
        let free = 0b1011_0110_1101u32;
        for c in 0..(1u32 << free.count_ones()) {
            assert_eq!(compress(expand(c, free), free), c);
        }
    }
}
