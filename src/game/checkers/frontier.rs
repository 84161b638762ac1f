//! The frontier search of checkers ([`FrontierSearch`]) on the CPU: the
//! twin of the `checkers_frontier_*` kernels of `kernels/checkers.cu`, step
//! for step, on all cores with rayon.
//!
//! # The steps
//! Level 0 holds the roots. For each level `l < depth - 1`: [`count`] the
//! children of every node, [`scan`] the counts into each node's first
//! child, [`expand`] the children into level `l + 1` (in the rules' order,
//! so that a child's place among its siblings is its move's index in
//! [`rules::successors`](super::rules::successors)). Then [`leaves`] scores
//! the children of level `depth - 1` where they stand without storing
//! them (they are most of the tree: about seven times the level above), and
//! [`backup`] gives every stored level its values from its children's.
//!
//! # Scores: the search's, bit for bit
//! `src/search` scores a position, in this order: without a move, lost at
//! `-(win - ply)`; repeating a position of its line (from the root to it),
//! a draw; at depth 0, the evaluation ([`super::eval::evaluate`]); else the
//! best of `-child`. So do the kernels. A repetition is found by comparing
//! the node with its ancestors through the parents' indices, but only as
//! far back as the last man move or capture (`info`'s low bits count the
//! plies since): the men's distance to crowning, summed over both sides, and
//! the number of pieces only ever shrink, so no earlier position can come
//! back. From the opening no line repeats before kings appear, and the walk
//! costs nothing there.

use super::rules::Position;
use super::twin::{for_each_successor, Board};
use crate::game::{FrontierLevels, FrontierReport, FrontierSearch};
use crate::{Error, Result};
use rayon::prelude::*;
use std::time::Instant;

/// `info`: the node repeats a position of its line.
pub const REPEAT: u32 = 0x8000_0000;
/// `info`: plies since the last man move or capture.
pub const REV_MASK: u32 = 0xffff;
/// Values per tile of the scan kernel (its threads times items each).
#[cfg(feature = "cuda")]
pub const SCAN_TILE: usize = 256 * 8;

/// A node of the tree: the kernels' `CkNode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// The position, from its side to move.
    pub board: Board,
    /// The parent's index in the level above (0 for a root).
    pub parent: u32,
    /// [`REPEAT`] and the plies since a man move or capture ([`REV_MASK`]).
    pub info: u32,
}

impl Node {
    /// A root: no line behind it.
    pub fn root(pos: &Position) -> Node {
        Node {
            board: Board::of(pos),
            parent: 0,
            info: 0,
        }
    }

    /// The kernels' six words: men, kings, parent, info.
    #[cfg(feature = "cuda")]
    pub fn words(&self) -> [u32; 6] {
        let b = &self.board;
        [
            b.men[0],
            b.men[1],
            b.kings[0],
            b.kings[1],
            self.parent,
            self.info,
        ]
    }

    /// A node from the kernels' six words.
    #[cfg(feature = "cuda")]
    pub fn from_words(w: &[u32]) -> Node {
        Node {
            board: Board {
                men: [w[0], w[1]],
                kings: [w[2], w[3]],
            },
            parent: w[4],
            info: w[5],
        }
    }
}

/// The search's evaluation of a board (`ck_evaluate`).
pub fn evaluate(b: &Board) -> i32 {
    super::eval::evaluate(&b.position())
}

/// The child's plies since a man move or capture (`ck_child_rev`): 0 where
/// the move changed the men or the number of kings.
fn child_rev(p: &Board, c: &Board, rev: u32) -> u32 {
    let same = c.men[0] == p.men[1].reverse_bits()
        && c.men[1].reverse_bits() == p.men[0]
        && (c.kings[0] | c.kings[1]).count_ones() == (p.kings[0] | p.kings[1]).count_ones();
    if same {
        (rev + 1).min(REV_MASK)
    } else {
        0
    }
}

/// Whether `c`, child of node `idx` of level `level`, equals one of its
/// last `rev` ancestors (`ck_repeats`).
fn repeats(levels: &[Vec<Node>], level: usize, mut idx: usize, c: &Board, rev: u32) -> bool {
    for k in 0..rev as usize {
        let a = &levels[level - k][idx];
        if a.board == *c {
            return true;
        }
        if k == level {
            break;
        }
        idx = a.parent as usize;
    }
    false
}

/// Children of every node of `level` (`checkers_frontier_count`).
pub fn count(levels: &[Vec<Node>], level: usize) -> Vec<u32> {
    levels[level]
        .par_iter()
        .map(|nd| {
            if nd.info & REPEAT != 0 {
                0
            } else {
                for_each_successor(&nd.board, |_| false)
            }
        })
        .collect()
}

/// Exclusive prefix sums (`checkers_frontier_scan_tiles` and `_add`).
pub fn scan(values: &[u64]) -> Vec<u64> {
    let mut run = 0u64;
    values
        .iter()
        .map(|&v| {
            let at = run;
            run += v;
            at
        })
        .collect()
}

/// The next level (`checkers_frontier_expand`): node `i`'s children at
/// `offsets[i]..offsets[i + 1]`.
pub fn expand(levels: &[Vec<Node>], level: usize, offsets: &[u64]) -> Vec<Node> {
    let total = offsets[levels[level].len()] as usize;
    let mut out = vec![Node::default(); total];
    // Each node's children in its own slice of the level.
    let mut rest: &mut [Node] = &mut out;
    let mut parts = Vec::with_capacity(levels[level].len());
    for w in offsets.windows(2) {
        let (mine, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        parts.push(mine);
        rest = tail;
    }
    parts.into_par_iter().enumerate().for_each(|(i, slot)| {
        let nd = &levels[level][i];
        if nd.info & REPEAT != 0 {
            return;
        }
        let rev = nd.info & REV_MASK;
        let mut at = 0;
        for_each_successor(&nd.board, |c| {
            let r = child_rev(&nd.board, &c, rev);
            let rep = r > 0 && repeats(levels, level, i, &c, r);
            slot[at] = Node {
                board: c,
                parent: i as u32,
                info: r | if rep { REPEAT } else { 0 },
            };
            at += 1;
            false
        });
    });
    out
}

/// The score of child `c` of node `i` of `level`, for its own side to move,
/// as the last level scores it (`CkLeaf`).
fn leaf_score(levels: &[Vec<Node>], level: usize, i: usize, c: &Board, win: i32) -> i32 {
    let nd = &levels[level][i];
    if !c.position().has_move() {
        return -(win - (level as i32 + 1));
    }
    let r = child_rev(&nd.board, c, nd.info & REV_MASK);
    if r > 0 && repeats(levels, level, i, c, r) {
        0
    } else {
        evaluate(c)
    }
}

/// Node `i` of the last stored level scored from its unstored children:
/// (value, children).
fn leaf_value(levels: &[Vec<Node>], level: usize, i: usize, win: i32) -> (i32, u64) {
    let nd = &levels[level][i];
    if nd.info & REPEAT != 0 {
        return (0, 0);
    }
    let mut best = i32::MIN;
    let k = for_each_successor(&nd.board, |c| {
        best = best.max(-leaf_score(levels, level, i, &c, win));
        false
    });
    if k == 0 {
        (-(win - level as i32), 0)
    } else {
        (best, u64::from(k))
    }
}

/// The last stored level's values (`checkers_frontier_leaves`) and the
/// number of leaves scored.
pub fn leaves(levels: &[Vec<Node>], level: usize, win: i32) -> (Vec<i32>, u64) {
    let scored: Vec<(i32, u64)> = (0..levels[level].len())
        .into_par_iter()
        .map(|i| leaf_value(levels, level, i, win))
        .collect();
    let n = scored.iter().map(|s| s.1).sum();
    (scored.into_iter().map(|s| s.0).collect(), n)
}

/// A stored level's values from its children's (`checkers_frontier_backup`).
pub fn backup(
    levels: &[Vec<Node>],
    level: usize,
    offsets: &[u64],
    child_values: &[i32],
    win: i32,
) -> Vec<i32> {
    levels[level]
        .par_iter()
        .enumerate()
        .map(|(i, nd)| {
            let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
            if nd.info & REPEAT != 0 {
                0
            } else if lo == hi {
                -(win - level as i32)
            } else {
                child_values[lo..hi].iter().map(|&v| -v).max().unwrap_or(0)
            }
        })
        .collect()
}

/// The scores, from the mover's side, of the moves of the last node of a
/// line whose nodes are `path` (the root first), the moves being its last
/// ply: what [`leaves`] takes the best of. For the line's last move, which
/// no level stores.
fn last_moves(path: &[Node], win: i32) -> Vec<i32> {
    // The line as levels of one node each, parents at index 0.
    let levels: Vec<Vec<Node>> = path
        .iter()
        .map(|n| vec![Node { parent: 0, ..*n }])
        .collect();
    let level = levels.len() - 1;
    let mut out = Vec::new();
    for_each_successor(&path[level].board, |c| {
        out.push(-leaf_score(&levels, level, 0, &c, win));
        false
    });
    out
}

/// The first root's best line (the first best child at each stored level,
/// then the last ply's moves scored again) and how many of its moves reach
/// its value, `last` being the last stored level; `children(l, i)` gives
/// the index of node `i` of level `l`'s first child and the children's
/// values, `node(l, i)` the node (the device's twin and host read them
/// each their own way).
pub fn best_line(
    last: usize,
    win: i32,
    mut children: impl FnMut(usize, usize) -> Result<(usize, Vec<i32>)>,
    mut node: impl FnMut(usize, usize) -> Result<Node>,
) -> Result<(Vec<u32>, u32)> {
    let mut line = Vec::new();
    let mut path = vec![node(0, 0)?];
    let mut i = 0usize;
    let mut best_moves = 0;
    for l in 0..last {
        let (lo, values) = children(l, i)?;
        let scores: Vec<i32> = values.iter().map(|&v| -v).collect();
        let Some((k, many)) = best_of(&scores) else {
            break;
        };
        if l == 0 {
            best_moves = many;
        }
        line.push(k);
        i = lo + k as usize;
        path.push(node(l + 1, i)?);
    }
    if line.len() == last && path.last().is_some_and(|n| n.info & REPEAT == 0) {
        if let Some((k, many)) = best_of(&last_moves(&path, win)) {
            if last == 0 {
                best_moves = many;
            }
            line.push(k);
        }
    }
    Ok((line, best_moves))
}

/// The first best index of `scores` and how many reach the best.
fn best_of(scores: &[i32]) -> Option<(u32, u32)> {
    let best = *scores.iter().max()?;
    let first = scores.iter().position(|&s| s == best)? as u32;
    let many = scores.iter().filter(|&&s| s == best).count() as u32;
    Some((first, many))
}

/// Checks a search's arguments: roots that fit a level's `u32` parents.
pub fn check_args(roots: usize, depth: u32, win: i32) -> Result<()> {
    if roots == 0 || roots > u32::MAX as usize {
        return Err(Error::NotAvailable(format!(
            "a frontier search takes 1..={} roots, not {roots}",
            u32::MAX
        )));
    }
    if depth == 0 || depth >= 1000 || win < 2000 {
        return Err(Error::NotAvailable(format!(
            "a frontier search needs a depth of 1..1000 plies (not {depth}) and a win score \
             beyond the evaluations (not {win})"
        )));
    }
    Ok(())
}

/// The checkers frontier search on the CPU (the kernels' twin).
#[derive(Clone, Copy, Debug, Default)]
pub struct FrontierTwin;

/// Every stored level's nodes and values, level 0 (the roots) first.
pub type Stored = (Vec<Vec<Node>>, Vec<Vec<i32>>);

/// The stored levels of one root's search as positions and values
/// ([`FrontierSearch::search_levels`]): a node of level `l` has the root's
/// mover to move on even levels, the other colour on odd ones.
pub fn levels_of(
    root: &Position,
    nodes: &[Vec<Node>],
    values: &[Vec<i32>],
) -> FrontierLevels<Position> {
    nodes
        .iter()
        .zip(values)
        .enumerate()
        .map(|(l, (level, vals))| {
            level
                .iter()
                .zip(vals)
                .map(|(nd, &v)| {
                    let pos = Position {
                        white_to_move: root.white_to_move != (l % 2 == 1),
                        ..nd.board.position()
                    };
                    (pos, v)
                })
                .collect()
        })
        .collect()
}

impl FrontierTwin {
    /// The search, with every stored level's nodes and values (level 0,
    /// the roots, first).
    fn run(&self, roots: &[Position], depth: u32, win: i32) -> Result<(FrontierReport, Stored)> {
        check_args(roots.len(), depth, win)?;
        let t0 = Instant::now();
        let last = depth as usize - 1;
        let mut levels: Vec<Vec<Node>> = vec![roots.iter().map(Node::root).collect()];
        let mut offsets: Vec<Vec<u64>> = Vec::new();
        for l in 0..last {
            let mut counts: Vec<u64> = count(&levels, l).into_iter().map(u64::from).collect();
            counts.push(0);
            let off = scan(&counts);
            if off[levels[l].len()] > u64::from(u32::MAX) {
                return Err(Error::NotAvailable(format!(
                    "level {} of the frontier holds {} nodes, more than a level's 32-bit \
                     parents address: search less deep",
                    l + 1,
                    off[levels[l].len()]
                )));
            }
            let next = expand(&levels, l, &off);
            offsets.push(off);
            levels.push(next);
        }
        let t_leaves = Instant::now();
        let (mut values, n_leaves) = leaves(&levels, last, win);
        let leaf_seconds = t_leaves.elapsed().as_secs_f64();
        let mut level_values = vec![Vec::new(); depth as usize];
        for l in (0..last).rev() {
            let v = backup(&levels, l, &offsets[l], &values, win);
            level_values[l + 1] = std::mem::replace(&mut values, v);
        }
        let (line, best_moves) = best_line(
            last,
            win,
            |l, i| {
                let (lo, hi) = (offsets[l][i] as usize, offsets[l][i + 1] as usize);
                Ok((lo, level_values[l + 1][lo..hi].to_vec()))
            },
            |l, i| Ok(levels[l][i]),
        )?;
        let mut sizes: Vec<u64> = levels.iter().map(|l| l.len() as u64).collect();
        sizes.push(n_leaves);
        level_values[0] = values.clone();
        let report = FrontierReport {
            values,
            line,
            best_moves,
            levels: sizes,
            seconds: t0.elapsed().as_secs_f64(),
            leaf_seconds,
        };
        Ok((report, (levels, level_values)))
    }
}

impl FrontierSearch<Position> for FrontierTwin {
    fn name(&self) -> String {
        format!("cpu twin, {} threads", rayon::current_num_threads())
    }

    fn search(&self, roots: &[Position], depth: u32, win: i32) -> Result<FrontierReport> {
        Ok(self.run(roots, depth, win)?.0)
    }

    fn search_levels(
        &self,
        root: &Position,
        depth: u32,
        win: i32,
    ) -> Result<(FrontierReport, FrontierLevels<Position>)> {
        let (report, (nodes, values)) = self.run(std::slice::from_ref(root), depth, win)?;
        Ok((report, levels_of(root, &nodes, &values)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_masks_are_the_evaluation() {
        // The kernel sums rows by three masks (bit k of the row number).
        let rows = |m: u32| {
            4 * (m & 0xffff_0000).count_ones()
                + 2 * (m & 0xff00_ff00).count_ones()
                + (m & 0xf0f0_f0f0).count_ones()
        };
        for s in 0..32u32 {
            assert_eq!(rows(1 << s), s / 4);
        }
    }

    #[test]
    fn scan_is_exclusive() {
        assert_eq!(scan(&[3, 0, 2, 0]), [0, 3, 3, 5]);
    }
}
