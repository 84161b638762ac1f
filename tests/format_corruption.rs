//! Damaged files: every flipped byte and every truncation is caught by verify,
//! and probing returns an error, never a wrong value and never a panic.
#![cfg(feature = "build")]

use crate::common;

use common::reseal;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use tbforge::format::{
    write_partition_file_with, FormatError, TableFile, ValueEncoding, WriteOptions, HEADER_LEN,
    TRAILER_LEN,
};
use tbforge::game::tictactoe::TicTacToe;
use tbforge::probe::Tablebase;
use tbforge::solve::write_solved;
use tbforge::solve::{solve_game, Progress};
use tbforge::verify::verify_dir;
use tbforge::{Game, PartitionId, Rank, Value};

struct Fixture {
    dir: tempfile::TempDir,
    /// The file under attack and its partition.
    path: PathBuf,
    partition: PartitionId,
    /// Its good bytes and values.
    bytes: Vec<u8>,
    values: Vec<u8>,
}

/// The tic-tac-toe tablebase's files in one encoding, built once per test
/// binary: writers fsync every file, which is slow on a shared disk.
fn base_files(encoding: ValueEncoding) -> (BTreeMap<String, Vec<u8>>, Vec<u8>) {
    type Base = (BTreeMap<String, Vec<u8>>, Vec<u8>);
    static BYTE: std::sync::OnceLock<Base> = std::sync::OnceLock::new();
    static WDL2: std::sync::OnceLock<Base> = std::sync::OnceLock::new();
    let cell = match encoding {
        ValueEncoding::Byte => &BYTE,
        ValueEncoding::Wdl2 => &WDL2,
    };
    cell.get_or_init(|| {
        let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
        let s = solve_game(&g, &Progress::hidden()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_solved(dir.path(), &g, &s, encoding).unwrap();
        let files = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, fs::read(e.path()).unwrap())
            })
            .collect();
        // marks5: 756 indices, a mix of wins, losses, draws and illegal boards.
        let slot = s.layout.slot(PartitionId(5)).unwrap();
        (files, s.values[slot].clone())
    })
    .clone()
}

/// A tic-tac-toe tablebase; `block_positions` small gives the attacked file many blocks.
fn fixture(encoding: ValueEncoding, block_positions: Option<u32>) -> Fixture {
    let (files, values) = base_files(encoding);
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        fs::write(dir.path().join(name), bytes).unwrap();
    }
    let partition = PartitionId(5);
    let path = dir.path().join("marks5.tbf");
    if block_positions.is_some() {
        // Rewrite the file with small blocks and update its manifest entry.
        let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
        let opts = WriteOptions {
            block_positions,
            ..WriteOptions::default()
        };
        let sum = write_partition_file_with(&path, &g.info(), partition, encoding, &values, &opts)
            .unwrap();
        let mut m = tbforge::format::read_manifest(dir.path()).unwrap();
        let e = m
            .files
            .iter_mut()
            .find(|f| f.partition == partition)
            .unwrap();
        e.bytes = sum.bytes;
        e.crc32 = sum.crc32;
        tbforge::format::write_manifest(dir.path(), &m).unwrap();
    }
    assert!(verify_dir(dir.path(), false).unwrap().ok);
    let bytes = fs::read(&path).unwrap();
    Fixture {
        dir,
        path,
        partition,
        bytes,
        values,
    }
}

/// Verify must fail and name the file; the reader on its own (no manifest)
/// must refuse the file or at least one block; probes must give the right
/// value or an error, and at least one probe must fail.
fn check_damaged(fx: &Fixture, damaged: &[u8], what: &str, encoding: ValueEncoding) {
    // Unlink first: truncating a file in place makes ext4 flush it (auto_da_alloc), slowly.
    fs::remove_file(&fx.path).unwrap();
    fs::write(&fx.path, damaged).unwrap();
    let report = verify_dir(fx.dir.path(), false).unwrap();
    assert!(!report.ok, "{what}: verify passed");
    let bad: Vec<&str> = report
        .files
        .iter()
        .filter(|f| !f.ok)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(bad, ["marks5.tbf"], "{what}");

    // The file's own checks, without the manifest's whole-file crc.
    let alone =
        TableFile::from_bytes("marks5.tbf", damaged.to_vec()).and_then(|f| f.read_all_codes());
    assert!(
        alone.is_err(),
        "{what}: the reader accepted the damaged file"
    );

    let tb = Tablebase::open(fx.dir.path()).unwrap();
    let mut errors = 0;
    for (r, &want) in fx.values.iter().enumerate() {
        match tb.probe_stored(fx.partition, Rank(r as u64)) {
            Ok(got) => {
                let want = Value::from_byte(want);
                assert_eq!(
                    got.outcome,
                    want.outcome(),
                    "{what}: wrong value at rank {r}"
                );
                if encoding == ValueEncoding::Byte {
                    assert_eq!(got.value, Some(want), "{what}: wrong value at rank {r}");
                }
            }
            Err(FormatError::Corrupt { file, block, .. }) => {
                assert_eq!(file, "marks5.tbf");
                errors += 1;
                if block.is_none() {
                    // The file as a whole is refused: every probe re-opens it and fails alike.
                    break;
                }
            }
            Err(FormatError::Mismatch { .. } | FormatError::Version { .. }) => {
                errors += 1;
                break;
            }
            Err(e) => panic!("{what}: unexpected error kind: {e}"),
        }
    }
    assert!(errors > 0, "{what}: every probe succeeded");
}

fn flip_every_byte(encoding: ValueEncoding, block_positions: Option<u32>) {
    let fx = fixture(encoding, block_positions);
    let n = fx.bytes.len();
    for i in 0..n {
        for mask in [0xffu8, 0x01, 0x80] {
            let mut damaged = fx.bytes.clone();
            damaged[i] ^= mask;
            check_damaged(
                &fx,
                &damaged,
                &format!("byte {i} ^ {mask:#04x} of {n}"),
                encoding,
            );
        }
    }
}

#[test]
fn every_flipped_byte_is_caught_single_block() {
    flip_every_byte(ValueEncoding::Byte, None);
}

#[test]
fn every_flipped_byte_is_caught_many_blocks() {
    let fx = fixture(ValueEncoding::Byte, Some(64));
    assert!(
        TableFile::from_bytes("x", fx.bytes.clone())
            .unwrap()
            .header()
            .block_count
            >= 12
    );
    drop(fx);
    flip_every_byte(ValueEncoding::Byte, Some(64));
}

#[test]
fn every_flipped_byte_is_caught_wdl2() {
    flip_every_byte(ValueEncoding::Wdl2, Some(128));
}

#[test]
fn truncation_and_extension_are_caught() {
    let fx = fixture(ValueEncoding::Byte, Some(64));
    let n = fx.bytes.len();
    let mut cuts = vec![
        0,
        1,
        7,
        8,
        9,
        64,
        HEADER_LEN - 1,
        HEADER_LEN,
        HEADER_LEN + 1,
    ];
    cuts.extend([
        HEADER_LEN + 16,
        n / 2,
        n - TRAILER_LEN - 1,
        n - TRAILER_LEN,
        n - 8,
        n - 1,
    ]);
    for cut in cuts {
        check_damaged(
            &fx,
            &fx.bytes[..cut],
            &format!("truncated to {cut} of {n}"),
            ValueEncoding::Byte,
        );
    }
    let mut longer = fx.bytes.clone();
    longer.push(0);
    check_damaged(&fx, &longer, "one byte appended", ValueEncoding::Byte);
}

#[test]
fn damaged_files_give_errors_through_the_game_level_api() {
    let fx = fixture(ValueEncoding::Byte, None);
    let mut damaged = fx.bytes.clone();
    let last_block_byte = damaged.len() - TRAILER_LEN - 1;
    damaged[last_block_byte] ^= 0x55;
    fs::write(&fx.path, &damaged).unwrap();
    // "xx.oo...." has 4 marks; its successors lie in marks5.
    let err = tbforge::probe::probe_text(fx.dir.path(), "xx.oo....").unwrap_err();
    assert!(err.to_string().contains("marks5.tbf"), "{err}");
    let report = verify_dir(fx.dir.path(), false).unwrap();
    let f = report.files.iter().find(|f| !f.ok).unwrap();
    assert!(f.failures.iter().any(|x| x.block == Some(0)), "{f:?}");
}

/// Written once: every write fsyncs, which is slow on a shared disk.
fn small_file() -> Vec<u8> {
    static FILE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    FILE.get_or_init(write_small_file).clone()
}

fn write_small_file() -> Vec<u8> {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path: &Path = &dir.path().join("f.tbf");
    let values: Vec<u8> = (0..300u32).map(|i| (i % 5) as u8).collect();
    let opts = WriteOptions {
        block_positions: Some(32),
        ..WriteOptions::default()
    };
    write_partition_file_with(
        path,
        &g.info(),
        PartitionId(2),
        ValueEncoding::Byte,
        &values,
        &opts,
    )
    .unwrap();
    fs::read(path).unwrap()
}

/// Reads everything a reader can be asked for; must never panic.
fn read_everything(bytes: Vec<u8>) {
    if let Ok(f) = TableFile::from_bytes("fuzz.tbf", bytes) {
        let h = f.header().clone();
        let _ = f.read_all_codes();
        for r in [
            0,
            1,
            h.index_size / 2,
            h.index_size.saturating_sub(1),
            h.index_size,
            u64::MAX,
        ] {
            let _ = f.read(Rank(r));
        }
        for b in [0, h.block_count.saturating_sub(1), h.block_count, u64::MAX] {
            let _ = f.read_block(b);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        read_everything(bytes);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_magic_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        version in prop_oneof![Just(1u32), any::<u32>()],
    ) {
        let mut b = tbforge::format::MAGIC.to_vec();
        b.extend_from_slice(&version.to_le_bytes());
        b.extend(bytes);
        read_everything(b);
    }

    /// Header and index fields rewritten and the trailer checksum fixed up.
    #[test]
    fn resealed_edits_never_panic(
        edits in proptest::collection::vec((0usize..400, any::<u8>()), 1..6),
        wide in proptest::collection::vec((0usize..50, any::<u64>()), 0..3),
    ) {
        let mut b = small_file();
        let index_end = HEADER_LEN + 16 * 10;
        for (at, v) in edits {
            let at = at % index_end;
            b[at] = v;
        }
        for (at, v) in wide {
            let at = 8 * (at % (index_end / 8));
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        reseal(&mut b);
        read_everything(b);
    }

    /// Any single changed byte of a valid file is refused by the file's own checks.
    #[test]
    fn any_single_change_is_refused(at in 0usize..10_000, x in 1u8..=255) {
        let mut b = small_file();
        let at = at % b.len();
        b[at] ^= x;
        let r = TableFile::from_bytes("f.tbf", b).and_then(|f| f.read_all_codes());
        prop_assert!(r.is_err());
    }
}
