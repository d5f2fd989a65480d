//! The web view at `/ui/`: a live page of one namespace's owner tree
//! (Deployment → ReplicaSets → Pods by node), a rollout timeline, the
//! causal journal and the time machine's controls.
//!
//! The page is three files in `apiserver/ui/` (HTML, plain JavaScript, CSS;
//! no framework, no build step, nothing fetched from elsewhere), built into
//! the binary with `include_str!`. Everything it shows it reads from the API
//! like any other client: list + watch of deployments, replicasets, pods and
//! events, `/debug/journal` and `/debug/time`. There is no upstream
//! counterpart in kube-apiserver; the Kubernetes Dashboard is a separate
//! deployment with its own backend, this is a page and nothing more.
//!
//! # Who may see what
//!
//! The three files are public: they are served before authentication (see
//! [`super::router`]), carry no data and no secret, and are the same for
//! everyone. Every request the page makes for data goes through the usual
//! authentication and authorization:
//!
//! - With `--insecure-http` (loopback only, no credentials), the page's
//!   requests are the admin's, as every request there is; the loopback
//!   `Host` check against DNS rebinding (`auth.rs`) applies to them too.
//! - With HTTPS (the default), a browser has no client certificate, so the
//!   page sends the admin's bearer token (the kubeconfig's) as
//!   `Authorization: Bearer`. `miniplane up` prints the page's address with
//!   the token in the URL *fragment* (`https://127.0.0.1:6443/ui/#token=…`):
//!   a fragment is never sent to the server, so the token is not in any
//!   request line or log; the page moves it to `sessionStorage` (this tab
//!   only) and removes it from the address bar. The token is never a
//!   cookie, so another site cannot make the browser send it (no CSRF), and
//!   the API sends no CORS headers, so another site's script cannot read
//!   answers either.
//!
//! Each file is sent with a Content-Security-Policy that allows scripts,
//! styles and requests to this origin only (no inline script: whatever an
//! object's name or message holds is set as text, never as markup) and
//! forbids framing (no clickjacking of the time controls).

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;

/// The page.
const INDEX_HTML: &str = include_str!("../../ui/index.html");
/// The page's script: informers over fetch, the tree, the timeline, the
/// journal, the time controls.
const APP_JS: &str = include_str!("../../ui/app.js");
/// The page's style.
const STYLE_CSS: &str = include_str!("../../ui/style.css");

/// Scripts, styles and requests from this origin only; images only as
/// `data:` URLs (the empty favicon); never inside a frame.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The routes served here: `/ui` (redirected to `/ui/`, so that the page's
/// relative links resolve; a browser keeps the `#token=` fragment across
/// the redirect) and the three files.
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route(
            "/ui/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/ui/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/ui/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
}

/// One embedded file with its type and the security headers. `no-cache`:
/// the browser revalidates, so a new binary's page is seen at once.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::extract::Request;
    use axum::http::StatusCode;
    use tokio_util::sync::CancellationToken;
    use tower::ServiceExt;

    /// A router that asks for credentials (as HTTPS does), answering `path`
    /// to a request without any.
    async fn anonymous_get(path: &str) -> Response {
        let api = crate::testkit::TestApi::builder().open();
        let state = AppState::new(api, "127.0.0.1:1".into(), CancellationToken::new())
            .with_authenticator(super::super::auth::Authenticator::new(vec!["t".into()]));
        let req = Request::builder().uri(path).body(Body::empty()).unwrap();
        super::super::router(state).oneshot(req).await.unwrap()
    }

    #[tokio::test]
    async fn the_page_is_public_and_the_data_is_not() {
        for (path, content_type) in [
            ("/ui/", "text/html; charset=utf-8"),
            ("/ui/app.js", "text/javascript; charset=utf-8"),
            ("/ui/style.css", "text/css; charset=utf-8"),
        ] {
            let resp = anonymous_get(path).await;
            assert_eq!(resp.status(), StatusCode::OK, "{path}");
            assert_eq!(resp.headers()[header::CONTENT_TYPE], content_type);
            assert_eq!(
                resp.headers()[header::CONTENT_SECURITY_POLICY],
                CONTENT_SECURITY_POLICY
            );
        }
        let resp = anonymous_get("/ui").await;
        assert_eq!(resp.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(resp.headers()[header::LOCATION], "/ui/");
        for path in ["/api/v1/namespaces/default/pods", "/ui/nope.js", "/debug/time"] {
            let status = anonymous_get(path).await.status();
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
        }
    }

    #[test]
    fn the_page_loads_its_own_files_only() {
        assert!(INDEX_HTML.contains(r#"src="app.js""#));
        assert!(INDEX_HTML.contains(r#"href="style.css""#));
        assert!(!STYLE_CSS.contains("url(") && !STYLE_CSS.contains("@import"));
        // The one URL in the files is SVG's namespace name, which is never fetched.
        for file in [INDEX_HTML, APP_JS, STYLE_CSS] {
            let urls = file.matches("://").count();
            let svg = file.matches("'http://www.w3.org/2000/svg'").count();
            assert_eq!(urls, svg);
        }
    }
}
