//! The authorization middleware: impersonation, then may this user do
//! what the request asks? 403 if not.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go`
//! (`WithAuthorization`), `.../filters/impersonation.go` (run before it,
//! see [`crate::auth::impersonation`]) and `endpoints/request/requestinfo.go`
//! (`NewRequestInfo`: the verb, API group, resource, subresource,
//! namespace and name a URL names, without the registry). A request
//! without a user (the public health and version paths, let through by
//! authentication) is `system:anonymous` in `system:unauthenticated`.
//!
//! Simplified: `proxy` paths and `fieldSelector=metadata.name=x` naming
//! a list's object (upstream narrows the name from it) are not parsed.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::auth::UserInfo;
use crate::auth::authorizer::{Attributes, forbidden};
use crate::auth::impersonation::impersonate;

/// Middleware: replaces the user by the impersonated one, then lets the
/// request through only when the authorizer allows it.
pub(super) async fn authorize(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let requestor = req
        .extensions()
        .get::<UserInfo>()
        .cloned()
        .unwrap_or_else(anonymous);
    let user = match impersonate(req.headers(), &requestor, &state.authorizer) {
        Ok(Some(user)) => {
            req.extensions_mut().insert(user.clone());
            user
        }
        Ok(None) => requestor,
        Err(e) => return e.into_response(),
    };
    let attrs = request_attributes(
        user,
        req.method().as_str(),
        req.uri().path(),
        req.uri().query().unwrap_or(""),
    );
    let decision = state.authorizer.authorize(&attrs);
    if !decision.allowed {
        return forbidden(&attrs, &decision.reason).into_response();
    }
    next.run(req).await
}

/// Upstream `user.Anonymous` in `user.AllUnauthenticated`.
fn anonymous() -> UserInfo {
    UserInfo {
        name: "system:anonymous".into(),
        groups: vec!["system:unauthenticated".into()],
        ..UserInfo::default()
    }
}

/// Upstream `RequestInfoFactory.NewRequestInfo` as attributes for `user`.
pub fn request_attributes(user: UserInfo, method: &str, path: &str, query: &str) -> Attributes {
    let non_resource = Attributes {
        user: user.clone(),
        verb: method.to_ascii_lowercase(),
        path: path.to_string(),
        ..Attributes::default()
    };
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    // Fewer than three segments (`/api/v1`, `/apis/apps`) is discovery;
    // Prometheus's query API (`/api/v1/query`) is no resource either.
    if parts.len() < 3 || super::promql::is_promql_path(path) {
        return non_resource;
    }
    let (group, rest) = match parts.as_slice() {
        ["api", rest @ ..] => ("", rest),
        ["apis", group, rest @ ..] if rest.len() >= 2 => (*group, rest),
        _ => return non_resource,
    };
    let (version, mut rest) = (rest[0], &rest[1..]);
    let mut attrs = Attributes {
        user,
        resource_request: true,
        api_group: group.to_string(),
        api_version: version.to_string(),
        ..Attributes::default()
    };
    attrs.verb = match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
    .to_string();
    if rest.first() == Some(&"watch") {
        attrs.verb = "watch".into();
        rest = &rest[1..];
    }
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        attrs.namespace = rest[1].to_string();
        // `/namespaces/NAME` and `/namespaces/NAME/status|finalize` are the
        // namespace object itself.
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }
    attrs.resource = rest.first().map(|s| s.to_string()).unwrap_or_default();
    attrs.name = rest.get(1).map(|s| s.to_string()).unwrap_or_default();
    attrs.subresource = rest.get(2).map(|s| s.to_string()).unwrap_or_default();
    if attrs.name.is_empty() && attrs.verb == "get" {
        attrs.verb = if watch_requested(query) { "watch" } else { "list" }.into();
    }
    if attrs.name.is_empty() && attrs.verb == "delete" {
        attrs.verb = "deletecollection".into();
    }
    attrs
}

/// `watch=true` (or `1`) in the query.
fn watch_requested(query: &str) -> bool {
    form_urlencoded::parse(query.as_bytes()).any(|(k, v)| k == "watch" && (v == "true" || v == "1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(method: &str, path: &str, query: &str) -> (String, String, String, String, String, String) {
        let a = request_attributes(UserInfo::default(), method, path, query);
        if !a.resource_request {
            return (
                a.verb,
                a.path,
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            );
        }
        (
            a.verb,
            a.api_group,
            a.namespace,
            a.resource,
            a.name,
            a.subresource,
        )
    }

    fn t(v: [&str; 6]) -> (String, String, String, String, String, String) {
        let [a, b, c, d, e, f] = v.map(str::to_string);
        (a, b, c, d, e, f)
    }

    #[test]
    fn request_info_as_upstream() {
        assert_eq!(
            attrs("GET", "/api/v1/namespaces/ns/pods", ""),
            t(["list", "", "ns", "pods", "", ""])
        );
        assert_eq!(
            attrs("GET", "/api/v1/namespaces/ns/pods", "watch=true"),
            t(["watch", "", "ns", "pods", "", ""])
        );
        assert_eq!(
            attrs("GET", "/api/v1/pods", ""),
            t(["list", "", "", "pods", "", ""])
        );
        assert_eq!(
            attrs("GET", "/api/v1/namespaces/ns/pods/web/log", ""),
            t(["get", "", "ns", "pods", "web", "log"])
        );
        assert_eq!(
            attrs("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale", ""),
            t(["update", "apps", "ns", "deployments", "d", "scale"])
        );
        assert_eq!(
            attrs("DELETE", "/api/v1/namespaces/ns/pods", ""),
            t(["deletecollection", "", "ns", "pods", "", ""])
        );
        assert_eq!(
            attrs("GET", "/api/v1/namespaces/ns", ""),
            t(["get", "", "ns", "namespaces", "ns", ""])
        );
        assert_eq!(
            attrs("PUT", "/api/v1/namespaces/ns/finalize", ""),
            t(["update", "", "ns", "namespaces", "ns", "finalize"])
        );
        assert_eq!(
            attrs("GET", "/api/v1/watch/namespaces/ns/configmaps/c", ""),
            t(["watch", "", "ns", "configmaps", "c", ""])
        );
        assert_eq!(
            attrs("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", ""),
            t(["create", "rbac.authorization.k8s.io", "", "clusterroles", "", ""])
        );
        // Discovery and other paths are non-resource requests.
        for path in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps",
            "/apis/apps/v1",
            "/healthz",
            "/openapi/v3/apis/apps/v1",
        ] {
            let (verb, p, ..) = attrs("GET", path, "");
            assert_eq!((verb.as_str(), p.as_str()), ("get", path));
        }
    }
}
