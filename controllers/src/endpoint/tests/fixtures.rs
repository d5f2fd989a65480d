//! Services and pods for the table tests, built from JSON.

use k8s_openapi::api::core::v1::{Pod, Service};
use serde_json::{Value, json};

/// A Service `web` in `default` with `spec` (selector `app: web` unless
/// `spec` has its own).
pub fn service(spec: Value) -> Service {
    let mut full = json!({"selector": {"app": "web"}, "clusterIP": "10.96.0.10"});
    for (k, v) in spec.as_object().into_iter().flatten() {
        full[k] = v.clone();
    }
    serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "default",
        "creationTimestamp": "2023-11-14T22:00:00Z"}, "spec": full}))
    .unwrap()
}

/// A running pod `name` with IP `ip` on `node-1`, Ready or not, with the
/// container `ports`.
pub fn pod(name: &str, ip: &str, ready: bool, ports: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "labels": {"app": "web"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "ports": ports}]},
        "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                            "lastTransitionTime": "2023-11-14T22:13:20Z"}]}
    }))
    .unwrap()
}

/// An address of pod `name` (as the controller writes it), as JSON.
pub fn address(name: &str, ip: &str) -> Value {
    json!({"ip": ip, "nodeName": "node-1",
           "targetRef": {"kind": "Pod", "namespace": "default", "name": name, "uid": format!("uid-{name}")}})
}
