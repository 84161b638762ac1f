//! The CPU solver of one level: retrograde analysis driven by predecessors,
//! with exactly the generic solver's bytes.
//!
//! The generic solver re-expands every undecided position once per distance;
//! at 6 geese that is 20 passes over 7.5 M classes, nearly all of them draws
//! that no pass decides. Here each decided class is expanded backwards once:
//! its predecessors in the level (the geese's or the fox's step taken back)
//! lose a counter of undecided moves (a loss decides them as wins at once,
//! the last win as losses), in buckets by distance, so values are decided in
//! the generic solver's order: the shortest win, the longest loss, and what
//! is never decided a draw. A class's predecessors are found from its
//! representative only: with `s(c)` the symmetries fixing class `c`'s
//! representative, the moves of `c` into class `c'` are the steps back from
//! `c'` into `c` times `s(c) / s(c')`, so counters hold 8 per move and each
//! step back takes `8 s(c) / s(c')`. Decisions within a bucket do not depend
//! on the order threads make them, so any thread count gives the same bytes.

use super::index::Placed;
use super::{board::NONE, FoxAndGeese, Position};
use crate::game::{Game, KernelSolve, PartitionKernels, SolvedPartitions};
use crate::value::{PartitionId, Rank, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU8, Ordering};

/// Indices per parallel work item.
const CHUNK: usize = 1 << 14;
/// A legal position not yet decided (the byte a draw ends with).
const OPEN: u8 = 1;
/// `ext`: the position has a move out of the level that is not a win for
/// the geese to move there, so it cannot be lost.
const CANNOT_LOSE: u8 = u8::MAX;

/// The level solver, offered to the build as the game's CPU kernels.
#[derive(Debug)]
pub struct LevelSolver {
    game: FoxAndGeese,
}

/// The byte of distance `d`.
fn byte(d: u32) -> Result<u8> {
    Value::at_distance(d).map(Value::to_byte).ok_or_else(|| {
        Error::NotAvailable(format!("a distance of {d} plies does not fit a value byte"))
    })
}

impl LevelSolver {
    /// The solver of `game`'s levels.
    pub fn new(game: FoxAndGeese) -> Self {
        LevelSolver { game }
    }

    /// Level `k`'s values given level `k - 1`'s (none for `k = 0`), and the
    /// distances it went through.
    pub fn solve_level(&self, k: usize, lower: Option<&[u8]>) -> Result<(Vec<u8>, u32)> {
        let g = &self.game;
        let idx = &*g.index;
        let size = usize::try_from(idx.size(k)).map_err(|_| {
            Error::NotAvailable(format!("level {k} does not fit this machine's memory"))
        })?;
        let values: Vec<AtomicU8> = (0..size)
            .into_par_iter()
            .map(|_| AtomicU8::new(0))
            .collect();
        let counters: Vec<AtomicU16> = (0..size)
            .into_par_iter()
            .map(|_| AtomicU16::new(0))
            .collect();
        let mut ext = vec![0u8; size];
        // (distance, index) of decided positions to expand backwards, and of
        // wins through a capture, which a shorter one may still beat.
        type Found = Vec<(u32, u64)>;
        let init: Vec<(Found, Found)> = ext
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(c, ext)| -> Result<(Found, Found)> {
                let (mut decided, mut candidates) = (Vec::new(), Vec::new());
                let mut succ = Vec::new();
                for (i, slot) in ext.iter_mut().enumerate() {
                    let r = (c * CHUNK + i) as u64;
                    let Some(pos) = g.unrank(FoxAndGeese::level(k), Rank(r)) else {
                        continue;
                    };
                    let value = &values[r as usize];
                    if g.status(&pos) == crate::game::Status::Lost {
                        value.store(byte(0)?, Ordering::Relaxed);
                        decided.push((0, r));
                        continue;
                    }
                    succ.clear();
                    g.successors(&pos, &mut succ);
                    let (mut internal, mut best_win, mut longest, mut all_lost) =
                        (0u16, None, 0u32, true);
                    for (mv, s) in &succ {
                        if !mv.capture {
                            internal += 1;
                            continue;
                        }
                        let (_, sr) = g.rank(s);
                        let v = lower
                            .and_then(|l| l.get(sr.0 as usize))
                            .map(|&b| Value::from_byte(b))
                            .filter(|v| !v.is_illegal())
                            .ok_or_else(|| Error::GameContract {
                                game: "foxandgeese".into(),
                                message: format!(
                                    "a capture from level {k} finds no value in level {}",
                                    k.saturating_sub(1)
                                ),
                            })?;
                        match v.distance() {
                            Some(e) if e % 2 == 0 => {
                                best_win = Some(best_win.map_or(e, |b: u32| b.min(e)))
                            }
                            Some(e) => longest = longest.max(e),
                            None => all_lost = false,
                        }
                    }
                    counters[r as usize].store(8 * internal, Ordering::Relaxed);
                    value.store(OPEN, Ordering::Relaxed);
                    if internal == 0 {
                        // Every move leaves the level: decided now, as the generic first scan does.
                        let d = match best_win {
                            Some(e) => Some(e + 1),
                            None if all_lost => Some(longest + 1),
                            None => None,
                        };
                        if let Some(d) = d {
                            value.store(byte(d)?, Ordering::Relaxed);
                            decided.push((d, r));
                        }
                        continue;
                    }
                    if let Some(e) = best_win {
                        candidates.push((e + 1, r));
                    }
                    *slot = if best_win.is_some() || !all_lost {
                        CANNOT_LOSE
                    } else {
                        longest.min(u32::from(CANNOT_LOSE - 1)) as u8
                    };
                }
                Ok((decided, candidates))
            })
            .collect::<Result<_>>()?;
        let mut buckets: Vec<Vec<u64>> = Vec::new();
        let mut candidates: Vec<Vec<u64>> = Vec::new();
        let put = |into: &mut Vec<Vec<u64>>, d: u32, r: u64| {
            let d = d as usize;
            if into.len() <= d {
                into.resize_with(d + 1, Vec::new);
            }
            into[d].push(r);
        };
        for (decided, cand) in init {
            for (d, r) in decided {
                put(&mut buckets, d, r);
            }
            for (d, r) in cand {
                put(&mut candidates, d, r);
            }
        }
        let ext = &ext;
        let mut d = 0u32;
        while (d as usize) < buckets.len().max(candidates.len()) {
            let here = byte(d)?;
            let mut list = match buckets.get_mut(d as usize) {
                Some(b) => std::mem::take(b),
                None => Vec::new(),
            };
            if let Some(cands) = candidates.get_mut(d as usize) {
                for r in std::mem::take(cands) {
                    if values[r as usize]
                        .compare_exchange(OPEN, here, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                    {
                        list.push(r);
                    }
                }
            }
            let found: Vec<Vec<(u32, u64)>> = list
                .par_chunks(CHUNK)
                .map(|chunk| -> Result<Vec<(u32, u64)>> {
                    let mut out = Vec::new();
                    for &r in chunk {
                        self.expand_back(k, r, d, &values, &counters, ext, &mut out)?;
                    }
                    Ok(out)
                })
                .collect::<Result<_>>()?;
            for (e, r) in found.into_iter().flatten() {
                put(&mut buckets, e, r);
            }
            d += 1;
        }
        // In place (same layout): a second array of this size may not fit.
        drop(counters);
        let values = values.into_iter().map(AtomicU8::into_inner).collect();
        Ok((values, d))
    }

    /// Steps back from the decided position of index `r` (distance `d`):
    /// decides its predecessors that this decides, listing them by distance.
    #[allow(clippy::too_many_arguments)]
    fn expand_back(
        &self,
        k: usize,
        r: u64,
        d: u32,
        values: &[AtomicU8],
        counters: &[AtomicU16],
        ext: &[u8],
        out: &mut Vec<(u32, u64)>,
    ) -> Result<()> {
        let g = &self.game;
        let idx = &*g.index;
        let level = FoxAndGeese::level(k);
        let Some(pos) = g.unrank(level, Rank(r)) else {
            return Ok(());
        };
        let fixing_here = idx.fixing(placed(&pos));
        let lost_here = d % 2 == 0;
        let win = byte(d + 1)?;
        let mut visit = |q: Position| -> Result<()> {
            let (_, qr) = g.rank(&q);
            let qi = qr.0 as usize;
            if values[qi].load(Ordering::Relaxed) != OPEN {
                return Ok(());
            }
            if lost_here {
                if values[qi]
                    .compare_exchange(OPEN, win, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    out.push((d + 1, qr.0));
                }
                return Ok(());
            }
            let Some(rep) = g.unrank(level, qr) else {
                return Ok(());
            };
            let step = (8 * idx.fixing(placed(&rep)) / fixing_here) as u16;
            if counters[qi].fetch_sub(step, Ordering::Relaxed) == step && ext[qi] != CANNOT_LOSE {
                // Its last move into the level is a win for the other side:
                // lost, after the longest of its wins.
                let e = d.max(u32::from(ext[qi])) + 1;
                values[qi].store(byte(e)?, Ordering::Relaxed);
                out.push((e, qr.0));
            }
            Ok(())
        };
        for_each_step_back(&idx.geo, &pos, &mut visit)
    }
}

/// Calls `f` with every position of the same level whose move leads to
/// `pos`, in the order the kernels' `fg_expand` visits them: when the fox
/// is to move, a goose steps back (geese by point, directions in order);
/// else the fox does (its captures come from the level above).
fn for_each_step_back(
    geo: &super::board::Geometry,
    pos: &Position,
    f: &mut impl FnMut(Position) -> Result<()>,
) -> Result<()> {
    let occupied = pos.geese | 1 << pos.fox;
    if pos.fox_to_move {
        let mut m = pos.geese;
        while m != 0 {
            let y = m.trailing_zeros() as usize;
            m &= m - 1;
            for &x in &geo.step[y] {
                if x != NONE && occupied >> x & 1 == 0 {
                    f(Position {
                        fox: pos.fox,
                        geese: pos.geese & !(1 << y) | 1 << x,
                        fox_to_move: false,
                    })?;
                }
            }
        }
    } else {
        for &x in &geo.step[pos.fox as usize] {
            if x != NONE && occupied >> x & 1 == 0 {
                f(Position {
                    fox: x,
                    geese: pos.geese,
                    fox_to_move: true,
                })?;
            }
        }
    }
    Ok(())
}

/// What the kernels' `fg_check` writes for index `r` of level `k`, computed
/// from the CPU index and rules: the position (fox | side << 8 | 1 << 9, 0
/// where the index is illegal), its geese, its index ranked back, its moves
/// (those staying in the level << 48 | the symmetries fixing it << 40, xor
/// the digest of its captures' indices one level down) and the digest of
/// its steps back (each predecessor's index and counter share).
#[cfg(feature = "cuda")]
pub fn check_digest(game: &FoxAndGeese, k: usize, r: u64) -> [u64; 5] {
    use crate::hash::kernel_mix64;
    let idx = &*game.index;
    let geo = &idx.geo;
    let Some(p) = idx.unrank(k, Rank(r)) else {
        return [0; 5];
    };
    let fixing_here = u64::from(idx.fixing(p));
    let occupied = p.geese | 1 << p.fox;
    let (mut internal, mut captures) = (0u64, 0u64);
    if p.fox_to_move {
        for d in 0..8 {
            let n = geo.step[p.fox][d];
            if n == NONE {
                continue;
            }
            if occupied >> n & 1 == 0 {
                internal += 1;
                continue;
            }
            let beyond = geo.step[n as usize][d];
            if beyond == NONE || occupied >> beyond & 1 == 1 {
                continue;
            }
            let below = Placed {
                fox: beyond as usize,
                geese: p.geese & !(1 << n),
                fox_to_move: false,
            };
            captures = kernel_mix64(captures ^ idx.rank(k - 1, below).0);
        }
    } else {
        let mut m = p.geese;
        while m != 0 {
            let y = m.trailing_zeros() as usize;
            m &= m - 1;
            internal += geo.step[y]
                .iter()
                .filter(|&&n| n != NONE && occupied >> n & 1 == 0)
                .count() as u64;
        }
    }
    let pos = Position {
        fox: p.fox as u8,
        geese: p.geese,
        fox_to_move: p.fox_to_move,
    };
    let mut back = 0u64;
    let _ = for_each_step_back(geo, &pos, &mut |q| {
        let qr = idx.rank(k, placed(&q));
        // A rank is always its class's smallest image: unrank finds it.
        let fixing = idx.unrank(k, qr).map_or(0, |rep| idx.fixing(rep));
        let share = 8 * u64::from(fixing) / fixing_here;
        back = kernel_mix64(back ^ qr.0 ^ share << 56);
        Ok(())
    });
    [
        p.fox as u64 | u64::from(p.fox_to_move) << 8 | 1 << 9,
        p.geese,
        idx.rank(k, p).0,
        (internal << 48 | fixing_here << 40) ^ captures,
        back,
    ]
}

fn placed(pos: &Position) -> Placed {
    pos.placed()
}

impl PartitionKernels for LevelSolver {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        let k = p.0 as usize;
        if k > self.game.max_geese() || solved.reached().is_some() {
            return None;
        }
        let below = k.checked_sub(1).map(FoxAndGeese::level);
        let lower = match below {
            None => None,
            Some(b) => Some(solved.get_full(b, self.game.partition_size(b))?),
        };
        Some(
            self.solve_level(k, lower.as_deref())
                .map(|(values, passes)| KernelSolve::on_cpu(values, Some(passes))),
        )
    }

    fn name(&self) -> String {
        "foxandgeese level solver on cpu".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting the solver rests on: the shares that every decided
    /// class's steps back take off a class's counter add up to exactly the
    /// 8 per move it starts with, so a counter reaches zero when, and only
    /// when, every move staying in the level has been decided.
    #[test]
    fn steps_back_take_exactly_the_counters() {
        for diagonals in [
            super::super::Diagonals::Alternate,
            super::super::Diagonals::All,
        ] {
            let game = FoxAndGeese::new(4, diagonals);
            let idx = &*game.index;
            for k in 1..=3 {
                let level = FoxAndGeese::level(k);
                let size = idx.size(k) as usize;
                let mut taken = vec![0u32; size];
                let mut moves = vec![0u32; size];
                let mut succ = Vec::new();
                for r in 0..size as u64 {
                    let Some(pos) = game.unrank(level, Rank(r)) else {
                        continue;
                    };
                    succ.clear();
                    game.successors(&pos, &mut succ);
                    moves[r as usize] = 8 * succ.iter().filter(|(m, _)| !m.capture).count() as u32;
                    let fixing_here = idx.fixing(placed(&pos));
                    for_each_step_back(&idx.geo, &pos, &mut |q| {
                        let (_, qr) = game.rank(&q);
                        let rep = game.unrank(level, qr).expect("a rank unranks");
                        taken[qr.0 as usize] += 8 * idx.fixing(placed(&rep)) / fixing_here;
                        Ok(())
                    })
                    .unwrap();
                }
                assert!(moves.iter().any(|&m| m > 0));
                assert_eq!(taken, moves, "{diagonals:?}, {k} geese");
            }
        }
    }
}
