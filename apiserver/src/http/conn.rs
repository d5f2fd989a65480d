//! Connections, from accept to close, for plain HTTP and HTTPS alike:
//! HTTP/1.1 or HTTP/2 (hyper-util's auto builder; over TLS, ALPN has chosen)
//! with the connection timeouts of [`Limits`].
//!
//! Flow: [`accept`] → (TLS handshake, in `tls.rs`) → [`serve_connection`]
//! until the peer closes, a timeout closes it, or shutdown asks it to finish
//! its open requests.
//!
//! - **Header read** ([`Limits::header_read_timeout`], HTTP/1.1, hyper's
//!   own timer): a request head that does not arrive whole in time (a
//!   client trickling its headers) closes the connection. hyper starts the
//!   timer whenever the connection waits for a request, so it closes idle
//!   HTTP/1.1 keep-alive connections too.
//! - **Idle** ([`Limits::idle_timeout`]): no request open for this long
//!   (none being served, no response still being written) shuts the
//!   connection down gracefully. This covers HTTP/2 and connections that
//!   never send a byte (hyper has not chosen a protocol for them yet).
//! - **Body read**: per request, in [`super::limits::read_body`].
//!
//! Every one of these timers is on the wall clock (tokio's timer), not the
//! injected `store::Clock`: they bound how long a peer may hold a socket
//! and its file descriptor, which are real resources whatever
//! `--time-scale` the simulation runs at.
//!
//! Running out of file descriptors: `accept` fails with EMFILE/ENFILE
//! while every descriptor is taken. [`accept`] then backs off (5 ms,
//! doubling up to 1 s, as Go's `http.Server.Serve` does) and keeps trying,
//! never spinning and never giving up; the idle timeout closes the
//! connections that hold descriptors without using them, so the server
//! recovers.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::auth::VerifiedClientCertificate;
use super::limits::{self, Limits};

/// The first pause after a failed accept; it doubles on each failure in a row.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
/// The longest pause between failed accepts.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How long a connection closed for idleness may take to say goodbye
/// (flush, HTTP/2 GOAWAY) before it is dropped.
const IDLE_CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The next accepted connection; `None` once `shutdown` is cancelled.
///
/// Errors never end the loop: a connection reset or aborted before it was
/// accepted is skipped; anything else (EMFILE, ENFILE, ENOBUFS, ENOMEM) is
/// logged and retried after a growing pause.
pub(super) async fn accept(listener: &TcpListener, shutdown: &CancellationToken) -> Option<TcpStream> {
    let mut backoff: Option<Duration> = None;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return None,
        };
        let error = match accepted {
            Ok((tcp, _peer)) => return Some(tcp),
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => e,
        };
        let pause = backoff.map_or(ACCEPT_BACKOFF_MIN, |p| (p * 2).min(ACCEPT_BACKOFF_MAX));
        backoff = Some(pause);
        tracing::warn!(error = %error, retry_in = ?pause, "accept failed; open connections keep being served");
        // Waits `pause` on the wall clock, or returns early on shutdown.
        if tokio::time::timeout(pause, shutdown.cancelled()).await.is_ok() {
            return None;
        }
    }
}

/// Errors of one connection that went away before it was accepted.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset | Interrupted
    )
}

/// One open request of a connection: counted from when hyper hands the
/// request over until its response body is dropped (written or abandoned).
struct OpenRequest(Arc<watch::Sender<usize>>);

impl OpenRequest {
    fn start(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        OpenRequest(count.clone())
    }
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// Serves HTTP on one connection until the peer closes it, a timeout of
/// `limits` closes it, or `shutdown` is cancelled (then open requests
/// finish; open watches end on the same signal). With the user of a
/// verified client certificate every request is marked with
/// [`VerifiedClientCertificate`].
pub(super) async fn serve_connection<I>(
    io: I,
    app: Router,
    limits: Limits,
    client_certificate_user: Option<crate::auth::UserInfo>,
    shutdown: CancellationToken,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // The number of open requests. Every `OpenRequest` holds the sending
    // half; so does this function (`open`), so `changed` never fails while
    // it waits. The receiver wakes the loop below on every change.
    let (open, mut changes) = watch::channel(0usize);
    let open = Arc::new(open);
    let count = open.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        let request = OpenRequest::start(&count);
        if let Some(user) = &client_certificate_user {
            req.extensions_mut()
                .insert(VerifiedClientCertificate(user.clone()));
        }
        let app = app.clone();
        async move {
            let resp = app.oneshot(req.map(axum::body::Body::new)).await?;
            Ok::<_, Infallible>(limits::hold_until_sent(resp, request))
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(conn);
    let result = loop {
        let idle = *changes.borrow_and_update() == 0;
        tokio::select! {
            r = conn.as_mut() => break r,
            () = shutdown.cancelled() => {
                conn.as_mut().graceful_shutdown();
                break conn.as_mut().await;
            }
            // No change for a whole idle timeout: if nothing was open all
            // that time, the connection is idle. Any change starts over.
            waited = tokio::time::timeout(limits.idle_timeout, changes.changed()) => {
                if waited.is_err() && idle {
                    tracing::debug!(after = ?limits.idle_timeout, "closing an idle connection");
                    conn.as_mut().graceful_shutdown();
                    break tokio::time::timeout(IDLE_CLOSE_GRACE, conn.as_mut())
                        .await
                        .unwrap_or(Ok(()));
                }
            }
        }
    };
    drop(open);
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
