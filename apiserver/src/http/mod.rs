//! The HTTP edge: axum routes over the [`Api`].
//!
//! Fixed endpoints (`/version`, health, `/metrics`, discovery, OpenAPI) have
//! their own routes; every resource URL goes to [`resource::serve`] through
//! one fallback handler that parses the path against the registry, so a
//! kind added to the registry is served without a new route. Discovery
//! answers with or without a trailing slash (`/api/`, `/apis/apps/`), as
//! older clients ask; a path nothing serves is a 404 `Status`.
//!
//! Every request passes, outermost first: metrics → authentication (or,
//! on plain HTTP, the loopback Host check) → impersonation and
//! authorization (`authz.rs`) → the in-flight caps
//! ([`limits`]) → the handler. Connections are served by `conn.rs`, with
//! the timeouts of [`Limits`]. The web view's static files (`ui.rs`) are
//! the exception: public, they are routed outside those layers.

pub mod auth;
mod authz;
mod conn;
mod discovery;
mod journal;
pub mod limits;
mod metadata;
mod metrics;
mod negotiate;
mod params;
mod promql;
mod resource;
mod reviews;
mod route;
mod tables;
mod time;
pub mod tls;
mod ui;
mod watch;

pub use limits::Limits;
pub use metrics::Metrics;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::Api;
use crate::openapi::OpenApi;
use negotiate::json_response;

/// Everything a handler needs. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The API.
    pub api: Api,
    /// Request metrics.
    pub metrics: Metrics,
    /// The generated OpenAPI documents.
    pub openapi: Arc<OpenApi>,
    /// Cancelled on shutdown: ends every watch and log stream.
    pub shutdown: CancellationToken,
    /// `host:port` as clients reach it (legacy discovery reports it).
    pub address: String,
    /// Checks credentials; `None` serves everyone (plain HTTP on loopback)
    /// who addresses the server by a loopback name.
    pub authenticator: Option<auth::Authenticator>,
    /// Decides who may do what (after impersonation); always-allow by default.
    pub authorizer: crate::auth::authorizer::Authorizer,
    /// Timeouts and in-flight caps.
    pub limits: Limits,
    /// The simulated world's metrics: appended to `/metrics`, queried in
    /// PromQL at `/api/v1/query` (an empty store unless one is given).
    pub sim_metrics: sim_metrics::Tsdb,
    /// The in-flight slots for `limits`, shared by every clone of the state
    /// (so by every listener of one server).
    in_flight: limits::InFlight,
}

impl AppState {
    /// A state over `api`.
    pub fn new(api: Api, address: String, shutdown: CancellationToken) -> Self {
        let openapi = Arc::new(OpenApi::new(api.registry()));
        let limits = Limits::default();
        AppState {
            api,
            metrics: Metrics::new(),
            openapi,
            shutdown,
            address,
            authenticator: None,
            authorizer: crate::auth::authorizer::Authorizer::default(),
            in_flight: limits::InFlight::new(&limits),
            limits,
            sim_metrics: sim_metrics::Tsdb::new(),
        }
    }

    /// Serves `metrics` (the simulation's store) on `/metrics` and the
    /// Prometheus query API.
    pub fn with_sim_metrics(mut self, metrics: sim_metrics::Tsdb) -> Self {
        self.sim_metrics = metrics;
        self
    }

    /// Serves with these timeouts and caps instead of upstream's defaults.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.in_flight = limits::InFlight::new(&limits);
        self.limits = limits;
        self
    }

    /// Requires credentials on every request but the public ones.
    pub fn with_authenticator(mut self, authenticator: auth::Authenticator) -> Self {
        self.authenticator = Some(authenticator);
        self
    }

    /// Authorizes every request with `authorizer` (impersonation included).
    pub fn with_authorizer(mut self, authorizer: crate::auth::authorizer::Authorizer) -> Self {
        self.authorizer = authorizer;
        self
    }

    /// Now on the API's clock, for AGE cells.
    pub fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::try_from(self.api.clock().now()).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }
}

/// The whole router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/version", get(version))
        .route("/version/", get(version))
        .route("/healthz", get(ok))
        .route("/livez", get(ok))
        .route("/readyz", get(ok))
        .route("/metrics", get(metrics_text))
        // Prometheus's query API (not core resources: matched before the fallback).
        .route("/api/v1/query", get(promql::query).post(promql::query))
        .route(
            "/api/v1/query_range",
            get(promql::query_range).post(promql::query_range),
        )
        .route("/api/v1/labels", get(promql::labels).post(promql::labels))
        .route("/api/v1/label/{name}/values", get(promql::label_values))
        .route("/api", get(api_root))
        .route("/api/", get(api_root))
        .route("/apis", get(apis_root))
        .route("/apis/", get(apis_root))
        .route("/openapi/v2", get(openapi_v2))
        .route("/openapi/v3", get(openapi_v3_index))
        .route("/openapi/v3/{*gv}", get(openapi_v3_doc))
        // miniplane's own: the causal journal, the time machine.
        .merge(journal::routes())
        .merge(time::routes())
        .fallback(resources)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            limits::limit_in_flight,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), authz::authorize))
        .layer(middleware::from_fn_with_state(state.clone(), auth::authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), record_metrics))
        // The web view's page: static and public, so merged after the layers
        // (which wrap only the routes above); its data requests pass them.
        .merge(ui::routes())
        .with_state(state)
}

/// Serves plain HTTP on `listener` until `state.shutdown` is cancelled, then
/// lets every connection finish its in-flight requests (open watches end on
/// the same signal) before returning. Accept errors are retried, never
/// returned (see `conn::accept`).
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    let shutdown = state.shutdown.clone();
    let limits = state.limits.clone();
    let app = router(state);
    // Every connection task; `wait` below returns when all have ended.
    let connections = TaskTracker::new();
    while let Some(tcp) = conn::accept(&listener, &shutdown).await {
        let task = conn::serve_connection(tcp, app.clone(), limits.clone(), None, shutdown.clone());
        connections.spawn(task);
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

async fn record_metrics(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let start = tokio::time::Instant::now();
    let (verb, resource) = metrics::classify(
        req.method().as_str(),
        req.uri().path(),
        req.uri().query().unwrap_or(""),
    );
    let resp = next.run(req).await;
    let seconds = start.elapsed().as_secs_f64();
    state
        .metrics
        .observe(&verb, &resource, resp.status().as_u16(), seconds);
    resp
}

async fn version() -> Response {
    json_response(
        StatusCode::OK,
        &json!({
            "major": "1", "minor": "33", "gitVersion": "v1.33.0-miniplane",
            "gitCommit": env!("CARGO_PKG_VERSION"), "gitTreeState": "clean",
            "buildDate": "2026-11-30T00:00:00Z", "goVersion": "rust", "compiler": "rustc",
            "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
        }),
        &[],
    )
}

async fn ok() -> &'static str {
    "ok"
}

async fn metrics_text(State(state): State<AppState>) -> Response {
    let mut text = state.metrics.render(&state.api.store().stats());
    // The simulated world's series follow the server's own (before the
    // OpenMetrics `# EOF` marker, when there is one).
    let eof = text.ends_with("# EOF\n");
    if eof {
        text.truncate(text.len() - "# EOF\n".len());
    }
    text.push_str(&state.sim_metrics.exposition());
    if eof {
        text.push_str("# EOF\n");
    }
    (
        [(header::CONTENT_TYPE, sim_metrics::api::TEXT_CONTENT_TYPE)],
        text,
    )
        .into_response()
}

async fn api_root(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match discovery::aggregated_version(&headers) {
        Some(v) => aggregated(discovery::aggregated(state.api.registry(), true, v), v),
        None => json_response(StatusCode::OK, &discovery::api_versions(&state.address), &[]),
    }
}

async fn apis_root(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match discovery::aggregated_version(&headers) {
        Some(v) => aggregated(discovery::aggregated(state.api.registry(), false, v), v),
        None => json_response(
            StatusCode::OK,
            &discovery::api_group_list(state.api.registry()),
            &[],
        ),
    }
}

fn aggregated(doc: serde_json::Value, version: &str) -> Response {
    let ct = format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
    let bytes = serde_json::to_vec(&doc).unwrap_or_default();
    (StatusCode::OK, [(header::CONTENT_TYPE, ct)], bytes).into_response()
}

async fn openapi_v2(State(state): State<AppState>) -> Response {
    let ct = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, ct)],
        state.openapi.v2_protobuf().to_vec(),
    )
        .into_response()
}

async fn openapi_v3_index(State(state): State<AppState>) -> Response {
    json_response(StatusCode::OK, &state.openapi.v3_index(), &[])
}

async fn openapi_v3_doc(
    State(state): State<AppState>,
    axum::extract::Path(gv): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some((bytes, etag)) = state.openapi.v3_document(&gv) else {
        return page_not_found();
    };
    let quoted = format!("\"{etag}\"");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == quoted));
    if matches {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, quoted)]).into_response();
    }
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::ETAG, quoted),
        ],
        bytes,
    )
        .into_response()
}

/// The answer to a path nothing serves: a 404 `Status`, as for an unknown
/// resource of a served group.
fn page_not_found() -> Response {
    route::not_found().into_response()
}

/// Another method than GET on a fixed endpoint: a 405 `Status`.
async fn method_not_allowed(method: Method) -> Response {
    resource::method_not_allowed(&method).into_response()
}

/// Everything under `/api/v1/...` and `/apis/<group>/<version>/...`.
async fn resources(
    State(state): State<AppState>,
    user: Option<axum::Extension<crate::auth::UserInfo>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let path = uri.path().trim_end_matches('/').to_string();
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, version, rest): (&str, &str, &[&str]) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", group] => {
            return match discovery::api_group(state.api.registry(), group) {
                Some(g) => json_response(StatusCode::OK, &g, &[]),
                None => page_not_found(),
            };
        }
        ["apis", group, version, rest @ ..] => (group, version, rest),
        _ => return page_not_found(),
    };
    if rest.is_empty() {
        return match discovery::api_resource_list(state.api.registry(), group, version) {
            Some(list) => json_response(StatusCode::OK, &list, &[]),
            None => page_not_found(),
        };
    }
    let route = match route::parse(state.api.registry(), group, version, rest) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let query = parse_query(uri.query().unwrap_or(""));
    let bytes = match limits::read_body(&headers, body, state.limits.body_read_timeout).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    // Set by authentication (`auth.rs`) on every request that reaches here.
    let user = user.map(|axum::Extension(u)| u).unwrap_or_default();
    resource::serve(&state, &method, route, &query, &headers, &bytes, &user).await
}

fn parse_query(q: &str) -> HashMap<String, String> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    async fn call(method: &str, path: &str) -> (StatusCode, serde_json::Value) {
        let api = crate::testkit::TestApi::builder().open();
        let app = router(AppState::new(api, "127.0.0.1:1".into(), CancellationToken::new()));
        let req = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .unwrap();
        let resp = app.oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        )
    }

    #[tokio::test]
    async fn other_methods_on_fixed_endpoints_are_a_405_status() {
        let (status, body) = call("POST", "/apis/").await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(body["reason"], "MethodNotAllowed");
    }
}
