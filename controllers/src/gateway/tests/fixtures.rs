//! Objects for the gateway tests, built from JSON as a user would write them.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::gateway::CONTROLLER_NAME;
use crate::gateway::types::{Gateway, GatewayClass, HTTPRoute};

/// The instant the pure tests run at.
pub fn now() -> Timestamp {
    "2024-05-01T10:00:00Z".parse().expect("a valid timestamp")
}

/// A later instant.
pub fn later() -> Timestamp {
    "2024-05-01T10:05:00Z".parse().expect("a valid timestamp")
}

/// A GatewayClass of `controller`.
pub fn class(name: &str, controller: &str) -> GatewayClass {
    serde_json::from_value(json!({
        "metadata": {"name": name, "generation": 1, "uid": "class-uid"},
        "spec": {"controllerName": controller}
    }))
    .expect("a GatewayClass")
}

/// Our GatewayClass `miniplane`.
pub fn our_class() -> GatewayClass {
    class("miniplane", CONTROLLER_NAME)
}

/// A Gateway `default/<name>` of class `miniplane` with `listeners`.
pub fn gateway(name: &str, listeners: Value) -> Gateway {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "generation": 2},
        "spec": {"gatewayClassName": "miniplane", "listeners": listeners}
    }))
    .expect("a Gateway")
}

/// One HTTP listener `http` on port 80.
pub fn http_listener() -> Value {
    json!([{"name": "http", "protocol": "HTTP", "port": 80}])
}

/// An HTTPRoute `<ns>/<name>` with `spec`.
pub fn route_in(ns: &str, name: &str, spec: Value) -> HTTPRoute {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns, "generation": 3},
        "spec": spec
    }))
    .expect("an HTTPRoute")
}

/// An HTTPRoute `default/<name>` to Gateway `gw` with backends `services` (port 80).
pub fn route(name: &str, services: &[&str]) -> HTTPRoute {
    let backends: Vec<Value> = services.iter().map(|s| json!({"name": s, "port": 80})).collect();
    route_in(
        "default",
        name,
        json!({"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": backends}]}),
    )
}
