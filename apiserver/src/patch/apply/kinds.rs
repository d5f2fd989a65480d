//! Per-kind facts the field manager needs that the schema does not carry.
//!
//! * The empty object of a kind as Go serializes its zero value
//!   (`objectCreater.New(gvk)` then `ToUnstructured`): non-pointer structs
//!   are present (`spec: {}`, `template: {}`), non-omitempty pointers and
//!   slices are `null`. Only maps and nulls are listed; zero scalars never
//!   change field sets. Custom resources get `{}`.
//! * Reset fields (`GetResetFields` of the registry strategies,
//!   `pkg/registry/*/*/strategy.go`): the paths an endpoint ignores,
//!   filtered out of every field set and kept from the live object. Whether
//!   a kind has a status subresource is the registry's answer.
//!
//! Both tables dispatch on the `crate::kinds::Kind` the registry row resolves to, so they
//! cover the kinds miniplane serves (upstream's cover every built-in kind).

use serde_json::{Value, json};

use super::fieldpath::{FieldSet, PathElement};
use crate::jsonpath::at;
use crate::kinds::Kind;

/// The pod-template skeleton shared by the workload kinds.
fn template() -> Value {
    json!({"metadata": {"creationTimestamp": null}, "spec": {"containers": null}})
}

/// The Go zero value of a kind, serialized (see module docs).
pub(crate) fn empty_object(kind: Kind) -> Value {
    let body = match kind {
        Kind::Pod => json!({"spec": {"containers": null}, "status": {}}),
        Kind::Service => json!({"spec": {}, "status": {"loadBalancer": {}}}),
        Kind::Namespace => json!({"spec": {}, "status": {}}),
        Kind::Node => {
            json!({"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}}})
        }
        Kind::Deployment => json!({
            "spec": {"selector": null, "template": template(), "strategy": {}}, "status": {}
        }),
        Kind::ReplicaSet => {
            json!({"spec": {"selector": null, "template": template()}, "status": {}})
        }
        Kind::StatefulSet | Kind::DaemonSet => json!({
            "spec": {"selector": null, "template": template(), "updateStrategy": {}}, "status": {}
        }),
        Kind::Job => json!({"spec": {"template": template()}, "status": {}}),
        Kind::CronJob => json!({
            "spec": {"jobTemplate": {"metadata": {"creationTimestamp": null},
                                     "spec": {"template": template()}}},
            "status": {}
        }),
        Kind::Endpoints
        | Kind::ConfigMap
        | Kind::Secret
        | Kind::ServiceAccount
        | Kind::Event
        | Kind::ControllerRevision => json!({}),
        // Kinds outside the core, apps and batch groups were left without
        // metadata before this table took a Kind; kept as they were.
        Kind::Lease | Kind::EndpointSlice | Kind::EventV1 | Kind::Other => return json!({}),
        // Kinds served since the API-breadth work: metadata, and whatever
        // their own module adds.
        _ => json!({}),
    };
    let mut obj = body;
    obj["metadata"] = json!({"creationTimestamp": null});
    obj
}

/// Reset fields of an endpoint as paths of field names: on a kind with a
/// status subresource (`status_subresource`, from the registry), the main
/// endpoint ignores `status` and `/status` ignores `spec` (plus a few
/// per-kind metadata fields).
pub(crate) fn reset_paths(
    kind: Kind,
    status_subresource: bool,
    subresource: Option<&str>,
) -> Vec<Vec<&'static str>> {
    if !status_subresource {
        return Vec::new();
    }
    match subresource {
        None => vec![vec!["status"]],
        Some("status") => {
            let mut paths = vec![vec!["spec"]];
            match kind {
                Kind::Deployment => paths.push(vec!["metadata", "labels"]),
                Kind::Pod => {
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
        let source = at(live, path);
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
