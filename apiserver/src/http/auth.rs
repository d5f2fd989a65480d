//! Authentication, as kube-apiserver's secure port does it: a client
//! certificate signed by the cluster CA (upstream's x509 authenticator: the
//! subject's CN is the user, its O values the groups), else a bearer token
//! (the static admin token, then service-account JWTs: `auth/tokens.rs`).
//! Every authenticated user is also in `system:authenticated`; the user is
//! put on the request as a [`UserInfo`] extension for the handlers and
//! authorizers.
//!
//! A request with neither gets 401 `Unauthorized` (so does a token that is
//! expired, meant for another audience, or of a deleted service account),
//! except the paths that upstream's `system:public-info-viewer` role opens
//! to anyone: `/healthz`, `/livez`, `/readyz` (and their sub-checks) and
//! `/version`. Without TLS (`--insecure-http`, loopback only) no
//! credentials are checked and every request is the admin's, as on
//! upstream's old insecure port.
//!
//! DNS rebinding: a web page from `evil.example.com` can point that name at
//! 127.0.0.1 and have the browser send requests to the plain-HTTP port,
//! which asks for no credentials. So without an authenticator only requests
//! addressed to a loopback name are served — `localhost`, `127.x.y.z` or
//! `[::1]`, with any port, in the `Host` header or (HTTP/2 `:authority`,
//! absolute-form HTTP/1.1) in the request URI; any other name gets 403.
//! A request naming no host at all (HTTP/1.0 without `Host`) is served: a
//! browser always names the host, so it cannot be a rebinding attack.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::auth::UserInfo;
use crate::auth::serviceaccount::ServiceAccountTokens;
use crate::auth::tokens::{TokenAuthenticator, api_audiences};
use crate::error::{ApiError, Reason};

/// Who may call the API.
#[derive(Clone, Debug)]
pub struct Authenticator {
    /// The bearer-token authenticators.
    tokens: Arc<TokenAuthenticator>,
}

impl Authenticator {
    /// Accepts verified client certificates and these (admin) bearer tokens.
    pub fn new(tokens: Vec<String>) -> Self {
        Authenticator {
            tokens: Arc::new(TokenAuthenticator::new(tokens)),
        }
    }

    /// Also issues (TokenRequest) and accepts service-account tokens signed by `keys`.
    pub fn with_service_accounts(self, keys: ServiceAccountTokens) -> Self {
        let tokens = (*self.tokens).clone().with_service_accounts(keys);
        Authenticator {
            tokens: Arc::new(tokens),
        }
    }

    /// The bearer-token authenticators (TokenReview asks them too).
    pub fn tokens(&self) -> &TokenAuthenticator {
        &self.tokens
    }
}

/// Put on every request of a TLS connection whose peer presented a client
/// certificate that the handshake verified against the cluster CA and
/// whose subject names a user (a CN).
#[derive(Clone, Debug)]
pub struct VerifiedClientCertificate(pub UserInfo);

/// Paths served to anyone (upstream's `system:public-info-viewer`).
fn is_public(path: &str) -> bool {
    super::limits::is_health(path) || path == "/version" || path == "/version/"
}

/// Whether `authority` (a `Host` value or a URI authority: a host and an
/// optional `:port`) names this machine's loopback interface: `localhost`,
/// an IPv4 address in 127.0.0.0/8, or `[::1]`.
fn is_loopback_host(authority: &str) -> bool {
    let (host, port) = match authority.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((ip, port)) => (ip, port),
            None => return false,
        },
        None => authority.split_at(authority.find(':').unwrap_or(authority.len())),
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let loopback = if authority.starts_with('[') {
        host.parse::<std::net::Ipv6Addr>()
            .is_ok_and(|ip| ip.is_loopback())
    } else {
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    port_ok && loopback
}

/// The first host the request is addressed to that is not a loopback
/// name, looking at the URI's authority and every `Host` header.
fn foreign_host(req: &Request) -> Option<String> {
    let from_uri = req.uri().authority().map(|a| a.as_str().to_string());
    let from_headers = req
        .headers()
        .get_all(header::HOST)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    from_uri
        .into_iter()
        .chain(from_headers)
        .find(|h| !is_loopback_host(h))
}

/// 403 for a request to plain HTTP that names another host.
fn foreign_host_forbidden(host: &str, address: &str) -> Response {
    let message = format!(
        "host {host:?} is not allowed: plain HTTP (--insecure-http) has no authentication, so it only answers requests addressed to a loopback name (localhost, 127.0.0.1, [::1]) to guard against DNS rebinding; use http://{address}, or serve HTTPS (miniplane up without --insecure-http) to be reached under other names"
    );
    ApiError::new(Reason::Forbidden, message).into_response()
}

/// The `Authorization: Bearer <token>` of a request.
fn bearer_token(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Middleware: lets the request through when it is authenticated (or
/// public), 401 otherwise; without an authenticator, when it is addressed
/// to a loopback name, 403 otherwise.
pub(super) async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let Some(auth) = &state.authenticator else {
        return match foreign_host(&req) {
            None => {
                // Plain HTTP on loopback, upstream's old insecure port: admin.
                req.extensions_mut().insert(UserInfo::admin());
                next.run(req).await
            }
            Some(host) => foreign_host_forbidden(&host, &state.address),
        };
    };
    let user = match (
        req.extensions().get::<VerifiedClientCertificate>(),
        bearer_token(&req),
    ) {
        (Some(VerifiedClientCertificate(user)), _) => Some(user.clone()),
        (None, Some(token)) => match auth.tokens().authenticate(&state.api, token, &api_audiences()) {
            Ok(found) => found.map(|a| a.user),
            Err(why) => {
                tracing::debug!(error = %why, "bearer token rejected");
                None
            }
        },
        (None, None) => None,
    };
    match user {
        Some(user) => {
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        None if is_public(req.uri().path()) => next.run(req).await,
        None => ApiError::new(Reason::Unauthorized, "Unauthorized").into_response(),
    }
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
    fn loopback_hosts() {
        for host in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1",
            "127.0.0.1:6443",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:8080",
            "localhost.evil.example.com",
            "127.0.0.1.nip.io",
            "10.0.0.1:8080",
            "0.0.0.0",
            "[::]:8080",
            "[::ffff:127.0.0.1]",
            "127.1",
            "",
            "localhost:port",
            "localhost:",
            "[127.0.0.1]",
            "::1",
            "[::1",
            "user@localhost",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn every_named_host_must_be_loopback() {
        let req = |uri: &str, hosts: &[&str]| {
            let mut b = Request::builder().uri(uri);
            for h in hosts {
                b = b.header(header::HOST, *h);
            }
            b.body(axum::body::Body::empty()).unwrap()
        };
        assert_eq!(foreign_host(&req("/api", &["localhost:8080"])), None);
        assert_eq!(foreign_host(&req("/api", &[])), None, "no Host at all");
        assert_eq!(
            foreign_host(&req("/api", &["evil.example.com"])).as_deref(),
            Some("evil.example.com")
        );
        // HTTP/2's :authority (and an absolute-form target) is the URI's authority.
        assert_eq!(
            foreign_host(&req("http://evil.example.com:8080/api", &[])).as_deref(),
            Some("evil.example.com:8080")
        );
        assert_eq!(
            foreign_host(&req("http://127.0.0.1:8080/api", &["evil.example.com"])).as_deref(),
            Some("evil.example.com")
        );
        assert_eq!(
            foreign_host(&req("/api", &["localhost", "evil.example.com"])).as_deref(),
            Some("evil.example.com")
        );
    }

    #[tokio::test]
    async fn tokens_must_match_exactly() {
        let api = crate::testkit::TestApi::builder().open();
        let auth = Authenticator::new(vec!["secret-token".into()]);
        let user = |t: &str| auth.tokens().authenticate(&api, t, &api_audiences()).unwrap();
        assert_eq!(user("secret-token").unwrap().user, UserInfo::admin());
        assert_eq!(user("secret-toke"), None);
        assert_eq!(user("secret-tokenx"), None);
        assert_eq!(user(""), None);
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
