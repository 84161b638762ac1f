//! `tbforge compare`: two tablebases of one game, position by position; exit
//! 1 if anything differs.

use super::set_threads;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use tbforge::compare::{compare_dirs_with, render_compare_text, CompareOptions};

pub fn compare(
    dir_a: &Path,
    dir_b: &Path,
    examples: usize,
    threads: Option<usize>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    set_threads(threads)?;
    // Large tablebases take minutes: say where it is, where someone watches.
    let progress = !json && std::io::stderr().is_terminal();
    let report = compare_dirs_with(dir_a, dir_b, &CompareOptions { examples }, |p| {
        if progress {
            eprintln!(
                "compared {}: {} positions, {} mismatches",
                p.name, p.compared, p.mismatches
            );
        }
    })?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", render_compare_text(&report));
    }
    if report.ok {
        Ok(ExitCode::SUCCESS)
    } else {
        if !json {
            eprintln!(
                "tbforge: compare: {} and {} differ",
                dir_a.display(),
                dir_b.display()
            );
        }
        Ok(ExitCode::from(1))
    }
}
