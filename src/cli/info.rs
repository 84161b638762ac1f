//! `tbforge info`: the manifest, summarised.

use std::path::Path;
use std::process::ExitCode;
use tbforge::format;
use tbforge::registry::annotate_info;

pub fn info(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut report = format::info(dir)?;
    annotate_info(&mut report);
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", format::render_info_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}
