//! Retrograde analysis over BDD-indexed layers: the chapter's hybrid of
//! symbolic and explicit search (Edelkamp, "BDDs for Minimal Perfect
//! Hashing", Fig. 0.7 and 0.8). A symbolic BFS gives each layer as a BDD;
//! the BDD's rank ([`BddRank`]) indexes a byte array of exactly the layer's
//! states, and the layers are solved from the last to the first, each
//! position from its successors' values one layer on.
//!
//! Values are the same bytes the partition solver writes for the same
//! positions (the rules of [`crate::value`]); tests compare them.

use super::Progress;
use crate::bdd::{BddRank, SymbolicEncoding};
use crate::game::{Game, Status};
use crate::value::rules::{at, Combine};
use crate::value::{Rank, Value};
use crate::{Error, Result};
use rayon::prelude::*;

/// Solves every layer: `result[d][r]` is the value byte of the state of rank
/// `r` in `layers[d]`, for the side to move. Every move of a layer-`d`
/// state must lead into layer `d + 1`.
pub fn solve_bdd_layers<G, E>(
    game: &G,
    encoding: &E,
    layers: &[BddRank],
    progress: &Progress,
) -> Result<Vec<Vec<u8>>>
where
    G: Game,
    E: SymbolicEncoding<State = G::Position>,
{
    let kind = game.info().kind;
    let contract = |message: String| Error::GameContract {
        game: game.info().id.to_string(),
        message,
    };
    let mut out: Vec<Vec<u8>> = vec![Vec::new(); layers.len()];
    for d in (0..layers.len()).rev() {
        let here = &layers[d];
        progress.phase(&format!("bdd layer {d}"), here.size());
        let next = layers.get(d + 1).zip(out.get(d + 1));
        let values: std::result::Result<Vec<u8>, String> = (0..here.size())
            .into_par_iter()
            .map_init(Vec::new, |succ, i| {
                let a = here.unrank(Rank(i));
                let pos = encoding
                    .decode(&a)
                    .ok_or_else(|| format!("layer {d} holds an assignment that is no state"))?;
                match game.status(&pos) {
                    Status::Lost | Status::Goal => return Ok(at(0).to_byte()),
                    Status::Drawn => return Ok(Value::DRAW.to_byte()),
                    Status::Ongoing => {}
                }
                succ.clear();
                game.successors(&pos, succ);
                if succ.is_empty() {
                    return Err(format!(
                        "position {} has no moves but is not over",
                        game.format_position(&pos)
                    ));
                }
                let Some((rank, values)) = next else {
                    return Err(format!(
                        "position {} in the last layer has moves",
                        game.format_position(&pos)
                    ));
                };
                let mut acc = Combine::new(kind);
                for (_, s) in succ.iter() {
                    let r = rank.checked_rank(&encoding.encode(s)).map_err(|_| {
                        format!(
                            "a move from {} leaves layer {}",
                            game.format_position(&pos),
                            d + 1
                        )
                    })?;
                    acc.add(Value::from_byte(values[r.0 as usize]));
                }
                let v = acc.finish().ok_or_else(|| {
                    format!(
                        "position {} needs a distance beyond {}",
                        game.format_position(&pos),
                        Value::MAX_DISTANCE
                    )
                })?;
                Ok(v.to_byte())
            })
            .collect();
        out[d] = values.map_err(contract)?;
        progress.inc(here.size());
    }
    progress.finish();
    Ok(out)
}
