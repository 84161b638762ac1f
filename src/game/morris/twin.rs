//! CPU twins of the CUDA kernels, parallel with rayon. Each gives, bit for bit,
//! what its kernel gives: `tbforge bench gpu morris` ([`super::check`]) compares them.

use rayon::prelude::*;

use super::classes::HalfIndex;
use super::expand::{self as morris, Expansion, MorrisPartition, Summary};
use super::rank24;
use super::symmetry_permutations;
use crate::{Error, Rank, Result};

/// Positions per rayon task: large enough to amortise scheduling, small enough
/// to balance 16+ threads over 2^28 ranks.
const TASK: u64 = 1 << 14;

/// Checks that ranks `start..start + count` lie in `part`.
pub(crate) fn check_range(part: MorrisPartition, start: Rank, count: u64) -> Result<()> {
    let size = part.size();
    if start.0.checked_add(count).is_none_or(|end| end > size) {
        return Err(Error::BadParam {
            game: "morris".into(),
            message: format!(
                "ranks {}..{}+{count} exceed partition {}-{} ({size} positions)",
                start.0,
                start.0,
                part.mover(),
                part.opponent()
            ),
        });
    }
    Ok(())
}

/// Checks that every rank lies in `part`.
pub(crate) fn check_ranks(part: MorrisPartition, ranks: &[Rank]) -> Result<()> {
    match ranks.iter().find(|r| r.0 >= part.size()) {
        Some(r) => check_range(part, *r, 1),
        None => Ok(()),
    }
}

/// Expansions of ranks `start..start + out.len()` of `part`, into `out`
/// (the twin of kernel `morris_expand3w` over a range).
pub fn morris_expand_range(
    part: MorrisPartition,
    start: Rank,
    out: &mut [Expansion],
) -> Result<()> {
    check_range(part, start, out.len() as u64)?;
    out.par_chunks_mut(TASK as usize)
        .enumerate()
        .for_each(|(chunk, slots)| {
            let base = start.0 + chunk as u64 * TASK;
            for (i, slot) in slots.iter_mut().enumerate() {
                *slot = morris::expand(part, base + i as u64);
            }
        });
    Ok(())
}

/// Expansions of the given ranks of `part` (the twin of kernel `morris_expand3w`
/// over a rank list).
pub fn morris_expand_ranks(part: MorrisPartition, ranks: &[Rank]) -> Result<Vec<Expansion>> {
    check_ranks(part, ranks)?;
    Ok(ranks
        .par_iter()
        .map(|r| morris::expand(part, r.0))
        .collect())
}

/// Summary of the expansions of ranks `start..start + count` of `part` (the
/// twin of kernel `morris_summary3b_lb`).
pub fn morris_summary(part: MorrisPartition, start: Rank, count: u64) -> Result<Summary> {
    check_range(part, start, count)?;
    let tasks = count.div_ceil(TASK);
    Ok((0..tasks)
        .into_par_iter()
        .map(|t| {
            let lo = start.0 + t * TASK;
            let hi = (lo + TASK).min(start.0 + count);
            let mut s = Summary::default();
            for r in lo..hi {
                s.add(r, morris::expand(part, r));
            }
            s
        })
        .reduce(Summary::default, Summary::merge))
}

/// What the rank/unrank check computes for one rank (kernel `tb_rank_check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankCheck {
    /// Colour-1 cells of the unranked board.
    pub c1: u32,
    /// Colour-2 cells.
    pub c2: u32,
    /// Rank of the colour-swapped board in (k2, k1), as unranking yields it.
    pub swapped: u64,
    /// The board ranked again (must equal the input rank).
    pub rank: u64,
}

/// For each `(rank, symmetry)`: the board at `rank` of S(a, b)'s class index
/// and the rank of its image under `symmetry` (the twin of kernel
/// `class_rank_check`; the rank must come back).
pub fn class_check(a: u32, b: u32, inputs: &[(u64, u32)]) -> Result<Vec<(u32, u32, u64)>> {
    let index = HalfIndex::get(a, b);
    if let Some(&(r, _)) = inputs.iter().find(|(r, g)| *r >= index.size() || *g >= 16) {
        return Err(Error::Cuda(format!(
            "class check of S({a}, {b}): index {r} or its symmetry is out of range"
        )));
    }
    let perms = symmetry_permutations();
    let image = |g: u32, x: u32| {
        super::bits(x).fold(0u32, |acc, p| acc | 1 << perms[g as usize][p as usize])
    };
    Ok(inputs
        .par_iter()
        .map(|&(r, g)| {
            let (m, o) = index.unrank(r);
            (m, o, index.rank(image(g, m), image(g, o)))
        })
        .collect())
}

/// Unranks each rank of partition (k1, k2), ranks the board again and records
/// both (the twin of kernel `tb_rank_check`).
pub fn rank_check(k1: u32, k2: u32, ranks: &[Rank]) -> Result<Vec<RankCheck>> {
    let size = rank24::size(k1, k2).ok_or_else(|| Error::BadParam {
        game: "multinomial".into(),
        message: format!("{k1} + {k2} pieces do not fit on 24 cells"),
    })?;
    if let Some(r) = ranks.iter().find(|r| r.0 >= size) {
        return Err(Error::BadParam {
            game: "multinomial".into(),
            message: format!("rank {} is not below {size}", r.0),
        });
    }
    Ok(ranks
        .par_iter()
        .map(|r| {
            let b = rank24::unrank(r.0, k1, k2);
            RankCheck {
                c1: b.c1,
                c2: b.c2,
                swapped: b.swapped,
                rank: rank24::rank(b.c1, b.c2, k1, k2),
            }
        })
        .collect())
}
