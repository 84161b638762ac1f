//! Tablebase files and manifest: write a real tablebase (tic-tac-toe), read it
//! back, verify it, and check that the bytes are deterministic.
//! # Source: tic-tac-toe has 5,478 legal positions reachable from the empty
//! board (OEIS A008907 summed; seed README) and the empty board is a draw under
//! perfect play (Schaefer 2002, "Tic-tac-toe", and any game-theory text).
#![cfg(feature = "build")]

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use tbforge::format::{
    read_manifest, write_manifest, write_partition_file_with, Counts, FileEntry, Manifest,
    TableFile, Totals, ValueEncoding, WriteOptions,
};
use tbforge::game::tictactoe::TicTacToe;
use tbforge::solve::write_solved;
use tbforge::solve::{solve_game, Progress, SolvedGame};
use tbforge::verify::{verify_dir, verify_dir_with, VerifyOptions};
use tbforge::{Game, GameKind, Outcome, PartitionId, Rank, Value, Weights};

fn game() -> TicTacToe {
    TicTacToe::from_params(&BTreeMap::new()).unwrap()
}

fn solved() -> SolvedGame {
    solve_game(&game(), &Progress::hidden()).unwrap()
}

fn read_dir_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Tic-tac-toe solved and written with one byte a position into a fresh
/// directory: the game, its values, the directory and the manifest.
fn written() -> (TicTacToe, SolvedGame, tempfile::TempDir, Manifest) {
    let g = game();
    let s = solved();
    let dir = tempfile::tempdir().unwrap();
    let m = write_solved(dir.path(), &g, &s, ValueEncoding::Byte).unwrap();
    (g, s, dir, m)
}

#[test]
fn write_verify_and_read_back() {
    let (g, s, dir, m) = written();

    // Published numbers pass through to the manifest.
    assert_eq!(m.totals.reachable, Some(5478));
    assert_eq!(m.layers.as_ref().unwrap().iter().sum::<u64>(), 5478);
    assert_eq!(m.files.len(), 10);
    assert_eq!(m.totals.index_size, s.layout.total_size());
    // One position per index: classes are positions.
    assert_eq!(m.totals.classes, m.totals.positions);
    assert_eq!(m.totals.index_size, m.totals.classes + m.totals.illegal);
    // Nothing but the files and the manifest is left behind (no temporaries).
    let names: Vec<String> = read_dir_bytes(dir.path()).into_keys().collect();
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')));

    let report = verify_dir(dir.path(), false).unwrap();
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.files_checked, 10);
    let deep = verify_dir(dir.path(), true).unwrap();
    assert!(deep.ok, "{deep:#?}");
    // Tic-tac-toe's partitions are small: every legal index is sampled.
    assert_eq!(
        deep.positions_sampled,
        m.totals.index_size - m.totals.illegal
    );

    // Every file reads back to exactly the solver's values.
    for (slot, &p) in s.layout.order().iter().enumerate() {
        let path = dir.path().join(format!("{}.tbf", g.partition_name(p)));
        let f = TableFile::open_read(&path).unwrap();
        assert_eq!(f.header().partition, p);
        assert_eq!(f.read_all_codes().unwrap(), s.values[slot]);
    }
    assert_eq!(read_manifest(dir.path()).unwrap(), m);
}

#[test]
fn start_position_is_a_draw_on_file() {
    let dir = tempfile::tempdir().unwrap();
    write_solved(dir.path(), &game(), &solved(), ValueEncoding::Byte).unwrap();
    let report = tbforge::probe::probe_text(dir.path(), ".........").unwrap();
    assert_eq!(report.result.outcome, Outcome::Draw);
    // Every first move keeps the draw (well known; Schaefer 2002).
    assert_eq!(report.result.best_moves.len(), 9);
}

#[test]
fn bytes_are_deterministic_across_runs_and_thread_counts() {
    let g = game();
    let s = solved();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let four = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    // Many small blocks, so that the parallel compressor really splits work.
    one.install(|| write_solved(a.path(), &g, &s, ValueEncoding::Byte).unwrap());
    four.install(|| write_solved(b.path(), &g, &s, ValueEncoding::Byte).unwrap());
    assert_eq!(read_dir_bytes(a.path()), read_dir_bytes(b.path()));

    let values: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
    let info = g.info();
    let opts = WriteOptions {
        block_positions: Some(64),
        ..WriteOptions::default()
    };
    let pa = a.path().join("x.tbf");
    let pb = b.path().join("x.tbf");
    let write = |path: &std::path::Path| {
        write_partition_file_with(
            path,
            &info,
            PartitionId(3),
            ValueEncoding::Byte,
            &values,
            &opts,
        )
        .unwrap()
    };
    let sa = one.install(|| write(&pa));
    let sb = four.install(|| write(&pb));
    assert_eq!(sa, sb);
    let bytes = fs::read(&pa).unwrap();
    assert_eq!(bytes, fs::read(&pb).unwrap());
    assert_eq!(sa.bytes, bytes.len() as u64);
    assert_eq!(sa.crc32, crc32fast::hash(&bytes));
}

#[test]
fn multi_block_files_read_back_in_both_encodings() {
    let info = game().info();
    let dir = tempfile::tempdir().unwrap();
    // Sizes around block boundaries, including empty and a partial last block.
    for n in [0usize, 1, 3, 4, 5, 63, 64, 65, 1000] {
        let values: Vec<u8> = (0..n).map(|i| ((i * 37) % 11) as u8).collect();
        for (enc, bp) in [(ValueEncoding::Byte, 16), (ValueEncoding::Wdl2, 8)] {
            let path = dir.path().join(format!("{n}-{enc}.tbf"));
            let opts = WriteOptions {
                block_positions: Some(bp),
                ..WriteOptions::default()
            };
            write_partition_file_with(&path, &info, PartitionId(1), enc, &values, &opts).unwrap();
            let f = TableFile::open_read(&path).unwrap();
            assert_eq!(f.header().block_count, (n as u64).div_ceil(u64::from(bp)));
            let want: Vec<u8> = values
                .iter()
                .map(|&b| enc.encode(GameKind::TwoPlayer, Value::from_byte(b)))
                .collect();
            assert_eq!(f.read_all_codes().unwrap(), want, "n={n} {enc}");
            for (r, &b) in values.iter().enumerate() {
                let got = f.read(Rank(r as u64)).unwrap();
                let v = Value::from_byte(b);
                assert_eq!(got.outcome, v.outcome());
                if enc == ValueEncoding::Byte {
                    assert_eq!(got.value, Some(v));
                }
            }
            assert!(f.read(Rank(n as u64)).is_err());
        }
    }
}

#[test]
fn wdl2_tablebase_verifies_and_agrees_with_byte_outcomes() {
    let (g, s, byte, _) = written();
    let wdl = tempfile::tempdir().unwrap();
    let m = write_solved(wdl.path(), &g, &s, ValueEncoding::Wdl2).unwrap();
    assert_eq!(m.encoding, ValueEncoding::Wdl2);
    let r = verify_dir(wdl.path(), true).unwrap();
    assert!(r.ok, "{r:#?}");
    let tb_byte = tbforge::probe::Tablebase::open(byte.path()).unwrap();
    let tb_wdl = tbforge::probe::Tablebase::open(wdl.path()).unwrap();
    for (slot, &p) in s.layout.order().iter().enumerate() {
        for r in 0..s.layout.size(slot) {
            let a = tb_byte.probe_stored(p, Rank(r)).unwrap();
            let b = tb_wdl.probe_stored(p, Rank(r)).unwrap();
            assert_eq!(a.outcome, b.outcome);
            assert_eq!(b.distance, None);
        }
    }
    // Distances are not there to give.
    assert!(tb_wdl.probe_value(PartitionId(0), Rank(0)).is_err());
}

#[test]
fn manifest_round_trip_and_schema() {
    let (_, _, dir, m) = written();
    let text = fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(text.ends_with("}\n"));
    assert_eq!(text, m.to_json());
    let back: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(back, m);
    // Rewriting gives the same bytes.
    write_manifest(dir.path(), &back).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("manifest.json")).unwrap(),
        text
    );

    // The documented fields, in the documented order.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut order: Vec<(usize, &str)> = keys
        .iter()
        .map(|k| (text.find(&format!("\"{k}\"")).unwrap(), *k))
        .collect();
    order.sort();
    let order: Vec<&str> = order.into_iter().map(|(_, k)| k).collect();
    assert_eq!(order, common::MANIFEST_FIELDS);
    assert_eq!(v["kind"], "two-player");
    assert_eq!(v["param_hash"].as_str().unwrap().len(), 16);
    let f0 = &v["files"][0];
    assert_eq!(f0["crc32"].as_str().unwrap().len(), 8);
    assert_eq!(f0["name"], "marks9.tbf");

    // Unknown fields and bad crc text are refused, not ignored.
    let extra = text.replacen("\"game\"", "\"colour\": 1,\n  \"game\"", 1);
    fs::write(dir.path().join("manifest.json"), extra).unwrap();
    assert!(read_manifest(dir.path()).is_err());
    let badcrc = text.replacen(&format!("\"{:08x}\"", m.files[0].crc32), "\"+1234567\"", 1);
    fs::write(dir.path().join("manifest.json"), badcrc).unwrap();
    assert!(read_manifest(dir.path()).is_err());
}

#[test]
fn counts_follow_the_documented_rules() {
    // 0 illegal, 1 draw, 2 loss in 0, 3 win in 1, 4 loss in 2, 7 win in 5.
    let values = [0u8, 1, 2, 3, 4, 7, 7, 1];
    let one = Weights::one();
    let c = Counts::of_values(GameKind::TwoPlayer, &one, &values);
    assert_eq!(
        (c.index_size, c.illegal, c.draws, c.losses, c.wins),
        (8, 1, 2, 2, 3)
    );
    assert_eq!((c.positions, c.classes), (7, 7));
    assert_eq!(
        (c.class_draws, c.class_losses, c.class_wins),
        (c.draws, c.losses, c.wins)
    );
    assert_eq!((c.longest_win, c.max_distance), (Some(5), Some(5)));
    // Puzzles: every decided position reaches the goal; no losses.
    let c = Counts::of_values(GameKind::Puzzle, &one, &values);
    assert_eq!((c.illegal, c.draws, c.losses, c.wins), (1, 2, 0, 5));
    assert_eq!(c.longest_win, Some(5));
    let c = Counts::of_values(GameKind::TwoPlayer, &one, &[0, 1, 2]);
    assert_eq!((c.longest_win, c.max_distance), (None, Some(0)));
}

/// A tablebase whose files agree with the manifest but hold a wrong value:
/// checksums cannot see it, re-deriving from successors does.
#[test]
fn deep_verify_catches_a_wrong_value() {
    let g = game();
    let mut s = solved();
    let info = g.info();
    // The start position is a draw; store it as a win in 1.
    let (p, r) = g.rank(&g.start().unwrap());
    let slot = s.layout.slot(p).unwrap();
    assert_eq!(s.values[slot][r.0 as usize], Value::DRAW.to_byte());
    s.values[slot][r.0 as usize] = Value::at_distance(1).unwrap().to_byte();
    let dir = tempfile::tempdir().unwrap();
    write_solved(dir.path(), &g, &s, ValueEncoding::Byte).unwrap();
    assert!(verify_dir(dir.path(), false).unwrap().ok);
    let deep = verify_dir(dir.path(), true).unwrap();
    assert!(!deep.ok);
    let bad: Vec<_> = deep.files.iter().filter(|f| !f.ok).collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].name, format!("{}.tbf", g.partition_name(p)));
    assert!(
        bad[0].failures[0].message.contains("win in 1"),
        "{:?}",
        bad[0].failures
    );

    // An illegal index stored as legal is caught too.
    let mut s = solved();
    let slot9 = s.layout.slot(PartitionId(9)).unwrap();
    let illegal = s.values[slot9].iter().position(|&b| b == 0).unwrap();
    s.values[slot9][illegal] = Value::DRAW.to_byte();
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<FileEntry> = s
        .layout
        .order()
        .iter()
        .enumerate()
        .map(|(slot, &p)| {
            let name = g.partition_name(p);
            let path = dir.path().join(format!("{name}.tbf"));
            let sum = write_partition_file_with(
                &path,
                &info,
                p,
                ValueEncoding::Byte,
                &s.values[slot],
                &WriteOptions::default(),
            )
            .unwrap();
            FileEntry::new(
                info.kind,
                p,
                &name,
                &s.values[slot],
                &g.weights(p),
                None,
                sum,
            )
        })
        .collect();
    write_manifest(
        dir.path(),
        &Manifest::new(&info, ValueEncoding::Byte, entries, None),
    )
    .unwrap();
    assert!(verify_dir(dir.path(), false).unwrap().ok);
    let deep = verify_dir_with(
        dir.path(),
        &VerifyOptions {
            deep: true,
            samples_per_file: 1_000_000,
        },
    )
    .unwrap();
    assert!(!deep.ok);
    assert!(deep
        .files
        .iter()
        .any(|f| f.failures.iter().any(|x| x.message.contains("illegal"))));
}

#[test]
fn verify_names_missing_swapped_and_mislisted_files() {
    let g = game();
    let s = solved();
    let base = tempfile::tempdir().unwrap();
    write_solved(base.path(), &g, &s, ValueEncoding::Byte).unwrap();
    let fresh = || {
        let d = tempfile::tempdir().unwrap();
        for (name, bytes) in read_dir_bytes(base.path()) {
            fs::write(d.path().join(name), bytes).unwrap();
        }
        d
    };
    let failing = |d: &Path| -> Vec<String> {
        let r = verify_dir(d, false).unwrap();
        assert!(!r.ok);
        r.files
            .iter()
            .filter(|f| !f.ok)
            .map(|f| f.name.clone())
            .collect()
    };

    let d = fresh();
    fs::remove_file(d.path().join("marks4.tbf")).unwrap();
    assert_eq!(failing(d.path()), ["marks4.tbf"]);

    // Two valid files swapped: sizes, crcs and headers all disagree.
    let d = fresh();
    fs::rename(d.path().join("marks4.tbf"), d.path().join("tmp")).unwrap();
    fs::rename(d.path().join("marks5.tbf"), d.path().join("marks4.tbf")).unwrap();
    fs::rename(d.path().join("tmp"), d.path().join("marks5.tbf")).unwrap();
    assert_eq!(failing(d.path()), ["marks5.tbf", "marks4.tbf"]);

    // The manifest lies about counts, of positions or of classes, its sums
    // kept: caught from the blocks.
    for lie in [
        |f: &mut FileEntry| {
            f.wins += 1;
            f.draws -= 1;
        },
        |f: &mut FileEntry| {
            f.class_wins += 1;
            f.class_draws -= 1;
        },
    ] {
        let d = fresh();
        let mut m = read_manifest(d.path()).unwrap();
        lie(&mut m.files[3]);
        m.totals = Totals::sum(&m.files);
        write_manifest(d.path(), &m).unwrap();
        assert_eq!(failing(d.path()), [m.files[3].name.clone()]);
        assert!(verify_dir(d.path(), false)
            .unwrap()
            .manifest_failures
            .is_empty());
    }

    // Totals that are not the sums, and no manifest at all.
    let d = fresh();
    let mut m = read_manifest(d.path()).unwrap();
    m.totals.wins += 1;
    write_manifest(d.path(), &m).unwrap();
    let r = verify_dir(d.path(), false).unwrap();
    assert!(!r.ok && !r.manifest_failures.is_empty());
    fs::remove_file(d.path().join("manifest.json")).unwrap();
    let r = verify_dir(d.path(), false).unwrap();
    assert!(!r.ok && r.manifest_failures[0].contains("not found"));

    // Another parameter hash in the manifest: every header disagrees.
    let d = fresh();
    let mut m = read_manifest(d.path()).unwrap();
    m.param_hash = "0123456789abcdef".into();
    write_manifest(d.path(), &m).unwrap();
    let r = verify_dir(d.path(), false).unwrap();
    assert!(!r.ok && r.files.iter().all(|f| !f.ok));
}

#[test]
fn info_summarises_the_manifest() {
    let (_, _, dir, m) = written();
    let r = tbforge::format::info(dir.path()).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    // The fields DESIGN.md promises for `tbforge info --json`.
    for key in [
        "index_size",
        "positions",
        "classes",
        "class_wins",
        "class_draws",
        "class_losses",
        "wins",
        "draws",
        "losses",
        "illegal",
        "reachable",
        "layers",
        "max_distance",
        "files",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["reachable"], 5478);
    assert_eq!(v["positions"], m.totals.positions);
    assert_eq!(v["files"].as_array().unwrap().len(), 10);
    assert_eq!(r.bytes, m.files.iter().map(|f| f.bytes).sum::<u64>());
    let text = tbforge::format::render_info_text(&r);
    assert!(text.contains("reachable   5478"), "{text}");
    assert!(text.contains("marks5.tbf"), "{text}");

    // The human verify text names the failing file and block.
    let path = dir.path().join("marks5.tbf");
    let mut bytes = fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 1; // inside the last (only) block
    fs::write(&path, bytes).unwrap();
    let report = verify_dir(dir.path(), false).unwrap();
    let text = tbforge::verify::render_verify_text(&report);
    assert!(text.contains("FAIL marks5.tbf block 0:"), "{text}");
    assert!(text.contains("FAILED (1 file)"), "{text}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["files"][4]["name"], "marks5.tbf");
    assert_eq!(json["files"][4]["failures"][1]["block"], 0);
}

/// A partition with distances beyond a byte: saturated bytes in the blocks,
/// the exact distances in the long-distance table (format version 6), read
/// back exactly; without a table the same writer still writes version 3;
/// a damaged table is refused; a table where it cannot be is not written.
#[test]
fn long_distances_round_trip_in_version_6() {
    use tbforge::format::LONG_FORMAT_VERSION;
    use tbforge::LongDistances;
    let info = game().info();
    let dir = tempfile::tempdir().unwrap();
    let mut values: Vec<u8> = (0..1000).map(|i| (i % 7) as u8 + 1).collect();
    let long = LongDistances::from_entries(vec![(5, 300), (17, 401), (990, 254)]).unwrap();
    for &(r, d) in long.entries() {
        values[r as usize] = Value::saturated(d).to_byte();
    }
    // Saturated but not listed: the byte's own distance (253).
    values[18] = 255;
    let path = dir.path().join("long.tbf");
    let opts = WriteOptions {
        block_positions: Some(64),
        long: Some(&long),
    };
    let written = write_partition_file_with(
        &path,
        &info,
        PartitionId(1),
        ValueEncoding::Byte,
        &values,
        &opts,
    )
    .unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(written.crc32, crc32fast::hash(&bytes));
    let f = TableFile::open_read(&path).unwrap();
    assert_eq!(f.header().format_version, LONG_FORMAT_VERSION);
    assert_eq!(f.header().long_count, 3);
    assert_eq!(f.long(), &long);
    assert_eq!(f.whole_file_crc32(), written.crc32);
    assert_eq!(f.read_all_codes().unwrap(), values);
    for (rank, distance, outcome) in [
        (5, 300, Outcome::Loss),
        (17, 401, Outcome::Win),
        (990, 254, Outcome::Loss),
        (18, 253, Outcome::Win),
    ] {
        let got = f.read(Rank(rank)).unwrap();
        assert_eq!(
            (got.outcome, got.distance),
            (Some(outcome), Some(distance)),
            "rank {rank}"
        );
    }

    // No table: version 3, as before.
    let plain = dir.path().join("plain.tbf");
    let no_long = WriteOptions {
        block_positions: Some(64),
        ..WriteOptions::default()
    };
    write_partition_file_with(
        &plain,
        &info,
        PartitionId(1),
        ValueEncoding::Byte,
        &values,
        &no_long,
    )
    .unwrap();
    let f = TableFile::open_read(&plain).unwrap();
    assert_eq!(f.header().format_version, 3);
    assert_eq!(f.read(Rank(5)).unwrap().distance, Some(252));

    // A damaged entry of the table (just past the 16-block index): refused.
    let table_at = 128 + 16 * 16;
    for offset in [table_at, table_at + 8, table_at + 35] {
        let mut bad = bytes.clone();
        bad[offset] ^= 0x40;
        let err = TableFile::from_bytes("bad.tbf", bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("damaged"), "{err}");
    }

    // Where a table cannot be: two-bit values, or a rank past the partition.
    let wdl = dir.path().join("wdl.tbf");
    let err = write_partition_file_with(
        &wdl,
        &info,
        PartitionId(1),
        ValueEncoding::Wdl2,
        &values,
        &opts,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("one-byte"), "{err}");
    let err = write_partition_file_with(
        &wdl,
        &info,
        PartitionId(1),
        ValueEncoding::Byte,
        &values[..900],
        &opts,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("rank 990"), "{err}");
    assert!(!wdl.exists());
}
