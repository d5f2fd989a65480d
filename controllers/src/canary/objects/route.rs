//! The HTTPRoute: one rule splitting requests between the `-primary` and
//! `-canary` Services by weight; in A/B testing a first rule sends the
//! requests matching `analysis.match` to the canary.
//!
//! Flagger: `pkg/router/gateway_api.go` (`Reconcile`, `GetRoutes`,
//! `SetRoutes`, `makeBackendRefs`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{CANARY_RPS_ANNOTATION, HEADER_SHARE_ANNOTATION, Names, canary_labels, names, owner_ref};
use crate::canary::types::Canary;
use crate::gateway::types::{HTTPBackendRef, HTTPRoute, HTTPRouteMatch, HTTPRouteRule, HTTPRouteSpec};

/// The split of the default rule's traffic, in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// The `-primary` Service's weight.
    pub primary: i32,
    /// The `-canary` Service's weight.
    pub canary: i32,
}

impl Weights {
    /// Everything to the primary (the state between rollouts).
    pub const PRIMARY: Weights = Weights {
        primary: 100,
        canary: 0,
    };

    /// `canary` percent to the canary, the rest to the primary.
    pub fn canary(canary: i32) -> Weights {
        let canary = canary.clamp(0, 100);
        Weights {
            primary: 100 - canary,
            canary,
        }
    }
}

/// The route `<service>`: attached to `spec.service.gatewayRefs`, for
/// `spec.service.hosts`, its default rule split by `weights`. With
/// `ab_testing` (and `analysis.match` set) a first rule sends the matching
/// requests all to the canary. The Canary's
/// [`CANARY_RPS_ANNOTATION`] and [`HEADER_SHARE_ANNOTATION`] are copied,
/// for the traffic simulation. Owned by `canary`.
pub fn route(canary: &Canary, weights: Weights, ab_testing: bool) -> HTTPRoute {
    let n = names(canary);
    let port = canary.spec.service.port;
    let mut rules = Vec::new();
    let matches = &canary.spec.analysis.match_;
    if ab_testing && !matches.is_empty() {
        rules.push(HTTPRouteRule {
            matches: matches.clone(),
            backend_refs: backend_refs(
                &n,
                port,
                Weights {
                    primary: 0,
                    canary: 100,
                },
            ),
        });
    }
    rules.push(HTTPRouteRule {
        matches: Vec::new(),
        backend_refs: backend_refs(&n, port, weights),
    });
    let annotations: BTreeMap<String, String> = [CANARY_RPS_ANNOTATION, HEADER_SHARE_ANNOTATION]
        .iter()
        .filter_map(|k| {
            let v = canary.metadata.annotations.as_ref()?.get(*k)?;
            Some((k.to_string(), v.clone()))
        })
        .collect();
    HTTPRoute {
        metadata: ObjectMeta {
            name: Some(n.route.clone()),
            namespace: canary.metadata.namespace.clone(),
            labels: Some(canary_labels(canary)),
            annotations: (!annotations.is_empty()).then_some(annotations),
            owner_references: Some(vec![owner_ref(canary)]),
            ..Default::default()
        },
        spec: HTTPRouteSpec {
            parent_refs: canary.spec.service.gateway_refs.clone(),
            hostnames: canary.spec.service.hosts.clone(),
            rules,
        },
        status: None,
    }
}

/// `[primary, canary]` backends on `port` with `weights`.
fn backend_refs(n: &Names, port: i32, weights: Weights) -> Vec<HTTPBackendRef> {
    let backend = |name: &str, weight: i32| HTTPBackendRef {
        name: name.to_string(),
        port: Some(port),
        weight: Some(weight),
        ..Default::default()
    };
    vec![
        backend(&n.primary_service, weights.primary),
        backend(&n.canary_service, weights.canary),
    ]
}

/// The default rule's weights (Flagger's `GetRoutes`): the last rule that
/// matches every request (no matches, or the API's default match, path
/// prefix `/`, as the server stores it); `None` when the route has no such
/// rule or the rule lacks either backend. An unset weight is the API's
/// default, 1.
pub fn route_weights(route: &HTTPRoute, names: &Names) -> Option<Weights> {
    let rule = route
        .spec
        .rules
        .iter()
        .rev()
        .find(|r| r.matches.iter().all(matches_everything))?;
    let weight = |service: &str| {
        rule.backend_refs
            .iter()
            .find(|b| b.name == service && is_service(b))
            .map(|b| b.weight.unwrap_or(1))
    };
    Some(Weights {
        primary: weight(&names.primary_service)?,
        canary: weight(&names.canary_service)?,
    })
}

/// A backend in the core group of kind Service (the defaults).
fn is_service(b: &HTTPBackendRef) -> bool {
    b.group.as_deref().unwrap_or("").is_empty() && b.kind.as_deref().unwrap_or("Service") == "Service"
}

/// A match every request meets: no headers, and no path or the path prefix `/`.
fn matches_everything(m: &HTTPRouteMatch) -> bool {
    let path_all = m.path.as_ref().is_none_or(|p| {
        p.type_.as_deref().unwrap_or("PathPrefix") == "PathPrefix" && p.value.as_deref().unwrap_or("/") == "/"
    });
    m.headers.is_empty() && path_all
}
