//! `tbforge export`: a tablebase's compact, probe-only engine files.

use super::set_threads;
use std::path::Path;
use std::process::ExitCode;
use tbforge::export::{export_engine, ExportOptions, ExportReport};

pub fn export(
    dir: &Path,
    out: &Path,
    options: &ExportOptions,
    threads: Option<usize>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    set_threads(threads)?;
    let report = export_engine(dir, out, options)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &ExportReport) -> String {
    let mut s = format!(
        "engine files of {} in {} ({})\n",
        r.source,
        r.out,
        if r.distance {
            "win/draw/loss and distance"
        } else {
            "win/draw/loss only"
        }
    );
    s += &format!(
        "{:<24} {:>14} {:>14} {:>14} {:>12} {:>12} {:>8}\n",
        "file", "indices", "legal", "don't-care", "full bytes", "bytes", "bits/pos"
    );
    for f in &r.files {
        s += &format!(
            "{:<24} {:>14} {:>14} {:>14} {:>12} {:>12} {:>8.4}\n",
            f.name,
            f.index_size,
            f.classes,
            f.dont_care,
            f.source_bytes,
            f.bytes,
            tbforge::export::bits_per(f.bytes, f.index_size)
        );
    }
    s += &format!(
        "total: {} bytes ({:.4} bits per index; the full files: {} bytes, {:.1}x larger); {} don't-care legal indices\n",
        r.bytes,
        r.bits_per_position,
        r.source_bytes,
        r.source_bytes as f64 / r.bytes.max(1) as f64,
        r.dont_care
    );
    s
}
