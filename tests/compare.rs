//! `tbforge compare`: two tablebases of one game, position by position, and
//! their manifests' position totals; exit 0 when all agree, 1 on a
//! difference, 2 when they cannot be compared.

use crate::common;

use common::{build_cmd, build_with, open, stderr, tbforge};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tbforge::compare::{compare_dirs, CompareReport};
use tbforge::format::{
    read_manifest, write_manifest, write_partition_file_with, TableFile, ValueEncoding,
    WriteOptions,
};
use tbforge::{Game, Rank, Value};

/// Builds the game with `params` into `dir/name` through the command line.
fn build(dir: &Path, name: &str, game: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let o = build_cmd(game, &out, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// Morris max=3 with `symmetry` on or off, built once for every test of
/// this file (off takes 15 CPU-seconds); tests change copies, never these.
fn morris(symmetry: &str) -> PathBuf {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    let (_, on, off) = BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let [on, off] = ["on", "off"].map(|symmetry| {
            build(
                dir.path(),
                &format!("morris-{symmetry}"),
                &[
                    "morris",
                    "--param",
                    "max=3",
                    "--param",
                    &format!("symmetry={symmetry}"),
                ],
            )
        });
        (dir, on, off)
    });
    match symmetry {
        "on" => on.clone(),
        _ => off.clone(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Replaces partition `name`'s values in the tablebase `dir` by `change`
/// of them, rewritten through the format's writer, and records the new
/// file's size and checksum in the manifest (its counts are left as they
/// were): a tablebase that differs from its source in those values alone.
fn rewrite(dir: &Path, name: &str, change: impl FnOnce(&mut Vec<u8>)) {
    let mut m = read_manifest(dir).unwrap();
    let entry = m
        .files
        .iter_mut()
        .find(|f| f.partition_name == name)
        .unwrap();
    let path = dir.join(&entry.name);
    let mut values = TableFile::open_read(&path)
        .unwrap()
        .read_all_codes()
        .unwrap();
    change(&mut values);
    let info = tbforge::registry::open_game(&m.game, &m.params)
        .unwrap()
        .info();
    let sum = write_partition_file_with(
        &path,
        &info,
        entry.partition,
        m.encoding,
        &values,
        &WriteOptions::default(),
    )
    .unwrap();
    entry.bytes = sum.bytes;
    entry.crc32 = sum.crc32;
    write_manifest(dir, &m).unwrap();
}

fn json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let o = tbforge(args);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", String::from_utf8_lossy(&o.stdout), stderr(&o)));
    (o.status.code(), v)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_agree(r: &CompareReport) {
    assert!(r.ok, "{}", tbforge::compare::render_compare_text(r));
    assert_eq!((r.mismatches, r.missing), (0, 0));
    assert!(r.totals_agree && r.totals.len() == 4, "{:?}", r.totals);
    assert!(r.examples.is_empty() && r.missing_partitions.is_empty());
}

#[test]
fn symmetry_on_and_off_agree_both_ways() {
    let (off, on) = (morris("off"), morris("on"));
    let (m_off, m_on) = (read_manifest(&off).unwrap(), read_manifest(&on).unwrap());
    // Every board of the plain index (each legal index is one position) is
    // looked up in the class index, and every class the other way.
    let r = compare_dirs(&off, &on).unwrap();
    assert_agree(&r);
    assert_eq!(r.compared, m_off.totals.classes);
    assert_eq!(r.compared, m_on.totals.positions);
    assert_eq!(r.partitions.len(), m_off.files.len());
    assert_eq!(
        r.partitions.iter().map(|p| p.indices).sum::<u64>(),
        m_off.totals.index_size
    );
    assert_eq!(r.compared_as, ValueEncoding::Byte);
    let back = compare_dirs(&on, &off).unwrap();
    assert_agree(&back);
    assert_eq!(back.compared, m_on.totals.classes);
    assert!(back.compared < r.compared);

    let o = tbforge(&["compare", s(&off), s(&on)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("all values and totals agree"), "{text}");
    let n = m_off.totals.positions.to_string();
    let line = text.lines().find(|l| l.starts_with("positions")).unwrap();
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        ["positions", &n, &n, "agree"]
    );
    let (code, v) = json(&["compare", s(&on), s(&off), "--json"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["ok"], true);
    assert_eq!(v["compared"], m_on.totals.classes);
    assert_eq!(v["totals"][0]["field"], "positions");
    assert_eq!(v["totals"][0]["a"], v["totals"][0]["b"]);
}

#[test]
fn a_changed_value_is_a_mismatch_with_both_positions() {
    let t = tempfile::tempdir().unwrap();
    let (off, on) = (morris("off"), morris("on"));
    let changed = t.path().join("changed");
    copy_dir(&on, &changed);
    // The first decided class of 3-3 becomes a draw (or a draw a win in 1).
    let mut at = None;
    rewrite(&changed, "3-3", |v| {
        let r = v.iter().position(|&b| b >= 2).unwrap();
        at = Some((r, v[r]));
        v[r] = 1;
    });
    let (r, was) = at.unwrap();
    let g = open("morris", &[("max", "3"), ("symmetry", "on")]);
    let weight = {
        struct W(Rank);
        impl tbforge::registry::GameVisitor for W {
            type Output = u64;
            fn visit<G: Game>(self, game: &G) -> u64 {
                let p = game.partitions().into_iter();
                let p = p.filter(|&p| game.partition_name(p) == "3-3").last();
                game.weights(p.unwrap()).at(self.0)
            }
        }
        g.visit(W(Rank(r as u64)))
    };
    assert!(weight > 1, "a class of several boards");

    // Every board of the class now disagrees, and nothing else.
    let rep = compare_dirs(&off, &changed).unwrap();
    assert!(!rep.ok);
    assert_eq!(rep.mismatches, weight);
    assert!(
        rep.totals_agree,
        "the manifest's counts were left as they were"
    );
    let part = rep.partitions.iter().find(|q| q.name == "3-3").unwrap();
    assert_eq!(part.mismatches, weight);
    assert_eq!(rep.examples.len() as u64, weight.min(10));
    let e = &rep.examples[0];
    assert_eq!((e.partition_b.as_str(), e.rank_b), ("3-3", Rank(r as u64)));
    assert_eq!(e.value_b, "draw");
    let was = Value::from_byte(was);
    let was = format!("{} in {}", was.outcome().unwrap(), was.distance().unwrap());
    assert_eq!(e.value_a, was);
    assert!(
        e.position_a.contains(';') && e.position_b.is_some(),
        "{e:?}"
    );
    // The other way, the class's one index disagrees.
    let back = compare_dirs(&changed, &off).unwrap();
    assert_eq!(back.mismatches, 1);
    assert_eq!(back.examples[0].rank_a, Rank(r as u64));

    let o = tbforge(&["compare", s(&off), s(&changed)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("MISMATCH A 3-3"), "{text}");
    assert!(
        text.contains(&format!("DIFFERENT ({weight} mismatches)")),
        "{text}"
    );
    let (code, v) = json(&["compare", s(&changed), s(&off), "--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["mismatches"], 1);
    assert_eq!(v["ok"], false);
}

#[test]
fn wdl_against_bytes_compares_outcomes_only() {
    let t = tempfile::tempdir().unwrap();
    let off = morris("off");
    let g = open("morris", &[("max", "3"), ("symmetry", "on")]);
    let wdl = t.path().join("on-wdl");
    build_with(&g, &wdl, 2, |o| o.encoding = ValueEncoding::Wdl2);
    let r = compare_dirs(&off, &wdl).unwrap();
    assert_agree(&r);
    assert_eq!(r.compared_as, ValueEncoding::Wdl2);
    assert_eq!(r.encoding_b, ValueEncoding::Wdl2);
    let back = compare_dirs(&wdl, &off).unwrap();
    assert_agree(&back);
    assert_eq!(back.compared_as, ValueEncoding::Wdl2);
    assert_eq!(back.compared, read_manifest(&wdl).unwrap().totals.classes);

    // A distance changed within its outcome (a loss in d becomes a loss in
    // d + 2): a different value byte, the same outcome.
    let changed = t.path().join("changed");
    copy_dir(&off, &changed);
    rewrite(&changed, "3-3", |v| {
        let r = v
            .iter()
            .position(|&b| Value::from_byte(b).outcome() == Some(tbforge::Outcome::Loss))
            .unwrap();
        v[r] += 2;
    });
    let bytes = compare_dirs(&off, &changed).unwrap();
    assert_eq!(bytes.mismatches, 1);
    let e = &bytes.examples[0];
    assert!(
        e.value_a.starts_with("loss in ") && e.value_b.starts_with("loss in "),
        "{e:?}"
    );
    assert_ne!(e.value_a, e.value_b);
    assert_agree(&compare_dirs(&changed, &wdl).unwrap());
}

#[test]
fn a_partition_missing_in_b_is_named() {
    let t = tempfile::tempdir().unwrap();
    let (off, on) = (morris("off"), morris("on"));
    let partial = t.path().join("partial");
    copy_dir(&on, &partial);
    let mut m = read_manifest(&partial).unwrap();
    m.files.retain(|f| f.partition_name != "2-3");
    write_manifest(&partial, &m).unwrap();
    let lost = read_manifest(&off).unwrap().files[0].clone();
    assert_eq!(lost.partition_name, "2-3");

    let r = compare_dirs(&off, &partial).unwrap();
    assert!(!r.ok);
    assert_eq!(r.mismatches, 0);
    assert_eq!(r.missing, lost.classes);
    assert_eq!(r.missing_partitions.len(), 1);
    assert_eq!(r.missing_partitions[0].name, "2-3");
    assert_eq!(r.missing_partitions[0].positions, lost.classes);
    assert!(r.missing_partitions[0].in_game_b);
    assert_eq!(
        r.compared + r.missing,
        read_manifest(&off).unwrap().totals.classes
    );
    let o = tbforge(&["compare", s(&off), s(&partial)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("MISSING partition 2-3"), "{text}");
    assert!(text.contains("B's manifest lists no file for it"), "{text}");
}

#[test]
fn partitions_that_b_s_parameters_leave_out_are_named() {
    let t = tempfile::tempdir().unwrap();
    let on = morris("on");
    let four = build(
        t.path(),
        "four",
        &["morris", "--param", "max=4", "--param", "symmetry=on"],
    );
    // Positions of up to three pieces a side are in both and agree; those
    // with four have no partition in B's game.
    let r = compare_dirs(&four, &on).unwrap();
    assert!(!r.ok && !r.totals_agree);
    assert_eq!(r.mismatches, 0);
    assert_eq!(r.compared, read_manifest(&on).unwrap().totals.classes);
    let names: Vec<(&str, bool)> = r
        .missing_partitions
        .iter()
        .map(|m| (m.name.as_str(), m.in_game_b))
        .collect();
    assert_eq!(names, [("2-4", false), ("4-3", false), ("4-4", false)]);
    assert_eq!(
        r.compared + r.missing,
        read_manifest(&four).unwrap().totals.classes
    );
    let back = compare_dirs(&on, &four).unwrap();
    assert_eq!((back.mismatches, back.missing), (0, 0));
    assert!(!back.ok && !back.totals_agree);
}

#[test]
fn totals_that_differ_are_printed_and_fail() {
    let t = tempfile::tempdir().unwrap();
    let (off, on) = (morris("off"), morris("on"));
    let edited = t.path().join("edited");
    copy_dir(&on, &edited);
    let mut m = read_manifest(&edited).unwrap();
    m.totals.wins += 16;
    m.totals.positions += 16;
    write_manifest(&edited, &m).unwrap();
    let r = compare_dirs(&off, &edited).unwrap();
    assert!(!r.ok && !r.totals_agree);
    assert_eq!(r.mismatches, 0);
    let agree: Vec<(&str, bool)> = r.totals.iter().map(|t| (t.field, t.agree)).collect();
    assert_eq!(
        agree,
        [
            ("positions", false),
            ("wins", false),
            ("draws", true),
            ("losses", true)
        ]
    );
    assert_eq!(r.totals[1].b, r.totals[1].a + 16);
    let o = tbforge(&["compare", s(&off), s(&edited)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("DIFFER") && text.contains("the totals differ"),
        "{text}"
    );
}

#[test]
fn tictactoe_agrees_with_itself() {
    let t = tempfile::tempdir().unwrap();
    let ttt = build(t.path(), "ttt", &["tictactoe"]);
    let m = read_manifest(&ttt).unwrap();
    let r = compare_dirs(&ttt, &ttt).unwrap();
    assert_agree(&r);
    assert_eq!(r.compared, m.totals.classes);
    assert_eq!(r.partitions.len(), m.files.len());
    // The same through a game handed in rather than opened by name.
    let g = tbforge::game::tictactoe::TicTacToe::from_params(&Default::default()).unwrap();
    let opts = tbforge::compare::CompareOptions::default();
    let r = tbforge::compare::compare_game_dirs(&g, &ttt, &g, &ttt, &opts).unwrap();
    assert_agree(&r);
    assert_eq!(r.compared, m.totals.classes);
    let (code, v) = json(&["compare", s(&ttt), s(&ttt), "--json"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["compared"], m.totals.classes);
    assert_eq!(v["game_a"], "tictactoe");
}

/// One line on stderr, exit 2, naming what `needles` say.
fn assert_bad_input(args: &[&str], needles: &[&str]) {
    let o = tbforge(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty());
    for n in needles {
        assert!(err.contains(n), "`{n}` not in {err}");
    }
}

#[test]
fn different_games_and_missing_directories_are_bad_input() {
    let t = tempfile::tempdir().unwrap();
    let ttt = build(t.path(), "ttt", &["tictactoe"]);
    let on = morris("on");
    assert_bad_input(
        &["compare", s(&ttt), s(&on)],
        &[
            &format!("DIR_A {} holds tictactoe", s(&ttt)),
            &format!("DIR_B {} holds morris:max=3,symmetry=on", s(&on)),
            "same game",
        ],
    );
    let nowhere = t.path().join("nowhere");
    assert_bad_input(
        &["compare", s(&nowhere), s(&ttt)],
        &[&format!("DIR_A {}", s(&nowhere)), "no such directory"],
    );
    assert_bad_input(
        &["compare", s(&ttt), s(&nowhere), "--json"],
        &[&format!("DIR_B {}", s(&nowhere)), "no such directory"],
    );
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_bad_input(
        &["compare", s(&ttt), s(&empty)],
        &[&format!("DIR_B {}", s(&empty)), "manifest", "tbforge build"],
    );
    // A file changed behind its manifest's back is refused, not compared.
    let stale = t.path().join("stale");
    copy_dir(&ttt, &stale);
    let m = read_manifest(&stale).unwrap();
    let f = stale.join(&m.files[0].name);
    let other = std::fs::read(ttt.join(&m.files[1].name)).unwrap();
    std::fs::write(&f, other).unwrap();
    assert_bad_input(
        &["compare", s(&ttt), s(&stale)],
        &[
            &format!("DIR_B {}", s(&stale)),
            &m.files[0].name,
            "tbforge verify",
        ],
    );
    match compare_dirs(&ttt, &nowhere) {
        Err(tbforge::compare::CompareError::Input { side, .. }) => {
            assert_eq!(side, tbforge::compare::Side::B)
        }
        other => panic!("{other:?}"),
    }
}
