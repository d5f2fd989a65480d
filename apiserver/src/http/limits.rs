//! Limits that keep a few clients from taking the server down: how long a
//! connection may take to send a request, how many requests run at once,
//! and how large a body may be. The values are kube-apiserver's:
//!
//! | limit | default | upstream |
//! |---|---|---|
//! | request head read | 32 s | `ReadHeaderTimeout` (`secure_serving.go`) |
//! | idle connection | 90 s | `IdleTimeout` (same file) |
//! | request body read | 60 s | `--request-timeout`, which bounds the whole request there |
//! | read-only requests at once | 400 | `--max-requests-inflight` |
//! | mutating requests at once | 200 | `--max-mutating-requests-inflight` |
//! | request body | 3 MiB | `MaxRequestBodyBytes` (`negotiate::MAX_BODY`) |
//!
//! The connection timeouts are applied in `conn.rs`; this module has
//! the per-request ones.
//!
//! In-flight caps (upstream's `WithMaxInFlightLimit`, `maxinflight.go`):
//! requests are counted from the moment they pass authentication until
//! their response has been written, in two buckets, read-only (GET, HEAD)
//! and mutating (everything else). Over the cap a request gets 429 with
//! `Retry-After: 1` at once; nothing queues. Not counted: long-running
//! requests (watches, and `pods/log` whether or not it follows, as
//! upstream's `BasicLongRunningRequestCheck` does) and the health checks
//! (`/healthz`, `/livez`, `/readyz`), which must answer under any load.
//! A cap of 0 means no limit, as upstream.
//!
//! Two differences from upstream: its 429 body is the message as plain
//! text (`http.Error`), here it is a `Status` (reason `TooManyRequests`,
//! `details.retryAfterSeconds`), which client-go decodes either way; and
//! upstream lets `system:masters` past a full bucket, which here would be
//! everyone (there is no authorization yet, see [`super::auth`]).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, BodyDataStream};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use serde_json::json;
use tokio::sync::Semaphore;

use super::AppState;
use super::negotiate::{self, MAX_BODY};
use crate::error::{ApiError, Reason};

/// kube-apiserver's `ReadHeaderTimeout`.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// kube-apiserver's `IdleTimeout` (and Go's `http.DefaultTransport` keep-alive).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// kube-apiserver's default `--request-timeout`.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// kube-apiserver's default `--max-requests-inflight`.
pub const DEFAULT_MAX_REQUESTS_INFLIGHT: usize = 400;
/// kube-apiserver's default `--max-mutating-requests-inflight`.
pub const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT: usize = 200;

/// How long the rest of a refused body is read and thrown away (see
/// [`discard_rest`]); Go's server waits 500 ms for the same reason
/// (`rstAvoidanceDelay`).
const DISCARD_LINGER: Duration = Duration::from_secs(1);
/// The most bytes of a refused body that are read and thrown away.
const DISCARD_MAX: usize = 4 * MAX_BODY;

/// The HTTP server's timeouts and caps. Tests shorten the timeouts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// How long an HTTP/1.1 connection waiting for a request may take to
    /// deliver the complete request head; then it is closed. hyper starts
    /// this timer as soon as the connection is ready for its next request,
    /// so it also closes HTTP/1.1 keep-alive connections idle this long.
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive, counted from when the
    /// handler starts reading it; then the request gets 408 and the
    /// connection is closed.
    pub body_read_timeout: Duration,
    /// How long a connection with no request open (none being served, no
    /// response still streaming) stays open; then it is shut down
    /// gracefully (HTTP/2: GOAWAY). Covers HTTP/2 connections and
    /// connections that never send a byte.
    pub idle_timeout: Duration,
    /// Read-only requests served at once (0 = no limit).
    pub max_requests_inflight: usize,
    /// Mutating requests served at once (0 = no limit).
    pub max_mutating_requests_inflight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_requests_inflight: DEFAULT_MAX_REQUESTS_INFLIGHT,
            max_mutating_requests_inflight: DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
        }
    }
}

/// The in-flight slots of one server (shared by its listeners): a permit
/// is a request being served. `None` is a bucket without a cap.
#[derive(Clone, Debug)]
pub(super) struct InFlight {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl InFlight {
    /// Slots for the caps in `limits`.
    pub(super) fn new(limits: &Limits) -> Self {
        let bucket = |cap: usize| (cap > 0).then(|| Arc::new(Semaphore::new(cap)));
        InFlight {
            read_only: bucket(limits.max_requests_inflight),
            mutating: bucket(limits.max_mutating_requests_inflight),
        }
    }
}

/// Which in-flight bucket a request counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    /// Not counted: health checks and long-running requests.
    Exempt,
    /// GET and HEAD.
    ReadOnly,
    /// Everything else.
    Mutating,
}

/// Upstream's long-running subresources (`BasicLongRunningRequestCheck`);
/// only `log` is served here.
const LONG_RUNNING_SUBRESOURCES: [&str; 5] = ["log", "exec", "attach", "portforward", "proxy"];

/// `/healthz`, `/livez`, `/readyz` and their sub-checks.
pub(super) fn is_health(path: &str) -> bool {
    ["/healthz", "/livez", "/readyz"]
        .iter()
        .any(|root| path == *root || path.strip_prefix(root).is_some_and(|r| r.starts_with('/')))
}

fn bucket(method: &Method, path: &str, query: &str) -> Bucket {
    if is_health(path) {
        return Bucket::Exempt;
    }
    let info = super::metrics::request_info(method.as_str(), path, query);
    if info.verb == "watch" || LONG_RUNNING_SUBRESOURCES.contains(&info.subresource.as_str()) {
        return Bucket::Exempt;
    }
    // Upstream splits by verb (get, list and watch are read-only); by
    // method that is the same split for every request clients send.
    match *method {
        Method::GET | Method::HEAD => Bucket::ReadOnly,
        _ => Bucket::Mutating,
    }
}

/// Middleware: serves the request if its bucket has a free slot, holding
/// the slot until the response has been written; 429 otherwise.
pub(super) async fn limit_in_flight(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let slots = match bucket(req.method(), req.uri().path(), req.uri().query().unwrap_or("")) {
        Bucket::Exempt => None,
        Bucket::ReadOnly => state.in_flight.read_only.as_ref(),
        Bucket::Mutating => state.in_flight.mutating.as_ref(),
    };
    let Some(slots) = slots else {
        return next.run(req).await;
    };
    match slots.clone().try_acquire_owned() {
        Ok(permit) => hold_until_sent(next.run(req).await, permit),
        // `try_acquire` fails only when no permit is free: the semaphore is never closed.
        Err(_) => too_many_requests(),
    }
}

/// 429 as upstream's `tooManyRequests`, as a `Status`.
fn too_many_requests() -> Response {
    let mut resp = ApiError {
        reason: Reason::TooManyRequests,
        message: "Too many requests, please try again later.".to_string(),
        details: Some(json!({"retryAfterSeconds": 1})),
    }
    .into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

/// `resp` with `guard` attached to its body: the guard is dropped when the
/// body has been written out (or the connection gave up on it).
pub(super) fn hold_until_sent<G: Send + Unpin + 'static>(resp: Response, guard: G) -> Response {
    resp.map(|body| Body::new(Guarded { body, _guard: guard }))
}

/// A response body that holds a guard (an in-flight slot, a connection's
/// open-request count) for as long as it lives.
struct Guarded<G> {
    body: Body,
    _guard: G,
}

impl<G: Unpin> HttpBody for Guarded<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Reads a request body: 413 at once when its declared `Content-Length`
/// is over [`MAX_BODY`] (nothing is read), 413 as soon as more than that
/// has arrived, 408 when it has not all arrived within `timeout`.
///
/// `timeout` is on the wall clock (tokio's timer, not the injected
/// `store::Clock`): it bounds how long a peer may hold a connection and its
/// buffers, real resources that a simulated `--time-scale` must not stretch.
pub(super) async fn read_body(headers: &HeaderMap, body: Body, timeout: Duration) -> Result<Bytes, Response> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        // A client waiting for `100 Continue` has sent no body: nothing to discard.
        let waits = headers
            .get(header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        if !waits {
            discard_rest(body.into_data_stream());
        }
        return Err(negotiate::too_large().into_response());
    }
    match tokio::time::timeout(timeout, collect(body)).await {
        Ok(read) => read.map_err(IntoResponse::into_response),
        Err(_elapsed) => Err(body_timeout(timeout)),
    }
}

/// The whole body, or 413 once it passes [`MAX_BODY`].
async fn collect(body: Body) -> Result<Bytes, ApiError> {
    let mut chunks = body.into_data_stream();
    let mut bytes = BytesMut::new();
    while let Some(chunk) = chunks.next().await {
        // The peer closed or broke the connection mid-body: nobody reads
        // the answer, but say what happened.
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("error reading the request body: {e}")))?;
        if bytes.len() + chunk.len() > MAX_BODY {
            discard_rest(chunks);
            return Err(negotiate::too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes.freeze())
}

/// Reads and throws away what the client still sends of a body refused
/// with 413, for at most [`DISCARD_LINGER`] and [`DISCARD_MAX`] bytes, while
/// the 413 goes out. Dropping the body at once would close the connection
/// under the client's writes, and closing a socket with unread input sends
/// a TCP reset, which can destroy the 413 before the client reads it.
///
/// The task owns nothing but the body and ends within the linger time
/// (when the client stops sending, the connection closes then).
fn discard_rest(mut chunks: BodyDataStream) {
    tokio::spawn(async move {
        let discard = async {
            let mut left = DISCARD_MAX;
            while let Some(Ok(chunk)) = chunks.next().await {
                let Some(l) = left.checked_sub(chunk.len()) else {
                    break;
                };
                left = l;
            }
        };
        // Wall clock, as `read_body`'s timeout.
        let _ = tokio::time::timeout(DISCARD_LINGER, discard).await;
    });
}

/// 408: the body did not arrive in time. Upstream's reasons have no 408
/// (its `Timeout` is 504, for a slow server); the `Status` says `Timeout`
/// with HTTP's own code for a slow client. The body was not read to its
/// end, so hyper closes the connection after this answer.
fn body_timeout(timeout: Duration) -> Response {
    let message = format!(
        "Timeout: the request body did not arrive within {}s",
        timeout.as_secs_f64()
    );
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Timeout", "code": 408,
    });
    negotiate::json_response(StatusCode::REQUEST_TIMEOUT, &status, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    use tokio_util::sync::CancellationToken;
    use tower::ServiceExt;

    #[test]
    fn buckets_follow_upstream() {
        let b = |m: Method, path: &str, query: &str| bucket(&m, path, query);
        assert_eq!(b(Method::GET, "/api/v1/pods", ""), Bucket::ReadOnly);
        assert_eq!(b(Method::GET, "/apis", ""), Bucket::ReadOnly);
        assert_eq!(
            b(Method::POST, "/api/v1/namespaces/d/configmaps", ""),
            Bucket::Mutating
        );
        assert_eq!(
            b(Method::DELETE, "/api/v1/namespaces/d/pods/p", ""),
            Bucket::Mutating
        );
        assert_eq!(b(Method::GET, "/api/v1/pods", "watch=true"), Bucket::Exempt);
        assert_eq!(b(Method::GET, "/api/v1/watch/pods", ""), Bucket::Exempt);
        assert_eq!(
            b(Method::GET, "/api/v1/namespaces/d/pods/p/log", "follow=true"),
            Bucket::Exempt
        );
        for path in ["/healthz", "/livez", "/readyz", "/readyz/ping"] {
            assert_eq!(b(Method::GET, path, ""), Bucket::Exempt, "{path}");
        }
        assert_eq!(b(Method::GET, "/readyzz", ""), Bucket::ReadOnly);
        assert_eq!(b(Method::GET, "/version", ""), Bucket::ReadOnly);
    }

    fn state(limits: Limits) -> AppState {
        let api = crate::testkit::TestApi::builder().open();
        AppState::new(api, "127.0.0.1:1".into(), CancellationToken::new()).with_limits(limits)
    }

    /// A request body that sends nothing and never ends, as a stalled client's.
    fn stalled() -> Body {
        Body::from_stream(futures::stream::pending::<Result<Bytes, Infallible>>())
    }

    fn request(method: &str, path: &str, body: Body) -> Request {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap()
    }

    async fn status_of(resp: Response) -> (StatusCode, Option<String>, serde_json::Value) {
        let code = resp.status();
        let retry = resp
            .headers()
            .get(header::RETRY_AFTER)
            .map(|v| v.to_str().unwrap().to_string());
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        (code, retry, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    #[tokio::test]
    async fn a_full_bucket_answers_429_and_health_checks_still_answer() {
        let app = super::super::router(state(Limits {
            max_requests_inflight: 1,
            max_mutating_requests_inflight: 1,
            ..Limits::default()
        }));
        // One create holds the only mutating slot while its body trickles in.
        let held = tokio::spawn(app.clone().oneshot(request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            stalled(),
        )));
        // Let it take its slot and start waiting for its body.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!held.is_finished());
        let body = Body::from(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#);
        let over = app
            .clone()
            .oneshot(request("POST", "/api/v1/namespaces/default/configmaps", body))
            .await
            .unwrap();
        let (code, retry, status) = status_of(over).await;
        assert_eq!(code, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry.as_deref(), Some("1"));
        assert_eq!(status["reason"], "TooManyRequests");
        assert_eq!(status["message"], "Too many requests, please try again later.");
        assert_eq!(status["details"]["retryAfterSeconds"], 1);
        // The read-only bucket is separate, and health checks are never counted.
        let list = app
            .clone()
            .oneshot(request(
                "GET",
                "/api/v1/namespaces/default/configmaps",
                Body::empty(),
            ))
            .await
            .unwrap();
        assert_eq!(list.status(), StatusCode::OK);
        let ready = app
            .clone()
            .oneshot(request("GET", "/readyz", Body::empty()))
            .await
            .unwrap();
        assert_eq!(ready.status(), StatusCode::OK);
        held.abort();
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_413_without_reading() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("1000000000"));
        let resp = read_body(&headers, stalled(), Duration::from_secs(3600))
            .await
            .unwrap_err();
        let (code, _, status) = status_of(resp).await;
        assert_eq!(code, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(status["reason"], "RequestEntityTooLarge");
        assert_eq!(status["message"], "Request entity too large: limit is 3145728");
    }

    #[tokio::test]
    async fn an_undeclared_body_over_the_limit_is_413() {
        let chunks = (0..4).map(|_| Ok::<_, Infallible>(Bytes::from(vec![b'a'; 1 << 20])));
        let body = Body::from_stream(futures::stream::iter(chunks));
        let resp = read_body(&HeaderMap::new(), body, Duration::from_secs(3600))
            .await
            .unwrap_err();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stalls_is_408_after_the_timeout() {
        let resp = read_body(&HeaderMap::new(), stalled(), Duration::from_secs(60))
            .await
            .unwrap_err();
        let (code, _, status) = status_of(resp).await;
        assert_eq!(code, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(status["reason"], "Timeout");
        assert_eq!(status["code"], 408);
    }
}
