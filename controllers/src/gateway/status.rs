//! The statuses the simulated gateway reports: of its GatewayClass, of each
//! Gateway of that class, and of each HTTPRoute's parent entry for such a
//! Gateway. Pure: objects and `now` in, statuses out.
//!
//! Upstream: the Gateway API's status types and their documented
//! conditions (`apis/v1/gatewayclass_types.go`, `gateway_types.go`,
//! `httproute_types.go`, `shared_types.go`: `RouteParentStatus`,
//! `BackendObjectReference`), as the conformance suite checks them.
//!
//! The simulated gateway "programs" a Gateway at once: an accepted Gateway
//! is Programmed and gets an address. Requested `spec.addresses` of type
//! IPAddress or Hostname are used as given; an IPAddress without a value,
//! or no request at all, gets the simulated address [`simulated_address`]
//! (`10.200.x.y`, from a hash of the Gateway's uid: stable for the object,
//! outside the Service CIDR 10.96.0.0/12). A NamedAddress is not supported
//! (Accepted False, UnsupportedAddress).
//!
//! Simplified: the GatewayClass's `parametersRef` is not read; no
//! `gateway-exists-finalizer`; `SupportedVersion` is always True (the CRDs
//! are the built-in ones); backends of RequestMirror filters are not
//! checked; a cross-namespace backend is always RefNotPermitted, as
//! miniplane does not serve ReferenceGrant.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};

use super::conditions::{self as c, Cond, set_conditions};
use super::listeners::{Attachment, ListenerState, attach, listener_states};
use super::types::{
    GROUP, Gateway, GatewayClass, GatewayClassStatus, GatewayStatus, HTTPRoute, ListenerStatus,
    ParentReference, RouteParentStatus,
};
use super::{CONTROLLER_NAME, GATEWAY_API_VERSION};

/// Whether the class is implemented by the simulated gateway.
pub fn is_ours(class: &GatewayClass) -> bool {
    class.spec.controller_name == CONTROLLER_NAME
}

/// The status of one of our GatewayClasses: Accepted and SupportedVersion.
pub fn class_status(class: &GatewayClass, now: Timestamp) -> GatewayClassStatus {
    let wanted = [
        Cond::yes(
            c::ACCEPTED,
            c::REASON_ACCEPTED,
            "miniplane's simulated gateway accepts this class",
        ),
        Cond::yes(
            c::SUPPORTED_VERSION,
            c::REASON_SUPPORTED_VERSION,
            format!("Gateway API {GATEWAY_API_VERSION} is supported"),
        ),
    ];
    let old = class.status.as_ref().map_or(&[][..], |s| &s.conditions);
    GatewayClassStatus {
        conditions: set_conditions(old, &wanted, class.metadata.generation, now),
    }
}

/// The address the simulated gateway gives a Gateway that asks for none:
/// `10.200.x.y`, x and y from the FNV-1a hash of its uid (or, without one,
/// of `namespace/name`), y in 1..=254.
pub fn simulated_address(gateway: &Gateway) -> String {
    let meta = &gateway.metadata;
    let seed = match meta.uid.as_deref() {
        Some(uid) if !uid.is_empty() => uid.to_string(),
        _ => format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or(""),
            meta.name.as_deref().unwrap_or("")
        ),
    };
    let mut h: u32 = 0x811c_9dc5;
    for b in seed.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("10.200.{}.{}", (h >> 8) & 0xff, (h & 0xff) % 254 + 1)
}

/// The status addresses of a Gateway, or the type of a requested address
/// the simulated gateway cannot give.
fn addresses(gateway: &Gateway, requested: &[Value]) -> Result<Vec<Value>, String> {
    if requested.is_empty() {
        return Ok(vec![
            json!({"type": "IPAddress", "value": simulated_address(gateway)}),
        ]);
    }
    requested
        .iter()
        .map(|a| {
            let type_ = a.get("type").and_then(Value::as_str).unwrap_or("IPAddress");
            let value = a.get("value").and_then(Value::as_str).filter(|v| !v.is_empty());
            match (type_, value) {
                ("IPAddress" | "Hostname", Some(v)) => Ok(json!({"type": type_, "value": v})),
                ("IPAddress", None) => Ok(json!({"type": "IPAddress", "value": simulated_address(gateway)})),
                (t, _) => Err(t.to_string()),
            }
        })
        .collect()
}

/// The status of a Gateway of one of our classes. `routes` every HTTPRoute (for
/// `attachedRoutes`); `ns_labels` the labels of the namespaces of those
/// routes (for listeners that select namespaces by label).
pub fn gateway_status(
    gateway: &Gateway,
    routes: &[&HTTPRoute],
    ns_labels: &BTreeMap<String, BTreeMap<String, String>>,
    now: Timestamp,
) -> GatewayStatus {
    let states = listener_states(gateway);
    let attached = attached_routes(gateway, &states, routes, ns_labels);
    let generation = gateway.metadata.generation;
    let old = gateway.status.clone().unwrap_or_default();
    let listeners: Vec<ListenerStatus> = gateway
        .spec
        .listeners
        .iter()
        .zip(&states)
        .zip(attached)
        .map(|((l, state), count)| {
            let old_conditions = old
                .listeners
                .iter()
                .find(|o| o.name == l.name)
                .map_or(&[][..], |o| &o.conditions);
            ListenerStatus {
                name: l.name.clone(),
                supported_kinds: state.supported_kinds.clone(),
                attached_routes: count,
                conditions: set_conditions(old_conditions, &state.conditions, generation, now),
            }
        })
        .collect();
    let valid = states.iter().filter(|s| s.conditions[0].status).count();
    let addresses = addresses(gateway, &gateway.spec.addresses);
    let (accepted, programmed) = match (&addresses, valid) {
        (Err(t), _) => (
            Cond::no(
                c::ACCEPTED,
                c::REASON_UNSUPPORTED_ADDRESS,
                format!("address type {t:?} is not supported"),
            ),
            Cond::no(c::PROGRAMMED, c::REASON_INVALID, "Gateway is not accepted"),
        ),
        (Ok(_), 0) => (
            Cond::no(c::ACCEPTED, c::REASON_LISTENERS_NOT_VALID, "No listener is valid"),
            Cond::no(c::PROGRAMMED, c::REASON_INVALID, "No listener is valid"),
        ),
        (Ok(_), n) => (
            match n == states.len() {
                true => Cond::yes(c::ACCEPTED, c::REASON_ACCEPTED, "Gateway is accepted"),
                false => Cond::yes(
                    c::ACCEPTED,
                    c::REASON_LISTENERS_NOT_VALID,
                    format!("{} of {} listeners are not valid", states.len() - n, states.len()),
                ),
            },
            Cond::yes(c::PROGRAMMED, c::REASON_PROGRAMMED, "Gateway is programmed"),
        ),
    };
    let addresses = match programmed.status {
        true => addresses.unwrap_or_default(),
        false => Vec::new(),
    };
    GatewayStatus {
        addresses,
        conditions: set_conditions(&old.conditions, &[accepted, programmed], generation, now),
        listeners,
    }
}

/// `attachedRoutes` of each listener: the routes with a parent reference to
/// `gateway` that attaches them to that listener (a route counts once per
/// listener).
pub fn attached_routes(
    gateway: &Gateway,
    states: &[ListenerState],
    routes: &[&HTTPRoute],
    ns_labels: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<i32> {
    let mut counts = vec![0; gateway.spec.listeners.len()];
    for route in routes {
        let labels = ns_labels.get(route.metadata.namespace.as_deref().unwrap_or(""));
        let mut on = vec![false; counts.len()];
        for parent in &route.spec.parent_refs {
            if !refers_to(route, parent, gateway) {
                continue;
            }
            if let Attachment::Attached(ls) = attach(gateway, states, route, parent, labels) {
                for i in ls {
                    on[i] = true;
                }
            }
        }
        for (n, hit) in counts.iter_mut().zip(on) {
            *n += i32::from(hit);
        }
    }
    counts
}

/// The Gateway (namespace, name) a parent reference of `route` names, when
/// it names a Gateway (group gateway.networking.k8s.io, kind Gateway, the
/// defaults).
pub fn parent_gateway<'a>(route: &'a HTTPRoute, parent: &'a ParentReference) -> Option<(&'a str, &'a str)> {
    let group = parent.group.as_deref().unwrap_or(GROUP);
    let kind = parent.kind.as_deref().unwrap_or("Gateway");
    if group != GROUP || kind != "Gateway" {
        return None;
    }
    let ns = parent
        .namespace
        .as_deref()
        .or(route.metadata.namespace.as_deref())
        .unwrap_or("");
    Some((ns, parent.name.as_str()))
}

/// Whether `parent` (of `route`) names `gateway`.
pub fn refers_to(route: &HTTPRoute, parent: &ParentReference, gateway: &Gateway) -> bool {
    parent_gateway(route, parent).is_some_and(|(ns, name)| {
        Some(ns) == gateway.metadata.namespace.as_deref() && Some(name) == gateway.metadata.name.as_deref()
    })
}

/// A parent reference of a route that names a Gateway of one of our classes.
pub struct OurParent<'a> {
    /// The parent reference, as in the route's spec.
    pub parent_ref: &'a ParentReference,
    /// The Gateway it names (of one of our classes).
    pub gateway: &'a Gateway,
}

/// The route's `status.parents`: the entries of other controllers kept as
/// they are (in their order), then one entry per parent reference that
/// names a Gateway of ours (in spec order) with Accepted and ResolvedRefs.
/// `service_exists(namespace, name)` answers from the Service cache.
pub fn route_parents(
    route: &HTTPRoute,
    ours: &[OurParent<'_>],
    route_ns_labels: Option<&BTreeMap<String, String>>,
    service_exists: &dyn Fn(&str, &str) -> bool,
    now: Timestamp,
) -> Vec<RouteParentStatus> {
    let old = route.status.as_ref().map_or(&[][..], |s| &s.parents);
    let mut parents: Vec<RouteParentStatus> = old
        .iter()
        .filter(|p| p.controller_name != CONTROLLER_NAME)
        .cloned()
        .collect();
    let resolved = resolved_refs(route, service_exists);
    for p in ours {
        let states = listener_states(p.gateway);
        let accepted = match attach(p.gateway, &states, route, p.parent_ref, route_ns_labels) {
            Attachment::Attached(_) => Cond::yes(c::ACCEPTED, c::REASON_ACCEPTED, "Route is accepted"),
            Attachment::Rejected(reason, message) => Cond::no(c::ACCEPTED, reason, message),
        };
        let old_conditions: &[Condition] = old
            .iter()
            .find(|o| o.controller_name == CONTROLLER_NAME && o.parent_ref == *p.parent_ref)
            .map_or(&[], |o| &o.conditions);
        parents.push(RouteParentStatus {
            parent_ref: p.parent_ref.clone(),
            controller_name: CONTROLLER_NAME.to_string(),
            conditions: set_conditions(
                old_conditions,
                &[accepted, resolved.clone()],
                route.metadata.generation,
                now,
            ),
        });
    }
    parents
}

/// The route's `ResolvedRefs`: every backend a Service of the route's
/// namespace that exists. The first backend (in rule order) that is not
/// gives the reason: InvalidKind (not a core Service), RefNotPermitted
/// (another namespace: no ReferenceGrant is served), BackendNotFound.
pub fn resolved_refs(route: &HTTPRoute, service_exists: &dyn Fn(&str, &str) -> bool) -> Cond {
    let route_ns = route.metadata.namespace.as_deref().unwrap_or("");
    for backend in route.spec.rules.iter().flat_map(|r| &r.backend_refs) {
        let group = backend.group.as_deref().unwrap_or("");
        let kind = backend.kind.as_deref().unwrap_or("Service");
        if !(group.is_empty() && kind == "Service") {
            let what = match group {
                "" => kind.to_string(),
                g => format!("{kind}.{g}"),
            };
            return Cond::no(
                c::RESOLVED_REFS,
                c::REASON_INVALID_KIND,
                format!(
                    "backendRef {:?}: kind {what} is not supported (only Services)",
                    backend.name
                ),
            );
        }
        let ns = backend.namespace.as_deref().unwrap_or(route_ns);
        if ns != route_ns {
            return Cond::no(
                c::RESOLVED_REFS,
                c::REASON_REF_NOT_PERMITTED,
                format!(
                    "backendRef {ns}/{}: a reference to another namespace needs a ReferenceGrant, which miniplane does not serve",
                    backend.name
                ),
            );
        }
        if !service_exists(ns, &backend.name) {
            return Cond::no(
                c::RESOLVED_REFS,
                c::REASON_BACKEND_NOT_FOUND,
                format!("service \"{ns}/{}\" not found", backend.name),
            );
        }
    }
    Cond::yes(
        c::RESOLVED_REFS,
        c::REASON_RESOLVED_REFS,
        "All references are resolved",
    )
}
