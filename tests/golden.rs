//! Golden bytes: the default set, Morris max=4 and Connect Four 5x4 built by
//! the command line give exactly the files recorded in `tests/golden/sums.txt`
//! (name, length and crc32 of every file but the build log).
//!
//! The sums were first taken from the binary of commit baf10be, before the
//! modules were reorganised per game; a refactor that changes one byte of any
//! tablebase file or manifest fails here. A deliberate format change updates
//! the file (and bumps the format version): rerun with `TBFORGE_GOLDEN_WRITE=1`
//! to print the new lines.
//!
//! Beside each tablebase file's bytes, `tests/golden/values.txt` records the
//! length and crc32 of its decompressed values (the stored codes, block after
//! block): what a format or compression change must leave alone. They were
//! taken at commit cbaa2f9 (format 2, zstd level 15), where every file but
//! Morris's was checked to be format 1's bytes with the version field changed
//! (then recorded in tests/golden/format1.txt, taken at 47497b2). Since then:
//! - zstd level 9 instead of 15 (format 2 was not yet released): every
//!   `.tbf` line of sums.txt changed, no line of values.txt;
//! - the Morris lines (symmetry on, the default) were retaken when
//!   `symmetry=on` became a class index (one index per symmetry class instead
//!   of the multinomial index with 15 of 16 indices unused): the same values,
//!   fewer indices. Evidence that the values did not change: tests/morris.rs
//!   `folding_matches_unfolded_max_3` (every position of a symmetry-off solve
//!   equals its class's value) and tests/cuda_morris_retro.rs.
//! - format 3 (sparse one-byte blocks, zstd level 3): every line of
//!   sums.txt changed, no line of values.txt but Connect Four's;
//! - Connect Four's plies became layered (only positions reachable from the
//!   empty board are solved, 0 elsewhere): its values lines from ply 2 on
//!   changed, and only by zeros. Evidence: tests/connect4_twin.rs
//!   (`compact_twin_matches_the_generic_solver_*`: the compact solve equals
//!   the generic solver's bytes at every reached index of every ply) and
//!   tests/connect4.rs (reachable counts per ply against seed 001's Table 0.8).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `game|file` -> (length, crc32), as recorded in `text` (sums.txt's lines).
fn recorded_in(text: &str) -> BTreeMap<(String, String), (u64, u32)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            assert_eq!(f.len(), 4, "bad line in tests/golden: {l}");
            (
                (f[0].to_string(), f[1].to_string()),
                (
                    f[2].parse().unwrap(),
                    u32::from_str_radix(f[3], 16).unwrap(),
                ),
            )
        })
        .collect()
}

fn recorded() -> BTreeMap<(String, String), (u64, u32)> {
    recorded_in(include_str!("golden/sums.txt"))
}

/// Length and crc32 of a tablebase file's decompressed codes.
fn values_sum(name: &str, bytes: &[u8]) -> (u64, u32) {
    let file = tbforge::format::TableFile::from_bytes(name, bytes.to_vec()).unwrap();
    sum(&file.read_all_codes().unwrap())
}

/// Builds `spec` (`game key=value ...`) with the CPU backend into a fresh
/// directory and returns every file's bytes, by name.
fn build(spec: &str, root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut words = spec.split_whitespace();
    let game = words.next().unwrap();
    let out = root.join(spec.replace([' ', '=', ','], "_"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tbforge"));
    cmd.args(["build", game, "--backend", "cpu", "--json", "--out"])
        .arg(&out);
    for p in words {
        cmd.args(["--param", p]);
    }
    let run = cmd.output().unwrap();
    assert!(
        run.status.success(),
        "{spec}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "build-log.json")
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn sum(bytes: &[u8]) -> (u64, u32) {
    (bytes.len() as u64, crc32fast::hash(bytes))
}

#[test]
fn builds_match_the_recorded_bytes() {
    let recorded = recorded();
    let specs: Vec<String> = recorded
        .keys()
        .map(|(g, _)| g.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for needed in [
        "tictactoe",
        "nim heaps=1,3,5,7",
        "connect4 width=5 height=4",
        "morris max=3",
        "foreandaft",
        "morris max=4",
    ] {
        assert!(specs.iter().any(|s| s == needed), "{needed} not recorded");
    }
    let values = recorded_in(include_str!("golden/values.txt"));
    assert!(values.keys().all(|k| recorded.contains_key(k)));
    let root = tempfile::tempdir().unwrap();
    let write = std::env::var_os("TBFORGE_GOLDEN_WRITE").is_some();
    let mut mismatches = Vec::new();
    for spec in &specs {
        let files = build(spec, root.path());
        let got: BTreeMap<String, (u64, u32)> =
            files.iter().map(|(n, b)| (n.clone(), sum(b))).collect();
        for (name, bytes) in files.iter().filter(|(n, _)| n.ends_with(".tbf")) {
            let got = values_sum(name, bytes);
            if write {
                println!("values {spec}|{name}|{}|{:08x}", got.0, got.1);
            }
            let want = values.get(&(spec.clone(), name.clone()));
            if want != Some(&got) {
                mismatches.push(format!(
                    "{spec}: {name}: recorded values {want:?}, built {got:?}"
                ));
            }
        }
        let want: BTreeMap<String, (u64, u32)> = recorded
            .iter()
            .filter(|((g, _), _)| g == spec)
            .map(|((_, f), v)| (f.clone(), *v))
            .collect();
        if write {
            for (f, (len, crc)) in &got {
                println!("{spec}|{f}|{len}|{crc:08x}");
            }
        }
        for name in want.keys().chain(got.keys()) {
            if want.get(name) != got.get(name) {
                mismatches.push(format!(
                    "{spec}: {name}: recorded {:?}, built {:?}",
                    want.get(name),
                    got.get(name)
                ));
            }
        }
    }
    mismatches.dedup();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
