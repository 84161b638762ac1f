//! Deterministic bytes: the tablebase files and manifest.json depend only on
//! the game and its parameters, whatever the thread count, memory path, disk
//! layout, or interruptions along the way.

use crate::common;

use common::{assert_same, build_cmd, build_with, contents, open, stderr, tbforge};
use std::path::Path;
use std::process::Output;
use std::time::Duration;
use tbforge::pipeline::ExternalPlan;
use tbforge::registry::AnyGame;
use tbforge::solve::BUILD_LOG;

/// In memory with 1 and 3 threads, and through the external path with small
/// chunks over two disks: identical directories.
pub fn paths_agree(g: &AnyGame, chunk: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("memory1");
    build_with(g, &reference, 1, |_| {});
    let expected = contents(&reference);
    assert!(expected.contains_key("manifest.json"));
    assert!(
        !expected.keys().any(|k| k.starts_with('.')),
        "no temporary or state file left: {:?}",
        expected.keys()
    );

    let threads3 = tmp.path().join("memory3");
    build_with(g, &threads3, 3, |_| {});
    assert_same(
        &contents(&threads3),
        &expected,
        "thread count changed the bytes",
    );

    let external = tmp.path().join("external");
    let disks = vec![tmp.path().join("diskA"), tmp.path().join("diskB")];
    build_with(g, &external, 2, |o| {
        o.disks = disks.clone();
        o.external_plan = Some(ExternalPlan {
            checkpoint_every: std::time::Duration::ZERO,
            chunk,
            lookup_chunk: chunk * 5,
            run_capacity: 100_000,
            // Earlier partitions' values in memory wherever a first scan
            // looks them up (run files: the team's and pipeline tests).
            first_scan_values: u64::MAX,
        });
    });
    assert_same(
        &contents(&external),
        &expected,
        "the external path changed the bytes",
    );
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(external.join(BUILD_LOG)).unwrap()).unwrap();
    assert_eq!(log["mode"], "external");
    assert!(log["scratch_bytes_written"].as_u64().unwrap() > 0);
}

#[test]
fn tictactoe_paths_agree() {
    paths_agree(&open("tictactoe", &[]), 256);
}

#[test]
fn connect4_paths_agree() {
    paths_agree(&open("connect4", &[("width", "4"), ("height", "4")]), 4096);
}

#[test]
fn morris_paths_agree() {
    // Cycles inside partitions, captures across them, symmetry-unused indices.
    paths_agree(&open("morris", &[("max", "3")]), 1 << 16);
}

/// `tbforge build tictactoe --backend cpu EXTRA... --out DIR` where DIR holds
/// an unfinished build's state file `state`.
fn build_over_state(state: &str, extra: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join(".tbforge-build.json"), state).unwrap();
    let mut args = vec!["build", "tictactoe", "--backend", "cpu"];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    tbforge(&args)
}

#[test]
fn refuses_to_resume_another_game() {
    let state = serde_json::json!({
        "format_version": 2, "game": "connect4:height=4,width=4", "param_hash": "0",
        "external": false, "layers": null, "reachable_per_slot": null, "finished": [], "current": null
    });
    let o = build_over_state(&state.to_string(), &["--resume"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cannot resume") && err.contains("connect4"),
        "{err}"
    );
}

/// Kills a CLI build through the pipeline (`--mem-limit 1M`) at several
/// moments, resumes it each time, and checks the result against an
/// uninterrupted build in memory.
pub fn resume_after_kills(name: &str, params: &[&str], delays_ms: &[u64]) {
    resume_after_kills_with(name, params, &["--mem-limit", "1M"], delays_ms);
}

/// [`resume_after_kills`] with other build arguments (`--mem-limit` among
/// them); returns how many kills hit a build whose last checkpoint lay
/// inside a pass.
pub fn resume_after_kills_with(
    name: &str,
    params: &[&str],
    more: &[&str],
    delays_ms: &[u64],
) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let mut game = vec![name];
    for p in params {
        game.extend(["--param", p]);
    }
    let run = |out: &Path, extra: &[&str]| build_cmd(&game, out, extra);
    let reference = tmp.path().join("reference");
    let o = run(&reference, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = contents(&reference);

    let out = tmp.path().join("killed");
    let disk = tmp.path().join("disk");
    let mut extra = vec!["--disk"];
    extra.push(disk.to_str().unwrap());
    extra.extend_from_slice(more);
    let mut killed = 0;
    let mut inside_pass = 0;
    for (i, &delay) in delays_ms.iter().enumerate() {
        let mut args = extra.clone();
        if i > 0 {
            args.push("--resume");
        }
        let mut child = run(&out, &args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL: no chance to clean up
            killed += 1;
            child.wait().unwrap();
            let state =
                std::fs::read_to_string(out.join(".tbforge-build.json")).unwrap_or_default();
            if state.contains("\"within\"") {
                inside_pass += 1;
            }
        }
        child.wait().unwrap();
        if out.join("manifest.json").exists() && !out.join(".tbforge-build.json").exists() {
            // Finished before its kill: checked, and begun again, so that
            // the kills left may land inside a build (a --resume of a
            // finished build does nothing).
            assert_same(
                &contents(&out),
                &expected,
                "a build resumed until it finished changed the bytes",
            );
            std::fs::remove_dir_all(&out).unwrap();
            let _ = std::fs::remove_dir_all(&disk);
        }
    }
    let o = run(&out, &[extra.as_slice(), &["--resume"]].concat())
        .output()
        .unwrap();
    assert!(o.status.success(), "resume failed: {}", stderr(&o));
    assert!(killed > 0, "no build was interrupted; lower the delays");
    assert_same(
        &contents(&out),
        &expected,
        "a resumed build changed the bytes",
    );
    inside_pass
}

#[test]
fn tictactoe_resumes_after_kill() {
    resume_after_kills("tictactoe", &[], &[5, 40, 80, 120]);
}

#[test]
fn morris_resumes_after_kills() {
    // Kills land in the forward search, inside the passes of a partition
    // (resumed from its pass checkpoint) and between partitions. 18 MiB
    // leaves room for the candidate bits, so 3-3's 27 passes go over their
    // candidates (4 s here); expanding every pending position (20 s) is the
    // path connect4_resumes_from_checkpoints_inside_passes kills.
    resume_after_kills_with(
        "morris",
        &["max=3"],
        &["--mem-limit", "18M"],
        &[100, 400, 900, 1600, 2500],
    );
}

#[test]
fn connect4_resumes_from_checkpoints_inside_passes() {
    // Checkpoints after every chunk and bucket; kills at fresh random moments
    // (the seed is printed) must land inside passes, and every resume must
    // end with the uninterrupted build's bytes.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("kill delays seed {seed}");
    let mut x = seed | 1;
    let delays: Vec<u64> = (0..8)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            30 + x % 1000
        })
        .collect();
    println!("kill delays {delays:?} ms");
    let inside = resume_after_kills_with(
        "connect4",
        &["width=4", "height=4"],
        &["--mem-limit", "1M", "--checkpoint-every", "0"],
        &delays,
    );
    assert!(
        inside > 0,
        "no kill landed inside a pass (delays {delays:?})"
    );
}

#[test]
fn a_resume_of_a_finished_build_builds_nothing_and_names_a_missing_file() {
    // A batch job that always passes --resume (scripts/slurm) may be
    // requeued after its build had in fact finished.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    let game = ["tictactoe"];
    let o = build_cmd(&game, &out, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let before = contents(&out);
    let log_before = std::fs::read(out.join(BUILD_LOG)).unwrap();
    // As a build killed after its manifest stood, before its end removed
    // the pass journal, leaves it.
    let journal = out.join(".tbforge-passes.jsonl");
    std::fs::write(&journal, "{}\n").unwrap();

    let o = build_cmd(&game, &out, &["--resume"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["builds"][0]["mode"], "finished", "{report}");
    assert_eq!(
        report["builds"][0]["files"].as_u64(),
        Some(before.len() as u64 - 1)
    );
    assert!(!journal.exists(), "the pass journal left by the killed end");
    assert_same(&contents(&out), &before, "a resume of a finished build");
    assert_eq!(std::fs::read(out.join(BUILD_LOG)).unwrap(), log_before);
    let o = tbforge(&[
        "build",
        "tictactoe",
        "--backend",
        "cpu",
        "--resume",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("already built"),
        "{o:?}"
    );

    // Another game's finished build is not built over.
    let o = build_cmd(&["nim"], &out, &["--resume"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cannot resume") && err.contains("tictactoe"),
        "{err}"
    );
    assert_same(&contents(&out), &before, "a refused resume");

    // A file gone: the error names it, and nothing is built.
    let gone = before.keys().find(|k| k.ends_with(".tbf")).unwrap().clone();
    std::fs::remove_file(out.join(&gone)).unwrap();
    let o = build_cmd(&game, &out, &["--resume"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&gone) && err.contains("missing") && err.contains("tbforge verify"),
        "{err}"
    );
    assert!(!out.join(&gone).exists());
}

#[test]
fn unfinished_build_is_not_overwritten_without_resume() {
    let o = build_over_state("{}", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"));
}

#[test]
fn a_resume_keeps_the_chunking_its_scratch_was_cut_with() {
    // The plan a run derives depends on the budget it has left (a resumed
    // layered build holds fewer layers' reached bits); the scratch of a pass
    // under way was cut by the first run's plan. Resuming under another
    // --mem-limit must read it that way and end with the same bytes.
    let tmp = tempfile::tempdir().unwrap();
    let game = ["connect4", "--param", "width=5", "--param", "height=4"];
    let reference = tmp.path().join("reference");
    let o = build_cmd(&game, &reference, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tmp.path().join("killed");
    let disk = tmp.path().join("disk");
    let first = [
        "--mem-limit",
        "1M",
        "--checkpoint-every",
        "0",
        "--disk",
        disk.to_str().unwrap(),
    ];
    let mut inside = false;
    for delay in [60u64, 120, 200, 300, 450, 650, 900, 1200] {
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_dir_all(&disk);
        let mut child = build_cmd(&game, &out, &first)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let state = std::fs::read_to_string(out.join(".tbforge-build.json")).unwrap_or_default();
        if state.contains("\"within\"") {
            inside = true;
            break;
        }
    }
    assert!(inside, "no kill landed inside a pass");
    let o = build_cmd(
        &game,
        &out,
        &[
            "--mem-limit",
            "64M",
            "--disk",
            disk.to_str().unwrap(),
            "--resume",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "resume failed: {}", stderr(&o));
    assert_same(
        &contents(&out),
        &contents(&reference),
        "a resume under another --mem-limit changed the bytes",
    );
}
