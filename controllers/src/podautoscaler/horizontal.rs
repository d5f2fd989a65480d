//! Pure: the replica count an HPA's metrics ask for, with the metric statuses, the
//! `ScalingActive` condition and the warning events of what could not be read.
//!
//! Upstream: `pkg/controller/podautoscaler/horizontal.go` (`computeReplicasForMetrics`,
//! `computeReplicasForMetric`, `computeStatusForObjectMetric`, `computeStatusForPodsMetric`,
//! `computeStatusForResourceMetric`, `computeStatusForExternalMetric`,
//! `getUnableComputeReplicaCountCondition`).
//!
//! ```text
//! scale.status.selector ""        → SelectorRequired event, ScalingActive False InvalidSelector
//! each metric spec → proposal (replicas, metric name, status) or an invalid metric
//! all invalid, or some invalid and the valid ones would scale down
//!                                 → ScalingActive False (first invalid metric's reason), error
//! otherwise                       → the largest proposal, ScalingActive True ValidMetricFound
//! ```
//!
//! Simplified: `ContainerResource` metrics are not simulated (the metric is invalid, reason
//! `FailedGetContainerResourceMetric`).

use std::sync::Arc;

use apiserver::labels::Selector;
use apiserver::quantity::Quantity as ApiQuantity;
use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    ExternalMetricStatus, HorizontalPodAutoscaler, MetricIdentifier, MetricSpec, MetricStatus,
    MetricValueStatus, ObjectMetricStatus, PodsMetricStatus, ResourceMetricStatus,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::metrics::MetricsClient;
use super::replica_calculator::ReplicaCalculator;
use super::status::{SCALING_ACTIVE, set_condition};
use crate::runtime::EventType;

/// A warning (or normal) event the sync is to record on the HPA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpaEvent {
    /// `Normal` or `Warning`.
    pub type_: EventType,
    /// Upstream's reason.
    pub reason: String,
    /// Upstream's message.
    pub message: String,
}

impl HpaEvent {
    /// A `Warning`.
    pub fn warning(reason: &str, message: impl Into<String>) -> Self {
        HpaEvent {
            type_: EventType::Warning,
            reason: reason.to_string(),
            message: message.into(),
        }
    }
}

/// The target's scale, as the `scale` subresource shows it (`autoscaling/v1` Scale).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleView {
    /// `spec.replicas`.
    pub spec_replicas: i32,
    /// `status.replicas`.
    pub status_replicas: i32,
    /// `status.selector`, in label-query syntax.
    pub selector: String,
}

/// What the metrics propose (`computeReplicasForMetrics`'s results).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsProposal {
    /// The largest proposal of the valid metrics.
    pub replicas: i32,
    /// The metric it came from, e.g. `cpu resource utilization (percentage of request)`.
    pub metric: String,
    /// One status per metric spec (empty where the metric was invalid).
    pub statuses: Vec<MetricStatus>,
    /// When that metric was measured.
    pub timestamp: Option<Timestamp>,
    /// Some metrics were invalid, yet scaling goes on with the others: the first error.
    pub partial_error: Option<String>,
}

/// Everything a metric computation reads.
pub struct MetricsContext<'a> {
    /// The calculator and its settings.
    pub calc: &'a ReplicaCalculator,
    /// The metrics client.
    pub client: &'a dyn MetricsClient,
    /// The pods of the HPA's namespace (filtered here by the scale's selector).
    pub namespace_pods: &'a [Arc<Pod>],
    /// The sync's instant.
    pub now: Timestamp,
}

/// A proposed condition for an invalid metric (upstream returns it from
/// `getUnableComputeReplicaCountCondition`, and records its event).
struct Invalid {
    reason: &'static str,
    error: String,
}

type Proposal = (i32, String, Option<Timestamp>);

/// A quantity of `milli` thousandths, as upstream's `resource.NewMilliQuantity(v, DecimalSI)` prints.
pub fn milli_quantity(milli: i64) -> Quantity {
    let q = ApiQuantity::parse(&format!("{milli}m")).unwrap_or(ApiQuantity::ZERO);
    Quantity(q.to_string())
}

/// A quantity's value in thousandths (upstream `MilliValue`).
fn milli_value(q: Option<&Quantity>) -> Option<i64> {
    q.and_then(|q| ApiQuantity::parse(&q.0))
        .map(|q| i64::try_from(q.milli_value()).unwrap_or(i64::MAX))
}

/// Upstream `computeReplicasForMetrics`. Sets `ScalingActive`; returns the error (and what
/// statuses it has) when no proposal can be acted on.
pub fn compute_replicas_for_metrics(
    hpa: &mut HorizontalPodAutoscaler,
    scale: &ScaleView,
    cx: &MetricsContext<'_>,
    events: &mut Vec<HpaEvent>,
) -> Result<MetricsProposal, (Vec<MetricStatus>, String)> {
    if scale.selector.is_empty() {
        let message = "selector is required";
        events.push(HpaEvent::warning("SelectorRequired", message));
        set_condition(
            hpa,
            SCALING_ACTIVE,
            false,
            "InvalidSelector",
            "the HPA target's scale is missing a selector",
            cx.now,
        );
        return Err((Vec::new(), message.to_string()));
    }
    let selector = match Selector::parse(&scale.selector) {
        Ok(s) => s,
        Err(e) => {
            let message =
                format!("couldn't convert selector into a corresponding internal selector object: {e}");
            events.push(HpaEvent::warning("InvalidSelector", message.clone()));
            set_condition(hpa, SCALING_ACTIVE, false, "InvalidSelector", &message, cx.now);
            return Err((Vec::new(), message));
        }
    };
    let pods: Vec<Arc<Pod>> = cx
        .namespace_pods
        .iter()
        .filter(|p| selector.matches(&p.metadata.labels.as_ref()))
        .cloned()
        .collect();
    let namespace = hpa.metadata.namespace.clone().unwrap_or_default();
    let specs = hpa
        .spec
        .as_ref()
        .and_then(|s| s.metrics.clone())
        .unwrap_or_default();

    let mut statuses = vec![MetricStatus::default(); specs.len()];
    let mut best: Option<Proposal> = None;
    let mut invalid_count = 0usize;
    let mut first_invalid: Option<Invalid> = None;
    for (i, spec) in specs.iter().enumerate() {
        let target = TargetOf {
            namespace: &namespace,
            selector: &selector,
            pods: &pods,
            scale,
        };
        match compute_replicas_for_metric(spec, &target, cx, &mut statuses[i]) {
            Ok(p) => {
                if best.as_ref().is_none_or(|b| b.0 == 0 || p.0 > b.0) {
                    best = Some(p);
                }
            }
            Err(invalid) => {
                events.push(HpaEvent::warning(invalid.reason, invalid.error.clone()));
                invalid_count += 1;
                if first_invalid.is_none() {
                    first_invalid = Some(invalid);
                }
            }
        }
    }
    let (replicas, metric, timestamp) = best.unwrap_or((0, String::new(), None));
    if let Some(invalid) = &first_invalid
        && (invalid_count >= specs.len() || replicas < scale.spec_replicas)
    {
        let message = format!(
            "the HPA was unable to compute the replica count: {}",
            invalid.error
        );
        set_condition(hpa, SCALING_ACTIVE, false, invalid.reason, &message, cx.now);
        let error = format!(
            "invalid metrics ({invalid_count} invalid out of {}), first error is: {}",
            specs.len(),
            invalid.error
        );
        return Err((statuses, error));
    }
    if specs.is_empty() {
        // Nothing to scale on (the API server defaults a cpu metric, so only a bypassed default).
        return Err((statuses, "invalid metrics (0 invalid out of 0)".to_string()));
    }
    let message = format!("the HPA was able to successfully calculate a replica count from {metric}");
    set_condition(hpa, SCALING_ACTIVE, true, "ValidMetricFound", &message, cx.now);
    Ok(MetricsProposal {
        replicas,
        metric,
        statuses,
        timestamp,
        partial_error: first_invalid.map(|i| {
            format!(
                "invalid metrics ({invalid_count} invalid out of {}), first error is: {}",
                specs.len(),
                i.error
            )
        }),
    })
}

/// What one metric's computation is about (the HPA's target).
struct TargetOf<'a> {
    namespace: &'a str,
    selector: &'a Selector,
    pods: &'a [Arc<Pod>],
    scale: &'a ScaleView,
}

/// Upstream `computeReplicasForMetric`: dispatches on the metric's type.
fn compute_replicas_for_metric(
    spec: &MetricSpec,
    t: &TargetOf<'_>,
    cx: &MetricsContext<'_>,
    status: &mut MetricStatus,
) -> Result<Proposal, Invalid> {
    match spec.type_.as_str() {
        "Object" => compute_status_for_object_metric(spec, t, cx, status),
        "Pods" => compute_status_for_pods_metric(spec, t, cx, status),
        "Resource" => compute_status_for_resource_metric(spec, t, cx, status),
        "External" => compute_status_for_external_metric(spec, t, cx, status),
        "ContainerResource" => Err(Invalid {
            reason: "FailedGetContainerResourceMetric",
            error: "container resource metrics are not simulated".to_string(),
        }),
        other => Err(Invalid {
            reason: "InvalidMetricSourceType",
            error: format!("unknown metric source type {other:?}"),
        }),
    }
}

fn identifier(name: &str, selector: Option<&LabelSelector>) -> MetricIdentifier {
    MetricIdentifier {
        name: name.to_string(),
        selector: selector.cloned(),
    }
}

/// Upstream `computeStatusForResourceMetric` (and `computeStatusForResourceMetricGeneric`).
fn compute_status_for_resource_metric(
    spec: &MetricSpec,
    t: &TargetOf<'_>,
    cx: &MetricsContext<'_>,
    status: &mut MetricStatus,
) -> Result<Proposal, Invalid> {
    let reason = "FailedGetResourceMetric";
    let Some(source) = spec.resource.as_ref() else {
        return Err(Invalid {
            reason,
            error: "invalid resource metric source: the resource field is not set".to_string(),
        });
    };
    let name = source.name.as_str();
    let current = t.scale.spec_replicas;
    if let Some(average) = milli_value(source.target.average_value.as_ref()) {
        let r = cx
            .calc
            .get_raw_resource_replicas(
                cx.client,
                t.pods,
                cx.now,
                current,
                average,
                name,
                t.namespace,
                t.selector,
            )
            .map_err(|e| Invalid {
                reason,
                error: format!("failed to get {name} usage: {e}"),
            })?;
        *status = MetricStatus {
            type_: "Resource".to_string(),
            resource: Some(ResourceMetricStatus {
                name: name.to_string(),
                current: MetricValueStatus {
                    average_value: Some(milli_quantity(r.utilization)),
                    ..Default::default()
                },
            }),
            ..Default::default()
        };
        return Ok((r.replicas, format!("{name} resource"), Some(r.timestamp)));
    }
    let Some(target_utilization) = source.target.average_utilization else {
        return Err(Invalid {
            reason,
            error: "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set".to_string(),
        });
    };
    let r = cx
        .calc
        .get_resource_replicas(
            cx.client,
            t.pods,
            cx.now,
            current,
            target_utilization,
            name,
            t.namespace,
            t.selector,
        )
        .map_err(|e| Invalid {
            reason,
            error: format!("failed to get {name} utilization: {e}"),
        })?;
    *status = MetricStatus {
        type_: "Resource".to_string(),
        resource: Some(ResourceMetricStatus {
            name: name.to_string(),
            current: MetricValueStatus {
                average_utilization: Some(r.utilization),
                average_value: Some(milli_quantity(r.raw_utilization)),
                value: None,
            },
        }),
        ..Default::default()
    };
    Ok((
        r.replicas,
        format!("{name} resource utilization (percentage of request)"),
        Some(r.timestamp),
    ))
}

/// Upstream `computeStatusForPodsMetric`.
fn compute_status_for_pods_metric(
    spec: &MetricSpec,
    t: &TargetOf<'_>,
    cx: &MetricsContext<'_>,
    status: &mut MetricStatus,
) -> Result<Proposal, Invalid> {
    let reason = "FailedGetPodsMetric";
    let source = spec.pods.as_ref().ok_or_else(|| Invalid {
        reason,
        error: "invalid pods metric source: the pods field is not set".to_string(),
    })?;
    let metric = &source.metric;
    let target = milli_value(source.target.average_value.as_ref()).ok_or_else(|| Invalid {
        reason,
        error: "invalid pods metric source: an average value target is required".to_string(),
    })?;
    let r = cx
        .calc
        .get_metric_replicas(
            cx.client,
            t.pods,
            cx.now,
            t.scale.spec_replicas,
            target,
            &metric.name,
            t.namespace,
            t.selector,
            metric.selector.as_ref(),
        )
        .map_err(|e| Invalid {
            reason,
            error: format!("failed to get pods metric value: {e}"),
        })?;
    *status = MetricStatus {
        type_: "Pods".to_string(),
        pods: Some(PodsMetricStatus {
            metric: identifier(&metric.name, metric.selector.as_ref()),
            current: MetricValueStatus {
                average_value: Some(milli_quantity(r.utilization)),
                ..Default::default()
            },
        }),
        ..Default::default()
    };
    Ok((
        r.replicas,
        format!("pods metric {}", metric.name),
        Some(r.timestamp),
    ))
}

/// Upstream `computeStatusForObjectMetric`.
fn compute_status_for_object_metric(
    spec: &MetricSpec,
    t: &TargetOf<'_>,
    cx: &MetricsContext<'_>,
    status: &mut MetricStatus,
) -> Result<Proposal, Invalid> {
    let reason = "FailedGetObjectMetric";
    let source = spec.object.as_ref().ok_or_else(|| Invalid {
        reason,
        error: "invalid object metric source: the object field is not set".to_string(),
    })?;
    let metric = &source.metric;
    let object = &source.described_object;
    let fail = |e: String| Invalid {
        reason,
        error: format!("failed to get object metric value: {e}"),
    };
    if source.target.type_ == "Value"
        && let Some(target) = milli_value(source.target.value.as_ref())
    {
        let r = cx
            .calc
            .get_object_metric_replicas(
                cx.client,
                t.pods,
                t.scale.spec_replicas,
                target,
                &metric.name,
                t.namespace,
                object,
                metric.selector.as_ref(),
            )
            .map_err(fail)?;
        *status = object_status(
            source,
            MetricValueStatus {
                value: Some(milli_quantity(r.utilization)),
                ..Default::default()
            },
        );
        return Ok((
            r.replicas,
            format!("{} metric {}", object.kind, metric.name),
            Some(r.timestamp),
        ));
    }
    if source.target.type_ == "AverageValue"
        && let Some(target) = milli_value(source.target.average_value.as_ref())
    {
        let r = cx
            .calc
            .get_object_per_pod_metric_replicas(
                cx.client,
                t.scale.status_replicas,
                target,
                &metric.name,
                t.namespace,
                object,
                metric.selector.as_ref(),
            )
            .map_err(fail)?;
        *status = object_status(
            source,
            MetricValueStatus {
                average_value: Some(milli_quantity(r.utilization)),
                ..Default::default()
            },
        );
        return Ok((
            r.replicas,
            format!(
                "external metric {}({})",
                metric.name,
                go_label_selector(metric.selector.as_ref())
            ),
            Some(r.timestamp),
        ));
    }
    Err(Invalid {
        reason,
        error: "invalid object metric source: neither a value target nor an average value target was set"
            .to_string(),
    })
}

fn object_status(
    source: &k8s_openapi::api::autoscaling::v2::ObjectMetricSource,
    current: MetricValueStatus,
) -> MetricStatus {
    MetricStatus {
        type_: "Object".to_string(),
        object: Some(ObjectMetricStatus {
            described_object: source.described_object.clone(),
            metric: identifier(&source.metric.name, source.metric.selector.as_ref()),
            current,
        }),
        ..Default::default()
    }
}

/// Upstream `computeStatusForExternalMetric`.
fn compute_status_for_external_metric(
    spec: &MetricSpec,
    t: &TargetOf<'_>,
    cx: &MetricsContext<'_>,
    status: &mut MetricStatus,
) -> Result<Proposal, Invalid> {
    let reason = "FailedGetExternalMetric";
    let source = spec.external.as_ref().ok_or_else(|| Invalid {
        reason,
        error: "invalid external metric source: the external field is not set".to_string(),
    })?;
    let metric = &source.metric;
    let name = format!(
        "external metric {}({})",
        metric.name,
        go_label_selector(metric.selector.as_ref())
    );
    let external_status = |current| MetricStatus {
        type_: "External".to_string(),
        external: Some(ExternalMetricStatus {
            metric: identifier(&metric.name, metric.selector.as_ref()),
            current,
        }),
        ..Default::default()
    };
    if let Some(target) = milli_value(source.target.average_value.as_ref()) {
        let r = cx
            .calc
            .get_external_per_pod_metric_replicas(
                cx.client,
                t.scale.status_replicas,
                target,
                &metric.name,
                t.namespace,
                metric.selector.as_ref(),
            )
            .map_err(|e| Invalid {
                reason,
                error: format!("failed to get {} external metric: {e}", metric.name),
            })?;
        *status = external_status(MetricValueStatus {
            average_value: Some(milli_quantity(r.utilization)),
            ..Default::default()
        });
        return Ok((r.replicas, name, Some(r.timestamp)));
    }
    if let Some(target) = milli_value(source.target.value.as_ref()) {
        let r = cx
            .calc
            .get_external_metric_replicas(
                cx.client,
                t.pods,
                t.scale.spec_replicas,
                target,
                &metric.name,
                t.namespace,
                metric.selector.as_ref(),
            )
            .map_err(|e| Invalid {
                reason,
                error: format!("failed to get external metric {}: {e}", metric.name),
            })?;
        *status = external_status(MetricValueStatus {
            value: Some(milli_quantity(r.utilization)),
            ..Default::default()
        });
        return Ok((r.replicas, name, Some(r.timestamp)));
    }
    Err(Invalid {
        reason,
        error: "invalid external metric source: neither a value target nor an average value target was set"
            .to_string(),
    })
}

/// A label selector as Go's `%+v` prints a `*metav1.LabelSelector` (its generated `String()`),
/// for upstream's metric names: `&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}`, or `nil`.
pub fn go_label_selector(selector: Option<&LabelSelector>) -> String {
    let Some(s) = selector else {
        return "nil".to_string();
    };
    let labels: String = s
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {v},"))
        .collect();
    let exprs: String = s
        .match_expressions
        .iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e.key,
                e.operator,
                e.values.clone().unwrap_or_default().join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}
