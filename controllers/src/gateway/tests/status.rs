//! Table tests of the pure status functions: class, Gateway (listeners,
//! addresses, attachedRoutes) and route parents (Accepted, ResolvedRefs).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Value, json};

use super::fixtures::{gateway, http_listener, later, now, our_class, route, route_in};
use crate::gateway::CONTROLLER_NAME;
use crate::gateway::conditions::{Cond, set_conditions};
use crate::gateway::listeners::hostnames_intersect;
use crate::gateway::status::{OurParent, class_status, gateway_status, route_parents, simulated_address};
use crate::gateway::types::{
    Gateway, GatewayClassStatus, GatewayStatus, HTTPRoute, HTTPRouteStatus, ParentReference,
    RouteParentStatus,
};

/// `(type, status, reason)` of each condition.
fn summary(conditions: &[Condition]) -> Vec<(String, String, String)> {
    conditions
        .iter()
        .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone()))
        .collect()
}

fn triples(want: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    want.iter()
        .map(|(t, s, r)| (t.to_string(), s.to_string(), r.to_string()))
        .collect()
}

#[test]
fn our_class_is_accepted_in_a_supported_version() {
    let mut class = our_class();
    let status = class_status(&class, now());
    assert_eq!(
        summary(&status.conditions),
        triples(&[
            ("Accepted", "True", "Accepted"),
            ("SupportedVersion", "True", "SupportedVersion")
        ])
    );
    assert!(status.conditions.iter().all(|c| c.observed_generation == Some(1)));
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.last_transition_time == Time(now()))
    );
    // Computed again later with nothing changed: the same status (no write, no hot loop).
    class.status = Some(status.clone());
    assert_eq!(class_status(&class, later()), status);
    // A new generation moves observedGeneration, not the transition time.
    class.metadata.generation = Some(2);
    let next: GatewayClassStatus = class_status(&class, later());
    assert!(next.conditions.iter().all(|c| c.observed_generation == Some(2)));
    assert!(
        next.conditions
            .iter()
            .all(|c| c.last_transition_time == Time(now()))
    );
}

#[test]
fn a_condition_changes_its_transition_time_only_when_its_status_changes() {
    let first = set_conditions(&[], &[Cond::yes("Accepted", "Accepted", "ok")], Some(1), now());
    let reworded = set_conditions(
        &first,
        &[Cond::yes("Accepted", "Other", "still ok")],
        Some(1),
        later(),
    );
    assert_eq!(reworded[0].last_transition_time, Time(now()));
    assert_eq!(reworded[0].reason, "Other");
    let flipped = set_conditions(&first, &[Cond::no("Accepted", "Nope", "no")], Some(1), later());
    assert_eq!(flipped[0].last_transition_time, Time(later()));
    assert_eq!(flipped[0].status, "False");
}

fn status_of(gw: &Gateway, routes: &[&HTTPRoute]) -> GatewayStatus {
    gateway_status(gw, routes, &BTreeMap::new(), now())
}

#[test]
fn an_http_gateway_is_accepted_programmed_and_addressed() {
    let mut gw = gateway("gw", http_listener());
    let status = status_of(&gw, &[]);
    assert_eq!(
        summary(&status.conditions),
        triples(&[
            ("Accepted", "True", "Accepted"),
            ("Programmed", "True", "Programmed")
        ])
    );
    assert!(status.conditions.iter().all(|c| c.observed_generation == Some(2)));
    let address = simulated_address(&gw);
    assert!(address.starts_with("10.200."), "{address}");
    assert_eq!(
        status.addresses,
        vec![json!({"type": "IPAddress", "value": address})]
    );
    let listener = &status.listeners[0];
    assert_eq!(listener.name, "http");
    assert_eq!(listener.attached_routes, 0);
    assert_eq!(
        listener.supported_kinds,
        vec![json!({"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"})]
    );
    assert_eq!(
        summary(&listener.conditions),
        triples(&[
            ("Accepted", "True", "Accepted"),
            ("Programmed", "True", "Programmed"),
            ("ResolvedRefs", "True", "ResolvedRefs"),
            ("Conflicted", "False", "NoConflicts"),
        ])
    );
    // Stable: the same status later, and the same address for the same uid.
    gw.status = Some(status.clone());
    assert_eq!(gateway_status(&gw, &[], &BTreeMap::new(), later()), status);
    assert_eq!(simulated_address(&gateway("gw", http_listener())), address);
    assert_ne!(simulated_address(&gateway("other", http_listener())), address);
}

#[test]
fn listeners_with_unsupported_protocols_kinds_or_conflicts() {
    struct Case {
        name: &'static str,
        listeners: Value,
        gateway: [(&'static str, &'static str, &'static str); 2],
        listener_accepted: Vec<&'static str>,
        extra: Option<(usize, &'static str, &'static str, &'static str)>,
    }
    let cases = [
        Case {
            name: "one TCP listener beside an HTTP one",
            listeners: json!([{"name": "http", "protocol": "HTTP", "port": 80}, {"name": "tcp", "protocol": "TCP", "port": 9000}]),
            gateway: [
                ("Accepted", "True", "ListenersNotValid"),
                ("Programmed", "True", "Programmed"),
            ],
            listener_accepted: vec!["Accepted", "UnsupportedProtocol"],
            extra: Some((1, "Programmed", "False", "Invalid")),
        },
        Case {
            name: "only a UDP listener",
            listeners: json!([{"name": "udp", "protocol": "UDP", "port": 53}]),
            gateway: [
                ("Accepted", "False", "ListenersNotValid"),
                ("Programmed", "False", "Invalid"),
            ],
            listener_accepted: vec!["UnsupportedProtocol"],
            extra: None,
        },
        Case {
            name: "HTTP and HTTPS on one port",
            listeners: json!([{"name": "a", "protocol": "HTTP", "port": 80}, {"name": "b", "protocol": "HTTPS", "port": 80}]),
            gateway: [
                ("Accepted", "False", "ListenersNotValid"),
                ("Programmed", "False", "Invalid"),
            ],
            listener_accepted: vec!["ProtocolConflict", "ProtocolConflict"],
            extra: Some((0, "Conflicted", "True", "ProtocolConflict")),
        },
        Case {
            name: "a kind the gateway does not implement",
            listeners: json!([{"name": "grpc", "protocol": "HTTP", "port": 80, "allowedRoutes": {"kinds": [{"kind": "GRPCRoute"}]}}]),
            gateway: [
                ("Accepted", "True", "Accepted"),
                ("Programmed", "True", "Programmed"),
            ],
            listener_accepted: vec!["Accepted"],
            extra: Some((0, "ResolvedRefs", "False", "InvalidRouteKinds")),
        },
        Case {
            name: "HTTPS and HTTP on different ports",
            listeners: json!([{"name": "a", "protocol": "HTTP", "port": 80}, {"name": "b", "protocol": "HTTPS", "port": 443, "tls": {"certificateRefs": [{"name": "cert"}]}}]),
            gateway: [
                ("Accepted", "True", "Accepted"),
                ("Programmed", "True", "Programmed"),
            ],
            listener_accepted: vec!["Accepted", "Accepted"],
            extra: Some((1, "Conflicted", "False", "NoConflicts")),
        },
    ];
    for case in cases {
        let status = status_of(&gateway("gw", case.listeners), &[]);
        assert_eq!(
            summary(&status.conditions),
            triples(&case.gateway),
            "{}",
            case.name
        );
        let accepted: Vec<&str> = status
            .listeners
            .iter()
            .map(|l| l.conditions[0].reason.as_str())
            .collect();
        assert_eq!(accepted, case.listener_accepted, "{}", case.name);
        if let Some((i, t, s, r)) = case.extra {
            let c = status.listeners[i]
                .conditions
                .iter()
                .find(|c| c.type_ == t)
                .expect("the condition");
            assert_eq!((c.status.as_str(), c.reason.as_str()), (s, r), "{}", case.name);
        }
        assert_eq!(
            status.addresses.is_empty(),
            case.gateway[1].1 == "False",
            "{}",
            case.name
        );
    }
}

#[test]
fn requested_addresses() {
    let with = |addresses: Value| -> Gateway {
        let mut gw = gateway("gw", http_listener());
        gw.spec.addresses = addresses.as_array().cloned().unwrap_or_default();
        gw
    };
    let gw = with(
        json!([{"type": "IPAddress", "value": "192.0.2.7"}, {"type": "Hostname", "value": "gw.example.com"}]),
    );
    assert_eq!(
        status_of(&gw, &[]).addresses,
        vec![
            json!({"type": "IPAddress", "value": "192.0.2.7"}),
            json!({"type": "Hostname", "value": "gw.example.com"})
        ]
    );
    let gw = with(json!([{"type": "IPAddress"}]));
    assert_eq!(
        status_of(&gw, &[]).addresses,
        vec![json!({"type": "IPAddress", "value": simulated_address(&gw)})]
    );
    let gw = with(json!([{"type": "NamedAddress", "value": "pool-a"}]));
    let status = status_of(&gw, &[]);
    assert_eq!(
        summary(&status.conditions),
        triples(&[
            ("Accepted", "False", "UnsupportedAddress"),
            ("Programmed", "False", "Invalid")
        ])
    );
    assert!(status.addresses.is_empty());
}

#[test]
fn attached_routes_count_each_route_once_per_listener() {
    let gw = gateway(
        "gw",
        json!([{"name": "a", "protocol": "HTTP", "port": 80}, {"name": "b", "protocol": "HTTP", "port": 8080}]),
    );
    let whole = route("whole", &["svc"]);
    let only_b = route_in(
        "default",
        "only-b",
        json!({"parentRefs": [{"name": "gw", "sectionName": "b"}]}),
    );
    let both_sections = route_in(
        "default",
        "both",
        json!({"parentRefs": [{"name": "gw", "sectionName": "a"}, {"name": "gw", "sectionName": "b"}]}),
    );
    let wrong_section = route_in(
        "default",
        "nope",
        json!({"parentRefs": [{"name": "gw", "sectionName": "c"}]}),
    );
    let other_ns = route_in(
        "team",
        "away",
        json!({"parentRefs": [{"name": "gw", "namespace": "default"}]}),
    );
    let other_gw = route_in("default", "elsewhere", json!({"parentRefs": [{"name": "other"}]}));
    let routes = [
        &whole,
        &only_b,
        &both_sections,
        &wrong_section,
        &other_ns,
        &other_gw,
    ];
    let counts: Vec<i32> = status_of(&gw, &routes)
        .listeners
        .iter()
        .map(|l| l.attached_routes)
        .collect();
    assert_eq!(counts, [2, 3]);
}

fn parent(name: &str) -> ParentReference {
    ParentReference {
        name: name.to_string(),
        ..Default::default()
    }
}

/// The conditions of our one parent entry of `route` for `gw`.
fn route_conditions(
    route: &HTTPRoute,
    gw: &Gateway,
    labels: Option<&BTreeMap<String, String>>,
    services: &[&str],
) -> Vec<(String, String, String)> {
    let ours = [OurParent {
        parent_ref: &route.spec.parent_refs[0],
        gateway: gw,
    }];
    let exists = |ns: &str, name: &str| ns == "default" && services.contains(&name);
    let parents = route_parents(route, &ours, labels, &exists, now());
    assert_eq!(parents.len(), 1);
    assert_eq!(parents[0].controller_name, CONTROLLER_NAME);
    assert_eq!(parents[0].parent_ref, route.spec.parent_refs[0]);
    summary(&parents[0].conditions)
}

/// A route status case: name, route, its Gateway, the namespace's labels,
/// the expected (type, status, reason) of Accepted and ResolvedRefs.
type RouteCase<'a> = (
    &'static str,
    HTTPRoute,
    &'a Gateway,
    Option<&'a BTreeMap<String, String>>,
    [(&'static str, &'static str, &'static str); 2],
);

#[test]
fn route_parent_conditions() {
    let http = gateway("gw", http_listener());
    let all = gateway(
        "gw",
        json!([{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}}]),
    );
    let selector = gateway(
        "gw",
        json!([{"name": "http", "protocol": "HTTP", "port": 80,
            "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "a"}}}}}]),
    );
    let wildcard = gateway(
        "gw",
        json!([{"name": "http", "protocol": "HTTP", "port": 80, "hostname": "*.example.com"}]),
    );
    let team_a: BTreeMap<String, String> = [("team".to_string(), "a".to_string())].into();
    let no_labels = BTreeMap::new();
    let backends = json!([{"backendRefs": [{"name": "svc", "port": 80}]}]);
    let from_team = route_in(
        "team",
        "r",
        json!({"parentRefs": [{"name": "gw", "namespace": "default"}], "rules": []}),
    );
    let hosts = |h: &[&str]| {
        route_in(
            "default",
            "r",
            json!({"parentRefs": [{"name": "gw"}], "hostnames": h, "rules": backends}),
        )
    };
    let ok = ("Accepted", "True", "Accepted");
    let resolved = ("ResolvedRefs", "True", "ResolvedRefs");
    let cases: Vec<RouteCase<'_>> = vec![
        (
            "attached, backends resolved",
            route("r", &["svc"]),
            &http,
            None,
            [ok, resolved],
        ),
        (
            "a missing backend",
            route("r", &["svc", "gone"]),
            &http,
            None,
            [ok, ("ResolvedRefs", "False", "BackendNotFound")],
        ),
        (
            "a section that is no listener",
            route_in(
                "default",
                "r",
                json!({"parentRefs": [{"name": "gw", "sectionName": "https"}]}),
            ),
            &http,
            None,
            [("Accepted", "False", "NoMatchingParent"), resolved],
        ),
        (
            "a port no listener has",
            route_in(
                "default",
                "r",
                json!({"parentRefs": [{"name": "gw", "port": 8080}]}),
            ),
            &http,
            None,
            [("Accepted", "False", "NoMatchingParent"), resolved],
        ),
        (
            "another namespace, listener allows Same",
            from_team.clone(),
            &http,
            None,
            [("Accepted", "False", "NotAllowedByListeners"), resolved],
        ),
        (
            "another namespace, listener allows All",
            from_team.clone(),
            &all,
            None,
            [ok, resolved],
        ),
        (
            "a namespace the selector matches",
            from_team.clone(),
            &selector,
            Some(&team_a),
            [ok, resolved],
        ),
        (
            "a namespace the selector does not match",
            from_team.clone(),
            &selector,
            Some(&no_labels),
            [("Accepted", "False", "NotAllowedByListeners"), resolved],
        ),
        (
            "a hostname under the listener's wildcard",
            hosts(&["a.example.com"]),
            &wildcard,
            None,
            [ok, resolved],
        ),
        (
            "no hostname in common",
            hosts(&["a.example.org"]),
            &wildcard,
            None,
            [("Accepted", "False", "NoMatchingListenerHostname"), resolved],
        ),
        (
            "a backend that is not a Service",
            route_in(
                "default",
                "r",
                json!({"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "x", "group": "example.com", "kind": "Bucket"}]}]}),
            ),
            &http,
            None,
            [ok, ("ResolvedRefs", "False", "InvalidKind")],
        ),
        (
            "a backend in another namespace",
            route_in(
                "default",
                "r",
                json!({"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "svc", "namespace": "other", "port": 80}]}]}),
            ),
            &http,
            None,
            [ok, ("ResolvedRefs", "False", "RefNotPermitted")],
        ),
    ];
    for (name, route, gw, labels, want) in cases {
        assert_eq!(
            route_conditions(&route, gw, labels, &["svc"]),
            triples(&want),
            "{name}"
        );
    }
}

#[test]
fn other_controllers_parent_entries_are_kept_and_stale_ones_of_ours_dropped() {
    let gw = gateway("gw", http_listener());
    let mut r = route("r", &["svc"]);
    let theirs = RouteParentStatus {
        parent_ref: parent("their-gw"),
        controller_name: "example.net/gateway".to_string(),
        conditions: set_conditions(
            &[],
            &[Cond::yes("Accepted", "Accepted", "theirs")],
            Some(1),
            now(),
        ),
    };
    let stale = RouteParentStatus {
        parent_ref: parent("deleted-gw"),
        controller_name: CONTROLLER_NAME.to_string(),
        conditions: theirs.conditions.clone(),
    };
    r.status = Some(HTTPRouteStatus {
        parents: vec![stale, theirs.clone()],
    });
    let ours = [OurParent {
        parent_ref: &r.spec.parent_refs[0],
        gateway: &gw,
    }];
    let exists = |_: &str, _: &str| true;
    let parents = route_parents(&r, &ours, None, &exists, now());
    assert_eq!(parents.len(), 2);
    assert_eq!(parents[0], theirs);
    assert_eq!(parents[1].parent_ref.name, "gw");
    // Written back and computed again later: unchanged.
    r.status = Some(HTTPRouteStatus {
        parents: parents.clone(),
    });
    assert_eq!(route_parents(&r, &ours, None, &exists, later()), parents);
}

#[test]
fn hostname_intersection() {
    let cases: &[(Option<&str>, &[&str], bool)] = &[
        (None, &["a.example.com"], true),
        (Some("a.example.com"), &[], true),
        (Some("a.example.com"), &["a.example.com"], true),
        (Some("a.example.com"), &["b.example.com"], false),
        (Some("*.example.com"), &["a.example.com"], true),
        (Some("*.example.com"), &["a.b.example.com"], true),
        (Some("*.example.com"), &["example.com"], false),
        (Some("a.example.com"), &["*.example.com"], true),
        (Some("*.example.com"), &["*.b.example.com"], true),
        (Some("*.example.com"), &["*.example.org", "x.example.com"], true),
        (Some("*.example.com"), &["*.example.org"], false),
    ];
    for (listener, route, want) in cases {
        let route: Vec<String> = route.iter().map(ToString::to_string).collect();
        assert_eq!(
            hostnames_intersect(*listener, &route),
            *want,
            "{listener:?} {route:?}"
        );
    }
}
