//! Whole-partition retrograde analysis of Nine Men's Morris (phases II/III)
//! in the form the GPU runs it (`kernels/morris.cu`, kernels `retro_*`), with its CPU twin.
//!
//! The bytes are exactly those of [`crate::solve::solve_partition`] on the
//! game `morris` (src/game/morris/mod.rs): the same first scan (blocked
//! mover lost at distance 0, positions whose successors all lie in
//! earlier partitions decided by the combine rule, the rest pending), then
//! passes d = 1, 2, ... with the pass rule of `solve::rules` (values at
//! distance >= d count as undecided), stopping when a pass decides nothing
//! and d exceeds the longest distance the first scan saw.
//!
//! What the game module defines and this file repeats, bit for bit:
//! - partition `k1-k2` (k1 >= k2 >= 3) holds S(k1, k2) (mover k1 pieces) at
//!   ranks `0..M` and, when k1 != k2, S(k2, k1) at `M..M + M'`, each ranked
//!   by [`HalfRanks`]: the seed-000 multinomial ([`super::rank24`], colour 1 =
//!   mover) with symmetry off, the class index ([`super::classes`]) with it on;
//! - `2-k` holds S(2, k), all lost.
//!
//! A pass only reads values at distances below `d` and writes values at
//! distance `d`, so the GPU needs no atomics on values: any visiting order
//! gives the same bytes.
//!
//! Candidate-driven passes: a pending position can be decided in pass `d`
//! only if one of its successors has distance exactly `d - 1` (a win needs a
//! successor lost at `d - 1`; a loss at `d` has its longest successor at
//! `d - 1`, or it would have been decided earlier). That successor is either
//! in this partition (decided in pass `d - 1`, or by the first scan at
//! distance `d - 1`) or a capture. So pass `d` runs the unchanged check on
//! the candidates only: the pending quiet predecessors ([`for_predecessors`])
//! of the positions decided at distance `d - 1`, plus the pending positions
//! whose capture event ([`FirstScan::event`]) is `d - 1`. Every other pending
//! position would stay pending, so the bytes are those of the full scan
//! ([`CpuTwin::solve_full_scan`]).

use super::bits;
use super::classes::HalfRanks;
use super::expand::{ADJACENT, MILLS, MILLS_AT};
use super::rank24::FULL;
use crate::dist::{decode_ascending, encode_ascending, Blocks, Team};
use crate::value::Value;
use crate::{Error, Result};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::LazyLock;

/// Byte of an undecided position (and of a draw).
pub const PENDING: u8 = 1;

/// Nibble tables of the 15 non-identity symmetries: entry
/// `(s * 6 + k) * 16 + v` is the image of nibble `v << 4k` under symmetry
/// `s + 1` (`__constant__ MORRIS_SYM` in `kernels/morris.cu`).
pub static SYM_NIBBLES: LazyLock<Vec<u32>> = LazyLock::new(|| {
    let perms = symmetry_permutations();
    let mut out = Vec::with_capacity(15 * 6 * 16);
    for perm in &perms[1..] {
        for k in 0..6 {
            for v in 0..16u32 {
                let mut img = 0u32;
                for bit in 0..4 {
                    if (v >> bit) & 1 != 0 {
                        img |= 1 << perm[4 * k + bit];
                    }
                }
                out.push(img);
            }
        }
    }
    out
});

/// The 16 symmetries of the board as point permutations: the game's own list.
pub use crate::game::morris::symmetry_permutations;

/// Where one kind of successor lands: a board with `a` mover and `b`
/// opponent pieces, at `offset + rank` of the target partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Pieces of the successor's side to move.
    pub a: u32,
    /// Pieces of its opponent.
    pub b: u32,
    /// Rank offset inside the target partition.
    pub offset: u64,
}

/// One half of a partition: S(a, b) at ranks `base..base + size(a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Half {
    /// First rank.
    pub base: u64,
    /// Mover's pieces.
    pub a: u32,
    /// Opponent's pieces.
    pub b: u32,
    /// Successors without capture (always in this partition).
    pub quiet: Target,
    /// Successors with a capture, in dependency [`Half::dep`].
    pub capture: Target,
    /// Which dependency (0 or 1) captures read.
    pub dep: usize,
}

/// A Morris partition to solve: `k1-k2` with k1 >= k2 >= 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MorrisSolveSpec {
    /// Larger piece count.
    pub k1: u32,
    /// Smaller piece count.
    pub k2: u32,
    /// Whether indices are folded by the 16 board symmetries.
    pub symmetry: bool,
}

impl MorrisSolveSpec {
    /// Checks `3 <= k2 <= k1 <= 9`.
    pub fn new(k1: u32, k2: u32, symmetry: bool) -> Result<MorrisSolveSpec> {
        if !(3..=9).contains(&k2) || !(k2..=9).contains(&k1) {
            return Err(Error::Cuda(format!(
                "Morris partition {k1}-{k2} is not one with 3 <= k2 <= k1 <= 9"
            )));
        }
        Ok(MorrisSolveSpec { k1, k2, symmetry })
    }

    /// The partition's name, as the game writes it.
    pub fn name(&self) -> String {
        format!("{}-{}", self.k1, self.k2)
    }

    /// How S(a, b) is indexed in this spec.
    pub fn index(&self, a: u32, b: u32) -> HalfRanks {
        HalfRanks::new(a, b, self.symmetry)
    }

    fn half_size(&self) -> u64 {
        self.index(self.k1, self.k2).size()
    }

    /// Indices of the partition.
    pub fn size(&self) -> u64 {
        if self.k1 == self.k2 {
            self.half_size()
        } else {
            2 * self.half_size()
        }
    }

    /// The halves (one when k1 == k2).
    pub fn halves(&self) -> Vec<Half> {
        let (k1, k2, m) = (self.k1, self.k2, self.half_size());
        // Half A: mover k1, opponent k2. Quiet successors: mover k2, opp k1,
        // in the second half when k2 < k1. Captures: mover k2 - 1, opp k1:
        // the lost 2-k1 when k2 == 3, else the second half of k1-(k2-1).
        let a_capture = if k2 == 3 {
            Target {
                a: 2,
                b: k1,
                offset: 0,
            }
        } else {
            Target {
                a: k2 - 1,
                b: k1,
                offset: self.index(k1, k2 - 1).size(),
            }
        };
        let mut out = vec![Half {
            base: 0,
            a: k1,
            b: k2,
            quiet: Target {
                a: k2,
                b: k1,
                offset: if k1 == k2 { 0 } else { m },
            },
            capture: a_capture,
            dep: 0,
        }];
        if k1 != k2 {
            // Half B: mover k2, opponent k1. Captures: mover k1 - 1 >= k2,
            // opp k2: the first half of (k1-1)-k2.
            out.push(Half {
                base: m,
                a: k2,
                b: k1,
                quiet: Target {
                    a: k1,
                    b: k2,
                    offset: 0,
                },
                capture: Target {
                    a: k1 - 1,
                    b: k2,
                    offset: 0,
                },
                dep: 1,
            });
        }
        out
    }

    /// Names of the partitions captures lead to, by dependency index.
    pub fn dependencies(&self) -> Vec<String> {
        self.halves()
            .iter()
            .map(|h| {
                let t = h.capture;
                if t.a == 2 {
                    format!("2-{}", t.b)
                } else {
                    format!("{}-{}", t.a.max(t.b), t.a.min(t.b))
                }
            })
            .collect()
    }

    /// Sizes the dependency partitions must have.
    pub fn dependency_sizes(&self) -> Vec<u64> {
        self.halves()
            .iter()
            .map(|h| {
                let t = h.capture;
                let s = self.index(t.a, t.b).size();
                if t.a == 2 || t.a == t.b {
                    s
                } else {
                    2 * s
                }
            })
            .collect()
    }
}

/// Something the first scan found that the game's solver reports as an error.
pub const FAIL_ILLEGAL_DEP: u32 = 1;
/// A distance beyond [`Value::MAX_DISTANCE`].
pub const FAIL_OVERFLOW: u32 = 2;

/// Successors of one position as (target kind, board), calling `f(capture,
/// mover', opponent')` for each, in the game's move order.
fn for_successors(mover: u32, opp: u32, mut f: impl FnMut(bool, u32, u32)) {
    let empty = !(mover | opp) & FULL;
    let flying = mover.count_ones() == 3;
    let in_mill = MILLS
        .iter()
        .filter(|&&m| opp & m == m)
        .fold(0, |acc, &m| acc | m);
    let removable = if in_mill == opp { opp } else { opp & !in_mill };
    for from in bits(mover) {
        for to in bits(reach(from, empty, flying)) {
            let moved = mover ^ (1 << from) ^ (1 << to);
            if closes_mill(moved, to) {
                for x in bits(removable) {
                    f(true, opp & !(1 << x), moved);
                }
            } else {
                f(false, opp, moved);
            }
        }
    }
}

/// Cells a piece on `cell` may move to: every empty cell when its side has
/// three pieces and flies, else the empty neighbours.
fn reach(cell: u8, empty: u32, flying: bool) -> u32 {
    if flying {
        empty
    } else {
        ADJACENT[usize::from(cell)] & empty
    }
}

/// Whether `pieces` fill one of the two mills through `cell`.
fn closes_mill(pieces: u32, cell: u8) -> bool {
    let (m1, m2) = (
        MILLS_AT[2 * usize::from(cell)],
        MILLS_AT[2 * usize::from(cell) + 1],
    );
    pieces & m1 == m1 || pieces & m2 == m2
}

/// Quiet predecessors of the board (mover, opponent): calls `f(mover',
/// opponent')` for every board whose side to move reaches it by a move that
/// closes no mill (such a move captures and leaves the partition). The moved
/// piece is one of `opponent`'s, back from `to` to an empty `from` (adjacent,
/// or any empty cell when it has 3 pieces and flies), and `to` must not lie
/// in a mill of `opponent`. Not canonicalized; the caller folds symmetries.
pub fn for_predecessors(mover: u32, opponent: u32, mut f: impl FnMut(u32, u32)) {
    let empty = !(mover | opponent) & FULL;
    let flying = opponent.count_ones() == 3;
    for to in bits(opponent) {
        if closes_mill(opponent, to) {
            continue;
        }
        for from in bits(reach(to, empty, flying)) {
            f(opponent ^ (1 << to) ^ (1 << from), mover);
        }
    }
}

/// Quiet successors of (mover, opponent) in the form [`for_predecessors`]
/// inverts: `f(mover', opponent')` with the sides swapped.
pub fn for_quiet_successors(mover: u32, opponent: u32, mut f: impl FnMut(u32, u32)) {
    for_successors(mover, opponent, |capture, m, o| {
        if !capture {
            f(m, o)
        }
    });
}

/// Event kind bit of a sorted event key: the position itself is a candidate
/// (capture event); clear: its predecessors are (decided by the first scan).
pub(crate) const EVENT_CAPTURE: u64 = 1 << 40;
/// Event distance shift of an event key (ranks stay below 2^40).
pub(crate) const EVENT_SHIFT: u32 = 41;

/// The CPU twin of `kernels/morris.cu`, kernels `retro_*`.
pub struct CpuTwin<'a> {
    spec: MorrisSolveSpec,
    halves: Vec<Half>,
    /// Per half: the indexes of its own boards, its quiet and its capture targets.
    indexes: Vec<[HalfRanks; 3]>,
    deps: Vec<&'a [u8]>,
}

/// The first scan's result for one index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstScan {
    /// Value byte.
    pub value: u8,
    /// Pending with a successor in this partition.
    pub internal: bool,
    /// Largest distance seen.
    pub seen: u32,
    /// FAIL_* bits.
    pub fail: u32,
    /// The distance `e` whose pass `e + 1` must look at this position: for
    /// one decided by the scan, its own distance (its predecessors become
    /// candidates); for a pending one, that of the capture that decides it
    /// if nothing in the partition does earlier (the shortest capture lost by
    /// the opponent, else, when every capture is won by the opponent, the
    /// longest one).
    pub event: Option<u32>,
}

impl<'a> CpuTwin<'a> {
    /// Pass `d` must fit the value byte.
    fn check_distance(&self, d: u32) -> Result<()> {
        if d > Value::MAX_DISTANCE {
            return Err(Error::Cuda(format!(
                "partition {}: distances beyond {}",
                self.spec.name(),
                Value::MAX_DISTANCE
            )));
        }
        Ok(())
    }

    /// `deps[i]` holds the values of [`MorrisSolveSpec::dependencies`]`[i]`.
    pub fn new(spec: MorrisSolveSpec, deps: Vec<&'a [u8]>) -> Result<CpuTwin<'a>> {
        let want = spec.dependency_sizes();
        if deps.len() != want.len() || deps.iter().zip(&want).any(|(d, &w)| d.len() as u64 != w) {
            return Err(Error::Cuda(format!(
                "partition {}: dependencies {:?} need sizes {want:?}",
                spec.name(),
                spec.dependencies()
            )));
        }
        let halves = spec.halves();
        let indexes = halves
            .iter()
            .map(|h| {
                [
                    (h.a, h.b),
                    (h.quiet.a, h.quiet.b),
                    (h.capture.a, h.capture.b),
                ]
                .map(|(a, b)| spec.index(a, b))
            })
            .collect();
        Ok(CpuTwin {
            spec,
            halves,
            indexes,
            deps,
        })
    }

    /// The half holding index `r`, by number.
    fn half(&self, r: u64) -> usize {
        usize::from(self.halves.len() > 1 && r >= self.halves[1].base)
    }

    /// The board at index `r`, with its half's number.
    fn board(&self, r: u64) -> (usize, u32, u32) {
        let i = self.half(r);
        let (m, o) = self.indexes[i][0].unrank(r - self.halves[i].base);
        (i, m, o)
    }

    /// The index of successor (m, o) of a board in half `i`: `kind` 1 for
    /// a quiet move, 2 for a capture.
    fn succ_rank(&self, i: usize, kind: usize, m: u32, o: u32) -> u64 {
        let h = &self.halves[i];
        let offset = if kind == 1 {
            h.quiet.offset
        } else {
            h.capture.offset
        };
        offset + self.indexes[i][kind].rank(m, o)
    }

    /// First scan of index `r`.
    pub fn first_scan(&self, r: u64) -> FirstScan {
        let mut out = FirstScan {
            value: 0,
            internal: false,
            seen: 0,
            fail: 0,
            event: None,
        };
        let (i, mover, opp) = self.board(r);
        let h = &self.halves[i];
        let empty = !(mover | opp) & FULL;
        let mobile = h.a == 3 || {
            let mut p = mover;
            let mut any = false;
            while p != 0 {
                let i = p.trailing_zeros();
                p &= p - 1;
                any |= ADJACENT[i as usize] & empty != 0;
            }
            any
        };
        if !mobile {
            out.value = 2;
            out.event = Some(0);
            return out;
        }
        let (mut best_win, mut longest, mut all_lost) = (u32::MAX, 0u32, true);
        let mut captures = false;
        let dep = self.deps[h.dep];
        for_successors(mover, opp, |capture, m, o| {
            if !capture {
                out.internal = true;
                return;
            }
            captures = true;
            let v = dep[self.succ_rank(i, 2, m, o) as usize];
            if v == 0 {
                out.fail |= FAIL_ILLEGAL_DEP;
                return;
            }
            if v >= 2 {
                let e = u32::from(v - 2);
                out.seen = out.seen.max(e);
                if e % 2 == 0 {
                    best_win = best_win.min(e);
                } else {
                    longest = longest.max(e);
                }
            } else {
                all_lost = false;
            }
        });
        if out.fail != 0 {
            out.internal = false;
            return out;
        }
        if out.internal {
            out.value = PENDING;
            out.event = if best_win != u32::MAX {
                Some(best_win)
            } else if all_lost && captures {
                Some(longest)
            } else {
                None
            };
            return out;
        }
        let d = if best_win != u32::MAX {
            Some(best_win + 1)
        } else if all_lost {
            Some(longest + 1)
        } else {
            None
        };
        out.value = match d {
            None => PENDING,
            Some(d) if d > Value::MAX_DISTANCE => {
                out.fail |= FAIL_OVERFLOW;
                0
            }
            Some(d) => {
                out.seen = out.seen.max(d);
                out.event = Some(d);
                (d + 2) as u8
            }
        };
        out
    }

    /// Calls `f(rank)` for the canonical quiet predecessors of index `s`
    /// (a used index), possibly more than once each.
    pub fn predecessor_ranks(&self, s: u64, mut f: impl FnMut(u64)) {
        let (i, mover, opp) = self.board(s);
        // Predecessors are boards of the other half (the same one when k1 == k2).
        let y = usize::from(self.halves[0].a != self.halves[i].b);
        let (base, index) = (self.halves[y].base, &self.indexes[y][0]);
        for_predecessors(mover, opp, |m, o| f(base + index.rank(m, o)));
    }

    /// Pass `d` for a pending index `r`: its value byte if decided.
    pub fn pass(&self, values: &[AtomicU8], r: u64, d: u32) -> Option<u8> {
        let (i, mover, opp) = self.board(r);
        let dep = self.deps[self.halves[i].dep];
        let (mut hit, mut blocked, mut longest) = (false, false, 0u32);
        let odd = d % 2 == 1;
        for_successors(mover, opp, |capture, m, o| {
            // Settled early: later successors cannot change the decision.
            if (odd && hit) || (!odd && blocked) {
                return;
            }
            let v = if capture {
                dep[self.succ_rank(i, 2, m, o) as usize]
            } else {
                values[self.succ_rank(i, 1, m, o) as usize].load(Ordering::Relaxed)
            };
            let e = u32::from(v).wrapping_sub(2);
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
        });
        if d % 2 == 1 {
            hit.then_some((d + 2) as u8)
        } else {
            (!blocked).then_some((longest + 3) as u8)
        }
    }

    /// Solves the partition by candidate-driven passes (module
    /// documentation), the way the GPU does. With the environment variable
    /// `TBFORGE_TWIN_TRACE` set, says on stderr where the time went.
    pub fn solve(&self) -> Result<SolveStats<Vec<u8>>> {
        let size = self.spec.size();
        let trace = std::env::var_os("TBFORGE_TWIN_TRACE").is_some();
        let t0 = std::time::Instant::now();
        let values: Vec<AtomicU8> = (0..size)
            .into_par_iter()
            .map(|_| AtomicU8::new(0))
            .collect();
        const CHUNK: u64 = 1 << 16;
        let chunks: Vec<Range<u64>> = (0..size.div_ceil(CHUNK))
            .map(|c| c * CHUNK..(c * CHUNK + CHUNK).min(size))
            .collect();
        let ScanTally {
            seen,
            fail,
            pending,
            mut events,
        } = self.first_scan_of(&chunks, &values);
        check_fail(&self.spec, fail)?;
        events.par_sort_unstable();
        if trace {
            eprintln!(
                "twin {}: first scan {:.2} s, {} events",
                self.spec.name(),
                t0.elapsed().as_secs_f64(),
                events.len()
            );
        }
        let (mut t_cand, mut t_pass, mut n_cand) = (0.0, 0.0, 0usize);
        let max_seen = seen;
        // One bit per index: claimed as a candidate of the current pass.
        let marks: Vec<AtomicU64> = (0..size.div_ceil(64))
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        let mut decided: Vec<u64> = Vec::new();
        let mut next_event = 0usize;
        let mut d = 1u32;
        loop {
            self.check_distance(d)?;
            let end = next_event
                + events[next_event..].partition_point(|&k| k >> EVENT_SHIFT < u64::from(d));
            let now = &events[next_event..end];
            next_event = end;
            let pass = self.candidate_pass(&values, &marks, &decided, now, d);
            t_cand += pass.claim_seconds;
            t_pass += pass.check_seconds;
            n_cand += pass.candidates;
            decided = pass.decided;
            if decided.is_empty() && d > max_seen {
                break;
            }
            d += 1;
        }
        if trace {
            eprintln!(
                "twin {}: candidates {t_cand:.2} s ({n_cand}), checks {t_pass:.2} s, {d} passes",
                self.spec.name()
            );
        }
        Ok(SolveStats {
            value: values.into_iter().map(AtomicU8::into_inner).collect(),
            passes: d,
            first_pending: pending,
            max_seen,
            lists: ListUse::default(),
        })
    }

    /// Pass `d` over its candidates: claims (a bit of `marks` each, so a
    /// position is checked once however often it is named) the
    /// predecessors of `decided` (positions decided at distance `d - 1`)
    /// and of `now`'s events without a capture, and `now`'s capture events
    /// themselves; checks them, writing the values decided at `d`; releases
    /// the claims. Several callers may run it at once on shared `values`
    /// and `marks` ([`Self::solve_shared`]): the check reads distances
    /// below `d` only, and a position claimed again after its release is
    /// checked again to the same effect.
    fn candidate_pass(
        &self,
        values: &[AtomicU8],
        marks: &[AtomicU64],
        decided: &[u64],
        now: &[u64],
        d: u32,
    ) -> CandidatePass {
        let claim = |p: u64| {
            let bit = 1u64 << (p % 64);
            values[p as usize].load(Ordering::Relaxed) == PENDING
                && marks[(p / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
        };
        let rank_of = |k: u64| k & (EVENT_CAPTURE - 1);
        let t1 = std::time::Instant::now();
        let frontier = decided.par_iter().copied().chain(
            now.par_iter()
                .filter(|&&k| k & EVENT_CAPTURE == 0)
                .map(|&k| rank_of(k)),
        );
        let mut candidates: Vec<u64> = frontier
            .fold(Vec::new, |mut acc, s| {
                self.predecessor_ranks(s, |p| {
                    if claim(p) {
                        acc.push(p);
                    }
                });
                acc
            })
            .flatten()
            .collect();
        candidates.par_extend(
            now.par_iter()
                .filter(|&&k| k & EVENT_CAPTURE != 0)
                .map(|&k| rank_of(k))
                .filter(|&p| claim(p)),
        );
        let t2 = std::time::Instant::now();
        let decided = candidates
            .par_iter()
            .filter_map(|&r| {
                let v = self.pass(values, r, d)?;
                values[r as usize].store(v, Ordering::Relaxed);
                Some(r)
            })
            .collect();
        candidates.par_iter().for_each(|&p| {
            marks[(p / 64) as usize].fetch_and(!(1u64 << (p % 64)), Ordering::Relaxed);
        });
        CandidatePass {
            decided,
            candidates: candidates.len(),
            claim_seconds: (t2 - t1).as_secs_f64(),
            check_seconds: t2.elapsed().as_secs_f64(),
        }
    }

    /// The first scan of the indices in `ranges` (one work item each),
    /// their values stored in `values`, with what the scan tallied.
    /// Tallied per range: shared atomic counters per index serialized the
    /// threads on one cache line.
    fn first_scan_of(&self, ranges: &[Range<u64>], values: &[AtomicU8]) -> ScanTally {
        let (seen, fail, pending, events) = ranges
            .par_iter()
            .map(|range| {
                let (mut seen, mut fail, mut pending, mut events) = (0u32, 0u32, 0u64, Vec::new());
                for r in range.clone() {
                    let s = self.first_scan(r);
                    values[r as usize].store(s.value, Ordering::Relaxed);
                    seen = seen.max(s.seen);
                    fail |= s.fail;
                    pending += u64::from(s.internal);
                    let kind = if s.internal { EVENT_CAPTURE } else { 0 };
                    if let Some(e) = s.event {
                        events.push((u64::from(e) << EVENT_SHIFT) | kind | r);
                    }
                }
                (seen, fail, pending, events)
            })
            .reduce(
                || (0, 0, 0, Vec::new()),
                |mut a, mut b| {
                    if a.3.len() < b.3.len() {
                        std::mem::swap(&mut a.3, &mut b.3);
                    }
                    a.3.extend_from_slice(&b.3);
                    (a.0.max(b.0), a.1 | b.1, a.2 + b.2, a.3)
                },
            );
        ScanTally {
            seen,
            fail,
            pending,
            events,
        }
    }

    /// [`Self::solve`] by one member of `team`, which owns the blocks of
    /// `block` indices dealt to it round-robin ([`Blocks`]; `block` a
    /// multiple of 64: members own whole words of the candidate bitmap).
    /// Interleaved blocks rather than contiguous slices: a pass's decisions
    /// cluster along the index, and with slices the member holding the busy
    /// region kept the others waiting (Morris max=6 on 16 cores, `mpirun -np
    /// 4`: 1.9x the time of one process). Every member returns the whole
    /// partition's values, the bytes of [`Self::solve`] (the exchange is
    /// described in [`super::kernels`]). Must not be called from a rayon
    /// worker: members wait for each other in the team's collectives.
    ///
    /// Members that share memory (threads, or MPI ranks of one host) solve
    /// in one shared copy of the values instead ([`Self::solve_shared`]).
    pub fn solve_team(&self, team: &dyn Team, block: u64) -> Result<SolveStats<Vec<u8>>> {
        assert!(block % 64 == 0 && block > 0, "members must own whole words");
        let size = self.spec.size();
        if let Some(values) = team.shared_region(size as usize)? {
            let marks = team.shared_region(size.div_ceil(64) as usize * 8)?;
            let marks = marks.ok_or_else(|| torn(&self.spec, team.rank(), "shared memory"))?;
            let solved = self.solve_shared(team, block, values.bytes(), marks.words())?;
            team.free_region(marks)?;
            team.free_region(values)?;
            return Ok(solved);
        }
        let owned = Blocks::new(size, block, team.size());
        let own: Vec<Range<u64>> = owned.of(team.rank()).collect();
        // TBFORGE_TWIN_TRACE: where a member's time goes, waiting apart.
        let trace = std::env::var_os("TBFORGE_TWIN_TRACE").is_some();
        let t0 = std::time::Instant::now();
        let mut waited = std::time::Duration::ZERO;
        let mut timed = |t: std::time::Instant| waited += t.elapsed();
        let values: Vec<AtomicU8> = (0..size)
            .into_par_iter()
            .map(|_| AtomicU8::new(0))
            .collect();
        let ScanTally {
            seen,
            fail,
            pending,
            mut events,
        } = self.first_scan_of(&own, &values);
        let scanned = t0.elapsed();
        let t = std::time::Instant::now();
        // Every member must take the same decisions: the loop's bound and
        // the failure are the team's, not the slice's.
        let fail = team
            .all_gather(&fail.to_le_bytes())?
            .iter()
            .fold(0u32, |acc, b| {
                acc | u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            });
        check_fail(&self.spec, fail)?;
        let max_seen = team.all_max(u64::from(seen))? as u32;
        let first_pending = team.all_sum(pending)?;
        let own_bytes: Vec<u8> = own
            .iter()
            .flat_map(|r| values[r.start as usize..r.end as usize].iter())
            .map(|v| v.load(Ordering::Relaxed))
            .collect();
        let gathered = team.all_gather(&own_bytes)?;
        timed(t);
        for (j, bytes) in gathered.iter().enumerate() {
            if bytes.len() as u64 != owned.count(j) {
                return Err(torn(&self.spec, j, "values"));
            }
            if j == team.rank() {
                continue;
            }
            let mut at = 0usize;
            for r in owned.of(j) {
                let n = (r.end - r.start) as usize;
                values[r.start as usize..r.end as usize]
                    .par_iter()
                    .zip(bytes[at..at + n].par_iter())
                    .for_each(|(v, &b)| v.store(b, Ordering::Relaxed));
                at += n;
            }
        }
        events.par_sort_unstable();
        let marks: Vec<AtomicU64> = (0..size.div_ceil(64))
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        // As in `solve`: a pending position is a candidate once, whoever
        // claims it first; the lists grow with the work, no pass scans the
        // whole bitmap.
        let claim = |p: u64| {
            let bit = 1u64 << (p % 64);
            values[p as usize].load(Ordering::Relaxed) == PENDING
                && marks[(p / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
        };
        let unclaim = |p: &u64| {
            marks[(p / 64) as usize].fetch_and(!(1u64 << (p % 64)), Ordering::Relaxed);
        };
        let members = team.size();
        let merge = |mut a: Vec<Vec<u64>>, b: Vec<Vec<u64>>| {
            for (x, y) in a.iter_mut().zip(b) {
                x.extend(y);
            }
            a
        };
        let rank_of = |k: u64| k & (EVENT_CAPTURE - 1);
        // One collective a pass: the positions a member decided in pass
        // d - 1 travel with its claims for pass d. Its claims in others'
        // blocks may name positions their owners decided in d - 1 (this
        // member has not applied those yet): the owners drop them, their
        // copies of their own blocks being exact.
        let mut decided: Vec<u64> = Vec::new();
        let mut next_event = 0usize;
        let mut d = 1u32;
        // Seconds of each step of the passes, for the trace: claims,
        // sorting and encoding, decoding and applying, checks, exchange.
        let mut steps = [0f64; 5];
        let mut lap = std::time::Instant::now();
        let mut step = |i: usize| {
            steps[i] += lap.elapsed().as_secs_f64();
            lap = std::time::Instant::now();
        };
        loop {
            self.check_distance(d)?;
            let end = next_event
                + events[next_event..].partition_point(|&k| k >> EVENT_SHIFT < u64::from(d));
            let now = &events[next_event..end];
            next_event = end;
            step(3);
            // This member's frontier only: the others claim theirs. What it
            // claims in others' blocks goes to their owners, by owner.
            let mut found: Vec<Vec<u64>> = decided
                .par_iter()
                .copied()
                .chain(
                    now.par_iter()
                        .filter(|&&k| k & EVENT_CAPTURE == 0)
                        .map(|&k| rank_of(k)),
                )
                .fold(
                    || vec![Vec::new(); members],
                    |mut acc, s| {
                        self.predecessor_ranks(s, |p| {
                            if claim(p) {
                                acc[owned.owner(p)].push(p);
                            }
                        });
                        acc
                    },
                )
                .reduce(|| vec![Vec::new(); members], merge);
            found[team.rank()].par_extend(
                now.par_iter()
                    .filter(|&&k| k & EVENT_CAPTURE != 0)
                    .map(|&k| rank_of(k))
                    .filter(|&p| claim(p)),
            );
            step(0);
            // Others' ranks sorted (the same message for any thread count);
            // their bits are this member's no longer.
            let mut candidates = std::mem::take(&mut found[team.rank()]);
            found.par_iter_mut().for_each(|v| {
                v.par_iter().for_each(unclaim);
                v.par_sort_unstable();
            });
            // Each part: the length of the decided list, the list (the same
            // for every receiver), the claims for that receiver.
            decided.par_sort_unstable();
            let told = encode_ascending(&decided);
            let parts: Vec<Vec<u8>> = found
                .par_iter()
                .map(|v| {
                    let mut part = (told.len() as u64).to_le_bytes().to_vec();
                    part.extend_from_slice(&told);
                    part.extend(encode_ascending(v));
                    part
                })
                .collect();
            step(1);
            let t = std::time::Instant::now();
            let got = team.all_to_all(parts)?;
            timed(t);
            step(4);
            // Pass d - 1 decided every position at distance d - 1 (byte
            // d + 1): the lists travel without their bytes.
            let previous = (d + 1) as u8;
            let mut total = 0u64;
            let mut received = Vec::with_capacity(got.len());
            for (j, part) in got.iter().enumerate() {
                let (told, claims) =
                    split_part(part).ok_or_else(|| torn(&self.spec, j, "a pass's lists"))?;
                let list = decode_ascending(told)?;
                total += list.len() as u64;
                if j != team.rank() {
                    if list.iter().any(|&r| r >= size || owned.owner(r) != j) {
                        return Err(torn(&self.spec, j, "decided positions"));
                    }
                    list.par_iter()
                        .for_each(|&r| values[r as usize].store(previous, Ordering::Relaxed));
                }
                received.push(decode_ascending(claims)?);
            }
            if d > 1 && total == 0 && d - 1 > max_seen {
                d -= 1;
                break;
            }
            for (j, ranks) in received.into_iter().enumerate() {
                if ranks
                    .iter()
                    .any(|&r| r >= size || owned.owner(r) != team.rank())
                {
                    return Err(torn(&self.spec, j, "candidate marks"));
                }
                // This member's copy of its blocks is exact: it drops what
                // is no longer pending, and what it claimed already.
                candidates.par_extend(ranks.into_par_iter().filter(|&r| claim(r)));
            }
            step(2);
            // A pass decides every position at distance d (byte d + 2).
            let byte = (d + 2) as u8;
            decided = candidates
                .par_iter()
                .filter_map(|&r| {
                    let v = self.pass(&values, r, d)?;
                    values[r as usize].store(v, Ordering::Relaxed);
                    Some((r, v))
                })
                .map(|(r, v)| if v == byte { Ok(r) } else { Err(r) })
                .collect::<std::result::Result<_, u64>>()
                .map_err(|r| {
                    Error::Cuda(format!(
                        "partition {}: pass {d} decided index {r} at another distance",
                        self.spec.name()
                    ))
                })?;
            candidates.par_iter().for_each(unclaim);
            d += 1;
        }
        if trace {
            eprintln!(
                "twin {} member {} of {}: first scan {:.2} s, whole {:.2} s, of which in collectives {:.2} s, {d} passes: claims {:.2} s, sorting and encoding {:.2} s, decoding and applying {:.2} s, checks {:.2} s",
                self.spec.name(),
                team.rank(),
                team.size(),
                scanned.as_secs_f64(),
                t0.elapsed().as_secs_f64(),
                waited.as_secs_f64(),
                steps[0],
                steps[1],
                steps[2],
                steps[3]
            );
        }
        Ok(SolveStats {
            value: values.into_iter().map(AtomicU8::into_inner).collect(),
            passes: d,
            first_pending,
            max_seen,
            lists: ListUse::default(),
        })
    }

    /// [`Self::solve`] by one member of `team`, whose members all address
    /// `values` (one byte per index) and `marks` (one bit per index), both
    /// zeroed: the threaded solve with processes for threads. The member
    /// scans the blocks of `block` indices dealt to it; then each pass, it
    /// claims the predecessors of the positions it decided in the pass
    /// before (a claim is an atomic bit, so a position is one member's
    /// candidate), checks its candidates and writes their values in place.
    /// Members pass a pass's checks at their own pace: a check reads
    /// distances below the pass's only, as in [`Self::solve`]; a candidate
    /// released by one member and claimed again by another is checked twice
    /// to the same effect. One collective a pass (the count decided, which
    /// ends the loop) keeps the next pass's claims after every member's
    /// releases. Against messages between members that each hold a copy
    /// (Morris max=6 on 16 cores, `mpirun -np 4` of 4 threads, 1.6x the time
    /// of one process): no copies to apply, no claims to sort and send.
    fn solve_shared(
        &self,
        team: &dyn Team,
        block: u64,
        values: &[AtomicU8],
        marks: &[AtomicU64],
    ) -> Result<SolveStats<Vec<u8>>> {
        let size = self.spec.size();
        let trace = std::env::var_os("TBFORGE_TWIN_TRACE").is_some();
        let t0 = std::time::Instant::now();
        let values = &values[..size as usize];
        let owned = Blocks::new(size, block, team.size());
        let own: Vec<Range<u64>> = owned.of(team.rank()).collect();
        let ScanTally {
            seen,
            fail,
            pending,
            mut events,
        } = self.first_scan_of(&own, values);
        let scanned = t0.elapsed();
        // These collectives also wait for every member's scan: the values
        // are whole after them.
        let fail = team
            .all_gather(&fail.to_le_bytes())?
            .iter()
            .fold(0u32, |acc, b| {
                acc | u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            });
        check_fail(&self.spec, fail)?;
        let max_seen = team.all_max(u64::from(seen))? as u32;
        let first_pending = team.all_sum(pending)?;
        events.par_sort_unstable();
        let mut waited = std::time::Duration::ZERO;
        let mut decided: Vec<u64> = Vec::new();
        let mut next_event = 0usize;
        let mut d = 1u32;
        loop {
            self.check_distance(d)?;
            let end = next_event
                + events[next_event..].partition_point(|&k| k >> EVENT_SHIFT < u64::from(d));
            let now = &events[next_event..end];
            next_event = end;
            decided = self.candidate_pass(values, marks, &decided, now, d).decided;
            let t = std::time::Instant::now();
            let total = team.all_sum(decided.len() as u64)?;
            waited += t.elapsed();
            if total == 0 && d > max_seen {
                break;
            }
            d += 1;
        }
        if trace {
            eprintln!(
                "twin {} member {} of {} (shared memory): first scan {:.2} s, whole {:.2} s, of which in collectives {:.2} s, {d} passes",
                self.spec.name(),
                team.rank(),
                team.size(),
                scanned.as_secs_f64(),
                t0.elapsed().as_secs_f64(),
                waited.as_secs_f64()
            );
        }
        Ok(SolveStats {
            value: values
                .par_iter()
                .map(|v| v.load(Ordering::Relaxed))
                .collect(),
            passes: d,
            first_pending,
            max_seen,
            lists: ListUse::default(),
        })
    }

    /// Solves the partition with a pending list that every pass scans whole
    /// and shrinks (the former scheme; a second reference for [`Self::solve`]).
    pub fn solve_full_scan(&self) -> Result<SolveStats<Vec<u8>>> {
        let size = self.spec.size();
        let values: Vec<AtomicU8> = (0..size).map(|_| AtomicU8::new(0)).collect();
        let seen = AtomicU32::new(0);
        let fail = AtomicU32::new(0);
        let pending = AtomicU64::new(0);
        let mut list: Vec<u64> = (0..size)
            .into_par_iter()
            .filter_map(|r| {
                let s = self.first_scan(r);
                values[r as usize].store(s.value, Ordering::Relaxed);
                seen.fetch_max(s.seen, Ordering::Relaxed);
                fail.fetch_or(s.fail, Ordering::Relaxed);
                s.internal.then(|| {
                    pending.fetch_add(1, Ordering::Relaxed);
                    r
                })
            })
            .collect();
        check_fail(&self.spec, fail.into_inner())?;
        let max_seen = seen.into_inner();
        let first_pending = list.len() as u64;
        let mut d = 1u32;
        loop {
            self.check_distance(d)?;
            let before = list.len();
            list = list
                .into_par_iter()
                .filter(|&r| match self.pass(&values, r, d) {
                    Some(v) => {
                        values[r as usize].store(v, Ordering::Relaxed);
                        false
                    }
                    None => true,
                })
                .collect();
            if before == list.len() && d > max_seen {
                break;
            }
            d += 1;
        }
        Ok(SolveStats {
            value: values.into_iter().map(AtomicU8::into_inner).collect(),
            passes: d,
            first_pending,
            max_seen,
            lists: ListUse::default(),
        })
    }
}

/// What [`CpuTwin::candidate_pass`] did: the positions it decided, how many
/// it checked, and the seconds of its claims and of its checks.
struct CandidatePass {
    decided: Vec<u64>,
    candidates: usize,
    claim_seconds: f64,
    check_seconds: f64,
}

/// The error for a team member's message that does not fit its slice: a
/// broken exchange.
/// What a first scan found: the longest distance seen among successors in
/// other partitions, the failure bits, the positions left pending, and the
/// events (key: distance, capture flag, rank), unsorted.
struct ScanTally {
    seen: u32,
    fail: u32,
    pending: u64,
    events: Vec<u64>,
}

/// A pass's part from a member (see `CpuTwin::solve_team`): its decided
/// list and its claims, or `None` if the length in front does not fit.
fn split_part(part: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = part.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
}

pub(crate) fn torn(spec: &MorrisSolveSpec, member: usize, what: &str) -> Error {
    Error::Cuda(format!(
        "partition {}: member {member} sent {what} that do not fit its slice; report this as a bug",
        spec.name()
    ))
}

/// The words of a bitmap (`bits` bits to a word) that hold slice `r`'s
/// indices; none for an empty slice (whose bounds may sit inside the last
/// word, which the slice before it owns). Slices start on whole words.
pub(crate) fn word_range(r: &Range<u64>, bits: u64) -> Range<usize> {
    if r.is_empty() {
        return 0..0;
    }
    (r.start / bits) as usize..r.end.div_ceil(bits) as usize
}

/// Whether member `rank` of `members` owns bitmap word `w` of a pass's
/// candidates, blocks of `block_words` words dealt round-robin (every word
/// for `members` <= 1). The twin of `retro_owns` in morris.cu.
pub fn owns_word(w: u64, block_words: u64, members: u32, rank: u32) -> bool {
    members <= 1 || (w / block_words) % u64::from(members) == u64::from(rank)
}

/// The other members' bitmaps (`theirs`: whole bitmaps of `marks.len()`
/// words, one after another) joined into the words of `marks` this member
/// owns, where the position is still pending in `values` (another's copy
/// may lag a pass behind); the words it does not own cleared. The twin of
/// kernel `retro_merge_marks`.
pub fn merge_marks(
    values: &[u8],
    marks: &mut [u32],
    theirs: &[u32],
    block_words: u64,
    members: u32,
    rank: u32,
) {
    let words = marks.len();
    for (w, m) in marks.iter_mut().enumerate() {
        if !owns_word(w as u64, block_words, members, rank) {
            *m = 0;
            continue;
        }
        let mut t = theirs
            .iter()
            .skip(w)
            .step_by(words.max(1))
            .fold(0, |a, &b| a | b)
            & !*m;
        let mut keep = 0u32;
        while t != 0 {
            let bit = t.trailing_zeros();
            if values[w * 32 + bit as usize] == PENDING {
                keep |= 1 << bit;
            }
            t &= t - 1;
        }
        *m |= keep;
    }
}

/// The error for FAIL_* bits, or Ok.
pub fn check_fail(spec: &MorrisSolveSpec, fail: u32) -> Result<()> {
    if fail & FAIL_ILLEGAL_DEP != 0 {
        return Err(Error::Cuda(format!(
            "partition {}: a capture reaches an index its partition calls unused (dependency values wrong?)",
            spec.name()
        )));
    }
    if fail & FAIL_OVERFLOW != 0 {
        return Err(Error::Cuda(format!(
            "partition {}: a distance beyond {}",
            spec.name(),
            Value::MAX_DISTANCE
        )));
    }
    Ok(())
}

/// A solve's result with what it did.
#[derive(Clone, Debug)]
pub struct SolveStats<T> {
    /// The values.
    pub value: T,
    /// Passes run (the last decided nothing).
    pub passes: u32,
    /// Positions pending after the first scan.
    pub first_pending: u64,
    /// Longest distance the first scan saw.
    pub max_seen: u32,
    /// How a device solve held its lists (all zero for the twin, and where
    /// the lists had room for every pending position).
    pub lists: ListUse,
}

/// How a device solve whose candidate and frontier lists could not hold
/// every pending position (the device's room, or a check's bound) did its
/// passes: each pass lists and checks its candidates part by part, and a
/// frontier larger than a list waits in host memory for the next pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListUse {
    /// Entries of each list (0: unbounded).
    pub entries: u64,
    /// Parts listed over all passes.
    pub parts: u64,
    /// Frontier entries that went through host memory, over all passes.
    pub host_frontier: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_marks_keep_pending_positions_of_owned_words_and_clear_the_rest() {
        // Two blocks of two words; member 1 of 2 owns the second block
        // (words 2 and 3).
        let mut values = vec![3u8; 4 * 32];
        for r in [64 + 1, 64 + 5, 96 + 31, 3] {
            values[r] = PENDING;
        }
        let mut marks = vec![0b1000u32, 0, 0b1, 0];
        // One other member's bitmap: bits on pending and decided positions,
        // in owned and not owned words.
        let theirs = vec![0b1000u32, 0, (1 << 1) | (1 << 2) | (1 << 5), 1 << 31];
        merge_marks(&values, &mut marks, &theirs, 2, 2, 1);
        assert_eq!(marks, vec![0, 0, 0b1 | (1 << 1) | (1 << 5), 1 << 31]);
        assert!(owns_word(2, 2, 2, 1) && !owns_word(4, 2, 2, 1) && owns_word(9, 2, 1, 0));
    }
    use crate::game::morris::canonical;
    use crate::game::morris::rank24::{self, CELLS};

    #[test]
    fn symmetries_form_a_group_that_keeps_mills_and_adjacency() {
        let perms = symmetry_permutations();
        let mapb = |p: &[usize; CELLS], x: u32| {
            (0..CELLS)
                .filter(|&i| x >> i & 1 != 0)
                .fold(0u32, |a, i| a | 1 << p[i])
        };
        let mut images: Vec<[usize; CELLS]> = perms.clone();
        images.sort();
        images.dedup();
        assert_eq!(images.len(), 16);
        for p in &perms {
            let mut mills: Vec<u32> = MILLS.iter().map(|&m| mapb(p, m)).collect();
            mills.sort();
            let mut want = MILLS.to_vec();
            want.sort();
            assert_eq!(mills, want);
            for i in 0..CELLS {
                assert_eq!(mapb(p, ADJACENT[i]), ADJACENT[p[i]]);
            }
            // Closed under composition.
            for q in &perms {
                let mut c = [0usize; CELLS];
                for i in 0..CELLS {
                    c[i] = q[p[i]];
                }
                assert!(perms.contains(&c));
            }
        }
    }

    /// Every quiet successor S of a random position P has canonical(P)
    /// among the canonical predecessors of canonical(S), and every
    /// predecessor of a random S has S's class among its quiet successors.
    #[test]
    fn predecessors_invert_quiet_successors() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed = crate::game::morris::expand::mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
            seed
        };
        let (mut checked, mut preds_seen) = (0u64, 0u64);
        for (k1, k2) in [(3, 3), (4, 3), (5, 4), (6, 6), (8, 3), (9, 9), (7, 5)] {
            let spec = MorrisSolveSpec::new(k1, k2, true).unwrap();
            for h in spec.halves() {
                let size = rank24::size(h.a, h.b).unwrap();
                for _ in 0..300 {
                    let u = rank24::unrank(next() % size, h.a, h.b);
                    let p = canonical(u.c1, u.c2);
                    for_quiet_successors(u.c1, u.c2, |sm, so| {
                        let (sm, so) = canonical(sm, so);
                        let mut found = false;
                        for_predecessors(sm, so, |pm, po| found |= canonical(pm, po) == p);
                        assert!(found, "{k1}-{k2}: {p:?} -> {sm:x}/{so:x} not inverted");
                        checked += 1;
                    });
                    let s = (u.c1, u.c2);
                    for_predecessors(u.c1, u.c2, |pm, po| {
                        let mut found = false;
                        for_quiet_successors(pm, po, |sm, so| {
                            found |= canonical(sm, so) == canonical(s.0, s.1)
                        });
                        assert!(found, "{k1}-{k2}: {pm:x}/{po:x} is no predecessor of {s:?}");
                        preds_seen += 1;
                    });
                }
            }
        }
        assert!(
            checked > 10_000 && preds_seen > 10_000,
            "{checked} {preds_seen}"
        );
    }

    #[test]
    fn halves_cover_the_partition() {
        let s = MorrisSolveSpec::new(5, 3, true).unwrap();
        assert_eq!(s.dependencies(), vec!["2-5".to_string(), "4-3".to_string()]);
        let t = MorrisSolveSpec::new(4, 4, false).unwrap();
        assert_eq!(t.dependencies(), vec!["4-3".to_string()]);
        assert_eq!(t.dependency_sizes(), vec![2 * rank24::size(4, 3).unwrap()]);
        assert!(MorrisSolveSpec::new(3, 4, true).is_err());
    }
}
