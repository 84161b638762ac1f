//! `tbforge bench zstd`: one partition's values as a single zstd stream
//! against the tablebase's own file.

use crate::common;

use common::{build_cmd, stderr, tbforge};
use std::path::{Path, PathBuf};
use tbforge::format::{read_manifest, TableFile, INDEX_ENTRY_LEN};
use tbforge::zstd_bench::{bench_zstd, ZstdBenchOptions};

fn build(dir: &Path, name: &str, game: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let o = build_cmd(game, &out, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = tbforge(args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

#[test]
fn the_largest_file_whole_by_default() {
    let t = tempfile::tempdir().unwrap();
    let dir = build(t.path(), "ttt", &["tictactoe"]);
    let m = read_manifest(&dir).unwrap();
    let largest = m.files.iter().map(|f| f.bytes).max().unwrap();
    let v = json(&["bench", "zstd", dir.to_str().unwrap(), "--json"]);
    let entry = m
        .files
        .iter()
        .find(|f| f.partition_name == v["partition"].as_str().unwrap())
        .unwrap();
    assert_eq!(entry.bytes, largest);
    assert_eq!(v["file"], entry.name.as_str());
    assert_eq!(v["values"], entry.index_size);
    assert_eq!(v["value_bytes"], entry.index_size);
    assert_eq!(v["whole"], true);
    assert_eq!(v["file_bytes"], entry.bytes);
    assert_eq!(v["level"], 19);
    let (file, stream) = (
        v["file_bytes"].as_f64().unwrap(),
        v["stream_bytes"].as_f64().unwrap(),
    );
    assert!(stream > 0.0);
    let values = entry.index_size as f64;
    assert!(close(
        v["file_bits_per_value"].as_f64().unwrap(),
        file * 8.0 / values
    ));
    assert!(close(
        v["stream_bits_per_value"].as_f64().unwrap(),
        stream * 8.0 / values
    ));
    assert!(close(v["ratio"].as_f64().unwrap(), file / stream));
}

#[test]
fn a_named_partition_sampled_at_a_level() {
    let t = tempfile::tempdir().unwrap();
    let dir = build(
        t.path(),
        "morris",
        &["morris", "--param", "max=3", "--param", "symmetry=off"],
    );
    let m = read_manifest(&dir).unwrap();
    let entry = m.files.iter().find(|f| f.partition_name == "3-3").unwrap();
    assert!(entry.index_size > 2 << 20, "more than the sample");
    let d = dir.to_str().unwrap();
    let args = ["bench", "zstd", d, "--partition", "3-3", "--level", "3"];
    let v = json(&[&args[..], &["--sample-mb", "1", "--json"]].concat());
    assert_eq!(v["partition"], "3-3");
    assert_eq!(v["whole"], false);
    assert_eq!(v["values"], 1 << 20);
    assert_eq!(v["value_bytes"], 1 << 20);
    assert_eq!(v["level"], 3);
    // The file's share: the blocks the sample fills, with their index entries.
    let file = TableFile::open_read(&dir.join(&entry.name)).unwrap();
    let blocks = (1u64 << 20).div_ceil(u64::from(file.header().block_positions));
    let share: u64 = file.index()[..blocks as usize]
        .iter()
        .map(|r| u64::from(r.len) + INDEX_ENTRY_LEN as u64)
        .sum();
    assert_eq!(v["file_bytes"], share);

    // The file's name names it too; the text says what was measured.
    let o = tbforge(&["bench", "zstd", d, "--partition", "3-3.tbf", "--level", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("partition 3-3 (3-3.tbf, byte)"), "{text}");
    assert!(text.contains("one zstd stream, level 3"), "{text}");

    // Single-threaded, the library gives a stream of the same size each time.
    let opts = ZstdBenchOptions {
        partition: Some("2-3".into()),
        level: 5,
        sample_bytes: None,
        threads: 0,
    };
    let a = bench_zstd(&dir, &opts).unwrap();
    let b = bench_zstd(&dir, &opts).unwrap();
    assert_eq!(a.stream_bytes, b.stream_bytes);
    assert_eq!(a.values, m.files[0].index_size);
}

#[test]
fn bad_requests_are_usage_errors_on_one_line() {
    let t = tempfile::tempdir().unwrap();
    let dir = build(t.path(), "ttt", &["tictactoe"]);
    let d = dir.to_str().unwrap();
    for (args, needle) in [
        (&["--partition", "nope"][..], "no partition or file `nope`"),
        (&["--level", "30"][..], "--level 30"),
        (&["--sample-mb", "0"][..], "--sample-mb 0"),
    ] {
        let o = tbforge(&[&["bench", "zstd", d][..], args].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    let o = tbforge(&["bench", "zstd", t.path().join("none").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("manifest"), "{}", stderr(&o));
}
