//! `GET /debug/journal`: the causal journal ([`store::journal`]) over HTTP.
//!
//! ```text
//! GET /debug/journal?after=N&limit=M&kind=K&namespace=NS&name=NAME
//!   200 {"entries": [Entry, ...], "next": <after for the next page>, "capacity": <--journal-size>}
//! GET /debug/journal?watch=true&after=N[&kind=..&namespace=..&name=..]
//!   200 application/x-ndjson: one Entry per line, as they are recorded,
//!   until the client goes away or the server stops
//! ```
//!
//! The filters match the entry's `object` (exactly; every one given must
//! match). A page holds at most `limit` entries (default 500); `next` is the
//! last id looked at, so paging with `after=next` never repeats or skips.
//! A follower holds an informer event back briefly (at most
//! [`HOLD_WAKES`] × [`HOLD`] of real time) while the write that caused it is
//! not recorded yet (the watch can be faster than the writer), so that the
//! lines it sends carry their causes. Bad parameters are a 400 Status. The path is a non-resource URL
//! (authorization treats `/debug/...` so).
//!
//! There is no upstream counterpart (the nearest: the audit log's webhook
//! backend, which streams requests, not their causes).

use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt as _;
use serde_json::json;
use store::journal::{EntryId, Journal, Query};

use super::AppState;
use super::negotiate::json_response;
use crate::error::{ApiError, ApiResult};

/// Entries per page unless `limit` says otherwise.
const DEFAULT_LIMIT: usize = 500;
/// The largest `limit`.
const MAX_LIMIT: usize = 10_000;
/// How long (real time) a follower waits for new entries before it looks
/// again anyway. Real time, on purpose: it bounds a race between two
/// threads (the writer and the informer), and a simulated sleep would be a
/// deadline the time machine's `step` stops at.
const HOLD: Duration = Duration::from_millis(250);
/// How many waits a follower holds back an event whose write is not
/// recorded yet before it sends it as it is.
const HOLD_WAKES: u32 = 4;

/// The routes served here.
pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/debug/journal", get(journal))
}

/// The parsed query string.
struct Params {
    query: Query,
    watch: bool,
}

async fn journal(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    let params = match parse(raw.as_deref().unwrap_or("")) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let journal = state.api.clock().journal().clone();
    if params.watch {
        return follow(&state, journal, params.query);
    }
    let page = journal.page(&params.query);
    let body = json!({"entries": page.entries, "next": page.next, "capacity": journal.capacity()});
    json_response(StatusCode::OK, &body, &[])
}

/// Reads `after`, `limit`, `kind`, `namespace`, `name` and `watch`; any
/// other parameter, or a malformed one, is a 400.
fn parse(raw: &str) -> ApiResult<Params> {
    let mut params = Params {
        query: Query {
            limit: DEFAULT_LIMIT,
            ..Query::default()
        },
        watch: false,
    };
    for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
        match key.as_ref() {
            "after" => {
                params.query.after = value.parse().map_err(|_| {
                    ApiError::bad_request(format!(
                        "after must be an entry id (an unsigned integer), got {value:?}"
                    ))
                })?;
            }
            "limit" => params.query.limit = limit(&value)?,
            "kind" => params.query.kind = Some(value.into_owned()),
            "namespace" => params.query.namespace = Some(value.into_owned()),
            "name" => params.query.name = Some(value.into_owned()),
            "watch" => params.watch = flag(&value)?,
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown parameter {other:?}: /debug/journal takes after, limit, kind, namespace, name and watch"
                )));
            }
        }
    }
    Ok(params)
}

fn limit(value: &str) -> ApiResult<usize> {
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(ApiError::bad_request(format!(
            "limit must be an integer from 1 to {MAX_LIMIT}, got {value:?}"
        ))),
    }
}

fn flag(value: &str) -> ApiResult<bool> {
    match value {
        "true" | "1" | "" => Ok(true),
        "false" | "0" => Ok(false),
        other => Err(ApiError::bad_request(format!(
            "watch must be true or false, got {other:?}"
        ))),
    }
}

/// The newline-delimited stream of entries after `query.after`.
fn follow(state: &AppState, journal: Journal, query: Query) -> Response {
    // The task holds the sender; the response body the receiver. A client
    // that goes away drops the body, which `tx.closed()` notices.
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    let shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let mut query = query;
        // The event a follower holds back (the id it stopped after), and
        // for how many waits.
        let mut held: (EntryId, u32) = (0, 0);
        loop {
            let last = journal.last_id();
            query.hold_unresolved = held.1 < HOLD_WAKES;
            let Some(stopped) = send_pages(&journal, &mut query, &tx).await else {
                return;
            };
            held = match stopped {
                Some(at) if at == held.0 => (at, held.1 + 1),
                Some(at) => (at, 1),
                None => (0, 0),
            };
            tokio::select! {
                _ = tx.closed() => return,
                _ = shutdown.cancelled() => return,
                _ = tokio::time::timeout(HOLD, journal.recorded_after(last)) => {}
            }
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<_, std::convert::Infallible>);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// Sends the entries after `query.after`, page by page, and moves
/// `query.after` on. `None` when the client is gone; else the id after
/// which an event waiting for its write was held back, if one was.
async fn send_pages(
    journal: &Journal,
    query: &mut Query,
    tx: &tokio::sync::mpsc::Sender<Bytes>,
) -> Option<Option<EntryId>> {
    loop {
        let page = journal.page(query);
        let full = page.entries.len() >= query.limit;
        query.after = page.next;
        for entry in page.entries {
            let mut line = serde_json::to_vec(&entry).unwrap_or_default();
            line.push(b'\n');
            if tx.send(Bytes::from(line)).await.is_err() {
                return None;
            }
        }
        if page.held {
            return Some(Some(query.after));
        }
        if !full {
            return Some(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::WriteOptions;
    use axum::http::Request;
    use tokio_util::sync::CancellationToken;
    use tower::ServiceExt;

    fn config_map(name: &str) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
    }

    async fn create(api: &crate::Api, name: &str) {
        let info = api.resource("", "v1", "configmaps").unwrap();
        let opts = WriteOptions {
            field_manager: Some("journal-test".into()),
            ..Default::default()
        };
        api.create(&info, Some("default"), config_map(name), &opts)
            .await
            .unwrap();
    }

    async fn get(app: &Router, path: &str) -> (StatusCode, serde_json::Value) {
        let req = Request::builder().uri(path).body(Body::empty()).unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    fn app(api: &crate::Api, shutdown: &CancellationToken) -> Router {
        super::super::router(AppState::new(api.clone(), "127.0.0.1:1".into(), shutdown.clone()))
    }

    #[tokio::test]
    async fn pages_filter_by_object_and_go_on_from_next() {
        let api = crate::testkit::TestApi::builder().build().await;
        create(&api, "a").await;
        create(&api, "b").await;
        let app = app(&api, &CancellationToken::new());

        let (status, body) = get(&app, "/debug/journal?kind=ConfigMap&namespace=default&name=b").await;
        assert_eq!(status, StatusCode::OK);
        let entries = body["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{body}");
        assert_eq!(entries[0]["step"], "write");
        assert_eq!(entries[0]["actor"], "journal-test");
        assert_eq!(entries[0]["verb"], "create");
        assert_eq!(entries[0]["message"], "created");
        assert!(entries[0].get("cause").is_none(), "a client's own request");

        let (_, first) = get(&app, "/debug/journal?limit=1&kind=ConfigMap").await;
        assert_eq!(first["entries"][0]["object"]["name"], "a");
        let next = first["next"].as_u64().unwrap();
        let (_, second) = get(&app, &format!("/debug/journal?kind=ConfigMap&after={next}")).await;
        let names: Vec<_> = second["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["object"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("b")]);
    }

    #[tokio::test]
    async fn bad_parameters_are_a_400_status() {
        let api = crate::testkit::TestApi::builder().open();
        let app = app(&api, &CancellationToken::new());
        for path in [
            "/debug/journal?after=x",
            "/debug/journal?limit=0",
            "/debug/journal?watch=maybe",
            "/debug/journal?kinds=Pod",
        ] {
            let (status, body) = get(&app, path).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
            assert_eq!(body["kind"], "Status", "{path}");
            assert_eq!(body["reason"], "BadRequest", "{path}");
        }
    }

    #[tokio::test]
    async fn a_watch_streams_entries_as_they_are_recorded() {
        let api = crate::testkit::TestApi::builder().build().await;
        create(&api, "before").await;
        let after = api.clock().journal().last_id();
        let shutdown = CancellationToken::new();
        let app = app(&api, &shutdown);
        let req = Request::builder()
            .uri(format!("/debug/journal?watch=true&after={after}&kind=ConfigMap"))
            .body(Body::empty())
            .unwrap();
        let resp = app.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/x-ndjson");
        let mut body = resp.into_body().into_data_stream();
        create(&api, "during").await;
        let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
            .await
            .expect("a line within 10 s")
            .unwrap()
            .unwrap();
        let text = String::from_utf8(chunk.to_vec()).unwrap();
        assert!(text.ends_with('\n'));
        let entry: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(entry["object"]["name"], "during");
        shutdown.cancel();
        let end = tokio::time::timeout(Duration::from_secs(10), body.next()).await;
        assert!(matches!(end, Ok(None)), "the stream ends at shutdown");
    }
}
