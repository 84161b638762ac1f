//! Faults a build meets on real machines, through the real command line: a
//! full disk, a file size limit, a directory that cannot be created or
//! written, scratch files removed while the build runs. Each must end in one
//! line naming the path and the fix (exit 2, no panic), leave no file under a
//! final name that is not a finished, correct one, and let `--resume` finish
//! with the bytes of a clean build once the cause is gone.
//!
//! The full-disk tests mount small tmpfs file systems in a private mount
//! namespace (`unshare -m`, needs root or user namespaces); where that is not
//! possible they say so and return, and the file-size-limit test
//! (RLIMIT_FSIZE, any Unix) still covers the write-failure path.

use crate::common;

use common::{assert_same, build_cmd, contents, stderr, tbforge, Files, EXE};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Small (201,755 indices, 1.5 s through the pipeline) with 17 files.
const SMALL: &[&str] = &["connect4", "--param", "width=4", "--param", "height=4"];
/// Big enough (5.6 M indices) that a pipeline build runs for seconds.
const BIG: &[&str] = &["connect4", "--param", "width=5", "--param", "height=4"];

/// A clean in-memory build of `game`, made once per test binary.
fn reference(game: &'static [&'static str]) -> &'static Files {
    static SMALL_REF: OnceLock<Files> = OnceLock::new();
    static BIG_REF: OnceLock<Files> = OnceLock::new();
    let cell = if game == SMALL { &SMALL_REF } else { &BIG_REF };
    cell.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("reference");
        let o = build_cmd(game, &out, &[]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        contents(&out)
    })
}

/// Builds `game` into `out` with `extra` arguments, which must succeed: its files.
fn built(game: &[&str], out: &Path, extra: &[&str]) -> Files {
    let o = build_cmd(game, out, extra).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    contents(out)
}

/// The failed build's one-line error: exit 2, no panic, names `needle`
/// (a path) and contains each of `words`.
fn assert_clear_error(o: &Output, needle: &str, words: &[&str]) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    assert!(!err.contains("panicked"), "a panic: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "does not name {needle}: {err}");
    for w in words {
        assert!(err.contains(w), "does not say `{w}`: {err}");
    }
    err
}

/// After a failed build: every file under a final name is finished and equal
/// to the clean build's; nothing else but the state file and the pass
/// journal is left.
fn assert_only_finished_files(out: &Path, expected: &Files) -> usize {
    let mut finished = 0;
    for (name, bytes) in contents(out) {
        if name == ".tbforge-build.json" || name == ".tbforge-passes.jsonl" {
            continue;
        }
        assert!(!name.contains(".tmp"), "temporary file left: {name}");
        let want = expected
            .get(&name)
            .unwrap_or_else(|| panic!("unexpected file {name}"));
        assert!(
            bytes == *want,
            "{name} is under its final name but is not the finished file"
        );
        finished += 1;
    }
    finished
}

fn verify(out: &Path) {
    let o = tbforge(&["verify", out.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "verify failed: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Whether `unshare -m` can mount a tmpfs here; if not, says why.
fn can_mount_tmpfs() -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    match Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            &format!("mount -t tmpfs -o size=64k tmpfs {dir}"),
        ])
        .output()
    {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            eprintln!(
                "skipping: `unshare -m` + tmpfs mount failed here ({}); the file size limit test covers write failures",
                stderr(&o).trim()
            );
            false
        }
        Err(e) => {
            eprintln!("skipping: `unshare` is not available ({e}); the file size limit test covers write failures");
            false
        }
    }
}

/// A temporary directory holding an empty `mount_point` for a tmpfs; `None`
/// (having said why) where no tmpfs can be mounted.
fn tmpfs_dir(mount_point: &str) -> Option<tempfile::TempDir> {
    if !can_mount_tmpfs() {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(mount_point)).unwrap();
    Some(tmp)
}

/// Runs `script` in a private mount namespace with `$T` the tbforge binary.
fn in_namespace(dir: &Path, script: &str) -> Output {
    let o = Command::new("unshare")
        .args(["-m", "sh", "-euc", script])
        .env("T", EXE)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "script failed: {}", stderr(&o));
    o
}

/// Output `(status, stderr)` saved by a script as `NAME.rc` and `NAME.err`.
fn saved(dir: &Path, name: &str) -> Output {
    use std::os::unix::process::ExitStatusExt;
    let rc: i32 = std::fs::read_to_string(dir.join(format!("{name}.rc")))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    Output {
        status: std::process::ExitStatus::from_raw(rc << 8),
        stdout: Vec::new(),
        stderr: std::fs::read(dir.join(format!("{name}.err"))).unwrap(),
    }
}

fn words(args: &[&str]) -> String {
    args.join(" ")
}

/// Runs a full-disk scenario in a fresh directory: mount a tmpfs of size
/// `small` on `mount`, build `SMALL` with `args` (saved as `full`), keep what
/// it left in `out` as `failed/`, grow the tmpfs to `big`, resume (saved as
/// `resumed`), then run `last`. `None` where no tmpfs can be mounted.
fn fill_and_grow(
    (mount, small, big): (&str, &str, &str),
    args: &str,
    out: &str,
    last: &str,
) -> Option<tempfile::TempDir> {
    let tmp = tmpfs_dir(mount)?;
    let game = words(SMALL);
    let script = format!(
        r#"mount -t tmpfs -o size={small} tmpfs {mount}
rc=0; $T build {game} {args} 2> full.err >/dev/null || rc=$?; echo $rc > full.rc
mkdir failed; cp -a {out}/. failed/
mount -o remount,size={big} {mount}
rc=0; $T build {game} {args} --resume 2> resumed.err >/dev/null || rc=$?; echo $rc > resumed.rc
{last}"#
    );
    in_namespace(tmp.path(), &script);
    Some(tmp)
}

/// After a script that filled a disk (`full.rc`/`full.err`, the output as it
/// was left in `failed/`) and resumed with more space (`resumed.*`, the
/// output in `resumed_dir`): the failure is one clear line naming `needle`,
/// it left only finished files, and the resumed build is the clean one.
/// Returns how many files the failed build had finished.
fn full_then_resumed(dir: &Path, needle: &str, resumed_dir: &str, what: &str) -> usize {
    let expected = reference(SMALL);
    assert_clear_error(&saved(dir, "full"), needle, &["disk full", "--resume"]);
    let finished = assert_only_finished_files(&dir.join("failed"), expected);
    let resumed = saved(dir, "resumed");
    assert!(resumed.status.success(), "resume: {}", stderr(&resumed));
    assert_same(&contents(&dir.join(resumed_dir)), expected, what);
    verify(&dir.join(resumed_dir));
    finished
}

#[test]
fn full_output_disk_stops_cleanly_and_resumes_after_more_space() {
    // Room for some of the 17 files (each takes whole 4 KiB pages), not all.
    let Some(tmp) = fill_and_grow(
        ("out", "40k", "4m"),
        "--backend cpu --json --out out/tb",
        "out/tb",
        "mkdir resumed; cp -a out/tb/. resumed/",
    ) else {
        return;
    };
    let dir = tmp.path();
    let finished = full_then_resumed(dir, "out/tb/", "resumed", "resumed after a full disk");
    assert!(
        finished > 0,
        "the disk filled before any file: make the tmpfs larger"
    );
}

#[test]
fn full_scratch_disk_stops_cleanly_and_resumes_after_more_space() {
    // The pipeline's scratch (values, summaries, runs) of 201,755 indices
    // striped over two disks: one of them holds only 64 KiB.
    let Some(tmp) = fill_and_grow(
        ("small", "64k", "16m"),
        "--backend cpu --json --mem-limit 2M --out out --disk small --disk big",
        "out",
        "ls -A small > small.left",
    ) else {
        return;
    };
    let dir = tmp.path();
    full_then_resumed(
        dir,
        "small/.tbforge-scratch-",
        "out",
        "resumed after a full scratch disk",
    );
    let left = std::fs::read_to_string(dir.join("small.left")).unwrap();
    assert!(left.trim().is_empty(), "scratch left behind: {left}");
}

/// Sets RLIMIT_FSIZE for the child and ignores SIGXFSZ, so that writes past
/// the limit fail with EFBIG instead of killing it: a write failure on any
/// Unix, no mount needed.
fn limit_file_size(c: &mut Command, bytes: u64) {
    // SAFETY: runs in the forked child before exec; setrlimit and signal are
    // async-signal-safe and touch no memory of the parent.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
}

#[test]
fn file_size_limit_stops_cleanly_and_resumes_without_it() {
    let expected = reference(SMALL);
    let biggest = expected.values().map(Vec::len).max().unwrap() as u64;
    for (what, extra) in [
        ("in memory", vec![]),
        ("pipeline", vec!["--mem-limit", "2M", "--disk", "DISK"]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let disk = tmp.path().join("disk");
        let extra: Vec<&str> = extra
            .iter()
            .map(|a| {
                if *a == "DISK" {
                    disk.to_str().unwrap()
                } else {
                    a
                }
            })
            .collect();
        let mut c = build_cmd(SMALL, &out, &extra);
        limit_file_size(&mut c, biggest / 2);
        let o = c.stdout(Stdio::null()).output().unwrap();
        let err = assert_clear_error(
            &o,
            tmp.path().to_str().unwrap(),
            &["file too large", "--resume"],
        );
        assert!(err.contains("ulimit"), "{what}: {err}");
        assert_only_finished_files(&out, expected);
        resume_to(SMALL, &out, &extra, expected, what);
        verify(&out);
    }
}

#[test]
fn a_build_that_fails_at_its_log_stays_unfinished_until_resumed() {
    // The build's last steps, after its manifest stands: the build log,
    // then the pass journal and the state removed. A build stopped between
    // them (here: a directory where its log goes; in CI once, a kill) must
    // not look finished with the journal left beside its files: the state
    // stays until the end, and --resume ends it cleanly.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let disk = tmp.path().join("disk");
    let log = out.join("build-log.json");
    std::fs::create_dir_all(&log).unwrap();
    let extra = ["--mem-limit", "1M", "--disk", disk.to_str().unwrap()];
    let o = build_cmd(SMALL, &out, &extra).output().unwrap();
    assert_clear_error(&o, log.to_str().unwrap(), &["writing build log"]);
    assert!(
        out.join(".tbforge-build.json").exists(),
        "a build whose end failed looks finished"
    );
    assert!(out.join(".tbforge-passes.jsonl").exists());
    std::fs::remove_dir(&log).unwrap();
    resume_to(
        SMALL,
        &out,
        &extra,
        reference(SMALL),
        "a build resumed after its log failed",
    );
    assert!(log.is_file(), "the resumed build wrote no log");
}

#[test]
fn a_file_in_the_way_is_a_clear_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let f = file.to_str().unwrap();
    let fine = tmp.path().join("fine");
    let unused = tmp.path().join("unused");
    let cases: Vec<(Vec<String>, &Path)> = vec![
        (vec!["--out".into(), f.into()], &unused),
        (vec!["--out".into(), format!("{f}/tb")], &unused),
        (
            vec!["--mem-limit".into(), "2M".into(), "--disk".into(), f.into()],
            &fine,
        ),
        (
            vec![
                "--mem-limit".into(),
                "2M".into(),
                "--disk".into(),
                format!("{f}/scratch"),
            ],
            &fine,
        ),
    ];
    for (args, default_out) in cases {
        let mut c = Command::new(EXE);
        c.args(["build", "tictactoe", "--backend", "cpu"]);
        if !args.iter().any(|a| a == "--out") {
            c.arg("--out").arg(default_out);
        }
        let o = c.args(&args).output().unwrap();
        assert_clear_error(&o, f, &["a file is in the way", "remove it"]);
        if default_out.exists() {
            // A refused --disk must not leave an unfinished build behind.
            assert!(
                !default_out.join(".tbforge-build.json").exists(),
                "{args:?} left a state file"
            );
        }
    }
    // After removing the file, the same command works (no --resume needed).
    std::fs::remove_file(&file).unwrap();
    let o = tbforge(&[
        "build",
        "tictactoe",
        "--backend",
        "cpu",
        "--mem-limit",
        "2M",
        "--disk",
        f,
        "--out",
        fine.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_read_only_file_system_is_a_clear_usage_error() {
    let Some(tmp) = tmpfs_dir("ro") else {
        return;
    };
    let dir = tmp.path();
    let script = r#"mount -t tmpfs -o ro,size=64k tmpfs ro
rc=0; $T build tictactoe --backend cpu --out ro/tb 2> out.err >/dev/null || rc=$?; echo $rc > out.rc
rc=0; $T build tictactoe --backend cpu --out tb --mem-limit 2M --disk ro 2> disk.err >/dev/null || rc=$?; echo $rc > disk.rc"#;
    in_namespace(dir, script);
    for name in ["out", "disk"] {
        assert_clear_error(&saved(dir, name), "ro/", &["not writable", "--disk"]);
    }
    assert!(
        !dir.join("tb/.tbforge-build.json").exists(),
        "a refused --disk left a state file"
    );
}

/// Removes every run file it finds in the scratch directories under `disks`
/// until `stop` is set; returns how many it removed.
fn remove_run_files(disks: &[PathBuf], stop: &AtomicBool, removed: &AtomicUsize) {
    while !stop.load(Ordering::Relaxed) {
        for d in disks {
            let Ok(scratch) = std::fs::read_dir(d) else {
                continue;
            };
            for s in scratch.flatten() {
                let Ok(files) = std::fs::read_dir(s.path()) else {
                    continue;
                };
                for f in files.flatten() {
                    let p = f.path();
                    if p.extension().is_some_and(|x| x == "run") && std::fs::remove_file(&p).is_ok()
                    {
                        removed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn scratch_files_removed_mid_build_give_a_clear_error_and_resume_recovers() {
    let expected = reference(BIG);
    let mut failures = 0;
    for attempt in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let disks = vec![tmp.path().join("d1"), tmp.path().join("d2")];
        let extra = [
            "--mem-limit",
            "2M",
            "--disk",
            disks[0].to_str().unwrap(),
            "--disk",
            disks[1].to_str().unwrap(),
        ];
        let child = build_cmd(BIG, &out, &extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stop = AtomicBool::new(false);
        let removed = AtomicUsize::new(0);
        let o = std::thread::scope(|s| {
            s.spawn(|| remove_run_files(&disks, &stop, &removed));
            let o = child.wait_with_output().unwrap();
            stop.store(true, Ordering::Relaxed);
            o
        });
        let removed = removed.load(Ordering::Relaxed);
        if o.status.success() {
            // Every removal fell between a pass's uses of the file: the build
            // must then be exact all the same.
            assert_same(&contents(&out), expected, "a build that survived removals");
            eprintln!("attempt {attempt}: the build survived {removed} removals; again");
            continue;
        }
        assert!(
            removed > 0,
            "the build failed without any removal: {}",
            stderr(&o)
        );
        assert_clear_error(&o, ".run", &["--resume"]);
        assert_only_finished_files(&out, expected);
        failures += 1;
        resume_to(
            BIG,
            &out,
            &extra,
            expected,
            "resumed after removed run files",
        );
        for d in &disks {
            assert_eq!(
                std::fs::read_dir(d).unwrap().count(),
                0,
                "scratch left in {}",
                d.display()
            );
        }
        break;
    }
    assert!(failures > 0, "no attempt was disturbed by the removals");
}

/// Runs `cmd` and kills it (SIGKILL) as soon as its build state file in
/// `out` satisfies `when`; false if the build ended first.
fn kill_when(mut cmd: Command, out: &Path, when: impl Fn(&serde_json::Value) -> bool) -> bool {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let state = out.join(".tbforge-build.json");
    let killed = loop {
        if child.try_wait().unwrap().is_some() {
            break false;
        }
        let seen = std::fs::read(&state)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        if seen.is_some_and(|v| when(&v)) {
            child.kill().unwrap();
            break true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    child.wait().unwrap();
    killed
}

#[test]
fn removed_values_of_finished_partitions_are_read_back_from_their_files() {
    // Kill a pipeline build after a few partitions and remove the scratch
    // values of the finished ones, which later partitions read: their
    // tablebase files hold the same bytes, so resuming reads them back (as a
    // member new to a team's resume does) and ends with the clean build.
    let expected = reference(BIG);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let disk = tmp.path().join("disk");
    let extra = ["--mem-limit", "2M", "--disk", disk.to_str().unwrap()];
    let killed = kill_when(build_cmd(BIG, &out, &extra), &out, |v| {
        v["finished"].as_array().is_some_and(|f| f.len() >= 3)
    });
    assert!(
        killed,
        "the build ended before three partitions were finished"
    );
    let finished = assert_only_finished_files(&out, expected);
    let scratch = scratch_dir(&disk);
    // Each partition's values lie in stripes: `p00003.values0` and on.
    let mut removed = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&scratch).unwrap() {
        let p = e.unwrap().path();
        if p.extension()
            .is_some_and(|x| x.to_string_lossy().starts_with("values"))
        {
            std::fs::remove_file(&p).unwrap();
            removed.insert(p.file_stem().unwrap().to_owned());
        }
    }
    assert!(
        removed.len() >= finished.max(3),
        "value files of {} partitions for {finished} finished partitions",
        removed.len()
    );
    resume_to(
        BIG,
        &out,
        &extra,
        expected,
        "resumed without the scratch values",
    );
}

#[test]
fn a_checkpoint_without_its_scratch_redoes_the_partition() {
    // A partition solved in dozens of passes, each ending in a checkpoint
    // (`--checkpoint-every 0`: by default a pass end is recorded only once a
    // minute, and these builds are over sooner). Kill the build after a few
    // passes and take the partition's scratch values away (Fore and Aft's
    // one partition), or give its summaries the size and bytes an older
    // binary's layout had, three bytes a position where it is one now
    // (Morris 3-3, whose captures lead to earlier partitions): the
    // checkpoint no longer describes what is there, and the resumed build
    // must redo the partition rather than read zeros or misread the bytes.
    type Damage = fn(&Path, u64);
    let cases: [(&[&str], &str, &str, Damage); 2] = [
        (
            &["foreandaft"],
            "2M",
            "a stripe of its scratch values vanished",
            |scratch, slot| {
                std::fs::remove_file(scratch.join(format!("p{slot:05}.values1")))
                    .expect("the partition's scratch values")
            },
        ),
        (
            &["morris", "--param", "max=3"],
            "18M",
            "its summaries had an older layout",
            |scratch, slot| {
                // Each byte spread over three, as an older binary stored
                // them: read as one a position, they are other summaries.
                let path = scratch.join(format!("p{slot:05}.summary"));
                let bytes = std::fs::read(&path).expect("the partition's summaries");
                let older: Vec<u8> = bytes.iter().flat_map(|&b| [b, 0xff, 0]).collect();
                std::fs::write(&path, older).unwrap();
            },
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (i, (game, limit, what, damage)) in cases.into_iter().enumerate() {
        let expected = built(game, &tmp.path().join(format!("reference{i}")), &[]);
        let out = tmp.path().join(format!("out{i}"));
        let disk = tmp.path().join(format!("disk{i}"));
        let extra = [
            "--mem-limit",
            limit,
            "--disk",
            disk.to_str().unwrap(),
            "--checkpoint-every",
            "0",
        ];
        let checkpointed = kill_when(build_cmd(game, &out, &extra), &out, |v| {
            v["current"][1]["next_pass"]
                .as_u64()
                .is_some_and(|p| p >= 3)
        });
        assert!(
            checkpointed,
            "{game:?}: the build ended before its third pass"
        );
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(".tbforge-build.json")).unwrap())
                .unwrap();
        let slot = state["current"][0]
            .as_u64()
            .expect("the partition in passes");
        damage(&scratch_dir(&disk), slot);
        resume_to(
            game,
            &out,
            &extra,
            &expected,
            &format!("{game:?} resumed after {what}"),
        );
    }
}

/// Resumes the build in `out` (`extra` as it began with) and checks that it
/// ends with the `expected` files.
fn resume_to(game: &[&str], out: &Path, extra: &[&str], expected: &Files, what: &str) {
    let o = build_cmd(game, out, &[extra, &["--resume"]].concat())
        .output()
        .unwrap();
    assert!(o.status.success(), "{what}: resume: {}", stderr(&o));
    assert_same(&contents(out), expected, what);
}

/// Candidates of each pass as the build log of `out` lists them for
/// `partition` (`None`: every pending position expanded).
fn candidates_per_pass(out: &Path, partition: &str) -> Vec<Option<u64>> {
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build-log.json")).unwrap()).unwrap();
    log["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == partition)
        .unwrap_or_else(|| panic!("{partition} in the build log"))["pipeline_passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["candidates"].as_u64())
        .collect()
}

#[test]
fn candidate_driven_passes_give_the_in_memory_bytes_and_resume_exactly() {
    // Morris max=3 under 18 MiB: 3-3 (169,626 indices, 28 passes) goes
    // through the pipeline, and its passes expand only the positions they
    // can decide (the predecessors of the positions decided at the distance
    // before, and those whose captures' summary names it). Killed inside a
    // pass (checkpoints at every chunk) and resumed, the marks are found
    // again from the values: the same bytes.
    const GAME: &[&str] = &["morris", "--param", "max=3"];
    let tmp = tempfile::tempdir().unwrap();
    let expected = built(GAME, &tmp.path().join("reference"), &[]);

    let whole = tmp.path().join("whole");
    let disk = tmp.path().join("disk-whole");
    let extra = ["--mem-limit", "18M", "--disk", disk.to_str().unwrap()];
    assert_same(
        &built(GAME, &whole, &extra),
        &expected,
        "the pipeline build",
    );
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(whole.join("build-log.json")).unwrap()).unwrap();
    assert_eq!(log["mode"], "external");
    let part = log["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "3-3")
        .expect("3-3 in the build log");
    let size = part["index_size"].as_u64().unwrap();
    let passes = part["pipeline_passes"].as_array().unwrap();
    assert!(passes.len() > 20, "{} passes", passes.len());
    // The first scan expands everything; every pass after it its candidates.
    assert!(passes[0]["candidates"].is_null());
    let expanded: Vec<u64> = passes[1..]
        .iter()
        .map(|p| {
            p["candidates"]
                .as_u64()
                .expect("a pass over its candidates")
        })
        .collect();
    assert!(
        expanded.iter().all(|&n| n < size / 2) && expanded.iter().sum::<u64>() > 0,
        "candidates per pass {expanded:?} of {size} indices"
    );
    // A pass writes back only what it decided (its candidates at most), in
    // a call a stretch of changes, and reads its candidates' stretches.
    let field = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}"));
    for (pass, &n) in passes[1..].iter().zip(&expanded) {
        assert!(
            field(pass, "value_writes") <= n,
            "pass {}: {} writes of values for {n} candidates",
            pass["pass"],
            pass["value_writes"]
        );
    }
    let total = |k| passes[1..].iter().map(|p| field(p, k)).sum::<u64>();
    assert!(total("value_writes") > 0 && total("stretch_reads") > 0);

    // Under 1 MiB a bit a position (21 KB, twice) does not fit the plan, a
    // bit per 16 positions does: the passes take every pending position of
    // a marked group, a superset of the candidates above, pass by pass
    // (every pending position, the path before, logs no candidates).
    let grouped = tmp.path().join("grouped");
    let disk = tmp.path().join("disk-grouped");
    let extra = ["--mem-limit", "1M", "--disk", disk.to_str().unwrap()];
    assert_same(
        &built(GAME, &grouped, &extra),
        &expected,
        "the pipeline build under 1 MiB",
    );
    let coarse = candidates_per_pass(&grouped, "3-3");
    assert_eq!(coarse.len(), passes.len(), "{coarse:?}");
    assert!(coarse[0].is_none());
    let pairs: Vec<(u64, u64)> = expanded
        .iter()
        .zip(&coarse[1..])
        .map(|(&f, c)| (f, c.expect("a pass over groups of candidates")))
        .collect();
    assert!(pairs.iter().all(|&(f, c)| f <= c), "{pairs:?}");
    assert!(
        pairs.iter().any(|&(f, c)| f < c),
        "no group took more than its marks: {pairs:?}"
    );

    let out = tmp.path().join("out");
    let disk = tmp.path().join("disk");
    let extra = [
        "--mem-limit",
        "18M",
        "--disk",
        disk.to_str().unwrap(),
        "--checkpoint-every",
        "0",
    ];
    let killed = kill_when(build_cmd(GAME, &out, &extra), &out, |v| {
        let current = &v["current"][1];
        current["next_pass"].as_u64().is_some_and(|p| p >= 4) && !current["within"].is_null()
    });
    assert!(
        killed,
        "the build ended before it was inside its fourth pass"
    );
    // The passes that ended before the kill are in the pass journal, a
    // whole JSON line each with its partition: 3-3's first four at least.
    let journal = out.join(".tbforge-passes.jsonl");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&journal)
        .expect("the pass journal of a build killed inside a pass")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a whole JSON line"))
        .collect();
    let passes: Vec<u64> = lines
        .iter()
        .filter(|l| l["partition"] == "3-3")
        .map(|l| l["pass"].as_u64().unwrap())
        .collect();
    assert!(passes.starts_with(&[0, 1, 2, 3]), "{lines:?}");
    assert!(lines.iter().all(|l| l["seconds"].as_f64().is_some()));
    resume_to(
        GAME,
        &out,
        &extra,
        &expected,
        "killed inside a pass and resumed",
    );
    assert!(
        !journal.exists(),
        "the journal outlived the build log, which holds its passes"
    );
}

#[test]
fn passes_skip_the_chunks_without_candidates_and_give_the_in_memory_bytes() {
    // Morris max=4 under 24 MiB: 4-4 (3,225,597 indices) in chunks of
    // 180,224 (18 chunks). Late passes have candidates in few chunks: the
    // others are neither read nor expanded nor combined, and the marking
    // reads no chunk: the combine step before marks from what it decided,
    // the first scan's distance lists give the rest.
    const GAME: &[&str] = &["morris", "--param", "max=4"];
    let tmp = tempfile::tempdir().unwrap();
    let expected = built(GAME, &tmp.path().join("reference"), &[]);
    let out = tmp.path().join("out");
    let disk = tmp.path().join("disk");
    let extra = ["--mem-limit", "24M", "--disk", disk.to_str().unwrap()];
    assert_same(&built(GAME, &out, &extra), &expected, "the pipeline build");
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build-log.json")).unwrap()).unwrap();
    // In 4-3, where a capture can lead to a drawn position of 3-3, the
    // passes that decide losses leave such candidates unexpanded: a draw
    // among its successors blocks a loss (the bytes above are the same).
    let partition = |name: &str| {
        log["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the build log"))
    };
    let settled: u64 = partition("4-3")["pipeline_passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["settled_by_summary"].as_u64().unwrap())
        .sum();
    assert!(
        settled > 1000,
        "{settled} candidates settled by their summaries"
    );
    let part = partition("4-4");
    let passes = part["pipeline_passes"].as_array().unwrap();
    let field = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap();
    let (scan_jobs, scan_read) = (field(&passes[0], "jobs"), field(&passes[0], "bytes_read"));
    assert!(scan_jobs >= 18, "{scan_jobs} jobs in the first scan");
    assert!(passes[1..].iter().all(|p| p["candidates"].is_u64()));
    let skipping = passes[1..]
        .iter()
        .filter(|p| field(p, "jobs") < scan_jobs && field(p, "bytes_read") < scan_read)
        .count();
    assert!(
        skipping * 2 > passes.len() - 1,
        "{skipping} of {} passes skipped chunks",
        passes.len() - 1
    );
    // From pass 2 on, the combine step of the pass before (where it had
    // requests to combine, or decided its candidates by their marks)
    // marked the candidates in every chunk it visited, those of its own
    // candidates: the scan before the pass did not read them again.
    let in_memory = |p: &serde_json::Value| {
        p["expander"]
            .as_str()
            .is_some_and(|e| e.ends_with("answered in memory"))
    };
    let mut by_marks = 0;
    for (before, pass) in passes[1..].iter().zip(&passes[2..]) {
        let marked = field(pass, "chunks_marked_by_combine");
        if before["expander"]
            .as_str()
            .is_some_and(|e| e.starts_with("none: "))
        {
            by_marks += 1;
            assert_eq!(field(before, "requests"), 0);
            assert!(marked <= 18, "pass {}: {marked}", pass["pass"]);
            continue;
        }
        // A pass answered in memory decides (and marks) each chunk with a
        // candidate as its expansion ends, requests or none.
        let combined = if in_memory(before) {
            field(before, "candidates") > 0
        } else {
            field(before, "requests") > 0
        };
        assert!(
            (marked > 0 || !combined) && marked <= 18,
            "pass {}: {marked} of 18 chunks marked by the combine step before",
            pass["pass"]
        );
        if !in_memory(before) {
            assert_eq!(marked > 0, combined, "pass {}", pass["pass"]);
        }
    }
    // Odd passes decide their candidates by their marks (a bit a position
    // fits here).
    assert!(
        by_marks * 3 > passes.len(),
        "{by_marks} of {} passes",
        passes.len()
    );
    // Even passes decide losses from a bit a position kept in memory: no
    // request reaches the disk (the pass writes values alone, at most a
    // byte a position), no answer step reads the values, and each chunk is
    // decided as its expansion ends, so no combine step reads it again.
    let even: Vec<&serde_json::Value> = passes[1..]
        .iter()
        .filter(|p| field(p, "pass") % 2 == 0 && field(p, "requests") > 0)
        .collect();
    assert!(even.len() >= 3, "{} even passes", even.len());
    let size = field(part, "index_size");
    for pass in even {
        assert!(
            in_memory(pass),
            "pass {}: {}",
            pass["pass"],
            pass["expander"]
        );
        let bytes = &pass["step_bytes"];
        let written = bytes["expand"][1].as_u64().unwrap();
        assert!(
            written <= size,
            "pass {}: {written} bytes written",
            pass["pass"]
        );
        assert_eq!(
            pass["scratch_bytes_per_request"], 0.0,
            "pass {}",
            pass["pass"]
        );
        assert_eq!(bytes["answer"][0], 0, "pass {}", pass["pass"]);
        assert_eq!(
            bytes["combine"],
            serde_json::json!([0, 0]),
            "pass {}",
            pass["pass"]
        );
    }
    assert_eq!(
        field(&passes[1], "chunks_marked_by_combine"),
        0,
        "after the first scan"
    );
    // The rest of each pass's marks come from the first scan's distance
    // lists (4-byte entries): no marking reads a chunk, where a scan of the
    // whole partition reads 4.25 bytes a position (before pass 1 it had
    // no hints and read it all).
    for pass in &passes[1..] {
        let read = pass["step_bytes"]["marking"][0].as_u64().unwrap();
        assert!(
            read % 4 == 0 && read < size,
            "pass {}: the marking read {read} bytes ({size} positions)",
            pass["pass"]
        );
    }
}

#[test]
fn a_build_killed_inside_a_pass_answered_in_memory_resumes_exactly() {
    // Morris max=4 under 24 MiB, as above: 4-4's even passes are answered
    // in memory and keep no checkpoint inside themselves (their bits are in
    // memory alone), so a build killed inside one redoes the pass from its
    // start. With a checkpoint at every boundary, kills land at the start
    // of even passes until two are inside the pass: its partition and pass
    // still current, its checkpoint without a step, and no journal line
    // for it.
    const GAME: &[&str] = &["morris", "--param", "max=4"];
    let tmp = tempfile::tempdir().unwrap();
    let expected = built(GAME, &tmp.path().join("reference"), &[]);
    let out = tmp.path().join("out");
    let disk = tmp.path().join("disk");
    let extra = [
        "--mem-limit",
        "24M",
        "--disk",
        disk.to_str().unwrap(),
        "--checkpoint-every",
        "0",
    ];
    let resumed = [&extra[..], &["--resume"]].concat();
    let slot = Some(4); // 2-3, 2-4, 3-3, 4-3, 4-4
    let state = |out: &Path| -> Option<(u64, u64, bool)> {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(".tbforge-build.json")).ok()?).ok()?;
        let current = &v["current"];
        Some((
            current[0].as_u64()?,
            current[1]["next_pass"].as_u64()?,
            current[1]["within"].is_null(),
        ))
    };
    let journaled = |out: &Path, pass: u64| {
        std::fs::read_to_string(out.join(".tbforge-passes.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .any(|l| l["partition"] == "4-4" && l["pass"].as_u64() == Some(pass))
    };
    let (mut inside, mut last_kill) = (Vec::new(), None);
    for pass in (2..60).step_by(2) {
        let args = if pass == 2 { &extra[..] } else { &resumed[..] };
        let killed = kill_when(build_cmd(GAME, &out, args), &out, |v| {
            let current = &v["current"];
            current[0].as_u64() == slot
                && current[1]["next_pass"].as_u64() == Some(pass)
                && current[1]["within"].is_null()
        });
        if !killed {
            // The pass went by between two looks at the state: this run,
            // resumed from the last kill, finished the build.
            break;
        }
        last_kill = Some(pass);
        if state(&out) == Some((4, pass, true)) && !journaled(&out, pass) {
            inside.push(pass);
            if inside.len() == 2 {
                break;
            }
        }
    }
    assert!(
        !inside.is_empty(),
        "no kill landed inside a pass of 4-4 answered in memory"
    );
    // A finished build's `--resume` does nothing and keeps its log.
    resume_to(
        GAME,
        &out,
        &extra,
        &expected,
        &format!("killed inside passes {inside:?} of 4-4 and resumed"),
    );
    let log: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build-log.json")).unwrap()).unwrap();
    let part = log["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "4-4")
        .expect("4-4 in the build log");
    // The resumed run logs the passes it ran: it redid the pass it was
    // last killed at (inside it, or at its start), from its start,
    // answered in memory.
    let redone = &part["pipeline_passes"][0];
    assert_eq!(redone["pass"].as_u64(), last_kill, "{part}");
    assert!(
        redone["expander"]
            .as_str()
            .is_some_and(|e| e.ends_with("answered in memory")),
        "{redone}"
    );
}

/// The one build's scratch directory under `disk` (the build names it).
fn scratch_dir(disk: &Path) -> PathBuf {
    std::fs::read_dir(disk)
        .unwrap()
        .next()
        .expect("the build's scratch directory")
        .unwrap()
        .path()
}
