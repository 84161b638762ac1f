//! `tbforge info`: the manifest, summarised.

use anyhow::bail;
use rayon::prelude::*;
use std::path::Path;
use std::process::ExitCode;
use tbforge::format::{self, InfoReport, PlayerRow, PlayerTable, TableFile};
use tbforge::registry::{annotate_info, open_game, GameVisitor};
use tbforge::{Game, Outcome, Rank};

pub fn info(dir: &Path, json: bool, players: bool) -> anyhow::Result<ExitCode> {
    let mut report = format::info(dir)?;
    annotate_info(&mut report);
    if players {
        add_players(dir, &mut report)?;
    }
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_info_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The positions each player wins, read from every file's values.
fn add_players(dir: &Path, report: &mut InfoReport) -> anyhow::Result<()> {
    if report.engine.is_some() {
        bail!(
            "{} holds engine files, whose don't-care values --players cannot count; use the full tablebase",
            dir.display()
        );
    }
    let game = open_game(&report.game, &report.params)?;
    struct Players<'a>(&'a Path, &'a mut InfoReport);
    impl GameVisitor for Players<'_> {
        type Output = anyhow::Result<()>;
        fn visit<G: Game>(self, game: &G) -> anyhow::Result<()> {
            let Players(dir, report) = self;
            let Some(names) = game.players() else {
                bail!(
                    "{} does not name its two players, so --players cannot count their wins",
                    report.game
                );
            };
            let mut rows: Vec<PlayerRow> = Vec::new();
            for f in &report.files {
                let group = game
                    .partition_group(f.partition)
                    .unwrap_or_else(|| f.partition_name.clone());
                let file = TableFile::open_read(&dir.join(&f.name))?;
                let header = file.header().clone();
                let weights = game.weights(f.partition);
                let per_block = (0..header.block_count)
                    .into_par_iter()
                    .map(|block| -> anyhow::Result<PlayerRow> {
                        let raw = file.read_block(block)?;
                        let first = block * u64::from(header.block_positions);
                        let mut row = PlayerRow::default();
                        for i in 0..header.positions_in(block) {
                            let stored = header.encoding.decode(header.kind, file.code_in(&raw, i));
                            let Some(outcome) = stored.outcome else {
                                continue;
                            };
                            let r = Rank(first + i);
                            let w = weights.at(r);
                            let mover = game.player_to_move(f.partition, r).min(1);
                            row.positions += w;
                            match outcome {
                                Outcome::Win => row.won[mover] += w,
                                Outcome::Loss => row.won[1 - mover] += w,
                                Outcome::Draw => row.draws += w,
                            }
                        }
                        Ok(row)
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?;
                let i = match rows.iter().position(|r| r.group == group) {
                    Some(i) => i,
                    None => {
                        rows.push(PlayerRow {
                            group,
                            ..PlayerRow::default()
                        });
                        rows.len() - 1
                    }
                };
                let row = &mut rows[i];
                for b in per_block {
                    row.positions += b.positions;
                    row.won[0] += b.won[0];
                    row.won[1] += b.won[1];
                    row.draws += b.draws;
                }
                row.longest = row.longest.max(f.max_distance);
            }
            report.players = Some(PlayerTable {
                names: names.map(String::from),
                rows,
            });
            Ok(())
        }
    }
    game.visit(Players(dir, report))
}
