//! Retrograde analysis of one partition by forward scans (Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" method,
//! GPU-friendly: no predecessor generation).
//!
//! 1. The first scan sets illegal indices, terminal positions, and every
//!    position whose successors all lie in already-solved partitions.
//! 2. Pass `d = 1, 2, ...` decides the positions whose value is at distance `d`:
//!    for two-player games a win at odd `d` if some successor is a loss at
//!    `d - 1`, a loss at even `d` if every successor is a win (the longest at
//!    `d - 1`); for puzzles, `d` moves to the goal if some successor is at `d - 1`.
//! 3. When a pass decides nothing and no value at that distance exists
//!    anywhere, nothing further can be decided; what is left is a draw
//!    (puzzles: the goal is unreachable).
//!
//! Determinism: a pass only ever reads values at distances below `d` and only
//! writes values at distance `d`, so the order in which threads see each
//! other's writes cannot change any decision: any thread count gives the same bytes.

use super::Progress;
use crate::dist::{decode_ascending, encode_ascending, Blocks, Solo, Team};
use crate::game::Layout;
use crate::game::{Game, GameKind, PartitionValues, Status};
use crate::value::rules::{at, Combine, PassAcc, PENDING};
use crate::value::{PartitionId, Rank, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Ranks per parallel work item.
const CHUNK: u64 = 1 << 12;

/// Values of already-solved partitions, by slot (None for unsolved ones).
pub type Solved<'a> = [Option<&'a [u8]>];

/// [`Solved`] where some partitions may be held compact.
pub type SolvedValues<'a> = [Option<PartitionValues<'a>>];

/// Solves partition `slot` of `layout` given every earlier partition in `solved`.
pub fn solve_partition<G: Game>(
    game: &G,
    layout: &Layout,
    solved: &Solved<'_>,
    slot: usize,
    progress: &Progress,
) -> Result<Vec<u8>> {
    let solved: Vec<Option<PartitionValues<'_>>> = solved
        .iter()
        .map(|v| v.map(PartitionValues::Full))
        .collect();
    solve_partition_reached(game, layout, &solved, slot, None, progress)
}

/// [`solve_partition`] of only the indices whose bits are set in `reached`
/// (64 to a word, lowest bit first), when given: every other index gets
/// value byte 0 (not reached) without being looked at. That is exact for a
/// [`Forward::Layer`](crate::Forward::Layer) partition, whose reached
/// positions' successors are all reached: no solved position reads a 0.
pub fn solve_partition_reached<G: Game>(
    game: &G,
    layout: &Layout,
    solved: &SolvedValues<'_>,
    slot: usize,
    reached: Option<&[u64]>,
    progress: &Progress,
) -> Result<Vec<u8>> {
    solve_partition_team(
        game,
        layout,
        solved,
        slot,
        reached,
        progress,
        &Solo::default(),
    )
}

/// [`solve_partition_reached`] by every member of `team` together: each
/// scans its own blocks of the index ([`Blocks`]: blocks of 4096 dealt
/// round-robin),
/// and after the first scan and after each pass the members exchange what
/// they decided (the first scan's value bytes of each slice; then each pass's decided positions, sorted and delta-encoded). Every member returns the whole partition, the
/// bytes one process computes: a pass reads only distances below its own,
/// all of them exchanged before it starts.
pub fn solve_partition_team<G: Game>(
    game: &G,
    layout: &Layout,
    solved: &SolvedValues<'_>,
    slot: usize,
    reached: Option<&[u64]>,
    progress: &Progress,
    team: &dyn Team,
) -> Result<Vec<u8>> {
    let partition = layout.order()[slot];
    let size = layout.size(slot);
    let kind = game.info().kind;
    if let Some(bits) = reached {
        if (bits.len() as u64) < size.div_ceil(64) {
            return Err(Error::NotAvailable(format!(
                "the reached bits of partition {partition} hold {} words, {} are needed",
                bits.len(),
                size.div_ceil(64)
            )));
        }
    }
    let values: Vec<AtomicU8> = (0..size).map(|_| AtomicU8::new(PENDING)).collect();
    let ctx = Ctx {
        game,
        layout,
        solved,
        slot,
        partition,
        values: &values,
        kind,
        broken: AtomicBool::new(false),
        broken_message: std::sync::Mutex::new(None),
    };

    // Blocks of CHUNK indices dealt round-robin: each member's share of
    // every pass is then about even (contiguous slices were not: a pass's
    // decisions cluster along the index).
    let owned = Blocks::new(size, CHUNK, team.size());
    let mine: Vec<(u64, u64)> = owned.of(team.rank()).map(|r| (r.start, r.end)).collect();
    let alone = team.size() == 1;
    // Pass 0: everything that needs no iteration.
    progress.phase(&format!("{} init", game.partition_name(partition)), size);
    let max_seen = AtomicU32::new(0);
    let has_internal: Vec<AtomicU64> = (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    mine.par_iter()
        .copied()
        .for_each_init(Vec::new, |succ, (lo, hi)| {
            for r in lo..hi {
                if reached.is_some_and(|bits| bits[(r / 64) as usize] & (1 << (r % 64)) == 0) {
                    // Not reached: stays 0 and, without an internal bit, is never passed over.
                    values[r as usize].store(Value::ILLEGAL.to_byte(), Ordering::Relaxed);
                    continue;
                }
                let (value, internal, seen) = ctx.first_scan(Rank(r), succ);
                values[r as usize].store(value.to_byte(), Ordering::Relaxed);
                if internal {
                    has_internal[(r / 64) as usize].fetch_or(1 << (r % 64), Ordering::Relaxed);
                }
                max_seen.fetch_max(seen, Ordering::Relaxed);
            }
            progress.inc(hi - lo);
        });
    ctx.check()?;
    let mut max_seen = max_seen.load(Ordering::Relaxed);
    let mut internal = has_internal.iter().any(|w| w.load(Ordering::Relaxed) != 0);
    if !alone {
        let own_bytes: Vec<u8> = mine
            .iter()
            .flat_map(|&(lo, hi)| take_bytes(&values, lo..hi))
            .collect();
        for (member, bytes) in team.all_gather(&own_bytes)?.iter().enumerate() {
            if bytes.len() as u64 != owned.count(member) {
                return Err(Error::Team {
                    rank: team.rank(),
                    size: team.size(),
                    message: format!(
                        "rank {member} sent {} first-scan values of partition {partition} for {} indices",
                        bytes.len(),
                        owned.count(member)
                    ),
                });
            }
            if member != team.rank() {
                let mut at = 0;
                for block in owned.of(member) {
                    let n = (block.end - block.start) as usize;
                    put_bytes(&values, block.start, &bytes[at..at + n]);
                    at += n;
                }
            }
        }
        max_seen = team.all_max(u64::from(max_seen))? as u32;
        internal = team.all_sum(u64::from(internal))? > 0;
    }

    // Passes: only positions left pending with a successor inside this partition.
    // Without a move inside the partition (partitions by pieces placed, where
    // every move adds one) the first scan decided everything: no pass could change a byte.
    if !internal {
        return Ok(values.into_iter().map(AtomicU8::into_inner).collect());
    }
    let mut d: u32 = 1;
    loop {
        if d > Value::MAX_DISTANCE {
            return Err(Error::DistanceOverflow {
                game: game.info().id.to_string(),
                partition: game.partition_name(partition),
                max: Value::MAX_DISTANCE,
            });
        }
        progress.phase(
            &format!("{} pass {d}", game.partition_name(partition)),
            size,
        );
        let decided = AtomicU64::new(0);
        // What this member decided, for the others: rank << 8 | value byte.
        let news = std::sync::Mutex::new(Vec::new());
        mine.par_iter()
            .copied()
            .for_each_init(Vec::new, |succ, (lo, hi)| {
                let mut n = 0;
                let mut found = Vec::new();
                for r in lo..hi {
                    let bit =
                        has_internal[(r / 64) as usize].load(Ordering::Relaxed) & (1 << (r % 64));
                    if bit == 0 || values[r as usize].load(Ordering::Relaxed) != PENDING {
                        continue;
                    }
                    if let Some(v) = ctx.pass(Rank(r), d, succ) {
                        values[r as usize].store(v.to_byte(), Ordering::Relaxed);
                        n += 1;
                        if !alone {
                            found.push(r << 8 | u64::from(v.to_byte()));
                        }
                    }
                }
                decided.fetch_add(n, Ordering::Relaxed);
                if !found.is_empty() {
                    news.lock().unwrap_or_else(|e| e.into_inner()).extend(found);
                }
                progress.inc(hi - lo);
            });
        ctx.check()?;
        let mut decided = decided.load(Ordering::Relaxed);
        if !alone {
            let mut news = news.into_inner().unwrap_or_else(|e| e.into_inner());
            // Sorted by index, the list travels as deltas: 1 to 3 bytes a position.
            news.par_sort_unstable();
            decided = 0;
            for (member, bytes) in team
                .all_gather(&encode_ascending(&news))?
                .iter()
                .enumerate()
            {
                let theirs = decode_ascending(bytes)?;
                decided += theirs.len() as u64;
                if member != team.rank() {
                    for x in theirs {
                        let r = (x >> 8) as usize;
                        if r >= values.len() || owned.owner(r as u64) != member {
                            return Err(Error::Team {
                                rank: team.rank(),
                                size: team.size(),
                                message: format!(
                                    "rank {member} decided index {r} of partition {partition}, which it does not own"
                                ),
                            });
                        }
                        values[r].store(x as u8, Ordering::Relaxed);
                    }
                }
            }
        }
        if decided == 0 && u64::from(d) > u64::from(max_seen) {
            break;
        }
        d += 1;
    }
    Ok(values.into_iter().map(AtomicU8::into_inner).collect())
}

/// The value bytes of `range`.
fn take_bytes(values: &[AtomicU8], range: std::ops::Range<u64>) -> Vec<u8> {
    values[range.start as usize..range.end as usize]
        .par_iter()
        .map(|v| v.load(Ordering::Relaxed))
        .collect()
}

/// Stores `bytes` from index `start` on.
fn put_bytes(values: &[AtomicU8], start: u64, bytes: &[u8]) {
    values[start as usize..start as usize + bytes.len()]
        .par_iter()
        .zip(bytes.par_iter())
        .for_each(|(v, b)| v.store(*b, Ordering::Relaxed));
}

struct Ctx<'a, G: Game> {
    game: &'a G,
    layout: &'a Layout,
    solved: &'a SolvedValues<'a>,
    slot: usize,
    partition: PartitionId,
    values: &'a [AtomicU8],
    kind: GameKind,
    broken: AtomicBool,
    broken_message: std::sync::Mutex<Option<String>>,
}

/// A successor's value as the solver sees it.
enum Succ {
    /// In this partition, at this rank.
    Internal(u64),
    /// Already solved.
    External(Value),
}

impl<G: Game> Ctx<'_, G> {
    fn fail(&self, message: String) {
        if !self.broken.swap(true, Ordering::Relaxed) {
            *self
                .broken_message
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(message);
        }
    }

    fn check(&self) -> Result<()> {
        if self.broken.load(Ordering::Relaxed) {
            let message = self
                .broken_message
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .unwrap_or_default();
            return Err(Error::GameContract {
                game: self.game.info().id.to_string(),
                message,
            });
        }
        Ok(())
    }

    fn classify(&self, pos: &G::Position) -> Option<Succ> {
        let (p, r) = self.game.rank(pos);
        let Some(slot) = self.layout.locate(p, r) else {
            self.fail(format!(
                "successor ({p}, {r}) is outside the game's partitions"
            ));
            return None;
        };
        if slot == self.slot {
            return Some(Succ::Internal(r.0));
        }
        match &self.solved[slot] {
            Some(v) if slot < self.slot => {
                let value = Value::from_byte(v.get(r.0));
                if value.is_illegal() {
                    self.fail(format!(
                        "a move from partition {} reaches ({p}, {r}), an index the game calls illegal",
                        self.partition
                    ));
                    return None;
                }
                Some(Succ::External(value))
            }
            _ => {
                self.fail(format!(
                    "a move from partition {} leads to partition {p}, which is solved later",
                    self.partition
                ));
                None
            }
        }
    }

    /// The first scan: (value, has a successor in this partition, largest distance seen).
    fn first_scan(&self, r: Rank, succ: &mut Vec<(G::Move, G::Position)>) -> (Value, bool, u32) {
        let Some(pos) = self.game.unrank(self.partition, r) else {
            return (Value::ILLEGAL, false, 0);
        };
        match self.game.status(&pos) {
            Status::Lost | Status::Goal => return (at(0), false, 0),
            Status::Drawn => return (Value::DRAW, false, 0),
            Status::Ongoing => {}
        }
        succ.clear();
        self.game.successors(&pos, succ);
        if succ.is_empty() && self.kind == GameKind::TwoPlayer {
            self.fail(format!(
                "position {} has no moves but its status is not Lost or Drawn",
                self.game.format_position(&pos)
            ));
            return (Value::ILLEGAL, false, 0);
        }
        let mut acc = Combine::new(self.kind);
        let mut internal = false;
        let mut seen = 0;
        for (_, s) in succ.iter() {
            match self.classify(s) {
                Some(Succ::Internal(_)) => internal = true,
                Some(Succ::External(v)) => {
                    seen = seen.max(v.distance().unwrap_or(0));
                    acc.add(v);
                }
                None => return (Value::ILLEGAL, false, 0),
            }
        }
        if internal {
            // A win through an external loss may still be beaten by a shorter
            // internal one; the passes decide.
            return (Value::DRAW, true, seen);
        }
        let Some(v) = acc.finish() else {
            self.fail(format!(
                "position {} is decided beyond the longest distance a value byte holds ({})",
                self.game.format_position(&pos),
                Value::MAX_DISTANCE
            ));
            return (Value::ILLEGAL, false, 0);
        };
        (v, false, seen.max(v.distance().unwrap_or(0)))
    }

    /// Pass `d` for a pending position: its value if decided at distance `d`.
    fn pass(&self, r: Rank, d: u32, succ: &mut Vec<(G::Move, G::Position)>) -> Option<Value> {
        let pos = self.game.unrank(self.partition, r)?;
        succ.clear();
        self.game.successors(&pos, succ);
        let mut acc = PassAcc::default();
        for (_, s) in succ.iter() {
            let v = match self.classify(s)? {
                Succ::Internal(i) => {
                    Value::from_byte(self.values[i as usize].load(Ordering::Relaxed))
                }
                Succ::External(v) => v,
            };
            acc.add(self.kind, d, v);
            if acc.settled(self.kind, d) {
                break;
            }
        }
        acc.decide(self.kind, d)
    }
}
