//! Priority: a pod's `priorityClassName` becomes its `priority` and
//! `preemptionPolicy`; only one PriorityClass may be the global default.
//!
//! Upstream: `plugin/pkg/admission/priority/admission.go` (`admitPod`,
//! `validatePriorityClass`, `getDefaultPriority`).
//!
//! ```text
//! pod create, no class name  → the global default class (name, value, policy),
//!                              or priority 0 / PreemptLowerPriority without one
//! pod create, class name     → that class's value and policy; unknown → 403
//!                              "no PriorityClass with name X was found"
//! a priority / policy given that differs from the class's → 403
//! PriorityClass create or update with globalDefault while another class
//!   is the default           → 403 "PriorityClass X is already marked as default. ..."
//! ```
//!
//! Simplified: the classes are read from the store, not an informer; a pod
//! update keeps its priority through the pod strategy, not here.

use serde_json::{Value, json};

use super::Operation;
use crate::Api;
use crate::api::ListOptions;
use crate::error::{ApiError, ApiResult};
use crate::jsonpath::str_at;
use crate::registry::ResourceInfo;

/// Runs the plugin on a pod or PriorityClass being written.
pub fn admit(api: &Api, operation: Operation, info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    match (info.group.as_str(), info.kind.as_str(), operation) {
        ("", "Pod", Operation::Create) => {
            let name = resource_name(obj);
            admit_pod(api, &name, obj)
        }
        ("scheduling.k8s.io", "PriorityClass", Operation::Create | Operation::Update) => {
            validate_priority_class(api, operation, obj)
        }
        _ => Ok(()),
    }
}

/// What a pod gets from its class.
#[derive(Debug, PartialEq)]
struct Resolved {
    class_name: String,
    priority: i64,
    preemption_policy: String,
}

/// Upstream `admitPod` on create.
fn admit_pod(api: &Api, name: &str, pod: &mut Value) -> ApiResult<()> {
    let classes = list_classes(api)?;
    let requested = str_at(pod, &["spec", "priorityClassName"]).to_string();
    let resolved = resolve(&classes, &requested)
        .ok_or_else(|| forbidden_pod(name, &format!("no PriorityClass with name {requested} was found")))?;
    let spec = pod.get_mut("spec").and_then(Value::as_object_mut);
    let Some(spec) = spec else {
        return Ok(());
    };
    if let Some(given) = spec.get("priority").and_then(Value::as_i64)
        && given != resolved.priority
    {
        return Err(forbidden_pod(
            name,
            &format!(
                "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name",
                resolved.priority
            ),
        ));
    }
    if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
        && given != resolved.preemption_policy
    {
        return Err(forbidden_pod(
            name,
            &format!(
                "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name",
                resolved.preemption_policy
            ),
        ));
    }
    if !resolved.class_name.is_empty() {
        spec.insert("priorityClassName".into(), json!(resolved.class_name));
    }
    spec.insert("priority".into(), json!(resolved.priority));
    spec.insert("preemptionPolicy".into(), json!(resolved.preemption_policy));
    Ok(())
}

/// The class a pod asking for `requested` gets (`""`: the global default,
/// else none at all); `None` when a named class does not exist.
fn resolve(classes: &[Value], requested: &str) -> Option<Resolved> {
    let of = |c: &Value| Resolved {
        class_name: str_at(c, &["metadata", "name"]).to_string(),
        priority: c.get("value").and_then(Value::as_i64).unwrap_or(0),
        preemption_policy: match str_at(c, &["preemptionPolicy"]) {
            "" => "PreemptLowerPriority".to_string(),
            p => p.to_string(),
        },
    };
    if !requested.is_empty() {
        return classes
            .iter()
            .find(|c| str_at(c, &["metadata", "name"]) == requested)
            .map(of);
    }
    Some(match default_class(classes) {
        Some(c) => of(c),
        None => Resolved {
            class_name: String::new(),
            priority: 0,
            preemption_policy: "PreemptLowerPriority".to_string(),
        },
    })
}

/// Upstream `getDefaultPriorityClass`: of the classes marked globalDefault,
/// the one with the smallest value.
fn default_class(classes: &[Value]) -> Option<&Value> {
    classes
        .iter()
        .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
        .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0))
}

/// Upstream `validatePriorityClass`: a second global default is refused.
fn validate_priority_class(api: &Api, operation: Operation, pc: &Value) -> ApiResult<()> {
    if pc.get("globalDefault").and_then(Value::as_bool) != Some(true) {
        return Ok(());
    }
    let name = str_at(pc, &["metadata", "name"]);
    let classes = list_classes(api)?;
    let Some(existing) = default_class(&classes) else {
        return Ok(());
    };
    let existing = str_at(existing, &["metadata", "name"]);
    if operation == Operation::Create || existing != name {
        return Err(ApiError::forbidden(
            "scheduling.k8s.io",
            "priorityclasses",
            if name.is_empty() { "Unknown" } else { name },
            &format!("PriorityClass {existing} is already marked as default. Only one default can exist"),
        ));
    }
    Ok(())
}

/// The name an error reports (upstream `extractResourceName`): the
/// object's name, else its generateName, else `Unknown`.
fn resource_name(obj: &Value) -> String {
    ["name", "generateName"]
        .iter()
        .map(|k| str_at(obj, &["metadata", k]))
        .find(|s| !s.is_empty())
        .unwrap_or("Unknown")
        .to_string()
}

fn list_classes(api: &Api) -> ApiResult<Vec<Value>> {
    let info = api.resource("scheduling.k8s.io", "v1", "priorityclasses")?;
    Ok(api.list(&info, None, &ListOptions::default())?.items)
}

fn forbidden_pod(name: &str, why: &str) -> ApiError {
    ApiError::forbidden("", "pods", name, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64, default: bool) -> Value {
        json!({"metadata": {"name": name}, "value": value, "globalDefault": default})
    }

    #[test]
    fn resolves_named_default_and_none() {
        let classes = [
            class("high", 1000, false),
            class("low", 10, true),
            class("lower", 5, true),
        ];
        let high = resolve(&classes, "high").unwrap();
        assert_eq!(
            (high.priority, high.preemption_policy.as_str()),
            (1000, "PreemptLowerPriority")
        );
        assert_eq!(resolve(&classes, "").unwrap().class_name, "lower");
        assert_eq!(resolve(&classes, "missing"), None);
        let none = resolve(&[], "").unwrap();
        assert_eq!((none.class_name.as_str(), none.priority), ("", 0));
    }
}
