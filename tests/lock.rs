//! Two builds into one directory: the second stops at once with one line
//! naming the directory and the process that holds it, and the first
//! finishes unharmed (before the lock, both ended with "saving build state
//! ...: No such file or directory").

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_tbforge");

/// Waits until the first build has started writing into `dir`.
fn wait_for_state(dir: &Path, child: &mut std::process::Child) {
    let t = Instant::now();
    while !dir.join(".tbforge-build.json").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the first build ended before the second could start"
        );
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "first build never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn second_build_is_refused(first_args: &[&str], second_args: &[&str], named: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    let mut first = Command::new(EXE)
        .args(first_args)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir(tmp.path())
        .spawn()
        .unwrap();
    wait_for_state(&out, &mut first);
    let t = Instant::now();
    let second = Command::new(EXE)
        .args(second_args)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let refused_in = t.elapsed();
    let err = String::from_utf8_lossy(&second.stderr).into_owned();
    let still_running = first.try_wait().unwrap().is_none();
    let _ = first.kill();
    let _ = first.wait();
    assert!(
        still_running,
        "the first build ended too soon to test the lock"
    );
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("in use by another tbforge build"), "{err}");
    assert!(err.contains(&format!("process {}", first.id())), "{err}");
    assert!(err.contains(&named.display().to_string()), "{err}");
    assert!(refused_in < Duration::from_secs(5), "took {refused_in:?}");
}

/// A build long enough (tens of seconds on 2 cores) to be caught running.
const SLOW: &[&str] = &[
    "build",
    "connect4",
    "--param",
    "width=5",
    "--param",
    "height=5",
    "--backend",
    "cpu",
    "--threads",
    "1",
];

#[test]
fn a_second_build_into_the_same_output_stops_at_once() {
    let tmp_out = Path::new("tb");
    let mut second = SLOW.to_vec();
    second.extend(["--out", "tb"]);
    second_build_is_refused(SLOW, &second, tmp_out);
}

#[test]
fn a_second_build_onto_the_same_scratch_disk_stops_at_once() {
    let mut first = SLOW.to_vec();
    first.extend(["--mem-limit", "64M", "--disk", "scratch"]);
    let second = [
        "build",
        "tictactoe",
        "--backend",
        "cpu",
        "--mem-limit",
        "8M",
        "--disk",
        "scratch",
        "--out",
        "other",
    ];
    second_build_is_refused(&first, &second, Path::new("scratch"));
}
