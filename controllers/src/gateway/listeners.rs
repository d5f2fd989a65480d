//! Listeners: which are valid, which route kinds they take, and whether a
//! route attaches to them.
//!
//! Upstream: the Gateway API's `apis/v1/gateway_types.go` (`Listener`,
//! `AllowedRoutes`, `RouteNamespaces`, the listener conditions) and
//! `httproute_types.go` / `shared_types.go` (`ParentReference`: `sectionName`
//! and `port` select listeners; hostnames must intersect). Pure.
//!
//! The simulated gateway implements HTTP and HTTPS listeners for HTTPRoutes.
//! Simplified: an HTTPS listener's certificate Secrets are not looked up
//! (its ResolvedRefs is True); listeners that share a port with different
//! protocols are all Conflicted (ProtocolConflict) and not accepted, as the
//! API asks (no winner is picked); hostname conflicts cannot happen, the
//! CRD's CEL rules refuse them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::conditions::{self as c, Cond};
use super::types::{GROUP, Gateway, HTTPRoute, Listener, ParentReference};
use crate::controller_utils::selector::selector_of;

/// The route kind the simulated gateway implements.
pub const HTTP_ROUTE: &str = "HTTPRoute";

/// What the controller makes of one listener of a Gateway.
#[derive(Clone, Debug, PartialEq)]
pub struct ListenerState {
    /// `status.listeners[].supportedKinds`.
    pub supported_kinds: Vec<Value>,
    /// Accepted, Programmed, ResolvedRefs, Conflicted.
    pub conditions: Vec<Cond>,
    /// Whether routes may attach: accepted, not conflicted, HTTPRoute supported.
    pub attachable: bool,
}

/// The state of each listener of `gateway`, in spec order.
pub fn listener_states(gateway: &Gateway) -> Vec<ListenerState> {
    let listeners = &gateway.spec.listeners;
    listeners
        .iter()
        .map(|l| {
            let conflicted = listeners
                .iter()
                .any(|o| o.port == l.port && !o.protocol.eq_ignore_ascii_case(&l.protocol));
            listener_state(l, conflicted)
        })
        .collect()
}

fn listener_state(l: &Listener, conflicted: bool) -> ListenerState {
    let supported_protocol = matches!(l.protocol.as_str(), "HTTP" | "HTTPS");
    let (kinds, invalid_kinds) = route_kinds(l, supported_protocol);
    let accepted = if !supported_protocol {
        Cond::no(
            c::ACCEPTED,
            c::REASON_UNSUPPORTED_PROTOCOL,
            format!(
                "protocol {:?} is not supported: miniplane's simulated gateway serves HTTP and HTTPS",
                l.protocol
            ),
        )
    } else if conflicted {
        Cond::no(
            c::ACCEPTED,
            c::REASON_PROTOCOL_CONFLICT,
            format!("another listener uses port {} with a different protocol", l.port),
        )
    } else {
        Cond::yes(c::ACCEPTED, c::REASON_ACCEPTED, "Listener is accepted")
    };
    let resolved = match invalid_kinds.is_empty() {
        true => Cond::yes(
            c::RESOLVED_REFS,
            c::REASON_RESOLVED_REFS,
            "All references are resolved",
        ),
        false => Cond::no(
            c::RESOLVED_REFS,
            c::REASON_INVALID_ROUTE_KINDS,
            format!("route kinds not supported: {}", invalid_kinds.join(", ")),
        ),
    };
    let conflict = match conflicted {
        true => Cond::yes(
            c::CONFLICTED,
            c::REASON_PROTOCOL_CONFLICT,
            format!("another listener uses port {} with a different protocol", l.port),
        ),
        false => Cond::no(c::CONFLICTED, c::REASON_NO_CONFLICTS, "No conflicts"),
    };
    let ok = accepted.status;
    let programmed = match ok {
        true => Cond::yes(c::PROGRAMMED, c::REASON_PROGRAMMED, "Listener is programmed"),
        false => Cond::no(c::PROGRAMMED, c::REASON_INVALID, "Listener is not valid"),
    };
    ListenerState {
        attachable: ok && !kinds.is_empty(),
        supported_kinds: kinds,
        conditions: vec![accepted, programmed, resolved, conflict],
    }
}

/// The supported kinds of a listener and the names of the unsupported ones
/// its `allowedRoutes.kinds` asks for. Without kinds, the protocol decides:
/// HTTPRoute for HTTP and HTTPS, nothing otherwise.
fn route_kinds(l: &Listener, supported_protocol: bool) -> (Vec<Value>, Vec<String>) {
    let http_route = || json!({"group": GROUP, "kind": HTTP_ROUTE});
    let asked = l
        .allowed_routes
        .as_ref()
        .and_then(|a| a.get("kinds"))
        .and_then(Value::as_array)
        .filter(|k| !k.is_empty());
    let Some(asked) = asked else {
        return match supported_protocol {
            true => (vec![http_route()], Vec::new()),
            false => (Vec::new(), Vec::new()),
        };
    };
    let mut kinds = Vec::new();
    let mut invalid = Vec::new();
    for k in asked {
        let group = k.get("group").and_then(Value::as_str).unwrap_or(GROUP);
        let kind = k.get("kind").and_then(Value::as_str).unwrap_or("");
        if supported_protocol && group == GROUP && kind == HTTP_ROUTE {
            if kinds.is_empty() {
                kinds.push(http_route());
            }
        } else {
            invalid.push(match group {
                "" => kind.to_string(),
                g => format!("{g}/{kind}"),
            });
        }
    }
    (kinds, invalid)
}

/// Where a route's parent reference lands on a Gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attachment {
    /// Attached to these listeners (indices into `spec.listeners`).
    Attached(Vec<usize>),
    /// Not attached: the `Accepted` reason and message.
    Rejected(&'static str, String),
}

/// Whether `parent` (a reference to `gateway`) attaches `route` to some of
/// its listeners. `states` are [`listener_states`] of `gateway`;
/// `route_ns_labels` the labels of the route's namespace (for listeners
/// selecting namespaces by label; `None` when not known).
///
/// In order: `sectionName` and `port` select the listeners (none:
/// NoMatchingParent); those must take HTTPRoutes from the route's namespace
/// (none: NotAllowedByListeners); their hostname must intersect the route's
/// hostnames (none: NoMatchingListenerHostname).
pub fn attach(
    gateway: &Gateway,
    states: &[ListenerState],
    route: &HTTPRoute,
    parent: &ParentReference,
    route_ns_labels: Option<&BTreeMap<String, String>>,
) -> Attachment {
    let listeners = &gateway.spec.listeners;
    let selected: Vec<usize> = (0..listeners.len())
        .filter(|&i| {
            parent
                .section_name
                .as_ref()
                .is_none_or(|s| *s == listeners[i].name)
        })
        .filter(|&i| parent.port.is_none_or(|p| p == listeners[i].port))
        .collect();
    if selected.is_empty() {
        let what = match (&parent.section_name, parent.port) {
            (Some(s), Some(p)) => format!("no listener named {s:?} on port {p}"),
            (Some(s), None) => format!("no listener named {s:?}"),
            (None, Some(p)) => format!("no listener on port {p}"),
            (None, None) => "the Gateway has no listeners".to_string(),
        };
        return Attachment::Rejected(c::REASON_NO_MATCHING_PARENT, what);
    }
    let gw_ns = gateway.metadata.namespace.as_deref().unwrap_or("");
    let route_ns = route.metadata.namespace.as_deref().unwrap_or("");
    let allowed: Vec<usize> = selected
        .into_iter()
        .filter(|&i| states.get(i).is_some_and(|s| s.attachable))
        .filter(|&i| namespace_allowed(&listeners[i], gw_ns, route_ns, route_ns_labels))
        .collect();
    if allowed.is_empty() {
        return Attachment::Rejected(
            c::REASON_NOT_ALLOWED_BY_LISTENERS,
            format!("no listener of the Gateway allows HTTPRoutes from namespace {route_ns:?}"),
        );
    }
    let matching: Vec<usize> = allowed
        .into_iter()
        .filter(|&i| hostnames_intersect(listeners[i].hostname.as_deref(), &route.spec.hostnames))
        .collect();
    if matching.is_empty() {
        return Attachment::Rejected(
            c::REASON_NO_MATCHING_LISTENER_HOSTNAME,
            "no listener hostname matches a hostname of the route".to_string(),
        );
    }
    Attachment::Attached(matching)
}

/// `allowedRoutes.namespaces.from`: `Same` (the default), `All`, or
/// `Selector` (the route's namespace labels match `selector`).
fn namespace_allowed(
    l: &Listener,
    gw_ns: &str,
    route_ns: &str,
    labels: Option<&BTreeMap<String, String>>,
) -> bool {
    let namespaces = l.allowed_routes.as_ref().and_then(|a| a.get("namespaces"));
    let from = namespaces
        .and_then(|n| n.get("from"))
        .and_then(Value::as_str)
        .unwrap_or("Same");
    match from {
        "All" => true,
        "Selector" => {
            let selector = namespaces
                .and_then(|n| n.get("selector"))
                .and_then(|s| serde_json::from_value::<LabelSelector>(s.clone()).ok());
            match (selector, labels) {
                (Some(s), Some(labels)) => selector_of(&s).matches(labels),
                _ => false,
            }
        }
        _ => gw_ns == route_ns,
    }
}

/// Whether a listener hostname (none: any) and a route's hostnames (none:
/// any) have a hostname in common; `*.example.com` stands for every name
/// with at least one more label before `.example.com`.
pub fn hostnames_intersect(listener: Option<&str>, route: &[String]) -> bool {
    let Some(l) = listener.filter(|l| !l.is_empty()) else {
        return true;
    };
    route.is_empty() || route.iter().any(|r| hostname_match(l, r))
}

fn hostname_match(a: &str, b: &str) -> bool {
    match (a.strip_prefix('*'), b.strip_prefix('*')) {
        (None, None) => a == b,
        (Some(suffix), None) => b.ends_with(suffix) && b.len() > suffix.len(),
        (None, Some(suffix)) => a.ends_with(suffix) && a.len() > suffix.len(),
        // Two wildcards intersect when one suffix contains the other.
        (Some(x), Some(y)) => x.ends_with(y) || y.ends_with(x),
    }
}
