//! Pure: how many replicas a metric asks for.
//!
//! Upstream: `pkg/controller/podautoscaler/replica_calculator.go` (`ReplicaCalculator`,
//! `GetResourceReplicas`, `GetRawResourceReplicas`, `GetMetricReplicas`,
//! `calcPlainMetricReplicas`, `GetObjectMetricReplicas`, `GetObjectPerPodMetricReplicas`,
//! `getUsageRatioReplicaCount`, `GetExternalMetricReplicas`, `GetExternalPerPodMetricReplicas`,
//! `groupPods`, `calculatePodRequests`, `removeMetricsForPods`).
//!
//! The arithmetic, with a worked example (target 50% cpu, 2 pods each requesting 100m):
//!
//! ```text
//! usage 150m + 150m            → utilization = 300 × 100 / 200 = 150 %  (integer division)
//! usage ratio = 150 / 50 = 3.0 → |1 − 3.0| > tolerance 0.1
//! desired = ⌈3.0 × 2 ready pods⌉ = 6
//! ```
//!
//! Pods whose numbers cannot be trusted are set aside first ([`group_pods`]): deleted and failed
//! pods are ignored; pending pods, and (for cpu) pods not yet Ready or within their first
//! `cpuInitializationPeriod` without a full metric window since they became Ready, are
//! *unready*; pods without a metric are *missing*. If any are missing or (on a scale-up)
//! unready, the ratio is computed again as if missing pods used 100% of their request on a
//! scale-down (0% on a scale-up) and unready pods 0%, and the replica count only changes when
//! that second ratio still points the same way: so a scale-up is never driven by pods that
//! have not started serving, and a scale-down never by pods that report nothing.
//!
//! Takes the metrics client as upstream does (a trait: the PromQL client, or a test's fake),
//! the pods as a slice (already the target's, read from the cache) and `now` as a parameter.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use apiserver::labels::Selector;
use apiserver::quantity::Quantity;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::metrics::{
    MetricsClient, PodMetric, PodMetricsInfo, get_metric_usage_ratio, get_resource_utilization_ratio,
};
use crate::controller_utils::pods::{pod_phase, pod_ready_condition};

/// Upstream `--horizontal-pod-autoscaler-tolerance`: changes of the usage ratio within 10% of 1.0
/// are not acted on.
pub const DEFAULT_TOLERANCE: f64 = 0.1;
/// Upstream `--horizontal-pod-autoscaler-cpu-initialization-period`.
pub const DEFAULT_CPU_INITIALIZATION_PERIOD: Duration = Duration::from_secs(5 * 60);
/// Upstream `--horizontal-pod-autoscaler-initial-readiness-delay`.
pub const DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS: Duration = Duration::from_secs(30);

/// The replica calculator (upstream `ReplicaCalculator`), with its settings.
#[derive(Clone, Copy, Debug)]
pub struct ReplicaCalculator {
    /// The usage ratio's dead band around 1.0.
    pub tolerance: f64,
    /// How long after a pod started its cpu samples may still be start-up noise.
    pub cpu_initialization_period: Duration,
    /// How long after a pod started a not-Ready status is taken as "never been ready".
    pub delay_of_initial_readiness_status: Duration,
}

impl Default for ReplicaCalculator {
    fn default() -> Self {
        ReplicaCalculator {
            tolerance: DEFAULT_TOLERANCE,
            cpu_initialization_period: DEFAULT_CPU_INITIALIZATION_PERIOD,
            delay_of_initial_readiness_status: DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS,
        }
    }
}

/// What [`ReplicaCalculator::get_resource_replicas`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceReplicas {
    /// The proposed replica count.
    pub replicas: i32,
    /// The current utilization, percent of request.
    pub utilization: i32,
    /// The current average usage per pod, in thousandths (millicores).
    pub raw_utilization: i64,
    /// When the metrics were measured.
    pub timestamp: Timestamp,
}

/// What the other `get_*_replicas` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricReplicas {
    /// The proposed replica count.
    pub replicas: i32,
    /// The current value (average per pod, or total), in thousandths.
    pub utilization: i64,
    /// When the metric was measured.
    pub timestamp: Timestamp,
}

/// The pods set aside by [`group_pods`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodGroups {
    /// Pods counted as ready.
    pub ready_pod_count: i64,
    /// Pending pods, and (cpu) pods not ready or still warming up.
    pub unready_pods: BTreeSet<String>,
    /// Running pods without a metric.
    pub missing_pods: BTreeSet<String>,
    /// Deleted and failed pods.
    pub ignored_pods: BTreeSet<String>,
}

fn ceil_i32(v: f64) -> i32 {
    let c = v.ceil();
    if c >= f64::from(i32::MAX) {
        i32::MAX
    } else if c <= f64::from(i32::MIN) {
        i32::MIN
    } else {
        c as i32
    }
}

fn len_i64<T>(s: &BTreeMap<String, T>) -> i64 {
    i64::try_from(s.len()).unwrap_or(i64::MAX)
}

impl ReplicaCalculator {
    fn within_tolerance(&self, ratio: f64) -> bool {
        (1.0 - ratio).abs() <= self.tolerance
    }

    /// Upstream `GetResourceReplicas`: the replicas that bring the pods' average utilization of
    /// `resource` (percent of request) to `target_utilization`.
    #[allow(clippy::too_many_arguments)] // upstream's parameters, plus the pods and `now`
    pub fn get_resource_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        pods: &[Arc<Pod>],
        now: Timestamp,
        current_replicas: i32,
        target_utilization: i32,
        resource: &str,
        namespace: &str,
        selector: &Selector,
    ) -> Result<ResourceReplicas, String> {
        let (mut metrics, timestamp) = metrics_client
            .get_resource_metric(resource, namespace, selector)
            .map_err(|e| format!("unable to get metrics for resource {resource}: {e}"))?;
        if pods.is_empty() {
            return Err("no pods returned by selector while calculating replica count".to_string());
        }
        let groups = self.group_pods(pods, &metrics, resource, now);
        remove_metrics_for_pods(&mut metrics, &groups.ignored_pods);
        remove_metrics_for_pods(&mut metrics, &groups.unready_pods);
        let requests = calculate_pod_requests(pods, resource)?;
        if metrics.is_empty() {
            return Err("did not receive metrics for targeted pods (pods might be unready)".to_string());
        }
        let (usage_ratio, utilization, raw_utilization) =
            get_resource_utilization_ratio(&metrics, &requests, target_utilization)?;
        let result = |replicas| ResourceReplicas {
            replicas,
            utilization,
            raw_utilization,
            timestamp,
        };

        let scale_up_with_unready = !groups.unready_pods.is_empty() && usage_ratio > 1.0;
        if !scale_up_with_unready && groups.missing_pods.is_empty() {
            if self.within_tolerance(usage_ratio) {
                return Ok(result(current_replicas));
            }
            return Ok(result(ceil_i32(usage_ratio * groups.ready_pod_count as f64)));
        }

        // A scale-down assumes the silent pods use all they asked for; a scale-up, nothing.
        for pod in &groups.missing_pods {
            let value = if usage_ratio < 1.0 {
                requests.get(pod).copied().unwrap_or(0)
            } else if usage_ratio > 1.0 {
                0
            } else {
                continue;
            };
            metrics.insert(
                pod.clone(),
                PodMetric {
                    value,
                    timestamp,
                    window: Duration::ZERO,
                },
            );
        }
        if scale_up_with_unready {
            for pod in &groups.unready_pods {
                metrics.insert(
                    pod.clone(),
                    PodMetric {
                        value: 0,
                        timestamp,
                        window: Duration::ZERO,
                    },
                );
            }
        }

        let (new_usage_ratio, _, _) =
            get_resource_utilization_ratio(&metrics, &requests, target_utilization)?;
        if self.within_tolerance(new_usage_ratio)
            || (usage_ratio < 1.0 && new_usage_ratio > 1.0)
            || (usage_ratio > 1.0 && new_usage_ratio < 1.0)
        {
            return Ok(result(current_replicas));
        }
        let new_replicas = ceil_i32(new_usage_ratio * len_i64(&metrics) as f64);
        if (new_usage_ratio < 1.0 && new_replicas > current_replicas)
            || (new_usage_ratio > 1.0 && new_replicas < current_replicas)
        {
            return Ok(result(current_replicas));
        }
        Ok(result(new_replicas))
    }

    /// Upstream `GetRawResourceReplicas`: the replicas that bring the pods' average usage of
    /// `resource` (thousandths) to `target_usage`.
    #[allow(clippy::too_many_arguments)] // upstream's parameters, plus the pods and `now`
    pub fn get_raw_resource_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        pods: &[Arc<Pod>],
        now: Timestamp,
        current_replicas: i32,
        target_usage: i64,
        resource: &str,
        namespace: &str,
        selector: &Selector,
    ) -> Result<MetricReplicas, String> {
        let (metrics, timestamp) = metrics_client
            .get_resource_metric(resource, namespace, selector)
            .map_err(|e| format!("unable to get metrics for resource {resource}: {e}"))?;
        let (replicas, utilization) =
            self.calc_plain_metric_replicas(metrics, pods, now, current_replicas, target_usage, resource)?;
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// Upstream `GetMetricReplicas`: the replicas that bring a per-pod custom metric's average
    /// to `target_usage` (thousandths).
    #[allow(clippy::too_many_arguments)] // upstream's parameters, plus the pods and `now`
    pub fn get_metric_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        pods: &[Arc<Pod>],
        now: Timestamp,
        current_replicas: i32,
        target_usage: i64,
        metric_name: &str,
        namespace: &str,
        selector: &Selector,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<MetricReplicas, String> {
        let (metrics, timestamp) = metrics_client
            .get_raw_metric(metric_name, namespace, selector, metric_selector)
            .map_err(|e| format!("unable to get metric {metric_name}: {e}"))?;
        let (replicas, utilization) =
            self.calc_plain_metric_replicas(metrics, pods, now, current_replicas, target_usage, "")?;
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// Upstream `calcPlainMetricReplicas`: as [`Self::get_resource_replicas`], for an average
    /// value rather than a percentage of request.
    fn calc_plain_metric_replicas(
        &self,
        mut metrics: PodMetricsInfo,
        pods: &[Arc<Pod>],
        now: Timestamp,
        current_replicas: i32,
        target_usage: i64,
        resource: &str,
    ) -> Result<(i32, i64), String> {
        if pods.is_empty() {
            return Err("no pods returned by selector while calculating replica count".to_string());
        }
        let groups = self.group_pods(pods, &metrics, resource, now);
        remove_metrics_for_pods(&mut metrics, &groups.ignored_pods);
        remove_metrics_for_pods(&mut metrics, &groups.unready_pods);
        if metrics.is_empty() {
            return Err("did not receive metrics for targeted pods (pods might be unready)".to_string());
        }
        let (usage_ratio, usage) = get_metric_usage_ratio(&metrics, target_usage);

        let scale_up_with_unready = !groups.unready_pods.is_empty() && usage_ratio > 1.0;
        if !scale_up_with_unready && groups.missing_pods.is_empty() {
            if self.within_tolerance(usage_ratio) {
                return Ok((current_replicas, usage));
            }
            return Ok((ceil_i32(usage_ratio * groups.ready_pod_count as f64), usage));
        }

        let zero = |value| PodMetric {
            value,
            timestamp: now,
            window: Duration::ZERO,
        };
        for pod in &groups.missing_pods {
            let value = if usage_ratio < 1.0 { target_usage } else { 0 };
            metrics.insert(pod.clone(), zero(value));
        }
        if scale_up_with_unready {
            for pod in &groups.unready_pods {
                metrics.insert(pod.clone(), zero(0));
            }
        }

        let (new_usage_ratio, _) = get_metric_usage_ratio(&metrics, target_usage);
        if self.within_tolerance(new_usage_ratio)
            || (usage_ratio < 1.0 && new_usage_ratio > 1.0)
            || (usage_ratio > 1.0 && new_usage_ratio < 1.0)
        {
            return Ok((current_replicas, usage));
        }
        let new_replicas = ceil_i32(new_usage_ratio * len_i64(&metrics) as f64);
        if (new_usage_ratio < 1.0 && new_replicas > current_replicas)
            || (new_usage_ratio > 1.0 && new_replicas < current_replicas)
        {
            return Ok((current_replicas, usage));
        }
        Ok((new_replicas, usage))
    }

    /// Upstream `GetObjectMetricReplicas`: the replicas that bring one object's metric to
    /// `target_value`, scaling the ready pods by the ratio.
    #[allow(clippy::too_many_arguments)] // upstream's parameters, plus the pods
    pub fn get_object_metric_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        pods: &[Arc<Pod>],
        current_replicas: i32,
        target_value: i64,
        metric_name: &str,
        namespace: &str,
        object: &CrossVersionObjectReference,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<MetricReplicas, String> {
        let (utilization, timestamp) = metrics_client
            .get_object_metric(metric_name, namespace, object, metric_selector)
            .map_err(|e| {
                format!(
                    "unable to get metric {metric_name}: {} on {} {namespace}/{e}",
                    object.kind, object.name
                )
            })?;
        let usage_ratio = utilization as f64 / target_value as f64;
        let replicas = self.get_usage_ratio_replica_count(pods, current_replicas, usage_ratio)?;
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// Upstream `getUsageRatioReplicaCount`: the ready pods scaled by `usage_ratio`; from zero
    /// replicas, the ratio rounded up.
    fn get_usage_ratio_replica_count(
        &self,
        pods: &[Arc<Pod>],
        current_replicas: i32,
        usage_ratio: f64,
    ) -> Result<i32, String> {
        if current_replicas == 0 {
            return Ok(ceil_i32(usage_ratio));
        }
        if self.within_tolerance(usage_ratio) {
            return Ok(current_replicas);
        }
        let ready = get_ready_pods_count(pods).map_err(|e| format!("unable to calculate ready pods: {e}"))?;
        Ok(ceil_i32(usage_ratio * ready as f64))
    }

    /// Upstream `GetObjectPerPodMetricReplicas`: the replicas that bring one object's metric,
    /// divided among the replicas, to `target_average` each.
    #[allow(clippy::too_many_arguments)] // upstream's parameters
    pub fn get_object_per_pod_metric_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        status_replicas: i32,
        target_average: i64,
        metric_name: &str,
        namespace: &str,
        object: &CrossVersionObjectReference,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<MetricReplicas, String> {
        let (total, timestamp) = metrics_client
            .get_object_metric(metric_name, namespace, object, metric_selector)
            .map_err(|e| {
                format!(
                    "unable to get metric {metric_name}: {} on {} {namespace}/{e}",
                    object.kind, object.name
                )
            })?;
        let (replicas, utilization) = self.per_pod_replicas(status_replicas, total, target_average);
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// The shared arithmetic of the per-pod Object and External metrics.
    fn per_pod_replicas(&self, status_replicas: i32, total: i64, target_average: i64) -> (i32, i64) {
        let mut replicas = status_replicas;
        let usage_ratio = total as f64 / (target_average as f64 * f64::from(status_replicas));
        if !self.within_tolerance(usage_ratio) {
            replicas = ceil_i32(total as f64 / target_average as f64);
        }
        let average = (total as f64 / f64::from(status_replicas)).ceil();
        let average = if average.is_finite() { average as i64 } else { 0 };
        (replicas, average)
    }

    /// Upstream `GetExternalMetricReplicas`: the replicas that bring an external metric's total
    /// to `target_value`, scaling the ready pods by the ratio.
    #[allow(clippy::too_many_arguments)] // upstream's parameters, plus the pods
    pub fn get_external_metric_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        pods: &[Arc<Pod>],
        current_replicas: i32,
        target_value: i64,
        metric_name: &str,
        namespace: &str,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<MetricReplicas, String> {
        let (values, timestamp) = metrics_client
            .get_external_metric(metric_name, namespace, metric_selector)
            .map_err(|e| format!("unable to get external metric {namespace}/{metric_name}: {e}"))?;
        let utilization = values.iter().fold(0i64, |t, v| t.saturating_add(*v));
        let usage_ratio = utilization as f64 / target_value as f64;
        let replicas = self.get_usage_ratio_replica_count(pods, current_replicas, usage_ratio)?;
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// Upstream `GetExternalPerPodMetricReplicas`: the replicas that bring an external metric's
    /// total, divided among the replicas, to `target_average` each.
    pub fn get_external_per_pod_metric_replicas(
        &self,
        metrics_client: &dyn MetricsClient,
        status_replicas: i32,
        target_average: i64,
        metric_name: &str,
        namespace: &str,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<MetricReplicas, String> {
        let (values, timestamp) = metrics_client
            .get_external_metric(metric_name, namespace, metric_selector)
            .map_err(|e| format!("unable to get external metric {namespace}/{metric_name}: {e}"))?;
        let total = values.iter().fold(0i64, |t, v| t.saturating_add(*v));
        let (replicas, utilization) = self.per_pod_replicas(status_replicas, total, target_average);
        Ok(MetricReplicas {
            replicas,
            utilization,
            timestamp,
        })
    }

    /// Upstream `groupPods`: which pods count, which are unready, missing or ignored.
    pub fn group_pods(
        &self,
        pods: &[Arc<Pod>],
        metrics: &PodMetricsInfo,
        resource: &str,
        now: Timestamp,
    ) -> PodGroups {
        let mut groups = PodGroups::default();
        for pod in pods {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let phase = pod_phase(pod);
            if pod.metadata.deletion_timestamp.is_some() || phase == "Failed" {
                groups.ignored_pods.insert(name);
                continue;
            }
            if phase == "Pending" {
                groups.unready_pods.insert(name);
                continue;
            }
            let Some(metric) = metrics.get(&name) else {
                groups.missing_pods.insert(name);
                continue;
            };
            if resource == "cpu" && self.cpu_unready(pod, metric, now) {
                groups.unready_pods.insert(name);
                continue;
            }
            groups.ready_pod_count += 1;
        }
        groups
    }

    /// Whether a pod's cpu sample is not to be trusted: no Ready condition or start time; within
    /// the initialization period, not Ready or no full window since it became Ready; after it,
    /// not Ready and never been Ready (its last transition within the initial readiness delay).
    fn cpu_unready(&self, pod: &Pod, metric: &PodMetric, now: Timestamp) -> bool {
        let condition = pod_ready_condition(pod);
        let start = pod
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0);
        let (Some(condition), Some(start)) = (condition, start) else {
            return true;
        };
        let transition = condition
            .last_transition_time
            .as_ref()
            .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
        let is_false = condition.status == "False";
        if add(start, self.cpu_initialization_period) > now {
            is_false || metric.timestamp < add(transition, metric.window)
        } else {
            is_false && add(start, self.delay_of_initial_readiness_status) > transition
        }
    }
}

/// `t + d`, saturating.
fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}

/// Upstream `getReadyPodsCount`: Running and Ready pods.
fn get_ready_pods_count(pods: &[Arc<Pod>]) -> Result<i64, String> {
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".to_string());
    }
    let ready = pods
        .iter()
        .filter(|p| pod_phase(p) == "Running" && crate::controller_utils::pods::is_pod_ready(p))
        .count();
    Ok(i64::try_from(ready).unwrap_or(i64::MAX))
}

/// Upstream `calculatePodRequests`: each pod's total request of `resource` (thousandths); a
/// container without one is an error.
pub fn calculate_pod_requests(pods: &[Arc<Pod>], resource: &str) -> Result<BTreeMap<String, i64>, String> {
    let mut requests = BTreeMap::new();
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let mut sum = 0i64;
        for container in pod.spec.iter().flat_map(|s| s.containers.iter()) {
            let request = container
                .resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get(resource))
                .and_then(|q| Quantity::parse(&q.0));
            let Some(request) = request else {
                return Err(format!(
                    "missing request for {resource} in container {} of Pod {name}",
                    container.name
                ));
            };
            sum = sum.saturating_add(i64::try_from(request.milli_value()).unwrap_or(i64::MAX));
        }
        requests.insert(name, sum);
    }
    Ok(requests)
}

/// Upstream `removeMetricsForPods`.
pub fn remove_metrics_for_pods(metrics: &mut PodMetricsInfo, pods: &BTreeSet<String>) {
    for pod in pods {
        metrics.remove(pod);
    }
}
