//! LimitRanger: a new pod's containers get the namespace's LimitRange
//! defaults, then must fit its min, max and maxLimitRequestRatio.
//!
//! Upstream: `plugin/pkg/admission/limitranger/admission.go`
//! (`defaultContainerResourceRequirements`, `mergeContainerResources`,
//! `mergePodResourceRequirements`, `PodValidateLimitFunc`, `minConstraint`,
//! `maxConstraint`, `limitRequestRatioConstraint`).
//!
//! ```text
//! pod create → for each LimitRange of the namespace, in name order:
//!                a Container item's default / defaultRequest fill what a
//!                container does not state; annotation kubernetes.io/limit-ranger
//!              → every Container item checks each container, every Pod item
//!                the pod's sums; any failure → 403 with every message
//! ```
//!
//! Simplified: pods only (upstream also checks PersistentVolumeClaims'
//! storage) and only on create; a Pod item checks the sum of the containers
//! (upstream's `PodRequests` also weighs init containers and overhead); the
//! LimitRanges are read from the store, not an informer.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::Operation;
use super::quota_evaluator::{ResourceList, add, resource_list};
use crate::Api;
use crate::api::ListOptions;
use crate::error::{ApiError, ApiResult};
use crate::quantity::Quantity;
use crate::registry::ResourceInfo;

/// The annotation that says which defaults a pod was given.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// Runs the plugin on an object being written.
pub fn admit(api: &Api, operation: Operation, info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    if (info.group.as_str(), info.kind.as_str(), operation) != ("", "Pod", Operation::Create) {
        return Ok(());
    }
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let lr_info = api.resource("", "v1", "limitranges")?;
    let ranges = api
        .list(&lr_info, Some(&namespace), &ListOptions::default())?
        .items;
    if ranges.is_empty() {
        return Ok(());
    }
    for range in &ranges {
        merge_pod_resource_requirements(obj, range);
    }
    let errors: Vec<String> = ranges.iter().flat_map(|r| validate_pod(r, obj)).collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::forbidden(
        "",
        "pods",
        &pod_name(obj),
        &aggregate(&errors),
    ))
}

/// The name an error names: `name`, else `generateName`.
fn pod_name(pod: &Value) -> String {
    ["name", "generateName"]
        .iter()
        .filter_map(|f| pod.pointer(&format!("/metadata/{f}")).and_then(Value::as_str))
        .find(|s| !s.is_empty())
        .unwrap_or("Unknown")
        .to_string()
}

/// `utilerrors.NewAggregate(errs).Error()`: one message as is, several
/// de-duplicated in brackets.
fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for e in errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "[{}]",
            many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The Container items' `defaultRequest` and `default` of one LimitRange.
fn default_requirements(range: &Value) -> (Map<String, Value>, Map<String, Value>) {
    let (mut requests, mut limits) = (Map::new(), Map::new());
    let items = range.pointer("/spec/limits").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        for (key, out) in [("defaultRequest", &mut requests), ("default", &mut limits)] {
            if let Some(m) = item.get(key).and_then(Value::as_object) {
                out.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }
    (requests, limits)
}

/// `mergePodResourceRequirements`: fills what each container does not
/// state, and records what was set in the annotation.
pub fn merge_pod_resource_requirements(pod: &mut Value, range: &Value) {
    let (requests, limits) = default_requirements(range);
    if requests.is_empty() && limits.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for (list, prefix) in [("containers", "container"), ("initContainers", "init container")] {
        let Some(containers) = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in containers.iter_mut().filter(|c| c.is_object()) {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let set_limits = fill(c, "limits", &limits);
            let set_requests = fill(c, "requests", &requests);
            if !set_requests.is_empty() {
                notes.push(format!("{} request for {prefix} {name}", set_requests.join(", ")));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {prefix} {name}", set_limits.join(", ")));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let meta = pod
        .as_object_mut()
        .map(|m| m.entry("metadata").or_insert_with(|| json!({})));
    if let Some(meta) = meta.and_then(Value::as_object_mut) {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = annotations.as_object_mut() {
            a.insert(
                ANNOTATION.into(),
                json!(format!("LimitRanger plugin set: {}", notes.join("; "))),
            );
        }
    }
}

/// Sets each of `defaults` missing from `container.resources[key]`; returns
/// the names it set, sorted.
fn fill(container: &mut Value, key: &str, defaults: &Map<String, Value>) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    let Some(c) = container.as_object_mut() else {
        return Vec::new();
    };
    let resources = c.entry("resources").or_insert_with(|| json!({}));
    if !resources.is_object() {
        *resources = json!({});
    }
    let list = resources
        .as_object_mut()
        .map(|r| r.entry(key).or_insert_with(|| json!({})));
    let Some(list) = list.and_then(Value::as_object_mut) else {
        return Vec::new();
    };
    let mut set: Vec<String> = Vec::new();
    for (k, v) in defaults {
        if !list.contains_key(k) {
            list.insert(k.clone(), v.clone());
            set.push(k.clone());
        }
    }
    set.sort();
    set
}

/// `PodValidateLimitFunc`: every message of every constraint the pod breaks.
pub fn validate_pod(range: &Value, pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let items = range.pointer("/spec/limits").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        match item.get("type").and_then(Value::as_str) {
            Some("Container") => {
                for list in ["containers", "initContainers"] {
                    let containers = pod.pointer(&format!("/spec/{list}")).and_then(Value::as_array);
                    for c in containers.into_iter().flatten() {
                        let requests = resource_list(c.pointer("/resources/requests"));
                        let limits = resource_list(c.pointer("/resources/limits"));
                        errors.extend(check_item(item, "Container", &requests, &limits));
                    }
                }
            }
            Some("Pod") => {
                let (mut requests, mut limits) = (ResourceList::new(), ResourceList::new());
                let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
                for c in containers.into_iter().flatten() {
                    requests = add(&requests, &resource_list(c.pointer("/resources/requests")));
                    limits = add(&limits, &resource_list(c.pointer("/resources/limits")));
                }
                errors.extend(check_item(item, "Pod", &requests, &limits));
            }
            _ => {}
        }
    }
    errors
}

/// The min, max and ratio constraints of one item against one set of
/// requests and limits.
fn check_item(item: &Value, kind: &str, requests: &ResourceList, limits: &ResourceList) -> Vec<String> {
    let mut errors = Vec::new();
    let bounds = |key: &str| resource_list(item.get(key));
    let names: BTreeSet<String> = ["min", "max", "maxLimitRequestRatio"]
        .iter()
        .flat_map(|k| bounds(k).into_keys())
        .collect();
    let (min, max, ratio) = (bounds("min"), bounds("max"), bounds("maxLimitRequestRatio"));
    for name in &names {
        let (req, lim) = (requests.get(name), limits.get(name));
        if let Some(enforced) = min.get(name) {
            errors.extend(min_constraint(kind, name, *enforced, req, lim));
        }
        if let Some(enforced) = max.get(name) {
            errors.extend(max_constraint(kind, name, *enforced, req, lim));
        }
        if let Some(enforced) = ratio.get(name) {
            errors.extend(ratio_constraint(kind, name, *enforced, req, lim));
        }
    }
    errors
}

fn min_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    req: Option<&Quantity>,
    lim: Option<&Quantity>,
) -> Option<String> {
    let Some(req) = req else {
        return Some(format!(
            "minimum {name} usage per {kind} is {enforced}.  No request is specified"
        ));
    };
    if *req < enforced {
        return Some(format!(
            "minimum {name} usage per {kind} is {enforced}, but request is {req}"
        ));
    }
    match lim {
        Some(lim) if *lim < enforced => Some(format!(
            "minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
        )),
        _ => None,
    }
}

fn max_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    req: Option<&Quantity>,
    lim: Option<&Quantity>,
) -> Option<String> {
    let Some(lim) = lim else {
        return Some(format!(
            "maximum {name} usage per {kind} is {enforced}.  No limit is specified"
        ));
    };
    if *lim > enforced {
        return Some(format!(
            "maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
        ));
    }
    match req {
        Some(req) if *req > enforced => Some(format!(
            "maximum {name} usage per {kind} is {enforced}, but request is {req}"
        )),
        _ => None,
    }
}

fn ratio_constraint(
    kind: &str,
    name: &str,
    enforced: Quantity,
    req: Option<&Quantity>,
    lim: Option<&Quantity>,
) -> Option<String> {
    let req = req.map(Quantity::milli_value).filter(|r| *r != 0);
    let lim = lim.map(Quantity::milli_value).filter(|l| *l != 0);
    let Some(req) = req else {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
        ));
    };
    let Some(lim) = lim else {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
        ));
    };
    let observed = lim as f64 / req as f64;
    (observed * 1000.0 > enforced.milli_value() as f64).then(|| {
        format!(
            "{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {observed:.6}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(item: Value) -> Value {
        json!({"spec": {"limits": [item]}})
    }

    #[test]
    fn defaults_fill_only_what_containers_do_not_state() {
        let lr = range(json!({"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"}, "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}));
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "web", "resources": {"requests": {"cpu": "200m"}}},
            {"name": "side"},
        ]}});
        merge_pod_resource_requirements(&mut pod, &lr);
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"requests": {"cpu": "200m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}})
        );
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            json!(
                "LimitRanger plugin set: memory request for container web; cpu, memory limit for container web; cpu, memory request for container side; cpu, memory limit for container side"
            )
        );
    }

    #[test]
    fn min_max_and_ratio_messages_are_upstreams() {
        let lr = range(
            json!({"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
            "maxLimitRequestRatio": {"cpu": "2"}}),
        );
        let pod = json!({"spec": {"containers": [{"name": "c", "resources": {
            "requests": {"cpu": "50m"}, "limits": {"cpu": "200m", "memory": "2Gi"}}}]}});
        assert_eq!(
            validate_pod(&lr, &pod),
            [
                "minimum cpu usage per Container is 100m, but request is 50m",
                "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000",
                "maximum memory usage per Container is 1Gi, but limit is 2Gi",
            ]
        );
        let none = json!({"spec": {"containers": [{"name": "c"}]}});
        assert_eq!(
            validate_pod(&range(json!({"type": "Pod", "max": {"cpu": "1"}})), &none),
            ["maximum cpu usage per Pod is 1.  No limit is specified"]
        );
    }

    #[test]
    fn several_messages_are_bracketed_once_each() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
