//! The sentences an HPA sync records in the causal journal: what each metric proposed and how
//! it compares with the tolerance, how the recommendation was stabilized and limited, and the
//! rescale that follows.
//!
//! Upstream: `horizontal.go` (`reconcileAutoscaler`, `computeReplicasForMetrics`,
//! `normalizeDesiredReplicas`, `normalizeDesiredReplicasWithBehaviors`) and
//! `replica_calculator.go` (`GetResourceReplicas`). Upstream logs the proposal at `-v=4`
//! ("proposing N desired replicas") without the ratio it came from.
//!
//! The message functions take plain values and are tested by their exact sentences. The
//! functions over the sync's values recompute nothing the sync did not: the usage ratio is the
//! status's utilization over the spec's target (upstream's first ratio), and the stabilized
//! recommendation comes from running this sync's stabilization on a copy of the history.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, MetricSpec, MetricStatus, MetricTarget, MetricValueStatus,
};

use super::horizontal::MetricsProposal;
use super::normalize::{
    NormalizationArg, Normalized, ScaleHistory, normalize_desired_replicas,
    normalize_desired_replicas_with_behaviors, stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
};

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// `computeReplicasForMetrics`: each metric's comparison, then the proposal.
pub fn proposal(metrics: &[String], replicas: i32, largest_of: Option<&str>) -> Decision {
    let largest = largest_of.map_or(String::new(), |m| format!(", the largest proposal ({m})"));
    decision(
        "computeReplicasForMetrics",
        format!("{}: desired {replicas}{largest}", metrics.join("; ")),
    )
}

/// `GetResourceReplicas`' comparison: the average utilization against the target.
pub fn utilization(resource: &str, current: i32, target: i32, tolerance: f64) -> String {
    let ratio = f64::from(current) / f64::from(target);
    let side = if (1.0 - ratio).abs() <= tolerance {
        "within"
    } else {
        "outside"
    };
    format!(
        "{resource} utilization {current}% / target {target}% = usageRatio {ratio:.2}, {side} tolerance {tolerance}"
    )
}

/// Any other metric's comparison: its current value against its target.
pub fn value(metric: &str, current: &str, target: &str) -> String {
    format!("{metric} {current} / target {target}")
}

/// How a recommendation was stabilized, and the limit applied after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalization {
    /// `normalizeDesiredReplicas` or `normalizeDesiredReplicasWithBehaviors`.
    pub function: &'static str,
    /// The recommendation of the metrics.
    pub recommendation: i32,
    /// What stabilized it (`scale-down stabilization window 300s: highest recommendation`).
    pub stabilization: String,
    /// The stabilized recommendation.
    pub stabilized: i32,
    /// What limited it (`within the limits` when nothing did).
    pub limit: String,
    /// The replicas wanted.
    pub replicas: i32,
}

/// The normalization, then the rescale it leads to (`target`: `Deployment web`) or `keep`.
pub fn normalized(n: &Normalization, current: i32, target: &str, reason: &str) -> Decision {
    let outcome = rescale(target, current, n.replicas, reason);
    decision(
        n.function,
        format!(
            "recommendation {}; {} {}; {}: {outcome}",
            n.recommendation, n.stabilization, n.stabilized, n.limit
        ),
    )
}

/// `reconcileAutoscaler` outside `minReplicas`..`maxReplicas`: straight to the bound.
pub fn out_of_range(current: i32, bound: &str, replicas: i32, target: &str, reason: &str) -> Decision {
    decision(
        "reconcileAutoscaler",
        format!(
            "current replicas {current} outside {bound} {replicas}: {}",
            rescale(target, current, replicas, reason)
        ),
    )
}

fn rescale(target: &str, current: i32, replicas: i32, reason: &str) -> String {
    if replicas == current {
        return format!("keep {current}");
    }
    let reason = match reason {
        "" => String::new(),
        r => format!(" (reason: {r})"),
    };
    format!("scaling {target} {current} → {replicas}{reason}")
}

/// A policy list as `Pods 4 per 60s, Percent 100 per 15s (selectPolicy Max)`.
pub fn policies(rules: &HPAScalingRules) -> String {
    let list: Vec<String> = rules
        .policies
        .iter()
        .flatten()
        .map(|p| format!("{} {} per {}s", p.type_, p.value, p.period_seconds))
        .collect();
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    format!("{} (selectPolicy {select})", list.join(", "))
}

// ---------------------------------------------------------------------------
// From the sync's values
// ---------------------------------------------------------------------------

/// The `computeReplicasForMetrics` decision of `proposal` for `hpa`.
pub fn metrics(hpa: &HorizontalPodAutoscaler, p: &MetricsProposal, tolerance: f64) -> Decision {
    let specs = hpa
        .spec
        .as_ref()
        .and_then(|s| s.metrics.as_deref())
        .unwrap_or_default();
    let clauses: Vec<String> = specs
        .iter()
        .zip(&p.statuses)
        .filter_map(|(spec, status)| comparison(spec, status, tolerance))
        .collect();
    let largest = (specs.len() > 1).then_some(p.metric.as_str());
    proposal(&clauses, p.replicas, largest)
}

/// One metric's comparison (`None` when it produced no status).
fn comparison(spec: &MetricSpec, status: &MetricStatus, tolerance: f64) -> Option<String> {
    let (name, target, current) = match spec.type_.as_str() {
        "Resource" => {
            let s = spec.resource.as_ref()?;
            let current = &status.resource.as_ref()?.current;
            if let (Some(t), Some(c)) = (s.target.average_utilization, current.average_utilization) {
                return Some(utilization(&s.name, c, t, tolerance));
            }
            (s.name.clone(), &s.target, current)
        }
        "Pods" => {
            let s = spec.pods.as_ref()?;
            let name = format!("pods metric {}", s.metric.name);
            (name, &s.target, &status.pods.as_ref()?.current)
        }
        "Object" => {
            let s = spec.object.as_ref()?;
            let name = format!("{} metric {}", s.described_object.kind, s.metric.name);
            (name, &s.target, &status.object.as_ref()?.current)
        }
        "External" => {
            let s = spec.external.as_ref()?;
            let name = format!("external metric {}", s.metric.name);
            (name, &s.target, &status.external.as_ref()?.current)
        }
        _ => return None,
    };
    Some(value(&name, &current_text(current)?, &target_text(target)?))
}

fn current_text(v: &MetricValueStatus) -> Option<String> {
    v.average_value
        .as_ref()
        .map(|q| format!("{} average", q.0))
        .or_else(|| v.value.as_ref().map(|q| q.0.clone()))
}

fn target_text(t: &MetricTarget) -> Option<String> {
    t.average_value
        .as_ref()
        .map(|q| format!("{} average", q.0))
        .or_else(|| t.value.as_ref().map(|q| q.0.clone()))
}

/// `normalizeDesiredReplicas` (no `behavior`), replayed on a copy of `history` as it was
/// before this sync's normalization.
pub fn normalization(
    history: &ScaleHistory,
    current: i32,
    desired: i32,
    (min, max): (i32, i32),
    window: i32,
    now: Timestamp,
) -> Normalization {
    let stabilized = stabilize_recommendation(&mut history.clone(), desired, window, now);
    let n = normalize_desired_replicas(&mut history.clone(), current, desired, min, max, window, now);
    let limit = limit_text(&n, stabilized, current, (min, max), None);
    Normalization {
        function: "normalizeDesiredReplicas",
        recommendation: desired,
        stabilization: format!("scale-down stabilization window {window}s: highest recommendation"),
        stabilized,
        limit,
        replicas: n.replicas,
    }
}

/// `normalizeDesiredReplicasWithBehaviors`, replayed on a copy of `history` as it was before
/// this sync's normalization.
pub fn normalization_with_behaviors(
    history: &ScaleHistory,
    arg: &NormalizationArg<'_>,
    now: Timestamp,
) -> Normalization {
    let (stabilized, _, _) = stabilize_recommendation_with_behaviors(&mut history.clone(), arg, now);
    let n = normalize_desired_replicas_with_behaviors(&mut history.clone(), arg, now);
    let bounds = (arg.min_replicas, arg.max_replicas);
    let rules = (arg.scale_up_behavior, arg.scale_down_behavior);
    let limit = limit_text(&n, stabilized, arg.current_replicas, bounds, Some(rules));
    let window = |r: &HPAScalingRules| r.stabilization_window_seconds.unwrap_or(0);
    Normalization {
        function: "normalizeDesiredReplicasWithBehaviors",
        recommendation: arg.desired_replicas,
        stabilization: format!(
            "stabilization windows scaleUp {}s, scaleDown {}s:",
            window(arg.scale_up_behavior),
            window(arg.scale_down_behavior)
        ),
        stabilized,
        limit,
        replicas: n.replicas,
    }
}

/// What limited the stabilized recommendation, by the `ScalingLimited` reason.
fn limit_text(
    n: &Normalized,
    stabilized: i32,
    current: i32,
    (min, max): (i32, i32),
    rules: Option<(&HPAScalingRules, &HPAScalingRules)>,
) -> String {
    let (limited, reason, _) = n.scaling_limited;
    let change = format!("{stabilized} → {}", n.replicas);
    if !limited {
        return format!("within minReplicas {min}, maxReplicas {max}");
    }
    match (reason, rules) {
        ("ScaleUpLimit", Some((up, _))) => {
            format!("behavior scaleUp policies {} limit {change}", policies(up))
        }
        ("ScaleDownLimit", Some((_, down))) => {
            format!("behavior scaleDown policies {} limit {change}", policies(down))
        }
        ("ScaleUpLimit", None) => format!("scale-up limit max(2 × {current}, 4) limits {change}"),
        ("TooManyReplicas", _) => format!("maxReplicas {max} limits {change}"),
        ("TooFewReplicas", _) => format!("minReplicas {min} limits {change}"),
        (other, _) => format!("{other} limits {change}"),
    }
}
