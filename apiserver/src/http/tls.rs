//! HTTPS, as a cluster's secure port serves it: TLS 1.2 and 1.3 (rustls on
//! ring), HTTP/2 or HTTP/1.1 chosen by ALPN, and an optional client
//! certificate checked against the cluster CA during the handshake
//! (upstream's `VerifyClientCertIfGiven`: a certificate the CA did not sign
//! fails the handshake; none at all leaves the bearer token to decide).
//!
//! Flow: accept TCP → TLS handshake (bounded by [`HANDSHAKE_TIMEOUT`]) →
//! mark the connection's requests with `VerifiedClientCertificate` (the
//! user its subject names, `auth/x509.rs`) when the peer presented one →
//! serve HTTP on it (`conn.rs`, with the same
//! timeouts as plain HTTP) until the peer closes, a timeout closes it, or
//! shutdown asks it to finish its in-flight requests.

use std::sync::Arc;
use std::time::Duration;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;
use tokio_util::task::TaskTracker;

use super::{AppState, conn};

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
/// on the same signal) before returning. Accept errors are retried, never
/// returned (see `conn::accept`).
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    state: AppState,
    config: Arc<rustls::ServerConfig>,
) -> std::io::Result<()> {
    let shutdown = state.shutdown.clone();
    let limits = state.limits.clone();
    let app = super::router(state);
    let acceptor = TlsAcceptor::from(config);
    // Every connection task; `wait` below returns when all have ended.
    let connections = TaskTracker::new();
    while let Some(tcp) = conn::accept(&listener, &shutdown).await {
        let (acceptor, app, limits, shutdown) =
            (acceptor.clone(), app.clone(), limits.clone(), shutdown.clone());
        connections.spawn(async move {
            // Wall clock, as every connection timeout (see `conn`).
            let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await else {
                return;
            };
            // The leaf certificate, which the handshake verified against the CA.
            let user = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|leaf| crate::auth::x509::certificate_user(leaf));
            conn::serve_connection(tls, app, limits, user, shutdown).await;
        });
    }
    connections.close();
    connections.wait().await;
    Ok(())
}
