//! scheduling.k8s.io/v1 PriorityClass and node.k8s.io/v1 RuntimeClass.
//!
//! Upstream: `pkg/apis/scheduling/v1/defaults.go` (`SetDefaults_PriorityClass`),
//! `pkg/apis/scheduling/v1/helpers.go` (`SystemPriorityClasses`,
//! `IsKnownSystemPriorityClass`), `pkg/apis/scheduling/validation/validation.go`
//! (`ValidatePriorityClass`, `ValidatePriorityClassUpdate`) and
//! `pkg/apis/node/validation/validation.go` (`ValidateRuntimeClass`,
//! `ValidateRuntimeClassUpdate`).
//!
//! The rule that only one class is the global default needs the stored
//! classes, so it is admission's ([`crate::admission::priority`]).
//! Simplified: RuntimeClass `overhead` quantities and `scheduling`
//! tolerations / node selectors are not validated.

use serde_json::{Value, json};

use super::default_key;
use crate::error::FieldError;
use crate::jsonpath::str_at;
use crate::validation::is_dns1123_label;

/// The prefix reserved for the system classes.
pub const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";
/// The largest value a user-defined class may have (upstream `HighestUserDefinablePriority`).
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// The system classes every cluster has, with their values (upstream
/// `SystemCriticalPriority` + 1000 for node-critical).
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The system classes as objects, for the bootstrap.
pub fn system_priority_classes() -> Vec<Value> {
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
            })
        })
        .collect()
}

/// PriorityClass: preemptionPolicy PreemptLowerPriority.
pub fn default_priority_class(obj: &mut Value) {
    default_key(obj, "preemptionPolicy", json!("PreemptLowerPriority"));
}

/// Upstream `ValidatePriorityClass`: `system-` names are the known system
/// classes only, with their values; user classes stay at or below 10^9.
pub fn validate_priority_class(obj: &Value) -> Vec<FieldError> {
    let name = str_at(obj, &["metadata", "name"]);
    let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
    let global_default = obj.get("globalDefault").and_then(Value::as_bool).unwrap_or(false);
    let mut errs = Vec::new();
    if name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
        if let Err(why) = is_known_system_priority_class(name, value, global_default) {
            errs.push(FieldError::forbidden(
                "metadata.name",
                format!(
                    "priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {why}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"),
        ));
    }
    if let Some(p) = obj.get("preemptionPolicy").and_then(Value::as_str) {
        let allowed = ["PreemptLowerPriority", "Never"];
        if !allowed.contains(&p) {
            errs.push(FieldError::not_supported("preemptionPolicy", json!(p), &allowed));
        }
    }
    errs
}

/// Upstream `IsKnownSystemPriorityClass`.
fn is_known_system_priority_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, known, _)) = SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if *known != value {
        return Err(format!("value of {name} PriorityClass must be {known}"));
    }
    if global_default {
        return Err(format!("globalDefault of {name} PriorityClass must be false"));
    }
    Ok(())
}

/// Upstream `ValidatePriorityClassUpdate`: value and preemptionPolicy are fixed.
pub fn validate_priority_class_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if new.get("value") != old.get("value") {
        errs.push(FieldError::forbidden("value", "may not be changed in an update."));
    }
    if new.get("preemptionPolicy") != old.get("preemptionPolicy") {
        errs.push(FieldError::invalid(
            "preemptionPolicy",
            new.get("preemptionPolicy").cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
    errs
}

/// Upstream `ValidateRuntimeClass`: the handler is a DNS label.
pub fn validate_runtime_class(obj: &Value) -> Vec<FieldError> {
    let handler = str_at(obj, &["handler"]);
    is_dns1123_label(handler)
        .into_iter()
        .map(|msg| FieldError::invalid("handler", json!(handler), msg))
        .collect()
}

/// Upstream `ValidateRuntimeClassUpdate`: the handler is fixed.
pub fn validate_runtime_class_update(new: &Value, old: &Value) -> Vec<FieldError> {
    if new.get("handler") == old.get("handler") {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "handler",
        new.get("handler").cloned().unwrap_or(Value::Null),
        "field is immutable",
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn pc(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value})
    }

    #[test]
    fn system_classes_are_valid_and_reserved() {
        for c in system_priority_classes() {
            assert!(validate_priority_class(&c).is_empty(), "{c}");
        }
        assert_eq!(
            rendered(&validate_priority_class(&pc("system-mine", 5))),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
            ]
        );
        assert_eq!(
            rendered(&validate_priority_class(&pc("system-node-critical", 5))),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"
            ]
        );
    }

    #[test]
    fn user_class_value_is_capped_and_fixed() {
        assert!(validate_priority_class(&pc("high", 1_000_000_000)).is_empty());
        assert_eq!(
            rendered(&validate_priority_class(&pc("higher", 1_000_000_001))),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        let mut old = pc("high", 10);
        default_priority_class(&mut old);
        assert_eq!(old["preemptionPolicy"], "PreemptLowerPriority");
        let mut new = old.clone();
        new["value"] = json!(11);
        assert_eq!(
            rendered(&validate_priority_class_update(&new, &old)),
            ["value: Forbidden: may not be changed in an update."]
        );
    }

    #[test]
    fn runtime_class_handler() {
        let rc = json!({"metadata": {"name": "gvisor"}, "handler": "runsc"});
        assert!(validate_runtime_class(&rc).is_empty());
        let bad = json!({"handler": "Run_SC"});
        assert!(
            rendered(&validate_runtime_class(&bad))[0]
                .starts_with("handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label")
        );
        assert_eq!(
            rendered(&validate_runtime_class_update(&bad, &rc)),
            ["handler: Invalid value: \"Run_SC\": field is immutable"]
        );
    }
}
