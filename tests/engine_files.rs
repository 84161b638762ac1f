//! Engine files (`tbforge export DIR --engine OUT`) against the full
//! tablebases they come from: every index of small games probed in both
//! (outcome, distance, best moves, every move's value, or the same error),
//! the WDL-only variant against the full files' outcomes, corruption and
//! truncation refused with a clear error by probe and verify, and the
//! export's own refusals.
#![cfg(feature = "build")]

use crate::common;

use common::{build_with, open, tbforge};
use std::path::Path;
use tbforge::export::{export_engine, ExportOptions};
use tbforge::format::{read_manifest, ValueEncoding};
use tbforge::probe::Tablebase;
use tbforge::registry::{AnyGame, GameVisitor};
use tbforge::verify::verify_dir;
use tbforge::{Game, Outcome, PartitionId, Rank};

/// Every `step`-th index of every partition (all of them at 1): the full and
/// the engine tablebase must answer alike, each with its probe (best moves
/// and every move's value where `moves`, else the position's value alone).
struct Compare<'a> {
    full: &'a Tablebase,
    engine: &'a Tablebase,
    step: u64,
    moves: bool,
}

impl GameVisitor for Compare<'_> {
    type Output = u64;
    fn visit<G: Game>(self, game: &G) -> u64 {
        let wdl = self.engine.encoding() == ValueEncoding::Wdl2
            && self.full.encoding() == ValueEncoding::Byte;
        let mut compared = 0;
        for p in game.partitions() {
            let size = game.partition_size(p);
            let mut r = 0;
            while r < size {
                let rank = Rank(r);
                r += self.step;
                let Some(pos) = game.unrank(p, rank) else {
                    // Both refuse an illegal index the same way.
                    assert_eq!(
                        illegal(self.full, p, rank),
                        engine_illegal(self.engine, game, p, rank),
                        "{p} {rank}"
                    );
                    continue;
                };
                compared += 1;
                let what = game.format_position(&pos);
                if !self.moves {
                    let a = self.full.probe_position(game, &pos).unwrap();
                    let b = self.engine.probe_position(game, &pos).unwrap();
                    assert_eq!(a.outcome, b.outcome, "{what}");
                    if !wdl {
                        assert_eq!(a.distance, b.distance, "{what}");
                    }
                    continue;
                }
                match (self.full.probe(game, &pos), self.engine.probe(game, &pos)) {
                    (Ok(a), Ok(b)) if wdl => {
                        assert_eq!(a.outcome, b.outcome, "{what}");
                        let outcomes = |m: &[tbforge::probe::MoveValue]| -> Vec<(String, Outcome)> {
                            m.iter().map(|m| (m.mv.clone(), m.outcome)).collect()
                        };
                        assert_eq!(outcomes(&a.moves), outcomes(&b.moves), "{what}");
                    }
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
                    (a, b) => panic!("{what}: full {a:?}, engine {b:?}"),
                }
            }
        }
        compared
    }
}

/// How a full tablebase answers an illegal index.
fn illegal(tb: &Tablebase, p: PartitionId, r: Rank) -> bool {
    tb.probe_stored(p, r).unwrap().is_illegal()
}

/// How an engine tablebase answers it: by the game, whatever is stored.
fn engine_illegal<G: Game>(tb: &Tablebase, game: &G, p: PartitionId, r: Rank) -> bool {
    tb.probe_code(p, r).unwrap();
    game.unrank(p, r).is_none()
}

/// Builds `game` into `dir/full`, exports it to `dir/engine` and
/// `dir/wdl`, checks both with verify (deep) and compares every `step`-th
/// index (best moves too where `moves`).
fn round_trip(dir: &Path, game: &AnyGame, step: u64, moves: bool) {
    let full = dir.join("full");
    build_with(game, &full, 2, |_| {});
    for (name, distance) in [("engine", true), ("wdl", false)] {
        let out = dir.join(name);
        let options = ExportOptions {
            distance,
            ..ExportOptions::default()
        };
        let report = export_engine(&full, &out, &options).unwrap();
        assert!(report.bytes > 0);
        let v = verify_dir(&out, true).unwrap();
        assert!(v.ok, "{name}: {v:?}");
        let m = read_manifest(&out).unwrap();
        assert_eq!(m.engine.as_ref().unwrap().distance, distance);
        assert_eq!(m.totals, read_manifest(&full).unwrap().totals);
        let (a, b) = (
            Tablebase::open(&full).unwrap(),
            Tablebase::open(&out).unwrap(),
        );
        let compared = game.visit(Compare {
            full: &a,
            engine: &b,
            step,
            moves,
        });
        assert!(compared > 0, "{name}");
    }
}

#[test]
fn tictactoe_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &open("tictactoe", &[]), 1, true);
}

#[test]
fn connect4_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(
        dir.path(),
        &open("connect4", &[("width", "4"), ("height", "4")]),
        1,
        true,
    );
}

#[test]
fn nim_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &open("nim", &[("heaps", "1,3,5,7")]), 1, true);
}

#[test]
fn morris_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    // Every position's value; every 7th with its moves (each of up to 54
    // flying moves resolves its own captures: the all-moves probe is the
    // slow one). Best moves come from the successors' values, compared in
    // the first pass, by the same code for both.
    round_trip(dir.path(), &open("morris", &[("max", "3")]), 1, false);
    let game = open("morris", &[("max", "3")]);
    let (a, b) = (
        Tablebase::open(&dir.path().join("full")).unwrap(),
        Tablebase::open(&dir.path().join("engine")).unwrap(),
    );
    game.visit(Compare {
        full: &a,
        engine: &b,
        step: 7,
        moves: true,
    });
}

#[test]
fn checkers_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &open("checkers", &[("pieces", "3")]), 1, true);
}

#[test]
fn puzzle_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(
        dir.path(),
        &open("slidingtile", &[("rows", "2"), ("cols", "3")]),
        1,
        true,
    );
}

/// The first file of `dir`'s manifest holding more than its header's worth.
fn a_file(dir: &Path) -> std::path::PathBuf {
    let m = read_manifest(dir).unwrap();
    let f = m.files.iter().max_by_key(|f| f.bytes).unwrap();
    dir.join(&f.name)
}

#[test]
fn damaged_and_truncated_engine_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    build_with(&open("tictactoe", &[]), &full, 2, |_| {});
    for damage in ["flip", "truncate"] {
        let out = dir.path().join(damage);
        export_engine(&full, &out, &ExportOptions::default()).unwrap();
        let file = a_file(&out);
        let mut bytes = std::fs::read(&file).unwrap();
        match damage {
            "flip" => {
                let at = bytes.len() - 20;
                bytes[at] ^= 0x40;
            }
            _ => bytes.truncate(bytes.len() - 7),
        }
        std::fs::write(&file, &bytes).unwrap();
        let v = verify_dir(&out, false).unwrap();
        assert!(!v.ok, "{damage}");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let failed = v.files.iter().find(|f| f.name == name).unwrap();
        assert!(!failed.ok, "{damage}: {failed:?}");
        // Probing every position reaches the damaged file somewhere: the
        // error is the corruption's, named, never a wrong value.
        let tb = Tablebase::open(&out).unwrap();
        let game = tbforge::game::tictactoe::TicTacToe::from_params(&Default::default()).unwrap();
        let p = tb.manifest().files.iter().find(|f| f.name == name).unwrap();
        let pos = (0..p.index_size)
            .find_map(|r| game.unrank(p.partition, Rank(r)))
            .unwrap();
        let e = tb.probe(&game, &pos).unwrap_err().to_string();
        assert!(
            e.contains(&name) && (e.contains("checksum") || e.contains("truncated")),
            "{damage}: {e}"
        );
        let cli = tbforge(&["probe", out.to_str().unwrap(), &game.format_position(&pos)]);
        assert!(!cli.status.success());
        assert!(common::stderr(&cli).contains(&name), "{damage}");
        let cli = tbforge(&["verify", out.to_str().unwrap()]);
        assert_eq!(cli.status.code(), Some(1), "{damage}");
    }
}

#[test]
fn export_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    build_with(&open("tictactoe", &[]), &full, 2, |_| {});
    let out = dir.path().join("engine");
    export_engine(&full, &out, &ExportOptions::default()).unwrap();
    let before = std::fs::read(out.join("manifest.json")).unwrap();
    // An OUT that holds files, unless forced.
    let again = tbforge(&[
        "export",
        full.to_str().unwrap(),
        "--engine",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2));
    let err = common::stderr(&again);
    assert!(
        err.contains("not empty") && err.contains("--force"),
        "{err}"
    );
    let forced = tbforge(&[
        "export",
        full.to_str().unwrap(),
        "--engine",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(forced.status.success(), "{}", common::stderr(&forced));
    // Deterministic: the same bytes again.
    assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), before);
    // From a directory that holds no tablebase, from engine files, and
    // distances from a WDL-only build.
    for (from, says) in [
        (dir.path().join("missing"), "manifest"),
        (out.clone(), "engine files already"),
    ] {
        let e = export_engine(&from, &dir.path().join("x"), &ExportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
    let wdl = dir.path().join("wdl-full");
    build_with(&open("tictactoe", &[]), &wdl, 2, |o| {
        o.encoding = ValueEncoding::Wdl2
    });
    let opts = ExportOptions {
        distance: true,
        ..ExportOptions::default()
    };
    let e = export_engine(&wdl, &dir.path().join("y"), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("without --distance"), "{e}");
    export_engine(&wdl, &dir.path().join("y"), &ExportOptions::default()).unwrap();
    // A damaged full file is refused by the export, not copied.
    let file = a_file(&full);
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 20;
    bytes[at] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    let e = export_engine(&full, &dir.path().join("z"), &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("checksum"), "{e}");
    // The info command says what they are.
    let info = tbforge(&["info", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("engine files"), "{text}");
}

/// A sample of a large tablebase and its engine files, built elsewhere
/// (scripts/bench_engine_files.sh leaves them in its WORK directory):
/// `TBF_FULL=DIR TBF_ENGINE=OUT [TBF_STEP=N] cargo test --test all engine_files::
/// -- --ignored`, every N-th index (default 997) probed in both.
#[test]
#[ignore]
fn large_tablebase_samples_answer_alike() {
    let (Ok(full), Ok(engine)) = (std::env::var("TBF_FULL"), std::env::var("TBF_ENGINE")) else {
        panic!("set TBF_FULL and TBF_ENGINE to a full tablebase and its engine files");
    };
    let step = std::env::var("TBF_STEP").map_or(997, |s| s.parse().unwrap());
    let (a, b) = (
        Tablebase::open(Path::new(&full)).unwrap(),
        Tablebase::open(Path::new(&engine)).unwrap(),
    );
    let game = tbforge::registry::open_game(&a.manifest().game, &a.manifest().params).unwrap();
    let compared = game.visit(Compare {
        full: &a,
        engine: &b,
        step,
        moves: true,
    });
    eprintln!("{compared} positions compared");
    assert!(compared > 0);
}
