//! `tbforge games`: the catalogue, as text or one JSON object.

use serde_json::json;
use std::process::ExitCode;
use tbforge::registry::{catalog, DEFAULT_SET};

pub fn games(json: bool) -> anyhow::Result<ExitCode> {
    let games = catalog();
    if json {
        println!("{}", serde_json::to_string(&json!({ "games": games }))?);
        return Ok(ExitCode::SUCCESS);
    }
    for g in games {
        let kind = match g.kind {
            tbforge::GameKind::TwoPlayer => "two-player",
            tbforge::GameKind::Puzzle => "puzzle",
        };
        let default = DEFAULT_SET
            .iter()
            .find(|(name, _)| *name == g.name)
            .map(|(_, p)| match p.len() {
                0 => "  [default set]".to_string(),
                _ => format!("  [default set: {}]", p.join(" ")),
            })
            .unwrap_or_default();
        println!("{}  ({kind}){default}", g.name);
        println!("    {}", g.summary);
        for p in g.params {
            println!(
                "    --param {}=<{}>  (default {}) {}",
                p.key, p.key, p.default, p.help
            );
        }
        println!("    position: {}", g.notation);
        println!("    example:  {}", g.example);
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
