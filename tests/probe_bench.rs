//! `probe::bench` on a real tablebase: the figures it reports are consistent
//! with the files (sizes, positions) and the timings are measured.
#![cfg(feature = "build")]

use std::collections::BTreeMap;
use tbforge::format::{read_manifest, ValueEncoding};
use tbforge::game::tictactoe::TicTacToe;
use tbforge::probe::{bench, render_bench_text, BenchOptions};
use tbforge::solve::write_solved;
use tbforge::solve::{solve_game, Progress};

#[test]
fn bench_rows_match_the_files() {
    let g = TicTacToe::from_params(&BTreeMap::new()).unwrap();
    let s = solve_game(&g, &Progress::hidden()).unwrap();
    let mut rows = Vec::new();
    for enc in [ValueEncoding::Byte, ValueEncoding::Wdl2] {
        let dir = tempfile::tempdir().unwrap();
        write_solved(dir.path(), &g, &s, enc).unwrap();
        let m = read_manifest(dir.path()).unwrap();
        let opts = BenchOptions {
            hot_probes: 200_000,
            miss_probes: 2_000,
            cold_opens: 20,
            zstd19: true,
        };
        let row = bench(dir.path(), &opts).unwrap();
        assert_eq!(row.index_size, m.totals.index_size);
        assert_eq!(row.file_bytes, m.files.iter().map(|f| f.bytes).sum::<u64>());
        let per_byte = enc.positions_per_byte();
        let raw: u64 = m
            .files
            .iter()
            .map(|f| f.index_size.div_ceil(per_byte))
            .sum();
        assert_eq!(row.raw_bytes, raw);
        let bits = row.file_bytes as f64 * 8.0 / row.index_size as f64;
        assert!((row.bits_per_position - bits).abs() < 1e-9);
        let z = row.zstd19_bits_per_position.unwrap();
        assert!(z > 0.0 && z < 8.0 / per_byte as f64, "{z}");
        assert!(row.probe_ns_hot > 0.0 && row.probe_ns_miss > 0.0 && row.open_first_probe_ns > 0.0);
        rows.push(row);
    }
    eprintln!("{}", render_bench_text(&rows));
}
