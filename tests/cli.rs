//! The command line's contract: help, games, exit codes and one-line errors.

use std::process::{Command, Output};

fn tbforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tbforge"))
        .args(args)
        .output()
        .expect("run tbforge")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
