//! `tbforge serve`: the HTTP API and web explorer; `tbforge bench serve`:
//! its requests per second and latency on loopback.

use anyhow::{bail, Context};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tbforge::serve::{load_blocking, Explorer, ExplorerOptions, LoadOptions, LoadReport};

pub fn serve(dirs: &[PathBuf], bind: &str, threads: Option<usize>) -> anyhow::Result<ExitCode> {
    if threads == Some(0) {
        bail!("--threads 0: give at least 1 thread");
    }
    let explorer = Arc::new(Explorer::open(dirs)?);
    let names = explorer.names();
    let running = Arc::clone(&explorer).spawn(bind, threads)?;
    // One line a script can read the address from (with --bind ...:0 the port is picked here).
    println!(
        "serving {} on http://{}/ (API: /api/games, /api/{{name}}?position=..., /api/{{name}}/info, /api/{{name}}/stats)",
        names.join(", "),
        running.addr()
    );
    std::io::stdout().flush().ok();
    running.wait().context("the server stopped")?;
    Ok(ExitCode::SUCCESS)
}

/// What `tbforge bench serve` measures, per tablebase.
#[derive(serde::Serialize)]
struct Row {
    name: String,
    positions: usize,
    connections: usize,
    server_threads: usize,
    client_threads: usize,
    answers_kept: usize,
    #[serde(flatten)]
    report: LoadReport,
}

pub struct BenchArgs {
    pub dirs: Vec<PathBuf>,
    pub connections: usize,
    pub requests: usize,
    pub positions: usize,
    pub seconds: u64,
    pub server_threads: Option<usize>,
    pub client_threads: usize,
    pub answers: usize,
    pub json: bool,
}

pub fn bench(a: BenchArgs) -> anyhow::Result<ExitCode> {
    if a.connections == 0 || a.requests == 0 || a.positions == 0 || a.client_threads == 0 {
        bail!("--connections, --requests, --positions and --client-threads must be at least 1");
    }
    if a.server_threads == Some(0) {
        bail!("--server-threads 0: give at least 1 thread");
    }
    let explorer = Arc::new(Explorer::open_with(
        &a.dirs,
        ExplorerOptions {
            answers_kept: a.answers,
        },
    )?);
    let running = Arc::clone(&explorer).spawn("127.0.0.1:0", a.server_threads)?;
    let server_threads = a
        .server_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut rows = Vec::new();
    for name in explorer.names() {
        let positions = explorer.sample_positions(&name, a.positions);
        if positions.is_empty() {
            bail!("{name}: no position of it probes without error; nothing to request");
        }
        let paths: Vec<String> = positions
            .iter()
            .map(|p| format!("/api/{}?position={}", encode(&name), encode(p)))
            .collect();
        // Every position once first: the measured requests find their blocks cached.
        let warm = LoadOptions {
            connections: 1,
            requests: paths.len(),
            max_time: Duration::from_secs(a.seconds.max(1)),
        };
        let w = load_blocking(running.addr(), paths.clone(), warm, 1)?;
        if w.errors > 0 {
            bail!(
                "{name}: {} of the warm-up requests failed, the first: {}",
                w.errors,
                w.first_error.unwrap_or_default()
            );
        }
        let options = LoadOptions {
            connections: a.connections,
            requests: a.requests,
            max_time: Duration::from_secs(a.seconds.max(1)),
        };
        let report = load_blocking(running.addr(), paths, options, a.client_threads)?;
        rows.push(Row {
            name,
            positions: positions.len(),
            connections: a.connections,
            server_threads,
            client_threads: a.client_threads,
            answers_kept: a.answers,
            report,
        });
    }
    running.stop().context("stopping the server")?;
    if a.json {
        println!("{}", serde_json::to_string(&rows)?);
    } else {
        println!(
            "{:<20} {:>9} {:>5} {:>9} {:>6} {:>10} {:>8} {:>8} {:>8}",
            "tablebase",
            "positions",
            "conns",
            "requests",
            "errors",
            "req/s",
            "p50 ms",
            "p99 ms",
            "max ms"
        );
        for r in &rows {
            let l = &r.report;
            println!(
                "{:<20} {:>9} {:>5} {:>9} {:>6} {:>10.0} {:>8.3} {:>8.3} {:>8.3}",
                r.name,
                r.positions,
                r.connections,
                l.requests,
                l.errors,
                l.requests_per_second,
                l.p50_ms,
                l.p99_ms,
                l.max_ms
            );
        }
        println!(
            "server: {server_threads} worker threads, {}; load: {} client threads, {} keep-alive connections, on loopback (both on this machine's cores)",
            if a.answers == 0 {
                "no answer cache (every request probes)".to_string()
            } else {
                format!("answer cache of {} per tablebase", a.answers)
            },
            a.client_threads,
            a.connections
        );
    }
    let errors: usize = rows.iter().map(|r| r.report.errors).sum();
    if errors > 0 {
        let first = rows
            .iter()
            .find_map(|r| r.report.first_error.clone())
            .unwrap_or_default();
        eprintln!("tbforge: {errors} requests failed, the first: {first}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
