//! The explorer's page, scripts and style, compiled into the binary from
//! `web/` so that the server needs no files beside the tablebases and no
//! network.

use super::api::ApiError;
use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../../web/index.html");

/// (name, content type, bytes) of every file under `/assets/`.
const FILES: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/app.js"),
    ),
    (
        "boards.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/boards.js"),
    ),
    (
        "plots.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/plots.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/style.css"),
    ),
];

fn page(content_type: &'static str, body: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body,
    )
        .into_response()
}

pub(super) async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX)
}

pub(super) async fn file(Path(name): Path<String>) -> Result<Response, ApiError> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, ty, body)| page(ty, body))
        .ok_or_else(|| {
            let names: Vec<&str> = FILES.iter().map(|(n, _, _)| *n).collect();
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no asset `{name}`; there are {}", names.join(", ")),
            )
        })
}
