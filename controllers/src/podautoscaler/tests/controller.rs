//! The HPA controller running for real against an in-process API server on paused tokio time,
//! reading cpu usage from a metrics source the test sets: a Deployment's `scale` goes up with the
//! usage, and down only after the stabilization window; status, conditions and events as
//! upstream's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Event, Pod};
use serde_json::json;
use sim_metrics::{Labels, Query, QueryError, Sample, Tsdb, Value};
use store::Clock;

use crate::podautoscaler::controller::HorizontalController;
use crate::runtime::events::Recorder;
use crate::runtime::{Informer, ListParams, PatchType, Typed};
use crate::testing::{eventually, poll, stop_tasks, test_client, test_clock};

/// Answers the cpu query with the usage the test sets (cores per pod); every other query with
/// nothing. Also remembers the queries asked.
#[derive(Default)]
struct CpuUsage {
    cores: Mutex<BTreeMap<String, f64>>,
    asked: Mutex<Vec<String>>,
}

impl CpuUsage {
    fn set(&self, pod: &str, cores: f64) {
        self.cores.lock().unwrap().insert(pod.to_string(), cores);
    }
}

impl Query for CpuUsage {
    fn instant(&self, expr: &str, _at: SystemTime) -> Result<Value, QueryError> {
        self.asked.lock().unwrap().push(expr.to_string());
        if !expr.contains("container_cpu_usage_seconds_total") {
            return Ok(Value::Vector(Vec::new()));
        }
        let samples = self
            .cores
            .lock()
            .unwrap()
            .iter()
            .map(|(pod, v)| Sample {
                labels: Labels::from([("pod".to_string(), pod.clone())]),
                value: *v,
            })
            .collect();
        Ok(Value::Vector(samples))
    }
}

struct Cluster {
    clock: Clock,
    deployments: Typed<Deployment>,
    pods: Typed<Pod>,
    hpas: Typed<HorizontalPodAutoscaler>,
    events: Typed<Event>,
    usage: Arc<CpuUsage>,
    /// What the controller reads: `usage`, unless a test puts a real store here before `start`.
    metrics: Arc<dyn Query>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        let usage = Arc::new(CpuUsage::default());
        Cluster {
            deployments: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            hpas: Typed::new(client.clone()),
            events: Typed::new(client),
            metrics: usage.clone(),
            usage,
            clock,
            tasks: Tasks::new(),
        }
    }

    fn start(&mut self) {
        let client = self.deployments.client().clone();
        let hpas = Informer::<HorizontalPodAutoscaler>::new(client.clone(), self.clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(
            client.clone(),
            self.clock.clone(),
            "horizontal-pod-autoscaler",
            None,
        );
        let metrics = self.metrics.clone();
        let controller =
            HorizontalController::new(client, self.clock.clone(), recorder, &hpas, &pods, metrics);
        self.tasks.push(hpas.run(self.tasks.shutdown()));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(1, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// A Deployment `web` of `replicas` (no Deployment controller runs: the test makes the pods).
    async fn deployment(&self, replicas: i32) {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        }))
        .unwrap();
        self.deployments.create(Some("default"), &d).await.unwrap();
    }

    async fn replicas(&self) -> i32 {
        let d = self.deployments.get(Some("default"), "web").await.unwrap();
        d.spec.and_then(|s| s.replicas).unwrap_or(0)
    }

    /// A running, Ready pod `name` of `web` requesting 100m cpu, started `started_ago` before now.
    async fn pod(&self, name: &str, started_ago: Duration) {
        let p: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "resources": {"requests": {"cpu": "100m"}}}]},
        }))
        .unwrap();
        self.pods.create(Some("default"), &p).await.unwrap();
        let start = jiff::Timestamp::try_from(self.clock.now() - started_ago).unwrap();
        let start = start.round(jiff::Unit::Second).unwrap().to_string();
        let patch = json!({"status": {"phase": "Running", "startTime": start, "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": start}]}});
        self.pods
            .patch_status(Some("default"), name, PatchType::Merge, patch)
            .await
            .unwrap();
    }

    async fn hpa(&self, spec: serde_json::Value) {
        let h: HorizontalPodAutoscaler = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }))
        .unwrap();
        self.hpas.create(Some("default"), &h).await.unwrap();
    }

    async fn get_hpa(&self) -> HorizontalPodAutoscaler {
        self.hpas.get(Some("default"), "web").await.unwrap()
    }

    async fn event_messages(&self, reason: &str) -> Vec<String> {
        let events = self
            .events
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect()
    }

    async fn wait_for_replicas(&self, n: i32) {
        eventually(&self.clock, &format!("web at {n} replicas"), || async {
            (self.replicas().await == n).then_some(())
        })
        .await;
    }
}

fn condition(h: &HorizontalPodAutoscaler, type_: &str) -> (String, String) {
    let c = h
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no {type_} condition"));
    (c.status.clone(), c.reason.clone().unwrap_or_default())
}

const OLD: Duration = Duration::from_secs(600);
/// Waits on a rate over a minute: up to three simulated minutes, polled every second.
const LONG: Duration = Duration::from_secs(180);
const SECOND: Duration = Duration::from_secs(1);

#[tokio::test(start_paused = true)]
async fn scales_up_with_usage_and_down_after_the_stabilization_window() {
    let mut c = Cluster::new().await;
    c.deployment(2).await;
    c.pod("web-a", OLD).await;
    c.pod("web-b", OLD).await;
    // 50m of 100m each: at the 50% target.
    c.usage.set("web-a", 0.05);
    c.usage.set("web-b", 0.05);
    c.hpa(json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
    }))
    .await;
    c.start();

    // The first sync: at target, no rescale; status and conditions written.
    let h = eventually(&c.clock, "a first status", || async {
        let h = c.get_hpa().await;
        h.status.as_ref().and_then(|s| s.current_metrics.as_ref())?;
        Some(h)
    })
    .await;
    let status = h.status.as_ref().unwrap();
    assert_eq!((status.current_replicas, status.desired_replicas), (Some(2), 2));
    let cpu = status.current_metrics.as_ref().unwrap()[0]
        .resource
        .clone()
        .unwrap();
    assert_eq!(cpu.current.average_utilization, Some(50));
    assert_eq!(cpu.current.average_value.map(|q| q.0), Some("50m".to_string()));
    assert_eq!(
        condition(&h, "AbleToScale"),
        ("True".into(), "ReadyForNewScale".into())
    );
    assert_eq!(
        condition(&h, "ScalingActive"),
        ("True".into(), "ValidMetricFound".into())
    );
    assert_eq!(
        condition(&h, "ScalingLimited"),
        ("False".into(), "DesiredWithinRange".into())
    );
    assert!(status.last_scale_time.is_none());
    assert_eq!(c.replicas().await, 2);

    // The traffic triples: 150% each → ⌈3 × 2⌉ = 6.
    c.usage.set("web-a", 0.15);
    c.usage.set("web-b", 0.15);
    c.wait_for_replicas(6).await;
    let scaled_up = c.clock.now();
    let messages = eventually(&c.clock, "a SuccessfulRescale event", || async {
        let m = c.event_messages("SuccessfulRescale").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert_eq!(
        messages,
        vec!["New size: 6; reason: cpu resource utilization (percentage of request) above target"]
    );
    let h = eventually(&c.clock, "status after the rescale", || async {
        let h = c.get_hpa().await;
        (h.status.as_ref()?.desired_replicas == 6).then_some(h)
    })
    .await;
    assert!(h.status.as_ref().unwrap().last_scale_time.is_some());
    assert_eq!(
        condition(&h, "AbleToScale"),
        ("True".into(), "SucceededRescale".into())
    );

    // The new pods come up; the traffic falls back: 6 pods at 15m each is well below target,
    // but the HPA holds 6 for the 60 s window.
    for name in ["web-c", "web-d", "web-e", "web-f"] {
        c.pod(name, OLD).await;
    }
    for name in ["web-a", "web-b", "web-c", "web-d", "web-e", "web-f"] {
        c.usage.set(name, 0.015);
    }
    c.clock.sleep(Duration::from_secs(30)).await;
    assert_eq!(c.replicas().await, 6, "held within the stabilization window");
    let h = c.get_hpa().await;
    assert_eq!(condition(&h, "AbleToScale").1, "ScaleDownStabilized");
    // 15% of 50% → ⌈0.3 × 6⌉ = 2, once the window has passed.
    c.wait_for_replicas(2).await;
    let held = c.clock.now().duration_since(scaled_up).unwrap();
    assert!(
        held >= Duration::from_secs(60),
        "scaled down {held:?} after the scale-up"
    );
    let messages = c.event_messages("SuccessfulRescale").await;
    assert!(messages.contains(&"New size: 2; reason: All metrics below target".to_string()));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn unreadable_metrics_and_a_missing_target_are_reported() {
    let mut c = Cluster::new().await;
    c.deployment(1).await;
    c.pod("web-a", OLD).await;
    c.hpa(json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 3,
        "metrics": [{"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "Utilization", "averageUtilization": 50}}}],
    }))
    .await;
    c.start();
    let h = eventually(&c.clock, "ScalingActive False", || async {
        let h = c.get_hpa().await;
        let cs = h.status.as_ref()?.conditions.as_ref()?;
        cs.iter().any(|c| c.type_ == "ScalingActive").then_some(h)
    })
    .await;
    assert_eq!(
        condition(&h, "ScalingActive"),
        ("False".into(), "FailedGetResourceMetric".into())
    );
    let failed = eventually(&c.clock, "a FailedComputeMetricsReplicas event", || async {
        let m = c.event_messages("FailedComputeMetricsReplicas").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert!(
        failed[0].starts_with(
            "invalid metrics (1 invalid out of 1), first error is: failed to get memory utilization"
        ),
        "{failed:?}"
    );

    // A target that does not exist: FailedGetScale.
    let h: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "ghost", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ghost"},
            "maxReplicas": 3},
    }))
    .unwrap();
    c.hpas.create(Some("default"), &h).await.unwrap();
    let messages = eventually(&c.clock, "a FailedGetScale event", || async {
        let m = c.event_messages("FailedGetScale").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert!(messages[0].contains("not found"), "{messages:?}");
    let ghost = c.hpas.get(Some("default"), "ghost").await.unwrap();
    assert_eq!(
        condition(&ghost, "AbleToScale"),
        ("False".into(), "FailedGetScale".into())
    );
    // The cpu query was asked with the namespace.
    let asked = c.usage.asked.lock().unwrap().clone();
    assert!(asked.is_empty(), "memory is not asked of the store: {asked:?}");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn replicas_outside_min_max_go_straight_to_the_bound() {
    let mut c = Cluster::new().await;
    c.deployment(8).await;
    c.hpa(json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2, "maxReplicas": 5,
    }))
    .await;
    c.start();
    c.wait_for_replicas(5).await;
    let messages = eventually(&c.clock, "a SuccessfulRescale event", || async {
        let m = c.event_messages("SuccessfulRescale").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert_eq!(
        messages,
        vec!["New size: 5; reason: Current number of replicas above Spec.MaxReplicas"]
    );
    c.stop().await;
}

/// The real store and PromQL: a feeder counts each pod's cpu seconds every 5 s and scrapes, as
/// the traffic simulation does; the HPA reads `rate(...[1m])` of them.
#[tokio::test(start_paused = true)]
async fn reads_cpu_from_the_time_series_store_in_promql() {
    let mut c = Cluster::new().await;
    let tsdb = Tsdb::new();
    c.metrics = Arc::new(tsdb.clone());
    let cores: Arc<Mutex<BTreeMap<String, f64>>> = Arc::default();
    let (clock, feed) = (c.clock.clone(), cores.clone());
    c.tasks.spawn(move |stop| async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = clock.sleep(Duration::from_secs(5)) => {}
            }
            for (pod, v) in feed.lock().unwrap().iter() {
                let labels = [
                    ("namespace", "default"),
                    ("pod", pod.as_str()),
                    ("container", "c"),
                ];
                tsdb.counter_add(
                    sim_metrics::names::CONTAINER_CPU_USAGE_SECONDS_TOTAL,
                    &labels,
                    v * 5.0,
                );
            }
            tsdb.scrape(clock.now());
        }
    });
    c.deployment(2).await;
    c.pod("web-a", OLD).await;
    c.pod("web-b", OLD).await;
    cores
        .lock()
        .unwrap()
        .extend([("web-a".to_string(), 0.05), ("web-b".to_string(), 0.05)]);
    c.hpa(json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 10,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}],
    }))
    .await;
    c.start();
    // The first syncs find no rate yet (fewer than two samples): FailedGetResourceMetric.
    let failed = eventually(&c.clock, "a failed first read", || async {
        let m = c.event_messages("FailedComputeMetricsReplicas").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert!(
        failed[0].ends_with("no metrics returned from resource metrics API"),
        "{failed:?}"
    );
    let h = poll(&c.clock, "50% read from the store", LONG, SECOND, || async {
        let h = c.get_hpa().await;
        let m = h
            .status
            .as_ref()?
            .current_metrics
            .as_ref()?
            .first()?
            .resource
            .clone()?;
        (m.current.average_utilization == Some(50)).then_some(h)
    })
    .await;
    assert_eq!(h.status.unwrap().desired_replicas, 2);
    // Three times the usage: once the 1m rate has caught up, ⌈3.0 × 2⌉ = 6.
    for v in cores.lock().unwrap().values_mut() {
        *v = 0.15;
    }
    poll(&c.clock, "web at 6 replicas", LONG, SECOND, || async {
        (c.replicas().await == 6).then_some(())
    })
    .await;
    c.stop().await;
}

/// A Pods metric given as a PromQL expression (each pod's request rate) against an average
/// value target, read from the real store: 2 pods at 15 requests/s for a target of 5 each →
/// ⌈15 / 5 × 2⌉ = 6; the status shows the average in thousandths (`15`).
#[tokio::test(start_paused = true)]
async fn a_pods_metric_from_a_promql_expression() {
    let mut c = Cluster::new().await;
    let tsdb = Tsdb::new();
    c.metrics = Arc::new(tsdb.clone());
    let clock = c.clock.clone();
    c.tasks.spawn(move |stop| async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = clock.sleep(Duration::from_secs(5)) => {}
            }
            for pod in ["web-a", "web-b"] {
                let labels = [
                    ("namespace", "default"),
                    ("service", "web"),
                    ("pod", pod),
                    ("code", "200"),
                ];
                tsdb.counter_add(sim_metrics::names::HTTP_REQUESTS_TOTAL, &labels, 15.0 * 5.0);
            }
            tsdb.scrape(clock.now());
        }
    });
    c.deployment(2).await;
    c.pod("web-a", OLD).await;
    c.pod("web-b", OLD).await;
    let expr = r#"sum by (pod) (rate(http_requests_total{namespace="default"}[1m]))"#;
    c.hpa(json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 10,
        "metrics": [{"type": "Pods", "pods": {"metric": {"name": expr},
            "target": {"type": "AverageValue", "averageValue": "5"}}}],
    }))
    .await;
    c.start();
    poll(&c.clock, "web at 6 replicas", LONG, SECOND, || async {
        (c.replicas().await == 6).then_some(())
    })
    .await;
    let h = c.get_hpa().await;
    let pods = h.status.unwrap().current_metrics.unwrap()[0]
        .pods
        .clone()
        .unwrap();
    assert_eq!(pods.metric.name, expr);
    assert_eq!(pods.current.average_value.map(|q| q.0), Some("15".to_string()));
    // The rate of young counters reads low at first (extrapolation stops at zero): the HPA may
    // take steps on the way, each upstream's ⌈ratio × ready pods⌉.
    let messages = c.event_messages("SuccessfulRescale").await;
    let want = format!("New size: 6; reason: pods metric {expr} above target");
    assert!(messages.contains(&want), "{messages:?}");
    c.stop().await;
}
