//! The symmetry-class index of S(a, b): one index per class of boards under
//! the board's 16 symmetries, in the style of Gasser's and Malom's hashes.
//!
//! # Order
//! A class is written as its representative: the image with the smallest
//! mover bitboard, ties broken by the smallest opponent bitboard (the order
//! of the game's `canonical`). Classes are ordered by the representative's
//! mover board, then by its opponent board.
//!
//! # Shape
//! - **Mover placements.** For each piece count `a`, every a-subset `M` of the
//!   24 points, by its colex rank, names its representative `M*` (the
//!   smallest image) and one symmetry `g0` with `g0 M = M*`
//!   ([`MoverTable`]). Representatives are numbered by increasing bitboard;
//!   each carries its stabiliser (the symmetries that fix it).
//! - **Opponent placements.** Under a representative `M*` the opponent's `b`
//!   pieces lie on the 24 - a free points. Where the stabiliser is trivial,
//!   every placement is its own class, ranked by its colex rank among the
//!   free points: C(24 - a, b) indices. Where it is not, only the smallest
//!   placement of each orbit under the stabiliser is a class: a bitmap over
//!   the colex ranks marks them, and a count of the set bits before each
//!   64-bit word turns a colex rank into a dense one ([`HalfIndex`]).
//! - **Index.** `offset[M*] + dense rank of the opponent placement`: exactly
//!   one index per class, none unused.
//!
//! Ranking a board: the mover table gives `M*` and `g0`; the opponent board
//! is mapped by `g0`, then by every symmetry of the stabiliser, keeping the
//! smallest; its colex rank among the free points, through the bitmap where
//! there is one, is added to the representative's offset. The CUDA kernels
//! (`kernels/morris.cu`, `class_rank` and `class_unrank`) read the same
//! tables, uploaded as one blob per half ([`HalfIndex::device_blob`]).
//!
//! # Weights
//! A class stands for 16 / |stabiliser of (M*, O*)| positions. Only classes
//! under a representative with a non-trivial stabiliser can stand for fewer
//! than 16; they are found while the bitmaps are built
//! ([`HalfIndex::exceptions`]).
//!
//! Tables are built on first use, one mover table per piece count and one
//! half index per (a, b), and shared by every user in the process: for
//! `max=9` all of them take about 100 ms and 50 MB.

use super::{
    bits, map_board, rank_boards, space, symmetry_permutations, unrank_boards, FULL, SYMMETRIES,
};
use std::sync::{Arc, LazyLock, OnceLock};

/// Most pieces of one side.
const MAX: usize = 9;

/// C(x, y) for x <= 24 (zero when y > x).
#[inline]
fn binom(x: u32, y: u32) -> u64 {
    crate::hash::binomial_table()[x as usize][y as usize]
}

/// `f` over `items`, on all cores where the build machinery (rayon) is in
/// and `parallel` allows.
fn map_all<T: Sync, R: Send>(
    items: &[T],
    parallel: bool,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "build")]
    if parallel {
        use rayon::prelude::*;
        return items.par_iter().map(f).collect();
    }
    let _ = parallel;
    items.iter().map(f).collect()
}

/// The value in `cell`, built by `build` on first use; `build(true)` may
/// fan out over rayon's pool, `build(false)` must not.
///
/// A table first asked for inside a parallel loop (a rank in a `par_iter`)
/// must not be built by a fan-out while the cell's lock is held: the
/// worker waiting for its fan-out steals tasks of the outer loop, one of
/// them asks for the same cell, and a reentrant `OnceLock` initialisation
/// blocks for good (CI hung so with two cores). So on a pool worker the
/// table is built on that thread alone, inside the lock, and other users
/// wait for it; elsewhere it is built in parallel with no lock held (where
/// two threads race, one copy is dropped) and then published.
fn cached<T>(cell: &'static OnceLock<T>, build: impl Fn(bool) -> T) -> &'static T {
    if let Some(v) = cell.get() {
        return v;
    }
    #[cfg(feature = "build")]
    let on_worker = rayon::current_thread_index().is_some();
    #[cfg(not(feature = "build"))]
    let on_worker = true;
    if on_worker {
        return cell.get_or_init(|| build(false));
    }
    let built = build(true);
    let _ = cell.set(built);
    cell.get().expect("set above or by a racing thread")
}

/// Colex rank of a set of points: the sum of C(p_k, k) over its points
/// p_1 < p_2 < ... (numeric order of bitboards with the same count).
#[inline]
pub fn colex(set: u32) -> u64 {
    debug_assert!(set < 1 << 24, "a board has 24 points");
    let t = &*COLEX_BY_BYTE;
    let (b0, b1, b2) = (set & 0xff, set >> 8 & 0xff, set >> 16 & 0xff);
    let below1 = b0.count_ones() as usize;
    let below2 = below1 + b1.count_ones() as usize;
    t[0][b0 as usize][0] + t[1][b1 as usize][below1] + t[2][b2 as usize][below2]
}

/// [`colex`] a point at a time.
#[cfg(test)]
fn colex_by_points(set: u32) -> u64 {
    bits(set)
        .enumerate()
        .map(|(k, p)| binom(u32::from(p), k as u32 + 1))
        .sum()
}

/// `COLEX_BY_BYTE[i][byte][below]`: the terms of [`colex`] that the points
/// of `byte` (points `8i..8i + 8`) add when `below` points of the set lie
/// under them. A rank is then three lookups, where a point at a time took
/// a table lookup and a count per point: ranking is most of a CPU
/// expansion's work (a third of a Morris max=5 build's samples).
static COLEX_BY_BYTE: LazyLock<Box<[[[u64; 17]; 256]; 3]>> = LazyLock::new(|| {
    let mut t = Box::new([[[0u64; 17]; 256]; 3]);
    for (i, bytes) in t.iter_mut().enumerate() {
        for (byte, terms) in bytes.iter_mut().enumerate() {
            for (below, term) in terms.iter_mut().enumerate() {
                *term = bits(byte as u32)
                    .enumerate()
                    .map(|(k, p)| binom(8 * i as u32 + u32::from(p), (below + k) as u32 + 1))
                    .sum();
            }
        }
    }
    t
});

/// `GATHER[mask][byte]`: the bits of `byte` at the set bits of `mask`,
/// packed low (a parallel bit extract of one byte).
static GATHER: LazyLock<Box<[[u8; 256]; 256]>> = LazyLock::new(|| bit_moves(true));

/// Per mask and byte, the bits moved between the set bits of the mask (the
/// `j`-th of them at point `p`) and their numbers: bit `p` of the byte to
/// bit `j` where `gather`, bit `j` to bit `p` otherwise.
fn bit_moves(gather: bool) -> Box<[[u8; 256]; 256]> {
    let mut t = Box::new([[0u8; 256]; 256]);
    for (mask, row) in t.iter_mut().enumerate() {
        for (byte, out) in row.iter_mut().enumerate() {
            for (j, p) in bits(mask as u32).enumerate() {
                let (src, dst) = if gather {
                    (p as usize, j)
                } else {
                    (j, p as usize)
                };
                *out |= (((byte >> src) & 1) as u8) << dst;
            }
        }
    }
    t
}

/// The `k` points below `n` of colex rank `r`.
#[inline]
fn colex_unrank(mut r: u64, k: u32, n: u32) -> u32 {
    let mut set = 0u32;
    let mut p = n;
    for i in (1..=k).rev() {
        p -= 1;
        while binom(p, i) > r {
            p -= 1;
        }
        r -= binom(p, i);
        set |= 1 << p;
    }
    set
}

/// Colex rank of `set` (a subset of `free`) among the points of `free`,
/// numbered 0.. in increasing order: the colex rank of `set` gathered to
/// those numbers, a byte at a time.
#[inline]
fn colex_within(set: u32, free: u32) -> u64 {
    debug_assert!(set & !free == 0, "the set lies within the free points");
    let g = &*GATHER;
    let (f0, f1, f2) = (free & 0xff, free >> 8 & 0xff, free >> 16 & 0xff);
    let at1 = f0.count_ones();
    let at2 = at1 + f1.count_ones();
    let gathered = u32::from(g[f0 as usize][(set & 0xff) as usize])
        | u32::from(g[f1 as usize][(set >> 8 & 0xff) as usize]) << at1
        | u32::from(g[f2 as usize][(set >> 16 & 0xff) as usize]) << at2;
    colex(gathered)
}

/// [`colex_within`] a point at a time.
#[cfg(test)]
fn colex_within_by_points(set: u32, free: u32) -> u64 {
    bits(set)
        .enumerate()
        .map(|(k, p)| binom((free & ((1u32 << p) - 1)).count_ones(), k as u32 + 1))
        .sum()
}

/// The points of `free` whose numbers (0.. in increasing order) are the set
/// bits of `compressed`, a byte of `free` at a time (the inverse of
/// [`colex_within`]'s gathering): unranking a position, once per position
/// a pass expands, walked every free point.
#[inline]
fn spread(compressed: u32, free: u32) -> u32 {
    let t = &*SCATTER;
    let mut out = 0;
    let mut rest = compressed;
    for i in 0..3 {
        let mask = (free >> (8 * i)) & 0xff;
        out |= u32::from(t[mask as usize][(rest & 0xff) as usize]) << (8 * i);
        rest >>= mask.count_ones();
    }
    out
}

/// [`spread`] a point at a time.
#[cfg(test)]
fn spread_by_points(compressed: u32, free: u32) -> u32 {
    bits(free)
        .enumerate()
        .filter(|&(j, _)| compressed >> j & 1 != 0)
        .fold(0, |out, (_, p)| out | 1 << p)
}

/// `SCATTER[mask][low]`: the low `mask.count_ones()` bits of `low` placed,
/// in order, on the set bits of `mask`.
static SCATTER: LazyLock<Box<[[u8; 256]; 256]>> = LazyLock::new(|| bit_moves(false));

/// The position of the `k`-th (from 0) set bit of `word`, which has more
/// than `k`: a byte's count at a time, then a table.
#[inline]
fn select(word: u64, mut k: u32) -> u32 {
    let mut at = 0;
    loop {
        let byte = (word >> at) & 0xff;
        let n = byte.count_ones();
        if k < n {
            return at + u32::from(SELECT_IN_BYTE[byte as usize][k as usize]);
        }
        k -= n;
        at += 8;
    }
}

/// `SELECT_IN_BYTE[byte][k]`: the position of the `k`-th set bit of `byte`.
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut k, mut p) = (0, 0);
        while p < 8 {
            if byte >> p & 1 != 0 {
                t[byte][k] = p as u8;
                k += 1;
            }
            p += 1;
        }
        byte += 1;
    }
    t
};

/// The non-identity symmetries of `stab` (those that fix the mover board
/// `m`) acting on the free points of `m` renumbered 0.. in increasing order,
/// as byte tables: `t[k][byte]` is the image of `byte << 8k`.
fn compressed_group(m: u32, stab: u16) -> Vec<[[u32; 256]; 3]> {
    let free: Vec<u8> = bits(!m & FULL).collect();
    let mut number = [0u8; 24];
    for (j, &p) in free.iter().enumerate() {
        number[usize::from(p)] = j as u8;
    }
    let perms = symmetry_permutations();
    bits(u32::from(stab) & !1)
        .map(|g| {
            let perm = &perms[usize::from(g)];
            let mut t = [[0u32; 256]; 3];
            for (k, table) in t.iter_mut().enumerate() {
                for (byte, image) in table.iter_mut().enumerate() {
                    *image = bits(byte as u32)
                        .filter_map(|i| free.get(8 * k + usize::from(i)))
                        .fold(0, |acc, &p| acc | 1 << number[perm[usize::from(p)]]);
                }
            }
            t
        })
        .collect()
}

/// The next larger bitboard with as many bits (Gosper's hack).
#[inline]
fn next_subset(x: u32) -> u32 {
    if x == 0 {
        // The empty set is the only subset of its size: nothing follows it.
        return 0;
    }
    // The division of the classic form by the lowest bit, as a shift.
    let r = x + (x & x.wrapping_neg());
    (((r ^ x) >> 2) >> x.trailing_zeros()) | r
}

/// The representatives of the mover's placements with `a` pieces.
#[derive(Debug)]
pub struct MoverTable {
    /// By colex rank of any a-subset: its representative's number << 4 |
    /// a symmetry taking the subset to the representative.
    pub lookup: Vec<u32>,
    /// Representatives' bitboards, increasing.
    pub reps: Vec<u32>,
    /// Each representative's stabiliser: bit `g` set when symmetry `g` fixes
    /// it (bit 0, the identity, always).
    pub stab: Vec<u16>,
}

impl MoverTable {
    fn build(a: u32, parallel: bool) -> MoverTable {
        let n = binom(24, a) as usize;
        // Images in parallel; numbering in order (a subset's representative
        // is numerically smaller, so it is numbered before the subset).
        let first = (1u32 << a) - 1;
        let subsets: Vec<u32> = std::iter::successors(Some(first), |&x| Some(next_subset(x)))
            .take(n)
            .collect();
        let images: Vec<(u32, u32, u16)> = map_all(&subsets, parallel, |&m| {
            let (mut best, mut g0, mut stab) = (m, 0u32, 1u16);
            for (g, t) in SYMMETRIES.iter().enumerate().skip(1) {
                let img = map_board(t, m);
                if img < best {
                    best = img;
                    g0 = g as u32;
                }
                if img == m {
                    stab |= 1 << g;
                }
            }
            (best, g0, stab)
        });
        let mut lookup = vec![0u32; n];
        let (mut reps, mut stab) = (Vec::new(), Vec::new());
        for (i, (&m, &(best, g0, st))) in subsets.iter().zip(&images).enumerate() {
            if best == m {
                lookup[i] = (reps.len() as u32) << 4;
                reps.push(m);
                stab.push(st);
            } else {
                lookup[i] = (lookup[colex(best) as usize] & !15) | g0;
            }
        }
        MoverTable { lookup, reps, stab }
    }

    /// The table for `a` pieces (0..=9), built on first use.
    pub fn get(a: u32) -> Arc<MoverTable> {
        // An Arc here is cloned once per half built, not per lookup.
        static TABLES: [OnceLock<Arc<MoverTable>>; MAX + 1] = [const { OnceLock::new() }; MAX + 1];
        cached(&TABLES[a as usize], |parallel| {
            Arc::new(MoverTable::build(a, parallel))
        })
        .clone()
    }
}

/// How one S(a, b) is indexed: the seed's multinomial over all boards
/// (`symmetry=off`), or one index per class.
#[derive(Clone, Debug)]
pub enum HalfRanks {
    /// Every board: Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" Algorithms 1 and 2.
    Boards {
        /// Mover's pieces.
        a: u32,
        /// Opponent's pieces.
        b: u32,
    },
    /// One index per symmetry class.
    Classes(&'static HalfIndex),
}

impl HalfRanks {
    /// The index of S(a, b), of classes when `symmetry` is on.
    pub fn new(a: u32, b: u32, symmetry: bool) -> HalfRanks {
        if symmetry {
            HalfRanks::Classes(HalfIndex::get(a, b))
        } else {
            HalfRanks::Boards { a, b }
        }
    }

    /// Indices.
    pub fn size(&self) -> u64 {
        match self {
            HalfRanks::Boards { a, b } => space(*a, *b),
            HalfRanks::Classes(c) => c.size(),
        }
    }

    /// The index of (mover, opponent), folded to its class where classes are indexed.
    #[inline]
    pub fn rank(&self, mover: u32, opponent: u32) -> u64 {
        match self {
            HalfRanks::Boards { .. } => rank_boards(mover, opponent),
            HalfRanks::Classes(c) => c.rank(mover, opponent),
        }
    }

    /// The indices of this half's boards with `mover`'s board, ready to
    /// rank many opponent boards.
    #[inline]
    pub fn under(&self, mover: u32) -> RanksUnder {
        match self {
            HalfRanks::Boards { .. } => RanksUnder::Boards(mover),
            HalfRanks::Classes(c) => RanksUnder::Classes(c, c.prepare(mover)),
        }
    }

    /// The board (a class's representative) at index `r` < [`Self::size`].
    #[inline]
    pub fn unrank(&self, r: u64) -> (u32, u32) {
        match self {
            HalfRanks::Boards { a, b } => unrank_boards(r, *a as usize, *b as usize),
            HalfRanks::Classes(c) => c.unrank(r),
        }
    }

    /// Positions index `r` stands for.
    pub fn weight(&self, r: u64) -> u64 {
        match self {
            HalfRanks::Boards { .. } => 1,
            HalfRanks::Classes(c) => c.weight(r),
        }
    }
}

/// A mover's board as [`HalfIndex::rank_under`] takes it: its
/// representative and the symmetry that maps the board onto it.
#[derive(Clone, Copy, Debug)]
pub struct MoverPrep {
    rep: usize,
    to_rep: u8,
}

/// The indices of one half's boards with a given mover's board
/// ([`HalfRanks::under`]), by their opponent's board.
#[derive(Clone, Copy, Debug)]
pub enum RanksUnder {
    /// One index per board.
    Boards(u32),
    /// One index per class, under the mover's representative.
    Classes(&'static HalfIndex, MoverPrep),
}

impl RanksUnder {
    /// [`HalfRanks::rank`] of (the mover, `opponent`).
    #[inline]
    pub fn rank(&self, opponent: u32) -> u64 {
        match *self {
            RanksUnder::Boards(mover) => rank_boards(mover, opponent),
            RanksUnder::Classes(c, prep) => c.rank_under(prep, opponent),
        }
    }
}

/// Words of [`HalfIndex::device_blob`]'s header.
pub const BLOB_HEADER: usize = 16;

/// No bitmap: the representative's stabiliser is trivial.
pub const NO_BITMAP: u32 = u32::MAX;

/// One representative's share of a half: its classes, its bitmap words
/// (none when its stabiliser is trivial) and its exceptions as (rank among
/// its classes, positions).
type Block = (u64, Vec<u64>, Vec<(u64, u64)>);

/// The class index of S(a, b): mover `a` pieces, opponent `b`.
#[derive(Debug)]
pub struct HalfIndex {
    /// Mover's pieces.
    pub a: u32,
    /// Opponent's pieces.
    pub b: u32,
    /// The mover placements' representatives.
    pub movers: Arc<MoverTable>,
    /// First index of each representative's classes; the last entry is the
    /// index size.
    pub offsets: Vec<u64>,
    /// Each representative's first bitmap word, or [`NO_BITMAP`].
    pub bitmap_at: Vec<u32>,
    /// Bitmaps of the classes among opponent placements (colex order).
    pub words: Vec<u64>,
    /// Set bits before each word, within its representative's bitmap.
    pub prefix: Vec<u32>,
    /// `(index, positions)` of the classes that stand for fewer than 16
    /// positions, increasing.
    pub exceptions: Vec<(u64, u64)>,
    /// `rep_at[r >> rep_shift]`: the representative whose classes hold index
    /// `r >> rep_shift << rep_shift`, where unranking starts looking: a
    /// binary search of the offsets was half of unranking, itself a sixth
    /// of a CPU expansion's samples.
    rep_at: Vec<u32>,
    /// See [`Self::rep_at`]: about one entry per representative.
    rep_shift: u32,
}

impl HalfIndex {
    fn build(a: u32, b: u32, parallel: bool) -> HalfIndex {
        Self::build_on(MoverTable::get(a), b, parallel)
    }

    /// Builds every table of `max=9` afresh, ignoring the process's cache
    /// (for `tbforge bench gpu`): the class counts of its halves, in all.
    pub fn build_all_uncached() -> u64 {
        let movers: Vec<Arc<MoverTable>> = (2..=MAX as u32)
            .map(|a| Arc::new(MoverTable::build(a, true)))
            .collect();
        let mut classes = 0;
        for m in &movers {
            for b in 3..=MAX as u32 {
                classes += Self::build_on(m.clone(), b, true).size();
            }
        }
        classes
    }

    fn build_on(movers: Arc<MoverTable>, b: u32, parallel: bool) -> HalfIndex {
        let a = movers.reps[0].count_ones();
        assert!(a <= MAX as u32 && b <= MAX as u32);
        let n = 24 - a;
        let placements = binom(n, b);
        // Per representative: (classes, bitmap words, exceptions as (local
        // rank, positions)).
        let reps: Vec<(u32, u16)> = movers
            .reps
            .iter()
            .copied()
            .zip(movers.stab.iter().copied())
            .collect();
        let blocks: Vec<Block> = map_all(&reps, parallel, |&(m, stab)| {
            if stab == 1 {
                return (placements, Vec::new(), Vec::new());
            }
            // The stabiliser acting on the free points renumbered 0..n (an
            // order-preserving renumbering, so the smallest image there is the
            // smallest board): opponent placements are walked and mapped in
            // that compressed form, three byte lookups a symmetry.
            let group = compressed_group(m, stab);
            let mut words = vec![0u64; placements.div_ceil(64) as usize];
            let (mut classes, mut exceptions) = (0u64, Vec::new());
            let mut c = (1u32 << b) - 1;
            for i in 0..placements {
                let mut fixed = 1u64;
                let mut smallest = true;
                for t in &group {
                    let img = t[0][(c & 0xff) as usize]
                        | t[1][((c >> 8) & 0xff) as usize]
                        | t[2][(c >> 16) as usize];
                    if img < c {
                        smallest = false;
                        break;
                    }
                    fixed += u64::from(img == c);
                }
                if smallest {
                    words[(i / 64) as usize] |= 1 << (i % 64);
                    if fixed > 1 {
                        exceptions.push((classes, 16 / fixed));
                    }
                    classes += 1;
                }
                c = next_subset(c);
            }
            (classes, words, exceptions)
        });
        let mut index = HalfIndex {
            a,
            b,
            offsets: Vec::with_capacity(blocks.len() + 1),
            bitmap_at: Vec::with_capacity(blocks.len()),
            words: Vec::new(),
            prefix: Vec::new(),
            exceptions: Vec::new(),
            movers: movers.clone(),
            rep_at: Vec::new(),
            rep_shift: 0,
        };
        let mut offset = 0u64;
        for (classes, words, exceptions) in blocks {
            index.offsets.push(offset);
            if words.is_empty() {
                index.bitmap_at.push(NO_BITMAP);
            } else {
                index.bitmap_at.push(index.words.len() as u32);
                let mut before = 0u32;
                for w in words {
                    index.prefix.push(before);
                    before += w.count_ones();
                    index.words.push(w);
                }
                index
                    .exceptions
                    .extend(exceptions.into_iter().map(|(r, w)| (offset + r, w)));
            }
            offset += classes;
        }
        index.offsets.push(offset);
        let per_rep = offset / index.movers.reps.len() as u64;
        index.rep_shift = per_rep.max(1).ilog2();
        let mut j = 0;
        index.rep_at = (0..=offset >> index.rep_shift)
            .map(|i| {
                while j + 2 < index.offsets.len() && index.offsets[j + 1] <= i << index.rep_shift {
                    j += 1;
                }
                j as u32
            })
            .collect();
        index
    }

    /// The index of S(a, b) (0 <= a, b <= 9), built on first use.
    /// A plain reference: ranking looks it up per position on every core,
    /// and a shared reference count would be one contended cache line.
    pub fn get(a: u32, b: u32) -> &'static HalfIndex {
        static INDEXES: [[OnceLock<HalfIndex>; MAX + 1]; MAX + 1] =
            [const { [const { OnceLock::new() }; MAX + 1] }; MAX + 1];
        cached(&INDEXES[a as usize][b as usize], |parallel| {
            HalfIndex::build(a, b, parallel)
        })
    }

    /// Classes of S(a, b): the index size.
    pub fn size(&self) -> u64 {
        *self.offsets.last().expect("offsets end with the size")
    }

    /// The index of the class of (mover, opponent) (`a` and `b` pieces).
    #[inline]
    pub fn rank(&self, mover: u32, opponent: u32) -> u64 {
        self.rank_under(self.prepare(mover), opponent)
    }

    /// What ranking a board takes from its mover's side alone: a position's
    /// quiet moves all lead to boards with the same side to move.
    #[inline]
    pub fn prepare(&self, mover: u32) -> MoverPrep {
        let e = self.movers.lookup[colex(mover) as usize];
        MoverPrep {
            rep: (e >> 4) as usize,
            to_rep: (e & 15) as u8,
        }
    }

    /// [`Self::rank`] of (the prepared mover, opponent).
    #[inline]
    pub fn rank_under(&self, prep: MoverPrep, opponent: u32) -> u64 {
        let (j, g0) = (prep.rep, prep.to_rep);
        let o = if g0 == 0 {
            opponent
        } else {
            map_board(&SYMMETRIES[g0 as usize], opponent)
        };
        let stab = u32::from(self.movers.stab[j]);
        let best =
            bits(stab & !1).fold(o, |best, g| best.min(map_board(&SYMMETRIES[g as usize], o)));
        let local = colex_within(best, !self.movers.reps[j] & FULL);
        self.offsets[j]
            + match self.bitmap_at[j] {
                NO_BITMAP => local,
                at => {
                    let w = at as usize + (local / 64) as usize;
                    let below = self.words[w] & ((1u64 << (local % 64)) - 1);
                    u64::from(self.prefix[w]) + u64::from(below.count_ones())
                }
            }
    }

    /// The representative (mover, opponent) of index `r` (< [`Self::size`]).
    #[inline]
    pub fn unrank(&self, r: u64) -> (u32, u32) {
        let mut j = self.rep_at[(r >> self.rep_shift) as usize] as usize;
        while self.offsets[j + 1] <= r {
            j += 1;
        }
        let local = r - self.offsets[j];
        let colex_rank = match self.bitmap_at[j] {
            NO_BITMAP => local,
            at => {
                // Every bitmap has a word per 64 opponent placements: its
                // end is known, not searched for past the representatives
                // without one (most of them).
                let at = at as usize;
                let end = at + binom(24 - self.a, self.b).div_ceil(64) as usize;
                // The last word whose count before it is at most `local`.
                let w = at + self.prefix[at..end].partition_point(|&p| u64::from(p) <= local) - 1;
                let k = (local - u64::from(self.prefix[w])) as u32;
                (w - at) as u64 * 64 + u64::from(select(self.words[w], k))
            }
        };
        let mover = self.movers.reps[j];
        let free = !mover & FULL;
        (
            mover,
            spread(colex_unrank(colex_rank, self.b, 24 - self.a), free),
        )
    }

    /// The tables as the kernels read them (`ClassTab` in
    /// `kernels/morris.cu`): one array of u64 words, a header of
    /// [`BLOB_HEADER`] words (a, b, representatives, then the word offset
    /// of each table), then the tables in this order, each from a word
    /// boundary, u32 tables two to a word (low half first): the mover
    /// lookup (u32), representatives (u32), stabilisers (u32), offsets
    /// (u64), bitmap starts (u32), bitmap words (u64), prefix counts (u32).
    pub fn device_blob(&self) -> Vec<u64> {
        fn push_u32(out: &mut Vec<u64>, xs: impl ExactSizeIterator<Item = u32>) -> u64 {
            let at = out.len() as u64;
            let mut xs = xs.peekable();
            while let Some(lo) = xs.next() {
                let hi = xs.next().unwrap_or(0);
                out.push(u64::from(lo) | u64::from(hi) << 32);
            }
            at
        }
        let mut out = vec![0u64; BLOB_HEADER];
        out[0] = u64::from(self.a);
        out[1] = u64::from(self.b);
        out[2] = self.movers.reps.len() as u64;
        out[3] = push_u32(&mut out, self.movers.lookup.iter().copied());
        out[4] = push_u32(&mut out, self.movers.reps.iter().copied());
        out[5] = push_u32(&mut out, self.movers.stab.iter().map(|&s| u32::from(s)));
        out[6] = out.len() as u64;
        out.extend_from_slice(&self.offsets);
        out[7] = push_u32(&mut out, self.bitmap_at.iter().copied());
        out[8] = out.len() as u64;
        out.extend_from_slice(&self.words);
        out[9] = push_u32(&mut out, self.prefix.iter().copied());
        out
    }

    /// Positions index `r` stands for: 16, or fewer for a class with
    /// symmetries of its own.
    pub fn weight(&self, r: u64) -> u64 {
        match self.exceptions.binary_search_by_key(&r, |&(i, _)| i) {
            Ok(i) => self.exceptions[i].1,
            Err(_) => 16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::morris::symmetry_permutations;

    /// Classes of S(a, b) by Burnside's lemma: the mean over the 16
    /// symmetries of the boards each fixes. A board is fixed when each
    /// colour is a union of the symmetry's cycles; count such colourings.
    fn burnside(a: u32, b: u32) -> u64 {
        let mut total = 0u64;
        for perm in symmetry_permutations() {
            let mut seen = [false; 24];
            let mut cycles = Vec::new();
            for start in 0..24 {
                let (mut len, mut p) = (0usize, start);
                while !seen[p] {
                    seen[p] = true;
                    p = perm[p];
                    len += 1;
                }
                if len > 0 {
                    cycles.push(len);
                }
            }
            // ways[x][y]: colourings of the cycles so far with x mover and y opponent points.
            let (a, b) = (a as usize, b as usize);
            let mut ways = vec![vec![0u64; b + 1]; a + 1];
            ways[0][0] = 1;
            for len in cycles {
                for x in (0..=a).rev() {
                    for y in (0..=b).rev() {
                        let mut w = 0;
                        if x >= len {
                            w += ways[x - len][y];
                        }
                        if y >= len {
                            w += ways[x][y - len];
                        }
                        ways[x][y] += w;
                    }
                }
            }
            total += ways[a][b];
        }
        total / 16
    }

    #[test]
    fn colex_by_bytes_is_colex_by_points() {
        let mut x = 0x9e37_79b9u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let random: Vec<u32> = (0..200_000).map(|_| next() & FULL).collect();
        for set in (0..1u32 << 12).chain(random) {
            assert_eq!(colex(set), colex_by_points(set), "{set:x}");
            // A free mask holding the set, and the set on its own.
            let free = (set | next()) & FULL;
            assert_eq!(colex_within(set, free), colex_within_by_points(set, free));
            assert_eq!(colex_within(set, set), colex_within_by_points(set, set));
        }
        assert_eq!(colex(FULL), colex_by_points(FULL));
        assert_eq!(colex_within(FULL, FULL), colex_within_by_points(FULL, FULL));
    }

    #[test]
    fn spread_and_select_agree_with_a_point_at_a_time() {
        let mut rng = crate::hash::SplitMix64::new(3);
        for _ in 0..20_000 {
            let free = (rng.next_u64() as u32) & FULL;
            let compressed = (rng.next_u64() as u32) & ((1u32 << free.count_ones()) - 1);
            assert_eq!(spread(compressed, free), spread_by_points(compressed, free));
            let word = rng.next_u64() | 1 << (rng.next_u64() % 64);
            let k = (rng.next_u64() % u64::from(word.count_ones())) as u32;
            let mut slow = word;
            for _ in 0..k {
                slow &= slow - 1;
            }
            assert_eq!(select(word, k), slow.trailing_zeros(), "{word:#x} {k}");
        }
    }

    #[test]
    fn colex_round_trips() {
        for k in 1..=5u32 {
            for r in 0..binom(12, k) {
                let set = colex_unrank(r, k, 12);
                assert_eq!(set.count_ones(), k);
                assert_eq!(colex(set), r);
            }
        }
    }

    /// One index per class, every index used: sizes equal Burnside's counts,
    /// and the weights add up to all boards.
    #[test]
    fn sizes_are_class_counts_and_weights_add_up_to_boards() {
        for (a, b) in [
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (0, 5),
            (1, 2),
            (2, 3),
            (3, 3),
            (3, 9),
            (4, 4),
            (9, 2),
            (5, 4),
            (6, 6),
            (9, 9),
        ] {
            let index = HalfIndex::get(a, b);
            assert_eq!(index.size(), burnside(a, b), "S({a}, {b})");
            let boards = binom(24, a) * binom(24 - a, b);
            let short: u64 = index.exceptions.iter().map(|&(_, w)| 16 - w).sum();
            assert_eq!(16 * index.size() - short, boards, "S({a}, {b})");
        }
    }

    /// Every index unranks to a representative that ranks back to it, and
    /// every symmetric image of it ranks to the same index.
    #[test]
    fn rank_inverts_unrank_on_whole_halves() {
        let perms = symmetry_permutations();
        let image =
            |perm: &[usize; 24], x: u32| bits(x).fold(0u32, |acc, p| acc | 1 << perm[p as usize]);
        for (a, b) in [
            (0, 0),
            (0, 2),
            (1, 1),
            (2, 0),
            (2, 4),
            (3, 3),
            (4, 3),
            (3, 5),
        ] {
            let index = HalfIndex::get(a, b);
            let mut orbit_sizes = 0u64;
            for r in 0..index.size() {
                let (m, o) = index.unrank(r);
                assert_eq!(
                    (m.count_ones(), o.count_ones(), m & o),
                    (a, b, 0),
                    "S({a}, {b}) index {r}"
                );
                assert_eq!(
                    super::super::canonical(m, o),
                    (m, o),
                    "S({a}, {b}) index {r}"
                );
                let mut images: Vec<(u32, u32)> =
                    perms.iter().map(|p| (image(p, m), image(p, o))).collect();
                for &(im, io) in &images {
                    assert_eq!(index.rank(im, io), r, "S({a}, {b}) index {r}");
                }
                images.sort_unstable();
                images.dedup();
                assert_eq!(
                    images.len() as u64,
                    index.weight(r),
                    "S({a}, {b}) index {r}"
                );
                orbit_sizes += images.len() as u64;
            }
            assert_eq!(orbit_sizes, binom(24, a) * binom(24 - a, b));
        }
    }

    /// Seed-sized halves, sampled: rank(unrank(r)) == r.
    #[test]
    fn rank_inverts_unrank_on_samples_of_large_halves() {
        let mut rng = crate::hash::SplitMix64::new(7);
        for (a, b) in [(9, 9), (9, 8), (8, 9), (7, 3), (2, 9)] {
            let index = HalfIndex::get(a, b);
            for _ in 0..20_000 {
                let r = rng.next_u64() % index.size();
                let (m, o) = index.unrank(r);
                assert_eq!(index.rank(m, o), r, "S({a}, {b}) index {r}");
            }
        }
    }
}
