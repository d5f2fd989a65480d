//! `compute_replicas_for_metrics` against a fake metrics client (statuses, conditions, events),
//! and the PromQL each metric source is read with.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::{CrossVersionObjectReference, HorizontalPodAutoscaler};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::json;

use super::fixtures::{FakeMetrics, now};
use super::replica_calculator::testing_calculator;
use crate::podautoscaler::horizontal::*;
use crate::podautoscaler::metrics::*;

fn hpa(metrics: serde_json::Value) -> HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 10, "metrics": metrics,
        },
    }))
    .expect("a valid HPA")
}

fn cpu(target: i32) -> serde_json::Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": target}}})
}

fn pod(name: &str, app: &str) -> Arc<Pod> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running", "startTime": "2023-11-14T00:00:00Z", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2023-11-14T00:00:00Z"}]},
        }))
        .expect("a valid pod"),
    )
}

fn usage(pods: &[(&str, i64)]) -> FakeMetrics {
    let info = pods
        .iter()
        .map(|(n, v)| {
            let m = PodMetric {
                timestamp: now(),
                window: Duration::from_secs(60),
                value: *v,
            };
            ((*n).to_string(), m)
        })
        .collect();
    FakeMetrics {
        timestamp: now(),
        resource: Some(info),
        ..Default::default()
    }
}

fn condition(h: &HorizontalPodAutoscaler, type_: &str) -> (String, String, String) {
    let c = h
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .expect("the condition is set");
    (
        c.status.clone(),
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    )
}

fn scale(replicas: i32) -> ScaleView {
    ScaleView {
        spec_replicas: replicas,
        status_replicas: replicas,
        selector: "app=web".to_string(),
    }
}

#[test]
fn cpu_utilization_proposal_status_and_condition() {
    let mut h = hpa(json!([cpu(50)]));
    // Two web pods at 150m of 100m requested (150%), and a pod of another app the selector skips.
    let pods = vec![pod("web-1", "web"), pod("web-2", "web"), pod("db-1", "db")];
    let fake = usage(&[("web-1", 150), ("web-2", 150)]);
    let calc = testing_calculator();
    let cx = MetricsContext {
        calc: &calc,
        client: &fake,
        namespace_pods: &pods,
        now: now(),
    };
    let mut events = Vec::new();
    let p = compute_replicas_for_metrics(&mut h, &scale(2), &cx, &mut events).expect("a proposal");
    assert_eq!(p.replicas, 6, "⌈150/50 × 2⌉");
    assert_eq!(p.metric, "cpu resource utilization (percentage of request)");
    let current = &p.statuses[0]
        .resource
        .as_ref()
        .expect("a resource status")
        .current;
    assert_eq!(current.average_utilization, Some(150));
    assert_eq!(current.average_value.as_ref().map(|q| q.0.as_str()), Some("150m"));
    assert!(events.is_empty());
    let (status, reason, message) = condition(&h, "ScalingActive");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "ValidMetricFound"));
    assert_eq!(
        message,
        "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"
    );
}

#[test]
fn an_unreadable_metric_sets_scaling_active_false_with_upstreams_reason() {
    let mut h = hpa(json!([{"type": "Resource", "resource": {"name": "memory",
        "target": {"type": "Utilization", "averageUtilization": 50}}}]));
    let pods = vec![pod("web-1", "web")];
    let fake = FakeMetrics::default();
    let calc = testing_calculator();
    let cx = MetricsContext {
        calc: &calc,
        client: &fake,
        namespace_pods: &pods,
        now: now(),
    };
    let mut events = Vec::new();
    let (_, error) =
        compute_replicas_for_metrics(&mut h, &scale(1), &cx, &mut events).expect_err("no metric");
    assert_eq!(
        error,
        "invalid metrics (1 invalid out of 1), first error is: failed to get memory utilization: unable to get metrics for resource memory: no metrics returned from resource metrics API"
    );
    assert_eq!(events[0].reason, "FailedGetResourceMetric");
    let (status, reason, message) = condition(&h, "ScalingActive");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "FailedGetResourceMetric")
    );
    assert!(
        message
            .starts_with("the HPA was unable to compute the replica count: failed to get memory utilization")
    );
}

#[test]
fn a_missing_selector_is_invalid() {
    let mut h = hpa(json!([cpu(50)]));
    let calc = testing_calculator();
    let fake = FakeMetrics::default();
    let cx = MetricsContext {
        calc: &calc,
        client: &fake,
        namespace_pods: &[],
        now: now(),
    };
    let mut events = Vec::new();
    let no_selector = ScaleView {
        selector: String::new(),
        ..scale(1)
    };
    let (_, error) =
        compute_replicas_for_metrics(&mut h, &no_selector, &cx, &mut events).expect_err("invalid");
    assert_eq!(error, "selector is required");
    assert_eq!(events[0].reason, "SelectorRequired");
    assert_eq!(condition(&h, "ScalingActive").1, "InvalidSelector");
}

#[test]
fn the_largest_proposal_wins_and_a_failed_metric_does_not_block_a_scale_up() {
    // cpu asks for 6; an External metric cannot be read; 6 > 2 current, so scaling goes on.
    let mut h = hpa(json!([cpu(50), {"type": "External", "external": {
        "metric": {"name": "queue_depth"}, "target": {"type": "Value", "value": "10"}}}]));
    let pods = vec![pod("web-1", "web"), pod("web-2", "web")];
    let mut fake = usage(&[("web-1", 150), ("web-2", 150)]);
    fake.metric_name = "queue_depth".to_string();
    let calc = testing_calculator();
    let cx = MetricsContext {
        calc: &calc,
        client: &fake,
        namespace_pods: &pods,
        now: now(),
    };
    let mut events = Vec::new();
    let p = compute_replicas_for_metrics(&mut h, &scale(2), &cx, &mut events).expect("a proposal");
    assert_eq!(p.replicas, 6);
    assert_eq!(events[0].reason, "FailedGetExternalMetric");
    assert!(p.partial_error.is_some());
    assert_eq!(condition(&h, "ScalingActive").1, "ValidMetricFound");
}

#[test]
fn queries_per_metric_source() {
    assert_eq!(
        resource_cpu_query("shop"),
        r#"sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="shop"}[1m]))"#
    );
    let selector: LabelSelector = serde_json::from_value(json!({
        "matchLabels": {"code": "200"},
        "matchExpressions": [{"key": "route", "operator": "In", "values": ["a", "b.c"]},
                             {"key": "canary", "operator": "DoesNotExist"}]}))
    .expect("a selector");
    assert_eq!(
        pods_metric_query("http_requests_total", "shop", Some(&selector)),
        r#"sum by (pod) (http_requests_total{namespace="shop",code="200",route=~"a|b\\.c",canary=""})"#
    );
    let object = CrossVersionObjectReference {
        api_version: Some("v1".to_string()),
        kind: "Service".to_string(),
        name: "web".to_string(),
    };
    assert_eq!(
        object_metric_query("http_requests_total", "shop", &object, None),
        r#"sum(http_requests_total{namespace="shop",service="web"})"#
    );
    assert_eq!(external_metric_query("queue_depth", None), "sum(queue_depth{})");
    // Not a metric name: the expression as written.
    let expr = r#"sum(rate(http_requests_total{service="web"}[1m]))"#;
    assert_eq!(external_metric_query(expr, None), expr);
}

#[test]
fn quantities_print_as_upstreams_milli_quantities() {
    assert_eq!(milli_quantity(150).0, "150m");
    assert_eq!(milli_quantity(2000).0, "2");
    assert_eq!(milli_quantity(0).0, "0");
    assert_eq!(go_label_selector(None), "nil");
    let s: LabelSelector =
        serde_json::from_value(json!({"matchLabels": {"label": "value"}})).expect("a selector");
    assert_eq!(
        go_label_selector(Some(&s)),
        "&LabelSelector{MatchLabels:map[string]string{label: value,},MatchExpressions:[]LabelSelectorRequirement{},}"
    );
}
