//! Names to games: the catalogue `tbforge games` prints and the one place a
//! name and `--param`s become a concrete [`Game`]. It sits above the games
//! (each game knows nothing of it); adding a game adds one line to each list
//! here.

use crate::format::InfoReport;
use crate::game::{self, Forward, Game, GameDescriptor};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// A concrete game behind a name; [`AnyGame::visit`] hands it to generic code.
#[derive(Clone, Debug)]
pub enum AnyGame {
    /// Tic-tac-toe.
    TicTacToe(game::tictactoe::TicTacToe),
    /// Nim.
    Nim(game::nim::Nim),
    /// Connect Four.
    Connect4(game::connect4::Connect4),
    /// Nine Men's Morris, phases II and III.
    Morris(game::morris::Morris),
    /// Peg solitaire, English board.
    PegSolitaire(game::pegsolitaire::PegSolitaire),
    /// Fore and Aft.
    ForeAndAft(game::foreandaft::ForeAndAft),
    /// Frogs-and-Toads: two overlapping squares of any side.
    FrogsAndToads(game::frogsandtoads::FrogsAndToads),
    /// Fox-and-Geese on the cross.
    FoxAndGeese(game::foxandgeese::FoxAndGeese),
    /// Pancake problem (plain or burnt).
    Pancake(game::pancake::Pancake),
    /// (n, k) Top-Spin.
    TopSpin(game::topspin::TopSpin),
    /// Sliding-tile puzzle.
    SlidingTile(game::slidingtile::SlidingTile),
    /// Checkers (English draughts) endgame databases.
    Checkers(game::checkers::Checkers),
}

/// Generic code run on whichever game an [`AnyGame`] holds.
pub trait GameVisitor {
    /// What the visit returns.
    type Output;
    /// Runs on the concrete game.
    fn visit<G: Game>(self, game: &G) -> Self::Output;
}

impl AnyGame {
    /// Runs `visitor` on the concrete game.
    pub fn visit<V: GameVisitor>(&self, visitor: V) -> V::Output {
        match self {
            AnyGame::TicTacToe(g) => visitor.visit(g),
            AnyGame::Nim(g) => visitor.visit(g),
            AnyGame::Connect4(g) => visitor.visit(g),
            AnyGame::Morris(g) => visitor.visit(g),
            AnyGame::PegSolitaire(g) => visitor.visit(g),
            AnyGame::ForeAndAft(g) => visitor.visit(g),
            AnyGame::FrogsAndToads(g) => visitor.visit(g),
            AnyGame::FoxAndGeese(g) => visitor.visit(g),
            AnyGame::Pancake(g) => visitor.visit(g),
            AnyGame::TopSpin(g) => visitor.visit(g),
            AnyGame::SlidingTile(g) => visitor.visit(g),
            AnyGame::Checkers(g) => visitor.visit(g),
        }
    }

    /// The game's identity.
    pub fn info(&self) -> game::GameInfo {
        struct Info;
        impl GameVisitor for Info {
            type Output = game::GameInfo;
            fn visit<G: Game>(self, game: &G) -> game::GameInfo {
                game.info()
            }
        }
        self.visit(Info)
    }
}

/// What `tbforge build` builds when given no game, as (name, `--param`s): a quick, meaningful demo
/// (seconds to a minute on a laptop) with a published number behind each.
pub const DEFAULT_SET: &[(&str, &[&str])] = &[
    ("tictactoe", &[]),
    ("nim", &["heaps=1,3,5,7"]),
    ("connect4", &["width=5", "height=4"]),
    ("morris", &["max=3"]),
    ("foreandaft", &[]),
];

/// Every game tbforge knows, in the order `tbforge games` lists them.
pub fn catalog() -> Vec<GameDescriptor> {
    vec![
        game::tictactoe::DESCRIPTOR,
        game::nim::DESCRIPTOR,
        game::connect4::DESCRIPTOR,
        game::morris::DESCRIPTOR,
        game::pegsolitaire::DESCRIPTOR,
        game::foreandaft::DESCRIPTOR,
        game::frogsandtoads::DESCRIPTOR,
        game::foxandgeese::DESCRIPTOR,
        game::pancake::DESCRIPTOR,
        game::topspin::DESCRIPTOR,
        game::slidingtile::DESCRIPTOR,
        game::checkers::DESCRIPTOR,
    ]
}

/// The game called `name` with the given `--param`s (unknown keys are an error).
pub fn open_game(name: &str, params: &BTreeMap<String, String>) -> Result<AnyGame> {
    match name {
        "tictactoe" => Ok(AnyGame::TicTacToe(game::tictactoe::TicTacToe::from_params(
            params,
        )?)),
        "nim" => Ok(AnyGame::Nim(game::nim::Nim::from_params(params)?)),
        "connect4" => Ok(AnyGame::Connect4(game::connect4::Connect4::from_params(
            params,
        )?)),
        "morris" => Ok(AnyGame::Morris(game::morris::Morris::from_params(params)?)),
        "pegsolitaire" => Ok(AnyGame::PegSolitaire(
            game::pegsolitaire::PegSolitaire::from_params(params)?,
        )),
        "foreandaft" => Ok(AnyGame::ForeAndAft(
            game::foreandaft::ForeAndAft::from_params(params)?,
        )),
        "frogsandtoads" => Ok(AnyGame::FrogsAndToads(
            game::frogsandtoads::FrogsAndToads::from_params(params)?,
        )),
        "foxandgeese" => Ok(AnyGame::FoxAndGeese(
            game::foxandgeese::FoxAndGeese::from_params(params)?,
        )),
        "pancake" => Ok(AnyGame::Pancake(game::pancake::Pancake::from_params(
            params,
        )?)),
        "topspin" => Ok(AnyGame::TopSpin(game::topspin::TopSpin::from_params(
            params,
        )?)),
        "slidingtile" => Ok(AnyGame::SlidingTile(
            game::slidingtile::SlidingTile::from_params(params)?,
        )),
        "checkers" => Ok(AnyGame::Checkers(game::checkers::Checkers::from_params(
            params,
        )?)),
        _ => Err(Error::UnknownGame(name.to_string())),
    }
}

/// Adds to a manifest's summary what only its game knows: the table by
/// depth, where the game has layered partitions, and the table by the
/// game's groups of partitions, where it has them (`tbforge info`, the
/// explorer's statistics). A game this tbforge cannot open is left without
/// them: the summary reads the manifest alone, and `verify` is what says
/// what is wrong.
pub fn annotate_info(report: &mut InfoReport) {
    let Ok(game) = open_game(&report.game, &report.params) else {
        return;
    };
    struct Annotate<'a>(&'a mut InfoReport);
    impl GameVisitor for Annotate<'_> {
        type Output = ();
        fn visit<G: Game>(self, game: &G) {
            let layer_of = |p| match game.forward(p) {
                Forward::Layer(d) => Some(d),
                _ => None,
            };
            if game.partitions().into_iter().any(|p| layer_of(p).is_some()) {
                self.0.set_depths(layer_of);
            }
            self.0.set_groups(|p| game.partition_group(p));
        }
    }
    game.visit(Annotate(report));
}

/// Every game's CUDA kernel files, as (file name, source): what CI compiles
/// with NVRTC, without a GPU.
#[cfg(feature = "cuda")]
pub fn kernel_sources() -> Vec<(&'static str, &'static str)> {
    [
        game::morris::cuda::KERNEL_SOURCES,
        game::connect4::cuda::KERNEL_SOURCES,
        game::checkers::cuda::KERNEL_SOURCES,
        game::permpuzzle::cuda::KERNEL_SOURCES,
        game::foxandgeese::cuda::KERNEL_SOURCES,
        game::frogsandtoads::cuda::KERNEL_SOURCES,
        game::pegsolitaire::cuda::KERNEL_SOURCES,
    ]
    .concat()
}

/// The BDD encoding of the game called `name` (for `tbforge bdd-count`),
/// for the games that have one.
#[cfg(feature = "bdd")]
pub fn open_symbolic(
    name: &str,
    params: &BTreeMap<String, String>,
) -> Result<Box<dyn crate::bdd::SymbolicSearch>> {
    let known = symbolic_games().join(", ");
    match open_game(name, params)? {
        AnyGame::Connect4(g) => Ok(Box::new(g.symbolic())),
        _ => Err(Error::NotAvailable(format!(
            "{name} has no BDD encoding yet; symbolic search knows: {known}"
        ))),
    }
}

/// Generic code run on a game and its BDD encoding, typed (for
/// `tbforge bdd-solve`, which ranks positions of the game through the
/// encoding).
#[cfg(feature = "bdd")]
pub trait SymbolicVisitor {
    /// What the visit returns.
    type Output;
    /// Runs on the concrete game and its encoding.
    fn visit<G, E>(self, game: &G, encoding: &E) -> Self::Output
    where
        G: Game + Sync,
        G::Position: Send,
        E: crate::bdd::SymbolicSearch + crate::bdd::SymbolicEncoding<State = G::Position> + Sync;
}

/// Runs `visitor` on the game called `name` and its BDD encoding, for the
/// games that have one.
#[cfg(feature = "bdd")]
pub fn visit_symbolic<V: SymbolicVisitor>(
    name: &str,
    params: &BTreeMap<String, String>,
    visitor: V,
) -> Result<V::Output> {
    let known = symbolic_games().join(", ");
    match open_game(name, params)? {
        AnyGame::Connect4(g) => Ok(visitor.visit(&g, &g.symbolic())),
        _ => Err(Error::NotAvailable(format!(
            "{name} has no BDD encoding yet; symbolic search knows: {known}"
        ))),
    }
}

/// The games [`open_symbolic`] opens.
#[cfg(feature = "bdd")]
pub fn symbolic_games() -> Vec<&'static str> {
    vec![game::connect4::DESCRIPTOR.name]
}
