//! The command line's contract: help, games, exit codes and one-line errors.

use crate::common;

use common::{build_cmd, stderr, tbforge};

#[test]
fn help_names_every_subcommand() {
    let o = tbforge(&["--help"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for sub in ["games", "build", "verify", "info", "probe", "bench"] {
        assert!(text.contains(sub), "--help lacks {sub}: {text}");
    }
}

#[test]
fn games_json_lists_tictactoe_with_notation() {
    let o = tbforge(&["games", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let games = v["games"].as_array().expect("games array");
    let ttt = games
        .iter()
        .find(|g| g["name"] == "tictactoe")
        .expect("tictactoe listed");
    assert!(ttt["notation"].as_str().unwrap().contains("x, o"));
}

#[test]
fn unknown_game_is_a_usage_error_on_one_line() {
    let o = tbforge(&["build", "chess", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("unknown game `chess`"), "{err}");
}

#[test]
fn bad_params_are_usage_errors() {
    for args in [
        &[
            "build",
            "tictactoe",
            "--backend",
            "cpu",
            "--param",
            "size=4",
        ][..],
        &[
            "build",
            "tictactoe",
            "--backend",
            "cpu",
            "--param",
            "noequals",
        ][..],
        &["build", "tictactoe", "--backend", "cpu", "--threads", "0"][..],
    ] {
        let o = tbforge(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim().lines().count(),
            1,
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn probe_exit_codes_follow_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m3");
    let d = dir.to_str().unwrap();
    let o = build_cmd(&["morris", "--param", "max=3"], &dir, &[])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A flying mill wins at once: found, exit 0.
    let o = tbforge(&["probe", d, "W:a1,a4,g7;B:c3,e5,f2;w", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["outcome"].as_str(), v["distance"].as_u64()),
        (Some("win"), Some(1))
    );
    // Four white pieces: partition 4-3 was not built: exit 1, one line naming the fix.
    let o = tbforge(&["probe", d, "W:a1,a4,a7,d2;B:g7,g4,f4;w"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1);
    assert!(stderr(&o).contains("build a larger instance"));
    // Not a position: exit 2.
    let o = tbforge(&["probe", d, "W:a1,zz;B:g7;w"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn memory_limit_below_the_forward_search_is_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    let game = ["connect4", "--param", "width=4", "--param", "height=4"];
    let o = build_cmd(&game, &out, &["--mem-limit", "16K"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("forward search") && err.contains("raise it to at least"),
        "{err}"
    );
    assert!(
        !out.join(".tbforge-build.json").exists(),
        "a refused build left state"
    );
    // The suggested limit works, with no --resume needed.
    let o = build_cmd(&game, &out, &["--mem-limit", "1M"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bench_stages_tabulates_the_build_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ttt");
    let d = dir.to_str().unwrap();
    let o = build_cmd(&["tictactoe"], &dir, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();

    let o = tbforge(&["bench", "stages", d, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let parts = v["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), files.len());
    for (p, f) in parts.iter().zip(files) {
        assert_eq!(p["name"].as_str(), f["partition_name"].as_str());
        for key in ["index_size", "classes", "positions", "bytes"] {
            assert_eq!(p[key], f[key], "{key}");
        }
        assert!(["kernels", "generic"].contains(&p["solver"].as_str().unwrap()));
        assert!(p["solve_seconds"].as_f64().unwrap() >= 0.0);
    }
    for key in ["index_size", "classes", "positions"] {
        assert_eq!(v["totals"][key], manifest["totals"][key], "{key}");
    }
    let bytes: u64 = files.iter().map(|f| f["bytes"].as_u64().unwrap()).sum();
    assert_eq!(v["totals"]["bytes"], bytes);

    // The table: a title, a header, a row per partition and the totals.
    let o = tbforge(&["bench", "stages", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 + files.len(), "{text}");
    assert!(
        lines[1].contains("index size") && lines[1].contains("device s"),
        "{text}"
    );
    let first = files[0]["partition_name"].as_str().unwrap();
    assert!(lines[2].starts_with(&format!("{first} ")), "{text}");
    let last: Vec<&str> = lines.last().unwrap().split_whitespace().collect();
    assert_eq!(last[0], "total");
    assert_eq!(last[1], v["totals"]["index_size"].to_string());
    assert_eq!(last.last().unwrap().to_string(), bytes.to_string());

    // The manifest holds no timings: they would make its bytes differ by run.
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(!text.contains("seconds"), "{text}");

    // No build log: a usage error on one line.
    std::fs::remove_file(dir.join("build-log.json")).unwrap();
    let o = tbforge(&["bench", "stages", d]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("build-log.json"), "{}", stderr(&o));
}

/// `bdd-solve` solves Connect Four 4x4 over BDD-indexed layers, a byte per reachable state, and
/// finds every value equal to the regular index's; a game without a BDD encoding is refused on
/// one line.
#[test]
fn bdd_solve_compares_with_the_regular_index() {
    let o = tbforge(&[
        "bdd-solve",
        "connect4",
        "--param",
        "width=4",
        "--param",
        "height=4",
        "--compare",
        "--mem-limit",
        "256M",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("positions, 0 different"), "{out}");
    assert!(out.contains("17 layers solved over BDD ranks"), "{out}");
    let o = tbforge(&["bdd-solve", "nim"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nim has no BDD encoding"), "{err}");
}
