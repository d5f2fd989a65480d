//! Pure: the HPA's conditions and status.
//!
//! Upstream: `pkg/controller/podautoscaler/horizontal.go` (`setCondition`,
//! `setConditionInList`, `setStatus`, `setCurrentReplicasAndMetricsInStatus`,
//! `updateStatusIfNeeded`'s comparison).

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerStatus, MetricStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Condition type: whether the HPA can fetch and update the target's scale.
pub const ABLE_TO_SCALE: &str = "AbleToScale";
/// Condition type: whether the HPA can compute a replica count from its metrics.
pub const SCALING_ACTIVE: &str = "ScalingActive";
/// Condition type: whether the count was held back by min/max or a rate limit.
pub const SCALING_LIMITED: &str = "ScalingLimited";

/// `True` or `False`.
pub fn condition_status(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// Upstream `setCondition`: sets (or adds) the condition of `type_`; its
/// `lastTransitionTime` moves only when its status changes.
pub fn set_condition(
    hpa: &mut HorizontalPodAutoscaler,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let st = hpa.status.get_or_insert_with(Default::default);
    let conditions = st.conditions.get_or_insert_with(Vec::new);
    set_condition_in_list(conditions, type_, status, reason, message, now);
}

/// Upstream `setConditionInList`.
pub fn set_condition_in_list(
    conditions: &mut Vec<HorizontalPodAutoscalerCondition>,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let index = match conditions.iter().position(|c| c.type_ == type_) {
        Some(i) => i,
        None => {
            conditions.push(HorizontalPodAutoscalerCondition {
                type_: type_.to_string(),
                ..Default::default()
            });
            conditions.len() - 1
        }
    };
    let c = &mut conditions[index];
    let status = condition_status(status);
    if c.status != status {
        c.last_transition_time = Some(Time(now));
    }
    c.status = status.to_string();
    c.reason = Some(reason.to_string());
    c.message = Some(message.to_string());
}

/// Upstream `setStatus`: current and desired replicas and the metrics, keeping the conditions;
/// `lastScaleTime` becomes `now` on a rescale.
pub fn set_status(
    hpa: &mut HorizontalPodAutoscaler,
    current_replicas: i32,
    desired_replicas: i32,
    metric_statuses: Option<Vec<MetricStatus>>,
    rescale: bool,
    now: Timestamp,
) {
    let old = hpa.status.take().unwrap_or_default();
    hpa.status = Some(HorizontalPodAutoscalerStatus {
        current_replicas: Some(current_replicas),
        desired_replicas,
        last_scale_time: if rescale {
            Some(Time(now))
        } else {
            old.last_scale_time
        },
        current_metrics: metric_statuses.filter(|m| !m.is_empty()),
        conditions: old.conditions,
        observed_generation: old.observed_generation,
    });
}

/// Upstream `setCurrentReplicasAndMetricsInStatus`: after a failure, the current count and
/// whatever metrics were read, the desired count as it was.
pub fn set_current_replicas_and_metrics_in_status(
    hpa: &mut HorizontalPodAutoscaler,
    current_replicas: i32,
    metric_statuses: Option<Vec<MetricStatus>>,
    now: Timestamp,
) {
    let desired = hpa.status.as_ref().map_or(0, |s| s.desired_replicas);
    set_status(hpa, current_replicas, desired, metric_statuses, false, now);
}

/// Whether `new` differs from `old` (upstream compares with `apiequality.Semantic.DeepEqual`).
pub fn status_needs_update(
    old: Option<&HorizontalPodAutoscalerStatus>,
    new: Option<&HorizontalPodAutoscalerStatus>,
) -> bool {
    let empty = HorizontalPodAutoscalerStatus::default();
    old.unwrap_or(&empty) != new.unwrap_or(&empty)
}
