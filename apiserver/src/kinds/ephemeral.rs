//! `pods/ephemeralcontainers`: the one way to add a container to a running
//! pod (`kubectl debug`). Only `spec.ephemeralContainers` may change, and
//! only by additions.
//!
//! Upstream: `pkg/registry/core/pod/strategy.go` (`podEphemeralContainersStrategy`,
//! `dropNonEphemeralContainerUpdates`) and `pkg/apis/core/validation/validation.go`
//! (`ValidatePodEphemeralContainersUpdate`, `validateEphemeralContainers`,
//! the create-time rule of `ValidatePodCreate`).
//!
//! Simplified: a changed ephemeral container is refused without upstream's
//! `cmp.Diff` of the two; of an ephemeral container only the name, image,
//! the fields it may not set, and `targetContainerName` are checked.

use serde_json::{Value, json};

use super::items;
use super::meta::validate_object_meta_update;
use super::pod::validate_pod;
use crate::error::FieldError;
use crate::jsonpath::str_at;
use crate::validation::is_dns1123_label;

/// What an ephemeral container may not set (every field outside upstream's
/// `allowedEphemeralContainerFields`).
const NOT_ALLOWED: [&str; 7] = [
    "ports",
    "resources",
    "resizePolicy",
    "lifecycle",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
];

/// `ValidatePodCreate`: a new pod has no ephemeral containers.
pub fn validate_create(pod: &Value) -> Vec<FieldError> {
    let set = pod
        .pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if set {
        vec![FieldError::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        )]
    } else {
        Vec::new()
    }
}

/// `dropNonEphemeralContainerUpdates`: the live pod with the request's
/// ephemeral containers, and nothing else of the request.
pub fn prepare_update(new: &mut Value, old: &Value) {
    let containers = new
        .pointer("/spec/ephemeralContainers")
        .cloned()
        .unwrap_or(Value::Null);
    let resource_version = new.pointer("/metadata/resourceVersion").cloned();
    *new = old.clone();
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        if containers.is_null() {
            spec.remove("ephemeralContainers");
        } else {
            spec.insert("ephemeralContainers".into(), containers);
        }
    }
    if let (Some(rv), Some(meta)) = (
        resource_version,
        new.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("resourceVersion".into(), rv);
    }
}

/// `ValidatePodEphemeralContainersUpdate`: the pod stays valid, every
/// ephemeral container is valid, and the existing ones are neither removed
/// nor changed.
pub fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_object_meta_update(new, old);
    errs.extend(validate_pod(new));
    errs.extend(validate_ephemeral_containers(new));
    let path = "spec.ephemeralContainers";
    let new_list: Vec<&Value> = items_of(new).collect();
    for o in items_of(old) {
        let name = str_at(o, &["name"]);
        match new_list.iter().find(|n| str_at(n, &["name"]) == name) {
            None => errs.push(FieldError::forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(n) if !super::sem_eq(Some(n), Some(o)) => errs.push(FieldError::forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    errs
}

fn items_of(pod: &Value) -> impl Iterator<Item = &Value> {
    pod.get("spec")
        .into_iter()
        .flat_map(|s| items(s, "ephemeralContainers"))
}

/// `validateEphemeralContainers`: names unique among every container of the
/// pod, an image, no fields outside the allowed ones, and a target that is
/// one of the pod's containers.
fn validate_ephemeral_containers(pod: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = pod.get("spec").unwrap_or(&empty);
    let others: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| items(spec, l))
        .map(|c| str_at(c, &["name"]))
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    let mut errs = Vec::new();
    for (i, c) in items(spec, "ephemeralContainers").enumerate() {
        let at = |f: &str| format!("spec.ephemeralContainers[{i}].{f}");
        let name = str_at(c, &["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(at("name"), ""));
        } else {
            for msg in is_dns1123_label(name) {
                errs.push(FieldError::invalid(at("name"), json!(name), msg));
            }
            if others.contains(&name) || seen.contains(&name) {
                errs.push(FieldError::duplicate(at("name"), json!(name)));
            }
        }
        seen.push(name);
        if str_at(c, &["image"]).is_empty() {
            errs.push(FieldError::required(at("image"), ""));
        }
        for field in NOT_ALLOWED {
            let set = c.get(field).is_some_and(|v| match v {
                Value::Null => false,
                Value::Object(m) => !m.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => true,
            });
            if set {
                errs.push(FieldError::forbidden(
                    at(field),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        let target = str_at(c, &["targetContainerName"]);
        if !target.is_empty() && !others.contains(&target) {
            errs.push(FieldError::not_found(at("targetContainerName"), json!(target)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A defaulted pod with these ephemeral containers.
    fn pod(ephemeral: Value) -> Value {
        let mut p = json!({"metadata": {"name": "p", "namespace": "default", "uid": "u"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], "ephemeralContainers": ephemeral}});
        crate::kinds::pod::default_pod(&mut p);
        p
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn only_ephemeral_containers_are_taken_from_the_request() {
        let old = pod(json!(null));
        let mut new = pod(json!([{"name": "debugger", "image": "busybox"}]));
        new["spec"]["containers"][0]["image"] = json!("evil");
        new["metadata"]["resourceVersion"] = json!("9");
        prepare_update(&mut new, &old);
        assert_eq!(new["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(new["spec"]["ephemeralContainers"][0]["name"], "debugger");
        assert_eq!(new["metadata"]["resourceVersion"], "9");
        assert!(
            validate_update(&new, &old).is_empty(),
            "{:?}",
            validate_update(&new, &old)
        );
    }

    #[test]
    fn existing_ones_may_not_go_or_change() {
        let old = pod(json!([{"name": "d1", "image": "busybox"}]));
        assert_eq!(
            messages(&validate_update(&pod(json!([])), &old)),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"d1\" may not be removed\n"
            ]
        );
        let changed = pod(json!([{"name": "d1", "image": "alpine"}]));
        assert_eq!(
            messages(&validate_update(&changed, &old)),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"d1\" may not be changed\n"
            ]
        );
    }

    #[test]
    fn an_ephemeral_container_is_named_uniquely_and_has_no_ports() {
        let old = pod(json!(null));
        let new = pod(
            json!([{"name": "app", "image": "busybox", "ports": [{"containerPort": 80}],
            "targetContainerName": "nope"}]),
        );
        assert_eq!(
            messages(&validate_update(&new, &old)),
            [
                "spec.ephemeralContainers[0].name: Duplicate value: \"app\"",
                "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"",
            ]
        );
        assert_eq!(
            messages(&validate_create(&new)),
            ["spec.ephemeralContainers: Forbidden: cannot be set on create"]
        );
    }
}
