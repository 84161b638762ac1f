//! A reader that stops early (`tbforge games | head -1`) ends tbforge quietly:
//! no panic message, no error line.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn closed_stdout_ends_the_process_without_a_panic() {
    for args in [&["games"][..], &["games", "--json"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tbforge"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The read end is closed here, as `head -1` closes it.
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!first.is_empty(), "{args:?}: no first line");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.trim().is_empty(), "{args:?}: {stderr}");
    }
}
