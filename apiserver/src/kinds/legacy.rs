//! core/v1 PodTemplate and ReplicationController: defaulting and validation.
//!
//! Upstream: `pkg/apis/core/v1/defaults.go` (`SetDefaults_ReplicationController`),
//! `pkg/apis/core/validation/validation.go` (`ValidatePodTemplate`,
//! `ValidateReplicationControllerSpec`, `ValidateNonEmptySelector`,
//! `ValidatePodTemplateSpecForRC`) and the strategies of
//! `pkg/registry/core/{podtemplate,replicationcontroller}/strategy.go`.
//! A ReplicationController is a ReplicaSet with a map selector; no
//! controller runs them here (stored, validated, scaled, not reconciled).

use serde_json::{Value, json};

use super::pod::{default_template, validate_pod_template};
use super::{child, default_key, set};
use crate::error::FieldError;
use crate::gofmt::go_string_map;
use crate::jsonpath::at;
use crate::labels::validation::validate_labels;
use crate::validation::{invalid_raw, nonnegative};

/// The pod template's defaults.
pub fn default_pod_template(obj: &mut Value) {
    if let Some(t) = child(obj, "template") {
        default_template(t);
    }
}

/// `SetDefaults_ReplicationController`: selector and labels from the
/// template's labels when empty; one replica; the template's pod defaults.
pub fn default_replication_controller(obj: &mut Value) {
    let template_labels = at(obj, &["spec", "template", "metadata", "labels"])
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    if let Some(labels) = template_labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(|m| m.is_empty());
        if empty(at(obj, &["spec", "selector"]))
            && let Some(spec) = child(obj, "spec")
        {
            set(spec, "selector", labels.clone());
        }
        if empty(at(obj, &["metadata", "labels"]))
            && let Some(meta) = child(obj, "metadata")
        {
            set(meta, "labels", labels);
        }
    }
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "replicas", json!(1));
    if let Some(t) = child(spec, "template") {
        default_template(t);
    }
}

/// `ValidatePodTemplate`: the template at `template`.
pub fn validate_pod_template_object(obj: &Value) -> Vec<FieldError> {
    validate_pod_template(obj.get("template"), "template")
}

/// Whether every `key: value` of a map selector is among `labels`.
fn map_selector_matches(selector: &serde_json::Map<String, Value>, labels: Option<&Value>) -> bool {
    selector
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

/// `ValidateReplicationControllerSpec`.
pub fn validate_replication_controller(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let mut errs = nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds");
    let selector = spec
        .get("selector")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if selector.is_empty() {
        errs.push(FieldError::required("spec.selector", ""));
    } else {
        errs.extend(validate_labels(spec.get("selector"), "spec.selector"));
    }
    errs.extend(nonnegative(spec.get("replicas"), "spec.replicas"));
    let Some(template) = spec.get("template").filter(|t| t.is_object()) else {
        errs.push(FieldError::required("spec.template", ""));
        return errs;
    };
    let labels = at(template, &["metadata", "labels"]);
    if !selector.is_empty() && !map_selector_matches(&selector, labels) {
        errs.push(invalid_raw(
            "spec.template.metadata.labels",
            go_string_map(labels),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(validate_pod_template(Some(template), "spec.template"));
    let restart = at(template, &["spec", "restartPolicy"])
        .and_then(Value::as_str)
        .unwrap_or("");
    if restart != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            json!(restart),
            &["Always"],
        ));
    }
    if at(template, &["spec", "activeDeadlineSeconds"]).is_some_and(|v| !v.is_null()) {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn rc(selector: Value, labels: Value) -> Value {
        json!({"metadata": {"name": "rc"}, "spec": {"selector": selector, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }}})
    }

    #[test]
    fn selector_and_labels_default_from_the_template() {
        let mut o = rc(json!(null), json!({"app": "web"}));
        default_replication_controller(&mut o);
        assert_eq!(o["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(o["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(o["spec"]["replicas"], json!(1));
        assert_eq!(o["spec"]["template"]["spec"]["restartPolicy"], json!("Always"));
        assert!(
            validate_replication_controller(&o).is_empty(),
            "{:?}",
            validate_replication_controller(&o)
        );
    }

    #[test]
    fn an_empty_selector_is_required_and_a_mismatch_is_invalid() {
        let mut o = rc(json!(null), json!(null));
        default_replication_controller(&mut o);
        assert_eq!(
            messages(&validate_replication_controller(&o)),
            ["spec.selector: Required value"]
        );
        let mut o = rc(json!({"app": "db"}), json!({"app": "web"}));
        default_replication_controller(&mut o);
        assert_eq!(
            messages(&validate_replication_controller(&o)),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"
            ]
        );
    }

    #[test]
    fn a_pod_template_needs_containers() {
        let mut pt = json!({"template": {"spec": {"containers": []}}});
        default_pod_template(&mut pt);
        assert_eq!(
            messages(&validate_pod_template_object(&pt)),
            ["template.spec.containers: Required value"]
        );
    }
}
