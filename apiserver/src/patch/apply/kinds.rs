//! Per-kind facts the field manager needs that the schema does not carry.
//!
//! * The empty object of a kind as Go serializes its zero value
//!   (`objectCreater.New(gvk)` then `ToUnstructured`): non-pointer structs
//!   are present (`spec: {}`, `template: {}`), non-omitempty pointers and
//!   slices are `null`. Only maps and nulls are listed; zero scalars never
//!   change field sets. Unknown kinds get `{}`.
//! * Reset fields (`GetResetFields` of each registry strategy): the paths an
//!   endpoint ignores, filtered out of every field set and kept from the
//!   live object.

use serde_json::{Value, json};

use super::fieldpath::{FieldSet, PathElement};

/// The pod-template skeleton shared by the workload kinds.
fn template() -> Value {
    json!({"metadata": {"creationTimestamp": null}, "spec": {"containers": null}})
}

/// The Go zero value of a kind, serialized (see module docs).
pub fn empty_object(group: &str, kind: &str) -> Value {
    let meta = json!({"creationTimestamp": null});
    let body = match (group, kind) {
        ("", "Pod") => json!({"spec": {"containers": null}, "status": {}}),
        ("", "Service") => json!({"spec": {}, "status": {"loadBalancer": {}}}),
        ("", "Namespace") | ("", "PersistentVolume") => json!({"spec": {}, "status": {}}),
        ("", "Node") => {
            json!({"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}}})
        }
        ("", "PersistentVolumeClaim") => json!({"spec": {"resources": {}}, "status": {}}),
        ("", "ReplicationController") => json!({"spec": {}, "status": {}}),
        ("apps", "Deployment") => json!({
            "spec": {"selector": null, "template": template(), "strategy": {}}, "status": {}
        }),
        ("apps", "ReplicaSet") => {
            json!({"spec": {"selector": null, "template": template()}, "status": {}})
        }
        ("apps", "StatefulSet") => json!({
            "spec": {"selector": null, "template": template(), "updateStrategy": {}}, "status": {}
        }),
        ("apps", "DaemonSet") => json!({
            "spec": {"selector": null, "template": template(), "updateStrategy": {}}, "status": {}
        }),
        ("batch", "Job") => json!({"spec": {"template": template()}, "status": {}}),
        ("batch", "CronJob") => json!({
            "spec": {"jobTemplate": {"metadata": {"creationTimestamp": null},
                                     "spec": {"template": template()}}},
            "status": {}
        }),
        ("networking.k8s.io", "Ingress") => json!({"spec": {}, "status": {"loadBalancer": {}}}),
        ("", _) | ("apps", _) | ("batch", _) | ("rbac.authorization.k8s.io", _) => json!({}),
        _ => return json!({}),
    };
    let mut obj = body;
    obj["metadata"] = meta;
    obj
}

/// Built-in kinds whose main endpoint ignores `status` (they have a status
/// subresource).
fn has_status_subresource(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        (
            "",
            "Pod"
                | "Service"
                | "Node"
                | "Namespace"
                | "PersistentVolume"
                | "PersistentVolumeClaim"
                | "ReplicationController"
                | "ResourceQuota"
        ) | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
            | ("batch", "Job" | "CronJob")
            | ("autoscaling", "HorizontalPodAutoscaler")
            | ("policy", "PodDisruptionBudget")
            | ("networking.k8s.io", "Ingress")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | ("apiregistration.k8s.io", "APIService")
            | ("certificates.k8s.io", "CertificateSigningRequest")
    )
}

/// Reset fields of an endpoint as paths of field names. Unknown kinds
/// (custom resources) have none here: whether a CRD has a status
/// subresource is the caller's business.
pub fn reset_paths(group: &str, kind: &str, subresource: Option<&str>) -> Vec<Vec<&'static str>> {
    if !has_status_subresource(group, kind) {
        return Vec::new();
    }
    match subresource {
        None => vec![vec!["status"]],
        Some("status") => {
            let mut paths = vec![vec!["spec"]];
            match (group, kind) {
                ("apps", "Deployment") => paths.push(vec!["metadata", "labels"]),
                ("", "Pod") => {
                    paths.push(vec!["metadata", "deletionTimestamp"]);
                    paths.push(vec!["metadata", "ownerReferences"]);
                }
                _ => {}
            }
            paths
        }
        Some(_) => Vec::new(),
    }
}

/// The reset paths as a field set (for filtering).
pub fn reset_set(paths: &[Vec<&'static str>]) -> FieldSet {
    let mut set = FieldSet::new();
    for path in paths {
        let elements: Vec<PathElement> = path
            .iter()
            .map(|name| PathElement::Field((*name).to_string()))
            .collect();
        set.insert(&elements);
    }
    set
}

/// Copies the reset paths from `live` into `obj` (what the strategy's
/// `PrepareForUpdate` does), removing them when live has none.
pub fn restore_reset(obj: &mut Value, live: &Value, paths: &[Vec<&'static str>]) {
    for path in paths {
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let source = path.iter().try_fold(live, |v, k| v.get(*k));
        match source {
            Some(v) => {
                let mut target = &mut *obj;
                for key in parents {
                    if !target.get(*key).is_some_and(Value::is_object) {
                        target[*key] = json!({});
                    }
                    target = &mut target[*key];
                }
                target[*last] = v.clone();
            }
            None => {
                let parent = parents.iter().try_fold(&mut *obj, |v, k| v.get_mut(*k));
                if let Some(map) = parent.and_then(Value::as_object_mut) {
                    map.remove(*last);
                }
            }
        }
    }
}
