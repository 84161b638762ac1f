//! The [`Game`] abstraction and the games built into tbforge.
//!
//! A game tells the solver three things: how its positions are perfectly
//! hashed (partitions, their sizes, rank and unrank), how play proceeds
//! (successors, terminal status), and how people write positions and moves.
//! Solvers, file writers and probers are generic over it; the
//! [`registry`](crate::registry) maps a name and `--param`s to a concrete game.

use crate::value::{PartitionId, Rank, Weights};
use crate::Result;
use std::collections::BTreeMap;
use std::fmt::Debug;

mod board;
pub mod checkers;
mod compositions;
pub mod connect4;
pub mod foreandaft;
pub mod foxandgeese;
pub mod frogsandtoads;
#[cfg(feature = "build")]
mod frontier;
#[cfg(feature = "build")]
mod index_bfs;
#[cfg(feature = "build")]
mod kernels;
mod layout;
pub mod morris;
pub mod nim;
pub mod pancake;
mod params;
pub mod pegsolitaire;
#[cfg(feature = "build")]
pub mod permpuzzle;
#[cfg(feature = "build")]
mod reached;
pub mod slidingtile;
#[cfg(feature = "build")]
mod stream;
#[cfg(feature = "build")]
mod stream_check;
pub mod tictactoe;
pub mod topspin;

pub use crate::value::GameKind;
#[cfg(feature = "build")]
pub use frontier::{FrontierLevels, FrontierReport, FrontierSearch};
#[cfg(feature = "build")]
pub use kernels::{
    block_lookup_twin, ChunkDone, ChunkExpander, ChunkJob, ChunkTiming, Device, DeviceCheckOptions,
    DeviceCheckReport, DeviceCheckRow, DeviceSearch, ForwardTargets, KernelSolve, Lookup,
    OwnedRequests, PartitionKernels, RequestPiece, Requests, SolvedPartitions, StreamTargets,
    NO_FAILURE, STREAM_DRAWN, STREAM_ILLEGAL, STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING,
    STREAM_PENDING,
};
pub use layout::Layout;
pub use params::{params, GameDescriptor, ParamDoc, ParamReader};
#[cfg(feature = "build")]
pub use reached::{PartitionValues, ReachedValues, ReachedView};
#[cfg(feature = "build")]
pub use stream::{
    expand_chunk_on_cpu, expand_on_twin, group_by_bucket, look_up_chunk_on_cpu, CpuExpander,
};

/// A game's parameters, canonical: keys sorted, every parameter present with
/// its value written the one way the game prints it (defaults filled in).
pub type Params = BTreeMap<String, String>;

/// The status of a position before any move is made in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Play goes on: the value comes from the successors.
    Ongoing,
    /// Two-player: the side to move has lost (the opponent completed a line,
    /// the mover is blocked or reduced below the minimum).
    Lost,
    /// Two-player: the game is over and drawn (a full board).
    Drawn,
    /// Puzzle: this position is a goal (distance 0).
    Goal,
}

/// How forward search from the start position treats one partition, and
/// which of its indices the tablebase holds values for.
///
/// A game whose partitions are all [`Forward::Layer`] or [`Forward::Stop`]
/// is searched partition by partition, one bit per index and no frontier
/// lists (Edelkamp, Sulewski and Yücel's "GPU Exploration of Two-Player Games with Perfect Hash Functions" phase I BFS): layer `d`'s partitions are expanded once
/// every layer before them is, and their successors are marked in layer
/// `d + 1` (or in a `Stop` partition). The search checks that claim and fails
/// with a contract error where a move breaks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Forward {
    /// Searched by the general BFS; every index gets its value.
    #[default]
    Expand,
    /// Every position of the partition is first reached at this depth (plies
    /// from the start), and every move from it leads to a partition of the
    /// next depth or a `Stop` partition. Only reached positions are solved
    /// and stored: every other index holds 0, *not reached*, which the
    /// deep verifier accepts for such partitions.
    Layer(u32),
    /// Reached positions are counted (at the depth they are first reached)
    /// but not expanded: their values do not depend on where play started,
    /// so every index gets its value, reached or not.
    Stop,
}

/// Identity of a concrete game instance, as written into headers and the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameInfo {
    /// The game's registry name (`tictactoe`, `connect4`, ...).
    pub id: &'static str,
    /// Canonical parameters.
    pub params: Params,
    /// Two-player or puzzle.
    pub kind: GameKind,
}

impl GameInfo {
    /// The canonical text of game and parameters: `connect4:height=5,width=5`,
    /// or the bare id for a game without parameters.
    pub fn canonical(&self) -> String {
        canonical_text(self.id, &self.params)
    }

    /// A stable 64-bit hash (FNV-1a) of [`GameInfo::canonical`]. Headers carry it so that a
    /// file from one parameter set is never read as another's.
    pub fn param_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.canonical().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    /// The default output directory name: `connect4-height=5,width=5`, or the bare
    /// id for a game without parameters.
    pub fn dir_name(&self) -> String {
        // The canonical text with `-` for `:`, which some file systems refuse.
        self.canonical().replacen(':', "-", 1)
    }
}

/// `id:key=value,...` (keys sorted), or the bare id without parameters: how
/// manifests, headers' parameter hash and logs name a game instance.
pub fn canonical_text(id: &str, params: &Params) -> String {
    if params.is_empty() {
        return id.to_string();
    }
    let params: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{id}:{}", params.join(","))
}

/// Which successors' ranks a walk over them needs
/// ([`Game::visit_successor_ranks`]): the others come with their partition
/// alone, which a game may tell without ranking them. A first scan needs
/// the ranks of the successors outside the partition it expands (those
/// inside only say that a move stays in it), a pass those inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// Every successor's.
    All,
    /// Those in this partition.
    Within(PartitionId),
    /// Those in any other partition.
    Outside(PartitionId),
}

impl Ranking {
    /// Whether a successor in partition `p` is to be ranked.
    #[inline]
    pub fn wants(self, p: PartitionId) -> bool {
        match self {
            Ranking::All => true,
            Ranking::Within(q) => p == q,
            Ranking::Outside(q) => p != q,
        }
    }
}

/// [`Game::visit_successor_ranks`] through [`Game::successors`] and
/// [`Game::rank`], one successor at a time (what a game's override must
/// match).
pub fn rank_each_successor<G: Game + ?Sized>(
    game: &G,
    pos: &G::Position,
    scratch: &mut Vec<(G::Move, G::Position)>,
    ranking: Ranking,
    visit: &mut dyn FnMut(PartitionId, Option<Rank>) -> bool,
) {
    scratch.clear();
    game.successors(pos, scratch);
    for (_, s) in scratch.iter() {
        let (p, r) = game.rank(s);
        if !visit(p, ranking.wants(p).then_some(r)) {
            return;
        }
    }
}

/// For tests: checks that the successors of the ongoing positions at about
/// `samples` indices of partition `p` lie in `p` or in a partition
/// `game.successor_partitions(p)` lists; returns the list and how many of
/// them lay outside `p`.
#[cfg(test)]
pub(crate) fn check_successor_partitions<G: Game>(
    game: &G,
    p: PartitionId,
    samples: u64,
) -> (Vec<PartitionId>, usize) {
    let listed = game
        .successor_partitions(p)
        .expect("the game lists successor partitions");
    let mut away = 0;
    for q in sampled_successor_partitions(game, p, samples) {
        assert!(
            q == p || listed.contains(&q),
            "{} -> {} not in {listed:?}",
            game.partition_name(p),
            game.partition_name(q)
        );
        away += usize::from(q != p);
    }
    (listed, away)
}

/// For tests: the partition of each successor of the ongoing positions at
/// about `samples` indices of partition `p`, spread evenly over them.
#[cfg(test)]
pub(crate) fn sampled_successor_partitions<G: Game>(
    game: &G,
    p: PartitionId,
    samples: u64,
) -> Vec<PartitionId> {
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    let size = game.partition_size(p);
    for r in (0..size).step_by((size / samples).max(1) as usize) {
        let Some(pos) = game.unrank(p, Rank(r)) else {
            continue;
        };
        if game.status(&pos) != Status::Ongoing {
            continue;
        }
        scratch.clear();
        game.successors(&pos, &mut scratch);
        out.extend(scratch.iter().map(|(_, s)| game.rank(s).0));
    }
    out
}

/// A game whose state space tbforge can hash, solve and probe.
///
/// Contract the solvers rely on (and tests check for every game):
/// - `unrank(p, r)` for `r < partition_size(p)` gives the position with that
///   index, or `None` when the index names no legal position; `rank` of that
///   position gives `(p, r)` back.
/// - Every successor of a position in partition `p` lies in `p` itself or in a
///   partition listed before `p` in [`Game::partitions`].
/// - `successors` lists each legal move once, in a deterministic order; the
///   successor's value is read from the side to move *there* (two-player games
///   alternate, so the solver negates).
pub trait Game: Send + Sync + 'static {
    /// A position in its natural, unpacked form.
    type Position: Clone + Debug + Send + Sync + PartialEq;
    /// A move, for display and for probe's best moves.
    type Move: Clone + Debug + Send + Sync;

    /// Name, canonical parameters and kind.
    fn info(&self) -> GameInfo;

    /// Every partition, in solving order: successors lie in the same or an earlier one.
    fn partitions(&self) -> Vec<PartitionId>;

    /// Number of indices in partition `p` (legal or not).
    fn partition_size(&self, p: PartitionId) -> u64;

    /// A stable, file-name-safe name for partition `p` (`ply07`, `w5b4-w`).
    fn partition_name(&self, p: PartitionId) -> String;

    /// The position with index `r` in partition `p`; `None` if the index is illegal.
    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Self::Position>;

    /// The partition and index of a position.
    fn rank(&self, pos: &Self::Position) -> (PartitionId, Rank);

    /// Terminal status, evaluated before any move.
    fn status(&self, pos: &Self::Position) -> Status;

    /// Appends every legal move and its resulting position to `out` (which the
    /// caller clears). Called only for [`Status::Ongoing`] positions.
    fn successors(&self, pos: &Self::Position, out: &mut Vec<(Self::Move, Self::Position)>);

    /// Calls `visit` with the partition of each successor of `pos` in
    /// [`Game::successors`]' order, and its index where `ranking` wants it
    /// (`None` exactly where it does not), until it returns `false`;
    /// `scratch` is room for the successors. What an expansion needs of
    /// them: a game whose successors share work in ranking, or whose
    /// successors' partitions are known without ranking them, overrides it
    /// (in Morris all but captures keep the new side to move's board, and
    /// the pieces tell the partition). Called only for [`Status::Ongoing`]
    /// positions.
    fn visit_successor_ranks(
        &self,
        pos: &Self::Position,
        scratch: &mut Vec<(Self::Move, Self::Position)>,
        ranking: Ranking,
        visit: &mut dyn FnMut(PartitionId, Option<Rank>) -> bool,
    ) {
        rank_each_successor(self, pos, scratch, ranking, visit);
    }

    /// The partitions other than `p` that successors of `p`'s positions may
    /// lie in, where the game can list them without a walk (a superset
    /// will do); `None` (the default): any partition before `p`. A streamed
    /// first scan holds these partitions' values in memory where they fit,
    /// and answers its requests as they come back; a successor found
    /// outside them is a broken contract, reported as such.
    fn successor_partitions(&self, p: PartitionId) -> Option<Vec<PartitionId>> {
        let _ = p;
        None
    }

    /// Where play starts, when the game has a start position: forward search
    /// from it gives the reachable counts the manifest reports.
    fn start(&self) -> Option<Self::Position>;

    /// Parses a position in the game's notation.
    fn parse_position(&self, text: &str) -> Result<Self::Position>;

    /// Writes a position in the game's notation (`parse_position` reads it back).
    fn format_position(&self, pos: &Self::Position) -> String;

    /// Writes a move in the game's notation.
    fn format_move(&self, pos: &Self::Position, mv: &Self::Move) -> String;

    /// How many positions each index of partition `p` stands for: the
    /// orbit sizes of a symmetry-class index ([`Weights`]); one each by default.
    fn weights(&self, p: PartitionId) -> Weights {
        let _ = p;
        Weights::one()
    }

    /// The group partition `p` is counted in by `tbforge info`'s table of
    /// groups ("3 pieces"), where the literature counts a game's positions
    /// by such groups; `None` (the default): no such table.
    fn partition_group(&self, p: PartitionId) -> Option<String> {
        let _ = p;
        None
    }

    /// The two players' names (`["fox", "geese"]`) where the game can say
    /// which of them moves at each index ([`Game::player_to_move`]):
    /// `tbforge info --players` then counts the positions each player wins,
    /// whoever moves, as the literature counts an asymmetric game's results.
    /// `None` (the default): the game does not say.
    fn players(&self) -> Option<[&'static str; 2]> {
        None
    }

    /// Which of [`Game::players`] (0 or 1) moves at index `r` of partition
    /// `p`; asked only where `players` names them.
    fn player_to_move(&self, p: PartitionId, r: Rank) -> usize {
        let _ = (p, r);
        0
    }

    /// Where a game played from scratch begins, for search and perft
    /// (`tbforge analyse`, `tbforge play`): by default [`Game::start`]; a
    /// game of endgame databases, whose build has no start, names the
    /// opening position of the whole game here.
    fn initial(&self) -> Option<Self::Position> {
        self.start()
    }

    /// A heuristic score of an ongoing position for the side to move, for
    /// a search that stops before the game ends (`tbforge analyse`): higher
    /// is better, 0 even, scaled so that 100 is about one piece. The
    /// default knows nothing (0).
    fn evaluate(&self, pos: &Self::Position) -> i32 {
        let _ = pos;
        0
    }

    /// A 64-bit key of a position for a search's transposition table:
    /// equal positions have equal keys, different ones differ but for
    /// rare collisions. By default from [`Game::rank`], which is unique
    /// wherever the game's index covers every position; a game whose
    /// positions may lie outside its partitions (databases of a few pieces
    /// searched from more) must say otherwise.
    fn search_key(&self, pos: &Self::Position) -> u64 {
        let (p, r) = self.rank(pos);
        crate::hash::mix64((u64::from(p.0) << 48) ^ r.0)
    }

    /// Whether an engine file's prober follows the move `mv` from `pos` to
    /// `succ` (FORMAT.md, "Engine files"): a position whose value one of the
    /// followed moves gives is stored as don't-care, and the prober
    /// re-derives it from them. Followed moves must be cheap to resolve and
    /// few: those that leave for a smaller game (captures: one piece fewer,
    /// so the recursion ends in few steps). Moves to a terminal successor are
    /// always followed (its status is its value, no probe needed), and moves
    /// that stay in `pos`'s partition never are, whatever this says, so that
    /// the recursion goes down the partitions and ends. None by default.
    fn resolves(&self, pos: &Self::Position, mv: &Self::Move, succ: &Self::Position) -> bool {
        let _ = (pos, mv, succ);
        false
    }

    /// The positions with a move to `pos` (any order, duplicates allowed),
    /// where the game can say: `true` after pushing them to `out`, `false`
    /// (the default) where the game has no move generator backwards. Only
    /// the positions before a move matter, not whether they are reachable;
    /// a position with a move to `pos` that is terminal itself (so that the
    /// move is never played) may be listed: the callers check.
    fn predecessors(&self, pos: &Self::Position, out: &mut Vec<Self::Position>) -> bool {
        let _ = (pos, out);
        false
    }

    /// The positions of `pos`'s own partition with a move to `pos` (any
    /// order, duplicates allowed, unreachable and terminal ones too: the
    /// callers check), where the game can say: `true` after pushing them to
    /// `out`, `false` (the default) where it cannot. Unlike
    /// [`Game::predecessors`], only moves that stay in the partition, which
    /// is all a retrograde pass inside one partition needs: the external
    /// pipeline expands only the predecessors of the positions the pass
    /// before decided (a pass decides nothing else), where the whole
    /// partition's pending positions otherwise.
    fn predecessors_within(&self, pos: &Self::Position, out: &mut Vec<Self::Position>) -> bool {
        let _ = (pos, out);
        false
    }

    /// Calls `visit` with the partition and index of each of
    /// [`Game::predecessors_within`]' positions, in its order; `false` (and
    /// no call) where the game cannot list them. `scratch` is room for the
    /// predecessors. What a pass's marking needs of them: a game whose
    /// predecessors share work in ranking overrides it (in Morris they all
    /// keep the side to move's board as the next side's opponent).
    fn visit_predecessor_ranks_within(
        &self,
        pos: &Self::Position,
        scratch: &mut Vec<Self::Position>,
        visit: &mut dyn FnMut(PartitionId, Rank),
    ) -> bool {
        scratch.clear();
        if !self.predecessors_within(pos, scratch) {
            return false;
        }
        for q in scratch.iter() {
            let (p, r) = self.rank(q);
            visit(p, r);
        }
        true
    }

    /// Whether engine files leave out which positions of partition `p` are
    /// reached (FORMAT.md, "Engine files"): the prober then finds it from
    /// [`Game::predecessors`] (a position is reached when it is the start
    /// or one of its ongoing predecessors is), so a position of `p` whose
    /// value its followed moves give stores nothing at all. Only for a
    /// [`Forward::Layer`] partition whose predecessors all lie in
    /// partitions that keep theirs (so that one step back decides), in a
    /// game whose `predecessors` are complete. None by default.
    fn derives_reach(&self, p: PartitionId) -> bool {
        let _ = p;
        false
    }

    /// How forward search treats partition `p` ([`Forward`]); by default
    /// the general BFS, with every index solved.
    fn forward(&self, p: PartitionId) -> Forward {
        let _ = p;
        Forward::Expand
    }

    /// Whether partition `p` of a build of `other` (this game under other
    /// parameters, or the same), where it has the same name and size, holds
    /// exactly the values this game gives `p`, so that a build may copy it
    /// instead of solving it (`tbforge build --from DIR`). No by default.
    fn shares_partition_with(&self, other: &GameInfo, p: PartitionId) -> bool {
        let _ = (other, p);
        false
    }

    /// This game's partition kernels on `device`, if it has any there
    /// (`Ok(None)`: the generic solvers do all the work). An error means the
    /// device could not take the kernels (compilation, loading).
    #[cfg(feature = "build")]
    fn kernels(&self, device: &Device) -> Result<Option<std::sync::Arc<dyn PartitionKernels>>> {
        let _ = device;
        Ok(None)
    }

    /// This game's full-width frontier search on `device` ([`FrontierSearch`]:
    /// `tbforge analyse --gpu`), if it has one there. None by default.
    #[cfg(feature = "build")]
    #[allow(clippy::type_complexity)]
    fn frontier(&self, device: &Device) -> Result<Option<Box<dyn FrontierSearch<Self::Position>>>> {
        let _ = device;
        Ok(None)
    }
}
