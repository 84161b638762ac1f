//! Parameter types every game uses: how `--param`s are read, checked and
//! documented. They sit below the games so that a game needs nothing of the
//! registry that lists it.

use super::{GameKind, Params};
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
