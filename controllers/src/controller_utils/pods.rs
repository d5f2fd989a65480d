//! Pod predicates: phase, readiness, availability, deletion cost.
//!
//! Upstream: `pkg/api/v1/pod/util.go` (`IsPodReady`, `IsPodAvailable`, `GetPodReadyCondition`),
//! `pkg/controller/controller_utils.go` (`IsPodActive`, `IsPodTerminating`, `podReadyTime`,
//! `maxContainerRestarts`) and `pkg/apis/core/helper` (`GetDeletionCostFromPodAnnotations`).
//!
//! Simplified: Go's zero `metav1.Time` is an absent (`None`) timestamp.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition};

/// Annotation that lets users say which pods of a ReplicaSet are cheaper to delete (lower goes first).
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// The pod's phase, or `""` when the status has none yet.
pub fn pod_phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// The node the pod is bound to, or `""` when it is unscheduled.
pub fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
}

/// `Succeeded` or `Failed`: the pod's containers will not run again.
pub fn is_terminal_phase(phase: &str) -> bool {
    phase == "Succeeded" || phase == "Failed"
}

/// Upstream `IsPodActive`: not Succeeded, not Failed, and not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !is_terminal_phase(pod_phase(pod)) && pod.metadata.deletion_timestamp.is_none()
}

/// Upstream `IsPodTerminating`: not in a terminal phase but already carrying a deletionTimestamp.
pub fn is_pod_terminating(pod: &Pod) -> bool {
    !is_terminal_phase(pod_phase(pod)) && pod.metadata.deletion_timestamp.is_some()
}

/// The first condition of type `Ready` (upstream `GetPodReadyCondition`).
pub fn pod_ready_condition(pod: &Pod) -> Option<&PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == "Ready")
}

/// Upstream `IsPodReady`: the `Ready` condition exists and is `True`.
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod_ready_condition(pod).is_some_and(|c| c.status == "True")
}

/// Upstream `IsPodAvailable`: ready, and ready for at least `min_ready_seconds` at `now`.
///
/// The boundary is inclusive, as in recent upstream: ready since exactly `min_ready_seconds` counts.
/// A ready pod with no lastTransitionTime is only available when `min_ready_seconds` is 0.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    let Some(ready) = pod_ready_condition(pod).filter(|c| c.status == "True") else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    let Some(since) = &ready.last_transition_time else {
        return false;
    };
    let available_at = since.0.as_nanosecond() + i128::from(min_ready_seconds) * 1_000_000_000;
    available_at <= now.as_nanosecond()
}

/// Upstream `podReadyTime`: when a ready pod became Ready; `None` if not ready or the time is unset.
pub fn pod_ready_time(pod: &Pod) -> Option<Timestamp> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?;
    ready.last_transition_time.as_ref().map(|t| t.0)
}

/// Upstream `maxContainerRestarts`: the highest restart count among the regular containers (0 if none).
pub fn max_container_restarts(pod: &Pod) -> i32 {
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    statuses
        .into_iter()
        .flatten()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `GetDeletionCostFromPodAnnotations`; a missing or invalid value counts as 0.
///
/// Valid values are base-10 int32 without a `+` sign or leading zeros (`"0"` itself is fine).
pub fn pod_deletion_cost(pod: &Pod) -> i32 {
    let annotations = pod.metadata.annotations.as_ref();
    let Some(value) = annotations.and_then(|a| a.get(POD_DELETION_COST_ANNOTATION)) else {
        return 0;
    };
    if !valid_first_digit(value) {
        return 0;
    }
    value.parse::<i32>().unwrap_or(0)
}

fn valid_first_digit(value: &str) -> bool {
    match value.as_bytes().first() {
        Some(b'-') | Some(b'1'..=b'9') => true,
        Some(b'0') => value == "0",
        _ => false,
    }
}
