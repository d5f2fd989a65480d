//! The HPA's metrics client: per-pod resource and custom metrics, object and
//! external metrics, read from the simulated world's time-series store in PromQL.
//!
//! Upstream: `pkg/controller/podautoscaler/metrics/interfaces.go` (`MetricsClient`,
//! `PodMetric`, `PodMetricsInfo`), `rest_metrics_client.go` (the metrics.k8s.io,
//! custom.metrics.k8s.io and external.metrics.k8s.io clients, their error messages) and
//! `utilization.go` (`GetResourceUtilizationRatio`, `GetMetricUsageRatio`).
//!
//! Where upstream asks three aggregated APIs (metrics-server, a custom-metrics adapter, an
//! external-metrics adapter), [`PromMetricsClient`] asks one [`sim_metrics::Query`], the way the
//! Prometheus adapter answers all three. The mapping, per metric source:
//!
//! | source | PromQL (evaluated at the sync's `now`) | read as |
//! | --- | --- | --- |
//! | `Resource` `cpu` | `sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="NS"}[1m]))` | cores × 1000 = millicores per pod; window 1m |
//! | `Resource` other | (not simulated) | error: the metric is unavailable |
//! | `Pods` `NAME` | `sum by (pod) (NAME{namespace="NS",<metric selector>})` | value per pod (label `pod`) |
//! | `Object` `NAME` on `KIND/OBJ` | `sum(NAME{namespace="NS",<kind in lower case>="OBJ",<metric selector>})` | one value |
//! | `External` `NAME` | `sum(NAME{<metric selector>})` | one value |
//!
//! A metric `NAME` that is not a plain metric name (it has a `(`, a space, a `[` ...) is taken as
//! a whole PromQL expression instead, used as written: `sum(rate(http_requests_total{service="web"}[1m]))`
//! as an External metric is the request rate of `web`. Only pods that match the target's
//! selector count (as the metrics APIs filter by label selector); values are read in
//! thousandths, as upstream's `MilliValue`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::labels::Selector;
use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use sim_metrics::{Query, Value};

use crate::runtime::informer::{NAMESPACE_INDEX, Store};

/// The window of the resource metrics (the `[1m]` of the rate).
pub const RESOURCE_METRIC_WINDOW: Duration = Duration::from_secs(60);

/// One pod's metric value (upstream `PodMetric`): in thousandths, with when it was measured
/// and over what window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodMetric {
    /// When it was measured.
    pub timestamp: Timestamp,
    /// Over what window (resource metrics: a rate over one minute).
    pub window: Duration,
    /// The value, in thousandths (millicores for cpu).
    pub value: i64,
}

/// Metric values by pod name (upstream `PodMetricsInfo`).
pub type PodMetricsInfo = BTreeMap<String, PodMetric>;

/// What the replica calculator asks for (upstream `MetricsClient`). Errors are the messages
/// upstream's clients give.
pub trait MetricsClient {
    /// Upstream `GetResourceMetric`: usage of `resource` by each pod of `namespace` matching
    /// `selector`, and when it was measured.
    fn get_resource_metric(
        &self,
        resource: &str,
        namespace: &str,
        selector: &Selector,
    ) -> Result<(PodMetricsInfo, Timestamp), String>;

    /// Upstream `GetRawMetric`: a custom metric of each pod matching `selector`.
    fn get_raw_metric(
        &self,
        metric_name: &str,
        namespace: &str,
        selector: &Selector,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(PodMetricsInfo, Timestamp), String>;

    /// Upstream `GetObjectMetric`: a custom metric of one object.
    fn get_object_metric(
        &self,
        metric_name: &str,
        namespace: &str,
        object: &CrossVersionObjectReference,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(i64, Timestamp), String>;

    /// Upstream `GetExternalMetric`: the values of an external metric.
    fn get_external_metric(
        &self,
        metric_name: &str,
        namespace: &str,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(Vec<i64>, Timestamp), String>;
}

/// Upstream `GetResourceUtilizationRatio`: the ratio of the pods' total usage to their total
/// request against the target, the utilization in percent (truncated, as upstream's integer
/// arithmetic), and the average raw usage. Metrics of pods without a request are skipped.
pub fn get_resource_utilization_ratio(
    metrics: &PodMetricsInfo,
    requests: &BTreeMap<String, i64>,
    target_utilization: i32,
) -> Result<(f64, i32, i64), String> {
    let (mut metrics_total, mut requests_total, mut entries) = (0i64, 0i64, 0i64);
    for (pod, metric) in metrics {
        let Some(request) = requests.get(pod) else {
            continue;
        };
        metrics_total = metrics_total.saturating_add(metric.value);
        requests_total = requests_total.saturating_add(*request);
        entries += 1;
    }
    if requests_total == 0 {
        return Err("no metrics returned matched known pods".to_string());
    }
    let utilization = i32::try_from(metrics_total.saturating_mul(100) / requests_total).unwrap_or(i32::MAX);
    let ratio = f64::from(utilization) / f64::from(target_utilization);
    Ok((ratio, utilization, metrics_total / entries))
}

/// Upstream `GetMetricUsageRatio`: the average value against the target, and the average.
pub fn get_metric_usage_ratio(metrics: &PodMetricsInfo, target_usage: i64) -> (f64, i64) {
    let total = metrics.values().fold(0i64, |t, m| t.saturating_add(m.value));
    let count = i64::try_from(metrics.len()).unwrap_or(i64::MAX).max(1);
    let usage = total / count;
    (usage as f64 / target_usage as f64, usage)
}

// ---------------------------------------------------------------------------
// The queries (pure)
// ---------------------------------------------------------------------------

/// The cpu usage query of a namespace.
pub fn resource_cpu_query(namespace: &str) -> String {
    format!(
        "sum by (pod) (rate({}{{namespace=\"{}\"}}[1m]))",
        sim_metrics::names::CONTAINER_CPU_USAGE_SECONDS_TOTAL,
        escape(namespace)
    )
}

/// The query of a Pods metric.
pub fn pods_metric_query(name: &str, namespace: &str, metric_selector: Option<&LabelSelector>) -> String {
    if !is_metric_name(name) {
        return name.to_string();
    }
    let mut matchers = vec![format!("namespace=\"{}\"", escape(namespace))];
    matchers.extend(selector_matchers(metric_selector));
    format!("sum by (pod) ({name}{{{}}})", matchers.join(","))
}

/// The query of an Object metric.
pub fn object_metric_query(
    name: &str,
    namespace: &str,
    object: &CrossVersionObjectReference,
    metric_selector: Option<&LabelSelector>,
) -> String {
    if !is_metric_name(name) {
        return name.to_string();
    }
    let mut matchers = vec![format!("namespace=\"{}\"", escape(namespace))];
    let label = object.kind.to_ascii_lowercase();
    if is_metric_name(&label) {
        matchers.push(format!("{label}=\"{}\"", escape(&object.name)));
    }
    matchers.extend(selector_matchers(metric_selector));
    format!("sum({name}{{{}}})", matchers.join(","))
}

/// The query of an External metric.
pub fn external_metric_query(name: &str, metric_selector: Option<&LabelSelector>) -> String {
    if !is_metric_name(name) {
        return name.to_string();
    }
    format!("sum({name}{{{}}})", selector_matchers(metric_selector).join(","))
}

/// Whether `s` is a plain metric (or label) name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// A label value inside a PromQL string literal.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A regex alternative of literal values (`a|b`), for `In` / `NotIn`.
fn alternatives(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| escape(&regex_literal(v))).collect();
    quoted.join("|")
}

/// A value as a regex matching exactly it.
fn regex_literal(v: &str) -> String {
    let mut out = String::new();
    for c in v.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A `metav1.LabelSelector` as PromQL label matchers: `matchLabels` as `=`, `In` / `NotIn`
/// as `=~` / `!~` of the alternatives, `Exists` / `DoesNotExist` as `!=""` / `=""`.
pub fn selector_matchers(selector: Option<&LabelSelector>) -> Vec<String> {
    let Some(selector) = selector else {
        return Vec::new();
    };
    let mut out: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default();
        out.push(match e.operator.as_str() {
            "In" => format!("{}=~\"{}\"", e.key, alternatives(&values)),
            "NotIn" => format!("{}!~\"{}\"", e.key, alternatives(&values)),
            "Exists" => format!("{}!=\"\"", e.key),
            _ => format!("{}=\"\"", e.key),
        });
    }
    out
}

/// A sample value in thousandths, rounded to the nearest (NaN and infinities: none).
fn milli(v: f64) -> Option<i64> {
    let m = (v * 1000.0).round();
    (m.is_finite() && m.abs() < 9.0e18).then_some(m as i64)
}

// ---------------------------------------------------------------------------
// The client over PromQL
// ---------------------------------------------------------------------------

/// [`MetricsClient`] over a PromQL [`Query`], evaluated at one instant (a sync's `now`).
pub struct PromMetricsClient<'a> {
    query: &'a Arc<dyn Query>,
    pods: &'a Store<Pod>,
    at: Timestamp,
}

impl<'a> PromMetricsClient<'a> {
    /// Queries evaluated at `at`; `pods` tells which pods a selector matches.
    pub fn new(query: &'a Arc<dyn Query>, pods: &'a Store<Pod>, at: Timestamp) -> Self {
        PromMetricsClient { query, pods, at }
    }

    fn instant(&self, expr: &str) -> Result<Value, String> {
        let at = SystemTime::UNIX_EPOCH
            + Duration::from_millis(u64::try_from(self.at.as_millisecond()).unwrap_or(0));
        self.query.instant(expr, at).map_err(|e| e.to_string())
    }

    /// Per-pod values of a query, keeping the pods of `namespace` that `selector` matches.
    fn per_pod(&self, expr: &str, namespace: &str, selector: &Selector) -> Result<PodMetricsInfo, String> {
        let matching: std::collections::BTreeSet<String> = self
            .pods
            .by_index(NAMESPACE_INDEX, namespace)
            .iter()
            .filter(|p| selector.matches(&p.metadata.labels.as_ref()))
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        let mut out = PodMetricsInfo::new();
        if let Value::Vector(samples) = self.instant(expr)? {
            for s in samples {
                let Some(pod) = s.labels.get("pod") else { continue };
                let Some(value) = milli(s.value) else { continue };
                if matching.contains(pod) {
                    out.insert(
                        pod.clone(),
                        PodMetric {
                            timestamp: self.at,
                            window: RESOURCE_METRIC_WINDOW,
                            value,
                        },
                    );
                }
            }
        }
        Ok(out)
    }

    /// The values of a query: one per sample, or the scalar.
    fn values(&self, expr: &str) -> Result<Vec<i64>, String> {
        Ok(match self.instant(expr)? {
            Value::Scalar(v) => milli(v).into_iter().collect(),
            Value::Vector(samples) => samples.iter().filter_map(|s| milli(s.value)).collect(),
            Value::Matrix(_) => Vec::new(),
        })
    }
}

impl MetricsClient for PromMetricsClient<'_> {
    fn get_resource_metric(
        &self,
        resource: &str,
        namespace: &str,
        selector: &Selector,
    ) -> Result<(PodMetricsInfo, Timestamp), String> {
        if resource != "cpu" {
            return Err(format!(
                "unable to fetch metrics from resource metrics API: the simulation measures cpu only, not {resource}"
            ));
        }
        let metrics = self
            .per_pod(&resource_cpu_query(namespace), namespace, selector)
            .map_err(|e| format!("unable to fetch metrics from resource metrics API: {e}"))?;
        if metrics.is_empty() {
            return Err("no metrics returned from resource metrics API".to_string());
        }
        Ok((metrics, self.at))
    }

    fn get_raw_metric(
        &self,
        metric_name: &str,
        namespace: &str,
        selector: &Selector,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(PodMetricsInfo, Timestamp), String> {
        let expr = pods_metric_query(metric_name, namespace, metric_selector);
        let metrics = self
            .per_pod(&expr, namespace, selector)
            .map_err(|e| format!("unable to fetch metrics from custom metrics API: {e}"))?;
        if metrics.is_empty() {
            return Err("no metrics returned from custom metrics API".to_string());
        }
        Ok((metrics, self.at))
    }

    fn get_object_metric(
        &self,
        metric_name: &str,
        namespace: &str,
        object: &CrossVersionObjectReference,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(i64, Timestamp), String> {
        let expr = object_metric_query(metric_name, namespace, object, metric_selector);
        let values = self
            .values(&expr)
            .map_err(|e| format!("unable to fetch metrics from custom metrics API: {e}"))?;
        match values.as_slice() {
            [v] => Ok((*v, self.at)),
            [] => Err("no metrics returned from custom metrics API".to_string()),
            _ => Err(format!("expected exactly one metric value, got {}", values.len())),
        }
    }

    fn get_external_metric(
        &self,
        metric_name: &str,
        _namespace: &str,
        metric_selector: Option<&LabelSelector>,
    ) -> Result<(Vec<i64>, Timestamp), String> {
        let expr = external_metric_query(metric_name, metric_selector);
        let values = self
            .values(&expr)
            .map_err(|e| format!("unable to fetch metrics from external metrics API: {e}"))?;
        if values.is_empty() {
            return Err("no metrics returned from external metrics API".to_string());
        }
        Ok((values, self.at))
    }
}
