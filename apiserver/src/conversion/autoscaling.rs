//! HorizontalPodAutoscaler autoscaling/v1 ⇄ autoscaling/v2.
//!
//! Upstream: `pkg/apis/autoscaling/v1/conversion.go` (and the annotation
//! names and `DropRoundTripHorizontalPodAutoscalerAnnotations` of
//! `pkg/apis/autoscaling/helpers.go`). v2 is the storage version. v1 knows a
//! single metric, `targetCPUUtilizationPercentage`; everything else a v2
//! object holds travels through v1 in annotations, so that a client that
//! reads v1 and writes it back loses nothing:
//!
//! | v2 | v1 |
//! | --- | --- |
//! | `spec.metrics[]` Resource cpu with a Utilization target | `spec.targetCPUUtilizationPercentage` |
//! | the other `spec.metrics[]`, in the v1 (v2beta1-shaped) MetricSpec form | annotation `autoscaling.alpha.kubernetes.io/metrics` |
//! | `spec.behavior`, with Go's field names (upstream marshals its internal type) | annotation `autoscaling.alpha.kubernetes.io/behavior` |
//! | `status.currentMetrics[]`, in the v1 MetricStatus form | annotation `autoscaling.alpha.kubernetes.io/current-metrics` (and cpu: `status.currentCPUUtilizationPercentage`) |
//! | `status.conditions[]` | annotation `autoscaling.alpha.kubernetes.io/conditions` |
//!
//! Going to v1, stale copies of these annotations are dropped first; going
//! to v2, they are read and removed. A v1 object with no metric at all gets
//! the implicit cpu 80% target (upstream applies it in the conversion).
//!
//! Simplified: quantities are copied as the strings they are, not
//! re-serialized in canonical form.

use serde_json::{Map, Value, json};

/// `autoscaling.alpha.kubernetes.io/metrics`: the v2 metrics v1 cannot express.
pub const METRIC_SPECS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.alpha.kubernetes.io/behavior`: `spec.behavior`.
pub const BEHAVIOR_SPECS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// `autoscaling.alpha.kubernetes.io/current-metrics`: `status.currentMetrics`.
pub const METRIC_STATUSES_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `autoscaling.alpha.kubernetes.io/conditions`: `status.conditions`.
pub const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";

const ROUND_TRIP: [&str; 4] = [
    METRIC_SPECS_ANNOTATION,
    BEHAVIOR_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    CONDITIONS_ANNOTATION,
];

/// The cpu utilization target v1 has when it names none (`DefaultCPUUtilization`).
pub const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// Converts between `v1` and `v2`; an annotation that does not parse is an error.
pub fn convert(obj: Value, from: &str, to: &str) -> Result<Value, String> {
    match (from, to) {
        ("v2", "v1") => Ok(v2_to_v1(obj)),
        ("v1", "v2") => v1_to_v2(obj),
        _ => Err(format!("no conversion from {from} to {to}")),
    }
}

/// The autoscaling/v2 object as autoscaling/v1 shows it.
pub fn v2_to_v1(mut obj: Value) -> Value {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = obj.get("status").cloned();
    let mut annotations = drop_round_trip(&obj);

    let metrics = list(&spec, "metrics");
    let other: Vec<Value> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization_target(m))
        .map(metric_spec_to_v1)
        .collect();
    if !other.is_empty() {
        annotations.insert(METRIC_SPECS_ANNOTATION.into(), go_json(&Value::Array(other)));
    }
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        annotations.insert(
            BEHAVIOR_SPECS_ANNOTATION.into(),
            go_json(&go_field_names(behavior)),
        );
    }
    let mut v1_spec = Map::new();
    copy(
        &spec,
        &mut v1_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let cpu = metrics.iter().find(|m| {
        m["type"] == "Resource" && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
    });
    if let Some(u) = cpu.and_then(|m| m.pointer("/resource/target/averageUtilization")) {
        v1_spec.insert("targetCPUUtilizationPercentage".into(), u.clone());
    }
    set(&mut obj, "spec", Value::Object(v1_spec));

    if let Some(status) = status {
        let current = list(&status, "currentMetrics");
        if !current.is_empty() {
            let v1: Vec<Value> = current.iter().map(metric_status_to_v1).collect();
            annotations.insert(METRIC_STATUSES_ANNOTATION.into(), go_json(&Value::Array(v1)));
        }
        let conditions = list(&status, "conditions");
        if !conditions.is_empty() {
            annotations.insert(CONDITIONS_ANNOTATION.into(), go_json(&Value::Array(conditions)));
        }
        set(&mut obj, "status", status_to_v1(&status));
    }
    set_annotations(&mut obj, annotations);
    set(&mut obj, "apiVersion", json!("autoscaling/v1"));
    obj
}

/// The autoscaling/v1 object as autoscaling/v2 (the storage version) holds it.
pub fn v1_to_v2(mut obj: Value) -> Result<Value, String> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = obj.get("status").cloned();
    let annotations = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let parsed = |key: &str| -> Result<Option<Value>, String> {
        match annotations.get(key).and_then(Value::as_str) {
            Some(text) => serde_json::from_str(text)
                .map(Some)
                .map_err(|e| format!("annotation {key}: {e}")),
            None => Ok(None),
        }
    };

    let mut metrics: Vec<Value> = match parsed(METRIC_SPECS_ANNOTATION)? {
        Some(Value::Array(other)) => other.iter().map(metric_spec_to_v2).collect(),
        _ => Vec::new(),
    };
    if let Some(u) = spec
        .get("targetCPUUtilizationPercentage")
        .filter(|u| !u.is_null())
    {
        metrics.push(cpu_utilization_metric(u.clone()));
    }
    if metrics.is_empty() {
        metrics.push(cpu_utilization_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    let mut v2_spec = Map::new();
    copy(
        &spec,
        &mut v2_spec,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    v2_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(behavior) = parsed(BEHAVIOR_SPECS_ANNOTATION)?.filter(|b| !b.is_null()) {
        v2_spec.insert("behavior".into(), json_field_names(&behavior));
    }
    set(&mut obj, "spec", Value::Object(v2_spec));

    if let Some(status) = status {
        let mut v2_status = status_to_v2(&status);
        if let Some(Value::Array(current)) = parsed(METRIC_STATUSES_ANNOTATION)? {
            let current: Vec<Value> = current.iter().map(metric_status_to_v2).collect();
            v2_status.insert("currentMetrics".into(), Value::Array(current));
        }
        if let Some(Value::Array(conditions)) = parsed(CONDITIONS_ANNOTATION)? {
            v2_status.insert("conditions".into(), Value::Array(conditions));
        }
        set(&mut obj, "status", Value::Object(v2_status));
    }
    let kept = drop_round_trip(&obj);
    set_annotations(&mut obj, kept);
    set(&mut obj, "apiVersion", json!("autoscaling/v2"));
    Ok(obj)
}

/// A Resource cpu metric with an average Utilization target: the one metric v1 has.
fn is_cpu_utilization_target(m: &Value) -> bool {
    m["type"] == "Resource"
        && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
        && m.pointer("/resource/target/averageUtilization")
            .is_some_and(|u| !u.is_null())
}

fn cpu_utilization_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

fn status_to_v1(status: &Value) -> Value {
    let mut out = Map::new();
    copy(status, &mut out, &["observedGeneration", "lastScaleTime"]);
    // Both are plain int32 in v1, always on the wire.
    for key in ["currentReplicas", "desiredReplicas"] {
        out.insert(key.into(), status.get(key).cloned().unwrap_or(json!(0)));
    }
    for m in list(status, "currentMetrics") {
        if m["type"] == "Resource"
            && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
            && let Some(u) = m
                .pointer("/resource/current/averageUtilization")
                .filter(|u| !u.is_null())
        {
            out.insert("currentCPUUtilizationPercentage".into(), u.clone());
        }
    }
    Value::Object(out)
}

fn status_to_v2(status: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    copy(
        status,
        &mut out,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    if let Some(u) = status
        .get("currentCPUUtilizationPercentage")
        .filter(|u| !u.is_null())
    {
        out.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": u}}}]),
        );
    }
    out
}

// ---------------------------------------------------------------------------
// One metric, v2 ⇄ v1. The v1 forms are upstream's `autoscaling/v1`
// MetricSpec / MetricStatus (the v2beta1 shapes); the field mapping is that of
// the `Convert_*MetricSource*` and `Convert_*MetricStatus*` functions.

/// A v2 MetricSpec in its v1 form.
fn metric_spec_to_v1(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(r) = m.get("resource").filter(|v| v.is_object()) {
        out.insert("resource".into(), resource_source_to_v1(r));
    }
    if let Some(r) = m.get("containerResource").filter(|v| v.is_object()) {
        let mut c = resource_source_to_v1(r);
        c["container"] = r["container"].clone();
        out.insert("containerResource".into(), c);
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&p["metric"], "selector");
        v.insert(
            "targetAverageValue".into(),
            quantity_or_zero(&p["target"]["averageValue"]),
        );
        out.insert("pods".into(), Value::Object(v));
    }
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&o["metric"], "selector");
        v.insert("target".into(), o["describedObject"].clone());
        v.insert("targetValue".into(), quantity_or_zero(&o["target"]["value"]));
        put(&mut v, "averageValue", &o["target"]["averageValue"]);
        out.insert("object".into(), Value::Object(v));
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&e["metric"], "metricSelector");
        put(&mut v, "targetValue", &e["target"]["value"]);
        put(&mut v, "targetAverageValue", &e["target"]["averageValue"]);
        out.insert("external".into(), Value::Object(v));
    }
    Value::Object(out)
}

fn resource_source_to_v1(r: &Value) -> Value {
    let mut v = Map::new();
    v.insert("name".into(), r["name"].clone());
    put(
        &mut v,
        "targetAverageUtilization",
        &r["target"]["averageUtilization"],
    );
    put(&mut v, "targetAverageValue", &r["target"]["averageValue"]);
    Value::Object(v)
}

/// A v1 MetricSpec (from the annotation) in its v2 form.
fn metric_spec_to_v2(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(r) = m.get("resource").filter(|v| v.is_object()) {
        out.insert("resource".into(), resource_source_to_v2(r));
    }
    if let Some(r) = m.get("containerResource").filter(|v| v.is_object()) {
        let mut c = resource_source_to_v2(r);
        c["container"] = r["container"].clone();
        out.insert("containerResource".into(), c);
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        out.insert(
            "pods".into(),
            json!({"metric": metric_identifier_to_v2(p, "selector"),
                   "target": {"type": "AverageValue", "averageValue": quantity_or_zero(&p["targetAverageValue"])}}),
        );
    }
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let average = &o["averageValue"];
        let mut target = Map::new();
        let kind = if average.is_null() {
            "Value"
        } else {
            "AverageValue"
        };
        target.insert("type".into(), json!(kind));
        target.insert("value".into(), quantity_or_zero(&o["targetValue"]));
        put(&mut target, "averageValue", average);
        out.insert(
            "object".into(),
            json!({"describedObject": o["target"], "metric": metric_identifier_to_v2(o, "selector"),
                   "target": target}),
        );
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let mut target = Map::new();
        let kind = if e["targetValue"].is_null() {
            "AverageValue"
        } else {
            "Value"
        };
        target.insert("type".into(), json!(kind));
        put(&mut target, "value", &e["targetValue"]);
        put(&mut target, "averageValue", &e["targetAverageValue"]);
        out.insert(
            "external".into(),
            json!({"metric": metric_identifier_to_v2(e, "metricSelector"), "target": target}),
        );
    }
    Value::Object(out)
}

fn resource_source_to_v2(r: &Value) -> Value {
    let utilization = &r["targetAverageUtilization"];
    let mut target = Map::new();
    let kind = if utilization.is_null() {
        "AverageValue"
    } else {
        "Utilization"
    };
    target.insert("type".into(), json!(kind));
    put(&mut target, "averageUtilization", utilization);
    put(&mut target, "averageValue", &r["targetAverageValue"]);
    json!({"name": r["name"], "target": target})
}

/// A v2 MetricStatus in its v1 form.
fn metric_status_to_v1(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    for key in ["resource", "containerResource"] {
        if let Some(r) = m.get(key).filter(|v| v.is_object()) {
            let mut v = Map::new();
            v.insert("name".into(), r["name"].clone());
            put(&mut v, "container", &r["container"]);
            put(
                &mut v,
                "currentAverageUtilization",
                &r["current"]["averageUtilization"],
            );
            v.insert(
                "currentAverageValue".into(),
                quantity_or_zero(&r["current"]["averageValue"]),
            );
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&p["metric"], "selector");
        v.insert(
            "currentAverageValue".into(),
            quantity_or_zero(&p["current"]["averageValue"]),
        );
        out.insert("pods".into(), Value::Object(v));
    }
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&o["metric"], "selector");
        v.insert("target".into(), o["describedObject"].clone());
        v.insert("currentValue".into(), quantity_or_zero(&o["current"]["value"]));
        put(&mut v, "averageValue", &o["current"]["averageValue"]);
        out.insert("object".into(), Value::Object(v));
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let mut v = metric_identifier_to_v1(&e["metric"], "metricSelector");
        v.insert("currentValue".into(), quantity_or_zero(&e["current"]["value"]));
        put(&mut v, "currentAverageValue", &e["current"]["averageValue"]);
        out.insert("external".into(), Value::Object(v));
    }
    Value::Object(out)
}

/// A v1 MetricStatus (from the annotation) in its v2 form.
fn metric_status_to_v2(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    for key in ["resource", "containerResource"] {
        if let Some(r) = m.get(key).filter(|v| v.is_object()) {
            let mut current = Map::new();
            put(&mut current, "averageValue", &r["currentAverageValue"]);
            put(
                &mut current,
                "averageUtilization",
                &r["currentAverageUtilization"],
            );
            let mut v = Map::new();
            v.insert("name".into(), r["name"].clone());
            put(&mut v, "container", &r["container"]);
            v.insert("current".into(), Value::Object(current));
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(p) = m.get("pods").filter(|v| v.is_object()) {
        out.insert(
            "pods".into(),
            json!({"metric": metric_identifier_to_v2(p, "selector"),
                   "current": {"averageValue": quantity_or_zero(&p["currentAverageValue"])}}),
        );
    }
    if let Some(o) = m.get("object").filter(|v| v.is_object()) {
        let mut current = Map::new();
        current.insert("value".into(), quantity_or_zero(&o["currentValue"]));
        put(&mut current, "averageValue", &o["averageValue"]);
        out.insert(
            "object".into(),
            json!({"describedObject": o["target"], "metric": metric_identifier_to_v2(o, "selector"),
                   "current": current}),
        );
    }
    if let Some(e) = m.get("external").filter(|v| v.is_object()) {
        let mut current = Map::new();
        current.insert("value".into(), quantity_or_zero(&e["currentValue"]));
        put(&mut current, "averageValue", &e["currentAverageValue"]);
        out.insert(
            "external".into(),
            json!({"metric": metric_identifier_to_v2(e, "metricSelector"), "current": current}),
        );
    }
    Value::Object(out)
}

/// v2 `metric: {name, selector}` as v1's `metricName` and `<selector_key>`.
fn metric_identifier_to_v1(metric: &Value, selector_key: &str) -> Map<String, Value> {
    let mut v = Map::new();
    v.insert("metricName".into(), metric["name"].clone());
    put(&mut v, selector_key, &metric["selector"]);
    v
}

/// v1 `metricName` and `<selector_key>` as v2's `metric: {name, selector}`.
fn metric_identifier_to_v2(v1: &Value, selector_key: &str) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), v1["metricName"].clone());
    put(&mut m, "selector", &v1[selector_key]);
    Value::Object(m)
}

/// A Go `resource.Quantity` held by value: `"0"` when unset.
fn quantity_or_zero(q: &Value) -> Value {
    if q.is_null() { json!("0") } else { q.clone() }
}

// ---------------------------------------------------------------------------
// The behavior annotation holds upstream's *internal* type, marshalled
// without JSON tags: Go's field names (`ScaleUp`, `StabilizationWindowSeconds`,
// ...), unset pointers as `null`. Go reads field names case-insensitively, so
// the way back lower-cases the first letter and drops the nulls.

fn go_field_names(v: &Value) -> Value {
    rename_keys(v, |k| {
        let mut c = k.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    })
}

fn json_field_names(v: &Value) -> Value {
    rename_keys(v, |k| {
        let mut c = k.chars();
        c.next()
            .map(|f| f.to_lowercase().chain(c).collect())
            .unwrap_or_default()
    })
}

fn rename_keys(v: &Value, rename: fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (rename(k), rename_keys(v, rename)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| rename_keys(v, rename)).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------

/// The object's annotations without the four round-trip ones.
fn drop_round_trip(obj: &Value) -> Map<String, Value> {
    let mut a = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in ROUND_TRIP {
        a.remove(key);
    }
    a
}

/// Sets `metadata.annotations`, removing it when empty (`omitempty`).
fn set_annotations(obj: &mut Value, annotations: Map<String, Value>) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if annotations.is_empty() {
        meta.remove("annotations");
    } else {
        meta.insert("annotations".into(), Value::Object(annotations));
    }
}

/// Go's `json.Marshal` text of a value (compact).
fn go_json(v: &Value) -> Value {
    Value::String(v.to_string())
}

fn list(v: &Value, key: &str) -> Vec<Value> {
    v.get(key).and_then(Value::as_array).cloned().unwrap_or_default()
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        put(to, key, &from[*key]);
    }
}

/// Inserts `value` under `key` unless it is null (absent).
fn put(to: &mut Map<String, Value>, key: &str, value: &Value) {
    if !value.is_null() {
        to.insert(key.into(), value.clone());
    }
}

fn set(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = obj.as_object_mut() {
        m.insert(key.into(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(spec: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
    }

    fn target() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
    }

    #[test]
    fn cpu_utilization_becomes_target_cpu_utilization_percentage() {
        let obj = v2(
            json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 5,
            "metrics": [cpu_utilization_metric(json!(70))]}),
        );
        let v1 = v2_to_v1(obj.clone());
        assert_eq!(
            v1["spec"],
            json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 5,
                   "targetCPUUtilizationPercentage": 70})
        );
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert!(v1["metadata"].get("annotations").is_none());
        assert_eq!(v1_to_v2(v1).unwrap(), obj);
    }

    #[test]
    fn a_v1_object_without_a_target_gets_the_implicit_cpu_80() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"}, "spec": {"scaleTargetRef": target(), "maxReplicas": 3}});
        let out = v1_to_v2(v1).unwrap();
        assert_eq!(out["spec"]["metrics"], json!([cpu_utilization_metric(json!(80))]));
    }

    #[test]
    fn other_metrics_and_behavior_round_trip_through_annotations() {
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "10"}}});
        let memory = json!({"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "100Mi"}}});
        let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}});
        let obj = v2(
            json!({"scaleTargetRef": target(), "minReplicas": 1, "maxReplicas": 5,
            "metrics": [pods, memory, cpu_utilization_metric(json!(50))], "behavior": behavior}),
        );
        let v1 = v2_to_v1(obj.clone());
        let a = &v1["metadata"]["annotations"];
        let specs: Value = serde_json::from_str(a[METRIC_SPECS_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(
            specs,
            json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
                   {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}}])
        );
        let b: Value = serde_json::from_str(a[BEHAVIOR_SPECS_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(b["ScaleDown"]["Policies"][0]["PeriodSeconds"], 15);
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        // Back in v2: the cpu metric comes after the others, as upstream appends it.
        assert_eq!(v1_to_v2(v1).unwrap(), obj);
    }

    #[test]
    fn status_metrics_and_conditions_round_trip() {
        let mut obj = v2(json!({"scaleTargetRef": target(), "maxReplicas": 5,
            "metrics": [cpu_utilization_metric(json!(80))]}));
        obj["status"] = json!({"currentReplicas": 2, "desiredReplicas": 3,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 91, "averageValue": "182m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "message": "ok"}]});
        let v1 = v2_to_v1(obj.clone());
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 91);
        assert_eq!(v1_to_v2(v1).unwrap(), obj);
    }

    #[test]
    fn stale_round_trip_annotations_are_dropped_on_the_way_to_v1() {
        let mut obj = v2(json!({"scaleTargetRef": target(), "maxReplicas": 5,
            "metrics": [cpu_utilization_metric(json!(80))]}));
        obj["metadata"]["annotations"] = json!({METRIC_SPECS_ANNOTATION: "[]", "team": "a"});
        let v1 = v2_to_v1(obj);
        assert_eq!(v1["metadata"]["annotations"], json!({"team": "a"}));
    }

    #[test]
    fn a_broken_annotation_is_an_error() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "x",
            "annotations": {METRIC_SPECS_ANNOTATION: "not json"}}, "spec": {}});
        assert!(v1_to_v2(v1).unwrap_err().contains(METRIC_SPECS_ANNOTATION));
    }
}
