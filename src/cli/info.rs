//! `tbforge info`: the manifest, summarised.

use std::path::Path;
use std::process::ExitCode;
use tbforge::format;

pub fn info(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let report = format::info(dir)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_info_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}
