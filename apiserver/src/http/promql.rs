//! Prometheus's query API over the simulated world's metrics
//! ([`sim_metrics::Tsdb`]): `/api/v1/query`, `/api/v1/query_range`,
//! `/api/v1/labels` and `/api/v1/label/<name>/values`, GET or POST (a
//! form body), answered as Prometheus answers (see [`sim_metrics::api`]).
//! These paths are not core resources: authorization sees them as
//! non-resource URLs, like `/metrics`.

use axum::body::{Body, to_bytes};
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sim_metrics::api::{self, Answer};

use super::AppState;

/// The paths served here (authorization treats them as non-resource URLs).
pub(super) fn is_promql_path(path: &str) -> bool {
    matches!(path, "/api/v1/query" | "/api/v1/query_range" | "/api/v1/labels")
        || path
            .strip_prefix("/api/v1/label/")
            .is_some_and(|rest| rest.ends_with("/values") && rest.matches('/').count() == 1)
}

/// The largest form body read.
const MAX_FORM: usize = 1 << 20;

fn respond(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::BAD_REQUEST);
    let bytes = serde_json::to_vec(&a.body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// The query string's parameters, then a form body's.
async fn params(req: Request) -> Result<Vec<(String, String)>, Response> {
    let (parts, body): (_, Body) = req.into_parts();
    let mut out: Vec<(String, String)> = form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect();
    let is_form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if parts.method == axum::http::Method::POST && is_form {
        let bytes = to_bytes(body, MAX_FORM)
            .await
            .map_err(|e| respond(api::bad_data(&format!("error parsing form values: {e}"))))?;
        // Upstream (Go's ParseForm) puts the body's values before the query string's.
        let mut form: Vec<(String, String)> = form_urlencoded::parse(&bytes).into_owned().collect();
        form.append(&mut out);
        out = form;
    }
    Ok(out)
}

/// `/api/v1/query`.
pub(super) async fn query(State(state): State<AppState>, req: Request) -> Response {
    let params = match params(req).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let now = state.api.clock().now();
    respond(api::instant_query(&state.sim_metrics, &params, now))
}

/// `/api/v1/query_range`.
pub(super) async fn query_range(State(state): State<AppState>, req: Request) -> Response {
    match params(req).await {
        Ok(p) => respond(api::range_query(&state.sim_metrics, &p)),
        Err(r) => r,
    }
}

/// `/api/v1/labels`.
pub(super) async fn labels(State(state): State<AppState>) -> Response {
    respond(api::labels(&state.sim_metrics))
}

/// `/api/v1/label/<name>/values`.
pub(super) async fn label_values(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    respond(api::label_values(&state.sim_metrics, &name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        for p in [
            "/api/v1/query",
            "/api/v1/query_range",
            "/api/v1/labels",
            "/api/v1/label/pod/values",
        ] {
            assert!(is_promql_path(p), "{p}");
        }
        for p in [
            "/api/v1/pods",
            "/api/v1/namespaces/x/pods",
            "/api/v1/label/a/b/values",
            "/api/v1/query/x",
        ] {
            assert!(!is_promql_path(p), "{p}");
        }
    }
}
