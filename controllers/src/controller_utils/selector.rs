//! Label selector matching for typed `LabelSelector`s.
//!
//! Upstream: apimachinery `pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`) and
//! `pkg/labels/selector.go` (`Requirement.Matches`).
//!
//! Simplified: the selector is not parsed into a `labels.Selector` first; it is matched directly.
//! Whether an empty selector selects anything is for the caller to decide ([`is_empty`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Whether `labels` satisfy a (typed) label selector, as `metav1.LabelSelectorAsSelector(..).Matches`.
///
/// An empty selector matches everything. An unknown operator, or `In`/`NotIn` without values, is an
/// invalid selector and matches nothing (the API server rejects such selectors on write anyway).
pub fn selector_matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let match_labels = selector.match_labels.iter().flatten();
    let labels_ok = match_labels.into_iter().all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten();
    labels_ok
        && expressions
            .into_iter()
            .all(|e| requirement_matches(&e.operator, &e.key, e.values.as_deref(), labels))
}

fn requirement_matches(
    operator: &str,
    key: &str,
    values: Option<&[String]>,
    labels: &BTreeMap<String, String>,
) -> bool {
    let values = values.unwrap_or(&[]);
    let value = labels.get(key);
    let in_values = value.is_some_and(|v| values.contains(v));
    match operator {
        "In" => !values.is_empty() && in_values,
        "NotIn" => !values.is_empty() && !in_values,
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        _ => false,
    }
}

/// Neither `matchLabels` nor `matchExpressions` has an entry: as a selector, everything.
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && selector.match_expressions.as_ref().is_none_or(Vec::is_empty)
}
