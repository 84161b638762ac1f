//! Checkers (English draughts, American checkers) endgame databases.
//!
//! # Rules
//! The 8x8 board's 32 dark squares, numbered 1..32 in the standard way;
//! black's men start on 1..12 and move toward 32, white's toward 1. Black
//! moves first (irrelevant to endgames, which start anywhere). Men step
//! diagonally forward, kings diagonally either way, one square. Captures are
//! mandatory: a piece jumps an adjacent opponent piece to the empty square
//! beyond, and keeps jumping while it can (men forward only, kings both
//! ways); any capture may be chosen, not necessarily the longest. A man that
//! reaches the far row is crowned and the move ends there, even in the middle
//! of a capture. A side with no legal move (no pieces, or all blocked) loses.
//! Play that goes on for ever is a draw (the databases' convention; no move
//! limit).
//!
//! # Positions, side to move and colour symmetry
//! Positions are stored from the side to move ([`rules::Position`]): its men
//! move toward higher squares, and a position with white to move is stored
//! as the board turned half round (square `n` to `33 - n`) with the colours
//! swapped, so "white to move" and "black to move" share every index. The
//! colour survives in the position only to be written out. Values are for
//! the side to move: win, loss or draw, with the distance in plies to the end
//! of the game under best play (the winner hurrying, the loser delaying).
//! One index per position *without* side to move is what the literature
//! counts ("Checkers Is Solved", Schaeffer et al., Science 2007): a board with
//! black to move is exactly one index.
//!
//! # Partitions and index ([`index`])
//! The subdivisions of Lake, Schaeffer and Lu ("Solving large retrograde
//! analysis problems using a network of workstations"): a slice is the
//! material (mover men `a`, kings `b`, opponent men `c`, kings `d`) and each
//! side's leading man row (`rm`, `ro`, from its own side). A move without
//! capture or crowning keeps the material and turns the board over, so it
//! leads from slice `(a, b, c, d, rm, ro)` to the opponent's
//! `(c, d, a, b, ro, rm')` with `rm' >= rm`; a slice and its mirror form one
//! partition (one set when they coincide). Inside a slice the rank is a
//! multinomial of the four piece sets (men never on their crowning row),
//! described in [`index`].
//!
//! Solving order: by pieces on the board (captures remove some), then by
//! men on the board (a crowning turns one into a king), then by material,
//! then by `rm + ro` *descending* (a man move that advances a side's leading
//! man raises the sum; one that does not keeps the slice), ties by the
//! slices' key. So every move leads to the same partition or an earlier one.
//! A side with no pieces has its own slices: with it to move, lost at
//! distance 0 (a capture of the last piece leads there); with the other side
//! to move, a position play never reaches (the game ended with that
//! capture) but that the literature counts, and that the rules value
//! directly: the mover wins in one ply if it can move at all.
//!
//! # Parameters
//! `pieces=N` builds every slice with 1..=N pieces. `material=KKvK` builds one
//! material signature: the side to move's pieces, `v`, the other side's,
//! with `K` a king and `M` a man (`MMKvK`: two men and a king against a
//! king, either side to move), together with the smaller signatures its
//! moves lead to, which a build needs for its captures and crownings; with
//! `tbforge build --from DIR` those are copied from an earlier build instead
//! of being solved again ([`Game::shares_partition_with`]).
//!
//! # Kernels: the GPU and its CPU twin
//! Every partition is solved whole by the kernels of `kernels/checkers.cu`
//! (module `cuda`, behind the `cuda` feature) or, on the CPU, by their twin
//! ([`twin`]: the same tables, move generation and passes in Rust on all
//! cores, what a CPU build runs); [`kernels`] is the host side the build
//! reaches through [`Game::kernels`]. Per partition the host lists every
//! slice a move may lead to, with its index layout and where its values
//! lie ([`twin::CheckersTables`]); one thread per index then unranks it,
//! generates its moves (a capture's jump sequences walked without a stack:
//! the path is two bits per jump, and a jump is undone by the opposite one),
//! ranks each successor and reads its value. The first scan and passes
//! `d = 1, 2, ...` apply the generic solver's rules position by position and
//! stop where it stops, so the bytes are its bytes ([`twin`] says why in
//! full); tests/checkers_kernels.rs compares them partition by partition,
//! and `tbforge bench gpu checkers` compares the GPU with the twin (the
//! successor lists of random positions, and whole partitions).
//!
//! # Search: the frontier search on the GPU
//! `tbforge analyse checkers --gpu` searches full width to a fixed depth
//! with the `checkers_frontier_*` kernels of the same file (module
//! `frontier_cuda`; the twin, and the scores it shares with the alpha-beta
//! search bit for bit, in `frontier`): the tree breadth-first a level at a
//! time, the last level scored without being stored, negamax backed up.
//!
//! # Notation
//! PDN FEN: `W:W18,K25:B1,2,K12` (side to move, then each side's squares, `K`
//! before a king; ranges `1-12` are read too). Moves: `11-15`, captures with
//! every landing square, `15x24x31`.

#[cfg(feature = "cuda")]
pub mod cuda;
mod eval;
#[cfg(feature = "build")]
mod frontier;
#[cfg(feature = "cuda")]
mod frontier_cuda;
pub mod index;
#[cfg(feature = "build")]
pub mod kernels;
mod notation;
pub mod rules;
#[cfg(feature = "build")]
pub mod stream;
#[cfg(feature = "build")]
pub mod twin;

use super::params::{params, GameDescriptor, ParamDoc, ParamReader};
use super::{Game, GameInfo, GameKind, Status};
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};
use index::{Slice, SliceIndex, MAX_PIECES};
use rules::{Move, Position};
use std::collections::{BTreeMap, BTreeSet};

/// What `tbforge games` shows.
pub const DESCRIPTOR: GameDescriptor = GameDescriptor {
    name: "checkers",
    summary: "Checkers (English draughts) endgame databases: every position with up to N \
              pieces, win/draw/loss and distance in plies for the side to move",
    kind: GameKind::TwoPlayer,
    params: &[
        ParamDoc {
            key: "pieces",
            default: "3",
            help: "every position with 1..=N pieces on the board, N in 1..=8 (positions without \
                   side to move, 1..=N together: 3: 268,316 (a second), 4: 7.4 M (half a minute on \
                   2 cores), 5: 156 M, 6: 2.66 G); give either \
                   pieces or material",
        },
        ParamDoc {
            key: "material",
            default: "none",
            help: "one material signature, e.g. KKvK or MMKvK (K king, M man; the side to move, \
                   v, the other side; either side may be to move), plus the smaller signatures \
                   its captures and crownings lead to (`build --from DIR` copies those from \
                   an earlier checkers build)",
        },
    ],
    notation: "PDN FEN: side to move (W or B), then :W and :B with each side's squares 1..32 \
               in the standard numbering (black's men start on 1..12), K before a king, e.g. \
               W:W18,K25:B1,2,K12; moves 11-15, captures with every landing square 15x24x31",
    example: "W:WK18:BK1,K2",
};

/// Which signatures a build holds.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    /// Every position with 1..=N pieces.
    Pieces(u32),
    /// One signature (mover men, kings; opponent men, kings) and what it needs.
    Material([u8; 4]),
}

/// One partition: a slice and, unless it is its own mirror, the mirror.
#[derive(Clone, Debug)]
struct Part {
    first: SliceIndex,
    second: Option<SliceIndex>,
}

impl Part {
    fn size(&self) -> u64 {
        self.first.size() + self.second.as_ref().map_or(0, SliceIndex::size)
    }
}

/// English draughts endgame databases.
#[derive(Clone, Debug)]
pub struct Checkers {
    scope: Scope,
    /// Partitions in solving order.
    parts: Vec<Part>,
    /// `slot[id]`: the part of partition id `id` (`u32::MAX` for none).
    slot: Vec<u32>,
}

const NO_PART: u32 = u32::MAX;

/// The signature `KKMvK` as (mover men, kings, opponent men, kings).
fn parse_material(text: &str) -> std::result::Result<[u8; 4], String> {
    let hint = "write the side to move's pieces, `v`, the other side's, K for a king and M for \
                a man, e.g. `material=KKvK` or `material=MKvKM`";
    let Some((x, y)) = text.trim().split_once(['v', 'V']) else {
        return Err(format!(
            "`material={text}` has no `v` between the sides; {hint}"
        ));
    };
    let side = |s: &str| -> std::result::Result<(u8, u8), String> {
        let (mut men, mut kings) = (0u8, 0u8);
        for ch in s.trim().chars() {
            match ch {
                'M' | 'm' => men += 1,
                'K' | 'k' => kings += 1,
                other => {
                    return Err(format!(
                        "`material={text}`: `{other}` is not K or M; {hint}"
                    ))
                }
            }
            if men + kings > 12 {
                return Err(format!("`material={text}`: a side has at most 12 pieces"));
            }
        }
        Ok((men, kings))
    };
    let (a, b) = side(x)?;
    let (c, d) = side(y)?;
    let n = u32::from(a + b + c + d);
    if n == 0 || n > MAX_PIECES {
        return Err(format!(
            "`material={text}` has {n} pieces; 1..={MAX_PIECES} are supported"
        ));
    }
    Ok([a, b, c, d].max([c, d, a, b]))
}

/// `KKvK` from (mover men, kings, opponent men, kings).
fn write_material(m: [u8; 4]) -> String {
    let side = |men: u8, kings: u8| "K".repeat(kings.into()) + &"M".repeat(men.into());
    format!("{}v{}", side(m[0], m[1]), side(m[2], m[3]))
}

/// Every signature (mover's view) that play from `m` can reach: captures
/// lower the opponent's count, crownings turn a man into a king, and each
/// move hands the turn over. A superset is harmless (it is only solved too).
fn closure(m: [u8; 4]) -> BTreeSet<[u8; 4]> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![m];
    while let Some(m @ [a, b, c, d]) = todo.pop() {
        if !seen.insert(m) {
            continue;
        }
        let mut next = vec![[c, d, a, b]];
        if a > 0 {
            next.push([c, d, a - 1, b + 1]);
        }
        for i in 0..=c {
            for j in 0..=d {
                if i + j == 0 {
                    continue;
                }
                next.push([c - i, d - j, a, b]);
                if a > 0 {
                    next.push([c - i, d - j, a - 1, b + 1]);
                }
            }
        }
        todo.extend(next.into_iter().filter(|n| !seen.contains(n)));
    }
    seen
}

impl Checkers {
    /// Checkers from `--param pieces=N` (default 3: a second's build) or `--param material=KKvK`.
    pub fn from_params(raw: &BTreeMap<String, String>) -> Result<Self> {
        let mut p = ParamReader::new("checkers", raw);
        if raw.contains_key("pieces") && raw.contains_key("material") {
            return Err(p.error(
                "give either `pieces=N` (every position with up to N pieces) or \
                 `material=KKvK` (one signature), not both",
            ));
        }
        let scope = match p.text("material") {
            Some(text) => Scope::Material(parse_material(text).map_err(|m| p.error(m))?),
            None => Scope::Pieces(p.uint("pieces", 3, 1..=u64::from(MAX_PIECES))? as u32),
        };
        p.finish()?;
        Checkers::new(scope)
    }

    /// Every position with 1..=`pieces` pieces.
    pub fn with_pieces(pieces: u32) -> Result<Self> {
        let raw = BTreeMap::from([("pieces".to_string(), pieces.to_string())]);
        Self::from_params(&raw)
    }

    fn new(scope: Scope) -> Result<Self> {
        let materials: BTreeSet<[u8; 4]> = match scope {
            Scope::Pieces(n) => {
                let mut all = BTreeSet::new();
                let n = n as u8;
                for a in 0..=n {
                    for b in 0..=n - a {
                        for c in 0..=n - a - b {
                            for d in 0..=n - a - b - c {
                                if a + b + c + d > 0 {
                                    all.insert([a, b, c, d]);
                                }
                            }
                        }
                    }
                }
                all
            }
            Scope::Material(m) => closure(m),
        };
        let mut slices = BTreeSet::new();
        for [a, b, c, d] in materials {
            // Every position has pieces: a capture leaves the capturer's.
            if a + b + c + d == 0 {
                continue;
            }
            slices.extend(
                Slice::all_of([a, c], [b, d])
                    .into_iter()
                    .map(Slice::canonical),
            );
        }
        let too_big = || Error::BadParam {
            game: "checkers".into(),
            message: "a slice has more positions than a 64-bit index holds".into(),
        };
        let mut parts = Vec::new();
        for s in slices {
            let first = SliceIndex::new(s).ok_or_else(too_big)?;
            if first.size() == 0 {
                continue;
            }
            let second = if s.mirror() == s {
                None
            } else {
                Some(SliceIndex::new(s.mirror()).ok_or_else(too_big)?)
            };
            parts.push(Part { first, second });
        }
        parts.sort_by_key(|p| {
            let s = p.first.slice();
            let material = [s.men[0], s.kings[0], s.men[1], s.kings[1]];
            (
                s.pieces(),
                s.men[0] + s.men[1],
                material.max([material[2], material[3], material[0], material[1]]),
                std::cmp::Reverse(s.lead[0] + s.lead[1]),
                s,
            )
        });
        let max_id = parts
            .iter()
            .map(|p| p.first.slice().id())
            .max()
            .unwrap_or(0);
        let mut slot = vec![NO_PART; max_id as usize + 1];
        for (i, p) in parts.iter().enumerate() {
            slot[p.first.slice().id() as usize] = i as u32;
        }
        Ok(Checkers { scope, parts, slot })
    }

    fn part(&self, p: PartitionId) -> Option<&Part> {
        match self.slot.get(p.0 as usize) {
            Some(&i) if i != NO_PART => Some(&self.parts[i as usize]),
            _ => None,
        }
    }

    /// Positions (without side to move, as the literature counts them) by
    /// pieces on the board: `(pieces, positions)` for every count the build
    /// holds. With `material=`, only the signatures it builds are counted.
    pub fn positions_by_pieces(&self) -> Vec<(u32, u64)> {
        let mut by = BTreeMap::new();
        for p in &self.parts {
            *by.entry(p.first.slice().pieces()).or_insert(0u64) += p.size();
        }
        by.into_iter().collect()
    }

    /// The slice of each partition, in solving order (its mirror shares it).
    pub fn slices(&self) -> Vec<Slice> {
        self.parts.iter().map(|p| p.first.slice()).collect()
    }
}

impl Game for Checkers {
    type Position = Position;
    type Move = Move;

    fn info(&self) -> GameInfo {
        let params = match self.scope {
            Scope::Pieces(n) => params([("pieces", n.to_string())]),
            Scope::Material(m) => params([("material", write_material(m))]),
        };
        GameInfo {
            id: "checkers",
            params,
            kind: GameKind::TwoPlayer,
        }
    }

    fn partitions(&self) -> Vec<PartitionId> {
        self.parts
            .iter()
            .map(|p| PartitionId(p.first.slice().id()))
            .collect()
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        self.part(p).map_or(0, Part::size)
    }

    fn partition_name(&self, p: PartitionId) -> String {
        match self.part(p) {
            Some(part) => part.first.slice().name(),
            None => format!("invalid{}", p.0),
        }
    }

    /// Pieces on the board: the literature counts checkers positions so.
    fn partition_group(&self, p: PartitionId) -> Option<String> {
        let pieces = self.part(p)?.first.slice().pieces();
        Some(format!(
            "{pieces} piece{}",
            if pieces == 1 { "" } else { "s" }
        ))
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Position> {
        let part = self.part(p)?;
        let first = part.first.size();
        if r.0 < first {
            return Some(part.first.unrank(r.0));
        }
        let second = part.second.as_ref()?;
        (r.0 - first < second.size()).then(|| second.unrank(r.0 - first))
    }

    fn rank(&self, pos: &Position) -> (PartitionId, Rank) {
        let slice = Slice::of(pos);
        let id = PartitionId(slice.id());
        // A position outside the build: its partition id names no slot.
        let Some(part) = self.part(id) else {
            return (id, Rank(0));
        };
        if slice.is_canonical() {
            (id, Rank(part.first.rank(pos)))
        } else {
            let second = part
                .second
                .as_ref()
                .expect("a slice's mirror is in its part");
            (id, Rank(part.first.size() + second.rank(pos)))
        }
    }

    fn status(&self, pos: &Position) -> Status {
        if pos.has_move() {
            Status::Ongoing
        } else {
            Status::Lost
        }
    }

    fn successors(&self, pos: &Position, out: &mut Vec<(Move, Position)>) {
        rules::successors(pos, out);
    }

    /// Captures: they lead to a slice of fewer pieces, and a position with
    /// one has only captures (they are compulsory), so its value needs no
    /// stored byte at all (the endgame databases' usual trick). Following
    /// promotions too (every move that leaves the slice) made pieces=4's
    /// engine files 21 % smaller with distances and 12 % WDL-only, but
    /// probes about ten times slower (each promotion's successor follows its
    /// own promotions and captures): not worth it for an engine's probes.
    fn resolves(&self, _pos: &Position, mv: &Move, _succ: &Position) -> bool {
        mv.capture
    }

    /// Steps by the side that just moved which keep its leading man row
    /// (`rules::each_unmove_within`): the external pipeline's passes then
    /// expand only the positions one of them marks, and decide a pass's
    /// wins by the marks alone.
    fn predecessors_within(&self, pos: &Position, out: &mut Vec<Position>) -> bool {
        rules::each_unmove_within(pos, |before| out.push(before));
        true
    }

    fn start(&self) -> Option<Position> {
        // Endgame databases: no single start position.
        None
    }

    fn shares_partition_with(&self, other: &GameInfo, p: PartitionId) -> bool {
        // A slice's values depend on the rules alone (and on the smaller
        // slices, which every build that holds it holds too).
        other.id == "checkers" && self.part(p).is_some()
    }

    fn parse_position(&self, text: &str) -> Result<Position> {
        notation::parse_position(text)
    }

    fn format_position(&self, pos: &Position) -> String {
        notation::format_position(pos)
    }

    fn format_move(&self, pos: &Position, mv: &Move) -> String {
        notation::format_move(pos, mv)
    }

    fn initial(&self) -> Option<Position> {
        Some(eval::initial())
    }

    fn evaluate(&self, pos: &Position) -> i32 {
        eval::evaluate(pos)
    }

    fn search_key(&self, pos: &Position) -> u64 {
        // Positions of more pieces than the build lie outside its index.
        eval::search_key(pos)
    }

    /// The partitions the kernels' tables read for `p`: every material a
    /// move, capture or crowning leads to, at each pair of leading rows,
    /// solved before `p`. Without it a streamed first scan held every
    /// earlier partition's values (and opened each one's files) for each
    /// partition: 202 times over for the first partition of a build
    /// through 3 pieces.
    #[cfg(feature = "build")]
    fn successor_partitions(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        let tables = twin::CheckersTables::new(self, p).ok()?;
        let mut listed: Vec<PartitionId> = tables
            .deps
            .iter()
            .filter_map(|&d| self.part(d))
            .map(|part| PartitionId(part.first.slice().id()))
            .filter(|&q| q != p)
            .collect();
        listed.sort_unstable();
        listed.dedup();
        Some(listed)
    }

    #[cfg(feature = "build")]
    fn kernels(
        &self,
        device: &super::Device,
    ) -> Result<Option<std::sync::Arc<dyn super::PartitionKernels>>> {
        Ok(Some(std::sync::Arc::new(kernels::CheckersKernels::new(
            self, device,
        )?)))
    }

    #[cfg(feature = "build")]
    fn frontier(
        &self,
        device: &super::Device,
    ) -> Result<Option<Box<dyn super::FrontierSearch<Position>>>> {
        Ok(Some(match device {
            super::Device::Cpu => Box::new(frontier::FrontierTwin),
            #[cfg(feature = "cuda")]
            super::Device::Cuda(gpu) => Box::new(frontier_cuda::FrontierCuda::new(
                std::sync::Arc::clone(gpu),
            )?),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every successor of a sample of each partition's positions through 4
    /// pieces lies in the partition itself or in one `successor_partitions`
    /// lists, and the lists are narrower than every earlier partition.
    #[cfg(feature = "build")]
    #[test]
    fn successors_lie_where_successor_partitions_says() {
        let g = Checkers::with_pieces(4).unwrap();
        let order = g.partitions();
        let (mut listed_in_all, mut seen_away) = (0usize, 0usize);
        for (i, &p) in order.iter().enumerate() {
            let (listed, away) = crate::game::check_successor_partitions(&g, p, 300);
            for q in &listed {
                assert!(
                    order[..i].contains(q),
                    "{} lists {}, not solved before it",
                    g.partition_name(p),
                    g.partition_name(*q)
                );
            }
            listed_in_all += listed.len();
            seen_away += away;
        }
        assert!(seen_away > 1000, "{seen_away}");
        // Each material a move leads to at every pair of leading rows: 45 %
        // of the pairs (62,071 of 138,075 through 4 pieces), not all.
        let every_earlier = order.len() * (order.len() - 1) / 2;
        assert!(
            listed_in_all * 2 < every_earlier,
            "{listed_in_all} of {every_earlier}"
        );
    }

    #[test]
    fn material_syntax() {
        assert_eq!(parse_material("KKvK"), Ok([0, 2, 0, 1]));
        assert_eq!(parse_material("KvKK"), Ok([0, 2, 0, 1]));
        assert_eq!(parse_material("mkVk"), Ok([1, 1, 0, 1]));
        assert_eq!(write_material([1, 1, 0, 1]), "KMvK");
        for bad in ["KK", "KXvK", "v", "KKKKKvKKKK", "MMMMMMMMMMMMMvK"] {
            assert!(parse_material(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn closure_holds_captures_and_crownings() {
        let c = closure([1, 0, 0, 1]);
        // M v K: the king may take the man (then the mover has nothing), the
        // man may crown (K v K), either side to move.
        assert!(c.contains(&[0, 1, 1, 0]));
        assert!(c.contains(&[0, 0, 0, 1]));
        assert!(c.contains(&[0, 1, 0, 1]));
        assert!(c.contains(&[0, 1, 0, 0]));
    }

    /// The predecessors within a partition are exactly the positions whose
    /// legal moves reach it without leaving the partition: every move of
    /// every position of pieces=3 against every listed predecessor, as
    /// pairs of ranks.
    #[test]
    fn predecessors_within_are_exactly_the_moves_that_stay() {
        let g = Checkers::with_pieces(3).unwrap();
        let (mut out, mut before) = (Vec::new(), Vec::new());
        let (mut pairs, mut lost_targets, mut man_steps) = (0usize, 0usize, 0usize);
        for p in g.partitions() {
            let mut forward = BTreeSet::new();
            let mut backward = BTreeSet::new();
            for r in 0..g.partition_size(p) {
                let pos = g.unrank(p, Rank(r)).unwrap();
                out.clear();
                g.successors(&pos, &mut out);
                assert_eq!(pos.has_move(), !out.is_empty(), "has_move at {r} of {p:?}");
                for (mv, next) in &out {
                    let (q, rq) = g.rank(next);
                    if q == p {
                        forward.insert((r, rq.0));
                        man_steps += usize::from(pos.men[0] & 1 << mv.path()[0] != 0);
                    }
                }
                before.clear();
                assert!(g.predecessors_within(&pos, &mut before));
                lost_targets += usize::from(!before.is_empty() && !pos.has_move());
                for q in &before {
                    let (qp, rq) = g.rank(q);
                    assert_eq!(qp, p, "{} leaves the partition", g.partition_name(p));
                    backward.insert((rq.0, r));
                }
            }
            assert_eq!(forward, backward, "{}", g.partition_name(p));
            pairs += forward.len();
        }
        assert!(
            pairs > 100_000 && lost_targets > 100 && man_steps > 10_000,
            "{pairs} moves, {lost_targets} lost positions reached, {man_steps} man steps"
        );
    }

    /// Every move leads to the same partition or one solved before it.
    #[test]
    fn order_is_a_dependency_order() {
        let g = Checkers::with_pieces(3).unwrap();
        let order = g.partitions();
        let place: BTreeMap<u32, usize> = order.iter().enumerate().map(|(i, p)| (p.0, i)).collect();
        let mut out = Vec::new();
        for (i, &p) in order.iter().enumerate() {
            for r in 0..g.partition_size(p) {
                let pos = g.unrank(p, Rank(r)).unwrap();
                assert_eq!(g.rank(&pos), (p, Rank(r)));
                out.clear();
                g.successors(&pos, &mut out);
                for (_, next) in &out {
                    let (q, rq) = g.rank(next);
                    assert!(
                        place[&q.0] <= i,
                        "{} -> {}",
                        g.partition_name(p),
                        g.partition_name(q)
                    );
                    assert!(rq.0 < g.partition_size(q));
                }
            }
        }
    }
}
