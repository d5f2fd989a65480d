//! autoscaling/v1 and autoscaling/v2: HorizontalPodAutoscaler.
//!
//! Upstream: `pkg/apis/autoscaling/v1/defaults.go` and
//! `pkg/apis/autoscaling/v2/defaults.go` (defaulting of each version's
//! request bodies), `pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`
//! (a new object's status is empty), `pkg/apis/autoscaling/validation/validation.go`.
//! The object is stored as v2; a v1 body is defaulted as v1, then converted
//! ([`crate::conversion::autoscaling`]) and validated as v2, which is what
//! upstream's internal type is.
//!
//! Simplified: the `HPAScaleToZero` feature gate is off (as in 1.33), so
//! `minReplicas` must be at least 1 unless the stored object already has
//! 0; `containerResource` resource names are checked for presence only.

use serde_json::{Value, json};

use super::{child, default_key, items};
use crate::error::FieldError;
use crate::kinds::pod::quantity_value;
use crate::validation::is_dns1123_label;

/// `SetDefaults_HorizontalPodAutoscaler` of autoscaling/v1: `minReplicas` 1.
pub fn default_hpa_v1(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        default_key(spec, "minReplicas", json!(1));
    }
}

/// `SetDefaults_HorizontalPodAutoscaler` of autoscaling/v2: `minReplicas` 1,
/// a cpu 80% Utilization metric when none is given, and every unset field
/// of a given `behavior` from the default scaling rules.
pub fn default_hpa(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    if spec.get("behavior").is_some_and(Value::is_object) {
        let behavior = &mut spec["behavior"];
        default_scaling_rules(behavior, "scaleUp", scale_up_rules());
        default_scaling_rules(behavior, "scaleDown", scale_down_rules());
    }
}

/// `defaultHPAScaleUpRules`: no stabilization, the larger of 4 pods or 100%
/// every 15 seconds.
fn scale_up_rules() -> Value {
    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

/// `defaultHPAScaleDownRules`: 100% every 15 seconds; the stabilization
/// window stays unset (the controller's `--horizontal-pod-autoscaler-downscale-stabilization`).
fn scale_down_rules() -> Value {
    json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]})
}

/// `copyHPAScalingRules(given, defaults)`: each field set in `given` wins.
fn default_scaling_rules(behavior: &mut Value, key: &str, mut rules: Value) {
    if let Some(given) = behavior.get(key).and_then(Value::as_object) {
        for field in [
            "selectPolicy",
            "stabilizationWindowSeconds",
            "policies",
            "tolerance",
        ] {
            if let Some(v) = given.get(field).filter(|v| !v.is_null()) {
                rules[field] = v.clone();
            }
        }
    }
    behavior[key] = rules;
}

/// The status of a new HorizontalPodAutoscaler (upstream empties it; v2's
/// `desiredReplicas` is always on the wire).
pub fn initial_status() -> Value {
    json!({"desiredReplicas": 0})
}

/// `ValidateHorizontalPodAutoscaler` of the v2 object (metadata aside).
pub fn validate_hpa(obj: &Value) -> Vec<FieldError> {
    validate_spec(obj.get("spec").unwrap_or(&Value::Null), 1)
}

/// `ValidateHorizontalPodAutoscalerUpdate`: an object that already has
/// `minReplicas: 0` may keep it.
pub fn validate_hpa_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let old_min = old.pointer("/spec/minReplicas").and_then(Value::as_i64);
    let lower = if old_min == Some(0) { 0 } else { 1 };
    validate_spec(new.get("spec").unwrap_or(&Value::Null), lower)
}

fn validate_spec(spec: &Value, min_lower_bound: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if let Some(min) = min.filter(|m| *m < min_lower_bound) {
        errs.push(FieldError::invalid(
            "spec.minReplicas",
            json!(min),
            format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            json!(max),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errs.push(FieldError::invalid(
            "spec.maxReplicas",
            json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errs.extend(validate_reference(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        "spec.scaleTargetRef",
    ));
    errs.extend(validate_metrics(spec, min));
    if let Some(b) = spec.get("behavior").filter(|b| b.is_object()) {
        for key in ["scaleUp", "scaleDown"] {
            if let Some(rules) = b.get(key).filter(|r| r.is_object()) {
                errs.extend(validate_scaling_rules(rules, &format!("spec.behavior.{key}")));
            }
        }
    }
    errs
}

/// `ValidateCrossVersionObjectReference`: kind and name required, each a
/// valid path segment.
fn validate_reference(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["kind", "name"] {
        let v = r.get(field).and_then(Value::as_str).unwrap_or("");
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.{field}"), ""));
        }
        for msg in path_segment_errors(v) {
            errs.push(FieldError::invalid(format!("{path}.{field}"), json!(v), msg));
        }
    }
    errs
}

/// `IsValidPathSegmentName`.
fn path_segment_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name == "." || name == ".." {
        errs.push(format!("may not be '{name}'"));
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

const METRIC_SOURCE_TYPES: [&str; 5] = ["ContainerResource", "External", "Object", "Pods", "Resource"];

fn validate_metrics(spec: &Value, min_replicas: Option<i64>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut object_or_external = false;
    for (i, m) in items(spec, "metrics").enumerate() {
        let path = format!("spec.metrics[{i}]");
        errs.extend(validate_metric_spec(m, &path));
        object_or_external |= matches!(m["type"].as_str(), Some("Object" | "External"));
    }
    if min_replicas == Some(0) && !object_or_external {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

/// `validateMetricSpec`: a known type, and exactly the matching source.
fn validate_metric_spec(m: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = m["type"].as_str().unwrap_or("");
    if kind.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&kind) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            json!(kind),
            &METRIC_SOURCE_TYPES,
        ));
    }
    let sources = ["object", "external", "pods", "resource", "containerResource"];
    let present: Vec<&str> = sources
        .into_iter()
        .filter(|s| m.get(*s).is_some_and(|v| !v.is_null()))
        .collect();
    if let Some(first) = present.first() {
        let p = format!("{path}.{first}");
        errs.extend(match *first {
            "object" => validate_object_source(&m[*first], &p),
            "external" => validate_external_source(&m[*first], &p),
            "pods" => validate_pods_source(&m[*first], &p),
            "resource" => validate_resource_source(&m[*first], &p, false),
            _ => validate_resource_source(&m[*first], &p, true),
        });
    }
    let expected = match kind {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => "",
    };
    if !expected.is_empty() && !present.contains(&expected) {
        errs.push(FieldError::required(
            format!("{path}.{expected}"),
            "must populate information for the given metric source",
        ));
    } else if expected.is_empty() && !kind.is_empty() {
        // upstream's switch default: reported a second time
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            json!(kind),
            &METRIC_SOURCE_TYPES,
        ));
    }
    if present.len() != 1 {
        for other in present.iter().filter(|s| **s != expected) {
            errs.push(FieldError::forbidden(
                format!("{path}.{other}"),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

fn validate_object_source(src: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_reference(&src["describedObject"], &format!("{path}.describedObject"));
    errs.extend(validate_metric_identifier(
        &src["metric"],
        &format!("{path}.metric"),
    ));
    errs.extend(validate_metric_target(&src["target"], &format!("{path}.target")));
    if src["target"]["value"].is_null() && src["target"]["averageValue"].is_null() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

fn validate_external_source(src: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(&src["metric"], &format!("{path}.metric"));
    errs.extend(validate_metric_target(&src["target"], &format!("{path}.target")));
    let (value, average) = (&src["target"]["value"], &src["target"]["averageValue"]);
    if value.is_null() && average.is_null() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if !value.is_null() && !average.is_null() {
        errs.push(FieldError::forbidden(
            format!("{path}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errs
}

fn validate_pods_source(src: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(&src["metric"], &format!("{path}.metric"));
    errs.extend(validate_metric_target(&src["target"], &format!("{path}.target")));
    if src["target"]["averageValue"].is_null() {
        errs.push(FieldError::required(
            format!("{path}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// `validateResourceSource`, and `validateContainerResourceSource` when
/// `container` is set.
fn validate_resource_source(src: &Value, path: &str, container: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if src["name"].as_str().unwrap_or("").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    }
    if container {
        let c = src["container"].as_str().unwrap_or("");
        if c.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.container"),
                "must specify a container",
            ));
        }
        for msg in if c.is_empty() {
            Vec::new()
        } else {
            is_dns1123_label(c)
        } {
            errs.push(FieldError::invalid(format!("{path}.container"), json!(c), msg));
        }
    }
    errs.extend(validate_metric_target(&src["target"], &format!("{path}.target")));
    let (util, average) = (
        &src["target"]["averageUtilization"],
        &src["target"]["averageValue"],
    );
    if util.is_null() && average.is_null() {
        errs.push(FieldError::required(
            format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if !util.is_null() && !average.is_null() {
        errs.push(FieldError::forbidden(
            format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

fn validate_metric_target(t: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = t["type"].as_str().unwrap_or("");
    if kind.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(kind, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            json!(kind),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for field in ["value", "averageValue"] {
        let q = &t[field];
        if !q.is_null() && quantity_value(q).is_none_or(|n| n <= 0.0) {
            errs.push(FieldError::invalid(
                format!("{path}.{field}"),
                q.clone(),
                "must be positive",
            ));
        }
    }
    if let Some(u) = t["averageUtilization"].as_i64().filter(|u| *u < 1) {
        errs.push(FieldError::invalid(
            format!("{path}.averageUtilization"),
            json!(u),
            "must be greater than 0",
        ));
    }
    errs
}

fn validate_metric_identifier(id: &Value, path: &str) -> Vec<FieldError> {
    let name = id["name"].as_str().unwrap_or("");
    if name.is_empty() {
        return vec![FieldError::required(
            format!("{path}.name"),
            "must specify a metric name",
        )];
    }
    path_segment_errors(name)
        .into_iter()
        .map(|msg| FieldError::invalid(format!("{path}.name"), json!(name), msg))
        .collect()
}

/// Upper bounds of `validateScalingRules` / `validateScalingPolicy`.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
const MAX_PERIOD_SECONDS: i64 = 1800;

fn validate_scaling_rules(rules: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(w) = rules["stabilizationWindowSeconds"].as_i64() {
        if w < 0 {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                json!(w),
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                json!(w),
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = rules["selectPolicy"].as_str()
        && !matches!(p, "Disabled" | "Max" | "Min")
    {
        errs.push(FieldError::not_supported(
            format!("{path}.selectPolicy"),
            json!(p),
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies: Vec<&Value> = items(rules, "policies").collect();
    if policies.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.into_iter().enumerate() {
        let pp = format!("{path}.policies[{i}]");
        let kind = p["type"].as_str().unwrap_or("");
        if !matches!(kind, "Pods" | "Percent") {
            errs.push(FieldError::not_supported(
                format!("{pp}.type"),
                json!(kind),
                &["Percent", "Pods"],
            ));
        }
        let value = p["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.value"),
                json!(value),
                "must be greater than zero",
            ));
        }
        let period = p["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                json!(period),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid(
                format!("{pp}.periodSeconds"),
                json!(period),
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa(spec: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": "web"}, "spec": spec})
    }

    fn target() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_fill_min_replicas_the_cpu_metric_and_behavior() {
        let mut o = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 3,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}));
        default_hpa(&mut o);
        assert_eq!(o["spec"]["minReplicas"], 1);
        assert_eq!(
            o["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(o["spec"]["behavior"]["scaleUp"], scale_up_rules());
        assert_eq!(
            o["spec"]["behavior"]["scaleDown"],
            json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                   "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
        );
    }

    #[test]
    fn max_below_min_is_refused_with_upstreams_text() {
        let o = hpa(
            json!({"scaleTargetRef": target(), "minReplicas": 5, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]}),
        );
        assert_eq!(
            messages(&validate_hpa(&o)),
            ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]
        );
    }

    #[test]
    fn min_replicas_zero_and_a_missing_reference_are_refused() {
        let o = hpa(
            json!({"scaleTargetRef": {"kind": "Deployment"}, "minReplicas": 0, "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]}),
        );
        assert_eq!(
            messages(&validate_hpa(&o)),
            [
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                "spec.scaleTargetRef.name: Required value",
                "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
            ]
        );
    }

    #[test]
    fn a_metric_must_populate_its_own_source() {
        let o = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 2,
            "metrics": [{"type": "Pods", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 0}}}]}));
        assert_eq!(
            messages(&validate_hpa(&o)),
            [
                "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
                "spec.metrics[0].pods: Required value: must populate information for the given metric source",
            ]
        );
    }

    #[test]
    fn behavior_policies_are_checked() {
        let o = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 2,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}],
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}}));
        assert_eq!(
            messages(&validate_hpa(&o)),
            [
                "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
            ]
        );
    }
}
