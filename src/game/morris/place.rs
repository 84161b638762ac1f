//! Phase I (placing) on bitboards: the solve and the forward search of one
//! placement layer `tTT-a-b`, in the form the GPU runs them
//! (`kernels/morris.cu`, kernels `place_solve` and `place_expand`), and
//! their CPU twin on all cores.
//!
//! The bytes and bits are those of the generic machinery on the game
//! `morris` with `pieces=N` (src/game/morris/mod.rs, "Phase I"): only the
//! indices whose reached bit is set are looked at, everything else is 0.
//!
//! - **Moves.** The side to move places a piece on any empty point; a
//!   placement that closes a mill removes one opponent piece not in a mill
//!   (any, if all are), one successor per choice; with no opponent piece on
//!   the board nothing is removed. Successors of layer `t` lie in layer
//!   `t + 1` or, after the 2N-th placement, in phases II/III: a quiet
//!   placement leads to the counts (b, a + 1), a capture to (b - 1, a + 1)
//!   (successor's mover first): two target partitions per layer partition,
//!   ranked as [`Game::rank`] ranks them ([`PlaceTarget`]).
//! - **Status.** The mover is lost (byte 2) when its pieces on the board and
//!   in hand number fewer than three. The hand depends on `t` alone, so a
//!   whole partition is lost or none of it is ([`PlaceSpec::lost`]): lost
//!   partitions need no successor and no kernel.
//! - **Values.** Every successor is in an earlier-solved partition (no move
//!   stays in the layer), so one scan decides each position, by the combine
//!   rule of `value::rules::Combine`: the shortest successor lost by the
//!   opponent (even distance e) gives a win at e + 1; else, if every
//!   successor is won by the opponent, the longest one (odd e) gives a loss
//!   at e + 1; else a draw.
//!
//! Failures come back as `FAIL_*` bits with the first index that raised
//! one, as the kernels report them ([`check_fail`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use super::classes::HalfRanks;
use super::{bits, in_mills, Morris, Part, FULL, MILLS_AT};
use crate::game::Game;
use crate::value::{PartitionId, Value};
use crate::{Error, Result};

/// A quiet successor read 0 (an index its partition does not hold).
pub const FAIL_QUIET_ZERO: u32 = 1;
/// A capture successor read 0.
pub const FAIL_CAPTURE_ZERO: u32 = 2;
/// A distance beyond [`Value::MAX_DISTANCE`].
pub const FAIL_OVERFLOW: u32 = 4;
/// A quiet successor lands in a partition that was not given.
pub const FAIL_QUIET_MISSING: u32 = 8;
/// A capture successor lands in a partition that was not given.
pub const FAIL_CAPTURE_MISSING: u32 = 16;

/// 64-bit words of reached bits per rayon task (16,384 indices).
const TASK_WORDS: usize = 256;

/// Where one kind of placement (quiet or capture) from a layer partition
/// lands: boards with `a` pieces of the successor's side to move and `b` of
/// its opponent, at `offset + rank` of partition `id`.
#[derive(Clone, Debug)]
pub struct PlaceTarget {
    /// The target partition.
    pub id: PartitionId,
    /// Its name (`t05-2-3`, `9-8`, `2-7`).
    pub name: String,
    /// Whether the game has that partition (a capture target may not exist
    /// where no reachable position captures into it).
    pub exists: bool,
    /// Pieces of the successor's side to move.
    pub a: u32,
    /// Pieces of its opponent.
    pub b: u32,
    /// First index of S(a, b) inside the target partition.
    pub offset: u64,
    /// Indices of the whole target partition.
    pub size: u64,
    /// How S(a, b) is indexed there.
    pub index: HalfRanks,
}

/// One phase I partition `tTT-a-b` to solve or expand.
#[derive(Clone, Debug)]
pub struct PlaceSpec {
    /// Placements made.
    pub t: u32,
    /// The mover's pieces on the board.
    pub a: u32,
    /// The opponent's pieces on the board.
    pub b: u32,
    /// Whether indices are symmetry classes.
    pub symmetry: bool,
    /// The partition's name.
    pub name: String,
    /// Its id.
    pub id: PartitionId,
    /// Every position is lost: the mover has fewer than three pieces on the
    /// board and in hand.
    pub lost: bool,
    /// How S(a, b) is indexed.
    pub index: HalfRanks,
    /// Where quiet placements land; `None` when the partition is lost.
    pub quiet: Option<PlaceTarget>,
    /// Where captures land; `None` when the partition is lost or no
    /// placement can capture (the mover cannot have three on the board, or
    /// the opponent has none).
    pub capture: Option<PlaceTarget>,
}

impl PlaceSpec {
    /// The spec of partition `p` of `game`, or `None` when `p` is not one
    /// of its placement layers.
    pub fn of(game: &Morris, p: PartitionId) -> Option<PlaceSpec> {
        let Part::Place { t, a, b } = Part::from_id(p)? else {
            return None;
        };
        if !game.whole
            || t >= 2 * game.max
            || !game.place_parts(t).contains(&Part::Place { t, a, b })
        {
            return None;
        }
        let hand = u32::from(game.hands_at(t)[0]);
        let lost = a + hand < 3;
        let target = |x: u32, y: u32| -> PlaceTarget {
            // As Game::rank: the successor (mover x, opponent y) is in layer
            // t + 1 while pieces remain in hand, else in phases II/III.
            let (part, offset) = if t + 1 < 2 * game.max {
                (
                    Part::Place {
                        t: t + 1,
                        a: x,
                        b: y,
                    },
                    0,
                )
            } else if x == 2 {
                (Part::Lost(y), 0)
            } else {
                let offset = if x < y { game.half(y, x).size() } else { 0 };
                (Part::Pair(x.max(y), x.min(y)), offset)
            };
            let exists = match part {
                Part::Place { t, .. } => game.place_parts(t).contains(&part),
                Part::Lost(k) => (3..=game.max).contains(&k),
                Part::Pair(k1, k2) => k2 >= 3 && k1 <= game.max,
            };
            PlaceTarget {
                id: part.id(),
                name: game.partition_name(part.id()),
                exists,
                a: x,
                b: y,
                offset,
                size: if exists {
                    game.partition_size(part.id())
                } else {
                    0
                },
                index: game.half(x, y),
            }
        };
        let quiet = (!lost).then(|| target(b, a + 1));
        let capture = (!lost && a + 1 >= 3 && b >= 1).then(|| target(b - 1, a + 1));
        Some(PlaceSpec {
            t,
            a,
            b,
            symmetry: game.symmetry,
            name: game.partition_name(p),
            id: p,
            lost,
            index: game.half(a, b),
            quiet,
            capture,
        })
    }

    /// Indices of the partition.
    pub fn size(&self) -> u64 {
        self.index.size()
    }

    /// Words of its reached bits.
    pub fn words(&self) -> usize {
        self.size().div_ceil(64) as usize
    }

    /// The targets, quiet then capture.
    pub fn targets(&self) -> [Option<&PlaceTarget>; 2] {
        [self.quiet.as_ref(), self.capture.as_ref()]
    }

    /// The reached bits of the partition's indices: `reached` must cover
    /// them (one bit per index, 64 to a word) and set none past the end;
    /// longer slices (whole words of a larger set) are cut to the partition.
    pub fn reached_bits<'r>(&self, reached: &'r [u64]) -> Result<&'r [u64]> {
        let (size, words) = (self.size(), self.words());
        let past_end = |i: usize, w: u64| -> bool {
            let first = i as u64 * 64;
            if first >= size {
                w != 0
            } else {
                size - first < 64 && w >> (size - first) != 0
            }
        };
        if reached.len() < words
            || reached
                .iter()
                .enumerate()
                .skip(words.saturating_sub(1))
                .any(|(i, &w)| past_end(i, w))
        {
            return Err(self.contract(format!(
                "{} words of reached bits for {size} indices ({words} words), or bits set past the end",
                reached.len(),
            )));
        }
        Ok(&reached[..words])
    }

    /// Checks that each given dependency has its partition's size.
    pub fn check_deps(&self, deps: &[Option<&[u8]>; 2]) -> Result<()> {
        for (target, dep) in self.targets().into_iter().zip(deps) {
            if let (Some(t), Some(d)) = (target, dep) {
                if d.len() as u64 != t.size {
                    return Err(self.contract(format!(
                        "dependency {} has {} values, not {}",
                        t.name,
                        d.len(),
                        t.size
                    )));
                }
            }
        }
        Ok(())
    }

    /// Checks that each given target's bits cover its partition.
    pub fn check_next(&self, next: &[Option<&[AtomicU64]>; 2]) -> Result<()> {
        for (target, bits) in self.targets().into_iter().zip(next) {
            if let (Some(t), Some(b)) = (target, bits) {
                if (b.len() as u64) < t.size.div_ceil(64) {
                    return Err(self.contract(format!(
                        "{} words of bits for {}, which has {} indices",
                        b.len(),
                        t.name,
                        t.size
                    )));
                }
            }
        }
        Ok(())
    }

    fn contract(&self, message: String) -> Error {
        Error::GameContract {
            game: "morris".into(),
            message: format!("partition {}: {message}", self.name),
        }
    }
}

/// The error for `FAIL_*` bits raised at index `first` (or Ok).
pub fn check_fail(spec: &PlaceSpec, fail: u32, first: u64) -> Result<()> {
    let name = |t: Option<&PlaceTarget>| t.map_or("?".to_string(), |t| t.name.clone());
    let (quiet, capture) = (name(spec.quiet.as_ref()), name(spec.capture.as_ref()));
    if fail & FAIL_OVERFLOW != 0 {
        return Err(Error::DistanceOverflow {
            game: "morris".into(),
            partition: spec.name.clone(),
            max: Value::MAX_DISTANCE,
        });
    }
    let message = if fail & (FAIL_QUIET_MISSING | FAIL_CAPTURE_MISSING) != 0 {
        let to = if fail & FAIL_QUIET_MISSING != 0 {
            quiet
        } else {
            capture
        };
        format!("a placement from index {first} leads to partition {to}, which is not solved (or searched) before it")
    } else if fail & (FAIL_QUIET_ZERO | FAIL_CAPTURE_ZERO) != 0 {
        let to = if fail & FAIL_QUIET_ZERO != 0 {
            quiet
        } else {
            capture
        };
        format!(
            "a placement from index {first} reaches an index of {to} that holds 0 (not reached)"
        )
    } else {
        return Ok(());
    };
    Err(spec.contract(message))
}

/// Calls `f(capture, mover', opponent')` for every placement of the side to
/// move (`mover`) with the successor seen from its side to move, in the
/// game's move order.
#[inline]
pub fn for_placements(mover: u32, opp: u32, mut f: impl FnMut(bool, u32, u32)) {
    let empty = !(mover | opp) & FULL;
    let protected = in_mills(opp);
    let removable = if protected == opp {
        opp
    } else {
        opp & !protected
    };
    for p in bits(empty) {
        let moved = mover | 1 << p;
        let [m1, m2] = MILLS_AT[usize::from(p)];
        if (moved & m1 == m1 || moved & m2 == m2) && removable != 0 {
            for x in bits(removable) {
                f(true, opp & !(1 << x), moved);
            }
        } else {
            f(false, opp, moved);
        }
    }
}

/// Failure bits and the smallest index that raised one, gathered across threads.
struct Fails {
    bits: AtomicU32,
    first: AtomicU64,
}

impl Fails {
    fn new() -> Fails {
        Fails {
            bits: AtomicU32::new(0),
            first: AtomicU64::new(u64::MAX),
        }
    }

    fn raise(&self, bits: u32, r: u64) {
        self.bits.fetch_or(bits, Ordering::Relaxed);
        self.first.fetch_min(r, Ordering::Relaxed);
    }

    fn check(&self, spec: &PlaceSpec) -> Result<()> {
        check_fail(
            spec,
            self.bits.load(Ordering::Relaxed),
            self.first.load(Ordering::Relaxed),
        )
    }
}

/// The indices of one position's successors in their target partitions,
/// by kind (quiet, capture). Ranked first and read after, in a loop of
/// independent loads: the reads of the targets' values (and bits) miss the
/// caches, and a tight loop lets them overlap.
struct SuccessorRanks {
    /// At most one quiet placement per empty point.
    quiet: [u64; 24],
    /// At most one capture per removable piece (9) per empty point.
    capture: [u64; 24 * 9],
    counts: [usize; 2],
}

impl SuccessorRanks {
    fn new() -> SuccessorRanks {
        SuccessorRanks {
            quiet: [0; 24],
            capture: [0; 24 * 9],
            counts: [0; 2],
        }
    }

    /// Ranks the successors of (mover `m`, opponent `o`) in `targets`
    /// (`None`: not given); the fail bits of successors without a target.
    #[inline]
    fn fill(&mut self, targets: &[Option<&PlaceTarget>; 2], m: u32, o: u32) -> u32 {
        let mut fail = 0;
        self.counts = [0; 2];
        for_placements(m, o, |capture, nm, no| {
            let kind = usize::from(capture);
            let Some(target) = targets[kind] else {
                fail |= [FAIL_QUIET_MISSING, FAIL_CAPTURE_MISSING][kind];
                return;
            };
            let r = target.offset + target.index.rank(nm, no);
            let n = self.counts[kind];
            if capture {
                self.capture[n] = r;
            } else {
                self.quiet[n] = r;
            }
            self.counts[kind] = n + 1;
        });
        fail
    }

    /// The ranks of kind `kind` (0 quiet, 1 capture).
    fn of(&self, kind: usize) -> &[u64] {
        if kind == 0 {
            &self.quiet[..self.counts[0]]
        } else {
            &self.capture[..self.counts[1]]
        }
    }
}

/// The value byte of a position whose successors are `succ`, read in
/// `deps` (quiet, capture); fail bits in `fail`.
#[inline]
fn value_of(succ: &SuccessorRanks, deps: &[Option<&[u8]>; 2], fail: &mut u32) -> u8 {
    let (mut best_win, mut longest, mut all_lost) = (u32::MAX, 0u32, true);
    for (kind, values) in deps.iter().enumerate() {
        let Some(values) = values else {
            continue; // no successor of this kind was ranked
        };
        for &r in succ.of(kind) {
            match values[r as usize] {
                0 => *fail |= [FAIL_QUIET_ZERO, FAIL_CAPTURE_ZERO][kind],
                1 => all_lost = false,
                v => {
                    let e = u32::from(v) - 2;
                    if e % 2 == 0 {
                        best_win = best_win.min(e);
                    } else {
                        longest = longest.max(e);
                    }
                }
            }
        }
    }
    let d = if best_win != u32::MAX {
        best_win + 1
    } else if all_lost {
        longest + 1
    } else {
        return Value::DRAW.to_byte();
    };
    if d > Value::MAX_DISTANCE {
        *fail |= FAIL_OVERFLOW;
        return 0;
    }
    (d + 2) as u8
}

/// Values of `spec`'s partition: for each index whose bit is set in
/// `reached`, its value from its successors' in `deps` (the quiet and the
/// capture target's values, [`PlaceSpec::targets`]; `None`: not given);
/// every other index 0. The twin of kernel `place_solve`.
pub fn solve(spec: &PlaceSpec, reached: &[u64], deps: [Option<&[u8]>; 2]) -> Result<Vec<u8>> {
    let reached = spec.reached_bits(reached)?;
    spec.check_deps(&deps)?;
    let size = spec.size() as usize;
    let mut values = vec![0u8; size];
    let lost_byte = Value::at_distance(0).expect("distance 0 exists").to_byte();
    let fails = Fails::new();
    // A target whose values are not given is ranked into by nobody.
    let targets = spec.targets();
    let targets = [0, 1].map(|k| targets[k].filter(|_| deps[k].is_some()));
    values
        .par_chunks_mut(TASK_WORDS * 64)
        .zip(reached.par_chunks(TASK_WORDS))
        .enumerate()
        .for_each_init(SuccessorRanks::new, |succ, (i, (out, words))| {
            let base = (i * TASK_WORDS * 64) as u64;
            for (w, &word) in words.iter().enumerate() {
                for bit in bits64(word) {
                    let local = w * 64 + bit as usize;
                    if spec.lost {
                        out[local] = lost_byte;
                        continue;
                    }
                    let r = base + local as u64;
                    let (m, o) = spec.index.unrank(r);
                    let mut fail = succ.fill(&targets, m, o);
                    out[local] = value_of(succ, &deps, &mut fail);
                    if fail != 0 {
                        fails.raise(fail, r);
                    }
                }
            }
        });
    fails.check(spec)?;
    Ok(values)
}

/// Forward search of `spec`'s partition: for each index whose bit is set in
/// `reached` (lost positions are not expanded), sets its successors' bits in
/// `next` (the quiet and the capture target's bits; `None`: not given). The
/// twin of kernel `place_expand`.
pub fn expand(spec: &PlaceSpec, reached: &[u64], next: [Option<&[AtomicU64]>; 2]) -> Result<()> {
    let reached = spec.reached_bits(reached)?;
    spec.check_next(&next)?;
    if spec.lost {
        return Ok(());
    }
    let fails = Fails::new();
    // A target whose bits are not given is ranked into by nobody.
    let targets = spec.targets();
    let targets = [0, 1].map(|k| targets[k].filter(|_| next[k].is_some()));
    reached.par_chunks(TASK_WORDS).enumerate().for_each_init(
        SuccessorRanks::new,
        |succ, (i, words)| {
            let base = (i * TASK_WORDS * 64) as u64;
            for (w, &word) in words.iter().enumerate() {
                for bit in bits64(word) {
                    let r = base + (w * 64) as u64 + u64::from(bit);
                    let (m, o) = spec.index.unrank(r);
                    let fail = succ.fill(&targets, m, o);
                    for (kind, out) in next.iter().enumerate() {
                        let Some(out) = out else { continue };
                        for &s in succ.of(kind) {
                            let (word, mask) = (&out[(s / 64) as usize], 1u64 << (s % 64));
                            // Most successors are marked already: a load is
                            // cheaper than a locked or.
                            if word.load(Ordering::Relaxed) & mask == 0 {
                                word.fetch_or(mask, Ordering::Relaxed);
                            }
                        }
                    }
                    if fail != 0 {
                        fails.raise(fail, r);
                    }
                }
            }
        },
    );
    fails.check(spec)
}

/// Iterates the set bits of a 64-bit word, lowest first.
#[inline]
fn bits64(mut word: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let i = word.trailing_zeros();
            word &= word - 1;
            i
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Status;
    use crate::value::Rank;
    use std::collections::HashMap;

    /// Random reached bits over `spec`'s partition: about one index in `one_in`.
    fn random_reached(spec: &PlaceSpec, seed: u64, one_in: u64) -> Vec<u64> {
        let mut rng = crate::hash::SplitMix64::new(seed);
        let size = spec.size();
        let mut out = vec![0u64; spec.words()];
        for r in 0..size {
            if rng.next_u64() % one_in == 0 {
                out[(r / 64) as usize] |= 1 << (r % 64);
            }
        }
        out
    }

    /// Random valid value bytes (draws and distances up to 60) for a
    /// partition of `size` indices.
    fn random_values(seed: u64, size: u64) -> Vec<u8> {
        let mut rng = crate::hash::SplitMix64::new(seed);
        (0..size).map(|_| 1 + (rng.next_u64() % 61) as u8).collect()
    }

    /// The generic way: unrank, status, successors, rank, combine.
    fn generic_value(
        game: &Morris,
        p: PartitionId,
        r: u64,
        deps: &HashMap<PartitionId, Vec<u8>>,
    ) -> u8 {
        let pos = game.unrank(p, Rank(r)).expect("every index is a position");
        if game.status(&pos) == Status::Lost {
            return 2;
        }
        let mut succ = Vec::new();
        game.successors(&pos, &mut succ);
        let mut acc = crate::value::rules::Combine::new(crate::value::GameKind::TwoPlayer);
        for (_, s) in &succ {
            let (q, sr) = game.rank(s);
            acc.add(Value::from_byte(deps[&q][sr.0 as usize]));
        }
        acc.finish().expect("distances stay small").to_byte()
    }

    /// Every placement partition of `game` (some layers), against the generic
    /// successor walk on random reached bits and random dependency values.
    fn compare_with_generic(game: &Morris, layers: &[u32]) {
        let mut checked = 0;
        for &t in layers {
            for part in game.place_parts(t) {
                let p = part.id();
                let spec = PlaceSpec::of(game, p).expect("a placement partition");
                let mut deps = HashMap::new();
                for target in spec.targets().into_iter().flatten() {
                    assert!(
                        target.exists,
                        "{}: target {} missing",
                        spec.name, target.name
                    );
                    deps.insert(
                        target.id,
                        random_values(u64::from(target.id.0), target.size),
                    );
                }
                let reached = random_reached(&spec, u64::from(p.0), 3);
                let dep_of = |t: Option<&PlaceTarget>| t.map(|t| deps[&t.id].as_slice());
                let got = solve(
                    &spec,
                    &reached,
                    [dep_of(spec.quiet.as_ref()), dep_of(spec.capture.as_ref())],
                )
                .unwrap();
                // Successor bits, the generic way and the twin's.
                let mut want_bits: HashMap<PartitionId, Vec<u64>> = HashMap::new();
                for (r, &v) in got.iter().enumerate() {
                    let r = r as u64;
                    let on = reached[(r / 64) as usize] >> (r % 64) & 1 != 0;
                    let want = if on {
                        generic_value(game, p, r, &deps)
                    } else {
                        0
                    };
                    assert_eq!(v, want, "{} index {r}", spec.name);
                    if on {
                        let pos = game.unrank(p, Rank(r)).unwrap();
                        if game.status(&pos) == Status::Ongoing {
                            let mut succ = Vec::new();
                            game.successors(&pos, &mut succ);
                            for (_, s) in &succ {
                                let (q, sr) = game.rank(s);
                                let b = want_bits.entry(q).or_insert_with(|| {
                                    vec![0; game.partition_size(q).div_ceil(64) as usize]
                                });
                                b[(sr.0 / 64) as usize] |= 1 << (sr.0 % 64);
                            }
                        }
                        checked += 1;
                    }
                }
                let targets: Vec<&PlaceTarget> = spec.targets().into_iter().flatten().collect();
                let bits: Vec<Vec<AtomicU64>> = targets
                    .iter()
                    .map(|t| {
                        (0..t.size.div_ceil(64))
                            .map(|_| AtomicU64::new(0))
                            .collect()
                    })
                    .collect();
                let slot = |t: Option<&PlaceTarget>| {
                    t.map(|t| bits[targets.iter().position(|x| x.id == t.id).unwrap()].as_slice())
                };
                expand(
                    &spec,
                    &reached,
                    [slot(spec.quiet.as_ref()), slot(spec.capture.as_ref())],
                )
                .unwrap();
                for (t, b) in targets.iter().zip(&bits) {
                    let got: Vec<u64> = b.iter().map(|w| w.load(Ordering::Relaxed)).collect();
                    let want = want_bits
                        .remove(&t.id)
                        .unwrap_or_else(|| vec![0; got.len()]);
                    assert!(
                        got == want,
                        "{} -> {}: successor bits differ",
                        spec.name,
                        t.name
                    );
                }
                assert!(
                    want_bits.is_empty(),
                    "{}: successors outside its targets",
                    spec.name
                );
            }
        }
        assert!(checked > 1000, "only {checked} positions checked");
    }

    #[test]
    fn twin_matches_the_generic_walk_with_symmetry() {
        let game = Morris::whole(3, true).unwrap();
        compare_with_generic(&game, &(0..6).collect::<Vec<_>>());
    }

    #[test]
    fn twin_matches_the_generic_walk_without_symmetry() {
        let game = Morris::whole(3, false).unwrap();
        compare_with_generic(&game, &[0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn twin_matches_the_generic_walk_with_four_pieces() {
        // Layers 4..8: captures, lost partitions and phase II entry (4-4 and 2-k).
        let game = Morris::whole(4, true).unwrap();
        compare_with_generic(&game, &[4, 5, 6, 7]);
    }

    /// Through [`PartitionKernels`] on the CPU: layers are taken only with
    /// their reached bits, give the twin's bytes and bits, and a target
    /// that is not there is named when a placement needs it.
    #[test]
    fn morris_kernels_solve_and_expand_reached_layers() {
        use crate::game::morris::kernels::MorrisKernels;
        use crate::game::{Device, ForwardTargets, PartitionKernels, SolvedPartitions};
        let game = Morris::whole(3, true).unwrap();
        let kernels = MorrisKernels::new(&game, &Device::Cpu).unwrap();
        let p = Morris::placement_partition(4, 2, 2);
        let spec = PlaceSpec::of(&game, p).unwrap();
        let reached = random_reached(&spec, 1, 2);
        let targets: Vec<&PlaceTarget> = spec.targets().into_iter().flatten().collect();
        assert_eq!(targets.len(), 2, "quiet and capture");
        let deps: Vec<Vec<u8>> = targets.iter().map(|t| random_values(7, t.size)).collect();
        let solved = SolvedPartitions::new(targets.iter().zip(&deps).map(|(t, v)| (t.id, &v[..])));
        assert!(
            kernels.solve(p, &solved).is_none(),
            "no reached bits: generic"
        );
        let got = kernels
            .solve(p, &solved.clone().with_reached(&reached))
            .unwrap()
            .unwrap();
        let want = solve(&spec, &reached, [Some(&deps[0]), Some(&deps[1])]).unwrap();
        assert!(got.values == want);
        let err = kernels
            .solve(p, &SolvedPartitions::default().with_reached(&reached))
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains(&targets[0].name), "{err}");

        let fresh = || -> Vec<Vec<AtomicU64>> {
            targets
                .iter()
                .map(|t| {
                    (0..t.size.div_ceil(64))
                        .map(|_| AtomicU64::new(0))
                        .collect()
                })
                .collect()
        };
        let (got, want) = (fresh(), fresh());
        let next = ForwardTargets::new(targets.iter().zip(&got).map(|(t, b)| (t.id, &b[..])));
        kernels.expand(p, &reached, &next).unwrap().unwrap();
        expand(&spec, &reached, [Some(&want[0]), Some(&want[1])]).unwrap();
        let load = |v: &[Vec<AtomicU64>]| -> Vec<u64> {
            v.iter()
                .flatten()
                .map(|w| w.load(Ordering::Relaxed))
                .collect()
        };
        assert!(load(&got) == load(&want));
        assert!(load(&got).iter().any(|&w| w != 0));
        let err = kernels
            .expand(p, &reached, &ForwardTargets::default())
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains(&targets[0].name), "{err}");
        // Not a placement layer: not these kernels' to expand.
        assert!(kernels
            .expand(Morris::partition_of(3, 3), &reached, &next)
            .is_none());
    }

    /// The whole game with three pieces a side, as a build will run it: the
    /// forward search from the empty board layer by layer through the
    /// kernels' `expand` reaches exactly what a search over
    /// [`Game::successors`] reaches, and solving the layers backwards where
    /// reached gives, there, the value that combining the successors' values
    /// the generic way gives (0 elsewhere). Phases II/III come from the
    /// kernels' own solve (the retro twin, held to the generic solver's
    /// bytes by its tests).
    #[test]
    fn whole_game_of_three_searched_forward_and_solved_backward() {
        use crate::game::morris::kernels::MorrisKernels;
        use crate::game::{Device, ForwardTargets, Layout, PartitionKernels, SolvedPartitions};
        use std::collections::HashSet;
        let game = Morris::whole(3, true).unwrap();
        let kernels = MorrisKernels::new(&game, &Device::Cpu).unwrap();
        let layout = Layout::new(&game).unwrap();
        let order = layout.order().to_vec();
        // The generic forward search, position by position.
        let start = game.start().unwrap();
        let mut seen: HashSet<(PartitionId, u64)> = HashSet::new();
        let (p0, r0) = game.rank(&start);
        seen.insert((p0, r0.0));
        let mut frontier = vec![start];
        let mut succ = Vec::new();
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for pos in &frontier {
                if !pos.placing() || game.status(pos) == Status::Lost {
                    continue;
                }
                succ.clear();
                game.successors(pos, &mut succ);
                for (_, s) in &succ {
                    let (q, r) = game.rank(s);
                    if seen.insert((q, r.0)) {
                        next.push(*s);
                    }
                }
            }
            frontier = next;
        }
        // The kernels' search, one bit per index.
        let bits: Vec<Vec<AtomicU64>> = order
            .iter()
            .map(|&p| {
                (0..game.partition_size(p).div_ceil(64))
                    .map(|_| AtomicU64::new(0))
                    .collect()
            })
            .collect();
        let load = |slot: usize| -> Vec<u64> {
            bits[slot]
                .iter()
                .map(|w| w.load(Ordering::Relaxed))
                .collect()
        };
        bits[layout.slot(p0).unwrap()][(r0.0 / 64) as usize]
            .fetch_or(1 << (r0.0 % 64), Ordering::Relaxed);
        let next = ForwardTargets::new(order.iter().zip(&bits).map(|(p, b)| (*p, &b[..])));
        for t in 0..6 {
            for part in game.place_parts(t) {
                let p = part.id();
                let reached = load(layout.slot(p).unwrap());
                kernels.expand(p, &reached, &next).unwrap().unwrap();
            }
        }
        let mut marked = 0;
        for (slot, &p) in order.iter().enumerate() {
            for (w, word) in load(slot).into_iter().enumerate() {
                for bit in bits64(word) {
                    let r = w as u64 * 64 + u64::from(bit);
                    let name = game.partition_name(p);
                    assert!(seen.contains(&(p, r)), "{name} index {r}: not reachable");
                    marked += 1;
                }
            }
        }
        assert_eq!(
            marked,
            seen.len(),
            "reachable positions the kernels did not mark"
        );
        // Backwards, in the build's order: phases II/III whole, then each
        // layer where reached.
        let mut values: HashMap<PartitionId, Vec<u8>> = HashMap::new();
        for (slot, &p) in order.iter().enumerate() {
            let known = SolvedPartitions::new(values.iter().map(|(q, v)| (*q, &v[..])));
            let Some(Part::Place { .. }) = Part::from_id(p) else {
                let v = kernels.solve(p, &known).unwrap().unwrap().values;
                values.insert(p, v);
                continue;
            };
            let reached = load(slot);
            let got = kernels
                .solve(p, &known.with_reached(&reached))
                .unwrap()
                .unwrap()
                .values;
            for (r, &g) in got.iter().enumerate() {
                let on = reached[r / 64] >> (r % 64) & 1 != 0;
                let want = if on {
                    generic_value(&game, p, r as u64, &values)
                } else {
                    0
                };
                assert_eq!(g, want, "{} index {r}", game.partition_name(p));
            }
            values.insert(p, got);
        }
        assert_ne!(
            values[&p0][r0.0 as usize], 0,
            "the start is reached and solved"
        );
    }

    #[test]
    fn a_missing_dependency_and_an_overflow_are_errors() {
        let game = Morris::whole(3, true).unwrap();
        let spec = PlaceSpec::of(&game, Morris::placement_partition(4, 2, 2)).unwrap();
        let mut reached = vec![u64::MAX; spec.words()];
        if spec.size() % 64 != 0 {
            *reached.last_mut().unwrap() = (1 << (spec.size() % 64)) - 1;
        }
        let err = solve(&spec, &reached, [None, None]).unwrap_err();
        assert!(matches!(err, Error::GameContract { .. }), "{err}");
        // Reached bits: longer slices are cut, bits past the end refused.
        let mut longer = reached.clone();
        longer.push(0);
        assert_eq!(spec.reached_bits(&longer).unwrap(), &reached[..]);
        *longer.last_mut().unwrap() = 1;
        assert!(spec.reached_bits(&longer).is_err());
        assert!(spec.reached_bits(&reached[1..]).is_err());
        // Every successor won by the opponent at the longest distance: one more is too far.
        let longest = Value::at_distance(Value::MAX_DISTANCE).unwrap().to_byte();
        let far = |t: &Option<PlaceTarget>| t.as_ref().map(|t| vec![longest; t.size as usize]);
        let (quiet, capture) = (far(&spec.quiet), far(&spec.capture));
        let err = solve(&spec, &reached, [quiet.as_deref(), capture.as_deref()]).unwrap_err();
        assert!(matches!(err, Error::DistanceOverflow { .. }), "{err}");
    }
}
