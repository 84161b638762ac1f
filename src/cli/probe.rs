//! `tbforge probe`: one position's value and best moves.

use super::CheckFailed;
use std::path::Path;
use std::process::ExitCode;
use tbforge::format::FormatError;

pub fn probe(dir: &Path, position: &str, json: bool) -> anyhow::Result<ExitCode> {
    match tbforge::probe::probe_text(dir, position) {
        Ok(report) => {
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                print!("{}", report.to_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ tbforge::Error::Format(FormatError::NotInTablebase { .. })) => {
            Err(CheckFailed(format!(
                "{e}; the position has more pieces or moves than {} was built for: build a larger \
                 instance (see `tbforge info {}`)",
                dir.display(),
                dir.display()
            ))
            .into())
        }
        Err(
            e @ tbforge::Error::Format(
                FormatError::IllegalIndex { .. } | FormatError::NotReached { .. },
            ),
        ) => Err(CheckFailed(e.to_string()).into()),
        Err(e) => Err(e.into()),
    }
}
