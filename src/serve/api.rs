//! The routes: the JSON API and the explorer's embedded files.

use super::{assets, stats, Entry, Explorer};
use crate::format::FormatError;
use crate::probe::{probe_text_with, MoveValue, ProbeReport};
use crate::{GameKind, Outcome};
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

type Shared = State<Arc<Explorer>>;

pub(super) fn router(explorer: Arc<Explorer>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{file}", get(assets::file))
        .route("/api/games", get(games))
        .route("/api/{name}", get(probe))
        .route("/api/{name}/info", get(info))
        .route("/api/{name}/stats", get(stats))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(explorer)
}

/// An error as the API answers it: a status and `{"error": "..."}`.
pub(super) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'a str,
        }
        json(
            self.status,
            &Body {
                error: &self.message,
            },
        )
    }
}

fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            format!(
                "{{\"error\":\"cannot write the answer as JSON: {}\"}}",
                e.to_string().replace('"', "'")
            ),
        )
            .into_response(),
    }
}

/// Runs `f`, turning a panic into a 500 answer: a bug in one game's code
/// must cost one request, not the connection or the server.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, ApiError>) -> Result<T, ApiError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal error while {what} (a bug: please report it with the request)"),
        ))
    })
}

fn lookup<'a>(explorer: &'a Explorer, name: &str) -> Result<&'a Entry, ApiError> {
    explorer.entry(name).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "no tablebase `{name}` is served here; served: {} (GET /api/games lists them)",
                explorer.names().join(", ")
            ),
        )
    })
}

#[derive(Serialize)]
struct GameRow<'a> {
    /// The route name: `/api/{name}`.
    name: &'a str,
    /// The game's registry id.
    id: &'a str,
    /// `id:params`.
    game: String,
    kind: GameKind,
    params: &'a crate::game::Params,
    encoding: String,
    engine: bool,
    positions: u64,
    files: usize,
    max_distance: Option<u32>,
    summary: Option<&'static str>,
    notation: Option<&'static str>,
    start: Option<&'a str>,
}

async fn games(State(ex): Shared) -> Response {
    let rows: Vec<GameRow> = ex
        .entries
        .iter()
        .map(|e| {
            let m = e.tb.manifest();
            GameRow {
                name: &e.name,
                id: &m.game,
                game: m.canonical_game(),
                kind: m.kind,
                params: &m.params,
                encoding: m.encoding.to_string(),
                engine: e.tb.is_engine(),
                positions: m.totals.positions,
                files: m.files.len(),
                max_distance: m.totals.max_distance,
                summary: e.descriptor.as_ref().map(|d| d.summary),
                notation: e.descriptor.as_ref().map(|d| d.notation),
                start: e.start.as_deref(),
            }
        })
        .collect();
    json(StatusCode::OK, &rows)
}

/// The probe's answer with the route name, moves best first.
#[derive(Serialize)]
struct ProbeReply<'a> {
    name: &'a str,
    #[serde(flatten)]
    report: ProbeReport,
}

async fn probe(
    State(ex): Shared,
    Path(name): Path<String>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let e = lookup(&ex, &name)?;
    let Query(query) = query.map_err(|r| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "cannot read the query string: {}; write ?position=TEXT, percent-encoded",
                r.body_text()
            ),
        )
    })?;
    if let Some(k) = query.keys().find(|k| k.as_str() != "position") {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("unknown parameter `{k}`: the only one is `position`"),
        ));
    }
    let Some(text) = query.get("position") else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "no position given: write /api/{name}?position=TEXT in the game's notation{}",
                e.start
                    .as_deref()
                    .map(|s| format!(", e.g. ?position={s}"))
                    .unwrap_or_default()
            ),
        ));
    };
    if let Some(answer) = e.answers.get(text) {
        return Ok(json_bytes(StatusCode::OK, answer));
    }
    let mut report = guarded("probing", || {
        probe_text_with(&e.tb, &e.game, text).map_err(|err| probe_error(e, err))
    })?;
    sort_best_first(e.tb.kind(), &mut report.result.moves);
    let answer = serde_json::to_vec(&ProbeReply {
        name: &e.name,
        report,
    })
    .map_err(|err| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot write the answer as JSON: {err}"),
        )
    })?;
    let answer = Bytes::from(answer);
    // Errors are not kept: they are cheap, and an unbounded stream of
    // distinct bad texts must not push good answers out.
    e.answers.insert(text, answer.clone());
    Ok(json_bytes(StatusCode::OK, answer))
}

fn json_bytes(status: StatusCode, body: Bytes) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn probe_error(e: &Entry, err: crate::Error) -> ApiError {
    use crate::Error as E;
    match err {
        E::BadPosition { .. } => ApiError::new(StatusCode::BAD_REQUEST, err.to_string()),
        E::Format(FormatError::NotInTablebase { .. }) => ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "{err}: the position has more pieces or moves than `{}` was built for",
                e.name
            ),
        ),
        E::Format(
            FormatError::IllegalIndex { .. }
            | FormatError::NotReached { .. }
            | FormatError::RankOutOfRange { .. },
        ) => ApiError::new(StatusCode::BAD_REQUEST, err.to_string()),
        other => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
    }
}

/// Best first for the side to move: wins (quickest first), draws, losses
/// (slowest first); in a puzzle, moves toward the goal (closest first), then
/// those from which it cannot be reached. The sort is stable: the game's
/// move order breaks ties.
fn sort_best_first(kind: GameKind, moves: &mut [MoveValue]) {
    let key = |m: &MoveValue| -> (u8, i64) {
        let d = m.distance.map(i64::from);
        match (kind, m.outcome) {
            (_, Outcome::Win) => (0, d.unwrap_or(i64::MAX)),
            (GameKind::Puzzle, _) | (_, Outcome::Draw) => (1, 0),
            (_, Outcome::Loss) => (2, -d.unwrap_or(i64::MAX)),
        }
    };
    moves.sort_by_key(key);
}

async fn info(State(ex): Shared, Path(name): Path<String>) -> Result<Response, ApiError> {
    let e = lookup(&ex, &name)?;
    Ok(json(StatusCode::OK, &e.info))
}

#[derive(Serialize)]
struct StatsReply<'a> {
    name: &'a str,
    game: String,
    kind: GameKind,
    #[serde(flatten)]
    histograms: &'a stats::Histograms,
    depths: &'a Option<Vec<crate::format::DepthRow>>,
    groups: &'a Option<Vec<crate::format::GroupRow>>,
    /// The build log's run and partitions (`null` without a build log).
    timeline: &'a Option<serde_json::Value>,
}

async fn stats(State(ex): Shared, Path(name): Path<String>) -> Result<Response, ApiError> {
    lookup(&ex, &name)?;
    let histograms = match ex.entry(&name).and_then(|e| e.stats.get().cloned()) {
        Some(h) => h,
        None => {
            // Whole partitions are read: keep it off the request workers.
            let ex2 = Arc::clone(&ex);
            let name2 = name.clone();
            let scanned = tokio::task::spawn_blocking(move || {
                let e = lookup(&ex2, &name2)?;
                let _one_scan = e.scanning.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(h) = e.stats.get() {
                    return Ok(Arc::clone(h));
                }
                guarded("scanning the files for the statistics", || {
                    stats::histograms(&e.tb, &e.game).map_err(|err| {
                        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
                    })
                })
                .map(|h| Arc::clone(e.stats.get_or_init(|| Arc::new(h))))
            })
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the statistics scan did not finish (a bug: please report it)",
                )
            })?;
            scanned?
        }
    };
    let e = lookup(&ex, &name)?;
    Ok(json(
        StatusCode::OK,
        &StatsReply {
            name: &e.name,
            game: e.tb.manifest().canonical_game(),
            kind: e.tb.kind(),
            histograms: &histograms,
            depths: &e.info.depths,
            groups: &e.info.groups,
            timeline: &e.timeline,
        },
    ))
}

async fn no_route(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no route {}: the API is GET /api/games, /api/{{name}}?position=TEXT, /api/{{name}}/info, /api/{{name}}/stats; the explorer is /",
            uri.path()
        ),
    )
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} {} is not served: use GET", uri.path()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_a_500_answer() {
        let r: Result<(), ApiError> = guarded("testing", || panic!("a bug"));
        let e = r.expect_err("the panic is caught");
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(e.message.contains("while testing"), "{}", e.message);
        let ok = guarded("testing", || Ok(7));
        assert_eq!(ok.ok(), Some(7));
    }

    #[test]
    fn best_first() {
        let m = |mv: &str, outcome, distance| MoveValue {
            mv: mv.into(),
            position: String::new(),
            outcome,
            distance,
        };
        let mut moves = vec![
            m("l3", Outcome::Loss, Some(3)),
            m("d", Outcome::Draw, None),
            m("w5", Outcome::Win, Some(5)),
            m("l9", Outcome::Loss, Some(9)),
            m("w1", Outcome::Win, Some(1)),
        ];
        sort_best_first(GameKind::TwoPlayer, &mut moves);
        let order: Vec<&str> = moves.iter().map(|m| m.mv.as_str()).collect();
        assert_eq!(order, ["w1", "w5", "d", "l9", "l3"]);
        // Puzzles: toward the goal, closest first, then the dead ends.
        let mut moves = vec![
            m("x", Outcome::Draw, None),
            m("g4", Outcome::Win, Some(4)),
            m("g2", Outcome::Win, Some(2)),
        ];
        sort_best_first(GameKind::Puzzle, &mut moves);
        let order: Vec<&str> = moves.iter().map(|m| m.mv.as_str()).collect();
        assert_eq!(order, ["g2", "g4", "x"]);
    }
}
