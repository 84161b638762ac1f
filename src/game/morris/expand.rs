//! Nine Men's Morris move expansion (sliding and flying phase): the CPU twin
//! of `kernels/morris.cu`, and the tables both share.
//!
//! # Board and cell order
//! ```text
//! 7  a7 ----------- d7 ----------- g7
//! 6  |   b6 ------- d6 ------- f6  |
//! 5  |   |   c5 --- d5 --- e5  |   |
//! 4  a4 - b4 - c4        e4 - f4 - g4
//! 3  |   |   c3 --- d3 --- e3  |   |
//! 2  |   b2 ------- d2 ------- f2  |
//! 1  a1 ----------- d1 ----------- g1
//!    a   b   c      d      e   f   g
//! ```
//! Cell `i` (bit `i` of a bitboard) is point [`POINT_NAMES`]`[i]`: a1 a4 a7 b2 b4
//! b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7, column by column.
//! In this order neighbours are on average 3.7 cells apart, which keeps the
//! incremental re-ranking of a slid piece (below) short.
//!
//! # What one expansion computes
//! A position of partition (k1, k2) is a board with k1 pieces of the side to
//! move (colour 1) and k2 of the opponent (colour 2), ranked by
//! [`super::rank24`]. Its moves: slide a piece to an adjacent empty point, or,
//! with exactly 3 pieces, fly to any empty point; a move that closes a mill
//! (the moved piece completes a line of three) removes one opponent piece not
//! in a mill, or any if all are in mills, one successor per removable piece.
//! With fewer than 3 pieces the mover has lost: no successors. (An opponent with
//! no piece at all has nothing to remove: the move then stands alone.)
//!
//! Each successor is ranked from the opponent's point of view (colours
//! swapped): partition (k2, k1), or (k2 - 1, k1) after a removal. The
//! expansion of a position is its successor count and a checksum: the wrapping
//! sum of [`successor_hash`] over its successors, independent of move order,
//! so CPU and GPU can be compared over billions of positions without storing
//! successors.
//!
//! # Speed
//! Unranking yields the parent's colour-swapped rank for free
//! ([`super::rank24::unrank`]). A slide from cell a to cell b changes only the
//! terms of Algorithm 1 for cells between a and b (elsewhere the counts of
//! pieces still to place are unchanged), so the successor's rank is the
//! swapped parent rank plus the change over that range; one walk over the
//! board gathers per-cell prefix sums that make each such change a
//! difference of two numbers (`Prefix`), with no loop per move. The successors of a
//! mill-closing move differ from the slid board by one removed opponent piece
//! at c; removing it lowers the opponent count seen by every cell before c,
//! so one walk over the board with both counts yields all of them.

use super::rank24::{self, CELLS, FULL};

/// Point names and mill lines: the game's own tables, so the kernels and
/// the rules cannot drift apart.
pub use crate::game::morris::{MILL_LINES, POINT_NAMES};

/// Bitboard of each mill (`__constant__ MORRIS_MILLS` in the kernel): the
/// rules' own table.
pub const MILLS: [u32; 16] = super::MILL_MASKS;

/// Neighbours of each cell (`__constant__ MORRIS_ADJ`): the rules' own
/// table, the lines' consecutive points (the drawn edges of the board).
pub const ADJACENT: [u32; CELLS] = super::ADJACENT;

/// The two mills through each cell, as bitboards, flattened cell by cell
/// (`__constant__ MORRIS_MILLS_AT`). Every point lies on exactly two lines.
pub const MILLS_AT: [u32; 2 * CELLS] = {
    let mut out = [0u32; 2 * CELLS];
    let mut seen = [0usize; CELLS];
    let mut i = 0;
    while i < 16 {
        let mut j = 0;
        while j < 3 {
            let c = MILL_LINES[i][j] as usize;
            out[2 * c + seen[c]] = MILLS[i];
            seen[c] += 1;
            j += 1;
        }
        i += 1;
    }
    out
};

/// A partition of the sliding/flying phase: `mover` pieces of the side to move
/// (colour 1) and `opponent` pieces of the other side (colour 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MorrisPartition {
    mover: u32,
    opponent: u32,
}

impl MorrisPartition {
    /// The partition with these piece counts, at most 9 a side (the GPU
    /// kernel's term table is sized for that).
    pub fn new(mover: u32, opponent: u32) -> crate::Result<MorrisPartition> {
        if mover > 9 || opponent > 9 {
            return Err(crate::Error::BadParam {
                game: "morris".into(),
                message: format!(
                    "partition {mover}-{opponent}: Nine Men's Morris has at most 9 pieces a side"
                ),
            });
        }
        Ok(MorrisPartition { mover, opponent })
    }

    /// Pieces of the side to move.
    pub fn mover(self) -> u32 {
        self.mover
    }

    /// Pieces of the opponent.
    pub fn opponent(self) -> u32 {
        self.opponent
    }

    /// Number of positions (ranks 0..size).
    pub fn size(self) -> u64 {
        rank24::size(self.mover, self.opponent).expect("checked in new")
    }
}

/// The successor count and checksum of one position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// Number of successors (moves, one per removable piece after a mill).
    pub successors: u32,
    /// Wrapping sum of [`successor_hash`] over the successors.
    pub checksum: u64,
}

/// Aggregate of the expansions of a range of positions; identical whatever the
/// order in which positions were expanded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Positions expanded.
    pub positions: u64,
    /// Total successors.
    pub successors: u64,
    /// Wrapping sum of [`position_digest`] over the positions.
    pub digest: u64,
}

impl Summary {
    /// Adds one position's expansion.
    pub fn add(&mut self, rank: u64, e: Expansion) {
        self.positions += 1;
        self.successors += u64::from(e.successors);
        self.digest = self.digest.wrapping_add(position_digest(rank, e));
    }

    /// Merges two summaries of disjoint ranges.
    pub fn merge(self, o: Summary) -> Summary {
        Summary {
            positions: self.positions + o.positions,
            successors: self.successors + o.successors,
            digest: self.digest.wrapping_add(o.digest),
        }
    }
}

/// The kernels' `tb_mix64`, which the summaries hash with.
pub use crate::hash::kernel_mix64 as mix64;

/// Hash of a successor: its partition (colour-1 count `k1`, colour-2 count
/// `k2`, from the successor's side to move) and its rank there. One
/// multiplication by an odd constant and one xor-shift, both bijective, so
/// distinct (partition, rank) pairs never collide; cheap because the v3
/// kernel evaluates it on every board edge (`morris_hash_tagged`).
#[inline(always)]
pub fn successor_hash(k1: u32, k2: u32, rank: u64) -> u64 {
    let tag = u64::from(k1 * 32 + k2);
    let h = (rank | (tag << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 32)
}

/// Odd constant weighing a position's successor count in its digest.
const COUNT_WEIGHT: u64 = 0xD6E8_FEB8_6659_FD93;

/// What one position contributes to a [`Summary`]'s digest:
/// `(checksum + successors * COUNT_WEIGHT) * (mix64(rank) | 1)`. Linear in
/// the checksum and the count for a given rank, so the kernel may add the
/// contributions of one position's successors at different times and from
/// different threads (`morris_summary3b` batches capture walks across
/// positions); the odd multiplier keeps every change of one position's
/// checksum or count visible in the digest.
#[inline(always)]
pub fn position_digest(rank: u64, e: Expansion) -> u64 {
    e.checksum
        .wrapping_add(u64::from(e.successors).wrapping_mul(COUNT_WEIGHT))
        .wrapping_mul(mix64(rank) | 1)
}

/// Algorithm 1's term of a cell with `m` cells after it, `l1` colour-1 and
/// `l2` colour-2 pieces still to place, for a colour-1 cell (`is1`) or an
/// empty one; 0 where the counts are no board's (`l2` = -1, more than 24
/// pieces). The kernel's table `mc_table` holds the same values.
#[inline(always)]
fn pterm(m: usize, l1: u32, l2: i32, is1: bool) -> u64 {
    if l2 < 0 {
        return 0;
    }
    let s = (l1 + l2 as u32) as usize;
    if s == 0 || s > CELLS {
        return 0;
    }
    rank24::term(m, s, l1 as usize, is1, false)
}

/// Slide re-ranking by differences of per-cell prefix terms (the kernel's
/// `mc_cell`). In the successor's view (colour 1 = the opponent `o`, `k1`
/// pieces; colour 2 = the mover `x`, `k2`), let l1_i, l2_i be the pieces
/// still to place at cell i, TE_i(d) the term of cell i if it were empty with
/// l2_i + d colour-2 pieces to place, D+_i / D-_i the change of cell i's own
/// term when l2_i grows / shrinks by one (0 on colour-2 cells) and P+_i / P-_i
/// their sums over the cells before i. A colour-2 piece sliding from a to the
/// empty cell b changes l2 by +1 on the cells strictly between them when
/// a < b and by -1 when a > b, and swaps the contents of a and b, so the
/// successor's rank is the swapped parent's plus
/// `up[a] - up[b]` (a < b) or `down[a] - down[b]` (a > b), where
/// `up[i] = TE_i(0) - P+_i` and `down[i] = TE_i(-1) + P-_i`. Every term
/// outside a valid count range cancels in those differences.
struct Prefix {
    up: [u64; CELLS],
    down: [u64; CELLS],
}

impl Prefix {
    fn new(o: u32, x: u32, k1: u32, k2: u32) -> Prefix {
        let (mut up, mut down) = ([0u64; CELLS], [0u64; CELLS]);
        let (mut l1, mut l2) = (k1, k2 as i32);
        let (mut pp, mut pm) = (0u64, 0u64);
        for i in 0..CELLS {
            let m = CELLS - 1 - i;
            let is1 = (o >> i) & 1 != 0;
            let is2 = (x >> i) & 1 != 0;
            let te = pterm(m, l1, l2, false);
            up[i] = te.wrapping_sub(pp);
            down[i] = pterm(m, l1, l2 - 1, false).wrapping_add(pm);
            if !is2 {
                let t = pterm(m, l1, l2, is1);
                pp = pp.wrapping_add(pterm(m, l1, l2 + 1, is1).wrapping_sub(t));
                pm = pm.wrapping_add(pterm(m, l1, l2 - 1, is1).wrapping_sub(t));
            }
            l1 -= u32::from(is1);
            l2 -= i32::from(is2);
        }
        Prefix { up, down }
    }

    /// Rank change of the slide a -> b.
    #[inline(always)]
    fn delta(&self, a: usize, b: usize) -> u64 {
        if a < b {
            self.up[a].wrapping_sub(self.up[b])
        } else {
            self.down[a].wrapping_sub(self.down[b])
        }
    }
}

/// Adds the successors of a mill-closing move. `o` is the opponent (colour 1
/// from the successor's view, `k1` pieces), `x` the mover after the move
/// (colour 2, `k2` pieces), `r_slid` the rank of that board in (k1, k2).
/// Removing the colour-1 piece at c gives a board of (k1 - 1, k2) whose
/// Algorithm-1 terms equal the slid board's after c, see one fewer colour-1
/// piece to place before c, and count c as empty.
#[inline(always)]
fn add_captures(o: u32, x: u32, k1: u32, k2: u32, r_slid: u64, removable: u32, e: &mut Expansion) {
    let last = 31 - removable.leading_zeros() as usize;
    let mut l1 = k1 as usize;
    let mut s = (k1 + k2) as usize;
    let mut d = 0u64; // sum over cells before c of (term with one fewer colour 1) - (term)
    for i in 0..=last {
        let m = CELLS - 1 - i;
        let is1 = (o >> i) & 1 != 0;
        let is2 = (x >> i) & 1 != 0;
        let t = rank24::term(m, s, l1, is1, is2);
        if (removable >> i) & 1 != 0 {
            // This cell empty, one fewer colour-1 piece to place.
            let t_removed = rank24::term(m, s - 1, l1 - 1, false, false);
            let r = r_slid
                .wrapping_add(d)
                .wrapping_add(t_removed)
                .wrapping_sub(t);
            e.successors += 1;
            e.checksum = e.checksum.wrapping_add(successor_hash(k1 - 1, k2, r));
        }
        if i == last {
            break;
        }
        if is1 {
            // Before a removed piece further on, this colour-1 cell sees l1 - 1.
            let t_fewer = rank24::term(m, s - 1, l1 - 1, true, false);
            d = d.wrapping_add(t_fewer).wrapping_sub(t);
        } else if !is2 {
            let t_fewer = rank24::term(m, s - 1, l1 - 1, false, false);
            d = d.wrapping_add(t_fewer).wrapping_sub(t);
        }
        l1 -= usize::from(is1);
        s -= usize::from(is1 || is2);
    }
}

/// Opponent pieces a mill may remove: those in no mill, or all if none is free.
#[inline(always)]
fn removable(opp: u32) -> u32 {
    let mut in_mill = 0;
    for m in MILLS {
        if opp & m == m {
            in_mill |= m;
        }
    }
    let free = opp & !in_mill;
    if free != 0 {
        free
    } else {
        opp
    }
}

/// Expands the position of rank `rank` in `part` (rank below `part.size()`;
/// a larger rank gives an unspecified expansion, never a panic).
pub fn expand(part: MorrisPartition, rank: u64) -> Expansion {
    let (k1, k2) = (part.mover, part.opponent);
    let board = rank24::unrank(rank, k1, k2);
    let (mover, opp) = (board.c1, board.c2);
    let mut e = Expansion::default();
    if k1 < 3 {
        return e;
    }
    let empty = !(mover | opp) & FULL;
    let flying = k1 == 3;
    let mut free_opp = None;
    // Successor's view: colour 1 = opponent (k2), colour 2 = mover (k1).
    let prefix = Prefix::new(opp, mover, k2, k1);
    let mut pieces = mover;
    while pieces != 0 {
        let a = pieces.trailing_zeros() as usize;
        pieces &= pieces - 1;
        let mut dests = if flying { empty } else { ADJACENT[a] & empty };
        while dests != 0 {
            let b = dests.trailing_zeros() as usize;
            dests &= dests - 1;
            let r_slid = board.swapped.wrapping_add(prefix.delta(a, b));
            let moved = mover ^ (1 << a) ^ (1 << b);
            let (m0, m1) = (MILLS_AT[2 * b], MILLS_AT[2 * b + 1]);
            let closes = moved & m0 == m0 || moved & m1 == m1;
            if closes && opp != 0 {
                let rem = *free_opp.get_or_insert_with(|| removable(opp));
                add_captures(opp, moved, k2, k1, r_slid, rem, &mut e);
            } else {
                e.successors += 1;
                e.checksum = e.checksum.wrapping_add(successor_hash(k2, k1, r_slid));
            }
        }
    }
    e
}

/// Reference expansion without any incremental ranking: every successor board
/// is built and ranked with [`crate::hash::Multinomial`]. Slow; for tests.
pub fn expand_reference(part: MorrisPartition, rank: u64) -> Expansion {
    use crate::hash::Multinomial;
    let (k1, k2) = (part.mover, part.opponent);
    let hash = Multinomial::new(CELLS, &[k1, k2]).expect("partition checked");
    let mut cells = [0u8; CELLS];
    hash.unrank(rank, &mut cells);
    let mut e = Expansion::default();
    if k1 < 3 {
        return e;
    }
    let mut push = |cells: &[u8; CELLS], a1: u32, a2: u32| {
        // Successor view: swap colours.
        let swapped: Vec<u8> = cells.iter().map(|&c| [0, 2, 1][c as usize]).collect();
        let h = Multinomial::new(CELLS, &[a1, a2]).expect("fits");
        e.successors += 1;
        e.checksum = e
            .checksum
            .wrapping_add(successor_hash(a1, a2, h.rank(&swapped)));
    };
    let lines_through = |b: usize| MILL_LINES.iter().filter(move |l| l.contains(&(b as u8)));
    for a in 0..CELLS {
        if cells[a] != 1 {
            continue;
        }
        for b in 0..CELLS {
            let adjacent = MILL_LINES.iter().any(|l| {
                (l[0] as usize == a && l[1] as usize == b)
                    || (l[1] as usize == a && (l[0] as usize == b || l[2] as usize == b))
                    || (l[2] as usize == a && l[1] as usize == b)
            });
            if cells[b] != 0 || !(k1 == 3 || adjacent) {
                continue;
            }
            let mut next = cells;
            next[a] = 0;
            next[b] = 1;
            let mill = lines_through(b).any(|l| l.iter().all(|&p| next[p as usize] == 1));
            if !mill || k2 == 0 {
                push(&next, k2, k1);
                continue;
            }
            let in_mill =
                |p: usize| lines_through(p).any(|l| l.iter().all(|&q| next[q as usize] == 2));
            let any_free = (0..CELLS).any(|p| next[p] == 2 && !in_mill(p));
            for c in 0..CELLS {
                if next[c] == 2 && (!any_free || !in_mill(c)) {
                    let mut taken = next;
                    taken[c] = 0;
                    push(&taken, k2 - 1, k1);
                }
            }
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_tables() {
        let edges: u32 = ADJACENT.iter().map(|a| a.count_ones()).sum();
        assert_eq!(edges, 2 * 32, "the board has 32 edges");
        for (i, adj) in ADJACENT.iter().enumerate() {
            assert_eq!(adj & (1 << i), 0);
            for (j, other) in ADJACENT.iter().enumerate() {
                assert_eq!((adj >> j) & 1, (other >> i) & 1, "symmetric");
            }
            let at = &MILLS_AT[2 * i..2 * i + 2];
            assert!(at[0] != at[1] && at.iter().all(|m| m & (1 << i) != 0));
        }
        // Degrees: the 12 corners have 2 neighbours, the 8 midpoints of the
        // outer and inner squares 3, the middle square's 4 midpoints
        // (b4 d6 f4 d2) 4.
        let mut deg = [0; 5];
        for a in ADJACENT {
            deg[a.count_ones() as usize] += 1;
        }
        assert_eq!(deg, [0, 0, 12, 8, 4]);
        assert_eq!(ADJACENT[4], (1 << 1) | (1 << 3) | (1 << 5) | (1 << 7)); // b4
    }

    /// The v3 kernel builds its move and mill tests at compile time from its
    /// own copy of the mill lines: it must be this table's.
    #[test]
    fn kernel_copy_of_mill_lines() {
        let src = include_str!("../../../kernels/morris.cu");
        let start = src
            .find("#define MORRIS_LINE_LIST")
            .expect("morris.cu defines MORRIS_LINE_LIST");
        let mut cells = Vec::new();
        for line in src[start + "#define MORRIS_LINE_LIST".len()..].lines() {
            let body = line.trim_end_matches('\\');
            cells.extend(
                body.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| t.parse::<u8>().expect("a cell number")),
            );
            if !line.trim_end().ends_with('\\') {
                break;
            }
        }
        let want: Vec<u8> = MILL_LINES.iter().flatten().copied().collect();
        assert_eq!(cells, want);
    }
}
