//! Resource URLs: which resource, namespace, name and subresource a path names.
//!
//! ```text
//! /api/v1/pods                                   all namespaces
//! /api/v1/namespaces/default/pods                one namespace
//! /api/v1/namespaces/default/pods/web-1          one object
//! /api/v1/namespaces/default/pods/web-1/log      a subresource
//! /apis/apps/v1/namespaces/default/deployments/web/scale
//! /api/v1/nodes/node-1/status                    cluster-scoped
//! /api/v1/namespaces/default                     the namespace object itself
//! /api/v1/watch/namespaces/default/pods          deprecated watch paths: the list
//! /api/v1/watch/namespaces/default/pods/web-1      URL with watch=true; a name
//! /apis/apps/v1/watch/deployments                  watches that one object
//! ```
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`.

use std::sync::Arc;

use crate::error::{ApiError, Reason};
use crate::registry::{Registry, ResourceInfo, Subresource};

/// A parsed resource URL.
#[derive(Clone, Debug)]
pub struct Route {
    /// The resource.
    pub info: Arc<ResourceInfo>,
    /// The namespace, for namespaced resources (None = all namespaces).
    pub namespace: Option<String>,
    /// The object name; None for a collection.
    pub name: Option<String>,
    /// The subresource, if any.
    pub sub: Option<Subresource>,
    /// Reached through the deprecated `/watch/` prefix: the request is a
    /// watch whatever its query says (never with a subresource).
    pub watch: bool,
}

/// Upstream's answer to a URL nothing serves (go-restful's 404 as
/// `NewGenericServerResponse` renders it: empty `details`).
pub fn not_found() -> ApiError {
    ApiError {
        reason: Reason::NotFound,
        message: "the server could not find the requested resource".to_string(),
        details: Some(serde_json::json!({})),
    }
}

/// Parses the segments after `/api/v1` or `/apis/<group>/<version>`.
pub fn parse(registry: &Registry, group: &str, version: &str, rest: &[&str]) -> Result<Route, ApiError> {
    match rest {
        ["watch", rest @ ..] => {
            let route = parse_resource(registry, group, version, rest)?;
            if route.sub.is_some() {
                return Err(not_found());
            }
            Ok(Route { watch: true, ..route })
        }
        _ => parse_resource(registry, group, version, rest),
    }
}

fn parse_resource(registry: &Registry, group: &str, version: &str, rest: &[&str]) -> Result<Route, ApiError> {
    let lookup = |plural: &str| registry.get(group, version, plural).ok_or_else(not_found);
    let core = group.is_empty();
    match rest {
        ["namespaces", ns, third, tail @ ..] if !(core && is_namespace_sub(third) && tail.is_empty()) => {
            let info = lookup(third)?;
            if !info.namespaced {
                return Err(not_found());
            }
            item_or_collection(info, Some(ns.to_string()), tail)
        }
        [plural, tail @ ..] => {
            let info = lookup(plural)?;
            if info.namespaced && !tail.is_empty() {
                return Err(not_found());
            }
            item_or_collection(info, None, tail)
        }
        [] => Err(not_found()),
    }
}

fn is_namespace_sub(s: &str) -> bool {
    matches!(s, "status" | "finalize")
}

fn item_or_collection(
    info: Arc<ResourceInfo>,
    namespace: Option<String>,
    tail: &[&str],
) -> Result<Route, ApiError> {
    let (name, sub) = match tail {
        [] => (None, None),
        [name] => (Some(name.to_string()), None),
        [name, sub] => (Some(name.to_string()), Some(subresource(&info, sub)?)),
        _ => return Err(not_found()),
    };
    if name.as_deref() == Some("") {
        return Err(not_found());
    }
    Ok(Route {
        info,
        namespace,
        name,
        sub,
        watch: false,
    })
}

fn subresource(info: &ResourceInfo, s: &str) -> Result<Subresource, ApiError> {
    let sub = match s {
        "status" | "finalize" => Subresource::Status,
        "scale" => Subresource::Scale,
        "binding" => Subresource::Binding,
        "log" => Subresource::Log,
        "eviction" => Subresource::Eviction,
        "ephemeralcontainers" => Subresource::EphemeralContainers,
        "token" => Subresource::Token,
        "approval" => Subresource::Approval,
        _ => return Err(not_found()),
    };
    if info.has(sub) { Ok(sub) } else { Err(not_found()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(group: &str, path: &str) -> Result<Route, ApiError> {
        let segs: Vec<&str> = path.split('/').collect();
        parse(&Registry::new(), group, "v1", &segs)
    }

    #[test]
    fn namespaced_paths() {
        let r = route("apps", "namespaces/default/deployments/web/scale").unwrap();
        assert_eq!(r.info.plural, "deployments");
        assert_eq!(r.namespace.as_deref(), Some("default"));
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.sub, Some(Subresource::Scale));
        let r = route("", "pods").unwrap();
        assert!(r.namespace.is_none() && r.name.is_none());
        assert!(route("", "pods/x").is_err());
    }

    #[test]
    fn namespace_objects_and_their_subresources() {
        let r = route("", "namespaces/default").unwrap();
        assert_eq!(
            (r.info.plural.as_str(), r.name.as_deref()),
            ("namespaces", Some("default"))
        );
        let r = route("", "namespaces/default/status").unwrap();
        assert_eq!(r.sub, Some(Subresource::Status));
        let r = route("", "namespaces/default/configmaps").unwrap();
        assert_eq!(r.info.plural, "configmaps");
        assert!(route("", "namespaces/default/nodes").is_err());
        assert!(route("apps", "namespaces/default/deployments/web/log").is_err());
    }

    #[test]
    fn deprecated_watch_paths() {
        let r = route("", "watch/namespaces/default/configmaps").unwrap();
        assert!(r.watch);
        assert_eq!(
            (r.info.plural.as_str(), r.namespace.as_deref(), r.name.as_deref()),
            ("configmaps", Some("default"), None)
        );
        let r = route("", "watch/namespaces/default/configmaps/a").unwrap();
        assert_eq!((r.name.as_deref(), r.watch), (Some("a"), true));
        let r = route("", "watch/pods").unwrap();
        assert!(r.watch && r.namespace.is_none() && r.name.is_none());
        let r = route("", "watch/nodes/n1").unwrap();
        assert_eq!(r.name.as_deref(), Some("n1"));
        let r = route("", "watch/namespaces/default").unwrap();
        assert_eq!(
            (r.info.plural.as_str(), r.name.as_deref(), r.watch),
            ("namespaces", Some("default"), true)
        );
        let r = route("apps", "watch/namespaces/d/deployments/web").unwrap();
        assert_eq!(
            (r.info.plural.as_str(), r.name.as_deref()),
            ("deployments", Some("web"))
        );
        assert!(!route("", "namespaces/default/configmaps").unwrap().watch);
        // No subresources, no name across namespaces, nothing after `watch`.
        assert!(route("", "watch/namespaces/default/pods/p/status").is_err());
        assert!(route("", "watch/namespaces/default/status").is_err());
        assert!(route("", "watch/pods/p").is_err());
        assert!(route("", "watch").is_err());
        assert!(route("", "watch/widgets").is_err());
    }
}
