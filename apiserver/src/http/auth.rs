//! Authentication, as kube-apiserver's secure port does it for the
//! credentials a kubeconfig carries: a client certificate signed by the
//! cluster CA, or a bearer token (upstream's x509 and token-file
//! authenticators, tried in that order).
//!
//! A request with neither gets 401 `Unauthorized`, except the paths that
//! upstream's `system:public-info-viewer` role opens to anyone:
//! `/healthz`, `/livez`, `/readyz` (and their sub-checks) and `/version`.
//!
//! Simplified: there is no authorization yet (every authenticated user may
//! do everything, as `system:masters` may), so the certificate's subject
//! and the token's user are not read; a certificate counts once the TLS
//! handshake has verified it against the CA. Without TLS
//! (`--insecure-http`, loopback only) nothing is checked, as on upstream's
//! old insecure port.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::error::{ApiError, Reason};

/// Who may call the API.
#[derive(Clone, Debug)]
pub struct Authenticator {
    /// Accepted bearer tokens (compared in constant time).
    tokens: Arc<Vec<String>>,
}

impl Authenticator {
    /// Accepts verified client certificates and these bearer tokens.
    pub fn new(tokens: Vec<String>) -> Self {
        Authenticator {
            tokens: Arc::new(tokens),
        }
    }

    fn accepts_token(&self, presented: &str) -> bool {
        self.tokens
            .iter()
            .any(|t| constant_time_eq(t.as_bytes(), presented.as_bytes()))
    }
}

/// Put on every request of a TLS connection whose peer presented a client
/// certificate that the handshake verified against the cluster CA.
#[derive(Clone, Copy, Debug)]
pub struct VerifiedClientCertificate;

/// Paths served to anyone (upstream's `system:public-info-viewer`).
fn is_public(path: &str) -> bool {
    super::limits::is_health(path) || path == "/version" || path == "/version/"
}

/// The `Authorization: Bearer <token>` of a request.
fn bearer_token(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Middleware: lets the request through when it is authenticated (or
/// public, or the server has no authenticator); 401 otherwise.
pub(super) async fn authenticate(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(auth) = &state.authenticator else {
        return next.run(req).await;
    };
    let allowed = is_public(req.uri().path())
        || req.extensions().get::<VerifiedClientCertificate>().is_some()
        || bearer_token(&req).is_some_and(|t| auth.accepts_token(t));
    if allowed {
        next.run(req).await
    } else {
        ApiError::new(Reason::Unauthorized, "Unauthorized").into_response()
    }
}

/// Equality whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_and_version_are_public_and_nothing_else_is() {
        for path in [
            "/healthz",
            "/livez",
            "/readyz",
            "/readyz/ping",
            "/version",
            "/version/",
        ] {
            assert!(is_public(path), "{path}");
        }
        for path in [
            "/api/v1/pods",
            "/apis",
            "/openapi/v3",
            "/metrics",
            "/healthzz",
            "/version/x",
        ] {
            assert!(!is_public(path), "{path}");
        }
    }

    #[test]
    fn tokens_must_match_exactly() {
        let auth = Authenticator::new(vec!["secret-token".into()]);
        assert!(auth.accepts_token("secret-token"));
        assert!(!auth.accepts_token("secret-toke"));
        assert!(!auth.accepts_token("secret-tokenx"));
        assert!(!auth.accepts_token(""));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        let req = |v: &str| {
            Request::builder()
                .header(header::AUTHORIZATION, v)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        assert_eq!(bearer_token(&req("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&req("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&req("Basic abc")), None);
    }
}
