//! The CPU twins of the puzzles' breadth-first searches over a whole index
//! (seeds 001 and 002): the two-bit BFS forward from the start and the byte
//! BFS from the goal, for any puzzle whose moves are given index to index
//! ([`IndexMoves`]). The kernels of each puzzle (`perm_two_bit_step`,
//! `ft_two_bit_step`, ...) run the same steps on the device, so their layers
//! and bytes are these.

use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// A puzzle's moves on its index: every index below `size` is a position.
pub trait IndexMoves: Sync {
    /// Indices (and positions) in all.
    fn size(&self) -> u64;

    /// Calls `emit` with the index of every successor of `index`.
    fn for_each_successor(&self, index: u64, emit: impl FnMut(u64));
}

/// Two-bit entry `s` of `words` set to `code` if unseen; true if this call did.
#[inline(always)]
fn claim(words: &[AtomicU64], s: u64, code: u64) -> bool {
    let w = &words[(s >> 5) as usize];
    let shift = 2 * (s & 31);
    let mut old = w.load(Ordering::Relaxed);
    while (old >> shift) & 3 == 0 {
        match w.compare_exchange_weak(
            old,
            old | (code << shift),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => old = now,
        }
    }
    false
}

/// Two-bit words per parallel work item.
const WORDS_PER_ITEM: usize = 1 << 10;

/// The two-bit BFS from index `start` (the kernels' `*_two_bit_step`): positions
/// first reached at each depth (depth 0: the start). Korf's codes: 0 unseen,
/// 3 expanded, the frontier and the next layer 1 and 2 by turns, so that
/// every index is expanded once.
pub fn two_bit_bfs(moves: &impl IndexMoves, start: u64) -> Vec<u64> {
    let words: Vec<AtomicU64> = (0..moves.size().div_ceil(32))
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    claim(&words, start, 1);
    let mut layers = vec![1u64];
    loop {
        let depth = layers.len() as u64 - 1;
        let current = depth % 2 + 1;
        let next = (depth + 1) % 2 + 1;
        let pattern = 0x5555_5555_5555_5555u64 * current;
        let found: u64 = (0..words.len().div_ceil(WORDS_PER_ITEM))
            .into_par_iter()
            .map(|c| {
                let mut mine = 0u64;
                let hi = ((c + 1) * WORDS_PER_ITEM).min(words.len());
                for w in c * WORDS_PER_ITEM..hi {
                    let y = words[w].load(Ordering::Relaxed) ^ pattern;
                    let mut m = !(y | (y >> 1)) & 0x5555_5555_5555_5555;
                    if m != 0 {
                        words[w].fetch_or(m * 3, Ordering::Relaxed);
                    }
                    while m != 0 {
                        let bit = u64::from(m.trailing_zeros());
                        m &= m - 1;
                        moves.for_each_successor(w as u64 * 32 + bit / 2, |s| {
                            mine += u64::from(claim(&words, s, next));
                        });
                    }
                }
                mine
            })
            .sum();
        if found == 0 {
            return layers;
        }
        layers.push(found);
    }
}

/// The byte of distance `d`, or the error the kernels' host side gives too.
pub fn distance_byte(d: u32) -> Result<u8> {
    Value::at_distance(d).map(Value::to_byte).ok_or_else(|| {
        Error::NotAvailable(format!("a distance of {d} moves does not fit a value byte"))
    })
}

/// Indices per parallel work item of the byte BFS.
const BYTES_PER_ITEM: usize = 1 << 16;

/// The byte BFS from index `goal` (the kernels' `*_byte_step`): every index's value
/// (distance `d`: [`distance_byte`]; unreached: draw) and the steps run.
pub fn byte_bfs(moves: &impl IndexMoves, goal: u64) -> Result<(Vec<u8>, u32)> {
    let size = usize::try_from(moves.size())
        .map_err(|_| Error::NotAvailable(format!("{} indices do not fit memory", moves.size())))?;
    let values: Vec<AtomicU8> = (0..size)
        .into_par_iter()
        .map(|_| AtomicU8::new(0))
        .collect();
    values[goal as usize].store(distance_byte(0)?, Ordering::Relaxed);
    let mut d = 0u32;
    loop {
        let (here, next) = (distance_byte(d)?, distance_byte(d + 1)?);
        let grew = AtomicBool::new(false);
        values
            .par_chunks(BYTES_PER_ITEM)
            .enumerate()
            .for_each(|(c, chunk)| {
                let base = (c * BYTES_PER_ITEM) as u64;
                let mut any = false;
                for (i, v) in chunk.iter().enumerate() {
                    if v.load(Ordering::Relaxed) != here {
                        continue;
                    }
                    moves.for_each_successor(base + i as u64, |s| {
                        let t = &values[s as usize];
                        if t.load(Ordering::Relaxed) == 0 {
                            t.store(next, Ordering::Relaxed);
                            any = true;
                        }
                    });
                }
                if any {
                    grew.store(true, Ordering::Relaxed);
                }
            });
        d += 1;
        if !grew.load(Ordering::Relaxed) {
            break;
        }
    }
    let draw = Value::DRAW.to_byte();
    let out = values
        .into_iter()
        .map(|v| match v.into_inner() {
            0 => draw,
            b => b,
        })
        .collect();
    Ok((out, d))
}
