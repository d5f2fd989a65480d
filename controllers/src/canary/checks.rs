//! The metric checks of one analysis step: each `analysis.metrics` entry as
//! a PromQL query, its value, and whether it lies in range. Pure given a
//! [`Query`] (no clock: the instant is a parameter).
//!
//! Flagger: `pkg/controller/scheduler_metrics.go` (`runBuiltinMetricChecks`,
//! `runMetricChecks`: the messages), `pkg/metrics/observers/` (the built-in
//! queries), `pkg/metrics/providers/prometheus.go` (`RunQuery`: the first
//! sample's value; none is "no values found").
//!
//! The built-in metrics read the series the traffic simulation writes
//! ([`sim_metrics::names`]) for the `-canary` Service:
//!
//! ```text
//! request-success-rate  sum(rate(http_requests_total{namespace="NS",service="SVC",code!~"5.."}[I]))
//!                        / sum(rate(http_requests_total{namespace="NS",service="SVC"}[I])) * 100
//! request-duration      histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{
//!                        namespace="NS",service="SVC"}[I])) by (le)) * 1000          (ms)
//! ```
//!
//! A custom metric's `query` gets `{{ namespace }}`, `{{ target }}`,
//! `{{ service }}` and `{{ interval }}` substituted (the canary's Service
//! and Deployment; for the primary side of a relative check, the primary's).
//! A relative check (`relativeThresholdRange`) runs the same query against
//! the primary and compares `canary − primary` with the range.

use std::time::SystemTime;

use sim_metrics::names::{HTTP_REQUEST_DURATION_SECONDS, HTTP_REQUESTS_TOTAL};
use sim_metrics::{Query, Value};

use super::types::{Canary, CanaryMetric, ThresholdRange};

/// The built-in success rate (percent of answers that are not 5xx).
pub const REQUEST_SUCCESS_RATE: &str = "request-success-rate";
/// The built-in p99 latency in milliseconds.
pub const REQUEST_DURATION: &str = "request-duration";
/// A metric's range vector when it sets no `interval`.
pub const DEFAULT_METRIC_INTERVAL: &str = "1m";

/// What one metric check found.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckOutcome {
    /// In range.
    Passed {
        /// The canary's value (the difference, for a relative check).
        value: f64,
    },
    /// Out of range: a failed check.
    Failed {
        /// The value out of range.
        value: f64,
        /// The event message (names the metric and the value).
        message: String,
    },
    /// The query returned nothing (no traffic scraped yet): the step halts.
    NoValues {
        /// The event message.
        message: String,
    },
    /// The query failed (a bad custom query, a metric without one): a failed check.
    Error {
        /// The event message.
        message: String,
    },
}

/// One metric's check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The metric's name.
    pub metric: String,
    /// What it found.
    pub outcome: CheckOutcome,
}

/// The names a check substitutes into its queries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subjects {
    /// `<canary>.<namespace>`, for the messages.
    pub id: String,
    /// The namespace.
    pub namespace: String,
    /// The target Deployment (the canary's workload).
    pub target: String,
    /// The primary Deployment.
    pub primary: String,
    /// The `-canary` Service.
    pub canary_service: String,
    /// The `-primary` Service.
    pub primary_service: String,
}

/// Which side a query measures.
#[derive(Clone, Copy)]
enum Side {
    Canary,
    Primary,
}

/// The query of `metric` for one side, or `None` for a metric that is neither built in nor has a query.
pub fn metric_query(metric: &CanaryMetric, s: &Subjects, primary: bool) -> Option<String> {
    let side = if primary { Side::Primary } else { Side::Canary };
    query_for(metric, s, side)
}

fn query_for(metric: &CanaryMetric, s: &Subjects, side: Side) -> Option<String> {
    let interval = metric
        .interval
        .as_deref()
        .filter(|i| !i.is_empty())
        .unwrap_or(DEFAULT_METRIC_INTERVAL);
    let (service, workload) = match side {
        Side::Canary => (&s.canary_service, &s.target),
        Side::Primary => (&s.primary_service, &s.primary),
    };
    let ns = &s.namespace;
    if let Some(q) = metric.query.as_deref().filter(|q| !q.trim().is_empty()) {
        return Some(render(q, ns, workload, service, interval));
    }
    let sel = format!(r#"namespace="{ns}",service="{service}""#);
    match metric.name.as_str() {
        REQUEST_SUCCESS_RATE => Some(format!(
            r#"sum(rate({HTTP_REQUESTS_TOTAL}{{{sel},code!~"5.."}}[{interval}])) / sum(rate({HTTP_REQUESTS_TOTAL}{{{sel}}}[{interval}])) * 100"#
        )),
        REQUEST_DURATION => Some(format!(
            r#"histogram_quantile(0.99, sum(rate({HTTP_REQUEST_DURATION_SECONDS}_bucket{{{sel}}}[{interval}])) by (le)) * 1000"#
        )),
        _ => None,
    }
}

/// Substitutes Flagger's template variables (`{{ namespace }}`, with or without the spaces).
pub fn render(query: &str, namespace: &str, target: &str, service: &str, interval: &str) -> String {
    let mut out = query.to_string();
    for (var, value) in [
        ("namespace", namespace),
        ("target", target),
        ("service", service),
        ("interval", interval),
    ] {
        out = out
            .replace(&format!("{{{{ {var} }}}}"), value)
            .replace(&format!("{{{{{var}}}}}"), value);
    }
    out
}

/// A query result as one number (Flagger's `RunQuery`): a scalar, or the
/// first sample of a vector; `None` when there is none or it is NaN.
pub fn single_value(value: &Value) -> Option<f64> {
    let v = match value {
        Value::Scalar(v) => *v,
        Value::Vector(samples) => samples.first()?.value,
        Value::Matrix(_) => return None,
    };
    (!v.is_nan()).then_some(v)
}

/// Runs every metric of `canary`'s analysis at `at`.
pub fn run_checks(
    canary: &Canary,
    subjects: &Subjects,
    query: &dyn Query,
    at: SystemTime,
) -> Vec<CheckResult> {
    canary
        .spec
        .analysis
        .metrics
        .iter()
        .map(|m| CheckResult {
            metric: m.name.clone(),
            outcome: check_metric(m, subjects, query, at),
        })
        .collect()
}

/// One metric: its absolute range, then its relative one.
pub fn check_metric(metric: &CanaryMetric, s: &Subjects, query: &dyn Query, at: SystemTime) -> CheckOutcome {
    let name = &metric.name;
    let canary = match measure(metric, s, Side::Canary, query, at) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if let Some(range) = &metric.threshold_range
        && let Some(message) = out_of_range(range, canary, &format!("Halt {} advancement {name}", s.id))
    {
        return CheckOutcome::Failed {
            value: canary,
            message,
        };
    }
    let Some(range) = &metric.relative_threshold_range else {
        return CheckOutcome::Passed { value: canary };
    };
    let primary = match measure(metric, s, Side::Primary, query, at) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    let delta = canary - primary;
    let what = format!("Halt {} advancement {name} canary − primary", s.id);
    match out_of_range(range, delta, &what) {
        Some(message) => CheckOutcome::Failed {
            value: delta,
            message: format!("{message} (canary {canary:.2}, primary {primary:.2})"),
        },
        None => CheckOutcome::Passed { value: delta },
    }
}

/// The value of `metric` on one side, or the outcome that stops the check.
fn measure(
    metric: &CanaryMetric,
    s: &Subjects,
    side: Side,
    query: &dyn Query,
    at: SystemTime,
) -> Result<f64, CheckOutcome> {
    let name = &metric.name;
    let Some(expr) = query_for(metric, s, side) else {
        return Err(CheckOutcome::Error {
            message: format!("Metric {name} is not built in and has no query"),
        });
    };
    let value = query.instant(&expr, at).map_err(|e| CheckOutcome::Error {
        message: format!("Metric query failed for {name}: {e}"),
    })?;
    single_value(&value).ok_or_else(|| {
        let workload = match side {
            Side::Canary => &s.target,
            Side::Primary => &s.primary,
        };
        CheckOutcome::NoValues {
            message: format!(
                "Halt advancement no values found for metric {name} probably {workload}.{} is not receiving traffic",
                s.namespace
            ),
        }
    })
}

/// The message when `value` is outside `range`: `<what> 78.52 < 99`.
fn out_of_range(range: &ThresholdRange, value: f64, what: &str) -> Option<String> {
    if let Some(min) = range.min
        && value < min
    {
        return Some(format!("{what} {value:.2} < {min}"));
    }
    if let Some(max) = range.max
        && value > max
    {
        return Some(format!("{what} {value:.2} > {max}"));
    }
    None
}
