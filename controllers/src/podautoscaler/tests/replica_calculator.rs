//! Upstream's replica calculator cases (`controllers/testdata/hpa_replica_calculator.json`, from
//! `replica_calculator_test.go`), run against a fake metrics client as upstream runs them against
//! fake metrics APIs; and upstream's `TestGroupPods` cases.

use std::sync::Arc;
use std::time::Duration;

use apiserver::labels::Selector;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;
use serde_json::json;

use super::fixtures::{FakeMetrics, now};
use crate::podautoscaler::metrics::{PodMetric, PodMetricsInfo};
use crate::podautoscaler::replica_calculator::ReplicaCalculator;

/// Upstream's testing settings (`defaultTestingTolerance` and friends).
pub(super) fn testing_calculator() -> ReplicaCalculator {
    ReplicaCalculator {
        tolerance: 0.1,
        cpu_initialization_period: Duration::from_secs(120),
        delay_of_initial_readiness_status: Duration::from_secs(10),
    }
}

#[derive(Deserialize)]
struct Doc {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    current_replicas: i32,
    expected_replicas: Option<i32>,
    expected_error: Option<String>,
    resource: Option<ResourceInfo>,
    metric: Option<MetricInfo>,
    pod_readiness: Option<Vec<String>>,
    pod_start_time: Option<Vec<String>>,
    pod_phase: Option<Vec<String>>,
    pod_deletion_timestamp: Option<Vec<bool>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceInfo {
    name: String,
    requests: Vec<String>,
    levels: Vec<i64>,
    #[serde(default)]
    pod_names: Vec<String>,
    target_utilization: i32,
    expected_utilization: Option<i32>,
    expected_value: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetricInfo {
    #[serde(rename = "type")]
    type_: String,
    name: String,
    levels: Vec<i64>,
    selector: Option<LabelSelector>,
    single_object: Option<CrossVersionObjectReference>,
    target_utilization: Option<i64>,
    per_pod_target_utilization: Option<i64>,
    expected_utilization: i64,
}

const NAMESPACE: &str = "test-namespace";
const CONTAINERS: i64 = 2;

/// Long ago: upstream's zero times (start, Ready transition, metric timestamps).
fn long_ago() -> Timestamp {
    now() - SignedDuration::from_hours(24)
}

/// The pods of a case, as upstream's `prepareTestClientSet` makes them.
fn pods_of(tc: &Case) -> Vec<Arc<Pod>> {
    let count = tc
        .pod_phase
        .as_ref()
        .map_or(0, Vec::len)
        .max(usize::try_from(tc.current_replicas).unwrap_or(0));
    (0..count)
        .map(|i| {
            let readiness = tc
                .pod_readiness
                .as_ref()
                .and_then(|r| r.get(i).cloned())
                .unwrap_or_else(|| "True".to_string());
            let start = match tc.pod_start_time.as_ref().and_then(|s| s.get(i)).map(String::as_str) {
                Some("hot") => now() - SignedDuration::from_mins(1),
                Some("cool") => now() - SignedDuration::from_mins(3),
                _ => long_ago(),
            };
            let phase = tc
                .pod_phase
                .as_ref()
                .and_then(|p| p.get(i).cloned())
                .unwrap_or_else(|| "Running".to_string());
            let deleting = tc
                .pod_deletion_timestamp
                .as_ref()
                .and_then(|d| d.get(i).copied())
                .unwrap_or(false);
            let resources = match &tc.resource {
                Some(r) if i < r.requests.len() => json!({"requests": {r.name.clone(): r.requests[i]}}),
                _ => json!({}),
            };
            let mut pod = json!({
                "metadata": {"name": format!("test-pod-{i}"), "namespace": NAMESPACE, "labels": {"name": "test-pod"}},
                "spec": {"containers": [
                    {"name": "container0", "resources": resources},
                    {"name": "container1", "resources": resources},
                ]},
                "status": {"phase": phase, "startTime": start.to_string(), "conditions": [
                    {"type": "Ready", "status": readiness, "lastTransitionTime": long_ago().to_string()},
                ]},
            });
            if deleting {
                pod["metadata"]["deletionTimestamp"] = json!(now().to_string());
            }
            Arc::new(serde_json::from_value(pod).expect("a valid pod"))
        })
        .collect()
}

/// The fake metrics of a case, as upstream's fake metrics clients answer.
fn metrics_of(tc: &Case) -> FakeMetrics {
    let mut fake = FakeMetrics {
        timestamp: long_ago(),
        ..FakeMetrics::default()
    };
    if let Some(r) = &tc.resource {
        let mut pods = PodMetricsInfo::new();
        for (i, level) in r.levels.iter().enumerate() {
            let name = r
                .pod_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("test-pod-{i}"));
            let metric = PodMetric {
                timestamp: long_ago(),
                window: Duration::from_secs(60),
                value: level * CONTAINERS,
            };
            pods.insert(name, metric);
        }
        fake.resource = Some(pods);
    }
    if let Some(m) = &tc.metric {
        fake.metric_name = m.name.clone();
        let mut pods = PodMetricsInfo::new();
        for (i, level) in m.levels.iter().enumerate() {
            let metric = PodMetric {
                timestamp: long_ago(),
                window: Duration::from_secs(60),
                value: *level,
            };
            pods.insert(format!("test-pod-{i}"), metric);
        }
        fake.pods = Some(pods);
        fake.object = m.levels.first().copied();
        fake.external = Some(m.levels.clone());
    }
    fake
}

#[test]
fn upstream_replica_calculator_cases() {
    let doc: Doc = serde_json::from_str(include_str!("../../../testdata/hpa_replica_calculator.json"))
        .expect("the case file parses");
    assert!(doc.cases.len() >= 50, "all of upstream's cases are there");
    let calc = testing_calculator();
    let selector = Selector::parse("name=test-pod").expect("a selector");
    for tc in &doc.cases {
        let pods = pods_of(tc);
        let fake = metrics_of(tc);
        let name = &tc.name;
        if let Some(r) = &tc.resource {
            let got = calc.get_resource_replicas(
                &fake,
                &pods,
                now(),
                tc.current_replicas,
                r.target_utilization,
                &r.name,
                NAMESPACE,
                &selector,
            );
            match (&tc.expected_error, got) {
                (Some(want), Err(e)) => {
                    assert!(e.contains(want.as_str()), "{name}: error {e:?}, want {want:?}")
                }
                (Some(want), Ok(r)) => panic!("{name}: got {r:?}, want the error {want:?}"),
                (None, Err(e)) => panic!("{name}: unexpected error {e}"),
                (None, Ok(got)) => {
                    assert_eq!(Some(got.replicas), tc.expected_replicas, "{name}: replicas");
                    assert_eq!(
                        Some(got.utilization),
                        r.expected_utilization,
                        "{name}: utilization"
                    );
                    assert_eq!(Some(got.raw_utilization), r.expected_value, "{name}: raw value");
                    assert_eq!(got.timestamp, long_ago(), "{name}: timestamp");
                }
            }
            continue;
        }
        let m = tc.metric.as_ref().expect("a resource or a metric");
        let object = m.single_object.clone().unwrap_or_default();
        let target = m.target_utilization.unwrap_or(0);
        let per_pod = m.per_pod_target_utilization.unwrap_or(0);
        let sel = m.selector.as_ref();
        let got = match m.type_.as_str() {
            "pods" => calc.get_metric_replicas(
                &fake,
                &pods,
                now(),
                tc.current_replicas,
                target,
                &m.name,
                NAMESPACE,
                &selector,
                None,
            ),
            "object" => calc.get_object_metric_replicas(
                &fake,
                &pods,
                tc.current_replicas,
                target,
                &m.name,
                NAMESPACE,
                &object,
                None,
            ),
            "objectPerPod" => calc.get_object_per_pod_metric_replicas(
                &fake,
                tc.current_replicas,
                per_pod,
                &m.name,
                NAMESPACE,
                &object,
                None,
            ),
            "external" => calc.get_external_metric_replicas(
                &fake,
                &pods,
                tc.current_replicas,
                target,
                &m.name,
                NAMESPACE,
                sel,
            ),
            "externalPerPod" => calc.get_external_per_pod_metric_replicas(
                &fake,
                tc.current_replicas,
                per_pod,
                &m.name,
                NAMESPACE,
                sel,
            ),
            other => panic!("{name}: unknown metric type {other}"),
        };
        let got = got.unwrap_or_else(|e| panic!("{name}: unexpected error {e}"));
        assert_eq!(Some(got.replicas), tc.expected_replicas, "{name}: replicas");
        assert_eq!(got.utilization, m.expected_utilization, "{name}: utilization");
        assert_eq!(got.timestamp, long_ago(), "{name}: timestamp");
    }
}

/// A pod for the `groupPods` cases: phase, start (seconds ago), Ready (status, seconds ago).
fn grouped_pod(name: &str, phase: &str, start: Option<i64>, ready: Option<(&str, i64)>) -> Arc<Pod> {
    let mut status = json!({"phase": phase});
    if let Some(s) = start {
        status["startTime"] = json!((now() - SignedDuration::from_secs(s)).to_string());
    }
    if let Some((st, ago)) = ready {
        let at = (now() - SignedDuration::from_secs(ago)).to_string();
        status["conditions"] = json!([{"type": "Ready", "status": st, "lastTransitionTime": at}]);
    }
    let pod = json!({"metadata": {"name": name}, "spec": {"containers": []}, "status": status});
    Arc::new(serde_json::from_value(pod).expect("a valid pod"))
}

fn metric(ago: i64, window: i64) -> PodMetric {
    PodMetric {
        timestamp: now() - SignedDuration::from_secs(ago),
        window: Duration::from_secs(u64::try_from(window).unwrap_or(0)),
        value: 1,
    }
}

/// Upstream `TestGroupPods`: (name, pods, metrics, resource, ready count, unready, missing).
#[test]
fn upstream_group_pods_cases() {
    type Expect<'a> = (i64, &'a [&'a str], &'a [&'a str]);
    type Case<'a> = (
        &'a str,
        Vec<Arc<Pod>>,
        Vec<(&'a str, PodMetric)>,
        &'a str,
        Expect<'a>,
    );
    let cases: Vec<Case<'_>> = vec![
        ("void", vec![], vec![], "cpu", (0, &[], &[])),
        (
            "count in a ready pod - memory",
            vec![grouped_pod("bentham", "Succeeded", None, None)],
            vec![("bentham", metric(0, 60))],
            "memory",
            (1, &[], &[]),
        ),
        (
            "unready a pod without ready condition - CPU",
            vec![grouped_pod("lucretius", "Succeeded", Some(0), None)],
            vec![("lucretius", metric(0, 0))],
            "cpu",
            (0, &["lucretius"], &[]),
        ),
        (
            "count in a ready pod with fresh metrics during initialization period - CPU",
            vec![grouped_pod("bentham", "Succeeded", Some(60), Some(("True", 30)))],
            vec![("bentham", metric(0, 30))],
            "cpu",
            (1, &[], &[]),
        ),
        (
            "unready a ready pod without fresh metrics during initialization period - CPU",
            vec![grouped_pod("bentham", "Succeeded", Some(60), Some(("True", 30)))],
            vec![("bentham", metric(0, 60))],
            "cpu",
            (0, &["bentham"], &[]),
        ),
        (
            "unready an unready pod during initialization period - CPU",
            vec![grouped_pod(
                "lucretius",
                "Succeeded",
                Some(600),
                Some(("False", 594)),
            )],
            vec![("lucretius", metric(0, 0))],
            "cpu",
            (0, &["lucretius"], &[]),
        ),
        (
            "count in a ready pod without fresh metrics after initialization period - CPU",
            vec![grouped_pod(
                "bentham",
                "Succeeded",
                Some(180),
                Some(("True", 180)),
            )],
            vec![("bentham", metric(120, 60))],
            "cpu",
            (1, &[], &[]),
        ),
        (
            "count in an unready pod that was ready after initialization period - CPU",
            vec![grouped_pod(
                "lucretius",
                "Succeeded",
                Some(600),
                Some(("False", 540)),
            )],
            vec![("lucretius", metric(0, 0))],
            "cpu",
            (1, &[], &[]),
        ),
        (
            "unready pod that has never been ready after initialization period - CPU",
            vec![grouped_pod(
                "lucretius",
                "Succeeded",
                Some(600),
                Some(("False", 590)),
            )],
            vec![("lucretius", metric(0, 0))],
            "cpu",
            (1, &[], &[]),
        ),
        (
            "a missing pod",
            vec![grouped_pod("epicurus", "Succeeded", Some(180), None)],
            vec![],
            "cpu",
            (0, &[], &["epicurus"]),
        ),
        (
            "several pods",
            vec![
                grouped_pod("lucretius", "Succeeded", Some(0), None),
                grouped_pod("niccolo", "Succeeded", Some(180), Some(("True", 180))),
                grouped_pod("epicurus", "Succeeded", Some(180), None),
            ],
            vec![("lucretius", metric(0, 0)), ("niccolo", metric(0, 0))],
            "cpu",
            (1, &["lucretius"], &["epicurus"]),
        ),
        (
            "pending pods are unreadied",
            vec![grouped_pod("unscheduled", "Pending", None, None)],
            vec![],
            "cpu",
            (0, &["unscheduled"], &[]),
        ),
        (
            "failed pods are ignored",
            vec![grouped_pod("f", "Failed", None, None)],
            vec![],
            "cpu",
            (0, &[], &[]),
        ),
    ];
    let calc = testing_calculator();
    for (name, pods, metrics, resource, (ready, unready, missing)) in cases {
        let metrics: PodMetricsInfo = metrics.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let groups = calc.group_pods(&pods, &metrics, resource, now());
        assert_eq!(groups.ready_pod_count, ready, "{name}: ready count");
        let names = |s: &std::collections::BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
        assert_eq!(names(&groups.unready_pods), unready, "{name}: unready");
        assert_eq!(names(&groups.missing_pods), missing, "{name}: missing");
    }
}
