//! `metav1.LabelSelector` and label-map validation, as field errors.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`
//! (`ValidateLabels`, `ValidateLabelSelector`,
//! `ValidateLabelSelectorRequirement`), strict about label values
//! (`AllowInvalidLabelValueInSelector: false`).

use serde_json::{Value, json};

use crate::error::FieldError;
use crate::validation::{is_qualified_name, is_valid_label_value};

/// Labels (`metadata.labels`, `spec.selector.matchLabels`, ...): every key a
/// qualified name, every value a label value; errors name the map, not the key.
pub fn validate_labels(labels: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(Value::Object(m)) = labels else {
        return errs;
    };
    for (k, v) in m {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid(path, json!(k), msg));
        }
        let v = v.as_str().unwrap_or_default();
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(path, json!(v), msg));
        }
    }
    errs
}

/// `spec.selector` as a `metav1.LabelSelector` (upstream
/// `ValidateLabelSelector`, strict about label values).
pub fn validate_label_selector(sel: Option<&Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sel) = sel else {
        return errs;
    };
    let exprs = sel.get("matchExpressions").and_then(Value::as_array);
    for (i, r) in exprs.into_iter().flatten().enumerate() {
        errs.extend(validate_requirement(r, &format!("{path}.matchExpressions[{i}]")));
    }
    errs.extend(validate_labels(
        sel.get("matchLabels"),
        &format!("{path}.matchLabels"),
    ));
    errs
}

fn validate_requirement(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let op = r.get("operator").and_then(Value::as_str).unwrap_or_default();
    let values = string_list(r.get("values"));
    match op {
        "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
            format!("{path}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            format!("{path}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => errs.push(FieldError::invalid(
            format!("{path}.operator"),
            json!(other),
            "not a valid selector operator",
        )),
    }
    let key = r.get("key").and_then(Value::as_str).unwrap_or_default();
    for msg in is_qualified_name(key) {
        errs.push(FieldError::invalid(format!("{path}.key"), json!(key), msg));
    }
    for (i, v) in values.iter().enumerate() {
        for msg in is_valid_label_value(v) {
            errs.push(FieldError::invalid(format!("{path}.values[{i}]"), json!(v), msg));
        }
    }
    errs
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}
