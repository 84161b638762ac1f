//! `tbforge verify`: every check of a tablebase directory; exit 1 if one failed.

use std::path::Path;
use std::process::ExitCode;
use tbforge::verify;

pub fn verify(dir: &Path, deep: bool, json: bool) -> anyhow::Result<ExitCode> {
    let report = verify::verify_dir(dir, deep)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", verify::render_verify_text(&report));
    }
    if report.ok {
        Ok(ExitCode::SUCCESS)
    } else {
        if !json {
            eprintln!("tbforge: verify failed: {}", dir.display());
        }
        Ok(ExitCode::from(1))
    }
}
