//! `tbforge serve`: the HTTP API against the probe API on tablebases built
//! here, its errors, a bounded load test on loopback, and the binary's
//! `serve` and `bench serve` commands.
#![cfg(feature = "serve")]

use crate::common;

use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tbforge::probe::{probe_text_in, Tablebase};
use tbforge::registry::GameVisitor;
use tbforge::serve::{load_blocking, Explorer, LoadOptions, Running};
use tbforge::Game;

/// The tablebases every test serves: (route name, build arguments).
const BUILDS: &[(&str, &[&str])] = &[
    ("tictactoe", &["tictactoe"]),
    (
        "connect4",
        &["connect4", "--param", "width=4", "--param", "height=4"],
    ),
    ("morris", &["morris", "--param", "max=3"]),
    ("checkers", &["checkers", "--param", "pieces=2"]),
];

struct Fixture {
    _dir: tempfile::TempDir,
    dirs: Vec<PathBuf>,
    explorer: Arc<Explorer>,
    server: Running,
}

/// Builds the tablebases once (through the command line, so that each has
/// its build log) and serves them for every test of this file.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut dirs = Vec::new();
        for (name, args) in BUILDS {
            let out = dir.path().join(name);
            let o = common::build_cmd(args, &out, &[]).output().unwrap();
            assert!(o.status.success(), "{name}: {}", common::stderr(&o));
            dirs.push(out);
        }
        let explorer = Arc::new(Explorer::open(&dirs).unwrap());
        let server = Arc::clone(&explorer).spawn("127.0.0.1:0", Some(2)).unwrap();
        Fixture {
            _dir: dir,
            dirs,
            explorer,
            server,
        }
    })
}

/// Percent-encodes all but RFC 3986's unreserved characters.
fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// One GET on a connection of its own: (status, content type, body).
fn get_raw(addr: SocketAddr, path: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("GET {path}: no header end in {all:?}"));
    let head = String::from_utf8_lossy(&all[..split]).into_owned();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let ctype = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    (status, ctype, all[split + 4..].to_vec())
}

/// One GET whose answer must be JSON: (status, value).
fn get(addr: SocketAddr, path: &str) -> (u16, Json) {
    let (status, ctype, body) = get_raw(addr, path);
    assert_eq!(ctype, "application/json", "GET {path}");
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("GET {path}: {e}: {}", String::from_utf8_lossy(&body)));
    (status, v)
}

fn probe_path(name: &str, position: &str) -> String {
    format!("/api/{}?position={}", enc(name), enc(position))
}

/// Every legal position of the tablebase, as text, that the probe API answers.
fn every_position(tb: &Tablebase) -> Vec<String> {
    struct All<'a>(&'a Tablebase);
    impl GameVisitor for All<'_> {
        type Output = Vec<String>;
        fn visit<G: Game>(self, game: &G) -> Vec<String> {
            let mut out = Vec::new();
            for p in game.partitions() {
                for r in 0..game.partition_size(p) {
                    if let Some(pos) = game.unrank(p, tbforge::Rank(r)) {
                        if self.0.probe(game, &pos).is_ok() {
                            out.push(game.format_position(&pos));
                        }
                    }
                }
            }
            out
        }
    }
    let m = tb.manifest();
    tbforge::registry::open_game(&m.game, &m.params)
        .unwrap()
        .visit(All(tb))
}

/// The API's answer must be the probe's report (moves in any order), its
/// moves sorted best first, each move's position the one it leads to.
fn check_answer(name: &str, tb: &Tablebase, text: &str, api: &Json) {
    let report = probe_text_in(tb, text).unwrap();
    let mut want = serde_json::to_value(&report).unwrap();
    let mut got = api.clone();
    assert_eq!(got["name"], name);
    got.as_object_mut().unwrap().remove("name");
    // The order of moves is the API's own (best first); compare as sets.
    let by_move = |v: &mut Json| {
        let moves = v["moves"].as_array_mut().unwrap();
        moves.sort_by(|a, b| a["move"].as_str().cmp(&b["move"].as_str()));
    };
    let api_order: Vec<Json> = api["moves"].as_array().unwrap().clone();
    by_move(&mut want);
    by_move(&mut got);
    assert_eq!(got, want, "{name} {text}");
    // Best first: wins quickest first, then draws, then losses slowest first.
    let key = |m: &Json| -> (u8, i64) {
        let d = m["distance"].as_i64();
        match m["outcome"].as_str().unwrap() {
            "win" => (0, d.unwrap_or(i64::MAX)),
            "draw" => (1, 0),
            _ => (2, -d.unwrap_or(i64::MAX)),
        }
    };
    let keys: Vec<_> = api_order.iter().map(key).collect();
    assert!(
        keys.windows(2).all(|w| w[0] <= w[1]),
        "{name} {text}: not best first: {keys:?}"
    );
}

#[test]
fn every_tictactoe_position_answers_as_the_probe() {
    let f = fixture();
    let tb = Tablebase::open(&f.dirs[0]).unwrap();
    let positions = every_position(&tb);
    // Tic-tac-toe's legal positions (the manifest's count), each answered.
    assert_eq!(positions.len() as u64, tb.manifest().totals.positions);
    for text in &positions {
        let (status, v) = get(f.server.addr(), &probe_path("tictactoe", text));
        assert_eq!(status, 200, "{text}: {v}");
        check_answer("tictactoe", &tb, text, &v);
        // Following a move gives the position the move names, whose value
        // is the move's, seen from the other side.
        if let Some(m) = v["moves"].as_array().unwrap().first() {
            let next = probe_text_in(&tb, m["position"].as_str().unwrap()).unwrap();
            let flipped = match m["outcome"].as_str().unwrap() {
                "win" => "loss",
                "loss" => "win",
                o => o,
            };
            assert_eq!(next.result.outcome.to_string(), flipped, "{text} {m}");
            assert_eq!(
                next.result.distance.map(|d| d + 1),
                m["distance"].as_u64().map(|d| d as u32),
                "{text} {m}"
            );
        }
    }
}

#[test]
fn sampled_positions_of_every_game_answer_as_the_probe() {
    let f = fixture();
    for (i, (name, _)) in BUILDS.iter().enumerate() {
        let tb = Tablebase::open(&f.dirs[i]).unwrap();
        let sample = f.explorer.sample_positions(name, 150);
        assert!(sample.len() >= 50, "{name}: {} positions", sample.len());
        for text in &sample {
            let (status, v) = get(f.server.addr(), &probe_path(name, text));
            assert_eq!(status, 200, "{name} {text}: {v}");
            check_answer(name, &tb, text, &v);
        }
    }
}

#[test]
fn the_command_line_probe_agrees() {
    let f = fixture();
    for (i, (name, _)) in BUILDS.iter().enumerate() {
        for text in f.explorer.sample_positions(name, 5) {
            let o = common::tbforge(&["probe", f.dirs[i].to_str().unwrap(), &text, "--json"]);
            assert!(o.status.success(), "{name} {text}: {}", common::stderr(&o));
            let cli: Json = serde_json::from_slice(&o.stdout).unwrap();
            let (status, api) = get(f.server.addr(), &probe_path(name, &text));
            assert_eq!(status, 200);
            for k in ["outcome", "distance", "position", "partition", "rank"] {
                assert_eq!(api[k], cli[k], "{name} {text}: {k}");
            }
            let moves = |v: &Json| {
                let mut m: Vec<String> = v["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.to_string())
                    .collect();
                m.sort();
                m
            };
            assert_eq!(moves(&api), moves(&cli), "{name} {text}");
        }
    }
}

/// The error's status and message.
fn error(path: &str) -> (u16, String) {
    let (status, v) = get(fixture().server.addr(), path);
    let message = v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: no error message in {v}"))
        .to_string();
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "{path}: {message:?}"
    );
    (status, message)
}

#[test]
fn bad_input_is_400_with_a_message() {
    let f = fixture();
    let (s, m) = error(&probe_path("tictactoe", "xx"));
    assert_eq!(s, 400);
    assert!(m.contains("`xx`"), "{m}");
    let (s, m) = error("/api/tictactoe");
    assert_eq!(s, 400);
    assert!(m.contains("position="), "{m}");
    let (s, m) = error("/api/tictactoe?position=.........&depth=3");
    assert_eq!(s, 400);
    assert!(m.contains("`depth`"), "{m}");
    // A position with more pieces than the tablebase was built for.
    let (s, m) = error(&probe_path("checkers", "W:W18,K25:B1"));
    assert_eq!(s, 400);
    assert!(m.contains("not in this tablebase"), "{m}");
    // Garbage of every kind: never a 5xx, never a dropped connection.
    let mut x: u64 = 12345;
    for (name, _) in BUILDS {
        for len in 0..60 {
            let text: String = (0..len)
                .map(|_| {
                    x = tbforge::hash::mix64(x);
                    let alphabet = b"xo.,:;/-WBKwbh=0123456789 acdefg\\\"%\x7f";
                    alphabet[(x % alphabet.len() as u64) as usize] as char
                })
                .collect();
            let (status, v) = get(f.server.addr(), &probe_path(name, &text));
            assert!(
                status == 200 || status == 400,
                "{name} {text:?}: {status} {v}"
            );
            if status == 400 {
                assert!(v["error"].is_string(), "{v}");
            }
        }
    }
    // Not UTF-8 once decoded.
    let (s, _) = error("/api/tictactoe?position=%FF%FE");
    assert_eq!(s, 400);
    let (status, _) = get(f.server.addr(), &probe_path("tictactoe", "........."));
    assert_eq!(status, 200, "the server still answers");
}

#[test]
fn unknown_names_and_routes_are_404() {
    let (s, m) = error(&probe_path("nosuchgame", "x"));
    assert_eq!(s, 404);
    assert!(m.contains("`nosuchgame`") && m.contains("tictactoe"), "{m}");
    let (s, _) = error("/api/nosuchgame/info");
    assert_eq!(s, 404);
    let (s, _) = error("/api/tictactoe/nothing");
    assert_eq!(s, 404);
    let (s, _) = error("/nothing/here");
    assert_eq!(s, 404);
    let (s, m) = error("/assets/nothing.js");
    assert_eq!(s, 404);
    assert!(m.contains("app.js"), "{m}");
}

#[test]
fn games_info_and_stats() {
    let f = fixture();
    let (s, games) = get(f.server.addr(), "/api/games");
    assert_eq!(s, 200);
    let names: Vec<&str> = games
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = BUILDS.iter().map(|b| b.0).collect();
    assert_eq!(names, want);
    for (i, g) in games.as_array().unwrap().iter().enumerate() {
        let name = want[i];
        let tb = Tablebase::open(&f.dirs[i]).unwrap();
        // The start the page opens with answers.
        let start = g["start"].as_str().unwrap();
        assert_eq!(get(f.server.addr(), &probe_path(name, start)).0, 200);
        let (s, info) = get(f.server.addr(), &format!("/api/{name}/info"));
        assert_eq!(s, 200);
        let local = tbforge::format::info(&f.dirs[i]).unwrap();
        let t = &local.totals;
        for (k, want) in [
            ("positions", t.positions),
            ("wins", t.wins),
            ("draws", t.draws),
            ("losses", t.losses),
        ] {
            assert_eq!(info[k].as_u64(), Some(want), "{name}: {k} in {info}");
        }
        assert_eq!(info["files"].as_array().unwrap().len(), local.files.len());
        let (s, stats) = get(f.server.addr(), &format!("/api/{name}/stats"));
        assert_eq!(s, 200);
        assert!(stats["note"].is_null(), "{name}: {}", stats["note"]);
        let parts = stats["partitions"].as_array().unwrap();
        assert_eq!(parts.len(), tb.manifest().files.len());
        let sum = |v: &Json| -> u64 {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .sum()
        };
        let mut longest = 0;
        for (p, file) in parts.iter().zip(&tb.manifest().files) {
            // The scanned histogram adds up to the manifest's counts.
            assert_eq!(sum(&p["win_distances"]), file.wins, "{name} {}", file.name);
            assert_eq!(
                sum(&p["loss_distances"]),
                file.losses,
                "{name} {}",
                file.name
            );
            for h in ["win_distances", "loss_distances"] {
                longest = longest.max(p[h].as_array().unwrap().len().saturating_sub(1));
            }
        }
        assert_eq!(
            Some(longest as u32),
            tb.manifest().totals.max_distance,
            "{name}"
        );
        // The build log's partitions, as the build solved them.
        let timeline = &stats["timeline"]["partitions"];
        assert_eq!(
            timeline.as_array().map(Vec::len),
            Some(tb.manifest().files.len()),
            "{name}"
        );
    }
}

#[test]
fn the_page_and_its_assets_are_served() {
    let f = fixture();
    let (s, ctype, body) = get_raw(f.server.addr(), "/");
    assert_eq!(s, 200);
    assert!(ctype.starts_with("text/html"), "{ctype}");
    let html = String::from_utf8(body).unwrap();
    let mut assets = 0;
    for (i, _) in html.match_indices("/assets/") {
        let file: String = html[i..].chars().take_while(|c| *c != '"').collect();
        let (s, ctype, body) = get_raw(f.server.addr(), &file);
        assert_eq!(s, 200, "{file}");
        assert!(ctype.starts_with("text/"), "{file}: {ctype}");
        assert!(body.len() > 500, "{file}: {} bytes", body.len());
        assets += 1;
    }
    assert!(assets >= 4, "{assets} assets referenced");
    // Nothing is loaded from elsewhere: the page works without a network.
    assert!(
        !html.contains("https://") && !html.contains("http://") && !html.contains("src=\"//"),
        "the page loads something from outside"
    );
}

#[test]
fn two_tablebases_of_one_game_are_named_by_directory() {
    let f = fixture();
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("small");
    let b = t.path().join("large");
    for (dir, width) in [(&a, "width=4"), (&b, "width=5")] {
        let o = common::build_cmd(
            &["connect4", "--param", width, "--param", "height=3"],
            dir,
            &[],
        )
        .output()
        .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
    }
    let ex = Arc::new(Explorer::open(&[a.clone(), b.clone(), f.dirs[0].clone()]).unwrap());
    assert_eq!(ex.names(), ["small", "large", "tictactoe"]);
    let server = Arc::clone(&ex).spawn("127.0.0.1:0", Some(1)).unwrap();
    let (s, v) = get(server.addr(), &probe_path("large", "5"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["game"], "connect4:height=3,width=5");
    let (s, v) = get(server.addr(), &probe_path("small", "5"));
    assert_eq!(s, 400, "{v}");
    assert_eq!(get(server.addr(), &probe_path("connect4", "1")).0, 404);
    server.stop().unwrap();
    // Two directories of one name and game cannot both be served.
    let e = Explorer::open(&[a.clone(), a.clone()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`small`") && e.contains("different names"),
        "{e}"
    );
}

#[test]
fn engine_files_answer_as_the_full_tablebase_and_say_why_no_histogram() {
    let f = fixture();
    let t = tempfile::tempdir().unwrap();
    let engine = t.path().join("engine");
    let o = common::tbforge(&[
        "export",
        f.dirs[3].to_str().unwrap(),
        "--engine",
        engine.to_str().unwrap(),
        // Distances too, so that every answer is the full tablebase's.
        "--distance",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let ex = Arc::new(Explorer::open(std::slice::from_ref(&engine)).unwrap());
    let server = Arc::clone(&ex).spawn("127.0.0.1:0", Some(1)).unwrap();
    let full = Tablebase::open(&f.dirs[3]).unwrap();
    for text in f.explorer.sample_positions("checkers", 40) {
        let (status, v) = get(server.addr(), &probe_path("checkers", &text));
        assert_eq!(status, 200, "{text}: {v}");
        check_answer("checkers", &full, &text, &v);
    }
    let (status, stats) = get(server.addr(), "/api/checkers/stats");
    assert_eq!(status, 200);
    assert!(
        stats["note"].as_str().unwrap().contains("engine files"),
        "{}",
        stats["note"]
    );
    assert!(stats["partitions"][0]["win_distances"].is_null());
    server.stop().unwrap();
}

#[test]
fn parallel_load_on_loopback_has_no_error() {
    let f = fixture();
    let mut paths = Vec::new();
    for (name, _) in BUILDS {
        for p in f.explorer.sample_positions(name, 64) {
            paths.push(probe_path(name, &p));
        }
    }
    let options = LoadOptions {
        connections: 32,
        requests: 20_000,
        max_time: Duration::from_secs(120),
    };
    let r = load_blocking(f.server.addr(), paths, options, 1).unwrap();
    // Straight to the process's stderr, past the test harness's capture:
    // the figures belong in every run's log.
    let _ = writeln!(
        std::io::stderr(),
        "load: {} requests over {} connections, {} errors, {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        r.requests, options.connections, r.errors, r.requests_per_second, r.p50_ms, r.p99_ms, r.max_ms
    );
    assert_eq!(r.errors, 0, "first error: {:?}", r.first_error);
    assert_eq!(r.requests, options.requests, "stopped by the time bound");
    assert!(r.bytes > 0 && r.p99_ms > 0.0);
}

#[test]
fn the_binary_serves_and_benches() {
    let f = fixture();
    let mut child = Command::new(common::EXE)
        .arg("serve")
        .args(&f.dirs)
        .args(["--bind", "127.0.0.1:0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    let (s, v) = get(addr, &probe_path("morris", "W:a1,a4,d2;B:g7,g4,f4;w"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(s, 200, "{v}");
    let tb = Tablebase::open(&f.dirs[2]).unwrap();
    check_answer("morris", &tb, "W:a1,a4,d2;B:g7,g4,f4;w", &v);

    let o = common::tbforge(&[
        "bench",
        "serve",
        f.dirs[0].to_str().unwrap(),
        f.dirs[3].to_str().unwrap(),
        "--requests",
        "2000",
        "--connections",
        "8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let rows: Json = serde_json::from_slice(&o.stdout).unwrap();
    for r in rows.as_array().unwrap() {
        assert_eq!(r["errors"], 0, "{r}");
        assert_eq!(r["requests"], 2000, "{r}");
        assert!(r["requests_per_second"].as_f64().unwrap() > 0.0, "{r}");
    }

    let o = common::tbforge(&["serve", "/nonexistent/tablebase"]);
    assert_eq!(o.status.code(), Some(2));
    let err = common::stderr(&o);
    assert!(
        err.contains("/nonexistent/tablebase") && err.lines().count() == 1,
        "{err}"
    );
}
