//! `tbforge bench gpu`: the dry run (`--device cpu`, the CPU twin in the
//! GPU's place) walks the whole check of Morris and Connect Four without a
//! GPU, so the code that a GPU machine runs is exercised here; the table, the
//! JSON report and the exit codes are the command's contract.

use std::process::{Command, Output};

fn tbforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tbforge"))
        .args(args)
        .output()
        .expect("run tbforge")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// A small dry run of `game`: few samples, 2^12-position workloads.
fn dry_run(game: &str, params: &[&str], extra: &[&str]) -> Output {
    let mut args = vec!["bench", "gpu", game];
    for p in params {
        args.extend(["--param", p]);
    }
    args.extend([
        "--device",
        "cpu",
        "--samples",
        "500",
        "--work-log2",
        "12",
        "--seed",
        "42",
    ]);
    args.extend(extra);
    tbforge(&args)
}

#[test]
fn morris_dry_run_checks_every_kernel_and_solves() {
    let o = dry_run("morris", &["max=3"], &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for kernel in [
        "tb_rank_check",
        "class_rank_check",
        "morris_expand3w",
        "morris_expand3w streamed",
        "morris_summary3b_lb",
        "retro solve",
    ] {
        assert!(
            out.contains(&format!("| {kernel} |")),
            "no {kernel} row:\n{out}"
        );
    }
    assert!(out.contains("| retro solve | 3-3 | 169626 |"), "{out}");
    assert!(out.contains("seed 42"), "the seed is printed:\n{out}");
    assert!(out.contains(", 0 mismatched"), "{out}");
    assert!(!out.contains("| NO |"), "{out}");
}

#[test]
fn connect4_dry_run_compares_random_indices_and_the_board() {
    let o = dry_run("connect4", &["width=4", "height=4"], &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("| connect4_solve | 7x6 ply42 |"), "{out}");
    assert!(
        out.contains("| connect4_solve (board) | 4x4 | 201755 |"),
        "{out}"
    );
    assert!(out.contains("every partition's bytes identical"), "{out}");
}

#[test]
fn json_report_replays_with_its_seed() {
    let run = || {
        let o = dry_run("connect4", &["width=4", "height=4"], &["--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        v
    };
    let (a, b) = (run(), run());
    assert_eq!(a["options"]["seed"], 42);
    let rows = a["rows"].as_array().expect("rows");
    assert!(rows.len() > 5);
    for r in rows {
        assert_eq!(r["matched"], true, "{r}");
        for key in [
            "what",
            "target",
            "positions",
            "cpu_seconds",
            "gpu_seconds",
            "ratio",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
    }
    // Same seed, same inputs: the same details (counts of the sampled values).
    let details = |v: &serde_json::Value| -> Vec<String> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["detail"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(details(&a), details(&b));
}

#[test]
fn partitions_over_the_cap_are_skipped_and_named() {
    let o = dry_run("morris", &["max=3"], &["--solve-max-size", "100000"]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("| retro solve | skipped |"), "{out}");
    assert!(!out.contains("| retro solve | 3-3 |"), "{out}");
}

#[test]
fn a_game_without_kernels_or_without_a_gpu_is_a_usage_error() {
    let o = tbforge(&["bench", "gpu", "tictactoe", "--device", "cpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no device kernels"), "{}", text(&o));
    // The default device is the GPU: on a machine without one, one line and exit 2.
    // (Small, should a GPU be there.)
    let o = tbforge(&[
        "bench",
        "gpu",
        "morris",
        "--work-log2",
        "12",
        "--samples",
        "100",
        "--solve-max-size",
        "0",
    ]);
    if !o.status.success() {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("tbforge: error:"), "{err}");
    }
}

#[test]
fn permutation_puzzles_dry_run_compares_every_kernel() {
    for (game, params) in [
        ("slidingtile", &["rows=2", "cols=3"][..]),
        ("topspin", &["n=7", "k=4"][..]),
        ("pancake", &["n=4", "burnt=1"][..]),
    ] {
        let o = dry_run(game, params, &[]);
        let out = text(&o);
        assert!(o.status.success(), "{out}");
        for kernel in [
            "perm_expand",
            "perm_two_bit_step (BFS)",
            "perm_byte_step (solve)",
        ] {
            assert!(
                out.contains(&format!("| {kernel} |")),
                "no {kernel} row:\n{out}"
            );
        }
        assert!(out.contains(", 0 mismatched"), "{out}");
        assert!(!out.contains("| NO |"), "{out}");
    }
}
