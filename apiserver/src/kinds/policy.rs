//! policy/v1 PodDisruptionBudget: validation.
//!
//! Upstream: `pkg/apis/policy/validation/validation.go`
//! (`ValidatePodDisruptionBudgetSpec`, `ValidatePodDisruptionBudgetStatusUpdate`)
//! and `pkg/registry/policy/poddisruptionbudget/strategy.go` (a new PDB's
//! status is empty; the generation is bumped on a spec change, which the
//! generic code in [`super`] does). policy/v1 has no defaults: neither
//! `unhealthyPodEvictionPolicy` nor the budget gets a value when unset.
//!
//! Simplified: the `spec` value of the "cannot be both set" error is printed
//! with the two budgets only, not the whole Go struct with its pointers
//! (whose addresses upstream prints); status conditions are checked for
//! their type, status and reason only.

use serde_json::{Value, json};

use super::workloads::validate_int_or_percent;
use crate::error::FieldError;
use crate::gofmt::go_int_or_string;
use crate::jsonpath::str_at;
use crate::labels::validation::validate_label_selector;
use crate::validation::{invalid_raw, nonnegative};

/// The values of `spec.unhealthyPodEvictionPolicy`.
const EVICTION_POLICIES: [&str; 2] = ["AlwaysAllow", "IfHealthyBudget"];
/// Condition statuses.
const CONDITION_STATUSES: [&str; 3] = ["False", "True", "Unknown"];

/// A new PodDisruptionBudget's status (upstream `PrepareForCreate` sets the
/// empty status, whose counters v1 always serializes).
pub fn initial_status() -> Value {
    json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0})
}

/// `ValidatePodDisruptionBudgetSpec`.
pub fn validate_pdb(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let min = spec.get("minAvailable").filter(|v| !v.is_null());
    let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
    let mut errs = Vec::new();
    if let (Some(min), Some(max)) = (min, max) {
        errs.push(invalid_raw(
            "spec",
            format!(
                "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, MaxUnavailable:{}}}",
                go_int_or_string(min),
                go_int_or_string(max)
            ),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    errs.extend(validate_int_or_percent(min, "spec.minAvailable", true));
    errs.extend(validate_int_or_percent(max, "spec.maxUnavailable", true));
    errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"));
    if let Some(policy) = spec.get("unhealthyPodEvictionPolicy").and_then(Value::as_str)
        && !EVICTION_POLICIES.contains(&policy)
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            json!(policy),
            &EVICTION_POLICIES,
        ));
    }
    errs
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (v1): the counters are not
/// negative, every condition has a type, a known status and a reason.
pub fn validate_pdb_status(obj: &Value) -> Vec<FieldError> {
    let Some(status) = obj.get("status") else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for (i, c) in super::items(status, "conditions").enumerate() {
        let path = format!("status.conditions[{i}]");
        if str_at(c, &["type"]).is_empty() {
            errs.push(FieldError::required(format!("{path}.type"), "must be set"));
        }
        let s = str_at(c, &["status"]);
        if !CONDITION_STATUSES.contains(&s) {
            errs.push(FieldError::not_supported(
                format!("{path}.status"),
                json!(s),
                &CONDITION_STATUSES,
            ));
        }
        if str_at(c, &["reason"]).is_empty() {
            errs.push(FieldError::required(format!("{path}.reason"), "must be set"));
        }
    }
    for field in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        errs.extend(nonnegative(status.get(field), &format!("status.{field}")));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn pdb(spec: Value) -> Value {
        json!({"spec": spec})
    }

    #[test]
    fn a_budget_is_one_of_min_available_and_max_unavailable() {
        assert!(
            validate_pdb(&pdb(
                json!({"minAvailable": 2, "selector": {"matchLabels": {"a": "b"}}})
            ))
            .is_empty()
        );
        assert!(validate_pdb(&pdb(json!({"maxUnavailable": "25%"}))).is_empty());
        assert_eq!(
            fields(&validate_pdb(&pdb(
                json!({"minAvailable": 1, "maxUnavailable": 1})
            ))),
            [
                "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}, MaxUnavailable:intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}}: minAvailable and maxUnavailable cannot be both set"
            ]
        );
    }

    #[test]
    fn budgets_are_non_negative_percentages_up_to_100() {
        assert_eq!(
            fields(&validate_pdb(&pdb(json!({"minAvailable": -1})))),
            ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            fields(&validate_pdb(&pdb(json!({"maxUnavailable": "120%"})))),
            [
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater than 100%"
            ]
        );
        let errs = fields(&validate_pdb(&pdb(json!({"minAvailable": "half"}))));
        assert!(errs[0].starts_with("spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string"), "{errs:?}");
    }

    #[test]
    fn the_unhealthy_pod_eviction_policy_is_one_of_two() {
        assert_eq!(
            fields(&validate_pdb(&pdb(
                json!({"unhealthyPodEvictionPolicy": "Never"})
            ))),
            [
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
            ]
        );
    }

    #[test]
    fn status_counters_are_not_negative() {
        let obj = json!({"status": {"disruptionsAllowed": -1, "currentHealthy": 0,
            "conditions": [{"type": "DisruptionAllowed", "status": "Maybe", "reason": "X"}]}});
        assert_eq!(
            fields(&validate_pdb_status(&obj)),
            [
                "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }
}
