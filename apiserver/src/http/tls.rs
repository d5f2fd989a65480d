//! HTTPS, as a cluster's secure port serves it: TLS 1.2 and 1.3 (rustls on
//! ring), HTTP/2 or HTTP/1.1 chosen by ALPN, and an optional client
//! certificate checked against the cluster CA during the handshake
//! (upstream's `VerifyClientCertIfGiven`: a certificate the CA did not sign
//! fails the handshake; none at all leaves the bearer token to decide).
//!
//! Flow: accept TCP → TLS handshake (bounded by [`HANDSHAKE_TIMEOUT`]) →
//! mark the connection's requests with [`VerifiedClientCertificate`] when
//! the peer presented one → serve HTTP on it until the peer closes or
//! shutdown asks it to finish its in-flight requests.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::AppState;
use super::auth::VerifiedClientCertificate;

/// A peer that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The PEM files a secure port needs.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The serving certificate (then any intermediates), PEM.
    pub cert_chain: String,
    /// The serving certificate's private key, PEM (PKCS#8, SEC1 or PKCS#1).
    pub key: String,
    /// The CA that signs client certificates, PEM.
    pub client_ca: String,
}

/// Why a TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM block was unreadable or missing.
    #[error("reading {what}: {detail}")]
    Pem {
        /// Which file.
        what: &'static str,
        /// The parser's complaint.
        detail: String,
    },
    /// rustls refused the certificates or key.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The client CA could not be used.
    #[error("client CA: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
}

fn pem_error(what: &'static str) -> impl Fn(rustls::pki_types::pem::Error) -> TlsError {
    move |e| TlsError::Pem {
        what,
        detail: e.to_string(),
    }
}

/// A rustls server configuration for `files`, offering h2 and http/1.1.
pub fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = CertificateDer::pem_slice_iter(files.cert_chain.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error("the serving certificate"))?;
    let key = PrivateKeyDer::from_pem_slice(files.key.as_bytes()).map_err(pem_error("the serving key"))?;
    let mut roots = RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(files.client_ca.as_bytes()) {
        roots.add(ca.map_err(pem_error("the client CA"))?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves HTTPS on `listener` until `state.shutdown` is cancelled, then
/// lets every connection finish its in-flight requests (open watches end
/// on the same signal) before returning.
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    state: AppState,
    config: Arc<rustls::ServerConfig>,
) -> std::io::Result<()> {
    let shutdown = state.shutdown.clone();
    let app = super::router(state);
    let acceptor = TlsAcceptor::from(config);
    // Every connection task; `wait` below returns when all have ended.
    let connections = TaskTracker::new();
    loop {
        let (tcp, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: keep serving the
                    // connections there are.
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let (acceptor, app, shutdown) = (acceptor.clone(), app.clone(), shutdown.clone());
        connections.spawn(async move {
            let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await else {
                return;
            };
            let verified = tls.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
            serve_connection(tls, app, verified, shutdown).await;
        });
    }
    connections.close();
    connections.wait().await;
    Ok(())
}

/// HTTP/1.1 or HTTP/2 (as ALPN chose) on one TLS connection.
async fn serve_connection(
    tls: tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
    app: Router,
    verified: bool,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        if verified {
            req.extensions_mut().insert(VerifiedClientCertificate);
        }
        app.clone().oneshot(req.map(axum::body::Body::new))
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        () = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
