//! Names to games: the catalogue `tbforge games` prints and the one place a
//! name and `--param`s become a concrete [`Game`].

use super::{Game, GameKind, Params};
use crate::{Error, Result};
use std::collections::BTreeMap;

/// One parameter of a game, for `tbforge games`.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ParamDoc {
    /// The `--param` key.
    pub key: &'static str,
    /// Its default value, as text.
    pub default: &'static str,
    /// What it means and which values are accepted.
    pub help: &'static str,
}

/// What `tbforge games` says about a game.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct GameDescriptor {
    /// Registry name, as given to `tbforge build`.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Two-player or puzzle.
    pub kind: GameKind,
    /// Its parameters.
    pub params: &'static [ParamDoc],
    /// How positions are written for `tbforge probe`.
    pub notation: &'static str,
    /// A position in that notation.
    pub example: &'static str,
}

/// A concrete game behind a name; [`AnyGame::visit`] hands it to generic code.
#[derive(Clone, Debug)]
pub enum AnyGame {
    /// Tic-tac-toe.
    TicTacToe(super::tictactoe::TicTacToe),
    /// Nim.
    Nim(super::nim::Nim),
    /// Connect Four.
    Connect4(super::connect4::Connect4),
    /// Nine Men's Morris, phases II and III.
    Morris(super::morris::Morris),
    /// Peg solitaire, English board.
    PegSolitaire(super::pegsolitaire::PegSolitaire),
    /// Fore and Aft.
    ForeAndAft(super::foreandaft::ForeAndAft),
    /// Pancake problem (plain or burnt).
    Pancake(super::pancake::Pancake),
    /// (n, k) Top-Spin.
    TopSpin(super::topspin::TopSpin),
    /// Sliding-tile puzzle.
    SlidingTile(super::slidingtile::SlidingTile),
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
            AnyGame::Pancake(g) => visitor.visit(g),
            AnyGame::TopSpin(g) => visitor.visit(g),
            AnyGame::SlidingTile(g) => visitor.visit(g),
        }
    }

    /// The game's identity.
    pub fn info(&self) -> super::GameInfo {
        struct Info;
        impl GameVisitor for Info {
            type Output = super::GameInfo;
            fn visit<G: Game>(self, game: &G) -> super::GameInfo {
                game.info()
            }
        }
        self.visit(Info)
    }
}

/// Every game tbforge knows, in the order `tbforge games` lists them.
pub fn catalog() -> Vec<GameDescriptor> {
    vec![
        super::tictactoe::DESCRIPTOR,
        super::nim::DESCRIPTOR,
        super::connect4::DESCRIPTOR,
        super::morris::DESCRIPTOR,
        super::pegsolitaire::DESCRIPTOR,
        super::foreandaft::DESCRIPTOR,
        super::pancake::DESCRIPTOR,
        super::topspin::DESCRIPTOR,
        super::slidingtile::DESCRIPTOR,
    ]
}

/// The game called `name` with the given `--param`s (unknown keys are an error).
pub fn open_game(name: &str, params: &BTreeMap<String, String>) -> Result<AnyGame> {
    match name {
        "tictactoe" => Ok(AnyGame::TicTacToe(
            super::tictactoe::TicTacToe::from_params(params)?,
        )),
        "nim" => Ok(AnyGame::Nim(super::nim::Nim::from_params(params)?)),
        "connect4" => Ok(AnyGame::Connect4(super::connect4::Connect4::from_params(
            params,
        )?)),
        "morris" => Ok(AnyGame::Morris(super::morris::Morris::from_params(params)?)),
        "pegsolitaire" => Ok(AnyGame::PegSolitaire(
            super::pegsolitaire::PegSolitaire::from_params(params)?,
        )),
        "foreandaft" => Ok(AnyGame::ForeAndAft(
            super::foreandaft::ForeAndAft::from_params(params)?,
        )),
        "pancake" => Ok(AnyGame::Pancake(super::pancake::Pancake::from_params(
            params,
        )?)),
        "topspin" => Ok(AnyGame::TopSpin(super::topspin::TopSpin::from_params(
            params,
        )?)),
        "slidingtile" => Ok(AnyGame::SlidingTile(
            super::slidingtile::SlidingTile::from_params(params)?,
        )),
        _ => Err(Error::UnknownGame(name.to_string())),
    }
}

/// Reads a game's `--param`s with defaults and ranges, then rejects leftovers.
///
/// ```ignore
/// let mut p = ParamReader::new("connect4", raw);
/// let width = p.uint("width", 7, 1..=9)?;
/// p.finish()?;
/// ```
pub struct ParamReader<'a> {
    game: &'static str,
    raw: &'a BTreeMap<String, String>,
    seen: Vec<&'static str>,
}

impl<'a> ParamReader<'a> {
    /// Starts reading `raw` for `game`.
    pub fn new(game: &'static str, raw: &'a BTreeMap<String, String>) -> Self {
        ParamReader {
            game,
            raw,
            seen: Vec::new(),
        }
    }

    /// The error for a bad value of this game's parameters.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::BadParam {
            game: self.game.to_string(),
            message: message.into(),
        }
    }

    /// The raw text of `key`, if given.
    pub fn text(&mut self, key: &'static str) -> Option<&'a str> {
        self.seen.push(key);
        self.raw.get(key).map(String::as_str)
    }

    /// An unsigned integer in `range`, `default` when absent.
    pub fn uint(
        &mut self,
        key: &'static str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<u64> {
        let value = match self.text(key) {
            None => default,
            Some(t) => t.trim().parse::<u64>().map_err(|_| {
                self.error(format!(
                    "`{key}={t}` is not a whole number; use e.g. `{key}={default}`"
                ))
            })?,
        };
        if !range.contains(&value) {
            return Err(self.error(format!(
                "`{key}={value}` is out of range; accepted: {}..={}",
                range.start(),
                range.end()
            )));
        }
        Ok(value)
    }

    /// A comma-separated list of unsigned integers, each in `range`.
    pub fn uint_list(
        &mut self,
        key: &'static str,
        default: &[u64],
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<Vec<u64>> {
        let Some(t) = self.text(key) else {
            return Ok(default.to_vec());
        };
        let mut out = Vec::new();
        for part in t.split(',') {
            let v: u64 = part.trim().parse().map_err(|_| {
                self.error(format!(
                    "`{key}={t}`: `{part}` is not a whole number; write e.g. `{key}=1,3,5,7`"
                ))
            })?;
            if !range.contains(&v) {
                return Err(self.error(format!(
                    "`{key}={t}`: {v} is out of range; accepted: {}..={}",
                    range.start(),
                    range.end()
                )));
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Rejects any key that was not read.
    pub fn finish(self) -> Result<()> {
        if let Some(k) = self.raw.keys().find(|k| !self.seen.contains(&k.as_str())) {
            let known = if self.seen.is_empty() {
                "it takes no parameters".to_string()
            } else {
                format!("known: {}", self.seen.join(", "))
            };
            return Err(Error::BadParam {
                game: self.game.to_string(),
                message: format!("unknown parameter `{k}` ({known})"),
            });
        }
        Ok(())
    }
}

/// Canonical parameters from key/value pairs.
pub fn params<const N: usize>(pairs: [(&str, String); N]) -> Params {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
