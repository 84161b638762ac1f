//! A loopback load generator for the server's tests and `tbforge bench
//! serve`: keep-alive HTTP/1.1 connections through hyper's client, each
//! sending its requests one after another, bounded in count and time.

use bytes_body::collect;
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How much load [`load`] sends.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Connections open at once, each with one request in flight.
    pub connections: usize,
    /// Requests in all (the paths are taken round-robin).
    pub requests: usize,
    /// Stop sending after this long, whatever is left.
    pub max_time: Duration,
}

/// What [`load`] measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    /// Requests answered (any status) or failed.
    pub requests: usize,
    /// Requests that failed or were not answered 200.
    pub errors: usize,
    /// The first failure, described.
    pub first_error: Option<String>,
    /// Wall-clock seconds from the first request to the last answer.
    pub seconds: f64,
    /// `requests / seconds`.
    pub requests_per_second: f64,
    /// Median latency, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Slowest request, milliseconds.
    pub max_ms: f64,
    /// Response body bytes received.
    pub bytes: u64,
}

struct Conn {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
    bytes: u64,
}

/// Sends `GET` requests for `paths` (round-robin, e.g. `/api/x?position=...`)
/// to `addr` over `options.connections` keep-alive connections until
/// `options.requests` have been sent or `options.max_time` has passed.
pub async fn load(addr: SocketAddr, paths: Arc<Vec<String>>, options: LoadOptions) -> LoadReport {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let deadline = start + options.max_time;
    let mut tasks = Vec::new();
    for _ in 0..options.connections.max(1) {
        let (paths, next) = (Arc::clone(&paths), Arc::clone(&next));
        tasks.push(tokio::spawn(async move {
            connection(addr, &paths, &next, options.requests, deadline).await
        }));
    }
    let mut latencies = Vec::new();
    let (mut errors, mut first_error, mut bytes) = (0, None, 0);
    for t in tasks {
        match t.await {
            Ok(c) => {
                latencies.extend(c.latencies);
                errors += c.errors;
                bytes += c.bytes;
                first_error = first_error.or(c.first_error);
            }
            Err(e) => {
                errors += 1;
                first_error = first_error.or(Some(format!("a connection's task failed: {e}")));
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let pct = |q: f64| {
        if latencies.is_empty() {
            return 0.0;
        }
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i].as_secs_f64() * 1e3
    };
    let requests = latencies.len() + errors;
    LoadReport {
        requests,
        errors,
        first_error,
        seconds,
        requests_per_second: if seconds > 0.0 {
            requests as f64 / seconds
        } else {
            0.0
        },
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        max_ms: pct(1.0),
        bytes,
    }
}

async fn connection(
    addr: SocketAddr,
    paths: &[String],
    next: &AtomicUsize,
    total: usize,
    deadline: Instant,
) -> Conn {
    let mut c = Conn {
        latencies: Vec::new(),
        errors: 0,
        first_error: None,
        bytes: 0,
    };
    let fail = |c: &mut Conn, what: String| {
        c.errors += 1;
        c.first_error.get_or_insert(what);
    };
    let stream = match tokio::net::TcpStream::connect(addr).await {
        Ok(s) => s,
        Err(e) => {
            fail(&mut c, format!("cannot connect to {addr}: {e}"));
            return c;
        }
    };
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    {
        Ok(x) => x,
        Err(e) => {
            fail(&mut c, format!("HTTP handshake with {addr} failed: {e}"));
            return c;
        }
    };
    let driver = tokio::spawn(conn);
    let host = addr.to_string();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= total || paths.is_empty() || Instant::now() >= deadline {
            break;
        }
        let path = &paths[i % paths.len()];
        let req = match Request::get(path.as_str())
            .header(hyper::header::HOST, host.as_str())
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
        {
            Ok(r) => r,
            Err(e) => {
                fail(&mut c, format!("bad request path {path}: {e}"));
                continue;
            }
        };
        let t = Instant::now();
        if let Err(e) = sender.ready().await {
            fail(&mut c, format!("connection closed: {e}"));
            break;
        }
        match sender.send_request(req).await {
            Ok(resp) => {
                let status = resp.status();
                match collect(resp.into_body()).await {
                    Ok(n) => {
                        c.latencies.push(t.elapsed());
                        c.bytes += n;
                        if status != hyper::StatusCode::OK {
                            // Answered, but an error: counted once, as an error.
                            c.latencies.pop();
                            fail(&mut c, format!("GET {path}: status {status}"));
                        }
                    }
                    Err(e) => fail(&mut c, format!("GET {path}: reading the body: {e}")),
                }
            }
            Err(e) => {
                fail(&mut c, format!("GET {path}: {e}"));
                break;
            }
        }
    }
    drop(sender);
    let _ = driver.await;
    c
}

mod bytes_body {
    use http_body_util::BodyExt;

    /// Reads a body to its end; returns its length.
    pub(super) async fn collect(body: hyper::body::Incoming) -> Result<u64, hyper::Error> {
        Ok(body.collect().await?.to_bytes().len() as u64)
    }
}

/// [`load`] on a runtime of its own with `threads` workers, for callers
/// without one (the command line, tests).
pub fn load_blocking(
    addr: SocketAddr,
    paths: Vec<String>,
    options: LoadOptions,
    threads: usize,
) -> Result<LoadReport, super::ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_io()
        .enable_time()
        .thread_name("tbforge-load")
        .build()
        .map_err(|source| super::ServeError::Runtime {
            what: "cannot start the load generator's threads",
            source,
        })?;
    Ok(rt.block_on(load(addr, Arc::new(paths), options)))
}
