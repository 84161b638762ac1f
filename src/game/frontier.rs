//! Full-width game-tree search of a fixed depth on a device: the tree
//! expanded breadth-first, level by level, its last level evaluated in one
//! pass, and negamax backed up level by level (the checkers player of
//! "Checkers board-game AI on the GPU" does this on a GPU). A game that
//! has it returns it from [`Game::frontier`](super::Game::frontier); the
//! command line (`tbforge analyse --gpu`, `tbforge bench search`) compares
//! it with the alpha-beta search, which must find the same value at the
//! same depth.
//!
//! Scores are the alpha-beta search's, so that the two agree bit for bit:
//! the game's evaluation at the last level, for the side to move; a
//! position without a move lost at `-(win - ply)`; a position that repeats
//! one of its line a draw (0); every other node the best of its children
//! for its side (`max` of `-child`).

use crate::Result;

/// A game's frontier search on one device (the GPU, or its CPU twin on all
/// cores).
pub trait FrontierSearch<P>: Send + Sync {
    /// What runs it, for reports ("cuda: NVIDIA H100", "cpu twin").
    fn name(&self) -> String;

    /// The negamax value of each of `roots` searched `depth >= 1` plies
    /// full width, `win` being the score of a win at the root (the search's
    /// [`WIN`](crate::search::WIN)), with the first root's best line.
    fn search(&self, roots: &[P], depth: u32, win: i32) -> Result<FrontierReport>;

    /// [`search`](Self::search) of one root, keeping every stored level's
    /// positions and values: where two devices disagree, comparing them
    /// level by level from the leaves up finds the first step that parted
    /// (`tbforge bench search` does). The whole stored tree comes back to
    /// the host, so this is for small depths.
    fn search_levels(
        &self,
        root: &P,
        depth: u32,
        win: i32,
    ) -> Result<(FrontierReport, FrontierLevels<P>)>;
}

/// Every stored level of one root's search ([`FrontierSearch::search_levels`]):
/// `levels[l][i]` is node `i` of level `l` (the root's level first, the last
/// stored level, `depth - 1`, last), its position and its value.
pub type FrontierLevels<P> = Vec<Vec<(P, i32)>>;

/// What [`FrontierSearch::search`] found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FrontierReport {
    /// Each root's value.
    pub values: Vec<i32>,
    /// The first root's best line, as indices into the successors of each
    /// position on it in [`Game::successors`](super::Game::successors)'
    /// order (the first best move each time): at most `depth` moves.
    pub line: Vec<u32>,
    /// How many of the first root's moves reach its value (1: the best
    /// move is unique).
    pub best_moves: u32,
    /// Nodes of each level, the roots' first and the evaluated leaves'
    /// last (`depth + 1` entries). The last equals perft(`depth`) of the
    /// roots where no line repeats a position (a repetition is not
    /// expanded: the search scores it a draw).
    pub levels: Vec<u64>,
    /// Wall-clock seconds of the whole search, copies included.
    pub seconds: f64,
    /// Seconds of the pass that evaluates the last level.
    pub leaf_seconds: f64,
}

impl FrontierReport {
    /// Leaves evaluated (the last level).
    pub fn leaves(&self) -> u64 {
        self.levels.last().copied().unwrap_or(0)
    }

    /// Every node of the tree, roots and leaves included.
    pub fn nodes(&self) -> u64 {
        self.levels.iter().sum()
    }
}
