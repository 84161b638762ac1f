//! `tbforge info`: the manifest, summarised.

use std::path::Path;
use std::process::ExitCode;
use tbforge::format::{self, InfoReport};
use tbforge::registry::{open_game, GameVisitor};
use tbforge::{Forward, Game};

pub fn info(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut report = format::info(dir)?;
    add_depths(&mut report);
    add_groups(&mut report);
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_info_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The table by depth, where the manifest's game has layered partitions.
/// A game this tbforge cannot open is left without it: info reads the
/// manifest alone, and `verify` is the command that says what is wrong.
fn add_depths(report: &mut InfoReport) {
    let Ok(game) = open_game(&report.game, &report.params) else {
        return;
    };
    struct Layers<'a>(&'a mut InfoReport);
    impl GameVisitor for Layers<'_> {
        type Output = ();
        fn visit<G: Game>(self, game: &G) {
            let layer_of = |p| match game.forward(p) {
                Forward::Layer(d) => Some(d),
                _ => None,
            };
            if game.partitions().into_iter().any(|p| layer_of(p).is_some()) {
                self.0.set_depths(layer_of);
            }
        }
    }
    game.visit(Layers(report));
}

/// The table by the game's groups of partitions, where it has them.
fn add_groups(report: &mut InfoReport) {
    let Ok(game) = open_game(&report.game, &report.params) else {
        return;
    };
    struct Groups<'a>(&'a mut InfoReport);
    impl GameVisitor for Groups<'_> {
        type Output = ();
        fn visit<G: Game>(self, game: &G) {
            self.0.set_groups(|p| game.partition_group(p));
        }
    }
    game.visit(Groups(report));
}
